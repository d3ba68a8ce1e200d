#include "scan.h"

namespace tf {

void class_table(uint16_t* out) {
  for (uint32_t cp = 0; cp < 0x110000; ++cp) out[cp] = flags_of(cp);
}

}  // namespace tf

#include "common.h"

namespace tf {

bool decode_utf8(const uint8_t* p, size_t n, U32& out) {
  size_t i = 0;
  while (i < n) {
    uint8_t b = p[i];
    if (b < 0x80) { out.push_back(b); ++i; continue; }
    uint32_t c;
    size_t len;
    if (b >= 0xC2 && b <= 0xDF) { c = b & 0x1F; len = 2; }
    else if (b >= 0xE0 && b <= 0xEF) { c = b & 0x0F; len = 3; }
    else if (b >= 0xF0 && b <= 0xF4) { c = b & 0x07; len = 4; }
    else return false;
    if (i + len > n) return false;
    for (size_t k = 1; k < len; ++k) {
      if ((p[i + k] & 0xC0) != 0x80) return false;
      c = (c << 6) | (p[i + k] & 0x3F);
    }
    if ((len == 3 && (c < 0x800 || is_surrogate(c))) || (len == 4 && (c < 0x10000 || c > 0x10FFFF))) return false;
    out.push_back(c);
    i += len;
  }
  return true;
}

}  // namespace tf

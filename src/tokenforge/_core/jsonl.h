// JSON Lines: the string value of one field of each line, for corpus readers.
//
// A corpus in JSON Lines holds one JSON object per line, and a reader wants one
// string field of each (``"text"``). Decoding every line into a Python dict only to
// take one field out is most of a reader's time; this unit walks each line once,
// checks it is JSON as RFC 8259 defines it, and returns where the field's string is.
//
// The rule that keeps it exact: it *accepts* a line only when Python's ``json.loads``
// would accept it and give that same string for that field (the last occurrence of the
// key, as a dict keeps it). Everything else is left to the caller's ``json.loads``:
// malformed lines (for their error message), lines that are not objects, a missing
// field or one that is not a string, and the valid but unusual lines whose value this
// unit does not reproduce: a byte-order mark, a lone surrogate escape, NaN/Infinity,
// integers longer than Python's int-string limit, nesting deeper than kMaxDepth.
//
// Plain C++17: no Python, no global state.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace tf {

struct JsonlLine {
  size_t start = 0;      // byte offset of the line in the block
  bool found = false;    // false: the caller decides with a full JSON parser
  bool escaped = false;  // the value had escapes: its UTF-8 is in the side buffer at value_start
  size_t value_start = 0;
  size_t value_len = 0;
};

// Nesting deeper than this is left to the caller.
constexpr int kJsonlMaxDepth = 200;

// One entry per line of p[0:n] that holds anything but ASCII white space (lines end at
// '\n'; blank lines are skipped as bytes.strip() would). Values with escapes are written,
// decoded to UTF-8, into `unescaped`.
void jsonl_field(const uint8_t* p, size_t n, std::string_view field, std::vector<JsonlLine>& lines,
                 std::string& unescaped);

}  // namespace tf

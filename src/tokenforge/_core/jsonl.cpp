// JSON Lines field extraction: see jsonl.h for the contract (accept only what Python's
// json.loads accepts, with the same value).
#include "jsonl.h"

namespace tf {
namespace {

// Python's default limit on the digits of an int parsed from a string
// (sys.get_int_max_str_digits()); longer integers make json.loads raise.
constexpr size_t kIntDigitLimit = 4300;

// Whether any of the 8 bytes of w is a byte a string's fast path must stop at: a control
// character (< 0x20), a non-ASCII byte, '"' or '\\' (SWAR: Hacker's Delight's zero-byte test).
inline bool stops_plain(uint64_t w) {
  constexpr uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
  auto has_zero = [](uint64_t x) { return (x - ones) & ~x & highs; };
  const uint64_t low = (w - ones * 0x20) & ~w & highs;  // a byte < 0x20 (exact for bytes < 0x80)
  return (w & highs) || low || has_zero(w ^ (ones * '"')) || has_zero(w ^ (ones * '\\'));
}

inline bool json_ws(uint8_t c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

inline int hex_value(uint8_t c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

inline void put_utf8(uint32_t c, std::string& out) {
  if (c < 0x80) {
    out.push_back((char)c);
  } else if (c < 0x800) {
    out.push_back((char)(0xC0 | (c >> 6)));
    out.push_back((char)(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out.push_back((char)(0xE0 | (c >> 12)));
    out.push_back((char)(0x80 | ((c >> 6) & 0x3F)));
    out.push_back((char)(0x80 | (c & 0x3F)));
  } else {
    out.push_back((char)(0xF0 | (c >> 18)));
    out.push_back((char)(0x80 | ((c >> 12) & 0x3F)));
    out.push_back((char)(0x80 | ((c >> 6) & 0x3F)));
    out.push_back((char)(0x80 | (c & 0x3F)));
  }
}

// Length of the well-formed (strict: no overlong, no surrogate, <= U+10FFFF) UTF-8
// sequence of a non-ASCII lead byte at s[0], or 0.
inline size_t strict_utf8_len(const uint8_t* s, const uint8_t* e) {
  uint8_t c = s[0];
  size_t avail = (size_t)(e - s);
  if (c >= 0xC2 && c <= 0xDF) return (avail >= 2 && (s[1] & 0xC0) == 0x80) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (avail < 3 || (s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80) return 0;
    if (c == 0xE0 && s[1] < 0xA0) return 0;   // overlong
    if (c == 0xED && s[1] >= 0xA0) return 0;  // surrogate
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (avail < 4 || (s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80 || (s[3] & 0xC0) != 0x80) return 0;
    if (c == 0xF0 && s[1] < 0x90) return 0;   // overlong
    if (c == 0xF4 && s[1] >= 0x90) return 0;  // above U+10FFFF
    return 4;
  }
  return 0;
}

struct Parser {
  const uint8_t* p;
  const uint8_t* e;

  void ws() {
    while (p < e && json_ws(*p)) ++p;
  }

  // A string starting at '"' (p points at it). On success p is past the closing quote;
  // [*raw_start, *raw_end) is the text between the quotes and *escaped says whether it
  // holds escapes. When `out` is given and the string has escapes, its decoded UTF-8 is
  // appended to *out.
  bool string(const uint8_t** raw_start, const uint8_t** raw_end, bool* escaped, std::string* out) {
    ++p;  // opening quote
    const uint8_t* s = p;
    bool esc = false;
    const uint8_t* plain = p;  // start of the run not yet copied to out
    while (true) {
      // fast path over plain ASCII, 8 bytes at a time
      while (e - p >= 8) {
        uint64_t w;
        std::memcpy(&w, p, 8);
        if (stops_plain(w)) break;
        p += 8;
      }
      while (p < e && *p >= 0x20 && *p < 0x80 && *p != '"' && *p != '\\') ++p;
      if (p >= e) return false;
      uint8_t c = *p;
      if (c == '"') break;
      if (c < 0x20) return false;  // control characters are not allowed in strings
      if (c >= 0x80) {
        size_t len = strict_utf8_len(p, e);
        if (!len) return false;
        p += len;
        continue;
      }
      // backslash
      if (!esc) {
        esc = true;
        if (out) out->append((const char*)s, (size_t)(p - s));
      } else if (out) {
        out->append((const char*)plain, (size_t)(p - plain));
      }
      if (p + 1 >= e) return false;
      uint8_t k = p[1];
      uint32_t cp;
      switch (k) {
        case '"': cp = '"'; p += 2; break;
        case '\\': cp = '\\'; p += 2; break;
        case '/': cp = '/'; p += 2; break;
        case 'b': cp = '\b'; p += 2; break;
        case 'f': cp = '\f'; p += 2; break;
        case 'n': cp = '\n'; p += 2; break;
        case 'r': cp = '\r'; p += 2; break;
        case 't': cp = '\t'; p += 2; break;
        case 'u': {
          if (e - p < 6) return false;
          cp = 0;
          for (int i = 2; i < 6; ++i) {
            int h = hex_value(p[i]);
            if (h < 0) return false;
            cp = (cp << 4) | (uint32_t)h;
          }
          p += 6;
          if (cp >= 0xDC00 && cp <= 0xDFFF) return false;  // lone low surrogate: the caller decides
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (e - p < 6 || p[0] != '\\' || p[1] != 'u') return false;  // lone high surrogate
            uint32_t lo = 0;
            for (int i = 2; i < 6; ++i) {
              int h = hex_value(p[i]);
              if (h < 0) return false;
              lo = (lo << 4) | (uint32_t)h;
            }
            if (lo < 0xDC00 || lo > 0xDFFF) return false;
            p += 6;
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          }
          break;
        }
        default:
          return false;
      }
      if (out) put_utf8(cp, *out);
      plain = p;
    }
    if (esc && out) out->append((const char*)plain, (size_t)(p - plain));
    *raw_start = s;
    *raw_end = p;
    *escaped = esc;
    ++p;  // closing quote
    return true;
  }

  bool literal(const char* word, size_t len) {
    if ((size_t)(e - p) < len) return false;
    for (size_t i = 0; i < len; ++i)
      if (p[i] != (uint8_t)word[i]) return false;
    p += len;
    return true;
  }

  bool number() {
    const uint8_t* s = p;
    if (p < e && *p == '-') ++p;
    if (p >= e) return false;
    if (*p == '0') {
      ++p;
    } else if (*p >= '1' && *p <= '9') {
      while (p < e && *p >= '0' && *p <= '9') ++p;
    } else {
      return false;  // includes -Infinity, which Python accepts: the caller decides
    }
    bool integer = true;
    if (p < e && *p == '.') {
      integer = false;
      ++p;
      if (p >= e || *p < '0' || *p > '9') return false;
      while (p < e && *p >= '0' && *p <= '9') ++p;
    }
    if (p < e && (*p == 'e' || *p == 'E')) {
      integer = false;
      ++p;
      if (p < e && (*p == '+' || *p == '-')) ++p;
      if (p >= e || *p < '0' || *p > '9') return false;
      while (p < e && *p >= '0' && *p <= '9') ++p;
    }
    if (integer && (size_t)(p - s) - (*s == '-') > kIntDigitLimit) return false;
    return true;
  }

  bool value(int depth) {
    if (p >= e) return false;
    switch (*p) {
      case '"': {
        const uint8_t *a, *b;
        bool esc;
        return string(&a, &b, &esc, nullptr);
      }
      case '{':
      case '[':
        return container(depth + 1);
      case 't': return literal("true", 4);
      case 'f': return literal("false", 5);
      case 'n': return literal("null", 4);
      default: return number();
    }
  }

  bool container(int depth) {
    if (depth > kJsonlMaxDepth) return false;
    bool object = *p == '{';
    uint8_t close = object ? '}' : ']';
    ++p;
    ws();
    if (p < e && *p == close) { ++p; return true; }
    while (true) {
      if (object) {
        if (p >= e || *p != '"') return false;
        const uint8_t *a, *b;
        bool esc;
        if (!string(&a, &b, &esc, nullptr)) return false;
        ws();
        if (p >= e || *p != ':') return false;
        ++p;
        ws();
      }
      if (!value(depth)) return false;
      ws();
      if (p >= e) return false;
      if (*p == ',') { ++p; ws(); continue; }
      if (*p == close) { ++p; return true; }
      return false;
    }
  }
};

// Whether the JSON string spelled raw[0:n] (between its quotes) equals `field`.
bool key_is(const uint8_t* raw, size_t n, bool escaped, std::string_view field, std::string& scratch) {
  if (!escaped) return n == field.size() && std::memcmp(raw, field.data(), n) == 0;
  scratch.clear();
  Parser q{raw - 1, raw + n + 1};  // re-read with the quotes around it
  const uint8_t *a, *b;
  bool esc;
  if (!q.string(&a, &b, &esc, &scratch)) return false;
  return scratch == field;
}

// One line: fills `line` (found / value) when the line is an object whose last `field`
// key holds a string and the whole line is well-formed JSON.
void parse_object(const uint8_t* s, const uint8_t* e, std::string_view field, JsonlLine& line, std::string& unescaped,
                  std::string& scratch);

void parse_line(const uint8_t* s, const uint8_t* e, std::string_view field, JsonlLine& line, std::string& unescaped,
                std::string& scratch) {
  const size_t before = unescaped.size();
  parse_object(s, e, field, line, unescaped, scratch);
  if (!line.found) unescaped.resize(before);
}

void parse_object(const uint8_t* s, const uint8_t* e, std::string_view field, JsonlLine& line, std::string& unescaped,
                  std::string& scratch) {
  const size_t before = unescaped.size();
  Parser q{s, e};
  q.ws();
  if (q.p >= e || *q.p != '{') return;
  ++q.p;
  q.ws();
  bool have = false;
  bool is_string = false;
  const uint8_t *vs = nullptr, *ve = nullptr;
  bool vesc = false;
  if (q.p < e && *q.p == '}') {
    ++q.p;
  } else {
    while (true) {
      if (q.p >= e || *q.p != '"') return;
      const uint8_t *ka, *kb;
      bool kesc;
      if (!q.string(&ka, &kb, &kesc, nullptr)) return;
      q.ws();
      if (q.p >= e || *q.p != ':') return;
      ++q.p;
      q.ws();
      if (key_is(ka, (size_t)(kb - ka), kesc, field, scratch)) {
        have = true;
        unescaped.resize(before);  // a repeated key: the last one counts
        if (q.p < e && *q.p == '"') {
          if (!q.string(&vs, &ve, &vesc, &unescaped)) return;
          is_string = true;
        } else {
          if (!q.value(1)) return;
          is_string = false;
        }
      } else if (!q.value(1)) {
        return;
      }
      q.ws();
      if (q.p >= e) return;
      if (*q.p == ',') { ++q.p; q.ws(); continue; }
      if (*q.p == '}') { ++q.p; break; }
      return;
    }
  }
  q.ws();
  if (q.p != e || !have || !is_string) return;
  line.found = true;
  line.escaped = vesc;
  if (!vesc) {
    line.value_start = (size_t)(vs - s);  // relative to the line; made absolute by the caller
    line.value_len = (size_t)(ve - vs);
  } else {
    line.value_start = before;
    line.value_len = unescaped.size() - before;
  }
}

inline bool blank_byte(uint8_t c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == 0x0B || c == 0x0C; }

}  // namespace

void jsonl_field(const uint8_t* p, size_t n, std::string_view field, std::vector<JsonlLine>& lines,
                 std::string& unescaped) {
  std::string scratch;
  size_t pos = 0;
  while (pos < n) {
    const void* nl = std::memchr(p + pos, '\n', n - pos);
    size_t end = nl ? (size_t)((const uint8_t*)nl - p) : n;
    bool blank = true;
    for (size_t i = pos; i < end; ++i)
      if (!blank_byte(p[i])) { blank = false; break; }
    if (!blank) {
      JsonlLine line;
      line.start = pos;
      parse_line(p + pos, p + end, field, line, unescaped, scratch);
      if (line.found && !line.escaped) line.value_start += pos;
      lines.push_back(line);
    }
    pos = end + 1;
  }
}

}  // namespace tf

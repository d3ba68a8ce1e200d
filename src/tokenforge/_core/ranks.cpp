#include "ranks.h"

#include <string_view>
#include <unordered_set>

namespace tf {

static int b64_value(unsigned char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

// Strict standard base64 (with padding); false on anything else.
bool b64_decode(const unsigned char* s, size_t n, std::string& out) {
  out.clear();
  if (n == 0 || n % 4 != 0) return false;
  size_t pad = 0;
  if (s[n - 1] == '=') pad = (s[n - 2] == '=') ? 2 : 1;
  for (size_t i = 0; i < n; i += 4) {
    int v[4];
    for (int k = 0; k < 4; ++k) {
      unsigned char c = s[i + k];
      if (c == '=') {
        if (i + 4 != n || k < 4 - (int)pad) return false;
        v[k] = 0;
      } else {
        v[k] = b64_value(c);
        if (v[k] < 0) return false;
      }
    }
    uint32_t x = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 | (uint32_t)v[2] << 6 | (uint32_t)v[3];
    out.push_back((char)(x >> 16));
    if (!(i + 4 == n && pad == 2)) out.push_back((char)(x >> 8 & 0xFF));
    if (!(i + 4 == n && pad >= 1)) out.push_back((char)(x & 0xFF));
  }
  // Unused bits of the last quantum must be zero (binascii strict mode checks this too).
  if (pad == 1 && (b64_value(s[n - 2]) & 0x3)) return false;
  if (pad == 2 && (b64_value(s[n - 3]) & 0xF)) return false;
  return true;
}

const char* parse_ranks(const unsigned char* p, size_t n, RankFile& out, bool find_duplicate_tokens) {
  out.bytes.reserve(n);  // decoded tokens are shorter than the file: the views below stay valid
  std::unordered_set<int64_t> seen;
  std::unordered_set<std::string_view> tokens;
  std::string tok;
  const char* problem = nullptr;
  size_t pos = 0;
  while (pos < n && !problem) {
    size_t end = pos;
    while (end < n && p[end] != '\n') ++end;
    size_t line_end = end;
    if (line_end > pos && p[line_end - 1] == '\r') --line_end;
    size_t sp = pos;
    while (sp < line_end && p[sp] != ' ') ++sp;
    if (sp == pos || sp >= line_end) { problem = "line without two fields"; break; }
    size_t num = sp + 1;
    if (num >= line_end) { problem = "missing rank"; break; }
    int64_t rank = 0;
    for (size_t k = num; k < line_end; ++k) {
      if (p[k] < '0' || p[k] > '9' || rank > (int64_t)1 << 40) { problem = "bad rank"; break; }
      rank = rank * 10 + (p[k] - '0');
    }
    if (problem) break;
    if (!b64_decode(p + pos, sp - pos, tok) || tok.empty()) { problem = "bad base64"; break; }
    if (!seen.insert(rank).second) { problem = "duplicate rank"; break; }
    const size_t at = out.bytes.size();
    out.bytes += tok;
    if (find_duplicate_tokens && !tokens.insert(std::string_view(out.bytes.data() + at, tok.size())).second) {
      problem = "duplicate token";
      break;
    }
    out.offsets.push_back(out.bytes.size());
    out.ranks.push_back(rank);
    pos = end + 1;
  }
  if (!problem && out.size() == 0) problem = "no ranks";
  return problem;
}

}  // namespace tf

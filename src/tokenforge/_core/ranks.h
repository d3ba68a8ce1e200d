// Parsing a tiktoken rank file ("base64(token) rank" per line): the load path of every
// encoding. Anything unusual (bad base64, a missing field, a duplicate token or rank, a
// negative or huge rank, blank lines) is a problem, and the Python parser re-reads the
// file to name the line and the problem; the binding only ever returns a dict that the
// careful parser would also return.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tf {

// Strict standard base64 (with padding) of s[0:n] into out; false on anything else.
bool b64_decode(const unsigned char* s, size_t n, std::string& out);

// The tokens of a rank file: token k is bytes[offsets[k]:offsets[k+1]], with rank ranks[k].
struct RankFile {
  std::string bytes;
  std::vector<size_t> offsets{0};
  std::vector<int64_t> ranks;
  size_t size() const { return ranks.size(); }
};

// Parses p[0:n] into out; nullptr, or the first problem met ("bad rank", "duplicate rank",
// "duplicate token", ..., "no ranks" for a file without a line); out then holds the tokens
// of the lines before it. find_duplicate_tokens = false leaves "duplicate token" to the
// caller, which builds a map of the tokens anyway (binding.cpp: the dict it returns, so the
// tokens are hashed once): a duplicate among the tokens of out is then the first problem,
// since parsing stops at the first other one. May throw std::bad_alloc.
const char* parse_ranks(const unsigned char* p, size_t n, RankFile& out, bool find_duplicate_tokens = true);

}  // namespace tf

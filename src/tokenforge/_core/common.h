// What the algorithm units share, defined once: UTF-8 helpers, hashing helpers,
// SentencePiece piece types and the U+2581 word-boundary mark, float32 helpers of
// sentencepiece's arithmetic, and the error types the units throw (binding.cpp turns
// them into Python exceptions).
//
// Plain C++17: no Python, no global mutable state, no I/O.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace tf {

using U32 = std::u32string;
using U32View = std::u32string_view;

// ---------------------------------------------------------------------------------------
// UTF-8

inline bool is_surrogate(uint32_t c) { return c >= 0xD800 && c <= 0xDFFF; }

// Length of the UTF-8 of one code point (surrogates as with Python's "surrogatepass").
inline size_t utf8_len(uint32_t c) { return c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4; }

// UTF-8 of one code point into b[0:4], surrogates included ("surrogatepass"); returns the length.
inline int utf8_of(uint32_t c, uint8_t* b) {
  if (c < 0x80) { b[0] = (uint8_t)c; return 1; }
  if (c < 0x800) { b[0] = (uint8_t)(0xC0 | (c >> 6)); b[1] = (uint8_t)(0x80 | (c & 0x3F)); return 2; }
  if (c < 0x10000) {
    b[0] = (uint8_t)(0xE0 | (c >> 12));
    b[1] = (uint8_t)(0x80 | ((c >> 6) & 0x3F));
    b[2] = (uint8_t)(0x80 | (c & 0x3F));
    return 3;
  }
  b[0] = (uint8_t)(0xF0 | (c >> 18));
  b[1] = (uint8_t)(0x80 | ((c >> 12) & 0x3F));
  b[2] = (uint8_t)(0x80 | ((c >> 6) & 0x3F));
  b[3] = (uint8_t)(0x80 | (c & 0x3F));
  return 4;
}

// The first byte of the UTF-8 of c (surrogates as with "surrogatepass").
inline uint8_t lead_byte(uint32_t c) {
  if (c < 0x80) return (uint8_t)c;
  if (c < 0x800) return (uint8_t)(0xC0 | (c >> 6));
  if (c < 0x10000) return (uint8_t)(0xE0 | (c >> 12));
  return (uint8_t)(0xF0 | (c >> 18));
}

//: What decode_utf8_at returns for a byte that starts no well-formed sequence.
constexpr uint32_t kBadCodePoint = 0xFFFFFFFFu;

// Lenient decoding of the code point at s[i] (i < n), for the scanners: sets *len (1..4).
// A byte that does not start a sequence of the right shape is one character, kBadCodePoint.
// (Overlongs and surrogates are decoded as they are spelled: Python never passes them.)
inline uint32_t decode_utf8_at(const uint8_t* s, size_t n, size_t i, size_t* len) {
  uint8_t c = s[i];
  if (c < 0x80) { *len = 1; return c; }
  size_t need; uint32_t cp;
  if ((c & 0xE0) == 0xC0) { need = 2; cp = c & 0x1F; }
  else if ((c & 0xF0) == 0xE0) { need = 3; cp = c & 0x0F; }
  else if ((c & 0xF8) == 0xF0) { need = 4; cp = c & 0x07; }
  else { *len = 1; return kBadCodePoint; }
  if (i + need > n) { *len = 1; return kBadCodePoint; }
  for (size_t k = 1; k < need; ++k) {
    uint8_t d = s[i + k];
    if ((d & 0xC0) != 0x80) { *len = 1; return kBadCodePoint; }
    cp = (cp << 6) | (d & 0x3F);
  }
  *len = need;
  return cp;
}

// Strict UTF-8 decoding as Python's codec (no overlongs, no surrogates, at most U+10FFFF),
// appended to out; false on malformed input (out then holds a prefix).
bool decode_utf8(const uint8_t* p, size_t n, U32& out);

// A set of code points: a bitmap for the BMP, a hash set above it.
class CharSet {
 public:
  CharSet() : bmp_(0x10000 / 64, 0) {}
  void insert(uint32_t c) {
    if (c < 0x10000) bmp_[c >> 6] |= 1ull << (c & 63);
    else astral_.insert(c);
  }
  bool count(uint32_t c) const {
    if (c < 0x10000) return (bmp_[c >> 6] >> (c & 63)) & 1;
    return !astral_.empty() && astral_.count(c);
  }

 private:
  std::vector<uint64_t> bmp_;
  std::unordered_set<uint32_t> astral_;
};

// ---------------------------------------------------------------------------------------
// Hashing

// A 64-bit finaliser (MurmurHash3's fmix64): integer keys -> well-spread table slots.
inline uint64_t mix64(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdull;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ull;
  k ^= k >> 33;
  return k;
}

// The first half of fmix64 (one multiply): the Unigram training trie's slot hash.
inline uint64_t mix64_half(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdull;
  k ^= k >> 33;
  return k;
}

// The k < 8 bytes at p as a little-endian word, zero-padded: what memcpy into a zeroed
// uint64_t gives, without the library call a variable-length memcpy compiles to
// (two overlapping fixed-size loads; never reads outside p[0:k]).
inline uint64_t load_tail(const uint8_t* p, size_t k) {
  if (k >= 4) {
    uint32_t lo, hi;
    std::memcpy(&lo, p, 4);
    std::memcpy(&hi, p + k - 4, 4);
    return (uint64_t)lo | ((uint64_t)hi << (8 * (k - 4)));
  }
  if (k >= 2) {
    uint16_t lo, hi;
    std::memcpy(&lo, p, 2);
    std::memcpy(&hi, p + k - 2, 2);
    return (uint64_t)lo | ((uint64_t)hi << (8 * (k - 2)));
  }
  return k ? p[0] : 0;
}

// The first min(n, 8) bytes at p as a little-endian word, zero-padded.
inline uint64_t load_prefix(const uint8_t* p, size_t n) {
  if (n >= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    return w;
  }
  return load_tail(p, n);
}

// Bytes -> 64 bits: FNV-1a over 8-byte words, then a final avalanche (fast for short keys).
inline uint64_t hash_bytes(const uint8_t* p, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull ^ (n * 0x9E3779B97F4A7C15ull);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    h = (h ^ w) * 0x100000001b3ull;
    h ^= h >> 29;
  }
  uint64_t tail = load_tail(p + i, n - i);
  h = (h ^ tail) * 0x100000001b3ull;
  h ^= h >> 32;
  h *= 0xd6e8feb86659fd93ull;
  h ^= h >> 32;
  return h;
}

// Code points -> 64 bits.
inline uint64_t hash_u32(const uint32_t* p, size_t n) {
  uint64_t h = 0x9E3779B97F4A7C15ull ^ (n * 0x100000001B3ull);
  for (size_t k = 0; k < n; ++k) {
    h ^= p[k];
    h *= 0xFF51AFD7ED558CCDull;
    h ^= h >> 32;
  }
  return h;
}

// ---------------------------------------------------------------------------------------
// SentencePiece

// ModelProto.SentencePiece.Type values.
constexpr int SP_NORMAL = 1, SP_UNKNOWN = 2, SP_CONTROL = 3, SP_USER_DEFINED = 4, SP_UNUSED = 5, SP_BYTE = 6;

// U+2581 LOWER ONE EIGHTH BLOCK: sentencepiece's escaped space / word-boundary mark.
constexpr uint32_t kWordBoundary = 0x2581;

// One token of a SentencePiece segmentation: id and code-point span [start, end).
struct Token {
  int32_t id;
  uint32_t start, end;
};

// Byte fallback: the ids of the byte pieces of the UTF-8 of code point c (byte_ids holds
// 256 ids), each passed to emit(id).
template <class Emit>
inline void emit_byte_pieces(uint32_t c, const std::vector<int32_t>& byte_ids, Emit&& emit) {
  uint8_t b[4];
  const int len = utf8_of(c, b);
  for (int k = 0; k < len; ++k) emit(byte_ids[b[k]]);
}

// ---------------------------------------------------------------------------------------
// float32: sentencepiece 0.2.3's Viterbi arithmetic (EncodeOptimized)

// A path score past +-kScoreReset is rebased to 0 (sentencepiece's kScoreResetThreshold).
constexpr float kScoreReset = 100000.0f;

// A score as sentencepiece stores it (a proto float).
inline float f32(double x) { return (float)x; }

// ---------------------------------------------------------------------------------------
// Errors

// A malformed model file (a broken precompiled charsmap): FileFormatError in Python.
struct FormatError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace tf

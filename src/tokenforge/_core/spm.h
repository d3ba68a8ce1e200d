// SentencePiece encoding, natively: the normalizer and the BPE merge by piece score.
//
// Two immutable Python types, registered in core.cpp:
//
// * SpmNormalizer(charsmap, add_dummy_prefix, remove_extra_whitespaces, escape_whitespaces,
//   user_defined) with .normalize(str) -> str: sentencepiece's Normalizer. At each position
//   the longest user-defined symbol is copied whole; otherwise the longest rule of the
//   precompiled charsmap (a darts-clone trie over UTF-8 keys, matched at character
//   boundaries) is replaced by its output; otherwise one character is copied (a lone
//   surrogate becomes U+FFFD). Then the white-space handling: leading spaces dropped and
//   runs collapsed (remove_extra_whitespaces), a space in front (add_dummy_prefix), spaces
//   written as U+2581 (escape_whitespaces), trailing ones dropped.
//   The reference is SentencePieceNormalizer._run in normalizers.py.
//
// * SpmBPE(pieces, scores, types, unk_id, byte_ids) with .encode(str) -> list[int] and
//   .tokenize(str) -> list[(id, start, end)]: sentencepiece's BPE model (bpe_model.cc).
//   USER_DEFINED pieces are matched whole first and never merged; then the adjacent pair
//   whose concatenation is a NORMAL/USER_DEFINED/UNUSED piece with the highest score is
//   merged, leftmost first, until none is left; an UNUSED piece is split back into the
//   two symbols it was last formed from; a symbol that is no piece is <unk> (runs fused)
//   or, with byte fallback, its UTF-8 bytes. The reference is PieceBPE._sp_merge in
//   models/bpe.py; the heap below is CPython's heapq step for step, so ties (and even NaN
//   scores) are broken exactly as there.
//
// * SpmUnigram(pieces, scores, unk_score, float32=True, unk_id=-1, byte_ids=None) with
//   .viterbi / .encode / .tokenize: the Unigram Viterbi over a double-array trie (the one
//   native Unigram encoder), in sentencepiece's float32 or HF's double arithmetic, and
//   spm_unigram_encode(normalizer, model, text), the two fused. The reference is
//   Unigram._viterbi_py / Unigram._finish in models/unigram.py.
//
// Text is handled as code points (UTF-32), as the Python reference indexes str. The loops
// run with the GIL released for long inputs; malformed charsmaps raise FileFormatError
// when the broken rule is used (as the reference does), never at construction.
#pragma once

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace tf_spm {

using U32 = std::u32string;
using U32View = std::u32string_view;

//: Inputs at least this long (code points) are processed with the GIL released.
constexpr size_t RELEASE_GIL_AT = 2048;

struct SpmError {
  std::string msg;
};

inline bool is_surrogate(uint32_t c) { return c >= 0xD800 && c <= 0xDFFF; }

// UTF-8 of one code point, surrogates included (Python's "surrogatepass").
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

// Strict UTF-8 decoding as Python's codec (no overlongs, no surrogates, at most U+10FFFF).
inline bool decode_utf8(const uint8_t* p, size_t n, U32& out) {
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
// The precompiled charsmap

class Charsmap {
 public:
  // blob: uint32 trie size (little endian), the trie units, then the NUL-separated pool.
  // Throws SpmError on a blob whose header is malformed (as Charsmap.__init__ does).
  explicit Charsmap(const uint8_t* blob, size_t n) {
    if (n == 0) return;
    if (n < 4) throw SpmError{"precompiled_charsmap: " + std::to_string(n) + " bytes is too short for the trie size"};
    uint32_t size = (uint32_t)blob[0] | ((uint32_t)blob[1] << 8) | ((uint32_t)blob[2] << 16) | ((uint32_t)blob[3] << 24);
    if (size % 4 || (uint64_t)size + 4 > n || size == 0)
      throw SpmError{"precompiled_charsmap: trie size " + std::to_string(size) + " does not fit a blob of " +
                     std::to_string(n) + " bytes (expected a multiple of 4, at most the blob length - 4)"};
    units_.resize(size / 4);
    for (size_t k = 0; k < units_.size(); ++k) {
      const uint8_t* u = blob + 4 + 4 * k;
      units_[k] = (uint32_t)u[0] | ((uint32_t)u[1] << 8) | ((uint32_t)u[2] << 16) | ((uint32_t)u[3] << 24);
    }
    pool_.assign((const char*)blob + 4 + size, n - 4 - size);
    uint32_t u0 = units_[0];
    root_ = (int64_t)((uint64_t)(u0 >> 10) << ((u0 & 0x200) >> 6));
    // Per-character table of the Basic Multilingual Plane: the node after the character
    // and the value of the rule for exactly it; ERR when the walk would raise (then the
    // slow path raises when the character is met).
    fast_node_.assign(0x10000, -1);
    fast_value_.assign(0x10000, -1);
    for (uint32_t c = 0; c < 0x10000; ++c) {
      if (is_surrogate(c)) continue;
      try {
        int64_t node, value;
        walk_char(c, node, value);
        fast_node_[c] = (int32_t)node;
        fast_value_[c] = (int32_t)value;
        if (value >= 0 && !repl_.count((int32_t)value)) {
          Repl r;
          r.ok = decode_at(value, r.text);
          repl_.emplace((int32_t)value, std::move(r));
        }
      } catch (const SpmError&) {
        fast_node_[c] = ERR;
      }
    }
  }

  bool empty() const { return units_.empty(); }

  // (node after the first character c or -1, value of the rule for exactly c or -1).
  void char_info(uint32_t c, int64_t& node, int64_t& value) const {
    if (units_.empty() || is_surrogate(c)) { node = value = -1; return; }
    if (c < 0x10000 && fast_node_[c] != ERR) {
      node = fast_node_[c];
      value = fast_value_[c];
      return;
    }
    walk_char(c, node, value);
  }

  // Follows every byte of c from node (surrogates as with "surrogatepass").
  void extend(int64_t& node, int64_t& value, uint32_t c) const {
    uint8_t b[4];
    int len = utf8_of(c, b);
    value = -1;
    for (int k = 0; k < len; ++k) {
      if (!step(node, b[k], value)) { node = value = -1; return; }
    }
  }

  // The replacement at pool offset value, appended to out.
  void append_replacement(int64_t value, U32& out) const {
    auto it = value <= INT32_MAX ? repl_.find((int32_t)value) : repl_.end();
    if (it != repl_.end()) {
      if (!it->second.ok) bad_replacement(value);
      out.append(it->second.text);
      return;
    }
    U32 r;
    if (!decode_at(value, r)) bad_replacement(value);
    out.append(r);
  }

 private:
  static constexpr int32_t ERR = -2;
  struct Repl {
    bool ok = false;
    U32 text;
  };

  // darts-clone: label in bits 0-7 (+ bit 31), has_leaf bit 8, offset in bits 10-31
  // scaled by bit 9; a leaf unit's value is bits 0-30.
  bool step(int64_t& node, uint8_t byte, int64_t& value) const {
    int64_t x = node ^ byte;
    if (x < 0 || (uint64_t)x >= units_.size()) return false;
    uint32_t u = units_[(size_t)x];
    if ((u & 0x800000FFu) != byte) return false;
    x ^= (int64_t)((uint64_t)(u >> 10) << ((u & 0x200) >> 6));
    if ((u >> 8) & 1) {
      if (x < 0 || (uint64_t)x >= units_.size()) throw SpmError{"precompiled_charsmap: trie leaf points outside the trie"};
      value = units_[(size_t)x] & 0x7FFFFFFF;
    } else {
      value = -1;
    }
    node = x;
    return true;
  }

  void walk_char(uint32_t c, int64_t& node, int64_t& value) const {
    uint8_t b[4];
    int len = utf8_of(c, b);
    node = root_;
    value = -1;
    for (int k = 0; k < len; ++k) {
      if (!step(node, b[k], value)) { node = value = -1; return; }
    }
  }

  bool decode_at(int64_t value, U32& out) const {
    if (value < 0 || (uint64_t)value >= pool_.size()) return false;
    const char* start = pool_.data() + value;
    size_t rest = pool_.size() - (size_t)value;
    const void* nul = std::memchr(start, 0, rest);
    size_t len = nul ? (size_t)((const char*)nul - start) : rest;
    return decode_utf8((const uint8_t*)start, len, out);
  }

  [[noreturn]] void bad_replacement(int64_t value) const {
    if (value < 0 || (uint64_t)value >= pool_.size())
      throw SpmError{"precompiled_charsmap: replacement offset " + std::to_string(value) + " is outside the pool"};
    throw SpmError{"precompiled_charsmap: replacement at offset " + std::to_string(value) + " is not UTF-8"};
  }

  std::vector<uint32_t> units_;
  std::string pool_;
  int64_t root_ = 0;
  std::vector<int32_t> fast_node_, fast_value_;
  std::unordered_map<int32_t, Repl> repl_;
};

// The first byte of c in UTF-8 (surrogates as with "surrogatepass").
inline uint8_t lead_byte(uint32_t c) {
  if (c < 0x80) return (uint8_t)c;
  if (c < 0x800) return (uint8_t)(0xC0 | (c >> 6));
  if (c < 0x10000) return (uint8_t)(0xE0 | (c >> 12));
  return (uint8_t)(0xF0 | (c >> 18));
}

class Normalizer {
 public:
  Normalizer(const uint8_t* blob, size_t n, bool add_dummy_prefix, bool remove_extra_whitespaces,
             bool escape_whitespaces, std::vector<U32> user_defined)
      : cm_(blob, n),
        add_dummy_prefix_(add_dummy_prefix),
        remove_extra_(remove_extra_whitespaces),
        escape_(escape_whitespaces),
        udf_store_(std::move(user_defined)) {
    for (const U32& s : udf_store_) {
      if (s.empty()) continue;
      udf_.insert(U32View(s));
      udf_first_.insert(s[0]);
      if (s.size() > udf_max_) udf_max_ = s.size();
    }
  }

  // The output of the longest match at text[i:] appended to sp; returns the characters consumed.
  size_t prefix(const uint32_t* text, size_t n, size_t i, U32& sp) const {
    uint32_t c = text[i];
    if (udf_max_ && udf_first_.count(c)) {
      size_t top = udf_max_ < n - i ? udf_max_ : n - i;
      for (size_t k = top; k > 0; --k) {
        if (udf_.count(U32View((const char32_t*)text + i, k))) {
          sp.append((const char32_t*)text + i, k);
          return k;
        }
      }
    }
    int64_t node, value;
    cm_.char_info(c, node, value);
    size_t best_len = 0;
    int64_t best_value = -1;
    if (value >= 0) { best_len = 1; best_value = value; }
    size_t j = i + 1;
    while (node >= 0 && j < n) {
      uint32_t d = text[j];
      if (lead_byte(d) == 0) break;  // NUL never continues a key
      cm_.extend(node, value, d);
      ++j;
      if (value >= 0) { best_len = j - i; best_value = value; }
    }
    if (best_len) {
      cm_.append_replacement(best_value, sp);
      return best_len;
    }
    sp.push_back(is_surrogate(c) ? 0xFFFD : c);
    return 1;
  }

  void normalize(const uint32_t* text, size_t n, U32& out) const {
    out.clear();
    U32 sp;
    size_t i = 0;
    if (remove_extra_) {
      while (i < n) {
        sp.clear();
        size_t k = prefix(text, n, i, sp);
        if (!(sp.size() == 1 && sp[0] == U' ')) break;
        i += k;
      }
    }
    if (i >= n) return;
    out.reserve(n + n / 8 + 4);
    const char32_t space = escape_ ? U'\u2581' : U' ';
    bool pending = add_dummy_prefix_;
    bool is_prev_space = remove_extra_;
    while (i < n) {
      sp.clear();
      size_t k = prefix(text, n, i, sp);
      size_t a = 0;
      if (is_prev_space)
        while (a < sp.size() && sp[a] == U' ') ++a;
      if (a < sp.size()) {
        bool ends_with_space = sp.back() == U' ';
        if (pending) { out.push_back(space); pending = false; }
        for (size_t q = a; q < sp.size(); ++q) out.push_back(escape_ && sp[q] == U' ' ? U'\u2581' : sp[q]);
        is_prev_space = ends_with_space;
      }
      i += k;
      if (!remove_extra_) is_prev_space = false;
    }
    if (pending) out.push_back(space);
    if (remove_extra_)
      while (!out.empty() && out.back() == space) out.pop_back();
  }

 private:
  Charsmap cm_;
  bool add_dummy_prefix_, remove_extra_, escape_;
  std::vector<U32> udf_store_;
  std::unordered_set<U32View> udf_;
  CharSet udf_first_;
  size_t udf_max_ = 0;
};

// ---------------------------------------------------------------------------------------
// BPE by piece score

constexpr int SP_NORMAL = 1, SP_UNKNOWN = 2, SP_CONTROL = 3, SP_USER_DEFINED = 4, SP_UNUSED = 5, SP_BYTE = 6;

inline uint64_t hash_u32(const uint32_t* p, size_t n) {
  uint64_t h = 0x9E3779B97F4A7C15ull ^ (n * 0x100000001B3ull);
  for (size_t k = 0; k < n; ++k) {
    h ^= p[k];
    h *= 0xFF51AFD7ED558CCDull;
    h ^= h >> 32;
  }
  return h;
}

// Open-addressing map: code-point string -> int32.
class PieceMap {
 public:
  void add(const U32& key, int32_t id) {
    if ((count_ + 1) * 2 > slots_.size()) grow();
    insert(key.data(), key.size(), id, /*copy=*/true);
  }
  int32_t get(const uint32_t* p, size_t n) const {
    if (slots_.empty()) return -1;
    uint64_t h = hash_u32(p, n);
    size_t mask = slots_.size() - 1;
    for (size_t s = (size_t)h & mask;; s = (s + 1) & mask) {
      const Slot& x = slots_[s];
      if (x.id < 0) return -1;
      if (x.hash == h && x.len == n && same(keys_.data() + x.off, p, n)) return x.id;
    }
  }
  static bool same(const uint32_t* a, const uint32_t* b, size_t n) {
    for (size_t k = 0; k < n; ++k)
      if (a[k] != b[k]) return false;
    return true;
  }
  bool contains_key(const U32& key) const { return get((const uint32_t*)key.data(), key.size()) >= 0; }

 private:
  struct Slot {
    uint64_t hash = 0;
    uint32_t off = 0, len = 0;
    int32_t id = -1;
  };
  void insert(const char32_t* p, size_t n, int32_t id, bool copy) {
    uint64_t h = hash_u32((const uint32_t*)p, n);
    size_t mask = slots_.size() - 1;
    size_t s = (size_t)h & mask;
    while (slots_[s].id >= 0) s = (s + 1) & mask;
    Slot& x = slots_[s];
    x.hash = h;
    x.len = (uint32_t)n;
    x.id = id;
    if (copy) {
      x.off = (uint32_t)keys_.size();
      keys_.insert(keys_.end(), (const uint32_t*)p, (const uint32_t*)p + n);
    }
    ++count_;
  }
  void grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(old.empty() ? 16 : old.size() * 2, Slot());
    size_t mask = slots_.size() - 1;
    for (const Slot& o : old) {
      if (o.id < 0) continue;
      size_t s = (size_t)o.hash & mask;
      while (slots_[s].id >= 0) s = (s + 1) & mask;
      slots_[s] = o;
    }
  }
  std::vector<Slot> slots_;
  std::vector<uint32_t> keys_;
  size_t count_ = 0;
};

struct Token {
  int32_t id;
  uint32_t start, end;
};

class BPE {
 public:
  // pieces[i] has id i; types are ModelProto.SentencePiece.Type values. Throws SpmError
  // on inconsistent tables (the Python side validates first; this guards direct calls).
  BPE(std::vector<U32> pieces, std::vector<double> scores, std::vector<int> types, int32_t unk_id,
      std::vector<int32_t> byte_ids)
      : pieces_(std::move(pieces)), scores_(std::move(scores)), types_(std::move(types)), unk_id_(unk_id),
        byte_ids_(std::move(byte_ids)) {
    size_t n = pieces_.size();
    if (scores_.size() != n || types_.size() != n) throw SpmError{"pieces, scores and types must have the same length"};
    if (unk_id_ < 0 || (size_t)unk_id_ >= n) throw SpmError{"unk_id is not a piece id"};
    if (!byte_ids_.empty() && byte_ids_.size() != 256) throw SpmError{"byte_ids must hold 256 ids"};
    for (int32_t b : byte_ids_)
      if (b < 0 || (size_t)b >= n) throw SpmError{"byte_ids must be piece ids"};
    pair_bits_.assign(PAIR_BITS / 64, 0);
    for (size_t i = 0; i < n; ++i) {
      const U32& p = pieces_[i];
      if (p.empty()) throw SpmError{"piece " + std::to_string(i) + " is empty"};
      int t = types_[i];
      if (t < SP_NORMAL || t > SP_BYTE) throw SpmError{"piece " + std::to_string(i) + " has unknown type"};
      bool mergeable = t == SP_NORMAL || t == SP_USER_DEFINED || t == SP_UNUSED;
      PieceMap& table = mergeable ? merge_ : reserved_;
      if (table.contains_key(p)) throw SpmError{"piece " + std::to_string(i) + " is already defined"};
      table.add(p, (int32_t)i);
      if (mergeable && p.size() > max_len_) max_len_ = p.size();
      if (mergeable && p.size() >= 2) {
        size_t h = pair_slot((uint32_t)p[0], (uint32_t)p[1]);
        pair_bits_[h >> 6] |= 1ull << (h & 63);
      }
      if (t == SP_USER_DEFINED) {
        user_.add(p, (int32_t)i);
        user_first_.insert((uint32_t)p[0]);
        if (p.size() > user_max_) user_max_ = p.size();
      }
      if (t == SP_UNUSED) has_unused_ = true;
    }
    split_ok_ = !has_unused_ && !user_max_;
    for (size_t i = 0; i < n && split_ok_; ++i) {
      int t = types_[i];
      if (!(t == SP_NORMAL || t == SP_USER_DEFINED || t == SP_UNUSED)) continue;
      const U32& p = pieces_[i];
      for (size_t k = 1; k < p.size(); ++k)
        if (p[k] == 0x2581) before_ws_.insert((uint32_t)p[k - 1]);
    }
    // what a one-character symbol of the BMP emits
    single_id_.resize(0x10000);
    for (uint32_t c = 0; c < 0x10000; ++c) single_id_[c] = piece_to_id(&c, 1);
    // what a mergeable piece emits (PieceToId looks up reserved pieces first)
    emit_id_.resize(n);
    for (size_t i = 0; i < n; ++i) {
      const U32& p = pieces_[i];
      int32_t r = reserved_.get((const uint32_t*)p.data(), p.size());
      emit_id_[i] = r >= 0 ? r : (int32_t)i;
    }
  }

  size_t size() const { return pieces_.size(); }

  struct Cand {
    double neg_score;
    int32_t left, right;
    uint32_t size;
    int32_t piece;  // not compared: a function of (left, right, size) while valid
  };
  // Buffers of one call, reused from part to part.
  struct Scratch {
    std::vector<uint32_t> starts, ends;
    std::vector<int32_t> nxt, prv, pid;
    std::vector<uint8_t> frozen, alive;
    std::vector<Cand> heap;
    std::unordered_map<int32_t, uint32_t> rev;
    std::vector<std::pair<uint32_t, uint32_t>> stack;
    std::vector<Token> part;
  };

  // Tokens of text, code-point offsets. Without UNUSED and USER_DEFINED pieces the text is
  // cut before every U+2581 whose preceding character never precedes U+2581 inside a
  // piece: no merge spans such a cut, so the parts (about words) merge independently and
  // repeated ones are merged once per call.
  void tokenize(const uint32_t* text, size_t n, std::vector<Token>& out) const {
    out.clear();
    if (n > (size_t)INT32_MAX) throw std::length_error("text too long for SpmBPE (2**31 code points or more)");
    Scratch w;
    if (!split_ok_) {
      merge(text, n, out, w);
      return;
    }
    std::vector<Token>& part = w.part;
    size_t start = 0;
    while (start < n) {
      size_t end = start + 1;
      while (end < n && !(text[end] == 0x2581 && !before_ws_.count(text[end - 1]))) ++end;
      const size_t len = end - start;
      if (len <= MEMO_PART) {
        const uint64_t h = hash_u32(text + start, len);
        part.clear();
        if (!memo_.get(text + start, len, h, part)) {
          merge(text + start, len, part, w);
          memo_.put(text + start, len, h, part);
        }
      } else {
        merge(text + start, len, part, w);
      }
      size_t k = 0;
      if (byte_ids_.empty() && !out.empty() && !part.empty() && part[0].id == unk_id_ && out.back().id == unk_id_) {
        out.back().end = (uint32_t)start + part[0].end;
        k = 1;
      }
      for (; k < part.size(); ++k) {
        const Token& t = part[k];
        out.push_back(Token{t.id, (uint32_t)start + t.start, (uint32_t)start + t.end});
      }
      start = end;
    }
  }

 private:
  //: Parts of at most this many code points are memoised (across calls, bounded).
  static constexpr size_t MEMO_PART = 48;

  // A bounded memo of merged parts: direct-mapped slots over two arenas, emptied when
  // full. Shared by the threads that encode with one model, hence the lock.
  class PartMemo {
   public:
    bool get(const uint32_t* p, size_t n, uint64_t h, std::vector<Token>& out) {
      std::lock_guard<std::mutex> lock(mu_);
      if (slots_.empty()) return false;
      const Slot& s = slots_[h & (SLOTS - 1)];
      if (s.hash != h || s.key_len != n || std::memcmp(keys_.data() + s.key_off, p, n * 4) != 0) return false;
      out.insert(out.end(), toks_.begin() + s.tok_off, toks_.begin() + s.tok_off + s.tok_len);
      return true;
    }
    void put(const uint32_t* p, size_t n, uint64_t h, const std::vector<Token>& toks) {
      std::lock_guard<std::mutex> lock(mu_);
      if (slots_.empty()) slots_.resize(SLOTS);
      if (keys_.size() + n > MAX_KEYS || toks_.size() + toks.size() > MAX_TOKS) {
        keys_.clear();
        toks_.clear();
        for (Slot& s : slots_) s = Slot();
      }
      Slot& s = slots_[h & (SLOTS - 1)];
      s.hash = h;
      s.key_off = (uint32_t)keys_.size();
      s.key_len = (uint32_t)n;
      s.tok_off = (uint32_t)toks_.size();
      s.tok_len = (uint32_t)toks.size();
      keys_.insert(keys_.end(), p, p + n);
      toks_.insert(toks_.end(), toks.begin(), toks.end());
    }

   private:
    static constexpr size_t SLOTS = 1 << 15, MAX_KEYS = 1 << 20, MAX_TOKS = 1 << 19;
    struct Slot {
      uint64_t hash = 0;
      uint32_t key_off = 0, key_len = UINT32_MAX, tok_off = 0, tok_len = 0;
    };
    std::mutex mu_;
    std::vector<Slot> slots_;
    std::vector<uint32_t> keys_;
    std::vector<Token> toks_;
  };

  // _sp_merge: the whole of text as one sequence of symbols.
  void merge(const uint32_t* text, size_t n, std::vector<Token>& out, Scratch& w) const {
    out.clear();
    if (n == 0) return;
    out.reserve(n);
    // symbols: user-defined pieces (longest match) or one character
    std::vector<uint32_t>& starts = w.starts;
    std::vector<uint32_t>& ends = w.ends;
    std::vector<int32_t>& nxt = w.nxt;
    std::vector<int32_t>& prv = w.prv;
    std::vector<int32_t>& pid = w.pid;  // mergeable piece id of the symbol, -2 = not known
    std::vector<uint8_t>& frozen = w.frozen;
    std::vector<uint8_t>& alive = w.alive;
    starts.clear();
    ends.clear();
    frozen.clear();
    pid.clear();
    starts.reserve(n);
    ends.reserve(n);
    if (user_max_) {
      size_t pos = 0;
      while (pos < n) {
        size_t size = 1;
        int32_t hit = -1;
        if (user_first_.count(text[pos])) {
          size_t top = user_max_ < n - pos ? user_max_ : n - pos;
          for (size_t k = top; k > 0; --k) {
            int32_t id = user_.get(text + pos, k);
            if (id >= 0) { size = k; hit = id; break; }
          }
        }
        starts.push_back((uint32_t)pos);
        ends.push_back((uint32_t)(pos + size));
        frozen.push_back(hit >= 0);
        pid.push_back(hit >= 0 ? hit : -2);
        pos += size;
      }
    } else {
      starts.resize(n);
      ends.resize(n);
      for (size_t k = 0; k < n; ++k) {
        starts[k] = (uint32_t)k;
        ends[k] = (uint32_t)(k + 1);
      }
      frozen.assign(n, 0);
      pid.assign(n, -2);
    }
    const size_t m = starts.size();
    nxt.resize(m);
    prv.resize(m);
    for (size_t k = 0; k < m; ++k) {
      nxt[k] = k + 1 < m ? (int32_t)(k + 1) : -1;
      prv[k] = (int32_t)k - 1;
    }
    alive.assign(m, 1);
    std::unordered_map<int32_t, uint32_t>& rev = w.rev;  // UNUSED piece id -> length of its left part
    rev.clear();
    std::vector<Cand>& heap = w.heap;
    heap.clear();

    auto add = [&](int32_t left, int32_t right) {
      if (left < 0 || right < 0 || frozen[(size_t)left] || frozen[(size_t)right]) return;
      uint32_t a = starts[(size_t)left], b = ends[(size_t)right];
      if (b - a > max_len_ || !may_start(text[a], text[a + 1])) return;
      int32_t i = merge_.get(text + a, b - a);
      if (i < 0) return;
      heap_push(heap, Cand{-scores_[(size_t)i], left, right, b - a, i});
      if (types_[(size_t)i] == SP_UNUSED) rev[i] = ends[(size_t)left] - a;
    };

    for (size_t k = 1; k < m; ++k) add((int32_t)k - 1, (int32_t)k);
    while (!heap.empty()) {
      Cand top = heap_pop(heap);
      size_t l = (size_t)top.left, r = (size_t)top.right;
      if (!alive[l] || !alive[r] || ends[r] - starts[l] != top.size || nxt[l] != top.right) continue;
      ends[l] = ends[r];
      pid[l] = top.piece;
      alive[r] = 0;
      int32_t r2 = nxt[r];
      nxt[l] = r2;
      if (r2 != -1) prv[(size_t)r2] = (int32_t)l;
      add(prv[l], (int32_t)l);
      add((int32_t)l, r2);
    }

    bool prev_unk = false;
    std::vector<std::pair<uint32_t, uint32_t>>& stack = w.stack;  // (start, end) still to emit, last first
    for (int32_t k = 0; k != -1; k = nxt[(size_t)k]) {
      uint32_t s = starts[(size_t)k], e = ends[(size_t)k];
      int32_t known = pid[(size_t)k];
      int32_t id = known >= 0                            ? emit_id_[(size_t)known]
                   : (e - s == 1 && text[s] < 0x10000) ? single_id_[text[s]]
                                                        : piece_to_id(text + s, e - s);
      if (!(has_unused_ && types_[(size_t)id] == SP_UNUSED)) {
        emit(text, id, s, e, out, prev_unk);
        continue;
      }
      stack.clear();
      stack.emplace_back(s, e);
      while (!stack.empty()) {
        auto [ws, we] = stack.back();
        stack.pop_back();
        int32_t wid = piece_to_id(text + ws, we - ws);
        if (types_[(size_t)wid] == SP_UNUSED) {
          auto it = rev.find(wid);
          if (it != rev.end()) {
            uint32_t mid = ws + it->second;
            stack.emplace_back(mid, we);
            stack.emplace_back(ws, mid);
            continue;
          }
        }
        emit(text, wid, ws, we, out, prev_unk);
      }
    }
  }

  // Python's tuple order on (neg_score, left, right, size), NaN included.
  static bool lt(const Cand& a, const Cand& b) {
    if (a.neg_score != b.neg_score) return a.neg_score < b.neg_score;
    if (a.left != b.left) return a.left < b.left;
    if (a.right != b.right) return a.right < b.right;
    return a.size < b.size;
  }
  // CPython's heapq: _siftdown / _siftup, heappush / heappop.
  static void sift_down(std::vector<Cand>& h, size_t start, size_t pos) {
    Cand item = h[pos];
    while (pos > start) {
      size_t parent = (pos - 1) >> 1;
      if (lt(item, h[parent])) {
        h[pos] = h[parent];
        pos = parent;
        continue;
      }
      break;
    }
    h[pos] = item;
  }
  static void sift_up(std::vector<Cand>& h, size_t pos) {
    size_t end = h.size(), start = pos;
    Cand item = h[pos];
    size_t child = 2 * pos + 1;
    while (child < end) {
      size_t right = child + 1;
      if (right < end && !lt(h[child], h[right])) child = right;
      h[pos] = h[child];
      pos = child;
      child = 2 * pos + 1;
    }
    h[pos] = item;
    sift_down(h, start, pos);
  }
  static void heap_push(std::vector<Cand>& h, const Cand& c) {
    h.push_back(c);
    sift_down(h, 0, h.size() - 1);
  }
  static Cand heap_pop(std::vector<Cand>& h) {
    Cand last = h.back();
    h.pop_back();
    if (h.empty()) return last;
    Cand top = h[0];
    h[0] = last;
    sift_up(h, 0);
    return top;
  }

  // A filter of the first two characters of the mergeable pieces: most adjacent pairs of a
  // text start no piece, and this answers them without a probe of the piece table.
  static constexpr size_t PAIR_BITS = 1 << 20;
  static size_t pair_slot(uint32_t a, uint32_t b) {
    uint64_t k = ((uint64_t)a << 21 | b) * 0x9E3779B97F4A7C15ull;
    return (size_t)(k >> 44);  // 20 bits
  }
  bool may_start(uint32_t a, uint32_t b) const {
    size_t h = pair_slot(a, b);
    return (pair_bits_[h >> 6] >> (h & 63)) & 1;
  }

  int32_t piece_to_id(const uint32_t* p, size_t n) const {
    int32_t r = reserved_.get(p, n);
    if (r >= 0) return r;
    r = merge_.get(p, n);
    return r >= 0 ? r : unk_id_;
  }

  void emit(const uint32_t* text, int32_t id, uint32_t s, uint32_t e, std::vector<Token>& out, bool& prev_unk) const {
    bool is_unk = id == unk_id_;
    if (is_unk && !byte_ids_.empty()) {
      uint8_t b[4];
      for (uint32_t q = s; q < e; ++q) {
        int len = utf8_of(text[q], b);
        for (int k = 0; k < len; ++k) out.push_back(Token{byte_ids_[b[k]], s, e});
      }
    } else if (is_unk && prev_unk) {
      out.back().end = e;
    } else {
      out.push_back(Token{id, s, e});
    }
    prev_unk = is_unk;
  }

  std::vector<U32> pieces_;
  std::vector<double> scores_;
  std::vector<int> types_;
  int32_t unk_id_;
  std::vector<int32_t> byte_ids_;
  PieceMap merge_, reserved_, user_;
  CharSet user_first_;
  std::vector<int32_t> emit_id_, single_id_;
  std::vector<uint64_t> pair_bits_;
  size_t max_len_ = 0, user_max_ = 0;
  bool has_unused_ = false, split_ok_ = false;
  CharSet before_ws_;  // characters c with c + U+2581 inside a mergeable piece
  mutable PartMemo memo_;
};

// ---------------------------------------------------------------------------------------
// Unigram Viterbi over a double-array trie

// The encoding side of a Unigram model - the one native Viterbi of encoding (Unigram.tokenize
// and the fused spm_unigram_encode both run it): the pieces that may appear in a segmentation
// in a double-array trie over their UTF-8 bytes (one array probe per byte, as sentencepiece's
// darts), their node scores, and the unknown-character score. The candidates at a position
// are every piece that is a prefix of the rest, shortest first; on equal path scores the
// earlier start (the longer last piece) wins (strict '>'). Two arithmetics, as the Python
// reference Unigram._viterbi_py:
//   float32  sentencepiece 0.2.3's EncodeOptimized: float node and path scores, a path score
//            past +-1e5 rebased to 0 (with every score reached ahead of it). Models with
//            piece types (.model files).
//   double   HF tokenizers' lattice: double scores and sums, no rebasing (tokenizer.json
//            Unigram models, no piece types).
// Ties are common in real text ("-" runs, "0"/"00" pieces) and the rounding decides them,
// so each arithmetic must match its reference bit for bit. (Training keeps its own hash-trie
// Viterbi, tf_uni::viterbi in unigram.h: it needs pieces switched off between EM rounds.)
class UnigramLattice {
 public:
  // pieces[i] empty: piece i is not in the lattice. scores must not be NaN.
  UnigramLattice(const std::vector<U32>& pieces, const std::vector<double>& scores, double unk_score,
                 bool float32 = true)
      : float32_(float32), unk_f_((float)unk_score), unk_d_(unk_score) {
    if (float32) {
      score_f_.resize(scores.size());
      for (size_t i = 0; i < scores.size(); ++i) score_f_[i] = (float)scores[i];
    } else {
      score_d_ = scores;
    }
    // 1. a pointer trie over the UTF-8 bytes (surrogates as "surrogatepass")
    struct TNode {
      std::vector<std::pair<uint8_t, int32_t>> kids;
      int32_t value = -1;
    };
    std::vector<TNode> t(1);
    uint8_t b[4];
    for (size_t i = 0; i < pieces.size(); ++i) {
      const U32& p = pieces[i];
      if (p.empty()) continue;
      int32_t node = 0;
      for (char32_t c : p) {
        int len = utf8_of((uint32_t)c, b);
        for (int k = 0; k < len; ++k) {
          int32_t next = -1;
          for (auto& kid : t[(size_t)node].kids)
            if (kid.first == b[k]) { next = kid.second; break; }
          if (next < 0) {
            next = (int32_t)t.size();
            t[(size_t)node].kids.emplace_back(b[k], next);
            t.emplace_back();
          }
          node = next;
        }
      }
      t[(size_t)node].value = (int32_t)i;  // a repeated piece: the later id, as tf_uni's trie
    }
    // 2. placed breadth first: the child of unit s by byte c is unit base(s) + c, owned
    //    by s (check == s). Free units have check -1 and are kept in a list, which the
    //    search for a base walks (a unit that keeps failing is dropped from it, as darts'
    //    builder does); leaves get a base that no byte reaches.
    std::vector<int32_t> next_free, prev_free;
    std::vector<uint8_t> tries;
    int32_t head = -1, tail = -1;
    auto unlink = [&](int32_t u) {
      int32_t a = prev_free[(size_t)u], b = next_free[(size_t)u];
      if (a >= 0) next_free[(size_t)a] = b; else head = b;
      if (b >= 0) prev_free[(size_t)b] = a; else tail = a;
      prev_free[(size_t)u] = next_free[(size_t)u] = -2;  // not in the list
    };
    auto grow = [&](size_t size) {
      if (size > (size_t)INT32_MAX - 1024) throw std::length_error("unigram trie too large");
      size_t old = da_.size();
      if (size <= old) return;
      da_.resize(size, Unit{0, -1, -1});
      next_free.resize(size, -1);
      prev_free.resize(size, -1);
      tries.resize(size, 0);
      for (size_t u = old; u < size; ++u) {
        prev_free[u] = tail;
        next_free[u] = -1;
        if (tail >= 0) next_free[(size_t)tail] = (int32_t)u; else head = (int32_t)u;
        tail = (int32_t)u;
      }
    };
    grow(1024);
    da_[0].check = -2;  // the root
    unlink(0);
    std::vector<std::pair<int32_t, int32_t>> queue{{0, 0}};  // (pointer node, unit)
    for (size_t q = 0; q < queue.size(); ++q) {
      auto [tn, unit] = queue[q];
      auto& kids = t[(size_t)tn].kids;
      da_[(size_t)unit].value = t[(size_t)tn].value;
      if (kids.empty()) {
        da_[(size_t)unit].base = LEAF;
        continue;
      }
      std::sort(kids.begin(), kids.end());
      int64_t base = 0;
      for (int32_t f = head;;) {
        if (f < 0) {
          size_t old = da_.size();
          grow(old + 1024);
          f = (int32_t)old;
        }
        int32_t after = next_free[(size_t)f];
        base = (int64_t)f - kids[0].first;
        if (base >= 1) {
          grow((size_t)base + 512);
          bool ok = true;
          for (auto& kid : kids)
            if (da_[(size_t)base + kid.first].check != -1) { ok = false; break; }
          if (ok) break;
        }
        if (++tries[(size_t)f] >= 16) unlink(f);
        f = after;
      }
      da_[(size_t)unit].base = (int32_t)base;
      for (auto& kid : kids) {
        size_t u = (size_t)base + kid.first;
        da_[u].check = unit;
        if (prev_free[u] != -2) unlink((int32_t)u);
        queue.emplace_back(kid.second, (int32_t)u);
      }
      std::vector<std::pair<uint8_t, int32_t>>().swap(kids);
    }
  }

  bool float32() const { return float32_; }

  // Best path of s[0:n]: ids (-1 = unknown character) and their start positions.
  void viterbi(const uint32_t* s, size_t n, std::vector<int32_t>& ids, std::vector<uint32_t>& starts) const {
    if (float32_)
      run<float>(s, n, ids, starts);
    else
      run<double>(s, n, ids, starts);
  }

 private:
  // T: the score type. float rebases path scores past +-1e5 (sentencepiece's kScoreResetThreshold).
  template <class T>
  void run(const uint32_t* s, size_t n, std::vector<int32_t>& ids, std::vector<uint32_t>& starts) const {
    constexpr bool kRebase = std::is_same<T, float>::value;
    const std::vector<T>& score = scores<T>();
    const T unk_score = kRebase ? (T)unk_f_ : (T)unk_d_;
    ids.clear();
    starts.clear();
    if (n == 0) return;
    // UTF-8 of the text and where each character starts in it (written in place: a
    // vector::insert per character was not always inlined, and cost 20% of the run)
    std::vector<uint32_t> at(n + 1);
    size_t total = 0;
    for (size_t i = 0; i < n; ++i) {
      at[i] = (uint32_t)total;
      const uint32_t c = s[i];
      total += c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
    }
    if (total > (size_t)UINT32_MAX) throw std::length_error("text too long");
    at[n] = (uint32_t)total;
    std::vector<uint8_t> bytes(total);
    for (size_t i = 0; i < n; ++i) utf8_of(s[i], bytes.data() + at[i]);
    constexpr T kReset = (T)100000.0;
    std::vector<T> best(n + 1, (T)0);
    std::vector<int64_t> from(n + 1, -1);
    std::vector<int32_t> last(n + 1, -1);
    const Unit* da = da_.data();
    const size_t da_size = da_.size();
    size_t frontier = 0;
    for (size_t i = 0; i < n; ++i) {
      T here = best[i];
      if (kRebase && (here < -kReset || here > kReset)) {
        const T offset = here;
        for (size_t j = i; j <= frontier; ++j)
          if (j == i || from[j] >= 0) best[j] -= offset;
        here = (T)0;
      }
      int64_t unit = 0;
      bool single = false;
      size_t q = at[i];
      for (size_t j = i; j < n; ++j) {
        const size_t stop = at[j + 1];
        bool ok = true;
        for (; q < stop; ++q) {
          const int64_t next = (int64_t)da[unit].base + bytes[q];
          if (next < 0 || (size_t)next >= da_size || da[next].check != unit) { ok = false; break; }
          unit = next;
        }
        if (!ok) break;
        const int32_t id = da[unit].value;
        if (id < 0) continue;
        if (j == i) single = true;
        const size_t e = j + 1;
        frontier = std::max(frontier, e);
        const T cand = score[(size_t)id] + here;
        if (from[e] < 0 || cand > best[e]) {
          best[e] = cand;
          from[e] = (int64_t)i;
          last[e] = id;
        }
      }
      if (!single) {
        const size_t e = i + 1;
        frontier = std::max(frontier, e);
        const T cand = unk_score + here;
        if (from[e] < 0 || cand > best[e]) {
          best[e] = cand;
          from[e] = (int64_t)i;
          last[e] = -1;
        }
      }
    }
    for (size_t e = n; e > 0; e = (size_t)from[e]) {
      ids.push_back(last[e]);
      starts.push_back((uint32_t)from[e]);
    }
    std::reverse(ids.begin(), ids.end());
    std::reverse(starts.begin(), starts.end());
  }

  template <class T>
  const std::vector<T>& scores() const;

  static constexpr int32_t LEAF = -1024;  // base of a leaf: base + byte < 0, never a unit
  struct Unit {
    int32_t base, check, value;
  };
  std::vector<Unit> da_;
  bool float32_;
  std::vector<float> score_f_;   // node scores, float32 arithmetic
  std::vector<double> score_d_;  // node scores, double arithmetic
  float unk_f_;
  double unk_d_;
};

template <>
inline const std::vector<float>& UnigramLattice::scores<float>() const { return score_f_; }
template <>
inline const std::vector<double>& UnigramLattice::scores<double>() const { return score_d_; }

// Unigram._finish: the path of t[0:n] (ids, starts: UnigramLattice::viterbi) as tokens, each
// passed to emit(id, start, end). A run of unknown characters becomes one unk_id token over the
// run or, with byte_ids (256 ids, or empty), the byte pieces of the UTF-8 of each of its
// characters, each spanning its character. false when a run has neither: the caller raises.
template <class Emit>
bool finish_path(const uint32_t* t, size_t n, const std::vector<int32_t>& ids, const std::vector<uint32_t>& starts,
                 int32_t unk_id, const std::vector<int32_t>& byte_ids, Emit&& emit) {
  const size_t k_end = ids.size();
  for (size_t k = 0; k < k_end;) {
    if (ids[k] >= 0) {
      emit(ids[k], starts[k], k + 1 < k_end ? starts[k + 1] : (uint32_t)n);
      ++k;
      continue;
    }
    size_t j = k + 1;  // a run of unknown characters
    while (j < k_end && ids[j] < 0) ++j;
    const uint32_t a = starts[k], b = j < k_end ? starts[j] : (uint32_t)n;
    if (!byte_ids.empty()) {
      uint8_t buf[4];
      for (uint32_t q = a; q < b; ++q) {
        const int len = utf8_of(t[q], buf);
        for (int z = 0; z < len; ++z) emit(byte_ids[buf[z]], q, q + 1);
      }
    } else if (unk_id >= 0) {
      emit(unk_id, a, b);
    } else {
      return false;
    }
    k = j;
  }
  return true;
}


}  // namespace tf_spm

// ---------------------------------------------------------------------------------------
// CPython binding

namespace tf_spm_py {

using tf_spm::U32;

// Sets FileFormatError (tokenforge.errors) with msg.
inline void set_format_error(const std::string& msg) {
  PyObject* mod = PyImport_ImportModule("tokenforge.errors");
  PyObject* cls = mod ? PyObject_GetAttrString(mod, "FileFormatError") : nullptr;
  Py_XDECREF(mod);
  if (!cls) return;  // the import error stays set
  PyErr_SetString(cls, msg.c_str());
  Py_DECREF(cls);
}

// A tuple of the items of seq (owning them), or nullptr with TypeError(msg).
inline PyObject* as_tuple(PyObject* seq, const char* msg) {
  if (PyTuple_Check(seq)) {
    Py_INCREF(seq);
    return seq;
  }
  if (!PyList_Check(seq)) {
    PyErr_SetString(PyExc_TypeError, msg);
    return nullptr;
  }
  return PyList_AsTuple(seq);
}

// The code points of a str.
inline bool u32_of(PyObject* s, std::vector<uint32_t>& out) {
  if (!PyUnicode_Check(s)) {
    PyErr_Format(PyExc_TypeError, "expected str, got %.100s", Py_TYPE(s)->tp_name);
    return false;
  }
  if (PyUnicode_READY(s) < 0) return false;
  Py_ssize_t n = PyUnicode_GET_LENGTH(s);
  out.resize((size_t)n);
  const void* data = PyUnicode_DATA(s);
  switch (PyUnicode_KIND(s)) {
    case PyUnicode_1BYTE_KIND: {
      const Py_UCS1* p = (const Py_UCS1*)data;
      for (Py_ssize_t k = 0; k < n; ++k) out[(size_t)k] = p[k];
      break;
    }
    case PyUnicode_2BYTE_KIND: {
      const Py_UCS2* p = (const Py_UCS2*)data;
      for (Py_ssize_t k = 0; k < n; ++k) out[(size_t)k] = p[k];
      break;
    }
    default:
      if (n) std::memcpy(out.data(), data, (size_t)n * 4);
  }
  return true;
}

inline bool u32_string_of(PyObject* s, U32& out) {
  std::vector<uint32_t> v;
  if (!u32_of(s, v)) return false;
  out.assign((const char32_t*)v.data(), v.size());
  return true;
}

// Runs f() (which may throw SpmError or bad_alloc) with the GIL released when big;
// false with a Python exception set on failure.
template <class F>
bool run_released(bool big, F&& f) {
  std::string err;
  int kind = 0;  // 1 = format error, 2 = out of memory
  auto body = [&] {
    try {
      f();
    } catch (const tf_spm::SpmError& e) {
      kind = 1;
      try { err = e.msg; } catch (...) { kind = 2; }
    } catch (const std::bad_alloc&) {
      kind = 2;
    } catch (const std::length_error&) {
      kind = 3;
    }
  };
  if (big) {
    Py_BEGIN_ALLOW_THREADS
    body();
    Py_END_ALLOW_THREADS
  } else {
    body();
  }
  if (kind == 1) { set_format_error(err); return false; }
  if (kind == 2) { PyErr_NoMemory(); return false; }
  if (kind == 3) { PyErr_SetString(PyExc_OverflowError, "text too long (2**31 code points or more)"); return false; }
  return true;
}

// --- SpmNormalizer ---------------------------------------------------------------------

struct SpmNormalizerObject {
  PyObject_HEAD
  tf_spm::Normalizer* impl;
};

inline int SpmNormalizer_init(SpmNormalizerObject* self, PyObject* args, PyObject* kwds) {
  static const char* kwlist[] = {"charsmap", "add_dummy_prefix", "remove_extra_whitespaces", "escape_whitespaces",
                                 "user_defined", nullptr};
  Py_buffer blob;
  int adp, rew, esc;
  PyObject* udf;
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "y*pppO", (char**)kwlist, &blob, &adp, &rew, &esc, &udf)) return -1;
  if (self->impl) {  // immutable: a second __init__ changes nothing
    PyBuffer_Release(&blob);
    return 0;
  }
  std::vector<U32> symbols;
  PyObject* seq = as_tuple(udf, "user_defined must be a sequence of str");
  if (!seq) { PyBuffer_Release(&blob); return -1; }
  bool ok = true;
  try {
    for (Py_ssize_t k = 0; k < PySequence_Fast_GET_SIZE(seq) && ok; ++k) {
      U32 s;
      ok = u32_string_of(PySequence_Fast_GET_ITEM(seq, k), s);
      if (ok && s.empty()) {
        PyErr_SetString(PyExc_ValueError, "user-defined symbols must be non-empty strings");
        ok = false;
      }
      if (ok) symbols.push_back(std::move(s));
    }
  } catch (const std::bad_alloc&) {
    PyErr_NoMemory();
    ok = false;
  }
  Py_DECREF(seq);
  if (!ok) { PyBuffer_Release(&blob); return -1; }
  tf_spm::Normalizer* impl = nullptr;
  bool done = run_released(false, [&] {
    impl = new tf_spm::Normalizer((const uint8_t*)blob.buf, (size_t)blob.len, adp != 0, rew != 0, esc != 0,
                                  std::move(symbols));
  });
  PyBuffer_Release(&blob);
  if (!done) return -1;
  self->impl = impl;
  return 0;
}

inline void SpmNormalizer_dealloc(SpmNormalizerObject* self) {
  delete self->impl;
  Py_TYPE(self)->tp_free((PyObject*)self);
}

inline bool normalizer_ready(SpmNormalizerObject* self) {
  if (!self->impl) {
    PyErr_SetString(PyExc_ValueError, "SpmNormalizer is not initialised");
    return false;
  }
  return true;
}

// normalize(text: str) -> str
inline PyObject* SpmNormalizer_normalize(SpmNormalizerObject* self, PyObject* arg) {
  if (!normalizer_ready(self)) return nullptr;
  std::vector<uint32_t> text;
  U32 out;
  try {
    if (!u32_of(arg, text)) return nullptr;
  } catch (const std::bad_alloc&) {
    return PyErr_NoMemory();
  }
  const tf_spm::Normalizer& impl = *self->impl;
  if (!run_released(text.size() >= tf_spm::RELEASE_GIL_AT, [&] { impl.normalize(text.data(), text.size(), out); }))
    return nullptr;
  return PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, out.data(), (Py_ssize_t)out.size());
}

inline PyMethodDef SpmNormalizer_methods[] = {
    {"normalize", (PyCFunction)SpmNormalizer_normalize, METH_O, "sentencepiece's normalization of a str."},
    {nullptr, nullptr, 0, nullptr},
};

inline PyTypeObject SpmNormalizerType = {PyVarObject_HEAD_INIT(nullptr, 0)};

// --- SpmBPE ----------------------------------------------------------------------------

struct SpmBPEObject {
  PyObject_HEAD
  tf_spm::BPE* impl;
  std::vector<PyObject*>* ints;  // id -> a shared int object
};

inline int SpmBPE_init(SpmBPEObject* self, PyObject* args, PyObject* kwds) {
  static const char* kwlist[] = {"pieces", "scores", "types", "unk_id", "byte_ids", nullptr};
  PyObject *pieces, *scores, *types, *byte_ids;
  int unk_id;
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOOiO", (char**)kwlist, &pieces, &scores, &types, &unk_id, &byte_ids))
    return -1;
  if (self->impl) return 0;
  std::vector<U32> p;
  std::vector<double> s;
  std::vector<int> t;
  std::vector<int32_t> b;
  PyObject *ps = nullptr, *ss = nullptr, *ts = nullptr, *bs = nullptr;
  bool ok = false;
  try {
    ps = as_tuple(pieces, "pieces must be a sequence of str");
    ss = ps ? as_tuple(scores, "scores must be a sequence of float") : nullptr;
    ts = ss ? as_tuple(types, "types must be a sequence of int") : nullptr;
    if (ts && byte_ids != Py_None) bs = as_tuple(byte_ids, "byte_ids must be None or a sequence of int");
    if (ts && (byte_ids == Py_None || bs)) {
      ok = true;
      for (Py_ssize_t k = 0; ok && k < PySequence_Fast_GET_SIZE(ps); ++k) {
        U32 x;
        ok = u32_string_of(PySequence_Fast_GET_ITEM(ps, k), x);
        if (ok) p.push_back(std::move(x));
      }
      for (Py_ssize_t k = 0; ok && k < PySequence_Fast_GET_SIZE(ss); ++k) {
        double d = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(ss, k));
        ok = !(d == -1.0 && PyErr_Occurred());
        s.push_back(d);
      }
      for (Py_ssize_t k = 0; ok && k < PySequence_Fast_GET_SIZE(ts); ++k) {
        long v = PyLong_AsLong(PySequence_Fast_GET_ITEM(ts, k));
        ok = !(v == -1 && PyErr_Occurred());
        t.push_back((int)v);
      }
      for (Py_ssize_t k = 0; ok && bs && k < PySequence_Fast_GET_SIZE(bs); ++k) {
        long v = PyLong_AsLong(PySequence_Fast_GET_ITEM(bs, k));
        ok = !(v == -1 && PyErr_Occurred());
        b.push_back((int32_t)v);
      }
    }
  } catch (const std::bad_alloc&) {
    PyErr_NoMemory();
    ok = false;
  }
  Py_XDECREF(ps);
  Py_XDECREF(ss);
  Py_XDECREF(ts);
  Py_XDECREF(bs);
  if (!ok) return -1;
  tf_spm::BPE* impl = nullptr;
  std::string err;
  try {
    impl = new tf_spm::BPE(std::move(p), std::move(s), std::move(t), unk_id, std::move(b));
  } catch (const tf_spm::SpmError& e) {
    PyErr_SetString(PyExc_ValueError, e.msg.c_str());
    return -1;
  } catch (const std::bad_alloc&) {
    PyErr_NoMemory();
    return -1;
  }
  self->impl = impl;
  self->ints = new (std::nothrow) std::vector<PyObject*>();
  if (!self->ints) { PyErr_NoMemory(); return -1; }
  return 0;
}

inline void SpmBPE_dealloc(SpmBPEObject* self) {
  if (self->ints) {
    for (PyObject* o : *self->ints) Py_XDECREF(o);
    delete self->ints;
  }
  delete self->impl;
  Py_TYPE(self)->tp_free((PyObject*)self);
}

inline bool run_bpe(SpmBPEObject* self, PyObject* arg, std::vector<tf_spm::Token>& out) {
  if (!self->impl) {
    PyErr_SetString(PyExc_ValueError, "SpmBPE is not initialised");
    return false;
  }
  std::vector<uint32_t> text;
  try {
    if (!u32_of(arg, text)) return false;
  } catch (const std::bad_alloc&) {
    PyErr_NoMemory();
    return false;
  }
  const tf_spm::BPE& impl = *self->impl;
  return run_released(text.size() >= tf_spm::RELEASE_GIL_AT, [&] { impl.tokenize(text.data(), text.size(), out); });
}

// A list of ids, one shared int object per id (as CoreBPE's list_of_ids).
inline PyObject* SpmBPE_list_of_ids(SpmBPEObject* self, const std::vector<tf_spm::Token>& toks) {
  std::vector<PyObject*>& cache = *self->ints;
  if (cache.empty()) cache.assign(self->impl->size(), nullptr);
  PyObject* list = PyList_New((Py_ssize_t)toks.size());
  if (!list) return nullptr;
  for (size_t k = 0; k < toks.size(); ++k) {
    size_t id = (size_t)toks[k].id;
    PyObject* o = id < cache.size() ? cache[id] : nullptr;
    if (!o) {
      o = PyLong_FromSize_t(id);
      if (!o) { Py_DECREF(list); return nullptr; }
      if (id < cache.size()) cache[id] = o;
      else { PyList_SET_ITEM(list, (Py_ssize_t)k, o); continue; }
    }
    Py_INCREF(o);
    PyList_SET_ITEM(list, (Py_ssize_t)k, o);
  }
  return list;
}

// encode(text: str) -> list[int]
inline PyObject* SpmBPE_encode(SpmBPEObject* self, PyObject* arg) {
  std::vector<tf_spm::Token> out;
  if (!run_bpe(self, arg, out)) return nullptr;
  return SpmBPE_list_of_ids(self, out);
}

// tokenize(text: str) -> list[tuple[int, int, int]]: (id, start, end) in code points
inline PyObject* SpmBPE_tokenize(SpmBPEObject* self, PyObject* arg) {
  std::vector<tf_spm::Token> out;
  if (!run_bpe(self, arg, out)) return nullptr;
  PyObject* list = PyList_New((Py_ssize_t)out.size());
  if (!list) return nullptr;
  for (size_t k = 0; k < out.size(); ++k) {
    PyObject* t = Py_BuildValue("(iII)", out[k].id, out[k].start, out[k].end);
    if (!t) { Py_DECREF(list); return nullptr; }
    PyList_SET_ITEM(list, (Py_ssize_t)k, t);
  }
  return list;
}

inline PyMethodDef SpmBPE_methods[] = {
    {"encode", (PyCFunction)SpmBPE_encode, METH_O, "Ids of a normalized text (sentencepiece BPE)."},
    {"tokenize", (PyCFunction)SpmBPE_tokenize, METH_O, "(id, start, end) of a normalized text."},
    {nullptr, nullptr, 0, nullptr},
};

inline PyTypeObject SpmBPEType = {PyVarObject_HEAD_INIT(nullptr, 0)};

// spm_bpe_encode(normalizer: SpmNormalizer, model: SpmBPE, text: str) -> list[int]:
// model.encode(normalizer.normalize(text)) without the intermediate str.
inline PyObject* spm_bpe_encode(PyObject*, PyObject* args) {
  PyObject *norm, *bpe, *text;
  if (!PyArg_ParseTuple(args, "O!O!U", &SpmNormalizerType, &norm, &SpmBPEType, &bpe, &text)) return nullptr;
  auto* ns = (SpmNormalizerObject*)norm;
  auto* bs = (SpmBPEObject*)bpe;
  if (!normalizer_ready(ns)) return nullptr;
  if (!bs->impl) {
    PyErr_SetString(PyExc_ValueError, "SpmBPE is not initialised");
    return nullptr;
  }
  std::vector<uint32_t> in;
  try {
    if (!u32_of(text, in)) return nullptr;
  } catch (const std::bad_alloc&) {
    return PyErr_NoMemory();
  }
  std::vector<tf_spm::Token> out;
  const tf_spm::Normalizer& n = *ns->impl;
  const tf_spm::BPE& b = *bs->impl;
  if (!run_released(in.size() >= tf_spm::RELEASE_GIL_AT, [&] {
        U32 s;
        n.normalize(in.data(), in.size(), s);
        b.tokenize((const uint32_t*)s.data(), s.size(), out);
      }))
    return nullptr;
  return SpmBPE_list_of_ids(bs, out);
}

// --- SpmUnigram ------------------------------------------------------------------------

struct SpmUnigramObject {
  PyObject_HEAD
  tf_spm::UnigramLattice* impl;
  int32_t unk_id;                  // -1: none
  std::vector<int32_t>* byte_ids;  // 256 ids (byte fallback) or empty
};

// 256 non-negative ids from a sequence (byte_ids), or empty for None.
inline bool byte_ids_of(PyObject* o, std::vector<int32_t>& out) {
  out.clear();
  if (o == Py_None) return true;
  PyObject* seq = as_tuple(o, "byte_ids must be None or a sequence of 256 ints");
  if (!seq) return false;
  bool ok = PyTuple_GET_SIZE(seq) == 256;
  try {
    for (Py_ssize_t k = 0; ok && k < 256; ++k) {
      PyObject* x = PyTuple_GET_ITEM(seq, k);
      long v = PyLong_Check(x) ? PyLong_AsLong(x) : -1;
      ok = !(v == -1 && PyErr_Occurred()) && v >= 0 && v <= INT32_MAX;
      out.push_back((int32_t)v);
    }
  } catch (const std::bad_alloc&) {
    PyErr_NoMemory();
    ok = false;
  }
  Py_DECREF(seq);
  if (!ok && !PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "byte_ids must hold 256 non-negative ids");
  if (!ok) out.clear();
  return ok;
}

// SpmUnigram(pieces: list[str | None], scores: list[float], unk_score: float, float32=True,
//            unk_id=-1, byte_ids=None): pieces[i] None = not in the lattice; float32 chooses the
// arithmetic (UnigramLattice); unk_id (-1: none) and byte_ids (256 ids, byte fallback) are what
// encode/tokenize make of runs of unknown characters (Unigram._finish).
inline int SpmUnigram_init(SpmUnigramObject* self, PyObject* args, PyObject* kwds) {
  static const char* kwlist[] = {"pieces", "scores", "unk_score", "float32", "unk_id", "byte_ids", nullptr};
  PyObject *pieces, *scores, *byte_ids = Py_None;
  double unk_score;
  int float32 = 1, unk_id = -1;
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOd|piO", (char**)kwlist, &pieces, &scores, &unk_score, &float32,
                                   &unk_id, &byte_ids))
    return -1;
  if (self->impl) return 0;
  if (std::isnan(unk_score)) {
    PyErr_SetString(PyExc_ValueError, "SpmUnigram: unk_score is NaN");
    return -1;
  }
  if (unk_id < -1) {
    PyErr_SetString(PyExc_ValueError, "SpmUnigram: unk_id must be an id or -1");
    return -1;
  }
  std::vector<int32_t> bytes;
  if (!byte_ids_of(byte_ids, bytes)) return -1;
  PyObject* ps = as_tuple(pieces, "pieces must be a list of str or None");
  if (!ps) return -1;
  PyObject* ss = as_tuple(scores, "scores must be a list of float");
  if (!ss) { Py_DECREF(ps); return -1; }
  bool ok = PyTuple_GET_SIZE(ps) == PyTuple_GET_SIZE(ss);
  if (!ok) PyErr_SetString(PyExc_ValueError, "SpmUnigram: pieces and scores must have the same length");
  std::vector<U32> p;
  std::vector<double> sc;
  try {
    for (Py_ssize_t k = 0; ok && k < PyTuple_GET_SIZE(ps); ++k) {
      PyObject* o = PyTuple_GET_ITEM(ps, k);
      PyObject* f = PyTuple_GET_ITEM(ss, k);
      if (!PyFloat_Check(f) && !PyLong_Check(f)) {
        PyErr_Format(PyExc_TypeError, "SpmUnigram: score %zd must be a number", k);
        ok = false;
        break;
      }
      double d = PyFloat_Check(f) ? PyFloat_AS_DOUBLE(f) : PyLong_AsDouble(f);
      if (d == -1.0 && PyErr_Occurred()) { ok = false; break; }
      if (std::isnan(d)) {
        PyErr_Format(PyExc_ValueError, "SpmUnigram: score %zd is NaN", k);
        ok = false;
        break;
      }
      sc.push_back(d);
      U32 x;
      if (o != Py_None && !u32_string_of(o, x)) { ok = false; break; }
      p.push_back(std::move(x));
    }
  } catch (const std::bad_alloc&) {
    PyErr_NoMemory();
    ok = false;
  }
  Py_DECREF(ps);
  Py_DECREF(ss);
  if (!ok) return -1;
  tf_spm::UnigramLattice* impl = nullptr;
  std::vector<int32_t>* held = nullptr;
  if (!run_released(false, [&] {
        held = new std::vector<int32_t>(std::move(bytes));
        impl = new tf_spm::UnigramLattice(p, sc, unk_score, float32 != 0);
      })) {
    delete held;
    return -1;
  }
  self->impl = impl;
  self->byte_ids = held;
  self->unk_id = (int32_t)unk_id;
  return 0;
}

inline void SpmUnigram_dealloc(SpmUnigramObject* self) {
  delete self->impl;
  delete self->byte_ids;
  Py_TYPE(self)->tp_free((PyObject*)self);
}

inline const tf_spm::UnigramLattice* unigram_ready(SpmUnigramObject* self) {
  if (!self->impl) PyErr_SetString(PyExc_ValueError, "SpmUnigram is not initialised");
  return self->impl;
}

// viterbi(text: str) -> (ids, starts): the best path before unknown merging (id -1: unknown character)
inline PyObject* SpmUnigram_viterbi(SpmUnigramObject* self, PyObject* arg) {
  const tf_spm::UnigramLattice* impl = unigram_ready(self);
  if (!impl) return nullptr;
  std::vector<uint32_t> text;
  std::vector<int32_t> ids;
  std::vector<uint32_t> starts;
  try {
    if (!u32_of(arg, text)) return nullptr;
  } catch (const std::bad_alloc&) {
    return PyErr_NoMemory();
  }
  if (!run_released(text.size() >= tf_spm::RELEASE_GIL_AT, [&] {
        if (text.size() > (size_t)INT32_MAX) throw std::length_error("text too long");
        impl->viterbi(text.data(), text.size(), ids, starts);
      }))
    return nullptr;
  PyObject* a = PyList_New((Py_ssize_t)ids.size());
  PyObject* b = PyList_New((Py_ssize_t)starts.size());
  if (!a || !b) { Py_XDECREF(a); Py_XDECREF(b); return nullptr; }
  for (size_t k = 0; k < ids.size(); ++k) {
    PyObject* x = PyLong_FromLong(ids[k]);
    PyObject* y = PyLong_FromUnsignedLong(starts[k]);
    if (!x || !y) { Py_XDECREF(x); Py_XDECREF(y); Py_DECREF(a); Py_DECREF(b); return nullptr; }
    PyList_SET_ITEM(a, (Py_ssize_t)k, x);
    PyList_SET_ITEM(b, (Py_ssize_t)k, y);
  }
  return Py_BuildValue("(NN)", a, b);
}

// Viterbi and unknown merging of t[0:n] (GIL-free), each token to emit(id, start, end); false
// when a run of unknown characters has neither unk_id nor byte_ids.
template <class Emit>
bool unigram_tokens(const SpmUnigramObject* self, const uint32_t* t, size_t n, Emit&& emit) {
  if (n > (size_t)INT32_MAX) throw std::length_error("text too long");
  std::vector<int32_t> ids;
  std::vector<uint32_t> starts;
  self->impl->viterbi(t, n, ids, starts);
  return tf_spm::finish_path(t, n, ids, starts, self->unk_id, *self->byte_ids, emit);
}

// The tokens of text (a str) to emit; covered = false when unknown characters are left uncovered.
template <class Emit>
bool run_unigram(SpmUnigramObject* self, PyObject* arg, bool& covered, Emit&& emit) {
  if (!unigram_ready(self)) return false;
  std::vector<uint32_t> text;
  try {
    if (!u32_of(arg, text)) return false;
  } catch (const std::bad_alloc&) {
    PyErr_NoMemory();
    return false;
  }
  return run_released(text.size() >= tf_spm::RELEASE_GIL_AT,
                      [&] { covered = unigram_tokens(self, text.data(), text.size(), emit); });
}

// A list of non-negative ids; ids below 2^20 reuse one int object each, kept for the life
// of the process (made on first use, with the GIL held), so a list costs an INCREF per id.
inline PyObject* list_of_shared_ints(const std::vector<int32_t>& ids) {
  static std::vector<PyObject*> cache;
  constexpr size_t kMax = 1 << 20;
  PyObject* list = PyList_New((Py_ssize_t)ids.size());
  if (!list) return nullptr;
  for (size_t k = 0; k < ids.size(); ++k) {
    size_t id = (size_t)ids[k];
    PyObject* o = nullptr;
    if (id < kMax) {
      if (id >= cache.size()) {
        try {
          cache.resize(id + 1 > 2 * cache.size() ? id + 1 : (2 * cache.size() < kMax ? 2 * cache.size() : kMax), nullptr);
        } catch (const std::bad_alloc&) {
          Py_DECREF(list);
          return PyErr_NoMemory();
        }
      }
      o = cache[id];
      if (!o) {
        o = PyLong_FromSize_t(id);
        if (!o) { Py_DECREF(list); return nullptr; }
        cache[id] = o;
      }
      Py_INCREF(o);
    } else {
      o = PyLong_FromSize_t(id);
      if (!o) { Py_DECREF(list); return nullptr; }
    }
    PyList_SET_ITEM(list, (Py_ssize_t)k, o);
  }
  return list;
}

// encode(text: str) -> list[int] | None: ids of the best segmentation (Unigram.encode_piece);
// None when a run of unknown characters has neither unk_id nor byte_ids (the caller raises).
inline PyObject* SpmUnigram_encode(SpmUnigramObject* self, PyObject* arg) {
  std::vector<int32_t> ids;
  bool covered = true;
  if (!run_unigram(self, arg, covered, [&](int32_t id, uint32_t, uint32_t) { ids.push_back(id); })) return nullptr;
  if (!covered) Py_RETURN_NONE;
  return list_of_shared_ints(ids);
}

// tokenize(text: str) -> list[(id, start, end)] | None: as encode, with code-point spans (Unigram.tokenize)
inline PyObject* SpmUnigram_tokenize(SpmUnigramObject* self, PyObject* arg) {
  std::vector<tf_spm::Token> out;
  bool covered = true;
  if (!run_unigram(self, arg, covered, [&](int32_t id, uint32_t a, uint32_t b) { out.push_back(tf_spm::Token{id, a, b}); }))
    return nullptr;
  if (!covered) Py_RETURN_NONE;
  PyObject* list = PyList_New((Py_ssize_t)out.size());
  if (!list) return nullptr;
  for (size_t k = 0; k < out.size(); ++k) {
    PyObject* t = Py_BuildValue("(iII)", out[k].id, out[k].start, out[k].end);
    if (!t) { Py_DECREF(list); return nullptr; }
    PyList_SET_ITEM(list, (Py_ssize_t)k, t);
  }
  return list;
}

inline PyObject* SpmUnigram_float32(SpmUnigramObject* self, void*) {
  if (!unigram_ready(self)) return nullptr;
  return PyBool_FromLong(self->impl->float32());
}

inline PyMethodDef SpmUnigram_methods[] = {
    {"viterbi", (PyCFunction)SpmUnigram_viterbi, METH_O, "Best path: (ids, starts); id -1 = unknown character."},
    {"encode", (PyCFunction)SpmUnigram_encode, METH_O, "Ids of the best segmentation, unknown runs merged (None: uncovered)."},
    {"tokenize", (PyCFunction)SpmUnigram_tokenize, METH_O, "(id, start, end) of the best segmentation (None: uncovered)."},
    {nullptr, nullptr, 0, nullptr},
};

inline PyGetSetDef SpmUnigram_getset[] = {
    {"float32", (getter)SpmUnigram_float32, nullptr, "True: sentencepiece's float32 arithmetic; False: doubles (HF).", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

inline PyTypeObject SpmUnigramType = {PyVarObject_HEAD_INIT(nullptr, 0)};

// --- Unigram, fused with the normalizer -----------------------------------------------

// spm_unigram_encode(normalizer: SpmNormalizer, model: SpmUnigram, text: str) -> list[int] | None
// The ids of sentencepiece's Unigram encoding of text in one call: normalization, then
// SpmUnigram.encode of the normalized text. None when a run of unknown characters is left
// uncovered (the caller raises as the Python path does).
inline PyObject* spm_unigram_encode(PyObject*, PyObject* args) {
  PyObject *norm, *cap, *text;
  if (!PyArg_ParseTuple(args, "O!O!U", &SpmNormalizerType, &norm, &SpmUnigramType, &cap, &text)) return nullptr;
  auto* self = (SpmNormalizerObject*)norm;
  if (!normalizer_ready(self)) return nullptr;
  auto* model = (SpmUnigramObject*)cap;
  if (!unigram_ready(model)) return nullptr;
  std::vector<uint32_t> in;
  try {
    if (!u32_of(text, in)) return nullptr;
  } catch (const std::bad_alloc&) {
    return PyErr_NoMemory();
  }
  std::vector<int32_t> out;
  bool covered = true;
  const tf_spm::Normalizer& impl = *self->impl;
  bool done = run_released(in.size() >= tf_spm::RELEASE_GIL_AT, [&] {
    U32 s;
    impl.normalize(in.data(), in.size(), s);
    covered = unigram_tokens(model, (const uint32_t*)s.data(), s.size(),
                             [&](int32_t id, uint32_t, uint32_t) { out.push_back(id); });
  });
  if (!done) return nullptr;
  if (!covered) Py_RETURN_NONE;
  return list_of_shared_ints(out);
}

// Readies both types and adds them to module m; -1 with an exception set on failure.
inline int add_types(PyObject* m) {
  SpmNormalizerType.tp_name = "tokenforge._core.SpmNormalizer";
  SpmNormalizerType.tp_basicsize = sizeof(SpmNormalizerObject);
  SpmNormalizerType.tp_flags = Py_TPFLAGS_DEFAULT;
  SpmNormalizerType.tp_doc =
      "SpmNormalizer(charsmap, add_dummy_prefix, remove_extra_whitespaces, escape_whitespaces, user_defined): "
      "sentencepiece's normalizer.";
  SpmNormalizerType.tp_new = PyType_GenericNew;
  SpmNormalizerType.tp_init = (initproc)SpmNormalizer_init;
  SpmNormalizerType.tp_dealloc = (destructor)SpmNormalizer_dealloc;
  SpmNormalizerType.tp_methods = SpmNormalizer_methods;
  SpmBPEType.tp_name = "tokenforge._core.SpmBPE";
  SpmBPEType.tp_basicsize = sizeof(SpmBPEObject);
  SpmBPEType.tp_flags = Py_TPFLAGS_DEFAULT;
  SpmBPEType.tp_doc = "SpmBPE(pieces, scores, types, unk_id, byte_ids): sentencepiece's BPE by piece score.";
  SpmBPEType.tp_new = PyType_GenericNew;
  SpmBPEType.tp_init = (initproc)SpmBPE_init;
  SpmBPEType.tp_dealloc = (destructor)SpmBPE_dealloc;
  SpmBPEType.tp_methods = SpmBPE_methods;
  SpmUnigramType.tp_name = "tokenforge._core.SpmUnigram";
  SpmUnigramType.tp_basicsize = sizeof(SpmUnigramObject);
  SpmUnigramType.tp_flags = Py_TPFLAGS_DEFAULT;
  SpmUnigramType.tp_doc =
      "SpmUnigram(pieces, scores, unk_score, float32=True, unk_id=-1, byte_ids=None): Unigram Viterbi over a "
      "double-array trie.";
  SpmUnigramType.tp_new = PyType_GenericNew;
  SpmUnigramType.tp_init = (initproc)SpmUnigram_init;
  SpmUnigramType.tp_dealloc = (destructor)SpmUnigram_dealloc;
  SpmUnigramType.tp_methods = SpmUnigram_methods;
  SpmUnigramType.tp_getset = SpmUnigram_getset;
  if (PyType_Ready(&SpmNormalizerType) < 0 || PyType_Ready(&SpmBPEType) < 0 || PyType_Ready(&SpmUnigramType) < 0)
    return -1;
  Py_INCREF(&SpmNormalizerType);
  if (PyModule_AddObject(m, "SpmNormalizer", (PyObject*)&SpmNormalizerType) < 0) {
    Py_DECREF(&SpmNormalizerType);
    return -1;
  }
  Py_INCREF(&SpmBPEType);
  if (PyModule_AddObject(m, "SpmBPE", (PyObject*)&SpmBPEType) < 0) {
    Py_DECREF(&SpmBPEType);
    return -1;
  }
  Py_INCREF(&SpmUnigramType);
  if (PyModule_AddObject(m, "SpmUnigram", (PyObject*)&SpmUnigramType) < 0) {
    Py_DECREF(&SpmUnigramType);
    return -1;
  }
  return 0;
}

}  // namespace tf_spm_py

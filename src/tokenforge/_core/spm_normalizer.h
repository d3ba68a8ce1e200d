// SentencePiece's normalizer, natively (the algorithm of the Python type SpmNormalizer).
//
// At each position the longest user-defined symbol is copied whole; otherwise the
// longest rule of the precompiled charsmap (a darts-clone trie over UTF-8 keys, matched
// at character boundaries) is replaced by its output; otherwise one character is copied
// (a lone surrogate becomes U+FFFD). Then the white-space handling: leading spaces dropped
// and runs collapsed (remove_extra_whitespaces), a space in front (add_dummy_prefix),
// spaces written as U+2581 (escape_whitespaces), trailing ones dropped. The reference is
// SentencePieceNormalizer._run in normalizers.py.
//
// Text is handled as code points (UTF-32), as the Python reference indexes str. Malformed
// charsmaps throw FormatError when the broken rule is used (as the reference does), never
// at construction (only a malformed header does).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "common.h"
#include "count_table.h"

namespace tf {
namespace spm {

//: Inputs at least this long (code points) are processed with the GIL released (binding).
constexpr size_t RELEASE_GIL_AT = 2048;

// ---------------------------------------------------------------------------------------
// The precompiled charsmap

class Charsmap {
 public:
  // blob: uint32 trie size (little endian), the trie units, then the NUL-separated pool.
  // Throws SpmError on a blob whose header is malformed (as Charsmap.__init__ does).
  explicit Charsmap(const uint8_t* blob, size_t n);

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
      if (x < 0 || (uint64_t)x >= units_.size()) throw FormatError("precompiled_charsmap: trie leaf points outside the trie");
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
      throw FormatError("precompiled_charsmap: replacement offset " + std::to_string(value) + " is outside the pool");
    throw FormatError("precompiled_charsmap: replacement at offset " + std::to_string(value) + " is not UTF-8");
  }

  std::vector<uint32_t> units_;
  std::string pool_;
  int64_t root_ = 0;
  std::vector<int32_t> fast_node_, fast_value_;
  std::unordered_map<int32_t, Repl> repl_;
};

class Normalizer {
 public:
  // Throws FormatError on a charsmap whose header is malformed.
  Normalizer(const uint8_t* blob, size_t n, bool add_dummy_prefix, bool remove_extra_whitespaces,
             bool escape_whitespaces, std::vector<U32> user_defined);

  // The output of the longest match at text[i:] appended to sp; returns the characters consumed.
  size_t prefix(const uint32_t* text, size_t n, size_t i, U32& sp) const;

  // With `spans`, also where each output character comes from: out[j] came from the input
  // characters [spans[2j], spans[2j+1]) (the dummy prefix: from where the leading white
  // space ended to the end of the first output group; an empty range when nothing follows).
  void normalize(const uint32_t* text, size_t n, U32& out, std::vector<uint32_t>* spans = nullptr) const;

  // Switches to HF tokenizers' Precompiled normalizer followed by the Metaspace
  // pre-tokenizer's replacement (normalize_hf). Set once, before the normalizer is shared.
  // reject: a normalized text holding it is left to the caller (rejects()). split: the
  // model runs on the words Metaspace cuts (before every U+2581), see hf_split().
  void set_hf(bool prepend, U32 reject, bool split) {
    hf_ = true;
    hf_prepend_ = prepend;
    reject_ = std::move(reject);
    hf_split_ = split;
  }
  // Does the model after this normalizer run word by word (Metaspace's split)?
  bool hf_split() const { return hf_split_; }

  // Does the normalized text hold the reject string of set_hf?
  bool rejects(const U32& normalized) const;

 private:
  // HF's Precompiled (tokenizers normalizers/precompiled.rs): per extended grapheme cluster
  // (grapheme.h), a cluster under 6 UTF-8 bytes whose prefix has a rule becomes the output
  // of the shortest such rule, whole; other clusters are mapped character by character.
  // Then Metaspace: spaces written as U+2581 (escape_), and with hf_prepend_ one in front of
  // a non-empty text that does not start with a space or U+2581. spans: each output character comes from
  // its cluster.
  void normalize_hf(const uint32_t* text, size_t n, U32& out, std::vector<uint32_t>* spans) const;

  Charsmap cm_;
  bool hf_ = false, hf_prepend_ = false, hf_split_ = false;
  U32 reject_;
  bool add_dummy_prefix_, remove_extra_, escape_;
  std::vector<U32> udf_store_;
  std::unordered_set<U32View> udf_;
  CharSet udf_first_;
  size_t udf_max_ = 0;
};

// Code-point strings and how often each was added, in the order first added.
using WordTable = CountTable<uint32_t>;

// The pre-token counts sentencepiece's trainers start from: each line normalized, then cut
// before every U+2581 (text before the first one is a word of its own); lines that normalize
// to nothing add nothing. A line of more than max_line_bytes UTF-8 bytes as read (0: no
// limit; a lone surrogate counts 3 bytes) is skipped, as sentencepiece's trainer skips a
// sentence over --max_sentence_length. Words are kept in the order first seen, so merging
// blocks in file order gives the same table as counting line by line (the Python reference:
// LineSplitter._count_lines_py in trainers/counting.py).
struct WordCounts {
  WordTable words;  // every word
  WordTable ends;   // the last word of each line (when asked)
  uint64_t skipped = 0;  // lines over max_line_bytes
};

// text holds the lines one after another: line k is text[bounds[k], bounds[k + 1]).
void count_words(const Normalizer& norm, const uint32_t* text, const std::vector<size_t>& bounds,
                 size_t max_line_bytes, bool line_ends, WordCounts& out);

}  // namespace spm
}  // namespace tf

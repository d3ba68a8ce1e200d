// Byte-level BPE by merge priority: the merge loop of HF tokenizers' BPE model.
//
// HF merges, among the adjacent pairs of parts, the pair with the lowest merge index (the
// leftmost on ties); rank BPE (bpe.h, tiktoken's) merges the adjacent pair whose merged
// token has the lowest rank. They coincide only when the merge list is the one the ranks
// imply. A tokenizer.json made by transformers' TikTokenConverter (Llama 3) lists every
// split of every token as a merge (several merges make the same token), so it runs here:
// a table (left id, right id) -> (merge index, result id), the parts start as the piece's
// bytes, and the lowest (index, position) candidate merges until none is left.
//
// * Pairs of two single-byte tokens (every first step) come from a 64K array.
// * Short pieces: arrays of parts and packed (index << 32 | result) pair keys; the lowest
//   key is a scan the compiler vectorises, its first occurrence is the leftmost.
// * Long pieces: a linked list of parts and a binary heap with lazy deletion, O(n log n).
// * Read-only after finish(): one table serves every thread.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "bpe.h"
#include "common.h"

namespace tf {

class PairMerges {
 public:
  static constexpr uint32_t NONE = 0xFFFFFFFFu;
  static constexpr uint64_t NO_PAIR = ~0ull;  // a packed key: no merge

  // Merge number `index` joins (left, right) into result. A pair given twice keeps the
  // later index, as HF's merge map does.
  void add(uint32_t left, uint32_t right, uint32_t index, uint32_t result) {
    pending_.push_back(Slot{key(left, right), index, result});
  }
  // Call once after all add()s; v gives the ids of the 256 single bytes.
  void finish(const Vocab& v);

  // (index << 32 | result) of the merge of (a, b), or NO_PAIR.
  inline uint64_t find(uint32_t a, uint32_t b) const {
    const uint64_t k = key(a, b);
    size_t i = mix64(k) & mask_;
    for (;;) {
      const Slot& s = slots_[i];
      if (s.key == k) return (uint64_t)s.index << 32 | s.result;
      if (s.key == EMPTY) return NO_PAIR;
      i = (i + 1) & mask_;
    }
  }
  // find() for two single bytes, from the array.
  inline uint64_t find_bytes(uint8_t a, uint8_t b) const { return byte_pairs_[(size_t)a << 8 | b]; }
  size_t size() const { return count_; }

 private:
  static constexpr uint64_t EMPTY = ~0ull;
  static inline uint64_t key(uint32_t a, uint32_t b) { return (uint64_t)a << 32 | b; }
  struct Slot {
    uint64_t key;
    uint32_t index, result;
  };
  std::vector<Slot> pending_;
  std::vector<Slot> slots_;
  std::vector<uint64_t> byte_pairs_;
  size_t mask_ = 0;
  size_t count_ = 0;
};

// Appends the ids of p[0:n] (n >= 1) merged by priority, from its single bytes (each byte
// must be a token: the caller checks the 256 single bytes are in the vocabulary).
void pair_merge(const Vocab& v, const PairMerges& m, const uint8_t* p, size_t n, std::vector<uint32_t>& out);

}  // namespace tf

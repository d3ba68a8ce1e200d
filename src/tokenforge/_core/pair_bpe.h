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
//
// Rank first, then a check (certify). A token sequence is what merging gives a text
// exactly when merging the bytes of each two adjacent tokens gives back those two tokens
// (the argument of backtrack.h: until a merge crosses a boundary both sides evolve as
// they would alone, which holds for any order that ranks candidate pairs by a key of the
// pair, then leftmost; HF's (merge index, position) is one). So the ids of the fast rank
// merge (bpe.h, backtrack.h) are HF's ids when every adjacent pair of them passes that
// test by merging by priority, memoised per thread; else the piece merges by priority.
// A list that orders merges by their result's id (rank_ordered(): transformers'
// TikTokenConverter lists every split of every token, by the token's rank) differs from
// rank merging only where two pairs that make the same token by different splits meet
// (runs like "aaaa"), so the check almost always passes; other lists skip it.
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
  PairMerges();
  // Call once after all add()s; v gives the ids of the 256 single bytes and every token's
  // bytes (its ids are the vocabulary's).
  void finish(const Vocab& v);
  // Merge k comes before merge k' whenever result(k) < result(k'): then the rank merge
  // with ids as ranks is tried first (see the top of this file).
  bool rank_ordered() const { return rank_ordered_; }
  // True when ids[0:k] (k >= 1), the rank merge of the piece p[0:n], are what merging it
  // by priority gives: every adjacent pair (a single token: the token itself) merges back
  // into itself. False is always safe (the caller merges by priority).
  //
  // A pair is checked by merging its bytes by priority (memoised per thread), or for free
  // when the list is also complete (every split of every token into two tokens is a
  // merge: then the candidate pairs are the rank merge's, and the lowest merge index is
  // the lowest result rank; and every token has a split into two of lower id, as BPE
  // training makes them: then the rank merge is exactly tiktoken's, atoms and all) and
  // the pair's bytes hold no 3-byte string twice: merging by priority and by rank part
  // ways only on a tie, two pairs that make one token t by different splits at once; that
  // needs t (3+ bytes: a 2-byte token has one split) at two places, and the rank merge of
  // a pair of adjacent tokens of its result gives back that pair.
  bool certify(const Vocab& v, const uint8_t* p, size_t n, const uint32_t* ids, size_t k) const;

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
  // certify()
  bool merges_back(const Vocab& v, uint32_t a, uint32_t b) const;
  std::vector<uint32_t> entry_of_;  // id -> the vocabulary entry holding its bytes, or NONE
  std::vector<uint8_t> length_;     // id -> its byte length (0: not a token, or 256+ bytes)
  size_t length_of(const Vocab& v, uint32_t id) const {  // 0: not a token
    if (id >= length_.size()) return 0;
    const size_t l = length_[id];
    return l != 0 || entry_of_[id] == NONE ? l : v.entry_len(entry_of_[id]);
  }
  uint64_t generation_;             // tells tables apart in the per-thread memo, even at one address
  bool rank_ordered_ = false;
  bool complete_ = false;  // rank_ordered_, every split of a token into two tokens is a merge, ids grow
};

// Appends the ids of p[0:n] (n >= 1) merged by priority, from its single bytes (each byte
// must be a token: the caller checks the 256 single bytes are in the vocabulary).
void pair_merge(const Vocab& v, const PairMerges& m, const uint8_t* p, size_t n, std::vector<uint32_t>& out);

}  // namespace tf

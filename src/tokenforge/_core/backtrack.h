// Linear-time exact BPE for long pieces: the backtracking encoder.
//
// Why it is exact. Call a token sequence valid when merging its bytes gives
// that very sequence. Merging never crosses a boundary it keeps, so every
// stretch of a valid sequence is valid, and two valid sequences that share a
// token at the seam join into a valid one. There is exactly one valid
// sequence per text (merging is deterministic). So a sequence in which every
// adjacent pair is valid (a "compatible" pair) is THE encoding.
//
// How it runs. Walk forward: append the longest token that matches at the
// current position; if it is not compatible with the previous token, try the
// next shorter token that is a prefix of it; if none is left, step back one
// token. A bitfield marks positions that proved to be dead ends, so no
// position is explored twice and the cost is linear in the input (times the
// token length). Compatibility of a pair is decided by merging the two
// tokens' bytes (at most 2 x the longest token) and is memoised per call.
//
// Only "valid" tokens (merging their own bytes gives them back) take part;
// the others can never appear inside a merged piece. Single bytes always do.
#pragma once
#include <cstdint>
#include <mutex>
#include <vector>

#include "bpe.h"

namespace tf {

class Backtracker {
 public:
  explicit Backtracker(const Vocab& v);

  // Ids of piece p[0:n] by merging (no whole-piece lookup); same result as bpe_merge.
  void encode(const uint8_t* p, size_t n, std::vector<uint32_t>& out) const;

 private:
  static constexpr uint32_t NONE = Vocab::NONE;
  void build();
  inline uint32_t child(uint32_t node, uint8_t b) const {
    uint64_t key = ((uint64_t)node << 8) | b;
    size_t i = mix64(key) & mask_;
    for (;;) {
      const Edge& e = edges_[i];
      if (e.key == key) return e.child;
      if (e.key == EMPTY) return NONE;
      i = (i + 1) & mask_;
    }
  }
  uint32_t longest_match(const uint8_t* p, size_t n, size_t pos, size_t* len) const;

  static constexpr uint64_t EMPTY = ~0ull;
  struct Edge {
    uint64_t key;
    uint32_t child;
  };
  const Vocab& v_;
  uint64_t generation_;  // distinguishes backtrackers in the per-thread memo, even at a reused address
  std::vector<Edge> edges_;
  size_t mask_ = 0;
  std::vector<uint32_t> node_token_;   // node -> rank of the valid token ending there, or NONE
  std::vector<uint32_t> token_len_;    // rank -> byte length (0 = not a valid token)
  std::vector<uint32_t> next_prefix_;  // rank -> rank of the longest valid proper prefix, or NONE
  std::vector<uint32_t> token_off_;    // rank -> entry index in the vocab
};

}  // namespace tf

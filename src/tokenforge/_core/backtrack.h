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
// token length). Compatibility of a pair is decided from the two tokens'
// split trees in O(depth) lookups (see pair_is_valid) and memoised per thread.
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
  // Trie edges: (node << 8 | byte) -> child node, 8 bytes per slot, open addressing.
  static constexpr uint32_t MAX_NODES = 1u << 24;  // node ids fit 24 bits: keys fit 32
  static inline uint32_t edge_key(uint32_t node, uint8_t b) { return node << 8 | b; }
  inline size_t slot_of(uint32_t key) const { return (size_t)mix64(key) & mask_; }
  inline uint32_t child(uint32_t node, uint8_t b) const {
    uint32_t key = edge_key(node, b);
    size_t i = slot_of(key);
    for (;;) {
      const Edge& e = edges_[i];
      if (e.key == key) return e.child;
      if (e.key == EMPTY) return NONE;
      i = (i + 1) & mask_;
    }
  }
  uint32_t longest_match(const uint8_t* p, size_t n, size_t pos, size_t* len) const;
  bool pair_is_valid(uint32_t a, uint32_t b, std::vector<uint8_t>& buf) const;
  bool pair_is_valid_by_merging(uint32_t a, uint32_t b, std::vector<uint8_t>& buf) const;

  static constexpr uint32_t EMPTY = ~0u;  // no valid key: node < MAX_NODES - 1
  struct Edge {
    uint32_t key;
    uint32_t child;
  };
  const Vocab& v_;
  uint64_t generation_;  // distinguishes backtrackers in the per-thread memo, even at a reused address
  std::vector<Edge> edges_;
  size_t mask_ = 0;
  std::vector<uint32_t> node_token_;   // node -> rank of the valid token ending there, or NONE
  std::vector<uint32_t> depth1_;       // byte -> trie node (a direct array for the first level)
  std::vector<uint32_t> depth2_;       // two bytes -> trie node, or NONE
  std::vector<uint32_t> token_len_;    // rank -> byte length (0 = not a valid token)
  std::vector<uint32_t> next_prefix_;  // rank -> rank of the longest valid proper prefix, or NONE
  std::vector<uint32_t> token_off_;    // rank -> entry index in the vocab
  std::vector<uint32_t> split_left_;   // rank -> left part of its last merge (NONE for bytes)
  std::vector<uint32_t> split_right_;  // rank -> right part of its last merge
  bool monotone_ = true;               // every token outranks its two parts (true of trained vocabularies)
  bool usable_ = true;                 // false: the trie would not fit 32-bit edges; encode() merges

 public:
  // For tests: the fast pair check and the definition.
  bool check_pair(uint32_t a, uint32_t b, bool by_merging) const {
    std::vector<uint8_t> buf;
    if (a >= token_len_.size() || b >= token_len_.size() || !token_len_[a] || !token_len_[b]) return false;
    return by_merging ? pair_is_valid_by_merging(a, b, buf) : pair_is_valid(a, b, buf);
  }
  bool monotone() const { return monotone_; }
};

}  // namespace tf

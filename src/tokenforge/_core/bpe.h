// Byte-level BPE by rank: a read-only vocabulary and the merge loops.
//
// Performance notes.
// * Token bytes live in one arena; an open-addressing table maps them to ranks.
//   The parts of a piece are always contiguous in the piece, so looking up the
//   merge of two parts is a lookup of a sub-span: no copies, no allocation.
// * A piece that is a token is one lookup. Most pieces of natural text are.
// * Short pieces merge with the array scan (O(m^2), but m is tiny and the data
//   stays in registers/L1). Medium pieces (up to MEDIUM_PIECE bytes: CJK clauses,
//   text without spaces) use the block-minimum merge (a linked list of parts and
//   one minimum rank per 16 positions: O(m/16 + 16) per merge, no heap, all on
//   the stack). Long pieces (a run of a million spaces is one piece) use a linked
//   list and a binary heap with lazy deletion: O(m log m), so worst-case inputs
//   stay near-linear.
// * Nothing here is mutable after construction, so one Vocab is shared by all
//   threads without locks; caches are per call or per thread.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "common.h"

namespace tf {

class Vocab {
 public:
  static constexpr uint32_t NONE = 0xFFFFFFFFu;

  void add(const uint8_t* p, size_t n, uint32_t rank) {
    Entry e{(uint32_t)arena_.size(), (uint32_t)n, rank};
    arena_.insert(arena_.end(), p, p + n);
    entries_.push_back(e);
  }
  // Call once after all add()s.
  void finish() {
    size_t cap = 16;
    while (cap < entries_.size() * 2 + 16) cap <<= 1;
    slots_.assign(cap, Slot{0, 0, 0, 0});
    tags_.assign(cap, 0);
    mask_ = cap - 1;
    rank2_.assign(65536, NONE);
    for (auto& r : rank1_) r = NONE;
    for (uint32_t k = 0; k < entries_.size(); ++k) {
      const Entry& e = entries_[k];
      const uint8_t* p = arena_.data() + e.off;
      if (e.len == 1 && (rank1_[p[0]] == NONE || e.rank < rank1_[p[0]])) rank1_[p[0]] = e.rank;
      if (e.len == 2) {
        uint32_t& r2 = rank2_[(size_t)p[0] << 8 | p[1]];
        if (r2 == NONE || e.rank < r2) r2 = e.rank;
      }
      uint64_t h = hash_bytes(p, e.len);
      size_t i = h & mask_;
      bool dup = false;
      while (slots_[i].len != 0) {
        if (slots_[i].len == e.len && std::memcmp(arena_.data() + entries_[slots_[i].idx].off, p, e.len) == 0) {
          dup = true;  // same bytes added twice: the first rank stays
          break;
        }
        i = (i + 1) & mask_;
      }
      if (!dup) {
        slots_[i] = Slot{prefix(p, e.len), e.rank, e.len, k};
        tags_[i] = tag_of(h);
      }
    }
    max_len_ = 0;
    for (auto& e : entries_) max_len_ = std::max<size_t>(max_len_, e.len);
    // The hot table: tokens of 3..8 bytes in rank order (low ranks are the frequent ones),
    // one per slot, first come keeps it. Only tokens rank() returns go in, so it answers
    // exactly as the main table does.
    std::vector<uint32_t> order;
    for (uint32_t k = 0; k < entries_.size(); ++k)
      if (entries_[k].len >= 3 && entries_[k].len <= 8) order.push_back(k);
    std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return entries_[a].rank < entries_[b].rank; });
    hot_.assign(HOT_SLOTS, Hot{0, 0, 0});
    for (uint32_t k : order) {
      const Entry& e = entries_[k];
      const uint8_t* p = arena_.data() + e.off;
      if (full_rank(p, e.len) != e.rank) continue;  // duplicated bytes: another rank answers
      uint64_t w = prefix(p, e.len);
      Hot& h = hot_[hot_slot(w, e.len)];
      if (h.len == 0) h = Hot{w, e.rank, e.len};
    }
  }
  inline uint32_t byte_rank(uint8_t b) const { return rank1_[b]; }
  // Rank of the token with bytes p[0:n], or NONE. Probing reads a one-byte tag per slot
  // (a compact array that stays in cache), so most misses never touch a slot; a tag hit
  // reads one slot, which holds the first 8 key bytes; longer keys compare the rest.
  inline uint32_t rank(const uint8_t* p, size_t n) const {
    if (n == 1) return rank1_[p[0]];
    if (n == 2) return rank2_[(size_t)p[0] << 8 | p[1]];
    if (n <= 8) {
      uint64_t w = prefix(p, n);
      const Hot& hot = hot_[hot_slot(w, n)];
      if (hot.len == n && hot.w == w) return hot.rank;
    }
    return full_rank(p, n);
  }
  // rank() without the hot table.
  inline uint32_t full_rank(const uint8_t* p, size_t n) const {
    if (n > max_len_) return NONE;
    uint64_t h = hash_bytes(p, n);
    uint8_t tag = tag_of(h);
    size_t i = h & mask_;
    for (;;) {
      uint8_t t = tags_[i];
      if (t == 0) return NONE;
      if (t == tag) {
        const Slot& sl = slots_[i];
        if (sl.len == n && sl.pre == prefix(p, n) &&
            (n <= 8 || std::memcmp(arena_.data() + entries_[sl.idx].off + 8, p + 8, n - 8) == 0))
          return sl.rank;
      }
      i = (i + 1) & mask_;
    }
  }
  size_t size() const { return entries_.size(); }
  // The k-th token added: its bytes and rank.
  const uint8_t* entry_bytes(size_t k) const { return arena_.data() + entries_[k].off; }
  size_t entry_len(size_t k) const { return entries_[k].len; }
  uint32_t entry_rank(size_t k) const { return entries_[k].rank; }
  size_t max_len() const { return max_len_; }

 private:
  struct Entry {
    uint32_t off, len, rank;
  };
  std::vector<uint8_t> arena_;
  std::vector<Entry> entries_;
  struct Slot {
    uint64_t pre;   // the first (up to) 8 bytes of the key, zero-padded
    uint32_t rank;
    uint32_t len;   // 0 = empty slot
    uint32_t idx;   // entry index (for the bytes past the first 8)
  };
  static inline uint8_t tag_of(uint64_t h) { return (uint8_t)(0x80 | (h >> 57)); }  // never 0
  static inline uint64_t prefix(const uint8_t* p, size_t n) {
    return load_prefix(p, n);
  }
  // A small direct-mapped table of frequent short tokens in front of the main one: it
  // stays in L2, where the main table's slots (24 bytes x 2 x vocabulary) do not.
  struct Hot {
    uint64_t w;     // the token's bytes, zero-padded
    uint32_t rank;
    uint32_t len;   // 0 = empty
  };
  static constexpr unsigned HOT_BITS = 13;
  static constexpr size_t HOT_SLOTS = (size_t)1 << HOT_BITS;
  static inline size_t hot_slot(uint64_t w, size_t n) {
    return (size_t)(((w ^ (uint64_t)n << 59) * 0x9E3779B97F4A7C15ull) >> (64 - HOT_BITS));
  }
  std::vector<Hot> hot_;
  std::vector<Slot> slots_;
  std::vector<uint8_t> tags_;  // 0 = empty slot, else 0x80 | 7 hash bits
  std::vector<uint32_t> rank2_;
  uint32_t rank1_[256];
  size_t mask_ = 0;
  size_t max_len_ = 0;
};

constexpr size_t SHORT_PIECE = 128;
//: bpe_merge: up to TINY_PIECE bytes the array scan, then the block-minimum merge up to
//: MEDIUM_PIECE bytes, then the heap.
constexpr size_t TINY_PIECE = 24;
constexpr size_t MEDIUM_PIECE = 2048;

// Appends the ids of piece p[0:n] (n >= 1) to out: whole-piece lookup, then merging.
void bpe_encode_piece(const Vocab& v, const uint8_t* p, size_t n, std::vector<uint32_t>& out);
// Merging only (no whole-piece lookup): the array scan, the block-minimum merge or the
// heap, by length.
void bpe_merge(const Vocab& v, const uint8_t* p, size_t n, std::vector<uint32_t>& out);
// Merging with only the tokens of rank < bound (what the vocabulary was when the token of
// rank `bound` was learned): for checking a vocabulary, not for encoding.
void bpe_merge_below(const Vocab& v, const uint8_t* p, size_t n, uint32_t bound, std::vector<uint32_t>& out);
// Merges p[0:n] (n >= 2) as bpe_merge does; true when everything merges into one token,
// and then *whole is that token and (*left, *right) the two parts of the last merge (its
// split). O(n log n) (the heap), for long tokens whose split an index needs.
bool bpe_merge_last(const Vocab& v, const uint8_t* p, size_t n, uint32_t* whole, uint32_t* left,
                    uint32_t* right);
// Merges (left, right) in rank order are those of the ranks when merging the bytes of each
// merge's token with the lower ranks gives exactly [left, right]: HF's merge list and
// tiktoken's ranks then encode alike. Returns the index of the first merge where that
// fails, or -1. `bytes(id)` gives a token's bytes.
template <class TokenBytes>
long first_underived_merge(const Vocab& v, const std::vector<std::pair<uint32_t, uint32_t>>& merges,
                           TokenBytes bytes) {
  std::vector<uint32_t> parts;
  std::string joined;
  for (size_t k = 0; k < merges.size(); ++k) {
    const std::string& a = bytes(merges[k].first);
    const std::string& b = bytes(merges[k].second);
    joined.assign(a);
    joined += b;
    uint32_t r = v.rank((const uint8_t*)joined.data(), joined.size());
    if (r == Vocab::NONE) return (long)k;
    parts.clear();
    bpe_merge_below(v, (const uint8_t*)joined.data(), joined.size(), r, parts);
    if (parts.size() != 2 || parts[0] != merges[k].first || parts[1] != merges[k].second) return (long)k;
  }
  return -1;
}

}  // namespace tf

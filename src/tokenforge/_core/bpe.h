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
    filter_.assign(FILTER_WORDS, 0);
    for (const Entry& e : entries_)
      if (e.len >= 3) {
        const uint64_t k = filter_key(arena_.data() + e.off, e.len);
        filter_[filter_word(k)] |= filter_bits(k);
      }
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
    build_atoms();
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
  // rank() for the joins of a merge, where most lookups of CJK text (two characters that
  // are not one token) miss: the Bloom filter answers most misses from 256 KB, before the
  // hot table and the main table are read. Same answers as rank().
  inline uint32_t merge_rank(const uint8_t* p, size_t n) const {
    if (n == 1) return rank1_[p[0]];
    if (n == 2) return rank2_[(size_t)p[0] << 8 | p[1]];
    if (n > max_len_) return NONE;
    if (n <= 8) {
      const uint64_t w = prefix(p, n);
      if (!maybe_token(short_key(w, n))) return NONE;
      const Hot& hot = hot_[hot_slot(w, n)];
      if (hot.len == n && hot.w == w) return hot.rank;
      return probe(p, n, hash_bytes(p, n));
    }
    const uint64_t h = hash_bytes(p, n);
    return maybe_token(h) ? probe(p, n, h) : NONE;
  }
  // Starts loading the cache lines rank(p, n) will read, so that a merge that needs two
  // lookups waits for their memory once, not twice. No effect on results.
  inline void prefetch(const uint8_t* p, size_t n) const {
    if (n <= 2 || n > max_len_) return;
    if (n <= 8) __builtin_prefetch(&hot_[hot_slot(prefix(p, n), n)]);
    const uint64_t h = hash_bytes(p, n);
    __builtin_prefetch(&filter_[filter_word(n <= 8 ? short_key(prefix(p, n), n) : h)]);
    size_t i = h & mask_;
    __builtin_prefetch(&tags_[i]);
    __builtin_prefetch(&slots_[i]);
  }
  // rank() without the hot table.
  inline uint32_t full_rank(const uint8_t* p, size_t n) const {
    if (n > max_len_) return NONE;
    const uint64_t h = hash_bytes(p, n);
    if (n > 8 && !maybe_token(h)) return NONE;  // long pieces that are not a token: CJK clauses
    return probe(p, n, h);
  }
  // The main table's answer for p[0:n] with hash h (n <= max_len_).
  inline uint32_t probe(const uint8_t* p, size_t n, uint64_t h) const {
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
  // The rank of the two bytes p[i:i+2] (i + 2 <= n) as one token when that pair is atomic
  // there (the argument of build_atoms with c = the pair, M = its rank: no token ending
  // with (byte before, p[i]) or starting with (p[i+1], byte after) ranks lower), else NONE.
  inline uint32_t pair_atom_at(const uint8_t* p, size_t i, size_t n) const {
    if (!atoms_) return NONE;
    const uint32_t r = rank2_[(size_t)p[i] << 8 | p[i + 1]];
    if (r == NONE) return NONE;
    if (i > 0 && end_pair_[(size_t)p[i - 1] << 8 | p[i]] <= r) return NONE;
    if (i + 2 < n && start_pair_[(size_t)p[i + 1] << 8 | p[i + 2]] <= r) return NONE;
    return r;
  }
  // The rank of the 2- or 3-byte UTF-8 character at p[i] (of the piece p[0:n]) when it is
  // "atomic" there: its bytes merge into it before any merge can join one of them to a
  // byte outside it (see build_atoms); merging may then start from it as one part. *len
  // gets its byte length. NONE (and *len untouched) otherwise.
  inline uint32_t atom_at(const uint8_t* p, size_t i, size_t n, size_t* len) const {
    const uint8_t b = p[i];
    size_t l;
    uint32_t cp;
    if (b < 0xC2 || b >= 0xF0) return NONE;
    if (b < 0xE0) {
      if (i + 2 > n || (p[i + 1] & 0xC0) != 0x80) return NONE;
      cp = (uint32_t)(b & 0x1F) << 6 | (p[i + 1] & 0x3F);
      l = 2;
    } else {
      if (i + 3 > n || (p[i + 1] & 0xC0) != 0x80 || (p[i + 2] & 0xC0) != 0x80) return NONE;
      cp = (uint32_t)(b & 0x0F) << 12 | (uint32_t)(p[i + 1] & 0x3F) << 6 | (p[i + 2] & 0x3F);
      if (cp < 0x800) return NONE;  // an overlong form: not the bytes the table was made from
      l = 3;
    }
    const Atom& a = atom_[cp];
    if (a.rank == NONE) return NONE;
    // the context: a token ending with (byte before, first byte) or starting with
    // (last byte, byte after) of rank <= M could take a byte first
    if (i > 0 && end_pair_[(size_t)p[i - 1] << 8 | b] <= a.m) return NONE;
    if (i + l < n && start_pair_[(size_t)p[i + l - 1] << 8 | p[i + l]] <= a.m) return NONE;
    *len = l;
    return a.rank;
  }
  size_t size() const { return entries_.size(); }
  // Checks over every split of every token skip a longer token, as if it failed them (each
  // would cost its length squared); trained vocabularies hold none (128 bytes at most in
  // GPT-2, cl100k and o200k).
  static constexpr size_t CHECKED_TOKEN_BYTES = 1024;
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
  // A Bloom filter of the tokens of 3+ bytes: two bits of one 64-bit word per token (one
  // cache line per query), 2^21 bits: about 3% false positives at 200k tokens, and no
  // false negatives, so a clear bit proves that the bytes are not a token.
  static constexpr unsigned FILTER_WORD_BITS = 15;
  static constexpr size_t FILTER_WORDS = (size_t)1 << FILTER_WORD_BITS;
  // The filter's key: for tokens of up to 8 bytes one multiply of their bytes (cheaper
  // than hash_bytes, which only a filter hit then needs), else hash_bytes.
  static inline uint64_t short_key(uint64_t w, size_t n) {
    uint64_t x = (w ^ (uint64_t)n << 59) * 0xBF58476D1CE4E5B9ull;
    return x ^ x >> 29;
  }
  static inline uint64_t filter_key(const uint8_t* p, size_t n) {
    return n <= 8 ? short_key(load_prefix(p, n), n) : hash_bytes(p, n);
  }
  static inline size_t filter_word(uint64_t h) { return (size_t)(h >> (64 - FILTER_WORD_BITS)); }
  static inline uint64_t filter_bits(uint64_t h) { return (1ull << (h >> 20 & 63)) | (1ull << (h >> 26 & 63)); }
  inline bool maybe_token(uint64_t h) const {
    const uint64_t b = filter_bits(h);
    return (filter_[filter_word(h)] & b) == b;
  }
  std::vector<uint64_t> filter_;
  // A small direct-mapped table of frequent short tokens in front of the main one: it
  // stays in L2, where the main table's slots (24 bytes x 2 x vocabulary) do not.
  struct Hot {
    uint64_t w;     // the token's bytes, zero-padded
    uint32_t rank;
    uint32_t len;   // 0 = empty
  };
  static constexpr unsigned HOT_BITS = 15;
  static constexpr size_t HOT_SLOTS = (size_t)1 << HOT_BITS;
  static inline size_t hot_slot(uint64_t w, size_t n) {
    return (size_t)(((w ^ (uint64_t)n << 59) * 0x9E3779B97F4A7C15ull) >> (64 - HOT_BITS));
  }
  // Atomic characters (atom_at), indexed by code point below U+10000 (the 2- and 3-byte
  // UTF-8 forms, surrogates' bytes included: the test is on bytes).
  //
  // Why pre-merging one is exact. Let c be the character's bytes and M the highest rank
  // of the merges that turn c's bytes alone into the token c (merging c's bytes must give
  // c). The first merge that joins part of c to a byte outside it makes a token whose
  // bytes are X + c[:k] or c[k:] + Y (0 < k < |c|, X, Y non-empty, matching the bytes
  // around c). If every such token has rank > M, then until c is whole every merge that
  // touches c's bytes is one of c's own, each of rank <= M and always available, so
  // merging (lowest rank first) completes c before any crossing one: c is one part from
  // the start. Distinct tokens have distinct ranks, so no tie can reorder this.
  // The test, with lower bounds over all tokens: X + c[:1] ends with (byte before c,
  // c[0]) [end_pair_], c[k:] + Y for k = |c| - 1 starts with (c's last byte, byte after)
  // [start_pair_], and for a 3-byte c, X + c[:2] ends with c[:2] and c[1:] + Y starts
  // with c[1:] [the context-free part, checked here].
  // The argument also needs every token to be made by a merge of two lower-ranked tokens
  // (as in every trained rank file): a token ranked below its own parts is reached only
  // after them, so its rank is no lower bound on when it can form. A rank list with such
  // a token (written by hand, say) gets no atoms at all.
  struct Atom {
    uint32_t rank = NONE;  // the character's token, NONE: not atomic in any context
    uint32_t m = 0;        // M: the highest rank of its own merges
  };
  // Whether every token of 2+ bytes splits into two tokens of lower rank. A token longer
  // than CHECKED_TOKEN_BYTES counts as not.
  bool every_token_has_lower_parts() const {
    for (const Entry& e : entries_) {
      if (e.len > CHECKED_TOKEN_BYTES) return false;
      const uint8_t* q = arena_.data() + e.off;
      if (e.len < 2 || rank(q, e.len) != e.rank) continue;  // duplicated bytes: another rank answers
      bool found = false;
      for (size_t k = 1; k < e.len && !found; ++k) found = rank(q, k) < e.rank && rank(q + k, e.len - k) < e.rank;
      if (!found) return false;
    }
    return true;
  }
  void build_atoms() {
    atom_.assign(65536, Atom{});
    atoms_ = every_token_has_lower_parts();
    if (!atoms_) return;
    std::vector<uint32_t> end2(65536, NONE), start2(65536, NONE);  // tokens of 3+ bytes
    end_pair_.assign(65536, NONE);   // tokens of 2+ bytes
    start_pair_.assign(65536, NONE);
    for (const Entry& e : entries_) {  // every rank of every token's bytes: lower bounds
      const uint8_t* q = arena_.data() + e.off;
      const size_t n = e.len;
      if (n < 2) continue;
      const size_t tail = (size_t)q[n - 2] << 8 | q[n - 1], head = (size_t)q[0] << 8 | q[1];
      end_pair_[tail] = std::min(end_pair_[tail], e.rank);
      start_pair_[head] = std::min(start_pair_[head], e.rank);
      if (n >= 3) {
        end2[tail] = std::min(end2[tail], e.rank);
        start2[head] = std::min(start2[head], e.rank);
      }
    }
    uint8_t b[4];
    for (uint32_t cp = 0x80; cp < 0x10000; ++cp) {
      const int n = utf8_of(cp, b);
      const uint32_t rc = rank(b, (size_t)n);
      if (rc == NONE) continue;
      uint32_t m = rc;
      if (n == 3) {  // the first of the two merges: the lower of the two byte pairs
        const uint32_t first = std::min(rank(b, 2), rank(b + 1, 2));
        if (first == NONE) continue;  // (then c's bytes cannot merge into c)
        m = std::max(m, first);
        if (end2[(size_t)b[0] << 8 | b[1]] <= m || start2[(size_t)b[1] << 8 | b[2]] <= m) continue;
      }
      atom_[cp] = Atom{rc, m};
    }
  }
  std::vector<Atom> atom_;
  bool atoms_ = false;  // atoms and atomic pairs may be used (every_token_has_lower_parts)
  std::vector<uint32_t> end_pair_, start_pair_;
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

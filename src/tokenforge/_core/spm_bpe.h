// SentencePiece's BPE model (bpe_model.cc), natively: the algorithm of the Python type SpmBPE.
//
// USER_DEFINED pieces are matched whole first and never merged; then the adjacent pair
// whose concatenation is a NORMAL/USER_DEFINED/UNUSED piece with the highest score is
// merged, leftmost first, until none is left; an UNUSED piece is split back into the
// two symbols it was last formed from; a symbol that is no piece is <unk> (runs fused)
// or, with byte fallback, its UTF-8 bytes. The reference is PieceBPE._sp_merge in
// models/bpe.py. Text is code points (UTF-32).
//
// How it is fast: every symbol carries its piece id, and a table of piece pairs (left id,
// right id) -> merged id (PairTable) answers a candidate without building or hashing a
// string; each mergeable piece has the rank of its score (equal scores, equal rank). The
// next merge is the valid candidate with the lowest (rank, left symbol): valid candidates
// never tie on that key (one per left symbol), so this is the reference's order, score
// first and leftmost on ties. tokenize() cuts the text between two characters adjacent
// inside no mergeable piece: no symbol can ever span such a cut, so the parts merge
// independently (the merges of one part are the subsequence the whole text would make
// there), and runs without U+2581 (JSON, code, unspaced text, CJK) become short parts.
// A part of up to SMALL_RUN characters merges in arrays with a scan (merge_small); a
// longer sequence keeps an agenda with stale entries skipped (merge_ranked): one binary
// heap of rank << 32 | left, or from LONG_RUN symbols a bucket per rank (RankQueue). With
// a NaN score, or 2**21 pieces or more, the CPython-heapq merge (merge_heapq) runs, whose
// tuple order reproduces Python's step for step.
//
// HF tokenizers' BPE model (its BPE::merge_word and Word::merge_all) runs on the same
// symbol machinery when the model is built with merges (a converted tokenizer.json: Llama 2,
// Mistral): every character is its vocabulary id, or its <0xXX> byte tokens (byte fallback,
// when all exist), or the unknown token (runs fused with fuse_unk; a pending unknown run
// stays open across the byte tokens of later characters, as in merge_word), or is dropped;
// then the adjacent pair of ids with the lowest merge rank is merged, leftmost first on
// equal ranks, until no adjacent pair is a merge. The pair table maps (left id, right id) to
// the merge; the agenda and merge_small are the ones above, keyed by merge rank. The text is
// cut between two characters that are tokens and adjacent inside no token a merge makes
// (the symbols on either side hold those characters at their edges, so no merge can join
// them), and beside a character that is byte tokens or unknown when no merge takes those
// tokens (and no unknown run can stay open: not both byte fallback with missing <0xXX>
// tokens and an unknown token). The reference is PieceBPE._hf_tokenize in models/bpe.py.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common.h"

namespace tf {
namespace spm {


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

// Open-addressing map: (left piece id, right piece id) -> merged piece id, in 8-byte slots
// (left << 43 | right << 22 | merged; ids below 2**21) so that the table of a 32k-piece
// vocabulary stays in L2.
class PairTable {
 public:
  static constexpr size_t MAX_ID = (size_t)1 << 21;
  void reserve(size_t n) {
    size_t cap = 16;
    while (cap < n * 2) cap <<= 1;
    slots_.assign(cap, kEmpty);
    shift_ = 64;
    for (size_t c = cap; c > 1; c >>= 1) --shift_;
  }
  // Assumes reserve(n) with n at least the number of keys added, and ids below MAX_ID.
  void add(int32_t l, int32_t r, int32_t piece) {
    const uint64_t k = key(l, r);
    const size_t mask = slots_.size() - 1;
    for (size_t s = slot(k);; s = (s + 1) & mask) {
      if (slots_[s] == kEmpty) {
        slots_[s] = k << 21 | (uint64_t)(uint32_t)piece;
        return;
      }
      if (slots_[s] >> 21 == k) return;
    }
  }
  // merged piece id, -1 if none
  int32_t get(int32_t l, int32_t r) const {
    const uint64_t k = key(l, r);
    const size_t mask = slots_.size() - 1;
    for (size_t s = slot(k);; s = (s + 1) & mask) {
      const uint64_t x = slots_[s];
      if (x >> 21 == k) return (int32_t)(x & (MAX_ID - 1));
      if (x == kEmpty) return -1;
    }
  }

 private:
  static constexpr uint64_t kEmpty = ~0ull;  // its key part is never a key (ids below 2**21)
  static uint64_t key(int32_t l, int32_t r) { return (uint64_t)(uint32_t)l << 22 | (uint32_t)r; }
  size_t slot(uint64_t k) const { return (size_t)((k * 0x9E3779B97F4A7C15ull) >> shift_); }
  std::vector<uint64_t> slots_;
  unsigned shift_ = 60;
};

// The agenda of a long symbol sequence: one bucket per rank, each a run of entries appended
// in increasing left symbol (read from the front) plus a min-heap on left for the entries
// that arrive out of that order; a two-level bitset finds the best non-empty rank. Pops
// come in (rank, left) order like the one binary heap's, at O(1) for the in-order entries
// (the first pairs, a run of one repeated piece) and O(log bucket) for the others.
class RankQueue {
 public:
  struct Item {
    int32_t left, right, piece;
    uint32_t size;
  };
  void reset(size_t ranks) {
    if (buckets_.size() < ranks) buckets_.resize(ranks);
    ranks_ = ranks;
    bits0_.assign((ranks + 63) / 64, 0);
    bits1_.assign((bits0_.size() + 63) / 64, 0);
    cur_ = ranks;
    count_ = 0;
  }
  void push(uint32_t rank, const Item& it) {
    Bucket& b = buckets_[rank];
    if (b.head == b.run.size() || it.left > b.run.back().left) {
      b.run.push_back(it);
    } else {
      b.extra.push_back(it);
      std::push_heap(b.extra.begin(), b.extra.end(), later);
    }
    const size_t w = rank >> 6;
    if (!bits0_[w]) bits1_[w >> 6] |= 1ull << (w & 63);
    bits0_[w] |= 1ull << (rank & 63);
    if (rank < cur_) cur_ = rank;
    ++count_;
  }
  bool pop(Item& it) {
    if (!count_) return false;
    Bucket& b = buckets_[cur_];
    const bool in_run = b.head < b.run.size();
    if (in_run && (b.extra.empty() || b.run[b.head].left < b.extra.front().left)) {
      it = b.run[b.head++];
    } else {
      std::pop_heap(b.extra.begin(), b.extra.end(), later);
      it = b.extra.back();
      b.extra.pop_back();
    }
    --count_;
    if (b.head == b.run.size()) {
      b.run.clear();
      b.head = 0;
      if (b.extra.empty()) {
        const size_t w = cur_ >> 6;
        bits0_[w] &= ~(1ull << (cur_ & 63));
        if (!bits0_[w]) bits1_[w >> 6] &= ~(1ull << (w & 63));
        cur_ = count_ ? next_from(cur_) : ranks_;
      }
    }
    return true;
  }

 private:
  struct Bucket {
    std::vector<Item> run, extra;
    size_t head = 0;
  };
  static bool later(const Item& a, const Item& b) { return a.left > b.left; }
  static size_t first_bit(uint64_t x) { return (size_t)__builtin_ctzll(x); }
  // the smallest non-empty rank at or after r
  size_t next_from(size_t r) const {
    size_t w = r >> 6;
    if (w < bits0_.size()) {
      uint64_t x = bits0_[w] & (~0ull << (r & 63));
      if (x) return (w << 6) + first_bit(x);
    }
    const size_t w0 = w + 1;
    for (size_t v = w0 >> 6; v < bits1_.size(); ++v) {
      uint64_t y = bits1_[v];
      if (v == (w0 >> 6)) y &= ~0ull << (w0 & 63);
      if (y) {
        const size_t ww = (v << 6) + first_bit(y);
        return (ww << 6) + first_bit(bits0_[ww]);
      }
    }
    return ranks_;
  }
  std::vector<Bucket> buckets_;
  std::vector<uint64_t> bits0_, bits1_;
  size_t ranks_ = 0, cur_ = 0, count_ = 0;
};

class BPE {
 public:
  // pieces[i] has id i; types are ModelProto.SentencePiece.Type values. Throws invalid_argument
  // on inconsistent tables (the Python side validates first; this guards direct calls).
  BPE(std::vector<U32> pieces, std::vector<double> scores, std::vector<int> types, int32_t unk_id,
      std::vector<int32_t> byte_ids);

  // HF semantics: pieces[i] is the token of id i (one token per id), merges holds
  // (left id, right id, rank, new id) per merge (a repeated pair: the one given last wins,
  // as in HF), byte_ids 256 ids (-1: that <0xXX> token is missing) or empty without byte
  // fallback, unk_id -1 without an unknown token. Ids and merges below PairTable::MAX_ID.
  struct HfMerge {
    int32_t left, right, rank, merged;
  };
  BPE(std::vector<U32> pieces, const std::vector<HfMerge>& merges, int32_t unk_id, std::vector<int32_t> byte_ids,
      bool fuse_unk);

  size_t size() const { return pieces_.size(); }

  // An agenda entry of merge_ranked: key = rank << 32 | left symbol.
  struct Entry {
    uint64_t key;
    int32_t right;
    int32_t piece;
    uint32_t size;
  };
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
    std::vector<Entry> agenda;
    RankQueue queue;
    std::unordered_map<int32_t, uint32_t> rev;
    std::vector<std::pair<uint32_t, uint32_t>> stack;
    std::vector<Token> part;
  };

  // (constants of the merge; tokenize is declared below)
  //: Symbol sequences of at least this many use the RankQueue, shorter ones one binary heap.
  static constexpr size_t LONG_RUN = 256;
  //: Parts of at most this many characters use merge_small.
  static constexpr size_t SMALL_RUN = 64;

  // A bounded memo of merged parts: direct-mapped slots over two arenas, emptied when
  // full. The model's own memo serves single calls (behind a lock, as Python threads may
  // share a model); a batch gives each of its threads a memo of its own, so that threads
  // never wait for each other.
  class PartMemo {
   public:
    explicit PartMemo(bool locked = true) : locked_(locked) {}
    bool get(const uint32_t* p, size_t n, uint64_t h, std::vector<Token>& out) {
      std::unique_lock<std::mutex> lock(mu_, std::defer_lock);
      if (locked_) lock.lock();
      if (slots_.empty()) return false;
      const Slot& s = slots_[h & (SLOTS - 1)];
      if (s.hash != h || s.key_len != n || std::memcmp(keys_.data() + s.key_off, p, n * 4) != 0) return false;
      out.insert(out.end(), toks_.begin() + s.tok_off, toks_.begin() + s.tok_off + s.tok_len);
      return true;
    }
    void put(const uint32_t* p, size_t n, uint64_t h, const std::vector<Token>& toks) {
      std::unique_lock<std::mutex> lock(mu_, std::defer_lock);
      if (locked_) lock.lock();
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
    bool locked_;
    std::mutex mu_;
    std::vector<Slot> slots_;
    std::vector<uint32_t> keys_;
    std::vector<Token> toks_;
  };

  // Tokens of text, code-point offsets. Without UNUSED and USER_DEFINED pieces the text is
  // cut before every U+2581 whose preceding character never precedes U+2581 inside a
  // piece: no merge spans such a cut, so the parts (about words) merge independently and
  // repeated ones are merged once per call. memo: where parts are memoised (nullptr: the
  // model's own, locked memo).
  void tokenize(const uint32_t* text, size_t n, std::vector<Token>& out, PartMemo* memo = nullptr) const;

 private:
  //: Parts of at most this many code points are memoised (across calls, bounded).
  static constexpr size_t MEMO_PART = 48;

  void append_part(std::vector<Token>& out, const std::vector<Token>& part, size_t start, bool fuse) const;
  // HF semantics: the whole of text as one sequence of symbols (merge_word + merge_all).
  void merge_hf(const uint32_t* text, size_t n, std::vector<Token>& out, Scratch& w) const;
  // merge_word's symbols of text, each passed to add(id, start, end), which returns false
  // to stop (then so does this).
  template <class Add>
  bool hf_symbols(const uint32_t* text, size_t n, Add&& add) const {
    bool unk = false;  // a pending unknown run [unk_start, unk_end)
    uint32_t unk_start = 0, unk_end = 0;
    for (size_t k = 0; k < n; ++k) {
      const uint32_t c = text[k];
      const int32_t id = hf_char_id(c);
      if (id >= 0) {
        if (unk && !add(unk_id_, unk_start, unk_end)) return false;
        unk = false;
        if (!add(id, (uint32_t)k, (uint32_t)(k + 1))) return false;
        continue;
      }
      if (!byte_ids_.empty()) {
        uint8_t b[4];
        const int len = utf8_of(c, b);
        bool all = true;
        for (int q = 0; q < len; ++q) all = all && byte_ids_[b[q]] >= 0;
        if (all) {  // the pending unknown run stays open (merge_word's `continue`)
          for (int q = 0; q < len; ++q)
            if (!add(byte_ids_[b[q]], (uint32_t)k, (uint32_t)(k + 1))) return false;
          continue;
        }
      }
      if (unk_id_ < 0) continue;  // no unknown token: HF drops the character
      if (unk && fuse_unk_) {
        unk_end = (uint32_t)(k + 1);
        continue;
      }
      if (unk && !add(unk_id_, unk_start, unk_end)) return false;
      unk = true;
      unk_start = (uint32_t)k;
      unk_end = (uint32_t)(k + 1);
    }
    return !unk || add(unk_id_, unk_start, unk_end);
  }
  int32_t hf_char_id(uint32_t c) const {
    if (c < 0x10000) return single_id_[c];
    return merge_.get(&c, 1);
  }
  // HF semantics: 0 a character that is a token, 1 byte tokens or unknown that no merge
  // takes (cut on both sides), 2 no cut beside it.
  uint8_t hf_class(uint32_t c) const {
    if (c < 0x10000) return hf_class_[c];
    return hf_class_of(c);
  }
  uint8_t hf_class_of(uint32_t c) const;
  bool hf_cut(uint32_t a, uint32_t b) const {
    const uint8_t x = hf_class(a), y = hf_class(b);
    if (x == 2 || y == 2) return false;
    return x || y || !may_join(a, b);
  }
  // (rank, merged piece) of the pair of symbol ids l, r; false if they do not merge
  bool pair_lookup(int32_t l, int32_t r, uint32_t& rank, int32_t& piece) const {
    const int32_t v = pairs_.get(l, r);
    if (v < 0) return false;
    if (hf_) {
      rank = hf_rank_[(size_t)v];
      piece = hf_merged_[(size_t)v];
    } else {
      rank = rank_[(size_t)v];
      piece = v;
    }
    return true;
  }

  // _sp_merge: the whole of text as one sequence of symbols.
  void merge(const uint32_t* text, size_t n, std::vector<Token>& out, Scratch& w) const {
    if (hf_)
      merge_hf(text, n, out, w);
    else if (n <= SMALL_RUN && split_ok_ && ranked_)
      merge_small(text, n, out);
    else if (!ranked_)
      merge_heapq(text, n, out, w);
    else
      merge_ranked(text, n, out, w);
  }
  // The initial symbols (user-defined pieces, longest first, else one character each).
  void initial_symbols(const uint32_t* text, size_t n, Scratch& w) const;
  // nxt, prv, alive of the symbols in w (one list, all alive).
  void link_symbols(Scratch& w) const;
  // Up to SMALL_RUN characters without USER_DEFINED/UNUSED pieces or NaN scores: symbols in
  // arrays, each adjacent pair's (rank, piece) kept, the best found by a scan (the lowest
  // rank, leftmost on ties: the same choice as the agenda's), the merged symbol erased.
  // HF semantics: merge_word's symbols; false (out untouched) if they are more than SMALL_RUN.
  bool merge_small(const uint32_t* text, size_t n, std::vector<Token>& out) const;
  // The pair table and a heap of rank << 32 | left (scores without NaN).
  void merge_ranked(const uint32_t* text, size_t n, std::vector<Token>& out, Scratch& w) const {
    out.clear();
    if (n == 0) return;
    initial_symbols(text, n, w);
    run_ranked(text, out, w);
  }
  // merge_ranked over the initial symbols in w.
  void run_ranked(const uint32_t* text, std::vector<Token>& out, Scratch& w) const;
  // CPython's heapq on (-score, left, right, size) tuples, for scores with NaN.
  void merge_heapq(const uint32_t* text, size_t n, std::vector<Token>& out, Scratch& w) const;
  // The symbols left in the linked list, as tokens (UNUSED pieces split back by rev).
  void emit_symbols(const uint32_t* text, std::vector<Token>& out, Scratch& w) const;

  // mergeable piece id of a one-character symbol, -1 if none
  int32_t char_piece(uint32_t c) const {
    if (c < 0x10000) return single_mid_[c];
    return merge_.get(&c, 1);
  }
  // true when some mergeable piece holds a then b (false positives only)
  bool may_join(uint32_t a, uint32_t b) const {
    size_t h = pair_slot(a, b) >> (20 - JOIN_LOG);
    return (join_bits_[h >> 6] >> (h & 63)) & 1;
  }
  static constexpr unsigned JOIN_LOG = 20;

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

  // A filter of the first two characters of the mergeable pieces (HF semantics: of the id
  // pairs that merge): most adjacent pairs of a
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
      for (uint32_t q = s; q < e; ++q)
        emit_byte_pieces(text[q], byte_ids_, [&](int32_t id) { out.push_back(Token{id, s, e}); });
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
  std::vector<uint64_t> pair_bits_, join_bits_;
  std::vector<int32_t> single_mid_;
  std::vector<uint32_t> rank_;  // mergeable piece id -> rank of its score (0 = highest)
  PairTable pairs_;
  size_t ranks_ = 0;  // number of distinct ranks
  bool has_nan_ = false;
  bool ranked_ = false;  // no NaN score and fewer than PairTable::MAX_ID pieces: merge_ranked
  size_t max_len_ = 0, user_max_ = 0;
  bool has_unused_ = false, split_ok_ = false;
  bool hf_ = false;           // HF semantics (merges by rank)
  bool fuse_parts_ = false;   // unknown tokens of adjacent parts fuse (see tokenize)
  bool fuse_unk_ = false;     // HF: fuse_unk
  // HF: merge k (pairs_ value, merges sorted by rank) -> its rank (equal ranks, equal) and id
  std::vector<uint32_t> hf_rank_;
  std::vector<int32_t> hf_merged_;
  std::vector<uint8_t> hf_class_;  // hf_class of the BMP
  bool hf_isolated_bytes_ = false, hf_isolated_unk_ = false;  // see hf_class_of
  mutable PartMemo memo_{true};
};

}  // namespace spm
}  // namespace tf

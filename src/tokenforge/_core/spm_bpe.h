// SentencePiece's BPE model (bpe_model.cc), natively: the algorithm of the Python type SpmBPE.
//
// USER_DEFINED pieces are matched whole first and never merged; then the adjacent pair
// whose concatenation is a NORMAL/USER_DEFINED/UNUSED piece with the highest score is
// merged, leftmost first, until none is left; an UNUSED piece is split back into the
// two symbols it was last formed from; a symbol that is no piece is <unk> (runs fused)
// or, with byte fallback, its UTF-8 bytes. The reference is PieceBPE._sp_merge in
// models/bpe.py; the heap below is CPython's heapq step for step, so ties (and even NaN
// scores) are broken exactly as there. Text is code points (UTF-32).
//
// HF tokenizers' BPE model (its Word::merge_all) runs on the same symbol machinery when
// the model is built with merges (a converted tokenizer.json: Llama 2, Mistral): every
// character is its vocabulary id, or its <0xXX> byte tokens (byte fallback, when all
// exist), or the unknown token (runs fused with fuse_unk), or is dropped; then the
// adjacent pair of ids with the lowest merge rank is merged, leftmost first on equal
// ranks, until no adjacent pair is a merge. The reference is PieceBPE._hf_merge in
// models/bpe.py.
#pragma once

#include <cstdint>
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

class BPE {
 public:
  // pieces[i] has id i; types are ModelProto.SentencePiece.Type values. Throws invalid_argument
  // on inconsistent tables (the Python side validates first; this guards direct calls).
  BPE(std::vector<U32> pieces, std::vector<double> scores, std::vector<int> types, int32_t unk_id,
      std::vector<int32_t> byte_ids);

  // HF semantics: pieces[i] is the token of id i (one token per id), merges holds
  // (left id, right id, rank, new id) per merge, byte_ids 256 ids (-1: that <0xXX> token is
  // missing) or empty without byte fallback, unk_id -1 without an unknown token.
  struct HfMerge {
    int32_t left, right, rank, merged;
  };
  BPE(std::vector<U32> pieces, const std::vector<HfMerge>& merges, int32_t unk_id, std::vector<int32_t> byte_ids,
      bool fuse_unk);

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

  // HF's Word::merge_all over the symbols of text (HF semantics).
  void merge_hf(const uint32_t* text, size_t n, std::vector<Token>& out, Scratch& w) const;
  int32_t hf_char_id(uint32_t c) const {
    if (c < 0x10000) return single_id_[c];
    return merge_.get(&c, 1);
  }

  // _sp_merge: the whole of text as one sequence of symbols.
  void merge(const uint32_t* text, size_t n, std::vector<Token>& out, Scratch& w) const;

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
  std::vector<uint64_t> pair_bits_;
  size_t max_len_ = 0, user_max_ = 0;
  bool has_unused_ = false, split_ok_ = false;
  bool hf_ = false;           // HF semantics (merges by rank)
  bool fuse_parts_ = false;   // unknown tokens of adjacent parts fuse (see tokenize)
  // (left id, right id) -> (rank, new id): open addressing, at most half full
  struct HfSlot {
    uint64_t key = ~0ull;
    int32_t rank = -1, merged = -1;
  };
  std::vector<HfSlot> hf_pairs_;
  const HfSlot* hf_pair(int32_t a, int32_t b) const {
    const uint64_t key = (uint64_t)(uint32_t)a << 32 | (uint32_t)b;
    const size_t mask = hf_pairs_.size() - 1;
    for (size_t s = (size_t)mix64(key) & mask;; s = (s + 1) & mask) {
      const HfSlot& x = hf_pairs_[s];
      if (x.key == key) return &x;
      if (x.key == ~0ull) return nullptr;
    }
  }
  CharSet before_ws_;  // characters c with c + U+2581 inside a mergeable piece
  mutable PartMemo memo_{true};
};

}  // namespace spm
}  // namespace tf

// Encoding with a byte-level BPE vocabulary (the algorithm of CoreBPE, tiktoken's CoreBPE):
// scan a UTF-8 text into pieces with one of the named scanners, look each piece up whole,
// and merge the others (array/heap merge, or the backtracking encoder for long pieces).
//
// Plain C++17; the Python type lives in binding.cpp.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "backtrack.h"
#include "bpe.h"
#include "pair_bpe.h"
#include "scan.h"

namespace tf {

// Memo of pieces that needed merging: piece bytes -> ids. Direct-mapped, keys and ids in
// two flat arenas, so a miss costs one probe and a put no malloc. Bounded: it starts over
// when the arenas are full. One per thread and vocabulary (thread_piece_cache), kept
// across calls: the identifiers of a code base or the names of a story recur from one
// document to the next. A hit compares the whole key, so it cannot change an id.
class PieceCache {
 public:
  // cap_pow2 slots; the stored keys and ids are bounded by max_key_bytes and max_ids (then
  // the cache starts over).
  explicit PieceCache(size_t cap_pow2 = 1 << 13, size_t max_key_bytes = 1 << 20, size_t max_ids = 1 << 18)
      : slots_(cap_pow2), mask_(cap_pow2 - 1), max_key_bytes_(max_key_bytes), max_ids_(max_ids) {}
  void clear() {
    keys_.clear();
    ids_.clear();
    for (auto& s : slots_) s.hash = 0;
  }
  bool get(const uint8_t* p, size_t n, uint64_t h, std::vector<uint32_t>& out) const {
    const Slot& s = slots_[h & mask_];
    if (s.hash != h || s.key_len != n || std::memcmp(keys_.data() + s.key_off, p, n) != 0) return false;
    out.insert(out.end(), ids_.begin() + s.ids_off, ids_.begin() + s.ids_off + s.ids_len);
    return true;
  }
  void put(const uint8_t* p, size_t n, uint64_t h, const uint32_t* ids, size_t k) {
    if (keys_.size() + n > max_key_bytes_ || ids_.size() + k > max_ids_) {  // bounded (~2.3 MB by default): start over
      keys_.clear();
      ids_.clear();
      for (auto& s : slots_) s.hash = 0;
    }
    Slot& s = slots_[h & mask_];
    s.hash = h;
    s.key_off = (uint32_t)keys_.size();
    s.key_len = (uint32_t)n;
    s.ids_off = (uint32_t)ids_.size();
    s.ids_len = (uint32_t)k;
    keys_.insert(keys_.end(), p, p + n);
    ids_.insert(ids_.end(), ids, ids + k);
  }

 private:
  struct Slot {
    uint64_t hash = 0;
    uint32_t key_off = 0, key_len = 0, ids_off = 0, ids_len = 0;
  };
  std::vector<Slot> slots_;
  size_t mask_;
  size_t max_key_bytes_, max_ids_;
  std::vector<uint8_t> keys_;
  std::vector<uint32_t> ids_;
};

//: Pieces up to this long that need merging are memoised (identifiers, names, CJK words).
constexpr size_t CACHE_MAX_PIECE = 15;
//: Pieces at least this long use the linear backtracking encoder instead of the heap; the
//: shorter ones merge (bpe_merge: the array scan, then the block-minimum merge), which is
//: faster on them: the backtracker pays a trie walk and a pair check per token.
constexpr size_t BACKTRACK_MIN_PIECE = MEDIUM_PIECE + 1;

// The backtracker needs a trie of the vocabulary (30-220 ms to build, 13-54 MB). It is
// built only once long pieces have cost enough to pay for it (ski rental): after
// BUILD_AFTER_BYTES of pieces of BACKTRACK_MIN_PIECE+ bytes went through the array/heap
// merge, or at once for a single piece of HUGE_PIECE+ bytes, where the heap is slowest.
constexpr size_t BUILD_AFTER_BYTES = 4 << 20;
constexpr size_t HUGE_PIECE = 1 << 16;

// One per vocabulary (owned by the object that owns the Vocab): thread-safe, built once.
struct LazyBacktracker {
  std::once_flag once;
  std::atomic<const Backtracker*> built{nullptr};
  std::atomic<size_t> long_bytes{0};
  Backtracker* owned = nullptr;
  const Backtracker& get(const Vocab& v) {
    std::call_once(once, [&] {
      owned = new Backtracker(v);
      built.store(owned, std::memory_order_release);
    });
    return *owned;
  }
  const uint64_t generation;  // tells vocabularies apart (thread_piece_cache), even at one address
  LazyBacktracker();
  LazyBacktracker(const LazyBacktracker&) = delete;
  LazyBacktracker& operator=(const LazyBacktracker&) = delete;
  ~LazyBacktracker() { delete owned; }
};

// The calling thread's piece cache for the vocabulary that owns `lazy` (the last two
// vocabularies a thread used keep theirs).
PieceCache& thread_piece_cache(const LazyBacktracker& lazy);

// Ids of one piece p[0:m] that is not a token (m >= 1), by merging, appended to out: by
// rank, or by merge priority when `pairs` is given (pair_bpe.h).
void merge_piece(const Vocab& v, LazyBacktracker& lazy, const uint8_t* p, size_t m, std::vector<uint32_t>& out,
                 const PairMerges* pairs = nullptr);

// Ids of the UTF-8 text s[0:n], scanned with pat, appended to out (cache: per thread).
// `pairs`: merge by priority instead of rank; `whole`: a piece that is a token is that
// token (always so by rank; HF's ignore_merges by priority).
void encode_text(const Vocab& v, LazyBacktracker& lazy, Pattern pat, const uint8_t* s, size_t n,
                 std::vector<uint32_t>& out, PieceCache& cache, const PairMerges* pairs = nullptr,
                 bool whole = true);

}  // namespace tf

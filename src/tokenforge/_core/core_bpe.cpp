#include "core_bpe.h"

namespace tf {

namespace {
std::atomic<uint64_t> g_vocab_generation{1};
}  // namespace

LazyBacktracker::LazyBacktracker() : generation(g_vocab_generation.fetch_add(1)) {}

PieceCache& thread_piece_cache(const LazyBacktracker& lazy) {
  struct Entry {
    uint64_t generation = 0;
    PieceCache cache;
  };
  thread_local Entry entries[2];
  thread_local unsigned last = 0;
  if (entries[last].generation == lazy.generation) return entries[last].cache;
  unsigned other = last ^ 1u;
  if (entries[other].generation != lazy.generation) {  // a third vocabulary: reuse the older entry
    entries[other].cache.clear();
    entries[other].generation = lazy.generation;
  }
  last = other;
  return entries[other].cache;
}

namespace {

// By rank: the array/block merge, or the backtracker for long pieces once it pays.
void rank_merge_piece(const Vocab& v, LazyBacktracker& lazy, const uint8_t* p, size_t m, std::vector<uint32_t>& out) {
  if (m < BACKTRACK_MIN_PIECE) {
    bpe_merge(v, p, m, out);
    return;
  }
  const Backtracker* bt = lazy.built.load(std::memory_order_acquire);
  if (!bt) {
    size_t seen = lazy.long_bytes.fetch_add(m, std::memory_order_relaxed) + m;
    if (seen < BUILD_AFTER_BYTES && m < HUGE_PIECE) {
      bpe_merge(v, p, m, out);
      return;
    }
    bt = &lazy.get(v);
  }
  bt->encode(p, m, out);
}

}  // namespace

void merge_piece(const Vocab& v, LazyBacktracker& lazy, const uint8_t* p, size_t m, std::vector<uint32_t>& out,
                 const PairMerges* pairs) {
  if (!pairs) {
    rank_merge_piece(v, lazy, p, m, out);
    return;
  }
  if (pairs->rank_ordered()) {  // rank first, kept when certified (pair_bpe.h)
    const size_t before = out.size();
    rank_merge_piece(v, lazy, p, m, out);
    if (pairs->certify(v, p, m, out.data() + before, out.size() - before)) return;
    out.resize(before);
  }
  pair_merge(v, *pairs, p, m, out);
}

void encode_text(const Vocab& v, LazyBacktracker& lazy, Pattern pat, const uint8_t* s, size_t n,
                 std::vector<uint32_t>& out, PieceCache& cache, const PairMerges* pairs, bool whole) {
  Text t{s, n};
  size_t i = 0;
  while (i < n) {
    size_t e = next_piece(pat, t, i);
    if (e <= i) e = i + 1;  // cannot happen; guards against an infinite loop
    const uint8_t* p = s + i;
    size_t m = e - i;
    uint32_t r = whole ? v.rank(p, m) : Vocab::NONE;
    if (r != Vocab::NONE) {
      out.push_back(r);
    } else if (m <= CACHE_MAX_PIECE) {
      uint64_t h = hash_bytes(p, m) | 1;
      if (!cache.get(p, m, h, out)) {
        size_t before = out.size();
        merge_piece(v, lazy, p, m, out, pairs);
        cache.put(p, m, h, out.data() + before, out.size() - before);
      }
    } else {
      merge_piece(v, lazy, p, m, out, pairs);
    }
    i = e;
  }
}

}  // namespace tf

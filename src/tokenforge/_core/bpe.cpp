#include "bpe.h"

#include <algorithm>
#include <functional>

namespace tf {

namespace {

void merge_short(const Vocab& v, const uint8_t* p, size_t n, std::vector<uint32_t>& out) {
  // starts[k] = start of part k (starts[parts] = n); part[k] = rank of part k;
  // ranks[k] = rank of the merge of parts k and k+1 (NONE if it is not a token).
  uint32_t starts[SHORT_PIECE + 1];
  uint32_t part[SHORT_PIECE];
  uint32_t ranks[SHORT_PIECE];
  size_t parts = n;
  for (size_t k = 0; k <= n; ++k) starts[k] = (uint32_t)k;
  for (size_t k = 0; k < n; ++k) part[k] = v.byte_rank(p[k]);
  for (size_t k = 0; k + 1 < parts; ++k) ranks[k] = v.rank(p + k, 2);
  while (parts > 1) {
    uint32_t best = Vocab::NONE;
    size_t bi = 0;
    for (size_t k = 0; k + 1 < parts; ++k) {
      if (ranks[k] < best) { best = ranks[k]; bi = k; }
    }
    if (best == Vocab::NONE) break;
    // merge part bi with bi+1: drop starts[bi+1] and the rank of the merged pair
    part[bi] = best;
    for (size_t k = bi + 1; k < parts; ++k) starts[k] = starts[k + 1];
    for (size_t k = bi + 1; k + 1 < parts; ++k) part[k] = part[k + 1];
    --parts;
    for (size_t k = bi + 1; k + 1 < parts; ++k) ranks[k] = ranks[k + 1];
    if (bi + 1 < parts) ranks[bi] = v.rank(p + starts[bi], starts[bi + 2] - starts[bi]);
    else ranks[bi] = Vocab::NONE;
    if (bi > 0) ranks[bi - 1] = v.rank(p + starts[bi - 1], starts[bi + 1] - starts[bi - 1]);
  }
  out.insert(out.end(), part, part + parts);
}

struct Cand {
  uint32_t rank;
  uint32_t start;
  uint32_t end;  // end of the right part when the candidate was made
  bool operator>(const Cand& o) const { return rank != o.rank ? rank > o.rank : start > o.start; }
};

void merge_long(const Vocab& v, const uint8_t* p, size_t n, std::vector<uint32_t>& out) {
  // Scratch space reused across calls on the same thread: no allocation per piece.
  thread_local std::vector<uint32_t> nxt, prv, part;
  thread_local std::vector<Cand> heap;
  nxt.resize(n);
  prv.resize(n);
  part.resize(n);
  for (size_t i = 0; i < n; ++i) part[i] = v.byte_rank(p[i]);
  heap.clear();
  for (size_t i = 0; i < n; ++i) { nxt[i] = (uint32_t)(i + 1); prv[i] = (uint32_t)(i - 1); }
  const uint32_t DEAD = Vocab::NONE;
  for (size_t i = 0; i + 1 < n; ++i) {
    uint32_t r = v.rank(p + i, 2);
    if (r != Vocab::NONE) heap.push_back(Cand{r, (uint32_t)i, (uint32_t)(i + 2)});
  }
  auto cmp = std::greater<Cand>();
  std::make_heap(heap.begin(), heap.end(), cmp);
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), cmp);
    Cand c = heap.back();
    heap.pop_back();
    uint32_t i = c.start;
    uint32_t j = nxt[i];
    if (j == DEAD || j >= n || nxt[j] != c.end) continue;  // stale
    uint32_t end = c.end;
    part[i] = c.rank;
    nxt[i] = end;
    nxt[j] = DEAD;
    if (end < n) prv[end] = i;
    if (i > 0) {
      uint32_t pi = prv[i];
      uint32_t r = v.rank(p + pi, end - pi);
      if (r != Vocab::NONE) { heap.push_back(Cand{r, pi, end}); std::push_heap(heap.begin(), heap.end(), cmp); }
    }
    if (end < n) {
      uint32_t e2 = nxt[end];
      uint32_t r = v.rank(p + i, e2 - i);
      if (r != Vocab::NONE) { heap.push_back(Cand{r, i, e2}); std::push_heap(heap.begin(), heap.end(), cmp); }
    }
  }
  for (uint32_t i = 0; i < n; i = nxt[i]) out.push_back(part[i]);
}

}  // namespace

void bpe_merge(const Vocab& v, const uint8_t* p, size_t n, std::vector<uint32_t>& out) {
  if (n <= SHORT_PIECE) merge_short(v, p, n, out);
  else merge_long(v, p, n, out);
}

void bpe_encode_piece(const Vocab& v, const uint8_t* p, size_t n, std::vector<uint32_t>& out) {
  uint32_t r = v.rank(p, n);
  if (r != Vocab::NONE) { out.push_back(r); return; }
  bpe_merge(v, p, n, out);
}

}  // namespace tf

#include "bpe.h"

#include <cstring>

#include <algorithm>
#include <functional>
#include <utility>

namespace tf {

namespace {

void merge_short(const Vocab& v, const uint8_t* p, size_t n, std::vector<uint32_t>& out) {
  // Three parallel arrays (a part's start, its rank, the rank of merging it with the next
  // part, NONE if that is not a token): the lowest pair rank is found by a scan over one
  // contiguous array of 32-bit ranks (the compiler vectorises it), then its first
  // occurrence (leftmost wins ties); a merge removes one entry from each array.
  uint32_t start[SHORT_PIECE + 1], self[SHORT_PIECE], pair[SHORT_PIECE];
  for (size_t k = 0; k < n; ++k) { start[k] = (uint32_t)k; self[k] = v.byte_rank(p[k]); }
  start[n] = (uint32_t)n;
  for (size_t k = 0; k + 1 < n; ++k) pair[k] = v.rank(p + k, 2);
  size_t count = n;
  while (count > 1) {
    const size_t pairs = count - 1;
    uint32_t best = Vocab::NONE;
    for (size_t k = 0; k < pairs; ++k) best = pair[k] < best ? pair[k] : best;
    if (best == Vocab::NONE) break;
    size_t bi = 0;
    while (pair[bi] != best) ++bi;
    self[bi] = best;
    // remove part bi + 1 (and the pair starting at it)
    std::memmove(&self[bi + 1], &self[bi + 2], (count - bi - 2) * sizeof(uint32_t));
    if (bi + 2 < pairs) std::memmove(&pair[bi + 1], &pair[bi + 2], (pairs - bi - 2) * sizeof(uint32_t));
    std::memmove(&start[bi + 1], &start[bi + 2], (count - bi - 1) * sizeof(uint32_t));
    --count;
    if (bi + 1 < count) v.prefetch(p + start[bi], start[bi + 2] - start[bi]);
    if (bi > 0) v.prefetch(p + start[bi - 1], start[bi + 1] - start[bi - 1]);
    pair[bi] = bi + 1 < count ? v.rank(p + start[bi], start[bi + 2] - start[bi]) : Vocab::NONE;
    if (bi > 0) pair[bi - 1] = v.rank(p + start[bi - 1], start[bi + 1] - start[bi - 1]);
  }
  out.insert(out.end(), self, self + count);
}

// The block-minimum merge, for pieces of up to MEDIUM_PIECE bytes (CJK clauses, text
// without spaces, identifiers): every part keeps the position of its first byte, parts
// are a linked list, and pr[i] is the rank of merging the part at i with the next one
// (NONE when that is not a token or i starts no part). The lowest rank is found from
// one minimum per block of MERGE_BLOCK positions (leftmost block holding it, then the
// leftmost position in it: tiktoken's tie rule), and a merge rescans only the blocks it
// changed. O(n / 16 + 16) per merge with no memmove and no heap; the two rank lookups
// per merge are the same as the array scan's. All scratch space is on the stack.
constexpr size_t MERGE_BLOCK = 16;

void merge_blocks(const Vocab& v, const uint8_t* p, size_t n, std::vector<uint32_t>& out) {
  constexpr uint32_t NONE = Vocab::NONE;
  uint32_t pr[MEDIUM_PIECE + MERGE_BLOCK], self[MEDIUM_PIECE];
  uint16_t nxt[MEDIUM_PIECE], prv[MEDIUM_PIECE];
  uint32_t bmin[MEDIUM_PIECE / MERGE_BLOCK + 1];
  const size_t nb = (n + MERGE_BLOCK - 1) / MERGE_BLOCK;
  // The first parts: single bytes, and atomic characters and byte pairs (Vocab::atom_at,
  // pair_atom_at) already whole, which saves most merges and lookups of CJK text and
  // some of everything else. n itself (<= MEDIUM_PIECE < 65536)
  // marks the end of the list.
  size_t prev = 0;
  for (size_t i = 0; i < n;) {
    size_t len = 1;
    uint32_t r = p[i] < 0xC2 ? NONE : v.atom_at(p, i, n, &len);
    if (r == NONE && i + 1 < n) {
      r = v.pair_atom_at(p, i, n);
      if (r != NONE) len = 2;
    }
    self[i] = r != NONE ? r : v.byte_rank(p[i]);
    pr[i + 1] = NONE;  // positions inside a part (len <= 3; pr has room past n)
    pr[i + 2] = NONE;
    prv[i] = (uint16_t)prev;
    nxt[i] = (uint16_t)(i + len);
    prev = i;
    i += len;
  }
  for (size_t i = 0; i < n; i = nxt[i]) {
    const size_t e = nxt[i];
    pr[i] = e < n ? v.merge_rank(p + i, (size_t)nxt[e] - i) : NONE;
  }
  for (size_t i = n; i < nb * MERGE_BLOCK; ++i) pr[i] = NONE;
  auto block_min = [&](size_t b) {
    const uint32_t* q = pr + b * MERGE_BLOCK;
    uint32_t m = q[0];
    for (size_t k = 1; k < MERGE_BLOCK; ++k) m = q[k] < m ? q[k] : m;
    bmin[b] = m;
  };
  for (size_t b = 0; b < nb; ++b) block_min(b);
  for (;;) {
    uint32_t best = NONE;
    for (size_t b = 0; b < nb; ++b) best = bmin[b] < best ? bmin[b] : best;
    if (best == NONE) break;
    size_t b = 0;
    while (bmin[b] != best) ++b;
    size_t i = b * MERGE_BLOCK;
    while (pr[i] != best) ++i;
    const size_t j = nxt[i], e = nxt[j];  // merge parts [i, j) and [j, e)
    const size_t h = i > 0 ? prv[i] : i;   // the part before i, if any
    if (e < n) v.prefetch(p + i, (size_t)nxt[e] - i);
    if (i > 0) v.prefetch(p + h, e - h);
    self[i] = best;
    pr[j] = NONE;
    nxt[i] = (uint16_t)e;
    if (e < n) prv[e] = (uint16_t)i;
    pr[i] = e < n ? v.merge_rank(p + i, (size_t)nxt[e] - i) : NONE;
    size_t bh = b;
    if (i > 0) {
      pr[h] = v.merge_rank(p + h, e - h);
      bh = h / MERGE_BLOCK;
    }
    // every changed rank is written: now the blocks they are in (h <= i < j)
    const size_t bj = j / MERGE_BLOCK;
    block_min(b);
    if (bj != b) block_min(bj);
    if (bh != b) block_min(bh);
  }
  for (size_t i = 0; i < n; i = nxt[i]) out.push_back(self[i]);
}

struct Cand {
  uint32_t rank;
  uint32_t start;
  uint32_t end;  // end of the right part when the candidate was made
  bool operator>(const Cand& o) const { return rank != o.rank ? rank > o.rank : start > o.start; }
};

// The heap merge: a priority queue of adjacent pairs (lowest rank, then leftmost) over a
// linked list of parts, O(n log n) where the array scan is O(n^2). Only tokens of rank <
// bound take part. When `last` is given it receives the last merge done (its two parts),
// or stays (NONE, NONE) when nothing merged.
void merge_heap(const Vocab& v, const uint8_t* p, size_t n, uint32_t bound, std::vector<uint32_t>& out,
                std::pair<uint32_t, uint32_t>* last) {
  // Scratch space reused across calls on the same thread: no allocation per piece.
  thread_local std::vector<uint32_t> nxt, prv, part;
  thread_local std::vector<Cand> heap;
  auto rank_of = [&](const uint8_t* q, size_t m) {
    uint32_t r = v.rank(q, m);
    return r < bound ? r : Vocab::NONE;
  };
  nxt.resize(n);
  prv.resize(n);
  part.resize(n);
  for (size_t i = 0; i < n; ++i) part[i] = v.byte_rank(p[i]);
  heap.clear();
  for (size_t i = 0; i < n; ++i) { nxt[i] = (uint32_t)(i + 1); prv[i] = (uint32_t)(i - 1); }
  const uint32_t DEAD = Vocab::NONE;
  for (size_t i = 0; i + 1 < n; ++i) {
    uint32_t r = rank_of(p + i, 2);
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
    if (last) *last = {part[i], part[j]};
    part[i] = c.rank;
    nxt[i] = end;
    nxt[j] = DEAD;
    if (end < n) prv[end] = i;
    if (i > 0) {
      uint32_t pi = prv[i];
      uint32_t r = rank_of(p + pi, end - pi);
      if (r != Vocab::NONE) { heap.push_back(Cand{r, pi, end}); std::push_heap(heap.begin(), heap.end(), cmp); }
    }
    if (end < n) {
      uint32_t e2 = nxt[end];
      uint32_t r = rank_of(p + i, e2 - i);
      if (r != Vocab::NONE) { heap.push_back(Cand{r, i, e2}); std::push_heap(heap.begin(), heap.end(), cmp); }
    }
  }
  for (uint32_t i = 0; i < n; i = nxt[i]) out.push_back(part[i]);
}

}  // namespace

// True when p[0:n] holds a byte that can start a 2- or 3-byte character (an atom).
static inline bool has_multibyte(const uint8_t* p, size_t n) {
  uint8_t any = 0;
  for (size_t i = 0; i < n; ++i) any |= (uint8_t)(p[i] >= 0xC2);
  return any != 0;
}

void bpe_merge(const Vocab& v, const uint8_t* p, size_t n, std::vector<uint32_t>& out) {
  if (n <= TINY_PIECE && (n < 4 || !has_multibyte(p, n))) merge_short(v, p, n, out);
  else if (n <= MEDIUM_PIECE) merge_blocks(v, p, n, out);
  else merge_heap(v, p, n, Vocab::NONE, out, nullptr);
}

bool bpe_merge_last(const Vocab& v, const uint8_t* p, size_t n, uint32_t* whole, uint32_t* left,
                    uint32_t* right) {
  thread_local std::vector<uint32_t> parts;
  parts.clear();
  std::pair<uint32_t, uint32_t> last{Vocab::NONE, Vocab::NONE};
  merge_heap(v, p, n, Vocab::NONE, parts, &last);
  if (parts.size() != 1 || last.first == Vocab::NONE) return false;
  *whole = parts[0];
  *left = last.first;
  *right = last.second;
  return true;
}

void bpe_merge_below(const Vocab& v, const uint8_t* p, size_t n, uint32_t bound, std::vector<uint32_t>& out) {
  if (n > SHORT_PIECE) {  // long merges (some HF files have them): the heap, not O(n^2)
    merge_heap(v, p, n, bound, out, nullptr);
    return;
  }
  auto below = [&](uint32_t r) { return r < bound ? r : Vocab::NONE; };
  std::vector<uint32_t> start(n + 1), self(n);
  for (size_t k = 0; k <= n; ++k) start[k] = (uint32_t)k;
  for (size_t k = 0; k < n; ++k) self[k] = v.byte_rank(p[k]);
  size_t count = n;
  while (count > 1) {
    uint32_t best = Vocab::NONE;
    size_t bi = 0;
    for (size_t k = 0; k + 1 < count; ++k) {
      uint32_t r = below(v.rank(p + start[k], start[k + 2] - start[k]));
      if (r < best) { best = r; bi = k; }
    }
    if (best == Vocab::NONE) break;
    self[bi] = best;
    start.erase(start.begin() + (long)bi + 1);
    self.erase(self.begin() + (long)bi + 1);
    --count;
  }
  out.insert(out.end(), self.begin(), self.begin() + (long)count);
}

void bpe_encode_piece(const Vocab& v, const uint8_t* p, size_t n, std::vector<uint32_t>& out) {
  uint32_t r = v.rank(p, n);
  if (r != Vocab::NONE) { out.push_back(r); return; }
  bpe_merge(v, p, n, out);
}

}  // namespace tf

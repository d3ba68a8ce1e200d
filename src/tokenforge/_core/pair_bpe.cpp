#include "pair_bpe.h"

#include <algorithm>
#include <cstring>
#include <functional>

namespace tf {

void PairMerges::finish(const Vocab& v) {
  size_t cap = 16;
  while (cap * 3 < pending_.size() * 5 + 16) cap <<= 1;  // at most 60% full
  slots_.assign(cap, Slot{EMPTY, 0, 0});
  mask_ = cap - 1;
  count_ = 0;
  for (const Slot& e : pending_) {
    size_t i = mix64(e.key) & mask_;
    while (slots_[i].key != EMPTY && slots_[i].key != e.key) i = (i + 1) & mask_;
    if (slots_[i].key == EMPTY) ++count_;
    slots_[i] = e;  // a repeated pair: the later merge wins
  }
  std::vector<Slot>().swap(pending_);
  byte_pairs_.assign(65536, NO_PAIR);
  for (unsigned a = 0; a < 256; ++a) {
    uint32_t ra = v.byte_rank((uint8_t)a);
    if (ra == Vocab::NONE) continue;
    for (unsigned b = 0; b < 256; ++b) {
      uint32_t rb = v.byte_rank((uint8_t)b);
      if (rb != Vocab::NONE) byte_pairs_[a << 8 | b] = find(ra, rb);
    }
  }
}

namespace {

constexpr uint64_t NO_PAIR = PairMerges::NO_PAIR;

void merge_short(const Vocab& v, const PairMerges& m, const uint8_t* p, size_t n, std::vector<uint32_t>& out) {
  // part[k]: the id of part k; pair[k]: the packed merge of parts k and k + 1. The lowest
  // packed key is the lowest merge index; its first occurrence is the leftmost pair.
  uint32_t part[SHORT_PIECE];
  uint64_t pair[SHORT_PIECE];
  for (size_t k = 0; k < n; ++k) part[k] = v.byte_rank(p[k]);
  for (size_t k = 0; k + 1 < n; ++k) pair[k] = m.find_bytes(p[k], p[k + 1]);
  size_t count = n;
  while (count > 1) {
    const size_t pairs = count - 1;
    uint64_t best = NO_PAIR;
    for (size_t k = 0; k < pairs; ++k) best = pair[k] < best ? pair[k] : best;
    if (best == NO_PAIR) break;
    size_t bi = 0;
    while (pair[bi] != best) ++bi;
    part[bi] = (uint32_t)best;
    // remove part bi + 1 (and the pair starting at it)
    std::memmove(&part[bi + 1], &part[bi + 2], (count - bi - 2) * sizeof(uint32_t));
    if (bi + 2 < pairs) std::memmove(&pair[bi + 1], &pair[bi + 2], (pairs - bi - 2) * sizeof(uint64_t));
    --count;
    pair[bi] = bi + 1 < count ? m.find(part[bi], part[bi + 1]) : NO_PAIR;
    if (bi > 0) pair[bi - 1] = m.find(part[bi - 1], part[bi]);
  }
  out.insert(out.end(), part, part + count);
}

struct Cand {
  uint64_t key;  // merge index << 32 | result
  uint32_t start, mid, end;  // the left part [start, mid), the right part [mid, end)
  bool operator>(const Cand& o) const { return key != o.key ? key > o.key : start > o.start; }
};

// The heap merge over a linked list of parts (lowest merge index, then leftmost), for
// long pieces. A candidate is current while its two parts are still [start, mid) and
// [mid, end): a part's id is the token of its bytes, so the same spans are the same pair.
void merge_heap(const Vocab& v, const PairMerges& m, const uint8_t* p, size_t n, std::vector<uint32_t>& out) {
  thread_local std::vector<uint32_t> nxt, prv, part;
  thread_local std::vector<Cand> heap;
  const uint32_t DEAD = 0xFFFFFFFFu;
  nxt.resize(n);
  prv.resize(n);
  part.resize(n);
  for (size_t i = 0; i < n; ++i) {
    part[i] = v.byte_rank(p[i]);
    nxt[i] = (uint32_t)(i + 1);
    prv[i] = (uint32_t)(i - 1);
  }
  heap.clear();
  for (size_t i = 0; i + 1 < n; ++i) {
    uint64_t k = m.find_bytes(p[i], p[i + 1]);
    if (k != NO_PAIR) heap.push_back(Cand{k, (uint32_t)i, (uint32_t)(i + 1), (uint32_t)(i + 2)});
  }
  auto cmp = std::greater<Cand>();
  std::make_heap(heap.begin(), heap.end(), cmp);
  auto push = [&](uint64_t k, uint32_t s, uint32_t mid, uint32_t e) {
    if (k == NO_PAIR) return;
    heap.push_back(Cand{k, s, mid, e});
    std::push_heap(heap.begin(), heap.end(), cmp);
  };
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), cmp);
    Cand c = heap.back();
    heap.pop_back();
    const uint32_t i = c.start, j = c.mid, end = c.end;
    if (nxt[i] != j || j >= n || nxt[j] != end) continue;  // stale (a merged-away part has nxt DEAD)
    part[i] = (uint32_t)c.key;
    nxt[i] = end;
    nxt[j] = DEAD;
    if (end < n) prv[end] = i;
    if (i > 0) push(m.find(part[prv[i]], part[i]), prv[i], i, end);
    if (end < n) push(m.find(part[i], part[end]), i, end, nxt[end]);
  }
  for (uint32_t i = 0; i < n; i = nxt[i]) out.push_back(part[i]);
}

}  // namespace

void pair_merge(const Vocab& v, const PairMerges& m, const uint8_t* p, size_t n, std::vector<uint32_t>& out) {
  if (n <= SHORT_PIECE) merge_short(v, m, p, n, out);
  else merge_heap(v, m, p, n, out);
}

}  // namespace tf

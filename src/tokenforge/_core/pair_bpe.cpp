#include "pair_bpe.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <functional>

namespace tf {

namespace {
std::atomic<uint64_t> g_pair_generation{1};
}  // namespace

PairMerges::PairMerges() : generation_(g_pair_generation.fetch_add(1)) {}

void PairMerges::finish(const Vocab& v) {
  rank_ordered_ = true;  // results in merge order never go down
  for (size_t k = 1; k < pending_.size() && rank_ordered_; ++k)
    if (pending_[k].index < pending_[k - 1].index || pending_[k].result < pending_[k - 1].result) rank_ordered_ = false;
  uint32_t top = 0;
  for (size_t k = 0; k < v.size(); ++k) top = std::max(top, v.entry_rank(k));
  entry_of_.assign((size_t)top + 1, NONE);
  length_.assign((size_t)top + 1, 0);
  for (size_t k = 0; k < v.size(); ++k) {
    const uint32_t id = v.entry_rank(k);
    if (entry_of_[id] != NONE) continue;
    entry_of_[id] = (uint32_t)k;
    length_[id] = v.entry_len(k) < 256 ? (uint8_t)v.entry_len(k) : 0;
  }
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
  // complete_: every split of a token into two tokens is a merge, and some split of each
  // token has both parts of lower id (BPE training makes every token so; the rank merge's
  // shortcuts, bpe.h's atoms, are exact on such ranks, and certify's needs that).
  complete_ = rank_ordered_;
  for (size_t k = 0; k < v.size() && complete_; ++k) {
    const uint8_t* q = v.entry_bytes(k);
    const size_t len = v.entry_len(k);
    const uint32_t t = v.entry_rank(k);
    if (len > Vocab::CHECKED_TOKEN_BYTES) {  // not checked (as bpe.h's atoms): no shortcuts
      complete_ = false;
      break;
    }
    bool made = len < 2;
    for (size_t s = 1; s < len; ++s) {
      const uint32_t a = v.rank(q, s);
      if (a == Vocab::NONE) continue;
      const uint32_t b = v.rank(q + s, len - s);
      if (b == Vocab::NONE) continue;
      if (find(a, b) == NO_PAIR) {
        complete_ = false;
        break;
      }
      made = made || (a < t && b < t);
    }
    complete_ = complete_ && made;
  }
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

// Does merging bytes(a) + bytes(b) by priority give [a, b] (b == NONE: bytes(a) give [a])?
bool PairMerges::merges_back(const Vocab& v, uint32_t a, uint32_t b) const {
  thread_local std::vector<uint8_t> buf;
  thread_local std::vector<uint32_t> got;
  if (a >= entry_of_.size() || entry_of_[a] == NONE) return false;
  if (b != NONE && (b >= entry_of_.size() || entry_of_[b] == NONE)) return false;
  buf.assign(v.entry_bytes(entry_of_[a]), v.entry_bytes(entry_of_[a]) + v.entry_len(entry_of_[a]));
  if (b != NONE) buf.insert(buf.end(), v.entry_bytes(entry_of_[b]), v.entry_bytes(entry_of_[b]) + v.entry_len(entry_of_[b]));
  if (buf.empty()) return false;
  got.clear();
  pair_merge(v, *this, buf.data(), buf.size(), got);
  if (b == NONE) return got.size() == 1 && got[0] == a;
  return got.size() == 2 && got[0] == a && got[1] == b;
}

namespace {
// The per-thread memo of merges_back, direct-mapped: one word a slot, a << 33 | b << 1 | ok
// (ids below 2^31 - 1; b == 2^31 - 1 stands for "no b"; ~0 = empty). It starts over when
// the thread moves to another table (owner + generation).
struct BackMemo {
  static constexpr unsigned BITS = 16;
  const void* owner = nullptr;
  uint64_t generation = 0;
  std::vector<uint64_t> slots;
};
}  // namespace

namespace {
// Does w[0:n] hold some 3-byte string at two places?
inline bool repeats_a_trigram(const uint8_t* w, size_t n) {
  if (n < 4) return false;
  if (n > 40) return true;  // (long pairs: merged, memoised)
  uint32_t g[40];
  for (size_t i = 0; i + 2 < n; ++i) g[i] = (uint32_t)w[i] | (uint32_t)w[i + 1] << 8 | (uint32_t)w[i + 2] << 16;
  for (size_t i = 0; i + 3 < n; ++i)
    for (size_t j = i + 1; j + 2 < n; ++j)
      if (g[i] == g[j]) return true;
  return false;
}
// A filter for the same over a whole piece: false means no 3-byte string is there twice;
// true may be a false alarm (4096 bits, one per hash of a 3-byte string).
inline bool may_repeat_a_trigram(const uint8_t* p, size_t n) {
  if (n < 4) return false;
  if (n > 512) return true;
  uint64_t bits[64] = {};
  uint32_t g = (uint32_t)p[0] << 8 | p[1];
  for (size_t i = 2; i < n; ++i) {
    g = (g << 8 | p[i]) & 0xFFFFFFu;
    const uint32_t h = (g * 0x9E3779B1u) >> 20;
    const uint64_t bit = 1ull << (h & 63);
    if (bits[h >> 6] & bit) return true;
    bits[h >> 6] |= bit;
  }
  return false;
}
}  // namespace

bool PairMerges::certify(const Vocab& v, const uint8_t* p, size_t n, const uint32_t* ids, size_t k) const {
  thread_local BackMemo memo;
  if (memo.owner != this || memo.generation != generation_) {
    memo.owner = this;
    memo.generation = generation_;
    memo.slots.assign((size_t)1 << BackMemo::BITS, ~0ull);
  }
  constexpr uint32_t SOLO = 0x7FFFFFFFu;
  auto ok = [&](uint32_t a, uint32_t b) -> bool {  // b == NONE: a alone
    const uint32_t bk = b == NONE ? SOLO : b;
    if (a >= SOLO || bk > SOLO) return merges_back(v, a, b);  // (no such vocabulary; exact anyway)
    const uint64_t key = (uint64_t)a << 33 | (uint64_t)bk << 1;
    uint64_t& slot = memo.slots[(size_t)(key * 0x9E3779B97F4A7C15ull >> (64 - BackMemo::BITS))];
    if ((slot & ~1ull) == key) return (slot & 1) != 0;
    const bool good = merges_back(v, a, b);
    slot = key | (good ? 1 : 0);
    return good;
  };
  if (k == 1) return (complete_ && n == length_of(v, ids[0]) && !repeats_a_trigram(p, n)) || ok(ids[0], NONE);
  if (!complete_) {
    for (size_t i = 0; i + 1 < k; ++i)
      if ((i == 0 || ids[i] != ids[i - 1] || ids[i + 1] != ids[i]) && !ok(ids[i], ids[i + 1])) return false;
    return true;
  }
  if (!may_repeat_a_trigram(p, n)) return true;  // no pair window can hold one
  // the pair (ids[i], ids[i + 1]) covers p[at : at + la + lb]
  size_t at = 0;
  size_t la = length_of(v, ids[0]);
  for (size_t i = 0; i + 1 < k; ++i) {
    const size_t lb = length_of(v, ids[i + 1]);
    if (la == 0 || lb == 0 || at + la + lb > n) return false;  // (cannot happen: the ids cover p)
    // (a run of one token, the pair just passed)
    if ((i == 0 || ids[i] != ids[i - 1] || ids[i + 1] != ids[i]) && repeats_a_trigram(p + at, la + lb) &&
        !ok(ids[i], ids[i + 1]))
      return false;
    at += la;
    la = lb;
  }
  return at + la == n;
}

}  // namespace tf

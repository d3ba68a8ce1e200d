#include "bpe_train.h"

#include <algorithm>
#include <cstring>
#include <queue>

namespace tf {
namespace bpe_train {

namespace {

inline int64_t freq_of(const uint32_t* rec) { return (int64_t)((uint64_t)rec[1] | ((uint64_t)rec[2] << 32)); }

}  // namespace

std::vector<std::pair<uint32_t, uint32_t>> Merger::run(size_t num_merges) {
  std::vector<std::pair<uint32_t, uint32_t>> merges;
  ticker.start();
  auto poll = [&](bool by_count) { return ticker.poll(merges.size(), by_count); };
  // The first pairs are pairs of bytes: counted in a dense 256 x 256 table, no hashing.
  {
    const uint32_t nwords = (uint32_t)at.size();
    std::vector<int64_t> first(1 << 16, 0);
    std::vector<uint32_t> first_list(1 << 16, PairTable::NONE);
    for (uint32_t idx = 0; idx < nwords; ++idx) {
      if ((idx & 0xFFFF) == 0 && !poll(false)) return merges;
      const uint32_t* rec = &syms[at[idx]];
      const uint32_t n = rec[0];
      const int64_t f = freq_of(rec);
      const uint32_t* w = rec + 3;
      for (uint32_t k = 0; k + 1 < n; ++k) {
        const uint32_t q = (w[k] << 8) | w[k + 1];
        first[q] += f;
        if (first_list[q] == PairTable::NONE) {
          first_list[q] = (uint32_t)lists.size();
          lists.emplace_back();
        }
        auto& l = lists[first_list[q]];
        if (l.empty() || l.back() != idx) l.push_back(idx);
      }
    }
    for (uint32_t q = 0; q < (1u << 16); ++q) {
      if (first_list[q] == PairTable::NONE) continue;
      PairInfo& info = pairs.get(pk(q >> 8, q & 0xFF));
      info.count = first[q];
      info.list = first_list[q];
    }
  }
  std::vector<Entry> init;
  pairs.for_each([&](const PairInfo& s) {
    if (s.count > 0) init.push_back(Entry{s.count, (uint32_t)(s.key >> 32), (uint32_t)s.key});
  });
  std::priority_queue<Entry, std::vector<Entry>, Less> heap(Less{&keys}, std::move(init));

  struct Delta {
    int64_t count;
    uint32_t stamp, list;
  };
  std::vector<Delta> lose_left, lose_right, gain_left, gain_right;
  std::vector<uint32_t> lost_left, lost_right, gained_left, gained_right;
  std::vector<uint32_t> holders;
  uint32_t stamp = 0;
  uint32_t* const base = syms.data();
  const uint64_t* const where = at.data();
  while (merges.size() < num_merges && !heap.empty()) {
    if (!poll(true)) return merges;
    Entry e = heap.top();
    heap.pop();
    uint64_t p = pk(e.a, e.b);
    PairInfo* top = pairs.find(p);
    if (!top || top->count <= 0) continue;  // merged away
    if (top->count != e.count) {  // lower than when pushed: back in at its true count
      heap.push(Entry{top->count, e.a, e.b});
      continue;
    }
    uint32_t a = e.a, b = e.b, nw = (uint32_t)keys.size();
    keys.push_back(keys[a] + keys[b]);
    merges.emplace_back(a, b);
    ++stamp;
    holders.clear();
    if (top->list != PairTable::NONE) {
      holders.swap(lists[top->list]);
      std::vector<uint32_t>().swap(lists[top->list]);  // its memory goes with `holders`
    }
    // A pair that loses occurrences keeps its heap entry, now too high (fixed when popped);
    // a pair that gains them is new (it holds the new token) and is pushed once, at the end.
    // Within the merge the changes add up in arrays indexed by the pair's other token (the
    // pairs changed are (x, a), (b, x), (x, nw) and (nw, x)), then go to the table once.
    if (lose_left.size() <= nw) {
      const size_t cap = std::max<size_t>(2 * (size_t)nw, 512);
      for (auto* v : {&lose_left, &lose_right, &gain_left, &gain_right}) v->resize(cap, Delta{0, 0, 0});
    }
    for (auto* t : {&lost_left, &lost_right, &gained_left, &gained_right}) t->clear();
    auto lose = [&](std::vector<Delta>& side, std::vector<uint32_t>& seen, uint32_t x, int64_t f) {
      Delta& d = side[x];
      if (d.stamp != stamp) { d = Delta{0, stamp, 0}; seen.push_back(x); }
      d.count += f;
    };
    auto gain = [&](std::vector<Delta>& side, std::vector<uint32_t>& seen, uint32_t x, int64_t f, uint32_t idx) {
      Delta& d = side[x];
      if (d.stamp != stamp) {
        d = Delta{0, stamp, (uint32_t)lists.size()};
        lists.emplace_back();
        seen.push_back(x);
      }
      d.count += f;
      auto& l = lists[d.list];
      if (l.empty() || l.back() != idx) l.push_back(idx);
    };
    // Holders are in increasing order: their records are read front to back, each one
    // asked for a few words ahead (the index first, then the record).
    const size_t nh = holders.size();
    const uint32_t* h = holders.data();
    constexpr size_t AHEAD = 8;
    for (size_t i = 0; i < nh; ++i) {
      if ((i & 0xFFF) == 0xFFF && !poll(false)) return merges;
      if (i + 2 * AHEAD < nh) __builtin_prefetch(&where[h[i + 2 * AHEAD]]);
      if (i + AHEAD < nh) __builtin_prefetch(base + where[h[i + AHEAD]]);
      const uint32_t idx = h[i];
      uint32_t* rec = base + where[idx];
      const uint32_t n = rec[0];
      uint32_t* w = rec + 3;
      uint32_t k = 0;
      while (k + 1 < n && !(w[k] == a && w[k + 1] == b)) ++k;
      if (k + 1 >= n) continue;  // a stale entry: the word no longer holds the pair
      const int64_t f = freq_of(rec);
      uint32_t out = k;
      while (k < n) {
        if (k + 1 < n && w[k] == a && w[k + 1] == b) {
          if (out > 0) {  // left neighbour: the symbol already written (maybe a new token)
            uint32_t prev = w[out - 1];
            lose(lose_left, lost_left, prev, f);    // (prev, a)
            gain(gain_left, gained_left, prev, f, idx);  // (prev, nw)
          }
          if (k + 2 < n) {  // right neighbour: the original next symbol
            uint32_t next = w[k + 2];
            lose(lose_right, lost_right, next, f);   // (b, next)
            gain(gain_right, gained_right, next, f, idx);  // (nw, next)
          }
          w[out++] = nw;
          k += 2;
        } else {
          w[out++] = w[k++];
        }
      }
      rec[0] = out;
    }
    // Into the table: the new pairs first (a lost (nw, x) is one of them), then the losses;
    // the merged pair is gone everywhere. Then the new pairs go on the heap.
    for (uint32_t x : gained_left) {
      PairInfo& info = pairs.get(pk(x, nw));
      info.count += gain_left[x].count;
      info.list = gain_left[x].list;
    }
    for (uint32_t x : gained_right) {
      PairInfo& info = pairs.get(pk(nw, x));
      info.count += gain_right[x].count;
      info.list = gain_right[x].list;
    }
    for (uint32_t x : lost_left) pairs.get(pk(x, a)).count -= lose_left[x].count;
    for (uint32_t x : lost_right) pairs.get(pk(b, x)).count -= lose_right[x].count;
    pairs.get(p).count = 0;
    for (uint32_t x : gained_left) {
      const PairInfo* info = pairs.find(pk(x, nw));
      if (info->count > 0) heap.push(Entry{info->count, x, nw});
    }
    for (uint32_t x : gained_right) {
      const PairInfo* info = pairs.find(pk(nw, x));
      if (info->count > 0) heap.push(Entry{info->count, nw, x});
    }
  }
  ticker.finish(merges.size());
  return merges;
}


void count_pieces(const std::vector<std::pair<const char*, size_t>>& texts, Pattern pat, PieceTable& table) {
  for (auto& it : texts) {
    Text t{(const uint8_t*)it.first, it.second};
    size_t i = 0;
    while (i < t.n) {
      size_t e = next_piece(pat, t, i);
      if (e <= i) e = i + 1;
      table.add(t.s + i, e - i);
      i = e;
    }
  }
}

}  // namespace bpe_train
}  // namespace tf

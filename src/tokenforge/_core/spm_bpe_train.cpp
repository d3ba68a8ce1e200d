#include "spm_bpe_train.h"

#include <algorithm>
#include <queue>

namespace tf {
namespace spm_bpe_train {

std::vector<std::pair<uint32_t, uint32_t>> Trainer::run() {
  std::vector<std::pair<uint32_t, uint32_t>> merges;
  ticker.start();
  for (uint32_t idx = 0; idx < words.size(); ++idx) {
    if ((idx & 0xFFFF) == 0 && !ticker.poll(0, false)) return merges;
    const auto& w = words[idx];
    for (size_t k = 0; k + 1 < w.size(); ++k) {
      Pair& p = pair(w[k], w[k + 1]);
      if (!p.valid) continue;
      p.count += freqs[idx];
      hold(p, idx);
    }
  }
  pairs.for_each([&](Pair& p) {
    if (p.valid && p.count > 0) heap.push(entry(p.count, (uint32_t)(p.key >> 32), (uint32_t)p.key));
  });

  std::vector<uint32_t> list, out, hits, touched_pos;
  std::vector<std::pair<uint64_t, int64_t>> touched;  // pairs changed by this merge, with their count before
  while (merges.size() < n_merges && !heap.empty()) {
    if (!ticker.poll(merges.size())) return merges;
    Entry e = heap.top();
    heap.pop();
    const uint32_t a = e.a, b = e.b;
    const uint64_t key = pk(a, b);
    {
      Pair* p = pairs.find(key);
      if (!p || p->dead || p->count != e.count) continue;  // stale entry
      std::u32string s = sym[a] + sym[b];
      if (pieces.count(s)) {  // the same string through another split: dropped
        p->dead = 1;
        continue;
      }
      pieces.insert(s);
      sym.push_back(std::move(s));
      list.clear();
      if (p->list != PairTable::NONE) list.swap(holders[p->list]);
    }
    const uint32_t nw = (uint32_t)sym.size() - 1;
    merges.emplace_back(a, b);
    ++stamp;
    touched.clear();
    // the pair's slot when it is valid, its count moved by d
    auto change = [&](uint32_t x, uint32_t y, int64_t d) -> Pair* {
      Pair& p = pair(x, y);
      if (!p.valid) return nullptr;
      if (p.stamp != stamp) {
        p.stamp = stamp;
        touched.emplace_back(p.key, p.count);
      }
      p.count += d;
      return &p;
    };
    size_t visited = 0;
    for (uint32_t idx : list) {
      if ((++visited & 0xFFF) == 0 && !ticker.poll(merges.size(), false)) return merges;
      auto& w = words[idx];
      const size_t n = w.size();
      hits.clear();
      if (n < 2) continue;
      for (size_t i = 0;;) {  // left to right, without overlap
        i = find_from(w.data(), i, n - 1, a);
        if (i >= n - 1) break;
        if (w[i + 1] == b) { hits.push_back((uint32_t)i); i += 2; }
        else ++i;
      }
      if (hits.empty()) continue;  // stale index entry
      // sentencepiece merges one occurrence at a time: between two adjacent ones it has the pair
      // (new, a) for a moment, which then counts as seen (a slot at count 0)
      for (size_t h = 1; h < hits.size(); ++h)
        if (hits[h] == hits[h - 1] + 2) {
          pair(nw, a);
          break;
        }
      const int64_t f = freqs[idx];
      // pairs that disappear: those touching an occurrence (positions ascending, each once)
      touched_pos.clear();
      for (uint32_t i : hits) {
        if (i > 0 && (touched_pos.empty() || touched_pos.back() < i - 1)) touched_pos.push_back(i - 1);
        if (touched_pos.empty() || touched_pos.back() < i) touched_pos.push_back(i);
        if (i + 2 < n) touched_pos.push_back(i + 1);
      }
      for (uint32_t k : touched_pos) change(w[k], w[k + 1], -f);
      out.clear();
      touched_pos.clear();  // now: positions of the new symbol in `out`
      size_t prev_end = 0;
      for (uint32_t i : hits) {
        out.insert(out.end(), w.begin() + prev_end, w.begin() + i);
        touched_pos.push_back((uint32_t)out.size());
        out.push_back(nw);
        prev_end = i + 2;
      }
      out.insert(out.end(), w.begin() + prev_end, w.end());
      const size_t m = out.size();
      // pairs that appear: those touching a new symbol (positions ascending, each once)
      size_t next = 0;  // the smallest position not yet added
      auto gain = [&](size_t k) {
        if (k < next || k + 1 >= m) return;
        next = k + 1;
        if (Pair* p = change(out[k], out[k + 1], +f)) hold(*p, idx);
      };
      for (uint32_t j : touched_pos) {
        if (j > 0) gain(j - 1);
        gain(j);
      }
      w.swap(out);
    }
    for (const auto& [k, before] : touched) {
      if (k == key) continue;
      const Pair& p = pairs.get(k);
      if (p.count != before && p.count > 0) heap.push(entry(p.count, (uint32_t)(k >> 32), (uint32_t)k));
    }
    Pair& merged = pairs.get(key);
    merged.count = 0;
    merged.dead = 1;
  }
  if (merges.size() < n_merges) {
    // no pair with a positive count is left: like sentencepiece, take the pairs seen before whose
    // count fell to 0, best first in the heap's order (they change no word)
    std::vector<Entry> rest;
    pairs.for_each([&](Pair& p) {
      if (p.valid == 1 && !p.dead && p.count == 0) rest.push_back(entry(0, (uint32_t)(p.key >> 32), (uint32_t)p.key));
    });
    const Less less{&sym};
    std::sort(rest.begin(), rest.end(), [&](const Entry& x, const Entry& y) { return less(y, x); });
    for (const Entry& e : rest) {
      if (merges.size() >= n_merges) break;
      std::u32string s = sym[e.a] + sym[e.b];
      if (!pieces.insert(s).second) continue;  // already a piece
      sym.push_back(std::move(s));
      merges.emplace_back(e.a, e.b);
    }
  }
  ticker.finish(merges.size());
  return merges;
}

}  // namespace spm_bpe_train
}  // namespace tf

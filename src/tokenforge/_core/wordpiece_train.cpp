#include "wordpiece_train.h"

#include <queue>

namespace tf {
namespace wordpiece_train {

std::vector<std::pair<uint32_t, uint32_t>> Trainer::run() {
  std::vector<std::pair<uint32_t, uint32_t>> merges;
  const size_t n_units = tokens.size();
  ticker.start();  // counts the tokens added
  others.resize(n_units);
  rows.resize(n_units);
  row_stamp.assign(n_units, 0);
  row_best.assign(n_units, Entry{0, 0, 0, 0, PairTable::NONE, PairTable::NONE});
  for (uint32_t idx = 0; idx < words.size(); ++idx) {
    if ((idx & 0xFFFF) == 0 && !ticker.poll(0, false)) return merges;
    const auto& w = words[idx];
    for (size_t k = 0; k + 1 < w.size(); ++k) {
      Pair& p = pairs.get(pk(w[k], w[k + 1]));
      p.count += freqs[idx];
      hold(p, idx);
    }
  }
  {
    std::vector<uint64_t> keys;
    pairs.for_each([&](Pair& p) { keys.push_back(p.key); });
    std::sort(keys.begin(), keys.end());
    ++stamp;
    for (uint64_t key : keys) {
      Pair& p = pairs.get(key);
      assign(p);
      row_push(p);
    }
    for (uint32_t u : touched_rows) refresh(u);
    touched_rows.clear();
  }

  std::vector<uint64_t> touched;
  std::vector<uint32_t> out, list;
  while (tokens.size() < vocab_size && !heap.empty()) {
    if (!ticker.poll(tokens.size() - n_units)) return merges;
    Entry e = heap.top();
    heap.pop();
    uint32_t a = e.a, b = e.b;
    uint64_t key = pk(a, b);
    {
      Pair* p = pairs.find(key);
      if (!p || !eligible(*p) || p->count != (int64_t)e.c || unit_freq[a] != (int64_t)e.fa ||
          unit_freq[b] != (int64_t)e.fb)
        continue;  // stale: the owner row has pushed a current entry since
    }
    std::string s = tokens[a] + tokens[b].substr(std::min(prefix_len, tokens[b].size()));
    uint32_t nw;
    auto it = token_id.find(s);
    if (it == token_id.end()) {
      nw = (uint32_t)tokens.size();
      token_id.emplace(s, nw);
      tokens.push_back(std::move(s));
      add_unit();
    } else {
      nw = it->second;
      if (special[nw]) {
        Pair& p = pairs.get(key);
        p.banned = 1;
        refresh(p.owner);
        continue;
      }
    }
    merges.emplace_back(a, b);
    ++stamp;
    touched.clear();
    touched_rows.clear();
    list.clear();
    {
      Pair& p = pairs.get(key);
      if (p.list != PairTable::NONE) list.swap(holders[p.list]);
    }
    // (the reference is valid until the next pairs.get)
    auto change = [&](uint64_t k, int64_t d) -> Pair& {
      Pair& p = pairs.get(k);
      if (p.stamp != stamp) { p.stamp = stamp; touched.push_back(k); }
      p.count += d;
      return p;
    };
    int64_t merged = 0;
    size_t visited = 0;
    for (uint32_t idx : list) {
      if ((++visited & 0xFFF) == 0 && !ticker.poll(tokens.size() - n_units, false)) return merges;
      auto& w = words[idx];
      size_t n = w.size();
      out.clear();
      int64_t hits = 0;
      for (size_t k = 0; k < n;) {
        if (k + 1 < n && w[k] == a && w[k + 1] == b) { out.push_back(nw); k += 2; ++hits; }
        else out.push_back(w[k++]);
      }
      if (!hits) continue;  // stale holder
      int64_t f = freqs[idx];
      merged += hits * f;
      // A pair the word held before the merge lists the word already; the others get it
      // once. Pairs seen in the old word are marked with this visit (a search of the old
      // pairs for every new one made each merge quadratic in the word's length: a 1 MB
      // word without spaces ran for minutes).
      if (++visit == 0) {  // wrapped: forget every mark
        pairs.for_each([](Pair& p) { p.visit = 0; });
        visit = 1;
      }
      for (size_t k = 0; k + 1 < n; ++k) change(pk(w[k], w[k + 1]), -f).visit = visit;
      for (size_t k = 0; k + 1 < out.size(); ++k) {
        Pair& p = change(pk(out[k], out[k + 1]), +f);
        if (p.visit != visit) {
          p.visit = visit;
          hold(p, idx);
        }
      }
      w.swap(out);
    }
    unit_freq[a] -= merged;
    unit_freq[b] -= merged;
    unit_freq[nw] += merged;
    for (uint64_t k : touched) {
      Pair& p = pairs.get(k);
      if (p.count > 0) assign(p);
      if (p.assigned) row_push(p);
    }
    unit_changed(a);
    if (b != a) unit_changed(b);
    if (nw != a && nw != b) unit_changed(nw);
    for (uint32_t u : touched_rows) refresh(u);
  }
  ticker.finish(tokens.size() - n_units);
  return merges;
}

}  // namespace wordpiece_train
}  // namespace tf

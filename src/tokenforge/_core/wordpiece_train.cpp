#include "wordpiece_train.h"

#include <queue>

namespace tf {
namespace wordpiece_train {

std::vector<std::pair<uint32_t, uint32_t>> Trainer::run() {
  size_t n_units = tokens.size();
  others.resize(n_units);
  rows.resize(n_units);
  row_stamp.assign(n_units, 0);
  row_best.assign(n_units, Entry{0, 0, 0, 0, PairTable::NONE, PairTable::NONE});
  for (uint32_t idx = 0; idx < words.size(); ++idx) {
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

  std::vector<std::pair<uint32_t, uint32_t>> merges;
  std::vector<uint64_t> touched;
  std::vector<uint32_t> out, list;
  std::vector<uint64_t> old_pairs;
  while (tokens.size() < vocab_size && !heap.empty()) {
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
    auto change = [&](uint64_t k, int64_t d) {
      Pair& p = pairs.get(k);
      if (p.stamp != stamp) { p.stamp = stamp; touched.push_back(k); }
      p.count += d;
    };
    int64_t merged = 0;
    for (uint32_t idx : list) {
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
      old_pairs.clear();
      for (size_t k = 0; k + 1 < n; ++k) {
        uint64_t q = pk(w[k], w[k + 1]);
        old_pairs.push_back(q);
        change(q, -f);
      }
      for (size_t k = 0; k + 1 < out.size(); ++k) {
        uint64_t q = pk(out[k], out[k + 1]);
        change(q, +f);
        if (std::find(old_pairs.begin(), old_pairs.end(), q) == old_pairs.end()) hold(pairs.get(q), idx);
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
  return merges;
}

}  // namespace wordpiece_train
}  // namespace tf

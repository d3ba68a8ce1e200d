#include "wordpiece_train.h"

#include <queue>

namespace tf {
namespace wordpiece_train {

int64_t Trainer::rewrite(uint32_t a, uint32_t b, uint32_t nw, size_t n_units) {
  const uint64_t key = pk(a, b);
  touched.clear();
  auto& list = list_buf;
  auto& out = out_buf;
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
    if ((++visited & 0xFFF) == 0 && !ticker.poll(tokens.size() - n_units, false)) return -1;
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
  return merged;
}

std::vector<std::pair<uint32_t, uint32_t>> Trainer::run() {
  if (method != SCORE) return run_keyed();
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
    touched_rows.clear();
    int64_t merged = rewrite(a, b, nw, n_units);
    if (merged < 0) return merges;
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

// FREQUENCY and LIKELIHOOD: one max-heap of pairs with lazy deletion. An entry is dropped
// when popped if its pair's count (LIKELIHOOD: or a unit count) changed since it was pushed:
// every change pushes a current entry. For LIKELIHOOD the key also depends on N, which falls
// at every merge; that only lowers keys, so an entry whose counts are current still bounds
// its pair from above: when popped it is re-keyed with the current N and pushed back unless
// its key is unchanged, in which case no other pair can beat it.
std::vector<std::pair<uint32_t, uint32_t>> Trainer::run_keyed() {
  std::vector<std::pair<uint32_t, uint32_t>> merges;
  const size_t n_units = tokens.size();
  const bool lik = method == LIKELIHOOD;
  ticker.start();  // counts the tokens added
  others.resize(n_units);
  total = 0;
  for (int64_t f : unit_freq) total += (uint64_t)f;
  for (uint32_t idx = 0; idx < words.size(); ++idx) {
    if ((idx & 0xFFFF) == 0 && !ticker.poll(0, false)) return merges;
    const auto& w = words[idx];
    for (size_t k = 0; k + 1 < w.size(); ++k) {
      Pair& p = pairs.get(pk(w[k], w[k + 1]));
      p.count += freqs[idx];
      hold(p, idx);
    }
  }
  const KLess kless{};
  // every eligible pair, current (the order of the pushes does not matter: the heap order is total)
  auto rebuild = [&] {
    kheap.clear();
    pairs.for_each([&](Pair& p) {
      if (eligible(p)) kheap.push_back(kentry(p));
    });
    std::make_heap(kheap.begin(), kheap.end(), kless);
  };
  if (lik) pairs.for_each([&](Pair& p) { if (p.count > 0) klist(p); });
  rebuild();
  size_t rebuild_at = 2 * kheap.size() + (1u << 20);

  auto push_current = [&](Pair& p) {
    if (p.pushed == stamp) return;
    p.pushed = stamp;
    if (eligible(p)) kpush(kentry(p));
  };
  while (tokens.size() < vocab_size && !kheap.empty()) {
    if (!ticker.poll(tokens.size() - n_units)) return merges;
    std::pop_heap(kheap.begin(), kheap.end(), kless);
    KEntry e = kheap.back();
    kheap.pop_back();
    uint32_t a = e.a, b = e.b;
    uint64_t key = pk(a, b);
    {
      Pair* p = pairs.find(key);
      if (!p || !eligible(*p) || (uint64_t)p->count != e.c) continue;  // stale
      if (lik) {
        if ((uint64_t)unit_freq[a] != e.fa || (uint64_t)unit_freq[b] != e.fb) continue;  // stale
        double k = likelihood_key(e.c, e.fa, e.fb, total);
        if (k != e.key) {  // N fell since: k < e.key
          kpush(KEntry{k, e.c, e.fa, e.fb, a, b});
          continue;
        }
      }
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
        pairs.get(key).banned = 1;  // never eligible again
        continue;
      }
    }
    merges.emplace_back(a, b);
    ++stamp;
    int64_t merged = rewrite(a, b, nw, n_units);
    if (merged < 0) return merges;
    unit_freq[a] -= merged;
    unit_freq[b] -= merged;
    unit_freq[nw] += merged;
    total -= (uint64_t)merged;
    for (size_t t = 0; t < touched.size(); ++t) {
      Pair& p = pairs.get(touched[t]);
      if (lik && p.count > 0) klist(p);
      push_current(p);
    }
    if (lik) {
      // f(a), f(b) and f(nw) changed: so did the key of every pair holding one of them
      uint32_t us[3] = {a, b, nw};
      for (int j = 0; j < 3; ++j) {
        uint32_t u = us[j];
        if ((j == 1 && u == a) || (j == 2 && (u == a || u == b))) continue;
        auto& l = others[u];
        size_t kept = 0;
        for (size_t k = 0; k < l.size(); ++k) {
          Pair& p = pairs.get(l[k]);
          if (p.count <= 0) {
            p.listed &= (uint8_t)~((uint32_t)(p.key >> 32) == u ? 1 : 2);
            continue;
          }
          l[kept++] = l[k];
          push_current(p);
        }
        l.resize(kept);
      }
    }
    if (kheap.size() > rebuild_at) {
      rebuild();
      rebuild_at = 2 * kheap.size() + (1u << 20);
    }
  }
  ticker.finish(tokens.size() - n_units);
  return merges;
}

}  // namespace wordpiece_train
}  // namespace tf

#include "bpe_train.h"

#include <queue>

namespace tf {
namespace bpe_train {

std::vector<std::pair<uint32_t, uint32_t>> Merger::run(size_t num_merges) {
  std::vector<std::pair<uint32_t, uint32_t>> merges;
  ticker.start();
  auto poll = [&](bool by_count) { return ticker.poll(merges.size(), by_count); };
  for (uint32_t idx = 0; idx < words.size(); ++idx) {
    if ((idx & 0xFFFF) == 0 && !poll(false)) return merges;
    const auto& w = words[idx];
    for (size_t k = 0; k + 1 < w.size(); ++k) {
      PairInfo& info = pairs.get(pk(w[k], w[k + 1]));
      info.count += freqs[idx];
      hold(info, idx);
    }
  }
  std::vector<Entry> init;
  pairs.for_each([&](const PairInfo& s) {
    if (s.count > 0) init.push_back(Entry{s.count, (uint32_t)(s.key >> 32), (uint32_t)s.key});
  });
  std::priority_queue<Entry, std::vector<Entry>, Less> heap(Less{&keys}, std::move(init));

  std::vector<uint64_t> touched;
  uint32_t stamp = 0;
  while (merges.size() < num_merges && !heap.empty()) {
    if (!poll(true)) return merges;
    Entry e = heap.top();
    heap.pop();
    uint64_t p = pk(e.a, e.b);
    PairInfo* top = const_cast<PairInfo*>(pairs.find(p));
    if (!top || top->count != e.count || e.count <= 0) continue;  // stale
    uint32_t a = e.a, b = e.b, nw = (uint32_t)keys.size();
    keys.push_back(keys[a] + keys[b]);
    merges.emplace_back(a, b);
    ++stamp;
    touched.clear();
    std::vector<uint32_t> holders;
    if (top->list != PairTable::NONE) holders.swap(lists[top->list]);
    auto change = [&](uint32_t x, uint32_t y, int64_t d, uint32_t idx) {
      PairInfo& info = pairs.get(pk(x, y));
      info.count += d;
      if (d > 0) hold(info, idx);
      if (info.stamp != stamp) { info.stamp = stamp; touched.push_back(info.key); }
    };
    size_t visited = 0;
    for (uint32_t idx : holders) {
      if ((++visited & 0xFFF) == 0 && !poll(false)) return merges;
      auto& w = words[idx];
      int64_t f = freqs[idx];
      size_t n = w.size(), out = 0;
      for (size_t k = 0; k < n;) {
        if (k + 1 < n && w[k] == a && w[k + 1] == b) {
          if (out > 0) {  // left neighbour: the symbol already written (maybe a new token)
            uint32_t prev = w[out - 1];
            change(prev, a, -f, idx);
            change(prev, nw, +f, idx);
          }
          if (k + 2 < n) {  // right neighbour: the original next symbol
            uint32_t next = w[k + 2];
            change(b, next, -f, idx);
            change(nw, next, +f, idx);
          }
          w[out++] = nw;
          k += 2;
        } else {
          w[out++] = w[k++];
        }
      }
      w.resize(out);
    }
    // The merged pair is gone everywhere.
    PairInfo& gone = pairs.get(p);
    gone.count = 0;
    for (uint64_t key : touched) {
      const PairInfo* info = pairs.find(key);
      if (key != p && info->count > 0) heap.push(Entry{info->count, (uint32_t)(key >> 32), (uint32_t)key});
    }
  }
  ticker.finish(merges.size());
  return merges;
}

void count_pieces(const std::vector<std::pair<const char*, size_t>>& texts, Pattern pat,
                  std::unordered_map<std::string_view, int64_t>& table) {
  for (auto& it : texts) {
    Text t{(const uint8_t*)it.first, it.second};
    size_t i = 0;
    while (i < t.n) {
      size_t e = next_piece(pat, t, i);
      if (e <= i) e = i + 1;
      ++table[std::string_view(it.first + i, e - i)];
      i = e;
    }
  }
}

}  // namespace bpe_train
}  // namespace tf

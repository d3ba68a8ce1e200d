#include "backtrack.h"

#include <atomic>
#include <cstring>

namespace tf {

static std::atomic<uint64_t> g_generation{1};

Backtracker::Backtracker(const Vocab& v) : v_(v), generation_(g_generation.fetch_add(1)) { build(); }

void Backtracker::build() {
  size_t count = v_.size();
  uint32_t max_rank = 0;
  for (size_t k = 0; k < count; ++k) max_rank = std::max(max_rank, v_.entry_rank(k));
  token_len_.assign((size_t)max_rank + 1, 0);
  next_prefix_.assign((size_t)max_rank + 1, NONE);
  token_off_.assign((size_t)max_rank + 1, NONE);
  // Valid tokens: the ones merging reproduces (and that rank() maps back to themselves).
  std::vector<uint32_t> tmp;
  size_t total = 1;
  std::vector<size_t> valid;
  for (size_t k = 0; k < count; ++k) {
    const uint8_t* b = v_.entry_bytes(k);
    size_t len = v_.entry_len(k);
    uint32_t r = v_.entry_rank(k);
    if (v_.rank(b, len) != r) continue;  // a duplicate of another rank's bytes
    tmp.clear();
    bpe_merge(v_, b, len, tmp);
    if (tmp.size() != 1 || tmp[0] != r) continue;
    valid.push_back(k);
    total += len;
  }
  size_t cap = 16;
  while (cap < total * 2) cap <<= 1;
  edges_.assign(cap, Edge{EMPTY, NONE});
  mask_ = cap - 1;
  node_token_.assign(1, NONE);
  for (size_t k : valid) {
    const uint8_t* b = v_.entry_bytes(k);
    size_t len = v_.entry_len(k);
    uint32_t r = v_.entry_rank(k);
    uint32_t node = 0;
    for (size_t j = 0; j < len; ++j) {
      uint64_t key = ((uint64_t)node << 8) | b[j];
      size_t i = mix64(key) & mask_;
      while (edges_[i].key != EMPTY && edges_[i].key != key) i = (i + 1) & mask_;
      if (edges_[i].key == EMPTY) {
        edges_[i] = Edge{key, (uint32_t)node_token_.size()};
        node_token_.push_back(NONE);
      }
      node = edges_[i].child;
    }
    node_token_[node] = r;
    token_len_[r] = (uint32_t)len;
    token_off_[r] = (uint32_t)k;
  }
  // Longest valid proper prefix of each valid token.
  for (size_t k : valid) {
    const uint8_t* b = v_.entry_bytes(k);
    size_t len = v_.entry_len(k);
    uint32_t best = NONE, node = 0;
    for (size_t j = 0; j + 1 < len; ++j) {
      node = child(node, b[j]);
      if (node == NONE) break;
      if (node_token_[node] != NONE) best = node_token_[node];
    }
    next_prefix_[v_.entry_rank(k)] = best;
  }
}

uint32_t Backtracker::longest_match(const uint8_t* p, size_t n, size_t pos, size_t* len) const {
  uint32_t best = NONE, node = 0;
  size_t best_len = 0;
  size_t limit = std::min(n, pos + v_.max_len());
  for (size_t k = pos; k < limit; ++k) {
    node = child(node, p[k]);
    if (node == NONE) break;
    uint32_t t = node_token_[node];
    if (t != NONE) { best = t; best_len = k - pos + 1; }
  }
  *len = best_len;
  return best;
}

namespace {

// Memo of pair compatibility, one per thread, direct-mapped (a, b) -> 0/1. It is
// reset when the thread moves to another vocabulary (owner + generation).
struct PairMemo {
  struct Slot {
    uint64_t key = ~0ull;
    uint8_t ok = 0;
  };
  const void* owner = nullptr;
  uint64_t generation = 0;
  std::vector<Slot> slots;
};


}  // namespace

void Backtracker::encode(const uint8_t* p, size_t n, std::vector<uint32_t>& out) const {
  std::vector<uint32_t> tokens;
  tokens.reserve(n / 3 + 4);
  std::vector<uint8_t> alive(n + 1, 1);  // alive[pos] == 0: pos is a dead end
  thread_local PairMemo memo;
  if (memo.owner != this || memo.generation != generation_) {
    memo.owner = this;
    memo.generation = generation_;
    memo.slots.assign(1 << 16, PairMemo::Slot{});
  }
  std::vector<uint8_t> buf;
  std::vector<uint32_t> merged;
  auto compatible = [&](uint32_t a, uint32_t b) -> bool {
    uint64_t key = ((uint64_t)a << 32) | b;
    auto& slot = memo.slots[(size_t)(key * 0x9E3779B97F4A7C15ull >> 48) & (memo.slots.size() - 1)];
    if (slot.key == key) return slot.ok;
    size_t la = token_len_[a], lb = token_len_[b];
    buf.resize(la + lb);
    std::memcpy(buf.data(), v_.entry_bytes(token_off_[a]), la);
    std::memcpy(buf.data() + la, v_.entry_bytes(token_off_[b]), lb);
    merged.clear();
    bpe_merge(v_, buf.data(), la + lb, merged);
    bool ok = merged.size() == 2 && merged[0] == a && merged[1] == b;
    slot.key = key;
    slot.ok = ok;
    return ok;
  };
  size_t pos = 0, len = 0;
  uint32_t next = longest_match(p, n, 0, &len);
  while (next != NONE) {
    size_t end = pos + token_len_[next];
    if (alive[end] && (tokens.empty() || compatible(tokens.back(), next))) {
      tokens.push_back(next);
      pos = end;
      next = pos < n ? longest_match(p, n, pos, &len) : NONE;
      continue;
    }
    next = next_prefix_[next];
    while (next == NONE) {  // nothing shorter starts here: pos is a dead end
      alive[pos] = 0;
      if (tokens.empty()) {  // cannot happen: single bytes always fit; fall back to merging
        bpe_merge(v_, p, n, out);
        return;
      }
      uint32_t last = tokens.back();
      tokens.pop_back();
      pos -= token_len_[last];
      next = next_prefix_[last];
    }
  }
  out.insert(out.end(), tokens.begin(), tokens.end());
}

}  // namespace tf

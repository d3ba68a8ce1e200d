#include "backtrack.h"

#include <atomic>
#include <climits>
#include <cstring>

namespace tf {

static std::atomic<uint64_t> g_generation{1};

Backtracker::Backtracker(const Vocab& v) : v_(v), generation_(g_generation.fetch_add(1)) { build(); }

namespace {

// Merging a token's own bytes (as bpe_merge: lowest rank, leftmost first) with one rank
// lookup per new pair: true when they merge into the single token `r`; (left, right) is
// then its last merge. parts/pairs/starts are scratch space.
bool merges_into(const Vocab& v, const uint8_t* b, size_t len, uint32_t r, uint32_t* left, uint32_t* right,
                 std::vector<uint32_t>& part, std::vector<uint32_t>& pair, std::vector<uint32_t>& start) {
  const uint32_t NONE = Vocab::NONE;
  if (len > SHORT_PIECE) {  // the array scan below is O(len^2): long tokens take the heap
    uint32_t whole = NONE;
    return bpe_merge_last(v, b, len, &whole, left, right) && whole == r;
  }
  part.resize(len);
  pair.resize(len);
  start.resize(len + 1);
  for (size_t j = 0; j < len; ++j) { part[j] = v.byte_rank(b[j]); start[j] = (uint32_t)j; }
  start[len] = (uint32_t)len;
  for (size_t j = 0; j + 1 < len; ++j) pair[j] = v.rank(b + j, 2);
  size_t count = len;
  while (count > 1) {
    uint32_t best = NONE;
    size_t bi = 0;
    for (size_t j = 0; j + 1 < count; ++j)
      if (pair[j] < best) { best = pair[j]; bi = j; }
    if (best == NONE) return false;
    *left = part[bi];
    *right = part[bi + 1];
    part[bi] = best;
    for (size_t j = bi + 1; j + 1 < count; ++j) { part[j] = part[j + 1]; pair[j] = pair[j + 1]; }
    for (size_t j = bi + 1; j < count; ++j) start[j] = start[j + 1];
    --count;
    if (bi + 1 < count) pair[bi] = v.rank(b + start[bi], start[bi + 2] - start[bi]);
    if (bi > 0) pair[bi - 1] = v.rank(b + start[bi - 1], start[bi + 1] - start[bi - 1]);
  }
  return part[0] == r;
}

}  // namespace

void Backtracker::build() {
  size_t count = v_.size();
  uint32_t max_rank = 0;
  for (size_t k = 0; k < count; ++k) max_rank = std::max(max_rank, v_.entry_rank(k));
  token_len_.assign((size_t)max_rank + 1, 0);
  next_prefix_.assign((size_t)max_rank + 1, NONE);
  token_off_.assign((size_t)max_rank + 1, NONE);
  // Valid tokens: the ones merging reproduces (and that rank() maps back to themselves).
  // The merge that completes a valid token also gives its split (left, right), the
  // two tokens whose merge made it; pair compatibility walks these split trees.
  split_left_.assign((size_t)max_rank + 1, NONE);
  split_right_.assign((size_t)max_rank + 1, NONE);
  size_t total = 1;
  std::vector<uint32_t> valid;
  std::vector<uint32_t> part, pair, start;
  size_t longest = 0;
  for (size_t k = 0; k < count; ++k) {
    const uint8_t* b = v_.entry_bytes(k);
    size_t len = v_.entry_len(k);
    uint32_t r = v_.entry_rank(k);
    if (len == 0 || v_.rank(b, len) != r) continue;  // a duplicate of another rank's bytes
    uint32_t left = NONE, right = NONE;
    if (len > 1 && !merges_into(v_, b, len, r, &left, &right, part, pair, start)) continue;
    split_left_[r] = left;
    split_right_[r] = right;
    if (left != NONE && (left > r || right > r)) monotone_ = false;
    valid.push_back((uint32_t)k);
    total += len;
    longest = std::max(longest, len);
  }
  if (total >= MAX_NODES) {  // a trie this large does not fit 32-bit edges: merge instead
    usable_ = false;
    return;
  }
  // Shorter tokens first, so that inserting a token finds its valid proper prefixes
  // already marked on its path: its longest one comes out of the same walk.
  std::vector<size_t> by_len(longest + 2, 0);
  for (uint32_t k : valid) ++by_len[v_.entry_len(k) + 1];
  for (size_t l = 1; l < by_len.size(); ++l) by_len[l] += by_len[l - 1];
  std::vector<uint32_t> order(valid.size());
  for (uint32_t k : valid) order[by_len[v_.entry_len(k)]++] = k;
  size_t cap = 16;
  while (cap < total * 2) cap <<= 1;
  edges_.assign(cap, Edge{EMPTY, NONE});
  mask_ = cap - 1;
  node_token_.reserve(total);
  node_token_.assign(1, NONE);
  for (uint32_t k : order) {
    const uint8_t* b = v_.entry_bytes(k);
    size_t len = v_.entry_len(k);
    uint32_t r = v_.entry_rank(k);
    uint32_t node = 0, best = NONE;
    for (size_t j = 0; j < len; ++j) {
      if (j > 0 && node_token_[node] != NONE) best = node_token_[node];
      uint32_t key = edge_key(node, b[j]);
      size_t i = slot_of(key);
      while (edges_[i].key != EMPTY && edges_[i].key != key) i = (i + 1) & mask_;
      if (edges_[i].key == EMPTY) {
        edges_[i] = Edge{key, (uint32_t)node_token_.size()};
        node_token_.push_back(NONE);
      }
      node = edges_[i].child;
    }
    node_token_[node] = r;
    token_len_[r] = (uint32_t)len;
    token_off_[r] = k;
    next_prefix_[r] = best;
  }
  // The first two trie levels as plain arrays: most steps of a walk never hash.
  depth1_.assign(256, NONE);
  depth2_.assign(65536, NONE);
  for (uint32_t b0 = 0; b0 < 256; ++b0) {
    uint32_t n1 = child(0, (uint8_t)b0);
    depth1_[b0] = n1;
    if (n1 == NONE) continue;
    for (uint32_t b1 = 0; b1 < 256; ++b1) depth2_[b0 << 8 | b1] = child(n1, (uint8_t)b1);
  }
}

// Is [a, b] the merge of bytes(a) + bytes(b)?
//
// Merging picks the lowest rank, leftmost first. Until some merge crosses the seam the
// two sides evolve exactly as they would alone, and for a valid token that means its
// split tree, built in increasing rank order. So the token left of the seam runs up a's
// right spine (last byte, ..., a) and the token right of it up b's left spine. Order the
// steps by key = 4 * rank + side, side 0 for a left-hand merge, 1 for a crossing one and 2
// for a right-hand one (leftmost wins ties). A spine token is born at its own key and
// dies at its parent's. A crossing pair (x, y) of rank c fires at
// K = max(key(c, crossing), birth(x), birth(y)) unless x or y is gone by then; it
// makes [a, b] invalid iff K < death(x) and K < death(y). A two-pointer sweep over the
// spines visits every pair that ever meets: O(depth) lookups, no merging.
bool Backtracker::pair_is_valid(uint32_t a, uint32_t b, std::vector<uint8_t>& buf) const {
  if (!monotone_) return pair_is_valid_by_merging(a, b, buf);
  uint32_t xs[512], ys[512];
  size_t p = 0, q = 0;
  for (uint32_t t = a; t != NONE; t = split_right_[t]) {  // a, ..., last byte
    if (p == 512) return pair_is_valid_by_merging(a, b, buf);  // a freak vocabulary: do it the long way
    xs[p++] = t;
  }
  for (uint32_t t = b; t != NONE; t = split_left_[t]) {  // b, ..., first byte
    if (q == 512) return pair_is_valid_by_merging(a, b, buf);
    ys[q++] = t;
  }
  size_t la = token_len_[a], lb = token_len_[b];
  buf.resize(la + lb);
  std::memcpy(buf.data(), v_.entry_bytes(token_off_[a]), la);
  std::memcpy(buf.data() + la, v_.entry_bytes(token_off_[b]), lb);
  const int64_t NEVER = INT64_MAX;
  auto birth = [](const uint32_t* s, size_t k, size_t n, int side) -> int64_t {
    return k + 1 == n ? -4 : 4 * (int64_t)s[k] + side;  // single bytes exist from the start
  };
  auto death = [NEVER](const uint32_t* s, size_t k, int side) -> int64_t {
    return k == 0 ? NEVER : 4 * (int64_t)s[k - 1] + side;  // replaced when its parent is made
  };
  size_t k = p - 1, l = q - 1;
  for (;;) {
    int64_t bx = birth(xs, k, p, 0), by = birth(ys, l, q, 2);
    int64_t dx = death(xs, k, 0), dy = death(ys, l, 2);
    if (std::max(bx, by) < std::min(dx, dy)) {
      size_t lx = token_len_[xs[k]], ly = token_len_[ys[l]];
      uint32_t c = v_.rank(buf.data() + la - lx, lx + ly);
      if (c != NONE) {
        int64_t fire = std::max(4 * (int64_t)c + 1, std::max(bx, by));
        if (fire < dx && fire < dy) return false;
      }
    }
    if (k == 0 && l == 0) return true;
    if (l == 0 || (k > 0 && dx < dy)) --k;
    else --l;
  }
}

// The definition itself: merge the two tokens' bytes and compare. Used when some token
// has a part of higher rank than itself (the spine argument needs ranks to grow upwards).
bool Backtracker::pair_is_valid_by_merging(uint32_t a, uint32_t b, std::vector<uint8_t>& buf) const {
  size_t la = token_len_[a], lb = token_len_[b];
  buf.resize(la + lb);
  std::memcpy(buf.data(), v_.entry_bytes(token_off_[a]), la);
  std::memcpy(buf.data() + la, v_.entry_bytes(token_off_[b]), lb);
  std::vector<uint32_t> merged;
  bpe_merge(v_, buf.data(), la + lb, merged);
  return merged.size() == 2 && merged[0] == a && merged[1] == b;
}

uint32_t Backtracker::longest_match(const uint8_t* p, size_t n, size_t pos, size_t* len) const {
  uint32_t node = depth1_[p[pos]];
  if (node == NONE) { *len = 0; return NONE; }
  uint32_t best = node_token_[node];
  size_t best_len = best != NONE ? 1 : 0;
  if (pos + 1 < n) {
    node = depth2_[(uint32_t)p[pos] << 8 | p[pos + 1]];
    if (node != NONE) {
      if (node_token_[node] != NONE) { best = node_token_[node]; best_len = 2; }
      size_t limit = std::min(n, pos + v_.max_len());
      for (size_t k = pos + 2; k < limit; ++k) {
        node = child(node, p[k]);
        if (node == NONE) break;
        uint32_t t = node_token_[node];
        if (t != NONE) { best = t; best_len = k - pos + 1; }
      }
    }
  }
  *len = best_len;
  return best;
}

namespace {

// Memo of pair compatibility, one per thread, direct-mapped (a, b) -> 0/1. It is
// reset when the thread moves to another vocabulary (owner + generation).
// A slot is one word, a << 33 | b << 1 | ok (ranks below 2^31; ~0 = empty), so the
// memo holds twice the pairs per byte of cache.
struct PairMemo {
  static constexpr unsigned BITS = 17;
  const void* owner = nullptr;
  uint64_t generation = 0;
  std::vector<uint64_t> slots;
};


}  // namespace

void Backtracker::encode(const uint8_t* p, size_t n, std::vector<uint32_t>& out) const {
  if (!usable_) {
    bpe_merge(v_, p, n, out);
    return;
  }
  // Scratch space kept per thread: no allocation per piece.
  thread_local std::vector<uint32_t> tokens;
  thread_local std::vector<uint8_t> alive;
  tokens.clear();
  alive.assign(n + 1, 1);  // alive[pos] == 0: pos is a dead end
  thread_local PairMemo memo;
  if (memo.owner != this || memo.generation != generation_) {
    memo.owner = this;
    memo.generation = generation_;
    memo.slots.assign((size_t)1 << PairMemo::BITS, ~0ull);
  }
  thread_local std::vector<uint8_t> buf;
  auto compatible = [&](uint32_t a, uint32_t b) -> bool {
    if ((a | b) >> 31) return pair_is_valid(a, b, buf);  // (no such vocabulary; kept exact anyway)
    uint64_t key = ((uint64_t)a << 33) | ((uint64_t)b << 1);
    uint64_t& slot = memo.slots[(size_t)(key * 0x9E3779B97F4A7C15ull >> (64 - PairMemo::BITS))];
    if ((slot & ~1ull) == key) return (slot & 1) != 0;
    bool ok = pair_is_valid(a, b, buf);
    slot = key | (ok ? 1 : 0);
    return ok;
  };
  // longest_match reads p[pos : pos + max_len] only: inside a run of one repeated byte
  // (a line of dashes, of '=', of spaces in a piece) every full window gives the same
  // token, so the walk down the trie is done once per byte value, not once per position.
  // The run's extent is found once ([run_lo, run_hi) holds one byte value), not compared
  // window by window: a vocabulary with one huge token must not make each position cost
  // that token's length.
  const size_t window = v_.max_len();
  int run_byte = -1;
  uint32_t run_token = NONE;
  size_t run_len = 0;
  size_t run_lo = 0, run_hi = 0;
  auto match = [&](size_t at, size_t* out_len) -> uint32_t {
    if (window >= 2 && at + window <= n && p[at] == p[at + 1]) {
      if (at < run_lo || at >= run_hi) {
        if (run_hi > run_lo && at < run_lo && p[at] == p[run_lo]) {
          size_t s = run_lo;  // extend the known run backwards to at, if it reaches
          while (s > at && p[s - 1] == p[run_lo]) --s;
          if (s == at) {
            run_lo = at;
          } else {
            run_lo = at;
            run_hi = at + 1;
            while (run_hi < n && p[run_hi] == p[at]) ++run_hi;
          }
        } else {
          run_lo = at;
          run_hi = at + 1;
          while (run_hi < n && p[run_hi] == p[at]) ++run_hi;
        }
      }
      if (at + window <= run_hi) {
        if (run_byte != p[at]) {
          run_token = longest_match(p, n, at, &run_len);
          run_byte = p[at];
        }
        *out_len = run_len;
        return run_token;
      }
    }
    return longest_match(p, n, at, out_len);
  };
  size_t pos = 0, len = 0;
  uint32_t next = match(0, &len);
  while (next != NONE) {
    size_t end = pos + token_len_[next];
    if (alive[end] && (tokens.empty() || compatible(tokens.back(), next))) {
      tokens.push_back(next);
      pos = end;
      next = pos < n ? match(pos, &len) : NONE;
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

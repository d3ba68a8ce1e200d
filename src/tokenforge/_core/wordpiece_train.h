// Native WordPiece training: the merge loop of trainers/wordpiece.py, merge for merge.
//
// Each step merges the live pair with the highest score f(xy) / (f(x) f(y)),
// where f(xy) is the pair count and f(x), f(y) the unit counts (64-bit).
// Scores are compared exactly: a double quotient decides when two differ by
// more than its rounding error, otherwise the products are compared in 192-bit
// integers. Ties: larger f(xy), then the smaller (left, right) pair of token
// strings (UTF-8 byte order = code point order).
//
// Why not one heap of pairs. A merge of x y lowers f(x) and f(y), which raises
// the score of *every* pair holding x or y. Late in training x and y are
// frequent units ("##e") with thousands of pairs, and re-scoring them all at
// each merge is what makes the Python reference slow. Here every pair is owned
// by one of its units, the one with the larger count when the pair first
// appeared (frequent units change most often). Each unit u keeps a row: a heap
// of its owned pairs keyed by f(ux) / f(x), the score times f(u), which does
// not change when f(u) does. A global heap holds, for every row, its best pair
// with the exact current score. So a change of f(u) costs one row refresh plus
// a re-key of the few pairs u does *not* own (where the partner was more
// frequent); a change of a pair count costs one row push. Entries carry the
// state they were computed from and are dropped when popped if it is stale;
// every change refreshes the row that owns the pair, so each row's best always
// has a current entry in the global heap.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <queue>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "pair_table.h"
#include "ticker.h"

namespace tf {
namespace wordpiece_train {



struct Pair {
  uint64_t key;
  int64_t count;
  uint32_t stamp;
  uint32_t list;      // index into Trainer::holders, or NONE
  uint32_t owner;     // the unit whose row holds the pair
  uint32_t other;     // the other unit (= owner for a pair x x)
  uint8_t assigned;   // owner/other are set (at the first appearance, for good)
  uint8_t listed;     // present in Trainer::others[other]
  uint8_t banned;     // its merge would spell a special token
  uint32_t visit;     // the last word visit (Trainer::visit) that saw the pair in the word before the merge
  uint32_t pushed;    // run_keyed: the last merge step that pushed the pair's key
  static Pair blank() { return Pair{~0ull, 0, ~0u, ~0u, 0, 0, 0, 0, 0, 0, 0}; }
};

using PairTable = tf::PairTable<Pair, 1 << 16>;

// x * y * z as a 192-bit number, most significant word first.
struct U192 {
  uint64_t w[3];
};
inline U192 mul3(uint64_t x, uint64_t y, uint64_t z) {
  unsigned __int128 xy = (unsigned __int128)x * y;
  uint64_t lo = (uint64_t)xy, hi = (uint64_t)(xy >> 64);
  unsigned __int128 a = (unsigned __int128)lo * z;
  unsigned __int128 b = (unsigned __int128)hi * z + (uint64_t)(a >> 64);
  return U192{{(uint64_t)(b >> 64), (uint64_t)b, (uint64_t)a}};
}
inline int cmp192(const U192& p, const U192& q) {
  for (int k = 0; k < 3; ++k)
    if (p.w[k] != q.w[k]) return p.w[k] < q.w[k] ? -1 : 1;
  return 0;
}

// A pair with its exact current score (global heap).
struct Entry {
  double score;
  uint64_t c, fa, fb;  // the state it was scored with
  uint32_t a, b;
};
// A pair in its owner's row, keyed by c / f(other).
struct RowEntry {
  uint64_t c, fo;  // count and f(other) it was keyed with
  uint32_t a, b;
};

// Equal scores: larger f(xy) first, then the smaller (left, right) strings.
inline bool tie_lower(const std::vector<std::string>& tokens, uint64_t xc, uint32_t xa, uint32_t xb, uint64_t yc,
                      uint32_t ya, uint32_t yb) {
  if (xc != yc) return xc < yc;
  int s = tokens[xa].compare(tokens[ya]);
  if (s != 0) return s > 0;
  s = tokens[xb].compare(tokens[yb]);
  return s > 0;
}

// The merge rules (trainers/wordpiece.py, ``merge=``).
enum Method : int {
  SCORE = 0,       // f(xy) / (f(x) f(y)), the row/owner loop of run()
  FREQUENCY = 1,   // f(xy), as BPE (run_keyed)
  LIKELIHOOD = 2,  // f(xy) * log(f(xy) N / (f(x) f(y))) in double, N = the total unit count (run_keyed)
};

// The likelihood key, operation for operation as trainers/wordpiece.py computes it (each step is
// rounded to nearest, so the value is the same double in both, and it never rises as n falls).
inline double likelihood_key(uint64_t c, uint64_t fa, uint64_t fb, uint64_t n) {
  return (double)c * (((std::log((double)c) + std::log((double)n)) - std::log((double)fa)) - std::log((double)fb));
}

// A pair in run_keyed's heap: its key and the counts (and, for LIKELIHOOD, unit counts) it was
// computed from. The order is total: key, then larger f(xy), then the smaller (left, right)
// ids (the older units: ids are the base tokens in their given order, then the new tokens in
// the order learned), then (two entries of one pair) the unit counts.
struct KEntry {
  double key;
  uint64_t c, fa, fb;
  uint32_t a, b;
};

struct Trainer {
  std::vector<std::string> tokens;  // UTF-8
  std::unordered_map<std::string, uint32_t> token_id;
  std::vector<uint8_t> special;  // per token id
  std::vector<std::vector<uint32_t>> words;
  std::vector<int64_t> freqs;
  std::vector<int64_t> unit_freq;
  size_t prefix_len = 0;
  size_t vocab_size = 0;
  int64_t min_frequency = 0;
  int method = SCORE;

  PairTable pairs;
  std::vector<std::vector<uint32_t>> holders;  // per pair: its words (may be stale)
  std::vector<std::vector<uint64_t>> others;   // per unit: pairs where it is `other` (may be stale)
  std::vector<std::vector<RowEntry>> rows;     // per unit: heap of owned pairs
  std::vector<uint32_t> row_stamp;             // per unit: last merge that touched its row
  std::vector<Entry> row_best;                 // per unit: the global entry its row pushed last
  std::vector<uint32_t> touched_rows;
  uint32_t stamp = 0;
  uint32_t visit = 0;  // one per word rewritten by a merge (0 = never)

  // "x has lower priority than y"
  struct Less {
    const std::vector<std::string>* tokens;
    bool operator()(const Entry& x, const Entry& y) const {
      // the double quotients are within a few ulp of the exact values
      double hi = std::max(x.score, y.score);
      if (std::fabs(x.score - y.score) > hi * 1e-12) return x.score < y.score;
      int c = cmp192(mul3(x.c, y.fa, y.fb), mul3(y.c, x.fa, x.fb));
      if (c != 0) return c < 0;
      if (x.a == y.a && x.b == y.b) return x.fa != y.fa ? x.fa < y.fa : x.fb < y.fb;  // duplicates
      return tie_lower(*tokens, x.c, x.a, x.b, y.c, y.a, y.b);
    }
  };
  struct RowLess {
    const std::vector<std::string>* tokens;
    bool operator()(const RowEntry& x, const RowEntry& y) const {
      unsigned __int128 l = (unsigned __int128)x.c * y.fo, r = (unsigned __int128)y.c * x.fo;
      if (l != r) return l < r;
      if (x.a == y.a && x.b == y.b) return x.fo < y.fo;  // duplicates of one pair
      return tie_lower(*tokens, x.c, x.a, x.b, y.c, y.a, y.b);
    }
  };
  std::priority_queue<Entry, std::vector<Entry>, Less> heap{Less{&tokens}};

  bool eligible(const Pair& p) const {
    uint32_t a = (uint32_t)(p.key >> 32), b = (uint32_t)p.key;
    return p.count > 0 && p.count >= min_frequency && !p.banned && !special[a] && !special[b];
  }

  void touch_row(uint32_t u) {
    if (row_stamp[u] != stamp) { row_stamp[u] = stamp; touched_rows.push_back(u); }
  }

  // the pair first appears: its owner is the unit with the larger count (ties: the left one)
  void assign(Pair& p) {
    uint32_t a = (uint32_t)(p.key >> 32), b = (uint32_t)p.key;
    if (!p.assigned) {
      bool left = unit_freq[a] >= unit_freq[b];
      p.owner = left ? a : b;
      p.other = left ? b : a;
      p.assigned = 1;
    }
    if (!p.listed) { p.listed = 1; others[p.other].push_back(p.key); }
  }

  // push the pair's current key into its owner's row
  void row_push(Pair& p) {
    touch_row(p.owner);
    if (!eligible(p)) return;
    auto& r = rows[p.owner];
    r.push_back(RowEntry{(uint64_t)p.count, (uint64_t)unit_freq[p.other], (uint32_t)(p.key >> 32), (uint32_t)p.key});
    std::push_heap(r.begin(), r.end(), RowLess{&tokens});
  }

  // drop stale tops, then give the row's best pair a current global entry
  void refresh(uint32_t u) {
    auto& r = rows[u];
    RowLess less{&tokens};
    while (!r.empty()) {
      const RowEntry& t = r.front();
      Pair* p = pairs.find(pk(t.a, t.b));
      if (p && eligible(*p) && p->owner == u && (uint64_t)p->count == t.c &&
          (uint64_t)unit_freq[p->other] == t.fo) {
        uint64_t c = t.c, fa = (uint64_t)unit_freq[t.a], fb = (uint64_t)unit_freq[t.b];
        Entry& last = row_best[u];
        if (last.a == t.a && last.b == t.b && last.c == c && last.fa == fa && last.fb == fb) return;  // still there
        last = Entry{(double)c / ((double)fa * (double)fb), c, fa, fb, t.a, t.b};
        heap.push(last);
        return;
      }
      std::pop_heap(r.begin(), r.end(), less);
      r.pop_back();
    }
  }

  // f(u) changed: re-key the pairs u does not own, refresh the row u owns
  void unit_changed(uint32_t u) {
    touch_row(u);
    auto& l = others[u];
    size_t out = 0;
    for (size_t k = 0; k < l.size(); ++k) {
      Pair& p = pairs.get(l[k]);
      if (p.count <= 0) { p.listed = 0; continue; }
      l[out++] = l[k];
      row_push(p);
    }
    l.resize(out);
  }

  void hold(Pair& p, uint32_t idx) {
    if (p.list == PairTable::NONE) {
      p.list = (uint32_t)holders.size();
      holders.emplace_back();
    }
    auto& l = holders[p.list];
    if (l.empty() || l.back() != idx) l.push_back(idx);
  }

  void add_unit() {
    unit_freq.push_back(0);
    special.push_back(0);
    others.emplace_back();
    rows.emplace_back();
    row_stamp.push_back(0);
    row_best.push_back(Entry{0, 0, 0, 0, PairTable::NONE, PairTable::NONE});
  }

  Ticker ticker;  // watches run() (ticker.h); what it learns never depends on it

  // scratch of rewrite()
  std::vector<uint64_t> touched;
  std::vector<uint32_t> out_buf, list_buf;
  // Rewrites every word holding a b with nw in its place and applies the pair-count changes
  // (the pairs changed are in `touched`, stamped with `stamp`, which the caller has advanced).
  // Returns the occurrences merged, or -1 when the ticker stops the run.
  int64_t rewrite(uint32_t a, uint32_t b, uint32_t nw, size_t n_units);

  struct KLess {
    bool operator()(const KEntry& x, const KEntry& y) const {
      if (x.key != y.key) return x.key < y.key;
      if (x.c != y.c) return x.c < y.c;
      if (x.a != y.a) return x.a > y.a;
      if (x.b != y.b) return x.b > y.b;
      return x.fa != y.fa ? x.fa > y.fa : x.fb > y.fb;  // two entries of one pair
    }
  };
  std::vector<KEntry> kheap;
  uint64_t total = 0;  // N: the sum of the unit counts (LIKELIHOOD)
  KEntry kentry(const Pair& p) const {
    uint32_t a = (uint32_t)(p.key >> 32), b = (uint32_t)p.key;
    uint64_t c = (uint64_t)p.count;
    if (method == LIKELIHOOD) {
      uint64_t fa = (uint64_t)unit_freq[a], fb = (uint64_t)unit_freq[b];
      return KEntry{likelihood_key(c, fa, fb, total), c, fa, fb, a, b};
    }
    return KEntry{(double)c, c, 0, 0, a, b};
  }
  void kpush(const KEntry& e) {
    kheap.push_back(e);
    std::push_heap(kheap.begin(), kheap.end(), KLess{});
  }
  // LIKELIHOOD: list the pair under both its units (bit 1: left, bit 2: right)
  void klist(Pair& p) {
    uint32_t a = (uint32_t)(p.key >> 32), b = (uint32_t)p.key;
    if (!(p.listed & 1)) { p.listed |= 1; others[a].push_back(p.key); }
    if (b != a && !(p.listed & 2)) { p.listed |= 2; others[b].push_back(p.key); }
  }

  std::vector<std::pair<uint32_t, uint32_t>> run();
  std::vector<std::pair<uint32_t, uint32_t>> run_keyed();
};

}  // namespace wordpiece_train
}  // namespace tf

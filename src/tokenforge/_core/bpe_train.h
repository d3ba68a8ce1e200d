// Native byte-level BPE training: piece counting with the scanners, and the incremental merge loop.
//
// learn_merges keeps, as trainers/bpe.py does, the count of every adjacent pair
// (64-bit), an index from each pair to the words that gained it, and a max-heap
// of (count, pair) with lazy deletion. A merge visits only the words indexed
// under the merged pair, recomputes their pairs, applies the net count changes
// and pushes each changed pair once. Ties go to the greatest pair of token
// strings compared through `order` (a byte permutation), so the result equals
// the pure-Python trainer's, merge for merge.
//
// The loop is watched by `ticker` (ticker.h) with the number of merges learned
// so far, also inside a long merge and the initial count. The binding uses it
// to check for signals (Ctrl-C) and report progress; the merges learned never
// depend on it.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "pair_table.h"
#include "scan.h"
#include "ticker.h"

namespace tf {
namespace bpe_train {



// Everything the loop knows about one pair, in one open-addressing table:
// its count, the last merge that touched it, and its list of holder words.
struct PairInfo {
  uint64_t key;
  int64_t count;
  uint32_t stamp;
  uint32_t list;  // index into Merger::lists, or NONE
  static PairInfo blank() { return PairInfo{~0ull, 0, ~0u, ~0u}; }
};

using PairTable = tf::PairTable<PairInfo, 1 << 16>;

struct Merger {
  std::vector<std::string> keys;  // token id -> bytes mapped through `order`
  std::vector<std::vector<uint32_t>> words;
  std::vector<int64_t> freqs;
  PairTable pairs;
  std::vector<std::vector<uint32_t>> lists;  // holder words of a pair (may hold stale entries)

  struct Entry {
    int64_t count;
    uint32_t a, b;
  };
  struct Less {
    const std::vector<std::string>* keys;
    // "x < y" = x has lower priority: smaller count, or on a tie the smaller pair
    bool operator()(const Entry& x, const Entry& y) const {
      if (x.count != y.count) return x.count < y.count;
      int c = (*keys)[x.a].compare((*keys)[y.a]);
      if (c != 0) return c < 0;
      c = (*keys)[x.b].compare((*keys)[y.b]);
      if (c != 0) return c < 0;
      return x.a != y.a ? x.a < y.a : x.b < y.b;
    }
  };

  void hold(PairInfo& info, uint32_t idx) {
    if (info.list == PairTable::NONE) {
      info.list = (uint32_t)lists.size();
      lists.emplace_back();
    }
    auto& l = lists[info.list];
    if (l.empty() || l.back() != idx) l.push_back(idx);
  }

  Ticker ticker;  // see the top of this file

  // Up to num_merges merges (a, b); merge k creates id keys.size() + k (at the start).
  std::vector<std::pair<uint32_t, uint32_t>> run(size_t num_merges);
};


// Counts the pieces of each UTF-8 text (texts[k] = (bytes, length)) under the scanner pat
// into table (keys are views into the texts).
void count_pieces(const std::vector<std::pair<const char*, size_t>>& texts, Pattern pat,
                  std::unordered_map<std::string_view, int64_t>& table);

}  // namespace bpe_train
}  // namespace tf

// Native byte-level BPE training: piece counting with the scanners, and the incremental merge loop.
//
// learn_merges keeps, as trainers/bpe.py does, the count of every adjacent pair
// (64-bit), an index from each pair to the words that gained it, and a max-heap
// of (count, pair) with lazy deletion. A merge visits only the words indexed
// under the merged pair (in increasing order, records prefetched ahead), adds up
// the count changes in arrays indexed by token id, applies them to the pair table
// once per pair, and pushes each new pair once. Counts of other pairs only fall,
// so their heap entries are left too high and put back at the true count when
// popped (a lazy decrease-key: the first entry popped at its true count is the
// maximum). Ties go to the greatest pair of token strings compared through
// `order` (a byte permutation), so the result equals the pure-Python trainer's,
// merge for merge.
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

#include "count_table.h"
#include "pair_table.h"
#include "scan.h"
#include "ticker.h"

namespace tf {
namespace bpe_train {



// Everything the loop knows about one pair, in one open-addressing table:
// its count and its list of holder words.
struct PairInfo {
  uint64_t key;
  int64_t count;
  uint32_t list;  // index into Merger::lists, or NONE
  static PairInfo blank() { return PairInfo{~0ull, 0, ~0u}; }
};

using PairTable = tf::PairTable<PairInfo, 1 << 16>;

struct Merger {
  std::vector<std::string> keys;  // token id -> bytes mapped through `order`
  // The words, flat: word i is at[i] in `syms`, a record [length, count low, count high,
  // symbols...] that shrinks in place as merges apply (its length says how much is live).
  // One record per word keeps its count and first symbols in one cache line, and the
  // merge loop, which visits words in increasing index, reads `syms` front to back.
  std::vector<uint32_t> syms;
  std::vector<uint64_t> at;
  PairTable pairs;
  std::vector<std::vector<uint32_t>> lists;  // holder words of a pair, increasing (may hold stale entries)

  // Appends a word of n >= 2 bytes seen `freq` > 0 times.
  void add_word(const uint8_t* s, size_t n, int64_t freq) {
    at.push_back(syms.size());
    syms.push_back((uint32_t)n);
    syms.push_back((uint32_t)(uint64_t)freq);
    syms.push_back((uint32_t)((uint64_t)freq >> 32));
    syms.insert(syms.end(), s, s + n);
  }
  size_t num_words() const { return at.size(); }

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


  Ticker ticker;  // see the top of this file

  // Up to num_merges merges (a, b); merge k creates id keys.size() + k (at the start).
  std::vector<std::pair<uint32_t, uint32_t>> run(size_t num_merges);
};


// The distinct pre-tokens (byte strings) and how often each was added, first seen first.
using PieceTable = CountTable<uint8_t>;

// Counts the pieces of each UTF-8 text (texts[k] = (bytes, length)) under the scanner pat
// into table.
void count_pieces(const std::vector<std::pair<const char*, size_t>>& texts, Pattern pat, PieceTable& table);

}  // namespace bpe_train
}  // namespace tf

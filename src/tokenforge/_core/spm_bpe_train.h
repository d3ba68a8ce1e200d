// Native SentencePiece-style BPE training: the merge loop of trainers/spm_bpe.py, merge for merge.
//
// Symbols are the alphabet characters (ids in code-point order, so comparing
// two id strings compares the pieces by code point, as Python compares str and
// as sentencepiece compares UTF-8 strings) and the merged pieces after them.
// The loop keeps, as the Python reference does, the 64-bit count of every
// *valid* adjacent pair (its concatenation passes sentencepiece's
// IsValidSentencePiece: length, ▁ only first, one script, digits), an index
// from each pair to the words that gained it, and a max-heap with lazy
// deletion: an entry is stale when the pair's count has changed since it was
// pushed or the pair is dead. The heap orders as sentencepiece's
// bpe_model_trainer.cc (0.2.x) does: the larger count, then the shorter piece,
// then the smaller piece string; two splits of one string (("aa", "a") and
// ("a", "aa")) come out shorter-left first. The best live pair is merged
// unless its string is already a piece (another split of the same string, or
// a meta piece): then it is dead for good. Each merge visits only the words
// indexed under the pair, merges left to right without overlap, subtracts the
// pairs touching an occurrence, adds the pairs touching a new symbol and
// pushes every pair whose count changed once. When no pair with a positive
// count is left, sentencepiece goes on taking pairs whose count fell to 0
// (pieces it saw once, in the same order): so does run().
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
namespace spm_bpe_train {



struct Pair {
  uint64_t key;
  int64_t count;
  uint32_t stamp;
  uint32_t list;  // index into Trainer::holders, or NONE
  int8_t valid;   // -1 not yet decided, 0/1
  uint8_t dead;   // merged, or its string was already a piece when it came up
  static Pair blank() { return Pair{~0ull, 0, 0, ~0u, -1, 0}; }
};

using PairTable = tf::PairTable<Pair, 1 << 14>;

// per-character flags (from Python)
constexpr int F_BAD = 1;    // U+2585, NUL or space: no piece of length > 1 holds it
constexpr int F_WS = 2;     // ▁: only as the first character
constexpr int F_DIGIT = 4;  // str.isdecimal()
constexpr int32_t S_INHERITED = -1;  // script: takes the script of the character before
constexpr int32_t S_ANY = -2;        // Python's None: compatible with every script

// the first k in [i, n) with w[k] == a, else n (blocks of 8 compile to vector compares)
inline size_t find_from(const uint32_t* w, size_t i, size_t n, uint32_t a) {
  for (; i + 8 <= n; i += 8) {
    uint32_t any = 0;
    for (int j = 0; j < 8; ++j) any |= (uint32_t)(w[i + j] == a);
    if (any) break;
  }
  for (; i < n; ++i)
    if (w[i] == a) return i;
  return n;
}

struct Trainer {
  // settings
  size_t max_len = 16;
  bool split_digits = false, split_by_number = true, split_by_script = true;
  // alphabet (ids in code-point order)
  std::vector<int32_t> script;
  std::vector<uint8_t> flags;
  // symbols: alphabet characters, then merged pieces, as strings of character ids
  std::vector<std::u32string> sym;
  std::unordered_set<std::u32string> pieces;  // merged pieces and multi-character meta pieces
  std::vector<std::vector<uint32_t>> words;
  std::vector<int64_t> freqs;
  size_t n_merges = 0;

  PairTable pairs;
  std::vector<std::vector<uint32_t>> holders;
  uint32_t stamp = 0;

  struct Entry {
    int64_t count;
    uint32_t len;  // characters of sym[a] + sym[b]
    uint32_t a, b;
  };
  // sym[xa] + sym[xb] against sym[ya] + sym[yb] (the same length): <0, 0, >0
  static int concat_cmp(const std::u32string& xa, const std::u32string& xb, const std::u32string& ya,
                        const std::u32string& yb) {
    const size_t n = xa.size() + xb.size();
    for (size_t i = 0; i < n; ++i) {
      const char32_t cx = i < xa.size() ? xa[i] : xb[i - xa.size()];
      const char32_t cy = i < ya.size() ? ya[i] : yb[i - ya.size()];
      if (cx != cy) return cx < cy ? -1 : 1;
    }
    return 0;
  }
  // "x has lower priority than y": smaller count; on a tie the longer piece, then the larger
  // piece string, then (one string, two splits) the longer left part
  struct Less {
    const std::vector<std::u32string>* sym;
    bool operator()(const Entry& x, const Entry& y) const {
      if (x.count != y.count) return x.count < y.count;
      if (x.len != y.len) return x.len > y.len;
      const auto& s = *sym;
      const int c = concat_cmp(s[x.a], s[x.b], s[y.a], s[y.b]);
      if (c != 0) return c > 0;
      return s[x.a].size() > s[y.a].size();
    }
  };
  Entry entry(int64_t count, uint32_t a, uint32_t b) const {
    return Entry{count, (uint32_t)(sym[a].size() + sym[b].size()), a, b};
  }
  std::priority_queue<Entry, std::vector<Entry>, Less> heap{Less{&sym}};

  // is_valid_piece(sym[a] + sym[b]) of trainers/spm_bpe.py
  bool valid_concat(uint32_t a, uint32_t b) const {
    const std::u32string& x = sym[a];
    const std::u32string& y = sym[b];
    size_t n = x.size() + y.size();
    if (n == 0 || n > max_len) return false;
    int32_t prev = S_ANY;
    for (size_t pos = 0; pos < n; ++pos) {
      uint32_t c = pos < x.size() ? (uint32_t)x[pos] : (uint32_t)y[pos - x.size()];
      uint8_t f = flags[c];
      if (f & F_BAD) return false;
      if (f & F_WS) {
        if (pos > 0) return false;
        continue;
      }
      int32_t s = script[c];
      if (s == S_INHERITED) s = prev;
      bool digit = (f & F_DIGIT) != 0;
      if (digit && !split_by_number) s = S_ANY;
      if (digit && split_digits && n > 1) return false;
      if (split_by_script && s != S_ANY && prev != S_ANY && prev != s) return false;
      prev = s;
    }
    return true;
  }

  // the pair's slot, with its validity decided
  Pair& pair(uint32_t a, uint32_t b) {
    Pair& p = pairs.get(pk(a, b));
    if (p.valid < 0) p.valid = valid_concat(a, b) ? 1 : 0;
    return p;
  }

  void hold(Pair& p, uint32_t idx) {
    if (p.list == PairTable::NONE) {
      p.list = (uint32_t)holders.size();
      holders.emplace_back();
    }
    auto& l = holders[p.list];
    if (l.empty() || l.back() != idx) l.push_back(idx);
  }

  Ticker ticker;  // watches run() (ticker.h); what it learns never depends on it

  std::vector<std::pair<uint32_t, uint32_t>> run();
};

}  // namespace spm_bpe_train
}  // namespace tf

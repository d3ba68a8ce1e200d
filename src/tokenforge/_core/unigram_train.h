// Unigram language-model training: the hot loops of EM (plain C++17; binding.cpp wraps them).
//
// A model is a table of log-probabilities (one score per id) and a trie of the
// pieces that may appear in a segmentation, over Unicode code points; training
// switches pieces off between rounds (Model::absent) without rebuilding it. Every
// position of a text starts the pieces the trie finds there; a position with no
// one-character piece also starts an "unknown" node of score min_score - 10
// (sentencepiece's kUnkPenalty), so a segmentation always exists.
//
// Encoding does not use this file: its one native Viterbi is unigram::UnigramLattice
// (unigram.h, a double-array trie, float32 or double arithmetic; _core.SpmUnigram).
// Why there are two tries and two Viterbis: see the top of unigram.h.
//
//   viterbi   best segmentation, with sentencepiece 0.2.3's arithmetic: float node
//             and path scores, path scores rebased to 0 when they pass +-1e5. On
//             equal scores the earlier start (the longer last piece) wins. Used by
//             viterbi_counts and alternatives (pruning; exclude_whole gives a piece's
//             second-best segmentation) and by the unigram_viterbi binding, which tests
//             and fuzz/fuzz_core.py use to cross-check the two tries (and a model
//             after unigram_rescore).
//   estep     forward-backward expected counts of every piece over ALL
//             segmentations of every word (the E-step of EM training), in double.
//             Per-node contributions are rounded to 2^-24 and summed as int64,
//             so the result does not depend on the number of threads or on the
//             order of the words.
//   viterbi_counts   how often each piece is on the Viterbi path (pruning).
//   alternatives     for each piece: its second-best segmentation (pruning).
//
// The pure-Python twins live in tokenforge/models/unigram.py and
// tokenforge/trainers/unigram.py; tests compare them with these.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <exception>
#include <limits>
#include <new>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <vector>

#include "common.h"

namespace tf {
namespace unigram {


constexpr double kFixedScale = 16777216.0;  // 2^24: the unit of the expected-count sums

// Children of the trie in one open-addressing table keyed by (node << 21 | code point).
class Trie {
 public:
  Trie() : keys_(16, 0), vals_(16, -1), mask_(15) { value_.push_back(-1); }

  int32_t child(int32_t node, uint32_t cp) const {
    const uint64_t k = key(node, cp);
    for (size_t i = hash(k) & mask_;; i = (i + 1) & mask_) {
      if (keys_[i] == k) return vals_[i];
      if (keys_[i] == 0) return -1;
    }
  }
  int32_t value(int32_t node) const { return value_[(size_t)node]; }

  void insert(const uint32_t* s, size_t n, int32_t id) {
    int32_t node = 0;
    for (size_t i = 0; i < n; ++i) {
      int32_t c = child(node, s[i]);
      if (c < 0) {
        c = (int32_t)value_.size();
        value_.push_back(-1);
        put(key(node, s[i]), c);
      }
      node = c;
    }
    value_[(size_t)node] = id;
  }

 private:
  static uint64_t key(int32_t node, uint32_t cp) { return (((uint64_t)node << 21) | cp) + 1; }
  static size_t hash(uint64_t k) { return (size_t)mix64_half(k); }
  void put(uint64_t k, int32_t v) {
    if ((used_ + 1) * 4 > keys_.size() * 3) grow();  // at most 3/4 full
    size_t i = hash(k) & mask_;
    while (keys_[i] != 0) i = (i + 1) & mask_;
    keys_[i] = k;
    vals_[i] = v;
    ++used_;
  }
  void grow() {
    std::vector<uint64_t> ok;
    std::vector<int32_t> ov;
    ok.swap(keys_);
    ov.swap(vals_);
    keys_.assign(ok.size() * 2, 0);
    vals_.assign(ok.size() * 2, -1);
    mask_ = keys_.size() - 1;
    for (size_t j = 0; j < ok.size(); ++j) {
      if (ok[j] == 0) continue;
      size_t i = hash(ok[j]) & mask_;
      while (keys_[i] != 0) i = (i + 1) & mask_;
      keys_[i] = ok[j];
      vals_[i] = ov[j];
    }
  }
  std::vector<uint64_t> keys_;
  std::vector<int32_t> vals_;
  size_t mask_;
  size_t used_ = 0;
  std::vector<int32_t> value_;  // piece id of each trie node, or -1
};

struct Model {
  Trie trie;
  std::vector<double> score;    // per id: the score a node of this piece gets
  std::vector<uint8_t> absent;  // per id (or empty): 1 = left out of segmentations (training)
  float unk_score = 0;          // score of an unknown-character node
  size_t max_len = 0;           // longest piece, in code points
  std::vector<int32_t> root;    // trie children of the root, by code point (a direct table)
  // Passes running with the GIL released (changed only with the GIL held). unigram_rescore
  // refuses to change the scores under them (binding.cpp): another Python thread could otherwise resize
  // `absent` while a pass reads it (a use-after-free found by fuzz_unigram_hostile's review).
  int busy = 0;

  int32_t id_at(int32_t node) const {
    const int32_t id = trie.value(node);
    return (id >= 0 && !absent.empty() && absent[(size_t)id]) ? -1 : id;
  }
  // Adds piece s[0:n] (n >= 1) with id: to the trie and the root table.
  void add(const uint32_t* s, size_t n, int32_t id) {
    trie.insert(s, n, id);
    max_len = std::max(max_len, n);
    if (s[0] >= root.size()) root.resize((size_t)s[0] + 1, -1);
    root[s[0]] = trie.child(0, s[0]);
  }
  int32_t step(int32_t node, uint32_t cp) const {
    if (node == 0) return cp < root.size() ? root[cp] : -1;
    return trie.child(node, cp);
  }
};

struct Node {
  uint32_t start, end;
  int32_t id;  // -1: unknown character
  double score;
};

// All nodes of the lattice of s[0:n], ordered by start, then by length.
void lattice(const Model& m, const uint32_t* s, size_t n, std::vector<Node>& nodes);

// Best path of s[0:n]: ids (-1 = unknown character) and their start positions, in order.
// exclude_whole: ignore the single node covering all of s (the second-best of a piece).
// Returns false if no path exists. Float path scores rebased past +-1e5, as sentencepiece 0.2.3.
bool viterbi(const Model& m, const uint32_t* s, size_t n, std::vector<int32_t>& ids,
                    std::vector<uint32_t>& starts, bool exclude_whole = false);

// Errors of a pass that become Python exceptions (not out of memory): a NaN (from +-inf
// scores; the Python twin's int(nan) raises ValueError too) or a result past int64
// (OverflowError).
struct NotANumber : std::domain_error {
  using std::domain_error::domain_error;
};
struct Overflow : std::overflow_error {
  using std::overflow_error::overflow_error;
};

// The passes sum in 128 bits and narrow once at the end (narrow()): the result is exact, or
// OverflowError exactly when the exact total does not fit int64, whatever the word order and
// thread count. (They summed int64 terms before: signed overflow, UB, with huge frequencies or
// scores; and llround of NaN, +-inf or past int64 is unspecified, x86 gives INT64_MIN: silently
// wrong expected counts for -inf scores, found by fuzz_unigram_estep.)
using Acc = __int128;

// llround(x) (halves away from zero) in 128 bits, or throw.
inline Acc fixed_round(double x) {
  if (std::isnan(x)) throw NotANumber("unigram: NaN in the E-step (infinite scores?)");
  if (!(std::fabs(x) < 0x1p126)) throw Overflow("unigram: an E-step term is too large");
  if (std::fabs(x) >= 0x1p52) return (Acc)x;  // already an integer
  return (Acc)std::llround(x);
}
inline void add_checked(Acc& acc, Acc d) {
  if (__builtin_add_overflow(acc, d, &acc)) throw Overflow("unigram: a sum does not fit 128 bits");
}
inline int64_t narrow(Acc v) {
  if (v < (Acc)INT64_MIN || v > (Acc)INT64_MAX) throw Overflow("unigram: a count does not fit int64");
  return (int64_t)v;
}

struct Corpus {
  std::vector<uint32_t> chars;  // all words, back to back
  std::vector<size_t> offsets;  // word k is chars[offsets[k]:offsets[k+1]]
  std::vector<int64_t> freqs;
  // Per word (or empty: all 3), for the seed search: what follows it in running text, bit 1 the
  // next word's space, bit 2 the end of a sentence.
  std::vector<uint8_t> ends;
  size_t size() const { return freqs.size(); }
};

// E-step over words [lo, hi): adds fixed-point expected counts to `expected` and
// fixed-point freq * log P(word) to `objective`.
void estep_range(const Model& m, const Corpus& c, size_t lo, size_t hi, std::vector<Acc>& expected,
                        Acc& objective);

// Viterbi frequency of every piece over words [lo, hi).
void viterbi_counts_range(const Model& m, const Corpus& c, size_t lo, size_t hi, std::vector<Acc>& counts,
                                 Acc& ntokens);

// Runs fn(lo, hi, acc, scalar) on `threads` contiguous slices and sums the integer partials
// (128-bit, narrowed to int64 at the end: OverflowError iff the exact result does not fit).
// Slices hold about the same number of characters. The sums are of integers, so neither the
// slicing nor the thread count changes the result.
template <class Fn>
void run_sliced(const Corpus& c, size_t width, int threads, Fn fn, std::vector<int64_t>& out, int64_t& scalar) {
  const size_t nwords = c.size();
  // At most kMaxThreads (each slice holds a `width` accumulator; the result does not depend on
  // the count): num_threads = 2^31 - 1 on a big corpus used to start threads until creation
  // failed, and the std::system_error unwound past joinable threads: std::terminate.
  constexpr int kMaxThreads = 64;
  if (threads < 1) threads = 1;
  if (threads > kMaxThreads) threads = kMaxThreads;
  if ((size_t)threads > nwords) threads = nwords > 0 ? (int)nwords : 1;
  std::vector<size_t> cut((size_t)threads + 1, nwords);
  cut[0] = 0;
  {
    size_t t = 1;
    const size_t total = c.chars.size();
    for (size_t k = 0; k < nwords && t < (size_t)threads; ++k)
      if (c.offsets[k] * (size_t)threads >= total * t) cut[t++] = k;
  }
  std::vector<std::vector<Acc>> acc((size_t)threads, std::vector<Acc>(width, 0));
  std::vector<Acc> scal((size_t)threads, 0);
  // each slice's exception is kept and the first one rethrown after every thread has joined
  // (it used to become bad_alloc: an E-step NaN or overflow would read as out of memory)
  std::vector<std::exception_ptr> failed((size_t)threads);
  auto work = [&](int t) {
    try {
      const size_t lo = cut[(size_t)t], hi = cut[(size_t)t + 1];
      fn(lo, hi, acc[(size_t)t], scal[(size_t)t]);
    } catch (...) {
      failed[(size_t)t] = std::current_exception();
    }
  };
  std::vector<std::thread> pool;
  pool.reserve((size_t)threads);
  int started = 1;
  for (; started < threads; ++started) {
    try {
      pool.emplace_back(work, started);
    } catch (const std::system_error&) {  // no more threads: the rest run here
      break;
    }
  }
  for (int t = started; t < threads; ++t) work(t);
  work(0);
  for (auto& th : pool) th.join();
  for (auto& f : failed)
    if (f) std::rethrow_exception(f);
  out.assign(width, 0);
  scalar = 0;
  for (size_t i = 0; i < width; ++i) {
    Acc v = 0;
    for (int t = 0; t < threads; ++t) add_checked(v, acc[(size_t)t][i]);
    out[i] = narrow(v);
  }
  Acc v = 0;
  for (int t = 0; t < threads; ++t) add_checked(v, scal[(size_t)t]);
  scalar = narrow(v);
}

// ----------------------------------------------------------------------------------------------
// Seed pieces: every substring of length 2..max_len of the training words that occurs at least
// twice (weighted by word frequency), is valid as a piece, and is right-maximal the way
// sentencepiece's byte-level suffix array over whole sentences sees it: its occurrences are
// followed by at least two different symbols, a symbol being the first UTF-8 byte of the next
// character, and after a word either the next word's space (U+2581) or the end of a sentence
// (Corpus::ends). Found with a suffix array of the words (comparisons capped at max_len + 1
// characters, entries of 32 bits below 2^32 characters) and its LCP intervals (LCP values
// computed as the intervals are walked: no LCP or prefix-sum arrays).



struct CharInfo {
  int32_t script = 0;  // script id (Hiragana/Katakana already merged into Han); -2 inherited
  uint8_t flags = 0;   // 1 decimal digit, 2 forbidden in pieces, 4 the word-boundary mark U+2581
};

struct SeedCand {
  size_t pos;     // start in Corpus::chars
  uint32_t len;   // in code points
  int64_t freq;   // weighted occurrences
};

bool valid_piece(const uint32_t* s, size_t n, const std::vector<uint32_t>& keys,
                        const std::vector<CharInfo>& info, bool split_digits, bool split_by_script);

void seed_candidates(const Corpus& c, size_t max_len, const std::vector<uint32_t>& keys,
                            const std::vector<CharInfo>& info, bool split_digits, bool split_by_script,
                            int threads, std::vector<SeedCand>& out);

}  // namespace unigram
}  // namespace tf

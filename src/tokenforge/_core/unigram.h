// Unigram encoding, natively: the Viterbi over a double-array trie (the algorithm of the
// Python type SpmUnigram and of spm_unigram_encode) and the unknown merging after it.
//
// Why two Unigram tries and two Viterbis (as sentencepiece's unigram_model.h keeps a
// separate lattice for training):
//
//   encoding  UnigramLattice (unigram.h/.cpp): a double-array trie over the UTF-8 bytes
//             of the pieces, built once per model, one array probe per byte, no per-node
//             "is this piece switched off" test, and two arithmetics (sentencepiece's
//             float32 with rebasing for .model files, HF's doubles for tokenizer.json).
//   training  unigram::Model (unigram_train.h/.cpp): a hash trie over code points whose
//             pieces are switched off (Model::absent) and rescored (unigram_rescore)
//             between EM rounds without rebuilding it, and whose Viterbi also answers
//             "best segmentation other than the whole piece" (exclude_whole, pruning) and
//             skips unreachable positions; next to it the E-step's full lattice (every
//             node, forward-backward in double), always float32 for the Viterbi.
//
// One structure for both would make encoding pay for training (an absent test per
// matched node in the hot loop, or a code-point hash probe instead of a byte probe) or
// training pay for encoding (re-placing the double array after every pruning round).
// Both give the same candidates at a position (the pieces that are a prefix of the rest,
// shortest first; a repeated piece keeps the later id) and the same tie rule (strict '>':
// the earlier start wins), so in float32 they give the same path: tests and
// fuzz/fuzz_core.py (fuzz_spm_unigram, fuzz_unigram_viterbi) check SpmUnigram.viterbi ==
// unigram_viterbi on the same model.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common.h"

namespace tf {
namespace unigram {

// The encoding side of a Unigram model - the one native Viterbi of encoding (Unigram.tokenize
// and the fused spm_unigram_encode both run it): the pieces that may appear in a segmentation
// in a double-array trie over their UTF-8 bytes (one array probe per byte, as sentencepiece's
// darts), their node scores, and the unknown-character score. The candidates at a position
// are every piece that is a prefix of the rest, shortest first; on equal path scores the
// earlier start (the longer last piece) wins (strict '>'). Two arithmetics, as the Python
// reference Unigram._viterbi_py:
//   float32  sentencepiece 0.2.3's EncodeOptimized: float node and path scores, a path score
//            past +-1e5 rebased to 0 (with every score reached ahead of it). Models with
//            piece types (.model files).
//   double   HF tokenizers' lattice: double scores and sums, no rebasing (tokenizer.json
//            Unigram models, no piece types).
// Ties are common in real text ("-" runs, "0"/"00" pieces) and the rounding decides them,
// so each arithmetic must match its reference bit for bit. (Training keeps its own trie and
// Viterbi, unigram_train.h: see the top of this file.)
class UnigramLattice {
 public:
  // pieces[i] empty: piece i is not in the lattice. scores must not be NaN.
  UnigramLattice(const std::vector<U32>& pieces, const std::vector<double>& scores, double unk_score,
                 bool float32 = true);

  bool float32() const { return float32_; }

  // Best path of s[0:n]: ids (-1 = unknown character) and their start positions.
  void viterbi(const uint32_t* s, size_t n, std::vector<int32_t>& ids, std::vector<uint32_t>& starts) const;

 private:
  // T: the score type. float rebases path scores past +-1e5 (sentencepiece's kScoreResetThreshold).
  template <class T>
  void run(const uint32_t* s, size_t n, std::vector<int32_t>& ids, std::vector<uint32_t>& starts) const;

  template <class T>
  const std::vector<T>& scores() const;

  static constexpr int32_t LEAF = -1024;  // base of a leaf: base + byte < 0, never a unit
  struct Unit {
    int32_t base, check, value;
  };
  std::vector<Unit> da_;
  bool float32_;
  std::vector<float> score_f_;   // node scores, float32 arithmetic
  std::vector<double> score_d_;  // node scores, double arithmetic
  float unk_f_;
  double unk_d_;
};

// Unigram._finish: the path of t[0:n] (ids, starts: UnigramLattice::viterbi) as tokens, each
// passed to emit(id, start, end). A run of unknown characters becomes one unk_id token over the
// run or, with byte_ids (256 ids, or empty), the byte pieces of the UTF-8 of each of its
// characters, each spanning its character. false when a run has neither: the caller raises.
template <class Emit>
bool finish_path(const uint32_t* t, size_t n, const std::vector<int32_t>& ids, const std::vector<uint32_t>& starts,
                 int32_t unk_id, const std::vector<int32_t>& byte_ids, Emit&& emit) {
  const size_t k_end = ids.size();
  for (size_t k = 0; k < k_end;) {
    if (ids[k] >= 0) {
      emit(ids[k], starts[k], k + 1 < k_end ? starts[k + 1] : (uint32_t)n);
      ++k;
      continue;
    }
    size_t j = k + 1;  // a run of unknown characters
    while (j < k_end && ids[j] < 0) ++j;
    const uint32_t a = starts[k], b = j < k_end ? starts[j] : (uint32_t)n;
    if (!byte_ids.empty()) {
      for (uint32_t q = a; q < b; ++q) emit_byte_pieces(t[q], byte_ids, [&](int32_t id) { emit(id, q, q + 1); });
    } else if (unk_id >= 0) {
      emit(unk_id, a, b);
    } else {
      return false;
    }
    k = j;
  }
  return true;
}

}  // namespace unigram
}  // namespace tf

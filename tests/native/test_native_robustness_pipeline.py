"""Hostile inputs to the Unigram and WordPiece-training native code, found by fuzzing.

Each test replays an input that crashed the process, corrupted memory or gave a silently
wrong answer in ``_core/unigram.h`` / ``_core/wordpiece_train.h`` before they were fixed
(``fuzz/fuzz_core.py`` targets ``fuzz_unigram_*`` / ``fuzz_wordpiece_*``, ``fuzz/fuzz_native.cc``;
see ``fuzz/README.md``). The rule they protect: any input gives the reference's result or a
Python exception, never a crash, a hang or a wrong number.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from tokenforge import _native
from tokenforge.models.unigram import Unigram
from tokenforge.trainers import unigram as tu
from tokenforge.trainers.wordpiece import WordPieceTrainer

pytestmark = pytest.mark.skipif(not _native.available(), reason="the native core is not built")
C = _native.core("native")


def _llround_exact(x: float) -> int:
    """C's llround (halves away from zero), exactly."""
    r = math.floor(x)
    d = x - r
    return int(r + 1 if d > 0.5 or (d == 0.5 and x > 0) else r)


def _ref(pieces):
    """The Python model with the core's arithmetic: piece types give float32 scores (sentencepiece)."""
    return Unigram(pieces, unk_id=None, types=[1] * len(pieces), backend="python")


def _native_estep(pieces, words, threads=1):
    ref = _ref(pieces)
    model = C.unigram_model(list(ref.pieces), list(ref._node_score), ref._unk_score)
    corpus = C.unigram_corpus([w for w, _ in words], [c for _, c in words])
    raw, obj = C.unigram_estep(model, corpus, threads)
    return np.frombuffer(raw, dtype=np.int64).tolist(), obj


class _MutatesOnConvert:
    """Looks like a number; converting it empties (or grows) the list it sits in."""

    def __init__(self, victim: list, grow: bool = False) -> None:
        self.victim = victim
        self.grow = grow

    def __index__(self) -> int:
        if self.grow:
            self.victim.extend([0] * 1000)
        else:
            self.victim.clear()
        return 0

    def __float__(self) -> float:
        self.victim.clear()
        return 0.0


# -- Unigram E-step -------------------------------------------------------------------------------


def test_estep_nan_from_infinite_scores_raises_like_the_reference():
    # -inf score -> unknown nodes at -inf -> alpha = NaN. The core returned llround(NaN) =
    # INT64_MIN as an expected count; the reference raises ValueError.
    pieces, words = [("b", -math.inf)], [("aaaaaaa", 1), ("", 1)]
    with pytest.raises(ValueError):
        tu.estep_py(_ref(pieces), words)
    for threads in (1, 2):
        with pytest.raises(ValueError):
            _native_estep(pieces, words, threads)


def test_estep_large_expected_counts_are_rounded_exactly(monkeypatch):
    # Expected counts past 2^52 units of 2^-24 (2^28 occurrences): the core's rounding is exact.
    monkeypatch.setattr(tu, "_llround", _llround_exact)
    pieces = [("▁", -1.0), ("a", -2.0), ("aa", -10.0), ("▁▁▁", -2.5)]
    words = [("▁▁▁▁▁▁▁▁▁", 2**31), ("baaaaaaaa", 1)]
    want, want_obj = tu.estep_py(_ref(pieces), words)
    assert _native_estep(pieces, words) == (want.tolist(), want_obj)
    # (floor(x + 0.5) in floats, as trainers/unigram.py's _llround has it, gives ...926 here)
    assert want.tolist()[0] == 130237305824004924


def test_estep_objective_with_partial_sums_past_int64_is_exact():
    # +1e5 scores: per-word terms of +-4e18 whose running int64 sum overflowed (UB) although
    # the total fits; the core now sums in 128 bits.
    pieces = [("▁", math.inf), ("baba", -100000.0), ("aa", 100000.0), ("\x00", -1.0)]
    words = [("a▅aaaaaaa", 592138), ("aaaa😀aaaa", 788746), ("aaaaaaaaa", 592138), ("aaaa😀aaaa", 788746),
             ("aaaaaaa😀a", 592138), ("aaa😀aaaaa", 592138), ("-a\x00aaaaa中", 592138), ("😀aaaaaaaa", 1), ("", 1)]
    want, want_obj = tu.estep_py(_ref(pieces), words)
    for threads in (1, 2, 5):
        assert _native_estep(pieces, words, threads) == (want.tolist(), want_obj)


def test_estep_and_viterbi_counts_past_int64_raise_overflow():
    pieces = [("a", -1.0)]
    words = [("aaaa", 2**62), ("aaaa", 2**62)]  # 2^65 occurrences of "a"
    ref = _ref(pieces)
    model = C.unigram_model(list(ref.pieces), list(ref._node_score), ref._unk_score)
    corpus = C.unigram_corpus([w for w, _ in words], [c for _, c in words])
    for fn in (C.unigram_estep, C.unigram_viterbi_counts):
        with pytest.raises(OverflowError):
            fn(model, corpus, 1)
    # the same counts with opposite signs cancel: the exact total fits and is returned
    # (2^62 + 2^62 passes int64 on the way: the core used to sum in int64, UB)
    corpus = C.unigram_corpus(["aa", "aa", "aa"], [2**61, 2**61, -(2**61)])
    for threads in (1, 2):
        raw, ntok = C.unigram_viterbi_counts(model, corpus, threads)
        assert np.frombuffer(raw, dtype=np.int64).tolist() == [2**62] and ntok == 2**62


@pytest.mark.parametrize("threads", [0, -1, -(2**31), 1, 2, 64, 2**31 - 1])
def test_any_thread_count_gives_the_one_thread_result(threads):
    ref = _ref([("a", -1.0), ("ab", -1.5), ("b", -2.0)])
    model = C.unigram_model(list(ref.pieces), list(ref._node_score), ref._unk_score)
    words = [("ab" * (k % 7) + "ba", k + 1) for k in range(300)]
    corpus = C.unigram_corpus([w for w, _ in words], [c for _, c in words])
    for fn in (C.unigram_estep, C.unigram_viterbi_counts):
        assert fn(model, corpus, threads) == fn(model, corpus, 1)


# -- Unigram binding: arguments -------------------------------------------------------------------


def test_model_scores_that_mutate_their_list_are_rejected():
    scores: list = [1.0, 2.0, 3.0]
    scores[0] = _MutatesOnConvert(scores)  # __float__ used to free the list being read
    with pytest.raises(TypeError):
        C.unigram_model(["a", "b", "c"], scores, 0.0)


def test_corpus_and_seed_ints_that_mutate_their_list_are_rejected():
    freqs: list = [1, 1, 1]
    freqs[0] = _MutatesOnConvert(freqs)
    with pytest.raises(TypeError):
        C.unigram_corpus(["a", "b", "c"], freqs)
    corpus = C.unigram_corpus(["ab"], [3])
    keys: list = [1, 2, 3]
    keys[1] = _MutatesOnConvert(keys)
    with pytest.raises(TypeError):
        C.unigram_seed(corpus, 3, keys, [0, 0, 0], b"\x00\x00\x00", True, True, 5)


def test_nan_scores_and_bad_seed_keys_are_value_errors():
    with pytest.raises(ValueError):
        C.unigram_model(["a"], [math.nan], -10.0)
    with pytest.raises(ValueError):
        C.unigram_model(["a"], [-1.0], math.nan)
    model = C.unigram_model(["a"], [-1.0], -11.0)
    with pytest.raises(ValueError):
        C.unigram_rescore(model, np.array([-1.0]).tobytes(), math.nan)
    corpus = C.unigram_corpus(["ab"], [3])
    for keys in ([-1], [0x110000], [2**40]):
        with pytest.raises(ValueError):
            C.unigram_seed(corpus, 3, keys, [0], b"\x00", False, False, 5)


def test_rescore_reads_an_unaligned_buffer():
    model = C.unigram_model(["a", "b", "ab"], [-1.0, -1.0, -1.0], -11.0)
    scores = np.array([-1.0, -1.0, -5.0]).tobytes()
    C.unigram_rescore(model, memoryview(b"\x00" + scores)[1:], -11.0)
    assert C.unigram_viterbi(model, "ab") == ([0, 1], [0, 1])
    C.unigram_rescore(model, np.array([-1.0, -1.0, -0.5]).tobytes(), -11.0)
    assert C.unigram_viterbi(model, "ab") == ([2], [0])


def test_seed_with_frequencies_near_int64_orders_like_the_reference():
    # freq * length = 2^63 wrapped negative in the core's sort key: "ab" sorted last.
    words = [("abab", 2**61), ("cdcd", 2**61 - 1)]
    chars = sorted({ch for w, _ in words for ch in w})
    args = (16, [ord(ch) for ch in chars], [0] * len(chars), bytes(len(chars)), False, False, 10)
    want = tu._Python(words).seed(*args)
    assert want[0][0] == "ab"
    assert tu._Native(C, words, 1).seed(*args) == want
    with pytest.raises(OverflowError):  # a substring frequency past int64
        tu._Native(C, [("abab", 2**62)], 1).seed(*args)


# -- WordPiece merge loop -------------------------------------------------------------------------


def test_wordpiece_word_that_grows_while_parsed_is_rejected():
    # __index__ appended to the word being read: a heap overflow of the id buffer.
    w: list = [0, 1, 0]
    w[1] = _MutatesOnConvert(w, grow=True)
    with pytest.raises(TypeError):
        C.wordpiece_learn([b"a", b"##a"], [w], [1], [3, 3], 2, 100, 0, [])
    words: list = [[0, 1], [1, 0]]
    with pytest.raises(TypeError):
        C.wordpiece_learn([b"a", b"##a"], words, [_MutatesOnConvert(words), 1], [5, 5], 2, 100, 0, [])


@pytest.mark.parametrize(
    "tokens, words, freqs, unit_freq, error",
    [
        ([b"a", b"a"], [[0, 1]], [1], [1, 1], ValueError),  # duplicate token
        ([b"a", b"##b"], [[0, 1]], [1], [0, 0], ValueError),  # unit count 0: score 1/0
        ([b"a", b"##b"], [[0, 1]], [5], [1, 1], ValueError),  # unit count below its occurrences
        ([b"a", b"##b"], [[0, 1]], [-1], [1, 1], ValueError),  # negative word count
        ([b"a", b"##b"], [[0, 1]], [1], [-1, 1], ValueError),  # negative unit count
        ([b"a", b"##b"], [[0, 1]], [1], [2**63 - 1, 2**63 - 1], OverflowError),  # sum past int64
        ([b"a", b"##b"], [[0, 2]], [1], [1, 1], ValueError),  # id out of range
        ([b"a", b"##b"], [[0, 1.0]], [1], [1, 1], TypeError),
    ],
)
def test_wordpiece_inconsistent_inputs_raise(tokens, words, freqs, unit_freq, error):
    with pytest.raises(error):
        C.wordpiece_learn(tokens, words, freqs, unit_freq, 2, 100, 0, [])


def test_wordpiece_trainer_backends_agree_on_fuzzed_counts():
    # shapes fuzz_wordpiece_train exercises: a prefix that is also a character, specials equal to
    # merge results, min_frequency, counts near 2^40
    counts = {"aab": 3, "ab": 2**40, "éa#b": 5, "b": 7, "a中a": 2, "##ab": 1}
    for prefix in ("##", "", "#", "a"):
        kw = dict(vocab_size=40, min_frequency=1, special_tokens=list(dict.fromkeys(["[UNK]", "ab", prefix + "b"])),
                  continuing_subword_prefix=prefix, show_progress=False)
        nat, ref = WordPieceTrainer(backend="native", **kw), WordPieceTrainer(backend="python", **kw)
        assert nat.train_from_counts(counts).get_vocab() == ref.train_from_counts(counts).get_vocab()
        assert nat.merges == ref.merges


# --- findings of the fuzzers in code outside the native headers -------------------------------


def test_unigram_training_backends_give_the_same_scores():
    from tokenforge.trainers.unigram import UnigramTrainer

    kw = dict(vocab_size=4, max_piece_length=2, num_sub_iterations=1, character_coverage=1.0, show_progress=False)
    a = UnigramTrainer(backend="python", **kw).train_from_counts({"----b": 43})
    b = UnigramTrainer(**kw).train_from_counts({"----b": 43})
    assert a.pieces == b.pieces and a.scores == b.scores


def test_python_llround_is_exact():
    from tokenforge.trainers.unigram import _llround

    assert _llround(0.49999999999999994) == 0
    assert _llround(-0.5) == -1 and _llround(2.5) == 3
    big = float(2**52 + 1)
    assert _llround(big) == 2**52 + 1 and _llround(-big) == -(2**52 + 1)


def test_wordpiece_native_training_takes_lone_surrogates_like_python():
    from tokenforge.trainers.wordpiece import WordPieceTrainer

    counts = {"a\ud800b": 5, "ab": 3, "\ud800\ud800": 2}
    kw = dict(vocab_size=40, special_tokens=["[UNK]"], show_progress=False)
    assert (WordPieceTrainer(backend="python", **kw).train_from_counts(counts).get_vocab()
            == WordPieceTrainer(**kw).train_from_counts(counts).get_vocab())


def test_unigram_user_defined_piece_with_a_lone_surrogate_loads():
    from tokenforge.models.unigram import Unigram

    m = Unigram([("<unk>", 0.0), ("a", -1.0), ("x\ud800", 0.0)], types=[2, 1, 4])
    assert m.token_to_id("x\ud800") == 2

"""WordPiece training's merge rules (``merge="frequency" | "likelihood" | "score"``)
and character forms (``all_forms``): native loop == Python reference, determinism,
the documented tie rules, hand-checked first merges and the documented default."""

from __future__ import annotations

import inspect
import json
import math
import os
import random
import subprocess
import sys
from collections import Counter

import pytest

import tokenforge
from tokenforge import _native
from tokenforge.errors import TrainingError
from tokenforge.trainers import wordpiece
from tokenforge.trainers.wordpiece import DEFAULT_MERGE, MERGE_METHODS, WordPieceTrainer, likelihood_key

METHODS = ["frequency", "likelihood", "score"]
needs_native = pytest.mark.skipif(not _native.available(), reason="native core not built")


def _train(counts, method, backend="python", **kw):
    kw.setdefault("vocab_size", 100)
    kw.setdefault("special_tokens", ["[UNK]"])
    t = WordPieceTrainer(show_progress=False, merge=method, backend=backend, **kw)
    model = t.train_from_counts(counts)
    return model.get_vocab(), t.merges


# -- the default -------------------------------------------------------------------


def test_the_default_rule_is_frequency_with_the_forms_the_words_use():
    assert DEFAULT_MERGE == "frequency" and MERGE_METHODS == ("score", "frequency", "likelihood")
    assert inspect.signature(WordPieceTrainer).parameters["merge"].default == "frequency"
    t = WordPieceTrainer(show_progress=False)
    assert t.merge == "frequency" and t.all_forms is False
    assert WordPieceTrainer(merge="likelihood").all_forms is False
    assert WordPieceTrainer(merge="score").all_forms is True
    assert WordPieceTrainer(merge="frequency", all_forms=True).all_forms is True
    counts = {"hugs": 5, "bun": 4, "pug": 2, "hug": 10, "pun": 12}
    default = WordPieceTrainer(vocab_size=40, show_progress=False)
    explicit = WordPieceTrainer(vocab_size=40, show_progress=False, merge="frequency", all_forms=False)
    assert default.train_from_counts(counts) == explicit.train_from_counts(counts)
    assert default.merges == explicit.merges


def test_the_preset_and_the_docs_use_the_default(tmp_path):
    corpus = tmp_path / "c.txt"
    corpus.write_text("hug hugs pug pun bun " * 20 + "\n", encoding="utf-8")
    tok = tokenforge.train_wordpiece([str(corpus)], vocab_size=30, show_progress=False, workers=1)
    counts = {"hug": 20, "hugs": 20, "pug": 20, "pun": 20, "bun": 20}
    model = WordPieceTrainer(vocab_size=30, show_progress=False).train_from_counts(counts)
    assert tok.get_vocab() == model.get_vocab()
    assert wordpiece.__doc__ is not None and '``"frequency"`` (the default)' in wordpiece.__doc__


def test_bad_settings_raise():
    with pytest.raises(TrainingError, match="merge must be one of"):
        WordPieceTrainer(merge="bpe")
    with pytest.raises(TrainingError, match="all_forms"):
        WordPieceTrainer(all_forms=1)  # type: ignore[arg-type]


# -- hand-checked first merges -----------------------------------------------------

# Units: a 10+8 = 18 (word-initial), x 8, ##b 10+8 = 18, q 2, ##u 2; N = 48.
#   pair       f(xy)  likelihood c*log(c*N/(f(x)f(y)))   score c/(f(x)f(y))
#   (a, ##b)     10   10*log(480/324) = 3.93              10/324 = 0.031
#   (x, ##b)      8    8*log(384/144) = 7.85               8/144 = 0.056
#   (q, ##u)      2    2*log( 96/4)   = 6.36               2/4   = 0.5
HAND = {"ab": 10, "xb": 8, "a": 8, "qu": 2}


def test_the_hand_computed_keys():
    assert likelihood_key(10, 18, 18, 48) == pytest.approx(10 * math.log(480 / 324))
    assert likelihood_key(8, 8, 18, 48) == pytest.approx(8 * math.log(384 / 144))
    assert likelihood_key(2, 2, 2, 48) == pytest.approx(2 * math.log(24))
    assert likelihood_key(8, 8, 18, 48) > likelihood_key(2, 2, 2, 48) > likelihood_key(10, 18, 18, 48)


@pytest.mark.parametrize("backend", ["python"] + (["native"] if _native.available() else []))
@pytest.mark.parametrize(
    "method, first", [("frequency", ("a", "##b")), ("likelihood", ("x", "##b")), ("score", ("q", "##u"))]
)
def test_each_rule_picks_its_own_first_merge(method, first, backend):
    _, merges = _train(HAND, method, backend)
    assert merges[0] == first


def test_frequency_merges_are_bpe_merges_by_count():
    # each merge is the pair seen most often in the current segmentation
    counts = {"hugs": 5, "bun": 4, "pug": 2, "hug": 10, "pun": 12}
    _, merges = _train(counts, "frequency")
    # (##u, ##g) 17 (hug, hugs, pug), then (##u, ##n) 16, then (h, ##ug) 15
    assert merges[:3] == [("##u", "##g"), ("##u", "##n"), ("h", "##ug")]


# -- ties ----------------------------------------------------------------------------


@pytest.mark.parametrize("backend", ["python"] + (["native"] if _native.available() else []))
@pytest.mark.parametrize("method", ["frequency", "likelihood"])
def test_equal_keys_go_to_the_older_units(method, backend):
    # ids: [UNK] 0, a 1, x 2, ##b 3, ##c 4, ##y 5. Every pair is seen 3 times and every unit
    # 3 times, so all keys tie: (a, ##b) = (1, 3) goes first and makes ab = 6. Then
    # (ab, ##c) and (x, ##y) tie again (3 and 3, 3 and 3): (x, ##y) = (2, 5) has the older
    # units; by strings "ab" < "x" would win instead.
    for counts in ({"abc": 3, "xy": 3}, {"xy": 3, "abc": 3}):
        _, merges = _train(counts, method, backend)
        assert merges[:3] == [("a", "##b"), ("x", "##y"), ("ab", "##c")]


@pytest.mark.parametrize("backend", ["python"] + (["native"] if _native.available() else []))
@pytest.mark.parametrize("method", ["frequency", "likelihood"])
def test_equal_keys_among_characters_go_by_code_point(method, backend):
    # (b, ##a) and (a, ##b): same count and, by symmetry, the same likelihood key; the
    # characters' ids are in code point order, word-initial forms first
    for counts in ({"ba": 3, "ab": 3}, {"ab": 3, "ba": 3}):
        _, merges = _train(counts, method, backend)
        assert merges[0] == ("a", "##b")
    # code point order, not UTF-16 or locale order: U+00E9 before U+65E5 before U+1F600
    for counts in ({"\U0001f600x": 2, "日x": 2, "éx": 2}, {"éx": 2, "日x": 2, "\U0001f600x": 2}):
        _, merges = _train(counts, method, backend)
        assert [m[0] for m in merges[:3]] == ["é", "日", "\U0001f600"]


def test_equal_likelihood_keys_go_to_the_larger_count(monkeypatch):
    # With every key equal, the likelihood rule falls back to its tie rule: the larger
    # f(xy), then the older units -- which is exactly the frequency rule.
    counts = {"hugs": 5, "bun": 4, "pug": 2, "hug": 10, "pun": 12, "hunt": 3}
    freq = _train(counts, "frequency")
    assert _train(counts, "likelihood") != freq  # the real keys do not tie
    monkeypatch.setattr(wordpiece, "likelihood_key", lambda c, fa, fb, n: 0.0)
    assert _train(counts, "likelihood") == freq


# -- native == reference ---------------------------------------------------------------

ALPHABETS = ["abcde", "abéü", "абвгд", "日本語中文", "αβγ", "ab日🙂", "ابت"]


def _random_counts(rng: random.Random) -> dict[str, int]:
    alpha = rng.choice(ALPHABETS) + rng.choice(ALPHABETS)
    counts: dict[str, int] = {}
    for _ in range(rng.randint(1, 40)):
        w = "".join(rng.choice(alpha) for _ in range(rng.randint(1, 9)))
        counts[w] = counts.get(w, 0) + rng.randint(1, 30)
    return counts


@needs_native
@pytest.mark.parametrize("method", METHODS)
def test_native_equals_the_reference_on_random_corpora(method):
    rng = random.Random(1234 + METHODS.index(method))
    compared = 0
    for _ in range(120):
        counts = _random_counts(rng)
        kw = {
            "vocab_size": rng.randint(5, 160),
            "min_frequency": rng.choice([0, 0, 2, 5]),
            "all_forms": rng.choice([None, True, False]),
            "continuing_subword_prefix": rng.choice(["##", "", "▁"]),
            "special_tokens": rng.choice([["[UNK]"], ["[UNK]", "ab"], ["[UNK]", "日本"]]),
            "limit_alphabet": rng.choice([None, None, 3, 6]),
        }
        out = []
        for backend in ("python", "native"):
            try:
                out.append(_train(counts, method, backend, **kw))
            except TrainingError as exc:  # vocab_size below the alphabet: both must say so
                out.append(str(exc))
        assert out[0] == out[1], (counts, kw)
        compared += isinstance(out[0], tuple) and len(out[0][1]) > 0
    assert compared > 50


@needs_native
@pytest.mark.parametrize("method", METHODS)
def test_native_equals_the_reference_on_mixed_script_text(method, shared_data):
    text = (shared_data / "text" / "tinystories_valid_sample.txt").read_text("utf-8")[:40_000]
    text += (shared_data / "text" / "wagahaiwa_nekodearu.txt").read_text("utf-8")[:15_000]
    counts = Counter(text.lower().replace(".", " . ").replace("、", " 、 ").replace("。", " 。 ").split())
    out = [_train(counts, method, backend, vocab_size=3000, min_frequency=2) for backend in ("python", "native")]
    assert out[0] == out[1]
    assert len(out[0][1]) > 300


# -- determinism -------------------------------------------------------------------------

_RUN = """
import json, sys
from tokenforge import _native
from tokenforge.trainers.wordpiece import WordPieceTrainer
counts = json.loads(sys.argv[1])
backends = ["python"] + (["native"] if _native.available() else [])
out = {}
for method in ("frequency", "likelihood", "score"):
    for backend in backends:
        t = WordPieceTrainer(vocab_size=120, show_progress=False, merge=method, backend=backend)
        out[method + "/" + backend] = [t.train_from_counts(counts).get_vocab(), t.merges]
print(json.dumps(out, sort_keys=True))
"""


def test_same_result_under_any_hash_seed_and_backend():
    rng = random.Random(7)
    counts: dict[str, int] = {}
    for _ in range(200):
        w = "".join(rng.choice("abcdeé日本🙂") for _ in range(rng.randint(1, 7)))
        counts[w] = counts.get(w, 0) + rng.randint(1, 9)
    outs = set()
    for seed in ("0", "1", "4242"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        r = subprocess.run([sys.executable, "-c", _RUN, json.dumps(counts)], env=env, capture_output=True, text=True,
                           check=True)
        outs.add(r.stdout)
    assert len(outs) == 1
    res = json.loads(outs.pop())
    for method in ("frequency", "likelihood", "score"):
        runs = [v for k, v in res.items() if k.startswith(method + "/")]
        assert all(r == runs[0] for r in runs)
    assert res["frequency/python"] != res["likelihood/python"] != res["score/python"]


def test_same_result_with_one_or_two_counting_workers(tmp_path):
    corpus = tmp_path / "c.txt"
    rng = random.Random(3)
    lines = [" ".join("".join(rng.choice("abcdeé日本") for _ in range(rng.randint(1, 6))) for _ in range(20))
             for _ in range(400)]
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    vocabs = [
        tokenforge.train_wordpiece([str(corpus)], vocab_size=200, show_progress=False, workers=w).get_vocab()
        for w in (1, 2)
    ]
    assert vocabs[0] == vocabs[1] and len(vocabs[0]) == 200


def test_result_does_not_depend_on_the_order_of_the_counts():
    counts = {"hugs": 5, "bun": 4, "pug": 2, "hug": 10, "pun": 12, "日本": 3, "本日": 3}
    for method in METHODS:
        assert _train(counts, method) == _train(dict(reversed(list(counts.items()))), method)


# -- character forms -----------------------------------------------------------------------


@pytest.mark.parametrize("method", ["frequency", "likelihood"])
def test_only_the_forms_the_words_use_by_default(method):
    counts = {"日": 4, "本": 3, "ab": 2, "ba": 1, "c": 1, "dc": 1}
    t = WordPieceTrainer(vocab_size=11, special_tokens=["[UNK]"], show_progress=False, merge=method)
    vocab = t.train_from_counts(counts).get_vocab()
    # initial: a b c d 日 本 (code point order: U+65E5, U+672C); inside words: ##a ##b ##c; no ##日, no ##本, no ##d
    assert list(vocab)[:10] == ["[UNK]", "a", "b", "c", "d", "日", "本", "##a", "##b", "##c"]
    assert t.min_vocab_size(counts) == 10
    both = WordPieceTrainer(vocab_size=15, special_tokens=["[UNK]"], show_progress=False, merge=method, all_forms=True)
    assert both.min_vocab_size(counts) == 13 and "##日" in both.train_from_counts(counts).get_vocab()
    # initial_alphabet characters get both forms
    z = WordPieceTrainer(vocab_size=40, special_tokens=["[UNK]"], show_progress=False, merge=method,
                         initial_alphabet=["z"])
    zv = z.train_from_counts(counts).get_vocab()
    assert "z" in zv and "##z" in zv


def test_the_score_rule_keeps_both_forms_of_every_character():
    counts = {"日": 4, "本": 3, "ab": 2}
    vocab, _ = _train(counts, "score", vocab_size=11)
    assert set(vocab) == {"[UNK]", "a", "b", "本", "日", "##a", "##b", "##本", "##日", "ab"}
    with pytest.raises(TrainingError, match="at least 9"):
        _train(counts, "score", vocab_size=8)
    _train(counts, "frequency", vocab_size=6)  # [UNK] a 日 本 ##b, then ab: fits


@pytest.mark.parametrize("backend", ["python"] + (["native"] if _native.available() else []))
def test_a_word_with_a_dropped_character_trains_on_its_runs(backend):
    # limit_alphabet=2 keeps a and b; x is dropped. "abxab" trains as [a ##b] and [##a ##b]
    # (the run after the cut keeps its ## forms; no pair spans the cut, so no (##b, ##a)):
    # (##a, ##b) = 5 + 3 + 2 = 10, (a, ##b) = 5, (a, ##a) = 2, (b, ##a) = 1
    counts = {"abxab": 5, "xab": 3, "ba": 1, "aab": 2}
    _, merges = _train(counts, "frequency", backend, vocab_size=30, limit_alphabet=2)
    assert merges == [("##a", "##b"), ("a", "##b"), ("a", "##ab"), ("b", "##a")]
    # "score" leaves those words out, as it always did: (##a, ##b) comes only from "aab"
    _, merges = _train(counts, "score", backend, vocab_size=30, limit_alphabet=2)
    assert merges == [("##a", "##b"), ("b", "##a"), ("a", "##ab")]


@needs_native
def test_the_native_loop_rejects_an_unknown_rule():
    core = _native.core("native")
    args = ([b"a", b"##a"], [[0, 1]], [1], [1, 1], 2, 10, 0, [], None)
    assert core.wordpiece_learn(*args, 1) == [(0, 1)]
    with pytest.raises(ValueError, match="method"):
        core.wordpiece_learn(*args, 3)

"""The native SentencePiece BPE merge (``_core/spm_bpe.h``: piece-pair table, rank heap,
cuts between characters adjacent inside no piece) on long stretches without ``▁``.

* The Mistral v0.1 / Llama 2 ``tokenizer.model`` gives sentencepiece's ids on minified
  JSON, English with its white space removed, code, one character repeated (a long run
  of tied merges), runs of spaces, byte-fallback runs (rare CJK, emoji, control
  characters, lone surrogates), special-token strings, mixed scripts, and generated text.
* Small random models (tied scores, UNUSED, USER_DEFINED, CONTROL and BYTE pieces, NaN
  scores in the core) give the pure-Python ``sp_merge`` on long texts of a tiny alphabet, where the
  merges of far-apart positions interleave.
* The file keeps the native ``sentencepiece`` plan.
"""

from __future__ import annotations

import json
import math
import random
from functools import lru_cache
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tokenforge
from tokenforge import _native
from tokenforge.models.bpe import PieceBPE
from tokenforge.sentencepiece import byte_piece
from tokenforge.sentencepiece.bpe import SentencePieceTables, sp_merge
from tokenforge.sentencepiece.proto import PieceType

pytestmark = pytest.mark.skipif(not _native.available(), reason="the native core is not built")

MODEL = "mistral_v1_tokenizer.model"


@lru_cache(maxsize=None)
def _pair(shared: str):
    path = Path(shared) / "vocab" / "sentencepiece" / MODEL
    if not path.is_file():
        pytest.skip(f"{MODEL} not found")
    spm = pytest.importorskip("sentencepiece")
    return tokenforge.load(str(path)), spm.SentencePieceProcessor(model_file=str(path))


@pytest.fixture
def mistral(shared_data):
    return _pair(str(shared_data))


def _check(pair, text: str) -> None:
    tok, sp = pair
    got = tok.encode(text, disallowed_special=())
    want = sp.encode(text)
    if got != want:
        k = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
        raise AssertionError(f"first difference at token {k}: {got[k - 3:k + 5]} != {want[k - 3:k + 5]} ({text[:80]!r})")


def _json_records(seed: int, n: int) -> str:
    rng = random.Random(seed)
    words = ["id", "name", "value", "tags", "url", "count", "déjà", "東京", "😀", "a\"b", "x\\y", "null"]
    recs = []
    for i in range(n):
        recs.append({
            "id": rng.randint(0, 10**9), rng.choice(words): rng.choice(words) * rng.randint(1, 3),
            "f": rng.random(), "l": [rng.randint(-99, 99) for _ in range(rng.randint(0, 5))], "b": rng.random() < 0.5,
        })
    return json.dumps(recs, separators=(",", ":"), ensure_ascii=rng.random() < 0.5)


def test_mistral_keeps_the_native_plan(mistral):
    tok, _ = mistral
    assert tok.plan == "sentencepiece"


def test_minified_json(mistral):
    for seed in range(4):
        _check(mistral, _json_records(seed, 300))


def test_text_without_white_space(mistral, shared_data):
    f = shared_data / "text" / "tinyshakespeare.txt"
    if not f.is_file():
        pytest.skip("tinyshakespeare.txt not found")
    text = f.read_text(encoding="utf-8")[:60000]
    _check(mistral, "".join(text.split()))
    _check(mistral, text.replace(" ", ""))
    _check(mistral, text)


def test_code_and_cjk_without_spaces(mistral, shared_data):
    code = Path(json.__file__).read_text(encoding="utf-8")
    _check(mistral, code)
    _check(mistral, "".join(code.split()))
    for corpus in ("hongloumeng.txt", "wagahaiwa_nekodearu.txt"):
        f = shared_data / "text" / corpus
        if f.is_file():
            _check(mistral, f.read_text(encoding="utf-8")[:20000])


@pytest.mark.parametrize("unit", ["a", "e", "z", "0", "ab", "abc", "aab", "的", "é", "e\u0301", "😀", ".", "-", "=", "▁", "\t"])
@pytest.mark.parametrize("count", [1, 2, 3, 7, 16, 17, 64, 1000, 5001])
def test_repeated_units_form_tied_runs(mistral, unit, count):
    _check(mistral, unit * count)
    _check(mistral, "x" + unit * count + "y")


def test_runs_of_spaces(mistral):
    for n in (1, 2, 3, 4, 5, 8, 15, 16, 17, 31, 100, 1001):
        _check(mistral, " " * n)
        _check(mistral, "a" + " " * n + "b" + "  " * n + "c")


def test_byte_fallback_runs(mistral):
    rare = "".join(chr(c) for c in range(0x4E00 + 17, 0x9FFF, 97))
    _check(mistral, rare)
    _check(mistral, rare * 3 + "abc" + rare)
    _check(mistral, "\U0001f600\U0001f468\u200d\U0001f469\u200d\U0001f467" * 50)
    _check(mistral, "".join(chr(c) for c in range(0, 0x20)) * 20)
    _check(mistral, "\ufeff\u202e\u200f\u0301\u0301\u0301abc\U00010000\U0010ffff" * 30)


def test_special_token_strings_and_mixed_scripts(mistral):
    _check(mistral, "<s></s><unk><s>hello</s>" * 40)
    _check(mistral, "<0x41><0xFF>▁▁abc" * 40)
    _check(mistral, "שלום عالم Привет мир こんにちは世界 नमस्ते " * 30)
    _check(mistral, "mixed\t \n\r\x0b\x0c\u3000\u00a0white space" * 30)


LONG_ALPHABET = ["a", "b", "e", "t", "h", "▁", " ", "  ", "{", "}", '"', ":", ",", "0", "1", "的", "😀", "é", "\u0301",
                 "\u200d", "\x00", "\x7f", "\ufffd", "龘", "𠀋"]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_generated_text(mistral, data):
    unit = st.sampled_from(LONG_ALPHABET) | st.characters(exclude_categories=("Cs",))
    text = data.draw(st.lists(unit, max_size=300).map("".join))
    reps = data.draw(st.integers(1, 4))
    _check(mistral, text * reps)


def test_lone_surrogates_are_replacement_characters(mistral):
    tok, sp = mistral
    for text in ("ab\ud800cd", "\udc00" * 40, "{\"k\":\"\ud83d\"}" * 20):
        # sentencepiece's Python binding refuses lone surrogates; tokenforge reads them as U+FFFD
        assert tok.encode(text, disallowed_special=()) == sp.encode(text.replace("\ud800", "\ufffd").replace(
            "\udc00", "\ufffd").replace("\ud83d", "\ufffd"))


# -- small random models against the Python reference -----------------------------------------------

TINY = "ab▁c"


@st.composite
def tiny_models(draw):
    """Tables of a 4-letter alphabet with long pieces and many tied scores, so long texts
    make long symbol runs whose merges tie and interleave."""
    strings = draw(st.lists(st.text(TINY, min_size=2, max_size=6), min_size=1, max_size=40, unique=True))
    pieces = ["<unk>"] + [c for c in TINY if draw(st.integers(0, 5))]
    pieces += [p for p in strings if p not in pieces]
    kinds = [PieceType.NORMAL] * 8 + [PieceType.UNUSED, PieceType.USER_DEFINED, PieceType.CONTROL]
    types = [PieceType.UNKNOWN] + [draw(st.sampled_from(kinds if len(p) > 1 else kinds[:9])) for p in pieces[1:]]
    byte_fallback = draw(st.booleans())
    if byte_fallback:
        for b in range(256):
            pieces.append(byte_piece(b))
            types.append(PieceType.BYTE)
    scores = [0.0] + [float(draw(st.integers(-3, 0))) for _ in pieces[1:]]
    return pieces, scores, [int(t) for t in types], byte_fallback


def _check_model(model: PieceBPE, text: str) -> None:
    got = model.native_encoder().tokenize(text)
    want = sp_merge(model._sp, text, 0.0, None) if text else []
    assert got == want, text
    assert got == (model._sp_tokenize(text, 0.0, None) if text else []), text


@settings(max_examples=200, deadline=None)
@given(spec=tiny_models(), text=st.text(TINY + "x", min_size=50, max_size=400), seed=st.integers(0, 3))
def test_tiny_models_on_long_texts(spec, text, seed):
    pieces, scores, types, byte_fallback = spec
    model = PieceBPE.from_sentencepiece(pieces, scores, types, byte_fallback=byte_fallback)
    _check_model(model, text)
    _check_model(model, TINY[seed] * len(text))
    _check_model(model, text.replace("▁", ""))


def test_nan_scores_keep_the_reference_order():
    """A NaN score (files refuse it; the core takes it) runs CPython's heapq order."""
    pieces = ["<unk>", "a", "b", "ab", "ba", "aa", "bb", "aba", "bab"]
    types = [2] + [1] * 8
    rng = random.Random(5)
    for _ in range(40):
        scores = [0.0] + [rng.choice([-1.0, -2.0, math.nan]) for _ in pieces[1:]]
        tables = SentencePieceTables(pieces, scores, types, False)
        nat = _native.core("native").SpmBPE(pieces, scores, types, 0, None)
        for _ in range(5):
            text = "".join(rng.choice("ab") for _ in range(rng.randint(1, 60)))
            assert nat.tokenize(text) == sp_merge(tables, text, 0.0, None), (scores, text)

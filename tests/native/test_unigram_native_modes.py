"""The native Unigram encoder (``SpmUnigram``) in both arithmetics of a Unigram model.

A model with sentencepiece piece types sums path scores in float32 with the +-1e5 rebasing;
a model without types (HF ``tokenizer.json``) sums in double without it. Both run natively
and must give exactly the Python reference's path (``backend="python"``), ties included:
a run of zeros split into "000" and "0000" pieces in different orders is the same multiset
of scores, so which order wins is decided by rounding alone. In double mode the result must
also be HF ``tokenizers``' own Unigram.
"""

from __future__ import annotations

import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokenforge import _native
from tokenforge.errors import UnknownTokenError
from tokenforge.models.unigram import Unigram
from tokenforge.sentencepiece import byte_piece

pytestmark = pytest.mark.skipif(not _native.available(), reason="the native core is not built")

# albert-base-v2's scores of "0", "00", "000", "0000" (the pieces whose ties decide long numbers)
ALBERT_ZEROS = [-8.385414123535156, -9.91103744506836, -10.56161117553711, -12.727255821228027]
SCORES = ALBERT_ZEROS + [-1.0, -2.0, -3.0, -4.0, -0.1, -0.2, -0.3, -0.7, -1e5, -5e4, -3000.5, 0.0]
ZERO_PIECES = ["0", "00", "000", "0000"]
OTHER_PIECES = ["1", "2", "01", "10", "▁", "▁1", "▁10", "▁100", "▁1000", "é", "é0", "😀"]


@st.composite
def tie_vocabs(draw):
    """("<unk>" first, then pieces over zeros and a few others; scores that tie or nearly tie)."""
    others = draw(st.lists(st.sampled_from(OTHER_PIECES), unique=True, max_size=len(OTHER_PIECES)))
    zeros = draw(st.lists(st.sampled_from(ZERO_PIECES), unique=True, min_size=1, max_size=4))
    pieces = zeros + others
    scores = [draw(st.sampled_from(SCORES) | st.floats(-30, -0.01, allow_nan=False)) for _ in pieces]
    return [("<unk>", 0.0)] + list(zip(pieces, scores))


texts = st.lists(
    st.sampled_from(["0", "00", "0000000", "1", "2", "▁", "▁1", "é", "😀", "x", "0" * 23]), max_size=12
).map("".join)


def _pair(vocab, float32: bool, **kw):
    types = (["unknown"] + ["normal"] * (len(vocab) - 1)) if float32 else None
    return (Unigram(vocab, types=types, backend="native", **kw), Unigram(vocab, types=types, backend="python", **kw))


def _assert_same(nat: Unigram, py: Unigram, text: str) -> None:
    assert nat._core() is not None and nat._lattice.float32 == nat._float32
    assert nat.viterbi_path(text) == (py._viterbi_py(text) or [])
    assert nat.tokenize(text) == py.tokenize(text)
    assert nat.encode_piece(text) == py.encode_piece(text)


@pytest.mark.parametrize("float32", [True, False], ids=["float32", "double"])
@settings(max_examples=150, deadline=None)
@given(vocab=tie_vocabs(), text=texts)
def test_native_equals_python_reference_on_ties(float32, vocab, text):
    nat, py = _pair(vocab, float32)
    _assert_same(nat, py, text)


@pytest.mark.parametrize("float32", [True, False], ids=["float32", "double"])
@settings(max_examples=60, deadline=None)
@given(vocab=tie_vocabs(), text=texts)
def test_native_byte_fallback_and_unknowns_equal_python(float32, vocab, text):
    bytes_ = [(byte_piece(b), -20.0) for b in range(256)]
    nat, py = _pair(vocab + bytes_, float32, byte_fallback=True)
    _assert_same(nat, py, text)
    # no unk_id and no byte fallback: both raise on an uncovered character
    nat, py = _pair(vocab, float32, unk_id=None)
    try:
        want = py.tokenize(text)
    except UnknownTokenError:
        with pytest.raises(UnknownTokenError):
            nat.tokenize(text)
        with pytest.raises(UnknownTokenError):
            nat.encode_piece(text)
    else:
        assert nat.tokenize(text) == want


def test_the_two_arithmetics_differ_where_rounding_decides():
    """A long run of zeros: double and float32 pick different orders of "000" and "0000"."""
    vocab = [("<unk>", 0.0)] + list(zip(ZERO_PIECES, ALBERT_ZEROS))
    text = "0" * 27
    f_nat, f_py = _pair(vocab, True)
    d_nat, d_py = _pair(vocab, False)
    assert f_nat.encode_piece(text) == f_py.encode_piece(text)
    assert d_nat.encode_piece(text) == d_py.encode_piece(text)
    assert f_nat.encode_piece(text) != d_nat.encode_piece(text)


def test_native_encoder_survives_pickling():
    vocab = [("<unk>", 0.0)] + list(zip(ZERO_PIECES, ALBERT_ZEROS))
    nat, _ = _pair(vocab, False)
    want = nat.encode_piece("0" * 31)
    again = pickle.loads(pickle.dumps(nat))
    assert again._lattice is None
    assert again.encode_piece("0" * 31) == want


@settings(max_examples=150, deadline=None)
@given(vocab=tie_vocabs(), text=texts)
def test_double_mode_equals_hf_tokenizers_unigram(vocab, text):
    tokenizers = pytest.importorskip("tokenizers")
    hf = tokenizers.Tokenizer(tokenizers.models.Unigram(vocab, unk_id=0, byte_fallback=False))
    nat, _ = _pair(vocab, False)
    assert nat.encode_piece(text) == hf.encode(text).ids


def test_albert_tokenizer_json_encodes_natively_as_hf(shared_data):
    tokenizers = pytest.importorskip("tokenizers")
    import tokenforge

    path = shared_data / "vocab" / "hf" / "albert-base-v2_spiece_unigram_tokenizer.json"
    if not path.is_file():
        pytest.skip(f"{path} is absent")
    tok = tokenforge.load(str(path))
    model = tok.model
    assert model.types is None and model._core() is not None and not model._lattice.float32
    hf = tokenizers.Tokenizer.from_file(str(path))
    numbers = " ".join(str(10**k + k) for k in range(40))  # long zero runs: double and float32 differ here
    assert tok.encode(numbers) == hf.encode(numbers).ids
    ref = Unigram(list(zip(model.pieces, model.scores)), model.unk_id, backend="python")
    f32_ref = Unigram(list(zip(model.pieces, model.scores)), model.unk_id,
                      types=[2 if i == model.unk_id else 1 for i in range(len(model))], backend="python")
    words = ["▁" + str(10**k + k) for k in range(40)]
    assert [model.encode_piece(w) for w in words] == [ref.encode_piece(w) for w in words]
    assert [ref.encode_piece(w) for w in words] != [f32_ref.encode_piece(w) for w in words]

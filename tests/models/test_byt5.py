"""``get_encoding("bytes")`` gives the ids and text of transformers' ``ByT5Tokenizer``.

tokenforge's ``encode(text, allowed_special="all")`` is transformers' ``encode(text)``
(control-token strings in the text are read as control tokens, ``</s>`` is appended
unless the text already ends with it); ``decode(ids, errors="ignore")`` is
transformers' ``decode(ids)`` (invalid UTF-8 dropped). The two documented
differences (lone surrogates, U+001C..U+001F beside ``</s>``) are pinned below.
"""

from __future__ import annotations

import functools
import os
import tempfile
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tokenforge
from tokenforge.errors import FileFormatError, SpecialTokenError, UnknownIdError

transformers = pytest.importorskip("transformers")
pytestmark = pytest.mark.filterwarnings("ignore:This sequence already has")

SPECIALS = ["<pad>", "</s>", "<unk>", "<extra_id_0>", "<extra_id_1>", "<extra_id_12>", "<extra_id_124>"]
TEXTS = [
    "",
    "hello world",
    "Hello, World! 123 4567.89",
    "héllo wörld ça va",
    "日本語のテキスト",
    "中文，标点。",
    "한국어 텍스트",
    "Ελληνικά και русский",
    "עברית ערבית عربي",
    "हिन्दी देवनागरी",
    "ภาษาไทย",
    "emoji 😀🎉👍🏽 family 👨‍👩‍👧‍👦 flag 🇫🇷",
    "combining e\u0301 a\u0308 \u0323\u0307 zalgo ẑ̸̡̛",
    "control \x00\x01\x1b\x7f tab\tnewline\nCR\r\n",
    "\ufeffBOM and \u200bzero-width\u200d joiner",
    "a </s> b",
    "x</s>",
    "</s>",
    "</s></s>",
    "  </s>  ",
    "a<pad>b<unk>c",
    "a <extra_id_0> b <extra_id_124>",
    "<extra_id_1><extra_id_12>",
    "<extra_id_125> is not a sentinel",
    "<s> is not special here",
    "\u3000</s>\u00a0",
]


@pytest.fixture(scope="module")
def hf():
    try:
        return transformers.ByT5Tokenizer()
    except Exception as exc:  # pragma: no cover - a broken transformers install
        pytest.skip(f"ByT5Tokenizer() cannot be built: {exc}")


@pytest.fixture(scope="module")
def tok():
    return tokenforge.get_encoding("bytes")


def hf_encode(hf, text, pair=None, add_special_tokens=True):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "This sequence already has </s>"
        return hf.encode(text, pair, add_special_tokens=add_special_tokens)


def test_layout(tok, hf):
    assert "bytes" in tokenforge.list_encodings()
    assert tokenforge.get_encoding("bytes") is tok
    assert tok.n_vocab == len(tok) == len(hf) == 384
    assert (tok.token_to_id("<pad>"), tok.token_to_id("</s>"), tok.token_to_id("<unk>")) == (0, 1, 2)
    for i in range(125):
        assert tok.token_to_id(f"<extra_id_{i}>") == hf.convert_tokens_to_ids(f"<extra_id_{i}>") == 259 + i
    for b in range(256):
        assert tok.decode_single_token_bytes(3 + b) == bytes([b])
        assert tok.encode_single_token(bytes([b])) == 3 + b
    assert sorted(tok.special_tokens.values()) == sorted(hf.all_special_ids)
    assert tok.is_special_token(1) and not tok.is_special_token(3)


@pytest.mark.parametrize("text", TEXTS)
def test_encode_matches_transformers(tok, hf, text):
    assert tok.encode(text, allowed_special="all") == hf_encode(hf, text)
    assert tok.encode(text, allowed_special="all", add_special_tokens=False) == hf_encode(hf, text, add_special_tokens=False)
    assert tok.encode(text, allowed_special="all") == hf(text)["input_ids"]
    assert tok.encode(text, "pair </s>", allowed_special="all") == hf_encode(hf, text, "pair </s>")


def test_encode_without_specials_in_text(tok):
    # No control-token string: the default policy gives the same ids as transformers.
    assert tok.encode("hi") == [107, 108, 1]
    assert tok.encode("") == [1]
    # tiktoken's guard: a control token's string in user text raises unless allowed...
    with pytest.raises(SpecialTokenError):
        tok.encode("a</s>")
    # ... or is read as bytes.
    assert tok.encode("</s>", disallowed_special=()) == [3 + b for b in b"</s>"] + [1]


@pytest.mark.parametrize("text", TEXTS)
def test_decode_matches_transformers(tok, hf, text):
    ids = hf_encode(hf, text)
    for skip in (False, True):
        assert tok.decode(ids, errors="ignore", skip_special_tokens=skip) == hf.decode(ids, skip_special_tokens=skip)


def test_decode_invalid_utf8(tok, hf):
    cases = [
        [3 + 0xE2, 3 + 0x82],  # a cut character
        [3 + 0xFF, 3 + ord("a")],
        [3 + 0xE2, 1, 3 + 0x82, 3 + 0xAC],  # </s> inside a character
        [3 + 0xF0, 259, 3 + 0x9F, 3 + 0x98, 3 + 0x80],
        [3 + 0xC0, 3 + 0x80, 3 + 0xED, 3 + 0xA0, 3 + 0x80],  # overlong, a surrogate's bytes
    ]
    for ids in cases:
        for skip in (False, True):
            assert tok.decode(ids, errors="ignore", skip_special_tokens=skip) == hf.decode(ids, skip_special_tokens=skip)
    assert tok.decode([3 + 0xFF, 3 + ord("a")]) == "\ufffda"  # tokenforge's default: replace
    with pytest.raises(UnknownIdError):
        tok.decode([384])


def test_documented_differences(tok, hf):
    # Lone surrogates: U+FFFD in tokenforge, UnicodeEncodeError in transformers.
    assert tok.encode("a\ud800b") == tok.encode("a\ufffdb")
    with pytest.raises(UnicodeEncodeError):
        hf.encode("a\ud800b")
    # </s> takes Unicode White_Space beside it; transformers' str.strip also takes U+001C..U+001F.
    assert tok.encode("a </s>", allowed_special="all") == hf_encode(hf, "a </s>")
    assert tok.encode("a\x1c</s>", allowed_special="all") == [100, 3 + 0x1C, 1]
    assert hf_encode(hf, "a\x1c</s>") == [100, 1]


_ALPHABET = st.characters(
    blacklist_categories=("Cs",),  # lone surrogates: a documented difference
    blacklist_characters="\x1c\x1d\x1e\x1f",  # next to </s>: a documented difference
)
_text = st.lists(st.one_of(st.text(_ALPHABET, max_size=8), st.sampled_from(SPECIALS + [" ", "\n", "\u00a0"])),
                 max_size=8).map("".join)


@functools.lru_cache(maxsize=1)
def _hf():
    return transformers.ByT5Tokenizer()


@settings(max_examples=300, deadline=None)
@given(_text)
def test_random_text_encodes_as_transformers(text):
    tok = tokenforge.get_encoding("bytes")
    hf = _hf()
    assert tok.encode(text, allowed_special="all") == hf_encode(hf, text)
    assert tok.decode(hf_encode(hf, text), errors="ignore") == hf.decode(hf_encode(hf, text))




@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(st.integers(0, 383), st.integers(3 + 0x80, 3 + 0xFF)), max_size=24), st.booleans())
def test_random_ids_decode_as_transformers(ids, skip):
    tok = tokenforge.get_encoding("bytes")
    hf = _hf()
    assert tok.decode(ids, errors="ignore", skip_special_tokens=skip) == hf.decode(ids, skip_special_tokens=skip)
    assert tok.decode_bytes(ids, skip_special_tokens=skip).decode("utf-8", "ignore") == hf.decode(
        ids, skip_special_tokens=skip)


def test_offsets_and_streaming(tok):
    text = "aé😀"
    spans = tok.encode_with_offsets(text)
    assert [s.id for s in spans] == tok.encode(text)
    assert [(s.byte_start, s.byte_end) for s in spans[:-1]] == [(i, i + 1) for i in range(len(text.encode()))]
    assert [s.partial for s in spans[:-1]] == [False, True, True, True, True, True, True]
    assert spans[-1].special and spans[-1].token == "</s>"
    ids = tok.encode(text, add_special_tokens=False)
    assert "".join(tok.decode_stream(ids)) == text


def test_native_save_round_trip_and_unsupported_formats(tok):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "bytes.json")
        tok.save(path)
        back = tokenforge.load(path)
        assert back == tok
        for text in TEXTS:
            assert back.encode(text, allowed_special="all") == tok.encode(text, allowed_special="all")
        # HF's tokenizer.json (and a transformers folder) always pre-tokenizes and has no
        # "append </s> unless present" rule: the save refuses rather than write a wrong file.
        for fmt in ("hf", "transformers", "sentencepiece", "bert_vocab"):
            with pytest.raises(FileFormatError):
                tok.save(os.path.join(d, f"out.{fmt}"), format=fmt)


def test_docstring_examples():
    import doctest

    from tokenforge import postprocessors
    from tokenforge.encodings import byt5

    assert doctest.testmod(byt5).failed == 0
    assert doctest.testmod(postprocessors).failed == 0

"""Encoding with the shipped encodings gives tiktoken's ids, token for token."""

from __future__ import annotations

import pytest
from _tiktoken_ref import reference
from hypothesis import given, settings
from hypothesis import strategies as st

import tokenforge

ENCODINGS = ["gpt2", "p50k_base", "cl100k_base", "o200k_base"]

TRICKY = [
    "",
    " ",
    "Hello, world!",
    "Größenverhältnisse über Straße — 'quotes' und \"mehr\"",
    "中文為什麼比英文貴？因为分词器。",
    "日本語のテキスト、カタカナとひらがな。",
    "emoji 🙂👍🏽 and flags 🇯🇵🇺🇸",
    "family 👨‍👩‍👧‍👦 ZWJ sequence, woman technologist 👩🏽‍💻",
    "combining e\u0301 a\u0308 o\u0302\u0323 and precomposed é",
    "RTL: مرحبا بالعالم שלום עולם",
    "control \x00\x01\x07\x1b[31m and DEL \x7f",
    "def f(x):\n\tif x:\n\t\treturn [x  ,  {'a': 1}]\n\n\n    pass\r\n",
    "     leading and trailing spaces     ",
    "\n\n\n\n\n",
    " \n \n\t\t \u3000\u00a0 x",
    "1234567890 3.14159 1e10 0x1F -42 1,000,000",
    "I've you'll he's they're we'd I'm DON'T",
    "<|endoftext|> is ordinary text here",
    "a" * 5000,
    " " * 3000 + "x",
    "ab" * 2000,
    "🙂" * 500,
    "\ufffd replacement char and \U0010ffff max code point",
]


@pytest.mark.parametrize("name", ENCODINGS)
@pytest.mark.parametrize("text", TRICKY, ids=range(len(TRICKY)))
def test_encode_ordinary_equals_tiktoken_on_tricky_text(name, text):
    tok = tokenforge.get_encoding(name)
    assert tok.encode_ordinary(text) == reference(name).encode_ordinary(text)


@pytest.mark.parametrize("name", ENCODINGS)
def test_encode_with_allowed_specials_equals_tiktoken(name):
    tok = tokenforge.get_encoding(name)
    text = "doc one<|endoftext|>doc two <|endoftext|><|endoftext|> end"
    assert tok.encode(text, allowed_special="all") == reference(name).encode(text, allowed_special="all")
    assert tok.encode(text, disallowed_special=()) == reference(name).encode(text, disallowed_special=())


@pytest.mark.parametrize("name", ENCODINGS)
def test_lone_surrogates_are_replaced_like_tiktoken(name):
    tok = tokenforge.get_encoding(name)
    text = "bad \ud800 surrogate \udfff end"
    assert tok.encode(text) == reference(name).encode(text)
    assert tok.encode(text) == tok.encode(text.replace("\ud800", "\ufffd").replace("\udfff", "\ufffd"))


@pytest.mark.parametrize("name", ENCODINGS)
def test_real_text_equals_tiktoken(name, shared_data):
    tok = tokenforge.get_encoding(name)
    ref = reference(name)
    for fname in ["corpus.en", "german.txt", "tinystories_sample.txt", "address.txt", "botchan.txt"]:
        text = (shared_data / "text" / fname).read_text(encoding="utf-8")
        assert tok.encode_ordinary(text) == ref.encode_ordinary(text), fname
    for fname in ["hongloumeng.txt", "wagahaiwa_nekodearu.txt"]:
        text = (shared_data / "text" / fname).read_text(encoding="utf-8")[:300_000]
        assert tok.encode_ordinary(text) == ref.encode_ordinary(text), fname


def test_python_source_equals_tiktoken():
    import sysconfig
    from pathlib import Path

    stdlib = Path(sysconfig.get_paths()["stdlib"])
    text = "".join((stdlib / f).read_text(encoding="utf-8") for f in ["textwrap.py", "heapq.py", "json/decoder.py"])
    for name in ["gpt2", "cl100k_base", "o200k_base"]:
        assert tokenforge.get_encoding(name).encode_ordinary(text) == reference(name).encode_ordinary(text)


_chars = st.sampled_from(list("ab xyZ'sdt\n\r\t 0129.,!?-_()中文日本🙂é\u0301\u200d\u00a0\u3000ـאب"))


@settings(max_examples=300, deadline=None)
@given(st.text(_chars, max_size=60))
def test_random_tricky_text_equals_tiktoken(text):
    for name in ["gpt2", "cl100k_base", "o200k_base"]:
        assert tokenforge.get_encoding(name).encode_ordinary(text) == reference(name).encode_ordinary(text)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=40))
def test_arbitrary_unicode_equals_tiktoken(text):
    for name in ["cl100k_base", "o200k_base"]:
        assert tokenforge.get_encoding(name).encode_ordinary(text) == reference(name).encode_ordinary(text)


def test_gpt2_files_from_disk_give_tiktoken_ids(shared_data):
    tok = tokenforge.load(shared_data / "vocab" / "gpt2")
    ref = reference("gpt2")
    texts = TRICKY + [(shared_data / "text" / f).read_text(encoding="utf-8") for f in ["corpus.en", "german.txt"]]
    for text in texts:
        assert tok.encode(text, disallowed_special=()) == ref.encode(text, disallowed_special=())
        assert tok.encode(text + "<|endoftext|>", allowed_special="all") == ref.encode(
            text + "<|endoftext|>", allowed_special="all"
        )

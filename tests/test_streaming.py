"""Streaming: encode_iterable equals encode of the concatenation, and the stream decoder
never emits half a character and equals the whole decode."""

from __future__ import annotations

import io

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tokenforge
from tokenforge import SpecialTokenError


@pytest.fixture(scope="module")
def cl100k():
    return tokenforge.get_encoding("cl100k_base")


_no_surrogates = st.text(st.characters(blacklist_categories=("Cs",)), max_size=80)


@pytest.fixture(scope="module")
def enc():
    return tokenforge.get_encoding("cl100k_base")


_stream_atoms = st.sampled_from(
    list("ab Z'sdt\n\r\t 09.!中文🙂é\u00a0\u3000") + ["<|endoftext|>", "<|endo", "ftext|>", "'s", "  ", "\n\n", "123456"]
)


@pytest.fixture
def cut_often():
    """Make encode_iterable try to cut after every few characters."""
    import tokenforge.tokenizer as tmod

    old = tmod._STREAM_MIN_CHARS
    tmod._STREAM_MIN_CHARS = 3
    yield
    tmod._STREAM_MIN_CHARS = old


_chunk_lists = st.lists(st.lists(_stream_atoms, max_size=12).map("".join), max_size=30)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(chunks=_chunk_lists, name=st.sampled_from(["gpt2", "cl100k_base", "o200k_base"]))
def test_encode_iterable_equals_encode_on_the_concatenation(cut_often, chunks, name):
    enc = tokenforge.get_encoding(name)
    whole = "".join(chunks)
    for policy in ({"allowed_special": "all"}, {"disallowed_special": ()}):
        assert list(enc.encode_iterable(chunks, **policy)) == enc.encode(whole, **policy)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(chunks=_chunk_lists, pattern=st.sampled_from(["llama3", "qwen"]))
def test_encode_iterable_equals_encode_for_other_patterns(cut_often, chunks, pattern):
    base = tokenforge.get_encoding("cl100k_base")
    tok = tokenforge.Tokenizer(base.model, pre_tokenizer=pattern, special_tokens=base.special_tokens)
    whole = "".join(chunks)
    assert list(tok.encode_iterable(chunks, allowed_special="all")) == tok.encode(whole, allowed_special="all")


def test_encode_iterable_default_policy_rejects_specials_split_across_chunks(cl100k):
    with pytest.raises(SpecialTokenError):
        list(cl100k.encode_iterable(["x" * 20000 + "<|endof", "text|>" + "y" * 20000]))


def test_encode_iterable_reads_files_lazily(cl100k, shared_data):
    path = shared_data / "text" / "tinyshakespeare.txt"
    text = path.read_text(encoding="utf-8")
    with open(path, encoding="utf-8") as f:
        assert list(cl100k.encode_iterable(f)) == cl100k.encode(text)
    it = cl100k.encode_iterable(io.StringIO(text))
    assert next(it) == cl100k.encode(text)[0]  # a generator: nothing is encoded up front


@settings(max_examples=200, deadline=None)
@given(_no_surrogates, st.integers(1, 5))
def test_stream_decoder_never_emits_half_a_character(text, step):
    enc = tokenforge.get_encoding("o200k_base")
    ids = enc.encode_ordinary(text)
    dec = enc.stream_decoder(errors="strict")
    pieces = []
    for i in range(0, len(ids), step):
        out = dec.feed(ids[i : i + step])
        assert "\ufffd" not in out or "\ufffd" in text
        pieces.append(out)
    pieces.append(dec.finish())
    assert "".join(pieces) == text
    assert "".join(enc.decode_stream(ids)) == text


def test_stream_decoder_holds_back_partial_utf8(enc):
    ids = enc.encode("龘")  # one CJK character, several byte tokens
    assert len(ids) > 1
    dec = enc.stream_decoder()
    assert dec.step(ids[0]) == ""
    assert dec.pending
    out = "".join(dec.step(i) for i in ids[1:])
    assert out == "龘" and dec.finish() == ""


@pytest.mark.parametrize("name", ["cl100k_base", "bert"])
def test_copying_a_stream_decoder_copies_its_state(name, shared_data):
    import copy

    tok = (tokenforge.get_encoding(name) if name != "bert"
           else tokenforge.load(shared_data / "vocab" / "wordpiece" / "bert-base-uncased_vocab.txt"))
    text = "日本語 and more 東京" if name != "bert" else "hello wonderful world"
    ids = tok.encode(text, add_special_tokens=False)
    cut = len(ids) // 2 + (1 if name != "bert" else 0)  # inside a character for byte-level BPE
    dec = tok.stream_decoder()
    head = dec.feed(ids[:cut])
    twin = copy.copy(dec)
    rest_a = dec.feed(ids[cut:]) + dec.finish()
    rest_b = copy.deepcopy(twin).feed(ids[cut:])
    rest_c = twin.feed(ids[cut:]) + twin.finish()
    assert head + rest_a == head + rest_c == tok.decode(ids)
    assert rest_b == rest_c[: len(rest_b)]

"""Decoding: round trips, invalid UTF-8, unknown ids, streaming."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tokenforge
from tokenforge import DecodeError, UnknownIdError


@pytest.fixture(scope="module")
def enc():
    return tokenforge.get_encoding("cl100k_base")


_no_surrogates = st.text(st.characters(blacklist_categories=("Cs",)), max_size=80)


@settings(max_examples=300, deadline=None)
@given(_no_surrogates)
def test_decode_encode_round_trip_for_arbitrary_unicode(text):
    for name in ["gpt2", "cl100k_base", "o200k_base"]:
        enc = tokenforge.get_encoding(name)
        ids = enc.encode_ordinary(text)
        assert enc.decode(ids, errors="strict") == text
        assert enc.decode_bytes(ids) == text.encode("utf-8")


def test_invalid_utf8_replaces_or_raises(enc):
    first = enc.encode("龘")[0]  # a lone lead byte sequence
    assert enc.decode([first]) == "\ufffd" * len(enc.decode_single_token_bytes(first).decode("utf-8", "replace"))
    assert "\ufffd" in enc.decode([first], errors="replace")
    with pytest.raises(DecodeError, match="not valid UTF-8"):
        enc.decode([first], errors="strict")
    dec = enc.stream_decoder()
    assert dec.step(first) == ""
    assert dec.finish() == "\ufffd"


def test_unknown_id_names_the_id_and_position(enc):
    with pytest.raises(UnknownIdError, match=r"unknown token id 100261 at position 1"):
        enc.decode([15339, 100261])
    with pytest.raises(UnknownIdError, match="-1"):
        enc.decode_bytes([-1])
    with pytest.raises(UnknownIdError, match="must be an int"):
        enc.decode(["15339"])
    with pytest.raises(UnknownIdError, match="999999999"):
        enc.decode_single_token_bytes(999999999)
    with pytest.raises(KeyError):  # also a KeyError, like a dict lookup
        enc.decode([10**9])


def test_special_tokens_decode_to_their_text(enc):
    assert enc.decode([100257]) == "<|endoftext|>"
    assert enc.decode_single_token_bytes(100276) == b"<|endofprompt|>"


def test_decode_bad_errors_argument(enc):
    with pytest.raises(ValueError, match="errors must be one of"):
        enc.decode([1], errors="nope")


def test_numpy_ids_decode_everywhere_ids_are_accepted():
    import numpy as np

    for tok in (tokenforge.get_encoding("cl100k_base"), tokenforge.get_encoding("gpt2")):
        text = "hello world, 東京 👍"
        arr = tok.encode_to_numpy(text)
        for ids in (arr, list(arr), arr.astype(np.int64), [np.int32(i) for i in tok.encode(text)]):
            assert tok.decode(ids) == text
            assert tok.decode_bytes(ids) == text.encode()
            assert b"".join(tok.decode_tokens_bytes(ids)) == text.encode()
        assert tok.decode_batch([arr, arr]) == [text, text]
        assert tok.decode_single_token_bytes(np.uint32(arr[0])) == tok.decode_single_token_bytes(int(arr[0]))
        with pytest.raises(tokenforge.UnknownIdError, match="position 1"):
            tok.decode([arr[0], 1.5])
    assert tokenforge.get_encoding("gpt2").encode_batch(["a", "b"], num_threads=2**31) == [[64], [65]]

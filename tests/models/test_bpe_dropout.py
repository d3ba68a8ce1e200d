"""BPE-dropout on the byte-level Tokenizer: seeded, exact at p=0, bytes at p=1, always lossless."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tokenforge
from tokenforge.errors import InvalidArgumentError


@pytest.fixture(scope="module")
def enc():
    return tokenforge.get_encoding("cl100k_base")


def test_dropout_zero_is_the_ordinary_encoding(enc, varied_text):
    assert enc.encode(varied_text, dropout=0.0, seed=3, disallowed_special=()) == enc.encode(varied_text, disallowed_special=())


def test_dropout_one_blocks_every_merge(enc):
    text = "tokenization 東京 🙂"
    ids = enc.encode(text, dropout=1.0, seed=0)
    assert [len(enc.decode_single_token_bytes(i)) for i in ids] == [1] * len(text.encode("utf-8"))


def test_same_seed_same_ids_and_seeds_differ(enc):
    text = "Tokenizers segment words in many different ways when dropout is on."
    assert enc.encode(text, dropout=0.2, seed=5) == enc.encode(text, dropout=0.2, seed=5)
    variants = {tuple(enc.encode(text, dropout=0.2, seed=s)) for s in range(30)}
    assert len(variants) > 5
    plain = len(enc.encode(text))
    assert all(len(v) >= plain for v in variants)


def test_dropout_keeps_special_tokens_whole(enc):
    ids = enc.encode("a<|endoftext|>b", allowed_special="all", dropout=0.5, seed=1)
    assert 100257 in ids


def test_dropout_must_be_a_probability(enc):
    with pytest.raises(InvalidArgumentError, match="dropout"):
        enc.encode("x", dropout=1.5)


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=40), st.floats(0, 1), st.integers(0, 2**32))
def test_dropout_round_trips(text, p, seed):
    enc = tokenforge.get_encoding("gpt2")
    ids = enc.encode(text, dropout=p, seed=seed, disallowed_special=())
    assert enc.decode_bytes(ids) == enc.decode_bytes(enc.encode(text, disallowed_special=()))

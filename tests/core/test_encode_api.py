"""The Tokenizer API: special-token policy, batch, streaming encode, types, threads, pickle."""

from __future__ import annotations

import pickle
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tokenforge
from tokenforge import BPETrainer, EncodeInputError, SpecialTokenError


@pytest.fixture(scope="module")
def cl100k():
    return tokenforge.get_encoding("cl100k_base")


def test_non_str_input_is_a_clear_error(cl100k):
    with pytest.raises(EncodeInputError, match="got bytes"):
        cl100k.encode(b"bytes")
    with pytest.raises(TypeError):
        cl100k.encode(None)
    with pytest.raises(EncodeInputError, match="item 1 is int"):
        list(cl100k.encode_iterable(["ok", 5]))
    with pytest.raises(EncodeInputError):
        cl100k.encode_batch("one string")


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(max_size=30), max_size=8))
def test_batch_equals_single(texts):
    enc = tokenforge.get_encoding("o200k_base")
    for policy in ({"disallowed_special": ()}, {"allowed_special": "all"}):
        assert enc.encode_batch(texts, **policy) == [enc.encode(t, **policy) for t in texts]
    assert enc.encode_ordinary_batch(texts) == [enc.encode_ordinary(t) for t in texts]
    texts = texts + ["x<|endoftext|>"]
    with pytest.raises(SpecialTokenError):  # the default policy rejects specials in a batch too
        enc.encode_batch(texts)


def test_tokenizer_is_picklable_and_equal_after(cl100k):
    tok = BPETrainer(300, special_tokens=["<|endoftext|>"]).train_from_iterator(["hello world"] * 3)
    for t in (tok, cl100k):
        again = pickle.loads(pickle.dumps(t))
        assert again == t
        assert again.encode("hello world<|endoftext|>", allowed_special="all") == t.encode(
            "hello world<|endoftext|>", allowed_special="all"
        )


def test_tokenizer_is_immutable(cl100k):
    with pytest.raises(TypeError):
        cl100k.special_tokens["<|x|>"] = 5  # read-only mapping
    with pytest.raises(AttributeError):
        cl100k.foo = 1
    with pytest.raises(TypeError):
        cl100k.mergeable_ranks[b"zzz"] = 1


def test_concurrent_encoding_from_threads_gives_the_same_ids(cl100k, shared_data):
    text = (shared_data / "text" / "german.txt").read_text(encoding="utf-8") * 20
    expected = cl100k.encode(text)
    results = []

    def work():
        for _ in range(5):
            results.append(cl100k.encode(text) == expected)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results and all(results)


def test_vocab_introspection(cl100k):
    assert cl100k.n_vocab == 100277 and len(cl100k) == 100261
    assert cl100k.token_to_id("hello") == 15339
    assert cl100k.token_to_id(b" world") == cl100k.token_to_id("Ġworld") == 1917
    assert cl100k.id_to_token(1917) == "Ġworld"
    assert cl100k.id_to_token(100257) == "<|endoftext|>"
    assert cl100k.eot_token == 100257
    assert cl100k.encode_single_token("hello") == 15339
    with pytest.raises(tokenforge.UnknownTokenError):
        cl100k.token_to_id("definitely not one token")

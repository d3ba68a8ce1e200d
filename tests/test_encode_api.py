"""The Tokenizer API: special-token policy, batch, streaming encode, types, threads, pickle."""

from __future__ import annotations

import io
import pickle
import threading

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tokenforge
from tokenforge import BPETrainer, EncodeInputError, SpecialTokenError


@pytest.fixture(scope="module")
def cl100k():
    return tokenforge.get_encoding("cl100k_base")


def test_special_token_in_text_raises_by_default(cl100k):
    with pytest.raises(SpecialTokenError, match=r"'<\|endoftext\|>' at character 6"):
        cl100k.encode("hello <|endoftext|>")
    with pytest.raises(ValueError):  # tiktoken users catch ValueError
        cl100k.encode("<|fim_prefix|>")


def test_allowed_special_encodes_special_ids(cl100k):
    assert cl100k.encode("a<|endoftext|>b", allowed_special="all") == [64, 100257, 65]
    assert cl100k.encode("a<|endoftext|>b", allowed_special={"<|endoftext|>"}) == [64, 100257, 65]


def test_partially_allowed_specials_still_reject_the_rest(cl100k):
    with pytest.raises(SpecialTokenError, match="fim_prefix"):
        cl100k.encode("<|endoftext|><|fim_prefix|>", allowed_special={"<|endoftext|>"})


def test_disallowed_empty_encodes_specials_as_text(cl100k):
    assert cl100k.encode("<|endoftext|>", disallowed_special=()) == cl100k.encode_ordinary("<|endoftext|>")
    assert 100257 not in cl100k.encode("<|endoftext|>", disallowed_special=())


def test_unknown_special_in_policy_is_an_error(cl100k):
    with pytest.raises(SpecialTokenError, match="not a special token"):
        cl100k.encode("x", allowed_special={"<|nope|>"})


def test_longest_special_wins():
    tok = BPETrainer(300, special_tokens=["<|endoftext|>", "<|endoftext|><|endoftext|>"]).train_from_iterator(["x"])
    double = tok.special_tokens["<|endoftext|><|endoftext|>"]
    single = tok.special_tokens["<|endoftext|>"]
    ids = tok.encode("a<|endoftext|><|endoftext|><|endoftext|>b", allowed_special="all")
    assert ids[1:3] == [double, single]


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

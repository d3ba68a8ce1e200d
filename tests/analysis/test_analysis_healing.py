"""Prefix instability and token healing (Microsoft Guidance; Lundberg, 2023)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tokenforge
from tokenforge.analysis.healing import (
    TokenIndex,
    heal,
    is_prefix_stable,
    unstable_boundaries,
)


def _ab_abc_tokenizer(pre_tokenizer=None) -> tokenforge.Tokenizer:
    """The merge table [a+b, ab+c]: vocab = 256 bytes + "ab" (256) + "abc" (257)."""
    vocab = {b: bytes([b]) for b in range(256)}
    vocab[256] = b"ab"
    vocab[257] = b"abc"
    model = tokenforge.BPE(vocab, merges=[(b"a", b"b"), (b"ab", b"c")])
    return tokenforge.Tokenizer(model, pre_tokenizer=pre_tokenizer)


@pytest.fixture(scope="module")
def cl100k():
    return tokenforge.get_encoding("cl100k_base")


@pytest.mark.parametrize("pattern", [None, "gpt2"])
def test_encode_ab_is_not_a_token_prefix_of_encode_abc(pattern):
    tok = _ab_abc_tokenizer(pattern)
    assert tok.encode("ab") == [256]
    assert tok.encode("abc") == [257]
    assert not is_prefix_stable(tok, "ab", "c")
    # "a" + "b" and "ab" + "x" do keep their prefix
    assert is_prefix_stable(tok, "ab", "x")
    assert unstable_boundaries(tok, "abc") == [1, 2]


def test_heal_backs_off_ab_and_allows_abc():
    tok = _ab_abc_tokenizer()
    r = heal(tok, tok.encode("xab"), max_backoff=3)
    # "ab" is a proper prefix of the token "abc"; "xab" is a prefix of no token
    assert r.kept_ids == [ord("x")]
    assert r.removed_ids == [256]
    assert r.prefix_bytes == b"ab"
    assert r.single_token == 2  # "ab" and "abc"
    assert r.satisfiable
    # the first generated token may complete the prefix (ab, abc) or start it (a)
    assert r.allowed_next() == [ord("a"), 256, 257]
    assert r.allowed_next(b"a") == [ord("b")]
    assert r.allowed_next(b"ab") == []
    with pytest.raises(ValueError):
        r.allowed_next(b"b")
    # healing reproduces what encoding the whole text gives
    assert tok.encode("xabc") == r.kept_ids + [257]


def test_heal_a_token_that_nothing_extends_is_kept():
    tok = _ab_abc_tokenizer()
    r = heal(tok, tok.encode("abc"))
    assert r.kept_ids == [257] and r.removed_ids == [] and r.prefix_bytes == b""


@pytest.mark.parametrize(
    "prompt, prefix, kept_text, continuation",
    [
        ("The word is hel", b" hel", "The word is", "lo there"),
        ("https:", b":", "https", "//example.com"),
        ("The qu", b" qu", "The", "ick brown fox"),
    ],
)
def test_heal_real_cl100k_prompts(cl100k, prompt, prefix, kept_text, continuation):
    ids = cl100k.encode(prompt)
    r = heal(cl100k, ids)
    assert r.prefix_bytes == prefix
    assert cl100k.decode(r.kept_ids) == kept_text
    assert r.kept_ids + r.removed_ids == ids
    assert r.satisfiable and r.single_token > 1
    # the kept ids are what the whole text encodes to: the backed-off text is re-decided
    full = cl100k.encode(prompt + continuation)
    assert full[: len(r.kept_ids)] == r.kept_ids
    # the token the full text actually uses after the kept ids is one healing allows
    assert full[len(r.kept_ids)] in r.allowed_next()
    # and without healing that continuation is not prefix-stable
    assert not is_prefix_stable(cl100k, prompt, continuation)


def test_heal_every_allowed_first_token_is_consistent_with_the_prefix(cl100k):
    r = heal(cl100k, cl100k.encode("The word is hel"))
    allowed = r.allowed_next()
    assert len(allowed) > r.single_token
    for i in allowed:
        b = cl100k.decode_single_token_bytes(i)
        assert b.startswith(r.prefix_bytes) or r.prefix_bytes.startswith(b)
    starting = [i for i in allowed if cl100k.decode_single_token_bytes(i).startswith(r.prefix_bytes)]
    assert len(starting) == r.single_token
    assert cl100k.encode_single_token(" hello") in starting


def test_heal_never_backs_off_special_tokens(cl100k):
    ids = cl100k.encode("hi<|endoftext|>", allowed_special="all")
    r = heal(cl100k, ids, max_backoff=5)
    assert r.kept_ids == ids and r.prefix_bytes == b""


def test_multi_token_backoff_respects_max_backoff():
    tok = _ab_abc_tokenizer()
    # "a" + "a": the tail "a" extends to "ab"; "aa" is a prefix of no token
    r = heal(tok, [ord("a"), ord("a")], max_backoff=2)
    assert r.removed_ids == [ord("a")]
    r0 = heal(tok, [ord("a"), ord("a")], max_backoff=0)
    assert r0.removed_ids == [] and r0.kept_ids == [ord("a"), ord("a")]


def test_satisfiability_fails_when_no_token_covers_the_prefix():
    # A WordPiece vocabulary without "z": generation can never reproduce a prefix containing it.
    from tokenforge.analysis.healing import _coverable

    wp = tokenforge.bert_wordpiece({"[UNK]": 0, "[CLS]": 1, "[SEP]": 2, "hel": 3, "##lo": 4, "he": 5, "##l": 6})
    idx = TokenIndex(wp)
    assert _coverable(idx, b"hello")
    assert not _coverable(idx, b"hez")


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet="ab cd1.\n", max_size=16), st.text(alphabet="ab cd1.\n", max_size=6))
def test_is_prefix_stable_matches_its_definition(s1, s2):
    tok = tokenforge.get_encoding("gpt2")
    a = tok.encode_ordinary(s1)
    b = tok.encode_ordinary(s1 + s2)
    assert is_prefix_stable(tok, s1, s2) == (b[: len(a)] == a)
    cuts = set(unstable_boundaries(tok, s1))
    for i in range(1, len(s1)):
        assert (i in cuts) == (not is_prefix_stable(tok, s1[:i], s1[i:]))

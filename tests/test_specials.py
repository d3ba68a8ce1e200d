"""Special tokens: tiktoken's policy (raise by default, allow some or all, or read them as
text), longest match first. The same policy on every model family is checked in
core/test_one_tokenizer.py."""

from __future__ import annotations

import pytest

import tokenforge
from tokenforge import BPETrainer, SpecialTokenError


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


def test_unknown_names_in_a_policy_follow_tiktoken(cl100k):
    # Allowing a string that is no special token allows nothing (tiktoken ignores it) ...
    assert cl100k.encode("x<|nope|>", allowed_special={"<|nope|>"}) == cl100k.encode_ordinary("x<|nope|>")
    # ... disallowing one still guards the text against it.
    with pytest.raises(SpecialTokenError, match="nope"):
        cl100k.encode("x<|nope|>", disallowed_special={"<|nope|>"})
    with pytest.raises(SpecialTokenError, match="collection"):
        cl100k.encode("x", allowed_special="<|endoftext|>")


def test_longest_special_wins():
    tok = BPETrainer(300, special_tokens=["<|endoftext|>", "<|endoftext|><|endoftext|>"]).train_from_iterator(["x"])
    double = tok.special_tokens["<|endoftext|><|endoftext|>"]
    single = tok.special_tokens["<|endoftext|>"]
    ids = tok.encode("a<|endoftext|><|endoftext|><|endoftext|>b", allowed_special="all")
    assert ids[1:3] == [double, single]

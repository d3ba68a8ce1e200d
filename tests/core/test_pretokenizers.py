"""Split patterns: names, their regex texts, and lossless splitting."""

from __future__ import annotations

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

import tokenforge
from tokenforge.pretokenizers import (
    GPT2_ORIGINAL_PATTERN,
    PATTERNS,
    RegexSplit,
    resolve_pattern,
)


@pytest.mark.parametrize("name", list(PATTERNS))
def test_the_regex_text_of_a_named_pattern_resolves_to_its_name(name):
    assert resolve_pattern(PATTERNS[name]) == (name, PATTERNS[name])
    base = tokenforge.get_encoding("cl100k_base")
    tok = tokenforge.Tokenizer(base.model, pre_tokenizer=PATTERNS[name])
    assert tok.pre_tokenizer.name == name  # so the native scanner is used, not the regex fallback


def test_tiktoken_encoding_names_are_aliases():
    assert resolve_pattern("cl100k_base")[0] == "cl100k"
    assert resolve_pattern("r50k_base")[0] == "gpt2"
    assert resolve_pattern("o200k_base")[0] == "o200k"


@settings(max_examples=500, deadline=None)
@given(st.text(st.sampled_from(list("ab Z'stvlrmd\n\r\t 09.!中🙂\u00a0\u3000\u0301")), max_size=40))
def test_original_gpt2_pattern_gives_the_same_pieces_as_the_fast_form(text):
    assert regex.findall(GPT2_ORIGINAL_PATTERN, text) == regex.findall(PATTERNS["gpt2"], text)
    assert resolve_pattern(GPT2_ORIGINAL_PATTERN)[0] == "gpt2"


def test_unknown_pattern_name_is_an_error_not_a_literal():
    with pytest.raises(tokenforge.UnknownEncodingError, match="unknown pattern name 'cl100"):
        resolve_pattern("cl100")


def test_invalid_regex_is_a_clear_error():
    with pytest.raises(tokenforge.UnknownEncodingError, match="invalid split pattern"):
        RegexSplit(r"(unclosed")


def test_custom_pattern_that_skips_text_keeps_every_character():
    split = RegexSplit(r"[a-z]+")
    assert split.split("ab, cd!") == ["ab", ", ", "cd", "!"]
    tok = tokenforge.BPETrainer(300, pattern=r"[a-z]+").train_from_iterator(["ab, cd! " * 20])
    assert tok.decode(tok.encode("ab, cd! xyz")) == "ab, cd! xyz"

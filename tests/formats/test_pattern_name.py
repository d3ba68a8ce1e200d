"""A tokenizer whose split pattern is a published one is named after it, whatever form the
file wrote it in (tiktoken's, an HF ``Split`` regex in Oniguruma's form, GPT-2's original)."""

from __future__ import annotations

import pytest

import tokenforge
from tokenforge.pretokenizers import GPT2_ORIGINAL_PATTERN, PATTERNS, oniguruma_form, pattern_name


@pytest.mark.parametrize("name", sorted(PATTERNS))
def test_each_published_pattern_is_named_in_tiktoken_and_hf_form(name):
    assert pattern_name(PATTERNS[name]) == name
    assert pattern_name(oniguruma_form(PATTERNS[name])) == name


def test_gpt2s_original_pattern_is_gpt2_and_others_have_no_name():
    assert pattern_name(GPT2_ORIGINAL_PATTERN) == "gpt2"
    assert pattern_name(r"\w+|\s+") is None and pattern_name(None) is None


def test_a_bpe_trained_with_the_gpt2_pattern_and_saved_as_tokenizer_json_is_named_gpt2(tmp_path, varied_text):
    tok = tokenforge.BPETrainer(vocab_size=300, pattern="gpt2").train_from_iterator(varied_text.split("\n"))
    assert tok.pattern_name == "gpt2"
    tok.save(tmp_path / "tokenizer.json")
    back = tokenforge.load(tmp_path / "tokenizer.json")
    assert back.pre_tokenizer.to_dict()["type"] == "Sequence"  # Split + ByteLevel, as HF writes it
    assert back.pattern_name == "gpt2"


@pytest.mark.parametrize("encoding,name", [("cl100k_base", "cl100k"), ("o200k_base", "o200k"), ("gpt2", "gpt2")])
def test_an_encoding_keeps_its_pattern_name_through_tokenizer_json(tmp_path, encoding, name):
    tokenforge.get_encoding(encoding).save(tmp_path / "tokenizer.json")
    assert tokenforge.load(tmp_path / "tokenizer.json").pattern_name == name


def test_a_custom_pattern_has_no_name(varied_text):
    tok = tokenforge.BPETrainer(vocab_size=300, pattern=r" ?\w+| ?[^\w\s]+|\s+").train_from_iterator(
        varied_text.split("\n"))
    assert tok.pattern is not None and tok.pattern_name is None

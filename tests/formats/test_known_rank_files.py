"""Rank files other projects publish are recognised by content and hash."""

from __future__ import annotations

import shutil

import pytest

import tokenforge
from tokenforge.encodings import KNOWN_RANK_FILES
from tokenforge.pretokenizers import LLAMA3_PATTERN

TEXT = "Hello, world! It's 2024: 12345 tokens.\n\n  def f(x):\n\treturn x ** 2  # 東京 naïve 👍🏽"


@pytest.fixture(scope="module")
def llama3_file(shared_data):
    return shared_data / "vocab" / "meta" / "llama3_tokenizer.model"


def test_llama3_tokenizer_model_gets_its_pattern_and_256_specials(llama3_file, tmp_path):
    tiktoken = pytest.importorskip("tiktoken")
    from tiktoken.load import load_tiktoken_bpe

    tok = tokenforge.load(llama3_file)
    assert tok.name == "llama3" and tok.pattern == LLAMA3_PATTERN and tok.plan == "rank-bpe"
    assert len(tok.special_tokens) == 256 and tok.n_vocab == 128256
    assert tok.special_tokens["<|begin_of_text|>"] == 128000
    assert tok.special_tokens["<|eot_id|>"] == 128009
    assert tok.special_tokens["<|reserved_special_token_246|>"] == 128255
    ranks = load_tiktoken_bpe(str(llama3_file))
    # Meta's reference code builds exactly this tiktoken.Encoding from the file.
    ref = tiktoken.Encoding("llama3", pat_str=LLAMA3_PATTERN, mergeable_ranks=ranks,
                            special_tokens=dict(tok.special_tokens))
    chat = "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\n" + TEXT + "<|eot_id|>"
    assert tok.encode(chat, allowed_special="all") == ref.encode(chat, allowed_special="all")
    assert tok.encode(TEXT) == ref.encode(TEXT)
    # The same file in a folder, under its own name, is found by content.
    d = tmp_path / "Meta-Llama-3-8B"
    d.mkdir()
    shutil.copy(llama3_file, d / "tokenizer.model")
    assert tokenforge.load(d).encode(chat, allowed_special="all") == tok.encode(chat, allowed_special="all")


def test_known_rank_files_are_keyed_by_their_hash():
    for sha, spec in KNOWN_RANK_FILES.items():
        assert sha == spec.sha256 and len(sha) == 64
        assert len(set(spec.special_tokens.values())) == len(spec.special_tokens)


def test_a_folder_prefers_tokenizer_json_over_vocab_and_merges(tmp_path, small_tokenizer):
    # transformers saves tokenizer.json beside vocab.json + merges.txt; the JSON is complete.
    d = tmp_path / "folder"
    d.mkdir()
    small_tokenizer.save(str(d), format="gpt2")
    small_tokenizer.save(str(d / "tokenizer.json"), format="hf")
    from tokenforge.io import detect_format

    assert detect_format(d) == "hf"
    assert tokenforge.load(d).encode_ordinary(TEXT) == small_tokenizer.encode_ordinary(TEXT)

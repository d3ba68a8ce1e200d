"""``Tokenizer.save`` picks the format from the name and never writes a file that reads
back as a different tokenizer.

Rank files and GPT-2's ``vocab.json`` + ``merges.txt`` hold only part of a pipeline; a
tokenizer whose other parts change the ids (a pattern other than GPT-2's, a
post-processor, a normalizer) must be refused there, with nothing written, rather than
saved as a file that silently gives other ids.
"""

from __future__ import annotations

import pytest

import tokenforge
from tokenforge.io import detect_format


@pytest.mark.parametrize(
    "name, fmt",
    [("tokenizer.json", "hf"), ("x.tiktoken", "tiktoken"), ("mine.json", "tokenforge"), ("out/", "gpt2")],
)
def test_the_name_picks_the_format(tmp_path, name, fmt):
    tok = tokenforge.get_encoding("gpt2")
    target = str(tmp_path) + "/" + name
    tok.save(target)
    assert detect_format(target) == fmt
    kwargs = {"pattern": "gpt2", "special_tokens": dict(tok.special_tokens)} if fmt == "tiktoken" else {}
    back = tokenforge.load(target, **kwargs)
    text = "Hello world, 12345 héllo <|endoftext|>"
    assert back.encode(text, allowed_special="all") == tok.encode(text, allowed_special="all")


def test_tokenizer_json_by_name_is_read_by_hf(tmp_path):
    hf = pytest.importorskip("tokenizers")
    tok = tokenforge.get_encoding("cl100k_base")
    tok.save(str(tmp_path / "tokenizer.json"))
    text = "The quick brown 🦊 jumps   over 1234567 Ünïcödé"
    assert hf.Tokenizer.from_file(str(tmp_path / "tokenizer.json")).encode(text).ids == tok.encode(text)


@pytest.mark.parametrize("fmt, target", [("gpt2", "g"), ("tiktoken", "b.tiktoken")])
def test_byte_tokenizer_is_refused_where_its_eos_rule_would_be_lost(tmp_path, fmt, target):
    tok = tokenforge.get_encoding("bytes")
    with pytest.raises(tokenforge.FileFormatError) as info:
        tok.save(str(tmp_path / target), format=fmt)
    assert str(tmp_path / target) in str(info.value)
    assert list(tmp_path.iterdir()) == []


def test_a_pattern_gpt2_files_cannot_hold_is_refused_and_the_old_files_stay(tmp_path):
    old = tokenforge.get_encoding("gpt2")
    old.save(str(tmp_path), format="gpt2")
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    with pytest.raises(tokenforge.FileFormatError, match=r"cannot hold this tokenizer's pre-tokenizer.*nothing was written"):
        tokenforge.get_encoding("cl100k_base").save(str(tmp_path), format="gpt2", overwrite=True)
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


def test_a_post_processor_is_refused_by_a_rank_file(tmp_path):
    from tokenforge import postprocessors

    gpt2 = tokenforge.get_encoding("gpt2")
    doc = gpt2.to_dict()
    doc["post_processor"] = postprocessors.TemplateProcessing(
        "<|endoftext|> $A", special_tokens=[("<|endoftext|>", 50256)]
    ).to_dict()
    tok = tokenforge.Tokenizer.from_dict(doc)
    assert tok.encode("hi")[0] == 50256
    with pytest.raises(tokenforge.FileFormatError, match="post-processor"):
        tok.save(str(tmp_path / "r.tiktoken"))
    assert list(tmp_path.iterdir()) == []


def test_every_shipped_rank_encoding_still_saves_as_a_rank_file(tmp_path):
    for name in ("gpt2", "cl100k_base", "o200k_base"):
        tok = tokenforge.get_encoding(name)
        tok.save(str(tmp_path / f"{name}.tiktoken"))
        back = tokenforge.load(tmp_path / f"{name}.tiktoken", pattern=tok.pattern, special_tokens=dict(tok.special_tokens))
        assert back.fingerprint() == tok.fingerprint()

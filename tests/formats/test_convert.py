"""``tokenforge.convert`` and ``tokenforge convert``: every exact pair is checked, lossy ones opt in."""

from __future__ import annotations

import json

import pytest

import tokenforge
from tokenforge.cli import main
from tokenforge.errors import FileFormatError

SAMPLE = "Hello world, it's 2024!\n  indented  code(x) {}\n東京 naïve 👍🏽\n<|endoftext|> is text here"


@pytest.mark.parametrize(("source", "dest", "fmt"), [
    ("cl100k_base", "c.tiktoken", "tiktoken"), ("cl100k_base", "tokenizer.json", "hf"), ("o200k_base", "o.json", "tokenforge"),
    ("gpt2", "g2/", "gpt2"),
])
def test_exact_conversions_are_checked_and_load_back(tmp_path, source, dest, fmt):
    target = str(tmp_path) + "/" + dest
    if dest.endswith("/"):
        (tmp_path / dest).mkdir()
    report = tokenforge.convert(source, target, sample=SAMPLE)
    assert report["format"] == fmt and report["exact"] and report["lines"] == 4 and report["tokens"] > 20
    kwargs = {"pattern": tokenforge.get_encoding(source).pattern} if fmt == "tiktoken" else {}
    assert tokenforge.load(target, **kwargs).encode_ordinary(SAMPLE) == tokenforge.get_encoding(source).encode_ordinary(SAMPLE)


def test_sentencepiece_model_to_hf_needs_allow_lossy(tmp_path, shared_data):
    tokenizers = pytest.importorskip("tokenizers")
    src = shared_data / "vocab" / "sentencepiece" / "albert_spiece.model"
    out = tmp_path / "tokenizer.json"
    with pytest.raises(FileFormatError, match="allow_lossy"):
        tokenforge.convert(src, out)
    assert not out.exists()
    report = tokenforge.convert(src, out, allow_lossy=True)
    assert report["notes"] and report["lines"] > 100
    assert 0 < report["lines_differing"] < report["lines"]  # close, not exact: measured, not hidden
    hf = tokenizers.Tokenizer.from_file(str(out))
    ours = tokenforge.load(out)
    for line in SAMPLE.splitlines():
        assert hf.encode(line, add_special_tokens=False).ids == ours.encode(line, disallowed_special=())


def test_llama_style_bpe_model_converts_like_transformers(tmp_path, shared_data):
    src = shared_data / "vocab" / "sentencepiece" / "mistral_v1_tokenizer.model"
    report = tokenforge.convert(src, tmp_path / "tokenizer.json", allow_lossy=True)
    assert report["lines_differing"] == 0  # byte fallback + merges by score: the same ids on the sample


def test_a_conversion_that_changes_ids_is_refused_and_removed(tmp_path, monkeypatch):
    import tokenforge.io as io_mod

    real_load = io_mod.load

    def tampered(path, **kwargs):  # a writer bug: the file comes back with another pattern
        kwargs["pattern"] = "gpt2"
        return real_load(path, **kwargs)

    monkeypatch.setattr(io_mod, "load", tampered)
    out = tmp_path / "c.tiktoken"
    with pytest.raises(FileFormatError, match="other ids"):
        tokenforge.convert("cl100k_base", out, sample=SAMPLE)
    assert not out.exists()


def test_cli_convert_prints_the_check(tmp_path, capsys, shared_data):
    code = main(["convert", "cl100k_base", str(tmp_path / "c.tiktoken")])
    out = capsys.readouterr().out
    assert code == 0 and "the same ids on" in out and "no special tokens" in out
    src = shared_data / "vocab" / "sentencepiece" / "albert_spiece.model"
    assert main(["convert", str(src), str(tmp_path / "tokenizer.json")]) == 1
    assert "--allow-lossy" in capsys.readouterr().err
    code = main(["convert", str(src), str(tmp_path / "tokenizer.json"), "--allow-lossy", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0 and report["exact"] is False and report["example"]["ids"] != report["example"]["written_ids"]

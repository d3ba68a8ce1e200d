"""Saving never replaces an existing tokenizer unless asked (``overwrite=True``), and
``convert`` checks the written file before it replaces anything.

A name ending in ``tokenizer.json`` is HF's format, whatever comes before it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import tokenforge
from tokenforge.formats import format_for_path


def _target(tmp_path: Path, fmt: str) -> Path:
    return {"tokenforge": tmp_path / "tok.json", "hf": tmp_path / "tokenizer.json",
            "tiktoken": tmp_path / "tok.tiktoken", "gpt2": tmp_path / "gpt2"}[fmt]


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("fmt", ["tokenforge", "hf", "tiktoken", "gpt2"])
def test_save_refuses_to_replace_an_existing_tokenizer_and_names_the_file(tmp_path, small_tokenizer, fmt):
    target = _target(tmp_path, fmt)
    small_tokenizer.save(target, format=fmt)
    before = _snapshot(tmp_path)
    other = tokenforge.get_encoding("gpt2")
    with pytest.raises(tokenforge.OutputExistsError) as info:
        other.save(target, format=fmt)
    assert isinstance(info.value, FileExistsError) and isinstance(info.value, tokenforge.SaveError)
    named = target / "vocab.json" if fmt == "gpt2" else target
    assert str(named) in str(info.value) and "overwrite=True" in str(info.value)
    assert _snapshot(tmp_path) == before


@pytest.mark.parametrize("fmt", ["tokenforge", "hf", "gpt2"])
def test_save_with_overwrite_replaces_the_existing_tokenizer(tmp_path, small_tokenizer, fmt):
    target = _target(tmp_path, fmt)
    small_tokenizer.save(target, format=fmt)
    tokenforge.get_encoding("gpt2").save(target, format=fmt, overwrite=True)
    assert tokenforge.load(target).n_vocab == 50257


def test_the_module_level_save_refuses_too(tmp_path, small_tokenizer):
    target = tmp_path / "tok.json"
    tokenforge.save(small_tokenizer, target)
    with pytest.raises(tokenforge.OutputExistsError, match="tok.json already exists"):
        tokenforge.save(small_tokenizer, target)
    tokenforge.save(small_tokenizer, target, overwrite=True)


def test_saving_into_an_existing_empty_folder_is_not_an_overwrite(tmp_path, small_tokenizer):
    folder = tmp_path / "gpt2"
    folder.mkdir()
    small_tokenizer.save(folder, format="gpt2")
    assert sorted(p.name for p in folder.iterdir()) == ["merges.txt", "vocab.json"]


def test_convert_refuses_an_existing_destination_before_any_work(tmp_path):
    dest = tmp_path / "tokenizer.json"
    dest.write_text("{}")
    with pytest.raises(tokenforge.OutputExistsError, match=r"tokenizer\.json already exists; pass overwrite=True"):
        tokenforge.io.convert("gpt2", dest, sample="hello world")
    assert dest.read_text() == "{}"
    report = tokenforge.io.convert("gpt2", dest, sample="hello world", overwrite=True)
    assert report["exact"] and tokenforge.load(dest).encode("hello world") == [31373, 995]


def test_a_convert_whose_check_fails_leaves_the_previous_file_as_it_was(tmp_path, monkeypatch):
    dest = tmp_path / "tok.json"
    tokenforge.get_encoding("gpt2").save(dest)
    before = dest.read_bytes()
    # the file read back gives other ids than the source: the check must fail
    monkeypatch.setattr(tokenforge.io, "load", lambda *a, **k: tokenforge.get_encoding("cl100k_base"))
    with pytest.raises(tokenforge.FileFormatError, match="other ids.*nothing was written"):
        tokenforge.io.convert("gpt2", dest, sample="hello world\n  indented code", overwrite=True)
    assert dest.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tok.json"]  # no temporary file or folder left


def test_a_failed_convert_into_a_new_folder_leaves_no_folder(tmp_path, monkeypatch):
    monkeypatch.setattr(tokenforge.io, "load", lambda *a, **k: tokenforge.get_encoding("cl100k_base"))
    with pytest.raises(tokenforge.FileFormatError, match="other ids"):
        tokenforge.io.convert("gpt2", tmp_path / "new" / "gpt2", to="gpt2", sample="hello world")
    assert list(tmp_path.iterdir()) == []


def test_convert_replaces_a_gpt2_pair_together_once_it_is_checked(tmp_path, small_tokenizer):
    folder = tmp_path / "files"
    small_tokenizer.save(folder, format="gpt2")
    report = tokenforge.io.convert("gpt2", folder, to="gpt2", sample="hello world", overwrite=True)
    assert report["exact"] and report["format"] == "gpt2"
    assert sorted(p.name for p in folder.iterdir()) == ["merges.txt", "vocab.json"]
    assert tokenforge.load(folder).n_vocab == 50257


@pytest.mark.parametrize("name", ["tokenizer.json", "y_tokenizer.json", "gpt2-tokenizer.json", "x.hf.json"])
def test_a_name_ending_in_tokenizer_json_is_hf_format(name):
    assert format_for_path(name) == "hf"


@pytest.mark.parametrize("name", ["tok.json", "tokenizer.tokenforge.json", "tokenizer.json.bak.json"])
def test_other_json_names_are_tokenforge_format(name):
    assert format_for_path(name) == "tokenforge"


def test_convert_to_a_name_ending_in_tokenizer_json_writes_hf(tmp_path):
    dest = tmp_path / "y_tokenizer.json"
    report = tokenforge.io.convert("gpt2", dest, sample="hello world")
    doc = json.loads(dest.read_text(encoding="utf-8"))
    assert report["format"] == "hf" and "format_version" not in doc and doc["model"]["type"] == "BPE"


@pytest.mark.parametrize("train", ["train_unigram", "train_sentencepiece_bpe"])
def test_training_to_an_existing_model_file_is_refused_before_any_work(tmp_path, train, monkeypatch):
    target = tmp_path / "spm.model"
    target.write_bytes(b"an earlier model")
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("the cat sat on the mat\n" * 50, encoding="utf-8")
    from tokenforge import presets

    def no_counting(*args, **kwargs):  # the refusal must come before the corpus is read
        raise AssertionError("training started")

    monkeypatch.setattr(presets, "_sentencepiece_counts", no_counting)
    with pytest.raises(tokenforge.OutputExistsError, match="spm.model already exists"):
        getattr(tokenforge, train)([corpus], vocab_size=40, show_progress=False, out=target)
    assert target.read_bytes() == b"an earlier model"


@pytest.mark.parametrize("train", ["train_unigram", "train_sentencepiece_bpe"])
def test_training_with_overwrite_replaces_the_model_file(tmp_path, train):
    target = tmp_path / "spm.model"
    target.write_bytes(b"an earlier model")
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("the cat sat on the mat\nthe dog sat on the log\n" * 50, encoding="utf-8")
    tok = getattr(tokenforge, train)([corpus], vocab_size=300, show_progress=False, out=target, overwrite=True)
    assert tokenforge.load(target).encode("the cat") == tok.encode("the cat")


def test_a_killed_converts_temporary_folder_is_removed_by_the_next_convert(tmp_path):
    dest = tmp_path / "out.json"
    import subprocess
    import sys

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    pid = int(dead.stdout)
    leftover = tmp_path / f".out.json.{pid}.abc123.tmp"
    (leftover / "inner").mkdir(parents=True)
    (leftover / "inner" / "half.json").write_text("{", encoding="utf-8")
    alive = tmp_path / f".out.json.{os.getpid()}.keep.tmp"  # this process is alive: never touched
    alive.mkdir()
    tokenforge.convert(tokenforge.get_encoding("gpt2"), dest)
    assert not leftover.exists()
    assert alive.exists()
    assert dest.exists()

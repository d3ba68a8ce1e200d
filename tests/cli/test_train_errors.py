"""``tokenforge train`` fails early and clearly: an output path it cannot write is an error
naming it before any training; an empty input is an error naming the file; a vocabulary
larger than the input allows says "stopped early" for every family; tokens are never
printed with raw control bytes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

EXE = str(Path(sys.executable).with_name("tokenforge"))
FAMILIES = ["bpe", "wordpiece", "unigram", "spm-bpe"]


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([EXE, "train", *args], capture_output=True, text=True, timeout=300)


@pytest.fixture
def text_file(tmp_path: Path) -> Path:
    path = tmp_path / "a.txt"
    path.write_text("hello world, the quick brown fox jumps over the lazy dog\nanother line of text\n" * 3,
                    encoding="utf-8")
    return path



@pytest.mark.parametrize("model", FAMILIES)
def test_a_missing_output_folder_fails_before_training(model, tmp_path):
    out = tmp_path / "missing" / "dir" / "t.json"
    # the embedded corpus and --progress: any training would draw a bar
    r = run("--model", model, "--vocab-size", "6000", "--out", str(out), "--format", "tokenforge", "--progress")
    assert r.returncode == 1
    assert r.stderr == f"tokenforge: error: cannot write {out}: the folder {out.parent} does not exist\n"
    assert r.stdout == "" and not out.parent.exists()


@pytest.mark.parametrize("model", ["bpe", "unigram"])
def test_an_unwritable_output_folder_fails_before_training(model, text_file, unwritable_folder):
    folder = unwritable_folder
    out = folder / ("t.model" if model == "unigram" else "t.json")
    r = run(str(text_file), "--model", model, "--vocab-size", "300", "--out", str(out), "--progress")
    assert r.returncode == 1
    assert r.stderr.startswith(f"tokenforge: error: cannot write {out}: the folder {folder} is not writable")
    assert r.stderr.count("\n") == 1 and "%|" not in r.stderr and ".tmp" not in r.stderr


def test_an_output_that_is_a_folder_fails_before_training(text_file, tmp_path):
    r = run(str(text_file), "--vocab-size", "300", "--out", str(tmp_path), "--format", "hf")
    assert r.returncode == 1 and f"cannot write {tmp_path}: it is a folder" in r.stderr


def test_a_folder_output_may_be_created(text_file, tmp_path):
    out = tmp_path / "new" / "gpt2"
    r = run(str(text_file), "--vocab-size", "300", "--out", f"{out}/")
    assert r.returncode == 0, r.stderr
    assert (out / "vocab.json").is_file() and (out / "merges.txt").is_file()


@pytest.mark.parametrize("model", FAMILIES)
def test_an_empty_file_is_an_error_naming_it(model, tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    out = tmp_path / "t.json"
    r = run(str(empty), "--model", model, "--vocab-size", "300", "--out", str(out), "--format", "tokenforge")
    assert r.returncode == 1
    assert r.stderr == f"tokenforge: error: no text to train on: {empty} is empty\n"
    assert r.stdout == "" and not out.exists()


def test_several_empty_files_are_named(tmp_path):
    files = [tmp_path / "a.txt", tmp_path / "b.txt"]
    for f in files:
        f.write_bytes(b"")
    r = run(*map(str, files), "--out", str(tmp_path / "t.json"))
    assert r.returncode == 1 and f"{files[0]}, {files[1]} are empty" in r.stderr


@pytest.mark.parametrize("model", ["wordpiece", "unigram", "spm-bpe"])
def test_a_file_of_white_space_is_an_error_naming_it(model, tmp_path):
    blank = tmp_path / "blank.txt"
    blank.write_text("\n\n   \n\t\n", encoding="utf-8")
    r = run(str(blank), "--model", model, "--vocab-size", "300", "--out", str(tmp_path / "t.json"))
    assert r.returncode == 1
    assert r.stderr.startswith(f"tokenforge: error: no text to train on in {blank}: ")
    assert r.stderr.count("\n") == 1


def test_a_file_of_special_tokens_only_is_an_error_naming_it(tmp_path):
    only = tmp_path / "only.txt"
    only.write_text("<|endoftext|><|endoftext|>", encoding="utf-8")
    r = run(str(only), "--vocab-size", "300", "--out", str(tmp_path / "t.json"))
    assert r.returncode == 1
    assert r.stderr == f"tokenforge: error: no text to train on in {only}: it holds nothing but special tokens\n"


def _has_raw_control(text: str) -> bool:
    return any((ord(c) < 0x20 and c not in "\n") or 0x7F <= ord(c) < 0xA0 for c in text)


def test_tokens_are_never_printed_with_raw_control_bytes(tmp_path):
    src = tmp_path / "ctrl.txt"
    src.write_bytes(b"a\x00b \x1b[31mred\x1b[0m \x07bell\x7f \xc2\x85x\xe2\x80\x8b " * 20)
    r = run(str(src), "--vocab-size", "300", "--pattern", "none", "--out", str(tmp_path / "t.json"))
    assert r.returncode == 0, r.stderr
    assert not _has_raw_control(r.stdout), repr(r.stdout)
    assert "\\x00" in r.stdout and "\\x1b[" in r.stdout  # shown escaped, not dropped
    j = run(str(src), "--vocab-size", "300", "--pattern", "none", "--out", str(tmp_path / "t.json"), "--json",
            "--overwrite")
    assert j.returncode == 0 and not _has_raw_control(j.stdout)
    tokens = [t["token"] for t in json.loads(j.stdout)["longest_tokens"]]
    assert any("\\x1b" in t for t in tokens) and not any(_has_raw_control(t) for t in tokens)


def test_the_byte_tokens_of_a_tiny_vocabulary_are_shown_escaped(text_file, tmp_path):
    """A vocabulary of the 256 bytes alone lists byte tokens 0, 1, ...: escaped, as ``\\x00``."""
    r = run(str(text_file), "--vocab-size", "257", "--out", str(tmp_path / "t.json"))
    assert r.returncode == 0, r.stderr
    assert not _has_raw_control(r.stdout) and "\\x00" in r.stdout


@pytest.mark.parametrize("model", ["wordpiece", "unigram", "spm-bpe"])
def test_an_oversized_vocabulary_says_it_stopped_early(model, text_file, tmp_path):
    args = [str(text_file), "--model", model, "--vocab-size", "5000", "--out", str(tmp_path / "t.json"),
            "--format", "tokenforge"]
    r = run(*args)
    assert r.returncode == 0, r.stderr
    size = int(r.stdout.split("vocab size")[1].split()[0])
    assert size < 5000
    assert "stopped early   " in r.stdout and f"at {size} of the 5000 tokens" in r.stdout
    j = json.loads(run(*args, "--json", "--overwrite").stdout)
    assert j["stopped_early"] is True and j["vocab_size"] == size and j["vocab_size_requested"] == 5000


@pytest.mark.parametrize("model,size", [("wordpiece", 60), ("unigram", 33), ("spm-bpe", 300)])
def test_a_vocabulary_that_is_reached_does_not_say_stopped_early(model, size, text_file, tmp_path):
    r = run(str(text_file), "--model", model, "--vocab-size", str(size), "--out", str(tmp_path / "t.json"),
            "--format", "tokenforge", "--json")
    assert r.returncode == 0, r.stderr
    j = json.loads(r.stdout)
    assert j["vocab_size"] == size and j["stopped_early"] is False

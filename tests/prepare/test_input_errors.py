"""Input that is not UTF-8: ``prepare`` and ``count`` stop naming the file, line, byte and
the way out (``input_errors=`` in Python, ``--input-errors`` in every CLI command that reads
a corpus), or read it as ``bytes.decode(..., errors)`` does, for every input format."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tokenforge
from tokenforge.prepare import sources as _sources

HANDLERS = ["replace", "ignore", "backslashreplace"]
EXE = str(Path(sys.executable).with_name("tokenforge"))

# invalid bytes of every kind: a stray continuation, a lead byte cut short, an overlong form,
# a surrogate's encoding, and a character cut at the very end
DOCS = [b"caf\xe9 au lait", b"ok \x80\x80 two", b"\xe4\xb8 cut \xf0\x9f\x99", b"over\xc0\xafong \xed\xa0\x80 s",
        "fine 東京 🙂".encode(), b"end \xe4\xb8"]


def _ids(out: Path) -> list[int]:
    return np.asarray(tokenforge.open_tokens(out).ids).tolist()


def _expected(docs: list[str]) -> list[int]:
    enc = tokenforge.get_encoding("gpt2")
    return [t for d in docs if d for t in enc.encode(d, disallowed_special=()) + [enc.eot_token]]


def _inputs(tmp_path: Path) -> dict[str, tuple[list[Path], dict]]:
    text = tmp_path / "one.txt"
    text.write_bytes(b"\n".join(DOCS))
    delimited = tmp_path / "docs.txt"
    delimited.write_bytes(b"<|endoftext|>".join(DOCS))
    lines = b"".join(b'{"id": 1, "text": "' + d + b'"}\n' for d in DOCS)
    jsonl = tmp_path / "docs.jsonl"
    jsonl.write_bytes(lines)
    gz = tmp_path / "docs.jsonl.gz"
    gz.write_bytes(gzip.compress(lines))
    return {"text": ([text], {}), "delimited": ([delimited], {"split_on": "<|endoftext|>"}),
            "jsonl": ([jsonl], {}), "jsonl.gz": ([gz], {})}


def _documents(kind: str, errors: str) -> list[str]:
    if kind == "text":
        return [b"\n".join(DOCS).decode("utf-8", errors)]
    return [d.decode("utf-8", errors) for d in DOCS]


@pytest.mark.parametrize("errors", HANDLERS)
@pytest.mark.parametrize("kind", ["text", "delimited", "jsonl", "jsonl.gz"])
def test_each_handler_reads_as_bytes_decode_does(kind, errors, tmp_path, monkeypatch):
    monkeypatch.setattr(_sources, "BLOCK_BYTES", 7)  # blocks end inside invalid sequences too
    inputs, kw = _inputs(tmp_path)[kind]
    index = tokenforge.prepare(inputs, "gpt2", tmp_path / "o", input_errors=errors, show_progress=False, **kw)
    assert _ids(tmp_path / "o") == _expected(_documents(kind, errors))
    assert index["options"]["input_errors"] == errors
    report = tokenforge.count(inputs, "gpt2", input_errors=errors, show_progress=False, **kw)
    assert report.total.tokens == len(_expected(_documents(kind, errors))) - report.total.documents


@pytest.mark.parametrize("kind", ["text", "delimited", "jsonl", "jsonl.gz"])
def test_strict_names_the_file_line_byte_and_the_way_out(kind, tmp_path):
    inputs, kw = _inputs(tmp_path)[kind]
    where = {"text": r"line 1: not valid UTF-8 \(byte 3: e9", "delimited": r"line 1: not valid UTF-8 \(byte 3: e9",
             "jsonl": r"line 1: not valid UTF-8 \(byte 22: e9",
             "jsonl.gz": r"line 1: not valid UTF-8 \(byte 22 of the decompressed text: e9"}[kind]
    for call in (lambda: tokenforge.prepare(inputs, "gpt2", tmp_path / "o", show_progress=False, **kw),
                 lambda: tokenforge.count(inputs, "gpt2", show_progress=False, **kw)):
        with pytest.raises(tokenforge.FileFormatError, match=rf"{inputs[0].name}, {where}.*input_errors='replace'"):
            call()
    assert not (tmp_path / "o").exists()


def test_an_unknown_handler_is_refused(tmp_path):
    with pytest.raises(tokenforge.InvalidArgumentError, match="input_errors must be one of strict, replace"):
        tokenforge.count(iter(["a"]), "gpt2", input_errors="surrogateescape", show_progress=False)


def run(*args, stdin: bytes = b"") -> subprocess.CompletedProcess:
    return subprocess.run([EXE, *map(str, args)], input=stdin, capture_output=True, timeout=300)


@pytest.mark.parametrize("command", ["prepare", "count"])
def test_the_cli_error_names_the_flag_and_the_flag_works(command, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b'{"text": "fine"}\n{"text": "caf\xe9"}\n')
    out = ["-o", tmp_path / "o"] if command == "prepare" else []
    r = run(command, bad, "-t", "gpt2", "-q", *out)
    err = r.stderr.decode()
    assert r.returncode == 1 and err.count("\n") == 1, err
    assert f"{bad}, line 2: not valid UTF-8 (byte 30: e9" in err
    assert "pass --input-errors replace to read invalid bytes as U+FFFD, or --input-errors ignore" in err
    assert "input_errors=" not in err
    r = run(command, bad, "-t", "gpt2", "-q", "--json", "--input-errors", "backslashreplace", *out)
    assert r.returncode == 0, r.stderr
    tokens = [i["tokens"] for i in json.loads(r.stdout)["inputs"]]
    enc = tokenforge.get_encoding("gpt2")
    want = len(enc.encode("fine")) + len(enc.encode("caf\\xe9")) + (2 if command == "prepare" else 0)
    assert tokens == [want]


def test_count_reads_stdin_with_the_flag():
    r = run("count", "-", "-t", "gpt2", "-q", stdin=b"caf\xe9 ok")
    assert r.returncode == 1 and b"<stdin>, line 1: not valid UTF-8 (byte 3: e9" in r.stderr
    assert b"--input-errors replace" in r.stderr
    r = run("count", "-", "-t", "gpt2", "-q", "--json", "--input-errors", "replace", stdin=b"caf\xe9 ok")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["total"]["tokens"] == len(tokenforge.get_encoding("gpt2").encode("caf\ufffd ok"))


def test_train_and_encode_take_the_same_flag(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"hello world hello world\nbad \xff byte\n" * 3)
    r = run("train", bad, "--vocab-size", "270", "--out", tmp_path / "t.json", "-q")
    assert r.returncode == 1 and b"pass --input-errors replace or --input-errors ignore to train anyway" in r.stderr
    for handler in HANDLERS:
        r = run("train", bad, "--vocab-size", "270", "--out", tmp_path / "t.json", "-q", "--input-errors", handler, "--overwrite")
        assert r.returncode == 0, r.stderr
    r = run("train", bad, "--vocab-size", "270", "--out", tmp_path / "t.json", "-q", "--errors", "replace", "--overwrite")
    assert r.returncode == 0, r.stderr  # the flag's former name still works
    assert b"--errors" not in run("train", "--help").stdout
    r = run("encode", "-f", bad, "-t", "gpt2", "--input-errors", "backslashreplace")
    enc = tokenforge.get_encoding("gpt2")
    assert r.returncode == 0 and [int(x) for x in r.stdout.split()] == enc.encode(
        bad.read_bytes().decode("utf-8", "backslashreplace"))
    r = run("encode", "-f", bad, "-t", "gpt2")
    assert r.returncode == 1 and b"--input-errors backslashreplace" in r.stderr

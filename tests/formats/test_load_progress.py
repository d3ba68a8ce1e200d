"""Loading a big tokenizer file shows a progress bar (by the one progress rule); a small
file, a GGUF file (mapped, only its vocabulary read) or a hidden stderr shows none."""

from __future__ import annotations

import io
import re
import sys

import pytest

import tokenforge
from tokenforge import io as tf_io

BAR = re.compile(r"load gpt2\.tiktoken: +\d+%\|")


@pytest.fixture
def rank_file(tmp_path):
    path = tmp_path / "gpt2.tiktoken"
    tokenforge.save(tokenforge.get_encoding("gpt2"), path, format="tiktoken")
    return path


def _record(monkeypatch) -> list[tuple[int | None, int]]:
    """(total, done) of every bar load closes."""
    from tokenforge import progress

    closed: list[tuple[int | None, int]] = []

    class Recorder(progress.Progress):
        def __init__(self, total, *args, **kwargs):
            self.total = total
            super().__init__(total, *args, **kwargs)

        def close(self) -> None:
            if self:
                closed.append((self.total, self.n))
            super().close()

    monkeypatch.setattr(progress, "Progress", Recorder)
    return closed


def test_a_big_file_shows_a_bar_that_completes(rank_file, monkeypatch):
    monkeypatch.setattr(tf_io, "LOAD_PROGRESS_BYTES", rank_file.stat().st_size)
    closed = _record(monkeypatch)
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    tok = tf_io.load(rank_file, show_progress=True)
    assert tok.encode("hello world") == tokenforge.get_encoding("gpt2").encode("hello world")
    assert BAR.search(err.getvalue()), err.getvalue()
    size = rank_file.stat().st_size
    assert closed == [(size, size)]


def test_a_file_below_the_threshold_shows_nothing(rank_file, monkeypatch):
    monkeypatch.setattr(tf_io, "LOAD_PROGRESS_BYTES", rank_file.stat().st_size + 1)
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    tf_io.load(rank_file, show_progress=True)
    assert err.getvalue() == ""


def test_by_default_nothing_is_shown_when_stderr_is_not_a_terminal(rank_file, monkeypatch):
    monkeypatch.setattr(tf_io, "LOAD_PROGRESS_BYTES", 0)
    err = io.StringIO()  # not a terminal
    monkeypatch.setattr(sys, "stderr", err)
    tf_io.load(rank_file)
    assert err.getvalue() == ""


def test_a_failed_load_closes_its_bar_and_names_the_file(tmp_path, monkeypatch):
    bad = tmp_path / "broken.tiktoken"
    bad.write_bytes(b"aGVsbG8= 0\nnot base64 at all\n")
    monkeypatch.setattr(tf_io, "LOAD_PROGRESS_BYTES", 0)
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    closed = _record(monkeypatch)
    with pytest.raises(tokenforge.FileFormatError, match="broken.tiktoken"):
        tf_io.load(bad, show_progress=True, pattern="gpt2")
    assert closed == [(bad.stat().st_size, 0)]  # closed, without claiming the load finished
    assert "Traceback" not in err.getvalue()


def test_the_bytes_counted_are_those_load_reads(tmp_path, rank_file):
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "tokenizer.json").write_text("{}" * 10)
    (folder / "model.safetensors").write_bytes(b"\0" * 5000)  # weights: never read by load
    assert tf_io._bytes_to_read(folder) == 20
    assert tf_io._bytes_to_read(rank_file) == rank_file.stat().st_size
    (tmp_path / "m.gguf").write_bytes(b"GGUF" + b"\0" * 100)
    assert tf_io._bytes_to_read(tmp_path / "m.gguf") == 0
    assert tf_io._bytes_to_read(tmp_path / "missing") == 0

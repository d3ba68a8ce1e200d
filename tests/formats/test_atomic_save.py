"""Every writer is atomic: a save that fails midway leaves the previous file(s) exactly
as they were and no temporary file behind.

Failures are injected into ``tokenforge._io`` (the one place that opens and renames
files) through a stand-in for its ``os`` module, so nothing global is patched.
"""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace

import pytest

import tokenforge
import tokenforge._io as io_mod

FORMATS = ("tokenforge", "tiktoken", "gpt2")


class Crash(Exception):
    """The simulated failure (a disk-full error, a bug in a writer, ...)."""


@pytest.fixture(scope="module")
def old_tok(varied_text):
    return tokenforge.BPETrainer(vocab_size=280, special_tokens=["<|endoftext|>"]).train_from_iterator(
        [varied_text[: len(varied_text) // 2]]
    )


@pytest.fixture(scope="module")
def new_tok(varied_text):
    return tokenforge.BPETrainer(vocab_size=320, special_tokens=["<|endoftext|>"]).train_from_iterator(
        [varied_text]
    )


def _target(directory: Path, fmt: str) -> Path:
    return directory / {"tokenforge": "tok.json", "tiktoken": "tok.tiktoken", "gpt2": "gpt2"}[fmt]


def _files(directory: Path) -> dict[str, bytes]:
    """Every file under ``directory`` (relative name -> bytes), temporary ones included."""
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


def _os_with(**overrides) -> SimpleNamespace:
    """A stand-in for the ``os`` module with some functions replaced."""
    ns = SimpleNamespace(**{name: getattr(os, name) for name in dir(os) if not name.startswith("__")})
    for name, fn in overrides.items():
        setattr(ns, name, fn)
    return ns


class _HalfWriter:
    """Wraps a real file: the first ``write`` that would pass ``limit`` characters in
    total writes up to the limit, flushes (so the partial data is really on disk)
    and raises ``exc``."""

    def __init__(self, f, limit: int, exc: BaseException, log: list):
        self._f, self._limit, self._exc, self._log = f, limit, exc, log
        self._written = 0

    def write(self, s):
        room = self._limit - self._written
        if len(s) <= room:
            self._written += len(s)
            return self._f.write(s)
        self._f.write(s[:room])
        self._f.flush()
        self._log.append(os.fstat(self._f.fileno()).st_size)  # bytes really written before the crash
        raise self._exc

    def __getattr__(self, name):
        return getattr(self._f, name)

    def __enter__(self):
        self._f.__enter__()
        return self

    def __exit__(self, *exc):
        return self._f.__exit__(*exc)


def _crash_midway(monkeypatch, exc: BaseException, *, skip_files: int = 0) -> list:
    """Make the (skip_files+1)-th file opened by atomic_write fail partway: after
    200 characters, which is part of any file written here (each is over 1 kB).
    Returns a list that gets the size of the partial temporary file."""
    log: list = []
    opened = {"n": 0}
    real_fdopen = os.fdopen

    def fdopen(fd, *args, **kwargs):
        f = real_fdopen(fd, *args, **kwargs)
        n = opened["n"]
        opened["n"] += 1
        if n == skip_files:
            return _HalfWriter(f, 200, exc, log)
        return f

    monkeypatch.setattr(io_mod, "os", _os_with(fdopen=fdopen))
    return log


def _crash_on_rename(monkeypatch, *, skip_files: int = 0) -> list:
    calls: list = []

    def replace(src, dst):
        calls.append((src, dst))
        if len(calls) > skip_files:
            raise Crash(f"rename of {src} failed")
        return os.replace(src, dst)

    monkeypatch.setattr(io_mod, "os", _os_with(replace=replace))
    return calls


def _n_files(fmt: str) -> int:
    return 2 if fmt == "gpt2" else 1


# ------------------------------------------------------------------ success


@pytest.mark.parametrize("fmt", FORMATS)
def test_successful_save_leaves_no_temporary_file(tmp_path, old_tok, new_tok, fmt):
    target = _target(tmp_path, fmt)
    old_tok.save(str(target), format=fmt)
    new_tok.save(str(target), format=fmt, overwrite=True)
    expected = {"tokenforge": ["tok.json"], "tiktoken": ["tok.tiktoken"], "gpt2": ["gpt2/merges.txt", "gpt2/vocab.json"]}
    assert sorted(_files(tmp_path)) == expected[fmt]


@pytest.mark.parametrize("fmt", FORMATS)
def test_overwriting_replaces_the_old_content_completely(tmp_path, old_tok, new_tok, fmt):
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    new_tok.save(str(_target(fresh, fmt)), format=fmt)
    over = tmp_path / "over"
    over.mkdir()
    old_tok.save(str(_target(over, fmt)), format=fmt)
    new_tok.save(str(_target(over, fmt)), format=fmt, overwrite=True)
    assert _files(over) == _files(fresh)


# ------------------------------------------------------- crash while writing


@pytest.mark.parametrize("exc", [Crash("disk full"), KeyboardInterrupt()], ids=["exception", "KeyboardInterrupt"])
@pytest.mark.parametrize("fmt", FORMATS)
def test_crash_while_writing_keeps_old_file_and_leaves_no_temp(tmp_path, monkeypatch, old_tok, new_tok, fmt, exc):
    target = _target(tmp_path, fmt)
    old_tok.save(str(target), format=fmt)
    before = _files(tmp_path)
    log = _crash_midway(monkeypatch, exc)
    with pytest.raises(type(exc)):
        new_tok.save(str(target), format=fmt, overwrite=True)
    assert log and log[0] > 0, "the failure was not injected after a partial write"
    monkeypatch.undo()
    assert _files(tmp_path) == before
    again = tokenforge.load(target, **({"pattern": "gpt2"} if fmt == "tiktoken" else {}))
    assert dict(again.mergeable_ranks) == dict(old_tok.mergeable_ranks)


def test_crash_while_writing_merges_keeps_the_old_gpt2_pair(tmp_path, monkeypatch, old_tok, new_tok):
    """vocab.json and merges.txt only mean something together: a save that fails
    on the second file must not leave the new vocab.json beside the old merges.txt."""
    target = _target(tmp_path, "gpt2")
    old_tok.save(str(target), format="gpt2")
    before = _files(tmp_path)
    log = _crash_midway(monkeypatch, Crash("disk full"), skip_files=1)
    with pytest.raises(Crash):
        new_tok.save(str(target), format="gpt2", overwrite=True)
    assert log, "the failure was not injected"
    monkeypatch.undo()
    after = _files(tmp_path)
    assert sorted(after) == sorted(before), "a temporary file was left behind"
    assert after["gpt2/merges.txt"] == before["gpt2/merges.txt"]
    assert after["gpt2/vocab.json"] == before["gpt2/vocab.json"], "vocab.json was replaced but merges.txt was not"


@pytest.mark.parametrize("fmt", FORMATS)
def test_crash_while_writing_a_new_file_creates_nothing(tmp_path, monkeypatch, new_tok, fmt):
    target = _target(tmp_path, fmt)
    if fmt == "gpt2":
        target.mkdir()
    _crash_midway(monkeypatch, Crash("disk full"))
    with pytest.raises(Crash):
        new_tok.save(str(target), format=fmt)
    monkeypatch.undo()
    assert _files(tmp_path) == {}


# ------------------------------------------------------- crash on rename


@pytest.mark.parametrize("fmt", FORMATS)
def test_failed_rename_keeps_old_file_and_leaves_no_temp(tmp_path, monkeypatch, old_tok, new_tok, fmt):
    target = _target(tmp_path, fmt)
    old_tok.save(str(target), format=fmt)
    before = _files(tmp_path)
    calls = _crash_on_rename(monkeypatch)
    with pytest.raises(Crash):
        new_tok.save(str(target), format=fmt, overwrite=True)
    assert calls, "the failure was not injected"
    # the rename was attempted from a temporary file in the same directory as the target
    src, dst = calls[0]
    assert Path(src).parent == Path(dst).parent
    monkeypatch.undo()
    assert _files(tmp_path) == before


def test_failed_rename_of_merges_keeps_the_old_gpt2_pair(tmp_path, monkeypatch, old_tok, new_tok):
    target = _target(tmp_path, "gpt2")
    old_tok.save(str(target), format="gpt2")
    before = _files(tmp_path)
    _crash_on_rename(monkeypatch, skip_files=1)
    with pytest.raises(Crash):
        new_tok.save(str(target), format="gpt2", overwrite=True)
    monkeypatch.undo()
    assert _files(tmp_path) == before


# ------------------------------------------------------- errors before writing


@pytest.mark.parametrize("fmt", ["tiktoken", "gpt2"])
def test_unwritable_model_is_rejected_before_touching_the_old_file(tmp_path, old_tok, fmt):
    """A model with two ids for the same bytes has no tiktoken/GPT-2 form."""
    target = _target(tmp_path, fmt)
    old_tok.save(str(target), format=fmt)
    before = _files(tmp_path)
    vocab = dict(old_tok.model.vocab)
    vocab[max(vocab) + 1] = vocab[max(vocab)]  # same bytes again under a new id
    dup = tokenforge.Tokenizer(tokenforge.BPE(vocab), special_tokens=dict(old_tok.special_tokens))
    with pytest.raises(tokenforge.FileFormatError):
        dup.save(str(target), format=fmt, overwrite=True)
    assert _files(tmp_path) == before


@pytest.mark.parametrize("where", ["empty", "folder", "missing-folder"])
def test_save_failures_name_the_target_not_a_temporary_file(tmp_path, where):
    tok = tokenforge.get_encoding("gpt2")
    target = {"empty": "", "folder": str(tmp_path), "missing-folder": str(tmp_path / "nope" / "t.json")}[where]
    with pytest.raises(tokenforge.SaveError) as info:
        tok.save(target, format="tokenforge")
    assert isinstance(info.value, OSError)
    message = str(info.value)
    assert ".tmp" not in message and (target in message or "empty path" in message)
    assert [p for p in tmp_path.rglob("*") if p.name.endswith(".tmp")] == []


def test_an_os_error_during_the_write_is_a_save_error_naming_the_file(tmp_path, monkeypatch):
    import os

    tok = tokenforge.get_encoding("gpt2")
    target = tmp_path / "t.json"

    def full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(tokenforge.SaveError, match=r"t\.json: cannot be written \(No space left on device\)"):
        tok.save(str(target))
    monkeypatch.undo()
    assert list(tmp_path.iterdir()) == []


def test_a_pair_save_killed_between_its_renames_is_detected_on_load(tmp_path, old_tok, new_tok):
    """kill -9 between the two renames of vocab.json + merges.txt: simulated by running the
    save in a child that dies (os._exit) right after the first rename."""
    import subprocess
    import sys

    old_tok.save(str(tmp_path), format="gpt2")
    new_tok.save(str(tmp_path / "new.json"))
    code = (
        "import os, tokenforge\n"
        "real = os.replace\n"
        "def replace(src, dst):\n"
        "    real(src, dst)\n"
        f"    if str(dst) == {str(tmp_path / 'vocab.json')!r}:  # the real pair, not the check's copy\n"
        "        os._exit(9)\n"
        "os.replace = replace\n"
        f"tokenforge.load({str(tmp_path / 'new.json')!r}).save({str(tmp_path)!r}, format='gpt2', overwrite=True)\n"
    )
    assert subprocess.run([sys.executable, "-c", code]).returncode == 9
    with pytest.raises(tokenforge.FileFormatError, match="interrupted.*vocab.json new.*merges.txt still old"):
        tokenforge.load(tmp_path)
    # The next save cleans up and the pair is whole again; the dead writer's leftovers are gone.
    new_tok.save(str(tmp_path), format="gpt2", overwrite=True)
    assert dict(tokenforge.load(tmp_path).mergeable_ranks) == dict(new_tok.mergeable_ranks)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["merges.txt", "new.json", "vocab.json"]

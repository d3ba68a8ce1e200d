"""The output folder of ``prepare``: one run at a time (a lock), OS failures as errors naming
the path, a failed run says what it left and how to go on, and every hint names the
argument as the caller writes it (``overwrite=True`` in Python, ``--overwrite`` in the CLI)."""

from __future__ import annotations

import fcntl
from pathlib import Path

import pytest

import tokenforge
from tokenforge.cli import main
from tokenforge.prepare import encoder as _encoder
from tokenforge.prepare import shards as _shards
from tokenforge.prepare import sources as _sources

from _corpus import DOCS, write_jsonl


def cli(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    return write_jsonl(tmp_path / "c.jsonl", DOCS * 3)


def _prepare(src, out, **kw):
    return tokenforge.prepare(src, "gpt2", out, show_progress=False, **kw)


# ------------------------------------------------------------------ the lock
def test_a_second_run_into_a_locked_folder_stops_and_touches_nothing(corpus, tmp_path, capsys):
    out = tmp_path / "o"
    _prepare(corpus, out)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    assert ".lock" not in before  # a finished run leaves no lock file
    with open(out / ".lock", "w") as held:  # another run is writing here
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(tokenforge.PrepareError, match=rf"{out}: another prepare is writing in this folder"):
            _prepare(corpus, out, overwrite=True)
        code, _, err = cli(capsys, "prepare", corpus, "-t", "gpt2", "-o", out, "-q", "--overwrite")
        assert code == 1 and "another prepare is writing in this folder" in err
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.name != ".lock"} == before
    # a lock file nobody holds (a killed run's) does not stop the next run
    _prepare(corpus, out, overwrite=True)
    assert not (out / ".lock").exists()


def test_the_lock_is_held_while_the_run_writes(corpus, tmp_path, monkeypatch):
    out = tmp_path / "o"
    seen = []
    real = _shards.SplitWriter.write

    def write(self, *a, **k):
        with open(out / ".lock") as f:
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                seen.append("free")
            except BlockingIOError:
                seen.append("held")
        return real(self, *a, **k)

    monkeypatch.setattr(_shards.SplitWriter, "write", write)
    _prepare(corpus, out)
    assert seen and set(seen) == {"held"}


# ------------------------------------------------------------------ OS errors name the path

def test_an_unwritable_output_folder_is_an_error_naming_it(corpus, unwritable_folder, capsys):
    folder = unwritable_folder
    with pytest.raises(tokenforge.PrepareError, match=rf"^{folder}: cannot write in this folder"):
        _prepare(corpus, folder)
    with pytest.raises(tokenforge.PrepareError, match=rf"^{folder / 'sub'}: cannot create the output folder"):
        _prepare(corpus, folder / "sub")
    code, out, err = cli(capsys, "prepare", corpus, "-t", "gpt2", "-o", folder / "sub", "-q")
    assert code == 1 and err.startswith(f"tokenforge: error: {folder / 'sub'}: cannot create the output folder")


def test_a_shard_that_cannot_be_opened_is_an_error_naming_it(corpus, tmp_path, monkeypatch):
    def refused(path, mode="r", *a, **k):
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(_shards, "open", refused, raising=False)
    with pytest.raises(tokenforge.PrepareError, match=r"train-00000.bin: cannot write \(Permission denied\)"):
        _prepare(corpus, tmp_path / "o")
    assert not (tmp_path / "o").exists()


def test_an_os_error_anywhere_in_the_run_names_the_file(corpus, tmp_path, monkeypatch):
    def vanished(*a, **k):
        raise FileNotFoundError(2, "No such file or directory", str(tmp_path / "o" / ".partial" / "x"))

    monkeypatch.setattr(_shards.SplitWriter, "write_doc_offsets", vanished)
    with pytest.raises(tokenforge.PrepareError, match=r"\.partial/x: No such file or directory \(while preparing"):
        _prepare(corpus, tmp_path / "o")


# ------------------------------------------------------------------ what a failed run leaves
@pytest.fixture
def fails_after_some_shards(tmp_path, monkeypatch) -> list[Path]:
    monkeypatch.setattr(_sources, "CHUNK_CHARS", 2000)
    monkeypatch.setattr(_encoder, "BATCH_CHARS", 4000)
    good = write_jsonl(tmp_path / "a.jsonl", DOCS * 10)
    bad = tmp_path / "b.txt"
    bad.write_bytes(b"fine\nnot \xff fine\n")
    return [good, bad]


def test_a_failed_run_says_what_it_kept_and_how_to_go_on(fails_after_some_shards, tmp_path, capsys):
    out = tmp_path / "o"
    with pytest.raises(tokenforge.FileFormatError) as info:
        _prepare(fails_after_some_shards, out, shard_size="2KB")
    message = str(info.value)
    kept = len(list(out.glob("train-*.bin")))
    assert kept and (out / ".partial").is_dir()
    assert f"b.txt, line 2: not valid UTF-8" in message
    assert f"{out} keeps the {kept} complete shard(s) written before this error" in message
    assert f"{out / '.partial'}" in message and "resume=True" in message and "overwrite=True" in message
    assert "--" not in message
    # the CLI says the same with its flags
    code, _, err = cli(capsys, "prepare", *fails_after_some_shards, "-t", "gpt2", "-o", tmp_path / "o2", "-q",
                       "--shard-size", "2KB")
    assert code == 1 and err.count("\n") == 1
    assert "pass --resume to continue once the cause is fixed" in err and "or --overwrite to start again" in err
    assert "=True" not in err and "input_errors=" not in err


def test_resume_with_other_options_or_changed_input_suggests_overwrite(fails_after_some_shards, tmp_path, capsys):
    out = tmp_path / "o"
    with pytest.raises(tokenforge.FileFormatError):
        _prepare(fails_after_some_shards, out, shard_size="2KB")
    with pytest.raises(tokenforge.PrepareError,
                       match=r"the options differ from the interrupted run's \(\{'input_errors': 'strict'\} then, "
                             r"\{'input_errors': 'replace'\} now\); pass overwrite=True to start again"):
        _prepare(fails_after_some_shards, out, shard_size="2KB", resume=True, input_errors="replace")
    fails_after_some_shards[1].write_bytes(b"fine\nnow fine\n")
    with pytest.raises(tokenforge.PrepareError, match=r"input .*b.txt changed since the interrupted run .*"
                                                      r"pass overwrite=True to start again"):
        _prepare(fails_after_some_shards, out, shard_size="2KB", resume=True)
    code, _, err = cli(capsys, "prepare", *fails_after_some_shards, "-t", "gpt2", "-o", out, "-q",
                       "--shard-size", "2KB", "--resume")
    assert code == 1 and "changed since the interrupted run" in err and "pass --overwrite to start again" in err
    code, _, err = cli(capsys, "prepare", *fails_after_some_shards, "-t", "gpt2", "-o", out, "-q",
                       "--shard-size", "2KB", "--overwrite")
    assert code == 0, err
    assert not (out / ".partial").exists() and (out / "index.json").is_file()


# ------------------------------------------------------------------ hints in the caller's terms
def test_python_errors_name_arguments_and_cli_errors_name_flags(corpus, tmp_path, capsys):
    out = tmp_path / "o"
    _prepare(corpus, out)
    with pytest.raises(tokenforge.PrepareError) as info:
        _prepare(corpus, out)
    assert "pass resume=True to continue it, or overwrite=True to start again" in str(info.value)
    code, _, err = cli(capsys, "prepare", corpus, "-t", "gpt2", "-o", out, "-q")
    assert code == 1 and "pass --resume to continue it, or --overwrite to start again" in err

    with pytest.raises(tokenforge.SpecialTokenError) as info:
        _prepare(corpus, tmp_path / "x", eot="<|x|>")
    assert "cannot use eot='<|x|>'" in str(info.value) and "pass eot='none'" in str(info.value)
    assert "--" not in str(info.value)

    other = tmp_path / "other.jsonl"
    other.write_text('{"id": 3, "body": "b"}\n', encoding="utf-8")
    with pytest.raises(tokenforge.FileFormatError) as info:
        _prepare(other, tmp_path / "x")
    assert "pass text_field='body' to read that one" in str(info.value) and "--" not in str(info.value)
    code, _, err = cli(capsys, "prepare", other, "-t", "gpt2", "-o", tmp_path / "x", "-q")
    assert code == 1 and "pass --text-field body to read that one" in err

    code, _, err = cli(capsys, "prepare", corpus, "-t", "gpt2", "-o", tmp_path / "x", "-q", "--val-fraction", "1.5")
    assert code == 1 and "--val-fraction must be in [0, 1)" in err

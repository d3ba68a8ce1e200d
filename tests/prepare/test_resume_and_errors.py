"""An interrupted ``prepare`` leaves only complete shards and resumes to the same
bytes; bad inputs and failing writes give clear errors and no partial output."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import tokenforge
from tokenforge.prepare import encoder as _encoder
from tokenforge.prepare import job as _job
from tokenforge.prepare import sources as _sources

from _corpus import DOCS, write_jsonl
from _families import FAMILIES


def _files(d: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(d.iterdir()) if p.is_file()}


def _no_partial_files(d: Path) -> None:
    names = [p.name for p in d.rglob("*")]
    assert not [n for n in names if n.endswith(".tmp")], names
    assert "index.json" not in names


@pytest.fixture
def small_batches(monkeypatch):
    monkeypatch.setattr(_sources, "CHUNK_CHARS", 2000)
    monkeypatch.setattr(_encoder, "BATCH_CHARS", 4000)


def _interrupt_after(monkeypatch, n: int) -> None:
    real = _job.assemble
    calls = []

    def interrupted(*a, **k):
        calls.append(1)
        if len(calls) > n:
            raise KeyboardInterrupt
        return real(*a, **k)

    monkeypatch.setattr(_job, "assemble", interrupted)


@pytest.mark.parametrize("stop_after", [1, 3, 7])
@pytest.mark.parametrize("name", ["cl100k_base", "BERT WordPiece vocab.txt"])
def test_resume_after_an_interruption_gives_the_same_bytes(name, stop_after, tmp_path, monkeypatch, small_batches):
    tok = tokenforge.get_encoding(name) if name in tokenforge.list_encodings() else FAMILIES[name][0](tmp_path)
    src = write_jsonl(tmp_path / "c.jsonl", DOCS * 12)
    opts = dict(shard_size="600B", val_fraction=0.2, show_progress=False, workers=2)
    tokenforge.prepare(src, tok, tmp_path / "whole", **opts)

    real = _job.assemble
    _interrupt_after(monkeypatch, stop_after)
    with pytest.raises(KeyboardInterrupt):
        tokenforge.prepare(src, tok, tmp_path / "cut", **opts)
    _no_partial_files(tmp_path / "cut")
    kept = sorted(p.name for p in (tmp_path / "cut").glob("*.bin"))
    for name_ in kept:  # every shard left behind is complete and equal to the final one
        assert (tmp_path / "cut" / name_).read_bytes() == (tmp_path / "whole" / name_).read_bytes()
    with pytest.raises(tokenforge.PrepareError, match="resume"):
        tokenforge.prepare(src, tok, tmp_path / "cut", **opts)
    monkeypatch.setattr(_job, "assemble", real)
    tokenforge.prepare(src, tok, tmp_path / "cut", resume=True, **opts)
    assert _files(tmp_path / "cut") == _files(tmp_path / "whole")
    assert not (tmp_path / "cut" / ".partial").exists()
    # resuming a finished run does nothing and returns its index
    assert tokenforge.prepare(src, tok, tmp_path / "cut", resume=True, **opts) == json.loads(
        (tmp_path / "whole" / "index.json").read_text())


def test_resume_refuses_changed_settings(tmp_path, monkeypatch, small_batches):
    src = write_jsonl(tmp_path / "c.jsonl", DOCS * 8)
    _interrupt_after(monkeypatch, 3)
    with pytest.raises(KeyboardInterrupt):
        tokenforge.prepare(src, "gpt2", tmp_path / "o", shard_size="600B", show_progress=False)
    assert list((tmp_path / "o").glob("*.bin"))
    with pytest.raises(tokenforge.PrepareError, match="tokenizer"):
        tokenforge.prepare(src, "cl100k_base", tmp_path / "o", shard_size="600B", resume=True, show_progress=False)
    with pytest.raises(tokenforge.PrepareError, match="shard size"):
        tokenforge.prepare(src, "gpt2", tmp_path / "o", shard_size="800B", resume=True, show_progress=False)


def test_ctrl_c_on_the_command_line_keeps_complete_shards_and_resume_finishes(tmp_path):
    src = write_jsonl(tmp_path / "c.jsonl", DOCS * 3000)  # a few MB, BERT's Python path: seconds of work
    vocab = FAMILIES["BERT WordPiece vocab.txt"][0](tmp_path)
    vocab.save(str(tmp_path / "bert.json"), format="hf")
    cmd = [sys.executable, "-m", "tokenforge", "prepare", str(src), "-t", str(tmp_path / "bert.json"),
           "-o", str(tmp_path / "o"), "--shard-size", "20KB", "--workers", "1", "--quiet"]
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.time() + 120
    while time.time() < deadline and len(list((tmp_path / "o").glob("train-*.bin"))) < 2:
        if proc.poll() is not None:
            pytest.fail("prepare finished before it could be interrupted")
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert b"--resume" in err
    _no_partial_files(tmp_path / "o")
    subprocess.run(cmd + ["--resume"], check=True)
    tokenforge.prepare(src, str(tmp_path / "bert.json"), tmp_path / "whole", shard_size="20KB", show_progress=False)
    assert _files(tmp_path / "o") == _files(tmp_path / "whole")


@pytest.mark.parametrize("when", ["shard file just created", "offsets file just created", "shard being synced",
                                  "checkpoint being written"])
def test_an_interrupt_anywhere_in_the_writer_leaves_no_temporary_file(when, tmp_path, monkeypatch):
    """Ctrl-C can land between a temporary file's creation and the moment the
    writer records it; the output must still hold only complete shards."""
    from tokenforge import _io
    from tokenforge.prepare import shards

    src = write_jsonl(tmp_path / "c.jsonl", DOCS * 5)
    calls = []

    def interrupt_on(real, nth):
        def wrapped(*a, **k):
            result = real(*a, **k)  # the file exists now
            calls.append(1)
            if len(calls) == nth:
                raise KeyboardInterrupt
            return result
        return wrapped

    if when == "shard file just created":
        monkeypatch.setattr(shards, "open", interrupt_on(open, 3), raising=False)
    elif when == "offsets file just created":
        monkeypatch.setattr(shards, "open", interrupt_on(open, 4), raising=False)
    elif when == "shard being synced":
        monkeypatch.setattr(shards.os, "fsync", interrupt_on(os.fsync, 2))
    else:
        monkeypatch.setattr(_io.os, "replace", lambda *a: (_ for _ in ()).throw(KeyboardInterrupt()))
    with pytest.raises(KeyboardInterrupt):
        tokenforge.prepare(src, "gpt2", tmp_path / "o", shard_size="300B", show_progress=False)
    _no_partial_files(tmp_path / "o")


def test_missing_input_names_the_file_and_writes_nothing(tmp_path):
    with pytest.raises(tokenforge.TokenizerFileNotFoundError, match="nope.jsonl: no such file"):
        tokenforge.prepare([tmp_path / "nope.jsonl"], "gpt2", tmp_path / "o", show_progress=False)
    deep = tmp_path / ("a-long-folder-name-" * 6) / "nope.jsonl"  # a long path is shown whole
    with pytest.raises(tokenforge.TokenizerFileNotFoundError) as info:
        tokenforge.prepare([deep], "gpt2", tmp_path / "o", show_progress=False)
    assert str(info.value).startswith(f"{deep}: no such file")
    text = "a document passed as if it were a path\n" * 20  # text by mistake: cut, with a hint
    with pytest.raises(tokenforge.TokenizerFileNotFoundError, match=r"\.\.\..*no such file.*iter\(docs\)"):
        tokenforge.prepare([text], "gpt2", tmp_path / "o", show_progress=False)
    assert not (tmp_path / "o").exists() or not any((tmp_path / "o").iterdir())
    with pytest.raises(tokenforge.TokenizerFileNotFoundError, match="no file matches"):
        tokenforge.count([str(tmp_path / "*.jsonl")], "gpt2", show_progress=False)


def _check_error(tmp_path, inputs, match, **kw):
    with pytest.raises(tokenforge.TokenforgeError, match=match):
        tokenforge.prepare(inputs, "gpt2", tmp_path / "o", show_progress=False, **kw)
    assert not (tmp_path / "o").exists()  # nothing was complete: nothing is left


def test_invalid_utf8_in_a_jsonl_line_names_file_and_line(tmp_path):
    p = tmp_path / "bad.jsonl"
    p.write_bytes(b'{"text": "ok"}\n{"text": "fine"}\n{"text": "bad \xff byte"}\n')
    _check_error(tmp_path, p, r"bad.jsonl, line 3: not valid UTF-8")


def test_invalid_utf8_in_a_text_file_names_file_line_and_byte(tmp_path):
    p = tmp_path / "bad.txt"
    p.write_bytes(b"line one\nline two\nline \xc3\x28 three\n")
    _check_error(tmp_path, p, r"bad.txt, line 3: not valid UTF-8 \(byte 23: c3, invalid continuation byte\)")
    p.write_bytes(b"ends inside a character \xe4\xb8")
    _check_error(tmp_path, p, r"bad.txt, line 1: not valid UTF-8")


def test_a_json_line_without_the_field_names_file_line_and_fields(tmp_path):
    p = tmp_path / "c.jsonl"
    p.write_text('{"text": "a"}\n\n{"body": "b", "id": 2}\n', encoding="utf-8")
    _check_error(tmp_path, p, r"c.jsonl, line 3: no field 'text' in this JSON object \(its fields: 'body', 'id'\)")
    p.write_text('{"text": "a"}\n{"text": 5}\n', encoding="utf-8")
    _check_error(tmp_path, p, r"c.jsonl, line 2: field 'text' holds int")
    p.write_text('{"text": "a"}\n{"text": "b"\n', encoding="utf-8")
    _check_error(tmp_path, p, r"c.jsonl, line 2: not valid JSON")
    p.write_text('["text"]\n', encoding="utf-8")
    _check_error(tmp_path, p, r"c.jsonl, line 1: expected a JSON object")


def test_a_failing_writer_leaves_no_partial_shard_and_no_index(tmp_path, monkeypatch):
    src = write_jsonl(tmp_path / "c.jsonl", DOCS * 5)
    from tokenforge.prepare import shards

    real_open = shards.SplitWriter._open
    count = []

    def failing_open(self):
        real_open(self)
        count.append(1)
        if len(count) == 3:
            class Full:
                def __init__(self, f):
                    self.f = f

                def write(self, data):
                    raise OSError(28, "No space left on device")

                def __getattr__(self, name):
                    return getattr(self.f, name)

            self._f = Full(self._f)

    monkeypatch.setattr(shards.SplitWriter, "_open", failing_open)
    with pytest.raises(tokenforge.PrepareError, match=r"train-00002.bin: cannot write \(No space left on device\)"):
        tokenforge.prepare(src, "gpt2", tmp_path / "o", shard_size="300B", show_progress=False)
    _no_partial_files(tmp_path / "o")
    assert sorted(p.name for p in (tmp_path / "o").glob("*.bin")) == ["train-00000.bin", "train-00001.bin"]


def test_a_real_file_size_limit_gives_a_clear_error(tmp_path):
    """The OS refuses the write (RLIMIT_FSIZE, like a full disk): the CLI exits 1 naming the shard."""
    src = write_jsonl(tmp_path / "c.jsonl", DOCS * 200)
    code = (
        "import resource, signal, sys; signal.signal(signal.SIGXFSZ, signal.SIG_IGN); "
        "resource.setrlimit(resource.RLIMIT_FSIZE, (20000, 20000)); "
        "from tokenforge.cli import main; sys.exit(main(sys.argv[1:]))"
    )
    r = subprocess.run([sys.executable, "-c", code, "prepare", str(src), "-t", "gpt2", "-o", str(tmp_path / "o"),
                        "--quiet"], capture_output=True, text=True)
    assert r.returncode == 1
    assert "train-00000.bin: cannot write (File too large)" in r.stderr
    _no_partial_files(tmp_path / "o")


def test_bad_options_are_refused(tmp_path):
    for kw, match in ((dict(val_fraction=1.5), "val_fraction"), (dict(shard_size="lots"), "shard size"),
                      (dict(workers=0), "workers"), (dict(engine="spark"), "engine"),
                      (dict(split_on=""), "split_on")):
        with pytest.raises(tokenforge.InvalidArgumentError, match=match):
            tokenforge.prepare(iter(["a"]), "gpt2", tmp_path / "o", show_progress=False, **kw)
    with pytest.raises(tokenforge.InvalidArgumentError, match="not str"):
        tokenforge.prepare(iter(["a", 3]), "gpt2", tmp_path / "o2", show_progress=False)

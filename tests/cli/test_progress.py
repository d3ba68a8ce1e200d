"""Progress bars: the one helper's on/off rule, and what ``tokenforge train`` / ``prepare``
print on stderr (nothing unless stderr is a terminal or ``--progress`` asks; nothing with
``--quiet``). Ctrl-C in the native merge loop ends ``tokenforge train`` at once, with one line."""

from __future__ import annotations

import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
import types
from pathlib import Path

import pytest

from tokenforge import progress
from tokenforge.progress import Progress, enabled, mode, visible

EXE = str(Path(sys.executable).with_name("tokenforge"))
BAR = re.compile(r"\d+%\|")  # a tqdm bar: "merge:  40%|####      | 120/300 [...]"


def run(*args: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([EXE, *args], capture_output=True, text=True, timeout=300, **kwargs)


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    rng = random.Random(0)
    words = ["".join(rng.choices("abcdefghijklmnop", k=rng.randint(3, 9))) for _ in range(800)]
    path = tmp_path / "corpus.txt"
    path.write_text("\n".join(" ".join(rng.choices(words, k=12)) for _ in range(400)) + "\n", encoding="utf-8")
    return path


# -- the helper ----------------------------------------------------------------------------------------


class _Stream:
    def __init__(self, tty: bool) -> None:
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty

    def write(self, s: str) -> int:
        return len(s)

    def flush(self) -> None:
        pass


def test_an_explicit_show_wins_over_the_mode(monkeypatch):
    monkeypatch.setattr(sys, "stderr", _Stream(False))
    for m in progress.MODES:
        with mode(m):
            assert enabled(True) is True
            assert enabled(False) is False


def test_auto_follows_the_terminal(monkeypatch):
    monkeypatch.delitem(sys.modules, "IPython", raising=False)
    monkeypatch.setattr(sys, "stderr", _Stream(True))
    assert progress.get_mode() == "auto"
    assert visible() and enabled(None)
    with mode("never"):
        assert not enabled(None)
    monkeypatch.setattr(sys, "stderr", _Stream(False))
    assert not visible() and not enabled(None)
    with mode("always"):
        assert enabled(None)
    assert progress.get_mode() == "auto"  # restored after the block
    with pytest.raises(ValueError):
        with mode("sometimes"):
            pass


def test_auto_shows_in_a_notebook(monkeypatch):
    """A Jupyter kernel is not a TTY, but tqdm.auto draws a widget there: auto shows it."""
    shell = types.SimpleNamespace(config={"IPKernelApp": {}})
    monkeypatch.setitem(sys.modules, "IPython", types.SimpleNamespace(get_ipython=lambda: shell))
    monkeypatch.setattr(sys, "stderr", _Stream(False))
    assert enabled(None)
    monkeypatch.setitem(sys.modules, "IPython", types.SimpleNamespace(get_ipython=lambda: None))
    assert not enabled(None)  # a plain IPython console without a terminal


def test_a_bar_that_is_off_is_falsy_and_still_counts(monkeypatch):
    monkeypatch.setattr(sys, "stderr", _Stream(False))
    with Progress(10, "x") as bar:
        bar(3)
        bar.set(7)
        bar.set(5)  # never backwards
    assert not bar and bar.n == 7 and bar.bar is None


def test_a_bar_that_is_on_draws_on_stderr(monkeypatch, capsys):
    with mode("always"):
        with Progress(10, "demo-bar", " things") as bar:
            assert bar
            for _ in range(10):
                bar(1)
    assert "demo-bar" in capsys.readouterr().err


@pytest.mark.parametrize("train,bar", [("train_bpe", "merge:"), ("train_wordpiece", "wordpiece:"),
                                       ("train_unigram", "unigram EM:"), ("train_sentencepiece_bpe", "merge:")])
def test_every_trainer_reads_show_progress_the_same_way(train, bar, corpus, capsys):
    """None (the default): only where someone can see it (stderr here is not a terminal);
    True: always; False: never -- the same for the four trainers."""
    import tokenforge

    fn = getattr(tokenforge, train)
    size = {"train_bpe": 400, "train_unigram": 300}.get(train, 300)
    for show, expect in ((None, False), (True, True), (False, False)):
        kwargs = {} if show is None else {"show_progress": show}
        if train == "train_bpe":
            fn([corpus], size, workers=1, **kwargs)
        else:
            fn([corpus], vocab_size=size, workers=1, **kwargs)
        err = capsys.readouterr().err
        assert (bar in err and BAR.search(err) is not None) == expect, (show, err[-300:])


# -- the command line --------------------------------------------------------------------------------


def test_train_prints_no_progress_when_stderr_is_not_a_terminal(corpus, tmp_path):
    r = run("train", str(corpus), "--vocab-size", "500", "--workers", "1", "--out", str(tmp_path / "t.json"))
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    assert "trained byte-level BPE" in r.stdout


def test_train_progress_flag_forces_the_bars(corpus, tmp_path):
    r = run("train", str(corpus), "--vocab-size", "500", "--workers", "1", "--progress",
            "--out", str(tmp_path / "t.json"))
    assert r.returncode == 0, r.stderr
    assert "count:" in r.stderr and "merge:" in r.stderr and BAR.search(r.stderr)
    assert "trained byte-level BPE" in r.stdout and not BAR.search(r.stdout)


@pytest.mark.parametrize("model,bar", [("wordpiece", "wordpiece:"), ("unigram", "unigram EM:"), ("spm-bpe", "merge:")])
def test_every_family_shows_progress_when_asked(model, bar, corpus, tmp_path):
    out = str(tmp_path / f"{model}.json")
    quiet = run("train", str(corpus), "--model", model, "--vocab-size", "300", "--workers", "1", "--out", out,
                "--format", "tokenforge")
    assert quiet.returncode == 0, quiet.stderr
    assert not BAR.search(quiet.stderr)
    shown = run("train", str(corpus), "--model", model, "--vocab-size", "300", "--workers", "1", "--out", out,
                "--format", "tokenforge", "--progress", "--overwrite")
    assert shown.returncode == 0, shown.stderr
    assert "counting:" in shown.stderr and bar in shown.stderr


def test_quiet_and_progress_exclude_each_other(corpus, tmp_path):
    r = run("train", str(corpus), "--quiet", "--progress", "--out", str(tmp_path / "t.json"))
    assert r.returncode == 2 and "not allowed with" in r.stderr


def _run_on_a_terminal(args: list[str]) -> tuple[int, str]:
    """Run with stderr on a pseudo-terminal; returns the exit code and what it printed there."""
    import pty

    import fcntl
    import struct
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # a 100-column terminal
    proc = subprocess.Popen([EXE, *args], stdout=subprocess.PIPE, stderr=slave, stdin=subprocess.DEVNULL)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    proc.stdout.read()
    rc = proc.wait(timeout=300)
    os.close(master)
    return rc, b"".join(chunks).decode("utf-8", "replace")


def test_on_a_terminal_the_bars_show_and_quiet_hides_them(corpus, tmp_path):
    args = ["train", str(corpus), "--vocab-size", "500", "--workers", "1", "--out", str(tmp_path / "t.json")]
    rc, err = _run_on_a_terminal(args)
    assert rc == 0 and "merge:" in err and BAR.search(err)
    rc, err = _run_on_a_terminal([*args, "--quiet", "--overwrite"])
    assert rc == 0 and err == ""


def test_prepare_progress_follows_the_same_rule(corpus, tmp_path):
    base = ["prepare", str(corpus), "-t", "gpt2", "--workers", "1"]
    r = run(*base, "-o", str(tmp_path / "a"))
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    forced = run(*base, "-o", str(tmp_path / "b"), "--progress")
    assert forced.returncode == 0, forced.stderr
    assert "prepare gpt2" in forced.stderr and BAR.search(forced.stderr) and "tok/s" in forced.stderr
    quiet = run(*base, "-o", str(tmp_path / "c"), "--quiet")
    assert quiet.returncode == 0 and quiet.stderr == ""
    # the bar changes nothing that is written
    for name in sorted(p.name for p in (tmp_path / "a").iterdir()):
        if name != "index.json":
            assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    count = run("count", str(corpus), "-t", "gpt2", "--workers", "1", "--progress")
    assert count.returncode == 0 and "count" in count.stderr and BAR.search(count.stderr)


# -- Ctrl-C ------------------------------------------------------------------------------------------------


def test_ctrl_c_in_the_merge_loop_exits_at_once_with_one_line(tmp_path):
    rng = random.Random(0)
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = ["".join(rng.choices(letters, k=rng.randint(3, 14))) for _ in range(200_000)]
    big = tmp_path / "big.txt"
    big.write_text(" ".join(rng.choices(words, k=600_000)), encoding="utf-8")  # ~6 MB, ~8 s of merges
    out = tmp_path / "t.json"
    proc = subprocess.Popen([EXE, "train", str(big), "--vocab-size", "400000", "--workers", "1", "--progress",
                             "--out", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    err = bytearray()

    def read() -> None:
        while chunk := proc.stderr.read1(65536):
            err.extend(chunk)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    merging = re.compile(rb"merge:[^\r\n]*?\|\s*[1-9]\d*/\d+")  # the merge bar has moved: in the native loop
    deadline = time.monotonic() + 120
    while not merging.search(bytes(err)):
        assert proc.poll() is None, bytes(err).decode()
        assert time.monotonic() < deadline, "never reached the merge loop"
        time.sleep(0.05)
    time.sleep(0.3)
    assert proc.poll() is None, "training ended before the interrupt: make the input bigger"
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    rc = proc.wait(timeout=30)
    elapsed = time.monotonic() - sent
    reader.join(5)
    stdout = proc.stdout.read().decode()
    text = bytes(err).decode("utf-8", "replace")
    assert rc == 130, text
    assert elapsed < 3.0, f"took {elapsed:.1f} s to stop"
    assert "Traceback" not in text and "KeyboardInterrupt" not in text
    messages = [line for line in re.split(r"[\r\n]", text) if line.startswith("tokenforge:")]
    assert messages == ["tokenforge: interrupted"], text
    assert stdout == "" and not out.exists()

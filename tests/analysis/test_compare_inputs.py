"""compare() reads text files as given (CR LF is two bytes) and shows progress over the bytes it measures."""

from __future__ import annotations

import pytest

from tokenforge import FileFormatError
from tokenforge.analysis.compare import _load_texts, read_parallel_tsv


def test_text_files_are_read_as_given(tmp_path):
    f = tmp_path / "crlf.txt"
    f.write_bytes(b"hello\r\nworld\r\n")
    texts, _ = _load_texts([f])
    assert texts == {"crlf": "hello\r\nworld\r\n"}


def test_parallel_tsv_keeps_carriage_returns_inside_rows(tmp_path):
    f = tmp_path / "par.tsv"
    f.write_bytes(b"lang\ttext\r\nen\thello\r\nde\thallo\r\n")
    assert read_parallel_tsv(f) == {"en": "hello", "de": "hallo"}


def test_invalid_utf8_names_file_line_and_byte(tmp_path):
    f = tmp_path / "bad.txt"
    f.write_bytes(b"ok\ncaf\xe9\n")
    with pytest.raises(FileFormatError, match=r"bad.txt, line 2: not valid UTF-8 at byte 6"):
        _load_texts([f])


def test_compare_shows_progress_over_the_bytes_measured(capsys, monkeypatch):
    import importlib

    from tokenforge import progress

    compare_module = importlib.import_module("tokenforge.analysis.compare")
    texts = {"en": "hello world " * 50, "de": "hallo welt " * 50}
    compare_module.compare(["gpt2"], texts, show_progress=True)
    err = capsys.readouterr().err
    assert "measuring" in err and "/1.15k" in err  # the total: 600 + 550 bytes, one tokenizer
    compare_module.compare(["gpt2"], texts)  # small input, no terminal: nothing
    assert capsys.readouterr().err == ""
    with progress.mode("always"):  # the command line's --progress
        compare_module.compare(["gpt2"], texts)
    assert "measuring" in capsys.readouterr().err
    monkeypatch.setattr(compare_module, "BIG_INPUT", 10)
    with progress.mode("never"):
        compare_module.compare(["gpt2"], texts)
    assert capsys.readouterr().err == ""

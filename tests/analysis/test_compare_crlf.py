"""compare() counts the bytes of a text file as given: CR LF is two bytes, not one."""

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

"""A corpus without text is an error, not "0 tokens, no shard"; empty documents that are
skipped are reported."""

from __future__ import annotations

import pytest

import tokenforge
from tokenforge.cli import main


def test_an_empty_file_is_an_error_and_writes_nothing(tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    with pytest.raises(tokenforge.PrepareError, match=rf"no text to prepare in {empty} \(1 empty document\(s\) "
                                                       rf"skipped\); nothing was written to {tmp_path / 'o'}"):
        tokenforge.prepare(empty, "gpt2", tmp_path / "o", show_progress=False)
    assert not (tmp_path / "o").exists()
    (tmp_path / "mine").mkdir()  # a folder that was there stays, empty
    with pytest.raises(tokenforge.PrepareError, match="no text to prepare"):
        tokenforge.prepare(empty, "gpt2", tmp_path / "mine", show_progress=False)
    assert list((tmp_path / "mine").iterdir()) == []


def test_only_empty_documents_is_an_error_naming_the_inputs(tmp_path):
    with pytest.raises(tokenforge.PrepareError, match=r"in <iterable> \(3 empty document\(s\) skipped\)"):
        tokenforge.prepare(iter(["", "", ""]), "gpt2", tmp_path / "o", show_progress=False)
    with pytest.raises(tokenforge.PrepareError, match=r"in <iterable> \(no document found\)"):
        tokenforge.prepare(iter([]), "gpt2", tmp_path / "o", show_progress=False)
    folder = tmp_path / "docs"
    folder.mkdir()
    for k in range(5):
        # two empty documents before the last delimiter; an empty file holds no document
        (folder / f"{k}.txt").write_text("\n\n\n\n" if k % 2 else "", encoding="utf-8")
    with pytest.raises(tokenforge.PrepareError, match=r"0.txt, .*1.txt, .*2.txt and 2 more \(4 empty"):
        tokenforge.prepare(folder, "gpt2", tmp_path / "o", split_on="\n\n", show_progress=False)


def test_the_cli_fails_on_an_empty_corpus_and_reports_skipped_documents(tmp_path, capsys):
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    code = main(["prepare", str(empty), "-t", "gpt2", "-o", str(tmp_path / "o"), "-q"])
    out, err = capsys.readouterr()
    assert code == 1 and out == "" and err.count("\n") == 1
    assert err.startswith(f"tokenforge: error: no text to prepare in {empty}")
    some = tmp_path / "some.txt"
    some.write_text("a\n\n\n\nb\n\n", encoding="utf-8")
    code = main(["prepare", str(some), str(empty), "-t", "gpt2", "-o", str(tmp_path / "o"), "-q",
                 "--split-on", "\\n\\n"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "train           4 tokens, 2 documents" in out
    assert f"skipped         1 empty document(s), not written ({some}: 1)" in out

"""``tokenforge info --residues``: the library's residue report, as a table or JSON."""

from __future__ import annotations

import json

import pytest

import tokenforge
from tokenforge.analysis.residues import residues
from tokenforge.cli import main
from tokenforge.corpus import embedded_corpus


def test_info_residues_json_equals_library(tmp_path, capsys):
    text = "Copyrights and Errors: Copyrights, Errors.\n" * 3 + "日本語のテキスト\n"
    path = tmp_path / "c.txt"
    path.write_text(text, encoding="utf-8")
    assert main(["info", "-t", "gpt2", "--residues", str(path), "--top", "50", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    lib = residues(tokenforge.get_encoding("gpt2"), text)
    assert out["residues"] == [u.to_dict() for u in lib.residues()]
    assert out["totals"] == lib.totals()
    assert out["totals"]["tokens"] == len(tokenforge.get_encoding("gpt2").encode_ordinary(text))


def test_info_residues_table_on_embedded_corpus(capsys):
    assert main(["info", "-t", "gpt2", "--residues", "--top", "5", "--threshold", "0.01"]) == 0
    out = capsys.readouterr().out
    lib = residues(tokenforge.get_encoding("gpt2"), [lang.train_text() for lang in embedded_corpus()])
    top = lib.residues(0.01)[:5]
    lines = out.splitlines()
    assert lines[0].startswith("residues of gpt2")
    assert [int(line.split()[0]) for line in lines[2:7]] == [u.id for u in top]
    assert f"{lib.totals(0.01)['residues']:,} residues" in out


def test_info_residues_bad_threshold(capsys):
    assert main(["info", "-t", "gpt2", "--residues", "--threshold", "2"]) == 1
    assert "between 0 and 1" in capsys.readouterr().err

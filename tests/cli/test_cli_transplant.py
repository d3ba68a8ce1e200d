"""``tokenforge transplant A B -o MAP.jsonl``: the library's map, as a file."""

from __future__ import annotations

import json

import tokenforge
from tokenforge.analysis.transplant import transplant_map
from tokenforge.cli import main


def test_transplant_command_writes_the_map(tmp_path, capsys):
    out = tmp_path / "map.jsonl"
    assert main(["transplant", "cl100k", "gpt2", "-o", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    lib = transplant_map(tokenforge.get_encoding("cl100k_base"), tokenforge.get_encoding("gpt2"))
    assert {k: v for k, v in summary.items() if k not in ("a", "b", "output")} == \
        {k: v for k, v in lib.summary().items() if k not in ("a", "b")}
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert rows == [e.to_dict() for e in lib]


def test_transplant_command_table_and_missing_output(tmp_path, capsys):
    out = tmp_path / "m.jsonl"
    assert main(["transplant", "gpt2", "cl100k", "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert "100,261 tokens of cl100k_base in terms of gpt2" in text and out.is_file()
    assert main(["transplant", "gpt2", "cl100k", "-o", str(tmp_path / "no" / "m.jsonl")]) == 1
    assert "does not exist" in capsys.readouterr().err

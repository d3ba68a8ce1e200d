"""``tokenforge prepare``, ``count`` and ``encode --count`` call the library and print what it did."""

from __future__ import annotations

import json

import numpy as np
import pytest

import tokenforge
from tokenforge.cli import main


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_prepare_on_the_embedded_corpus_prints_a_summary(tmp_path, capsys):
    code, out, err = run(capsys, "prepare", "-t", "gpt2", "-o", tmp_path / "o", "--quiet", "--val-fraction", "0.2")
    assert code == 0, err
    assert "dtype           uint16" in out and "<|endoftext|> after" in out
    toks = tokenforge.open_tokens(tmp_path / "o")
    index = toks.index
    assert len(index["inputs"]) >= 10 and all(i["sha256"] for i in index["inputs"])
    enc = tokenforge.get_encoding("gpt2")
    first = [i for i in index["inputs"]][0]
    assert first["tokens"] == len(enc.encode(open(first["name"], encoding="utf-8").read(), disallowed_special=())) + 1


def test_prepare_json_prints_the_index(tmp_path, capsys):
    src = tmp_path / "c.txt"
    src.write_text("one\n\ntwo\n\n\nthree", encoding="utf-8")
    code, out, err = run(capsys, "prepare", src, "-t", "cl100k_base", "-o", tmp_path / "o", "--split-on", "\\n\\n",
                         "--json", "--quiet")
    assert code == 0, err
    index = json.loads(out)
    assert index["options"]["split_on"] == "\n\n" and index["dtype"] == "uint32"
    enc = tokenforge.get_encoding("cl100k_base")
    ids = np.fromfile(tmp_path / "o" / "train-00000.bin", dtype="<u4").tolist()
    assert ids == [t for d in ["one", "two", "\nthree"] for t in enc.encode(d) + [enc.eot_token]]


def test_prepare_errors_are_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "a"}\n{"txt": "b"}\n', encoding="utf-8")
    code, out, err = run(capsys, "prepare", bad, "-o", tmp_path / "o", "--quiet")
    assert code == 1 and err.count("\n") == 1
    assert "bad.jsonl, line 2: no field 'text'" in err
    code, out, err = run(capsys, "prepare", bad, "-o", tmp_path / "o", "--quiet", "--text-field", "txt", "--eot", "<|x|>")
    assert code == 1 and "cannot use --eot '<|x|>': it is not a token" in err and "pass --eot none" in err


def test_count_prints_a_table_and_json(tmp_path, capsys):
    a = tmp_path / "a.jsonl"
    a.write_text('{"text": "hello world"}\n{"text": "<|endoftext|> is text here"}\n', encoding="utf-8")
    code, out, err = run(capsys, "count", a, "-t", "gpt2", "--json")
    assert code == 0, err
    report = json.loads(out)
    enc = tokenforge.get_encoding("gpt2")
    want = len(enc.encode("hello world")) + len(enc.encode("<|endoftext|> is text here", disallowed_special=()))
    assert report["total"]["tokens"] == want and report["inputs"][0]["documents"] == 2
    code, out, err = run(capsys, "count", a, a, "-t", "gpt2", "--quiet")
    assert code == 0 and "total" in out and f"{2 * want:>14,}" in out


def test_encode_count_counts_the_text(tmp_path, capsys):
    code, out, _ = run(capsys, "encode", "--count", "hello world", "-t", "gpt2")
    assert code == 0 and out.strip() == "2"
    f = tmp_path / "t.txt"
    f.write_text("hello world " * 100, encoding="utf-8")
    code, out, _ = run(capsys, "encode", "--count", "-f", f, "-t", "gpt2", "--json")
    assert json.loads(out)["total"]["tokens"] == len(tokenforge.get_encoding("gpt2").encode("hello world " * 100))


def test_prepare_help_shows_the_split_on_example_as_typed(capsys):
    import pytest

    with pytest.raises(SystemExit):
        main(["prepare", "--help"])
    out = capsys.readouterr().out
    assert "tokenforge prepare stories.txt --split-on '\\n<|endoftext|>\\n' -t gpt2 -o data/" in out
    assert "--input-errors {strict,replace,ignore,backslashreplace}" in out


def test_prepare_format_writes_each_format_and_help_lists_them(tmp_path, capsys):
    src = tmp_path / "c.txt"
    src.write_text("one\n\ntwo", encoding="utf-8")
    code, out, err = run(capsys, "prepare", src, "-t", "gpt2", "-o", tmp_path / "o", "--split-on", "\\n\\n", "--quiet",
                         "--format", "megatron,nanogpt", "--format", "llmc")
    assert code == 0, err
    assert "megatron        megatron/train_text_document.bin" in out and "llmc            llmc/train_000000.bin" in out
    assert "open_tokens" not in out  # no tokenforge shards were kept
    assert np.fromfile(tmp_path / "o" / "nanogpt" / "train.bin", dtype="<u2").tolist() == [505, 50256, 11545, 50256]
    code, out, err = run(capsys, "prepare", src, "-t", "gpt2", "-o", tmp_path / "p", "--quiet", "--format", "hdf5")
    assert code == 1 and err.count("\n") == 1 and "unknown format(s) 'hdf5'" in err
    with pytest.raises(SystemExit):
        main(["prepare", "--help"])
    out = capsys.readouterr().out
    assert all(name in out for name in ("tokenforge", "megatron", "llmc", "nanogpt", "datatrove"))


def test_a_resumed_prepare_prints_no_rate_for_work_it_did_not_do(tmp_path, capsys):
    src = tmp_path / "c.txt"
    src.write_text("one\n\ntwo\n\n\nthree", encoding="utf-8")
    args = ["prepare", src, "-t", "gpt2", "-o", tmp_path / "o", "--split-on", "\\n\\n", "--quiet"]
    code, out, err = run(capsys, *args)
    assert code == 0, err
    assert "MB/s" in out
    code, out, err = run(capsys, *args, "--resume", "--format", "nanogpt")
    assert code == 0, err
    assert "(this run, resumed)" in out and "MB/s" not in out
    assert (tmp_path / "o" / "nanogpt" / "train.bin").exists()

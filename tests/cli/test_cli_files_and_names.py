"""The command line never replaces a tokenizer file silently (``--overwrite``), says which
format it wrote, tells a text file from a tokenizer, names published split patterns, and
answers an unknown name in one short line that points to ``tokenforge list``."""

from __future__ import annotations

import json

import pytest

import tokenforge
from tokenforge.cli import main


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture()
def corpus(tmp_path, varied_text):
    path = tmp_path / "corpus.txt"
    path.write_text(varied_text * 3, encoding="utf-8")
    return path


# ------------------------------------------------------------------ --overwrite


@pytest.mark.parametrize("model,out", [("bpe", "tok.json"), ("bpe", "tokenizer.json"), ("unigram", "spm.model"),
                                       ("wordpiece", "vocab.txt")])
def test_train_refuses_an_existing_out_before_training(tmp_path, capsys, corpus, model, out):
    target = tmp_path / out
    target.write_bytes(b"precious")
    code, stdout, err = run(capsys, "train", corpus, "--model", model, "--vocab-size", "300", "--out", target, "-q")
    assert code == 1 and stdout == ""  # refused before any training
    assert err == f"tokenforge: error: {target} already exists; pass --overwrite to replace it, or choose another path\n"
    assert target.read_bytes() == b"precious"


def test_train_with_overwrite_replaces_and_says_the_format(tmp_path, capsys, corpus):
    target = tmp_path / "my_tokenizer.json"
    target.write_bytes(b"old")
    code, out, err = run(capsys, "train", corpus, "--vocab-size", "300", "--out", target, "--overwrite", "-q")
    assert code == 0, err
    assert "format          hf: HF tokenizers' tokenizer.json; --format NAME writes another" in out
    assert tokenforge.load(target).n_vocab == 300
    code, out, err = run(capsys, "train", corpus, "--vocab-size", "300", "--out", target, "--overwrite", "--json")
    assert code == 0 and json.loads(out)["format"] == "hf"


def test_convert_refuses_an_existing_destination_and_overwrite_replaces_it(tmp_path, capsys):
    dest = tmp_path / "out.tiktoken"
    dest.write_bytes(b"old")
    sample = tmp_path / "sample.txt"
    sample.write_text("hello world\n", encoding="utf-8")
    code, out, err = run(capsys, "convert", "gpt2", dest, "--sample", sample)
    assert code == 1 and out == ""
    assert f"{dest} already exists; pass --overwrite to replace it" in err
    assert dest.read_bytes() == b"old"
    code, out, err = run(capsys, "convert", "gpt2", dest, "--sample", sample, "--overwrite")
    assert code == 0, err
    assert out.startswith(f"wrote {dest}\n  format: tiktoken: a tiktoken rank file")
    assert "--to NAME writes another" in out


def test_convert_to_a_name_ending_in_tokenizer_json_writes_hf_and_says_so(tmp_path, capsys):
    sample = tmp_path / "sample.txt"
    sample.write_text("hello world\n", encoding="utf-8")
    dest = tmp_path / "y_tokenizer.json"
    code, out, err = run(capsys, "convert", "gpt2", dest, "--sample", sample)
    assert code == 0, err
    assert "format: hf: HF tokenizers' tokenizer.json" in out
    assert "format_version" not in json.loads(dest.read_text(encoding="utf-8"))


def test_extend_refuses_an_existing_out(tmp_path, capsys, small_tokenizer):
    src = tmp_path / "src.json"
    small_tokenizer.save(src)
    out = tmp_path / "extended.json"
    out.write_bytes(b"old")
    code, _, err = run(capsys, "extend", "<|tool|>", "-t", src, "--out", out)
    assert code == 1 and f"{out} already exists; pass --overwrite" in err and out.read_bytes() == b"old"
    code, _, err = run(capsys, "extend", "<|tool|>", "-t", src, "--out", out, "--overwrite")
    assert code == 0, err
    assert "<|tool|>" in tokenforge.load(out).special_tokens


# ------------------------------------------------------------------ -t with a text file


def test_a_plain_text_file_given_to_t_is_not_a_tokenizer_file(tmp_path, capsys):
    notes = tmp_path / "notes.txt"
    notes.write_text("Some notes.\nNothing more.\n", encoding="utf-8")
    code, out, err = run(capsys, "encode", "hi", "-t", notes)
    assert code == 1 and out == ""
    assert err.startswith(f"tokenforge: error: {notes}: not a tokenizer file; tokenforge reads: ")
    assert "cls_token" not in err and f"-t NAME:{notes}" in err and "bert_vocab" in err


def test_t_format_colon_path_reads_a_file_as_that_format(tmp_path, capsys, small_tokenizer):
    path = tmp_path / "saved.txt"
    small_tokenizer.save(path, format="tokenforge")
    code, out, err = run(capsys, "encode", "hello world", "-t", f"tokenforge:{path}", "--json")
    assert code == 0, err
    assert json.loads(out) == small_tokenizer.encode("hello world")


# ------------------------------------------------------------------ info names the pattern


def test_info_names_the_gpt2_pattern_of_a_tokenizer_trained_with_it(tmp_path, capsys, corpus):
    out_path = tmp_path / "tokenizer.json"
    code, _, err = run(capsys, "train", corpus, "--vocab-size", "300", "--pattern", "gpt2", "--out", out_path, "-q")
    assert code == 0, err
    code, out, err = run(capsys, "info", "-t", out_path)
    assert code == 0, err
    assert "\npattern         gpt2: " in out and "custom" not in out
    code, out, _ = run(capsys, "info", "-t", out_path, "--json")
    assert json.loads(out)["pattern_name"] == "gpt2"


# ------------------------------------------------------------------ names


def test_an_unknown_name_gives_the_suggestion_and_the_encodings_in_a_short_line(capsys):
    code, out, err = run(capsys, "encode", "hi", "-t", "cl100k_bse")
    assert code == 1 and out == ""
    assert "unknown tokenizer 'cl100k_bse' (did you mean cl100k_base?)" in err
    assert "o200k_base" in err and "tokenforge list" in err
    assert "text-similarity-babbage-001" not in err and len(err) < 500


def test_list_shows_encodings_model_names_and_formats(capsys):
    code, out, err = run(capsys, "list")
    assert code == 0, err
    assert out.startswith("encodings (-t NAME; tokenforge.get_encoding):\n  gpt2")
    assert "cl100k_base     short form cl100k; pattern cl100k" in out
    assert "text-embedding-3-small" in out and "gpt-4o-*" in out
    assert "bert_vocab" in out and "FORMAT:PATH" in out
    code, out, _ = run(capsys, "list", "--json")
    names = json.loads(out)
    by_name = {e["name"]: e for e in names["encodings"]}
    assert set(by_name) == set(tokenforge.list_encodings())
    assert "gpt-4o" in by_name["o200k_base"]["models"] and "gguf" in names["formats"]

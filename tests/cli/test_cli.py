"""The tokenforge command: one subcommand per library call, one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import tokenforge
from tokenforge.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_train_without_arguments_uses_embedded_corpus(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "train", "--vocab-size", "600", "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["vocab_size"] == 600
    assert report["source"].startswith("embedded corpus")
    assert len(report["longest_tokens"]) == 10
    langs = {r["language"] for r in report["heldout"]}
    assert {"English (en)", "Chinese (zh)", "Python code (code)"} <= langs
    assert all(r["bytes_per_token"] > 1.0 for r in report["heldout"])
    tok = tokenforge.load(tmp_path / "tokenizer.tokenforge.json")
    assert len(tok) == 600 and tok.special_tokens == {"<|endoftext|>": 256}


def test_train_report_is_readable_text(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, _ = run(capsys, "train", "--vocab-size", "400")
    assert code == 0
    assert "vocab size      400" in out
    assert "10 longest tokens" in out and "bytes/token on held-out text" in out
    assert "MB/s" in out


def test_train_on_files_with_options(tmp_path, capsys):
    src = tmp_path / "a.txt"
    src.write_text("low lower lowest newer newest <|sep|> wider\n" * 30, encoding="utf-8")
    out_path = tmp_path / "t.json"
    code, out, err = run(
        capsys, "train", str(src), "--vocab-size", "280", "--special", "<|sep|>", "--pattern", "cl100k",
        "--out", str(out_path), "--workers", "1",
    )
    assert code == 0, err
    tok = tokenforge.load(out_path)
    assert tok.special_tokens == {"<|sep|>": 256}
    assert tok.pre_tokenizer.name == "cl100k"


def test_train_reports_early_stop(tmp_path, capsys):
    src = tmp_path / "tiny.txt"
    src.write_text("abc", encoding="utf-8")
    code, out, _ = run(capsys, "train", str(src), "--vocab-size", "1000", "--out", str(tmp_path / "t.json"))
    assert code == 0
    assert "stopped early" in out


def test_encode_and_decode_round_trip(capsys):
    code, out, _ = run(capsys, "encode", "hello world", "-t", "cl100k_base", "--json")
    assert code == 0 and json.loads(out) == [15339, 1917]
    code, out, _ = run(capsys, "decode", "15339", "1917", "-t", "cl100k_base")
    assert code == 0 and out == "hello world\n"


def test_encode_file_and_specials(tmp_path, capsys):
    f = tmp_path / "in.txt"
    f.write_text("a<|endoftext|>b", encoding="utf-8")
    code, out, err = run(capsys, "encode", "--file", str(f), "-t", "cl100k_base")
    assert code == 1 and "special token '<|endoftext|>'" in err and "Traceback" not in err
    code, out, _ = run(capsys, "encode", "--file", str(f), "-t", "cl100k_base", "--allowed-special", "all")
    assert code == 0 and out.split() == ["64", "100257", "65"]
    code, out, _ = run(capsys, "encode", "--file", str(f), "-t", "cl100k_base", "--ordinary-special")
    assert code == 0 and "100257" not in out.split()


def test_info_prints_sizes_specials_pattern_and_hashes(capsys):
    code, out, _ = run(capsys, "info", "-t", "cl100k_base", "--json")
    info = json.loads(out)
    assert code == 0
    assert info["tokens"] == 100261 and info["n_vocab"] == 100277
    assert info["special_tokens"]["<|endoftext|>"] == 100257
    assert info["pattern_name"] == "cl100k"
    assert set(info["sha256"]) == {"normalizer", "pre_tokenizer", "model", "post_processor", "decoder", "added_tokens"}
    assert info["plan"] == "rank-bpe"


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["decode", "99999999", "-t", "gpt2"], "unknown token id 99999999"),
        (["decode", "12", "x", "-t", "gpt2"], "id 1 is 'x'"),
        (["encode", "x", "-t", "/no/such/file"], "/no/such/file: no such file"),
        (["train", "/no/such/corpus.txt"], "/no/such/corpus.txt"),
        (["train", "--vocab-size", "100"], "smaller than the 256 byte tokens"),
    ],
)
def test_errors_are_one_line_and_exit_non_zero(capsys, argv, needle):
    code, out, err = run(capsys, *argv)
    assert code == 1
    assert needle in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_console_script_entry_point_runs():
    out = subprocess.run(
        [sys.executable, "-m", "tokenforge.cli", "encode", "hi", "-t", "gpt2"], capture_output=True, text=True
    )
    assert out.returncode == 0 and out.stdout.split() == ["5303"]


@pytest.mark.parametrize(
    ("out", "flag", "fmt"),
    [("tokenizer.json", None, "hf"), ("ranks.tiktoken", None, "tiktoken"), ("gpt2dir/", None, "gpt2"),
     ("tokenizer.json", "tokenforge", "tokenforge"), ("custom.bin", "hf", "hf")],
)
def test_train_out_name_picks_the_format(tmp_path, capsys, out, flag, fmt):
    from tokenforge.io import detect_format

    src = tmp_path / "a.txt"
    src.write_text("low lower lowest newer newest wider 1234 東京\n" * 30, encoding="utf-8")
    target = str(tmp_path) + "/" + out  # (a Path would drop the trailing separator of "dir/")
    pattern = "gpt2" if fmt == "gpt2" else "cl100k"  # GPT-2's files hold no pattern: they are read with GPT-2's
    argv = ["train", str(src), "--vocab-size", "300", "--pattern", pattern, "--out", target, "--workers", "1"]
    code, _, err = run(capsys, *(argv + (["--format", flag] if flag else [])))
    assert code == 0, err
    assert detect_format(target) == fmt
    kwargs = {"pattern": pattern} if fmt == "tiktoken" else {}
    tok = tokenforge.load(target, **kwargs)
    text = "the newest lower 1234 東京"
    if fmt == "hf":
        hf = pytest.importorskip("tokenizers").Tokenizer.from_file(target)
        assert hf.encode(text).ids == tok.encode(text)
    assert len(tok.encode(text)) < len(text.encode())


def test_train_refuses_a_format_that_would_lose_the_pattern_before_training(tmp_path, capsys):
    src = tmp_path / "a.txt"
    src.write_text("low lower lowest 1234\n" * 30, encoding="utf-8")
    for pattern, out in [("cl100k", "gpt2dir/"), ("none", "ranks.tiktoken")]:
        code, _, err = run(capsys, "train", str(src), "--vocab-size", "300", "--pattern", pattern,
                           "--out", str(tmp_path) + "/" + out, "--workers", "1")
        assert code != 0 and "cannot write" in err and "pattern" in err, err
        assert not (tmp_path / out.rstrip("/")).exists()


def test_train_wordpiece_out_tokenizer_json_is_hf(tmp_path, capsys):
    src = tmp_path / "a.txt"
    src.write_text("low lower lowest newer newest wider\n" * 30, encoding="utf-8")
    target = tmp_path / "tokenizer.json"
    code, _, err = run(capsys, "train", str(src), "--model", "wordpiece", "--vocab-size", "120", "--out", str(target),
                       "--workers", "1")
    assert code == 0, err
    hf = pytest.importorskip("tokenizers").Tokenizer.from_file(str(target))
    assert hf.encode("newer lowest").ids == tokenforge.load(target).encode("newer lowest")


def test_train_length_limits_are_options(tmp_path, capsys):
    src = tmp_path / "a.txt"
    src.write_text("hello world\n" + "x" * 300 + "\n" + "the cat sat on the mat\n" * 30, encoding="utf-8")
    code, _, err = run(capsys, "train", str(src), "--model", "unigram", "--vocab-size", "60",
                       "--max-sentence-length", "100", "--out", str(tmp_path / "u.model"))
    assert code == 0 and "tokenforge: warning: skipped 1 line(s) longer than max_sentence_length=100" in err
    code, _, err = run(capsys, "train", str(src), "--model", "wordpiece", "--vocab-size", "100",
                       "--max-word-length", "100", "--out", str(tmp_path / "vocab.txt"))
    assert code == 0 and "skipped 1 word(s) longer than max_word_length=100" in err


def test_train_input_sentence_size_is_an_option(tmp_path, capsys):
    """--input-sentence-size reaches the trainer: the .model records it, and a sample of 50 of
    2,000 lines learns other pieces than every line."""
    from tokenforge.sentencepiece.proto import read_model

    src = tmp_path / "a.txt"
    src.write_text("".join(f"w{i % 300} and v{i % 7}\n" for i in range(2000)), encoding="utf-8")
    vocabs = []
    for size in ("50", "0"):
        out = tmp_path / f"u{size}.model"
        code, _, err = run(capsys, "train", str(src), "--model", "unigram", "--vocab-size", "120",
                           "--input-sentence-size", size, "--out", str(out))
        assert code == 0, err
        assert read_model(out).trainer_spec.input_sentence_size == int(size)
        vocabs.append(tokenforge.load(out).get_vocab())
    assert vocabs[0] != vocabs[1]


def test_train_wordpiece_merge_rule_is_an_option(tmp_path, capsys):
    """--merge reaches the trainer: the score rule learns the rare 'q ##u' pair the frequency rule leaves."""
    src = tmp_path / "a.txt"
    src.write_text("ab ab ab ab ab ab ab ab qu qu a b\n" * 5, encoding="utf-8")
    vocabs = {}
    # room for exactly one merge: the score rule keeps both forms of every character (9 base tokens)
    for rule, size in (("frequency", "7"), ("score", "10")):
        out = tmp_path / f"{rule}.txt"
        code, _, err = run(capsys, "train", str(src), "--model", "wordpiece", "--vocab-size", size, "--merge", rule,
                           "--out", str(out), "--workers", "1", "--special", "[UNK]")
        assert code == 0, err
        vocabs[rule] = out.read_text(encoding="utf-8").split()
    assert vocabs["frequency"][-1] == "ab" and "qu" not in vocabs["frequency"]
    assert vocabs["score"][-1] == "qu" and "ab" not in vocabs["score"]
    with pytest.raises((SystemExit, Exception)) as info:  # argparse refuses an unknown rule
        run(capsys, "train", str(src), "--model", "wordpiece", "--merge", "bogus", "--out", str(tmp_path / "x.txt"))
    assert "bogus" in str(info.value) or getattr(info.value, "code", 0) != 0
    assert not (tmp_path / "x.txt").exists()

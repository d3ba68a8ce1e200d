"""The ``tokenforge`` command as a user types it, run through the installed entry point.

-t takes names, short forms, model names, files and folders; errors name CLI flags;
``encode --count`` prints a number; ``explain`` reads stdin; ``info`` names trained
tokenizers and reports the backend; text input is exact UTF-8 or a one-line error;
every option's help shows its default and every command has an example.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import tokenforge

_BIN = Path(sys.executable).parent / "tokenforge"
TOKENFORGE = str(_BIN) if _BIN.exists() else shutil.which("tokenforge")


def tf(*argv, stdin: bytes | None = None, env: dict | None = None, cwd=None):
    """Run the installed ``tokenforge`` script: ``(exit code, stdout, stderr)``."""
    assert TOKENFORGE, "the tokenforge entry point is not installed"
    full_env = {k: v for k, v in os.environ.items() if k != "TOKENFORGE_BACKEND"}
    full_env.update({"COLUMNS": "100", **(env or {})})
    p = subprocess.run([TOKENFORGE, *[a if isinstance(a, bytes) else str(a) for a in argv]],
                       input=stdin if stdin is not None else b"", capture_output=True, env=full_env, cwd=cwd,
                       timeout=300)
    return p.returncode, p.stdout.decode("utf-8"), p.stderr.decode("utf-8")


def one_line_error(code, out, err, *needles):
    assert code in (1, 2), (code, out, err)
    assert out == ""
    assert err.startswith("tokenforge: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err
    for n in needles:
        assert n in err, (n, err)
    return err


CL100K_HELLO = "15339 1917"  # "hello world" in cl100k_base


@pytest.fixture(scope="module")
def small_tok(tmp_path_factory):
    """A small byte-level BPE trained here, saved as a file and as a GPT-2 folder."""
    d = tmp_path_factory.mktemp("tok")
    corpus = d / "corpus.txt"
    corpus.write_text("the lower newest widest lowest newer hello world\n" * 50, encoding="utf-8")
    tok = tokenforge.train_bpe([corpus], vocab_size=300, special_tokens=["<|endoftext|>"], workers=1,
                               show_progress=False)
    assert tok.name is None
    tok.save(d / "mine.json")
    tok.save(str(d / "gpt2dir") + "/", format="gpt2")
    return tok, d / "mine.json", d / "gpt2dir"


# ------------------------------------------------------------------ 1. -t resolves names, models, files, folders
@pytest.mark.parametrize(
    ("spec", "encoding"),
    [("cl100k", "cl100k_base"), ("CL100K", "cl100k_base"), ("gpt-4", "cl100k_base"),
     ("text-embedding-3-small", "cl100k_base"), ("gpt-3.5-turbo-0125", "cl100k_base"), ("o200k", "o200k_base"),
     ("gpt-4o", "o200k_base"), ("gpt-4o-mini-2024-07-18", "o200k_base"), ("gpt2", "gpt2"), ("p50k", "p50k_base")],
)
def test_tokenizer_accepts_encoding_short_and_model_names(spec, encoding):
    want = tokenforge.get_encoding(encoding).encode("hello world")
    code, out, err = tf("encode", "hello world", "-t", spec, "--json")
    assert code == 0, err
    assert json.loads(out) == want and err == ""


def test_tokenizer_accepts_a_file_and_a_folder(small_tok):
    tok, path, folder = small_tok
    want = tok.encode("the newest lower")
    for spec in (path, folder):
        code, out, err = tf("encode", "the newest lower", "-t", spec, "--json")
        assert code == 0, err
        assert json.loads(out) == want


def test_unknown_tokenizer_name_lists_the_encodings_and_points_to_list():
    code, out, err = tf("encode", "hi", "-t", "cl100kk")
    one_line_error(code, out, err, "unknown tokenizer 'cl100kk'", "did you mean cl100k", "cl100k_base", "o200k_base",
                   "gpt2", "short forms r50k, p50k, cl100k, o200k", "gpt-4o", "tokenforge list")
    assert "no such file" in err  # it also says no file or folder has that name
    assert "text-embedding-3-small" not in err and len(err) < 500  # the model names are in `tokenforge list`


def test_a_missing_path_still_says_no_such_file():
    code, out, err = tf("encode", "hi", "-t", "./missing/tokenizer.json")
    one_line_error(code, out, err, "missing/tokenizer.json: no such file")
    assert "unknown tokenizer" not in err


@pytest.mark.parametrize(
    "argv",
    [
        ["decode", "15339", "1917"],
        ["offsets", "hello world", "--json"],
        ["explain", "hello world", "--json"],
        ["heal", "hello wor", "--json"],
        ["info", "--json"],
        ["extend", "<|tool|>", "--json"],
    ],
)
def test_every_command_resolves_tokenizer_short_forms(argv):
    code, out, err = tf(*argv, "-t", "cl100k")
    assert code == 0, err
    if argv[0] == "decode":
        assert out == "hello world\n"
    elif argv[0] == "offsets":
        assert [s["id"] for s in json.loads(out)] == [15339, 1917]
    elif argv[0] == "explain":
        assert json.loads(out)["explain"]["ids"] == [15339, 1917]
    elif argv[0] == "info":
        assert json.loads(out)["name"] == "cl100k_base"
    elif argv[0] == "extend":
        assert "100277" in out


def test_count_and_compare_and_glitch_resolve_model_names(tmp_path):
    f = tmp_path / "en.txt"
    f.write_text("hello world, hello tokens", encoding="utf-8")
    enc = tokenforge.get_encoding("o200k_base")
    code, out, err = tf("count", f, "-t", "gpt-4o", "--json", "-q")
    assert code == 0, err
    assert json.loads(out)["total"]["tokens"] == len(enc.encode(f.read_text()))
    code, out, err = tf("compare", "gpt-4o", "cl100k", "--text", f, "--format", "json")
    assert code == 0, err
    rows = {r["tokenizer"]: r["tokens"] for r in json.loads(out)["rows"]}
    assert rows == {"gpt-4o (o200k_base)": len(enc.encode(f.read_text())),
                    "cl100k_base": len(tokenforge.get_encoding("cl100k_base").encode(f.read_text()))}
    code, out, err = tf("glitch", "-t", "gpt-2", "--text", f, "--no-reach", "--top", "1", "--json")
    assert code == 0, err
    assert json.loads(out)["corpus"]["total_tokens"] == len(tokenforge.get_encoding("gpt2").encode(f.read_text()))


def test_convert_resolves_a_short_form(tmp_path):
    sample = tmp_path / "s.txt"
    sample.write_text("hello world\nzweite Zeile\n", encoding="utf-8")
    code, out, err = tf("convert", "r50k", tmp_path / "g.tiktoken", "--sample", sample)
    assert code == 0, err
    assert "the same ids on 2 sample lines" in out
    assert "special_tokens=" not in out  # the library's note is said in CLI terms
    assert "no special tokens" in out


# ------------------------------------------------------------------ 2. errors name CLI flags
def test_special_token_error_names_the_encode_flags_and_they_work():
    code, out, err = tf("encode", "a<|endoftext|>b", "-t", "cl100k")
    one_line_error(code, out, err, "special token '<|endoftext|>'", "--allowed-special '<|endoftext|>'",
                   "--allowed-special all", "--ordinary-special")
    assert "allowed_special=" not in err and "disallowed_special" not in err
    code, out, err = tf("encode", "a<|endoftext|>b", "-t", "cl100k", "--allowed-special", "<|endoftext|>")
    assert code == 0 and out.split() == ["64", "100257", "65"], err
    code, out, err = tf("encode", "a<|endoftext|>b", "-t", "cl100k", "--ordinary-special")
    assert code == 0 and "100257" not in out.split() and len(out.split()) > 3, err


def test_decode_error_names_the_errors_flag_and_it_works():
    enc = tokenforge.get_encoding("gpt2")
    half = enc.encode("東")[:1]  # the first token of a multi-byte character: not valid UTF-8 alone
    code, out, err = tf("decode", *half, "-t", "gpt2", "--errors", "strict")
    one_line_error(code, out, err, "--errors replace")
    assert "errors='replace'" not in err
    code, out, err = tf("decode", *half, "-t", "gpt2", "--errors", "replace")
    assert code == 0 and "\ufffd" in out


def test_unrecognised_rank_file_error_speaks_cli(tmp_path):
    import base64

    ranks = tmp_path / "r.tiktoken"
    ranks.write_text("".join(f"{base64.b64encode(bytes([i])).decode()} {i}\n" for i in range(256)))
    code, out, err = tf("encode", "hi", "-t", ranks)
    one_line_error(code, out, err, "no split pattern", "-t tokenizer.json")
    assert "pass pattern=" not in err


def test_cli_message_rewrites_python_hints_only_for_flags_the_command_has():
    from tokenforge.cli._common import cli_message

    lossy = "x: cannot convert exactly: y (pass allow_lossy=True, or --allow-lossy, to write the closest HF file)"
    assert cli_message(lossy, {"--allow-lossy"}) == "x: cannot convert exactly: y (pass --allow-lossy to write the closest HF file)"
    train = "not UTF-8; pass errors='replace' or errors='ignore' to train anyway"
    assert cli_message(train, {"--errors"}) == "not UTF-8; pass --errors replace or --errors ignore to train anyway"
    assert cli_message("use x=1 here; pass rare_max=3", {"--rare-max"}) == "use x=1 here; pass --rare-max 3"
    assert cli_message("a token 'text=foo' here", {"--text"}) == "a token 'text=foo' here"


# ------------------------------------------------------------------ 3. encode --count and count
def test_encode_count_prints_only_the_number(tmp_path):
    enc = tokenforge.get_encoding("gpt2")
    code, out, err = tf("encode", "--count", "hello world", "-t", "gpt2")
    assert (code, out, err) == (0, "2\n", "")
    text = "hello <|endoftext|> world\n" * 40
    f = tmp_path / "t.txt"
    f.write_text(text, encoding="utf-8")
    want = len(enc.encode(text, disallowed_special=()))
    code, out, err = tf("encode", "--count", "-f", f, "-t", "gpt2")
    assert (code, out, err) == (0, f"{want}\n", "")
    code, out, err = tf("encode", "--count", "-t", "gpt2", stdin=text.encode())
    assert (code, out, err) == (0, f"{want}\n", "")
    code, out, err = tf("encode", "--count", "-f", f, "-t", "gpt2", "--json")
    report = json.loads(out)
    assert report["total"]["tokens"] == want and report["inputs"][0]["name"] == str(f)


def test_count_command_counts_per_file_and_total_as_encode_count_does(tmp_path):
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("hello world\n", encoding="utf-8")
    b.write_text("héllo <|endoftext|> 東京\n" * 3, encoding="utf-8")
    code, out, err = tf("count", a, b, "-t", "cl100k", "--json", "-q")
    assert code == 0, err
    report = json.loads(out)
    per_file = [r["tokens"] for r in report["inputs"]]
    single = [int(tf("encode", "--count", "-f", p, "-t", "cl100k")[1]) for p in (a, b)]
    assert per_file == single and report["total"]["tokens"] == sum(single)


# ------------------------------------------------------------------ 4. explain reads stdin
def test_explain_reads_stdin_without_text(tmp_path):
    enc = tokenforge.get_encoding("gpt2")
    code, out, err = tf("explain", "-t", "gpt2", "--json", stdin=b"hello world\n")
    assert code == 0, err
    assert json.loads(out)["explain"]["ids"] == enc.encode("hello world\n")
    code, out, err = tf("explain", "-t", "gpt2", stdin="naïve".encode())
    assert code == 0 and "ids (" in out and "'naïve'" in out
    f = tmp_path / "e.txt"
    f.write_bytes(b"from file")
    code, out, err = tf("explain", "-f", f, "-t", "gpt2", "--json")
    assert code == 0 and json.loads(out)["explain"]["ids"] == enc.encode("from file")


def test_explain_numbers_alone_does_not_read_stdin():
    code, out, err = tf("explain", "--numbers", "--json", stdin=b"this text must not be explained")
    assert code == 0, err
    assert set(json.loads(out)) == {"numbers"}


# ------------------------------------------------------------------ 5. info
def test_info_names_a_trained_tokenizer_by_its_file(small_tok):
    _tok, path, folder = small_tok
    code, out, err = tf("info", "-t", path)
    assert code == 0, err
    assert "name            mine.json\n" in out and "None" not in out.splitlines()[0]
    assert json.loads(tf("info", "-t", path, "--json")[1])["name"] == "mine.json"
    code, out, err = tf("info", "-t", folder)
    assert code == 0 and out.startswith("name            gpt2dir\n"), err


def test_info_uses_thousands_separators():
    code, out, err = tf("info", "-t", "cl100k")
    assert code == 0, err
    assert "tokens          100,261 (100,256 in the model, 5 added, 5 special)" in out
    assert "n_vocab         100,277 (largest id + 1)" in out
    info = json.loads(tf("info", "-t", "cl100k", "--json")[1])
    assert info["tokens"] == 100261  # JSON stays numbers


def test_info_backend():
    from tokenforge import _native

    code, out, err = tf("info", "--backend")
    assert code == 0, err
    assert out == ("native\n" if _native.available() else "python\n")
    assert tf("info", "--backend", env={"TOKENFORGE_BACKEND": "python"})[1] == "python\n"
    assert json.loads(tf("info", "--backend", "--json", env={"TOKENFORGE_BACKEND": "python"})[1]) == {"backend": "python"}


def test_info_backend_prefers_tokenforge_backend(monkeypatch):
    from tokenforge.cli import info

    monkeypatch.setattr(tokenforge, "backend", lambda: "python", raising=False)
    assert info.active_backend() == "python"
    monkeypatch.delattr(tokenforge, "backend")
    from tokenforge import _native

    monkeypatch.delenv("TOKENFORGE_BACKEND", raising=False)
    assert info.active_backend() == ("native" if _native.available() else "python")


# ------------------------------------------------------------------ 6. input: exact UTF-8 or a one-line error
@pytest.mark.parametrize(
    "argv",
    [["bpb", "--nll", "1"], ["encode"], ["encode", "--count"], ["explain"], ["offsets"], ["heal"], ["decode"]],
)
def test_invalid_utf8_on_stdin_is_one_line_naming_the_byte(argv):
    code, out, err = tf(*argv, stdin=b"caf\xe9 ok")
    line = one_line_error(code, out, err, "<stdin>: not valid UTF-8 at byte 3")
    assert line.startswith("tokenforge: error: <stdin>: not valid UTF-8 at byte 3"), line


def test_invalid_utf8_in_files_and_arguments(tmp_path):
    f = tmp_path / "bad.txt"
    f.write_bytes(b"line one\nab\xff")
    code, out, err = tf("encode", "-f", f)
    one_line_error(code, out, err, f"{f}: not valid UTF-8 at byte 11 (line 2", "--input-errors replace")
    code, out, err = tf("compare", "gpt2", "--text", f)
    one_line_error(code, out, err, f"{f}: not valid UTF-8 at byte 11")
    code, out, err = tf("encode", b"caf\xe9")
    one_line_error(code, out, err, "TEXT argument: not valid UTF-8 at byte 3")
    msgs = tmp_path / "m.json"
    msgs.write_bytes(b'[{"role": "user", "content": "\xff"}]')
    code, out, err = tf("chat", msgs)
    one_line_error(code, out, err, "not valid UTF-8 at byte 30")
    nll = tmp_path / "nll.txt"
    nll.write_text("1.5 oops")
    code, out, err = tf("bpb", "abc", "--token-nll", nll)
    one_line_error(code, out, err, "value 1 is 'oops', not a number")


def test_replacement_only_with_the_flag():
    enc = tokenforge.get_encoding("cl100k_base")
    code, out, err = tf("encode", "--input-errors", "replace", stdin=b"caf\xe9 ok")
    assert code == 0, err
    assert [int(x) for x in out.split()] == enc.encode("caf\ufffd ok")


def test_compare_counts_the_bytes_of_the_file_as_given(tmp_path):
    f = tmp_path / "en.txt"
    f.write_bytes(b"hello\r\nworld\r\n")
    code, out, err = tf("compare", "gpt2", "--text", f, "--format", "json")
    assert code == 0, err
    (row,) = json.loads(out)["rows"]
    assert row["bytes"] == 14  # CRLF counted as two bytes, as in the file
    assert row["tokens"] == len(tokenforge.get_encoding("gpt2").encode("hello\r\nworld\r\n"))


def test_compare_tsv_needs_lang_and_text_columns(tmp_path):
    bad = tmp_path / "par.tsv"
    bad.write_text("id\ttext\n1\thello\n", encoding="utf-8")
    code, out, err = tf("compare", "gpt2", "--text", bad)
    one_line_error(code, out, err, "lang and text", "missing: lang", "found: 'id', 'text'")
    good = tmp_path / "good.tsv"
    good.write_bytes(b"lang\ttext\r\nen\thello world\r\nde\thallo Welt\r\nen\tagain\r\n")
    code, out, err = tf("compare", "gpt2", "--text", good, "--format", "json")
    assert code == 0, err
    rows = {r["text"]: r for r in json.loads(out)["rows"]}
    assert set(rows) == {"en", "de"} and rows["en"]["bytes"] == len(b"hello world\nagain")
    assert rows["de"]["ratio_to_reference"] == pytest.approx(rows["de"]["tokens"] / rows["en"]["tokens"])
    code, out, err = tf("compare", "--help")
    assert "lang" in out and ".tsv" in out


# ------------------------------------------------------------------ 7. help: defaults, examples, public sources only
OWN_COMMANDS = ["encode", "decode", "offsets", "info", "convert", "compare", "explain", "glitch", "bpb", "heal",
                "covers", "extend", "chat", "train", "prepare", "count"]
INTERNAL_REFERENCE = re.compile(r"seed \d{3}|§\s*\d|\b[DQ]\d{2}\b|\bissue \d+", re.IGNORECASE)


def _option_blocks(help_text: str) -> dict[str, str]:
    """``{first option string: its help text}`` from ``--help`` output."""
    blocks: dict[str, str] = {}
    current = None
    for line in help_text.splitlines():
        m = re.match(r"^  (-[-\w]+)", line)
        if m:
            current = m.group(1)
            blocks[current] = line
        elif current and line.startswith("    ") and line.strip():
            blocks[current] += " " + line.strip()
        else:
            current = None
    return blocks


@pytest.mark.parametrize("command", OWN_COMMANDS)
def test_help_shows_defaults_and_an_example(command):
    code, out, err = tf(command, "--help")
    assert code == 0, err
    blocks = _option_blocks(out)
    assert len(blocks) >= 2, out
    for option, text in blocks.items():
        if option in ("-h", "--help"):
            continue
        assert "default" in text, f"{command} {option}: {text}"
    assert "examples:" in out and f"  tokenforge {command}" in out.split("examples:")[1]
    assert not INTERNAL_REFERENCE.search(out), INTERNAL_REFERENCE.search(out)


def test_help_lists_tokenizer_forms():
    code, out, _ = tf("encode", "--help")
    assert code == 0
    text = " ".join(out.split())
    assert "cl100k" in text and "gpt-4o" in text and "folder" in text and "(default: cl100k_base)" in text

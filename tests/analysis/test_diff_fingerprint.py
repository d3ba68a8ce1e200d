"""Tokenizer versions: the fingerprint changes exactly with the parts that decide the ids,
is stored in and checked by native files, is recorded by ``prepare``; ``diff`` names
what changed and whether the ids did; the ``fingerprint`` and ``diff`` commands."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

import pytest

import tokenforge
from tokenforge import AddedToken, BPE, Tokenizer
from tokenforge.analysis.diff import DiffReport, default_texts, diff
from tokenforge.cli import versions
from tokenforge.fingerprint import PARTS, fingerprint_parts

GPT2 = tokenforge.get_encoding("gpt2")
EOT = "<|endoftext|>"


def _gpt2_with(vocab=None, specials=None, **kwargs) -> Tokenizer:
    vocab = dict(GPT2.model.vocab) if vocab is None else vocab
    return Tokenizer(BPE(vocab), pre_tokenizer="gpt2", special_tokens={EOT: 50256} if specials is None else specials,
                     name="modified", **kwargs)


def _lines(n: int = 200) -> list[str]:
    return [line for text in default_texts() for line in text.splitlines() if line.strip()][:n]


# ---------------------------------------------------------------- the fingerprint itself

def test_fingerprint_shape_and_parts():
    fp = GPT2.fingerprint()
    assert fp.startswith("tf1:") and len(fp) == 4 + 64
    parts = GPT2.fingerprint_parts()
    assert list(parts) == list(PARTS)
    assert all(len(h) == 64 for h in parts.values())
    assert parts == fingerprint_parts(GPT2)


def test_rebuilt_tokenizer_has_the_same_fingerprint():
    assert _gpt2_with().fingerprint() == GPT2.fingerprint()  # the name does not enter it
    assert Tokenizer.from_dict(GPT2.to_dict(), name="other").fingerprint() == GPT2.fingerprint()
    assert tokenforge.get_encoding("r50k_base").fingerprint() == GPT2.fingerprint()  # same ids, other name


def test_the_backend_does_not_change_the_fingerprint(tmp_path):
    """HF's byte-level BPE runs as rank BPE on the native core and piece by piece on the
    Python path; the fingerprint is of the stages, so both give the same."""
    path = tmp_path / "tokenizer.json"
    GPT2.save(str(path), format="hf")
    native = tokenforge.load(path)
    python = Tokenizer.from_dict(native.to_dict(), backend="python")
    assert python.plan == "python"
    assert python.fingerprint() == native.fingerprint() == GPT2.fingerprint()


def test_fingerprint_is_the_same_in_other_processes_and_hash_seeds():
    code = "import tokenforge; print(tokenforge.get_encoding('cl100k_base').fingerprint())"
    seen = set()
    for seed in ("0", "1", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
        seen.add(out.stdout.strip())
    assert seen == {tokenforge.get_encoding("cl100k_base").fingerprint()}


def test_swapped_ranks_change_the_model_part():
    vocab = dict(GPT2.model.vocab)
    a, b = GPT2.encode_single_token(" the"), GPT2.encode_single_token(" and")
    vocab[a], vocab[b] = vocab[b], vocab[a]
    swapped = _gpt2_with(vocab)
    assert swapped.fingerprint() != GPT2.fingerprint()
    report = diff(GPT2, swapped, texts=_lines())
    assert report.parts_differ == ["model"]
    assert report.same_bytes == report.vocab_a and report.same_bytes - report.same_bytes_same_id == 2
    assert report.lines_same < report.lines and report.differing
    first = report.differing[0]
    assert {first.tokens_a[0], first.tokens_b[0]} <= {" the", " and"}
    assert "ids differ" in report.verdict


def test_a_removed_merge_changes_the_model_part():
    vocab = dict(GPT2.model.vocab)
    removed = GPT2.encode_single_token(" the")
    del vocab[removed]
    smaller = _gpt2_with(vocab)
    report = diff(GPT2, smaller, texts=_lines())
    assert report.parts_differ == ["model"]
    assert report.only_a == 1 and report.only_a_sample == ["' the'"] and report.only_b == 0
    assert report.lines_same < report.lines


def test_a_changed_special_id_changes_the_added_tokens_part():
    other = _gpt2_with(specials={EOT: 50257})
    parts_a, parts_b = GPT2.fingerprint_parts(), other.fingerprint_parts()
    assert [p for p in PARTS if parts_a[p] != parts_b[p]] == ["added_tokens"]
    report = diff(GPT2, other, texts=["hello world"])
    assert report.parts_differ == ["added_tokens"]
    assert report.specials_changed == {EOT: (50256, 50257)}
    assert report.lines_same == report.lines == 1  # text without the special: same ids
    assert not report.ids_agree and not report.a_ids_kept


def test_an_added_token_changes_the_added_tokens_part():
    data = GPT2.to_dict()
    data["added_tokens"] = [*data["added_tokens"], AddedToken("<|tool|>", 50257, special=False).to_dict()]
    extended = Tokenizer.from_dict(data)
    assert extended.fingerprint() != GPT2.fingerprint()
    report = diff(GPT2, extended, texts=["call <|tool|> now", "plain text"])
    assert report.parts_differ == ["added_tokens"]
    assert report.lines == 2 and report.lines_same == 1  # the added token captures its text
    assert report.differing[0].context.startswith("call <|tool|>")


def test_flags_of_an_added_token_are_part_of_it():
    data = GPT2.to_dict()
    data["added_tokens"] = [{**data["added_tokens"][0], "lstrip": True}]
    assert Tokenizer.from_dict(data).fingerprint() != GPT2.fingerprint()


def test_chat_template_truncation_and_padding_are_parts():
    base = GPT2.fingerprint_parts()
    with_chat = GPT2.with_config(chat_template="{{ messages }}").fingerprint_parts()
    assert [p for p in PARTS if base[p] != with_chat[p]] == ["chat_template"]
    # settings that do not change ids stay out of it
    assert GPT2.with_config(model_max_length=1024).fingerprint() == GPT2.fingerprint()
    truncated = GPT2.with_truncation(16).fingerprint_parts()
    assert [p for p in PARTS if base[p] != truncated[p]] == ["truncation"]
    padded = GPT2.with_padding(length=8, pad_token=EOT).fingerprint_parts()
    assert [p for p in PARTS if base[p] != padded[p]] == ["padding"]


# ---------------------------------------------------------------- formats: same fingerprint iff same ids

# gpt2 (GPT-2 files keep its pattern) and cl100k (they lose it); o200k takes the same paths, 15 s slower
@pytest.mark.parametrize("name", ["gpt2", "cl100k_base"])
def test_formats_give_the_same_fingerprint_exactly_when_the_ids_agree(name, tmp_path):
    """tiktoken file, native file and HF tokenizer.json of an encoding run the same rank
    model and split pattern: same fingerprint, same ids. GPT-2's vocab.json + merges.txt
    has no split pattern (it loads with GPT-2's) nor specials: for cl100k and o200k the
    fingerprint would differ, and so would the ids, so saving them there is refused; for
    gpt2 itself both agree."""
    enc = tokenforge.get_encoding(name)
    lines = _lines(300)
    reference = [enc.encode(line, disallowed_special=()) for line in lines]
    for fmt, target in [("tiktoken", "x.tiktoken"), ("tokenforge", "x.json"), ("hf", "tokenizer.json"),
                        ("gpt2", "gpt2-files")]:
        path = tmp_path / fmt / target
        path.parent.mkdir()
        if fmt == "gpt2" and name != "gpt2":  # the files would lose the pattern: save refuses
            with pytest.raises(tokenforge.FileFormatError, match="cannot hold this tokenizer's pre-tokenizer"):
                enc.save(str(path), format=fmt)
            assert not path.exists()
            continue
        enc.save(str(path), format=fmt)
        tok = tokenforge.load(path)
        same_fp = tok.fingerprint() == enc.fingerprint()
        same_ids = [tok.encode(line, disallowed_special=()) for line in lines] == reference and \
            dict(tok.special_tokens) == dict(enc.special_tokens)
        assert same_fp == same_ids, (fmt, same_fp, same_ids)
        assert same_fp == (fmt != "gpt2" or name == "gpt2"), fmt


# ---------------------------------------------------------------- native files

def test_native_file_records_and_checks_the_fingerprint(tmp_path):
    path = tmp_path / "gpt2.json"
    GPT2.save(str(path))
    doc = json.loads(path.read_text(encoding="utf-8"))
    record = doc["fingerprint"]
    assert record["id"] == GPT2.fingerprint() and record["parts"] == GPT2.fingerprint_parts()
    assert record["written_by"] == f"tokenforge {tokenforge.__version__}"
    assert tokenforge.load(path).fingerprint() == GPT2.fingerprint()


def test_the_writing_version_does_not_change_the_fingerprint(tmp_path):
    path = tmp_path / "gpt2.json"
    GPT2.save(str(path))
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["fingerprint"]["written_by"] = "tokenforge 99.0"
    path.write_text(json.dumps(doc), encoding="utf-8")
    assert tokenforge.load(path).fingerprint() == GPT2.fingerprint()


def test_files_without_a_fingerprint_still_load(tmp_path):
    path = tmp_path / "old.json"
    GPT2.save(str(path))
    doc = json.loads(path.read_text(encoding="utf-8"))
    del doc["fingerprint"]
    path.write_text(json.dumps(doc), encoding="utf-8")
    assert tokenforge.load(path).fingerprint() == GPT2.fingerprint()


def test_a_changed_file_with_fresh_part_hashes_is_refused_naming_the_part(tmp_path):
    from tokenforge.formats.native import part_hash

    path = tmp_path / "edited.json"
    GPT2.save(str(path))
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["added_tokens"][0]["id"] = 50257  # edited by hand, sha256 recomputed
    doc["sha256"]["added_tokens"] = part_hash(doc["added_tokens"])
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(tokenforge.FileFormatError) as info:
        tokenforge.load(path)
    message = str(info.value)
    assert str(path) in message and "'added_tokens'" in message and "fingerprint does not match" in message


def test_an_edited_fingerprint_record_is_refused(tmp_path):
    path = tmp_path / "edited.json"
    GPT2.save(str(path))
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["fingerprint"]["parts"]["model"] = "0" * 64
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(tokenforge.FileFormatError, match="fingerprint"):
        tokenforge.load(path)


# ---------------------------------------------------------------- prepare

def test_prepare_records_the_fingerprint_and_resumes_across_formats(tmp_path):
    src = tmp_path / "corpus.txt"
    src.write_text("hello world\n\nbye now\n", encoding="utf-8")
    out = tmp_path / "out"
    index = tokenforge.prepare([str(src)], "gpt2", out, show_progress=False)
    assert index["tokenizer"]["fingerprint"] == GPT2.fingerprint()
    on_disk = json.loads((out / "index.json").read_text(encoding="utf-8"))
    assert on_disk["tokenizer"]["fingerprint"] == GPT2.fingerprint()
    # the same tokenizer from an HF tokenizer.json: other serialization, same ids
    hf = tmp_path / "tokenizer.json"
    GPT2.save(str(hf), format="hf")
    again = tokenforge.prepare([str(src)], tokenforge.load(hf), out, show_progress=False, resume=True)
    assert again["tokenizer"]["fingerprint"] == index["tokenizer"]["fingerprint"]
    # another tokenizer: not the same data
    with pytest.raises(tokenforge.PrepareError):
        tokenforge.prepare([str(src)], "cl100k_base", out, show_progress=False, resume=True)


# ---------------------------------------------------------------- diff

def test_diff_of_identical_tokenizers_on_the_default_texts():
    report = diff(GPT2, tokenforge.get_encoding("r50k_base"))
    assert isinstance(report, DiffReport)
    assert report.same_fingerprint and report.parts_differ == [] and report.ids_agree
    assert report.texts == len(default_texts()) and report.lines > 100 and report.lines_same == report.lines
    assert report.verdict.startswith("same fingerprint")
    json.dumps(report.to_dict())


def test_diff_of_p50k_base_and_p50k_edit():
    report = diff(tokenforge.get_encoding("p50k_base"), tokenforge.get_encoding("p50k_edit"))
    assert report.parts_differ == ["added_tokens"]
    assert set(report.specials_only_b) == {"<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>"}
    assert report.lines_same == report.lines and report.a_ids_kept and not report.ids_agree
    assert "stay valid" in report.verdict


def test_diff_of_different_families():
    report = diff(tokenforge.get_encoding("cl100k_base"), tokenforge.get_encoding("o200k_base"), sample=3)
    assert {"pre_tokenizer", "model", "added_tokens"} <= set(report.parts_differ)
    assert 0 < report.same_bytes_same_id < report.same_bytes
    assert report.only_a and report.only_b and len(report.only_a_sample) == 3
    assert report.specials_changed["<|endoftext|>"] == (100257, 199999)
    assert report.lines_same < report.lines and len(report.differing) == 3
    assert "differ" in report.format(top=2)


def test_diff_refuses_non_text():
    with pytest.raises(tokenforge.ArgumentTypeError):
        diff(GPT2, GPT2, texts=[b"bytes"])


# ---------------------------------------------------------------- CLI

def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tokenforge")
    sub = p.add_subparsers(dest="command", required=True)
    versions.register_fingerprint(sub)
    versions.register_diff(sub)
    return p


def _run(argv, capsys):
    args = _parser().parse_args(argv)
    code = args.func(args)
    return code, capsys.readouterr().out


def test_cli_fingerprint(capsys):
    code, out = _run(["fingerprint", "-t", "gpt2"], capsys)
    assert code == 0 and out.strip() == GPT2.fingerprint()
    code, out = _run(["fingerprint", "-t", "cl100k", "--parts"], capsys)
    lines = out.splitlines()
    assert code == 0 and lines[0] == tokenforge.get_encoding("cl100k_base").fingerprint()
    assert [line.split()[0] for line in lines[1:]] == list(PARTS)
    code, out = _run(["fingerprint", "-t", "gpt2", "--parts", "--json"], capsys)
    data = json.loads(out)
    assert code == 0 and data["fingerprint"] == GPT2.fingerprint() and data["parts"] == GPT2.fingerprint_parts()


def test_cli_fingerprint_of_a_file(tmp_path, capsys):
    path = tmp_path / "tokenizer.json"
    GPT2.save(str(path), format="hf")
    code, out = _run(["fingerprint", "-t", str(path), "--json"], capsys)
    assert code == 0 and json.loads(out)["fingerprint"] == GPT2.fingerprint()


def test_cli_diff(tmp_path, capsys):
    code, out = _run(["diff", "p50k_base", "p50k_edit"], capsys)
    assert code == 0
    assert "parts that differ: added_tokens" in out and "<|fim_prefix|>=50281" in out and "verdict:" in out
    text = tmp_path / "t.txt"
    text.write_text("hello world\nsecond line\n", encoding="utf-8")
    code, out = _run(["diff", "cl100k_base", "o200k_base", "--text", str(text), "--json", "--top", "2"], capsys)
    data = json.loads(out)
    assert code == 0 and data["texts"] == 1 and data["lines"] == 2 and data["lines_same"] == 0
    assert len(data["differing"]) == 2 and data["parts_differ"][:2] == ["pre_tokenizer", "model"]


def test_cli_diff_errors_through_main(capsys):
    from tokenforge.cli._common import print_error

    args = _parser().parse_args(["diff", "gpt2", "no-such-tokenizer.json"])
    with pytest.raises(tokenforge.TokenforgeError) as info:
        args.func(args)
    print_error(info.value)
    assert "no-such-tokenizer.json" in capsys.readouterr().err


def test_cli_diff_rejects_a_bad_top():
    with pytest.raises(SystemExit) as info:
        _parser().parse_args(["diff", "gpt2", "r50k_base", "--top", "0"])
    assert info.value.code == 2

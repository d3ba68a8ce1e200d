"""``tokenforge.load`` on things that are not (complete) tokenizer files."""

from __future__ import annotations

import json
import lzma
import os
import random
from pathlib import Path

import pytest

import tokenforge
from tokenforge import FileFormatError, TokenforgeError, TokenizerFileNotFoundError


def _raises_format_error(path, **kwargs) -> FileFormatError:
    with pytest.raises(FileFormatError) as info:
        tokenforge.load(path, **kwargs)
    assert isinstance(info.value, TokenforgeError)
    assert isinstance(info.value, ValueError)
    return info.value


# ------------------------------------------------------------ missing files


@pytest.mark.parametrize("name", ["missing.json", "missing.tiktoken", "missing-vocab.json", "merges.txt", "no_suffix"])
def test_missing_file_raises_file_not_found_naming_the_path(tmp_path, name):
    path = tmp_path / name
    with pytest.raises(TokenizerFileNotFoundError) as info:
        tokenforge.load(path)
    err = info.value
    assert isinstance(err, FileNotFoundError)
    assert isinstance(err, OSError)
    assert isinstance(err, TokenforgeError)
    assert str(path) in str(err)


def test_missing_file_is_catchable_as_builtin_oserror(tmp_path):
    with pytest.raises(OSError):
        tokenforge.load(str(tmp_path / "nope.json"))


def test_empty_directory_is_not_a_tokenizer(tmp_path):
    with pytest.raises(TokenizerFileNotFoundError) as info:
        tokenforge.load(tmp_path)
    assert str(tmp_path) in str(info.value)
    assert "vocab.json" in str(info.value)


@pytest.mark.parametrize("present", ["merges.txt", "vocab.json"])
def test_directory_with_only_one_gpt2_file_is_not_a_tokenizer(tmp_path, small_tokenizer, present):
    small_tokenizer.save(str(tmp_path), format="gpt2")
    missing = "vocab.json" if present == "merges.txt" else "merges.txt"
    (tmp_path / missing).unlink()
    with pytest.raises(TokenizerFileNotFoundError) as info:
        tokenforge.load(tmp_path)
    assert str(tmp_path) in str(info.value)


@pytest.mark.parametrize("given, missing", [("vocab.json", "merges.txt"), ("merges.txt", "vocab.json")])
def test_gpt2_file_without_its_partner_names_the_missing_file(tmp_path, small_tokenizer, given, missing):
    small_tokenizer.save(str(tmp_path), format="gpt2")
    (tmp_path / missing).unlink()
    with pytest.raises(TokenizerFileNotFoundError) as info:
        tokenforge.load(tmp_path / given)
    assert str(tmp_path / missing) in str(info.value)


def test_directory_with_hf_tokenizer_json_says_the_format_is_not_supported(tmp_path):
    (tmp_path / "tokenizer.json").write_text(json.dumps({"version": "1.0", "model": {"type": "BPE"}}))
    err = _raises_format_error(tmp_path)
    assert "tokenizer.json" in str(err)
    assert str(tmp_path) in str(err)


# ------------------------------------------------------------ not a tokenizer


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize("suffix", [".json", ".tiktoken", ".bin"])
def test_random_binary_garbage_is_a_format_error(tmp_path, seed, suffix):
    data = random.Random(seed).randbytes(4096)
    path = tmp_path / f"garbage{suffix}"
    path.write_bytes(data)
    err = _raises_format_error(path, pattern="gpt2") if suffix == ".tiktoken" else _raises_format_error(path)
    assert str(path) in str(err)


def test_garbage_after_a_valid_looking_rank_line_names_the_line(tmp_path):
    path = tmp_path / "x.tiktoken"
    path.write_bytes(b"QQ== 0\n" + random.Random(7).randbytes(300).replace(b"\n", b"") + b"\n")
    err = _raises_format_error(path, pattern="gpt2")
    assert err.line == 2
    assert f"{path}, line 2" in str(err)


@pytest.mark.parametrize("content", [b"", b"\n\n  \n", b"hello world\n", b"\xef\xbb\xbf"])
def test_empty_or_text_file_is_a_format_error(tmp_path, content):
    path = tmp_path / "x.txt"
    path.write_bytes(content)
    err = _raises_format_error(path)
    assert str(path) in str(err)


HF_LIKE = {
    "version": "1.0",
    "truncation": None,
    "padding": None,
    "added_tokens": [{"id": 3, "content": "<|endoftext|>", "special": True}],
    "normalizer": None,
    "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False},
    "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]},
    "decoder": {"type": "ByteLevel"},
}


@pytest.mark.parametrize("name", ["tokenizer.json", "model.json"])
def test_hf_tokenizer_json_is_detected_and_loaded(tmp_path, name):
    path = tmp_path / name
    path.write_text(json.dumps(HF_LIKE, indent=2))
    tok = tokenforge.load(path)
    assert isinstance(tok, tokenforge.Tokenizer)
    assert tok.encode("ab") == [2] and tok.encode("ab<|endoftext|>", allowed_special="all") == [2, 3]


def test_hf_tokenizer_json_with_an_unknown_component_names_it_and_the_file(tmp_path):
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(dict(HF_LIKE, pre_tokenizer={"type": "Frobnicate"})))
    err = _raises_format_error(path)
    assert "pre_tokenizer" in str(err) and "Frobnicate" in str(err)
    assert str(path) in str(err)


@pytest.mark.parametrize("doc", [[], [1, 2], "format_version", 1, None], ids=repr)
def test_json_that_is_not_an_object_is_a_format_error(tmp_path, doc):
    path = tmp_path / "x.json"
    path.write_text(json.dumps(doc))
    err = _raises_format_error(path)
    assert str(path) in str(err)


def test_native_file_without_format_version_says_so(tmp_path, small_tokenizer):
    path = tmp_path / "tok.json"
    small_tokenizer.save(str(path))
    doc = json.loads(path.read_text(encoding="utf-8"))
    del doc["format_version"]
    path.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    err = _raises_format_error(path)
    assert "format_version" in str(err)
    assert str(path) in str(err)


def test_native_file_is_recognised_whatever_its_key_order(tmp_path, small_tokenizer):
    """JSON key order carries no meaning: a native file re-dumped with "format_version"
    after the (large) model must still load."""
    path = tmp_path / "tok.json"
    small_tokenizer.save(str(path))
    doc = json.loads(path.read_text(encoding="utf-8"))
    reordered = {k: doc[k] for k in ("model", "sha256", "name", "pre_tokenizer", "added_tokens", "decoder",
                                     "normalizer", "post_processor")}
    reordered["format_version"] = doc["format_version"]
    path.write_text(json.dumps(reordered, indent=2), encoding="utf-8")
    assert tokenforge.load(path) == small_tokenizer


def test_native_file_with_leading_whitespace_loads(tmp_path, small_tokenizer):
    path = tmp_path / "tok.json"
    small_tokenizer.save(str(path))
    path.write_bytes(b"\n" * 3 + path.read_bytes())
    assert tokenforge.load(path) == small_tokenizer


def test_native_file_refuses_pattern_and_special_tokens_overrides(tmp_path, small_tokenizer):
    path = tmp_path / "tok.json"
    small_tokenizer.save(str(path))
    for kwargs in ({"pattern": "cl100k"}, {"special_tokens": ["<|x|>"]}):
        err = _raises_format_error(path, **kwargs)
        assert str(path) in str(err)


def test_unknown_save_format_is_rejected_before_writing(tmp_path, small_tokenizer):
    with pytest.raises(ValueError) as info:
        small_tokenizer.save(str(tmp_path / "x"), format="protobuf")
    for fmt in ("tokenforge", "tiktoken", "gpt2", "hf"):
        assert fmt in str(info.value)
    assert os.listdir(tmp_path) == []


def test_a_rank_file_named_tokenizer_model_is_read_as_tiktoken(tmp_path, small_tokenizer):
    """Meta ships Llama 3's tiktoken rank file as ``tokenizer.model``: the content decides,
    not the suffix, and a real SentencePiece ``.model`` still reads as one."""
    from tokenforge.io import detect_format

    d = tmp_path / "llama-like"
    d.mkdir()
    small_tokenizer.save(str(d / "tokenizer.model"), format="tiktoken")
    assert detect_format(d / "tokenizer.model") == detect_format(d) == "tiktoken"
    with pytest.raises(FileFormatError, match="pattern="):
        tokenforge.load(d / "tokenizer.model")  # an unknown rank file needs its split pattern
    text = "the quick brown fox, naïve 東京 1234"
    for path in (d / "tokenizer.model", d):
        tok = tokenforge.load(path, pattern=small_tokenizer.pattern)
        assert tok.encode_ordinary(text) == small_tokenizer.encode_ordinary(text)
    spm = tmp_path / "spm.model"
    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "differential" / "spm_test_unigram.model.xz"
    spm.write_bytes(lzma.decompress(fixture.read_bytes()))
    assert detect_format(spm) == "sentencepiece"


@pytest.mark.parametrize("missing", ["[CLS]", "[SEP]"])
def test_a_bert_vocab_without_cls_or_sep_is_refused_as_hf_refuses_it(tmp_path, missing):
    tokenizers = pytest.importorskip("tokenizers")
    tokens = [t for t in ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hello", "##s"] if t != missing]
    path = tmp_path / "vocab.txt"
    path.write_text("\n".join(tokens) + "\n")
    with pytest.raises(Exception):
        tokenizers.BertWordPieceTokenizer(str(path))
    with pytest.raises(FileFormatError, match=rf"vocab.txt.*{missing[1:-1]}"):
        tokenforge.load(path)


@pytest.mark.parametrize("name", ["tokenizer.json", "t.tokenforge.json", "vocab.json"])
def test_json_nested_too_deeply_is_a_format_error_naming_the_file(tmp_path, name):
    deep = "[" * 5000 + "]" * 5000
    path = tmp_path / name
    body = {"tokenizer.json": '{"model": %s}', "t.tokenforge.json": '{"format_version": 2, "x": %s}',
            "vocab.json": "%s"}[name] % deep
    path.write_text(body)
    if name == "vocab.json":
        (tmp_path / "merges.txt").write_text("")
    with pytest.raises(FileFormatError, match=rf"{name}: JSON nested too deeply"):
        tokenforge.load(path)


def test_an_unknown_sentencepiece_model_type_is_named(tmp_path, shared_data):
    from tokenforge.sentencepiece import proto

    m = proto.read_model(shared_data / "vocab" / "sentencepiece" / "spm_test_unigram.model")
    m.trainer_spec.model_type = 99
    proto.write_model(m, tmp_path / "m.model")
    with pytest.raises(FileFormatError, match=r"m\.model: SentencePiece model_type 99 \(not a sentencepiece"):
        tokenforge.load(tmp_path / "m.model")


def test_deep_json_is_a_clean_error_even_with_a_raised_recursion_limit(tmp_path):
    """json's C decoder recurses on the C stack: with the recursion limit raised by the
    program, 200,000 levels crashed the process (SIGSEGV). Run in a child, so a crash fails."""
    import subprocess
    import sys

    path = tmp_path / "tokenizer.json"
    path.write_text('{"model": ' + "[" * 200_000 + "]" * 200_000 + "}")
    code = (
        "import sys, tokenforge\n"
        "sys.setrecursionlimit(1_000_000)\n"
        "try:\n"
        f"    tokenforge.load({str(path)!r})\n"
        "except tokenforge.FileFormatError as e:\n"
        "    assert 'nested too deeply' in str(e)\n"
        "    assert sys.getrecursionlimit() == 1_000_000\n"
        "else:\n"
        "    raise SystemExit('loaded')\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


@pytest.mark.parametrize("text", ["x" * 5000, '{"version": "1.0",\n "model": {}}' * 3])
def test_text_passed_as_a_file_name_is_a_clear_error(text):
    """A tokenizer.json's content, or any over-long name, given to load: one error saying
    what to do, not the file system's ENAMETOOLONG."""
    with pytest.raises(tokenforge.TokenizerFileNotFoundError, match=r"not a file name .*Tokenizer\.from_dict"):
        tokenforge.load(text)


def test_a_path_of_the_wrong_type_is_an_argument_type_error():
    with pytest.raises(tokenforge.ArgumentTypeError, match="not int"):
        tokenforge.load(5)

"""tiktoken rank files (``base64 rank`` lines) and the shipped encodings of get_encoding."""

from __future__ import annotations

import base64
import hashlib
import lzma
import zlib
import re
import shutil
from pathlib import Path

import pytest

import tokenforge
import tokenforge.encodings as encodings_mod
from tokenforge import FileFormatError, Tokenizer, UnknownEncodingError
from tokenforge.encodings import ENCODINGS, rank_file_bytes

EOT = "<|endoftext|>"

# published values (shared/data/vocab/tiktoken/ENCODINGS.md)
N_VOCAB = {
    "gpt2": 50257,
    "r50k_base": 50257,
    "p50k_base": 50281,
    "p50k_edit": 50284,
    "cl100k_base": 100277,
    "o200k_base": 200019,
    "o200k_harmony": 201088,
}
SPECIALS = {
    "gpt2": {EOT: 50256},
    "r50k_base": {EOT: 50256},
    "p50k_base": {EOT: 50256},
    "p50k_edit": {EOT: 50256, "<|fim_prefix|>": 50281, "<|fim_middle|>": 50282, "<|fim_suffix|>": 50283},
    "cl100k_base": {
        EOT: 100257,
        "<|fim_prefix|>": 100258,
        "<|fim_middle|>": 100259,
        "<|fim_suffix|>": 100260,
        "<|endofprompt|>": 100276,
    },
    "o200k_base": {EOT: 199999, "<|endofprompt|>": 200018},
}
# gpt-oss: o200k_base's specials, the harmony control tokens, every other id up to 201087 reserved.
SPECIALS["o200k_harmony"] = {
    **SPECIALS["o200k_base"], "<|startoftext|>": 199998, "<|return|>": 200002, "<|constrain|>": 200003,
    "<|channel|>": 200005, "<|start|>": 200006, "<|end|>": 200007, "<|message|>": 200008, "<|call|>": 200012,
    **{f"<|reserved_{i}|>": i for i in (200000, 200001, 200004, 200009, 200010, 200011, *range(200013, 201088))},
}
SHA256 = {
    "r50k_base": "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930",
    "p50k_base": "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069",
    "cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    "o200k_base": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
}
# widely published ids of "hello world"
HELLO_WORLD = {
    "gpt2": [31373, 995],
    "r50k_base": [31373, 995],
    "p50k_base": [31373, 995],
    "p50k_edit": [31373, 995],
    "cl100k_base": [15339, 1917],
    "o200k_base": [24912, 2375],
    "o200k_harmony": [24912, 2375],
}
LINE_RE = re.compile(rb"[A-Za-z0-9+/]+={0,2} (0|[1-9][0-9]*)")


def _texts(varied_text: str) -> list[str]:
    return [varied_text, *varied_text.split("\n"), f"a{EOT}b{EOT}", "  \n\t "]


def _ids(tok, texts: list[str]) -> list[list[int]]:
    return [tok.encode(t, allowed_special="all") for t in texts]


def _tiktoken_dump(ranks) -> bytes:
    """tiktoken.load.dump_tiktoken_bpe's format, without its blobfile dependency."""
    ordered = sorted(ranks.items(), key=lambda kv: kv[1])
    return b"".join(base64.b64encode(t) + b" " + str(r).encode() + b"\n" for t, r in ordered)


# ------------------------------------------------ known rank files


@pytest.mark.parametrize("rank_file", ["r50k_base", "p50k_base", "cl100k_base", "o200k_base"])
def test_known_rank_file_gets_its_pattern_and_specials(tmp_path, rank_file, varied_text):
    data = rank_file_bytes(ENCODINGS[rank_file])
    assert hashlib.sha256(data).hexdigest() == SHA256[rank_file]
    path = tmp_path / "renamed-copy.tiktoken"
    path.write_bytes(data)
    tok = tokenforge.load(path)
    ref = tokenforge.get_encoding(rank_file)
    assert tok.pattern == ref.pattern
    assert dict(tok.special_tokens) == SPECIALS[rank_file]
    assert tok.n_vocab == ref.n_vocab
    texts = _texts(varied_text)
    assert _ids(tok, texts) == _ids(ref, texts)


@pytest.mark.parametrize("rank_file", ["r50k_base", "cl100k_base"])
def test_published_rank_file_copied_from_shared_data_is_recognised(tmp_path, shared_data, rank_file):
    src = shared_data / "vocab" / "tiktoken" / f"{rank_file}.tiktoken"
    if not src.is_file():
        pytest.skip(f"{src} is missing")
    path = tmp_path / f"{rank_file}.tiktoken"
    shutil.copyfile(src, path)
    tok = tokenforge.load(path)
    ref = tokenforge.get_encoding(rank_file)
    assert tok.pattern == ref.pattern
    assert dict(tok.special_tokens) == SPECIALS[rank_file]
    assert tok == ref
    assert path.read_bytes() == rank_file_bytes(ENCODINGS[rank_file])


def test_pattern_and_specials_passed_explicitly_override_a_known_file(tmp_path):
    path = tmp_path / "r50k.tiktoken"
    path.write_bytes(rank_file_bytes(ENCODINGS["r50k_base"]))
    tok = tokenforge.load(path, pattern="cl100k", special_tokens={"<|x|>": 60000})
    assert tok.pattern == tokenforge.get_encoding("cl100k_base").pattern
    assert dict(tok.special_tokens) == {"<|x|>": 60000}


@pytest.mark.parametrize("rank_file", ["r50k_base", "cl100k_base", "o200k_base"])
def test_saving_a_known_encoding_as_tiktoken_reproduces_the_published_file(tmp_path, rank_file):
    tokenforge.get_encoding(rank_file).save(str(tmp_path / "out.tiktoken"), format="tiktoken")
    assert (tmp_path / "out.tiktoken").read_bytes() == rank_file_bytes(ENCODINGS[rank_file])


# ------------------------------------------------ unknown rank files


@pytest.fixture()
def trained_rank_file(tmp_path, small_tokenizer) -> Path:
    path = tmp_path / "trained.tiktoken"
    small_tokenizer.save(str(path), format="tiktoken")
    return path


def test_unknown_rank_file_without_pattern_asks_for_pattern(trained_rank_file):
    with pytest.raises(FileFormatError) as info:
        tokenforge.load(trained_rank_file)
    assert "pattern=" in str(info.value)
    assert str(trained_rank_file) in str(info.value)


def test_unknown_rank_file_loads_with_named_pattern(trained_rank_file, small_tokenizer, varied_text):
    tok = tokenforge.load(trained_rank_file, pattern="gpt2")
    assert tok.pattern == small_tokenizer.pattern
    assert dict(tok.special_tokens) == {}
    assert dict(tok.mergeable_ranks) == dict(small_tokenizer.mergeable_ranks)
    for text in _texts(varied_text)[:-2]:
        assert tok.encode_ordinary(text) == small_tokenizer.encode_ordinary(text)


def test_unknown_rank_file_loads_with_regex_pattern(trained_rank_file, small_tokenizer, varied_text):
    tok = tokenforge.load(trained_rank_file, pattern=small_tokenizer.pattern)
    assert tok.encode_ordinary(varied_text) == small_tokenizer.encode_ordinary(varied_text)


def test_tiktoken_save_then_load_with_pattern_and_specials_gives_same_ids(trained_rank_file, small_tokenizer, varied_text):
    tok = tokenforge.load(trained_rank_file, pattern="gpt2", special_tokens=dict(small_tokenizer.special_tokens))
    texts = _texts(varied_text)
    assert _ids(tok, texts) == _ids(small_tokenizer, texts)
    assert tok.encode(EOT, allowed_special="all") == [256]


def test_special_tokens_given_as_list_get_ids_after_the_last_rank(trained_rank_file):
    tok = tokenforge.load(trained_rank_file, pattern="gpt2", special_tokens=[EOT, "<|pad|>"])
    assert dict(tok.special_tokens) == {EOT: 300, "<|pad|>": 301}


def test_saved_rank_file_is_in_tiktoken_format(trained_rank_file, small_tokenizer):
    data = trained_rank_file.read_bytes()
    assert data == _tiktoken_dump(small_tokenizer.mergeable_ranks)
    lines = data.split(b"\n")
    assert lines[-1] == b""
    assert all(LINE_RE.fullmatch(ln) for ln in lines[:-1])
    ranks = [int(ln.split(b" ")[1]) for ln in lines[:-1]]
    assert ranks == sorted(ranks)
    # specials are not part of a rank file
    assert 256 not in ranks and len(ranks) == 299


def test_saving_tiktoken_twice_gives_byte_identical_files(tmp_path, small_tokenizer):
    small_tokenizer.save(str(tmp_path / "a.tiktoken"), format="tiktoken")
    small_tokenizer.save(str(tmp_path / "b.tiktoken"), format="tiktoken")
    assert (tmp_path / "a.tiktoken").read_bytes() == (tmp_path / "b.tiktoken").read_bytes()


def test_saved_rank_file_loaded_by_tiktoken_gives_same_ids(trained_rank_file, small_tokenizer, varied_text, monkeypatch):
    tiktoken = pytest.importorskip("tiktoken")
    from tiktoken.load import load_tiktoken_bpe

    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")  # read our file, not a cached one with the same path
    ranks = load_tiktoken_bpe(str(trained_rank_file))
    assert ranks == dict(small_tokenizer.mergeable_ranks)
    enc = tiktoken.Encoding(
        name="trained",
        pat_str=small_tokenizer.pattern,
        mergeable_ranks=ranks,
        special_tokens=dict(small_tokenizer.special_tokens),
    )
    texts = _texts(varied_text)
    assert [enc.encode(t, allowed_special="all") for t in texts] == _ids(small_tokenizer, texts)


def test_rank_file_written_by_tiktoken_format_loads(tmp_path, small_tokenizer, varied_text):
    path = tmp_path / "theirs.tiktoken"
    path.write_bytes(_tiktoken_dump(small_tokenizer.mergeable_ranks))
    tok = tokenforge.load(path, pattern="gpt2", special_tokens={EOT: 256})
    assert _ids(tok, _texts(varied_text)) == _ids(small_tokenizer, _texts(varied_text))


# ------------------------------------------------ malformed rank files

BAD_LINES = {
    "one-field": (b"QUJD", "fields"),
    "three-fields": (b"QUJD 999 7", "fields"),
    "bad-base64-chars": (b"!!!! 999", "base64"),
    "bad-base64-padding": (b"QUJDRA= 999", "base64"),
    "non-integer-rank": (b"QUJD nine", "integer"),
    "float-rank": (b"QUJD 9.5", "integer"),
    "negative-rank": (b"QUJD -4", "negative"),
    "duplicate-rank": (b"QUJD 5", "appears twice"),
    "duplicate-token": (b"QQ== 999", "appears twice"),
}


def _rank_lines(small_tokenizer) -> list[bytes]:
    return _tiktoken_dump(small_tokenizer.mergeable_ranks).split(b"\n")[:-1]


@pytest.mark.parametrize("case", list(BAD_LINES))
def test_malformed_rank_line_names_file_and_line(tmp_path, small_tokenizer, case):
    bad, fragment = BAD_LINES[case]
    lines = _rank_lines(small_tokenizer)
    lines[99] = bad  # line 100
    path = tmp_path / "bad.tiktoken"
    path.write_bytes(b"\n".join(lines) + b"\n")
    with pytest.raises(FileFormatError) as info:
        tokenforge.load(path, pattern="gpt2")
    assert info.value.line == 100
    assert f"{path}, line 100" in str(info.value)
    assert fragment in str(info.value)


@pytest.mark.parametrize(
    "case", ["one-field", "three-fields", "bad-base64-chars", "bad-base64-padding", "non-integer-rank", "negative-rank"]
)
def test_malformed_first_line_of_dot_tiktoken_file_names_line_1(tmp_path, small_tokenizer, case):
    """A ``*.tiktoken`` file is a rank file (module docstring of tokenforge.formats);
    an error on its first line must be reported like one on any other line."""
    bad, fragment = BAD_LINES[case]
    lines = _rank_lines(small_tokenizer)
    lines.insert(0, bad)
    path = tmp_path / "bad.tiktoken"
    path.write_bytes(b"\n".join(lines) + b"\n")
    with pytest.raises(FileFormatError) as info:
        tokenforge.load(path, pattern="gpt2")
    assert info.value.line == 1
    assert f"{path}, line 1" in str(info.value)
    assert fragment in str(info.value)


def test_rank_file_with_only_blank_lines_is_rejected(tmp_path):
    path = tmp_path / "empty.tiktoken"
    path.write_bytes(b"\n\n\n")
    with pytest.raises(FileFormatError) as info:
        tokenforge.load(path, pattern="gpt2")
    assert str(path) in str(info.value)


def test_rank_file_missing_a_single_byte_is_rejected(tmp_path, small_tokenizer):
    lines = [ln for ln in _rank_lines(small_tokenizer) if not ln.startswith(b"QQ== ")]  # drop b"A"
    path = tmp_path / "nobyte.tiktoken"
    path.write_bytes(b"\n".join(lines) + b"\n")
    with pytest.raises(FileFormatError) as info:
        tokenforge.load(path, pattern="gpt2")
    assert "0x41" in str(info.value)


def test_rank_file_with_crlf_and_blank_lines_loads(tmp_path, small_tokenizer):
    path = tmp_path / "crlf.tiktoken"
    path.write_bytes(b"\r\n".join([*_rank_lines(small_tokenizer), b"", b""]))
    tok = tokenforge.load(path, pattern="gpt2")
    assert dict(tok.mergeable_ranks) == dict(small_tokenizer.mergeable_ranks)


# ------------------------------------------------ get_encoding


@pytest.mark.parametrize("name", list(N_VOCAB))
def test_get_encoding_loads_offline_with_published_n_vocab_and_specials(name):
    tok = tokenforge.get_encoding(name)
    assert isinstance(tok, Tokenizer)
    assert tok.name == name
    assert tok.n_vocab == N_VOCAB[name]
    assert dict(tok.special_tokens) == SPECIALS[name]
    assert tok.encode("hello world") == HELLO_WORLD[name]
    assert tok.decode(HELLO_WORLD[name]) == "hello world"


def test_list_encodings_names_every_shipped_encoding():
    # the rank-file encodings, and ByT5's byte tokenizer (tested in tests/models/test_byt5.py)
    assert set(tokenforge.list_encodings()) == set(N_VOCAB) | {"bytes"}


def test_get_encoding_returns_the_same_instance():
    assert tokenforge.get_encoding("cl100k_base") is tokenforge.get_encoding("cl100k_base")


@pytest.mark.parametrize("name", ["gpt-4", "cl100k", "GPT2", "", "o200k"])
def test_unknown_encoding_name_raises_listing_known_names(name):
    with pytest.raises(UnknownEncodingError) as info:
        tokenforge.get_encoding(name)
    assert isinstance(info.value, ValueError)
    msg = str(info.value)
    assert repr(name) in msg
    for known in N_VOCAB:
        assert known in msg


@pytest.fixture()
def fake_package_data(tmp_path, monkeypatch):
    """Point the shipped-data reader of tokenforge.encodings at tmp_path/data (empty),
    with an empty cache. Returns (that directory, the good r50k_base rank file)."""
    good = rank_file_bytes(ENCODINGS["r50k_base"])  # read and verified before the redirection
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    monkeypatch.setattr(encodings_mod, "_data_file", lambda name: data_dir / name)
    monkeypatch.setattr(encodings_mod, "_loaded", {})
    return data_dir, good


def test_redirected_package_data_with_correct_bytes_loads(fake_package_data):
    """Control for the corruption tests below: the redirection itself works."""
    data_dir, good = fake_package_data
    (data_dir / "r50k_base.tiktoken.zz").write_bytes(zlib.compress(good))
    tok = tokenforge.get_encoding("r50k_base")
    assert tok.n_vocab == 50257
    assert tok.encode("hello world") == HELLO_WORLD["r50k_base"]


@pytest.mark.parametrize("damage", ["flipped-byte", "dropped-line", "truncated-zlib", "not-zlib", "missing"])
def test_get_encoding_detects_corrupted_shipped_data(fake_package_data, damage):
    data_dir, good = fake_package_data
    target = data_dir / "r50k_base.tiktoken.zz"
    if damage == "flipped-byte":
        i = good.index(b" 1000\n") - 1  # last base64 character of a token: still a parseable file
        bad = good[:i] + (b"B" if good[i : i + 1] != b"B" else b"C") + good[i + 1 :]
        target.write_bytes(zlib.compress(bad))
    elif damage == "dropped-line":
        assert b"IQ== 0\n" in good
        target.write_bytes(zlib.compress(good.replace(b"IQ== 0\n", b"")))
    elif damage == "truncated-zlib":
        target.write_bytes(zlib.compress(good)[:5000])
    elif damage == "not-zlib":
        target.write_bytes(good)
    with pytest.raises(FileFormatError) as info:
        tokenforge.get_encoding("r50k_base")
    msg = str(info.value)
    assert "r50k_base" in msg
    if damage in ("flipped-byte", "dropped-line"):
        assert "sha256" in msg and SHA256["r50k_base"] in msg
    # a failed load is not cached: the next call checks again
    assert "r50k_base" not in encodings_mod._loaded
    with pytest.raises(FileFormatError):
        tokenforge.get_encoding("r50k_base")

"""GPT-2 ``vocab.json`` + ``merges.txt``: the real GPT-2 files, round trips through
the writer, interoperability with tiktoken's reader, and malformed files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import tokenforge
from tokenforge import FileFormatError, SpecialTokenError, Tokenizer

EOT = "<|endoftext|>"


def _texts(varied_text: str) -> list[str]:
    return [varied_text, *varied_text.split("\n"), f"one{EOT}two {EOT}{EOT}\n{EOT}", " " * 40, ""]


def _ids(tok: Tokenizer, texts: list[str]) -> list[list[int]]:
    return [tok.encode(t, allowed_special="all") for t in texts]


def _merge_lines(path: Path) -> list[str]:
    """Lines of a merges.txt without a leading #version line and without blank lines."""
    lines = path.read_bytes().decode("utf-8").split("\n")
    if lines and lines[0].startswith("#version"):
        lines = lines[1:]
    return [ln for ln in lines if ln]


# ------------------------------------------------------------ real GPT-2 files


@pytest.fixture(scope="module")
def gpt2_dir(shared_data) -> Path:
    d = shared_data / "vocab" / "gpt2"
    if not ((d / "vocab.json").is_file() and (d / "merges.txt").is_file()):
        pytest.skip(f"{d} has no vocab.json + merges.txt")
    return d


@pytest.fixture(scope="module")
def real_texts(shared_data) -> list[str]:
    text_dir = shared_data / "text"
    picks = [
        ("address.txt", None),
        ("german.txt", None),
        ("tinystories_sample.txt", None),
        ("botchan.txt", 20_000),
        ("tinyshakespeare.txt", 20_000),
        ("hongloumeng.txt", 4_000),
        ("wagahaiwa_nekodearu.txt", 4_000),
    ]
    texts = []
    for name, n in picks:
        path = text_dir / name
        if not path.is_file():
            pytest.skip(f"{path} is missing")
        text = path.read_bytes().decode("utf-8")
        texts.append(text if n is None else text[:n])
    # documents joined by the special token, as in GPT-2 training data
    texts.append(EOT.join(texts[:3]) + EOT)
    return texts


@pytest.fixture(scope="module")
def real_gpt2(gpt2_dir) -> Tokenizer:
    return tokenforge.load(gpt2_dir)


@pytest.mark.parametrize("which", ["directory", "vocab.json", "merges.txt"])
def test_real_gpt2_files_give_same_ids_as_builtin_gpt2(gpt2_dir, real_texts, which):
    path = gpt2_dir if which == "directory" else gpt2_dir / which
    tok = tokenforge.load(path)
    ref = tokenforge.get_encoding("gpt2")
    assert tok.n_vocab == 50257
    assert len(tok) == 50257
    assert dict(tok.mergeable_ranks) == dict(ref.mergeable_ranks)
    ids = _ids(tok, real_texts)
    assert ids == _ids(ref, real_texts)
    assert ids[-1].count(50256) == real_texts[-1].count(EOT) >= 3
    assert [tok.decode(i) for i in ids] == real_texts


def test_real_gpt2_endoftext_is_special_with_id_50256(real_gpt2):
    assert dict(real_gpt2.special_tokens) == {EOT: 50256}
    assert real_gpt2.eot_token == 50256
    assert real_gpt2.encode(EOT, allowed_special="all") == [50256]
    assert real_gpt2.encode(EOT, allowed_special={EOT}) == [50256]
    assert real_gpt2.encode_ordinary(EOT) == [27, 91, 437, 1659, 5239, 91, 29]
    assert real_gpt2.decode([50256]) == EOT
    with pytest.raises(SpecialTokenError):
        real_gpt2.encode(f"text {EOT} text")
    # 50256 is not also an ordinary (mergeable) token
    assert 50256 not in real_gpt2.model.vocab


def test_real_gpt2_saved_as_gpt2_then_loaded_gives_same_ids(tmp_path, real_gpt2, real_texts):
    real_gpt2.save(str(tmp_path / "out"), format="gpt2")
    again = tokenforge.load(tmp_path / "out")
    assert again == real_gpt2
    assert dict(again.special_tokens) == {EOT: 50256}
    assert _ids(again, real_texts) == _ids(real_gpt2, real_texts)


def test_real_gpt2_rewritten_files_match_the_originals(tmp_path, gpt2_dir, real_gpt2):
    """Saved from the loaded GPT-2 tokenizer, the files say exactly what the originals say.

    Known byte-level differences (see the report): the writer always starts
    merges.txt with ``#version: 0.2`` (this copy of the original has no such
    line), and writes vocab.json with ``ensure_ascii=False`` (the original
    escapes non-ASCII as ``\\u0120``). Everything else must be identical.
    """
    out = tmp_path / "out"
    real_gpt2.save(str(out), format="gpt2")
    # merges: every merge line identical and in the same order
    assert _merge_lines(out / "merges.txt") == _merge_lines(gpt2_dir / "merges.txt")
    original_merges = (gpt2_dir / "merges.txt").read_bytes()
    header = b"" if original_merges.startswith(b"#version") else b"#version: 0.2\n"
    assert (out / "merges.txt").read_bytes() == header + original_merges
    # vocab: same tokens, same ids, same order
    original = json.loads((gpt2_dir / "vocab.json").read_bytes())
    written = json.loads((out / "vocab.json").read_bytes())
    assert written == original
    assert list(written.items()) == list(original.items())


def test_builtin_gpt2_writes_the_real_gpt2_merges(tmp_path, gpt2_dir):
    """get_encoding("gpt2") has ranks only; the merges derived from them are GPT-2's."""
    tokenforge.get_encoding("gpt2").save(str(tmp_path / "out"), format="gpt2")
    assert _merge_lines(tmp_path / "out" / "merges.txt") == _merge_lines(gpt2_dir / "merges.txt")
    assert json.loads((tmp_path / "out" / "vocab.json").read_bytes()) == json.loads(
        (gpt2_dir / "vocab.json").read_bytes()
    )


# -------------------------------------------------- offline round trips


def test_builtin_gpt2_saved_as_gpt2_files_loads_with_same_ids(tmp_path, varied_text):
    ref = tokenforge.get_encoding("gpt2")
    ref.save(str(tmp_path / "gpt2"), format="gpt2")
    tok = tokenforge.load(tmp_path / "gpt2")
    assert dict(tok.special_tokens) == {EOT: 50256}
    assert tok.n_vocab == 50257
    assert dict(tok.mergeable_ranks) == dict(ref.mergeable_ranks)
    texts = _texts(varied_text)
    assert _ids(tok, texts) == _ids(ref, texts)


def test_saved_gpt2_files_are_read_identically_by_tiktoken(tmp_path, monkeypatch):
    """tiktoken's own GPT-2 reader (data_gym_to_mergeable_bpe_ranks) gets the same ranks."""
    load = pytest.importorskip("tiktoken.load")
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")  # no cache: read the files we wrote
    ref = tokenforge.get_encoding("gpt2")
    ref.save(str(tmp_path / "gpt2"), format="gpt2")
    ranks = load.data_gym_to_mergeable_bpe_ranks(
        vocab_bpe_file=str(tmp_path / "gpt2" / "merges.txt"),
        encoder_json_file=str(tmp_path / "gpt2" / "vocab.json"),
    )
    assert ranks == dict(ref.mergeable_ranks)


def test_trained_tokenizer_saved_as_gpt2_loads_equal_with_same_ids(tmp_path, small_tokenizer, varied_text):
    small_tokenizer.save(str(tmp_path / "g"), format="gpt2")
    tok = tokenforge.load(tmp_path / "g")
    assert tok == small_tokenizer
    assert dict(tok.special_tokens) == {EOT: 256}
    assert tok.model.merges == small_tokenizer.model.merges
    texts = _texts(varied_text)
    assert _ids(tok, texts) == _ids(small_tokenizer, texts)


def test_gpt2_writer_layout(tmp_path, small_tokenizer):
    small_tokenizer.save(str(tmp_path / "g"), format="gpt2")
    assert sorted(p.name for p in (tmp_path / "g").iterdir()) == ["merges.txt", "vocab.json"]
    vocab = json.loads((tmp_path / "g" / "vocab.json").read_bytes())
    assert vocab[EOT] == 256
    assert sorted(vocab.values()) == list(range(300))
    assert vocab["Ġ"] == 32 and vocab["!"] == 33
    merges = (tmp_path / "g" / "merges.txt").read_bytes().decode("utf-8")
    lines = merges.split("\n")
    assert lines[0] == "#version: 0.2"
    assert merges.endswith("\n") and "\r" not in merges
    assert len(lines) - 2 == len(small_tokenizer.model.merges)
    assert all(len(ln.split(" ")) == 2 for ln in lines[1:-1])


def test_saving_gpt2_twice_gives_byte_identical_files(tmp_path, small_tokenizer):
    small_tokenizer.save(str(tmp_path / "a"), format="gpt2")
    small_tokenizer.save(str(tmp_path / "b"), format="gpt2")
    for name in ("vocab.json", "merges.txt"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_prefixed_file_names_are_found_from_either_file(tmp_path, small_tokenizer):
    small_tokenizer.save(str(tmp_path / "g"), format="gpt2")
    (tmp_path / "g" / "vocab.json").rename(tmp_path / "g" / "my-vocab.json")
    (tmp_path / "g" / "merges.txt").rename(tmp_path / "g" / "my-merges.txt")
    assert tokenforge.load(tmp_path / "g" / "my-vocab.json") == small_tokenizer
    assert tokenforge.load(tmp_path / "g" / "my-merges.txt") == small_tokenizer


# ---------------------------------------------------------- #version header


@pytest.fixture()
def gpt2_files(tmp_path, small_tokenizer) -> Path:
    d = tmp_path / "g"
    small_tokenizer.save(str(d), format="gpt2")
    return d


def _merges(d: Path) -> list[str]:
    """The merges.txt lines (header first), without the final empty string."""
    return (d / "merges.txt").read_bytes().decode("utf-8").split("\n")[:-1]


def _write_merges(d: Path, lines: list[str], newline: str = "\n") -> None:
    (d / "merges.txt").write_bytes((newline.join(lines) + newline).encode("utf-8"))


def test_merges_with_and_without_version_header_load_the_same(gpt2_files, small_tokenizer):
    lines = _merges(gpt2_files)
    assert lines[0].startswith("#version")
    assert tokenforge.load(gpt2_files) == small_tokenizer
    _write_merges(gpt2_files, lines[1:])
    assert tokenforge.load(gpt2_files) == small_tokenizer
    _write_merges(gpt2_files, ["#version: 0.1 some other text", *lines[1:]])
    assert tokenforge.load(gpt2_files) == small_tokenizer


def test_merges_with_crlf_line_endings_and_trailing_blank_lines_load(gpt2_files, small_tokenizer):
    lines = _merges(gpt2_files)
    _write_merges(gpt2_files, [*lines, "", ""], newline="\r\n")
    assert tokenforge.load(gpt2_files) == small_tokenizer


def test_version_header_below_line_one_is_a_merge_error(gpt2_files):
    lines = _merges(gpt2_files)
    _write_merges(gpt2_files, [*lines[:5], "#version: 0.2", *lines[5:]])
    with pytest.raises(FileFormatError) as info:
        tokenforge.load(gpt2_files)
    assert info.value.line == 6
    assert "line 6" in str(info.value)
    assert str(gpt2_files / "merges.txt") in str(info.value)


# ---------------------------------------------------------- malformed files


@pytest.mark.parametrize(
    "bad",
    ["th e x", "the", "t  h", " t", "t ", "t\th"],
    ids=["three-fields", "one-field", "double-space", "leading-space", "trailing-space", "tab"],
)
def test_malformed_merges_line_names_file_and_line(gpt2_files, bad):
    lines = _merges(gpt2_files)
    lines[7] = bad  # file line 8
    _write_merges(gpt2_files, lines)
    with pytest.raises(FileFormatError) as info:
        tokenforge.load(gpt2_files)
    msg = str(info.value)
    assert info.value.line == 8
    assert f"{gpt2_files / 'merges.txt'}, line 8" in msg


def test_merge_part_not_in_vocab_names_token_and_line(gpt2_files):
    lines = _merges(gpt2_files)
    lines[4] = "zq Ġzz"  # file line 5
    _write_merges(gpt2_files, lines)
    with pytest.raises(FileFormatError) as info:
        tokenforge.load(gpt2_files)
    msg = str(info.value)
    assert info.value.line == 5
    assert f"{gpt2_files / 'merges.txt'}, line 5" in msg
    assert "'zq'" in msg


def test_merge_result_not_in_vocab_names_token_and_line(gpt2_files, small_tokenizer):
    vocab = json.loads((gpt2_files / "vocab.json").read_bytes())
    assert "qz" not in vocab
    lines = _merges(gpt2_files)
    lines[3] = "q z"  # both parts are byte tokens, the merge result is not a token
    _write_merges(gpt2_files, lines)
    with pytest.raises(FileFormatError) as info:
        tokenforge.load(gpt2_files)
    assert info.value.line == 4
    assert "'qz'" in str(info.value)
    assert "line 4" in str(info.value)


def test_merge_outside_byte_alphabet_names_line(gpt2_files):
    lines = _merges(gpt2_files)
    lines[2] = "a€ b"  # "€" is not one of GPT-2's 256 printable byte characters
    _write_merges(gpt2_files, lines)
    with pytest.raises(FileFormatError) as info:
        tokenforge.load(gpt2_files)
    assert info.value.line == 3
    assert "line 3" in str(info.value)


def _pretty_vocab(d: Path) -> list[str]:
    """Rewrite vocab.json one entry per line; return its lines."""
    vocab = json.loads((d / "vocab.json").read_bytes())
    text = json.dumps(vocab, indent=1, ensure_ascii=False)
    (d / "vocab.json").write_text(text, encoding="utf-8")
    return text.split("\n")


def test_invalid_json_in_vocab_names_file_and_line(gpt2_files):
    lines = _pretty_vocab(gpt2_files)
    assert tokenforge.load(gpt2_files)  # the pretty form itself is fine
    lines[9] = ' "x": ,'  # line 10
    (gpt2_files / "vocab.json").write_text("\n".join(lines), encoding="utf-8")
    with pytest.raises(FileFormatError) as info:
        tokenforge.load(gpt2_files)
    assert info.value.line == 10
    assert f"{gpt2_files / 'vocab.json'}, line 10" in str(info.value)


def test_non_utf8_vocab_json_names_file_and_line(gpt2_files):
    lines = _pretty_vocab(gpt2_files)
    data = "\n".join(lines).encode("utf-8").split(b"\n")
    data[11] = data[11].replace(b'"', b'"\xff', 1)  # line 12
    (gpt2_files / "vocab.json").write_bytes(b"\n".join(data))
    with pytest.raises(FileFormatError) as info:
        tokenforge.load(gpt2_files)
    assert info.value.line == 12
    assert f"{gpt2_files / 'vocab.json'}, line 12" in str(info.value)
    assert "UTF-8" in str(info.value)


def test_non_utf8_merges_txt_names_file_and_line(gpt2_files):
    data = (gpt2_files / "merges.txt").read_bytes().split(b"\n")
    data[6] = b"\xc3\x28 x"  # line 7: invalid continuation byte
    (gpt2_files / "merges.txt").write_bytes(b"\n".join(data))
    with pytest.raises(FileFormatError) as info:
        tokenforge.load(gpt2_files)
    assert info.value.line == 7
    assert f"{gpt2_files / 'merges.txt'}, line 7" in str(info.value)
    assert "UTF-8" in str(info.value)


@pytest.mark.parametrize(
    "vocab_text, fragment",
    [
        ("[1, 2, 3]", "JSON object"),
        ('{"a": -1}', "-1"),
        ('{"a": "1"}', "'1'"),
        ('{"a": 1.5}', "1.5"),
        ('{"a": true}', "True"),
    ],
    ids=["list", "negative-id", "string-id", "float-id", "bool-id"],
)
def test_vocab_json_with_wrong_shape_names_file(gpt2_files, vocab_text, fragment):
    (gpt2_files / "vocab.json").write_text(vocab_text, encoding="utf-8")
    with pytest.raises(FileFormatError) as info:
        tokenforge.load(gpt2_files)
    assert str(gpt2_files / "vocab.json") in str(info.value)
    assert fragment in str(info.value)


def test_vocab_json_with_duplicate_id_names_both_tokens(gpt2_files):
    vocab = json.loads((gpt2_files / "vocab.json").read_bytes())
    vocab["Ġzzz"] = vocab["!"]
    (gpt2_files / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(FileFormatError) as info:
        tokenforge.load(gpt2_files)
    msg = str(info.value)
    assert "'!'" in msg and "'Ġzzz'" in msg
    assert str(gpt2_files / "vocab.json") in msg


def test_token_outside_byte_alphabet_must_be_declared_special(gpt2_files):
    vocab = json.loads((gpt2_files / "vocab.json").read_bytes())
    vocab["<|extra token|>"] = 300  # the space is not in GPT-2's byte alphabet (it is spelled "Ġ")
    (gpt2_files / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(FileFormatError) as info:
        tokenforge.load(gpt2_files)
    assert "'<|extra token|>'" in str(info.value)
    assert "special_tokens=" in str(info.value)
    assert str(gpt2_files / "vocab.json") in str(info.value)
    tok = tokenforge.load(gpt2_files, special_tokens=[EOT, "<|extra token|>"])
    assert dict(tok.special_tokens) == {EOT: 256, "<|extra token|>": 300}
    assert tok.encode("a<|extra token|>", allowed_special="all")[-1] == 300


def test_declared_special_tokens_replace_the_default(gpt2_files):
    vocab = json.loads((gpt2_files / "vocab.json").read_bytes())
    vocab["<|pad|>"] = 300  # all of it is in the byte alphabet: an ordinary token unless declared
    (gpt2_files / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    plain = tokenforge.load(gpt2_files)
    assert dict(plain.special_tokens) == {EOT: 256}
    assert plain.model.vocab[300] == b"<|pad|>"
    declared = tokenforge.load(gpt2_files, special_tokens=[EOT, "<|pad|>"])
    assert dict(declared.special_tokens) == {EOT: 256, "<|pad|>": 300}
    assert 300 not in declared.model.vocab

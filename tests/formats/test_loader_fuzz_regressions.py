"""Loader defects found by ``fuzz/formats.py``, each pinned with its reference library.

* SentencePiece ``.model``: protobuf's own reading of the wire format (a tag is at most 5
  bytes kept to 32 bits, a length at most 5 bytes below 2 GiB, a known field with a foreign
  wire type and a piece type outside the enum are unknown fields, a repeated sub-message is
  merged, groups are skipped). A 5-byte tag once shifted every later id by one.
* ``tokenizer.json`` and ``vocab.json`` are read as HF's serde_json reads them: NaN,
  infinities, numbers past a double and lone surrogate escapes are errors, not values.
* tokenforge JSON: a lone surrogate is a ``FileFormatError`` naming the part (it was a
  ``UnicodeEncodeError``); a value a stage refuses names the file (it did not).
* GPT-2 ``vocab.json`` + ``merges.txt`` whose merges the ids do not imply (an empty or
  edited ``merges.txt``) give HF's ids: they used to be merged by id.
* A ``vocab.txt`` is a BERT vocabulary whatever its first line looks like.
* A ``tokenizer.json`` Unigram model merges unknown characters with literal matches of its
  unknown piece, as HF does (``x<unk>y`` is one ``<unk>``).
* A stage setting of the wrong JSON kind (a decoder's ``replacement`` that is an object, a
  template id that is a float) is refused at load naming the file, the stage and the
  field; it used to load and fail with a bare ``TypeError`` at the first encode or decode.
"""

from __future__ import annotations

import json
import lzma
import struct
from pathlib import Path

import pytest

import tokenforge
from tokenforge import FileFormatError
from tokenforge.models.bpe import BPE, PieceBPE
from tokenforge.sentencepiece.proto import PieceType, decode_model, encode_model

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
TEXTS = ["Hello world, it's 12345 naïve cafés!", "  the  quick\tbrown fox\n\nend ", "東京 🙂 <unk> <s> ▁x"]


# -- SentencePiece protobuf --------------------------------------------------------------


def _varint(v: int) -> bytes:
    out = bytearray()
    while v >= 0x80:
        out.append(v & 0x7F | 0x80)
        v >>= 7
    return bytes(out + bytes([v]))


@pytest.fixture(scope="module")
def spm_model() -> bytes:
    """sentencepiece's test Unigram model, 300 pieces, without its charsmap (small)."""
    proto = decode_model(lzma.decompress((FIXTURES / "differential" / "spm_test_unigram.model.xz").read_bytes()))
    proto.pieces = proto.pieces[:300]
    proto.trainer_spec.vocab_size = 300
    proto.normalizer_spec.precompiled_charsmap = b""
    proto.normalizer_spec.name = "identity"
    return encode_model(proto)


def _piece_record(data: bytes, index: int) -> tuple[int, int, int]:
    """(start, body start, end) of the record of piece ``index`` (pieces come first)."""
    pos = 0
    for i in range(index + 1):
        assert data[pos] == 0x0A
        n, p = 0, pos + 1
        shift = 0
        while True:
            b = data[p]
            n |= (b & 0x7F) << shift
            p += 1
            if b < 0x80:
                break
            shift += 7
        if i == index:
            return pos, p, p + n
        pos = p + n
    raise AssertionError


def _with_piece(data: bytes, index: int, record: bytes) -> bytes:
    start, _, end = _piece_record(data, index)
    return data[:start] + record + data[end:]


def _piece_body(data: bytes, index: int) -> bytes:
    _, body, end = _piece_record(data, index)
    return data[body:end]


def _ids_like_sentencepiece(tmp_path: Path, data: bytes) -> tokenforge.Tokenizer:
    """Load ``data`` with tokenforge; when sentencepiece is installed, its pieces and ids must match."""
    path = tmp_path / "m.model"
    path.write_bytes(data)
    tok = tokenforge.load(path)
    try:
        import sentencepiece as spm
    except ImportError:
        return tok
    sp = spm.SentencePieceProcessor()
    sp.LoadFromSerializedProto(data)
    assert len(tok) == sp.get_piece_size()
    assert [tok.id_to_token(i) for i in range(len(tok))] == [sp.id_to_piece(i) for i in range(len(tok))]
    for text in TEXTS:
        assert tok.encode(text, disallowed_special=()) == sp.encode(text), text
    return tok


def _sentencepiece_refuses(data: bytes) -> None:
    spm = pytest.importorskip("sentencepiece")
    sp = spm.SentencePieceProcessor()
    with pytest.raises(Exception):
        sp.LoadFromSerializedProto(data)


def test_a_five_byte_tag_with_high_bits_is_the_field_protobuf_reads(tmp_path, spm_model):
    # 0x0a written in 5 bytes with bit 32 set: protobuf keeps tags to 32 bits, so this is
    # piece 3; read as a 64-bit number it was an unknown field and every later id moved by one
    body = _piece_body(spm_model, 3)
    data = _with_piece(spm_model, 3, bytes.fromhex("8a80808010") + _varint(len(body)) + body)
    tok = _ids_like_sentencepiece(tmp_path, data)
    assert len(tok) == 300
    assert tok.id_to_token(3) == decode_model(spm_model).pieces[3].piece


@pytest.mark.parametrize("tag, length, expected", [
    (bytes.fromhex("8a8080808000"), None, "field tag longer than 5 bytes at byte"),
    (b"\x0a", "6 bytes", "is longer than 5 bytes (protobuf refuses it)"),
    (b"\x0a", "2**32", "2 GiB or more (protobuf refuses it)"),
])
def test_tags_and_lengths_protobuf_refuses_are_errors_naming_file_and_byte(tmp_path, spm_model, tag, length, expected):
    body = _piece_body(spm_model, 3)
    if length is None:
        size = _varint(len(body))
    elif length == "6 bytes":
        size = bytes([len(body) | 0x80, 0x80, 0x80, 0x80, 0x80, 0x00])
    else:
        size = bytes([len(body) | 0x80, 0x80, 0x80, 0x80, 0x10])
    data = _with_piece(spm_model, 3, tag + size + body)
    path = tmp_path / "bad.model"
    path.write_bytes(data)
    with pytest.raises(FileFormatError) as info:
        tokenforge.load(path)
    assert str(path) in str(info.value)
    assert expected in str(info.value)
    _sentencepiece_refuses(data)


@pytest.mark.parametrize("value", [0, 7, 100, 2**64 - 1])
def test_a_piece_type_outside_the_enum_is_normal_as_in_sentencepiece(tmp_path, spm_model, value):
    body = _piece_body(spm_model, 5)
    fields = decode_model(spm_model).pieces[5]
    new = b"\x0a" + _varint(len(fields.piece.encode())) + fields.piece.encode() + b"\x15" + struct.pack("<f", fields.score)
    new += b"\x18" + _varint(value)
    data = _with_piece(spm_model, 5, b"\x0a" + _varint(len(new)) + new)
    assert body != new
    proto = decode_model(data)
    assert proto.pieces[5].type == PieceType.NORMAL and not proto.pieces[5].has("type")
    assert proto.pieces[5].unknown_fields == (b"\x18" + _varint(value),)  # kept, and written back
    _ids_like_sentencepiece(tmp_path, data)


def test_a_known_field_with_a_foreign_wire_type_is_an_unknown_field(tmp_path, spm_model):
    piece = decode_model(spm_model).pieces[7].piece.encode()
    new = b"\x0a" + _varint(len(piece)) + piece + b"\x10\x05"  # score (a float) as a varint
    data = _with_piece(spm_model, 7, b"\x0a" + _varint(len(new)) + new)
    proto = decode_model(data)
    assert proto.pieces[7].score == 0.0 and proto.pieces[7].unknown_fields == (b"\x10\x05",)
    _ids_like_sentencepiece(tmp_path, data)


def test_a_group_is_skipped_and_a_lone_end_group_is_an_error(tmp_path, spm_model):
    body = _piece_body(spm_model, 4)
    grouped = body + b"\x4b\x08\x01\x4c"  # field 9: start group, a varint inside, end group
    data = _with_piece(spm_model, 4, b"\x0a" + _varint(len(grouped)) + grouped)
    assert decode_model(data).pieces[4].unknown_fields == (b"\x4b\x08\x01\x4c",)
    _ids_like_sentencepiece(tmp_path, data)
    lone = body + b"\x4c"
    data = _with_piece(spm_model, 4, b"\x0a" + _varint(len(lone)) + lone)
    with pytest.raises(FileFormatError, match=r"end-group tag \(wire type 4\) without a group at byte \d+ in pieces\[4\]"):
        decode_model(data, "x.model")
    _sentencepiece_refuses(data)


def test_a_second_trainer_spec_is_merged_into_the_first(tmp_path, spm_model):
    data = spm_model + b"\x12\x02\x20\x07"  # trainer_spec { vocab_size: 7 }, after the real one
    proto = decode_model(data)
    assert proto.trainer_spec.vocab_size == 7
    assert proto.trainer_spec.model_type == 1 and proto.trainer_spec.unk_id == 0  # kept from the first
    spm = pytest.importorskip("sentencepiece")
    sp = spm.SentencePieceProcessor()
    sp.LoadFromSerializedProto(data)
    merged = decode_model(sp.serialized_model_proto())
    assert (merged.trainer_spec.vocab_size, merged.trainer_spec.model_type) == (7, 1)
    _ids_like_sentencepiece(tmp_path, data)


def test_the_real_model_still_reads_byte_for_byte(spm_model):
    assert encode_model(decode_model(spm_model)) == spm_model
    full = lzma.decompress((FIXTURES / "differential" / "hf_test_bpe.model.xz").read_bytes())
    assert encode_model(decode_model(full)) == full


# -- JSON as HF reads it -----------------------------------------------------------------


def _unigram_doc(score: str = "-2.5") -> str:
    vocab = '[["<unk>", 0.0], ["\\u2581a", -1.0], ["b", %s]]' % score
    return ('{"version": "1.0", "added_tokens": [], "normalizer": null, "pre_tokenizer": '
            '{"type": "Metaspace", "replacement": "\\u2581", "prepend_scheme": "always", "split": true},\n'
            '"post_processor": null, "decoder": null,\n"model": {"type": "Unigram", "unk_id": 0, "vocab": %s}}' % vocab)


@pytest.mark.parametrize("number", ["NaN", "-Infinity", "Infinity", "-1e999", "1E400"])
def test_tokenizer_json_with_a_number_json_has_not_is_refused_naming_the_line(tmp_path, number):
    path = tmp_path / "tokenizer.json"
    path.write_text(_unigram_doc(number), encoding="utf-8")
    with pytest.raises(FileFormatError) as info:
        tokenforge.load(path)
    assert f"{path}, line 3: not standard JSON: {number}" in str(info.value)
    tokenizers = pytest.importorskip("tokenizers")
    with pytest.raises(Exception):
        tokenizers.Tokenizer.from_file(str(path))


def test_tokenizer_json_with_finite_scores_still_loads_with_hf_ids(tmp_path):
    path = tmp_path / "tokenizer.json"
    path.write_text(_unigram_doc("-1e300"), encoding="utf-8")
    tok = tokenforge.load(path)
    tokenizers = pytest.importorskip("tokenizers")
    ref = tokenizers.Tokenizer.from_file(str(path))
    for text in ("a b ab", "ba"):
        assert tok.encode(text) == ref.encode(text).ids


@pytest.mark.parametrize("escape, refused", [("\\ud800", True), ("\\udfff", True), ("b\\ud83dx", True),
                                             ("\\ud83d\\ude00", False), ("\\\\ud800", False)])
def test_tokenizer_json_with_a_lone_surrogate_is_refused(tmp_path, escape, refused):
    path = tmp_path / "tokenizer.json"
    path.write_text(_unigram_doc().replace('["b", -2.5]', '["%s", -2.5]' % escape), encoding="utf-8")
    tokenizers = pytest.importorskip("tokenizers")
    if not refused:
        tokenforge.load(path)
        tokenizers.Tokenizer.from_file(str(path))
        return
    with pytest.raises(FileFormatError) as info:
        tokenforge.load(path)
    assert str(path) in str(info.value)
    assert "model.vocab[2][0] holds a lone UTF-16 surrogate" in str(info.value)
    with pytest.raises(Exception):
        tokenizers.Tokenizer.from_file(str(path))


def test_vocab_json_with_a_lone_surrogate_key_names_the_file(tmp_path, small_tokenizer):
    small_tokenizer.save(str(tmp_path), format="gpt2")
    text = (tmp_path / "vocab.json").read_text(encoding="utf-8")
    (tmp_path / "vocab.json").write_text(text.replace('{"', '{"\\udc80": 9999, "', 1), encoding="utf-8")
    with pytest.raises(FileFormatError) as info:
        tokenforge.load(tmp_path)
    assert f"{tmp_path / 'vocab.json'}: the document key '\\udc80' holds a lone UTF-16 surrogate" in str(info.value)


def _native(tmp_path: Path, tok: tokenforge.Tokenizer, edit) -> Path:
    from tokenforge.formats.native import part_hash

    path = tmp_path / "t.tokenforge.json"
    tok.save(str(path))
    doc = json.loads(path.read_text(encoding="utf-8"))
    edit(doc)
    for part in doc["sha256"]:
        try:
            doc["sha256"][part] = part_hash(doc[part])
        except UnicodeEncodeError:
            pass
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def test_tokenforge_file_with_a_lone_surrogate_names_the_part(tmp_path, small_tokenizer):
    def edit(doc):
        doc["added_tokens"][0]["content"] = "\ud800"

    path = _native(tmp_path, small_tokenizer, edit)
    with pytest.raises(FileFormatError) as info:
        tokenforge.load(path)
    assert f"{path}: field 'added_tokens' holds a lone UTF-16 surrogate ('\\ud800')" in str(info.value)


@pytest.mark.parametrize("value", [["text"], {"value": "text"}, "sometimes"])
def test_tokenforge_file_with_a_setting_a_stage_refuses_names_the_file(tmp_path, small_tokenizer, value):
    def edit(doc):
        doc["specials_in_text"] = value
        doc["sha256"]["specials_in_text"] = ""

    path = _native(tmp_path, small_tokenizer, edit)
    with pytest.raises(FileFormatError) as info:
        tokenforge.load(path)
    assert str(info.value).startswith(f"{path}: InvalidArgumentError: specials_in_text must be")


def test_tokenizer_json_with_a_setting_a_stage_refuses_names_the_file(tmp_path):
    path = tmp_path / "tokenizer.json"
    path.write_text(_unigram_doc().replace('"prepend_scheme": "always"', '"prepend_scheme": ["always"]'),
                    encoding="utf-8")
    with pytest.raises(FileFormatError) as info:
        tokenforge.load(path)
    assert str(info.value).startswith(f"{path}: pre_tokenizer 'Metaspace': field 'prepend_scheme' must be a string")


# -- GPT-2 files whose merges the ids do not imply -------------------------------------------


def _hf_bpe(directory: Path):
    tokenizers = pytest.importorskip("tokenizers")
    from tokenizers import Regex, decoders, models, pre_tokenizers

    from tokenforge.pretokenizers import PATTERNS

    ref = tokenizers.Tokenizer(models.BPE.from_file(str(directory / "vocab.json"), str(directory / "merges.txt")))
    ref.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(PATTERNS["gpt2"]), "isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    ref.decoder = decoders.ByteLevel()
    return ref


def _merge_lines(directory: Path) -> list[str]:
    return (directory / "merges.txt").read_text(encoding="utf-8").split("\n")


@pytest.mark.parametrize("edit", ["empty", "header only", "one deleted", "two swapped", "one repeated"])
def test_gpt2_files_whose_merges_ids_do_not_imply_give_hf_ids(tmp_path, small_tokenizer, varied_text, edit):
    small_tokenizer.save(str(tmp_path), format="gpt2")
    lines = _merge_lines(tmp_path)
    body = [ln for ln in lines[1:] if ln]
    if edit == "empty":
        lines = []
    elif edit == "header only":
        lines = lines[:1]
    elif edit == "one deleted":
        del body[len(body) // 2]
        lines = lines[:1] + body
    elif edit == "two swapped":
        k = next(k for k in range(len(body) - 1) if body[k].replace(" ", "") in body[k + 1].replace(" ", ""))
        body[k], body[k + 1] = body[k + 1], body[k]  # a merge before the one it needs
        lines = lines[:1] + body
    else:
        body.insert(5, body[1])
        lines = lines[:1] + body
    (tmp_path / "merges.txt").write_text("".join(ln + "\n" for ln in lines), encoding="utf-8")
    tok = tokenforge.load(tmp_path)
    assert isinstance(tok.model, PieceBPE)
    ref = _hf_bpe(tmp_path)
    for line in varied_text.splitlines() + TEXTS:
        assert tok.encode(line, disallowed_special=()) == ref.encode(line).ids, line
        assert tok.decode(tok.encode(line, disallowed_special=())) == line


def test_gpt2_files_as_written_still_merge_by_rank(tmp_path, small_tokenizer, varied_text):
    small_tokenizer.save(str(tmp_path), format="gpt2")
    tok = tokenforge.load(tmp_path)
    assert isinstance(tok.model, BPE)
    ref = _hf_bpe(tmp_path)
    for line in varied_text.splitlines():
        assert tok.encode(line, disallowed_special=()) == ref.encode(line).ids


def test_a_token_no_merge_makes_but_rank_merging_could_gives_hf_ids(tmp_path, small_tokenizer):
    small_tokenizer.save(str(tmp_path), format="gpt2")
    vocab = json.loads((tmp_path / "vocab.json").read_bytes())
    vocab["Ġquick"] = max(vocab.values()) + 1  # "Ġ" + "quick" could join by rank; no merge makes it
    vocab["quick"] = max(vocab.values()) + 1
    (tmp_path / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    tok = tokenforge.load(tmp_path)
    assert isinstance(tok.model, PieceBPE)
    ref = _hf_bpe(tmp_path)
    for text in (" quick", "the quick fox", "quick"):
        assert tok.encode(text, disallowed_special=()) == ref.encode(text).ids


# -- vocab.txt detection -----------------------------------------------------------------------


@pytest.mark.parametrize("first", ["foo 12", "GGUF", "{", "[PAD] 0", "IQ== x"])
def test_a_vocab_txt_is_a_bert_vocabulary_whatever_its_first_line(tmp_path, first):
    path = tmp_path / "vocab.txt"
    path.write_text("\n".join([first, "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hello", "world", "##s"]) + "\n",
                    encoding="utf-8")
    tok = tokenforge.load(path)
    tokenizers = pytest.importorskip("tokenizers")
    ref = tokenizers.BertWordPieceTokenizer(str(path), lowercase=True)
    for text in ("Hello worlds", "foo 12 {", "hello"):
        assert tok.encode(text, allowed_special="all") == ref.encode(text).ids


def test_a_rank_file_named_txt_is_still_a_rank_file(tmp_path, small_tokenizer):
    path = tmp_path / "ranks.txt"
    small_tokenizer.save(str(tmp_path / "r.tiktoken"), format="tiktoken")
    path.write_bytes((tmp_path / "r.tiktoken").read_bytes())
    tok = tokenforge.load(path, pattern=small_tokenizer.pattern)
    assert dict(tok.mergeable_ranks) == dict(small_tokenizer.mergeable_ranks)



@pytest.mark.parametrize("specials, fragment", [
    ({"<|endoftext|>": [100257]}, "'<|endoftext|>' has id [100257]; ids are integers"),
    ({"<|endoftext|>": "100257"}, "'<|endoftext|>' has id '100257'; ids are integers"),
    ({"<|endoftext|>": True}, "'<|endoftext|>' has id True; ids are integers"),
    ({"a": 1, "b": -1}, "'b' has id -1; ids are integers"),
    (["<|endoftext|>"], "field 'special_tokens' must be an object of token -> id, not list"),
])
def test_a_version_1_file_with_bad_special_tokens_names_the_field(tmp_path, specials, fragment):
    from tokenforge.formats.native import part_hash

    doc = json.loads((FIXTURES / "formats" / "golden_v1.json").read_text(encoding="utf-8"))
    doc["special_tokens"] = specials
    doc["sha256"]["special_tokens"] = part_hash(specials)
    path = tmp_path / "v1.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(FileFormatError) as info:
        tokenforge.load(path)
    assert str(info.value).startswith(f"{path}: ") and fragment in str(info.value)


def test_the_golden_version_1_file_still_loads():
    tok = tokenforge.load(FIXTURES / "formats" / "golden_v1.json")  # its ids: test_formats_native.py
    assert tok.name == "golden-v1" and tok.decode(tok.encode("hello world")) == "hello world"


# -- what sentencepiece refuses at load time (sentencepiece 0.2.3) ----------------------------


def _fixture_model(name: str):
    return decode_model(lzma.decompress((FIXTURES / "differential" / f"{name}.model.xz").read_bytes()))


def _charsmap_edit(kind: str):
    def edit(m):
        blob = bytearray(m.normalizer_spec.precompiled_charsmap)
        size = int.from_bytes(blob[:4], "little")
        if kind == "not NUL-terminated":
            blob[-1:] = b"x"
        elif kind == "root unit":
            blob[4:8] = struct.pack("<I", 0x80000000 | (0x00200000 << 10))
        elif kind == "unit past the trie":
            blob[4 + 4 * 500:8 + 4 * 500] = struct.pack("<I", 0xFFFFFFFF)
        elif kind == "leaf past the strings":
            blob = blob[:4 + size] + b"\0"  # every leaf now points past a one-byte string block
        elif kind == "size 0":
            blob[:4] = struct.pack("<I", 0)
        m.normalizer_spec.precompiled_charsmap = bytes(blob)
    return edit


def _set(i, **fields):
    def edit(m):
        for k, v in fields.items():
            setattr(m.pieces[i], k, v)
    return edit


@pytest.mark.parametrize("name, model, edit, expected", [
    ("NUL inside a piece", "spm_test_unigram", _set(10, piece="a\0b"), "holds a NUL character"),
    ("piece of 8000 bytes", "spm_test_unigram", _set(10, piece="a" * 8000), "8000 bytes long"),
    ("piece of 7999 bytes", "spm_test_unigram", _set(10, piece="a" * 7999), None),
    ("NUL piece, UNUSED, Unigram", "spm_test_unigram", _set(300, piece="\0", type=PieceType.UNUSED), None),
    ("BPE: <unk> also NORMAL", "hf_test_bpe", _set(10, piece="<unk>"), "'<unk>' is already defined (as piece 0)"),
    ("Unigram: NaN score", "spm_test_unigram", _set(10, score=float("nan")), "a Unigram model's scores are finite"),
    ("Unigram: -inf score", "spm_test_unigram", _set(10, score=float("-inf")), "a Unigram model's scores are finite"),
    ("BPE: -inf score", "hf_test_bpe", _set(10, score=float("-inf")), None),
    ("charsmap not NUL-terminated", "spm_test_unigram", _charsmap_edit("not NUL-terminated"), "do not end with a NUL byte"),
    ("charsmap root unit", "spm_test_unigram", _charsmap_edit("root unit"), "trie unit 0 (byte 4 of the blob)"),
    ("charsmap unit past the trie", "spm_test_unigram", _charsmap_edit("unit past the trie"), "trie unit 500 (byte 2004"),
    ("charsmap leaf past the strings", "spm_test_unigram", _charsmap_edit("leaf past the strings"), "points outside"),
    ("charsmap trie size 0", "spm_test_unigram", _charsmap_edit("size 0"), "the trie size 0 is not a multiple of 1024"),
])
def test_a_model_loads_exactly_when_sentencepiece_loads_it(tmp_path, name, model, edit, expected):
    m = _fixture_model(model)
    edit(m)
    data = encode_model(m)
    path = tmp_path / "m.model"
    path.write_bytes(data)
    if expected is None:
        _ids_like_sentencepiece(tmp_path, data)
        return
    with pytest.raises(FileFormatError) as info:
        tokenforge.load(path)
    assert str(path) in str(info.value) and expected in str(info.value)
    assert "sentencepiece refuses this model too" in str(info.value)
    _sentencepiece_refuses(data)


def test_a_nul_piece_sentencepiece_leaves_out_of_a_bpe_vocabulary_is_refused(tmp_path):
    m = _fixture_model("hf_test_bpe")
    m.pieces[300].piece = "\0"
    m.pieces[300].type = PieceType.UNUSED
    path = tmp_path / "m.model"
    path.write_bytes(encode_model(m))
    with pytest.raises(FileFormatError, match=r"m\.model: piece 300 is a NUL character that sentencepiece reads as UNUSED"):
        tokenforge.load(path)
    spm = pytest.importorskip("sentencepiece")
    sp = spm.SentencePieceProcessor()
    sp.LoadFromSerializedProto(encode_model(m))  # sentencepiece loads it, and never gives id 300
    assert 300 not in sp.encode("a\0b \0")


@pytest.mark.parametrize("key, value", [("extra", 1), ("", -1), ("config", {}), ("name", "x")])
def test_tokenizer_json_with_a_key_hf_does_not_read_is_refused(tmp_path, key, value):
    doc = json.loads(_unigram_doc())
    doc[key] = value
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(FileFormatError) as info:
        tokenforge.load(path)
    assert str(info.value).startswith(f"{path}: unknown top-level key {key!r}")
    tokenizers = pytest.importorskip("tokenizers")
    with pytest.raises(Exception):
        tokenizers.Tokenizer.from_file(str(path))
    del doc[key]
    del doc["version"], doc["added_tokens"]  # keys HF may go without
    path.write_text(json.dumps(doc), encoding="utf-8")
    assert tokenforge.load(path).encode("a b") == tokenizers.Tokenizer.from_file(str(path)).encode("a b").ids


@pytest.mark.parametrize("version", ["1.0 ", "0.1", "", None, 1.0, {"a": 1}])
def test_tokenizer_json_with_a_version_hf_does_not_know_is_refused(tmp_path, version):
    doc = json.loads(_unigram_doc())
    doc["version"] = version
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(FileFormatError) as info:
        tokenforge.load(path)
    assert str(info.value).startswith(f"{path}: field 'version' is {version!r}")
    tokenizers = pytest.importorskip("tokenizers")
    with pytest.raises(Exception):
        tokenizers.Tokenizer.from_file(str(path))


def _unigram_json(tmp_path: Path, vocab, byte_fallback=False) -> Path:
    doc = {"version": "1.0", "added_tokens": [], "normalizer": None, "pre_tokenizer": None,
           "post_processor": None, "decoder": None,
           "model": {"type": "Unigram", "unk_id": 0, "vocab": vocab, "byte_fallback": byte_fallback}}
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


_BYTES = [[f"<0x{b:02X}>", -20.0] for b in range(256)]


@pytest.mark.parametrize("vocab, byte_fallback, text, ids", [
    ([["<unk>", 0.0], ["a", -1.0]], False, "x<unk>y", [0]),
    ([["<unk>", 0.0], ["a", -1.0]], False, "a<unk>", [1, 0]),
    ([["<unk>", 0.0], ["a", -1.0]], False, "<unk><unk>a", [0, 1]),
    ([["<unk>", 0.0], ["a", -1.0]], False, "<unk>", [0]),
    ([["<unk>", 0.0], ["a", -1.0], ["xy", -30.0]], False, "xy<unk>", [2, 0]),
    ([["<unk>", 0.0], ["a", -1.0]] + _BYTES, True, "<unk>a", [0, 1]),
    ([["<unk>", 0.0], ["a", -1.0]] + _BYTES, True, "x<unk>", [2 + b for b in b"x<unk>"]),
])
def test_unigram_json_merges_literal_unknown_pieces_with_unknown_characters(tmp_path, vocab, byte_fallback, text, ids):
    path = _unigram_json(tmp_path, vocab, byte_fallback)
    tok = tokenforge.load(path)
    assert tok.encode(text) == ids
    assert tok.encode_batch([text, text]) == [ids, ids]
    assert tok.model.encode_piece(text) == ids
    assert [i for i, _, _ in tok.model.tokenize(text)] == ids
    tokenizers = pytest.importorskip("tokenizers")
    assert tokenizers.Tokenizer.from_file(str(path)).encode(text).ids == ids


_DEEP = json.loads("[" * 400 + "]" * 400)


@pytest.mark.parametrize("section, stage, field", [
    ("decoder", {"type": "Metaspace", "replacement": {"a": 1}}, "replacement"),
    ("decoder", {"type": "Metaspace", "replacement": "ab"}, "replacement"),
    ("decoder", {"type": "Metaspace", "prepend_scheme": "sometimes"}, "prepend_scheme"),
    ("decoder", {"type": "Metaspace", "split": "yes"}, "split"),
    ("decoder", {"type": "WordPiece", "prefix": {"value": "##"}}, "prefix"),
    ("decoder", {"type": "WordPiece", "cleanup": 1}, "cleanup"),
    ("decoder", {"type": "Strip", "content": " ", "start": "1", "stop": 0}, "start"),
    ("decoder", {"type": "Strip", "content": " ", "start": 1, "stop": -1}, "stop"),
    ("decoder", {"type": "BPEDecoder", "suffix": 3}, "suffix"),
    ("decoder", {"type": "CTC", "pad_token": None}, "pad_token"),
    ("decoder", {"type": "Metaspace", "replacement": _DEEP}, "replacement"),
    ("pre_tokenizer", {"type": "Metaspace", "replacement": ["_"]}, "replacement"),
    ("pre_tokenizer", {"type": "Digits", "individual_digits": "true"}, "individual_digits"),
    ("pre_tokenizer", {"type": "ByteLevel", "add_prefix_space": 0}, "add_prefix_space"),
    ("pre_tokenizer", {"type": "CharDelimiterSplit", "delimiter": "ab"}, "delimiter"),
    ("pre_tokenizer", {"type": "FixedLength", "length": 2.0}, "length"),
    ("pre_tokenizer", {"type": "Split", "pattern": {"String": " "}, "behavior": "Removed", "invert": "no"}, "invert"),
    ("post_processor", {"type": "ByteLevel", "trim_offsets": "false"}, "trim_offsets"),
])
def test_tokenizer_json_stage_setting_of_the_wrong_kind_names_file_stage_and_field(tmp_path, section, stage, field):
    doc = json.loads(_unigram_doc())
    doc[section] = stage
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(FileFormatError) as info:
        tokenforge.load(path)
    assert str(info.value).startswith(f"{path}: {section} {stage['type']!r}: field {field!r} must be")
    tokenizers = pytest.importorskip("tokenizers")
    with pytest.raises(Exception):
        tokenizers.Tokenizer.from_file(str(path))


@pytest.mark.parametrize("special_tokens, fragment", [
    # (HF also reads one token with two ids and one string, and then gives two ids with one
    # token string; tokenforge refuses it, as tokens and ids must pair up.)
    (0.1, "special_tokens must be an object or (token, id) pairs, got 0.1"),
    ({"<s>": {"id": "<s>", "ids": [1.5], "tokens": ["<s>"]}}, "ids must be an integer in 0..4294967295, got 1.5"),
    ({"<s>": {"id": "<s>", "ids": ["1"], "tokens": ["<s>"]}}, "ids must be an integer in 0..4294967295, got '1'"),
    ({"<s>": {"id": "<s>", "ids": [-1], "tokens": ["<s>"]}}, "ids must be an integer in 0..4294967295, got -1"),
    ({"<s>": {"id": "<s>", "ids": [1], "tokens": [1]}}, "'tokens' must be a list of strings"),
    ({"<s>": {"id": "<s>", "ids": [1, 2], "tokens": ["<s>"]}}, "ids and tokens must be of the same length (2 ids, 1 tokens)"),
])
def test_template_special_tokens_of_the_wrong_kind_name_the_file(tmp_path, special_tokens, fragment):
    doc = json.loads(_unigram_doc())
    doc["post_processor"] = {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                                                                     {"Sequence": {"id": "A", "type_id": 0}}],
                             "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}],
                             "special_tokens": special_tokens}
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(FileFormatError) as info:
        tokenforge.load(path)
    assert str(info.value).startswith(f"{path}: post_processor: ") and fragment in str(info.value)
    tokenizers = pytest.importorskip("tokenizers")
    if "tokens" not in fragment:
        with pytest.raises(Exception):
            tokenizers.Tokenizer.from_file(str(path))


def test_tokenforge_file_with_a_pattern_name_that_is_not_a_string_names_the_field(tmp_path, small_tokenizer):
    def edit(doc):
        doc["pre_tokenizer"]["name"] = ["cl100k"]
        doc["sha256"]["pre_tokenizer"] = ""

    tok = tokenforge.get_encoding("cl100k_base")
    path = _native(tmp_path, tok, edit)
    with pytest.raises(FileFormatError) as info:
        tokenforge.load(path)
    assert str(info.value).startswith(f"{path}: pre_tokenizer of type 'regex': field 'name' must be a string")


@pytest.mark.parametrize("section, value, fragment", [
    ("truncation", {"max_length": "5", "stride": 0, "strategy": "LongestFirst", "direction": "Right"},
     "truncation: field 'max_length' must be a non-negative integer, got '5'"),
    ("truncation", {"max_length": 5.0, "stride": 0, "strategy": "LongestFirst", "direction": "Right"},
     "truncation: field 'max_length' must be a non-negative integer, got 5.0"),
    ("padding", {"strategy": "BatchLongest", "direction": "Right", "pad_to_multiple_of": None, "pad_id": "0",
                 "pad_type_id": 0, "pad_token": "<pad>"}, "padding: field 'pad_id' must be a non-negative integer"),
    ("padding", {"strategy": "BatchLongest", "direction": "Right", "pad_to_multiple_of": None, "pad_id": 0,
                 "pad_type_id": 0, "pad_token": 5}, "padding: field 'pad_token' must be a string, got 5"),
])
def test_truncation_and_padding_of_the_wrong_kind_name_the_file(tmp_path, section, value, fragment):
    doc = json.loads(_unigram_doc())
    doc[section] = value
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(FileFormatError) as info:
        tokenforge.load(path)
    assert str(info.value).startswith(f"{path}: ") and fragment in str(info.value)
    tokenizers = pytest.importorskip("tokenizers")
    with pytest.raises(Exception):
        tokenizers.Tokenizer.from_file(str(path))


def test_a_broken_charsmap_rule_only_fails_texts_that_use_it(tmp_path):
    """A rule pointing into the middle of a character of the replacement pool fails where
    it is used, as HF's normalizer does; ASCII text without that character normalizes
    (the ASCII table is built whole and used to fail for every text)."""
    import base64
    import struct

    from tokenforge.sentencepiece.charsmap import Charsmap

    cm = Charsmap.named("nmt_nfkc")
    node = cm._step(cm._root(), 0x02)[0]  # U+0002's leaf: its value is a pool offset
    mid = next(i for i, b in enumerate(cm._pool) if 0x80 <= b < 0xC0)  # inside a character
    units = list(cm._units)
    units[node] = (units[node] & ~0x7FFFFFFF) | mid
    blob = struct.pack("<I", len(units) * 4) + struct.pack(f"<{len(units)}I", *units) + cm._pool
    doc = json.loads(_unigram_doc())
    doc["normalizer"] = {"type": "Precompiled", "precompiled_charsmap": base64.b64encode(blob).decode()}
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    tok = tokenforge.load(path)
    # (darts-clone shares leaf units: every control character that deleted shares U+0002's)
    broken = [c for c in map(chr, range(128)) if Charsmap(blob).prefixes(c.encode())[:1] == [(1, mid)]]
    assert "\x02" in broken and not {"a", "b", "c", " ", "\t"} & set(broken)
    assert tok.normalizer.normalize_str("a b\tc") == "a b c"
    assert tok.encode("a b\tc") == tok.encode("a b c")
    with pytest.raises(FileFormatError, match=f"replacement at offset {mid} is not UTF-8"):
        tok.encode("a\x02b")
    tokenizers = pytest.importorskip("tokenizers")
    hf = tokenizers.Tokenizer.from_file(str(path))
    assert hf.encode("a b\tc").ids == tok.encode("a b\tc")


def test_gpt2_files_with_a_sparse_id_load_in_memory_of_the_token_count(tmp_path, small_tokenizer):
    """An id of 2**31 - 1 in vocab.json (HF loads it) made the native tables, kept by id,
    allocate tens of gigabytes (MemoryError); such a vocabulary now runs without them."""
    import subprocess
    import sys

    small_tokenizer.save(str(tmp_path), format="gpt2")
    vocab = json.loads((tmp_path / "vocab.json").read_text(encoding="utf-8"))
    last = max(vocab, key=vocab.get)
    vocab[last] = 2**31 - 1
    (tmp_path / "vocab.json").write_text(json.dumps(vocab), encoding="utf-8")
    code = (
        "import resource, sys, tokenforge\n"
        "resource.setrlimit(resource.RLIMIT_DATA, (1 << 30, 1 << 30))\n"
        f"t = tokenforge.load({str(tmp_path)!r})\n"
        "ids = t.encode('hello world, the quick brown fox')\n"
        "assert t.decode(ids) == 'hello world, the quick brown fox'\n"
        "print(t.model.native_encoder() is None, ids)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    sparse, ids = out.stdout.split(" ", 1)
    assert sparse == "True"
    tokenizers = pytest.importorskip("tokenizers")
    hf = tokenizers.Tokenizer(tokenizers.models.BPE.from_file(str(tmp_path / "vocab.json"), str(tmp_path / "merges.txt")))
    hf.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    assert json.loads(ids) == hf.encode("hello world, the quick brown fox").ids

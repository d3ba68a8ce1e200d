"""The hand-written ``.model`` (protobuf) reader and writer: it reads what
sentencepiece reads, writes back the same bytes, and turns damaged files
into FileFormatError naming the file and the place."""

from __future__ import annotations

import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tokenforge.errors import FileFormatError, TokenizerFileNotFoundError
from tokenforge.sentencepiece.proto import (
    ModelProto,
    ModelType,
    NormalizerSpec,
    PieceType,
    SentencePiece,
    TrainerSpec,
    decode_model,
    encode_model,
    read_model,
    write_model,
)

MODELS = [
    "albert_spiece.model",
    "hf_test_bpe.model",
    "hf_test_unigram.model",
    "mistral_v1_tokenizer.model",
    "spm_test_ja_unigram.model",
    "spm_test_unigram.model",
]


def _small_proto() -> ModelProto:
    pieces = [
        SentencePiece("<unk>", 0.0, PieceType.UNKNOWN),
        SentencePiece("<s>", 0.0, PieceType.CONTROL),
        SentencePiece("</s>", 0.0, PieceType.CONTROL),
        SentencePiece("<0x41>", 0.0, PieceType.BYTE),
        SentencePiece("▁a", -1.5),
        SentencePiece("ü", -2.25),
        SentencePiece("[MASK]", 0.0, PieceType.USER_DEFINED),
    ]
    trainer = TrainerSpec(model_type=ModelType.BPE, vocab_size=7, byte_fallback=True, pad_id=-1, unk_surface=" ? ")
    normalizer = NormalizerSpec(name="identity", add_dummy_prefix=True, remove_extra_whitespaces=False)
    return ModelProto(pieces=pieces, trainer_spec=trainer, normalizer_spec=normalizer)


SMALL = encode_model(_small_proto())


def _path(shared_data, name):
    p = shared_data / "vocab" / "sentencepiece" / name
    if not p.is_file():
        pytest.skip(f"{p} not found")
    return p


# -- reading real files --------------------------------------------------------


@pytest.mark.parametrize("name", MODELS)
def test_pieces_scores_and_types_equal_what_sentencepiece_reports(shared_data, name):
    spm = pytest.importorskip("sentencepiece")
    path = _path(shared_data, name)
    proto = read_model(path)
    sp = spm.SentencePieceProcessor(model_file=str(path))
    assert len(proto.pieces) == sp.get_piece_size()
    for i, p in enumerate(proto.pieces):
        assert p.piece == sp.id_to_piece(i)
        assert p.score == sp.get_score(i)
        assert (p.type == PieceType.UNKNOWN) == sp.is_unknown(i)
        assert (p.type == PieceType.CONTROL) == sp.is_control(i)
        assert (p.type == PieceType.BYTE) == sp.is_byte(i)
        assert (p.type == PieceType.UNUSED) == sp.is_unused(i)
    ts = proto.trainer_spec
    assert ts.unk_id == sp.unk_id() and ts.bos_id == sp.bos_id()
    assert ts.eos_id == sp.eos_id() and ts.pad_id == sp.pad_id()


@pytest.mark.parametrize("name", MODELS)
def test_normalizer_flags_match_sentencepiece_behaviour(shared_data, name):
    spm = pytest.importorskip("sentencepiece")
    path = _path(shared_data, name)
    ns = read_model(path).normalizer_spec
    sp = spm.SentencePieceProcessor(model_file=str(path))
    assert sp.normalize("ab cd").startswith("▁") == ns.add_dummy_prefix
    assert ("▁▁" in sp.normalize("ab  cd")) == (not ns.remove_extra_whitespaces)
    assert (ns.precompiled_charsmap == b"") == (ns.name == "identity")


@pytest.mark.parametrize("name", MODELS)
def test_load_save_gives_identical_bytes(shared_data, name, tmp_path):
    path = _path(shared_data, name)
    data = path.read_bytes()
    proto = read_model(path)
    assert encode_model(proto) == data
    out = tmp_path / name
    write_model(proto, out)
    assert out.read_bytes() == data
    assert read_model(out) == proto


@pytest.mark.parametrize("name", MODELS)
def test_round_trip_matches_sentencepiece_serialization(shared_data, name):
    spm = pytest.importorskip("sentencepiece")
    path = _path(shared_data, name)
    sp = spm.SentencePieceProcessor(model_file=str(path))
    assert encode_model(read_model(path)) == sp.serialized_model_proto()


def test_trainer_and_normalizer_specs_of_the_known_models(shared_data):
    mistral = read_model(_path(shared_data, "mistral_v1_tokenizer.model"))
    assert mistral.trainer_spec.model_type == ModelType.BPE
    assert mistral.trainer_spec.byte_fallback is True
    assert mistral.trainer_spec.vocab_size == len(mistral.pieces) == 32000
    assert mistral.normalizer_spec.name == "identity"
    assert mistral.normalizer_spec.precompiled_charsmap == b""
    assert mistral.normalizer_spec.add_dummy_prefix is True
    assert mistral.normalizer_spec.remove_extra_whitespaces is False
    albert = read_model(_path(shared_data, "albert_spiece.model"))
    assert albert.trainer_spec.model_type == ModelType.UNIGRAM
    assert albert.trainer_spec.byte_fallback is False
    assert albert.normalizer_spec.name == "nmt_nfkc"
    assert len(albert.normalizer_spec.precompiled_charsmap) > 1000


def test_trainer_spec_agrees_with_protobuf_reference(shared_data):
    pytest.importorskip("google.protobuf")
    from sentencepiece import sentencepiece_model_pb2 as pb2

    path = _path(shared_data, "mistral_v1_tokenizer.model")
    ref = pb2.ModelProto()
    ref.ParseFromString(path.read_bytes())
    ours = read_model(path)
    for spec, ref_spec in ((ours.trainer_spec, ref.trainer_spec), (ours.normalizer_spec, ref.normalizer_spec)):
        for _number, name, _kind, repeated, _sub in spec._FIELDS:
            if repeated:
                assert list(getattr(ref_spec, name)) == getattr(spec, name), name
            else:
                assert getattr(ref_spec, name) == getattr(spec, name), name
                assert ref_spec.HasField(name) == spec.has(name), name


# -- writing ---------------------------------------------------------------------


def test_small_model_round_trips_with_defaults_omitted():
    proto = decode_model(SMALL)
    assert proto == _small_proto()
    assert encode_model(proto) == SMALL
    assert proto.pieces[4].score == -1.5 and proto.pieces[5].piece == "ü"
    assert proto.trainer_spec.pad_id == -1  # written as a 10-byte varint
    assert proto.trainer_spec.has("byte_fallback") and not proto.trainer_spec.has("split_digits")
    assert not proto.has("denormalizer_spec")


def test_changed_fields_are_written(tmp_path):
    proto = decode_model(SMALL)
    proto.trainer_spec.split_digits = True
    proto.normalizer_spec.add_dummy_prefix = False
    proto.pieces.append(SentencePiece("▁b", -3.0))
    write_model(proto, tmp_path / "m.model")
    again = read_model(tmp_path / "m.model")
    assert again.trainer_spec.split_digits is True
    assert again.normalizer_spec.add_dummy_prefix is False
    assert again.pieces[-1] == SentencePiece("▁b", -3.0)


def test_unknown_fields_are_kept_in_place_of_origin():
    # field 200 (an extension) on the model and field 7 on a piece
    ext = bytes([200 << 3 & 0x7F | 0x80, 200 >> 4]) + b"\x2a"
    piece = b"\x0a\x01x" + b"\x15" + struct.pack("<f", -1.0) + b"\x38\x05"
    data = b"\x0a" + bytes([len(piece)]) + piece + ext
    proto = decode_model(data)
    assert proto.pieces[0].piece == "x" and proto.pieces[0].unknown_fields == (b"\x38\x05",)
    assert proto.unknown_fields == (ext,)
    assert encode_model(proto) == data


def test_write_is_atomic_when_encoding_fails(tmp_path):
    target = tmp_path / "m.model"
    target.write_bytes(SMALL)
    proto = decode_model(SMALL)
    proto.pieces[0].piece = None  # not encodable
    with pytest.raises(AttributeError):
        write_model(proto, target)
    assert target.read_bytes() == SMALL
    assert [p.name for p in tmp_path.iterdir()] == ["m.model"]


# -- bad files ---------------------------------------------------------------------


def test_missing_file_raises_not_found(tmp_path):
    with pytest.raises(TokenizerFileNotFoundError):
        read_model(tmp_path / "nope.model")


@pytest.mark.parametrize(
    "data, expected",
    [
        (b"", "no pieces"),
        (b"hello world, this is text\n", "wire type"),
        (SMALL[:-3], "truncated"),
        (SMALL[:5], "truncated"),
        (b"\x0a\x80", "truncated varint at byte 1"),
        (b"\x0a\x06\x0a\x03abc", "truncated"),
        (b"\x0a\x02\x0a\x00", "pieces[0] is empty"),
        (b"\x0a\x04\x0a\x02\xff\xfe", "not valid UTF-8"),
        (b"\x0a\x03\x10\x01\x00", "pieces[0].score"),
    ],
)
def test_bad_bytes_raise_file_format_error_naming_file_and_place(tmp_path, data, expected):
    path = tmp_path / "bad.model"
    path.write_bytes(data)
    with pytest.raises(FileFormatError) as info:
        read_model(path)
    assert str(path) in str(info.value)
    assert expected in str(info.value)


def test_truncated_real_model_names_the_piece(shared_data, tmp_path):
    data = _path(shared_data, "mistral_v1_tokenizer.model").read_bytes()
    path = tmp_path / "cut.model"
    path.write_bytes(data[:1000])
    with pytest.raises(FileFormatError, match=r"cut\.model: truncated .* in pieces\[\d+\]"):
        read_model(path)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cut=st.integers(0, len(SMALL)), flips=st.lists(st.tuples(st.integers(0, len(SMALL) - 1), st.integers(0, 7)), max_size=4))
def test_fuzzed_models_raise_only_file_format_error(cut, flips):
    data = bytearray(SMALL)
    for pos, bit in flips:
        data[pos] ^= 1 << bit
    data = bytes(data[:cut])
    try:
        proto = decode_model(data)
    except FileFormatError:
        return
    # whatever parses re-encodes to bytes that parse and re-encode to the same bytes
    again = encode_model(proto)
    assert encode_model(decode_model(again)) == again


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=200))
def test_random_bytes_raise_only_file_format_error(data):
    try:
        proto = decode_model(data)
    except FileFormatError as exc:
        assert str(exc)  # a message, never an empty error
    else:  # what parses re-encodes to bytes that parse the same way
        assert decode_model(encode_model(proto)) == proto


def test_a_nan_score_in_a_bpe_model_is_refused_naming_the_file_and_piece(shared_data, tmp_path):
    import tokenforge
    from tokenforge.errors import FileFormatError
    from tokenforge.sentencepiece import proto

    m = proto.read_model(shared_data / "vocab" / "sentencepiece" / "mistral_v1_tokenizer.model")
    m.pieces[5000].score = float("nan")
    path = tmp_path / "nan.model"
    proto.write_model(m, path)
    with pytest.raises(FileFormatError, match=r"nan\.model.*piece 5000"):
        tokenforge.load(path)


@pytest.mark.parametrize("defect", ["trie-size", "byte-without-fallback", "bad-byte-piece", "two-unk", "no-unk",
                                    "fallback-without-bytes", "duplicate", "name-without-blob"])
def test_models_sentencepiece_refuses_are_refused_and_the_rest_agree(shared_data, tmp_path, defect):
    import tokenforge
    from tokenforge.errors import FileFormatError
    from tokenforge.sentencepiece import proto
    from tokenforge.sentencepiece.constants import PieceType

    spm = pytest.importorskip("sentencepiece")
    m = proto.read_model(shared_data / "vocab" / "sentencepiece" / "spm_test_unigram.model")
    if defect == "trie-size":
        blob = bytearray(m.normalizer_spec.precompiled_charsmap)
        blob[0] ^= 0x40
        m.normalizer_spec.precompiled_charsmap = bytes(blob)
    elif defect in ("byte-without-fallback", "bad-byte-piece"):
        m.pieces[10].type = PieceType.BYTE
        if defect == "bad-byte-piece":
            m.trainer_spec.byte_fallback = True
            m.pieces[10].piece = "<0xZZ>"
    elif defect == "two-unk":
        m.pieces[10].type = PieceType.UNKNOWN
    elif defect == "no-unk":
        m.pieces[0].type = PieceType.NORMAL
    elif defect == "fallback-without-bytes":
        m.trainer_spec.byte_fallback = True
    elif defect == "duplicate":
        m.pieces[11].piece = m.pieces[10].piece
    else:  # a rule name without its blob: sentencepiece does not normalize
        m.normalizer_spec.precompiled_charsmap = b""
        m.normalizer_spec.name = "nmt_nfkc"
    path = tmp_path / "m.model"
    proto.write_model(m, path)
    text = "Ｈｅｌｌｏ  world ①"
    try:
        want = spm.SentencePieceProcessor(model_file=str(path)).encode(text)
    except Exception:
        with pytest.raises(FileFormatError, match=r"m\.model: .*sentencepiece refuses"):
            tokenforge.load(path)
        return
    assert tokenforge.load(path).encode(text) == want

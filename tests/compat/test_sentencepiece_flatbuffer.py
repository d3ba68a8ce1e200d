"""``convert_to_flatbuffer`` of the sentencepiece drop-in writes the bytes sentencepiece 0.2.3 writes.

The ``.spm.fb`` buffer (sentencepiece's lite runtime model: FlatBuffers over
``sentencepiece_lite.fbs``, darts-clone tries, BPE direct mappings) is compared
byte for byte with the real library's on real models and on edited ones that reach
each branch: USER_DEFINED pieces (the prefix trie, frozen BPE symbols), BPE merges
out of rank order (the ``is_direct_mapping`` vector), missing specs, WORD/CHAR,
NUL pieces. Errors must be of the exception type sentencepiece raises. The reader
test runs without sentencepiece: the fields and tries read back give the model.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

import tokenforge.compat.sentencepiece as tf
from tokenforge.sentencepiece.constants import PieceType
from tokenforge.sentencepiece.darts import unit_label, unit_offset
from tokenforge.sentencepiece.flatbuffer import read_flatbuffer
from tokenforge.sentencepiece.proto import ModelType, decode_model, encode_model

SUITE = Path(__file__).resolve().parents[1] / "fixtures" / "sentencepiece_suite"
VENDORED = ["botchan_en_unigram_1000.model", "botchan_en_bpe_1000.model", "kyoto_ja_unigram_8000.model"]
SHARED = ["spm_test_unigram.model", "hf_test_bpe.model", "mistral_v1_tokenizer.model", "albert_spiece.model"]


def _real():
    return pytest.importorskip("sentencepiece")


def _outcome(fn, **kwargs):
    try:
        return fn(**kwargs)
    except Exception as e:  # noqa: BLE001 - the exception is what is compared
        return e


def _assert_same(**kwargs):
    spm = _real()
    ref, ours = _outcome(spm.convert_to_flatbuffer, **kwargs), _outcome(tf.convert_to_flatbuffer, **kwargs)
    if isinstance(ref, Exception):
        assert isinstance(ours, type(ref)), (ref, ours)
    else:
        assert isinstance(ours, bytes), ours
        assert ours == ref, _first_difference(ref, ours)


def _first_difference(ref: bytes, ours: bytes) -> str:
    a, b = read_flatbuffer(ref), read_flatbuffer(ours)
    return f"{len(ref)} vs {len(ours)} bytes; fields differing: {[k for k in a if a[k] != b[k]]}"


@pytest.mark.parametrize("skip", [False, True])
@pytest.mark.parametrize("name", VENDORED)
def test_vendored_models_give_sentencepieces_bytes(name, skip):
    _assert_same(model_file=str(SUITE / name), skip_char_bigrams=skip)


@pytest.mark.parametrize("skip", [False, True])
@pytest.mark.parametrize("name", SHARED)
def test_shared_models_give_sentencepieces_bytes(shared_data, name, skip):
    _assert_same(model_file=str(shared_data / "vocab" / "sentencepiece" / name), skip_char_bigrams=skip)


def _edited(name: str, edit) -> bytes:
    proto = decode_model((SUITE / name).read_bytes())
    edit(proto)
    return encode_model(proto)


def _user_defined(proto):
    for i in (10, 50, 120, 300):
        proto.pieces[i].type = int(PieceType.USER_DEFINED)


def _shuffled_scores(proto):
    scores = [p.score for p in proto.pieces]
    random.Random(1).shuffle(scores)
    for p, s in zip(proto.pieces, scores):
        p.score = s


def _tied_scores(proto):
    for p in proto.pieces:
        p.score = -1.0


def _no_normalizer(proto):
    proto._present.discard("normalizer_spec")


def _no_trainer_spec(proto):
    proto._present.discard("trainer_spec")


def _empty_strings(proto):
    ts = proto.trainer_spec
    ts.unk_surface, ts.bos_piece, ts.treat_whitespace_as_suffix = "", "", True
    proto.normalizer_spec.name, proto.normalizer_spec.add_dummy_prefix = "", False


def _pad_piece(proto):
    proto.pieces[3].piece, proto.pieces[3].type = "<pad>", int(PieceType.CONTROL)
    proto.trainer_spec.unk_id = 5


def _nul_piece_byte_fallback(proto):
    proto.trainer_spec.byte_fallback = True
    proto.pieces[10].piece = "\x00"


def _long_piece(proto):
    proto.pieces[20].piece = "a" * 200  # longer than the 128 bytes a direct mapping may have


EDITS = {
    "user_defined": _user_defined, "shuffled_scores": _shuffled_scores, "tied_scores": _tied_scores,
    "no_normalizer": _no_normalizer, "no_trainer_spec": _no_trainer_spec, "empty_strings": _empty_strings,
    "pad_piece": _pad_piece, "nul_piece_byte_fallback": _nul_piece_byte_fallback, "long_piece": _long_piece,
}


@pytest.mark.parametrize("options", [{}, {"skip_char_bigrams": True}, {"treat_null_byte_as_unused": True}])
@pytest.mark.parametrize("model", ["botchan_en_unigram_1000.model", "botchan_en_bpe_1000.model"])
@pytest.mark.parametrize("edit", sorted(EDITS))
def test_edited_models_give_sentencepieces_bytes_or_error(edit, model, options):
    _assert_same(serialized_model_proto=_edited(model, EDITS[edit]), **options)


@pytest.mark.parametrize("model_type", [ModelType.WORD, ModelType.CHAR])
def test_word_and_char_models_need_allow_unsupported_model_type(model_type):
    def edit(proto):
        proto.trainer_spec.model_type = int(model_type)

    data = _edited("botchan_en_unigram_1000.model", edit)
    with pytest.raises(ValueError, match=model_type.name):
        tf.convert_to_flatbuffer(serialized_model_proto=data)
    _assert_same(serialized_model_proto=data)
    _assert_same(serialized_model_proto=data, allow_unsupported_model_type=True)
    _assert_same(serialized_model_proto=data, allow_unsupported_model_type=True, skip_char_bigrams=True)


def _set_piece(i, value):
    def edit(proto):
        proto.pieces[i].piece = value
    return edit


def _set_score(i, value):
    def edit(proto):
        proto.pieces[i].score = value
    return edit


def _set_unk_id(value):
    def edit(proto):
        proto.trainer_spec.unk_id = value
    return edit


def _set_charsmap(value):
    def edit(proto):
        proto.normalizer_spec.precompiled_charsmap = value
    return edit


BAD = {
    "nul_piece": _set_piece(10, "\x00"), "duplicate_piece": _set_piece(10, "re"),
    "too_long_piece": _set_piece(10, "x" * 5000), "nan_score": _set_score(10, float("nan")),
    "huge_score": _set_score(10, 3e9), "unk_id_out_of_range": _set_unk_id(5000),
    "charsmap_too_short": _set_charsmap(b"\x08\x00"), "charsmap_without_pool": _set_charsmap(b"\x08\x00\x00\x00abcdefgh"),
}


@pytest.mark.parametrize("bad, model", [
    (bad, model) for bad in sorted(BAD) for model in ("botchan_en_unigram_1000.model", "botchan_en_bpe_1000.model")
    if model.endswith("bpe_1000.model") or "score" not in bad  # scores are checked on BPE models only
])
def test_refused_models_raise_sentencepieces_exception_type(bad, model):
    data = _edited(model, BAD[bad])
    with pytest.raises((ValueError, RuntimeError)):
        tf.convert_to_flatbuffer(serialized_model_proto=data)
    _assert_same(serialized_model_proto=data, treat_null_byte_as_unused=True)


def test_argument_errors_match_sentencepiece(tmp_path):
    model = str(SUITE / "botchan_en_unigram_1000.model")
    data = (SUITE / "botchan_en_unigram_1000.model").read_bytes()
    for kwargs in ({}, {"model_file": model, "serialized_model_proto": data}, {"model_file": ""},
                   {"model_file": model, "output_file": ""}, {"serialized_model_proto": "not bytes"},
                   {"model_proto": 12345}, {"serialized_model_proto": b"corrupted_proto"},
                   {"serialized_model_proto": b""}, {"model_file": str(tmp_path / "missing.model")},
                   {"model_file": str(SUITE / "botchan.txt")},
                   {"model_file": model, "output_file": str(tmp_path / "no" / "dir.spm.fb")}):
        _assert_same(**kwargs)


def test_output_file_and_every_input_form_give_the_same_bytes(tmp_path):
    path = SUITE / "botchan_en_bpe_1000.model"
    data = path.read_bytes()
    fb = tf.ConvertToFlatbuffer(model_file=path)
    assert tf.convert_to_flatbuffer(model_proto=data) == fb
    assert tf.convert_to_flatbuffer(serialized_model_proto=data) == fb
    assert tf.convert_to_flatbuffer(model_proto=decode_model(data)) == fb
    out = tmp_path / "m.spm.fb"
    assert tf.convert_to_flatbuffer(model_file=str(path), output_file=out) is None
    assert out.read_bytes() == fb


def _lookup(blob: bytes, key: bytes) -> int:
    units = [int.from_bytes(blob[i:i + 4], "little") for i in range(0, len(blob), 4)]
    pos = 0
    for byte in key:
        nxt = pos ^ unit_offset(units[pos]) ^ byte
        if nxt >= len(units) or unit_label(units[nxt]) != byte:
            return -1
        pos = nxt
    if not (units[pos] >> 8) & 1:
        return -1
    return units[pos ^ unit_offset(units[pos])] & 0x7FFFFFFF


@pytest.mark.parametrize("name", VENDORED)
def test_the_buffer_reads_back_as_the_model(name):
    proto = decode_model((SUITE / name).read_bytes())
    fb = read_flatbuffer(tf.convert_to_flatbuffer(model_file=str(SUITE / name)))
    pieces = [p.piece.encode() for p in proto.pieces]
    assert fb["pieces"] == pieces
    assert fb["types"] == [p.type for p in proto.pieces]
    bpe = proto.trainer_spec.model_type == ModelType.BPE
    assert fb["model_type"] == proto.trainer_spec.model_type
    if bpe:
        assert fb["int_scores"] == [int(p.score) for p in proto.pieces] and fb["scores"] is None
        assert fb["has_direct_mappings"]
    else:
        assert fb["scores"] == pytest.approx([p.score for p in proto.pieces]) and fb["int_scores"] is None
    ts = proto.trainer_spec
    assert (fb["unk_id"], fb["bos_id"], fb["eos_id"], fb["pad_id"]) == (ts.unk_id, ts.bos_id, ts.eos_id, ts.pad_id)
    assert fb["unk_surface"] == ts.unk_surface.encode()
    ns = fb["normalizer_spec"]
    assert ns["precompiled_charsmap"] == proto.normalizer_spec.precompiled_charsmap
    assert ns["name"] == proto.normalizer_spec.name.encode()
    assert [_lookup(fb["pieces_trie_blob"], p) for p in pieces] == list(range(len(pieces)))
    assert _lookup(fb["pieces_trie_blob"], b"\xff\xfe") == -1
    assert fb["prefix_matcher_trie_blob"] is None

"""SentencePiece ``.model`` files: a hand-written protobuf reader and writer.

SentencePiece (Kudo & Richardson, 2018) stores a whole tokenizer -- pieces,
scores, types, normalization rules and trainer settings -- in one protobuf
message, so a model file is self-contained.

A ``.model`` file is one serialized ``sentencepiece.ModelProto`` message
(``sentencepiece_model.proto``, proto2). This module decodes the protobuf
wire format itself, so tokenforge needs neither ``protobuf`` nor
``sentencepiece`` at run time.

The wire format is a sequence of records ``tag, value``: the tag is a varint
``field_number << 3 | wire_type``; wire type 0 is a varint, 1 eight bytes,
2 a length-delimited run of bytes (strings, bytes and sub-messages), 5 four
bytes (``float``). Every field this module knows becomes a dataclass
attribute; every other record (a field of a newer sentencepiece, an
extension) is kept as its raw bytes and written back after the known fields,
so ``write_model(read_model(p))`` reproduces the file byte for byte.

Decoding accepts what the protobuf parser inside ``sentencepiece`` accepts
and reads it the same way (protobuf's encoding guide,
https://protobuf.dev/programming-guides/encoding/, and its proto2 rules):

* a tag takes at most 5 bytes and is kept to 32 bits; a length takes at most
  5 bytes and is below 2**31; any other varint takes at most 10 bytes and is
  kept to 64 bits;
* a known field with another wire type than its own, a group (wire types 3
  and 4, skipped whole) and a piece type outside ``SentencePiece.Type`` (0, 7,
  100) are unknown fields: the field keeps its default, as if absent;
* a singular field given twice takes the last value, and a singular
  sub-message given twice is the merge of both (``MergeFrom``);
* field number 0, wire types 6 and 7, an end-group without its start, and
  anything truncated are errors.

Two differences are deliberate. A string field that is not UTF-8 is an error,
where ``sentencepiece`` keeps the bytes (such a piece never matches text, but
a Python ``str`` cannot hold it). A ``model_type`` outside the enum is kept as
read, and loading the model names it as unsupported, where ``sentencepiece``
would silently run the model as UNIGRAM. Known
fields are written in field-number order, as protobuf's C++ serializer does,
and only when they were present in the file or differ from their default
(proto2 presence).

Field numbers come from sentencepiece 0.2.x's ``sentencepiece_model.proto``:

=================  ==========================================================
``ModelProto``     pieces=1, trainer_spec=2, normalizer_spec=3,
                   self_test_data=4, denormalizer_spec=5
``SentencePiece``  piece=1, score=2 (float), type=3 (enum, default NORMAL)
``NormalizerSpec`` name=1, precompiled_charsmap=2, add_dummy_prefix=3,
                   remove_extra_whitespaces=4, escape_whitespaces=5,
                   normalization_rule_tsv=6
``TrainerSpec``    see :data:`TRAINER_SPEC_FIELDS`
=================  ==========================================================

A damaged file raises :class:`~tokenforge.errors.FileFormatError` naming the
file, the byte offset and the field being read, e.g. ``truncated varint at
byte 1234 in pieces[57].score``.

>>> m = ModelProto(pieces=[SentencePiece("<unk>", 0.0, PieceType.UNKNOWN), SentencePiece("▁a", -1.0)])
>>> read_model(encode_model(m)).pieces[1]
SentencePiece(piece='▁a', score=-1.0, type=1)
"""

from __future__ import annotations

import dataclasses
import os
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any, ClassVar

from .._io import atomic_write, read_bytes
from ..errors import ArgumentTypeError, FileFormatError, InvalidArgumentError
from .charsmap import NAMED_CHARSMAPS, Charsmap
from .constants import PieceType

__all__ = [
    "PieceType",
    "ModelType",
    "SentencePiece",
    "TrainerSpec",
    "NormalizerSpec",
    "SelfTestSample",
    "SelfTestData",
    "ModelProto",
    "read_model",
    "write_model",
    "encode_model",
    "decode_model",
    "build_model_proto",
]


class ModelType(IntEnum):
    """``TrainerSpec.ModelType``."""

    UNIGRAM = 1
    BPE = 2
    WORD = 3
    CHAR = 4


# -- wire format ------------------------------------------------------------

_VARINT, _I64, _LEN, _I32, _START_GROUP, _END_GROUP = 0, 1, 2, 5, 3, 4
_MASK64 = (1 << 64) - 1
#: protobuf refuses a length-delimited field of 2 GiB or more
_MAX_LENGTH = (1 << 31) - 1
#: protobuf's default recursion limit (sub-messages and groups)
_MAX_DEPTH = 100
_WIRE_NAMES = {0: "varint", 1: "64-bit", 2: "length-delimited", 3: "start-group", 4: "end-group", 5: "32-bit"}
# wire type of each value kind
_KIND_WIRE = {
    "string": _LEN,
    "bytes": _LEN,
    "message": _LEN,
    "float": _I32,
    "int32": _VARINT,
    "uint64": _VARINT,
    "bool": _VARINT,
    "enum": _VARINT,
}
_F32 = struct.Struct("<f")


class _Reader:
    """Decoding state: the buffer and the file name for error messages."""

    __slots__ = ("buf", "path")

    def __init__(self, buf: bytes, path: object) -> None:
        self.buf = buf
        self.path = path

    def fail(self, msg: str) -> FileFormatError:
        return FileFormatError(msg, path=self.path if self.path is not None else "<bytes>")

    def varint(self, pos: int, end: int, ctx: str) -> tuple[int, int]:
        buf = self.buf
        result = 0
        shift = 0
        start = pos
        while True:
            if pos >= end:
                raise self.fail(f"truncated varint at byte {start} in {ctx}")
            b = buf[pos]
            pos += 1
            result |= (b & 0x7F) << shift
            if b < 0x80:
                return result & _MASK64, pos  # bits past 64 are dropped, as protobuf does
            shift += 7
            if shift >= 70:
                raise self.fail(f"varint longer than 10 bytes at byte {start} in {ctx}")

    def tag(self, pos: int, end: int, ctx: str) -> tuple[int, int]:
        """A field tag: at most 5 bytes, kept to 32 bits (protobuf's tags are uint32)."""
        v, p = self.varint(pos, end, ctx)
        if p - pos > 5:
            raise self.fail(f"field tag longer than 5 bytes at byte {pos} in {ctx}")
        return v & 0xFFFFFFFF, p

    def length(self, pos: int, end: int, ctx: str, what: str = "field") -> tuple[int, int]:
        """The length of a length-delimited value and where its bytes start (checked to fit)."""
        n, p = self.varint(pos, end, ctx)
        if p - pos > 5 or n > _MAX_LENGTH:
            shown = "longer than 5 bytes" if p - pos > 5 else f"{n}, 2 GiB or more"
            raise self.fail(f"length at byte {pos} in {ctx} is {shown} (protobuf refuses it)")
        if p + n > end:
            raise self.fail(f"truncated {what}: {n} bytes announced at byte {pos} in {ctx}, only {end - p} left")
        return n, p


def _varint_bytes(value: int) -> bytes:
    if value < 0:
        value += 1 << 64  # int32/int64 negatives take ten bytes, as in protobuf
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _skip_value(r: _Reader, pos: int, end: int, wire: int, ctx: str, number: int = 0, depth: int = 0) -> int:
    """Position just after a value of ``wire`` type starting at ``pos`` (a group: after
    its end-group tag)."""
    if wire == _VARINT:
        return r.varint(pos, end, ctx)[1]
    if wire == _I64:
        if pos + 8 > end:
            raise r.fail(f"truncated 64-bit value at byte {pos} in {ctx}")
        return pos + 8
    if wire == _I32:
        if pos + 4 > end:
            raise r.fail(f"truncated 32-bit value at byte {pos} in {ctx}")
        return pos + 4
    if wire == _LEN:
        n, p = r.length(pos, end, ctx)
        return p + n
    if wire == _START_GROUP:
        if depth >= _MAX_DEPTH:
            raise r.fail(f"groups nested more than {_MAX_DEPTH} deep at byte {pos} in {ctx}")
        while True:
            if pos >= end:
                raise r.fail(f"group {number} in {ctx} has no end-group tag (truncated)")
            at = pos
            key, pos = r.tag(pos, end, f"{ctx} (group {number})")
            if key & 7 == _END_GROUP:
                if key >> 3 != number:
                    raise r.fail(f"end-group tag of field {key >> 3} at byte {at} closes group {number} in {ctx}")
                return pos
            if key >> 3 == 0:
                raise r.fail(f"invalid field number 0 at byte {at} in {ctx} (group {number})")
            pos = _skip_value(r, pos, end, key & 7, f"{ctx} (group {number})", key >> 3, depth + 1)
    if wire == _END_GROUP:
        raise r.fail(f"end-group tag (wire type 4) without a group at byte {pos} in {ctx}")
    raise r.fail(f"unsupported wire type {wire} ({_WIRE_NAMES.get(wire, 'invalid')}) at byte {pos} in {ctx}")


# -- messages -----------------------------------------------------------------


class _Message:
    """Base of the message dataclasses: schema-driven decode and encode.

    ``_FIELDS`` lists ``(number, attribute, kind, repeated, message_class)``.
    Each instance remembers which fields were present in the file (``_present``)
    and the raw bytes of fields this module does not know (``_unknown``).
    """

    _FIELDS: ClassVar[tuple] = ()

    @classmethod
    def _by_number(cls) -> dict:
        d = cls.__dict__.get("_BY_NUMBER_CACHE")
        if d is None:
            d = {f[0]: f for f in cls._FIELDS}
            cls._BY_NUMBER_CACHE = d
        return d

    @classmethod
    def _decode(cls, r: _Reader, pos: int, end: int, ctx: str, depth: int = 0):
        if depth > _MAX_DEPTH:
            raise r.fail(f"messages nested more than {_MAX_DEPTH} deep at byte {pos} in {ctx}")
        values: dict[str, Any] = {}
        present: set[str] = set()
        unknown: list[bytes] = []
        by_number = cls._by_number()
        buf = r.buf
        where = ctx  # the last field read, for errors: where the bytes stopped making sense
        shown = ctx or "the ModelProto"
        while pos < end:
            rec_start = pos
            after = f" (after {where})" if where != ctx else ""
            key, pos = r.tag(pos, end, f"{shown} (field tag){after}")
            number, wire = key >> 3, key & 7
            if number == 0:
                raise r.fail(f"invalid field number 0 at byte {rec_start} in {shown}{after}")
            spec = by_number.get(number)
            if spec is not None and wire != _KIND_WIRE[spec[2]]:
                # protobuf's parser reads a known field with a foreign wire type as an unknown field
                kind_name = _WIRE_NAMES[_KIND_WIRE[spec[2]]]
                where = (f"{ctx}.{spec[1]}" if ctx else spec[1]) + (
                    f", read as an unknown field: wire type {wire} ({_WIRE_NAMES.get(wire, 'invalid')}), "
                    f"not {kind_name}"
                )
                pos = _skip_value(r, pos, end, wire, f"{shown} (field {number}){after}", number, depth)
                unknown.append(bytes(buf[rec_start:pos]))
                continue
            if spec is None:
                pos = _skip_value(r, pos, end, wire, f"{shown} (unknown field {number}){after}", number, depth)
                unknown.append(bytes(buf[rec_start:pos]))
                where = f"unknown field {number}"
                continue
            _, name, kind, repeated, sub = spec
            fctx = f"{ctx}.{name}" if ctx else name
            if repeated:
                fctx = f"{fctx}[{len(values.get(name, ()))}]"
            where = fctx
            if wire == _VARINT:
                v, pos = r.varint(pos, end, fctx)
                if kind == "bool":
                    value: Any = v != 0
                elif kind in ("int32", "enum"):
                    v &= 0xFFFFFFFF
                    value = v - (1 << 32) if v >= 1 << 31 else v
                    if kind == "enum" and sub is not None and value not in sub:
                        # proto2 closed enum: a value outside it is kept as an unknown field
                        unknown.append(bytes(buf[rec_start:pos]))
                        continue
                else:  # uint64
                    value = v & 0xFFFFFFFFFFFFFFFF
            elif wire == _I32:
                if pos + 4 > end:
                    raise r.fail(f"truncated float at byte {pos} in {fctx}")
                value = _F32.unpack_from(buf, pos)[0]
                pos += 4
            else:
                n, p = r.length(pos, end, fctx, kind)
                pos = p + n
                if kind == "message":
                    value = sub._decode(r, p, pos, fctx, depth + 1)
                    if not repeated and name in values:
                        value = values[name]._merge_from(value)  # protobuf merges a repeated sub-message
                elif kind == "bytes":
                    value = bytes(buf[p:pos])
                else:
                    try:
                        value = bytes(buf[p:pos]).decode("utf-8")
                    except UnicodeDecodeError as exc:
                        raise r.fail(
                            f"{fctx} is not valid UTF-8 (byte {p + exc.start}: {exc.reason})"
                        ) from None
            if repeated:
                values.setdefault(name, []).append(value)
            else:
                values[name] = value
            present.add(name)
        obj = cls(**values)
        obj._present = present
        obj._unknown = unknown
        return obj

    def _merge_from(self, other: "_Message") -> "_Message":
        """``self`` with ``other`` merged in, as protobuf's ``MergeFrom``: fields present in
        ``other`` replace scalars, extend repeated fields and merge sub-messages."""
        for _number, name, kind, repeated, _sub in self._FIELDS:
            if name not in other._present:
                continue
            value = getattr(other, name)
            if repeated:
                setattr(self, name, list(getattr(self, name)) + list(value))
            elif kind == "message" and name in self._present:
                setattr(self, name, getattr(self, name)._merge_from(value))
            else:
                setattr(self, name, value)
        self._present = self._present | other._present
        self._unknown = self._unknown + other._unknown
        return self

    def _encode(self, out: bytearray) -> None:
        present = self._present
        for number, name, kind, repeated, _sub in self._FIELDS:
            value = getattr(self, name)
            if repeated:
                items = value
            else:
                if name not in present and value == _default_of(type(self), name):
                    continue
                items = (value,)
            for v in items:
                wire = _KIND_WIRE[kind]
                out += _varint_bytes(number << 3 | wire)
                if kind == "float":
                    out += _F32.pack(v)
                elif kind == "bool":
                    out.append(1 if v else 0)
                elif kind in ("int32", "enum", "uint64"):
                    out += _varint_bytes(int(v))
                elif kind == "message":
                    inner = bytearray()
                    v._encode(inner)
                    out += _varint_bytes(len(inner))
                    out += inner
                else:
                    data = v if kind == "bytes" else v.encode("utf-8")
                    out += _varint_bytes(len(data))
                    out += data
        for raw in self._unknown:
            out += raw

    @property
    def unknown_fields(self) -> tuple[bytes, ...]:
        """Raw records of fields this module does not know (kept for round trips)."""
        return tuple(self._unknown)

    def has(self, name: str) -> bool:
        """True when field ``name`` was present in the file (proto2 ``has_...``)."""
        return name in self._present


def _default_of(cls: type, name: str) -> Any:
    f = cls.__dataclass_fields__[name]
    if f.default is not dataclasses.MISSING:
        return f.default
    return f.default_factory()  # type: ignore[misc]


def _extra() -> Any:
    return field(default_factory=set, repr=False, compare=False)


def _unknown() -> Any:
    return field(default_factory=list, repr=False, compare=False)


@dataclass(eq=True)
class SentencePiece(_Message):
    """One vocabulary entry: ``piece`` (UTF-8, ``▁`` for space), its ``score``
    (a log probability for Unigram, minus the merge order for BPE) and its
    :class:`PieceType`."""

    piece: str = ""
    score: float = 0.0
    type: int = int(PieceType.NORMAL)
    _present: set = _extra()
    _unknown: list = _unknown()

    _FIELDS: ClassVar[tuple] = (
        (1, "piece", "string", False, None),
        (2, "score", "float", False, None),
        (3, "type", "enum", False, frozenset(int(t) for t in PieceType)),
    )


#: ``(number, attribute, kind, repeated, sub)`` of every ``TrainerSpec`` field (``sub``: the
#: values of a closed enum field, the message class of a sub-message field).
TRAINER_SPEC_FIELDS: tuple = (
    (1, "input", "string", True, None),
    (2, "model_prefix", "string", False, None),
    (3, "model_type", "enum", False, None),  # any value: the loader names one it does not know
    (4, "vocab_size", "int32", False, None),
    (5, "accept_language", "string", True, None),
    (6, "self_test_sample_size", "int32", False, None),
    (7, "input_format", "string", False, None),
    (10, "character_coverage", "float", False, None),
    (11, "input_sentence_size", "uint64", False, None),
    (12, "mining_sentence_size", "int32", False, None),
    (13, "training_sentence_size", "int32", False, None),
    (14, "seed_sentencepiece_size", "int32", False, None),
    (15, "shrinking_factor", "float", False, None),
    (16, "num_threads", "int32", False, None),
    (17, "num_sub_iterations", "int32", False, None),
    (18, "max_sentence_length", "int32", False, None),
    (19, "shuffle_input_sentence", "bool", False, None),
    (20, "max_sentencepiece_length", "int32", False, None),
    (21, "split_by_unicode_script", "bool", False, None),
    (22, "split_by_whitespace", "bool", False, None),
    (23, "split_by_number", "bool", False, None),
    (24, "treat_whitespace_as_suffix", "bool", False, None),
    (25, "split_digits", "bool", False, None),
    (26, "allow_whitespace_only_pieces", "bool", False, None),
    (30, "control_symbols", "string", True, None),
    (31, "user_defined_symbols", "string", True, None),
    (32, "vocabulary_output_piece_score", "bool", False, None),
    (33, "hard_vocab_limit", "bool", False, None),
    (34, "use_all_vocab", "bool", False, None),
    (35, "byte_fallback", "bool", False, None),
    (36, "required_chars", "string", False, None),
    (40, "unk_id", "int32", False, None),
    (41, "bos_id", "int32", False, None),
    (42, "eos_id", "int32", False, None),
    (43, "pad_id", "int32", False, None),
    (44, "unk_surface", "string", False, None),
    (45, "unk_piece", "string", False, None),
    (46, "bos_piece", "string", False, None),
    (47, "eos_piece", "string", False, None),
    (48, "pad_piece", "string", False, None),
    (49, "train_extremely_large_corpus", "bool", False, None),
    (50, "enable_differential_privacy", "bool", False, None),
    (51, "differential_privacy_noise_level", "float", False, None),
    (52, "differential_privacy_clipping_threshold", "uint64", False, None),
    (53, "pretokenization_delimiter", "string", False, None),
    (54, "seed_sentencepieces_file", "string", False, None),
    (55, "auto_character_coverage", "bool", False, None),
)


@dataclass(eq=True)
class TrainerSpec(_Message):
    """The settings the model was trained with (defaults are the proto's)."""

    input: list = field(default_factory=list)
    model_prefix: str = ""
    model_type: int = int(ModelType.UNIGRAM)
    vocab_size: int = 8000
    accept_language: list = field(default_factory=list)
    self_test_sample_size: int = 0
    input_format: str = ""
    character_coverage: float = 0.9994999766349792  # float32(0.9995)
    input_sentence_size: int = 0
    mining_sentence_size: int = 0
    training_sentence_size: int = 0
    seed_sentencepiece_size: int = 1000000
    shrinking_factor: float = 0.75
    num_threads: int = 16
    num_sub_iterations: int = 2
    max_sentence_length: int = 4192
    shuffle_input_sentence: bool = True
    max_sentencepiece_length: int = 16
    split_by_unicode_script: bool = True
    split_by_whitespace: bool = True
    split_by_number: bool = True
    treat_whitespace_as_suffix: bool = False
    split_digits: bool = False
    allow_whitespace_only_pieces: bool = False
    control_symbols: list = field(default_factory=list)
    user_defined_symbols: list = field(default_factory=list)
    vocabulary_output_piece_score: bool = True
    hard_vocab_limit: bool = True
    use_all_vocab: bool = False
    byte_fallback: bool = False
    required_chars: str = ""
    unk_id: int = 0
    bos_id: int = 1
    eos_id: int = 2
    pad_id: int = -1
    unk_surface: str = " \u2047 "
    unk_piece: str = "<unk>"
    bos_piece: str = "<s>"
    eos_piece: str = "</s>"
    pad_piece: str = "<pad>"
    train_extremely_large_corpus: bool = False
    enable_differential_privacy: bool = False
    differential_privacy_noise_level: float = 0.0
    differential_privacy_clipping_threshold: int = 0
    pretokenization_delimiter: str = ""
    seed_sentencepieces_file: str = ""
    auto_character_coverage: bool = False
    _present: set = _extra()
    _unknown: list = _unknown()

    _FIELDS: ClassVar[tuple] = TRAINER_SPEC_FIELDS


@dataclass(eq=True)
class NormalizerSpec(_Message):
    """How text is normalized before segmentation (and, as the
    ``denormalizer_spec``, after decoding)."""

    name: str = ""
    precompiled_charsmap: bytes = b""
    add_dummy_prefix: bool = True
    remove_extra_whitespaces: bool = True
    escape_whitespaces: bool = True
    normalization_rule_tsv: str = ""
    _present: set = _extra()
    _unknown: list = _unknown()

    _FIELDS: ClassVar[tuple] = (
        (1, "name", "string", False, None),
        (2, "precompiled_charsmap", "bytes", False, None),
        (3, "add_dummy_prefix", "bool", False, None),
        (4, "remove_extra_whitespaces", "bool", False, None),
        (5, "escape_whitespaces", "bool", False, None),
        (6, "normalization_rule_tsv", "string", False, None),
    )


@dataclass(eq=True)
class SelfTestSample(_Message):
    """``SelfTestData.Sample``: an input and its expected segmentation."""

    input: str = ""
    expected: str = ""
    _present: set = _extra()
    _unknown: list = _unknown()

    _FIELDS: ClassVar[tuple] = (
        (1, "input", "string", False, None),
        (2, "expected", "string", False, None),
    )


@dataclass(eq=True)
class SelfTestData(_Message):
    """Samples stored in the model to check it after loading."""

    samples: list = field(default_factory=list)
    _present: set = _extra()
    _unknown: list = _unknown()

    _FIELDS: ClassVar[tuple] = ((1, "samples", "message", True, SelfTestSample),)


@dataclass(eq=True)
class ModelProto(_Message):
    """A whole ``.model`` file.

    ``pieces[i]`` is the piece with id ``i``. The specs are always objects;
    :meth:`has` tells whether the file carried them.
    """

    pieces: list = field(default_factory=list)
    trainer_spec: TrainerSpec = field(default_factory=TrainerSpec)
    normalizer_spec: NormalizerSpec = field(default_factory=NormalizerSpec)
    self_test_data: SelfTestData = field(default_factory=SelfTestData)
    denormalizer_spec: NormalizerSpec = field(default_factory=NormalizerSpec)
    _present: set = _extra()
    _unknown: list = _unknown()

    _FIELDS: ClassVar[tuple] = (
        (1, "pieces", "message", True, SentencePiece),
        (2, "trainer_spec", "message", False, TrainerSpec),
        (3, "normalizer_spec", "message", False, NormalizerSpec),
        (4, "self_test_data", "message", False, SelfTestData),
        (5, "denormalizer_spec", "message", False, NormalizerSpec),
    )

    # convenience views used by the model builders
    @property
    def scores(self) -> list[float]:
        return [p.score for p in self.pieces]

    @property
    def types(self) -> list[int]:
        return [p.type for p in self.pieces]


# -- public functions -------------------------------------------------------------


def decode_model(data: bytes, path: object = None) -> ModelProto:
    """Parse the bytes of a ``.model`` file. ``path`` only names the source in errors."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise ArgumentTypeError(f"expected bytes, got {type(data).__name__}")
    data = bytes(data)
    r = _Reader(data, path)
    proto = ModelProto._decode(r, 0, len(data), "")
    if not proto.pieces:
        raise r.fail(
            f"no pieces found in {len(data)} bytes: not a sentencepiece model "
            f"(expected a ModelProto whose field 1 holds the pieces)"
        )
    for i, p in enumerate(proto.pieces):
        if not p.piece:
            raise r.fail(f"pieces[{i}] is empty; sentencepiece requires every piece to be non-empty")
    return proto


def read_model(source: str | os.PathLike | bytes) -> ModelProto:
    """Read a sentencepiece ``.model`` file (a path, or its bytes).

    Raises :class:`FileFormatError` naming the file, byte offset and field
    when the file is truncated or is not a ModelProto.
    """
    if isinstance(source, (bytes, bytearray, memoryview)):
        return decode_model(source)
    return decode_model(read_bytes(source), path=source)


def encode_model(proto: ModelProto) -> bytes:
    """Serialize ``proto`` (known fields in number order, then unknown fields)."""
    out = bytearray()
    proto._encode(out)
    return bytes(out)


def write_model(proto: ModelProto, path: str | os.PathLike) -> None:
    """Write ``proto`` to ``path`` atomically (temporary file, then rename)."""
    data = encode_model(proto)
    with atomic_write(path, "wb") as f:
        f.write(data)


def build_model_proto(
    pieces: Sequence[str],
    scores: Sequence[float],
    types: Sequence[int],
    *,
    model_type: int,
    normalization: str = "nmt_nfkc",
    add_dummy_prefix: bool = True,
    remove_extra_whitespaces: bool = True,
    trainer_settings: Mapping[str, Any] | None = None,
) -> ModelProto:
    """A ``ModelProto`` for a trained model, so it can be written as a ``.model``
    file that the ``sentencepiece`` library loads with the same ids.

    ``normalization`` names the rule set (``nmt_nfkc``, ``nmt_nfkc_cf`` or
    ``identity``); its precompiled charsmap is embedded. The unknown, BOS, EOS
    and PAD ids are read off the piece types (``<s>``, ``</s>`` and ``<pad>``
    when they are control pieces); ``trainer_settings`` fills the remaining
    ``TrainerSpec`` fields (``character_coverage``, ``byte_fallback``, ...).
    """
    index = {p: i for i, p in enumerate(pieces)}

    def control(piece: str) -> int:
        i = index.get(piece, -1)
        return i if i >= 0 and types[i] == PieceType.CONTROL else -1

    unk = next((i for i, t in enumerate(types) if t == PieceType.UNKNOWN), -1)
    spec = TrainerSpec(
        model_type=int(model_type),
        vocab_size=len(pieces),
        unk_id=unk,
        bos_id=control("<s>"),
        eos_id=control("</s>"),
        pad_id=control("<pad>"),
        unk_piece=pieces[unk] if unk >= 0 else "<unk>",
    )
    renames = {"max_piece_length": "max_sentencepiece_length"}
    for key, value in (trainer_settings or {}).items():
        key = renames.get(key, key)
        if not hasattr(spec, key):
            raise InvalidArgumentError(f"TrainerSpec has no field {key!r}")
        setattr(spec, key, value)
    charsmap = Charsmap.named(normalization).blob if normalization in NAMED_CHARSMAPS else b""
    ns = NormalizerSpec(
        name=normalization,
        precompiled_charsmap=charsmap,
        add_dummy_prefix=add_dummy_prefix,
        remove_extra_whitespaces=remove_extra_whitespaces,
        escape_whitespaces=True,
    )
    return ModelProto(
        pieces=[SentencePiece(piece=p, score=float(s), type=int(t)) for p, s, t in zip(pieces, scores, types)],
        trainer_spec=spec,
        normalizer_spec=ns,
    )

"""GGUF files (llama.cpp's model format): a hand-written header reader and writer.

A GGUF file starts with a little-endian header::

    magic "GGUF" | version u32 (2 or 3) | tensor_count u64 | metadata_kv_count u64

followed by ``metadata_kv_count`` key/value pairs. A key is a string (u64
byte length, then UTF-8); a value is a u32 type tag and the value:

====  ========  ==========================================================
tag   type      encoding
====  ========  ==========================================================
0     uint8     1 byte          1   int8     1 byte
2     uint16    2 bytes         3   int16    2 bytes
4     uint32    4 bytes         5   int32    4 bytes
6     float32   4 bytes         7   bool     1 byte, 0 or 1
8     string    u64 length + UTF-8 bytes
9     array     u32 element type + u64 count + the elements (arrays nest)
10    uint64    8 bytes         11  int64    8 bytes
12    float64   8 bytes
====  ========  ==========================================================

Tensor descriptions and data follow the metadata; a tokenizer needs none of
it, so :func:`read_gguf_header` stops after the last key (a multi-gigabyte
model file is memory-mapped and only its header pages are read). Vocab-only
files (``ggml-vocab-*.gguf``) have no tensors at all.

A damaged file raises :class:`~tokenforge.errors.FileFormatError` naming the
file, the byte offset and what was being read, e.g. ``truncated string at
byte 1234 in key tokenizer.ggml.tokens[5]``. Every length and count is checked
against the bytes that are left before anything is allocated, so a flipped
bit in an array count fails at once instead of allocating or looping.

What the metadata means as a tokenizer (``tokenizer.ggml.*``) is
:mod:`tokenforge.gguf`, which builds a :class:`~tokenforge.Tokenizer` from a
header read here; this module only reads and writes the file, and holds the
split rules per ``tokenizer.ggml.pre`` name (:data:`PRE_TOKENIZERS`).

>>> hdr = read_gguf_header(write_gguf_bytes({"general.name": "demo", "xs": [1, 2, 3]}))
>>> hdr.version, hdr["general.name"], hdr["xs"], hdr.types["xs"]
(3, 'demo', [1, 2, 3], (<ValueType.ARRAY: 9>, <ValueType.INT64: 11>))
"""

from __future__ import annotations

import mmap
import os
import struct
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from enum import IntEnum
from pathlib import Path
from typing import Any

from .._io import read_bytes
from ..errors import ArgumentTypeError, FileFormatError, TokenizerFileNotFoundError
from ..sentencepiece.constants import PieceType

__all__ = [
    "GGUF_MAGIC",
    "LLAMA_CPP_UNSUPPORTED_PRE_TOKENIZERS",
    "PRE_TOKENIZERS",
    "TOKENIZER_MODELS",
    "GGUFHeader",
    "PreTokenizerRule",
    "ValueType",
    "read_gguf_header",
    "write_gguf_bytes",
]

#: The first four bytes of every GGUF file.
GGUF_MAGIC = b"GGUF"
#: Header versions this reader understands (1 used 32-bit counts and is long gone).
SUPPORTED_VERSIONS = (2, 3)
#: Nested arrays deeper than this are treated as damage.
MAX_ARRAY_DEPTH = 16


class ValueType(IntEnum):
    """``gguf_type``: the tag before every metadata value."""

    UINT8 = 0
    INT8 = 1
    UINT16 = 2
    INT16 = 3
    UINT32 = 4
    INT32 = 5
    FLOAT32 = 6
    BOOL = 7
    STRING = 8
    ARRAY = 9
    UINT64 = 10
    INT64 = 11
    FLOAT64 = 12


# struct code of each fixed-size type
_CODES = {
    ValueType.UINT8: "B", ValueType.INT8: "b", ValueType.UINT16: "H", ValueType.INT16: "h",
    ValueType.UINT32: "I", ValueType.INT32: "i", ValueType.FLOAT32: "f", ValueType.BOOL: "B",
    ValueType.UINT64: "Q", ValueType.INT64: "q", ValueType.FLOAT64: "d",
}
_SIZES = {t: struct.calcsize("<" + c) for t, c in _CODES.items()}
# the fewest bytes one element of each type can take (string: its length; array: type + count)
_MIN_SIZE = {**_SIZES, ValueType.STRING: 8, ValueType.ARRAY: 12}
_U32 = struct.Struct("<I")
_U64 = struct.Struct("<Q")
_NAMES = {t: t.name.lower() for t in ValueType}


# -- reading ------------------------------------------------------------------


@dataclass(frozen=True)
class GGUFHeader:
    """The header and metadata of a GGUF file.

    ``metadata`` maps each key to its value (arrays as lists, strings as
    ``str``, bools as ``bool``, numbers as ``int``/``float``); ``types`` maps
    each key to its :class:`ValueType`, and for arrays to
    ``(ValueType.ARRAY, element_type)``. ``metadata_end`` is the byte offset
    just after the last key/value pair.
    """

    version: int
    tensor_count: int
    metadata: Mapping[str, Any]
    types: Mapping[str, Any]
    metadata_end: int
    path: str | None = None
    _order: tuple[str, ...] = field(default=(), repr=False)

    def __getitem__(self, key: str) -> Any:
        return self.metadata[key]

    def __contains__(self, key: object) -> bool:
        return key in self.metadata

    def __iter__(self) -> Iterator[str]:
        return iter(self._order or tuple(self.metadata))

    def __len__(self) -> int:
        return len(self.metadata)

    def get(self, key: str, default: Any = None) -> Any:
        return self.metadata.get(key, default)


class _Reader:
    """Decoding state: the buffer, the position, and the file name for errors."""

    __slots__ = ("buf", "end", "path", "pos")

    def __init__(self, buf: Any, path: object) -> None:
        self.buf = buf
        self.pos = 0
        self.end = len(buf)
        self.path = path

    def fail(self, msg: str) -> FileFormatError:
        return FileFormatError(msg, path=self.path if self.path is not None else "<bytes>")

    def need(self, n: int, what: str, ctx: str) -> None:
        if self.end - self.pos < n:
            raise self.fail(
                f"truncated {what} at byte {self.pos} in {ctx}: needs {n} bytes, {self.end - self.pos} left"
            )

    def u32(self, what: str, ctx: str) -> int:
        self.need(4, what, ctx)
        v = _U32.unpack_from(self.buf, self.pos)[0]
        self.pos += 4
        return v

    def u64(self, what: str, ctx: str) -> int:
        self.need(8, what, ctx)
        v = _U64.unpack_from(self.buf, self.pos)[0]
        self.pos += 8
        return v

    def string(self, ctx: str) -> str:
        start = self.pos
        n = self.u64("string length", ctx)
        if n > self.end - self.pos:
            raise self.fail(
                f"truncated string at byte {start} in {ctx}: length {n} but only {self.end - self.pos} bytes left"
            )
        raw = self.buf[self.pos : self.pos + n]
        try:
            s = bytes(raw).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise self.fail(
                f"string at byte {start} in {ctx} is not valid UTF-8 (byte {self.pos + exc.start}: {exc.reason})"
            ) from None
        self.pos += n
        return s

    def value_type(self, ctx: str) -> ValueType:
        at = self.pos
        t = self.u32("value type", ctx)
        try:
            return ValueType(t)
        except ValueError:
            raise self.fail(f"unknown value type {t} at byte {at} in {ctx} (known: 0..12)") from None

    def scalar(self, t: ValueType, ctx: str) -> Any:
        size = _SIZES[t]
        self.need(size, _NAMES[t], ctx)
        v = struct.unpack_from("<" + _CODES[t], self.buf, self.pos)[0]
        if t == ValueType.BOOL:
            if v > 1:
                raise self.fail(f"bool at byte {self.pos} in {ctx} is {v}, expected 0 or 1")
            v = bool(v)
        self.pos += size
        return v

    def value(self, t: ValueType, ctx: str, depth: int = 0) -> Any:
        if t == ValueType.STRING:
            return self.string(ctx)
        if t == ValueType.ARRAY:
            return self.array(ctx, depth + 1)[1]
        return self.scalar(t, ctx)

    def array(self, ctx: str, depth: int) -> tuple[ValueType, list]:
        start = self.pos
        if depth > MAX_ARRAY_DEPTH:
            raise self.fail(f"arrays nested more than {MAX_ARRAY_DEPTH} deep at byte {start} in {ctx}")
        et = self.value_type(f"{ctx} (array element type)")
        n = self.u64("array length", ctx)
        left = self.end - self.pos
        if n * _MIN_SIZE[et] > left:
            raise self.fail(
                f"truncated array at byte {start} in {ctx}: {n} {_NAMES[et]} elements need at least "
                f"{n * _MIN_SIZE[et]} bytes, only {left} left"
            )
        if et in _CODES:
            size = _SIZES[et] * n
            values = list(struct.unpack_from(f"<{n}{_CODES[et]}", self.buf, self.pos))
            if et == ValueType.BOOL:
                bad = next((k for k, v in enumerate(values) if v > 1), None)
                if bad is not None:
                    raise self.fail(
                        f"bool at byte {self.pos + bad} in {ctx}[{bad}] is {values[bad]}, expected 0 or 1"
                    )
                values = [bool(v) for v in values]
            self.pos += size
            return et, values
        if et == ValueType.STRING:
            return et, [self.string(f"{ctx}[{k}]") for k in range(n)]
        return et, [self.array(f"{ctx}[{k}]", depth + 1)[1] for k in range(n)]


def _decode_header(buf: Any, path: object) -> GGUFHeader:
    r = _Reader(buf, path)
    if r.end < 4 or bytes(buf[:4]) != GGUF_MAGIC:
        head = bytes(buf[:4])
        raise r.fail(f"not a GGUF file: expected magic b'GGUF' at byte 0, found {head!r}")
    r.pos = 4
    version = r.u32("version", "header")
    if version not in SUPPORTED_VERSIONS:
        hint = ""
        if version & 0xFFFF == 0 and (version >> 24) in SUPPORTED_VERSIONS:
            hint = " (a big-endian GGUF file; only little-endian files are supported)"
        elif version == 1:
            hint = " (GGUF v1, with 32-bit counts, is obsolete)"
        raise r.fail(f"unsupported GGUF version {version} at byte 4, expected 2 or 3{hint}")
    tensor_count = r.u64("tensor count", "header")
    kv_count = r.u64("metadata count", "header")
    # each pair takes at least 8 (key length) + 4 (type) + 1 bytes
    if kv_count * 13 > r.end - r.pos:
        raise r.fail(
            f"truncated metadata at byte 16 in header: {kv_count} key/value pairs announced, "
            f"only {r.end - r.pos} bytes left"
        )
    metadata: dict[str, Any] = {}
    types: dict[str, Any] = {}
    order: list[str] = []
    for k in range(kv_count):
        at = r.pos
        key = r.string(f"metadata key #{k}")
        if key in metadata:
            raise r.fail(f"duplicate metadata key {key!r} at byte {at}")
        ctx = f"key {key}"
        t = r.value_type(ctx)
        if t == ValueType.ARRAY:
            et, value = r.array(ctx, 1)
            types[key] = (ValueType.ARRAY, et)
        else:
            value = r.value(t, ctx)
            types[key] = t
        metadata[key] = value
        order.append(key)
    return GGUFHeader(
        version=version, tensor_count=tensor_count, metadata=metadata, types=types, metadata_end=r.pos,
        path=None if path is None else os.fspath(path), _order=tuple(order),
    )


def read_gguf_header(source: str | os.PathLike | bytes | bytearray | memoryview) -> GGUFHeader:
    """Read the header and all metadata of a GGUF file (a path, or its bytes).

    Raises :class:`FileFormatError` naming the file, byte offset and key when
    the file is not GGUF, is truncated or holds a malformed value.
    """
    if isinstance(source, (bytes, bytearray, memoryview)):
        return _decode_header(bytes(source), None)
    path = Path(source)
    if not path.exists():
        raise TokenizerFileNotFoundError(f"{path}: no such file")
    if path.is_dir():
        raise TokenizerFileNotFoundError(f"{path}: is a directory, expected a file")
    try:
        with open(path, "rb") as f:
            try:
                mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
            except (ValueError, OSError):  # an empty file, or a file system without mmap
                mm = None
            if mm is not None:
                with mm:
                    return _decode_header(mm, path)
    except OSError as exc:
        raise TokenizerFileNotFoundError(f"{path}: cannot read ({exc.strerror})") from None
    return _decode_header(read_bytes(path), path)


# -- writing (small files, for tests and for exporting a vocabulary) ---------------


def _guess_type(value: Any) -> ValueType:
    if isinstance(value, bool):
        return ValueType.BOOL
    if isinstance(value, int):
        return ValueType.INT64
    if isinstance(value, float):
        return ValueType.FLOAT64
    if isinstance(value, str):
        return ValueType.STRING
    if isinstance(value, (list, tuple)):
        return ValueType.ARRAY
    raise ArgumentTypeError(f"cannot store {type(value).__name__} in GGUF metadata")


def _encode_value(out: bytearray, t: ValueType, value: Any, elem: Any) -> None:
    if t == ValueType.STRING:
        raw = value.encode("utf-8")
        out += _U64.pack(len(raw)) + raw
    elif t == ValueType.ARRAY:
        items = list(value)
        if isinstance(elem, tuple):  # (ARRAY, inner element type) for nested arrays
            et, inner = elem[0], elem[1] if len(elem) > 1 else None
        else:
            et, inner = elem, None
        if et is None:
            et = _guess_type(items[0]) if items else ValueType.INT64
        et = ValueType(et)
        out += _U32.pack(et) + _U64.pack(len(items))
        if et in _CODES:
            out += struct.pack(f"<{len(items)}{_CODES[et]}", *items)
        else:
            for item in items:
                _encode_value(out, et, item, inner)
    else:
        out += struct.pack("<" + _CODES[t], value)


def write_gguf_bytes(
    metadata: Mapping[str, Any],
    types: Mapping[str, Any] | None = None,
    *,
    version: int = 3,
    tensor_count: int = 0,
) -> bytes:
    """A GGUF file holding ``metadata`` and no tensors (a vocab-only file).

    Each value's type comes from ``types`` (a :class:`ValueType`, or
    ``(ValueType.ARRAY, element_type)``), else from its Python type: bool,
    int → INT64, float → FLOAT64, str, list → ARRAY.
    """
    types = dict(types or {})
    out = bytearray(GGUF_MAGIC)
    out += _U32.pack(version) + _U64.pack(tensor_count) + _U64.pack(len(metadata))
    for key, value in metadata.items():
        spec = types.get(key)
        if isinstance(spec, tuple):
            t, elem = ValueType(spec[0]), (spec[1] if len(spec) == 2 else spec[1:])
        else:
            t, elem = (ValueType(spec) if spec is not None else _guess_type(value)), None
        raw = key.encode("utf-8")
        out += _U64.pack(len(raw)) + raw + _U32.pack(t)
        _encode_value(out, t, value, elem)
    return bytes(out)


# -- pre-tokenizer names ------------------------------------------------------------

# llama.cpp's GPT-2 regex: the original without its final "|\s+". The whitespace that
# alternative would take is a single character before a non-space, which llama.cpp
# keeps as a gap piece: the pieces are the same, so the named "gpt2" pattern is used.
_GPT2_SPLIT = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)"""
_LLAMA3 = "llama3"
_QWEN = "qwen"
_O200K = "o200k"
_TEKKEN = (
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"""
    r"""|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*"""
    r"""|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
)
_QWEN35 = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*"""
    r"""|\s*[\r\n]+|\s+(?!\S)|\s+"""
)
_JAIS2 = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+"""
    r"""|\s{512}(?!\S)|\s{256}(?!\S)|\s{128}(?!\S)|\s{64}(?!\S)|\s{32}(?!\S)|\s{16}(?!\S)|\s{8}(?!\S)"""
    r"""|\s{4}(?!\S)|\s{1,2}(?!\S)|\s{1}"""
)
_SEED_CODER = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1}| ?[^\s\p{L}\p{N}\r\n]+|\s*[\r\n]+"""
    r"""|\s+(?!\S)|\s+"""
)
_BAILINGMOE = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]++[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+"""
)
_EXAONE_MOE = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?(?:\p{L}\p{M}*(?: \p{L}\p{M}*)*)+|\p{N}"""
    r"""| ?[^\s\p{L}\p{N}]+[\r\n/]?|\s*[\r\n]|\s+(?!\S)|\s+"""
)
_MINICPM5 = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}+| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+"""
    r"""|\s+(?!\S)|\s+"""
)
_PORO = r""" ?[^(\s|.,!?…。，、।۔،)]+"""
_DEEPSEEK_LETTERS = (
    """\\s?[A-Za-zµÀ-ÖØ-öø-ƺƼ-ƿǄ-ʓʕ-ʯͰ-ͳͶͷͻ-ͽͿΆΈ-ΊΌΎ-ΡΣ-ϵϷ-ҁҊ-ԯԱ-ՖႠ-ჅᎠ-Ᏽᏸ-ᏽᲐ-ᲺᲽ-Ჿᴀ-ᴫᵫ-ᵷᵹ-ᶚḀ-ἕἘ-Ἕἠ-ὅὈ-Ὅὐ-ὗὙὛὝὟ-\u1f7dᾀ-ᾴᾶ-ᾼ\u1fbeῂ-ῄῆ-ῌῐ-\u1fd3ῖ-\u1fdbῠ-Ῥῲ-ῴῶ-ῼℂℇℊ-ℓℕℙ-ℝℤ\u2126ℨ\u212a-ℭℯ-ℴℹℼ-ℿⅅ-ⅉⅎↃↄⰀ-ⱻⱾ-ⳤⳫ-ⳮⳲⳳꙀ-ꙭꚀ-ꚛꜢ-ꝯꝱ-ꞇꞋ-ꞎꭰ-ꮿﬀ-ﬆﬓ-ﬗＡ-Ｚａ-ｚ𐐀-𐑏𐒰-𐓓𐓘-𐓻𐲀-𐲲𐳀-𐳲𑢠-𑣟𞤀-𞥃]+"""
)
_CJK_HANGUL = r"""[一-龥ࠀ-一가-퟿]+"""
_DEEPSEEK3_MAIN = (
    r"""[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+"""
    r"""| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
)


@dataclass(frozen=True)
class PreTokenizerRule:
    """How one ``tokenizer.ggml.pre`` name splits text.

    ``regexes`` are applied in turn, each to every piece the previous ones
    left (every match and every gap is a piece); a single entry may be a
    named pattern of :data:`tokenforge.pretokenizers.PATTERNS`. ``hf`` names a
    pre-tokenizer built from HF components instead (``"falcon"``).
    ``ignore_merges``: a piece that is a token is that token (llama.cpp and
    HF set it for the Llama 3 family). ``add_bos``: the model's default for
    adding BOS when the file has no ``tokenizer.ggml.add_bos_token``.
    """

    regexes: tuple[str, ...] = ()
    ignore_merges: bool = False
    add_bos: bool = False
    hf: str | None = None


def _rule(*regexes: str, **kw: Any) -> PreTokenizerRule:
    return PreTokenizerRule(tuple(regexes), **kw)


_RULE_GPT2 = _rule("gpt2")
_RULE_LLAMA3 = _rule(_LLAMA3, ignore_merges=True, add_bos=True)
_RULE_STARCODER = _rule(r"\p{N}", _GPT2_SPLIT)
_RULE_QWEN2 = _rule(_QWEN)
_RULE_GPT4O = _rule(_O200K)
_RULE_DEEPSEEK3 = _rule(r"\p{N}{1,3}", r"[一-龥぀-ゟ゠-ヿ]+", _DEEPSEEK3_MAIN)

#: ``tokenizer.ggml.pre`` name → split rules (llama.cpp's names and regex lists).
PRE_TOKENIZERS: dict[str, PreTokenizerRule] = {
    "default": _rule(r"[\p{P}\$\+<=>\^~\|]+", _GPT2_SPLIT, r"\p{N}+", r"[0-9][0-9][0-9]"),
    **dict.fromkeys(
        ["llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2", "jina-v5-nano"],
        _RULE_LLAMA3,
    ),
    "dbrx": _rule(_LLAMA3),
    "smaug-bpe": _rule(_LLAMA3),
    "chatglm-bpe": _rule(_LLAMA3),
    "glm4": _rule(_LLAMA3),
    "deepseek-llm": _rule(r"[\r\n]", _DEEPSEEK_LETTERS, r"\s?[!-/:-~！-／：-～‘-‟　-。]+", r"\s+$", _CJK_HANGUL, r"\p{N}+"),
    "deepseek-coder": _rule(r"[\r\n]", r"\s?\p{L}+", r"\s?\p{P}+", _CJK_HANGUL, r"\p{N}"),
    **dict.fromkeys(["deepseek-v3", "hunyuan-dense", "joyai-llm"], _RULE_DEEPSEEK3),
    "falcon": PreTokenizerRule(hf="falcon"),
    **dict.fromkeys(
        ["starcoder", "refact", "command-r", "smollm", "codeshell", "exaone", "minerva-7b", "mellum2"], _RULE_STARCODER
    ),
    **dict.fromkeys(
        [
            "gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v1-en", "jina-v2-es", "jina-v2-de",
            "jina-v2-code", "roberta-bpe", "a.x-4.0", "mellum", "modern-bert", "exaone4", "mpt", "olmo", "jais",
            "trillion", "granite-docling",
        ],
        _RULE_GPT2,
    ),
    **dict.fromkeys(
        ["qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2", "stablelm2", "hunyuan", "solar-open", "megrez", "grok-2"],
        _RULE_QWEN2,
    ),
    "qwen35": _rule(_QWEN35),
    **dict.fromkeys(["poro-chat", "bloom", "gpt3-finnish"], _rule(_PORO)),
    "viking": _rule(_PORO, r"\p{N}"),
    "tekken": _rule(_TEKKEN, ignore_merges=True, add_bos=True),
    **dict.fromkeys(["gpt-4o", "llama4", "kanana2", "talkie", "minimax-m2"], _RULE_GPT4O),
    **dict.fromkeys(["tiny_aya", "cohere2moe"], _rule(r"\d{1,3}(?=(?:\d{3})*\b)", _O200K)),
    "seed-coder": _rule(_SEED_CODER),
    **dict.fromkeys(["bailingmoe", "bailingmoe2", "llada-moe"], _rule(_BAILINGMOE)),
    "exaone-moe": _rule(_EXAONE_MOE),
    "jais-2": _rule(_JAIS2),
    "minicpm5": _rule(r"\p{N}{1,3}", _MINICPM5, ignore_merges=True),
}

#: ``tokenizer.ggml.pre`` names llama.cpp (``src/llama-vocab.cpp``) accepts and
#: tokenforge does not implement, with what stands in the way. A file naming one
#: is refused with this reason instead of being split by other rules.
LLAMA_CPP_UNSUPPORTED_PRE_TOKENIZERS: dict[str, str] = {
    "chameleon": "sentinel and image-token patterns ahead of the GPT-2 rules, with no reference vocabulary here",
    "superbpe": "a split made only of a zero-width lookahead between digit triples",
    "kimi-k2": "a hand-written splitter in llama.cpp's unicode.cpp, not a regex",
    "afmoe": "a hand-written digit grouping in llama.cpp's unicode.cpp, not a regex",
    "gemma4": "BPE over raw UTF-8 with spaces as U+2581, not byte-level BPE",
    "sarvam-moe": "BPE over raw UTF-8 with spaces as U+2581, not byte-level BPE",
    "whitespace": "whitespace-separated words over raw UTF-8, not byte-level BPE",
    **dict.fromkeys(
        ["spark2_5", "youtu", "granite-embed-multi-311m", "granite-embed-multi-97m", "hy_v4", "ufakzeka", "laguna"],
        "tokenforge carries no split rules for it",
    ),
}

#: ``tokenizer.ggml.model`` values :func:`tokenizer_from_gguf` builds.
TOKENIZER_MODELS = ("llama", "t5", "gpt2", "bert")

# llama_token_type: llama.cpp took sentencepiece's piece types, values and all
_NORMAL, _UNKNOWN, _CONTROL, _USER_DEFINED, _UNUSED, _BYTE = (int(t) for t in PieceType)


# -- metadata access with errors that name the key ------------------------------


class _Meta:
    def __init__(self, header: GGUFHeader) -> None:
        self.h = header
        self.path = header.path if header.path is not None else "<bytes>"

    def fail(self, msg: str) -> FileFormatError:
        return FileFormatError(msg, path=self.path)

    def str(self, key: str, default: Any = None) -> Any:
        v = self.h.get(key, default)
        if v is not default and not isinstance(v, str):
            raise self.fail(f"metadata key {key} must be a string, found {_type_name(self.h, key)}")
        return v

    def bool(self, key: str, default: bool | None) -> bool | None:
        v = self.h.get(key)
        if v is None:
            return default
        if not isinstance(v, bool):
            raise self.fail(f"metadata key {key} must be a bool, found {_type_name(self.h, key)}")
        return v

    def token_id(self, key: str, n: int) -> int | None:
        v = self.h.get(key)
        if v is None:
            return None
        if isinstance(v, bool) or not isinstance(v, int):
            raise self.fail(f"metadata key {key} must be an integer token id, found {_type_name(self.h, key)}")
        if v in (-1, 0xFFFFFFFF):  # LLAMA_TOKEN_NULL, as some converters write it
            return None
        if not 0 <= v < n:
            raise self.fail(f"metadata key {key} is {v}, outside the vocabulary (0..{n - 1})")
        return v

    def array(self, key: str, kinds: tuple[type, ...], what: str, n: int | None = None) -> list | None:
        v = self.h.get(key)
        if v is None:
            return None
        if not isinstance(v, list):
            raise self.fail(f"metadata key {key} must be an array of {what}, found {_type_name(self.h, key)}")
        for k, x in enumerate(v):
            if isinstance(x, bool) and bool not in kinds or not isinstance(x, kinds):
                raise self.fail(f"metadata key {key}[{k}] must be {what}, found {type(x).__name__}")
        if n is not None and len(v) != n:
            raise self.fail(f"metadata key {key} has {len(v)} entries, but tokenizer.ggml.tokens has {n}")
        return v


def _type_name(h: GGUFHeader, key: str) -> str:
    t = h.types.get(key)
    if isinstance(t, tuple):
        return f"array of {t[1].name.lower()}"
    return t.name.lower() if t is not None else "nothing"

"""sentencepiece's FlatBuffers model (``.spm.fb``) for its lite runtime, written from a ``ModelProto``.

sentencepiece 0.2.3 added ``sentencepiece.convert_to_flatbuffer``: the model as a
FlatBuffers buffer (schema ``sentencepiece_lite.fbs``, root table
``sentencepiece.lite.ModelProto``) with its lookups precomputed, for its
``SentencePieceLiteProcessor``. :func:`to_flatbuffer` writes the same bytes:

* the pieces, their scores (float log probabilities; for BPE, ``int32`` merge
  ranks instead), types, ``unk_id``/``unk_surface``, the model type, the
  bos/eos/pad ids (the CONTROL pieces named by the trainer spec, else -1) and the
  normalizer spec (name, ``precompiled_charsmap``, its flags);
* darts-clone tries (:mod:`tokenforge.sentencepiece.darts`) of all the pieces
  (value: id), of the USER_DEFINED pieces, and of the character bigrams found in
  the pieces, whose leaves hold the node of their second character (an
  Aho-Corasick suffix link); Unigram models may skip the bigrams;
* for BPE, which pieces encode to themselves alone (direct mappings), found by
  running BPE on each piece.

The buffer is laid out as FlatBuffers' C++ ``FlatBufferBuilder`` lays out the
object API's ``Pack`` (flatbuffers.dev, "Internals"): built back to front,
vectors before the tables that point at them, table fields largest first and
in reverse order within a size, each vtable after its table's fields, 8-byte
aligned blobs where the schema says ``force_align: 8``.

:func:`read_flatbuffer` reads such a buffer back into a dict (the schema's fields).
"""

from __future__ import annotations

import heapq
import math
import struct
from typing import Any

from ..errors import InvalidArgumentError, TokenforgeError
from .constants import PieceType
from .darts import build_double_array, unit_label, unit_offset, units_to_bytes
from .proto import ModelProto, ModelType

__all__ = ["FlatbufferError", "FlatbufferInternalError", "to_flatbuffer", "read_flatbuffer"]

_MAX_PIECES = 16_000_000
_MAX_PIECE_BYTES = 4096
_MAX_DIRECT_MAPPING_BYTES = 128
_INVISIBLE = frozenset({int(PieceType.UNKNOWN), int(PieceType.CONTROL), int(PieceType.UNUSED), int(PieceType.BYTE)})


class FlatbufferError(InvalidArgumentError):
    """A model that sentencepiece's FlatBuffers export refuses (it raises ``ValueError``)."""


class FlatbufferInternalError(TokenforgeError, RuntimeError):
    """A BPE model whose lite runtime cannot start, so its direct mappings cannot be found
    (sentencepiece raises ``RuntimeError``)."""


def _charsmap_problem(blob: bytes) -> str:
    """Why the lite runtime's normalizer refuses a ``precompiled_charsmap`` ('' if it does not)."""
    if len(blob) <= 4:
        return f"has {len(blob)} bytes, too short for its 4-byte trie size"
    trie = int.from_bytes(blob[:4], "little")
    if trie >= len(blob) - 4:
        return f"announces a {trie}-byte trie in {len(blob) - 4} bytes, leaving no replacement strings"
    if blob[-1] != 0:
        return "does not end its replacement strings with a NUL byte"
    if trie < 1024 or trie % 1024:
        return f"has a {trie}-byte trie; darts-clone tries are whole blocks of 1024 bytes"
    return ""


# --------------------------------------------------------------------------- builder


class _Builder:
    """FlatBuffers' C++ ``FlatBufferBuilder``, the parts ``Pack`` uses (buffer grows downwards)."""

    def __init__(self) -> None:
        self._chunks: list[Any] = []  # written back to front
        self.size = 0
        self.minalign = 1
        self._vtables: list[tuple[int, bytes]] = []
        self._fields: list[tuple[int, int]] = []
        self._max_voffset = 0

    def _push(self, data: bytes | bytearray) -> None:
        if data:
            self._chunks.append(data)
            self.size += len(data)

    def _pad(self, n: int) -> None:
        if n:
            self._push(bytes(n))

    def align(self, elem_size: int) -> None:
        self.minalign = max(self.minalign, elem_size)
        self._pad(-self.size & (elem_size - 1))

    def prealign(self, length: int, alignment: int) -> None:
        if length == 0:
            return
        self.minalign = max(self.minalign, alignment)
        self._pad(-(self.size + length) & (alignment - 1))

    def _push_scalar(self, fmt: str, value: Any) -> int:
        self.align(struct.calcsize(fmt))
        self._push(struct.pack("<" + fmt, value))
        return self.size

    def _refer(self, off: int) -> int:
        self.align(4)
        return self.size - off + 4

    def string(self, data: bytes) -> int:
        self.prealign(len(data) + 1, 4)
        self._push(b"\x00")
        self._push(data)
        return self._push_scalar("I", len(data))

    def vector(self, data: bytes, count: int, elem_size: int, force_align: int = 0) -> int:
        if force_align:
            self.prealign(count * elem_size, force_align)
        self.prealign(count * elem_size, 4)
        self.prealign(count * elem_size, elem_size)
        self._push(data)
        return self._push_scalar("I", count)

    def vector_of_strings(self, items: list[bytes]) -> int:
        offsets = [self.string(s) for s in items]
        self.prealign(4 * len(offsets), 4)
        self.prealign(4 * len(offsets), 4)
        for off in reversed(offsets):
            self._push_scalar("I", self._refer(off))
        return self._push_scalar("I", len(offsets))

    def start_table(self) -> int:
        self._fields = []
        self._max_voffset = 0
        return self.size

    def _track(self, field: int, loc: int) -> None:
        voffset = 4 + 2 * field
        self._fields.append((voffset, loc))
        self._max_voffset = max(self._max_voffset, voffset)

    def add_scalar(self, field: int, fmt: str, value: Any, default: Any) -> None:
        if value != default:
            self._track(field, self._push_scalar(fmt, value))

    def add_offset(self, field: int, off: int) -> None:
        if off:
            self._track(field, self._push_scalar("I", self._refer(off)))

    def end_table(self, start: int) -> int:
        self.align(4)
        soffset = bytearray(4)
        self._push(soffset)
        loc = self.size
        vt_size = max(self._max_voffset + 2, 4)
        vtable = bytearray(vt_size)
        struct.pack_into("<HH", vtable, 0, vt_size, loc - start)
        for voffset, field_loc in self._fields:
            struct.pack_into("<H", vtable, voffset, loc - field_loc)
        vt_use = next((at for at, vt in self._vtables if vt == vtable), 0)
        if not vt_use:
            self._push(bytes(vtable))
            vt_use = self.size
            self._vtables.append((vt_use, bytes(vtable)))
        struct.pack_into("<i", soffset, 0, vt_use - loc)
        return loc

    def finish(self, root: int) -> bytes:
        self.prealign(4, self.minalign)
        self._push_scalar("I", self._refer(root))
        return b"".join(reversed(self._chunks))


# --------------------------------------------------------------------------- converter


def _char_len(data: bytes, pos: int) -> int:
    """sentencepiece's ``OneCharLen``: the UTF-8 length its lead byte announces, cut at the end."""
    n = b"\1\1\1\1\1\1\1\1\1\1\1\1\2\2\3\4"[data[pos] >> 4]
    return min(n, len(data) - pos)


def _bigram_trie(bigrams: list[bytes]) -> list[int]:
    """darts-clone trie of the (sorted) bigrams whose leaves hold the node of their second
    character, with bit 31 set (sentencepiece's suffix links)."""
    units = build_double_array(bigrams)
    n = len(units)

    def node_of(key: bytes) -> int:
        pos = 0
        for byte in key:
            if pos >= n:
                return -1
            nxt = pos ^ unit_offset(units[pos]) ^ byte
            if nxt >= n or unit_label(units[nxt]) != byte:
                return -1
            pos = nxt
        return pos

    for bigram in bigrams:
        cur = node_of(bigram[_char_len(bigram, 0):])
        pos = node_of(bigram)  # every bigram is in the trie
        leaf = pos ^ unit_offset(units[pos])
        units[leaf] = max(cur, 0) | (1 << 31)
    return units


def _bpe_direct_mappings(pieces: list[bytes], types: list[int], int_scores: list[int], unk_id: int,
                         user_defined: list[tuple[bytes, int]]) -> list[int]:
    """``1`` where BPE, run on the piece alone, gives that piece's id alone (and for
    pieces no encoding emits); ``0`` otherwise. BPE as sentencepiece's lite runtime runs it:
    characters (USER_DEFINED pieces matched first, longest, and frozen), then the adjacent
    pair whose merged piece has the highest rank merges, the leftmost on ties."""
    ids = {p: i for i, p in enumerate(pieces)}
    visible = {p: i for p, i in ids.items() if types[i] not in _INVISIBLE}
    user = dict(user_defined)
    user_lens = sorted({len(p) for p in user}, reverse=True)
    out = [0] * len(pieces)
    for i, piece in enumerate(pieces):
        if types[i] in _INVISIBLE:
            out[i] = 1
            continue
        if len(piece) > _MAX_DIRECT_MAPPING_BYTES:
            continue
        syms: list[list[Any]] = []  # [bytes, id, frozen]
        pos = 0
        while pos < len(piece):
            match = next((n for n in user_lens if piece[pos:pos + n] in user), 0)
            if match and types[user[piece[pos:pos + match]]] == int(PieceType.USER_DEFINED):
                syms.append([piece[pos:pos + match], user[piece[pos:pos + match]], True])
                pos += match
                continue
            n = _char_len(piece, pos)
            ch = piece[pos:pos + n]
            syms.append([ch, visible.get(ch, unk_id), False])
            pos += n
        nxt = list(range(1, len(syms))) + [-1]
        prv = list(range(-1, len(syms) - 1))
        heap: list[tuple[int, int, int, int, int]] = []

        def push(left: int, right: int) -> None:
            if left == -1 or right == -1 or syms[left][2] or syms[right][2]:
                return
            merged = syms[left][0] + syms[right][0]
            pid = visible.get(merged)
            if pid is not None:
                heapq.heappush(heap, (-int_scores[pid], left, right, len(merged), pid))

        for left in range(len(syms) - 1):
            push(left, left + 1)
        while heap:
            _, left, right, size, pid = heapq.heappop(heap)
            a, b = syms[left][0], syms[right][0]
            if not a or not b or len(a) + len(b) != size:
                continue
            syms[left][0], syms[left][1] = a + b, pid
            syms[right][0] = b""
            nxt[left] = nxt[right]
            if nxt[right] != -1:
                prv[nxt[right]] = left
            push(prv[left], left)
            push(left, nxt[left])
        alive = [s for s in syms if s[0]]
        out[i] = int(len(alive) == 1 and alive[0][1] == i)
    return out


def to_flatbuffer(proto: ModelProto, skip_char_bigrams: bool = False, treat_null_byte_as_unused: bool = False,
                  allow_unsupported_model_type: bool = False) -> bytes:
    """The ``.spm.fb`` bytes of a model, as ``sentencepiece.convert_to_flatbuffer`` writes them.

    ``skip_char_bigrams`` leaves out the bigram trie of a Unigram model (BPE always has
    it); ``treat_null_byte_as_unused`` turns a one-byte piece ``"\\0"`` of a byte-fallback
    model into an UNUSED ``<unused_ID>``; ``allow_unsupported_model_type`` lets WORD and
    CHAR models through (the lite runtime runs them as Unigram). Raises
    :class:`FlatbufferError` (a ``ValueError``) where sentencepiece refuses the model.
    """
    n = len(proto.pieces)
    if n <= 0 or n > _MAX_PIECES:
        raise FlatbufferError(f"Model vocabulary size ({n}) is out of safe bounds [1, 16,000,000].")
    ts = proto.trainer_spec
    has_ts = proto.has("trainer_spec")
    model_type = int(ts.model_type) if has_ts else int(ModelType.UNIGRAM)
    if has_ts:
        allowed = {int(ModelType.UNIGRAM), int(ModelType.BPE)}
        if allow_unsupported_model_type:
            allowed |= {int(ModelType.WORD), int(ModelType.CHAR)}
        if model_type not in allowed:
            try:
                name = ModelType(model_type).name
            except ValueError:
                name = str(model_type)
            raise FlatbufferError(
                f"Unsupported model type: {name} (the FlatBuffers model runs UNIGRAM and BPE; "
                f"allow_unsupported_model_type=True converts WORD and CHAR models, run as UNIGRAM)")
    is_bpe = model_type == int(ModelType.BPE)
    byte_fallback = bool(ts.byte_fallback) if has_ts else False
    unk_id = int(ts.unk_id) if has_ts else 0
    unk_surface = ts.unk_surface.encode("utf-8") if has_ts else b""
    bos_piece = (ts.bos_piece if has_ts and ts.bos_piece else "<s>").encode("utf-8")
    eos_piece = (ts.eos_piece if has_ts and ts.eos_piece else "</s>").encode("utf-8")
    pad_piece = (ts.pad_piece if has_ts and ts.pad_piece else "<pad>").encode("utf-8")
    bos_id = eos_id = pad_id = -1

    pieces: list[bytes] = []
    types: list[int] = []
    scores: list[float] = []
    int_scores: list[int] = []
    user_defined: list[tuple[bytes, int]] = []
    for i, sp in enumerate(proto.pieces):
        piece = sp.piece.encode("utf-8", "surrogateescape")
        ptype = int(sp.type)
        if not piece or len(piece) > _MAX_PIECE_BYTES:
            raise FlatbufferError(f"Piece at index {i} is invalid (empty or too long).")
        if b"\x00" in piece:
            if not (treat_null_byte_as_unused and byte_fallback and len(piece) == 1):
                raise FlatbufferError(f"Piece at index {i} is invalid (contains null byte).")
            piece = f"<unused_{i}>".encode()
            ptype = int(PieceType.UNUSED)
        pieces.append(piece)
        if ptype == int(PieceType.USER_DEFINED):
            user_defined.append((piece, i))
        if ptype == int(PieceType.CONTROL):
            if piece == bos_piece:
                bos_id = i
            if piece == eos_piece:
                eos_id = i
            if piece == pad_piece:
                pad_id = i
        score = struct.unpack("<f", struct.pack("<f", sp.score))[0]
        if is_bpe:
            if math.isnan(score) or abs(score) > 2147483520.0:
                raise FlatbufferError(f"Piece at index {i} has an invalid BPE score.")
            int_scores.append(int(score))
        else:
            scores.append(score)
        types.append(ptype)

    # What sentencepiece's lite runtime refuses when it loads the result (sentencepiece checks
    # by loading it: for BPE first without the normalizer, to find the direct mappings).
    if not -1 <= unk_id < n:
        problem = f"unk_id {unk_id} is not a piece id (vocabulary of {n}); set trainer_spec.unk_id to the <unk> piece"
        if is_bpe:
            raise FlatbufferInternalError(f"Failed to initialize preliminary processor for BPE direct mapping: {problem}.")
        raise FlatbufferError(f"Model verification failed: Converted FlatBuffers model is invalid: {problem}.")
    if proto.has("normalizer_spec") and proto.normalizer_spec.precompiled_charsmap:
        problem = _charsmap_problem(bytes(proto.normalizer_spec.precompiled_charsmap))
        if problem:
            raise FlatbufferError(f"Model verification failed: Converted FlatBuffers model is invalid: "
                                  f"normalizer_spec.precompiled_charsmap {problem}.")

    def trie(pairs: list[tuple[bytes, int]]) -> bytes:
        pairs = sorted(pairs)
        for j in range(1, len(pairs)):
            if pairs[j][0] == pairs[j - 1][0]:
                raise FlatbufferError(f"Duplicate key for trie building: {pairs[j][0].decode('utf-8', 'replace')}")
        return units_to_bytes(build_double_array([k for k, _ in pairs], [v for _, v in pairs]))

    pieces_trie = trie([(p, i) for i, p in enumerate(pieces)])
    prefix_trie = trie(user_defined) if user_defined else b""
    bigram_trie = b""
    if is_bpe or not skip_char_bigrams:
        found: set[bytes] = set()
        for piece in pieces:
            prev = pos = 0
            while pos < len(piece):
                m = _char_len(piece, pos)
                if prev:
                    found.add(piece[pos - prev:pos + m])
                prev = m
                pos += m
        bigram_trie = units_to_bytes(_bigram_trie(sorted(found)))

    has_direct = False
    direct: list[int] = []
    if is_bpe:
        direct = _bpe_direct_mappings(pieces, types, int_scores, unk_id, user_defined)
        has_direct = any(d and t not in _INVISIBLE for d, t in zip(direct, types))
        if not has_direct or all(direct):
            direct = []

    b = _Builder()
    off_pieces = b.vector_of_strings(pieces)
    off_scores = b.vector(struct.pack(f"<{len(scores)}f", *scores), len(scores), 4) if scores else 0
    off_int = b.vector(struct.pack(f"<{len(int_scores)}i", *int_scores), len(int_scores), 4) if int_scores else 0
    off_types = b.vector(bytes(types), len(types), 1)
    off_unk_surface = b.string(unk_surface) if unk_surface else 0
    off_norm = 0
    if proto.has("normalizer_spec"):
        ns = proto.normalizer_spec
        name = ns.name.encode("utf-8")
        off_name = b.string(name) if name else 0
        charsmap = bytes(ns.precompiled_charsmap)
        off_map = b.vector(charsmap, len(charsmap), 1, force_align=8) if charsmap else 0
        start = b.start_table()
        b.add_offset(1, off_map)
        b.add_offset(0, off_name)
        b.add_scalar(5, "?", bool(ts.treat_whitespace_as_suffix) if has_ts else False, False)
        b.add_scalar(4, "?", bool(ns.escape_whitespaces), True)
        b.add_scalar(3, "?", bool(ns.remove_extra_whitespaces), True)
        b.add_scalar(2, "?", bool(ns.add_dummy_prefix), True)
        off_norm = b.end_table(start)
    off_ptrie = b.vector(pieces_trie, len(pieces_trie), 1, force_align=8) if pieces_trie else 0
    off_prefix = b.vector(prefix_trie, len(prefix_trie), 1, force_align=8) if prefix_trie else 0
    off_bigram = b.vector(bigram_trie, len(bigram_trie), 1, force_align=8) if bigram_trie else 0
    off_direct = b.vector(bytes(direct), len(direct), 1) if direct else 0
    start = b.start_table()
    b.add_scalar(15, "i", pad_id, -1)
    b.add_scalar(14, "i", eos_id, -1)
    b.add_scalar(13, "i", bos_id, -1)
    b.add_offset(12, off_direct)
    b.add_offset(10, off_bigram)
    b.add_offset(9, off_prefix)
    b.add_offset(8, off_ptrie)
    b.add_offset(7, off_norm)
    b.add_offset(5, off_unk_surface)
    b.add_scalar(4, "i", unk_id, 0)
    b.add_offset(3, off_types)
    b.add_offset(2, off_int)
    b.add_offset(1, off_scores)
    b.add_offset(0, off_pieces)
    b.add_scalar(11, "?", has_direct, False)
    b.add_scalar(6, "b", model_type, int(ModelType.UNIGRAM))
    return b.finish(b.end_table(start))


# --------------------------------------------------------------------------- reader

_MODEL_FIELDS = (
    ("pieces", "[string]"), ("scores", "[f]"), ("int_scores", "[i]"), ("types", "[b]"), ("unk_id", "i", 0),
    ("unk_surface", "string"), ("model_type", "b", 1), ("normalizer_spec", "table"),
    ("pieces_trie_blob", "[B]"), ("prefix_matcher_trie_blob", "[B]"), ("char_bigram_trie_blob", "[B]"),
    ("has_direct_mappings", "?", False), ("is_direct_mapping", "[B]"), ("bos_id", "i", -1), ("eos_id", "i", -1),
    ("pad_id", "i", -1),
)
_NORMALIZER_FIELDS = (
    ("name", "string"), ("precompiled_charsmap", "[B]"), ("add_dummy_prefix", "?", True),
    ("remove_extra_whitespaces", "?", True), ("escape_whitespaces", "?", True),
    ("treat_whitespace_as_suffix", "?", False),
)


def _read_table(buf: bytes, pos: int, fields: tuple) -> dict[str, Any]:
    vt = pos - struct.unpack_from("<i", buf, pos)[0]
    vt_size = struct.unpack_from("<H", buf, vt)[0]
    out: dict[str, Any] = {}
    for k, (name, kind, *default) in enumerate(fields):
        voff = 4 + 2 * k
        field = struct.unpack_from("<H", buf, vt + voff)[0] if voff < vt_size else 0
        if not field:
            out[name] = default[0] if default else None
            continue
        at = pos + field
        if kind in ("i", "b", "?"):
            out[name] = struct.unpack_from("<" + kind, buf, at)[0]
            continue
        target = at + struct.unpack_from("<I", buf, at)[0]
        if kind == "table":
            out[name] = _read_table(buf, target, _NORMALIZER_FIELDS)
            continue
        count = struct.unpack_from("<I", buf, target)[0]
        if kind == "string":
            out[name] = buf[target + 4:target + 4 + count]
        elif kind == "[string]":
            items = []
            for j in range(count):
                e = target + 4 + 4 * j
                s = e + struct.unpack_from("<I", buf, e)[0]
                items.append(buf[s + 4:s + 4 + struct.unpack_from("<I", buf, s)[0]])
            out[name] = items
        elif kind == "[B]":
            out[name] = buf[target + 4:target + 4 + count]
        else:
            out[name] = list(struct.unpack_from(f"<{count}{kind[1]}", buf, target + 4))
    return out


def read_flatbuffer(data: bytes) -> dict[str, Any]:
    """The fields of a ``.spm.fb`` buffer: ``{field: value}`` with the schema's defaults for
    absent ones (strings and blobs as bytes, vectors as lists, ``normalizer_spec`` a dict)."""
    data = bytes(data)
    try:
        return _read_table(data, struct.unpack_from("<I", data, 0)[0], _MODEL_FIELDS)
    except struct.error as e:
        raise FlatbufferError(f"not a sentencepiece FlatBuffers model ({len(data)} bytes): {e}") from None

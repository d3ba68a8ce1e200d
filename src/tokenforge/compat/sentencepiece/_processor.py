"""The engine behind :class:`~tokenforge.compat.sentencepiece.SentencePieceProcessor`.

sentencepiece's Python package is a thin wrapper over a compiled class whose
methods (``_EncodeAsIds``, ``_DecodePiecesBatch``, ...) do the work; the wrapper
only picks one by return type. :class:`Processor` is that class on tokenforge:
the same method names and arguments, so the wrapper's dispatch reads the same
and code that reaches ``sp._processor`` keeps working.

A segmentation is computed as sentencepiece's ``PopulateSentencePieceText`` does
(``sentencepiece_processor.cc``): each piece spans, in the original text, from
where the normalized text of its first character came from to where the next
one's did; an unknown piece is the normalized text it stands for and its
surface is the original text; a run of unknown pieces is one piece; the byte
pieces of one character all start there and only the last has a surface.
Decoding follows its ``Decode``: control pieces are empty, ``<unk>`` is
``unk_surface`` (`` ⁇ ``), a string that is no piece stands for itself, byte
pieces become UTF-8 (one U+FFFD per invalid byte, on the last byte piece of
each character), and the space the dummy prefix put in front is dropped.
"""

from __future__ import annotations

import os
import random
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ..._io import read_bytes
from ...decoders import byte_fallback_value
from ...errors import ArgumentTypeError, InvalidArgumentError, UnknownIdError
from ...normalizers import NormalizedText
from ...sentencepiece.constants import PieceType
from ...sentencepiece.proto import ModelProto, ModelType, decode_model
from ._spt import Piece, encode_nbest, encode_text

if TYPE_CHECKING:
    from ...tokenizer import Tokenizer

#: The generator behind sampling (``set_random_generator_seed`` seeds it), and the
#: n-best time limit in milliseconds (``set_nbest_timeout``; sentencepiece's default).
RNG = random.Random()
SETTINGS: dict[str, Any] = {"nbest_timeout_ms": 30000, "min_log_level": 0, "data_dir": ""}
_RNG_LOCK = threading.Lock()

#: (id, piece, original char begin, original char end, surface set)
Seg = tuple[int, str, int, int, bool]


class OutOfRangeError(UnknownIdError, IndexError):
    """A piece id outside ``0..piece_size() - 1`` (sentencepiece raises ``IndexError``)."""


class UnsupportedError(InvalidArgumentError, RuntimeError):
    """An option sentencepiece refuses for this call (it raises ``RuntimeError``)."""


def _utf8_starts(text: str) -> list[int]:
    """Byte offset of each character of ``text`` and of its end."""
    out = [0] * (len(text) + 1)
    n = 0
    for i, c in enumerate(text):
        out[i] = n
        o = ord(c)
        n += 1 if o < 0x80 else 2 if o < 0x800 else 3 if o < 0x10000 else 4
    out[len(text)] = n
    return out


def _as_str(text: Any, what: str = "input") -> str:
    if isinstance(text, bytes):
        return text.decode("utf-8", "surrogateescape")
    if isinstance(text, str):
        return text
    raise ArgumentTypeError(f"{what} must be str or bytes, got {type(text).__name__}")


def _valid_utf8_char(data: bytes, at: int) -> int:
    """Bytes in the UTF-8 character at ``data[at]``, or 0 when it is not a valid one."""
    b = data[at]
    n = 1 if b < 0x80 else 2 if 0xC2 <= b < 0xE0 else 3 if 0xE0 <= b < 0xF0 else 4 if 0xF0 <= b < 0xF5 else 0
    if n == 0 or at + n > len(data):
        return 0
    try:
        data[at : at + n].decode("utf-8")
    except UnicodeDecodeError:
        return 0
    return n


class ThreadPool:
    """sentencepiece's ``ThreadPool(n)``: batch calls accept it as ``thread_pool=``. tokenforge's
    batch calls give the same results whatever the threads, so it only records ``n``."""

    def __init__(self, num_threads: int = -1) -> None:
        if not isinstance(num_threads, int) or isinstance(num_threads, bool):
            raise ArgumentTypeError(f"num_threads must be int, got {type(num_threads).__name__}")
        self._n = num_threads if num_threads > 0 else (os.cpu_count() or 1)

    def num_threads(self) -> int:
        return self._n


class Processor:
    """One loaded ``.model``: segmentation, decoding and lookups, by sentencepiece's method names."""

    def __init__(self) -> None:
        self._tok: Tokenizer | None = None
        self._serialized = b""

    # ---------------------------------------------------------------- loading
    def LoadFromFile(self, filename: str | os.PathLike[str]) -> bool:
        data = read_bytes(filename)
        self._load(data, decode_model(data, path=filename), os.path.basename(os.fspath(filename)))
        return True

    def LoadFromSerializedProto(self, serialized: bytes) -> bool:
        if not isinstance(serialized, (bytes, bytearray, memoryview)):
            raise ArgumentTypeError(f"serialized must be bytes, got {type(serialized).__name__}")
        data = bytes(serialized)
        self._load(data, decode_model(data), None)
        return True

    def _load(self, data: bytes, proto: ModelProto, name: str | None) -> None:
        from ...presets import sentencepiece as load_sentencepiece

        tok = load_sentencepiece(proto, name=name)
        self._proto = proto
        self._serialized = data
        self._pieces = [p.piece for p in proto.pieces]
        self._types = [p.type for p in proto.pieces]
        self._scores = [p.score for p in proto.pieces]
        self._ids: dict[str, int] = {p: i for i, p in reversed(list(enumerate(self._pieces)))}
        ts = proto.trainer_spec
        self._unk = self._typed_id(ts.unk_piece, PieceType.UNKNOWN)
        self._bos = self._typed_id(ts.bos_piece, PieceType.CONTROL)
        self._eos = self._typed_id(ts.eos_piece, PieceType.CONTROL)
        self._pad = self._typed_id(ts.pad_piece, PieceType.CONTROL)
        self._unk_surface = ts.unk_surface
        self._is_bpe = ts.model_type == ModelType.BPE
        ns = proto.normalizer_spec
        self._strip_first = ns.add_dummy_prefix or ns.remove_extra_whitespaces
        self._strip_all_leading = ns.remove_extra_whitespaces
        self._tok = tok

    def _typed_id(self, piece: str, kind: int) -> int:
        i = self._ids.get(piece)
        return i if i is not None and self._types[i] == kind else -1

    @property
    def tokenizer(self) -> Tokenizer:
        if self._tok is None:
            raise InvalidArgumentError("no model is loaded: call load(model_file=...) first")
        return self._tok

    # ---------------------------------------------------------------- lookups
    def GetPieceSize(self) -> int:
        self.tokenizer
        return len(self._pieces)

    def _id(self, i: Any) -> int:
        if not isinstance(i, int) or isinstance(i, bool):
            raise ArgumentTypeError(f"a piece id must be int, got {type(i).__name__}")
        if not 0 <= i < len(self._pieces):
            raise OutOfRangeError(f"piece id {i} is out of range (0..{len(self._pieces) - 1})")
        return i

    def _per_id(self, ids: Any, f: Callable[[int], Any]) -> Any:
        self.tokenizer
        if isinstance(ids, (str, bytes)):
            raise ArgumentTypeError(f"expected a piece id or a sequence of them, got {type(ids).__name__}")
        if isinstance(ids, int) and not isinstance(ids, bool):
            return f(self._id(ids))
        if not hasattr(ids, "__len__"):
            raise ArgumentTypeError(f"expected a piece id or a sequence of them, got {type(ids).__name__}")
        return [f(self._id(i)) for i in ids]

    def PieceToId(self, piece: Any) -> Any:
        self.tokenizer

        def one(p: Any) -> int:
            if isinstance(p, bytes):
                p = p.decode("utf-8", "surrogateescape")
            if not isinstance(p, str):
                raise ArgumentTypeError(f"a piece must be str, got {type(p).__name__}")
            return self._ids.get(p, self._unk)

        if isinstance(piece, (str, bytes)):
            return one(piece)
        if not hasattr(piece, "__len__"):
            raise ArgumentTypeError(f"expected a piece or a sequence of pieces, got {type(piece).__name__}")
        return [one(p) for p in piece]

    def IdToPiece(self, id: Any) -> Any:
        return self._per_id(id, self._pieces.__getitem__)

    def GetScore(self, id: Any) -> Any:
        return self._per_id(id, self._scores.__getitem__)

    def IsUnknown(self, id: Any) -> Any:
        return self._per_id(id, lambda i: self._types[i] == PieceType.UNKNOWN)

    def IsControl(self, id: Any) -> Any:
        return self._per_id(id, lambda i: self._types[i] == PieceType.CONTROL)

    def IsUnused(self, id: Any) -> Any:
        return self._per_id(id, lambda i: self._types[i] == PieceType.UNUSED)

    def IsByte(self, id: Any) -> Any:
        return self._per_id(id, lambda i: self._types[i] == PieceType.BYTE)

    def unk_id(self) -> int:
        self.tokenizer
        return self._unk

    def bos_id(self) -> int:
        self.tokenizer
        return self._bos

    def eos_id(self) -> int:
        self.tokenizer
        return self._eos

    def pad_id(self) -> int:
        self.tokenizer
        return self._pad

    def serialized_model_proto(self) -> bytes:
        self.tokenizer
        return self._serialized

    # ----------------------------------------------------------- segmentation
    def _normalized(self, text: str) -> NormalizedText:
        tok = self.tokenizer
        nt = NormalizedText(text)
        return tok.normalizer.normalize(nt) if tok.normalizer is not None else nt

    def _segments(self, text: str, how: Callable[[Any, str], list[tuple[int, int, int]]] | None = None,
                  nt: NormalizedText | None = None) -> list[Seg]:
        """The pieces of ``text`` as sentencepiece populates them. ``how(model, piece)`` gives
        ``(id, start, end)`` of a normalized piece (default: the best segmentation)."""
        tok = self.tokenizer
        if nt is None:
            nt = self._normalized(text)
        norm = nt.normalized
        model: Any = tok.model
        spans: list[tuple[int, int, int]] = []
        for piece in tok._pre_tokenize_pieces(norm, True) if norm else ():
            for tid, i, j in (how(model, piece.text) if how is not None else model.tokenize(piece.text)):
                ns, ne = piece.span(i, j)
                spans.append((tid, ns, ne))
        out: list[Seg] = []
        unk = self._unk
        for k, (tid, ns, ne) in enumerate(spans):
            os_ = nt.original_span(ns, ns)[0]
            ends_inside = k + 1 < len(spans) and spans[k + 1][1] < ne  # a byte piece before the last of its char
            oe = os_ if ends_inside else nt.original_span(ne, ne)[0]
            if tid == unk:
                if out and out[-1][0] == unk:  # sentencepiece makes a run of unknowns one piece
                    prev = out[-1]
                    out[-1] = (unk, prev[1] + norm[ns:ne], prev[2], oe, True)
                    continue
                out.append((unk, norm[ns:ne], os_, oe, True))
            else:
                out.append((tid, self._pieces[tid], os_, oe, not ends_inside))
        return out

    def _sampler(self, nbest_size: int, alpha: float) -> Callable[[Any, str], list[tuple[int, int, int]]]:
        if self._is_bpe:  # BPE-dropout: each merge is skipped with probability alpha
            def bpe(model: Any, piece: str) -> list[tuple[int, int, int]]:
                with _RNG_LOCK:
                    return list(model.tokenize(piece, dropout=alpha, rng=RNG))
            return bpe

        def unigram(model: Any, piece: str) -> list[tuple[int, int, int]]:
            if nbest_size in (0, 1):
                return list(model.tokenize(piece))
            with _RNG_LOCK:
                path = model._sampled_path(piece, nbest_size, alpha, RNG)
            return list(model._finish(piece, path))
        return unigram

    def _encode(self, text: Any, sampling: bool, nbest_size: int, alpha: float) -> list[Seg]:
        s = _as_str(text)
        return self._segments(s, self._sampler(nbest_size, alpha) if sampling else None)

    @staticmethod
    def _extras(items: list[Any], bos: Any, eos: Any, add_bos: bool, add_eos: bool, reverse: bool) -> list[Any]:
        if reverse:
            items.reverse()
        if add_bos:
            items.insert(0, bos)
        if add_eos:
            items.append(eos)
        return items

    def _check_extras(self, add_bos: bool, add_eos: bool) -> None:
        if add_bos and self._bos < 0:
            raise InvalidArgumentError("add_bos: this model has no BOS control piece (bos_id() is -1)")
        if add_eos and self._eos < 0:
            raise InvalidArgumentError("add_eos: this model has no EOS control piece (eos_id() is -1)")

    def _EncodeAsIds(self, text: Any, enable_sampling: bool, nbest_size: int, alpha: float,
                     add_bos: bool, add_eos: bool, reverse: bool) -> list[int]:
        self._check_extras(add_bos, add_eos)
        if enable_sampling:
            ids = [s[0] for s in self._encode(text, True, nbest_size, alpha)]
        else:
            ids = self.tokenizer.encode(_as_str(text), add_special_tokens=False, disallowed_special=())
        return self._extras(ids, self._bos, self._eos, add_bos, add_eos, reverse)

    def _EncodeAsPieces(self, text: Any, enable_sampling: bool, nbest_size: int, alpha: float, add_bos: bool,
                        add_eos: bool, reverse: bool, emit_unk_piece: bool, return_bytes: bool) -> list[Any]:
        self._check_extras(add_bos, add_eos)
        segs = self._encode(text, enable_sampling, nbest_size, alpha)
        return self._piece_list(segs, add_bos, add_eos, reverse, emit_unk_piece, return_bytes)

    def _piece_list(self, segs: list[Seg], add_bos: bool, add_eos: bool, reverse: bool, emit_unk_piece: bool,
                    return_bytes: bool) -> list[Any]:
        unk = self._unk
        pieces: list[Any] = [self._pieces[s[0]] if emit_unk_piece and s[0] == unk else s[1] for s in segs]
        bos = self._pieces[self._bos] if add_bos else None
        eos = self._pieces[self._eos] if add_eos else None
        pieces = self._extras(pieces, bos, eos, add_bos, add_eos, reverse)
        return [p.encode("utf-8") for p in pieces] if return_bytes else pieces

    def _proto_only(self, add_bos: bool, add_eos: bool, reverse: bool, emit_unk_piece: bool) -> None:
        if add_bos or add_eos or reverse or emit_unk_piece:
            raise UnsupportedError("add_bos, add_eos, reverse and emit_unk_piece are not supported with "
                                   "return_type='serialized_proto', 'proto' or 'offset_mapping' (as in sentencepiece)")

    def _spt(self, text: str, segs: list[Seg], score: float | None = None) -> bytes:
        starts = _utf8_starts(text)
        raw = text.encode("utf-8", "surrogateescape")
        pieces = []
        for tid, piece, b, e, has_surface in segs:
            bb, be = starts[b], starts[e]
            pieces.append(Piece(piece.encode("utf-8"), tid, raw[bb:be] if has_surface else None, bb, be))
        return encode_text(raw, pieces, score)

    def _EncodeAsSerializedProto(self, text: Any, enable_sampling: bool, nbest_size: int, alpha: float,
                                 add_bos: bool, add_eos: bool, reverse: bool, emit_unk_piece: bool) -> bytes:
        self._proto_only(add_bos, add_eos, reverse, emit_unk_piece)
        s = _as_str(text)
        return self._spt(s, self._encode(s, enable_sampling, nbest_size, alpha))

    def _EncodeAsOffsetMapping(self, text: Any, enable_sampling: bool, nbest_size: int, alpha: float,
                               add_bos: bool, add_eos: bool, reverse: bool, emit_unk_piece: bool,
                               return_bytes: bool) -> dict[str, Any]:
        self._proto_only(add_bos, add_eos, reverse, emit_unk_piece)
        s = _as_str(text)
        segs = self._encode(s, enable_sampling, nbest_size, alpha)
        starts = _utf8_starts(s) if return_bytes else None
        return {
            "ids": [g[0] for g in segs],
            "pieces": [g[1].encode("utf-8") if return_bytes else g[1] for g in segs],
            "offsets": [(starts[g[2]], starts[g[3]]) if starts is not None else (g[2], g[3]) for g in segs],
        }

    @staticmethod
    def _batch(texts: Any) -> list[Any]:
        n = len(texts)  # read once: a sequence whose length changes is read as it was
        return [texts[i] for i in range(n)]

    def _EncodeAsIdsBatch(self, texts: Any, num_threads: int, thread_pool: Any, *args: Any) -> list[list[int]]:
        return [self._EncodeAsIds(t, *args) for t in self._batch(texts)]

    def _EncodeAsPiecesBatch(self, texts: Any, num_threads: int, thread_pool: Any, *args: Any) -> list[list[Any]]:
        return [self._EncodeAsPieces(t, *args) for t in self._batch(texts)]

    def _EncodeAsSerializedProtoBatch(self, texts: Any, num_threads: int, thread_pool: Any, *args: Any) -> list[bytes]:
        return [self._EncodeAsSerializedProto(t, *args) for t in self._batch(texts)]

    def _EncodeAsOffsetMappingBatch(self, texts: Any, num_threads: int, thread_pool: Any,
                                    *args: Any) -> list[dict[str, Any]]:
        return [self._EncodeAsOffsetMapping(t, *args) for t in self._batch(texts)]

    # ------------------------------------------------------------------ n-best
    def _nbest(self, text: Any, nbest_size: int) -> tuple[str, list[tuple[list[Seg], float]]]:
        s = _as_str(text)
        tok = self.tokenizer
        model: Any = tok.model
        if not hasattr(model, "_nbest_paths"):
            raise UnsupportedError(f"n-best segmentation needs a Unigram model; this one is "
                                   f"{ModelType(self._proto.trainer_spec.model_type).name}")
        nt = self._normalized(s)
        timeout = SETTINGS["nbest_timeout_ms"]
        deadline = time.monotonic() + timeout / 1000.0 if timeout > 0 else None
        found: list[tuple[list[tuple[int, int]], float]] = []

        def one(m: Any, piece: str) -> list[tuple[int, int, int]]:
            found.extend(m._nbest_paths(piece, max(1, nbest_size), deadline=deadline))
            return []

        self._segments(s, one, nt)
        if not found:  # empty text
            return s, [([], 0.0)]
        out = []
        for path, score in found:
            finished = [tuple(t) for t in model._finish(nt.normalized, path)]
            out.append((self._segments(s, lambda _m, _p, f=finished: f, nt), score))  # type: ignore[misc]
        return s, out

    def _NBestEncodeAsIds(self, text: Any, nbest_size: int, add_bos: bool, add_eos: bool,
                          reverse: bool) -> list[list[int]]:
        self._check_extras(add_bos, add_eos)
        _, results = self._nbest(text, nbest_size)
        return [self._extras([g[0] for g in segs], self._bos, self._eos, add_bos, add_eos, reverse)
                for segs, _ in results]

    def _NBestEncodeAsPieces(self, text: Any, nbest_size: int, add_bos: bool, add_eos: bool, reverse: bool,
                             emit_unk_piece: bool, return_bytes: bool) -> list[list[Any]]:
        self._check_extras(add_bos, add_eos)
        _, results = self._nbest(text, nbest_size)
        return [self._piece_list(segs, add_bos, add_eos, reverse, emit_unk_piece, return_bytes) for segs, _ in results]

    def _NBestEncodeAsSerializedProto(self, text: Any, nbest_size: int, add_bos: bool, add_eos: bool,
                                      reverse: bool, emit_unk_piece: bool) -> bytes:
        self._proto_only(add_bos, add_eos, reverse, emit_unk_piece)
        s, results = self._nbest(text, nbest_size)
        return encode_nbest([self._spt(s, segs, score) for segs, score in results])

    # ------------------------------------------------------- parallel encoding
    def _ParallelEncodeAsIds(self, text: Any, chunk_len: int, num_threads: int, thread_pool: Any,
                             add_bos: bool, add_eos: bool, reverse: bool) -> list[int]:
        return self._EncodeAsIds(text, False, -1, 0.0, add_bos, add_eos, reverse)

    def _ParallelEncodeAsPieces(self, text: Any, chunk_len: int, num_threads: int, thread_pool: Any, add_bos: bool,
                                add_eos: bool, reverse: bool, emit_unk_piece: bool, return_bytes: bool) -> list[Any]:
        return self._EncodeAsPieces(text, False, -1, 0.0, add_bos, add_eos, reverse, emit_unk_piece, return_bytes)

    def _ParallelEncodeAsSerializedProto(self, text: Any, chunk_len: int, num_threads: int, thread_pool: Any,
                                         add_bos: bool, add_eos: bool, reverse: bool, emit_unk_piece: bool) -> bytes:
        return self._EncodeAsSerializedProto(text, False, -1, 0.0, add_bos, add_eos, reverse, emit_unk_piece)

    # ---------------------------------------------------------------- decoding
    def _to_pieces(self, items: Any) -> list[str]:
        out = []
        for x in self._batch(items):
            if isinstance(x, bytes):
                out.append(x.decode("utf-8", "surrogateescape"))
            elif isinstance(x, str):
                out.append(x)
            else:
                raise ArgumentTypeError(f"pieces must be str or bytes, got {type(x).__name__}")
        return out

    def _ids_to_pieces(self, ids: Any) -> list[str]:
        out = []
        for i in self._batch(ids):
            if not isinstance(i, int) or isinstance(i, bool):
                try:
                    i = int(i)  # numpy integers
                except (TypeError, ValueError):
                    raise ArgumentTypeError(f"ids must be int, got {type(i).__name__}") from None
            out.append(self._pieces[self._id(i)])
        return out

    def _decode_spt(self, pieces: list[str]) -> tuple[str, list[tuple[str, int, str, int, int]]]:
        """Decoded text and, per piece, ``(piece, id, surface, begin, end)`` in characters."""
        self.tokenizer
        ids = [self._ids.get(p, self._unk) for p in pieces]
        text: list[str] = []
        length = 0
        out: list[Any] = [None] * len(pieces)
        is_bos_ws = True
        bos_ws_seen = False
        pending: list[int] = []

        def flush(end: int) -> None:
            nonlocal length
            data = bytes(self._byte_of(pieces[k]) for k in pending)
            at = 0
            first = pending[0] if pending else 0
            while at < len(data):
                n = _valid_utf8_char(data, at)
                if n == 0:
                    surface, n = "\ufffd", 1
                    out[first + at] = (surface, length, length + 1)
                    text.append(surface)
                    length += 1
                else:
                    ch = data[at : at + n].decode("utf-8")
                    for j in range(n - 1):
                        out[first + at + j] = ("", length, length)
                    out[first + at + n - 1] = (ch, length, length + len(ch))
                    text.append(ch)
                    length += len(ch)
                at += n
            pending.clear()

        for k, (p, i) in enumerate(zip(pieces, ids)):
            kind = self._types[i] if i >= 0 else PieceType.UNKNOWN
            if kind == PieceType.BYTE:
                pending.append(k)
                continue
            flush(k)
            if bos_ws_seen or length:
                is_bos_ws = False
            begin = length
            bos_ws_seen = False
            if kind == PieceType.CONTROL:
                piece_text = ""
            elif kind == PieceType.UNKNOWN:
                piece_text = self._unk_surface if i >= 0 and self._pieces[i] == p else p
            else:
                w = p
                if is_bos_ws and self._strip_first and w.startswith("\u2581"):
                    w = w[1:]
                    bos_ws_seen = not self._strip_all_leading
                piece_text = w.replace("\u2581", " ")
            text.append(piece_text)
            length += len(piece_text)
            out[k] = (piece_text, begin, length)
        flush(len(pieces))
        return "".join(text), [(p, i, *o) for p, i, o in zip(pieces, ids, out)]

    @staticmethod
    def _byte_of(piece: str) -> int:
        b = byte_fallback_value(piece)
        return b if b is not None else 0

    def _decode_to(self, pieces: list[str], kind: str, return_bytes: bool = False) -> Any:
        if kind == "str":
            return self._decode_text(pieces)
        if kind == "bytes":
            return self._decode_text(pieces).encode("utf-8", "surrogateescape")
        text, parts = self._decode_spt(pieces)
        if kind == "serialized_proto":
            starts = _utf8_starts(text)
            raw = text.encode("utf-8", "surrogateescape")
            return encode_text(raw, [Piece(p.encode("utf-8"), i, raw[starts[b]:starts[e]], starts[b], starts[e])
                                     for p, i, _s, b, e in parts])
        starts2 = _utf8_starts(text) if return_bytes else None
        return {
            "text": text.encode("utf-8") if return_bytes else text,
            "ids": [i for _, i, _, _, _ in parts],
            "pieces": [p.encode("utf-8") if return_bytes else p for p, _, _, _, _ in parts],
            "offsets": [(starts2[b], starts2[e]) if starts2 is not None else (b, e) for _, _, _, b, e in parts],
        }

    def _decode_text(self, pieces: list[str]) -> str:
        return self._decode_spt(pieces)[0]

    def _DecodeIds(self, ids: Any) -> str:
        return self._decode_to(self._ids_to_pieces(ids), "str")  # type: ignore[no-any-return]

    def _DecodeIdsAsBytes(self, ids: Any) -> bytes:
        return self._decode_to(self._ids_to_pieces(ids), "bytes")  # type: ignore[no-any-return]

    def _DecodeIdsAsSerializedProto(self, ids: Any) -> bytes:
        return self._decode_to(self._ids_to_pieces(ids), "serialized_proto")  # type: ignore[no-any-return]

    def _DecodePieces(self, pieces: Any) -> str:
        return self._decode_to(self._to_pieces(pieces), "str")  # type: ignore[no-any-return]

    def _DecodePiecesAsBytes(self, pieces: Any) -> bytes:
        return self._decode_to(self._to_pieces(pieces), "bytes")  # type: ignore[no-any-return]

    def _DecodePiecesAsSerializedProto(self, pieces: Any) -> bytes:
        return self._decode_to(self._to_pieces(pieces), "serialized_proto")  # type: ignore[no-any-return]

    def _as_pieces(self, seq: Any) -> list[str]:
        items = self._batch(seq)
        if items and isinstance(items[0], (str, bytes)):
            return self._to_pieces(items)
        return self._ids_to_pieces(items)

    def _DecodeAsOffsetMapping(self, seq: Any, return_bytes: bool) -> dict[str, Any]:
        items = self._batch(seq)
        as_bytes = return_bytes or bool(items and isinstance(items[0], bytes))
        return self._decode_to(self._as_pieces(items), "offset_mapping", as_bytes)  # type: ignore[no-any-return]

    def _DecodeIdsBatch(self, batch: Any, num_threads: int, thread_pool: Any) -> list[str]:
        return [self._DecodeIds(x) for x in self._batch(batch)]

    def _DecodeIdsAsBytesBatch(self, batch: Any, num_threads: int, thread_pool: Any) -> list[bytes]:
        return [self._DecodeIdsAsBytes(x) for x in self._batch(batch)]

    def _DecodeIdsAsSerializedProtoBatch(self, batch: Any, num_threads: int, thread_pool: Any) -> list[bytes]:
        return [self._DecodeIdsAsSerializedProto(x) for x in self._batch(batch)]

    def _DecodePiecesBatch(self, batch: Any, num_threads: int, thread_pool: Any) -> list[str]:
        return [self._DecodePieces(x) for x in self._batch(batch)]

    def _DecodePiecesAsBytesBatch(self, batch: Any, num_threads: int, thread_pool: Any) -> list[bytes]:
        return [self._DecodePiecesAsBytes(x) for x in self._batch(batch)]

    def _DecodePiecesAsSerializedProtoBatch(self, batch: Any, num_threads: int, thread_pool: Any) -> list[bytes]:
        return [self._DecodePiecesAsSerializedProto(x) for x in self._batch(batch)]

    def _DecodeAsOffsetMappingBatch(self, batch: Any, num_threads: int, thread_pool: Any,
                                    return_bytes: bool) -> list[dict[str, Any]]:
        return [self._DecodeAsOffsetMapping(x, return_bytes) for x in self._batch(batch)]

    # ----------------------------------------------------------- normalizing
    def _Normalize(self, text: Any) -> Any:
        s = _as_str(text)
        norm = self._normalized(s).normalized
        return norm.encode("utf-8") if isinstance(text, bytes) else norm

    def _NormalizeWithOffsets(self, text: Any) -> tuple[Any, list[int]]:
        return normalize_with_offsets(self._normalized, text)


def normalize_with_offsets(normalize: Callable[[str], NormalizedText], text: Any) -> tuple[Any, list[int]]:
    """sentencepiece's ``NormalizeWithOffsets``: the normalized text and, for each of its
    characters (bytes, for bytes input) and its end, where in the input it comes from."""
    s = _as_str(text)
    nt = normalize(s)
    norm = nt.normalized
    starts = [nt.original_span(i, i)[0] for i in range(len(norm) + 1)]
    if not isinstance(text, bytes):
        return norm, starts
    if not norm:  # sentencepiece gives no offsets at all for bytes that normalize to nothing
        return b"", []
    orig = _utf8_starts(s)
    out: list[int] = []
    for i, c in enumerate(norm):
        out.extend([orig[starts[i]]] * len(c.encode("utf-8", "surrogateescape")))
    out.append(orig[starts[-1]])
    return norm.encode("utf-8", "surrogateescape"), out


__all__ = ["Processor", "ThreadPool", "normalize_with_offsets", "RNG", "SETTINGS", "Sequence"]

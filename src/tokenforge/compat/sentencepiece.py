"""sentencepiece's ``SentencePieceProcessor`` on tokenforge.

>>> from tokenforge.compat.sentencepiece import SentencePieceProcessor  # doctest: +SKIP
>>> sp = SentencePieceProcessor(model_file="tokenizer.model")            # doctest: +SKIP
>>> sp.encode("Hello world", add_bos=True)                               # doctest: +SKIP
[1, 15043, 3186]

Code written for ``import sentencepiece as spm`` keeps working with
``import tokenforge.compat.sentencepiece as spm``: the same constructor and
``encode`` options (``out_type``, ``add_bos``, ``add_eos``, ``reverse``,
``emit_unk_piece``, ``enable_sampling``, ``nbest_size``, ``alpha``), the same
ids, pieces, offsets and decoded text as the ``sentencepiece`` library on
the same ``.model`` file, and its lookup methods (``piece_to_id``,
``id_to_piece``, ``get_score``, ``is_control``, ...), in both its snake_case
and CamelCase spellings.

As in sentencepiece, the extra ids follow the order of its
``RewriteIds``: ``reverse`` first, then BOS in front and EOS at the end.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, cast

from ..errors import InvalidArgumentError, UnknownIdError
from ..sentencepiece.constants import PieceType
from .._io import read_bytes
from ..sentencepiece.proto import ModelProto, decode_model, read_model

if TYPE_CHECKING:
    from ..decoders import Decoder
    from ..tokenizer import Tokenizer

__all__ = ["SentencePieceProcessor"]


class SentencePieceProcessor:
    """A loaded ``.model`` with sentencepiece's Python API."""

    def __init__(
        self,
        model_file: str | os.PathLike[str] | None = None,
        model_proto: bytes | None = None,
        out_type: type | str = int,
        add_bos: bool = False,
        add_eos: bool = False,
        reverse: bool = False,
        emit_unk_piece: bool = False,
        enable_sampling: bool = False,
        nbest_size: int = -1,
        alpha: float = 0.1,
        num_threads: int = -1,
    ) -> None:
        self._tok: Tokenizer | None = None
        self._defaults = dict(
            out_type=out_type, add_bos=add_bos, add_eos=add_eos, reverse=reverse, emit_unk_piece=emit_unk_piece,
            enable_sampling=enable_sampling, nbest_size=nbest_size, alpha=alpha,
        )
        if model_file is not None or model_proto is not None:
            self.load(model_file=model_file, model_proto=model_proto)

    # ------------------------------------------------------------- loading
    def load(self, model_file: str | os.PathLike[str] | None = None, model_proto: bytes | None = None) -> bool:
        """Load a ``.model`` file (or its serialized bytes)."""
        from ..presets import sentencepiece as load_sentencepiece

        if (model_file is None) == (model_proto is None):
            raise InvalidArgumentError("give exactly one of model_file= and model_proto=")
        if model_file is not None:
            data = read_bytes(model_file)
            proto = decode_model(data, path=model_file)
        else:
            data = bytes(cast(bytes, model_proto))
            proto = read_model(data)
        self._proto = proto
        self._serialized = data
        self._tok = load_sentencepiece(proto, name=os.path.basename(os.fspath(model_file)) if model_file else None)
        self._pieces: list[str] = [p.piece for p in proto.pieces]
        self._types: list[int] = [p.type for p in proto.pieces]
        self._scores: list[float] = [p.score for p in proto.pieces]
        self._ids = {p: i for i, p in reversed(list(enumerate(self._pieces)))}
        ts = proto.trainer_spec
        self._unk = self._special_id(ts.unk_piece, PieceType.UNKNOWN)
        self._bos = self._special_id(ts.bos_piece, PieceType.CONTROL, PieceType.USER_DEFINED)
        self._eos = self._special_id(ts.eos_piece, PieceType.CONTROL, PieceType.USER_DEFINED)
        self._pad = self._special_id(ts.pad_piece, PieceType.CONTROL, PieceType.USER_DEFINED)
        return True

    Load = load
    LoadFromFile = load_from_file = load

    def load_from_serialized_proto(self, serialized: bytes) -> bool:
        return self.load(model_proto=serialized)

    LoadFromSerializedProto = load_from_serialized_proto

    def _special_id(self, piece: str, *types: int) -> int:
        i = self._ids.get(piece)
        return i if i is not None and self._types[i] in types else -1

    @property
    def tokenizer(self) -> Tokenizer:
        """The :class:`tokenforge.Tokenizer` behind this processor."""
        return self._loaded()

    def _loaded(self) -> Tokenizer:
        if self._tok is None:
            raise InvalidArgumentError("no model is loaded: call load(model_file=...) first")
        return self._tok

    # ------------------------------------------------------------ encoding
    def encode(
        self,
        input: str | Sequence[str],
        out_type: type | str | None = None,
        add_bos: bool | None = None,
        add_eos: bool | None = None,
        reverse: bool | None = None,
        emit_unk_piece: bool | None = None,
        enable_sampling: bool | None = None,
        nbest_size: int | None = None,
        alpha: float | None = None,
        num_threads: int | None = None,
    ) -> Any:
        """Ids (``out_type=int``) or pieces (``out_type=str``) of a text or a list of texts."""
        opts = dict(self._defaults)
        for key, value in (("out_type", out_type), ("add_bos", add_bos), ("add_eos", add_eos), ("reverse", reverse),
                           ("emit_unk_piece", emit_unk_piece), ("enable_sampling", enable_sampling),
                           ("nbest_size", nbest_size), ("alpha", alpha)):
            if value is not None:
                opts[key] = value
        if opts["out_type"] not in (int, str):
            raise InvalidArgumentError(f"out_type must be int or str, got {opts['out_type']!r}")
        if isinstance(input, str):
            return self._encode_one(input, opts)
        if isinstance(input, Iterable):
            return [self._encode_one(t, opts) for t in input]
        raise InvalidArgumentError(f"input must be a str or a list of str, got {type(input).__name__}")

    Encode = tokenize = Tokenize = encode

    def _encode_one(self, text: str, opts: dict[str, Any]) -> list[Any]:
        tok = self._loaded()
        if not isinstance(text, str):
            raise InvalidArgumentError(f"input must be str, got {type(text).__name__}")
        as_pieces = opts["out_type"] is str
        if opts["enable_sampling"]:
            ids = self._sample(text, opts["nbest_size"], opts["alpha"])
            out: list[Any] = [self._pieces[i] for i in ids] if as_pieces else ids
        elif as_pieces:
            enc = tok.encode_full(text, add_special_tokens=False, disallowed_special=())
            unk = self._unk
            out = [self._pieces[i] if (i == unk and opts["emit_unk_piece"]) else t for i, t in zip(enc.ids, enc.tokens)]
        else:
            out = tok.encode(text, add_special_tokens=False, disallowed_special=())
        if opts["reverse"]:
            out.reverse()
        if opts["add_bos"]:
            out.insert(0, self._extra(self._bos, "bos", as_pieces))
        if opts["add_eos"]:
            out.append(self._extra(self._eos, "eos", as_pieces))
        return out

    def _extra(self, i: int, what: str, as_piece: bool) -> int | str:
        if i < 0:
            raise InvalidArgumentError(f"this model defines no {what} piece, so add_{what} cannot be used")
        return self._pieces[i] if as_piece else i

    def _sample(self, text: str, nbest_size: int, alpha: float) -> list[int]:
        tok = self._loaded()
        if self._proto.trainer_spec.model_type == 2:  # BPE: BPE-dropout with probability alpha
            return tok.encode(text, add_special_tokens=False, disallowed_special=(), dropout=alpha)
        return tok.encode(text, add_special_tokens=False, disallowed_special=(), sample=True, alpha=alpha,
                          nbest_size=nbest_size)

    def encode_as_ids(self, input: str | Sequence[str], **kwargs: Any) -> Any:
        return self.encode(input, out_type=int, **kwargs)

    def encode_as_pieces(self, input: str | Sequence[str], **kwargs: Any) -> Any:
        return self.encode(input, out_type=str, **kwargs)

    EncodeAsIds = encode_as_ids
    EncodeAsPieces = encode_as_pieces

    def sample_encode_as_ids(self, input: str, nbest_size: int = -1, alpha: float = 0.1) -> Any:
        return self.encode(input, out_type=int, enable_sampling=True, nbest_size=nbest_size, alpha=alpha)

    def sample_encode_as_pieces(self, input: str, nbest_size: int = -1, alpha: float = 0.1) -> Any:
        return self.encode(input, out_type=str, enable_sampling=True, nbest_size=nbest_size, alpha=alpha)

    SampleEncodeAsIds = sample_encode_as_ids
    SampleEncodeAsPieces = sample_encode_as_pieces

    def nbest_encode_as_ids(self, input: str, nbest_size: int) -> list[list[int]]:
        """The ``nbest_size`` best segmentations (Unigram models)."""
        return [ids for ids, _ in self._loaded().nbest(input, nbest_size)]

    def nbest_encode_as_pieces(self, input: str, nbest_size: int) -> list[list[str]]:
        return [[self._pieces[i] for i in ids] for ids in self.nbest_encode_as_ids(input, nbest_size)]

    NBestEncodeAsIds = nbest_encode_as_ids
    NBestEncodeAsPieces = nbest_encode_as_pieces

    def normalize(self, input: str | Sequence[str]) -> Any:
        """The normalized text sentencepiece segments (``▁`` for spaces)."""
        norm = self._loaded().normalizer
        if isinstance(input, str):
            return norm.normalize_str(input) if norm is not None else input
        return [self.normalize(t) for t in input]

    Normalize = normalize

    # ------------------------------------------------------------ decoding
    def decode(self, input: Any, out_type: type = str) -> Any:
        """Text of ids or pieces, or of a list of such lists."""
        if isinstance(input, int):
            return self._decode_one([input])
        if isinstance(input, str):
            return self._decode_one([input])
        items = list(input)
        if items and all(isinstance(x, (list, tuple)) for x in items):
            return [self._decode_one(list(x)) for x in items]
        return self._decode_one(items)

    Decode = detokenize = Detokenize = decode

    def _decode_one(self, items: list[Any]) -> str:
        tok = self._loaded()
        if not items:
            return ""
        if all(isinstance(x, int) and not isinstance(x, bool) for x in items):
            return tok.decode(items)
        if all(isinstance(x, str) for x in items):
            # Pieces: known pieces decode as their ids would; other strings are their own text.
            return cast("Decoder", tok.decoder).decode(items)
        raise InvalidArgumentError("decode takes ids or pieces, not a mix")

    def decode_ids(self, input: Any) -> Any:
        return self.decode(input)

    def decode_pieces(self, input: Any) -> Any:
        return self.decode(input)

    DecodeIds = decode_ids
    DecodePieces = decode_pieces

    # -------------------------------------------------------------- lookup
    def get_piece_size(self) -> int:
        self._loaded()
        return len(self._pieces)

    GetPieceSize = vocab_size = piece_size = get_piece_size

    def __len__(self) -> int:
        return self.get_piece_size()

    def piece_to_id(self, piece: str | Sequence[str]) -> Any:
        """The id of a piece (``unk_id()`` for a string that is no piece)."""
        self._loaded()
        if isinstance(piece, str):
            return self._ids.get(piece, self._unk)
        return [self.piece_to_id(p) for p in piece]

    def id_to_piece(self, id: int | Sequence[int]) -> Any:
        self._loaded()
        if isinstance(id, int):
            return self._pieces[self._check(id)]
        return [self.id_to_piece(i) for i in id]

    PieceToId = piece_to_id
    IdToPiece = id_to_piece

    def _check(self, i: int) -> int:
        if not isinstance(i, int) or isinstance(i, bool) or not 0 <= i < len(self._pieces):
            raise UnknownIdError(f"piece id {i!r} is out of range (0..{len(self._pieces) - 1})")
        return i

    def get_score(self, id: int | Sequence[int]) -> Any:
        self._loaded()
        if isinstance(id, int):
            return self._scores[self._check(id)]
        return [self.get_score(i) for i in id]

    GetScore = get_score

    def _is(self, id: int, kind: int) -> bool:
        self._loaded()
        return self._types[self._check(id)] == kind

    def is_unknown(self, id: int) -> bool:
        return self._is(id, PieceType.UNKNOWN)

    def is_control(self, id: int) -> bool:
        return self._is(id, PieceType.CONTROL)

    def is_unused(self, id: int) -> bool:
        return self._is(id, PieceType.UNUSED)

    def is_byte(self, id: int) -> bool:
        return self._is(id, PieceType.BYTE)

    IsUnknown, IsControl, IsUnused, IsByte = is_unknown, is_control, is_unused, is_byte

    def unk_id(self) -> int:
        self._loaded()
        return self._unk

    def bos_id(self) -> int:
        self._loaded()
        return self._bos

    def eos_id(self) -> int:
        self._loaded()
        return self._eos

    def pad_id(self) -> int:
        self._loaded()
        return self._pad

    def serialized_model_proto(self) -> bytes:
        """The ``.model`` file's bytes."""
        self._loaded()
        return self._serialized

    @property
    def model_proto(self) -> ModelProto:
        """The parsed ``ModelProto`` (tokenforge's reader)."""
        self._loaded()
        return self._proto

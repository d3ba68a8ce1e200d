"""SentencePiece ``.model`` <-> :class:`~tokenforge.Tokenizer`, both directions.

:func:`tokenizer_from_proto` builds the pipeline that gives sentencepiece's
ids for a ``ModelProto``: the normalizer of ``normalizer.cc`` with the file's
own charsmap, the Unigram (Kudo, 2018) or score-driven BPE model of
``unigram_model.cc``/``bpe_model.cc`` over the ``▁``-escaped text, control
pieces as special tokens and sentencepiece's decoder (Kudo & Richardson,
2018). :func:`proto_from_tokenizer` (defined in :mod:`.export`, which
``Tokenizer.save`` reaches without importing this module) is the way back;
``.model`` -> Tokenizer -> ``.model`` -> Tokenizer keeps every id.
"""

from __future__ import annotations

import math
import os
from typing import Any

from .. import decoders, postprocessors, pretokenizers
from .._plans import SP_WORD_SPLIT, sentencepiece_split_is_exact
from ..errors import FileFormatError
from ..models.bpe import PieceBPE
from ..models.unigram import Unigram
from ..models.wordlevel import PieceLookup
from ..tokenizer import AddedToken, Tokenizer
from .constants import SPACE, PieceType
from .export import proto_from_tokenizer
from .hf import hf_form
from .normalizer import SentencePieceNormalizer
from .proto import ModelProto, ModelType

__all__ = ["hf_approximation", "proto_from_tokenizer", "tokenizer_from_proto"]


def tokenizer_from_proto(
    proto: ModelProto,
    *,
    add_bos: bool = False,
    add_eos: bool = False,
    name: str | None = None,
    path: str | os.PathLike | None = None,
) -> Tokenizer:
    """A pipeline equal to the ``sentencepiece`` library on ``proto`` (a parsed ``.model``).

    Encoding runs SentencePiece's normalizer (its precompiled charsmap,
    whitespace clean-up, dummy prefix and ``▁`` escaping, user-defined symbols
    kept whole), then the Unigram or BPE model over the escaped text. Control
    pieces (``<s>``, ``</s>``, ...) are special tokens that text never produces:
    ``"<s>"`` in the text is ordinary text, as in sentencepiece (unless the call
    allows it with ``allowed_special``), and ``add_bos``/``add_eos`` put them in by code.
    Decoding drops control pieces, turns ``<unk>`` into ``" ⁇ "``, joins byte
    pieces into UTF-8 and ``▁`` back into spaces, as ``sentencepiece`` does.
    ``path`` only names the file in errors.
    """
    check_like_sentencepiece(proto, path)
    spec = proto.normalizer_spec
    ts = proto.trainer_spec
    pieces = [p.piece for p in proto.pieces]
    types = piece_types(proto)
    if ts.model_type == ModelType.BPE and "\0" in pieces and types[pieces.index("\0")] == PieceType.UNUSED:
        # sentencepiece leaves such a piece out of its vocabulary: text never gives its id,
        # yet decoding the id gives "\0"; tokenforge's BPE would give it for a NUL in text
        raise FileFormatError(
            f"piece {pieces.index(chr(0))} is a NUL character that sentencepiece reads as UNUSED and leaves out of "
            "its BPE vocabulary; tokenforge cannot keep such an id out of encoding, so it refuses the model "
            "rather than give other ids",
            path=path,
        )
    scores = [float(p.score) for p in proto.pieces]
    user_defined = [p for p, t in zip(pieces, types) if t == PieceType.USER_DEFINED]
    # sentencepiece normalizes with the blob alone: a name without a blob is no rule at all.
    rules: Any = spec.precompiled_charsmap if spec.precompiled_charsmap else "identity"
    normalizer = SentencePieceNormalizer(
        rules,
        add_dummy_prefix=spec.add_dummy_prefix,
        remove_extra_whitespaces=spec.remove_extra_whitespaces,
        escape_whitespaces=spec.escape_whitespaces,
        user_defined_symbols=user_defined,
        name=spec.name or None,
    )
    unk_ids = [i for i, t in enumerate(types) if t == PieceType.UNKNOWN]
    unk_id = unk_ids[0] if unk_ids else None
    if ts.treat_whitespace_as_suffix:
        raise FileFormatError(
            "SentencePiece models with treat_whitespace_as_suffix (▁ at the end of pieces) are not supported",
            path=path,
        )
    if ts.model_type == ModelType.UNIGRAM:
        model = Unigram(list(zip(pieces, scores)), unk_id=unk_id, byte_fallback=ts.byte_fallback, types=types)
    elif ts.model_type == ModelType.BPE:
        model = PieceBPE.from_sentencepiece(pieces, scores, types, byte_fallback=ts.byte_fallback)
    elif ts.model_type in (ModelType.WORD, ModelType.CHAR):
        model = PieceLookup(pieces, types, "word" if ts.model_type == ModelType.WORD else "char")
    else:
        raise FileFormatError(
            f"SentencePiece model_type {_model_type_name(ts.model_type)} is not supported (only UNIGRAM, BPE, WORD "
            "and CHAR)",
            path=path,
        )
    controls = [AddedToken(p, i, special=True) for i, (p, t) in enumerate(zip(pieces, types)) if t == PieceType.CONTROL]
    pre = None
    if (
        ts.model_type == ModelType.BPE and spec.escape_whitespaces and not ts.treat_whitespace_as_suffix
        and sentencepiece_split_is_exact(pieces, user_defined)
    ):
        # Exact (see above), and it lets the encoder memoise words. Not for Unigram:
        # sentencepiece sums path scores over the whole text in 32-bit floats, so
        # where a word's Viterbi ties are broken depends on the text before it.
        pre = pretokenizers.Split(SP_WORD_SPLIT, "merged_with_next")
    post = None
    if add_bos or add_eos:
        by_piece = {p: i for i, p in enumerate(pieces)}
        single: list[str] = []
        special: list[tuple[str, int]] = []
        if add_bos:
            single.append(ts.bos_piece)
            special.append((ts.bos_piece, by_piece.get(ts.bos_piece, ts.bos_id)))
        single.append("$A")
        if add_eos:
            single.append(ts.eos_piece)
            special.append((ts.eos_piece, by_piece.get(ts.eos_piece, ts.eos_id)))
        pair = single + [x + ":1" if x != "$A" else "$B:1" for x in single]
        post = postprocessors.TemplateProcessing(single, pair, special)
    decoder = decoders.SentencePiece(
        spec.add_dummy_prefix, spec.remove_extra_whitespaces,
        pieces[unk_id] if unk_id is not None else None, ts.unk_surface, [t.content for t in controls],
    )
    return Tokenizer(
        model,
        normalizer=normalizer,
        pre_tokenizer=pre,
        post_processor=post,
        decoder=decoder,
        added_tokens=controls,
        name=name,
        specials_in_text="text",  # sentencepiece never reads control pieces from text
    )


def _model_type_name(value: int) -> str:
    try:
        return ModelType(value).name
    except ValueError:
        return f"{value} (not a sentencepiece model type)"


def check_like_sentencepiece(proto: ModelProto, path: Any = None) -> None:
    """Refuse what ``sentencepiece`` refuses when it loads a model, with its reasons
    (``SentencePieceProcessor::Load`` of sentencepiece 0.2.3: ``model_interface.cc``,
    ``unigram_model.cc``, ``bpe_model.cc``, ``normalizer.cc`` and its double-array trie):

    * a piece that is empty, 8000 bytes or longer, or holds a NUL character (a piece that
      is exactly ``"\\0"`` is skipped when UNUSED, and is UNUSED under byte fallback);
    * a piece given twice: among the normal (NORMAL, USER_DEFINED, UNUSED) or among the
      other pieces of a Unigram model, among all pieces of a BPE model;
    * two unknown pieces, or none without byte fallback;
    * a byte piece without byte fallback or that is not ``<0xXX>``, byte fallback
      without all 256 byte pieces;
    * a NaN or infinite score in a Unigram model;
    * a charsmap (normalizer's or denormalizer's) that is too short, whose trie size
      does not fit the blob or is not a positive multiple of 1024, whose strings do not
      end with a NUL byte, or whose trie points outside itself or its strings.
    """
    from .constants import byte_piece

    def fail(msg: str) -> FileFormatError:
        return FileFormatError(f"{msg} (sentencepiece refuses this model too)", path=path)

    ts = proto.trainer_spec
    byte_fallback = bool(ts.byte_fallback)
    one_table = ts.model_type == ModelType.BPE  # bpe::Model keeps every piece in one map
    seen_normal: dict[str, int] = {}
    seen_reserved: dict[str, int] = {}
    unk = None
    byte_ids: dict[int, int] = {}
    valid_bytes = {byte_piece(b): b for b in range(256)}
    for i, p in enumerate(proto.pieces):
        size = len(p.piece.encode("utf-8"))
        if size >= _MAX_PIECE_BYTES:
            raise fail(f"piece {i} is {size} bytes long; pieces are shorter than {_MAX_PIECE_BYTES} bytes")
    for i, (p, kind) in enumerate(zip(proto.pieces, piece_types(proto))):
        if not p.piece:
            raise fail(f"piece {i} is empty")
        if p.piece == "\0" and kind == PieceType.UNUSED:
            continue
        if "\0" in p.piece:
            raise fail(f"piece {i} {p.piece!r} holds a NUL character")
        normal = kind in (PieceType.NORMAL, PieceType.USER_DEFINED, PieceType.UNUSED)
        table = seen_normal if normal or one_table else seen_reserved
        if p.piece in table:
            raise fail(f"piece {i} {p.piece!r} is already defined (as piece {table[p.piece]})")
        table[p.piece] = i
        if kind == PieceType.UNKNOWN:
            if unk is not None:
                raise fail(f"piece {i} {p.piece!r} is a second unknown piece (the first is piece {unk})")
            unk = i
        if kind == PieceType.BYTE:
            if not byte_fallback:
                raise fail(f"byte piece {i} {p.piece!r} is found although byte_fallback is false")
            if p.piece not in valid_bytes:
                raise fail(f"byte piece {i} {p.piece!r} is not of the form <0xXX>")
            byte_ids[valid_bytes[p.piece]] = i
    if unk is None and not byte_fallback:
        raise fail("no piece has type UNKNOWN")
    if byte_fallback and len(byte_ids) != 256:
        raise fail(f"byte_fallback is true but there are {len(byte_ids)} byte pieces, not 256")
    if ts.model_type == ModelType.UNIGRAM:
        for i, p in enumerate(proto.pieces):
            if not math.isfinite(p.score):
                raise fail(f"piece {i} {p.piece!r} has score {p.score}; a Unigram model's scores are finite")
    _check_charsmap(proto.normalizer_spec.precompiled_charsmap, "normalizer_spec.precompiled_charsmap", fail)
    if proto.has("denormalizer_spec"):
        _check_charsmap(proto.denormalizer_spec.precompiled_charsmap, "denormalizer_spec.precompiled_charsmap", fail)


#: sentencepiece refuses pieces of this many bytes or more (``kMaxPieceSize``)
_MAX_PIECE_BYTES = 8000


def piece_types(proto: ModelProto) -> list[int]:
    """The type of each piece as ``sentencepiece`` uses it: a piece that is exactly ``"\\0"``
    is UNUSED when the model has byte fallback (sentencepiece's workaround for converters
    that add a raw NUL piece beside ``<0x00>``)."""
    byte_fallback = bool(proto.trainer_spec.byte_fallback)
    return [PieceType.UNUSED if byte_fallback and p.piece == "\0" else int(p.type) for p in proto.pieces]


def _check_charsmap(blob: bytes, field: str, fail: Any) -> None:
    """sentencepiece's ``Normalizer::DecodePrecompiledCharsMap`` and ``DoubleArray::validate``
    on a precompiled charsmap: ``<trie size: uint32 LE><double-array trie><NUL-terminated strings>``."""
    if not blob:
        return
    if len(blob) <= 4:
        raise fail(f"{field}: a {len(blob)}-byte blob is too short to hold the trie size")
    size = int.from_bytes(blob[:4], "little")
    if size >= len(blob) - 4:
        raise fail(f"{field}: the trie size {size} does not fit the {len(blob)}-byte blob")
    if size < 1024 or size % 1024:
        raise fail(f"{field}: the trie size {size} is not a multiple of 1024")
    strings = len(blob) - 4 - size
    if blob[-1] != 0:
        raise fail(f"{field}: the normalized strings after the trie do not end with a NUL byte")
    bad = _first_invalid_unit(blob[4:4 + size], strings)
    if bad is not None:
        raise fail(f"{field}: trie unit {bad} (byte {4 + 4 * bad} of the blob) points outside the trie or its strings")


def _first_invalid_unit(trie: bytes, strings: int) -> int | None:
    """The first unit ``Darts::DoubleArray::validate(strings)`` rejects (darts-clone as
    sentencepiece ships it), or ``None``. A unit is ``uint32``: label (bits 0-7 and 31),
    has-leaf (bit 8), offset (bits 10-31, shifted by 8 when bit 9 is set); a leaf holds
    a value (bits 0-30), an offset into the strings."""
    import numpy as np

    units = np.frombuffer(trie, dtype="<u4").astype(np.int64)
    n = len(units)
    label = units & 0x800000FF
    has_leaf = (units >> 8) & 1
    offset = (units >> 10) << ((units & 0x200) >> 6)
    index = np.arange(n, dtype=np.int64)
    target = index ^ offset
    if label[0] != 0 or has_leaf[0] or offset[0] == 0 or (offset[0] | 0xFF) >= n:
        return 0
    inner = label <= 0xFF
    inner[0] = False
    bad = inner & ((target | 0xFF) >= n)
    leaf = inner & ~bad & (has_leaf == 1)
    bad |= leaf & (label[np.where(leaf, target, 0)] <= 0xFF)
    value = units & 0x7FFFFFFF
    bad |= ~inner & (index > 0) & (value >= strings)
    hits = np.flatnonzero(bad)
    return int(hits[0]) if len(hits) else None


def hf_approximation(tokenizer: Tokenizer) -> dict[str, Any]:
    """The HF ``tokenizer.json`` document :func:`~tokenforge.sentencepiece.hf.hf_form`
    builds for a SentencePiece tokenizer (exact or not)."""
    return hf_form(tokenizer)[0]

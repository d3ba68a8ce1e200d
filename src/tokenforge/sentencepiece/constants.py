"""The constants of SentencePiece's model format, defined once for all of tokenforge.

SentencePiece (Kudo & Richardson, 2018, "SentencePiece: A simple and language
independent subword tokenizer and detokenizer for Neural Text Processing",
EMNLP demo) treats text as a sequence of Unicode characters and writes a space
as ``▁`` (U+2581, ``kSpaceSymbol`` in ``normalizer.h``). Every vocabulary entry
of a ``.model`` file carries a type (``ModelProto.SentencePiece.Type`` in
``sentencepiece_model.proto``), byte-fallback pieces are spelled ``<0xAB>``
(``ByteToPiece`` in ``bpe_model.cc``/``unigram_model.cc``), and scores are
32-bit floats, so arithmetic that must match sentencepiece rounds through
:func:`f32`. The trainers, models, normalizer, decoders and file converters
all import these names from here.

>>> SPACE, PieceType.BYTE, byte_piece(0xE9), piece_byte("<0xE9>"), f32(0.1)
('▁', <PieceType.BYTE: 6>, '<0xE9>', 233, 0.10000000149011612)
"""

from __future__ import annotations

import math
import re
import struct
from enum import IntEnum

__all__ = ["SPACE", "UNK_CHAR", "PieceType", "byte_piece", "f32", "piece_byte"]

#: SentencePiece's whitespace mark: a space is written ``▁`` (U+2581).
SPACE = "\u2581"
#: The character the trainers put in place of characters left out of the
#: alphabet (sentencepiece's ``kUNKChar``, U+2585).
UNK_CHAR = "\u2585"


class PieceType(IntEnum):
    """``ModelProto.SentencePiece.Type``: what kind of vocabulary entry a piece is."""

    NORMAL = 1
    UNKNOWN = 2
    CONTROL = 3
    USER_DEFINED = 4
    UNUSED = 5
    BYTE = 6


def byte_piece(b: int) -> str:
    """The byte-fallback piece of byte ``b``, as sentencepiece and HF spell it.

    >>> byte_piece(0xE9), byte_piece(65)
    ('<0xE9>', '<0x41>')
    """
    return f"<0x{b:02X}>"


_BYTE_PIECE = re.compile(r"<0x([0-9A-F]{2})>")


def piece_byte(piece: str) -> int | None:
    """The inverse of :func:`byte_piece`: the byte of ``"<0xAB>"``, else ``None``.

    >>> piece_byte("<0x0A>"), piece_byte("<0x0a>"), piece_byte("a")
    (10, None, None)
    """
    m = _BYTE_PIECE.fullmatch(piece)
    return int(m.group(1), 16) if m else None


_F32 = struct.Struct("<f")


def f32(x: float) -> float:
    """``x`` rounded to the nearest 32-bit float (sentencepiece keeps scores as floats);
    magnitudes beyond float32's range become infinities."""
    try:
        return _F32.unpack(_F32.pack(x))[0]
    except OverflowError:
        return math.copysign(math.inf, x)

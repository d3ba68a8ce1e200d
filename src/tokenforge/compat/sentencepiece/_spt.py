"""``SentencePieceText`` and ``NBestSentencePieceText`` in protobuf's wire format.

sentencepiece returns a segmentation with its offsets as these messages
(``sentencepiece.proto``)::

    message SentencePieceText {
      message SentencePiece {
        optional string piece = 1;  optional uint32 id = 2;  optional string surface = 3;
        optional uint32 begin = 4;  optional uint32 end = 5;
      }
      optional string text = 1;  repeated SentencePiece pieces = 2;  optional float score = 3;
    }
    message NBestSentencePieceText { repeated SentencePieceText nbests = 1; }

``begin``/``end`` are UTF-8 byte offsets into ``text``. Fields are written in
field-number order and only when set (proto2 presence), as protobuf's C++
serializer writes them, so the bytes equal sentencepiece's.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass


@dataclass
class Piece:
    """One piece of a segmentation: ``surface`` ``None`` when sentencepiece leaves it unset."""

    piece: bytes
    id: int
    surface: bytes | None
    begin: int
    end: int


def _varint(n: int, out: bytearray) -> None:
    n &= 0xFFFFFFFFFFFFFFFF
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)


def _bytes_field(number: int, value: bytes, out: bytearray) -> None:
    _varint(number << 3 | 2, out)
    _varint(len(value), out)
    out += value


def encode_text(text: bytes, pieces: list[Piece], score: float | None = None) -> bytes:
    """The serialized ``SentencePieceText`` of ``text`` and its ``pieces``."""
    out = bytearray()
    _bytes_field(1, text, out)
    for p in pieces:
        sub = bytearray()
        _bytes_field(1, p.piece, sub)
        sub.append(2 << 3)
        _varint(p.id, sub)
        if p.surface is not None:
            _bytes_field(3, p.surface, sub)
        sub.append(4 << 3)
        _varint(p.begin, sub)
        sub.append(5 << 3)
        _varint(p.end, sub)
        _bytes_field(2, bytes(sub), out)
    if score is not None:
        out.append(3 << 3 | 5)
        out += struct.pack("<f", score)
    return bytes(out)


def encode_nbest(texts: list[bytes]) -> bytes:
    """The serialized ``NBestSentencePieceText`` of serialized ``SentencePieceText`` messages."""
    out = bytearray()
    for t in texts:
        _bytes_field(1, t, out)
    return bytes(out)

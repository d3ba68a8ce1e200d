"""SentencePiece ``.model`` files as a format leaf of :mod:`tokenforge.formats`.

The reader/writer lives in :mod:`tokenforge.sentencepiece.proto` and the
tokenizer-to-``ModelProto`` conversion in :mod:`tokenforge.sentencepiece.export`;
this module re-exports them beside the other formats.
"""

from __future__ import annotations

from ..sentencepiece.export import proto_from_tokenizer
from ..sentencepiece.proto import (
    ModelProto,
    ModelType,
    NormalizerSpec,
    PieceType,
    SelfTestData,
    SelfTestSample,
    SentencePiece,
    TrainerSpec,
    build_model_proto,
    decode_model,
    encode_model,
    read_model,
    write_model,
)

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
    "proto_from_tokenizer",
]

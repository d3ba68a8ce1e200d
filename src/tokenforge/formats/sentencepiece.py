"""SentencePiece ``.model`` files as a format leaf of :mod:`tokenforge.formats`.

The reader/writer lives in :mod:`tokenforge.sentencepiece.proto` and the
tokenizer-to-``ModelProto`` conversion in :mod:`tokenforge.sentencepiece.export`;
this module re-exports them beside the other formats.
"""

from __future__ import annotations

from ..sentencepiece import proto as _proto
from ..sentencepiece.export import proto_from_tokenizer
from ..sentencepiece.proto import *  # noqa: F403  (the reader/writer, re-exported whole)

__all__ = [*_proto.__all__, "proto_from_tokenizer"]

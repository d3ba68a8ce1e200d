"""``SentencePieceText`` and ``NBestSentencePieceText`` as protobuf classes (needs ``protobuf``),
like sentencepiece's generated module of the same name."""

from ._protos import TEXT_FILE as DESCRIPTOR
from ._protos import message_class

SentencePieceText = message_class("sentencepiece.SentencePieceText")
NBestSentencePieceText = message_class("sentencepiece.NBestSentencePieceText")

__all__ = ["DESCRIPTOR", "NBestSentencePieceText", "SentencePieceText"]

"""The models: byte-level BPE (``BPE``), BPE over Unicode pieces (``PieceBPE``),
``WordPiece``, ``Unigram`` and ``WordLevel``. ``model_from_dict`` reads HF tokenizer.json's model object."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import FileFormatError


def model_from_dict(data: Mapping[str, Any] | None) -> Any:
    """Rebuild a model from its serialized form (HF tokenizer.json's ``"model"``)."""
    if not isinstance(data, Mapping):
        raise FileFormatError(f"model must be an object, got {type(data).__name__}")
    kind = data.get("type")
    if kind is None:
        # Old HF files have no "type": tell the models apart by their fields.
        if "merges" in data:
            kind = "BPE"
        elif "continuing_subword_prefix" in data and "max_input_chars_per_word" in data:
            kind = "WordPiece"
        elif isinstance(data.get("vocab"), list):
            kind = "Unigram"
    if kind == "bpe":
        from .bpe import BPE

        return BPE.from_dict(data)
    if kind == "WordPiece":
        from .wordpiece import WordPiece

        return WordPiece.from_dict(data)
    if kind == "Unigram":
        from .unigram import Unigram

        return Unigram.from_dict(data)
    if kind in ("BPE", "SentencePieceBPE"):
        from .bpe import PieceBPE

        return PieceBPE.from_dict(data)
    if kind == "WordLevel":
        from .wordlevel import WordLevel

        return WordLevel.from_dict(data)
    raise FileFormatError(f"unsupported model type {kind!r} (known: bpe, BPE, SentencePieceBPE, WordPiece, Unigram, WordLevel)")

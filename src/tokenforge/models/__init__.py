"""The models: byte-level BPE (``BPE``), BPE over Unicode pieces (``PieceBPE``),
``WordPiece``, ``Unigram`` and ``WordLevel``, all :class:`~tokenforge.models.base.Model` s
registered in :data:`~tokenforge.models.base.MODELS`. ``model_from_dict`` reads HF
tokenizer.json's model object."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import FileFormatError
from .base import MODELS, Model
from .bpe import BPE, PieceBPE
from .unigram import Unigram
from .wordlevel import WordLevel
from .wordpiece import WordPiece

__all__ = ["BPE", "MODELS", "Model", "PieceBPE", "Unigram", "WordLevel", "WordPiece", "model_from_dict"]


def model_from_dict(data: Mapping[str, Any] | None) -> Model:
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
    return MODELS.lookup(kind).from_dict(data)

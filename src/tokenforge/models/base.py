"""The contract of a model: a piece of pre-tokenized text in, token ids out."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any

from .._component import Registered, Registry

#: The models by the ``"type"`` of their serialized form (HF tokenizer.json's ``"model"``).
MODELS: Registry[Model] = Registry("model")


class Model(Registered, ABC):
    """Base class of :class:`~tokenforge.models.bpe.BPE`, :class:`~tokenforge.models.bpe.PieceBPE`,
    :class:`~tokenforge.models.wordpiece.WordPiece`, :class:`~tokenforge.models.unigram.Unigram`
    and :class:`~tokenforge.models.wordlevel.WordLevel`.

    Subclasses set ``type_name`` (the ``"type"`` of the serialized form, which
    registers them in :data:`MODELS`). Equality is each model's own (comparing
    whole vocabularies through ``to_dict`` would be slow).
    """

    __slots__ = ()
    registry = MODELS

    @abstractmethod
    def encode_piece(self, piece: str) -> list[int]:
        """The ids of one pre-tokenized piece."""

    @abstractmethod
    def tokenize(self, piece: str) -> list[tuple[int, int, int]]:
        """``(id, start, end)`` per token of ``piece``, in code points of the piece."""

    @abstractmethod
    def id_to_token(self, token_id: int) -> str | None:
        """The token string of an id, ``None`` for an id the model does not have."""

    @abstractmethod
    def token_to_id(self, token: str) -> int | None:
        """The id of a token string, ``None`` when it is not in the vocabulary."""

    @abstractmethod
    def get_vocab(self) -> dict[str, int]:
        """``{token: id}``."""

    @property
    @abstractmethod
    def vocab_size(self) -> int:
        """The number of tokens."""

    @abstractmethod
    def to_dict(self) -> dict[str, Any]:
        """The model in HF tokenizer.json's shape, with its ``"type"``."""

    @classmethod
    @abstractmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Any:
        """Build from the serialized form; :class:`~tokenforge.errors.FileFormatError` naming a bad field."""

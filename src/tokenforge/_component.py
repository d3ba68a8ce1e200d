"""What every pipeline stage shares: equality, hashing and repr through its serialized form."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any


class Component(ABC):
    """A pipeline stage (pre-tokenizer, post-processor, decoder) that is defined by
    its ``to_dict()``: two stages are equal when they serialize equally."""

    @abstractmethod
    def to_dict(self) -> dict[str, Any]:
        """The stage in HF tokenizer.json's shape, with its ``"type"``."""

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.to_dict() == self.to_dict()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(repr(self.to_dict()))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.to_dict()!r})"

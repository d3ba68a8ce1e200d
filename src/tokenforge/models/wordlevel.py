"""WordLevel: each pre-token is looked up whole; anything else is the unknown token.

The simplest model (HF tokenizers' ``WordLevel``): no subwords, so it is only
useful when the pre-tokenizer already cuts text into known units, and as a
test bed for the other pipeline stages.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import FileFormatError, UnknownTokenError
from ..limits import check_token_sizes
from .base import Model


class WordLevel(Model):
    """``{token: id}`` and an unknown token.

    >>> m = WordLevel({"[UNK]": 0, "hello": 1})
    >>> m.encode_piece("hello"), m.encode_piece("bye")
    ([1], [0])
    """

    __slots__ = ("_vocab", "_ids", "_unk")
    type_name = "WordLevel"

    def __init__(self, vocab: Mapping[str, int], unk_token: str = "[UNK]") -> None:
        ids: dict[int, str] = {}
        for tok, i in vocab.items():
            if not isinstance(tok, str) or not isinstance(i, int) or isinstance(i, bool) or i < 0:
                raise FileFormatError(f"WordLevel vocab entries must be str -> non-negative int, got {tok!r}: {i!r}")
            if i in ids:
                raise FileFormatError(f"id {i} is given to both {ids[i]!r} and {tok!r}")
            ids[i] = tok
        check_token_sizes(ids.values(), ids.keys())
        self._vocab = dict(vocab)
        self._ids = ids
        self._unk = unk_token

    @property
    def unk_token(self) -> str:
        return self._unk

    @property
    def vocab_size(self) -> int:
        return len(self._vocab)

    def get_vocab(self) -> dict[str, int]:
        return dict(self._vocab)

    def token_to_id(self, token: str) -> int | None:
        return self._vocab.get(token)

    def id_to_token(self, token_id: int) -> str | None:
        return self._ids.get(token_id)

    def encode_piece(self, piece: str) -> list[int]:
        i = self._vocab.get(piece)
        if i is None:
            i = self._vocab.get(self._unk)
            if i is None:
                raise UnknownTokenError(f"{piece!r} is not in the vocabulary and the unknown token {self._unk!r} is not either")
        return [i]

    def tokenize(self, piece: str) -> list[tuple[int, int, int]]:
        return [(self.encode_piece(piece)[0], 0, len(piece))] if piece else []

    def to_dict(self) -> dict[str, Any]:
        return {"type": "WordLevel", "vocab": dict(sorted(self._vocab.items(), key=lambda kv: kv[1])), "unk_token": self._unk}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "WordLevel":
        vocab = d.get("vocab")
        if not isinstance(vocab, Mapping):
            raise FileFormatError("model 'WordLevel' needs an object field 'vocab'")
        return cls(vocab, d.get("unk_token", "[UNK]"))

    def __reduce__(self):
        return (WordLevel.from_dict, (self.to_dict(),))

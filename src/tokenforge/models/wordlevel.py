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


class PieceLookup(Model):
    """sentencepiece's WORD and CHAR models (``word_model.cc``, ``char_model.cc``): the
    normalized text is cut into units, each looked up whole, and a run of unknown units
    is one unknown token (as sentencepiece reports it).

    ``unit="word"`` cuts before every ``▁`` (sentencepiece's ``SplitIntoWords``);
    ``unit="char"`` takes the longest user-defined piece at each position, else one
    character. Only NORMAL and USER_DEFINED pieces match text.

    >>> m = PieceLookup(["<unk>", "▁hello", "▁world"], [2, 1, 1], unit="word")
    >>> m.tokenize("▁hello▁big▁bad▁world")
    [(1, 0, 6), (0, 6, 14), (2, 14, 20)]
    """

    __slots__ = ("_pieces", "_types", "_unit", "_vocab", "_unk", "_udf")
    type_name = "PieceLookup"

    def __init__(self, pieces: list[str], types: list[int], unit: str = "word") -> None:
        if unit not in ("word", "char"):
            raise FileFormatError(f"PieceLookup unit must be 'word' or 'char', got {unit!r}")
        if len(pieces) != len(types):
            raise FileFormatError(f"PieceLookup: {len(pieces)} pieces but {len(types)} types")
        check_token_sizes(pieces, range(len(pieces)))
        self._pieces = list(pieces)
        self._types = [int(t) for t in types]
        self._unit = unit
        self._vocab: dict[str, int] = {}
        for i, (p, t) in enumerate(zip(pieces, self._types)):
            if t in (1, 4):  # NORMAL, USER_DEFINED
                self._vocab.setdefault(p, i)
        unk = [i for i, t in enumerate(self._types) if t == 2]
        if not unk:
            raise FileFormatError("PieceLookup needs an UNKNOWN piece")
        self._unk = unk[0]
        self._udf = sorted({p for p, t in zip(pieces, self._types) if t == 4 and len(p) > 1}, key=len, reverse=True)

    @property
    def unk_id(self) -> int:
        return self._unk

    @property
    def unit(self) -> str:
        return self._unit

    @property
    def vocab_size(self) -> int:
        return len(self._pieces)

    def get_vocab(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for i, p in enumerate(self._pieces):
            out.setdefault(p, i)
        return out

    def token_to_id(self, token: str) -> int | None:
        i = self._vocab.get(token)
        if i is None and token in self._pieces:
            return self._pieces.index(token)
        return i

    def id_to_token(self, token_id: int) -> str | None:
        return self._pieces[token_id] if 0 <= token_id < len(self._pieces) else None

    def _units(self, text: str) -> list[tuple[int, int]]:
        out: list[tuple[int, int]] = []
        if self._unit == "word":
            start = 0
            for i in range(1, len(text)):
                if text[i] == "\u2581":
                    out.append((start, i))
                    start = i
            if text:
                out.append((start, len(text)))
            return out
        i = 0
        while i < len(text):
            step = next((len(u) for u in self._udf if text.startswith(u, i)), 1)
            out.append((i, i + step))
            i += step
        return out

    def tokenize(self, piece: str) -> list[tuple[int, int, int]]:
        out: list[tuple[int, int, int]] = []
        for s, e in self._units(piece):
            i = self._vocab.get(piece[s:e], self._unk)
            if i == self._unk and out and out[-1][0] == self._unk:
                out[-1] = (i, out[-1][1], e)
            else:
                out.append((i, s, e))
        return out

    def encode_piece(self, piece: str) -> list[int]:
        return [t[0] for t in self.tokenize(piece)]

    def to_dict(self) -> dict[str, Any]:
        return {"type": "PieceLookup", "unit": self._unit, "pieces": list(self._pieces), "types": list(self._types)}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "PieceLookup":
        pieces, types = d.get("pieces"), d.get("types")
        if not isinstance(pieces, list) or not isinstance(types, list):
            raise FileFormatError("model 'PieceLookup' needs list fields 'pieces' and 'types'")
        return cls(pieces, types, d.get("unit", "word"))

    def __reduce__(self) -> tuple[Any, tuple[dict[str, Any]]]:
        return (PieceLookup.from_dict, (self.to_dict(),))

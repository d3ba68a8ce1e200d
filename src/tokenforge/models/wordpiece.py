"""WordPiece encoding: greedy longest-match-first with ``##`` continuation
(Devlin et al., 2019; HF tokenizers' ``WordPiece``).

A word (one pre-token) is read left to right. At each position the longest
vocabulary entry that matches there is taken; at the start of the word the
entry is looked up as is, at any later position with the continuing-subword
prefix (``"##"``) in front. There is no backtracking: if some position has no
match at all, the *whole word* becomes the unknown token, not the pieces
found so far plus ``[UNK]``. A word longer than ``max_input_chars_per_word``
code points is the unknown token without being looked at. These are the
semantics of BERT's ``WordpieceTokenizer`` and of HF tokenizers' ``WordPiece``
model, which this module matches id for id (including: the empty piece gives
no ids, and a word that is itself a vocabulary entry but too long is still
``[UNK]``).

Performance notes. A word that is a token is one dict lookup (most words of
real text, with a BERT vocabulary). Otherwise the longest match at a
position is found by scanning *forward* through a table that holds every
token and every prefix of a token (two tables: all tokens for the first
position, the ``##`` tokens without their prefix for the later ones): the
scan stops at the first string no token starts with, so a position costs
about its match length + 1 lookups, where HF's backward scan from the end of
the word costs (word length - match length). No prefix is concatenated per
lookup. The result is the same longest match.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from ..errors import ArgumentTypeError, FileFormatError, InvalidArgumentError, UnknownTokenError
from ..limits import MAX_VOCAB_SIZE, check_token_sizes
from .base import Model

#: Ids are stored as 32-bit values, as in the rest of tokenforge.
MAX_ID = MAX_VOCAB_SIZE


def _prefix_table(items, max_chars: int) -> dict[str, int]:
    """``{s: id}`` for every token ``s`` and ``{p: -1}`` for every other
    non-empty proper prefix of a token: a forward scan stops at the first
    string that is not in the table, since no longer string can be a token.
    Prefixes longer than ``max_chars`` are left out: no word that long is looked at,
    and a very long vocabulary line must not cost the square of its length."""
    table: dict[str, int] = {}
    setdefault = table.setdefault
    tokens = list(items)
    for tok, _ in tokens:
        for k in range(1, min(len(tok), max_chars + 1)):
            setdefault(tok[:k], -1)
    for tok, i in tokens:
        table[tok] = i
    return table


class WordPiece(Model):
    """A WordPiece model: ``{token: id}``, the unknown token, the prefix that
    marks a piece continuing a word, and the longest word it will split.

    >>> wp = WordPiece({"[UNK]": 0, "a": 1, "##b": 2, "##bc": 3})
    >>> wp.encode_piece("abc")
    [1, 3]
    >>> [wp.id_to_token(i) for i in wp.encode_piece("abcb")]
    ['a', '##bc', '##b']
    >>> wp.encode_piece("abd")  # no piece matches at "d": the whole word is [UNK]
    [0]
    >>> wp.tokenize("abc")  # (id, start, end) in code points of the piece
    [(1, 0, 1), (3, 1, 3)]

    The vocabulary may have holes in its id space (HF keeps the *last* line of
    a duplicated ``vocab.txt`` entry, so ``bert-base-chinese`` has some); it
    must not give one id to two tokens, and it must contain ``unk_token``.
    """

    __slots__ = ("_first", "_ids", "_max_chars", "_next", "_prefix", "_unk_id", "_unk_token", "_vocab")
    type_name = "WordPiece"

    def __init__(
        self,
        vocab: Mapping[str, int],
        unk_token: str = "[UNK]",
        continuing_subword_prefix: str = "##",
        max_input_chars_per_word: int = 100,
    ) -> None:
        if not isinstance(unk_token, str):
            raise ArgumentTypeError(f"unk_token must be a str, got {type(unk_token).__name__}")
        if not isinstance(continuing_subword_prefix, str):
            raise ArgumentTypeError(
                f"continuing_subword_prefix must be a str, got {type(continuing_subword_prefix).__name__}"
            )
        if (
            not isinstance(max_input_chars_per_word, int)
            or isinstance(max_input_chars_per_word, bool)
            or max_input_chars_per_word < 0
        ):
            raise InvalidArgumentError(f"max_input_chars_per_word must be an int >= 0, got {max_input_chars_per_word!r}")
        clean: dict[str, int] = {}
        ids: dict[int, str] = {}
        for tok, i in vocab.items():
            if not isinstance(tok, str):
                raise FileFormatError(f"vocabulary tokens must be str, got {tok!r}")
            if not isinstance(i, int) or isinstance(i, bool) or not 0 <= i < MAX_ID:
                raise FileFormatError(f"token {tok!r} has id {i!r}; ids must be ints in 0..{MAX_ID - 1}")
            other = ids.get(i)
            if other is not None:
                raise FileFormatError(f"id {i} is given to both {other!r} and {tok!r}")
            clean[tok] = i
            ids[i] = tok
        check_token_sizes(clean.keys(), clean.values())
        unk_id = clean.get(unk_token)
        if unk_id is None:
            raise UnknownTokenError(
                f"unk_token {unk_token!r} is not in the vocabulary ({len(clean)} tokens); "
                f"add it, or pass the unknown token the vocabulary uses as unk_token="
            )
        self._vocab = clean
        self._ids = ids
        self._unk_token = unk_token
        self._unk_id = unk_id
        self._prefix = continuing_subword_prefix
        self._max_chars = max_input_chars_per_word
        # the prefix tables are built by the first word that is not a token
        self._first: dict[str, int] | None = None
        self._next: dict[str, int] = {}

    @classmethod
    def from_file(
        cls,
        path: str | os.PathLike,
        unk_token: str = "[UNK]",
        continuing_subword_prefix: str = "##",
        max_input_chars_per_word: int = 100,
    ) -> WordPiece:
        """Load a BERT ``vocab.txt`` (see :func:`tokenforge.formats.bert_vocab.load_bert_vocab`).

        A vocabulary without ``unk_token`` raises :class:`FileFormatError` naming the file.
        """
        from ..formats.bert_vocab import load_bert_vocab

        vocab = load_bert_vocab(path)
        try:
            return cls(vocab, unk_token, continuing_subword_prefix, max_input_chars_per_word)
        except UnknownTokenError as exc:
            raise FileFormatError(str(exc), path=path) from None

    def _build_tables(self) -> dict[str, int]:
        prefix = self._prefix
        plen = len(prefix)
        first = _prefix_table(self._vocab.items(), self._max_chars)
        if plen:
            self._next = _prefix_table(
                ((t[plen:], i) for t, i in self._vocab.items() if t.startswith(prefix)), self._max_chars
            )
        else:
            self._next = first
        self._first = first  # last: another thread sees either None or both tables
        return first

    # -- pickling: the model is immutable, rebuild it from its settings ------
    def __reduce__(self):
        return (type(self), (self._vocab, self._unk_token, self._prefix, self._max_chars))

    def __repr__(self) -> str:
        return (
            f"WordPiece(<{len(self._vocab)} tokens>, unk_token={self._unk_token!r}, "
            f"continuing_subword_prefix={self._prefix!r}, max_input_chars_per_word={self._max_chars})"
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, WordPiece):
            return NotImplemented
        return (self._vocab, self._unk_token, self._prefix, self._max_chars) == (
            other._vocab,
            other._unk_token,
            other._prefix,
            other._max_chars,
        )

    __hash__ = None  # type: ignore[assignment]

    # -- settings and vocabulary ---------------------------------------------
    @property
    def unk_token(self) -> str:
        return self._unk_token

    @property
    def unk_id(self) -> int:
        return self._unk_id

    @property
    def continuing_subword_prefix(self) -> str:
        return self._prefix

    @property
    def max_input_chars_per_word(self) -> int:
        return self._max_chars

    @property
    def vocab(self) -> Mapping[str, int]:
        """``{token: id}`` (read-only view)."""
        return MappingProxyType(self._vocab)

    @property
    def vocab_size(self) -> int:
        """Number of tokens (HF's ``get_vocab_size``; with holes in the id space
        this is less than the largest id + 1)."""
        return len(self._vocab)

    def get_vocab(self) -> dict[str, int]:
        """A copy of ``{token: id}``."""
        return dict(self._vocab)

    def token_to_id(self, token: str) -> int | None:
        return self._vocab.get(token)

    def id_to_token(self, id: int) -> str | None:
        return self._ids.get(id)

    # -- encoding ------------------------------------------------------------
    def encode_piece(self, piece: str) -> list[int]:
        """Ids of one pre-token (already normalized and pre-tokenized).

        >>> wp = WordPiece({"[UNK]": 0, "a": 1, "ab": 2, "##bc": 3})
        >>> wp.encode_piece("abc")  # greedy "ab" leaves "c" with no match: no backtracking
        [0]
        >>> wp.encode_piece("")
        []
        """
        n = len(piece)
        if n > self._max_chars:
            return [self._unk_id]
        if n == 0:
            return []  # even when "" is a token (a blank vocab.txt line), as HF
        get = self._vocab.get
        whole = get(piece)
        if whole is not None:
            return [whole]
        out: list[int] = []
        table = self._first or self._build_tables()
        start = 0
        while start < n:
            best = -1
            end = e = start + 1
            while e <= n:
                i = table.get(piece[start:e])
                if i is None:
                    break  # no token starts with piece[start:e]: nothing longer matches
                if i >= 0:
                    best = i
                    end = e
                e += 1
            if best < 0:
                return [self._unk_id]
            out.append(best)
            start = end
            table = self._next
        return out

    def tokenize(self, piece: str) -> list[tuple[int, int, int]]:
        """``(id, start, end)`` of each token of one pre-token; offsets are code
        points inside ``piece``. An unknown word is one ``[UNK]`` spanning it all.

        >>> WordPiece({"[UNK]": 0, "un": 1, "##aff": 2, "##able": 3}).tokenize("unaffable")
        [(1, 0, 2), (2, 2, 5), (3, 5, 9)]
        """
        n = len(piece)
        if n > self._max_chars:
            return [(self._unk_id, 0, n)]
        out: list[tuple[int, int, int]] = []
        table = self._first or self._build_tables()
        start = 0
        while start < n:
            best = -1
            end = e = start + 1
            while e <= n:
                i = table.get(piece[start:e])
                if i is None:
                    break
                if i >= 0:
                    best = i
                    end = e
                e += 1
            if best < 0:
                return [(self._unk_id, 0, n)]
            out.append((best, start, end))
            start = end
            table = self._next
        return out

    # -- serialized form (HF tokenizer.json "model") ------------------------
    def to_dict(self) -> dict[str, Any]:
        """HF ``tokenizer.json`` shape; the vocabulary is listed in id order."""
        return {
            "type": "WordPiece",
            "unk_token": self._unk_token,
            "continuing_subword_prefix": self._prefix,
            "max_input_chars_per_word": self._max_chars,
            "vocab": {tok: i for i, tok in sorted(self._ids.items())},
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> WordPiece:
        """Build from HF's ``tokenizer.json`` ``"model"`` object (or :meth:`to_dict`).

        Missing optional fields take HF's defaults; a missing or bad ``vocab``,
        a wrong ``type`` or a field of the wrong type raises
        :class:`FileFormatError` naming the field.
        """
        if not isinstance(data, Mapping):
            raise FileFormatError(f"WordPiece model must be a JSON object, got {type(data).__name__}")
        kind = data.get("type", "WordPiece")
        if kind != "WordPiece":
            raise FileFormatError(f"field 'type': expected 'WordPiece', found {kind!r}")
        if "vocab" not in data:
            raise FileFormatError("field 'vocab' is missing: expected an object of token -> id")
        vocab = data["vocab"]
        if not isinstance(vocab, Mapping):
            raise FileFormatError(f"field 'vocab': expected an object of token -> id, found {type(vocab).__name__}")
        unk = data.get("unk_token", "[UNK]")
        if not isinstance(unk, str):
            raise FileFormatError(f"field 'unk_token': expected a string, found {unk!r}")
        prefix = data.get("continuing_subword_prefix", "##")
        if not isinstance(prefix, str):
            raise FileFormatError(f"field 'continuing_subword_prefix': expected a string, found {prefix!r}")
        max_chars = data.get("max_input_chars_per_word", 100)
        if not isinstance(max_chars, int) or isinstance(max_chars, bool) or max_chars < 0:
            raise FileFormatError(f"field 'max_input_chars_per_word': expected an int >= 0, found {max_chars!r}")
        try:
            return cls(vocab, unk, prefix, max_chars)
        except UnknownTokenError as exc:
            raise FileFormatError(f"field 'unk_token': {exc}") from None
        except FileFormatError as exc:
            raise FileFormatError(f"field 'vocab': {exc}") from None

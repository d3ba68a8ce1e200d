"""The tokenizer transplant map: each token of tokenizer B in terms of tokenizer A.

Moving a model trained with tokenizer A to tokenizer B needs, for every token of
B, an embedding made from A's embeddings. Zero-shot tokenizer transfer (ZeTT,
Minixhofer et al., 2024, arXiv 2405.07883) and mergekit's ``tokensurgeon``
start from the same two facts, which this module computes:

- the **overlap**: tokens of B whose bytes are one token of A (their embedding
  is copied), with the id pairs;
- the **decomposition** of every other token of B: A's canonical encoding of
  the token's *bytes* (the ids A produces for them, whose embeddings are
  averaged or combined).

Tokens are compared as bytes (:func:`tokenforge.analysis.explain.token_bytes`):
GPT-2's byte alphabet is undone (``Ġ`` → space), SentencePiece's ``▁`` is a
space, a byte-fallback piece ``<0xE4>`` is that byte, and WordPiece's ``##``
continuation prefix is dropped (``##ing`` and ``ing`` are both ``ing``). The
encoding is of bytes, not of decoded text, so byte-level tokens that are not
whole UTF-8 characters map too: for a byte-level A, each run of valid UTF-8 is
encoded with ``encode_ordinary`` (A's pre-tokenizer and merges; special-token
strings are text) and each run of other bytes by A's merges alone. Decoding the
ids then gives B's token bytes exactly. For other A (WordPiece, SentencePiece),
the text is encoded (SentencePiece BPE: its merges run on the spelled bytes,
without the dummy-prefix space, and other bytes become byte-fallback pieces), and
an entry whose ids do not spell the bytes back (a lowercasing normalizer, an
unknown token) is marked ``exact: false``.

Special tokens of B (``added_tokens`` marked special, and the model's unknown
token) are not text: they map to A's special token with the same string when A
has one, else to no ids.

The map is written as JSON Lines, one object per token of B:
``{"id": 1234, "token": "Ġhello", "bytes": "2068656c6c6f", "kind": "same"|"composed"|"special",
"ids_a": [...], "exact": true}``.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..errors import FileFormatError, InvalidArgumentError
from ..models.bpe import BPE, PieceBPE, bpe_merge_bytes
from ..tokenizer import Tokenizer
from .explain import render_bytes, token_bytes

__all__ = ["TransplantEntry", "TransplantMap", "encode_bytes", "transplant_map"]

_ESCAPED = re.compile(r"[\udc80-\udcff]+")


@dataclass(frozen=True)
class TransplantEntry:
    """One token of B: its bytes and the ids of A that spell them."""

    id: int
    token: str
    bytes: bytes
    kind: str  # "same": one token of A; "composed": several; "special": a control token
    ids_a: tuple[int, ...]
    exact: bool  # A's ids decode to exactly these bytes (a special token: A has the same one)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "token": self.token, "bytes": self.bytes.hex(), "text": render_bytes(self.bytes),
                "kind": self.kind, "ids_a": list(self.ids_a), "exact": self.exact}


@dataclass(frozen=True)
class TransplantMap:
    """Every token of ``b`` in terms of ``a``; :meth:`write` saves it as JSON Lines."""

    a: str
    b: str
    entries: tuple[TransplantEntry, ...]

    @property
    def overlap(self) -> list[tuple[int, int]]:
        """``(id in B, id in A)`` of the tokens of B whose bytes are one token of A."""
        return [(e.id, e.ids_a[0]) for e in self.entries if e.kind == "same"]

    def summary(self) -> dict[str, Any]:
        kinds = {k: sum(e.kind == k for e in self.entries) for k in ("same", "composed", "special")}
        composed = [len(e.ids_a) for e in self.entries if e.kind == "composed"]
        return {"a": self.a, "b": self.b, "tokens_b": len(self.entries), **kinds,
                "special_without_match": sum(e.kind == "special" and not e.ids_a for e in self.entries),
                "inexact": sum(not e.exact for e in self.entries if e.kind != "special"),
                "mean_parts": round(sum(composed) / len(composed), 4) if composed else 0.0}

    def entry(self, token_id: int) -> TransplantEntry:
        """The entry of B's token ``token_id``."""
        for e in self.entries:
            if e.id == token_id:
                return e
        raise InvalidArgumentError(f"{self.b} has no token with id {token_id}")

    def __iter__(self) -> Iterator[TransplantEntry]:
        return iter(self.entries)

    def write(self, path: str | os.PathLike[str]) -> None:
        """Write one JSON object per token of B, in id order (atomic: a temporary file renamed)."""
        from .._io import atomic_write

        with atomic_write(path) as f:
            for e in self.entries:
                f.write(json.dumps(e.to_dict(), ensure_ascii=False) + "\n")


def _byte_ranks(a: Tokenizer) -> dict[bytes, int] | None:
    try:
        return dict(a.rank_model().ranks)
    except FileFormatError:
        return None


def encode_bytes(a: Tokenizer, data: bytes, ranks: dict[bytes, int] | None = None) -> list[int]:
    """A's canonical ids for ``data``: runs of valid UTF-8 through ``encode_ordinary``, other
    byte runs through A's merges (byte-level A only; other tokenizers get the text with
    U+FFFD for such bytes)."""
    if ranks is None:
        ranks = _byte_ranks(a)
    text = data.decode("utf-8", "surrogateescape")
    if ranks is None:
        model = a.model
        if isinstance(model, PieceBPE) and model.is_sentencepiece:
            return _sentencepiece_ids(model, text)
        return a.encode_ordinary(data.decode("utf-8", "replace"))
    ids: list[int] = []
    pos = 0
    for m in _ESCAPED.finditer(text):
        if m.start() > pos:
            ids += a.encode_ordinary(text[pos : m.start()])
        raw = m.group().encode("utf-8", "surrogateescape")
        ids += [ranks[p] for p in bpe_merge_bytes(ranks, raw)]
        pos = m.end()
    if pos < len(text):
        ids += a.encode_ordinary(text[pos:])
    return ids


def _sentencepiece_ids(model: PieceBPE, text: str) -> list[int]:
    """SentencePiece BPE's merges on the bytes as they are spelled (space = ``▁``), without
    the normalizer's dummy-prefix space; other bytes as byte-fallback pieces ``<0xXX>``."""
    ids: list[int] = []
    pos = 0
    for m in [*_ESCAPED.finditer(text), None]:
        end = len(text) if m is None else m.start()
        if end > pos:
            ids += [t[0] for t in model.tokenize(text[pos:end].replace(" ", "▁"))]
        if m is None:
            break
        for byte in m.group().encode("utf-8", "surrogateescape"):
            tid = model.token_to_id(f"<0x{byte:02X}>")
            if tid is not None:
                ids.append(tid)
            elif isinstance(model.unk_id, int):
                ids.append(model.unk_id)
        pos = m.end()
    return ids


def _label(tok: Tokenizer, default: str) -> str:
    return tok.name or default


def _special_ids(tok: Tokenizer) -> set[int]:
    ids = {t.id for t in tok.added_tokens if t.special}
    unk = getattr(tok.model, "unk_id", None)
    if isinstance(unk, int):
        ids.add(unk)
    return ids


def _model_ids(tok: Tokenizer) -> list[int]:
    if isinstance(tok.model, BPE):
        ids = set(tok.model.vocab)
    else:
        ids = set(tok.model.get_vocab().values())
    return sorted(ids | {t.id for t in tok.added_tokens})


def transplant_map(a: Tokenizer, b: Tokenizer) -> TransplantMap:
    """Each token of ``b`` as ids of ``a`` (see the module docstring).

    >>> import tokenforge
    >>> m = transplant_map(tokenforge.get_encoding("gpt2"), tokenforge.get_encoding("cl100k_base"))
    >>> e = m.entry(tokenforge.get_encoding("cl100k_base").encode_single_token(b" tokenizer"))
    >>> e.kind, [tokenforge.get_encoding("gpt2").decode([i]) for i in e.ids_a]
    ('composed', [' token', 'izer'])
    """
    if not isinstance(a, Tokenizer) or not isinstance(b, Tokenizer):
        raise InvalidArgumentError("transplant_map takes two tokenforge Tokenizers (tokenforge.load, get_encoding)")
    ranks = _byte_ranks(a)
    a_specials = {t.content: t.id for t in a.added_tokens if t.special}
    a_unk = getattr(a.model, "unk_id", None)
    a_specials_ids = _special_ids(a)
    # the bytes of each ordinary token of A, lowest id first (canonical ids for byte-level A)
    if ranks is not None:
        a_bytes: dict[bytes, int] = ranks
    else:
        a_bytes = {}
        for i in reversed(_model_ids(a)):
            if i in a_specials_ids:
                continue
            a_bytes[token_bytes(a, i)] = i
    b_specials = _special_ids(b)
    b_added = {t.id: t for t in b.added_tokens}
    entries = []
    for i in _model_ids(b):
        tok = b.id_to_token(i)
        if i in b_specials:
            data = tok.encode("utf-8")
            got = a_specials.get(tok)
            if got is None and isinstance(a_unk, int) and tok == getattr(b.model, "unk_token", None):
                got = a_unk
            entries.append(TransplantEntry(i, tok, data, "special", () if got is None else (got,), got is not None))
            continue
        data = b_added[i].content.encode("utf-8") if i in b_added else token_bytes(b, i)
        one = a_bytes.get(data)
        if one is not None:
            entries.append(TransplantEntry(i, tok, data, "same", (one,), True))
            continue
        ids = tuple(encode_bytes(a, data, ranks))
        spelled = b"".join(token_bytes(a, j) for j in ids)
        entries.append(TransplantEntry(i, tok, data, "composed", ids, spelled == data))
    return TransplantMap(_label(a, "A"), _label(b, "B"), tuple(entries))

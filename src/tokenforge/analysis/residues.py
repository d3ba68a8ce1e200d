"""Vocabulary residues: tokens that the merges build but encoding rarely emits.

A byte-level BPE vocabulary holds every intermediate product of its merges. Some
of them are almost never the final token of a pre-token: they exist only to be
merged further (``" upd"`` on the way to ``" update"``). LiteToken (arXiv
2602.04706) calls them *residues* and removes them. For each token this module
counts, on a corpus,

- ``emitted``: how often encoding produces the token, and
- ``intermediate``: how often the token is a part that a later merge consumes
  (the left or right side of a merge),

by replaying the rank merge (:func:`tokenforge.analysis.explain.merge_trace`, the
rule of tiktoken: the adjacent pair whose concatenation has the lowest rank,
leftmost first) once per distinct pre-token and weighting by its count, so the
cost follows the number of distinct pre-tokens, not the corpus size. A pre-token
that is itself a token is emitted whole without merges (tiktoken's rule), so it
adds no intermediate counts. The emitted counts equal counting the ids of
``encode_ordinary`` over the corpus; that is checked on every call.

:func:`prune_residues` removes the residues with ids kept stable: a removed
token's id becomes a hole (never produced, not decodable), and because a rank
BPE has no separate merge list, every merge whose result is a removed token is
gone with it. A token built through a removed token is still built whenever
another split of it into two surviving tokens exists; by default a residue that
is the only path to a token the corpus emits is kept (``keep_paths``).
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import InvalidArgumentError, TokenforgeError
from ..models.bpe import BPE
from ..tokenizer import Tokenizer
from .explain import merge_trace, render_bytes

__all__ = [
    "ResidueReport",
    "TokenUse",
    "count_pieces",
    "prune_residues",
    "residues",
    "residues_from_counts",
    "residues_of_files",
]


@dataclass(frozen=True)
class TokenUse:
    """How one token was used on a corpus."""

    id: int
    bytes: bytes
    emitted: int
    intermediate: int

    @property
    def emitted_share(self) -> float:
        """``emitted / (emitted + intermediate)``; 1.0 for a token never seen."""
        seen = self.emitted + self.intermediate
        return self.emitted / seen if seen else 1.0

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "token": render_bytes(self.bytes), "emitted": self.emitted,
                "intermediate": self.intermediate, "emitted_share": round(self.emitted_share, 6)}


@dataclass(frozen=True)
class ResidueReport:
    """Per-token emitted and intermediate counts of a tokenizer on a corpus."""

    tokenizer: str
    uses: dict[int, TokenUse]
    pieces: int
    distinct_pieces: int
    tokens: int

    def residues(self, threshold: float = 0.0, min_intermediate: int = 1) -> list[TokenUse]:
        """Multi-byte tokens used as an intermediate at least ``min_intermediate`` times whose
        emitted share is at most ``threshold``, most intermediate uses first."""
        if not 0.0 <= threshold <= 1.0:
            raise InvalidArgumentError(f"threshold is a share of uses, between 0 and 1; got {threshold}")
        rows = [u for u in self.uses.values()
                if len(u.bytes) > 1 and u.intermediate >= min_intermediate and u.emitted_share <= threshold]
        rows.sort(key=lambda u: (-u.intermediate, u.emitted, u.id))
        return rows

    def totals(self, threshold: float = 0.0) -> dict[str, int]:
        multi = [u for u in self.uses.values() if len(u.bytes) > 1]
        return {
            "multi_byte_tokens": len(multi),
            "emitted": sum(u.emitted > 0 for u in multi),
            "only_intermediate": sum(u.emitted == 0 and u.intermediate > 0 for u in multi),
            "residues": len(self.residues(threshold)),
            "unseen": sum(u.emitted == 0 and u.intermediate == 0 for u in multi),
            "pieces": self.pieces,
            "distinct_pieces": self.distinct_pieces,
            "tokens": self.tokens,
        }

    def to_dict(self, threshold: float = 0.0, top: int | None = None) -> dict[str, Any]:
        rows = self.residues(threshold)
        return {"tokenizer": self.tokenizer, "threshold": threshold, "totals": self.totals(threshold),
                "residues": [u.to_dict() for u in rows[:top]]}

    def format(self, threshold: float = 0.0, top: int = 20) -> str:
        rows = self.residues(threshold)
        lines = [f"residues of {self.tokenizer} (emitted share <= {threshold:g}), top {min(top, len(rows))} "
                 f"of {len(rows)} by intermediate uses:",
                 f"{'id':>8}  {'token':<24} {'emitted':>9} {'intermediate':>12} {'share':>7}"]
        for u in rows[:top]:
            lines.append(f"{u.id:>8}  {render_bytes(u.bytes)[:24]:<24} {u.emitted:>9,} {u.intermediate:>12,} "
                         f"{u.emitted_share:>7.3f}")
        t = self.totals(threshold)
        lines.append(f"multi-byte tokens {t['multi_byte_tokens']:,}: {t['emitted']:,} emitted, "
                     f"{t['only_intermediate']:,} only intermediate, {t['unseen']:,} unseen; "
                     f"{t['residues']:,} residues")
        lines.append(f"corpus: {t['pieces']:,} pre-tokens ({t['distinct_pieces']:,} distinct), "
                     f"{t['tokens']:,} tokens")
        return "\n".join(lines)


def _rank_model(tok: Any) -> BPE:
    if not isinstance(tok, Tokenizer) or not isinstance(tok.model, BPE):
        raise InvalidArgumentError(
            "residues need a byte-level BPE by rank (tiktoken-style ranks, e.g. tokenforge.get_encoding('gpt2') "
            f"or a trained tokenforge BPE); got a {type(getattr(tok, 'model', tok)).__name__} model")
    if tok.normalizer is not None:
        raise InvalidArgumentError("residues replay the rank merge on raw text; this tokenizer has a normalizer")
    return tok.model


def count_pieces(tok: Tokenizer, texts: str | Iterable[str]) -> Counter[bytes]:
    """The pre-tokens of ``texts`` as ``encode_ordinary`` sees them (special-token strings
    are text), counted with :func:`tokenforge.trainers.counting.count_text`."""
    from ..trainers.counting import count_text

    _rank_model(tok)
    if isinstance(texts, str):
        texts = [texts]
    counts: Counter[bytes] = Counter()
    for text in texts:
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:  # lone surrogates become U+FFFD, as encoding does
            text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
        counts.update(count_text(text, tok.pre_tokenizer, None))  # type: ignore[arg-type]
    return counts


def residues_from_counts(tok: Tokenizer, counts: Mapping[bytes, int], name: str | None = None) -> ResidueReport:
    """Replay the merges of each distinct pre-token of ``counts`` once, weighted by its count."""
    model = _rank_model(tok)
    ranks = model.ranks
    emitted: Counter[bytes] = Counter()
    inter: Counter[bytes] = Counter()
    pieces = 0
    for piece, n in counts.items():
        if not piece or n <= 0:
            continue
        pieces += n
        if piece in ranks:  # a whole token: emitted without merging (tiktoken's rule)
            emitted[piece] += n
            continue
        merges, parts = merge_trace(ranks, piece)
        for m in merges:
            inter[m.left] += n
            inter[m.right] += n
        for p in parts:
            emitted[p] += n
    uses: dict[int, TokenUse] = {}
    for tid, data in model.vocab.items():
        if ranks.get(data) != tid:
            continue  # a duplicate spelling: encoding always gives the lower id
        uses[tid] = TokenUse(tid, data, emitted.get(data, 0), inter.get(data, 0))
    label = name or tok.name or "tokenizer"
    return ResidueReport(label, uses, pieces, len(counts), sum(emitted.values()))


def residues(tok: Tokenizer, texts: str | Iterable[str]) -> ResidueReport:
    """Emitted and intermediate counts of every token of ``tok`` on ``texts``.

    >>> import tokenforge
    >>> gpt2 = tokenforge.get_encoding("gpt2")
    >>> r = residues(gpt2, ["Copyrights", "Copyrights"])  # C+op -> Cop, y+r..ights -> yrights
    >>> [(r.uses[gpt2.encode_single_token(t)].emitted, r.uses[gpt2.encode_single_token(t)].intermediate)
    ...  for t in (b"op", b"Cop")]
    [(0, 2), (2, 0)]
    """
    if isinstance(texts, str):
        texts = [texts]
    texts = list(texts)
    report = residues_from_counts(tok, count_pieces(tok, texts))
    got = Counter(i for t in texts for i in tok.encode_ordinary(t))
    want = {u.id: u.emitted for u in report.uses.values() if u.emitted}
    if got != want:  # the replay must be the encoder; say so loudly if it is not
        raise TokenforgeError("residues: the merge replay does not match encode_ordinary on this corpus "
                              "(a tokenforge bug: please report it with the tokenizer and the text)")
    return report


def residues_of_files(tok: Tokenizer, paths: Iterable[str | os.PathLike[str]], workers: int | None = 1,
                      errors: str = "strict") -> ResidueReport:
    """:func:`residues` over UTF-8 files, counted in ranges by
    :func:`tokenforge.trainers.counting.count_files` (in ``workers`` processes)."""
    from ..trainers.counting import count_files

    _rank_model(tok)
    counts = count_files(list(paths), tok.pre_tokenizer, (), workers=workers, errors=errors)  # type: ignore[arg-type]
    return residues_from_counts(tok, counts)


def prune_residues(tok: Tokenizer, texts: str | Iterable[str], threshold: float = 0.0,
                   min_intermediate: int = 1, keep_paths: bool = True) -> Tokenizer:
    """A copy of ``tok`` without its residues on ``texts`` (see :meth:`ResidueReport.residues`);
    the ids of the surviving tokens and of the special tokens do not change, the removed
    ids become holes. Single bytes are never removed, so every text still encodes and
    decodes back to itself.

    With ``keep_paths`` (the default) a residue is kept when it is the only way the merges
    build a token that the corpus emits: after the removal, every emitted token must still
    come out of the rank merge of its own bytes as one token (else the residues on its
    original merge path are put back, until nothing changes). Without it, such tokens
    stay in the vocabulary but are produced only whole (a pre-token equal to them).
    """
    report = residues(tok, texts)
    drop = {u.id for u in report.residues(threshold, min_intermediate)}
    model = _rank_model(tok)
    ranks = model.ranks
    if keep_paths:
        emitted = [u.bytes for u in report.uses.values() if u.emitted and len(u.bytes) > 1]
        while True:
            kept = {b: r for b, r in ranks.items() if r not in drop}
            back: set[int] = set()
            for data in emitted:
                if merge_trace(kept, data)[1] != [data]:
                    merges, _ = merge_trace(ranks, data)
                    back.update(ranks[m.left + m.right] for m in merges if ranks[m.left + m.right] in drop)
            if not back:
                break
            drop -= back
    vocab = {i: b for i, b in model.vocab.items() if i not in drop}
    return Tokenizer(BPE(vocab), pre_tokenizer=tok.pre_tokenizer, decoder=tok.decoder,
                     special_tokens=dict(tok.special_tokens),
                     name=f"{tok.name or 'tokenizer'}-pruned")

"""The five "vocab sizes" of one tokenizer, which are not equal.

A tokenizer has five easily confused counts:

1. **mergeable (ordinary) tokens**: the tokens of the model itself (tiktoken's
   ``mergeable_ranks``; for a WordPiece/Unigram/SentencePiece pipeline, every
   id that is not special);
2. **special tokens**: control tokens that text never merges into
   (``<|endoftext|>``, ``[CLS]``; for pipelines also the model's unknown token,
   which SentencePiece counts among its meta pieces, e.g. Llama 2);
3. **len(tokenizer)**: the number of distinct ids, ordinary plus special;
4. **max id + 1**: the size of the id space, tiktoken's ``n_vocab``, larger
   than (3) when the id space has holes (cl100k_base: 100,261 tokens but
   100,277 ids, because ids 100256 and 100261–100275 are unused);
5. **embedding rows**: (4) rounded up to a multiple the model chooses for
   alignment (Qwen2 pads 151,646 ids to 151,936 rows).

The embedding costs rows × d parameters when input and output embeddings are
tied, 2 × rows × d when untied.

>>> import tokenforge
>>> a = vocab_accounting(tokenforge.get_encoding("cl100k_base"), pad_to=64, d_model=4096)
>>> a.mergeable, a.special, a.length, a.id_space, a.embedding_rows
(100256, 5, 100261, 100277, 100288)
>>> a.holes, a.hole_ranges()[:2]
(16, [(100256, 100256), (100261, 100275)])
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import InvalidArgumentError
from ..models.bpe import BPE

__all__ = ["Accounting", "vocab_accounting"]


def _ranges(sorted_ids: list[int]) -> list[tuple[int, int]]:
    """Inclusive runs of consecutive ids."""
    out: list[tuple[int, int]] = []
    for i in sorted_ids:
        if out and out[-1][1] == i - 1:
            out[-1] = (out[-1][0], i)
        else:
            out.append((i, i))
    return out


@dataclass(frozen=True)
class Accounting:
    """The five counts for one tokenizer, and the embedding cost.

    ``missing_ids`` holds the unused ids below the largest id, in order.
    ``embedding_params`` is ``None`` unless ``d_model`` was given.
    """

    name: str | None
    kind: str
    mergeable: int
    special: int
    added_ordinary: int
    length: int
    id_space: int
    missing_ids: tuple[int, ...]
    pad_to: int
    d_model: int | None
    tied: bool

    @property
    def holes(self) -> int:
        """Number of unused ids below the largest id: ``id_space - distinct ids``."""
        return len(self.missing_ids)

    def hole_ranges(self) -> list[tuple[int, int]]:
        """Unused ids as inclusive ``(first, last)`` runs."""
        return _ranges(list(self.missing_ids))

    @property
    def embedding_rows(self) -> int:
        """``id_space`` rounded up to a multiple of ``pad_to``: every id needs a row."""
        return -(-self.id_space // self.pad_to) * self.pad_to

    @property
    def padding_rows(self) -> int:
        """Rows beyond the id space, added only for alignment."""
        return self.embedding_rows - self.id_space

    @property
    def embedding_params(self) -> int | None:
        """``rows · d`` tied, ``2 · rows · d`` untied; ``None`` without ``d_model``."""
        if self.d_model is None:
            return None
        return self.embedding_rows * self.d_model * (1 if self.tied else 2)

    def to_dict(self, max_holes: int = 20) -> dict[str, Any]:
        """JSON-able summary; at most ``max_holes`` hole runs are listed (all are counted)."""
        runs = self.hole_ranges()
        return {
            "name": self.name,
            "kind": self.kind,
            "mergeable_tokens": self.mergeable,
            "special_tokens": self.special,
            "added_ordinary_tokens": self.added_ordinary,
            "len": self.length,
            "max_id_plus_1": self.id_space,
            "holes": self.holes,
            "hole_ranges": [list(r) for r in runs[:max_holes]],
            "hole_ranges_total": len(runs),
            "pad_to": self.pad_to,
            "embedding_rows": self.embedding_rows,
            "padding_rows": self.padding_rows,
            "d_model": self.d_model,
            "tied": self.tied,
            "embedding_params": self.embedding_params,
        }

    def format(self, max_holes: int = 5) -> str:
        """The five numbers as an aligned, readable table (thousands separated)."""
        runs = self.hole_ranges()
        shown = ", ".join(str(a) if a == b else f"{a}–{b}" for a, b in runs[:max_holes])
        if len(runs) > max_holes:
            shown += f", … ({len(runs) - max_holes} more runs)"
        mergeable_label = "mergeable tokens" if self.kind == "byte-level BPE" else "ordinary tokens"
        lines = [
            f"name              {self.name or '-'} ({self.kind})",
            f"{mergeable_label:<17} {self.mergeable:,}",
            f"special tokens    {self.special:,}",
        ]
        if self.added_ordinary:
            lines.append(f"  (of the ordinary tokens, {self.added_ordinary:,} are non-special added tokens)")
        lines += [
            f"len(tokenizer)    {self.length:,}",
            f"max id + 1        {self.id_space:,}",
            f"holes             {self.holes:,}" + (f" (unused ids: {shown})" if self.holes else ""),
            f"embedding rows    {self.embedding_rows:,}"
            + (f" (max id + 1 padded to a multiple of {self.pad_to}: +{self.padding_rows:,})" if self.pad_to > 1 else ""),
        ]
        if self.d_model is not None:
            formula = "rows × d, tied" if self.tied else "2 × rows × d, untied"
            lines.append(f"embedding params  {self.embedding_params:,} ({formula}, d = {self.d_model:,})")
        return "\n".join(lines)


def vocab_accounting(tokenizer: Any, *, pad_to: int = 1, d_model: int | None = None, tied: bool = True) -> Accounting:
    """Count the five vocab sizes of a :class:`~tokenforge.Tokenizer`.

    For byte-level BPE by rank, mergeable tokens are the model's ranks and
    specials are ``special_tokens``. For the other families, specials are the
    special added tokens plus the model's unknown token; every other id is
    ordinary (non-special added tokens included, and counted separately as
    ``added_ordinary``).

    >>> import tokenforge
    >>> a = vocab_accounting(tokenforge.get_encoding("gpt2"), d_model=768, tied=False)
    >>> a.mergeable, a.special, a.length, a.id_space, a.holes, a.embedding_params
    (50256, 1, 50257, 50257, 0, 77194752)
    """
    if pad_to < 1:
        raise InvalidArgumentError(f"pad_to must be at least 1, not {pad_to}")
    if d_model is not None and d_model < 1:
        raise InvalidArgumentError(f"d_model must be at least 1, not {d_model}")
    name = getattr(tokenizer, "name", None)
    if isinstance(tokenizer.model, BPE):
        kind = "byte-level BPE"
        model_ids = set(tokenizer.model.vocab)
        special_ids = set(tokenizer.special_tokens.values())
        ids = model_ids | special_ids
        mergeable = len(model_ids - special_ids)
        added_ordinary = 0
    else:
        kind = f"{type(tokenizer.model).__name__}"
        ids = set(tokenizer.get_vocab().values())
        special_ids = {t.id for t in tokenizer.added_tokens if t.special}
        unk = getattr(tokenizer.model, "unk_id", None)
        if isinstance(unk, int) and unk >= 0:
            special_ids.add(unk)
        mergeable = len(ids - special_ids)
        added_ordinary = len({t.id for t in tokenizer.added_tokens if not t.special} - special_ids)
    id_space = max(ids) + 1 if ids else 0
    missing = tuple(i for i in range(id_space) if i not in ids) if len(ids) != id_space else ()
    return Accounting(
        name=name,
        kind=kind,
        mergeable=mergeable,
        special=len(special_ids & ids),
        added_ordinary=added_ordinary,
        length=len(tokenizer),
        id_space=id_space,
        missing_ids=missing,
        pad_to=pad_to,
        d_model=d_model,
        tied=tied,
    )

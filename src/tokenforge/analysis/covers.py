"""Byte-prefix covers (Phan et al., 2024, "Understanding and Mitigating Tokenization
Bias in Language Models", arXiv 2410.09303).

A language model over tokens gives the probability of a byte prefix ``p`` only
as a sum over every token sequence that could have produced it: the *cover*
of ``p`` is the set of sequences ``t1..tk`` whose bytes before the last token
are a proper prefix of ``p`` and whose bytes with the last token start with
``p`` (the last token may run past the end of ``p``). Summing the model's
probabilities over the cover gives the exact probability of the next bytes
without the prompt-boundary bias of ``encode(p)``. Phan et al. restrict the
cover to canonical (valid) encodings, since a model trained on canonical
tokenizations gives the others almost no mass: ``canonical=True``.

:func:`covers` walks the prefix left to right over the vocabulary's sorted
token bytes (a flattened trie, :class:`~tokenforge.analysis.healing.TokenIndex`):
at each byte position the tokens that are a proper prefix of the rest lead on,
and the tokens that start with the whole rest end a cover. The work is
proportional to the number of covers produced plus ``len(p)`` lookups per
position, so enumerating is output-sensitive; it is a generator because the
cover of a long prefix can be exponentially large.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..errors import InvalidArgumentError
from .canonical import is_canonical
from .healing import TokenIndex

__all__ = ["count_covers", "covers"]


def covers(
    tok: Any,
    prefix: bytes,
    *,
    canonical: bool = False,
    index: TokenIndex | None = None,
) -> Iterator[tuple[int, ...]]:
    """The token sequences whose bytes cover ``prefix`` (see the module docstring).

    Sequences come out depth-first: shorter first tokens before longer ones at
    each step. ``canonical=True`` keeps only the sequences that are how their
    own bytes encode (:func:`~tokenforge.analysis.canonical.is_canonical`).
    Pass a :class:`TokenIndex` to reuse the sorted vocabulary across calls.

    >>> import tokenforge
    >>> enc = tokenforge.get_encoding("gpt2")
    >>> cov = list(covers(enc, b" hello", canonical=True))
    >>> [enc.decode(c) for c in cov][:3]
    [' hello', ' helloa', ' helload']
    """
    if not isinstance(prefix, (bytes, bytearray)):
        raise InvalidArgumentError(f"covers expects the prefix as bytes, got {type(prefix).__name__}")
    data = bytes(prefix)
    if not data:
        raise InvalidArgumentError("the prefix is empty: every token covers it")
    idx = index if index is not None else TokenIndex(tok)
    path: list[int] = []

    def walk(pos: int) -> Iterator[tuple[int, ...]]:
        rest = data[pos:]
        for t in idx.starting_with(rest):
            seq = (*path, t)
            if not canonical or is_canonical(tok, seq):
                yield seq
        for piece in idx.prefixes_of(rest):
            for t in idx.ids_of(piece):
                path.append(t)
                yield from walk(pos + len(piece))
                path.pop()

    yield from walk(0)


def count_covers(tok: Any, prefix: bytes, *, index: TokenIndex | None = None) -> int:
    """How many sequences :func:`covers` yields (``canonical=False``), without listing them:
    dynamic programming over byte positions, ``O(len(prefix)**2)`` lookups.

    >>> import tokenforge
    >>> count_covers(tokenforge.get_encoding("gpt2"), b" hello") > 1000
    True
    """
    if not isinstance(prefix, (bytes, bytearray)) or not prefix:
        raise InvalidArgumentError("count_covers expects a non-empty bytes prefix")
    data = bytes(prefix)
    idx = index if index is not None else TokenIndex(tok)
    n = len(data)
    ways = [0] * (n + 1)  # ways[pos]: token sequences that spell data[:pos] exactly
    ways[0] = 1
    total = 0
    for pos in range(n):
        if not ways[pos]:
            continue
        rest = data[pos:]
        total += ways[pos] * len(idx.starting_with(rest))
        for piece in idx.prefixes_of(rest):
            ways[pos + len(piece)] += ways[pos] * len(idx.ids_of(piece))
    return total

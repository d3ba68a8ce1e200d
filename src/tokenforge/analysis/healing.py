"""Prefix stability and token healing (Microsoft Guidance; Lundberg, 2023).

``encode(s1)`` is in general **not** a token prefix of ``encode(s1 + s2)``:
appending text can trigger a merge across the old end. The smallest example:
with the merges ``[a+b, ab+c]``, ``encode("ab") == [ab]`` but
``encode("abc") == [abc]``. A prompt that ends mid-word therefore ends in a
token boundary the model rarely saw in training ("The qu" → ``" qu"`` where
training text had ``" quick"``).

Token healing is the inference-side repair: back off the last prompt tokens
whose text could still be continued into a longer token, keep the rest, and
constrain generation so that its decoded bytes start with the text that was
backed off. With one token backed off the constraint is "the first generated
token starts with these bytes"; with several it is a sequence constraint,
which :meth:`HealResult.allowed_next` expresses step by step.

:func:`heal` backs off token ``k`` (counting from the end) while the bytes of
the last ``k`` tokens are a *proper prefix* of some vocabulary token — i.e.
while a single token could have covered that text and more — up to
``max_backoff`` tokens. It then checks that the constraint is satisfiable in
the vocabulary: either some token starts with the whole prefix (one token can
heal it), or the prefix can be covered by a sequence of tokens that are
prefixes of it followed by one that starts with the rest.
"""

from __future__ import annotations

from ..errors import InvalidArgumentError
from ..models.bpe import BPE

import bisect
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .explain import render_bytes, token_bytes

__all__ = ["HealResult", "TokenIndex", "heal", "is_prefix_stable", "unstable_boundaries"]


def is_prefix_stable(tokenizer: Any, s1: str, s2: str) -> bool:
    """Is ``encode_ordinary(s1)`` a token prefix of ``encode_ordinary(s1 + s2)``?

    >>> import tokenforge
    >>> enc = tokenforge.get_encoding("cl100k_base")
    >>> is_prefix_stable(enc, "Hello", " world"), is_prefix_stable(enc, "hel", "lo")
    (True, False)
    """
    a = tokenizer.encode_ordinary(s1)
    b = tokenizer.encode_ordinary(s1 + s2)
    return b[: len(a)] == a


def unstable_boundaries(tokenizer: Any, text: str) -> list[int]:
    """The cut positions ``0 < i < len(text)`` (code points) where the tokens of
    ``text[:i]`` are not a prefix of the tokens of ``text``: cutting a stream
    there and encoding the head alone gives ids that the whole text would not.

    This encodes every prefix, so it costs ``len(text)`` encodings.

    >>> import tokenforge
    >>> unstable_boundaries(tokenforge.get_encoding("cl100k_base"), "hello world")
    [1, 2, 3, 4, 6, 7, 8, 9, 10]
    """
    full = tokenizer.encode_ordinary(text)
    out = []
    for i in range(1, len(text)):
        head = tokenizer.encode_ordinary(text[:i])
        if full[: len(head)] != head:
            out.append(i)
    return out


class TokenIndex:
    """The vocabulary's token bytes sorted, for "which tokens start with these bytes" queries."""

    def __init__(self, tokenizer: Any) -> None:
        if isinstance(tokenizer.model, BPE):
            items = [(b, i) for i, b in tokenizer.model.vocab.items()]
        else:
            specials = set(tokenizer.special_tokens.values())
            items = [(token_bytes(tokenizer, i), i) for i in tokenizer.get_vocab().values() if i not in specials]
        items = [(b, i) for b, i in items if b]
        items.sort()
        self._keys = [b for b, _ in items]
        self._ids = [i for _, i in items]
        self._by_bytes: dict[bytes, list[int]] = {}
        for b, i in items:
            self._by_bytes.setdefault(b, []).append(i)

    def starting_with(self, prefix: bytes) -> list[int]:
        """Ids of the tokens whose bytes start with ``prefix``."""
        lo = bisect.bisect_left(self._keys, prefix)
        out = []
        for k in range(lo, len(self._keys)):
            if not self._keys[k].startswith(prefix):
                break
            out.append(self._ids[k])
        return out

    def extends(self, prefix: bytes) -> bool:
        """Is ``prefix`` a proper prefix of some token?"""
        lo = bisect.bisect_right(self._keys, prefix)
        while lo < len(self._keys) and self._keys[lo] == prefix:
            lo += 1
        return lo < len(self._keys) and self._keys[lo].startswith(prefix)

    def is_token(self, data: bytes) -> bool:
        return data in self._by_bytes

    def ids_of(self, data: bytes) -> list[int]:
        """The ids whose bytes are exactly ``data``."""
        return list(self._by_bytes.get(data, ()))

    def prefixes_of(self, data: bytes) -> list[bytes]:
        """The token byte strings that are non-empty proper prefixes of ``data``."""
        return [data[:n] for n in range(1, len(data)) if data[:n] in self._by_bytes]


@dataclass
class HealResult:
    """What :func:`heal` decided.

    ``kept_ids`` go to the model as the prompt; generation must then produce
    bytes starting with ``prefix_bytes`` (the text of ``removed_ids``).
    ``single_token`` counts the tokens that heal the prefix in one step
    (their bytes start with it); ``satisfiable`` says the constraint can be
    met at all in this vocabulary.
    """

    kept_ids: list[int]
    removed_ids: list[int]
    prefix_bytes: bytes
    single_token: int
    satisfiable: bool
    _index: TokenIndex

    @property
    def prefix_text(self) -> str:
        return self.prefix_bytes.decode("utf-8", "replace")

    def allowed_next(self, generated: bytes = b"") -> list[int]:
        """Ids the model may generate next, given the bytes generated so far.

        While the prefix is not yet reproduced, a token is allowed when its
        bytes start with the rest of the prefix (it completes the prefix) or
        are a proper prefix of that rest (the prefix continues in later
        tokens). Once the generated bytes cover the prefix, every token is
        allowed and ``None`` semantics are left to the caller: this returns an
        empty list to mean "no constraint any more".
        """
        prefix = self.prefix_bytes
        if len(generated) >= len(prefix):
            if not generated.startswith(prefix):
                raise InvalidArgumentError("the generated bytes do not reproduce the healed prefix")
            return []
        if not prefix.startswith(generated):
            raise InvalidArgumentError("the generated bytes already differ from the healed prefix")
        rest = prefix[len(generated) :]
        ids = set(self._index.starting_with(rest))
        for p in self._index.prefixes_of(rest):
            ids.update(self._index.ids_of(p))
        return sorted(ids)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kept_ids": list(self.kept_ids),
            "removed_ids": list(self.removed_ids),
            "prefix": render_bytes(self.prefix_bytes),
            "prefix_hex": self.prefix_bytes.hex(),
            "single_token_heals": self.single_token,
            "satisfiable": self.satisfiable,
        }


def _coverable(index: TokenIndex, prefix: bytes) -> bool:
    """Can generated tokens reproduce ``prefix``: some tokens that are prefixes of it, then
    one that starts with what is left (dynamic programming over byte positions)."""
    n = len(prefix)
    if n == 0:
        return True
    reach = [False] * (n + 1)
    reach[0] = True
    for pos in range(n):
        if not reach[pos]:
            continue
        rest = prefix[pos:]
        if index.starting_with(rest):
            return True
        for p in index.prefixes_of(rest):
            reach[pos + len(p)] = True
    return reach[n]


def heal(
    tokenizer: Any,
    prompt_ids: Sequence[int],
    max_backoff: int = 1,
    index: TokenIndex | None = None,
) -> HealResult:
    """Back off the last prompt tokens whose text could continue into a longer token.

    Token ``k`` from the end is backed off (``k <= max_backoff``) while the
    bytes of the last ``k`` tokens are a proper prefix of some vocabulary
    token. Special tokens are never backed off. Pass a :class:`TokenIndex` to
    reuse the sorted vocabulary across calls.

    >>> import tokenforge
    >>> enc = tokenforge.get_encoding("cl100k_base")
    >>> r = heal(enc, enc.encode("The word is hel"))
    >>> enc.decode(r.kept_ids), r.prefix_bytes, r.satisfiable
    ('The word is', b' hel', True)
    """
    if max_backoff < 0:
        raise InvalidArgumentError("max_backoff must be >= 0")
    idx = index if index is not None else TokenIndex(tokenizer)
    ids = list(prompt_ids)
    specials = set(tokenizer.special_tokens.values())
    k = 0
    tail = b""
    while k < min(max_backoff, len(ids)):
        tid = ids[len(ids) - 1 - k]
        if tid in specials:
            break
        candidate = token_bytes(tokenizer, tid) + tail
        if not idx.extends(candidate):
            break
        tail = candidate
        k += 1
    kept = ids[: len(ids) - k]
    removed = ids[len(ids) - k :]
    single = len(idx.starting_with(tail)) if tail else 0
    return HealResult(
        kept_ids=kept,
        removed_ids=removed,
        prefix_bytes=tail,
        single_token=single,
        satisfiable=_coverable(idx, tail),
        _index=idx,
    )

"""Special tokens: matched first, on raw text, longest match first.

Special tokens sit outside the pipeline. Every encode call states
a policy with tiktoken's two arguments:

* ``allowed_special``: the specials that are encoded as their special id when
  their string occurs in the text (``"all"`` or a set).
* ``disallowed_special``: the specials whose string raises
  :class:`SpecialTokenError` when it occurs in the text (``"all"``, the
  default, means every special that is not allowed; ``()`` means none, so
  their strings are encoded as ordinary text).

Raising by default closes an injection hole (tiktoken's default): user text that
contains ``<|endoftext|>`` cannot forge a document boundary unless the caller
asked for it. Matching is longest first, so ``<|endoftext|><|endoftext|>``
wins over ``<|endoftext|>`` when both are registered.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping
from functools import lru_cache
from types import MappingProxyType
from typing import Literal, Union, cast

import regex

from .errors import SpecialTokenError

SpecialPolicy = Union[Literal["all"], Collection[str]]


def special_regex(tokens: Collection[str]) -> "regex.Pattern[str] | None":
    """A regex matching any of ``tokens``, longest alternative first."""
    if not tokens:
        return None
    ordered = sorted(tokens, key=lambda t: (-len(t), t))
    return regex.compile("|".join(regex.escape(t) for t in ordered))


class SpecialTokens:
    """An immutable ``{string: id}`` table of special tokens with policy helpers."""

    __slots__ = ("_ids", "_by_id", "_all", "_guarded", "_max_len", "__weakref__")

    def __init__(self, tokens: Mapping[str, int] | None = None, *, guard: bool = True) -> None:
        ids: dict[str, int] = {}
        by_id: dict[int, str] = {}
        for tok, i in (tokens or {}).items():
            if not isinstance(tok, str) or not tok:
                raise SpecialTokenError(f"special token must be a non-empty str, got {tok!r}")
            if not isinstance(i, int) or isinstance(i, bool) or i < 0:
                raise SpecialTokenError(f"special token {tok!r} needs a non-negative int id, got {i!r}")
            ids[tok] = i
            by_id.setdefault(i, tok)  # two strings may share an id (o200k_harmony): the first decodes
        self._ids = ids
        self._by_id = by_id
        self._all = frozenset(ids)
        # What disallowed_special="all" covers: every special (tiktoken), or none when the
        # source library never reads these strings as specials (SentencePiece's control pieces).
        self._guarded = self._all if guard else frozenset()
        self._max_len = max((len(t) for t in ids), default=0)

    @property
    def ids(self) -> Mapping[str, int]:
        return MappingProxyType(self._ids)

    @property
    def by_id(self) -> Mapping[int, str]:
        return MappingProxyType(self._by_id)

    @property
    def all(self) -> frozenset[str]:
        return self._all

    @property
    def max_len(self) -> int:
        """Length in characters of the longest special token (0 when there is none)."""
        return self._max_len

    def __len__(self) -> int:
        return len(self._ids)

    def resolve(
        self, allowed_special: SpecialPolicy, disallowed_special: SpecialPolicy
    ) -> tuple[frozenset[str], frozenset[str]]:
        """Turn tiktoken-style arguments into ``(allowed, disallowed)`` sets."""
        if allowed_special == "all":
            allowed = self._all
        else:
            allowed = self._as_set(allowed_special, "allowed_special")
        if disallowed_special == "all":
            disallowed = self._guarded - allowed
        else:
            disallowed = self._as_set(disallowed_special, "disallowed_special")
        return allowed, disallowed

    def _as_set(self, value: object, arg: str) -> frozenset[str]:
        if isinstance(value, str):
            raise SpecialTokenError(
                f"{arg} must be 'all' or a collection of special-token strings, got the str {value!r}"
            )
        try:
            chosen = frozenset(cast("Iterable[str]", value))
        except TypeError:
            raise SpecialTokenError(f"{arg} must be 'all' or a collection of strings, got {value!r}") from None
        for t in chosen:
            if not isinstance(t, str):
                raise SpecialTokenError(f"{arg} must hold special-token strings, got {t!r}")
        if arg == "allowed_special":
            # As tiktoken: allowing a string that is no special token of this tokenizer
            # allows nothing. A disallowed string is searched for and raises all the same.
            return chosen & self._all
        return chosen

    def check(self, text: str, disallowed: frozenset[str]) -> None:
        """Raise if ``text`` contains the string of a disallowed special token."""
        if not contains_any(text, disallowed):
            return
        pattern = cached_special_regex(disallowed)
        m = pattern.search(text) if pattern is not None else None
        if m is not None:
            raise SpecialTokenError(
                f"the text contains the special token {m.group()!r} at character {m.start()}. "
                "It is disallowed by default so that user text cannot inject control tokens. "
                f"Pass allowed_special={{{m.group()!r}}} (or 'all') to encode it as a special token, "
                "or disallowed_special=() to encode it as ordinary text."
            )

    def check_many(self, texts: list[str], disallowed: frozenset[str]) -> None:
        """:meth:`check` on each text, with one regex search over all of them when no
        special token holds the separator."""
        pattern = cached_special_regex(disallowed)
        if pattern is None:
            return
        if any(_SEP in t for t in disallowed) or pattern.search(_SEP.join(texts)) is not None:
            for t in texts:
                self.check(t, disallowed)

    def split(self, text: str, allowed: frozenset[str]) -> Iterator[tuple[str, int | None]]:
        """Yield ``(segment, None)`` for ordinary text and ``(token, id)`` for each
        allowed special token, in order; empty segments are skipped."""
        pattern = cached_special_regex(allowed)
        if pattern is None:
            if text:
                yield text, None
            return
        pos = 0
        ids = self._ids
        for m in pattern.finditer(text):
            if m.start() > pos:
                yield text[pos : m.start()], None
            yield m.group(), ids[m.group()]
            pos = m.end()
        if pos < len(text):
            yield text[pos:], None


#: Joins a batch for one special-token search (a match cannot cross it unless a special holds it).
_SEP = "\x00"


def check_special_list(special_tokens: Iterable[str], reserved: Collection[str] = ()) -> list[str]:
    """Validate a trainer's ``special_tokens``: non-empty strings, none listed twice
    (nor equal to one of ``reserved``, e.g. the unknown token). Returns them as a list."""
    if isinstance(special_tokens, str):
        raise SpecialTokenError("special_tokens must be a list of strings, not one string")
    specials = list(special_tokens)
    seen = set(reserved)
    for t in specials:
        if not isinstance(t, str) or not t:
            raise SpecialTokenError(f"special token must be a non-empty str, got {t!r}")
        if t in seen:
            extra = " (or equals the unknown token)" if reserved else ""
            raise SpecialTokenError(f"special token {t!r} is listed twice{extra}")
        seen.add(t)
    return specials


@lru_cache(maxsize=256)
def cached_special_regex(tokens: frozenset[str]) -> "regex.Pattern[str] | None":
    return special_regex(tokens)


#: Up to this many strings, ``contains_any`` searches each with ``str.__contains__``.
FEW_STRINGS = 16


def contains_any(text: str, strings: frozenset[str] | tuple[str, ...] | Mapping[str, object]) -> bool:
    """Does ``text`` hold one of ``strings``? A handful of substring searches (memchr-fast)
    beat one regex scan; many strings take the cached alternation."""
    if not strings:
        return False
    if len(strings) <= FEW_STRINGS:
        return any(s in text for s in strings)
    pattern = cached_special_regex(frozenset(strings))
    return pattern is not None and pattern.search(text) is not None

"""Truncation and padding, as HF ``tokenizers`` applies them after encoding.

A ``tokenizer.json`` may carry ``"truncation"`` and ``"padding"``; HF applies
them on every encode (``TokenizerImpl::post_process``):

1. **Truncation** first, on the sequences before the post-processor, with
   ``max_length`` reduced by the ids the post-processor will add (a ``max_length``
   below that number truncates nothing: HF's unsigned subtraction wraps). ``LongestFirst``
   shortens the longer of a pair first (HF's exact split rule below),
   ``OnlyFirst``/``OnlySecond`` one of them. The cut-off ids are not lost: they
   become ``overflowing`` encodings of at most ``max_length`` ids that overlap
   by ``stride`` ids, each post-processed like the main one.
2. **Padding** last: to a ``Fixed`` length or to the longest encoding of the
   batch (``BatchLongest``), rounded up to ``pad_to_multiple_of``, on the right
   or the left, with ``pad_id``/``pad_type_id``/``pad_token`` and attention mask 0.

Both are plain data in HF's JSON shape, so a file round-trips unchanged.
"""

from __future__ import annotations

import reprlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

from ._component import COUNT, field
from .encoding import Encoding
from .errors import FileFormatError, InvalidArgumentError

__all__ = ["Padding", "Truncation", "pad_encodings", "pad_ids", "truncate_encodings", "truncate_ids"]

_STRATEGIES = {"LongestFirst": "longest_first", "OnlyFirst": "only_first", "OnlySecond": "only_second"}


@dataclass(frozen=True)
class Truncation:
    """HF's ``TruncationParams``: ``max_length``, ``stride``, ``strategy``
    (``longest_first``, ``only_first``, ``only_second``), ``direction`` (``right``/``left``)."""

    max_length: int
    stride: int = 0
    strategy: str = "longest_first"
    direction: str = "right"

    def __post_init__(self) -> None:
        if not isinstance(self.max_length, int) or isinstance(self.max_length, bool) or self.max_length < 0:
            raise InvalidArgumentError(f"truncation max_length must be an int >= 0, got {self.max_length!r}")
        if not isinstance(self.stride, int) or self.stride < 0:
            raise InvalidArgumentError(f"truncation stride must be an int >= 0, got {self.stride!r}")
        if self.max_length and self.stride >= self.max_length:
            raise InvalidArgumentError(f"truncation stride ({self.stride}) must be below max_length ({self.max_length})")
        if self.strategy not in _STRATEGIES.values():
            raise InvalidArgumentError(f"truncation strategy must be one of {sorted(_STRATEGIES.values())}, got {self.strategy!r}")
        if self.direction not in ("right", "left"):
            raise InvalidArgumentError(f"truncation direction must be 'right' or 'left', got {self.direction!r}")

    def to_dict(self) -> dict[str, Any]:
        strategy = {v: k for k, v in _STRATEGIES.items()}[self.strategy]
        return {"direction": self.direction.capitalize(), "max_length": self.max_length, "strategy": strategy,
                "stride": self.stride}

    @classmethod
    def from_dict(cls, d: Any) -> "Truncation | None":
        if d is None:
            return None
        if not isinstance(d, Mapping) or "max_length" not in d:
            raise FileFormatError(f"truncation must be null or an object with 'max_length', got {d!r}")
        strategy = d.get("strategy", "LongestFirst")
        if strategy not in _STRATEGIES:
            raise FileFormatError(f"truncation strategy must be one of {sorted(_STRATEGIES)}, got {strategy!r}")
        direction = field(d, "direction", str, "Right", stage="truncation").lower()
        max_length = field(d, "max_length", COUNT, stage="truncation")
        stride = field(d, "stride", COUNT, 0, stage="truncation")
        try:
            return cls(max_length, stride, _STRATEGIES[strategy], direction)
        except (InvalidArgumentError, TypeError, ValueError) as exc:
            raise FileFormatError(f"truncation: {exc}") from None


@dataclass(frozen=True)
class Padding:
    """HF's ``PaddingParams``: ``length`` (``None``: the longest of the batch), ``direction``,
    ``pad_to_multiple_of``, ``pad_id``, ``pad_type_id``, ``pad_token``."""

    length: int | None = None
    direction: str = "right"
    pad_to_multiple_of: int | None = None
    pad_id: int = 0
    pad_type_id: int = 0
    pad_token: str = "[PAD]"

    def __post_init__(self) -> None:
        if self.length is not None and (not isinstance(self.length, int) or self.length < 0):
            raise InvalidArgumentError(f"padding length must be an int >= 0 or None, got {self.length!r}")
        if self.direction not in ("right", "left"):
            raise InvalidArgumentError(f"padding direction must be 'right' or 'left', got {self.direction!r}")
        if self.pad_to_multiple_of is not None and (not isinstance(self.pad_to_multiple_of, int) or self.pad_to_multiple_of < 1):
            raise InvalidArgumentError(f"pad_to_multiple_of must be a positive int or None, got {self.pad_to_multiple_of!r}")

    def to_dict(self) -> dict[str, Any]:
        return {"strategy": "BatchLongest" if self.length is None else {"Fixed": self.length},
                "direction": self.direction.capitalize(), "pad_to_multiple_of": self.pad_to_multiple_of,
                "pad_id": self.pad_id, "pad_type_id": self.pad_type_id, "pad_token": self.pad_token}

    @classmethod
    def from_dict(cls, d: Any) -> "Padding | None":
        if d is None:
            return None
        if not isinstance(d, Mapping):
            raise FileFormatError(f"padding must be null or an object, got {d!r}")
        strategy = d.get("strategy", "BatchLongest")
        if strategy == "BatchLongest":
            length = None
        elif isinstance(strategy, Mapping) and "Fixed" in strategy:
            length = strategy["Fixed"]
        else:
            raise FileFormatError(f"padding strategy must be 'BatchLongest' or {{'Fixed': n}}, got {strategy!r}")
        args = (
            field(d, "direction", str, "Right", stage="padding").lower(),
            field(d, "pad_to_multiple_of", (COUNT, type(None)), None, stage="padding"),
            field(d, "pad_id", COUNT, 0, stage="padding"), field(d, "pad_type_id", COUNT, 0, stage="padding"),
            field(d, "pad_token", str, "[PAD]", stage="padding"),
        )
        if length is not None and not (isinstance(length, int) and not isinstance(length, bool)):
            raise FileFormatError(f"padding: strategy 'Fixed' must be a non-negative integer, got {reprlib.repr(length)}")
        try:
            return cls(length, *args)
        except (InvalidArgumentError, TypeError, ValueError) as exc:
            raise FileFormatError(f"padding: {exc}") from None

    def target(self, longest: int) -> int:
        n = longest if self.length is None else self.length
        m = self.pad_to_multiple_of
        if m and n % m:
            n += m - n % m
        return n


# -- truncation -----------------------------------------------------------------
def _lengths(n_a: int, n_b: int | None, t: Truncation, max_length: int) -> tuple[int, int | None]:
    """The lengths HF keeps of a sequence (and its pair)."""
    total = n_a + (n_b or 0)
    if total <= max_length:
        return n_a, n_b
    remove = total - max_length
    if t.strategy == "longest_first":
        if n_b is None:
            return n_a - remove, None
        n1, n2, swap = n_a, n_b, False
        if n1 > n2:
            n1, n2, swap = n2, n1, True
        n2 = n1 if n1 > max_length else max(n1, max_length - n1)
        if n1 + n2 > max_length:
            n1 = max_length // 2
            n2 = n1 + max_length % 2
        return (n2, n1) if swap else (n1, n2)
    if t.strategy == "only_second" and n_b is None:
        raise InvalidArgumentError("truncation strategy only_second needs a pair of sequences")
    target = n_a if t.strategy == "only_first" else cast(int, n_b)
    if target <= remove:
        raise InvalidArgumentError(
            f"cannot truncate to {max_length} ids with {t.strategy}: that sequence has {target} ids, "
            f"{remove} would have to go"
        )
    return (n_a - remove, n_b) if t.strategy == "only_first" else (n_a, cast(int, n_b) - remove)


def _parts(n: int, keep: int, stride: int, direction: str) -> list[tuple[int, int]]:
    """``[(start, stop)]``: the kept window first, then the overflowing windows."""
    if keep >= n:
        return [(0, n)]
    if keep == 0:
        return [(0, 0), (0, n)]
    if stride >= keep:
        raise InvalidArgumentError(
            f"truncation stride ({stride}) must be below the {keep} ids a sequence keeps here (max_length "
            "less the ids the post-processor adds, shared between a pair)"
        )
    step = keep - stride
    out: list[tuple[int, int]] = []
    if direction == "right":
        for start in range(0, n, step):
            stop = min(start + keep, n)
            out.append((start, stop))
            if stop == n:
                break
    else:
        for last in range(n - 1, -1, -step):
            stop = last + 1
            start = max(stop - keep, 0)
            out.append((start, stop))
            if start == 0:
                break
    return out


def _slice(enc: Encoding, start: int, stop: int) -> Encoding:
    return Encoding(
        ids=enc.ids[start:stop], tokens=enc.tokens[start:stop], offsets=enc.offsets[start:stop],
        type_ids=enc.type_ids[start:stop], special_tokens_mask=enc.special_tokens_mask[start:stop],
        sequence_ids=enc.sequence_ids[start:stop], attention_mask=enc.attention_mask[start:stop],
        word_ids=enc.word_ids[start:stop],
    )


def _truncate(enc: Encoding, keep: int, t: Truncation) -> Encoding:
    parts = _parts(len(enc.ids), keep, t.stride, t.direction)
    main = _slice(enc, *parts[0])
    main.overflowing = [_slice(enc, s, e) for s, e in parts[1:]]
    return main


def truncate_encodings(a: Encoding, b: Encoding | None, t: Truncation, n_added: int) -> tuple[Encoding, Encoding | None]:
    """``a`` (and ``b``) cut to fit ``t.max_length`` with ``n_added`` ids still to come."""
    max_length = t.max_length - n_added if n_added else t.max_length
    if max_length < 0:  # HF's unsigned subtraction wraps around: nothing is cut
        return a, b
    if max_length == 0:
        return _truncate(a, 0, t), None if b is None else _truncate(b, 0, t)
    keep_a, keep_b = _lengths(len(a.ids), None if b is None else len(b.ids), t, max_length)
    return _truncate(a, keep_a, t), None if b is None else _truncate(b, cast(int, keep_b), t)


def truncate_ids(a: list[int], b: list[int] | None, t: Truncation, n_added: int) -> tuple[list[int], list[int] | None]:
    """The ids kept by :func:`truncate_encodings` (without the overflowing parts)."""
    max_length = t.max_length - n_added if n_added else t.max_length
    if max_length < 0:
        return a, b
    keep_a, keep_b = (0, 0) if max_length == 0 else _lengths(len(a), None if b is None else len(b), t, max_length)

    def cut(ids: list[int], keep: int) -> list[int]:
        if keep >= len(ids):
            return ids
        return ids[:keep] if t.direction == "right" else ids[len(ids) - keep:]

    return cut(a, keep_a), None if b is None else cut(b, cast(int, keep_b))


# -- padding --------------------------------------------------------------------
def _pad_one(enc: Encoding, n: int, p: Padding) -> None:
    k = n - len(enc.ids)
    for o in enc.overflowing:
        _pad_one(o, n, p)
    if k <= 0:
        return
    fields: tuple[tuple[list[Any], object], ...] = (
        (enc.ids, p.pad_id), (enc.tokens, p.pad_token), (enc.offsets, (0, 0)), (enc.type_ids, p.pad_type_id),
        (enc.special_tokens_mask, 1), (enc.sequence_ids, None), (enc.attention_mask, 0), (enc.word_ids, None),
    )
    for values, fill in fields:
        if p.direction == "right":
            values.extend([fill] * k)
        else:
            values[:0] = [fill] * k


def pad_encodings(encodings: list[Encoding], p: Padding) -> None:
    """Pad every encoding (and its overflowing parts) in place."""
    if not encodings:
        return
    n = p.target(max(len(e.ids) for e in encodings))
    for e in encodings:
        _pad_one(e, n, p)


def pad_ids(batch: list[list[int]], p: Padding) -> list[list[int]]:
    """The ids of :func:`pad_encodings`."""
    if not batch:
        return batch
    n = p.target(max(len(x) for x in batch))
    if p.direction == "right":
        return [x + [p.pad_id] * (n - len(x)) if len(x) < n else x for x in batch]
    return [[p.pad_id] * (n - len(x)) + x if len(x) < n else x for x in batch]

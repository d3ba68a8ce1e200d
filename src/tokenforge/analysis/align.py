"""Two tokenizations of the same text, aligned: which tokens of A cover the same bytes as which tokens of B.

Two tokenizers cut a text at different places, so a token of one rarely maps to
one token of the other. What does map is a *group*: a run of A's tokens and a
run of B's tokens that cover exactly the same bytes, with no smaller groups
inside. Cross-tokenizer knowledge distillation compares the teacher's and the
student's distributions on such groups (Boizard et al., 2024, "Towards
Cross-Tokenizer Distillation: the Universal Logit Distillation Loss for LLMs";
Minixhofer et al., 2025, "Universal Cross-Tokenizer Distillation via Approximate
Likelihood Matching"), and speculative decoding with a draft model of another
vocabulary verifies the draft at group boundaries (Timor et al., 2025,
"Accelerating LLM Inference with Lossless Speculative Decoding Algorithms for
Heterogeneous Vocabularies").

The alignment works on UTF-8 byte spans in the *original* text, so it is exact
through normalization: a lowercasing BERT tokenizer and cl100k align on the
bytes each token came from (:meth:`tokenforge.Tokenizer.encode_with_offsets`),
not on the text each token spells. A cut between two groups is a byte position
that is a token boundary of A or B and lies strictly inside no token of either.
Bytes that no token covers (the spaces BERT drops) stay in the group around
them, or form a group with no tokens when both tokenizers drop them. Tokens that
cover no text (``[CLS]``, ``[SEP]``, ``</s>`` added by a post-processor) form
groups of their own, with the other side empty (unless they sit strictly inside
a group, between two of its tokens: then they belong to it).

>>> import tokenforge
>>> a, b = tokenforge.get_encoding("gpt2"), tokenforge.get_encoding("cl100k_base")
>>> [(g.byte_span, len(g.a), len(g.b)) for g in align_text(a, b, "    return x")]
[((0, 3), 3, 1), ((3, 10), 1, 1), ((10, 12), 1, 1)]
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..encoding import surrogate_alignment
from ..errors import ArgumentTypeError, InvalidArgumentError

__all__ = ["AlignedGroup", "align", "align_spans", "align_text"]


@dataclass(frozen=True)
class AlignedGroup:
    """Tokens ``a_start:a_end`` of A and ``b_start:b_end`` of B, covering the same bytes.

    ``byte_start``/``byte_end``: the UTF-8 byte span in the text (equal for a token
    that covers no text); ``start``/``end``: the same span in code points.
    """

    byte_start: int
    byte_end: int
    start: int
    end: int
    a_start: int
    a_end: int
    b_start: int
    b_end: int

    @property
    def byte_span(self) -> tuple[int, int]:
        return (self.byte_start, self.byte_end)

    @property
    def span(self) -> tuple[int, int]:
        return (self.start, self.end)

    @property
    def a(self) -> range:
        """Indexes into A's tokens."""
        return range(self.a_start, self.a_end)

    @property
    def b(self) -> range:
        """Indexes into B's tokens."""
        return range(self.b_start, self.b_end)

    @property
    def one_to_one(self) -> bool:
        return self.a_end - self.a_start == 1 and self.b_end - self.b_start == 1

    def to_dict(self) -> dict[str, Any]:
        return {"byte_span": [self.byte_start, self.byte_end], "span": [self.start, self.end],
                "a": [self.a_start, self.a_end], "b": [self.b_start, self.b_end]}


def align_spans(
    spans_a: Sequence[tuple[int, int]],
    spans_b: Sequence[tuple[int, int]],
    n_bytes: int,
    char_span: Any = None,
) -> list[AlignedGroup]:
    """Align two token lists given each token's ``(byte_start, byte_end)`` in a text of
    ``n_bytes`` bytes. ``char_span(byte_start, byte_end)`` gives the code-point span
    (default: the byte span). Each list's spans must not go backwards (a token never
    starts before the previous token does), as every tokenizer's do."""
    char = char_span if char_span is not None else (lambda lo, hi: (lo, hi))
    for side, spans in (("A", spans_a), ("B", spans_b)):
        prev = 0
        for k, (s, e) in enumerate(spans):
            if not 0 <= s <= e <= n_bytes:
                raise InvalidArgumentError(f"token {k} of {side} has byte span ({s}, {e}) outside 0..{n_bytes}")
            if s < prev:
                raise InvalidArgumentError(
                    f"token {k} of {side} starts at byte {s}, before token {k - 1} does ({prev}): "
                    "the tokens are not in text order")
            prev = s
    # Candidate cuts: every token boundary, and the ends of the text.
    candidates = {0, n_bytes}
    inside = [0] * (n_bytes + 2)  # difference array: +1 at s+1, -1 at e, for "strictly inside"
    for spans in (spans_a, spans_b):
        for s, e in spans:
            if e > s:
                candidates.add(s)
                candidates.add(e)
                if e - s > 1:
                    inside[s + 1] += 1
                    inside[e] -= 1
    depth = 0
    covered = []
    for p in range(n_bytes + 1):
        depth += inside[p]
        covered.append(depth > 0)
    cuts = sorted(p for p in candidates if not covered[p])
    # Groups between consecutive cuts, then the zero-width tokens at their positions.
    starts = cuts[:-1]
    n_groups = len(starts)
    members_a: list[list[int]] = [[] for _ in range(n_groups)]
    members_b: list[list[int]] = [[] for _ in range(n_groups)]
    zero: list[tuple[int, int, int, int]] = []  # (position, order, side, index)
    for side, spans, members in ((0, spans_a, members_a), (1, spans_b, members_b)):
        for k, (s, e) in enumerate(spans):
            g = bisect.bisect_right(starts, s) - 1
            if e > s:
                members[g].append(k)
            elif 0 <= g < n_groups and cuts[g] < s < cuts[g + 1]:
                members[g].append(k)  # no text, but between two tokens of a group: part of it
            else:
                zero.append((s, side, k, 0))
    rows: list[tuple[tuple[int, int, int], AlignedGroup]] = []
    for g in range(n_groups):
        lo, hi = cuts[g], cuts[g + 1]
        ra = _run(members_a[g], "A", lo, hi)
        rb = _run(members_b[g], "B", lo, hi)
        if ra is None:
            ra = _empty_run(spans_a, lo)
        if rb is None:
            rb = _empty_run(spans_b, lo)
        rows.append(((lo, 1, hi), AlignedGroup(lo, hi, *char(lo, hi), ra[0], ra[1], rb[0], rb[1])))
    for pos, side, k, _ in zero:
        if side == 0:
            grp = AlignedGroup(pos, pos, *char(pos, pos), k, k + 1, *_empty_run(spans_b, pos, after=True))
        else:
            grp = AlignedGroup(pos, pos, *char(pos, pos), *_empty_run(spans_a, pos, after=True), k, k + 1)
        # zero-width tokens sit between the group ending at pos and the one starting there
        rows.append(((pos, 0, side * (1 << 40) + k), grp))
    rows.sort(key=lambda r: r[0])
    groups = [g for _, g in rows]
    _check_partition(groups, len(spans_a), len(spans_b))
    return groups


def _run(members: list[int], side: str, lo: int, hi: int) -> tuple[int, int] | None:
    if not members:
        return None
    first, last = members[0], members[-1]
    if last - first + 1 != len(members):
        raise InvalidArgumentError(
            f"the tokens of {side} covering bytes {lo}..{hi} are not consecutive in {side}'s token list")
    return first, last + 1


def _empty_run(spans: Sequence[tuple[int, int]], pos: int, after: bool = False) -> tuple[int, int]:
    """An empty index range at the place ``pos`` has in a token list."""
    for k, (s, e) in enumerate(spans):
        if (s > pos) or (s == pos and (e > s or not after)) or (after and s == pos and e == s):
            return k, k
    return len(spans), len(spans)


def _check_partition(groups: list[AlignedGroup], n_a: int, n_b: int) -> None:
    # every token in exactly one group, in order: the ranges tile 0..n
    for side, n in (("a", n_a), ("b", n_b)):
        seen = sorted((getattr(g, f"{side}_start"), getattr(g, f"{side}_end")) for g in groups)
        pos = 0
        for s, e in seen:
            if s == e:
                continue
            if s != pos:
                raise InvalidArgumentError(f"token {pos} of {side.upper()} is in no group or in two")
            pos = e
        if pos != n:
            raise InvalidArgumentError(f"token {pos} of {side.upper()} is in no group")


def align_text(tok_a: Any, tok_b: Any, text: str, **encode_kwargs: Any) -> list[AlignedGroup]:
    """Encode ``text`` with both tokenizers and align the tokens on the bytes of ``text``
    they came from (``encode_kwargs`` go to both ``encode_with_offsets`` calls).

    >>> import tokenforge
    >>> a, b = tokenforge.get_encoding("gpt2"), tokenforge.get_encoding("o200k_base")
    >>> [(g.span, len(g.a), len(g.b)) for g in align_text(a, b, "Hello world")]
    [((0, 5), 1, 1), ((5, 11), 1, 1)]
    """
    if not isinstance(text, str):
        raise ArgumentTypeError(f"align_text takes text as str, got {type(text).__name__}")
    spans_a = tok_a.encode_with_offsets(text, **encode_kwargs)
    spans_b = tok_b.encode_with_offsets(text, **encode_kwargs)
    repaired, where = surrogate_alignment(text)
    data = repaired.encode("utf-8")
    # per byte of the repaired text's UTF-8: the span in ``text`` of the character holding it
    owner: list[tuple[int, int]] = []
    for span, ch in zip(where, repaired):
        owner.extend([span] * len(ch.encode("utf-8")))
    return align_spans([(s.byte_start, s.byte_end) for s in spans_a], [(s.byte_start, s.byte_end) for s in spans_b],
                       len(data), _char_spans(data, owner, len(text)))


def _char_spans(data: bytes, owner: list[tuple[int, int]], n_chars: int) -> Any:
    """``(lo, hi) -> (start, end)``: the code points holding bytes ``lo..hi`` (a cut inside
    a character widens to the whole character)."""

    def at_start(b: int) -> int:
        return n_chars if b >= len(data) else owner[b][0]

    def at_end(b: int) -> int:
        if b >= len(data):
            return n_chars
        return owner[b][0] if data[b] & 0xC0 != 0x80 else owner[b][1]

    def span(lo: int, hi: int) -> tuple[int, int]:
        if lo == hi:
            return at_start(lo), at_start(lo)
        return at_start(lo), at_end(hi)

    return span



def _token_bytes(tok: Any, ids: list[int], specials_as_text: bool) -> list[bytes]:
    pieces: list[bytes] = tok.decode_tokens_bytes(ids)
    if specials_as_text:
        return pieces
    return [b"" if tok.is_special_token(i) else p for i, p in zip(ids, pieces)]


def align(
    tok_a: Any, ids_a: Sequence[int], tok_b: Any, ids_b: Sequence[int], *, specials_as_text: bool = False
) -> list[AlignedGroup]:
    """Align two id sequences that decode to the same bytes (each token's bytes from
    ``decode_tokens_bytes``). Raises :class:`~tokenforge.InvalidArgumentError` naming
    the first differing byte when they do not. Special tokens (``<|endoftext|>``,
    ``</s>``, ``[SEP]``: each tokenizer spells its own) count as covering no text and
    form groups of their own, unless ``specials_as_text``; so do tokens that decode to
    no bytes. Char offsets count UTF-8 characters of the decoded bytes.

    For tokenizers whose tokens do not spell the text byte for byte (BERT drops
    spaces and lowercases), align the text with :func:`align_text` instead.

    >>> import tokenforge
    >>> a, b = tokenforge.get_encoding("gpt2"), tokenforge.get_encoding("cl100k_base")
    >>> text = "unbelievable"
    >>> [(g.byte_span, len(g.a), len(g.b)) for g in align(a, a.encode(text), b, b.encode(text))]
    [((0, 2), 1, 1), ((2, 12), 3, 2)]
    """
    pieces_a = _token_bytes(tok_a, list(ids_a), specials_as_text)
    pieces_b = _token_bytes(tok_b, list(ids_b), specials_as_text)
    data_a, data_b = b"".join(pieces_a), b"".join(pieces_b)
    if data_a != data_b:
        k = next((i for i, (x, y) in enumerate(zip(data_a, data_b)) if x != y), min(len(data_a), len(data_b)))
        ctx_a, ctx_b = data_a[max(0, k - 10):k + 10], data_b[max(0, k - 10):k + 10]
        what = (f"A has {data_a[k:k + 1]!r}, B has {data_b[k:k + 1]!r}" if k < min(len(data_a), len(data_b))
                else f"one ends there (A has {len(data_a)} bytes, B has {len(data_b)})")
        raise InvalidArgumentError(
            f"the two id sequences decode to different bytes: first difference at byte {k} "
            f"({what}; around it A: {ctx_a!r}, B: {ctx_b!r})")
    owner: list[tuple[int, int]] = []  # the character (counted in the bytes) holding each byte
    c = -1
    for byte in data_a:
        if byte & 0xC0 != 0x80 or c < 0:
            c += 1
        owner.append((c, c + 1))
    char_span = _char_spans(data_a, owner, c + 1)

    def spans(pieces: list[bytes]) -> list[tuple[int, int]]:
        out, pos = [], 0
        for p in pieces:
            out.append((pos, pos + len(p)))
            pos += len(p)
        return out

    return align_spans(spans(pieces_a), spans(pieces_b), len(data_a), char_span)

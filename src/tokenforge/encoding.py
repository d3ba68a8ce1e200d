"""What encoding returns: :class:`Encoding` (ids, tokens, type ids, offsets) and
:class:`TokenSpan` (one token with its code-point and UTF-8 byte span).

Offsets are computed once, by :meth:`tokenforge.Tokenizer.encode_full`, which
carries every token's span back through pre-tokenization and normalization
(NFKC ``ﬃ`` -> ``ffi`` gives each token made of those three letters the span
of ``ﬃ``). :func:`token_spans` turns an :class:`Encoding` into
:class:`TokenSpan` objects, adding byte offsets:

* A token whose span overlaps a neighbour's is ``partial``: one of the three
  bytes of ``龘``, or a piece of a normalization expansion.
* Byte spans are the UTF-8 image of the character span, except in a run of
  overlapping tokens that are byte tokens (byte-level BPE's ``é¾``, byte
  fallback's ``<0xE9>``) whose bytes are exactly that run's UTF-8: those get
  their exact bytes.
* Tokens the post-processor adds (``[CLS]``, ``</s>``) get an empty span at the
  position they stand in and ``special=True``.

**Lone surrogates.** A Python ``str`` may hold surrogate code points, which have
no UTF-8 form; encoding replaces each one by U+FFFD (and, through UTF-16, joins
a high+low surrogate pair into the one character they spell). Character
offsets are always in the original ``str``: a lone surrogate is one code point,
as its U+FFFD is; a surrogate pair is two code points whose joined character is
one, so a token covering it spans both. Byte offsets are in the UTF-8 of the
repaired text (the bytes the tokens actually hold): a lone surrogate counts as
the three bytes of U+FFFD, a pair as the four of the joined character. For text
without surrogates this is simply ``text.encode("utf-8")``.

>>> import tokenforge
>>> spans = tokenforge.get_encoding("cl100k_base").encode_with_offsets("hi 龘")
>>> [(s.start, s.end, s.byte_start, s.byte_end, s.partial) for s in spans]
[(0, 2, 0, 2, False), (2, 4, 2, 4, True), (3, 4, 4, 5, True), (3, 4, 5, 6, True)]
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["Encoding", "TokenSpan", "surrogate_alignment", "token_spans", "utf8_char_starts"]


@dataclass
class Encoding:
    """One encoded input: ids plus what a model and a person need to read them.

    ``offsets[i]`` is the ``(start, end)`` code-point span of token ``i`` in the
    original text (``(0, 0)`` for tokens added by the post-processor);
    ``type_ids`` tells the first sequence (0) from the second (1);
    ``special_tokens_mask`` marks the tokens the post-processor added (as in HF
    tokenizers, a special token found in the text is 0 there).
    """

    ids: list[int] = field(default_factory=list)
    tokens: list[str] = field(default_factory=list)
    offsets: list[tuple[int, int]] = field(default_factory=list)
    type_ids: list[int] = field(default_factory=list)
    special_tokens_mask: list[int] = field(default_factory=list)
    sequence_ids: list[int | None] = field(default_factory=list)
    #: 1 for real tokens, 0 for padding (all ones when not given).
    attention_mask: list[int] = field(default_factory=list)
    #: The parts truncation cut off (HF's ``overflowing``), each post-processed and padded alike.
    overflowing: list["Encoding"] = field(default_factory=list)
    #: For pre-tokenized input (``is_pretokenized=True``): the index of the word each token
    #: comes from (``None`` for added tokens); ``None`` throughout otherwise.
    word_ids: list[int | None] = field(default_factory=list)

    def __post_init__(self) -> None:
        if len(self.attention_mask) != len(self.ids):
            self.attention_mask = [1] * len(self.ids)
        if len(self.word_ids) != len(self.ids):
            self.word_ids = [None] * len(self.ids)

    def __len__(self) -> int:
        return len(self.ids)

    def _append(self, tid: int, token: str, offset: tuple[int, int], type_id: int, special: bool, seq: int | None) -> None:
        self.ids.append(tid)
        self.tokens.append(token)
        self.offsets.append(offset)
        self.type_ids.append(type_id)
        self.special_tokens_mask.append(1 if special else 0)
        self.sequence_ids.append(seq)
        self.attention_mask.append(1)
        self.word_ids.append(None)

    def _extend(self, other: "Encoding", type_id: int, seq: int) -> None:
        self.ids.extend(other.ids)
        self.tokens.extend(other.tokens)
        self.offsets.extend(other.offsets)
        self.type_ids.extend([type_id] * len(other.ids))
        self.special_tokens_mask.extend(other.special_tokens_mask)
        self.sequence_ids.extend([seq] * len(other.ids))
        self.attention_mask.extend(other.attention_mask)
        self.word_ids.extend(other.word_ids)


@dataclass(frozen=True)
class TokenSpan:
    """One token and where it comes from in the original text.

    ``start``/``end``: code-point offsets into the original ``str`` (``text[start:end]``).
    ``byte_start``/``byte_end``: UTF-8 byte offsets (see the module docstring for lone surrogates).
    ``partial``: the token stands for only part of the characters in ``[start, end)``
    (a byte of a multi-byte character, or a piece of a normalization expansion such as
    ``ﬃ`` -> ``ff`` + ``i``); its neighbours share that character span.
    ``special``: a special/control token (matched from the text or added by the post-processor).
    """

    id: int
    token: str
    start: int
    end: int
    byte_start: int
    byte_end: int
    partial: bool = False
    special: bool = False

    @property
    def span(self) -> tuple[int, int]:
        return (self.start, self.end)

    @property
    def byte_span(self) -> tuple[int, int]:
        return (self.byte_start, self.byte_end)

    def to_dict(self) -> dict[str, object]:
        """JSON-able form (for ``--format json`` output)."""
        return {
            "id": self.id, "token": self.token, "start": self.start, "end": self.end,
            "byte_start": self.byte_start, "byte_end": self.byte_end, "partial": self.partial, "special": self.special,
        }


def surrogate_alignment(text: str) -> tuple[str, list[tuple[int, int]]]:
    """The text the encoders see, and for each of its characters the span in ``text``.

    Lone surrogates become U+FFFD; a high surrogate followed by a low one becomes the
    character they encode (what a UTF-16 round trip does). Text without surrogates is
    returned as it is, with the identity alignment.

    >>> surrogate_alignment("a\\ud83d\\ude00\\ud800")
    ('a😀\\ufffd', [(0, 1), (1, 3), (3, 4)])
    """
    try:
        text.encode("utf-8")
        return text, list(zip(range(len(text)), range(1, len(text) + 1)))
    except UnicodeEncodeError:
        pass
    out: list[str] = []
    align: list[tuple[int, int]] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        o = ord(c)
        if 0xD800 <= o <= 0xDBFF and i + 1 < n and 0xDC00 <= ord(text[i + 1]) <= 0xDFFF:
            out.append(chr(0x10000 + ((o - 0xD800) << 10) + (ord(text[i + 1]) - 0xDC00)))
            align.append((i, i + 2))
            i += 2
            continue
        out.append("\ufffd" if 0xD800 <= o <= 0xDFFF else c)
        align.append((i, i + 1))
        i += 1
    return "".join(out), align


def utf8_char_starts(text: str) -> list[int]:
    """``starts[k]`` = UTF-8 byte offset of character ``k``; ``starts[len(text)]`` = total."""
    import numpy as np

    cps = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    sizes = 1 + (cps >= 0x80).astype(np.int64) + (cps >= 0x800) + (cps >= 0x10000)
    starts = np.zeros(len(text) + 1, dtype=np.int64)
    np.cumsum(sizes, out=starts[1:])
    out: list[int] = starts.tolist()
    return out


def token_spans(enc: Encoding, text: str, token_bytes: Callable[[str], bytes | None]) -> list[TokenSpan]:
    """Each token of ``enc`` (the :meth:`~tokenforge.Tokenizer.encode_full` of ``text``)
    with its code-point and byte span; ``token_bytes(token)`` gives the exact bytes of a
    byte token, or ``None``."""
    try:
        text.encode("utf-8")
        fixed, align = text, None  # the identity alignment
    except UnicodeEncodeError:
        fixed, align = surrogate_alignment(text)
    starts = utf8_char_starts(fixed)
    n = len(enc.ids)
    added = [enc.sequence_ids[k] is None for k in range(n)]
    spans: list[tuple[int, int]] = []
    last = 0
    for k in range(n):
        if added[k]:
            spans.append((last, last))
        else:
            s, e = enc.offsets[k]
            spans.append((s, e))
            last = e
    # sentencepiece reports the byte pieces of one character as empty spans followed by one
    # that covers it: here they all cover it, so they are grouped (partial, exact bytes) below.
    k = 0
    while k < n:
        s0, e0 = spans[k]
        if added[k] or s0 != e0 or token_bytes(enc.tokens[k]) is None:
            k += 1
            continue
        j = k
        while j < n and not added[j] and spans[j] == (s0, s0) and token_bytes(enc.tokens[j]) is not None:
            j += 1
        if j < n and not added[j] and spans[j][0] == s0 and spans[j][1] > s0 and token_bytes(enc.tokens[j]) is not None:
            for g in range(k, j):
                spans[g] = spans[j]
        k = j + 1
    real = [k for k in range(n) if not added[k] and spans[k][0] < spans[k][1]]
    partial = [False] * n
    byte_spans = [(starts[s], starts[e]) for s, e in spans]
    # Runs of tokens whose spans overlap: partial, and given exact bytes when they are
    # byte tokens that spell the run's UTF-8.
    k = 0
    while k < len(real):
        m = k
        hi = spans[real[k]][1]
        while m + 1 < len(real) and spans[real[m + 1]][0] < hi:
            m += 1
            hi = max(hi, spans[real[m]][1])
        if m > k:
            group = real[k : m + 1]
            for g in group:
                partial[g] = True
            parts = [token_bytes(enc.tokens[g]) for g in group]
            s = spans[group[0]][0]
            if all(p is not None for p in parts) and b"".join(parts) == fixed[s:hi].encode("utf-8"):  # type: ignore[arg-type]
                pos = starts[s]
                for g, p in zip(group, parts):
                    byte_spans[g] = (pos, pos + len(p))  # type: ignore[arg-type]
                    pos += len(p)  # type: ignore[arg-type]
        k = m + 1
    out: list[TokenSpan] = []
    if align is None:  # identity: a span of the text is its own span of the original
        special = enc.special_tokens_mask
        return [
            TokenSpan(enc.ids[k], enc.tokens[k], s, e, byte_spans[k][0], byte_spans[k][1], partial[k],
                      bool(special[k]))
            for k, (s, e) in enumerate(spans)
        ]
    for k in range(n):
        s, e = spans[k]
        os_ = align[s][0] if s < len(align) else len(text)
        oe = align[e - 1][1] if e > s else os_
        out.append(
            TokenSpan(
                enc.ids[k], enc.tokens[k], os_, oe, byte_spans[k][0], byte_spans[k][1], partial[k],
                bool(enc.special_tokens_mask[k]),
            )
        )
    return out

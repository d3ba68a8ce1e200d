"""Token offsets in the original text, in two coordinate systems (seed 000 §5.6).

Extractive QA, NER, highlighting and editors all ask "which part of the input
is this token?". There are several answers, and an offset is useless unless it
says which one it is (seed 000 §5.6): a character offset in the *normalized*
text, a code-point offset in the *original* Python ``str``, and a byte offset in
the original's UTF-8. :func:`encode_with_offsets` returns the last two for
every token, for every tokenizer family:

* **Byte-level BPE** (:class:`~tokenforge.Tokenizer`): the tokens' bytes
  concatenate to the UTF-8 of the input, so cumulative byte lengths give exact
  byte spans, and the code-point span is the smallest run of characters that
  contains the byte span. A token that covers only part of a character (one of
  the three bytes of ``龘``, two of the four of ``🙂``) is ``partial``: its byte
  span is exact, its character span is that of the whole character, which the
  neighbouring tokens share.
* **Pipelines** (WordPiece, Unigram, SentencePiece BPE, byte-level BPE from a
  ``tokenizer.json``): offsets come from :meth:`~tokenforge.Pipeline.encode_full`,
  which carries them back through normalization by the alignment map (NFKC
  ``ﬃ`` -> ``ffi`` gives every token made of those three letters the span of
  ``ﬃ``). A token whose span overlaps a neighbour's is ``partial``. Byte spans
  are the UTF-8 image of the character span, except where a run of tokens
  sharing one span are byte tokens (``<0xE9>`` byte fallback, byte-level
  ``é¾``) whose bytes are exactly that span's UTF-8: those get their exact byte.
  Tokens the post-processor adds (``[CLS]``, ``</s>``) get an empty span at the
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
>>> from tokenforge.analysis.offsets import encode_with_offsets
>>> spans = encode_with_offsets(tokenforge.get_encoding("cl100k_base"), "hi 龘")
>>> [(s.start, s.end, s.byte_start, s.byte_end, s.partial) for s in spans]
[(0, 2, 0, 2, False), (2, 4, 2, 4, True), (3, 4, 4, 5, True), (3, 4, 5, 6, True)]
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from .. import bytelevel
from ..errors import TokenforgeError

__all__ = ["TokenSpan", "encode_with_offsets", "surrogate_alignment"]


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
        return text, [(i, i + 1) for i in range(len(text))]
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


def _byte_starts(text: str) -> list[int]:
    """``starts[k]`` = UTF-8 byte offset of character ``k``; ``starts[len(text)]`` = total."""
    starts = [0] * (len(text) + 1)
    pos = 0
    for k, c in enumerate(text):
        starts[k] = pos
        o = ord(c)
        pos += 1 if o < 0x80 else 2 if o < 0x800 else 3 if o < 0x10000 else 4
    starts[len(text)] = pos
    return starts


def encode_with_offsets(tokenizer: Any, text: str, **encode_kwargs: Any) -> list[TokenSpan]:
    """Encode ``text`` and map every token to its span in ``text`` (seed 000 §5.6).

    ``encode_kwargs`` go to the tokenizer's ``encode`` (``allowed_special=``,
    ``disallowed_special=``; for a Pipeline also ``add_special_tokens=``), so the
    ids are exactly those ``encode`` gives with the same arguments.

    >>> import tokenforge
    >>> enc = tokenforge.get_encoding("gpt2")
    >>> [(s.token, s.start, s.end) for s in encode_with_offsets(enc, "Hello world")]
    [('Hello', 0, 5), ('Ġworld', 5, 11)]
    """
    from ..pipeline import Pipeline
    from ..tokenizer import Tokenizer

    if not isinstance(text, str):
        from ..errors import EncodeInputError

        raise EncodeInputError(f"encode_with_offsets expects str, got {type(text).__name__}")
    if isinstance(tokenizer, Tokenizer):
        return _byte_level_offsets(tokenizer, text, encode_kwargs)
    if isinstance(tokenizer, Pipeline):
        return _pipeline_offsets(tokenizer, text, encode_kwargs)
    raise TypeError(f"encode_with_offsets takes a tokenforge Tokenizer or Pipeline, got {type(tokenizer).__name__}")


def _byte_level_offsets(tok: Any, text: str, kwargs: dict[str, Any]) -> list[TokenSpan]:
    ids = tok.encode(text, **kwargs)
    fixed, align = surrogate_alignment(text)
    starts = _byte_starts(fixed)
    specials = set(tok.special_tokens.values())
    out: list[TokenSpan] = []
    pos = 0
    pieces = tok.decode_tokens_bytes(ids)
    if b"".join(pieces) != fixed.encode("utf-8"):
        raise TokenforgeError(
            "the tokens' bytes are not the UTF-8 of the input, so byte offsets cannot be given "
            "(was encode called with options that change the text?)"
        )
    for tid, data in zip(ids, pieces):
        bs, be = pos, pos + len(data)
        pos = be
        i = bisect_right(starts, bs) - 1  # character holding the first byte
        j = bisect_right(starts, be - 1) - 1  # character holding the last byte
        partial = starts[i] != bs or starts[j + 1] != be
        special = tid in specials
        name = tok.id_to_token(tid)
        out.append(TokenSpan(tid, name, align[i][0], align[j][1], bs, be, partial, special))
    return out


def _pipeline_token_bytes(pipe: Any, token: str) -> bytes | None:
    """The exact bytes a pipeline token stands for, when it is a byte token; else ``None``."""
    model = pipe.model
    if (getattr(model, "byte_fallback", False) or getattr(model, "_byte_fallback", False)) and (
        len(token) == 6 and token.startswith("<0x") and token.endswith(">")
    ):
        try:
            return bytes([int(token[3:5], 16)])
        except ValueError:
            return None
    dec = pipe.decoder
    pre = pipe.pre_tokenizer
    if (dec is not None and type(dec).__name__ == "ByteLevel") or (pre is not None and type(pre).__name__ == "ByteLevel"):
        try:
            return bytelevel.decode_string(token)
        except KeyError:
            return None
    return None


def _pipeline_offsets(pipe: Any, text: str, kwargs: dict[str, Any]) -> list[TokenSpan]:
    enc = pipe.encode_full(text, **kwargs)
    fixed, align = surrogate_alignment(text)
    starts = _byte_starts(fixed)
    n = len(enc.ids)
    # Post-processor tokens carry (0, 0); place them where they stand (after the token before).
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
    # A token is partial when its span overlaps another token's span.
    partial = [False] * n
    real = [k for k in range(n) if not added[k] and spans[k][0] < spans[k][1]]
    for a, b in pairwise(real):
        if spans[b][0] < spans[a][1]:
            partial[a] = partial[b] = True
    byte_spans = [(starts[s], starts[e]) for s, e in spans]
    # Runs of byte tokens sharing one span get their exact byte, when the bytes check out.
    k = 0
    while k < len(real):
        m = k
        while m + 1 < len(real) and spans[real[m + 1]] == spans[real[k]]:
            m += 1
        if m > k:
            group = real[k : m + 1]
            parts = [_pipeline_token_bytes(pipe, enc.tokens[g]) for g in group]
            s, e = spans[group[0]]
            if all(p is not None for p in parts) and b"".join(parts) == fixed[s:e].encode("utf-8"):  # type: ignore[arg-type]
                pos = starts[s]
                for g, p in zip(group, parts):
                    byte_spans[g] = (pos, pos + len(p))  # type: ignore[arg-type]
                    pos += len(p)  # type: ignore[arg-type]
        k = m + 1
    out: list[TokenSpan] = []
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


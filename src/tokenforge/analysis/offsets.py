"""Token offsets in the original text, in two coordinate systems.

Extractive QA, NER, highlighting and editors all ask "which part of the input
is this token?". There are several answers, and an offset is useless unless it
says which one it is: a character offset in the *normalized* text, a
code-point offset in the *original* Python ``str``, and a byte offset in the
original's UTF-8. :meth:`tokenforge.Tokenizer.encode_with_offsets` returns the
last two for every token, for every tokenizer family; this module is its
function form. See :mod:`tokenforge.encoding` for how offsets are computed
(once, by :meth:`~tokenforge.Tokenizer.encode_full`).

>>> import tokenforge
>>> spans = encode_with_offsets(tokenforge.get_encoding("cl100k_base"), "hi 龘")
>>> [(s.start, s.end, s.byte_start, s.byte_end, s.partial) for s in spans]
[(0, 2, 0, 2, False), (2, 4, 2, 4, True), (3, 4, 4, 5, True), (3, 4, 5, 6, True)]
"""

from __future__ import annotations

from typing import Any

from ..encoding import TokenSpan, surrogate_alignment
from ..errors import EncodeInputError
from ..tokenizer import Tokenizer

__all__ = ["TokenSpan", "encode_with_offsets", "surrogate_alignment"]


def encode_with_offsets(tokenizer: Any, text: str, **encode_kwargs: Any) -> list[TokenSpan]:
    """``tokenizer.encode_with_offsets(text, **encode_kwargs)``: every token with its
    code-point and UTF-8 byte span in ``text``.

    >>> import tokenforge
    >>> enc = tokenforge.get_encoding("gpt2")
    >>> [(s.token, s.start, s.end) for s in encode_with_offsets(enc, "Hello world")]
    [('Hello', 0, 5), ('Ġworld', 5, 11)]
    """
    if not isinstance(tokenizer, Tokenizer):
        raise EncodeInputError(f"encode_with_offsets takes a tokenforge Tokenizer, got {type(tokenizer).__name__}")
    return tokenizer.encode_with_offsets(text, **encode_kwargs)

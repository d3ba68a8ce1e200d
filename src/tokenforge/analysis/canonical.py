"""Canonical tokenization for byte-level BPE (Geh et al., 2024; Vieira et al., 2024, 2025).

A tokenizer maps each string to one token sequence, its *canonical* encoding,
but a language model over tokens can emit any sequence, and most sequences
that decode to a given string are *non-canonical*: ``[" hel", "lo"]`` decodes
to the same bytes as ``[" hello"]`` yet ``encode(" hello")`` never produces
it. Geh et al. (2024, "Where is the signal in tokenization space?") measure
how much probability models give such sequences; Vieira et al. (2024, "From
language models over tokens to language models over characters",
arXiv 2412.03719) and Vieira et al. (2025, "Language Models over Canonical
Byte-Pair Encodings", ICML) restrict generation to canonical sequences.

Definitions used here, for a byte-level BPE tokenizer ``tok``:

* The canonical ids of a byte string ``b`` are ``tok.encode_bytes(b)``: for
  valid UTF-8 that is ``encode_ordinary`` of its text; otherwise the bytes
  path tiktoken uses for raw bytes. Special tokens are hard boundaries: a
  sequence is split at its special-token ids, and each stretch between them
  must be the canonical ids of its own bytes (as ``encode(text,
  allowed_special="all")`` encodes the text between special strings).
* :func:`is_canonical` re-encodes each stretch once and compares, so it costs
  time linear in the number of bytes of ``ids``.
* :class:`CanonicalMask` gives, for a canonical prefix ``p``, the tokens ``t``
  such that ``p + [t]`` is itself canonical. Such a ``p + [t]`` is a prefix of
  a canonical sequence (itself), so the mask is *sound*: generation that only
  picks allowed tokens stays canonical at every step. It is also *complete*
  (every prefix of a canonical sequence passes) whenever canonical sequences
  are closed under prefixes, which Vieira et al. (2025) prove for BPE without a
  pre-tokenizer, where a sequence is canonical iff each adjacent pair is
  (their bigram test, :func:`is_canonical_pair`). With a regex pre-tokenizer
  the mask still never admits a non-canonical sequence, but canonical
  sequences are not always prefix-closed, so it can refuse a token that a
  longer canonical sequence needs: a whitespace run at the end of a prefix is
  one piece under the ``\\s+(?!\\S)`` of the GPT-2 patterns but gives its
  last character to the next piece before a word (GPT-2 encodes ``"\\n\\nSmall"``
  as ``["\\n", "\\n", "Small"]``, yet ``["\\n", "\\n"]`` re-encodes as
  ``["\\n\\n"]``), and a prefix that ends inside a UTF-8 character goes
  through the bytes path, which merges the unfinished end as one piece.

The mask re-encodes only a window at the end of the prefix (from the start of
its third-last pre-token piece, widened over whitespace-only tokens, as
tiktoken widens the unstable end) joined with each candidate's bytes; the
tokens before the window cannot change when bytes are appended. A prefix
whose window does not re-encode to itself is not canonical and is refused.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import InvalidArgumentError
from ..pretokenizers import RegexSplit

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["CanonicalMask", "is_canonical", "is_canonical_pair"]


def _require_byte_level(tok: Any) -> None:
    tok.is_canonical(())  # raises InvalidArgumentError, naming the model, unless byte-level BPE


def is_canonical(tok: Any, ids: Iterable[int]) -> bool:
    """Would encoding the decoded bytes give exactly ``ids``?

    :meth:`tokenforge.Tokenizer.is_canonical`: each stretch between special tokens
    is decoded to bytes and encoded once with
    :meth:`~tokenforge.Tokenizer.encode_bytes` (linear time).

    >>> import tokenforge
    >>> enc = tokenforge.get_encoding("cl100k_base")
    >>> ids = enc.encode(" hello")
    >>> is_canonical(enc, ids), is_canonical(enc, enc.encode(" hel") + enc.encode("lo"))
    (True, False)
    """
    return bool(tok.is_canonical(ids))


def is_canonical_pair(tok: Any, a: int, b: int) -> bool:
    """The bigram test of Vieira et al. (2025): is ``[a, b]`` canonical on its own?

    For BPE without a pre-tokenizer a sequence is canonical iff all its
    adjacent pairs pass. With a regex pre-tokenizer the pair test is only a
    heuristic: a pair read on its own is pre-tokenized without its context,
    so use :func:`is_canonical` or :class:`CanonicalMask` for exact answers.
    """
    return is_canonical(tok, [a, b])


class CanonicalMask:
    """Next tokens that keep a canonical prefix canonical.

    :meth:`allows` tests one candidate, :meth:`mask` gives a ``numpy`` bool
    array over all ids (``tok.max_token_value + 1`` entries). Special tokens
    are always allowed (they end a stretch). Build once per tokenizer; each
    call costs the pre-tokenization of the prefix's last stretch plus one
    encoding of (window + candidate) per candidate.

    >>> import tokenforge
    >>> enc = tokenforge.get_encoding("cl100k_base")
    >>> m = CanonicalMask(enc)
    >>> p = enc.encode(" hel")
    >>> m.allows(p, enc.encode("lo")[0]), m.allows(p, enc.encode("!")[0])
    (False, True)
    """

    def __init__(self, tok: Any) -> None:
        _require_byte_level(tok)
        self._tok = tok
        pattern = tok.pattern
        self._split = RegexSplit(pattern) if pattern is not None else None
        self._specials = frozenset(tok.special_tokens.values())
        self._size = int(tok.max_token_value) + 1
        self._bytes: list[bytes | None] = [None] * self._size
        for i in range(self._size):
            if i in self._specials:
                continue
            try:
                self._bytes[i] = tok.decode_single_token_bytes(i)
            except Exception:  # ids with no token (gaps in a rank file)
                self._bytes[i] = None

    def _token_bytes(self, i: int) -> bytes:
        if not 0 <= i < self._size:
            raise InvalidArgumentError(f"token id {i} is outside the vocabulary (0..{self._size - 1})")
        b = self._bytes[i]
        if b is None and i not in self._specials:
            raise InvalidArgumentError(f"token id {i} has no token in this vocabulary")
        return b or b""

    def window(self, prefix: Sequence[int]) -> list[int]:
        """The ids at the end of ``prefix`` that a next token can change (checked canonical)."""
        seq = [int(i) for i in prefix]
        start = 0
        for k in range(len(seq) - 1, -1, -1):
            if seq[k] in self._specials:
                start = k + 1
                break
        stretch = seq[start:]
        if not stretch:
            return []
        sizes = [len(self._token_bytes(i)) for i in stretch]
        data = b"".join(self._token_bytes(i) for i in stretch)
        cut = self._window_start(data)
        # the token index whose start is the last token boundary at or before ``cut``
        k, pos = 0, 0
        while k < len(stretch) and pos + sizes[k] <= cut:
            pos += sizes[k]
            k += 1
        while k > 0 and all(c in b" \t\n\r" for c in self._token_bytes(stretch[k - 1])):
            k -= 1
        win = stretch[k:]
        if self._tok.encode_bytes(b"".join(self._token_bytes(i) for i in win)) != win:
            raise InvalidArgumentError("the prefix is not canonical: its last tokens are not how its bytes encode")
        return win

    def _window_start(self, data: bytes) -> int:
        """The byte offset where the third-last pre-token piece of ``data``'s valid UTF-8 head starts."""
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            text = data[: exc.start].decode("utf-8")
        if self._split is None:
            return 0
        pieces = self._split.split(text)
        if len(pieces) <= 3:
            return 0
        return len("".join(pieces[:-3]).encode("utf-8", "surrogatepass"))

    def allows(self, prefix: Sequence[int], token: int) -> bool:
        """Is ``prefix + [token]`` canonical (``prefix`` must be canonical)?"""
        t = int(token)
        win = self.window(prefix)
        if t in self._specials:
            return True
        data = b"".join(self._token_bytes(i) for i in win) + self._token_bytes(t)
        return bool(self._tok.encode_bytes(data) == [*win, t])

    def mask(self, prefix: Sequence[int]) -> npt.NDArray[np.bool_]:
        """``out[t]`` is True iff ``prefix + [t]`` is canonical; ids with no token are False."""
        import numpy as np

        win = self.window(prefix)
        head = b"".join(self._token_bytes(i) for i in win)
        out = np.zeros(self._size, dtype=np.bool_)
        texts: list[str] = []
        text_ids: list[int] = []
        n = len(win)
        for t in range(self._size):
            if t in self._specials:
                out[t] = True
                continue
            b = self._bytes[t]
            if b is None:
                continue
            data = head + b
            try:
                texts.append(data.decode("utf-8"))
                text_ids.append(t)
            except UnicodeDecodeError:
                out[t] = self._tok.encode_bytes(data) == [*win, t]
        if texts:
            encoded = self._tok.encode_ordinary_batch(texts)
            for t, got in zip(text_ids, encoded):
                out[t] = len(got) == n + 1 and got[n] == t and got[:n] == win
        return out

"""Decoding: ids -> bytes -> text, whole or streamed.

Byte-level BPE tokens are byte strings, and a token may hold part of a UTF-8
character (a CJK character or an emoji often spans two or three tokens). So
text is decoded from the joined bytes, never token by token (seed 004 §8.4),
and a streaming decoder buffers bytes until they form whole characters
(seed 003: "串流 API 必須緩衝到能解碼為止"): it never emits half a character
and, with ``errors="replace"``, emits U+FFFD only for bytes that can no
longer become valid UTF-8.
"""

from __future__ import annotations

import codecs
from collections.abc import Callable, Iterable, Iterator

from .errors import DecodeError

_ERRORS = ("strict", "replace", "ignore", "backslashreplace", "surrogateescape")


def check_errors(errors: str) -> None:
    if errors not in _ERRORS:
        raise ValueError(f"errors must be one of {', '.join(_ERRORS)}; got {errors!r}")


def bytes_to_text(data: bytes, errors: str = "replace") -> str:
    """UTF-8 decode with tokenforge's error reporting."""
    check_errors(errors)
    try:
        return data.decode("utf-8", errors)
    except UnicodeDecodeError as exc:
        raise DecodeError(
            f"token bytes are not valid UTF-8: byte {exc.start} of the decoded bytes "
            f"({data[exc.start:exc.end]!r}) {exc.reason}; use errors='replace' to get U+FFFD"
        ) from None


class StreamDecoder:
    """Incremental decoder: feed ids as they arrive, get text as soon as it is whole.

    >>> import tokenforge
    >>> enc = tokenforge.get_encoding("gpt2")
    >>> dec = enc.stream_decoder()
    >>> "".join(dec.step(i) for i in enc.encode("héllo 🙂")) + dec.finish()
    'héllo 🙂'
    """

    __slots__ = ("_token_bytes", "_decoder", "_errors")

    def __init__(self, token_bytes: Callable[[int], bytes], errors: str = "replace") -> None:
        check_errors(errors)
        self._token_bytes = token_bytes
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors)
        self._errors = errors

    def step(self, token_id: int) -> str:
        """Add one id; return the text that became complete (maybe ``""``)."""
        return self._decode(self._token_bytes(token_id), final=False)

    def feed(self, ids: Iterable[int]) -> str:
        """Add several ids; return the text that became complete."""
        data = b"".join(self._token_bytes(i) for i in ids)
        return self._decode(data, final=False)

    def finish(self) -> str:
        """End of stream: flush what is buffered (U+FFFD for a cut-off character
        under ``errors="replace"``; :class:`DecodeError` under ``"strict"``)."""
        return self._decode(b"", final=True)

    @property
    def pending(self) -> bytes:
        """Bytes held back because they do not yet form a whole character."""
        return self._decoder.getstate()[0]

    def _decode(self, data: bytes, final: bool) -> str:
        try:
            return self._decoder.decode(data, final)
        except UnicodeDecodeError as exc:
            raise DecodeError(
                f"streamed token bytes are not valid UTF-8 ({exc.reason}); "
                "use errors='replace' to get U+FFFD"
            ) from None

    def decode_iter(self, ids: Iterable[int]) -> Iterator[str]:
        """Yield non-empty text chunks for a stream of ids, then the flushed tail."""
        for i in ids:
            out = self.step(i)
            if out:
                yield out
        tail = self.finish()
        if tail:
            yield tail

"""GPT-2's reversible byte <-> unicode alphabet (Radford et al., 2019; OpenAI's GPT-2 ``encoder.py``).

GPT-2's ``vocab.json`` and ``merges.txt`` store token bytes as printable
strings: the 188 printable bytes stand for themselves, and the other 68 bytes
are shifted, in ascending order, to ``chr(256 + n)`` (so ``0x20`` is ``Ġ`` and
``0x0A`` is ``Ċ``). The map is a bijection on 256 symbols, so any byte string
round-trips exactly.
"""

from __future__ import annotations

from functools import lru_cache


@lru_cache(maxsize=1)
def bytes_to_unicode() -> dict[int, str]:
    """Return GPT-2's map from each byte value to its stand-in character.

    >>> bytes_to_unicode()[0x20]
    'Ġ'
    >>> bytes_to_unicode()[ord("A")]
    'A'
    """
    printable = (
        list(range(ord("!"), ord("~") + 1))
        + list(range(ord("¡"), ord("¬") + 1))
        + list(range(ord("®"), ord("ÿ") + 1))
    )
    mapping = {b: chr(b) for b in printable}
    shifted = 0
    for b in range(256):
        if b not in mapping:
            mapping[b] = chr(256 + shifted)
            shifted += 1
    return mapping


@lru_cache(maxsize=1)
def unicode_to_bytes() -> dict[str, int]:
    """The inverse of :func:`bytes_to_unicode`."""
    return {c: b for b, c in bytes_to_unicode().items()}


@lru_cache(maxsize=1)
def _tables() -> tuple[dict[int, str], dict[int, int]]:
    """``str.translate`` tables: latin-1 character -> printable character, and back
    (characters outside the alphabet map to U+FFFF, which latin-1 cannot encode)."""
    forward = {b: c for b, c in bytes_to_unicode().items()}
    backward = {ord(c): b for b, c in forward.items()}
    for o in range(256):
        backward.setdefault(o, 0xFFFF)
    return forward, backward


def encode_bytes(data: bytes) -> str:
    """Token bytes -> GPT-2 printable string. ``encode_bytes(b" the") == "Ġthe"``."""
    return data.decode("latin-1").translate(_tables()[0])


def decode_string(text: str) -> bytes:
    """GPT-2 printable string -> token bytes; raises ``KeyError`` on a character
    outside the 256-symbol alphabet.

    >>> decode_string("Ġthe")
    b' the'
    """
    try:
        return text.translate(_tables()[1]).encode("latin-1")
    except UnicodeEncodeError as exc:
        raise KeyError(text[exc.start]) from None

"""GPT-2's reversible byte <-> unicode alphabet (seed 000 §3.1, D01).

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


def encode_bytes(data: bytes) -> str:
    """Token bytes -> GPT-2 printable string. ``encode_bytes(b" the") == "Ġthe"``."""
    table = bytes_to_unicode()
    return "".join(table[b] for b in data)


def decode_string(text: str) -> bytes:
    """GPT-2 printable string -> token bytes; raises ``KeyError`` on a character
    outside the 256-symbol alphabet."""
    table = unicode_to_bytes()
    return bytes(table[c] for c in text)

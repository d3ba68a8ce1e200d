"""The pinned Unicode data of the native tables, for tests.

``tools/gen_unicode_tables.py`` builds the scanners' class bits from Unicode data
checked in under ``tools/ucd/`` (16.0.0 for the split patterns, as tiktoken's
``regex-syntax`` and HF's Oniguruma; 8.0.0 for BERT's punctuation). The ``regex``
module follows a newer Unicode version, so a test that wants "the pattern, as
tiktoken reads it" uses :func:`pinned_findall`: the named pattern with every
``\\p{..}``, ``\\s`` and ``\\S`` replaced by the explicit code point sets of the
pinned data, run by ``regex``.
"""

from __future__ import annotations

import importlib.util
from functools import lru_cache
from pathlib import Path

import regex

from tokenforge.pretokenizers import PATTERNS

ROOT = Path(__file__).resolve().parents[2]
CLASSES = ["L", "N", "Lu", "Ll", "Lt", "Lm", "Lo", "M", "WS", "P"]
CODE_POINTS = [c for c in range(0x110000) if not 0xD800 <= c < 0xE000]


@lru_cache(maxsize=1)
def generator():
    """tools/gen_unicode_tables.py as a module."""
    spec = importlib.util.spec_from_file_location("gen_unicode_tables", ROOT / "tools" / "gen_unicode_tables.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@lru_cache(maxsize=1)
def pinned_bits() -> tuple[int, ...]:
    """The class bits of every code point, from the pinned data (bit n: ``CLASSES[n]``)."""
    gen = generator()
    assert gen.CLASSES == CLASSES
    return tuple(gen.class_bits())


def members(cls: str) -> list[int]:
    bit = 1 << CLASSES.index(cls)
    return [c for c, b in enumerate(pinned_bits()) if b & bit]


def ranges(cps) -> list[tuple[int, int]]:
    from tokenforge.pretokenizers import _to_ranges

    return _to_ranges(cps)


def _esc(c: int) -> str:
    return f"\\U{c:08X}"


@lru_cache(maxsize=None)
def _body(cls: str) -> str:
    return "".join(_esc(a) if a == b else f"{_esc(a)}-{_esc(b)}" for a, b in ranges(members(cls)))


def pin_pattern(pattern: str) -> str:
    """``pattern`` with ``\\p{X}`` (X one of the table's General_Category classes), ``\\s``
    and ``\\S`` spelled out as the pinned code point sets."""
    out: list[str] = []
    i, in_class = 0, False
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            nxt = pattern[i + 1]
            if nxt == "p" and pattern[i + 2] == "{":
                end = pattern.index("}", i)
                name = pattern[i + 3 : end]
                if name not in CLASSES[:8]:
                    raise ValueError(f"no pinned class {name!r}")
                out.append(_body(name) if in_class else f"[{_body(name)}]")
                i = end + 1
                continue
            if nxt == "s":
                out.append(_body("WS") if in_class else f"[{_body('WS')}]")
            elif nxt == "S":
                if in_class:
                    raise ValueError("\\S inside a class")
                out.append(f"[^{_body('WS')}]")
            else:
                out.append(pattern[i : i + 2])
            i += 2
            continue
        if ch == "[" and not in_class:
            in_class = True
        elif ch == "]" and in_class:
            in_class = False
        out.append(ch)
        i += 1
    return "".join(out)


@lru_cache(maxsize=None)
def pinned_regex(name: str):
    """The named split pattern (tokenforge.pretokenizers.PATTERNS) with the pinned classes."""
    return regex.compile(pin_pattern(PATTERNS[name]))


def pinned_findall(name: str, text: str) -> list[str]:
    return pinned_regex(name).findall(text)


@lru_cache(maxsize=1)
def skew() -> frozenset[int]:
    """Code points that the ``regex`` module puts in another class than the pinned data
    (its Unicode version is newer): the text where ``regex`` and tiktoken can disagree."""
    text = "".join(map(chr, CODE_POINTS))
    bits = pinned_bits()
    out: set[int] = set()
    for n, cls in enumerate(CLASSES[:9]):
        found = {CODE_POINTS[m.start()] for m in regex.finditer(r"\s" if cls == "WS" else r"\p{%s}" % cls, text)}
        pinned = {c for c in CODE_POINTS if bits[c] >> n & 1}
        out |= found ^ pinned
    return frozenset(out)


@lru_cache(maxsize=1)
def _skew_re():
    return regex.compile("[" + "".join(_esc(a) if a == b else f"{_esc(a)}-{_esc(b)}" for a, b in ranges(skew())) + "]")


def reference_findall(name: str, text: str) -> list[str]:
    """The pieces of the named pattern as tiktoken (and HF's Oniguruma) read its classes:
    ``regex`` itself where the text has no code point of :func:`skew`, else the pattern
    with the pinned sets (slower, since the sets are spelled out)."""
    if _skew_re().search(text) is None:
        return regex.findall(PATTERNS[name], text)
    return pinned_findall(name, text)

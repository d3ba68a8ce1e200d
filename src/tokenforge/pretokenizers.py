r"""Pre-tokenization: cut text into pieces that the model encodes independently.

BPE merges never cross a piece boundary, so the split pattern is as much a
part of a tokenizer as its merges (Radford et al., 2019). The named
patterns below are the published ones (``shared/data/vocab/tiktoken/ENCODINGS.md``);
``gpt2`` is written in tiktoken's equivalent possessive form, which gives the
same pieces as the original GPT-2 pattern and runs faster.

Unlike tiktoken, which silently drops text its pattern does not match, a
:class:`RegexSplit` keeps every unmatched run as a piece of its own, so a
custom pattern can never lose text.

HF tokenizers' pre-tokenizers (:class:`Split`, :class:`Whitespace`, ...) are
reproduced exactly, and so are the regexes of HF files: HF compiles them with
Oniguruma (Ruby syntax, Unicode 16.0), tokenforge with ``regex`` (Python syntax,
Unicode 17.0), so :class:`Split` (and the ``Replace`` normalizer and decoder) first
rewrite a pattern with :func:`oniguruma_to_regex` (Oniguruma's ``\w`` has no
U+200C/U+200D, its ``\h`` is a hex digit, ``$`` ends a line, ...) and find matches
as HF does (:func:`oniguruma_matches`). The character tests of :class:`Whitespace`
(Rust's regex crate), :class:`WhitespaceSplit`, :class:`Punctuation`,
:class:`BertPreTokenizer` (HF's older category tables: U+166D and U+111C9 are
punctuation, 145 later P* code points such as U+2E43..U+2E4F are not),
:class:`Digits` (Rust's ``is_numeric``: not U+1246F, U+12475..U+1247F,
U+12550..U+12686) and :class:`UnicodeScripts` (HF's Unicode 9.0 script table) use
HF's tables (``tokenforge._unicode_tables``). All of them, and more than 150 common
regex classes, agree with HF on every code point (``tests/core``).

What still differs, all of it under case-insensitive matching (``(?i)``), where
``regex`` folds case otherwise than Oniguruma:

- ``i`` and a class holding it (``(?i)[a-z]``) match U+0130 (İ); HF's do not;
- a scoped ``(?i:...)`` folds case simply: its ``ss`` does not match U+00DF or
  U+1E9E, which HF's does (a ``(?i)`` at the start of the pattern folds fully,
  as HF does; its ``ss`` then also matches U+1DF95, a Unicode 17.0 letter);
- letter-case classes inside brackets (``(?i)[\p{Lu}]``, ``(?i)[[:upper:]]``,
  ``(?i)[\p{Ll}]``, ``(?i)[[:lower:]]``) match their case variants as ``regex``
  reads them: ``(?i)[\p{Lu}]`` matches 990 code points more than HF's (U+0131,
  U+0138, U+0149, U+018D, ...) and not U+0345. Outside brackets (``(?i)\p{Lu}``)
  they match as HF's.

``regex`` also accepts some patterns Oniguruma rejects (``\p{Script=Han}``,
scripts and blocks new in Unicode 17.0), and Oniguruma-only syntax that has no
``regex`` equivalent (the absent operator ``(?~...)``, ``\y``, options such as
``(?W)``) is not rewritten.
"""

from __future__ import annotations

import reprlib
from abc import abstractmethod
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator, Mapping
from functools import lru_cache
from typing import Any, cast

import regex

from ._component import CHAR, COUNT, Component, ComponentSequence, Registry, check_state_kwargs, field, metaspace_settings
from .errors import ArgumentTypeError, FileFormatError, InvalidArgumentError, UnknownEncodingError

GPT2_PATTERN = (
    r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""
)
CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
O200K_PATTERN = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)
LLAMA3_PATTERN = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
    r"""|\s*[\r\n]+|\s+(?!\S)|\s+"""
)
QWEN_PATTERN = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
    r"""|\s*[\r\n]+|\s+(?!\S)|\s+"""
)

#: Named split patterns. Aliases map the tiktoken encoding names to their pattern.
PATTERNS: dict[str, str] = {
    "gpt2": GPT2_PATTERN,
    "cl100k": CL100K_PATTERN,
    "o200k": O200K_PATTERN,
    "llama3": LLAMA3_PATTERN,
    "qwen": QWEN_PATTERN,
}
#: The original GPT-2 release's pattern: the same pieces as ``gpt2`` (tiktoken's faster form).
GPT2_ORIGINAL_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
PATTERN_ALIASES: dict[str, str] = {
    "r50k_base": "gpt2",
    "p50k_base": "gpt2",
    "p50k_edit": "gpt2",
    "cl100k_base": "cl100k",
    "o200k_base": "o200k",
    "qwen2": "qwen",
}


def oniguruma_form(pattern: str) -> str:
    r"""``pattern`` written so that HF's regex engine (Oniguruma) reads it as ``regex`` does.

    Oniguruma takes ``?+``, ``*+`` and ``++`` as possessive, like the ``regex``
    module, but ``{m,n}+`` as the interval repeated once or more: cl100k's
    ``\p{N}{1,3}+`` would cut ``1919`` as one piece. At the end of an
    alternative a possessive interval matches as the greedy one, so it is
    written plainly.
    """
    return regex.sub(r"(\{\d+(?:,\d*)?\})\+", r"\1", pattern)


def pattern_name(pattern: str | None) -> str | None:
    r"""The name of the published split pattern (a key of :data:`PATTERNS`) whose regex
    ``pattern`` is, as tiktoken writes it, as an HF ``tokenizer.json`` carries it
    (Oniguruma's form) or as the original GPT-2 release wrote it; ``None`` for any other.

    >>> pattern_name(r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+")
    'gpt2'
    >>> pattern_name(r"\w+") is None
    True
    """
    if not isinstance(pattern, str):
        return None
    for known, source in PATTERNS.items():
        if pattern == source or pattern == oniguruma_form(source):
            return known
    if pattern in (GPT2_ORIGINAL_PATTERN, GPT2_ORIGINAL_PATTERN.replace(r"\p{L}", r"[\p{L}]").replace(r"\p{N}", r"[\p{N}]")):
        return "gpt2"
    return None


def resolve_pattern(pattern: str) -> tuple[str | None, str]:
    """Turn a pattern name or a custom regex into ``(name, regex_source)``.

    A known name (``gpt2``, ``cl100k``, ``o200k``, ``llama3``, ``qwen`` or a
    tiktoken encoding name) gives the published pattern; anything else is
    compiled as a custom ``regex`` pattern and gets the name ``None``.

    >>> resolve_pattern("cl100k_base")[0]
    'cl100k'
    """
    if not isinstance(pattern, str):
        raise UnknownEncodingError(f"pattern must be a name or a regex string, got {type(pattern).__name__}")
    name = PATTERN_ALIASES.get(pattern, pattern)
    if name in PATTERNS:
        return name, PATTERNS[name]
    known = pattern_name(pattern)
    if known is not None:
        return known, PATTERNS[known]
    if regex.fullmatch(r"[a-z0-9_]+", pattern) and pattern not in PATTERNS:
        # Looks like a name, not a regex: a typo must not silently become a literal pattern.
        raise UnknownEncodingError(
            f"unknown pattern name {pattern!r}; known names: {', '.join(sorted(PATTERNS))}. "
            "Pass a regex with at least one non-word character to use a custom pattern."
        )
    return None, pattern


# ---------------------------------------------------------------------------
# HF's regexes. HF tokenizers compiles the regex of a ``Split`` pre-tokenizer and of a
# ``Replace`` normalizer or decoder with Oniguruma (its Ruby syntax, Unicode 16.0);
# tokenforge compiles them with ``regex`` (Python syntax, Unicode 17.0). The two read
# some constructs differently, so an HF pattern is rewritten into the ``regex`` pattern
# that matches what Oniguruma matches (see :func:`oniguruma_to_regex`).

_Ranges = tuple[tuple[int, int], ...]

#: A code point unassigned in every Unicode version so far: it stands for the code points
#: that Unicode 17.0 assigned and Oniguruma's tables do not know.
_UNASSIGNED = "\u0378"


def _cp_escape(cp: int) -> str:
    """One code point written for a ``regex`` pattern, inside or outside a class."""
    if 0x30 <= cp <= 0x39 or 0x41 <= cp <= 0x5A or 0x61 <= cp <= 0x7A:
        return chr(cp)
    if 0x20 < cp < 0x7F:
        return "\\" + chr(cp)
    return f"\\u{cp:04X}" if cp < 0x10000 else f"\\U{cp:08X}"


def _to_ranges(cps: Iterable[int]) -> list[tuple[int, int]]:
    out: list[list[int]] = []
    for c in sorted(cps):
        if out and out[-1][1] == c - 1:
            out[-1][1] = c
        else:
            out.append([c, c])
    return [(a, b) for a, b in out]


def _class_body(ranges: Iterable[tuple[int, int]]) -> str:
    return "".join(_cp_escape(a) if a == b else f"{_cp_escape(a)}-{_cp_escape(b)}" for a, b in ranges)


def _expand(ranges: Iterable[tuple[int, int]]) -> set[int]:
    return {c for a, b in ranges for c in range(a, b + 1)}


@lru_cache(maxsize=1)
def _unicode_17_additions() -> frozenset[int]:
    from ._unicode_tables import UNICODE_17_ADDITIONS

    return frozenset(_expand(UNICODE_17_ADDITIONS))


class _CharSet:
    """A character class escape (``\\w``, ``\\p{L}``, ``[:punct:]``) as HF's engine reads it.

    ``items`` are ``regex`` class items whose union is the set, except for the code
    points in ``minus`` (in the union, not in the set) and ``plus`` (in the set, not in
    the union); ``negated`` takes the complement of all that.
    """

    __slots__ = ("items", "negated", "minus", "plus")

    def __init__(
        self,
        items: tuple[tuple[str, str], ...],
        *,
        added: _Ranges = (),
        removed: _Ranges = (),
        unicode16: bool = True,
        negated: bool = False,
    ) -> None:
        self.items = items  # (item, its complement)
        self.negated = negated
        base = regex.compile("[" + "".join(p for p, _ in items) + "]")
        target: dict[int, bool] = {}
        if unicode16:
            from ._unicode_tables import ONIGURUMA_CHANGED

            # Code points that Unicode 16.0 leaves unassigned are classified as unassigned.
            unassigned = base.match(_UNASSIGNED) is not None
            target.update(dict.fromkeys(_unicode_17_additions(), unassigned))
            for cp, proxy in ONIGURUMA_CHANGED.items():
                target[cp] = base.match(chr(proxy)) is not None
        target.update(dict.fromkeys(_expand(added), True))
        target.update(dict.fromkeys(_expand(removed), False))
        inside = {ord(m.group()) for m in base.finditer("".join(map(chr, target)))}
        self.minus = frozenset(c for c, t in target.items() if not t and c in inside)
        self.plus = frozenset(c for c, t in target.items() if t and c not in inside)

    @property
    def exact(self) -> bool:
        """Does the ``regex`` class alone already match the same code points?"""
        return not self.minus and not self.plus

    def contains(self, cp: int, base: bool) -> bool:
        """Is ``cp`` in the set (``base=True``: its ``regex`` items' reading, known by the caller)?"""
        inside = (base and cp not in self.minus) or cp in self.plus
        return inside != self.negated


def _charset_union(
    plain: list[tuple[int, int]],
    sets: list[_CharSet],
    negated: bool,
    fold: bool = False,
    collect: set[int] | None = None,
    fixups: bool = True,
) -> str:
    """A ``regex`` expression matching one character of ``plain`` (code point ranges) or of
    one of ``sets``, or (``negated``) of none of them. ``fold``: the expression is used
    case-insensitively, where ``regex`` reads a negated class item (``[^\\W...]``) by the
    case variants of a character, so code points are removed with a lookahead instead.
    The code points where the sets and ``regex``'s own classes differ are added to
    ``collect``; without ``fixups``, the expression is ``regex``'s own classes."""
    pairs: list[tuple[str, str]] = []  # class items of the union, with their complements
    own: list[str] = []  # negated sets of several items: a class [^...] each
    for s in sets:
        if not s.negated:
            pairs.extend(s.items)
        elif len(s.items) == 1:
            pairs.append((s.items[0][1], s.items[0][0]))
        else:
            own.append("".join(p for p, _ in s.items))
    plain_body = _class_body(plain)
    pos_body = plain_body + "".join(i for i, _ in pairs)
    classes = ([f"[{pos_body}]"] if pos_body else []) + [f"[^{o}]" for o in own]
    approx = _alternation(classes)
    cands = sorted(set().union(*(s.minus | s.plus for s in sets))) if fixups else []
    if not cands:
        if negated:
            return f"[^{pos_body}]" if not own else f"(?:(?!{approx})[\\s\\S])"
        return approx
    # Where the regex classes and HF's sets disagree: remove ``minus``, add ``plus``.
    text = "".join(map(chr, cands))
    approx_in = {ord(m.group()) for m in regex.finditer(approx, text)}
    exact_in = {c for c in cands if any(a <= c <= b for a, b in plain)}
    for s in sets:
        base_in = {ord(m.group()) for m in regex.finditer("[" + "".join(p for p, _ in s.items) + "]", text)}
        exact_in |= {c for c in cands if s.contains(c, c in base_in)}
    minus = _class_body(_to_ranges(approx_in - exact_in))
    plus = _class_body(_to_ranges(exact_in - approx_in))
    if collect is not None:
        collect.update(approx_in ^ exact_in)
    if fold:  # the removed code points themselves, not their case variants
        positive = f"(?-i:(?![{minus}])){approx}" if minus else approx
        positive = _alternation([positive] + ([f"(?-i:[{plus}])"] if plus else []))
        return f"(?:(?!{positive})[\\s\\S])" if negated else positive
    if negated and not own:
        out = f"[^{pos_body}{plus}]"
        return f"(?:{out}|[{minus}])" if minus else out
    if not minus:
        if not own:
            positive = f"[{pos_body}{plus}]"
        else:
            positive = _alternation(classes + ([f"[{plus}]"] if plus else []))
    else:
        # (A | B) minus R is [^~A R] | [^~B R]: no lookahead, one class test per item.
        parts = ([f"[{plain_body}]"] if plain_body else []) + [f"[^{c}{minus}]" for _, c in pairs]
        parts += [f"[^{o}{minus}]" for o in own] + ([f"[{plus}]"] if plus else [])
        positive = _alternation(parts)
    return f"(?:(?!{positive})[\\s\\S])" if negated else positive


def _alternation(parts: list[str]) -> str:
    if not parts:
        return "(?!)"
    return parts[0] if len(parts) == 1 else "(?:" + "|".join(parts) + ")"


def _hf_sets() -> dict[str, tuple[tuple[str, str], ...] | _Ranges]:
    from ._unicode_tables import (
        JOIN_CONTROL,
        ONIGURUMA_DIACRITIC_REMOVED,
        ONIGURUMA_EXTPICT_ADDED,
        ONIGURUMA_WORD_ADDED,
    )

    return {
        # \w: Oniguruma leaves out the joiners that regex has; alone (not in a bracket
        # class) it also matches the Latin-1 numbers U+00B2, U+00B3, U+00B9, U+00BC..U+00BE.
        "w": ((r"\w", r"\W"),), "w+": ONIGURUMA_WORD_ADDED, "w-": JOIN_CONTROL,
        "wclass": ((r"\w", r"\W"),), "wclass-": JOIN_CONTROL,
        "posix:word": ((r"\w", r"\W"),), "posix:word-": JOIN_CONTROL,
        "d": ((r"\d", r"\D"),),
        "s": ((r"\s", r"\S"),),
        # Oniguruma's \h is a hexadecimal digit (regex: horizontal space); its POSIX digit
        # and alnum are Unicode (regex: ASCII digits), its punct also takes the symbols.
        "h": ((r"\p{AHex}", r"\P{AHex}"),),
        "prop:xdigit": ((r"\p{AHex}", r"\P{AHex}"),),
        "posix:xdigit": ((r"\p{AHex}", r"\P{AHex}"),),
        "posix:digit": ((r"\p{Nd}", r"\P{Nd}"),),
        "posix:alnum": ((r"\p{Alpha}", r"\P{Alpha}"), (r"\p{Nd}", r"\P{Nd}")),
        "posix:punct": ((r"\p{P}", r"\P{P}"), (r"\p{S}", r"\P{S}")),
        "prop:posixpunct": ((r"\p{P}", r"\P{P}"), (r"\p{S}", r"\P{S}")),
        "prop:word": ((r"\w", r"\W"),), "prop:word+": ONIGURUMA_WORD_ADDED, "prop:word-": JOIN_CONTROL,
        "prop:diacritic-": ONIGURUMA_DIACRITIC_REMOVED, "prop:dia-": ONIGURUMA_DIACRITIC_REMOVED,
        "prop:extendedpictographic+": ONIGURUMA_EXTPICT_ADDED, "prop:extpict+": ONIGURUMA_EXTPICT_ADDED,
    }


_POSIX_NAMES = frozenset(
    ("alnum", "alpha", "ascii", "blank", "cntrl", "digit", "graph", "lower", "print", "punct", "space", "upper",
     "word", "xdigit")
)  # fmt: skip


@lru_cache(maxsize=512)
def _hf_charset(key: str, negated: bool, onig: bool = True) -> _CharSet:
    """The set of a class escape: ``key`` is ``"w"``/``"d"``/``"s"``/``"h"``,
    ``"prop:<name>"`` for ``\\p{name}`` or ``"posix:<name>"`` for ``[:name:]``. Without
    ``onig``, Rust's ``regex`` crate (Unicode 16.0, which HF's Whitespace uses)."""
    table = _hf_sets() if onig else {}
    kind, _, name = key.partition(":")
    loose = regex.sub(r"[\s_-]", "", name).lower()
    norm = f"{kind}:{loose}" if name else kind
    items = table.get(norm)
    if items is None:
        if kind == "prop":
            items = ((f"\\p{{{name}}}", f"\\P{{{name}}}"),)
        elif kind == "posix":
            items = ((f"[:{name}:]", f"[:^{name}:]"),)
        else:
            items = ((f"\\{kind}", f"\\{kind.upper()}"),)
    return _CharSet(
        cast("tuple[tuple[str, str], ...]", items), added=cast("_Ranges", table.get(norm + "+", ())),
        removed=cast("_Ranges", table.get(norm + "-", ())), negated=negated,
    )


def _class_escape_key(letter: str) -> tuple[str, bool] | None:
    if letter in "wdsh":
        return letter, False
    if letter in "WDSH":
        return letter.lower(), True
    return None


_INTERVAL = regex.compile(r"\{(?:\d+(?:,\d*)?|,\d+)\}")
_SIMPLE_ESCAPES = {"t": 9, "n": 10, "r": 13, "f": 12, "v": 11, "a": 7, "e": 27}


class _OnigTranslator:
    """Rewrites one HF (Oniguruma, Ruby syntax) pattern for ``regex``."""

    def __init__(self, pattern: str, onig: bool = True, fixups: bool = True) -> None:
        self.p = pattern
        self.i = 0
        self.onig = onig
        self.fixups = fixups  # False: regex's own classes (the fast twin of the pattern)
        self.candidates: set[int] = set()  # code points where the two differ
        self.top_closes = 0  # scoped-flag groups opened at the top level
        self.fold = False  # is the text at self.i matched case-insensitively?

    def union(self, plain: list[tuple[int, int]], sets: list[_CharSet], negated: bool) -> str:
        return _charset_union(plain, sets, negated, self.fold, self.candidates, self.fixups)

    def error(self, message: str) -> FileFormatError:
        return FileFormatError(f"regex {self.p!r}: {message} at position {self.i}")

    # -- escapes that stand for one character -------------------------------
    def literal_escape(self) -> int | None:
        """At a backslash: the code point of a one-character escape (consumed), else None."""
        p, i = self.p, self.i
        c = p[i + 1] if i + 1 < len(p) else ""
        if not c:
            raise self.error("pattern ends with a backslash")
        if c == "x" and p.startswith("{", i + 2):
            end = p.find("}", i + 3)
            m = regex.fullmatch(r"[0-9a-fA-F]{1,8}", p[i + 3 : end]) if end > 0 else None
            if m is None or int(m.group(), 16) > 0x10FFFF:
                raise self.error("bad \\x{...} escape")
            self.i = end + 1
            return int(m.group(), 16)
        if c == "x":
            m = regex.match(r"[0-9a-fA-F]{1,2}", p[i + 2 :])
            if m is None:
                raise self.error("bad \\x escape")
            self.i = i + 2 + m.end()
            return int(m.group(), 16)
        if c == "u" and regex.match(r"[0-9a-fA-F]{4}", p[i + 2 :]):
            self.i = i + 6
            return int(p[i + 2 : i + 6], 16)
        if c in _SIMPLE_ESCAPES:
            self.i = i + 2
            return _SIMPLE_ESCAPES[c]
        if c == "c" and i + 2 < len(p):
            self.i = i + 3
            return ord(p[i + 2]) & 0x1F
        if c == "0":
            m = cast("regex.Match[str]", regex.match(r"0[0-7]{0,2}", p[i + 1 :]))  # always matches: p[i + 1] is "0"
            self.i = i + 1 + m.end()
            return int(m.group(), 8)
        return None

    def property_escape(self, in_class: bool = False) -> _CharSet | None:
        """At ``\\p{...}``/``\\P{...}`` or a class letter escape: its set (consumed), else None."""
        p, i = self.p, self.i
        if i + 1 >= len(p):
            raise self.error("pattern ends with a backslash")
        c = p[i + 1]
        key = _class_escape_key(c)
        if key is not None:
            self.i = i + 2
            name = "wclass" if in_class and key[0] == "w" and self.onig else key[0]
            return _hf_charset(name, key[1], self.onig)
        if c in "pP" and p.startswith("{", i + 2):
            end = p.find("}", i + 3)
            if end < 0:
                raise self.error("unterminated \\p{...}")
            name = p[i + 3 : end]
            negated = c == "P"
            if name.startswith("^"):
                name, negated = name[1:], not negated
            self.i = end + 1
            if in_class and self.onig and regex.sub(r"[\s_-]", "", name).lower() == "word":
                return _hf_charset("wclass", negated, self.onig)
            try:
                return _hf_charset("prop:" + name, negated, self.onig)
            except regex.error:
                raise self.error(f"unknown character property {name!r}") from None
        return None

    # -- bracket classes ----------------------------------------------------
    def bracket(self) -> str:
        """At ``[``: the class as a ``regex`` expression matching one character (consumed)."""
        p = self.p
        self.i += 1
        negated = p.startswith("^", self.i)
        if negated:
            self.i += 1
        operands: list[str] = []
        plain: list[tuple[int, int]] = []
        sets: list[_CharSet] = []
        nested: list[str] = []
        first = True
        while True:
            if self.i >= len(p):
                raise self.error("unterminated character class")
            c = p[self.i]
            if c == "]" and not first:
                self.i += 1
                break
            first = False
            if p.startswith("&&", self.i):
                operands.append(self._operand(plain, sets, nested))
                plain, sets, nested = [], [], []
                self.i += 2
                continue
            if c == "[":
                m = regex.match(r"\[:(\^?)([a-z]+):\]", p[self.i :])
                if m and m.group(2) in _POSIX_NAMES:
                    sets.append(_hf_charset("posix:" + m.group(2), bool(m.group(1)), self.onig))
                    self.i += m.end()
                else:
                    nested.append(self.bracket())
                continue
            if c == "\\":
                s = self.property_escape(in_class=True)
                if s is not None:
                    sets.append(s)
                    continue
                if p.startswith("b", self.i + 1):  # backspace inside a class
                    lo = 8
                    self.i += 2
                else:
                    lit = self.literal_escape()
                    if lit is None:
                        lit = ord(p[self.i + 1])
                        self.i += 2
                    lo = lit
            else:
                lo = ord(c)
                self.i += 1
            # a range?
            after = p[self.i + 1] if self.i + 1 < len(p) else ""
            if p.startswith("-", self.i) and after and after not in "][" and not p.startswith("&&", self.i + 1):
                save = self.i
                self.i += 1
                if p[self.i] == "\\":
                    if self.property_escape() is not None:
                        raise self.error("a class escape cannot end a range")
                    hi = self.literal_escape()
                    if hi is None:
                        hi = ord(p[self.i + 1])
                        self.i += 2
                else:
                    hi = ord(p[self.i])
                    self.i += 1
                if hi < lo:
                    self.i = save
                    raise self.error("range out of order in character class")
                plain.append((lo, hi))
            else:
                plain.append((lo, lo))
        if not operands:
            if not nested:
                return self.union(plain, sets, negated)
            parts = ([self.union(plain, sets, False)] if plain or sets else []) + nested
            union = "(?:" + "|".join(parts) + ")"
            return f"(?:(?!{union})[\\s\\S])" if negated else union
        operands.append(self._operand(plain, sets, nested))
        inter = "(?:" + "".join(f"(?={o})" for o in operands[:-1]) + operands[-1] + ")"
        return f"(?:(?!{inter})[\\s\\S])" if negated else inter

    def _operand(self, plain: list[tuple[int, int]], sets: list[_CharSet], nested: list[str]) -> str:
        parts = ([self.union(plain, sets, False)] if plain or sets else []) + nested
        if not parts:
            return "(?!)"
        return parts[0] if len(parts) == 1 else "(?:" + "|".join(parts) + ")"

    # -- the whole pattern --------------------------------------------------
    def translate(self) -> str:
        p = self.p
        out: list[str] = []
        groups: list[list[Any]] = []  # per open group: [index of its "(" in out, scoped-flag groups to close, flags]
        flags = {"i": False, "x": False}
        atom = None  # index in out where the last atom starts
        while self.i < len(p):
            c = p[self.i]
            start = len(out)
            if flags["x"] and c in " \t\n\r\f\v":
                out.append(c)
                self.i += 1
                continue
            if flags["x"] and c == "#":
                end = p.find("\n", self.i)
                end = len(p) if end < 0 else end
                out.append(p[self.i : end])
                self.i = end
                continue
            self.fold = flags["i"]
            if c == "\\":
                s = self.property_escape()
                if s is not None:
                    if flags["i"] and self.p[self.i - 1] == "}":  # Oniguruma does not case-fold \p{...}
                        self.fold = False
                        expr = f"(?-i:{self.union([], [s], False)})"
                    else:
                        expr = self.union([], [s], False)
                    out.append(expr)
                    atom = start
                    continue
                nxt = p[self.i + 1] if self.i + 1 < len(p) else ""
                if nxt in ("b", "B"):
                    w = _hf_charset("w", False, self.onig)
                    if w.exact:
                        out.append("\\" + nxt)
                    else:
                        word = self.union([], [w], False)
                        if nxt == "b":
                            out.append(f"(?:(?<={word})(?!{word})|(?<!{word})(?={word}))")
                        else:
                            out.append(f"(?:(?<={word})(?={word})|(?<!{word})(?!{word}))")
                    self.i += 2
                    atom = None
                    continue
                if nxt == "z":
                    out.append("\\Z")
                    self.i += 2
                    continue
                if nxt == "Z":
                    out.append("(?=\\n?\\Z)")
                    self.i += 2
                    continue
                if nxt == "N":
                    out.append("[^\\n]")
                    self.i += 2
                    atom = start
                    continue
                if nxt == "O":
                    out.append("[\\s\\S]")
                    self.i += 2
                    atom = start
                    continue
                if nxt == "g" and p.startswith("<", self.i + 2):  # subroutine call (Oniguruma)
                    end = p.find(">", self.i)
                    if end < 0:
                        raise self.error("unterminated \\g<...>")
                    ref = p[self.i + 3 : end]
                    if ref == "0":
                        out.append("(?R)")
                    else:
                        out.append(f"(?{ref})" if regex.fullmatch(r"[+-]?\d+", ref) else f"(?&{ref})")
                    self.i = end + 1
                    atom = start
                    continue
                if nxt == "k" and p.startswith("<", self.i + 2):  # back reference by name or number
                    end = p.find(">", self.i)
                    if end < 0:
                        raise self.error("unterminated \\k<...>")
                    out.append("\\g" + p[self.i + 2 : end + 1])
                    self.i = end + 1
                    atom = start
                    continue
                lit = self.literal_escape() if nxt in "xuc0" or nxt in _SIMPLE_ESCAPES else None
                if lit is not None:
                    out.append(_cp_escape(lit))
                else:
                    out.append(p[self.i : self.i + 2])
                    self.i += 2
                atom = start
                continue
            if c == "[":
                out.append(self.bracket())
                atom = start
                continue
            if c == "(":
                m = regex.match(r"\(\?([imx]*)(?:-([imx]*))?(\)|:)", p[self.i :])
                if m and (m.group(1) or m.group(2) is not None):
                    on, off = m.group(1), m.group(2) or ""
                    spec = _flag_spec(on, off)
                    new_flags = dict(flags)
                    new_flags.update({f: True for f in on if f in "ix"})
                    new_flags.update({f: False for f in off if f in "ix"})
                    if m.group(3) == ")":
                        # (?imx) applies to the end of the enclosing group.
                        if not out and not groups:
                            # At the start: global flags, so that (?i) folds case fully as Oniguruma
                            # does ("ss" matches "ß"), which regex does only for global flags.
                            glob = _flag_spec(on, "")
                            out.append(f"(?{glob.replace('i', 'fi')})" if glob else "")
                        else:
                            out.append(f"(?{spec}:" if spec else "(?:")
                            if groups:
                                groups[-1][1] += 1
                            else:
                                self.top_closes += 1
                        flags = new_flags
                        self.i += m.end()
                        continue
                    out.append(f"(?{spec}:" if spec else "(?:")
                    groups.append([start, 0, flags])
                    flags = new_flags
                    self.i += m.end()
                    atom = None
                    continue
                if p.startswith("(?#", self.i):
                    end = p.find(")", self.i)
                    if end < 0:
                        raise self.error("unterminated comment")
                    out.append(p[self.i : end + 1])
                    self.i = end + 1
                    continue
                m = cast(  # always matches: p[self.i] is "("
                    "regex.Match[str]", regex.match(r"\((?:\?(?:[:=!>]|<[=!]|<[A-Za-z_]\w*>|'[A-Za-z_]\w*'))?", p[self.i :])
                )
                out.append(m.group())
                groups.append([start, 0, flags])
                self.i += m.end()
                atom = None
                continue
            if c == ")":
                if not groups:
                    raise self.error("unbalanced parenthesis")
                g_start, closes, saved = groups.pop()
                out.append(")" * (closes + 1))
                flags = saved
                self.i += 1
                atom = g_start
                continue
            if c == "{":
                m = _INTERVAL.match(p, self.i)
                if m is not None:
                    self.i = m.end()
                    nxt = p[self.i] if self.i < len(p) else ""
                    if atom is not None and (nxt in ("+", "*") or (nxt == "?" and "," not in m.group())):
                        # Oniguruma (Ruby syntax): X{m,n}+ is (X{m,n})+, not a possessive interval,
                        # and X{n}? is (X{n})?, not a lazy one.
                        out.insert(atom, "(?:")
                        out.append(m.group() + ")")
                    else:
                        out.append(m.group())
                    continue
            out.append(c)
            self.i += 1
            atom = None if c in "|^$" else (atom if c in "*+?" else start)
        if groups:
            raise self.error("missing closing parenthesis")
        out.append(")" * self.top_closes)
        return "".join(out)


def _flag_spec(on: str, off: str) -> str:
    """Oniguruma's (Ruby's) inline options as ``regex`` flags: its ``m`` is ``regex``'s ``s``."""
    conv = {"i": "i", "m": "s", "x": "x"}
    spec = "".join(dict.fromkeys(conv[f] for f in on))
    if off:
        spec += "-" + "".join(dict.fromkeys(conv[f] for f in off))
    return spec


@lru_cache(maxsize=256)
def oniguruma_to_regex(pattern: str) -> str:
    r"""An HF tokenizer.json regex (Oniguruma, Ruby syntax) as a ``regex`` pattern that
    matches the same text; compile it with ``regex.MULTILINE`` (:func:`compile_oniguruma`).

    What is rewritten:

    - character classes, to Oniguruma's (Unicode 16.0) sets: ``\w`` (and ``\b``,
      ``\p{Word}``) without U+200C/U+200D and with U+00B2, U+00B3, U+00B9,
      U+00BC..U+00BE; ``\h`` a hexadecimal digit; ``[[:digit:]]`` and
      ``[[:alnum:]]`` Unicode digits; ``[[:punct:]]`` punctuation and symbols;
      every class without the code points Unicode 17.0 added; nested classes and
      ``&&`` intersections;
    - ``^`` and ``$`` are line anchors, ``\Z`` matches before a final newline,
      ``\z`` is the end; ``(?m)`` is ``regex``'s ``(?s)``; ``(?i)`` without a colon
      runs to the end of its group; ``X{m,n}+`` repeats ``X{m,n}`` and ``X{n}?``
      makes ``X{n}`` optional;
    - ``\x{...}``, ``\e``, ``\cX``, ``\N`` (not a newline), ``\O`` (any character),
      ``\k<name>`` (back reference) and ``\g<name>`` (subroutine call).

    >>> oniguruma_to_regex(r"x{1,3}+")
    '(?:x{1,3})+'
    """
    return _OnigTranslator(pattern).translate()


def oniguruma_matches(compiled: regex.Pattern[str] | _HFRegex, text: str) -> list[tuple[int, int]]:
    """The ``(start, end)`` of each match of ``compiled`` in ``text``, found as HF tokenizers
    finds them (the Rust ``onig`` crate's ``find_iter``).

    They differ from ``finditer`` only around empty matches: after an empty match the
    search goes on one character later (``finditer`` first tries a non-empty match at
    the same place), and an empty match right at the end of the previous match is
    skipped.

    >>> oniguruma_matches(regex.compile("x*"), "axxb")
    [(0, 0), (1, 3), (4, 4)]
    """
    if isinstance(compiled, _HFRegex):
        compiled = compiled.for_text(text)
    spans = [m.span() for m in compiled.finditer(text)]
    if all(s < e for s, e in spans):
        return spans
    out: list[tuple[int, int]] = []
    pos, n, last_end = 0, len(text), -1
    search = compiled.search
    while pos <= n:
        m = search(text, pos)
        if m is None:
            break
        s, e = m.span()
        if s == e:
            pos = e + 1
            if s == last_end:
                continue
        else:
            pos = e
        out.append((s, e))
        last_end = e
    return out


class _HFRegex:
    """An HF pattern compiled for ``regex``: the exact rewrite, and its fast twin with
    ``regex``'s own classes, used for text without any code point where the two differ
    (then they match alike). It has the ``regex`` methods tokenforge uses."""

    __slots__ = ("pattern", "exact", "fast", "_differ", "_lowest")

    def __init__(self, pattern: str, exact: str, fast: str, differ: set[int], flags: int = 0) -> None:
        self.pattern = pattern
        self.exact = regex.compile(exact, flags)
        self.fast = self.exact if fast == exact or not differ else regex.compile(fast, flags)
        self._differ = frozenset(map(chr, differ))
        self._lowest = min(differ, default=0x110000)

    def for_text(self, text: str) -> regex.Pattern[str]:
        """The compiled pattern to use on ``text``."""
        if self.fast is self.exact or (self._lowest >= 0x80 and text.isascii()) or self._differ.isdisjoint(text):
            return self.fast
        return self.exact

    def finditer(self, text: str, *args: Any, **kwargs: Any) -> Iterator[regex.Match[str]]:
        return self.for_text(text).finditer(text, *args, **kwargs)

    def findall(self, text: str, *args: Any, **kwargs: Any) -> list[Any]:
        return self.for_text(text).findall(text, *args, **kwargs)

    def search(self, text: str, *args: Any, **kwargs: Any) -> regex.Match[str] | None:
        return self.for_text(text).search(text, *args, **kwargs)

    def match(self, text: str, *args: Any, **kwargs: Any) -> regex.Match[str] | None:
        return self.for_text(text).match(text, *args, **kwargs)

    def sub(self, repl: Any, text: str, *args: Any, **kwargs: Any) -> str:
        return self.for_text(text).sub(repl, text, *args, **kwargs)

    def __repr__(self) -> str:
        return f"<HF regex {self.pattern!r}>"


def _compile_hf(pattern: str, onig: bool = True, flags: int = regex.MULTILINE) -> _HFRegex:
    exact = _OnigTranslator(pattern, onig)
    source = exact.translate()
    fast = _OnigTranslator(pattern, onig, fixups=False).translate() if exact.candidates else source
    try:
        return _HFRegex(pattern, source, fast, exact.candidates, flags)
    except regex.error as exc:
        raise FileFormatError(f"regex {pattern!r} does not compile: {exc}") from None


def _pin_unicode16(pattern: str) -> tuple[str, set[int]]:
    """A split pattern in tiktoken's syntax (Rust ``regex`` / ``fancy-regex``) rewritten so
    that its character classes (``\\p{..}``, ``\\w``, ``\\d``, ``\\s`` and bracket
    classes holding them) match what they match in Unicode 16.0, the version of the
    tables tiktoken and HF tokenizers are built with; ``regex`` follows a newer one. Also
    returns the code points where the rewrite and ``regex``'s own reading differ. A
    construct the rewrite does not know leaves the pattern as it is (no code points)."""
    out: list[str] = []
    cands: set[int] = set()
    fold = [False]  # case-insensitive at this group depth?
    p, n, i = pattern, len(pattern), 0

    def union(plain: list[tuple[int, int]], sets: list[_CharSet], negated: bool) -> str:
        return _charset_union(plain, sets, negated, fold[-1], cands)

    def escape_set(k: int) -> tuple[_CharSet, int] | None:
        c = p[k + 1] if k + 1 < n else ""
        if c in ("p", "P") and k + 2 < n:
            if p[k + 2] == "{":
                end = p.find("}", k + 3)
                if end < 0:
                    return None
                name, after = p[k + 3 : end], end + 1
            else:
                name, after = p[k + 2], k + 3
            neg = c == "P"
            if name.startswith("^"):
                name, neg = name[1:], not neg
            return _hf_charset("prop:" + name, neg, False), after
        if c and c in "wdsWDS":
            return _hf_charset(c.lower(), c.isupper(), False), k + 2
        return None

    while i < n:
        c = p[i]
        if c == "\\":
            found = escape_set(i)
            if found is not None:
                out.append(union([], [found[0]], False))
                i = found[1]
            else:
                out.append(p[i : i + 2])
                i += 2
            continue
        if c == "[":
            j = i + 1
            negated = j < n and p[j] == "^"
            j += negated
            plain: list[tuple[int, int]] = []
            sets: list[_CharSet] = []
            first = True
            while j < n and (p[j] != "]" or first):
                first = False
                if p[j] == "[" or p.startswith(("&&", "--", "~~"), j):
                    return pattern, set()  # nested classes and set operations: not rewritten
                if p[j] == "\\":
                    found = escape_set(j)
                    if found is not None:
                        sets.append(found[0])
                        j = found[1]
                        continue
                    e = p[j + 1] if j + 1 < n else ""
                    if e in _SIMPLE_ESCAPES:
                        lo = _SIMPLE_ESCAPES[e]
                    elif e and not e.isalnum():
                        lo = ord(e)
                    else:
                        return pattern, set()  # \x.., \u.., \b ...: not rewritten
                    j += 2
                else:
                    lo = ord(p[j])
                    j += 1
                if j + 1 < n and p[j] == "-" and p[j + 1] != "]":
                    if p[j + 1] == "\\" or p[j + 1] == "[":
                        return pattern, set()
                    plain.append((lo, ord(p[j + 1])))
                    j += 2
                else:
                    plain.append((lo, lo))
            if j >= n:
                return pattern, set()
            if not sets:
                out.append(p[i : j + 1])
            else:
                out.append(union(_to_ranges(_expand(plain)), sets, negated))
            i = j + 1
            continue
        if c == "(":
            m = regex.match(r"\(\?([a-zA-Z]*)(?:-([a-zA-Z]*))?([:)])", p[i:])
            now = fold[-1]
            if m is not None:
                if "i" in m.group(1):
                    now = True
                if m.group(2) and "i" in m.group(2):
                    now = False
                if m.group(3) == ")":  # (?i) sets the flag for the rest of the group
                    fold[-1] = now
                    out.append(m.group())
                    i += m.end()
                    continue
            fold.append(now)
        elif c == ")" and len(fold) > 1:
            fold.pop()
        out.append(c)
        i += 1
    return "".join(out), cands


@lru_cache(maxsize=256)
def compile_tiktoken(pattern: str) -> _HFRegex:
    """``pattern`` (a split regex in tiktoken's syntax, as :class:`RegexSplit` takes it)
    compiled with ``regex`` so that its character classes match as in tiktoken, whose
    tables are Unicode 16.0 (``regex`` follows a newer version). Text without any code
    point where the two versions differ runs the pattern as written."""
    exact, cands = _pin_unicode16(pattern)
    return _HFRegex(pattern, exact, pattern, cands, 0)


@lru_cache(maxsize=256)
def compile_oniguruma(pattern: str) -> _HFRegex:
    """``pattern`` (HF's regex syntax) compiled with ``regex`` to match as HF tokenizers does
    (``finditer``, ``findall``, ``search``, ``match`` and ``sub`` as a ``regex`` pattern has them).

    Raises :class:`~tokenforge.errors.FileFormatError` if it is not a valid pattern.
    """
    return _compile_hf(pattern)


class Regex:
    """A regular expression in HF tokenizers' syntax (Oniguruma), as ``tokenizers.Regex``:
    give it to :class:`Split` or to the ``Replace`` normalizer and decoder, where a plain
    string is taken literally.

    >>> Split(Regex(r"\\w+|[^\\w\\s]+"), "isolated").split("می\\u200cخواهم")
    ['می', '\\u200c', 'خواهم']
    """

    __slots__ = ("pattern",)

    def __init__(self, pattern: str) -> None:
        if not isinstance(pattern, str):
            raise ArgumentTypeError(f"Regex takes a str pattern, got {type(pattern).__name__}")
        self.pattern = pattern

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Regex) and other.pattern == self.pattern

    def __hash__(self) -> int:
        return hash(("Regex", self.pattern))

    def __repr__(self) -> str:
        return f"Regex({self.pattern!r})"


# ---------------------------------------------------------------------------
# The pipeline's pre-tokenizers (HF tokenizers' components, same JSON shapes).
#
# A pre-tokenizer turns (normalized) text into pieces. Each piece is a
# ``Piece``: its string, plus where each of its characters came from in the
# text, so that offsets survive pre-tokenization. Most pre-tokenizers only cut
# (a piece is then a plain slice, ``spans is None``); Metaspace and ByteLevel
# also rewrite characters (space -> ``▁``, byte -> GPT-2 character) and record
# the map.
# ---------------------------------------------------------------------------

#: Unicode White_Space (what Rust's ``char::is_whitespace`` and HF use; note that
#: Python's ``str.isspace`` also accepts U+001C..U+001F, which are not whitespace here).
WHITESPACE = frozenset(
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)
_WS_CLASS = "".join(regex.escape(c) for c in sorted(WHITESPACE))


#: ASCII symbols and punctuation (Rust's ``is_ascii_punctuation``).
_ASCII_PUNCT = [(0x21, 0x2F), (0x3A, 0x40), (0x5B, 0x60), (0x7B, 0x7E)]


@lru_cache(maxsize=1)
def _punct_set() -> "_CharSet":
    # Category P* as HF's tables (the unicode_categories crate) have it: they predate the
    # punctuation of later Unicode versions, and U+166D and U+111C9 are still Po there.
    from ._unicode_tables import BERT_PUNCT_ADDED, BERT_PUNCT_REMOVED

    return _CharSet(((r"\p{P}", r"\P{P}"),), added=BERT_PUNCT_ADDED, removed=BERT_PUNCT_REMOVED, unicode16=False)


@lru_cache(maxsize=1)
def _punct_re() -> "_HFRegex":
    punct = _punct_set()
    return _dual_regex(lambda fixups, collect: _charset_union(_ASCII_PUNCT, [punct], False, False, collect, fixups))


def _dual_regex(build: Callable[[bool, set[int] | None], str]) -> "_HFRegex":
    """An :class:`_HFRegex` from ``build(fixups, collect)``, which writes its ``regex`` source."""
    differ: set[int] = set()
    exact = build(True, differ)
    return _HFRegex(exact, exact, build(False, None), differ)


@lru_cache(maxsize=1)
def _numeric_re() -> _HFRegex:
    # Rust's char::is_numeric (general category Nd, Nl or No) as HF tokenizers is built.
    from ._unicode_tables import RUST_NUMERIC_REMOVED

    numeric = _CharSet(((r"\p{N}", r"\P{N}"),), removed=RUST_NUMERIC_REMOVED, unicode16=False)
    return _dual_regex(lambda fixups, collect: _charset_union([], [numeric], False, False, collect, fixups))


def is_punctuation(ch: str) -> bool:
    """BERT's punctuation as HF tokenizers has it: ASCII symbols and punctuation, or
    Unicode category P* (of HF's Unicode tables)."""
    return _punct_re().match(ch) is not None


class Piece:
    """A pre-token: ``text`` and, per character, its ``(start, end)`` in the split text.

    ``spans`` is ``None`` when the piece is the plain slice ``[start, start + len(text))``.
    """

    __slots__ = ("text", "start", "spans")

    def __init__(self, text: str, start: int, spans: tuple[tuple[int, int], ...] | None = None) -> None:
        self.text = text
        self.start = start
        self.spans = spans

    def span(self, i: int, j: int) -> tuple[int, int]:
        """Text offsets of the piece's characters ``[i, j)``."""
        if self.spans is None:
            return self.start + i, self.start + j
        sp = self.spans
        if i >= j:
            at = sp[i][0] if i < len(sp) else (sp[-1][1] if sp else self.start)
            return at, at
        return sp[i][0], sp[j - 1][1]

    @property
    def offsets(self) -> tuple[int, int]:
        return self.span(0, len(self.text))

    def sub(self, i: int, j: int) -> "Piece":
        if self.spans is None:
            return Piece(self.text[i:j], self.start + i)
        return Piece(self.text[i:j], self.span(i, i)[0], self.spans[i:j])

    def __repr__(self) -> str:
        return f"Piece({self.text!r}, {self.offsets})"


_BEHAVIORS = ("removed", "isolated", "merged_with_previous", "merged_with_next", "contiguous")
_BEHAVIOR_JSON = {
    "removed": "Removed",
    "isolated": "Isolated",
    "merged_with_previous": "MergedWithPrevious",
    "merged_with_next": "MergedWithNext",
    "contiguous": "Contiguous",
}
_BEHAVIOR_FROM_JSON = {v: k for k, v in _BEHAVIOR_JSON.items()}


def _behavior(value: str) -> str:
    b = _BEHAVIOR_FROM_JSON.get(value, value)
    if b not in _BEHAVIORS:
        raise InvalidArgumentError(f"behavior must be one of {', '.join(_BEHAVIORS)}; got {value!r}")
    return b


def split_spans(length: int, matches: list[tuple[int, int]], behavior: str, invert: bool = False) -> list[tuple[int, int]]:
    """Cut ``[0, length)`` around delimiter ``matches`` (sorted, disjoint) by ``behavior``.

    ``removed`` drops the delimiters, ``isolated`` keeps each as its own piece,
    ``merged_with_previous``/``merged_with_next`` glue it to the piece before or
    after, ``contiguous`` keeps runs of adjacent delimiters together. With
    ``invert`` the matches are what is kept and the gaps are the delimiters.
    An empty match is a delimiter too, as in HF tokenizers (it cuts the text, and
    the gluing behaviours count it). Empty pieces are never produced.

    >>> split_spans(5, [(1, 2), (3, 4)], "merged_with_next")
    [(0, 1), (1, 3), (3, 5)]
    """
    marked: list[tuple[int, int, bool]] = []
    pos = 0
    for s, e in matches:
        if s > pos:
            marked.append((pos, s, invert))
        marked.append((s, e, not invert))
        pos = e
    if pos < length or not marked:
        marked.append((pos, length, invert))
    out: list[list[int]] = []
    if behavior == "removed":
        return [(s, e) for s, e, m in marked if not m and e > s]
    if behavior == "isolated":
        return [(s, e) for s, e, _ in marked if e > s]
    prev = False
    if behavior == "merged_with_next":
        for s, e, m in reversed(marked):
            if m and not prev and out:
                out[-1][0] = s
            else:
                out.append([s, e])
            prev = m
        out.reverse()
    else:
        for s, e, m in marked:
            glue = (m and not prev) if behavior == "merged_with_previous" else (m == prev)
            if glue and out:
                out[-1][1] = e
            else:
                out.append([s, e])
            prev = m
    return [(s, e) for s, e in out if e > s]


#: The pre-tokenizers by the ``"type"`` of their serialized form.
PRE_TOKENIZERS: Registry[PreTokenizer] = Registry("pre_tokenizer")


class PreTokenizer(Component):
    """Base class. :meth:`pre_tokenize` is the contract: text -> :class:`Piece` s
    with their spans. :meth:`split` is its strings (a subclass may override it with
    a faster path that gives the same strings).

    Subclasses implement ``_split_pieces`` (cut each of some pieces further, which
    is what :class:`Sequence` chains) and set ``type_name`` (the ``"type"`` of the
    serialized form, which registers them in :data:`PRE_TOKENIZERS`).
    """

    registry = PRE_TOKENIZERS

    def pre_tokenize(self, text: str, first: bool = True) -> list[Piece]:
        """Pieces of ``text``; ``first`` says whether it starts the input (Metaspace "first")."""
        if not text:
            return []
        return self._split_pieces([Piece(text, 0)])

    def split(self, text: str, first: bool = True) -> list[str]:
        """Piece strings of ``text`` (``first`` as in :meth:`pre_tokenize`)."""
        return [p.text for p in self.pre_tokenize(text, first)]

    def pre_tokenize_str(self, text: str) -> list[tuple[str, tuple[int, int]]]:
        """``[(piece, (start, end))]`` with offsets into ``text``: HF's method of that name."""
        return [(p.text, p.offsets) for p in self.pre_tokenize(text)]

    @abstractmethod
    def _split_pieces(self, pieces: list[Piece]) -> list[Piece]:
        """Cut each piece further (pieces keep their spans in the split text)."""

    def __reduce__(self) -> tuple[Callable[..., PreTokenizer | None], tuple[dict[str, Any]]]:
        return (pre_tokenizer_from_dict, (self.to_dict(),))


class RegexSplit(PreTokenizer):
    """Split text with a regex; every match is a piece, and so is every gap.

    >>> RegexSplit("gpt2").split("Hello  world!")
    ['Hello', ' ', ' world', '!']
    """

    type_name = "regex"

    def __init__(self, pattern: str = "gpt2", *, oniguruma: bool = False) -> None:
        name, source = resolve_pattern(pattern)
        # A custom pattern from an HF file matches as HF's engine (Oniguruma) does.
        self._onig = oniguruma and name is None
        try:
            self._rx = compile_oniguruma(source) if self._onig else None
            if self._rx is None:
                regex.compile(source)  # a check now; the pinned form is built on first use
        except regex.error as exc:
            raise UnknownEncodingError(f"invalid split pattern {source!r}: {exc}") from None
        self._name = name
        self._source = source

    @property
    def _regex(self) -> Any:
        """The compiled pattern, built on first use: a named pattern usually runs on a native
        scanner, and pinning its classes to Unicode 16.0 costs tens of milliseconds."""
        if self._rx is None:
            self._rx = compile_oniguruma(self._source) if self._onig else compile_tiktoken(self._source)
        return self._rx

    @property
    def name(self) -> str | None:
        """The pattern's name, or ``None`` for a custom pattern."""
        return self._name

    @property
    def pattern(self) -> str:
        """The regex source."""
        return self._source

    def split(self, text: str, first: bool = True) -> list[str]:
        """Cut ``text`` into pieces whose concatenation is ``text`` (``first`` does not matter)."""
        pieces: list[str] = self._regex.findall(text)
        if sum(map(len, pieces)) == len(text):
            return pieces
        # The pattern skipped some text: keep each gap as a piece of its own.
        out: list[str] = []
        pos = 0
        for m in self._regex.finditer(text):
            if m.start() > pos:
                out.append(text[pos : m.start()])
            if m.end() > m.start():
                out.append(m.group())
            pos = m.end()
        if pos < len(text):
            out.append(text[pos:])
        return out

    def _split_pieces(self, pieces: list[Piece]) -> list[Piece]:
        out: list[Piece] = []
        for p in pieces:
            pos = 0
            for s in self.split(p.text):
                out.append(p.sub(pos, pos + len(s)))
                pos += len(s)
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"type": "regex", "name": self._name, "pattern": self._source}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "RegexSplit":
        if "pattern" not in data or not isinstance(data["pattern"], str):
            raise FileFormatError("pre_tokenizer of type 'regex' needs a string field 'pattern'")
        name = data.get("name")
        if name is not None and not isinstance(name, str):
            raise FileFormatError(f"pre_tokenizer of type 'regex': field 'name' must be a string, got {reprlib.repr(name)}")
        if name is not None and name in PATTERNS and PATTERNS[name] != data["pattern"]:
            raise FileFormatError(f"pre_tokenizer names pattern {name!r} but carries a different regex")
        obj = cls.__new__(cls)
        obj._name = name if name in PATTERNS else None
        obj._source = data["pattern"]
        obj._onig = False
        obj._rx = None
        try:
            regex.compile(obj._source)
        except regex.error as exc:
            raise FileFormatError(f"pre_tokenizer pattern does not compile: {exc}") from None
        return obj

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RegexSplit) and other._source == self._source

    def __hash__(self) -> int:
        return hash(self._source)

    def __repr__(self) -> str:
        return f"RegexSplit({self._name or self._source!r})"

    def __reduce__(self) -> tuple[Callable[..., RegexSplit], tuple[dict[str, Any]]]:
        return (RegexSplit.from_dict, (self.to_dict(),))


class _PieceByPiece(PreTokenizer):
    """A pre-tokenizer that cuts each piece on its own, without context."""

    def _split_pieces(self, pieces: list[Piece]) -> list[Piece]:
        out: list[Piece] = []
        for p in pieces:
            out.extend(self._split_one(p))
        return out

    @abstractmethod
    def _split_one(self, piece: Piece) -> list[Piece]:
        """The sub-pieces of one piece."""


def _cut(piece: Piece, spans: list[tuple[int, int]]) -> list[Piece]:
    if len(spans) == 1 and spans[0] == (0, len(piece.text)):
        return [piece]
    return [piece.sub(s, e) for s, e in spans]


class Split(_PieceByPiece):
    """Split on a literal string or a regex, with an explicit ``behavior`` for the matches.

    A regex (a :class:`Regex`, or a ``str`` with ``regex_pattern=True``, the default) is
    read as HF tokenizers reads it, with Oniguruma's syntax and character classes (see
    :func:`oniguruma_to_regex`).

    >>> Split(" ", "merged_with_next", regex_pattern=False).split("a b c")
    ['a', ' b', ' c']
    """

    type_name = "Split"

    def __init__(
        self, pattern: "str | Regex", behavior: str = "isolated", invert: bool = False, *, regex_pattern: bool = True
    ) -> None:
        if isinstance(pattern, Regex):
            pattern, regex_pattern = pattern.pattern, True
        elif not isinstance(pattern, str):
            raise ArgumentTypeError(f"Split pattern must be a str or a Regex, got {type(pattern).__name__}")
        self.pattern = pattern
        self.is_regex = regex_pattern
        self.behavior = _behavior(behavior)
        self.invert = bool(invert)
        if regex_pattern:
            try:
                self._re: _HFRegex | regex.Pattern[str] = compile_oniguruma(pattern)
            except FileFormatError as exc:
                raise FileFormatError(f"Split pattern: {exc}") from None
        else:
            self._re = regex.compile(regex.escape(pattern))

    def _split_one(self, piece: Piece) -> list[Piece]:
        matches = oniguruma_matches(self._re, piece.text)
        return _cut(piece, split_spans(len(piece.text), matches, self.behavior, self.invert))

    def split(self, text: str, first: bool = True) -> list[str]:
        matches = oniguruma_matches(self._re, text)
        if self.behavior == "merged_with_next" and not self.invert and all(s < e for s, e in matches):
            # Each match starts a piece: cut before every match.
            cuts = [s for s, _ in matches]
            if not cuts:
                return [text] if text else []
            bounds = ([0] if cuts[0] > 0 else []) + cuts + [len(text)]
            return [text[a:b] for a, b in zip(bounds, bounds[1:]) if b > a]
        return [text[a:b] for a, b in split_spans(len(text), matches, self.behavior, self.invert)]

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": "Split",
            "pattern": {"Regex" if self.is_regex else "String": self.pattern},
            "behavior": _BEHAVIOR_JSON[self.behavior],
            "invert": self.invert,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Split":
        pat = _field(d, "pattern", dict)
        if "Regex" in pat:
            source, is_regex = pat["Regex"], True
        elif "String" in pat:
            source, is_regex = pat["String"], False
        else:
            raise FileFormatError("Split.pattern must be {'String': ...} or {'Regex': ...}")
        return cls(source, _field(d, "behavior", str), invert=_field(d, "invert", bool, False), regex_pattern=is_regex)


class _CharClassSplit(_PieceByPiece):
    """Split on characters selected by a predicate (each matching char is a match)."""

    behavior = "isolated"

    @abstractmethod
    def _is_delim(self, ch: str) -> bool:
        """Is ``ch`` a delimiter?"""

    def _delim_regex(self) -> "_HFRegex | None":
        """A regex matching one delimiter, if there is one (faster than ``_is_delim``)."""
        return None

    def _split_one(self, piece: Piece) -> list[Piece]:
        text = piece.text
        rx = self._delim_regex()
        if rx is not None:
            matches = [m.span() for m in rx.finditer(text)]
        else:
            matches = [(i, i + 1) for i, ch in enumerate(text) if self._is_delim(ch)]
        if not matches:
            return [piece]
        return _cut(piece, split_spans(len(text), matches, self.behavior))


class WhitespaceSplit(_PieceByPiece):
    """Split on Unicode whitespace, dropping it.

    >>> WhitespaceSplit().split(" a\\u3000b\\n")
    ['a', 'b']
    """

    type_name = "WhitespaceSplit"

    _re = regex.compile(f"[^{_WS_CLASS}]+")

    def _split_one(self, piece: Piece) -> list[Piece]:
        return [piece.sub(*m.span()) for m in self._re.finditer(piece.text)]

    def split(self, text: str, first: bool = True) -> list[str]:
        return self._re.findall(text)

    def to_dict(self) -> dict[str, Any]:
        return {"type": "WhitespaceSplit"}


@lru_cache(maxsize=1)
def _whitespace_re() -> _HFRegex:
    # HF compiles this one with Rust's regex crate (Unicode 16.0; its \w has U+200C/U+200D).
    return _compile_hf(r"\w+|[^\w\s]+", onig=False, flags=0)


class Whitespace(_PieceByPiece):
    r"""Words and runs of other non-space characters: the regex ``\w+|[^\w\s]+``.

    >>> Whitespace().split("Hey friend!  How are you?!?")
    ['Hey', 'friend', '!', 'How', 'are', 'you', '?!?']
    """

    type_name = "Whitespace"

    def _split_one(self, piece: Piece) -> list[Piece]:
        return [piece.sub(*m.span()) for m in _whitespace_re().finditer(piece.text)]

    def split(self, text: str, first: bool = True) -> list[str]:
        return _whitespace_re().findall(text)

    def to_dict(self) -> dict[str, Any]:
        return {"type": "Whitespace"}


class Punctuation(_CharClassSplit):
    """Split off each punctuation character (BERT's definition), by ``behavior``."""

    type_name = "Punctuation"

    def __init__(self, behavior: str = "isolated") -> None:
        self.behavior = _behavior(behavior)

    def _is_delim(self, ch: str) -> bool:
        return is_punctuation(ch)

    def _delim_regex(self) -> "_HFRegex":
        return _punct_re()

    def to_dict(self) -> dict[str, Any]:
        return {"type": "Punctuation", "behavior": _BEHAVIOR_JSON[self.behavior]}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Punctuation":
        return cls(_field(d, "behavior", str, "Isolated"))


class Digits(_CharClassSplit):
    """Split off digits: each one alone (``individual_digits``, Llama's ``split_digits``) or in runs.

    >>> Digits(individual_digits=True).split("abc 2024")
    ['abc ', '2', '0', '2', '4']
    """

    type_name = "Digits"

    def __init__(self, individual_digits: bool = False) -> None:
        self.individual_digits = bool(individual_digits)
        self.behavior = "isolated" if self.individual_digits else "contiguous"

    def _is_delim(self, ch: str) -> bool:
        return _numeric_re().match(ch) is not None

    def _delim_regex(self) -> "_HFRegex":
        return _numeric_re()

    def to_dict(self) -> dict[str, Any]:
        return {"type": "Digits", "individual_digits": self.individual_digits}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Digits":
        return cls(_field(d, "individual_digits", bool, False))


class CharDelimiterSplit(_CharClassSplit):
    """Split on one delimiter character, dropping it."""

    type_name = "CharDelimiterSplit"

    behavior = "removed"

    def __init__(self, delimiter: str) -> None:
        if not isinstance(delimiter, str) or len(delimiter) != 1:
            raise InvalidArgumentError(f"CharDelimiterSplit delimiter: expected a string of length 1, got {delimiter!r}")
        self.delimiter = delimiter

    def _is_delim(self, ch: str) -> bool:
        return ch == self.delimiter

    def to_dict(self) -> dict[str, Any]:
        return {"type": "CharDelimiterSplit", "delimiter": self.delimiter}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "CharDelimiterSplit":
        return cls(_field(d, "delimiter", CHAR))


class FixedLength(_PieceByPiece):
    """Cut text into pieces of ``length`` characters (code points; the last may be shorter).

    >>> FixedLength(length=3).split("abcdefg")
    ['abc', 'def', 'g']
    """

    type_name = "FixedLength"

    def __init__(self, length: int = 5) -> None:
        if isinstance(length, bool) or not isinstance(length, int):
            raise ArgumentTypeError(f"FixedLength length must be an int, got {type(length).__name__}")
        if length < 1:
            raise InvalidArgumentError(f"FixedLength length must be at least 1, got {length}")
        self.length = length

    def _split_one(self, piece: Piece) -> list[Piece]:
        n, k = len(piece.text), self.length
        if n <= k:
            return [piece]
        return [piece.sub(i, min(i + k, n)) for i in range(0, n, k)]

    def split(self, text: str, first: bool = True) -> list[str]:
        k = self.length
        return [text[i : i + k] for i in range(0, len(text), k)]

    def to_dict(self) -> dict[str, Any]:
        return {"type": "FixedLength", "length": self.length}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "FixedLength":
        length = _field(d, "length", COUNT, 5)  # HF's default when the field is absent
        if length < 1:
            raise FileFormatError(f"pre_tokenizer 'FixedLength': field 'length' must be a positive int, got {length!r}")
        return cls(length)


_SCRIPT_ANY = "\x00"


class _ScriptKeys(dict[int, str]):
    """``code point -> one character naming its script`` in HF's UnicodeScripts table, on demand.

    Scripts are Unicode's ``Script`` property (read with ``regex``) for the code points
    that HF's table has (Unicode 9.0's assigned characters, private use excepted), with
    Hiragana, Katakana and U+30FC as Han; the space and every code point outside the
    table are "any" (``_SCRIPT_ANY``). Usable with ``str.translate``.
    """

    def __init__(self) -> None:
        super().__init__()
        from ._unicode_tables import HF_SCRIPT_NAMES, HF_SCRIPT_OVERRIDES, HF_SCRIPT_TABLE

        key = {n: chr(0xE000 + i) for i, n in enumerate(HF_SCRIPT_NAMES)}
        key["Hiragana"] = key["Katakana"] = key["Han"]
        # Runs of one script among the table's code points, found one script at a time.
        table = "".join(chr(c) for a, b in HF_SCRIPT_TABLE for c in range(a, b + 1))
        runs: list[tuple[int, int, str]] = []
        for name in HF_SCRIPT_NAMES:
            for m in regex.finditer(f"\\p{{Script={name}}}+", table):
                runs.append((ord(m.group()[0]), ord(m.group()[-1]), key[name]))
        runs.sort()
        self._table_starts = [a for a, _ in HF_SCRIPT_TABLE]
        self._table_ends = [b for _, b in HF_SCRIPT_TABLE]
        self._run_starts = [a for a, _, _ in runs]
        self._runs = runs
        self._fixed = {cp: key[n] for cp, n in HF_SCRIPT_OVERRIDES.items()}
        self._fixed[0x30FC] = key["Han"]  # KATAKANA-HIRAGANA PROLONGED SOUND MARK (Common): Han, as HF
        self._fixed[0x20] = _SCRIPT_ANY

    def __missing__(self, cp: int) -> str:
        k = bisect_right(self._table_starts, cp) - 1
        if cp in self._fixed:
            result = self._fixed[cp]
        elif k < 0 or cp > self._table_ends[k]:
            result = _SCRIPT_ANY
        else:
            r = bisect_right(self._run_starts, cp) - 1
            result = self._runs[r][2] if r >= 0 and cp <= self._runs[r][1] else _SCRIPT_ANY
        self[cp] = result
        return result


@lru_cache(maxsize=1)
def _script_keys() -> _ScriptKeys:
    return _ScriptKeys()


class UnicodeScripts(_PieceByPiece):
    """Cut where the Unicode script changes, as HF tokenizers' ``UnicodeScripts``.

    Hiragana, Katakana and Han are one script; a space (U+0020 only) and characters that
    HF's (Unicode 9.0) script table does not have belong to no script and stay with the
    piece before them, and when they start the text they are dropped, as in HF. Common
    (digits, most punctuation) and Inherited (combining marks) are scripts of their own.

    >>> UnicodeScripts().split("どこで生れ。Yes")
    ['どこで生れ', '。', 'Yes']
    >>> UnicodeScripts().split("Apples are りんご 林檎")
    ['Apples are ', 'りんご 林檎']
    """

    type_name = "UnicodeScripts"

    def _cuts(self, text: str) -> list[int]:
        keys = text.translate(_script_keys())
        cuts: list[int] = []
        last = None
        for i, k in enumerate(keys):
            if k != last and k != _SCRIPT_ANY:
                cuts.append(i)
                last = k
        if cuts:
            cuts.append(len(text))
        return cuts

    def _split_one(self, piece: Piece) -> list[Piece]:
        cuts = self._cuts(piece.text)
        if cuts == [0, len(piece.text)]:
            return [piece]
        return [piece.sub(a, b) for a, b in zip(cuts, cuts[1:])]

    def split(self, text: str, first: bool = True) -> list[str]:
        cuts = self._cuts(text)
        return [text[a:b] for a, b in zip(cuts, cuts[1:])]

    def to_dict(self) -> dict[str, Any]:
        return {"type": "UnicodeScripts"}


@lru_cache(maxsize=1)
def _bert_re() -> _HFRegex:
    space = [(ord(c), ord(c)) for c in sorted(WHITESPACE)]
    punct = _punct_set()

    def build(fixups: bool, collect: set[int] | None) -> str:
        word = _charset_union(space + _ASCII_PUNCT, [punct], True, False, collect, fixups)
        return f"{word}+|{_charset_union(_ASCII_PUNCT, [punct], False, False, collect, fixups)}"

    return _dual_regex(build)


class BertPreTokenizer(_PieceByPiece):
    """BERT's BasicTokenizer split: whitespace is dropped, each punctuation character
    stands alone. (CJK ideographs are isolated by :class:`~tokenforge.normalizers.BertNormalizer`'s
    ``handle_chinese_chars``, which surrounds each with spaces, as BERT does.)

    >>> BertPreTokenizer().split("Hello, world!!")
    ['Hello', ',', 'world', '!', '!']
    """

    type_name = "BertPreTokenizer"

    def _split_one(self, piece: Piece) -> list[Piece]:
        return [piece.sub(*m.span()) for m in _bert_re().finditer(piece.text)]

    def split(self, text: str, first: bool = True) -> list[str]:
        return _bert_re().findall(text)

    def to_dict(self) -> dict[str, Any]:
        return {"type": "BertPreTokenizer"}


class Metaspace(PreTokenizer):
    """SentencePiece-style whitespace: every space becomes ``▁`` and, by
    ``prepend_scheme``, a ``▁`` is put before the text ("always"), before the
    start of the input only ("first"), or never. With ``split``, each ``▁``
    starts a new piece.

    >>> Metaspace().split("Hey  friend")
    ['▁Hey', '▁', '▁friend']
    >>> Metaspace(prepend_scheme="never", split=False).split("Hey friend")
    ['Hey▁friend']
    """

    type_name = "Metaspace"

    def __init__(self, replacement: str = "\u2581", prepend_scheme: str = "always", split: bool = True) -> None:
        if not isinstance(replacement, str) or len(replacement) != 1:
            raise InvalidArgumentError(f"Metaspace replacement: expected a string of length 1, got {replacement!r}")
        if prepend_scheme not in ("always", "first", "never"):
            raise InvalidArgumentError(f"prepend_scheme must be 'always', 'first' or 'never'; got {prepend_scheme!r}")
        self.replacement = replacement
        self.prepend_scheme = prepend_scheme
        self.split_on_replacement = bool(split)

    def pre_tokenize(self, text: str, first: bool = True) -> list[Piece]:
        if not text:
            return []
        return self._meta(Piece(text, 0), first)

    def _split_pieces(self, pieces: list[Piece]) -> list[Piece]:
        out: list[Piece] = []
        for n, p in enumerate(pieces):
            out.extend(self._meta(p, n == 0 and p.offsets[0] == 0))
        return out

    def split(self, text: str, first: bool = True) -> list[str]:
        if not text:
            return []
        rep = self.replacement
        text = text.replace(" ", rep)
        if (self.prepend_scheme == "always" or (self.prepend_scheme == "first" and first)) and not text.startswith(rep):
            text = rep + text
        if not self.split_on_replacement:
            return [text]
        return self._pieces_re().findall(text)

    def _pieces_re(self) -> regex.Pattern[str]:
        rep = regex.escape(self.replacement)
        return _compiled(f"{rep}[^{rep}]*|[^{rep}]+")

    def _meta(self, piece: Piece, first: bool) -> list[Piece]:
        rep = self.replacement
        text = piece.text.replace(" ", rep)
        spans = piece.spans
        if self.prepend_scheme == "always" or (self.prepend_scheme == "first" and first):
            if not text.startswith(rep):
                # As HF does, the inserted character takes the span of the first one.
                base = spans if spans is not None else tuple((piece.start + i, piece.start + i + 1) for i in range(len(text)))
                text = rep + text
                spans = (base[0] if base else (piece.start, piece.start),) + base
        p = Piece(text, piece.start, spans)
        if not self.split_on_replacement:
            return [p]
        matches = [(i, i + 1) for i, ch in enumerate(text) if ch == rep]
        return _cut(p, split_spans(len(text), matches, "merged_with_next"))

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": "Metaspace",
            "replacement": self.replacement,
            "prepend_scheme": self.prepend_scheme,
            "split": self.split_on_replacement,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Metaspace":
        return cls(*metaspace_settings(d, "pre_tokenizer"))


class ByteLevel(PreTokenizer):
    """GPT-2's byte-level step: optionally add a leading space, split with the
    GPT-2 pattern (``use_regex``), then write each piece's UTF-8 bytes with the
    printable byte alphabet (``Ġ`` for space).

    >>> ByteLevel(add_prefix_space=True).split("Hello  wörld")
    ['ĠHello', 'Ġ', 'ĠwÃ¶rld']
    """

    type_name = "ByteLevel"

    def __init__(
        self, add_prefix_space: bool = True, trim_offsets: bool = True, use_regex: bool = True, **state: Any
    ) -> None:
        check_state_kwargs(type(self), state)
        self.add_prefix_space = bool(add_prefix_space)
        self.trim_offsets = bool(trim_offsets)
        self.use_regex = bool(use_regex)

    @staticmethod
    def alphabet() -> list[str]:
        """The 256 characters that stand for the bytes (GPT-2's ``bytes_to_unicode``), in
        byte order: every byte-level vocabulary contains them all.

        >>> len(ByteLevel.alphabet()), ByteLevel.alphabet()[32]
        (256, 'Ġ')
        """
        from .bytelevel import bytes_to_unicode

        table = bytes_to_unicode()
        return [table[b] for b in range(256)]

    def _split_pieces(self, pieces: list[Piece]) -> list[Piece]:
        from .bytelevel import bytes_to_unicode

        table = bytes_to_unicode()
        out: list[Piece] = []
        gpt2 = _gpt2_regex()
        for p in pieces:
            if self.add_prefix_space and not p.text.startswith(" "):
                base = p.spans if p.spans is not None else tuple((p.start + i, p.start + i + 1) for i in range(len(p.text)))
                p = Piece(" " + p.text, p.start, (base[0] if base else (p.start, p.start),) + base)
            parts = [p.sub(*m.span()) for m in gpt2.finditer(p.text)] if self.use_regex else [p]
            for q in parts:
                chars: list[str] = []
                spans: list[tuple[int, int]] = []
                for i, ch in enumerate(q.text):
                    sp = q.span(i, i + 1)
                    for b in ch.encode("utf-8", "surrogatepass"):
                        chars.append(table[b])
                        spans.append(sp)
                out.append(Piece("".join(chars), q.start, tuple(spans)))
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": "ByteLevel",
            "add_prefix_space": self.add_prefix_space,
            "trim_offsets": self.trim_offsets,
            "use_regex": self.use_regex,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "ByteLevel":
        return cls(
            _field(d, "add_prefix_space", bool, True), _field(d, "trim_offsets", bool, True), _field(d, "use_regex", bool, True)
        )


@lru_cache(maxsize=64)
def _compiled(source: str) -> regex.Pattern[str]:
    return regex.compile(source)


def _gpt2_regex() -> _HFRegex:
    """HF's ByteLevel split: GPT-2's published pattern, run by Oniguruma."""
    return compile_oniguruma(GPT2_ORIGINAL_PATTERN)


class Sequence(ComponentSequence, PreTokenizer):
    """Apply pre-tokenizers one after another, each to the pieces of the last
    (``seq[i]`` is the i-th, as in HF)."""

    type_name = "Sequence"
    _items = "pretokenizers"

    def __init__(self, pretokenizers: Iterable[PreTokenizer]) -> None:
        self.pretokenizers = tuple(pretokenizers)
        for p in self.pretokenizers:
            if not isinstance(p, PreTokenizer):
                raise ArgumentTypeError(f"Sequence takes pre-tokenizers, got {type(p).__name__}")

    def pre_tokenize(self, text: str, first: bool = True) -> list[Piece]:
        if not text:
            return []
        pieces = [Piece(text, 0)]
        for n, p in enumerate(self.pretokenizers):
            if n == 0:
                pieces = p.pre_tokenize(text, first)
            elif isinstance(p, Metaspace):
                pieces = [q for k, piece in enumerate(pieces) for q in p._meta(piece, first and k == 0)]
            else:
                pieces = p._split_pieces(pieces)
        return pieces

    def _split_pieces(self, pieces: list[Piece]) -> list[Piece]:
        for p in self.pretokenizers:
            pieces = p._split_pieces(pieces)
        return pieces

    def to_dict(self) -> dict[str, Any]:
        return {"type": "Sequence", "pretokenizers": [p.to_dict() for p in self.pretokenizers]}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Sequence":
        return cls(PRE_TOKENIZERS.from_dict(x) for x in _field(d, "pretokenizers", list))


def _field(d: Mapping[str, Any], name: str, kind: Any, default: Any = ...) -> Any:
    return field(d, name, kind, default, stage="pre_tokenizer")


def pre_tokenizer_from_dict(data: Mapping[str, Any] | None) -> PreTokenizer | None:
    """Rebuild a pre-tokenizer from its serialized form (``None`` = no split).

    Accepts tokenforge's ``{"type": "regex"}`` and HF tokenizer.json's shapes:
    Split, Whitespace, WhitespaceSplit, BertPreTokenizer, Punctuation, Digits,
    CharDelimiterSplit, FixedLength, UnicodeScripts, Metaspace, ByteLevel and Sequence.
    """
    return None if data is None else PRE_TOKENIZERS.from_dict(data)

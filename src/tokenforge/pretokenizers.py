"""Pre-tokenization: cut text into pieces that the model encodes independently.

BPE merges never cross a piece boundary, so the split pattern is as much a
part of a tokenizer as its merges (seed 004 §10.6, seed 000 §5.8). The named
patterns below are the published ones (``shared/data/vocab/tiktoken/ENCODINGS.md``);
``gpt2`` is written in tiktoken's equivalent possessive form, which gives the
same pieces as the original GPT-2 pattern and runs faster.

Unlike tiktoken, which silently drops text its pattern does not match, a
:class:`RegexSplit` keeps every unmatched run as a piece of its own, so a
custom pattern can never lose text.
"""

from __future__ import annotations

from typing import Any

import regex

from .errors import FileFormatError, UnknownEncodingError

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
    # The regex text of a named pattern (as tiktoken and HF files carry it) is that pattern.
    for known, source in PATTERNS.items():
        if pattern == source:
            return known, source
    if pattern in (GPT2_ORIGINAL_PATTERN, GPT2_ORIGINAL_PATTERN.replace(r"\p{L}", r"[\p{L}]").replace(r"\p{N}", r"[\p{N}]")):
        return "gpt2", PATTERNS["gpt2"]
    if regex.fullmatch(r"[a-z0-9_]+", pattern) and pattern not in PATTERNS:
        # Looks like a name, not a regex: a typo must not silently become a literal pattern.
        raise UnknownEncodingError(
            f"unknown pattern name {pattern!r}; known names: {', '.join(sorted(PATTERNS))}. "
            "Pass a regex with at least one non-word character to use a custom pattern."
        )
    return None, pattern


class RegexSplit:
    """Split text with a regex; every match is a piece, and so is every gap.

    >>> RegexSplit("gpt2").split("Hello  world!")
    ['Hello', ' ', ' world', '!']
    """

    __slots__ = ("_name", "_source", "_regex")

    def __init__(self, pattern: str = "gpt2") -> None:
        name, source = resolve_pattern(pattern)
        try:
            compiled = regex.compile(source)
        except regex.error as exc:
            raise UnknownEncodingError(f"invalid split pattern {source!r}: {exc}") from None
        self._name = name
        self._source = source
        self._regex = compiled

    @property
    def name(self) -> str | None:
        """The pattern's name, or ``None`` for a custom pattern."""
        return self._name

    @property
    def pattern(self) -> str:
        """The regex source."""
        return self._source

    def split(self, text: str) -> list[str]:
        """Cut ``text`` into pieces whose concatenation is ``text``."""
        pieces = self._regex.findall(text)
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

    def to_dict(self) -> dict[str, Any]:
        return {"type": "regex", "name": self._name, "pattern": self._source}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "RegexSplit":
        if "pattern" not in data or not isinstance(data["pattern"], str):
            raise FileFormatError("pre_tokenizer of type 'regex' needs a string field 'pattern'")
        name = data.get("name")
        if name is not None and name in PATTERNS and PATTERNS[name] != data["pattern"]:
            raise FileFormatError(f"pre_tokenizer names pattern {name!r} but carries a different regex")
        obj = cls.__new__(cls)
        obj._name = name if name in PATTERNS else None
        obj._source = data["pattern"]
        try:
            obj._regex = regex.compile(obj._source)
        except regex.error as exc:
            raise FileFormatError(f"pre_tokenizer pattern does not compile: {exc}") from None
        return obj

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RegexSplit) and other._source == self._source

    def __hash__(self) -> int:
        return hash(self._source)

    def __repr__(self) -> str:
        return f"RegexSplit({self._name or self._source!r})"

    def __reduce__(self):
        return (RegexSplit.from_dict, (self.to_dict(),))


def pre_tokenizer_from_dict(data: dict[str, Any] | None) -> RegexSplit | None:
    """Rebuild a pre-tokenizer from its serialized form (``None`` = no split)."""
    if data is None:
        return None
    kind = data.get("type") if isinstance(data, dict) else None
    if kind == "regex":
        return RegexSplit.from_dict(data)
    raise FileFormatError(f"unsupported pre_tokenizer type {kind!r} (known: 'regex')")

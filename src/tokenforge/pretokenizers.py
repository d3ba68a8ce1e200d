"""Pre-tokenization: cut text into pieces that the model encodes independently.

BPE merges never cross a piece boundary, so the split pattern is as much a
part of a tokenizer as its merges (Radford et al., 2019). The named
patterns below are the published ones (``shared/data/vocab/tiktoken/ENCODINGS.md``);
``gpt2`` is written in tiktoken's equivalent possessive form, which gives the
same pieces as the original GPT-2 pattern and runs faster.

Unlike tiktoken, which silently drops text its pattern does not match, a
:class:`RegexSplit` keeps every unmatched run as a piece of its own, so a
custom pattern can never lose text.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

import regex

from ._component import Component, Registry
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
        if pattern == source or pattern == oniguruma_form(source):  # as tiktoken or an HF file has it
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


#: BERT's punctuation: ASCII symbols and punctuation, or Unicode category P*.
_PUNCT_CLASS = r"!-/:-@\[-`{-~\p{P}"
_PUNCT_RE = regex.compile(f"[{_PUNCT_CLASS}]")
_NUMERIC_RE = regex.compile(r"[\p{Nd}\p{Nl}\p{No}]")


def is_punctuation(ch: str) -> bool:
    """BERT's punctuation: ASCII symbols and punctuation, or Unicode category P*."""
    return _PUNCT_RE.match(ch) is not None


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
    Empty pieces are never produced.

    >>> split_spans(5, [(1, 2), (3, 4)], "merged_with_next")
    [(0, 1), (1, 3), (3, 5)]
    """
    marked: list[tuple[int, int, bool]] = []
    pos = 0
    for s, e in matches:
        if s == e:
            continue
        if s > pos:
            marked.append((pos, s, invert))
        marked.append((s, e, not invert))
        pos = e
    if pos < length or not marked:
        marked.append((pos, length, invert))
    out: list[list] = []
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

    def __reduce__(self):
        return (pre_tokenizer_from_dict, (self.to_dict(),))


class RegexSplit(PreTokenizer):
    """Split text with a regex; every match is a piece, and so is every gap.

    >>> RegexSplit("gpt2").split("Hello  world!")
    ['Hello', ' ', ' world', '!']
    """

    type_name = "regex"

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

    def split(self, text: str, first: bool = True) -> list[str]:
        """Cut ``text`` into pieces whose concatenation is ``text`` (``first`` does not matter)."""
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

    >>> Split(" ", "merged_with_next", regex_pattern=False).split("a b c")
    ['a', ' b', ' c']
    """

    type_name = "Split"

    def __init__(self, pattern: str, behavior: str = "isolated", *, invert: bool = False, regex_pattern: bool = True) -> None:
        self.pattern = pattern
        self.is_regex = regex_pattern
        self.behavior = _behavior(behavior)
        self.invert = bool(invert)
        try:
            self._re = regex.compile(pattern if regex_pattern else regex.escape(pattern))
        except regex.error as exc:
            raise FileFormatError(f"Split pattern {pattern!r} does not compile: {exc}") from None

    def _split_one(self, piece: Piece) -> list[Piece]:
        matches = [m.span() for m in self._re.finditer(piece.text)]
        return _cut(piece, split_spans(len(piece.text), matches, self.behavior, self.invert))

    def split(self, text: str, first: bool = True) -> list[str]:
        if self.behavior == "merged_with_next" and not self.invert:
            # Each match starts a piece: cut before every non-empty match.
            cuts = [m.start() for m in self._re.finditer(text) if m.end() > m.start()]
            if not cuts:
                return [text] if text else []
            bounds = ([0] if cuts[0] > 0 else []) + cuts + [len(text)]
            return [text[a:b] for a, b in zip(bounds, bounds[1:]) if b > a]
        matches = [m.span() for m in self._re.finditer(text)]
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
        return cls(source, _field(d, "behavior", str), invert=bool(d.get("invert", False)), regex_pattern=is_regex)


class _CharClassSplit(_PieceByPiece):
    """Split on characters selected by a predicate (each matching char is a match)."""

    behavior = "isolated"

    @abstractmethod
    def _is_delim(self, ch: str) -> bool:
        """Is ``ch`` a delimiter?"""

    def _split_one(self, piece: Piece) -> list[Piece]:
        text = piece.text
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


class Whitespace(_PieceByPiece):
    r"""Words and runs of other non-space characters: the regex ``\w+|[^\w\s]+``.

    >>> Whitespace().split("Hey friend!  How are you?!?")
    ['Hey', 'friend', '!', 'How', 'are', 'you', '?!?']
    """

    type_name = "Whitespace"

    _re = regex.compile(r"\w+|[^\w\s]+")

    def _split_one(self, piece: Piece) -> list[Piece]:
        return [piece.sub(*m.span()) for m in self._re.finditer(piece.text)]

    def split(self, text: str, first: bool = True) -> list[str]:
        return self._re.findall(text)

    def to_dict(self) -> dict[str, Any]:
        return {"type": "Whitespace"}


class Punctuation(_CharClassSplit):
    """Split off each punctuation character (BERT's definition), by ``behavior``."""

    type_name = "Punctuation"

    def __init__(self, behavior: str = "isolated") -> None:
        self.behavior = _behavior(behavior)

    def _is_delim(self, ch: str) -> bool:
        return is_punctuation(ch)

    def to_dict(self) -> dict[str, Any]:
        return {"type": "Punctuation", "behavior": _BEHAVIOR_JSON[self.behavior]}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Punctuation":
        return cls(d.get("behavior", "Isolated"))


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
        # Rust's char::is_numeric, as HF: general category Nd, Nl or No.
        return _NUMERIC_RE.match(ch) is not None

    def to_dict(self) -> dict[str, Any]:
        return {"type": "Digits", "individual_digits": self.individual_digits}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Digits":
        return cls(bool(d.get("individual_digits", False)))


class CharDelimiterSplit(_CharClassSplit):
    """Split on one delimiter character, dropping it."""

    type_name = "CharDelimiterSplit"

    behavior = "removed"

    def __init__(self, delimiter: str) -> None:
        if not isinstance(delimiter, str) or len(delimiter) != 1:
            raise InvalidArgumentError(f"delimiter must be one character, got {delimiter!r}")
        self.delimiter = delimiter

    def _is_delim(self, ch: str) -> bool:
        return ch == self.delimiter

    def to_dict(self) -> dict[str, Any]:
        return {"type": "CharDelimiterSplit", "delimiter": self.delimiter}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "CharDelimiterSplit":
        return cls(_field(d, "delimiter", str))


class BertPreTokenizer(_PieceByPiece):
    """BERT's BasicTokenizer split: whitespace is dropped, each punctuation character
    stands alone. (CJK ideographs are isolated by :class:`~tokenforge.normalizers.BertNormalizer`'s
    ``handle_chinese_chars``, which surrounds each with spaces, as BERT does.)

    >>> BertPreTokenizer().split("Hello, world!!")
    ['Hello', ',', 'world', '!', '!']
    """

    type_name = "BertPreTokenizer"

    _re = regex.compile(f"[^{_WS_CLASS}{_PUNCT_CLASS}]+|[{_PUNCT_CLASS}]")

    def _split_one(self, piece: Piece) -> list[Piece]:
        return [piece.sub(*m.span()) for m in self._re.finditer(piece.text)]

    def split(self, text: str, first: bool = True) -> list[str]:
        return self._re.findall(text)

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
            raise InvalidArgumentError(f"replacement must be one character, got {replacement!r}")
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

    def _pieces_re(self):
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
        scheme = d.get("prepend_scheme")
        if scheme is None:  # files written before tokenizers 0.14
            scheme = "always" if d.get("add_prefix_space", True) else "never"
        return cls(d.get("replacement", "\u2581"), scheme, bool(d.get("split", True)))


class ByteLevel(PreTokenizer):
    """GPT-2's byte-level step: optionally add a leading space, split with the
    GPT-2 pattern (``use_regex``), then write each piece's UTF-8 bytes with the
    printable byte alphabet (``Ġ`` for space).

    >>> ByteLevel(add_prefix_space=True).split("Hello  wörld")
    ['ĠHello', 'Ġ', 'ĠwÃ¶rld']
    """

    type_name = "ByteLevel"

    def __init__(self, add_prefix_space: bool = True, trim_offsets: bool = True, use_regex: bool = True) -> None:
        self.add_prefix_space = bool(add_prefix_space)
        self.trim_offsets = bool(trim_offsets)
        self.use_regex = bool(use_regex)

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
        return cls(bool(d.get("add_prefix_space", True)), bool(d.get("trim_offsets", True)), bool(d.get("use_regex", True)))


@lru_cache(maxsize=64)
def _compiled(source: str):
    return regex.compile(source)


@lru_cache(maxsize=1)
def _gpt2_regex():
    return regex.compile(GPT2_ORIGINAL_PATTERN)


class Sequence(PreTokenizer):
    """Apply pre-tokenizers one after another, each to the pieces of the last."""

    type_name = "Sequence"

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


def _field(d: Mapping[str, Any], key: str, kind: type) -> Any:
    if key not in d:
        raise FileFormatError(f"pre_tokenizer of type {d.get('type')!r} needs the field {key!r}")
    value = d[key]
    if not isinstance(value, kind):
        raise FileFormatError(
            f"pre_tokenizer {d.get('type')!r}: field {key!r} must be {kind.__name__}, got {type(value).__name__}"
        )
    return value


def pre_tokenizer_from_dict(data: Mapping[str, Any] | None) -> PreTokenizer | None:
    """Rebuild a pre-tokenizer from its serialized form (``None`` = no split).

    Accepts tokenforge's ``{"type": "regex"}`` and HF tokenizer.json's shapes:
    Split, Whitespace, WhitespaceSplit, BertPreTokenizer, Punctuation, Digits,
    CharDelimiterSplit, Metaspace, ByteLevel and Sequence.
    """
    return None if data is None else PRE_TOKENIZERS.from_dict(data)

"""sentencepiece's ``Normalizer`` as a tokenforge normalizer stage.

SentencePiece normalizes raw text itself, so that a model is self-contained
and tokenization is lossless (Kudo & Richardson, 2018, sections 3.2-3.3): the
precompiled charsmap (:mod:`.charsmap`) rewrites the longest matching rule at
each position, then the ``NormalizerSpec`` options apply (``normalizer.cc``):
extra whitespace removed, a dummy-prefix space added, spaces escaped as ``▁``;
user-defined symbols are never normalized. :class:`SentencePieceNormalizer`
reproduces that exactly and keeps the map from each output character to the
original text. Its serialized ``"type"`` is ``"SentencePiece"``; it registers
with :func:`tokenforge.normalizers.normalizer_from_dict` when this module is
imported (``import tokenforge`` does), which keeps ``normalizers`` free of an
import of this module (it sits above the base class it subclasses).
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Mapping
from collections.abc import Sequence as _Seq
from typing import Any

import regex

from .. import _native
from ..errors import FileFormatError, InvalidArgumentError
from ..normalizers import NormalizedText, Normalizer, Span, _CharTable, _check_type, _field
from .charsmap import NAMED_CHARSMAPS, Charsmap, decode_charsmap_field
from .constants import SPACE

__all__ = ["SentencePieceNormalizer"]


class SentencePieceNormalizer(Normalizer):
    """sentencepiece's ``Normalizer`` (a ``NormalizerSpec``), exactly.

    ``rules`` is a charsmap blob (``normalizer_spec.precompiled_charsmap`` of
    a ``.model``), a :class:`Charsmap`, or a shipped rule-set name
    (``"nmt_nfkc"``, ``"nmt_nfkc_cf"``, ``"nfkc"``, ``"nfkc_cf"``, ``"identity"``). Then:

    - ``remove_extra_whitespaces``: drop leading and trailing spaces and
      collapse runs of spaces (after the rules, which map other white space
      to a space);
    - ``add_dummy_prefix``: put a space in front of non-empty text;
    - ``escape_whitespaces``: write every space as ``▁`` (U+2581);
    - ``user_defined_symbols``: pieces copied as they are, longest first,
      never normalized.

    At each position the longest rule matching a prefix applies; otherwise
    one character is copied.

    :meth:`normalize_str` runs in the native core (``_core.SpmNormalizer``,
    ``_core/spm_normalizer.h``) when it is built; ``TOKENFORGE_BACKEND=python`` selects
    the Python code here, which is its reference.

    >>> SentencePieceNormalizer("nmt_nfkc").normalize_str("  Hello\\u3000 ﬃ  world ")
    '▁Hello▁ffi▁world'
    >>> nt = SentencePieceNormalizer("nmt_nfkc").normalize(NormalizedText(" ﬃ"))
    >>> nt.normalized, nt.alignment
    ('▁ffi', ((1, 2), (1, 2), (1, 2), (1, 2)))
    """

    type_name = "SentencePiece"
    #: Token offsets as sentencepiece reports them: a token spans from where its first
    #: character starts to where the next one starts, so the dummy-prefix ``▁`` is empty,
    #: and of the pieces of one expanded character (``ﬃ`` → ``f``, ``f``, ``i``) or of one
    #: character's byte pieces only the last covers it.
    offsets_by_starts = True

    def __init__(
        self,
        rules: bytes | str | Charsmap = "nmt_nfkc",
        *,
        add_dummy_prefix: bool = True,
        remove_extra_whitespaces: bool = True,
        escape_whitespaces: bool = True,
        user_defined_symbols: Iterable[str] = (),
        name: str | None = None,
    ) -> None:
        if isinstance(rules, str):
            self.name: str | None = rules
            self._builtin = True
            rules = Charsmap.named(rules)
        else:
            self.name = name
            self._builtin = False
            if not isinstance(rules, Charsmap):
                rules = Charsmap(rules)
        self.charsmap: Charsmap = rules
        self.add_dummy_prefix = bool(add_dummy_prefix)
        self.remove_extra_whitespaces = bool(remove_extra_whitespaces)
        self.escape_whitespaces = bool(escape_whitespaces)
        self.user_defined_symbols: tuple[str, ...] = tuple(sorted(set(user_defined_symbols)))
        for s in self.user_defined_symbols:
            if not isinstance(s, str) or not s:
                raise InvalidArgumentError(f"user-defined symbols must be non-empty strings, got {s!r}")
        self._udf = frozenset(self.user_defined_symbols)
        self._udf_first = {s[0] for s in self.user_defined_symbols}
        self._udf_max = max((len(s) for s in self.user_defined_symbols), default=0)
        self._table = _CharTable(self._single)
        self._native: Any = None

    def native_normalizer(self) -> Any:
        """The native twin (``_core.SpmNormalizer``), or ``None`` on the Python backend."""
        core = _native.core()
        if core is None:
            return None
        nat = self._native
        if nat is None:
            nat = self._native = core.SpmNormalizer(
                self.charsmap.blob, self.add_dummy_prefix, self.remove_extra_whitespaces,
                self.escape_whitespaces, list(self.user_defined_symbols),
            )
        return nat

    def _prefix(self, text: str, i: int) -> tuple[str, int]:
        """Normalize the longest matching prefix of ``text[i:]``: (output, characters consumed)."""
        c = text[i]
        if self._udf and c in self._udf_first:
            for k in range(min(self._udf_max, len(text) - i), 0, -1):
                if text[i : i + k] in self._udf:
                    return text[i : i + k], k
        cm = self.charsmap
        node, value = cm._char_info(c)
        best_len, best_value = (1, value) if value >= 0 else (0, -1)
        j = i + 1
        n = len(text)
        while node >= 0 and j < n:
            d = text[j]
            if _lead_byte(ord(d)) not in cm._leads(node):
                break
            node, value = cm._extend(node, d)
            j += 1
            if value >= 0:
                best_len, best_value = j - i, value
        if best_len:
            return cm.replacement(best_value), best_len
        if "\ud800" <= c <= "\udfff":  # a lone surrogate is not UTF-8: sentencepiece emits U+FFFD
            return "\ufffd", 1
        return c, 1

    def _run(self, text: str, with_spans: bool, al: _Seq[Span] = ()) -> tuple[str, list[Span]]:
        out: list[str] = []
        spans: list[Span] = []
        n = len(text)
        i = 0
        if self.remove_extra_whitespaces:
            while i < n:
                sp, k = self._prefix(text, i)
                if sp != " ":
                    break
                i += k
        if i >= n:
            return "", []
        space = SPACE if self.escape_whitespaces else " "
        pending = space if self.add_dummy_prefix else ""
        pending_at = i
        is_prev_space = self.remove_extra_whitespaces
        while i < n:
            sp, k = self._prefix(text, i)
            if is_prev_space:
                sp = sp.lstrip(" ")
            if sp:
                # sentencepiece tests the rule output for a trailing space before escaping
                ends_with_space = sp.endswith(" ")
                if self.escape_whitespaces:
                    sp = sp.replace(" ", SPACE)
                if pending:
                    # the dummy prefix starts where the leading white space ended (as
                    # sentencepiece's offsets do) and ends with the first output group
                    out.append(pending)
                    if with_spans:
                        spans.append((al[pending_at][0], _group_span(al, i, i + k)[1]))
                    pending = ""
                out.append(sp)
                if with_spans:
                    span = _group_span(al, i, i + k)
                    spans.extend([span] * len(sp))
                is_prev_space = ends_with_space
            i += k
            if not self.remove_extra_whitespaces:
                is_prev_space = False
        if pending:  # everything after the leading space was deleted by the rules
            out.append(pending)
            if with_spans:
                p = al[pending_at][0] if pending_at < len(al) else 0
                spans.append((p, p))
        result = "".join(out)
        if self.remove_extra_whitespaces and result.endswith(space):
            stripped = result.rstrip(space)
            if with_spans:
                del spans[len(stripped) :]
            result = stripped
        return result, spans

    def _single(self, c: str) -> str:
        return self._prefix(c, 0)[0]

    def _no_multi_char_rule(self, text: str) -> bool:
        """True when no rule longer than one character can match anywhere in ``text``
        and no rule output holds two spaces (then per-character rules + space
        collapsing give sentencepiece's result)."""
        if self._udf:
            return False
        cm = self.charsmap
        chars = set(text)
        leads: set[int] = set()
        table = self._table
        for c in chars:
            node = cm._char_info(c)[0]
            if node >= 0:
                leads |= cm._leads(node)
            if "  " in table[ord(c)]:
                return False
        return not leads or not any(_lead_byte(ord(d)) in leads for d in chars)

    def normalize_str(self, text: str) -> str:
        if not text:
            return ""
        nat = self.native_normalizer()
        if nat is not None:
            return nat.normalize(text)
        return self._normalize_str_py(text)

    def _normalize_str_py(self, text: str) -> str:
        """The pure-Python :meth:`normalize_str` (the reference of the native one)."""
        if not self._no_multi_char_rule(text):
            return self._run(text, False)[0]
        # fast path: per-character rules, then sentencepiece's white-space handling
        s = text.translate(self._table)
        if self.remove_extra_whitespaces:
            s = _SPACES.sub(" ", s).lstrip(" ")
        if self.add_dummy_prefix:
            s = " " + s
        if self.escape_whitespaces:
            s = s.replace(" ", SPACE)
            if self.remove_extra_whitespaces:
                s = s.rstrip(SPACE)
        elif self.remove_extra_whitespaces:
            s = s.rstrip(" ")
        return s

    def normalize(self, nt: NormalizedText) -> NormalizedText:
        nat = self.native_normalizer() if nt.normalized else None
        if nat is None:
            out, spans = self._run(nt.normalized, True, nt.alignment)
            return NormalizedText(nt.original, out, spans)
        import numpy as np

        # the native twin gives each output character's input range [a, b); mapped through
        # the alignment as _run maps it: (al[a].start, al[b - 1].end), or empty at al[a].start
        out, raw = nat.normalize_spans(nt.normalized)
        ranges = np.frombuffer(raw, dtype=np.uint32).reshape(-1, 2).astype(np.int64)
        al = np.array(nt.alignment, dtype=np.int64).reshape(-1, 2)
        a, b = ranges[:, 0], ranges[:, 1]
        starts = al[a, 0]
        ends = np.where(b > a, al[np.maximum(b - 1, 0), 1], starts)
        return NormalizedText._aligned(nt.original, out, tuple(zip(starts.tolist(), ends.tolist())))

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"type": self.type_name, "name": self.name}
        d["precompiled_charsmap"] = (
            None if self._builtin else base64.b64encode(self.charsmap.blob).decode("ascii")
        )
        d["add_dummy_prefix"] = self.add_dummy_prefix
        d["remove_extra_whitespaces"] = self.remove_extra_whitespaces
        d["escape_whitespaces"] = self.escape_whitespaces
        d["user_defined_symbols"] = list(self.user_defined_symbols)
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> SentencePieceNormalizer:
        _check_type(d, cls.type_name)
        where = f"normalizer {cls.type_name!r}"
        name = _field(d, "name", (str, type(None)), None)
        raw = d.get("precompiled_charsmap")
        if raw is None:
            if name not in NAMED_CHARSMAPS:
                raise FileFormatError(
                    f"{where}: field 'precompiled_charsmap' is missing and field 'name' {name!r}"
                    f" is not a shipped rule set ({', '.join(NAMED_CHARSMAPS)})"
                )
            rules: bytes | str = name
        else:
            rules = decode_charsmap_field(raw, where)
        udf = _field(d, "user_defined_symbols", list, [])
        if not all(isinstance(s, str) and s for s in udf):
            raise FileFormatError(f"{where}: field 'user_defined_symbols' must be a list of non-empty strings")
        kwargs: dict[str, Any] = {
            "add_dummy_prefix": _field(d, "add_dummy_prefix", bool, True),
            "remove_extra_whitespaces": _field(d, "remove_extra_whitespaces", bool, True),
            "escape_whitespaces": _field(d, "escape_whitespaces", bool, True),
            "user_defined_symbols": udf,
        }
        try:
            if isinstance(rules, str):
                return cls(rules, **kwargs)
            return cls(rules, name=name, **kwargs)
        except FileFormatError as exc:
            raise FileFormatError(f"{where}: field 'precompiled_charsmap': {exc}") from None


_SPACES = regex.compile(" {2,}")


def _lead_byte(cp: int) -> int:
    """The first byte of ``chr(cp)`` in UTF-8 (surrogates as if encoded with surrogatepass)."""
    if cp < 0x80:
        return cp
    if cp < 0x800:
        return 0xC0 | (cp >> 6)
    if cp < 0x10000:
        return 0xE0 | (cp >> 12)
    return 0xF0 | (cp >> 18)


def _group_span(al: _Seq[Span], a: int, b: int) -> Span:
    if b - a == 1:
        return al[a]
    return (al[a][0], al[b - 1][1])

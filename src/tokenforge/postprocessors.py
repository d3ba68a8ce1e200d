"""Post-processing: put the model's control tokens around the encoded text.

A post-processor turns the ids of one text (or a pair) into the model's input:
``[CLS] A [SEP] B [SEP]`` with type ids 0/1 for BERT, ``<s> A </s>`` for
Llama-style models. It runs only when ``add_special_tokens`` is on, and it
puts ids in by code, never by matching strings in the text, so user text
cannot forge a control token (the ChatML rule; tiktoken's ``disallowed_special``
default). Adding BOS twice is also guarded against: text that already starts
with the BOS string is
an error under the default special-token policy, and ``add_special_tokens=False``
is how a caller who builds the sequence by hand turns the template off.

The shapes are HF tokenizers' (``TemplateProcessing``, ``BertProcessing``,
``RobertaProcessing``, ``ByteLevel``, ``Sequence``), so a ``tokenizer.json``
post-processor loads as it is. ``EosProcessing`` is transformers' T5/ByT5 rule
(append ``</s>`` unless the sequence already ends with it), which has no HF form.
"""

from __future__ import annotations

import reprlib
import dataclasses
from abc import abstractmethod
from collections.abc import Callable, Iterable, Mapping
from collections.abc import Sequence as Seq
from typing import Any, cast

from ._component import Component, ComponentSequence, Registry, check_state_kwargs, field
from .encoding import Encoding
from .errors import FileFormatError


#: The post-processors by the ``"type"`` of their serialized form.
POST_PROCESSORS: Registry[PostProcessor] = Registry("post_processor")


class PostProcessor(Component):
    """Base class: ``process(a, b, add_special_tokens) -> Encoding``; ``process_ids`` for ids only.

    Subclasses implement ``_template`` (both methods follow it) and set ``type_name``
    (the ``"type"`` of the serialized form, which registers them in :data:`POST_PROCESSORS`).
    """

    registry = POST_PROCESSORS

    def process(self, a: Encoding, b: Encoding | None = None, add_special_tokens: bool = True) -> Encoding:
        out = Encoding()
        if add_special_tokens:
            pieces = self._template(b is not None)
        else:  # the sequences alone, with the type ids the pair template gives them
            pieces = [x for x in self._template(b is not None) if x[0] in ("A", "B")]
        for item, type_id in pieces:
            if item == "A":
                out._extend(a, type_id, 0)
            elif item == "B":
                out._extend(cast(Encoding, b), type_id, 1)
            else:
                for tid, tok in zip(*item):
                    out._append(tid, tok, (0, 0), type_id, True, None)
        return out

    def process_ids(self, a: list[int], b: list[int] | None = None, add_special_tokens: bool = True) -> list[int]:
        if not add_special_tokens:
            return a + (b or [])
        out: list[int] = []
        for item, _type in self._template(b is not None):
            if item == "A":
                out.extend(a)
            elif item == "B":
                out.extend(cast("list[int]", b))
            else:
                out.extend(item[0])
        return out

    def single_sides(self) -> tuple[list[tuple[int, str]], list[tuple[int, str]]]:
        """``(before, after)``: the ``(id, token)`` pairs the template puts before and after
        a single sequence (``([(101, "[CLS]")], [(102, "[SEP]")])`` for BERT)."""
        before: list[tuple[int, str]] = []
        after: list[tuple[int, str]] = []
        seen = False
        for item, _type in self._template(False):
            if item == "A":
                seen = True
            elif item != "B":
                (after if seen else before).extend(zip(item[0], item[1]))
        return before, after

    def added_tokens(self, is_pair: bool) -> int:
        """How many ids the template adds (for truncation budgets)."""
        return sum(len(item[0]) for item, _ in self._template(is_pair) if item not in ("A", "B"))

    @abstractmethod
    def _template(self, pair: bool) -> list[tuple[Any, int]]:
        """The template: ``("A"|"B", type_id)`` for the sequences, ``((ids, tokens), type_id)`` for added tokens."""

    def __reduce__(self) -> tuple[Callable[..., PostProcessor | None], tuple[dict[str, Any]]]:
        return (post_processor_from_dict, (self.to_dict(),))


def _template_type_id(text: str) -> int | None:
    """A type id written after ``:`` (Rust's ``u32`` parse, as HF reads it), else ``None``."""
    body = text[1:] if text.startswith("+") else text
    if not (body.isascii() and body.isdigit()):
        return None
    value = int(body)
    return value if value < 2**32 else None


def _parse_template_item(item: Any, where: str) -> tuple[str, str, int]:
    """``"$A"``, ``"$B:1"``, ``"[SEP]:1"`` or HF's JSON item -> (kind, id, type_id).

    The string form is HF's: ``$``, ``$A``/``$a`` and ``$B``/``$b`` are the sequences,
    ``$<n>`` is sequence A with type id n, anything else names a special token, and one
    ``:<n>`` sets the type id."""
    if isinstance(item, str):
        parts = item.split(":")
        tid: int | None = 0
        if len(parts) == 2:
            tid = _template_type_id(parts[1])
        if len(parts) <= 2 and tid is not None:
            name = parts[0]
            if not name.startswith("$"):
                return "special", name, tid
            rest = name[1:]
            if rest in ("", "A", "a", "B", "b"):
                return "seq", rest.upper() or "A", tid
            seq_type = _template_type_id(rest)
            if seq_type is not None:
                return "seq", "A", tid if len(parts) == 2 else seq_type
        raise FileFormatError(
            f"{where}: Cannot build Piece from string {item!r}: write a sequence as $A, $B or $<type id>, "
            "a special token by its name, and a type id after one ':' ('$B:1', '[SEP]:1')"
        )
    if isinstance(item, Mapping) and len(item) == 1:
        (kind, body), = item.items()
        if kind in ("Sequence", "SpecialToken") and isinstance(body, Mapping) and isinstance(body.get("id"), str):
            if kind == "Sequence" and body["id"] not in ("A", "B"):
                raise FileFormatError(f"{where}: unknown sequence {body['id']!r} (use 'A' or 'B')")
            return ("seq" if kind == "Sequence" else "special"), body["id"], _u32(body.get("type_id", 0), f"{where}: type_id")
    raise FileFormatError(f"{where}: a template item must be '$A', '$B', 'TOKEN[:type]' or HF's JSON form, got {item!r}")


def _special_token_entry(entry: Any) -> tuple[str, list[int], list[str]]:
    """One of HF's ``special_tokens`` entries: ``(token, id)``, ``(id, token)``, or
    ``{"id": name, "ids": [...], "tokens": [...]}`` (a name standing for several tokens)."""
    if isinstance(entry, (list, tuple)) and len(entry) == 2:
        a, b = entry
        if isinstance(a, str) and not isinstance(b, str):
            return a, [_u32(b, f"TemplateProcessing special token {a!r}")], [a]
        if isinstance(b, str) and not isinstance(a, str):
            return b, [_u32(a, f"TemplateProcessing special token {b!r}")], [b]
    if isinstance(entry, Mapping):
        return _special_token_dict(entry, entry.get("id"))
    raise FileFormatError(
        "TemplateProcessing special tokens are (token, id) or (id, token) pairs or "
        f"{{'id': ..., 'ids': [...], 'tokens': [...]}}, got {reprlib.repr(entry)}"
    )


def _special_token_dict(v: Mapping[str, Any], key: Any) -> tuple[str, list[int], list[str]]:
    where = f"TemplateProcessing special token {key!r}"
    name = v.get("id", key)
    if not isinstance(name, str):
        raise FileFormatError(f"{where}: 'id' must be a string, got {reprlib.repr(name)}")
    if not isinstance(v.get("ids"), list):
        raise FileFormatError(f"{where} needs a list 'ids'")
    ids = [_u32(x, f"{where}: ids") for x in v["ids"]]
    toks = v.get("tokens", [name] * len(ids))
    if not isinstance(toks, list) or not all(isinstance(t, str) for t in toks):
        raise FileFormatError(f"{where}: 'tokens' must be a list of strings")
    if len(toks) != len(ids):
        raise FileFormatError(f"{where}: ids and tokens must be of the same length ({len(ids)} ids, {len(toks)} tokens)")
    return name, ids, list(toks)


class TemplateProcessing(PostProcessor):
    """A template for single texts and for pairs, e.g. ``"[CLS] $A [SEP]"`` and
    ``"[CLS] $A [SEP] $B:1 [SEP]:1"``; ``special_tokens`` gives each token's ids.

    >>> tp = TemplateProcessing("<s> $A </s>", special_tokens=[("<s>", 1), ("</s>", 2)])
    >>> tp.process_ids([10, 11])
    [1, 10, 11, 2]
    """

    type_name = "TemplateProcessing"

    def __init__(
        self, single: str | Seq[Any] = "$A", pair: str | Seq[Any] | None = None, special_tokens: Iterable[Any] = ()
    ) -> None:
        self.single = self._parse(single, "single")
        # HF's default pair template: the two sequences, type ids 0 and 1, nothing added.
        self.pair = self._parse(pair if pair is not None else "$A:0 $B:1", "pair")
        specials: dict[str, tuple[list[int], list[str]]] = {}
        if isinstance(special_tokens, Mapping):  # HF JSON: {"[CLS]": {"id": "[CLS]", "ids": [101], "tokens": ["[CLS]"]}}
            for key, v in special_tokens.items():
                if not isinstance(v, Mapping):
                    raise FileFormatError(f"TemplateProcessing special token {key!r} needs a list 'ids'")
                name, ids, toks = _special_token_dict(v, key)
                specials[name] = (ids, toks)
        elif isinstance(special_tokens, Iterable) and not isinstance(special_tokens, (str, bytes)):
            for entry in special_tokens:
                name, ids, toks = _special_token_entry(entry)
                specials[name] = (ids, toks)
        else:
            raise FileFormatError(f"TemplateProcessing special_tokens must be an object or (token, id) pairs, got {reprlib.repr(special_tokens)}")
        self.special_tokens = specials
        missing = sorted({ident for tmpl in (self.single, self.pair) for kind, ident, _ in tmpl
                          if kind == "special" and ident not in specials})
        if missing:
            raise FileFormatError(
                f"TemplateProcessing: Missing SpecialToken(s) with id(s) {', '.join(map(repr, missing))}: "
                "give each in special_tokens as (token, id)"
            )
        if any(kind == "seq" and ident == "B" for kind, ident, _ in self.single):
            raise FileFormatError("TemplateProcessing single template uses $B; a single text has only $A")
        seqs = {ident for kind, ident, _ in self.pair if kind == "seq"}
        if seqs != {"A", "B"}:
            raise FileFormatError(f"TemplateProcessing pair template must use both sequences ($A and $B), got {sorted(seqs)}")

    @staticmethod
    def _parse(tmpl: Any, where: str) -> list[tuple[str, str, int]]:
        items = tmpl.split(" ") if isinstance(tmpl, str) else tmpl
        if not isinstance(items, (list, tuple)):
            raise FileFormatError(f"TemplateProcessing {where} template must be a string or a list")
        return [_parse_template_item(x, f"TemplateProcessing {where}") for x in items]

    def _template(self, pair: bool) -> list[tuple[Any, int]]:
        out = []
        for kind, ident, type_id in self.pair if pair else self.single:
            out.append((ident if kind == "seq" else self.special_tokens[ident], type_id))
        return out

    def to_dict(self) -> dict[str, Any]:
        def items(tmpl: list[tuple[str, str, int]]) -> list[dict[str, dict[str, Any]]]:
            return [
                {"Sequence" if k == "seq" else "SpecialToken": {"id": i, "type_id": t}} for k, i, t in tmpl
            ]

        return {
            "type": "TemplateProcessing",
            "single": items(self.single),
            "pair": items(self.pair),
            "special_tokens": {
                k: {"id": k, "ids": ids, "tokens": toks} for k, (ids, toks) in self.special_tokens.items()
            },
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "TemplateProcessing":
        if "single" not in d:
            raise FileFormatError("post_processor 'TemplateProcessing' needs the field 'single'")
        return cls(d["single"], d.get("pair"), d.get("special_tokens", {}))


class BertProcessing(PostProcessor):
    """``[CLS] A [SEP]`` and ``[CLS] A [SEP] B [SEP]`` with type ids 0 then 1."""

    type_name = "BertProcessing"

    def __init__(self, sep: tuple[str, int] = ("[SEP]", 102), cls: tuple[str, int] = ("[CLS]", 101)) -> None:
        self.sep = _token_id(sep, "BertProcessing sep")
        self.cls = _token_id(cls, "BertProcessing cls")

    def _template(self, pair: bool) -> list[tuple[Any, int]]:
        cls = ([self.cls[1]], [self.cls[0]])
        sep = ([self.sep[1]], [self.sep[0]])
        out = [(cls, 0), ("A", 0), (sep, 0)]
        return out + [("B", 1), (sep, 1)] if pair else out

    def to_dict(self) -> dict[str, Any]:
        return {"type": "BertProcessing", "sep": list(self.sep), "cls": list(self.cls)}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "BertProcessing":
        return cls(_pair_field(d, "sep"), _pair_field(d, "cls"))


class RobertaProcessing(PostProcessor):
    """``<s> A </s>`` and ``<s> A </s> </s> B </s>``, all type id 0."""

    type_name = "RobertaProcessing"

    def __init__(self, sep: tuple[str, int] = ("</s>", 2), cls: tuple[str, int] = ("<s>", 0), trim_offsets: bool = True, add_prefix_space: bool = True) -> None:
        self.sep = _token_id(sep, "RobertaProcessing sep")
        self.cls = _token_id(cls, "RobertaProcessing cls")
        self.trim_offsets = bool(trim_offsets)
        self.add_prefix_space = bool(add_prefix_space)

    def process(self, a: Encoding, b: Encoding | None = None, add_special_tokens: bool = True) -> Encoding:
        if self.trim_offsets:
            a = trim_byte_level_offsets(a, self.add_prefix_space)
            b = None if b is None else trim_byte_level_offsets(b, self.add_prefix_space)
        return super().process(a, b, add_special_tokens)

    def _template(self, pair: bool) -> list[tuple[Any, int]]:
        cls = ([self.cls[1]], [self.cls[0]])
        sep = ([self.sep[1]], [self.sep[0]])
        out = [(cls, 0), ("A", 0), (sep, 0)]
        return out + [(sep, 0), ("B", 0), (sep, 0)] if pair else out

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": "RobertaProcessing", "sep": list(self.sep), "cls": list(self.cls),
            "trim_offsets": self.trim_offsets, "add_prefix_space": self.add_prefix_space,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "RobertaProcessing":
        return cls(
            _pair_field(d, "sep"), _pair_field(d, "cls"),
            _field(d, "trim_offsets", bool, True), _field(d, "add_prefix_space", bool, True),
        )


class EosProcessing(PostProcessor):
    """``A </s>`` and ``A </s> B </s>`` (type ids all 0), where a sequence that already ends
    with the end-of-sequence id does not get a second one.

    This is transformers' rule for T5 and ByT5 (``_add_eos_if_not_present`` in
    ``T5Tokenizer``/``ByT5Tokenizer``), which HF tokenizers' ``TemplateProcessing`` cannot
    state: ``"x</s>"`` encodes to ``x </s>``, not ``x </s> </s>``. tokenforge's own stage
    (no exact ``tokenizer.json`` form).

    >>> p = EosProcessing(("</s>", 1))
    >>> p.process_ids([10, 11]), p.process_ids([10, 1]), p.process_ids([10], [1])
    ([10, 11, 1], [10, 1], [10, 1, 1])
    """

    type_name = "EosProcessing"

    def __init__(self, eos: tuple[str, int] = ("</s>", 1)) -> None:
        self.eos = _token_id(eos, "EosProcessing eos")

    def _template(self, pair: bool) -> list[tuple[Any, int]]:
        eos = ([self.eos[1]], [self.eos[0]])
        out: list[tuple[Any, int]] = [("A", 0), (eos, 0)]
        return out + [("B", 0), (eos, 0)] if pair else out

    def _ends(self, ids: Seq[int]) -> bool:
        return bool(ids) and ids[-1] == self.eos[1]

    def process(self, a: Encoding, b: Encoding | None = None, add_special_tokens: bool = True) -> Encoding:
        out = Encoding()
        for seq, enc in enumerate((a, b)):
            if enc is None:
                continue
            out._extend(enc, 0, seq)
            if add_special_tokens and not self._ends(enc.ids):
                out._append(self.eos[1], self.eos[0], (0, 0), 0, True, None)
        return out

    def process_ids(self, a: list[int], b: list[int] | None = None, add_special_tokens: bool = True) -> list[int]:
        if not add_special_tokens:
            return a + (b or [])
        eos = [self.eos[1]]
        out = a if self._ends(a) else a + eos
        if b is not None:
            out = out + (b if self._ends(b) else b + eos)
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"type": "EosProcessing", "eos": list(self.eos)}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "EosProcessing":
        return cls(_pair_field(d, "eos"))


def trim_byte_level_offsets(enc: Encoding, add_prefix_space: bool) -> Encoding:
    """``enc`` with each token's offsets shrunk past its leading and trailing spaces
    (``Ġ`` or white space in the token string), as HF's ``ByteLevel`` and
    ``RobertaProcessing`` do with ``trim_offsets``: ``"Ġworld"`` at (5, 11) becomes
    (6, 11). The one space ``add_prefix_space`` put before the first token is kept."""
    offsets = []
    for i, (token, (start, end)) in enumerate(zip(enc.tokens, enc.offsets)):
        lead = _count_spaces(token)
        trail = _count_spaces(reversed(token))
        if lead and (i == 0 or start == 0) and add_prefix_space and lead == 1:
            lead = 0
        if lead:
            start = min(start + lead, end)
        if trail and end >= trail:
            end = max(end - trail, start)
        offsets.append((start, end))
    out = dataclasses.replace(enc, offsets=offsets, overflowing=[trim_byte_level_offsets(o, add_prefix_space)
                                                                 for o in enc.overflowing])
    return out


def _count_spaces(chars: Iterable[str]) -> int:
    n = 0
    for c in chars:
        # GPT-2's stand-in for the space byte, or Unicode White_Space (\x1c-\x1f are not).
        if c == "\u0120" or (c.isspace() and c not in "\x1c\x1d\x1e\x1f"):
            n += 1
        else:
            break
    return n


class ByteLevel(PostProcessor):
    """GPT-2's post-processor: adds nothing; with ``trim_offsets`` it moves each token's
    offsets past the spaces it holds (see :func:`trim_byte_level_offsets`)."""

    type_name = "ByteLevel"

    def __init__(
        self, trim_offsets: bool = True, add_prefix_space: bool = True, use_regex: bool = True, **state: Any
    ) -> None:
        check_state_kwargs(type(self), state)
        self.trim_offsets, self.add_prefix_space, self.use_regex = bool(trim_offsets), bool(add_prefix_space), bool(use_regex)

    def process(self, a: Encoding, b: Encoding | None = None, add_special_tokens: bool = True) -> Encoding:
        if self.trim_offsets:
            a = trim_byte_level_offsets(a, self.add_prefix_space)
            b = None if b is None else trim_byte_level_offsets(b, self.add_prefix_space)
        return super().process(a, b, add_special_tokens)

    def _template(self, pair: bool) -> list[tuple[Any, int]]:
        return [("A", 0)] + ([("B", 1)] if pair else [])

    def to_dict(self) -> dict[str, Any]:
        return {"type": "ByteLevel", "add_prefix_space": self.add_prefix_space, "trim_offsets": self.trim_offsets, "use_regex": self.use_regex}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "ByteLevel":
        return cls(_field(d, "trim_offsets", bool, True), _field(d, "add_prefix_space", bool, True), _field(d, "use_regex", bool, True))


class Sequence(ComponentSequence, PostProcessor):
    """Post-processors in turn; at most one of them may add tokens (``seq[i]`` is the
    i-th, as in HF)."""

    type_name = "Sequence"
    _items = "processors"

    def __init__(self, processors: Seq[PostProcessor]) -> None:
        self.processors = tuple(processors)
        adding = [p for p in self.processors if not isinstance(p, ByteLevel)]
        if len(adding) > 1:
            raise FileFormatError("a post-processor Sequence may hold only one template that adds tokens")

    def process(self, a: Encoding, b: Encoding | None = None, add_special_tokens: bool = True) -> Encoding:
        for p in self.processors:
            if isinstance(p, (ByteLevel, RobertaProcessing)) and p.trim_offsets:
                a = trim_byte_level_offsets(a, p.add_prefix_space)
                b = None if b is None else trim_byte_level_offsets(b, p.add_prefix_space)
        return super().process(a, b, add_special_tokens)

    def _template(self, pair: bool) -> list[tuple[Any, int]]:
        for p in self.processors:
            if not isinstance(p, ByteLevel):
                return p._template(pair)
        return [("A", 0)] + ([("B", 1)] if pair else [])

    def to_dict(self) -> dict[str, Any]:
        return {"type": "Sequence", "processors": [p.to_dict() for p in self.processors]}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Sequence":
        items = d.get("processors")
        if not isinstance(items, list):
            raise FileFormatError("post_processor 'Sequence' needs a list field 'processors'")
        return cls([POST_PROCESSORS.from_dict(x) for x in items])


def _field(d: Mapping[str, Any], name: str, kind: Any, default: Any = ...) -> Any:
    return field(d, name, kind, default, stage="post_processor")


def _u32(x: Any, where: str) -> int:
    """An id or type id: an int in 0..2**32-1 (HF's ``u32``), not a bool, float or string."""
    if isinstance(x, bool) or not isinstance(x, int) or not 0 <= x < 2**32:
        raise FileFormatError(f"{where} must be an integer in 0..{2**32 - 1}, got {reprlib.repr(x)}")
    return x


def _token_id(pair: Any, where: str) -> tuple[str, int]:
    if not (isinstance(pair, (list, tuple)) and len(pair) == 2 and isinstance(pair[0], str)):
        raise FileFormatError(f"{where} must be [token, id], got {reprlib.repr(pair)}")
    return pair[0], _u32(pair[1], f"{where} id")


def _pair_field(d: Mapping[str, Any], key: str) -> tuple[str, int]:
    v = d.get(key)
    if not (isinstance(v, (list, tuple)) and len(v) == 2):
        raise FileFormatError(f"post_processor {d.get('type')!r} needs {key!r} as [token, id]")
    return v[0], v[1]


def post_processor_from_dict(data: Mapping[str, Any] | None) -> PostProcessor | None:
    """Rebuild a post-processor from its HF tokenizer.json shape (``None`` stays ``None``)."""
    return None if data is None else POST_PROCESSORS.from_dict(data)

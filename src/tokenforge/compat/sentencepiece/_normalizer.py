"""sentencepiece's ``SentencePieceNormalizer``: a model's normalizer, or a rule set, run alone."""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

from ..._io import read_bytes
from ...errors import FileFormatError, InvalidArgumentError
from ...normalizers import NormalizedText
from ...sentencepiece.charsmap import NAMED_CHARSMAPS, Charsmap
from ...sentencepiece.normalizer import SentencePieceNormalizer as _Engine
from ...sentencepiece.proto import ModelProto, NormalizerSpec, _Reader, decode_model, encode_model
from ._processor import _as_str, normalize_with_offsets

_FLAGS = ("add_dummy_prefix", "escape_whitespaces", "remove_extra_whitespaces")


def _utf8(x: Any, what: str) -> str:
    if isinstance(x, bytes):
        try:
            return x.decode("utf-8")
        except UnicodeDecodeError:
            raise InvalidArgumentError(f"{what} {x!r} is not valid UTF-8") from None
    if isinstance(x, str):
        return x
    raise InvalidArgumentError(f"{what} must be str or bytes, got {type(x).__name__}")


def rules_from_map(norm_map: Iterable[Any]) -> dict[str, str]:
    """``[(source, target), ...]`` checked as sentencepiece checks it: UTF-8, a non-empty
    source, no rule mapping a string to itself, no source given twice."""
    rules: dict[str, str] = {}
    for pair in norm_map:
        src, dst = pair
        s, d = _utf8(src, "norm_map source"), _utf8(dst, "norm_map target")
        if not s:
            raise InvalidArgumentError("norm_map: a source string is empty")
        if s == d:
            raise InvalidArgumentError(f"norm_map: {s!r} maps to itself")
        if s in rules:
            raise InvalidArgumentError(f"norm_map: {s!r} is given twice")
        rules[s] = d
    return rules


def rules_from_tsv(path: str | os.PathLike[str]) -> dict[str, str]:
    """sentencepiece's rule TSV (``--normalization_rule_tsv``): per line, source code points
    (hexadecimal, space-separated), a tab, target code points; ``#`` starts a comment."""
    rules: dict[str, str] = {}
    text = read_bytes(path).decode("utf-8")
    for n, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].rstrip("\r\n")
        if not line.strip():
            continue
        cols = line.split("\t")
        if len(cols) < 2:
            raise FileFormatError(f"line {n}: expected 'source<TAB>target' code points, got {line!r}", path=path)
        try:
            src = "".join(chr(int(h, 16)) for h in cols[0].split())
            dst = "".join(chr(int(h, 16)) for h in cols[1].split())
        except ValueError:
            raise FileFormatError(f"line {n}: code points must be hexadecimal, got {line!r}", path=path) from None
        if not src:
            raise FileFormatError(f"line {n}: the source is empty", path=path)
        rules[src] = dst
    return rules


def _spec_from_serialized(data: bytes) -> NormalizerSpec:
    r = _Reader(bytes(data), None)
    return NormalizerSpec._decode(r, 0, len(data), "normalizer_spec")  # type: ignore[no-any-return]


class SentencePieceNormalizer:
    """sentencepiece's normalizer alone: from a ``.model`` (``model_file``, ``model_proto``), a
    serialized ``NormalizerSpec`` (``normalizer_spec``), a named rule set (``rule_name``:
    ``nmt_nfkc``, ``nmt_nfkc_cf``, ``nfkc``, ``nfkc_cf``, ``identity``), a rule TSV (``rule_tsv``) or
    ``[(source, target)]`` pairs (``norm_map``). The three whitespace flags keep the spec's
    values unless given.

    >>> n = SentencePieceNormalizer(norm_map=[("foo", "bar")], add_dummy_prefix=False)
    >>> n.normalize("foo  x")
    'bar▁x'
    """

    def __init__(
        self,
        model_file: str | os.PathLike[str] | None = None,
        model_proto: Any = None,
        normalizer_spec: Any = None,
        rule_tsv: str | os.PathLike[str] | None = None,
        rule_name: str | None = None,
        norm_map: Iterable[Any] | None = None,
        add_dummy_prefix: bool | None = None,
        escape_whitespaces: bool | None = None,
        remove_extra_whitespaces: bool | None = None,
    ) -> None:
        if model_file:
            spec = decode_model(read_bytes(model_file), path=model_file).normalizer_spec
        elif model_proto:
            if hasattr(model_proto, "SerializeToString"):
                model_proto = model_proto.SerializeToString()
            spec = decode_model(bytes(model_proto)).normalizer_spec
        elif normalizer_spec:
            if hasattr(normalizer_spec, "SerializeToString"):
                normalizer_spec = normalizer_spec.SerializeToString()
            spec = _spec_from_serialized(bytes(normalizer_spec))
        elif rule_tsv:
            spec = NormalizerSpec(name="user_defined",
                                  precompiled_charsmap=Charsmap.from_rules(rules_from_tsv(rule_tsv)).blob)
            spec.normalization_rule_tsv = os.fspath(rule_tsv)
        elif rule_name:
            if rule_name not in NAMED_CHARSMAPS:
                raise InvalidArgumentError(f"unknown rule_name {rule_name!r}; known: {', '.join(NAMED_CHARSMAPS)}")
            spec = NormalizerSpec(name=rule_name, precompiled_charsmap=Charsmap.named(rule_name).blob)
        elif norm_map:
            spec = NormalizerSpec(name="user_defined",
                                  precompiled_charsmap=Charsmap.from_rules(rules_from_map(norm_map)).blob)
        else:
            raise InvalidArgumentError("no normalizer given: pass model_file, model_proto, normalizer_spec, "
                                       "rule_tsv, rule_name or norm_map")
        spec._present.update(f for f in ("name", "precompiled_charsmap") if getattr(spec, f))
        for flag, value in zip(_FLAGS, (add_dummy_prefix, escape_whitespaces, remove_extra_whitespaces)):
            if value is not None:
                setattr(spec, flag, bool(value))
                spec._present.add(flag)
        self._set(spec)

    def _set(self, spec: NormalizerSpec) -> None:
        self._spec = spec
        self._engine = _Engine(
            Charsmap(spec.precompiled_charsmap), add_dummy_prefix=spec.add_dummy_prefix,
            remove_extra_whitespaces=spec.remove_extra_whitespaces, escape_whitespaces=spec.escape_whitespaces,
            name=spec.name or None,
        )

    @property
    def spec(self) -> NormalizerSpec:
        """The ``NormalizerSpec`` (tokenforge's reader) this normalizer runs."""
        return self._spec

    def _normalized(self, text: str) -> NormalizedText:
        return self._engine.normalize(NormalizedText(text))

    def Normalize(self, input: Any, with_offsets: bool | None = None) -> Any:
        """The normalized text; ``with_offsets=True`` adds, per normalized character (byte, for
        bytes input) and the end, its position in the input."""

        def one(x: Any) -> Any:
            if with_offsets:
                return normalize_with_offsets(self._normalized, x)
            norm = self._normalized(_as_str(x)).normalized
            return norm.encode("utf-8") if isinstance(x, bytes) else norm

        return [one(x) for x in input] if isinstance(input, list) else one(input)

    normalize = Normalize

    def Decompile(self) -> list[tuple[str, str]]:
        """The rules as ``(source, target)`` pairs (sentencepiece's ``Decompile``)."""
        return Charsmap(self._spec.precompiled_charsmap).rules()

    def serialized_normalizer_spec(self) -> bytes:
        """The ``NormalizerSpec`` in protobuf's wire format."""
        out = bytearray()
        self._spec._encode(out)
        return bytes(out)

    def serialized_model_proto(self) -> bytes:
        """A ``ModelProto`` holding only this normalizer."""
        return encode_model(ModelProto(normalizer_spec=self._spec, _present={"normalizer_spec"}))

    def __getstate__(self) -> bytes:
        return self.serialized_normalizer_spec()

    def __setstate__(self, state: bytes) -> None:
        self._set(_spec_from_serialized(state))

"""What every pipeline stage shares: equality, hashing and repr through its
serialized form, and the one registry of ``"type"`` tags.

Each stage has a :class:`Registry` (``NORMALIZERS``, ``PRE_TOKENIZERS``,
``MODELS``, ``POST_PROCESSORS``, ``DECODERS``). A concrete stage joins its
stage's registry by declaring the tag of its serialized form::

    class NFC(Normalizer):
        type_name = "NFC"

and ``REGISTRY.from_dict(data)`` builds ``cls.from_dict(data)`` for the class
registered under ``data["type"]``, raising :class:`~tokenforge.errors.FileFormatError`
that names an unknown tag and lists the known ones.
"""

from __future__ import annotations

import reprlib
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping
from typing import Any, ClassVar, Generic, TypeVar

from .errors import ArgumentTypeError, FileFormatError

T = TypeVar("T")


class Registry(Generic[T]):
    """The classes of one stage, by the ``"type"`` tag of their serialized form."""

    def __init__(self, stage: str) -> None:
        self.stage = stage
        self._classes: dict[str, type[T]] = {}

    def add(self, tag: str, cls: type[T]) -> type[T]:
        """Register ``cls`` under ``tag`` (a later class with the same tag replaces it)."""
        self._classes[tag] = cls
        return cls

    def lookup(self, tag: Any) -> type[T]:
        """The class registered under ``tag``; :class:`FileFormatError` naming it otherwise."""
        cls = self._classes.get(tag) if isinstance(tag, str) else None
        if cls is None:
            raise FileFormatError(f"unknown {self.stage} type {tag!r}; known: {', '.join(self.known())}")
        return cls

    def from_dict(self, data: Any) -> T:
        """Build the stage serialized as ``data`` (HF tokenizer.json's shape)."""
        if not isinstance(data, Mapping):
            raise FileFormatError(f"{self.stage} must be a JSON object, got {type(data).__name__}")
        if "type" not in data:
            raise FileFormatError(f"{self.stage}: missing field 'type'")
        return self.lookup(data["type"]).from_dict(data)  # type: ignore[attr-defined]

    def known(self) -> list[str]:
        """The registered tags, sorted."""
        return sorted(self._classes)

    def items(self) -> Iterator[tuple[str, type[T]]]:
        return iter(sorted(self._classes.items()))

    def __contains__(self, tag: object) -> bool:
        return tag in self._classes

    def __repr__(self) -> str:
        return f"Registry({self.stage!r}, {self.known()})"


class Registered:
    """Mixin: a subclass that declares ``type_name`` (and optionally ``type_aliases``,
    tags it is also read from) joins the ``registry`` of its stage's base class."""

    __slots__ = ()
    registry: ClassVar[Registry[Any] | None] = None
    type_name: ClassVar[str] = ""
    type_aliases: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.registry is not None and cls.type_name and "type_name" in cls.__dict__:
            for tag in (cls.type_name, *cls.__dict__.get("type_aliases", ())):
                cls.registry.add(tag, cls)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Any:
        """Build from the serialized form (stages without parameters: ``cls()``)."""
        return cls()


class Component(Registered, ABC):
    """A pipeline stage (normalizer, pre-tokenizer, post-processor, decoder) that is
    defined by its ``to_dict()``: two stages are equal when they serialize equally."""

    __slots__ = ()

    @abstractmethod
    def to_dict(self) -> dict[str, Any]:
        """The stage in HF tokenizer.json's shape, with its ``"type"``."""

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.to_dict() == self.to_dict()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(repr(self.to_dict()))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.to_dict()!r})"


class ComponentSequence:
    """Mixin for a ``Sequence`` stage: its stages by index, as HF's ``Sequence`` gives them
    (``seq[0]``, ``len(seq)``, iteration; an index past the end raises ``IndexError``).
    The class names the tuple attribute that holds them in ``_items``. A sequence is
    always true, even an empty one (it is a stage, not a container)."""

    __slots__ = ()
    _items: ClassVar[str] = ""

    def _stages(self) -> tuple[Any, ...]:
        return getattr(self, self._items)  # type: ignore[no-any-return]

    def __getitem__(self, index: int) -> Any:
        return self._stages()[index]

    def __len__(self) -> int:
        return len(self._stages())

    def __iter__(self) -> Iterator[Any]:
        return iter(self._stages())

    def __bool__(self) -> bool:
        return True


def check_state_kwargs(cls: type, extra: Mapping[str, Any]) -> None:
    """HF's components can be rebuilt from their own serialized form passed as keyword
    arguments (``ByteLevel(**json.loads(b.__getstate__()))``), which holds ``"type"``:
    accept ``type`` when it names ``cls``'s tag; any other unknown argument is an error."""
    for name, value in extra.items():
        tag = getattr(cls, "type_name", "")
        if name == "type" and value == tag:
            continue
        what = f"type={value!r} (this is {tag!r})" if name == "type" else repr(name)
        raise ArgumentTypeError(f"{cls.__name__}() got an unexpected keyword argument {what}")


class _Kind:
    """A JSON value kind that is not a Python type: one character, a count."""

    def __init__(self, name: str, check: Any) -> None:
        self.name = name
        self.check = check


#: One character (HF's ``char`` fields: Metaspace ``replacement``, a split ``delimiter``).
CHAR = _Kind("one character", lambda v: isinstance(v, str) and len(v) == 1)
#: A non-negative integer that is not a boolean (HF's ``usize`` and ``u32`` fields).
COUNT = _Kind("a non-negative integer", lambda v: isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 2**64)

_KIND_NAMES = {bool: "a boolean", str: "a string", list: "a list", dict: "an object", type(None): "null", int: "an integer"}


def field(d: Mapping[str, Any], name: str, kind: Any, default: Any = ..., *, stage: str) -> Any:
    """``d[name]``, checked: ``kind`` is a type, :data:`CHAR`, :data:`COUNT` or a tuple of
    these (``bool`` never passes as ``int``). A missing field gives ``default``; without
    one, or for a value of another kind, :class:`FileFormatError` names the stage
    (``"decoder"``, ``"pre_tokenizer"``, ...), its ``type`` and the field."""
    where = f"{stage} {d['type']!r}" if isinstance(d.get("type"), str) else stage
    if name not in d:
        if default is ...:
            raise FileFormatError(f"{where}: missing field {name!r}")
        return default
    v = d[name]
    kinds = kind if isinstance(kind, tuple) else (kind,)
    for k in kinds:
        if isinstance(k, _Kind):
            if k.check(v):
                return v
        elif isinstance(v, k) and not (isinstance(v, bool) and k is not bool):
            return v
    wanted = " or ".join(k.name if isinstance(k, _Kind) else _KIND_NAMES.get(k, k.__name__) for k in kinds)
    raise FileFormatError(f"{where}: field {name!r} must be {wanted}, got {reprlib.repr(v)}")


def metaspace_settings(d: Mapping[str, Any], stage: str) -> tuple[str, str, bool]:
    """``(replacement, prepend_scheme, split)`` of HF's ``Metaspace`` (the pre-tokenizer and
    the decoder share the fields), checked; files written before tokenizers 0.14 have
    ``add_prefix_space`` instead of ``prepend_scheme``."""
    scheme = field(d, "prepend_scheme", (str, type(None)), None, stage=stage)
    if scheme is None:
        scheme = "always" if field(d, "add_prefix_space", bool, True, stage=stage) else "never"
    if scheme not in ("always", "first", "never"):
        raise FileFormatError(
            f"{stage} 'Metaspace': field 'prepend_scheme' must be 'always', 'first' or 'never', got {reprlib.repr(scheme)}"
        )
    return field(d, "replacement", CHAR, "\u2581", stage=stage), scheme, field(d, "split", bool, True, stage=stage)

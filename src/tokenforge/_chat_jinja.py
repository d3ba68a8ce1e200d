"""Rendering a Jinja chat template so that the output knows where each character came from.

A chat template writes control tokens (``<|im_start|>``) as text, and message text sits
in the same string. Which special-token strings in the output are control tokens? Only
those the template wrote itself. So the output carries provenance per character:

* every string constant of the template source (``{{ '<|im_start|>' }}``, text between
  tags) and the special-token names from the tokenizer's config (``bos_token``) enter the
  render as :class:`TemplateStr`, a ``str`` with a mask marking each character as the
  template's own text;
* every other string (message contents and names, tools, documents, extra variables,
  anything computed in a way this module does not follow) is a plain ``str``: user text.

The string operations templates use (``+``, ``~``, ``%``, ``join``, slicing, ``strip``,
``split``, ``replace``, case changes, ``center``...) carry the mask through; any other
operation returns a plain ``str``, so a character can only be lost to user text, never
gained by the template. No marker character is written into the text, so nothing a user
types can forge provenance. Only runs of the template's own characters are searched for
special tokens; user text is encoded with special-token matching off.

The template runs in Jinja's :class:`~jinja2.sandbox.ImmutableSandboxedEnvironment`
(as ``transformers`` runs it), with the limits of :mod:`tokenforge.limits` on loop
iterations and macro calls, on the size of every string, list and number it builds,
and on wall time; exceeding one raises :class:`~tokenforge.errors.ChatTemplateLimitError`.
"""

from __future__ import annotations

import functools
import json
import re
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextvars import ContextVar
from typing import Any, NoReturn, SupportsIndex, cast

import jinja2
from jinja2 import nodes
from jinja2.runtime import Macro
from jinja2.sandbox import ImmutableSandboxedEnvironment
from jinja2.visitor import NodeTransformer

from . import limits
from .errors import ChatTemplateError, ChatTemplateLimitError, TokenforgeError

__all__ = ["TemplateStr", "compile_template", "plain", "render", "runs", "trusted"]

_ONE = b"\x01"


def _mask(s: str) -> bytes:
    """1 for each character of the template's own text, 0 for user text."""
    return s._mask if isinstance(s, TemplateStr) else bytes(len(s))


def _make(text: str, mask: bytes) -> str:
    """``text`` with provenance ``mask``: a plain ``str`` when no character is the template's."""
    if 1 not in mask:
        return str.__str__(text) if isinstance(text, TemplateStr) else text
    return TemplateStr(text, mask)


def _join(sep: str, items: list[str]) -> str:
    return _make(str.join(sep, items), _mask(sep).join([_mask(i) for i in items]))


def _at(s: TemplateStr, pieces: Iterable[str], starts: Iterable[int]) -> list[str] | None:
    """``pieces`` found in ``s`` at ``starts``, with the provenance of those characters;
    ``None`` if a piece is not where it is claimed to be."""
    out = []
    for p, i in zip(pieces, starts):
        if str.__getitem__(s, slice(i, i + len(p))) != p:
            return None
        out.append(_make(p, s._mask[i:i + len(p)]))
    return out


def _split_starts(s: str, parts: list[str], sep: str | None) -> list[int]:
    starts, pos = [], 0
    for p in parts:
        start = pos if sep is not None else str.find(s, p, pos)
        starts.append(start)
        pos = start + len(p) + (len(sep) if sep is not None else 0)
    return starts


class TemplateStr(str):
    """A ``str`` that knows which of its characters are the chat template's own text.

    ``_mask[i]`` is 1 where character ``i`` came from the template (its string constants,
    the text between its tags, the tokenizer's special-token names) and 0 where it came
    from user data. Operations below keep the mask; every other ``str`` method returns a
    plain ``str`` (all user text), the safe direction.
    """

    _mask: bytes

    def __new__(cls, text: str, mask: bytes | None = None) -> TemplateStr:
        self = super().__new__(cls, text)
        self._mask = _ONE * len(self) if mask is None else mask
        return self

    def __str__(self) -> str:
        return self

    def __format__(self, spec: str) -> str:
        return self if not spec else format(str.__str__(self), spec)

    def __add__(self, other: str) -> str:
        if not isinstance(other, str):
            return NotImplemented
        return _make(str.__add__(self, other), self._mask + _mask(other))

    def __radd__(self, other: str) -> str:
        if not isinstance(other, str):
            return NotImplemented
        return _make(str.__add__(other, self), _mask(other) + self._mask)

    def __mul__(self, n: SupportsIndex) -> str:
        r = str.__mul__(self, n)
        if r is NotImplemented:
            return cast(str, r)
        return _make(r, self._mask * n.__index__())

    __rmul__ = __mul__

    def __mod__(self, args: Any) -> str:
        return _percent(self, args)

    def __getitem__(self, key: SupportsIndex | slice) -> str:
        r = str.__getitem__(self, key)
        return _make(r, self._mask[key] if isinstance(key, slice) else bytes((self._mask[key],)))

    def __iter__(self) -> Iterator[str]:
        return (self[i] for i in range(len(self)))

    def join(self, iterable: Iterable[str]) -> str:
        return _join(self, list(iterable))

    def strip(self, chars: str | None = None) -> str:
        r = str.strip(self, chars)
        start = len(self) - len(str.lstrip(self, chars))
        return _make(r, self._mask[start:start + len(r)])

    def lstrip(self, chars: str | None = None) -> str:
        r = str.lstrip(self, chars)
        return _make(r, self._mask[len(self) - len(r):])

    def rstrip(self, chars: str | None = None) -> str:
        r = str.rstrip(self, chars)
        return _make(r, self._mask[:len(r)])

    def removeprefix(self, prefix: str) -> str:
        r = str.removeprefix(self, prefix)
        return _make(r, self._mask[len(self) - len(r):])

    def removesuffix(self, suffix: str) -> str:
        r = str.removesuffix(self, suffix)
        return _make(r, self._mask[:len(r)])

    def split(self, sep: str | None = None, maxsplit: SupportsIndex = -1) -> list[str]:
        parts = str.split(self, sep, maxsplit)
        return _at(self, parts, _split_starts(self, parts, sep)) or parts

    def rsplit(self, sep: str | None = None, maxsplit: SupportsIndex = -1) -> list[str]:
        parts = str.rsplit(self, sep, maxsplit)
        return _at(self, parts, _split_starts(self, parts, sep)) or parts

    def splitlines(self, keepends: bool = False) -> list[str]:
        whole = str.splitlines(self, True)
        parts = whole if keepends else str.splitlines(self, False)
        starts, pos = [], 0
        for w in whole:
            starts.append(pos)
            pos += len(w)
        return _at(self, parts, starts) or parts

    def partition(self, sep: str) -> tuple[str, str, str]:
        parts = str.partition(self, sep)
        found = _at(self, parts, (0, len(parts[0]), len(parts[0]) + len(parts[1])))
        return cast("tuple[str, str, str]", tuple(found)) if found else parts

    def rpartition(self, sep: str) -> tuple[str, str, str]:
        parts = str.rpartition(self, sep)
        found = _at(self, parts, (0, len(parts[0]), len(parts[0]) + len(parts[1])))
        return cast("tuple[str, str, str]", tuple(found)) if found else parts

    def replace(self, old: str, new: str, count: SupportsIndex = -1) -> str:
        r = str.replace(self, old, new, count)
        n = count.__index__()
        if old:
            built = _join(new, self.split(old, n))
        else:  # new before each character (and at the end), at most count times
            pieces: list[str] = []
            for i in range(len(self) + 1):
                if n < 0 or i < n:
                    pieces.append(new)
                if i < len(self):
                    pieces.append(self[i])
            built = _join("", pieces)
        return built if built == r else r

    def _same_length(self, r: str) -> str:
        # Case mappings that keep the length map character i to character i.
        return _make(r, self._mask) if len(r) == len(self) else r

    def upper(self) -> str:
        return self._same_length(str.upper(self))

    def lower(self) -> str:
        return self._same_length(str.lower(self))

    def casefold(self) -> str:
        return self._same_length(str.casefold(self))

    def swapcase(self) -> str:
        return self._same_length(str.swapcase(self))

    def title(self) -> str:
        return self._same_length(str.title(self))

    def capitalize(self) -> str:
        return self._same_length(str.capitalize(self))

    def _pad(self, r: str, left: int, fillchar: str) -> str:
        fill = _mask(fillchar) if len(fillchar) == 1 else b"\x00"
        return _make(r, fill * left + self._mask + fill * (len(r) - len(self) - left))

    def center(self, width: SupportsIndex, fillchar: str = " ") -> str:
        r = str.center(self, width, fillchar)
        marg = len(r) - len(self)
        left = marg // 2 + (marg & width.__index__() & 1)  # CPython's rule for the odd character
        if str.__getitem__(r, slice(left, left + len(self))) != self:
            return r
        return self._pad(r, left, fillchar)

    def ljust(self, width: SupportsIndex, fillchar: str = " ") -> str:
        return self._pad(str.ljust(self, width, fillchar), 0, fillchar)

    def rjust(self, width: SupportsIndex, fillchar: str = " ") -> str:
        r = str.rjust(self, width, fillchar)
        return self._pad(r, len(r) - len(self), fillchar)


#: A ``%`` conversion of printf-style formatting (Python's ``str % args``).
_PERCENT = re.compile(r"%(?:\((?P<key>[^)]*)\))?[-#0 +]*(?P<width>\*|\d+)?(?:\.(?P<prec>\*|\d+))?[hlL]?(?P<conv>.)", re.S)


def _percent(fmt: TemplateStr, args: Any) -> str:
    r = str.__mod__(fmt, args)
    positional = list(args) if isinstance(args, tuple) else [args]
    pieces: list[str] = []
    pos = 0
    for m in _PERCENT.finditer(fmt):
        pieces.append(fmt[pos:m.start()])
        pos = m.end()
        if m["conv"] == "%":
            pieces.append(fmt[m.end() - 1:m.end()])
            continue
        spec = str.__getitem__(fmt, slice(m.start(), m.end()))
        if m["key"] is not None:
            if "(" in m["key"]:  # Python matches nested parentheses in a key; not followed here
                return r
            pieces.append(str.__mod__(spec, args))
            continue
        n = 1 + (m["width"] == "*") + (m["prec"] == "*")
        used, positional = positional[:n], positional[n:]
        if spec == "%s" and len(used) == 1 and isinstance(used[0], TemplateStr):
            pieces.append(used[0])
        else:
            pieces.append(str.__mod__(spec, tuple(used)))
    pieces.append(fmt[pos:])
    built = _join("", pieces)
    return built if built == r else r


@functools.lru_cache(maxsize=1024)
def trusted(text: str) -> TemplateStr:
    """``text`` as the template's own text (the template source, the tokenizer's config)."""
    return TemplateStr(text)


def plain(value: Any) -> Any:
    """User data as the template sees it: every string a plain ``str`` (user text),
    through mappings (keys too), lists and tuples."""
    if isinstance(value, str):
        return value if type(value) is str else str.__str__(value)
    if isinstance(value, Mapping):
        return {plain(k): plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, tuple):
        return tuple(plain(v) for v in value)
    return value


def runs(rendered: str) -> Iterator[tuple[str, bool]]:
    """``(text, is_template_text)`` runs of a rendered template, in order."""
    if not isinstance(rendered, TemplateStr):
        if rendered:
            yield rendered, False
        return
    pos = 0
    for m in re.finditer(rb"\x01+", rendered._mask):
        if m.start() > pos:
            yield str.__getitem__(rendered, slice(pos, m.start())), False
        yield str.__getitem__(rendered, slice(m.start(), m.end())), True
        pos = m.end()
    if pos < len(rendered):
        yield str.__getitem__(rendered, slice(pos, None)), False


# ---------------------------------------------------------------------------------- limits


class _Budget:
    """The limits of one render (read from :mod:`tokenforge.limits` when it starts)."""

    def __init__(self) -> None:
        self.steps = 0
        self.max_steps = limits.MAX_CHAT_TEMPLATE_ITERATIONS
        self.max_size = limits.MAX_CHAT_TEMPLATE_OUTPUT
        self.max_bits = limits.MAX_CHAT_TEMPLATE_INT_BITS
        self.seconds = limits.MAX_CHAT_TEMPLATE_SECONDS
        self.deadline = time.monotonic() + self.seconds

    def tick(self) -> None:
        if time.monotonic() > self.deadline:
            raise ChatTemplateLimitError(
                f"the chat template ran longer than {self.seconds:g} s (tokenforge.limits.MAX_CHAT_TEMPLATE_SECONDS)"
            )

    def step(self) -> None:
        self.steps += 1
        if self.steps > self.max_steps:
            raise ChatTemplateLimitError(
                f"the chat template ran more than {self.max_steps:,} loop iterations and macro calls "
                "(tokenforge.limits.MAX_CHAT_TEMPLATE_ITERATIONS)"
            )
        self.tick()

    def size(self, n: int, what: str = "a string or list") -> None:
        if n > self.max_size:
            raise ChatTemplateLimitError(
                f"the chat template builds {what} of {n:,} characters or items; the limit is "
                f"{self.max_size:,} (tokenforge.limits.MAX_CHAT_TEMPLATE_OUTPUT)"
            )

    def int_bits(self, n: int) -> None:
        if n > self.max_bits:
            raise ChatTemplateLimitError(
                f"the chat template computes a number of about {n:,} bits; the limit is {self.max_bits:,} "
                "(tokenforge.limits.MAX_CHAT_TEMPLATE_INT_BITS)"
            )

    def result(self, value: Any) -> Any:
        if isinstance(value, (str, list, tuple, dict)):
            self.size(len(value))
        elif isinstance(value, int) and not isinstance(value, bool):
            self.int_bits(value.bit_length())
        return value


_BUDGET: ContextVar[_Budget | None] = ContextVar("tokenforge_chat_template_budget", default=None)


def _budget() -> _Budget:
    b = _BUDGET.get()
    return _Budget() if b is None else b  # outside render(): the default limits, per call


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _check_binop(b: _Budget, op: str, left: Any, right: Any) -> None:
    sized = (str, list, tuple)
    if op == "+" and isinstance(left, sized) and isinstance(right, sized):
        b.size(len(left) + len(right))
    elif op == "*":
        for seq, n in ((left, right), (right, left)):
            if isinstance(seq, sized) and _is_int(n):
                b.size(len(seq) * max(n, 0))
        if _is_int(left) and _is_int(right):
            b.int_bits(left.bit_length() + right.bit_length())
    elif op == "**" and _is_int(left) and _is_int(right) and right > 0 and abs(left) > 1:
        b.int_bits(left.bit_length() * right)
    elif op == "%" and isinstance(left, str):
        _check_percent(b, left, right)


def _check_percent(b: _Budget, fmt: str, args: Any) -> None:
    for m in _PERCENT.finditer(fmt):
        for field in (m["width"], m["prec"]):
            if field and field.isdigit():
                b.size(int(field), "a formatted field")
    if "*" in fmt:
        for a in args if isinstance(args, tuple) else (args,):
            if _is_int(a):
                b.size(abs(a), "a formatted field")


_FORMAT_FIELD = re.compile(r"\{[^{}]*\}")


def _check_format(b: _Budget, fmt: str, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> None:
    for field in _FORMAT_FIELD.findall(fmt):
        for digits in re.findall(r"\d+", field.partition(":")[2]):
            b.size(int(digits), "a formatted field")
    if re.search(r"\{[^{}]*:[^{}]*\{", fmt):  # a width taken from the arguments
        for a in (*args, *kwargs.values()):
            if _is_int(a):
                b.size(abs(a), "a formatted field")


def _check_str_method(b: _Budget, name: str, s: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    """Refuse a ``str`` method call whose result would exceed the size limit, before it runs."""
    if name in ("center", "ljust", "rjust", "zfill") and args and _is_int(args[0]):
        b.size(args[0])
    elif name == "expandtabs":
        size = args[0] if args else kwargs.get("tabsize", 8)
        if _is_int(size):
            b.size(len(s) * max(size, 1))
    elif name == "replace" and len(args) >= 2 and isinstance(args[0], str) and isinstance(args[1], str):
        old, new = args[0], args[1]
        n = str.count(s, old) if old else len(s) + 1
        count = args[2] if len(args) > 2 else kwargs.get("count", -1)
        if _is_int(count) and count >= 0:
            n = min(n, count)
        b.size(len(s) + n * (len(new) - len(old)))
    elif name == "join" and args:
        items = list(args[0])
        b.size(sum(len(i) for i in items if isinstance(i, str)) + len(s) * max(len(items) - 1, 0))
        return (items, *args[1:])
    elif name in ("format", "format_map"):
        _check_format(b, s, args, kwargs if name == "format" else (args[0] if args and isinstance(args[0], Mapping) else {}))
    return args


def _guard_filter(name: str, f: Callable[..., Any]) -> Callable[..., Any]:
    """A filter with the limits: size checks before (where one argument sets the size of
    the result) and after."""

    @functools.wraps(f)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        b = _budget()
        b.tick()
        rest = [a for a in args if not isinstance(a, (jinja2.nodes.EvalContext, jinja2.runtime.Context, jinja2.Environment))]
        value, extra = (rest[0], rest[1:]) if rest else (None, [])
        if name in ("center", "batch", "slice", "indent", "wordwrap", "truncate"):
            for a in (*extra, *kwargs.values()):
                if _is_int(a):
                    b.size(a)
        if name == "indent" and isinstance(value, str):
            width = extra[0] if extra else kwargs.get("width", 4)
            w = width if _is_int(width) else len(width) if isinstance(width, str) else 0
            b.size(len(value) + (str.count(value, "\n") + 1) * w)
        elif name == "format" and isinstance(value, str):
            _check_percent(b, value, tuple(extra) or kwargs)
        elif name == "replace" and isinstance(value, str) and len(extra) >= 2:
            _check_str_method(b, "replace", value, tuple(extra), {})
        return b.result(f(*args, **kwargs))

    return guarded


@jinja2.pass_environment
def _join_filter(env: jinja2.Environment, value: Iterable[Any], d: str = "", attribute: str | int | None = None) -> str:
    """Jinja's ``join`` filter, keeping which characters are the template's."""
    items = list(value)
    if attribute is not None:
        getter = jinja2.filters.make_attrgetter(env, attribute)
        items = [getter(x) for x in items]
    strs = [x if isinstance(x, str) else str(x) for x in items]
    sep = d if isinstance(d, str) else str(d)
    _budget().size(sum(map(len, strs)) + len(sep) * max(len(strs) - 1, 0))
    return _join(sep, strs)


def _concat(items: Iterable[str]) -> str:
    """Joins a template's output pieces (the environment's ``concat``), with the limits."""
    b = _budget()
    texts: list[str] = []
    total = 0
    tracked = False
    for s in items:
        total += len(s)
        b.size(total, "output")
        b.tick()
        tracked = tracked or isinstance(s, TemplateStr)
        texts.append(s)
    if not tracked:
        return "".join(texts)
    return _join("", texts)


def _tilde(*args: Any) -> str:
    """``a ~ b``: both as strings, joined, keeping which characters are the template's."""
    strs = [a if isinstance(a, str) else str(a) for a in args]
    _budget().size(sum(map(len, strs)))
    return _join("", strs)


@jinja2.pass_context  # so that Jinja does not call it once at compile time instead
def _tick(context: Any, _: Any) -> None:
    """Counts one loop iteration (a filter: called directly, not through the sandbox)."""
    _budget().step()


class _Environment(ImmutableSandboxedEnvironment):
    """Jinja's immutable sandbox with the limits of :mod:`tokenforge.limits`."""

    intercepted_binops = frozenset({"+", "*", "**", "%"})

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        b = _budget()
        b.tick()
        if operator == "+" and isinstance(left, str) and isinstance(right, str):  # the common case, quickly
            if len(left) + len(right) > b.max_size:
                b.size(len(left) + len(right))
            return left + right
        _check_binop(b, operator, left, right)
        return b.result(super().call_binop(context, operator, left, right))

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N805
        b = _budget()
        if isinstance(__obj, Macro):
            b.step()
        else:
            b.tick()
        target = getattr(__obj, "__wrapped__", __obj)  # the sandbox wraps str.format
        owner = getattr(target, "__self__", None)
        if isinstance(owner, str):
            args = _check_str_method(b, getattr(target, "__name__", ""), owner, args, kwargs)
        return b.result(super().call(__context, __obj, *args, **kwargs))

    def getattr(self, obj: Any, attribute: str) -> Any:
        _budget().tick()
        return super().getattr(obj, attribute)

    def getitem(self, obj: Any, argument: Any) -> Any:
        _budget().tick()
        return super().getitem(obj, argument)



# ------------------------------------------------------------------------------ compiling


class _TemplateText(NodeTransformer):
    """Rewrites a parsed template so that its own text enters the render as
    :class:`TemplateStr`: each string constant and each text between tags becomes a
    variable holding it; ``~`` keeps provenance; every loop iteration counts."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.values: dict[str, TemplateStr] = {}
        self.names: dict[str, str] = {}

    def _name(self, text: str, node: nodes.Node) -> nodes.Name:
        name = self.names.get(text)
        if name is None:
            name = self.names[text] = f"{self.prefix}{len(self.names)}"
            self.values[name] = TemplateStr(text)
        return nodes.Name(name, "load", lineno=node.lineno)

    def _call(self, name: str, args: list[nodes.Expr], node: nodes.Node) -> nodes.Call:
        return nodes.Call(nodes.Name(self.prefix + name, "load", lineno=node.lineno), args, [], None, None,
                          lineno=node.lineno)

    def visit_Const(self, node: nodes.Const) -> nodes.Node:
        return self._name(node.value, node) if isinstance(node.value, str) else node

    def visit_TemplateData(self, node: nodes.TemplateData) -> nodes.Node:
        return self._name(node.data, node)

    def visit_Concat(self, node: nodes.Concat) -> nodes.Node:
        self.generic_visit(node)
        return self._call("tilde", node.nodes, node)

    def visit_For(self, node: nodes.For) -> nodes.Node:
        self.generic_visit(node)
        tick = nodes.Filter(nodes.Const(None), self.prefix + "tick", [], [], None, None, lineno=node.lineno)
        node.body.insert(0, nodes.ExprStmt(tick, lineno=node.lineno))
        return node


def _raise_exception(message: str) -> NoReturn:
    raise jinja2.exceptions.TemplateError(message)


def _tojson(x: Any, ensure_ascii: bool = False, indent: int | str | None = None,
            separators: tuple[str, str] | None = None, sort_keys: bool = False) -> str:
    """``transformers``' ``tojson`` (``json.dumps``); the text is the data's, so user text."""
    if indent is not None:
        width = indent if isinstance(indent, int) else len(indent) if isinstance(indent, str) else 0
        flat = json.dumps(x, ensure_ascii=ensure_ascii, indent=0, separators=separators, sort_keys=sort_keys)
        one = json.dumps(x, ensure_ascii=ensure_ascii, indent=1, separators=separators, sort_keys=sort_keys)
        _budget().size(len(flat) + (len(one) - len(flat)) * width)
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def _strftime_now(fmt: str) -> str:
    from datetime import datetime

    return datetime.now().strftime(str.__str__(fmt))


class Compiled:
    """A chat template compiled for :func:`render`."""

    def __init__(self, template: jinja2.Template, constants: dict[str, TemplateStr]) -> None:
        self.template = template
        self.constants = constants


@functools.lru_cache(maxsize=64)
def compile_template(source: str) -> Compiled:
    """The template compiled once (as ``transformers`` caches its own); a compiled template
    is immutable and renders re-entrantly."""
    env = _Environment(trim_blocks=True, lstrip_blocks=True, extensions=["jinja2.ext.loopcontrols"])
    env.concat = _concat  # type: ignore[method-assign]
    for name, f in list(env.filters.items()):
        env.filters[name] = _guard_filter(name, f)
    env.filters["join"] = _guard_filter("join", _join_filter)
    env.filters["tojson"] = _guard_filter("tojson", _tojson)
    env.globals["raise_exception"] = _raise_exception
    env.globals["strftime_now"] = _strftime_now
    try:
        tree = env.parse(source)
    except jinja2.exceptions.TemplateSyntaxError as exc:
        raise ChatTemplateError(f"the chat template is not valid Jinja: {exc.message} (line {exc.lineno})") from None
    n = 0
    while f"tf{n}_" in source:
        n += 1
    rewrite = _TemplateText(f"tf{n}_")
    tree = rewrite.visit(tree)
    constants: dict[str, Any] = dict(rewrite.values)
    constants[rewrite.prefix + "tilde"] = _tilde
    env.filters[rewrite.prefix + "tick"] = _tick
    try:
        template = env.from_string(tree)
    except jinja2.exceptions.TemplateSyntaxError as exc:
        raise ChatTemplateError(f"the chat template is not valid Jinja: {exc.message} (line {exc.lineno})") from None
    return Compiled(template, constants)


def _template_line(exc: BaseException) -> str:
    tb, line = exc.__traceback__, None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == "<template>":
            line = tb.tb_lineno
        tb = tb.tb_next
    return f" (line {line} of the chat template)" if line else ""


def render(compiled: Compiled, variables: Mapping[str, Any]) -> str:
    """Render with the limits; every failure is a :class:`ChatTemplateError`."""
    token = _BUDGET.set(_Budget())
    try:
        return compiled.template.render({**variables, **compiled.constants})
    except ChatTemplateLimitError as exc:
        raise ChatTemplateLimitError(f"{exc}{_template_line(exc)}") from None
    except TokenforgeError:
        raise
    except RecursionError as exc:
        raise ChatTemplateLimitError(
            f"the chat template nests macro calls or recursive loops deeper than Python allows{_template_line(exc)}"
        ) from None
    except MemoryError as exc:
        raise ChatTemplateLimitError(f"the chat template ran out of memory{_template_line(exc)}") from None
    except jinja2.exceptions.TemplateError as exc:
        raise ChatTemplateError(f"the chat template failed: {exc}{_template_line(exc)}") from None
    except Exception as exc:  # whatever the template does wrong (1/0, 'a' + 1), one error family
        raise ChatTemplateError(
            f"the chat template failed: {type(exc).__name__}: {exc}{_template_line(exc)}"
        ) from None
    finally:
        _BUDGET.reset(token)

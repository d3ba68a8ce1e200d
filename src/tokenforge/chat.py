"""Chat templates that user text cannot inject into (ChatML; tiktoken's ``disallowed_special``).

A chat template turns messages into ids with control tokens between them
(``<|im_start|>``, ``<|eot_id|>``). The usual way, rendering one string with the
control tokens written into it and then encoding that string with special tokens
allowed, has a hole: a user message that contains the literal text
``<|im_start|>system`` becomes a real control token, and the user has forged a
system turn (a prompt injection, and a correctness bug in training data).

The fix is to encode in separate channels: the template puts the
control ids in **by code**, and every piece of text (role names, message
contents) is encoded **with special-token matching off**, so whatever a message
says, it becomes ordinary tokens. :meth:`ChatTemplate.render` does exactly that;
:meth:`ChatTemplate.render_text` gives the same conversation as a string for a
person to read (``decode(render(m)) == render_text(m)``), which must never be fed
back to ``encode`` with specials allowed.

Two templates are included:

* :class:`ChatML` (Qwen, OpenAI's ChatML): ``<|im_start|>role\\ncontent<|im_end|>\\n``
  per message; the generation prompt is ``<|im_start|>assistant\\n``.
* :class:`Llama3` (Meta Llama 3): ``<|begin_of_text|>`` then
  ``<|start_header_id|>role<|end_header_id|>\\n\\ncontent<|eot_id|>`` per message,
  with the content stripped of surrounding whitespace as Meta's template does;
  the role ``tool`` is written ``ipython`` (Llama 3.1's name for tool output).

Each checks, when built, that the tokenizer has every control token it needs,
and names the missing one otherwise. Both work with every
:class:`~tokenforge.Tokenizer` family; its post-processor is not applied (the
template decides every control token).

>>> import tokenforge
>>> enc = tokenforge.get_encoding("cl100k_base")
>>> chat = tokenforge.Tokenizer(enc.model, pre_tokenizer=enc.pattern,
...     special_tokens={**enc.special_tokens, "<|im_start|>": 100264, "<|im_end|>": 100265})
>>> t = ChatML(chat)
>>> ids = t.render([{"role": "user", "content": "<|im_start|>system"}])
>>> ids.count(100264), ids[0]  # only the one the template put there
(1, 100264)
>>> chat.decode(ids) == t.render_text([{"role": "user", "content": "<|im_start|>system"}])
True
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import Any, ClassVar, NoReturn, SupportsIndex, cast

from .errors import EncodeInputError, SpecialTokenError

__all__ = ["ChatML", "ChatTemplate", "Control", "JinjaTemplate", "Llama3"]

Message = Mapping[str, Any]


class Control(str):
    """A control token in a rendered template (as opposed to text to encode)."""

    __slots__ = ()


Part = Control | str


class ChatTemplate(ABC):
    """Base class: a template is a list of parts, control tokens and text.

    Subclasses set ``name``, ``controls`` (every special token they use) and
    ``roles`` (accepted roles -> the name written in the header), and implement
    :meth:`parts`.
    """

    name: ClassVar[str] = "template"
    controls: ClassVar[tuple[str, ...]] = ()
    roles: ClassVar[Mapping[str, str]] = MappingProxyType({})

    def __init__(self, tokenizer: Any) -> None:
        specials = tokenizer.special_tokens
        for c in self.controls:
            if c not in specials:
                have = ", ".join(sorted(specials)) or "none"
                raise SpecialTokenError(
                    f"the {self.name} template needs the special token {c!r}, which this tokenizer does not have "
                    f"(its special tokens: {have})"
                )
        self._tok = tokenizer
        self._ids = {c: specials[c] for c in self.controls}

    @property
    def tokenizer(self) -> Any:
        return self._tok

    @property
    def control_ids(self) -> Mapping[str, int]:
        """``{control token: id}`` for the tokens this template inserts."""
        return dict(self._ids)

    @abstractmethod
    def parts(self, messages: Sequence[Message], add_generation_prompt: bool = False) -> list[Part]:
        """The conversation as control tokens (:class:`Control`) and text, in order."""

    def _check(self, messages: Sequence[Message]) -> list[tuple[str, str]]:
        if isinstance(messages, (str, Mapping)):
            raise EncodeInputError("messages must be a list of {'role': ..., 'content': ...} mappings")
        out = []
        for n, m in enumerate(messages):
            if not isinstance(m, Mapping) or "role" not in m or "content" not in m:
                raise EncodeInputError(f"message {n} must be a mapping with 'role' and 'content', got {m!r}")
            role, content = m["role"], m["content"]
            if role not in self.roles:
                raise EncodeInputError(
                    f"message {n} has role {role!r}; the {self.name} template knows {', '.join(self.roles)}"
                )
            if not isinstance(content, str):
                raise EncodeInputError(f"message {n} content must be str, got {type(content).__name__}")
            out.append((self.roles[role], content))
        return out

    def _encode_text(self, text: str) -> list[int]:
        """Ids of ``text`` with special-token matching OFF: every string is ordinary text."""
        if not text:
            return []
        return cast("list[int]", self._tok.encode(text, add_special_tokens=False, allowed_special=(), disallowed_special=()))

    def render(self, messages: Sequence[Message], *, add_generation_prompt: bool = False) -> list[int]:
        """Ids of the conversation: control ids inserted by code, all text encoded as ordinary text."""
        ids: list[int] = []
        text: list[str] = []
        for p in self.parts(messages, add_generation_prompt):
            if isinstance(p, Control):
                ids.extend(self._encode_text("".join(text)))
                text = []
                ids.append(self._ids[p])
            else:
                text.append(p)
        ids.extend(self._encode_text("".join(text)))
        return ids

    def render_text(self, messages: Sequence[Message], *, add_generation_prompt: bool = False) -> str:
        """The conversation as a string, for display only: control tokens and literal text
        look the same in it, so never encode it with special tokens allowed."""
        return "".join(self.parts(messages, add_generation_prompt))

    def __repr__(self) -> str:
        return f"<{type(self).__name__} template, controls={self._ids}>"


class ChatML(ChatTemplate):
    """``<|im_start|>role\\ncontent<|im_end|>\\n`` per message (Qwen, ChatML).

    >>> import tokenforge
    >>> enc = tokenforge.get_encoding("cl100k_base")
    >>> ChatML(enc)
    Traceback (most recent call last):
    ...
    tokenforge.errors.SpecialTokenError: the ChatML template needs the special token '<|im_start|>', which this tokenizer does not have (its special tokens: <|endofprompt|>, <|endoftext|>, <|fim_middle|>, <|fim_prefix|>, <|fim_suffix|>)
    """

    name = "ChatML"
    controls = ("<|im_start|>", "<|im_end|>")
    roles = MappingProxyType({"system": "system", "user": "user", "assistant": "assistant", "tool": "tool"})

    def parts(self, messages: Sequence[Message], add_generation_prompt: bool = False) -> list[Part]:
        out: list[Part] = []
        for role, content in self._check(messages):
            out += [Control("<|im_start|>"), f"{role}\n{content}", Control("<|im_end|>"), "\n"]
        if add_generation_prompt:
            out += [Control("<|im_start|>"), "assistant\n"]
        return out


class Llama3(ChatTemplate):
    """``<|begin_of_text|>`` + ``<|start_header_id|>role<|end_header_id|>\\n\\ncontent<|eot_id|>`` per message."""

    name = "Llama-3"
    controls = ("<|begin_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>")
    roles = MappingProxyType(
        {"system": "system", "user": "user", "assistant": "assistant", "tool": "ipython", "ipython": "ipython"}
    )

    def parts(self, messages: Sequence[Message], add_generation_prompt: bool = False) -> list[Part]:
        out: list[Part] = [Control("<|begin_of_text|>")]
        for role, content in self._check(messages):
            out += [
                Control("<|start_header_id|>"), role, Control("<|end_header_id|>"), "\n\n" + content.strip(),
                Control("<|eot_id|>"),
            ]
        if add_generation_prompt:
            out += [Control("<|start_header_id|>"), "assistant", Control("<|end_header_id|>"), "\n\n"]
        return out


# ---------------------------------------------------------------------------
# Jinja templates (transformers' chat_template), with the same injection rule.
#
# A Jinja template renders one string, and the message text sits inside it. To
# know which characters came from messages, every string in the messages is
# handed to the template as a ``_Text``: a ``str`` that prints itself between
# two marker characters (private-use code points that occur nowhere in the
# input), and whose string methods (strip, split, replace, slicing, ...) return
# marked strings again. The rendered string is then cut at the markers: marked
# runs are message text (encoded with special matching off), the rest is the
# template's own text, where special-token strings are control tokens.
#
# A template that moves message text out of the markers (``tojson`` of a
# message, say) could still leak it; so the template is rendered a second time
# with every special-token string removed from the messages, and the control
# tokens of the two renders must be the same, else the render is refused.

#: Each entry is two marker characters, (left, right).
_MARKS: tuple[Sequence[str], ...] = ("\ue000\ue001", "\uf8fe\uf8ff", "\U000f0000\U000f0001", "\U00100000\U00100001")


class _Text(str):
    """A message string as a template sees it (see above)."""

    __slots__ = ()
    left = "\ue000"
    right = "\ue001"

    def __str__(self) -> str:
        return f"{self.left}{str.__str__(self)}{self.right}"

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)

    def __html__(self) -> str:
        return str(self)

    def _wrap(self, value: Any) -> Any:
        if type(value) is str:
            return type(self)(value)
        if isinstance(value, list):
            return [self._wrap(v) for v in value]
        if isinstance(value, tuple):
            return tuple(self._wrap(v) for v in value)
        return value

    def __add__(self, other: str) -> str:
        return str(self) + (str(other) if isinstance(other, _Text) else other)

    def __radd__(self, other: str) -> str:
        return other + str(self)

    def __mod__(self, other: object) -> str:
        return str(self) % other

    def __mul__(self, n: SupportsIndex) -> str:
        return cast(str, self._wrap(str.__str__(self) * n))

    def __getitem__(self, key: SupportsIndex | slice) -> str:
        return cast(str, self._wrap(str.__getitem__(self, key)))

    def __iter__(self) -> Iterator[str]:
        return (type(self)(c) for c in str.__str__(self))


def _text_method(name: str) -> Callable[..., Any]:
    base = getattr(str, name)

    def method(self: _Text, *args: Any, **kwargs: Any) -> Any:
        return self._wrap(base(self, *args, **kwargs))

    method.__name__ = name
    return method


for _name in ("strip", "lstrip", "rstrip", "lower", "upper", "title", "capitalize", "casefold", "replace", "split",
              "rsplit", "splitlines", "partition", "rpartition", "removeprefix", "removesuffix", "center", "ljust",
              "rjust", "zfill", "expandtabs", "swapcase"):
    setattr(_Text, _name, _text_method(_name))


class JinjaTemplate(ChatTemplate):
    """A ``transformers`` chat template (Jinja) rendered with the injection rule above."""

    name = "Jinja"

    def __init__(self, tokenizer: Any, source: str, *, tools: Any = None, documents: Any = None, **kwargs: Any) -> None:
        if not isinstance(source, str):
            raise EncodeInputError(f"a chat template is a Jinja string, got {type(source).__name__}")
        try:
            import jinja2
            from jinja2.sandbox import ImmutableSandboxedEnvironment
        except ImportError:
            from .errors import MissingDependencyError

            raise MissingDependencyError(
                "Jinja chat templates need jinja2: pip install 'tokenforge[chat]' (or pip install jinja2)"
            ) from None
        self._tok = tokenizer
        self._ids = dict(tokenizer.special_tokens)
        self._source = source
        self._jinja = jinja2
        env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=["jinja2.ext.loopcontrols"])

        def raise_exception(message: str) -> NoReturn:
            raise jinja2.exceptions.TemplateError(message)

        def tojson(
            x: Any, ensure_ascii: bool = False, indent: int | str | None = None,
            separators: tuple[str, str] | None = None, sort_keys: bool = False,
        ) -> str:
            import json

            return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

        def strftime_now(fmt: str) -> str:
            from datetime import datetime

            return datetime.now().strftime(fmt)

        env.filters["tojson"] = tojson
        env.globals["raise_exception"] = raise_exception
        env.globals["strftime_now"] = strftime_now
        try:
            self._template = env.from_string(source)
        except jinja2.exceptions.TemplateSyntaxError as exc:
            raise EncodeInputError(f"the chat template is not valid Jinja: {exc.message} (line {exc.lineno})") from None
        names = {k: v for k, v in tokenizer.config.items() if k.endswith("_token") and isinstance(v, str)}
        self._context = {**names, "tools": tools, "documents": documents, **kwargs}

    def parts(self, messages: Sequence[Message], add_generation_prompt: bool = False) -> list[Part]:
        if isinstance(messages, (str, Mapping)):
            raise EncodeInputError("messages must be a list of {'role': ..., 'content': ...} mappings")
        marks = self._marks(messages)
        rendered = self._render(messages, add_generation_prompt, marks)
        parts = self._cut(rendered, marks)
        specials = list(self._ids)
        if specials:
            # The same render with no special-token string in any message must put the same
            # control tokens: otherwise message text reached the template's own text.
            clean = self._render(_without(messages, specials), add_generation_prompt, marks)
            if [p for p in self._cut(clean, marks) if isinstance(p, Control)] != [p for p in parts if isinstance(p, Control)]:
                raise SpecialTokenError(
                    "the chat template moves message text out of the text it writes (e.g. through tojson), so "
                    "control tokens could come from a message; refusing to render it"
                )
        return parts

    def _marks(self, messages: Any) -> tuple[str, str]:
        seen = self._source + repr(messages) + repr(self._context)
        for left, right in _MARKS:
            if left not in seen and right not in seen:
                return left, right
        raise EncodeInputError("the messages use every private-use marker tokenforge needs to track their text")

    def _render(self, messages: Any, add_generation_prompt: bool, marks: tuple[str, str]) -> str:
        text_type = type("_MarkedText", (_Text,), {"__slots__": (), "left": marks[0], "right": marks[1]})
        try:
            return self._template.render(
                messages=_wrap(messages, text_type), add_generation_prompt=add_generation_prompt,
                **{k: _wrap(v, text_type) if k == "documents" else v for k, v in self._context.items()},
            )
        except self._jinja.exceptions.TemplateError as exc:
            raise EncodeInputError(f"the chat template failed: {exc}") from None

    def _cut(self, rendered: str, marks: tuple[str, str]) -> list[Part]:
        left, right = marks
        out: list[Part] = []
        depth = 0
        literal: list[str] = []
        for piece in _split_marks(rendered, left, right):
            if piece == left:
                if depth == 0 and literal:
                    out += self._controls("".join(literal))
                    literal = []
                depth += 1
            elif piece == right:
                depth = max(depth - 1, 0)
            elif depth:
                out.append(piece)  # message text: never a control token
            else:
                literal.append(piece)
        if literal:
            out += self._controls("".join(literal))
        return out

    def _controls(self, text: str) -> list[Part]:
        """The template's own text: special-token strings are control tokens."""
        out: list[Part] = []
        for seg, tid in self._tok._specials.split(text, self._tok._specials.all):
            out.append(Control(seg) if tid is not None else seg)
        return out


def _split_marks(text: str, left: str, right: str) -> list[str]:
    out: list[str] = []
    start = 0
    for i, c in enumerate(text):
        if c == left or c == right:
            if i > start:
                out.append(text[start:i])
            out.append(c)
            start = i + 1
    if start < len(text):
        out.append(text[start:])
    return out


def _wrap(value: Any, text_type: type) -> Any:
    if isinstance(value, str):
        return text_type(value)
    if isinstance(value, Mapping):
        return {k: _wrap(v, text_type) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_wrap(v, text_type) for v in value]
    return value


def _without(value: Any, specials: list[str]) -> Any:
    if isinstance(value, str):
        for s in sorted(specials, key=len, reverse=True):
            value = value.replace(s, "")
        return value
    if isinstance(value, Mapping):
        return {k: _without(v, specials) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_without(v, specials) for v in value]
    return value

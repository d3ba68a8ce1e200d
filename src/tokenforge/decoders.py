"""Decoding: ids -> bytes -> text, whole or streamed.

Byte-level BPE tokens are byte strings, and a token may hold part of a UTF-8
character (a CJK character or an emoji often spans two or three tokens). So
text is decoded from the joined bytes, never token by token (as with
tiktoken's ``decode_bytes``), and a streaming decoder buffers bytes until they
form whole characters: it never emits half a character
and, with ``errors="replace"``, emits U+FFFD only for bytes that can no
longer become valid UTF-8.
"""

from __future__ import annotations

import reprlib
import codecs
from abc import abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from ._component import CHAR, COUNT, Component, ComponentSequence, Registry, check_state_kwargs, field, metaspace_settings
from .errors import ArgumentTypeError, DecodeError, FileFormatError, InvalidArgumentError

if TYPE_CHECKING:
    from .pretokenizers import Regex

_ERRORS = ("strict", "replace", "ignore", "backslashreplace", "surrogateescape")


def check_errors(errors: str) -> None:
    if errors not in _ERRORS:
        raise InvalidArgumentError(f"errors must be one of {', '.join(_ERRORS)}; got {errors!r}")


def bytes_to_text(data: bytes, errors: str = "replace") -> str:
    """UTF-8 decode with tokenforge's error reporting."""
    check_errors(errors)
    try:
        return data.decode("utf-8", errors)
    except UnicodeDecodeError as exc:
        raise DecodeError(
            f"token bytes are not valid UTF-8: byte {exc.start} of the decoded bytes "
            f"({data[exc.start:exc.end]!r}) {exc.reason}; use errors='replace' to get U+FFFD"
        ) from None


class StreamDecoder:
    """Incremental decoder: feed ids as they arrive, get text as soon as it is final.

    Joined, the chunks of ``step``/``feed`` and ``finish`` equal the whole decode. It
    never emits half a character, and with ``errors="replace"`` emits U+FFFD only for
    bytes that can no longer become valid UTF-8. Get one from
    :meth:`tokenforge.Tokenizer.stream_decoder`.

    It works in one of two ways, chosen by the tokenizer. When tokens are bytes
    (byte-level BPE, ``token_bytes=``), it feeds their bytes to an incremental UTF-8
    decoder. Otherwise (``decode=``, any pipeline decoder) it decodes a short window of
    recent ids and emits what the window adds to the text decoded so far, holding back
    while the text ends in U+FFFD (a character still cut between ``<0xXX>`` byte
    tokens); the window keeps the last emitted ids as context, so decoders that treat
    the first token specially (Metaspace, WordPiece) see the same neighbours as in a
    whole decode. (For invalid byte runs the two can differ: HF's ``ByteFallback`` turns
    a whole invalid run into U+FFFD, while a stream has already emitted the characters
    that were complete when they arrived.)

    >>> import tokenforge
    >>> enc = tokenforge.get_encoding("gpt2")
    >>> dec = enc.stream_decoder()
    >>> "".join(dec.step(i) for i in enc.encode("héllo 🙂")) + dec.finish()
    'héllo 🙂'
    """

    __slots__ = ("_token_bytes", "_utf8", "_errors", "_decode", "_ids", "_prefix", "_prefix_index")

    def __init__(
        self,
        token_bytes: Callable[[int], bytes] | None = None,
        errors: str = "replace",
        *,
        decode: Callable[[list[int]], str] | None = None,
    ) -> None:
        check_errors(errors)
        if (token_bytes is None) == (decode is None):
            raise ArgumentTypeError("StreamDecoder takes exactly one of token_bytes= and decode=")
        self._token_bytes = token_bytes
        self._decode = decode
        self._errors = errors
        self._utf8 = codecs.getincrementaldecoder("utf-8")(errors) if token_bytes is not None else None
        self._ids: list[int] = []
        self._prefix = ""
        self._prefix_index = 0

    def step(self, token_id: int) -> str:
        """Add one id; return the text that became final (maybe ``""``)."""
        if self._utf8 is not None:
            return self._bytes(self._token_bytes(token_id), final=False)  # type: ignore[misc]
        self._ids.append(token_id)
        text = self._decode(self._ids)  # type: ignore[misc]
        if len(text) > len(self._prefix) and not text.endswith("\ufffd") and text.startswith(self._prefix):
            new = text[len(self._prefix):]
            # The ids just decoded become the context of the next step.
            self._ids = self._ids[self._prefix_index:]
            self._prefix = self._decode(self._ids)  # type: ignore[misc]
            self._prefix_index = len(self._ids)
            return new
        return ""

    def feed(self, ids: Iterable[int]) -> str:
        """Add several ids; return the text that became final."""
        if self._utf8 is not None:
            return self._bytes(b"".join(self._token_bytes(i) for i in ids), final=False)  # type: ignore[misc]
        return "".join(self.step(i) for i in ids)

    def finish(self) -> str:
        """End of stream: flush what is held back (U+FFFD for a cut-off character under
        ``errors="replace"``; :class:`DecodeError` under ``"strict"``). The decoder can
        then start a new stream."""
        if self._utf8 is not None:
            return self._bytes(b"", final=True)
        text = self._decode(self._ids)  # type: ignore[misc]
        if text.startswith(self._prefix):
            out = text[len(self._prefix):]
        else:  # the new ids changed how the context decodes: emit them on their own
            out = self._decode(self._ids[self._prefix_index:])  # type: ignore[misc]
        self._ids, self._prefix, self._prefix_index = [], "", 0
        return out

    def __copy__(self) -> "StreamDecoder":
        """An independent decoder in the same state (bytes held back, context ids): feeding
        one does not change the other (as HF's ``DecodeStream`` copies)."""
        new = object.__new__(type(self))
        for slot in StreamDecoder.__slots__:
            setattr(new, slot, getattr(self, slot))
        new._ids = list(self._ids)
        if self._utf8 is not None:
            new._utf8 = codecs.getincrementaldecoder("utf-8")(self._errors)
            new._utf8.setstate(self._utf8.getstate())
        return new

    def __deepcopy__(self, memo: dict[int, Any]) -> "StreamDecoder":
        return self.__copy__()

    @property
    def pending(self) -> bytes:
        """Bytes held back because they do not yet form a whole character (byte tokens)."""
        return self._utf8.getstate()[0] if self._utf8 is not None else b""

    def _bytes(self, data: bytes, final: bool) -> str:
        try:
            return self._utf8.decode(data, final)  # type: ignore[union-attr]
        except UnicodeDecodeError as exc:
            raise DecodeError(
                f"streamed token bytes are not valid UTF-8 ({exc.reason}); use errors='replace' to get U+FFFD"
            ) from None

    def decode_iter(self, ids: Iterable[int]) -> Iterator[str]:
        """Yield non-empty text chunks for a stream of ids, then the flushed tail."""
        for i in ids:
            out = self.step(i)
            if out:
                yield out
        tail = self.finish()
        if tail:
            yield tail


# ---------------------------------------------------------------------------
# The pipeline's decoders (HF tokenizers' components, same JSON shapes).
#
# A decoder maps the list of token strings to text pieces (``decode_chain``);
# ``Sequence`` feeds one decoder's output to the next, and the text is their
# concatenation. Byte-level tokens are joined into bytes before UTF-8 decoding,
# and ``<0xXX>`` byte-fallback runs likewise, so a character split over several
# tokens is never decoded in halves.
# ---------------------------------------------------------------------------


#: The decoders by the ``"type"`` of their serialized form.
DECODERS: Registry[Decoder] = Registry("decoder")


class Decoder(Component):
    """Base class. ``decode(tokens) == "".join(decode_chain(tokens))``.

    Subclasses implement ``decode_chain`` and set ``type_name`` (the ``"type"`` of
    the serialized form, which registers them in :data:`DECODERS`).
    """

    registry = DECODERS

    @abstractmethod
    def decode_chain(self, tokens: list[str]) -> list[str]:
        """Token strings in, text pieces out (joined, they are the text)."""

    def decode(self, tokens: list[str]) -> str:
        return "".join(self.decode_chain(list(tokens)))

    def __reduce__(self) -> tuple[Callable[..., Decoder | None], tuple[dict[str, Any]]]:
        return (decoder_from_dict, (self.to_dict(),))


class ByteLevel(Decoder):
    """GPT-2 printable characters back to bytes, then UTF-8 (U+FFFD for bad bytes).

    >>> ByteLevel().decode(["Hello", "Ġw", "Ã¶", "rld"])
    'Hello wörld'
    """

    type_name = "ByteLevel"

    def __init__(
        self, add_prefix_space: bool = True, trim_offsets: bool = True, use_regex: bool = True, **state: Any
    ) -> None:
        # HF's ByteLevel decoder is its ByteLevel pre-tokenizer: it carries (and writes
        # back) the three settings, which do not change decoding.
        check_state_kwargs(type(self), state)
        self.add_prefix_space, self.trim_offsets, self.use_regex = bool(add_prefix_space), bool(trim_offsets), bool(use_regex)

    def decode_chain(self, tokens: list[str]) -> list[str]:
        from .bytelevel import unicode_to_bytes

        table = unicode_to_bytes()
        out = bytearray()
        for t in tokens:
            try:
                out.extend(table[c] for c in t)
            except KeyError:
                out.extend(t.encode("utf-8", "surrogatepass"))
        return [out.decode("utf-8", "replace")]

    def to_dict(self) -> dict[str, Any]:
        return {"type": "ByteLevel", "add_prefix_space": self.add_prefix_space, "trim_offsets": self.trim_offsets, "use_regex": self.use_regex}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "ByteLevel":
        return cls(_field(d, "add_prefix_space", bool, True), _field(d, "trim_offsets", bool, True), _field(d, "use_regex", bool, True))


class Metaspace(Decoder):
    """``▁`` back to spaces; with a prepend scheme (``"always"``, ``"first"``) the
    first token's ``▁`` are dropped instead.

    As in HF tokenizers, every ``▁`` of the first token is dropped, not only the
    one the pre-tokenizer prepended: ``["▁▁b"]`` decodes to ``"b"``. With
    ``split=True`` a token holds one ``▁`` at most, at its start, so this only
    shows with ``split=False`` vocabularies.

    >>> Metaspace().decode(["▁Hey", "▁", "▁friend"])
    'Hey  friend'
    """

    type_name = "Metaspace"

    def __init__(self, replacement: str = "\u2581", prepend_scheme: str = "always", split: bool = True) -> None:
        if not isinstance(replacement, str) or len(replacement) != 1:
            raise InvalidArgumentError(f"Metaspace replacement: expected a string of length 1, got {replacement!r}")
        if prepend_scheme not in ("always", "first", "never"):
            raise InvalidArgumentError(f"prepend_scheme must be 'always', 'first' or 'never'; got {prepend_scheme!r}")
        self.replacement = replacement
        self.prepend_scheme = prepend_scheme
        self.split = bool(split)

    def decode_chain(self, tokens: list[str]) -> list[str]:
        out = []
        for i, t in enumerate(tokens):
            out.append(t.replace(self.replacement, "" if i == 0 and self.prepend_scheme != "never" else " "))
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"type": "Metaspace", "replacement": self.replacement, "prepend_scheme": self.prepend_scheme, "split": self.split}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Metaspace":
        return cls(*metaspace_settings(d, "decoder"))


_CLEANUPS = (
    (" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"), (" n't", "n't"), (" 'm", "'m"),
    (" do not", " don't"), (" 's", "'s"), (" 've", "'ve"), (" 're", "'re"),
)


def cleanup_spaces(text: str) -> str:
    """BERT's clean-up of tokenization spaces (`` ,`` -> ``,``, `` n't`` -> ``n't``, ...)."""
    for a, b in _CLEANUPS:
        text = text.replace(a, b)
    return text


class WordPiece(Decoder):
    """``##`` continuations join their word; other tokens start a new, space-separated word.

    ``cleanup`` (on by default, as in HF tokenizers and BERT's original
    ``tokenization.py`` clean-up) also removes the spaces before punctuation and
    contractions, which is lossy; ``cleanup=False`` keeps them.

    >>> WordPiece().decode(["un", "##aff", "##able", "!"])
    'unaffable!'
    >>> WordPiece(cleanup=False).decode(["un", "##aff", "##able", "!"])
    'unaffable !'
    """

    type_name = "WordPiece"

    def __init__(self, prefix: str = "##", cleanup: bool = True) -> None:
        self.prefix = prefix
        self.cleanup = bool(cleanup)

    def decode_chain(self, tokens: list[str]) -> list[str]:
        out = []
        for i, t in enumerate(tokens):
            if i:
                t = t[len(self.prefix):] if t.startswith(self.prefix) else " " + t
            out.append(cleanup_spaces(t) if self.cleanup else t)
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"type": "WordPiece", "prefix": self.prefix, "cleanup": self.cleanup}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "WordPiece":
        return cls(_field(d, "prefix", str, "##"), _field(d, "cleanup", bool, True))


def byte_fallback_value(token: str) -> int | None:
    """The byte of a ``<0xXX>`` token, else ``None``."""
    if len(token) == 6 and token.startswith("<0x") and token.endswith(">"):
        try:
            return int(token[3:5], 16)
        except ValueError:
            return None
    return None


class ByteFallback(Decoder):
    """Runs of ``<0xXX>`` tokens become the UTF-8 text of their bytes; bytes that
    are not valid UTF-8 become one U+FFFD each.

    >>> ByteFallback().decode(["<0xE9>", "<0xBE>", "<0x98>", "!"])
    '龘!'
    """

    type_name = "ByteFallback"

    def decode_chain(self, tokens: list[str]) -> list[str]:
        out: list[str] = []
        pending = bytearray()
        count = 0

        def flush() -> None:
            nonlocal count
            if count:
                try:
                    out.append(bytes(pending).decode("utf-8"))
                except UnicodeDecodeError:
                    out.extend("\ufffd" for _ in range(count))
                pending.clear()
                count = 0

        for t in tokens:
            b = byte_fallback_value(t)
            if b is None:
                flush()
                out.append(t)
            else:
                pending.append(b)
                count += 1
        flush()
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"type": "ByteFallback"}


class Fuse(Decoder):
    """All tokens into one string."""

    type_name = "Fuse"

    def decode_chain(self, tokens: list[str]) -> list[str]:
        return ["".join(tokens)]

    def to_dict(self) -> dict[str, Any]:
        return {"type": "Fuse"}


class Strip(Decoder):
    """Remove up to ``left`` copies of ``content`` from the left of each token and ``right``
    from the right (HF's argument names; ``start`` and ``stop``, the names of the serialized
    fields, are accepted too).

    >>> Strip(content="▁", left=1).decode(["▁a", "▁▁b"])
    'a▁b'
    """

    type_name = "Strip"

    def __init__(
        self, content: str = " ", left: int = 0, right: int = 0, *, start: int | None = None, stop: int | None = None
    ) -> None:
        if start is not None:
            left = start
        if stop is not None:
            right = stop
        if not isinstance(content, str) or len(content) != 1:
            raise InvalidArgumentError(f"Strip content must be one character, got {content!r}")
        for name, value in (("left", left), ("right", right)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise InvalidArgumentError(f"Strip {name} must be a non-negative int, got {value!r}")
        self.content, self.start, self.stop = content, left, right

    @property
    def left(self) -> int:
        """How many ``content`` characters at most are removed from the left (HF's name)."""
        return self.start

    @property
    def right(self) -> int:
        """How many ``content`` characters at most are removed from the right (HF's name)."""
        return self.stop

    def decode_chain(self, tokens: list[str]) -> list[str]:
        out = []
        for t in tokens:
            a, b = 0, len(t)
            while a < min(self.start, b) and t[a] == self.content:
                a += 1
            k = 0
            while k < self.stop and b > a and t[b - 1] == self.content:
                b -= 1
                k += 1
            out.append(t[a:b])
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"type": "Strip", "content": self.content, "start": self.start, "stop": self.stop}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Strip":
        return cls(_field(d, "content", CHAR, " "), _field(d, "start", COUNT, 0), _field(d, "stop", COUNT, 0))


class Replace(Decoder):
    """Replace a literal string, or the matches of a regex, in each token.

    ``pattern`` is a literal string, or a :class:`~tokenforge.pretokenizers.Regex`
    (as ``tokenizers.Regex``; a string with ``regex_pattern=True`` too), read as HF
    tokenizers reads it (Oniguruma's syntax and character classes); matches are found
    as HF finds them, and an empty match inserts ``content``.

    >>> Replace("▁", " ").decode(["▁Hey", "▁friend"])
    ' Hey friend'
    """

    type_name = "Replace"

    def __init__(self, pattern: "str | Regex", content: str, *, regex_pattern: bool = False) -> None:
        import regex

        from .pretokenizers import Regex, compile_oniguruma

        if isinstance(pattern, Regex):
            pattern, regex_pattern = pattern.pattern, True
        elif not isinstance(pattern, str):
            raise ArgumentTypeError(f"Replace pattern must be a str or a Regex, got {type(pattern).__name__}")
        if not isinstance(content, str):
            raise ArgumentTypeError(f"Replace content must be a str, got {type(content).__name__}")
        self.pattern, self.content, self.is_regex = pattern, content, regex_pattern
        self._re = compile_oniguruma(pattern) if regex_pattern else regex.compile(regex.escape(pattern))

    def decode_chain(self, tokens: list[str]) -> list[str]:
        from .pretokenizers import oniguruma_matches

        out: list[str] = []
        for t in tokens:
            if not t:
                out.append(t)
                continue
            parts, pos = [], 0
            for a, b in oniguruma_matches(self._re, t):
                parts.append(t[pos:a])
                parts.append(self.content)
                pos = b
            parts.append(t[pos:])
            out.append("".join(parts))
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"type": "Replace", "pattern": {"Regex" if self.is_regex else "String": self.pattern}, "content": self.content}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Replace":
        pat = d.get("pattern")
        if not isinstance(pat, Mapping) or not ({"String", "Regex"} & set(pat)):
            raise FileFormatError("decoder 'Replace' needs pattern {'String': ...} or {'Regex': ...}")
        if "content" not in d:
            raise FileFormatError("decoder 'Replace' needs the field 'content'")
        is_regex = "Regex" in pat
        value = pat["Regex"] if is_regex else pat["String"]
        if not isinstance(value, str) or not isinstance(d["content"], str):
            raise FileFormatError("decoder 'Replace': pattern and content must be strings")
        return cls(value, d["content"], regex_pattern=is_regex)


class BPEDecoder(Decoder):
    """End-of-word suffix (``</w>``) back to a space (nothing after the last token)."""

    type_name = "BPEDecoder"

    def __init__(self, suffix: str = "</w>") -> None:
        self.suffix = suffix

    def decode_chain(self, tokens: list[str]) -> list[str]:
        last = len(tokens) - 1
        return [t.replace(self.suffix, "" if i == last else " ") for i, t in enumerate(tokens)]

    def to_dict(self) -> dict[str, Any]:
        return {"type": "BPEDecoder", "suffix": self.suffix}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "BPEDecoder":
        return cls(_field(d, "suffix", str, "</w>"))


class CTC(Decoder):
    """CTC output: collapse repeats, drop the pad token, word delimiter -> space."""

    type_name = "CTC"

    def __init__(self, pad_token: str = "<pad>", word_delimiter_token: str = "|", cleanup: bool = True) -> None:
        self.pad_token, self.word_delimiter_token, self.cleanup = pad_token, word_delimiter_token, bool(cleanup)

    def decode_chain(self, tokens: list[str]) -> list[str]:
        out = []
        prev = None
        for t in tokens:
            if t == prev:
                continue
            prev = t
            t = t.replace(self.pad_token, "")
            if self.cleanup:
                t = cleanup_spaces(t).replace(self.word_delimiter_token, " ")
            if t:
                out.append(t)
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"type": "CTC", "pad_token": self.pad_token, "word_delimiter_token": self.word_delimiter_token, "cleanup": self.cleanup}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "CTC":
        return cls(
            _field(d, "pad_token", str, "<pad>"), _field(d, "word_delimiter_token", str, "|"), _field(d, "cleanup", bool, True)
        )


def _bytes_to_text_per_byte(data: bytes) -> str:
    """UTF-8 decode where every byte that is not part of a valid character is one U+FFFD."""
    text = data.decode("utf-8", "surrogateescape")
    if not any("\udc80" <= c <= "\udcff" for c in text):
        return text
    return "".join("\ufffd" if "\udc80" <= c <= "\udcff" else c for c in text)


class SentencePiece(Decoder):
    """The ``sentencepiece`` library's decoder, for pipelines loaded from a ``.model``.

    ``▁`` becomes a space; runs of ``<0xXX>`` byte pieces become their UTF-8
    text (one U+FFFD per byte that is not part of a valid character); the
    unknown piece becomes ``unk_surface`` (`` ⁇ ``); ``control`` pieces (``<s>``,
    ``</s>``) decode to nothing, as in sentencepiece. The space that
    ``add_dummy_prefix`` put before the text is dropped from the first piece;
    with ``remove_extra_whitespaces`` every leading ``▁`` is dropped until
    some text has been produced, as sentencepiece does.

    >>> SentencePiece().decode(["▁Hello", "▁wor", "ld", "<0xE9>", "<0xBE>", "<0x98>"])
    'Hello world龘'
    """

    type_name = "SentencePiece"

    def __init__(
        self, add_dummy_prefix: bool = True, remove_extra_whitespaces: bool = True,
        unk_piece: str | None = "<unk>", unk_surface: str = " \u2047 ", control: Iterable[str] = (),
    ) -> None:
        self.control = frozenset(control)
        self.add_dummy_prefix = bool(add_dummy_prefix)
        self.remove_extra_whitespaces = bool(remove_extra_whitespaces)
        self.unk_piece = unk_piece
        self.unk_surface = unk_surface

    def decode_chain(self, tokens: list[str]) -> list[str]:
        out: list[str] = []
        strip = self.add_dummy_prefix or self.remove_extra_whitespaces
        pending = bytearray()
        control = self.control
        for t in tokens:
            if t in control:
                continue
            b = byte_fallback_value(t)
            if b is not None:
                pending.append(b)
                continue
            if pending:
                text = _bytes_to_text_per_byte(bytes(pending))
                pending.clear()
                out.append(text)
                strip = strip and not text
            if t == self.unk_piece:
                out.append(self.unk_surface)
                strip = False
                continue
            consumed = False
            if strip and t.startswith("\u2581"):
                t = t[1:]
                consumed = not self.remove_extra_whitespaces
            text = t.replace("\u2581", " ")
            out.append(text)
            if consumed or text:
                strip = False
        if pending:
            out.append(_bytes_to_text_per_byte(bytes(pending)))
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": "SentencePiece", "add_dummy_prefix": self.add_dummy_prefix,
            "remove_extra_whitespaces": self.remove_extra_whitespaces,
            "unk_piece": self.unk_piece, "unk_surface": self.unk_surface,
            **({"control": sorted(self.control)} if self.control else {}),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "SentencePiece":
        control = _field(d, "control", (list, type(None)), None) or ()
        if not all(isinstance(c, str) for c in control):
            raise FileFormatError(f"decoder 'SentencePiece': field 'control' must be a list of strings, got {reprlib.repr(control)}")
        return cls(
            _field(d, "add_dummy_prefix", bool, True), _field(d, "remove_extra_whitespaces", bool, True),
            _field(d, "unk_piece", (str, type(None)), "<unk>"), _field(d, "unk_surface", str, " \u2047 "), control,
        )


class Sequence(ComponentSequence, Decoder):
    """Decoders applied one after another (``seq[i]`` is the i-th, as in HF)."""

    type_name = "Sequence"
    _items = "decoders"

    def __init__(self, decoders: Iterable[Decoder]) -> None:
        self.decoders = tuple(decoders)

    def decode_chain(self, tokens: list[str]) -> list[str]:
        for d in self.decoders:
            tokens = d.decode_chain(tokens)
        return tokens

    def to_dict(self) -> dict[str, Any]:
        return {"type": "Sequence", "decoders": [d.to_dict() for d in self.decoders]}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Sequence":
        items = d.get("decoders")
        if not isinstance(items, list):
            raise FileFormatError("decoder 'Sequence' needs a list field 'decoders'")
        return cls(DECODERS.from_dict(x) for x in items)


def _field(d: Mapping[str, Any], name: str, kind: Any, default: Any = ...) -> Any:
    return field(d, name, kind, default, stage="decoder")


def decoder_from_dict(data: Mapping[str, Any] | None) -> Decoder | None:
    """Rebuild a decoder from its HF tokenizer.json shape (``None`` stays ``None``)."""
    return None if data is None else DECODERS.from_dict(data)

"""How finely a tokenizer cuts a text, and loss per byte (Rust et al., 2021; Gao et al., 2020).

"Fertility" means nothing until its denominator is named. This
module reports each denominator separately, all on the same text:

* **UTF-8 bytes/token**: bytes of the text ÷ tokens. The byte count does not
  depend on the tokenizer, so this is the steadiest figure across tokenizers
  (across languages it still needs parallel text and several figures).
* **chars/token**: Unicode code points ÷ tokens. Intuitive, but emoji and
  combining sequences inflate or deflate it.
* **tokens/word**: tokens ÷ words, only comparable once the word splitter is
  declared. The default splitter is :data:`WHITESPACE`: runs of characters
  between Unicode whitespace (``str.split()``) or U+1361 ETHIOPIC WORDSPACE
  ``፡``, which separates words in traditional Amharic text. Chinese, Japanese, Thai, Lao, Khmer, Myanmar and Tibetan
  are written without spaces between words, so a whitespace split counts
  clauses there; for such text (most letters in those scripts) tokens/word is
  reported as ``None`` unless you pass your own splitter (e.g. a Chinese word
  segmenter), whose name is then reported with the figure.
* **UNK rate**: unknown-token ids ÷ tokens, for tokenizers that have an unknown
  token (WordPiece, Unigram, SentencePiece BPE); ``None`` for byte-level BPE,
  which cannot produce one.
* **UNK bytes**: the share of the text's UTF-8 bytes that went into unknown
  tokens. One ``[UNK]`` can swallow a whole word, so a low UNK rate can hide a
  text that is mostly lost; above :data:`UNKNOWN_DOMINATED` (half the bytes)
  bytes/token measures what the unknown token swallowed, not compression.
* **total tokens**: what training and inference actually pay for.

Token counts never include the tokens a tokenizer adds around a sequence
(``[CLS]``/``[SEP]``, ``<s>``): every tokenizer is run with
``encode_ordinary``, so special-token strings in the text are counted as the
ordinary text they are.

Bits per byte (Gao et al., 2020, "The Pile") makes losses comparable across tokenizers:
loss/token depends on how many tokens the text was cut into, the byte count of
the text does not. The same 4.0 nats over 8 bytes is 2.0 nats/token with
2 tokens and 1.0 with 4 tokens, but 0.7213 bits/byte either way.

>>> round(bits_per_byte(4.0, "abcdefgh"), 4)
0.7213
>>> bits_per_byte_from_token_nll([2.0, 2.0], "abcdefgh") == bits_per_byte_from_token_nll([1.0] * 4, "abcdefgh")
True
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from ..errors import ArgumentTypeError, EncodeInputError, InvalidArgumentError

__all__ = [
    "UNKNOWN_DOMINATED",
    "WHITESPACE",
    "TextMetrics",
    "WordSplitter",
    "bits_per_byte",
    "bits_per_byte_from_token_nll",
    "count_ids",
    "loss_per_token",
    "measure",
    "metrics_from_counts",
    "spaceless_share",
    "token_ids",
    "unk_id",
    "unknown_bytes",
]

#: A text is *unknown-dominated* under a tokenizer when more than this share of its
#: UTF-8 bytes went into unknown tokens.
UNKNOWN_DOMINATED = 0.5

# Scripts written without spaces between words (code point ranges, inclusive).
_SPACELESS_RANGES: tuple[tuple[int, int], ...] = (
    (0x0E00, 0x0E7F),  # Thai
    (0x0E80, 0x0EFF),  # Lao
    (0x0F00, 0x0FFF),  # Tibetan
    (0x1000, 0x109F),  # Myanmar
    (0x1780, 0x17FF),  # Khmer
    (0x3040, 0x309F),  # Hiragana
    (0x30A0, 0x30FF),  # Katakana
    (0x31F0, 0x31FF),  # Katakana phonetic extensions
    (0x3400, 0x4DBF),  # CJK unified ideographs extension A
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
    (0xFF66, 0xFF9F),  # halfwidth katakana
    (0x20000, 0x3FFFF),  # CJK extensions B and later (planes 2 and 3)
)


def _is_spaceless_letter(cp: int) -> bool:
    for lo, hi in _SPACELESS_RANGES:
        if cp < lo:
            return False
        if cp <= hi:
            return True
    return False


def spaceless_share(text: str) -> float:
    """Share of the letters of ``text`` that belong to scripts written without word spaces.

    Letters are code points for which ``str.isalpha()`` holds (Thai vowel signs
    and other marks are not counted either way). Han, kana, Thai, Lao, Khmer,
    Myanmar and Tibetan count as spaceless; Korean is written with spaces.

    >>> spaceless_share("人人有权")
    1.0
    >>> spaceless_share("hello 世界")
    0.2857142857142857
    >>> spaceless_share("123 ...")
    0.0
    """
    letters = spaceless = 0
    for ch in text:
        if ch.isalpha():
            letters += 1
            if _is_spaceless_letter(ord(ch)):
                spaceless += 1
    return spaceless / letters if letters else 0.0


@dataclass(frozen=True)
class WordSplitter:
    """A named way of counting words: tokens/word is meaningless without the name.

    ``skip_spaceless`` makes :func:`measure` report tokens/word as ``None`` for
    text written mostly in scripts without word spaces, where this splitter
    would count clauses rather than words.
    """

    name: str
    split: Callable[[str], Sequence[str]]
    skip_spaceless: bool = False
    description: str = ""

    def count(self, text: str) -> int:
        return len(self.split(text))


def _split_whitespace(text: str) -> list[str]:
    return text.replace("\u1361", " ").split()


#: The default splitter: maximal runs of characters that are neither Unicode
#: whitespace (``str.isspace``, including U+3000 IDEOGRAPHIC SPACE) nor U+1361
#: ETHIOPIC WORDSPACE.
WHITESPACE = WordSplitter(
    "whitespace",
    _split_whitespace,
    skip_spaceless=True,
    description="runs between Unicode whitespace or U+1361 ETHIOPIC WORDSPACE",
)


def _as_splitter(splitter: WordSplitter | Callable[[str], Sequence[str]] | str | None) -> WordSplitter:
    if splitter is None or splitter == "whitespace" or splitter == WHITESPACE.name:
        return WHITESPACE
    if isinstance(splitter, WordSplitter):
        return splitter
    if isinstance(splitter, str):
        raise InvalidArgumentError(f"unknown word splitter {splitter!r}: use 'whitespace' or pass a WordSplitter")
    if callable(splitter):
        name = getattr(splitter, "__name__", type(splitter).__name__)
        return WordSplitter(name, splitter, description=f"the words {name}() returns")
    raise ArgumentTypeError(f"word_splitter must be a WordSplitter or a callable, not {type(splitter).__name__}")


@dataclass(frozen=True)
class TextMetrics:
    """Token counts of one text under one tokenizer, and the ratios derived from them.

    ``bytes`` counts the UTF-8 bytes and ``chars`` the code points of the text
    as given, before any normalization the tokenizer applies. Ratios are
    ``None`` where the denominator is zero or the figure does not apply
    (``unk_rate`` without an unknown token, ``tokens_per_word`` for spaceless
    scripts under the whitespace splitter). ``unk_bytes`` counts the bytes of the
    text inside unknown tokens (``None`` without an unknown token, or when only
    the number of unknown ids is known).
    """

    tokens: int
    bytes: int
    chars: int
    words: int
    word_splitter: str
    unk: int | None
    spaceless: bool
    unk_bytes: int | None = None

    @property
    def bytes_per_token(self) -> float | None:
        """UTF-8 bytes ÷ tokens: the tokenizer-independent compression figure."""
        return self.bytes / self.tokens if self.tokens else None

    @property
    def chars_per_token(self) -> float | None:
        """Code points ÷ tokens."""
        return self.chars / self.tokens if self.tokens else None

    @property
    def tokens_per_byte(self) -> float | None:
        """Tokens ÷ UTF-8 bytes: fertility per byte (1.0 for a byte tokenizer)."""
        return self.tokens / self.bytes if self.bytes else None

    @property
    def tokens_per_word(self) -> float | None:
        """Tokens ÷ words under :attr:`word_splitter`; ``None`` for spaceless scripts."""
        if self.spaceless or not self.words:
            return None
        return self.tokens / self.words

    @property
    def unk_rate(self) -> float | None:
        """Unknown-token ids ÷ tokens; ``None`` when the tokenizer has no unknown token."""
        if self.unk is None:
            return None
        return self.unk / self.tokens if self.tokens else 0.0

    @property
    def unk_byte_share(self) -> float | None:
        """Bytes inside unknown tokens ÷ bytes of the text; ``None`` when not measured."""
        if self.unk_bytes is None:
            return None
        return self.unk_bytes / self.bytes if self.bytes else 0.0

    @property
    def unknown_dominated(self) -> bool:
        """More than :data:`UNKNOWN_DOMINATED` of the text's bytes went into unknown tokens."""
        share = self.unk_byte_share
        return share is not None and share > UNKNOWN_DOMINATED

    def __add__(self, other: TextMetrics) -> TextMetrics:
        """Sum of counts: the micro-average over several texts."""
        if not isinstance(other, TextMetrics):
            return NotImplemented
        if other.word_splitter != self.word_splitter:
            raise InvalidArgumentError(f"cannot add word counts from {self.word_splitter!r} and {other.word_splitter!r}")
        unk = None if self.unk is None or other.unk is None else self.unk + other.unk
        unk_bytes = None if self.unk_bytes is None or other.unk_bytes is None else self.unk_bytes + other.unk_bytes
        return TextMetrics(
            tokens=self.tokens + other.tokens,
            bytes=self.bytes + other.bytes,
            chars=self.chars + other.chars,
            words=self.words + other.words,
            word_splitter=self.word_splitter,
            unk=unk,
            spaceless=self.spaceless and other.spaceless,
            unk_bytes=unk_bytes,
        )

    def to_dict(self) -> dict[str, Any]:
        """The counts and every ratio, JSON-able."""
        d = asdict(self)
        for name in ("bytes_per_token", "chars_per_token", "tokens_per_word", "unk_rate", "unk_byte_share",
                     "unknown_dominated"):
            d[name] = getattr(self, name)
        return d


def unk_id(tokenizer: Any) -> int | None:
    """The id of the tokenizer's unknown token, or ``None`` if it cannot produce one.

    Byte-level BPE (:class:`tokenforge.Tokenizer`) has none; WordPiece, Unigram,
    SentencePiece BPE and WordLevel pipelines take it from their model.
    """
    model = getattr(tokenizer, "model", None)
    uid = getattr(model, "unk_id", None)
    if isinstance(uid, int) and uid >= 0:
        return uid
    unk = getattr(model, "unk_token", None)  # WordLevel names its unknown token only
    if isinstance(unk, str) and hasattr(model, "token_to_id"):
        uid = model.token_to_id(unk)
        if isinstance(uid, int) and uid >= 0:
            return uid
    return None


def token_ids(tokenizer: Any, text: str) -> list[int]:
    """Ids of ``text`` without added sequence tokens, special-token strings read as text.

    A :class:`tokenforge.Tokenizer` is run through ``encode_ordinary`` (no
    post-processor, so no ``[CLS]``/``<s>``); any other object with an
    ``encode(text)`` method (a tiktoken ``Encoding``, for comparison) is called as is.
    """
    if hasattr(tokenizer, "encode_ordinary"):
        return list(tokenizer.encode_ordinary(text))
    return list(tokenizer.encode(text))


def metrics_from_counts(
    n_tokens: int,
    text: str,
    *,
    n_unk: int | None = None,
    word_splitter: WordSplitter | Callable[[str], Sequence[str]] | str | None = None,
    n_unk_bytes: int | None = None,
) -> TextMetrics:
    """Metrics of ``text`` cut into ``n_tokens`` tokens, ``n_unk`` of them unknown,
    holding ``n_unk_bytes`` of its UTF-8 bytes.

    A character tokenizer on two texts (30 code points, 43 bytes):

    >>> a = metrics_from_counts(24, "def add(x): return x + 1")
    >>> b = metrics_from_counts(6, "把变量加一🙂")
    >>> round((a + b).tokens_per_byte, 3)
    0.698
    """
    splitter = _as_splitter(word_splitter)
    spaceless = splitter.skip_spaceless and spaceless_share(text) > 0.5
    return TextMetrics(
        tokens=int(n_tokens),
        bytes=len(text.encode("utf-8", "surrogatepass")),
        chars=len(text),
        words=splitter.count(text),
        word_splitter=splitter.name,
        unk=None if n_unk is None else int(n_unk),
        spaceless=spaceless,
        unk_bytes=None if n_unk_bytes is None else int(n_unk_bytes),
    )


def count_ids(ids: Iterable[int], unk: int | None) -> tuple[int, int | None]:
    """(number of ids, number equal to ``unk``); the second is ``None`` when ``unk`` is."""
    n = n_unk = 0
    for i in ids:
        n += 1
        if i == unk:
            n_unk += 1
    return n, (None if unk is None else n_unk)


def measure(
    tokenizer: Any,
    text: str,
    *,
    word_splitter: WordSplitter | Callable[[str], Sequence[str]] | str | None = None,
) -> TextMetrics:
    """Encode ``text`` once and report bytes/token, chars/token, tokens/word, UNK rate
    and the share of bytes in unknown tokens (the text is encoded again, with offsets,
    only when it has unknown tokens: that pass runs the pipeline in Python, about ten
    times the time of the encode itself for a WordPiece tokenizer).

    >>> import tokenforge
    >>> m = measure(tokenforge.get_encoding("cl100k_base"), "hello world")
    >>> m.tokens, m.bytes, m.bytes_per_token, m.tokens_per_word, m.unk_rate
    (2, 11, 5.5, 1.0, None)
    """
    uid = unk_id(tokenizer)
    n, n_unk = count_ids(token_ids(tokenizer, text), uid)
    n_unk_bytes = None if n_unk is None else 0
    if n_unk:
        n_unk_bytes = unknown_bytes(tokenizer, text, uid)
    return metrics_from_counts(n, text, n_unk=n_unk, word_splitter=word_splitter, n_unk_bytes=n_unk_bytes)


def unknown_bytes(tokenizer: Any, text: str, unk: int | None = None) -> int | None:
    """How many UTF-8 bytes of ``text`` end up inside unknown tokens (``encode_ordinary``'s
    tokens, located by :meth:`~tokenforge.Tokenizer.encode_with_offsets`); ``None`` for a
    tokenizer without an unknown token or without offsets.

    >>> import tokenforge
    >>> bert = tokenforge.bert_wordpiece({"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, "[MASK]": 4, "a": 5})
    >>> unknown_bytes(bert, "a zzz 中")   # "zzz" and "中" (3 bytes each) are [UNK]
    6
    """
    unk = unk_id(tokenizer) if unk is None else unk
    if unk is None or not hasattr(tokenizer, "encode_with_offsets"):
        return None
    spans = tokenizer.encode_with_offsets(text, disallowed_special=(), add_special_tokens=False)
    covered = sorted((s.byte_start, s.byte_end) for s in spans if s.id == unk and s.byte_end > s.byte_start)
    total = 0
    reach = 0  # fused or overlapping spans are counted once
    for start, end in covered:
        start = max(start, reach)
        if end > start:
            total += end - start
            reach = end
    return total


def _byte_count(text: str | bytes | bytearray) -> int:
    if isinstance(text, (bytes, bytearray)):
        return len(text)
    if isinstance(text, str):
        return len(text.encode("utf-8"))
    raise EncodeInputError(f"text must be str or bytes, not {type(text).__name__}")


def bits_per_byte(total_nll_nats: float, text: str | bytes) -> float:
    """Total negative log-likelihood (nats) per byte of text, in bits (Gao et al., 2020).

    ``BPB = total_nll_nats / (B · ln 2)`` where ``B`` is the number of bytes in
    the UTF-8 encoding of ``text`` exactly as given: the original text, before
    any normalization the tokenizer applies, with no BOS/EOS or special tokens.
    Pass ``bytes`` to count another stream; when a
    tokenizer normalizes lossily (NFKC), both sides of a comparison must score
    the same post-normalization stream, so pass that stream to both.

    4.0 nats over 8 bytes is 0.7213 bits/byte whether the text was 2 tokens
    or 4.

    >>> bits_per_byte(4.0, "abcdefgh") == 4.0 / (8 * math.log(2))
    True
    >>> round(bits_per_byte(4.0, "中文ab"), 4)   # 3 + 3 + 1 + 1 bytes
    0.7213
    """
    n_bytes = _byte_count(text)
    if n_bytes == 0:
        raise InvalidArgumentError("bits per byte of an empty text is undefined")
    return total_nll_nats / (n_bytes * math.log(2))


def bits_per_byte_from_token_nll(token_nll_nats: Iterable[float], text: str | bytes) -> float:
    """Bits per byte from each token's NLL in nats, ``-log p(t_i | t_<i)``.

    Sums the per-token losses (correctly rounded, :func:`math.fsum`) and calls
    :func:`bits_per_byte`; the byte stream is the same: UTF-8 of ``text`` as
    given, before normalization. The number of tokens does not matter, only
    their total:

    >>> round(bits_per_byte_from_token_nll([2.0, 2.0], "abcdefgh"), 4)
    0.7213
    >>> round(bits_per_byte_from_token_nll([1.0, 1.0, 1.0, 1.0], "abcdefgh"), 4)
    0.7213
    """
    return bits_per_byte(math.fsum(token_nll_nats), text)


def loss_per_token(token_nll_nats: Sequence[float]) -> float:
    """Mean NLL per token in nats: the figure that is NOT comparable across tokenizers.

    >>> loss_per_token([2.0, 2.0]), loss_per_token([1.0] * 4)
    (2.0, 1.0)
    """
    if not token_nll_nats:
        raise InvalidArgumentError("loss per token of zero tokens is undefined")
    return math.fsum(token_nll_nats) / len(token_nll_nats)

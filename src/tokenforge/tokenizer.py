"""The composed pipeline: special tokens, pre-tokenizer, BPE model, decoder.

``Tokenizer`` is immutable once built: every table is private and exposed
read-only, so one instance can be shared across threads and pickled. Its only
mutable state is a memo of recently encoded pieces, which never changes a
result.

Encoding follows tiktoken's single loop: split off the allowed special
tokens, cut each ordinary segment into pieces with the split pattern, look
each piece up whole, and otherwise merge its bytes by rank
(:mod:`tokenforge.models.bpe`).

Python strings may hold lone surrogates (``"\\ud800"``), which have no UTF-8
form. Like tiktoken, encoding replaces each one with U+FFFD (so
``encode("\\ud800") == encode("\\ufffd")``); nothing else is ever altered.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from . import _native, bytelevel
from .decoders import StreamDecoder, bytes_to_text, check_errors
from .errors import (
    EncodeInputError,
    FileFormatError,
    SpecialTokenError,
    UnknownIdError,
    UnknownTokenError,
)
from .models.bpe import BPE, _check_dropout
from .pretokenizers import RegexSplit, pre_tokenizer_from_dict
from .specials import SpecialPolicy, SpecialTokens

if TYPE_CHECKING:
    from .analysis.offsets import TokenSpan

#: Pieces up to this many characters are memoised.
_CACHE_PIECE_CHARS = 64
#: The memo is cleared when it holds this many pieces.
_CACHE_LIMIT = 1 << 17
#: ``encode_iterable`` keeps this many trailing pieces back until more text arrives.
_HOLD_PIECES = 2
#: ``encode_iterable`` gathers at least this many characters before cutting.
_STREAM_MIN_CHARS = 1 << 14


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
        return False
    except UnicodeEncodeError:
        return True


def _fix_surrogates(text: str) -> str:
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


class Tokenizer:
    """A byte-level BPE tokenizer: split pattern + ranked tokens + special tokens.

    >>> import tokenforge
    >>> enc = tokenforge.get_encoding("cl100k_base")
    >>> enc.encode("hello world")
    [15339, 1917]
    >>> enc.decode([15339, 1917])
    'hello world'
    >>> enc.encode("<|endoftext|>", allowed_special="all")
    [100257]
    """

    __slots__ = (
        "_model", "_pre", "_specials", "_name", "_decoder", "_cache", "_core", "_native_split", "_backend", "__weakref__"
    )

    def __init__(
        self,
        model: BPE,
        *,
        pre_tokenizer: RegexSplit | str | None = "gpt2",
        special_tokens: Mapping[str, int] | None = None,
        name: str | None = None,
        backend: str = "auto",
    ) -> None:
        if not isinstance(model, BPE):
            raise TypeError(f"model must be a tokenforge BPE model, got {type(model).__name__}")
        if isinstance(pre_tokenizer, str):
            pre_tokenizer = RegexSplit(pre_tokenizer)
        specials = SpecialTokens(special_tokens)
        decoder: dict[int, bytes] = model._vocab.copy()
        for tok, i in specials.ids.items():
            if i in decoder:
                raise SpecialTokenError(
                    f"special token {tok!r} has id {i}, which the model already gives to {decoder[i]!r}"
                )
            decoder[i] = tok.encode("utf-8")
        self._model = model
        self._pre = pre_tokenizer
        self._specials = specials
        self._name = name
        self._decoder = decoder
        self._cache: dict[str, tuple[int, ...]] = {}
        self._backend = backend
        native = _native.core(backend)
        self._core = None
        self._native_split = False
        # The core keeps an id -> bytes array; ids spread far beyond the vocabulary size
        # (a hand-made rank file) would make it huge, so such tokenizers stay in Python.
        if native is not None and max(decoder) < 2 * len(decoder) + 65536:
            scanner = -1
            if pre_tokenizer is not None and pre_tokenizer.name in _native.SCANNERS:
                scanner = _native.SCANNERS[pre_tokenizer.name]
            self._core = native.CoreBPE(model._ranks, decoder, scanner)  # the core copies what it needs
            self._native_split = scanner >= 0

    # ------------------------------------------------------------------ info
    @property
    def name(self) -> str | None:
        return self._name

    @property
    def model(self) -> BPE:
        return self._model

    @property
    def pre_tokenizer(self) -> RegexSplit | None:
        return self._pre

    @property
    def pattern(self) -> str | None:
        """The split regex (``None`` when text is not pre-tokenized)."""
        return None if self._pre is None else self._pre.pattern

    @property
    def special_tokens(self) -> Mapping[str, int]:
        """``{special_string: id}`` (read-only)."""
        return self._specials.ids

    @property
    def special_tokens_set(self) -> frozenset[str]:
        return self._specials.all

    @property
    def eot_token(self) -> int | None:
        """The id of ``<|endoftext|>``, if registered."""
        return self._specials.ids.get("<|endoftext|>")

    @property
    def mergeable_ranks(self) -> Mapping[bytes, int]:
        """tiktoken's ``{token_bytes: rank}`` view of the model."""
        return self._model.ranks

    @property
    def max_token_value(self) -> int:
        return max(self._decoder)

    @property
    def n_vocab(self) -> int:
        """Size of the id space: largest id + 1 (tiktoken's ``n_vocab``)."""
        return self.max_token_value + 1

    def __len__(self) -> int:
        """Number of tokens, ordinary and special (ids may have holes)."""
        return len(self._decoder)

    def token_to_id(self, token: str | bytes) -> int:
        """Id of a token given as raw ``bytes``, as a special-token string, or in
        the GPT-2 printable form that ``vocab.json`` uses (``"Ġthe"``)."""
        if isinstance(token, (bytes, bytearray)):
            r = self._model.ranks.get(bytes(token))
        elif isinstance(token, str):
            r = self._specials.ids.get(token)
            if r is None:
                try:
                    r = self._model.ranks.get(bytelevel.decode_string(token))
                except KeyError:
                    r = None
        else:
            raise EncodeInputError(f"token must be str or bytes, got {type(token).__name__}")
        if r is None:
            raise UnknownTokenError(f"token {token!r} is not in the vocabulary")
        return r

    def id_to_token(self, token_id: int) -> str:
        """The token of ``token_id`` in ``vocab.json`` form (special tokens as they are)."""
        sp = self._specials.by_id.get(token_id)
        if sp is not None:
            return sp
        return bytelevel.encode_bytes(self.decode_single_token_bytes(token_id))

    # -------------------------------------------------------------- encoding
    def encode_ordinary(self, text: str) -> list[int]:
        """Encode ``text`` with special-token strings treated as ordinary text.

        >>> import tokenforge
        >>> tokenforge.get_encoding("gpt2").encode_ordinary("<|endoftext|>")[:3]
        [27, 91, 437]
        """
        _check_text(text)
        out: list[int] = []
        try:
            self._encode_segment(text, out)
        except UnicodeEncodeError:
            out = []
            self._encode_segment(_fix_surrogates(text), out)
        return out

    def encode(
        self,
        text: str,
        *,
        allowed_special: SpecialPolicy = frozenset(),
        disallowed_special: SpecialPolicy = "all",
        dropout: float | None = None,
        seed: int | None = None,
    ) -> list[int]:
        """Encode ``text`` to ids, with tiktoken's special-token policy.

        By default every special-token string in ``text`` raises
        :class:`~tokenforge.errors.SpecialTokenError`; ``allowed_special``
        ("all" or a set) encodes those strings as special ids, and
        ``disallowed_special=()`` encodes the rest as ordinary text.

        ``dropout=p`` is BPE-dropout (seed 000 §2.3): each merge is skipped
        with probability ``p``, drawing from ``random.Random(seed)``, so the same
        seed gives the same ids; ``p=0`` is the ordinary encoding.

        >>> import tokenforge
        >>> enc = tokenforge.get_encoding("gpt2")
        >>> ids = enc.encode(" tokenization", dropout=1.0, seed=0)  # every merge blocked: one id per byte
        >>> len(ids), enc.decode(ids)
        (13, ' tokenization')
        >>> enc.encode(" tokenization", dropout=0.3, seed=7) == enc.encode(" tokenization", dropout=0.3, seed=7)
        True
        """
        _check_text(text)
        allowed, disallowed = self._specials.resolve(allowed_special, disallowed_special)
        if dropout is not None and _check_dropout(dropout) > 0.0:
            return self._encode_dropout(text, allowed, disallowed, float(dropout), seed)
        out: list[int] = []
        try:
            self._encode_checked(text, allowed, disallowed, out)
        except UnicodeEncodeError:
            out = []
            self._encode_checked(_fix_surrogates(text), allowed, disallowed, out)
        return out

    def _encode_dropout(
        self, text: str, allowed: frozenset[str], disallowed: frozenset[str], p: float, seed: int | None
    ) -> list[int]:
        """The Python path with BPE-dropout: no memo, no whole-piece shortcut."""
        import random

        if disallowed:
            self._specials.check(text, disallowed)
        text = _fix_surrogates(text) if _has_surrogate(text) else text
        rng = random.Random(seed)
        out: list[int] = []
        for segment, special_id in self._specials.split(text, allowed):
            if special_id is not None:
                out.append(special_id)
                continue
            pieces = [segment] if self._pre is None else self._pre.split(segment)
            for piece in pieces:
                out.extend(self._model.encode_piece(piece.encode("utf-8"), dropout=p, rng=rng))
        return out

    def encode_batch(
        self,
        texts: Sequence[str],
        *,
        num_threads: int | None = None,
        allowed_special: SpecialPolicy = frozenset(),
        disallowed_special: SpecialPolicy = "all",
    ) -> list[list[int]]:
        """Encode each text; equal to ``[encode(t) for t in texts]``.

        With the native core, texts without allowed specials are encoded on
        ``num_threads`` threads (default: every core) with the GIL released.
        """
        texts, allowed, disallowed = self._batch_args("encode_batch", texts, allowed_special, disallowed_special)
        out = self._native_batch(self._core.encode_ordinary_batch if self._core else None, texts, allowed, num_threads)
        if out is not None:
            return out
        return [self.encode(t, allowed_special=allowed, disallowed_special=disallowed) for t in texts]

    def _batch_args(self, method: str, texts, allowed_special, disallowed_special):
        """Validate a batch: a sequence of str, none holding a disallowed special."""
        if isinstance(texts, str):
            raise EncodeInputError(f"{method} takes a sequence of str, not one str; use encode()")
        texts = list(texts)
        allowed, disallowed = self._specials.resolve(allowed_special, disallowed_special)
        for n, t in enumerate(texts):
            if not isinstance(t, str):
                raise EncodeInputError(f"{method} expects str items; item {n} is {type(t).__name__}")
            if disallowed:
                self._specials.check(t, disallowed)
        return texts, allowed, disallowed

    def _native_batch(self, call, texts: list[str], allowed: frozenset[str], num_threads: int | None):
        """Run a native batch call on threads, or return None when the per-text path must
        serve (no core, a custom pattern, allowed specials, or a lone surrogate to replace)."""
        if call is None or not self._native_split or allowed:
            return None
        try:
            return call(texts, num_threads or os.cpu_count() or 1)
        except UnicodeEncodeError:
            return None

    def encode_ordinary_batch(self, texts: Sequence[str], *, num_threads: int | None = None) -> list[list[int]]:
        """``encode_batch`` with every special-token string treated as text."""
        if isinstance(texts, str):
            raise EncodeInputError("encode_ordinary_batch takes a sequence of str, not one str")
        return self.encode_batch(texts, num_threads=num_threads, disallowed_special=())

    def encode_batch_to_numpy(
        self,
        texts: Sequence[str],
        *,
        num_threads: int | None = None,
        allowed_special: SpecialPolicy = frozenset(),
        disallowed_special: SpecialPolicy = "all",
    ):
        """Encode many texts into one flat ``uint32`` array plus ``int64`` offsets:
        text ``k`` is ``ids[offsets[k]:offsets[k + 1]]``. No Python object is made per
        token, so this is the fastest way to encode a corpus.

        >>> import tokenforge
        >>> ids, offsets = tokenforge.get_encoding("gpt2").encode_batch_to_numpy(["hello", "hello world"])
        >>> ids[offsets[1]:offsets[2]].tolist()
        [31373, 995]
        """
        import numpy as np

        texts, allowed, disallowed = self._batch_args("encode_batch_to_numpy", texts, allowed_special, disallowed_special)
        flat = self._native_batch(self._core.encode_ordinary_batch_flat if self._core else None, texts, allowed, num_threads)
        if flat is not None:
            ids, offsets = flat
            return np.frombuffer(ids, dtype=np.uint32), np.frombuffer(offsets, dtype=np.uint64).astype(np.int64)
        lists = self.encode_batch(texts, num_threads=num_threads, allowed_special=allowed, disallowed_special=disallowed)
        offsets = np.zeros(len(lists) + 1, dtype=np.int64)
        np.cumsum([len(x) for x in lists], out=offsets[1:])
        ids = np.fromiter((i for x in lists for i in x), dtype=np.uint32, count=int(offsets[-1]))
        return ids, offsets

    def encode_to_numpy(
        self,
        text: str,
        *,
        dtype: str = "uint32",
        allowed_special: SpecialPolicy = frozenset(),
        disallowed_special: SpecialPolicy = "all",
    ):
        """Encode to a numpy array (``uint32``, or ``uint16`` when every id fits),
        skipping the Python list: the fast path for corpus encoding."""
        import numpy as np

        if dtype not in ("uint32", "uint16"):
            raise ValueError(f"dtype must be 'uint32' or 'uint16', got {dtype!r}")
        if dtype == "uint16" and self.max_token_value > 0xFFFF:
            raise ValueError(f"ids of this tokenizer go up to {self.max_token_value}, which does not fit in uint16")
        _check_text(text)
        allowed, disallowed = self._specials.resolve(allowed_special, disallowed_special)
        if self._core is not None and self._native_split and not allowed:
            if disallowed:
                self._specials.check(text, disallowed)
            try:
                arr = np.frombuffer(self._core.encode_ordinary_u32(text), dtype=np.uint32)
            except UnicodeEncodeError:
                arr = np.frombuffer(self._core.encode_ordinary_u32(_fix_surrogates(text)), dtype=np.uint32)
        else:
            arr = np.asarray(
                self.encode(text, allowed_special=allowed, disallowed_special=disallowed), dtype=np.uint32
            )
        return arr.astype(np.uint16) if dtype == "uint16" else arr

    def encode_iterable(
        self,
        iterable: Iterable[str],
        *,
        allowed_special: SpecialPolicy = frozenset(),
        disallowed_special: SpecialPolicy = "all",
    ) -> Iterator[int]:
        """Lazily encode a stream of strings (lines of a file, chunks of a socket).

        Yields exactly ``encode("".join(iterable))``, holding back only the
        text whose pieces could still change: the last few pieces of the
        split pattern and a possible prefix of a special token. Memory does
        not grow with the length of the stream (only with its longest piece).

        >>> import io, tokenforge
        >>> enc = tokenforge.get_encoding("gpt2")
        >>> list(enc.encode_iterable(io.StringIO("hello\\nworld"))) == enc.encode("hello\\nworld")
        True
        """
        if isinstance(iterable, str):
            iterable = (iterable,)
        allowed, disallowed = self._specials.resolve(allowed_special, disallowed_special)
        watch = allowed | disallowed
        hold_chars = max(self._specials.max_len - 1, 0) if watch else 0
        pending: list[str] = []
        pending_len = 0
        threshold = _STREAM_MIN_CHARS
        for n, chunk in enumerate(iterable):
            if not isinstance(chunk, str):
                raise EncodeInputError(
                    f"encode_iterable expects str items; item {n} is {type(chunk).__name__}"
                )
            pending.append(chunk)
            pending_len += len(chunk)
            if pending_len < threshold:
                continue
            buf = "".join(pending)
            cut = self._stream_cut(buf, watch, hold_chars)
            if cut <= 0:
                pending = [buf]
                threshold = 2 * pending_len
                continue
            head, tail = buf[:cut], buf[cut:]
            yield from self.encode(head, allowed_special=allowed, disallowed_special=disallowed)
            pending = [tail]
            pending_len = len(tail)
            threshold = max(_STREAM_MIN_CHARS, 2 * pending_len)
        if pending_len:
            yield from self.encode("".join(pending), allowed_special=allowed, disallowed_special=disallowed)

    def _stream_cut(self, buf: str, watch: frozenset[str], hold_chars: int) -> int:
        """Largest position p such that encoding ``buf[:p]`` now and the rest later
        gives the ids of encoding everything at once (0 if there is none yet).

        A special-token match that starts before ``limit`` cannot change when
        more text arrives (any longer or earlier match would already fit in
        ``buf``), so cutting before or after it is safe. Inside the open last
        segment, the split pattern's pieces are final except for the last
        ``_HOLD_PIECES``: every named pattern decides a piece by looking at most
        into the piece after it. The cut also needs a non-whitespace character
        before it, because a whitespace run that ends the text is one piece
        (``\\s++$``) where mid-text it may be split in two (cl100k: ``"  1"`` is
        ``" "``, ``" "``, ``"1"``, but ``"  "`` alone is one piece).
        """
        limit = len(buf) - hold_chars
        best = 0
        seg_start = 0
        if watch:
            from .specials import _cached_regex

            for m in _cached_regex(watch).finditer(buf):
                if m.start() >= limit:
                    break
                best = m.start()
                seg_start = m.end()
            if seg_start > limit:
                return best
            best = seg_start
        if self._pre is not None and seg_start < limit:
            pieces = self._pre.split(buf[seg_start:])
            pos = len(buf) - sum(map(len, pieces[len(pieces) - _HOLD_PIECES :]))
            for k in range(len(pieces) - 1 - _HOLD_PIECES, -1, -1):
                if pos <= seg_start:
                    break
                if pos <= limit and not buf[pos - 1].isspace():
                    return pos
                pos -= len(pieces[k])
        return best

    def _encode_checked(
        self, text: str, allowed: frozenset[str], disallowed: frozenset[str], out: list[int]
    ) -> None:
        if disallowed:
            self._specials.check(text, disallowed)
        if not allowed:
            self._encode_segment(text, out)
            return
        for segment, special_id in self._specials.split(text, allowed):
            if special_id is None:
                self._encode_segment(segment, out)
            else:
                out.append(special_id)

    def _encode_segment(self, text: str, out: list[int]) -> None:
        if not text:
            return
        model = self._model
        core = self._core
        if core is not None and self._native_split:
            out.extend(core.encode_ordinary(text))
            return
        if self._pre is None:
            data = text.encode("utf-8")
            out.extend(core.encode_piece(data) if core is not None else model.encode_piece(data))
            return
        cache = self._cache
        cache_get = cache.get
        ranks_get = model._ranks.get
        encode_piece = model.encode_piece if core is None else core.encode_piece
        append = out.append
        extend = out.extend
        for piece in self._pre.split(text):
            ids = cache_get(piece)
            if ids is None:
                data = piece.encode("utf-8")
                r = ranks_get(data)
                if r is not None:
                    append(r)
                    ids = (r,)
                else:
                    ids = tuple(encode_piece(data))
                    extend(ids)
                if len(piece) <= _CACHE_PIECE_CHARS:
                    if len(cache) >= _CACHE_LIMIT:
                        cache.clear()
                    cache[piece] = ids
            elif len(ids) == 1:
                append(ids[0])
            else:
                extend(ids)

    def encode_with_offsets(self, text: str, **kwargs: Any) -> "list[TokenSpan]":
        """Each token of ``encode(text, **kwargs)`` with its span in ``text``: code points
        and UTF-8 bytes; a token holding part of a character is marked ``partial``
        (seed 000 §5.6). See :func:`tokenforge.analysis.offsets.encode_with_offsets`."""
        from .analysis.offsets import encode_with_offsets

        return encode_with_offsets(self, text, **kwargs)

    def encode_single_token(self, token: str | bytes) -> int:
        """The id of text (or bytes) that is exactly one token; else UnknownTokenError."""
        if isinstance(token, str):
            sp = self._specials.ids.get(token)
            if sp is not None:
                return sp
            token = token.encode("utf-8", "surrogatepass")
        if not isinstance(token, (bytes, bytearray)):
            raise EncodeInputError(f"token must be str or bytes, got {type(token).__name__}")
        r = self._model.ranks.get(bytes(token))
        if r is None:
            raise UnknownTokenError(f"{token!r} is not a single token")
        return r

    # -------------------------------------------------------------- decoding
    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        """Concatenated bytes of ``ids`` (special tokens as their UTF-8 strings)."""
        decoder = self._decoder
        ids = ids if isinstance(ids, (list, tuple)) else list(ids)
        if self._core is not None:
            try:
                return self._core.decode_bytes(ids)
            except LookupError as exc:
                pos = exc.args[0]
                raise UnknownIdError(self._unknown_id_message(ids[pos], pos)) from None
        try:
            return b"".join([decoder[i] for i in ids])
        except (KeyError, TypeError):
            for pos, i in enumerate(ids):
                try:
                    decoder[i]
                except (KeyError, TypeError):
                    raise UnknownIdError(self._unknown_id_message(i, pos)) from None
            raise

    def decode(self, ids: Iterable[int], errors: str = "replace") -> str:
        """Decode ``ids`` to text. Bytes that are not valid UTF-8 become U+FFFD
        under ``errors="replace"`` and raise :class:`DecodeError` under ``"strict"``."""
        check_errors(errors)
        return bytes_to_text(self.decode_bytes(ids), errors)

    def decode_single_token_bytes(self, token_id: int) -> bytes:
        try:
            return self._decoder[token_id]
        except (KeyError, TypeError):
            raise UnknownIdError(self._unknown_id_message(token_id, None)) from None

    def decode_tokens_bytes(self, ids: Iterable[int]) -> list[bytes]:
        return [self.decode_single_token_bytes(i) for i in ids]

    def stream_decoder(self, errors: str = "replace") -> StreamDecoder:
        """A :class:`StreamDecoder` that turns ids into text as they arrive."""
        return StreamDecoder(self.decode_single_token_bytes, errors)

    def decode_stream(self, ids: Iterable[int], errors: str = "replace") -> Iterator[str]:
        """Yield text chunks for a stream of ids, never splitting a character."""
        return self.stream_decoder(errors).decode_iter(ids)

    def _unknown_id_message(self, token_id: Any, pos: int | None) -> str:
        where = "" if pos is None else f" at position {pos}"
        if not isinstance(token_id, int) or isinstance(token_id, bool):
            try:
                import operator

                operator.index(token_id)
            except TypeError:
                return f"token id{where} must be an int, got {type(token_id).__name__} {token_id!r}"
        return f"unknown token id {token_id!r}{where}: ids of this tokenizer lie in 0..{self.max_token_value}" + (
            "" if len(self._decoder) == self.n_vocab else " (with holes)"
        )

    # ------------------------------------------------------------ persistence
    def to_dict(self) -> dict[str, Any]:
        """The components as plain data; see :mod:`tokenforge.formats.native`."""
        return {
            "name": self._name,
            "pre_tokenizer": None if self._pre is None else self._pre.to_dict(),
            "model": self._model.to_dict(),
            "special_tokens": dict(sorted(self._specials.ids.items(), key=lambda kv: kv[1])),
            "decoder": {"type": "byte_level"},
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Tokenizer":
        return cls(
            BPE.from_dict(data["model"]),
            pre_tokenizer=pre_tokenizer_from_dict(data.get("pre_tokenizer")),
            special_tokens=data.get("special_tokens") or {},
            name=data.get("name"),
        )

    def save(self, path: str, format: str = "tokenforge") -> None:
        """Write the tokenizer atomically. ``format``: ``"tokenforge"`` (one JSON
        file), ``"tiktoken"`` (a rank file; pattern and specials are not part of
        it) or ``"gpt2"`` (``path`` is a directory that gets ``vocab.json`` and
        ``merges.txt``)."""
        from .formats import save

        save(self, path, format=format)

    def to_tiktoken(self):
        """A live ``tiktoken.Encoding`` with the same ranks, pattern and specials
        (needs ``tiktoken`` installed; tokenforge itself never imports it otherwise)."""
        try:
            import tiktoken
        except ImportError:
            raise ImportError("to_tiktoken() needs the tiktoken package: pip install tiktoken") from None
        if self._pre is None:
            raise FileFormatError("tiktoken always splits text with a pattern; this tokenizer has none")
        if len(set(self._model.vocab.values())) != len(self._model.vocab):
            raise FileFormatError("two ids share the same bytes, which tiktoken's ranks cannot express")
        return tiktoken.Encoding(
            self._name or "tokenforge",
            pat_str=self.pattern,
            mergeable_ranks=dict(self._model.ranks),
            special_tokens=dict(self._specials.ids),
        )

    def to_hf(self):
        """A live HF ``tokenizers.Tokenizer`` giving the same ids (needs ``tokenizers``)."""
        from .formats.hf_json import to_hf_live

        return to_hf_live(self)

    def __reduce__(self):
        return (
            _rebuild,
            (
                dict(self._model.vocab),
                self._model.merges,
                None if self._pre is None else self._pre.to_dict(),
                dict(self._specials.ids),
                self._name,
                self._backend,
            ),
        )

    def __repr__(self) -> str:
        pat = None if self._pre is None else (self._pre.name or "custom")
        return (
            f"<Tokenizer {self._name or 'unnamed'!r}: {len(self)} tokens, "
            f"{len(self._specials)} special, pattern={pat!r}>"
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Tokenizer):
            return NotImplemented
        return (
            self._decoder == other._decoder
            and self._pre == other._pre
            and self._specials.ids == other._specials.ids
        )

    __hash__ = None  # type: ignore[assignment]


def _rebuild(vocab, merges, pre, specials, name, backend="auto") -> Tokenizer:
    return Tokenizer(
        BPE(vocab, merges), pre_tokenizer=pre_tokenizer_from_dict(pre), special_tokens=specials, name=name, backend=backend
    )


def _check_text(text: object) -> None:
    if not isinstance(text, str):
        hint = " (decode bytes to str first)" if isinstance(text, (bytes, bytearray)) else ""
        raise EncodeInputError(f"encode expects str, got {type(text).__name__}{hint}")

"""The general tokenizer: normalizer -> pre-tokenizer -> model -> post-processor, and a decoder.

:class:`Pipeline` composes the stages of DESIGN §1 for every model family:
WordPiece (BERT), Unigram (T5, ALBERT, SentencePiece), and BPE over Unicode
pieces with byte fallback (Llama 2, Mistral). :class:`~tokenforge.Tokenizer`
stays the specialised, faster form for byte-level BPE (GPT-2, cl100k, o200k).

Encoding, in order:

1. **Added tokens** are found first, on the raw text, longest first. Special
   ones follow tiktoken's policy (``allowed_special`` / ``disallowed_special``;
   by default a special-token string in the text raises, so user text cannot
   forge ``[SEP]`` or ``</s>``); non-special added tokens (vocabulary
   extensions) are always matched. ``lstrip``/``rstrip`` let a match swallow
   the whitespace beside it, ``single_word`` only matches a whole word.
2. Each stretch of ordinary text is **normalized** (keeping an alignment map
   to the original), **pre-tokenized** into pieces, and each piece is encoded
   by the **model**.
3. The **post-processor** adds the control ids (``[CLS]``/``[SEP]``,
   ``<s>``/``</s>``) by code when ``add_special_tokens`` is on.

``encode`` returns ids; ``encode_full`` returns an
:class:`~tokenforge.postprocessors.Encoding` with tokens, type ids and offsets
into the original text, which survive normalization and pre-tokenization.

Like :class:`~tokenforge.Tokenizer`, a Pipeline is immutable once built; its
only mutable state is a memo of encoded pieces, which never changes a result.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import regex

from . import _native, pretokenizers
from .decoders import TextStreamDecoder, check_errors, decoder_from_dict
from .errors import (
    EncodeInputError,
    FileFormatError,
    SpecialTokenError,
    UnknownIdError,
    UnknownTokenError,
)
from .postprocessors import Encoding, post_processor_from_dict
from .pretokenizers import WHITESPACE, pre_tokenizer_from_dict
from .specials import SpecialPolicy, SpecialTokens

_CACHE_PIECE_CHARS = 64
_CACHE_LIMIT = 1 << 17


@dataclass(frozen=True)
class AddedToken:
    """A token matched whole in the text before the pipeline runs (HF's ``added_tokens``).

    ``special`` tokens are control tokens (subject to the special-token policy and
    dropped by ``decode(skip_special_tokens=True)``); the others extend the
    vocabulary. ``lstrip``/``rstrip``: the match also takes the whitespace on
    its left/right. ``single_word``: only match when not inside a word.
    ``normalized`` tokens are matched in the normalized text by their normalized content
    (HF's rule); the others in the raw text.
    """

    content: str
    id: int
    special: bool = True
    lstrip: bool = False
    rstrip: bool = False
    single_word: bool = False
    normalized: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id, "content": self.content, "single_word": self.single_word, "lstrip": self.lstrip,
            "rstrip": self.rstrip, "normalized": self.normalized, "special": self.special,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "AddedToken":
        for key in ("id", "content"):
            if key not in d:
                raise FileFormatError(f"added token {d!r} needs the field {key!r}")
        return cls(
            d["content"], int(d["id"]), bool(d.get("special", False)), bool(d.get("lstrip", False)),
            bool(d.get("rstrip", False)), bool(d.get("single_word", False)), bool(d.get("normalized", not d.get("special", False))),
        )


class Pipeline:
    """A tokenizer composed of pipeline stages (see the module docstring).

    >>> from tokenforge.models.wordpiece import WordPiece
    >>> from tokenforge import normalizers, pretokenizers, postprocessors, decoders
    >>> vocab = {"[UNK]": 0, "[CLS]": 1, "[SEP]": 2, "hello": 3, "wor": 4, "##ld": 5, "!": 6}
    >>> tok = Pipeline(
    ...     WordPiece(vocab),
    ...     normalizer=normalizers.BertNormalizer(lowercase=True),
    ...     pre_tokenizer=pretokenizers.BertPreTokenizer(),
    ...     post_processor=postprocessors.BertProcessing(("[SEP]", 2), ("[CLS]", 1)),
    ...     decoder=decoders.WordPiece(),
    ...     added_tokens=[AddedToken("[CLS]", 1), AddedToken("[SEP]", 2), AddedToken("[UNK]", 0)],
    ... )
    >>> tok.encode("Hello World!")
    [1, 3, 4, 5, 6, 2]
    >>> tok.decode([1, 3, 4, 5, 6, 2])
    'hello world !'
    """

    __slots__ = (
        "_model", "_normalizer", "_pre", "_post", "_decoder", "_added", "_added_by_id", "_specials",
        "_always", "_name", "_cache", "_matchers", "_fast", "_has_normalized", "__weakref__",
    )

    def __init__(
        self,
        model: Any,
        *,
        normalizer: Any = None,
        pre_tokenizer: Any = None,
        post_processor: Any = None,
        decoder: Any = None,
        added_tokens: Iterable[AddedToken] = (),
        name: str | None = None,
    ) -> None:
        for attr in ("encode_piece", "tokenize", "id_to_token", "token_to_id", "to_dict"):
            if not hasattr(model, attr):
                raise TypeError(f"model must be a tokenforge model (WordPiece, Unigram, PieceBPE, ...), got {type(model).__name__}")
        self._model = model
        self._normalizer = normalizer
        self._pre = pre_tokenizer
        self._post = post_processor
        self._decoder = decoder
        added = sorted(added_tokens, key=lambda t: t.id)
        by_id: dict[int, AddedToken] = {}
        seen: dict[str, int] = {}
        for t in added:
            if not isinstance(t, AddedToken):
                raise TypeError(f"added_tokens must be AddedToken objects, got {type(t).__name__}")
            if not t.content:
                raise SpecialTokenError(f"added token with id {t.id} is empty")
            if t.id in by_id and by_id[t.id].content != t.content:
                raise SpecialTokenError(f"added tokens {by_id[t.id].content!r} and {t.content!r} share id {t.id}")
            if t.content in seen and seen[t.content] != t.id:
                raise SpecialTokenError(f"added token {t.content!r} has two ids, {seen[t.content]} and {t.id}")
            known = model.id_to_token(t.id)
            if known is not None and known != t.content:
                raise SpecialTokenError(f"added token {t.content!r} has id {t.id}, which the model gives to {known!r}")
            by_id[t.id] = t
            seen[t.content] = t.id
        self._added = tuple(by_id.values())
        self._added_by_id = by_id
        self._specials = SpecialTokens({t.content: t.id for t in self._added if t.special})
        self._always = tuple(t for t in self._added if not t.special)
        self._name = name
        self._cache: dict[str, tuple[int, ...]] = {}
        self._matchers: dict[tuple[frozenset[str], bool], Any] = {}
        self._fast: Any = _UNSET
        # Added tokens with ``normalized=True`` are matched in the normalized text (as HF
        # does); without a normalizer that is the raw text, so they join the raw ones.
        self._has_normalized = normalizer is not None and any(t.normalized for t in self._added)

    # ------------------------------------------------------------------ info
    @property
    def model(self) -> Any:
        return self._model

    @property
    def normalizer(self) -> Any:
        return self._normalizer

    @property
    def pre_tokenizer(self) -> Any:
        return self._pre

    @property
    def post_processor(self) -> Any:
        return self._post

    @property
    def decoder(self) -> Any:
        return self._decoder

    @property
    def added_tokens(self) -> tuple[AddedToken, ...]:
        return self._added

    @property
    def name(self) -> str | None:
        return self._name

    @property
    def special_tokens(self) -> Mapping[str, int]:
        """``{string: id}`` of the special added tokens (read-only)."""
        return self._specials.ids

    @property
    def special_tokens_set(self) -> frozenset[str]:
        return self._specials.all

    def get_vocab(self) -> dict[str, int]:
        vocab = dict(self._model.get_vocab())
        for t in self._added:
            vocab[t.content] = t.id
        return vocab

    @property
    def max_token_value(self) -> int:
        return max(self.get_vocab().values())

    @property
    def n_vocab(self) -> int:
        """Size of the id space: largest id + 1."""
        return self.max_token_value + 1

    def __len__(self) -> int:
        return len(self.get_vocab())

    def token_to_id(self, token: str) -> int:
        for t in self._added:
            if t.content == token:
                return t.id
        r = self._model.token_to_id(token)
        if r is None:
            raise UnknownTokenError(f"token {token!r} is not in the vocabulary")
        return r

    def id_to_token(self, token_id: int) -> str:
        t = self._added_by_id.get(token_id)
        if t is not None:
            return t.content
        tok = self._model.id_to_token(token_id) if isinstance(token_id, int) and not isinstance(token_id, bool) else None
        if tok is None:
            raise UnknownIdError(self._unknown_id_message(token_id, None))
        return tok

    # -------------------------------------------------------------- encoding
    def encode(
        self,
        text: str,
        pair: str | None = None,
        *,
        add_special_tokens: bool = True,
        allowed_special: SpecialPolicy = frozenset(),
        disallowed_special: SpecialPolicy = "all",
        **sampling: Any,
    ) -> list[int]:
        """Encode ``text`` (and optionally a second text ``pair``) to ids.

        ``sampling`` passes regularization options to the model: ``dropout=p``
        and ``seed=`` for BPE-dropout, ``sample=True, alpha=, nbest_size=, seed=``
        for Unigram sampling. Without them encoding is deterministic.
        """
        ids_a = self._encode_ids(text, allowed_special, disallowed_special, sampling)
        ids_b = None if pair is None else self._encode_ids(pair, allowed_special, disallowed_special, sampling)
        if self._post is None:
            return ids_a if ids_b is None else ids_a + ids_b
        return self._post.process_ids(ids_a, ids_b, add_special_tokens)

    def encode_ordinary(self, text: str) -> list[int]:
        """Ids of ``text`` with special-token strings read as text and no post-processing."""
        return self._encode_ids(text, frozenset(), (), {})

    def encode_batch(self, texts: Sequence[str], **kwargs: Any) -> list[list[int]]:
        """``[encode(t, **kwargs) for t in texts]`` (pairs: pass ``(a, b)`` tuples)."""
        if isinstance(texts, str):
            raise EncodeInputError("encode_batch takes a sequence of str, not one str; use encode()")
        out = []
        for t in texts:
            if isinstance(t, tuple):
                out.append(self.encode(t[0], t[1], **kwargs))
            else:
                out.append(self.encode(t, **kwargs))
        return out

    def nbest(self, text: str, n: int) -> list[tuple[list[int], float]]:
        """The ``n`` best segmentations of ``text`` with their log-probabilities (Unigram models)."""
        if not hasattr(self._model, "nbest"):
            raise TypeError(f"{type(self._model).__name__} models have no n-best list; only Unigram does")
        _check_text(text)
        pieces = [p for seg, first in self._ordinary_segments(text) for p in self._pieces(seg, first)]
        if len(pieces) != 1:
            # Independent pieces: combine the best lists of each (beam over the product).
            beams: list[tuple[list[int], float]] = [([], 0.0)]
            for p in pieces:
                options = self._model.nbest(p, n)
                beams = sorted(
                    ((ids + o_ids, score + o_score) for ids, score in beams for o_ids, o_score in options),
                    key=lambda x: -x[1],
                )[:n]
            return beams
        return self._model.nbest(pieces[0], n)

    def _ordinary_segments(self, text: str) -> Iterator[tuple[str, bool]]:
        for seg, tid, start, _end in self._segments(text, frozenset()):
            if tid is None:
                yield seg, start == 0

    def _encode_ids(self, text: str, allowed_special, disallowed_special, sampling: Mapping[str, Any]) -> list[int]:
        _check_text(text)
        text = _fix_surrogates(text)
        if (
            allowed_special.__class__ in _EMPTY_POLICY and disallowed_special.__class__ in _EMPTY_POLICY
            and not allowed_special and not disallowed_special
        ):
            allowed = disallowed = _NOTHING  # what resolve() gives, without its set arithmetic
        else:
            allowed, disallowed = self._specials.resolve(allowed_special, disallowed_special)
        if disallowed:
            self._specials.check(text, disallowed)
        out: list[int] = []
        model_kwargs = self._sampling_kwargs(sampling) if sampling else None
        fast = None if model_kwargs else self._fast_encoder()
        if fast is not None and self._matchers.get((allowed, False), _UNSET) is None:
            # no added token can match (known from an earlier call): one ordinary segment
            ids = fast(text) if text else []
            if ids is not None:
                return ids
        for seg, tid, start, _end in self._segments(text, allowed):
            if tid is not None:
                out.append(tid)
                continue
            if fast is not None:
                ids = fast(seg)
                if ids is not None:
                    out.extend(ids)
                    continue
            if self._has_normalized:
                self._encode_normalized_added(seg, start == 0, allowed, out, model_kwargs)
                continue
            for piece in self._pieces(seg, start == 0):
                if model_kwargs:
                    out.extend(self._model.encode_piece(piece, **model_kwargs))
                    continue
                ids = self._cache.get(piece)
                if ids is None:
                    ids = tuple(self._model.encode_piece(piece))
                    if len(piece) <= _CACHE_PIECE_CHARS:
                        if len(self._cache) >= _CACHE_LIMIT:
                            self._cache.clear()
                        self._cache[piece] = ids
                out.extend(ids)
        return out

    def _encode_normalized_added(self, seg: str, first: bool, allowed, out: list[int], model_kwargs) -> None:
        """Normalize ``seg``, split off the normalized added tokens, encode the rest."""
        norm = self._normalizer.normalize_str(seg)
        for part, tid, ps, _pe in self._segments(norm, allowed, normalized=True):
            if tid is not None:
                out.append(tid)
                continue
            for piece in self._pieces(part, first and ps == 0, normalize=False):
                out.extend(self._model.encode_piece(piece, **(model_kwargs or {})))

    def _fast_encoder(self) -> Any:
        """A native ``segment -> ids`` function doing normalization, pre-tokenization and the
        model in one call (SentencePiece pipelines), or ``None``. A ``None`` result from it
        means "take the general path" (which then raises the right error)."""
        fast = self._fast
        if fast is _UNSET:  # decided once, as Tokenizer picks its backend once
            fast = None
            if not self._has_normalized:  # those are matched between normalizing and splitting
                try:
                    fast = _native_segment_encoder(self._normalizer, self._pre, self._model)
                except (UnicodeError, ValueError, TypeError):
                    fast = None  # e.g. a piece the core cannot take: the general path decides (and raises)
            self._fast = fast
        return fast

    def _sampling_kwargs(self, sampling: Mapping[str, Any]) -> dict[str, Any]:
        if not sampling:
            return {}
        unknown = set(sampling) - {"dropout", "seed", "sample", "alpha", "nbest_size"}
        if unknown:
            raise TypeError(f"encode() got unexpected keyword arguments: {', '.join(sorted(unknown))}")
        kind = type(self._model).__name__
        if "dropout" in sampling:
            if not hasattr(self._model, "merges"):
                raise TypeError(f"dropout applies to BPE models, not {kind}")
            p = sampling["dropout"]
            if p is None or p == 0:
                return {}
            return {"dropout": float(p), "rng": random.Random(sampling.get("seed"))}
        if sampling.get("sample"):
            if not hasattr(self._model, "nbest"):
                raise TypeError(f"sample=True applies to Unigram models, not {kind}")
            # One generator for the whole call, so that every piece draws differently.
            return {
                "sample": True, "alpha": float(sampling.get("alpha", 0.1)),
                "nbest_size": int(sampling.get("nbest_size", -1)), "seed": random.Random(sampling.get("seed")),
            }
        return {}

    def _pieces(self, segment: str, first: bool, normalize: bool = True) -> list[str]:
        norm = self._normalizer.normalize_str(segment) if self._normalizer is not None and normalize else segment
        if not norm:
            return []
        if self._pre is None:
            return [norm]
        if hasattr(self._pre, "split_text"):
            return self._pre.split_text(norm, first)
        return self._pre.split(norm)

    def _segments(
        self, text: str, allowed: frozenset[str], normalized: bool = False
    ) -> Iterator[tuple[str, int | None, int, int]]:
        """Yield ``(text, added_id or None, start, end)``: ordinary stretches and matched
        added tokens (whose span includes the whitespace ``lstrip``/``rstrip`` took).

        ``normalized=False`` matches, in raw text, the added tokens that are not
        normalized; ``normalized=True`` matches the others, in normalized text, by
        their normalized content."""
        key = (allowed, normalized)
        matcher = self._matchers.get(key, _UNSET)
        if matcher is _UNSET:
            tokens = [
                t for t in self._added
                if ((not t.special) or t.content in allowed) and (t.normalized and self._has_normalized) == normalized
            ]
            if normalized:
                norm = self._normalizer.normalize_str
                by_content = {norm(t.content): t for t in tokens if norm(t.content)}
            else:
                by_content = {t.content: t for t in tokens}
            matcher = (_added_regex(tuple(by_content)), by_content) if by_content else None
            if len(self._matchers) > 64:
                self._matchers.clear()
            self._matchers[key] = matcher
        if matcher is None:
            if text:
                yield text, None, 0, len(text)
            return
        pattern, by_content = matcher
        pos = 0
        for m in pattern.finditer(text):
            tok = by_content[m.group("tok")]
            s, e = m.span("tok")
            if tok.single_word and ((s > 0 and _is_word(text[s - 1])) or (e < len(text) and _is_word(text[e]))):
                continue
            if s < pos:
                continue
            if tok.lstrip:
                while s > pos and text[s - 1] in WHITESPACE:
                    s -= 1
            if tok.rstrip:
                while e < len(text) and text[e] in WHITESPACE:
                    e += 1
            if s > pos:
                yield text[pos:s], None, pos, s
            yield m.group("tok"), tok.id, s, e
            pos = e
        if pos < len(text):
            yield text[pos:], None, pos, len(text)

    def encode_full(
        self,
        text: str,
        pair: str | None = None,
        *,
        add_special_tokens: bool = True,
        allowed_special: SpecialPolicy = frozenset(),
        disallowed_special: SpecialPolicy = "all",
    ) -> Encoding:
        """Encode to an :class:`~tokenforge.postprocessors.Encoding`: ids, tokens,
        type ids and ``(start, end)`` offsets into the original text."""
        a = self._encode_full_one(text, allowed_special, disallowed_special)
        b = None if pair is None else self._encode_full_one(pair, allowed_special, disallowed_special)
        if self._post is None:
            out = Encoding()
            out._extend(a, 0, 0)
            if b is not None:
                out._extend(b, 1, 1)
            return out
        return self._post.process(a, b, add_special_tokens)

    def encode_with_offsets(self, text: str, **kwargs: Any) -> list:
        """Each token of ``encode(text, **kwargs)`` with its span in the original ``text``, in
        code points and UTF-8 bytes, through normalization (seed 000 §5.6); see
        :func:`tokenforge.analysis.offsets.encode_with_offsets`."""
        from .analysis.offsets import encode_with_offsets

        return encode_with_offsets(self, text, **kwargs)

    def _encode_full_one(self, text: str, allowed_special, disallowed_special) -> Encoding:
        from .normalizers import NormalizedText

        _check_text(text)
        text = _fix_surrogates(text)
        allowed, disallowed = self._specials.resolve(allowed_special, disallowed_special)
        if disallowed:
            self._specials.check(text, disallowed)
        enc = Encoding()
        for seg, tid, start, end in self._segments(text, allowed):
            if tid is not None:
                enc._append(tid, seg, (start, end), 0, self._added_by_id[tid].special, 0)
                continue
            nt = NormalizedText(seg)
            if self._normalizer is not None:
                nt = self._normalizer.normalize(nt)
            norm = nt.normalized
            if not norm:
                continue
            parts = self._segments(norm, allowed, normalized=True) if self._has_normalized else [(norm, None, 0, len(norm))]
            for part, tid, ps, pe in parts:
                if tid is not None:
                    os_, oe = nt.original_span(ps, pe)
                    enc._append(tid, self._added_by_id[tid].content, (start + os_, start + oe), 0,
                                self._added_by_id[tid].special, 0)
                    continue
                for piece in self._pre_tokenize_pieces(part, start == 0 and ps == 0):
                    for tid2, i, j in self._model.tokenize(piece.text):
                        ns, ne = piece.span(i, j)
                        os_, oe = nt.original_span(ps + ns, ps + ne)
                        enc._append(tid2, self.id_to_token(tid2), (start + os_, start + oe), 0, False, 0)
        return enc

    def _pre_tokenize_pieces(self, norm: str, first: bool) -> list:
        """Pieces (with spans into ``norm``) of normalized text."""
        from .pretokenizers import Piece

        if self._pre is None:
            return [Piece(norm, 0)]
        if hasattr(self._pre, "pre_tokenize"):
            return self._pre.pre_tokenize(norm, first)
        pieces = []
        pos = 0
        for s in self._pre.split(norm):
            pieces.append(Piece(s, pos))
            pos += len(s)
        return pieces

    # -------------------------------------------------------------- decoding
    def decode(self, ids: Iterable[int], *, skip_special_tokens: bool = True, errors: str = "replace") -> str:
        """Text of ``ids`` through the decoder (special added tokens dropped unless
        ``skip_special_tokens=False``). Unknown ids raise :class:`UnknownIdError`."""
        check_errors(errors)
        tokens = self._tokens_for_decode(list(ids), skip_special_tokens)
        if self._decoder is None:
            return " ".join(tokens)
        text = self._decoder.decode(tokens)
        if errors == "strict" and "\ufffd" in text and not any("\ufffd" in t for t in tokens):
            from .errors import DecodeError

            raise DecodeError("the ids decode to bytes that are not valid UTF-8; use errors='replace' to get U+FFFD")
        return text

    def _tokens_for_decode(self, ids: list[int], skip_special_tokens: bool) -> list[str]:
        tokens = []
        for pos, i in enumerate(ids):
            t = self._added_by_id.get(i) if isinstance(i, int) else None
            if t is not None:
                if not (skip_special_tokens and t.special):
                    tokens.append(t.content)
                continue
            tok = self._model.id_to_token(i) if isinstance(i, int) and not isinstance(i, bool) else None
            if tok is None:
                raise UnknownIdError(self._unknown_id_message(i, pos))
            tokens.append(tok)
        return tokens

    def decode_batch(self, batch: Iterable[Iterable[int]], **kwargs: Any) -> list[str]:
        return [self.decode(ids, **kwargs) for ids in batch]

    def stream_decoder(self, *, skip_special_tokens: bool = True) -> TextStreamDecoder:
        """A streaming decoder: ``step(id)`` returns text as soon as it is final."""
        return TextStreamDecoder(lambda ids: self.decode(ids, skip_special_tokens=skip_special_tokens))

    def decode_stream(self, ids: Iterable[int], *, skip_special_tokens: bool = True) -> Iterator[str]:
        """Yield text chunks for a stream of ids; joined, they equal ``decode(ids)``."""
        return self.stream_decoder(skip_special_tokens=skip_special_tokens).decode_iter(ids)

    def _unknown_id_message(self, token_id: Any, pos: int | None) -> str:
        where = "" if pos is None else f" at position {pos}"
        if not isinstance(token_id, int) or isinstance(token_id, bool):
            return f"token id{where} must be an int, got {type(token_id).__name__} {token_id!r}"
        return f"unknown token id {token_id}{where}: ids of this tokenizer lie in 0..{self.max_token_value}"

    # ------------------------------------------------------------ persistence
    def to_dict(self) -> dict[str, Any]:
        """HF tokenizer.json's shape (which tokenforge's native file also uses)."""
        return {
            "version": "1.0",
            "truncation": None,
            "padding": None,
            "added_tokens": [t.to_dict() for t in self._added],
            "normalizer": None if self._normalizer is None else self._normalizer.to_dict(),
            "pre_tokenizer": None if self._pre is None else self._pre.to_dict(),
            "post_processor": None if self._post is None else self._post.to_dict(),
            "decoder": None if self._decoder is None else self._decoder.to_dict(),
            "model": self._model.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, name: str | None = None) -> "Pipeline":
        """Build from HF tokenizer.json's shape; an unsupported component raises
        :class:`FileFormatError` naming it and its place in the file."""
        from .models import model_from_dict
        from .normalizers import normalizer_from_dict

        if not isinstance(data, Mapping) or "model" not in data:
            raise FileFormatError("a tokenizer.json document needs a 'model' object")

        def part(key, fn):
            try:
                return fn(data.get(key))
            except FileFormatError as exc:
                raise FileFormatError(f"{key}: {exc}") from None

        added = [AddedToken.from_dict(d) for d in data.get("added_tokens") or []]
        return cls(
            part("model", model_from_dict),
            normalizer=part("normalizer", normalizer_from_dict),
            pre_tokenizer=part("pre_tokenizer", pre_tokenizer_from_dict),
            post_processor=part("post_processor", post_processor_from_dict),
            decoder=part("decoder", decoder_from_dict),
            added_tokens=added,
            name=name,
        )

    def to_hf(self):
        """A live HF ``tokenizers.Tokenizer`` built from this pipeline's tokenizer.json form
        (needs ``tokenizers``; components HF cannot express exactly raise FileFormatError)."""
        from .formats.hf_json import to_hf_live

        return to_hf_live(self)

    def to_tiktoken(self):
        """Pipelines are not byte-level BPE with ranks, so tiktoken cannot run them: this raises."""
        raise FileFormatError(
            f"tiktoken runs byte-level BPE by rank; a {type(self._model).__name__} pipeline cannot be expressed "
            "exactly as a tiktoken Encoding"
        )

    def save(self, path: str, format: str = "tokenforge") -> None:
        """Write atomically: ``"tokenforge"`` (one JSON file with a sha256 per part)
        or, for WordPiece, ``"bert_vocab"`` (a ``vocab.txt``)."""
        from .formats import save

        save(self, path, format=format)

    def __reduce__(self):
        return (_rebuild, (self.to_dict(), self._name))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Pipeline):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (
            f"<Pipeline {self._name or 'unnamed'!r}: {type(self._model).__name__}, {len(self)} tokens, "
            f"normalizer={type(self._normalizer).__name__ if self._normalizer else None}, "
            f"pre_tokenizer={type(self._pre).__name__ if self._pre else None}>"
        )


_UNSET: Any = object()
_NOTHING: frozenset[str] = frozenset()
_EMPTY_POLICY = (frozenset, set, tuple, list)
_SP_WORD_SPLIT = "(?<=[^\u2581])\u2581"


def _native_segment_encoder(normalizer: Any, pre: Any, model: Any) -> Any:
    """The native encoder of one ordinary segment for a SentencePiece pipeline (its
    normalizer + a Unigram model without pre-tokenizer, or + a SentencePiece BPE model
    without pre-tokenizer or with the exact ``▁``-word split), else ``None``. Its ids are
    those of the general path: the same normalization, then the same model on the whole
    normalized text (for BPE, the word split is exact: no merge crosses it)."""
    from .models.bpe import SP_USER_DEFINED, PieceBPE
    from .models.unigram import Unigram
    from .normalizers import SentencePieceNormalizer

    if type(normalizer) is not SentencePieceNormalizer:
        return None
    norm = normalizer._core_normalizer()
    if norm is None:
        return None
    if type(model) is PieceBPE and model.is_sentencepiece and not model.dropout:
        if pre is not None:
            if pre.to_dict() != pretokenizers.Split(_SP_WORD_SPLIT, "merged_with_next").to_dict():
                return None
            from .presets import _sentencepiece_split_is_exact

            types = model.types or []
            pieces = [model.id_to_token(i) for i in range(len(types))]
            user = [p for p, t in zip(pieces, types) if t == SP_USER_DEFINED]
            if not _sentencepiece_split_is_exact(pieces, user):
                return None
        bpe = model._core_sp()
        if bpe is None:
            return None
        return functools.partial(_native.core().spm_bpe_encode, norm, bpe)
    if type(model) is Unigram and pre is None:
        core = model._core()  # builds the model's own native encoder (raises where its native path would)
        if core is None:
            return None
        return functools.partial(core.spm_unigram_encode, norm, model._lattice)
    return None


def _rebuild(data, name) -> Pipeline:
    return Pipeline.from_dict(data, name=name)


_WORD = regex.compile(r"\w")


def _is_word(ch: str) -> bool:
    return bool(_WORD.match(ch))


_ADDED_CACHE: dict[tuple[str, ...], Any] = {}


def _added_regex(contents: tuple[str, ...]):
    pat = _ADDED_CACHE.get(contents)
    if pat is None:
        ordered = sorted(set(contents), key=lambda c: (-len(c), c))
        pat = regex.compile("(?P<tok>" + "|".join(regex.escape(c) for c in ordered) + ")")
        if len(_ADDED_CACHE) > 64:
            _ADDED_CACHE.clear()
        _ADDED_CACHE[contents] = pat
    return pat


def _check_text(text: object) -> None:
    if not isinstance(text, str):
        hint = " (decode bytes to str first)" if isinstance(text, (bytes, bytearray)) else ""
        raise EncodeInputError(f"encode expects str, got {type(text).__name__}{hint}")


def _fix_surrogates(text: str) -> str:
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")

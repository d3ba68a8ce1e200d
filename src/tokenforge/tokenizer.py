"""The tokenizer: special tokens → normalizer → pre-tokenizer → model → post-processor; a decoder.

:class:`Tokenizer` is the one tokenizer type of tokenforge. Every family is a
configuration of it: byte-level BPE by rank (GPT-2, tiktoken files), WordPiece
(BERT), Unigram (T5, ALBERT, SentencePiece), BPE over Unicode pieces with byte
fallback (Llama 2, Mistral), WordLevel. Every family has the same methods
with the same signatures and the same behaviour.

Encoding, in order:

1. **Added tokens** are found first, on the raw text, longest first. Special
   ones follow tiktoken's policy (``allowed_special`` / ``disallowed_special``;
   by default a special-token string in the text raises, so user text cannot
   forge ``<|endoftext|>``, ``[SEP]`` or ``</s>``); non-special added tokens
   (vocabulary extensions) are always matched. ``lstrip``/``rstrip`` let a
   match swallow the whitespace beside it, ``single_word`` only matches a
   whole word.
2. Each stretch of ordinary text is **normalized** (keeping an alignment map
   to the original), **pre-tokenized** into pieces, and each piece is encoded
   by the **model**. How this runs (native or Python) is the tokenizer's
   *plan*, chosen once when it is built (:mod:`tokenforge._plans`); a plan
   never changes ids.
3. The **post-processor** adds the control ids (``[CLS]``/``[SEP]``,
   ``<s>``/``</s>``) by code when ``add_special_tokens`` is on.

``encode`` returns ids; ``encode_full`` returns an
:class:`~tokenforge.encoding.Encoding` with tokens, type ids and offsets into
the original text, which survive normalization and pre-tokenization.

Python strings may hold lone surrogates (``"\\ud800"``), which have no UTF-8
form. Like tiktoken, encoding replaces each one with U+FFFD (so
``encode("\\ud800") == encode("\\ufffd")``); nothing else is ever altered.

A Tokenizer is immutable once built, so one instance can be shared across
threads and pickled; its only mutable state is a memo of encoded pieces,
which never changes a result.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import random
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, TypeVar, cast, overload

import regex

from . import _plans, bytelevel
from ._plans import default_threads
from ._plans import fix_surrogates as _fix_surrogates
from .decoders import ByteLevel as ByteLevelDecoder
from .decoders import Decoder, StreamDecoder, bytes_to_text, check_errors, decoder_from_dict
from .encoding import Encoding, TokenSpan, token_spans
from .errors import (
    DecodeError,
    EncodeInputError,
    FileFormatError,
    InvalidArgumentError,
    MissingDependencyError,
    SpecialTokenError,
    TokenforgeError,
    UnknownIdError,
    UnknownTokenError,
)
from .models import Model, model_from_dict
from .models.bpe import BPE, PieceBPE, _check_dropout
from .models.unigram import Unigram
from .models.wordlevel import PieceLookup
from .normalizers import NormalizedText, Normalizer, normalizer_from_dict
from .postprocessors import BertProcessing, PostProcessor, TemplateProcessing, post_processor_from_dict
from .pretokenizers import WHITESPACE, Piece, PreTokenizer, RegexSplit, pre_tokenizer_from_dict
from .padding import Padding, Truncation, pad_encodings, pad_ids, truncate_encodings, truncate_ids
from .specials import SpecialPolicy, SpecialTokens, cached_special_regex, contains_any

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    import tiktoken  # type: ignore[import-not-found, unused-ignore]
    import tokenizers  # type: ignore[import-not-found, unused-ignore]

_T = TypeVar("_T")

#: ``encode_iterable`` keeps this many trailing pieces back until more text arrives.
_HOLD_PIECES = 2
#: ``encode_iterable`` gathers at least this many characters before cutting.
_STREAM_MIN_CHARS = 1 << 14


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
        if not isinstance(d, Mapping):
            raise FileFormatError(f"an added token must be an object, got {d!r}")
        for key in ("id", "content"):
            if key not in d:
                raise FileFormatError(f"added token {d!r} needs the field {key!r}")
        if not isinstance(d["content"], str):
            raise FileFormatError(f"added token content must be a string, got {d['content']!r}")
        tid = d["id"]
        if not isinstance(tid, int) or isinstance(tid, bool) or not 0 <= tid < 2**32:
            # As HF (a u32): a string, a float or an id outside 0..2**32-1 is an error, never converted.
            raise FileFormatError(f"added token {d['content']!r} has id {tid!r}; ids are integers in 0..2**32-1")
        for flag in ("special", "lstrip", "rstrip", "single_word", "normalized"):
            if flag in d and not isinstance(d[flag], bool):
                raise FileFormatError(f"added token {d['content']!r}: field {flag!r} must be true or false, got {d[flag]!r}")
        return cls(
            d["content"], tid, bool(d.get("special", False)), bool(d.get("lstrip", False)),
            bool(d.get("rstrip", False)), bool(d.get("single_word", False)),
            bool(d.get("normalized", not d.get("special", False))),
        )


class Tokenizer:
    """A tokenizer composed of pipeline stages (see the module docstring).

    Byte-level BPE, as tiktoken runs it:

    >>> import tokenforge
    >>> enc = tokenforge.get_encoding("cl100k_base")
    >>> enc.encode("hello world")
    [15339, 1917]
    >>> enc.decode([15339, 1917])
    'hello world'
    >>> enc.encode("<|endoftext|>", allowed_special="all")
    [100257]

    WordPiece, built by hand from its stages:

    >>> from tokenforge.models.wordpiece import WordPiece
    >>> from tokenforge import normalizers, pretokenizers, postprocessors, decoders
    >>> vocab = {"[UNK]": 0, "[CLS]": 1, "[SEP]": 2, "hello": 3, "wor": 4, "##ld": 5, "!": 6}
    >>> tok = Tokenizer(
    ...     WordPiece(vocab),
    ...     normalizer=normalizers.BertNormalizer(lowercase=True),
    ...     pre_tokenizer=pretokenizers.BertPreTokenizer(),
    ...     post_processor=postprocessors.BertProcessing(("[SEP]", 2), ("[CLS]", 1)),
    ...     decoder=decoders.WordPiece(),
    ...     added_tokens=[AddedToken("[CLS]", 1), AddedToken("[SEP]", 2), AddedToken("[UNK]", 0)],
    ... )
    >>> tok.encode("Hello World!")
    [1, 3, 4, 5, 6, 2]
    >>> tok.decode([1, 3, 4, 5, 6, 2], skip_special_tokens=True)
    'hello world!'
    """

    __slots__ = (
        "_model", "_normalizer", "_pre", "_post", "_decoder", "_added", "_added_by_id", "_specials",
        "_name", "_matchers", "_plan", "_has_normalized", "_backend", "_max_id", "_plain", "_plan_encode",
        "_byte_level", "_fast_decode", "_len", "_sorted_token_bytes", "_truncation", "_padding", "_ids_as_encoded", "_config",
        "__weakref__",
    )

    def __init__(
        self,
        model: Model,
        *,
        normalizer: Normalizer | None = None,
        pre_tokenizer: PreTokenizer | str | None = None,
        post_processor: PostProcessor | None = None,
        decoder: Decoder | None = None,
        added_tokens: Iterable[AddedToken] = (),
        special_tokens: Mapping[str, int] | None = None,
        name: str | None = None,
        backend: str = "auto",
        specials_in_text: str = "raise",
        truncation: Truncation | Mapping[str, Any] | None = None,
        padding: Padding | Mapping[str, Any] | None = None,
        config: Mapping[str, Any] | None = None,
    ) -> None:
        if not isinstance(model, Model):
            raise EncodeInputError(
                f"model must be a tokenforge model (BPE, PieceBPE, WordPiece, Unigram, WordLevel), "
                f"got {type(model).__name__}"
            )
        if isinstance(pre_tokenizer, str):
            pre_tokenizer = RegexSplit(pre_tokenizer)
        for stage, value, base in (
            ("normalizer", normalizer, Normalizer), ("pre_tokenizer", pre_tokenizer, PreTokenizer),
            ("post_processor", post_processor, PostProcessor), ("decoder", decoder, Decoder),
        ):
            if value is not None and not isinstance(value, base):
                raise EncodeInputError(f"{stage} must be a tokenforge {base.__name__} or None, got {type(value).__name__}")
        if decoder is None and isinstance(model, BPE):
            decoder = ByteLevelDecoder()  # a byte-level model's tokens are bytes
        self._model = model
        self._normalizer = normalizer
        self._pre = pre_tokenizer
        self._post = post_processor
        self._decoder = decoder
        added = list(added_tokens)
        if special_tokens is not None:
            if not isinstance(special_tokens, Mapping):
                raise SpecialTokenError(
                    f"special_tokens must map each special string to its id, got {type(special_tokens).__name__}"
                )
            added += [AddedToken(t, i, special=True) for t, i in special_tokens.items()]
        by_id: dict[int, AddedToken] = {}
        aliases: list[AddedToken] = []  # special strings that share an id with an earlier one
        seen: dict[str, int] = {}
        for t in sorted(added, key=lambda t: t.id if isinstance(t, AddedToken) else -1):
            if not isinstance(t, AddedToken):
                raise SpecialTokenError(f"added_tokens must be AddedToken objects, got {type(t).__name__}")
            if not t.content:
                raise SpecialTokenError(f"added token with id {t.id} is empty")
            if not isinstance(t.id, int) or isinstance(t.id, bool) or not 0 <= t.id < 2**32 - 1:
                raise SpecialTokenError(f"added token {t.content!r} has id {t.id!r}; ids are ints in 0..2**32-2")
            if t.content in seen and seen[t.content] != t.id:
                raise SpecialTokenError(f"added token {t.content!r} has two ids, {seen[t.content]} and {t.id}")
            if t.id in by_id and by_id[t.id].content != t.content:
                if not (t.special and by_id[t.id].special):
                    raise SpecialTokenError(f"added tokens {by_id[t.id].content!r} and {t.content!r} share id {t.id}")
                # Two special strings for one id (tiktoken's o200k_harmony has <|endofprompt|>
                # and <|reserved_200018|>): both encode to it, the first one decodes.
                aliases.append(t)
                seen[t.content] = t.id
                continue
            known = model.id_to_token(t.id)
            if known is not None and known != t.content and not (isinstance(model, BPE) and t.special):
                raise SpecialTokenError(f"added token {t.content!r} has id {t.id}, which the model gives to {known!r}")
            if isinstance(model, BPE) and t.special and model.token_bytes(t.id) is not None:
                raise SpecialTokenError(
                    f"special token {t.content!r} has id {t.id}, which the model already gives to "
                    f"{model.token_bytes(t.id)!r}"
                )
            by_id[t.id] = t
            seen[t.content] = t.id
        self._added = tuple(by_id.values()) + tuple(aliases)
        self._added_by_id = by_id
        if specials_in_text not in ("raise", "text"):
            raise InvalidArgumentError(f"specials_in_text must be 'raise' or 'text', got {specials_in_text!r}")
        self._specials = SpecialTokens(
            {t.content: t.id for t in self._added if t.special}, guard=specials_in_text == "raise"
        )
        self._name = name
        self._backend = backend
        self._matchers: dict[tuple[frozenset[str], bool], Any] = {}
        # Added tokens with ``normalized=True`` are matched in the normalized text (as HF
        # does); without a normalizer that is the raw text, so they join the raw ones.
        self._has_normalized = normalizer is not None and any(t.normalized for t in self._added)
        self._plan = _plans.compile_plan(
            normalizer, pre_tokenizer, model, decoder, {i: t.content for i, t in by_id.items()}, backend
        )
        self._max_id = max([*(t.id for t in self._added), _model_max_id(model)])
        self._len = (len(model) if isinstance(model, BPE) else len(model.get_vocab())) + sum(
            1 for i in by_id if model.id_to_token(i) is None
        )
        # Ordinary text goes to the plan whole when no added token is matched without asking.
        self._plain = not self._has_normalized and all(t.special for t in self._added)
        self._plan_encode = self._plan.encode
        # Byte-level with tiktoken's rank semantics (encode_bytes, encode_with_unstable and the
        # other rank-based extras): a rank model, or a plan that runs one on the raw text.
        byte_decoder = isinstance(decoder, ByteLevelDecoder)
        self._byte_level = byte_decoder and (
            isinstance(model, BPE) or (isinstance(self._plan, _plans.RankBPEPlan) and normalizer is None)
        )
        # Native decoding only needs the tokens' bytes, which every native byte-level plan has.
        byte_plan = byte_decoder and isinstance(self._plan, _plans.ByteBPEPlan)
        self._fast_decode = self._plan.decode_bytes if self._byte_level or byte_plan else None
        self._sorted_token_bytes: list[bytes] | None = None
        self._truncation = truncation if truncation is None or isinstance(truncation, Truncation) else Truncation.from_dict(truncation)
        self._padding = padding if padding is None or isinstance(padding, Padding) else Padding.from_dict(padding)
        # The plan's ids are the answer: no post-processor, truncation or padding to apply.
        self._ids_as_encoded = post_processor is None and self._truncation is None and self._padding is None
        if config is not None and not isinstance(config, Mapping):
            raise FileFormatError(f"config must be an object (transformers' tokenizer settings), got {config!r}")
        self._config = MappingProxyType(dict(config or {}))

    # ------------------------------------------------------------------ info
    @property
    def model(self) -> Model:
        return self._model

    @property
    def normalizer(self) -> Normalizer | None:
        return self._normalizer

    @property
    def pre_tokenizer(self) -> PreTokenizer | None:
        return self._pre

    @property
    def post_processor(self) -> PostProcessor | None:
        return self._post

    @property
    def decoder(self) -> Decoder | None:
        return self._decoder

    @property
    def added_tokens(self) -> tuple[AddedToken, ...]:
        return self._added

    @property
    def name(self) -> str | None:
        return self._name

    @property
    def plan(self) -> str:
        """How this tokenizer encodes: ``"rank-bpe"``, ``"pair-bpe"``, ``"sentencepiece"``,
        ``"wordpiece"`` or ``"python"``
        (see :mod:`tokenforge._plans`)."""
        return self._plan.name

    @property
    def threaded_batches(self) -> bool:
        """Whether ``encode_batch`` runs natively on several threads with the GIL
        released (otherwise parallel work needs processes)."""
        return self._plan.threaded

    @property
    def pattern(self) -> str | None:
        """The split regex of a byte-level BPE tokenizer (``None`` when it has none)."""
        pre = self._pre
        if isinstance(pre, RegexSplit):
            return pre.pattern
        if isinstance(self._plan, _plans.ByteBPEPlan) and self._plan.pattern is not None:
            return self._plan.pattern.pattern
        return None

    @property
    def pattern_name(self) -> str | None:
        """The name of :attr:`pattern` when it is a published one (``gpt2``, ``cl100k``,
        ``o200k``, ``llama3``, ``qwen``), however the file wrote it; ``None`` otherwise."""
        from .pretokenizers import pattern_name

        return pattern_name(self.pattern)

    @property
    def is_byte_level(self) -> bool:
        """Whether every token stands for bytes (byte-level BPE): decoding joins token bytes."""
        return self._byte_level

    @property
    def special_tokens(self) -> Mapping[str, int]:
        """``{string: id}`` of the special tokens (read-only)."""
        return self._specials.ids

    @property
    def config(self) -> Mapping[str, Any]:
        """The settings a ``transformers`` folder carries beside ``tokenizer.json``
        (``tokenizer_config.json``): the names of ``bos_token``, ``eos_token``, ``unk_token``,
        ``pad_token``..., ``model_max_length``, ``chat_template``. Read-only; empty when
        the tokenizer has none. :meth:`with_config` gives a tokenizer with other settings."""
        return self._config

    def with_config(self, **settings: Any) -> "Tokenizer":
        """This tokenizer with ``settings`` merged into :attr:`config` (``None`` removes one).

        >>> import tokenforge
        >>> tok = tokenforge.get_encoding("gpt2").with_config(eos_token="<|endoftext|>", model_max_length=1024)
        >>> tok.config["model_max_length"]
        1024
        """
        merged = {**self._config, **settings}
        return self._replace(_config=MappingProxyType({k: v for k, v in merged.items() if v is not None}))

    @property
    def chat_template(self) -> str | None:
        """The Jinja chat template of :attr:`config` (a named set's ``default``), or ``None``."""
        t = self._config.get("chat_template")
        if isinstance(t, list):  # transformers' named templates: [{"name": ..., "template": ...}]
            named = {d.get("name"): d.get("template") for d in t if isinstance(d, Mapping)}
            t = named.get("default")
        return t if isinstance(t, str) else None

    def apply_chat_template(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        add_generation_prompt: bool = False,
        tokenize: bool = True,
        chat_template: str | None = None,
        tools: Sequence[Any] | None = None,
        documents: Sequence[Any] | None = None,
        **kwargs: Any,
    ) -> list[int] | str:
        """Render ``messages`` with a Jinja chat template (``transformers``' format), safely.

        The template (``chat_template=`` or the one in :attr:`config`) runs in a sandboxed
        ``jinja2`` environment with what ``transformers`` gives it (``messages``,
        ``add_generation_prompt``, ``tools``, ``documents``, the special-token names,
        ``raise_exception``, ``tojson``, ``strftime_now``). Unlike encoding the rendered
        string, text the caller supplies (message contents and names, ``tools``,
        ``documents``, extra keyword variables) never becomes a control token: only
        characters the template wrote itself are searched for special tokens, the rest is
        encoded with special-token matching off. Templates are bounded by
        :mod:`tokenforge.limits` and fail with :class:`~tokenforge.errors.ChatTemplateError`.
        ``tokenize=False`` returns the rendered string, for reading only. Needs ``jinja2``
        (``pip install 'tokenforge[chat]'``).
        """
        from .chat import JinjaTemplate

        source = chat_template if chat_template is not None else self.chat_template
        if source is None:
            raise InvalidArgumentError(
                "this tokenizer has no chat template: pass chat_template=, or load a transformers folder "
                "whose tokenizer_config.json has one"
            )
        template = JinjaTemplate(self, source, tools=tools, documents=documents, **kwargs)
        if tokenize:
            return template.render(messages, add_generation_prompt=add_generation_prompt)
        return template.render_text(messages, add_generation_prompt=add_generation_prompt)

    def save_pretrained(self, directory: str | os.PathLike[str], *, allow_lossy: bool = False) -> dict[str, Any]:
        """Write a ``transformers`` folder: ``tokenizer.json``, ``tokenizer_config.json`` and
        ``special_tokens_map.json``, so that ``AutoTokenizer.from_pretrained(directory)``
        gives the same ids (the same as ``save(directory, format="transformers")``).

        A SentencePiece ``.model`` is written as ``transformers``' converters write it and
        checked on whole documents and their lines. That form is exact for BPE models
        without a charsmap (Llama 2, Mistral); for others (Unigram, ``nmt_nfkc``...)
        :class:`FileFormatError` names the reason or the first input whose ids differ,
        unless ``allow_lossy=True``. Returns ``{"exact", "reason", "documents", "lines",
        "tokens", "differences"}``: the inputs checked and those that differ (each
        ``{"text", "whole_document", "ids", "written_ids"}``); other tokenizers are
        exact by construction and are not checked (counts 0)."""
        from .formats.hf_json import save_transformers

        return save_transformers(self, directory, allow_lossy=allow_lossy)

    @property
    def truncation(self) -> Truncation | None:
        """How encodings are truncated (HF's ``truncation``), or ``None``."""
        return self._truncation

    @property
    def padding(self) -> Padding | None:
        """How encodings are padded (HF's ``padding``), or ``None``."""
        return self._padding

    def with_truncation(
        self, max_length: int | None, *, stride: int = 0, strategy: str = "longest_first", direction: str = "right"
    ) -> "Tokenizer":
        """This tokenizer, truncating every encoding to ``max_length`` ids as HF does (``None``:
        no truncation). Tokenizers are immutable, so this returns a new one (sharing the
        vocabulary tables). ``strategy``: ``longest_first``, ``only_first``, ``only_second``."""
        t = None if max_length is None else Truncation(max_length, stride, strategy, direction)
        if t is not None and max_length is not None and stride:
            effective = max_length - (self._post.added_tokens(False) if self._post is not None else 0)
            if 0 <= effective < stride:  # the check HF's enable_truncation makes
                raise InvalidArgumentError(
                    f"truncation stride {stride} is longer than the effective max length {effective} "
                    f"({max_length} less the ids the post-processor adds)"
                )
        return self._replace(_truncation=t)

    def with_padding(
        self, *, length: int | None = None, direction: str = "right", pad_to_multiple_of: int | None = None,
        pad_id: int | None = None, pad_type_id: int = 0, pad_token: str | None = None,
    ) -> "Tokenizer":
        """This tokenizer, padding encodings to ``length`` (``None``: the longest of the batch)
        as HF does. ``pad_token`` defaults to ``[PAD]`` or ``<pad>`` when the vocabulary has
        it, ``pad_id`` to that token's id."""
        if pad_token is None:
            pad_token = next((t for t in ("[PAD]", "<pad>", "<|pad|>") if self._has_token(t)), "[PAD]")
        if pad_id is None:
            pad_id = self.token_to_id(pad_token) if self._has_token(pad_token) else 0
        return self._replace(_padding=Padding(length, direction, pad_to_multiple_of, pad_id, pad_type_id, pad_token))

    def without_padding(self) -> "Tokenizer":
        return self._replace(_padding=None)

    def _has_token(self, token: str) -> bool:
        try:
            self.token_to_id(token)
            return True
        except (UnknownTokenError, EncodeInputError):
            return False

    def _replace(self, **slots: Any) -> "Tokenizer":
        new = object.__new__(type(self))
        for slot in Tokenizer.__slots__:
            if slot != "__weakref__":
                object.__setattr__(new, slot, slots[slot] if slot in slots else getattr(self, slot))
        new._ids_as_encoded = new._post is None and new._truncation is None and new._padding is None
        return new

    @property
    def specials_in_text(self) -> str:
        """What a special-token string in the text does unless the call says otherwise:
        ``"raise"`` (tiktoken's guard against injected control tokens) or ``"text"``: it is
        ordinary text, as in sentencepiece, which never reads control pieces from text."""
        return "raise" if self._specials._guarded or not self._specials.all else "text"

    @property
    def special_tokens_set(self) -> frozenset[str]:
        return self._specials.all

    @property
    def eot_token(self) -> int | None:
        """The id of ``<|endoftext|>``, if registered."""
        return self._specials.ids.get("<|endoftext|>")

    @property
    def mergeable_ranks(self) -> Mapping[bytes, int]:
        """tiktoken's ``{token_bytes: rank}`` (byte-level BPE only)."""
        return self.rank_model().ranks

    def rank_model(self) -> BPE:
        """The byte-level rank model (tiktoken's ranks) this tokenizer runs; raises
        :class:`FileFormatError` for tokenizers that are not byte-level BPE."""
        if isinstance(self._model, BPE):
            return self._model
        if isinstance(self._plan, _plans.RankBPEPlan):
            return self._plan.ranks_model
        if self._is_byte_level_pieces():
            ranks = BPE.from_byte_level_pieces(cast(PieceBPE, self._model), frozenset(self._added_by_id))
            if ranks is not None:
                return ranks
        raise FileFormatError(
            f"a {type(self._model).__name__} tokenizer has no byte-level merge ranks; only byte-level BPE has"
        )

    def _is_byte_level_pieces(self) -> bool:
        """HF's byte-level BPE model (GPT-2 printable tokens, merges by priority)."""
        return (
            isinstance(self._model, PieceBPE) and isinstance(self._decoder, ByteLevelDecoder)
            and _plans.byte_level_pattern(self._pre) is not None
        )

    def get_vocab(self) -> dict[str, int]:
        """``{token: id}``: the model's tokens (byte-level ones in GPT-2's printable form)
        and the added tokens."""
        vocab = dict(self._model.get_vocab())
        for t in self._added:
            vocab[t.content] = t.id
        return vocab

    @property
    def max_token_value(self) -> int:
        return self._max_id

    @property
    def n_vocab(self) -> int:
        """Size of the id space: largest id + 1 (tiktoken's ``n_vocab``)."""
        return self._max_id + 1

    def __len__(self) -> int:
        """Number of tokens, ordinary and added (ids may have holes)."""
        return self._len

    def token_to_id(self, token: str | bytes) -> int:
        """Id of a token: an added token's string, a model token (byte-level tokens as raw
        ``bytes`` or in GPT-2's printable form, ``"Ġthe"``). Unknown: :class:`UnknownTokenError`."""
        if isinstance(token, str):
            r = self._specials.ids.get(token)
            if r is None:
                for t in self._added:
                    if t.content == token:
                        return t.id
                r = self._model.token_to_id(token)
        elif isinstance(token, (bytes, bytearray)) and isinstance(self._model, BPE):
            r = self._model.token_to_id(bytes(token))
        else:
            raise EncodeInputError(f"token must be str (or bytes for byte-level BPE), got {type(token).__name__}")
        if r is None:
            raise UnknownTokenError(f"token {token!r} is not in the vocabulary")
        return r

    def id_to_token(self, token_id: int) -> str:
        """The token of ``token_id`` (byte-level tokens in ``vocab.json``'s printable form)."""
        t = self._added_by_id.get(token_id) if isinstance(token_id, int) else None
        if t is not None:
            return t.content
        tok = self._model.id_to_token(token_id) if _is_int(token_id) else None
        if tok is None:
            raise UnknownIdError(self._unknown_id_message(token_id, None))
        return tok

    def encode_single_token(self, token: str | bytes) -> int:
        """The id of text (or bytes) that is exactly one token; else :class:`UnknownTokenError`."""
        if isinstance(token, str):
            sp = self._specials.ids.get(token)
            if sp is not None:
                return sp
            if isinstance(self._model, BPE) or self.is_byte_level:
                token = token.encode("utf-8", "surrogatepass")
            else:
                r = self._model.token_to_id(token)
                if r is None:
                    raise UnknownTokenError(f"{token!r} is not a single token")
                return r
        if not isinstance(token, (bytes, bytearray)):
            raise EncodeInputError(f"token must be str or bytes, got {type(token).__name__}")
        token = bytes(token)
        r = self.rank_model().ranks.get(token) if self._byte_level or isinstance(self._model, BPE) else None
        if r is None:
            try:
                text = token.decode("utf-8")
            except UnicodeDecodeError:
                raise UnknownTokenError(f"{token!r} is not a single token") from None
            r = self._specials.ids.get(text)
            if r is None:
                if self._byte_level or isinstance(self._model, BPE):
                    raise UnknownTokenError(f"{token!r} is not a single token")
                return self.encode_single_token(text)
        return r

    def is_special_token(self, token_id: int) -> bool:
        """Whether ``token_id`` is the id of a special token (``<|endoftext|>``, ``[CLS]``)."""
        return token_id in self._specials.by_id

    def token_byte_values(self) -> list[bytes]:
        """The bytes of every ordinary token, sorted (tiktoken's ``token_byte_values``;
        byte-level BPE only)."""
        values = self._sorted_token_bytes
        if values is None:
            values = self._sorted_token_bytes = sorted(self.rank_model().ranks)
        return values

    @property
    def _pat_str(self) -> str | None:
        """tiktoken's name for :attr:`pattern`."""
        return self.pattern

    @property
    def _mergeable_ranks(self) -> Mapping[bytes, int]:
        """tiktoken's name for :attr:`mergeable_ranks`."""
        return self.mergeable_ranks

    @property
    def _special_tokens(self) -> Mapping[str, int]:
        """tiktoken's name for :attr:`special_tokens`."""
        return self._specials.ids

    # -------------------------------------------------------------- encoding
    def encode(
        self,
        text: str,
        pair: str | None = None,
        *,
        allowed_special: SpecialPolicy = frozenset(),
        disallowed_special: SpecialPolicy = "all",
        add_special_tokens: bool = True,
        dropout: float | None = None,
        sample: bool = False,
        alpha: float = 0.1,
        nbest_size: int = -1,
        seed: int | None = None,
        is_pretokenized: bool = False,
    ) -> list[int]:
        """Encode ``text`` (and optionally a second text ``pair``) to ids.

        Special tokens follow tiktoken's policy: by default every special-token
        string in ``text`` raises :class:`~tokenforge.errors.SpecialTokenError`;
        ``allowed_special`` ("all" or a set) encodes those strings as special ids,
        and ``disallowed_special=()`` encodes the rest as ordinary text.
        ``add_special_tokens`` runs the post-processor (``[CLS]``/``[SEP]``, BOS/EOS).

        Regularization (the ids vary, reproducibly with ``seed``):
        ``dropout=p`` is BPE-dropout (Provilkov et al., 2020) on BPE models: each
        merge is skipped with probability ``p``; ``sample=True`` draws a Unigram
        segmentation with probability ∝ P(z)^``alpha`` (Kudo, 2018) from all of them
        (``nbest_size=-1``) or from the ``nbest_size`` best.

        >>> import tokenforge
        >>> enc = tokenforge.get_encoding("gpt2")
        >>> ids = enc.encode(" tokenization", dropout=1.0, seed=0)  # every merge blocked: one id per byte
        >>> len(ids), enc.decode(ids)
        (13, ' tokenization')
        >>> enc.encode(" tokenization", dropout=0.3, seed=7) == enc.encode(" tokenization", dropout=0.3, seed=7)
        True
        """
        allowed, disallowed = self._specials.resolve(allowed_special, disallowed_special)
        if is_pretokenized:  # lists of words, each encoded as a text of its own (HF's rule)
            kw = self._sampling_kwargs(dropout, sample, alpha, nbest_size, seed)
            ids_a = [i for w in _words(text, "text") for i in self._encode_ids(w, allowed, disallowed, kw)]
            ids_b = None if pair is None else [
                i for w in _words(pair, "pair") for i in self._encode_ids(w, allowed, disallowed, kw)]
            return self._finish_ids(ids_a, ids_b, add_special_tokens)
        if dropout is None and not sample and pair is None and not allowed and self._plain:
            # The common case, kept short: no added token can match, the plan takes the text.
            if type(text) is not str:
                _check_text(text)
            if disallowed:
                self._specials.check(text, disallowed)
            try:
                ids = self._plan_encode(text) if text else []
            except UnicodeEncodeError:  # lone surrogates: replaced by U+FFFD, as tiktoken does
                ids = self._plan_encode(_fix_surrogates(text))
            return ids if self._ids_as_encoded else self._finish_ids(ids, None, add_special_tokens)
        model_kwargs = self._sampling_kwargs(dropout, sample, alpha, nbest_size, seed)
        ids_a = self._encode_ids(text, allowed, disallowed, model_kwargs)
        ids_b = None if pair is None else self._encode_ids(pair, allowed, disallowed, model_kwargs)
        return self._finish_ids(ids_a, ids_b, add_special_tokens)

    def _finish_ids(self, a: list[int], b: list[int] | None, add_special_tokens: bool) -> list[int]:
        """Truncation, the post-processor and padding, in HF's order, on ids."""
        if self._truncation is not None:
            n_added = self._post.added_tokens(b is not None) if self._post is not None and add_special_tokens else 0
            a, b = truncate_ids(a, b, self._truncation, n_added)
        if self._post is not None:
            ids = self._post.process_ids(a, b, add_special_tokens)
        else:
            ids = a if b is None else a + b
        return ids if self._padding is None else pad_ids([ids], self._padding)[0]

    def encode_ordinary(self, text: str) -> list[int]:
        """Ids of ``text`` with special-token strings read as text and no post-processing.

        >>> import tokenforge
        >>> tokenforge.get_encoding("gpt2").encode_ordinary("<|endoftext|>")[:3]
        [27, 91, 437]
        """
        if self._plain:
            if type(text) is not str:
                _check_text(text)
            try:
                return self._plan_encode(text) if text else []
            except UnicodeEncodeError:
                return self._plan_encode(_fix_surrogates(text))
        return self._encode_ids(text, _NOTHING, _NOTHING, None)

    def encode_bytes(self, data: bytes) -> list[int]:
        """Ids of raw bytes, which need not be valid UTF-8 (byte-level BPE).

        Valid UTF-8 is ``encode_ordinary`` of its text. Otherwise, as tiktoken's
        ``_encode_bytes`` does: the text before the first invalid byte is encoded as
        usual, then its last piece (widened over the whitespace-only tokens before
        it) is joined with all remaining bytes and merged as one piece.

        >>> import tokenforge
        >>> enc = tokenforge.get_encoding("cl100k_base")
        >>> enc.encode_bytes(b" \\xec\\x8b\\xa4\\xed")
        [62085]
        """
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise EncodeInputError(f"encode_bytes expects bytes, got {type(data).__name__}")
        data = bytes(data)
        try:
            return self.encode_ordinary(data.decode("utf-8"))
        except UnicodeDecodeError as exc:
            bad = exc.start
        if not (self._byte_level or isinstance(self._model, BPE)):
            raise DecodeError(
                f"byte {bad} of the input ({data[bad:bad + 4]!r}) is not valid UTF-8; only byte-level "
                "BPE tokenizers encode arbitrary bytes"
            )
        tokens, last = self._encode_with_last_piece(data[:bad].decode("utf-8"), _NOTHING)
        tokens, last = self._widen_last_piece(tokens, last)
        tail = data[bad:]
        if tokens and last:
            tail = self.decode_bytes(tokens[-last:]) + tail
            del tokens[-last:]
        if tail:
            tokens += self._merge_bytes(tail)
        return tokens

    _encode_bytes = encode_bytes  # tiktoken's (private) name, which code written for it calls

    def is_canonical(self, ids: Iterable[int]) -> bool:
        """Would encoding the decoded bytes of ``ids`` give exactly ``ids``? (byte-level BPE;
        see :mod:`tokenforge.analysis.canonical`, which also has the next-token mask).

        >>> import tokenforge
        >>> enc = tokenforge.get_encoding("cl100k_base")
        >>> enc.is_canonical(enc.encode(" hello")), enc.is_canonical(enc.encode(" hel") + enc.encode("lo"))
        (True, False)
        """
        if not self.is_byte_level:
            raise InvalidArgumentError(
                "canonical tokenization is defined here for byte-level BPE tokenizers (GPT-2, cl100k_base, "
                f"o200k_base, Llama 3); this tokenizer runs {type(self.model).__name__}"
            )
        seq = [int(i) for i in ids]
        specials = set(self.special_tokens.values())
        start = 0
        # each stretch between special tokens, decoded to bytes and encoded once: linear time
        for stop in [k for k, i in enumerate(seq) if i in specials] + [len(seq)]:
            part = seq[start:stop]
            if part and self.encode_bytes(self.decode_bytes(part)) != part:
                return False
            start = stop + 1
        return True

    def encode_with_unstable(
        self,
        text: str,
        *,
        allowed_special: SpecialPolicy = frozenset(),
        disallowed_special: SpecialPolicy = "all",
    ) -> tuple[list[int], list[list[int]]]:
        """Ids of ``text`` without its unstable end, and the token sequences that may
        complete it (tiktoken's ``encode_with_unstable``, for token healing).

        The last piece of the text (widened over whitespace-only tokens before it) may
        merge differently once more text follows, so its tokens are left out of the
        first list. The second list holds every token sequence that could start the
        encoding of that piece followed by more text: single tokens that extend it,
        and for each cut of it, the encoding of its head joined with a token that
        extends its tail, kept up to the length of the piece. Sorted.

        >>> import tokenforge
        >>> enc = tokenforge.get_encoding("cl100k_base")
        >>> stable, completions = enc.encode_with_unstable("hello fanta")
        >>> enc.decode(stable), [enc.encode(" fantastic")] in [completions[i:i+1] for i in range(len(completions))]
        ('hello', True)
        """
        _check_text(text)
        text = _fix_surrogates(text)
        allowed, disallowed = self._resolve(allowed_special, disallowed_special)
        if disallowed:
            self._specials.check(text, disallowed)
        tokens, last = self._encode_with_last_piece(text, allowed)
        if not last:
            return tokens, []
        tokens, last = self._widen_last_piece(tokens, last)
        unstable = self.decode_bytes(tokens[-last:])
        del tokens[-last:]
        if not unstable:
            return tokens, []
        import bisect

        sorted_tokens = self.token_byte_values()
        ranks = self.rank_model().ranks
        token_len = self.rank_model().token_bytes
        completions: set[tuple[int, ...]] = set()
        k = bisect.bisect_left(sorted_tokens, unstable)
        while k < len(sorted_tokens) and sorted_tokens[k].startswith(unstable):
            completions.add((ranks[sorted_tokens[k]],))
            k += 1
        for cut in range(1, len(unstable)):
            head, rest = unstable[:cut], unstable[cut:]
            k = bisect.bisect_left(sorted_tokens, rest)
            while k < len(sorted_tokens) and sorted_tokens[k].startswith(rest):
                joined = head + sorted_tokens[k]
                try:
                    # Through the split pattern: the new bytes may open a piece boundary.
                    ids = self.encode_ordinary(joined.decode("utf-8"))
                except UnicodeDecodeError:
                    ids = self._merge_bytes(joined)
                seq = []
                covered = 0
                for i in ids:
                    seq.append(i)
                    covered += len(cast(bytes, token_len(i)))
                    if covered >= len(unstable):
                        break
                completions.add(tuple(seq))
                k += 1
        # A whitespace run can split before its last character once text follows
        # (``\s+(?!\S)``): its head and that character may be tokens of their own.
        if len(unstable) > 1:
            size = _last_char_size(unstable)
            if size and size < len(unstable) and unstable[-size:].decode("utf-8") in WHITESPACE:
                completions.add(tuple(self._merge_bytes(unstable[:-size]) + self._merge_bytes(unstable[-size:])))
        return tokens, [list(c) for c in sorted(completions)]

    def _encode_with_last_piece(self, text: str, allowed: frozenset[str]) -> tuple[list[int], int]:
        """The ids of ``text`` (``allowed`` specials matched, nothing checked) and how many
        of them the last split piece gave (0 when the text ends with a special token)."""
        if not self._byte_level and not isinstance(self._model, BPE):
            raise EncodeInputError(
                f"this needs a byte-level BPE tokenizer; this one runs {type(self._model).__name__}"
            )
        tokens = self.encode(text, allowed_special=allowed, disallowed_special=(), add_special_tokens=False)
        last_seg = None
        for seg, sid in self._specials.split(text, allowed):
            last_seg = None if sid is not None else seg
        if not last_seg:
            return tokens, 0
        pattern = self.pattern
        pieces = RegexSplit(pattern).split(last_seg) if pattern is not None else [last_seg]
        return tokens, len(self._merge_bytes(pieces[-1].encode("utf-8"))) if pieces else 0

    def _widen_last_piece(self, tokens: list[int], last: int) -> tuple[list[int], int]:
        """Grow the unstable end over the whitespace-only tokens before it (as tiktoken does:
        ``"\n\n"`` then more text can merge across the piece boundary)."""
        token_bytes = self.rank_model().token_bytes

        def all_space(i: int) -> bool:
            b = token_bytes(i)
            return b is not None and all(c in b" \n\t" for c in b)

        if last and all_space(tokens[-last]):
            while last < len(tokens) and all_space(tokens[-last - 1]):
                last += 1
        return tokens, last

    def _merge_bytes(self, data: bytes) -> list[int]:
        """Ids of ``data`` merged as one piece (the native rank merge where there is one)."""
        core = getattr(self._plan, "core", None)
        if core is not None:
            ids: list[int] = core.encode_piece(data)
            return ids
        return self.rank_model().encode_bytes(data)

    def encode_batch(
        self,
        texts: Sequence[str | tuple[str, str]],
        *,
        num_threads: int | None = None,
        allowed_special: SpecialPolicy = frozenset(),
        disallowed_special: SpecialPolicy = "all",
        add_special_tokens: bool = True,
        is_pretokenized: bool = False,
    ) -> list[list[int]]:
        """Encode each text (or ``(a, b)`` pair); equal to ``[encode(t) for t in texts]``.
        With ``is_pretokenized=True`` each item is a list of words, or a tuple of two lists.

        Where the plan runs natively, texts are encoded on ``num_threads``
        threads (default: every core) with the GIL released.
        """
        if is_pretokenized:
            out = [self.encode(*(t if isinstance(t, tuple) else (t,)), allowed_special=allowed_special,
                               disallowed_special=disallowed_special, add_special_tokens=add_special_tokens,
                               is_pretokenized=True) for t in texts]
            return out if self._padding is None else pad_ids(out, self._padding)
        texts, allowed, disallowed = self._batch_args("encode_batch", texts, allowed_special, disallowed_special)
        n = default_threads(num_threads)
        if self._batch_is_plain(texts, allowed):
            framed = self._framed_batch(texts, n, add_special_tokens, False)
            if framed is not None:
                return cast("list[list[int]]", framed)
            try:
                out = self._plan.encode_batch(texts, n)
            except UnicodeEncodeError:
                out = self._plan.encode_batch([_fix_surrogates(t) for t in texts], n)
            if not self._ids_as_encoded:
                out = [self._finish_ids(ids, None, add_special_tokens) for ids in out]
        else:
            out = [
                self.encode(t[0], t[1], allowed_special=allowed, disallowed_special=disallowed,
                            add_special_tokens=add_special_tokens) if isinstance(t, tuple)
                else self.encode(t, allowed_special=allowed, disallowed_special=disallowed,
                                 add_special_tokens=add_special_tokens)
                for t in texts
            ]
        return out if self._padding is None else pad_ids(out, self._padding)

    def _framed_batch(self, texts: list[str], n: int, add_special_tokens: bool, flat: bool) -> Any:
        """The batch with the post-processor's fixed tokens put around each text by the plan
        (``encode_batch_framed``, on its threads), when that is all post-processing does here:
        a ``BertProcessing`` or ``TemplateProcessing`` post-processor, no truncation, no
        padding. Else ``None``."""
        framed = getattr(self._plan, "encode_batch_framed", None)
        post = self._post
        if (
            framed is None or not add_special_tokens or self._truncation is not None or self._padding is not None
            or not isinstance(post, (BertProcessing, TemplateProcessing))
            or type(post) not in (BertProcessing, TemplateProcessing)
        ):
            return None
        before, after = post.single_sides()
        return framed(texts, n, [i for i, _ in before], [i for i, _ in after], flat)

    def encode_ordinary_batch(self, texts: Sequence[str], *, num_threads: int | None = None) -> list[list[int]]:
        """``encode_batch`` with every special-token string read as text and no post-processing."""
        return self.encode_batch(texts, num_threads=num_threads, disallowed_special=(), add_special_tokens=False)

    def encode_batch_to_numpy(
        self,
        texts: Sequence[str],
        *,
        num_threads: int | None = None,
        allowed_special: SpecialPolicy = frozenset(),
        disallowed_special: SpecialPolicy = "all",
        add_special_tokens: bool = True,
    ) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.int64]]:
        """Encode many texts into one flat ``uint32`` array plus ``int64`` offsets:
        text ``k`` is ``ids[offsets[k]:offsets[k + 1]]``. No Python object is made per
        token where the plan is native, so this is the fastest way to encode a corpus.

        >>> import tokenforge
        >>> ids, offsets = tokenforge.get_encoding("gpt2").encode_batch_to_numpy(["hello", "hello world"])
        >>> ids[offsets[1]:offsets[2]].tolist()
        [31373, 995]
        """
        import numpy as np

        batch, allowed, disallowed = self._batch_args("encode_batch_to_numpy", texts, allowed_special, disallowed_special)
        n = default_threads(num_threads)
        if self._ids_as_encoded and self._batch_is_plain(batch, allowed):
            try:
                return self._plan.encode_flat(batch, n)
            except UnicodeEncodeError:
                return self._plan.encode_flat([_fix_surrogates(t) for t in batch], n)
        if self._batch_is_plain(batch, allowed):
            framed = self._framed_batch(batch, n, add_special_tokens, True)
            if framed is not None:
                return cast("tuple[npt.NDArray[np.uint32], npt.NDArray[np.int64]]", framed)
        lists = self.encode_batch(batch, num_threads=n, allowed_special=allowed, disallowed_special=disallowed,
                                  add_special_tokens=add_special_tokens)
        offsets = np.zeros(len(lists) + 1, dtype=np.int64)
        if lists:
            np.cumsum([len(x) for x in lists], out=offsets[1:])
        ids = np.fromiter((i for x in lists for i in x), dtype=np.uint32, count=int(offsets[-1]))
        return ids, offsets

    @overload
    def encode_to_numpy(
        self,
        text: str,
        *,
        dtype: Literal["uint32"] = "uint32",
        allowed_special: SpecialPolicy = frozenset(),
        disallowed_special: SpecialPolicy = "all",
        add_special_tokens: bool = True,
    ) -> npt.NDArray[np.uint32]: ...

    @overload
    def encode_to_numpy(
        self,
        text: str,
        *,
        dtype: Literal["uint16"],
        allowed_special: SpecialPolicy = frozenset(),
        disallowed_special: SpecialPolicy = "all",
        add_special_tokens: bool = True,
    ) -> npt.NDArray[np.uint16]: ...

    def encode_to_numpy(
        self,
        text: str,
        *,
        dtype: Literal["uint32", "uint16"] = "uint32",
        allowed_special: SpecialPolicy = frozenset(),
        disallowed_special: SpecialPolicy = "all",
        add_special_tokens: bool = True,
    ) -> npt.NDArray[np.uint32] | npt.NDArray[np.uint16]:
        """Encode to a numpy array (``uint32``, or ``uint16`` when every id fits),
        skipping the Python list where the plan is native."""
        import numpy as np

        if dtype not in ("uint32", "uint16"):
            raise InvalidArgumentError(f"dtype must be 'uint32' or 'uint16', got {dtype!r}")
        if dtype == "uint16" and self.max_token_value > 0xFFFF:
            raise InvalidArgumentError(
                f"ids of this tokenizer go up to {self.max_token_value}, which does not fit in uint16"
            )
        _check_text(text)
        allowed, disallowed = self._resolve(allowed_special, disallowed_special)
        if self._ids_as_encoded and self._batch_is_plain([text], allowed):
            if disallowed:
                self._specials.check(text, disallowed)
            arr: npt.NDArray[np.uint32]
            try:
                arr = self._plan.encode_u32(text)
            except UnicodeEncodeError:
                arr = self._plan.encode_u32(_fix_surrogates(text))
        else:
            arr = np.asarray(
                self.encode(text, allowed_special=allowed, disallowed_special=disallowed,
                            add_special_tokens=add_special_tokens),
                dtype=np.uint32,
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

        Yields exactly ``encode("".join(iterable), add_special_tokens=False)``. For
        tokenizers that split text with a regex and no normalizer (byte-level BPE),
        only the text whose pieces could still change is held back: the last few
        pieces and a possible prefix of a special token, so memory does not grow
        with the stream. Tokenizers whose pieces may depend on the whole text (a
        normalizer that joins characters, SentencePiece's whole-text lattice) hold
        the text and encode it at the end.

        >>> import io, tokenforge
        >>> enc = tokenforge.get_encoding("gpt2")
        >>> list(enc.encode_iterable(io.StringIO("hello\\nworld"))) == enc.encode("hello\\nworld")
        True
        """
        if isinstance(iterable, str):
            iterable = (iterable,)
        allowed, disallowed = self._resolve(allowed_special, disallowed_special)
        watch = allowed | disallowed
        hold_chars = max(self._specials.max_len - 1, 0) if watch else 0
        pending: list[str] = []
        pending_len = 0
        threshold = _STREAM_MIN_CHARS
        streamable = self._plain and self._normalizer is None and isinstance(self._pre, RegexSplit)
        for n, chunk in enumerate(iterable):
            if not isinstance(chunk, str):
                raise EncodeInputError(f"encode_iterable expects str items; item {n} is {type(chunk).__name__}")
            pending.append(chunk)
            pending_len += len(chunk)
            if pending_len < threshold or not streamable:
                continue
            buf = "".join(pending)
            cut = self._stream_cut(buf, watch, hold_chars)
            if cut <= 0:
                pending = [buf]
                threshold = 2 * pending_len
                continue
            head, tail = buf[:cut], buf[cut:]
            yield from self.encode(head, allowed_special=allowed, disallowed_special=disallowed, add_special_tokens=False)
            pending = [tail]
            pending_len = len(tail)
            threshold = max(_STREAM_MIN_CHARS, 2 * pending_len)
        if pending_len:
            yield from self.encode(
                "".join(pending), allowed_special=allowed, disallowed_special=disallowed, add_special_tokens=False
            )

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
            pattern = cached_special_regex(watch)
            for m in pattern.finditer(buf) if pattern is not None else ():
                if m.start() >= limit:
                    break
                best = m.start()
                seg_start = m.end()
            if seg_start > limit:
                return best
            best = seg_start
        if seg_start < limit:
            pos = piece_cut(cast(RegexSplit, self._pre), buf, seg_start, limit)
            if pos:
                return pos
        return best

    def stream_cutter(self) -> "Callable[[str], int] | None":
        """A picklable ``cut(text) -> p``: the largest position at which ordinary text
        (special-token strings read as text) that may continue after ``text`` can be
        cut, so that encoding ``text[:p]`` and then the rest gives the ids of encoding
        it whole (0 when no cut is certain yet). None when this tokenizer cannot
        prove a cut (a normalizer, or no split pattern): such text is encoded whole.
        """
        if self._plain and self._normalizer is None and isinstance(self._pre, RegexSplit):
            return functools.partial(piece_cut, self._pre)
        return None

    def nbest(self, text: str, n: int) -> list[tuple[list[int], float]]:
        """The ``n`` best segmentations of ``text`` with their log-probabilities (Unigram models)."""
        if not hasattr(self._model, "nbest"):
            raise EncodeInputError(f"{type(self._model).__name__} models have no n-best list; only Unigram does")
        _check_text(text)
        text = _fix_surrogates(text)
        pieces = [p for seg, first in self._ordinary_segments(text) for p in self._plan.pieces(seg, first)]
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
        best: list[tuple[list[int], float]] = self._model.nbest(pieces[0], n)
        return best

    # -- encoding internals ------------------------------------------------------
    def _resolve(
        self, allowed_special: SpecialPolicy, disallowed_special: SpecialPolicy
    ) -> tuple[frozenset[str], frozenset[str]]:
        if (
            allowed_special.__class__ in _EMPTY_POLICY and disallowed_special.__class__ in _EMPTY_POLICY
            and not allowed_special and not disallowed_special
        ):
            return _NOTHING, _NOTHING  # what resolve() gives, without its set arithmetic
        return self._specials.resolve(allowed_special, disallowed_special)

    def _batch_args(
        self, method: str, texts: Iterable[Any], allowed_special: SpecialPolicy, disallowed_special: SpecialPolicy
    ) -> tuple[list[Any], frozenset[str], frozenset[str]]:
        """Validate a batch: a sequence of str (or pairs), none holding a disallowed special."""
        if isinstance(texts, str):
            raise EncodeInputError(f"{method} takes a sequence of str, not one str; use encode()")
        texts = list(texts)
        allowed, disallowed = self._resolve(allowed_special, disallowed_special)
        flat: list[Any] = texts
        if not all(type(t) is str for t in texts):
            flat = []
            for n, t in enumerate(texts):
                parts = t if isinstance(t, tuple) and len(t) == 2 else (t,)
                for p in parts:
                    if not isinstance(p, str):
                        raise EncodeInputError(
                            f"{method} expects str items (or pairs of str); item {n} is {type(t).__name__}"
                        )
                    flat.append(p)
        if disallowed:
            self._specials.check_many(flat, disallowed)
        return texts, allowed, disallowed

    def _batch_is_plain(self, texts: Sequence[object], allowed: frozenset[str]) -> bool:
        """Can the plan take these texts whole: no added token can match, no pair."""
        if self._has_normalized or self._matcher(allowed, False) is not None:
            return False
        return all(type(t) is str for t in texts)

    def _encode_ids(
        self, text: str, allowed: frozenset[str], disallowed: frozenset[str], model_kwargs: dict[str, Any] | None
    ) -> list[int]:
        _check_text(text)
        text = _fix_surrogates(text)
        if disallowed:
            self._specials.check(text, disallowed)
        if model_kwargs:
            return self._encode_sampled(text, allowed, model_kwargs)
        plan = self._plan
        if not self._has_normalized:
            matcher = self._matcher(allowed, False)
            if matcher is None or not contains_any(text, matcher[1]):  # no added token in the text
                return plan.encode(text) if text else []
        out: list[int] = []
        for seg, tid, start, _end in self._segments(text, allowed):
            if tid is not None:
                out.append(tid)
            elif self._has_normalized:
                self._encode_normalized_added(seg, start == 0, allowed, out)
            else:
                out.extend(plan.encode(seg, start == 0))
        return out

    def _encode_sampled(self, text: str, allowed: frozenset[str], model_kwargs: dict[str, Any]) -> list[int]:
        """The Python stages with a regularizing model call (no memo)."""
        out: list[int] = []
        plan = self._plan
        for seg, tid, start, _end in self._segments(text, allowed):
            if tid is not None:
                out.append(tid)
                continue
            if self._has_normalized:
                self._encode_normalized_added(seg, start == 0, allowed, out, model_kwargs)
                continue
            for piece in plan.pieces(seg, start == 0):
                out.extend(self._model.encode_piece(piece, **model_kwargs))
        return out

    def _encode_normalized_added(
        self, seg: str, first: bool, allowed: frozenset[str], out: list[int], model_kwargs: dict[str, Any] | None = None
    ) -> None:
        """Normalize ``seg``, split off the normalized added tokens, encode the rest."""
        norm = cast(Normalizer, self._normalizer).normalize_str(seg)
        for part, tid, ps, _pe in self._segments(norm, allowed, normalized=True):
            if tid is not None:
                out.append(tid)
                continue
            pieces = self._plan.pieces(part, first and ps == 0, normalize=False)
            if model_kwargs:
                for piece in pieces:
                    out.extend(self._model.encode_piece(piece, **model_kwargs))
            else:
                self._plan.encode_pieces(pieces, out)

    def _sampling_kwargs(
        self, dropout: float | None, sample: bool, alpha: float, nbest_size: int, seed: int | None
    ) -> dict[str, Any] | None:
        kind = type(self._model).__name__
        if dropout is not None:
            if sample:
                raise EncodeInputError("dropout= (BPE) and sample=True (Unigram) cannot be combined")
            if not hasattr(self._model, "merges"):
                raise EncodeInputError(f"dropout applies to BPE models, not {kind}")
            p = _check_dropout(dropout)
            if p == 0:
                return None
            return {"dropout": p, "rng": random.Random(seed)}
        if sample:
            if not hasattr(self._model, "nbest"):
                raise EncodeInputError(f"sample=True applies to Unigram models, not {kind}")
            # One generator for the whole call, so that every piece draws differently.
            return {"sample": True, "alpha": float(alpha), "nbest_size": int(nbest_size), "seed": random.Random(seed)}
        return None

    def _ordinary_segments(self, text: str) -> Iterator[tuple[str, bool]]:
        for seg, tid, start, _end in self._segments(text, frozenset()):
            if tid is None:
                yield seg, start == 0

    def _matcher(
        self, allowed: frozenset[str], normalized: bool
    ) -> tuple[regex.Pattern[str], dict[str, AddedToken]] | None:
        key = (allowed, normalized)
        matcher = self._matchers.get(key, _UNSET)
        if matcher is _UNSET:
            tokens = [
                t for t in self._added
                if ((not t.special) or t.content in allowed) and (t.normalized and self._has_normalized) == normalized
            ]
            if normalized:
                norm = cast(Normalizer, self._normalizer).normalize_str
                by_content = {norm(t.content): t for t in tokens if norm(t.content)}
            else:
                by_content = {t.content: t for t in tokens}
            matcher = (_added_regex(tuple(by_content)), by_content) if by_content else None
            if len(self._matchers) > 64:
                self._matchers.clear()
            self._matchers[key] = matcher
        return cast("tuple[regex.Pattern[str], dict[str, AddedToken]] | None", matcher)

    def _segments(
        self, text: str, allowed: frozenset[str], normalized: bool = False
    ) -> Iterator[tuple[str, int | None, int, int]]:
        """Yield ``(text, added_id or None, start, end)``: ordinary stretches and matched
        added tokens (whose span includes the whitespace ``lstrip``/``rstrip`` took).

        ``normalized=False`` matches, in raw text, the added tokens that are not
        normalized; ``normalized=True`` matches the others, in normalized text, by
        their normalized content."""
        matcher = self._matcher(allowed, normalized)
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

    # -------------------------------------------------------------- offsets
    def encode_full(
        self,
        text: str,
        pair: str | None = None,
        *,
        allowed_special: SpecialPolicy = frozenset(),
        disallowed_special: SpecialPolicy = "all",
        add_special_tokens: bool = True,
        is_pretokenized: bool = False,
    ) -> Encoding:
        """Encode to an :class:`~tokenforge.encoding.Encoding`: ids, tokens, type ids and
        ``(start, end)`` code-point offsets into the original text.

        ``is_pretokenized=True`` takes lists of words (HF's pre-tokenized input): each word
        goes through the whole pipeline as a text of its own, offsets are within the word
        and ``word_ids`` says which word each token comes from.

        >>> import tokenforge
        >>> e = tokenforge.get_encoding("gpt2").encode_full("Hello world")
        >>> e.tokens, e.offsets
        (['Hello', 'Ġworld'], [(0, 5), (5, 11)])
        """
        return self._encode_full(text, pair, allowed_special=allowed_special, disallowed_special=disallowed_special,
                                 add_special_tokens=add_special_tokens, is_pretokenized=is_pretokenized)

    def _encode_full(
        self,
        text: str,
        pair: str | None = None,
        *,
        allowed_special: SpecialPolicy = frozenset(),
        disallowed_special: SpecialPolicy = "all",
        add_special_tokens: bool = True,
        is_pretokenized: bool = False,
        specials_in_mask: bool = False,
    ) -> Encoding:
        """:meth:`encode_full`; with ``specials_in_mask`` the special tokens found in the
        text are marked in ``special_tokens_mask`` too (HF marks only what the
        post-processor adds; :meth:`encode_with_offsets` marks both)."""
        allowed, disallowed = self._resolve(allowed_special, disallowed_special)
        if is_pretokenized:
            a = self._encode_words(_words(text, "text"), allowed, disallowed, specials_in_mask)
            b = None if pair is None else self._encode_words(_words(pair, "pair"), allowed, disallowed, specials_in_mask)
        else:
            a = self._encode_full_one(text, allowed, disallowed, specials_in_mask)
            b = None if pair is None else self._encode_full_one(pair, allowed, disallowed, specials_in_mask)
        if self._truncation is not None:
            n_added = self._post.added_tokens(b is not None) if self._post is not None and add_special_tokens else 0
            a, b = truncate_encodings(a, b, self._truncation, n_added)
        out = self._post_process(a, b, add_special_tokens)
        # Each part truncation cut off is post-processed as well, paired as HF pairs them.
        b_main = None if b is None else _without_overflow(b)
        for ao in a.overflowing:
            out.overflowing.append(self._post_process(ao, b_main, add_special_tokens))
            for bo in b.overflowing if b is not None else ():
                out.overflowing.append(self._post_process(ao, bo, add_special_tokens))
        for bo in b.overflowing if b is not None else ():
            out.overflowing.append(self._post_process(_without_overflow(a), bo, add_special_tokens))
        if self._padding is not None:
            pad_encodings([out], self._padding)
        return out

    def encode_batch_full(
        self,
        texts: Sequence[str | tuple[str, str]],
        *,
        allowed_special: SpecialPolicy = frozenset(),
        disallowed_special: SpecialPolicy = "all",
        add_special_tokens: bool = True,
        is_pretokenized: bool = False,
    ) -> list[Encoding]:
        """:meth:`encode_full` of each text (or ``(a, b)`` pair), padded together when the
        tokenizer pads to the longest of a batch (HF's ``encode_batch``). With
        ``is_pretokenized=True`` each item is a list of words, or a tuple of two lists."""
        if is_pretokenized:
            texts = list(texts)
        else:
            texts, _, _ = self._batch_args("encode_batch_full", texts, allowed_special, disallowed_special)
        out = [
            self.encode_full(*(t if isinstance(t, tuple) else (t,)), allowed_special=allowed_special,
                             disallowed_special=disallowed_special, add_special_tokens=add_special_tokens,
                             is_pretokenized=is_pretokenized)
            for t in texts
        ]
        if self._padding is not None:
            pad_encodings(out, self._padding)
        return out

    def _encode_words(
        self, words: list[str], allowed: frozenset[str], disallowed: frozenset[str], specials_in_mask: bool = False
    ) -> Encoding:
        out = Encoding()
        for n, word in enumerate(words):
            enc = self._encode_full_one(word, allowed, disallowed, specials_in_mask)
            enc.word_ids = [n] * len(enc.ids)
            out._extend(enc, 0, 0)
        return out

    def _post_process(self, a: Encoding, b: Encoding | None, add_special_tokens: bool) -> Encoding:
        if self._post is not None:
            return self._post.process(a, b, add_special_tokens)
        out = Encoding()
        out._extend(a, 0, 0)
        if b is not None:
            out._extend(b, 1, 1)
        return out

    def encode_with_offsets(self, text: str, **kwargs: Any) -> list[TokenSpan]:
        """Each token of ``encode(text, **kwargs)`` with its span in ``text``: code points
        and UTF-8 bytes; a token holding part of a character is marked ``partial``.
        ``kwargs`` are those of :meth:`encode_full`.

        >>> import tokenforge
        >>> [(s.token, s.start, s.end) for s in tokenforge.get_encoding("gpt2").encode_with_offsets("Hello world")]
        [('Hello', 0, 5), ('Ġworld', 5, 11)]
        """
        _check_text(text)
        if self._byte_level and self._normalizer is None and self._ids_as_encoded and kwargs.keys() <= _SPECIAL_KWARGS:
            spans = self._byte_level_spans(text, **kwargs)
            if spans is not None:
                return spans
        return token_spans(self._encode_full(text, **kwargs, specials_in_mask=True), text, self._token_bytes_of)

    def _byte_level_spans(self, text: str, **kwargs: Any) -> list[TokenSpan] | None:
        """:meth:`encode_with_offsets` for byte-level BPE when the tokens' bytes spell the text's
        UTF-8 exactly (tiktoken's encodings; not with a prefix space, nor lone surrogates): the
        spans are running sums of the token lengths, found without re-running the pipeline in
        Python. ``None`` when the bytes do not spell the text (the general path then runs)."""
        import numpy as np

        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError:
            return None
        ids = self.encode(text, **kwargs)
        distinct = dict.fromkeys(ids)
        raw = {i: self._token_bytes(i, None) for i in distinct}
        if b"".join([raw[i] for i in ids]) != data:
            return None
        n = len(ids)
        lens = np.fromiter((len(raw[i]) for i in ids), dtype=np.int64, count=n)
        ends = np.cumsum(lens)
        starts = ends - lens
        lead = np.ones(len(data) + 1, dtype=bool)  # a byte that starts a character (or the end)
        lead[:-1] = (np.frombuffer(data, dtype=np.uint8) & 0xC0) != 0x80
        char_of = np.cumsum(lead) - 1  # the character each byte belongs to
        cs = char_of[starts].tolist()
        ce = (char_of[np.maximum(ends - 1, 0)] + 1).tolist()
        partial = (~lead[starts] | ~lead[ends]).tolist()
        special_ids = {t.id for t in self._added if t.special}
        strings = {i: self.id_to_token(i) for i in distinct}
        b0, b1 = starts.tolist(), ends.tolist()
        return [
            TokenSpan(i, strings[i], cs[k], ce[k], b0[k], b1[k], partial[k], i in special_ids)
            for k, i in enumerate(ids)
        ]

    def _token_bytes_of(self, token: str) -> bytes | None:
        """The exact bytes a token stands for, when it is a byte token; else ``None``."""
        if len(token) == 6 and token.startswith("<0x") and token.endswith(">") and getattr(self._model, "byte_fallback", False):
            try:
                return bytes([int(token[3:5], 16)])
            except ValueError:
                return None
        if isinstance(self._decoder, ByteLevelDecoder):
            try:
                return bytelevel.decode_string(token)
            except KeyError:
                return None
        return None

    def _encode_full_one(
        self, text: str, allowed: frozenset[str], disallowed: frozenset[str], specials_in_mask: bool = False
    ) -> Encoding:
        _check_text(text)
        text = _fix_surrogates(text)
        if disallowed:
            self._specials.check(text, disallowed)
        enc = Encoding()
        unk_as_text = self._unk_shown_as_text()
        by_starts = getattr(self._normalizer, "offsets_by_starts", False)
        names: dict[int, str] = {}  # id -> token string, looked up once per distinct id
        for seg, tid, start, end in self._segments(text, allowed):
            # A special token found in the text is not in special_tokens_mask (HF's rule: the
            # mask marks what the post-processor added) unless specials_in_mask.
            if tid is not None:
                enc._append(tid, seg, (start, end), 0, specials_in_mask and self._added_by_id[tid].special, 0)
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
                                specials_in_mask and self._added_by_id[tid].special, 0)
                    continue
                for piece in self._pre_tokenize_pieces(part, start == 0 and ps == 0):
                    toks = self._model.tokenize(piece.text)
                    for k, (tid2, i, j) in enumerate(toks):
                        ns, ne = piece.span(i, j)
                        if by_starts:
                            os_ = nt.original_span(ps + ns, ps + ns)[0]
                            ends_inside = k + 1 < len(toks) and toks[k + 1][1] < j  # a byte of a character
                            oe = os_ if ends_inside else nt.original_span(ps + ne, ps + ne)[0]
                        else:
                            os_, oe = nt.original_span(ps + ns, ps + ne)
                        # An unknown piece shows the normalized text it stands for, as in
                        # sentencepiece (its piece; the original text is its surface) and HF's Unigram.
                        if tid2 != unk_as_text:
                            token = names.get(tid2)
                            if token is None:
                                token = names[tid2] = self.id_to_token(tid2)
                        else:
                            token = piece.text[i:j]
                        enc._append(tid2, token, (start + os_, start + oe), 0, False, 0)
        return enc

    def _unk_shown_as_text(self) -> int | None:
        """The unknown id, when its tokens show their source text (Unigram and SentencePiece
        models do; HF's BPE and WordPiece show the unknown token)."""
        model = self._model
        if isinstance(model, PieceBPE) and not model.is_sentencepiece:
            return None
        if not isinstance(model, (PieceBPE, Unigram, PieceLookup)):
            return None
        return getattr(model, "unk_id", None)

    def _pre_tokenize_pieces(self, norm: str, first: bool) -> list[Piece]:
        """Pieces (with spans into ``norm``) of normalized text."""
        if self._pre is None:
            return [Piece(norm, 0)]
        return self._pre.pre_tokenize(norm, first)

    # -------------------------------------------------------------- decoding
    def decode_bytes(self, ids: Iterable[int], *, skip_special_tokens: bool = False) -> bytes:
        """The bytes of ``ids``: for byte-level BPE the tokens' bytes joined (special
        tokens as their UTF-8 strings), which may end inside a character; for the other
        families the UTF-8 of :meth:`decode`. Unknown ids raise :class:`UnknownIdError`."""
        ids = ids if type(ids) is list else _id_list(ids)
        if not self._byte_level:
            return self.decode(ids, skip_special_tokens=skip_special_tokens).encode("utf-8", "surrogatepass")
        if skip_special_tokens:
            ids = self._without_specials(ids)
        fast = self._fast_decode
        if fast is not None:
            try:
                return fast(ids)
            except LookupError as exc:
                pos = exc.args[0]
                if not _is_int(ids[pos]) and _is_int(_as_int(ids[pos])):  # numpy integers in a list
                    return self.decode_bytes(_id_list(ids))
                raise UnknownIdError(self._unknown_id_message(ids[pos], pos)) from None
        return b"".join(self._token_bytes(i, pos) for pos, i in enumerate(ids))

    def decode(self, ids: Iterable[int], errors: str = "replace", *, skip_special_tokens: bool = False) -> str:
        """Text of ``ids`` through the decoder. Bytes that are not valid UTF-8 become
        U+FFFD under ``errors="replace"`` and raise :class:`DecodeError` under
        ``"strict"``. ``skip_special_tokens=True`` drops special tokens (``[CLS]``,
        ``</s>``, ``<|endoftext|>``). Unknown ids raise :class:`UnknownIdError`."""
        fast = self._fast_decode
        if fast is not None and not skip_special_tokens:
            if type(ids) is not list:
                ids = _id_list(ids)
            try:
                data = fast(ids)
            except LookupError as exc:
                pos = exc.args[0]
                if not _is_int(ids[pos]) and _is_int(_as_int(ids[pos])):  # numpy integers in a list
                    return self.decode(_id_list(ids), errors)
                raise UnknownIdError(self._unknown_id_message(ids[pos], pos)) from None
            return data.decode("utf-8", "replace") if errors == "replace" else bytes_to_text(data, errors)
        check_errors(errors)
        ids = ids if type(ids) is list else _id_list(ids)
        if self._byte_level:
            return bytes_to_text(self.decode_bytes(ids, skip_special_tokens=skip_special_tokens), errors)
        tokens = self._tokens_for_decode(ids, skip_special_tokens)
        if self._decoder is None:
            return " ".join(tokens)
        text = self._decoder.decode(tokens)
        if errors == "strict" and "\ufffd" in text and not any("\ufffd" in t for t in tokens):
            raise DecodeError("the ids decode to bytes that are not valid UTF-8; use errors='replace' to get U+FFFD")
        return text

    def decode_batch(
        self, batch: Iterable[Iterable[int]], errors: str = "replace", *, num_threads: int | None = None,
        skip_special_tokens: bool = False,
    ) -> list[str]:
        """``[decode(ids) for ids in batch]``. ``num_threads`` is accepted for tiktoken's
        signature; decoding is a native table walk, so the batch runs on the calling thread."""
        default_threads(num_threads)  # validates it
        return [self.decode(ids, errors, skip_special_tokens=skip_special_tokens) for ids in batch]

    def decode_bytes_batch(
        self, batch: Iterable[Iterable[int]], *, num_threads: int | None = None, skip_special_tokens: bool = False
    ) -> list[bytes]:
        """``[decode_bytes(ids) for ids in batch]`` (``num_threads`` as in :meth:`decode_batch`)."""
        default_threads(num_threads)
        return [self.decode_bytes(ids, skip_special_tokens=skip_special_tokens) for ids in batch]

    def decode_with_offsets(self, ids: Sequence[int]) -> tuple[str, list[int]]:
        """The text of ``ids`` and, for each token, the index of the first character that
        holds one of its bytes (tiktoken's ``decode_with_offsets``). The ids must decode to
        valid UTF-8 (else :class:`DecodeError`).

        >>> import tokenforge
        >>> tokenforge.get_encoding("cl100k_base").decode_with_offsets([15339, 1917])
        ('hello world', [0, 5])
        """
        token_bytes = self.decode_tokens_bytes(ids)
        offsets = []
        chars = 0
        for b in token_bytes:
            # A token that starts with a continuation byte starts inside the previous character.
            offsets.append(max(0, chars - (1 if b and 0x80 <= b[0] < 0xC0 else 0)))
            chars += sum(1 for c in b if not 0x80 <= c < 0xC0)
        return bytes_to_text(b"".join(token_bytes), "strict"), offsets

    def decode_single_token_bytes(self, token_id: int) -> bytes:
        """The bytes of one token (byte-level BPE: possibly part of a character)."""
        return self._token_bytes(token_id, None)

    def decode_tokens_bytes(self, ids: Iterable[int]) -> list[bytes]:
        return [self._token_bytes(i, pos) for pos, i in enumerate(ids)]

    def _token_bytes(self, token_id: int, pos: int | None) -> bytes:
        token_id = cast(int, _as_int(token_id))  # checked by _is_int below
        t = self._added_by_id.get(token_id) if _is_int(token_id) else None
        if t is not None:
            return t.content.encode("utf-8")
        tok = self._model.id_to_token(token_id) if _is_int(token_id) else None
        if tok is None:
            raise UnknownIdError(self._unknown_id_message(token_id, pos))
        b = self._token_bytes_of(tok)
        return b if b is not None else self.decode([token_id]).encode("utf-8", "surrogatepass")

    def stream_decoder(self, errors: str = "replace", *, skip_special_tokens: bool = False) -> StreamDecoder:
        """A :class:`~tokenforge.decoders.StreamDecoder`: ``step(id)`` returns text as soon
        as it is final, never half a character; joined with ``finish()`` it is ``decode(ids)``."""
        if self.is_byte_level:
            if skip_special_tokens:
                specials = self._specials.by_id

                def token_bytes(i: int) -> bytes:
                    return b"" if i in specials else self._token_bytes(i, None)

                return StreamDecoder(token_bytes=token_bytes, errors=errors)
            return StreamDecoder(token_bytes=self.decode_single_token_bytes, errors=errors)
        check_errors(errors)
        return StreamDecoder(decode=lambda ids: self.decode(ids, errors, skip_special_tokens=skip_special_tokens),
                             errors=errors)

    def decode_stream(self, ids: Iterable[int], errors: str = "replace", *, skip_special_tokens: bool = False) -> Iterator[str]:
        """Yield text chunks for a stream of ids; joined, they equal ``decode(ids)``."""
        return self.stream_decoder(errors, skip_special_tokens=skip_special_tokens).decode_iter(ids)

    def _without_specials(self, ids: list[int]) -> list[int]:
        specials = self._specials.by_id
        return [i for i in ids if not (_is_int(i) and i in specials)]

    def _tokens_for_decode(self, ids: list[int], skip_special_tokens: bool) -> list[str]:
        tokens: list[str] = []
        added = self._added_by_id
        id_to_token = self._model.id_to_token
        append = tokens.append
        # As HF, a model id whose token is a special token's text is skipped too (HF's
        # Unigram trainer can list a special token twice in the vocabulary).
        skip = frozenset(t.content for t in self._added if t.special) if skip_special_tokens else frozenset()
        for pos, i in enumerate(ids):
            if type(i) is not int and not _is_int(i):  # exact ints first: the common case, cheaply
                i = cast(int, _as_int(i))  # checked by _is_int below
                if not _is_int(i):
                    raise UnknownIdError(self._unknown_id_message(i, pos))
            t = added.get(i)
            if t is not None:
                if not (skip_special_tokens and t.special):
                    append(t.content)
                continue
            tok = id_to_token(i)
            if tok is None:
                raise UnknownIdError(self._unknown_id_message(i, pos))
            if tok not in skip:
                append(tok)
        return tokens

    def _unknown_id_message(self, token_id: Any, pos: int | None) -> str:
        where = "" if pos is None else f" at position {pos}"
        if not _is_int(token_id):
            return f"token id{where} must be an int, got {type(token_id).__name__} {token_id!r}"
        holes = "" if len(self) == self.n_vocab else " (with holes)"
        return f"unknown token id {token_id!r}{where}: ids of this tokenizer lie in 0..{self.max_token_value}{holes}"

    # ------------------------------------------------------------ persistence
    def to_dict(self) -> dict[str, Any]:
        """The stages as plain data, each in HF tokenizer.json's shape with its ``"type"``
        (byte-level BPE models in tokenforge's own ``"bpe"`` shape: ids and base64 bytes)."""
        return self._to_dict(with_model=True)

    def _to_dict(self, *, with_model: bool) -> dict[str, Any]:
        """:meth:`to_dict`; without the model (``None``) when ``with_model`` is false, for a
        caller that takes the model's form elsewhere (the fingerprint of a large vocabulary)."""
        data = {
            "name": self._name,
            "normalizer": None if self._normalizer is None else self._normalizer.to_dict(),
            "pre_tokenizer": None if self._pre is None else self._pre.to_dict(),
            "model": self._model.to_dict() if with_model else None,
            "post_processor": None if self._post is None else self._post.to_dict(),
            "decoder": None if self._decoder is None else self._decoder.to_dict(),
            "added_tokens": [t.to_dict() for t in self._added],
        }
        if self.specials_in_text != "raise":
            data["specials_in_text"] = self.specials_in_text
        if self._truncation is not None:
            data["truncation"] = self._truncation.to_dict()
        if self._padding is not None:
            data["padding"] = self._padding.to_dict()
        if self._config:
            data["config"] = dict(self._config)
        return data

    def fingerprint(self) -> str:
        """``"tf1:<sha256>"`` of the parts that decide the ids (not the name, the file or the
        tokenforge version): equal fingerprints, equal ids. See :mod:`tokenforge.fingerprint`."""
        from .fingerprint import fingerprint

        return fingerprint(self)

    def fingerprint_parts(self) -> dict[str, str]:
        """``{part: sha256}`` of each part :meth:`fingerprint` combines (normalizer, pre_tokenizer,
        model, added_tokens, post_processor, decoder, chat_template, truncation, padding)."""
        from .fingerprint import fingerprint_parts

        return fingerprint_parts(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, name: str | None = None, backend: str = "auto") -> "Tokenizer":
        """Build from :meth:`to_dict`'s shape (which HF tokenizer.json also has); an
        unsupported component raises :class:`FileFormatError` naming it and its place."""
        if not isinstance(data, Mapping) or "model" not in data:
            raise FileFormatError("a tokenizer document needs a 'model' object")

        def part(key: str, fn: Callable[[Any], _T]) -> _T:
            try:
                return fn(data.get(key))
            except FileFormatError as exc:
                raise FileFormatError(str(exc) if str(exc).startswith(key) else f"{key}: {exc}") from None
            except (TypeError, ValueError, KeyError, IndexError, AttributeError) as exc:
                # a setting of the wrong kind that the stage's own checks let through
                raise FileFormatError(f"{key}: {type(exc).__name__}: {exc}"[:500]) from None

        raw_added = data.get("added_tokens") or []
        if not isinstance(raw_added, list):
            raise FileFormatError("added_tokens must be a list")
        added = [part("added_tokens", functools.partial(_added_token, d)) for d in raw_added]
        model = part("model", model_from_dict)
        if "version" in data:  # an HF tokenizer.json: HF decides the ids of added tokens
            added = _hf_added_ids(added, model)
        parts: dict[str, Any] = dict(
            normalizer=part("normalizer", normalizer_from_dict),
            pre_tokenizer=part("pre_tokenizer", pre_tokenizer_from_dict),
            post_processor=part("post_processor", post_processor_from_dict),
            decoder=part("decoder", decoder_from_dict),
            truncation=part("truncation", Truncation.from_dict),
            padding=part("padding", Padding.from_dict),
        )
        try:
            return cls(
                model, **parts, added_tokens=added, name=name if name is not None else data.get("name"),
                backend=backend, specials_in_text=data.get("specials_in_text") or "raise", config=data.get("config"),
            )
        except (TypeError, ValueError) as exc:
            if isinstance(exc, FileFormatError):
                raise
            raise FileFormatError(f"{type(exc).__name__}: {exc}"[:500]) from None

    def save(self, path: str | os.PathLike[str], format: str | None = None, *, overwrite: bool = False) -> None:
        """Write the tokenizer atomically. ``format``: ``"tokenforge"`` (one JSON file,
        a sha256 per part), ``"hf"`` (tokenizer.json), ``"tiktoken"`` (a rank file),
        ``"gpt2"`` (``path`` is a directory that gets ``vocab.json`` and ``merges.txt``),
        ``"sentencepiece"`` (a ``.model``), ``"bert_vocab"`` (a ``vocab.txt``) or
        ``"transformers"`` (a folder ``AutoTokenizer`` reads). By default the name decides,
        as :func:`tokenforge.formats.format_for_path` says: ``tokenizer.json`` is HF's
        format, ``*.tiktoken`` a rank file, ``*.model`` SentencePiece, ``*.txt`` a BERT
        vocabulary, an existing folder GPT-2's two files, any other name tokenforge's own.
        A format that cannot express this tokenizer exactly raises :class:`FileFormatError`
        and writes nothing. An existing file is replaced only with ``overwrite=True``;
        otherwise :class:`~tokenforge.errors.OutputExistsError` names it and nothing is
        written (``save_pretrained`` replaces, as ``transformers`` does)."""
        from .formats import check_overwrite, format_for_path, save

        fmt = format_for_path(path) if format is None else format
        check_overwrite(path, fmt, overwrite)
        if fmt in ("tiktoken", "gpt2"):
            _check_read_back(self, path, fmt)
        save(self, path, format=fmt)

    def to_tiktoken(self) -> tiktoken.Encoding:
        """A live ``tiktoken.Encoding`` with the same ranks, pattern and specials
        (needs ``tiktoken`` installed; tokenforge itself never imports it otherwise)."""
        try:
            import tiktoken
        except ImportError:
            raise MissingDependencyError("to_tiktoken() needs the tiktoken package: pip install tiktoken") from None
        try:
            ranks = self.rank_model()
        except FileFormatError as exc:
            raise FileFormatError(f"tiktoken runs byte-level BPE by rank: {exc}") from None
        if self.pattern is None or self._normalizer is not None:
            raise FileFormatError("tiktoken runs byte-level BPE with a split pattern; this tokenizer cannot be expressed")
        if len(set(ranks.vocab.values())) != len(ranks.vocab):
            raise FileFormatError("two ids share the same bytes, which tiktoken's ranks cannot express")
        if any(not t.special for t in self._added) or self._post is not None:
            raise FileFormatError("tiktoken has no non-special added tokens or post-processor")
        return tiktoken.Encoding(
            self._name or "tokenforge",
            pat_str=self.pattern,
            mergeable_ranks=dict(ranks.ranks),
            special_tokens=dict(self._specials.ids),
        )

    def to_hf(self) -> tokenizers.Tokenizer:
        """A live HF ``tokenizers.Tokenizer`` giving the same ids (needs ``tokenizers``;
        components HF cannot express exactly raise :class:`FileFormatError`)."""
        from .formats import to_hf_live

        live: tokenizers.Tokenizer = to_hf_live(self)
        return live

    def __reduce__(self) -> tuple[Callable[..., Tokenizer], tuple[Any, ...]]:
        return (_rebuild, (self.to_dict(), self._name, self._backend))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Tokenizer):
            return NotImplemented
        return self.to_dict() | {"name": None} == other.to_dict() | {"name": None}

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (
            f"<Tokenizer {self._name or 'unnamed'!r}: {type(self._model).__name__}, {len(self)} tokens, "
            f"{len(self._specials)} special, plan={self._plan.describe()!r}>"
        )


#: The parts that decide the ids of encode and decode (see :meth:`Tokenizer.fingerprint_parts`).
_ID_PARTS = ("normalizer", "pre_tokenizer", "model", "added_tokens", "post_processor", "decoder")


def _check_read_back(tok: "Tokenizer", path: str | os.PathLike[str], fmt: str) -> None:
    """Before a save to a format that holds only part of a pipeline (a tiktoken rank file;
    GPT-2's ``vocab.json`` + ``merges.txt``): write it to a temporary folder, read it back as
    :func:`tokenforge.load` reads it (a rank file with this tokenizer's pattern and special
    tokens, as tiktoken users pass them), and raise :class:`FileFormatError` naming every
    part that decides the ids and would come back different. Nothing is written to ``path``."""
    import shutil
    import tempfile
    from pathlib import Path

    from .formats import save
    from .formats.gpt2 import tokenizer_args
    from .formats.tiktoken import parse_ranks

    what = {"tiktoken": "a tiktoken rank file", "gpt2": "vocab.json + merges.txt"}[fmt]
    tmp = Path(tempfile.mkdtemp(prefix="tokenforge-save-"))
    try:
        target = tmp / ("ranks.tiktoken" if fmt == "tiktoken" else "gpt2")
        try:
            save(tok, target, format=fmt)
            if fmt == "tiktoken":
                ranks = parse_ranks(target.read_bytes(), target)
                back = Tokenizer(BPE._from_parsed_ranks(ranks), pre_tokenizer=tok.pattern,
                                 special_tokens=dict(tok.special_tokens))
            else:
                back = Tokenizer(**tokenizer_args(target / "vocab.json", target / "merges.txt"))
        except TokenforgeError as exc:
            reason = str(exc).replace(f"{target}{os.sep}", "").replace(f"{target}: ", "").replace(str(target), "")
            raise FileFormatError(f"{what} cannot hold this tokenizer: {reason} (nothing was written)", path=path) from None
        mine, theirs = tok.fingerprint_parts(), back.fingerprint_parts()
        lost = [part.replace("_", "-") for part in _ID_PARTS if mine[part] != theirs[part]]
        if lost:
            raise FileFormatError(
                f"{what} cannot hold this tokenizer's {', '.join(lost)}: read back, it would give other ids; "
                "save it as 'tokenforge' or 'hf' (nothing was written)", path=path,
            )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


_UNSET: Any = object()
_NOTHING: frozenset[str] = frozenset()
#: The keyword arguments of encode_with_offsets that its byte-level fast path takes.
_SPECIAL_KWARGS = frozenset({"allowed_special", "disallowed_special"})
_EMPTY_POLICY = (frozenset, set, tuple, list)


def _model_max_id(model: Any) -> int:
    if isinstance(model, BPE):
        return model.max_id()
    ids = model.get_vocab().values()
    return max(ids) if ids else -1


def piece_cut(pre: RegexSplit, buf: str, start: int = 0, limit: int | None = None) -> int:
    """Largest cut in ``buf[start:limit]`` between two pre-tokenizer pieces that stays a
    piece boundary however the text continues (0 if there is none).

    Every named pattern decides a piece by looking at most into the piece after
    it, so all but the last ``_HOLD_PIECES`` pieces are final; the cut also needs a
    non-whitespace character before it, because a whitespace run that ends the
    text is one piece where mid-text it may be split in two.
    """
    if limit is None:
        limit = len(buf)
    pieces = pre.split(buf[start:])
    pos = len(buf) - sum(map(len, pieces[len(pieces) - _HOLD_PIECES :]))
    for k in range(len(pieces) - 1 - _HOLD_PIECES, -1, -1):
        if pos <= start:
            break
        if pos <= limit and not buf[pos - 1].isspace():
            return pos
        pos -= len(pieces[k])
    return 0


def _rebuild(data: Mapping[str, Any], name: str | None, backend: str = "auto") -> Tokenizer:
    return Tokenizer.from_dict(data, name=name, backend=backend)


def _added_token(d: Mapping[str, Any], _doc: object) -> AddedToken:
    """``AddedToken.from_dict(d)``, called as a stage reader (with the document's value, unused)."""
    return AddedToken.from_dict(d)


def _hf_added_ids(added: list[AddedToken], model: Model) -> list[AddedToken]:
    """The ids HF gives the ``added_tokens`` of a tokenizer.json: a token the model has keeps
    the model's id; any other gets the next free id after the model's vocabulary, in file
    order, whatever id the file states (HF warns and does the same)."""
    import warnings

    size = len(model) if isinstance(model, BPE) else len(model.get_vocab())
    out: list[AddedToken] = []
    given: dict[str, int] = {}
    for t in added:
        if t.content in given:
            out.append(dataclasses.replace(t, id=given[t.content]))
            continue
        known = model.token_to_id(t.content)
        if known is None:
            top = max(given.values(), default=None)
            known = size if top is None or (top < size and size > 0) else top + 1
        if known != t.id:
            warnings.warn(f"added token {t.content!r} has id {t.id} in the file; HF tokenizers gives it {known}, "
                          "and so does tokenforge", stacklevel=4)
            t = dataclasses.replace(t, id=known)
        given[t.content] = t.id
        out.append(t)
    return out


def _words(value: Any, what: str) -> list[str]:
    """Pre-tokenized input: a list (or tuple) of str."""
    if isinstance(value, str) or not isinstance(value, (list, tuple)) or not all(isinstance(w, str) for w in value):
        raise EncodeInputError(f"with is_pretokenized=True the {what} must be a list of str (words), got {value!r:.80}")
    return list(value)


def _without_overflow(enc: Encoding) -> Encoding:
    """``enc`` alone (its overflowing parts are paired separately)."""
    if not enc.overflowing:
        return enc
    return dataclasses.replace(enc, overflowing=[])


def _last_char_size(data: bytes) -> int:
    """Byte length of the UTF-8 character that ends ``data`` (0 if the end is not one)."""
    for size in range(1, min(4, len(data)) + 1):
        try:
            if len(data[-size:].decode("utf-8")) == 1:
                return size
        except UnicodeDecodeError:
            continue
    return 0


def _is_int(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _id_list(ids: Iterable[int]) -> list[Any]:
    """``ids`` as a list, numpy integer arrays (``encode_to_numpy``'s) as Python ints."""
    tolist = getattr(ids, "tolist", None)
    dtype = getattr(ids, "dtype", None)
    if tolist is not None and dtype is not None and dtype.kind in "iu":
        values: list[Any] = tolist()
        return values
    return [_as_int(i) for i in ids]


def _as_int(x: object) -> object:
    """A numpy integer (anything with ``__index__`` that is not a bool) as an int; other
    values pass through, to be reported where they are used."""
    if type(x) is int or isinstance(x, bool):
        return x
    try:
        return x.__index__()  # type: ignore[attr-defined]
    except (AttributeError, TypeError):
        return x


_WORD = regex.compile(r"\w")


def _is_word(ch: str) -> bool:
    return bool(_WORD.match(ch))


_ADDED_CACHE: dict[tuple[str, ...], regex.Pattern[str]] = {}


def _added_regex(contents: tuple[str, ...]) -> regex.Pattern[str]:
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

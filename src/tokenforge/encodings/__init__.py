"""The standard OpenAI encodings, shipped inside the package and loaded offline,
and ByT5's byte tokenizer (``"bytes"``, built by code: :mod:`tokenforge.encodings.byt5`).

Each rank file is stored zlib-compressed and checked against the sha256 that
tiktoken pins for the uncompressed file before it is used, so a corrupted
install fails loudly instead of encoding wrongly. Patterns, specials and
hashes are the published values (``shared/data/vocab/tiktoken/ENCODINGS.md``).
"""

from __future__ import annotations

import _thread  # a lock without importing threading: ``import tokenforge`` stays light
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Iterable, Mapping, NamedTuple

from ..errors import FileFormatError, UnknownEncodingError, UnknownModelError

if TYPE_CHECKING:
    from ..tokenizer import Tokenizer

ENDOFTEXT = "<|endoftext|>"
FIM_PREFIX = "<|fim_prefix|>"
FIM_MIDDLE = "<|fim_middle|>"
FIM_SUFFIX = "<|fim_suffix|>"
ENDOFPROMPT = "<|endofprompt|>"


class EncodingSpec(NamedTuple):
    name: str
    rank_file: str
    sha256: str
    pattern: str
    special_tokens: Mapping[str, int] = MappingProxyType({})
    explicit_n_vocab: int | None = None


_R50K_SHA = "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930"
_P50K_SHA = "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069"

ENCODINGS: Mapping[str, EncodingSpec] = MappingProxyType(
    {
        spec.name: spec
        for spec in [
            EncodingSpec("gpt2", "r50k_base", _R50K_SHA, "gpt2", {ENDOFTEXT: 50256}, 50257),
            EncodingSpec("r50k_base", "r50k_base", _R50K_SHA, "gpt2", {ENDOFTEXT: 50256}, 50257),
            EncodingSpec("p50k_base", "p50k_base", _P50K_SHA, "gpt2", {ENDOFTEXT: 50256}, 50281),
            EncodingSpec(
                "p50k_edit",
                "p50k_base",
                _P50K_SHA,
                "gpt2",
                {ENDOFTEXT: 50256, FIM_PREFIX: 50281, FIM_MIDDLE: 50282, FIM_SUFFIX: 50283},
            ),
            EncodingSpec(
                "cl100k_base",
                "cl100k_base",
                "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
                "cl100k",
                {ENDOFTEXT: 100257, FIM_PREFIX: 100258, FIM_MIDDLE: 100259, FIM_SUFFIX: 100260, ENDOFPROMPT: 100276},
            ),
            EncodingSpec(
                "o200k_base",
                "o200k_base",
                "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
                "o200k",
                {ENDOFTEXT: 199999, ENDOFPROMPT: 200018},
            ),
        ]
    }
)

# gpt-oss's encoding: o200k_base with the harmony chat format's control tokens; every
# id from 200013 up is a reserved token, so <|reserved_200018|> shares 200018 with
# <|endofprompt|> (which decodes). As published in tiktoken's ``openai_public.py``.
_HARMONY_SPECIALS: dict[str, int] = {
    ENDOFTEXT: 199999,
    ENDOFPROMPT: 200018,
    "<|startoftext|>": 199998,
    "<|reserved_200000|>": 200000,
    "<|reserved_200001|>": 200001,
    "<|return|>": 200002,
    "<|constrain|>": 200003,
    "<|reserved_200004|>": 200004,
    "<|channel|>": 200005,
    "<|start|>": 200006,
    "<|end|>": 200007,
    "<|message|>": 200008,
    "<|reserved_200009|>": 200009,
    "<|reserved_200010|>": 200010,
    "<|reserved_200011|>": 200011,
    "<|call|>": 200012,
    **{f"<|reserved_{i}|>": i for i in range(200013, 201088)},
}
ENCODINGS = MappingProxyType(
    {
        **ENCODINGS,
        "o200k_harmony": EncodingSpec(
            "o200k_harmony", "o200k_base", ENCODINGS["o200k_base"].sha256, "o200k", _HARMONY_SPECIALS, 201088
        ),
    }
)

# Rank files that other projects publish and tokenforge does not ship: recognised by
# their sha256 when loaded, so they get their split pattern and special tokens.
# Meta's Llama 3 ``tokenizer.model`` (a tiktoken rank file of 128,000 ranks): its 256
# specials follow the ranks, in the order of ``llama_models/llama3/tokenizer.py``.
_LLAMA3_SPECIALS = [
    "<|begin_of_text|>", "<|end_of_text|>", "<|reserved_special_token_0|>", "<|reserved_special_token_1|>",
    "<|finetune_right_pad_id|>", "<|step_id|>", "<|start_header_id|>", "<|end_header_id|>", "<|eom_id|>",
    "<|eot_id|>", "<|python_tag|>",
]
_LLAMA3_SPECIALS += [f"<|reserved_special_token_{2 + i}|>" for i in range(256 - len(_LLAMA3_SPECIALS))]
KNOWN_RANK_FILES: Mapping[str, EncodingSpec] = MappingProxyType(
    {
        spec.sha256: spec
        for spec in [
            EncodingSpec(
                "llama3",
                "tokenizer.model",
                "82e9d31979e92ab929cd544440f129d9ecd797b69e327f80f17e1c50d5551b55",
                "llama3",
                {t: 128000 + i for i, t in enumerate(_LLAMA3_SPECIALS)},
                128256,
            ),
        ]
    }
)

# An encoding without a rank file is built by code: ByT5's bytes (Xue et al., 2022).
ENCODINGS = MappingProxyType({**ENCODINGS, "bytes": EncodingSpec("bytes", "", "", "")})

_lock = _thread.allocate_lock()
_loaded: dict[str, "Tokenizer"] = {}


def list_encodings() -> list[str]:
    """Names accepted by :func:`get_encoding`."""
    return list(ENCODINGS)


def encoding_for_hash(sha256: str) -> EncodingSpec | None:
    """The encoding whose rank file has this sha256 (the first name wins): a shipped one,
    or a published rank file tokenforge recognises (Meta's Llama 3 ``tokenizer.model``)."""
    for spec in ENCODINGS.values():
        if spec.sha256 and spec.sha256 == sha256:
            return spec
    return KNOWN_RANK_FILES.get(sha256)


def _data_file(name: str) -> Any:
    """The shipped file ``data/<name>`` of this package (an ``importlib.resources`` path)."""
    from importlib import resources  # here, not at import: it costs ~13 ms

    return resources.files(__package__).joinpath("data", name)


def rank_file_bytes(spec: EncodingSpec) -> bytes:
    """The verified, uncompressed rank file of ``spec``."""
    import hashlib
    import zlib

    resource = _data_file(spec.rank_file + ".tiktoken.zz")
    try:
        data = zlib.decompress(resource.read_bytes())  # zlib: 4x faster to open than xz, a bit larger
    except (OSError, zlib.error) as exc:
        raise FileFormatError(f"shipped rank file {spec.rank_file} cannot be read: {exc}") from None
    digest = hashlib.sha256(data).hexdigest()
    if digest != spec.sha256:
        raise FileFormatError(
            f"shipped rank file {spec.rank_file} has sha256 {digest}, expected {spec.sha256}; "
            "the installation is corrupted"
        )
    return data


def get_encoding(name: str) -> "Tokenizer":
    """Return a standard encoding, offline. The same instance is returned on each
    call (tokenizers are immutable). ``"bytes"`` is ByT5's byte tokenizer
    (:mod:`tokenforge.encodings.byt5`); the others are tiktoken's rank files.

    >>> get_encoding("gpt2").encode("hello world")
    [31373, 995]
    """
    spec = ENCODINGS.get(name)
    if spec is None:
        hint = suggest_encoding(name)
        raise UnknownEncodingError(f"unknown encoding {name!r}{f' ({hint})' if hint else ''}; "
                                   f"known: {', '.join(ENCODINGS)}")
    with _lock:
        tok = _loaded.get(name)
        if tok is None and not spec.rank_file:
            from . import byt5

            tok = _loaded[name] = byt5.byt5(name)
        if tok is None:
            from ..formats.tiktoken import parse_ranks
            from ..models.bpe import BPE
            from ..tokenizer import Tokenizer

            ranks = parse_ranks(rank_file_bytes(spec), f"{spec.rank_file}.tiktoken")
            tok = Tokenizer(BPE._from_parsed_ranks(ranks), pre_tokenizer=spec.pattern, special_tokens=spec.special_tokens, name=name)
            if spec.explicit_n_vocab is not None and tok.n_vocab != spec.explicit_n_vocab:
                raise FileFormatError(f"{name}: n_vocab is {tok.n_vocab}, expected {spec.explicit_n_vocab}")
            _loaded[name] = tok
        return tok


def suggest_encoding(name: object, names: "Iterable[str] | None" = None) -> str | None:
    """A hint for an encoding name :func:`get_encoding` does not know: the encoding a model
    name uses (``gpt-4o``), the name in its usual case and spelling (``CL100K-base``,
    ``cl100k``), or the closest of ``names`` (default: the encodings; ``cl100k_bse``).

    >>> suggest_encoding("cl100k_bse")
    "did you mean 'cl100k_base'?"
    >>> suggest_encoding("gpt-4o")
    "'gpt-4o' is a model name: encoding_for_model('gpt-4o') gives o200k_base"
    """
    import difflib

    if not isinstance(name, str):
        return None
    try:
        model_encoding = encoding_name_for_model(name)
    except UnknownModelError:
        pass
    else:
        return f"{name!r} is a model name: encoding_for_model({name!r}) gives {model_encoding}"
    key = name.strip().lower().replace("-", "_")
    known = list(ENCODINGS if names is None else names)
    for candidate in (key, key + "_base"):
        if candidate in known:
            return f"did you mean {candidate!r}?"
    close = difflib.get_close_matches(key, known, n=1)
    return f"did you mean {close[0]!r}?" if close else None


# Which encoding each OpenAI model uses (the same table as tiktoken's model.py).
_MODELS_BY_ENCODING: dict[str, tuple[str, ...]] = {
    "o200k_base": ("o1", "o3", "o4-mini", "gpt-5", "gpt-4.1", "gpt-4o"),
    "cl100k_base": (
        "gpt-4", "gpt-3.5-turbo", "gpt-3.5", "gpt-35-turbo", "davinci-002", "babbage-002",
        "text-embedding-ada-002", "text-embedding-3-small", "text-embedding-3-large",
    ),
    "p50k_base": (
        "text-davinci-003", "text-davinci-002", "code-davinci-002", "code-davinci-001", "code-cushman-002",
        "code-cushman-001", "davinci-codex", "cushman-codex",
    ),
    "p50k_edit": ("text-davinci-edit-001", "code-davinci-edit-001"),
    "r50k_base": (
        "text-davinci-001", "text-curie-001", "text-babbage-001", "text-ada-001", "davinci", "curie", "babbage", "ada",
        "text-similarity-davinci-001", "text-similarity-curie-001", "text-similarity-babbage-001",
        "text-similarity-ada-001", "text-search-davinci-doc-001", "text-search-curie-doc-001",
        "text-search-babbage-doc-001", "text-search-ada-doc-001", "code-search-babbage-code-001",
        "code-search-ada-code-001",
    ),
    "gpt2": ("gpt2", "gpt-2"),
}
MODEL_TO_ENCODING: dict[str, str] = {m: enc for enc, models in _MODELS_BY_ENCODING.items() for m in models}
#: Model-name prefixes (versioned and fine-tuned models), checked in this order.
MODEL_PREFIX_TO_ENCODING: dict[str, str] = {
    "o1-": "o200k_base", "o3-": "o200k_base", "o4-mini-": "o200k_base", "gpt-5": "o200k_base",
    "gpt-4.5-": "o200k_base", "gpt-4.1-": "o200k_base", "chatgpt-4o-": "o200k_base", "gpt-4o-": "o200k_base",
    "gpt-4-": "cl100k_base", "gpt-3.5-turbo-": "cl100k_base", "gpt-35-turbo-": "cl100k_base",
    "gpt-oss-": "o200k_harmony",
    "ft:gpt-4o": "o200k_base", "ft:gpt-4": "cl100k_base", "ft:gpt-3.5-turbo": "cl100k_base",
    "ft:davinci-002": "cl100k_base", "ft:babbage-002": "cl100k_base",
}


def encoding_name_for_model(model_name: str) -> str:
    """The name of the encoding an OpenAI model uses.

    >>> encoding_name_for_model("gpt-4o-mini-2024-07-18")
    'o200k_base'
    >>> encoding_name_for_model("text-embedding-3-small")
    'cl100k_base'
    """
    if model_name in MODEL_TO_ENCODING:
        return MODEL_TO_ENCODING[model_name]
    for prefix, name in MODEL_PREFIX_TO_ENCODING.items():
        if model_name.startswith(prefix):
            return name
    import difflib

    close = difflib.get_close_matches(str(model_name).lower(), list(MODEL_TO_ENCODING), n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    raise UnknownModelError(
        f"no known encoding for model {model_name!r}{hint}; use get_encoding() with one of {', '.join(ENCODINGS)}"
    )


def encoding_for_model(model_name: str) -> "Tokenizer":
    """The encoding an OpenAI model uses, offline (``tiktoken.encoding_for_model``).

    >>> encoding_for_model("gpt-4").name
    'cl100k_base'
    """
    name = encoding_name_for_model(model_name)
    if name not in ENCODINGS:
        raise UnknownEncodingError(
            f"model {model_name!r} uses the encoding {name!r}, which tokenforge does not ship "
            f"(shipped: {', '.join(ENCODINGS)})"
        )
    return get_encoding(name)


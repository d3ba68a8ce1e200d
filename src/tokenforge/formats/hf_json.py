"""HF ``tokenizer.json``: write a tokenizer in HF's shape.

Reading needs no code here: a ``tokenizer.json`` already is the shape of
:meth:`tokenforge.Tokenizer.to_dict`, read by :meth:`~tokenforge.Tokenizer.from_dict`
(every normalizer, pre-tokenizer, model, post-processor and decoder HF defines
for these families). Whether a byte-level file then runs on the native rank
merge is decided by :mod:`tokenforge._plans`.

Writing. ``to_hf_dict`` gives the document for a byte-level BPE tokenizer by
rank (its merges, derived from the ranks when the model has none, with HF's
byte-level components) or for any tokenizer whose every component exists in
HF tokenizers; a component that HF cannot express exactly (SentencePiece's
own normalizer and decoder, sentencepiece-scored BPE, Unigram with
sentencepiece piece types) raises :class:`FileFormatError` naming it. A
SentencePiece tokenizer (a ``.model``) is written in the form ``transformers``'
converters give it, read back and checked on whole documents and their lines
(:func:`tokenforge.sentencepiece.hf.hf_document`): exact for BPE models
without a charsmap (Llama 2, Mistral), refused otherwise unless ``allow_lossy``.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any

from .. import bytelevel
from .._io import atomic_write
from ..errors import FileFormatError, MissingDependencyError

if TYPE_CHECKING:
    from ..tokenizer import Tokenizer


def onig_pattern(pattern: str) -> str:
    """``pattern`` as HF's regex engine reads it the same way (see ``oniguruma_form``)."""
    from ..pretokenizers import oniguruma_form

    return oniguruma_form(pattern)


def tokenizer_to_hf_dict(tok: "Tokenizer") -> dict[str, Any]:
    """HF's document for a byte-level :class:`~tokenforge.Tokenizer` (same ids in HF)."""
    if tok.pre_tokenizer is None:
        raise FileFormatError("a tokenizer without a split pattern has no exact HF form (HF always pre-tokenizes)")
    model = tok.model
    merges = model.derive_merges()
    return {
        "version": "1.0",
        "truncation": None if tok.truncation is None else tok.truncation.to_dict(),
        "padding": None if tok.padding is None else tok.padding.to_dict(),
        "added_tokens": [
            {"id": i, "content": t, "single_word": False, "lstrip": False, "rstrip": False, "normalized": False, "special": True}
            for t, i in sorted(tok.special_tokens.items(), key=lambda kv: kv[1])
        ],
        "normalizer": None,
        "pre_tokenizer": {
            "type": "Sequence",
            "pretokenizers": [
                {"type": "Split", "pattern": {"Regex": onig_pattern(tok.pattern)}, "behavior": "Isolated", "invert": False},
                {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False},
            ],
        },
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": None,
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": False,
            "byte_fallback": False,
            "ignore_merges": True,
            # Specials are in the model's vocab too, as in HF's own files: HF gives an added
            # token that is missing from the model a new id, even when its id is a hole.
            "vocab": dict(
                sorted(
                    [(bytelevel.encode_bytes(b), i) for i, b in model.vocab.items()] + list(tok.special_tokens.items()),
                    key=lambda kv: kv[1],
                )
            ),
            "merges": [[bytelevel.encode_bytes(a), bytelevel.encode_bytes(b)] for a, b in merges],
        },
    }


#: Component types HF tokenizers reads, per section (the ones tokenforge writes in HF's shape).
_HF_TYPES = {
    "normalizer": {"NFC", "NFD", "NFKC", "NFKD", "Lowercase", "StripAccents", "BertNormalizer", "Replace",
                   "Prepend", "Strip", "Precompiled", "ByteLevel", "Nmt", "Sequence"},
    "pre_tokenizer": {"Split", "Whitespace", "WhitespaceSplit", "BertPreTokenizer", "Punctuation", "Digits",
                      "CharDelimiterSplit", "Metaspace", "ByteLevel", "FixedLength", "UnicodeScripts", "Sequence"},
    "post_processor": {"TemplateProcessing", "BertProcessing", "RobertaProcessing", "ByteLevel", "Sequence"},
    "decoder": {"ByteLevel", "Metaspace", "WordPiece", "ByteFallback", "Fuse", "Strip", "Replace", "BPEDecoder",
                "CTC", "Sequence"},
    "model": {"BPE", "WordPiece", "Unigram", "WordLevel"},
}
_WHY = {
    "SentencePiece": "sentencepiece's own normalization/decoding (HF's Precompiled reads the charsmap differently)",
    "SentencePieceBPE": "BPE merged by sentencepiece piece scores, which HF's merge ranks do not always reproduce",
    "Identity": "no HF equivalent",
    "regex": "tokenforge's byte-level split",
}


def _check_hf(section: str, d: Any, where: str) -> None:
    if d is None:
        return
    kind = d.get("type")
    if kind not in _HF_TYPES[section]:
        why = _WHY.get(kind, "not a component HF tokenizers has")
        raise FileFormatError(f"{where} of type {kind!r} cannot be written as an exact HF tokenizer.json: {why}")
    if kind == "Sequence":
        key = {"normalizer": "normalizers", "pre_tokenizer": "pretokenizers", "post_processor": "processors",
               "decoder": "decoders"}[section]
        for n, item in enumerate(d.get(key) or []):
            _check_hf(section, item, f"{where}.{key}[{n}]")
    if section == "model" and kind == "Unigram" and d.get("piece_types"):
        raise FileFormatError(
            f"{where}: a Unigram model with sentencepiece piece types (control, byte, user-defined pieces are "
            "matched differently) cannot be written as an exact HF tokenizer.json"
        )


def pipeline_to_hf_dict(p: "Tokenizer") -> dict[str, Any]:
    """HF's document for a :class:`~tokenforge.Tokenizer` whose components all exist in HF."""
    parts = p.to_dict()
    data = {"version": "1.0", "truncation": parts.get("truncation"), "padding": parts.get("padding")}
    for key in ("added_tokens", "normalizer", "pre_tokenizer", "post_processor", "decoder", "model"):
        data[key] = parts[key]
    for section in ("normalizer", "pre_tokenizer", "post_processor", "decoder", "model"):
        _check_hf(section, data[section], section)
    return data


def to_hf_dict(tok: "Tokenizer") -> dict[str, Any]:
    """HF's document for ``tok``: byte-level BPE by rank is written with HF's byte-level
    components; a SentencePiece tokenizer in its checked HF form (see :func:`hf_document`);
    every other tokenizer as its stages, which must all exist in HF."""
    return hf_document(tok)[0]


def hf_document(tok: "Tokenizer", *, allow_lossy: bool = False, path: object = None) -> tuple[dict[str, Any], dict[str, Any]]:
    """HF's document for ``tok`` and how exact it is: ``{"exact", "reason", "documents",
    "lines", "tokens", "differences"}``. Only a SentencePiece tokenizer can have an
    inexact form (written only with ``allow_lossy=True``, else :class:`FileFormatError`);
    its form is checked on whole documents and lines (the counts say how many), every
    other form is exact by construction (counts 0)."""
    from ..models.bpe import BPE

    if _is_sentencepiece(tok):
        from ..sentencepiece.hf import hf_document as sentencepiece_hf_document

        return sentencepiece_hf_document(tok, allow_lossy=allow_lossy, path=path)
    doc = tokenizer_to_hf_dict(tok) if isinstance(tok.model, BPE) else pipeline_to_hf_dict(tok)
    return doc, {"exact": True, "reason": None, "documents": 0, "lines": 0, "tokens": 0, "differences": []}


def _is_sentencepiece(tok: "Tokenizer") -> bool:
    norm = tok.normalizer
    return norm is not None and getattr(norm, "type_name", None) == "SentencePiece"


def to_hf_live(tok: "Tokenizer"):
    """A live ``tokenizers.Tokenizer`` for ``tok`` (the package must be installed)."""
    try:
        from tokenizers import Tokenizer as HFTokenizer
    except ImportError:
        raise MissingDependencyError("to_hf() needs the tokenizers package: pip install tokenizers") from None
    return HFTokenizer.from_str(json.dumps(to_hf_dict(tok), ensure_ascii=False))


def save_hf(tok: "Tokenizer", path: str | os.PathLike, *, allow_lossy: bool = False) -> dict[str, Any]:
    """Write ``tokenizer.json`` atomically (``path`` may be a directory); returns the
    report of :func:`hf_document`."""
    if os.path.isdir(path):
        path = os.path.join(path, "tokenizer.json")
    doc, report = hf_document(tok, allow_lossy=allow_lossy, path=path)
    text = json.dumps(doc, ensure_ascii=False, indent=2) + "\n"
    with atomic_write(path) as f:
        f.write(text)
    return report


#: transformers' special-token attributes, with the token strings each one is guessed from
#: when the tokenizer's ``config`` does not name it.
_SPECIAL_ROLES = {
    "bos_token": ("<s>", "<|begin_of_text|>", "<bos>", "<|startoftext|>"),
    "eos_token": ("</s>", "<|end_of_text|>", "<|endoftext|>", "<eos>"),
    "unk_token": ("<unk>", "[UNK]", "<|unk|>"),
    "pad_token": ("<pad>", "[PAD]", "<|pad|>"),
    "cls_token": ("[CLS]",),
    "sep_token": ("[SEP]",),
    "mask_token": ("[MASK]", "<mask>"),
}
#: The keys of tokenizer_config.json that tokenforge reads and writes.
CONFIG_KEYS = (*_SPECIAL_ROLES, "model_max_length", "chat_template", "add_bos_token", "add_eos_token",
               "clean_up_tokenization_spaces", "tokenizer_class", "padding_side", "truncation_side")


def transformers_config(tok: "Tokenizer") -> dict[str, Any]:
    """``tokenizer_config.json`` for ``tok``: its :attr:`~tokenforge.Tokenizer.config`, with
    the special-token roles it does not name guessed from its special tokens."""
    added = {t.content for t in tok.added_tokens}

    def has(token: str) -> bool:  # an added token, or (not for byte-level vocabularies) a model token
        return token in added or (not tok.is_byte_level and tok.model.token_to_id(token) is not None)

    config: dict[str, Any] = {"tokenizer_class": "PreTrainedTokenizerFast", "clean_up_tokenization_spaces": False}
    for role, candidates in _SPECIAL_ROLES.items():
        chosen = next((c for c in candidates if has(c)), None)
        if chosen is not None:
            config[role] = chosen
    if tok.padding is not None:
        config["pad_token"] = tok.padding.pad_token
    config.update({k: v for k, v in tok.config.items() if k != "tokenizer_class"})
    config["added_tokens_decoder"] = {
        str(t.id): {"content": t.content, "lstrip": t.lstrip, "normalized": t.normalized, "rstrip": t.rstrip,
                    "single_word": t.single_word, "special": t.special}
        for t in sorted(tok.added_tokens, key=lambda t: t.id)
    }
    return config


def save_transformers(tok: "Tokenizer", directory: str | os.PathLike, *, allow_lossy: bool = False) -> dict[str, Any]:
    """A ``transformers`` folder: ``tokenizer.json`` (exact, or :class:`FileFormatError`
    unless ``allow_lossy``), ``tokenizer_config.json`` and ``special_tokens_map.json``,
    written together atomically. Returns the report of :func:`hf_document`."""
    from pathlib import Path

    from .._io import atomic_write_files

    doc, report = hf_document(tok, allow_lossy=allow_lossy, path=Path(directory) / "tokenizer.json")
    config = transformers_config(tok)
    special_map = {k: config[k] for k in _SPECIAL_ROLES if k in config}
    d = Path(directory)
    if d.exists() and not d.is_dir():
        raise FileFormatError("a transformers tokenizer is a folder; this path is a file", path=d)
    d.mkdir(parents=True, exist_ok=True)
    dump = lambda obj: json.dumps(obj, ensure_ascii=False, indent=2) + "\n"  # noqa: E731
    atomic_write_files({d / "tokenizer.json": dump(doc), d / "tokenizer_config.json": dump(config),
                        d / "special_tokens_map.json": dump(special_map)})
    return report


#: The keys of a ``tokenizer.json`` (HF tokenizers' ``TokenizerImpl``): HF refuses a file with
#: any other key at the top level, and so does :func:`check_hf_document`.
HF_TOP_LEVEL_KEYS = ("version", "truncation", "padding", "added_tokens", "normalizer", "pre_tokenizer",
                     "post_processor", "decoder", "model")


def check_hf_document(data: dict[str, Any], path: object) -> None:
    """Refuse the top level of a ``tokenizer.json`` that HF tokenizers refuses: a key it does not
    read (its reader stops there with ``expected `,` or `}```), or a ``version`` other than
    ``"1.0"`` (the only one HF knows; the key may be left out)."""
    for key in data:
        if key not in HF_TOP_LEVEL_KEYS:
            raise FileFormatError(
                f"unknown top-level key {key!r} (a tokenizer.json holds {', '.join(HF_TOP_LEVEL_KEYS)}); "
                "HF tokenizers refuses the file too",
                path=path,
            )
    if "version" in data and data["version"] != "1.0":
        raise FileFormatError(
            f"field 'version' is {data['version']!r}; the only tokenizer.json version is \"1.0\" "
            "(HF tokenizers refuses the file too)",
            path=path,
        )


def read_transformers_config(directory: str | os.PathLike) -> dict[str, Any]:
    """The settings of a ``transformers`` folder: ``tokenizer_config.json``,
    ``special_tokens_map.json`` and a separate ``chat_template.jinja``/``.json`` when present
    (token values that are ``{"content": ...}`` objects become their strings)."""
    from pathlib import Path

    from .._io import parse_json, read_text

    d = Path(directory)
    merged: dict[str, Any] = {}
    for name in ("special_tokens_map.json", "tokenizer_config.json"):
        f = d / name
        if not f.is_file():
            continue
        data = parse_json(read_text(f), f)
        if not isinstance(data, dict):
            raise FileFormatError("expected a JSON object", path=f)
        merged.update(data)
    if (d / "chat_template.jinja").is_file():
        merged["chat_template"] = read_text(d / "chat_template.jinja")
    elif (d / "chat_template.json").is_file():
        try:
            merged["chat_template"] = json.loads(read_text(d / "chat_template.json")).get("chat_template")
        except (json.JSONDecodeError, AttributeError):
            raise FileFormatError("expected {\"chat_template\": ...}", path=d / "chat_template.json") from None
    out: dict[str, Any] = {}
    for key in CONFIG_KEYS:
        value = merged.get(key)
        if isinstance(value, dict) and "content" in value:
            value = value["content"]
        if value is not None:
            out[key] = value
    return out

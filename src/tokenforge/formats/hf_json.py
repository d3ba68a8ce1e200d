"""HF ``tokenizer.json``: read it into the fastest exact tokenforge object, write it back.

Reading. Every component HF tokenizers defines for the pipeline families is
read by :meth:`tokenforge.pipeline.Pipeline.from_dict`. A file that is plain
byte-level BPE (no normalizer; the GPT-2 byte-level pre-tokenizer, alone or
after one regex ``Split``; a BPE model whose merge order agrees with its ids;
specials only as added tokens) becomes a :class:`~tokenforge.Tokenizer`
instead, which encodes with the native core. That shortcut is taken only
when it is exact: HF merges pairs by merge priority, tiktoken-style BPE by the
rank of the merged token, and the two agree when every merge makes a distinct
token and merge ``k`` makes a token whose id grows with ``k``; the whole-piece
lookup of rank BPE also needs every multi-byte token to be made by a merge,
unless the file sets ``ignore_merges`` (as Llama 3 does).

Writing. ``to_hf_dict`` gives the document for a ``Tokenizer`` (its merges,
derived from the ranks when the model has none) or for a ``Pipeline`` whose
every component exists in HF tokenizers; a component that HF cannot express
exactly (SentencePiece's own normalizer and decoder, sentencepiece-scored BPE,
Unigram with sentencepiece piece types) raises :class:`FileFormatError`
naming it.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any

from .. import bytelevel
from .._io import atomic_write
from ..errors import FileFormatError

if TYPE_CHECKING:
    from ..pipeline import Pipeline
    from ..tokenizer import Tokenizer


def _byte_level_pattern(pre: Any) -> str | None:
    """The split regex of a pure byte-level pre-tokenizer, else ``None``."""
    from ..pretokenizers import GPT2_ORIGINAL_PATTERN

    if not isinstance(pre, dict):
        return None
    kind = pre.get("type")
    if kind == "ByteLevel" and pre.get("use_regex", True) and not pre.get("add_prefix_space", True):
        return GPT2_ORIGINAL_PATTERN
    if kind == "Sequence":
        items = pre.get("pretokenizers") or []
        if (
            len(items) == 2
            and items[0].get("type") == "Split"
            and "Regex" in (items[0].get("pattern") or {})
            and items[0].get("behavior") == "Isolated"
            and not items[0].get("invert", False)
            and items[1].get("type") == "ByteLevel"
            and not items[1].get("add_prefix_space", True)
            and not items[1].get("use_regex", True)
        ):
            return items[0]["pattern"]["Regex"]
    return None


def fast_tokenizer_from_hf(data: dict, name: str | None = None) -> "Tokenizer | None":
    """A native byte-level :class:`~tokenforge.Tokenizer` equal to the HF document, or
    ``None`` when the document is not plain byte-level BPE (see the module docstring)."""
    from ..models.bpe import BPE
    from ..tokenizer import Tokenizer

    model = data.get("model") or {}
    if data.get("normalizer") is not None or model.get("type", "BPE") != "BPE" or "merges" not in model:
        return None
    if any(model.get(k) for k in ("dropout", "unk_token", "continuing_subword_prefix", "end_of_word_suffix", "byte_fallback")):
        return None
    decoder = data.get("decoder")
    if not (isinstance(decoder, dict) and decoder.get("type") == "ByteLevel"):
        return None
    post = data.get("post_processor")
    if post is not None and post.get("type") not in ("ByteLevel",):
        return None
    pattern = _byte_level_pattern(data.get("pre_tokenizer"))
    if pattern is None:
        return None
    added = data.get("added_tokens") or []
    if any(a.get("lstrip") or a.get("rstrip") or a.get("single_word") or not a.get("special") for a in added):
        return None
    specials = {a["content"]: a["id"] for a in added}
    vocab: dict[int, bytes] = {}
    for tok, i in model["vocab"].items():
        if tok in specials:
            continue
        try:
            vocab[i] = bytelevel.decode_string(tok)
        except KeyError:
            return None
    ranks: dict[bytes, int] = {}
    for i, b in vocab.items():
        if b in ranks:
            return None
        ranks[b] = i
    merges = []
    last = -1
    made: set[bytes] = set()
    for m in model["merges"]:
        a, b = m.split(" ", 1) if isinstance(m, str) else m
        try:
            left, right = bytelevel.decode_string(a), bytelevel.decode_string(b)
        except KeyError:
            return None
        r = ranks.get(left + right)
        if r is None or r <= last or left not in ranks or right not in ranks:
            return None
        last = r
        made.add(left + right)
        merges.append((left, right))
    if not model.get("ignore_merges", False) and any(len(t) > 1 and t not in made for t in ranks):
        return None
    if len([t for t in ranks if len(t) == 1]) != 256:
        return None
    try:
        return Tokenizer(BPE(vocab, merges), pre_tokenizer=pattern, special_tokens=specials, name=name)
    except FileFormatError:
        return None


def onig_pattern(pattern: str) -> str:
    r"""``pattern`` as HF's regex engine (Oniguruma) reads it the same way.

    Oniguruma takes ``?+``, ``*+`` and ``++`` as possessive, like the ``regex``
    module, but ``{m,n}+`` as the interval repeated once or more: cl100k's
    ``\p{N}{1,3}+`` would cut ``1919`` as one piece. At the end of an
    alternative a possessive interval matches as the greedy one, so it is
    written plainly.
    """
    import regex

    return regex.sub(r"(\{\d+(?:,\d*)?\})\+", r"\1", pattern)


def tokenizer_to_hf_dict(tok: "Tokenizer") -> dict[str, Any]:
    """HF's document for a byte-level :class:`~tokenforge.Tokenizer` (same ids in HF)."""
    if tok.pre_tokenizer is None:
        raise FileFormatError("a tokenizer without a split pattern has no exact HF form (HF always pre-tokenizes)")
    model = tok.model
    merges = model.derive_merges()
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
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
                   "Prepend", "Strip", "Precompiled", "Sequence"},
    "pre_tokenizer": {"Split", "Whitespace", "WhitespaceSplit", "BertPreTokenizer", "Punctuation", "Digits",
                      "CharDelimiterSplit", "Metaspace", "ByteLevel", "Sequence"},
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


def pipeline_to_hf_dict(p: "Pipeline") -> dict[str, Any]:
    """HF's document for a :class:`~tokenforge.pipeline.Pipeline` whose components all exist in HF."""
    data = p.to_dict()
    for section in ("normalizer", "pre_tokenizer", "post_processor", "decoder", "model"):
        _check_hf(section, data[section], section)
    return data


def to_hf_dict(tok: "Tokenizer | Pipeline") -> dict[str, Any]:
    from ..pipeline import Pipeline

    return pipeline_to_hf_dict(tok) if isinstance(tok, Pipeline) else tokenizer_to_hf_dict(tok)


def to_hf_live(tok: "Tokenizer | Pipeline"):
    """A live ``tokenizers.Tokenizer`` for ``tok`` (the package must be installed)."""
    try:
        from tokenizers import Tokenizer as HFTokenizer
    except ImportError:
        raise ImportError("to_hf() needs the tokenizers package: pip install tokenizers") from None
    return HFTokenizer.from_str(json.dumps(to_hf_dict(tok), ensure_ascii=False))


def save_hf(tok: "Tokenizer | Pipeline", path: str | os.PathLike) -> None:
    """Write ``tokenizer.json`` atomically (``path`` may be a directory)."""
    text = json.dumps(to_hf_dict(tok), ensure_ascii=False, indent=2) + "\n"
    if os.path.isdir(path):
        path = os.path.join(path, "tokenizer.json")
    with atomic_write(path) as f:
        f.write(text)

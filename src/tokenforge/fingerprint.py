"""A tokenizer's fingerprint: one hash that changes exactly when its ids can change.

A training run, a KV/prefix cache, a draft model for speculative decoding and a
distilled student all assume the tokenizer that made their ids. File names and
library versions do not say whether that is still true; the stages do. So the
fingerprint hashes each part that decides the ids, separately, and combines them:

``normalizer``, ``pre_tokenizer``, ``model``, ``added_tokens`` (special and added
tokens with their flags, and the policy for special-token text), ``post_processor``,
``decoder``, ``chat_template`` (the Jinja template of the tokenizer's
``tokenizer_config.json`` and the token names it sees), ``truncation``, ``padding``.

Each part is the stage's ``to_dict()`` (HF ``tokenizer.json``'s shapes), hashed as
canonical JSON (sorted keys, no whitespace, UTF-8) with sha256, so the result is the
same in every process whatever ``PYTHONHASHSEED`` is. The fingerprint is
``"tf1:"`` + the sha256 of the canonical JSON of ``{"scheme": "tf1", "parts": {...}}``.

What is deliberately *not* in it:

* the tokenizer's ``name`` and the file it came from;
* the tokenforge version that wrote a file. :mod:`tokenforge.formats.native` records
  that version beside the fingerprint, but two versions that give the same ids must
  agree, or every upgrade would invalidate every prepared corpus and cache;
* the merge list of a byte-level rank model (tiktoken's ranks, GPT-2): tokenforge
  merges by rank, so the ids are decided by the ``id -> bytes`` table alone, and the
  merges a file spells out (or leaves to be derived) do not change them.

The fingerprint describes what runs, not how the file spells it: a byte-level BPE
written as an HF ``tokenizer.json`` (string tokens, merges by priority, a ``Split``
+ ``ByteLevel`` pre-tokenizer) that tokenforge runs as rank BPE is fingerprinted as
the rank model and split pattern it runs (the same as the tiktoken file's), on the
native core and on the Python path alike (``TOKENFORGE_BACKEND`` does not change it). Equal
fingerprints mean equal ids; different fingerprints say which part differs, and
:func:`tokenforge.analysis.diff.diff` says whether the ids differ on real text.

>>> import tokenforge
>>> fp = tokenforge.get_encoding("gpt2").fingerprint()
>>> fp.startswith("tf1:"), len(fp)
(True, 68)
>>> fp == tokenforge.get_encoding("r50k_base").fingerprint()
True
"""

from __future__ import annotations

import hashlib
import json
import struct
import weakref
from typing import Any

__all__ = ["PARTS", "SCHEME", "canonical_json", "fingerprint", "fingerprint_parts", "fingerprint_record", "part_forms"]

#: The name of the scheme, and the prefix of every fingerprint.
SCHEME = "tf1"
#: The parts that decide the ids, in the order reports show them.
PARTS = (
    "normalizer",
    "pre_tokenizer",
    "model",
    "added_tokens",
    "post_processor",
    "decoder",
    "chat_template",
    "truncation",
    "padding",
)


def canonical_json(obj: Any) -> str:
    """Sorted keys, no whitespace, non-ASCII kept: the same text for the same data."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _sha256(obj: Any) -> str:
    return hashlib.sha256(canonical_json(obj).encode("utf-8", "surrogatepass")).hexdigest()


def _pattern_form(pattern: Any) -> dict[str, Any]:
    d = dict(pattern.to_dict())
    if getattr(pattern, "_onig", False):  # a custom pattern matched as HF's Oniguruma does
        d["oniguruma"] = True
    return d


def _rank_model_form(model: Any) -> dict[str, Any]:
    """A rank model by its ``id -> bytes`` table (ranks are ids; merges do not decide ids),
    hashed as ``(id, length, bytes)`` records in id order: one sha256 over the table, not a
    JSON list of a hundred thousand base64 strings."""
    vocab = model.vocab
    blob = b"".join([struct.pack("<II", i, len(t)) + t for i, t in sorted(vocab.items())])
    return {"type": "bpe", "vocab_sha256": hashlib.sha256(blob).hexdigest(), "size": len(vocab)}


def _rank_forms(tokenizer: Any) -> tuple[Any, Any] | None:
    """``(pre_tokenizer form, model form)`` of a byte-level BPE that runs by rank, or ``None``.

    Decided from the stages, not from the plan the backend picked, so that
    ``TOKENFORGE_BACKEND=python`` gives the same fingerprint as the native core."""
    from ._plans import RankBPEPlan, byte_level_pattern
    from .errors import FileFormatError
    from .models.bpe import BPE, PieceBPE
    from .pretokenizers import RegexSplit

    if tokenizer.normalizer is not None:
        return None
    model, pre = tokenizer.model, tokenizer.pre_tokenizer
    if isinstance(model, BPE) and (pre is None or isinstance(pre, RegexSplit)):
        return (None if pre is None else _pattern_form(pre)), _rank_model_form(model)
    if isinstance(model, PieceBPE) and tokenizer._is_byte_level_pieces():
        plan = tokenizer._plan
        if isinstance(plan, RankBPEPlan):  # the core checked the merges already
            ranks = plan.ranks_model
        else:
            try:
                ranks = tokenizer.rank_model()
            except FileFormatError:  # merges that ranks do not imply: it runs by merge priority
                return None
        pattern = RegexSplit(byte_level_pattern(pre), oniguruma=True)  # as an HF Split matches
        return _pattern_form(pattern), _rank_model_form(ranks)
    return None


def part_forms(tokenizer: Any) -> dict[str, Any]:
    """The data each part's hash is taken of (see the module docstring)."""
    from .models.bpe import BPE

    data = tokenizer._to_dict(with_model=False)
    pre: Any = data["pre_tokenizer"]
    model: Any
    ranked = _rank_forms(tokenizer)
    if ranked is not None:  # what runs: the rank model and its split pattern
        pre, model = ranked
    elif isinstance(tokenizer.model, BPE):
        model = _rank_model_form(tokenizer.model)
    else:
        model = tokenizer.model.to_dict()
    added = sorted(data["added_tokens"], key=lambda t: (t["id"], t["content"]))
    config = tokenizer.config
    chat: Any = None
    if config.get("chat_template") is not None:
        names = {k: v for k, v in config.items() if k.endswith("_token") and isinstance(v, str)}
        chat = {"template": config["chat_template"], "token_names": names}
    return {
        "normalizer": data["normalizer"],
        "pre_tokenizer": pre,
        "model": model,
        "added_tokens": {"tokens": added, "specials_in_text": tokenizer.specials_in_text},
        "post_processor": data["post_processor"],
        "decoder": data["decoder"],
        "chat_template": chat,
        "truncation": data.get("truncation"),
        "padding": data.get("padding"),
    }


# id(tokenizer) -> (weak reference, parts): tokenizers are immutable, so a part hash
# never goes stale; the weak reference tells a reused id from the same object.
_CACHE: dict[int, tuple[Any, dict[str, str]]] = {}


def fingerprint_parts(tokenizer: Any) -> dict[str, str]:
    """``{part: sha256 hex}`` for every part in :data:`PARTS`.

    >>> import tokenforge
    >>> list(fingerprint_parts(tokenforge.get_encoding("gpt2")))[:3]
    ['normalizer', 'pre_tokenizer', 'model']
    """
    hit = _CACHE.get(id(tokenizer))
    if hit is not None and hit[0]() is tokenizer:
        return dict(hit[1])
    forms = part_forms(tokenizer)
    parts = {name: _sha256(forms[name]) for name in PARTS}
    key = id(tokenizer)
    try:
        ref = weakref.ref(tokenizer, lambda _r, key=key: _CACHE.pop(key, None))
    except TypeError:
        return parts
    _CACHE[key] = (ref, parts)
    return dict(parts)


def combine(parts: dict[str, str]) -> str:
    """The fingerprint of a ``{part: hash}`` mapping (as :func:`fingerprint_parts` gives)."""
    return f"{SCHEME}:" + _sha256({"scheme": SCHEME, "parts": parts})


def fingerprint(tokenizer: Any) -> str:
    """``"tf1:<sha256 hex>"``: equal for two tokenizers whose id-deciding parts are equal."""
    return combine(fingerprint_parts(tokenizer))


def fingerprint_record(tokenizer: Any) -> dict[str, Any]:
    """What a native file stores: the fingerprint, its parts, and the tokenforge version
    that wrote it (recorded for people; it is not part of the fingerprint)."""
    from ._version import __version__

    parts = fingerprint_parts(tokenizer)
    return {"id": combine(parts), "parts": parts, "written_by": f"tokenforge {__version__}"}


def differing_parts(a: dict[str, str], b: dict[str, str]) -> list[str]:
    """The parts whose hashes differ between two :func:`fingerprint_parts` results."""
    return [p for p in (*PARTS, *sorted((set(a) | set(b)) - set(PARTS))) if a.get(p) != b.get(p)]

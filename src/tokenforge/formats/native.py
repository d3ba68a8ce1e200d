"""The native tokenforge file: one JSON document that defines the ids.

Seed 000 §5.8: the vocab alone does not define a tokenizer; the normalizer,
split pattern, merges, specials and decoder together do. So all of them live
in one file, each part with a sha256 of its canonical JSON form::

    {
      "format_version": 1,
      "name": ...,
      "pre_tokenizer": {"type": "regex", "name": "gpt2", "pattern": "..."},
      "model": {"type": "bpe", "vocab": [[id, base64], ...], "merges": [[id, id], ...]},
      "special_tokens": {"<|endoftext|>": 256},
      "decoder": {"type": "byte_level"},
      "sha256": {"pre_tokenizer": "...", "model": "...", "special_tokens": "...", "decoder": "..."}
    }

A :class:`~tokenforge.pipeline.Pipeline` (WordPiece, Unigram, SentencePiece
BPE) is stored the same way with ``"kind": "pipeline"`` and the parts
``normalizer``, ``pre_tokenizer``, ``model``, ``post_processor``, ``decoder``
and ``added_tokens``, each in HF tokenizer.json's shape.

Output is deterministic: the same tokenizer always gives the same bytes.
A hash mismatch on load names the part that was changed.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any

from .._io import atomic_write, read_text
from ..errors import FileFormatError

FORMAT_VERSION = 1
PARTS = ("pre_tokenizer", "model", "special_tokens", "decoder")
PIPELINE_PARTS = ("normalizer", "pre_tokenizer", "model", "post_processor", "decoder", "added_tokens")


def _parts(doc: dict[str, Any]) -> tuple[str, ...]:
    return PIPELINE_PARTS if doc.get("kind") == "pipeline" else PARTS


def canonical(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def part_hash(obj: Any) -> str:
    return hashlib.sha256(canonical(obj).encode("utf-8")).hexdigest()


def dumps(data: dict[str, Any]) -> str:
    """Serialize ``Tokenizer.to_dict()`` output as the native document."""
    doc: dict[str, Any] = {"format_version": FORMAT_VERSION, "name": data.get("name")}
    if data.get("kind") == "pipeline":
        doc["kind"] = "pipeline"
    parts = _parts(data)
    for part in parts:
        doc[part] = data[part]
    doc["sha256"] = {part: part_hash(data[part]) for part in parts}
    # One vocab entry and one merge per line: diffable, and still plain JSON.
    lines = ["{"]
    keys = list(doc)
    for n, key in enumerate(keys):
        comma = "," if n < len(keys) - 1 else ""
        value = doc[key]
        if key == "model":
            lines.append('  "model": {')
            mkeys = list(value)
            for m, mk in enumerate(mkeys):
                mcomma = "," if m < len(mkeys) - 1 else ""
                mv = value[mk]
                if isinstance(mv, list):
                    lines.append(f"    {json.dumps(mk)}: [")
                    for e, entry in enumerate(mv):
                        ecomma = "," if e < len(mv) - 1 else ""
                        lines.append(f"      {canonical(entry)}{ecomma}")
                    lines.append(f"    ]{mcomma}")
                elif isinstance(mv, dict) and len(mv) > 16:
                    lines.append(f"    {json.dumps(mk)}: {{")
                    items = list(mv.items())
                    for e, (k, v) in enumerate(items):
                        ecomma = "," if e < len(items) - 1 else ""
                        lines.append(f"      {json.dumps(k, ensure_ascii=False)}: {canonical(v)}{ecomma}")
                    lines.append(f"    }}{mcomma}")
                else:
                    lines.append(f"    {json.dumps(mk)}: {canonical(mv)}{mcomma}")
            lines.append(f"  }}{comma}")
        else:
            lines.append(f"  {json.dumps(key)}: {canonical(value)}{comma}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def loads(text: str, path: object = "<native>") -> dict[str, Any]:
    """Parse and verify a native document; return the ``to_dict`` form."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise FileFormatError(f"not valid JSON ({exc.msg})", path=path, line=exc.lineno) from None
    if not isinstance(doc, dict) or "format_version" not in doc:
        hint = ""
        if isinstance(doc, dict) and "model" in doc and ("added_tokens" in doc or "normalizer" in doc):
            hint = " (it looks like an HF tokenizer.json: load it with tokenforge.load, which detects it)"
        raise FileFormatError(f"a JSON file without 'format_version': not a tokenforge file{hint}", path=path)
    if doc["format_version"] != FORMAT_VERSION:
        raise FileFormatError(
            f"format_version {doc['format_version']!r} is not supported (this tokenforge reads {FORMAT_VERSION})",
            path=path,
        )
    hashes = doc.get("sha256")
    if not isinstance(hashes, dict):
        raise FileFormatError("missing field 'sha256'", path=path)
    for part in _parts(doc):
        if part not in doc:
            raise FileFormatError(f"missing field {part!r}", path=path)
        if hashes.get(part) != part_hash(doc[part]):
            raise FileFormatError(
                f"sha256 of {part!r} does not match: the file was changed or truncated "
                f"(expected {hashes.get(part)}, computed {part_hash(doc[part])})",
                path=path,
            )
    return doc


def save_native(data: dict[str, Any], path: str | os.PathLike) -> None:
    text = dumps(data)
    with atomic_write(path) as f:
        f.write(text)


def load_native_dict(path: str | os.PathLike) -> dict[str, Any]:
    return loads(read_text(path), path)

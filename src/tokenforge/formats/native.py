"""The native tokenforge file: one JSON document that defines the ids.

The vocabulary alone does not define a tokenizer; the normalizer, split
pattern, merges, specials and decoder together do. So all of them live in
one file, each part with a sha256 of its canonical JSON form::

    {
      "format_version": 2,
      "name": ...,
      "normalizer": null,
      "pre_tokenizer": {"type": "regex", "name": "gpt2", "pattern": "..."},
      "model": {"type": "bpe", "vocab": [[id, base64], ...], "merges": [[id, id], ...]},
      "post_processor": null,
      "decoder": {"type": "ByteLevel", ...},
      "added_tokens": [{"id": 256, "content": "<|endoftext|>", "special": true, ...}],
      "sha256": {"normalizer": "...", "pre_tokenizer": "...", ...}
    }

Every part is the ``to_dict()`` of one stage (HF tokenizer.json's shapes,
plus tokenforge's byte-level ``"bpe"`` model and ``"regex"`` split), so one
schema serves every model family.

Version 1 files (written before version 2) still load: a byte-level file's
``special_tokens`` become added tokens and its ``byte_level`` decoder the
``ByteLevel`` decoder; a ``"kind": "pipeline"`` file already had the parts.

Output is deterministic: the same tokenizer always gives the same bytes (from
the same tokenforge version, which the fingerprint record names). A hash mismatch on load names the part that was changed.

Files also carry the tokenizer's fingerprint (:mod:`tokenforge.fingerprint`)::

      "fingerprint": {"id": "tf1:...", "parts": {"model": "...", ...}, "written_by": "tokenforge 0.x"}

:func:`tokenforge.load` rebuilds the tokenizer and checks that its fingerprint is
the recorded one, so a file that this tokenforge would read into different ids
than the writer had is refused, naming the part. ``written_by`` is recorded for
people and is not part of the fingerprint. The field is optional (files written
before it still load) and readers that do not know it ignore it, so
``format_version`` stays 2.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any

from .._io import atomic_write, parse_json, read_text
from ..errors import FileFormatError

FORMAT_VERSION = 2
PARTS = ("normalizer", "pre_tokenizer", "model", "post_processor", "decoder", "added_tokens")
#: Parts written only when they differ from their default (files without them still load).
OPTIONAL_PARTS = ("specials_in_text", "truncation", "padding", "config")
#: The parts of version 1 files: byte-level BPE, and ``"kind": "pipeline"`` files.
V1_PARTS = ("pre_tokenizer", "model", "special_tokens", "decoder")
V1_PIPELINE_PARTS = PARTS


def _parts(doc: dict[str, Any]) -> tuple[str, ...]:
    if doc.get("format_version") == 1:
        return V1_PIPELINE_PARTS if doc.get("kind") == "pipeline" else V1_PARTS
    return PARTS


def _upgrade_v1(doc: dict[str, Any], path: object = "<native>") -> dict[str, Any]:
    """A version 1 document in version 2's shape."""
    if doc.get("kind") == "pipeline":
        return {k: v for k, v in doc.items() if k != "kind"}
    specials = doc.get("special_tokens")
    if specials is None:
        specials = {}
    if not isinstance(specials, dict):
        raise FileFormatError(
            f"field 'special_tokens' must be an object of token -> id, not {type(specials).__name__}", path=path
        )
    for token, i in specials.items():
        if not isinstance(i, int) or isinstance(i, bool) or not 0 <= i < 2**32:
            raise FileFormatError(
                f"field 'special_tokens': {token!r} has id {i!r}; ids are integers in 0..2**32-1", path=path
            )
    decoder = doc.get("decoder")
    if isinstance(decoder, dict) and decoder.get("type") == "byte_level":
        decoder = {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True}
    return {
        "format_version": FORMAT_VERSION,
        "name": doc.get("name"),
        "normalizer": None,
        "pre_tokenizer": doc.get("pre_tokenizer"),
        "model": doc.get("model"),
        "post_processor": None,
        "decoder": decoder,
        "added_tokens": [
            {"id": i, "content": t, "single_word": False, "lstrip": False, "rstrip": False,
             "normalized": False, "special": True}
            for t, i in sorted(specials.items(), key=lambda kv: kv[1])
        ],
    }


def canonical(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def part_hash(obj: Any) -> str:
    return hashlib.sha256(canonical(obj).encode("utf-8")).hexdigest()


def dumps(data: dict[str, Any], fingerprint: dict[str, Any] | None = None) -> str:
    """Serialize ``Tokenizer.to_dict()`` output as the native document (with
    ``fingerprint``, :func:`tokenforge.fingerprint.fingerprint_record`'s output, when given)."""
    doc: dict[str, Any] = {"format_version": FORMAT_VERSION, "name": data.get("name")}
    parts = PARTS
    for part in parts:
        doc[part] = data[part]
    for part in OPTIONAL_PARTS:
        if data.get(part) is not None:
            doc[part] = data[part]
    doc["sha256"] = {part: part_hash(doc[part]) for part in (*parts, *(p for p in OPTIONAL_PARTS if p in doc))}
    if fingerprint is not None:
        doc["fingerprint"] = fingerprint
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
    doc = parse_json(text, path)
    if not isinstance(doc, dict) or "format_version" not in doc:
        hint = ""
        if isinstance(doc, dict) and "model" in doc and ("added_tokens" in doc or "normalizer" in doc):
            hint = " (it looks like an HF tokenizer.json: load it with tokenforge.load, which detects it)"
        raise FileFormatError(f"a JSON file without 'format_version': not a tokenforge file{hint}", path=path)
    if doc["format_version"] not in (1, FORMAT_VERSION):
        raise FileFormatError(
            f"format_version {doc['format_version']!r} is not supported (this tokenforge reads 1 and {FORMAT_VERSION})",
            path=path,
        )
    hashes = doc.get("sha256")
    if not isinstance(hashes, dict):
        raise FileFormatError("missing field 'sha256'", path=path)
    for part in (*_parts(doc), *(p for p in OPTIONAL_PARTS if p in doc)):
        if part not in doc:
            raise FileFormatError(f"missing field {part!r}", path=path)
        try:
            computed = part_hash(doc[part])
        except UnicodeEncodeError as exc:  # a \ud800 escape: not text, and tokenforge never writes one
            raise FileFormatError(
                f"field {part!r} holds a lone UTF-16 surrogate ({exc.object[exc.start:exc.end]!r}), which is not text",
                path=path,
            ) from None
        if hashes.get(part) != computed:
            raise FileFormatError(
                f"sha256 of {part!r} does not match: the file was changed or truncated "
                f"(expected {hashes.get(part)}, computed {computed})",
                path=path,
            )
    return _upgrade_v1(doc, path) if doc["format_version"] == 1 else doc


def save_native(data: dict[str, Any], path: str | os.PathLike, fingerprint: dict[str, Any] | None = None) -> None:
    text = dumps(data, fingerprint)
    with atomic_write(path) as f:
        f.write(text)


def load_native_dict(path: str | os.PathLike) -> dict[str, Any]:
    return loads(read_text(path), path)


def check_fingerprint(doc: dict[str, Any], parts: dict[str, str], path: object = "<native>") -> None:
    """Raise :class:`FileFormatError` when ``doc`` records a fingerprint other than the one
    whose ``{part: hash}`` are ``parts`` (those of the tokenizer built from ``doc``), naming
    the parts that differ. Files without a fingerprint (written before tokenforge recorded
    one) pass, and so do fingerprints of a later scheme, which this version cannot check."""
    record = doc.get("fingerprint")
    if record is None:
        return
    from ..fingerprint import SCHEME, combine, differing_parts

    if not isinstance(record, dict) or not isinstance(record.get("id"), str) or not isinstance(record.get("parts"), dict):
        raise FileFormatError("field 'fingerprint' must be an object with 'id' and 'parts'", path=path)
    if not record["id"].startswith(SCHEME + ":"):
        return
    recorded = record["parts"]
    if combine(recorded) != record["id"]:
        raise FileFormatError("field 'fingerprint': its 'id' is not the hash of its 'parts' (the file was edited)", path=path)
    differ = differing_parts(recorded, parts)
    if differ:
        writer = record.get("written_by") or "an unknown writer"
        raise FileFormatError(
            f"fingerprint does not match: part {', '.join(repr(p) for p in differ)} differs from what "
            f"{writer} recorded (recorded {record['id']}, this tokenforge computes {combine(parts)}); "
            "the file was edited, or this tokenforge reads it into different ids",
            path=path,
        )

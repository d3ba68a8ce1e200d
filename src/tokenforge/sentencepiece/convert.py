"""SentencePiece ``.model`` <-> :class:`~tokenforge.Tokenizer`, both directions.

:func:`tokenizer_from_proto` builds the pipeline that gives sentencepiece's
ids for a ``ModelProto``: the normalizer of ``normalizer.cc`` with the file's
own charsmap, the Unigram (Kudo, 2018) or score-driven BPE model of
``unigram_model.cc``/``bpe_model.cc`` over the ``▁``-escaped text, control
pieces as special tokens and sentencepiece's decoder (Kudo & Richardson,
2018). :func:`proto_from_tokenizer` (defined in :mod:`.export`, which
``Tokenizer.save`` reaches without importing this module) is the way back;
``.model`` -> Tokenizer -> ``.model`` -> Tokenizer keeps every id.
"""

from __future__ import annotations

import math
import os
from typing import Any

from .. import decoders, postprocessors, pretokenizers
from .._plans import SP_WORD_SPLIT, sentencepiece_split_is_exact
from ..errors import FileFormatError
from ..models.bpe import PieceBPE
from ..models.unigram import Unigram
from ..tokenizer import AddedToken, Tokenizer
from .constants import SPACE, PieceType
from .export import proto_from_tokenizer
from .normalizer import SentencePieceNormalizer
from .proto import ModelProto, ModelType

__all__ = ["hf_document", "hf_form", "id_differences", "proto_from_tokenizer", "tokenizer_from_proto"]


def tokenizer_from_proto(
    proto: ModelProto,
    *,
    add_bos: bool = False,
    add_eos: bool = False,
    name: str | None = None,
    path: str | os.PathLike | None = None,
) -> Tokenizer:
    """A pipeline equal to the ``sentencepiece`` library on ``proto`` (a parsed ``.model``).

    Encoding runs SentencePiece's normalizer (its precompiled charsmap,
    whitespace clean-up, dummy prefix and ``▁`` escaping, user-defined symbols
    kept whole), then the Unigram or BPE model over the escaped text. Control
    pieces (``<s>``, ``</s>``, ...) are special tokens that text never produces:
    ``"<s>"`` in the text is ordinary text, as in sentencepiece (unless the call
    allows it with ``allowed_special``), and ``add_bos``/``add_eos`` put them in by code.
    Decoding drops control pieces, turns ``<unk>`` into ``" ⁇ "``, joins byte
    pieces into UTF-8 and ``▁`` back into spaces, as ``sentencepiece`` does.
    ``path`` only names the file in errors.
    """
    check_like_sentencepiece(proto, path)
    spec = proto.normalizer_spec
    ts = proto.trainer_spec
    pieces = [p.piece for p in proto.pieces]
    types = piece_types(proto)
    if ts.model_type == ModelType.BPE and "\0" in pieces and types[pieces.index("\0")] == PieceType.UNUSED:
        # sentencepiece leaves such a piece out of its vocabulary: text never gives its id,
        # yet decoding the id gives "\0"; tokenforge's BPE would give it for a NUL in text
        raise FileFormatError(
            f"piece {pieces.index(chr(0))} is a NUL character that sentencepiece reads as UNUSED and leaves out of "
            "its BPE vocabulary; tokenforge cannot keep such an id out of encoding, so it refuses the model "
            "rather than give other ids",
            path=path,
        )
    scores = [float(p.score) for p in proto.pieces]
    user_defined = [p for p, t in zip(pieces, types) if t == PieceType.USER_DEFINED]
    # sentencepiece normalizes with the blob alone: a name without a blob is no rule at all.
    rules: Any = spec.precompiled_charsmap if spec.precompiled_charsmap else "identity"
    normalizer = SentencePieceNormalizer(
        rules,
        add_dummy_prefix=spec.add_dummy_prefix,
        remove_extra_whitespaces=spec.remove_extra_whitespaces,
        escape_whitespaces=spec.escape_whitespaces,
        user_defined_symbols=user_defined,
        name=spec.name or None,
    )
    unk_ids = [i for i, t in enumerate(types) if t == PieceType.UNKNOWN]
    unk_id = unk_ids[0] if unk_ids else None
    if ts.treat_whitespace_as_suffix:
        raise FileFormatError(
            "SentencePiece models with treat_whitespace_as_suffix (▁ at the end of pieces) are not supported",
            path=path,
        )
    if ts.model_type == ModelType.UNIGRAM:
        model = Unigram(list(zip(pieces, scores)), unk_id=unk_id, byte_fallback=ts.byte_fallback, types=types)
    elif ts.model_type == ModelType.BPE:
        model = PieceBPE.from_sentencepiece(pieces, scores, types, byte_fallback=ts.byte_fallback)
    else:
        raise FileFormatError(
            f"SentencePiece model_type {_model_type_name(ts.model_type)} is not supported (only UNIGRAM and BPE)",
            path=path,
        )
    controls = [AddedToken(p, i, special=True) for i, (p, t) in enumerate(zip(pieces, types)) if t == PieceType.CONTROL]
    pre = None
    if (
        ts.model_type == ModelType.BPE and spec.escape_whitespaces and not ts.treat_whitespace_as_suffix
        and sentencepiece_split_is_exact(pieces, user_defined)
    ):
        # Exact (see above), and it lets the encoder memoise words. Not for Unigram:
        # sentencepiece sums path scores over the whole text in 32-bit floats, so
        # where a word's Viterbi ties are broken depends on the text before it.
        pre = pretokenizers.Split(SP_WORD_SPLIT, "merged_with_next")
    post = None
    if add_bos or add_eos:
        by_piece = {p: i for i, p in enumerate(pieces)}
        single: list[str] = []
        special: list[tuple[str, int]] = []
        if add_bos:
            single.append(ts.bos_piece)
            special.append((ts.bos_piece, by_piece.get(ts.bos_piece, ts.bos_id)))
        single.append("$A")
        if add_eos:
            single.append(ts.eos_piece)
            special.append((ts.eos_piece, by_piece.get(ts.eos_piece, ts.eos_id)))
        pair = single + [x + ":1" if x != "$A" else "$B:1" for x in single]
        post = postprocessors.TemplateProcessing(single, pair, special)
    decoder = decoders.SentencePiece(
        spec.add_dummy_prefix, spec.remove_extra_whitespaces,
        pieces[unk_id] if unk_id is not None else None, ts.unk_surface, [t.content for t in controls],
    )
    return Tokenizer(
        model,
        normalizer=normalizer,
        pre_tokenizer=pre,
        post_processor=post,
        decoder=decoder,
        added_tokens=controls,
        name=name,
        specials_in_text="text",  # sentencepiece never reads control pieces from text
    )


def _model_type_name(value: int) -> str:
    try:
        return ModelType(value).name
    except ValueError:
        return f"{value} (not a sentencepiece model type)"


def check_like_sentencepiece(proto: ModelProto, path: Any = None) -> None:
    """Refuse what ``sentencepiece`` refuses when it loads a model, with its reasons
    (``SentencePieceProcessor::Load`` of sentencepiece 0.2.3: ``model_interface.cc``,
    ``unigram_model.cc``, ``bpe_model.cc``, ``normalizer.cc`` and its double-array trie):

    * a piece that is empty, 8000 bytes or longer, or holds a NUL character (a piece that
      is exactly ``"\\0"`` is skipped when UNUSED, and is UNUSED under byte fallback);
    * a piece given twice: among the normal (NORMAL, USER_DEFINED, UNUSED) or among the
      other pieces of a Unigram model, among all pieces of a BPE model;
    * two unknown pieces, or none without byte fallback;
    * a byte piece without byte fallback or that is not ``<0xXX>``, byte fallback
      without all 256 byte pieces;
    * a NaN or infinite score in a Unigram model;
    * a charsmap (normalizer's or denormalizer's) that is too short, whose trie size
      does not fit the blob or is not a positive multiple of 1024, whose strings do not
      end with a NUL byte, or whose trie points outside itself or its strings.
    """
    from .constants import byte_piece

    def fail(msg: str) -> FileFormatError:
        return FileFormatError(f"{msg} (sentencepiece refuses this model too)", path=path)

    ts = proto.trainer_spec
    byte_fallback = bool(ts.byte_fallback)
    one_table = ts.model_type == ModelType.BPE  # bpe::Model keeps every piece in one map
    seen_normal: dict[str, int] = {}
    seen_reserved: dict[str, int] = {}
    unk = None
    byte_ids: dict[int, int] = {}
    valid_bytes = {byte_piece(b): b for b in range(256)}
    for i, p in enumerate(proto.pieces):
        size = len(p.piece.encode("utf-8"))
        if size >= _MAX_PIECE_BYTES:
            raise fail(f"piece {i} is {size} bytes long; pieces are shorter than {_MAX_PIECE_BYTES} bytes")
    for i, (p, kind) in enumerate(zip(proto.pieces, piece_types(proto))):
        if not p.piece:
            raise fail(f"piece {i} is empty")
        if p.piece == "\0" and kind == PieceType.UNUSED:
            continue
        if "\0" in p.piece:
            raise fail(f"piece {i} {p.piece!r} holds a NUL character")
        normal = kind in (PieceType.NORMAL, PieceType.USER_DEFINED, PieceType.UNUSED)
        table = seen_normal if normal or one_table else seen_reserved
        if p.piece in table:
            raise fail(f"piece {i} {p.piece!r} is already defined (as piece {table[p.piece]})")
        table[p.piece] = i
        if kind == PieceType.UNKNOWN:
            if unk is not None:
                raise fail(f"piece {i} {p.piece!r} is a second unknown piece (the first is piece {unk})")
            unk = i
        if kind == PieceType.BYTE:
            if not byte_fallback:
                raise fail(f"byte piece {i} {p.piece!r} is found although byte_fallback is false")
            if p.piece not in valid_bytes:
                raise fail(f"byte piece {i} {p.piece!r} is not of the form <0xXX>")
            byte_ids[valid_bytes[p.piece]] = i
    if unk is None and not byte_fallback:
        raise fail("no piece has type UNKNOWN")
    if byte_fallback and len(byte_ids) != 256:
        raise fail(f"byte_fallback is true but there are {len(byte_ids)} byte pieces, not 256")
    if ts.model_type == ModelType.UNIGRAM:
        for i, p in enumerate(proto.pieces):
            if not math.isfinite(p.score):
                raise fail(f"piece {i} {p.piece!r} has score {p.score}; a Unigram model's scores are finite")
    _check_charsmap(proto.normalizer_spec.precompiled_charsmap, "normalizer_spec.precompiled_charsmap", fail)
    if proto.has("denormalizer_spec"):
        _check_charsmap(proto.denormalizer_spec.precompiled_charsmap, "denormalizer_spec.precompiled_charsmap", fail)


#: sentencepiece refuses pieces of this many bytes or more (``kMaxPieceSize``)
_MAX_PIECE_BYTES = 8000


def piece_types(proto: ModelProto) -> list[int]:
    """The type of each piece as ``sentencepiece`` uses it: a piece that is exactly ``"\\0"``
    is UNUSED when the model has byte fallback (sentencepiece's workaround for converters
    that add a raw NUL piece beside ``<0x00>``)."""
    byte_fallback = bool(proto.trainer_spec.byte_fallback)
    return [PieceType.UNUSED if byte_fallback and p.piece == "\0" else int(p.type) for p in proto.pieces]


def _check_charsmap(blob: bytes, field: str, fail: Any) -> None:
    """sentencepiece's ``Normalizer::DecodePrecompiledCharsMap`` and ``DoubleArray::validate``
    on a precompiled charsmap: ``<trie size: uint32 LE><double-array trie><NUL-terminated strings>``."""
    if not blob:
        return
    if len(blob) <= 4:
        raise fail(f"{field}: a {len(blob)}-byte blob is too short to hold the trie size")
    size = int.from_bytes(blob[:4], "little")
    if size >= len(blob) - 4:
        raise fail(f"{field}: the trie size {size} does not fit the {len(blob)}-byte blob")
    if size < 1024 or size % 1024:
        raise fail(f"{field}: the trie size {size} is not a multiple of 1024")
    strings = len(blob) - 4 - size
    if blob[-1] != 0:
        raise fail(f"{field}: the normalized strings after the trie do not end with a NUL byte")
    bad = _first_invalid_unit(blob[4:4 + size], strings)
    if bad is not None:
        raise fail(f"{field}: trie unit {bad} (byte {4 + 4 * bad} of the blob) points outside the trie or its strings")


def _first_invalid_unit(trie: bytes, strings: int) -> int | None:
    """The first unit ``Darts::DoubleArray::validate(strings)`` rejects (darts-clone as
    sentencepiece ships it), or ``None``. A unit is ``uint32``: label (bits 0-7 and 31),
    has-leaf (bit 8), offset (bits 10-31, shifted by 8 when bit 9 is set); a leaf holds
    a value (bits 0-30), an offset into the strings."""
    import numpy as np

    units = np.frombuffer(trie, dtype="<u4").astype(np.int64)
    n = len(units)
    label = units & 0x800000FF
    has_leaf = (units >> 8) & 1
    offset = (units >> 10) << ((units & 0x200) >> 6)
    index = np.arange(n, dtype=np.int64)
    target = index ^ offset
    if label[0] != 0 or has_leaf[0] or offset[0] == 0 or (offset[0] | 0xFF) >= n:
        return 0
    inner = label <= 0xFF
    inner[0] = False
    bad = inner & ((target | 0xFF) >= n)
    leaf = inner & ~bad & (has_leaf == 1)
    bad |= leaf & (label[np.where(leaf, target, 0)] <= 0xFF)
    value = units & 0x7FFFFFFF
    bad |= ~inner & (index > 0) & (value >= strings)
    hits = np.flatnonzero(bad)
    return int(hits[0]) if len(hits) else None


def hf_approximation(tokenizer: Tokenizer) -> dict[str, Any]:
    """The HF ``tokenizer.json`` document :func:`hf_form` builds for a SentencePiece
    tokenizer (exact or not; :func:`hf_form` also says why it cannot be exact)."""
    return hf_form(tokenizer)[0]


def hf_form(tokenizer: Tokenizer) -> tuple[dict[str, Any], str | None]:
    """An HF ``tokenizer.json`` document for a SentencePiece tokenizer, and why it
    cannot give sentencepiece's ids (``None`` when it can).

    A BPE model becomes what ``transformers``' ``LlamaConverter`` writes: the
    normalizer ``Prepend("▁")`` + ``Replace(" ", "▁")``, no pre-tokenizer, a BPE
    model with ``byte_fallback`` and ``fuse_unk`` whose merges come from the piece
    scores, and the decoder ``Replace("▁", " ")``, ``ByteFallback``, ``Fuse``,
    ``Strip``. Without a charsmap (the ``identity`` normalizer of Llama 2 and
    Mistral) that form is exact when no piece is UNUSED and there are no
    user-defined symbols (merge results that share a score, as Llama's runs of
    ``▁`` do, are checked pair by pair: HF merges by rank, sentencepiece the
    leftmost pair among equal scores); sentencepiece's
    ``remove_extra_whitespaces`` becomes two ``Replace`` rules. A Unigram model
    becomes what ``SpmConverter`` writes (``Metaspace``; without a charsmap the same
    rules as BPE and no pre-tokenizer, one Viterbi pass as in sentencepiece), which
    is never exact:
    sentencepiece sums Viterbi path scores in 32-bit floats and HF in doubles, so
    near-ties end differently. With a charsmap (``nmt_nfkc``...) neither is exact:
    HF's ``Precompiled`` walks the charsmap by grapheme cluster where
    sentencepiece walks it by longest byte match, and HF strips and collapses
    white space after the rules. :func:`hf_differences` measures the differences.
    """
    import base64

    norm = tokenizer.normalizer
    model = tokenizer.model
    if not isinstance(norm, SentencePieceNormalizer):
        raise FileFormatError(f"not a SentencePiece tokenizer: its normalizer is {type(norm).__name__}")
    reasons: list[str] = []
    added = [
        {"id": t.id, "content": t.content, "single_word": False, "lstrip": False, "rstrip": False,
         "normalized": False, "special": t.special}
        for t in sorted(tokenizer.added_tokens, key=lambda t: t.id)
    ] + [
        {"id": model.token_to_id(s), "content": s, "single_word": False, "lstrip": False, "rstrip": False,
         "normalized": False, "special": False}
        for s in norm.user_defined_symbols if model.token_to_id(s) is not None
    ]
    if norm.user_defined_symbols:
        reasons.append(
            f"user-defined symbols ({', '.join(map(repr, norm.user_defined_symbols[:5]))}): HF matches them before "
            "normalizing and normalizes each part of the text between them on its own, sentencepiece matches "
            "them inside the normalized text"
        )
    blob = norm.charsmap.blob
    rules: list[dict[str, Any]] = (
        [{"type": "Precompiled", "precompiled_charsmap": base64.b64encode(blob).decode("ascii")}] if blob else []
    )
    if blob:
        reasons.append(
            f"its {norm.name or 'custom'!r} normalizer: HF's Precompiled walks the charsmap by grapheme cluster "
            "where sentencepiece walks it by longest byte match"
        )
    prefix = "always" if norm.add_dummy_prefix else "never"
    space = SPACE if norm.escape_whitespaces else " "
    common = {"version": "1.0",
              "truncation": None if tokenizer.truncation is None else tokenizer.truncation.to_dict(),
              "padding": None if tokenizer.padding is None else tokenizer.padding.to_dict(),
              "added_tokens": added,
              "post_processor": None if tokenizer.post_processor is None else tokenizer.post_processor.to_dict()}
    if not blob:  # sentencepiece's white-space handling, as HF rules that give the same text
        if norm.remove_extra_whitespaces:
            # drop the spaces before the first and after the last character and collapse
            # runs of spaces (only U+0020: tabs and newlines are kept)
            rules += [{"type": "Replace", "pattern": {"Regex": r"\A +| +\z"}, "content": ""},
                      {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "}]
        if norm.add_dummy_prefix:
            rules.append({"type": "Prepend", "prepend": space})
        if norm.escape_whitespaces:
            rules.append({"type": "Replace", "pattern": {"String": " "}, "content": SPACE})
    decoder_steps = [{"type": "Replace", "pattern": {"String": SPACE}, "content": " "},
                     {"type": "ByteFallback"}, {"type": "Fuse"}]
    if norm.add_dummy_prefix:
        decoder_steps.append({"type": "Strip", "content": " ", "start": 1, "stop": 0})
    if isinstance(model, Unigram):
        reasons.append(
            "a Unigram model: sentencepiece sums the Viterbi path scores in 32-bit floats, HF in doubles, "
            "so near-ties between segmentations end differently"
        )
        d = model.to_dict()
        d.pop("piece_types", None)
        if blob:  # SpmConverter's form
            if norm.remove_extra_whitespaces:
                rules += [{"type": "Strip", "strip_left": False, "strip_right": True},
                          {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": SPACE}]
            meta = {"type": "Metaspace", "replacement": SPACE, "prepend_scheme": prefix, "split": True}
            pre, decoder = meta, meta
        else:  # the whole text in one Viterbi pass, as sentencepiece runs it
            pre, decoder = None, {"type": "Sequence", "decoders": decoder_steps}
        doc = {**common, "normalizer": {"type": "Sequence", "normalizers": rules}, "pre_tokenizer": pre,
               "decoder": decoder, "model": d}
        return _ordered(doc), "; ".join(reasons)
    if not (isinstance(model, PieceBPE) and model.is_sentencepiece):
        raise FileFormatError(f"not a SentencePiece tokenizer: its model is {type(model).__name__}")
    if blob and norm.add_dummy_prefix:  # LlamaConverter's form
        rules.append({"type": "Prepend", "prepend": space})
    if blob and norm.escape_whitespaces:
        rules.append({"type": "Replace", "pattern": {"String": " "}, "content": SPACE})
    types = model.types or []
    unused = [model.id_to_token(i) for i, t in enumerate(types) if t == PieceType.UNUSED]
    if unused:
        reasons.append(f"UNUSED pieces ({', '.join(map(repr, unused[:5]))}): sentencepiece splits them back, "
                       "HF's merges keep them")
    merges, ties = _merges_by_score(model)
    large = next((g for g in ties if len(g) > _MAX_TIED), None)
    if large is not None:
        reasons.append(f"{len(large)} pieces share a score ({', '.join(map(repr, large[:3]))}...): sentencepiece "
                       "merges the leftmost pair among equal scores, HF the pair of the earlier merge")
    unk = model.unk_id
    doc = {**common,
           "normalizer": {"type": "Sequence", "normalizers": rules},
           "pre_tokenizer": None,
           "decoder": {"type": "Sequence", "decoders": decoder_steps},
           "model": {
               "type": "BPE", "dropout": None, "unk_token": None if unk is None else model.id_to_token(unk),
               "continuing_subword_prefix": None, "end_of_word_suffix": None, "fuse_unk": True,
               "byte_fallback": bool(model.byte_fallback), "ignore_merges": False,
               "vocab": {model.id_to_token(i): i for i in range(model.vocab_size)},
               "merges": [[a, b] for a, b in merges],
           }}
    return _ordered(doc), "; ".join(reasons) or None


def _ordered(doc: dict[str, Any]) -> dict[str, Any]:
    keys = ("version", "truncation", "padding", "added_tokens", "normalizer", "pre_tokenizer", "post_processor",
            "decoder", "model")
    return {k: doc[k] for k in keys}


#: Short documents that catch what sample lines miss: a line end kept as a token
#: (``"end.\n"``), white space at both ends and in runs, tabs, CR LF, emoji, CJK,
#: characters only byte fallback spells, and the text of a byte piece.
HF_CHECK_DOCUMENTS = (
    "end.\n", "end.\n\n", "\n", "\n\nstart after blank lines", "  two leading spaces", "trailing spaces   ",
    "multiple   spaces    inside  a line", "tabs\tand\t\ttabs\t", "one\ntwo\r\nthree\r\n\r\nfour\n",
    " \n \n", "emoji 😀👍🏽 and a family 👨\u200d👩\u200d👧 here.", "中文的句子。日本語の文章です。한국어 문장.",
    "no\u00a0break\u3000ideographic space", "combining e\u0301 and é", "rare 𓀀 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 ꙮ",
    "<0x41> spelled as text", "ﬁ ligature, ① circled, Ｆｕｌｌ width",
    "def f(x):\n    return x  # indented\n\n\tif x:\n\t\tpass\n",
)


def hf_check_documents() -> list[str]:
    """The whole documents a SentencePiece-to-HF conversion is checked on: the short
    :data:`HF_CHECK_DOCUMENTS` first (so that an error names a short input), then the
    held-out text of the embedded corpus (a dozen languages and code), one document
    per language."""
    from ..corpus import embedded_corpus

    return list(HF_CHECK_DOCUMENTS) + [lang.heldout_text() for lang in embedded_corpus()]


def id_differences(
    tokenizer: Tokenizer, other: Tokenizer, documents: list[str] | None = None
) -> tuple[dict[str, int], list[dict[str, Any]]]:
    """Where ``other`` gives other ids than ``tokenizer``: on each whole document
    (default :func:`hf_check_documents`) and on each of its lines. Special-token
    strings are ordinary text on both sides. Returns the counts ``{"documents",
    "lines", "tokens"}`` and the differing inputs, documents first, each
    ``{"text", "whole_document", "ids", "written_ids"}``."""
    docs = hf_check_documents() if documents is None else list(documents)
    counts = {"documents": 0, "lines": 0, "tokens": 0}
    out: list[dict[str, Any]] = []
    seen: set[str] = set()

    def compare(text: str, whole: bool) -> None:
        a = tokenizer.encode(text, disallowed_special=(), add_special_tokens=False)
        b = other.encode(text, disallowed_special=(), add_special_tokens=False)
        counts["tokens"] += len(a)
        if a != b:
            out.append({"text": text, "whole_document": whole, "ids": a, "written_ids": b})

    for doc in docs:
        counts["documents"] += 1
        compare(doc, True)
    for doc in docs:
        for line in doc.splitlines():
            if line not in seen:
                seen.add(line)
                counts["lines"] += 1
                compare(line, False)
    return counts, out


def hf_document(tokenizer: Tokenizer, *, allow_lossy: bool = False, path: Any = None) -> tuple[dict[str, Any], dict[str, Any]]:
    """The ``tokenizer.json`` document of a SentencePiece tokenizer, checked: it is read
    back with tokenforge's own HF reader and both encode :func:`hf_check_documents`
    whole and line by line, and on :func:`tie_check_documents`. Unless the form is exact (see :func:`hf_form`) and no
    input differs, :class:`FileFormatError` names the reason or the first differing
    input; ``allow_lossy=True`` returns the document anyway. Returns the document
    and ``{"exact", "reason", "documents", "lines", "tokens", "differences"}``."""
    doc, reason = hf_form(tokenizer)
    counts, diffs = id_differences(tokenizer, Tokenizer.from_dict(doc), hf_check_documents() + tie_check_documents(tokenizer))
    report = {"exact": reason is None and not diffs, "reason": reason, **counts, "differences": diffs}
    if not report["exact"] and not allow_lossy:
        if diffs:
            first = diffs[0]
            where = "the whole document" if first["whole_document"] else "the line"
            a, b = first["ids"], first["written_ids"]
            k = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
            found = (f"gives other ids on {len(diffs)} of {counts['documents'] + counts['lines']} check inputs; "
                     f"first {where} {_clip(first['text'])!r}, from token {k}: sentencepiece {a[k:k + 8]}, "
                     f"tokenizer.json {b[k:k + 8]}")
            if reason:
                found += f" (because of {reason})"
        else:
            found = f"cannot give sentencepiece's ids in general: {reason}"
        raise FileFormatError(
            f"the tokenizer.json form of this SentencePiece model {found}; pass allow_lossy=True, or --allow-lossy, "
            "to write it anyway and get the differences",
            path=path,
        )
    return doc, report


def _clip(text: str, n: int = 60) -> str:
    return text if len(text) <= n else text[:n] + "…"


#: Merge results sharing a score are checked pair by pair (see :func:`tie_check_documents`)
#: up to this many in one score; a larger group is a reason the HF form may differ.
_MAX_TIED = 64


def _merges_by_score(model: PieceBPE) -> tuple[list[tuple[str, str]], list[list[str]]]:
    """Merges for a score-ranked BPE vocabulary, as ``transformers`` derives them: every
    split of a piece into two pieces is a merge, highest-scoring result first (ties
    by the parts' ids). Only NORMAL pieces are merge results (sentencepiece never
    merges into a control, byte, unknown or unused piece). Also returns the groups
    of merge results that share a score (Llama's and Mistral's runs of ``▁``)."""
    vocab = {model.id_to_token(i): i for i in range(model.vocab_size)}
    scores = model.scores or [0.0] * model.vocab_size
    types = model.types or [PieceType.NORMAL] * model.vocab_size
    merges: list[tuple[float, int, int, str, str]] = []
    by_score: dict[float, list[str]] = {}
    for piece, i in vocab.items():
        if types[i] != PieceType.NORMAL:
            continue
        local = [
            (-scores[i], vocab[piece[:k]], vocab[piece[k:]], piece[:k], piece[k:])
            for k in range(1, len(piece)) if piece[:k] in vocab and piece[k:] in vocab
        ]
        if local:
            by_score.setdefault(scores[i], []).append(piece)
        merges += sorted(local, key=lambda m: (m[1], m[2]))
    merges.sort(key=lambda m: m[0])  # stable: ties keep piece order, then the parts' ids
    return [(m[3], m[4]) for m in merges], [g for g in by_score.values() if len(g) > 1]


def tie_check_documents(tokenizer: Tokenizer) -> list[str]:
    """Texts where merge results that share a score meet: every pair of them, alone
    and between two letters. sentencepiece merges the leftmost of tied pairs, HF the
    pair of the earlier merge; these texts show whether that changes any id."""
    model = tokenizer.model
    if not (isinstance(model, PieceBPE) and model.is_sentencepiece):
        return []
    out: list[str] = []
    for group in _merges_by_score(model)[1]:
        if len(group) > _MAX_TIED:
            continue
        for p in group:
            for q in group:
                text = (p + q).replace(SPACE, " ")
                out += [text, "a" + text + "b"]
    return out

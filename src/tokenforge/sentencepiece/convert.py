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

__all__ = ["proto_from_tokenizer", "tokenizer_from_proto"]


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
    types = [int(p.type) for p in proto.pieces]
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
    """Refuse what ``sentencepiece`` refuses when it loads a model (``model_interface.cc``,
    ``normalizer.cc``), with its reasons: an empty or repeated piece, no unknown piece or
    two, a byte piece without byte fallback or one that is not ``<0xXX>``, byte fallback
    without all 256 byte pieces, a charsmap whose trie size is not a multiple of 1024
    bytes or does not fit the blob."""
    from .constants import byte_piece

    def fail(msg: str) -> FileFormatError:
        return FileFormatError(f"{msg} (sentencepiece refuses this model too)", path=path)

    byte_fallback = bool(proto.trainer_spec.byte_fallback)
    seen_normal: dict[str, int] = {}
    seen_reserved: dict[str, int] = {}
    unk = None
    byte_ids: dict[int, int] = {}
    valid_bytes = {byte_piece(b): b for b in range(256)}
    for i, p in enumerate(proto.pieces):
        if not p.piece:
            raise fail(f"piece {i} is empty")
        normal = p.type in (PieceType.NORMAL, PieceType.USER_DEFINED, PieceType.UNUSED)
        table = seen_normal if normal else seen_reserved
        if p.piece in table:
            raise fail(f"piece {i} {p.piece!r} is already defined (as piece {table[p.piece]})")
        table[p.piece] = i
        if p.type == PieceType.UNKNOWN:
            if unk is not None:
                raise fail(f"piece {i} {p.piece!r} is a second unknown piece (the first is piece {unk})")
            unk = i
        if p.type == PieceType.BYTE:
            if not byte_fallback:
                raise fail(f"byte piece {i} {p.piece!r} is found although byte_fallback is false")
            if p.piece not in valid_bytes:
                raise fail(f"byte piece {i} {p.piece!r} is not of the form <0xXX>")
            byte_ids[valid_bytes[p.piece]] = i
    if unk is None:
        raise fail("no piece has type UNKNOWN")
    if byte_fallback and len(byte_ids) != 256:
        raise fail(f"byte_fallback is true but there are {len(byte_ids)} byte pieces, not 256")
    blob = proto.normalizer_spec.precompiled_charsmap
    if blob:
        size = int.from_bytes(blob[:4], "little") if len(blob) > 4 else None
        if size is None or size >= len(blob):
            raise fail(f"normalizer_spec.precompiled_charsmap: the trie size {size} does not fit the "
                       f"{len(blob)}-byte blob")
        if size % 1024:
            raise fail(f"normalizer_spec.precompiled_charsmap: the trie size {size} is not a multiple of 1024")


def hf_approximation(tokenizer: Tokenizer) -> dict[str, Any]:
    """An HF ``tokenizer.json`` document for a SentencePiece tokenizer, built as the
    converters of ``transformers`` build one (``SpmConverter`` for Unigram models,
    ``LlamaConverter`` for BPE models with byte fallback).

    It is not exact: HF's ``Precompiled`` normalizer walks the charsmap by grapheme
    cluster where sentencepiece walks it by longest byte match, HF strips and
    collapses whitespace with ``Strip``/``Replace`` after the rules, and a BPE model
    becomes merges by score. :func:`tokenforge.convert` with ``allow_lossy=True``
    writes it and reports how often the ids differ on sample text.
    """
    import base64

    norm = tokenizer.normalizer
    model = tokenizer.model
    if not isinstance(norm, SentencePieceNormalizer):
        raise FileFormatError(f"not a SentencePiece tokenizer: its normalizer is {type(norm).__name__}")
    added = [
        {"id": t.id, "content": t.content, "single_word": False, "lstrip": False, "rstrip": False,
         "normalized": False, "special": t.special}
        for t in sorted(tokenizer.added_tokens, key=lambda t: t.id)
    ] + [
        {"id": model.token_to_id(s), "content": s, "single_word": False, "lstrip": False, "rstrip": False,
         "normalized": False, "special": False}
        for s in norm.user_defined_symbols if model.token_to_id(s) is not None
    ]
    blob = norm.charsmap.blob
    rules = [{"type": "Precompiled", "precompiled_charsmap": base64.b64encode(blob).decode("ascii")}] if blob else []
    prefix = "always" if norm.add_dummy_prefix else "never"
    if isinstance(model, Unigram):
        if norm.remove_extra_whitespaces:
            rules += [{"type": "Strip", "strip_left": False, "strip_right": True},
                      {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": SPACE}]
        d = model.to_dict()
        d.pop("piece_types", None)
        return {
            "version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
            "normalizer": {"type": "Sequence", "normalizers": rules},
            "pre_tokenizer": {"type": "Metaspace", "replacement": SPACE, "prepend_scheme": prefix, "split": True},
            "post_processor": None if tokenizer.post_processor is None else tokenizer.post_processor.to_dict(),
            "decoder": {"type": "Metaspace", "replacement": SPACE, "prepend_scheme": prefix, "split": True},
            "model": d,
        }
    if not (isinstance(model, PieceBPE) and model.is_sentencepiece):
        raise FileFormatError(f"not a SentencePiece tokenizer: its model is {type(model).__name__}")
    if norm.add_dummy_prefix:
        rules.append({"type": "Prepend", "prepend": SPACE})
    rules.append({"type": "Replace", "pattern": {"String": " "}, "content": SPACE})
    decoder_steps = [{"type": "Replace", "pattern": {"String": SPACE}, "content": " "},
                     {"type": "ByteFallback"}, {"type": "Fuse"}]
    if norm.add_dummy_prefix:
        decoder_steps.append({"type": "Strip", "content": " ", "start": 1, "stop": 0})
    unk = model.unk_id
    return {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
        "normalizer": {"type": "Sequence", "normalizers": rules},
        "pre_tokenizer": None,
        "post_processor": None if tokenizer.post_processor is None else tokenizer.post_processor.to_dict(),
        "decoder": {"type": "Sequence", "decoders": decoder_steps},
        "model": {
            "type": "BPE", "dropout": None, "unk_token": None if unk is None else model.id_to_token(unk),
            "continuing_subword_prefix": None, "end_of_word_suffix": None, "fuse_unk": True,
            "byte_fallback": bool(model.byte_fallback), "ignore_merges": False,
            "vocab": {model.id_to_token(i): i for i in range(model.vocab_size)},
            "merges": [[a, b] for a, b in _merges_by_score(model)],
        },
    }


def _merges_by_score(model: PieceBPE) -> list[tuple[str, str]]:
    """Merges for a score-ranked BPE vocabulary, as ``transformers`` derives them: every
    split of a piece into two pieces is a merge, highest-scoring result first (ties
    by the parts' ids)."""
    vocab = {model.id_to_token(i): i for i in range(model.vocab_size)}
    scores = model.scores or [0.0] * model.vocab_size
    merges: list[tuple[float, int, int, str, str]] = []
    for piece, i in vocab.items():
        local = [
            (-scores[i], vocab[piece[:k]], vocab[piece[k:]], piece[:k], piece[k:])
            for k in range(1, len(piece)) if piece[:k] in vocab and piece[k:] in vocab
        ]
        merges += sorted(local, key=lambda m: (m[1], m[2]))
    merges.sort(key=lambda m: m[0])  # stable: ties keep piece order, then the parts' ids
    return [(m[3], m[4]) for m in merges]

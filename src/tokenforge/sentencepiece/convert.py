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
from .constants import PieceType
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
    spec = proto.normalizer_spec
    ts = proto.trainer_spec
    pieces = [p.piece for p in proto.pieces]
    types = [int(p.type) for p in proto.pieces]
    scores = [float(p.score) for p in proto.pieces]
    user_defined = [p for p, t in zip(pieces, types) if t == PieceType.USER_DEFINED]
    if spec.precompiled_charsmap:
        rules: Any = spec.precompiled_charsmap
    else:
        rules = spec.name or "identity"
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
            f"SentencePiece model_type {ModelType(ts.model_type).name} is not supported (only UNIGRAM and BPE)",
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

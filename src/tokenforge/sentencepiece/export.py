"""A SentencePiece-style tokenizer back to a ``.model`` (``ModelProto``).

The inverse of :func:`tokenforge.sentencepiece.convert.tokenizer_from_proto`:
the pieces, scores and types of the model, the normalizer's charsmap and
flags, byte fallback and the unknown surface are what define sentencepiece's
ids (Kudo & Richardson, 2018; ``sentencepiece_model.proto``), and all of them
are written. It is a module of its own, below :mod:`tokenforge.tokenizer`,
because ``Tokenizer.save(format="sentencepiece")`` reaches it;
:mod:`.convert` (which builds ``Tokenizer`` objects and so sits above
``tokenizer``) re-exports it, so both directions are importable from there.
"""

from __future__ import annotations

from typing import Any

from ..decoders import SentencePiece as SentencePieceDecoder
from ..errors import FileFormatError
from ..models.bpe import PieceBPE
from ..models.unigram import Unigram
from .normalizer import SentencePieceNormalizer
from .proto import ModelProto, ModelType, build_model_proto

__all__ = ["proto_from_tokenizer"]


def proto_from_tokenizer(tokenizer: Any) -> ModelProto:
    """The ``ModelProto`` of a SentencePiece-style tokenizer (one loaded from a ``.model``
    or trained by :func:`tokenforge.train_unigram` / :func:`tokenforge.train_sentencepiece_bpe`).

    The pieces, scores, types, normalization rules and flags, byte fallback, the
    special ids and the unknown surface are what define the ids, and all of them
    are written; training-only settings of the original file are not kept, so a
    written file loads with the same ids (in tokenforge and in ``sentencepiece``)
    but need not be byte-identical to the file the tokenizer came from. Any other
    tokenizer raises :class:`FileFormatError` saying which part has no ``.model`` form.
    """
    norm = tokenizer.normalizer
    model = tokenizer.model
    if not isinstance(norm, SentencePieceNormalizer):
        raise FileFormatError(
            f"a .model file carries sentencepiece's normalizer; this tokenizer's is {type(norm).__name__}"
        )
    if isinstance(model, Unigram) and model.types is not None:
        model_type, pieces, scores, types = ModelType.UNIGRAM, list(model.pieces), list(model.scores), list(model.types)
    elif isinstance(model, PieceBPE) and model.is_sentencepiece:
        pieces = [model.id_to_token(i) for i in range(model.vocab_size)]
        model_type, scores, types = ModelType.BPE, list(model.scores), list(model.types)
    else:
        raise FileFormatError(
            f"a .model file holds a sentencepiece Unigram or score-ranked BPE model; this tokenizer's model is "
            f"{type(model).__name__}" + (" without sentencepiece piece types" if isinstance(model, Unigram) else "")
        )
    if tokenizer.post_processor is not None:
        raise FileFormatError(
            "a .model file has no post-processor: sentencepiece adds BOS/EOS only when the caller asks"
        )
    proto = build_model_proto(
        pieces, scores, types, model_type=model_type, normalization=norm.name or "",
        add_dummy_prefix=norm.add_dummy_prefix, remove_extra_whitespaces=norm.remove_extra_whitespaces,
        trainer_settings={"byte_fallback": bool(model.byte_fallback)},
    )
    proto.normalizer_spec.precompiled_charsmap = norm.charsmap.blob
    proto.normalizer_spec.escape_whitespaces = norm.escape_whitespaces
    dec = tokenizer.decoder
    if isinstance(dec, SentencePieceDecoder):
        proto.trainer_spec.unk_surface = dec.unk_surface
    return proto

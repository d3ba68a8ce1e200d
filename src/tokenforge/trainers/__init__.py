"""The trainers: byte-level BPE, WordPiece, Unigram and SentencePiece BPE (one module each),
with shared counting and character-coverage passes."""

from __future__ import annotations

from ..errors import TrainingError

#: Ids are 32-bit everywhere (the native core, HF's files, sentencepiece): the largest
#: vocabulary a trainer accepts. Below it, training stops early when nothing is left to merge.
from ..limits import MAX_VOCAB_SIZE  # noqa: E402


class LongInputWarning(UserWarning):
    """Training skipped lines (SentencePiece: longer than ``max_sentence_length``
    bytes, sentencepiece's own rule) or words (WordPiece: longer than
    ``max_word_length`` bytes) of its input; the message says how many and
    which setting to raise to keep them."""


def check_vocab_size(vocab_size: object, minimum: int = 1) -> int:
    """``vocab_size`` as an int in ``minimum..MAX_VOCAB_SIZE``, else :class:`TrainingError`
    (checked before anything is allocated)."""
    if not isinstance(vocab_size, int) or isinstance(vocab_size, bool):
        raise TrainingError(f"vocab_size must be an int, got {vocab_size!r}")
    if vocab_size > MAX_VOCAB_SIZE:
        raise TrainingError(f"vocab_size {vocab_size} is larger than {MAX_VOCAB_SIZE}: ids are 32-bit")
    if vocab_size < minimum:
        raise TrainingError(f"vocab_size must be at least {minimum}, got {vocab_size}")
    return vocab_size

"""The trainers: byte-level BPE, WordPiece, Unigram and SentencePiece BPE (one module each),
with shared counting and character-coverage passes."""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass

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


@dataclass(frozen=True)
class VocabReport:
    """How big the trained vocabulary came out (``WordPieceTrainer.last_report``,
    ``SentencePieceBPETrainer.last_report``)."""

    vocab_size_requested: int
    vocab_size: int
    merges: int

    @property
    def stopped_early(self) -> bool:
        """True when nothing was left to merge before ``vocab_size_requested`` was reached."""
        return self.vocab_size < self.vocab_size_requested


class NoTrainingDataError(TrainingError):
    """The input holds no text to learn from (empty files or texts, or nothing but
    special tokens or blank lines). A :class:`~tokenforge.errors.TrainingError`; the
    trainers that read files name them in the message."""


#: Formats written as a folder of files (created with its parents when missing).
FOLDER_FORMATS = ("gpt2", "transformers")


def check_output_path(path: str | os.PathLike[str], format: str | None = None) -> str:
    """Check, before any training, that a tokenizer can be written to ``path``, and raise
    :class:`TrainingError` naming ``path`` if not: a file's folder must exist and be
    writable and ``path`` must not be a folder; a folder format (``format`` in
    :data:`FOLDER_FORMATS`) is created with its parents, so its nearest existing
    ancestor must be a writable folder. Returns ``path`` as a str."""
    out = os.fspath(path)
    if not out:
        raise TrainingError("the output path is empty")
    seps = "/" + os.sep + (os.altsep or "")
    target = out.rstrip(seps) or out
    if format in FOLDER_FORMATS:
        if os.path.exists(target) and not os.path.isdir(target):
            raise TrainingError(f"cannot write {out}: it is a file, and the {format} format writes a folder")
        folder = os.path.abspath(target)
        while not os.path.exists(folder):
            folder = os.path.dirname(folder)
    else:
        if os.path.isdir(target):
            raise TrainingError(f"cannot write {out}: it is a folder; give a file name")
        folder = os.path.dirname(target) or "."
        if not os.path.exists(folder):
            raise TrainingError(f"cannot write {out}: the folder {folder} does not exist")
    if not os.path.isdir(folder):
        raise TrainingError(f"cannot write {out}: {folder} is not a folder")
    try:  # the real test (permissions, read-only file systems, root): a nameless temporary file
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        raise TrainingError(f"cannot write {out}: the folder {folder} is not writable "
                            f"({exc.strerror or exc})") from None
    return out

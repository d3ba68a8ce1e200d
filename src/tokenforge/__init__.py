"""tokenforge: train, run, convert and explain the tokenizers language models use.

>>> import tokenforge
>>> enc = tokenforge.get_encoding("o200k_base")
>>> enc.decode(enc.encode("hello world"))
'hello world'
"""

from __future__ import annotations

from ._version import __version__
from .decoders import StreamDecoder
from .encodings import encoding_for_model, encoding_name_for_model, get_encoding, list_encodings
from .errors import (
    ArgumentTypeError,
    DecodeError,
    EncodeInputError,
    FileFormatError,
    InvalidArgumentError,
    InvalidSpanError,
    MissingDependencyError,
    PrepareError,
    SpecialTokenError,
    TokenforgeError,
    TokenizerFileNotFoundError,
    TrainingError,
    UnknownEncodingError,
    UnknownIdError,
    UnknownTokenError,
)
from .io import load, save
from .models.bpe import BPE, PieceBPE
from .models.unigram import Unigram
from .models.wordpiece import WordPiece
from .presets import (
    bert_wordpiece,
    sentencepiece,
    train_sentencepiece_bpe,
    train_unigram,
    train_wordpiece,
)
from .prepare import count, open_tokens, prepare
from .pretokenizers import PATTERNS, RegexSplit
from .tokenizer import AddedToken, Tokenizer
from .trainers.bpe import BPETrainer, TrainReport, train_bpe


__all__ = [
    "__version__",
    "AddedToken",
    "ArgumentTypeError",
    "BPE",
    "BPETrainer",
    "DecodeError",
    "EncodeInputError",
    "FileFormatError",
    "InvalidArgumentError",
    "InvalidSpanError",
    "MissingDependencyError",
    "PATTERNS",
    "PieceBPE",
    "PrepareError",
    "RegexSplit",
    "SpecialTokenError",
    "StreamDecoder",
    "TokenforgeError",
    "Tokenizer",
    "TokenizerFileNotFoundError",
    "TrainReport",
    "TrainingError",
    "Unigram",
    "UnknownEncodingError",
    "UnknownIdError",
    "UnknownTokenError",
    "WordPiece",
    "bert_wordpiece",
    "count",
    "encoding_for_model",
    "encoding_name_for_model",
    "get_encoding",
    "list_encodings",
    "load",
    "open_tokens",
    "prepare",
    "save",
    "sentencepiece",
    "train_bpe",
    "train_sentencepiece_bpe",
    "train_unigram",
    "train_wordpiece",
]


"""tokenforge: train, run, convert and explain the tokenizers language models use.

>>> import tokenforge
>>> enc = tokenforge.get_encoding("o200k_base")
>>> enc.decode(enc.encode("hello world"))
'hello world'
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._version import __version__
from .encodings import encoding_for_model, encoding_name_for_model, get_encoding, list_encodings
from .errors import (
    ArgumentTypeError,
    ChatTemplateError,
    ChatTemplateLimitError,
    DecodeError,
    EncodeInputError,
    FileFormatError,
    InvalidArgumentError,
    InvalidSpanError,
    MissingDependencyError,
    OutputExistsError,
    PrepareError,
    SaveError,
    SpecialTokenError,
    TokenforgeError,
    TokenizerFileNotFoundError,
    TrainingError,
    UnknownEncodingError,
    UnknownIdError,
    UnknownModelError,
    UnknownTokenError,
)
# ``tokenforge.sentencepiece`` is both a subpackage and a preset: load the subpackage
# first so that importing it later (get_encoding does) cannot rebind the name.
from . import sentencepiece as _sentencepiece_package  # noqa: F401
from .presets import (
    bert_wordpiece,
    sentencepiece,
    train_sentencepiece_bpe,
    train_unigram,
    train_wordpiece,
)

if TYPE_CHECKING:  # the names bound on first use below, as type checkers should see them
    from ._native import backend
    from .analysis.align import AlignedGroup, align, align_text
    from .decoders import StreamDecoder
    from .io import convert, load, save
    from .models.bpe import BPE, PieceBPE
    from .models.unigram import Unigram
    from .models.wordpiece import WordPiece
    from .prepare import count, open_tokens
    from .pretokenizers import PATTERNS, RegexSplit
    from .tokenizer import AddedToken, Tokenizer
    from .trainers.bpe import BPETrainer, TrainReport, train_bpe
    from .web import serve

# Everything below is bound on first use (PEP 562), so ``import tokenforge`` and
# ``get_encoding`` do not pay for file formats, trainers or the other models.
# Each name maps to the module it comes from, relative to this package.
_LAZY: dict[str, str] = {
    "backend": "._native",
    "align": ".analysis.align",
    "align_text": ".analysis.align",
    "AlignedGroup": ".analysis.align",
    "count": ".prepare",
    "open_tokens": ".prepare",
    "load": ".io",
    "save": ".io",
    "convert": ".io",
    "BPE": ".models.bpe",
    "PieceBPE": ".models.bpe",
    "Unigram": ".models.unigram",
    "WordPiece": ".models.wordpiece",
    "PATTERNS": ".pretokenizers",
    "RegexSplit": ".pretokenizers",
    "AddedToken": ".tokenizer",
    "Tokenizer": ".tokenizer",
    "StreamDecoder": ".decoders",
    "BPETrainer": ".trainers.bpe",
    "TrainReport": ".trainers.bpe",
    "train_bpe": ".trainers.bpe",
    "serve": ".web",
}


def __getattr__(name: str) -> object:
    from importlib import import_module

    module = _LAZY.get(name)
    if module is None:
        # A submodule the eager imports used to load as a side effect (``tokenforge.io``).
        if not name.startswith("_"):
            from importlib.util import find_spec

            if find_spec(f"{__name__}.{name}") is not None:
                return import_module(f".{name}", __name__)
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = [
    "__version__",
    "AddedToken",
    "AlignedGroup",
    "ArgumentTypeError",
    "ChatTemplateError",
    "ChatTemplateLimitError",
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
    "OutputExistsError",
    "PrepareError",
    "SaveError",
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
    "UnknownModelError",
    "UnknownTokenError",
    "WordPiece",
    "align",
    "align_text",
    "backend",
    "bert_wordpiece",
    "count",
    "encoding_for_model",
    "encoding_name_for_model",
    "get_encoding",
    "list_encodings",
    "load",
    "convert",
    "open_tokens",
    "prepare",
    "save",
    "serve",
    "sentencepiece",
    "train_bpe",
    "train_sentencepiece_bpe",
    "train_unigram",
    "train_wordpiece",
]


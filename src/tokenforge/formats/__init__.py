"""File formats: the readers and writers of each format, as leaves.

Each module turns the bytes of one format into tokenizer components and back:
:mod:`~tokenforge.formats.native` (tokenforge's JSON with a sha256 per part),
:mod:`~tokenforge.formats.tiktoken` (rank files), :mod:`~tokenforge.formats.gpt2`
(``vocab.json`` + ``merges.txt``), :mod:`~tokenforge.formats.hf_json`
(``tokenizer.json``), :mod:`~tokenforge.formats.sentencepiece` (``.model``),
:mod:`~tokenforge.formats.bert_vocab` (``vocab.txt``) and
:mod:`~tokenforge.formats.gguf` (llama.cpp). Opening a file, with format
detection, is :func:`tokenforge.load` (:mod:`tokenforge.io`). :func:`save`
writes a tokenizer in any format that expresses it exactly; every writer is
atomic (temporary file, then rename).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import FileFormatError, OutputExistsError

if TYPE_CHECKING:
    from ..tokenizer import Tokenizer
    from .hf_json import to_hf_live

FORMATS = ("tokenforge", "tiktoken", "gpt2", "hf", "sentencepiece", "bert_vocab", "transformers")
#: Every format ``load`` reads.
LOAD_FORMATS = ("tokenforge", "tiktoken", "gpt2", "hf", "sentencepiece", "bert_vocab", "gguf")

#: What each format is and the names its files typically have, for messages that list them.
FORMAT_DESCRIPTIONS = {
    "tokenforge": "tokenforge's JSON (*.json with format_version)",
    "hf": "HF tokenizers' tokenizer.json",
    "tiktoken": "a tiktoken rank file (*.tiktoken, or Llama 3's tokenizer.model)",
    "gpt2": "GPT-2's vocab.json + merges.txt",
    "sentencepiece": "a SentencePiece *.model",
    "bert_vocab": "a BERT WordPiece vocab.txt (with [UNK] and [CLS])",
    "gguf": "a llama.cpp *.gguf",
    "transformers": "a transformers folder (tokenizer.json + tokenizer_config.json)",
}

__all__ = ["FORMATS", "FORMAT_DESCRIPTIONS", "LOAD_FORMATS", "check_overwrite", "format_for_path", "output_files",
           "save", "to_hf_live"]


def __getattr__(name: str) -> object:
    # ``to_hf_live`` loads the tokenizer.json module only when asked for, so reading
    # one format (say tiktoken rank files) does not import the others.
    if name == "to_hf_live":
        from .hf_json import to_hf_live

        globals()[name] = to_hf_live
        return to_hf_live
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def format_for_path(path: str | os.PathLike) -> str:
    """The format a file name asks for: a name ending in ``tokenizer.json`` (``tokenizer.json``,
    ``my_tokenizer.json``) is HF's, as is ``*.hf.json``; ``*.tiktoken`` a rank
    file, ``*.model`` a SentencePiece model, ``*.txt`` a BERT vocabulary, a folder (a path
    ending in a separator or an existing directory) GPT-2's ``vocab.json`` + ``merges.txt``;
    anything else tokenforge's own JSON."""
    text = os.fspath(path)
    name = os.path.basename(text.rstrip("/" + os.sep))
    if text.endswith(("/", os.sep)) or os.path.isdir(text):
        return "gpt2"
    if name.endswith(("tokenizer.json", ".hf.json")):
        return "hf"
    if name.endswith(".tiktoken"):
        return "tiktoken"
    if name.endswith(".model"):
        return "sentencepiece"
    if name.endswith(".txt"):
        return "bert_vocab"
    return "tokenforge"


def output_files(path: str | os.PathLike, format: str) -> list[Path]:
    """The files that writing ``format`` to ``path`` creates or replaces: one file, or for
    the folder formats (``gpt2``, ``transformers``, and ``hf`` given a folder) the files
    inside the folder."""
    p = Path(path)
    if format == "gpt2":
        return [p / "vocab.json", p / "merges.txt"]
    if format == "transformers":
        return [p / "tokenizer.json", p / "tokenizer_config.json", p / "special_tokens_map.json"]
    if format == "hf" and p.is_dir():
        return [p / "tokenizer.json"]
    return [p]


def check_overwrite(path: str | os.PathLike, format: str, overwrite: bool) -> None:
    """Raise :class:`~tokenforge.errors.OutputExistsError` naming the file when writing
    ``format`` to ``path`` would replace an existing file and ``overwrite`` is false."""
    if overwrite:
        return
    existing = [f for f in output_files(path, format) if f.exists() or f.is_symlink()]
    if existing:
        what = f"{existing[0]} already exists" if len(existing) == 1 else \
            f"{', '.join(map(str, existing[:-1]))} and {existing[-1]} already exist"
        raise OutputExistsError(f"{what}; pass overwrite=True to replace it, or choose another path")


def save(tokenizer: "Tokenizer", path: str | os.PathLike, format: str = "tokenforge") -> None:
    """Write ``tokenizer`` in ``format`` (see :meth:`tokenforge.Tokenizer.save`)."""
    from ..models.wordpiece import WordPiece
    from .bert_vocab import save_bert_vocab
    from .gpt2 import save_gpt2
    from .hf_json import save_hf
    from .native import save_native
    from .sentencepiece import proto_from_tokenizer, write_model
    from .tiktoken import save_ranks

    if format not in FORMATS:
        raise FileFormatError(f"unknown format {format!r}; choose one of {', '.join(FORMATS)}", path=path)
    if format == "tokenforge":
        from ..fingerprint import fingerprint_record

        save_native(tokenizer.to_dict(), path, fingerprint_record(tokenizer))
    elif format == "transformers":
        from .hf_json import save_transformers

        save_transformers(tokenizer, path)
    elif format == "hf":
        save_hf(tokenizer, path)
    elif format in ("tiktoken", "gpt2"):
        try:
            model = tokenizer.rank_model()
        except FileFormatError as exc:
            raise FileFormatError(f"format {format!r} holds byte-level BPE ranks: {exc}", path=path) from None
        if format == "tiktoken":
            if tokenizer.pattern is None:
                raise FileFormatError(
                    "a tiktoken rank file is read with a split pattern, and this tokenizer has none; "
                    "save it as 'tokenforge' or 'hf'", path=path,
                )
            save_ranks(model, path)
        else:
            save_gpt2(model, tokenizer.special_tokens, path)
    elif format == "sentencepiece":
        try:
            write_model(proto_from_tokenizer(tokenizer), path)
        except FileFormatError as exc:
            raise FileFormatError(str(exc), path=path) from None
    else:
        if not isinstance(tokenizer.model, WordPiece):
            raise FileFormatError(
                f"a vocab.txt holds a WordPiece vocabulary; this tokenizer's model is {type(tokenizer.model).__name__}",
                path=path,
            )
        save_bert_vocab(tokenizer.get_vocab(), path)


"""Corpus to training arrays: ``prepare``, ``count`` and ``open_tokens``.

The job nanoGPT's ``prepare.py``, Megatron-LM's ``preprocess_data.py`` and
datatrove's tokenize step do: read a corpus (text files, JSON Lines, Parquet,
stdin, an iterable or an HF ``datasets.Dataset``), encode every document with
any tokenizer tokenforge opens, put the tokenizer's document separators
around each one, and write flat ``uint16``/``uint32`` token shards that
``np.memmap`` reads, with an ``index.json`` that says what they hold.

Modules: :mod:`.sources` (inputs to documents), :mod:`.encoder` (the local
engine: native threads or processes), :mod:`.ray_engine` (the same on a Ray
cluster), :mod:`.shards` (shards, checkpoints, resumption), :mod:`.job` (the
job itself) and :mod:`.reader` (``open_tokens``).
"""

from __future__ import annotations

from .job import CountReport, CountRow, Separators, count, prepare, resolve_separators
from .reader import ShardedIds, Tokens, open_tokens
from ..errors import PrepareError

__all__ = [
    "CountReport",
    "CountRow",
    "PrepareError",
    "Separators",
    "ShardedIds",
    "Tokens",
    "count",
    "open_tokens",
    "prepare",
    "resolve_separators",
]

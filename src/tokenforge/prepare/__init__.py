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

import sys
import types
from typing import TYPE_CHECKING, Any

from ..errors import PrepareError

if TYPE_CHECKING:  # the names bound on first use below, as type checkers should see them
    from .job import CountReport, CountRow, Separators, count, prepare, resolve_separators
    from .reader import ShardedIds, Tokens, open_tokens

# The job's modules are loaded on first use, so that ``import tokenforge`` stays light.
_LAZY = {
    "CountReport": ".job", "CountRow": ".job", "Separators": ".job", "count": ".job", "prepare": ".job",
    "resolve_separators": ".job", "ShardedIds": ".reader", "Tokens": ".reader", "open_tokens": ".reader",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(module, __name__), name)
    globals()[name] = value
    return value


class _PrepareModule(types.ModuleType):
    """``tokenforge.prepare`` is this package and, when called, the :func:`prepare` function
    (the package and the function share the name, whichever was imported first)."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.prepare(*args, **kwargs)


sys.modules[__name__].__class__ = _PrepareModule

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

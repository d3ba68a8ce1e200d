"""Access to the compiled core, with the pure-Python reference as the fallback.

The core (``tokenforge._core``, C++ under ``_core/``) holds only hot loops:
the scanners of the named split patterns, BPE merging, decoding, and the
training merge loop. Every one of them has a pure-Python twin in this package
that tests compare it with. ``TOKENFORGE_BACKEND=python`` (or
``backend="python"`` where an API takes it) forces the reference path.
"""

from __future__ import annotations

import os
from types import ModuleType

from .errors import InvalidArgumentError, MissingDependencyError

#: Named split patterns that have a native scanner, and its id in the core.
SCANNERS = {"gpt2": 0, "cl100k": 1, "o200k": 2, "llama3": 3, "qwen": 4}
BACKENDS = ("auto", "native", "python")

try:  # pragma: no branch
    from . import _core as _core_module
except ImportError as exc:  # the extension was not built
    _core_module = None
    _IMPORT_ERROR: str | None = str(exc)
else:
    _IMPORT_ERROR = None


def core(backend: str = "auto") -> ModuleType | None:
    """The native module for ``backend``, or ``None`` for the Python path."""
    if backend not in BACKENDS:
        raise InvalidArgumentError(f"backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    if backend == "auto":
        backend = os.environ.get("TOKENFORGE_BACKEND", "auto")
        if backend not in BACKENDS:
            raise InvalidArgumentError(f"TOKENFORGE_BACKEND must be one of {', '.join(BACKENDS)}, got {backend!r}")
    if backend == "python":
        return None
    if _core_module is None and backend == "native":
        raise MissingDependencyError(f"the native core is not available: {_IMPORT_ERROR}")
    return _core_module


def available() -> bool:
    return _core_module is not None

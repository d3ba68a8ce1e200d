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


def _load_core() -> tuple[ModuleType | None, str | None]:
    """The compiled module and ``None``, or ``None`` and why it cannot be used."""
    try:
        from . import _core as module
    except ImportError as exc:  # not built (no compiler at install time), or built for another Python
        return None, str(exc)
    # In a source tree without the built module, ``_core`` is the directory of the C++
    # sources, which Python imports as an empty namespace package: that is no core either.
    if getattr(module, "__file__", None) is None:
        return None, "tokenforge._core is not built (only its C++ sources were found)"
    return module, None


_core_module, _IMPORT_ERROR = _load_core()


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
    if _core_module is None:
        if backend == "native":
            raise MissingDependencyError(f"the native core is not available: {_IMPORT_ERROR}")
        _warn_python_fallback()
    return _core_module


_warned = False


def _warn_python_fallback() -> None:
    """Say once per process that the default backend is the pure-Python one because the
    core is missing (pip hides the build's own warning when an install succeeds)."""
    global _warned
    if not _warned:
        _warned = True
        import warnings

        warnings.warn(
            f"tokenforge: the native core is not installed ({_IMPORT_ERROR}); using the pure-Python "
            "backend, which gives the same results more slowly. Reinstall tokenforge with a C++17 "
            "compiler for the native core, or set TOKENFORGE_BACKEND=python to silence this.",
            RuntimeWarning,
            stacklevel=3,
        )


def available() -> bool:
    """Whether the native core is installed (whatever ``TOKENFORGE_BACKEND`` says)."""
    return _core_module is not None


def backend() -> str:
    """The backend tokenforge uses by default: ``"native"`` or ``"python"``.

    ``"native"`` is the compiled core (``tokenforge._core``); ``"python"`` is the
    pure-Python implementation, which gives the same results more slowly. The
    default is ``"native"`` when the core is installed, and ``"python"`` when it is
    not (an install without a C++ compiler has no core) or when the environment
    variable ``TOKENFORGE_BACKEND`` is ``python``. The variable is read on every
    call (a tokenizer reads it when it is created). An API that takes a ``backend``
    argument can still be asked for the other one explicitly.

    Raises ``InvalidArgumentError`` if ``TOKENFORGE_BACKEND`` is not one of
    ``auto``, ``native`` or ``python``, and ``MissingDependencyError`` if it is
    ``native`` but the core is not installed.

    >>> import tokenforge
    >>> tokenforge.backend() in ("native", "python")
    True
    """
    return "python" if core("auto") is None else "native"

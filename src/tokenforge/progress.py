"""Progress bars for the long operations: training (every family) and corpus preparation.

One rule decides whether a bar is shown, for every caller:

* ``show=False``: never.
* ``show=True``: always (also when stderr is a file or a pipe).
* ``show=None``: the process-wide mode, which is ``"auto"`` unless the command
  line set it (``tokenforge train --progress`` / ``--quiet``) with :func:`mode`:
  ``"auto"`` shows a bar when someone can see it, i.e. stderr is a terminal or
  the code runs in a Jupyter kernel; ``"always"`` and ``"never"`` say it.

The bars are ``tqdm.auto`` bars, so notebooks get their widget. Every bar here
clears itself when done (``leave=False``) unless asked to stay.

>>> with Progress(10, "demo", show=False) as bar:
...     bar(3)
>>> bool(bar), bar.n
(False, 3)
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from typing import Protocol

    class _Bar(Protocol):
        """What :class:`Progress` uses of a ``tqdm`` bar."""

        def update(self, n: int) -> object: ...
        def set_postfix_str(self, s: str, refresh: bool) -> object: ...
        def close(self) -> object: ...

__all__ = ["MODES", "Progress", "enabled", "get_mode", "mode", "visible"]

#: The process-wide modes (:func:`mode`).
MODES = ("auto", "always", "never")

_mode = "auto"


def get_mode() -> str:
    """The current process-wide mode (see the module docstring)."""
    return _mode


@contextmanager
def mode(value: str) -> Iterator[None]:
    """Set the process-wide mode for the ``with`` block (the command line's
    ``--progress`` is ``"always"``, ``--quiet`` ``"never"``)."""
    global _mode
    if value not in MODES:
        from .errors import InvalidArgumentError

        raise InvalidArgumentError(f"progress mode must be one of {', '.join(MODES)}, not {value!r}")
    old, _mode = _mode, value
    try:
        yield
    finally:
        _mode = old


def _in_notebook() -> bool:
    """True inside a Jupyter kernel (where ``tqdm.auto`` draws a widget)."""
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return False
    try:
        shell = ipython.get_ipython()
        return shell is not None and "IPKernelApp" in shell.config
    except Exception:  # an IPython without a shell, or an unusual one: assume not
        return False


def visible(stream: Any = None) -> bool:
    """Whether a bar on ``stream`` (default: stderr) can be seen: a terminal, or a notebook."""
    stream = sys.stderr if stream is None else stream
    try:
        if stream is not None and stream.isatty():
            return True
    except (AttributeError, ValueError, OSError):  # no isatty, or a closed stream
        pass
    return _in_notebook()


def enabled(show: bool | None = None) -> bool:
    """Whether to show progress: ``show`` if it is a bool, else the process-wide mode."""
    if show is not None:
        return bool(show)
    if _mode == "never":
        return False
    if _mode == "always":
        return True
    return visible()


class Progress:
    """A progress bar, or a no-op when :func:`enabled` says no (then it is falsy).

    Call it (or :meth:`update`) with the amount of work just done, or :meth:`set`
    the total done so far; ``n`` counts it either way. Use it as a context
    manager, or :meth:`close` it.
    """

    def __init__(
        self,
        total: int | None,
        desc: str,
        unit: str = "it",
        *,
        show: bool | None = None,
        unit_scale: bool = False,
        unit_divisor: int = 1000,
        leave: bool = False,
    ) -> None:
        self.n = 0
        self.bar: _Bar | None = None
        if not enabled(show):
            return
        try:
            from tqdm.auto import tqdm  # type: ignore[import-untyped, unused-ignore]  # no stubs unless types-tqdm
        except ImportError:  # pragma: no cover - tqdm is a dependency
            return
        self.bar = tqdm(total=total, desc=desc, unit=unit, unit_scale=unit_scale, unit_divisor=unit_divisor,
                        leave=leave, dynamic_ncols=True, disable=False, file=sys.stderr)

    def __bool__(self) -> bool:
        return self.bar is not None

    def __call__(self, n: int = 1) -> None:
        self.update(n)

    def update(self, n: int = 1) -> None:
        """``n`` more units done."""
        self.n += n
        if self.bar is not None and n:
            self.bar.update(n)

    def set(self, done: int) -> None:
        """``done`` units done in all (never moves back)."""
        if done > self.n:
            self.update(done - self.n)

    def postfix(self, text: str) -> None:
        """Text shown after the bar (e.g. a rate); drawn with the next update."""
        if self.bar is not None:
            self.bar.set_postfix_str(text, refresh=False)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

"""numpy, imported on first use, so that ``import tokenforge`` does not pay for it.

``from ._lazy import np`` gives an object whose attributes are numpy's
(``np.uint32``, ``np.ndarray``, ``np.lib.format``): numpy is imported the first
time one is read.
"""

from __future__ import annotations

from typing import Any


class _Numpy:
    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        import numpy

        return getattr(numpy, name)

    def __repr__(self) -> str:
        return "<numpy, imported on first use>"


np: Any = _Numpy()

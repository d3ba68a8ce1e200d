"""``tiktoken.core``: the :class:`Encoding` class."""

from . import Encoding

__all__ = ["Encoding"]

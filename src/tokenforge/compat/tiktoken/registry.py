"""``tiktoken.registry``: the encodings by name."""

from . import _registered as ENCODINGS  # noqa: N812 (tiktoken's name: the encodings built so far)
from . import get_encoding, list_encoding_names

__all__ = ["ENCODINGS", "get_encoding", "list_encoding_names"]

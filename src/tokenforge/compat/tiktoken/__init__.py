"""tiktoken's API on tokenforge: import this module in place of ``tiktoken``.

>>> import tokenforge.compat.tiktoken as tiktoken
>>> enc = tiktoken.get_encoding("cl100k_base")
>>> enc.encode("hello <|endoftext|>", allowed_special="all")
[15339, 220, 100257]
>>> tiktoken.encoding_for_model("gpt-4o").name
'o200k_base'

The encodings are the ones tiktoken publishes (``gpt2``, ``r50k_base``,
``p50k_base``, ``p50k_edit``, ``cl100k_base``, ``o200k_base``,
``o200k_harmony``), shipped in the package and checked against tiktoken's
sha256 pins, so nothing is downloaded. :class:`Encoding` is a
:class:`tokenforge.Tokenizer`: everything tokenforge adds (offsets, streaming
decode, numpy batches, training arrays) works on it too. Ids equal tiktoken's
on every input; tiktoken's own test files pass against this module.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ... import encodings as _encodings
from ...errors import InvalidArgumentError
from ...models.bpe import BPE
from ...tokenizer import Tokenizer

__all__ = ["Encoding", "get_encoding", "encoding_for_model", "encoding_name_for_model", "list_encoding_names"]

#: The tiktoken release whose API this module follows.
__version__ = "0.14.0"


class Encoding(Tokenizer):
    """``tiktoken.Encoding``: byte-level BPE from a split pattern, merge ranks and
    special tokens.

    >>> from tokenforge.compat.tiktoken import Encoding, get_encoding
    >>> base = get_encoding("gpt2")
    >>> enc = Encoding("gpt2_im", pat_str=base._pat_str, mergeable_ranks=base._mergeable_ranks,
    ...                special_tokens={**base._special_tokens, "<|im_start|>": 50257})
    >>> enc.encode("<|im_start|>hi", allowed_special="all")
    [50257, 5303]
    """

    def __init__(
        self,
        name: str,
        *,
        pat_str: str,
        mergeable_ranks: Mapping[bytes, int],
        special_tokens: Mapping[str, int],
        explicit_n_vocab: int | None = None,
    ) -> None:
        if not isinstance(name, str):
            raise InvalidArgumentError(f"name must be a str, got {type(name).__name__}")
        model = mergeable_ranks if isinstance(mergeable_ranks, BPE) else BPE.from_ranks(mergeable_ranks)
        super().__init__(model, pre_tokenizer=pat_str, special_tokens=dict(special_tokens), name=name)
        if explicit_n_vocab:
            if len(mergeable_ranks) + len(special_tokens) != explicit_n_vocab:
                raise InvalidArgumentError(
                    f"explicit_n_vocab is {explicit_n_vocab}, but there are {len(mergeable_ranks)} mergeable "
                    f"and {len(special_tokens)} special tokens"
                )
            if self.max_token_value != explicit_n_vocab - 1:
                raise InvalidArgumentError(
                    f"explicit_n_vocab is {explicit_n_vocab}, but the largest id is {self.max_token_value}"
                )

    @classmethod
    def _of(cls, tok: Tokenizer) -> "Encoding":
        """An Encoding sharing ``tok``'s (immutable) stages and native tables."""
        enc = object.__new__(cls)
        for slot in Tokenizer.__slots__:
            if slot != "__weakref__":
                object.__setattr__(enc, slot, getattr(tok, slot))
        return enc

    def __repr__(self) -> str:
        return f"<Encoding {self.name!r}>"

    def _encode_single_piece(self, text_or_bytes: str | bytes) -> list[int]:
        """Ids of text (or bytes) merged as one piece, without the split pattern."""
        if isinstance(text_or_bytes, str):
            text_or_bytes = text_or_bytes.encode("utf-8")
        return self._merge_bytes(bytes(text_or_bytes))

    def __reduce__(self) -> tuple[Callable[..., Encoding], tuple[Any, ...]]:
        # A registered encoding pickles by name (as tiktoken does); others by their parts.
        if self.name is not None and _registered.get(self.name) is self:
            return (get_encoding, (self.name,))
        return (
            _rebuild,
            (self.name, self._pat_str, dict(self._mergeable_ranks), dict(self._special_tokens)),
        )


def _rebuild(name: str, pat_str: str, mergeable_ranks: dict[bytes, int], special_tokens: dict[str, int]) -> Encoding:
    return Encoding(name, pat_str=pat_str, mergeable_ranks=mergeable_ranks, special_tokens=special_tokens)


_registered: dict[str, Encoding] = {}


def get_encoding(encoding_name: str) -> Encoding:
    """One of tiktoken's encodings by name, offline; the same object on every call."""
    enc = _registered.get(encoding_name)
    if enc is None:
        if encoding_name not in list_encoding_names():  # tokenforge's own ("bytes") are not tiktoken's
            from ...errors import UnknownEncodingError

            hint = _encodings.suggest_encoding(encoding_name, list_encoding_names())
            raise UnknownEncodingError(f"unknown encoding {encoding_name!r}{f' ({hint})' if hint else ''}; "
                                       f"known: {', '.join(list_encoding_names())}")
        tok = _encodings.get_encoding(encoding_name)
        enc = _registered.setdefault(encoding_name, Encoding._of(tok))
    return enc


def list_encoding_names() -> list[str]:
    """The names :func:`get_encoding` accepts: tiktoken's encodings (rank files), not
    tokenforge's byte tokenizer ``"bytes"``."""
    return [name for name, spec in _encodings.ENCODINGS.items() if spec.rank_file]


def encoding_name_for_model(model_name: str) -> str:
    """The encoding an OpenAI model uses (``"gpt-4o"`` → ``"o200k_base"``); an unknown
    model raises :class:`~tokenforge.errors.UnknownModelError`, a ``KeyError`` as in tiktoken."""
    return _encodings.encoding_name_for_model(model_name)


def encoding_for_model(model_name: str) -> Encoding:
    """The :class:`Encoding` an OpenAI model uses."""
    return get_encoding(encoding_name_for_model(model_name))


def __getattr__(name: str) -> Any:
    # tiktoken's submodules as attributes, as they are after ``import tiktoken``.
    if name in ("core", "load", "model", "registry"):
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

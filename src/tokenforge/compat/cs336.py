"""The Stanford CS336 assignment-1 tokenizer API, backed by tokenforge.

* ``train_bpe(input_path, vocab_size, special_tokens)`` returns
  ``(vocab, merges)``: ``vocab`` maps ids to bytes (the 256 bytes, then the
  special tokens, then one id per merge in order) and ``merges`` lists the
  learned ``(bytes, bytes)`` pairs in order. Pre-tokenization uses the GPT-2
  pattern and ties go to the lexicographically greatest pair. The assignment's
  reference merges compare pairs in GPT-2's printable form (``Ġ`` for the
  space byte), so that is the default here (``tie_break="gpt2_unicode"``);
  pass ``tie_break="bytes"`` to compare raw bytes, tokenforge's own default.
* ``Tokenizer(vocab, merges, special_tokens=None)`` and
  ``Tokenizer.from_files(vocab_filepath, merges_filepath, special_tokens=None)``
  encode and decode with those tables. The given special tokens are always
  treated as specials, longest first, so ``<|endoftext|><|endoftext|>`` wins
  over ``<|endoftext|>`` when both are registered.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from typing import Any, cast

from .. import bytelevel
from ..errors import FileFormatError
from ..models.bpe import BPE
from ..tokenizer import Tokenizer as _Tokenizer
from ..trainers.bpe import BPETrainer

__all__ = ["Tokenizer", "train_bpe"]


def train_bpe(
    input_path: str | os.PathLike[str],
    vocab_size: int,
    special_tokens: list[str],
    **kwargs: Any,
) -> tuple[dict[int, bytes], list[tuple[bytes, bytes]]]:
    """Train byte-level BPE on one file; return ``(vocab, merges)``.

    Extra keyword arguments (``workers``, ``pattern``, ``errors``,
    ``show_progress``, ``tie_break``) go to :class:`tokenforge.BPETrainer`.
    """
    kwargs.setdefault("tie_break", "gpt2_unicode")
    tok = BPETrainer(vocab_size, special_tokens=special_tokens, **kwargs).train([input_path])
    vocab = dict(cast(BPE, tok.model).vocab)
    for s, i in tok.special_tokens.items():
        vocab[i] = s.encode("utf-8")
    return dict(sorted(vocab.items())), cast(BPE, tok.model).merges or []


class Tokenizer:
    """CS336's ``Tokenizer``: encode/decode with a given vocab, merges and specials."""

    def __init__(
        self,
        vocab: dict[int, bytes],
        merges: list[tuple[bytes, bytes]],
        special_tokens: list[str] | None = None,
    ) -> None:
        specials: dict[str, int] = {}
        by_bytes: dict[bytes, int] = {}
        for i, b in sorted(vocab.items()):
            by_bytes.setdefault(bytes(b), i)
        next_id = max(vocab, default=-1) + 1
        for s in special_tokens or []:
            if s in specials:
                continue  # listed twice: same token
            sb = s.encode("utf-8")
            if sb in by_bytes:
                specials[s] = by_bytes[sb]
            else:  # not in the vocab yet: append it, as the assignment allows
                specials[s] = next_id
                next_id += 1
        special_ids = set(specials.values())
        model_vocab = {i: bytes(b) for i, b in vocab.items() if i not in special_ids}
        # Merges whose result carries a special token's id cannot be applied; keep the rest.
        special_bytes = {s.encode("utf-8") for s in specials}
        merge_list = [(bytes(a), bytes(b)) for a, b in merges if bytes(a) + bytes(b) not in special_bytes]
        model = BPE(model_vocab, merge_list)
        ranks = model.ranks
        last = -1
        for n, (a, b) in enumerate(merge_list):
            r = ranks[a + b]
            if r <= last:
                raise FileFormatError(
                    f"merge {n} ({a!r}, {b!r}) makes id {r}, not above the id {last} of an earlier merge; "
                    "ids must follow merge order"
                )
            last = r
        self._tok = _Tokenizer(model, pre_tokenizer="gpt2", special_tokens=specials, name="cs336")
        self._specials = frozenset(specials)

    @classmethod
    def from_files(
        cls,
        vocab_filepath: str | os.PathLike[str],
        merges_filepath: str | os.PathLike[str],
        special_tokens: list[str] | None = None,
    ) -> "Tokenizer":
        """Load GPT-2 style ``vocab.json`` and ``merges.txt`` (byte-level alphabet)."""
        from ..formats.gpt2 import read_merges_txt, read_vocab_json

        raw = read_vocab_json(vocab_filepath)
        specials = set(special_tokens or [])
        vocab: dict[int, bytes] = {}
        for tok, i in raw.items():
            try:
                vocab[i] = bytelevel.decode_string(tok)
            except KeyError:
                if tok not in specials:
                    raise FileFormatError(
                        f"token {tok!r} is not in GPT-2's byte alphabet and is not a listed special token",
                        path=vocab_filepath,
                    ) from None
                vocab[i] = tok.encode("utf-8")
        merges = []
        for lineno, left, right in read_merges_txt(merges_filepath):
            try:
                merges.append((bytelevel.decode_string(left), bytelevel.decode_string(right)))
            except KeyError:
                raise FileFormatError(f"merge {left!r} {right!r} is outside the byte alphabet", path=merges_filepath, line=lineno) from None
        return cls(vocab, merges, special_tokens)

    @property
    def tokenizer(self) -> _Tokenizer:
        """The underlying :class:`tokenforge.Tokenizer`."""
        return self._tok

    def encode(self, text: str) -> list[int]:
        return self._tok.encode(text, allowed_special=self._specials)

    def encode_iterable(self, iterable: Iterable[str]) -> Iterator[int]:
        return self._tok.encode_iterable(iterable, allowed_special=self._specials)

    def decode(self, ids: list[int]) -> str:
        return self._tok.decode(ids, errors="replace")

"""Which control tokens user text can produce: the exposure to injected control tokens.

A special token that text can produce lets a user who controls the text forge a
document boundary or a chat turn. tokenforge's policy guards the special tokens it
knows (``disallowed_special``), but some files define control tokens only as
ordinary pieces of the model: ALBERT's HF ``tokenizer.json`` has no
``added_tokens``, so ``"[CLS] hi [SEP]"`` gives ids 2 and 3 from plain text, in HF
and (for the same ids) in tokenforge. :func:`special_exposure` lists every
control-looking token (special tokens, the post-processor's tokens, and model
pieces written like ``[CLS]``, ``<s>`` or ``<|x|>``) and what each does when its
string appears in text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import regex

from ..errors import SpecialTokenError

__all__ = ["Exposure", "special_exposure"]

#: How control tokens are usually written: ``[CLS]``, ``<s>``, ``<|endoftext|>``, ``<unk>``.
CONTROL_LOOKING = regex.compile(r"\[[A-Z][A-Z0-9_]*\]|<\|[^|<>\s]{1,40}\|>|</?[A-Za-z][A-Za-z0-9_]{0,20}>")


@dataclass(frozen=True)
class Exposure:
    """One control-looking token: its string, id, where it is defined, and what text
    holding that string gives: ``"guarded"`` (raises unless allowed), ``"text"`` (read as
    ordinary text), or ``"REACHABLE"`` (plain text produces the id)."""

    token: str
    id: int
    source: str
    in_text: str
    ids_from_text: tuple[int, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"token": self.token, "id": self.id, "source": self.source, "in_text": self.in_text,
                "ids_from_text": list(self.ids_from_text)}


def special_exposure(tok: Any) -> list[Exposure]:
    """Every control-looking token of ``tok`` and what its string in text gives (by id)."""
    candidates: dict[str, tuple[int, str]] = {}
    for t, i in tok.special_tokens.items():
        candidates[t] = (i, "special token")
    post = tok.post_processor
    if post is not None:
        for item, _type in post._template(True):
            if item not in ("A", "B"):
                for i, t in zip(item[0], item[1]):
                    candidates.setdefault(t, (i, "post-processor"))
    if not tok.is_byte_level:
        for t, i in tok.model.get_vocab().items():
            if CONTROL_LOOKING.fullmatch(t):
                candidates.setdefault(t, (i, "model piece"))
    out = []
    for t, (i, source) in sorted(candidates.items(), key=lambda kv: kv[1][0]):
        try:
            ids = tuple(tok.encode(t, add_special_tokens=False))
        except SpecialTokenError:
            out.append(Exposure(t, i, source, "guarded", ()))
            continue
        out.append(Exposure(t, i, source, "REACHABLE" if i in ids else "text", ids))
    return out

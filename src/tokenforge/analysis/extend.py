"""Extending a vocabulary without breaking the old one (HF transformers' ``add_tokens`` +
``resize_token_embeddings``; Hewitt, 2021).

Editing the tokenizer file is only the first step of adding tokens to a trained
model: old ids, merge ranks and normalization must stay frozen,
the embedding and LM head grow new rows, those rows need an initialization, and
a regression test must show what changed. This module does the tokenizer part
and the initialization, and writes the regression report.

Two kinds of token, because they behave differently:

* ``kind="special"``: control tokens (``<|tool_call|>``). They are matched whole
  and atomically, outside the merges, under the special-token policy, so they
  cannot change how any old text is split; ordinary text that happens to spell
  them is still encoded as before unless the caller allows them.
* ``kind="lexical"``: ordinary vocabulary (domain terms, a new script). They
  take part in normal segmentation, which is the point, and therefore can
  change the ids of old texts that contain them; the report lists exactly which.
  For a byte-level :class:`~tokenforge.Tokenizer` a new token is a new rank
  after every existing id, reached by merges: the token's bytes are first split
  the old way, then merged left to right (``p1+p2``, ``p1p2+p3``, ...), adding
  every missing intermediate as a token too, and the result is checked by
  running the merge loop. A token that the split pattern would cut in two (one
  spanning a space and a word under the GPT patterns) could never be produced,
  so it is refused. For the other families a lexical token is a
  non-special added token, matched in the raw text before the model runs.

New ids come after the current largest id (special tokens included), in the
order given; ``reuse_holes=True`` fills gaps in the id space first.

The regression report compares the old and the new tokenizer on a test set:
the id -> token map of every old id, the ids of every text (encoded with the old
special tokens allowed and every other special string read as text, so it is
the old tokenizer's behaviour), each old special token under the three policies
(allowed, ordinary text, disallowed), and whether texts that round-tripped
before still do.

:func:`init_embeddings` gives new embedding rows the mean of the old rows of the
token's old segmentation: its own surface for lexical tokens, a description
text for control tokens whose surface means nothing (Hewitt, 2021).
With tied weights, write the result into the one shared matrix.
"""

from __future__ import annotations

from ..models.bpe import BPE

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from .. import bytelevel
from ..errors import ArgumentTypeError, InvalidArgumentError, SpecialTokenError, TokenforgeError

__all__ = ["ExtensionError", "ExtensionReport", "TextChange", "extend", "init_embeddings", "regression_report"]


class ExtensionError(TokenforgeError, ValueError):
    """A token cannot be added as asked (already present, or never producible)."""


@dataclass(frozen=True)
class TextChange:
    """One test text whose ids differ between the old and the new tokenizer."""

    text: str
    old_ids: list[int]
    new_ids: list[int]


@dataclass
class ExtensionReport:
    """What :func:`extend` added and what the regression check found.

    ``added``: each requested token -> its new id. ``intermediates``: tokens added
    only so that a lexical token is reachable by merges (bytes -> id).
    ``changed_old_ids``: old ids whose token is not the same any more (must be empty).
    ``changed_texts``: test texts whose ids changed. ``special_changes``: old special
    tokens whose behaviour under some policy changed. ``roundtrip_broken``: texts that
    decoded back to themselves before and do not now.
    """

    kind: str
    added: dict[str, int] = field(default_factory=dict)
    intermediates: dict[bytes, int] = field(default_factory=dict)
    changed_old_ids: list[int] = field(default_factory=list)
    changed_texts: list[TextChange] = field(default_factory=list)
    special_changes: list[str] = field(default_factory=list)
    roundtrip_broken: list[str] = field(default_factory=list)
    texts_checked: int = 0

    @property
    def old_ids_unchanged(self) -> bool:
        return not self.changed_old_ids

    @property
    def encodings_unchanged(self) -> bool:
        return not self.changed_texts

    @property
    def specials_unchanged(self) -> bool:
        return not self.special_changes

    @property
    def ok(self) -> bool:
        """Everything old is as it was (ids, encodings, specials, round trips)."""
        return self.old_ids_unchanged and self.encodings_unchanged and self.specials_unchanged and not self.roundtrip_broken

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form (intermediate tokens in GPT-2's printable byte form)."""
        return {
            "kind": self.kind,
            "added": dict(self.added),
            "intermediates": {bytelevel.encode_bytes(b): i for b, i in self.intermediates.items()},
            "texts_checked": self.texts_checked,
            "old_ids_unchanged": self.old_ids_unchanged,
            "changed_old_ids": list(self.changed_old_ids),
            "encodings_unchanged": self.encodings_unchanged,
            "changed_texts": [
                {"text": c.text, "old_ids": c.old_ids, "new_ids": c.new_ids} for c in self.changed_texts
            ],
            "specials_unchanged": self.specials_unchanged,
            "special_changes": list(self.special_changes),
            "roundtrip_broken": list(self.roundtrip_broken),
        }

    def __str__(self) -> str:
        def yes(flag: bool) -> str:
            return "unchanged" if flag else "CHANGED"

        lines = [
            f"vocabulary extension ({self.kind}): {len(self.added)} token(s) added"
            + (f", {len(self.intermediates)} intermediate merge token(s)" if self.intermediates else ""),
        ]
        lines += [f"  {tok!r} -> {i}" for tok, i in self.added.items()]
        lines.append(f"old ids:        {yes(self.old_ids_unchanged)}" + (
            f" ({len(self.changed_old_ids)}: {self.changed_old_ids[:10]})" if self.changed_old_ids else ""))
        lines.append(f"old encodings:  {yes(self.encodings_unchanged)} "
                     f"({len(self.changed_texts)} of {self.texts_checked} test texts changed)")
        lines += [f"  {c.text[:60]!r}: {c.old_ids[:12]} -> {c.new_ids[:12]}" for c in self.changed_texts]
        lines.append(f"special tokens: {yes(self.specials_unchanged)}")
        lines += [f"  {s}" for s in self.special_changes]
        if self.roundtrip_broken:
            lines.append(f"round trip broken for {len(self.roundtrip_broken)} text(s)")
        return "\n".join(lines)


def extend(
    tokenizer: Any,
    new_tokens: Iterable[str],
    kind: Literal["special", "lexical"] = "special",
    *,
    test_texts: Iterable[str] = (),
    reuse_holes: bool = False,
) -> tuple[Any, ExtensionReport]:
    """Add ``new_tokens`` and return ``(new_tokenizer, report)``.

    The input tokenizer is not modified. ``test_texts`` is the regression set; the
    report also always checks every old id and every old special token.

    >>> import tokenforge
    >>> enc = tokenforge.get_encoding("cl100k_base")
    >>> new, report = extend(enc, ["<|tool_call|>"], kind="special", test_texts=["hi <|tool_call|>"])
    >>> report.added, report.ok
    ({'<|tool_call|>': 100277}, True)
    >>> new.encode("<|tool_call|>", allowed_special="all")
    [100277]
    """
    if kind not in ("special", "lexical"):
        raise InvalidArgumentError(f"kind must be 'special' or 'lexical', got {kind!r}")
    if isinstance(new_tokens, str):
        raise ArgumentTypeError("new_tokens is a list of strings, not one string")
    tokens = list(new_tokens)
    seen: set[str] = set()
    for t in tokens:
        if not isinstance(t, str) or not t:
            raise ExtensionError(f"new tokens must be non-empty str, got {t!r}")
        if t in seen:
            raise ExtensionError(f"{t!r} is listed twice")
        seen.add(t)
    if isinstance(tokenizer.model, BPE):
        new, report = _extend_tokenizer(tokenizer, tokens, kind, reuse_holes)
    else:
        new, report = _extend_pipeline(tokenizer, tokens, kind, reuse_holes)
    regression_report(tokenizer, new, test_texts, into=report)
    return new, report


def _id_source(used: set[int], reuse_holes: bool):
    """Yield fresh ids: the holes below the largest used id first if asked, then max + 1, ..."""
    top = max(used)
    if reuse_holes:
        for i in range(top):
            if i not in used:
                yield i
    i = top + 1
    while True:
        yield i
        i += 1


def _extend_tokenizer(tok: Any, tokens: list[str], kind: str, reuse_holes: bool):
    from ..models.bpe import BPE, bpe_merge_bytes
    from ..tokenizer import Tokenizer

    specials = dict(tok.special_tokens)
    vocab = dict(tok.model.vocab)
    used = set(vocab) | set(specials.values())
    ids = _id_source(used, reuse_holes)
    report = ExtensionReport(kind)
    if kind == "special":
        for t in tokens:
            if t in specials:
                raise ExtensionError(f"{t!r} is already a special token (id {specials[t]})")
            specials[t] = next(ids)
            report.added[t] = specials[t]
        new = Tokenizer(tok.model, pre_tokenizer=tok.pre_tokenizer, special_tokens=specials, name=tok.name)
        return new, report

    ranks = dict(tok.model.ranks)
    merges = None if tok.model.merges is None else list(tok.model.merges)
    for t in tokens:
        data = t.encode("utf-8")
        if data in ranks:
            raise ExtensionError(f"{t!r} is already a token (id {ranks[data]})")
        if t in specials:
            raise ExtensionError(f"{t!r} is a special token (id {specials[t]}); a lexical copy would never be produced")
        if tok.pre_tokenizer is not None:
            pieces = tok.pre_tokenizer.split(t)
            if pieces != [t]:
                raise ExtensionError(
                    f"the split pattern cuts {t!r} into {pieces!r}, so no merge can ever produce it as one token"
                )
        parts = bpe_merge_bytes(ranks, data)  # the old segmentation
        left = parts[0]
        for right in parts[1:]:
            joined = left + right
            if joined not in ranks:
                i = next(ids)
                ranks[joined] = i
                vocab[i] = joined
                if joined != data:
                    report.intermediates[joined] = i
                if merges is not None:
                    merges.append((left, right))
            left = joined
        report.added[t] = ranks[data]
    # A later token's merges can pre-empt an earlier one's: check every token is produced.
    for t, i in report.added.items():
        got = bpe_merge_bytes(ranks, t.encode("utf-8"))
        if got != [t.encode("utf-8")]:
            raise ExtensionError(
                f"after extension {t!r} still splits into {got!r} (the merges added for other new tokens "
                "take precedence); add it in a separate extend() call or in another order"
            )
    new = Tokenizer(BPE(vocab, merges), pre_tokenizer=tok.pre_tokenizer, special_tokens=specials, name=tok.name)
    return new, report


def _extend_pipeline(pipe: Any, tokens: list[str], kind: str, reuse_holes: bool):
    from ..tokenizer import AddedToken, Tokenizer

    vocab = pipe.get_vocab()
    ids = _id_source(set(vocab.values()), reuse_holes)
    report = ExtensionReport(kind)
    added = list(pipe.added_tokens)
    for t in tokens:
        if t in vocab:
            raise ExtensionError(f"{t!r} is already in the vocabulary (id {vocab[t]})")
        i = next(ids)
        added.append(AddedToken(t, i, special=(kind == "special"), normalized=(kind != "special")))
        report.added[t] = i
    new = Tokenizer(
        pipe.model,
        normalizer=pipe.normalizer,
        pre_tokenizer=pipe.pre_tokenizer,
        post_processor=pipe.post_processor,
        decoder=pipe.decoder,
        added_tokens=added,
        name=pipe.name,
    )
    return new, report


def _old_id_map(tok: Any) -> dict[int, Any]:
    if isinstance(tok.model, BPE):
        out: dict[int, Any] = dict(tok.model.vocab)
        for s, i in tok.special_tokens.items():
            out[i] = s
        return out
    return {i: t for t, i in tok.get_vocab().items()}


def _outcome(tok: Any, text: str, **policy: Any) -> tuple[str, Any]:
    try:
        return ("ids", tuple(tok.encode(text, **policy)))
    except SpecialTokenError as exc:
        return ("raises", type(exc).__name__)


def regression_report(
    old: Any, new: Any, test_texts: Iterable[str], *, into: ExtensionReport | None = None
) -> ExtensionReport:
    """Compare two tokenizers for the regression report (see the module docstring).

    ``into``: fill this report instead of a fresh one (``extend`` passes its own).
    """
    report = into if into is not None else ExtensionReport("comparison")
    old_map = _old_id_map(old)
    new_map = _old_id_map(new)
    report.changed_old_ids = sorted(i for i, t in old_map.items() if new_map.get(i) != t)
    old_specials = frozenset(old.special_tokens)
    texts = list(test_texts)
    report.texts_checked = len(texts)
    for text in texts:
        a = old.encode(text, allowed_special=old_specials, disallowed_special=())
        b = new.encode(text, allowed_special=old_specials, disallowed_special=())
        if a != b:
            report.changed_texts.append(TextChange(text, a, b))
        if old.decode(a) == text and new.decode(b) != text:
            report.roundtrip_broken.append(text)
    policies: Sequence[tuple[str, dict[str, Any]]] = (
        ("allowed", {"allowed_special": "all"}),
        ("as text", {"disallowed_special": ()}),
        ("disallowed", {}),
    )
    for s, i in sorted(old.special_tokens.items(), key=lambda kv: kv[1]):
        for label, policy in policies:
            if label == "allowed":
                # only the old special itself is allowed: new specials must not capture it
                policy = {"allowed_special": {s}}
            before, after = _outcome(old, s, **policy), _outcome(new, s, **policy)
            if before != after:
                report.special_changes.append(f"{s!r} ({label}): {before[1]} -> {after[1]}")
    return report


def init_embeddings(
    old_embeddings: Any,
    tokenizer_old: Any,
    new_tokens: Sequence[str] | Mapping[str, int],
    descriptions: Mapping[str, str] | None = None,
) -> Any:
    """Embedding matrix with rows for ``new_tokens``, each the mean of the old rows of
    the token's old segmentation (Hewitt, 2021).

    The segmentation is of ``descriptions[token]`` when given (control tokens, whose
    surface means nothing), else of the token itself (lexical tokens), by the OLD
    tokenizer with special strings read as text. ``new_tokens`` as a list appends one
    row per token in order; as ``{token: id}`` (``report.added``) each row goes to
    its id, so ids that fall in the old matrix's padding rows reuse those rows and
    rows in between that nobody uses are zero. Old rows are copied unchanged; the
    input array is not modified.

    >>> import numpy as np, tokenforge
    >>> from tokenforge import Tokenizer
    >>> from tokenforge.models.wordlevel import WordLevel
    >>> from tokenforge.pretokenizers import WhitespaceSplit
    >>> tok = Tokenizer(WordLevel({"tool": 0, "[UNK]": 1, "call": 2}), pre_tokenizer=WhitespaceSplit())
    >>> E = np.arange(12, dtype=np.float64).reshape(3, 4)
    >>> init_embeddings(E, tok, ["<|tool_call|>"], {"<|tool_call|>": "tool call"})[3].tolist()
    [4.0, 5.0, 6.0, 7.0]
    """
    import numpy as np

    old = np.asarray(old_embeddings)
    if old.ndim != 2:
        raise InvalidArgumentError(f"old_embeddings must be a 2-D (rows, dim) array, got shape {old.shape}")
    rows, dim = old.shape
    if isinstance(new_tokens, Mapping):
        targets = dict(new_tokens)
    else:
        if isinstance(new_tokens, str):
            raise ArgumentTypeError("new_tokens is a list of strings or a {token: id} mapping, not one string")
        targets = {t: rows + k for k, t in enumerate(new_tokens)}
    descriptions = descriptions or {}
    size = max([rows] + [i + 1 for i in targets.values()])
    dtype = old.dtype if np.issubdtype(old.dtype, np.floating) else np.float64
    out = np.zeros((size, dim), dtype=dtype)
    out[:rows] = old

    # the post-processor's [CLS]/[SEP] are not part of any token's surface
    extra = {"add_special_tokens": False}
    taken = set(_old_id_map(tokenizer_old))
    for t, i in targets.items():
        source = descriptions.get(t, t)
        ids = tokenizer_old.encode(source, disallowed_special=(), **extra)
        if not ids:
            raise ExtensionError(f"{source!r} (for {t!r}) encodes to no tokens; give a non-empty description")
        bad = [j for j in ids if j >= rows]
        if bad:
            raise ExtensionError(
                f"{source!r} (for {t!r}) encodes to id {bad[0]}, beyond the {rows} rows of old_embeddings"
            )
        if i in taken:
            raise ExtensionError(f"{t!r} is given id {i}, which is an old token's row")
        out[i] = old[ids].mean(axis=0)
    return out


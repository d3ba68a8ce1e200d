"""What the token page shows, as JSON-able dicts: one function per view.

The server (:mod:`tokenforge.web.app`) answers the page's requests with these,
and ``tokenforge explain --html`` embeds the same dicts in a static file, so
both render the same data with the same script. Every function takes a
:class:`~tokenforge.Tokenizer` and plain values and does no I/O.

Strings that reach the page (tokens, pieces, file names) are data: the page
puts them in the document as text nodes, never as markup. Tokens are shown by
:func:`~tokenforge.analysis.explain.render_bytes`, which makes whitespace,
control, format (bidi) characters and bytes that are not whole UTF-8
characters visible.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..analysis.explain import indent_costs, number_splits, render_bytes, token_bytes, token_merges
from ..models.bpe import BPE
from ..specials import SpecialPolicy
from ..tokenizer import Tokenizer

__all__ = [
    "compare_view",
    "encode_view",
    "family",
    "glitch_view",
    "indent_view",
    "numbers_view",
    "stability_view",
    "token_view",
    "tokenizer_info",
]


def family(tok: Tokenizer) -> str:
    """``bpe`` (byte-level, by rank), ``piece-bpe``, ``wordpiece`` or ``unigram``."""
    model = tok.model
    if isinstance(model, BPE):
        return "bpe"
    name = type(model).__name__.lower()
    return {"piecebpe": "piece-bpe"}.get(name, name)


def tokenizer_info(name: str, tok: Tokenizer, source: str) -> dict[str, Any]:
    """One entry of ``GET /api/tokenizers``."""
    return {"name": name, "family": family(tok), "vocab_size": tok.n_vocab, "source": source}


def encode_view(tok: Tokenizer, text: str, *, allowed_special: SpecialPolicy = frozenset(),
                disallowed_special: SpecialPolicy = "all") -> dict[str, Any]:
    """The tokens of ``text``, each with its id, its bytes and its span in ``text``.

    ``offsets`` are code-point offsets into ``text`` (a JavaScript string indexes
    UTF-16 units: the page converts). Special-token strings in the text follow
    :meth:`Tokenizer.encode <tokenforge.Tokenizer.encode>`: by default one raises
    :class:`~tokenforge.errors.SpecialTokenError`; ``allowed_special`` matches them as
    special tokens, ``disallowed_special=()`` reads the others as ordinary text.
    ``partial`` marks a token holding only some bytes of a character (its neighbours
    share the character's span).
    """
    spans = tok.encode_with_offsets(text, allowed_special=allowed_special, disallowed_special=disallowed_special)
    ids = [s.id for s in spans]
    raw = {i: token_bytes(tok, i) for i in dict.fromkeys(ids)}  # once per distinct id
    shown = {i: render_bytes(b) for i, b in raw.items()}
    hexes = {i: b.hex() for i, b in raw.items()}
    n_bytes = len(text.encode("utf-8", "surrogatepass"))
    return {
        "ids": ids,
        "tokens": [shown[i] for i in ids],
        "hex": [hexes[i] for i in ids],
        "offsets": [[s.start, s.end] for s in spans],
        "partial": [s.partial for s in spans],
        "special": [s.special for s in spans],
        "count": len(ids),
        "chars": len(text),
        "bytes": n_bytes,
        "bytes_per_token": round(n_bytes / len(ids), 4) if ids else None,
    }


def _merge_tree(merges: Sequence[Any], parts: Sequence[bytes]) -> list[dict[str, Any]]:
    """The merges of one piece as trees: a node is ``{"token", "hex", "rank", "children"}``
    (``rank`` and two children for a merge, ``None`` and none for a single byte)."""
    nodes: dict[int, dict[str, Any]] = {}
    # every byte a leaf, keyed by its offset; a merge replaces the left node, drops the right
    data = b"".join(parts)
    for i in range(len(data)):
        b = data[i : i + 1]
        nodes[i] = {"token": render_bytes(b), "hex": b.hex(), "rank": None, "children": []}
    width = {i: 1 for i in range(len(data))}
    for m in merges:
        left = nodes.pop(m.start)
        right_at = m.start + width.pop(m.start)
        right = nodes.pop(right_at)
        joined = m.left + m.right
        nodes[m.start] = {"token": render_bytes(joined), "hex": joined.hex(), "rank": m.rank,
                          "children": [left, right]}
        width[m.start] = len(joined)
        width.pop(right_at)
    return [nodes[k] for k in sorted(nodes)]


def token_view(tok: Tokenizer, token_id: int) -> dict[str, Any]:
    """One token: its bytes, its vocabulary spelling, and for byte-level BPE (tiktoken
    ranks or an HF merge list) the merge tree that builds it from bytes (with ranks) and
    whether the merges alone reach it."""
    raw = token_bytes(tok, token_id)
    out: dict[str, Any] = {
        "id": token_id,
        "token": render_bytes(raw),
        "hex": raw.hex(),
        "vocab": tok.id_to_token(token_id),
        "special": token_id in set(tok.special_tokens.values()),
        "family": family(tok),
        "rank": None,
        "tree": None,
        "reached_by_merges": None,
    }
    model = tok.model
    traced = None if out["special"] else token_merges(tok, token_id)  # byte-level BPE: tiktoken or HF files
    if traced is not None:
        merges, parts = traced
        if isinstance(model, BPE):
            out["rank"] = model.ranks.get(raw)
        elif merges and parts == [raw]:
            out["rank"] = merges[-1].rank  # HF: the line of merges that makes the token
        out["tree"] = _merge_tree(merges, parts)
        out["reached_by_merges"] = parts == [raw]
    return out


def stability_view(tok: Tokenizer, text: str, *, allowed_special: SpecialPolicy = frozenset(),
                   disallowed_special: SpecialPolicy = "all", max_backoff: int = 8) -> dict[str, Any]:
    """Which trailing tokens a continuation of ``text`` could change: the last tokens
    whose bytes are a proper prefix of some longer token (token healing, Lundberg 2023),
    and the bytes a healed generation must start with.

    ``unstable`` holds indices into the tokens of :func:`encode_view` (same special-token policy).
    Tokens a post-processor appends (``[SEP]``, ``</s>``) are not text and are skipped; a
    special token is never unstable, and the marking stops at one.
    """
    from ..analysis.healing import heal

    spans = tok.encode_with_offsets(text, allowed_special=allowed_special, disallowed_special=disallowed_special)
    end = len(spans)
    while end and spans[end - 1].special and spans[end - 1].start == spans[end - 1].end:
        end -= 1  # appended by the post-processor: covers no text
    r = heal(tok, [s.id for s in spans[:end]], max_backoff=max_backoff)
    kept = len(r.kept_ids)
    return {
        "count": len(spans),
        "stable": kept,
        "unstable": list(range(kept, end)),
        "prefix": render_bytes(r.prefix_bytes),
        "prefix_hex": r.prefix_bytes.hex(),
        "satisfiable": r.satisfiable,
    }


def numbers_view(toks: Mapping[str, Tokenizer], text: str | None = None) -> dict[str, Any]:
    """How each tokenizer cuts the numbers in ``text`` (default: a standard example)."""
    from ..analysis.explain import NUMBERS_TEXT

    text = NUMBERS_TEXT if text is None else text
    rows = number_splits(text, list(toks.values()))
    for name, row in zip(toks, rows):
        row["encoding"] = name
    return {"text": text, "rows": rows}


def indent_view(toks: Mapping[str, Tokenizer], max_spaces: int = 16) -> dict[str, Any]:
    """The extra tokens 0..``max_spaces`` leading spaces add to a line of code."""
    rows = indent_costs(list(toks.values()), max_spaces=max_spaces)
    for name, row in zip(toks, rows):
        row["encoding"] = name
    return {"max_spaces": max_spaces, "rows": rows}


def glitch_view(tok: Tokenizer, corpus: Sequence[str], top: int = 50) -> dict[str, Any]:
    """Glitch-token candidates: the tokens ``corpus`` never or rarely produces, most
    surprising first (see :func:`tokenforge.analysis.glitch.find_glitch_tokens`)."""
    from ..analysis.glitch import find_glitch_tokens

    rep = find_glitch_tokens(tok, corpus, check_reach=False)
    d = rep.to_dict()
    d["candidates"] = d["candidates"][:top]
    return d


def compare_view(toks: Mapping[str, Tokenizer], texts: Mapping[str, str]) -> dict[str, Any]:
    """The ``compare`` table for ``texts`` (``{file name: text}``): bytes/token, tokens,
    fertility per tokenizer and text, as rows."""
    from ..analysis.compare import compare

    rep = compare(list(toks.values()), dict(texts), reference=None, show_progress=False)
    labels = dict(zip(rep.tokenizers, toks))
    rows = []
    for row in rep.rows:
        d = row.to_dict()
        d["tokenizer"] = labels.get(row.tokenizer, row.tokenizer)
        rows.append(d)
    return {"tokenizers": list(toks), "texts": list(texts), "rows": rows}

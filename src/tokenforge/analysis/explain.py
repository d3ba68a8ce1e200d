"""Explain an encoding stage by stage, and demonstrate where tokenizers surprise.

:func:`explain` re-runs a tokenizer's pipeline in Python and records every
stage: the normalized text (pipelines), the pre-tokens, and for byte-level BPE
every merge in the order the rank rule applies it, as ``(left, right, rank)``.
Encoding by frozen rank (Sennrich et al., 2016; tiktoken) merges, inside one pre-token, the
adjacent pair whose concatenation has the lowest rank, leftmost first, until
no adjacent pair is a token; a pre-token that is itself a token is produced
whole without merging (tiktoken's rule), and the explanation says so. BPE from
a ``tokenizer.json`` or ``merges.txt`` (HF tokenizers) logs its merges the same
way, with the rank of each merge (its line in ``merges``), and byte-level ones
are shown as the text they stand for, not in GPT-2's byte alphabet (``Ġ``,
``Ã¶``). SentencePiece BPE (Kudo & Richardson, 2018) has no merge list: it
merges the pair whose concatenation is the piece with the highest score, so
its log gives each merge's score. For Unigram (Kudo, 2018) the Viterbi path is
recorded: each piece with its log-probability, and their sum. For WordPiece
the model's segmentation of each pre-token is recorded. The final ids always
equal ``encode_ordinary``: the explanation is checked against the tokenizer
before it is returned.

Tokens are shown by their bytes (:func:`render_bytes`): printable text, ``␣``
for a space, ``\\n``-style escapes for control characters, and ``<0xXX>`` for
bytes that are not (complete) UTF-8. Vocabulary spellings such as GPT-2's
``Ġ``, SentencePiece's ``▁`` or ``<0xE4>`` are first mapped back to the bytes
they stand for, so every family is shown the same way.

Two demonstrations:

- :func:`number_splits` (Singh & Strouse, 2024): the three generations of digit handling —
  GPT-2 leaves a digit run whole to BPE (irregular chunks), Llama 2 splits
  every digit, cl100k/o200k/Llama 3 cut runs into chunks of at most three
  digits, greedily from the left (``12345`` → ``123`` + ``45``).
- :func:`indent_costs`: the token cost of each indentation level in
  code, i.e. how many extra tokens ``n`` leading spaces add to a line.
"""

from __future__ import annotations

from ..errors import EncodeInputError, InvalidArgumentError
from ..models.bpe import BPE, PieceBPE
from ..models.unigram import Unigram

import heapq
import math
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..tokenizer import Tokenizer

__all__ = [
    "NUMBERS_TEXT",
    "Explanation",
    "Merge",
    "PieceTrace",
    "ViterbiNode",
    "explain",
    "format_indent_costs",
    "format_number_splits",
    "indent_costs",
    "merge_trace",
    "number_splits",
    "render_bytes",
    "token_bytes",
    "token_merges",
]

#: The number-splitting example: a long digit run, a decimal, a year before a CJK character.
NUMBERS_TEXT = "1234567 3.14159 2024年"

_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t", " ": "␣"}


def _render_char(ch: str) -> str:
    esc = _ESCAPES.get(ch)
    if esc is not None:
        return esc
    cat = unicodedata.category(ch)
    if cat[0] in "CZ" and cat != "Zs" or cat == "Zs" and ch != " ":
        # controls, format characters, separators other than the plain space
        return f"\\u{ord(ch):04x}" if ord(ch) <= 0xFFFF else f"\\U{ord(ch):08x}"
    return ch


def render_bytes(data: bytes) -> str:
    """A token's bytes as readable text.

    Complete UTF-8 characters are shown as themselves, a space as ``␣``,
    newline/tab/CR as ``\\n``/``\\t``/``\\r``, other invisible characters as
    ``\\uXXXX``, and every byte that is not part of a complete UTF-8 character
    as ``<0xXX>``.

    >>> render_bytes(b" hello")
    '␣hello'
    >>> render_bytes("中".encode()[:2] + b"\\n")
    '<0xE4><0xB8>\\\\n'
    >>> render_bytes("年".encode())
    '年'
    """
    out: list[str] = []
    i = 0
    n = len(data)
    while i < n:
        b = data[i]
        size = 1 if b < 0x80 else 2 if 0xC2 <= b <= 0xDF else 3 if 0xE0 <= b <= 0xEF else 4 if 0xF0 <= b <= 0xF4 else 0
        if size:
            chunk = data[i : i + size]
            try:
                ch = chunk.decode("utf-8")
            except UnicodeDecodeError:
                ch = None
            if ch is not None and len(chunk) == size:
                out.append(_render_char(ch))
                i += size
                continue
        out.append(f"<0x{b:02X}>")
        i += 1
    return "".join(out)


# ---------------------------------------------------------------------------
# token bytes for every family
# ---------------------------------------------------------------------------


def _pipeline_byte_level(pipeline: Any) -> bool:
    from ..decoders import ByteLevel  # type: ignore[attr-defined]

    return isinstance(getattr(pipeline, "decoder", None), ByteLevel)


def token_bytes(tokenizer: Any, token_id: int) -> bytes:
    """The bytes a token stands for, in any tokenizer family.

    Byte-level BPE by rank: its bytes. The other families: the
    vocabulary string with its spelling undone — GPT-2's byte alphabet
    (``Ġ`` → space) under a ByteLevel decoder, ``▁`` → space, ``<0xXX>`` →
    that byte, and WordPiece's continuing prefix (``##``) dropped.

    >>> import tokenforge
    >>> token_bytes(tokenforge.get_encoding("gpt2"), 995)
    b' world'
    """
    if isinstance(tokenizer.model, BPE):
        return tokenizer.decode_single_token_bytes(token_id)
    tok = tokenizer.id_to_token(token_id)
    model = tokenizer.model
    if _pipeline_byte_level(tokenizer):
        from ..bytelevel import decode_string

        try:
            return decode_string(tok)
        except (KeyError, ValueError):
            return tok.encode("utf-8")
    if len(tok) == 6 and tok.startswith("<0x") and tok.endswith(">"):
        try:
            return bytes([int(tok[3:5], 16)])
        except ValueError:
            pass
    prefix = getattr(model, "continuing_subword_prefix", None)
    if prefix and tok.startswith(prefix) and tok != prefix:
        tok = tok[len(prefix) :]
    return tok.replace("▁", " ").encode("utf-8")


# ---------------------------------------------------------------------------
# the rank merge, logged
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Merge:
    """One merge step inside a pre-token: ``left + right`` merged at byte offset ``start``
    of the piece (offsets count the bytes shown).

    ``rank`` is what ordered the merge in rank-based BPE: the token's rank (tiktoken files)
    or the merge's index in ``merges`` (HF files); lowest first. SentencePiece BPE has no
    ranks (``rank`` is ``None``): ``score`` is the score of the piece the pair became,
    highest first. ``id`` is the token the pair became, where it is not ``rank``.
    """

    left: bytes
    right: bytes
    rank: int | None
    start: int
    score: float | None = None
    id: int | None = None

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "left": render_bytes(self.left),
            "right": render_bytes(self.right),
            "rank": self.rank,
            "start": self.start,
            "left_hex": self.left.hex(),
            "right_hex": self.right.hex(),
        }
        if self.score is not None:
            d["score"] = self.score
        if self.id is not None:
            d["id"] = self.id
        return d

    def render(self) -> str:
        """``merge rank 258: h + e -> he``, or ``merge score -12: ...  (id 1234)``."""
        step = f"{render_bytes(self.left)} + {render_bytes(self.right)} -> {render_bytes(self.left + self.right)}"
        if self.rank is None:
            score = "?" if self.score is None else f"{self.score:g}"
            return f"merge score {score:>9}: {step}" + ("" if self.id is None else f"  (id {self.id})")
        return f"merge rank {self.rank:>7}: {step}"


@dataclass(frozen=True)
class ViterbiNode:
    """One piece of a Unigram model's best segmentation: its id (``None`` for an unknown
    character, merged with its unknown neighbours afterwards), the bytes it covers, and
    its log-probability ``score``."""

    id: int | None
    text: bytes
    score: float

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "text": render_bytes(self.text), "hex": self.text.hex(), "score": self.score}


def merge_trace(ranks: Mapping[bytes, int], piece: bytes) -> tuple[list[Merge], list[bytes]]:
    """Run the rank merge on ``piece`` and log every merge in the order it happens.

    The rule is that of :func:`tokenforge.models.bpe.bpe_merge_bytes`: the
    adjacent pair whose concatenation has the lowest rank merges first, the
    leftmost one on ties. Returns ``(merges, final_parts)``; the final parts
    equal ``bpe_merge_bytes(ranks, piece)``.

    >>> ranks = {bytes([b]): b for b in range(256)} | {b"ab": 256, b"abc": 257}
    >>> merges, parts = merge_trace(ranks, b"abc")
    >>> [(m.left, m.right, m.rank) for m in merges], parts
    ([(b'a', b'b', 256), (b'ab', b'c', 257)], [b'abc'])
    """
    n = len(piece)
    if n == 0:
        return [], []
    get = ranks.get
    # node i covers piece[i:nxt[i]]; dead nodes have nxt[i] == -1
    nxt = list(range(1, n + 1))
    prv = list(range(-1, n - 1))
    heap: list[tuple[int, int, int]] = []
    for i in range(n - 1):
        r = get(piece[i : i + 2])
        if r is not None:
            heap.append((r, i, i + 2))
    heapq.heapify(heap)
    log: list[Merge] = []
    while heap:
        r, i, end = heapq.heappop(heap)
        j = nxt[i]
        if j == -1 or j >= n or nxt[j] != end:
            continue  # stale: node i died or its right neighbour changed
        log.append(Merge(piece[i:j], piece[j:end], r, i))
        nxt[i] = end
        nxt[j] = -1
        if end < n:
            prv[end] = i
        p = prv[i]
        if p >= 0:
            rp = get(piece[p:end])
            if rp is not None:
                heapq.heappush(heap, (rp, p, end))
        if end < n:
            rn = get(piece[i : nxt[end]])
            if rn is not None:
                heapq.heappush(heap, (rn, i, nxt[end]))
    parts = []
    i = 0
    while i < n:
        parts.append(piece[i : nxt[i]])
        i = nxt[i]
    return log, parts


# ---------------------------------------------------------------------------
# explanation
# ---------------------------------------------------------------------------


@dataclass
class PieceTrace:
    """One pre-token and what the model made of it.

    ``text`` is the pre-token (normalized), ``ids`` its token ids.
    ``whole`` is true when the piece was produced by a whole-piece lookup
    (byte-level BPE: the piece is itself a token) or is an added token.
    ``merges`` is the logged merge (BPE of every kind; empty otherwise).
    ``viterbi`` is a Unigram model's best path, ``None`` for other models.
    ``vocab_text`` is the pre-token as the vocabulary spells it when that differs
    from ``text`` (GPT-2's byte alphabet: ``ĠschÃ¶n`` for `` schön``).
    """

    text: str
    ids: list[int]
    tokens: list[bytes]
    merges: list[Merge] = field(default_factory=list)
    whole: bool = False
    added: bool = False
    merged: list[bytes] | None = None  #: where the merges alone stop (byte-level BPE)
    viterbi: list[ViterbiNode] | None = None
    vocab_text: str | None = None

    @property
    def score(self) -> float | None:
        """Log-probability of the Viterbi path (Unigram), else ``None``."""
        return None if self.viterbi is None else math.fsum(n.score for n in self.viterbi)

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "vocab_text": self.vocab_text,
            "ids": list(self.ids),
            "tokens": [render_bytes(t) for t in self.tokens],
            "whole_piece": self.whole,
            "added_token": self.added,
            "merges": [m.to_dict() for m in self.merges],
            "merged": None if self.merged is None else [render_bytes(t) for t in self.merged],
            "viterbi": None if self.viterbi is None else [n.to_dict() for n in self.viterbi],
            "score": self.score,
        }


@dataclass
class Explanation:
    """Everything :func:`explain` found, stage by stage."""

    tokenizer: str
    family: str
    text: str
    normalized: str | None
    pre_tokenizer: str | None
    pieces: list[PieceTrace]
    ids: list[int]
    token_strings: list[str | None]
    token_bytes: list[bytes]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able dict (token bytes rendered, and as hex)."""
        return {
            "tokenizer": self.tokenizer,
            "family": self.family,
            "text": self.text,
            "normalized": self.normalized,
            "pre_tokenizer": self.pre_tokenizer,
            "pieces": [p.to_dict() for p in self.pieces],
            "ids": list(self.ids),
            "tokens": [
                {"id": i, "vocab": s, "bytes": render_bytes(b), "hex": b.hex()}
                for i, s, b in zip(self.ids, self.token_strings, self.token_bytes)
            ],
        }

    def render(self) -> str:
        """The explanation as terminal text."""
        lines = [f"tokenizer   {self.tokenizer} ({self.family})", f"text        {self.text!r}"]
        if self.normalized is not None:
            lines.append(f"normalized  {self.normalized!r}")
        lines.append(f"pre-tokens  ({self.pre_tokenizer or 'none'}) " + " | ".join(repr(p.text) for p in self.pieces))
        lines.append("")
        for k, p in enumerate(self.pieces):
            head = f"piece {k}: {p.text!r}"
            if p.added:
                lines.append(f"{head}  added token -> {p.ids}")
                continue
            lines.append(head + (f"  (vocab: {p.vocab_text})" if p.vocab_text is not None else ""))
            for m in p.merges:
                lines.append("    " + m.render())
            if p.viterbi is not None:
                for n in p.viterbi:
                    who = "unknown" if n.id is None else f"id {n.id}"
                    lines.append(f"    viterbi log-prob {n.score:>9.4g}: {render_bytes(n.text)}  ({who})")
                lines.append(f"    best path log-prob {p.score:.4g} (sum over {len(p.viterbi)} pieces)")
            if p.whole and p.merged is not None and p.merged != p.tokens:
                lines.append(
                    "    the piece is a token: taken whole by lookup (the merges alone stop at "
                    + " ".join(render_bytes(t) for t in p.merged) + ")"
                )
            lines.append("    -> " + "  ".join(f"{render_bytes(t)}={i}" for i, t in zip(p.ids, p.tokens)))
        lines.append("")
        lines.append(f"ids ({len(self.ids)})  {self.ids}")
        for i, s, b in zip(self.ids, self.token_strings, self.token_bytes):
            shown = render_bytes(b)
            lines.append(f"  {i:>7}  {shown}" + (f"   (vocab: {s})" if s is not None and s != shown else ""))
        return "\n".join(lines)


def _tokenizer_label(tokenizer: Any) -> str:
    return getattr(tokenizer, "name", None) or type(tokenizer).__name__


def explain(tokenizer: Any, text: str) -> Explanation:
    """Explain how ``tokenizer`` encodes ``text`` (as ``encode_ordinary``: special-token
    strings are read as text, no post-processor ids).

    >>> import tokenforge
    >>> ex = explain(tokenforge.get_encoding("gpt2"), "hello world")
    >>> [p.text for p in ex.pieces], ex.ids
    (['hello', ' world'], [31373, 995])
    """
    if not isinstance(text, str):
        raise EncodeInputError(f"text must be str, got {type(text).__name__}")
    if isinstance(tokenizer.model, BPE):
        ex = _explain_byte_level(tokenizer, text)
    else:
        ex = _explain_pipeline(tokenizer, text)
    expected = tokenizer.encode_ordinary(text)
    if ex.ids != expected:  # the re-run must be the tokenizer; say so loudly if it is not
        raise AssertionError(f"explain() re-ran the pipeline to {ex.ids}, but encode_ordinary gives {expected}")
    return ex


def _explain_byte_level(tok: Tokenizer, text: str) -> Explanation:
    ranks = tok.model.ranks
    fixed = _fix_surrogates(text)
    pre = tok.pre_tokenizer
    pieces = pre.split(fixed) if pre is not None else ([fixed] if fixed else [])
    traces = []
    for piece in pieces:
        data = piece.encode("utf-8")
        merges, parts = merge_trace(ranks, data)
        whole = data in ranks
        if whole:
            ids = [ranks[data]]
            tokens = [data]
        else:
            ids = [ranks[p] for p in parts]
            tokens = parts
        traces.append(PieceTrace(piece, ids, tokens, merges, whole, merged=parts))
    ids = [i for t in traces for i in t.ids]
    tb = [b for t in traces for b in t.tokens]
    return Explanation(
        tokenizer=_tokenizer_label(tok),
        family="byte-level BPE",
        text=text,
        normalized=None,
        pre_tokenizer=None if pre is None else (pre.name or "custom regex"),
        pieces=traces,
        ids=ids,
        token_strings=[None] * len(ids),
        token_bytes=tb,
    )


def _fix_surrogates(text: str) -> str:
    """Each lone surrogate becomes U+FFFD, as the tokenizers do before encoding."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _explain_pipeline(pipe: Any, text: str) -> Explanation:
    model = pipe.model
    norm = pipe.normalizer
    pre = pipe.pre_tokenizer
    text_fixed = _fix_surrogates(text)
    byte_level = _pipeline_byte_level(pipe)
    traces: list[PieceTrace] = []
    normalized_parts: list[str] = []
    # the tokenizer's _segments finds added tokens (non-special ones always match in encode_ordinary).
    for seg, tid, start, _end in pipe._segments(text_fixed, frozenset()):
        if tid is not None:
            traces.append(PieceTrace(seg, [tid], [token_bytes(pipe, tid)], whole=True, added=True))
            normalized_parts.append(seg)
            continue
        normed = norm.normalize_str(seg) if norm is not None else seg
        normalized_parts.append(normed)
        if not normed:
            continue
        pieces = [normed] if pre is None else pre.split(normed, start == 0)
        for piece in pieces:
            traces.append(_trace_piece(pipe, piece, byte_level))
    ids = [i for t in traces for i in t.ids]
    pre_name = None
    if pre is not None:
        pre_name = pre.to_dict().get("type", type(pre).__name__)
    if isinstance(model, PieceBPE):
        family = "SentencePiece BPE" if model.is_sentencepiece else "byte-level BPE" if byte_level else "BPE"
    else:
        family = type(model).__name__
    return Explanation(
        tokenizer=_tokenizer_label(pipe),
        family=family,
        text=text,
        normalized="".join(normalized_parts) if norm is not None else None,
        pre_tokenizer=pre_name,
        pieces=traces,
        ids=ids,
        token_strings=[pipe.id_to_token(i) for i in ids],
        token_bytes=[b for t in traces for b in t.tokens],
    )


def _spelled(pipe: Any, s: str, byte_level: bool) -> bytes:
    """The bytes a string in the vocabulary's alphabet stands for (part of a pre-token)."""
    if byte_level:
        from ..bytelevel import decode_string

        try:
            return decode_string(s)
        except (KeyError, ValueError):
            return s.encode("utf-8", "surrogatepass")
    return s.replace("▁", " ").encode("utf-8", "surrogatepass")


def _vocab_bytes(pipe: Any, s: str, byte_level: bool) -> bytes:
    """The bytes of a vocabulary string that took part in a merge."""
    tid = pipe.model.token_to_id(s)
    return token_bytes(pipe, tid) if tid is not None else _spelled(pipe, s, byte_level)


def _merges_of(pipe: Any, piece: str, log: list, byte_level: bool) -> list[Merge]:
    """:meth:`PieceBPE.merge_trace <tokenforge.models.bpe.PieceBPE.merge_trace>`'s log as
    :class:`Merge` steps over the bytes shown."""
    sp = pipe.model.is_sentencepiece
    return [
        Merge(_vocab_bytes(pipe, left, byte_level), _vocab_bytes(pipe, right, byte_level),
              None if sp else int(priority), len(_spelled(pipe, piece[:start], byte_level)),
              score=float(priority) if sp else None, id=new_id)
        for start, left, right, new_id, priority in log
    ]


def token_merges(tokenizer: Any, token_id: int) -> tuple[list[Merge], list[bytes]] | None:
    """How the merges build one token from its bytes: ``(merges, parts)``, ``parts`` being
    where the merges stop (``[token bytes]`` when they reach the token). For byte-level BPE
    by rank (tiktoken files) and by merge list (HF byte-level files, ranks = lines of
    ``merges``); ``None`` for other families, whose merges do not start from bytes.

    >>> import tokenforge
    >>> merges, parts = token_merges(tokenforge.get_encoding("gpt2"), 31373)  # "hello"
    >>> [m.rank for m in merges][-1], parts
    (31373, [b'hello'])
    """
    model = tokenizer.model
    if isinstance(model, BPE):
        return merge_trace(model.ranks, tokenizer.decode_single_token_bytes(token_id))
    if not (isinstance(model, PieceBPE) and not model.is_sentencepiece and _pipeline_byte_level(tokenizer)):
        return None
    spelled = model.id_to_token(token_id)
    if spelled is None:
        return None
    toks, log = model.merge_trace(spelled, lookup=False)
    return _merges_of(tokenizer, spelled, log, True), [token_bytes(tokenizer, t[0]) for t in toks]


def _trace_piece(pipe: Any, piece: str, byte_level: bool) -> PieceTrace:
    """What the model of a pipeline makes of one pre-token: BPE merges with their rank or
    score, a Unigram Viterbi path with its scores, or (WordPiece, WordLevel) the tokens."""
    model = pipe.model
    text, vocab_text = piece, None
    if byte_level:
        text = _spelled(pipe, piece, True).decode("utf-8", "replace")
        vocab_text = piece if text != piece else None
    merges: list[Merge] = []
    viterbi = None
    merged = None
    if isinstance(model, PieceBPE):
        toks, log = model.merge_trace(piece)
        if model.ignore_merges and len(toks) == 1 and not log and len(piece) > 1:
            # taken whole by lookup (HF's ignore_merges, tiktoken's rule): log the merges anyway
            alone, log = model.merge_trace(piece, lookup=False)
            merged = [token_bytes(pipe, t[0]) for t in alone]
        merges = _merges_of(pipe, piece, log, byte_level)
    elif isinstance(model, Unigram):
        viterbi = [ViterbiNode(None if i < 0 else i, _spelled(pipe, piece[s:e], byte_level), sc)
                   for i, s, e, sc in model.viterbi_nodes(piece)]
        toks = model.tokenize(piece)
    else:
        toks = model.tokenize(piece)
    ids = [t[0] for t in toks]
    return PieceTrace(text, ids, [token_bytes(pipe, i) for i in ids], merges, whole=len(ids) == 1,
                      merged=merged, viterbi=viterbi, vocab_text=vocab_text)


# ---------------------------------------------------------------------------
# number-splitting and indentation demonstrations
# ---------------------------------------------------------------------------

#: The encodings of the number-splitting table: GPT-2 (unbounded digit runs), cl100k (1-3 digits), Llama 3 (1-3 digits).
NUMBER_ENCODINGS = ("gpt2", "cl100k_base", "llama3")


def _resolve(spec: Any) -> tuple[str, Tokenizer | None, Any]:
    """``(label, tokenizer or None, pre-tokenizer)`` for an encoding name, a split-pattern
    name without shipped ranks (``llama3``), or a tokenizer object."""
    from ..encodings import ENCODINGS, get_encoding
    from ..pretokenizers import PATTERNS, RegexSplit

    if isinstance(spec, str):
        if spec in ENCODINGS:
            tok = get_encoding(spec)
            return spec, tok, tok.pre_tokenizer
        if spec in PATTERNS:
            return f"{spec} (split pattern only; no ranks shipped)", None, RegexSplit(spec)
        from ..io import load

        tok = load(spec)
        return spec, tok, tok.pre_tokenizer
    return _tokenizer_label(spec), spec, spec.pre_tokenizer


def number_splits(text: str = NUMBERS_TEXT, encodings: Iterable[Any] = NUMBER_ENCODINGS) -> list[dict[str, Any]]:
    """How each encoding cuts the numbers in ``text`` (Singh & Strouse, 2024).

    For every encoding: the pre-tokens its split pattern makes, and, when its
    ranks are available, the tokens. An entry of ``encodings`` is an encoding
    name, a tokenizer, or a split-pattern name such as ``"llama3"`` whose
    ranks tokenforge does not ship (then ``tokens`` is ``None``; pass a Llama 3
    tokenizer object to see its tokens).

    >>> rows = number_splits("12345", ["gpt2", "cl100k_base"])
    >>> rows[1]["pieces"]
    ['123', '45']
    """
    rows = []
    for spec in encodings:
        label, tok, pre = _resolve(spec)
        if tok is None or isinstance(tok.model, BPE):
            pieces = pre.split(text) if pre is not None else [text]
        else:
            pieces = [p.text for p in explain(tok, text).pieces]
        row: dict[str, Any] = {"encoding": label, "pieces": pieces, "tokens": None, "ids": None}
        if tok is not None:
            ids = tok.encode_ordinary(text)
            row["ids"] = ids
            row["tokens"] = [render_bytes(token_bytes(tok, i)) for i in ids]
        rows.append(row)
    return rows


def indent_costs(
    encodings: Iterable[Any] = ("gpt2", "cl100k_base", "o200k_base"),
    max_spaces: int = 16,
    line: str = "return x",
    before: str = "def f(x):\n",
) -> list[dict[str, Any]]:
    """The token cost of each indentation level 0..``max_spaces`` in code.

    ``cost[n] = len(encode(before + " " * n + line + "\\n")) - len(encode(before + line + "\\n"))``:
    the extra tokens that ``n`` spaces of indentation add to one line of code.
    Also returned: how the indented line is tokenized at each level.

    >>> rows = indent_costs(["cl100k_base"], max_spaces=4)
    >>> rows[0]["cost"][0]
    0
    """
    rows = []
    for spec in encodings:
        label, tok, _pre = _resolve(spec)
        if tok is None:
            raise InvalidArgumentError(f"{spec!r} has no ranks in tokenforge; pass a tokenizer")
        base = len(tok.encode_ordinary(before + line + "\n"))
        costs = []
        shown = []
        for n in range(max_spaces + 1):
            indented = " " * n + line + "\n"
            costs.append(len(tok.encode_ordinary(before + indented)) - base)
            shown.append([render_bytes(token_bytes(tok, i)) for i in tok.encode_ordinary(indented)])
        rows.append({"encoding": label, "cost": costs, "line_tokens": shown})
    return rows


def format_number_splits(rows: Iterable[Mapping[str, Any]], text: str = NUMBERS_TEXT) -> str:
    """The rows of :func:`number_splits` as text: each encoding's pieces and tokens."""
    lines = [f"numbers in {text!r}"]
    for r in rows:
        lines.append(f"  {r['encoding']}")
        lines.append("    pieces: " + " | ".join(repr(p) for p in r["pieces"]))
        if r["tokens"] is not None:
            lines.append("    tokens: " + " | ".join(r["tokens"]))
    return "\n".join(lines)


def format_indent_costs(rows: Iterable[Mapping[str, Any]], max_spaces: int) -> str:
    """The rows of :func:`indent_costs` as a table: extra tokens for 0..``max_spaces`` leading spaces."""
    lines = ["extra tokens for n leading spaces on a line of code"]
    lines.append("  " + f"{'n':<22}" + " ".join(f"{n:>3}" for n in range(max_spaces + 1)))
    for r in rows:
        lines.append("  " + f"{r['encoding'][:22]:<22}" + " ".join(f"{c:>3}" for c in r["cost"]))
    return "\n".join(lines)

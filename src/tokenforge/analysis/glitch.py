"""Glitch-token candidates: vocabulary that the encoder rarely or never produces.

A glitch token (Rumbelow & Watkins, 2023; Land & Bartolo, 2024) is in the
vocabulary but (almost) never appears in the model's training stream, so its embedding row
gets (almost) no gradient — SolidGoldMagikarp in GPT-2/GPT-3. Two different
reasons make a token rare, and this module reports both.

**Under-trained candidates** (:func:`find_glitch_tokens`). Encode a corpus,
count every id, and compare each count with an *expected* count:

- ``expected="rank"`` (default): ids are merge ranks, and BPE learns merges
  in order of pair frequency in *its* training corpus, so tokens of similar
  rank should be similarly frequent in text like that corpus. Ids are grouped
  in rank bands a quarter of an octave wide (ids below 256 — the single
  bytes — form one band; above, band = ``floor(4·log2(id/256))``, so the first
  band holds 48 ids and each next one is 19% wider), and a token's expected
  count is the mean count of the ordinary tokens in its band. (For WordPiece/Unigram pipelines the band is over id order.)
- ``expected="uniform"``: every ordinary token is expected ``total / V`` times.

A token is a candidate when its count is at most ``rare_max`` (default 2:
"never" and "only 1–2 times"). Candidates
are ordered by how surprising their count is: ``log p``, the log-probability
of a count this low under a Poisson law with the expected mean,
``log P(X <= count | λ = expected)``. Corpus counts are only evidence about
the tokenizer's training data; Land & Bartolo (2024) diagnose a real
model by also looking at embedding norms, which a tokenizer library cannot see.

**Unreachable tokens** (:func:`unreachable_tokens`, :func:`reachability`):
tokens that byte-level BPE can never output, whatever the text. The argument
rests on one fact about rank merging (:mod:`tokenforge.models.bpe`): until a
token ``t`` is formed at some span of a pre-token, no token crosses that
span's edges, so the merges inside the span are exactly those of merging
``t``'s bytes alone, in the same order. Hence ``t`` can come out of the merge
loop only if merging its own bytes alone gives ``[t]`` ("formable"); otherwise
the only way to output ``t`` is the whole-piece lookup, when a pre-token
equals ``t``. A token is classified as:

- ``reachable``: with a witness text whose encoding contains it. Either its
  text is one pre-token by itself (then ``encode_ordinary(text) == [t]``), or a
  probed context produces it.
- ``unreachable`` (proved) with reason
  ``shadowed`` (a lower id has the same bytes; encoding always picks it),
  ``impossible_bytes`` (the bytes occur in no UTF-8 text, e.g. ``0xC0`` or
  ``0xFF``), or ``not_formable`` with bytes that are not complete UTF-8 (the
  merges never form it, and a pre-token is always complete UTF-8).
- ``unreachable`` (by the split pattern) with reason
  ``not_formable_not_a_piece`` (complete UTF-8, not formable, and no probed
  context makes its text one pre-token) or ``split_by_pattern`` (no probed
  context puts its text inside one pre-token at all — e.g. ``"a b"`` under
  GPT-2's pattern, which never keeps a space inside a word). These rest on
  probing: the text is placed between each pair of context strings from
  :data:`CONTEXTS`, which cover the character classes the shipped split
  patterns look at (letters in both cases, digits, space, double space,
  newline, punctuation, apostrophe, CJK).
- ``undetermined`` (reason ``absorbed``): formable and possible, but every
  probed context absorbed it into a longer token. These are the tokens that
  "a later merge always absorbs", as far as the probes can tell.
"""

from __future__ import annotations

from ..errors import ArgumentTypeError, InvalidArgumentError
from ..models.bpe import BPE

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..models.bpe import bpe_merge_bytes
from ..tokenizer import Tokenizer
from .explain import render_bytes, token_bytes

__all__ = [
    "CONTEXTS",
    "GlitchCandidate",
    "GlitchReport",
    "ReachabilityReport",
    "TokenReach",
    "find_glitch_tokens",
    "format_reachability",
    "reachability",
    "unreachable_tokens",
]

#: Strings placed before and after a token's text when probing the split pattern and the merges.
CONTEXTS: tuple[str, ...] = ("", " ", "  ", "a", "A", "1", ".", "\n", "'", "中", "é", "s")
#: A second, wider round of contexts for the tokens the first round did not settle.
EXTRA_CONTEXTS: tuple[str, ...] = (
    "t", "m", "ll", "Ab", "x1", "\t", "\r\n", "\n\n", ",", ";", ")", "}", "{", "(", "//", "#", "-", "\"",
    "к", "д", "ж", "ا", "あ", "한", "ä", "ß", "😀", "\u200b", " a", " 1", ". ",
)

_WIDE_LIMIT = 40_000

REACHABLE = "reachable"
UNREACHABLE = "unreachable"
UNDETERMINED = "undetermined"
#: Reasons whose unreachability is proved (not only probed).
PROVED = frozenset({"shadowed", "impossible_bytes", "not_formable"})


@dataclass(frozen=True)
class TokenReach:
    """Whether the encoder can ever output one token, why, and a witness text when it can."""

    id: int
    bytes: bytes
    status: str
    reason: str
    witness: str | None = None

    @property
    def proved(self) -> bool:
        """True when the verdict does not rest on probing the split pattern."""
        return self.status == REACHABLE or self.reason in PROVED

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "token": render_bytes(self.bytes),
            "hex": self.bytes.hex(),
            "status": self.status,
            "reason": self.reason,
            "proved": self.proved,
            "witness": self.witness,
        }


@dataclass
class ReachabilityReport:
    """Every checked token's :class:`TokenReach`, by id."""

    tokenizer: str
    tokens: dict[int, TokenReach]

    def by_status(self, status: str) -> list[TokenReach]:
        return [t for _, t in sorted(self.tokens.items()) if t.status == status]

    def counts(self) -> dict[str, int]:
        """``{"reachable": n, "unreachable": n, "undetermined": n, "unreachable/<reason>": n, ...}``."""
        c: Counter = Counter()
        for t in self.tokens.values():
            c[t.status] += 1
            if t.status != REACHABLE:
                c[f"{t.status}/{t.reason}"] += 1
        return {k: c[k] for k in sorted(c, key=lambda k: (k.count("/"), k))}

    def to_dict(self) -> dict[str, Any]:
        return {
            "tokenizer": self.tokenizer,
            "counts": self.counts(),
            "unreachable": [t.to_dict() for t in self.by_status(UNREACHABLE)],
            "undetermined": [t.to_dict() for t in self.by_status(UNDETERMINED)],
        }


# ---------------------------------------------------------------------------
# UTF-8 facts
# ---------------------------------------------------------------------------


def _is_cont(b: int) -> bool:
    return 0x80 <= b <= 0xBF


def _lead_size(b: int) -> int:
    if b < 0x80:
        return 1
    if 0xC2 <= b <= 0xDF:
        return 2
    if 0xE0 <= b <= 0xEF:
        return 3
    if 0xF0 <= b <= 0xF4:
        return 4
    return 0


def _completions(data: bytes) -> tuple[int, int] | None:
    """``(k, m)``: ``data`` lacks the leads of its ``k`` leading continuation bytes and
    ``m`` continuation bytes at its end; ``None`` when it occurs in no UTF-8 text."""
    k = 0
    while k < len(data) and k < 3 and _is_cont(data[k]):
        k += 1
    if k == len(data) and k > 0:
        return (k, 0) if k <= 3 else None
    if k < len(data) and _is_cont(data[k]):
        return None  # four continuation bytes in a row
    i = k
    n = len(data)
    while i < n:
        size = _lead_size(data[i])
        if size == 0:
            return None
        end = i + size
        if end > n:
            tail = data[i:]
            if not all(_is_cont(b) for b in tail[1:]):
                return None
            if len(tail) >= 2 and not _second_ok(tail[0], tail[1]):
                return None
            return k, end - n
        chunk = data[i:end]
        try:
            chunk.decode("utf-8")
        except UnicodeDecodeError:
            return None
        i = end
    return k, 0


def _second_ok(lead: int, second: int) -> bool:
    lo, hi = {0xE0: (0xA0, 0xBF), 0xED: (0x80, 0x9F), 0xF0: (0x90, 0xBF), 0xF4: (0x80, 0x8F)}.get(lead, (0x80, 0xBF))
    return lo <= second <= hi


def _left_options(k: int) -> list[bytes]:
    """Byte strings that, put before ``k`` continuation bytes, start a valid character."""
    if k == 0:
        return [b""]
    out = []
    for size in range(k + 1, 5):
        leads = {2: range(0xC2, 0xE0), 3: range(0xE0, 0xF0), 4: range(0xF0, 0xF5)}[size]
        fill = size - 1 - k
        for lead in leads:
            for mid in (0x80, 0x90, 0xA0, 0xBF) if fill else (None,):
                out.append(bytes([lead]) + (bytes([mid]) + b"\x80" * (fill - 1) if fill else b""))
    return out


def _right_options(m: int, full: bool) -> list[bytes]:
    """Byte strings of ``m`` continuation bytes (every first byte when ``full``)."""
    if m == 0:
        return [b""]
    firsts = range(0x80, 0xC0) if full else (0x80, 0x90, 0xA0, 0xBF)
    return [bytes([f]) + b"\x80" * (m - 1) for f in firsts]


def _fragment_texts(data: bytes, k: int, m: int, wrappers: Sequence[str] | None = None) -> list[str]:
    """Texts containing ``data`` with its incomplete characters completed.

    Without ``wrappers``: a few hundred texts (a cheap first round). With them:
    every completion on both sides, each put between every pair of wrappers
    (up to ``_WIDE_LIMIT`` texts)."""
    texts: list[str] = []
    seen: set[str] = set()
    lefts = _left_options(k)
    if wrappers is None:
        rounds = ((True, lefts[:4] if k else lefts), (False, lefts))
        pairs: Sequence[tuple[str, str]] = (("", ""), (" ", ""), ("a", "a"), ("", " "))
        limit = 600
    else:
        rounds = ((True, lefts),)
        pairs = [(b, a) for b in wrappers for a in wrappers]
        limit = _WIDE_LIMIT
    for full_right, lefts_used in rounds:
        for left in lefts_used:
            for right in _right_options(m, full_right):
                try:
                    core = (left + data + right).decode("utf-8")
                except UnicodeDecodeError:
                    continue
                for before, after in pairs:
                    t = before + core + after
                    if t not in seen:
                        seen.add(t)
                        texts.append(t)
                    if len(texts) >= limit:
                        return texts
    return texts


# ---------------------------------------------------------------------------
# reachability
# ---------------------------------------------------------------------------


def _split(tok: Tokenizer, text: str) -> list[str]:
    pre = tok.pre_tokenizer
    if pre is None:
        return [text] if text else []
    return pre.split(text)


def _piece_relation(tok: Tokenizer, left: str, s: str, right: str) -> tuple[bool, bool]:
    """(is ``s`` exactly one pre-token, is ``s`` inside one pre-token) in ``left + s + right``."""
    start = len(left)
    end = start + len(s)
    pos = 0
    for piece in _split(tok, left + s + right):
        p_end = pos + len(piece)
        if pos <= start and end <= p_end:
            return (pos == start and p_end == end), True
        if pos >= end:
            break
        pos = p_end
    return False, False


def _classify(tok: Tokenizer, i: int, data: bytes, contexts: Sequence[str]) -> TokenReach:
    first = _classify_once(tok, i, data, contexts, wide=False)
    if first.status == REACHABLE or first.proved:
        return first
    # not settled by the first probes: look again with a wider set of contexts
    return _classify_once(tok, i, data, tuple(contexts) + EXTRA_CONTEXTS, wide=True)


def _classify_once(tok: Tokenizer, i: int, data: bytes, contexts: Sequence[str], wide: bool) -> TokenReach:
    ranks = tok.model.ranks
    if ranks.get(data) != i:
        return TokenReach(i, data, UNREACHABLE, "shadowed")
    comp = _completions(data)
    if comp is None:
        return TokenReach(i, data, UNREACHABLE, "impossible_bytes")
    k, m = comp
    complete = k == 0 and m == 0
    if complete:
        s = data.decode("utf-8")
        if _split(tok, s) == [s]:
            return TokenReach(i, data, REACHABLE, "whole_piece", s)
    formable = bpe_merge_bytes(ranks, data) == [data]
    if not complete:
        if not formable:
            return TokenReach(i, data, UNREACHABLE, "not_formable")
        texts = _fragment_texts(data, k, m, wrappers=contexts if wide else None)
        return _witness(tok, i, data, texts) or TokenReach(i, data, UNDETERMINED, "absorbed")
    # complete UTF-8, not one pre-token on its own
    exact_ctx: list[str] = []
    inside_ctx: list[str] = []
    for left in contexts:
        for right in contexts:
            exact, inside = _piece_relation(tok, left, s, right)
            if exact:
                exact_ctx.append(left + s + right)
            elif inside:
                inside_ctx.append(left + s + right)
    if exact_ctx:
        # a whole-piece lookup in that context outputs t
        return TokenReach(i, data, REACHABLE, "whole_piece_in_context", exact_ctx[0])
    if not formable:
        return TokenReach(i, data, UNREACHABLE, "not_formable_not_a_piece")
    if not inside_ctx:
        return TokenReach(i, data, UNREACHABLE, "split_by_pattern")
    return _witness(tok, i, data, inside_ctx) or TokenReach(i, data, UNDETERMINED, "absorbed")


def _witness(tok: Tokenizer, i: int, data: bytes, texts: list[str]) -> TokenReach | None:
    if not texts:
        return None
    for text, ids in zip(texts, tok.encode_ordinary_batch(texts)):
        if i in ids:
            return TokenReach(i, data, REACHABLE, "in_context", text)
    return None


def reachability(
    tokenizer: Tokenizer,
    ids: Iterable[int] | None = None,
    *,
    contexts: Sequence[str] = CONTEXTS,
) -> ReachabilityReport:
    """Classify every ordinary token of a byte-level BPE tokenizer (or only ``ids``)
    as reachable, unreachable or undetermined; see the module docstring.

    >>> import tokenforge
    >>> enc = tokenforge.get_encoding("gpt2")
    >>> rep = reachability(enc, ids=[995, enc.encode_single_token(b"\\xc0")])
    >>> [(t.status, t.reason) for t in rep.tokens.values()]
    [('unreachable', 'impossible_bytes'), ('reachable', 'whole_piece')]
    """
    if not isinstance(tokenizer.model, BPE):
        raise ArgumentTypeError("reachability needs a byte-level BPE tokenizer (tokenforge.Tokenizer)")
    vocab = tokenizer.model.vocab
    todo = sorted(vocab) if ids is None else sorted(set(ids))
    out: dict[int, TokenReach] = {}
    for i in todo:
        data = vocab.get(i)
        if data is None:
            continue  # a special token or a hole in the id space
        out[i] = _classify(tokenizer, i, data, contexts)
    return ReachabilityReport(getattr(tokenizer, "name", None) or "tokenizer", out)


def unreachable_tokens(tokenizer: Tokenizer, *, proved_only: bool = False) -> list[TokenReach]:
    """The tokens the encoder can never output from any text, by id.

    ``proved_only=True`` keeps only the verdicts that do not rest on probing
    the split pattern (reasons ``shadowed``, ``impossible_bytes``,
    ``not_formable``).

    >>> import tokenforge
    >>> bad = unreachable_tokens(tokenforge.get_encoding("gpt2"), proved_only=True)
    >>> sorted({t.reason for t in bad})
    ['impossible_bytes']
    """
    rep = reachability(tokenizer)
    return [t for t in rep.by_status(UNREACHABLE) if t.proved or not proved_only]


# ---------------------------------------------------------------------------
# under-trained candidates
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class GlitchCandidate:
    """A token seen at most ``rare_max`` times where ``expected`` were due."""

    id: int
    bytes: bytes
    vocab: str | None
    count: int
    expected: float
    log_p: float
    reach: TokenReach | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "token": render_bytes(self.bytes),
            "hex": self.bytes.hex(),
            "vocab": self.vocab,
            "count": self.count,
            "expected": round(self.expected, 4),
            "log_p": round(self.log_p, 4),
            "reach": None if self.reach is None else {"status": self.reach.status, "reason": self.reach.reason},
        }


@dataclass
class GlitchReport:
    """The result of :func:`find_glitch_tokens`."""

    tokenizer: str
    expected_model: str
    total_tokens: int
    vocab_size: int
    rare_max: int
    never: int
    rare: int
    candidates: list[GlitchCandidate]
    counts: Counter = field(repr=False, default_factory=Counter)

    def to_dict(self) -> dict[str, Any]:
        return {
            "tokenizer": self.tokenizer,
            "expected_model": self.expected_model,
            "total_tokens": self.total_tokens,
            "vocab_size": self.vocab_size,
            "rare_max": self.rare_max,
            "never_produced": self.never,
            "rarely_produced": self.rare,
            "candidates": [c.to_dict() for c in self.candidates],
        }

    def render(self, top: int | None = None) -> str:
        lines = [
            f"tokenizer        {self.tokenizer}",
            f"corpus tokens    {self.total_tokens:,}",
            f"ordinary tokens  {self.vocab_size:,}",
            f"never produced   {self.never:,}",
            f"seen 1..{self.rare_max} times   {self.rare:,}",
            f"expected count   {self.expected_model}",
            "",
            f"{'id':>8}  {'count':>5}  {'expected':>9}  {'log p':>9}  reach          token",
        ]
        for c in self.candidates[:top]:
            reach = "" if c.reach is None else (c.reach.status if c.reach.status == REACHABLE else f"{c.reach.status}:{c.reach.reason}")
            lines.append(f"{c.id:>8}  {c.count:>5}  {c.expected:>9.2f}  {c.log_p:>9.2f}  {reach:<14} {render_bytes(c.bytes)}")
        return "\n".join(lines)


def _poisson_log_cdf(count: int, lam: float) -> float:
    """``log P(X <= count)`` for ``X ~ Poisson(lam)``."""
    if lam <= 0.0:
        return 0.0
    terms = [k * math.log(lam) - math.lgamma(k + 1) for k in range(count + 1)]
    top = max(terms)
    return -lam + top + math.log(sum(math.exp(t - top) for t in terms))


def _band(i: int) -> int:
    """Ids below 256 (the single bytes of byte-level BPE) form one band; above, bands
    a quarter of an octave wide: ``floor(4*log2(id/256))``."""
    return -1 if i < 256 else int(4 * math.log2(i / 256))


def _ordinary_ids(tokenizer: Any) -> list[int]:
    if isinstance(tokenizer.model, BPE):
        return sorted(tokenizer.model.vocab)
    specials = set(tokenizer.special_tokens.values())
    added = {t.id for t in getattr(tokenizer, "added_tokens", ())}
    return sorted(i for i in tokenizer.get_vocab().values() if i not in specials and i not in added)


def find_glitch_tokens(
    tokenizer: Any,
    corpus_texts: Iterable[str],
    *,
    expected: str = "rank",
    rare_max: int = 2,
    min_expected: float = 0.0,
    check_reach: bool = True,
) -> GlitchReport:
    """Count the ids ``tokenizer`` produces on ``corpus_texts`` and list the tokens
    produced at most ``rare_max`` times, most surprising first (see the module
    docstring for the ``expected`` models). ``min_expected`` drops candidates
    whose expected count is below it. With ``check_reach`` (byte-level BPE
    only) each candidate also carries its :class:`TokenReach`, so a token that
    no text can produce is told apart from one this corpus did not produce.

    >>> import tokenforge
    >>> rep = find_glitch_tokens(tokenforge.get_encoding("gpt2"), ["hello world"] * 3, check_reach=False)
    >>> rep.total_tokens, rep.never == rep.vocab_size - 2
    (6, True)
    """
    if expected not in ("rank", "uniform"):
        raise InvalidArgumentError(f"expected must be 'rank' or 'uniform', got {expected!r}")
    if rare_max < 0:
        raise InvalidArgumentError("rare_max must be >= 0")
    if isinstance(corpus_texts, str):
        corpus_texts = [corpus_texts]
    counts: Counter = Counter()
    texts = list(corpus_texts)
    if isinstance(tokenizer.model, BPE):
        for ids in tokenizer.encode_ordinary_batch(texts):
            counts.update(ids)
    else:
        for t in texts:
            counts.update(tokenizer.encode_ordinary(t))
    ordinary = _ordinary_ids(tokenizer)
    total = sum(counts[i] for i in ordinary)
    if expected == "uniform":
        lam_uniform = total / len(ordinary) if ordinary else 0.0
        lam = {i: lam_uniform for i in ordinary}
        model = f"uniform: total/V = {total}/{len(ordinary)} = {lam_uniform:.3f}"
    else:
        sums: Counter = Counter()
        sizes: Counter = Counter()
        for i in ordinary:
            b = _band(i)
            sums[b] += counts[i]
            sizes[b] += 1
        lam = {i: sums[_band(i)] / sizes[_band(i)] for i in ordinary}
        model = "rank: mean count of the tokens in the same id band (ids < 256; then floor(4*log2(id/256)))"
    cands: list[tuple[float, int]] = []
    never = rare = 0
    for i in ordinary:
        c = counts[i]
        if c == 0:
            never += 1
        elif c <= rare_max:
            rare += 1
        if c <= rare_max and lam[i] >= min_expected:
            cands.append((_poisson_log_cdf(c, lam[i]), i))
    cands.sort()
    reach: dict[int, TokenReach] = {}
    if check_reach and isinstance(tokenizer.model, BPE):
        reach = reachability(tokenizer, ids=[i for _, i in cands]).tokens
    out = []
    is_bl = isinstance(tokenizer.model, BPE)
    for lp, i in cands:
        out.append(
            GlitchCandidate(
                id=i,
                bytes=token_bytes(tokenizer, i),
                vocab=None if is_bl else tokenizer.id_to_token(i),
                count=counts[i],
                expected=lam[i],
                log_p=lp,
                reach=reach.get(i),
            )
        )
    return GlitchReport(
        tokenizer=getattr(tokenizer, "name", None) or type(tokenizer).__name__,
        expected_model=model,
        total_tokens=total,
        vocab_size=len(ordinary),
        rare_max=rare_max,
        never=never,
        rare=rare,
        candidates=out,
        counts=counts,
    )


def format_reachability(report: ReachabilityReport, top: int | None = None) -> str:
    """A :class:`ReachabilityReport` as text: the counts, then the first ``top`` unreachable
    and undetermined tokens (all of them when ``top`` is ``None``)."""
    lines = ["reachability of every ordinary token (see tokenforge.analysis.glitch)"]
    for k, v in report.counts().items():
        lines.append(f"  {k:<40} {v:>8,}")
    for status in (UNREACHABLE, UNDETERMINED):
        for t in report.by_status(status)[:top]:
            lines.append(f"  {t.id:>8}  {status + '/' + t.reason:<38} {render_bytes(t.bytes)}")
    return "\n".join(lines)

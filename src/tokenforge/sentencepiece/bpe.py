"""SentencePiece's BPE segmentation (``bpe_model.cc``), as functions over its tables.

SentencePiece's BPE (Kudo & Richardson, 2018; Sennrich et al., 2016) has no
merge list: the adjacent pair whose concatenation is a piece with the highest
score is merged, leftmost first on equal scores, until no pair is a piece.
USER_DEFINED pieces are matched whole before merging, CONTROL, UNKNOWN and
BYTE pieces never come out of merging, an UNUSED piece that comes out is split
back into the two symbols it was formed from, and a symbol that is not a piece
is ``<unk>`` (runs fused) or, with byte fallback, its UTF-8 ``<0xXX>`` pieces.
:class:`~tokenforge.models.bpe.PieceBPE` (``PieceBPE.from_sentencepiece``)
holds a :class:`SentencePieceTables` and encodes through :func:`sp_tokenize`;
the native core (``_core/spm_bpe.h``) is the fast twin of this reference.
"""

from __future__ import annotations

import heapq

from ..errors import FileFormatError
from .constants import SPACE, PieceType, byte_piece

__all__ = ["CACHE_SIZE", "SentencePieceTables", "sp_merge", "sp_tokenize"]

#: Entries kept in a SentencePiece model's per-part cache before it is emptied.
CACHE_SIZE = 1 << 16
_TYPES = frozenset(int(t) for t in PieceType)
_UNUSED = int(PieceType.UNUSED)  # a plain int in the merge loop


class SentencePieceTables:
    """What SentencePiece's BPE ``Model`` keeps: pieces that take part in
    merging (NORMAL, USER_DEFINED, UNUSED), reserved pieces (CONTROL, UNKNOWN,
    BYTE), scores and types."""

    __slots__ = ("bigrams", "byte_ids", "pieces", "reserved", "scores", "types", "unk_id", "user_defined", "user_max")

    def __init__(self, pieces, scores, types, byte_fallback: bool) -> None:
        if not (len(pieces) == len(scores) == len(types)):
            raise FileFormatError(
                f"pieces, scores and types must have the same length, got {len(pieces)}, {len(scores)}, {len(types)}"
            )
        self.pieces: dict[str, int] = {}
        self.reserved: dict[str, int] = {}
        self.scores = [float(s) for s in scores]
        self.types = [int(t) for t in types]
        self.unk_id = -1
        self.user_defined: dict[str, int] = {}
        for i, (piece, t) in enumerate(zip(pieces, self.types)):
            if not isinstance(piece, str) or not piece:
                raise FileFormatError(f"piece {i} must be a non-empty str, got {piece!r}")
            if t not in _TYPES:
                raise FileFormatError(f"piece {i} ({piece!r}) has unknown type {t}")
            table = self.pieces if t in (PieceType.NORMAL, PieceType.USER_DEFINED, PieceType.UNUSED) else self.reserved
            if piece in table:
                raise FileFormatError(f"piece {i} ({piece!r}) is already defined as id {table[piece]}")
            table[piece] = i
            if t == PieceType.USER_DEFINED:
                self.user_defined[piece] = i
            if t == PieceType.UNKNOWN:
                if self.unk_id >= 0:
                    raise FileFormatError(f"piece {i} ({piece!r}) is a second unknown piece (first is id {self.unk_id})")
                self.unk_id = i
        if self.unk_id < 0:
            raise FileFormatError("no piece has type UNKNOWN; a sentencepiece model needs exactly one")
        self.user_max = max((len(p) for p in self.user_defined), default=0)
        self.byte_ids: list[int] | None = None
        if byte_fallback:
            self.byte_ids = [self.piece_to_id(byte_piece(b)) for b in range(256)]
        # Character pairs found inside some mergeable piece. No merge can span
        # the boundary between two characters that form no such pair, so the
        # text splits there into parts that encode independently (and can be
        # cached). Not with UNUSED pieces (their re-segmentation uses the last
        # split seen anywhere in the text) nor USER_DEFINED ones (matched first).
        self.bigrams: set[str] | None = None
        if not any(t in (PieceType.UNUSED, PieceType.USER_DEFINED) for t in self.types):
            self.bigrams = {p[i : i + 2] for p in self.pieces for i in range(len(p) - 1)}

    def piece_to_id(self, piece: str) -> int:
        i = self.reserved.get(piece)
        if i is not None:
            return i
        return self.pieces.get(piece, self.unk_id)


def sp_tokenize(
    sp: SentencePieceTables, text: str, p: float, rng, cache: dict[str, list[tuple[int, int, int]]]
) -> list[tuple[int, int, int]]:
    """Encode ``text`` (``▁``-escaped) as ``bpe_model.cc`` does: ``(id, start, end)`` per token.

    Without dropout the text is cut before each ``▁`` that follows a character
    no piece has before ``▁`` (no merge can span that boundary), and each part
    is merged once and kept in ``cache`` (emptied when it reaches
    :data:`CACHE_SIZE` entries). ``p`` is the BPE-dropout rate, ``rng`` its source.
    """
    bigrams = sp.bigrams
    if p > 0.0 or bigrams is None or SPACE not in text[1:]:
        return sp_merge(sp, text, p, rng)
    # encode the parts between "x▁" boundaries that no piece spans, each once (cached)
    fuse = sp.byte_ids is None
    unk_id = sp.unk_id
    out: list[tuple[int, int, int]] = []
    start = 0
    n = len(text)
    find = text.find
    while start < n:
        i = find(SPACE, start + 1)
        while i != -1 and text[i - 1 : i + 1] in bigrams:
            i = find(SPACE, i + 1)
        end = n if i == -1 else i
        part = text[start:end]
        toks = cache.get(part)
        if toks is None:
            toks = sp_merge(sp, part, 0.0, None)
            if len(cache) >= CACHE_SIZE:
                cache.clear()
            cache[part] = toks
        k = 0
        if fuse and out and toks[0][0] == unk_id and out[-1][0] == unk_id:
            out[-1] = (unk_id, out[-1][1], start + toks[0][2])
            k = 1
        for t in toks[k:]:
            out.append((t[0], t[1] + start, t[2] + start))
        start = end
    return out

def sp_merge(sp: SentencePieceTables, text: str, p: float, rng, log: list | None = None) -> list[tuple[int, int, int]]:
    """One part of the text, merged: user-defined pieces first (longest match), then the
    adjacent pair whose concatenation is the highest-scoring piece, leftmost first on ties
    (a heap with lazy deletion); UNUSED pieces are split back, unknown symbols fused or
    spelled as byte pieces. ``log`` (a list) receives each merge as it happens:
    ``(start, left, right, id, score)``."""
    pieces = sp.pieces
    scores = sp.scores
    types = sp.types
    n = len(text)
    # split into symbols: user-defined pieces (longest match) or one character
    starts: list[int] = []
    ends: list[int] = []
    frozen: list[bool] = []
    if sp.user_max:
        ud = sp.user_defined
        pos = 0
        while pos < n:
            size = 1
            hit = False
            for size_try in range(min(sp.user_max, n - pos), 0, -1):
                if text[pos : pos + size_try] in ud:
                    size = size_try
                    hit = True
                    break
            starts.append(pos)
            ends.append(pos + size)
            frozen.append(hit)
            pos += size
    else:
        starts = list(range(n))
        ends = list(range(1, n + 1))
        frozen = [False] * n
    m = len(starts)
    nxt = list(range(1, m + 1))
    nxt[-1] = -1
    prv = list(range(-1, m - 1))
    alive = [True] * m
    rev: dict[str, tuple[str, str]] = {}
    heap: list[tuple[float, int, int, int]] = []
    push = heapq.heappush

    def add(left: int, right: int) -> None:
        if left < 0 or right < 0 or frozen[left] or frozen[right]:
            return
        s = text[starts[left] : ends[right]]
        i = pieces.get(s)
        if i is None:
            return
        push(heap, (-scores[i], left, right, ends[right] - starts[left]))
        if types[i] == _UNUSED:
            rev[s] = (text[starts[left] : ends[left]], text[starts[right] : ends[right]])

    for k in range(1, m):
        add(k - 1, k)
    skipped: list = []
    rand = rng.random if p > 0.0 else None
    while heap:
        top = heapq.heappop(heap)
        _, left, right, size = top
        if not alive[left] or not alive[right] or ends[right] - starts[left] != size or nxt[left] != right:
            continue
        if rand is not None and rand() < p:
            skipped.append(top)
            continue
        for s in skipped:
            push(heap, s)
        skipped.clear()
        if log is not None:
            a, b = text[starts[left] : ends[left]], text[starts[right] : ends[right]]
            log.append((starts[left], a, b, pieces[a + b], -top[0]))
        ends[left] = ends[right]
        alive[right] = False
        r2 = nxt[right]
        nxt[left] = r2
        if r2 != -1:
            prv[r2] = left
        add(prv[left], left)
        add(left, r2)

    out: list[tuple[int, int, int]] = []
    unk_id = sp.unk_id
    byte_ids = sp.byte_ids
    prev_unk = False

    def emit(w: str, start: int) -> None:
        nonlocal prev_unk
        i = sp.piece_to_id(w)
        if types[i] == _UNUSED and w in rev:
            a, b = rev[w]
            emit(a, start)
            emit(b, start + len(a))
            return
        end = start + len(w)
        is_unk = i == unk_id
        if is_unk and byte_ids is not None:
            for byte in w.encode("utf-8", "surrogatepass"):
                out.append((byte_ids[byte], start, end))
        elif is_unk and prev_unk:
            out[-1] = (unk_id, out[-1][1], end)
        else:
            out.append((i, start, end))
        prev_unk = is_unk

    k = 0
    while k != -1:
        emit(text[starts[k] : ends[k]], starts[k])
        k = nxt[k]
    return out

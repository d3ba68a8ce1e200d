"""Unigram language-model tokenization (Kudo, 2018; Kudo & Richardson, 2018).

The model is a table of log-probabilities, one per piece. A segmentation
``z = (z1, ..., zk)`` of a pre-token has probability ``P(z) = prod p(zi)``, so
in log space its score is the sum of the piece scores. All segmentations form
a lattice: every position starts the pieces of the vocabulary that match
there. Encoding takes the best path (Viterbi); :meth:`Unigram.log_marginal`
sums over all paths (forward algorithm); sampling draws a path with
probability proportional to ``P(z) ** alpha`` (forward filtering, backward
sampling) or from the n-best list.

Exactness with sentencepiece (``unigram_model.cc``) and HF ``tokenizers``:

* a position where no one-character piece matches gets an *unknown* node of
  score ``min_score - 10``; after Viterbi, runs of unknown characters become a
  single unknown id (both references merge them), or, with byte fallback,
  the ``<0xXX>`` pieces of their UTF-8 bytes;
* the Viterbi arithmetic is sentencepiece 0.2.3's ``EncodeOptimized``: piece
  and path scores are 32-bit floats, a path score past +-1e5 is rebased to 0
  (with every score reached so far ahead of it); on equal scores the earlier
  start wins, i.e. the longer last piece. Ties are common (``--`` vs ``-``
  runs) and float rounding decides which path wins on long texts, so this is
  checked against sentencepiece on whole documents, not only lines. (HF sums
  in double; the two references differ only on such near-ties);
* with ``types`` (sentencepiece piece types, as a ``.model`` file gives them)
  control, unknown and byte pieces never match text, unused pieces are
  skipped, user-defined pieces score ``0.1 * (len - 1)`` (above any piece), and
  ``min_score`` is taken over normal pieces only. Without ``types`` every
  piece matches and ``min_score`` is over all pieces, as in HF ``tokenizers``;
* so a model has one of two arithmetics: with ``types`` sentencepiece's
  (float32 sums, +-1e5 rebasing), without ``types`` HF's (plain doubles, no
  rebasing, unknown node ``min_score - 10`` in double). The tie rule (strict
  ``>``: the earliest start wins) is the same in both.

Finding the pieces at a position is a dict lookup per candidate length, so a
text of n characters costs O(n * L) with L the longest piece. Encoding runs
natively in both arithmetics: ``SpmUnigram`` (``_core/unigram.h``, a double-array
trie over UTF-8 bytes) is the one native Viterbi, used here and by the
the sentencepiece plan's one-call path; it also merges unknown runs / applies
byte fallback. ``TOKENFORGE_BACKEND=python`` forces the code here, which stays
the reference the native path is tested against.
"""

from __future__ import annotations

import math
import time
import random
from collections.abc import Mapping, Sequence
from types import MappingProxyType

from .. import _native
from ..errors import FileFormatError, UnknownTokenError
from ..limits import check_token_sizes
from ..sentencepiece.constants import PieceType, byte_piece, f32
from .base import Model

#: Score of an unknown-character node below the lowest piece score (sentencepiece's kUnkPenalty).
UNK_PENALTY = 10.0
#: Viterbi rebases float path scores that pass +-1e5 (sentencepiece's kScoreResetThreshold).
SCORE_RESET = 100000.0

#: sentencepiece piece types by lower-case name (``"normal"`` -> 1), as ``types`` may spell them.
_TYPE_BY_NAME = {t.name.lower(): int(t) for t in PieceType}
_NORMAL, _USER_DEFINED = int(PieceType.NORMAL), int(PieceType.USER_DEFINED)
_NINF = -math.inf


def log_add(a: float, b: float) -> float:
    """``log(exp(a) + exp(b))`` with ``-inf`` as the empty sum (same formula as the core)."""
    if a == _NINF:
        return b
    if b == _NINF:
        return a
    return a + math.log1p(math.exp(b - a)) if a > b else b + math.log1p(math.exp(a - b))


class Unigram(Model):
    """A Unigram model: pieces with log-probability scores.

    ``pieces`` is the list of ``(piece, score)``; a piece's id is its index.
    ``unk_id`` names the unknown piece (``None``: unknown characters raise
    :class:`UnknownTokenError` unless byte fallback covers them).

    >>> from math import log
    >>> m = Unigram([("<unk>", 0.0), ("a", log(.15)), ("b", log(.15)), ("ab", log(.4)),
    ...              ("aba", log(.2)), ("bab", log(.1))])
    >>> [m.id_to_token(i) for i in m.encode_piece("abab")]
    ['ab', 'ab']
    >>> round(math.exp(m.viterbi_score("abab")), 6), round(math.exp(m.log_marginal("abab")), 8)
    (0.16, 0.22350625)
    >>> m.encode_piece("abxyb")    # unknown characters merge into one <unk>
    [3, 0, 2]
    """

    type_name = "Unigram"

    def __init__(
        self,
        pieces: Sequence[tuple[str, float]],
        unk_id: int | None = 0,
        byte_fallback: bool = False,
        *,
        types: Sequence[int | str] | None = None,
        backend: str = "auto",
    ) -> None:
        plist: list[str] = []
        scores: list[float] = []
        for n, item in enumerate(pieces):
            try:
                p, s = item
            except (TypeError, ValueError):
                raise FileFormatError(f"piece {n} must be a (piece, score) pair, got {item!r}") from None
            if not isinstance(p, str) or not p:
                raise FileFormatError(f"piece {n} must be a non-empty str, got {p!r}")
            if isinstance(s, bool) or not isinstance(s, (int, float)) or math.isnan(s):
                raise FileFormatError(f"score of piece {n} ({p!r}) must be a number, got {s!r}")
            plist.append(p)
            scores.append(float(s))
        if not plist:
            raise FileFormatError("a Unigram model needs at least one piece")
        check_token_sizes(plist)
        if unk_id is not None and not (isinstance(unk_id, int) and 0 <= unk_id < len(plist)):
            raise FileFormatError(f"unk_id must be an id in 0..{len(plist) - 1} or None, got {unk_id!r}")
        tlist: list[int] | None = None
        if types is not None:
            if len(types) != len(plist):
                raise FileFormatError(f"types has {len(types)} entries for {len(plist)} pieces")
            tlist = []
            for n, t in enumerate(types):
                t = _TYPE_BY_NAME.get(t, t) if isinstance(t, str) else t
                if t not in _TYPE_BY_NAME.values():
                    raise FileFormatError(f"type of piece {n} must be one of {sorted(_TYPE_BY_NAME)}, got {types[n]!r}")
                tlist.append(t)
        self._pieces = tuple(plist)
        self._scores = tuple(scores)
        self._types = None if tlist is None else tuple(tlist)
        self._unk_id = unk_id
        self._byte_fallback = bool(byte_fallback)
        self._backend = backend
        _native.core(backend)  # validate the name now
        # A piece listed twice: sentencepiece refuses the model; HF tokenizers (no piece
        # types) keeps both ids and the later one is the piece (its lookup and its score),
        # as HF's own trainer can write when a special token also occurs in the corpus.
        vocab: dict[str, int] = {}
        for i, p in enumerate(plist):
            if p in vocab and tlist is not None:
                raise FileFormatError(f"piece {p!r} appears twice (ids {vocab[p]} and {i})")
            vocab[p] = i
        self._vocab = vocab

        # What may appear in a segmentation, and the score its node gets.
        if tlist is None:
            in_lattice = [i for i, p in enumerate(plist) if vocab[p] == i]
            min_score = min(scores)
        else:
            normal = [scores[i] for i, t in enumerate(tlist) if t == _NORMAL]
            min_score = min(normal) if normal else 0.0
            in_lattice = [i for i, t in enumerate(tlist) if t in (_NORMAL, _USER_DEFINED)]
        # sentencepiece (a model with piece types) keeps scores and path sums in 32-bit
        # floats; HF tokenizers (no types) in doubles. Ties between segmentations are
        # common, and float rounding decides them, so each gets its own arithmetic.
        self._float32 = tlist is not None
        if self._float32:
            min_score = f32(min_score)
            import numpy as np  # here, so that importing tokenforge does not load numpy

            with np.errstate(over="ignore"):
                node_score = np.asarray(scores, dtype=np.float32).astype(np.float64).tolist()
        else:
            node_score = list(scores)
        lattice_score = list(node_score)
        if tlist is not None:
            for i, t in enumerate(tlist):
                if t == _USER_DEFINED:  # sentencepiece: 0.1 per extra byte (char in the lattice), always preferred
                    node_score[i] = f32(0.1 * (len(plist[i].encode("utf-8", "surrogatepass")) - 1))
                    lattice_score[i] = f32(0.1 * (len(plist[i]) - 1))
        self._node_score = tuple(node_score)
        # scores of the probability queries (viterbi_score, log_marginal, nbest): the given doubles
        exact = list(scores)
        if tlist is not None:
            for i, t in enumerate(tlist):
                if t == _USER_DEFINED:
                    exact[i] = lattice_score[i]
        self._exact_score = tuple(exact)
        self._exact_unk = (min(scores) if tlist is None else (min(normal) if normal else 0.0)) - UNK_PENALTY
        self._min_score = min_score
        self._unk_score = f32(min_score - UNK_PENALTY) if self._float32 else min_score - UNK_PENALTY
        lookup: dict[str, int] = {plist[i]: i for i in in_lattice}
        self._lookup = lookup
        self._lengths = tuple(sorted({len(p) for p in lookup}))
        self._in_lattice = frozenset(in_lattice)
        byte_ids = [vocab.get(byte_piece(b)) for b in range(256)]
        self._byte_ids: tuple[int, ...] | None = tuple(byte_ids) if all(i is not None for i in byte_ids) else None  # type: ignore[arg-type]
        # Only some <0xXX> pieces (HF files): an unknown run falls back to bytes when all of
        # its bytes have pieces, else it is one unknown token (HF's rule).
        self._some_bytes: dict[int, int] | None = (
            {b: i for b, i in enumerate(byte_ids) if i is not None}
            if self._byte_fallback and self._byte_ids is None and any(i is not None for i in byte_ids) else None
        )
        # HF tokenizers (no piece types) merges every node whose id is unk_id, a literal
        # match of the unknown piece included, and looks the merged text up again.
        self._hf_fuse = tlist is None and unk_id is not None
        self._lattice = None  # the native encoder (core.SpmUnigram), built on first use
        self._hash_model = None  # see _native

    # -- vocabulary -------------------------------------------------------------------------------

    @property
    def pieces(self) -> tuple[str, ...]:
        return self._pieces

    @property
    def scores(self) -> tuple[float, ...]:
        """Log-probability of each id, as given."""
        return self._scores

    @property
    def types(self) -> tuple[int, ...] | None:
        """sentencepiece piece type of each id (:class:`~tokenforge.sentencepiece.constants.PieceType` values), or ``None``."""
        return self._types

    @property
    def unk_id(self) -> int | None:
        return self._unk_id

    @property
    def unk_token(self) -> str | None:
        return None if self._unk_id is None else self._pieces[self._unk_id]

    @property
    def byte_fallback(self) -> bool:
        return self._byte_fallback

    @property
    def min_score(self) -> float:
        return self._min_score

    @property
    def vocab_size(self) -> int:
        return len(self._pieces)

    def __len__(self) -> int:
        return len(self._pieces)

    def get_vocab(self) -> dict[str, int]:
        return dict(self._vocab)

    @property
    def vocab(self) -> Mapping[str, int]:
        return MappingProxyType(self._vocab)

    def token_to_id(self, token: str) -> int | None:
        return self._vocab.get(token)

    def id_to_token(self, id: int) -> str | None:
        return self._pieces[id] if isinstance(id, int) and 0 <= id < len(self._pieces) else None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Unigram) and self.to_dict() == other.to_dict()

    def __hash__(self) -> int:
        return hash((self._pieces, self._scores, self._unk_id))

    def __repr__(self) -> str:
        return f"Unigram(vocab_size={len(self._pieces)}, unk_id={self._unk_id}, byte_fallback={self._byte_fallback})"

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        state["_lattice"] = None  # native objects; rebuilt on first use
        state["_hash_model"] = None
        return state

    # -- lattice ----------------------------------------------------------------------------------

    def _nodes(self, text: str) -> list[tuple[int, int, int, float]]:
        """Lattice nodes ``(start, end, id, score)`` by start then length; id -1 = unknown char."""
        lookup = self._lookup
        score = self._exact_score
        unk = self._exact_unk
        n = len(text)
        out = []
        for i in range(n):
            single = False
            for L in self._lengths:
                if i + L > n:
                    break
                pid = lookup.get(text[i : i + L])
                if pid is not None:
                    if L == 1:
                        single = True
                    out.append((i, i + L, pid, score[pid]))
            if not single:
                out.append((i, i + 1, -1, unk))
        return out

    def _viterbi_py(self, text: str, exclude_whole: bool = False) -> list[tuple[int, int]] | None:
        """Best path as ``(id, start)`` pairs; ``None`` if there is none.

        sentencepiece 0.2.3's ``EncodeOptimized`` step by step: float32 path scores; when the
        best score at a start position passes +-1e5 it is subtracted from every reached score
        from there to the furthest end seen (floats lose ties otherwise on long texts).
        """
        n = len(text)
        best = [0.0] * (n + 1)
        frm = [-1] * (n + 1)
        last = [-1] * (n + 1)
        lookup = self._lookup
        score = self._node_score
        unk = self._unk_score
        rnd = f32 if self._float32 else float  # HF's lattice: plain doubles, no renormalisation
        reset = SCORE_RESET if self._float32 else math.inf
        frontier = 0
        for i in range(n):
            if i and frm[i] < 0:
                continue
            here = best[i]
            if here < -reset or here > reset:
                for j in range(i, frontier + 1):
                    if j == i or frm[j] >= 0:
                        best[j] = rnd(best[j] - here)
                here = 0.0
            single = False
            for L in self._lengths:
                e = i + L
                if e > n:
                    break
                pid = lookup.get(text[i:e])
                if pid is None:
                    continue
                if L == 1:
                    single = True
                if exclude_whole and i == 0 and e == n:
                    continue
                frontier = max(frontier, e)
                cand = rnd(score[pid] + here)
                if frm[e] < 0 or cand > best[e]:
                    best[e] = cand
                    frm[e] = i
                    last[e] = pid
            if not single and not (exclude_whole and n == 1):
                e = i + 1
                frontier = max(frontier, e)
                cand = rnd(unk + here)
                if frm[e] < 0 or cand > best[e]:
                    best[e] = cand
                    frm[e] = i
                    last[e] = -1
        if n and frm[n] < 0:
            return None
        path = []
        e = n
        while e > 0:
            path.append((last[e], frm[e]))
            e = frm[e]
        path.reverse()
        return path

    def _lattice_pieces(self) -> list[str | None]:
        """Pieces by id as the native lattices take them: ``None`` for ids that never match text."""
        return [p if i in self._in_lattice else None for i, p in enumerate(self._pieces)]

    def _core(self):
        """The native core, with this model's encoder ``self._lattice`` built; ``None`` on the Python backend.

        The encoder runs the model's own arithmetic (float32 with ``types``, double without),
        and knows ``unk_id`` and the byte-fallback ids, so one call gives the ids of a piece.
        """
        core = _native.core(self._backend)
        if core is None:
            return None
        if self._lattice is None:
            self._lattice = core.SpmUnigram(
                self._lattice_pieces(), list(self._node_score), self._unk_score,
                float32=self._float32,
                unk_id=-1 if self._unk_id is None else self._unk_id,
                byte_ids=self._byte_ids if self._byte_fallback else None,
            )
        return core

    def native_encoder(self):
        """The native encoder of this model (``_core.SpmUnigram``: Viterbi in the model's
        own arithmetic, unknown merging and byte fallback in one call), or ``None`` on the
        Python backend, or for a model without piece types that has an unknown piece or byte
        fallback (HF's merging rule is in :meth:`_finish_hf`)."""
        if self._types is None and (self._hf_fuse or self._byte_fallback):
            return None
        return None if self._core() is None else self._lattice

    def native_hf_lattice(self):
        """The native lattice (``_core.SpmUnigram``) for a caller that re-encodes, through
        :meth:`encode_piece`, every text whose ids hold :attr:`unk_id`: with that, its ids
        are HF's for a model without piece types too (HF's rule for unknown runs,
        :meth:`_finish_hf`, then never applies). ``None`` on the Python backend and when
        byte pieces may stand in for unknown runs."""
        if self._types is not None:
            return self.native_encoder()
        if self._byte_fallback or self._some_bytes is not None:
            return None
        return None if self._core() is None else self._lattice

    @property
    def _native(self):
        """The training core's hash-trie model (``unigram_model``) of this lattice, built on first access.

        Encoding does not use it (see :meth:`_core`); tests cross-check the two native tries
        with it. Its arithmetic is always float32 (the training core's Viterbi).
        """
        if self._hash_model is None:
            core = _native.core(self._backend)
            if core is None:
                return None
            self._hash_model = core.unigram_model(self._lattice_pieces(), list(self._node_score), self._unk_score)
        return self._hash_model

    def viterbi_path(self, piece: str) -> list[tuple[int, int]]:
        """Best path of ``piece`` before unknown merging: ``(id, start)`` pairs, id -1 = unknown char."""
        if self._core() is not None:
            ids, starts = self._lattice.viterbi(piece)
            return list(zip(ids, starts))
        return self._viterbi_py(piece) or []

    def _finish(self, text: str, path: Sequence[tuple[int, int]]) -> list[tuple[int, int, int]]:
        """Path -> ``(id, start, end)``: merge unknown runs, or byte fallback."""
        if self._types is None:
            return self._finish_hf(text, path)
        out: list[tuple[int, int, int]] = []
        n = len(text)
        k = 0
        m = len(path)
        while k < m:
            pid, start = path[k]
            end = path[k + 1][1] if k + 1 < m else n
            if pid >= 0:
                out.append((pid, start, end))
                k += 1
                continue
            j = k + 1  # a run of unknown characters
            while j < m and path[j][0] < 0:
                j += 1
            end = path[j][1] if j < m else n
            table = self._byte_ids if self._byte_fallback else None
            if table is None and self._some_bytes is not None:
                raw = text[start:end].encode("utf-8", "surrogatepass")
                table = self._some_bytes if all(b in self._some_bytes for b in raw) else None
            if table is not None:
                # sentencepiece gives each byte its character's span; HF's Unigram (no piece
                # types) gives every byte the span of the whole unknown run.
                whole = self._types is None
                for pos in range(start, end):
                    for b in text[pos].encode("utf-8", "surrogatepass"):
                        out.append((table[b], start, end) if whole else (table[b], pos, pos + 1))
            elif self._unk_id is not None:
                out.append((self._unk_id, start, end))
            else:
                raise UnknownTokenError(f"{text[start:end]!r} is not covered by the pieces and the model has no unk_id")
            k = j
        return out

    def _finish_hf(self, text: str, path: Sequence[tuple[int, int]]) -> list[tuple[int, int, int]]:
        """HF tokenizers' rule (a model without piece types): a run of nodes that are unknown
        characters or ``unk_id`` itself (its piece matched literally) becomes one string; a
        string that is a piece gets that piece's id, else its bytes' ``<0xXX>`` pieces (byte
        fallback, when every byte has one; each carries the run's span), else ``unk_id``."""
        unk = self._unk_id
        out: list[tuple[int, int, int]] = []
        n = len(text)
        m = len(path)
        k = 0
        while k < m:
            pid, start = path[k]
            if pid >= 0 and pid != unk:
                out.append((pid, start, path[k + 1][1] if k + 1 < m else n))
                k += 1
                continue
            j = k + 1
            while j < m and (path[j][0] < 0 or path[j][0] == unk):
                j += 1
            end = path[j][1] if j < m else n
            s = text[start:end]
            if unk is None:
                raise UnknownTokenError(f"{s!r} is not covered by the pieces and the model has no unk_id")
            found = self._vocab.get(s)
            if found is not None:
                out.append((found, start, end))
                k = j
                continue
            raw = s.encode("utf-8", "surrogatepass")
            if self._byte_fallback and self._byte_ids is not None:
                out.extend((self._byte_ids[b], start, end) for b in raw)
            elif self._some_bytes is not None and all(b in self._some_bytes for b in raw):
                out.extend((self._some_bytes[b], start, end) for b in raw)
            else:
                out.append((unk, start, end))
            k = j
        return out

    # -- encoding ---------------------------------------------------------------------------------

    def tokenize(self, piece: str) -> list[tuple[int, int, int]]:
        """Best segmentation of ``piece`` as ``(id, start, end)`` code-point spans.

        Byte-fallback tokens of one character all carry that character's span.
        """
        if not piece:
            return []
        if self._core() is not None and self._some_bytes is None and not (self._byte_fallback and self._types is None):
            toks = self._lattice.tokenize(piece)
            if toks is not None and not (self._hf_fuse and any(t[0] == self._unk_id for t in toks)):
                return toks
        return self._finish(piece, self.viterbi_path(piece))  # (raises for uncovered unknown characters)

    def encode_piece(
        self,
        piece: str,
        sample: bool = False,
        alpha: float = 0.1,
        nbest_size: int = -1,
        seed: int | random.Random | None = None,
    ) -> list[int]:
        """Ids of one pre-token: the Viterbi path, or a sampled segmentation.

        With ``sample=True`` (subword regularization): ``nbest_size < 0`` samples
        from all segmentations with probability proportional to ``P(z) ** alpha``
        (forward filtering, backward sampling); ``nbest_size > 1`` samples from
        the ``nbest_size`` best with weights ``exp(alpha * score)``;
        ``nbest_size`` 0 or 1 gives the Viterbi path. ``seed`` (an int or a
        ``random.Random``) makes the draw reproducible.
        """
        if not piece:
            return []
        if not sample or nbest_size in (0, 1):
            if self._core() is not None and self._some_bytes is None:
                ids = self._lattice.encode(piece)
                if ids is not None and not (self._hf_fuse and self._unk_id in ids):
                    return ids
            return [t[0] for t in self.tokenize(piece)]
        rng = seed if isinstance(seed, random.Random) else random.Random(seed)
        return [t[0] for t in self._finish(piece, self._sampled_path(piece, nbest_size, alpha, rng))]

    def _sampled_path(self, piece: str, nbest_size: int, alpha: float, rng: random.Random) -> list[tuple[int, int]]:
        """One sampled segmentation (subword regularization, Kudo 2018): from the
        ``nbest_size`` best paths weighted by ``exp(alpha * score)`` when ``nbest_size > 1``,
        else from the whole lattice (forward-filtering, backward-sampling)."""
        if nbest_size > 1:
            cands = self._nbest_paths(piece, nbest_size)
            top = max(s for _, s in cands)
            weights = [math.exp(alpha * (s - top)) for _, s in cands]
            return rng.choices([p for p, _ in cands], weights=weights)[0]
        return self._sample_path(piece, alpha, rng)

    def _sample_path(self, text: str, alpha: float, rng: random.Random) -> list[tuple[int, int]]:
        nodes = self._nodes(text)
        n = len(text)
        fwd = [_NINF] * (n + 1)
        fwd[0] = 0.0
        ending: list[list[tuple[int, int, float]]] = [[] for _ in range(n + 1)]
        for s, e, pid, sc in nodes:
            fwd[e] = log_add(fwd[e], fwd[s] + alpha * sc)
            ending[e].append((s, pid, sc))
        path = []
        e = n
        while e > 0:
            cands = ending[e]
            weights = [math.exp(fwd[s] + alpha * sc - fwd[e]) for s, _, sc in cands]
            s, pid, _ = rng.choices(cands, weights=weights)[0]
            path.append((pid, s))
            e = s
        path.reverse()
        return path

    def _nbest_paths(
        self, text: str, n: int, deadline: float | None = None
    ) -> list[tuple[list[tuple[int, int]], float]]:
        """The n best paths, best first, by A* from the end, as sentencepiece's ``Lattice::NBest``.

        The heuristic is the exact best score from the start to each node
        (a Viterbi pass), so paths come out in score order. Float32
        arithmetic and a binary heap that pops equal priorities in the same
        order as libstdc++'s ``std::priority_queue`` reproduce sentencepiece's
        order of tied paths too. ``deadline`` (a :func:`time.monotonic` time): when
        the search is still running then, the answer is the Viterbi path alone, as
        sentencepiece answers when its n-best timeout (``SetNBestTimeout``) passes.
        """
        if not text or n < 1:
            return [([], 0.0)]
        if n == 1:  # sentencepiece answers with the Viterbi path
            path = self.viterbi_path(text)
            return [(path, f32(math.fsum(self._unk_score if i < 0 else self._node_score[i] for i, _ in path)))]
        size = len(text)
        # nodes: (start, end, id, float score); ending[pos]: node indices in insertion order
        nodes = [(s, e, pid, f32(sc)) for s, e, pid, sc in self._nodes(text)]
        ending: list[list[int]] = [[] for _ in range(size + 1)]
        for k, (s, e, _, _) in enumerate(nodes):
            ending[e].append(k)
        # backtrace[k]: best float score from the start through node k; BOS (index -1) is 0
        backtrace = [0.0] * len(nodes)
        best_at = [0.0] * (size + 1)  # backtrace of the best node ending at each position
        for pos in range(size + 1):
            if pos:
                ks = ending[pos]
                b = backtrace[ks[0]]
                for k in ks[1:]:
                    b = max(b, backtrace[k])
                best_at[pos] = b
            for k in _starting(nodes, pos):
                backtrace[k] = f32(best_at[pos] + nodes[k][3])
        ending[0] = [-1]
        # hypotheses: [fx, gx, pos, node index, next hypothesis]; the EOS one starts at pos=size
        heap: list = []
        _heap_push(heap, [best_at[size], 0.0, size, -2, None])
        results: list[tuple[list[tuple[int, int]], float]] = []
        steps = 0
        total = allocated = 1
        shrinks = 0
        min_agenda = min(512, n * 10)
        max_allocated = 100_000
        while heap:
            steps += 1
            if deadline is not None and not steps & 0xFFF and time.monotonic() >= deadline:
                return self._nbest_paths(text, 1)
            top = _heap_pop(heap)
            fx, gx, pos, k, nxt = top
            if k == -1:  # reached the start
                path = []
                h = nxt
                while h[4] is not None:
                    node = nodes[h[3]]
                    path.append((node[2], node[0]))
                    h = h[4]
                results.append((path, fx))
                if len(results) == n:
                    break
                continue
            for j in ending[pos]:
                if j == -1:
                    _heap_push(heap, [f32(0.0 + gx), gx, 0, -1, top])
                else:
                    s, _, _, sc = nodes[j]
                    _heap_push(heap, [f32(backtrace[j] + gx), f32(sc + gx), s, j, top])
            # sentencepiece 0.2.3's limits on pathological inputs (long, repetitive text): past
            # 500,000 hypotheses, or a 10th shrinking of the agenda, the answer is the Viterbi
            # path; the agenda shrinks to its best min(512, 10 n) at 10,000 entries, or when
            # 100,000 hypotheses were made since the last shrinking.
            made = len(ending[pos])
            total += made
            allocated += made
            if total >= _NBEST_MAX_HYPOTHESES:
                return self._nbest_paths(text, 1)
            if len(heap) >= 10_000 or (len(heap) > min_agenda and allocated >= max_allocated):
                if deadline is not None and time.monotonic() >= deadline:
                    return self._nbest_paths(text, 1)
                if shrinks >= 10:
                    return self._nbest_paths(text, 1)
                shrinks += 1
                heap[:] = _shrunk(heap, min_agenda)
                allocated = _chain_size(heap)
                max_allocated = allocated + 100_000
        return results

    def nbest(self, piece: str, n: int) -> list[tuple[list[int], float]]:
        """The ``n`` best segmentations of ``piece``, best first, as ``(ids, log_prob)``.

        >>> from math import log
        >>> m = Unigram([("<unk>", 0.0), ("a", log(.15)), ("b", log(.15)), ("ab", log(.4))])
        >>> [(ids, round(math.exp(s), 4)) for ids, s in m.nbest("ab", 3)]
        [([3], 0.4), ([1, 2], 0.0225)]
        """
        out = []
        for path, score in self._nbest_paths(piece, n):
            out.append(([t[0] for t in self._finish(piece, path)], score))
        return out

    def viterbi_nodes(self, piece: str) -> list[tuple[int, int, int, float]]:
        """The best path of ``piece`` before unknown characters are merged, as
        ``(id, start, end, score)`` per node: code-point spans, id -1 for an unknown
        character, ``score`` the log-probability the path adds (an unknown character:
        ``min_score - 10``; a user-defined piece: its fixed bonus). The scores sum to
        :meth:`viterbi_score`.

        >>> from math import log
        >>> m = Unigram([("<unk>", 0.0), ("a", log(.15)), ("b", log(.15)), ("ab", log(.4))])
        >>> [(i, s, e, round(sc, 3)) for i, s, e, sc in m.viterbi_nodes("abx")]
        [(3, 0, 2, -0.916), (-1, 2, 3, -11.897)]
        """
        path = self.viterbi_path(piece)
        out = []
        for k, (pid, start) in enumerate(path):
            end = path[k + 1][1] if k + 1 < len(path) else len(piece)
            out.append((pid, start, end, self._exact_unk if pid < 0 else self._exact_score[pid]))
        return out

    def viterbi_score(self, piece: str) -> float:
        """Log-probability of the best segmentation (unknown characters at ``min_score - 10``)."""
        path = self.viterbi_path(piece)
        return math.fsum(self._exact_unk if pid < 0 else self._exact_score[pid] for pid, _ in path)

    def log_marginal(self, piece: str) -> float:
        """``log P(piece)``: log of the sum of ``P(z)`` over every segmentation (forward algorithm)."""
        n = len(piece)
        fwd = [_NINF] * (n + 1)
        fwd[0] = 0.0
        for s, e, _, sc in self._nodes(piece):
            fwd[e] = log_add(fwd[e], fwd[s] + sc)
        return fwd[n]

    # -- serialization ----------------------------------------------------------------------------

    def to_dict(self) -> dict:
        """HF ``tokenizer.json`` model shape (plus ``piece_types`` when the model has types)."""
        d: dict = {
            "type": "Unigram",
            "unk_id": self._unk_id,
            "vocab": [[p, s] for p, s in zip(self._pieces, self._scores)],
            "byte_fallback": self._byte_fallback,
        }
        if self._types is not None:
            d["piece_types"] = list(self._types)
        return d

    @classmethod
    def from_dict(cls, data: Mapping) -> Unigram:
        """Build from HF's ``{"type": "Unigram", "unk_id": ..., "vocab": [[piece, score], ...]}``."""
        if not isinstance(data, Mapping):
            raise FileFormatError(f"a Unigram model must be a JSON object, got {type(data).__name__}")
        if data.get("type") != "Unigram":
            raise FileFormatError(f"field 'type' must be 'Unigram', got {data.get('type')!r}")
        if "vocab" not in data:
            raise FileFormatError("field 'vocab' is missing (a list of [piece, score])")
        vocab = data["vocab"]
        if not isinstance(vocab, list):
            raise FileFormatError(f"field 'vocab' must be a list of [piece, score], got {type(vocab).__name__}")
        unk_id = data.get("unk_id")
        if unk_id is not None and (isinstance(unk_id, bool) or not isinstance(unk_id, int)):
            raise FileFormatError(f"field 'unk_id' must be an int or null, got {unk_id!r}")
        bf = data.get("byte_fallback", False)
        if not isinstance(bf, bool):
            raise FileFormatError(f"field 'byte_fallback' must be a bool, got {bf!r}")
        return cls([tuple(v) if isinstance(v, list) else v for v in vocab], unk_id, bf, types=data.get("piece_types"))


def _starting(nodes: list, pos: int):
    """Indices of nodes starting at ``pos`` (nodes are sorted by start)."""
    lo = _bisect_start(nodes, pos)
    k = lo
    while k < len(nodes) and nodes[k][0] == pos:
        yield k
        k += 1


def _bisect_start(nodes: list, pos: int) -> int:
    lo, hi = 0, len(nodes)
    while lo < hi:
        mid = (lo + hi) // 2
        if nodes[mid][0] < pos:
            lo = mid + 1
        else:
            hi = mid
    return lo


# A max-heap on item[0] with libstdc++'s push_heap/pop_heap moves, so that equal
# priorities pop in the same order as in sentencepiece's std::priority_queue.
def _heap_push(h: list, item: list) -> None:
    h.append(item)
    _sift_up(h, len(h) - 1, 0, item)


def _sift_up(h: list, hole: int, top: int, item: list) -> None:
    parent = (hole - 1) // 2
    while hole > top and h[parent][0] < item[0]:
        h[hole] = h[parent]
        hole = parent
        parent = (hole - 1) // 2
    h[hole] = item


def _heap_pop(h: list) -> list:
    first = h[0]
    last = h.pop()
    length = len(h)
    if length == 0:
        return first
    hole = 0
    child = 0
    while child < (length - 1) // 2:
        child = 2 * (child + 1)
        if h[child][0] < h[child - 1][0]:
            child -= 1
        h[hole] = h[child]
        hole = child
    if length % 2 == 0 and child == (length - 2) // 2:
        child = 2 * (child + 1)
        h[hole] = h[child - 1]
        hole = child - 1
    _sift_up(h, hole, 0, last)
    return first


#: sentencepiece's ``kMaxAllocatorSize``: the n-best search gives up past this many hypotheses.
_NBEST_MAX_HYPOTHESES = 500_000


def _chain_size(h: list) -> int:
    """Hypotheses the agenda ``h`` keeps alive: its own and those on their ``next`` chains."""
    seen: set[int] = set()
    for item in h:
        while item is not None and id(item) not in seen:
            seen.add(id(item))
            item = item[4]
    return len(seen)


def _shrunk(h: list, keep: int) -> list:
    new: list = []
    for _ in range(min(keep, len(h))):
        _heap_push(new, _heap_pop(h))
    return new

"""Unigram language-model training, as sentencepiece's unigram trainer does it (Kudo, 2018).

Training is top-down: start from a seed vocabulary that is far too big and
remove pieces until ``vocab_size`` remain.

1. **Characters.** Characters are sorted by frequency; the most frequent ones
   that together cover ``character_coverage`` of the text are *required* and
   always end up in the vocabulary. The rest become unknown characters (the
   lattice gives them an unknown node, and byte fallback may encode them).
2. **Seed pieces.** The required characters, plus the substrings of 2 to
   ``max_piece_length`` characters that occur at least twice (counting word
   frequencies) and are right-maximal the way sentencepiece finds them with a
   byte-level suffix array of whole sentences: their occurrences are followed
   by at least two different *symbols*, a symbol being the first UTF-8 byte of
   the next character (so "xyあ" and "xyい", E3 81 82 and E3 81 84, do not make
   "xy" a seed, "xyあ" and "xyz" do), and after the end of a word either the
   space before the next word (``▁``, first byte E2) or the end of the
   sentence. Which of the two follows a word is what ``line_ends`` of
   :meth:`UnigramTrainer.train_from_counts` tells (how many occurrences of each
   pre-token end a line): a whole word like ``▁für`` is a seed only if it ends
   some lines and not others, as in sentencepiece. Without ``line_ends``, a
   pre-token occurring at least :data:`BOTH_ENDS_MIN_COUNT` times counts as
   followed by both, a rarer one by a space only. Here a suffix array of the
   distinct words finds them (:func:`seed_pieces`). Pieces never contain
   ``▁`` except as their first character, never mix Unicode scripts (Hiragana
   and Katakana count as Han), and with ``split_digits`` a digit is always
   alone. The ``seed_sentencepiece_size`` best by ``frequency * length`` are
   kept. Each piece starts with ``log(score / total)``.
3. **EM.** The E-step sums, for every piece, its expected count over *all*
   segmentations of every word, weighted by their probability
   (forward-backward on the lattice; not the Viterbi path, which would be hard
   EM). The M-step drops pieces with expected count below 0.5 and sets
   ``score = digamma(count) - digamma(total)``: the Bayesian (variational) EM
   update that sentencepiece uses as a sparse prior.
4. **Pruning.** After ``num_sub_iterations`` EM steps, each piece's loss is
   the approximate drop in corpus log-likelihood if it were removed and each of
   its Viterbi occurrences were replaced by its second-best segmentation.
   Pieces whose own best segmentation is not themselves go first; the others
   are ranked by loss and the best ``max(shrinking_factor * size, 1.1 *
   vocab_size)`` are kept. Single characters are never pruned.
5. **Final vocabulary.** Once at most ``1.1 * vocab_size`` pieces are left:
   the required characters (a missing one gets the lowest score plus a
   penalty that grows by 1e-4 per character, most frequent first), then the
   pieces with the best scores up to ``vocab_size`` in all.

Ids: ``unk_token`` first, then the special tokens in order, then (with
``byte_fallback``) ``<0x00>``..``<0xFF>``, then the pieces by score,
highest first; equal scores by piece, in code-point order. Seed ties are
broken the same way. All of this depends only on the data: the E-step sums
fixed-point partial counts (2^-24 units) as integers, so the result is the
same for every thread count.

Memory, the distinct words being W characters: the native corpus holds them
once as code points (4W bytes); the seed search adds a 32-bit suffix array and
a word index (8W, no LCP or prefix-sum arrays: the LCP values are computed as
its intervals are walked) and returns the seeds as slices of the words (no
joined copy of the corpus); only words holding a rare character are copied to
replace it; the old trie is dropped before a smaller one is built.

The hot loops (suffix array, E-step, Viterbi counts, second-best
segmentations) run in the native core; ``TOKENFORGE_BACKEND=python`` (or
``backend="python"``) uses the pure-Python twins here, which compute the same
numbers.
"""

from __future__ import annotations

import math
import os
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .. import _native
from ..errors import TrainingError
from ..models.unigram import Unigram
from ..progress import Progress
from ..sentencepiece.constants import SPACE, UNK_CHAR, PieceType, byte_piece, f32
from . import NoTrainingDataError, check_vocab_size
# the first UTF-8 byte of a code point: what sentencepiece's byte-level suffix array tells
# continuations apart by
from ..sentencepiece.normalizer import _lead_byte
from .coverage import SCRIPTS, count_chars, required_chars, spm_digit, spm_script

if TYPE_CHECKING:
    from types import ModuleType

#: Pieces whose expected count falls below this are dropped in the M-step.
EXPECTED_FREQUENCY_THRESHOLD = 0.5
#: The E-step sums expected counts in units of 2^-24 (as integers: order-independent).
FIXED_SCALE = float(1 << 24)
#: Without ``line_ends``, a pre-token occurring at least this often counts as followed both by a
#: space and by a line end in the seed search (see the module docstring).
BOTH_ENDS_MIN_COUNT = 16

_INHERITED = -2  # takes the script of the character before
_SCRIPT_IDS = {name: i for i, name in enumerate(SCRIPTS)}


def _script_of(ch: str) -> int:
    """Script id of a character for the seed engines, as sentencepiece's own table has it
    (:func:`.coverage.spm_script`); -2 = Inherited."""
    name = spm_script(ch)
    return _INHERITED if name == "Inherited" else _SCRIPT_IDS.get(name, len(SCRIPTS))


@dataclass
class UnigramReport:
    """What the last training run did (``UnigramTrainer.last_report``)."""

    required_chars: int
    seed_pieces: int
    em_rounds: int
    objective: float
    seconds: float
    vocab_size_requested: int = 0
    vocab_size: int = 0

    @property
    def stopped_early(self) -> bool:
        """True when the input had fewer pieces than ``vocab_size_requested``
        (every seed piece and character was kept, and that was all)."""
        return self.vocab_size < self.vocab_size_requested


class UnigramTrainer:
    """Train a :class:`~tokenforge.models.unigram.Unigram` model from pre-token counts.

    >>> counts = {"▁low": 5, "▁lower": 2, "▁newest": 6, "▁widest": 3, "▁new": 4}
    >>> m = UnigramTrainer(vocab_size=30, show_progress=False).train_from_counts(counts)
    >>> [m.id_to_token(i) for i in m.encode_piece("▁newest")]
    ['▁new', 'e', 's', 't']
    >>> m.id_to_token(0), m.vocab_size <= 30
    ('<unk>', True)
    """

    def __init__(
        self,
        vocab_size: int = 8000,
        special_tokens: Sequence[str] = (),
        unk_token: str = "<unk>",
        shrinking_factor: float = 0.75,
        num_sub_iterations: int = 2,
        max_piece_length: int = 16,
        seed_sentencepiece_size: int = 1_000_000,
        character_coverage: float = 0.9995,
        byte_fallback: bool = False,
        split_digits: bool = False,
        split_by_unicode_script: bool = True,
        num_threads: int | None = None,
        show_progress: bool | None = None,
        backend: str = "auto",
    ) -> None:
        check_vocab_size(vocab_size)
        if not 0.0 < shrinking_factor < 1.0:
            raise TrainingError(f"shrinking_factor must be in (0, 1), got {shrinking_factor!r}")
        if not isinstance(num_sub_iterations, int) or num_sub_iterations < 1:
            raise TrainingError(f"num_sub_iterations must be >= 1, got {num_sub_iterations!r}")
        if not isinstance(max_piece_length, int) or max_piece_length < 1:
            raise TrainingError(f"max_piece_length must be >= 1, got {max_piece_length!r}")
        if not isinstance(seed_sentencepiece_size, int) or seed_sentencepiece_size < 1:
            raise TrainingError(f"seed_sentencepiece_size must be >= 1, got {seed_sentencepiece_size!r}")
        if not 0.0 < character_coverage <= 1.0:
            raise TrainingError(f"character_coverage must be in (0, 1], got {character_coverage!r}")
        if num_threads is not None and (not isinstance(num_threads, int) or num_threads < 1):
            raise TrainingError(f"num_threads must be a positive int or None, got {num_threads!r}")
        if not isinstance(unk_token, str) or not unk_token:
            raise TrainingError(f"unk_token must be a non-empty str, got {unk_token!r}")
        specials = list(special_tokens)
        for t in specials:
            if not isinstance(t, str) or not t:
                raise TrainingError(f"special tokens must be non-empty str, got {t!r}")
        if len(set(specials)) != len(specials):
            raise TrainingError(f"special tokens are duplicated: {specials!r}")
        _native.core(backend)
        self.vocab_size = vocab_size
        self.special_tokens = tuple(specials)
        self.unk_token = unk_token
        self.shrinking_factor = shrinking_factor
        self.num_sub_iterations = num_sub_iterations
        self.max_piece_length = max_piece_length
        self.seed_sentencepiece_size = seed_sentencepiece_size
        self.character_coverage = character_coverage
        self.byte_fallback = byte_fallback
        self.split_digits = split_digits
        self.split_by_unicode_script = split_by_unicode_script
        self.num_threads = num_threads
        self.show_progress = show_progress
        self.backend = backend
        self.last_report: UnigramReport | None = None

    # -- the steps --------------------------------------------------------------------------------

    def _meta(self) -> tuple[list[str], list[int]]:
        """Pieces before the trained ones, with their sentencepiece types."""
        pieces = [self.unk_token]
        types = [int(PieceType.UNKNOWN)]
        for t in self.special_tokens:
            if t != self.unk_token:
                pieces.append(t)
                types.append(int(PieceType.CONTROL))
        if self.byte_fallback:
            for b in range(256):
                p = byte_piece(b)
                if p not in pieces:
                    pieces.append(p)
                    types.append(int(PieceType.BYTE))
        return pieces, types

    def _required(self, char_counts: Mapping[str, int]) -> list[tuple[str, int]]:
        # spaces and kUNKChar are never alphabet characters (see :mod:`.coverage`)
        counts = {ch: k for ch, k in char_counts.items() if ch not in (" ", UNK_CHAR)}
        return required_chars(counts, self.character_coverage)

    def train_from_counts(self, counts: Mapping[str, int], line_ends: Mapping[str, int] | None = None) -> Unigram:
        """Train on ``{pre-token: frequency}`` (e.g. ``{"▁hello": 3}``) and return the model.

        ``line_ends``: how many of each pre-token's occurrences end a line (sentence), e.g.
        ``{"▁world.": 2}``; the seed search uses it to see the words as sentencepiece sees them in
        whole sentences (see the module docstring). Without it, a pre-token counts as followed by
        both a space and a line end when it occurs at least :data:`BOTH_ENDS_MIN_COUNT` times.
        """
        t0 = time.perf_counter()
        if line_ends is not None and not isinstance(line_ends, Mapping):
            raise TrainingError(f"line_ends must be a mapping of pre-token to count, got {type(line_ends).__name__}")
        words = []
        ends = bytearray()
        for w, c in counts.items():
            if not isinstance(w, str):
                raise TrainingError(f"pre-tokens must be str, got {type(w).__name__}: {w!r}")
            if isinstance(c, bool) or not isinstance(c, (int, np.integer)) or c < 0:
                raise TrainingError(f"the count of {w!r} must be a non-negative int, got {c!r}")
            if w and c:
                c = int(c)
                words.append((w, c))
                if line_ends is None:
                    ends.append(3 if c >= BOTH_ENDS_MIN_COUNT else 1)
                else:
                    e = line_ends.get(w, 0)
                    if isinstance(e, bool) or not isinstance(e, (int, np.integer)) or not 0 <= e <= c:
                        raise TrainingError(f"line_ends[{w!r}] must be an int from 0 to its count {c}, got {e!r}")
                    ends.append((1 if e < c else 0) | (2 if e > 0 else 0))
        if not words:
            raise NoTrainingDataError("cannot train a Unigram model on empty input: no pre-token with a positive count")
        # (the order of the words never changes the result: the sums are of integers)
        meta, meta_types = self._meta()
        char_counts = count_chars(words)
        required = self._required(char_counts)
        minimum = len(required) + len(meta)
        if self.vocab_size < minimum:
            raise TrainingError(
                f"vocab_size={self.vocab_size} is too small: the minimum is {minimum} "
                f"({len(required)} required characters + {len(meta)} special/byte pieces); "
                f"raise vocab_size or lower character_coverage"
            )
        req = {ch for ch, _ in required}
        rare = {ord(ch): UNK_CHAR for ch in char_counts if ch not in req}
        if rare:  # only the words that hold one are copied
            has_rare = re.compile("[" + "".join(re.escape(chr(k)) for k in sorted(rare)) + "]").search
            words = [(w.translate(rare), c) if has_rare(w) else (w, c) for w, c in words]
            del has_rare
        threads = self.num_threads or os.cpu_count() or 1
        core = _native.core(self.backend)
        engine = _Native(core, words, threads, bytes(ends)) if core is not None else _Python(words, bytes(ends))
        del ends

        strs, scores = seed_pieces(
            words, required, self.max_piece_length, self.seed_sentencepiece_size, self.split_digits,
            self.split_by_unicode_script, engine=engine,
        )
        engine.set_pieces(strs)
        # the current vocabulary: indices into the seed, and their scores
        active = np.arange(len(strs), dtype=np.int64)
        target = self.vocab_size - len(meta)
        desired = int(self.vocab_size * 1.1)
        rounds = 0
        objective = 0.0
        total_freq = sum(c for _, c in words)
        bar = _Progress(self.show_progress, len(strs) - desired)
        try:
            while True:
                for _ in range(self.num_sub_iterations):
                    expected, obj = engine.estep(active, scores)
                    objective = -obj / total_freq
                    active, scores = m_step(active, expected)
                rounds += 1
                bar.update(len(strs) - len(active))
                if len(active) <= desired:
                    break
                status, offsets, alts = engine.alternatives(active, scores)
                freq, vsum = engine.viterbi_counts(active, scores)
                single = np.array([len(strs[i]) == 1 for i in active.tolist()], dtype=bool)
                keep = prune(status, offsets, alts, freq, vsum, single, self.shrinking_factor, desired)
                keep.sort()  # the order of the pieces never matters; sorted seed ids are handy
                active, scores = active[keep], scores[keep]
        finally:
            bar.close()
        final = finalize([(strs[i], s) for i, s in zip(active.tolist(), scores.tolist())], required, target)
        all_pieces = [(p, 0.0) for p in meta] + [(p, f32(s)) for p, s in final]
        types = meta_types + [int(PieceType.NORMAL)] * len(final)
        self.last_report = UnigramReport(len(required), len(strs), rounds, objective, time.perf_counter() - t0,
                                         self.vocab_size, len(all_pieces))
        return Unigram(all_pieces, unk_id=0, byte_fallback=self.byte_fallback, types=types, backend=self.backend)


# -- the steps as functions (shared by both engines) ------------------------------------------------


def seed_pieces(
    words: Sequence[tuple[str, int]],
    required: Sequence[tuple[str, int]],
    max_piece_length: int,
    limit: int,
    split_digits: bool = False,
    split_by_script: bool = True,
    engine: _Python | _Native | None = None,
) -> tuple[list[str], np.ndarray]:
    """Seed vocabulary: the pieces (required characters, then frequent substrings) and their
    initial log-probabilities (float64).

    ``words`` hold only required characters and :data:`UNK_CHAR`.
    """
    chars = sorted({ch for ch, _ in required} | {UNK_CHAR})
    keys = [ord(ch) for ch in chars]
    scripts = [_script_of(ch) for ch in chars]
    flags = bytes(
        (1 if spm_digit(ch) else 0) | (2 if ch in (" ", UNK_CHAR, "\x00") else 0) | (4 if ch == SPACE else 0)
        for ch in chars
    )
    if engine is None:
        engine = _Python(words)
    subs, sub_scores = engine.seed_pieces(max_piece_length, keys, scripts, flags, split_digits, split_by_script, limit)
    strs = [ch for ch, _ in required]
    strs += subs
    del subs
    values = np.concatenate([np.array([float(k) for _, k in required], dtype=np.float64), sub_scores])
    logsum = math.log(math.fsum(values.tolist()))
    return strs, np.log(values) - logsum


def digamma(x: np.ndarray) -> np.ndarray:
    """The digamma function for x > 0 (recurrence up to 7, then the asymptotic series)."""
    x = np.asarray(x, dtype=np.float64).copy()
    result = np.zeros_like(x)
    small = x < 7
    while small.any():
        result[small] -= 1.0 / x[small]
        x[small] += 1.0
        small = x < 7
    x -= 0.5
    xx = 1.0 / x
    xx2 = xx * xx
    xx4 = xx2 * xx2
    result += np.log(x) + xx2 / 24.0 - 7.0 / 960.0 * xx4 + 31.0 / 8064.0 * xx4 * xx2 - 127.0 / 30720.0 * xx4 * xx4
    return result


def m_step(active: np.ndarray, expected: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Drop pieces expected fewer than 0.5 times; Bayesian EM update of the rest.

    ``expected`` is aligned with ``active``; returns the new ``(active, scores)``.
    """
    keep = expected >= EXPECTED_FREQUENCY_THRESHOLD
    if not keep.any():
        raise TrainingError("every piece has an expected count below 0.5: the input is too small")
    freq = expected[keep]
    scores = digamma(freq) - digamma(np.array([math.fsum(freq.tolist())]))[0]
    return active[keep], scores


def prune(
    status: np.ndarray,
    offsets: np.ndarray,
    alts: np.ndarray,
    freq: np.ndarray,
    vsum: int,
    single: np.ndarray,
    shrinking_factor: float,
    desired: int,
) -> np.ndarray:
    """Positions (into the current pieces) to keep after pruning.

    ``status``/``offsets``/``alts``: see :func:`alternatives_py`; ``freq``: Viterbi frequency of
    each current piece; ``alts`` index the current pieces (-1 = unknown character).
    """
    n = len(status)
    freq = freq.astype(np.float64)
    total = float(freq.sum())
    logsum = math.log(total) if total > 0 else 0.0
    keepers = single | ((status == 0) & (freq > 0))
    cand = (~single) & (status == 2) & (freq > 0)
    # loss of removing piece i: F_i * (log p_i - sum over its alternative of log p'_n)
    counts = np.diff(offsets)
    owner = np.repeat(np.arange(n), counts)
    valid = alts >= 0
    f_own = freq[owner[valid]]
    with np.errstate(divide="ignore", invalid="ignore"):  # pieces with freq 0 are not candidates
        logsum_alt = np.log(total + freq * (counts - 1))
        terms = np.log(freq[alts[valid]] + f_own) - logsum_alt[owner[valid]]
        logprob_alt = np.bincount(owner[valid], weights=terms, minlength=n)
        logprob_sp = np.log(freq) - logsum
        loss = (freq / vsum) * (logprob_sp - logprob_alt)
    size = max(desired, int(shrinking_factor * n))
    kept = np.flatnonzero(keepers)
    room = max(size - len(kept), 0)
    idx = np.flatnonzero(cand)
    order = idx[np.lexsort((idx, -loss[idx]))][:room]  # highest loss first, ties by position
    return np.concatenate([kept, order])


def finalize(pieces: list[tuple[str, float]], required: Sequence[tuple[str, int]], size: int) -> list[tuple[str, float]]:
    """Required characters plus the best-scored pieces, ``size`` in all, sorted by score."""
    scores = dict(pieces)
    min_score = f32(min(s for _, s in pieces))
    final: dict[str, float] = {}
    penalty = 0.0
    for ch, _ in required:
        if ch in scores:
            final[ch] = scores[ch]
        else:
            final[ch] = min_score + penalty
            penalty += 0.0001
    for p, s in sorted(pieces, key=lambda ps: (-ps[1], ps[0])):
        if len(final) >= size:
            break
        if p not in final:
            final[p] = s
    return sorted(final.items(), key=lambda ps: (-ps[1], ps[0]))


# -- engines: native and pure Python ---------------------------------------------------------------


class _Python:
    """Pure-Python reference of the training loops (the native core computes the same numbers)."""

    def __init__(self, words: Sequence[tuple[str, int]], ends: bytes | None = None) -> None:
        self.words = list(words)
        self.ends = ends  # per word: 1 followed by a space, 2 by a line end, 3 both (None: 3)
        self.strs: list[str] = []

    def set_pieces(self, strs: list[str]) -> None:
        self.strs = strs

    def _model(self, active: np.ndarray, scores: np.ndarray) -> Unigram:
        """The model the E-step and pruning see: every piece matches text, unknowns at min - 10."""
        # Piece types: sentencepiece's float32 arithmetic, as the native engine uses.
        return Unigram([(self.strs[i], s) for i, s in zip(active.tolist(), scores.tolist())], unk_id=None,
                       types=[int(PieceType.NORMAL)] * len(active), backend="python")

    def seed(
        self, max_len: int, keys: list[int], scripts: list[int], flags: bytes, split_digits: bool,
        split_by_script: bool, limit: int,
    ) -> list[tuple[str, int]]:
        info = {chr(k): (s, f) for k, s, f in zip(keys, scripts, flags)}
        counts: dict[str, int] = {}
        succ: dict[str, int] = {}
        branch: set[str] = set()  # followed by two different symbols
        space = _lead_byte(ord(SPACE))
        for k, (w, c) in enumerate(self.words):
            n = len(w)
            end = 3 if self.ends is None else self.ends[k]
            for i in range(n):
                for j in range(i + 2, min(n, i + max_len) + 1):
                    s = w[i:j]
                    counts[s] = counts.get(s, 0) + c
                    if j < n:
                        nxt = _lead_byte(ord(w[j]))
                    elif end == 3:  # followed by a space and by a line end
                        branch.add(s)
                        continue
                    else:
                        nxt = space if end == 1 else 0
                    if succ.setdefault(s, nxt) != nxt:
                        branch.add(s)
        out = []
        for s in branch:
            if counts[s] >= 2 and valid_piece(s, info, split_digits, split_by_script):
                out.append((s, counts[s] * len(s)))
        out.sort(key=lambda sv: (-sv[1], [ord(ch) for ch in sv[0]]))
        return out[:limit]

    def seed_pieces(self, *args: object) -> tuple[list[str], np.ndarray]:
        """:meth:`seed` as (pieces, float64 array of frequency * length)."""
        out = self.seed(*args)  # type: ignore[arg-type]
        return [s for s, _ in out], np.array([float(v) for _, v in out], dtype=np.float64)

    def estep(self, active: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, float]:
        expected, objective = estep_py(self._model(active, scores), self.words)
        return expected / FIXED_SCALE, objective / FIXED_SCALE

    def viterbi_counts(self, active: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, int]:
        model = self._model(active, scores)
        freq = np.zeros(len(active), dtype=np.int64)
        for w, c in self.words:
            for pid, _ in model._viterbi_py(w) or []:
                if pid >= 0:
                    freq[pid] += c
        return freq, sum(c for _, c in self.words)

    def alternatives(self, active: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return alternatives_py(self._model(active, scores), [self.strs[i] for i in active.tolist()])


class _Native:
    """The training loops in the native core. The core model holds a trie of some seed pieces
    (``self.ids``: their seed ids); pieces dropped since are flagged absent, and the trie is
    rebuilt when it has become much bigger than the current vocabulary."""

    def __init__(self, core: ModuleType, words: Sequence[tuple[str, int]], threads: int, ends: bytes | None = None) -> None:
        self.core = core
        self.words = list(words)
        self.threads = threads
        self.corpus = core.unigram_corpus([w for w, _ in words], [c for _, c in words], ends)
        self.strs: list[str] = []
        self.model = None
        self.ids = np.zeros(0, dtype=np.int64)

    def set_pieces(self, strs: list[str]) -> None:
        self.strs = strs
        self.model = None

    def _load(self, active: np.ndarray, scores: np.ndarray) -> np.ndarray:
        """Load the current scores (as float32 values) into the core model; returns, for each
        current piece, its id in the core model."""
        if self.model is None or len(active) * 3 < len(self.ids) * 2:
            self.ids = active.copy()
            self.model = None  # the old trie goes before the new one is built
            self.model = self.core.unigram_model([self.strs[i] for i in active.tolist()], [0.0] * len(active), 0.0)
        where = np.searchsorted(self.ids, active)  # both sorted: active only ever shrinks
        full = np.full(len(self.ids), np.nan)
        f = scores.astype(np.float32)
        full[where] = f
        unk = float(np.float32(f.min()) - np.float32(10.0))
        self.core.unigram_rescore(self.model, full.tobytes(), unk)
        return where

    def seed(
        self, max_len: int, keys: list[int], scripts: list[int], flags: bytes, split_digits: bool,
        split_by_script: bool, limit: int,
    ) -> list[tuple[str, int]]:
        strs, freqs, lens = self._seed(max_len, keys, scripts, flags, split_digits, split_by_script, limit)
        return [(p, f * n) for p, f, n in zip(strs, freqs.tolist(), lens.tolist())]  # exact ints

    def seed_pieces(
        self, max_len: int, keys: list[int], scripts: list[int], flags: bytes, split_digits: bool,
        split_by_script: bool, limit: int,
    ) -> tuple[list[str], np.ndarray]:
        """The seed substrings, best first, and their frequency * length (float64); no tuple per
        piece (10^5-10^6 of them)."""
        strs, freqs, lens = self._seed(max_len, keys, scripts, flags, split_digits, split_by_script, limit)
        return strs, freqs.astype(np.float64) * lens

    def _seed(
        self, max_len: int, keys: list[int], scripts: list[int], flags: bytes, split_digits: bool,
        split_by_script: bool, limit: int,
    ) -> tuple[list[str], np.ndarray, np.ndarray]:
        pos, lens, freqs = self.core.unigram_seed(
            self.corpus, max_len, keys, scripts, flags, split_digits, split_by_script, limit, self.threads
        )
        pos = np.frombuffer(pos, dtype=np.uint64).astype(np.int64)
        lens = np.frombuffer(lens, dtype=np.uint32)
        freqs = np.frombuffer(freqs, dtype=np.int64)
        # positions in the words back to back -> (word, offset): no joined copy of the corpus
        ends = np.cumsum(np.fromiter((len(w) for w, _ in self.words), dtype=np.int64, count=len(self.words)))
        which = np.searchsorted(ends, pos, side="right")
        offs = pos - (ends[which] - np.fromiter((len(self.words[k][0]) for k in which.tolist()), dtype=np.int64,
                                                count=len(which)))
        del ends
        words = self.words
        strs = [words[k][0][o : o + n] for k, o, n in zip(which.tolist(), offs.tolist(), lens.tolist())]
        return strs, freqs, lens

    def estep(self, active: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, float]:
        where = self._load(active, scores)
        raw, obj = self.core.unigram_estep(self.model, self.corpus, self.threads)
        return np.frombuffer(raw, dtype=np.int64)[where] / FIXED_SCALE, obj / FIXED_SCALE

    def viterbi_counts(self, active: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, int]:
        where = self._load(active, scores)
        raw, _ = self.core.unigram_viterbi_counts(self.model, self.corpus, self.threads)
        return np.frombuffer(raw, dtype=np.int64)[where], sum(c for _, c in self.words)

    def alternatives(self, active: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        where = self._load(active, scores)
        status, offsets, alts = self.core.unigram_alternatives(self.model, [self.strs[i] for i in active.tolist()])
        alts = np.frombuffer(alts, dtype=np.int32).astype(np.int64)
        # core ids -> positions in `active` (-1 stays -1)
        pos = np.full(len(self.ids) + 1, -1, dtype=np.int64)
        pos[where] = np.arange(len(active))
        alts = pos[alts]  # index -1 reads the last slot, which is -1
        return np.frombuffer(status, dtype=np.int8), np.frombuffer(offsets, dtype=np.int64), alts


def valid_piece(s: str, info: Mapping[str, tuple[int, int]], split_digits: bool, split_by_script: bool) -> bool:
    """sentencepiece's rules for a piece (see the module docstring); ``info``: char -> (script, flags)."""
    prev = -1
    for i, ch in enumerate(s):
        got = info.get(ch)
        if got is None:
            return False
        script, flags = got
        if flags & 2:
            return False
        if flags & 4:
            if i > 0:
                return False
            continue
        sc = prev if script == -2 else script
        if flags & 1 and split_digits and len(s) > 1:
            return False
        if split_by_script and sc != -1 and prev != -1 and sc != prev:
            return False
        prev = sc
    return True


def estep_py(model: Unigram, words: Sequence[tuple[str, int]]) -> tuple[np.ndarray, int]:
    """Forward-backward expected counts (fixed-point int64, units of 2^-24) and freq * log P (same units).

    Nodes use the model's float32 scores. Each log-sum-exp is ``max + log(sum(exp(x - max)))``
    summed in lattice order, exactly as the native E-step does, so both give the same integers.
    """
    expected = np.zeros(model.vocab_size, dtype=np.int64)
    objective = 0
    score = model._node_score
    unk = model._unk_score
    exp, log = math.exp, math.log
    for w, c in words:
        n = len(w)
        if not n:
            continue
        nodes = [(s, e, pid, unk if pid < 0 else score[pid]) for s, e, pid, _ in model._nodes(w)]
        incoming: list[list[tuple[int, float]]] = [[] for _ in range(n + 1)]
        outgoing: list[list[tuple[int, float]]] = [[] for _ in range(n + 1)]
        for s, e, _, sc in nodes:
            incoming[e].append((s, sc))
            outgoing[s].append((e, sc))
        alpha = [0.0] * (n + 1)
        for e in range(1, n + 1):
            xs = [alpha[s] + sc for s, sc in incoming[e]]
            mx = max(xs)
            total = 0.0
            for x in xs:
                total += exp(x - mx)
            alpha[e] = mx + log(total)
        beta = [0.0] * (n + 1)
        for s in range(n - 1, -1, -1):
            xs = [sc + beta[e] for e, sc in outgoing[s]]
            mx = max(xs)
            total = 0.0
            for x in xs:
                total += exp(x - mx)
            beta[s] = mx + log(total)
        z = alpha[n]
        freq = float(c)
        for s, e, pid, sc in nodes:
            if pid >= 0:
                expected[pid] += _llround(freq * exp(alpha[s] + sc + beta[e] - z) * FIXED_SCALE)
        objective += _llround(freq * z * FIXED_SCALE)
    return expected, objective


def _llround(x: float) -> int:
    """C's llround: to nearest, halves away from zero (exact: ``abs(x) - floor`` loses nothing,
    where ``floor(abs(x) + 0.5)`` rounds wrongly above 2**52 and at 0.49999999999999994)."""
    a = abs(x)
    q = math.floor(a)
    n = q + 1 if a - q >= 0.5 else q
    return int(-n if x < 0 else n)


def alternatives_py(model: Unigram, pieces: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What pruning needs to know of each piece, as ``(status, offsets, ids)``.

    status 0: the piece has a single segmentation (keep it, no alternative); 1: its own
    Viterbi path splits it (it can go); 2: its best segmentation other than itself is
    ``ids[offsets[i]:offsets[i + 1]]`` (-1 = unknown character).
    """
    status = np.zeros(len(pieces), dtype=np.int8)
    offsets = np.zeros(len(pieces) + 1, dtype=np.int64)
    ids: list[int] = []
    for i, p in enumerate(pieces):
        best = model._viterbi_py(p)
        if best is not None:
            if len(best) >= 2:
                status[i] = 1
            else:
                second = model._viterbi_py(p, exclude_whole=True)
                if second is not None:
                    status[i] = 2
                    ids.extend(pid for pid, _ in second)
        offsets[i + 1] = len(ids)
    return status, offsets, np.array(ids, dtype=np.int64)


class _Progress:
    """Pieces pruned so far, of the ``total`` to prune (the :mod:`tokenforge.progress` bar)."""

    def __init__(self, show: bool | None, total: int) -> None:
        self.total = total
        self.bar = Progress(total, "unigram EM", " pieces", show=show if total > 0 else False)

    def update(self, done: int) -> None:
        self.bar.set(min(max(done, 0), self.total))

    def close(self) -> None:
        self.bar.close()

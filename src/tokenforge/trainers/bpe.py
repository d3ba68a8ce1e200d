"""Byte-level BPE training with incremental pair counts (Sennrich et al., 2016; Radford et al., 2019;
Stanford CS336 (2025), assignment 1).

The alphabet is the 256 bytes. Text is split on special tokens first (they are
added to the vocabulary and never merged, and no merge crosses them), then
pre-tokenized with a split pattern; merges never cross a pre-token boundary.
Only distinct pre-tokens are kept, each with its count
(:mod:`tokenforge.trainers.counting`).

Each step merges the most frequent adjacent pair. Ties go to the
lexicographically greatest pair of byte strings, compared as
``(left_bytes, right_bytes)`` (the CS336 assignment's rule); it depends only on the
data, never on hash seeds or worker counts. ``tie_break="gpt2_unicode"``
compares the pairs as GPT-2 printable strings instead: that is the order in
which the CS336 assignment's reference merges were produced (the two rules
agree on ASCII letters but not on, e.g., ``" c"`` vs ``"t"``, since the space
byte prints as ``Ġ``).

Nothing is recounted per merge. The trainer keeps the count of every pair, an
index from each pair to the words that hold it, and a max-heap of
``(count, pair)`` with lazy deletion: a merge visits only the words holding the
merged pair, applies the count changes it causes, and pushes the changed
pairs again; heap entries whose count is out of date are skipped when popped.
Counts are Python ints, so they never overflow.

Ids: the 256 bytes, then the special tokens in the order given, then one id
per merge in the order learned.
"""

from __future__ import annotations

import heapq
import os
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .. import _native
from ..errors import TrainingError
from ..models.bpe import BPE
from ..pretokenizers import RegexSplit
from ..progress import Progress
from ..specials import check_special_list, special_regex
from . import NoTrainingDataError, check_vocab_size
from .counting import count_files, count_text

TIE_BREAKS = ("bytes", "gpt2_unicode")


def _byte_order(tie_break: str) -> bytes:
    """Sort position of each byte value under a tie-break rule."""
    if tie_break == "bytes":
        return bytes(range(256))
    if tie_break == "gpt2_unicode":
        from ..bytelevel import bytes_to_unicode

        b2u = bytes_to_unicode()
        order = sorted(range(256), key=lambda b: b2u[b])
        pos = [0] * 256
        for rank, b in enumerate(order):
            pos[b] = rank
        return bytes(pos)
    raise TrainingError(f"tie_break must be one of {', '.join(TIE_BREAKS)}, got {tie_break!r}")


def _tie_key(token: bytes, order: bytes) -> bytes:
    """A key whose ascending order is the *descending* lexicographic order of
    ``token`` (a longer string sorts before its own prefix); ``order`` gives
    each byte's sort position."""
    out = bytearray()
    for c in token:
        out += bytes((1, 255 - order[c]))
    out.append(2)
    return bytes(out)


def index_pairs(
    words: Sequence[Sequence[int]], freqs: Sequence[int]
) -> tuple[dict[tuple[int, int], int], dict[tuple[int, int], set[int]]]:
    """The count of every adjacent pair (each word weighted by its count) and the words
    that hold it: the start of the Python merge loops (BPE here, WordPiece)."""
    pair_count: dict[tuple[int, int], int] = {}
    where: dict[tuple[int, int], set[int]] = {}
    for idx, w in enumerate(words):
        f = freqs[idx]
        for p in zip(w, w[1:]):
            pair_count[p] = pair_count.get(p, 0) + f
            s = where.get(p)
            if s is None:
                where[p] = {idx}
            else:
                s.add(idx)
    return pair_count, where


def learn_merges(
    word_counts: Mapping[bytes, int] | Any,
    num_merges: int,
    progress: Callable[[int], None] | None = None,
    tie_break: str = "bytes",
    backend: str = "auto",
) -> list[tuple[bytes, bytes]]:
    """Learn up to ``num_merges`` merges from ``{pre_token_bytes: count}`` (or the native
    ``PieceCounter`` of :func:`~tokenforge.trainers.counting.count_files`).

    Returns fewer merges when no adjacent pair is left. ``tie_break="bytes"``
    prefers the greatest pair of byte strings; ``"gpt2_unicode"`` compares the
    pairs in GPT-2's printable alphabet instead, which is the order the CS336
    assignment's reference merges (``train-bpe-reference-merges.txt``) follow.

    >>> learn_merges({b"aaabdaaabac": 1}, 3)
    [(b'a', b'a'), (b'aa', b'a'), (b'aaa', b'b')]

    With the native core (the default when it is built) the loop runs in C++
    with 64-bit counts; ``backend="python"`` runs the reference below. Both
    give the same merges.

    ``progress`` is called with the number of merges learned since its last
    call: every merge in the Python loop, every ~1/200 of ``num_merges`` (and at
    least every 50 ms) in the native one. Ctrl-C stops either loop within a
    fraction of a second with :class:`KeyboardInterrupt`.
    """
    order = _byte_order(tie_break)
    native = _native.core(backend)
    table = native is not None and isinstance(word_counts, native.PieceCounter)
    if not table and not isinstance(word_counts, Mapping):  # a native PieceCounter, Python loop
        word_counts = word_counts.to_dict()
    if native is not None:
        reported = 0
        step = progress

        def report(done: int) -> None:  # the native loop reports the merges learned so far
            nonlocal reported
            if done > reported and step is not None:
                step(done - reported)
                reported = done

        callback = report if progress else None
        if table:  # the counts stay native: no Python object per word
            merged: list[tuple[int, int]] = native.learn_merges(
                word_counts, None, max(num_merges, 0), order, callback)
        else:
            distinct = list(word_counts)
            merged = native.learn_merges(
                distinct, [word_counts[w] for w in distinct], max(num_merges, 0), order, callback)
        learned = [bytes([i]) for i in range(256)]
        for a, b in merged:
            learned.append(learned[a] + learned[b])
        if callback is not None:
            callback(len(merged))
        return [(learned[a], learned[b]) for a, b in merged]
    tokens: list[bytes] = [bytes([i]) for i in range(256)]
    keys: list[bytes] = [_tie_key(t, order) for t in tokens]
    words: list[list[int]] = []
    freqs: list[int] = []
    for word, c in word_counts.items():
        if len(word) >= 2 and c > 0:
            words.append(list(word))
            freqs.append(c)

    pair_counts, where = index_pairs(words, freqs)
    heap = [(-c, keys[a], keys[b], a, b) for (a, b), c in pair_counts.items()]
    heapq.heapify(heap)

    merges: list[tuple[int, int]] = []
    while len(merges) < num_merges and heap:
        negc, _, _, a, b = heapq.heappop(heap)
        pair = (a, b)
        if pair_counts.get(pair) != -negc:
            continue  # stale entry
        new = len(tokens)
        tokens.append(tokens[a] + tokens[b])
        keys.append(_tie_key(tokens[new], order))
        merges.append(pair)
        delta: dict[tuple[int, int], int] = {}
        for idx in where.pop(pair, ()):
            w = words[idx]
            n = len(w)
            i = 0
            out: list[int] = []
            found = False
            while i < n:
                if w[i] == a and i + 1 < n and w[i + 1] == b:
                    out.append(new)
                    i += 2
                    found = True
                else:
                    out.append(w[i])
                    i += 1
            if not found:
                continue  # stale index entry: the word no longer holds the pair
            f = freqs[idx]
            for p in zip(w, w[1:]):
                delta[p] = delta.get(p, 0) - f
            for p in zip(out, out[1:]):
                delta[p] = delta.get(p, 0) + f
                s = where.get(p)
                if s is None:
                    where[p] = {idx}
                else:
                    s.add(idx)
            words[idx] = out
        for p, d in delta.items():
            if d == 0:
                continue
            c = pair_counts.get(p, 0) + d
            if c > 0:
                pair_counts[p] = c
                heapq.heappush(heap, (-c, keys[p[0]], keys[p[1]], p[0], p[1]))
            else:
                pair_counts.pop(p, None)
        pair_counts.pop(pair, None)
        if progress:
            progress(1)
    return [(tokens[a], tokens[b]) for a, b in merges]


@dataclass(frozen=True)
class TrainReport:
    """What a training run did."""

    input_bytes: int
    distinct_pretokens: int
    merges_requested: int
    merges_learned: int
    counting_seconds: float
    merging_seconds: float

    @property
    def stopped_early(self) -> bool:
        """True when no pair was left to merge before the vocab size was reached."""
        return self.merges_learned < self.merges_requested

    @property
    def seconds(self) -> float:
        return self.counting_seconds + self.merging_seconds


class BPETrainer:
    """Settings for byte-level BPE training; ``train`` and ``train_from_iterator``
    return a :class:`~tokenforge.Tokenizer` and leave a :class:`TrainReport` in
    ``last_report``.

    >>> from tokenforge import BPETrainer
    >>> tok = BPETrainer(vocab_size=259, pattern=None).train_from_iterator(["the cat in the hat"])
    >>> [tok.decode_single_token_bytes(i) for i in (256, 257, 258)]
    [b'th', b'the', b'the ']
    """

    def __init__(
        self,
        vocab_size: int,
        *,
        special_tokens: Sequence[str] = (),
        pattern: str | None = "gpt2",
        workers: int | None = None,
        errors: str = "strict",
        show_progress: bool | None = None,
        tie_break: str = "bytes",
        backend: str = "auto",
        engine: str = "local",
        ray_address: str | None = None,
    ) -> None:
        _byte_order(tie_break)  # validate early
        if engine not in ("local", "ray"):
            raise TrainingError(f"engine must be 'local' or 'ray', not {engine!r}")
        _native.core(backend)  # validate early
        specials = check_special_list(special_tokens)
        check_vocab_size(vocab_size)
        if vocab_size < 256 + len(specials):
            raise TrainingError(
                f"vocab_size {vocab_size} is smaller than the 256 byte tokens plus "
                f"{len(specials)} special token(s) = {256 + len(specials)}"
            )
        if workers is not None and (not isinstance(workers, int) or workers < 1):
            raise TrainingError(f"workers must be a positive int, got {workers!r}")
        self.vocab_size = vocab_size
        self.special_tokens = tuple(specials)
        self.pre_tokenizer = None if pattern is None else RegexSplit(pattern)
        self.workers = workers
        self.errors = errors
        self.show_progress = show_progress
        self.tie_break = tie_break
        self.backend = backend
        self.engine = engine
        self.ray_address = ray_address
        self.last_report: TrainReport | None = None

    @property
    def num_merges(self) -> int:
        return self.vocab_size - 256 - len(self.special_tokens)

    def train(self, files: Iterable[str | os.PathLike[str]] | str | os.PathLike[str]) -> "Tokenizer":
        """Train on text files of any size (streamed in ranges, counted in parallel)."""
        if isinstance(files, (str, os.PathLike)):
            files = [files]
        files = list(files)
        if not files:
            raise TrainingError("no training files given")
        total = sum(os.path.getsize(f) for f in files if os.path.isfile(f))
        t0 = time.perf_counter()
        with Progress(total, "count", "B", show=self.show_progress, unit_scale=True) as bar:
            counts = count_files(
                files,
                self.pre_tokenizer,
                self.special_tokens,
                workers=self.workers,
                errors=self.errors,
                progress=bar,
                backend=self.backend,
                engine=self.engine,
                ray_address=self.ray_address,
                native_table=True,
            )
        if not counts:
            raise NoTrainingDataError(f"no text to train on in {_names(files)}: " + (
                "the file is empty" if total == 0 and len(files) == 1 else
                "the files are empty" if total == 0 else "it holds nothing but special tokens"))
        return self._finish(counts, total, time.perf_counter() - t0)

    def train_from_iterator(self, texts: Iterable[str]) -> "Tokenizer":
        """Train on in-memory strings (each one is a separate document)."""
        if isinstance(texts, str):
            texts = [texts]
        t0 = time.perf_counter()
        pattern = special_regex(self.special_tokens)
        counts: Counter[bytes] = Counter()
        total = 0
        for n, text in enumerate(texts):
            if not isinstance(text, str):
                raise TrainingError(f"training text {n} is {type(text).__name__}, expected str")
            total += len(text.encode("utf-8", "surrogatepass"))
            counts.update(count_text(text, self.pre_tokenizer, pattern, self.backend))
        if not counts:
            raise NoTrainingDataError("no text to train on: the texts are empty" if total == 0
                                      else "no text to train on: the texts hold nothing but special tokens")
        return self._finish(counts, total, time.perf_counter() - t0)

    def _finish(self, counts: Mapping[bytes, int] | Any, total: int, counting_seconds: float) -> "Tokenizer":
        from ..tokenizer import Tokenizer

        t1 = time.perf_counter()
        with Progress(self.num_merges, "merge", " merges", show=self.show_progress) as bar:
            merges = learn_merges(counts, self.num_merges, bar, self.tie_break, self.backend)
        merging_seconds = time.perf_counter() - t1
        n_special = len(self.special_tokens)
        vocab = {i: bytes([i]) for i in range(256)}
        for k, (a, b) in enumerate(merges):
            vocab[256 + n_special + k] = a + b
        specials = {t: 256 + i for i, t in enumerate(self.special_tokens)}
        self.last_report = TrainReport(
            input_bytes=total,
            distinct_pretokens=len(counts),
            merges_requested=self.num_merges,
            merges_learned=len(merges),
            counting_seconds=counting_seconds,
            merging_seconds=merging_seconds,
        )
        return Tokenizer(BPE(vocab, merges), pre_tokenizer=self.pre_tokenizer, special_tokens=specials, backend=self.backend)


def _names(files: Sequence[str | os.PathLike[str]]) -> str:
    """The training files, for a message: one name, or the first few and how many."""
    names = [os.fspath(f) for f in files]
    return ", ".join(names[:3]) + (f", ... ({len(names)} files)" if len(names) > 3 else "")


def train_bpe(
    files: Iterable[str | os.PathLike[str]] | str | os.PathLike[str],
    vocab_size: int,
    *,
    special_tokens: Sequence[str] = (),
    pattern: str | None = "gpt2",
    workers: int | None = None,
    errors: str = "strict",
    show_progress: bool | None = None,
    tie_break: str = "bytes",
    backend: str = "auto",
    engine: str = "local",
    ray_address: str | None = None,
) -> "Tokenizer":
    """Train a byte-level BPE tokenizer on text files. See :class:`BPETrainer`
    (``engine="ray"`` counts pre-tokens as a map-reduce on a Ray cluster; the
    merges are learned on the driver and equal local training's)."""
    trainer = BPETrainer(
        vocab_size,
        special_tokens=special_tokens,
        pattern=pattern,
        workers=workers,
        errors=errors,
        show_progress=show_progress,
        tie_break=tie_break,
        backend=backend,
        engine=engine,
        ray_address=ray_address,
    )
    return trainer.train(files)


if False:  # pragma: no cover - typing only
    from ..tokenizer import Tokenizer

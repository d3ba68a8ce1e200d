"""Parallel, streaming pre-token counting: the first half of BPE training.

Training only needs how often each distinct pre-token occurs (as in
Stanford CS336 (2025), assignment 1). Files are cut into byte ranges of a few
MB whose boundaries are *safe*:
the start of a special token, or a line break or space that has
non-whitespace on both sides. No piece of any named split pattern (gpt2,
cl100k, o200k, llama3, qwen) crosses such a boundary, so counting the ranges
separately gives exactly the counts of the whole file. A custom pattern gets
only special-token and line-break boundaries.

Worker processes each read one range, split it on special tokens, pre-tokenize
and count; the parent sums the counts. Memory is bounded by the range size
times the number of workers plus the table of distinct pre-tokens, whatever
the file size. Counting is a sum, so the result is the same for any number of
workers and any hash seed.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import regex

from .. import _native
from ..errors import TokenizerFileNotFoundError, TrainingError
from ..pretokenizers import RegexSplit
from ..specials import special_regex

#: Target size of one counting range.
CHUNK_BYTES = 4 << 20
#: Inputs smaller than this are counted in the calling process.
_IN_PROCESS_BYTES = 1 << 20
#: How far to look for a safe boundary at a time.
_WINDOW = 1 << 16
_ERRORS = ("strict", "replace", "ignore")
_SPACE_BYTES = frozenset(b" \t\r\n\x0b\x0c\x1c\x1d\x1e\x1f\x85\xa0")


def _is_space_char(window: bytes, end: int) -> bool:
    """Is the character that ends at ``window[end - 1]`` whitespace (or unknown)?"""
    b = window[end - 1]
    if b < 0x80:
        return b in _SPACE_BYTES or b < 0x20
    # Decode the multi-byte character that ends here (at most 4 bytes back).
    for start in range(end - 1, max(end - 4, 0) - 1, -1):
        if window[start] & 0xC0 != 0x80:
            ch = window[start:end].decode("utf-8", "replace")
            return len(ch) != 1 or ch.isspace() or ch == "\ufffd"
    return True


def _is_space_at(window: bytes, start: int) -> bool:
    """Is the character that starts at ``window[start]`` whitespace (or unknown)?"""
    b = window[start]
    if b < 0x80:
        return b in _SPACE_BYTES or b < 0x20
    length = 2 if b >> 5 == 0b110 else 3 if b >> 4 == 0b1110 else 4 if b >> 3 == 0b11110 else 0
    if length == 0 or start + length > len(window):
        return True
    ch = window[start : start + length].decode("utf-8", "replace")
    return len(ch) != 1 or ch.isspace() or ch == "\ufffd"


def find_boundary(f, start: int, size: int, specials: Sequence[bytes], spaces_ok: bool) -> int:
    """First safe boundary at or after ``start`` (``size`` if there is none)."""
    max_special = max((len(s) for s in specials), default=0)
    pos = start
    while pos < size:
        f.seek(max(pos - 4, 0))
        lead = pos - max(pos - 4, 0)
        window = f.read(_WINDOW + lead + max_special + 4)
        if not window:
            return size
        best = None
        for s in specials:
            k = window.find(s, lead)
            if k != -1 and (best is None or k < best):
                best = k
        limit = len(window) - 4 if pos + len(window) - lead < size else len(window)
        for sep in (b"\n", b" ") if spaces_ok else (b"\n",):
            k = window.find(sep, lead)
            while k != -1 and k + 1 < limit and (best is None or k + 1 < best):
                if k > 0 and not _is_space_char(window, k) and not _is_space_at(window, k + 1):
                    # cut before a space, after a newline
                    cut = k if sep == b" " else k + 1
                    if not any(_inside(window, cut, s) for s in specials):
                        best = cut if best is None else min(best, cut)
                    break
                k = window.find(sep, k + 1)
        if best is not None:
            return max(pos - lead + best, start)
        pos += _WINDOW
    return size


def _inside(window: bytes, cut: int, special: bytes) -> bool:
    lo = max(cut - len(special) + 1, 0)
    k = window.find(special, lo, cut + len(special) - 1)
    return k != -1 and k < cut < k + len(special)


def plan_ranges(path: Path, specials: Sequence[bytes], spaces_ok: bool, chunk_bytes: int = CHUNK_BYTES) -> list[tuple[int, int]]:
    """Byte ranges of ``path`` of about ``chunk_bytes`` with safe boundaries."""
    size = path.stat().st_size
    ranges = []
    with open(path, "rb") as f:
        start = 0
        while start < size:
            target = start + chunk_bytes
            end = size if target >= size else find_boundary(f, target, size, specials, spaces_ok)
            ranges.append((start, end))
            start = end
    return ranges


def count_text(
    text: str, pre: RegexSplit | None, special_pattern: "regex.Pattern[str] | None", backend: str = "auto"
) -> Counter:
    """Count the pre-tokens of ``text`` (specials removed), as UTF-8 bytes.

    Named patterns use the native scanners when the core is built; the result
    is the same as splitting with the ``regex`` module.
    """
    segments = special_pattern.split(text) if special_pattern is not None else [text]
    native = _native.core(backend)
    if native is not None and pre is not None and pre.name in _native.SCANNERS:
        return Counter(native.count_pieces([s for s in segments if s], _native.SCANNERS[pre.name]))
    counts: Counter = Counter()
    for seg in segments:
        if not seg:
            continue
        if pre is None:
            counts[seg] += 1
        else:
            counts.update(pre.split(seg))
    return Counter({k.encode("utf-8"): v for k, v in counts.items()})


def _decode_range(data: bytes, path: str, start: int, errors: str) -> str:
    """UTF-8 text of a byte range; invalid UTF-8 names the file, line and byte."""
    try:
        return data.decode("utf-8", errors)
    except UnicodeDecodeError as exc:
        with open(path, "rb") as f:
            before = f.read(start).count(b"\n")
        line = before + data.count(b"\n", 0, exc.start) + 1
        raise TrainingError(
            f"{path}, line {line}: not valid UTF-8 at byte {start + exc.start} ({exc.reason}); "
            "pass errors='replace' or errors='ignore' to train anyway"
        ) from None


def _count_range(args) -> tuple[Counter, int]:
    path, start, end, pre_dict, specials, errors, backend = args
    from ..pretokenizers import pre_tokenizer_from_dict

    pre = pre_tokenizer_from_dict(pre_dict)
    with open(path, "rb") as f:
        f.seek(start)
        data = f.read(end - start)
    text = _decode_range(data, path, start, errors)
    return count_text(text, pre, special_regex(specials), backend), end - start


def count_files(
    paths: Iterable[str | os.PathLike],
    pre: RegexSplit | None,
    special_tokens: Sequence[str] = (),
    *,
    workers: int | None = None,
    errors: str = "strict",
    progress: Callable[[int], None] | None = None,
    chunk_bytes: int | None = None,
    backend: str = "auto",
    engine: str = "local",
    ray_address: str | None = None,
) -> Counter:
    """Count pre-tokens over files, in parallel worker processes (``engine="local"``)
    or as Ray tasks (``engine="ray"``: a map over the ranges, summed on the driver).

    ``progress`` is called with the number of bytes of each finished range.
    """
    if engine not in ("local", "ray"):
        raise TrainingError(f"engine must be 'local' or 'ray', not {engine!r}")
    chunk_bytes = chunk_bytes or CHUNK_BYTES
    if errors not in _ERRORS:
        raise TrainingError(f"errors must be one of {', '.join(_ERRORS)}, got {errors!r}")
    specials_b = [s.encode("utf-8") for s in special_tokens]
    spaces_ok = pre is None or pre.name is not None
    tasks = []
    pre_dict = None if pre is None else pre.to_dict()
    for raw in paths:
        path = Path(raw)
        if not path.is_file():
            raise TokenizerFileNotFoundError(f"{path}: no such file" if not path.exists() else f"{path}: not a regular file")
        if pre is None:
            ranges = [(0, path.stat().st_size)]  # without a split pattern the whole file is one piece
        else:
            ranges = plan_ranges(path, specials_b, spaces_ok, chunk_bytes)
        tasks.extend((str(path), s, e, pre_dict, tuple(special_tokens), errors, backend) for s, e in ranges)
    if workers is None:
        workers = os.cpu_count() or 1
    total: Counter = Counter()
    if engine == "ray":
        _run_ray(tasks, workers, total, progress, ray_address)
        return total
    if workers <= 1 or len(tasks) <= 1:
        for t in tasks:
            counts, n = _count_range(t)
            _add(total, counts)
            if progress:
                progress(n)
        return total
    _run_pool(_count_range, tasks, workers, total, progress)
    return total


def _run_pool(fn, tasks: list, workers: int, total: Counter, progress: Callable[[int], None] | None) -> None:
    """Run ``fn`` over ``tasks`` in worker processes, summing the counts into ``total``.

    At most two ranges are in flight per worker, so memory does not grow with the file.
    """
    workers = min(workers, len(tasks))
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

    with ProcessPoolExecutor(max_workers=workers) as pool:
        pending = set()
        queue = iter(tasks)
        for t in queue:
            pending.add(pool.submit(fn, t))
            if len(pending) >= 2 * workers:
                break
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                counts, n = fut.result()
                _add(total, counts)
                if progress:
                    progress(n)
                nxt = next(queue, None)
                if nxt is not None:
                    pending.add(pool.submit(fn, nxt))


def _run_ray(tasks: list, workers: int, total: Counter, progress: Callable[[int], None] | None,
             address: str | None) -> None:
    """The map-reduce on Ray: one task per range, at most two per CPU in flight, counts
    summed on the driver as tasks finish (a sum, so the order does not matter)."""
    from .._ray import init_ray

    ray = init_ray(workers, address)
    remote = ray.remote(_count_range)
    limit = 2 * max(int(ray.cluster_resources().get("CPU", workers)), 1)
    queue = iter(tasks)
    pending = [remote.remote(t) for _, t in zip(range(limit), queue)]  # range first: no task is dropped
    while pending:
        done, pending = ray.wait(pending, num_returns=1)
        counts, n = ray.get(done[0])
        _add(total, counts)
        if progress:
            progress(n)
        nxt = next(queue, None)
        if nxt is not None:
            pending.append(remote.remote(nxt))


def _add(total: Counter, counts: Counter) -> None:
    if not total:
        total.update(counts)
        return
    get = total.get
    for k, v in counts.items():
        total[k] = get(k, 0) + v


# ---------------------------------------------------------------------------
# Counting for the general pipeline (WordPiece, Unigram, SentencePiece BPE).
#
# These trainers see text the way their tokenizer will: each line is
# normalized and pre-tokenized by the pipeline's own stages, then the pieces
# are counted. SentencePiece treats every line as a sentence of its own (it
# gets its own dummy prefix), so line boundaries are the natural safe cuts:
# ranges end just after a newline, and counting ranges separately is exact.
# ---------------------------------------------------------------------------


class LineSplitter:
    """Picklable ``line -> pieces``: a normalizer and a pre-tokenizer, rebuilt from their dicts in workers.

    ``line_independent`` says that normalizing and pre-tokenizing a block of
    lines at once gives the pieces of the lines one by one (BERT: character-wise
    normalization, whitespace always separates pieces). Blocks are then
    processed whole, which is several times faster than line by line.
    """

    def __init__(self, normalizer: dict | None, pre_tokenizer: dict | None, line_independent: bool = False) -> None:
        self.normalizer_dict = normalizer
        self.pre_dict = pre_tokenizer
        self.line_independent = line_independent
        self._norm = self._pre = None
        self._ready = False

    def __getstate__(self):
        return {"normalizer_dict": self.normalizer_dict, "pre_dict": self.pre_dict, "line_independent": self.line_independent}

    def __setstate__(self, state):
        self.__init__(state["normalizer_dict"], state["pre_dict"], state.get("line_independent", False))

    def _build(self) -> None:
        from ..normalizers import normalizer_from_dict
        from ..pretokenizers import pre_tokenizer_from_dict

        self._norm = normalizer_from_dict(self.normalizer_dict)
        self._pre = pre_tokenizer_from_dict(self.pre_dict)
        self._ready = True

    def count(self, lines: Iterable[str], counts: Counter) -> None:
        if not self._ready:
            self._build()
        norm, pre = self._norm, self._pre
        if self.line_independent and pre is not None:
            block = "\n".join(lines)
            if norm is not None:
                block = norm.normalize_str(block)
            _add(counts, Counter(pre.split(block)))
            return
        for line in lines:
            if norm is not None:
                line = norm.normalize_str(line)
            if not line:
                continue
            if pre is None:
                counts[line] += 1
            else:
                counts.update(pre.split(line))


def plan_line_ranges(path: Path, chunk_bytes: int = CHUNK_BYTES) -> list[tuple[int, int]]:
    """Byte ranges of about ``chunk_bytes`` that each end just after a newline (or at EOF)."""
    size = path.stat().st_size
    ranges = []
    with open(path, "rb") as f:
        start = 0
        while start < size:
            end = start + chunk_bytes
            if end >= size:
                end = size
            else:
                f.seek(end)
                while True:
                    block = f.read(_WINDOW)
                    if not block:
                        end = size
                        break
                    k = block.find(b"\n")
                    if k >= 0:
                        end += k + 1
                        break
                    end += len(block)
            ranges.append((start, end))
            start = end
    return ranges


def _count_line_range(args) -> tuple[Counter, int]:
    path, start, end, splitter, errors = args
    with open(path, "rb") as f:
        f.seek(start)
        data = f.read(end - start)
    text = _decode_range(data, path, start, errors)
    counts: Counter = Counter()
    splitter.count(text.splitlines(), counts)
    return counts, end - start


def count_lines(
    sources: Iterable[str | os.PathLike] | None,
    splitter: LineSplitter,
    *,
    iterator: Iterable[str] | None = None,
    workers: int | None = None,
    errors: str = "strict",
    progress: Callable[[int], None] | None = None,
    chunk_bytes: int = CHUNK_BYTES,
) -> Counter:
    """Count the pipeline pieces of every line of the files ``sources`` (in
    worker processes) and of the strings of ``iterator`` (each string is split
    into lines too). The result does not depend on the number of workers."""
    chunk_bytes = chunk_bytes or CHUNK_BYTES
    if errors not in _ERRORS:
        raise TrainingError(f"errors must be one of {', '.join(_ERRORS)}, got {errors!r}")
    total: Counter = Counter()
    if iterator is not None:
        batch: list[str] = []
        size = 0
        for n, text in enumerate(iterator):
            if not isinstance(text, str):
                raise TrainingError(f"training texts must be str; item {n} is {type(text).__name__}")
            batch.extend(text.splitlines())
            size += len(text)
            if size >= chunk_bytes:
                splitter.count(batch, total)
                if progress:
                    progress(size)
                batch, size = [], 0
        splitter.count(batch, total)
        if progress and size:
            progress(size)
    tasks = []
    for raw in sources or ():
        path = Path(raw)
        if not path.is_file():
            raise TokenizerFileNotFoundError(f"{path}: no such file" if not path.exists() else f"{path}: not a regular file")
        tasks.extend((str(path), s, e, splitter, errors) for s, e in plan_line_ranges(path, chunk_bytes))
    if workers is None:
        workers = os.cpu_count() or 1
    small = sum(t[2] - t[1] for t in tasks) < _IN_PROCESS_BYTES  # not worth starting processes
    if workers <= 1 or len(tasks) <= 1 or small:
        for t in tasks:
            counts, n = _count_line_range(t)
            _add(total, counts)
            if progress:
                progress(n)
        return total
    _run_pool(_count_line_range, tasks, workers, total, progress)
    return total

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
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from itertools import compress
from pathlib import Path

import numpy as np
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
_ERRORS = ("strict", "replace", "ignore", "backslashreplace")
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
        before = 0
        with open(path, "rb") as f:  # lines before the range, counted a window at a time
            left = start
            while left > 0:
                block = f.read(min(left, CHUNK_BYTES))
                if not block:
                    break
                before += block.count(b"\n")
                left -= len(block)
        line = before + data.count(b"\n", 0, exc.start) + 1
        raise TrainingError(
            f"{path}, line {line}: not valid UTF-8 at byte {start + exc.start} ({exc.reason}); "
            "pass errors='replace' or errors='ignore' to train anyway"
        ) from None


def native_scanner(pre: RegexSplit | None, backend: str = "auto") -> int | None:
    """The native scanner that counts ``pre``'s pieces, or None (no core, or a custom pattern)."""
    if pre is None or pre.name not in _native.SCANNERS or _native.core(backend) is None:
        return None
    return _native.SCANNERS[pre.name]


def _count_range(args) -> tuple[Counter | bytes, int]:
    """The counts of one file range: a Counter, or (``packed``) the bytes of a native
    ``PieceCounter``'s ``pack()``, for the parent's counter to merge."""
    path, start, end, pre_dict, specials, errors, backend, *packed = args
    from ..pretokenizers import pre_tokenizer_from_dict

    pre = pre_tokenizer_from_dict(pre_dict)
    with open(path, "rb") as f:
        f.seek(start)
        data = f.read(end - start)
    text = _decode_range(data, path, start, errors)
    del data
    native, scanner = _native.core(backend), native_scanner(pre, backend)
    if packed and packed[0] and native is not None and scanner is not None:
        pattern = special_regex(specials)
        segments = pattern.split(text) if pattern is not None else [text]
        counter = native.PieceCounter()
        counter.add([s for s in segments if s], scanner)
        return counter.pack(), end - start
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
    native_table: bool = False,
) -> Counter:
    """Count pre-tokens over files, in parallel worker processes (``engine="local"``)
    or as Ray tasks (``engine="ray"``: a map over the ranges, summed on the driver).

    ``progress`` is called with the number of bytes of each finished range.
    ``native_table=True`` returns a native ``PieceCounter`` instead of a Counter when
    the pattern has a native scanner and ``engine="local"``: the workers send packed
    tables and no Python object is made per pre-token (``learn_merges`` takes it as
    it is; ``to_dict()`` gives the Counter's contents).
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
    native = _native.core(backend)
    if native_table and engine == "local" and native is not None and native_scanner(pre, backend) is not None:
        total = native.PieceCounter()
        tasks = [t + (True,) for t in tasks]
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


def _run_pool(fn, tasks: list, workers: int, total: Counter, progress: Callable[[int], None] | None,
              skipped: list[int] | None = None, ends: Counter | None = None) -> None:
    """Run ``fn`` over ``tasks`` in worker processes, summing the counts into ``total``
    (the third item of each result, when there is one, into ``skipped[0]``, and the fourth,
    the line-end counts, into ``ends``).

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
                counts, n, *rest = fut.result()
                _add(total, counts)
                if rest and skipped is not None:
                    skipped[0] += rest[0]
                if len(rest) > 1 and rest[1] is not None and ends is not None:
                    _add(ends, rest[1])
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


def _add(total, counts) -> None:
    """Add ``counts`` to ``total``: Counters, or a native ``WordCounter`` and the bytes of
    another one's ``pack()`` (the SentencePiece splitter's ranges)."""
    if isinstance(counts, bytes):
        total.merge(counts)
        return
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
# gets its own dummy prefix), so line boundaries are the natural safe cuts.
# BERT's pipeline (WordPiece) also ends a word at every white space,
# punctuation character and CJK ideograph, so those are safe cuts for it too.
#
# Memory is bounded by the chunk size, whatever the length of the lines: a
# range is read a block at a time and cut just after its last safe character;
# the rest (an unfinished line or word) is carried into the next block. A
# unit longer than the pipeline's limit is dropped while it streams by, never
# held whole, and counted as skipped:
#
# * SentencePiece (``max_line_bytes``): a line of more than
#   ``max_sentence_length`` UTF-8 bytes is skipped, which is what
#   sentencepiece's own trainer does with such a sentence
#   (``trainer_interface.cc``: "Too long lines are skipped in the training",
#   default 4192 bytes).
# * WordPiece (``max_word_bytes``): a run of more than that many UTF-8 bytes
#   with no line break, white space, punctuation or CJK ideograph (one word to
#   BERT's pre-tokenizer) is skipped. WordPiece encodes any word longer than
#   ``max_input_chars_per_word`` (100) as ``[UNK]``, whatever the vocabulary,
#   so such a word is never segmented into the pieces it would teach.
#
# The lengths are measured on the text as read, before normalization, as
# sentencepiece measures its sentences.
# ---------------------------------------------------------------------------

#: The line boundaries of ``str.splitlines``: each one ends a line (a sentence).
LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"


def _ranges_class(ranges: Iterable[tuple[int, int]]) -> str:
    """The inside of a regex character class holding the code point ranges."""
    out = []
    for lo, hi in ranges:
        out.append(re.escape(chr(lo)) if lo == hi else f"{re.escape(chr(lo))}-{re.escape(chr(hi))}")
    return "".join(out)


def _bert_punctuation() -> list[tuple[int, int]]:
    """Punctuation BERT's pre-tokenizer always isolates: ASCII symbols and punctuation, and
    the category-P characters of the Latin-1, General Punctuation, CJK Symbols and Punctuation
    and fullwidth blocks (all assigned long before any Unicode version the tables could lack)."""
    import unicodedata

    out = [(0x21, 0x2F), (0x3A, 0x40), (0x5B, 0x60), (0x7B, 0x7E)]
    for lo, hi in ((0xA1, 0xBF), (0x2010, 0x205E), (0x3001, 0x303F), (0xFF01, 0xFF65)):
        out.extend((cp, cp) for cp in range(lo, hi + 1) if unicodedata.category(chr(cp)).startswith("P"))
    return out


#: White space BERT's normalizer and pre-tokenizer drop (tab, space and the Zs characters).
_BERT_SPACE = [(0x09, 0x09), (0x20, 0x20), (0xA0, 0xA0), (0x1680, 0x1680), (0x2000, 0x200A), (0x202F, 0x202F),
               (0x205F, 0x205F), (0x3000, 0x3000)]
#: CJK ideographs BERT's ``handle_chinese_chars`` puts spaces around (the ranges of Unicode 3.1,
#: which every character table knows).
_BERT_CJK = [(0x3400, 0x4DB5), (0x4E00, 0x9FA5), (0xF900, 0xFA2D), (0x20000, 0x2A6D6)]
_ASCII_PUNCT_BYTES = bytes(range(0x21, 0x30)) + bytes(range(0x3A, 0x41)) + bytes(range(0x5B, 0x61)) + bytes(range(0x7B, 0x7F))


def _over(text: str, limit: int) -> bool:
    """Is ``text`` longer than ``limit`` bytes in UTF-8?"""
    n = len(text)
    return n > limit or (4 * n > limit and len(text.encode("utf-8", "surrogatepass")) > limit)


def _check_limit(name: str, value: object) -> int | None:
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise TrainingError(f"{name} must be a positive int or None, got {value!r}")
    return value


class LineSplitter:
    """Picklable ``line -> pieces``: a normalizer and a pre-tokenizer, rebuilt from their dicts in workers.

    ``line_independent`` says that normalizing and pre-tokenizing a block of
    lines at once gives the pieces of the lines one by one (BERT: character-wise
    normalization, whitespace always separates pieces). Blocks are then
    processed whole, which is several times faster than line by line.

    ``max_line_bytes``: lines longer than this many UTF-8 bytes are skipped
    (sentencepiece's ``max_sentence_length`` rule). ``max_word_bytes`` (only
    with ``line_independent``): runs of more than this many bytes that hold no
    break (line break, white space and, for BERT's pre-tokenizer, punctuation
    and CJK ideographs) are skipped. :meth:`count` returns how many were.

    SentencePiece's splitter (its normalizer, then a cut before every ``▁``) counts a
    batch of lines in one native call (``SpmNormalizer.count_lines``: normalize, cut and
    count without the GIL, about 6x the Python loop, which stays as its reference).
    """

    def __init__(self, normalizer: dict | None, pre_tokenizer: dict | None, line_independent: bool = False,
                 *, max_line_bytes: int | None = None, max_word_bytes: int | None = None,
                 line_ends: bool = False) -> None:
        self.normalizer_dict = normalizer
        self.pre_dict = pre_tokenizer
        self.line_independent = line_independent
        if line_ends and line_independent:
            raise TrainingError("line_ends needs line-by-line counting (line_independent=False)")
        #: also count how often each piece ends a line (:attr:`LineCounts.line_ends`)
        self.line_ends = line_ends
        self.max_line_bytes = _check_limit("max_line_bytes", max_line_bytes)
        self.max_word_bytes = _check_limit("max_word_bytes", max_word_bytes)
        if line_independent and self.max_line_bytes is not None:
            raise TrainingError("max_line_bytes needs line-by-line counting (line_independent=False)")
        if not line_independent and self.max_word_bytes is not None:
            raise TrainingError("max_word_bytes needs line_independent=True")
        self._norm = self._pre = None
        self._spm_native = None
        self._ready = False

    def __getstate__(self):
        return {"normalizer_dict": self.normalizer_dict, "pre_dict": self.pre_dict, "line_independent": self.line_independent,
                "max_line_bytes": self.max_line_bytes, "max_word_bytes": self.max_word_bytes, "line_ends": self.line_ends}

    def __setstate__(self, state):
        self.__init__(state["normalizer_dict"], state["pre_dict"], state.get("line_independent", False),
                      max_line_bytes=state.get("max_line_bytes"), max_word_bytes=state.get("max_word_bytes"),
                      line_ends=state.get("line_ends", False))

    # -- where text may be cut ------------------------------------------------------------
    def _bert(self) -> bool:
        return self.line_independent and (self.pre_dict or {}).get("type") == "BertPreTokenizer"

    def breaks(self) -> str:
        """The characters a cut may follow (as the inside of a regex character class): each
        one ends every piece, so text cut just after one counts as the whole does."""
        ranges = [(ord(c), ord(c)) for c in LINE_BREAKS]
        if self.line_independent:
            ranges += [(0x09, 0x09), (0x20, 0x20)]
        if self._bert():
            ranges += _BERT_SPACE + _bert_punctuation()
            norm = self.normalizer_dict or {}
            if norm.get("type") == "BertNormalizer" and norm.get("handle_chinese_chars", True):
                ranges += _BERT_CJK
        return _ranges_class(sorted(set(ranges)))

    def range_cut_bytes(self) -> bytes:
        """ASCII bytes a file range may end after (see :func:`plan_line_ranges`)."""
        if not self.line_independent:
            return b"\n"
        cut = b"\n\r\x0b\x0c\x1c\x1d\x1e\t "
        return cut + _ASCII_PUNCT_BYTES if self._bert() else cut

    def unit_limit(self) -> int | None:
        """The longest line (or word) kept, in bytes; None: no limit."""
        return self.max_word_bytes if self.line_independent else self.max_line_bytes

    def _build(self) -> None:
        from ..normalizers import normalizer_from_dict
        from ..pretokenizers import pre_tokenizer_from_dict

        self._norm = normalizer_from_dict(self.normalizer_dict)
        self._pre = pre_tokenizer_from_dict(self.pre_dict)
        self._spm_native = self._sentencepiece_native()
        cls = self.breaks()
        self._first_break = re.compile(f"[{cls}]")
        self._last_break = regex.compile(f"(?r)[{cls}]")
        self._long_run = None
        if self.line_independent and self.max_word_bytes is not None:
            # a run of more than N bytes has more than N // 4 characters; the look-behind
            # tries each run once, from its start (not again from every character inside it)
            self._min_run = self.max_word_bytes // 4 + 1
            self._long_run = re.compile(f"(?<![^{cls}])[^{cls}]{{{self._min_run},}}")
            self._ascii_breaks = np.zeros(128, dtype=bool)
            for c in range(128):
                self._ascii_breaks[c] = self._first_break.match(chr(c)) is not None
        self._ready = True

    def _sentencepiece_native(self):
        """The native normalizer when this splitter is sentencepiece's (its normalizer, then
        a cut before every ``▁``): a native ``WordCounter`` then normalizes, cuts and counts
        whole batches of lines without the GIL. None otherwise (and on the Python backend)."""
        from ..pretokenizers import Split
        from ..sentencepiece.constants import SPACE
        from ..sentencepiece.normalizer import SentencePieceNormalizer

        if self.line_independent or not isinstance(self._norm, SentencePieceNormalizer):
            return None
        if self.pre_dict != Split(SPACE, "merged_with_next", regex_pattern=False).to_dict():
            return None
        return self._norm.native_normalizer()

    def new_counter(self):
        """An empty native ``WordCounter`` for :meth:`count_into`, or None when this splitter
        does not count natively (then use :meth:`count`)."""
        if not self._ready:
            self._build()
        if self._spm_native is None:
            return None
        from .. import _native

        return _native.core().WordCounter()

    def count_into(self, counter, lines: list[str]) -> int:
        """:meth:`count` into a :meth:`new_counter` (line ends too, when this splitter counts
        them); returns how many lines were skipped for their length."""
        return counter.add_lines(self._spm_native, lines, self.max_line_bytes or 0, self.line_ends)

    def _drop_long_runs(self, block: str) -> tuple[str, int]:
        """``block`` without its runs longer than ``max_word_bytes``, and how many there were."""
        # Fast path: a long run lies between two ASCII breaks at least _min_run characters apart.
        cps = np.frombuffer(block.encode("utf-32-le", "surrogatepass"), dtype="<u4")
        at = np.flatnonzero((cps < 128) & self._ascii_breaks[cps & 127])
        del cps
        gap = len(block) if len(at) == 0 else max(int(at[0]), len(block) - 1 - int(at[-1]),
                                                   int(np.diff(at).max(initial=0)) - 1)
        if gap < self._min_run:
            return block, 0
        limit = self.max_word_bytes
        dropped = 0

        def keep(m: "re.Match[str]") -> str:
            nonlocal dropped
            if _over(m.group(), limit):
                dropped += 1
                return ""
            return m.group()

        return self._long_run.sub(keep, block), dropped

    def count(self, lines: Iterable[str], counts: Counter, ends: Counter | None = None) -> int:
        """Add the pieces of ``lines`` to ``counts`` (and, with ``ends``, the last piece of each
        line to ``ends``); returns how many lines (or words) were skipped for their length."""
        if not self._ready:
            self._build()
        norm, pre = self._norm, self._pre
        skipped = 0
        if self.line_independent and pre is not None:
            block = "\n".join(lines)
            if self._long_run is not None:
                block, skipped = self._drop_long_runs(block)
            if norm is not None:
                block = norm.normalize_str(block)
            _add(counts, Counter(pre.split(block)))
            return skipped
        if self._spm_native is not None:
            counter = self.new_counter()
            skipped = counter.add_lines(self._spm_native, lines if isinstance(lines, list) else list(lines),
                                        self.max_line_bytes or 0, ends is not None)
            words, line_ends = counter.to_dicts()
            _add(counts, words)
            if ends is not None:
                _add(ends, line_ends)
            return skipped
        return self._count_lines_py(lines, counts, ends)

    def _count_lines_py(self, lines: Iterable[str], counts: Counter, ends: Counter | None = None) -> int:
        """:meth:`count` line by line in Python (the reference of the native ``count_lines``)."""
        if not self._ready:
            self._build()
        norm, pre = self._norm, self._pre
        skipped = 0
        limit = self.max_line_bytes
        for line in lines:
            if limit is not None and _over(line, limit):
                skipped += 1
                continue
            if norm is not None:
                line = norm.normalize_str(line)
            if not line:
                continue
            if pre is None:
                counts[line] += 1
                if ends is not None:
                    ends[line] += 1
            else:
                pieces = pre.split(line)
                counts.update(pieces)
                if ends is not None and pieces:
                    ends[pieces[-1]] += 1
        return skipped


class _Carry:
    """Streamed text, cut just after its last break (see :meth:`LineSplitter.breaks`).

    :meth:`feed` returns the text before the cut, which ends with a whole line
    (or word); what follows the cut waits for the next block. When what waits
    grows past the splitter's limit, it is one line (or word) too long: it is
    dropped and so is everything up to the next break, and it counts as skipped.
    """

    def __init__(self, splitter: LineSplitter) -> None:
        if not splitter._ready:
            splitter._build()
        self.first = splitter._first_break
        self.last = splitter._last_break
        self.limit = splitter.unit_limit()
        self.rest = ""
        self.skipping = False
        self.skipped = 0

    def feed(self, text: str) -> str:
        if self.skipping:
            m = self.first.search(text)
            if m is None:
                return ""
            text = text[m.start() :]  # the break itself is kept: punctuation is a piece
            self.skipping = False
        m = self.last.search(text)
        if m is None:
            self.rest += text
            done = ""
        else:
            done = self.rest + text[: m.end()]
            self.rest = text[m.end() :]
        if self.limit is not None and _over(self.rest, self.limit):
            self.rest = ""
            self.skipping = True
            self.skipped += 1
        return done

    def finish(self) -> str:
        rest, self.rest, self.skipping = self.rest, "", False
        return rest


def _utf8_cut(data: bytes) -> int:
    """Where to cut ``data`` so that no UTF-8 sequence is split: before an unfinished last
    character (bytes that are not UTF-8 are cut anywhere; decoding reports them)."""
    n = len(data)
    for i in range(n - 1, max(n - 4, 0) - 1, -1):
        b = data[i]
        if b & 0xC0 != 0x80:
            need = 2 if b >> 5 == 0b110 else 3 if b >> 4 == 0b1110 else 4 if b >> 3 == 0b11110 else 1
            return n if i + need <= n else i
    return n


def _text_blocks(path: str, start: int, end: int, errors: str, block: int) -> Iterable[str]:
    """The text of a byte range, decoded a block of about ``block`` bytes at a time."""
    with open(path, "rb") as f:
        f.seek(start)
        pos = start
        pending = b""
        while pos < end:
            data = f.read(min(block, end - pos))
            if not data:
                break
            at = pos - len(pending)  # file offset of pending + data
            pos += len(data)
            data = pending + data if pending else data
            cut = _utf8_cut(data) if pos < end else len(data)
            pending = data[cut:]
            if cut:
                yield _decode_range(data[:cut], path, at, errors)
        if pending:
            yield _decode_range(pending, path, pos - len(pending), errors)


def plan_line_ranges(path: Path, chunk_bytes: int = CHUNK_BYTES, cut_bytes: bytes = b"\n") -> list[tuple[int, int]]:
    """Byte ranges of about ``chunk_bytes`` that each end just after one of ``cut_bytes``
    (ASCII; by default a newline) or at EOF. Finding the end reads a window at a time, so
    a long line costs no memory here."""
    size = path.stat().st_size
    find = regex.compile(b"[" + b"".join(regex.escape(bytes([c])) for c in cut_bytes) + b"]").search
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
                    m = find(block)
                    if m is not None:
                        end += m.end()
                        break
                    end += len(block)
            ranges.append((start, end))
            start = end
    return ranges


_MASK64 = (1 << 64) - 1


def count_file_lines(path: Path, block: int = CHUNK_BYTES) -> int:
    """The number of lines of a file: its newlines, plus one for a last line without one."""
    n = 0
    last = b"\n"
    with open(path, "rb") as f:
        while chunk := f.read(block):
            n += chunk.count(b"\n")
            last = chunk[-1:]
    return n + (last != b"\n")


class LineSample:
    """Which lines a sampled count keeps (sentencepiece's ``input_sentence_size``).

    Each line is kept with probability ``rate``, decided by a hash of the seed and the
    line's place in the input (file number, byte offset of its range, index in the range):
    the same lines for any worker count, and about ``rate`` times the lines in all. A
    Bernoulli sample instead of sentencepiece's reservoir keeps the count streaming.
    """

    def __init__(self, rate: float, seed: int) -> None:
        self.threshold = min(_MASK64, int(rate * 2.0**64))
        # the seed, spread over 64 bits (splitmix64 of it)
        self.key = int(_splitmix64(np.array([seed & _MASK64], dtype=np.uint64))[0])

    def keep(self, lines: list[str], file_no: int, start: int, first: int) -> list[str]:
        """The kept ones of ``lines``, which are lines ``first``, ``first + 1``, ... of the
        range that starts at byte ``start`` of file number ``file_no``. A range holds fewer
        lines than bytes, so ``(file_no << 44) + start + index`` names each line once."""
        if not lines:
            return lines
        at = np.arange(first, first + len(lines), dtype=np.uint64) + np.uint64((file_no << 44) + start)
        mask = _splitmix64(at ^ np.uint64(self.key)) < np.uint64(self.threshold)
        return list(compress(lines, mask.tolist()))


#: splitmix64's multipliers (Steele, Lea & Flood, 2014), in decimal
_SPLITMIX = (11400714819323198485, 13787848793156543929, 10723151780598845931)


def _splitmix64(x: np.ndarray) -> np.ndarray:
    """splitmix64's output function on uint64 (wrapping arithmetic)."""
    golden, m1, m2 = (np.uint64(c) for c in _SPLITMIX)
    with np.errstate(over="ignore"):
        z = x * golden
        z = (z ^ (z >> np.uint64(30))) * m1
        z = (z ^ (z >> np.uint64(27))) * m2
        return z ^ (z >> np.uint64(31))


def _count_line_range(args) -> tuple[Counter | bytes, int, int, Counter | None]:
    """The counts of one file range: Counters, or (a splitter that counts natively) the
    bytes of a native ``WordCounter`` holding the line ends too, for a parent one to merge."""
    path, start, end, splitter, errors, block, *rest = args
    sample: LineSample | None = rest[0] if rest else None
    file_no = rest[1] if rest else 0
    seen = 0
    counter = splitter.new_counter()
    counts: Counter = Counter()
    ends: Counter | None = Counter() if splitter.line_ends and counter is None else None
    carry = _Carry(splitter)
    skipped = 0

    def count(lines: list[str]) -> int:
        nonlocal seen
        if sample is not None:
            seen += len(lines)
            lines = sample.keep(lines, file_no, start, seen - len(lines))
        return splitter.count(lines, counts, ends) if counter is None else splitter.count_into(counter, lines)

    for text in _text_blocks(path, start, end, errors, block):
        done = carry.feed(text)
        if done:
            skipped += count(done.splitlines())
    rest = carry.finish()
    if rest:
        skipped += count(rest.splitlines())
    return (counts if counter is None else counter.pack()), end - start, skipped + carry.skipped, ends


class LineCounts(Counter):
    """The piece counts of :func:`count_lines`, in ``skipped`` how many lines (or words) were
    left out for their length, and in ``line_ends`` (when the splitter counts them) how many
    times each piece ended a line."""

    skipped: int = 0
    line_ends: Counter | None = None


def count_lines(
    sources: Iterable[str | os.PathLike] | None,
    splitter: LineSplitter,
    *,
    iterator: Iterable[str] | None = None,
    workers: int | None = None,
    errors: str = "strict",
    progress: Callable[[int], None] | None = None,
    chunk_bytes: int = CHUNK_BYTES,
    sample_lines: int = 0,
    sample_seed: int = 0,
) -> LineCounts:
    """Count the pipeline pieces of every line of the files ``sources`` (in
    worker processes) and of the strings of ``iterator`` (each string is split
    into lines too). The result does not depend on the number of workers or
    on ``chunk_bytes``; memory is bounded by ``chunk_bytes`` per worker, whatever
    the length of the lines (see the comment above :data:`LINE_BREAKS`).

    ``sample_lines`` (files only): when the files hold more lines than this, count
    about this many of them, sampled uniformly (:class:`LineSample`, seeded by
    ``sample_seed``); the result then depends on ``chunk_bytes`` too. 0 counts every line."""
    chunk_bytes = chunk_bytes or CHUNK_BYTES
    if errors not in _ERRORS:
        raise TrainingError(f"errors must be one of {', '.join(_ERRORS)}, got {errors!r}")
    if not isinstance(sample_lines, int) or isinstance(sample_lines, bool) or sample_lines < 0:
        raise TrainingError(f"input_sentence_size must be an int >= 0 (0: every line), got {sample_lines!r}")
    if sample_lines and iterator is not None:
        raise TrainingError("input_sentence_size samples the lines of files; with an iterator, sample the texts "
                            "before passing them")
    total = LineCounts()
    if splitter.line_ends:
        total.line_ends = Counter()
    ends = total.line_ends
    skipped = [0]
    if iterator is not None:
        batch: list[str] = []
        size = 0
        for n, text in enumerate(iterator):
            if not isinstance(text, str):
                raise TrainingError(f"training texts must be str; item {n} is {type(text).__name__}")
            batch.extend(text.splitlines())
            size += len(text)
            if size >= chunk_bytes:
                skipped[0] += splitter.count(batch, total, ends)
                if progress:
                    progress(size)
                batch, size = [], 0
        skipped[0] += splitter.count(batch, total, ends)
        if progress and size:
            progress(size)
    tasks = []
    cut = splitter.range_cut_bytes()
    paths = []
    for raw in sources or ():
        path = Path(raw)
        if not path.is_file():
            raise TokenizerFileNotFoundError(f"{path}: no such file" if not path.exists() else f"{path}: not a regular file")
        paths.append(path)
    sample = None
    if sample_lines:
        n_lines = sum(count_file_lines(p) for p in paths)
        if n_lines > sample_lines:
            sample = LineSample(sample_lines / n_lines, sample_seed)
    for file_no, path in enumerate(paths):
        tasks.extend((str(path), s, e, splitter, errors, chunk_bytes, sample, file_no)
                     for s, e in plan_line_ranges(path, chunk_bytes, cut))
    if workers is None:
        workers = os.cpu_count() or 1
    small = sum(t[2] - t[1] for t in tasks) < _IN_PROCESS_BYTES  # not worth starting processes
    counter = splitter.new_counter() if tasks else None  # the ranges' native counts merge here
    into = total if counter is None else counter
    if workers <= 1 or len(tasks) <= 1 or small:
        for t in tasks:
            counts, n, k, range_ends = _count_line_range(t)
            _add(into, counts)
            if ends is not None and range_ends is not None:
                _add(ends, range_ends)
            skipped[0] += k
            if progress:
                progress(n)
    else:
        _run_pool(_count_line_range, tasks, workers, into, progress, skipped, ends)
    if counter is not None:
        words, line_ends = counter.to_dicts()
        del counter
        _add(total, words)
        if ends is not None:
            _add(ends, line_ends)
    total.skipped = skipped[0]
    return total

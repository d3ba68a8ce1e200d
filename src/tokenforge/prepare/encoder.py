"""Documents to ids, in input order, on every core: the local engine.

Readers (``sources``) run in a background thread and hand chunks of a few MB
through a bounded queue; chunks are gathered into batches and encoded while
the next batch is read and the previous one is written. Tokenizers whose
plan encodes natively (byte-level BPE with a named pattern, SentencePiece
models) encode each batch on ``workers`` native threads with the GIL released:
no process, no copy of the text. Tokenizers that run Python stages use a pool
of ``workers`` processes, each holding one copy of the tokenizer. Either way
batches come back in input order, so the output does not depend on the
number of workers.

Long documents arrive as segments (see :mod:`.sources`); :func:`encodable`
cuts them where the tokenizer's split pattern proves a cut changes no id, or
keeps them whole for tokenizers where no cut is provable.
"""

from __future__ import annotations

import collections
import queue
import threading
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator

from .._lazy import np
from ..errors import PrepareError

from .sources import FIRST, LAST, WHOLE, Chunk, ReadOptions, Source, Unit, read_unit

#: Characters of text per encode call.
BATCH_CHARS = 8 << 20
#: The cutter is tried again once the held text has grown by this factor.
_CUT_GROWTH = 2


@dataclass
class Encoded:
    """One encoded batch: per item its source, flags, split and token count; the ids flat."""

    first_item: int  # global index of the first item
    source: np.ndarray  # int32
    flags: np.ndarray  # uint8 (FIRST | LAST)
    val: np.ndarray  # bool
    lengths: np.ndarray  # int64
    ids: np.ndarray  # uint32
    text_bytes: np.ndarray | None  # int64 UTF-8 bytes per item (when asked for)
    nbytes: int  # raw input bytes consumed
    empty: dict[int, int]  # source -> empty documents skipped

    @property
    def n_items(self) -> int:
        return len(self.flags)


def encodable(chunks: Iterable[Chunk], cutter: Callable[[str], int] | None) -> Iterator[Chunk]:
    """``chunks`` with the segments of long documents regrouped into items that can be
    encoded on their own: cut where ``cutter`` proves it safe, else whole."""
    held = ""
    held_first = False
    held_val = False
    next_try = 0
    for chunk in chunks:
        if all(f == WHOLE for f in chunk.flags):
            yield chunk
            continue
        out = Chunk(chunk.source, nbytes=chunk.nbytes, empty=chunk.empty)
        for text, flags, val in zip(chunk.texts, chunk.flags, chunk.val):
            if flags == WHOLE:
                out.add(text, WHOLE, bool(val))
                continue
            if flags & FIRST:
                held, held_first, held_val, next_try = text, True, bool(val), len(text)
            else:
                held += text
            if flags & LAST:
                out.add(held, (FIRST if held_first else 0) | LAST, held_val)
                held = ""
                continue
            if cutter is not None and len(held) >= next_try:
                cut = cutter(held)
                if cut:
                    out.add(held[:cut], FIRST if held_first else 0, held_val)
                    held_first = False
                    held = held[cut:]
                next_try = _CUT_GROWTH * len(held)
        yield out


# -- encoding one batch (in a thread, or in a worker process) ---------------------

_WORKER_TOKENIZER: Any = None


def _init_worker(tok: Any) -> None:
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C
    global _WORKER_TOKENIZER
    _WORKER_TOKENIZER = tok


def utf8_lengths(texts: list[str]) -> np.ndarray:
    return np.fromiter(
        (len(t) if t.isascii() else len(t.encode("utf-8", "surrogatepass")) for t in texts),
        dtype=np.int64, count=len(texts),
    )


def encode_texts(tok: Any, texts: list[str], threads: int, want_bytes: bool = False):
    """``(ids, lengths, text_bytes)`` of ordinary text: special-token strings are text."""
    ids, offsets = tok.encode_batch_to_numpy(
        texts, num_threads=threads, disallowed_special=(), add_special_tokens=False
    )
    return (
        np.ascontiguousarray(ids, dtype=np.uint32),
        np.diff(offsets).astype(np.int64),
        utf8_lengths(texts) if want_bytes else None,
    )


def _encode_in_worker(texts: list[str], want_bytes: bool):
    return encode_texts(_WORKER_TOKENIZER, texts, 1, want_bytes)


# -- the local engine -----------------------------------------------------------------


class _Batch:
    __slots__ = ("first_item", "source", "flags", "val", "texts", "nbytes", "empty", "chars")

    def __init__(self, first_item: int) -> None:
        self.first_item = first_item
        self.source: list[int] = []
        self.flags = bytearray()
        self.val = bytearray()
        self.texts: list[str] = []
        self.nbytes = 0
        self.empty: dict[int, int] = {}
        self.chars = 0

    def add(self, c: Chunk) -> None:
        self.nbytes += c.nbytes
        if c.empty:
            self.empty[c.source] = self.empty.get(c.source, 0) + c.empty
        self.source.extend([c.source] * len(c.texts))
        self.flags += c.flags
        self.val += c.val
        self.texts.extend(c.texts)
        self.chars += c.chars


class LocalEngine:
    """Encodes units in order on this machine: native threads or worker processes."""

    def __init__(self, tok: Any, workers: int, *, want_bytes: bool = False, batch_chars: int | None = None) -> None:
        self.tok = tok
        self.workers = workers
        self.want_bytes = want_bytes
        self.batch_chars = batch_chars or BATCH_CHARS
        self.threaded = bool(tok.threaded_batches) or workers <= 1

    def run(self, sources: list[Source], units: list[Unit], opts: ReadOptions, skip_before: int = 0) -> Iterator[Encoded]:
        """Encoded batches in input order. Items whose global index is below
        ``skip_before`` are read and counted but not encoded."""
        stop = threading.Event()
        q: queue.Queue = queue.Queue(maxsize=4)
        cutter = self.tok.stream_cutter()
        reader = threading.Thread(
            target=_read_all, args=(sources, units, opts, cutter, q, stop), name="tokenforge-reader", daemon=True
        )
        executor: Executor
        if self.threaded:
            executor = ThreadPoolExecutor(1, thread_name_prefix="tokenforge-encode")
            in_flight = 2
        else:
            import multiprocessing as mp
            from concurrent.futures import ProcessPoolExecutor

            executor = ProcessPoolExecutor(
                self.workers, mp_context=mp.get_context("spawn"), initializer=_init_worker, initargs=(self.tok,)
            )
            in_flight = self.workers + 1
        pending: collections.deque[tuple[_Batch, Future]] = collections.deque()
        reader.start()
        try:
            seen = 0  # global index of the next item read
            batch = _Batch(0)
            done = False
            while not done:
                item = q.get()
                if isinstance(item, BaseException):
                    raise item
                if item is None:
                    done = True
                else:
                    n = len(item.texts)
                    if seen + n <= skip_before and skip_before:  # written before: only progress
                        seen += n
                        batch.nbytes += item.nbytes
                        batch.first_item = seen
                        continue
                    if seen < skip_before:
                        raise PrepareError(
                            "cannot resume: the checkpoint does not fall between two chunks of the input"
                        )
                    seen += n
                    batch.add(item)
                    if batch.chars < self.batch_chars:
                        continue
                pending.append((batch, self._submit(executor, batch)))
                batch = _Batch(seen)
                while pending and (len(pending) >= in_flight or done):
                    yield self._collect(*pending.popleft())
        finally:
            stop.set()
            for _b, fut in pending:
                fut.cancel()
            executor.shutdown(wait=True, cancel_futures=True)
            while reader.is_alive():  # unblock a reader waiting on a full queue
                try:
                    q.get_nowait()
                except queue.Empty:
                    reader.join(0.05)

    def _submit(self, executor: Executor, batch: _Batch) -> Future:
        if not batch.texts:
            fut: Future = Future()
            fut.set_result((np.zeros(0, np.uint32), np.zeros(0, np.int64),
                            np.zeros(0, np.int64) if self.want_bytes else None))
            return fut
        if self.threaded:
            return executor.submit(encode_texts, self.tok, batch.texts, self.workers, self.want_bytes)
        return executor.submit(_encode_in_worker, batch.texts, self.want_bytes)

    @staticmethod
    def _collect(batch: _Batch, fut: Future) -> Encoded:
        from concurrent.futures.process import BrokenProcessPool

        try:
            ids, lengths, text_bytes = fut.result()
        except BrokenProcessPool:
            raise PrepareError("a worker process died while encoding (out of memory?); "
                               "complete shards are kept, run again with resume") from None
        return Encoded(
            first_item=batch.first_item,
            source=np.asarray(batch.source, dtype=np.int32),
            flags=np.frombuffer(bytes(batch.flags), dtype=np.uint8),
            val=np.frombuffer(bytes(batch.val), dtype=np.uint8).astype(bool),
            lengths=lengths,
            ids=ids,
            text_bytes=text_bytes,
            nbytes=batch.nbytes,
            empty=batch.empty,
        )


def _read_all(sources, units, opts, cutter, q: queue.Queue, stop: threading.Event) -> None:
    def put(x) -> bool:
        while not stop.is_set():
            try:
                q.put(x, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    try:
        for unit in units:
            for chunk in encodable(read_unit(sources, unit, opts), cutter):
                if not put(chunk):
                    return
        put(None)
    except BaseException as exc:  # handed to the consumer, which raises it
        put(exc)

"""The output of ``prepare``: token shards, document offsets, the index, and resumption.

Layout of ``OUTDIR``::

    index.json              what is here (written last, atomically)
    train-00000.bin ...     raw little-endian uint16 (uint32 for vocabularies over 65,536)
    train.docs.npy          int64: document k is tokens [docs[k], docs[k+1]) of the split
    val-00000.bin ...       the validation split, when asked for
    val.docs.npy
    megatron/ llmc/ ...     the other training formats asked for (see :mod:`.formats`)

A shard holds exactly ``shard_tokens`` tokens (the last one fewer): a shard
boundary may fall inside a document, and ``np.memmap`` of one shard is a
plain token stream as nanoGPT and CS336 read it. Each shard is written to a
temporary file and renamed when it is complete, then a checkpoint for it is
written to ``OUTDIR/.partial/``: where in the input stream the shard ends,
the document starts it holds and the per-input counts so far. An interrupted
run leaves complete shards and their checkpoints, never a partial shard
under a final name, and no ``index.json``; ``resume`` starts again from the
last checkpoint and gives the same bytes as an uninterrupted run.

While a run writes, it holds an exclusive lock (``flock``) on ``OUTDIR/.lock``,
so a second run into the same folder (two ``overwrite`` runs racing, say)
stops with an error instead of deleting or mixing the first one's files.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import Any, Iterator

from .._lazy import np
from .._io import atomic_write
from ..errors import PrepareError

PARTIAL = ".partial"
JOURNAL = "journal.json"
INDEX = "index.json"
LOCK = ".lock"
FORMAT = "tokenforge-tokens"
#: 2: each split records ``doc_offsets_sha256`` (1: shards only); both are read.
FORMAT_VERSION = 2


def shard_name(split: str, k: int) -> str:
    return f"{split}-{k:05d}.bin"


def member_path(directory: Path, name: Any, listed_in: Path) -> Path:
    """``directory / name`` for a file name read from an index or journal, refused unless
    it stays inside ``directory``: a relative path without ``..``, drive or backslash
    (an index from elsewhere must not make a reader open, or a writer trust, any other file)."""
    from pathlib import PurePosixPath, PureWindowsPath

    from ..errors import FileFormatError

    ok = isinstance(name, str) and name not in ("", ".") and "\\" not in name and "\0" not in name
    if ok:
        posix, windows = PurePosixPath(name), PureWindowsPath(name)
        ok = not (posix.is_absolute() or windows.is_absolute() or windows.drive or windows.root
                  or ".." in posix.parts)
    if not ok:
        raise FileFormatError(
            f"file name {name!r} does not stay inside {directory} (an absolute path or one with '..'); "
            "an index lists only files of its own folder", path=listed_in,
        )
    return directory / name


@contextlib.contextmanager
def locked(out: Path) -> Iterator[None]:
    """Hold the lock of the output folder ``out`` for the block, or raise
    :class:`PrepareError` at once if another run holds it. The lock file is removed
    on the way out; a lock file that was replaced while this run waited for it is
    not trusted (the lock is taken again on the file that is there)."""
    path = out / LOCK
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise PrepareError(f"{out}: cannot write in this folder ({exc.strerror or exc})") from None
        try:
            _lock_fd(fd)
        except BlockingIOError:
            os.close(fd)
            raise PrepareError(f"{out}: another prepare is writing in this folder (it holds the lock on {path}); "
                               "wait for it to end, or choose another output folder") from None
        except BaseException:
            os.close(fd)
            raise
        try:
            if os.path.samestat(os.fstat(fd), os.stat(path)):
                break
        except FileNotFoundError:
            pass
        os.close(fd)  # the file was removed by the run that held it: lock the new one
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            os.unlink(path)  # while still locked, so no run can lock the file being removed
        os.close(fd)


def _lock_fd(fd: int) -> None:
    """An exclusive lock on ``fd`` without waiting (``BlockingIOError`` if it is held)."""
    try:
        import fcntl
    except ImportError:  # Windows: a lock on the file's first byte
        import msvcrt

        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            raise BlockingIOError from None
        return
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)


def write_json_atomic(path: Path, obj: Any) -> None:
    with atomic_write(path) as f:
        json.dump(obj, f, ensure_ascii=False, indent=1, sort_keys=False)
        f.write("\n")


class SplitWriter:
    """Appends the token stream of one split to fixed-size shards.

    ``write(tokens, item_index, item_len, doc_start)`` takes the tokens of
    consecutive items (documents or parts of them, separators included) in
    stream order. ``skip`` = (next_item, tokens) resumes after a checkpoint:
    items before ``next_item`` and the first ``tokens`` tokens of that item are
    already in complete shards.
    """

    def __init__(self, out: Path, split: str, dtype: np.dtype, shard_tokens: int, state: dict | None = None) -> None:
        self.out = out
        self.split = split
        self.dtype = np.dtype(dtype)
        self.shard_tokens = shard_tokens
        self.partial = out / PARTIAL
        self.shards: list[dict[str, Any]] = []
        self.tokens = 0  # tokens in complete shards + the open one
        self.documents = 0
        self._closed_documents = 0  # documents starting in complete shards
        self._mark = (0, 0)  # where the last complete shard ends: (item, tokens of it written)
        self._resume: tuple[int, int] | None = None
        if state:
            self.shards = list(state["shards"])
            self.tokens = sum(s["tokens"] for s in self.shards)
            self.documents = self._closed_documents = state["documents"]
            self._mark = (state["next_item"], state["skip_tokens"])
            self._resume = self._mark
        self._f: Any = None
        self._docs_f: Any = None
        # temporary paths of the open shard, set before the files are created so that an
        # interrupt arriving inside open() still leaves abort() something to remove
        self._tmp: Path | None = None
        self._docs_tmp: Path | None = None
        self._hash: Any = None
        self._cur = 0  # tokens in the open shard

    # -- writing ------------------------------------------------------------------
    def _open(self) -> None:
        k = len(self.shards)
        self._tmp = self.out / f".{shard_name(self.split, k)}.tmp"
        self._docs_tmp = self.partial / f".{self.split}-{k:05d}.docs.tmp"
        try:
            self._f = open(self._tmp, "wb")
            self._docs_f = open(self._docs_tmp, "wb")
        except OSError as exc:
            raise PrepareError(f"{self.out / shard_name(self.split, k)}: cannot write ({exc.strerror or exc})") from None
        self._hash = hashlib.sha256()
        self._cur = 0

    def write(self, tokens: np.ndarray, items: np.ndarray, item_len: np.ndarray, doc_start: np.ndarray,
              on_shard: Any = None) -> None:
        """Append; ``items``/``item_len``/``doc_start`` describe each item (global index,
        tokens in ``tokens``, whether a document starts with it). ``on_shard(writer)`` is
        called after each shard completes (to checkpoint)."""
        if self._resume is not None:
            tokens, items, item_len, doc_start = self._apply_skip(tokens, items, item_len, doc_start)
        if len(items) == 0:
            return
        ends = np.cumsum(item_len)
        starts = ends - item_len
        doc_pos = starts[doc_start.astype(bool) & (item_len > 0)]
        pos = 0
        n = len(tokens)
        while pos < n:
            if self._f is None:
                self._open()
            take = min(self.shard_tokens - self._cur, n - pos)
            part = tokens[pos : pos + take]
            data = part.astype(self.dtype, copy=False).astype(self.dtype.newbyteorder("<"), copy=False)
            mv = memoryview(np.ascontiguousarray(data)).cast("B")
            try:
                self._f.write(mv)
            except OSError as exc:
                raise PrepareError(f"{self.out / shard_name(self.split, len(self.shards))}: cannot write ({exc.strerror})") from None
            self._hash.update(mv)
            lo, hi = np.searchsorted(doc_pos, [pos, pos + take])
            if hi > lo:
                try:
                    self._docs_f.write((doc_pos[lo:hi] - pos + self.tokens).astype("<i8").tobytes())
                except OSError as exc:
                    raise PrepareError(f"{self._docs_tmp}: cannot write ({exc.strerror or exc})") from None
                self.documents += int(hi - lo)
            self._cur += take
            self.tokens += take
            pos += take
            if self._cur == self.shard_tokens:
                # where the stream stands: the item holding token `pos`, and how much of it is written
                j = int(np.searchsorted(ends, pos, side="right"))
                if j < len(items):
                    self._mark = (int(items[j]), int(pos - starts[j]))
                else:
                    self._mark = (int(items[-1]) + 1, 0)
                self._close_shard()
                if on_shard is not None:
                    on_shard(self)

    def _apply_skip(self, tokens, items, item_len, doc_start):
        skip_item, skip_tokens = self._resume
        keep = items >= skip_item
        if not keep.any():
            return tokens[:0], items[:0], item_len[:0], doc_start[:0]
        first = int(np.argmax(keep))
        ends = np.cumsum(item_len)
        start_tok = int(ends[first - 1]) if first else 0
        items, item_len, doc_start = items[first:].copy(), item_len[first:].copy(), doc_start[first:].copy()
        tokens = tokens[start_tok:]
        if items[0] == skip_item and skip_tokens:
            tokens = tokens[skip_tokens:]
            item_len[0] -= skip_tokens
            doc_start[0] = False  # its document start is in an earlier shard
        self._resume = None
        return tokens, items, item_len, doc_start

    def _close_shard(self) -> None:
        name = shard_name(self.split, len(self.shards))
        try:
            self._f.flush()
            os.fsync(self._f.fileno())
            self._f.close()
            self._docs_f.close()
            os.replace(self._tmp, self.out / name)
            os.replace(self._docs_tmp, self.partial / f"{self.split}-{len(self.shards):05d}.docs")
        except OSError as exc:
            raise PrepareError(f"{self.out / name}: cannot write ({exc.strerror})") from None
        self._tmp = self._docs_tmp = None
        self.shards.append({"file": name, "tokens": self._cur, "sha256": self._hash.hexdigest()})
        self._closed_documents = self.documents
        self._f = self._docs_f = None
        self._cur = 0

    def finish(self) -> None:
        """Close the last shard (if it holds tokens)."""
        if self._f is not None:
            if self._cur:
                self._close_shard()
            else:
                self.abort()

    def abort(self) -> None:
        """Remove the open shard's temporary files (complete shards stay)."""
        for f in (self._f, self._docs_f):
            if f is not None:
                with contextlib.suppress(OSError):
                    f.close()
        for p in (self._tmp, self._docs_tmp):
            if p is not None:
                with contextlib.suppress(OSError):
                    os.unlink(p)
        self._f = self._docs_f = None
        self._tmp = self._docs_tmp = None

    # -- checkpoint and final files -------------------------------------------------
    def state(self) -> dict[str, Any]:
        return {
            "shards": self.shards,
            "documents": self._closed_documents,
            "next_item": self._mark[0],
            "skip_tokens": self._mark[1],
        }

    def write_doc_offsets(self) -> str:
        """``{split}.docs.npy``: the document starts plus the total, streamed from the
        per-shard files."""
        name = f"{self.split}.docs.npy"
        final = self.out / name
        tmp = self.out / f".{name}.tmp"
        try:
            arr = np.lib.format.open_memmap(tmp, mode="w+", dtype="<i8", shape=(self.documents + 1,))
            pos = 0
            for k in range(len(self.shards)):
                part = np.fromfile(self.partial / f"{self.split}-{k:05d}.docs", dtype="<i8")
                arr[pos : pos + len(part)] = part
                pos += len(part)
            if pos != self.documents:
                raise PrepareError(
                    f"{self.partial}: document offsets of {self.split} hold {pos} entries, expected {self.documents}"
                )
            arr[pos] = self.tokens
            arr.flush()
            del arr
            os.replace(tmp, final)
        except BaseException as exc:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            if isinstance(exc, OSError) and not isinstance(exc, PrepareError):
                raise PrepareError(f"{final}: cannot write ({exc.strerror or exc})") from None
            raise
        return name


def remove_partial(out: Path) -> None:
    shutil.rmtree(out / PARTIAL, ignore_errors=True)


def clean_temporaries(out: Path) -> None:
    """Remove temporary files a killed run left behind."""
    from .formats import clean_staging

    for p in list(out.glob(".*.tmp")) + list((out / PARTIAL).glob(".*.tmp")):
        if p.is_file():
            with contextlib.suppress(OSError):
                p.unlink()
    clean_staging(out)


def prepared_files(out: Path) -> list[Path]:
    """Files of a previous prepare in ``out`` (shards, offsets, index, checkpoints, the
    folders of the other training formats)."""
    from .formats import EXPORTS

    found = [p for p in out.iterdir() if p.name == INDEX or p.name.endswith(".docs.npy")
             or (p.suffix == ".bin" and p.name.split("-")[0] in ("train", "val"))
             or (p.name in EXPORTS and p.is_dir())]
    if (out / PARTIAL).exists():
        found.append(out / PARTIAL)
    return found

"""Training-array formats: the prepared token stream as training stacks read it.

``prepare(..., formats=[...])`` writes, from the token shards and document
offsets of each split (streamed, never loaded whole), one folder per format
in the output folder:

``megatron/``
    Megatron-Core / NeMo ``IndexedDataset`` (``megatron/core/datasets/indexed_dataset.py``):
    ``{split}_text_document.bin`` (the tokens, ``uint16``, or ``int32`` past 65,535 as
    Megatron's ``optimal_dtype`` picks) and ``{split}_text_document.idx``: ``b"MMIDIDX\\x00\\x00"``,
    version 1 (``<Q``), the dtype code (``<B``: 8 ``uint16``, 4 ``int32``), the sequence
    count and the document count (``<Q``), then the sequence lengths (``int32``), the
    sequence byte pointers (``int64``) and the document indices (``int64``, one more
    than the documents). One sequence per document, separators included.
``llmc/``
    llm.c / modded-nanoGPT shards (llm.c ``dev/data/data_common.py`` ``write_datafile``):
    a header of 256 ``int32`` (magic 20240520 and version 1 for ``uint16`` tokens, magic
    20240801 and version 7 for ``uint32``; then the token count) and the tokens.
    ``{split}_{k:06d}.bin``, each of at most ``shard_tokens`` tokens (and below 2**31, the
    header's limit). As llm.c's ``fineweb.py``, the end-of-text separator comes *before*
    each document: where the job puts only an end-of-document separator, the stream is
    that separator followed by the job's stream less its last separator (the same ids,
    the first separator moved to the front).
``nanogpt/``
    nanoGPT's ``train.bin`` / ``val.bin``: the flat stream, ``uint16`` (``uint32`` when the
    vocabulary needs it: read it with ``np.memmap(path, dtype=np.uint32)`` then, as
    nanoGPT's ``train.py`` hard-codes ``np.uint16``), and ``meta.pkl`` with ``vocab_size``,
    which nanoGPT's ``train.py`` reads to size the model.
``datatrove/``
    datatrove's ``DocumentTokenizer`` output (``datatrove/pipeline/tokens/tokenizer.py``,
    ``TokenizedFile``), one folder per split as ``DatatroveFolderDataset`` reads a folder:
    ``{split}/{k:05d}_tokens.ds`` (``uint16``, or ``uint32``: datatrove's ``token_size`` 4),
    ``.ds.index`` (``uint64``: the end of each document in the file, in tokens) and
    ``.ds.metadata`` (tokenizer name and token size, token count). Files end at a
    document end, the first one at or past ``shard_tokens``, as ``max_tokens_per_file`` does.

Each format is written into a temporary folder and renamed into place when complete.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Iterable, Iterator

from .._lazy import np
from ..errors import InvalidArgumentError, PrepareError

#: The formats ``prepare`` writes; ``tokenforge`` is its own shards + ``index.json``.
FORMATS = ("tokenforge", "megatron", "llmc", "nanogpt", "datatrove")
#: The formats written from the tokenforge shards, each into the folder of its name.
EXPORTS = FORMATS[1:]

#: Tokens read from the shards at a time.
CHUNK_TOKENS = 1 << 22

MEGATRON_HEADER = b"MMIDIDX\x00\x00"
MEGATRON_DTYPE_CODES = {"uint16": 8, "int32": 4}
LLMC_HEADERS = {"uint16": (20240520, 1), "uint32": (20240801, 7)}
LLMC_MAX_TOKENS = 2**31 - 1


def parse_formats(formats: str | Iterable[str] | None) -> tuple[str, ...]:
    """The formats asked for, in :data:`FORMATS` order, from names, comma lists, or None (tokenforge)."""
    if formats is None:
        return ("tokenforge",)
    items = [formats] if isinstance(formats, str) else list(formats)
    names: set[str] = set()
    for item in items:
        if not isinstance(item, str):
            raise InvalidArgumentError(f"formats must be format names (str), got {item!r}")
        names.update(n.strip().lower() for n in item.split(",") if n.strip())
    unknown = sorted(names - set(FORMATS))
    if unknown:
        raise InvalidArgumentError(f"unknown format(s) {', '.join(map(repr, unknown))}; choose from {', '.join(FORMATS)}")
    if not names:
        raise InvalidArgumentError(f"formats is empty; choose from {', '.join(FORMATS)}")
    return tuple(f for f in FORMATS if f in names)


@dataclass
class SplitStream:
    """The token stream of one split: its shard files, dtype and document offsets."""

    name: str
    shards: list[Path]
    dtype: Any
    offsets: Any  # int64 array (memmap): document k is tokens [offsets[k], offsets[k+1])
    _ends: Any = field(default=None, init=False, repr=False)  # where each shard ends in the stream

    @property
    def tokens(self) -> int:
        return int(self.offsets[-1]) if len(self.offsets) else 0

    @property
    def documents(self) -> int:
        return max(len(self.offsets) - 1, 0)

    def offset_range(self, a: int, b: int) -> Any:
        """``offsets[a:b]`` as int64, read from the file when the offsets are memory-mapped
        (a sequential pass over them leaves no mapped pages resident)."""
        path = getattr(self.offsets, "filename", None)
        if path is None:
            return np.asarray(self.offsets[a:b], dtype=np.int64)
        b = min(b, len(self.offsets))
        with open(path, "rb") as f:
            f.seek(self.offsets.offset + a * self.offsets.dtype.itemsize)
            return np.fromfile(f, dtype=self.offsets.dtype, count=max(b - a, 0)).astype(np.int64)

    def chunks(self, start: int = 0, stop: int | None = None) -> Iterator[Any]:
        """Tokens [start, stop) of the stream, in chunks of at most :data:`CHUNK_TOKENS`."""
        stop = self.tokens if stop is None else stop
        if self._ends is None:
            self._ends = np.cumsum([p.stat().st_size // self.dtype.itemsize for p in self.shards], dtype=np.int64)
        k = int(np.searchsorted(self._ends, start, side="right"))  # the shard holding token `start`
        while k < len(self.shards) and start < stop:
            end = int(self._ends[k])
            base = int(self._ends[k - 1]) if k else 0  # the shard's first token in the stream
            hi = min(stop, end)
            with open(self.shards[k], "rb") as f:  # read, not mapped: the pages read do not stay resident
                f.seek((start - base) * self.dtype.itemsize)
                for a in range(start, hi, CHUNK_TOKENS):
                    n = min(a + CHUNK_TOKENS, hi) - a
                    part = np.fromfile(f, dtype=self.dtype, count=n)
                    if len(part) != n:
                        raise PrepareError(f"{self.shards[k]}: shorter than its index says (a shard changed "
                                           "while the formats were written)")
                    yield part
            start, k = hi, k + 1


def _write_chunks(f: BinaryIO, chunks: Iterable[Any], dtype: Any) -> int:
    n = 0
    for c in chunks:
        f.write(np.ascontiguousarray(c, dtype=dtype).tobytes())
        n += len(c)
    return n


def _fsync_close(f: BinaryIO) -> None:
    f.flush()
    os.fsync(f.fileno())
    f.close()


# ---------------------------------------------------------------------------
# The formats
# ---------------------------------------------------------------------------


def _megatron(folder: Path, s: SplitStream, ctx: dict[str, Any]) -> None:
    dtype = np.dtype("<u2") if s.dtype.itemsize == 2 else np.dtype("<i4")
    if ctx["max_token_value"] > np.iinfo(dtype).max:
        raise PrepareError(f"the megatron format stores ids as {dtype.name}; this vocabulary's ids go to "
                           f"{ctx['max_token_value']:,}")
    stem = folder / f"{s.name}_text_document"
    with open(stem.with_suffix(".bin"), "wb") as f:
        _write_chunks(f, s.chunks(), dtype)
        _fsync_close(f)
    n = s.documents
    with open(stem.with_suffix(".idx"), "wb") as f:
        f.write(MEGATRON_HEADER)
        f.write(np.array([1], dtype="<u8").tobytes())
        f.write(np.array([MEGATRON_DTYPE_CODES[dtype.name]], dtype="<u1").tobytes())
        f.write(np.array([n, n + 1], dtype="<u8").tobytes())
        for a in range(0, n, CHUNK_TOKENS):  # sequence lengths, then pointers, then document indices
            part = np.diff(s.offset_range(a, min(a + CHUNK_TOKENS, n) + 1))
            if len(part) and int(part.max()) > np.iinfo(np.int32).max:
                raise PrepareError("a document holds 2**31 tokens or more: the megatron format stores "
                                   "sequence lengths as int32")
            f.write(part.astype("<i4").tobytes())
        for a in range(0, n, CHUNK_TOKENS):
            starts = s.offset_range(a, min(a + CHUNK_TOKENS, n))
            f.write((starts * dtype.itemsize).astype("<i8").tobytes())
        for a in range(0, n + 1, CHUNK_TOKENS):
            f.write(np.arange(a, min(a + CHUNK_TOKENS, n + 1), dtype="<i8").tobytes())
        _fsync_close(f)


def _llmc_stream(s: SplitStream, ctx: dict[str, Any]) -> Iterator[Any]:
    """The split's stream with its end-of-document separator before each document, as llm.c
    writes it, when the job puts only an end separator; otherwise the stream as it is."""
    bos, eot = ctx["bos"], ctx["eot"]
    if bos or not eot or s.tokens == 0:
        yield from s.chunks()
        return
    yield np.asarray(eot, dtype=s.dtype)
    yield from s.chunks(0, s.tokens - len(eot))


def _rechunk(chunks: Iterable[Any], size: int) -> Iterator[Any]:
    """The concatenation of ``chunks`` cut into pieces of ``size`` (the last one shorter)."""
    held: list[Any] = []
    n = 0
    for c in chunks:
        while len(c):
            take = min(size - n, len(c))
            held.append(c[:take])
            n += take
            c = c[take:]
            if n == size:
                yield np.concatenate(held) if len(held) > 1 else held[0]
                held, n = [], 0
    if n:
        yield np.concatenate(held) if len(held) > 1 else held[0]


def _llmc(folder: Path, s: SplitStream, ctx: dict[str, Any]) -> None:
    magic, version = LLMC_HEADERS[s.dtype.name]
    per_file = min(ctx["shard_tokens"], LLMC_MAX_TOKENS)
    k = 0
    f: BinaryIO | None = None
    count = 0
    for piece in _rechunk(_llmc_stream(s, ctx), CHUNK_TOKENS):
        while len(piece):
            if f is None:
                f = open(folder / f"{s.name}_{k:06d}.bin", "wb")
                f.write(np.zeros(256, dtype="<i4").tobytes())  # the header, written when the count is known
                count = 0
            take = min(per_file - count, len(piece))
            f.write(np.ascontiguousarray(piece[:take], dtype=s.dtype).tobytes())
            count += take
            piece = piece[take:]
            if count == per_file:
                _llmc_close(f, magic, version, count)
                f, k = None, k + 1
    if f is not None:
        _llmc_close(f, magic, version, count)


def _llmc_close(f: BinaryIO, magic: int, version: int, count: int) -> None:
    header = np.zeros(256, dtype="<i4")
    header[:3] = (magic, version, count)
    f.seek(0)
    f.write(header.tobytes())
    _fsync_close(f)


def _nanogpt(folder: Path, s: SplitStream, ctx: dict[str, Any]) -> None:
    with open(folder / f"{s.name}.bin", "wb") as f:
        _write_chunks(f, s.chunks(), s.dtype)
        _fsync_close(f)
    if not (folder / "meta.pkl").exists():
        with open(folder / "meta.pkl", "wb") as f:
            pickle.dump({"vocab_size": ctx["n_vocab"], "dtype": s.dtype.name, "tokenizer": ctx["tokenizer"]}, f)
            _fsync_close(f)


def _metric(n: int) -> str:
    """A token count as datatrove's metadata writes it (``humanize.metric(n, unit="T")``:
    three significant digits and an SI prefix, ``64.0 T``, ``1.23 kT``)."""
    k = 0
    while k < 8 and n >= 1000 ** (k + 1):
        k += 1
    v = n / 1000**k
    decimals = max(2 - (len(str(int(v))) - 1), 0) if v >= 1 else 2
    return f"{v:.{decimals}f} {' kMGTPEZY'[k].strip()}T"


def _datatrove(folder: Path, s: SplitStream, ctx: dict[str, Any]) -> None:
    sub = folder / s.name
    sub.mkdir()
    if s.documents == 0:
        return
    token_size = s.dtype.itemsize
    off = s.offsets
    first, k = 0, 0
    while first < s.documents:
        # the file ends at the first document end at or past shard_tokens tokens
        target = int(off[first]) + ctx["shard_tokens"]
        last = min(int(np.searchsorted(off, target, side="left")), s.documents)
        last = max(last, first + 1)
        start, end = int(off[first]), int(off[last])
        name = f"{k:05d}_tokens.ds"
        with open(sub / name, "wb") as f:
            _write_chunks(f, s.chunks(start, end), s.dtype)
            _fsync_close(f)
        with open(sub / f"{name}.index", "wb") as f:
            for a in range(first + 1, last + 1, CHUNK_TOKENS):
                ends = s.offset_range(a, min(a + CHUNK_TOKENS, last + 1)) - start
                f.write(ends.astype("<u8").tobytes())
            _fsync_close(f)
        with open(sub / f"{name}.metadata", "w", encoding="utf-8") as t:
            t.write("\n".join([f"{ctx['tokenizer']}|{token_size}", str(end - start), _metric(end - start)]))
        first, k = last, k + 1


_WRITERS = {"megatron": _megatron, "llmc": _llmc, "nanogpt": _nanogpt, "datatrove": _datatrove}


# ---------------------------------------------------------------------------
# Writing a format
# ---------------------------------------------------------------------------


def staging(out: Path, fmt: str) -> Path:
    return out / f".{fmt}.tmp"


def write_format(out: Path, fmt: str, splits: list[SplitStream], ctx: dict[str, Any]) -> list[str]:
    """Write ``fmt`` for every split into ``out/fmt/`` (through a temporary folder renamed
    when complete); return the files written, relative to ``out``.

    ``ctx``: ``shard_tokens``, ``bos``/``eot`` (separator ids), ``n_vocab``,
    ``max_token_value`` and ``tokenizer`` (its name)."""
    tmp, final = staging(out, fmt), out / fmt
    try:
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        for s in splits:
            _WRITERS[fmt](tmp, s, ctx)
        if final.is_dir() and not final.is_symlink():
            shutil.rmtree(final)
        elif final.exists() or final.is_symlink():
            final.unlink()
        os.replace(tmp, final)
    except BaseException as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        if isinstance(exc, OSError) and not isinstance(exc, PrepareError):
            where = exc.filename if exc.filename is not None else final
            raise PrepareError(f"{where}: cannot write the {fmt} format ({exc.strerror or exc})") from None
        raise
    return sorted(p.relative_to(out).as_posix() for p in final.rglob("*") if p.is_file())


def clean_staging(out: Path) -> None:
    """Remove the temporary format folders a killed run left behind."""
    for fmt in EXPORTS:
        with contextlib.suppress(OSError):
            shutil.rmtree(staging(out, fmt))

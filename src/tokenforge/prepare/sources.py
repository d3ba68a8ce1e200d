"""Where a corpus comes from: files, folders, globs, stdin or an iterable, read as documents.

A *source* is one input: a text file (one document per file, or documents
separated by a delimiter string), a JSON Lines file (``.jsonl``/``.json``,
optionally ``.gz`` or ``.zst``) with the text in one field, a Parquet file
with the text in one column, standard input (``-``, read as text), or an
iterable of strings given to the Python API (an HF ``datasets.Dataset`` is
read by column).

A *unit* is the part of a source one reader works through in order: a whole
file, or for the Ray engine a byte range of an uncompressed JSON Lines or
delimited text file (cut just after a line break or a delimiter, so a range
holds whole documents) or one Parquet row group. Reading units separately
gives the same documents, in the same order, as reading the file whole.

Readers yield :class:`Chunk` s of a few MB: documents in order, each with
flags saying whether it starts and ends its document (a very long document
is read as several consecutive *segments*, so memory stays bounded), and
whether its document belongs to the validation split. The split is decided
by a hash of the document's text (of its first segment for a long one), so
it does not depend on the order, the engine or the number of workers, and
a document repeated in the corpus lands in the same split every time.
Input errors name the file and the line. Bytes that are not UTF-8 stop the
job (``input_errors="strict"``) or are read as Python's ``bytes.decode`` reads
them with that error handler: ``replace`` (U+FFFD), ``ignore`` (dropped) or
``backslashreplace`` (``\\xNN``).
"""

from __future__ import annotations

import glob as _glob
import hashlib
import json
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

from .. import _native
from ..errors import FileFormatError, InvalidArgumentError, MissingDependencyError, TokenizerFileNotFoundError

#: Flag: the item begins its document.
FIRST = 1
#: Flag: the item ends its document.
LAST = 2
WHOLE = FIRST | LAST

#: Raw bytes read from a file at a time.
BLOCK_BYTES = 4 << 20
#: A document longer than this many characters is read as several segments.
SEGMENT_CHARS = 4 << 20
#: A chunk is handed on once it holds this many characters.
CHUNK_CHARS = 4 << 20
#: Extensions read as JSON Lines (before a compression suffix).
JSONL_SUFFIXES = (".jsonl", ".json", ".ndjson")
COMPRESSION = {".gz": "gzip", ".zst": "zstd", ".zstd": "zstd"}
#: What ``input_errors`` accepts: Python's decoding error handlers that keep text as text.
INPUT_ERRORS = ("strict", "replace", "ignore", "backslashreplace")
#: The way out every "not valid UTF-8" error offers (a CLI prints it as --input-errors).
INPUT_ERRORS_HINT = ("pass input_errors='replace' to read invalid bytes as U+FFFD, or input_errors='ignore' "
                     "to drop them, or input_errors='backslashreplace' to keep them as \\xNN")


@dataclass(frozen=True)
class Source:
    """One input. ``kind`` is ``text``, ``jsonl``, ``parquet``, ``stdin`` or ``iterable``."""

    name: str
    kind: str
    path: Path | None = None
    compression: str | None = None
    size: int | None = None
    mtime_ns: int | None = None
    obj: Any = field(default=None, compare=False, repr=False)

    @property
    def is_file(self) -> bool:
        return self.path is not None

    def describe(self) -> dict[str, Any]:
        """What the index records about this input (its hash is added by the caller)."""
        d: dict[str, Any] = {"name": self.name, "format": self.kind}
        if self.compression:
            d["compression"] = self.compression
        if self.size is not None:
            d["size"] = self.size
        return d


@dataclass(frozen=True)
class Unit:
    """A part of a source read in order by one reader: bytes ``start:end`` (``end``
    None: to the end), or for Parquet the row group ``start``."""

    source: int
    start: int = 0
    end: int | None = None


@dataclass
class Chunk:
    """Consecutive items of one source: texts with their flags and split."""

    source: int
    texts: list[str] = field(default_factory=list)
    flags: bytearray = field(default_factory=bytearray)
    val: bytearray = field(default_factory=bytearray)
    nbytes: int = 0  # raw input bytes consumed since the previous chunk (for progress)
    chars: int = 0
    empty: int = 0  # empty documents skipped

    def add(self, text: str, flags: int, val: bool) -> None:
        self.texts.append(text)
        self.flags.append(flags)
        self.val.append(val)
        self.chars += len(text)


@dataclass(frozen=True)
class ReadOptions:
    """How documents are read: ``text_field`` (JSON Lines, Parquet), ``split_on`` (text
    files: the delimiter between documents, or None for one document per file) and
    ``val_fraction`` (share of documents, by hash, that go to the validation split) and
    ``input_errors`` (what to do with bytes that are not UTF-8, see :data:`INPUT_ERRORS`)."""

    text_field: str = "text"
    split_on: str | None = None
    val_fraction: float = 0.0
    input_errors: str = "strict"
    chunk_chars: int = CHUNK_CHARS
    segment_chars: int = SEGMENT_CHARS


# ---------------------------------------------------------------------------
# Resolving inputs
# ---------------------------------------------------------------------------


def _is_dataset(obj: Any) -> bool:
    return hasattr(obj, "column_names") and hasattr(obj, "iter") and hasattr(obj, "num_rows")


def resolve_inputs(inputs: Any) -> list[Source]:
    """Sources of ``inputs``: a path, glob or ``-`` (or a list/tuple of them), a
    ``datasets.Dataset``, or any other iterable of strings (the documents).

    Folders are read recursively in sorted order (hidden files skipped); globs
    are expanded and sorted. Every named file must exist before work starts.
    """
    if isinstance(inputs, (str, os.PathLike)):
        inputs = [inputs]
    if _is_dataset(inputs):
        return [Source(name="<dataset>", kind="iterable", obj=inputs)]
    if not isinstance(inputs, (list, tuple)):
        if isinstance(inputs, (bytes, bytearray)) or not hasattr(inputs, "__iter__"):
            raise InvalidArgumentError(
                f"inputs must be paths, a datasets.Dataset or an iterable of str, not {type(inputs).__name__}"
            )
        return [Source(name="<iterable>", kind="iterable", obj=inputs)]
    if not inputs:
        raise InvalidArgumentError("no inputs given")
    sources: list[Source] = []
    for item in inputs:
        if _is_dataset(item):
            sources.append(Source(name="<dataset>", kind="iterable", obj=item))
            continue
        if not isinstance(item, (str, os.PathLike)):
            raise InvalidArgumentError(f"input {item!r} is not a path (str or os.PathLike)")
        spec = os.fspath(item)
        if spec == "-":
            sources.append(Source(name="<stdin>", kind="stdin"))
            continue
        for path in _expand(spec):
            sources.append(_file_source(path))
    return sources


def _expand(spec: str) -> list[Path]:
    path = Path(spec)
    try:
        return _expand_path(spec, path)
    except TokenizerFileNotFoundError:
        raise
    except OSError:  # a name the file system refuses (too long, say): no such file either
        return _missing(spec)


def _expand_path(spec: str, path: Path) -> list[Path]:
    if "\n" in spec:  # text, not a path
        return _missing(spec)
    if path.is_dir():
        found = sorted(
            p for p in path.rglob("*")
            if p.is_file() and not any(part.startswith(".") for part in p.relative_to(path).parts)
        )
        if not found:
            raise TokenizerFileNotFoundError(f"{spec}: folder holds no files")
        return found
    if path.is_file():
        return [path]
    if any(ch in spec for ch in "*?["):
        found = sorted(Path(p) for p in _glob.glob(spec, recursive=True) if Path(p).is_file())
        if not found:
            raise TokenizerFileNotFoundError(f"{spec}: no file matches this pattern")
        return found
    if path.exists():
        raise TokenizerFileNotFoundError(f"{spec}: not a regular file")
    return _missing(spec)


def _missing(spec: str) -> list[Path]:
    hint = ""
    if len(spec) > 200 or "\n" in spec:
        hint = " (to prepare in-memory documents, pass an iterator of str, e.g. iter(docs))"
    # a path is shown whole; text passed by mistake is cut in the middle, its start and end kept
    shown = spec if len(spec) <= 200 and "\n" not in spec else f"{spec[:60]!r}...{spec[-30:]!r}"
    raise TokenizerFileNotFoundError(f"{shown}: no such file{hint}")


def _file_source(path: Path) -> Source:
    suffixes = [s.lower() for s in path.suffixes]
    compression = COMPRESSION.get(suffixes[-1]) if suffixes else None
    base = suffixes[-2] if compression and len(suffixes) >= 2 else (suffixes[-1] if suffixes else "")
    if base in JSONL_SUFFIXES:
        kind = "jsonl"
    elif base == ".parquet":
        kind = "parquet"
        if compression:
            raise FileFormatError("a compressed Parquet file is not supported (Parquet compresses its pages itself)", path=path)
    else:
        kind = "text"
    st = path.stat()
    return Source(name=str(path), kind=kind, path=path, compression=compression, size=st.st_size, mtime_ns=st.st_mtime_ns)


# ---------------------------------------------------------------------------
# Units
# ---------------------------------------------------------------------------


def plan_units(sources: list[Source], opts: ReadOptions, range_bytes: int | None = None) -> list[Unit]:
    """Units of ``sources``: whole sources, or (``range_bytes`` set) uncompressed JSON
    Lines and delimited text files cut into ranges of about that size, and Parquet
    files cut into row groups."""
    units: list[Unit] = []
    for k, src in enumerate(sources):
        if range_bytes and src.is_file and not src.compression:
            if src.kind == "jsonl":
                units.extend(Unit(k, s, e) for s, e in _ranges(src.path, b"\n", range_bytes))
                continue
            if src.kind == "text" and opts.split_on:
                units.extend(Unit(k, s, e) for s, e in _ranges(src.path, opts.split_on.encode("utf-8"), range_bytes))
                continue
            if src.kind == "parquet":
                pq = _pyarrow_parquet(src)
                try:
                    groups = pq.ParquetFile(src.path).num_row_groups
                except Exception as exc:  # pyarrow raises its own types
                    raise FileFormatError(f"not a readable Parquet file ({exc})", path=src.path) from None
                units.extend(Unit(k, g, g + 1) for g in range(max(groups, 1)))
                continue
        units.append(Unit(k))
    return units


def _ranges(path: Path, sep: bytes, size: int) -> list[tuple[int, int]]:
    """Byte ranges of about ``size`` that each end just after ``sep`` (or at the end)."""
    total = path.stat().st_size
    out = []
    start = 0
    with open(path, "rb") as f:
        while start < total:
            target = start + size
            if target >= total:
                out.append((start, total))
                break
            end = total
            pos = target
            f.seek(pos)
            carry = b""
            while True:
                block = f.read(1 << 16)
                if not block:
                    break
                buf = carry + block
                k = buf.find(sep)
                if k != -1:
                    end = pos - len(carry) + k + len(sep)
                    break
                keep = len(sep) - 1
                carry = buf[len(buf) - keep:] if keep else b""
                pos += len(block)
            out.append((start, end))
            start = end
    return out


# ---------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------


def val_threshold(fraction: float) -> int:
    """Documents whose 64-bit hash is below this go to the validation split."""
    if fraction <= 0:
        return 0
    return min(int(fraction * 2**64), 2**64)


def is_val(text: str, threshold: int) -> bool:
    """Deterministic split of a document by the BLAKE2b hash of its UTF-8 text."""
    if threshold == 0:
        return False
    data = text.encode("utf-8", "surrogatepass")
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "little") < threshold


class _Emitter:
    """Turns documents and segments into chunks of about ``chunk_chars``."""

    def __init__(self, source: int, opts: ReadOptions) -> None:
        self.source = source
        self.opts = opts
        self.threshold = val_threshold(opts.val_fraction)
        self.chunk = Chunk(source)
        self._doc_val = False
        self._open = False  # inside a document whose first segment was emitted

    def doc(self, text: str) -> Chunk | None:
        if not text:
            self.chunk.empty += 1
            return None
        self.chunk.add(text, WHOLE, is_val(text, self.threshold))
        return self._maybe_flush()

    def segment(self, text: str, last: bool) -> Chunk | None:
        """Part of a long document (``last``: its final part)."""
        if not self._open:
            if not text and last:
                self.chunk.empty += 1
                return None
            self._doc_val = is_val(text, self.threshold)
            self.chunk.add(text, FIRST | (LAST if last else 0), self._doc_val)
            self._open = not last
        else:
            self.chunk.add(text, LAST if last else 0, self._doc_val)
            self._open = not last
        return self._maybe_flush()

    def consumed(self, nbytes: int) -> None:
        self.chunk.nbytes += nbytes

    def _maybe_flush(self) -> Chunk | None:
        if self.chunk.chars >= self.opts.chunk_chars:
            return self.flush()
        return None

    def flush(self) -> Chunk | None:
        c = self.chunk
        if not c.texts and not c.nbytes and not c.empty:
            return None
        self.chunk = Chunk(self.source)
        return c


def read_unit(sources: list[Source], unit: Unit, opts: ReadOptions) -> Iterator[Chunk]:
    """The chunks of one unit, in order."""
    src = sources[unit.source]
    em = _Emitter(unit.source, opts)
    if src.kind == "iterable":
        gen = _read_iterable(src, em)
    elif src.kind == "parquet":
        gen = _read_parquet(src, unit, em, opts)
    else:
        gen = _read_stream(src, unit, em, opts)
    for chunk in gen:
        if chunk is not None:
            yield chunk
    last = em.flush()
    if last is not None:
        yield last


def _read_iterable(src: Source, em: _Emitter) -> Iterator[Chunk | None]:
    obj = src.obj
    if _is_dataset(obj):
        field_ = em.opts.text_field
        if field_ not in obj.column_names:
            raise FileFormatError(
                f"the dataset has no column {field_!r} (columns: {', '.join(obj.column_names)})"
            )
        n = 0
        for batch in obj.iter(batch_size=1024):
            for text in batch[field_]:
                n += 1
                if not isinstance(text, str):
                    raise FileFormatError(f"row {n - 1}: column {field_!r} holds {type(text).__name__}, not str")
                em.consumed(len(text))
                yield em.doc(text)
        return
    for n, text in enumerate(obj):
        if not isinstance(text, str):
            raise InvalidArgumentError(f"document {n} of the iterable is {type(text).__name__}, not str")
        em.consumed(len(text))
        yield em.doc(text)


def _open_binary(src: Source, unit: Unit) -> tuple[Any, Any]:
    """(stream to read, raw file whose position tracks progress)."""
    if src.kind == "stdin":
        raw = sys.stdin.buffer
        return raw, None
    try:
        raw = open(src.path, "rb")
    except FileNotFoundError:
        raise TokenizerFileNotFoundError(f"{src.name}: no such file") from None
    except OSError as exc:
        raise TokenizerFileNotFoundError(f"{src.name}: cannot read ({exc.strerror})") from None
    if unit.start:
        raw.seek(unit.start)
    if src.compression == "gzip":
        import gzip

        return gzip.GzipFile(fileobj=raw, mode="rb"), raw
    if src.compression == "zstd":
        try:
            import zstandard
        except ImportError:
            raw.close()
            raise MissingDependencyError(
                f"{src.name}: reading .zst files needs the 'zstandard' package (pip install zstandard)"
            ) from None
        return zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True), raw
    return raw, raw


class _Lines:
    """Line numbers for errors: counts the line breaks of what was read so far."""

    def __init__(self, src: Source, unit: Unit) -> None:
        self.src = src
        self.unit = unit
        self.before = 0  # line breaks before the current block (within the unit)
        self.offset = unit.start  # byte offset of the current block in the (decompressed) input

    def byte(self, pos: int) -> str:
        """Where byte ``pos`` of the current block is, for an error message."""
        at = self.offset + pos
        return f"byte {at} of the decompressed text" if self.src.compression else f"byte {at}"

    def line_of(self, block: bytes, pos: int) -> int:
        base = self.before + block.count(b"\n", 0, pos)
        if self.unit.start and self.src.path is not None:
            with open(self.src.path, "rb") as f:
                remaining = self.unit.start
                while remaining:
                    data = f.read(min(remaining, 1 << 20))
                    if not data:
                        break
                    base += data.count(b"\n")
                    remaining -= len(data)
        return base + 1


def _utf8_complete(data: bytes) -> int:
    """Length of the longest prefix of ``data`` that does not end inside a UTF-8 sequence."""
    n = len(data)
    for back in range(1, min(4, n) + 1):
        b = data[n - back]
        if b & 0xC0 == 0x80:
            continue
        if b < 0x80:
            return n
        need = 2 if b >> 5 == 0b110 else 3 if b >> 4 == 0b1110 else 4 if b >> 3 == 0b11110 else 1
        return n if back >= need else n - back
    return n


def _decode(block: bytes, src: Source, lines: _Lines, errors: str) -> str:
    try:
        return block.decode("utf-8")
    except UnicodeDecodeError as exc:
        if errors != "strict":
            return block.decode("utf-8", errors)
        raise _not_utf8(exc, src, lines, block) from None


def _not_utf8(exc: UnicodeDecodeError, src: Source, lines: _Lines, block: bytes, start: int = 0) -> FileFormatError:
    """The error for invalid UTF-8 at ``block[start + exc.start]``: file, line, byte, and the way out."""
    at = start + exc.start
    bad = block[at : start + exc.end].hex(" ")
    return FileFormatError(f"not valid UTF-8 ({lines.byte(at)}: {bad}, {exc.reason}); {INPUT_ERRORS_HINT}",
                           path=src.name, line=lines.line_of(block, at))


def _blocks(stream: Any, raw: Any, unit: Unit) -> Iterator[tuple[bytes, int]]:
    """Raw blocks of the unit and the input bytes each consumed."""
    limit = None if unit.end is None else unit.end - unit.start
    done = 0
    last_pos = raw.tell() if raw is not None and raw is not stream else None
    while limit is None or done < limit:
        want = BLOCK_BYTES if limit is None else min(BLOCK_BYTES, limit - done)
        block = stream.read(want)
        if not block:
            break
        done += len(block)
        if last_pos is not None:
            pos = raw.tell()
            consumed, last_pos = pos - last_pos, pos
        else:
            consumed = len(block)
        yield block, consumed


def _read_stream(src: Source, unit: Unit, em: _Emitter, opts: ReadOptions) -> Iterator[Chunk | None]:
    stream, raw = _open_binary(src, unit)
    try:
        if src.kind == "jsonl":
            yield from _read_jsonl(stream, raw, src, unit, em, opts)
        elif opts.split_on:
            yield from _read_delimited(stream, raw, src, unit, em, opts)
        else:
            yield from _read_whole(stream, raw, src, unit, em, opts)
    finally:
        if src.kind != "stdin":
            stream.close()
            if raw is not None and raw is not stream:
                raw.close()


def _text_blocks(stream, raw, src: Source, unit: Unit, em: _Emitter) -> Iterator[str]:
    """Decoded text of the unit, block by block (no block ends inside a character)."""
    lines = _Lines(src, unit)
    errors = em.opts.input_errors
    pending = b""
    for block, consumed in _blocks(stream, raw, unit):
        em.consumed(consumed)
        data = pending + block if pending else block
        cut = _utf8_complete(data)
        pending = data[cut:]
        head = data[:cut] if cut < len(data) else data
        text = _decode(head, src, lines, errors)
        lines.before += head.count(b"\n")
        lines.offset += len(head)
        yield text
    if pending:  # the input ends inside a character: an error, or its replacement
        yield _decode(pending, src, lines, errors)


def _read_whole(stream, raw, src: Source, unit: Unit, em: _Emitter, opts: ReadOptions) -> Iterator[Chunk | None]:
    """One document per file, read in segments of ``segment_chars``."""
    held = ""
    for text in _text_blocks(stream, raw, src, unit, em):
        held = held + text if held else text
        while len(held) > opts.segment_chars:
            yield em.segment(held[: opts.segment_chars], last=False)
            held = held[opts.segment_chars :]
    yield em.segment(held, last=True)


def _read_delimited(stream, raw, src: Source, unit: Unit, em: _Emitter, opts: ReadOptions) -> Iterator[Chunk | None]:
    """Documents separated by ``split_on``; a document longer than ``segment_chars``
    is emitted in segments (keeping back enough text to see a delimiter that
    straddles two blocks)."""
    delim = opts.split_on
    keep = len(delim) - 1
    carry = ""
    in_doc = False  # part of the current document was already emitted as a segment
    for text in _text_blocks(stream, raw, src, unit, em):
        buf = carry + text if carry else text
        parts = buf.split(delim)
        carry = parts.pop()
        for part in parts:
            if in_doc:
                yield em.segment(part, last=True)
                in_doc = False
            else:
                yield em.doc(part)
        if len(carry) > opts.segment_chars:
            cut = len(carry) - keep
            yield em.segment(carry[:cut], last=False)
            carry = carry[cut:]
            in_doc = True
    if in_doc:
        yield em.segment(carry, last=True)
    elif carry:  # text after the last delimiter (nothing after a trailing one is a document)
        yield em.doc(carry)


def _read_jsonl(stream, raw, src: Source, unit: Unit, em: _Emitter, opts: ReadOptions) -> Iterator[Chunk | None]:
    field_ = opts.text_field
    lines = _Lines(src, unit)
    loads = json.loads
    carry = b""
    for block, consumed in _blocks(stream, raw, unit):
        em.consumed(consumed)
        data = carry + block if carry else block
        end = data.rfind(b"\n")
        if end == -1:
            carry = data
            continue
        carry = data[end + 1 :]
        body = data[: end + 1]
        yield from _jsonl_lines(body, src, lines, field_, em, loads)
        lines.before += body.count(b"\n")
        lines.offset += len(body)
    if carry:
        yield from _jsonl_lines(carry, src, lines, field_, em, loads)


def _jsonl_lines(body: bytes, src: Source, lines: _Lines, field_: str, em: _Emitter, loads: Callable) -> Iterator[Chunk | None]:
    """The ``field_`` string of each non-blank JSON line of ``body`` (whole lines), as documents.

    The native core reads the lines it can prove ``json.loads`` would read the same way
    (see ``_core/jsonl.h``); every other line, malformed ones included, goes through
    ``json.loads`` here, so results and error messages are Python's."""
    core = _native.core()
    key = _utf8_key(field_) if core is not None else None
    if key is None:
        pos = 0
        for raw_line in body.split(b"\n"):
            start = pos
            pos += len(raw_line) + 1
            if raw_line.strip():
                yield em.doc(_json_line_text(raw_line, start, body, src, lines, field_, loads, em.opts.input_errors))
        return
    for item in core.jsonl_field(body, key):
        if type(item) is int:  # a line json.loads decides
            end = body.find(b"\n", item)
            item = _json_line_text(body[item : len(body) if end < 0 else end], item, body, src, lines, field_, loads,
                                   em.opts.input_errors)
        yield em.doc(item)


def _utf8_key(field_: str) -> bytes | None:
    try:
        return field_.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate in the name: only json.loads can match it
        return None


#: Bytes ``surrogateescape`` held as U+DC80..U+DCFF.
_ESCAPED_BYTES = re.compile("[\udc80-\udcff]+")


def _json_line_text(raw_line: bytes, start: int, body: bytes, src: Source, lines: _Lines, field_: str,
                    loads: Callable, errors: str = "strict") -> str:
    """The ``field_`` string of one JSON line, or the error naming the file and line."""
    try:
        obj = loads(raw_line)
    except UnicodeDecodeError:
        # a line is UTF-8 (RFC 8259 section 8.1); json.loads may have guessed UTF-16/32 from its bytes
        try:
            obj = loads(raw_line.decode("utf-8"))
        except UnicodeDecodeError as exc:
            if errors == "strict":
                raise _not_utf8(exc, src, lines, body, start) from None
            # each invalid byte is held as a lone surrogate through the JSON parser (no handler
            # may add JSON syntax, as backslashreplace's \\xNN would), then read with `errors`
            try:
                obj = loads(raw_line.decode("utf-8", "surrogateescape"))
            except ValueError as exc2:
                raise FileFormatError(f"not valid JSON ({exc2})", path=src.name,
                                      line=lines.line_of(body, start)) from None
            if isinstance(obj, dict) and isinstance(obj.get(field_), str):
                obj = {field_: _ESCAPED_BYTES.sub(
                    lambda m: bytes(ord(c) - 0xDC00 for c in m.group()).decode("utf-8", errors), obj[field_])}
        except ValueError as exc:
            raise FileFormatError(f"not valid JSON ({exc})", path=src.name, line=lines.line_of(body, start)) from None
    except ValueError as exc:
        raise FileFormatError(f"not valid JSON ({exc})", path=src.name, line=lines.line_of(body, start)) from None
    if not isinstance(obj, dict):
        raise FileFormatError(
            f"expected a JSON object with a {field_!r} field, found {type(obj).__name__}",
            path=src.name, line=lines.line_of(body, start),
        )
    try:
        text = obj[field_]
    except KeyError:
        keys = ", ".join(map(repr, list(obj)[:8])) or "none"
        texts = [k for k, v in obj.items() if isinstance(v, str)]
        hint = f"; pass text_field={texts[0]!r} to read that one" if texts else ""
        raise FileFormatError(
            f"no field {field_!r} in this JSON object (its fields: {keys}){hint}",
            path=src.name, line=lines.line_of(body, start),
        ) from None
    if not isinstance(text, str):
        raise FileFormatError(
            f"field {field_!r} holds {type(text).__name__}, not a string",
            path=src.name, line=lines.line_of(body, start),
        )
    return text


def _pyarrow_parquet(src: Source) -> Any:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise MissingDependencyError(f"{src.name}: reading Parquet needs pyarrow (pip install pyarrow)") from None
    return pq


def _read_parquet(src: Source, unit: Unit, em: _Emitter, opts: ReadOptions) -> Iterator[Chunk | None]:
    pq = _pyarrow_parquet(src)
    field_ = opts.text_field
    try:
        pf = pq.ParquetFile(src.path)
    except Exception as exc:
        raise FileFormatError(f"not a readable Parquet file ({exc})", path=src.name) from None
    names = pf.schema_arrow.names
    if field_ not in names:
        strings = [n for n in names if str(pf.schema_arrow.field(n).type) in ("string", "large_string")]
        hint = f"; pass text_field={strings[0]!r} to read that one" if strings else ""
        raise FileFormatError(f"no column {field_!r} (columns: {', '.join(names)}){hint}", path=src.name)
    groups = range(pf.num_row_groups) if unit.end is None else range(unit.start, unit.end)
    row = sum(pf.metadata.row_group(g).num_rows for g in range(groups.start)) if groups else 0
    total_rows = max(pf.metadata.num_rows, 1)
    for g in groups:
        if g >= pf.num_row_groups:
            break
        for batch in pf.iter_batches(batch_size=4096, row_groups=[g], columns=[field_]):
            col = batch.column(0)
            for text in col.to_pylist():
                row += 1
                if text is None:
                    em.chunk.empty += 1
                    continue
                if not isinstance(text, str):
                    raise FileFormatError(f"row {row - 1}: column {field_!r} holds {type(text).__name__}, not a string",
                                          path=src.name)
                yield em.doc(text)
            em.consumed(int((src.size or 0) * len(col) / total_rows))


def hash_source(src: Source) -> str | None:
    """sha256 of a file's bytes (None for stdin and iterables)."""
    if src.path is None:
        return None
    from .._io import sha256_file

    return sha256_file(src.path)

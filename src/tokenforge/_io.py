"""File helpers: atomic writes and readable errors for missing files."""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import shutil
import tempfile
from pathlib import Path
from typing import IO, Iterator

from . import limits
from .errors import SaveError, TokenizerFileNotFoundError


def _writable(path: str | os.PathLike) -> Path:
    """``path`` as a file that can be written, else :class:`SaveError` saying why."""
    if not os.fspath(path):
        raise SaveError("cannot save to an empty path")
    p = Path(path)
    if p.is_dir():
        raise SaveError(f"{p}: is a directory; give a file name")
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        raise SaveError(f"{p}: the folder {parent} does not exist")
    return p


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike, mode: str = "w") -> Iterator[IO]:
    """Write to a temporary file beside ``path`` and rename it over ``path`` only
    when the block finishes without error. An interrupted write leaves the old
    file as it was and no temporary file behind. OS failures raise :class:`SaveError`
    naming ``path`` (not the temporary file)."""
    path = _writable(path)
    directory = path.parent if str(path.parent) else Path(".")
    remove_stale_temporaries(directory, [path.name])
    try:
        fd, tmp = tempfile.mkstemp(prefix=_temp_prefix(path), suffix=".tmp", dir=directory)
    except OSError as exc:
        raise SaveError(f"{path}: cannot write in {directory} ({exc.strerror})") from None
    try:
        kwargs = {"encoding": "utf-8", "newline": "\n"} if "b" not in mode else {}
        with os.fdopen(fd, mode, **kwargs) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, SaveError):
            raise
        raise SaveError(f"{path}: cannot be written ({exc.strerror or exc})") from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


JOURNAL = ".tokenforge-save.json"


def _temp_prefix(path: Path) -> str:
    # The writer's pid is in the name, so a later save can tell a dead writer's leftovers.
    return f".{path.name}.{os.getpid()}."


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, but not ours to signal
        return True
    return True


def remove_stale_temporaries(directory: Path, names: list[str]) -> None:
    """Delete the temporary and backup files (and the temporary folders of ``convert``)
    that an interrupted save of ``names`` left in ``directory`` (their writer is no
    longer running)."""
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return
    for entry in entries:
        for name in names:
            head = f".{name}."
            if entry.name.startswith(head) and entry.name.endswith((".tmp", ".bak")):
                pid = entry.name[len(head):].split(".", 1)[0]
                if pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)):
                    if entry.is_dir(follow_symlinks=False):
                        import shutil

                        shutil.rmtree(entry.path, ignore_errors=True)
                    else:
                        with contextlib.suppress(OSError):
                            os.unlink(entry.path)


def _sha256_text(path: Path) -> str | None:
    import hashlib

    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def check_interrupted_save(directory: str | os.PathLike) -> None:
    """Raise :class:`FileFormatError` if a save of several files into ``directory`` was
    interrupted between its renames (its journal says which files are new and which old)."""
    import json

    from .errors import FileFormatError

    journal = Path(directory) / JOURNAL
    if not journal.is_file():
        return
    try:
        doc = json.loads(journal.read_text(encoding="utf-8"))
        new, old = doc["new"], doc["old"]
    except (OSError, ValueError, KeyError, TypeError):
        return  # not a journal this version wrote: nothing to check
    now = {name: _sha256_text(Path(directory) / name) for name in new}
    if all(now[n] == new[n] for n in new) or all(now[n] == old.get(n) for n in new):
        return  # the save finished, or never replaced anything
    fresh = sorted(n for n in new if now[n] == new[n])
    stale = sorted(n for n in new if now[n] != new[n])
    raise FileFormatError(
        f"a save into this folder was interrupted: {', '.join(fresh)} new, {', '.join(stale)} still old; "
        f"save the tokenizer again (or delete {JOURNAL} if you edited the files by hand)",
        path=directory,
    )


def atomic_write_files(contents: dict[Path, str]) -> None:
    """Replace several text files together: all are written to temporary files
    first, and if any rename fails the files already replaced are restored, so
    a pair such as vocab.json + merges.txt never ends up half old, half new. A
    journal (``.tokenforge-save.json``) holds the new and old sha256 of each file
    while the renames run, so that even a killed process leaves a pair that
    :func:`check_interrupted_save` recognises."""
    import hashlib
    import json

    temps: dict[Path, str] = {}
    backups: dict[Path, str] = {}
    replaced: list[Path] = []
    parents = {p.parent for p in contents}
    directory = parents.pop() if len(parents) == 1 else None
    if directory is not None:
        remove_stale_temporaries(directory, [p.name for p in contents] + [JOURNAL])
    try:
        for path, text in contents.items():
            fd, tmp = tempfile.mkstemp(prefix=_temp_prefix(path), suffix=".tmp", dir=path.parent)
            temps[path] = tmp
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
                f.write(text)
                f.flush()
                os.fsync(f.fileno())
            os.chmod(tmp, 0o644)
        if directory is not None:
            journal = {
                "new": {p.name: hashlib.sha256(t.encode("utf-8")).hexdigest() for p, t in contents.items()},
                "old": {p.name: _sha256_text(p) for p in contents},
            }
            with atomic_write(directory / JOURNAL) as f:
                f.write(json.dumps(journal))
        for path in contents:
            if path.exists():
                # a hard link keeps the old file in place until the new one replaces it
                bak = str(path.parent / f"{_temp_prefix(path)}{secrets.token_hex(6)}.bak")
                try:
                    os.link(path, bak)
                except OSError:  # no hard links on this file system
                    shutil.copy2(path, bak)
                backups[path] = bak
        for path in contents:
            os.replace(temps[path], path)
            del temps[path]
            replaced.append(path)
    except BaseException:
        for path in replaced:
            bak = backups.get(path)
            try:
                if bak is None:
                    os.unlink(path)
                else:
                    os.replace(bak, path)
            except BaseException:
                if bak is not None:  # renames keep failing: copy the old bytes back
                    shutil.copyfile(bak, path)
        for leftover in list(temps.values()) + list(backups.values()):
            with contextlib.suppress(OSError):
                os.unlink(leftover)
        if directory is not None:
            with contextlib.suppress(OSError):
                os.unlink(directory / JOURNAL)
        raise
    if directory is not None:
        with contextlib.suppress(OSError):
            os.unlink(directory / JOURNAL)
    for bak in backups.values():
        with contextlib.suppress(OSError):
            os.unlink(bak)


def read_bytes(path: str | os.PathLike) -> bytes:
    """Read a whole tokenizer file, turning OS errors into one clear tokenforge error.

    A file larger than :data:`tokenforge.limits.MAX_FILE_BYTES` is refused before it is
    read (a pipe or device is read up to the limit, then refused)."""
    import stat

    limit = limits.MAX_FILE_BYTES
    try:
        with open(path, "rb") as f:
            info = os.fstat(f.fileno())
            if stat.S_ISDIR(info.st_mode):
                raise TokenizerFileNotFoundError(f"{path}: is a directory, expected a file")
            if stat.S_ISREG(info.st_mode):
                limits.check_file_size(info.st_size, path)
                return f.read()
            chunks: list[bytes] = []
            size = 0
            while chunk := f.read(min(1 << 20, limit + 1 - size)):
                chunks.append(chunk)
                size += len(chunk)
                if size > limit:
                    limits.check_file_size(size, path)
            return b"".join(chunks)
    except TokenizerFileNotFoundError:
        raise
    except FileNotFoundError:
        raise TokenizerFileNotFoundError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise TokenizerFileNotFoundError(f"{path}: is a directory, expected a file") from None
    except OSError as exc:
        raise TokenizerFileNotFoundError(f"{path}: cannot read ({exc.strerror})") from None


def read_text(path: str | os.PathLike) -> str:
    """Read a UTF-8 file; invalid UTF-8 raises FileFormatError naming the line."""
    from .errors import FileFormatError

    data = read_bytes(path)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise FileFormatError(
            f"not valid UTF-8 at byte {exc.start} ({exc.reason})", path=path, line=line
        ) from None




def parse_json(text: str | bytes, path: object, *, standard: bool = False) -> object:
    """``json.loads`` with every failure as :class:`FileFormatError` naming the file and line
    (a document nested a thousand levels deep included, which ``json`` reports as a
    ``RecursionError``).

    ``standard=True`` also refuses what JSON (RFC 8259) and serde_json, the reader of HF
    tokenizers, refuse and Python's ``json`` accepts: ``NaN`` and ``Infinity``, numbers too
    large for a double (``1e999``), and ``\\u`` escapes of lone UTF-16 surrogates (strings
    that are not Unicode text). Files HF reads (``tokenizer.json``, ``vocab.json``) are
    read this way, so tokenforge loads exactly the documents HF loads."""
    import json

    from .errors import FileFormatError

    kwargs: dict = {}
    if standard:
        kwargs["parse_constant"] = _refuse_constant
        if isinstance(text, str) and _BIG_NUMBER.search(text):
            kwargs["parse_float"] = _finite_float
    import sys

    # json's C decoder recurses on the C stack, bounded only by the recursion limit: where a
    # program raised that limit, a deeply nested file would overflow the stack (a crash), so
    # the limit is held at a safe depth while parsing.
    limit = sys.getrecursionlimit()
    try:
        if limit > limits.MAX_JSON_DEPTH:
            sys.setrecursionlimit(limits.MAX_JSON_DEPTH)
        doc = json.loads(text, **kwargs)
    except _NotStandardJSON as exc:
        raise FileFormatError(
            f"not standard JSON: {exc.token} (JSON has no NaN or infinite numbers; HF tokenizers refuses the file too)",
            path=path, line=_line_of_token(text, exc.token),
        ) from None
    except json.JSONDecodeError as exc:
        raise FileFormatError(f"not valid JSON ({exc.msg})", path=path, line=exc.lineno) from None
    except RecursionError:
        raise FileFormatError("JSON nested too deeply to be a tokenizer file", path=path) from None
    except UnicodeDecodeError as exc:
        raise FileFormatError(f"not valid UTF-8 at byte {exc.start}", path=path) from None
    finally:
        if sys.getrecursionlimit() != limit:
            sys.setrecursionlimit(limit)
    if standard and isinstance(text, str) and _SURROGATE_ESCAPE.search(text):
        where = _lone_surrogate(doc)
        if where is not None:
            raise FileFormatError(
                f"{where} holds a lone UTF-16 surrogate (a \\u escape in D800..DFFF without its pair), "
                "which is not text; HF tokenizers refuses the file too",
                path=path,
            )
    return doc


class _NotStandardJSON(ValueError):
    def __init__(self, token: str):
        super().__init__(token)
        self.token = token


def _refuse_constant(token: str) -> object:
    raise _NotStandardJSON(token)


def _finite_float(token: str) -> float:
    import math

    value = float(token)
    if math.isinf(value):
        raise _NotStandardJSON(token)
    return value


# a number with an exponent of three digits or more: the only way to write one past a double
_BIG_NUMBER = re.compile(r"[0-9][eE][+]?0*[1-9][0-9]{2}")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89abcdefABCDEF]")


def _line_of_token(text: str | bytes, token: str) -> int | None:
    """Line of the first ``token`` outside a JSON string."""
    if not isinstance(text, str):
        return None
    pattern = re.compile(r'"(?:[^"\\]|\\.)*"|(?<![\w.+-])' + re.escape(token) + r"(?![\w.])")
    for m in pattern.finditer(text):
        if not m.group(0).startswith('"'):
            return text.count("\n", 0, m.start()) + 1
    return None


def _lone_surrogate(doc: object) -> str | None:
    """Where in ``doc`` the first string (key or value) holding a surrogate code point is,
    as a JSON path (``model.vocab["\\ud800a"]``), or ``None``."""
    has = re.compile("[\ud800-\udfff]").search
    stack: list[tuple[object, str]] = [(doc, "")]
    while stack:
        node, where = stack.pop()
        if isinstance(node, str):
            if has(node):
                return where or "the document"
        elif isinstance(node, dict):
            for k, v in node.items():
                at = f"{where}[{k!r}]" if not k.isidentifier() else (f"{where}.{k}" if where else k)
                if has(k):
                    return f"{where or 'the document'} key {k!r}"
                stack.append((v, at))
        elif isinstance(node, list):
            stack.extend((v, f"{where}[{n}]") for n, v in enumerate(node))
    return None


def sha256_file(path: str | os.PathLike) -> str:
    """Hex sha256 of a file, read in blocks (memory stays flat whatever its size)."""
    import hashlib

    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 22):
            h.update(block)
    return h.hexdigest()

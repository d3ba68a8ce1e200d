"""File helpers: atomic writes and readable errors for missing files."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import IO, Iterator

from .errors import TokenizerFileNotFoundError


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike, mode: str = "w") -> Iterator[IO]:
    """Write to a temporary file beside ``path`` and rename it over ``path`` only
    when the block finishes without error. An interrupted write leaves the old
    file as it was and no temporary file behind."""
    path = Path(path)
    directory = path.parent if str(path.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    try:
        kwargs = {"encoding": "utf-8", "newline": "\n"} if "b" not in mode else {}
        with os.fdopen(fd, mode, **kwargs) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def read_bytes(path: str | os.PathLike) -> bytes:
    """Read a whole file, turning OS errors into one clear tokenforge error."""
    try:
        return Path(path).read_bytes()
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

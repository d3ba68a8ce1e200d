"""tiktoken rank files: one ``base64(token_bytes) rank`` per line.

A rank file holds only the mergeable tokens. The split pattern and the special
tokens are the other half of an encoding, so loading takes them as arguments
(a pattern name such as ``"cl100k"`` or ``"qwen"``, or a regex).
"""

from __future__ import annotations

import binascii
import os
from base64 import b64decode, b64encode
from collections.abc import Mapping

from .._io import atomic_write, read_bytes
from ..errors import FileFormatError
from ..models.bpe import BPE


def parse_ranks(data: bytes, path: object = "<rank file>") -> dict[bytes, int]:
    """Parse rank-file contents into ``{token_bytes: rank}``.

    A well-formed file takes one pass of C-level calls; anything odd (bad
    base64, a missing field, a duplicate, a negative rank, blank lines) is
    re-read line by line to name the line and the problem.
    """
    from .. import _native

    core = _native.core()
    if core is not None and hasattr(core, "parse_ranks"):
        try:
            return core.parse_ranks(data)
        except ValueError:
            return _parse_ranks_checked(data, path)
    try:
        a2b = binascii.a2b_base64
        ranks = {a2b(tok, strict_mode=True): int(rank) for tok, rank in (line.split() for line in data.splitlines())}
        n_lines = data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
        if (
            ranks
            and len(ranks) == n_lines
            and b"" not in ranks
            and min(ranks.values()) >= 0
            and len(set(ranks.values())) == len(ranks)
        ):
            return ranks
    except (ValueError, binascii.Error, TypeError):
        pass
    return _parse_ranks_checked(data, path)


def _parse_ranks_checked(data: bytes, path: object) -> dict[bytes, int]:
    ranks: dict[bytes, int] = {}
    seen_ranks: dict[int, int] = {}
    for lineno, line in enumerate(data.splitlines(), 1):
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) != 2:
            raise FileFormatError(
                f"expected 'base64-token rank', found {len(parts)} fields: {line[:60]!r}", path=path, line=lineno
            )
        try:
            token = b64decode(parts[0], validate=True)
        except (binascii.Error, ValueError):
            raise FileFormatError(f"token {parts[0][:40]!r} is not valid base64", path=path, line=lineno) from None
        try:
            rank = int(parts[1])
        except ValueError:
            raise FileFormatError(f"rank {parts[1][:20]!r} is not an integer", path=path, line=lineno) from None
        if rank < 0:
            raise FileFormatError(f"rank {rank} is negative", path=path, line=lineno)
        if not token:
            raise FileFormatError("empty token", path=path, line=lineno)
        if token in ranks:
            raise FileFormatError(f"token {token!r} appears twice (ranks {ranks[token]} and {rank})", path=path, line=lineno)
        if rank in seen_ranks:
            raise FileFormatError(f"rank {rank} appears twice (lines {seen_ranks[rank]} and {lineno})", path=path, line=lineno)
        ranks[token] = rank
        seen_ranks[rank] = lineno
    if not ranks:
        raise FileFormatError("no ranks found (empty file?)", path=path)
    return ranks


def load_ranks(path: str | os.PathLike) -> dict[bytes, int]:
    return parse_ranks(read_bytes(path), path)


def format_ranks(ranks: Mapping[bytes, int]) -> str:
    return "".join(f"{b64encode(t).decode('ascii')} {r}\n" for t, r in sorted(ranks.items(), key=lambda kv: kv[1]))


def save_ranks(model: BPE, path: str | os.PathLike) -> None:
    """Write the model's ranks as a tiktoken file (atomically)."""
    vocab = model.vocab
    if len(set(vocab.values())) != len(vocab):
        raise FileFormatError(
            "this model has two ids with the same bytes, which a tiktoken rank file cannot express"
        )
    with atomic_write(path) as f:
        f.write(format_ranks(model.ranks))

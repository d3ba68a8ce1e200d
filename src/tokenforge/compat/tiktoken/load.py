"""``tiktoken.load``: read and write tiktoken rank files.

A rank file has one ``base64(token_bytes) rank`` line per token. Paths are read
from disk; ``http(s)://`` addresses are read from the package when they name one
of the rank files tokenforge ships (checked by sha256), else downloaded once into
``$TIKTOKEN_CACHE_DIR`` (default: ``<tmp>/data-gym-cache``) as tiktoken does.
"""

from __future__ import annotations

import hashlib
import os
import tempfile

from ... import encodings as _encodings
from ..._io import atomic_write, read_bytes
from ...errors import FileFormatError
from ...formats.tiktoken import format_ranks, parse_ranks

__all__ = ["load_tiktoken_bpe", "dump_tiktoken_bpe", "data_gym_to_mergeable_bpe_ranks", "read_file_cached"]


def check_hash(data: bytes, expected_hash: str) -> bool:
    return hashlib.sha256(data).hexdigest() == expected_hash


def _shipped(blobpath: str) -> bytes | None:
    name = blobpath.rstrip("/").rsplit("/", 1)[-1]
    for spec in _encodings.ENCODINGS.values():
        if name == f"{spec.rank_file}.tiktoken":
            return _encodings.rank_file_bytes(spec)
    return None


def read_file(blobpath: str) -> bytes:
    """The bytes of a local path or an ``http(s)://`` address."""
    if "://" not in blobpath:
        return read_bytes(blobpath)
    shipped = _shipped(blobpath)
    if shipped is not None:
        return shipped
    import urllib.request

    with urllib.request.urlopen(blobpath) as resp:  # noqa: S310 (an address the caller chose)
        data: bytes = resp.read()
        return data


def read_file_cached(blobpath: str, expected_hash: str | None = None) -> bytes:
    """:func:`read_file`, keeping downloads in the cache directory; a file whose sha256
    is not ``expected_hash`` raises :class:`~tokenforge.errors.FileFormatError`."""
    data: bytes | None = None
    cache_path = None
    if "://" in blobpath and _shipped(blobpath) is None:
        cache_dir = os.environ.get("TIKTOKEN_CACHE_DIR") or os.environ.get("DATA_GYM_CACHE_DIR") or os.path.join(
            tempfile.gettempdir(), "data-gym-cache"
        )
        cache_path = os.path.join(cache_dir, hashlib.sha1(blobpath.encode()).hexdigest())
        if os.path.exists(cache_path):
            cached = read_bytes(cache_path)
            if expected_hash is None or check_hash(cached, expected_hash):
                data = cached
    if data is None:
        data = read_file(blobpath)
        if cache_path is not None and (expected_hash is None or check_hash(data, expected_hash)):
            os.makedirs(os.path.dirname(cache_path), exist_ok=True)
            with atomic_write(cache_path, "wb") as f:
                f.write(data)
    if expected_hash is not None and not check_hash(data, expected_hash):
        raise FileFormatError(
            f"{blobpath}: sha256 is {hashlib.sha256(data).hexdigest()}, expected {expected_hash}; "
            "the file may be corrupted"
        )
    return data


def load_tiktoken_bpe(tiktoken_bpe_file: str, expected_hash: str | None = None) -> dict[bytes, int]:
    """``{token_bytes: rank}`` of a rank file (a bad line raises, naming file and line)."""
    return parse_ranks(read_file_cached(tiktoken_bpe_file, expected_hash), tiktoken_bpe_file)


def dump_tiktoken_bpe(bpe_ranks: dict[bytes, int], tiktoken_bpe_file: str) -> None:
    """Write ``bpe_ranks`` as a rank file, by rank, atomically."""
    with atomic_write(tiktoken_bpe_file) as f:
        f.write(format_ranks(bpe_ranks))


def data_gym_to_mergeable_bpe_ranks(
    vocab_bpe_file: str,
    encoder_json_file: str,
    vocab_bpe_hash: str | None = None,
    encoder_json_hash: str | None = None,
    clobber_one_byte_tokens: bool = False,
) -> dict[bytes, int]:
    """Ranks from GPT-2's ``vocab.bpe`` (merges) and ``encoder.json``: the 256 bytes in
    GPT-2's order, then one rank per merge; the encoder must agree with them."""
    import json

    from ... import bytelevel

    to_byte = bytelevel.unicode_to_bytes()
    order = list(bytelevel.bytes_to_unicode())  # the printable bytes first, as GPT-2 ranks them

    def raw(token: str) -> bytes:
        try:
            return bytes(to_byte[c] for c in token)
        except KeyError as exc:
            raise FileFormatError(f"{vocab_bpe_file}: {token!r} holds {exc.args[0]!r}, not a GPT-2 byte character") from None

    ranks = {bytes([b]): i for i, b in enumerate(order)}
    lines = read_file_cached(vocab_bpe_file, vocab_bpe_hash).decode("utf-8").split("\n")
    for n, line in enumerate(lines, start=1):
        if not line.strip() or (n == 1 and line.startswith("#version")):
            continue
        parts = line.split()
        if len(parts) != 2:
            raise FileFormatError(f"{vocab_bpe_file}, line {n}: expected two tokens, got {line!r}")
        ranks[raw(parts[0]) + raw(parts[1])] = len(ranks)
    encoder = json.loads(read_file_cached(encoder_json_file, encoder_json_hash))
    loaded = {raw(k): v for k, v in encoder.items() if k not in ("<|endoftext|>", "<|startoftext|>")}
    if clobber_one_byte_tokens:
        for k, v in loaded.items():
            if len(k) == 1:
                ranks[k] = v
    if ranks != loaded:
        raise FileFormatError(f"{encoder_json_file} does not agree with the merges of {vocab_bpe_file}")
    return ranks

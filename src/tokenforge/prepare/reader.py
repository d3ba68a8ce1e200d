"""Reading prepared tokens back: ``open_tokens(OUTDIR)``.

``.ids`` is the whole token stream of a split in input order, memory-mapped
(never read into memory): a ``numpy.memmap`` when the split is one shard, a
:class:`ShardedIds` that indexes and slices across shards otherwise.
``batch`` samples training windows as Stanford CS336's ``get_batch`` does:
``batch_size`` random starts, inputs ``ids[s:s+T]`` and targets ``ids[s+1:s+T+1]``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
else:
    from .._lazy import np
from .._io import sha256_file
from ..errors import FileFormatError, InvalidArgumentError, MissingDependencyError, TokenizerFileNotFoundError
from .shards import FORMAT, FORMAT_VERSION, INDEX, PARTIAL, member_path

if TYPE_CHECKING:
    _Seed = np.random.Generator | int | None


class ShardedIds:
    """A read-only token stream over several memory-mapped shards, indexed like a 1-D array."""

    def __init__(self, shards: list[np.memmap]) -> None:
        self.shards = shards
        self._ends = np.cumsum([len(s) for s in shards], dtype=np.int64)
        self._starts = self._ends - np.array([len(s) for s in shards], dtype=np.int64)
        self.dtype = shards[0].dtype if shards else np.dtype("<u2")

    def __len__(self) -> int:
        return int(self._ends[-1]) if len(self._ends) else 0

    @property
    def shape(self) -> tuple[int]:
        return (len(self),)

    def _slice(self, start: int, stop: int) -> np.ndarray:
        if stop <= start:
            return np.zeros(0, dtype=self.dtype)
        lo = int(np.searchsorted(self._ends, start, side="right"))
        hi = int(np.searchsorted(self._ends, stop - 1, side="right"))
        if lo == hi:
            off = int(self._starts[lo])
            return self.shards[lo][start - off : stop - off]
        parts = []
        for k in range(lo, hi + 1):
            off = int(self._starts[k])
            parts.append(self.shards[k][max(start - off, 0) : min(stop - off, len(self.shards[k]))])
        return np.concatenate(parts)

    def __getitem__(self, key: Any) -> Any:
        n = len(self)
        if isinstance(key, slice):
            start, stop, step = key.indices(n)
            if step == 1:
                return self._slice(start, stop)
            if step > 0:
                return self._slice(start, stop)[::step]
            return self[np.arange(start, stop, step)]
        if isinstance(key, (int, np.integer)):
            i = int(key)
            if i < 0:
                i += n
            if not 0 <= i < n:
                raise IndexError(f"index {int(key)} is out of range for {n} tokens")
            k = int(np.searchsorted(self._ends, i, side="right"))
            return self.shards[k][i - int(self._starts[k])]
        idx = np.asarray(key)
        if idx.dtype == bool:
            return np.asarray(self)[idx]
        idx = np.where(idx < 0, idx + n, idx).astype(np.int64)
        if idx.size and (idx.min() < 0 or idx.max() >= n):
            raise IndexError(f"an index is out of range for {n} tokens")
        flat = idx.ravel()
        out = np.empty(flat.shape, dtype=self.dtype)
        which = np.searchsorted(self._ends, flat, side="right")
        for k in np.unique(which):
            sel = which == k
            out[sel] = self.shards[k][flat[sel] - self._starts[k]]
        return out.reshape(idx.shape)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        arr = self._slice(0, len(self))
        return arr.astype(dtype) if dtype is not None else arr

    def __iter__(self) -> Iterator[Any]:
        for s in self.shards:
            yield from s

    def __repr__(self) -> str:
        return f"ShardedIds({len(self)} tokens of {self.dtype}, {len(self.shards)} shards)"


class Tokens:
    """One split of a prepared corpus: ``ids``, ``doc_offsets``, ``len()`` documents,
    ``doc(i)``, ``batch(...)`` and the ``index`` it was read from."""

    def __init__(self, directory: Path, index: dict[str, Any], split: str, verify: bool) -> None:
        self.directory = directory
        self.index = index
        self.split = split
        info = index["splits"][split]
        self.dtype = np.dtype(index["dtype"]).newbyteorder("<")
        index_path = directory / INDEX
        maps = []
        for shard in info["shards"]:
            p = member_path(directory, shard["file"], index_path)
            expect = shard["tokens"] * self.dtype.itemsize
            if not p.is_file():
                raise TokenizerFileNotFoundError(f"{p}: shard listed in {directory / INDEX} is missing")
            if p.stat().st_size != expect:
                raise FileFormatError(
                    f"shard holds {p.stat().st_size} bytes, the index says {shard['tokens']} tokens = {expect} bytes "
                    "(truncated or replaced)", path=p,
                )
            if verify and sha256_file(p) != shard["sha256"]:
                raise FileFormatError("sha256 differs from the index: the shard changed after it was written", path=p)
            if shard["tokens"]:
                maps.append(np.memmap(p, dtype=self.dtype, mode="r"))
        self.ids: Any = maps[0] if len(maps) == 1 else (ShardedIds(maps) if maps else np.zeros(0, dtype=self.dtype))
        doc_path = member_path(directory, info["doc_offsets"], index_path)
        if verify and info.get("doc_offsets_sha256") is not None and doc_path.is_file() \
                and sha256_file(doc_path) != info["doc_offsets_sha256"]:
            raise FileFormatError("sha256 differs from the index: the document offsets changed after they "
                                  "were written", path=doc_path)
        try:
            self.doc_offsets = np.load(doc_path, mmap_mode="r", allow_pickle=False)
        except FileNotFoundError:
            raise TokenizerFileNotFoundError(f"{doc_path}: document offsets listed in the index are missing") from None
        except ValueError as exc:
            raise FileFormatError(f"not a valid .npy file ({exc})", path=doc_path) from None
        offsets = self.doc_offsets
        if offsets.ndim != 1 or offsets.dtype.kind not in "iu":
            raise FileFormatError(f"holds {offsets.dtype} of shape {offsets.shape}, not a list of int64 offsets",
                                  path=doc_path)
        if len(offsets) != info["documents"] + 1 or (len(offsets) and offsets[-1] != info["tokens"]):
            raise FileFormatError(
                f"holds {len(offsets)} offsets, the index says {info['documents']} documents "
                f"and {info['tokens']} tokens", path=doc_path,
            )
        if verify and len(offsets) and (offsets[0] != 0 or bool(np.any(np.diff(offsets) < 0))):
            # an index of format 1 holds no hash of the offsets: at least their order is checked
            raise FileFormatError("the document offsets do not rise from 0 to the number of tokens", path=doc_path)

    @property
    def n_tokens(self) -> int:
        return len(self.ids)

    def __len__(self) -> int:
        """Number of documents."""
        return len(self.doc_offsets) - 1

    def doc(self, i: int) -> npt.NDArray[np.unsignedinteger[Any]]:
        """Tokens of document ``i``, separators included."""
        n = len(self)
        if not isinstance(i, (int, np.integer)) or isinstance(i, bool):
            raise InvalidArgumentError(f"document index must be an int, got {i!r}")
        j = int(i) + n if i < 0 else int(i)
        if not 0 <= j < n:
            raise IndexError(f"document {i} is out of range ({n} documents)")
        ids: npt.NDArray[np.unsignedinteger[Any]] = self.ids[int(self.doc_offsets[j]) : int(self.doc_offsets[j + 1])]
        return ids

    @overload
    def batch(
        self, batch_size: int, context_length: int, rng: _Seed = None, device: None = None
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]: ...

    @overload
    def batch(self, batch_size: int, context_length: int, rng: _Seed, device: str) -> tuple[Any, Any]: ...

    @overload
    def batch(self, batch_size: int, context_length: int, rng: _Seed = None, *, device: str) -> tuple[Any, Any]: ...

    def batch(
        self, batch_size: int, context_length: int, rng: _Seed = None, device: str | None = None
    ) -> tuple[Any, Any]:
        """``(x, y)``: ``batch_size`` windows of ``context_length`` tokens at uniform random
        starts, and the same windows shifted by one (the next-token targets), as int64.

        ``rng``: a ``numpy.random.Generator``, a seed, or None. ``device``: return
        ``torch`` tensors on that device instead (needs PyTorch).
        """
        for name, v in (("batch_size", batch_size), ("context_length", context_length)):
            if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or v < 1:
                raise InvalidArgumentError(f"{name} must be a positive int, got {v!r}")
        n = len(self.ids)
        if n < context_length + 1:
            raise InvalidArgumentError(
                f"the {self.split} split holds {n} tokens, fewer than context_length + 1 = {context_length + 1}"
            )
        gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
        starts = gen.integers(0, n - context_length, size=batch_size)
        if isinstance(self.ids, np.ndarray):
            window = self.ids[starts[:, None] + np.arange(context_length + 1)]
        else:
            window = np.stack([self.ids[int(s) : int(s) + context_length + 1] for s in starts])
        window = window.astype(np.int64)
        x, y = window[:, :-1], window[:, 1:]
        if device is None:
            return np.ascontiguousarray(x), np.ascontiguousarray(y)
        try:
            import torch  # type: ignore[import-not-found, unused-ignore]
        except ImportError:
            raise MissingDependencyError("batch(device=...) returns torch tensors and needs PyTorch") from None
        return (torch.from_numpy(np.ascontiguousarray(x)).to(device),
                torch.from_numpy(np.ascontiguousarray(y)).to(device))

    def __repr__(self) -> str:
        return f"Tokens({str(self.directory)!r}, split={self.split!r}, {len(self)} documents, {self.n_tokens} tokens)"


def open_tokens(directory: str | Any, split: str = "train", *, verify: bool = False) -> Tokens:
    """Open a split written by :func:`tokenforge.prepare` (``verify``: check the sha256 of
    every shard and of the document offsets against the index, reading them whole).

    Every file the index names must lie inside ``directory`` (a relative name without
    ``..``); any other name is a :class:`~tokenforge.FileFormatError`.

    >>> import tokenforge, tempfile
    >>> out = tempfile.mkdtemp()
    >>> _ = tokenforge.prepare(iter(["a b", "c"]), "gpt2", out, show_progress=False)
    >>> toks = tokenforge.open_tokens(out)
    >>> len(toks), toks.doc(1).tolist()
    (2, [66, 50256])
    """
    d = Path(directory)
    path = d / INDEX
    if not path.is_file():
        hint = " (an interrupted run: prepare again with resume=True)" if (d / PARTIAL).exists() else ""
        raise TokenizerFileNotFoundError(f"{path}: no such file{hint}")
    try:
        index = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise FileFormatError(f"not valid JSON ({exc})", path=path) from None
    if not isinstance(index, dict) or index.get("format") != FORMAT:
        raise FileFormatError(f"not an index written by tokenforge prepare (no \"format\": \"{FORMAT}\")", path=path)
    version = index.get("format_version", 1)
    if not isinstance(version, int) or version > FORMAT_VERSION:
        raise FileFormatError(f"format_version {version!r} is newer than this tokenforge reads ({FORMAT_VERSION}); "
                              "upgrade tokenforge", path=path)
    formats = index.get("formats") or ["tokenforge"]
    if "tokenforge" not in formats:
        folders = ", ".join(f"{d / f}/" for f in formats)
        raise FileFormatError(f"prepared in the {', '.join(formats)} format(s) only, without the tokenforge shards "
                              f"open_tokens reads (see {folders}); prepare with 'tokenforge' among the formats "
                              "to read it here", path=path)
    if split not in index.get("splits", {}):
        raise InvalidArgumentError(f"{path}: no split {split!r} (splits: {', '.join(index.get('splits', {}))})")
    return Tokens(d, index, split, verify)

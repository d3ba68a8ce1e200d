"""Adapters for the third-party encoders that ``bench_encode.py`` runs beside
tiktoken (not a benchmark itself).

Every peer is loaded OFFLINE with the same ranks as tiktoken's encodings:

============  ==================  ==============================================
peer          PyPI package        how it gets its ranks (no network)
============  ==================  ==============================================
quicktok      ``quicktok-v1``     ranks bundled in the wheel (cl100k, o200k)
gigatoken     ``gigatoken``       ``Tokenizer.from_tiktoken(<file>.tiktoken)`` on
                                  ``/work/shared/data/vocab/tiktoken`` (gpt2 via
                                  ``r50k_base.tiktoken``: same ranks and pattern)
rs-bpe        ``rs-bpe``          ranks compiled into the extension (cl100k, o200k)
bpe-openai    ``bpe-openai``      ranks compiled into the extension (cl100k, o200k);
                                  the Rust binding is called directly, because
                                  the package's Python wrapper refuses texts of
                                  1,000,000+ characters
============  ==================  ==============================================

None of them is asked to fetch anything. A peer that is not installed, or
that has no table for an encoding, is skipped (and the reason printed).
Peers' ids are compared with tiktoken's by the caller; a peer whose ids
differ is reported and its speed is shown flagged, never silently.

Every adapter exposes the same small interface::

    p = PEERS[name]
    p.supports(enc)        -> None if usable, else a reason string
    obj = p.fresh(enc)     -> a new encoder object (or the shared instance, see .shared)
    p.encode(obj, text)    -> list[int]   (encode_ordinary semantics)
    p.decode(obj, ids)     -> str
    p.batch(obj, docs, n)  -> the peer's batch result on n threads, or None
    p.batch_lists(raw)     -> that result as list[list[int]] (untimed)
    p.numpy(obj, text)     -> numpy array, or None when the peer has no such call
"""

from __future__ import annotations

import os
from typing import Any, Callable

TIKTOKEN_DIR = "/work/shared/data/vocab/tiktoken"


def _version(dist: str) -> str | None:
    try:
        from importlib.metadata import version

        return version(dist)
    except Exception:
        return None


class Peer:
    name = "?"
    dist = "?"
    encodings: tuple[str, ...] = ()
    #: True when the library hands out one process-wide instance per encoding,
    #: so a "fresh" object is not really fresh (no cold figure of its own).
    shared = False
    #: What the batch call is, for the table notes.
    batch_note = ""

    def __init__(self) -> None:
        self.import_error: str | None = None
        try:
            self._import()
        except Exception as exc:  # not installed, or does not load
            self.import_error = f"{type(exc).__name__}: {exc}"

    def _import(self) -> None:  # pragma: no cover - overridden
        raise NotImplementedError

    @property
    def version(self) -> str | None:
        return _version(self.dist)

    def supports(self, enc: str) -> str | None:
        if self.import_error:
            return f"not loadable ({self.import_error})"
        if enc not in self.encodings:
            return f"no offline table for {enc}"
        return None

    def fresh(self, enc: str) -> Any:  # pragma: no cover - overridden
        raise NotImplementedError

    def encode(self, obj, text: str) -> list[int]:
        return obj.encode_ordinary(text)

    def decode(self, obj, ids: list[int]) -> str:
        return obj.decode(ids)

    def batch(self, obj, docs: list[str], threads: int) -> Any:
        """The timed batch call on ``threads`` threads (None: the peer has none)."""
        return None

    def batch_lists(self, raw) -> list[list[int]]:
        """``batch``'s result as one id list per document (untimed, for the check)."""
        return raw

    def numpy(self, obj, text: str):
        return None


class QuickTok(Peer):
    name = "quicktok"
    dist = "quicktok-v1"
    encodings = ("cl100k_base", "o200k_base")
    batch_note = "encode_batch(docs, threads) -> one flat uint32 array + offsets (no Python lists)"

    def _import(self) -> None:
        import quicktok

        self._mod = quicktok

    def fresh(self, enc: str):
        return self._mod.Tokenizer(enc, "")

    def batch(self, obj, docs, threads):
        return obj.encode_batch(docs, threads)  # timed in the library's own output form

    def batch_lists(self, raw):
        flat, offsets = raw
        return [flat[offsets[i]:offsets[i + 1]].tolist() for i in range(len(offsets) - 1)]


class GigaToken(Peer):
    name = "gigatoken"
    dist = "gigatoken"
    encodings = ("gpt2", "cl100k_base", "o200k_base")
    batch_note = "TiktokenCompat.encode_ordinary_batch; num_threads=1 runs on the calling thread, any other value on rayon's global pool (all cores = 2)"

    def _import(self) -> None:
        import gigatoken

        self._mod = gigatoken

    def _file(self, enc: str) -> str:
        return os.path.join(TIKTOKEN_DIR, ("r50k_base" if enc == "gpt2" else enc) + ".tiktoken")

    def supports(self, enc: str) -> str | None:
        why = super().supports(enc)
        if why is None and not os.path.exists(self._file(enc)):
            why = f"no local rank file {self._file(enc)}"
        return why

    def fresh(self, enc: str):
        tok = self._mod.Tokenizer.from_tiktoken(self._file(enc))
        return (tok, tok.as_tiktoken())

    def encode(self, obj, text):
        return obj[1].encode_ordinary(text)

    def decode(self, obj, ids):
        return obj[1].decode(ids)

    def batch(self, obj, docs, threads):
        return obj[1].encode_ordinary_batch(docs, num_threads=threads)

    def numpy(self, obj, text):
        return obj[0].encode(text)


class RsBpe(Peer):
    name = "rs-bpe"
    dist = "rs-bpe"
    encodings = ("cl100k_base", "o200k_base")
    shared = True
    batch_note = ("1 thread: encode_batch(docs); 2 threads: encode_batch_parallel(docs, ParallelOptions(1, 64, 2)). "
                  "rs-bpe 0.1.0's encode_batch_parallel encodes with the FIRST encoding loaded in the process, whatever "
                  "instance it is called on (so its o200k ids are cl100k ids when cl100k was loaded first), and it ran "
                  "on one core here (CPU time = wall time)")

    def _import(self) -> None:
        from rs_bpe.bpe import openai

        self._mod = openai

    def fresh(self, enc: str):
        return getattr(self._mod, enc)()

    def encode(self, obj, text):
        return obj.encode(text)

    def batch(self, obj, docs, threads):
        if threads == 1:
            return obj.encode_batch(docs)[0]
        return obj.encode_batch_parallel(docs, self._mod.ParallelOptions(1, 64, threads))[0]


class BpeOpenAI(Peer):
    name = "bpe-openai"
    dist = "bpe-openai"
    encodings = ("cl100k_base", "o200k_base")
    shared = True
    batch_note = "the package's encode_ordinary_batch: a Python ThreadPoolExecutor over the binding"

    def _import(self) -> None:
        import bpe_openai
        from bpe_openai import _bindings

        self._pkg = bpe_openai
        self._mod = _bindings

    def fresh(self, enc: str):
        # (raw binding for single texts, package wrapper for batches)
        return (self._mod.tokenizer_for_encoding(enc), self._pkg.get_encoding(enc))

    def encode(self, obj, text):
        return obj[0].encode(text)

    def decode(self, obj, ids):
        return obj[0].decode(ids)

    def batch(self, obj, docs, threads):
        return obj[1].encode_ordinary_batch(docs, num_threads=threads)


ALL_PEERS: dict[str, Callable[[], Peer]] = {
    "quicktok": QuickTok,
    "gigatoken": GigaToken,
    "rs-bpe": RsBpe,
    "bpe-openai": BpeOpenAI,
}


def load_peers(names: list[str]) -> dict[str, Peer]:
    return {n: ALL_PEERS[n]() for n in names}

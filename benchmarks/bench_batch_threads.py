"""Batch encoding on 1 and 2 threads: does the second thread pay?

For each encoding and text type, a batch of ~1 KB documents (about ``--mb`` MB,
cut at line ends; a corpus shorter than that is repeated) is encoded with the
native byte-level BPE core, ``encode_ordinary_batch`` (lists) and
``encode_ordinary_batch_flat`` (flat uint32 ids), on 1 and 2 threads, and with
tiktoken's ``encode_ordinary_batch(num_threads=N)`` on the same data for a
reference ratio (tiktoken built offline from tokenforge's ranks, like
tests/_tiktoken_ref.py).

Every timed call gets *fresh* ``str`` objects (copies made untimed): CPython
caches the UTF-8 form of a non-ASCII str on first use, so re-encoding the same
objects would time a warm cache that a real batch never sees. Variants are
interleaved inside each repeat; each figure is the best of ``--repeats``.
MB/s of UTF-8 input; ``x2`` is 2-thread over 1-thread throughput.

    PYTHONPATH=src python benchmarks/bench_batch_threads.py
    PYTHONPATH=src python benchmarks/bench_batch_threads.py --encodings o200k_base --texts zh,ja --repeats 9
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import tokenforge

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path("/work/shared/data")
TEXTS = {
    "en": [SHARED / "text/corpus.en", ROOT / "src/tokenforge/data/corpus/en.train.txt"],
    "docs": [SHARED / "bench/linux-kernel-docs_en.txt"],
    "code": [ROOT / "src/tokenforge/data/corpus/code.train.txt", ROOT / "src/tokenforge/data/corpus/code.heldout.txt"],
    "zh": [SHARED / "text/hongloumeng.txt"],
    "ja": [SHARED / "text/wagahaiwa_nekodearu.txt"],
}


def docs_of(name: str, mb: float, doc_bytes: int) -> list[str]:
    text = ""
    for p in TEXTS[name]:
        if p.exists():
            text += p.read_text(encoding="utf-8", errors="replace")
    if not text:
        return []
    want = int(mb * 1e6)
    docs: list[str] = []
    size = 0
    cur: list[str] = []
    cur_len = 0
    while size < want:
        for line in text.splitlines(keepends=True):
            cur.append(line)
            cur_len += len(line.encode("utf-8"))
            if cur_len >= doc_bytes:
                docs.append("".join(cur))
                size += cur_len
                cur, cur_len = [], 0
                if size >= want:
                    break
    return docs


def fresh(docs: list[str]) -> list[str]:
    # New str objects with no cached UTF-8 form (str(s) and s[:] return s itself).
    return [(s + "x")[:-1] for s in docs]


def load_core(path: str):
    # Loaded as "tfbase._core" so that CPython calls its PyInit__core.
    import importlib.machinery
    import importlib.util

    loader = importlib.machinery.ExtensionFileLoader("tfbase._core", path)
    spec = importlib.util.spec_from_loader("tfbase._core", loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


def tiktoken_ref(tok):
    try:
        import tiktoken
    except ImportError:
        return None
    return tiktoken.Encoding(
        name=f"ref-{tok.name}",
        pat_str=tok.pattern,
        mergeable_ranks=dict(tok.mergeable_ranks),
        special_tokens=dict(tok.special_tokens),
    )


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--encodings", default="cl100k_base,o200k_base")
    ap.add_argument("--texts", default="en,docs,code,zh,ja")
    ap.add_argument("--mb", type=float, default=4.0)
    ap.add_argument("--doc-bytes", type=int, default=1000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--no-tiktoken", action="store_true")
    ap.add_argument("--base", help="a saved _core*.so of another build: also timed, as 'base-list'/'base-flat'")
    args = ap.parse_args()
    print(f"tokenforge {tokenforge.__file__}  cpus={os.cpu_count()}")
    bad = False
    for enc in args.encodings.split(","):
        tok = tokenforge.get_encoding(enc)
        core = tok._plan.core
        ref = None if args.no_tiktoken else tiktoken_ref(tok)
        base = None
        if args.base:
            plan = tok._plan
            decoder = dict(plan.ranks_model._vocab)
            decoder.update(tok.special_tokens and {i: s.encode() for s, i in tok.special_tokens.items()} or {})
            base = load_core(args.base).CoreBPE(plan.ranks_model._ranks, decoder, tokenforge._native.SCANNERS[plan.pattern.name])
            base.encode_ordinary_batch(["Hello, world! " + "a" * 64], 1)
        core.encode_ordinary_batch(["Hello, world! " + "a" * 64], 1)  # one-time set-up
        for name in args.texts.split(","):
            docs = docs_of(name, args.mb, args.doc_bytes)
            if not docs:
                print(f"{enc:12} {name:5} (no data)")
                continue
            nbytes = sum(len(d.encode("utf-8")) for d in docs)
            variants = {
                "list": lambda d, t: core.encode_ordinary_batch(d, t),
                "flat": lambda d, t: core.encode_ordinary_batch_flat(d, t),
            }
            if base is not None:
                variants["base-list"] = lambda d, t: base.encode_ordinary_batch(d, t)
                variants["base-flat"] = lambda d, t: base.encode_ordinary_batch_flat(d, t)
            if ref is not None:
                variants["tiktoken"] = lambda d, t: ref.encode_ordinary_batch(d, num_threads=t)
            best: dict[tuple[str, int], float] = {}
            expect = None
            for r in range(args.repeats):
                order = [(v, t) for v in variants for t in (1, 2)]
                k = r % len(order)
                for v, t in order[k:] + order[:k]:
                    d = fresh(docs)
                    t0 = time.perf_counter()
                    out = variants[v](d, t)
                    dt = time.perf_counter() - t0
                    best[(v, t)] = min(best.get((v, t), dt), dt)
                    if v in ("list", "base-list", "tiktoken") and r == 0:
                        if expect is None:
                            expect = out
                        elif out != expect:
                            print(f"!!! ID MISMATCH {enc} {name} {v} t={t}")
                            bad = True
                    del out, d
            cells = []
            for v in variants:
                one = nbytes / best[(v, 1)] / 1e6
                two = nbytes / best[(v, 2)] / 1e6
                cells.append(f"{v} {one:6.1f} -> {two:6.1f} MB/s x2={two / one:4.2f}")
            print(f"{enc:12} {name:5} {nbytes / 1e6:4.1f}MB  " + " | ".join(cells), flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

"""Run one cell of ``bench_peers.py`` with one library in a loop, for a profiler.

Same tokenizer rows, texts and modes as ``bench_peers.py``; the library encodes the
cell's warm-up text, then its parts in turn for ``--seconds``, and prints MB/s. Wrap it
in a profiler:

    # tokenforge's compiled core with symbols (into a copy of the tree; see README.md):
    TOKENFORGE_PROFILE=1 python setup.py build_ext --inplace --force
    perf record -g -o /tmp/perf.data python benchmarks/profile_cell.py cl100k english doc
    perf report -i /tmp/perf.data --no-children --percent-limit 2 --stdio

    python benchmarks/profile_cell.py llama3.json english doc --cprofile   # Python-side stages
    python benchmarks/profile_cell.py bert.txt chinese doc --lib nanotoken  # a peer, for comparison

    # batch scaling: 1 and 2 threads taking turns, best of --rounds, with CPU time / wall time
    python benchmarks/profile_cell.py cl100k english batch --scaling --lib tokenforge,tiktoken,quicktok
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _peers import ADAPTERS  # noqa: E402
from bench_peers import (  # noqa: E402
    BLOCK,
    WORST,
    Lib,
    build_sources,
    language_texts,
    mode_data,
    nbytes,
    pool_text,
    worst_text,
)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("row", help="a bench_peers.py row key (bench_peers.py --list)")
    ap.add_argument("text", help="english, chinese, japanese, code, or a worst case (letter, spaces, json, nospace)")
    ap.add_argument("mode", choices=("doc", "line", "batch"))
    ap.add_argument("--lib", default="tokenforge", help="library (default tokenforge: lists; tokenforge[np]: arrays)")
    ap.add_argument("--threads", type=int, default=1, help="batch threads (default 1)")
    ap.add_argument("--size", type=int, default=1_000_000)
    ap.add_argument("--parts", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--cprofile", action="store_true", help="print cProfile's top functions (Python-side cost)")
    ap.add_argument("--scaling", action="store_true",
                    help="batch on 1 and 2 threads, libraries and thread counts taking turns (comma-separated --lib; "
                         "libraries whose batch takes a thread count)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--cache-dir", default=os.path.join(os.path.expanduser("~"), ".cache", "tokenforge-bench-peers"))
    args = ap.parse_args()

    src = next(s for s in build_sources(Path(args.cache_dir)) if s.key == args.row)
    if args.scaling:
        return scaling(args, src)
    ad = ADAPTERS[args.lib]()
    obj, via = ad.load(src)
    lib = Lib(args.lib, ad, obj, via, 0.0, threads=args.threads)
    if args.text in WORST:
        english = pool_text("english", 2 * args.size)
        warm = worst_text(args.text, max(100_000, args.size // 10), args.parts, english)
        parts = [worst_text(args.text, args.size, v, english) for v in range(args.parts)]
    else:
        warm, parts = language_texts(args.text, ["doc", "line", "batch"], args.size, args.parts)[args.mode]
        warm, parts = mode_data(args.mode, warm, BLOCK // 8), [mode_data(args.mode, p, BLOCK // 8) for p in parts]
    plan = getattr(obj, "plan", None)
    print(f"# {src.label} | {args.text} {args.mode} | {args.lib}" + (f" (plan {plan})" if plan else ""), flush=True)
    lib.run(args.mode, warm)
    prof = cProfile.Profile() if args.cprofile else None
    done_mb, t0, k = 0.0, time.perf_counter(), 0
    if prof:
        prof.enable()
    while time.perf_counter() - t0 < args.seconds:
        part = parts[k % len(parts)]
        lib.run(args.mode, part)
        done_mb += nbytes(part) / 1e6
        k += 1
    if prof:
        prof.disable()
    dt = time.perf_counter() - t0
    print(f"# {done_mb:.2f} MB in {dt:.2f}s: {done_mb / dt:.2f} MB/s ({k} parts; parts repeat after {len(parts)})")
    if prof:
        pstats.Stats(prof).sort_stats("tottime").print_stats(14)
    return 0


def scaling(args, src) -> int:
    """b2/b1 of each library's batch call on the same documents, with CPU/wall of each."""
    warm, parts = language_texts(args.text, ["batch"], args.size, 1)["batch"]
    docs = mode_data("batch", parts[0], BLOCK // 8)
    mb = nbytes(docs) / 1e6
    libs = []
    for name in args.lib.split(","):
        ad = ADAPTERS[name]()
        if not ad.batch_threads:
            print(f"# {name}: its batch call takes no thread count; skipped")
            continue
        obj, via = ad.load(src)
        for n in (1, 2):
            lib = Lib(name, ad, obj, via, 0.0, threads=n)
            lib.run("batch", mode_data("batch", warm, BLOCK // 8))
            libs.append(lib)
    best: dict[tuple[str, int], tuple[float, float]] = {}
    for r in range(args.rounds):
        k = r % len(libs)
        for lib in libs[k:] + libs[:k]:
            c0, t0 = time.process_time(), time.perf_counter()
            lib.run("batch", docs)
            t, c = time.perf_counter() - t0, time.process_time() - c0
            key = (lib.name, lib.threads)
            if key not in best or t < best[key][0]:
                best[key] = (t, c / t)
    print(f"# {src.label} | {args.text}: {len(docs)} documents, {mb:.2f} MB | best of {args.rounds} | "
          f"loadavg {os.getloadavg()[0]:.1f}")
    print("| library | 1 thread MB/s | 2 threads MB/s | b2/b1 | CPU/wall at 2 threads |")
    print("|---|---:|---:|---:|---:|")
    for name in dict.fromkeys(n for n, _ in best):
        t1, _ = best[(name, 1)]
        t2, cw = best[(name, 2)]
        print(f"| {name} | {mb / t1:.1f} | {mb / t2:.1f} | {t1 / t2:.2f} | {cw:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

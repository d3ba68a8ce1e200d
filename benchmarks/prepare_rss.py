"""Memory of ``tokenforge prepare`` over a corpus of several GB: is the RSS curve flat?

Runs ``tokenforge prepare`` on the same input file given N times (a corpus of
N x its size, with no extra disk), samples the resident set size of the whole
process tree and the bytes written every 0.2 s, and plots RSS and throughput
over time. Peak RSS should not grow with N.

    python benchmarks/prepare_rss.py /work/benchdata/prepare/1024MB/corpus.jsonl --copies 4 \\
        --text-field text -t cl100k_base --plot benchmarks/prepare_rss.png

Prints one line per run: input GB, wall seconds, MB/s, peak RSS of the tree,
and the RSS at 25/50/75/100 % of the run (flat means the memory does not
follow the input).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def tree_rss(proc) -> int:
    import psutil

    total = 0
    try:
        procs = [proc] + proc.children(recursive=True)
    except psutil.NoSuchProcess:
        return 0
    for p in procs:
        try:
            total += p.memory_info().rss
        except psutil.NoSuchProcess:
            pass
    return total


def dir_bytes(d: Path) -> int:
    n = 0
    for p in d.glob("*"):
        try:
            n += p.stat().st_size
        except OSError:
            pass
    return n


def run(inputs: list[str], args: argparse.Namespace, copies: int) -> dict:
    import psutil

    out = Path(tempfile.mkdtemp(prefix="prepare_rss_", dir=args.tmp))
    cmd = [sys.executable, "-m", "tokenforge", "prepare", *(inputs * copies), "-t", args.tokenizer, "-o", str(out / "o"),
           "--workers", str(args.workers), "--quiet"]
    if args.text_field:
        cmd += ["--text-field", args.text_field]
    if args.split_on:
        cmd += ["--split-on", args.split_on]
    t0 = time.perf_counter()
    proc = psutil.Popen(cmd)
    samples = []
    while proc.poll() is None:
        samples.append((time.perf_counter() - t0, tree_rss(proc), dir_bytes(out / "o")))
        time.sleep(0.2)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"prepare failed ({proc.returncode}): {' '.join(cmd)}")
    in_bytes = sum(os.path.getsize(p) for p in inputs) * copies
    shutil.rmtree(out, ignore_errors=True)
    return {"copies": copies, "gb": in_bytes / 1e9, "wall": wall, "samples": samples, "cmd": cmd}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("inputs", nargs="+")
    ap.add_argument("--copies", type=int, nargs="+", default=[1, 4])
    ap.add_argument("-t", "--tokenizer", default="cl100k_base")
    ap.add_argument("--text-field", default=None)
    ap.add_argument("--split-on", default=None)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--tmp", default=None, help="where the output goes (deleted after each run)")
    ap.add_argument("--plot", default=None)
    args = ap.parse_args()
    print("# command:", " ".join([Path(sys.executable).name, *sys.argv]))
    runs = [run(args.inputs, args, c) for c in args.copies]
    print("| input GB | wall s | MB/s | peak RSS MiB | RSS at 25% / 50% / 75% / 100% of the run, MiB |")
    print("|---:|---:|---:|---:|---|")
    for r in runs:
        rss = [s[1] for s in r["samples"]] or [0]
        quart = [rss[min(int(len(rss) * q), len(rss) - 1)] / 2**20 for q in (0.25, 0.5, 0.75, 0.999)]
        print(f"| {r['gb']:.2f} | {r['wall']:.1f} | {r['gb'] * 1e3 / r['wall']:.1f} | {max(rss) / 2**20:,.0f} | "
              + " / ".join(f"{q:,.0f}" for q in quart) + " |")
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, (a1, a2) = plt.subplots(2, 1, figsize=(8, 6), sharex=True)
        for r in runs:
            t = [s[0] for s in r["samples"]]
            a1.plot(t, [s[1] / 2**20 for s in r["samples"]], label=f"{r['gb']:.1f} GB input")
            written = [s[2] for s in r["samples"]]
            rate = [0.0] + [(written[i] - written[i - 1]) / 2**20 / max(t[i] - t[i - 1], 1e-9)
                            for i in range(1, len(t))]
            a2.plot(t, rate, label=f"{r['gb']:.1f} GB input", alpha=0.7)
        a1.set_ylabel("RSS of the process tree (MiB)")
        a1.set_ylim(bottom=0)
        a1.legend()
        a2.set_ylabel("tokens written (MiB/s)")
        a2.set_xlabel("seconds")
        fig.suptitle(f"tokenforge prepare, {args.tokenizer}, {args.workers} workers")
        fig.tight_layout()
        fig.savefig(args.plot, dpi=100)
        print("# plot:", args.plot)


if __name__ == "__main__":
    main()

"""BPE training time and peak memory: tokenforge, and HF ``tokenizers`` if installed.

Two workloads:

* **big**: every file of ``/work/shared/data/bench`` (six files, ~89 MB of
  English, Chinese and Japanese text), vocab 10,000, special token
  ``<|endoftext|>``, GPT-2 split pattern, 2 workers. Run once by default
  (``--big-repeats``): pure-Python training takes minutes here.
* **small**: ``/work/shared/data/text/corpus.en`` (133 KB), vocab 500, same
  settings, best of 5 (``--small-repeats``).

Every training run happens in a fresh subprocess of this script, so that its
peak memory is its own. Memory is reported three ways:

* ``tree peak``: the largest sum of RSS over the training process and all of
  its descendants (its worker processes), sampled every 20 ms with psutil
  (needs ``pip install psutil``; a short spike between samples can be missed);
* ``main maxrss``: ``getrusage(RUSAGE_SELF).ru_maxrss`` of the training process;
* ``worker maxrss``: ``getrusage(RUSAGE_CHILDREN).ru_maxrss`` in the training
  process after training: the peak of its *largest* worker (not a sum).

Training time is measured inside the subprocess around the training call
alone (interpreter start-up and imports are not counted). CPU seconds add
user and system time of the process and its workers.

The HF ``tokenizers`` side uses ``models.BPE`` with ``BpeTrainer`` (same vocab
size and special token, the 256-byte initial alphabet, no progress bar) and
the ``ByteLevel`` pre-tokenizer (GPT-2 regex, no prefix space), with
``RAYON_NUM_THREADS`` set to the worker count. It reads files line by line and
breaks ties between equally frequent pairs its own way, so its vocabulary is
close to, not equal to, tokenforge's; the overlap is printed.

    python benchmarks/bench_train.py                 # big once + small best of 5
    python benchmarks/bench_train.py --quick         # small only, best of 2
    python benchmarks/bench_train.py --skip-big
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import DATA_DIR, add_backend_arg, apply_backend, machine_info, print_machine, print_table  # noqa: E402

SPECIAL = "<|endoftext|>"


# --------------------------------------------------------------------------- child side
def run_child(spec: dict) -> None:
    """Train once as described by ``spec`` and write a JSON result to spec["out"]."""
    import resource

    files = spec["files"]
    result: dict = {"lib": spec["lib"]}
    if spec["lib"] == "tokenforge":
        import dataclasses

        import tokenforge

        trainer = tokenforge.BPETrainer(
            spec["vocab"],
            special_tokens=[SPECIAL],
            pattern="gpt2",
            workers=spec["workers"],
            show_progress=False,
        )
        t0 = time.perf_counter()
        tok = trainer.train(files)
        result["seconds"] = time.perf_counter() - t0
        result["report"] = dataclasses.asdict(trainer.last_report)
        tokens = set(tok.mergeable_ranks)
        result["vocab_size"] = len(tok)
        result["merges"] = trainer.last_report.merges_learned
        from _common import backend_info

        result["backend"] = backend_info()["active"]
    else:
        os.environ.setdefault("RAYON_NUM_THREADS", str(spec["workers"]))
        from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

        from tokenforge.bytelevel import decode_string

        tok = Tokenizer(models.BPE())
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
        tok.decoder = decoders.ByteLevel()
        trainer = trainers.BpeTrainer(
            vocab_size=spec["vocab"],
            special_tokens=[SPECIAL],
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
            show_progress=False,
        )
        t0 = time.perf_counter()
        tok.train(files, trainer)
        result["seconds"] = time.perf_counter() - t0
        vocab = tok.get_vocab()
        tokens = {decode_string(s) for s in vocab if s != SPECIAL}
        result["vocab_size"] = len(vocab)
        result["merges"] = len(json.loads(tok.to_str())["model"]["merges"])
        result["report"] = None
    self_ru = resource.getrusage(resource.RUSAGE_SELF)
    kids_ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    result["maxrss_self_kb"] = self_ru.ru_maxrss
    result["maxrss_children_kb"] = kids_ru.ru_maxrss
    result["cpu_seconds"] = self_ru.ru_utime + self_ru.ru_stime + kids_ru.ru_utime + kids_ru.ru_stime
    result["tokens_hex"] = sorted(t.hex() for t in tokens)
    with open(spec["out"], "w", encoding="utf-8") as f:
        json.dump(result, f)


# -------------------------------------------------------------------------- parent side
def spawn(lib: str, files: list[str], vocab: int, workers: int) -> dict:
    """Run one training in a subprocess, sampling the RSS of its process tree."""
    try:
        import psutil
    except ImportError:
        psutil = None
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "result.json")
        spec = {"lib": lib, "files": files, "vocab": vocab, "workers": workers, "out": out}
        env = dict(os.environ)
        if lib == "hf":
            env["RAYON_NUM_THREADS"] = str(workers)
        t0 = time.perf_counter()
        proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--child", json.dumps(spec)], env=env)
        peak = 0
        if psutil is not None:
            try:
                root = psutil.Process(proc.pid)
            except psutil.Error:
                root = None
            while proc.poll() is None and root is not None:
                total = 0
                try:
                    procs = [root] + root.children(recursive=True)
                except psutil.Error:
                    break
                for p in procs:
                    try:
                        total += p.memory_info().rss
                    except psutil.Error:
                        pass
                peak = max(peak, total)
                time.sleep(0.02)
        rc = proc.wait()
        wall = time.perf_counter() - t0
        if rc != 0:
            raise SystemExit(f"training subprocess ({lib}) failed with exit status {rc}")
        with open(out, encoding="utf-8") as f:
            result = json.load(f)
    result["tree_peak_bytes"] = peak or None
    result["wall_seconds"] = wall
    return result


def mib(n: float | None) -> str:
    return "-" if not n else f"{n / 2**20:,.0f}"


def _secs(x: float) -> str:
    return f"{x:.3f}" if x < 10 else f"{x:.1f}"


def row_for(label: str, r: dict, times: list[float]) -> list:
    rep = r.get("report") or {}
    return [
        label,
        _secs(min(times)),
        _secs(statistics.median(times)) if len(times) > 1 else "-",
        _secs(rep["counting_seconds"]) if rep else "-",
        _secs(rep["merging_seconds"]) if rep else "-",
        f"{r['cpu_seconds']:.1f}",
        r.get("merges", "-"),
        rep.get("distinct_pretokens", "-") if rep else "-",
        mib(r["tree_peak_bytes"]),
        mib(r["maxrss_self_kb"] * 1024),
        mib(r["maxrss_children_kb"] * 1024),
    ]


HEADERS = [
    "library", "best s", "median s", "count s", "merge s", "CPU s",
    "merges", "distinct pretokens", "tree peak MiB", "main maxrss MiB", "worker maxrss MiB",
]


def workload(title: str, files: list[str], vocab: int, workers: int, repeats: int, libs: list[str]) -> dict:
    total = sum(os.path.getsize(f) for f in files)
    print(f"## {title}: {len(files)} file(s), {total / 1e6:.1f} MB, vocab {vocab}, "
          f"special {SPECIAL}, GPT-2 pattern, workers={workers}, best of {repeats}\n")
    for f in files:
        print(f"#   {f} ({os.path.getsize(f) / 1e6:.2f} MB)")
    print()
    runs: dict[str, list[dict]] = {}
    for k in range(repeats):
        for lib in (libs if k % 2 == 0 else libs[::-1]):
            print(f"  {title}: {lib} run {k + 1}/{repeats} ...", file=sys.stderr, flush=True)
            runs.setdefault(lib, []).append(spawn(lib, files, vocab, workers))
    rows = []
    best: dict[str, dict] = {}
    for lib in libs:
        rs = runs[lib]
        times = [r["seconds"] for r in rs]
        b = min(rs, key=lambda r: r["seconds"])
        b = dict(b, tree_peak_bytes=max((r["tree_peak_bytes"] or 0) for r in rs) or None)
        best[lib] = {"best": b, "times": times}
        label = "HF tokenizers" if lib == "hf" else f"tokenforge ({b.get('backend', '?')})"
        rows.append(row_for(label, b, times))
    print_table(HEADERS, rows)
    print("\n(memory columns: the largest value over all runs; the other columns: the fastest run)\n")
    out = {"files": files, "bytes": total, "vocab": vocab, "workers": workers, "repeats": repeats,
           "runs": {lib: [{k: v for k, v in r.items() if k != "tokens_hex"} for r in rs] for lib, rs in runs.items()}}
    if "hf" in best:
        tf, hf = best["tokenforge"]["best"], best["hf"]["best"]
        ratio_t = tf["seconds"] / hf["seconds"]
        ratio_cpu = tf["cpu_seconds"] / hf["cpu_seconds"]
        ratio_m = (tf["tree_peak_bytes"] / hf["tree_peak_bytes"]) if tf["tree_peak_bytes"] and hf["tree_peak_bytes"] else None
        a, h = set(tf["tokens_hex"]), set(hf["tokens_hex"])
        overlap = len(a & h) / max(len(a), 1)
        print_table(
            ["measure", "tokenforge / HF"],
            [
                ["training time (best)", f"{ratio_t:.1f}x"],
                ["CPU time", f"{ratio_cpu:.1f}x"],
                ["tree peak RSS", "-" if ratio_m is None else f"{ratio_m:.2f}x"],
                ["vocab overlap (shared tokens / tokenforge tokens)", f"{overlap:.1%} ({len(a & h)} of {len(a)})"],
            ],
        )
        print()
        out.update(time_ratio=ratio_t, cpu_ratio=ratio_cpu, rss_ratio=ratio_m, vocab_overlap=overlap)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--bench-dir", default=os.path.join(DATA_DIR, "bench"), help="big workload folder (default: %(default)s)")
    ap.add_argument("--big-vocab", type=int, default=10_000, help="default: %(default)s")
    ap.add_argument("--big-repeats", type=int, default=1, help="default: %(default)s")
    ap.add_argument("--small-file", default=os.path.join(DATA_DIR, "text", "corpus.en"), help="default: %(default)s")
    ap.add_argument("--small-vocab", type=int, default=500, help="default: %(default)s")
    ap.add_argument("--small-repeats", type=int, default=5, help="default: %(default)s")
    ap.add_argument("--workers", type=int, default=2, help="training workers / rayon threads (default: %(default)s)")
    ap.add_argument("--skip-big", action="store_true", help="only the small workload")
    ap.add_argument("--skip-small", action="store_true", help="only the big workload")
    ap.add_argument("--no-hf", action="store_true", help="do not run HF tokenizers even if installed")
    ap.add_argument("--quick", action="store_true", help="small workload only, best of 2")
    ap.add_argument("--json", metavar="PATH", help="also write all figures to this JSON file")
    add_backend_arg(ap)
    args = ap.parse_args(argv)
    apply_backend(args.backend)
    if args.child:
        run_child(json.loads(args.child))
        return 0
    if args.quick:
        args.skip_big = True
        args.small_repeats = min(args.small_repeats, 2)

    info = machine_info()
    libs = ["tokenforge"]
    hf_note = "not requested (--no-hf)"
    if not args.no_hf:
        try:
            import tokenizers

            libs.append("hf")
            hf_note = f"tokenizers {tokenizers.__version__}"
        except ImportError:
            hf_note = "NOT INSTALLED (pip install tokenizers): no comparison"
    try:
        import psutil

        mem_note = f"psutil {psutil.__version__}"
    except ImportError:
        mem_note = "psutil not installed: no tree peak, getrusage only"
    info["hf_tokenizers"] = hf_note
    print_machine(info)
    print(f"# command: {' '.join([os.path.basename(sys.executable)] + sys.argv)}")
    print(f"# HF: {hf_note}; memory: {mem_note}; MiB = 2**20 bytes\n")

    results = {"machine": info, "args": vars(args)}
    if not args.skip_big:
        files = sorted(str(p) for p in Path(args.bench_dir).iterdir() if p.is_file())
        results["big"] = workload("big", files, args.big_vocab, args.workers, args.big_repeats, libs)
    if not args.skip_small:
        results["small"] = workload("small", [args.small_file], args.small_vocab, args.workers, args.small_repeats, libs)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""BPE training time and peak memory: tokenforge, rustbpe and HF ``tokenizers``.

Workloads:

* **big**: every file of ``/work/shared/data/bench`` (six files, 90.8 MB of
  English, Chinese and Japanese text), at vocab 10,000 and 32,000
  (``--big-vocabs``), special token ``<|endoftext|>``, GPT-2 split pattern,
  2 workers/threads. Each library runs once per vocab by default
  (``--big-repeats``).
* **small**: ``/work/shared/data/text/corpus.en`` (133 KB), vocab 500, same
  settings, best of 5 (``--small-repeats``).
* **scale** (``--scale``, tokenforge only): a ~2 GB file (``--scale-bytes``)
  built in ``--scale-dir`` by concatenating the big files over and over,
  trained at vocab 10,000 with 2 workers; the file is deleted afterwards.

Every training run happens in a fresh subprocess of this script, so that its
peak memory is its own. Memory is reported three ways:

* ``tree peak``: the largest sum of RSS over the training process and all of
  its descendants (its worker processes), sampled every 20 ms with psutil
  (a short spike between samples can be missed; threads are inside the
  process, so rustbpe's and HF's rayon threads are included);
* ``main maxrss``: ``getrusage(RUSAGE_SELF).ru_maxrss`` of the training process;
* ``worker maxrss``: ``getrusage(RUSAGE_CHILDREN).ru_maxrss`` in the training
  process after training: the peak of its *largest* worker (not a sum).

Training time is measured inside the subprocess around the training call
alone (interpreter start-up, imports and reading nothing in advance: every
library streams the files during the timed call). CPU seconds add user and
system time of the process and its workers.

The libraries:

* **tokenforge**: ``BPETrainer(vocab, special_tokens=[...], pattern="gpt2",
  workers=N).train(files)``; it counts pre-tokens of whole files (cut at safe
  boundaries) in N worker processes, then merges; ``last_report`` gives the
  counting and merging seconds.
* **rustbpe** (PyPI ``rustbpe``): ``rustbpe.Tokenizer().train_from_iterator(
  lines, vocab_size, pattern=<GPT-2 regex>)`` with ``RAYON_NUM_THREADS=N``; its
  ``vocab_size`` counts the 256 bytes plus merges and it has no special
  tokens, so it is given ``vocab - 1`` (the same number of merges as
  tokenforge). It is fed the files line by line from a Python generator.
* **HF tokenizers**: ``models.BPE`` with ``BpeTrainer`` (same vocab size and
  special token, the 256-byte initial alphabet, no progress bar) and the
  ``ByteLevel`` pre-tokenizer (GPT-2 regex, no prefix space), with
  ``RAYON_NUM_THREADS=N``; it reads the files itself, line by line.

rustbpe and HF split documents at line ends and break ties between equally
frequent pairs their own way, so their vocabularies are close to, not equal
to, tokenforge's; the overlap is printed.

    python benchmarks/bench_train.py                      # big (10k, 32k) + small
    python benchmarks/bench_train.py --scale --skip-big --skip-small
    python benchmarks/bench_train.py --quick              # small only, best of 2
    python benchmarks/bench_train.py --libs tokenforge,rustbpe --big-vocabs 10000
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

from _common import (  # noqa: E402
    DATA_DIR,
    _dist_version,
    add_backend_arg,
    apply_backend,
    machine_info,
    print_machine,
    print_table,
)

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
    elif spec["lib"] == "rustbpe":
        import rustbpe

        import tokenforge

        pattern = tokenforge.get_encoding("gpt2").pattern

        def lines():
            for path in files:
                with open(path, encoding="utf-8", errors="replace", newline="") as fh:
                    yield from fh

        tok = rustbpe.Tokenizer()
        t0 = time.perf_counter()
        tok.train_from_iterator(lines(), spec["vocab"] - 1, pattern=pattern)
        result["seconds"] = time.perf_counter() - t0
        ranks = tok.get_mergeable_ranks()
        items = ranks.items() if isinstance(ranks, dict) else ranks
        tokens = {bytes(b) for b, _ in items}
        result["vocab_size"] = tok.vocab_size
        result["merges"] = tok.vocab_size - 256
        result["report"] = None
    else:
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
        if lib in ("hf", "rustbpe"):
            env["RAYON_NUM_THREADS"] = str(workers)
        t0 = time.perf_counter()
        proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--child", json.dumps(spec)], env=env)
        peak = 0
        peak_at = None
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
                if total > peak:
                    peak, peak_at = total, time.perf_counter() - t0
                time.sleep(0.02)
        rc = proc.wait()
        wall = time.perf_counter() - t0
        if rc != 0:
            raise SystemExit(f"training subprocess ({lib}) failed with exit status {rc}")
        with open(out, encoding="utf-8") as f:
            result = json.load(f)
    result["tree_peak_bytes"] = peak or None
    result["tree_peak_at_seconds"] = peak_at
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


LABELS = {"hf": "HF tokenizers", "rustbpe": "rustbpe"}


def lib_label(lib: str, r: dict) -> str:
    return LABELS.get(lib) or f"tokenforge ({r.get('backend', '?')})"


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
        rows.append(row_for(lib_label(lib, b), b, times))
    print_table(HEADERS, rows)
    print("\n(memory columns: the largest value over all runs; the other columns: the fastest run)\n")
    out = {"files": files, "bytes": total, "vocab": vocab, "workers": workers, "repeats": repeats,
           "runs": {lib: [{k: v for k, v in r.items() if k != "tokens_hex"} for r in rs] for lib, rs in runs.items()},
           "vs": {}}
    if "tokenforge" in best and len(best) > 1:
        tf = best["tokenforge"]["best"]
        a = set(tf["tokens_hex"])
        ratio_rows = []
        for lib in libs:
            if lib == "tokenforge":
                continue
            o = best[lib]["best"]
            ratio_t = tf["seconds"] / o["seconds"]
            ratio_cpu = tf["cpu_seconds"] / o["cpu_seconds"]
            ratio_m = (tf["tree_peak_bytes"] / o["tree_peak_bytes"]) if tf["tree_peak_bytes"] and o["tree_peak_bytes"] else None
            h = set(o["tokens_hex"])
            overlap = len(a & h) / max(len(a), 1)
            ratio_rows.append([
                LABELS[lib], f"{ratio_t:.2f}x", f"{1 / ratio_t:.1f}x", f"{ratio_cpu:.2f}x",
                "-" if ratio_m is None else f"{ratio_m:.2f}x", f"{overlap:.1%} ({len(a & h)} of {len(a)})",
            ])
            out["vs"][lib] = {"time_ratio": ratio_t, "speedup": 1 / ratio_t, "cpu_ratio": ratio_cpu,
                              "rss_ratio": ratio_m, "vocab_overlap": overlap}
        print_table(["tokenforge vs", "time ratio (tf/other)", "tokenforge speed-up", "CPU ratio",
                     "tree peak RSS ratio", "vocab overlap (shared / tokenforge tokens)"], ratio_rows)
        print()
    return out


def scale_demo(bench_files: list[str], target: int, scale_dir: str, vocab: int, workers: int) -> dict:
    """Build a ~``target``-byte file from the bench files, train tokenforge on it once, delete it."""
    os.makedirs(scale_dir, exist_ok=True)
    path = os.path.join(scale_dir, f"tokenforge_scale_{target // 10**6}MB.txt")
    print(f"## scale: tokenforge only, one file of ~{target / 1e9:.1f} GB built from the bench files, vocab {vocab}, "
          f"special {SPECIAL}, GPT-2 pattern, workers={workers}\n")
    print(f"  scale: writing {path} ...", file=sys.stderr, flush=True)
    t0 = time.perf_counter()
    written = 0
    passes = 0
    try:
        with open(path, "wb") as out:
            while written < target:
                passes += 1
                for f in bench_files:
                    with open(f, "rb") as src:
                        data = src.read()
                    if not data.endswith(b"\n"):
                        data += b"\n"
                    out.write(data)
                    written += len(data)
                    if written >= target:
                        break
        build_s = time.perf_counter() - t0
        print(f"#   {path}: {written / 1e9:.3f} GB ({written:,} B), {passes} pass(es) over the bench files, "
              f"written in {build_s:.1f}s (not counted)\n")
        print("  scale: tokenforge ...", file=sys.stderr, flush=True)
        r = spawn("tokenforge", [path], vocab, workers)
    finally:
        if os.path.exists(path):
            os.remove(path)
            print(f"#   deleted {path}\n")
    rep = r["report"] or {}
    mb = written / 1e6
    print_table(
        ["measure", "value"],
        [
            ["input", f"{written / 1e9:.3f} GB"],
            ["training time (inside the process)", f"{r['seconds']:.1f} s ({r['seconds'] / 60:.1f} min)"],
            ["wall time incl. interpreter start", f"{r['wall_seconds']:.1f} s"],
            ["counting (parallel pre-token count)", f"{rep.get('counting_seconds', 0):.1f} s "
                                                    f"({mb / rep['counting_seconds']:.0f} MB/s)" if rep else "-"],
            ["merging", f"{rep.get('merging_seconds', 0):.1f} s" if rep else "-"],
            ["merges learned", r.get("merges", "-")],
            ["distinct pre-tokens", f"{rep.get('distinct_pretokens', 0):,}" if rep else "-"],
            ["CPU seconds (process + workers)", f"{r['cpu_seconds']:.1f}"],
            ["tree peak RSS (process + workers)", f"{mib(r['tree_peak_bytes'])} MiB"],
            ["main maxrss", f"{mib(r['maxrss_self_kb'] * 1024)} MiB"],
            ["largest worker maxrss", f"{mib(r['maxrss_children_kb'] * 1024)} MiB"],
        ],
    )
    print()
    return {"path": path, "bytes": written, "passes": passes, "vocab": vocab, "workers": workers,
            "run": {k: v for k, v in r.items() if k != "tokens_hex"}}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--bench-dir", default=os.path.join(DATA_DIR, "bench"), help="big workload folder (default: %(default)s)")
    ap.add_argument("--big-vocabs", default="10000,32000", help="comma-separated (default: %(default)s)")
    ap.add_argument("--big-repeats", type=int, default=1, help="default: %(default)s")
    ap.add_argument("--small-file", default=os.path.join(DATA_DIR, "text", "corpus.en"), help="default: %(default)s")
    ap.add_argument("--small-vocab", type=int, default=500, help="default: %(default)s")
    ap.add_argument("--small-repeats", type=int, default=5, help="default: %(default)s")
    ap.add_argument("--workers", type=int, default=2, help="training workers / rayon threads (default: %(default)s)")
    ap.add_argument("--libs", default="tokenforge,rustbpe,hf", help="comma-separated (default: %(default)s)")
    ap.add_argument("--skip-big", action="store_true", help="no big workload")
    ap.add_argument("--skip-small", action="store_true", help="no small workload")
    ap.add_argument("--scale", action="store_true", help="also run the ~2 GB tokenforge-only scale demo")
    ap.add_argument("--scale-bytes", type=float, default=2e9, help="size of the scale file (default: %(default)s)")
    ap.add_argument("--scale-dir", default="/tmp", help="where the scale file is written, then deleted (default: %(default)s)")
    ap.add_argument("--scale-vocab", type=int, default=10_000, help="default: %(default)s")
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
    wanted = [x.strip() for x in args.libs.split(",") if x.strip()]
    libs: list[str] = []
    lib_notes = []
    for lib in wanted:
        mod = {"tokenforge": "tokenforge", "rustbpe": "rustbpe", "hf": "tokenizers"}.get(lib)
        if mod is None:
            ap.error(f"unknown library {lib!r}; known: tokenforge, rustbpe, hf")
        try:
            __import__(mod)
            libs.append(lib)
            lib_notes.append(f"{lib} {_dist_version({'hf': 'tokenizers'}.get(lib, lib))}")
        except ImportError:
            lib_notes.append(f"{lib} NOT INSTALLED")
    info["libraries"] = lib_notes
    try:
        import psutil

        mem_note = f"psutil {psutil.__version__}"
    except ImportError:
        mem_note = "psutil not installed: no tree peak, getrusage only"
    print_machine(info)
    print(f"# command: {' '.join([os.path.basename(sys.executable)] + sys.argv)}")
    print(f"# libraries: {', '.join(lib_notes)}; memory: {mem_note}; MiB = 2**20 bytes\n")

    results: dict = {"machine": info, "args": vars(args)}
    bench_files = sorted(str(p) for p in Path(args.bench_dir).iterdir() if p.is_file())
    if not args.skip_big:
        for v in [int(x) for x in args.big_vocabs.split(",") if x.strip()]:
            results[f"big_{v}"] = workload(f"big vocab {v}", bench_files, v, args.workers, args.big_repeats, libs)
    if not args.skip_small:
        results["small"] = workload("small", [args.small_file], args.small_vocab, args.workers, args.small_repeats, libs)
    if args.scale:
        results["scale"] = scale_demo(bench_files, int(args.scale_bytes), args.scale_dir, args.scale_vocab, args.workers)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

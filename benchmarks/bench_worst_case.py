"""Adversarial inputs: throughput against English, and how encode time scales,
tokenforge beside tiktoken.

Inputs are generated deterministically (fixed seeds) at several sizes
(10 KB, 100 KB, 1 MB for both libraries, then 2 MB and 4 MB for tokenforge
only; 1 KB = 1000 bytes of UTF-8):

* ``letter``  - one letter repeated (``aaaa...``): one giant pre-token
* ``spaces``  - a run of spaces: one giant whitespace pre-token
* ``digits``  - random decimal digits (GPT-2 keeps them as one giant piece)
* ``json``    - minified JSON records (many short pieces, lots of punctuation)
* ``newlines`` - a run of line feeds
* ``random``  - random lowercase letters, no spaces: one giant piece whose
  merges are all different
* ``dashes``  - one punctuation character repeated (``-----...``): one giant piece
* ``punct``   - random ASCII punctuation without spaces: one giant piece
* ``base64``  - a base64 blob without line breaks
* ``cjk``     - one CJK character repeated (3 UTF-8 bytes each)

Each cell is the best of ``--repeats`` runs of ``encode_ordinary(text)``.
tokenforge gets a freshly built tokenizer for every run, which first encodes
a short warm-up string (untimed) so that the native core's one-time trie
index (built lazily, at once for a piece of 64 KB or more, 30-300 ms; the
warm-up holds such a piece) is *not* in the cell; the column ``1MB cold`` gives the 1 MB figure *with* that one-time
cost (first call on a fresh tokenizer). tiktoken uses one ``Encoding`` per
encoding (it has no cache and no lazy set-up).

In the same run and the same way, both libraries encode the English corpus
of ``bench_encode.py`` (~1 MB); ``x English`` is a worst case's MB/s
divided by that library's English MB/s (the target for tokenforge is >= 1/3).
``slope`` is the log-log slope of time against size between two sizes
(1.0 = linear, 2.0 = quadratic).

A library whose projected time for the next size exceeds ``--max-seconds``
skips it (``skip``); one that raises on an input is shown as ``error`` and
skips the larger sizes of that input (the exception is printed as a note).
Ids of both libraries are compared in every cell both ran; at the
tokenforge-only sizes, ``decode(ids) == text`` is checked instead. A
mismatch, or an exception from tokenforge, is printed loudly and the script
exits with status 1.

A log-log plot of time against size (all inputs, both libraries, one panel
per encoding) is written to ``--plot`` (default
``benchmarks/worst_case_scaling.png``; needs matplotlib).

    python benchmarks/bench_worst_case.py
    python benchmarks/bench_worst_case.py --max-size 100000 --encodings cl100k_base --no-plot
"""

from __future__ import annotations

import base64
import argparse
import json
import math
import os
import random
import string
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import (  # noqa: E402
    Reference,
    add_backend_arg,
    apply_backend,
    fmt_seconds,
    machine_info,
    mismatch_report,
    print_machine,
    print_table,
    timed,
    tokenizer_backend,
)

INPUTS = ("letter", "spaces", "newlines", "digits", "json", "random", "dashes", "punct", "base64", "cjk")
ENCODINGS = ("gpt2", "cl100k_base", "o200k_base")
SIZES = (10_000, 100_000, 1_000_000)
TF_SIZES = (2_000_000, 4_000_000)
# a piece of 64 KB+ makes the native core build its one-time trie index at once (it is
# otherwise built lazily, once long pieces have cost enough): the cells then exclude it
WARMUP = "Hello, world! " + "a" * 70_000
HERE = os.path.dirname(os.path.abspath(__file__))


def _json_text(n: int) -> str:
    rng = random.Random(1234)
    words = ["alpha", "beta", "gamma", "delta", "id", "name", "value", "tags", "x", "y", "enabled", "meta"]
    parts: list[str] = []
    total = 0
    i = 0
    while total < n:
        rec = {
            "id": i,
            "name": "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(3, 12))),
            "value": round(rng.uniform(-1e4, 1e4), rng.randint(0, 6)),
            "enabled": rng.random() < 0.5,
            "tags": rng.sample(words, rng.randint(0, 4)),
            "meta": {"x": rng.randint(0, 10**9), "y": None, "path": f"/{rng.choice(words)}/{i:x}"},
        }
        s = json.dumps(rec, separators=(",", ":"))
        parts.append(s)
        total += len(s) + 1
        i += 1
    return ("[" + ",".join(parts) + "]")[:n]


def make_input(kind: str, n: int) -> str:
    """Exactly ``n`` UTF-8 bytes (``n`` rounded down to whole characters for cjk)."""
    if kind == "letter":
        return "a" * n
    if kind == "spaces":
        return " " * n
    if kind == "digits":
        rng = random.Random(7)
        return "".join(rng.choices(string.digits, k=n))
    if kind == "json":
        return _json_text(n)
    if kind == "random":
        rng = random.Random(42)
        return "".join(rng.choices(string.ascii_lowercase, k=n))
    if kind == "newlines":
        return "\n" * n
    if kind == "dashes":  # one punctuation character repeated: a single piece
        return "-" * n
    if kind == "punct":  # random ASCII punctuation without spaces: a single piece
        rng = random.Random(5)
        return "".join(rng.choices(string.punctuation, k=n))
    if kind == "base64":  # a base64 blob without line breaks (a data: URL, a key)
        rng = random.Random(64)
        return base64.b64encode(rng.randbytes(n * 3 // 4 + 3)).decode("ascii")[:n]
    if kind == "cjk":
        return "的" * (n // 3)
    raise SystemExit(f"unknown input {kind!r}; known: {', '.join(INPUTS)}")


def size_label(n: int) -> str:
    if n >= 1_000_000 and n % 1_000_000 == 0:
        return f"{n // 1_000_000}MB"
    if n >= 1000 and n % 1000 == 0:
        return f"{n // 1000}KB"
    return f"{n}B"


def best_time(run, repeats: int, budget: float) -> tuple[float, list[int]]:
    """Best of up to ``repeats`` runs; stops repeating once ``budget`` seconds are spent."""
    best = math.inf
    ids: list[int] = []
    spent = 0.0
    for _ in range(repeats):
        t, ids = run()
        best = min(best, t)
        spent += t
        if spent > budget:
            break
    return best, ids


def slope(t_a: float | None, t_b: float | None, a: int, b: int) -> float | None:
    if not t_a or not t_b or a == b:
        return None
    return math.log(t_b / t_a) / math.log(b / a)


def fmt_slope(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}"


def english_text() -> str:
    from bench_encode import load_corpora

    return load_corpora(["english"], 0, None)["english"][0]


def make_plot(path: str, results: list[dict], encodings: list[str], english: dict) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(encodings), figsize=(5.2 * len(encodings), 4.8), sharey=True, squeeze=False)
    colors = dict(zip(INPUTS, ("tab:blue", "tab:orange", "tab:cyan", "tab:green", "tab:red", "tab:purple", "tab:olive",
                               "tab:pink", "tab:gray", "tab:brown")))
    for ax, enc in zip(axes[0], encodings):
        all_sizes = []
        for res in (r for r in results if r["encoding"] == enc):
            c = colors.get(res["input"], "black")
            for lib, style, marker in (("tokenforge", "-", "o"), ("tiktoken", "--", "x")):
                pts = sorted((int(n), t) for n, t in res["times"][lib].items() if t)
                if pts:
                    xs, ys = zip(*pts)
                    all_sizes += xs
                    ax.plot(xs, ys, style, marker=marker, color=c, markersize=4, linewidth=1.4,
                            label=f"{res['input']} ({lib})" if lib == "tokenforge" else None)
            for n, what in res["errors"]["tiktoken"].items():
                ax.annotate(f"tiktoken {what}", (int(n), ax.get_ylim()[0]), fontsize=7, color=c, rotation=90,
                            va="bottom", ha="center")
        # English reference: time a linear encoder at English speed would take
        if all_sizes:
            lo, hi = min(all_sizes), max(all_sizes)
            for lib, style in (("tokenforge", "-"), ("tiktoken", "--")):
                mbps = english[enc].get(lib)
                if mbps:
                    ax.plot([lo, hi], [lo / 1e6 / mbps, hi / 1e6 / mbps], style, color="grey", linewidth=2.5, alpha=0.35,
                            label=f"English speed ({lib})")
                    if lib == "tokenforge":
                        ax.plot([lo, hi], [3 * lo / 1e6 / mbps, 3 * hi / 1e6 / mbps], ":", color="grey", linewidth=1.2,
                                label="3x English time (target bound)")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(f"{enc}")
        ax.set_xlabel("input size (bytes)")
        ax.grid(True, which="both", alpha=0.25)
    axes[0][0].set_ylabel("seconds per encode (best of N)")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=5, fontsize=8, frameon=False)
    fig.suptitle("Worst-case inputs: encode time vs size (solid = tokenforge, dashed = tiktoken; log-log)", fontsize=11)
    fig.tight_layout(rect=(0, 0.12, 1, 0.95))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--encodings", default=",".join(ENCODINGS), help="comma-separated (default: %(default)s)")
    ap.add_argument("--inputs", default=",".join(INPUTS), help="comma-separated (default: %(default)s)")
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)), help="bytes, both libraries (default: %(default)s)")
    ap.add_argument("--tf-sizes", default=",".join(map(str, TF_SIZES)),
                    help="extra sizes for tokenforge only, '' for none (default: %(default)s)")
    ap.add_argument("--max-size", type=int, default=None, help="drop sizes above this many bytes")
    ap.add_argument("--repeats", "-n", type=int, default=3, help="best of N runs per cell (default: %(default)s)")
    ap.add_argument("--cell-budget", type=float, default=2.0,
                    help="stop repeating a cell once this many seconds are spent on it (default: %(default)s)")
    ap.add_argument("--max-seconds", type=float, default=60.0,
                    help="skip a size whose projected single-run time exceeds this (default: %(default)s)")
    ap.add_argument("--plot", default=os.path.join(HERE, "worst_case_scaling.png"), help="PNG path (default: %(default)s)")
    ap.add_argument("--no-plot", action="store_true", help="do not draw the plot")
    ap.add_argument("--json", metavar="PATH", help="also write all figures to this JSON file")
    add_backend_arg(ap)
    args = ap.parse_args(argv)
    apply_backend(args.backend)
    sizes = sorted(int(s) for s in args.sizes.split(",") if s.strip())
    tf_sizes = sorted(int(s) for s in args.tf_sizes.split(",") if s.strip())
    if args.max_size is not None:
        sizes = [s for s in sizes if s <= args.max_size]
        tf_sizes = [s for s in tf_sizes if s <= args.max_size]
    tf_sizes = [s for s in tf_sizes if not sizes or s > sizes[-1]]
    if not sizes:
        ap.error("no sizes left to run")
    all_sizes = sizes + tf_sizes
    inputs = [k.strip() for k in args.inputs.split(",") if k.strip()]
    for k in inputs:
        make_input(k, 1)  # validate names early
    encodings = [e.strip() for e in args.encodings.split(",") if e.strip()]

    info = machine_info()
    print_machine(info)
    print(f"# command: {' '.join([os.path.basename(sys.executable)] + sys.argv)}")
    print(f"# best of {args.repeats} (cell budget {args.cell_budget}s); tokenforge cells exclude the one-time index "
          f"(fresh tokenizer + untimed warm-up string), '1MB cold' includes it; sizes {', '.join(map(size_label, sizes))}"
          f" both libraries, {', '.join(map(size_label, tf_sizes)) or 'none'} tokenforge only\n")

    t_start = time.perf_counter()
    problems: list[str] = []  # tokenforge is wrong or failed: exit status 1
    notes: list[str] = []  # tiktoken failed on an input: reported, not a tokenforge fault
    results = []
    english_mbps: dict[str, dict[str, float]] = {}
    eng = english_text()
    eng_mb = len(eng.encode("utf-8")) / 1e6
    for enc_name in encodings:
        ref = Reference(enc_name)
        tt = ref.fresh_tiktoken()

        def tf_run(text: str, warm: bool = True):
            tok = ref.fresh_tokenforge()
            if warm:
                tok.encode_ordinary(WARMUP)
            return timed(lambda: tok.encode_ordinary(text))

        # English baseline in the same run, measured the same way
        print(f"  {enc_name} english baseline ...", file=sys.stderr, flush=True)
        t_tf, ids_tf = best_time(lambda: tf_run(eng), args.repeats, 1e9)
        t_tt, ids_tt = best_time(lambda: timed(lambda: tt.encode_ordinary(eng)), args.repeats, 1e9)
        if ids_tf != ids_tt:
            problems.append(mismatch_report(f"{enc_name}/english", ids_tf, ids_tt, tt.decode_bytes))
        english_mbps[enc_name] = {"tokenforge": eng_mb / t_tf, "tiktoken": eng_mb / t_tt}

        rows = []
        summary = []
        for kind in inputs:
            times: dict[str, dict[int, float | None]] = {"tokenforge": {}, "tiktoken": {}}
            skip = {"tokenforge": False, "tiktoken": False}
            errors: dict[str, dict[int, str]] = {"tokenforge": {}, "tiktoken": {}}
            tokens: dict[int, int] = {}
            cold_1mb = None
            for n in all_sizes:
                text = make_input(kind, n)
                print(f"  {enc_name} {kind} {size_label(n)} ...", file=sys.stderr, flush=True)
                ids: dict[str, list[int]] = {}
                for lib in ("tokenforge", "tiktoken"):
                    if n not in sizes and lib == "tiktoken":
                        continue
                    if skip[lib]:
                        times[lib][n] = None
                        continue
                    if lib == "tokenforge":
                        def run():
                            return tf_run(text)
                    else:
                        def run():
                            return timed(lambda: tt.encode_ordinary(text))
                    try:
                        t, ids[lib] = best_time(run, args.repeats, args.cell_budget)
                        if lib == "tokenforge" and n == 1_000_000:
                            cold_1mb, _ = best_time(lambda: tf_run(text, warm=False), args.repeats, args.cell_budget)
                    except BaseException as exc:  # a library that cannot encode this input
                        # (tiktoken's encode_ordinary panics with pyo3's PanicException, a BaseException)
                        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                            raise
                        msg = f"{enc_name}/{kind}/{size_label(n)}: {lib} raised {type(exc).__name__}: {exc}"
                        (problems if lib == "tokenforge" else notes).append(msg)
                        times[lib][n] = None
                        errors[lib][n] = type(exc).__name__
                        skip[lib] = True
                        continue
                    times[lib][n] = t
                    # project the next size with the growth seen so far (at least linear)
                    prev = [m for m in all_sizes if m < n and times[lib].get(m)]
                    exponent = 1.0
                    if prev:
                        exponent = max(1.0, slope(times[lib][prev[-1]], t, prev[-1], n) or 1.0)
                    nxt = [m for m in all_sizes if m > n]
                    if nxt and t * (nxt[0] / n) ** exponent > args.max_seconds:
                        skip[lib] = True
                if "tokenforge" in ids and "tiktoken" in ids:
                    tokens[n] = len(ids["tiktoken"])
                    if ids["tokenforge"] != ids["tiktoken"]:
                        problems.append(
                            mismatch_report(f"{enc_name}/{kind}/{size_label(n)}", ids["tokenforge"], ids["tiktoken"], tt.decode_bytes)
                        )
                elif "tokenforge" in ids:
                    tokens[n] = len(ids["tokenforge"])
                    if n not in sizes and ref.fresh_tokenforge().decode(ids["tokenforge"]) != text:
                        problems.append(f"!!! {enc_name}/{kind}/{size_label(n)}: tokenforge decode(encode(text)) != text")
            slopes: dict[str, list[float | None]] = {}
            for lib in ("tokenforge", "tiktoken"):
                run_sizes = all_sizes if lib == "tokenforge" else sizes
                sl = [slope(times[lib].get(a), times[lib].get(b), a, b) for a, b in zip(all_sizes, all_sizes[1:])]
                slopes[lib] = sl
                rows.append(
                    [kind, lib]
                    + [
                        (fmt_seconds(times[lib][n]) if times[lib].get(n) is not None
                         else ("error" if n in errors[lib] else ("skip" if n in run_sizes else "")))
                        for n in all_sizes
                    ]
                    + [fmt_slope(x) for x in sl]
                )
            one = 1_000_000 if 1_000_000 in sizes else sizes[-1]
            tf1, tt1 = times["tokenforge"].get(one), times["tiktoken"].get(one)
            tf_mbps = one / 1e6 / tf1 if tf1 else None
            tt_mbps = one / 1e6 / tt1 if tt1 else None
            e_tf, e_tt = english_mbps[enc_name]["tokenforge"], english_mbps[enc_name]["tiktoken"]
            i100 = 100_000 if 100_000 in all_sizes else all_sizes[0]
            top = max(n for n in all_sizes if times["tokenforge"].get(n)) if any(times["tokenforge"].values()) else None
            summary.append(
                [
                    kind,
                    tokens.get(one, "-"),
                    f"{tf_mbps:.1f}" if tf_mbps else "-",
                    f"{tt_mbps:.1f}" if tt_mbps else "-",
                    f"{tf_mbps / tt_mbps:.2f}" if tf_mbps and tt_mbps else "-",
                    f"{tf_mbps / e_tf:.2f}" if tf_mbps else "-",
                    ("yes" if tf_mbps and tf_mbps / e_tf >= 1 / 3 else "NO") if tf_mbps else "-",
                    f"{tt_mbps / e_tt:.2f}" if tt_mbps else "-",
                    fmt_slope(slope(times["tokenforge"].get(i100), tf1, i100, one)),
                    fmt_slope(slope(tf1, times["tokenforge"].get(top), one, top)) if top and top > one else "-",
                    fmt_slope(slope(times["tiktoken"].get(i100), tt1, i100, one)),
                    f"{one / 1e6 / cold_1mb:.1f}" if cold_1mb else "-",
                ]
            )
            results.append(
                {"encoding": enc_name, "input": kind, "times": times, "slopes": slopes, "tokens": tokens, "errors": errors,
                 "mbps_1mb": {"tokenforge": tf_mbps, "tiktoken": tt_mbps},
                 "x_english": {"tokenforge": tf_mbps / e_tf if tf_mbps else None, "tiktoken": tt_mbps / e_tt if tt_mbps else None},
                 "tokenforge_1mb_cold_incl_index_s": cold_1mb}
            )
        e = english_mbps[enc_name]
        print(f"## {enc_name}: seconds per encode (best of {args.repeats}; tokenforge [{tokenizer_backend(ref.fresh_tokenforge())}])\n")
        slope_headers = [f"slope {size_label(a)}-{size_label(b)}" for a, b in zip(all_sizes, all_sizes[1:])]
        print_table(["input", "library"] + [size_label(n) for n in all_sizes] + slope_headers, rows)
        one_l = size_label(1_000_000 if 1_000_000 in sizes else sizes[-1])
        print(f"\n## {enc_name}: at {one_l}; English (same run): tokenforge {e['tokenforge']:.1f} MB/s, "
              f"tiktoken {e['tiktoken']:.1f} MB/s\n")
        print_table(
            ["input", "tokens", "tf MB/s", "tt MB/s", "tf/tt", "tf x English", "tf >= 1/3?", "tt x English",
             f"tf slope 100KB-{one_l}", f"tf slope {one_l}-max", f"tt slope 100KB-{one_l}", f"tf {one_l} cold MB/s"],
            summary,
        )
        print()

    print(f"# total wall time {time.perf_counter() - t_start:.1f}s")
    if not args.no_plot:
        try:
            make_plot(args.plot, results, encodings, english_mbps)
            print(f"# plot written to {args.plot}")
        except ImportError as exc:
            print(f"# no plot: {exc} (pip install matplotlib)")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(
                {"machine": info, "args": vars(args), "english_mbps": english_mbps, "results": results,
                 "problems": problems, "notes": notes},
                f,
                indent=1,
            )
    for note in notes:
        print(f"note: {note}")
    if problems:
        bar = "!" * 78
        print(bar)
        print(f"!!! {len(problems)} PROBLEM(S): tokenforge failed or differs from tiktoken")
        for p in problems:
            print(p)
        print(bar)
        return 1
    print("ids identical to tiktoken in every cell that both libraries ran; "
          "tokenforge-only sizes decode back to their input.")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Linearity of encoding on adversarial inputs, tokenforge beside tiktoken.

Inputs are generated deterministically (fixed seeds) at several sizes
(10 KB, 100 KB, 1 MB by default; 1 KB = 1000 bytes of UTF-8):

* ``letter``  - one letter repeated (``aaaa...``): one giant pre-token
* ``spaces``  - a run of spaces: one giant whitespace pre-token
* ``digits``  - random decimal digits (GPT-2 keeps them as one giant piece)
* ``json``    - minified JSON records (many short pieces, lots of punctuation)
* ``random``  - random lowercase letters, no spaces: one giant piece whose
  merges are all different
* ``cjk``     - one CJK character repeated (3 UTF-8 bytes each)

Each cell is the best of ``--repeats`` runs of ``encode(text)``; tokenforge
gets a freshly built tokenizer for every run (empty piece cache, build time
not counted), tiktoken one ``Encoding`` per encoding (it has no cache).
The growth columns divide the time at one size by the time at the previous
size: with sizes ten times apart, about 10 means linear, about 100 quadratic.
A library whose projected time for the next size exceeds ``--max-seconds``
skips it (shown as ``skip``). A library that raises on an input is shown as
``error`` and skips the larger sizes of that input; the exception is printed
after the tables.

Ids of both libraries are compared for every cell; a mismatch, or an
exception from tokenforge, is printed loudly and the script exits with
status 1 (an exception from tiktoken is only reported).

    python benchmarks/bench_worst_case.py
    python benchmarks/bench_worst_case.py --max-size 100000 --encodings cl100k_base
"""

from __future__ import annotations

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
    add_backend_arg,
    apply_backend,
    Reference,
    fmt_ratio,
    fmt_seconds,
    machine_info,
    mismatch_report,
    print_machine,
    print_table,
    timed,
    tokenizer_backend,
)

INPUTS = ("letter", "spaces", "digits", "json", "random", "cjk")
ENCODINGS = ("gpt2", "cl100k_base", "o200k_base")
SIZES = (10_000, 100_000, 1_000_000)


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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--encodings", default=",".join(ENCODINGS), help="comma-separated (default: %(default)s)")
    ap.add_argument("--inputs", default=",".join(INPUTS), help="comma-separated (default: %(default)s)")
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)), help="bytes, comma-separated (default: %(default)s)")
    ap.add_argument("--max-size", type=int, default=None, help="drop sizes above this many bytes")
    ap.add_argument("--repeats", "-n", type=int, default=3, help="best of N runs per cell (default: %(default)s)")
    ap.add_argument("--cell-budget", type=float, default=2.0,
                    help="stop repeating a cell once this many seconds are spent on it (default: %(default)s)")
    ap.add_argument("--max-seconds", type=float, default=60.0,
                    help="skip a size whose projected single-run time exceeds this (default: %(default)s)")
    ap.add_argument("--json", metavar="PATH", help="also write all figures to this JSON file")
    add_backend_arg(ap)
    args = ap.parse_args(argv)
    apply_backend(args.backend)
    sizes = sorted(int(s) for s in args.sizes.split(",") if s.strip())
    if args.max_size is not None:
        sizes = [s for s in sizes if s <= args.max_size]
    if not sizes:
        ap.error("no sizes left to run")
    inputs = [k.strip() for k in args.inputs.split(",") if k.strip()]
    for k in inputs:
        make_input(k, 1)  # validate names early

    info = machine_info()
    print_machine(info)
    print(f"# command: {' '.join([os.path.basename(sys.executable)] + sys.argv)}")
    print(f"# best of {args.repeats} (cell budget {args.cell_budget}s); growth = t(size) / t(previous size)\n")

    t_start = time.perf_counter()
    problems: list[str] = []  # tokenforge is wrong or failed: exit status 1
    notes: list[str] = []  # tiktoken failed on an input: reported, not a tokenforge fault
    results = []
    for enc_name in [e.strip() for e in args.encodings.split(",") if e.strip()]:
        ref = Reference(enc_name)
        tt = ref.fresh_tiktoken()
        rows = []
        summary = []
        for kind in inputs:
            times: dict[str, dict[int, float | None]] = {"tokenforge": {}, "tiktoken": {}}
            skip = {"tokenforge": False, "tiktoken": False}
            errors: dict[str, dict[int, str]] = {"tokenforge": {}, "tiktoken": {}}
            tokens: dict[int, int] = {}
            for n in sizes:
                text = make_input(kind, n)
                print(f"  {enc_name} {kind} {size_label(n)} ...", file=sys.stderr, flush=True)
                ids: dict[str, list[int]] = {}
                for lib in ("tokenforge", "tiktoken"):
                    if skip[lib]:
                        times[lib][n] = None
                        continue
                    if lib == "tokenforge":
                        def run():
                            tok = ref.fresh_tokenforge()
                            return timed(lambda: tok.encode(text))
                    else:
                        def run():
                            return timed(lambda: tt.encode(text))
                    try:
                        t, ids[lib] = best_time(run, args.repeats, args.cell_budget)
                    except Exception as exc:  # a library that cannot encode this input
                        msg = f"{enc_name}/{kind}/{size_label(n)}: {lib} raised {type(exc).__name__}: {exc}"
                        (problems if lib == "tokenforge" else notes).append(msg)
                        times[lib][n] = None
                        errors[lib][n] = type(exc).__name__
                        skip[lib] = True
                        continue
                    times[lib][n] = t
                    # project the next size with the growth seen so far (at least linear)
                    prev = [m for m in sizes if m < n and times[lib].get(m)]
                    exponent = 1.0
                    if prev:
                        p = prev[-1]
                        exponent = max(1.0, math.log(t / times[lib][p]) / math.log(n / p))
                    nxt = [m for m in sizes if m > n]
                    if nxt and t * (nxt[0] / n) ** exponent > args.max_seconds:
                        skip[lib] = True
                if "tokenforge" in ids and "tiktoken" in ids:
                    tokens[n] = len(ids["tiktoken"])
                    if ids["tokenforge"] != ids["tiktoken"]:
                        problems.append(
                            mismatch_report(f"{enc_name}/{kind}/{size_label(n)}", ids["tokenforge"], ids["tiktoken"], tt.decode_bytes)
                        )
            growth: dict[str, list[float | None]] = {}
            for lib in ("tokenforge", "tiktoken"):
                g = []
                for a, b in zip(sizes, sizes[1:]):
                    ta, tb = times[lib].get(a), times[lib].get(b)
                    g.append(tb / ta if ta and tb else None)
                growth[lib] = g
                rows.append(
                    [kind, lib]
                    + [
                        fmt_seconds(times[lib][n]) if times[lib][n] is not None else ("error" if n in errors[lib] else "skip")
                        for n in sizes
                    ]
                    + [fmt_ratio(x) if x is not None else "-" for x in g]
                )
            top = sizes[-1]
            tf_top, tt_top = times["tokenforge"].get(top), times["tiktoken"].get(top)
            summary.append(
                [
                    kind,
                    tokens.get(top, "-"),
                    fmt_ratio(growth["tokenforge"][-1]) if growth["tokenforge"] and growth["tokenforge"][-1] else "-",
                    fmt_ratio(growth["tiktoken"][-1]) if growth["tiktoken"] and growth["tiktoken"][-1] else "-",
                    f"{tf_top / tt_top:.1f}" if tf_top and tt_top else "-",
                    f"{top / 1e6 / tf_top:.2f}" if tf_top else "-",
                    f"{top / 1e6 / tt_top:.2f}" if tt_top else "-",
                ]
            )
            results.append(
                {"encoding": enc_name, "input": kind, "times": times, "growth": growth, "tokens": tokens, "errors": errors}
            )
        print(f"## {enc_name}: seconds per encode (best of {args.repeats}; tokenforge [{tokenizer_backend(ref.fresh_tokenforge())}])\n")
        growth_headers = [f"{size_label(b)}/{size_label(a)}" for a, b in zip(sizes, sizes[1:])]
        print_table(["input", "library"] + [size_label(n) for n in sizes] + growth_headers, rows)
        last = f"{size_label(sizes[-1])}/{size_label(sizes[-2])}" if len(sizes) > 1 else "-"
        print(f"\n## {enc_name}: summary at {size_label(sizes[-1])}\n")
        print_table(
            ["input", "tokens", f"tf growth {last}", f"tt growth {last}", "tf/tt time", "tf MB/s", "tt MB/s"],
            summary,
        )
        print()

    print(f"# total wall time {time.perf_counter() - t_start:.1f}s")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(
                {"machine": info, "args": vars(args), "results": results, "problems": problems, "notes": notes},
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
    print("ids identical to tiktoken in every cell that both libraries ran.")
    return 0


if __name__ == "__main__":
    sys.exit(main())

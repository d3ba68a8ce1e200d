"""Encode and decode throughput of tokenforge against tiktoken, same data, same run.

For each encoding (gpt2, cl100k_base, o200k_base by default) and each corpus
(English, Chinese, Japanese, Python code), both libraries encode the same
text with ``encode(text, allowed_special="all")``:

* **cold**: on a freshly built object. For tokenforge that means a new
  ``Tokenizer(BPE.from_ranks(ranks), pre_tokenizer=<pattern name>, ...)``
  whose piece cache is empty (``get_encoding`` caches instances, so it is not
  used for timing); the pattern is passed by name ("cl100k"), as
  ``get_encoding`` does, because an unnamed regex string gets no native
  scanner. tiktoken gets a fresh ``Encoding`` built offline from the same
  ranks and pattern. Construction time is not counted.
* **warm**: a second ``encode`` of the same text on that same object.
* **decode**: ``decode(ids)`` of the ids just produced.

Each figure is the best of ``--repeats`` runs; the two libraries alternate
inside every repeat so that machine noise hits both alike. Throughput is
MB/s of UTF-8 *input* bytes (1 MB = 10**6 bytes); the ratio column is
tokenforge / tiktoken (1.0 = parity, 0.1 = ten times slower).

The ids of both libraries are compared on every run (cold and warm), and the
decoded text is compared with the input. Any difference is printed loudly
and the script exits with status 1 after the tables.

    python benchmarks/bench_encode.py               # full run
    python benchmarks/bench_encode.py --quick       # ~100 KB per corpus, 1 repeat
    python benchmarks/bench_encode.py --encodings cl100k_base --corpora english,code
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import sysconfig
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import (  # noqa: E402
    add_backend_arg,
    apply_backend,
    DATA_DIR,
    Reference,
    fmt_ratio,
    machine_info,
    mismatch_report,
    print_machine,
    print_table,
    timed,
    tokenizer_backend,
)

ENCODINGS = ("gpt2", "cl100k_base", "o200k_base")
CORPORA = ("english", "chinese", "japanese", "code")
TEXT_DIR = Path(DATA_DIR) / "text"


def stdlib_code(limit_bytes: int) -> tuple[str, list[str]]:
    """About ``limit_bytes`` of Python stdlib source: top-level ``*.py`` files of
    ``sysconfig.get_paths()["stdlib"]`` in sorted name order, whole files
    concatenated until the total reaches the limit."""
    root = Path(sysconfig.get_paths()["stdlib"])
    parts: list[str] = []
    used: list[str] = []
    total = 0
    for path in sorted(root.glob("*.py"), key=lambda p: p.name):
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        parts.append(text)
        used.append(path.name)
        total += len(text.encode("utf-8"))
        if total >= limit_bytes:
            break
    return "".join(parts), used


def truncate_utf8(text: str, limit_bytes: int | None) -> str:
    if limit_bytes is None:
        return text
    data = text.encode("utf-8")
    if len(data) <= limit_bytes:
        return text
    return data[:limit_bytes].decode("utf-8", "ignore")


def load_corpora(names: list[str], code_bytes: int, limit_bytes: int | None) -> dict[str, tuple[str, str]]:
    """``{name: (text, description)}``."""
    out: dict[str, tuple[str, str]] = {}
    for name in names:
        if name == "english":
            files = ["tinystories_valid_sample.txt", "botchan.txt"]
            text = "".join((TEXT_DIR / f).read_text(encoding="utf-8") for f in files)
            desc = " + ".join(files)
        elif name == "chinese":
            text = (TEXT_DIR / "hongloumeng.txt").read_text(encoding="utf-8")
            desc = "hongloumeng.txt"
        elif name == "japanese":
            text = (TEXT_DIR / "wagahaiwa_nekodearu.txt").read_text(encoding="utf-8")
            desc = "wagahaiwa_nekodearu.txt"
        elif name == "code":
            text, used = stdlib_code(code_bytes)
            desc = f"{len(used)} stdlib files {used[0]}..{used[-1]} ({sysconfig.get_paths()['stdlib']})"
        else:
            raise SystemExit(f"unknown corpus {name!r}; known: {', '.join(CORPORA)}")
        out[name] = (truncate_utf8(text, limit_bytes), desc)
    return out


def split_halves(text: str) -> tuple[str, str]:
    """Cut ``text`` at the first newline after its middle (or the middle itself)."""
    mid = len(text) // 2
    cut = text.find("\n", mid)
    cut = mid if cut < 0 else cut + 1
    return text[:cut], text[cut:]


MEASURES = ("cold", "steady", "warm", "dec")


def bench_one(ref: Reference, text: str, repeats: int, label: str, problems: list[str]) -> dict:
    """Best-of-``repeats`` times for both libraries.

    cold: encode ``text`` on a fresh object; warm: the same call again on that
    object; dec: decode the ids; steady: on another fresh object, encode the
    first half of ``text`` untimed, then time the second half.
    """
    first, second = split_halves(text)
    best = {f"{lib}_{m}": math.inf for lib in ("tf", "tt") for m in MEASURES}
    n_tokens = None
    for r in range(repeats):
        order = ("tf", "tt") if r % 2 == 0 else ("tt", "tf")
        ids: dict[str, list[int]] = {}
        second_ids: dict[str, list[int]] = {}
        for lib in order:
            name = "tokenforge" if lib == "tf" else "tiktoken"
            fresh = ref.fresh_tokenforge if lib == "tf" else ref.fresh_tiktoken
            obj = fresh()
            t_cold, cold_ids = timed(lambda: obj.encode(text, allowed_special="all"))
            t_warm, warm_ids = timed(lambda: obj.encode(text, allowed_special="all"))
            t_dec, decoded = timed(lambda: obj.decode(cold_ids))
            obj = fresh()
            obj.encode(first, allowed_special="all")
            t_steady, steady_ids = timed(lambda: obj.encode(second, allowed_special="all"))
            obj = None  # drop the tokenizer (and its cache) before the next library runs
            for m, t in (("cold", t_cold), ("warm", t_warm), ("dec", t_dec), ("steady", t_steady)):
                best[f"{lib}_{m}"] = min(best[f"{lib}_{m}"], t)
            if warm_ids != cold_ids:
                problems.append(f"!!! [{label}] {name}: warm ids differ from cold ids (cache changed a result)")
            if decoded != text:
                problems.append(f"!!! [{label}] {name}: decode(encode(text)) != text")
            ids[lib] = cold_ids
            second_ids[lib] = steady_ids
        decode_bytes = ref.fresh_tiktoken().decode_bytes
        if ids["tf"] != ids["tt"]:
            problems.append(mismatch_report(f"{label} repeat {r}", ids["tf"], ids["tt"], decode_bytes))
        if second_ids["tf"] != second_ids["tt"]:
            problems.append(mismatch_report(f"{label} second half, repeat {r}", second_ids["tf"], second_ids["tt"], decode_bytes))
        n_tokens = len(ids["tt"])
    return {
        **best,
        "tokens": n_tokens,
        "mb": len(text.encode("utf-8")) / 1e6,
        "mb_second": len(second.encode("utf-8")) / 1e6,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--encodings", default=",".join(ENCODINGS), help="comma-separated (default: %(default)s)")
    ap.add_argument("--corpora", default=",".join(CORPORA), help="comma-separated (default: %(default)s)")
    ap.add_argument("--repeats", "-n", type=int, default=3, help="best of N runs (default: %(default)s)")
    ap.add_argument("--code-bytes", type=int, default=1_000_000, help="bytes of stdlib code (default: %(default)s)")
    ap.add_argument("--limit-bytes", type=int, default=None, help="truncate every corpus to this many bytes")
    ap.add_argument("--quick", action="store_true", help="fast smoke run: 100 KB per corpus, 1 repeat")
    ap.add_argument("--json", metavar="PATH", help="also write all figures to this JSON file")
    add_backend_arg(ap)
    args = ap.parse_args(argv)
    apply_backend(args.backend)
    if args.quick:
        args.repeats = 1
        args.limit_bytes = args.limit_bytes or 100_000
        args.code_bytes = min(args.code_bytes, args.limit_bytes)
    if args.repeats < 1:
        ap.error("--repeats must be >= 1")

    info = machine_info()
    print_machine(info)
    print(f"# command: {' '.join([os.path.basename(sys.executable)] + sys.argv)}")
    print(f"# best of {args.repeats}; MB/s of UTF-8 input (1 MB = 1e6 B); ratio = tokenforge / tiktoken\n")

    corpora = load_corpora([c.strip() for c in args.corpora.split(",") if c.strip()], args.code_bytes, args.limit_bytes)
    for name, (text, desc) in corpora.items():
        print(f"# corpus {name}: {len(text.encode('utf-8')) / 1e6:.3f} MB, {len(text)} chars: {desc}")
    print()

    problems: list[str] = []
    results = []
    for enc_name in [e.strip() for e in args.encodings.split(",") if e.strip()]:
        ref = Reference(enc_name)
        enc_rows, dec_rows = [], []
        for cname, (text, _) in corpora.items():
            label = f"{enc_name}/{cname}"
            print(f"  running {label} ...", file=sys.stderr, flush=True)
            res = bench_one(ref, text, args.repeats, label, problems)
            rate = {}
            for lib in ("tf", "tt"):
                for m in MEASURES:
                    mb = res["mb_second"] if m == "steady" else res["mb"]
                    rate[f"{lib}_{m}"] = mb / res[f"{lib}_{m}"]
            ratio = {m: rate[f"tf_{m}"] / rate[f"tt_{m}"] for m in MEASURES}
            results.append({"encoding": enc_name, "corpus": cname, **res, "mbps": rate, "ratio": ratio})
            row = [cname, f"{res['mb']:.2f}", res["tokens"]]
            for m in ("cold", "steady", "warm"):
                row += [f"{rate[f'tf_{m}']:.2f}", f"{rate[f'tt_{m}']:.2f}", fmt_ratio(ratio[m])]
            enc_rows.append(row)
            dec_rows.append([cname, f"{res['mb']:.2f}", res["tokens"], f"{rate['tf_dec']:.1f}", f"{rate['tt_dec']:.1f}", fmt_ratio(ratio["dec"])])
        print(f"## {enc_name}: encode (MB/s; tf = tokenforge [{tokenizer_backend(ref.fresh_tokenforge())}], tt = tiktoken)\n")
        headers = ["corpus", "MB", "tokens"]
        for m in ("cold", "steady", "warm"):
            headers += [f"tf {m}", f"tt {m}", f"ratio {m}"]
        print_table(headers, enc_rows)
        print(f"\n## {enc_name}: decode (MB/s of decoded text)\n")
        print_table(["corpus", "MB", "tokens", "tf", "tt", "ratio"], dec_rows)
        print()

    print("## summary: geometric mean of tokenforge/tiktoken over all encodings and corpora\n")
    summary_rows = []
    for m in MEASURES:
        vals = [r["ratio"][m] for r in results]
        g = math.exp(sum(math.log(v) for v in vals) / len(vals))
        summary_rows.append([{"dec": "decode"}.get(m, m), fmt_ratio(g), fmt_ratio(min(vals)), fmt_ratio(max(vals))])
    print_table(["measure", "geomean ratio", "min", "max"], summary_rows)
    print()

    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"machine": info, "args": vars(args), "results": results, "problems": problems}, f, indent=1)

    if problems:
        bar = "!" * 78
        print(bar)
        print(f"!!! {len(problems)} CORRECTNESS PROBLEM(S): tokenforge does not match tiktoken")
        for p in problems:
            print(p)
        print(bar)
        return 1
    print("ids identical to tiktoken on every run; decode round-trips exactly.")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Loading an encoding from its local rank file: tokenforge vs tiktoken, same file, same run.

    python benchmarks/bench_load.py [--repeat 7]

tokenforge: ``tokenforge.load(path)`` (parse, build the model and the native
core; the pattern and specials come from the file's sha256). tiktoken:
``load_tiktoken_bpe(path)`` + ``tiktoken.Encoding(...)`` with the same pattern
and specials. Each measurement runs in a fresh subprocess (nothing cached);
the best of ``--repeat`` is kept, runs alternating between the libraries.
Also shown: ``tokenforge.get_encoding(name)`` from the xz file shipped in the
package (decompression and sha256 check included).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import DATA_DIR, machine_info, print_machine  # noqa: E402

SNIPPETS = {
    "tokenforge.load": (
        "import time, tokenforge; t=time.perf_counter(); tok=tokenforge.load({path!r}); "
        "tok.encode('warm up'); print(time.perf_counter()-t)"
    ),
    "tiktoken": (
        "import time, tiktoken, tokenforge; from tiktoken.load import load_tiktoken_bpe; "
        "ref=tokenforge.get_encoding({name!r}); pat=ref.pattern; sp=dict(ref.special_tokens); "
        "t=time.perf_counter(); enc=tiktoken.Encoding({name!r}, pat_str=pat, mergeable_ranks=load_tiktoken_bpe({path!r}), "
        "special_tokens=sp); enc.encode('warm up'); print(time.perf_counter()-t)"
    ),
    "tokenforge.get_encoding": (
        "import time, tokenforge; t=time.perf_counter(); tok=tokenforge.get_encoding({name!r}); "
        "tok.encode('warm up'); print(time.perf_counter()-t)"
    ),
}


def run(snippet: str) -> float:
    out = subprocess.run([sys.executable, "-c", snippet], capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    print_machine(machine_info())
    rows = []
    for name in ("cl100k_base", "o200k_base"):
        path = os.path.join(DATA_DIR, "vocab", "tiktoken", f"{name}.tiktoken")
        best = {k: float("inf") for k in SNIPPETS}
        for _ in range(args.repeat):
            for k, snip in SNIPPETS.items():
                best[k] = min(best[k], run(snip.format(path=path, name=name)))
        row = {"encoding": name, **{k: round(v, 4) for k, v in best.items()},
               "ratio_load_vs_tiktoken": round(best["tokenforge.load"] / best["tiktoken"], 2)}
        rows.append(row)
        print(f"{name:<12} tokenforge.load {best['tokenforge.load']:.3f} s | tiktoken {best['tiktoken']:.3f} s | "
              f"ratio {row['ratio_load_vs_tiktoken']:.2f} (<1: tokenforge faster) | "
              f"tokenforge.get_encoding (shipped .xz) {best['tokenforge.get_encoding']:.3f} s")
    if args.json:
        print(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()

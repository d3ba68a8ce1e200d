"""Start-up cost: ``import`` and the first encode, tokenforge vs tiktoken, in fresh processes.

Each figure is the best of ``--runs`` fresh interpreters (the machine is shared and noisy),
timed with ``time.perf_counter`` inside the child, after each source tree is byte-compiled
(as an installed package is):

* import      ``import tokenforge``  /  ``import tiktoken``
* first call  import + ``get_encoding("cl100k_base")`` + ``encode("hello world " * 90)``;
              tiktoken is offline, so it builds ``tiktoken.Encoding`` from its rank file
              (``tiktoken.get_encoding`` with its ``load_tiktoken_bpe`` pointed at
              /work/shared/data/vocab/tiktoken/cl100k_base.tiktoken, sha256-checked).

Run (each ``--src`` is a tokenforge source tree to time, e.g. before and after a change)::

    source /work/venv/bin/activate
    python benchmarks/bench_startup.py --runs 21 --src /work/wt-import/src [--src /tmp/tf_before/src]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

RANKS = "/work/shared/data/vocab/tiktoken/cl100k_base.tiktoken"
TEXT = '"hello world " * 90'

TF_IMPORT = "import time; t=time.perf_counter(); import tokenforge; print(time.perf_counter()-t)"
TF_FIRST = (
    "import time; t=time.perf_counter(); import tokenforge; "
    f"enc=tokenforge.get_encoding('cl100k_base'); enc.encode({TEXT}); print(time.perf_counter()-t)"
)
TT_IMPORT = "import time; t=time.perf_counter(); import tiktoken; print(time.perf_counter()-t)"
TT_FIRST = (
    "import time; t=time.perf_counter(); import tiktoken, tiktoken_ext.openai_public as op; "
    "from tiktoken.load import load_tiktoken_bpe as load; "
    f"op.load_tiktoken_bpe=lambda url, expected_hash=None: load({RANKS!r}, expected_hash=expected_hash); "
    f"enc=tiktoken.get_encoding('cl100k_base'); enc.encode({TEXT}); print(time.perf_counter()-t)"
)


def best(code: str, runs: int, pythonpath: str | None) -> float:
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    times = []
    for _ in range(runs):
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
        times.append(float(out.stdout.strip().splitlines()[-1]))
    return min(times) * 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=21)
    ap.add_argument("--src", action="append", required=True, help="a tokenforge src/ directory (repeatable)")
    args = ap.parse_args()
    # Bytecode first, as ``pip install`` leaves it (tiktoken's is in site-packages): without it
    # every fresh process would compile tokenforge's sources (PYTHONDONTWRITEBYTECODE is set here).
    import compileall

    for src in args.src:
        compileall.compile_dir(os.path.join(src, "tokenforge"), quiet=1)
    # interleave so that noise hits every variant alike
    rows = {}
    for kind, tf_code, tt_code in (("import", TF_IMPORT, TT_IMPORT), ("first call", TF_FIRST, TT_FIRST)):
        tt = best(tt_code, args.runs, None)
        for src in args.src:
            rows[(kind, src)] = (best(tf_code, args.runs, src), tt)
    print(f"best of {args.runs} fresh processes, ms")
    print(f"{'what':<11} {'tokenforge src':<28} {'tokenforge':>10} {'tiktoken':>9} {'ratio':>6}")
    for (kind, src), (tf, tt) in rows.items():
        print(f"{kind:<11} {src:<28} {tf:>10.1f} {tt:>9.1f} {tf / tt:>5.2f}x")


if __name__ == "__main__":
    main()

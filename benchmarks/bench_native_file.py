"""Save and load a shipped encoding in tokenforge's own file format (the native JSON file,
with its per-part sha256 and the fingerprint that ``load`` verifies).

Prints the best of 3 saves and 7 loads of one encoding. To compare two source trees (before
and after a change), run it once per tree with ``PYTHONPATH`` pointing at the tree's ``src``,
alternating, in the same session::

    source /work/venv/bin/activate
    python benchmarks/bench_native_file.py o200k_base
    PYTHONPATH=/tmp/tf_prev/src python benchmarks/bench_native_file.py o200k_base
"""

from __future__ import annotations

import os
import sys
import tempfile
import time

import tokenforge


def main() -> None:
    name = sys.argv[1] if len(sys.argv) > 1 else "cl100k_base"
    tok = tokenforge.get_encoding(name)
    path = os.path.join(tempfile.mkdtemp(), f"{name}.tokenforge.json")
    saves, loads = [], []
    for _ in range(3):
        start = time.perf_counter()
        tok.save(path)
        saves.append(time.perf_counter() - start)
    for _ in range(7):
        start = time.perf_counter()
        tokenforge.load(path)
        loads.append(time.perf_counter() - start)
    print(f"{name}: save best {min(saves) * 1000:.0f} ms, load best {min(loads) * 1000:.0f} ms "
          f"({os.path.getsize(path):,} bytes, tokenforge from {os.path.dirname(tokenforge.__file__)})")


if __name__ == "__main__":
    main()

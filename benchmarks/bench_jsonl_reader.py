"""Reading the text field of a JSON Lines corpus: tokenforge's native reader against
``json.loads`` per line (what the reader did before, and what nanoGPT-style scripts,
HF ``datasets``' JSON builder in its Python path, and datatrove's ``JsonlReader`` do),
and ``orjson.loads`` when it is installed.

The same bytes go through each reader, in one process, alternating, best of
``--repeats``; each reader must return the same list of strings. Figures are MB/s of
JSON Lines and the ratio to ``json.loads``.

    python benchmarks/bench_jsonl_reader.py /work/benchdata/prepare/64MB/corpus.jsonl --repeats 5
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine_info, print_machine, print_table  # noqa: E402


def with_json(data: bytes, field: str) -> list[str]:
    return [json.loads(line)[field] for line in data.split(b"\n") if line.strip()]


def with_orjson(data: bytes, field: str) -> list[str]:
    import orjson

    return [orjson.loads(line)[field] for line in data.split(b"\n") if line.strip()]


def with_tokenforge(data: bytes, field: str) -> list[str]:
    from tokenforge import _native

    out = _native.core("native").jsonl_field(data, field.encode())
    if any(type(x) is int for x in out):  # lines left to json.loads (none in a plain corpus)
        raise SystemExit(f"{sum(type(x) is int for x in out)} lines fell back; this benchmark wants the native path")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("path", help="a .jsonl file")
    ap.add_argument("--field", default="text")
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    data = Path(args.path).read_bytes()
    readers = {"json.loads per line": with_json, "tokenforge native reader": with_tokenforge}
    try:
        import orjson  # noqa: F401

        readers["orjson.loads per line"] = with_orjson
    except ImportError:
        pass
    print_machine(machine_info())
    print(f"# {args.path}: {len(data) / 1e6:.1f} MB, field {args.field!r}")
    best = {k: float("inf") for k in readers}
    ref = None
    for _ in range(args.repeats):
        for name, fn in readers.items():
            t = time.perf_counter()
            out = fn(data, args.field)
            best[name] = min(best[name], time.perf_counter() - t)
            if ref is None:
                ref = out
            elif out != ref:
                raise SystemExit(f"{name} gave other strings than json.loads")
            del out
    base = best["json.loads per line"]
    rows = [[name, f"{s:.3f}", f"{len(data) / 1e6 / s:.0f}", f"{base / s:.2f}"] for name, s in best.items()]
    print_table(["reader", "best s", "MB/s", "x json.loads"], rows)


if __name__ == "__main__":
    main()

"""Full differential run for the README: every tokenizer in shared/data/vocab × every
text in shared/data/text, every line alone and every document whole, against the
reference library. Prints a markdown table: documents and lines compared, tokens
compared, and mismatches (which must be zero).

    python tools/differential_report.py [--shared ../shared/data] [--json out.json]

It uses the same registry as tests/test_differential.py (tests/_differential.py).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from _differential import ADVERSARIAL, CASES, corpora, read_text, safe  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shared", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--json", default=None)
    ap.add_argument("--only", default=None, help="substring of the case names to run")
    args = ap.parse_args()
    shared = Path(args.shared)
    files = corpora(shared)
    rows = []
    print("| tokenizer | reference | documents | lines | tokens compared | mismatches |")
    print("|---|---|---:|---:|---:|---:|")
    for case in CASES:
        if args.only and args.only not in case.name:
            continue
        t0 = time.perf_counter()
        ours, ref = case.build(shared / "vocab")
        docs = lines = tokens = mismatches = 0
        examples = []
        for path in files:
            text = safe(read_text(path), case)
            units = [text] + text.splitlines()
            got, want = ours(units), ref(units)
            for k, (a, b) in enumerate(zip(got, want)):
                tokens += len(b)
                if a != b:
                    mismatches += 1
                    if len(examples) < 5:
                        examples.append((path.name, "whole" if k == 0 else f"line {k}"))
            docs += 1
            lines += len(units) - 1
        adv = [safe(t, case) for t in ADVERSARIAL]
        for t, a, b in zip(adv, ours(adv), ref(adv)):
            tokens += len(b)
            if a != b:
                mismatches += 1
                examples.append(("adversarial", t[:30]))
        row = {"tokenizer": case.name, "reference": case.library, "documents": docs, "lines": lines,
               "adversarial": len(adv), "tokens": tokens, "mismatches": mismatches, "examples": examples,
               "seconds": round(time.perf_counter() - t0, 1)}
        rows.append(row)
        print(f"| `{case.name}` | {case.library} | {docs} | {lines:,} | {tokens:,} | {mismatches} |", flush=True)
        if examples:
            print(f"<!-- first mismatches: {examples} -->", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=2)


if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "true")
    main()

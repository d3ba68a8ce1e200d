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
    ap.add_argument("--detail", default=None, help="also write the per-corpus tables (markdown) here")
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
        per_file = []
        for path in files:
            text = safe(read_text(path), case)
            units = [text] + text.splitlines()
            got, want = ours(units), ref(units)
            f_tokens = f_bad = 0
            for k, (a, b) in enumerate(zip(got, want)):
                f_tokens += len(b)
                if a != b:
                    f_bad += 1
                    if len(examples) < 5:
                        examples.append((path.name, "whole" if k == 0 else f"line {k}"))
            per_file.append({"corpus": str(path.relative_to(shared / "text")), "lines": len(units) - 1,
                             "tokens": f_tokens, "mismatches": f_bad})
            tokens += f_tokens
            mismatches += f_bad
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
               "seconds": round(time.perf_counter() - t0, 1), "per_corpus": per_file}
        rows.append(row)
        print(f"| `{case.name}` | {case.library} | {docs} | {lines:,} | {tokens:,} | {mismatches} |", flush=True)
        if examples:
            print(f"<!-- first mismatches: {examples} -->", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=2)
    if args.detail:
        with open(args.detail, "w", encoding="utf-8") as f:
            f.write("# Differential run: every tokenizer × every corpus\n\n")
            f.write("Produced by `python tools/differential_report.py --detail docs/differential.md`. Each corpus is\n")
            f.write("compared as one whole document and line by line; tokens are the reference's token count.\n")
            for row in rows:
                f.write(f"\n## `{row['tokenizer']}` vs {row['reference']}\n\n")
                f.write("| corpus | lines | tokens compared | mismatches |\n|---|---:|---:|---:|\n")
                for c in row["per_corpus"]:
                    f.write(f"| {c['corpus']} | {c['lines']:,} | {c['tokens']:,} | {c['mismatches']} |\n")
                f.write(f"| adversarial strings | {row['adversarial']} | | |\n")


if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "true")
    main()

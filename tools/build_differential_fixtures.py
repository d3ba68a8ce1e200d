"""Rebuild tests/fixtures/differential/ from ../shared/data (see its SOURCES.md).

    python tools/build_differential_fixtures.py [--shared ../shared/data]
"""

from __future__ import annotations

import argparse
import lzma
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "fixtures" / "differential"
HEADS = [("botchan.txt", 25), ("hongloumeng.txt", 20), ("wagahaiwa_nekodearu.txt", 20), ("german.txt", 20),
         ("tinyshakespeare.txt", 25), ("corpus.en", 15), ("xiyouji.txt", 10), ("address.txt", 10)]
MODELS = ["vocab/sentencepiece/spm_test_unigram.model", "vocab/sentencepiece/hf_test_bpe.model",
          "vocab/wordpiece/bert-base-chinese_vocab.txt"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shared", default=str(ROOT.parent / "shared" / "data"))
    shared = Path(ap.parse_args().shared)
    text = shared / "text"
    out: list[str] = []
    seen: set[str] = set()
    for line in (text / "parallel" / "udhr_articles_aligned.tsv").read_text(encoding="utf-8").splitlines()[1:]:
        parts = line.split("\t")
        if len(parts) >= 5 and parts[2] not in seen:  # the first article of each script
            seen.add(parts[2])
            out.append(parts[4])
    for f in sorted((text / "parallel").glob("debian-reference-*.txt")):
        out += [x for x in f.read_text(encoding="utf-8").splitlines() if x.strip()][:6]
    for name, n in HEADS:
        out += (text / name).read_text(encoding="utf-8").splitlines()[:n]
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "sample.txt").write_text("\n".join(out) + "\n", encoding="utf-8")
    for rel in MODELS:
        data = (shared / rel).read_bytes()
        (OUT / (Path(rel).name + ".xz")).write_bytes(lzma.compress(data, preset=9 | lzma.PRESET_EXTREME))


if __name__ == "__main__":
    main()

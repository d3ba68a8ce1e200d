"""Unigram training next to sentencepiece: time, peak memory and held-out bytes/token.

Corpus: ``wagahaiwa_nekodearu.txt`` (Japanese novel, 1.1 MB) + English text
from ``/work/shared/data/text``: by default ``botchan.txt``,
``tinystories_valid_sample.txt``, ``tinyshakespeare.txt`` and ``corpus.en``
(3.4 MB in all; with less English sentencepiece stops short of 32k pieces and
raises "Vocabulary size too high").
Every 10th line is held out; the other 90% is the training text.

Both libraries see the same normalized text: each line is stripped and its
whitespace runs collapsed to one space (what sentencepiece's
``remove_extra_whitespaces`` does), then

* **sentencepiece** trains on a file of those lines with ``model_type=unigram``,
  ``normalization_rule_name=identity``, ``add_dummy_prefix`` (its default),
  ``byte_fallback=False``, ``split_digits=False``, ``max_sentence_length`` large
  enough for the longest line (the novel has 33k-character lines) and the same
  ``vocab_size``, ``character_coverage``, ``shrinking_factor``,
  ``num_sub_iterations``, ``max_sentencepiece_length``,
  ``seed_sentencepiece_size`` and ``num_threads``;
* **tokenforge** counts SentencePiece-style pre-tokens (``"▁" + line`` with
  spaces as ``▁``, split before each ``▁``) and runs
  ``UnigramTrainer(...).train_from_counts(counts)``. Counting is inside the
  timed region.

Each training runs in a fresh subprocess; wall time is measured around the
training call (sentencepiece: ``SentencePieceTrainer.train``, which also reads
the file), peak memory is ``ru_maxrss`` of that subprocess (tokenforge's
includes the interpreter with numpy, about 30 MiB more than sentencepiece's
baseline). The libraries alternate, ``--repeats`` times each; the best time
is reported (the machine is shared). Held-out
bytes/token = UTF-8 bytes of the held-out lines (normalized) / tokens, each
library encoding the lines with its own model (tokenforge: ``▁`` + line with
spaces as ``▁``, Viterbi over the whole line, as sentencepiece does).

    python benchmarks/bench_train_unigram.py                       # 8k and 32k, 2 threads
    python benchmarks/bench_train_unigram.py --vocabs 8000 --english botchan.txt
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter

TEXT_DIR = "/work/shared/data/text"
WS = "\u2581"


def normalize(line: str) -> str:
    return re.sub(r"\s+", " ", line).strip()


def load(english: str) -> tuple[list[str], list[str]]:
    train, held = [], []
    for name in ["wagahaiwa_nekodearu.txt", *english.split(",")]:
        with open(os.path.join(TEXT_DIR, name), encoding="utf-8") as f:
            for k, line in enumerate(f):
                line = normalize(line)
                if not line:
                    continue
                (held if k % 10 == 9 else train).append(line)
    return train, held


def pretokens(line: str) -> list[str]:
    text = WS + line.replace(" ", WS)
    return [WS + w for w in text.split(WS) if w]


def child(args: argparse.Namespace) -> None:
    """Train one library in this process; print a JSON line with the figures."""
    train, held = load(args.english)
    out: dict = {"lib": args.child, "vocab": args.vocab}
    if args.child == "sentencepiece":
        import sentencepiece as spm

        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "train.txt")
            with open(path, "w", encoding="utf-8") as f:
                f.write("\n".join(train) + "\n")
            prefix = os.path.join(tmp, "m")
            longest = max(len(line.encode("utf-8")) for line in train)
            t0 = time.perf_counter()
            spm.SentencePieceTrainer.train(
                input=path, model_prefix=prefix, model_type="unigram", vocab_size=args.vocab,
                character_coverage=args.coverage, normalization_rule_name="identity", byte_fallback=False,
                split_digits=False, max_sentence_length=longest + 1, num_threads=args.threads,
                shrinking_factor=0.75, num_sub_iterations=2, max_sentencepiece_length=16,
                seed_sentencepiece_size=1_000_000, minloglevel=2,
            )
            out["seconds"] = time.perf_counter() - t0
            sp = spm.SentencePieceProcessor(model_file=prefix + ".model")
            ntok = sum(len(sp.encode(line)) for line in held)
            out["pieces"] = sp.get_piece_size()
    else:
        from tokenforge.trainers.unigram import UnigramTrainer

        t0 = time.perf_counter()
        counts: Counter[str] = Counter()
        for line in train:
            counts.update(pretokens(line))
        trainer = UnigramTrainer(
            vocab_size=args.vocab, special_tokens=("<s>", "</s>"), character_coverage=args.coverage,
            num_threads=args.threads, show_progress=False,
        )
        model = trainer.train_from_counts(counts)
        out["seconds"] = time.perf_counter() - t0
        ntok = sum(len(model.encode_piece(WS + line.replace(" ", WS))) for line in held)
        out["pieces"] = model.vocab_size
        out["seed"] = trainer.last_report.seed_pieces
    nbytes = sum(len(line.encode("utf-8")) for line in held)
    out["held_bytes"] = nbytes
    out["held_tokens"] = ntok
    out["bytes_per_token"] = nbytes / ntok
    out["maxrss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(out))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vocabs", default="8000,32000")
    ap.add_argument("--english", default="botchan.txt,tinystories_valid_sample.txt,tinyshakespeare.txt,corpus.en",
                    help="English file(s) of the text directory, comma-separated")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3, help="runs per library and vocab (alternating); best time kept")
    ap.add_argument("--coverage", type=float, default=0.9995)
    ap.add_argument("--child", choices=("tokenforge", "sentencepiece"))
    ap.add_argument("--vocab", type=int)
    args = ap.parse_args()
    if args.child:
        child(args)
        return
    train, held = load(args.english)
    print(f"corpus: wagahaiwa_nekodearu.txt + {args.english.replace(',', ' + ')}: {len(train)} training lines "
          f"({sum(len(x.encode()) for x in train) / 1e6:.2f} MB), {len(held)} held-out lines "
          f"({sum(len(x.encode()) for x in held) / 1e6:.2f} MB); threads={args.threads}, "
          f"character_coverage={args.coverage}; {os.cpu_count()} CPUs")
    rows = []
    for vocab in [int(v) for v in args.vocabs.split(",")]:
        runs: dict[str, list[dict]] = {}
        for lib in ("sentencepiece", "tokenforge") * args.repeats:
            cmd = [sys.executable, __file__, "--child", lib, "--vocab", str(vocab), "--english", args.english,
                   "--threads", str(args.threads), "--coverage", str(args.coverage)]
            proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
            if proc.returncode != 0:
                sys.exit(f"{lib} failed:\n{proc.stderr}")
            runs.setdefault(lib, []).append(json.loads(proc.stdout.strip().splitlines()[-1]))
        res = {}
        for lib, rs in runs.items():  # fastest run; memory: the largest over the runs
            res[lib] = dict(min(rs, key=lambda r: r["seconds"]), maxrss_mib=max(r["maxrss_mib"] for r in rs))
            res[lib]["all_seconds"] = [round(r["seconds"], 2) for r in rs]
        rows.append((vocab, res))
    print()
    print("| vocab | library | best train s | all runs s | peak RSS MiB | pieces | held-out tokens | bytes/token |")
    print("|------:|---------|-------------:|------------|-------------:|-------:|----------------:|------------:|")
    for vocab, res in rows:
        for lib in ("sentencepiece", "tokenforge"):
            r = res[lib]
            print(f"| {vocab} | {lib} | {r['seconds']:.2f} | {' '.join(map(str, r['all_seconds']))} | "
                  f"{r['maxrss_mib']:.0f} | {r['pieces']} | {r['held_tokens']} | {r['bytes_per_token']:.4f} |")
    print()
    print("| vocab | time ratio (tf/sp) | RSS ratio (tf/sp) | bytes/token ratio (tf/sp) |")
    print("|------:|-------------------:|------------------:|--------------------------:|")
    for vocab, res in rows:
        t, s = res["tokenforge"], res["sentencepiece"]
        print(f"| {vocab} | {t['seconds'] / s['seconds']:.2f} | {t['maxrss_mib'] / s['maxrss_mib']:.2f} | "
              f"{t['bytes_per_token'] / s['bytes_per_token']:.4f} |")


if __name__ == "__main__":
    main()

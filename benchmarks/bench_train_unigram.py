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
  spaces as ``▁``, split before each ``▁``) and how often each ends a line,
  and runs ``UnigramTrainer(...).train_from_counts(counts, line_ends=...)``
  (``--no-line-ends``: from the counts alone). Counting is inside the timed
  region.

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

**Multilingual mode** (``--multilingual``): one corpus of several languages
(:data:`LANGUAGES`: English, German, Japanese, Chinese, and 20 languages of
the UDHR in 15 scripts), at most ``--lang-mb`` MB of training text per
language (the budget split evenly over that language's files, what a short
file leaves going to the next ones, each file read from its start). Lines are normalized as above and cut into blocks of 20
lines; every 10th block (UDHR: articles 9, 19, 29) is held out, so the
held-out text is contiguous text neither trainer saw. ``--repeat N`` writes
the training text N times (a bigger corpus for the memory comparison: the
same lines repeated, so the model is nearly the same). The parent writes the
training file once; each child (a fresh subprocess) trains from it:
sentencepiece from the file, tokenforge by streaming the file into pre-token
counts and the count of each pre-token at a line end (``line_ends``: what
sentencepiece's seed search sees of whole sentences; ``--no-line-ends``
leaves it out), inside the timed region. Each child first resets its RSS
high-water mark (``/proc/self/clear_refs``; a child inherits its parent's
``ru_maxrss``), then reports its peak RSS (VmHWM) after its imports (the
baseline: interpreter, numpy and tokenforge, or sentencepiece's module),
after training (before the held-out text is read), and the growth between
the two; then per-language held-out bytes/token.

    python benchmarks/bench_train_unigram.py --multilingual               # ~6 MB, 8k and 32k
    python benchmarks/bench_train_unigram.py --multilingual --repeat 12 --repeats 1   # ~75 MB (memory)
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
BENCH_DIR = "/work/shared/data/bench"
WS = "\u2581"

#: language -> files (relative to /work/shared/data); "udhr:" reads those UDHR language keys
LANGUAGES: dict[str, list[str]] = {
    "en": ["text/botchan.txt", "text/tinystories_valid_sample.txt", "text/tinyshakespeare.txt",
           "text/parallel/debian-reference-en.txt", "bench/linux-kernel-docs_en.txt", "bench/dictd_gcide.txt"],
    "de": ["text/german.txt", "text/parallel/debian-reference-de.txt"],
    "ja": ["text/wagahaiwa_nekodearu.txt", "text/parallel/debian-reference-ja.txt", "bench/manpages-ja_rendered.txt"],
    "zh": ["text/hongloumeng.txt", "text/xiyouji.txt", "bench/sanguoyanyi.txt", "bench/shuihuzhuan.txt",
           "text/parallel/debian-reference-zh-cn.txt", "bench/manpages-zh_rendered.txt"],
    "udhr20": ["udhr:rus,ukr,arb,pes_1,hin,ben,tam,kor,ell_monotonic,tha,heb,amh,kat,hye,fra,spa,por_PT,vie,tur,ind"],
}
DATA_DIR = os.path.dirname(TEXT_DIR)


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


def load_multilingual(lang_mb: float) -> dict[str, tuple[list[str], list[str]]]:
    """{language: (training lines, held-out lines)}: see the module docstring."""
    out = {}
    for lang, files in LANGUAGES.items():
        train: list[str] = []
        held: list[str] = []
        left = lang_mb * 1e6
        for i, name in enumerate(files):
            budget = left / (len(files) - i)  # what a short file leaves goes to the next ones
            used = 0
            if name.startswith("udhr:"):
                import csv

                keys = set(name[5:].split(","))
                with open(os.path.join(TEXT_DIR, "parallel", "udhr_articles_aligned.tsv"), encoding="utf-8") as f:
                    for row in csv.DictReader(f, delimiter="\t"):
                        line = normalize(row["text"])
                        if row["lang_key"] in keys and line:
                            (held if int(row["article"]) % 10 == 9 else train).append(line)
                continue
            with open(os.path.join(DATA_DIR, name), encoding="utf-8-sig") as f:
                k = 0
                for raw in f:
                    line = normalize(raw)
                    if not line:
                        continue
                    if (k // 20) % 10 == 9:
                        held.append(line)
                    else:
                        train.append(line)
                        used += len(line.encode("utf-8")) + 1
                    k += 1
                    if used >= budget:
                        break
            left -= used
        out[lang] = (train, held)
    return out


def pretokens(line: str) -> list[str]:
    text = WS + line.replace(" ", WS)
    return [WS + w for w in text.split(WS) if w]


def _status_mib(field: str) -> float | None:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def _reset_peak() -> bool:
    """Reset this process's RSS high-water mark (Linux: ``clear_refs`` 5). A child started by
    ``subprocess`` otherwise inherits the parent's ``ru_maxrss`` (the multilingual parent holds
    the whole corpus), which would hide the child's own baseline."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


_PEAK_RESET = False


def _maxrss_mib() -> float:
    """Peak RSS so far: VmHWM after :func:`_reset_peak`, else ``ru_maxrss``."""
    if _PEAK_RESET:
        hwm = _status_mib("VmHWM")
        if hwm is not None:
            return hwm
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child_multilingual(args: argparse.Namespace) -> None:
    """Train one library on ``args.train_file``; held-out figures per language (``args.held``)."""
    global _PEAK_RESET
    _PEAK_RESET = _reset_peak()
    out: dict = {"lib": args.child, "vocab": args.vocab}
    held = json.loads(args.held)
    settings = dict(shrinking_factor=0.75, num_sub_iterations=2, seed_sentencepiece_size=1_000_000)
    if args.child == "sentencepiece":
        import sentencepiece as spm

        out["baseline_mib"] = _maxrss_mib()
        with tempfile.TemporaryDirectory() as tmp:
            prefix = os.path.join(tmp, "m")
            t0 = time.perf_counter()
            spm.SentencePieceTrainer.train(
                input=args.train_file, model_prefix=prefix, model_type="unigram", vocab_size=args.vocab,
                character_coverage=args.coverage, normalization_rule_name="identity", byte_fallback=False,
                split_digits=False, max_sentence_length=args.longest + 1, num_threads=args.threads,
                max_sentencepiece_length=16, minloglevel=2, **settings,
            )
            out["seconds"] = time.perf_counter() - t0
            out["maxrss_mib"] = _maxrss_mib()
            sp = spm.SentencePieceProcessor(model_file=prefix + ".model")
            out["pieces"] = sp.get_piece_size()
            encode = sp.encode
    else:
        import numpy  # noqa: F401  (part of the baseline: tokenforge imports it)

        from tokenforge.trainers.unigram import UnigramTrainer

        out["baseline_mib"] = _maxrss_mib()
        t0 = time.perf_counter()
        counts: Counter[str] = Counter()
        line_ends: Counter[str] = Counter()  # the last pre-token of each line (see train_from_counts)
        with open(args.train_file, encoding="utf-8") as f:
            for line in f:
                toks = pretokens(line.rstrip("\n"))
                counts.update(toks)
                if toks:
                    line_ends[toks[-1]] += 1
        trainer = UnigramTrainer(
            vocab_size=args.vocab, special_tokens=("<s>", "</s>"), character_coverage=args.coverage,
            num_threads=args.threads, show_progress=False, max_piece_length=16,
            **({} if args.tf_defaults else settings),
        )
        model = trainer.train_from_counts(counts, line_ends=None if args.no_line_ends else line_ends)
        out["seconds"] = time.perf_counter() - t0
        out["maxrss_mib"] = _maxrss_mib()
        del counts, line_ends
        out["pieces"] = model.vocab_size
        out["seed"] = trainer.last_report.seed_pieces

        def encode(line: str) -> list[int]:
            return model.encode_piece(WS + line.replace(" ", WS))
    out["growth_mib"] = out["maxrss_mib"] - out["baseline_mib"]
    out["langs"] = {}
    for lang, path in held.items():
        with open(path, encoding="utf-8") as f:
            lines = f.read().split("\n")[:-1]
        nbytes = sum(len(line.encode("utf-8")) for line in lines)
        ntok = sum(len(encode(line)) for line in lines)
        out["langs"][lang] = {"bytes": nbytes, "tokens": ntok}
    print(json.dumps(out))


def child(args: argparse.Namespace) -> None:
    """Train one library in this process; print a JSON line with the figures."""
    if args.train_file:
        child_multilingual(args)
        return
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
        line_ends: Counter[str] = Counter()
        for line in train:
            toks = pretokens(line)
            counts.update(toks)
            line_ends[toks[-1]] += 1
        trainer = UnigramTrainer(
            vocab_size=args.vocab, special_tokens=("<s>", "</s>"), character_coverage=args.coverage,
            num_threads=args.threads, show_progress=False,
        )
        model = trainer.train_from_counts(counts, line_ends=None if args.no_line_ends else line_ends)
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
    ap.add_argument("--multilingual", action="store_true", help="the multilingual corpus (see the docstring)")
    ap.add_argument("--lang-mb", type=float, default=1.5, help="multilingual: MB of training text per language")
    ap.add_argument("--repeat", type=int, default=1, help="multilingual: write the training text this many times")
    ap.add_argument("--tf-defaults", action="store_true",
                    help="multilingual: tokenforge with its own defaults for shrinking_factor, "
                         "num_sub_iterations and seed_sentencepiece_size (sentencepiece keeps its settings)")
    ap.add_argument("--no-line-ends", action="store_true",
                    help="tokenforge from pre-token counts alone (no line_ends)")
    ap.add_argument("--train-file", help=argparse.SUPPRESS)
    ap.add_argument("--held", help=argparse.SUPPRESS)
    ap.add_argument("--longest", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args)
        return
    if args.multilingual:
        main_multilingual(args)
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
                   "--threads", str(args.threads), "--coverage", str(args.coverage)] + (
                   ["--no-line-ends"] if args.no_line_ends else [])
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


def main_multilingual(args: argparse.Namespace) -> None:
    data = load_multilingual(args.lang_mb)
    with tempfile.TemporaryDirectory() as tmp:
        train_file = os.path.join(tmp, "train.txt")
        held_files = {}
        longest = 0
        with open(train_file, "w", encoding="utf-8") as f:
            for _ in range(args.repeat):
                for lang, (train, _) in data.items():
                    for line in train:
                        f.write(line + "\n")
        for lang, (train, held) in data.items():
            longest = max([longest, *(len(x.encode()) for x in train)])
            held_files[lang] = os.path.join(tmp, f"held.{lang}.txt")
            with open(held_files[lang], "w", encoding="utf-8") as f:
                f.write("".join(x + "\n" for x in held))
        size = os.path.getsize(train_file)
        print(f"multilingual corpus, {args.lang_mb} MB budget per language, training text written "
              f"{args.repeat}x: {size / 1e6:.1f} MB; threads={args.threads}, character_coverage={args.coverage}, "
              f"shrinking_factor=0.75, num_sub_iterations=2, seed_sentencepiece_size=1e6, max piece length 16"
              f"{' (tokenforge: its defaults)' if args.tf_defaults else ''}; tokenforge "
              f"{'from pre-token counts alone' if args.no_line_ends else 'with line_ends'}; {os.cpu_count()} CPUs")
        print()
        print("| language | files | training lines | training MB | held-out lines | held-out MB |")
        print("|----------|-------|---------------:|------------:|---------------:|------------:|")
        for lang, (train, held) in data.items():
            files = " ".join(os.path.basename(x) for x in LANGUAGES[lang])
            print(f"| {lang} | {files} | {len(train)} | {sum(len(x.encode()) + 1 for x in train) / 1e6:.2f} | "
                  f"{len(held)} | {sum(len(x.encode()) + 1 for x in held) / 1e6:.2f} |")
        rows = []
        for vocab in [int(v) for v in args.vocabs.split(",")]:
            runs: dict[str, list[dict]] = {}
            for lib in ("sentencepiece", "tokenforge") * args.repeats:
                cmd = [sys.executable, __file__, "--child", lib, "--vocab", str(vocab), "--train-file", train_file,
                       "--held", json.dumps(held_files), "--longest", str(longest), "--threads", str(args.threads),
                       "--coverage", str(args.coverage)] + (["--tf-defaults"] if args.tf_defaults else []) + (
                       ["--no-line-ends"] if args.no_line_ends else [])
                proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
                if proc.returncode != 0:
                    sys.exit(f"{lib} failed:\n{proc.stderr}")
                runs.setdefault(lib, []).append(json.loads(proc.stdout.strip().splitlines()[-1]))
            res = {}
            for lib, rs in runs.items():  # fastest run; memory: the largest over the runs
                res[lib] = dict(min(rs, key=lambda r: r["seconds"]), maxrss_mib=max(r["maxrss_mib"] for r in rs),
                                growth_mib=max(r["growth_mib"] for r in rs))
                res[lib]["all_seconds"] = [round(r["seconds"], 2) for r in rs]
            rows.append((vocab, res))
    langs = list(LANGUAGES)

    def bpt(r: dict, lang: str | None) -> float:
        ls = [lang] if lang else langs
        return sum(r["langs"][x]["bytes"] for x in ls) / sum(r["langs"][x]["tokens"] for x in ls)

    print()
    print("Held-out bytes/token (sp = sentencepiece, tf = tokenforge; ratio tf/sp, target 0.995-1.005):")
    print()
    print("| vocab | " + " | ".join(f"{x} sp | {x} tf | {x} tf/sp" for x in [*langs, "all"]) + " |")
    print("|------:|" + "---:|" * (3 * (len(langs) + 1)))
    for vocab, res in rows:
        cells = []
        for lang in [*langs, None]:
            a, b = bpt(res["sentencepiece"], lang), bpt(res["tokenforge"], lang)
            cells += [f"{a:.4f}", f"{b:.4f}", f"{b / a:.4f}"]
        print(f"| {vocab} | " + " | ".join(cells) + " |")
    print()
    print("| vocab | library | best train s | all runs s | RSS after imports MiB | peak RSS MiB | growth MiB | pieces |")
    print("|------:|---------|-------------:|------------|----------------------:|-------------:|-----------:|-------:|")
    for vocab, res in rows:
        for lib in ("sentencepiece", "tokenforge"):
            r = res[lib]
            print(f"| {vocab} | {lib} | {r['seconds']:.2f} | {' '.join(map(str, r['all_seconds']))} | "
                  f"{r['baseline_mib']:.0f} | {r['maxrss_mib']:.0f} | {r['growth_mib']:.0f} | {r['pieces']} |")
    print()
    print("| vocab | time ratio (tf/sp) | peak RSS ratio (tf/sp) | RSS growth ratio (tf/sp) | bytes/token ratio, all |")
    print("|------:|-------------------:|-----------------------:|-------------------------:|-----------------------:|")
    for vocab, res in rows:
        t, s = res["tokenforge"], res["sentencepiece"]
        print(f"| {vocab} | {t['seconds'] / s['seconds']:.2f} | {t['maxrss_mib'] / s['maxrss_mib']:.2f} | "
              f"{t['growth_mib'] / s['growth_mib']:.2f} | {bpt(t, None) / bpt(s, None):.4f} |")


if __name__ == "__main__":
    main()

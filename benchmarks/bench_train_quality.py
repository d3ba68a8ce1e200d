"""WordPiece training quality next to HF tokenizers' ``WordPieceTrainer``, per
language, on text neither trainer saw.

The corpus (built under ``--tmp``, from ``/work/shared/data``):

* English, German, Japanese, Simplified and Traditional Chinese from
  ``text/`` and ``bench/``: of each source file the first ``--cap-mb`` MB
  (whole lines) are taken, the first 85 % of those lines go to training and
  the rest is held out (the same book or manual, but lines no trainer saw).
* 15 more languages and scripts from ``text/parallel/udhr_articles_aligned.tsv``
  (the Universal Declaration of Human Rights): articles 1-24 train, 25-30 are
  held out.

One training file per language; both libraries train on all of them together
with the same settings: ``BertNormalizer(lowercase=True)`` +
``BertPreTokenizer``, specials ``[PAD] [UNK] [CLS] [SEP] [MASK]``, the same
``vocab_size``, and

* ``mf0``: HF ``WordPieceTrainer``'s own defaults: ``min_frequency=0``, no
  ``limit_alphabet``;
* ``bert``: the defaults of HF's ``BertWordPieceTokenizer.train`` (and of
  ``tokenforge train --model wordpiece``): ``min_frequency=2``,
  ``limit_alphabet=1000``.

HF trains with ``Tokenizer.train(files, WordPieceTrainer(...))``; tokenforge
counts the same files with its own normalizer and pre-tokenizer (the script
checks the counts equal HF's pre-tokenization) and runs
``WordPieceTrainer(merge=...).train_from_counts`` once per merge rule.

Held-out figures, per language: the held-out lines are normalized and split
by HF's normalizer + pre-tokenizer and every word is encoded by each model
(HF ``model.tokenize``, tokenforge ``WordPiece.encode_piece``).
tokens/word = tokens / words; bytes/token = UTF-8 bytes of the words / tokens
(a word that fails is one ``[UNK]``); the tables give tokenforge/HF ratios
(tokens/word: lower is better; bytes/token: higher is better), the [UNK]
share of the tokens, and the tokens/word ratio over the words that neither
model maps to [UNK] (a failed word counts one token, which flatters the model
that fails more: with ``limit_alphabet=1000`` most of the small scripts are
out of both alphabets).

    python benchmarks/bench_train_quality.py                      # 8k and 30k, both settings, all rules
    python benchmarks/bench_train_quality.py --vocabs 8000 --settings mf0 --methods frequency
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
import time
from collections import Counter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import DATA_DIR, machine_info, print_machine

TEXT = os.path.join(DATA_DIR, "text")
BENCH = os.path.join(DATA_DIR, "bench")
PARALLEL = os.path.join(TEXT, "parallel")
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
FILES = {
    "en": [
        os.path.join(TEXT, "corpus.en"), os.path.join(TEXT, "tinyshakespeare.txt"), os.path.join(TEXT, "botchan.txt"),
        os.path.join(TEXT, "tinystories_valid_sample.txt"), os.path.join(BENCH, "dictd_gcide.txt"),
        os.path.join(BENCH, "linux-kernel-docs_en.txt"), os.path.join(PARALLEL, "debian-reference-en.txt"),
    ],
    "de": [os.path.join(PARALLEL, "debian-reference-de.txt")],
    "ja": [
        os.path.join(TEXT, "wagahaiwa_nekodearu.txt"), os.path.join(BENCH, "manpages-ja_rendered.txt"),
        os.path.join(PARALLEL, "debian-reference-ja.txt"),
    ],
    "zh-hans": [
        os.path.join(TEXT, "hongloumeng.txt"), os.path.join(TEXT, "xiyouji.txt"), os.path.join(BENCH, "sanguoyanyi.txt"),
        os.path.join(BENCH, "shuihuzhuan.txt"), os.path.join(BENCH, "manpages-zh_rendered.txt"),
        os.path.join(PARALLEL, "debian-reference-zh-cn.txt"),
    ],
    "zh-hant": [os.path.join(PARALLEL, "debian-reference-zh-tw.txt")],
}
UDHR = ["rus", "arb", "hin", "ell_monotonic", "kor", "heb", "tha", "fra", "spa", "tur", "vie", "amh", "tam", "kat", "hye"]
SETTINGS = {"mf0": {"min_frequency": 0, "limit_alphabet": None}, "bert": {"min_frequency": 2, "limit_alphabet": 1000}}


def read_lines(path: str, cap: int) -> list[str]:
    """Whole lines from the start of ``path``, up to ``cap`` bytes (CRLF read as LF)."""
    out: list[str] = []
    n = 0
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            out.append(line.rstrip("\r\n") + "\n")
            n += len(line.encode("utf-8"))
            if n >= cap:
                break
    return out


def build_corpus(tmp: str, cap: int) -> tuple[list[str], dict[str, str]]:
    """Write one training and one held-out file per language; returns the
    training files and ``{language: held-out file}``."""
    os.makedirs(tmp, exist_ok=True)
    train: dict[str, list[str]] = {}
    held: dict[str, list[str]] = {}
    for lang, paths in FILES.items():
        for path in paths:
            lines = read_lines(path, cap)
            cut = len(lines) * 85 // 100
            train.setdefault(lang, []).extend(lines[:cut])
            held.setdefault(lang, []).extend(lines[cut:])
    with open(os.path.join(PARALLEL, "udhr_articles_aligned.tsv"), encoding="utf-8", newline="") as f:
        rows = csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
        next(rows)
        for key, _bcp, _script, article, text in rows:
            if key in UDHR:
                lang = "udhr-" + key.split("_")[0]
                (train if int(article) <= 24 else held).setdefault(lang, []).append(text + "\n")
    train_files = []
    held_files = {}
    for lang in train:
        p = os.path.join(tmp, f"train-{lang}.txt")
        with open(p, "w", encoding="utf-8") as f:
            f.writelines(train[lang])
        train_files.append(p)
        q = os.path.join(tmp, f"heldout-{lang}.txt")
        with open(q, "w", encoding="utf-8") as f:
            f.writelines(held[lang])
        held_files[lang] = q
    return train_files, held_files


def hf_split():
    from tokenizers import normalizers, pre_tokenizers

    norm = normalizers.BertNormalizer(lowercase=True)
    pre = pre_tokenizers.BertPreTokenizer()
    return lambda line: [w for w, _ in pre.pre_tokenize_str(norm.normalize_str(line))]


def words_of(path: str) -> list[str]:
    split = hf_split()
    out: list[str] = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            out.extend(split(line))
    return out


def train_hf(files: list[str], vocab: int, setting: dict):
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers

    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    kw = {"min_frequency": setting["min_frequency"]}
    if setting["limit_alphabet"] is not None:
        kw["limit_alphabet"] = setting["limit_alphabet"]
    trainer = trainers.WordPieceTrainer(vocab_size=vocab, special_tokens=SPECIALS, show_progress=False, **kw)
    tok.train(files, trainer)
    model = tok.model
    unk = model.token_to_id("[UNK]") if hasattr(model, "token_to_id") else tok.token_to_id("[UNK]")
    return (lambda w: [t.id for t in model.tokenize(w)]), unk, tok.get_vocab_size()


def train_tf(counts: Counter, vocab: int, setting: dict, method: str):
    from tokenforge.trainers.wordpiece import WordPieceTrainer

    t = WordPieceTrainer(
        vocab_size=vocab, min_frequency=setting["min_frequency"], limit_alphabet=setting["limit_alphabet"],
        special_tokens=SPECIALS, show_progress=False, merge=method,
    )
    model = t.train_from_counts(counts)
    return model.encode_piece, model.unk_id, model.vocab_size


def measure(encode, unk: int, words: list[str]) -> dict:
    """Totals over ``words``, and per distinct word its token count (-1: [UNK])."""
    cache: dict[str, list[int]] = {}
    n = n_unk = 0
    for w in words:
        ids = cache.get(w)
        if ids is None:
            ids = cache[w] = encode(w)
        n += len(ids)
        n_unk += ids.count(unk)
    nbytes = sum(len(w.encode("utf-8")) for w in words)
    lengths = {w: (-1 if unk in ids else len(ids)) for w, ids in cache.items()}
    return {"tokens": n, "words": len(words), "bytes": nbytes, "unk": n_unk, "lengths": lengths}


def known_ratio(ours: dict, hf: dict, words: list[str]) -> float:
    """tokens(ours) / tokens(HF) over the words that neither model maps to [UNK]
    (a word that fails is one token, which flatters the model that fails more)."""
    a = b = 0
    for w in words:
        x, y = ours["lengths"][w], hf["lengths"][w]
        if x > 0 and y > 0:
            a += x
            b += y
    return a / b if b else float("nan")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vocabs", default="8000,30000")
    ap.add_argument("--settings", default="mf0,bert")
    ap.add_argument("--methods", default="frequency,likelihood,score")
    ap.add_argument("--cap-mb", type=float, default=1.0, help="MB read from the start of each source file")
    ap.add_argument("--tmp", default="/tmp/bench_wordpiece_quality")
    ap.add_argument("--json", help="also write the results here")
    args = ap.parse_args()

    from tokenforge.normalizers import BertNormalizer
    from tokenforge.pretokenizers import BertPreTokenizer
    from tokenforge.errors import TrainingError
    from tokenforge.trainers.counting import LineSplitter, count_lines

    print_machine(machine_info())
    train_files, held_files = build_corpus(args.tmp, int(args.cap_mb * 1e6))
    size = sum(os.path.getsize(p) for p in train_files)
    held_words = {lang: words_of(p) for lang, p in held_files.items()}
    print(f"training text: {len(train_files)} languages, {size / 1e6:.1f} MB; held out: "
          f"{sum(os.path.getsize(p) for p in held_files.values()) / 1e6:.1f} MB, "
          f"{sum(map(len, held_words.values()))} words")
    t0 = time.perf_counter()
    counts = count_lines(train_files, LineSplitter(BertNormalizer(lowercase=True).to_dict(), BertPreTokenizer().to_dict()))
    print(f"tokenforge counted {len(counts)} distinct words in {time.perf_counter() - t0:.1f} s")
    split = hf_split()
    ref: Counter = Counter()
    for p in train_files:
        with open(p, encoding="utf-8") as f:
            for line in f:
                ref.update(split(line))
    print(f"tokenforge word counts identical to HF's normalizer + pre-tokenizer: {ref == counts}\n")

    methods = args.methods.split(",")
    results = []
    for setting_name in args.settings.split(","):
        setting = SETTINGS[setting_name]
        for vocab in [int(v) for v in args.vocabs.split(",")]:
            t0 = time.perf_counter()
            enc, unk, size_hf = train_hf(train_files, vocab, setting)
            times = {"hf": time.perf_counter() - t0}
            per = {"hf": {lang: measure(enc, unk, ws) for lang, ws in held_words.items()}}
            sizes = {"hf": size_hf}
            failed: dict[str, str] = {}
            for m in methods:
                t0 = time.perf_counter()
                try:
                    enc, unk, sizes[m] = train_tf(counts, vocab, setting, m)
                except TrainingError as exc:  # "score" keeps both forms of every character: may not fit
                    failed[m] = str(exc)
                    print(f"tokenforge merge={m!r}: {exc}")
                    continue
                times[m] = time.perf_counter() - t0
                per[m] = {lang: measure(enc, unk, ws) for lang, ws in held_words.items()}
            results.append({"setting": setting_name, "vocab": vocab, "sizes": sizes, "seconds": times, "per": per,
                            "failed": failed})
            print(f"## {setting_name} ({', '.join(f'{k}={v}' for k, v in setting.items())}), vocab_size {vocab}")
            print("vocabulary reached: " + ", ".join(f"{k} {v}" for k, v in sizes.items())
                  + "; train seconds: " + ", ".join(f"{k} {v:.1f}" for k, v in times.items()))
            print()
            head = "| language | words | HF tokens/word | HF bytes/token | HF [UNK] % |"
            rule = "|---|---:|---:|---:|---:|"
            for m in methods:
                head += f" {m}: t/w ratio | {m}: b/t ratio | {m}: [UNK] % | {m}: t/w ratio, no [UNK] |"
                rule += "---:|---:|---:|---:|"
            print(head)
            print(rule)
            langs = list(held_words) + ["all"]
            for lang in langs:
                def get(lib: str) -> dict:
                    if lang != "all":
                        return per[lib][lang]
                    tot: Counter = Counter()
                    for r in per[lib].values():
                        tot.update({k: v for k, v in r.items() if k != "lengths"})
                    return tot

                def known(lib: str) -> float:
                    langs_ = list(held_words) if lang == "all" else [lang]
                    a = b = 0.0
                    for lg in langs_:
                        r = known_ratio(per[lib][lg], per["hf"][lg], held_words[lg])
                        hf_known = sum(per["hf"][lg]["lengths"][w] for w in held_words[lg]
                                       if per["hf"][lg]["lengths"][w] > 0 and per[lib][lg]["lengths"][w] > 0)
                        a += r * hf_known if hf_known else 0.0
                        b += hf_known
                    return a / b if b else float("nan")
                h = get("hf")
                row = (f"| {lang} | {h['words']} | {h['tokens'] / h['words']:.4f} | {h['bytes'] / h['tokens']:.3f} | "
                       f"{100 * h['unk'] / h['tokens']:.2f} |")
                for m in methods:
                    if m in failed:
                        row += " - | - | - | - |"
                        continue
                    r = get(m)
                    tw = (r["tokens"] / r["words"]) / (h["tokens"] / h["words"])
                    bt = (r["bytes"] / r["tokens"]) / (h["bytes"] / h["tokens"])
                    row += f" {tw:.4f} | {bt:.4f} | {100 * r['unk'] / r['tokens']:.2f} | {known(m):.4f} |"
                print(row)
            print()
            sys.stdout.flush()
    if args.json:
        for r in results:
            for lib in r["per"].values():
                for lang in lib.values():
                    lang.pop("lengths", None)
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()

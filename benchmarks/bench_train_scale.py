"""Every trainer on a 1 GB multilingual corpus, next to its reference library.

The corpus is the one of ``bench_prepare.py`` (``corpus.txt``: 36,186 unique
documents from ``shared/data/bench`` and ``shared/data/text`` joined with
``"\\n<|endoftext|>\\n"``, **repeated** until ``--size-mb``, 10.33 times for
1,024 MB; built once and reused). Each cell is one training in a fresh
subprocess; the parent samples the RSS of the whole process tree (the process
and its workers) every 0.2 s, so the table shows the peak and the curve is kept
in ``--json``. Both sides get two cores: ``workers=2`` (and ``num_threads=2``)
for tokenforge, ``RAYON_NUM_THREADS=2`` for HF tokenizers, ``num_threads=2``
for sentencepiece.

Families, their reference and the settings both sides share:

* ``bpe``: byte-level BPE, vocab 32,000, GPT-2 pattern, ``<|endoftext|>``
  special; HF ``BpeTrainer`` with the ``ByteLevel`` pre-tokenizer (GPT-2's
  regex) and its 256-byte initial alphabet.
* ``wordpiece``: BERT settings, vocab 30,000, ``min_frequency=2``,
  ``limit_alphabet=1000``, the five BERT specials, lower-casing; HF
  ``WordPieceTrainer`` behind ``BertNormalizer(lowercase=True)`` +
  ``BertPreTokenizer``.
* ``unigram`` and ``spm-bpe``: SentencePiece settings (``nmt_nfkc``,
  ``character_coverage=0.9995``, ``max_sentence_length=4192``, vocab 32,000;
  ``spm-bpe`` with ``byte_fallback`` on both sides, as Llama's); sentencepiece's
  ``SentencePieceTrainer.train`` twice: ``input_sentence_size=0`` (every
  sentence: sampling off) and ``input_sentence_size=1000000`` with
  ``shuffle_input_sentence`` (its recommended sampling: on); tokenforge with every
  line and with ``input_sentence_size=1000000`` (its uniform line sample).

Quality: for the two SentencePiece families, every cell's ``.model`` (read by
sentencepiece) encodes the Debian Reference in five languages, which the corpus does
not hold, and the held-out bytes/token are printed per language.

Determinism: tokenforge trains each family a second time with one worker
(one thread) and another ``PYTHONHASHSEED``; the two saved files must be the
same bytes (sha256 shown). Progress: tokenforge runs with ``show_progress=True``
and the table says how many progress updates its stderr received.

    python benchmarks/bench_train_scale.py                                  # all families, 1 GB (~1.5 h)
    python benchmarks/bench_train_scale.py --families unigram --size-mb 64  # one family, smaller
    python benchmarks/bench_train_scale.py --corpus my.txt --no-determinism

Nothing here is timed against a fixed number: it prints times and ratios
(tokenforge / reference) measured in the same run.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import DATA_DIR, machine_info, print_machine, print_table  # noqa: E402
from bench_prepare import build_corpus, run_monitored  # noqa: E402

EOT = "<|endoftext|>"
BERT_SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
FAMILIES = ("bpe", "wordpiece", "unigram", "spm-bpe")
VOCAB = {"bpe": 32000, "wordpiece": 30000, "unigram": 32000, "spm-bpe": 32000}
SPM_SAMPLE = 1_000_000
# the file a trained tokenizer is saved to (same name in every cell: the native file records it)
SAVED = {"bpe": "tokenizer.json", "wordpiece": "vocab.txt", "unigram": "spm.model", "spm-bpe": "spm.model"}


# =========================================================================== children
def child_tokenforge(spec: dict) -> dict:
    import tokenforge

    fam, corpus, workers, out = spec["family"], spec["corpus"], spec["workers"], spec["out"]
    path = os.path.join(out, SAVED[fam])
    t0 = time.perf_counter()
    with tokenforge.progress.mode("always"):  # stderr is a file here: show the bars anyway
        tok = _train_tokenforge(tokenforge, fam, corpus, workers, path, spec.get("sample", 0))
    seconds = time.perf_counter() - t0
    with open(path, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    return {"seconds": seconds, "vocab": tok.n_vocab, "sha256": digest}


def _train_tokenforge(tokenforge, fam: str, corpus: str, workers: int, path: str, sample: int):
    if fam == "bpe":
        tok = tokenforge.train_bpe([corpus], VOCAB[fam], special_tokens=[EOT], pattern="gpt2",
                                   workers=workers, show_progress=True)
        tok.save(path)
    elif fam == "wordpiece":
        tok = tokenforge.train_wordpiece([corpus], vocab_size=VOCAB[fam], min_frequency=2, limit_alphabet=1000,
                                         special_tokens=BERT_SPECIALS, workers=workers, show_progress=True)
        tok.save(path, format="bert_vocab")
    elif fam == "unigram":
        tok = tokenforge.train_unigram([corpus], vocab_size=VOCAB[fam], workers=workers, num_threads=workers,
                                       input_sentence_size=sample, show_progress=True, out=path)
    else:
        tok = tokenforge.train_sentencepiece_bpe([corpus], vocab_size=VOCAB[fam], byte_fallback=True,
                                                 input_sentence_size=sample, workers=workers, show_progress=True,
                                                 out=path)
    return tok


def child_hf(spec: dict) -> dict:
    from tokenizers import Tokenizer, decoders, normalizers, pre_tokenizers
    from tokenizers.models import BPE, WordPiece
    from tokenizers.trainers import BpeTrainer, WordPieceTrainer

    fam, corpus = spec["family"], spec["corpus"]
    t0 = time.perf_counter()
    if fam == "bpe":
        tok = Tokenizer(BPE())
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        tok.decoder = decoders.ByteLevel()
        trainer = BpeTrainer(vocab_size=VOCAB[fam], special_tokens=[EOT], show_progress=False,
                             initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    else:
        tok = Tokenizer(WordPiece(unk_token="[UNK]"))
        tok.normalizer = normalizers.BertNormalizer(lowercase=True)
        tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        trainer = WordPieceTrainer(vocab_size=VOCAB[fam], min_frequency=2, limit_alphabet=1000,
                                   special_tokens=BERT_SPECIALS, show_progress=False)
    tok.train([corpus], trainer)
    seconds = time.perf_counter() - t0
    return {"seconds": seconds, "vocab": tok.get_vocab_size()}


def child_spm(spec: dict) -> dict:
    import sentencepiece as spm

    fam, corpus, out = spec["family"], spec["corpus"], spec["out"]
    t0 = time.perf_counter()
    spm.SentencePieceTrainer.train(
        input=corpus, model_prefix=os.path.join(out, "spm"), vocab_size=VOCAB[fam],
        model_type="unigram" if fam == "unigram" else "bpe", byte_fallback=fam == "spm-bpe",
        num_threads=spec["workers"], input_sentence_size=spec["sample"], shuffle_input_sentence=True,
        minloglevel=1)
    seconds = time.perf_counter() - t0
    proc = spm.SentencePieceProcessor(model_file=os.path.join(out, "spm.model"))
    return {"seconds": seconds, "vocab": proc.get_piece_size()}


CHILDREN = {"tokenforge": child_tokenforge, "hf": child_hf, "spm": child_spm}


def run_child(spec_json: str) -> None:
    spec = json.loads(spec_json)
    result = CHILDREN[spec["tool"]](spec)
    with open(os.path.join(spec["out"], "result.json"), "w", encoding="utf-8") as f:
        json.dump(result, f)


# =========================================================================== parent
def progress_updates(stderr_path: str) -> tuple[int, list[str]]:
    """How many progress updates tqdm wrote (carriage returns and lines) and the bars' names."""
    try:
        with open(stderr_path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        return 0, []
    parts = [p for p in text.replace("\r", "\n").split("\n") if "|" in p or "it/s" in p or "B/s" in p]
    names: list[str] = []
    for p in parts:
        name = p.split(":", 1)[0].strip()
        if name and len(name) < 40 and name not in names:
            names.append(name)
    return len(parts), names


def cells_for(family: str, determinism: bool) -> list[dict]:
    """(tool, label, settings) of each cell of one family, in the order they run."""
    cells = [{"tool": "tokenforge", "label": "tokenforge", "workers": 2, "hashseed": "0"}]
    if family in ("bpe", "wordpiece"):
        cells.append({"tool": "hf", "label": f"HF tokenizers ({family})", "workers": 2})
    else:
        cells.append({"tool": "spm", "label": "sentencepiece, sampling off", "workers": 2, "sample": 0})
        cells.append({"tool": "spm", "label": f"sentencepiece, sampling on ({SPM_SAMPLE:,})", "workers": 2,
                      "sample": SPM_SAMPLE})
        cells.append({"tool": "tokenforge", "label": f"tokenforge, sampling on ({SPM_SAMPLE:,})", "workers": 2,
                      "hashseed": "0", "sample": SPM_SAMPLE})
    if determinism:
        cells.append({"tool": "tokenforge", "label": "tokenforge, 1 worker, PYTHONHASHSEED=1", "workers": 1,
                      "hashseed": "1"})
    return cells


def run_cell(family: str, cell: dict, corpus: str, work: str) -> dict:
    import re

    slug = re.sub(r"[^a-z0-9]+", "-", cell["label"].lower()).strip("-")
    out = os.path.join(work, family, slug)
    os.makedirs(out, exist_ok=True)
    for name in os.listdir(out):
        os.remove(os.path.join(out, name))
    spec = dict(cell, family=family, corpus=corpus, out=out)
    env = dict(os.environ, RAYON_NUM_THREADS=str(cell["workers"]), TOKENIZERS_PARALLELISM="true",
               PYTHONHASHSEED=cell.get("hashseed", "0"))
    print(f"  {family}: {cell['label']} ...", file=sys.stderr, flush=True)
    mon = run_monitored([sys.executable, os.path.abspath(__file__), "--child", json.dumps(spec)], env, out)
    row = {"family": family, "label": cell["label"], "tool": cell["tool"], "workers": cell["workers"], "out": out,
           "wall": mon["wall"], "peak_rss": mon["peak_rss"], "rc": mon["rc"],
           "curve": [(round(t, 2), rss) for t, _, rss, _ in mon["samples"]]}
    result_path = os.path.join(out, "result.json")
    if mon["rc"] == 0 and os.path.exists(result_path):
        with open(result_path, encoding="utf-8") as f:
            row.update(json.load(f))
    else:
        with open(os.path.join(out, "stderr.txt"), encoding="utf-8", errors="replace") as f:
            row["error"] = f.read()[-2000:]
        print(f"    failed (rc {mon['rc']}): {row['error'][-500:]}", file=sys.stderr)
    if cell["tool"] == "tokenforge":
        row["progress_updates"], row["progress_bars"] = progress_updates(os.path.join(out, "stderr.txt"))
    print(f"    {row['wall']:.1f} s, peak RSS {row['peak_rss'] / 2**20:,.0f} MiB", file=sys.stderr, flush=True)
    return row


def flatness(curve: list, total: float) -> str:
    """Peak RSS in each quarter of the run (MiB): flat when the later quarters do not keep growing."""
    quarters = []
    for q in range(4):
        lo, hi = total * q / 4, total * (q + 1) / 4
        vals = [rss for t, rss in curve if lo <= t < hi or (q == 3 and t >= hi)]
        quarters.append(f"{max(vals) / 2**20:,.0f}" if vals else "-")
    return " / ".join(quarters)


def report(rows: list[dict], family: str) -> None:
    fam_rows = [r for r in rows if r["family"] == family]
    tf = next((r for r in fam_rows if r["tool"] == "tokenforge" and r["workers"] == 2 and "sampling" not in r["label"]),
              None)
    print(f"\n#### {family}: vocab {VOCAB[family]:,}\n")
    table = []
    for r in fam_rows:
        ratio = ""
        if tf is not None and r is not tf and "seconds" in r and "seconds" in tf:
            ratio = f"{tf['wall'] / r['wall']:.2f}x"
        table.append([r["label"], f"{r['wall']:.1f}", ratio, f"{r['peak_rss'] / 2**20:,.0f}",
                      flatness(r["curve"], r["wall"]), str(r.get("vocab", "failed")),
                      str(r.get("progress_updates", "")), r.get("sha256", "")[:16]])
    print_table(["cell", "wall s", "tokenforge time ÷ this", "peak tree RSS MiB", "RSS by quarter MiB",
                 "vocab", "progress updates", "saved file sha256"], table)
    tf_rows = [r for r in fam_rows if r["tool"] == "tokenforge" and "sampling" not in r["label"]]
    if len(tf_rows) > 1:
        same = all("sha256" in r for r in tf_rows) and len({r["sha256"] for r in tf_rows}) == 1
        print("\ntokenforge deterministic across workers 2/1 and hash seeds 0/1: "
              + ("yes, the same bytes" if same else "NO: the saved files differ"))


def plot(rows: list[dict], path: str) -> None:
    """One panel per family: the process tree's RSS over time, one line per cell."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    families = [f for f in FAMILIES if any(r["family"] == f for r in rows)]
    fig, axes = plt.subplots(len(families), 1, figsize=(9, 3.2 * len(families)), squeeze=False)
    for ax, fam in zip(axes[:, 0], families):
        for r in rows:
            if r["family"] == fam and r["curve"]:
                ax.plot([t for t, _ in r["curve"]], [rss / 2**20 for _, rss in r["curve"]],
                        label=f"{r['label']} ({r['wall']:.0f} s)")
        ax.set_title(f"{fam}, vocab {VOCAB[fam]:,}: RSS of the process tree")
        ax.set_xlabel("seconds")
        ax.set_ylabel("MiB")
        ax.legend(fontsize=8)
        ax.grid(alpha=0.3)
    fig.tight_layout()
    tmp = path + ".tmp.png"
    fig.savefig(tmp, dpi=90)
    os.replace(tmp, path)


#: held-out text for the SentencePiece models: the Debian Reference in five languages (not in the corpus)
HELDOUT = [os.path.join(DATA_DIR, "text", "parallel", f"debian-reference-{lang}.txt")
           for lang in ("en", "de", "ja", "zh-cn", "zh-tw")]


def heldout_report(rows: list[dict], family: str) -> None:
    """Held-out bytes/token of every cell's .model (each read by sentencepiece), per language."""
    import sentencepiece as spm

    cells = [r for r in rows if r["family"] == family and r.get("rc") == 0 and r.get("out")
             and os.path.exists(os.path.join(r["out"], "spm.model"))]
    if not cells:
        return
    texts = {}
    for path in HELDOUT:
        with open(path, encoding="utf-8") as f:
            texts[os.path.basename(path)[len("debian-reference-"):-4]] = [ln.strip() for ln in f if ln.strip()]
    table = []
    for r in cells:
        sp = spm.SentencePieceProcessor(model_file=os.path.join(r["out"], "spm.model"))
        row = [r["label"]]
        for lines in texts.values():
            n_bytes = sum(len(ln.encode("utf-8")) for ln in lines)
            row.append(f"{n_bytes / sum(len(ids) for ids in sp.encode(lines)):.4f}")
        table.append(row)
    print("\nheld-out bytes/token (Debian Reference, not in the corpus), each model read by sentencepiece:\n")
    print_table(["cell", *texts], table)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--families", default=",".join(FAMILIES), help="comma-separated: " + ", ".join(FAMILIES))
    ap.add_argument("--size-mb", type=float, default=1024, help="corpus size in MB (10^6 bytes); default 1024")
    ap.add_argument("--data-dir", default=os.path.join(os.environ.get("TMPDIR", "/tmp"), "tokenforge_train_scale"),
                    help="where the corpus is built (reused when present)")
    ap.add_argument("--corpus", help="train on this text file instead of building one")
    ap.add_argument("--no-determinism", action="store_true", help="skip the second tokenforge run per family")
    ap.add_argument("--only", choices=("tokenforge", "references"),
                    help="run only tokenforge's cells or only the references' (e.g. to measure a change of "
                         "tokenforge against references measured earlier: say so when quoting the ratio)")
    ap.add_argument("--json", help="write every cell (with its RSS curve) here")
    ap.add_argument("--plot", help="draw the RSS curves to this PNG (needs matplotlib)")
    ap.add_argument("--plot-from", help="only draw --plot from this --json file of an earlier run")
    args = ap.parse_args()
    if args.child:
        run_child(args.child)
        return
    if args.plot_from:
        with open(args.plot_from, encoding="utf-8") as f:
            plot(json.load(f)["rows"], args.plot or os.path.splitext(args.plot_from)[0] + ".png")
        return
    families = [f.strip() for f in args.families.split(",") if f.strip()]
    for f in families:
        if f not in FAMILIES:
            ap.error(f"unknown family {f!r}; choose from {', '.join(FAMILIES)}")
    if args.corpus:
        corpus = os.path.abspath(args.corpus)
        corpus_note = f"{corpus}: {os.path.getsize(corpus) / 1e6:,.1f} MB"
    else:
        meta = build_corpus(args.data_dir, args.size_mb)
        corpus = os.path.join(args.data_dir, "corpus.txt")
        corpus_note = (f"{corpus}: {meta['txt_bytes'] / 1e6:,.1f} MB, {meta['unique_docs']:,} unique documents "
                       f"({meta['unique_bytes'] / 1e6:,.1f} MB) repeated {meta['repeats']:.2f} times")
    info = machine_info()
    print_machine(info)
    print(f"command: python benchmarks/{os.path.basename(__file__)} {' '.join(sys.argv[1:])}")
    print(f"corpus: {corpus_note}")
    work = os.path.join(args.data_dir, "runs")
    rows: list[dict] = []
    for fam in families:
        for cell in cells_for(fam, not args.no_determinism):
            if args.only and (cell["tool"] == "tokenforge") != (args.only == "tokenforge"):
                continue
            rows.append(run_cell(fam, cell, corpus, work))
        report(rows, fam)
        if fam in ("unigram", "spm-bpe"):
            heldout_report(rows, fam)
        sys.stdout.flush()
        if args.json:
            tmp = args.json + ".tmp"
            with open(tmp, "w", encoding="utf-8") as f:
                json.dump({"machine": info, "corpus": corpus_note, "rows": rows}, f)
            os.replace(tmp, args.json)
    if args.plot:
        plot(rows, args.plot)


if __name__ == "__main__":
    main()

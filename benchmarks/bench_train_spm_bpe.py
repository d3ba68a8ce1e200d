"""SentencePiece-style BPE training next to ``spm_train --model_type=bpe``.

Both sides train on the same lines, taken as already normalized:

* **sentencepiece**: ``SentencePieceTrainer.train(sentence_iterator=...,
  model_type="bpe", normalization_rule_name="identity",
  remove_extra_whitespaces=False, character_coverage=0.9995, vocab_size=V)``
  into an in-memory model (``max_sentence_length`` raised so no line is
  skipped). Its time includes splitting the lines into ``▁`` words and counting
  them, which it does in C++.
* **tokenforge**: the same split and count in Python (each line gets the dummy
  prefix ``▁``, spaces become ``▁``, a word starts at every ``▁``), then
  ``SentencePieceBPETrainer(vocab_size=V, character_coverage=0.9995)
  .train_from_counts(counts)`` with the native merge loop, and once more with
  ``backend="python"`` (the reference) for the record.

Printed per corpus: the best of ``--repeats`` wall times (in this process,
after one warm-up run of each, so imports and the script-regex compile are
not counted for either side), the ratio tokenforge / sentencepiece for the
trainer alone and for count + trainer, and the share of sentencepiece's pieces
that tokenforge also learned (they differ only where sentencepiece breaks count
ties by memory address).

    python benchmarks/bench_train_spm_bpe.py
    python benchmarks/bench_train_spm_bpe.py --repeats 5 --no-python
"""

from __future__ import annotations

import argparse
import io
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import DATA_DIR, machine_info, print_machine

CORPORA = [("botchan.txt", 2000), ("wagahaiwa_nekodearu.txt", 4000), ("hongloumeng.txt", 6000)]
COVERAGE = 0.9995


def read_lines(name: str) -> list[str]:
    with open(os.path.join(DATA_DIR, "text", name), encoding="utf-8") as f:
        return [line for line in f.read().split("\n") if line]


def count_words(lines: list[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for line in lines:
        for w in ("▁" + line.replace(" ", "▁")).split("▁")[1:]:
            w = "▁" + w
            counts[w] = counts.get(w, 0) + 1
    return counts


def spm_train(lines: list[str], vocab: int) -> list[str]:
    import sentencepiece as spm

    from tokenforge.formats.sentencepiece import read_model

    buf = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(lines), model_writer=buf, model_type="bpe", vocab_size=vocab,
        character_coverage=COVERAGE, normalization_rule_name="identity", remove_extra_whitespaces=False,
        max_sentence_length=1 << 20, num_threads=1, minloglevel=2,
    )
    return [p.piece for p in read_model(buf.getvalue()).pieces]


def tf_train(counts: dict[str, int], vocab: int, backend: str) -> list[str]:
    from tokenforge.trainers.spm_bpe import SentencePieceBPETrainer

    model = SentencePieceBPETrainer(
        vocab_size=vocab, character_coverage=COVERAGE, show_progress=False, backend=backend
    ).train_from_counts(counts)
    return [model.id_to_token(i) for i in range(model.vocab_size)]


def best(f, repeats: int) -> tuple[float, object]:
    out = None
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = f()
        times.append(time.perf_counter() - t0)
    return min(times), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--no-python", action="store_true", help="skip the pure-Python reference")
    args = ap.parse_args()
    print_machine(machine_info())
    print(f"{'corpus':<26}{'vocab':>6}{'spm s':>8}{'count s':>9}{'train s':>9}{'train/spm':>10}"
          f"{'(count+train)/spm':>19}{'python s':>10}{'same pieces':>13}")
    for name, vocab in CORPORA:
        lines = read_lines(name)
        spm_train(lines, vocab)  # warm-up
        tf_train(count_words(lines), vocab, "native")
        t_spm, theirs = best(lambda lines=lines, vocab=vocab: spm_train(lines, vocab), args.repeats)
        t_count, counts = best(lambda lines=lines: count_words(lines), args.repeats)
        t_tf, ours = best(lambda counts=counts, vocab=vocab: tf_train(counts, vocab, "native"), args.repeats)
        t_py = float("nan")
        if not args.no_python:
            t_py, ref = best(lambda counts=counts, vocab=vocab: tf_train(counts, vocab, "python"), 1)
            assert ref == ours, f"{name}: native and Python pieces differ"
        same = len(set(ours) & set(theirs)) / len(theirs)
        print(f"{name:<26}{vocab:>6}{t_spm:>8.3f}{t_count:>9.3f}{t_tf:>9.3f}{t_tf / t_spm:>10.2f}"
              f"{(t_count + t_tf) / t_spm:>19.2f}{t_py:>10.2f}{same:>12.1%}")


if __name__ == "__main__":
    main()

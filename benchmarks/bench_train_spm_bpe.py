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

Printed per corpus and vocabulary size: the best of ``--repeats`` wall times (in
this process, after one warm-up run of each when ``--repeats`` > 1, so imports and the script-regex
compile are not counted for either side), the ratio tokenforge / sentencepiece
for the trainer alone and for count + trainer, the share of sentencepiece's
pieces that tokenforge also learned, and whether the two vocabularies are the
same list (same pieces, same ids, same scores).

``--diff`` adds the diagnostic: every piece one side learned and the other did
not, with the step at which each side learned it and its count at that step
(both sequences replayed by a small independent merge loop here), and a
verdict for the first step where the two sequences part: *tie* (both pieces
had the same count there and sentencepiece's comes first in its own order:
shorter, then smaller string; the rules that break ties differ),
*approximation* (sentencepiece took a pair whose count was below the best one,
or a tie its own order gives to the other piece: a candidate outside the
active set of sentencepiece <= 0.2.1) or *bug* (tokenforge took a pair whose
count was below the best one). Any step of either sequence that took a pair
below the top count is reported as well. It also counts the
*split ties* of sentencepiece's sequence: steps where another split of the
same string (``"aa"+"a"`` against ``"a"+"aa"``) had the same count; those are
the only choices sentencepiece's order leaves open (its heap compares count,
length and string; two splits of one string compare equal).

``--heldout`` trains on the first part of each corpus and reports, per language,
UTF-8 bytes per token on held-out text for both models.

The ``multilingual`` corpus is built here from ``/work/shared/data``: the Debian
reference in five languages (en, de, ja, zh-cn, zh-tw), Japanese and Chinese
man pages, Linux kernel documentation, the GCIDE dictionary and the Universal
Declaration of Human Rights in every language it has (articles 1-24 for
training, 25-30 held out; grouped by script for the held-out figures).

    python benchmarks/bench_train_spm_bpe.py
    python benchmarks/bench_train_spm_bpe.py --repeats 5 --no-python
    python benchmarks/bench_train_spm_bpe.py --full --diff --heldout --repeats 1 --no-python
    python benchmarks/bench_train_spm_bpe.py --full --diff --before --repeats 1 --no-python
    pip install --no-deps --target /tmp/spm020 sentencepiece==0.2.0
    python benchmarks/bench_train_spm_bpe.py --repeats 1 --no-python --other-spm /tmp/spm020
"""

from __future__ import annotations

import argparse
import csv
import heapq
import io
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import DATA_DIR, machine_info, print_machine

CORPORA = [("botchan.txt", 2000), ("wagahaiwa_nekodearu.txt", 4000), ("hongloumeng.txt", 6000)]
#: --full: more vocabulary sizes, and the multilingual corpus
FULL = [
    ("botchan.txt", (2000, 4000, 8000)),
    ("wagahaiwa_nekodearu.txt", (4000, 8000, 16000)),
    ("hongloumeng.txt", (6000, 8000, 16000)),
    ("multilingual", (8000, 16000, 24000)),
]
COVERAGE = 0.9995
SPACE = "\u2581"

# -- corpora ------------------------------------------------------------------------------


def _file_lines(path: str) -> list[str]:
    with open(path, encoding="utf-8") as f:
        return [line for line in f.read().split("\n") if line]


def read_lines(name: str) -> list[str]:
    if name == "multilingual":
        return [line for lines in multilingual("train").values() for line in lines]
    return _file_lines(os.path.join(DATA_DIR, "text", name))


def multilingual(part: str) -> dict[str, list[str]]:
    """``{language: lines}`` of the multilingual corpus, ``part`` "train" or "heldout"."""
    out: dict[str, list[str]] = {}
    for lang in ("en", "de", "ja", "zh-cn", "zh-tw"):
        lines = _file_lines(os.path.join(DATA_DIR, "text", "parallel", f"debian-reference-{lang}.txt"))
        out[lang] = lines[:6000] if part == "train" else lines[-1500:]
    for name, lang, n in (("manpages-ja_rendered.txt", "ja-man", 3000), ("manpages-zh_rendered.txt", "zh-man", 3000),
                          ("linux-kernel-docs_en.txt", "en-kernel", 3000), ("dictd_gcide.txt", "en-gcide", 3000)):
        with open(os.path.join(DATA_DIR, "bench", name), encoding="utf-8") as f:
            lines = []
            for line in f:
                line = line.rstrip("\n")
                if line:
                    lines.append(line)
                if len(lines) >= n + 800:
                    break
        out[lang] = lines[:n] if part == "train" else lines[n:]
    with open(os.path.join(DATA_DIR, "text", "parallel", "udhr_articles_aligned.tsv"), encoding="utf-8") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            held = int(row["article"]) > 24
            if held == (part == "heldout") and row["text"]:
                out.setdefault(f"udhr-{row['script']}", []).append(row["text"])
    return out


def count_words(lines: list[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for line in lines:
        for w in (SPACE + line.replace(" ", SPACE)).split(SPACE)[1:]:
            w = SPACE + w
            counts[w] = counts.get(w, 0) + 1
    return counts


# -- the two trainers -------------------------------------------------------------------


def spm_model(lines: list[str], vocab: int) -> bytes:
    import sentencepiece as spm

    buf = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(lines), model_writer=buf, model_type="bpe", vocab_size=vocab,
        character_coverage=COVERAGE, normalization_rule_name="identity", remove_extra_whitespaces=False,
        max_sentence_length=1 << 20, num_threads=1, minloglevel=2,
    )
    return buf.getvalue()


def spm_train(lines: list[str], vocab: int) -> list[str]:
    from tokenforge.formats.sentencepiece import read_model

    return [p.piece for p in read_model(spm_model(lines, vocab)).pieces]


def tf_model(counts: dict[str, int], vocab: int, backend: str):
    from tokenforge.trainers.spm_bpe import SentencePieceBPETrainer

    return SentencePieceBPETrainer(
        vocab_size=vocab, character_coverage=COVERAGE, show_progress=False, backend=backend
    ).train_from_counts(counts)


def tf_train(counts: dict[str, int], vocab: int, backend: str) -> list[str]:
    model = tf_model(counts, vocab, backend)
    return [model.id_to_token(i) for i in range(model.vocab_size)]


def best(f, repeats: int) -> tuple[float, object]:
    out = None
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = f()
        times.append(time.perf_counter() - t0)
    return min(times), out


# -- the diagnostic: an independent replay of a merge sequence ------------------------------


class Replay:
    """The merge loop once more, written for inspection rather than speed: pair counts
    with a word index, merges left to right without overlap. :meth:`step` merges the
    live pair that spells a given piece (the one with the highest count; among two
    splits of the string with the same count, the shorter left part) and returns its
    count, so a merge sequence can be replayed and the count of every piece read at the
    step it was learned. Only pairs whose string passes ``valid`` are counted; a pair
    whose string was learned already is never the top."""

    def __init__(self, counts: dict[str, int], alphabet: set[str], valid) -> None:
        self.valid = valid
        self.learned: set[str] = set()
        self.words: list[list[str]] = []
        self.freqs: list[int] = []
        for text, c in counts.items():
            run: list[str] = []
            for ch in text + "\0":
                if ch in alphabet:
                    run.append(ch)
                    continue
                if len(run) > 1:
                    self.words.append(run)
                    self.freqs.append(c)
                run = []
        self.count: dict[tuple[str, str], int] = {}
        self.where: dict[tuple[str, str], set[int]] = {}
        self.by_str: dict[str, set[tuple[str, str]]] = {}
        for idx, w in enumerate(self.words):
            for p in zip(w, w[1:]):
                self._add(p, self.freqs[idx], idx)
        self.heap = [(-c, p) for p, c in self.count.items()]
        heapq.heapify(self.heap)

    def _add(self, p: tuple[str, str], d: int, idx: int | None = None) -> None:
        if not self.valid(p[0] + p[1]):
            return
        c = self.count.get(p, 0) + d
        if c > 0:
            self.count[p] = c
            self.by_str.setdefault(p[0] + p[1], set()).add(p)
        else:
            self.count.pop(p, None)
            s = self.by_str.get(p[0] + p[1])
            if s:
                s.discard(p)
        if idx is not None and d > 0:
            self.where.setdefault(p, set()).add(idx)

    def top(self) -> int:
        """The highest count of any pair now (0 when none is left)."""
        while self.heap:
            negc, p = self.heap[0]
            if self.count.get(p) == -negc and p[0] + p[1] not in self.learned:
                return -negc
            heapq.heappop(self.heap)
        return 0

    def splits(self, piece: str) -> list[tuple[int, tuple[str, str]]]:
        """The live pairs spelling ``piece``: ``[(count, pair)]``, best first."""
        return sorted(((self.count[p], p) for p in self.by_str.get(piece, ())), key=lambda cp: (-cp[0], len(cp[1][0])))

    def step(self, piece: str) -> int:
        self.learned.add(piece)
        cands = self.splits(piece)
        if not cands:
            return 0  # a piece whose count is 0 (sentencepiece takes them when nothing else is left)
        c, pair = cands[0]
        self._merge(pair)
        return c

    def run_pair_rule(self, n: int) -> list[str]:
        """``n`` merges choosing by count, then the smaller (left, right) strings: the rule
        tokenforge broke ties with before it took sentencepiece's (for ``--before``)."""
        out: list[str] = []
        while len(out) < n and self.top():
            _, pair = self.heap[0]
            out.append(pair[0] + pair[1])
            self.learned.add(out[-1])
            self._merge(pair)
        return out

    def _merge(self, pair: tuple[str, str]) -> None:
        a, b = pair
        new = a + b
        delta: dict[tuple[str, str], int] = {}
        for idx in self.where.pop(pair, ()):
            w = self.words[idx]
            hits = []
            i = 0
            while i + 1 < len(w):
                if w[i] == a and w[i + 1] == b:
                    hits.append(i)
                    i += 2
                else:
                    i += 1
            if not hits:
                continue
            f = self.freqs[idx]
            gone = set()  # positions of the pairs that touch an occurrence
            for i in hits:
                gone.update(k for k in (i - 1, i, i + 1) if 0 <= k < len(w) - 1)
            for k in gone:
                p = (w[k], w[k + 1])
                delta[p] = delta.get(p, 0) - f
            out = w[: hits[0]]
            at = []
            for n, i in enumerate(hits):
                at.append(len(out))
                out.append(new)
                out.extend(w[i + 2 : hits[n + 1] if n + 1 < len(hits) else len(w)])
            born = set()
            for j in at:
                born.update(k for k in (j - 1, j) if 0 <= k < len(out) - 1)
            for k in born:
                p = (out[k], out[k + 1])
                delta[p] = delta.get(p, 0) + f
                self.where.setdefault(p, set()).add(idx)
            self.words[idx] = out
        for p, d in delta.items():
            if d:
                self._add(p, d)
                if p in self.count:
                    heapq.heappush(self.heap, (-self.count[p], p))


def diff_report(name: str, vocab: int, counts: dict[str, int], theirs: list[str], ours: list[str],
                before: bool = False) -> dict[str, int]:
    """Print the diagnostic for one run; returns {"split_ties": n, "differences": n}. With
    ``before``, tokenforge's side is the sequence of the tie rule it used before (count, then
    the (left, right) strings), replayed here."""
    from tokenforge.trainers.coverage import count_chars, required_chars
    from tokenforge.trainers.spm_bpe import SentencePieceBPETrainer, _blank_meta_pieces

    t = SentencePieceBPETrainer(vocab_size=vocab, character_coverage=COVERAGE, show_progress=False)
    meta = [p for p, _ in t._meta_pieces()]
    counts = _blank_meta_pieces(dict(counts), meta)
    alphabet = [ch for ch, _ in required_chars(count_chars(counts), COVERAGE) if ch != "\x1f"]
    n_merges = vocab - len(meta) - len(alphabet)
    cache: dict[str, bool] = {}

    def valid(piece: str) -> bool:
        v = cache.get(piece)
        if v is None:
            v = cache[piece] = t.is_valid_piece(piece)
        return v

    seq_s = theirs[len(meta) : len(meta) + n_merges]
    seq_t = ours[len(meta) : len(meta) + n_merges]
    if before:
        seq_t = Replay(counts, set(alphabet), valid).run_pair_rule(n_merges)
        ours = theirs[: len(meta)] + seq_t + theirs[len(meta) + n_merges :]

    def trajectory(seq: list[str]) -> tuple[dict[str, tuple[int, int]], int, int | None]:
        """{piece: (step, count)}, the number of split ties, and the first step whose piece did not
        have the top count."""
        r = Replay(counts, set(alphabet), valid)
        out: dict[str, tuple[int, int]] = {}
        split_ties = 0
        below = None
        for k, piece in enumerate(seq):
            top = r.top()
            cands = r.splits(piece)
            if len(cands) > 1 and cands[0][0] == cands[1][0]:
                split_ties += 1
            c = r.step(piece)
            if c < top and below is None:
                below = k
            out[piece] = (k, c)
        return out, split_ties, below

    at_s, ties_s, below_s = trajectory(seq_s)
    at_t, ties_t, below_t = (at_s, ties_s, below_s) if seq_t == seq_s else trajectory(seq_t)
    first = next((k for k, (x, y) in enumerate(zip(seq_s, seq_t)) if x != y), None)
    only_s = [p for p in seq_s if p not in at_t]
    only_t = [p for p in seq_t if p not in at_s]
    label = " (tokenforge's former tie rule)" if before else ""
    print(f"\n## {name} at {vocab}{label}: {len(seq_s)} merges; sentencepiece's sequence has {ties_s} split ties"
          f" (tokenforge's {ties_t}); pieces only in sentencepiece: {len(only_s)}, only in tokenforge: {len(only_t)}")
    if below_s is not None:
        print(f"  sentencepiece took a pair below the top count at step {below_s}: approximation")
    if below_t is not None:
        print(f"  tokenforge took a pair below the top count at step {below_t}: bug")
    if first is None:
        print("  same merge sequence" + ("" if theirs == ours else " (but the vocabularies differ elsewhere)"))
    else:
        r = Replay(counts, set(alphabet), valid)
        for piece in seq_s[:first]:
            r.step(piece)
        top = r.top()
        cs = (r.splits(seq_s[first]) or [(0, None)])[0][0]
        ct = (r.splits(seq_t[first]) or [(0, None)])[0][0]
        ps, pt = seq_s[first], seq_t[first]
        if cs != ct:
            verdict = "approximation (sentencepiece's count is lower)" if cs < ct else "bug (tokenforge's count is lower)"
        elif (len(ps), ps) < (len(pt), pt):
            verdict = "tie, broken differently (sentencepiece's order: shorter, then smaller string)"
        else:
            verdict = "tie that sentencepiece's own order gives to tokenforge's piece: approximation"
        print(f"  first step that differs: {first}: sentencepiece {seq_s[first]!r} (count {cs}), tokenforge "
              f"{seq_t[first]!r} (count {ct}), top count {top}: {verdict}")
        rows = [(p, at_s.get(p), at_t.get(p)) for p in only_s + only_t]
        print(f"  {'piece':<20}{'spm step':>9}{'count':>8}{'tf step':>9}{'count':>8}")
        for p, s, q in rows[:40]:
            fs = f"{s[0]:>9}{s[1]:>8}" if s else f"{'-':>9}{'-':>8}"
            ft = f"{q[0]:>9}{q[1]:>8}" if q else f"{'-':>9}{'-':>8}"
            print(f"  {p!r:<20}{fs}{ft}")
        if len(rows) > 40:
            print(f"  ... {len(rows) - 40} more")
    return {"split_ties": ties_s, "differences": len(only_s) + len(only_t)}


# -- another sentencepiece release, in its own process -----------------------------------------

_OTHER_SPM = r"""
import io, json, sys
sys.path.insert(0, sys.argv[1])
import sentencepiece as spm
from sentencepiece import sentencepiece_model_pb2 as pb
sys.path.insert(0, sys.argv[2])
from bench_train_spm_bpe import COVERAGE, read_lines
out = {"version": spm.__version__}
for arg in sys.argv[3:]:
    name, vocab = arg.rsplit(":", 1)
    buf = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(read_lines(name)), model_writer=buf, model_type="bpe",
        vocab_size=int(vocab), character_coverage=COVERAGE, normalization_rule_name="identity",
        remove_extra_whitespaces=False, max_sentence_length=1 << 20, num_threads=1, minloglevel=2)
    m = pb.ModelProto()
    m.ParseFromString(buf.getvalue())
    out[arg] = [p.piece for p in m.pieces]
json.dump(out, sys.stdout)
"""


def other_spm_report(path: str, runs: list[tuple[str, int]]) -> None:
    """Train with the sentencepiece installed under ``path`` (``pip install --target``), e.g. 0.2.0,
    whose BPE trainer only looks at an active set of candidates between refreshes."""
    import json
    import subprocess

    here = os.path.dirname(os.path.abspath(__file__))
    res = subprocess.run([sys.executable, "-c", _OTHER_SPM, path, here] + [f"{n}:{v}" for n, v in runs],
                         capture_output=True, text=True, check=True)
    other = json.loads(res.stdout)
    version = other.pop("version")
    print(f"\n# sentencepiece {version} from {path}")
    for arg, theirs in other.items():
        name, vocab = arg.rsplit(":", 1)
        counts = count_words(read_lines(name))
        ours = tf_train(counts, int(vocab), "native")
        print(f"{name:<26}{vocab:>6}  same pieces {len(set(ours) & set(theirs)) / len(theirs):.2%}  same list {ours == theirs}")
        diff_report(f"{name} (sentencepiece {version})", int(vocab), counts, theirs, ours)


# -- held-out bytes per token -------------------------------------------------------------


def heldout_report(vocab: int) -> None:
    import sentencepiece as spm

    train = multilingual("train")
    held = multilingual("heldout")
    lines = [line for ls in train.values() for line in ls]
    sp = spm.SentencePieceProcessor(model_proto=spm_model(lines, vocab))
    model = tf_model(count_words(lines), vocab, "native")
    print(f"\n## held-out bytes per token, multilingual corpus, vocab {vocab}")
    print(f"{'language':<14}{'lines':>7}{'bytes':>10}{'spm b/tok':>11}{'tf b/tok':>10}{'tf/spm':>8}{'same ids':>10}")
    for lang in sorted(held):
        ls = held[lang]
        if len(ls) < 6:
            continue
        n_bytes = sum(len(line.encode()) for line in ls)
        ids_s = [sp.encode(line) for line in ls]
        ids_t = [model.encode_piece(SPACE + line.replace(" ", SPACE)) for line in ls]
        ts = sum(map(len, ids_s))
        tt = sum(map(len, ids_t))
        print(f"{lang:<14}{len(ls):>7}{n_bytes:>10}{n_bytes / ts:>11.3f}{n_bytes / tt:>10.3f}{ts / tt:>8.3f}"
              f"{str(ids_s == ids_t):>10}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--no-python", action="store_true", help="skip the pure-Python reference")
    ap.add_argument("--full", action="store_true", help="more vocabulary sizes and the multilingual corpus")
    ap.add_argument("--diff", action="store_true", help="list and classify every differing piece")
    ap.add_argument("--before", action="store_true",
                    help="with --diff: compare with the former tie rule (count, then (left, right) strings)")
    ap.add_argument("--other-spm", metavar="DIR",
                    help="also compare with the sentencepiece installed in DIR (pip install --target DIR ...)")
    ap.add_argument("--heldout", action="store_true", help="held-out bytes/token per language (multilingual corpus)")
    args = ap.parse_args()
    print_machine(machine_info())
    runs = [(n, v) for n, vs in FULL for v in vs] if args.full else CORPORA
    print(f"{'corpus':<26}{'vocab':>6}{'spm s':>8}{'count s':>9}{'train s':>9}{'train/spm':>10}"
          f"{'(count+train)/spm':>19}{'python s':>10}{'same pieces':>13}{'same list':>11}")
    diffs = []
    for name, vocab in runs:
        lines = read_lines(name)
        if args.repeats > 1:
            spm_train(lines, vocab)  # warm-up
            tf_train(count_words(lines), vocab, "native")
        try:
            t_spm, theirs = best(lambda lines=lines, vocab=vocab: spm_train(lines, vocab), args.repeats)
        except RuntimeError as exc:  # e.g. the vocabulary is larger than the corpus allows
            print(f"{name:<26}{vocab:>6}  sentencepiece refuses: {str(exc).splitlines()[0][-100:]}")
            continue
        t_count, counts = best(lambda lines=lines: count_words(lines), args.repeats)
        t_tf, ours = best(lambda counts=counts, vocab=vocab: tf_train(counts, vocab, "native"), args.repeats)
        t_py = float("nan")
        if not args.no_python:
            t_py, ref = best(lambda counts=counts, vocab=vocab: tf_train(counts, vocab, "python"), 1)
            assert ref == ours, f"{name}: native and Python pieces differ"
        same = len(set(ours) & set(theirs)) / len(theirs)
        print(f"{name:<26}{vocab:>6}{t_spm:>8.3f}{t_count:>9.3f}{t_tf:>9.3f}{t_tf / t_spm:>10.2f}"
              f"{(t_count + t_tf) / t_spm:>19.2f}{t_py:>10.2f}{same:>12.1%}{str(ours == theirs):>11}", flush=True)
        if args.diff:
            diffs.append((name, vocab, counts, theirs, ours))
    summary = []
    for d in diffs:
        r = diff_report(*d)
        summary.append((d[0], d[1], r, diff_report(*d, before=True) if args.before else None))
    if summary:
        print(f"\n{'corpus':<26}{'vocab':>6}{'split ties':>12}{'differing pieces':>18}"
              + (f"{'before: differing':>19}" if args.before else ""))
        for name, vocab, r, b in summary:
            print(f"{name:<26}{vocab:>6}{r['split_ties']:>12}{r['differences']:>18}"
                  + (f"{b['differences']:>19}" if b else ""))
    if args.other_spm:
        other_spm_report(args.other_spm, runs)
    if args.heldout:
        for vocab in (8000, 16000):
            heldout_report(vocab)


if __name__ == "__main__":
    main()

"""Adversarial inputs for every shipped family, up to 16 MB: BERT WordPiece, SentencePiece
Unigram and BPE ``.model`` files, HF Unigram ``tokenizer.json``, beside the library that
defines their ids (HF ``tokenizers``, ``sentencepiece``), in one run.

The inputs are those of ``bench_worst_case.py`` (one letter repeated, spaces, newlines,
digits, minified JSON, random letters without spaces, a punctuation run, random
punctuation, base64, one CJK character repeated) at 1, 4 and 16 MB (``--sizes``). Each
cell is the best of ``--repeats`` encodes of the whole input. Printed per tokenizer and
input: tokenforge's MB/s at each size, the log-log slope of time against size from the
smallest to the largest (1.0 = linear), and the reference's MB/s with the ratio
tokenforge / reference at the sizes the reference finishes within ``--max-seconds``
(projected from the size before). Ids are compared wherever both ran; a mismatch is
printed and the script exits with status 1.

    python benchmarks/bench_worst_case_families.py
    python benchmarks/bench_worst_case_families.py --sizes 1000000,4000000 --inputs letter,random
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import machine_info, print_machine  # noqa: E402
from bench_worst_case import INPUTS, make_input  # noqa: E402

DATA = "/work/shared/data/vocab"
TOKENIZERS = {
    "bert-base-uncased (vocab.txt)": ("wordpiece/bert-base-uncased_vocab.txt", "hf-bert"),
    "albert (HF Unigram tokenizer.json)": ("hf/albert-base-v2_spiece_unigram_tokenizer.json", "hf"),
    "albert_spiece.model (Unigram)": ("sentencepiece/albert_spiece.model", "spm"),
    "mistral_v1 tokenizer.model (BPE, byte fallback)": ("sentencepiece/mistral_v1_tokenizer.model", "spm"),
}


def _reference(kind: str, path: str):
    if kind == "hf":
        import tokenizers

        t = tokenizers.Tokenizer.from_file(path)
        return lambda text: t.encode(text, add_special_tokens=False).ids
    if kind == "hf-bert":
        import tokenizers

        t = tokenizers.BertWordPieceTokenizer(path, lowercase=True)
        return lambda text: t.encode(text, add_special_tokens=False).ids
    import sentencepiece

    sp = sentencepiece.SentencePieceProcessor(model_file=path)
    return lambda text: sp.encode(text)


def _best(fn, text: str, repeats: int) -> tuple[float, list[int]]:
    best, out = math.inf, None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn(text)
        best = min(best, time.perf_counter() - t0)
    return best, out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000000,4000000,16000000")
    ap.add_argument("--inputs", default=",".join(INPUTS))
    ap.add_argument("--tokenizers", default=None, help="comma-separated subset of the names (substring match)")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--max-seconds", type=float, default=60.0)
    args = ap.parse_args()
    import tokenforge

    sizes = [int(s) for s in args.sizes.split(",")]
    inputs = args.inputs.split(",")
    print_machine(machine_info())
    failed = False
    for label, (rel, kind) in TOKENIZERS.items():
        if args.tokenizers and not any(s in label for s in args.tokenizers.split(",")):
            continue
        path = os.path.join(DATA, rel)
        tok = tokenforge.load(path)
        ours = lambda text, tok=tok: tok.encode(text, add_special_tokens=False, disallowed_special=())  # noqa: E731
        ref = _reference(kind, path)
        print(f"\n#### {label}: MB/s (tokenforge | reference, ratio)")
        head = "| input | " + " | ".join(f"{n / 1e6:g} MB" for n in sizes) + " | slope |"
        print(head)
        print("|" + "---|" * (len(sizes) + 2))
        for name in inputs:
            cells, times = [], []
            ref_time = 0.0
            for n in sizes:
                text = make_input(name, n)
                mb = len(text.encode("utf-8")) / 1e6
                t_ours, ids = _best(ours, text, args.repeats)
                times.append((mb, t_ours))
                cell = f"{mb / t_ours:.1f}"
                if ref_time * (n / sizes[max(0, sizes.index(n) - 1)]) <= args.max_seconds:
                    t_ref, ref_ids = _best(ref, text, 1)
                    ref_time = t_ref
                    if ref_ids != ids:
                        failed = True
                        cell += " MISMATCH"
                    cell += f" \\| {mb / t_ref:.1f}, {t_ref / t_ours:.2f}×"
                else:
                    ref_time = math.inf
                    cell += " \\| skip"
                cells.append(cell)
            (m0, t0), (m1, t1) = times[0], times[-1]
            slope = math.log(t1 / t0) / math.log(m1 / m0) if len(times) > 1 and t0 > 0 else float("nan")
            print(f"| {name} | " + " | ".join(cells) + f" | {slope:.2f} |", flush=True)
    if failed:
        print("\nIDS DIFFER from the reference in a cell marked MISMATCH", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

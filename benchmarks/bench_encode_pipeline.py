"""Encode speed of the pipeline families (WordPiece, Unigram, SentencePiece BPE)
next to their reference libraries, on the same files and the same text, in one run.

    python benchmarks/bench_encode_pipeline.py [--repeat 3] [--max-bytes 1000000]

For each tokenizer file × corpus it times (best of ``--repeat``):

* ``lines``: encoding every line separately (one call per line; the common
  case of a data loader), tokenforge ``encode`` vs the reference's per-call API;
* ``whole``: one call on the whole text.

and prints MB/s and the speed ratio tokenforge / reference (> 1: tokenforge is
faster). The ids are checked equal before timing (per line; whole-document
Unigram results are reported as "ids differ" when sentencepiece's 32-bit
float path sums make it differ, see README). HF ``tokenizers`` is given one
thread (``RAYON_NUM_THREADS=1``) so both sides run on one core.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

os.environ.setdefault("RAYON_NUM_THREADS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import DATA_DIR, machine_info, print_machine  # noqa: E402

CORPORA = {
    "en": "text/tinyshakespeare.txt",
    "ja": "text/wagahaiwa_nekodearu.txt",
    "zh": "text/hongloumeng.txt",
}


def _best(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def cases():
    """(label, tokenforge pipeline, reference encode-one, corpora)."""
    import sentencepiece as spm
    from tokenizers import BertWordPieceTokenizer
    from tokenizers import Tokenizer as HFTokenizer

    import tokenforge
    from tokenforge.presets import bert_wordpiece

    v = os.path.join(DATA_DIR, "vocab")
    bert = os.path.join(v, "wordpiece", "bert-base-uncased_vocab.txt")
    ref = BertWordPieceTokenizer(bert)
    ours = bert_wordpiece(bert)
    yield ("bert-base-uncased vocab.txt vs HF", lambda t: ours.encode(t, allowed_special="all"), lambda t: ref.encode(t).ids, ["en"])
    bert_zh = os.path.join(v, "wordpiece", "bert-base-chinese_vocab.txt")
    ref_zh = BertWordPieceTokenizer(bert_zh, lowercase=False)
    ours_zh = bert_wordpiece(bert_zh, lowercase=False)
    yield ("bert-base-chinese vocab.txt vs HF", lambda t: ours_zh.encode(t, allowed_special="all"), lambda t: ref_zh.encode(t).ids, ["zh"])
    albert_json = os.path.join(v, "hf", "albert-base-v2_spiece_unigram_tokenizer.json")
    ref_a = HFTokenizer.from_file(albert_json)
    ours_a = tokenforge.load(albert_json)
    yield ("albert tokenizer.json vs HF", lambda t: ours_a.encode(t, allowed_special="all"), lambda t: ref_a.encode(t).ids, ["en"])
    for name, corpora in (("albert_spiece.model", ["en"]), ("mistral_v1_tokenizer.model", ["en", "ja"]),
                          ("spm_test_ja_unigram.model", ["ja"])):
        path = os.path.join(v, "sentencepiece", name)
        sp = spm.SentencePieceProcessor(model_file=path)
        tok = tokenforge.load(path)
        yield (f"{name} vs sentencepiece", (lambda tok: lambda t: tok.encode(t, disallowed_special=()))(tok), sp.encode, corpora)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--max-bytes", type=int, default=1_000_000, help="cut each corpus to this many bytes")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    info = machine_info()
    print_machine(info)
    rows = []
    for label, ours, ref, corpora in cases():
        for corpus in corpora:
            with open(os.path.join(DATA_DIR, CORPORA[corpus]), encoding="utf-8") as f:
                text = f.read()
            text = text.encode("utf-8")[: args.max_bytes].decode("utf-8", "ignore")
            lines = text.splitlines()
            mb = len(text.encode("utf-8")) / 1e6
            same_lines = [ours(x) for x in lines] == [ref(x) for x in lines]
            same_whole = ours(text) == ref(text)
            t_lines_ours = _best(lambda: [ours(x) for x in lines], args.repeat)
            t_lines_ref = _best(lambda: [ref(x) for x in lines], args.repeat)
            t_whole_ours = _best(lambda: ours(text), args.repeat)
            t_whole_ref = _best(lambda: ref(text), args.repeat)
            row = {
                "tokenizer": label, "corpus": corpus, "mb": round(mb, 3), "lines": len(lines),
                "ids_equal_lines": same_lines, "ids_equal_whole": same_whole,
                "lines_mb_s_ours": round(mb / t_lines_ours, 2), "lines_mb_s_ref": round(mb / t_lines_ref, 2),
                "lines_speed_ratio": round(t_lines_ref / t_lines_ours, 2),
                "whole_mb_s_ours": round(mb / t_whole_ours, 2), "whole_mb_s_ref": round(mb / t_whole_ref, 2),
                "whole_speed_ratio": round(t_whole_ref / t_whole_ours, 2),
            }
            rows.append(row)
            print(
                f"{label:<42} {corpus:<3} lines: {row['lines_mb_s_ours']:6.2f} vs {row['lines_mb_s_ref']:6.2f} MB/s "
                f"= {row['lines_speed_ratio']:5.2f}x | whole: {row['whole_mb_s_ours']:6.2f} vs {row['whole_mb_s_ref']:6.2f} MB/s "
                f"= {row['whole_speed_ratio']:5.2f}x | ids equal: lines {same_lines}, whole {same_whole}",
                flush=True,
            )
    if args.json:
        print(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()

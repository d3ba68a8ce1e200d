"""One very long token in a rank file: how the first encode scales with its length.

A rank file may hold a token of hundreds of kilobytes (a run of one character, a
base64 blob a trainer saw many times). The native core's linear backtracking
encoder indexes every token once, on the first long piece, and for that it needs
each token's split (the two tokens whose merge made it), found by merging the
token's own bytes. That merge must be O(n log n) in the token's length: a scan
merge is quadratic and made a 400 KB token cost about a minute.

For each size N (default 50, 100, 200 and 400 KB) the script adds to GPT-2's
ranks one token of N bytes at the next rank, in two shapes:

* ``letter`` - ``a`` repeated: the merges form a few repeated tokens;
* ``random`` - random lowercase letters: every merge is different.

Timed (best of ``--repeats``, each on a freshly built tokenizer): building the
tokenizer plus the first ``encode_ordinary`` of a piece of exactly the token's
bytes (the piece is one pre-token, so the whole-piece lookup does not apply only
when the piece differs; the script encodes the token's bytes followed by one
extra letter so the merge and the index are exercised). tiktoken encodes the
same text with an ``Encoding`` built from the same ranks, in the same run.

Printed: seconds per size, the growth ratio between consecutive sizes (2x the
token: a linear-time build gives ~2, a quadratic one ~4) and ``4x`` - the time of
the largest size over the time of a size four times smaller, which must stay
at most 5 (the script exits with status 1 otherwise), and tokenforge's time
over tiktoken's. Ids of both libraries are compared.

    python benchmarks/bench_long_token_index.py
    python benchmarks/bench_long_token_index.py --sizes 25000,100000 --repeats 1
"""

from __future__ import annotations

import argparse
import random
import sys
import time

import tokenforge
from tokenforge.models.bpe import BPE

try:
    import tiktoken
except ImportError:  # the comparison column is left out
    tiktoken = None


def build_text(shape: str, n: int) -> bytes:
    if shape == "letter":
        return b"a" * n
    rng = random.Random(n)
    return bytes(rng.choice(b"abcdefghijklmnopqrstuvwxyz") for _ in range(n))


def run_tokenforge(ranks: dict[bytes, int], text: str) -> tuple[float, list[int]]:
    t0 = time.perf_counter()
    tok = tokenforge.Tokenizer(BPE.from_ranks(ranks), pre_tokenizer="gpt2")
    ids = tok.encode_ordinary(text)
    return time.perf_counter() - t0, ids


def run_tiktoken(ranks: dict[bytes, int], text: str, pattern: str) -> tuple[float, list[int]]:
    t0 = time.perf_counter()
    enc = tiktoken.Encoding("long_token", pat_str=pattern, mergeable_ranks=ranks, special_tokens={})
    ids = enc.encode_ordinary(text)
    return time.perf_counter() - t0, ids


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="50000,100000,200000,400000", help="token lengths in bytes, comma-separated")
    ap.add_argument("--shapes", default="letter,random")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--no-tiktoken", action="store_true", help="leave out tiktoken (it is slow on long pieces)")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    base = dict(tokenforge.get_encoding("gpt2").mergeable_ranks)
    pattern = tokenforge.get_encoding("gpt2").pattern
    print(f"tokenforge {tokenforge.__version__}, backend {tokenforge.get_encoding('gpt2').plan}; "
          f"tiktoken {getattr(tiktoken, '__version__', 'absent') if not args.no_tiktoken else 'skipped'}")
    status = 0
    for shape in args.shapes.split(","):
        print(f"\n{shape}: GPT-2 ranks + one token of N bytes; build + first encode of token + 'b'")
        print(f"{'N bytes':>9} {'tokenforge s':>13} {'x prev':>7} {'tiktoken s':>11} {'tf/tiktoken':>12}")
        times: dict[int, float] = {}
        prev = None
        for n in sizes:
            token = build_text(shape, n)
            ranks = dict(base)
            ranks[token] = len(ranks)
            text = (token + b"b").decode()
            best = float("inf")
            ids = None
            for _ in range(args.repeats):
                t, ids = run_tokenforge(ranks, text)
                best = min(best, t)
            times[n] = best
            tt = None
            if tiktoken is not None and not args.no_tiktoken:
                tt, tt_ids = run_tiktoken(ranks, text, pattern)
                if tt_ids != ids:
                    print(f"  IDS DIFFER from tiktoken at N={n}")
                    status = 1
            growth = f"{best / times[prev]:.2f}" if prev else "-"
            ratio = f"{best / tt:.3f}" if tt else "-"
            print(f"{n:>9} {best:>13.3f} {growth:>7} {tt if tt is None else round(tt, 3)!s:>11} {ratio:>12}")
            prev = n
        big = max(sizes)
        if big // 4 in times:
            r = times[big] / times[big // 4]
            verdict = "ok" if r <= 5 else "NOT LINEAR"
            print(f"  4x: {big} B over {big // 4} B = {r:.2f} (<= 5: {verdict})")
            if r > 5:
                status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())

"""Encode and decode throughput: tokenforge beside tiktoken and the fastest
third-party encoders, same data, same run.

Libraries (each loaded offline with the same ranks; see ``_peers.py``):
tokenforge, tiktoken (built from tokenforge's own rank tables), and the peers
quicktok, gigatoken, rs-bpe, bpe-openai where installed and where they have
the encoding (gpt2: gigatoken only).

For each encoding (gpt2, cl100k_base, o200k_base) and corpus (English,
Chinese, Japanese, Python code), every library runs, with
``encode_ordinary`` semantics (none of the corpora holds a special-token
string):

**One large string** (the whole corpus, ~1 MB or more):

* ``cold``: the first call on a freshly built object, *including* any one-time
  lazy set-up inside the library. For tokenforge's native core this is the
  trie index of the vocabulary that its linear backtracking encoder builds on
  the first piece of 16+ bytes (30-200 ms). rs-bpe and bpe-openai hand out
  one shared instance per process, so they have no cold figure of their own
  (marked ``shared``).
* ``cold*``: the first call on a fresh object that has first encoded one
  short string (``"Hello, world! " + "a" * 64``, untimed): one-time set-up
  *excluded*, caches still (nearly) empty.
* ``steady``: on a fresh object, the first half of the corpus is encoded
  untimed, then the second half is timed: the figure for a long-running
  process, with any piece cache warmed by text of the same kind.
* ``warm``: the same text encoded a second time on the ``cold*`` object (the
  best case for a library that memoises pieces).
* ``numpy``: tokenforge ``encode_to_numpy`` (and gigatoken's native
  ``Tokenizer.encode``, which returns a uint32 array) on a fresh object after
  the short warm-up string, like ``cold*``.
* ``decode``: ``decode(ids)`` to ``str`` of the ids just produced (MB/s of
  decoded text).

**A batch of ~1 KB documents** (the corpus cut at line ends into pieces of
about ``--doc-bytes``): ``b1``/``b2`` are the batch call with 1 and 2 threads
on a fresh object after the warm-up string. tokenforge:
``encode_batch(docs, num_threads=N)`` (default special-token policy, so it
also scans every document for special tokens); tiktoken:
``encode_ordinary_batch(docs, num_threads=N)``; peers: see ``_peers.py``.
``b2/b1`` is the speed-up from the second thread.

Each figure is the best of ``--repeats`` runs; the libraries take turns in a
rotating order inside every repeat so that machine noise hits all alike.
Throughput is MB/s of UTF-8 input (1 MB = 10**6 bytes).

Checks, every repeat: tokenforge's ids (list, numpy, batch, second half) must
equal tiktoken's and decode must give the input back; otherwise the script
prints ``!!! ID MISMATCH`` and exits with status 1 after the tables. A peer
whose ids differ from tiktoken's is reported (``!= ids``) and its figures are
flagged ``(!)`` and left out of the best-peer ratios.

    python benchmarks/bench_encode.py               # full run (~4 min)
    python benchmarks/bench_encode.py --quick       # 100 KB per corpus, 1 repeat
    python benchmarks/bench_encode.py --encodings cl100k_base --corpora english,code --peers quicktok
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import sys
import sysconfig
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import (  # noqa: E402
    DATA_DIR,
    Reference,
    add_backend_arg,
    apply_backend,
    fmt_ratio,
    machine_info,
    mismatch_report,
    print_machine,
    print_table,
    tokenizer_backend,
)
from _peers import ALL_PEERS, Peer, load_peers  # noqa: E402

ENCODINGS = ("gpt2", "cl100k_base", "o200k_base")
CORPORA = ("english", "chinese", "japanese", "code")
TEXT_DIR = Path(DATA_DIR) / "text"
WARMUP = "Hello, world! " + "a" * 64
SINGLE = ("cold", "cold*", "steady", "warm", "numpy", "decode")
BATCH = ("b1", "b2")
MEASURES = SINGLE + BATCH


# ------------------------------------------------------------------ corpora
def stdlib_code(limit_bytes: int) -> tuple[str, list[str]]:
    """About ``limit_bytes`` of Python stdlib source: top-level ``*.py`` files of
    ``sysconfig.get_paths()["stdlib"]`` in sorted name order, whole files
    concatenated until the total reaches the limit."""
    root = Path(sysconfig.get_paths()["stdlib"])
    parts: list[str] = []
    used: list[str] = []
    total = 0
    for path in sorted(root.glob("*.py"), key=lambda p: p.name):
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        parts.append(text)
        used.append(path.name)
        total += len(text.encode("utf-8"))
        if total >= limit_bytes:
            break
    return "".join(parts), used


def truncate_utf8(text: str, limit_bytes: int | None) -> str:
    if limit_bytes is None:
        return text
    data = text.encode("utf-8")
    if len(data) <= limit_bytes:
        return text
    return data[:limit_bytes].decode("utf-8", "ignore")


def load_corpora(names: list[str], code_bytes: int, limit_bytes: int | None) -> dict[str, tuple[str, str]]:
    """``{name: (text, description)}``."""
    out: dict[str, tuple[str, str]] = {}
    for name in names:
        if name == "english":
            files = ["tinystories_valid_sample.txt", "botchan.txt"]
            text = "".join((TEXT_DIR / f).read_text(encoding="utf-8") for f in files)
            desc = " + ".join(files)
        elif name == "chinese":
            text = (TEXT_DIR / "hongloumeng.txt").read_text(encoding="utf-8")
            desc = "hongloumeng.txt"
        elif name == "japanese":
            text = (TEXT_DIR / "wagahaiwa_nekodearu.txt").read_text(encoding="utf-8")
            desc = "wagahaiwa_nekodearu.txt"
        elif name == "code":
            text, used = stdlib_code(code_bytes)
            desc = f"{len(used)} stdlib files {used[0]}..{used[-1]}"
        else:
            raise SystemExit(f"unknown corpus {name!r}; known: {', '.join(CORPORA)}")
        out[name] = (truncate_utf8(text, limit_bytes), desc)
    return out


def split_halves(text: str) -> tuple[str, str]:
    """Cut ``text`` at the first newline after its middle (or the middle itself)."""
    mid = len(text) // 2
    cut = text.find("\n", mid)
    cut = mid if cut < 0 else cut + 1
    return text[:cut], text[cut:]


def split_docs(text: str, doc_bytes: int) -> list[str]:
    """Whole lines gathered into documents of at least ``doc_bytes`` UTF-8 bytes;
    a line longer than twice that is cut into character runs of about ``doc_bytes``."""
    docs: list[str] = []
    cur: list[str] = []
    size = 0
    for line in text.splitlines(keepends=True):
        b = len(line.encode("utf-8"))
        if b > 2 * doc_bytes:
            if cur:
                docs.append("".join(cur))
                cur, size = [], 0
            step = max(1, len(line) * doc_bytes // b)
            docs.extend(line[i:i + step] for i in range(0, len(line), step))
            continue
        cur.append(line)
        size += b
        if size >= doc_bytes:
            docs.append("".join(cur))
            cur, size = [], 0
    if cur:
        docs.append("".join(cur))
    return docs


# ---------------------------------------------------------------- libraries
class Lib:
    """One library under test with a uniform interface (tokenforge, tiktoken or a peer)."""

    def __init__(self, name: str, fresh, encode, decode, batch, batch_lists=None, numpy=None, shared=False):
        self.name = name
        self.fresh = fresh
        self.encode = encode
        self.decode = decode
        self.batch = batch
        self.batch_lists = batch_lists or (lambda raw: raw)
        self.numpy = numpy
        self.shared = shared


def make_libs(ref: Reference, peers: dict) -> list[Lib]:
    libs = [
        Lib(
            "tokenforge",
            ref.fresh_tokenforge,
            lambda o, t: o.encode_ordinary(t),
            lambda o, ids: o.decode(ids),
            lambda o, docs, n: o.encode_batch(docs, num_threads=n),
            numpy=lambda o, t: o.encode_to_numpy(t),
        ),
        Lib(
            "tiktoken",
            ref.fresh_tiktoken,
            lambda o, t: o.encode_ordinary(t),
            lambda o, ids: o.decode(ids),
            lambda o, docs, n: o.encode_ordinary_batch(docs, num_threads=n),
        ),
    ]
    for name, p in peers.items():
        libs.append(
            Lib(
                name,
                (lambda p=p: p.fresh(ref.name)),
                p.encode,
                p.decode,
                p.batch,
                batch_lists=p.batch_lists,
                numpy=p.numpy if type(p).numpy is not Peer.numpy else None,
                shared=p.shared,
            )
        )
    return libs


# ----------------------------------------------------------------- measuring
def bench_corpus(libs: list[Lib], text: str, docs: list[str], repeats: int, label: str,
                 problems: list[str], peer_bad: dict[str, list[str]], decode_bytes) -> dict:
    first, second = split_halves(text)
    flagged: dict[str, set[str]] = {}  # peer -> measures whose ids differ from tiktoken's
    best = {lib.name: {m: math.inf for m in MEASURES} for lib in libs}
    cores = {lib.name: {} for lib in libs}  # CPU seconds / wall seconds of the best batch runs
    ref_ids = ref_second = ref_docs = None
    for r in range(repeats):
        k = r % len(libs)
        order = libs[k:] + libs[:k]
        # tiktoken first in the very first repeat, so the reference ids exist for every check
        if ref_ids is None:
            order = sorted(order, key=lambda lib: lib.name != "tiktoken")
        for lib in order:
            got: dict[str, object] = {}

            def measure(m: str, fn) -> object:
                gc.collect()  # as timed() does, outside the clocks
                c0 = time.process_time()
                t0 = time.perf_counter()
                res = fn()
                t = time.perf_counter() - t0
                cpu = time.process_time() - c0  # this process, all its threads
                if best[lib.name][m] is not None and t < best[lib.name][m]:
                    best[lib.name][m] = t
                    if m in BATCH:
                        cores[lib.name][m] = cpu / t
                return res

            obj = lib.fresh()
            got["cold"] = measure("cold", lambda: lib.encode(obj, text))
            obj = lib.fresh()
            lib.encode(obj, WARMUP)
            ids = got["cold*"] = measure("cold*", lambda: lib.encode(obj, text))
            got["warm"] = measure("warm", lambda: lib.encode(obj, text))
            decoded = measure("decode", lambda: lib.decode(obj, ids))
            obj = lib.fresh()
            lib.encode(obj, WARMUP)
            lib.encode(obj, first)
            got["steady"] = measure("steady", lambda: lib.encode(obj, second))
            if lib.numpy is not None:
                obj = lib.fresh()
                lib.encode(obj, WARMUP)
                arr = measure("numpy", lambda: lib.numpy(obj, text))
                got["numpy"] = arr.tolist()
            for m, n in (("b1", 1), ("b2", 2)):
                obj = lib.fresh()
                lib.batch(obj, [WARMUP] * 4, n)  # one-time set-up of the batch path, untimed
                raw = measure(m, lambda: lib.batch(obj, docs, n))
                if raw is None:
                    best[lib.name][m] = None
                else:
                    got[m] = lib.batch_lists(raw)
            obj = None
            if lib.name == "tiktoken":
                ref_ids, ref_second = got["cold"], got["steady"]
                ref_docs = got["b1"]
            # ----- checks
            bad: list[str] = []
            bad_measures: set[str] = set()
            for m, val in got.items():
                want = ref_second if m == "steady" else ref_docs if m in BATCH else ref_ids
                val = [list(x) for x in val] if m in BATCH else list(val)
                if val != want:
                    bad_measures.add(m)
                    if m in BATCH:
                        i = next(j for j in range(min(len(val), len(want))) if val[j] != want[j]) if len(val) == len(want) else -1
                        bad.append(f"!!! ID MISMATCH [{label} {lib.name} {m} repeat {r}]: document {i} differs"
                                   if i >= 0 else f"!!! ID MISMATCH [{label} {lib.name} {m}]: {len(val)} documents, tiktoken {len(want)}")
                    else:
                        bad.append(mismatch_report(f"{label} {lib.name} {m} repeat {r}", val, want, decode_bytes)
                                   .replace("tokenforge", lib.name, 2))
            if decoded != text:
                bad_measures.add("decode")
                bad.append(f"!!! [{label}] {lib.name}: decode(encode(text)) != text")
            if bad:
                if lib.name == "tokenforge":
                    problems.extend(bad)
                elif lib.name != "tiktoken":
                    peer_bad.setdefault(lib.name, []).extend(bad)
                    flagged.setdefault(lib.name, set()).update(bad_measures)
                    if "cold*" in bad_measures:  # the same ids are timed as warm
                        flagged[lib.name].add("warm")
    return {
        "best": best,
        "batch_cpu_per_wall": cores,
        "flagged": {k: sorted(v) for k, v in flagged.items()},
        "tokens": len(ref_ids),
        "mb": len(text.encode("utf-8")) / 1e6,
        "mb_second": len(second.encode("utf-8")) / 1e6,
        "mb_docs": sum(len(d.encode("utf-8")) for d in docs) / 1e6,
        "docs": len(docs),
    }


def rates(res: dict) -> dict[str, dict[str, float | None]]:
    out = {}
    for lib, times in res["best"].items():
        row = {}
        for m, t in times.items():
            if t is None or t == math.inf:
                row[m] = None
                continue
            mb = res["mb_second"] if m == "steady" else res["mb_docs"] if m in BATCH else res["mb"]
            row[m] = mb / t
        out[lib] = row
    return out


def fmt_mbps(x: float | None) -> str:
    return "-" if x is None else (f"{x:.0f}" if x >= 100 else f"{x:.1f}")


def geomean(vals: list[float]) -> float | None:
    vals = [v for v in vals if v]
    return math.exp(sum(math.log(v) for v in vals) / len(vals)) if vals else None


# ---------------------------------------------------------------------- main
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--encodings", default=",".join(ENCODINGS), help="comma-separated (default: %(default)s)")
    ap.add_argument("--corpora", default=",".join(CORPORA), help="comma-separated (default: %(default)s)")
    ap.add_argument("--peers", default=",".join(ALL_PEERS), help="comma-separated peers, or 'none' (default: %(default)s)")
    ap.add_argument("--repeats", "-n", type=int, default=3, help="best of N runs (default: %(default)s)")
    ap.add_argument("--code-bytes", type=int, default=1_000_000, help="bytes of stdlib code (default: %(default)s)")
    ap.add_argument("--doc-bytes", type=int, default=1000, help="batch document size in bytes (default: %(default)s)")
    ap.add_argument("--limit-bytes", type=int, default=None, help="truncate every corpus to this many bytes")
    ap.add_argument("--quick", action="store_true", help="fast smoke run: 100 KB per corpus, 1 repeat")
    ap.add_argument("--json", metavar="PATH", help="also write all figures to this JSON file")
    add_backend_arg(ap)
    args = ap.parse_args(argv)
    apply_backend(args.backend)
    if args.quick:
        args.repeats = 1
        args.limit_bytes = args.limit_bytes or 100_000
        args.code_bytes = min(args.code_bytes, args.limit_bytes)
    if args.repeats < 1:
        ap.error("--repeats must be >= 1")
    peer_names = [] if args.peers.strip() in ("", "none") else [p.strip() for p in args.peers.split(",") if p.strip()]
    for p in peer_names:
        if p not in ALL_PEERS:
            ap.error(f"unknown peer {p!r}; known: {', '.join(ALL_PEERS)}")

    info = machine_info()
    import numpy  # noqa: F401  (imported up front: its first import would land in a timed encode_to_numpy)

    peers = load_peers(peer_names)
    info["peers"] = {n: {"version": p.version, "error": p.import_error} for n, p in peers.items()}
    print_machine(info)
    print(f"# command: {' '.join([os.path.basename(sys.executable)] + sys.argv)}")
    print("# peers: " + (", ".join(f"{n} {p.version}" if not p.import_error else f"{n} (NOT LOADABLE: {p.import_error})"
                                   for n, p in peers.items()) or "none"))
    print(f"# best of {args.repeats}; MB/s of UTF-8 input (1 MB = 1e6 B); encode_ordinary semantics\n")

    corpora = load_corpora([c.strip() for c in args.corpora.split(",") if c.strip()], args.code_bytes, args.limit_bytes)
    docsets = {}
    for name, (text, desc) in corpora.items():
        docs = split_docs(text, args.doc_bytes)
        docsets[name] = docs
        mb = len(text.encode("utf-8")) / 1e6
        print(f"# corpus {name}: {mb:.3f} MB, {len(text)} chars ({desc}); batch: {len(docs)} docs, "
              f"mean {mb * 1e6 / len(docs):.0f} B")
    print()

    problems: list[str] = []
    peer_bad: dict[str, list[str]] = {}
    results = []
    summary_rows = []
    skipped: list[str] = []
    for enc_name in [e.strip() for e in args.encodings.split(",") if e.strip()]:
        ref = Reference(enc_name)
        enc_peers = {}
        for n, p in peers.items():
            why = p.supports(enc_name)
            if why:
                skipped.append(f"{n} / {enc_name}: {why}")
            else:
                enc_peers[n] = p
        libs = make_libs(ref, enc_peers)
        decode_bytes = ref.fresh_tiktoken().decode_bytes
        rows = []
        enc_results = []
        for cname, (text, _) in corpora.items():
            label = f"{enc_name}/{cname}"
            print(f"  running {label} ...", file=sys.stderr, flush=True)
            res = bench_corpus(libs, text, docsets[cname], args.repeats, label, problems, peer_bad, decode_bytes)
            rate = rates(res)
            res.update(encoding=enc_name, corpus=cname, mbps=rate)
            enc_results.append(res)
            results.append(res)
            for lib in libs:
                fl = set(res["flagged"].get(lib.name, ()))
                rt = rate[lib.name]
                b1, b2 = rt.get("b1"), rt.get("b2")

                def cell(m):
                    if m == "cold" and lib.shared:
                        return "shared"
                    return fmt_mbps(rt[m]) + (" (!)" if m in fl else "")
                rows.append(
                    [cname, lib.name]
                    + [cell(m) for m in SINGLE]
                    + [cell("b1"), cell("b2"), f"{b2 / b1:.2f}" if b1 and b2 else "-"]
                )
        backend = tokenizer_backend(ref.fresh_tokenforge())
        print(f"## {enc_name}: MB/s (tokenforge [{backend}])\n")
        print_table(["corpus", "library"] + list(SINGLE) + ["b1", "b2", "b2/b1"], rows)
        print()
        # ratios for the summary
        for res in enc_results:
            rate = res["mbps"]
            tf = rate["tokenforge"]
            row = [f"{enc_name}/{res['corpus']}"]
            ratios = {"tiktoken": {}, "best_peer": {}}
            for m in ("cold", "cold*", "steady", "decode", "b1", "b2"):
                tt = rate["tiktoken"][m]
                ratios["tiktoken"][m] = tf[m] / tt if tf[m] and tt else None
                cands = [(rate[n][m], n) for n in enc_peers if m not in res["flagged"].get(n, ()) and rate[n][m]
                         and not (m == "cold" and enc_peers[n].shared)]
                if cands and tf[m]:
                    v, who = max(cands)
                    ratios["best_peer"][m] = (tf[m] / v, who)
                else:
                    ratios["best_peer"][m] = None
            res["ratios"] = {"tiktoken": ratios["tiktoken"],
                             "best_peer": {m: (v[0] if v else None) for m, v in ratios["best_peer"].items()},
                             "best_peer_name": {m: (v[1] if v else None) for m, v in ratios["best_peer"].items()}}
            for m in ("cold*", "steady", "decode", "b1", "b2"):
                row.append(fmt_ratio(ratios["tiktoken"][m]))
                bp = ratios["best_peer"][m]
                row.append("-" if bp is None else f"{bp[0]:.2f} ({bp[1]})")
            row.append(f"{tf['b2'] / tf['b1']:.2f}" if tf["b1"] and tf["b2"] else "-")
            cw = res["batch_cpu_per_wall"]
            row.append(f"{cw['tokenforge'].get('b2', 0):.2f}")
            row.append(f"{rate['tiktoken']['b2'] / rate['tiktoken']['b1']:.2f} / {cw['tiktoken'].get('b2', 0):.2f}"
                       if rate["tiktoken"]["b1"] and rate["tiktoken"]["b2"] else "-")
            row.append(fmt_ratio(tf["numpy"] / tf["cold*"]) if tf["numpy"] and tf["cold*"] else "-")
            row.append(fmt_ratio(tf["cold"] / tf["cold*"]) if tf["cold"] and tf["cold*"] else "-")
            summary_rows.append(row)

    print("## summary: ratios tokenforge / tiktoken (tt) and tokenforge / best peer (bp, which one in brackets)\n")
    print("(>1 = tokenforge faster. b1/b2 = batch of ~1 KB docs on 1/2 threads; tf b2/b1 = tokenforge's own "
          "2-thread speed-up, CPU/wall = CPU seconds of the process per wall second in that run (2.0 = both cores busy); numpy/list = encode_to_numpy vs encode_ordinary, both cold*; "
          "cold/cold* = first call including the one-time index vs excluding it)\n")
    headers = ["encoding/corpus"]
    for m in ("cold*", "steady", "decode", "b1", "b2"):
        headers += [f"{m} tt", f"{m} bp"]
    headers += ["tf b2/b1", "tf b2 CPU/wall", "tt b2/b1 / CPU/wall", "numpy/list", "cold/cold*"]
    print_table(headers, summary_rows)
    print()
    geo_rows = []
    for m in ("cold", "cold*", "steady", "decode", "b1", "b2"):
        tt = [r["ratios"]["tiktoken"][m] for r in results if r["ratios"]["tiktoken"][m]]
        bp = [r["ratios"]["best_peer"][m] for r in results if r["ratios"]["best_peer"][m]]
        geo_rows.append([m, fmt_ratio(geomean(tt)), f"{min(tt):.2f}-{max(tt):.2f}" if tt else "-",
                         fmt_ratio(geomean(bp)), f"{min(bp):.2f}-{max(bp):.2f}" if bp else "-", len(bp)])
    print("## geometric means over all encodings and corpora\n")
    print_table(["measure", "tf/tt geomean", "tf/tt range", "tf/best-peer geomean", "tf/best-peer range", "cells with a peer"], geo_rows)
    print()

    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"machine": info, "args": vars(args), "results": results, "problems": problems,
                       "peer_mismatches": peer_bad, "skipped": skipped}, f, indent=1, default=str)

    for s in skipped:
        print(f"note: peer skipped: {s}")
    for n, p in peers.items():
        if p.batch_note and not p.import_error:
            print(f"note: {n} batch call: {p.batch_note}")
    for name, msgs in peer_bad.items():
        print(f"note: PEER {name} DIFFERS FROM TIKTOKEN ({len(msgs)} check(s)); those cells are flagged (!) "
              "and left out of the best-peer ratios. First:")
        print("    " + msgs[0].replace("\n", "\n    "))
    if problems:
        bar = "!" * 78
        print(bar)
        print(f"!!! {len(problems)} CORRECTNESS PROBLEM(S): tokenforge does not match tiktoken")
        for p in problems:
            print(p)
        print(bar)
        return 1
    print("tokenforge: ids identical to tiktoken in every measure and repeat; decode round-trips exactly.")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""What the training-array formats cost: ``prepare(..., formats=[...])`` against the
writers of the libraries that define them, side by side in one run.

Corpus: the files of ``/work/shared/data/bench`` cut into documents at blank lines
(CRLF as LF), repeated or cut to ``--size-mb`` (10^6 bytes of UTF-8), one JSON Lines file.

Rows (best of ``--repeat`` wall-clock runs, each in this process):

* ``prepare tokenforge``: ``prepare(corpus, formats="tokenforge")``: read, encode, write shards;
* ``prepare all formats``: the same with ``formats=tokenforge,megatron,llmc,nanogpt,datatrove``;
* ``add <format>``: a complete tokenforge run resumed with ``formats=[<format>]``, which
  writes that format from the shards (the export alone, streamed from disk);
* ``megatron-core IndexedDatasetBuilder``: Megatron-Core's own writer, given the same
  documents' ids already in memory (one ``add_document`` per document, ``finalize``);
* ``datatrove TokenizedFile``: datatrove's own writer, the same documents' ids in memory
  (one ``write`` per document, ``close``; no shuffling).

The peers' rows start from ids in memory, which favours them: the tokenforge export
reads them back from its shards. Ratios are peer time ÷ tokenforge time (above 1: tokenforge
faster).

    python benchmarks/bench_prepare_formats.py --size-mb 50 --repeat 3
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(__file__))

import numpy as np  # noqa: E402

from _common import DATA_DIR  # noqa: E402

ALL = ["tokenforge", "megatron", "llmc", "nanogpt", "datatrove"]


def corpus(size_mb: float) -> list[str]:
    docs: list[str] = []
    for p in sorted(Path(DATA_DIR, "bench").iterdir()):
        text = p.read_text(encoding="utf-8", errors="replace").replace("\r\n", "\n")
        docs += [d for d in text.split("\n\n") if d.strip()]
    limit = int(size_mb * 1e6)
    out, n, k = [], 0, 0
    while n < limit:
        d = docs[k % len(docs)]
        out.append(d)
        n += len(d.encode("utf-8"))
        k += 1
    return out


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size-mb", type=float, default=50)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--tokenizer", default="gpt2")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--json", default=None, help="also write the figures to this file")
    args = ap.parse_args()

    import tokenforge
    from tokenforge.prepare import resolve_separators

    tok = tokenforge.get_encoding(args.tokenizer)
    seps = resolve_separators(tok)
    tmp = Path(tempfile.mkdtemp(prefix="bench-formats-"))
    try:
        docs = corpus(args.size_mb)
        src = tmp / "corpus.jsonl"
        with open(src, "w", encoding="utf-8") as f:
            for d in docs:
                f.write(json.dumps({"text": d}) + "\n")
        mb = src.stat().st_size / 1e6
        kw = dict(workers=args.workers, show_progress=False, overwrite=True)
        rows: dict[str, float] = {}
        rows["prepare tokenforge"] = best(lambda: tokenforge.prepare(src, tok, tmp / "tf", formats="tokenforge", **kw),
                                          args.repeat)
        rows["prepare all formats"] = best(lambda: tokenforge.prepare(src, tok, tmp / "all", formats=ALL, **kw),
                                           args.repeat)
        index = tokenforge.prepare(src, tok, tmp / "tf", formats="tokenforge", **kw)
        tokens = index["splits"]["train"]["tokens"]
        for fmt in ALL[1:]:
            def add(fmt=fmt):
                shutil.rmtree(tmp / "tf" / fmt, ignore_errors=True)
                base = dict(json.loads((tmp / "tf" / "index.json").read_text()))
                base["formats"], base["exports"] = ["tokenforge"], {}
                (tmp / "tf" / "index.json").write_text(json.dumps(base))
                tokenforge.prepare(src, tok, tmp / "tf", formats=["tokenforge", fmt], resume=True,
                                   workers=args.workers, show_progress=False)
            rows[f"add {fmt}"] = best(add, args.repeat)

        toks = tokenforge.open_tokens(tmp / "tf")
        ids = [np.array(toks.doc(k)) for k in range(len(toks))]
        dtype = np.uint16 if toks.ids.dtype.itemsize == 2 else np.int32
        peers: dict[str, float] = {}
        try:
            import torch
            from megatron.core.datasets.indexed_dataset import IndexedDatasetBuilder

            def megatron() -> None:
                b = IndexedDatasetBuilder(str(tmp / "mc.bin"), dtype=dtype)
                for a in ids:
                    b.add_document(torch.from_numpy(a.astype(dtype)), [len(a)])
                b.finalize(str(tmp / "mc.idx"))

            peers["megatron-core IndexedDatasetBuilder"] = best(megatron, args.repeat)
        except ImportError as exc:
            print(f"megatron-core not run: {exc}", file=sys.stderr)
        try:
            from datatrove.pipeline.tokens.tokenizer import TokenizedFile

            def datatrove() -> None:
                f = TokenizedFile(str(tmp / "dt"), "x.ds", token_size=toks.ids.dtype.itemsize,
                                  tokenizer_name_or_path=args.tokenizer, save_final_metadata=True)
                for a in ids:
                    f.write(a.tolist(), None)
                f.close()

            peers["datatrove TokenizedFile"] = best(datatrove, args.repeat)
        except ImportError as exc:
            print(f"datatrove not run: {exc}", file=sys.stderr)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    print(f"corpus {mb:.1f} MB, {len(docs):,} documents, {tokens:,} tokens, {args.tokenizer}, "
          f"{args.workers} workers, best of {args.repeat}")
    for name, t in rows.items():
        print(f"  {name:<40} {t:8.3f} s  {tokens / t / 1e6:8.1f} M tokens/s")
    ratio = rows["prepare all formats"] / rows["prepare tokenforge"]
    print(f"  all formats ÷ tokenforge alone: {ratio:.2f}× the time")
    peer_of = {"megatron-core IndexedDatasetBuilder": "add megatron", "datatrove TokenizedFile": "add datatrove"}
    for name, t in peers.items():
        ours = rows[peer_of[name]]
        print(f"  {name:<40} {t:8.3f} s  {tokens / t / 1e6:8.1f} M tokens/s  "
              f"({t / ours:.1f}× the time of tokenforge's '{peer_of[name]}')")
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": rows, "peers": peers, "tokens": tokens, "mb": mb}, indent=1))


if __name__ == "__main__":
    main()

"""``tokenforge prepare`` and ``tokenforge count``: a corpus to training arrays, or to counts."""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

from ._common import add_input_errors_arg, add_parser, add_tokenizer_arg, positive_int, print_json, write_lines


def _inputs(args: argparse.Namespace) -> list[str]:
    """The inputs, or with none given the training text of the embedded corpus."""
    if args.inputs:
        return list(args.inputs)
    from ..corpus import embedded_corpus

    return [str(lang.train) for lang in embedded_corpus()]


def _split_on(args: argparse.Namespace) -> str | None:
    from ..prepare.job import unescape

    return None if args.split_on is None else unescape(args.split_on)


def _show(args: argparse.Namespace, default: bool | None = None) -> bool | None:
    """``show_progress``: off with --quiet, on with --progress, else ``default``
    (None: a bar only when stderr is a terminal or a notebook)."""
    return False if args.quiet else True if args.progress else default


def cmd_prepare(args: argparse.Namespace) -> int:
    from ..prepare import prepare

    t0 = time.perf_counter()
    try:
        index = prepare(
            _inputs(args), args.tokenizer, args.out,
            workers=args.workers, engine=args.engine, ray_address=args.ray_address,
            text_field=args.text_field, split_on=_split_on(args), input_errors=args.input_errors,
            eot=args.eot, bos=args.bos,
            val_fraction=args.val_fraction, shard_size=args.shard_size, resume=args.resume,
            overwrite=args.overwrite, show_progress=_show(args), formats=args.format,
        )
    except KeyboardInterrupt:
        print(f"tokenforge: interrupted; complete shards are kept in {args.out}: "
              "run the same command with --resume to continue", file=sys.stderr)
        return 130
    seconds = time.perf_counter() - t0
    if args.json:
        print_json(index, indent=1)
        return 0
    write_lines(_summary(index, args.out, seconds, resumed=args.resume))
    return 0


def _summary(index: dict[str, Any], out: str, seconds: float, resumed: bool = False) -> list[str]:
    seps = index["separators"]
    sep = " ".join(filter(None, [
        "+".join(seps["bos"]["tokens"]) + " before" if seps["bos"]["tokens"] else "",
        "+".join(seps["eot"]["tokens"]) + " after" if seps["eot"]["tokens"] else "",
    ])) or "none"
    in_bytes = sum(i.get("size") or 0 for i in index["inputs"])
    tokens = sum(s["tokens"] for s in index["splits"].values())
    lines = [
        f"prepared {len(index['inputs'])} input(s), {in_bytes / 1e6:.2f} MB, with {index['tokenizer']['name']}"
        f" into {out}/",
        f"  dtype           {index['dtype']} (little-endian)",
        f"  separators      {sep}",
    ]
    formats = index.get("formats") or ["tokenforge"]
    for name, s in index["splits"].items():
        files = ", ".join(x["file"] for x in s["shards"][:3]) + (", ..." if len(s["shards"]) > 3 else "")
        kept = "tokenforge" in formats
        lines.append(f"  {name:<15} {s['tokens']:,} tokens, {s['documents']:,} documents"
                     + ((f", {len(s['shards'])} shard(s): {files}" if s["shards"] else ", no shard") if kept else ""))
    for fmt, written in (index.get("exports") or {}).items():
        shown = ", ".join(written[:3]) + (f", ... ({len(written)} files)" if len(written) > 3 else "")
        lines.append(f"  {fmt:<15} {shown}")
    skipped = [(i["name"], i.get("empty_documents_skipped", 0)) for i in index["inputs"]]
    if sum(n for _, n in skipped):
        where = [f"{name}: {n:,}" for name, n in skipped if n]
        lines.append(f"  skipped         {sum(n for _, n in skipped):,} empty document(s), not written ("
                     + ", ".join(where[:3]) + (", ..." if len(where) > 3 else "") + ")")
    if resumed:  # this run did only part of the work: the corpus over its time is no rate
        lines.append(f"  time            {seconds:.2f} s (this run, resumed)")
    else:
        rate = f"{in_bytes / seconds / 1e6:.1f} MB/s, " if in_bytes else ""
        lines.append(f"  time            {seconds:.2f} s ({rate}{tokens / max(seconds, 1e-9) / 1e6:.2f}M tokens/s)")
    if "tokenforge" in formats:
        lines.append(f"  read it with    tokenforge.open_tokens({out!r})")
    return lines


def cmd_count(args: argparse.Namespace) -> int:
    from ..prepare import count

    report = count(
        _inputs(args), args.tokenizer, workers=args.workers, engine=args.engine, ray_address=args.ray_address,
        text_field=args.text_field, split_on=_split_on(args), input_errors=args.input_errors,
        show_progress=_show(args, False if args.json else None),
    )
    if args.json:
        print_json(report.to_dict(), indent=1)
        return 0
    write_lines(format_count(report))
    return 0


def format_count(report: Any) -> list[str]:
    names = [r.name for r in report.rows]
    header = "input"
    lines: list[str] = []
    paths = [n for n in names if not n.startswith("<")]
    if len(paths) > 1 and len(paths) == len(names):
        common = os.path.commonpath([os.path.abspath(n) for n in names])
        if os.path.isdir(common) and common != os.sep:
            names = [os.path.relpath(os.path.abspath(n), common) for n in names]
            lines.append(f"inputs in {common}{os.sep}")
    width = max([len(n) for n in names] + [len(header)])
    lines += [f"{header:<{width}}  {'documents':>10}  {'bytes':>14}  {'tokens':>14}  bytes/token"]
    rows = list(zip(names, report.rows)) + ([("total", report.total)] if len(report.rows) > 1 else [])
    for name, r in rows:
        lines.append(f"{name:<{width}}  {r.documents:>10,}  {r.bytes:>14,}  {r.tokens:>14,}  {r.bytes_per_token:>11.3f}")
    mb = report.total.bytes / 1e6
    lines.append(f"({report.tokenizer}; {report.seconds:.2f} s, {mb / max(report.seconds, 1e-9):.1f} MB/s)")
    return lines


def _common(p: Any, tokenizer_required: bool = False) -> None:
    p.add_argument("inputs", nargs="*", help="text, .jsonl[.gz|.zst] or .parquet files, folders, globs, or '-' for "
                   "stdin (default: the multilingual corpus embedded in the package, one document per file)")
    add_tokenizer_arg(p)
    p.add_argument("--workers", "-j", type=positive_int, default=None, help="parallel workers (default: every core; with --engine ray, one actor per CPU of "
                        "the Ray cluster)")
    p.add_argument("--engine", choices=["local", "ray"], default="local",
                   help="local: threads/processes on this machine; ray: a Ray cluster (pip install 'tokenforge[ray]')")
    p.add_argument("--ray-address", default=None, help="address of a running Ray cluster (default: start a local one)")
    p.add_argument("--text-field", default="text", help="JSON field / Parquet column holding the text (default: text)")
    p.add_argument("--split-on", default=None, metavar="DELIM",
                   help="text files: documents are separated by this string (\\n escapes allowed, e.g. '\\n\\n'); "
                        "a document is exactly the text between two separators, so a TinyStories-style file "
                        "needs '\\n<|endoftext|>\\n' to leave out the line breaks around the marker; "
                        "default: one document per file")
    add_input_errors_arg(p)
    shown = p.add_mutually_exclusive_group()
    shown.add_argument("--quiet", "-q", action="store_true", help="no progress bar (the summary is still printed)")
    shown.add_argument("--progress", action="store_true",
                       help="show the progress bar on stderr even when it is not a terminal "
                            "(default: only on a terminal)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")


def register(sub: Any) -> None:
    p = add_parser(
        sub, "prepare", help="turn a corpus into uint16/uint32 token shards for LM training",
        description="Encode every document of a corpus and write flat little-endian token shards "
                    "(np.memmap-readable), document offsets and index.json. Special-token strings in the text "
                    "are read as text; separators are added by the tokenizer's convention.",
        examples=[
            "tokenforge prepare -o out/                         # the embedded corpus, cl100k_base",
            r"tokenforge prepare stories.txt --split-on '\n<|endoftext|>\n' -t gpt2 -o data/ --val-fraction 0.01",
            "tokenforge prepare 'shards/*.jsonl.zst' --text-field content -t o200k -o data/ --resume",
            "tokenforge prepare fineweb/*.parquet -t gpt2 -o data/ --format megatron,llmc --val-fraction 0.001",
        ],
    )
    _common(p)
    p.add_argument("--out", "-o", required=True, help="output folder")
    p.add_argument("--eot", default="auto", help="token after each document: auto (the tokenizer's end-of-text "
                   "or EOS), none, or a token")
    p.add_argument("--bos", default="auto", help="token before each document: auto (BOS for SentencePiece "
                   "models, [CLS] for BERT), none, or a token")
    p.add_argument("--val-fraction", type=float, default=0.0,
                   help="share of documents (chosen by a hash of their text) written to the val split")
    p.add_argument("--shard-size", default="1GB", help="bytes per shard, e.g. 1GB, 256MiB (default: 1GB)")
    p.add_argument("--format", action="append", default=None, metavar="FORMAT",
                   help="what to write, repeatable or a comma list: tokenforge (shards + index.json for "
                        "tokenforge.open_tokens; the default), megatron (Megatron-Core/NeMo .bin + .idx), "
                        "llmc (llm.c/modded-nanoGPT .bin shards with a 256-int32 header), nanogpt (nanoGPT's "
                        "train.bin/val.bin), datatrove (datatrove's .ds + .ds.index); each other format goes "
                        "to the folder of its name in --out")
    p.add_argument("--resume", action="store_true", help="continue an interrupted run from its complete shards; "
                   "on a complete run that kept the tokenforge shards, add the --format values it lacks")
    p.add_argument("--overwrite", action="store_true", help="replace what a previous run wrote in --out")
    p.set_defaults(func=cmd_prepare)

    c = add_parser(sub, "count", help="count the tokens of a corpus, per input and in total",
                   description="Read and encode a corpus as prepare does (no separators) and count tokens.",
                   examples=["tokenforge count README.md -t gpt-4o",
                             "tokenforge count 'data/*.jsonl.gz' -t cl100k --json",
                             "cat notes.txt | tokenforge count - -t o200k"])
    _common(c)
    c.set_defaults(func=cmd_count)

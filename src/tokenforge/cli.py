"""The ``tokenforge`` command: the library, one subcommand per job.

    tokenforge train [FILES...] [--model bpe|wordpiece|unigram|spm-bpe] [--vocab-size N] [--special TOKEN]...
                     [--pattern P] [--out PATH] [--workers N]
    tokenforge encode [TEXT] [--file F] [--tokenizer T] [--allowed-special all|TOKEN,...] [--json]
    tokenforge decode [IDS...] [--tokenizer T] [--json]
    tokenforge info [--tokenizer T] [--json] [--accounting [--pad-to N] [--d-model D] [--untied]]
    tokenforge compare TOKENIZERS... [--text FILES...] [--format table|markdown|csv|json] [--plot OUT.png]
    tokenforge explain [TEXT] [-t T] [--numbers] [--indent [N]] [--encodings ENC...] [--json]
    tokenforge offsets TEXT [-t T] [--json]
    tokenforge bpb TEXT --nll NATS | --token-nll FILE
    tokenforge heal PROMPT [-t T] [--max-backoff K]
    tokenforge extend TOKENS... [-t T] [--kind special|lexical] [--test FILE] [--out PATH]
    tokenforge chat MESSAGES.json [-t T] [--template chatml|llama3] [--generation-prompt]
    tokenforge glitch [-t T] [--text FILES...] [--top N] [--expected rank|uniform] [--rare-max N] [--unreachable] [--json]

With no files, ``train`` learns a byte-level BPE tokenizer from the corpus
embedded in the package and reports bytes/token on each language's held-out
text. ``--tokenizer`` takes a named encoding (``cl100k_base``, ``gpt2``, ...)
or a tokenizer file. Errors print one line to stderr and exit with status 1.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Sequence

from . import __version__
from .errors import TokenforgeError

DEFAULT_OUT = "tokenizer.tokenforge.json"
DEFAULT_TOKENIZER = "cl100k_base"


def _open_tokenizer(spec: str):
    from .encodings import ENCODINGS, get_encoding
    from .io import load

    if spec in ENCODINGS:
        return get_encoding(spec)
    return load(spec)


def _readable(token: bytes) -> str:
    """A token shown as text: UTF-8 where it decodes, with visible whitespace."""
    text = token.decode("utf-8", "backslashreplace")
    return text.replace(" ", "␣").replace("\n", "\\n").replace("\t", "\\t").replace("\r", "\\r")


def _training_input(args: argparse.Namespace) -> tuple[list[Path], str, list[tuple[str, str]]]:
    """The files to train on, a description, and held-out text per language (embedded corpus only)."""
    from .corpus import embedded_corpus

    if args.files:
        files = [Path(f) for f in args.files]
        return files, f"{len(files)} file(s)", []
    langs = embedded_corpus()
    heldout = [(f"{lang.name} ({lang.code})", lang.heldout_text()) for lang in langs]
    return [lang.train for lang in langs], f"embedded corpus, {len(langs)} languages", heldout


def _train_pipeline(args: argparse.Namespace) -> int:
    """``train --model wordpiece|unigram|spm-bpe``: the pipeline families."""
    from . import presets

    files, source, heldout = _training_input(args)
    common = dict(vocab_size=args.vocab_size, workers=args.workers, errors=args.errors, show_progress=True)
    out = args.out
    t0 = time.perf_counter()
    if args.model == "wordpiece":
        specials = args.special if args.special is not None else list(presets.BERT_SPECIALS)
        # As HF's BertWordPieceTokenizer.train: the 1000 most frequent characters, pairs seen twice.
        tok = presets.train_wordpiece(files, special_tokens=specials, limit_alphabet=1000, min_frequency=2, **common)
        if out == DEFAULT_OUT:
            out = "vocab.txt"
        tok.save(out, format="bert_vocab" if out.endswith(".txt") else "tokenforge")
        label = "WordPiece (BERT)"
    else:
        specials = args.special if args.special is not None else ["<s>", "</s>"]
        if out == DEFAULT_OUT:
            out = "tokenizer.model"
        train = presets.train_unigram if args.model == "unigram" else presets.train_sentencepiece_bpe
        kwargs = dict(special_tokens=specials, **common)
        if args.byte_fallback is not None:
            kwargs["byte_fallback"] = args.byte_fallback
        if out.endswith(".model"):
            tok = train(files, out=out, **kwargs)
        else:
            tok = train(files, **kwargs)
            tok.save(out)
        label = "Unigram (SentencePiece)" if args.model == "unigram" else "BPE (SentencePiece, byte fallback)"
    seconds = time.perf_counter() - t0
    vocab = tok.get_vocab()
    longest = sorted(vocab.items(), key=lambda kv: (-len(kv[0]), kv[1]))[:10]
    rows = []
    for lang_label, text in heldout:
        ids = tok.encode(text, disallowed_special=(), add_special_tokens=False)
        nbytes = len(text.encode("utf-8"))
        rows.append({"language": lang_label, "bytes": nbytes, "tokens": len(ids), "bytes_per_token": nbytes / max(len(ids), 1)})
    summary = {
        "out": out, "model": args.model, "source": source, "vocab_size": len(tok), "seconds": round(seconds, 3),
        "longest_tokens": [{"id": i, "token": t} for t, i in longest], "heldout": rows,
    }
    if args.json:
        print(json.dumps(summary, ensure_ascii=False, indent=2))
        return 0
    print(f"trained {label} on {source}")
    print(f"  vocab size      {len(tok)}")
    print(f"  training time   {seconds:.2f} s")
    print(f"  written to      {out}")
    print("  10 longest tokens:")
    for t, i in longest:
        print(f"    {i:>6}  {t}")
    if rows:
        print("  bytes/token on held-out text:")
        for r in rows:
            print(f"    {r['language']:<22} {r['bytes_per_token']:6.2f}  ({r['tokens']} tokens, {r['bytes']} bytes)")
    return 0


def cmd_train(args: argparse.Namespace) -> int:
    from .trainers.bpe import BPETrainer

    if args.model != "bpe":
        return _train_pipeline(args)

    specials = args.special if args.special is not None else ["<|endoftext|>"]
    trainer = BPETrainer(
        args.vocab_size,
        special_tokens=specials,
        pattern=None if args.pattern == "none" else args.pattern,
        workers=args.workers,
        errors=args.errors,
        show_progress=None,
    )
    files, source, heldout = _training_input(args)
    t0 = time.perf_counter()
    tok = trainer.train(files)
    seconds = time.perf_counter() - t0
    report = trainer.last_report
    tok.save(args.out)
    longest = sorted(tok.model.vocab.items(), key=lambda kv: (-len(kv[1]), kv[0]))[:10]
    rows = []
    for label, text in heldout:
        ids = tok.encode_ordinary(text)
        rows.append({"language": label, "bytes": len(text.encode("utf-8")), "tokens": len(ids),
                     "bytes_per_token": len(text.encode("utf-8")) / max(len(ids), 1)})
    summary = {
        "out": args.out,
        "source": source,
        "vocab_size": len(tok),
        "merges": report.merges_learned,
        "stopped_early": report.stopped_early,
        "seconds": round(seconds, 3),
        "input_bytes": report.input_bytes,
        "input_mb_per_s": round(report.input_bytes / 1e6 / max(seconds, 1e-9), 3),
        "distinct_pretokens": report.distinct_pretokens,
        "longest_tokens": [{"id": i, "token": _readable(t), "bytes": len(t)} for i, t in longest],
        "heldout": rows,
    }
    if args.json:
        print(json.dumps(summary, ensure_ascii=False, indent=2))
        return 0
    print(f"trained byte-level BPE on {source}: {report.input_bytes / 1e6:.2f} MB")
    print(f"  vocab size      {len(tok)} ({report.merges_learned} merges, {len(specials)} special)")
    if report.stopped_early:
        print(f"  stopped early   no pair left to merge after {report.merges_learned} of {report.merges_requested} merges")
    print(f"  training time   {seconds:.2f} s ({summary['input_mb_per_s']:.2f} MB/s; counting "
          f"{report.counting_seconds:.2f} s, merging {report.merging_seconds:.2f} s)")
    print(f"  written to      {args.out}")
    print("  10 longest tokens:")
    for i, t in longest:
        print(f"    {i:>6}  {len(t):>3} B  {_readable(t)}")
    if rows:
        print("  bytes/token on held-out text:")
        for r in rows:
            print(f"    {r['language']:<22} {r['bytes_per_token']:6.2f}  ({r['tokens']} tokens, {r['bytes']} bytes)")
    return 0


def _read_text_arg(args: argparse.Namespace) -> str:
    if args.file is not None:
        if args.file == "-":
            return sys.stdin.read()
        from ._io import read_text

        return read_text(args.file)
    if args.text is not None:
        return args.text
    return sys.stdin.read()


def cmd_encode(args: argparse.Namespace) -> int:
    tok = _open_tokenizer(args.tokenizer)
    text = _read_text_arg(args)
    if args.allowed_special is None:
        allowed: object = frozenset()
    elif args.allowed_special == "all":
        allowed = "all"
    else:
        allowed = frozenset(s for s in args.allowed_special.split(",") if s)
    disallowed = () if args.ordinary_special else "all"
    ids = tok.encode(text, allowed_special=allowed, disallowed_special=disallowed)
    if args.json:
        print(json.dumps(ids))
    else:
        print(" ".join(map(str, ids)))
    return 0


def cmd_decode(args: argparse.Namespace) -> int:
    tok = _open_tokenizer(args.tokenizer)
    raw = args.ids if args.ids else sys.stdin.read().replace(",", " ").replace("[", " ").replace("]", " ").split()
    ids = []
    for n, item in enumerate(raw):
        try:
            ids.append(int(item))
        except ValueError:
            raise TokenforgeError(f"id {n} is {item!r}, not an integer") from None
    text = tok.decode(ids, args.errors)
    if args.json:
        print(json.dumps(text, ensure_ascii=False))
    else:
        sys.stdout.write(text)
        if not text.endswith("\n"):
            sys.stdout.write("\n")
    return 0


def cmd_info(args: argparse.Namespace) -> int:
    from .formats.native import PARTS, part_hash

    tok = _open_tokenizer(args.tokenizer)
    if getattr(args, "accounting", False):
        from .analysis.accounting import accounting_main

        return accounting_main(tok, args)
    data = tok.to_dict()

    def kind(part):
        d = data[part]
        return None if d is None else d.get("type")

    merges = getattr(tok.model, "merges", None)
    pre = tok.pre_tokenizer
    info = {
        "name": tok.name,
        "model": type(tok.model).__name__,
        "plan": tok.plan,
        "tokens": len(tok),
        "model_tokens": tok.model.vocab_size,
        "added_tokens": {t.content: t.id for t in tok.added_tokens},
        "special_tokens": dict(tok.special_tokens),
        "n_vocab": tok.n_vocab,
        "merges": None if merges is None else len(merges),
        "pattern_name": getattr(pre, "name", None) if tok.pattern is not None else None,
        "pattern": tok.pattern,
        "normalizer": kind("normalizer"),
        "pre_tokenizer": kind("pre_tokenizer"),
        "post_processor": kind("post_processor"),
        "decoder": kind("decoder"),
        "sha256": {part: part_hash(data[part]) for part in PARTS},
    }
    if args.json:
        print(json.dumps(info, ensure_ascii=False, indent=2))
        return 0
    print(f"name            {info['name']}")
    print(f"model           {info['model']} (plan: {tok.plan})")
    print(f"tokens          {info['tokens']} ({info['model_tokens']} in the model, {len(info['added_tokens'])} added, "
          f"{len(tok.special_tokens)} special)")
    print(f"n_vocab         {info['n_vocab']} (largest id + 1)")
    if info["merges"] is not None:
        print(f"merges          {info['merges']}")
    if info["pattern"] is not None:
        print(f"pattern         {info['pattern_name'] or 'custom'}: {info['pattern']}")
    for part in ("normalizer", "pre_tokenizer", "post_processor", "decoder"):
        print(f"{part:<15} {info[part]}")
    print("special tokens  " + (", ".join(f"{t}={i}" for t, i in info["special_tokens"].items()) or "none"))
    for part, h in info["sha256"].items():
        print(f"sha256 {part:<15} {h}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tokenforge", description="Train, run and inspect tokenizers.")
    p.add_argument("--version", action="version", version=f"tokenforge {__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    t = sub.add_parser("train", help="train a tokenizer (default: byte-level BPE on the embedded corpus)")
    t.add_argument("files", nargs="*", help="UTF-8 text files (default: the embedded multilingual corpus)")
    t.add_argument("--model", default="bpe", choices=["bpe", "wordpiece", "unigram", "spm-bpe"],
                   help="bpe: byte-level BPE (GPT style, default); wordpiece: BERT; unigram: SentencePiece "
                        "Unigram (writes a .model); spm-bpe: SentencePiece BPE with byte fallback (Llama 2 style)")
    t.add_argument("--byte-fallback", dest="byte_fallback", action="store_true", default=None,
                   help="unigram/spm-bpe: add <0xXX> pieces for characters outside the vocabulary")
    t.add_argument("--no-byte-fallback", dest="byte_fallback", action="store_false")
    t.add_argument("--vocab-size", type=int, default=4096, help="total vocab size incl. 256 bytes and specials (default 4096)")
    t.add_argument("--special", action="append", default=None, metavar="TOKEN",
                   help="special token, repeatable (default: <|endoftext|>)")
    t.add_argument("--pattern", default="gpt2", help="split pattern: gpt2, cl100k, o200k, llama3, qwen, none, or a regex")
    t.add_argument("--out", default=DEFAULT_OUT, help=f"output file (default {DEFAULT_OUT})")
    t.add_argument("--workers", type=int, default=None, help="counting processes (default: all cores)")
    t.add_argument("--errors", default="strict", choices=["strict", "replace", "ignore"],
                   help="what to do with bytes that are not UTF-8 (default strict: fail)")
    t.add_argument("--json", action="store_true", help="print the report as JSON")
    t.set_defaults(func=cmd_train)

    e = sub.add_parser("encode", help="text to ids")
    e.add_argument("text", nargs="?", help="text to encode (default: stdin)")
    e.add_argument("--file", "-f", help="read the text from a file ('-' for stdin)")
    e.add_argument("--tokenizer", "-t", default=DEFAULT_TOKENIZER, help="encoding name or tokenizer file")
    e.add_argument("--allowed-special", default=None, help="'all' or comma-separated special tokens to encode as specials")
    e.add_argument("--ordinary-special", action="store_true",
                   help="encode special-token strings as ordinary text instead of failing")
    e.add_argument("--json", action="store_true", help="print ids as a JSON list")
    e.set_defaults(func=cmd_encode)

    d = sub.add_parser("decode", help="ids to text")
    d.add_argument("ids", nargs="*", help="ids (default: read from stdin, JSON list or whitespace-separated)")
    d.add_argument("--tokenizer", "-t", default=DEFAULT_TOKENIZER, help="encoding name or tokenizer file")
    d.add_argument("--errors", default="replace", choices=["replace", "strict"], help="invalid UTF-8 handling")
    d.add_argument("--json", action="store_true", help="print the text as a JSON string")
    d.set_defaults(func=cmd_decode)

    i = sub.add_parser("info", help="vocab size, specials, pattern and hashes")
    i.add_argument("--tokenizer", "-t", default=DEFAULT_TOKENIZER, help="encoding name or tokenizer file")
    i.add_argument("--json", action="store_true")
    i.set_defaults(func=cmd_info)

    from .analysis.accounting import register_accounting_args
    from .analysis.compare import register_compare

    register_accounting_args(i)  # --accounting --pad-to N --d-model D --untied
    register_compare(sub)

    from .analysis.explain import register_explain
    from .analysis.glitch import register_glitch

    register_explain(sub)
    register_glitch(sub)

    from .cli_analysis import register

    register(sub, DEFAULT_TOKENIZER)  # offsets, bpb, heal, extend, chat
    return p


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except TokenforgeError as exc:
        print(f"tokenforge: error: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # output piped into `head` and closed: not an error
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as exc:
        print(f"tokenforge: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("tokenforge: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

"""``tokenforge train``: byte-level BPE, WordPiece, Unigram and SentencePiece BPE."""

from __future__ import annotations

import argparse
import os
import time
import unicodedata
from pathlib import Path
from typing import Any

from ._common import DEFAULT_OUT, INPUT_ERRORS, add_input_errors_arg, add_parser, print_json, written_format

_UNSHOWN = frozenset(("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"))


def _shown(token: bytes | str) -> str:
    """A token as a terminal can show it: UTF-8 as text (other bytes as ``\\xNN``),
    a space as ``␣``, ``\\n``/``\\t``/``\\r``, and every other control, format,
    separator or unassigned character as a Python escape (``\\x00``, ``\\x1b``,
    ``\\u200b``): no byte of a token reaches the terminal raw."""
    text = token.decode("utf-8", "backslashreplace") if isinstance(token, bytes) else token
    text = text.replace(" ", "␣").replace("\n", "\\n").replace("\t", "\\t").replace("\r", "\\r")
    if text.isprintable():
        return text
    return "".join(ch.encode("unicode_escape").decode("ascii") if unicodedata.category(ch) in _UNSHOWN else ch
                   for ch in text)


def _training_input(args: argparse.Namespace) -> tuple[list[Path], str, list[tuple[str, str]]]:
    """The files to train on, a description, and held-out text per language (embedded corpus only)."""
    from ..corpus import embedded_corpus

    if args.files:
        files = [Path(f) for f in args.files]
        return files, f"{len(files)} file(s)", []
    langs = embedded_corpus()
    heldout = [(f"{lang.name} ({lang.code})", lang.heldout_text()) for lang in langs]
    return [lang.train for lang in langs], f"embedded corpus, {len(langs)} languages", heldout


def _out_format(args: argparse.Namespace, out: str) -> str:
    """``--format``, else what the output name asks for (``tokenizer.json``: HF, ``.tiktoken``:
    ranks, ``.model``: SentencePiece, ``.txt``: BERT vocab, ``dir/``: GPT-2 files)."""
    from ..formats import format_for_path

    return args.format or format_for_path(out)


def _check_pattern_fits(fmt: str, pattern: str, out: str) -> None:
    """Before training: the formats that hold no split pattern are read with a fixed one
    (GPT-2's files with GPT-2's) or with the one the reader passes (rank files)."""
    from ..errors import TrainingError

    if fmt == "gpt2" and pattern != "gpt2":
        raise TrainingError(
            f"cannot write {out}: GPT-2's vocab.json + merges.txt are read with GPT-2's split pattern, so "
            f"--pattern {pattern} would be lost; write tokenizer.json (HF) or a .json file instead"
        )
    if fmt == "tiktoken" and pattern == "none":
        raise TrainingError(f"cannot write {out}: a tiktoken rank file is read with a split pattern, and --pattern is none")


def _check_input(files: list[Path]) -> None:
    """An error naming the files when every one of them is empty (nothing to train on)."""
    from ..errors import TrainingError

    sizes = []
    for f in files:
        try:
            sizes.append(os.path.getsize(f) if os.path.isfile(f) else None)
        except OSError:
            sizes.append(None)
    if sizes and all(n == 0 for n in sizes):
        names = ", ".join(str(f) for f in files)
        raise TrainingError(f"no text to train on: {names} {'is' if len(files) == 1 else 'are'} empty")


def _no_data(files: list[Path]) -> Exception:
    """A trainer's "no text to train on" error, naming the input files."""
    from ..errors import TrainingError

    names = ", ".join(str(f) for f in files)
    one = len(files) == 1
    return TrainingError(f"no text to train on in {names}: {'it holds' if one else 'they hold'} nothing but "
                         "white space and control characters")


def _show(args: argparse.Namespace) -> bool | None:
    """``show_progress`` for the trainers: off with --quiet, else the mode (--progress, or a bar on a terminal)."""
    return False if args.quiet else None


def _train_pipeline(args: argparse.Namespace) -> int:
    """``train --model wordpiece|unigram|spm-bpe``: the pipeline families."""
    from .. import presets
    from ..formats import check_overwrite
    from ..trainers import NoTrainingDataError, check_output_path

    files, source, heldout = _training_input(args)
    out = args.out
    if out == DEFAULT_OUT and args.format is None:
        out = "vocab.txt" if args.model == "wordpiece" else "tokenizer.model"
    fmt = _out_format(args, out)
    check_output_path(out, fmt)  # before any work
    check_overwrite(out, fmt, args.overwrite)
    _check_input(files)
    common = dict(vocab_size=args.vocab_size, workers=args.workers, errors=args.input_errors, show_progress=_show(args))
    t0 = time.perf_counter()
    try:
        if args.model == "wordpiece":
            specials = args.special if args.special is not None else list(presets.BERT_SPECIALS)
            # As HF's BertWordPieceTokenizer.train: the 1000 most frequent characters, pairs seen twice.
            tok = presets.train_wordpiece(files, special_tokens=specials, limit_alphabet=1000, min_frequency=2,
                                          max_word_length=args.max_word_length, merge=args.merge, **common)
            tok.save(out, format=fmt, overwrite=args.overwrite)
            label = "WordPiece (BERT)"
        else:
            specials = args.special if args.special is not None else ["<s>", "</s>"]
            train = presets.train_unigram if args.model == "unigram" else presets.train_sentencepiece_bpe
            kwargs = dict(special_tokens=specials, max_sentence_length=args.max_sentence_length,
                          input_sentence_size=args.input_sentence_size, **common)
            if args.byte_fallback is not None:
                kwargs["byte_fallback"] = args.byte_fallback
            if fmt == "sentencepiece":
                tok = train(files, out=out, overwrite=args.overwrite, **kwargs)
            else:
                tok = train(files, **kwargs)
                tok.save(out, format=fmt, overwrite=args.overwrite)
            label = "Unigram (SentencePiece)" if args.model == "unigram" else "BPE (SentencePiece, byte fallback)"
    except NoTrainingDataError:
        raise _no_data(files) from None
    seconds = time.perf_counter() - t0
    vocab = tok.get_vocab()
    stopped_early = len(tok) < args.vocab_size
    longest = sorted(vocab.items(), key=lambda kv: (-len(kv[0]), kv[1]))[:10]
    rows = []
    for lang_label, text in heldout:
        ids = tok.encode(text, disallowed_special=(), add_special_tokens=False)
        nbytes = len(text.encode("utf-8"))
        rows.append({"language": lang_label, "bytes": nbytes, "tokens": len(ids), "bytes_per_token": nbytes / max(len(ids), 1)})
    summary = {
        "out": out, "format": fmt, "model": args.model, "source": source, "vocab_size": len(tok),
        "vocab_size_requested": args.vocab_size, "stopped_early": stopped_early, "seconds": round(seconds, 3),
        "longest_tokens": [{"id": i, "token": _shown(t) if not t.isprintable() else t} for t, i in longest],
        "heldout": rows,
    }
    if args.json:
        print_json(summary, indent=2)
        return 0
    print(f"trained {label} on {source}")
    print(f"  vocab size      {len(tok)}")
    if stopped_early:
        why = {"wordpiece": "no pair seen twice left to merge", "unigram": "the input holds no more pieces"}.get(
            args.model, "no pair left to merge")
        print(f"  stopped early   {why} at {len(tok)} of the {args.vocab_size} tokens asked for")
    print(f"  training time   {seconds:.2f} s")
    print(f"  written to      {out}")
    print(f"  format          {written_format(fmt, '--format')}")
    print("  10 longest tokens:")
    for t, i in longest:
        print(f"    {i:>6}  {_shown(t)}")
    if rows:
        print("  bytes/token on held-out text:")
        for r in rows:
            print(f"    {r['language']:<22} {r['bytes_per_token']:6.2f}  ({r['tokens']} tokens, {r['bytes']} bytes)")
    return 0


def cmd_train(args: argparse.Namespace) -> int:
    from ..progress import mode

    with mode("never" if args.quiet else "always" if args.progress else "auto"):
        return _cmd_train(args)


def _cmd_train(args: argparse.Namespace) -> int:
    from ..formats import check_overwrite
    from ..trainers import check_output_path
    from ..trainers.bpe import BPETrainer

    if args.model != "bpe":
        if args.engine != "local":
            from ..errors import TrainingError

            raise TrainingError(f"--engine {args.engine} is for byte-level BPE training (--model bpe)")
        return _train_pipeline(args)

    specials = args.special if args.special is not None else ["<|endoftext|>"]
    trainer = BPETrainer(
        args.vocab_size,
        special_tokens=specials,
        pattern=None if args.pattern == "none" else args.pattern,
        workers=args.workers,
        errors=args.input_errors,
        show_progress=_show(args),
        engine=args.engine,
        ray_address=args.ray_address,
    )
    files, source, heldout = _training_input(args)
    fmt = _out_format(args, args.out)
    check_output_path(args.out, fmt)  # before any work
    check_overwrite(args.out, fmt, args.overwrite)
    _check_pattern_fits(fmt, args.pattern, args.out)
    _check_input(files)
    t0 = time.perf_counter()
    tok = trainer.train(files)
    seconds = time.perf_counter() - t0
    report = trainer.last_report
    tok.save(args.out, format=fmt, overwrite=args.overwrite)
    longest = sorted(tok.model.vocab.items(), key=lambda kv: (-len(kv[1]), kv[0]))[:10]
    rows = []
    for label, text in heldout:
        ids = tok.encode_ordinary(text)
        rows.append({"language": label, "bytes": len(text.encode("utf-8")), "tokens": len(ids),
                     "bytes_per_token": len(text.encode("utf-8")) / max(len(ids), 1)})
    summary = {
        "out": args.out,
        "format": fmt,
        "source": source,
        "vocab_size": len(tok),
        "merges": report.merges_learned,
        "stopped_early": report.stopped_early,
        "seconds": round(seconds, 3),
        "input_bytes": report.input_bytes,
        "input_mb_per_s": round(report.input_bytes / 1e6 / max(seconds, 1e-9), 3),
        "distinct_pretokens": report.distinct_pretokens,
        "longest_tokens": [{"id": i, "token": _shown(t), "bytes": len(t)} for i, t in longest],
        "heldout": rows,
    }
    if args.json:
        print_json(summary, indent=2)
        return 0
    print(f"trained byte-level BPE on {source}: {report.input_bytes / 1e6:.2f} MB")
    print(f"  vocab size      {len(tok)} ({report.merges_learned} merges, {len(specials)} special)")
    if report.stopped_early:
        print(f"  stopped early   no pair left to merge after {report.merges_learned} of {report.merges_requested} merges")
    print(f"  training time   {seconds:.2f} s ({summary['input_mb_per_s']:.2f} MB/s; counting "
          f"{report.counting_seconds:.2f} s, merging {report.merging_seconds:.2f} s)")
    print(f"  written to      {args.out}")
    print(f"  format          {written_format(fmt, '--format')}")
    print("  10 longest tokens:")
    for i, t in longest:
        print(f"    {i:>6}  {len(t):>3} B  {_shown(t)}")
    if rows:
        print("  bytes/token on held-out text:")
        for r in rows:
            print(f"    {r['language']:<22} {r['bytes_per_token']:6.2f}  ({r['tokens']} tokens, {r['bytes']} bytes)")
    return 0


def register(sub: Any) -> None:
    t = add_parser(
        sub, "train", help="train a tokenizer (default: byte-level BPE on the embedded corpus)",
        examples=[
            "tokenforge train                                   # byte-level BPE, 4096 tokens, embedded corpus",
            "tokenforge train corpus.txt --vocab-size 32000 --pattern o200k --special '<|endoftext|>' --out tok.json",
            "tokenforge train corpus.txt --model unigram --vocab-size 8000 --out spm.model",
            "tokenforge train corpus.txt --model wordpiece --vocab-size 30000 --out vocab.txt",
        ],
    )
    t.add_argument("files", nargs="*", help="UTF-8 text files (default: the embedded multilingual corpus)")
    t.add_argument("--model", default="bpe", choices=["bpe", "wordpiece", "unigram", "spm-bpe"],
                   help="bpe: byte-level BPE (GPT style, default); wordpiece: BERT; unigram: SentencePiece "
                        "Unigram (writes a .model); spm-bpe: SentencePiece BPE with byte fallback (Llama 2 style)")
    t.add_argument("--byte-fallback", dest="byte_fallback", action="store_true", default=None,
                   help="unigram/spm-bpe: add <0xXX> pieces for characters outside the vocabulary "
                        "(default: on for spm-bpe, off for unigram)")
    t.add_argument("--no-byte-fallback", dest="byte_fallback", action="store_false",
                   help="no <0xXX> pieces: characters outside the vocabulary become the unknown piece "
                        "(default: see --byte-fallback)")
    t.add_argument("--vocab-size", type=int, default=4096, help="total vocab size incl. 256 bytes and specials (default 4096)")
    t.add_argument("--special", action="append", default=None, metavar="TOKEN",
                   help="special token, repeatable (default: <|endoftext|>)")
    t.add_argument("--pattern", default="gpt2", help="split pattern: gpt2, cl100k, o200k, llama3, qwen, none, or a regex")
    t.add_argument("--out", default=DEFAULT_OUT,
                   help=f"output file (default {DEFAULT_OUT}); its name picks the format: tokenizer.json (HF), "
                        "*.tiktoken (rank file), *.model (SentencePiece), *.txt (BERT vocab.txt), DIR/ (GPT-2 "
                        "vocab.json + merges.txt), anything else tokenforge's JSON")
    t.add_argument("--overwrite", action="store_true",
                   help="replace an existing output file (without it, train refuses before any work)")
    t.add_argument("--format", default=None, choices=["tokenforge", "hf", "tiktoken", "gpt2", "sentencepiece", "bert_vocab", "transformers"],
                   help="write this format whatever the --out name")
    t.add_argument("--workers", type=int, default=None, help="counting processes (default: all cores)")
    t.add_argument("--max-sentence-length", type=int, default=4192, metavar="BYTES",
                   help="unigram/spm-bpe: skip lines longer than this, as sentencepiece does (default 4192)")
    t.add_argument("--input-sentence-size", type=int, default=0, metavar="LINES",
                   help="unigram/spm-bpe: train on about this many lines of the files, sampled uniformly "
                        "(sentencepiece's flag; default 0: every line)")
    t.add_argument("--max-word-length", type=int, default=4192, metavar="BYTES",
                   help="wordpiece: skip words longer than this (default 4192; they encode as [UNK] anyway)")
    t.add_argument("--merge", choices=["frequency", "likelihood", "score"], default="frequency",
                   help="wordpiece: the merge rule: frequency (the most frequent pair, as HF's WordPieceTrainer), "
                        "likelihood (the likelihood gain, Schuster & Nakajima 2012) or score (f(xy)/(f(x)f(y)), "
                        "favours rare pairs)")
    t.add_argument("--engine", choices=["local", "ray"], default="local",
                   help="bpe: count pre-tokens in local processes or as Ray tasks (pip install 'tokenforge[ray]')")
    t.add_argument("--ray-address", default=None, help="address of a running Ray cluster (default: start a local one)")
    add_input_errors_arg(t)
    # the name this flag had before every command read input with --input-errors
    t.add_argument("--errors", dest="input_errors", choices=INPUT_ERRORS, default=argparse.SUPPRESS,
                   help=argparse.SUPPRESS)
    t.add_argument("--json", action="store_true", help="print the report as JSON")
    shown = t.add_mutually_exclusive_group()
    shown.add_argument("--quiet", "-q", action="store_true", help="no progress bars (the report is still printed)")
    shown.add_argument("--progress", action="store_true",
                       help="show progress bars on stderr even when it is not a terminal (default: only on a terminal)")
    t.set_defaults(func=cmd_train)

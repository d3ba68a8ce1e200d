"""The ``tokenforge`` command: the library, one subcommand per job.

    tokenforge train [FILES...] [--model bpe|wordpiece|unigram|spm-bpe] [--vocab-size N] [--special TOKEN]...
                     [--pattern P] [--out PATH] [--overwrite] [--workers N]
    tokenforge encode [TEXT] [--file F] [-t T] [--allowed-special all|TOKEN,...] [--ordinary-special] [--count] [--json]
    tokenforge prepare INPUTS... -t T -o OUTDIR [--workers N] [--engine local|ray] [--text-field F]
                     [--split-on DELIM] [--eot auto|none|TOKEN] [--bos auto|none|TOKEN] [--val-fraction F]
                     [--shard-size 1GB] [--resume] [--overwrite]
    tokenforge count INPUTS... -t T [--workers N] [--engine local|ray] [--json]
    tokenforge decode [IDS...] [-t T] [--errors replace|strict] [--json]
    tokenforge info [-t T] [--json] [--backend] [--specials] [--accounting [--pad-to N] [--d-model D] [--untied]]
                   [--residues [CORPUS...] [--threshold S] [--top N]]
    tokenforge list [--json]
    tokenforge convert IN OUT [--to tokenforge|hf|tiktoken|gpt2|sentencepiece|bert_vocab] [--overwrite] [--allow-lossy] [--json]
    tokenforge compare TOKENIZERS... [--text FILES...] [--format table|markdown|csv|json] [--plot OUT.png]
    tokenforge explain [TEXT] [--file F] [-t T] [--numbers] [--indent [N]] [--encodings ENC...] [--json] [--html OUT]
    tokenforge offsets [TEXT] [--file F] [-t T] [--json]
    tokenforge bpb [TEXT] [--file F] --nll NATS | --token-nll FILE
    tokenforge heal [PROMPT] [--file F] [-t T] [--max-backoff K]
    tokenforge covers [PREFIX] [--file F] [-t T] [--canonical] [--limit N] [--json]
    tokenforge extend TOKENS... [-t T] [--kind special|lexical] [--test FILE] [--out PATH] [--overwrite]
    tokenforge chat MESSAGES.json [-t T] [--template chatml|llama3] [--generation-prompt]
    tokenforge glitch [-t T] [--text FILES...] [--top N] [--expected rank|uniform] [--rare-max N] [--unreachable] [--json]
    tokenforge serve [TOKENIZER ...] [--host 127.0.0.1] [--port 8765] [--allow-host NAME] [--open]
    tokenforge patch [TEXT] [--file F] [--model M] [--rule global|relative] [--threshold T] [--fixed P] [--json]
    tokenforge fingerprint [-t T] [--parts] [--json]
    tokenforge diff A B [--text FILES...] [--top N] [--json]
    tokenforge transplant A B -o MAP.jsonl [--json]

With no files, ``train`` learns a byte-level BPE tokenizer from the corpus
embedded in the package and reports bytes/token on each language's held-out
text. ``-t/--tokenizer`` takes an encoding name (``cl100k_base``, ``gpt2``, ...),
its short form (``cl100k``), an OpenAI model name (``gpt-4o``), or a tokenizer
file or folder (``FORMAT:PATH`` names its format); :func:`._common.resolve_tokenizer`
decides, for every command, and ``tokenforge list`` shows every name.
Text comes from the TEXT argument, ``--file`` or stdin, read as exact UTF-8
(:func:`._common.read_text_arg`). Errors print one line to stderr, in terms of
the command's flags, and exit with status 1.

The commands live in one module per group: :mod:`.train`, :mod:`.encode`
(encode, decode, offsets), :mod:`.prepare` (prepare, count), :mod:`.info` (info, accounting, list),
:mod:`.convert` (convert) and :mod:`.analysis`
(compare, explain, glitch, heal, covers, extend, bpb, chat), :mod:`.patch` (byte patches),
:mod:`.versions` (fingerprint, diff, transplant) and :mod:`.serve` (the token page);
:mod:`._common` opens a
tokenizer by name or path, reads text and prints JSON and errors. The CLI only parses
arguments, calls the library and prints; :mod:`tokenforge.analysis` never
imports it.
"""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

from .. import __version__
from ..errors import TokenforgeError
from . import analysis, convert, encode, info, patch, prepare, serve, train, versions
from ._common import DEFAULT_OUT, DEFAULT_TOKENIZER, InputError, cli_message, print_error, resolve_tokenizer

__all__ = ["DEFAULT_OUT", "DEFAULT_TOKENIZER", "build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tokenforge", description="Train, run and inspect tokenizers.")
    p.add_argument("--version", action="version", version=f"tokenforge {__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    train.register(sub)  # train
    encode.register(sub)  # encode, decode
    prepare.register(sub)  # prepare, count
    info.register(sub)  # info [--accounting --pad-to N --d-model D --untied]
    info.register_list(sub)  # list [--json]
    convert.register(sub)  # convert IN OUT [--to FORMAT] [--allow-lossy]
    analysis.register_compare(sub)
    analysis.register_explain(sub)
    analysis.register_glitch(sub)
    encode.register_offsets(sub)
    analysis.register(sub, DEFAULT_TOKENIZER)  # bpb, heal, covers, extend, chat
    patch.register(sub)  # patch [TEXT] [--model M] [--threshold T] [--rule global|relative] [--fixed P]
    versions.register_fingerprint(sub)  # fingerprint -t T [--parts] [--json]
    versions.register_diff(sub)  # diff A B [--text FILES] [--json] [--top N]
    versions.register_transplant(sub)  # transplant A B -o MAP.jsonl [--json]
    serve.register(sub)  # serve [TOKENIZER ...] [--host H] [--port P] [--allow-host NAME] [--open]
    return p


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    print(f"tokenforge: warning: {message}", file=file or sys.stderr)


def _options(parser: argparse.ArgumentParser, command: str | None) -> set[str]:
    """The option strings of ``command`` (``--allowed-special``, ...), to name in errors."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) and command in action.choices:
            return {o for a in action.choices[command]._actions for o in a.option_strings}
    return set()


def main(argv: Sequence[str] | None = None) -> int:
    import warnings

    parser = build_parser()
    args = parser.parse_args(argv)
    warnings.showwarning = _show_warning  # one line, without the source location
    try:
        if isinstance(getattr(args, "tokenizer", None), str):  # one resolver for every command's -t
            args.tokenizer = resolve_tokenizer(args.tokenizer)
        return args.func(args)
    except TokenforgeError as exc:
        print_error(cli_message(str(exc), _options(parser, getattr(args, "command", None))))
        return 1
    except InputError as exc:
        print_error(exc)
        return 1
    except BrokenPipeError:  # output piped into `head` and closed: not an error
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as exc:
        print_error(exc)
        return 1
    except KeyboardInterrupt:
        print("tokenforge: interrupted", file=sys.stderr)
        return 130

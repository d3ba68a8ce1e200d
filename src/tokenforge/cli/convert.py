"""``tokenforge convert``: one tokenizer format to another, checked on sample text."""

from __future__ import annotations

import argparse
from typing import Any

from ._common import (
    TOKENIZER_HELP,
    add_input_errors_arg,
    add_parser,
    cli_message,
    print_json,
    read_text_file,
    resolve_tokenizer,
    written_format,
)

_NOTE_SPECIALS = "a rank file holds no special tokens: pass special_tokens= when loading it"


def _note(note: str) -> str:
    """A library note in CLI terms."""
    if note == _NOTE_SPECIALS:
        return ("a rank file holds no special tokens: -t reads them back only for rank files tokenforge "
                "recognises by sha256; write tokenizer.json (--to hf) or the tokenforge format to keep them")
    return cli_message(note, {"--allow-lossy", "--to", "--sample"})


def cmd_convert(args: argparse.Namespace) -> int:
    from ..io import convert

    sample = None
    if args.sample:
        sample = "\n".join(read_text_file(f, args.input_errors) for f in args.sample)
    source = resolve_tokenizer(args.source)
    report = convert(source, args.dest, to=args.to, allow_lossy=args.allow_lossy, sample=sample,
                     overwrite=args.overwrite)
    report["notes"] = [_note(n) for n in report["notes"]]
    if args.json:
        print_json(report)
        return 0
    print(f"wrote {report['dest']}")
    print(f"  format: {written_format(report['format'], '--to')}")
    if report["exact"]:
        print(f"  checked: the same ids on {report['lines']} sample lines and on the {report['documents']} "
              f"whole documents they come from ({report['tokens']} tokens)")
    else:
        share = report["lines_differing"] / max(report["lines"], 1)
        print(f"  NOT EXACT: ids differ on {report['documents_differing']} of {report['documents']} whole documents "
              f"and {report['lines_differing']} of {report['lines']} lines "
              f"({share:.1%}; {report['tokens_differing']} of {report['tokens']} tokens)")
        ex = report["example"]
        what = "whole document" if ex.get("whole_document") else "line"
        print(f"  first difference ({what}, from token {ex.get('from_token', 0)}): {ex['text']!r}\n"
              f"    source ids:  {ex['ids']}\n    written ids: {ex['written_ids']}")
    for note in report["notes"]:
        print(f"  note: {note}")
    return 0


def register(sub: Any) -> None:
    c = add_parser(sub, "convert", help="write a tokenizer in another format; the ids are checked on sample text",
                   examples=[
                       "tokenforge convert cl100k tokenizer.json          # HF tokenizers format",
                       "tokenforge convert gpt2 gpt2-files/               # vocab.json + merges.txt",
                       "tokenforge convert tokenizer.json out.tiktoken --sample my_text.txt",
                       "tokenforge convert spm.model tokenizer.json --allow-lossy",
                   ])
    c.add_argument("source", help="the tokenizer to convert: " + TOKENIZER_HELP)
    c.add_argument("dest", help="output path; its name picks the format (a name ending in tokenizer.json: HF's; "
                                "*.tiktoken, *.model, *.txt, DIR/ for GPT-2 files; anything else tokenforge's "
                                "JSON) unless --to is given")
    c.add_argument("--to", default=None, choices=["tokenforge", "hf", "tiktoken", "gpt2", "sentencepiece", "bert_vocab", "transformers"],
                   help="output format (default: picked from the output name)")
    c.add_argument("--overwrite", action="store_true",
                   help="replace an existing output file (it is replaced only once the written file is checked)")
    c.add_argument("--allow-lossy", action="store_true",
                   help="when no exact form exists (a SentencePiece .model as tokenizer.json), write the closest "
                        "one, as transformers' converters do, and report how often the ids differ")
    c.add_argument("--sample", nargs="+", metavar="FILE",
                   help="text to check the ids on (default: the embedded corpus's held-out text)")
    add_input_errors_arg(c)
    c.add_argument("--json", action="store_true", help="print the report as JSON")
    c.set_defaults(func=cmd_convert)

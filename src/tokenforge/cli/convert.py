"""``tokenforge convert``: one tokenizer format to another, checked on sample text."""

from __future__ import annotations

import argparse
from typing import Any

from ._common import print_json


def cmd_convert(args: argparse.Namespace) -> int:
    from ..io import convert

    sample = None
    if args.sample:
        from .._io import read_text

        sample = "\n".join(read_text(f) for f in args.sample)
    report = convert(args.source, args.dest, to=args.to, allow_lossy=args.allow_lossy, sample=sample)
    if args.json:
        print_json(report)
        return 0
    print(f"wrote {report['dest']} ({report['format']})")
    if report["exact"]:
        print(f"  checked: the same ids on {report['lines']} sample lines ({report['tokens']} tokens)")
    else:
        share = report["lines_differing"] / max(report["lines"], 1)
        print(f"  NOT EXACT: ids differ on {report['lines_differing']} of {report['lines']} sample lines "
              f"({share:.1%}; {report['tokens_differing']} of {report['tokens']} tokens)")
        ex = report["example"]
        print(f"  first difference: {ex['text']!r}\n    source ids:  {ex['ids']}\n    written ids: {ex['written_ids']}")
    for note in report["notes"]:
        print(f"  note: {note}")
    return 0


def register(sub: Any) -> None:
    c = sub.add_parser("convert", help="write a tokenizer in another format; the ids are checked on sample text")
    c.add_argument("source", help="a named encoding (cl100k_base, ...) or any tokenizer file or folder")
    c.add_argument("dest", help="output path; its name picks the format (tokenizer.json, *.tiktoken, *.model, "
                                "vocab.txt, DIR/ for GPT-2 files) unless --to is given")
    c.add_argument("--to", default=None, choices=["tokenforge", "hf", "tiktoken", "gpt2", "sentencepiece", "bert_vocab", "transformers"],
                   help="output format")
    c.add_argument("--allow-lossy", action="store_true",
                   help="when no exact form exists (a SentencePiece .model as tokenizer.json), write the closest "
                        "one, as transformers' converters do, and report how often the ids differ")
    c.add_argument("--sample", nargs="+", metavar="FILE",
                   help="text to check the ids on (default: the embedded corpus's held-out text)")
    c.add_argument("--json", action="store_true", help="print the report as JSON")
    c.set_defaults(func=cmd_convert)

"""``tokenforge encode``, ``decode`` and ``offsets``: text to ids and back."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..errors import TokenforgeError
from ._common import DEFAULT_TOKENIZER, print_json, write_lines, open_tokenizer as _open_tokenizer, read_text_arg as _read_text_arg


def cmd_encode(args: argparse.Namespace) -> int:
    if args.count:
        return _count(args)
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
        print_json(ids)
    else:
        print(" ".join(map(str, ids)))
    return 0


def _count(args: argparse.Namespace) -> int:
    """``encode --count``: what ``tokenforge count`` does, on the text, the file or stdin."""
    from ..prepare import count
    from .prepare import format_count

    if args.file is not None:
        inputs: object = [args.file]
    elif args.text is not None:
        inputs = iter([args.text])
    else:
        inputs = ["-"]
    report = count(inputs, args.tokenizer, show_progress=False)
    if args.json:
        print_json(report.to_dict(), indent=1)
    elif args.file is None:
        print(report.total.tokens)
    else:
        write_lines(format_count(report))
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
        print_json(text)
    else:
        sys.stdout.write(text)
        if not text.endswith("\n"):
            sys.stdout.write("\n")
    return 0



def cmd_offsets(args: argparse.Namespace) -> int:
    from ..analysis.offsets import encode_with_offsets

    tok = _open_tokenizer(args.tokenizer)
    text = _read_text_arg(args)
    spans = encode_with_offsets(tok, text, disallowed_special=())
    if args.json:
        print_json([s.to_dict() for s in spans])
        return 0
    print(f"{'id':>8}  {'chars':>11}  {'bytes':>11}  text")
    for s in spans:
        flag = " (part of a character)" if s.partial else (" (special)" if s.special else "")
        print(f"{s.id:>8}  {s.start:>5}-{s.end:<5}  {s.byte_start:>5}-{s.byte_end:<5}  {text[s.start:s.end]!r}{flag}")
    return 0


def register(sub: Any) -> None:
    """Add ``encode`` and ``decode`` (``offsets`` is :func:`register_offsets`, listed with the analysis commands)."""
    e = sub.add_parser("encode", help="text to ids")
    e.add_argument("text", nargs="?", help="text to encode (default: stdin)")
    e.add_argument("--file", "-f", help="read the text from a file ('-' for stdin)")
    e.add_argument("--tokenizer", "-t", default=DEFAULT_TOKENIZER, help="encoding name or tokenizer file")
    e.add_argument("--allowed-special", default=None, help="'all' or comma-separated special tokens to encode as specials")
    e.add_argument("--ordinary-special", action="store_true",
                   help="encode special-token strings as ordinary text instead of failing")
    e.add_argument("--count", action="store_true",
                   help="print how many tokens the text has (special-token strings read as text), as `count` does")
    e.add_argument("--json", action="store_true", help="print ids as a JSON list")
    e.set_defaults(func=cmd_encode)

    d = sub.add_parser("decode", help="ids to text")
    d.add_argument("ids", nargs="*", help="ids (default: read from stdin, JSON list or whitespace-separated)")
    d.add_argument("--tokenizer", "-t", default=DEFAULT_TOKENIZER, help="encoding name or tokenizer file")
    d.add_argument("--errors", default="replace", choices=["replace", "strict"], help="invalid UTF-8 handling")
    d.add_argument("--json", action="store_true", help="print the text as a JSON string")
    d.set_defaults(func=cmd_decode)


def register_offsets(sub: Any) -> None:
    o = sub.add_parser("offsets", help="each token with its span in the text (code points and UTF-8 bytes)")
    o.add_argument("text", nargs="?", help="text (default: stdin)")
    o.add_argument("--file", "-f", help="read the text from a file ('-' for stdin)")
    o.add_argument("--tokenizer", "-t", default=DEFAULT_TOKENIZER)
    o.add_argument("--json", action="store_true")
    o.set_defaults(func=cmd_offsets)

"""``tokenforge encode``, ``decode`` and ``offsets``: text to ids and back."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..errors import TokenforgeError
from ._common import (
    DEFAULT_TOKENIZER,
    add_input_errors_arg,
    add_parser,
    add_tokenizer_arg,
    print_json,
    read_stdin_bytes,
    decode_utf8,
    open_tokenizer as _open_tokenizer,
    read_text_arg as _read_text_arg,
)


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
    """``encode --count``: the token count of the text, the file or stdin, counted by
    :func:`tokenforge.count` as ``tokenforge count`` does (special-token strings read as text).

    Prints only the number; ``--json`` prints the count report of ``tokenforge count --json``."""
    from ..prepare import count

    tok = _open_tokenizer(args.tokenizer)
    text = _read_text_arg(args)
    report = count(iter([text]), tok, workers=1, show_progress=False)  # one document: no worker pool
    if args.json:
        d = report.to_dict()
        name = args.file if args.file not in (None, "-") else ("<text>" if args.text is not None else "<stdin>")
        for row in d.get("inputs", []):
            row["name"] = name
        print_json(d, indent=1)
    else:
        print(report.total.tokens)
    return 0


def cmd_decode(args: argparse.Namespace) -> int:
    tok = _open_tokenizer(args.tokenizer)
    if args.ids:
        raw = args.ids
    else:
        data = decode_utf8(read_stdin_bytes(), "<stdin>", hint=False)
        raw = data.replace(",", " ").replace("[", " ").replace("]", " ").split()
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


def add_text_args(p: argparse.ArgumentParser, what: str = "text") -> None:
    """``[TEXT] [--file F] [--input-errors strict|replace]``: the text, a file, or stdin."""
    p.add_argument("text", nargs="?", help=f"{what} (default: read --file, else stdin)")
    p.add_argument("--file", "-f", metavar="F",
                   help="read the text from a file, its bytes as they are ('-' for stdin; default: none)")
    add_input_errors_arg(p)


def register(sub: Any) -> None:
    """Add ``encode`` and ``decode`` (``offsets`` is :func:`register_offsets`, listed with the analysis commands)."""
    e = add_parser(sub, "encode", help="text to ids", examples=[
        "tokenforge encode 'hello world' -t cl100k          # 15339 1917",
        "tokenforge encode 'hello world' -t gpt-4o --json   # [24912, 2375]",
        "tokenforge encode --count -f README.md -t o200k    # only the number of tokens",
        "printf 'a<|endoftext|>b' | tokenforge encode --allowed-special '<|endoftext|>'",
    ])
    add_text_args(e, "text to encode")
    add_tokenizer_arg(e)
    e.add_argument("--allowed-special", default=None, metavar="all|TOKEN,...",
                   help="'all' or comma-separated special tokens to encode as specials (default: none; "
                        "text holding a special-token string is an error)")
    e.add_argument("--ordinary-special", action="store_true",
                   help="encode special-token strings as ordinary text instead of failing")
    e.add_argument("--count", action="store_true",
                   help="print only how many tokens the text has (special-token strings read as text), "
                        "counted as `tokenforge count` does")
    e.add_argument("--json", action="store_true",
                   help="print ids as a JSON list (with --count: the count report of `tokenforge count --json`)")
    e.set_defaults(func=cmd_encode)

    d = add_parser(sub, "decode", help="ids to text", examples=[
        "tokenforge decode 15339 1917 -t cl100k_base        # hello world",
        "echo '[15339, 1917]' | tokenforge decode -t cl100k",
        "tokenforge decode 49426 -t gpt2 --errors strict    # fails: the bytes are not valid UTF-8",
    ])
    d.add_argument("ids", nargs="*", help="ids (default: read from stdin, a JSON list or whitespace-separated)")
    add_tokenizer_arg(d)
    d.add_argument("--errors", default="replace", choices=["replace", "strict"],
                   help="token bytes that are not valid UTF-8: replace shows U+FFFD, strict fails")
    d.add_argument("--json", action="store_true", help="print the text as a JSON string")
    d.set_defaults(func=cmd_decode)


def register_offsets(sub: Any) -> None:
    o = add_parser(sub, "offsets", help="each token with its span in the text (code points and UTF-8 bytes)",
                   examples=["tokenforge offsets 'héllo 東京' -t cl100k",
                             "tokenforge offsets -f notes.txt -t gpt2 --json"])
    add_text_args(o)
    add_tokenizer_arg(o, DEFAULT_TOKENIZER)
    o.add_argument("--json", action="store_true", help="print the spans as a JSON list")
    o.set_defaults(func=cmd_offsets)

"""``tokenforge serve``: the local token page (see :mod:`tokenforge.web`)."""

from __future__ import annotations

import argparse
from typing import Any

from ._common import add_parser

__all__ = ["cmd_serve", "register"]


def cmd_serve(args: argparse.Namespace) -> int:
    from ..web import serve

    serve(paths=tuple(args.tokenizers), host=args.host, port=args.port, open_browser=args.open,
          allow_hosts=tuple(args.allow_host))
    return 0


def register(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``tokenforge serve [TOKENIZER ...] [--host H] [--port P] [--allow-host NAME] [--open]``."""
    from ..web import DEFAULT_PORT

    p = add_parser(
        subparsers, "serve",
        help="start a local web page to see tokens: live tokenization, side by side, merges, compare",
        description=(
            "Start a local web page to see tokens: live tokenization as you type, up to four tokenizers "
            "side by side, each token's id, bytes and BPE merges, views for numbers, indentation, prefix "
            "stability and glitch candidates, and the compare table for uploaded files. It offers the "
            "named encodings and the tokenizers given here, and works offline. Needs the serve extra: "
            "pip install 'tokenforge[serve]'."
        ),
        examples=[
            "tokenforge serve --open",
            "tokenforge serve cl100k tokenizer.model bert/vocab.txt",
            "tokenforge serve ./my-tokenizer --port 9000",
            "tokenforge serve --host 0.0.0.0 --allow-host tokens.example.org   # behind a proxy",
        ],
    )
    p.add_argument("tokenizers", nargs="*", metavar="TOKENIZER",
                   help="tokenizers to offer besides the named encodings: what -t takes (a name, a file or a "
                        "folder); the page opens with them side by side")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default: %(default)s, this machine only; any other address "
                        "lets other machines use the page, with a warning)")
    p.add_argument("--port", type=int, default=DEFAULT_PORT,
                   help="port to listen on, 0 for any free one (default: %(default)s)")
    p.add_argument("--allow-host", action="append", default=[], metavar="NAME",
                   help="also answer requests addressed to NAME (or NAME:PORT), as a reverse proxy in front of "
                        "the page passes them on; repeatable. Without it the page answers only to localhost, "
                        "127.0.0.1, [::1] and --host, so that no web page can reach it by rebinding its own "
                        "name to this machine (DNS rebinding)")
    p.add_argument("--open", action="store_true", help="open the page in the default web browser")
    p.set_defaults(func=cmd_serve)
    return p

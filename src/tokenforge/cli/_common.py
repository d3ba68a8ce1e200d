"""What every ``tokenforge`` command shares: opening a tokenizer by name or path,
reading the text argument, ``--json`` output and one-line errors."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

DEFAULT_OUT = "tokenizer.tokenforge.json"
DEFAULT_TOKENIZER = "cl100k_base"


def open_tokenizer(spec: str) -> Any:
    """A named encoding (``cl100k_base``, ``gpt2``, ...) or a tokenizer file."""
    from ..io import open_tokenizer as _open

    return _open(spec)


_open_tokenizer = open_tokenizer  # the name the single-module CLI used


def readable(token: bytes) -> str:
    """A token shown as text: UTF-8 where it decodes, with visible whitespace."""
    text = token.decode("utf-8", "backslashreplace")
    return text.replace(" ", "␣").replace("\n", "\\n").replace("\t", "\\t").replace("\r", "\\r")


def read_text_arg(args: argparse.Namespace) -> str:
    """The text of ``TEXT`` / ``--file F`` (``-`` for stdin) / stdin."""
    if args.file is not None:
        if args.file == "-":
            return sys.stdin.read()
        from .._io import read_text

        return read_text(args.file)
    if args.text is not None:
        return args.text
    return sys.stdin.read()


def positive_int(value: str) -> int:
    """An argparse type: an integer of at least 1."""
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not an integer") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {n}")
    return n


def print_json(obj: Any, *, indent: int | None = None) -> None:
    """Print ``obj`` as JSON (UTF-8 kept as is) for ``--json``."""
    print(json.dumps(obj, ensure_ascii=False, indent=indent))


def write_lines(lines: list[str]) -> None:
    """Write report lines to stdout, without leading blank lines, ending in one newline."""
    sys.stdout.write("\n".join(lines).lstrip("\n") + "\n")


def print_error(message: object) -> None:
    """The one-line error every command ends with on failure."""
    print(f"tokenforge: error: {message}", file=sys.stderr)

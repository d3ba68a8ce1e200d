"""What every ``tokenforge`` command shares: resolving ``-t/--tokenizer``, reading the
text argument (stdin and files as exact UTF-8), ``--json`` output, help formatting,
and one-line errors that name CLI flags rather than Python arguments."""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from typing import Any

DEFAULT_OUT = "tokenizer.tokenforge.json"
DEFAULT_TOKENIZER = "cl100k_base"

# ------------------------------------------------------------------ help
TOKENIZER_HELP = ("encoding name (cl100k_base, o200k_base, gpt2, ...) or short form (cl100k, o200k), "
                  "OpenAI model name (gpt-4o, gpt-4, text-embedding-3-small), or a tokenizer file or folder "
                  "(FORMAT:PATH names its format; tokenforge list shows every name and format)")


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Keeps the line breaks of descriptions and epilogs (the examples) and shows every
    option's default: ``(default: X)`` is added to help that does not already name it."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if "default" in text.lower() or action.default is argparse.SUPPRESS:
            return text
        if not action.option_strings and action.nargs not in ("?", "*"):
            return text  # a required positional has no default
        if isinstance(action, argparse._StoreTrueAction):
            return text + " (default: off)"
        if action.default is None:
            return text + " (default: none)"
        return text + " (default: %(default)s)"


def add_parser(sub: Any, name: str, *, help: str, examples: list[str], **kwargs: Any) -> argparse.ArgumentParser:
    """``sub.add_parser`` with the shared formatter and an ``examples:`` epilog."""
    import textwrap

    epilog = "examples:\n" + "\n".join(f"  {e}" for e in examples)
    description = kwargs.pop("description", None) or help[:1].upper() + help[1:] + "."
    # wrapped here, since the raw formatter keeps the examples' line breaks as written
    kwargs["description"] = "\n\n".join(
        para if para.startswith(" ") else textwrap.fill(para, 79) for para in description.split("\n\n"))
    return sub.add_parser(name, help=help, epilog=epilog, formatter_class=HelpFormatter, **kwargs)


def add_tokenizer_arg(p: argparse.ArgumentParser, default: str = DEFAULT_TOKENIZER) -> None:
    p.add_argument("--tokenizer", "-t", default=default, metavar="TOK", help=TOKENIZER_HELP)


INPUT_ERRORS = ("strict", "replace", "ignore", "backslashreplace")


def add_input_errors_arg(p: Any) -> None:
    """``--input-errors``: one flag, with Python's decoding error handlers, for every command
    that reads text or a corpus."""
    p.add_argument("--input-errors", choices=INPUT_ERRORS, default="strict",
                   help="input that is not valid UTF-8: strict fails naming the file, line and byte; "
                        "replace reads invalid bytes as U+FFFD, ignore drops them, backslashreplace "
                        "keeps them as \\xNN (Python's bytes.decode error handlers)")


# ------------------------------------------------------------------ -t/--tokenizer
from ..io import known_tokenizer_names, resolve_tokenizer  # noqa: E402  (re-exported for the commands)


def open_tokenizer(spec: Any) -> Any:
    """The tokenizer ``-t SPEC`` names (see :func:`resolve_tokenizer`)."""
    from ..io import open_tokenizer as _open

    if isinstance(spec, str):
        spec = resolve_tokenizer(spec)
    return _open(spec)


_open_tokenizer = open_tokenizer  # the name the single-module CLI used


def tokenizer_label(spec: str, tok: Any) -> str:
    """A name to show for a tokenizer: its own, else its file name, else ``(unnamed)``."""
    name = getattr(tok, "name", None)
    if name:
        return str(name)
    base = os.path.basename(os.path.abspath(spec)) if isinstance(spec, str) and spec else ""
    return base or "(unnamed)"


def readable(token: bytes) -> str:
    """A token shown as text: UTF-8 where it decodes, with visible whitespace."""
    text = token.decode("utf-8", "backslashreplace")
    return text.replace(" ", "␣").replace("\n", "\\n").replace("\t", "\\t").replace("\r", "\\r")


def written_format(fmt: str, flag: str) -> str:
    """What a command wrote and how to choose another format, for its report:
    ``hf (HF tokenizers' tokenizer.json; --to NAME for another: tokenforge, hf, ...)``."""
    from ..formats import FORMAT_DESCRIPTIONS, FORMATS

    return f"{fmt}: {FORMAT_DESCRIPTIONS[fmt]}; {flag} NAME writes another: {', '.join(FORMATS)}"


# ------------------------------------------------------------------ input text
class InputError(Exception):
    """Input the command cannot read (not UTF-8, a malformed table): one line, exit status 1."""


def decode_utf8(data: bytes, source: str, errors: str = "strict", *, hint: bool = True) -> str:
    """``data`` as UTF-8, exactly (no newline translation; a BOM is kept as U+FEFF).

    Invalid UTF-8 raises :class:`InputError` naming the byte offset, unless ``errors``
    is another of :data:`INPUT_ERRORS` (``replace``: U+FFFD, ``ignore``, ``backslashreplace``)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if errors != "strict":
            return data.decode("utf-8", errors)
        line = data.count(b"\n", 0, exc.start) + 1
        bad = data[exc.start:exc.end]
        tip = ("; pass --input-errors replace to read invalid bytes as U+FFFD, or --input-errors ignore to drop "
               "them, or --input-errors backslashreplace to keep them as \\xNN") if hint else ""
        raise InputError(f"{source}: not valid UTF-8 at byte {exc.start} (line {line}, "
                         f"byte {bad.hex(' ')}: {exc.reason}){tip}") from None


def read_stdin_bytes() -> bytes:
    stream = sys.stdin
    if stream is None:
        raise InputError("no text given and stdin is closed")
    buffer = getattr(stream, "buffer", None)
    if buffer is None:  # a StringIO stand-in (tests that replace sys.stdin)
        return stream.read().encode("utf-8", "surrogateescape")
    return buffer.read()


def read_file_bytes(path: str) -> bytes:
    """A file's bytes as they are, or ``-`` for stdin; a missing file is one line."""
    if path == "-":
        return read_stdin_bytes()
    from .._io import read_bytes

    return read_bytes(path)


def read_text_file(path: str, errors: str = "strict", *, hint: bool = True) -> str:
    """A text file (``-``: stdin) as exact UTF-8 (see :func:`decode_utf8`)."""
    return decode_utf8(read_file_bytes(path), "<stdin>" if path == "-" else path, errors, hint=hint)


def _checked_arg(text: str, errors: str, hint: bool) -> str:
    """A TEXT argument: Python decodes argv bytes that are not UTF-8 to lone surrogates;
    they are the same error as on stdin."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        try:
            data = text.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:
            data = text.encode("utf-8", "surrogatepass")
        return decode_utf8(data, "the TEXT argument", errors, hint=hint)
    return text


def read_text_arg(args: argparse.Namespace) -> str:
    """The text of ``TEXT`` / ``--file F`` (``-`` for stdin) / stdin, for every command.

    Files and stdin are read as bytes and decoded exactly; ``--input-errors replace``
    (where the command has it) reads invalid bytes as U+FFFD."""
    errors = getattr(args, "input_errors", "strict")
    hint = hasattr(args, "input_errors")
    path = getattr(args, "file", None)
    if path is not None:
        return read_text_file(path, errors, hint=hint)
    if getattr(args, "text", None) is not None:
        return _checked_arg(args.text, errors, hint)
    return decode_utf8(read_stdin_bytes(), "<stdin>", errors, hint=hint)


def _int_at_least(least: int) -> Any:
    """An argparse type: an integer of at least ``least``."""

    def parse(value: str) -> int:
        try:
            n = int(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{value!r} is not an integer") from None
        if n < least:
            raise argparse.ArgumentTypeError(f"must be at least {least}, not {n}")
        return n

    return parse


positive_int = _int_at_least(1)
non_negative_int = _int_at_least(0)


# ------------------------------------------------------------------ output
def print_json(obj: Any, *, indent: int | None = None) -> None:
    """Print ``obj`` as JSON (UTF-8 kept as is) for ``--json``."""
    print(json.dumps(obj, ensure_ascii=False, indent=indent))


def write_lines(lines: list[str]) -> None:
    """Write report lines to stdout, without leading blank lines, ending in one newline."""
    sys.stdout.write("\n".join(lines).lstrip("\n") + "\n")


def print_error(message: object) -> None:
    """The one-line error every command ends with on failure."""
    text = " ".join(str(message).splitlines())
    print(f"tokenforge: error: {text}", file=sys.stderr)


# ------------------------------------------------------------------ errors in CLI terms
def _flag(options: set[str], name: str) -> str | None:
    flag = "--" + name.replace("_", "-")
    return flag if flag in options else None


def _quote(value: str) -> str:
    import shlex

    return shlex.quote(value)


_SPECIAL_HINT = re.compile(
    r"Pass allowed_special=\{(?P<tok>.+?)\} \(or 'all'\) to encode it as a special token, "
    r"or disallowed_special=\(\) to encode it as ordinary text\."
)
_ERRORS_REPLACE = re.compile(r"use errors='replace' to get U\+FFFD")
_ERRORS_TRAIN = re.compile(r"pass errors='replace' or errors='ignore' to (\w+) anyway")
_LOSSY = re.compile(r"pass allow_lossy=True, or --allow-lossy, to")
_PATTERN = re.compile(r"pass pattern= \(e\.g\. ([^)]*)\)")
_GET_ENCODING = re.compile(r"use get_encoding\(\) with one of")
_NO_RANKS = re.compile(r"has no ranks in tokenforge; pass a tokenizer")
_ARG_MUST = re.compile(r"(^|; )([a-z][a-z0-9_]*)(?= must )")
_KWARG = re.compile(r"(?i)\b(pass|use|set|with|or)\s+([a-z][a-z0-9_]*)=((?:'[^']*'|\{[^}]*\}|\([^)]*\)|[\w.+-]+))")


def cli_message(message: str, options: set[str]) -> str:
    """A library error message with its Python hints (``allowed_special={...}``,
    ``errors='replace'``) rewritten as the flags of the command that failed
    (``options``: its option strings). The library's messages stay as they are."""

    def special(m: re.Match) -> str:
        import ast

        try:
            toks = sorted(ast.literal_eval("{" + m.group("tok") + "}"))
        except (ValueError, SyntaxError):
            toks = []
        parts = []
        if "--allowed-special" in options and toks:
            parts.append(f"pass --allowed-special {_quote(','.join(toks))} (or --allowed-special all) "
                         "to encode it as a special token")
        if "--ordinary-special" in options:
            parts.append("pass --ordinary-special to encode it as ordinary text")
        text = ", or ".join(parts)
        return (text[:1].upper() + text[1:] + ".") if text else ""

    message = _SPECIAL_HINT.sub(special, message)
    if "--errors" in options:
        message = _ERRORS_REPLACE.sub("pass --errors replace to get U+FFFD", message)
    else:
        message = _ERRORS_REPLACE.sub("the text cannot be shown exactly", message)
    # a trainer's errors= is the input's: --input-errors where the command has it
    flag = "--input-errors" if "--input-errors" in options else "--errors" if "--errors" in options else None
    if flag is not None:
        message = _ERRORS_TRAIN.sub(rf"pass {flag} replace or {flag} ignore to \1 anyway", message)
    message = _LOSSY.sub("pass --allow-lossy to", message)
    message = _PATTERN.sub(
        lambda m: "the CLI reads only the rank files it recognises by sha256; for another one, save it once with "
                  f"its split pattern ({m.group(1)}): python -c 'import tokenforge; tokenforge.load(\"ranks.tiktoken\", "
                  "pattern=\"cl100k\").save(\"tokenizer.json\")', then pass -t tokenizer.json",
        message,
    )
    message = _GET_ENCODING.sub("pass -t with one of", message)
    if "--encodings" in options:
        message = _NO_RANKS.sub("has no ranks in tokenforge; give --encodings a tokenizer file", message)

    def kwarg(m: re.Match) -> str:  # any other hint: "pass name=value" -> "pass --name value", if the command has it
        flag = _flag(options, m.group(2))
        if flag is None:
            return m.group(0)
        value = m.group(3)
        if re.fullmatch(r"'[\w.+-]+'", value):  # 'replace' -> replace: a shell word needs no quotes
            value = value[1:-1]
        return f"{m.group(1)} {flag}" if value == "True" else f"{m.group(1)} {flag} {value}"

    def arg_must(m: re.Match) -> str:  # "val_fraction must be ...": the argument, as the command's flag
        flag = _flag(options, m.group(2))
        return m.group(1) + flag if flag else m.group(0)

    return _ARG_MUST.sub(arg_must, _KWARG.sub(kwarg, message))

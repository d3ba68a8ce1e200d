"""The analysis commands: ``compare``, ``explain``, ``glitch``, ``heal``, ``extend``, ``bpb`` and ``chat``.

Each parses its arguments, calls :mod:`tokenforge.analysis` (or :mod:`tokenforge.chat`)
and prints a table, or JSON with ``--json``.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..errors import TokenforgeError
from ._common import (
    DEFAULT_TOKENIZER,
    open_tokenizer as _open,
    print_json,
    read_text_arg as _read,
    write_lines,
)


# ------------------------------------------------------------------ compare
def cmd_compare(args: argparse.Namespace) -> int:
    """``tokenforge compare``: print the report; ``--plot`` also writes the chart."""
    from ..analysis.compare import compare, plot

    report = compare(args.tokenizers, args.text, reference=args.reference)
    sys.stdout.write(report.format(args.format))
    if args.plot:
        try:
            out = plot(report, args.plot)
        except ImportError as exc:
            raise TokenforgeError(str(exc)) from None
        print(f"wrote {out}", file=sys.stderr)
    return 0


def register_compare(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``tokenforge compare TOKENIZERS... [--text FILES...] [--format F] [--plot OUT] [--reference LABEL]``."""
    from ..analysis.compare import FORMATS, TRAIN_KINDS

    c = subparsers.add_parser(
        "compare",
        help="compare tokenizers on texts: bytes/token, chars/token, tokens/word, UNK rate, cost vs English",
        description="Compare tokenizers on the same texts (Rust et al., 2021; Petrov et al., 2023). A tokenizer is an encoding "
                    "name, a tokenizer file, or train:KIND[:VOCAB_SIZE] (KIND: " + ", ".join(TRAIN_KINDS) +
                    ") trained now on the embedded corpus. Without --text: the shipped UDHR sample "
                    "(articles 26-30 in 15 languages).",
    )
    c.add_argument("tokenizers", nargs="+", metavar="TOKENIZER",
                   help="encoding name, tokenizer file, or train:KIND[:VOCAB_SIZE]")
    c.add_argument("--text", nargs="+", default=None, metavar="FILE",
                   help="text files (one text each) or .tsv files with lang and text columns "
                        "(default: the shipped UDHR sample)")
    c.add_argument("--format", default="table", choices=FORMATS, help="output format (default: table)")
    c.add_argument("--plot", default=None, metavar="OUT.png", help="also save a bar chart of bytes/token (needs matplotlib)")
    c.add_argument("--reference", default="en", metavar="LABEL",
                   help="text to divide token counts by (default: en); '' for none")
    c.set_defaults(func=cmd_compare)
    return c


# ------------------------------------------------------------------ explain
def cmd_explain(args: argparse.Namespace) -> int:
    from ..analysis.explain import (
        NUMBER_ENCODINGS,
        explain,
        format_indent_costs,
        format_number_splits,
        indent_costs,
        number_splits,
    )

    out: dict[str, Any] = {}
    text_lines: list[str] = []
    if args.text is not None:
        tok = _open(args.tokenizer)
        ex = explain(tok, args.text)
        out["explain"] = ex.to_dict()
        text_lines.append(ex.render())
    if args.numbers:
        specs = args.encodings or list(NUMBER_ENCODINGS)
        rows = number_splits(args.numbers_text, specs)
        out["numbers"] = rows
        text_lines.append("\n" + format_number_splits(rows, args.numbers_text))
    if args.indent:
        specs = args.encodings or ["gpt2", "cl100k_base", "o200k_base"]
        rows = indent_costs(specs, max_spaces=args.indent)
        out["indent"] = rows
        text_lines.append("\n" + format_indent_costs(rows, args.indent))
    if not out:
        raise SystemExit("tokenforge explain: give TEXT, --numbers or --indent N")
    if args.json:
        print_json(out, indent=2)
    else:
        write_lines(text_lines)
    return 0


_cmd_explain = cmd_explain


def register_explain(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``tokenforge explain TEXT -t TOKENIZER [--json] [--numbers] [--indent N]``."""
    from ..analysis.explain import NUMBERS_TEXT

    p = subparsers.add_parser(
        "explain",
        help="show how a text is tokenized, stage by stage (normalize, pre-tokens, merges, ids)",
    )
    p.add_argument("text", nargs="?", help="text to explain")
    p.add_argument("--tokenizer", "-t", default="cl100k_base", help="encoding name or tokenizer file")
    p.add_argument("--numbers", action="store_true", help="show digit splitting under gpt2, cl100k and llama3 (Singh & Strouse, 2024)")
    p.add_argument("--numbers-text", default=NUMBERS_TEXT, help=f"text for --numbers (default {NUMBERS_TEXT!r})")
    p.add_argument("--indent", type=int, nargs="?", const=16, default=None, metavar="N",
                   help="show the token cost of 0..N leading spaces (default N=16)")
    p.add_argument("--encodings", nargs="+", default=None, metavar="ENC",
                   help="encodings for --numbers/--indent (names, files, or a pattern name like llama3)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_explain)
    return p


# ------------------------------------------------------------------ glitch
def cmd_glitch(args: argparse.Namespace) -> int:
    from .._io import read_text
    from ..analysis.glitch import find_glitch_tokens, format_reachability, reachability
    from ..models.bpe import BPE

    tok = _open(args.tokenizer)
    texts = [read_text(f) for f in args.text] if args.text else []
    out: dict[str, Any] = {}
    lines: list[str] = []
    if texts:
        rep = find_glitch_tokens(
            tok, texts, expected=args.expected, rare_max=args.rare_max, check_reach=not args.no_reach
        )
        d = rep.to_dict()
        d["candidates"] = d["candidates"][: args.top]
        out["corpus"] = d
        lines.append(rep.render(args.top))
    if args.unreachable or not texts:
        if not isinstance(tok.model, BPE):
            raise TokenforgeError("--unreachable needs a byte-level BPE tokenizer")
        reach = reachability(tok)
        out["reachability"] = {"counts": reach.counts(), **{k: v[: args.top] for k, v in reach.to_dict().items() if k in ("unreachable", "undetermined")}}
        lines.append("")
        lines.append(format_reachability(reach, args.top))
    if args.json:
        print_json(out, indent=2)
    else:
        write_lines(lines)
    return 0


_cmd_glitch = cmd_glitch


def register_glitch(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``tokenforge glitch -t TOKENIZER --text FILES [--top N] [--json] [--unreachable]``."""
    p = subparsers.add_parser(
        "glitch",
        help="find glitch-token candidates: tokens a corpus never/rarely produces, and unreachable tokens",
    )
    p.add_argument("--tokenizer", "-t", default="cl100k_base", help="encoding name or tokenizer file")
    p.add_argument("--text", nargs="+", default=None, metavar="FILE",
                   help="corpus files to count tokens on (without: only the reachability scan)")
    p.add_argument("--top", type=int, default=30, help="how many candidates to list (default 30)")
    p.add_argument("--expected", default="rank", choices=["rank", "uniform"],
                   help="expected-count model (default: rank band mean)")
    p.add_argument("--rare-max", type=int, default=2, help="a token seen at most this often is a candidate (default 2)")
    p.add_argument("--unreachable", action="store_true", help="also scan every token for reachability")
    p.add_argument("--no-reach", action="store_true", help="do not check the candidates' reachability")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_glitch)
    return p


# ------------------------------------------------------------------ bpb, heal, extend, chat
def cmd_bpb(args: argparse.Namespace) -> int:
    from ..analysis.metrics import bits_per_byte, bits_per_byte_from_token_nll

    text = _read(args)
    if args.token_nll is not None:
        from .._io import read_text

        values = [float(x) for x in read_text(args.token_nll).replace(",", " ").split()]
        bpb = bits_per_byte_from_token_nll(values, text)
        total = sum(values)
    else:
        bpb = bits_per_byte(args.nll, text)
        total = args.nll
    nbytes = len(text.encode("utf-8", "surrogatepass"))
    if args.json:
        print_json({"bits_per_byte": bpb, "total_nll_nats": total, "utf8_bytes": nbytes})
    else:
        print(f"bits per byte  {bpb:.6f}  ({total:g} nats over {nbytes} UTF-8 bytes of the original text)")
    return 0


def cmd_heal(args: argparse.Namespace) -> int:
    from ..analysis.healing import heal

    tok = _open(args.tokenizer)
    prompt = _read(args)
    ids = tok.encode(prompt, disallowed_special=())
    result = heal(tok, ids, max_backoff=args.max_backoff)
    if args.json:
        print_json(result.to_dict())
        return 0
    print(f"prompt ids     {ids}")
    print(f"kept ids       {result.kept_ids}")
    print(f"removed ids    {result.removed_ids}")
    print(f"prefix bytes   {result.prefix_bytes!r} (generation must start with these)")
    print(f"satisfiable    {result.satisfiable} ({result.single_token} token(s) start with the prefix)")
    return 0


def cmd_extend(args: argparse.Namespace) -> int:
    from ..analysis.extend import extend

    tok = _open(args.tokenizer)
    texts: list[str] = []
    for path in args.test or ():
        from .._io import read_text

        texts.extend(read_text(path).splitlines())
    new, report = extend(tok, args.tokens, kind=args.kind, test_texts=texts, reuse_holes=args.reuse_holes)
    if args.out:
        new.save(args.out)
    if args.json:
        print_json(report.to_dict(), indent=2)
    else:
        print(report)
        if args.out:
            print(f"written to {args.out}")
    return 0


def cmd_chat(args: argparse.Namespace) -> int:
    from ..chat import ChatML, Llama3

    tok = _open(args.tokenizer)
    raw = sys.stdin.read() if args.messages == "-" else open(args.messages, encoding="utf-8").read()
    try:
        messages = json.loads(raw)
    except json.JSONDecodeError as exc:
        from ..errors import FileFormatError

        raise FileFormatError(f"messages must be a JSON list of {{role, content}} objects ({exc.msg})",
                              path=args.messages, line=exc.lineno) from None
    template = (ChatML if args.template == "chatml" else Llama3)(tok)
    ids = template.render(messages, add_generation_prompt=args.generation_prompt)
    if args.json:
        print_json({"ids": ids, "text": template.render_text(messages, add_generation_prompt=args.generation_prompt)})
    else:
        print(" ".join(map(str, ids)))
    return 0


def register(sub: Any, default_tokenizer: str = DEFAULT_TOKENIZER) -> None:
    """Add ``bpb``, ``heal``, ``extend`` and ``chat`` to ``sub``."""
    b = sub.add_parser("bpb", help="bits per byte from a total (or per-token) negative log-likelihood in nats")
    b.add_argument("text", nargs="?", help="the text the loss was measured on (default: stdin)")
    b.add_argument("--file", "-f", help="read the text from a file")
    group = b.add_mutually_exclusive_group(required=True)
    group.add_argument("--nll", type=float, help="total NLL in nats")
    group.add_argument("--token-nll", help="a file of per-token NLLs in nats (whitespace or comma separated)")
    b.add_argument("--json", action="store_true")
    b.set_defaults(func=cmd_bpb)

    h = sub.add_parser("heal", help="token healing: back off the prompt's last tokens, print the prefix to regenerate")
    h.add_argument("text", nargs="?", help="the prompt (default: stdin)")
    h.add_argument("--file", "-f")
    h.add_argument("--tokenizer", "-t", default=default_tokenizer)
    h.add_argument("--max-backoff", type=int, default=1)
    h.add_argument("--json", action="store_true")
    h.set_defaults(func=cmd_heal)

    e = sub.add_parser("extend", help="add tokens to a vocabulary, with a regression report")
    e.add_argument("tokens", nargs="+", help="the new tokens")
    e.add_argument("--tokenizer", "-t", default=default_tokenizer)
    e.add_argument("--kind", choices=["special", "lexical"], default="special")
    e.add_argument("--test", action="append", metavar="FILE", help="texts whose encodings the report checks (lines)")
    e.add_argument("--reuse-holes", action="store_true", help="give new tokens unused ids below the largest one")
    e.add_argument("--out", help="write the extended tokenizer (native format)")
    e.add_argument("--json", action="store_true")
    e.set_defaults(func=cmd_extend)

    c = sub.add_parser("chat", help="render chat messages to ids; message text can never inject control tokens")
    c.add_argument("messages", help="a JSON file with [{\"role\": ..., \"content\": ...}, ...] ('-' for stdin)")
    c.add_argument("--tokenizer", "-t", default=default_tokenizer)
    c.add_argument("--template", choices=["chatml", "llama3"], default="chatml")
    c.add_argument("--generation-prompt", action="store_true", help="end with the assistant header")
    c.add_argument("--json", action="store_true")
    c.set_defaults(func=cmd_chat)

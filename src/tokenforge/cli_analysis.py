"""CLI commands for the analysis functions that have no command of their own module:
``encode --offsets``'s sibling ``offsets``, ``bpb``, ``heal``, ``extend`` and ``chat``.

Each follows the library one to one (``tokenforge.analysis`` and ``tokenforge.chat``)
and prints a table, or JSON with ``--json``.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def _open(spec: str) -> Any:
    from .cli import _open_tokenizer

    return _open_tokenizer(spec)


def _read(args: argparse.Namespace) -> str:
    from .cli import _read_text_arg

    return _read_text_arg(args)


def cmd_offsets(args: argparse.Namespace) -> int:
    from .analysis.offsets import encode_with_offsets

    tok = _open(args.tokenizer)
    text = _read(args)
    spans = encode_with_offsets(tok, text, disallowed_special=())
    if args.json:
        print(json.dumps([s.to_dict() for s in spans], ensure_ascii=False))
        return 0
    print(f"{'id':>8}  {'chars':>11}  {'bytes':>11}  text")
    for s in spans:
        flag = " (part of a character)" if s.partial else (" (special)" if s.special else "")
        print(f"{s.id:>8}  {s.start:>5}-{s.end:<5}  {s.byte_start:>5}-{s.byte_end:<5}  {text[s.start:s.end]!r}{flag}")
    return 0


def cmd_bpb(args: argparse.Namespace) -> int:
    from .analysis.metrics import bits_per_byte, bits_per_byte_from_token_nll

    text = _read(args)
    if args.token_nll is not None:
        from ._io import read_text

        values = [float(x) for x in read_text(args.token_nll).replace(",", " ").split()]
        bpb = bits_per_byte_from_token_nll(values, text)
        total = sum(values)
    else:
        bpb = bits_per_byte(args.nll, text)
        total = args.nll
    nbytes = len(text.encode("utf-8", "surrogatepass"))
    if args.json:
        print(json.dumps({"bits_per_byte": bpb, "total_nll_nats": total, "utf8_bytes": nbytes}))
    else:
        print(f"bits per byte  {bpb:.6f}  ({total:g} nats over {nbytes} UTF-8 bytes of the original text)")
    return 0


def cmd_heal(args: argparse.Namespace) -> int:
    from .analysis.healing import heal

    tok = _open(args.tokenizer)
    prompt = _read(args)
    ids = tok.encode(prompt, disallowed_special=())
    result = heal(tok, ids, max_backoff=args.max_backoff)
    if args.json:
        print(json.dumps(result.to_dict(), ensure_ascii=False))
        return 0
    print(f"prompt ids     {ids}")
    print(f"kept ids       {result.kept_ids}")
    print(f"removed ids    {result.removed_ids}")
    print(f"prefix bytes   {result.prefix_bytes!r} (generation must start with these)")
    print(f"satisfiable    {result.satisfiable} ({result.single_token} token(s) start with the prefix)")
    return 0


def cmd_extend(args: argparse.Namespace) -> int:
    from .analysis.extend import extend

    tok = _open(args.tokenizer)
    texts: list[str] = []
    for path in args.test or ():
        from ._io import read_text

        texts.extend(read_text(path).splitlines())
    new, report = extend(tok, args.tokens, kind=args.kind, test_texts=texts, reuse_holes=args.reuse_holes)
    if args.out:
        new.save(args.out)
    if args.json:
        print(json.dumps(report.to_dict(), ensure_ascii=False, indent=2))
    else:
        print(report)
        if args.out:
            print(f"written to {args.out}")
    return 0


def cmd_chat(args: argparse.Namespace) -> int:
    from .chat import ChatML, Llama3

    tok = _open(args.tokenizer)
    raw = sys.stdin.read() if args.messages == "-" else open(args.messages, encoding="utf-8").read()
    try:
        messages = json.loads(raw)
    except json.JSONDecodeError as exc:
        from .errors import FileFormatError

        raise FileFormatError(f"messages must be a JSON list of {{role, content}} objects ({exc.msg})",
                              path=args.messages, line=exc.lineno) from None
    template = (ChatML if args.template == "chatml" else Llama3)(tok)
    ids = template.render(messages, add_generation_prompt=args.generation_prompt)
    if args.json:
        print(json.dumps({"ids": ids, "text": template.render_text(messages, add_generation_prompt=args.generation_prompt)},
                         ensure_ascii=False))
    else:
        print(" ".join(map(str, ids)))
    return 0


def register(sub: argparse._SubParsersAction, default_tokenizer: str) -> None:
    o = sub.add_parser("offsets", help="each token with its span in the text (code points and UTF-8 bytes)")
    o.add_argument("text", nargs="?", help="text (default: stdin)")
    o.add_argument("--file", "-f", help="read the text from a file ('-' for stdin)")
    o.add_argument("--tokenizer", "-t", default=default_tokenizer)
    o.add_argument("--json", action="store_true")
    o.set_defaults(func=cmd_offsets)

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

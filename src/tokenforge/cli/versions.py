"""``tokenforge fingerprint``, ``tokenforge diff`` and ``tokenforge transplant``: tokenizer versions.

``fingerprint`` prints the hash of the parts that decide a tokenizer's ids
(:mod:`tokenforge.fingerprint`); ``diff`` compares two tokenizers part by part,
vocabulary by vocabulary and line by line on text
(:mod:`tokenforge.analysis.diff`): whether a cache, a draft model or prepared
data made with one stays valid for the other; ``transplant`` writes each token
of B as ids of A (:mod:`tokenforge.analysis.transplant`), the map that moves a
model's embeddings from one tokenizer to the other.
"""

from __future__ import annotations

import argparse
from typing import Any

from ._common import (
    TOKENIZER_HELP,
    add_input_errors_arg,
    add_parser,
    add_tokenizer_arg,
    open_tokenizer,
    positive_int,
    print_json,
    read_text_file,
    tokenizer_label,
)

__all__ = ["cmd_diff", "cmd_fingerprint", "cmd_transplant", "register_diff", "register_fingerprint",
           "register_transplant"]


def cmd_fingerprint(args: argparse.Namespace) -> int:
    tok = open_tokenizer(args.tokenizer)
    fp = tok.fingerprint()
    parts = tok.fingerprint_parts()
    if args.json:
        out: dict[str, Any] = {"name": tokenizer_label(args.tokenizer, tok), "fingerprint": fp}
        if args.parts:
            out["parts"] = parts
        print_json(out)
        return 0
    print(fp)
    if args.parts:
        width = max(map(len, parts))
        for part, h in parts.items():
            print(f"  {part:<{width}}  {h}")
    return 0


def register_fingerprint(sub: Any) -> None:
    c = add_parser(sub, "fingerprint", help="print the hash of the parts that decide a tokenizer's ids",
                   description=(
                       "Print the fingerprint of a tokenizer: tf1: and a sha256 of the parts that decide its ids "
                       "(normalizer, pre-tokenizer, model, added and special tokens, post-processor, decoder, "
                       "chat template, truncation, padding). Its name, file format and the tokenforge version "
                       "do not enter it: two tokenizers with the same fingerprint give the same ids."),
                   examples=[
                       "tokenforge fingerprint -t cl100k",
                       "tokenforge fingerprint -t tokenizer.json --parts",
                       "tokenforge fingerprint -t gpt2 --json",
                   ])
    add_tokenizer_arg(c)
    c.add_argument("--parts", action="store_true", help="also print the hash of each part")
    c.add_argument("--json", action="store_true", help="print JSON")
    c.set_defaults(func=cmd_fingerprint)


def cmd_diff(args: argparse.Namespace) -> int:
    from ..analysis.diff import diff

    tok_a = open_tokenizer(args.a)
    tok_b = open_tokenizer(args.b)
    texts = None
    if args.text:
        texts = [read_text_file(f, args.input_errors) for f in args.text]
    report = diff(tok_a, tok_b, texts, sample=max(args.top, 1),
                  names=[tokenizer_label(args.a, tok_a), tokenizer_label(args.b, tok_b)])
    if args.json:
        print_json(report.to_dict())
    else:
        print(report.format(top=args.top))
    return 0


def register_diff(sub: Any) -> None:
    c = add_parser(sub, "diff", help="what differs between two tokenizers, and whether their ids do",
                   description=(
                       "Compare two tokenizers: the fingerprint parts that differ, the vocabularies (tokens with "
                       "the same bytes, and of those the ones at the same id; tokens only in one), the special "
                       "tokens and their ids, and, on text, the share of texts and lines encoded to the same "
                       "ids, with the first differing token of lines that differ. This is the check that tells "
                       "whether a KV/prefix cache, a draft model or prepared data stays valid after a "
                       "tokenizer change."),
                   examples=[
                       "tokenforge diff gpt2 r50k_base",
                       "tokenforge diff p50k_base p50k_edit --json",
                       "tokenforge diff old/tokenizer.json new/tokenizer.json --text my_corpus.txt --top 10",
                   ])
    c.add_argument("a", metavar="A", help="the first tokenizer: " + TOKENIZER_HELP)
    c.add_argument("b", metavar="B", help="the second tokenizer, in the same forms")
    c.add_argument("--text", nargs="+", metavar="FILE",
                   help="text files to compare the ids on, each also line by line "
                        "(default: the embedded corpus's held-out text)")
    add_input_errors_arg(c)
    c.add_argument("--top", type=positive_int, default=5, metavar="N",
                   help="how many examples of each kind to show")
    c.add_argument("--json", action="store_true", help="print the report as JSON")
    c.set_defaults(func=cmd_diff)


def cmd_transplant(args: argparse.Namespace) -> int:
    import dataclasses

    from ..analysis.transplant import transplant_map

    tok_a = open_tokenizer(args.a)
    tok_b = open_tokenizer(args.b)
    m = dataclasses.replace(transplant_map(tok_a, tok_b), a=tokenizer_label(args.a, tok_a),
                            b=tokenizer_label(args.b, tok_b))
    m.write(args.output)
    summary = m.summary()
    if args.json:
        print_json({**summary, "output": args.output})
        return 0
    print(f"{summary['tokens_b']:,} tokens of {summary['b']} in terms of {summary['a']} -> {args.output}")
    print(f"  same bytes as one token of A  {summary['same']:,}")
    print(f"  composed of tokens of A       {summary['composed']:,} (mean {summary['mean_parts']} parts)")
    print(f"  special tokens                {summary['special']:,} "
          f"({summary['special_without_match']:,} without the same special token in A)")
    print(f"  not spelled exactly by A      {summary['inexact']:,}")
    return 0


def register_transplant(sub: Any) -> None:
    c = add_parser(sub, "transplant", help="write each token of B as ids of A, for moving embeddings between tokenizers",
                   description=(
                       "For every token of B: its bytes, and either the one token of A with the same bytes "
                       "(kind same: copy its embedding) or A's canonical encoding of those bytes (kind composed: "
                       "average or combine those embeddings, as ZeTT and mergekit's tokensurgeon do); special "
                       "tokens map to A's special token of the same string, if any. Written as JSON Lines, "
                       "one object per token of B: id, token, bytes (hex), text, kind, ids_a, exact."),
                   examples=[
                       "tokenforge transplant gpt2 cl100k -o gpt2_to_cl100k.jsonl",
                       "tokenforge transplant gpt2 tokenizer.json -o map.jsonl --json",
                   ])
    c.add_argument("a", metavar="A", help="the tokenizer the model has now (its ids are the parts): " + TOKENIZER_HELP)
    c.add_argument("b", metavar="B", help="the new tokenizer (one line per token), in the same forms")
    c.add_argument("-o", "--output", required=True, metavar="MAP.jsonl", help="the JSON Lines file to write")
    c.add_argument("--json", action="store_true", help="print the summary as JSON")
    c.set_defaults(func=cmd_transplant)

"""``tokenforge info``: sizes, specials, pattern and hashes; ``--accounting``: the five vocab sizes;
``tokenforge list``: every name ``-t`` takes and the file formats it reads."""

from __future__ import annotations

import argparse
from typing import Any

from ._common import (
    add_parser,
    add_tokenizer_arg,
    open_tokenizer as _open_tokenizer,
    positive_int as _positive_int,
    print_json,
    tokenizer_label,
)


def active_backend() -> str:
    """``"native"`` or ``"python"``: the code path encoding runs on now.

    :func:`tokenforge.backend` where the library has it; otherwise the same answer
    from :mod:`tokenforge._native` (the compiled core, unless it is missing or
    ``TOKENFORGE_BACKEND=python``)."""
    import tokenforge

    backend = getattr(tokenforge, "backend", None)
    if callable(backend):
        return str(backend())
    from .. import _native

    return "python" if _native.core() is None else "native"


def cmd_info(args: argparse.Namespace) -> int:
    from ..formats.native import PARTS, part_hash

    if getattr(args, "backend", False):
        name = active_backend()
        if args.json:
            print_json({"backend": name})
        else:
            print(name)
        return 0
    tok = _open_tokenizer(args.tokenizer)
    if getattr(args, "accounting", False):
        return accounting_main(tok, args)
    if getattr(args, "specials", False):
        return specials_main(tok, args)
    if getattr(args, "residues", None) is not None:
        return residues_main(tok, args)
    data = tok.to_dict()

    def kind(part):
        d = data[part]
        return None if d is None else d.get("type")

    merges = getattr(tok.model, "merges", None)
    info = {
        "name": tok.name or tokenizer_label(args.tokenizer, tok),
        "model": type(tok.model).__name__,
        "plan": tok.plan,
        "tokens": len(tok),
        "model_tokens": tok.model.vocab_size,
        "added_tokens": {t.content: t.id for t in tok.added_tokens},
        "special_tokens": dict(tok.special_tokens),
        "n_vocab": tok.n_vocab,
        "merges": None if merges is None else len(merges),
        "pattern_name": tok.pattern_name,
        "pattern": tok.pattern,
        "normalizer": kind("normalizer"),
        "pre_tokenizer": kind("pre_tokenizer"),
        "post_processor": kind("post_processor"),
        "decoder": kind("decoder"),
        "sha256": {part: part_hash(data[part]) for part in PARTS},
    }
    if args.json:
        print_json(info, indent=2)
        return 0
    print(f"name            {info['name'] or '(unnamed)'}")
    print(f"model           {info['model']} (plan: {tok.plan})")
    print(f"tokens          {info['tokens']:,} ({info['model_tokens']:,} in the model, {len(info['added_tokens']):,} added, "
          f"{len(tok.special_tokens):,} special)")
    print(f"n_vocab         {info['n_vocab']:,} (largest id + 1)")
    if info["merges"] is not None:
        print(f"merges          {info['merges']:,}")
    if info["pattern"] is not None:
        print(f"pattern         {info['pattern_name'] or 'custom'}: {info['pattern']}")
    for part in ("normalizer", "pre_tokenizer", "post_processor", "decoder"):
        print(f"{part:<15} {info[part]}")
    print("special tokens  " + (", ".join(f"{t}={i}" for t, i in info["special_tokens"].items()) or "none"))
    for part, h in info["sha256"].items():
        print(f"sha256 {part:<15} {h}")
    return 0



def register_accounting_args(parser: argparse.ArgumentParser) -> None:
    """Add ``--accounting --pad-to N --d-model D --untied`` to ``tokenforge info``."""
    g = parser.add_argument_group("vocab accounting")
    g.add_argument("--accounting", action="store_true",
                   help="print the five vocab sizes: mergeable, special, len, max id + 1 (and holes), embedding rows")
    g.add_argument("--pad-to", type=_positive_int, default=1, metavar="N",
                   help="pad embedding rows to a multiple of N (default 1: no padding)")
    g.add_argument("--d-model", type=_positive_int, default=None, metavar="D",
                   help="hidden size: also print the embedding parameter count (default: none, not printed)")
    g.add_argument("--untied", action="store_true",
                   help="input and output embeddings are separate: 2·V·d parameters instead of V·d "
                        "(default: tied, V·d)")


def accounting_main(tok: Any, args: argparse.Namespace) -> int:
    """Print the accounting of ``tok`` for ``tokenforge info --accounting`` (``--json`` for JSON)."""
    from ..analysis.accounting import vocab_accounting

    a = vocab_accounting(tok, pad_to=args.pad_to, d_model=args.d_model, tied=not args.untied)
    if getattr(args, "json", False):
        print_json(a.to_dict(), indent=2)
    else:
        print(a.format())
    return 0


def specials_main(tok: Any, args: argparse.Namespace) -> int:
    """``tokenforge info --specials``: every control-looking token and what text holding it gives."""
    from ..analysis.exposure import special_exposure

    rows = special_exposure(tok)
    if getattr(args, "json", False):
        print_json([r.to_dict() for r in rows], indent=2)
        return 0
    print(f"{'token':<28} {'id':>8}  {'defined as':<15} in text")
    for r in rows:
        what = {"guarded": "an error unless encode --allowed-special names it", "text": "ordinary text",
                "REACHABLE": f"REACHABLE: plain text gives {list(r.ids_from_text)}"}[r.in_text]
        print(f"{r.token:<28} {r.id:>8}  {r.source:<15} {what}")
    reachable = sum(r.in_text == "REACHABLE" for r in rows)
    print(f"{reachable} of {len(rows)} control-looking tokens can be produced by plain text")
    return 0


def residues_main(tok: Any, args: argparse.Namespace) -> int:
    """``tokenforge info --residues [CORPUS...]``: tokens the merges build but encoding rarely emits."""
    from ..analysis.residues import residues_of_files
    from ..errors import InvalidArgumentError

    paths = args.residues
    if not paths:
        from ..corpus import embedded_corpus

        paths = [str(lang.train) for lang in embedded_corpus()]
    if not 0.0 <= args.threshold <= 1.0:
        raise InvalidArgumentError(f"--threshold is a share of uses, between 0 and 1; got {args.threshold}")
    report = residues_of_files(tok, paths, workers=args.workers)
    if tok.name is None:
        report = type(report)(tokenizer_label(args.tokenizer, tok), report.uses, report.pieces,
                              report.distinct_pieces, report.tokens)
    if args.json:
        print_json(report.to_dict(args.threshold, args.top), indent=2)
    else:
        print(report.format(args.threshold, args.top))
    return 0


def register_residues_args(parser: argparse.ArgumentParser) -> None:
    """Add ``--residues [CORPUS...] --threshold S --top N --workers N`` to ``tokenforge info``."""
    g = parser.add_argument_group("vocabulary residues (byte-level BPE by rank)")
    g.add_argument("--residues", nargs="*", default=None, metavar="CORPUS",
                   help="count per token how often encoding CORPUS files emits it and how often it is only an "
                        "intermediate merge product; print the top residues (default corpus: the embedded one)")
    g.add_argument("--threshold", type=float, default=0.0, metavar="S",
                   help="a residue's emitted share, emitted / (emitted + intermediate), is at most S "
                        "(default 0: never emitted)")
    g.add_argument("--top", type=_positive_int, default=20, metavar="N", help="residues to list (default 20)")
    g.add_argument("--workers", type=_positive_int, default=1, metavar="N",
                   help="processes that count pre-tokens (default 1)")


def register(sub: Any) -> None:
    i = add_parser(sub, "info", help="vocab size, specials, pattern and hashes", examples=[
        "tokenforge info -t o200k",
        "tokenforge info -t gpt-4 --json",
        "tokenforge info -t tokenizer.json --specials",
        "tokenforge info -t cl100k --accounting --pad-to 128 --d-model 4096",
        "tokenforge info --backend            # native or python",
        "tokenforge info -t gpt2 --residues corpus/*.txt --threshold 0.01",
    ])
    add_tokenizer_arg(i)
    i.add_argument("--json", action="store_true", help="print JSON")
    i.add_argument("--specials", action="store_true",
                   help="list the control tokens ([CLS], <s>, <|endoftext|>, ...) and whether plain text can produce them")
    i.add_argument("--backend", action="store_true",
                   help="print only the active backend: native (the compiled core) or python "
                        "(the reference code; TOKENFORGE_BACKEND=python forces it)")
    i.set_defaults(func=cmd_info)
    register_accounting_args(i)  # --accounting --pad-to N --d-model D --untied
    register_residues_args(i)  # --residues [CORPUS...] --threshold S --top N --workers N


def known_names() -> dict[str, Any]:
    """What ``tokenforge list`` shows: each shipped encoding (its short form, split pattern
    and the OpenAI models that use it, tiktoken's ``encoding_for_model`` table) and the
    file formats ``-t`` reads."""
    from ..encodings import ENCODINGS, MODEL_PREFIX_TO_ENCODING, MODEL_TO_ENCODING
    from ..formats import FORMAT_DESCRIPTIONS, LOAD_FORMATS
    from ..pretokenizers import pattern_name

    short = {enc: s for enc in ENCODINGS for s in [enc.removesuffix("_base")] if enc.endswith("_base")}
    encodings = []
    for name, spec in ENCODINGS.items():
        encodings.append({
            "name": name,
            "short_form": short.get(name),
            "pattern": (pattern_name(spec.pattern) or spec.pattern) if spec.pattern else None,
            "models": [m for m, e in MODEL_TO_ENCODING.items() if e == name and m != name],
            "model_prefixes": [p for p, e in MODEL_PREFIX_TO_ENCODING.items() if e == name],
        })
    return {"encodings": encodings, "formats": {f: FORMAT_DESCRIPTIONS[f] for f in LOAD_FORMATS}}


def cmd_list(args: argparse.Namespace) -> int:
    import textwrap

    names = known_names()
    if args.json:
        print_json(names, indent=2)
        return 0
    print("encodings (-t NAME; tokenforge.get_encoding):")
    for e in names["encodings"]:
        extra = [f"short form {e['short_form']}"] if e["short_form"] else []
        extra += [f"pattern {e['pattern']}"] if e["pattern"] else ["ByT5's bytes, built by code"]
        print(f"  {e['name']:<15} {'; '.join(extra)}")
    print("OpenAI model names (-t MODEL; tokenforge.encoding_for_model):")
    for e in names["encodings"]:
        models = e["models"] + [p + "*" for p in e["model_prefixes"]]
        if models:
            lines = textwrap.wrap(", ".join(models), 100 - 18, break_on_hyphens=False, break_long_words=False)
            print(f"  {e['name']:<15} " + ("\n" + " " * 18).join(lines))
    print("files (-t PATH, or -t FORMAT:PATH to name the format; tokenforge.load):")
    for fmt, what in names["formats"].items():
        print(f"  {fmt:<15} {what}")
    return 0


def register_list(sub: Any) -> None:
    lst = add_parser(sub, "list", help="every name -t takes (encodings, short forms, model names) and the file formats",
                     examples=["tokenforge list", "tokenforge list --json"])
    lst.add_argument("--json", action="store_true", help="print JSON")
    lst.set_defaults(func=cmd_list)

"""The analysis commands: ``compare``, ``explain``, ``glitch``, ``heal``, ``covers``, ``extend``, ``bpb`` and ``chat``.

Each parses its arguments, calls :mod:`tokenforge.analysis` (or :mod:`tokenforge.chat`)
and prints a table, or JSON with ``--json``.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..errors import TokenforgeError
from ._common import (
    DEFAULT_TOKENIZER,
    InputError,
    add_input_errors_arg,
    add_parser,
    add_tokenizer_arg,
    non_negative_int,
    open_tokenizer as _open,
    positive_int,
    print_json,
    read_file_bytes,
    read_text_arg as _read,
    read_text_file,
    decode_utf8,
    resolve_tokenizer,
    write_lines,
)
from .encode import add_text_args

# ------------------------------------------------------------------ compare
def read_parallel_tsv(path: str, errors: str = "strict") -> dict[str, str]:
    """``{lang: text}`` of a parallel ``.tsv`` (see :func:`tokenforge.analysis.compare.read_parallel_tsv`),
    read as exact UTF-8 with the command's ``--input-errors``."""
    from ..analysis.compare import read_parallel_tsv as parse

    return parse(path, read_text_file(path, errors))


def read_compare_texts(files: list[str], errors: str = "strict") -> dict[str, str]:
    """``{label: text}`` of ``compare --text FILES``: a ``.tsv`` gives one text per ``lang``,
    any other file one text labelled by its name without the suffix. Files are read as
    bytes and decoded exactly, so bytes/token counts the bytes of the file as given
    (a CRLF stays two bytes)."""
    from pathlib import Path

    out: dict[str, str] = {}
    for f in files:
        p = Path(f)
        if p.suffix.lower() == ".tsv":
            for lang, text in read_parallel_tsv(f, errors).items():
                out[lang if lang not in out else f"{p.stem}:{lang}"] = text
            continue
        text = read_text_file(f, errors)
        out[p.stem if p.stem not in out else f] = text
    return out


def cmd_compare(args: argparse.Namespace) -> int:
    """``tokenforge compare``: print the report; ``--plot`` also writes the chart."""
    import dataclasses

    from ..analysis.compare import compare, plot

    specs = [t if t.startswith(("train:", "patches:")) else resolve_tokenizer(t) for t in args.tokenizers]
    texts = None
    if args.text:
        texts = read_compare_texts(args.text, args.input_errors)
    report = compare(specs, texts, reference=args.reference)
    if args.text:
        report = dataclasses.replace(report, source=", ".join(args.text))
    # A model name is shown as typed, with its encoding: "gpt-4 (cl100k_base)".
    from ..encodings import ENCODINGS

    wanted = [f"{typed} ({spec})" if spec in ENCODINGS and typed.lower().replace("-", "_") not in spec
              else (spec if spec in ENCODINGS else old)
              for old, typed, spec in zip(report.tokenizers, args.tokenizers, specs)]
    if wanted != list(report.tokenizers) and len(set(wanted)) == len(wanted):
        labels = dict(zip(report.tokenizers, wanted))
        report = dataclasses.replace(
            report, tokenizers=tuple(wanted),
            rows=tuple(dataclasses.replace(r, tokenizer=labels[r.tokenizer]) for r in report.rows))
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

    c = add_parser(
        subparsers, "compare",
        help="compare tokenizers on texts: bytes/token, chars/token, tokens/word, UNK rate and bytes, cost vs English",
        description="Compare tokenizers on the same texts (Rust et al., 2021; Petrov et al., 2023). A tokenizer is "
                    "what -t takes (an encoding or model name, a tokenizer file or folder) or train:KIND[:VOCAB_SIZE] "
                    "(KIND: " + ", ".join(TRAIN_KINDS) + ") trained now on the embedded corpus, or a byte patching scheme "
                    "of tokenizer-free models, whose row shows bytes per patch: patches:fixedP (MegaByte, P bytes), "
                    "patches:entropy[:θ] or patches:relative[:θ] (BLT's entropy patches; see tokenforge patch). "
                    "Without --text: the "
                    "shipped UDHR sample (articles 26-30 in 15 languages).\n\n"
                    "Text files are read as they are (bytes/token counts the file's bytes, CRLF included). "
                    "A .tsv file is a parallel sample: a header row with the tab-separated columns 'lang' and "
                    "'text' (others are ignored), then one row per sentence, e.g.\n\n"
                    "  lang<TAB>text\n  en<TAB>All human beings are born free.\n  de<TAB>Alle Menschen sind frei "
                    "geboren.\n\nRows of one language are joined with newlines; --reference names the lang "
                    "(or file name) that ratios divide by.",
        examples=[
            "tokenforge compare gpt2 cl100k o200k",
            "tokenforge compare gpt-4 gpt-4o --text parallel.tsv --format markdown",
            "tokenforge compare cl100k train:bpe:8000 --text en.txt de.txt --reference en",
            "tokenforge compare cl100k patches:entropy patches:fixed4   # bytes per patch beside bytes per token",
        ],
    )
    c.add_argument("tokenizers", nargs="+", metavar="TOKENIZER",
                   help="encoding or model name, tokenizer file or folder, train:KIND[:VOCAB_SIZE], "
                        "or patches:fixedP / patches:entropy[:θ] / patches:relative[:θ]")
    c.add_argument("--text", nargs="+", default=None, metavar="FILE",
                   help="text files (one text each, labelled by file name) or parallel .tsv files with the "
                        "columns lang and text (default: the shipped UDHR sample)")
    c.add_argument("--format", default="table", choices=FORMATS, help="output format")
    c.add_argument("--plot", default=None, metavar="OUT.png",
                   help="also save a bar chart of bytes/token (needs matplotlib; default: no chart); bars of "
                        "unknown-dominated rows (over half the bytes in [UNK]) are hatched and do not set the axis")
    c.add_argument("--reference", default="en", metavar="LABEL",
                   help="text (lang or file name) to divide token counts by; '' for none")
    add_input_errors_arg(c)
    c.set_defaults(func=cmd_compare)
    return c


# ------------------------------------------------------------------ explain
def _explain_spec(spec: str) -> str:
    """An ``--encodings`` entry: what ``-t`` takes, or a split-pattern name such as ``llama3``."""
    from ..errors import UnknownEncodingError
    from ..pretokenizers import PATTERNS

    try:
        return resolve_tokenizer(spec)
    except UnknownEncodingError:
        if spec in PATTERNS:
            return spec
        raise


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
    text = args.text
    if text is None and (args.file is not None or not (args.numbers or args.indent)):
        text = _read(args)  # --file, else stdin, as the other commands
    if args.html is not None:
        if text is None:
            raise InputError("--html needs a text: TEXT, --file or stdin")
        from ..web.static_page import write_static_html

        columns: dict[str, Any] = {}
        for spec in [args.tokenizer, *(args.encodings or [])]:
            name, tok = spec, _open(spec)
            columns.setdefault(getattr(tok, "name", None) or name, tok)
        if len(columns) > 4:
            raise InputError(f"--html shows 1 to 4 tokenizers side by side (-t and --encodings), not {len(columns)}")
        path = write_static_html(columns, text, args.html)
        print(f"wrote {path} ({', '.join(columns)})")
        return 0
    if text is not None:
        tok = _open(args.tokenizer)
        ex = explain(tok, text)
        out["explain"] = ex.to_dict()
        text_lines.append(ex.render())
    if args.numbers:
        specs = [_explain_spec(e) for e in args.encodings] if args.encodings else list(NUMBER_ENCODINGS)
        rows = number_splits(args.numbers_text, specs)
        out["numbers"] = rows
        text_lines.append("\n" + format_number_splits(rows, args.numbers_text))
    if args.indent:
        specs = [_explain_spec(e) for e in args.encodings] if args.encodings else ["gpt2", "cl100k_base", "o200k_base"]
        rows = indent_costs(specs, max_spaces=args.indent)
        out["indent"] = rows
        text_lines.append("\n" + format_indent_costs(rows, args.indent))
    if args.json:
        print_json(out, indent=2)
    else:
        write_lines(text_lines)
    return 0


_cmd_explain = cmd_explain


def register_explain(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``tokenforge explain [TEXT] [--file F] -t TOKENIZER [--json] [--numbers] [--indent N]``."""
    from ..analysis.explain import NUMBERS_TEXT

    p = add_parser(
        subparsers, "explain",
        help="show how a text is tokenized, stage by stage (normalize, pre-tokens, merges, ids)",
        description="Show how a text is tokenized, stage by stage: the normalized text, the pre-tokens, "
                    "what the model does with each (BPE: every merge with its rank, or for SentencePiece BPE "
                    "the score of the piece it makes; Unigram: the Viterbi path with each piece's "
                    "log-probability) and the ids. Byte-level vocabularies are shown as the text they stand for.",
        examples=[
            "tokenforge explain 'hello world' -t cl100k",
            "echo 'naïve café' | tokenforge explain -t tokenizer.json",
            "tokenforge explain --numbers --encodings gpt2 cl100k llama3",
            "tokenforge explain --indent 8 --json",
            "tokenforge explain 'naïve 東京 🎉' -t cl100k --encodings o200k --html tokens.html",
        ],
    )
    add_text_args(p, "text to explain (without TEXT, --file, --numbers or --indent: stdin)")
    add_tokenizer_arg(p)
    p.add_argument("--numbers", action="store_true",
                   help="show digit splitting under gpt2, cl100k and llama3 (Singh & Strouse, 2024)")
    p.add_argument("--numbers-text", default=NUMBERS_TEXT, metavar="TEXT", help="text for --numbers")
    p.add_argument("--indent", type=positive_int, nargs="?", const=16, default=None, metavar="N",
                   help="show the token cost of 0..N leading spaces (default: off; N defaults to 16)")
    p.add_argument("--encodings", nargs="+", default=None, metavar="ENC",
                   help="encodings for --numbers/--indent: what -t takes, or a split-pattern name like llama3 "
                        "(default: gpt2 cl100k_base llama3 for --numbers, gpt2 cl100k_base o200k_base for --indent)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--html", metavar="OUT.html", default=None,
                   help="write the token page for TEXT as one self-contained HTML file that opens offline: "
                        "-t and any --encodings side by side, each token's id, bytes and BPE merges")
    p.set_defaults(func=cmd_explain)
    return p


# ------------------------------------------------------------------ glitch
def cmd_glitch(args: argparse.Namespace) -> int:
    from ..analysis.glitch import find_glitch_tokens, format_reachability, reachability
    from ..models.bpe import BPE

    tok = _open(args.tokenizer)
    texts = [read_text_file(f, args.input_errors) for f in args.text] if args.text else []
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
            raise TokenforgeError("--unreachable (and glitch without --text) needs a byte-level BPE tokenizer")
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
    p = add_parser(
        subparsers, "glitch",
        help="find glitch-token candidates: tokens a corpus never/rarely produces, and unreachable tokens",
        examples=[
            "tokenforge glitch -t gpt2 --top 10                  # unreachable tokens only",
            "tokenforge glitch -t cl100k --text corpus/*.txt --unreachable --json",
        ],
    )
    add_tokenizer_arg(p)
    p.add_argument("--text", nargs="+", default=None, metavar="FILE",
                   help="corpus files to count tokens on (default: none, only the reachability scan)")
    p.add_argument("--top", type=positive_int, default=30, help="how many candidates to list")
    p.add_argument("--expected", default="rank", choices=["rank", "uniform"],
                   help="expected-count model: rank (the mean count of tokens of a similar rank) or uniform")
    p.add_argument("--rare-max", type=non_negative_int, default=2,
                   help="a token seen at most this often is a candidate")
    p.add_argument("--unreachable", action="store_true", help="also scan every token for reachability")
    p.add_argument("--no-reach", action="store_true", help="do not check the candidates' reachability")
    add_input_errors_arg(p)
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_glitch)
    return p


# ------------------------------------------------------------------ bpb, heal, extend, chat
def _token_nll(path: str) -> list[float]:
    """The per-token NLLs of ``--token-nll FILE``: numbers separated by whitespace or commas."""
    import math

    values = []
    for n, item in enumerate(read_text_file(path, hint=False).replace(",", " ").split()):
        try:
            v = float(item)
        except ValueError:
            raise InputError(f"{path}: value {n} is {item!r}, not a number") from None
        if not math.isfinite(v):
            raise InputError(f"{path}: value {n} is {item!r}, not a finite number")
        values.append(v)
    return values


def cmd_bpb(args: argparse.Namespace) -> int:
    from ..analysis.metrics import bits_per_byte, bits_per_byte_from_token_nll

    text = _read(args)
    if args.token_nll is not None:
        values = _token_nll(args.token_nll)
        bpb = bits_per_byte_from_token_nll(values, text)
        total = sum(values)
    else:
        bpb = bits_per_byte(args.nll, text)
        total = args.nll
    nbytes = len(text.encode("utf-8"))
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


def cmd_covers(args: argparse.Namespace) -> int:
    from ..analysis.canonical import _require_byte_level
    from ..analysis.covers import count_covers, covers
    from ..analysis.explain import render_bytes, token_bytes
    from ..analysis.healing import TokenIndex

    tok = _open(args.tokenizer)
    prefix = _read(args).encode("utf-8")
    if not prefix:
        raise InputError("the prefix is empty: give a non-empty text")
    if args.canonical:
        _require_byte_level(tok)
    index = TokenIndex(tok)
    shown: list[tuple[int, ...]] = []
    total = 0
    if args.canonical:
        for seq in covers(tok, prefix, canonical=True, index=index):
            total += 1
            if len(shown) < args.limit:
                shown.append(seq)
    else:
        total = count_covers(tok, prefix, index=index)
        for seq in covers(tok, prefix, index=index):
            if len(shown) >= args.limit:
                break
            shown.append(seq)
    rows = [{"ids": list(seq), "tokens": [render_bytes(token_bytes(tok, i)) for i in seq]}
            for seq in shown]
    if args.json:
        print_json({"prefix": render_bytes(prefix), "canonical": args.canonical, "covers": total, "shown": rows})
        return 0
    kind = "canonical covers" if args.canonical else "covers"
    print(f"{kind} of {render_bytes(prefix)}: {total}")
    for row in rows:
        print(f"  {row['ids']}  {' | '.join(row['tokens'])}")
    if total > len(rows):
        print(f"  ... {total - len(rows)} more (--limit)")
    return 0


def cmd_extend(args: argparse.Namespace) -> int:
    from ..analysis.extend import extend

    if args.out:  # before any work
        from ..formats import check_overwrite, format_for_path

        check_overwrite(args.out, format_for_path(args.out), args.overwrite)
    tok = _open(args.tokenizer)
    texts: list[str] = []
    for path in args.test or ():
        texts.extend(read_text_file(path, args.input_errors).splitlines())
    new, report = extend(tok, args.tokens, kind=args.kind, test_texts=texts, reuse_holes=args.reuse_holes)
    if args.out:
        new.save(args.out, overwrite=args.overwrite)
    if args.json:
        print_json(report.to_dict(), indent=2)
    else:
        print(report)
        if args.out:
            print(f"written to {args.out}")
    return 0


def cmd_chat(args: argparse.Namespace) -> int:
    import json

    from ..chat import ChatML, Llama3

    tok = _open(args.tokenizer)
    source = "<stdin>" if args.messages == "-" else args.messages
    raw = decode_utf8(read_file_bytes(args.messages), source, hint=False)
    try:
        messages = json.loads(raw)
    except json.JSONDecodeError as exc:
        from ..errors import FileFormatError

        raise FileFormatError(f"messages must be a JSON list of {{role, content}} objects ({exc.msg})",
                              path=source, line=exc.lineno) from None
    template = (ChatML if args.template == "chatml" else Llama3)(tok)
    ids = template.render(messages, add_generation_prompt=args.generation_prompt)
    if args.json:
        print_json({"ids": ids, "text": template.render_text(messages, add_generation_prompt=args.generation_prompt)})
    else:
        print(" ".join(map(str, ids)))
    return 0


def register(sub: Any, default_tokenizer: str = DEFAULT_TOKENIZER) -> None:
    """Add ``bpb``, ``heal``, ``covers``, ``extend`` and ``chat`` to ``sub``."""
    b = add_parser(sub, "bpb", help="bits per byte from a total (or per-token) negative log-likelihood in nats",
                   description="Bits per byte from a total (or per-token) negative log-likelihood in nats: "
                               "NLL / (UTF-8 bytes of the text x ln 2), independent of the tokenizer "
                               "(Gao et al., 2020, The Pile).",
                   examples=["tokenforge bpb 'abcdefgh' --nll 4.0      # 0.721348",
                             "tokenforge bpb -f heldout.txt --token-nll losses.txt --json"])
    b.add_argument("text", nargs="?", help="the text the loss was measured on (default: read --file, else stdin)")
    b.add_argument("--file", "-f", metavar="F",
                   help="read the text from a file, its bytes as they are ('-' for stdin; default: none)")
    group = b.add_mutually_exclusive_group(required=True)
    group.add_argument("--nll", type=float, help="total NLL in nats (default: none; this or --token-nll is required)")
    group.add_argument("--token-nll", metavar="FILE",
                       help="a file of per-token NLLs in nats, whitespace or comma separated "
                            "(default: none; this or --nll is required)")
    b.add_argument("--json", action="store_true", help="print JSON")
    b.set_defaults(func=cmd_bpb)

    h = add_parser(sub, "heal", help="token healing: back off the prompt's last tokens, print the prefix to regenerate",
                   examples=["tokenforge heal 'The word is hel' -t cl100k",
                             "tokenforge heal -f prompt.txt -t gpt2 --max-backoff 2 --json"])
    add_text_args(h, "the prompt")
    add_tokenizer_arg(h, default_tokenizer)
    h.add_argument("--max-backoff", type=non_negative_int, default=1, metavar="K",
                   help="how many trailing tokens may be removed")
    h.add_argument("--json", action="store_true", help="print JSON")
    h.set_defaults(func=cmd_heal)

    c = add_parser(sub, "covers", help="the token sequences whose bytes cover a prefix (Phan et al., 2024)",
                   description="The token sequences whose bytes cover a text prefix: every token but the last "
                               "lies inside the prefix, the last may run past its end (Phan et al., 2024, "
                               "arXiv 2410.09303). Prints how many there are and the first --limit of them.",
                   examples=["tokenforge covers ' hel' -t gpt2 --canonical",
                             "tokenforge covers 'über' -t cl100k --limit 5 --json"])
    add_text_args(c, "the prefix")
    add_tokenizer_arg(c, default_tokenizer)
    c.add_argument("--canonical", action="store_true",
                   help="keep only canonical sequences, those that are how their own bytes encode "
                        "(byte-level BPE; default: all)")
    c.add_argument("--limit", type=non_negative_int, default=20, metavar="N", help="how many covers to print")
    c.add_argument("--json", action="store_true", help="print JSON")
    c.set_defaults(func=cmd_covers)

    e = add_parser(sub, "extend", help="add tokens to a vocabulary, with a regression report",
                   examples=["tokenforge extend '<|tool|>' -t cl100k --test prompts.txt --out extended.json",
                             "tokenforge extend ' tokenforge' -t gpt2 --kind lexical --json"])
    e.add_argument("tokens", nargs="+", help="the new tokens")
    add_tokenizer_arg(e, default_tokenizer)
    e.add_argument("--kind", choices=["special", "lexical"], default="special",
                   help="special: matched before splitting, never produced by ordinary text unless allowed; "
                        "lexical: an ordinary vocabulary entry")
    e.add_argument("--test", action="append", metavar="FILE",
                   help="a file whose lines the report encodes before and after (repeatable; default: none)")
    e.add_argument("--reuse-holes", action="store_true", help="give new tokens unused ids below the largest one")
    e.add_argument("--out", metavar="PATH", help="write the extended tokenizer; its name picks the format, as "
                                                "for train --out (default: not written)")
    e.add_argument("--overwrite", action="store_true", help="replace an existing --out file")
    add_input_errors_arg(e)
    e.add_argument("--json", action="store_true", help="print the report as JSON")
    e.set_defaults(func=cmd_extend)

    c = add_parser(sub, "chat", help="render chat messages to ids; message text can never inject control tokens",
                   examples=["tokenforge chat messages.json -t tokenizer.json --template chatml   "
                             "# a tokenizer with <|im_start|> and <|im_end|>",
                             "echo '[{\"role\": \"user\", \"content\": \"hi\"}]' | tokenforge chat - -t tok.json "
                             "--generation-prompt --json"])
    c.add_argument("messages", help="a JSON file with [{\"role\": ..., \"content\": ...}, ...] ('-' for stdin)")
    add_tokenizer_arg(c, default_tokenizer)
    c.add_argument("--template", choices=["chatml", "llama3"], default="chatml",
                   help="chat format: chatml (<|im_start|>role ... <|im_end|>) or llama3 (<|start_header_id|> ...)")
    c.add_argument("--generation-prompt", action="store_true", help="end with the assistant header")
    c.add_argument("--json", action="store_true", help="print the ids and the rendered text as JSON")
    c.set_defaults(func=cmd_chat)

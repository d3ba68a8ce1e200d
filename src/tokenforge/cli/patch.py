"""``tokenforge patch``: cut text into the byte patches of tokenizer-free models, or train
the byte model that entropy patching uses (:mod:`tokenforge.analysis.patching`)."""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any

from ._common import add_parser, positive_int, print_json, read_file_bytes, read_stdin_bytes, readable, write_lines


def _threshold(value: str) -> float:
    try:
        x = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number") from None
    if not math.isfinite(x):
        raise argparse.ArgumentTypeError(f"must be a finite number of bits, not {value}")
    return x


def _input_bytes(args: argparse.Namespace) -> bytes:
    """TEXT, ``--file F`` (``-``: stdin) or stdin, as bytes: patches are cut in bytes, so a
    file that is not valid UTF-8 is measured as it is."""
    if args.file is not None:
        return read_file_bytes(args.file)
    if args.text is not None:
        return args.text.encode("utf-8", "surrogateescape")
    return read_stdin_bytes()


def _train(args: argparse.Namespace) -> int:
    from ..analysis.patching import train_byte_model
    from ..errors import InvalidArgumentError

    if not args.out:
        raise InvalidArgumentError("--train needs --out MODEL.json: where to write the trained byte model")
    model = train_byte_model((read_file_bytes(f) for f in args.train), order=args.order, min_count=args.min_count)
    model.save(args.out)
    if args.json:
        print_json({"out": args.out, "order": model.order, "min_count": model.min_count,
                    "contexts": model.n_contexts, "trained_bytes": model.to_dict()["trained_bytes"]})
    else:
        print(f"wrote {args.out}: {model!r}")
    return 0


def cmd_patch(args: argparse.Namespace) -> int:
    from ..analysis.patching import (
        DEFAULT_RELATIVE_THRESHOLD,
        DEFAULT_THRESHOLD,
        ByteNgramModel,
        default_model,
        entropy_boundaries,
        fixed_patches,
    )

    if args.train:
        return _train(args)
    data = _input_bytes(args)
    model = ByteNgramModel.load(args.model) if args.model else default_model()
    model_name = args.model or "the embedded corpus"
    entropies = model.entropies(data)
    if args.fixed:
        spans = fixed_patches(data, args.fixed)
        how = f"fixed, {args.fixed} bytes (MegaByte)"
        threshold = None
    else:
        threshold = args.threshold
        if threshold is None:
            threshold = DEFAULT_THRESHOLD if args.rule == "global" else DEFAULT_RELATIVE_THRESHOLD
        starts = entropy_boundaries(entropies, threshold, args.rule)
        s = [i for i, flag in enumerate(starts.tolist()) if flag]
        spans = list(zip(s, s[1:] + [len(data)]))
        cond = "H(x_t) > θ" if args.rule == "global" else "H(x_t) − H(x_t−1) > θ"
        how = f"entropy, {args.rule} rule: a patch starts where {cond}, θ = {threshold:g} bits (BLT)"
    ent = [round(float(h), 4) for h in entropies.tolist()]
    if args.json:
        print_json({
            "bytes": len(data), "patches": len(spans),
            "bytes_per_patch": (len(data) / len(spans)) if spans else None,
            "scheme": "fixed" if args.fixed else "entropy", "rule": None if args.fixed else args.rule,
            "threshold": threshold, "size": args.fixed, "model": model_name, "model_order": model.order,
            "spans": [{"start": a, "end": b, "text": data[a:b].decode("utf-8", "replace"),
                       "hex": data[a:b].hex(), "entropies": ent[a:b]} for a, b in spans],
        })
        return 0
    lines = [f"patches: {how}",
             f"model: byte {model.order}-gram (interpolated Kneser–Ney) trained on {model_name}; entropies in bits",
             "",
             "|".join(readable(data[a:b]) for a, b in spans),
             ""]
    if args.entropies:
        width = max((len(readable(data[a:b])) for a, b in spans), default=4)
        lines.append(f"{'start':>6}  {'bytes':>5}  {'patch':<{width}}  H(x_t) per byte")
        for a, b in spans:
            lines.append(f"{a:>6}  {b - a:>5}  {readable(data[a:b]):<{width}}  "
                         + " ".join(f"{h:.2f}" for h in ent[a:b]))
        lines.append("")
    per = f"{len(data) / len(spans):.2f}" if spans else "–"
    lines.append(f"{len(data):,} bytes, {len(spans):,} patches, {per} bytes/patch")
    write_lines(lines)
    sys.stdout.flush()
    return 0


def register(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``tokenforge patch [TEXT] [--file F] [--model M] [--threshold T] [--rule R] [--fixed P] [--json]``
    and ``tokenforge patch --train CORPUS... --out MODEL.json``."""
    from ..analysis.patching import DEFAULT_MIN_COUNT, DEFAULT_ORDER, DEFAULT_RELATIVE_THRESHOLD, DEFAULT_THRESHOLD, RULES

    p = add_parser(
        subparsers, "patch",
        help="cut text into byte patches (MegaByte's fixed size, BLT's entropy patches) or train the byte model",
        description="Cut the UTF-8 bytes of a text into the patches of tokenizer-free models: every P bytes "
                    "(--fixed P; Yu et al., 2023, MegaByte), or where a small next-byte model is unsure of the "
                    "next byte (Pagnoni et al., 2024, Byte Latent Transformer): with --rule global a patch starts "
                    "at byte t when the entropy H(x_t) of the model's prediction exceeds --threshold; with --rule "
                    "relative when H(x_t) − H(x_t−1) does. The model is a byte n-gram model with interpolated "
                    "Kneser–Ney smoothing, trained on the embedded corpus unless --model names one trained with "
                    "--train.\n\n"
                    "Output: the patches separated by |, and with --entropies each patch with the entropy (bits) "
                    "at each of its bytes.",
        examples=[
            "tokenforge patch 'In 1948, the General Assembly adopted the Declaration.'",
            "tokenforge patch --file article.txt --rule relative --threshold 1.5 --entropies",
            "tokenforge patch 'hello world' --fixed 4",
            "tokenforge patch --train corpus/*.txt --out bytes.json --order 5 && tokenforge patch --model bytes.json 'text'",
            "tokenforge compare cl100k patches:entropy patches:fixed4   # bytes per patch per language",
        ],
    )
    p.add_argument("text", nargs="?", default=None, metavar="TEXT", help="text to cut (default: --file or stdin)")
    p.add_argument("--file", "-f", default=None, metavar="F", help="read the bytes of file F ('-': stdin)")
    p.add_argument("--model", "-m", default=None, metavar="M",
                   help="byte model file written by --train (default: trained on the embedded corpus)")
    p.add_argument("--rule", default="global", choices=RULES,
                   help="global: H(x_t) > θ; relative: H(x_t) − H(x_t−1) > θ (BLT's approximate monotonic rule)")
    p.add_argument("--threshold", "-T", type=_threshold, default=None, metavar="θ",
                   help=f"entropy threshold in bits (default: {DEFAULT_THRESHOLD} for global, "
                        f"{DEFAULT_RELATIVE_THRESHOLD} for relative)")
    p.add_argument("--fixed", type=positive_int, default=None, metavar="P",
                   help="fixed patches of P bytes instead of entropy patches (default: entropy patches)")
    p.add_argument("--entropies", "-e", action="store_true", help="also list each patch with its bytes' entropies")
    p.add_argument("--json", action="store_true", help="print the patches, their bytes and entropies as JSON")
    p.add_argument("--train", nargs="+", default=None, metavar="CORPUS",
                   help="train a byte model on these files (read as bytes) and write it to --out")
    p.add_argument("--out", "-o", default=None, metavar="MODEL.json", help="where --train writes the model")
    p.add_argument("--order", type=positive_int, default=DEFAULT_ORDER,
                   help="--train: n-gram order, 1..8 (a byte is predicted from the order − 1 bytes before it)")
    p.add_argument("--min-count", type=positive_int, default=DEFAULT_MIN_COUNT,
                   help="--train: drop contexts seen fewer times than this")
    p.set_defaults(func=cmd_patch)
    return p

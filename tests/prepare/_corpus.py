"""A small corpus with the inputs that break tokenizers, written in every input format."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

DOCS = [
    "Hello, world! The quick brown fox.",
    "naïve café — déjà vu; ﬃ ligature and e\u0301 combining",
    "吾輩は猫である。名前はまだ無い。 中文分词没有空格的文本",
    "emoji 🙂👩‍👩‍👧 flags 🇫🇷 and ZWJ",
    "  leading and trailing spaces  \n\ttabs\r\nCRLF\n\n",
    "مرحبا بالعالم שלום עולם",
    "special strings are text here: <|endoftext|> <s> </s> [CLS] [SEP] <|fim_prefix|>",
    "control \x00\x01\x1b[0m chars and a lone surrogate \ud800 inside",
    "x" * 3000,
    "def f(x):\n    return x ** 2  # code\n" * 20,
    "1234567890 " * 50,
    "",  # empty documents are skipped
    "the end.",
]


def nonempty() -> list[str]:
    return [d for d in DOCS if d]


def write_jsonl(path: Path, docs=DOCS, field: str = "text", opener=open) -> Path:
    with opener(path, "wt", encoding="utf-8") as f:
        for d in docs:
            f.write(json.dumps({field: d, "id": len(d)}) + "\n")
    return path


def write_gz(path: Path, docs=DOCS) -> Path:
    return write_jsonl(path, docs, opener=gzip.open)


def write_delimited(path: Path, docs=DOCS, delim: str = "<|endoftext|>") -> Path:
    # documents that hold the delimiter themselves cannot be written this way
    path.write_text(delim.join(d for d in docs if delim not in d and "\ud800" not in d), encoding="utf-8")
    return path


def expected(tok, docs, seps) -> list[int]:
    out: list[int] = []
    for d in docs:
        if d:
            out += list(seps.bos) + tok.encode(d, disallowed_special=(), add_special_tokens=False) + list(seps.eot)
    return out

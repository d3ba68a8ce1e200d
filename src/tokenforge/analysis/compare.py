"""Compare tokenizers on the same texts: fertility per language and the cost relative to English.

For every tokenizer × text this reports the figures of Rust et al. (2021) (UTF-8
bytes/token, chars/token, tokens/word with the word splitter named, UNK rate,
total tokens; see :mod:`tokenforge.analysis.metrics`) and, when one text is
English, each text's token count divided by the English token count under the
same tokenizer. On parallel text, that ratio is what a user of the language
pays per unit of meaning relative to an English user, and how much less of
the context window they get (Petrov et al., 2023). On texts that are
not translations of each other the ratio only compares lengths.

A tokenizer is named by a spec:

* an encoding name (``gpt2``, ``cl100k_base``, ``o200k_base``, ...);
* a tokenizer file, anything :func:`tokenforge.load` reads;
* ``train:KIND[:VOCAB_SIZE]``: trained now on the training half of the
  embedded corpus (:func:`tokenforge.corpus.embedded_corpus`), KIND one of
  ``bpe`` (byte-level, GPT-2 split pattern), ``unigram``, ``wordpiece``,
  ``spm-bpe``; VOCAB_SIZE defaults to 4096. Training takes about a second.

Texts are files (one text per file, labelled by file name without the
suffix), a ``.tsv`` parallel sample with ``lang`` and ``text`` columns (rows of
one language are joined with newlines), or, by default, the shipped UDHR
sample: articles 26–30 of the Universal Declaration of Human Rights in 15
languages (:func:`udhr_sample`, ``data/udhr/SOURCES.md``).

>>> r = compare(["gpt2", "o200k_base"], {"en": "All human beings are born free.", "zh": "人人生而自由。"})
>>> [(row.tokenizer, row.text, row.metrics.tokens, round(row.ratio, 2)) for row in r.rows]
[('gpt2', 'en', 7, 1.0), ('o200k_base', 'en', 7, 1.0), ('gpt2', 'zh', 11, 1.57), ('o200k_base', 'zh', 5, 0.71)]
"""

from __future__ import annotations

import csv
import io
import json
import os
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from ..errors import (
    ArgumentTypeError,
    FileFormatError,
    InvalidArgumentError,
    MissingDependencyError,
    TokenforgeError,
)
from .metrics import WHITESPACE, TextMetrics, WordSplitter, measure

__all__ = [
    "FORMATS",
    "TRAIN_KINDS",
    "CompareReport",
    "CompareRow",
    "compare",
    "plot",
    "read_parallel_tsv",
    "resolve_tokenizer",
    "udhr_sample",
]

FORMATS = ("table", "markdown", "csv", "json")
TRAIN_KINDS = ("bpe", "unigram", "wordpiece", "spm-bpe")
DEFAULT_TRAIN_VOCAB = 4096


# ------------------------------------------------------------------ inputs
def _read_exact(p: Path) -> str:
    """A UTF-8 text file as given: ``Path.read_text`` would turn CR LF into LF, and the
    byte counts are of the file's bytes."""
    data = p.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise FileFormatError(f"not valid UTF-8 at byte {exc.start} ({exc.reason})", path=str(p), line=line) from None


def read_parallel_tsv(path: str | os.PathLike) -> dict[str, str]:
    """``{lang: text}`` from a tab-separated file with ``lang`` and ``text`` columns.

    Rows of one language are joined with ``"\\n"`` in file order; languages
    keep the order of their first row.
    """
    p = Path(path)
    raw = _read_exact(p)
    reader = csv.reader(io.StringIO(raw, newline=""), delimiter="\t", quoting=csv.QUOTE_NONE)
    header = next(reader, None)
    if header is None or "lang" not in header or "text" not in header:
        raise FileFormatError("a parallel .tsv needs a header row with 'lang' and 'text' columns", path=str(p), line=1)
    li, ti = header.index("lang"), header.index("text")
    out: dict[str, list[str]] = {}
    for n, row in enumerate(reader, start=2):
        if not row:
            continue
        if len(row) <= max(li, ti):
            raise FileFormatError(f"expected {len(header)} tab-separated fields, found {len(row)}", path=str(p), line=n)
        out.setdefault(row[li], []).append(row[ti])
    if not out:
        raise FileFormatError("no rows after the header", path=str(p))
    return {lang: "\n".join(parts) for lang, parts in out.items()}


def udhr_sample() -> dict[str, str]:
    """The shipped parallel sample: UDHR articles 26–30 in 15 languages, ``{lang: text}``.

    English first, then zh, ja, ko, ar, he, hi, th, ru, el, de, fr, es, sw, am.

    >>> s = udhr_sample()
    >>> list(s)[:4], len(s)
    (['en', 'zh', 'ja', 'ko'], 15)
    >>> s["en"].startswith("Everyone has the right to education.")
    True
    """
    path = resources.files("tokenforge").joinpath("data", "udhr", "udhr_sample.tsv")
    return read_parallel_tsv(Path(str(path)))


def _load_texts(texts: Mapping[str, str] | Sequence[str | os.PathLike] | None) -> tuple[dict[str, str], str]:
    if texts is None:
        return udhr_sample(), "UDHR articles 26–30 (parallel)"
    if isinstance(texts, Mapping):
        return dict(texts), f"{len(texts)} text(s)"
    if isinstance(texts, (str, os.PathLike)):
        texts = [texts]
    out: dict[str, str] = {}
    for f in texts:
        p = Path(f)
        if not p.is_file():
            raise TokenforgeError(f"text file not found: {str(p)!r}")
        if p.suffix.lower() == ".tsv":
            for lang, text in read_parallel_tsv(p).items():
                out[lang if lang not in out else f"{p.stem}:{lang}"] = text
            continue
        text = _read_exact(p)
        label = p.stem if p.stem not in out else str(p)
        out[label] = text
    return out, ", ".join(str(f) for f in texts)


def _train(kind: str, vocab_size: int) -> Any:
    import tokenforge

    from ..corpus import embedded_corpus

    files = [lang.train for lang in embedded_corpus()]
    quiet = {"show_progress": False, "workers": 1}
    if kind == "bpe":
        tok = tokenforge.train_bpe(files, vocab_size=vocab_size, special_tokens=["<|endoftext|>"], **quiet)
    elif kind == "unigram":
        tok = tokenforge.train_unigram(files, vocab_size=vocab_size, **quiet)
    elif kind == "wordpiece":
        # As `tokenforge train --model wordpiece`: the 1000 most frequent characters, pairs seen twice.
        tok = tokenforge.train_wordpiece(files, vocab_size=vocab_size, limit_alphabet=1000, min_frequency=2, **quiet)
    else:
        tok = tokenforge.train_sentencepiece_bpe(files, vocab_size=vocab_size, **quiet)
    return tok


def resolve_tokenizer(spec: Any) -> tuple[str, Any]:
    """``(label, tokenizer)`` for an encoding name, a tokenizer file, ``train:KIND[:N]``, or a tokenizer.

    >>> label, tok = resolve_tokenizer("gpt2")
    >>> label, tok.n_vocab
    ('gpt2', 50257)
    """
    if not isinstance(spec, (str, os.PathLike)):
        if not hasattr(spec, "encode"):
            raise ArgumentTypeError(f"a tokenizer spec is a name, a path or a tokenizer, not {type(spec).__name__}")
        return (getattr(spec, "name", None) or type(spec).__name__), spec
    from ..encodings import ENCODINGS, get_encoding
    from ..io import load

    s = os.fspath(spec)
    if s in ENCODINGS:
        return s, get_encoding(s)
    if s.startswith("train:"):
        parts = s.split(":")
        kind = parts[1] if len(parts) > 1 else ""
        if kind not in TRAIN_KINDS or len(parts) > 3:
            raise TokenforgeError(f"bad spec {s!r}: use train:KIND[:VOCAB_SIZE] with KIND one of {', '.join(TRAIN_KINDS)}")
        try:
            vocab_size = int(parts[2]) if len(parts) == 3 else DEFAULT_TRAIN_VOCAB
        except ValueError:
            raise TokenforgeError(f"bad spec {s!r}: vocab size {parts[2]!r} is not an integer") from None
        return s, _train(kind, vocab_size)
    return Path(s).name, load(s)


# ------------------------------------------------------------------ report
@dataclass(frozen=True)
class CompareRow:
    """One tokenizer on one text; ``ratio`` is tokens ÷ the reference text's tokens (same tokenizer)."""

    tokenizer: str
    text: str
    metrics: TextMetrics
    ratio: float | None

    def to_dict(self) -> dict[str, Any]:
        d = {"tokenizer": self.tokenizer, "text": self.text}
        d.update(self.metrics.to_dict())
        d["ratio_to_reference"] = self.ratio
        return d


def _fmt(x: float | None, digits: int = 2, suffix: str = "") -> str:
    return "–" if x is None else f"{x:.{digits}f}{suffix}"


def _width(s: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 0 if unicodedata.combining(c) else 1 for c in s)


def _pad(s: str, w: int, right: bool) -> str:
    fill = " " * max(0, w - _width(s))
    return fill + s if right else s + fill


@dataclass(frozen=True)
class CompareReport:
    """Result of :func:`compare`: one :class:`CompareRow` per tokenizer × text.

    Rows are ordered text-major (all tokenizers on the first text, then the
    next), so tokenizers sit next to each other for each language.
    """

    tokenizers: tuple[str, ...]
    texts: tuple[str, ...]
    rows: tuple[CompareRow, ...]
    reference: str | None
    word_splitter: str
    source: str

    def row(self, tokenizer: str, text: str) -> CompareRow:
        for r in self.rows:
            if r.tokenizer == tokenizer and r.text == text:
                return r
        raise KeyError((tokenizer, text))

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "reference": self.reference,
            "word_splitter": self.word_splitter,
            "tokenizers": list(self.tokenizers),
            "texts": list(self.texts),
            "rows": [r.to_dict() for r in self.rows],
        }

    def _columns(self) -> list[tuple[str, bool]]:
        ref = f"× {self.reference}" if self.reference else None
        cols = [("text", False), ("tokenizer", False), ("bytes", True), ("tokens", True), ("bytes/token", True),
                ("chars/token", True), ("tokens/word", True), ("UNK rate", True)]
        if ref:
            cols.append((ref, True))
        return cols

    def _cells(self, r: CompareRow) -> list[str]:
        m = r.metrics
        cells = [r.text, r.tokenizer, f"{m.bytes:,}", f"{m.tokens:,}", _fmt(m.bytes_per_token),
                 _fmt(m.chars_per_token), _fmt(m.tokens_per_word),
                 _fmt(None if m.unk_rate is None else 100 * m.unk_rate, 2, "%")]
        if self.reference:
            cells.append(_fmt(r.ratio))
        return cells

    def notes(self) -> list[str]:
        """The footnotes printed under the table: denominators and what a dash means."""
        if self.word_splitter == WHITESPACE.name:
            words = (f"tokens/word: words = {WHITESPACE.description}; – where most letters are in scripts "
                     "written without spaces (Han, kana, Thai, ...), since that split counts clauses there.")
        else:
            words = f"tokens/word: words = the {self.word_splitter!r} word splitter."
        out = [
            ("bytes: UTF-8 bytes of the text as given (before normalization); tokens: without added "
             "[CLS]/<s> tokens."),
            words,
            "UNK rate: – for tokenizers without an unknown token (byte-level BPE cannot produce one).",
        ]
        if self.reference:
            out.append(f"× {self.reference}: tokens ÷ tokens of the {self.reference!r} text under the same tokenizer; "
                       f"on parallel text, the cost relative to {self.reference!r} (Petrov et al., 2023).")
        return out

    def format(self, fmt: str = "table") -> str:
        """The report as ``table`` (aligned text), ``markdown``, ``csv`` or ``json``."""
        if fmt == "json":
            return json.dumps(self.to_dict(), ensure_ascii=False, indent=2)
        if fmt == "csv":
            buf = io.StringIO()
            fields = list(self.rows[0].to_dict()) if self.rows else ["tokenizer", "text"]
            w = csv.DictWriter(buf, fieldnames=fields, lineterminator="\n")
            w.writeheader()
            for r in self.rows:
                w.writerow({k: ("" if v is None else v) for k, v in r.to_dict().items()})
            return buf.getvalue()
        cols = self._columns()
        body = [self._cells(r) for r in self.rows]
        if fmt == "markdown":
            lines = ["| " + " | ".join(c for c, _ in cols) + " |",
                     "|" + "|".join("---:" if right else "---" for _, right in cols) + "|"]
            lines += ["| " + " | ".join(cells) + " |" for cells in body]
            lines.append("")
            lines += [f"- {n}" for n in self.notes()]
            return "\n".join(lines) + "\n"
        if fmt != "table":
            raise InvalidArgumentError(f"unknown format {fmt!r}: use one of {', '.join(FORMATS)}")
        widths = [max([_width(c)] + [_width(cells[i]) for cells in body]) for i, (c, _) in enumerate(cols)]
        lines = [f"source: {self.source}", ""]
        lines.append("  ".join(_pad(c, widths[i], right) for i, (c, right) in enumerate(cols)).rstrip())
        lines.append("  ".join("-" * w for w in widths))
        prev = None
        for r, cells in zip(self.rows, body):
            if prev is not None and r.text != prev and len(self.tokenizers) > 1:
                lines.append("")
            prev = r.text
            lines.append("  ".join(_pad(c, widths[i], cols[i][1]) for i, c in enumerate(cells)).rstrip())
        lines.append("")
        lines += self.notes()
        return "\n".join(lines) + "\n"


def _find_reference(labels: Iterable[str], reference: str | None) -> str | None:
    if not reference:
        return None
    labels = list(labels)
    if reference in labels:
        return reference
    for label in labels:
        if label.split(".")[0] == reference:
            return label
    return None


def compare(
    tokenizers: Sequence[Any],
    texts: Mapping[str, str] | Sequence[str | os.PathLike] | None = None,
    *,
    reference: str | None = "en",
    word_splitter: WordSplitter | Any = None,
) -> CompareReport:
    """Measure every tokenizer on every text and relate each text to ``reference`` (Petrov et al., 2023).

    ``tokenizers`` are specs (see the module docstring) or tokenizer objects.
    ``texts`` is ``{label: text}``, a list of files, or ``None`` for the UDHR
    sample. The reference text is the one labelled ``reference`` (or whose
    label starts with ``reference + "."``, e.g. ``en.heldout``); without one,
    ratios are ``None``.
    """
    resolved = [resolve_tokenizer(t) for t in tokenizers]
    labels: list[str] = []
    for label, _ in resolved:
        base, n = label, 2
        while label in labels:
            label, n = f"{base}#{n}", n + 1
        labels.append(label)
    text_map, source = _load_texts(texts)
    ref = _find_reference(text_map, reference)
    measured: dict[tuple[str, str], TextMetrics] = {}
    for label, (_, tok) in zip(labels, resolved):
        for name, text in text_map.items():
            measured[label, name] = measure(tok, text, word_splitter=word_splitter)
    splitter = next(iter(measured.values())).word_splitter if measured else WHITESPACE.name
    rows = []
    for name in text_map:
        for label in labels:
            m = measured[label, name]
            ratio = None
            if ref is not None:
                ref_tokens = measured[label, ref].tokens
                ratio = m.tokens / ref_tokens if ref_tokens else None
            rows.append(CompareRow(label, name, m, ratio))
    return CompareReport(
        tokenizers=tuple(labels),
        texts=tuple(text_map),
        rows=tuple(rows),
        reference=ref,
        word_splitter=splitter,
        source=source,
    )


# ------------------------------------------------------------------ chart
def plot(report: CompareReport, path: str | os.PathLike, *, title: str | None = None) -> Path:
    """Save a grouped bar chart of UTF-8 bytes/token: one group per text, one bar per tokenizer.

    Needs matplotlib (``pip install 'tokenforge[plot]'``); the format follows
    the file suffix (``.png``, ``.svg``, ``.pdf``). Returns the path written.
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise MissingDependencyError(
            "tokenforge.analysis.plot needs matplotlib: pip install 'tokenforge[plot]' (or pip install matplotlib)"
        ) from None
    texts, toks = list(report.texts), list(report.tokenizers)
    n = max(1, len(toks))
    width = 0.8 / n
    fig, ax = plt.subplots(figsize=(min(12.0, max(6.0, 1.5 + 0.6 * len(texts))), 4.5), dpi=150)
    for j, tok in enumerate(toks):
        values = [report.row(tok, t).metrics.bytes_per_token or 0.0 for t in texts]
        xs = [i + (j - (n - 1) / 2) * width for i in range(len(texts))]
        ax.bar(xs, values, width=width, label=tok)
    ax.set_xticks(range(len(texts)))
    ax.set_xticklabels(texts)
    ax.set_ylabel("UTF-8 bytes per token (higher: fewer tokens)")
    ax.set_xlabel("text")
    ax.set_title(title or f"UTF-8 bytes per token — {report.source}")
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)
    ax.legend(title="tokenizer", fontsize="small")
    fig.tight_layout()
    out = Path(path)
    fig.savefig(out)
    plt.close(fig)
    return out

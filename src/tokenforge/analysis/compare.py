"""Compare tokenizers on the same texts: fertility per language and the cost relative to English.

For every tokenizer × text this reports the figures of Rust et al. (2021) (UTF-8
bytes/token, chars/token, tokens/word with the word splitter named, UNK rate,
total tokens; see :mod:`tokenforge.analysis.metrics`), the share of the text's
bytes that went into unknown tokens, and, when one text is
English, each text's token count divided by the English token count under the
same tokenizer. On parallel text, that ratio is what a user of the language
pays per unit of meaning relative to an English user, and how much less of
the context window they get (Petrov et al., 2023). On texts that are
not translations of each other the ratio only compares lengths.

A row whose text lost more than half of its bytes to unknown tokens
(:data:`~tokenforge.analysis.metrics.UNKNOWN_DOMINATED`) is marked
*unknown-dominated*: its bytes/token counts how much text each ``[UNK]``
swallowed, not how well the tokenizer compresses. The chart hatches such bars
and clips its axis to the other bars, writing the true value on a clipped bar.

A tokenizer is named by a spec:

* an encoding name (``gpt2``, ``cl100k_base``, ``o200k_base``, ...);
* a tokenizer file, anything :func:`tokenforge.load` reads;
* ``train:KIND[:VOCAB_SIZE]``: trained now on the training half of the
  embedded corpus (:func:`tokenforge.corpus.embedded_corpus`), KIND one of
  ``bpe`` (byte-level, GPT-2 split pattern), ``unigram``, ``wordpiece``,
  ``spm-bpe``; VOCAB_SIZE defaults to 4096. Training takes about a second;
* ``patches:fixedP``, ``patches:entropy[:θ]`` or ``patches:relative[:θ]``: not a
  tokenizer but a byte patching scheme of tokenizer-free models
  (:mod:`tokenforge.analysis.patching`): MegaByte's patches of ``P`` bytes, or
  BLT's entropy patches (global or approximate monotonic rule, threshold ``θ``
  in bits) under the byte n-gram model trained on the embedded corpus. Its row
  counts patches as tokens, so its bytes/token is bytes per patch, next to the
  tokenizers' bytes per token.

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
from .metrics import UNKNOWN_DOMINATED, WHITESPACE, TextMetrics, WordSplitter, measure

__all__ = [
    "FORMATS",
    "TRAIN_KINDS",
    "CompareReport",
    "CompareRow",
    "compare",
    "plot",
    "plot_figure",
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


#: The columns of a parallel ``.tsv`` (others are ignored).
TSV_COLUMNS = ("lang", "text")


def read_parallel_tsv(path: str | os.PathLike, raw: str | None = None) -> dict[str, str]:
    """``{lang: text}`` from a tab-separated file with a header row naming the columns
    ``lang`` and ``text`` (others are ignored), then one row per sentence. ``raw`` is the
    file's text when the caller has read it already.

    Rows of one language are joined with ``"\\n"`` in file order; languages
    keep the order of their first row.
    """
    p = str(path)
    if raw is None:
        raw = _read_exact(Path(path))
    reader = csv.reader(io.StringIO(raw, newline=""), delimiter="\t", quoting=csv.QUOTE_NONE)
    header = next(reader, None)
    if not header or any(c not in header for c in TSV_COLUMNS):
        found = ", ".join(repr(c) for c in header) if header else "nothing"
        missing = ", ".join(c for c in TSV_COLUMNS if not header or c not in header)
        raise FileFormatError(f"a parallel .tsv needs a tab-separated header row with the columns "
                              f"{' and '.join(TSV_COLUMNS)} (missing: {missing}; found: {found}); a file whose "
                              "name does not end in .tsv is read as one text", path=p, line=1)
    li, ti = header.index("lang"), header.index("text")
    out: dict[str, list[str]] = {}
    for n, row in enumerate(reader, start=2):
        if not row:
            continue
        if len(row) <= max(li, ti):
            raise FileFormatError(f"expected {len(header)} tab-separated fields ({', '.join(header)}), "
                                  f"found {len(row)}", path=p, line=n)
        out.setdefault(row[li], []).append(row[ti])
    if not out:
        raise FileFormatError("no rows after the header", path=p)
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
    """``(label, tokenizer)`` for an encoding name, a tokenizer file, ``train:KIND[:N]``,
    ``patches:...`` (a :class:`~tokenforge.analysis.patching.Patcher`), or a tokenizer.

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
    if s.startswith("patches:"):
        from .patching import Patcher

        return s, Patcher.from_spec(s)
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

    @property
    def unknown_dominated(self) -> bool:
        """More than half of the text's bytes went into unknown tokens (see the module docstring)."""
        return self.metrics.unknown_dominated

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
                ("chars/token", True), ("tokens/word", True), ("UNK rate", True), ("UNK bytes", True)]
        if ref:
            cols.append((ref, True))
        if self._any_dominated():
            cols.append(("note", False))
        return cols

    def _any_dominated(self) -> bool:
        return any(r.unknown_dominated for r in self.rows)

    def _cells(self, r: CompareRow) -> list[str]:
        m = r.metrics
        cells = [r.text, r.tokenizer, f"{m.bytes:,}", f"{m.tokens:,}", _fmt(m.bytes_per_token),
                 _fmt(m.chars_per_token), _fmt(m.tokens_per_word),
                 _fmt(None if m.unk_rate is None else 100 * m.unk_rate, 2, "%"),
                 _fmt(None if m.unk_byte_share is None else 100 * m.unk_byte_share, 1, "%")]
        if self.reference:
            cells.append(_fmt(r.ratio))
        if self._any_dominated():
            cells.append("unknown-dominated" if r.unknown_dominated else "")
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
            "UNK rate: – for tokenizers without an unknown token (byte-level BPE cannot produce one). "
            "UNK bytes: share of the text's bytes inside unknown tokens.",
        ]
        if self._any_dominated():
            out.append(f"unknown-dominated: more than {UNKNOWN_DOMINATED:.0%} of the text's bytes became unknown "
                       "tokens, so bytes/token there counts what each unknown token swallowed, not compression.")
        if any(t.startswith("patches:") for t in self.tokenizers):
            out.append("patches:* rows: a token is a byte patch (MegaByte's fixed patches, BLT's entropy patches "
                       "under tokenforge's byte n-gram model), so bytes/token is bytes per patch.")
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


#: Inputs (bytes times tokenizers) from which ``compare`` shows progress by default.
BIG_INPUT = 8 << 20


def compare(
    tokenizers: Sequence[Any],
    texts: Mapping[str, str] | Sequence[str | os.PathLike] | None = None,
    *,
    reference: str | None = "en",
    word_splitter: WordSplitter | Any = None,
    show_progress: bool | None = None,
) -> CompareReport:
    """Measure every tokenizer on every text and relate each text to ``reference`` (Petrov et al., 2023).

    ``tokenizers`` are specs (see the module docstring) or tokenizer objects.
    ``texts`` is ``{label: text}``, a list of files, or ``None`` for the UDHR
    sample. The reference text is the one labelled ``reference`` (or whose
    label starts with ``reference + "."``, e.g. ``en.heldout``); without one,
    ratios are ``None``. ``show_progress``: a bar over the bytes measured (``None``:
    on a terminal or in a notebook, for inputs of 8 MB or more; see
    :mod:`tokenforge.progress`).
    """
    from ..progress import Progress, get_mode

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
    sizes = {name: len(text.encode("utf-8", "surrogatepass")) for name, text in text_map.items()}
    total = sum(sizes.values()) * len(resolved)
    show = show_progress if show_progress is not None else (None if total >= BIG_INPUT or get_mode() == "always" else False)
    with Progress(total, "measuring", "B", show=show, unit_scale=True) as bar:
        for label, (_, tok) in zip(labels, resolved):
            for name, text in text_map.items():
                measured[label, name] = measure(tok, text, word_splitter=word_splitter)
                bar.update(sizes[name])
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
PLOT_METRIC = "Bytes per token"
_LABEL_FONT = 9.0  # points, category and value labels are sized from this
_WRAP = 26  # characters per line of a long category label
_MAX_LINES = 3


def _wrap_label(s: str, width: int = _WRAP, max_lines: int = _MAX_LINES) -> str:
    """Break a long label (file names have no spaces) after ``_ - . space /`` into lines of <= ``width``.

    Labels that would need more than ``max_lines`` lines keep their start and end around an ellipsis,
    so files that differ only at the end stay distinguishable.
    """
    lines: list[str] = []
    cur = ""
    token = ""
    for ch in s + "\0":
        if ch != "\0":
            token += ch
        if ch in "_-. /\\\0" and token:
            while len(token) > width:  # a run without separators: cut it
                if cur:
                    lines.append(cur)
                    cur = ""
                lines.append(token[:width])
                token = token[width:]
            if len(cur) + len(token) > width:
                lines.append(cur)
                cur = ""
            cur += token
            token = ""
    if cur:
        lines.append(cur)
    lines = [line for line in lines if line.strip()]
    if len(lines) > max_lines:
        lines = lines[: max_lines - 1] + ["…" + s[len(s) - (width - 1):]]
    return "\n".join(lines) or s


def _shorten(s: str, n: int) -> str:
    return s if len(s) <= n else s[: max(1, n - 1)].rstrip(", ") + "…"


def _boxes_overlap(boxes: list[Any]) -> bool:
    return any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1:])


def plot_figure(report: CompareReport, *, title: str | None = None, dpi: float | None = None) -> Any:
    """Draw the bytes/token chart of ``report`` and return the :class:`matplotlib.figure.Figure`.

    One group per text, one bar per tokenizer. Short category labels (languages)
    get vertical bars; long ones (file names) or many texts get horizontal bars
    with labels wrapped at ``_ - .``. The figure grows with the number of texts
    and tokenizers, the legend sits to the right of the axes (inside the figure,
    never over the bars), and values are written on the bars only where the
    number fits. An unknown-dominated bar (more than half of the text's bytes in
    unknown tokens) is hatched, labelled with its unknown share and named in the
    legend; the axis ends just above the other bars, so one tokenizer that turns a
    text into a few ``[UNK]`` does not flatten the rest, and a bar that runs past
    the end carries its true value. The figure is not registered with pyplot: nothing is shown and
    the matplotlib backend is left as it is. ``dpi`` defaults to 150 (less for
    very tall charts). Needs matplotlib.
    """
    try:
        import matplotlib  # noqa: F401  (first: a missing or blocked package fails here)
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise MissingDependencyError(
            "tokenforge.analysis.plot needs matplotlib: pip install 'tokenforge[plot]' (or pip install matplotlib)"
        ) from None
    texts, toks = list(report.texts), list(report.tokenizers)
    n_texts, n_toks = max(1, len(texts)), max(1, len(toks))
    longest = max((len(t) for t in texts), default=0)
    dominated = {(tok, t) for tok in toks for t in texts if report.row(tok, t).unknown_dominated}
    legend_w = 0.9 + 0.075 * max([len(t) for t in toks] + [18 if dominated else 0], default=8)
    # Vertical bars for short labels (languages) while the chart stays under 16 in wide; else horizontal.
    group = max(0.16 * n_toks + 0.22, 0.075 * longest + 0.3)  # inches per text
    size = (max(6.0, 1.4 + legend_w + group * n_texts), 4.8)
    horizontal = longest > 12 or size[0] > 16.0
    labels = [_wrap_label(t) for t in texts] if horizontal else texts
    if horizontal:
        lines = max((lab.count("\n") + 1 for lab in labels), default=1)
        group = max(0.17 * n_toks + 0.16, 0.155 * lines + 0.12)
        size = (7.5 + legend_w, 1.9 + group * n_texts)
    if dpi is None:
        dpi = max(50, min(150, int(60000 / max(size))))  # Agg images are at most 2**16 pixels a side
    fig = Figure(figsize=size, dpi=dpi, layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()

    metric_label = "UTF-8 bytes per token (bytes ÷ tokens)"
    height = 0.8 / n_toks
    colors = None
    if n_toks > 10:
        from matplotlib import colormaps

        colors = [colormaps["tab20"](j % 20) for j in range(n_toks)]
    value_labels = []
    values_of = {tok: [report.row(tok, t).metrics.bytes_per_token or 0.0 for t in texts] for tok in toks}
    # An unknown-dominated bar does not set the scale: the axis ends a little above the others.
    others = [v for tok in toks for t, v in zip(texts, values_of[tok]) if (tok, t) not in dominated]
    every = [v for tok in toks for v in values_of[tok]]
    top = (max(others) if others else max(every, default=0.0)) or max(every, default=0.0) or 1.0
    limit = top * (1.12 if horizontal else 1.16)
    inside: list[tuple[float, float, str]] = []  # unknown-dominated bars labelled inside: (position, end, text)
    clipped = any(v > limit for v in every)
    for j, tok in enumerate(toks):
        raw = [report.row(tok, t).metrics.bytes_per_token for t in texts]
        values = [min(v, limit) for v in values_of[tok]]
        pos = [i + (j - (n_toks - 1) / 2) * height for i in range(len(texts))]
        kw = {"label": tok}
        if colors:
            kw["color"] = colors[j]
        bars = (ax.barh(pos, values, height=height, **kw) if horizontal
                else ax.bar(pos, values, width=height, **kw))
        shown = []
        for i, t in enumerate(texts):
            v = values_of[tok][i]
            if (tok, t) not in dominated:
                shown.append(_fmt(raw[i]))
                continue
            bars[i].set_hatch("///")
            bars[i].set_edgecolor("0.15")
            share = f"{report.row(tok, t).metrics.unk_byte_share:.0%} UNK"
            if v >= limit / 2:  # long enough to carry its label inside (a clipped bar always does)
                inside.append((pos[i], min(v, limit), f"{_fmt(raw[i])} ({share})" + (" ▸" if v > limit else "")))
                shown.append("")
            else:
                shown.append(f"{_fmt(raw[i])} ({share})")
        value_labels.append((bars, ax.bar_label(bars, labels=shown, padding=2,
                                                fontsize=_LABEL_FONT - 1.5, rotation=0 if horizontal else 90)))
    # Labels inside the end of long unknown-dominated bars, always drawn: a clipped bar shows its
    # true value nowhere else.
    box = {"boxstyle": "round,pad=0.15", "facecolor": "white", "edgecolor": "none", "alpha": 0.85}
    for p, end, note in inside:
        if horizontal:
            ax.text(end * 0.985, p, note, ha="right", va="center", fontsize=_LABEL_FONT - 1.5, bbox=box)
        else:
            ax.text(p, end * 0.985, note, ha="center", va="top", rotation=90, fontsize=_LABEL_FONT - 1.5, bbox=box)
    if clipped:
        metric_label += f"\naxis clipped at {limit:.2f}: true value written on clipped bars"
    if horizontal:
        ax.set_yticks(range(len(texts)))
        ax.set_yticklabels(labels, fontsize=_LABEL_FONT)
        ax.set_ylim(len(texts) - 0.5, -0.5)  # first text at the top, bars in legend order
        ax.set_xlim(0, limit)
        ax.set_xlabel(metric_label)
        ax.set_ylabel("text")
        ax.grid(axis="x", alpha=0.3)
    else:
        ax.set_xticks(range(len(texts)))
        ax.set_xticklabels(labels, fontsize=_LABEL_FONT)
        ax.set_xlim(-0.5, len(texts) - 0.5)
        ax.set_ylim(0, limit)
        ax.set_ylabel(metric_label)
        ax.set_xlabel("text")
        ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)
    handles, names = ax.get_legend_handles_labels()
    if dominated:
        from matplotlib.patches import Patch

        handles.append(Patch(facecolor="white", edgecolor="0.15", hatch="///"))
        names.append(f"unknown-dominated:\n>{UNKNOWN_DOMINATED:.0%} of the bytes\nin unknown tokens")
    ax.legend(handles, names, title="tokenizer", fontsize="small", loc="upper left", bbox_to_anchor=(1.02, 1.0),
              borderaxespad=0.0, frameon=False)

    chars = int(size[0] * 72 / (0.55 * 9.5))  # characters of the subtitle per line
    fig.suptitle(title or f"{PLOT_METRIC} by text (higher is better)", fontsize=12, fontweight="bold")
    source = f"Texts: {report.source}"
    if len(source) > chars:
        source = _shorten(f"{len(texts)} texts: {report.source}", chars)
    sub = [_shorten("Tokenizers: " + ", ".join(toks), chars), source]
    ax.set_title("\n".join(sub), fontsize=9.5, color="0.3")

    # Values only where they fit: drawn once to measure, then kept or removed.
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    axes_box = ax.get_window_extent(renderer)
    fits = True
    for bars, texts_ in value_labels:
        for bar, text in zip(bars, texts_):
            if not text.get_text():
                continue  # an unknown-dominated bar labelled inside
            tb = text.get_window_extent(renderer)
            bb = bar.get_window_extent(renderer)
            if horizontal:
                fits &= tb.height <= bb.height * 1.05 and tb.x1 <= axes_box.x1
            else:
                fits &= tb.width <= bb.width * 1.05 and tb.y1 <= axes_box.y1
    if not fits:
        for _, texts_ in value_labels:
            for text in texts_:
                text.remove()
    # The subtitle is centred over the axes: shorten its lines until it fits inside the figure.
    centre = ax.title.get_window_extent(renderer).x0 + ax.title.get_window_extent(renderer).width / 2
    room = 2 * min(centre - fig.bbox.x0, fig.bbox.x1 - centre) - 8
    for _ in range(40):
        if ax.title.get_window_extent(renderer).width <= room:
            break
        sub = [_shorten(line, int(len(line) * 0.92)) if len(line) == max(map(len, sub)) else line for line in sub]
        ax.title.set_text("\n".join(sub))
    if not horizontal:
        ticks = [t.get_window_extent(renderer) for t in ax.get_xticklabels() if t.get_text()]
        if _boxes_overlap(ticks):
            for t in ax.get_xticklabels():
                t.set_rotation(45)
                t.set_horizontalalignment("right")
                t.set_rotation_mode("anchor")
    fig.canvas.draw()
    return fig


def plot(report: CompareReport, path: str | os.PathLike, *, title: str | None = None) -> Path:
    """Save a grouped bar chart of UTF-8 bytes/token: one group per text, one bar per tokenizer.

    Needs matplotlib (``pip install 'tokenforge[plot]'``); the format follows
    the file suffix (``.png``, ``.svg``, ``.pdf``). Returns the path written.
    See :func:`plot_figure` for the layout.
    """
    fig = plot_figure(report, title=title)
    out = Path(path)
    fig.savefig(out, bbox_inches="tight", pad_inches=0.15)
    return out

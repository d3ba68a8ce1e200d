"""The ``compare --plot`` chart is readable: checked on the drawn geometry (Agg), not on pixels.

After ``fig.canvas.draw()``: category labels do not overlap each other, every
text (title, subtitle, axis labels, tick labels, legend) lies inside the figure
(and so inside the saved image, which is cropped with ``bbox_inches="tight"``),
the legend sits outside the axes' data area (to the right of it), the title
names the metric, and values are written on the bars only where they fit.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

pytest.importorskip("matplotlib")

import matplotlib  # noqa: E402

from tokenforge.analysis.compare import PLOT_METRIC, _wrap_label, compare, plot_figure  # noqa: E402
from tokenforge.cli.analysis import register_compare  # noqa: E402

TOKENIZERS = ["cl100k_base", "o200k_base", "gpt2", "r50k_base"]
SAMPLES = [
    "It was the best of times, it was the worst of times, it was the age of wisdom. ",
    "Alle Menschen sind frei und gleich an Würde und Rechten geboren. ",
    "人人生而自由，在尊严和权利上一律平等。他们赋有理性和良心。",
    "吾輩は猫である。名前はまだ無い。どこで生れたかとんと見当がつかぬ。",
]
LONG_NAMES = [
    "german_news_corpus_sample_2024_cleaned",
    "hongloumeng_dream_of_the_red_chamber_chinese",
    "shakespeare_complete_works_excerpt_first_part",
    "wagahai_wa_neko_de_aru_soseki_japanese",
]


def _files_report(tmp_path: Path, n_files: int, n_toks: int):
    """What ``tokenforge compare TOKS --text FILES`` plots: texts labelled by long file names."""
    paths = []
    for i in range(n_files):
        name = LONG_NAMES[i] if n_files <= len(LONG_NAMES) else f"{LONG_NAMES[i % 4]}_part_{i:02d}"
        p = tmp_path / f"{name}.txt"
        p.write_text(SAMPLES[i % 4] * (3 + i), encoding="utf-8")
        paths.append(str(p))
    r = compare(TOKENIZERS[:n_toks], paths)
    return r


def _langs_report(n_langs: int):
    """A parallel sample: many short language labels."""
    texts = {f"l{i:02d}" if i else "en": SAMPLES[i % 4] * (1 + i % 3) for i in range(n_langs)}
    return compare(TOKENIZERS[:3], texts)


def _unknown_dominated_report(n_langs: int):
    """One tokenizer knows only English words: most other texts become a few [UNK] tokens."""
    from tokenforge import Tokenizer, pretokenizers
    from tokenforge.models.wordlevel import WordLevel

    words = sorted(set(SAMPLES[0].replace(",", " ").replace(".", " ").split()))
    wl = Tokenizer(WordLevel({"[UNK]": 0, **{w: i + 1 for i, w in enumerate(words)}}, "[UNK]"),
                   pre_tokenizer=pretokenizers.WhitespaceSplit(), name="english-words")
    texts = {f"l{i:02d}" if i else "en": SAMPLES[i % 4] * (1 + i % 3) for i in range(n_langs)}
    return compare(TOKENIZERS[:2] + [wl], texts)


DPI = 72  # geometry is checked in points; a low resolution keeps the drawing fast

CASES = {
    "4 files x 3 tokenizers": lambda tmp: _files_report(tmp, 4, 3),
    "1 file x 1 tokenizer": lambda tmp: _files_report(tmp, 1, 1),
    "12 files x 4 tokenizers": lambda tmp: _files_report(tmp, 12, 4),
    "15 languages x 3 tokenizers": lambda tmp: _langs_report(15),
    "26 languages x 3 tokenizers": lambda tmp: _langs_report(26),
    "4 languages, one tokenizer unknown-dominated": lambda tmp: _unknown_dominated_report(4),
}


_FIGURES: dict[str, object] = {}


@pytest.fixture(scope="module")
def figure_for(tmp_path_factory):
    """Each case is drawn once per module (drawing dominates the run time)."""

    def get(case: str):
        if case not in _FIGURES:
            fig = plot_figure(CASES[case](tmp_path_factory.mktemp("texts")), dpi=DPI)
            fig.canvas.draw()
            _FIGURES[case] = fig
        return _FIGURES[case]

    yield get
    _FIGURES.clear()


@pytest.fixture(params=list(CASES))
def drawn(request, figure_for):
    fig = figure_for(request.param)
    return fig, fig.canvas.get_renderer()


def _inside(inner, outer, tol: float = 1.0) -> bool:
    return (inner.x0 >= outer.x0 - tol and inner.y0 >= outer.y0 - tol
            and inner.x1 <= outer.x1 + tol and inner.y1 <= outer.y1 + tol)


def _titles(fig) -> str:
    sup = getattr(fig, "_suptitle", None)
    return " ".join([sup.get_text() if sup is not None else ""] + [ax.get_title() for ax in fig.axes])


def _tick_boxes(ticks, renderer):
    return [t.get_window_extent(renderer) for t in ticks if t.get_visible() and t.get_text()]


def test_category_labels_do_not_overlap(drawn):
    fig, renderer = drawn
    (ax,) = fig.axes
    for ticks in (ax.get_xticklabels(), ax.get_yticklabels()):
        boxes = _tick_boxes(ticks, renderer)
        for i, a in enumerate(boxes):
            for b in boxes[i + 1:]:
                assert not a.overlaps(b), f"tick labels overlap: {a} and {b}"


def test_legend_inside_the_image_and_off_the_bars(drawn):
    # The legend is placed to the right of the axes (loc="upper left" anchored at x=1.02 of the axes).
    fig, renderer = drawn
    (ax,) = fig.axes
    legend = ax.get_legend() or (fig.legends[0] if fig.legends else None)
    assert legend is not None
    box = legend.get_window_extent(renderer)
    assert _inside(box, fig.bbox), f"legend {box} leaves the figure {fig.bbox}"
    tight = fig.get_tightbbox(renderer).transformed(fig.dpi_scale_trans)  # what savefig(bbox_inches="tight") keeps
    assert _inside(box, tight)
    assert not box.overlaps(ax.get_window_extent(renderer)), "legend covers the data area"


def test_no_text_is_cut_off(drawn):
    fig, renderer = drawn
    (ax,) = fig.axes
    texts = [ax.title, ax.xaxis.label, ax.yaxis.label, *ax.get_xticklabels(), *ax.get_yticklabels()]
    if getattr(fig, "_suptitle", None) is not None:
        texts.append(fig._suptitle)
    for t in texts:
        if t.get_visible() and t.get_text():
            box = t.get_window_extent(renderer)
            assert _inside(box, fig.bbox), f"{t.get_text()!r} at {box} is outside the figure {fig.bbox}"


def test_title_names_the_metric_and_the_tokenizers(drawn):
    fig, _ = drawn
    title = _titles(fig)
    assert PLOT_METRIC.lower() in title.lower()
    assert "higher is better" in title
    assert "cl100k_base" in title
    (ax,) = fig.axes
    assert ax.get_xlabel() and ax.get_ylabel()


def test_values_on_bars_only_where_they_fit(drawn):
    fig, renderer = drawn
    (ax,) = fig.axes
    axes_box = ax.get_window_extent(renderer)
    labels = [t for t in ax.texts if t.get_text()]
    boxes = [t.get_window_extent(renderer) for t in labels]
    for t, box in zip(labels, boxes):
        assert _inside(box, axes_box), f"value {t.get_text()!r} leaves the axes"
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            assert not a.overlaps(b), "value labels overlap"


def test_figure_grows_with_the_number_of_texts(figure_for):
    w1, h1 = figure_for("1 file x 1 tokenizer").get_size_inches()
    w4, h4 = figure_for("4 files x 3 tokenizers").get_size_inches()
    w12, h12 = figure_for("12 files x 4 tokenizers").get_size_inches()
    assert w1 <= w4 <= w12 and h4 >= h1 + 3 * 0.4 and h12 >= h4 + 8 * 0.4  # at least 0.4 in per added text
    w15 = figure_for("15 languages x 3 tokenizers").get_size_inches()[0]
    assert w15 >= 15 * 0.5  # short labels: vertical bars, wider with more languages


def test_four_files_get_values_and_wrapped_labels(figure_for):
    (ax,) = figure_for("4 files x 3 tokenizers").axes
    assert len([t for t in ax.texts if t.get_text()]) == 12
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert [s.replace("\n", "") for s in labels] == LONG_NAMES
    assert any("\n" in s for s in labels)


def test_cli_plot_writes_a_valid_png_and_leaves_the_backend(tmp_path, capsys):
    files = []
    for name, text in zip(LONG_NAMES, SAMPLES):
        (tmp_path / f"{name}.txt").write_text(text, encoding="utf-8")
        files.append(str(tmp_path / f"{name}.txt"))
    backend = matplotlib.get_backend()
    p = argparse.ArgumentParser(prog="tokenforge")
    register_compare(p.add_subparsers(dest="command", required=True))
    out = tmp_path / "c.png"
    args = p.parse_args(["compare", "cl100k", "o200k", "gpt2", "--text", *files, "--plot", str(out)])
    assert args.func(args) == 0
    assert "wrote" in capsys.readouterr().err
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    from matplotlib.image import imread

    img = imread(out)
    assert img.shape[0] > 300 and img.shape[1] > 600
    assert matplotlib.get_backend() == backend


@pytest.mark.parametrize("label, lines", [
    ("en", ["en"]),
    ("shakespeare_complete_works_excerpt_first_part", ["shakespeare_complete_", "works_excerpt_first_part"]),
])
def test_wrap_label(label, lines):
    assert _wrap_label(label).split("\n") == lines


def test_wrap_label_keeps_start_and_end_of_very_long_names():
    name = "a_" * 60 + "end.txt"
    lines = _wrap_label(name).split("\n")
    assert len(lines) == 3 and all(len(line) <= 26 for line in lines)
    assert lines[0].startswith("a_") and lines[-1].startswith("…") and lines[-1].endswith("end.txt")

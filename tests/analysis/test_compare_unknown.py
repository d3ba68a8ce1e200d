"""`compare` tells apart a tokenizer that compresses a text from one that turns it into unknown tokens.

One ``[UNK]`` can swallow a whole word or clause, so a tokenizer that does not know a script
gets a huge bytes/token on it. The report gives the share of bytes inside unknown tokens, marks
rows above half as unknown-dominated, and the chart hatches those bars and clips its axis to
the other bars (writing the true value on a clipped bar) so they stay readable.
"""

from __future__ import annotations

import json

import pytest

import tokenforge
from tokenforge import Tokenizer, pretokenizers
from tokenforge.analysis.compare import compare
from tokenforge.analysis.metrics import measure
from tokenforge.models.wordlevel import WordLevel

WORDS = "All human beings are born free and equal in dignity rights".split()
TEXTS = {
    "en": "All human beings are born free and equal in dignity and rights.",
    "de": "Alle Menschen sind frei und gleich an Würde und Rechten geboren.",
    "zh": "人人生而自由，在尊严和权利上一律平等。他们赋有理性和良心，并应以兄弟关系的精神相对待。",
}


def english_words() -> Tokenizer:
    """A word-level tokenizer that knows only the English sentence's words (no punctuation)."""
    vocab = {"[UNK]": 0, **{w: i + 1 for i, w in enumerate(WORDS)}}
    return Tokenizer(WordLevel(vocab, "[UNK]"), pre_tokenizer=pretokenizers.WhitespaceSplit(), name="english-words")


def bert() -> Tokenizer:
    return tokenforge.bert_wordpiece({"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, "[MASK]": 4, "a": 5, "##b": 6})


def test_unknown_bytes_counts_the_text_inside_unknown_tokens():
    # "zzz" (3 bytes), "中" and "文" (BERT splits CJK characters; 3 bytes each) are [UNK]; "ab" is
    # a ##b; spaces are in no token
    from tokenforge.analysis.metrics import unknown_bytes

    text = "ab zzz 中文 ab ab ab"
    assert unknown_bytes(bert(), text) == 9
    m = measure(bert(), text)
    assert (m.unk, m.unk_bytes, m.bytes) == (3, 9, len(text.encode()))
    assert m.unk_byte_share == 9 / len(text.encode())
    assert not m.unknown_dominated
    assert measure(bert(), "zzz 中文").unknown_dominated  # 9 of 10 bytes
    assert measure(tokenforge.get_encoding("gpt2"), text).unk_bytes is None  # byte-level BPE has no unknown token


def test_word_level_unknown_token_is_counted():
    m = measure(english_words(), TEXTS["en"])  # "rights." is not a word of the vocabulary
    assert (m.unk, m.unk_bytes) == (1, len("rights."))


def test_unknown_dominated_rows_are_marked_in_every_format():
    r = compare(["gpt2", english_words()], TEXTS)
    zh = r.row("english-words", "zh")
    assert zh.unknown_dominated and zh.metrics.unk_byte_share == 1.0
    assert r.row("english-words", "de").unknown_dominated  # every word unknown: 55 of 65 bytes
    assert not r.row("english-words", "en").unknown_dominated
    assert not r.row("gpt2", "zh").unknown_dominated
    lines = r.format("table").splitlines()
    (zh_line,) = [line for line in lines if line.startswith("zh") and "english-words" in line]
    assert zh_line.rstrip().endswith("unknown-dominated") and "100.0%" in zh_line
    (en_line,) = [line for line in lines if line.startswith("en") and "english-words" in line]
    assert "unknown-dominated" not in en_line
    assert any(line.startswith("unknown-dominated:") for line in lines)  # the footnote says what it means
    assert "| unknown-dominated |" in r.format("markdown")
    rows = {(d["tokenizer"], d["text"]): d for d in json.loads(r.format("json"))["rows"]}
    assert rows["english-words", "zh"]["unknown_dominated"] is True
    assert rows["english-words", "zh"]["unk_bytes"] == len(TEXTS["zh"].encode())
    assert rows["gpt2", "zh"]["unknown_dominated"] is False and rows["gpt2", "zh"]["unk_byte_share"] is None
    assert "unknown-dominated" not in compare(["gpt2"], TEXTS).format("table")


@pytest.mark.parametrize("horizontal", [False, True], ids=["vertical bars", "horizontal bars"])
def test_plot_clips_the_axis_and_marks_unknown_dominated_bars(horizontal):
    pytest.importorskip("matplotlib")
    from tokenforge.analysis.compare import plot_figure

    texts = TEXTS if not horizontal else {f"universal_declaration_{k}_article_one": v for k, v in TEXTS.items()}
    r = compare(["gpt2", "cl100k_base", english_words()], texts)
    fig = plot_figure(r, dpi=72)
    (ax,) = fig.axes
    limit = ax.get_xlim()[1] if horizontal else ax.get_ylim()[1]
    others = [row.metrics.bytes_per_token for row in r.rows if not row.unknown_dominated]
    assert max(others) < limit < 1.25 * max(others)  # the 129 bytes/token bar does not set the scale
    hatched = [p for p in ax.patches if p.get_hatch()]
    assert len(hatched) == 2  # de and zh under english-words
    # the clipped bar ends at the axis and carries its true value, inside the axes
    renderer = fig.canvas.get_renderer()
    axes_box = ax.get_window_extent(renderer)
    (note,) = [t for t in ax.texts if t.get_text().startswith("129.00")]
    assert "100% UNK" in note.get_text()
    box = note.get_window_extent(renderer)
    assert axes_box.x0 - 1 <= box.x0 and box.x1 <= axes_box.x1 + 1 and axes_box.y0 - 1 <= box.y0 <= box.y1 <= axes_box.y1 + 1
    legend = ax.get_legend()
    assert any("unknown-dominated" in t.get_text() for t in legend.get_texts())
    label = ax.get_xlabel() if horizontal else ax.get_ylabel()
    assert "clipped" in label


def test_plot_without_unknown_dominated_rows_is_not_clipped():
    pytest.importorskip("matplotlib")
    from tokenforge.analysis.compare import plot_figure

    r = compare(["gpt2", "cl100k_base"], TEXTS)
    (ax,) = plot_figure(r, dpi=72).axes
    assert ax.get_ylim()[1] == pytest.approx(1.16 * max(row.metrics.bytes_per_token for row in r.rows))
    assert not any(p.get_hatch() for p in ax.patches) and "clipped" not in ax.get_ylabel()

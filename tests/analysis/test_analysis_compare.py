"""Comparing tokenizers across languages: figures, ratio to English (Petrov et al., 2023), formats, chart, CLI."""

from __future__ import annotations

import argparse
import csv
import io
import json
import sys
from importlib import resources
from pathlib import Path

import pytest

import tokenforge
from tokenforge.analysis import compare, plot, resolve_tokenizer, udhr_sample
from tokenforge.analysis.compare import read_parallel_tsv
from tokenforge.cli.analysis import register_compare
from tokenforge.errors import FileFormatError, TokenforgeError

UDHR_LANGS = ["en", "zh", "ja", "ko", "ar", "he", "hi", "th", "ru", "el", "de", "fr", "es", "sw", "am"]


def byte_tokenizer() -> tokenforge.Tokenizer:
    """One token per byte, so every count below can be done by hand."""
    return tokenforge.Tokenizer(tokenforge.BPE({i: bytes([i]) for i in range(256)}), name="bytes")


HAND_TEXTS = {"en": "abc de", "zh": "中文", "ja": "日本語です"}


def test_hand_computed_compare():
    r = compare([byte_tokenizer()], HAND_TEXTS)
    assert r.tokenizers == ("bytes",) and r.texts == ("en", "zh", "ja") and r.reference == "en"
    en, zh, ja = (r.row("bytes", t) for t in ("en", "zh", "ja"))
    # en: 6 bytes = 6 tokens, 6 chars, 2 words
    assert (en.metrics.tokens, en.metrics.bytes, en.metrics.chars, en.metrics.words) == (6, 6, 6, 2)
    assert (en.metrics.bytes_per_token, en.metrics.chars_per_token, en.metrics.tokens_per_word) == (1.0, 1.0, 3.0)
    assert en.ratio == 1.0
    # zh: 2 characters × 3 bytes = 6 tokens: same cost as English here
    assert (zh.metrics.tokens, zh.metrics.chars_per_token, zh.metrics.tokens_per_word, zh.ratio) == (6, 2 / 6, None, 1.0)
    # ja: 5 characters × 3 bytes = 15 tokens, 2.5 times English
    assert (ja.metrics.tokens, ja.ratio) == (15, 2.5)


def test_ratio_is_per_tokenizer_and_matches_tiktoken():
    from _tiktoken_ref import reference

    texts = {"en": "All human beings are born free and equal in dignity and rights.",
             "zh": "人人生而自由,在尊严和权利上一律平等。"}
    r = compare(["gpt2", "cl100k_base", "o200k_base"], texts)
    for name in ("gpt2", "cl100k_base", "o200k_base"):
        ref = reference(name)
        n_en, n_zh = len(ref.encode_ordinary(texts["en"])), len(ref.encode_ordinary(texts["zh"]))
        assert r.row(name, "en").metrics.tokens == n_en
        assert r.row(name, "zh").metrics.tokens == n_zh
        assert r.row(name, "zh").ratio == n_zh / n_en
    # rows are text-major: the tokenizers sit together for each language
    assert [(row.text, row.tokenizer) for row in r.rows][:3] == [("en", "gpt2"), ("en", "cl100k_base"), ("en", "o200k_base")]
    # the newer encodings spend fewer tokens on Chinese (Petrov et al., 2023)
    assert r.row("o200k_base", "zh").ratio < r.row("cl100k_base", "zh").ratio < r.row("gpt2", "zh").ratio


def test_no_reference_text_means_no_ratio():
    r = compare([byte_tokenizer()], {"zh": "中文"})
    assert r.reference is None and r.rows[0].ratio is None
    assert "× " not in r.format("table")
    r2 = compare([byte_tokenizer()], {"en.heldout": "ab", "zh": "中"}, reference="en")
    assert r2.reference == "en.heldout" and r2.row("bytes", "zh").ratio == 1.5


def test_unk_rate_column_for_pipelines():
    bert = tokenforge.bert_wordpiece({"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, "[MASK]": 4, "a": 5, "##b": 6})
    r = compare([bert, byte_tokenizer()], {"en": "ab ab zz"})
    labels = r.tokenizers
    assert len(set(labels)) == 2
    rows = {row.tokenizer: row for row in r.rows}
    assert rows[labels[0]].metrics.unk_rate == 1 / 5  # a ##b a ##b [UNK]
    assert rows["bytes"].metrics.unk_rate is None
    table = r.format("table")
    assert "20.00%" in table


def test_duplicate_tokenizers_get_distinct_labels():
    r = compare(["gpt2", "gpt2"], {"en": "hi"})
    assert r.tokenizers == ("gpt2", "gpt2#2")


def test_udhr_sample_is_parallel_and_small():
    s = udhr_sample()
    assert list(s) == UDHR_LANGS
    for lang, text in s.items():
        assert text.count("\n") == 4, lang  # five articles
        assert text.strip() == text and text
    path = Path(str(resources.files("tokenforge").joinpath("data", "udhr", "udhr_sample.tsv")))
    assert path.stat().st_size < 100_000
    rows = list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8")), delimiter="\t", quoting=csv.QUOTE_NONE))
    assert {(r["lang"], r["article"]) for r in rows} == {(lang, str(a)) for lang in UDHR_LANGS for a in range(26, 31)}
    assert (Path(str(path)).parent / "SOURCES.md").is_file()


def test_udhr_sample_matches_shared_source(shared_data):
    src = shared_data / "text" / "parallel" / "udhr_articles_aligned.tsv"
    with open(src, encoding="utf-8", newline="") as f:
        source = {(r["lang_key"], r["article"]): r["text"] for r in csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE)}
    path = resources.files("tokenforge").joinpath("data", "udhr", "udhr_sample.tsv")
    with open(str(path), encoding="utf-8", newline="") as f:
        for r in csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE):
            assert r["text"] == source[r["udhr_key"], r["article"]]


def test_default_texts_are_the_udhr_sample():
    r = compare([byte_tokenizer()])
    assert r.texts == tuple(UDHR_LANGS) and "UDHR" in r.source
    # one token per byte: the ratio to English is the ratio of UTF-8 byte counts
    s = udhr_sample()
    assert r.row("bytes", "hi").ratio == len(s["hi"].encode()) / len(s["en"].encode())


def test_text_files_and_parallel_tsv(tmp_path):
    (tmp_path / "en.txt").write_text("one two", encoding="utf-8")
    (tmp_path / "ru.txt").write_text("один два", encoding="utf-8")
    r = compare([byte_tokenizer()], [tmp_path / "en.txt", tmp_path / "ru.txt"])
    assert r.texts == ("en", "ru") and r.row("bytes", "ru").ratio == 15 / 7
    tsv = tmp_path / "par.tsv"
    tsv.write_text("lang\ttext\nen\tab\nde\tabc\nen\tcd\n", encoding="utf-8")
    assert read_parallel_tsv(tsv) == {"en": "ab\ncd", "de": "abc"}
    r2 = compare([byte_tokenizer()], [tsv])
    assert r2.texts == ("en", "de") and r2.row("bytes", "de").ratio == 3 / 5
    bad = tmp_path / "bad.tsv"
    bad.write_text("language\ttext\nen\tx\n", encoding="utf-8")
    with pytest.raises(FileFormatError, match=r"columns lang and text \(missing: lang; found: 'language', 'text'\)"):
        compare([byte_tokenizer()], [bad])
    with pytest.raises(TokenforgeError, match="not found"):
        compare([byte_tokenizer()], [tmp_path / "missing.txt"])


def test_trained_spec_and_bad_specs():
    label, tok = resolve_tokenizer("train:bpe:300")
    assert label == "train:bpe:300" and isinstance(tok, tokenforge.Tokenizer) and len(tok) == 300
    for spec in ("train:foo", "train:bpe:many", "train:bpe:1:2"):
        with pytest.raises(TokenforgeError, match="train:KIND|not an integer"):
            resolve_tokenizer(spec)
    with pytest.raises(TokenforgeError):
        resolve_tokenizer("/no/such/tokenizer.json")


def test_formats_round_trip():
    r = compare(["gpt2", byte_tokenizer()], HAND_TEXTS)
    md = r.format("markdown").splitlines()
    assert md[0].startswith("| text | tokenizer |") and md[1].startswith("|---|---|")
    assert len([line for line in md if line.startswith("| ")]) == 1 + 6
    rows = list(csv.DictReader(io.StringIO(r.format("csv"))))
    assert len(rows) == 6 and rows[0]["text"] == "en" and rows[0]["tokenizer"] == "gpt2"
    by = {(x["tokenizer"], x["text"]): x for x in rows}
    assert float(by["bytes", "ja"]["ratio_to_reference"]) == 2.5
    assert by["bytes", "zh"]["tokens_per_word"] == "" and by["bytes", "zh"]["unk_rate"] == ""
    d = json.loads(r.format("json"))
    assert d["reference"] == "en" and d["word_splitter"] == "whitespace"
    assert [x["tokens"] for x in d["rows"]] == [row.metrics.tokens for row in r.rows]
    table = r.format("table")
    assert "bytes/token" in table and "whitespace" in table and "Petrov et al., 2023" in table
    with pytest.raises(ValueError, match="unknown format"):
        r.format("xml")


def test_table_aligns_wide_characters():
    r = compare([byte_tokenizer()], {"英语": "ab", "zh": "中"}, reference="英语")
    lines = [line for line in r.format("table").splitlines() if line.startswith(("英语", "zh"))]
    assert len(lines) == 2
    # each row's columns line up when CJK labels count as two cells wide
    widths = [sum(2 if "\u4e00" <= c <= "\u9fff" else 1 for c in line) for line in lines]
    assert widths[0] == widths[1]


def test_plot_writes_png(tmp_path):
    pytest.importorskip("matplotlib")
    r = compare(["gpt2", byte_tokenizer()], HAND_TEXTS)
    out = plot(r, tmp_path / "chart.png")
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_without_matplotlib_says_what_to_install(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    r = compare([byte_tokenizer()], HAND_TEXTS)
    with pytest.raises(ImportError, match=r"tokenforge\[plot\]"):
        plot(r, tmp_path / "chart.png")


def _cli(argv):
    p = argparse.ArgumentParser(prog="tokenforge")
    sub = p.add_subparsers(dest="command", required=True)
    register_compare(sub)
    args = p.parse_args(argv)
    return args.func(args)


def test_cli_compare_files_json(tmp_path, capsys):
    (tmp_path / "en.txt").write_text("hello world", encoding="utf-8")
    (tmp_path / "zh.txt").write_text("你好，世界", encoding="utf-8")
    assert _cli(["compare", "cl100k_base", "o200k_base", "--text", str(tmp_path / "en.txt"),
                 str(tmp_path / "zh.txt"), "--format", "json"]) == 0
    d = json.loads(capsys.readouterr().out)
    tokens = {(x["tokenizer"], x["text"]): x["tokens"] for x in d["rows"]}
    enc = {n: tokenforge.get_encoding(n) for n in ("cl100k_base", "o200k_base")}
    assert tokens == {(n, t): len(enc[n].encode_ordinary(s)) for n in enc
                      for t, s in (("en", "hello world"), ("zh", "你好，世界"))}


def test_cli_compare_default_udhr_with_plot(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    out = tmp_path / "c.png"
    assert _cli(["compare", "gpt2", "--format", "markdown", "--plot", str(out)]) == 0
    text = capsys.readouterr().out
    assert all(f"| {lang} | gpt2 |" in text for lang in UDHR_LANGS)
    assert out.read_bytes()[:4] == b"\x89PNG"


def test_cli_compare_rejects_unknown_format():
    with pytest.raises(SystemExit):
        _cli(["compare", "gpt2", "--format", "xml"])

"""The native word counter of the SentencePiece trainers against the Python reference.

``train_unigram`` and ``train_sentencepiece_bpe`` count ``▁``-words of normalized lines;
the native core does a whole batch of lines in one call (``_core.WordCounter``), and worker
processes hand their counts to the parent as its packed bytes.
It must give the reference's counts, line-end counts, skipped-line count and the order in
which words were first seen (the trainers' inputs), for every normalization rule.
"""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tokenforge
from tokenforge import _native, pretokenizers
from tokenforge.corpus import embedded_corpus
from tokenforge.sentencepiece.constants import SPACE
from tokenforge.errors import TrainingError
from tokenforge.sentencepiece.normalizer import SentencePieceNormalizer
from tokenforge.sentencepiece.proto import read_model
from tokenforge.trainers.counting import LineSplitter, count_lines

pytestmark = pytest.mark.skipif(not _native.available(), reason="the native core is not built")

RULES = ("nmt_nfkc", "identity", "nmt_nfkc_cf", "nfkc")

# letters, spaces of several kinds, the word mark itself, fullwidth and compatibility forms,
# combining marks, CJK, RTL, emoji with ZWJ, control characters and a lone surrogate
ALPHABET = st.sampled_from(list("ab Zé\u00a0\u3000\t▁ＡＢ１ﬁ①\u0301\u200d中文字あア한\u05d0\u0627🙂👨\x00\x07\x7f") + ["\ud800"])


def _corpus_text() -> str:
    """The embedded corpus: every language's training text."""
    return "".join(lang.train.read_text(encoding="utf-8") for lang in embedded_corpus())


def _splitter(rules: str, **kw) -> LineSplitter:
    pre = pretokenizers.Split(SPACE, "merged_with_next", regex_pattern=False)
    return LineSplitter(SentencePieceNormalizer(rules).to_dict(), pre.to_dict(), **kw)


def _both(splitter: LineSplitter, lines: list[str]):
    native = (Counter(), Counter() if splitter.line_ends else None)
    ref = (Counter(), Counter() if splitter.line_ends else None)
    k_native = splitter.count(lines, *native)
    k_ref = splitter._count_lines_py(lines, *ref)
    return (native, k_native), (ref, k_ref)


def _assert_same(native, ref):
    (counts, ends), skipped = native
    (ref_counts, ref_ends), ref_skipped = ref
    assert counts == ref_counts
    assert list(counts) == list(ref_counts)  # first-seen order: the trainers' input order
    assert skipped == ref_skipped
    if ref_ends is not None:
        assert ends == ref_ends
        assert list(ends) == list(ref_ends)


def test_the_sentencepiece_splitter_counts_natively():
    splitter = _splitter("nmt_nfkc")
    splitter.count([], Counter())
    assert splitter._spm_native is not None
    assert splitter.new_counter() is not None


@pytest.mark.parametrize("rules", RULES)
def test_native_counts_equal_the_reference_on_the_embedded_corpus(rules):
    lines = _corpus_text().splitlines()
    assert len(lines) > 1000
    native, ref = _both(_splitter(rules, max_line_bytes=4192, line_ends=True), lines)
    _assert_same(native, ref)
    assert sum(native[0][0].values()) > 10000


@settings(max_examples=300, deadline=None)
@given(lines=st.lists(st.text(ALPHABET, max_size=30), max_size=12), rules=st.sampled_from(RULES),
       limit=st.sampled_from([None, 1, 5, 12]), line_ends=st.booleans())
def test_native_counts_equal_the_reference_on_any_lines(lines, rules, limit, line_ends):
    native, ref = _both(_splitter(rules, max_line_bytes=limit, line_ends=line_ends), lines)
    _assert_same(native, ref)


def test_edge_lines():
    lines = ["", " ", "   ", "▁", "▁▁x▁", "a▁b", "  two  spaces  ", "\ud800", "x" * 5000, "é" * 2097, "é" * 2096]
    native, ref = _both(_splitter("nmt_nfkc", max_line_bytes=4192, line_ends=True), lines)
    _assert_same(native, ref)
    assert native[1] == 2  # 5000 bytes, and 2097 two-byte characters (4194 bytes); 4192 bytes is kept
    assert native[0][0]["▁" + "é" * 2096] == 1


def test_files_count_the_same_with_any_worker_count(tmp_path):
    text = _corpus_text()
    path = tmp_path / "corpus.txt"
    path.write_text(text * 3, encoding="utf-8")
    splitter = _splitter("nmt_nfkc", max_line_bytes=4192, line_ends=True)
    one = count_lines([path], splitter, workers=1, chunk_bytes=1 << 16)
    two = count_lines([path], splitter, workers=2, chunk_bytes=1 << 16)
    ref, ref_ends = Counter(), Counter()
    splitter._count_lines_py(text.splitlines() * 3, ref, ref_ends)
    assert one == two == ref
    assert list(one) == list(ref)  # in file order (workers hand back ranges as they finish)
    assert one.line_ends == two.line_ends == ref_ends


def test_packed_counts_merge_to_the_same_table():
    splitter = _splitter("nmt_nfkc", max_line_bytes=4192, line_ends=True)
    lines = _corpus_text().splitlines()
    half = len(lines) // 2
    whole, first, second = splitter.new_counter(), splitter.new_counter(), splitter.new_counter()
    assert splitter.count_into(whole, lines) == splitter.count_into(first, lines[:half]) + splitter.count_into(
        second, lines[half:])
    merged = splitter.new_counter()
    merged.merge(first.pack())
    merged.merge(second.pack())
    assert merged.to_dicts() == whole.to_dicts()
    assert [list(d) for d in merged.to_dicts()] == [list(d) for d in whole.to_dicts()]
    assert len(merged) == len(whole.to_dicts()[0]) > 1000


def test_bad_arguments_raise():
    from tokenforge import _native

    normalizer = SentencePieceNormalizer("nmt_nfkc").native_normalizer()
    counter = _native.core().WordCounter()
    with pytest.raises(TypeError):
        counter.add_lines(normalizer, ["ok", 3], 0, False)
    with pytest.raises(TypeError):
        counter.add_lines(normalizer, "not a list", 0, False)
    with pytest.raises(TypeError):
        counter.add_lines("not a normalizer", ["ok"], 0, False)
    with pytest.raises(ValueError, match="max_line_bytes"):
        counter.add_lines(normalizer, ["ok"], -1, False)
    assert counter.to_dicts() == ({}, {})
    counter.add_lines(normalizer, ["a b", "a"], 0, True)
    packed = counter.pack()
    for bad in (b"", b"\x01", packed[:-1], packed[:8] + b"\xff" * 3, b"\xff" * 16):
        with pytest.raises(ValueError, match="pack"):
            _native.core().WordCounter().merge(bad)
    with pytest.raises(TypeError):
        counter.merge("not bytes")
    assert counter.to_dicts() == ({"▁a": 2, "▁b": 1}, {"▁b": 1, "▁a": 1})


# --- input_sentence_size: a uniform, reproducible sample of the lines ---------------------------

def _lines_file(tmp_path, n: int = 20000):
    path = tmp_path / "lines.txt"
    path.write_text("".join(f"line {i} word{i % 97}\n" for i in range(n)), encoding="utf-8")
    return path


def _counted_lines(counts) -> int:
    return sum(counts.line_ends.values())  # each counted line ends once


def test_a_sample_keeps_about_the_asked_number_of_lines(tmp_path):
    path = _lines_file(tmp_path)
    splitter = _splitter("nmt_nfkc", max_line_bytes=4192, line_ends=True)
    every = count_lines([path], splitter, workers=1)
    assert _counted_lines(every) == 20000
    sample = count_lines([path], splitter, workers=1, sample_lines=2000, chunk_bytes=1 << 14)
    assert 1800 <= _counted_lines(sample) <= 2200  # binomial(20000, 0.1): sd 42
    # uniform over the file: the first and the second half each give about half
    early = sum(n for w, n in sample.items() if w.startswith("▁") and w[1:].isdigit() and int(w[1:]) < 10000)
    late = sum(n for w, n in sample.items() if w.startswith("▁") and w[1:].isdigit() and int(w[1:]) >= 10000)
    assert 0.8 < early / late < 1.25


def test_a_sample_is_the_same_for_any_worker_count_and_changes_with_the_seed(tmp_path):
    path = _lines_file(tmp_path, 60000)  # > 1 MiB: the workers run in processes
    splitter = _splitter("nmt_nfkc", max_line_bytes=4192, line_ends=True)
    one = count_lines([path], splitter, workers=1, sample_lines=5000, chunk_bytes=1 << 16)
    two = count_lines([path], splitter, workers=2, sample_lines=5000, chunk_bytes=1 << 16)
    other = count_lines([path], splitter, workers=2, sample_lines=5000, chunk_bytes=1 << 16, sample_seed=1)
    assert one == two and one.line_ends == two.line_ends
    assert other != one
    assert abs(_counted_lines(other) - 5000) < 500


def test_a_sample_of_more_lines_than_the_files_hold_counts_every_line(tmp_path):
    path = _lines_file(tmp_path, 3000)
    splitter = _splitter("nmt_nfkc", max_line_bytes=4192, line_ends=True)
    assert count_lines([path], splitter, sample_lines=3000) == count_lines([path], splitter)


def test_sampling_arguments_are_checked(tmp_path):
    path = _lines_file(tmp_path, 10)
    splitter = _splitter("nmt_nfkc", max_line_bytes=4192)
    with pytest.raises(TrainingError, match="input_sentence_size"):
        count_lines([path], splitter, sample_lines=-1)
    with pytest.raises(TrainingError, match="iterator"):
        count_lines([], splitter, iterator=iter(["a b"]), sample_lines=5)


@pytest.mark.filterwarnings("ignore::tokenforge.trainers.LongInputWarning")
def test_train_unigram_with_input_sentence_size_records_it_in_the_model(tmp_path):
    import sentencepiece as spm

    path = tmp_path / "corpus.txt"
    path.write_text(_corpus_text(), encoding="utf-8")
    out = tmp_path / "sampled.model"
    tok = tokenforge.train_unigram([path], vocab_size=5000, input_sentence_size=2000, show_progress=False, out=out)
    full = tokenforge.train_unigram([path], vocab_size=5000, show_progress=False)
    assert tok.get_vocab() != full.get_vocab()  # trained on a sample
    assert read_model(out).trainer_spec.input_sentence_size == 2000
    sp = spm.SentencePieceProcessor(model_file=str(out))
    assert sp.encode("Hello world") == tok.encode("Hello world")

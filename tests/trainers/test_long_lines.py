"""Training memory is bounded by the chunk size, whatever the length of the lines.

sentencepiece's trainer skips a sentence longer than ``max_sentence_length``
bytes (4192 by default, ``trainer_interface.cc``); train_unigram and
train_sentencepiece_bpe follow that rule and report what they skipped.
train_wordpiece skips a word (no white space, punctuation or CJK ideograph)
longer than ``max_word_length`` bytes: WordPiece encodes any word over 100
characters as ``[UNK]``. Everything else streams through in blocks, with the
same counts as reading the whole text at once.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
import tracemalloc
import unicodedata
import warnings
from collections import Counter
from pathlib import Path

import pytest

import tokenforge
from tokenforge import pretokenizers
from tokenforge.corpus import embedded_corpus
from tokenforge.errors import TrainingError
from tokenforge.normalizers import BertNormalizer
from tokenforge.sentencepiece.constants import SPACE
from tokenforge.sentencepiece.normalizer import SentencePieceNormalizer
from tokenforge.sentencepiece.proto import read_model
from tokenforge.trainers import LongInputWarning
from tokenforge.trainers.counting import LineSplitter, count_lines
from tokenforge.trainers.wordpiece import WordPieceTrainer

LONG_BYTES = 40 << 20  # the overlong line / word of the memory tests
#: Address space for a training child: a few times what it needs (about 200 MB), and far below
#: what holding the long line would take (sentencepiece-style trainers used ~57x the line,
#: WordPiece ~20x).
AS_LIMIT = 640 << 20


def _english() -> str:
    return embedded_corpus()[0].train.read_text(encoding="utf-8")


def _bert_splitter(**kw) -> LineSplitter:
    return LineSplitter(BertNormalizer().to_dict(), pretokenizers.BertPreTokenizer().to_dict(), True, **kw)


def _spm_splitter(**kw) -> LineSplitter:
    pre = pretokenizers.Split(SPACE, "merged_with_next", regex_pattern=False)
    return LineSplitter(SentencePieceNormalizer("nmt_nfkc").to_dict(), pre.to_dict(), **kw)


# -- the memory bound, end to end, in a child process under an address-space limit ----------------

_CHILD = textwrap.dedent(
    """
    import resource, sys, warnings
    limit = int(sys.argv[1])
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    import tokenforge, tokenforge.trainers
    kind, path, out = sys.argv[2:5]
    category = getattr(tokenforge.trainers, "LongInputWarning", Warning)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        quiet = dict(show_progress=False, workers=1)
        if kind == "wordpiece":
            tok = tokenforge.train_wordpiece([path], vocab_size=800, **quiet)
            tok.save(out, format="bert_vocab")
        elif kind == "unigram":
            tokenforge.train_unigram([path], vocab_size=1000, num_threads=1, out=out, **quiet)
        else:
            tokenforge.train_sentencepiece_bpe([path], vocab_size=1000, out=out, **quiet)
    for w in caught:
        if issubclass(w.category, category):
            print("WARNING", w.message)
    """
)


def _train_in_child(kind: str, path: Path, out: Path) -> list[str]:
    env = dict(os.environ, MALLOC_ARENA_MAX="2", OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, str(AS_LIMIT), kind, str(path), str(out)],
        capture_output=True, text=True, timeout=600, env=env,
    )
    assert proc.returncode == 0, f"training failed under a {AS_LIMIT >> 20} MB address-space limit:\n{proc.stderr[-3000:]}"
    return [line for line in proc.stdout.splitlines() if line.startswith("WARNING")]


@pytest.fixture(scope="module")
def corpus_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("long") / "corpus.txt"
    path.write_text(_english(), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def long_line_file(tmp_path_factory) -> Path:
    """The English corpus with one line of 40 MB (ordinary words and spaces) in the middle."""
    en = _english()
    line = " ".join(en.split())
    path = tmp_path_factory.mktemp("long") / "long_line.txt"
    with open(path, "w", encoding="utf-8") as f:
        f.write(en)
        f.write(" ".join([line] * (LONG_BYTES // (len(line) + 1) + 1)) + "\n")
        f.write(en)
    return path


@pytest.fixture(scope="module")
def long_word_file(tmp_path_factory) -> Path:
    """The English corpus with a 40 MB "word" (letters, no space or punctuation) in the middle."""
    en = _english()
    letters = re.sub(r"[^A-Za-z]", "", en)
    path = tmp_path_factory.mktemp("long") / "long_word.txt"
    with open(path, "w", encoding="utf-8") as f:
        f.write(en)
        f.write(letters * (LONG_BYTES // len(letters) + 1) + "\n")
        f.write(en)
    return path


linux_only = pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_AS is enforced on Linux")


@linux_only
@pytest.mark.parametrize("kind", ["unigram", "spm-bpe"])
def test_sentencepiece_trainers_skip_an_overlong_line_in_bounded_memory(kind, long_line_file, corpus_file, tmp_path):
    out = tmp_path / "long.model"
    warned = _train_in_child(kind, long_line_file, out)
    # the corpus twice (its lines are all short) and the long line, which is skipped
    assert warned == ["WARNING skipped 1 line(s) longer than max_sentence_length=4192 bytes "
                      "(as sentencepiece's trainer skips them); raise max_sentence_length to train on them"]
    twice = tmp_path / "twice.txt"
    twice.write_text(corpus_file.read_text(encoding="utf-8") * 2, encoding="utf-8")
    ref = tmp_path / "ref.model"
    quiet = dict(vocab_size=1000, show_progress=False, workers=1, out=ref)
    if kind == "unigram":
        tokenforge.train_unigram([twice], num_threads=1, **quiet)
    else:
        tokenforge.train_sentencepiece_bpe([twice], **quiet)
    assert out.read_bytes() == ref.read_bytes()


@linux_only
def test_wordpiece_skips_a_huge_word_quickly_in_bounded_memory(long_word_file, corpus_file, tmp_path):
    out = tmp_path / "vocab.txt"
    warned = _train_in_child("wordpiece", long_word_file, out)
    assert warned == ["WARNING skipped 1 word(s) longer than max_word_length=4192 bytes (WordPiece encodes "
                      "any word over 100 characters as [UNK]); raise max_word_length to train on them"]
    ref = tokenforge.train_wordpiece(
        [corpus_file, corpus_file], vocab_size=800, show_progress=False, workers=1
    )
    assert out.read_text(encoding="utf-8").splitlines() == sorted(ref.get_vocab(), key=ref.get_vocab().get)


def test_a_one_line_file_is_counted_a_block_at_a_time(tmp_path):
    """A 2 MB file that is a single line: counting holds a block of it, never the line."""
    line = " ".join(_english().split())
    path = tmp_path / "one_line.txt"
    path.write_text(" ".join([line] * 20) + "\n", encoding="utf-8")
    size = path.stat().st_size
    for splitter in (_bert_splitter(), _spm_splitter(max_line_bytes=4192)):
        ref = Counter()
        skipped = splitter.count(path.read_text(encoding="utf-8").splitlines(), ref)
        tracemalloc.start()
        try:
            counts = count_lines([path], splitter, chunk_bytes=1 << 16, workers=1)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert counts == ref and counts.skipped == skipped
        # blocks of 64 KB: a few MB at most (holding the line took over 15 times its size)
        assert peak < size, f"peak {peak} bytes for a {size}-byte line"


# -- the rules -------------------------------------------------------------------------------------


def _lines_of_length(tmp_path: Path) -> Path:
    """Corpus lines and lines of 4191 to 4194 bytes (two-byte characters count twice)."""
    long = ["a" * 4192, "a" * 4193, "é" * 2096, "é" * 2097, "a" + "é" * 2096, "b " * 2095 + "b"]
    lines = _english().splitlines()
    path = tmp_path / "lengths.txt"
    path.write_text("\n".join(lines[:600] + long + lines[600:]) + "\n", encoding="utf-8")
    return path


def test_the_sentence_length_rule_is_strictly_longer_than_in_utf8_bytes(tmp_path):
    path = _lines_of_length(tmp_path)
    counts = count_lines([path], _spm_splitter(max_line_bytes=4192), workers=1)
    assert counts.skipped == 3  # a*4193, é*2097, a+é*2096; 4192 bytes and fewer stay
    assert counts["▁" + "a" * 4192] == 1 and counts["▁" + "é" * 2096] == 1
    with pytest.warns(LongInputWarning, match=r"skipped 3 line\(s\) longer than max_sentence_length=4192 bytes"):
        tokenforge.train_unigram([path], vocab_size=600, show_progress=False, workers=1)


@pytest.mark.parametrize("limit", [4192, 100])
def test_the_same_lines_are_skipped_as_by_sentencepiece(limit, tmp_path):
    pytest.importorskip("sentencepiece")
    path = _lines_of_length(tmp_path)
    script = (
        "import sentencepiece as spm, sys; spm.SentencePieceTrainer.train(input=sys.argv[1], "
        "model_prefix=sys.argv[2], vocab_size=300, model_type='bpe', max_sentence_length=int(sys.argv[3]))"
    )
    proc = subprocess.run([sys.executable, "-c", script, str(path), str(tmp_path / "ref"), str(limit)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    found = re.search(r"Skipped (\d+) too long sentences", proc.stderr)
    assert found, "sentencepiece did not report skipping anything"
    counts = count_lines([path], _spm_splitter(max_line_bytes=limit), workers=1)
    assert counts.skipped == int(found.group(1))


def test_the_model_file_records_max_sentence_length(tmp_path, corpus_file):
    for train in (tokenforge.train_unigram, tokenforge.train_sentencepiece_bpe):
        out = tmp_path / f"{train.__name__}.model"
        with pytest.warns(LongInputWarning, match=r"skipped 10 line\(s\) longer than max_sentence_length=300"):
            train([corpus_file], vocab_size=600, max_sentence_length=300, out=out, show_progress=False, workers=1)
        assert read_model(out).trainer_spec.max_sentence_length == 300


def test_nothing_left_but_overlong_input_is_an_error(tmp_path):
    path = tmp_path / "one.txt"
    path.write_text("word " * 2000 + "\n\n", encoding="utf-8")
    for train in (tokenforge.train_unigram, tokenforge.train_sentencepiece_bpe):
        with pytest.raises(TrainingError, match=r"1 line\(s\) longer than max_sentence_length=4192 bytes were skipped"):
            train([path], vocab_size=100, show_progress=False)
    path.write_text("x" * 5000 + "\n", encoding="utf-8")
    with pytest.raises(TrainingError, match=r"1 word\(s\) longer than max_word_length=4192 bytes were skipped"):
        tokenforge.train_wordpiece([path], vocab_size=100, show_progress=False)


def test_the_limits_apply_to_strings_too_and_can_be_raised():
    text = ["hello world " * 400, "hello there", "a" + "b" * 5000]
    with pytest.warns(LongInputWarning, match=r"skipped 2 line\(s\)"):
        tokenforge.train_unigram(iterator=text, vocab_size=40, show_progress=False)
    with pytest.warns(LongInputWarning, match=r"skipped 1 word\(s\)"):
        tok = tokenforge.train_wordpiece(iterator=text, vocab_size=40, show_progress=False)
    assert "a" not in tok.get_vocab()  # only the long word has an "a"
    with warnings.catch_warnings():
        warnings.simplefilter("error", LongInputWarning)
        tok = tokenforge.train_wordpiece(iterator=text, vocab_size=40, max_word_length=None, show_progress=False)
    assert "a" in tok.get_vocab()


@pytest.mark.parametrize("bad", [0, -1, True, 1.5, "4192", 2**31])
def test_limits_are_checked(bad):
    with pytest.raises(TrainingError, match="max_sentence_length"):
        tokenforge.train_unigram(iterator=["a b"], vocab_size=40, max_sentence_length=bad, show_progress=False)
    with pytest.raises(TrainingError, match="max_word_length"):
        tokenforge.train_wordpiece(iterator=["a b"], vocab_size=40, max_word_length=bad, show_progress=False)


# -- streaming gives the counts of the whole text ----------------------------------------------


def _varied_text() -> str:
    """Every embedded language, plus what a cut must not break: CRLF and other line breaks,
    combining marks, runs and lines longer than the limits below, a line with no break at all."""
    parts = ["\n".join(lang.train.read_text(encoding="utf-8").splitlines()[:40]) for lang in embedded_corpus()]
    extra = [
        "e\u0301" * 300 + " cafe\u0301\r\nnext\u2028line\x0bvt\x1cfs",
        "Σ." * 200 + "ΑΣ:Α word" * 50,
        "x" * 700 + "." + "y" * 90 + "," + "z" * 2000,
        "中文" * 400 + "かな" * 300 + "カタカナ" * 200,
        "\u0e20\u0e32\u0e29\u0e32\u0e44\u0e17\u0e22" * 120,
    ]
    return "\n".join(parts + extra) + "\nno newline at the end " + "w" * 900


@pytest.mark.parametrize(
    "make",
    [
        lambda: _bert_splitter(),
        lambda: _bert_splitter(max_word_bytes=300),
        lambda: _spm_splitter(),
        lambda: _spm_splitter(max_line_bytes=500),
    ],
    ids=["bert", "bert-words-300", "spm", "spm-lines-500"],
)
def test_counts_do_not_depend_on_the_chunk_size(make, tmp_path):
    text = _varied_text()
    files = {"lines": text, "one line": text.replace("\n", " ").replace("\r", " ")}
    for name, content in files.items():
        path = tmp_path / f"{name}.txt"
        path.write_bytes(content.encode("utf-8"))
        ref = Counter()
        skipped = make().count(content.splitlines(), ref)
        for chunk in (7, 333, 1 << 22):
            got = count_lines([path], make(), chunk_bytes=chunk, workers=1)
            assert got == ref, (name, chunk)
            assert got.skipped == skipped, (name, chunk)
    assert skipped > 0 or make().unit_limit() is None


def test_bert_cuts_only_where_every_word_ends():
    """Each character a block may be cut after ends every word in BERT's pipeline, so the
    pieces of the two sides are the pieces of the whole."""
    splitter = _bert_splitter()
    norm = BertNormalizer()
    pre = pretokenizers.BertPreTokenizer()
    breaks = re.compile(f"[{splitter.breaks()}]")
    chars = [chr(c) for c in range(0x30000) if not 0xD800 <= c < 0xE000 and breaks.match(chr(c))]
    assert len(chars) > 20000  # CJK ideographs, punctuation, spaces, line breaks
    for c in chars:
        assert unicodedata.combining(c) == 0, c
        text = "ab" + c + "cd"
        pieces = pre.split(norm.normalize_str("\n".join(text.splitlines())))
        assert pieces[0] == "ab" and pieces[-1] == "cd", (hex(ord(c)), pieces)


# -- WordPiece merges are linear in the word length -----------------------------------------------

_LONG_WORD_CHILD = textwrap.dedent(
    """
    import re, sys
    from tokenforge.corpus import embedded_corpus
    from tokenforge.trainers.wordpiece import WordPieceTrainer
    en = embedded_corpus()[0].train.read_text(encoding="utf-8")
    word = re.sub(r"[^a-z]", "", en.lower()) * 13  # over a million letters, no space
    trainer = WordPieceTrainer(vocab_size=400, special_tokens=["[UNK]"], show_progress=False)
    trainer.train_from_counts({word: 1, "hello": 3})
    print(len(trainer.merges))
    """
)


def test_wordpiece_training_on_a_long_word_is_not_quadratic():
    # a few seconds; a merge used to search the word's old pairs once per new pair (minutes)
    proc = subprocess.run([sys.executable, "-c", _LONG_WORD_CHILD], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert int(proc.stdout) > 300


def test_native_wordpiece_equals_the_reference_on_long_words():
    import random

    rng = random.Random(5)
    en = re.sub(r"[^a-z]", "", _english().lower())
    counts = {en[i : i + n]: rng.randint(1, 4) for i, n in ((0, 2500), (9000, 1800), (20000, 3000))}
    counts.update({w: rng.randint(1, 9) for w in _english().lower().split()[:3000] if w.isalpha()})
    runs = []
    for backend in ("auto", "python"):
        t = WordPieceTrainer(vocab_size=400, special_tokens=["[UNK]"], show_progress=False, backend=backend)
        model = t.train_from_counts(counts)
        runs.append((t.merges, model.get_vocab()))
    assert runs[0] == runs[1]

"""The trainers' API: empty input is a TrainingError (naming the files when there are
files), the output path check, and the vocabulary-size report of every family."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

import tokenforge
from tokenforge.errors import TrainingError
from tokenforge.trainers import NoTrainingDataError, VocabReport, check_output_path
from tokenforge.trainers.bpe import BPETrainer
from tokenforge.trainers.spm_bpe import SentencePieceBPETrainer
from tokenforge.trainers.unigram import UnigramTrainer
from tokenforge.trainers.wordpiece import WordPieceTrainer

TEXT = "hello world, the quick brown fox jumps over the lazy dog\nanother line of text\n" * 3


def test_bpe_on_an_empty_file_names_it(tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    with pytest.raises(NoTrainingDataError, match=f"no text to train on in {empty}: the file is empty"):
        BPETrainer(300, show_progress=False).train(empty)
    other = tmp_path / "other.txt"
    other.write_bytes(b"")
    with pytest.raises(TrainingError, match="the files are empty") as info:
        BPETrainer(300, show_progress=False).train([empty, other])
    assert str(empty) in str(info.value) and str(other) in str(info.value)


def test_bpe_on_special_tokens_only_says_so(tmp_path):
    only = tmp_path / "only.txt"
    only.write_text("<|endoftext|>" * 3, encoding="utf-8")
    with pytest.raises(TrainingError, match="nothing but special tokens"):
        BPETrainer(300, special_tokens=["<|endoftext|>"], show_progress=False).train(only)
    with pytest.raises(TrainingError, match="nothing but special tokens"):
        BPETrainer(300, special_tokens=["<|endoftext|>"]).train_from_iterator(["<|endoftext|>"])


@pytest.mark.parametrize("texts", [[], [""], ["", ""]])
def test_bpe_on_no_text_is_an_error(texts):
    with pytest.raises(TrainingError, match="no text to train on"):
        BPETrainer(300).train_from_iterator(texts)


def test_bpe_on_a_single_character_still_trains():
    tok = BPETrainer(300).train_from_iterator(["a"])  # text, just nothing to merge
    assert len(tok) == 256 and BPETrainer(300).num_merges == 44


@pytest.mark.parametrize("trainer", [
    WordPieceTrainer(100, special_tokens=["[UNK]"], show_progress=False),
    UnigramTrainer(100, show_progress=False),
    SentencePieceBPETrainer(100, show_progress=False),
])
def test_the_pipeline_trainers_raise_no_training_data(trainer):
    with pytest.raises(NoTrainingDataError):
        trainer.train_from_counts({})
    with pytest.raises(TrainingError):  # (a TrainingError, as before)
        trainer.train_from_counts({"": 3})


def test_wordpiece_reports_an_early_stop():
    t = WordPieceTrainer(5000, special_tokens=["[UNK]"], show_progress=False)
    model = t.train_from_counts({"hello": 3, "world": 2, "help": 1})
    assert t.last_report == VocabReport(5000, model.vocab_size, len(t.merges))
    assert t.last_report.stopped_early and model.vocab_size < 5000
    small = WordPieceTrainer(20, special_tokens=["[UNK]"], show_progress=False, merge="score")
    assert small.train_from_counts({"hello": 3, "world": 2, "help": 1}).vocab_size == 20
    assert not small.last_report.stopped_early


def test_unigram_reports_an_early_stop():
    counts = {"▁low": 5, "▁lower": 2, "▁newest": 6, "▁widest": 3, "▁new": 4}
    t = UnigramTrainer(5000, show_progress=False)
    model = t.train_from_counts(counts)
    r = t.last_report
    assert r.stopped_early and r.vocab_size == model.vocab_size < 5000 and r.vocab_size_requested == 5000
    t = UnigramTrainer(12, show_progress=False)
    assert t.train_from_counts(counts).vocab_size == 12 and not t.last_report.stopped_early


def test_sentencepiece_bpe_reports_an_early_stop():
    t = SentencePieceBPETrainer(5000, special_tokens=[], show_progress=False)
    model = t.train_from_counts({"▁low": 5, "▁lower": 2, "▁newest": 6})
    assert t.last_report.stopped_early and t.last_report.vocab_size == model.vocab_size < 5000


# -- the output path ---------------------------------------------------------------------------


def test_check_output_path(tmp_path):
    assert check_output_path(tmp_path / "t.json") == str(tmp_path / "t.json")
    missing = tmp_path / "no" / "t.json"
    with pytest.raises(TrainingError, match=f"cannot write {missing}: the folder {missing.parent} does not exist"):
        check_output_path(missing)
    with pytest.raises(TrainingError, match="it is a folder"):
        check_output_path(tmp_path)
    # a folder format is created with its parents
    assert check_output_path(tmp_path / "a" / "b", "gpt2") == str(tmp_path / "a" / "b")
    (tmp_path / "file").write_text("x")
    with pytest.raises(TrainingError, match="it is a file"):
        check_output_path(tmp_path / "file", "transformers")
    with pytest.raises(TrainingError, match="is not a folder"):
        check_output_path(tmp_path / "file" / "t.json")
    assert not list(tmp_path.glob(".*"))  # the writability probe leaves nothing behind


def test_check_output_path_refuses_an_unwritable_folder(tmp_path):
    if os.geteuid() != 0:
        folder = tmp_path / "ro"
        folder.mkdir()
        folder.chmod(0o500)
    else:
        folder = Path("/sys")
        try:
            with tempfile.TemporaryFile(dir=folder):
                pytest.skip("/sys is writable here")
        except OSError:
            pass
    with pytest.raises(TrainingError, match=f"cannot write {folder / 't.json'}: the folder {folder} is not writable"):
        check_output_path(folder / "t.json")
    with pytest.raises(TrainingError, match="not writable"):
        check_output_path(folder / "sub" / "dir", "gpt2")


@pytest.mark.parametrize("train", ["train_unigram", "train_sentencepiece_bpe"])
def test_sentencepiece_presets_check_out_before_training(tmp_path, train):
    calls = []
    text = ["hello world"] * 10

    def lines():
        calls.append(1)
        yield from text

    with pytest.raises(TrainingError, match="the folder .* does not exist"):
        getattr(tokenforge, train)(iterator=lines(), vocab_size=40, out=tmp_path / "missing" / "m.model",
                                   show_progress=False)
    assert calls == []  # refused before reading any text

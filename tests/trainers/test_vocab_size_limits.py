"""A vocabulary too large for 32-bit ids is refused before anything is allocated; a large one
that fits trains until nothing is left to merge (it never aborts the process)."""

from __future__ import annotations

import pytest

import tokenforge
from tokenforge.cli import main
from tokenforge.errors import TrainingError
from tokenforge.trainers import MAX_VOCAB_SIZE
from tokenforge.trainers.bpe import BPETrainer

TEXT = ["hello world, the quick brown fox"] * 5


@pytest.mark.parametrize("size", [2**62, MAX_VOCAB_SIZE + 1])
def test_every_trainer_refuses_a_vocabulary_beyond_32_bit_ids(size):
    with pytest.raises(TrainingError, match="32-bit"):
        BPETrainer(size, pattern=None)
    for train in (tokenforge.train_unigram, tokenforge.train_wordpiece, tokenforge.train_sentencepiece_bpe):
        with pytest.raises(TrainingError, match="32-bit"):
            train(iterator=TEXT, vocab_size=size, show_progress=False)


@pytest.mark.parametrize("size", [2**31, 2**32 - 1])
def test_a_huge_vocabulary_that_fits_stops_when_nothing_is_left(size):
    tok = BPETrainer(size, pattern=None).train_from_iterator(TEXT)
    assert 256 < len(tok) < 300  # every possible merge, then an early stop; no huge allocation
    assert tok.decode(tok.encode(TEXT[0])) == TEXT[0]


def test_cli_reports_the_limit(tmp_path, capsys):
    src = tmp_path / "a.txt"
    src.write_text("hello world\n", encoding="utf-8")
    assert main(["train", str(src), "--vocab-size", str(2**62), "--out", str(tmp_path / "t.json")]) == 1
    assert "32-bit" in capsys.readouterr().err

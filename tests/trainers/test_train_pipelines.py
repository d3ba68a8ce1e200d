"""Training the pipeline families end to end: files in, a tokenizer out that the
reference library loads and runs with the same ids, byte-identical across runs
and worker counts."""

from __future__ import annotations

import pytest

import tokenforge
from tokenforge.cli import main as cli_main
from tokenforge.corpus import embedded_corpus
from tokenforge.errors import TrainingError
from tokenforge.presets import train_sentencepiece_bpe, train_unigram, train_wordpiece


@pytest.fixture(scope="module")
def corpus_files():
    return [lang.train for lang in embedded_corpus()]


@pytest.fixture(scope="module")
def heldout():
    return [line for lang in embedded_corpus() for line in lang.heldout_text().splitlines()[:40]]


@pytest.mark.parametrize("train", [train_unigram, train_sentencepiece_bpe], ids=["unigram", "spm-bpe"])
def test_trained_model_file_gives_the_same_ids_in_sentencepiece(train, corpus_files, heldout, tmp_path):
    spm = pytest.importorskip("sentencepiece")
    out = tmp_path / "t.model"
    tok = train(corpus_files, vocab_size=4000, out=out, show_progress=False, workers=1)
    assert len(tok) == 4000
    sp = spm.SentencePieceProcessor(model_file=str(out))
    assert [tok.encode(x, disallowed_special=()) for x in heldout] == sp.encode(heldout)
    assert tokenforge.load(out).encode(heldout[3]) == tok.encode(heldout[3])
    again = tmp_path / "again.model"
    train(corpus_files, vocab_size=4000, out=again, show_progress=False, workers=2)
    assert again.read_bytes() == out.read_bytes()


def test_trained_wordpiece_vocab_gives_the_same_ids_in_hf(corpus_files, heldout, tmp_path):
    hf = pytest.importorskip("tokenizers")
    tok = train_wordpiece(corpus_files, vocab_size=6000, limit_alphabet=1000, min_frequency=2, show_progress=False)
    path = tmp_path / "vocab.txt"
    tok.save(str(path), format="bert_vocab")
    ref = hf.BertWordPieceTokenizer(str(path))
    assert [tok.encode(x) for x in heldout] == [e.ids for e in ref.encode_batch(heldout)]
    assert tokenforge.load(path).encode(heldout[0]) == tok.encode(heldout[0])
    again = train_wordpiece(corpus_files, vocab_size=6000, limit_alphabet=1000, min_frequency=2, show_progress=False, workers=1)
    assert again.get_vocab() == tok.get_vocab()


def test_training_on_nothing_raises(tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n  \n")
    for train in (train_unigram, train_sentencepiece_bpe, train_wordpiece):
        with pytest.raises(TrainingError):
            train([empty], vocab_size=100, show_progress=False)


def test_training_reads_iterators_too(heldout):
    english = [x for x in heldout if x.isascii() and x.strip()]
    tok = train_unigram(iterator=iter(english * 3), vocab_size=300, show_progress=False)
    assert tok.decode(tok.encode(english[0])) == " ".join(english[0].split())


@pytest.mark.parametrize("model,out", [("unigram", "u.model"), ("spm-bpe", "b.model"), ("wordpiece", "vocab.txt")])
def test_cli_trains_each_family_on_the_embedded_corpus(model, out, tmp_path, capsys):
    path = tmp_path / out
    assert cli_main(["train", "--model", model, "--vocab-size", "5000", "--out", str(path), "--json"]) == 0
    assert path.is_file()
    tok = tokenforge.load(path)
    assert isinstance(tok, tokenforge.Tokenizer) and len(tok) == 5000
    assert '"heldout"' in capsys.readouterr().out

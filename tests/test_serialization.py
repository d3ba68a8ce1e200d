"""load -> save -> load keeps the ids, and saving again gives the same bytes, for every
format that can express the tokenizer; conversions that cannot be exact say why."""

from __future__ import annotations

import hashlib

import pytest

import tokenforge
from tokenforge.errors import FileFormatError

SP_MODELS = ["albert_spiece.model", "hf_test_bpe.model", "hf_test_unigram.model", "mistral_v1_tokenizer.model",
             "spm_test_ja_unigram.model", "spm_test_unigram.model"]


def _sha(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _lines(shared_data):
    return (shared_data / "text" / "botchan.txt").read_text(encoding="utf-8").splitlines()[:150] + (
        shared_data / "text" / "wagahaiwa_nekodearu.txt").read_text(encoding="utf-8").splitlines()[:60]


@pytest.mark.parametrize("name", SP_MODELS)
def test_sentencepiece_model_round_trip(name, shared_data, tmp_path):
    spm = pytest.importorskip("sentencepiece")
    original = shared_data / "vocab" / "sentencepiece" / name
    tok = tokenforge.load(original)
    first = tmp_path / "a.model"
    tok.save(str(first), format="sentencepiece")
    lines = _lines(shared_data)
    ref = spm.SentencePieceProcessor(model_file=str(original))
    written = spm.SentencePieceProcessor(model_file=str(first))
    assert written.encode(lines) == ref.encode(lines)
    again = tokenforge.load(first)
    assert [again.encode(x, disallowed_special=()) for x in lines] == ref.encode(lines)
    second = tmp_path / "b.model"
    again.save(str(second), format="sentencepiece")
    assert _sha(second) == _sha(first)
    native = tmp_path / "n.json"
    tok.save(str(native))
    from_native = tokenforge.load(native)  # once: a comprehension would load it again per line
    assert [from_native.encode(x, disallowed_special=()) for x in lines[:50]] == ref.encode(lines[:50])


def test_tiktoken_file_round_trip_is_byte_identical(shared_data, tmp_path):
    original = shared_data / "vocab" / "tiktoken" / "cl100k_base.tiktoken"
    out = tmp_path / "x.tiktoken"
    tokenforge.load(original).save(str(out), format="tiktoken")
    assert _sha(out) == _sha(original)


def test_bert_vocab_txt_round_trip_is_byte_identical(shared_data, tmp_path):
    original = shared_data / "vocab" / "wordpiece" / "bert-base-uncased_vocab.txt"
    out = tmp_path / "vocab.txt"
    tokenforge.load(original).save(str(out), format="bert_vocab")
    assert _sha(out) == _sha(original)


def test_conversions_that_cannot_be_exact_say_why(shared_data, tmp_path):
    unigram = tokenforge.load(shared_data / "vocab" / "sentencepiece" / "spm_test_unigram.model")
    with pytest.raises(FileFormatError, match="tiktoken"):
        unigram.save(str(tmp_path / "u.tiktoken"), format="tiktoken")
    with pytest.raises(FileFormatError, match="WordPiece"):
        unigram.save(str(tmp_path / "vocab.txt"), format="bert_vocab")
    bert = tokenforge.load(shared_data / "vocab" / "wordpiece" / "bert-base-uncased_vocab.txt")
    with pytest.raises(FileFormatError, match="normalizer"):
        bert.save(str(tmp_path / "b.model"), format="sentencepiece")
    assert not any(tmp_path.iterdir())

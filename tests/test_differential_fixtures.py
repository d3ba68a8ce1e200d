"""The differential proof on the small sample shipped in tests/fixtures/differential,
so a clone without shared/data runs it too: the shipped encodings against tiktoken,
two SentencePiece models against sentencepiece, and a BERT vocab.txt against HF."""

from __future__ import annotations

import lzma

import pytest

import tokenforge
from _differential import ADVERSARIAL
from conftest import FIXTURES

DIR = FIXTURES / "differential"


@pytest.fixture(scope="module")
def texts():
    sample = (DIR / "sample.txt").read_bytes().decode("utf-8")
    return [sample] + sample.splitlines() + ADVERSARIAL


def _no_surrogates(items):
    return [t.encode("utf-16", "surrogatepass").decode("utf-16", "replace") for t in items]


@pytest.mark.parametrize("name", ["gpt2", "r50k_base", "p50k_base", "cl100k_base", "o200k_base"])
def test_shipped_encodings_match_tiktoken(name, texts):
    from _tiktoken_ref import reference

    ours = tokenforge.get_encoding(name)
    ref = reference(name)
    assert ours.encode_batch(texts, disallowed_special=()) == ref.encode_ordinary_batch(texts)
    assert [ours.encode(t, allowed_special="all") for t in texts[:50]] == [
        ref.encode(t, allowed_special="all") for t in texts[:50]
    ]


@pytest.mark.parametrize("model", ["spm_test_unigram.model", "hf_test_bpe.model"])
def test_sentencepiece_models_match_sentencepiece(model, texts, tmp_path):
    spm = pytest.importorskip("sentencepiece")
    path = tmp_path / model
    path.write_bytes(lzma.decompress((DIR / f"{model}.xz").read_bytes()))
    ours = tokenforge.load(path)
    ref = spm.SentencePieceProcessor(model_file=str(path))
    safe = _no_surrogates(texts)
    got = [ours.encode(t, disallowed_special=()) for t in safe]
    assert got == ref.encode(safe)
    assert [ours.decode(ids) for ids in got[:40]] == [ref.decode(ids) for ids in got[:40]]


def test_bert_chinese_vocab_matches_hf(texts, tmp_path):
    hf = pytest.importorskip("tokenizers")
    path = tmp_path / "vocab.txt"
    path.write_bytes(lzma.decompress((DIR / "bert-base-chinese_vocab.txt.xz").read_bytes()))
    ours = tokenforge.load(path, lowercase=False)
    ref = hf.BertWordPieceTokenizer(str(path), lowercase=False)
    safe = _no_surrogates(texts)
    assert [ours.encode(t, allowed_special="all") for t in safe] == [e.ids for e in ref.encode_batch(safe)]

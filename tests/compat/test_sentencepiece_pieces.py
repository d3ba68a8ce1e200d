"""The pieces (``out_type=str``, ``encode_full(...).tokens``) equal sentencepiece's.

An unknown piece is the *normalized* text it stands for, as in sentencepiece's
``SentencePieceText.pieces[i].piece`` (the original text is only its
``surface``): with an NFKC model, ``｜`` (U+FF5C) is the unknown piece ``|``.
Checked on sentencepiece's own test data and models (``tests/fixtures/
sentencepiece_suite``) with both backends.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import tokenforge
from tokenforge.compat.sentencepiece import SentencePieceProcessor

spm = pytest.importorskip("sentencepiece")

SUITE = Path(__file__).resolve().parents[1] / "fixtures" / "sentencepiece_suite"
MODELS = ["botchan_en_unigram_1000.model", "botchan_en_bpe_1000.model", "kyoto_ja_unigram_8000.model"]
TEXTS = ["a ｜ b", "Ａ｜Ｂ", "藤 x", "ﬃ 𠀋", "（株）カブシキ　ｶﾞｲｼｬ", "①②③ ㍻ ㌔", "ｈｅｌｌｏ　ｗｏｒｌｄ！", "I saw a girl with a telescope."]


def _lines() -> list[str]:
    lines = (SUITE / "botchan.txt").read_text(encoding="utf-8").splitlines()
    return TEXTS + lines[::7]


@pytest.mark.parametrize("backend", ["native", "python"])
@pytest.mark.parametrize("model", MODELS)
def test_pieces_of_unknown_text_are_normalized_like_sentencepiece(model, backend, monkeypatch):
    monkeypatch.setenv("TOKENFORGE_BACKEND", backend)
    path = str(SUITE / model)
    ref = spm.SentencePieceProcessor(model_file=path)
    ours = SentencePieceProcessor(model_file=path)
    tok = tokenforge.load(path)
    lines = _lines()
    want = ref.encode(lines, out_type=str)
    assert ours.encode(lines, out_type=str) == want
    assert [tok.encode_full(t).tokens for t in lines] == want
    assert ours.encode(lines) == ref.encode(lines)


def test_unknown_piece_is_the_normalized_text():
    ours = SentencePieceProcessor(model_file=str(SUITE / "botchan_en_unigram_1000.model"))
    assert ours.encode("a ｜ b", out_type=str) == ["▁a", "▁", "|", "▁b"]

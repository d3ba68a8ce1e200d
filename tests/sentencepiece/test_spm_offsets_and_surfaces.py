"""Token offsets and the text shown for unknown pieces, as sentencepiece and HF report them.

sentencepiece reports byte offsets into the original text: a token spans from where
its first character starts to where the next one starts. So the dummy-prefix ``▁``
is empty, a ``▁`` standing for a collapsed whitespace run covers the run, and of
several pieces made from one character (``ﬃ`` → ``f``, ``f``, ``i``; byte pieces)
only the last one covers it. An unknown piece shows its normalized text, in
sentencepiece (its piece; the original text is only its "surface") and in HF's
Unigram alike.
"""

from __future__ import annotations

import pytest

import tokenforge

spm = pytest.importorskip("sentencepiece")

MODELS = [
    "albert_spiece.model", "hf_test_bpe.model", "hf_test_unigram.model", "mistral_v1_tokenizer.model",
    "spm_test_ja_unigram.model", "spm_test_unigram.model",
]
TEXTS = [
    "Hello world", "  Hello   world  ", "ﬃ x", "a\u3000b", "①②", "é 東京", "e\u0301 x", "👩‍👩‍👧 ok", "x\n\ny",
    "   ", "", "Ａｂｃ１２３", "ﾀﾞ", "𠀋 unknown 龘", "\t tab  ", "ｶﾀｶﾅ  ㍻", "مرحبا  بالعالم",
]


def _char(text: str, byte: int) -> int:
    return len(text.encode("utf-8")[:byte].decode("utf-8", "ignore"))


def _reference(sp, text):
    return [
        (p.piece, _char(text, p.begin), _char(text, p.end))
        for p in sp.encode_as_proto(text).pieces
    ]


def _ours(tok, text):
    enc = tok.encode_full(text)
    return [(t, s, e) for t, (s, e) in zip(enc.tokens, enc.offsets)]


@pytest.fixture(scope="module", params=MODELS)
def pair(request, shared_data):
    path = shared_data / "vocab" / "sentencepiece" / request.param
    return tokenforge.load(path), spm.SentencePieceProcessor(model_file=str(path))


@pytest.mark.parametrize("text", TEXTS)
def test_offsets_and_surfaces_match_sentencepiece(pair, text):
    tok, sp = pair
    assert _ours(tok, text) == _reference(sp, text)


def test_offsets_match_sentencepiece_on_real_lines(pair, shared_data):
    tok, sp = pair
    lines = []
    for path in sorted((shared_data / "text").rglob("*.txt"))[:12]:
        lines += path.read_text(encoding="utf-8", errors="replace").splitlines()[:40]
    bad = [line for line in lines if _ours(tok, line) != _reference(sp, line)]
    assert not bad, bad[:3]


def test_unknown_pieces_show_hf_normalized_text(shared_data):
    tokenizers = pytest.importorskip("tokenizers")
    path = shared_data / "vocab" / "hf" / "albert-base-v2_spiece_unigram_tokenizer.json"
    hf = tokenizers.Tokenizer.from_file(str(path))
    tok = tokenforge.load(path)
    for text in ["Hello 𠀋 world", "龘 and Ａ", "e\u0301"]:
        ref = hf.encode(text)
        enc = tok.encode_full(text)
        assert (enc.ids, enc.tokens) == (ref.ids, ref.tokens)

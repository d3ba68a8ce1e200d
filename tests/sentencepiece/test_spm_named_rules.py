"""sentencepiece's named normalization rules, shipped: the same blobs and the same output."""

from __future__ import annotations

import pytest

from tokenforge.sentencepiece.charsmap import NAMED_CHARSMAPS, Charsmap
from tokenforge.sentencepiece.normalizer import SentencePieceNormalizer

spm = pytest.importorskip("sentencepiece")

TEXTS = ["  Hello\u3000 ﬃ  World ", "Ｈｅｌｌｏ ① ㍻ ｶﾀｶﾅ", "ẞtraße İstanbul ΣΑΣ", "\t tab\r\nline\x00\x1f ", "e\u0301 \u212b",
         "\u200b zero\u200cwidth\ufeff", "～ tilde ~", "", "   ", "ǅ ß ﬀ Ⅻ ⑳ ㈱"]


@pytest.mark.parametrize("name", ["nmt_nfkc", "nmt_nfkc_cf", "nfkc", "nfkc_cf", "identity"])
def test_named_rules_match_sentencepiece(name):
    assert name in NAMED_CHARSMAPS
    ref = spm.SentencePieceNormalizer(rule_name=name)
    ours = SentencePieceNormalizer(name)
    for text in TEXTS:
        assert ours.normalize_str(text) == ref.normalize(text), (name, text)


@pytest.mark.parametrize("name", ["nfkc", "nfkc_cf"])
def test_named_blobs_are_sentencepiece_builtin(name):
    from tokenforge.sentencepiece import proto

    spec = spm.SentencePieceNormalizer(rule_name=name).serialized_normalizer_spec()
    ns = proto.NormalizerSpec._decode(proto._Reader(spec, None), 0, len(spec), "normalizer_spec")
    assert Charsmap.named(name).blob == ns.precompiled_charsmap

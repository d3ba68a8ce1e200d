"""HF's Unigram byte fallback: an unknown run becomes <0xXX> pieces only when every one of its
bytes has a piece (else it is one unknown token), and each byte token spans the whole run."""

from __future__ import annotations

import json

import hypothesis.strategies as st
import pytest
from hypothesis import given, settings

import tokenforge

tokenizers = pytest.importorskip("tokenizers")

BASE = [["<unk>", 0.0], ["▁", -1.0], ["a", -2.0], ["b", -2.0], ["ab", -1.5]]
SOME_BYTES = BASE + [[f"<0x{b:02X}>", -5.0] for b in (0xE6, 0x97, 0xA5, 0xC3)]  # 日 yes, é half, æ no
ALL_BYTES = BASE + [[f"<0x{b:02X}>", -5.0] for b in range(256)]


def _pair(vocab):
    meta = {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": True}
    doc = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": None,
           "pre_tokenizer": meta, "post_processor": None, "decoder": meta,
           "model": {"type": "Unigram", "unk_id": 0, "vocab": vocab, "byte_fallback": True}}
    return tokenizers.Tokenizer.from_str(json.dumps(doc)), tokenforge.Tokenizer.from_dict(doc)


PAIRS = {"some": _pair(SOME_BYTES), "all": _pair(ALL_BYTES)}


@pytest.mark.parametrize("which", ["some", "all"])
@settings(max_examples=300, deadline=None)
@given(text=st.lists(st.sampled_from(["a", "b", "日", "é", "x", " ", "æ", "ab"]), max_size=10).map("".join))
def test_byte_fallback_matches_hf(which, text):
    hf, tok = PAIRS[which]
    want = hf.encode(text)
    got = tok.encode_full(text)
    assert (got.ids, got.tokens, got.offsets) == (want.ids, want.tokens, want.offsets)
    assert tok.encode(text) == want.ids
    assert tok.decode(want.ids) == hf.decode(want.ids)


def test_partial_bytes_fall_back_per_run():
    hf, tok = PAIRS["some"]
    assert tok.encode_full("ab日").tokens == ["▁", "ab", "<0xE6>", "<0x97>", "<0xA5>"]
    assert tok.encode_full("ab日é").tokens == ["▁", "ab", "日é"]  # é has no <0xA9>: the run is unknown

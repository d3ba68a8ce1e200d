"""The token page's token view shows the merge tree of byte-level BPE from an HF
``tokenizer.json`` as it does for tiktoken files: ranks are the lines of ``merges``."""

from __future__ import annotations

from pathlib import Path

import pytest

import tokenforge
from tokenforge.web.views import token_view


def _leaves(node) -> list[str]:
    return [node["hex"]] if not node["children"] else [h for c in node["children"] for h in _leaves(c)]


@pytest.fixture(scope="module")
def hf_gpt2(tmp_path_factory) -> tokenforge.Tokenizer:
    path = Path(tmp_path_factory.mktemp("hf")) / "tokenizer.json"
    tokenforge.get_encoding("gpt2").save(str(path), format="hf")
    return tokenforge.load(str(path))


def test_hf_byte_level_token_has_a_merge_tree_with_ranks(hf_gpt2):
    tid = hf_gpt2.token_to_id("Ġschool")
    v = token_view(hf_gpt2, tid)
    assert v["token"] == "␣school" and v["reached_by_merges"] is True
    (root,) = v["tree"]
    a, b = hf_gpt2.model.merges[root["rank"]]  # the rank is the merge's line
    assert a + b == "Ġschool" and v["rank"] == root["rank"]
    assert "".join(_leaves(root)) == b" school".hex()  # built up from single bytes
    # GPT-2: the HF merge list is tiktoken's ranks without the 256 byte tokens
    tk = token_view(tokenforge.get_encoding("gpt2"), tid)
    assert tk["rank"] == v["rank"] + 256


def test_sentencepiece_tokens_have_no_byte_tree(tmp_path):
    from _families import _xz

    tok = tokenforge.load(_xz(tmp_path, "hf_test_bpe.model"))
    v = token_view(tok, tok.token_to_id("▁the"))
    assert v["tree"] is None and v["rank"] is None

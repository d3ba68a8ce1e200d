"""Vocabulary extension keeps the old world intact and says exactly what changed
(HF transformers' add_tokens; Hewitt, 2021); new embedding rows are means of old rows."""

from __future__ import annotations

import json

import numpy as np
import pytest

import tokenforge
import tokenforge.analysis.extend
from tokenforge.analysis.extend import (
    ExtensionError,
    extend,
    init_embeddings,
    regression_report,
)
from tokenforge.models.bpe import bpe_merge_bytes
from tokenforge.models.wordlevel import WordLevel
from tokenforge.pretokenizers import WhitespaceSplit

TEXTS = [
    "hello world",
    "I love tokenforge a lot",
    "tokenforge",
    "no new word here",
    "中文 龘龘龘 text",
    "a <|endoftext|> boundary",
    "<|tool_call|> written by a user",
    "",
]


def test_golden_description_mean():
    """Old ids/encodings/specials unchanged; new row = mean(rows [0, 2]) = [4, 5, 6, 7]."""
    old = tokenforge.Tokenizer(WordLevel({"tool": 0, "[UNK]": 1, "call": 2}), pre_tokenizer=WhitespaceSplit())
    emb = np.arange(12, dtype=np.float64).reshape(3, 4)
    before = emb.copy()
    new, report = extend(old, ["<|tool_call|>"], kind="special", test_texts=["tool call", "call tool tool", "x"])
    assert report.added == {"<|tool_call|>": 3}
    assert report.old_ids_unchanged and report.encodings_unchanged and report.specials_unchanged and report.ok
    assert old.encode("tool call") == [0, 2]
    assert new.encode("<|tool_call|>", allowed_special="all") == [3]
    out = init_embeddings(emb, old, report.added, {"<|tool_call|>": "tool call"})
    assert out.shape == (4, 4)
    assert out[3].tolist() == [4.0, 5.0, 6.0, 7.0]
    # old rows intact and the input untouched (a tied LM head shares this one new matrix)
    assert np.array_equal(out[:3], before) and np.array_equal(emb, before)


def test_extension_on_byte_level_bpe():
    enc = tokenforge.get_encoding("gpt2")
    assert enc.encode("!#") == [0, 2]
    emb = np.zeros((enc.n_vocab, 4))
    emb[0] = [0, 1, 2, 3]
    emb[1] = [4, 5, 6, 7]
    emb[2] = [8, 9, 10, 11]
    _, report = extend(enc, ["<|sep|>"], kind="special", test_texts=TEXTS)
    assert report.added == {"<|sep|>": 50257} and report.ok
    out = init_embeddings(emb, enc, report.added, {"<|sep|>": "!#"})
    assert out[50257].tolist() == [4.0, 5.0, 6.0, 7.0]
    # without a description the special's own surface is used
    surface = init_embeddings(emb, enc, ["<|sep|>"])
    assert np.allclose(surface[-1], emb[enc.encode_ordinary("<|sep|>")].mean(axis=0))


def test_special_extension_appends_after_max_id_and_changes_nothing_old():
    enc = tokenforge.get_encoding("cl100k_base")
    new, report = extend(enc, ["<|tool_call|>", "<|tool_result|>"], kind="special", test_texts=TEXTS)
    assert report.added == {"<|tool_call|>": 100277, "<|tool_result|>": 100278}
    assert report.ok, str(report)
    assert report.texts_checked == len(TEXTS)
    text = "x <|tool_call|> y"
    with pytest.raises(tokenforge.SpecialTokenError):
        new.encode(text)  # a new control string in user text is refused by default
    assert 100277 in new.encode(text, allowed_special="all")
    assert new.encode(text, disallowed_special=()) == enc.encode(text, disallowed_special=())
    assert new.encode("<|endoftext|>", allowed_special="all") == [100257]
    # the tokenizer passed in is unchanged
    assert "<|tool_call|>" not in enc.special_tokens


def test_holes_are_reused_only_when_asked():
    enc = tokenforge.get_encoding("cl100k_base")
    _, report = extend(enc, ["<|a|>", "<|b|>"], kind="special", reuse_holes=True)
    assert report.added == {"<|a|>": 100256, "<|b|>": 100261}


def test_duplicates_and_existing_tokens_are_refused():
    enc = tokenforge.get_encoding("cl100k_base")
    with pytest.raises(ExtensionError, match="already a special"):
        extend(enc, ["<|endoftext|>"], kind="special")
    with pytest.raises(ExtensionError, match="twice"):
        extend(enc, ["<|x|>", "<|x|>"], kind="special")
    with pytest.raises(ExtensionError, match="already a token"):
        extend(enc, [" hello"], kind="lexical")
    with pytest.raises(ValueError):
        extend(enc, ["x"], kind="word")


def test_lexical_extension_is_encodable_and_lists_changed_texts():
    enc = tokenforge.get_encoding("gpt2")
    new, report = extend(enc, [" tokenforge", "龘龘"], kind="lexical", test_texts=TEXTS)
    tf_id = report.added[" tokenforge"]
    cjk_id = report.added["龘龘"]
    assert tf_id == 50257 and cjk_id > tf_id  # after every old id, special ones included
    assert report.old_ids_unchanged and report.specials_unchanged and not report.roundtrip_broken
    # exactly the texts holding a new string changed
    changed = {c.text for c in report.changed_texts}
    assert changed == {"I love tokenforge a lot", "中文 龘龘龘 text"}
    for c in report.changed_texts:
        assert c.old_ids == enc.encode(c.text, disallowed_special=())
        assert new.decode(c.new_ids) == c.text
    # reachable by merges inside a longer piece, not only by whole-piece lookup
    assert tf_id in new.encode("I use tokenforge!")
    assert cjk_id in new.encode("龘龘龘")
    assert bpe_merge_bytes(new.mergeable_ranks, "龘龘".encode()) == ["龘龘".encode()]
    # "龘" is 2 old tokens (3 bytes): the chain needs intermediates, all after the old ids
    assert report.intermediates and all(i > 50256 for i in report.intermediates.values())
    assert new.model.vocab[cjk_id] == "龘龘".encode()
    json.dumps(report.to_dict())
    assert "CHANGED" in str(report) and "2 of 8" in str(report)


def test_lexical_token_across_a_pattern_boundary_is_refused():
    enc = tokenforge.get_encoding("cl100k_base")
    with pytest.raises(ExtensionError, match="split pattern cuts"):
        extend(enc, ["hello world"], kind="lexical")


def test_lexical_tokens_with_merge_list_keep_it_consistent(small_tokenizer):
    assert small_tokenizer.model.merges is not None
    new, report = extend(small_tokenizer, ["zzqx"], kind="lexical")
    merges = new.model.merges
    assert merges[: len(small_tokenizer.model.merges)] == small_tokenizer.model.merges
    assert b"".join(merges[-1]) == b"zzqx"
    assert new.encode("zzqx") == [report.added["zzqx"]]


@pytest.fixture(scope="module")
def bert(shared_data):
    return tokenforge.load(str(shared_data / "vocab" / "wordpiece" / "bert-base-uncased_vocab.txt"))


def test_pipeline_special_and_lexical(bert):
    texts = ["hello tokenforge world", "plain text", "[SEP] inside", "[TOOL] call"]
    new, report = extend(bert, ["[TOOL]"], kind="special", test_texts=texts)
    assert report.added == {"[TOOL]": 30522} and report.ok, str(report)
    assert new.encode("[TOOL]", allowed_special="all") == [101, 30522, 102]
    assert new.special_tokens["[TOOL]"] == 30522

    new2, report2 = extend(bert, ["tokenforge"], kind="lexical", test_texts=texts)
    assert report2.old_ids_unchanged and report2.specials_unchanged
    assert [c.text for c in report2.changed_texts] == ["hello tokenforge world"]
    assert 30522 in new2.encode("hello tokenforge world")
    added = [t for t in new2.added_tokens if t.content == "tokenforge"]
    assert len(added) == 1 and not added[0].special


def test_regression_report_catches_a_moved_special():
    enc = tokenforge.get_encoding("cl100k_base")
    specials = dict(enc.special_tokens)
    specials["<|endoftext|>"] = 100300
    moved = tokenforge.Tokenizer(enc.model, pre_tokenizer=enc.pattern, special_tokens=specials)
    report = regression_report(enc, moved, ["a <|endoftext|> b", "plain"])
    assert report.changed_old_ids == [100257]
    assert [c.text for c in report.changed_texts] == ["a <|endoftext|> b"]
    assert any("<|endoftext|>" in s and "allowed" in s for s in report.special_changes)
    assert not report.ok


def test_init_embeddings_places_rows_and_checks_ids():
    enc = tokenforge.get_encoding("gpt2")
    rng = np.random.default_rng(0)
    emb = rng.normal(size=(50304, 3))  # padded like a real checkpoint
    _, report = extend(enc, [" tokenforge"], kind="lexical")
    out = init_embeddings(emb, enc, report.added)
    assert out.shape == emb.shape  # id 50257 falls inside the padding rows
    assert np.allclose(out[50257], emb[enc.encode(" tokenforge")].mean(axis=0))
    small = tokenforge.Tokenizer(WordLevel({"tool": 0, "[UNK]": 1, "call": 2}), pre_tokenizer=WhitespaceSplit())
    appended = init_embeddings(emb[:3], small, ["call tool", "tool"])
    assert appended.shape == (5, 3)
    assert np.allclose(appended[3], emb[[0, 2]].mean(axis=0)) and np.allclose(appended[4], emb[0])
    with pytest.raises(ExtensionError, match="old token"):
        init_embeddings(emb[:2], small, ["tool"])  # row 2 is already the token "call"
    with pytest.raises(ExtensionError, match="beyond"):
        init_embeddings(emb[:100], enc, [" tokenforge"])
    with pytest.raises(ExtensionError, match="old token"):
        init_embeddings(emb, enc, {"x": 5})
    with pytest.raises(ValueError):
        init_embeddings(emb[0], enc, ["x"])

"""Truncation and padding, as HF tokenizers applies them, from a tokenizer.json or set by hand."""

from __future__ import annotations

import itertools
import json

import pytest

import tokenforge
from tokenforge.errors import InvalidArgumentError

tokenizers = pytest.importorskip("tokenizers")

PAIRS = [("Hello world, this is a long sentence to be truncated for sure.", None),
         ("first sentence here is long enough", "second one short"),
         ("a b c d e f g h i j k l m n o p", "q r s t u v w x y z aa bb"), ("x", "y"), ("", None)]
BATCH = ["Hello world", "a much longer sentence with many more words in it", "x", ("pair a", "pair b is longer")]


def _view(e):
    return (e.ids, e.type_ids, e.offsets, e.attention_mask, e.special_tokens_mask,
            [(o.ids, o.attention_mask, o.type_ids) for o in e.overflowing])


@pytest.fixture(scope="module")
def bert(shared_data):
    path = shared_data / "vocab" / "hf" / "bert-base-uncased_wordpiece_tokenizer.json"
    return tokenizers.Tokenizer.from_file(str(path)), tokenforge.load(path)


@pytest.mark.parametrize(("max_length", "stride", "strategy", "direction"), [
    (m, s, st, d) for m, s, st, d in itertools.product([0, 2, 3, 4, 5, 8, 40], [0, 1], ["longest_first", "only_first", "only_second"], ["right", "left"])
])
def test_truncation_matches_hf(bert, max_length, stride, strategy, direction):
    hf, tok = bert
    try:
        hf.enable_truncation(max_length, stride=stride, strategy=strategy, direction=direction)
    except ValueError:
        with pytest.raises(InvalidArgumentError, match="stride"):
            tok.with_truncation(max_length, stride=stride, strategy=strategy, direction=direction)
        return
    ours = tok.with_truncation(max_length, stride=stride, strategy=strategy, direction=direction)
    for a, b in PAIRS:
        try:
            want = hf.encode(a, b)
        except BaseException:  # HF refuses (or panics on) a stride too long for what is kept
            with pytest.raises(InvalidArgumentError):
                ours.encode_full(a, b)
            continue
        assert _view(ours.encode_full(a, b)) == _view(want)
        assert ours.encode(a, b) == want.ids


@pytest.mark.parametrize(("length", "direction", "multiple", "trunc"),
                         list(itertools.product([None, 4, 20], ["right", "left"], [None, 8], [None, 6])))
def test_padding_matches_hf_in_batches(bert, length, direction, multiple, trunc):
    hf, tok = bert
    hf.enable_padding(direction=direction, length=length, pad_to_multiple_of=multiple, pad_id=0, pad_token="[PAD]")
    ours = tok.with_padding(length=length, direction=direction, pad_to_multiple_of=multiple)
    if trunc:
        hf.enable_truncation(trunc)
        ours = ours.with_truncation(trunc)
    else:
        hf.no_truncation()
    want = hf.encode_batch(BATCH)
    assert [_view(e) for e in ours.encode_batch_full(BATCH)] == [_view(e) for e in want]
    assert ours.encode_batch(BATCH) == [e.ids for e in want]
    for item in BATCH:
        args = item if isinstance(item, tuple) else (item,)
        assert ours.encode(*args) == hf.encode(*args).ids


def test_a_tokenizer_json_with_truncation_and_padding_applies_them(bert, tmp_path):
    hf, _ = bert
    hf.enable_truncation(7, stride=2)
    hf.enable_padding(length=9, pad_id=0, pad_token="[PAD]")
    path = tmp_path / "tokenizer.json"
    hf.save(str(path))
    tok = tokenforge.load(path)
    assert tok.truncation.max_length == 7 and tok.padding.length == 9
    text = "one two three four five six seven eight nine ten"
    want = hf.encode(text)
    assert _view(tok.encode_full(text)) == _view(want) and tok.encode(text) == want.ids
    # Written back, in both formats, the settings stay.
    tok.save(str(tmp_path / "again.json"), format="hf")
    again = json.loads((tmp_path / "again.json").read_text())
    assert again["truncation"] == json.loads(path.read_text())["truncation"]
    assert again["padding"] == json.loads(path.read_text())["padding"]
    tok.save(str(tmp_path / "native.json"))
    assert tokenforge.load(tmp_path / "native.json").encode(text) == want.ids
    assert tok.without_padding().with_truncation(None).encode(text) == tokenforge.load(path).without_padding().with_truncation(None).encode(text)


def test_byte_level_encodings_truncate_and_pad_too():
    enc = tokenforge.get_encoding("cl100k_base").with_truncation(3).with_padding(length=5, pad_id=100257)
    assert enc.encode("hello world, how are you") == [15339, 1917, 11, 100257, 100257]
    ids, offsets = enc.encode_batch_to_numpy(["hello world, how are you", "hi"])
    assert ids.tolist()[:5] == [15339, 1917, 11, 100257, 100257] and offsets.tolist() == [0, 5, 10]
    assert enc.encode_ordinary("hello world, how are you") == tokenforge.get_encoding("cl100k_base").encode_ordinary(
        "hello world, how are you")  # ordinary encoding is never shaped


def test_bad_settings_are_refused():
    enc = tokenforge.get_encoding("gpt2")
    with pytest.raises(InvalidArgumentError, match="stride"):
        enc.with_truncation(4, stride=4)
    with pytest.raises(InvalidArgumentError, match="strategy"):
        enc.with_truncation(4, strategy="middle")
    with pytest.raises(InvalidArgumentError, match="direction"):
        enc.with_padding(direction="up")
    with pytest.raises(tokenforge.FileFormatError, match="truncation"):
        tokenforge.Tokenizer.from_dict({**enc.to_dict(), "truncation": {"max_length": "x"}})


@pytest.mark.parametrize("name", ["bert-base-uncased_wordpiece_tokenizer.json", "albert-base-v2_spiece_unigram_tokenizer.json",
                                  "gpt2_tokenizer.json", "claude_tokenizer.json"])
def test_pretokenized_input_matches_hf(shared_data, name):
    path = shared_data / "vocab" / "hf" / name
    hf, tok = tokenizers.Tokenizer.from_file(str(path)), tokenforge.load(path)
    cases = [(["Hello", "world!", "東京"], None), (["a b", "  c"], ["second", "pair"]), ([], None), (["ﬃ", "x"], None)]
    for words, pair in cases:
        want = hf.encode(words, pair, is_pretokenized=True)
        got = tok.encode_full(words, pair, is_pretokenized=True, allowed_special="all")
        assert (got.ids, got.offsets, got.word_ids, got.type_ids) == (want.ids, want.offsets, want.word_ids, want.type_ids)
        assert tok.encode(words, pair, is_pretokenized=True, allowed_special="all") == want.ids
    batch = [["x", "y z"], (["a"], ["b", "c"])]
    want = hf.encode_batch(batch, is_pretokenized=True)
    assert [e.ids for e in tok.encode_batch_full(batch, is_pretokenized=True, allowed_special="all")] == [e.ids for e in want]
    assert tok.encode_batch(batch, is_pretokenized=True, allowed_special="all") == [e.ids for e in want]
    with pytest.raises(tokenforge.EncodeInputError, match="list of str"):
        tok.encode("not a list", is_pretokenized=True)

"""HF tokenizer.json: read into the fastest exact object, written back so that HF
tokenizers (and transformers) load it with the same ids, and round trips that are lossless."""

from __future__ import annotations

import json

import pytest

import tokenforge
from tokenforge.errors import FileFormatError
from tokenforge.formats.hf_json import onig_pattern

hf = pytest.importorskip("tokenizers")

ENCODINGS = ["gpt2", "r50k_base", "p50k_base", "cl100k_base", "o200k_base"]


def _lines(shared_data, per_file=120):
    out = []
    base = shared_data / "text"
    for p in sorted(base.rglob("*")):
        if p.is_file():
            out += p.read_text(encoding="utf-8").splitlines()[:per_file]
    return out


@pytest.mark.parametrize("name", ENCODINGS)
def test_written_tokenizer_json_gives_the_same_ids_in_hf(name, shared_data, tmp_path):
    tok = tokenforge.get_encoding(name)
    path = tmp_path / "tokenizer.json"
    tok.save(str(path), format="hf")
    ref = hf.Tokenizer.from_file(str(path))
    lines = _lines(shared_data) + ["<|endoftext|> after", "1919 12345 3.14159", "  \n\n\t x", "👩‍👩‍👧 é"]
    got = [tok.encode(x, allowed_special="all") for x in lines]
    assert got == [e.ids for e in ref.encode_batch(lines)]
    # Read back: the fast byte-level Tokenizer, and the same bytes when written again.
    back = tokenforge.load(path)
    assert isinstance(back, tokenforge.Tokenizer)
    assert [back.encode(x, allowed_special="all") for x in lines[:200]] == got[:200]
    again = tmp_path / "again.json"
    back.save(str(again), format="hf")
    assert again.read_bytes() == path.read_bytes()


def test_written_tokenizer_json_loads_in_transformers(tmp_path):
    transformers = pytest.importorskip("transformers")
    tok = tokenforge.get_encoding("cl100k_base")
    path = tmp_path / "tokenizer.json"
    tok.save(str(path), format="hf")
    fast = transformers.PreTrainedTokenizerFast(tokenizer_file=str(path))
    for text in ["Hello world, 1919!", "東京タワー 🙂", "def f(x):\n    return x"]:
        assert fast(text)["input_ids"] == tok.encode(text)


@pytest.mark.parametrize("name", ["gpt2_tokenizer.json", "claude_tokenizer.json", "bert-base-uncased_wordpiece_tokenizer.json",
                                  "albert-base-v2_spiece_unigram_tokenizer.json"])
def test_real_tokenizer_json_loads_with_hf_ids_and_round_trips(name, shared_data, tmp_path):
    path = shared_data / "vocab" / "hf" / name
    ours = tokenforge.load(path)
    ref = hf.Tokenizer.from_file(str(path))
    lines = _lines(shared_data, 60)
    assert [ours.encode(x, allowed_special="all") for x in lines] == [e.ids for e in ref.encode_batch(lines)]
    out = tmp_path / "tokenizer.json"
    ours.save(str(out), format="hf")
    again = hf.Tokenizer.from_file(str(out))
    assert [e.ids for e in again.encode_batch(lines)] == [e.ids for e in ref.encode_batch(lines)]
    out2 = tmp_path / "tokenizer2.json"
    tokenforge.load(out).save(str(out2), format="hf")
    assert out2.read_bytes() == out.read_bytes()


def test_byte_level_files_become_the_fast_tokenizer(shared_data):
    assert isinstance(tokenforge.load(shared_data / "vocab" / "hf" / "gpt2_tokenizer.json"), tokenforge.Tokenizer)


def test_sentencepiece_pipeline_refuses_an_inexact_conversion(shared_data, tmp_path):
    sp = tokenforge.load(shared_data / "vocab" / "sentencepiece" / "albert_spiece.model")
    with pytest.raises(FileFormatError, match="SentencePiece model.*normalizer.*allow_lossy=True"):
        sp.save(str(tmp_path / "t.json"), format="hf")
    with pytest.raises(FileFormatError, match="tiktoken"):
        sp.to_tiktoken()


def test_to_hf_and_to_tiktoken_are_live_objects():
    tiktoken = pytest.importorskip("tiktoken")
    tok = tokenforge.get_encoding("r50k_base")
    text = "Live objects: 12345 东京 🙂"
    assert tok.to_tiktoken().encode(text) == tok.encode(text)
    assert isinstance(tok.to_tiktoken(), tiktoken.Encoding)
    assert tok.to_hf().encode(text).ids == tok.encode(text)


def test_possessive_intervals_are_written_for_oniguruma():
    assert onig_pattern(r"\p{N}{1,3}+|a++|b?+") == r"\p{N}{1,3}|a++|b?+"
    assert onig_pattern(r"\{1,3\}+") == r"\{1,3\}+"


def test_unknown_component_names_its_json_path(tmp_path):
    doc = json.loads(json.dumps({"model": {"type": "WordLevel", "vocab": {"a": 0}, "unk_token": "a"},
                                 "normalizer": {"type": "Sequence", "normalizers": [{"type": "Frob"}]}}))
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(FileFormatError, match="normalizer") as info:
        tokenforge.load(path)
    assert "Frob" in str(info.value) and str(path) in str(info.value)


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base", "o200k_base"])
def test_hf_round_trip_keeps_the_native_scanner(tmp_path, name):
    # HF's file holds the pattern in Oniguruma's spelling (cl100k's \p{N}{1,3}+ loses its +);
    # loading it back must still find the named pattern and its native scanner.
    tok = tokenforge.get_encoding(name)
    path = tmp_path / "tokenizer.json"
    tok.save(str(path), format="hf")
    back = tokenforge.load(path)
    assert back.pattern == tok.pattern
    assert back._plan.describe() == tok._plan.describe()
    text = "x 12345 1919 ab\n\n  cd"
    assert back.encode(text) == tok.encode(text)


def _bert_doc(shared_data):
    return json.loads((shared_data / "vocab" / "hf" / "bert-base-uncased_wordpiece_tokenizer.json").read_text())


def _added(i, content, special=True):
    return {"id": i, "content": content, "single_word": False, "lstrip": False, "rstrip": False,
            "normalized": False, "special": special}


@pytest.mark.parametrize("bad", [-1, 2**40, "30522", 30522.0, True, None])
def test_added_token_ids_that_hf_refuses_are_refused(shared_data, tmp_path, bad):
    tokenizers = pytest.importorskip("tokenizers")
    doc = _bert_doc(shared_data)
    doc["added_tokens"].append(_added(bad, "<x>"))
    with pytest.raises(Exception):
        tokenizers.Tokenizer.from_str(json.dumps(doc))
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(FileFormatError, match=r"tokenizer.json.*<x>"):
        tokenforge.load(path)


@pytest.mark.parametrize("ids", [(30600, 30700), (30523, 30522), (5, 6), (30522, 30523)])
def test_added_token_ids_are_assigned_as_hf_assigns_them(shared_data, ids):
    tokenizers = pytest.importorskip("tokenizers")
    doc = _bert_doc(shared_data)
    doc["added_tokens"] += [_added(ids[0], "<x>"), _added(ids[1], "<y>", special=False)]
    hf = tokenizers.Tokenizer.from_str(json.dumps(doc))
    with pytest.warns(UserWarning) if ids != (30522, 30523) else _no_warning():
        tok = tokenforge.Tokenizer.from_dict(doc)
    text = "a <x> b <y> c"
    assert tok.encode(text, allowed_special="all") == hf.encode(text).ids
    assert (tok.token_to_id("<x>"), tok.token_to_id("<y>")) == (hf.token_to_id("<x>"), hf.token_to_id("<y>"))


def _no_warning():
    import contextlib
    import warnings

    @contextlib.contextmanager
    def ctx():
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            yield

    return ctx()

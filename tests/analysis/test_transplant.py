"""The transplant map: each token of B as ids of A, on real tokenizer pairs."""

from __future__ import annotations

import json

import pytest
from _tiktoken_ref import reference

import tokenforge
from tokenforge.analysis.explain import token_bytes
from tokenforge.analysis.transplant import encode_bytes, transplant_map


@pytest.fixture(scope="module")
def gpt2():
    return tokenforge.get_encoding("gpt2")


@pytest.fixture(scope="module")
def cl100k():
    return tokenforge.get_encoding("cl100k_base")


@pytest.fixture(scope="module")
def bert(shared_data):
    return tokenforge.load(shared_data / "vocab" / "hf" / "bert-base-uncased_wordpiece_tokenizer.json")


@pytest.fixture(scope="module")
def llama2(shared_data):
    return tokenforge.load(shared_data / "vocab" / "sentencepiece" / "mistral_v1_tokenizer.model")


def _check_spelled(a, m) -> None:
    """Decoding A's ids of every non-special token of B gives B's token bytes."""
    for e in m:
        if e.kind == "special":
            continue
        assert b"".join(token_bytes(a, i) for i in e.ids_a) == e.bytes, e
        assert e.exact
        if e.kind == "same":
            assert len(e.ids_a) == 1


def test_gpt2_to_cl100k(gpt2, cl100k):
    m = transplant_map(gpt2, cl100k)
    assert len(m.entries) == len(cl100k)
    _check_spelled(gpt2, m)
    for e in m:
        if e.kind != "special":
            assert gpt2.decode_bytes(list(e.ids_a)) == e.bytes
            assert e.bytes == cl100k.decode_single_token_bytes(e.id)
    overlap = m.overlap
    assert len(overlap) == len(set(gpt2.mergeable_ranks) & set(cl100k.mergeable_ranks))
    assert all(gpt2.decode_single_token_bytes(ia) == cl100k.decode_single_token_bytes(ib) for ib, ia in overlap)
    eot = m.entry(cl100k.special_tokens["<|endoftext|>"])
    assert (eot.kind, eot.ids_a) == ("special", (50256,))
    assert m.entry(cl100k.special_tokens["<|fim_prefix|>"]).ids_a == ()


def test_decomposition_is_tiktokens_canonical_encoding(gpt2, cl100k):
    ref = reference("gpt2")
    m = transplant_map(gpt2, cl100k)
    checked = 0
    for e in m.entries[::7]:
        if e.kind == "special":
            continue
        try:
            text = e.bytes.decode("utf-8")
        except UnicodeDecodeError:
            # bytes that are not whole characters: A's merges alone, one piece
            assert gpt2.decode_bytes(list(e.ids_a)) == e.bytes
            continue
        want = [gpt2.encode_single_token(e.bytes)] if e.kind == "same" else ref.encode_ordinary(text)
        assert list(e.ids_a) == want, e
        checked += 1
    assert checked > 10000


def test_cl100k_to_gpt2(gpt2, cl100k):
    m = transplant_map(cl100k, gpt2)
    _check_spelled(cl100k, m)
    s = m.summary()
    assert s["same"] + s["composed"] + s["special"] == len(gpt2) == s["tokens_b"]
    assert s["inexact"] == 0 and s["special_without_match"] == 0


def test_gpt2_to_bert_maps_continuations_by_bytes(gpt2, bert):
    m = transplant_map(gpt2, bert)
    _check_spelled(gpt2, m)
    ing, cont = m.entry(bert.token_to_id("ing")), m.entry(bert.token_to_id("##ing"))
    assert ing.bytes == cont.bytes == b"ing" and ing.ids_a == cont.ids_a
    specials = {e.token for e in m if e.kind == "special"}
    assert specials == {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}


def test_gpt2_to_sentencepiece_with_byte_fallback(gpt2, llama2):
    m = transplant_map(gpt2, llama2)
    _check_spelled(gpt2, m)
    e = m.entry(llama2.token_to_id("<0xE4>"))
    assert (e.kind, e.bytes, e.ids_a) == ("same", b"\xe4", (gpt2.encode_single_token(b"\xe4"),))
    e = m.entry(llama2.token_to_id("▁the"))
    assert (e.kind, e.ids_a) == ("same", (gpt2.encode_single_token(b" the"),))
    assert {e.token for e in m if e.kind == "special"} == {"<unk>", "<s>", "</s>"}


def test_sentencepiece_as_a_spells_every_byte(gpt2, llama2):
    m = transplant_map(llama2, gpt2)
    _check_spelled(llama2, m)
    e = m.entry(gpt2.encode_single_token(b" \xe2\x80"))  # half a character: byte-fallback pieces
    assert [llama2.id_to_token(i) for i in e.ids_a][-2:] == ["<0xE2>", "<0x80>"]


def test_lossy_a_is_marked_inexact(gpt2, bert):
    m = transplant_map(bert, gpt2)
    inexact = [e for e in m if e.kind != "special" and not e.exact]
    assert inexact
    for e in m.entries[::50]:
        if e.kind != "special":
            assert e.exact == (b"".join(token_bytes(bert, i) for i in e.ids_a) == e.bytes)
    assert m.entry(gpt2.encode_single_token(b"hello")).exact


def test_encode_bytes_invalid_utf8(gpt2):
    data = "日本".encode() + b"\xff\xe4" + b" ok"
    ids = encode_bytes(gpt2, data)
    assert gpt2.decode_bytes(ids) == data


def test_write_is_json_lines(tmp_path, gpt2, bert):
    m = transplant_map(gpt2, bert)
    path = tmp_path / "map.jsonl"
    m.write(path)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == len(m.entries)
    rows = [json.loads(line) for line in lines]
    assert [r["id"] for r in rows] == [e.id for e in m]
    assert all(bytes.fromhex(r["bytes"]) == e.bytes and tuple(r["ids_a"]) == e.ids_a for r, e in zip(rows, m))
    assert list(tmp_path.iterdir()) == [path]  # no temporary file left behind

"""explain(): the pipeline stage by stage, and the number-splitting and indentation demonstrations."""

from __future__ import annotations

import argparse
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tokenforge
from tokenforge.analysis.explain import (
    NUMBERS_TEXT,
    explain,
    indent_costs,
    merge_trace,
    number_splits,
    render_bytes,
    token_bytes,
)
from tokenforge.cli.analysis import register_explain
from tokenforge.models.bpe import bpe_merge_bytes


def _replay(piece: bytes, merges) -> list[bytes]:
    """Apply a merge log to the single bytes of ``piece``, checking every step."""
    parts = [bytes([b]) for b in piece]
    for m in merges:
        # locate the part that starts at m.start
        pos = 0
        for k, p in enumerate(parts):
            if pos == m.start:
                break
            pos += len(p)
        else:
            raise AssertionError(f"no part starts at {m.start}")
        assert parts[k] == m.left and parts[k + 1] == m.right, (parts, m)
        parts[k : k + 2] = [m.left + m.right]
    return parts


@pytest.fixture(scope="module", params=["gpt2", "cl100k_base", "o200k_base"])
def enc(request):
    return tokenforge.get_encoding(request.param)


_TEXT = st.text(
    alphabet=st.sampled_from(list("abcdeéz ABC  \n\t.,'!?0123456789年中文😀ß-_/\ud800"))
    | st.characters(exclude_categories=()),
    max_size=60,
)


@settings(max_examples=80, deadline=None)
@given(text=_TEXT)
def test_explained_merges_reproduce_encode_ordinary(enc, text):
    ex = explain(enc, text)
    ranks = enc.mergeable_ranks
    ids = []
    for p in ex.pieces:
        data = p.text.encode("utf-8")
        final = _replay(data, p.merges)
        # the log's last state is where rank merging stops, and the ranks are those of the tokens
        assert final == bpe_merge_bytes(ranks, data)
        assert all(ranks[m.left + m.right] == m.rank for m in p.merges)
        # consistent rank tables merge in non-decreasing rank order
        assert [m.rank for m in p.merges] == sorted(m.rank for m in p.merges)
        piece_ids = [ranks[data]] if data in ranks else [ranks[t] for t in final]
        assert p.ids == piece_ids
        ids.extend(piece_ids)
    fixed = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    assert "".join(p.text for p in ex.pieces) == fixed
    assert ids == enc.encode_ordinary(text)
    assert b"".join(ex.token_bytes) == enc.decode_bytes(ids)


def test_merge_trace_ab_abc():
    ranks = {bytes([b]): b for b in range(256)} | {b"ab": 256, b"abc": 257}
    merges, parts = merge_trace(ranks, b"abcab")
    assert [(m.left, m.right, m.rank, m.start) for m in merges] == [
        (b"a", b"b", 256, 0),
        (b"a", b"b", 256, 3),
        (b"ab", b"c", 257, 0),
    ]
    assert parts == [b"abc", b"ab"]


def test_whole_piece_lookup_is_explained():
    # "xyz" is a token that no merge builds: the explanation shows the lookup and where merging stops
    vocab = {b: bytes([b]) for b in range(256)}
    vocab[256] = b"xyz"
    tok = tokenforge.Tokenizer(tokenforge.BPE(vocab), pre_tokenizer="gpt2")
    ex = explain(tok, "xyz")
    [p] = ex.pieces
    assert p.whole and p.ids == [256] and p.merged == [b"x", b"y", b"z"] and p.merges == []
    assert "taken whole by lookup" in ex.render()


def test_render_bytes():
    assert render_bytes(b" a\n\tb\r") == "␣a\\n\\tb\\r"
    assert render_bytes("年".encode()) == "年"
    assert render_bytes("年".encode()[:2]) == "<0xE5><0xB9>"
    assert render_bytes(b"\xff\xc0a") == "<0xFF><0xC0>a"
    assert render_bytes("\u200b😀".encode()) == "\\u200b😀"
    assert render_bytes(b"\x00") == "\\u0000"


def test_explain_gpt2_render_and_json():
    tok = tokenforge.get_encoding("gpt2")
    ex = explain(tok, "hello 年")
    assert [p.text for p in ex.pieces] == ["hello", " 年"]
    assert ex.ids == [31373, 10263, 117, 112]
    assert [render_bytes(b) for b in ex.token_bytes] == ["hello", "␣<0xE5>", "<0xB9>", "<0xB4>"]
    text = ex.render()
    assert "merge rank     258: h + e -> he" in text
    d = json.loads(json.dumps(ex.to_dict(), ensure_ascii=False))
    assert d["ids"] == ex.ids and d["tokens"][1]["hex"] == "20e5"
    assert d["pieces"][0]["merges"][-1] == {
        "left": "hell", "right": "o", "rank": 31373, "start": 0, "left_hex": "68656c6c", "right_hex": "6f"
    }


def test_explain_wordpiece_pipeline():
    vocab = {"[UNK]": 0, "[CLS]": 1, "[SEP]": 2, "un": 3, "##aff": 4, "##able": 5, "hello": 6, "!": 7}
    bert = tokenforge.bert_wordpiece(vocab)
    ex = explain(bert, "Unaffable HELLO!")
    assert ex.normalized == "unaffable hello!"
    assert [p.text for p in ex.pieces] == ["unaffable", "hello", "!"]
    assert ex.ids == [3, 4, 5, 6, 7] == bert.encode_ordinary("Unaffable HELLO!")
    assert ex.token_strings[:3] == ["un", "##aff", "##able"]
    assert ex.token_bytes[:3] == [b"un", b"aff", b"able"]


def test_explain_real_pipelines(shared_data):
    cases = {
        "vocab/hf/albert-base-v2_spiece_unigram_tokenizer.json": "Héllo  WORLD 1234 ﬁne",
        "vocab/hf/bert-base-uncased_wordpiece_tokenizer.json": "Unaffable héllo [SEP] x",
        "vocab/sentencepiece/mistral_v1_tokenizer.model": "hello 年 \U0001F600",
    }
    for path, text in cases.items():
        tok = tokenforge.load(str(shared_data / path))
        ex = explain(tok, text)
        assert ex.ids == tok.encode_ordinary(text)
        json.dumps(ex.to_dict())
    albert = tokenforge.load(str(shared_data / "vocab/hf/albert-base-v2_spiece_unigram_tokenizer.json"))
    ex = explain(albert, "ﬁne")
    assert ex.normalized == "fine"  # NFKC folds the ligature
    assert render_bytes(token_bytes(albert, albert.token_to_id("▁fine"))) == "␣fine"
    mistral = tokenforge.load(str(shared_data / "vocab/sentencepiece/mistral_v1_tokenizer.model"))
    ex = explain(mistral, "\U0001F600")
    # byte fallback: <0xF0> <0x9F> <0x98> <0x80> are shown as the bytes they stand for
    assert b"".join(ex.token_bytes).endswith("\U0001F600".encode())


def test_number_splits_three_generations():
    rows = {r["encoding"].split()[0]: r for r in number_splits()}
    assert NUMBERS_TEXT == "1234567 3.14159 2024年"
    # GPT-2: the digit run is one pre-token, and BPE cuts it irregularly
    assert rows["gpt2"]["pieces"] == ["1234567", " 3", ".", "14159", " 2024", "年"]
    assert rows["gpt2"]["tokens"][:3] == ["123", "45", "67"]
    # cl100k and Llama 3: at most three digits per pre-token, greedily from the left (not thousands groups)
    chunks = ["123", "456", "7", " ", "3", ".", "141", "59", " ", "202", "4", "年"]
    assert rows["cl100k_base"]["pieces"] == chunks
    assert rows["llama3"]["pieces"] == chunks
    assert rows["llama3"]["tokens"] is None  # no Llama 3 ranks are shipped; only its split pattern
    assert rows["cl100k_base"]["tokens"] == ["123", "456", "7", "␣", "3", ".", "141", "59", "␣", "202", "4", "年"]


def test_indent_costs():
    rows = {r["encoding"]: r for r in indent_costs(max_spaces=16)}
    # GPT-2 has no multi-space tokens: every space past the first costs a token
    assert rows["gpt2"]["cost"] == [0, 0] + list(range(1, 16))
    # cl100k/o200k learned whitespace runs: any indentation up to 16 costs one extra token
    assert rows["cl100k_base"]["cost"] == [0, 0] + [1] * 15
    assert rows["o200k_base"]["cost"] == [0, 0] + [1] * 15
    assert rows["cl100k_base"]["line_tokens"][4][0] == "␣␣␣"


def test_explain_cli(capsys):
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="command", required=True)
    register_explain(sub)
    args = p.parse_args(["explain", "hello world", "-t", "gpt2", "--json"])
    assert args.func(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["explain"]["ids"] == [31373, 995]
    args = p.parse_args(["explain", "--numbers", "--indent", "4"])
    assert args.func(args) == 0
    text = capsys.readouterr().out
    assert "'1234567'" in text and "llama3" in text and "cl100k_base" in text

"""Fertility figures, bits per byte (Rust et al., 2021; Gao et al., 2020) and the five vocab sizes."""

from __future__ import annotations

import argparse
import json
import math

import pytest

import tokenforge
from tokenforge.analysis import (
    WordSplitter,
    bits_per_byte,
    bits_per_byte_from_token_nll,
    loss_per_token,
    measure,
    metrics_from_counts,
    vocab_accounting,
)
from tokenforge.analysis.accounting import Accounting
from tokenforge.cli.info import accounting_main, register_accounting_args
from tokenforge.analysis.metrics import spaceless_share

# A mixed code / Chinese corpus.
MIXED_TEXTS = ["def add(x): return x + 1", "把变量加一🙂"]


def byte_tokenizer(**specials: int) -> tokenforge.Tokenizer:
    """A byte-level tokenizer with no merges: one token per byte."""
    return tokenforge.Tokenizer(
        tokenforge.BPE({i: bytes([i]) for i in range(256)}), special_tokens=dict(specials), name="bytes"
    )


@pytest.fixture(scope="module")
def tiny_bert() -> tokenforge.Tokenizer:
    return tokenforge.bert_wordpiece({"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, "[MASK]": 4, "a": 5, "##b": 6, "c": 7})


# ---------------------------------------------------------------- bits per byte
def test_same_nll_same_bpb_although_loss_per_token_differs():
    text = "abcdefgh"  # B = 8 bytes
    a, b = [2.0, 2.0], [1.0, 1.0, 1.0, 1.0]  # 4.0 nats as 2 tokens or as 4 tokens
    assert loss_per_token(a) == 2.0 and loss_per_token(b) == 1.0
    bpb_a = bits_per_byte_from_token_nll(a, text)
    bpb_b = bits_per_byte_from_token_nll(b, text)
    assert bpb_a == bpb_b == bits_per_byte(4.0, text) == 4.0 / (8 * math.log(2))
    assert round(bpb_a, 4) == 0.7213


def test_bpb_counts_utf8_bytes_of_the_text_as_given():
    # 中 and 文 are 3 bytes each: 8 bytes, not 4 characters
    assert bits_per_byte(4.0, "中文ab") == 4.0 / (8 * math.log(2))
    # The original text, not its NFKC form: "Ａ①" is 6 bytes (NFKC "A1" would be 2)
    assert bits_per_byte(6.0, "Ａ①") == 6.0 / (6 * math.log(2))
    # bytes are taken as the stream itself (e.g. a post-normalization stream)
    assert bits_per_byte(2.0, b"A1") == 2.0 / (2 * math.log(2))


def test_bpb_of_empty_text_is_an_error():
    with pytest.raises(ValueError, match="empty"):
        bits_per_byte(1.0, "")
    with pytest.raises(ValueError):
        loss_per_token([])


def test_bpb_from_token_nll_sums_exactly():
    # fsum: ten 0.1s are exactly 1.0 nats, where a naive sum gives 0.9999999999999999
    assert bits_per_byte_from_token_nll([0.1] * 10, "ab") == 1.0 / (2 * math.log(2))


# ---------------------------------------------------------------- fertility
def test_byte_tokenizer_fertility_is_one_token_per_byte():
    tok = byte_tokenizer()
    total = measure(tok, MIXED_TEXTS[0]) + measure(tok, MIXED_TEXTS[1])
    assert total.bytes == 43 and total.tokens == 43
    assert total.tokens_per_byte == 1.0 and total.bytes_per_token == 1.0


def test_char_tokenizer_fertility_micro_average():
    parts = [metrics_from_counts(len(list(t)), t) for t in MIXED_TEXTS]
    total = parts[0] + parts[1]
    assert (total.tokens, total.bytes, total.chars) == (30, 43, 30)
    assert f"{total.tokens_per_byte:.3f}" == "0.698"  # char tokenizer: 0.698
    # micro-average (sum of counts), not the mean of the two ratios
    assert total.tokens_per_byte != (parts[0].tokens_per_byte + parts[1].tokens_per_byte) / 2


# ---------------------------------------------------------------- fertility figures
def test_measure_counts_and_ratios_by_hand():
    tok = byte_tokenizer()
    m = measure(tok, "héllo wörld")  # é and ö are 2 bytes each
    assert (m.tokens, m.bytes, m.chars, m.words) == (13, 13, 11, 2)
    assert m.bytes_per_token == 1.0
    assert m.chars_per_token == 11 / 13
    assert m.tokens_per_word == 6.5
    assert m.unk is None and m.unk_rate is None  # byte-level: no unknown token


def test_measure_matches_tiktoken_token_counts():
    from _tiktoken_ref import reference

    text = "Everyone has the right to education. 人人都有受教育的权利。 <|endoftext|>"
    for name in ("gpt2", "cl100k_base", "o200k_base"):
        n = len(reference(name).encode_ordinary(text))
        m = measure(tokenforge.get_encoding(name), text)
        assert m.tokens == n
        assert m.bytes_per_token == len(text.encode()) / n


def test_special_token_strings_count_as_ordinary_text():
    enc = tokenforge.get_encoding("cl100k_base")
    m = measure(enc, "<|endoftext|>")
    assert m.tokens == len(enc.encode_ordinary("<|endoftext|>")) > 1


def test_unk_rate_and_no_added_cls_sep(tiny_bert):
    # "ab xyz c" -> a ##b [UNK] c (the pipeline adds [CLS]/[SEP] when asked; measure does not count them)
    assert tiny_bert.encode("ab xyz c") == [2, 5, 6, 1, 7, 3]
    m = measure(tiny_bert, "ab xyz c")
    assert (m.tokens, m.unk, m.words) == (4, 1, 3)
    assert m.unk_rate == 0.25
    assert m.tokens_per_word == 4 / 3


def test_whitespace_splitter_splits_unicode_spaces_and_ethiopic_wordspace():
    m = metrics_from_counts(6, "one\u3000two\u00a0three\tfour")
    assert m.words == 4 and m.word_splitter == "whitespace"
    am = metrics_from_counts(5, "ሰው፡የመማር፡መብት፡አለው።")
    assert am.words == 4 and am.tokens_per_word == 5 / 4


def test_tokens_per_word_not_reported_for_spaceless_scripts():
    zh = metrics_from_counts(10, "人人有权享有生命、自由和人身安全。")
    assert zh.spaceless and zh.words == 1 and zh.tokens_per_word is None
    th = metrics_from_counts(10, "ทุกคนมีสิทธิในการศึกษา")
    assert th.tokens_per_word is None
    ko = metrics_from_counts(6, "모든 사람은 교육을 받을 권리를 가진다.")
    assert not ko.spaceless and ko.tokens_per_word == 1.0  # Korean is written with spaces
    assert spaceless_share("hello 世界") == 2 / 7


def test_declared_splitter_is_named_and_used_for_spaceless_text():
    def chinese_words(text):  # a stand-in segmenter: two characters per word
        return [text[i:i + 2] for i in range(0, len(text), 2)]

    m = metrics_from_counts(3, "人工智能", word_splitter=chinese_words)
    assert m.word_splitter == "chinese_words" and m.words == 2 and m.tokens_per_word == 1.5
    named = WordSplitter("jieba-like", chinese_words)
    assert metrics_from_counts(3, "人工智能", word_splitter=named).word_splitter == "jieba-like"
    with pytest.raises(ValueError, match="word splitter"):
        metrics_from_counts(1, "x", word_splitter="jieba")


def test_adding_metrics_needs_the_same_splitter():
    a = metrics_from_counts(1, "a b")
    b = metrics_from_counts(1, "ab", word_splitter=lambda t: list(t))
    with pytest.raises(ValueError, match="cannot add"):
        a + b


def test_to_dict_has_counts_and_ratios(tiny_bert):
    d = measure(tiny_bert, "ab xyz c").to_dict()
    assert d["tokens"] == 4 and d["unk_rate"] == 0.25 and d["bytes_per_token"] == 2.0
    assert json.loads(json.dumps(d)) == d


# ---------------------------------------------------------------- the five vocab sizes
@pytest.mark.parametrize(
    "name, mergeable, special, length, id_space, hole_runs",
    [
        ("cl100k_base", 100_256, 5, 100_261, 100_277, [(100256, 100256), (100261, 100275)]),
        ("o200k_base", 199_998, 2, 200_000, 200_019, [(199998, 199998), (200000, 200017)]),
        ("gpt2", 50_256, 1, 50_257, 50_257, []),
    ],
)
def test_known_vocab_table(name, mergeable, special, length, id_space, hole_runs):
    a = vocab_accounting(tokenforge.get_encoding(name))
    assert (a.mergeable, a.special, a.length, a.id_space) == (mergeable, special, length, id_space)
    assert a.hole_ranges() == hole_runs
    assert a.holes == id_space - length  # every distinct id is a token
    assert a.embedding_rows == id_space  # no padding asked for


def test_padding_and_embedding_parameters():
    a = vocab_accounting(tokenforge.get_encoding("cl100k_base"), pad_to=64, d_model=4096)
    assert a.embedding_rows == 100_288 and a.embedding_rows % 64 == 0 and a.padding_rows == 11
    assert a.embedding_params == 100_288 * 4096
    untied = vocab_accounting(tokenforge.get_encoding("cl100k_base"), pad_to=64, d_model=4096, tied=False)
    assert untied.embedding_params == 2 * 100_288 * 4096
    with pytest.raises(ValueError):
        vocab_accounting(tokenforge.get_encoding("gpt2"), pad_to=0)


def test_embedding_magnitudes():
    # d = 4096: V = 32,000 -> about 1.3e8 parameters; V = 128,256 -> about 5.3e8 (tied)
    def acct(v):
        return Accounting(name=None, kind="x", mergeable=v, special=0, added_ordinary=0, length=v, id_space=v,
                          missing_ids=(), pad_to=1, d_model=4096, tied=True)

    assert acct(32_000).embedding_params == 131_072_000
    assert round(acct(128_256).embedding_params / 1e8, 1) == 5.3


def test_holes_from_a_special_token_past_the_ranks():
    a = vocab_accounting(byte_tokenizer(**{"<|end|>": 300}))
    assert (a.mergeable, a.special, a.length, a.id_space, a.holes) == (256, 1, 257, 301, 44)
    assert a.hole_ranges() == [(256, 299)]


def test_pipeline_accounting_counts_unk_as_special(tiny_bert):
    a = vocab_accounting(tiny_bert)
    assert (a.mergeable, a.special, a.length, a.id_space, a.holes) == (3, 5, 8, 8, 0)


def test_pipeline_accounting_bert_and_spm(shared_data):
    # bert-base-uncased 30,517 + 5 = 30,522
    bert = vocab_accounting(tokenforge.load(shared_data / "vocab" / "wordpiece" / "bert-base-uncased_vocab.txt"))
    assert (bert.mergeable, bert.special, bert.length, bert.id_space) == (30_517, 5, 30_522, 30_522)
    # Llama-2-style SentencePiece BPE (Mistral v1 has the same layout): <unk> <s> </s> + 31,997 pieces
    spm = vocab_accounting(tokenforge.load(shared_data / "vocab" / "sentencepiece" / "mistral_v1_tokenizer.model"))
    assert (spm.mergeable, spm.special, spm.length, spm.id_space) == (31_997, 3, 32_000, 32_000)


def _info_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tokenforge info")
    p.add_argument("--json", action="store_true")
    register_accounting_args(p)
    return p


def test_accounting_cli_table(capsys):
    args = _info_parser().parse_args(["--accounting", "--pad-to", "64", "--d-model", "4096", "--untied"])
    assert args.accounting
    assert accounting_main(tokenforge.get_encoding("cl100k_base"), args) == 0
    out = capsys.readouterr().out
    for line in ("mergeable tokens  100,256", "special tokens    5", "len(tokenizer)    100,261",
                 "max id + 1        100,277", "holes             16 (unused ids: 100256, 100261–100275)",
                 "embedding rows    100,288", "embedding params  821,559,296 (2 × rows × d, untied, d = 4,096)"):
        assert line in out


def test_accounting_cli_json(capsys):
    args = _info_parser().parse_args(["--accounting", "--json"])
    accounting_main(tokenforge.get_encoding("cl100k_base"), args)
    d = json.loads(capsys.readouterr().out)
    assert (d["mergeable_tokens"], d["special_tokens"], d["len"], d["max_id_plus_1"]) == (100256, 5, 100261, 100277)
    assert d["hole_ranges"] == [[100256, 100256], [100261, 100275]] and d["embedding_params"] is None


def test_accounting_cli_rejects_bad_numbers(capsys):
    with pytest.raises(SystemExit):
        _info_parser().parse_args(["--accounting", "--pad-to", "0"])
    assert "at least 1" in capsys.readouterr().err

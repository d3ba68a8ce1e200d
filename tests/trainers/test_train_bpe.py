"""BPE training: golden merges from worked examples, CS336 semantics, determinism, bad input."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tokenforge
from tokenforge import (
    BPETrainer,
    SpecialTokenError,
    TokenizerFileNotFoundError,
    TrainingError,
)
from tokenforge.bytelevel import decode_string
from tokenforge.pretokenizers import RegexSplit
from tokenforge.specials import special_regex
from tokenforge.trainers.bpe import learn_merges
from tokenforge.trainers.counting import count_files, count_text

FIXTURES = Path(__file__).parents[1] / "fixtures"


def _merges(text: str, n: int, **kw) -> list[tuple[bytes, bytes]]:
    tok = BPETrainer(256 + n, pattern=None, **kw).train_from_iterator([text])
    return tok.model.merges


def test_the_cat_in_the_hat_three_merges():
    # a small worked example
    assert _merges("the cat in the hat", 3) == [(b"t", b"h"), (b"th", b"e"), (b"the", b" ")]


def test_aaabdaaabac_three_merges_prefer_greater_byte_string():
    # CS336 tie rule: b"aa" > b"a", so (aa, a) beats (a, b) on the tie
    assert _merges("aaabdaaabac", 3) == [(b"a", b"a"), (b"aa", b"a"), (b"aaa", b"b")]


def test_word_counts_first_merges():
    # {"abab": 3, "abac": 1}: (a,b) has count 7, then (ab,ab) count 3.
    merges = learn_merges({b"abab": 3, b"abac": 1}, 3)
    assert merges[:2] == [(b"a", b"b"), (b"ab", b"ab")]
    # A smallest-pair tie rule would break the 1-1 tie between (ab,a) and (a,c) towards (a,c); our
    # rule (greatest pair of byte strings) picks (ab, a).
    assert merges[2] == (b"ab", b"a")


def test_ids_are_bytes_then_specials_then_merges():
    tok = BPETrainer(260, special_tokens=["<|endoftext|>", "<pad>"], pattern=None).train_from_iterator(["abababab"])
    assert tok.special_tokens == {"<|endoftext|>": 256, "<pad>": 257}
    assert tok.decode_single_token_bytes(258) == b"ab"
    assert all(tok.decode_single_token_bytes(b) == bytes([b]) for b in range(256))


def test_special_tokens_are_never_merged_and_merges_do_not_cross_them():
    text = "ab<|endoftext|>ab<|endoftext|>ab<|endoftext|>"
    tok = BPETrainer(300, special_tokens=["<|endoftext|>"], pattern=None).train_from_iterator([text])
    learned = [a + b for a, b in tok.model.merges]
    assert b"ab" in learned
    assert not any(b"<|" in t or b"|>" in t or b"b<" in t for t in learned)
    assert tok.encode(text, allowed_special="all") == [257, 256, 257, 256, 257, 256]


def test_merges_never_cross_pretoken_boundaries():
    tok = BPETrainer(400, pattern="gpt2").train_from_iterator(["the cat in the hat " * 50])
    for a, b in tok.model.merges:
        merged = (a + b).decode("utf-8", "replace")
        assert RegexSplit("gpt2").split(merged) == [merged], merged


def test_matches_cs336_reference_merges_on_corpus_en(shared_data):
    from tokenforge.compat import cs336

    ref_lines = (FIXTURES / "cs336_corpus_en_reference_merges.txt").read_text(encoding="utf-8").splitlines()
    ref = [tuple(decode_string(p) for p in line.split(" ")) for line in ref_lines]
    vocab, merges = cs336.train_bpe(shared_data / "text" / "corpus.en", 500, ["<|endoftext|>"])
    assert merges == ref
    assert len(vocab) == 500 and vocab[256] == b"<|endoftext|>"


def test_byte_tie_break_differs_from_cs336_unicode_order_only_on_ties(shared_data):
    path = shared_data / "text" / "corpus.en"
    by_bytes = BPETrainer(500, special_tokens=["<|endoftext|>"]).train(path).model.merges
    by_unicode = BPETrainer(500, special_tokens=["<|endoftext|>"], tie_break="gpt2_unicode").train(path).model.merges
    assert by_bytes[:92] == by_unicode[:92]
    # at merge 92, (t, h) and (' c', om) both occur 172 times: bytes prefer b"t" > b" c"
    assert by_bytes[92] == (b"t", b"h") and by_unicode[92] == (b" c", b"om")


def test_training_twice_gives_identical_files(tmp_path, shared_data):
    path = shared_data / "text" / "tinystories_sample.txt"
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    tokenforge.train_bpe(path, 400, special_tokens=["<|endoftext|>"], workers=1).save(a)
    tokenforge.train_bpe(path, 400, special_tokens=["<|endoftext|>"], workers=2).save(b)
    assert a.read_bytes() == b.read_bytes()


def test_training_is_independent_of_hash_seed(tmp_path, shared_data):
    path = shared_data / "text" / "tinystories_sample.txt"
    outs = []
    for seed in ("0", "12345"):
        out = tmp_path / f"seed{seed}.json"
        code = (
            "import tokenforge,sys; tokenforge.train_bpe(sys.argv[1], 350, special_tokens=['<|endoftext|>'],"
            " workers=1).save(sys.argv[2])"
        )
        env = dict(os.environ, PYTHONHASHSEED=seed)
        subprocess.run([sys.executable, "-c", code, str(path), str(out)], check=True, env=env)
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]


def test_parallel_chunked_counting_equals_whole_file_counting(tmp_path, shared_data):
    text = (shared_data / "text" / "tinystories_valid_sample.txt").read_text(encoding="utf-8")[:200_000]
    text += "\n  indented  \n\n\nx  y\u00a0\nz " + (shared_data / "text" / "german.txt").read_text(encoding="utf-8")
    path = tmp_path / "t.txt"
    path.write_text(text, encoding="utf-8")
    for pattern in ["gpt2", "cl100k", "o200k", "llama3", "qwen"]:
        pre = RegexSplit(pattern)
        whole = count_text(text, pre, special_regex(["<|endoftext|>"]))
        chunked = count_files([path], pre, ["<|endoftext|>"], workers=2, chunk_bytes=997)
        assert chunked == whole, pattern


_chunk_chars = st.sampled_from(list("ab Z'\n\n\r\t 1.!中🙂\u00a0\u3000") + ["<|endoftext|>", "  ", "\n "])


@settings(max_examples=60, deadline=None)
@given(st.lists(_chunk_chars, max_size=300), st.integers(1, 40))
def test_safe_chunk_boundaries_never_change_counts(tmp_path_factory, parts, chunk_bytes):
    text = "".join(parts)
    path = tmp_path_factory.mktemp("chunks") / "t.txt"
    path.write_bytes(text.encode("utf-8"))
    for pattern in ["gpt2", "cl100k", "o200k"]:
        pre = RegexSplit(pattern)
        whole = count_text(text, pre, special_regex(["<|endoftext|>"]))
        assert count_files([path], pre, ["<|endoftext|>"], workers=1, chunk_bytes=chunk_bytes) == whole


def test_stops_early_when_no_pair_is_left():
    trainer = BPETrainer(1000, pattern=None)
    tok = trainer.train_from_iterator(["abcd"])
    assert trainer.last_report.stopped_early
    assert trainer.last_report.merges_learned == 3
    assert len(tok) == 259


def test_vocab_size_smaller_than_alphabet_plus_specials_is_an_error():
    with pytest.raises(TrainingError, match="256 byte tokens plus 2 special"):
        BPETrainer(257, special_tokens=["<a>", "<b>"])


def test_duplicate_special_token_is_an_error():
    with pytest.raises(SpecialTokenError, match="listed twice"):
        BPETrainer(300, special_tokens=["<|endoftext|>", "<|endoftext|>"])


def test_non_utf8_training_file_names_file_and_line(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_bytes(b"fine line\nsecond line\nbad \xff byte\n")
    with pytest.raises(TrainingError, match=r"bad\.txt, line 3: not valid UTF-8"):
        tokenforge.train_bpe(path, 300)
    tok = tokenforge.train_bpe(path, 300, errors="replace")
    assert len(tok) > 256


def test_missing_training_file_is_named(tmp_path):
    with pytest.raises(TokenizerFileNotFoundError, match="nope.txt"):
        tokenforge.train_bpe(tmp_path / "nope.txt", 300)


def test_counts_are_exact_for_repeated_words():
    counts = count_text("the the the cat", RegexSplit("gpt2"), None)
    assert counts == Counter({b" the": 2, b"the": 1, b" cat": 1})


def test_custom_pattern_and_named_patterns_train():
    for pattern in ["gpt2", "cl100k", "o200k", "llama3", "qwen", r"\w+|\s+|[^\w\s]+"]:
        tok = BPETrainer(300, pattern=pattern).train_from_iterator(["Hello world, hello tokenizer 12345!"] * 5)
        text = "Hello world 42"
        assert tok.decode(tok.encode(text)) == text


def test_unknown_pattern_name_is_an_error():
    with pytest.raises(tokenforge.UnknownEncodingError, match="unknown pattern name 'gtp2'"):
        BPETrainer(300, pattern="gtp2")

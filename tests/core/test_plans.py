"""Which plan each tokenizer gets, and that a plan never changes ids.

The plan is chosen once, when a tokenizer is built, from its stages alone
(``tokenforge._plans``). These tests pin the plan of every real vocabulary in
``shared/data/vocab`` and check the plan against the pure-Python stages.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import tokenforge
from tokenforge import Tokenizer, _native, decoders, pretokenizers
from tokenforge.bytelevel import encode_bytes
from tokenforge.models.bpe import PieceBPE

native = pytest.mark.skipif(not _native.available(), reason="the native core is not built")

#: file under shared/data/vocab -> (load kwargs, plan)
SHIPPED = {
    "tiktoken/r50k_base.tiktoken": ({}, "rank-bpe"),
    "tiktoken/p50k_base.tiktoken": ({}, "rank-bpe"),
    "tiktoken/cl100k_base.tiktoken": ({}, "rank-bpe"),
    "tiktoken/o200k_base.tiktoken": ({}, "rank-bpe"),
    "tiktoken/qwen.tiktoken": ({"pattern": "qwen"}, "rank-bpe"),
    "meta/llama3_tokenizer.model": ({"pattern": "llama3"}, "rank-bpe"),  # a rank file named .model
    "gpt2": ({}, "rank-bpe"),
    "hf/qwen2": ({}, "rank-bpe"),
    "hf/gpt2_tokenizer.json": ({}, "rank-bpe"),
    "hf/claude_tokenizer.json": ({}, "python"),
    "hf/bert-base-uncased_wordpiece_tokenizer.json": ({}, "wordpiece"),
    "hf/albert-base-v2_spiece_unigram_tokenizer.json": ({}, "sentencepiece"),
    "wordpiece/bert-base-uncased_vocab.txt": ({}, "wordpiece"),
    "wordpiece/bert-base-chinese_vocab.txt": ({}, "wordpiece"),
    "gguf/ggml-vocab-gpt-2.gguf": ({}, "rank-bpe"),
    "gguf/ggml-vocab-bert-bge.gguf": ({}, "wordpiece"),
    "gguf/ggml-vocab-falcon.gguf": ({}, "python"),  # several split regexes in turn
    "gguf/ggml-vocab-starcoder.gguf": ({}, "python"),
    "gguf/ggml-vocab-llama-spm.gguf": ({}, "sentencepiece"),
    "sentencepiece/albert_spiece.model": ({}, "sentencepiece"),
    "sentencepiece/hf_test_bpe.model": ({}, "sentencepiece"),
    "sentencepiece/hf_test_unigram.model": ({}, "sentencepiece"),
    "sentencepiece/mistral_v1_tokenizer.model": ({}, "sentencepiece"),
    "sentencepiece/spm_test_ja_unigram.model": ({}, "sentencepiece"),
    "sentencepiece/spm_test_unigram.model": ({}, "sentencepiece"),
}

SAMPLE = [
    "Hello, world! It's 2024-05-01 — naïve café",
    "吾輩は猫である。名前はまだ無い。",
    "def f(x):\n\treturn x**2  # 🙂👩‍👩‍👧\r\n",
    "   spaces    and 1234567 digits",
]


@native
@pytest.mark.parametrize("rel", list(SHIPPED))
def test_each_shipped_vocabulary_gets_its_plan_and_the_plan_keeps_ids(shared_data, rel):
    path = shared_data / "vocab" / rel
    if not path.exists():
        pytest.skip(f"{rel} is not in shared/data")
    kwargs, plan = SHIPPED[rel]
    tok = tokenforge.load(path, **kwargs)
    assert tok.plan == plan
    reference = Tokenizer.from_dict(tok.to_dict(), backend="python")
    assert reference.plan == "python"
    text = "\n".join(SAMPLE)
    lines = (shared_data / "text" / "tinyshakespeare.txt").read_text(encoding="utf-8").splitlines()[:200]
    for t in [*SAMPLE, text, *lines]:
        assert tok.encode(t, disallowed_special=()) == reference.encode(t, disallowed_special=()), t


@native
def test_shipped_encodings_run_on_the_rank_merge_core():
    for name in ("gpt2", "r50k_base", "p50k_base", "p50k_edit", "cl100k_base", "o200k_base"):
        assert tokenforge.get_encoding(name).plan == "rank-bpe"


def _byte_level(vocab_extra: dict[str, int], merges: list[tuple[str, str]], **kw) -> Tokenizer:
    vocab = {encode_bytes(bytes([i])): i for i in range(256)}
    vocab.update(vocab_extra)
    pre = pretokenizers.Sequence([
        pretokenizers.Split(tokenforge.PATTERNS["gpt2"], "isolated"),
        pretokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    return Tokenizer(PieceBPE(vocab, merges, **kw), pre_tokenizer=pre, decoder=decoders.ByteLevel())


@native
def test_a_merge_list_the_ranks_do_not_imply_runs_on_the_pair_merge():
    # HF merges "abc" by its list: b+c first, then (a, bc) is no merge: [a, bc].
    # Rank BPE would merge a+bc into the token "abc"; the native merge by priority does not.
    tok = _byte_level({"bc": 256, "ab": 257, "abc": 258}, [("b", "c"), ("a", "b"), ("ab", "c")])
    assert tok.plan == "pair-bpe"
    assert tok.encode("abc") == [97, 256]
    assert tok.encode("abc" * 100) == [97, 256] * 100  # the heap path (a piece past 128 bytes)


@native
def test_a_token_no_merge_makes_runs_on_the_pair_merge_unless_merges_are_ignored():
    tok = _byte_level({"ab": 256, "xyz": 257}, [("a", "b")])
    assert tok.plan == "pair-bpe" and tok.encode("xyz") == [120, 121, 122]
    tok = _byte_level({"ab": 256, "xyz": 257}, [("a", "b")], ignore_merges=True)
    assert tok.plan == "rank-bpe" and tok.encode("xyz") == [257]


@native
def test_with_ignore_merges_a_token_two_tokens_join_without_a_merge_runs_on_the_pair_merge(tmp_path):
    # "aa" has no merge (HF's file had it deleted): HF reaches it only as a whole piece,
    # rank BPE would also merge a+a inside "aaa"; the merge by priority does not.
    tok = _byte_level({"aa": 256, "ab": 257}, [("a", "b")], ignore_merges=True)
    assert tok.plan == "pair-bpe"
    assert tok.encode("aa") == [256] and tok.encode("aaa") == [97, 97, 97] and tok.encode("aab") == [97, 257]
    tokenizers = pytest.importorskip("tokenizers")
    tok.save(str(tmp_path / "tokenizer.json"), format="hf")
    hf = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    for text in ("aa", "aaa", "aab", "xaa"):
        assert hf.encode(text).ids == tok.encode(text)


@native
def test_a_consistent_hf_byte_level_model_runs_on_the_rank_merge_core():
    tok = _byte_level({"ab": 256, "abc": 257}, [("a", "b"), ("ab", "c")])
    assert tok.plan == "rank-bpe"
    assert tok.encode("abcab") == [257, 256] == Tokenizer.from_dict(tok.to_dict(), backend="python").encode("abcab")


def test_the_python_backend_forces_the_python_plan(monkeypatch):
    monkeypatch.setenv("TOKENFORGE_BACKEND", "python")
    assert Tokenizer.from_dict(tokenforge.get_encoding("gpt2").to_dict()).plan == "python"


def test_byte_level_plan_splits_a_custom_hf_pattern_as_oniguruma(shared_data):
    """A byte-level tokenizer.json whose Split regex is not a named pattern runs on the
    rank-merge plan; its regex must still match as HF's engine does (\\w without ZWNJ)."""
    import json

    tokenizers = pytest.importorskip("tokenizers")
    doc = json.loads((shared_data / "vocab" / "hf" / "gpt2_tokenizer.json").read_text())
    doc["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": r"\w+|[^\w\s]+|\s+"}, "behavior": "Isolated", "invert": False},
        {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}]}
    hf = tokenizers.Tokenizer.from_str(json.dumps(doc))
    tok = tokenforge.Tokenizer.from_dict(doc)
    assert tok.plan == "rank-bpe"
    for text in ["می\u200cخواهم x", "hello ²³ world", "a\u200db c"]:
        assert tok.encode(text) == hf.encode(text).ids

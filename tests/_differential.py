"""The differential registry: every tokenizer file in ``shared/data/vocab`` next to the
reference library that defines its ids (tiktoken, HF tokenizers, sentencepiece).

Each :class:`Case` builds tokenforge's tokenizer (through ``tokenforge.load``, as a
user would) and a reference ``encode(list_of_texts) -> list_of_ids``, both with
the same special-token policy: tiktoken cases read special-token strings as
text (``encode_ordinary``), HF cases match specials in the text as HF always
does (``allowed_special="all"``), sentencepiece never reads control pieces from
text (``disallowed_special=()``). Used by ``tests/test_differential.py`` and by
``tools/differential_report.py`` (the README's table).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import tokenforge

QWEN_SPECIALS = {"<|endoftext|>": 151643, "<|im_start|>": 151644, "<|im_end|>": 151645}

ADVERSARIAL = [
    "",
    " \r\n\t\u3000  \r\n\r\n\t\t x \u3000\u3000",
    "a" * 100_000,
    "\u6f22" * 20_000,
    '{"id":1,"name":"x","tags":["a","b"],"nested":{"k":[1,2,3,{"z":null}]},"ok":true}' * 40,
    " ".join(str(10**k + k) for k in range(40)),
    "0 00 000 0000 00000 123456789012345678901234567890",
    "\U0001F469\u200D\U0001F469\u200D\U0001F467\u200D\U0001F466 \U0001F1EF\U0001F1F5\U0001F1FA\U0001F1F8 \u2764\uFE0F",
    "e\u0301 a\u0300\u0316 \u1E9B\u0323 Z\u0351\u036B\u0343\u036A",
    "\u0e2a\u0e27\u0e31\u0e2a\u0e14\u0e35\u0e04\u0e23\u0e31\u0e1a \u0928\u092e\u0938\u094d\u0924\u0947 \u0645\u064e\u0631\u0652\u062d\u064e\u0628\u064b\u0627",
    "\x00 NUL \x00\x00 end",
    "\ud800 lone \udfff surrogates",
]


@dataclass
class Case:
    name: str
    library: str  # "tiktoken", "tokenizers" or "sentencepiece"
    build: Callable[[Path], tuple[Callable[[list[str]], list[list[int]]], Callable[[list[str]], list[list[int]]]]]
    accepts_surrogates: bool = True


def _tiktoken_case(name: str, file: str, pattern: str | None = None, specials: dict | None = None) -> Case:
    def build(vocab: Path):
        import tiktoken

        path = vocab / "tiktoken" / file
        ours = tokenforge.load(path, pattern=pattern, special_tokens=specials) if pattern else tokenforge.load(path)
        ref = tiktoken.Encoding(
            name, pat_str=ours.pattern, mergeable_ranks=dict(ours.mergeable_ranks), special_tokens=dict(ours.special_tokens)
        )
        # tiktoken's ranks come from tokenforge's parse here; the file's bytes are the same either way
        # (test_formats_tiktoken checks parse_ranks against tiktoken's loader).
        return (lambda texts: ours.encode_batch(texts, disallowed_special=()),
                lambda texts: ref.encode_ordinary_batch(texts))

    return Case(f"tiktoken/{file}" + (f" (pattern={pattern})" if pattern else ""), "tiktoken", build)


def _hf_json_case(file: str) -> Case:
    def build(vocab: Path):
        from tokenizers import Tokenizer

        path = vocab / "hf" / file
        ours = tokenforge.load(path)
        ref = Tokenizer.from_file(str(path))
        return (lambda texts: [ours.encode(t, allowed_special="all") for t in texts],
                lambda texts: [e.ids for e in ref.encode_batch(texts)])

    return Case(f"hf/{file}", "tokenizers", build, accepts_surrogates=False)


def _hf_bpe_files_case(name: str, directory: str, pattern: str) -> Case:
    def build(vocab: Path):
        from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers

        d = vocab / directory
        ours = tokenforge.load(d, pattern=pattern)
        ref = Tokenizer(models.BPE.from_file(str(d / "vocab.json"), str(d / "merges.txt")))
        from tokenforge.pretokenizers import PATTERNS

        ref.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(PATTERNS[pattern]), "isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ])
        ref.decoder = decoders.ByteLevel()
        return (lambda texts: ours.encode_batch(texts, disallowed_special=()),
                lambda texts: [e.ids for e in ref.encode_batch(texts)])

    return Case(name, "tokenizers", build, accepts_surrogates=False)


def _sentencepiece_case(file: str) -> Case:
    def build(vocab: Path):
        import sentencepiece as spm

        path = vocab / "sentencepiece" / file
        ours = tokenforge.load(path)
        ref = spm.SentencePieceProcessor(model_file=str(path))
        return (lambda texts: [ours.encode(t, disallowed_special=()) for t in texts],
                lambda texts: ref.encode(texts))

    return Case(f"sentencepiece/{file}", "sentencepiece", build, accepts_surrogates=False)


def _bert_vocab_case(file: str, lowercase: bool) -> Case:
    def build(vocab: Path):
        from tokenizers import BertWordPieceTokenizer

        path = vocab / "wordpiece" / file
        ours = tokenforge.load(path, lowercase=lowercase)
        ref = BertWordPieceTokenizer(str(path), lowercase=lowercase)
        return (lambda texts: [ours.encode(t, allowed_special="all") for t in texts],
                lambda texts: [e.ids for e in ref.encode_batch(texts)])

    return Case(f"wordpiece/{file}", "tokenizers", build, accepts_surrogates=False)


def _gguf_case(file: str, reference_json: str) -> Case:
    """A GGUF file against HF tokenizers running the original model's tokenizer.json."""

    def build(vocab: Path):
        from tokenizers import Tokenizer

        ours = tokenforge.load(vocab / "gguf" / file)
        ref = Tokenizer.from_file(str(vocab / "hf" / reference_json))
        return (lambda texts: [ours.encode(t, allowed_special="all") for t in texts],
                lambda texts: [e.ids for e in ref.encode_batch(texts)])

    return Case(f"gguf/{file} (vs hf/{reference_json})", "tokenizers", build, accepts_surrogates=False)


CASES = [
    _tiktoken_case("r50k_base", "r50k_base.tiktoken"),
    _tiktoken_case("p50k_base", "p50k_base.tiktoken"),
    _tiktoken_case("cl100k_base", "cl100k_base.tiktoken"),
    _tiktoken_case("o200k_base", "o200k_base.tiktoken"),
    _tiktoken_case("qwen", "qwen.tiktoken", pattern="qwen", specials=QWEN_SPECIALS),
    _hf_json_case("gpt2_tokenizer.json"),
    _hf_json_case("claude_tokenizer.json"),
    _hf_json_case("bert-base-uncased_wordpiece_tokenizer.json"),
    _hf_json_case("albert-base-v2_spiece_unigram_tokenizer.json"),
    _hf_bpe_files_case("gpt2/vocab.json+merges.txt", "gpt2", "gpt2"),
    _hf_bpe_files_case("hf/qwen2/vocab.json+merges.txt", "hf/qwen2", "qwen"),
    _bert_vocab_case("bert-base-uncased_vocab.txt", True),
    _bert_vocab_case("bert-base-chinese_vocab.txt", False),
    _gguf_case("ggml-vocab-gpt-2.gguf", "gpt2_tokenizer.json"),
    _gguf_case("ggml-vocab-bert-bge.gguf", "bert-base-uncased_wordpiece_tokenizer.json"),
] + [_sentencepiece_case(f) for f in (
    "albert_spiece.model", "hf_test_bpe.model", "hf_test_unigram.model", "mistral_v1_tokenizer.model",
    "spm_test_ja_unigram.model", "spm_test_unigram.model",
)]


def corpora(shared_data: Path) -> list[Path]:
    """Every text file in ``shared/data/text`` (the parallel UDHR files included)."""
    return sorted(p for p in (shared_data / "text").rglob("*") if p.is_file())


def read_text(path: Path) -> str:
    return path.read_bytes().decode("utf-8")


def safe(text: str, case: Case) -> str:
    """The text as the reference can take it (HF and sentencepiece refuse lone surrogates;
    tokenforge replaces them with U+FFFD, as tiktoken does)."""
    if case.accepts_surrogates:
        return text
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def vocab_dir(shared_data: Path) -> Path:
    return Path(os.environ.get("TOKENFORGE_VOCAB_DIR", shared_data / "vocab"))

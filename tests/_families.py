"""The tokenizer families a user meets, built from files a user has: the shipped
encodings, the small fixture models, and tokenizers written and read back in
each format. Used by the tests that must hold for every family."""

from __future__ import annotations

import lzma
from pathlib import Path

import tokenforge
from tokenforge import AddedToken, Tokenizer, normalizers, postprocessors, pretokenizers
from tokenforge.models.wordlevel import WordLevel

FIXTURES = Path(__file__).resolve().parent / "fixtures"
TEXTS = [
    "",
    "Hello, world! The quick brown fox.",
    "naïve café — déjà vu; ﬃ ligature",
    "吾輩は猫である。名前はまだ無い。 中文分词",
    "emoji 🙂👩‍👩‍👧 flags 🇫🇷 and ZWJ",
    "  leading and trailing spaces  \n\ttabs\r\nCRLF",
    "مرحبا بالعالم שלום עולם",
    "x" * 300,
    "def f(x):\n    return x ** 2  # code\n",
]


def _xz(tmp_path: Path, name: str) -> Path:
    out = tmp_path / name
    out.write_bytes(lzma.decompress((FIXTURES / "differential" / f"{name}.xz").read_bytes()))
    return out


def _bert(tmp_path: Path) -> Tokenizer:
    return tokenforge.load(_xz(tmp_path, "bert-base-chinese_vocab.txt"), lowercase=True)


def _wordlevel(_tmp_path: Path) -> Tokenizer:
    words = sorted({w for t in TEXTS for w in t.split()})
    vocab = {"[UNK]": 0, **{w: i + 3 for i, w in enumerate(words)}}
    return Tokenizer(
        WordLevel(vocab, "[UNK]"),
        normalizer=normalizers.NFC(),
        pre_tokenizer=pretokenizers.WhitespaceSplit(),
        post_processor=postprocessors.TemplateProcessing("[CLS] $A [SEP]", "[CLS] $A [SEP] $B:1 [SEP]:1",
                                                         [("[CLS]", 1), ("[SEP]", 2)]),
        added_tokens=[AddedToken("[CLS]", 1), AddedToken("[SEP]", 2), AddedToken("[UNK]", 0)],
    )


def _hf_byte_level(tmp_path: Path) -> Tokenizer:
    path = tmp_path / "gpt2.json"
    tokenforge.get_encoding("gpt2").save(str(path), format="hf")
    return tokenforge.load(path)


def _gpt2_files(tmp_path: Path) -> Tokenizer:
    d = tmp_path / "gpt2dir"
    d.mkdir()
    tokenforge.get_encoding("gpt2").save(str(d), format="gpt2")
    return tokenforge.load(d)


FAMILIES = {
    # family: (builder, expected plan)
    "tiktoken cl100k_base": (lambda p: tokenforge.get_encoding("cl100k_base"), "rank-bpe"),
    "gpt2 vocab.json+merges.txt": (_gpt2_files, "rank-bpe"),
    "HF byte-level tokenizer.json": (_hf_byte_level, "rank-bpe"),
    "SentencePiece Unigram .model": (lambda p: tokenforge.load(_xz(p, "spm_test_unigram.model")), "sentencepiece"),
    "SentencePiece BPE .model": (lambda p: tokenforge.load(_xz(p, "hf_test_bpe.model")), "sentencepiece"),
    "BERT WordPiece vocab.txt": (_bert, "wordpiece"),
    "WordLevel by hand": (_wordlevel, "python"),
}



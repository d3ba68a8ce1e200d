"""A BERT pipeline built from a real vocab.txt or tokenizer.json gives HF tokenizers' ids, tokens and offsets."""

from __future__ import annotations

import json

import pytest

from tokenforge import Tokenizer
from tokenforge.presets import bert_wordpiece

tokenizers = pytest.importorskip("tokenizers")

ADVERSARIAL = [
    "", " ", "Hello, World!", "Héllo wörld — naïve café", "don't stop", "中文字符和English混合。", "東京タワー",
    "👩‍👩‍👧 🇯🇵 e\u0301 ﬃ", "\x00\x01\t\n\r\u3000\u200b\ufeff", "مرحبا بالعالم", "नमस्ते", "สวัสดีครับ",
    "a" * 150, "x" * 99 + " " + "y" * 101, "[CLS] inside [SEP] text [MASK]", "123456789 3.14159", '{"a":[1,2]}',
    "\ud800 lone", "UPPER lower MiXeD", "\u0130stanbul \u1e9e",
]


def _texts(shared_data, limit=60_000):
    out = []
    for path in sorted((shared_data / "text").rglob("*")):
        if path.is_file() and path.suffix in (".txt", "") or path.name == "corpus.en":
            try:
                data = path.read_text(encoding="utf-8")[:limit]
            except (UnicodeDecodeError, IsADirectoryError):
                continue
            out.append((path.name, data))
    return out


@pytest.mark.parametrize("vocab_name,lowercase", [("bert-base-uncased_vocab.txt", True), ("bert-base-chinese_vocab.txt", False)])
def test_vocab_txt_gives_hf_ids_on_all_text(shared_data, vocab_name, lowercase):
    from tokenizers import BertWordPieceTokenizer

    path = shared_data / "vocab" / "wordpiece" / vocab_name
    ours = bert_wordpiece(path, lowercase=lowercase)
    ref = BertWordPieceTokenizer(str(path), lowercase=lowercase)
    docs = lines = 0
    for name, text in _texts(shared_data):
        for line in text.splitlines()[:400]:
            assert ours.encode(line, allowed_special="all") == ref.encode(line).ids, (name, line)
            lines += 1
        assert ours.encode(text, allowed_special="all") == ref.encode(text).ids, name
        docs += 1
    for text in ADVERSARIAL:
        safe = text.replace("\ud800", "\ufffd")
        assert ours.encode(text, allowed_special="all") == ref.encode(safe).ids, text
    assert docs > 5 and lines > 1000


def test_hf_tokenizer_json_gives_hf_ids_tokens_and_offsets(shared_data):
    from tokenizers import Tokenizer as HFTokenizer

    path = shared_data / "vocab" / "hf" / "bert-base-uncased_wordpiece_tokenizer.json"
    ours = Tokenizer.from_dict(json.loads(path.read_text(encoding="utf-8")))
    ref = HFTokenizer.from_file(str(path))
    for name, text in _texts(shared_data, 20_000):
        for line in text.splitlines()[:150] + ADVERSARIAL:
            line = line.replace("\ud800", "\ufffd")
            r = ref.encode(line)
            e = ours.encode_full(line, allowed_special="all")
            assert e.ids == r.ids, (name, line)
            assert e.tokens == r.tokens, (name, line)
            assert e.offsets == r.offsets, (name, line)
            assert e.type_ids == r.type_ids
    pair = ("Hello there.", "General Kenobi!")
    r = ref.encode(*pair)
    e = ours.encode_full(*pair, allowed_special="all")
    assert (e.ids, e.type_ids, e.special_tokens_mask) == (r.ids, r.type_ids, r.special_tokens_mask)
    assert ours.encode("Hello", add_special_tokens=False, allowed_special="all") == ref.encode("Hello", add_special_tokens=False).ids


def test_decode_matches_hf_without_cleanup(shared_data):
    from tokenizers import Tokenizer as HFTokenizer

    path = shared_data / "vocab" / "hf" / "bert-base-uncased_wordpiece_tokenizer.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    ours = Tokenizer.from_dict(data)
    ref = HFTokenizer.from_file(str(path))
    for text in ["Hello, world! Don't panic.", "unaffable naïveté", "中文 text"]:
        ids = ref.encode(text).ids
        assert ours.decode(ids, skip_special_tokens=True) == ref.decode(ids)
        assert ours.decode(ids, skip_special_tokens=False) == ref.decode(ids, skip_special_tokens=False)


def test_bert_special_token_in_user_text_raises_by_default(shared_data):
    from tokenforge.errors import SpecialTokenError

    ours = bert_wordpiece(shared_data / "vocab" / "wordpiece" / "bert-base-uncased_vocab.txt")
    with pytest.raises(SpecialTokenError, match=r"\[SEP\]"):
        ours.encode("a [SEP] b")
    as_text = ours.encode("a [SEP] b", disallowed_special=())
    assert 102 not in as_text[1:-1]


def test_streamed_decode_equals_whole_decode(shared_data):
    ours = bert_wordpiece(shared_data / "vocab" / "wordpiece" / "bert-base-uncased_vocab.txt")
    text = "Streaming tokenizers shouldn't split characters: naïve café, 中文."
    ids = ours.encode(text)
    assert "".join(ours.decode_stream(ids)) == ours.decode(ids)

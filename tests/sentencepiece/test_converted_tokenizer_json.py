"""SentencePiece models converted to HF ``tokenizer.json`` (transformers' converters) run on the
native sentencepiece plan with HF tokenizers' ids: Llama 2 / Mistral (``Prepend`` +
``Replace`` normalizer, HF BPE by merge rank with byte fallback) and ALBERT (``Precompiled``,
``Metaspace``, Unigram). Each is checked against HF tokenizers and against tokenforge's own
Python stages on adversarial text, single and batched, and the plan each file gets is pinned.
"""

from __future__ import annotations

import base64
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tokenforge

tokenizers = pytest.importorskip("tokenizers")

ADVERSARIAL = [
    "",
    " ",
    "   ",
    "a",
    " a",
    "a ",
    "  leading and trailing  ",
    "Hello world",
    "Hello   world\twith\ttabs\nand\r\nnewlines\n\n",
    "multiple     spaces    inside",
    "▁already▁escaped ▁ ▁▁",
    "emoji 😀👍🏽 family 👨‍👩‍👧‍👦 flags 🇯🇵",
    "ZWJ a\u200db zero\u200bwidth",
    "combining e\u0301 a\u0308\u0301 n\u0303",
    "中文文本，测试一下。日本語のテキスト、カタカナ。한국어",
    "RTL שלום עולם مرحبا بالعالم",
    "control \x00\x01\x07\x1b\x7f chars",
    "``quoted'' and ''double'' ``quotes``",
    "lone \ud800 surrogate \udfff here",
    "private \ue000 and astral \U0001f9ff \U00020000",
    "mixed\u3000ideographic\u00a0nbsp\u2028line",
    "<s> </s> <unk> [CLS] [SEP] <pad>",
    "ﬃ ligature ½ fraction Ⅻ numeral ｆｕｌｌ",
    "a" * 3000,
    ("The quick brown fox jumps over the lazy dog. " * 200).strip(),
    "x" + " " * 500 + "y",
    "🙂" * 300,
    "UPPER Case WORDS unknown to ALBERT ÀÉÎ ÕÜ",
    "<unk>X Y<unk>Z<unk><unk> ZZ<unk>",
    "\ufeffBOM then text\r\nCRLF\r\n\r\nlines\r",
    "e\u0301\r\n\u0600a \u0915\u094d\u0937 🇯🇵🇯 a\u200d😀",
]


def _llama2_json(shared_data, tmp_path_factory):
    """The Llama 2 / Mistral ``tokenizer.json`` as transformers' ``LlamaConverter`` (legacy)
    makes it from the ``.model``."""
    conv = pytest.importorskip("transformers.convert_slow_tokenizer")
    pb = pytest.importorskip("sentencepiece.sentencepiece_model_pb2")
    from tokenizers import AddedToken, decoders, models, normalizers

    m = pb.ModelProto()
    m.ParseFromString((shared_data / "vocab" / "sentencepiece" / "mistral_v1_tokenizer.model").read_bytes())
    vocab = {p.piece: i for i, p in enumerate(m.pieces)}
    merges = conv.generate_merges(vocab, [(p.piece, p.score) for p in m.pieces])
    tok = tokenizers.Tokenizer(models.BPE(vocab, merges, unk_token=m.trainer_spec.unk_piece, fuse_unk=True,
                                          byte_fallback=True))
    tok.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
    tok.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(),
                                     decoders.Strip(" ", 1, 0)])
    tok.add_special_tokens([AddedToken(p.piece, normalized=False, special=True) for p in m.pieces if p.type == 3])
    out = tmp_path_factory.mktemp("llama2") / "tokenizer.json"
    tok.save(str(out))
    return out


@pytest.fixture(scope="module", params=["llama2", "albert"])
def pair(request, shared_data, tmp_path_factory):
    """(tokenforge tokenizer, the same with backend="python", HF tokenizer) of one file."""
    if request.param == "llama2":
        path = _llama2_json(shared_data, tmp_path_factory)
    else:
        path = shared_data / "vocab" / "hf" / "albert-base-v2_spiece_unigram_tokenizer.json"
    tok = tokenforge.load(path)
    return (tok, tokenforge.Tokenizer.from_dict(tok.to_dict(), backend="python"),
            tokenizers.Tokenizer.from_file(str(path)), request.param)


def _hf_ids(hf, text):
    return hf.encode(text, add_special_tokens=False).ids


def test_the_native_plan_is_chosen(pair):
    tok, py, _hf, _name = pair
    assert tok.plan == "sentencepiece"
    assert type(tok._plan).__name__ == "ConvertedSentencePiecePlan"
    assert py.plan == "python"


@pytest.mark.parametrize("text", ADVERSARIAL)
def test_ids_equal_hf_and_the_python_stages(pair, text):
    tok, py, hf, _name = pair
    want = _hf_ids(hf, text.encode("utf-16", "surrogatepass").decode("utf-16", "replace"))
    assert py.encode(text, allowed_special="all") == want
    assert tok.encode(text, allowed_special="all") == want


def test_batches_equal_hf_on_threads(pair):
    tok, _py, hf, _name = pair
    texts = [t.encode("utf-16", "surrogatepass").decode("utf-16", "replace") for t in ADVERSARIAL] * 3
    want = [e.ids for e in hf.encode_batch(texts, add_special_tokens=False)]
    for n in (1, 2, 4):
        assert tok.encode_batch(texts, num_threads=n, allowed_special="all") == want
    ids, offsets = tok.encode_batch_to_numpy(texts, num_threads=2, allowed_special="all")
    assert [ids[offsets[k]:offsets[k + 1]].tolist() for k in range(len(texts))] == want


def test_encode_full_offsets_equal_hf(pair):
    tok, _py, hf, _name = pair
    for text in ADVERSARIAL[:22]:
        if "\ud800" in text:
            continue
        got = tok.encode_full(text, allowed_special="all")
        want = hf.encode(text, add_special_tokens=False)
        assert got.ids == want.ids, text
        assert [tuple(o) for o in got.offsets] == [tuple(o) for o in want.offsets], text


_text = st.lists(
    st.one_of(
        st.sampled_from(list(" \t\n\r▁`'\"abcXYZ.,!?-") + ["``", "''", "  ", "ﬃ", "é", "e\u0301", "\u200d", "中", "文",
                                                           "😀", "🏽", "\x00"]),
        st.characters(blacklist_categories=("Cs",)),
    ),
    max_size=40,
).map("".join)


@settings(max_examples=300, deadline=None)
@given(texts=st.lists(_text, min_size=1, max_size=6))
def test_hypothesis_equal_hf(pair, texts):
    tok, _py, hf, _name = pair
    want = [e.ids for e in hf.encode_batch(texts, add_special_tokens=False)]
    assert [tok.encode(t, allowed_special="all") for t in texts] == want
    assert tok.encode_batch(texts, num_threads=2, allowed_special="all") == want


@pytest.mark.parametrize("unk,fuse,fallback", [("<unk>", True, True), ("<unk>", False, False), (None, True, False),
                                               ("<unk>", True, False)])
def test_llama_merges_run_by_rank_not_by_score(tmp_path, unk, fuse, fallback):
    """A merge list whose ranks disagree with the piece order, overlapping merges, some byte
    tokens missing, unknown runs fused or not or dropped: HF's ids natively (the native merge
    follows the ranks, not any score)."""
    vocab = {"<unk>": 0, "▁": 1, "a": 2, "b": 3, "ab": 4, "ba": 5, "aba": 6, "▁a": 7, "bab": 8, "x": 9, "xx": 10}
    if fallback:
        vocab.update({f"<0x{b:02X}>": 11 + b for b in range(256)})
    merges = [("b", "a"), ("a", "b"), ("a", "ba"), ("ab", "a"), ("▁", "a"), ("b", "ab"), ("ba", "b"), ("x", "x")]
    from tokenizers import models, normalizers

    hf = tokenizers.Tokenizer(models.BPE(vocab, merges, unk_token=unk, fuse_unk=fuse, byte_fallback=fallback))
    hf.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
    hf.save(str(tmp_path / "tokenizer.json"))
    tok = tokenforge.load(tmp_path / "tokenizer.json")
    assert tok.plan == "sentencepiece" and tok._plan._handles()
    for text in ["ababab", "babab", "abab aba", "xx ab yy", "a b a b", "bababababab aab", "é ée zz qé", "yyy zé▁", ""]:
        assert tok.encode(text, allowed_special="all") == hf.encode(text).ids, text


_mixed = st.lists(
    st.sampled_from(list("ab \r\n\t\x00é`'") + ["\r\n", "\u0301", "\u200d", "\u0600", "😀", "🏽", "🇯", "🇵", "\u1100",
                                                  "\u1161", "\uac00", "ﬃ", "中", "\u0915", "\u094d", "\ufeff", "Ａ", "½"]),
    max_size=30,
).map("".join)


@pytest.fixture(scope="module")
def precompiled_pair(shared_data):
    """(tokenforge's, HF's) Precompiled normalizer of the ALBERT tokenizer.json."""
    path = shared_data / "vocab" / "hf" / "albert-base-v2_spiece_unigram_tokenizer.json"
    doc = json.loads(path.read_text())
    hf = tokenizers.normalizers.Precompiled(base64.b64decode(doc["normalizer"]["precompiled_charsmap"]))
    return tokenforge.load(path).normalizer, hf


@settings(max_examples=500, deadline=None)
@given(text=st.one_of(_mixed, st.text(max_size=30)))
def test_precompiled_stretches_equal_hf(precompiled_pair, text):
    """Precompiled.normalize_str (ASCII translated outside the stretches that need the cluster
    rules) equals HF's Precompiled and the cluster-by-cluster loop."""
    ours, hf = precompiled_pair
    text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    assert ours.normalize_str(text) == ours._clusters(text) == hf.normalize_str(text)

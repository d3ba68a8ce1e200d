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


def _mistral_json(shared_data, tmp_path_factory):
    """The newer Mistral ``tokenizer.json`` style, as transformers' ``LlamaConverter`` makes it
    with ``legacy=False``: no normalizer, ``Metaspace(replacement="▁", prepend_scheme="first",
    split=False)`` and a Metaspace decoder, the same BPE model."""
    doc = json.loads(tokenizers.Tokenizer.from_file(str(_llama2_json(shared_data, tmp_path_factory))).to_str())
    meta = {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": False}
    doc["normalizer"] = None
    doc["pre_tokenizer"] = meta
    doc["decoder"] = dict(meta)
    out = tmp_path_factory.mktemp("mistral") / "tokenizer.json"
    tokenizers.Tokenizer.from_str(json.dumps(doc)).save(str(out))
    return out


@pytest.fixture(scope="module", params=["llama2", "mistral", "albert"])
def pair(request, shared_data, tmp_path_factory):
    """(tokenforge tokenizer, the same with backend="python", HF tokenizer) of one file."""
    if request.param == "llama2":
        path = _llama2_json(shared_data, tmp_path_factory)
    elif request.param == "mistral":
        path = _mistral_json(shared_data, tmp_path_factory)
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


# A crafted HF BPE for the symbol rules of HF's BPE::merge_word: byte tokens for only some
# bytes (z, é, the lead byte of Cyrillic; not those of 中 or 😀), merges that take byte
# tokens and the unknown token (then no cut beside them), characters that are dropped
# (no unknown token, no byte tokens).
_CRAFT_CHARS = list("ab▁xzéq ") + ["中", "😀", "ж", "ü", "ab", "  ", "▁▁", "xx", "<unk>"]


def _crafted(tmp_path, unk, fuse, fallback, byte_merges, unk_merges, spelled=False):
    from tokenizers import models, normalizers

    vocab = {"<unk>": 0, "▁": 1, "a": 2, "b": 3, "ab": 4, "ba": 5, "aba": 6, "▁a": 7, "x": 8, "xx": 9, "▁▁": 10}
    merges = [("b", "a"), ("a", "b"), ("ab", "a"), ("▁", "a"), ("x", "x"), ("▁", "▁")]
    if fallback:
        for b in (0x7A, 0xC3, 0xA9, 0xD0):  # z, é (C3 A9), the lead byte of ж (D0 B6; B6 missing)
            vocab[f"<0x{b:02X}>"] = len(vocab)
        if byte_merges:
            vocab["<0xC3><0xA9>"] = len(vocab)
            vocab["a<0x7A>"] = len(vocab)
            merges += [("<0xC3>", "<0xA9>"), ("a", "<0x7A>")]
    if unk_merges and unk is not None:
        vocab["<unk>a"] = len(vocab)
        vocab["b<unk>"] = len(vocab)
        merges += [("<unk>", "a"), ("b", "<unk>")]
    if spelled:  # merges spell the unknown token's text: that id must not fuse with an unknown run
        for t in ("<", "u", "n", "k", ">", "<u", "nk", "nk>"):
            vocab[t] = len(vocab)
        merges += [("<", "u"), ("n", "k"), ("nk", ">"), ("<u", "nk>")]
    hf = tokenizers.Tokenizer(models.BPE(vocab, merges, unk_token=unk, fuse_unk=fuse, byte_fallback=fallback))
    hf.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
    path = tmp_path / "tokenizer.json"
    hf.save(str(path))
    tok = tokenforge.load(path)
    assert tok.plan == "sentencepiece" and tok._plan._handles()
    return tok, tokenforge.Tokenizer.from_dict(tok.to_dict(), backend="python"), hf


_CRAFT_CASES = [
    # unk, fuse_unk, byte_fallback, merges taking byte tokens, merges taking the unknown token,
    # merges spelling the unknown token
    ("<unk>", True, True, False, False, False),  # some byte tokens missing and an unknown token
    ("<unk>", False, True, False, False, False),
    ("<unk>", True, True, True, True, False),
    ("<unk>", False, True, True, False, False),
    (None, True, True, True, False, False),  # missing bytes, no unknown token: dropped
    (None, False, False, False, False, False),  # every unknown character dropped
    ("<unk>", True, False, False, True, False),
    ("<unk>", False, False, False, False, False),
    ("<unk>", True, False, False, False, True),
    ("<unk>", True, True, False, False, True),
]


@pytest.mark.parametrize("unk,fuse,fallback,byte_merges,unk_merges,spelled", _CRAFT_CASES)
def test_open_unknown_runs_byte_merges_and_dropped_characters_equal_hf(tmp_path, unk, fuse, fallback, byte_merges,
                                                                       unk_merges, spelled):
    """HF's merge_word leaves a pending unknown run open across the byte tokens of later
    characters (they come first, and the run may still fuse past them); merges may take byte
    tokens and the unknown token; dropped characters make their neighbours adjacent. The
    native merge and the Python stages give HF's ids."""
    tok, py, hf = _crafted(tmp_path, unk, fuse, fallback, byte_merges, unk_merges, spelled)
    texts = ["中zé", "中z中", "中é中a", "ab中zzé中ab", "a中b", "b中a", "中😀ж", "ж中", "a中zb", "xx中 中 zé ab", "azé",
             "é" * 70 + "中" + "z" * 70, "中ab" * 40, "b中a" * 50, "q中q", "▁▁ ▁ 中▁", "aza" * 30, "<unk>a b<unk>",
             "中<unk>中", "<unk>中<unk>", "q<unk>q<unk>", "中" * 3 + "<unk>" * 3]
    for text in texts:
        want = hf.encode(text).ids
        assert tok.encode(text, allowed_special="all") == want, text
        assert py.encode(text, allowed_special="all") == want, text
    want = [e.ids for e in hf.encode_batch(texts)]
    assert tok.encode_batch(texts, num_threads=2, allowed_special="all") == want


@settings(max_examples=150, deadline=None)
@given(case=st.sampled_from(_CRAFT_CASES), texts=st.lists(st.lists(st.sampled_from(_CRAFT_CHARS), max_size=80)
                                                           .map("".join), min_size=1, max_size=4))
def test_hypothesis_crafted_bpe_equal_hf(tmp_path_factory, case, texts):
    tok, py, hf = _crafted(tmp_path_factory.mktemp("craft"), *case)
    want = [e.ids for e in hf.encode_batch(texts)]
    assert [tok.encode(t, allowed_special="all") for t in texts] == want
    assert [py.encode(t, allowed_special="all") for t in texts] == want


def _long_corner_texts() -> list[str]:
    json_doc = json.dumps([{"id": k, "name": f"item{k}", "tags": ["a", "b"], "v": k * 0.5} for k in range(400)],
                          separators=(",", ":"))
    return [
        "a" * 20000,
        " " * 20000,
        "▁" * 5000 + "x" + "▁ " * 2000,
        json_doc,
        "thequickbrownfoxjumpsoverthelazydog" * 400,
        "中文文本测试一下日本語のテキスト" * 500,
        "😀👍🏽👨‍👩‍👧‍👦" * 500,
        "\x00\x01\x07\x1b\x7f" * 1000,
        "e\u0301a\u0308\u0301" * 1000,
        "שלום עולם مرحبا بالعالم " * 300,
    ]


@pytest.mark.parametrize("which", ["llama2", "mistral"])
def test_long_corner_inputs_equal_hf(shared_data, tmp_path_factory, which):
    """Long texts of the worst cases (one character repeated, spaces, ``▁`` runs, minified
    JSON, text without spaces, CJK, emoji sequences, control characters, combining marks,
    RTL) give HF's ids on the native plan."""
    make = _llama2_json if which == "llama2" else _mistral_json
    path = make(shared_data, tmp_path_factory)
    tok = tokenforge.load(path)
    hf = tokenizers.Tokenizer.from_file(str(path))
    texts = _long_corner_texts()
    for text in texts:
        assert tok.encode(text) == hf.encode(text, add_special_tokens=False).ids, text[:40]
    want = [e.ids for e in hf.encode_batch(texts, add_special_tokens=False)]
    assert tok.encode_batch(texts, num_threads=2) == want

"""BERT's normalizer in the native WordPiece plan equals HF tokenizers' ``BertNormalizer``
on every code point, under every flag combination, and the whole plan (normalizer, split,
WordPiece) gives HF's ids on adversarial text, one text at a time and in batches.

The Python ``BertNormalizer`` follows Python's ``unicodedata`` (14.0 on Python 3.11) and
differs from HF on a few hundred newer code points (``tests/fixtures/normalizers/
unicode_differences.json``); the native one carries HF's tables (``tools/gen_bert_tables.py``),
so these tests compare it with HF itself.
"""

from __future__ import annotations

import itertools
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tokenforge import Tokenizer, _native, normalizers, pretokenizers
from tokenforge.presets import bert_wordpiece

pytestmark = pytest.mark.skipif(not _native.available(), reason="the native core is not built")
tokenizers = pytest.importorskip("tokenizers")
from tokenizers import normalizers as hf_normalizers  # noqa: E402

FLAGS = list(itertools.product([True, False], [True, False], [None, True, False], [True, False]))
CODE_POINTS = [c for c in range(0x110000) if not 0xD800 <= c < 0xE000]


def _native_normalizer(clean, chinese, strip, lower):
    core = _native.core("auto")
    effective = lower if strip is None else strip
    return core.WordPieceEncoder([b"a"], [0], [b"a"], [0], 0, 100, (clean, chinese, effective, lower))


@pytest.fixture(scope="module")
def all_code_points():
    consecutive = "".join(map(chr, CODE_POINTS))  # neighbours: marks of every class next to each other
    sandwiched = "".join(f"a{chr(c)}b" for c in CODE_POINTS)  # each character on its own
    return consecutive, sandwiched


@pytest.mark.parametrize("clean,chinese,strip,lower", FLAGS)
def test_every_code_point_normalizes_as_hf(all_code_points, clean, chinese, strip, lower):
    ours = _native_normalizer(clean, chinese, strip, lower)
    ref = hf_normalizers.BertNormalizer(clean_text=clean, handle_chinese_chars=chinese, strip_accents=strip,
                                        lowercase=lower)
    for text in all_code_points:
        got, want = ours.normalize(text), ref.normalize_str(text)
        assert got == want, _first_difference(got, want)


def _first_difference(got: str, want: str) -> str:
    k = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
    return f"differs at {k}: ours {got[k - 3:k + 3]!r}, HF {want[k - 3:k + 3]!r}"


# Canonical ordering: marks of different classes in every order (HF's NFD sorts each run
# of non-starters by class, then strip_accents drops the nonspacing ones), including the
# spacing marks with a class (U+1D165..U+1D172) that survive stripping, runs broken by a
# dropped control character (dropped before NFD, so the run joins) and very long runs.
MARK_RUNS = [
    "a\u0301\u0316\u0300\u0334b", "e\u0334\u0301", "\U0001d16d\U0001d165", "x\U0001d16d\u0301\U0001d165\u0300y",
    "\U0001d15f\U0001d16d\U0001d165", "a\u0301\x00\u0316b", "a\u0301\u200b\u0316", "A\u0301" * 3 + "\u0316" * 5,
    "o" + "\u0301\u0316" * 3000, "\u0345\u0301\u0399\u0345", "\u1f80\u0316", "İ\u0316\u0307", "\u0e48\u0e38",
]

ADVERSARIAL = [
    "", " ", "Hello, World!", "Héllo wörld — naïve café", "İstanbul ISTANBUL ıi", "straße STRASSE ẞ",
    "ΣΊΣΥΦΟΣ σίσυφος ὈΔΥΣΣΕΎΣ", "Ǆemal ǅ ǆ", "ﬃ ﬁne Å Ω K", "中文字符和English混合。", "東京タワー カタカナ ﾊﾝｶｸ",
    "\U00020000\U0002a6d6 \U0002b740 \U0002f800 \uf900\ufa6d", "한국어 텍스트 각", "مرحبا بالعالم", "שָׁלוֹם",
    "नमस्ते", "สวัสดีครับ", "👩\u200d👩\u200d👧 🇯🇵 👍🏽", "\x00\x01\t\n\r\x0b\x0c\x1c\x1f\x7f\x85\xa0\u3000\u2028",
    "zero\u200bwidth\u200c\u200d\ufeff\u2060joiners", "\ufffd\ufffdx\ufffd", "\ue000private\U000f0000",
    "\u0378unassigned\U000e0001tag", "a" * 100, "a" * 101, "é" * 100, "é" * 101, "İ" * 50, "İ" * 51,
    "中" * 200, "x" * 99 + " " + "y" * 101, "[CLS] inside [SEP] text [MASK]", "123456789 3.14159", '{"a":[1,2]}',
    "UPPER lower MiXeD", "don't stop", "tab\tsep\nnew\r\nline", "\u1c89\ua7cb\U00010d50\U00016ea0",
    "\U00011938\U00011935\U00011930", "\u0898\u0899\u089a\u0301",
] + MARK_RUNS

CONFIGS = [  # (lowercase, strip_accents, clean_text, handle_chinese_chars)
    (True, None, True, True), (False, None, True, True), (True, False, True, True), (False, True, True, True),
    (True, True, False, False), (False, False, False, True),
]


def _pair(shared_data, lowercase, strip, clean, chinese, name="bert-base-uncased_vocab.txt"):
    from tokenizers import BertWordPieceTokenizer

    path = shared_data / "vocab" / "wordpiece" / name
    ours = bert_wordpiece(path, lowercase=lowercase, strip_accents=strip, clean_text=clean,
                          handle_chinese_chars=chinese)
    assert ours.plan == "wordpiece" and "native BERT normalizer" in ours._plan.describe()
    ref = BertWordPieceTokenizer(str(path), clean_text=clean, handle_chinese_chars=chinese, strip_accents=strip,
                                 lowercase=lowercase)
    return ours, ref


@pytest.fixture(scope="module")
def pairs(shared_data):
    return {cfg: _pair(shared_data, *cfg) for cfg in CONFIGS}


def _hf_ids(ref, text, **kw):
    return ref.encode(text.encode("utf-16", "surrogatepass").decode("utf-16", "replace"), **kw).ids


@pytest.mark.parametrize("cfg", CONFIGS)
def test_ids_equal_hf_on_adversarial_text(pairs, cfg):
    ours, ref = pairs[cfg]
    for text in ADVERSARIAL + ["\ud800 lone \udfff", "a\ud83dz"]:
        assert ours.encode(text, allowed_special="all") == _hf_ids(ref, text), text
    assert ours.encode_batch(ADVERSARIAL, num_threads=3, allowed_special="all") == [
        _hf_ids(ref, t) for t in ADVERSARIAL]


def test_every_code_point_as_a_word_gives_hf_ids(pairs):
    for cfg in [(True, None, True, True), (False, False, False, True)]:
        ours, ref = pairs[cfg]
        for k in range(0, len(CODE_POINTS), 1 << 16):
            text = " ".join(chr(c) + "a" for c in CODE_POINTS[k:k + (1 << 16)])
            assert ours.encode(text, allowed_special="all") == _hf_ids(ref, text), (cfg, hex(CODE_POINTS[k]))


_ATOMS = [
    *"aZ éÉİıßẞΣσς ǅ ﬃ Å 中\U00020000\uf900 한 あア ا ש \u0301\u0316\u0334\u0345\U0001d165\U0001d16d \x00\x0b\x85\u200b"
     "\ufeff\ufffd\ue000 \t\n\u3000.,!¿«—#$", "\U0001f469\u200d\U0001f467", "\ud800", "a" * 99, "İ" * 49, "é" * 99,
    " " * 7, " " * 8, " " * 9, " " * 17,  # the split and the normalizer skip spaces 8 bytes at a time
]
_text = st.one_of(
    st.lists(st.sampled_from(_ATOMS), max_size=30).map("".join),
    st.text(st.characters(blacklist_categories=("Cs",)), max_size=60),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=_text, cfg=st.sampled_from(CONFIGS))
def test_hypothesis_ids_equal_hf(pairs, text, cfg):
    ours, ref = pairs[cfg]
    assert ours.encode(text, allowed_special="all") == _hf_ids(ref, text)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts=st.lists(_text, max_size=10), threads=st.integers(1, 4))
def test_batches_and_numpy_equal_hf(pairs, texts, threads):
    ours, ref = pairs[(True, None, True, True)]
    want = [_hf_ids(ref, t) for t in texts]
    # [CLS] ... [SEP] are put around each text's ids on the native threads (encode_batch_framed)
    assert ours.encode_batch(texts, num_threads=threads, allowed_special="all") == want
    ids, offsets = ours.encode_batch_to_numpy(texts, num_threads=threads, allowed_special="all")
    assert [ids[offsets[k]:offsets[k + 1]].tolist() for k in range(len(texts))] == want
    assert ours.encode_batch(texts, num_threads=threads, allowed_special="all", add_special_tokens=False) == [
        _hf_ids(ref, t, add_special_tokens=False) for t in texts]
    # without [CLS]/[SEP] and added tokens the numpy batch comes straight from the native buffers
    bare = Tokenizer(ours.model, normalizer=ours.normalizer, pre_tokenizer=ours.pre_tokenizer)
    ids, offsets = bare.encode_batch_to_numpy(texts, num_threads=threads)
    assert [ids[offsets[k]:offsets[k + 1]].tolist() for k in range(len(texts))] == [
        _hf_ids(ref, t, add_special_tokens=False) for t in texts]


def test_shipped_bert_files_get_the_native_normalizer(shared_data):
    vocab = bert_wordpiece(shared_data / "vocab" / "wordpiece" / "bert-base-uncased_vocab.txt")
    path = shared_data / "vocab" / "hf" / "bert-base-uncased_wordpiece_tokenizer.json"
    hf_json = Tokenizer.from_dict(json.loads(path.read_text(encoding="utf-8")))
    for tok in (vocab, hf_json):
        assert tok.plan == "wordpiece"
        assert tok._plan.describe() == "wordpiece (native BERT normalizer + split + WordPiece)"


def test_another_normalizer_runs_in_python_before_the_native_split(shared_data):
    base = bert_wordpiece(shared_data / "vocab" / "wordpiece" / "bert-base-uncased_vocab.txt")
    norm = normalizers.Sequence([normalizers.NFD(), normalizers.StripAccents(), normalizers.Lowercase()])
    tok = Tokenizer(base.model, normalizer=norm, pre_tokenizer=pretokenizers.BertPreTokenizer())
    assert tok.plan == "wordpiece"
    assert tok._plan.describe() == "wordpiece (Python normalizer + native split + WordPiece)"
    ref = Tokenizer.from_dict(tok.to_dict(), backend="python")
    for text in ["Héllo WÖRLD, naïve café!", "中文 \ud800 x", "İstanbul"]:
        assert tok.encode(text) == ref.encode(text)
    assert tok.encode_batch(["Héllo", "\ud800x"], num_threads=2) == [ref.encode("Héllo"), ref.encode("\ud800x")]


def test_offsets_stay_hf_offsets_with_the_native_plan(pairs):
    ours, ref = pairs[(True, None, True, True)]
    for text in ["Héllo İstanbul 中文 straße", "a\u0301\u0316\u0300b ΣΑΣ", "\x00x\u200by \ufffd z"]:
        e, r = ours.encode_full(text, allowed_special="all"), ref.encode(text)
        assert (e.ids, e.offsets) == (r.ids, r.offsets), text


def test_the_native_encoder_refuses_a_bad_normalizer_argument():
    core = _native.core("auto")
    with pytest.raises(TypeError):
        core.WordPieceEncoder([b"a"], [0], [b"a"], [0], 0, 100, (True, True))
    with pytest.raises(TypeError):
        core.WordPieceEncoder([b"a"], [0], [b"a"], [0], 0, 100, "bert")
    enc = core.WordPieceEncoder([b"a"], [0], [b"a"], [0], 0, 100)
    assert enc.normalize("ÀB\x00") == "ÀB\x00"  # no normalizer: the text as it is
    with pytest.raises(UnicodeEncodeError):
        _native_normalizer(True, True, None, True).encode("\ud800")


def test_framed_batches_leave_truncation_padding_and_pairs_to_the_tokenizer(pairs):
    ours, ref = pairs[(True, None, True, True)]
    texts = ["Hello there, world!", "中文 İstanbul", "", "a\ud800b"]
    assert ours.encode_batch(texts, num_threads=2) == [_hf_ids(ref, t) for t in texts]
    tok = ours.with_truncation(4).with_padding(length=6, pad_id=0)
    ref_tok = tokenizers.Tokenizer.from_str(ref._tokenizer.to_str())
    ref_tok.enable_truncation(4)
    ref_tok.enable_padding(pad_id=0, pad_token="[PAD]", length=6)
    safe = [t.replace("\ud800", "\ufffd") for t in texts]
    assert tok.encode_batch(texts, num_threads=2) == [e.ids for e in ref_tok.encode_batch(safe)]
    pairs_in = [("Hello there", "General Kenobi"), ("中文", "x")]
    assert ours.encode_batch(pairs_in, num_threads=2) == [e.ids for e in ref.encode_batch(pairs_in)]

"""Normalizers: alignment maps, exact agreement with HF tokenizers and sentencepiece,
serialization and bad input.

``ﬃ`` → ``ffi`` is 1 → 3 code points and NFC makes ``e`` + U+0301
into ``é`` (2 → 1); offsets must still map back to the original.
"""

from __future__ import annotations

import base64
import doctest
import json
import pickle
import unicodedata
from pathlib import Path

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

import tokenforge.normalizers as N
from tokenforge.errors import FileFormatError
from tokenforge.normalizers import (
    NFC,
    NFD,
    NFKC,
    NFKD,
    BertNormalizer,
    Charsmap,
    Identity,
    Lowercase,
    NormalizedText,
    Precompiled,
    Prepend,
    Replace,
    Sequence,
    Strip,
    StripAccents,
    normalizer_from_dict,
)
from tokenforge.sentencepiece.normalizer import SentencePieceNormalizer

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "normalizers"
SPM_MODELS = ["albert_spiece.model", "spm_test_unigram.model", "mistral_v1_tokenizer.model"]

# ---------------------------------------------------------------------------
# helpers


def _varint(b: bytes, i: int) -> tuple[int, int]:
    r = s = 0
    while True:
        c = b[i]
        i += 1
        r |= (c & 0x7F) << s
        s += 7
        if c < 0x80:
            return r, i


def _fields(b: bytes):
    """A minimal protobuf walker: (field number, value) for varint and bytes fields."""
    i = 0
    while i < len(b):
        key, i = _varint(b, i)
        wt = key & 7
        if wt == 0:
            v, i = _varint(b, i)
        elif wt == 2:
            n, i = _varint(b, i)
            v, i = b[i : i + n], i + n
        elif wt == 5:
            v, i = b[i : i + 4], i + 4
        elif wt == 1:
            v, i = b[i : i + 8], i + 8
        else:
            raise ValueError(f"wire type {wt}")
        yield key >> 3, v


def normalizer_spec(path: Path) -> dict[int, object]:
    """ModelProto field 3 (normalizer_spec): 1 name, 2 precompiled_charsmap, 3 add_dummy_prefix,
    4 remove_extra_whitespaces, 5 escape_whitespaces."""
    for f, v in _fields(path.read_bytes()):
        if f == 3:
            return dict(_fields(v))
    raise AssertionError(f"{path} has no normalizer_spec")


def spm_normalizer_from_model(path: Path) -> SentencePieceNormalizer:
    spec = normalizer_spec(path)
    return SentencePieceNormalizer(
        spec.get(2, b""),
        name=spec[1].decode(),
        add_dummy_prefix=bool(spec.get(3, 1)),
        remove_extra_whitespaces=bool(spec.get(4, 1)),
        escape_whitespaces=bool(spec.get(5, 1)),
    )


def first_diff(a: str, b: str) -> str:
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return f"at {i}: {a[max(0, i - 15) : i + 15]!r} vs {b[max(0, i - 15) : i + 15]!r}"
    return f"lengths {len(a)} vs {len(b)}"


def check_alignment(nt: NormalizedText) -> None:
    """The invariants every alignment map keeps."""
    assert len(nt.alignment) == len(nt.normalized)
    prev = (0, 0)
    for s, e in nt.alignment:
        assert 0 <= s <= e <= len(nt.original)
        assert s >= prev[0] and e >= prev[1], nt.alignment
        prev = (s, e)


ADVERSARIAL = [
    "",
    " ",
    "   ",
    "\x00",
    "a\x00b\x01c\x7f\x9fd",
    "\t\n\r\x0b\x0c\x85 x \u3000y\u00a0z\u2028\u2029\u200b\u200c\u200d\ufeff",
    "e\u0301 a\u0308\u0301 \u1e0b\u0323 q\u0307\u0323 \u0344 \u0f73\u0f75",
    "ﬃ ﬁ Ａ① ㍿ ½ ｶﾞ ﾊﾟ ᄀ\u1161\u11a8 한국어 \u1100\u1161",
    "👨\u200d👩\u200d👧\u200d👦 🏳️\u200d🌈 👍🏽 🇯🇵 ❤️",
    "עברית مرحبا بالعالم \u200f\u200e \u202ehello\u202c",
    "ภาษาไทย หนังสือ नमस्ते हिन्दी क्षत्रिय",
    "ΣΊΣΥΦΟΣ ὈΔΥΣΣΕΎΣ İstanbul ǅ ß ẞ ﬀ",
    "中文字符 日本語のテキスト、カタカナ。 𠀀𪚥 丽",
    "\ufffd\ufffd x \u2581 ▁▁ ～ ~ \uff5e",
    "a  b   c    d\n\n\ne",
    "  leading and trailing  \t",
    "Café naïve résumé Ångström Øre œuvre",
    "x" * 300 + "\u0301" * 5,
    "Ａ\u0301 Ａ\u0301\u0302 ①\u0301 ﬃ\u0301 e\u0301\u0301 ｶﾞ\u0301 K\u0301",
]

# ---------------------------------------------------------------------------
# NormalizedText and golden alignments


def test_identity_normalized_text():
    nt = NormalizedText("héllo")
    assert nt.normalized == "héllo"
    assert nt.alignment == ((0, 1), (1, 2), (2, 3), (3, 4), (4, 5))
    with pytest.raises(AttributeError):
        nt.normalized = "x"  # type: ignore[misc]
    with pytest.raises(ValueError):
        NormalizedText("ab", "ab", [(0, 1)])


def test_nfkc_ffi_ligature_maps_three_chars_to_one():
    nt = NFKC().normalize(NormalizedText("aﬃb"))
    assert nt.normalized == "affib"
    assert nt.alignment == ((0, 1), (1, 2), (1, 2), (1, 2), (2, 3))
    assert nt.original_span(1, 4) == (1, 2)
    assert nt.original_span(2, 3) == (1, 2)  # one f of three: the whole ligature
    assert nt.original_span(0, 5) == (0, 3)


def test_nfc_composes_two_chars_into_one_with_the_span_of_the_first_as_hf():
    nt = NFC().normalize(NormalizedText("xe\u0301y"))
    assert nt.normalized == "x\u00e9y"
    assert nt.alignment == ((0, 1), (1, 2), (3, 4))
    assert nt.original_span(1, 2) == (1, 2)


def test_nfd_and_hangul_decomposition():
    nt = NFD().normalize(NormalizedText("é한"))
    assert nt.normalized == "e\u0301\u1112\u1161\u11ab"
    assert nt.alignment == ((0, 1), (0, 1), (1, 2), (1, 2), (1, 2))
    back = NFC().normalize(nt)
    assert back.normalized == "é한"
    assert back.alignment == ((0, 1), (1, 2))


def test_nfc_hangul_jamo_compose_to_one_syllable():
    nt = NFC().normalize(NormalizedText("a\u1100\u1161\u11a8b"))
    assert nt.normalized == "a각b"
    assert nt.alignment == ((0, 1), (1, 2), (4, 5))


def test_bert_clean_text_deletes_control_chars():
    nt = BertNormalizer(lowercase=False).normalize(NormalizedText("a\x00b\x01\tc\x0bd"))
    assert nt.normalized == "ab cd"
    assert nt.alignment == ((0, 1), (2, 3), (4, 5), (5, 6), (7, 8))
    assert nt.original_span(1, 3) == (2, 5)


def test_bert_cjk_spacing_inserts_spaces_with_the_ideograph_span():
    nt = BertNormalizer().normalize(NormalizedText("A中b"))
    assert nt.normalized == "a 中 b"
    assert nt.alignment == ((0, 1), (1, 2), (1, 2), (1, 2), (2, 3))


def test_bert_strip_accents_follows_lowercase():
    assert BertNormalizer().normalize_str("Café") == "cafe"
    assert BertNormalizer(lowercase=False).normalize_str("Café") == "Café"
    assert BertNormalizer(lowercase=False, strip_accents=True).normalize_str("Café") == "Cafe"
    nt = BertNormalizer().normalize(NormalizedText("Café!"))
    assert nt.alignment == ((0, 1), (1, 2), (2, 3), (3, 4), (4, 5))


def test_prepend_takes_the_first_char_span():
    nt = Prepend("▁").normalize(NormalizedText("hi"))
    assert nt.normalized == "▁hi"
    assert nt.alignment == ((0, 1), (0, 1), (1, 2))
    assert Prepend("▁").normalize(NormalizedText("")).normalized == ""


def test_replace_maps_replacement_to_the_last_character_of_the_match():
    """As HF tokenizers: each replacement character takes the span of the match's last
    character; an empty match, that of the character before it ((0, 0) at the start)."""
    nt = Replace(regex.compile(r"\s+"), " ").normalize(NormalizedText("a \t b"))
    assert nt.normalized == "a b"
    assert nt.alignment == ((0, 1), (3, 4), (4, 5))
    nt = Replace("ab", "").normalize(NormalizedText("xaby"))
    assert nt.normalized == "xy" and nt.alignment == ((0, 1), (3, 4))
    nt = Replace(N.Regex(r"\b"), "|").normalize(NormalizedText("ab c"))
    assert nt.normalized == "|ab| |c|"
    assert nt.alignment == ((0, 0), (0, 1), (1, 2), (1, 2), (2, 3), (2, 3), (3, 4), (3, 4))


def test_strip_and_lowercase_alignment():
    nt = Strip().normalize(NormalizedText("  Hi \n"))
    assert nt.normalized == "Hi" and nt.alignment == ((2, 3), (3, 4))
    nt = Lowercase().normalize(NormalizedText("İA"))
    assert nt.normalized == "i\u0307a"
    assert nt.alignment == ((0, 1), (0, 1), (1, 2))


def test_sequence_composes_alignments():
    seq = Sequence([NFKC(), Lowercase(), Replace(" ", "▁"), Prepend("▁")])
    nt = seq.normalize(NormalizedText("Ａ ﬃ"))
    assert nt.normalized == "▁a▁ffi"
    assert nt.alignment == ((0, 1), (0, 1), (1, 2), (2, 3), (2, 3), (2, 3))


def test_sentencepiece_alignment_of_dummy_prefix_and_collapsed_spaces():
    nt = SentencePieceNormalizer("nmt_nfkc").normalize(NormalizedText("  a  ﬃ "))
    assert nt.normalized == "▁a▁ffi"
    assert nt.alignment == ((2, 3), (2, 3), (3, 4), (5, 6), (5, 6), (5, 6))


def test_precompiled_and_sentencepiece_differ_where_a_rule_matches_part_of_a_grapheme():
    """HF replaces a short grapheme by the *shortest* matching rule (dropping the rest);
    sentencepiece takes the *longest* rule and goes on after it."""
    hf_style, spm_style = Precompiled("nmt_nfkc"), SentencePieceNormalizer("nmt_nfkc", add_dummy_prefix=False)
    assert hf_style.normalize_str("Ａ\u0301") == "A"
    assert spm_style.normalize_str("Ａ\u0301") == "\u00c1"
    assert hf_style.normalize_str("e\u0301\u0301") == "\u00e9"
    assert spm_style.normalize_str("e\u0301\u0301") == "\u00e9\u0301"
    # a grapheme of 6 or more UTF-8 bytes goes character by character
    assert hf_style.normalize_str("Ａ\u0301\u0302") == "A\u0301\u0302"
    nt = hf_style.normalize(NormalizedText("xＡ\u0301y"))
    assert nt.normalized == "xAy" and nt.alignment == ((0, 1), (1, 2), (3, 4))  # HF: the first character's span


def test_original_span_round_trips_and_empty_slices():
    text = "Ｔhe ﬃ cafe\u0301\x00 中文"
    for norm in [NFKC(), NFC(), BertNormalizer(), SentencePieceNormalizer("nmt_nfkc"), Precompiled("nmt_nfkc")]:
        nt = norm.normalize(NormalizedText(text))
        n = len(nt.normalized)
        for i in range(n):
            s, e = nt.original_span(i, i + 1)
            assert (s, e) == nt.alignment[i]
            # the original slice normalizes to text that contains the normalized char
            # (for context-free normalizers)
            # (HF aligns a composed character, e + U+0301 -> é, with its first character)
            if not isinstance(norm, SentencePieceNormalizer):
                piece = norm.normalize_str(text[s:e])
                assert nt.normalized[i] in piece + " " or unicodedata.normalize("NFKD", nt.normalized[i]).startswith(
                    unicodedata.normalize("NFKD", piece))
        assert nt.original_span(0, n) == (nt.alignment[0][0], nt.alignment[-1][1])
        assert nt.original_span(n, n) == (nt.alignment[-1][1],) * 2
        assert nt.original_span(0, 0) == (nt.alignment[0][0],) * 2
        with pytest.raises(IndexError):
            nt.original_span(0, n + 1)
    empty = BertNormalizer().normalize(NormalizedText("\x00\x01"))
    assert empty.normalized == "" and empty.original_span(0, 0) == (0, 0)


def test_docstring_examples():
    result = doctest.testmod(N, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 10


# ---------------------------------------------------------------------------
# every normalizer: fast path == alignment path, alignment invariants (hypothesis)

ALL_NORMALIZERS = [
    Identity(),
    NFC(),
    NFD(),
    NFKC(),
    NFKD(),
    Lowercase(),
    StripAccents(),
    BertNormalizer(),
    BertNormalizer(clean_text=False, handle_chinese_chars=False, strip_accents=True, lowercase=False),
    BertNormalizer(lowercase=False),
    Replace(" ", "▁"),
    Replace(regex.compile(r"\s+|a+"), "-"),
    Replace("ab", ""),
    Replace(N.Regex(r"\b|x*"), "|"),
    N.ByteLevel(),
    N.Nmt(),
    Prepend("▁"),
    Strip(),
    Strip(left=False),
    Sequence([NFKD(), StripAccents(), Lowercase(), Prepend("▁")]),
    Precompiled("nmt_nfkc"),
    Precompiled("nmt_nfkc_cf"),
    SentencePieceNormalizer("nmt_nfkc"),
    SentencePieceNormalizer("nmt_nfkc_cf", add_dummy_prefix=False),
    SentencePieceNormalizer("identity", remove_extra_whitespaces=False),
    SentencePieceNormalizer("nmt_nfkc", escape_whitespaces=False, user_defined_symbols=["<sep>", "ﬃx"]),
]

_SPECIAL_CHARS = list(
    "aAbeé ﬃﬁＡ①\u0301\u0308\u0323\u0344\u0f73\u1100\u1161\u11a8한Σİ中𠀀\x00\x01\t\n\x0b\x85\u3000\u200b"
    "\u200d\ufeff\ufffd▁～👨🏽\u05d0\u0e20\u0e31\u0915\u094d<sep>ꀀ"
)
TEXT = st.text(
    alphabet=st.one_of(st.sampled_from(_SPECIAL_CHARS), st.characters(blacklist_categories=("Cs",))),
    max_size=40,
)


@pytest.mark.parametrize("norm", ALL_NORMALIZERS, ids=repr)
@settings(max_examples=100, deadline=None)
@given(text=TEXT)
def test_fast_path_equals_alignment_path(norm, text):
    nt = norm.normalize(NormalizedText(text))
    assert nt.original == text
    assert nt.normalized == norm.normalize_str(text)
    check_alignment(nt)


@settings(max_examples=100, deadline=None)
@given(text=TEXT)
def test_sequence_of_normalized_texts_keeps_invariants(text):
    nt = NormalizedText(text)
    for norm in [NFD(), BertNormalizer(), NFKC(), Prepend("▁"), SentencePieceNormalizer("nmt_nfkc_cf")]:
        nt = norm.normalize(nt)
        check_alignment(nt)
    assert nt.original == text


@pytest.mark.parametrize("norm", ALL_NORMALIZERS, ids=repr)
def test_adversarial_strings_fast_path_equals_alignment_path(norm):
    for text in ADVERSARIAL:
        nt = norm.normalize(NormalizedText(text))
        assert nt.normalized == norm.normalize_str(text), text
        check_alignment(nt)


# ---------------------------------------------------------------------------
# differential: HF tokenizers


@pytest.fixture(scope="module")
def corpus(shared_data: Path) -> dict[str, str]:
    """All text files of shared/data/text, each capped at its first 50 kB (to keep the suite fast),
    article 1 of the UDHR in every language (all its scripts), and the adversarial strings."""
    root = shared_data / "text"
    out = {}
    paths = sorted(root.glob("*.txt")) + [root / "corpus.en"] + sorted((root / "parallel").glob("*.txt"))
    for p in paths:
        out[p.name] = p.read_bytes()[:50_000].decode("utf-8", "ignore")
    lines = []
    for line in (root / "parallel" / "udhr_articles_aligned.tsv").read_text("utf-8").splitlines()[1:]:
        f = line.split("\t")
        if len(f) == 5 and f[3] == "1":
            lines.append(f[4])
    out["udhr_article_1"] = "\n".join(lines)
    for i, text in enumerate(ADVERSARIAL):
        out[f"adversarial_{i}"] = text
    return out


def _hf_pairs():
    H = pytest.importorskip("tokenizers.normalizers")
    return [
        ("NFC", NFC(), H.NFC()),
        ("NFD", NFD(), H.NFD()),
        ("NFKC", NFKC(), H.NFKC()),
        ("NFKD", NFKD(), H.NFKD()),
        ("Lowercase", Lowercase(), H.Lowercase()),
        ("StripAccents", StripAccents(), H.StripAccents()),
        ("Bert", BertNormalizer(), H.BertNormalizer()),
        ("Bert_cased", BertNormalizer(lowercase=False), H.BertNormalizer(lowercase=False)),
        (
            "Bert_strip_only",
            BertNormalizer(clean_text=False, handle_chinese_chars=False, strip_accents=True, lowercase=False),
            H.BertNormalizer(clean_text=False, handle_chinese_chars=False, strip_accents=True, lowercase=False),
        ),
        (
            "Bert_lower_keep_accents",
            BertNormalizer(strip_accents=False),
            H.BertNormalizer(strip_accents=False),
        ),
        ("Strip", Strip(), H.Strip()),
        ("Strip_right", Strip(left=False), H.Strip(left=False)),
        ("Replace_str", Replace(" ", "▁"), H.Replace(" ", "▁")),
        ("Replace_regex", Replace(regex.compile(r"\s+"), " "), H.Replace(_hf_regex(r"\s+"), " ")),
        ("Prepend", Prepend("▁"), H.Prepend("▁")),
        ("Replace_word", Replace(N.Regex(r"\w+|[^\w\s]+"), "_"), H.Replace(_hf_regex(r"\w+|[^\w\s]+"), "_")),
        ("Replace_empty", Replace(N.Regex(r"\b|x+"), "|"), H.Replace(_hf_regex(r"\b|x+"), "|")),
        ("ByteLevel", N.ByteLevel(), H.ByteLevel()),
        ("Nmt", N.Nmt(), H.Nmt()),
        (
            "Sequence",
            Sequence([NFKD(), StripAccents(), Lowercase(), Replace("``", '"')]),
            H.Sequence([H.NFKD(), H.StripAccents(), H.Lowercase(), H.Replace("``", '"')]),
        ),
    ]


def _hf_regex(pattern: str):
    return pytest.importorskip("tokenizers").Regex(pattern)


def _hf_ids():
    return [
        "NFC", "NFD", "NFKC", "NFKD", "Lowercase", "StripAccents", "Bert", "Bert_cased", "Bert_strip_only",
        "Bert_lower_keep_accents", "Strip", "Strip_right", "Replace_str", "Replace_regex", "Prepend", "Replace_word",
        "Replace_empty", "ByteLevel", "Nmt", "Sequence",
    ]  # fmt: skip


#: Which named Unicode-version differences (unicode_differences.json) each HF comparison skips.
_HF_SKIPS = {
    "NFD": ["NFD"],
    "NFKC": ["NFKC"],
    "NFKD": ["NFKD"],
    "Lowercase": ["Lowercase"],
    "StripAccents": ["StripAccents"],
    "Bert": ["BertNormalizer.strip_accents", "Lowercase"],
    "Bert_strip_only": ["BertNormalizer.strip_accents"],
    "Bert_lower_keep_accents": ["Lowercase"],
    "Sequence": ["NFKD", "StripAccents", "Lowercase"],
}


@pytest.mark.parametrize("index", range(len(_hf_ids())), ids=_hf_ids())
def test_matches_hf_tokenizers_on_corpus(corpus, index):
    name, ours, theirs = _hf_pairs()[index]
    skip = {cp: None for key in _HF_SKIPS.get(name, []) for cp in _named_differences(key)}
    for text_name, text in corpus.items():
        text = text.translate(skip)
        chunks = text.split("\n") if name.startswith("Strip") or name == "Prepend" else [text]
        for chunk in chunks:
            want = theirs.normalize_str(chunk)
            got = ours.normalize_str(chunk)
            assert got == want, f"{name} on {text_name}: {first_diff(got, want)}"
        assert ours.normalize(NormalizedText(text)).normalized == ours.normalize_str(text)


def _albert_precompiled_dict(shared_data: Path) -> dict:
    d = json.loads((shared_data / "vocab" / "hf" / "albert-base-v2_spiece_unigram_tokenizer.json").read_text())
    assert d["normalizer"]["type"] == "Precompiled"
    return d["normalizer"]


def _charsmaps(shared_data: Path) -> dict[str, bytes]:
    out = {"albert.json": base64.b64decode(_albert_precompiled_dict(shared_data)["precompiled_charsmap"])}
    for name in SPM_MODELS:
        out[name] = normalizer_spec(shared_data / "vocab" / "sentencepiece" / name).get(2, b"")
    out["nmt_nfkc"] = Charsmap.named("nmt_nfkc").blob
    out["nmt_nfkc_cf"] = Charsmap.named("nmt_nfkc_cf").blob
    return out


@pytest.mark.parametrize("source", ["albert.json", "spm_test_unigram.model", "nmt_nfkc_cf"])
def test_precompiled_matches_hf_on_corpus(corpus, shared_data, source):
    H = pytest.importorskip("tokenizers.normalizers")
    blob = _charsmaps(shared_data)[source]
    ours, theirs = Precompiled(blob), H.Precompiled(blob)
    for text_name, text in corpus.items():
        want = theirs.normalize_str(text)
        assert ours.normalize_str(text) == want, f"{source} on {text_name}: {first_diff(ours.normalize_str(text), want)}"
        assert ours.normalize(NormalizedText(text)).normalized == want


@settings(max_examples=300, deadline=None)
@given(text=st.text(st.characters(max_codepoint=127), max_size=60)
       | st.lists(st.sampled_from(["\r", "\n", "\r\n", "a", " ", "\x00", "\t", "~", "\x7f"]), max_size=30).map("".join))
def test_precompiled_ascii_shortcut_equals_the_grapheme_path(text):
    """ASCII text (CR LF, the one ASCII cluster of two characters, included) gives HF's result."""
    H = pytest.importorskip("tokenizers.normalizers")
    for name in ("nmt_nfkc", "nmt_nfkc_cf"):
        blob = Charsmap.named(name).blob
        ours = Precompiled(blob)
        want = H.Precompiled(blob).normalize_str(text)
        assert ours.normalize_str(text) == want
        assert ours.normalize(NormalizedText(text)).normalized == want


def test_precompiled_from_hf_json(shared_data):
    d = _albert_precompiled_dict(shared_data)
    norm = normalizer_from_dict(d)
    assert isinstance(norm, Precompiled)
    assert norm.to_dict() == d
    # the HF file's charsmap is the one carried in ALBERT's spiece.model
    assert norm.charsmap.blob == normalizer_spec(shared_data / "vocab" / "sentencepiece" / "albert_spiece.model")[2]


# ---------------------------------------------------------------------------
# differential: sentencepiece


def _spm_cases(shared_data: Path):
    spm = pytest.importorskip("sentencepiece")
    models = shared_data / "vocab" / "sentencepiece"
    cases = [(m, spm.SentencePieceNormalizer(model_file=str(models / m)), spm_normalizer_from_model(models / m)) for m in SPM_MODELS]
    for name in ("nmt_nfkc", "nmt_nfkc_cf"):
        cases.append((name, spm.SentencePieceNormalizer(rule_name=name), SentencePieceNormalizer(name)))
    for flags in [(False, False, False), (True, False, True), (False, True, False), (True, True, False)]:
        kw = {"add_dummy_prefix": flags[0], "remove_extra_whitespaces": flags[1], "escape_whitespaces": flags[2]}
        cases.append((f"nmt_nfkc{flags}", spm.SentencePieceNormalizer(rule_name="nmt_nfkc", **kw), SentencePieceNormalizer("nmt_nfkc", **kw)))
    return cases


def test_sentencepiece_normalizer_matches_sentencepiece_with_offsets(corpus, shared_data):
    for case, theirs, ours in _spm_cases(shared_data):
        for text_name, text in corpus.items():
            if "(" in case and not text_name.startswith(("udhr", "adversarial", "debian-reference-ja")):
                continue  # the flag variants: on the multi-script text only
            text = text[:20_000]
            want, offsets = theirs.Normalize(text, with_offsets=True)
            nt = ours.normalize(NormalizedText(text))
            assert ours.normalize_str(text) == want, f"{case} on {text_name}: {first_diff(ours.normalize_str(text), want)}"
            assert nt.normalized == want
            # sentencepiece gives the start (in code points) of each normalized character's source
            assert [s for s, _ in nt.alignment] == offsets[: len(want)], f"{case} on {text_name}"


def test_named_rules_are_sentencepiece_builtin_rules():
    spm = pytest.importorskip("sentencepiece")
    for name in ("nmt_nfkc", "nmt_nfkc_cf"):
        spec = dict(_fields(spm.SentencePieceNormalizer(rule_name=name).serialized_normalizer_spec()))
        assert Charsmap.named(name).blob == spec[2]


#: sentencepiece's NMT rules on top of NFKC (builder.cc, BuildNmtNFKCMap)
NMT_TO_SPACE = [0x09, 0x0A, 0x0C, 0x0D, 0x061C, 0x1680, 0x200B, 0x200C, 0x200E, 0x200F, 0x2028, 0x2029, 0x2581, 0xFEFF, 0xFFFD]
NMT_DROPPED = [*range(0x01, 0x09), 0x0B, *range(0x0E, 0x20), 0x7F, 0x8F, 0x9F]
NMT_KEPT = [0xFF5E]  # FULLWIDTH TILDE is not NFKC-normalized
#: Assigned (with an NFKC mapping) in the blob's Unicode 16.0, unassigned in Python 3.11's Unicode 14.0.
NMT_NFKC_NEWER_UNICODE = [*range(0xA7F1, 0xA7F2), *range(0x1CCD6, 0x1CCFA), *range(0x1E030, 0x1E06E)]


def test_nmt_nfkc_single_characters_are_unicodedata_nfkc_plus_nmt_rules():
    """Every code point of planes 0-1 alone: the shipped nmt_nfkc = unicodedata NFKC + NMT rules."""
    import unicodedata

    expected = {cp: " " for cp in NMT_TO_SPACE} | {cp: "" for cp in NMT_DROPPED} | {cp: chr(cp) for cp in NMT_KEPT}
    skip = set(NMT_NFKC_NEWER_UNICODE)
    cps = [cp for cp in range(1, 0x20000) if not 0xD800 <= cp < 0xE000 and cp not in skip]
    norm = SentencePieceNormalizer("nmt_nfkc", add_dummy_prefix=False, remove_extra_whitespaces=False, escape_whitespaces=False)
    # "\x01" between the characters: dropped by the rules, and it stops multi-character rules
    got = norm.normalize_str("\x01".join(chr(cp) for cp in cps))
    want = "".join(expected.get(cp, unicodedata.normalize("NFKC", chr(cp))) for cp in cps)
    assert got == want, first_diff(got, want)
    for cp in skip:
        assert unicodedata.category(chr(cp)) == "Cn" and norm.normalize_str(chr(cp)) != chr(cp)


def test_user_defined_symbols_are_not_normalized(tmp_path):
    spm = pytest.importorskip("sentencepiece")
    corpus = tmp_path / "c.txt"
    corpus.write_text("ｈｅｌｌｏ world ﬃ <ＳＥＰ> x\n" * 50, encoding="utf-8")
    spm.SentencePieceTrainer.train(
        input=str(corpus), model_prefix=str(tmp_path / "m"), vocab_size=30, hard_vocab_limit=False, user_defined_symbols=["<ＳＥＰ>", "ﬃ"],
        minloglevel=2,
    )  # fmt: skip
    # the processor (not SentencePieceNormalizer) applies the user-defined symbols;
    # its pieces joined are the normalized text
    theirs = spm.SentencePieceProcessor(model_file=str(tmp_path / "m.model"))
    ours = SentencePieceNormalizer("nmt_nfkc", user_defined_symbols=["<ＳＥＰ>", "ﬃ"])
    texts = ["ｈｅｌｌｏ <ＳＥＰ> ﬃ ﬃx", "<ＳＥＰ<ＳＥＰ>>  ﬁﬃ", *ADVERSARIAL]
    for text in texts:
        want = "".join(theirs.encode(text, out_type=str))
        nt = ours.normalize(NormalizedText(text))
        assert nt.normalized == want == ours.normalize_str(text)
    assert "<ＳＥＰ>" in ours.normalize_str(texts[0]) and "ﬃ" in ours.normalize_str(texts[0])


# ---------------------------------------------------------------------------
# every code point, against HF and sentencepiece; the Unicode-version differences are exact

UNICODE_DIFFERENCES = json.loads((FIXTURES / "unicode_differences.json").read_text())


def _named_differences(name: str) -> set[int]:
    return {cp for a, b in UNICODE_DIFFERENCES[name] for cp in range(a, b + 1)}


_SWEEP = [
    ("NFD", "NFD", "NFD"),
    ("NFKC", "NFKC", "NFKC"),
    ("NFKD", "NFKD", "NFKD"),
    ("Lowercase", "Lowercase", "Lowercase"),
    ("StripAccents", "StripAccents", "StripAccents"),
    ("BertNormalizer.clean_text", "clean", None),
    ("BertNormalizer.strip_accents", "strip", "BertNormalizer.strip_accents"),
    ("BertNormalizer.handle_chinese_chars", "cjk", None),
    ("NFC", "NFC", None),
]


def _sweep_pair(kind: str):
    H = pytest.importorskip("tokenizers.normalizers")
    bert = {"clean_text": False, "handle_chinese_chars": False, "strip_accents": False, "lowercase": False}
    if kind == "clean":
        return BertNormalizer(**{**bert, "clean_text": True}), H.BertNormalizer(**{**bert, "clean_text": True})
    if kind == "strip":
        return BertNormalizer(**{**bert, "strip_accents": True}), H.BertNormalizer(**{**bert, "strip_accents": True})
    if kind == "cjk":
        cjk = {**bert, "handle_chinese_chars": True}
        return BertNormalizer(**cjk), H.BertNormalizer(**cjk)
    return getattr(N, kind)(), getattr(H, kind)()


ALL_CODE_POINTS = [cp for cp in range(1, 0x110000) if not 0xD800 <= cp < 0xE000]


@pytest.mark.parametrize("name,kind,diff_name", _SWEEP, ids=[s[0] for s in _SWEEP])
def test_every_code_point_matches_hf_except_named_unicode_differences(name, kind, diff_name):
    """Python 3.11 has Unicode 14; tokenizers' tables are older (categories, decompositions)
    or newer (case mapping). Exactly the code points in unicode_differences.json differ."""
    ours, theirs = _sweep_pair(kind)
    skip = _named_differences(diff_name) if diff_name else set()
    chars = [chr(cp) for cp in ALL_CODE_POINTS if cp not in skip]
    for start in range(0, len(chars), 65536):
        text = "a".join(chars[start : start + 65536])
        assert ours.normalize_str(text) == theirs.normalize_str(text), name
    # each named code point really differs (the list is exact, not a broad skip)
    for cp in sorted(skip):
        x = f"a{chr(cp)}b"
        assert ours.normalize_str(x) != theirs.normalize_str(x), f"U+{cp:04X} no longer differs for {name}"


def test_every_code_point_sentencepiece_and_precompiled():
    """Planes 0-2 and 14 whole; the unassigned and private-use planes sampled (speed)."""
    spm = pytest.importorskip("sentencepiece")
    H = pytest.importorskip("tokenizers.normalizers")
    cps = [cp for cp in ALL_CODE_POINTS if cp < 0x30000 or 0xE0000 <= cp < 0xF0000 or cp % 61 == 0]
    text = "a".join(chr(cp) for cp in cps)
    for name in ("nmt_nfkc", "nmt_nfkc_cf"):
        theirs = spm.SentencePieceNormalizer(rule_name=name, remove_extra_whitespaces=False)
        ours = SentencePieceNormalizer(name, remove_extra_whitespaces=False)
        assert ours.normalize_str(text) == theirs.Normalize(text), name
        blob = Charsmap.named(name).blob
        assert Precompiled(blob).normalize_str(text) == H.Precompiled(blob).normalize_str(text), name


# ---------------------------------------------------------------------------
# serialization


def test_to_dict_round_trip_and_pickle():
    for norm in ALL_NORMALIZERS:
        d = norm.to_dict()
        assert json.loads(json.dumps(d)) == d
        again = normalizer_from_dict(d)
        assert again == norm and again.to_dict() == d
        assert pickle.loads(pickle.dumps(norm)) == norm
        text = ADVERSARIAL[7] + ADVERSARIAL[5]
        assert again.normalize_str(text) == norm.normalize_str(text)
    assert normalizer_from_dict(None) is None
    blob_spm = SentencePieceNormalizer(Charsmap.named("nmt_nfkc_cf").blob, name="x", add_dummy_prefix=False)
    assert normalizer_from_dict(blob_spm.to_dict()) == blob_spm


def test_to_dict_is_the_hf_json_shape():
    tokenizers = pytest.importorskip("tokenizers")
    H = tokenizers.normalizers
    pairs = [
        (NFC(), H.NFC()), (NFKD(), H.NFKD()), (Lowercase(), H.Lowercase()), (StripAccents(), H.StripAccents()),
        (BertNormalizer(strip_accents=False, lowercase=False), H.BertNormalizer(strip_accents=False, lowercase=False)),
        (BertNormalizer(), H.BertNormalizer()),
        (Replace("a", "b"), H.Replace("a", "b")),
        (Replace(regex.compile(r"\s+"), " "), H.Replace(tokenizers.Regex(r"\s+"), " ")),
        (Prepend("▁"), H.Prepend("▁")), (Strip(True, False), H.Strip(True, False)),
        (Sequence([NFKC(), Lowercase()]), H.Sequence([H.NFKC(), H.Lowercase()])),
        (Precompiled("nmt_nfkc"), H.Precompiled(Charsmap.named("nmt_nfkc").blob)),
        (N.ByteLevel(), H.ByteLevel()), (N.Nmt(), H.Nmt()),
        (Replace(N.Regex(r"\w+"), "_"), H.Replace(tokenizers.Regex(r"\w+"), "_")),
    ]  # fmt: skip
    for ours, theirs in pairs:
        tok = tokenizers.Tokenizer(tokenizers.models.BPE())
        tok.normalizer = theirs
        hf = json.loads(tok.to_str())["normalizer"]
        assert ours.to_dict() == hf
        assert normalizer_from_dict(hf) == ours


@pytest.mark.parametrize(
    "d,field",
    [
        ({}, "type"),
        ({"type": "NoSuchNormalizer"}, "type"),
        ({"type": 3}, "type"),
        ({"type": "Replace", "content": "x"}, "pattern"),
        ({"type": "Replace", "pattern": {"String": "a"}}, "content"),
        ({"type": "Replace", "pattern": {"Glob": "a"}, "content": ""}, "pattern"),
        ({"type": "Replace", "pattern": {"Regex": "(["}, "content": ""}, "pattern.Regex"),
        ({"type": "Replace", "pattern": {"String": ""}, "content": ""}, "pattern.String"),
        ({"type": "Prepend"}, "prepend"),
        ({"type": "Prepend", "prepend": 1}, "prepend"),
        ({"type": "Strip", "strip_left": True}, "strip_right"),
        ({"type": "Strip", "strip_left": "yes", "strip_right": True}, "strip_left"),
        ({"type": "BertNormalizer", "lowercase": "no"}, "lowercase"),
        ({"type": "BertNormalizer", "strip_accents": 1}, "strip_accents"),
        ({"type": "Sequence"}, "normalizers"),
        ({"type": "Sequence", "normalizers": [{"type": "NFC"}, {"type": "Bad"}]}, "normalizers[1]"),
        ({"type": "Sequence", "normalizers": [None]}, "normalizers[0]"),
        ({"type": "Precompiled"}, "precompiled_charsmap"),
        ({"type": "Precompiled", "precompiled_charsmap": "not base64!"}, "precompiled_charsmap"),
        ({"type": "Precompiled", "precompiled_charsmap": base64.b64encode(b"\xff\xff\x00\x00abc").decode()}, "precompiled_charsmap"),
        ({"type": "SentencePiece", "name": "custom"}, "precompiled_charsmap"),
        ({"type": "SentencePiece", "name": "nmt_nfkc", "add_dummy_prefix": "x"}, "add_dummy_prefix"),
    ],
)
def test_bad_dicts_raise_file_format_error_naming_the_field(d, field):
    with pytest.raises(FileFormatError, match=regex.escape(repr(field)) + "|" + regex.escape(field)):
        normalizer_from_dict(d)


def test_unknown_rule_set_name_is_reported():
    with pytest.raises(ValueError, match="nmt_nfkc, nmt_nfkc_cf, nfkc, nfkc_cf, identity"):
        SentencePieceNormalizer("nfkc_typo")


def test_bad_charsmap_blobs():
    with pytest.raises(FileFormatError, match="too short"):
        Charsmap(b"\x01")
    with pytest.raises(FileFormatError, match="trie size"):
        Charsmap(b"\x08\x00\x00\x00\x00")
    # a leaf pointing past the pool is reported, not an IndexError
    units = [0x60 << 10, 0x61 | (1 << 8) | (3 << 10), 0x7FFFFFF0]  # root -a-> leaf with value 0x7FFFFFF0
    blob = (len(units) * 4).to_bytes(4, "little") + b"".join(u.to_bytes(4, "little") for u in units) + b"x\x00"
    with pytest.raises(FileFormatError):
        SentencePieceNormalizer(blob).normalize_str("a")

"""The native ``Precompiled`` normalizer (HF tokenizers' grapheme-cluster rule over a
SentencePiece charsmap, ``_core/grapheme.h`` + ``_core/spm_normalizer.cpp``) equals HF's
``Precompiled.normalize_str`` on every code point, on every code point next to characters
that join clusters, and on random grapheme-heavy text; the converted ALBERT ``tokenizer.json``
it serves gives HF's ids, one text at a time and in batches, under each Metaspace scheme.

HF cuts extended grapheme clusters (UAX #29) with Unicode 16.0.0 data plus a few newer
Extend characters (``tools/gen_grapheme_tables.py``); a cluster shorter than 6 UTF-8 bytes
whose prefix has a rule is replaced whole, so a wrong boundary shows up as a vanished or
kept character.
"""

from __future__ import annotations

import base64
import json
import random

import pytest

import tokenforge
from tokenforge import _native
from tokenforge.sentencepiece.charsmap import Charsmap

pytestmark = pytest.mark.skipif(not _native.available(), reason="the native core is not built")
tokenizers = pytest.importorskip("tokenizers")
from tokenizers import normalizers as hf_normalizers  # noqa: E402

CODE_POINTS = [c for c in range(0x110000) if not 0xD800 <= c < 0xE000]

#: Characters around which clusters form: ZWJ and emoji (skin tones, keycaps, tags),
#: regional indicators, Hangul jamo and syllables, Indic consonants, viramas and marks,
#: Prepend and SpacingMark characters, combining marks, CR LF and controls, and characters
#: with charsmap rules (ligatures, full-width forms, NBSP, ideographic space).
GRAPHEME_ALPHABET = (
    list("aZ09 .,\t\n\r") + ["\r\n", "\x00", "\x7f", "\x85", "\u00ad"]
    + ["\u200d", "\u200c", "\u200b", "\ufe0f", "\ufe0e", "\u20e3", "\U0001f600", "\U0001f468", "\U0001f469",
       "\U0001f467", "\U0001f3fd", "\u2764", "\U0001f3f4", "\U000e0067", "\U000e007f", "\u00a9", "#"]
    + [chr(0x1F1E6 + k) for k in (0, 1, 9, 15, 20)]
    + ["\u1100", "\u1161", "\u11a8", "\uac00", "\uac01", "\ud7b0", "\ud7cb", "\u115f", "\u1160"]
    + ["\u0915", "\u094d", "\u0937", "\u0930", "\u093f", "\u0903", "\u093c", "\u0958", "\u09cd", "\u0995",
       "\u0d4d", "\u0d15", "\u0e33", "\u0e40", "\u0e01", "\u17d2", "\u1780"]
    + ["\u0600", "\u0605", "\u06dd", "\u070f", "\U000110bd", "\u0d4e", "\U000111c2"]
    + ["\u0301", "\u0308", "\u0327", "\u0345", "\u05b0", "\u0610", "\u1ab0", "\u1acf", "\u1ade", "\u05c8",
       "\U0001d165", "\U0001d16d", "\u302a", "\u3099", "\uff9e"]
    + ["\ufb03", "\uff21", "\uff41", "\u3000", "\u00a0", "\u2460", "\u00bd", "\u2163", "\u1e9b", "\u0149",
       "\u00e9", "e", "\u212b", "\u2126", "\uf900", "\U0002f800", "\u30ac", "\uff76", "\u00df", "\u0130"]
)


def _hf_blob() -> bytes:
    return Charsmap.named("nmt_nfkc").blob


@pytest.fixture(scope="module", params=["nmt_nfkc", "albert"])
def normalizers_pair(request, shared_data):
    """(native Precompiled without escaping, HF's Precompiled) over one charsmap."""
    if request.param == "albert":
        doc = json.loads((shared_data / "vocab" / "hf" / "albert-base-v2_spiece_unigram_tokenizer.json").read_text())
        blob = base64.b64decode(doc["normalizer"]["precompiled_charsmap"])
    else:
        blob = _hf_blob()
    core = _native.core("auto")
    native = core.SpmNormalizer(blob, False, False, False, [], hf_precompiled=True, hf_prepend=False)
    return native, hf_normalizers.Precompiled(blob)


def _first_difference(native, hf, pieces: list[str]) -> str | None:
    """The first piece whose normalization differs, described; None when all agree."""
    for k in range(0, len(pieces), 4096):
        chunk = pieces[k : k + 4096]
        joined = "".join(chunk)
        if native.normalize(joined) != hf.normalize_str(joined):
            for p in chunk:
                a, b = native.normalize(p), hf.normalize_str(p)
                if a != b:
                    return f"{p!r} ({' '.join(f'U+{ord(c):04X}' for c in p)}): native {a!r}, HF {b!r}"
            return f"the chunk at {k} differs but no piece alone does"
    return None


def test_every_code_point_equals_hf(normalizers_pair):
    native, hf = normalizers_pair
    assert _first_difference(native, hf, [chr(c) + "\n" for c in CODE_POINTS]) is None
    # every code point beside its neighbours: marks of every class next to each other
    joined = "".join(map(chr, CODE_POINTS))
    assert native.normalize(joined) == hf.normalize_str(joined)


@pytest.mark.parametrize(
    "before, after",
    [("\u00a0", ""), ("\ufb03", ""), ("\u0e33", ""), ("\u1100", ""), ("\uac00", ""), ("\u0600", ""), ("\u200d", ""),
     ("", "\u0301"), ("", "\u200d"), ("", "\u0e33"), ("", "\u1161"), ("", "a"), ("", "\ufb03"), ("", "\u11a8"),
     ("\U0001f600\u200d", ""), ("\U0001f1e6", "")],
)
def test_every_code_point_in_a_cluster_equals_hf(normalizers_pair, before, after):
    """U+00A0 and U+FB03 have rules: a following character vanishes exactly when it joins."""
    native, hf = normalizers_pair
    assert _first_difference(native, hf, [before + chr(c) + after + "\n" for c in CODE_POINTS]) is None


def test_random_grapheme_heavy_text_equals_hf(normalizers_pair):
    native, hf = normalizers_pair
    rng = random.Random(20261206)
    texts = ["".join(rng.choice(GRAPHEME_ALPHABET) for _ in range(rng.randint(1, 40))) for _ in range(20000)]
    assert _first_difference(native, hf, texts) is None


def test_prepend_and_escape_follow_metaspace():
    core = _native.core("auto")
    blob = _hf_blob()
    always = core.SpmNormalizer(blob, False, False, True, [], hf_precompiled=True, hf_prepend=True)
    never = core.SpmNormalizer(blob, False, False, True, [], hf_precompiled=True, hf_prepend=False)
    assert always.normalize("a b") == "▁a▁b"
    assert always.normalize(" a") == "▁a"
    assert always.normalize("\u3000a") == "▁a"  # the rule gives a space: no second ▁
    assert always.normalize("▁a") == "▁a"
    assert always.normalize("") == ""
    assert always.normalize("\x01") == ""  # normalized to nothing: nothing prepended
    assert never.normalize("a b") == "a▁b"
    with pytest.raises(ValueError):
        core.SpmNormalizer(blob, True, False, True, [], hf_precompiled=True)


ALBERT_TEXTS = [
    "",
    " ",
    "Hello world",
    "  leading and trailing  ",
    "▁already▁escaped ▁ ▁▁",
    "<unk> literal <unk><unk>",
    "\uff1cunk\uff1e full-width unk",
    "e\u0301\r\n\u0600a \u0915\u094d\u0937 🇯🇵🇯 a\u200d😀 👨‍👩‍👧‍👦",
    "中文文本，测试一下。日本語のテキスト、カタカナ。한국어",
    "\u3000\u3000ideographic start",
    "\x01\x02 control start",
    "ﬃ ligature ½ Ⅻ ｆｕｌｌ",
    ("The quick brown fox jumps over the lazy dog. " * 100).strip(),
]


@pytest.fixture(scope="module")
def albert_doc(shared_data):
    return json.loads((shared_data / "vocab" / "hf" / "albert-base-v2_spiece_unigram_tokenizer.json").read_text())


@pytest.mark.parametrize("scheme, split", [("always", True), ("first", True), ("never", True), ("always", False)])
def test_albert_json_ids_equal_hf(albert_doc, tmp_path, scheme, split):
    """Split: the Unigram runs per Metaspace word, through the per-thread word cache (the
    texts repeat words); without it, over the whole text as HF does then."""
    doc = json.loads(json.dumps(albert_doc))
    for key in ("pre_tokenizer", "decoder"):
        doc[key]["prepend_scheme"] = scheme
        doc[key]["split"] = split
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    hf = tokenizers.Tokenizer.from_file(str(path))
    tok = tokenforge.load(path)
    assert tok._plan._native_hf  # the native Precompiled serves this file
    rng = random.Random(f"{scheme}{split}")
    texts = ALBERT_TEXTS + [
        "".join(rng.choice(GRAPHEME_ALPHABET) for _ in range(rng.randint(1, 60))) for _ in range(3000)
    ]
    want = [hf.encode(t, add_special_tokens=False).ids for t in texts]
    assert [tok.encode(t, allowed_special="all") for t in texts] == want
    assert tok.encode_batch(texts, num_threads=2, allowed_special="all") == want
    ids, offsets = tok.encode_batch_to_numpy(texts, num_threads=2, allowed_special="all")
    assert [ids[offsets[k] : offsets[k + 1]].tolist() for k in range(len(texts))] == want
    # a pair: the second text is not "first" to Metaspace
    a, b = "pair one", "pair two \ufb03"
    assert tok.encode(a, pair=b, allowed_special="all") == hf.encode(a, b, add_special_tokens=False).ids


def test_word_caches_belong_to_their_model(albert_doc, tmp_path):
    """Two models whose pieces score differently, encoding the same words in turns on one
    thread: each gives its own HF ids (the per-thread word cache is tied to one model)."""
    other = json.loads(json.dumps(albert_doc))
    vocab = other["model"]["vocab"]
    for k in range(5, len(vocab), 3):  # reorder the preferences of a third of the pieces
        vocab[k][1] = vocab[k][1] * 0.5
    paths = []
    for name, doc in (("a", albert_doc), ("b", other)):
        (tmp_path / name).mkdir()
        path = tmp_path / name / "tokenizer.json"
        path.write_text(json.dumps(doc), encoding="utf-8")
        paths.append(path)
    pairs = [(tokenforge.load(p), tokenizers.Tokenizer.from_file(str(p))) for p in paths]
    texts = ["internationalization of tokenizers", "understanding misunderstood words", "x" * 60 + " tail"] * 3
    outs = {0: [], 1: []}
    for t in texts:
        for k, (tok, hf) in enumerate(pairs):
            outs[k].append(tok.encode(t, allowed_special="all") == hf.encode(t, add_special_tokens=False).ids)
    assert all(outs[0]) and all(outs[1])
    assert [pairs[0][0].encode(t) for t in texts[:3]] != [pairs[1][0].encode(t) for t in texts[:3]]

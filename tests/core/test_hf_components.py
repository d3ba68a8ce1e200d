"""HF tokenizers' components that tokenforge added: the FixedLength and UnicodeScripts
pre-tokenizers, the ByteLevel and Nmt normalizers, and HF's constructor argument names.

Each is compared with HF tokenizers: on tricky strings (emoji, combining marks, CJK,
right-to-left text, control characters, the empty string), on every code point, through
its serialized form, and inside a whole tokenizer that HF wrote and tokenforge loads.
"""

from __future__ import annotations

import inspect
import json
import re

import pytest

import tokenforge
from tokenforge import decoders as td
from tokenforge import normalizers as tn
from tokenforge import postprocessors as tpp
from tokenforge import pretokenizers as tp
from tokenforge.errors import FileFormatError, InvalidArgumentError

tokenizers = pytest.importorskip("tokenizers")
HP = tokenizers.pre_tokenizers
HN = tokenizers.normalizers
HD = tokenizers.decoders

CODE_POINTS = [cp for cp in range(0x110000) if not 0xD800 <= cp < 0xE000]
ALL = "".join(map(chr, CODE_POINTS))

TRICKY = [
    "", " ", "  ", "a", "  abc", "abc ", "Hello, world!  How are you?!?", "x\t\ty\r\nz\u3000w", "12345 abc123def 4.56",
    "don't stop-me now—ok…", "東京タワー、高さ333m。", "どこで生れ。Yes", "Apples are りんご 林檎", "ラーメン ー 一",
    "👩\u200d👩\u200d👧 🇯🇵 e\u0301 🥰a a🥰b 🥰", "مرحبا بالعالم 123", "עברית \u200f\u200e \u202ehello\u202c",
    "नमस्ते दुनिया", "ภาษาไทย", "\x00\x01\x1c\x1f\x7f\x85\xa0\x8f\x9f", "a\u0301b \u0301a \u0301", "Ω Ωmega ώ",
    "한국어 텍스트", "\ufeff\ufffd\u200b\u2581 ▁x", "𠀀𪚥 丽 \U0001f600\U0001fa70 \U000e0001", "a²bⅫc٣d½ ¹²³",
    "\u0589\u061c\u0953\u0954 \u0915\u0953 \u0531\u0589", "mixed Latin ελληνικά кириллица 中文 12", "\n\n", "\t",
]  # fmt: skip


def _ranges(cps) -> str:
    from tokenforge.pretokenizers import _to_ranges

    out = _to_ranges(cps)
    return ", ".join(f"U+{a:04X}" if a == b else f"U+{a:04X}..U+{b:04X}" for a, b in out[:20])


# ---------------------------------------------------------------------------
# FixedLength


@pytest.mark.parametrize("length", [1, 2, 3, 5, 7])
def test_fixed_length_matches_hf(length):
    ours, hf = tp.FixedLength(length=length), HP.FixedLength(length=length)
    for text in TRICKY + [ALL[:5000], ALL[-3000:]]:
        assert ours.pre_tokenize_str(text) == hf.pre_tokenize_str(text), (length, text)
        assert ours.split(text) == [p for p, _ in hf.pre_tokenize_str(text)]


def test_fixed_length_serialized_form_and_default():
    assert tp.FixedLength().to_dict() == json.loads(HP.FixedLength().__getstate__()) == {"type": "FixedLength", "length": 5}
    assert tp.pre_tokenizer_from_dict({"type": "FixedLength"}) == tp.FixedLength(5)
    assert tp.pre_tokenizer_from_dict(json.loads(HP.FixedLength(length=9).__getstate__())) == tp.FixedLength(9)
    with pytest.raises(InvalidArgumentError, match="at least 1"):
        tp.FixedLength(0)  # HF panics: "chunk size must be non-zero"
    with pytest.raises(FileFormatError, match="length"):
        tp.pre_tokenizer_from_dict({"type": "FixedLength", "length": -1})


# ---------------------------------------------------------------------------
# UnicodeScripts


def test_unicode_scripts_matches_hf_on_tricky_text():
    ours, hf = tp.UnicodeScripts(), HP.UnicodeScripts()
    for text in TRICKY:
        assert ours.pre_tokenize_str(text) == hf.pre_tokenize_str(text), text
        assert ours.split(text) == [p for p, _ in hf.pre_tokenize_str(text)]
    # HF's own examples
    assert ours.split("どこで生れ。Yes") == ["どこで生れ", "。", "Yes"]
    assert ours.split("Apples are りんご 林檎") == ["Apples are ", "りんご 林檎"]


#: Planes 0-3 and 14 hold every code point that HF's script table has; the other planes
#: (private use and unassigned) are checked in one piece.
SCRIPT_PLANES = "".join(c for c in ALL if ord(c) < 0x40000 or 0xE0000 <= ord(c) < 0xF0000)
OTHER_PLANES = "".join(c for c in ALL if 0x40000 <= ord(c) < 0xE0000 or ord(c) >= 0xF0000)


def _script_probe(probe: str) -> str:
    keys = tp._script_keys()
    reps: dict[str, str] = {}
    for c in SCRIPT_PLANES:
        reps.setdefault(keys[ord(c)], c)
    if probe == "pairs":  # the representatives of two scripts never share one in HF
        return "".join(f"{a}{b}0" for a in reps.values() for b in reps.values() if a != b)
    if probe == "representative":  # each code point shares the script of its representative
        return "".join(f"{reps[keys[ord(c)]]}{c}\u3002" for c in SCRIPT_PLANES)
    return "".join(probe.format(c=c) for c in SCRIPT_PLANES)


@pytest.mark.parametrize("probe", ["{c}", "a{c}0", "0{c}a", "representative", "pairs"])
def test_unicode_scripts_matches_hf_on_every_code_point(probe):
    """Each code point's script as HF's table has it: whether it has one and whether it is
    Latin or Common (after and before ``a`` and ``0``: a code point without a script stays
    with the piece before it), whether it shares the script of tokenforge's representative
    of its script, and that two representatives never share a script."""
    ours, hf = tp.UnicodeScripts(), HP.UnicodeScripts()
    text = _script_probe(probe)
    for start in range(0, len(text), 1_000_000):
        chunk = text[start : start + 1_000_000]
        got, want = ours.split(chunk), [p for p, _ in hf.pre_tokenize_str(chunk)]
        assert got == want, f"UnicodeScripts differs from HF ({probe}) around " + _ranges(
            {ord(c) for c in set(chunk) if ours.split(f"a{c}0") != [p for p, _ in hf.pre_tokenize_str(f"a{c}0")]})


def test_unicode_scripts_other_planes_have_no_script():
    ours, hf = tp.UnicodeScripts(), HP.UnicodeScripts()
    text = "a" + OTHER_PLANES + "0" + OTHER_PLANES
    assert ours.pre_tokenize_str(text) == hf.pre_tokenize_str(text) == [
        ("a" + OTHER_PLANES, (0, 1 + len(OTHER_PLANES))),
        ("0" + OTHER_PLANES, (1 + len(OTHER_PLANES), 2 + 2 * len(OTHER_PLANES))),
    ]
    assert ours.split(OTHER_PLANES) == [] == hf.pre_tokenize_str(OTHER_PLANES)


def test_unicode_scripts_serialized_form():
    assert tp.UnicodeScripts().to_dict() == json.loads(HP.UnicodeScripts().__getstate__())
    assert tp.pre_tokenizer_from_dict({"type": "UnicodeScripts"}) == tp.UnicodeScripts()


# ---------------------------------------------------------------------------
# ByteLevel and Nmt normalizers


@pytest.mark.parametrize("name", ["ByteLevel", "Nmt"])
def test_normalizer_matches_hf_on_every_code_point(name):
    ours, hf = getattr(tn, name)(), getattr(HN, name)()
    for start in range(0, len(ALL), 300_000):
        text = "a".join(ALL[start : start + 300_000])
        assert ours.normalize_str(text) == hf.normalize_str(text), name
    for text in TRICKY:
        nt = ours.normalize(tn.NormalizedText(text))
        assert nt.normalized == hf.normalize_str(text) == ours.normalize_str(text)
    assert ours.to_dict() == json.loads(hf.__getstate__()) == {"type": name}
    assert tn.normalizer_from_dict({"type": name}) == ours


def test_byte_level_normalizer_alignment():
    nt = tn.ByteLevel().normalize(tn.NormalizedText("a é🙂"))
    assert nt.normalized == "aĠÃ©ðŁĻĤ"
    assert nt.alignment == ((0, 1), (1, 2), (2, 3), (2, 3), (3, 4), (3, 4), (3, 4), (3, 4))


# ---------------------------------------------------------------------------
# whole tokenizers written by HF, read by tokenforge

CORPUS = [t for t in TRICKY if t] + [
    "The quick brown fox jumps over the lazy dog. 東京タワーは高い。",
    "Съешь же ещё этих мягких французских булок, да выпей чаю.",
    "Pack my box with five dozen liquor jugs! 1234567890 😀😀",
    "الطقس جميل اليوم ويمكننا الخروج",
]


def _pipelines():
    R = tokenizers.Regex
    return {
        "scripts+fixed": (HN.Nmt(), HP.Sequence([HP.WhitespaceSplit(), HP.UnicodeScripts(), HP.FixedLength(length=4)])),
        "bytelevel-norm": (HN.ByteLevel(), HP.Sequence([HP.UnicodeScripts(), HP.FixedLength(length=3)])),
        "split-classes": (HN.Sequence([HN.Nmt(), HN.Replace(R(r"[[:punct:]]+"), "!")]),
                          HP.Sequence([HP.Split(R(r"\w+|[^\w\s]+"), "isolated"), HP.Split(R(r"\d{1,2}+"), "merged_with_next")])),
        "whitespace-digits": (HN.Replace(R(r"\b"), "|"), HP.Sequence([HP.Whitespace(), HP.Digits(individual_digits=True)])),
    }  # fmt: skip


@pytest.mark.parametrize("name", list(_pipelines()))
def test_hf_tokenizer_json_loads_and_gives_hf_ids(name):
    normalizer, pre = _pipelines()[name]
    hf = tokenizers.Tokenizer(tokenizers.models.BPE(unk_token="[UNK]"))
    hf.normalizer, hf.pre_tokenizer = normalizer, pre
    hf.train_from_iterator(CORPUS * 3, tokenizers.trainers.BpeTrainer(vocab_size=400, special_tokens=["[UNK]"], show_progress=False))
    data = json.loads(hf.to_str())
    ours = tokenforge.Tokenizer.from_dict(data)
    assert ours.to_dict()["normalizer"] == data["normalizer"]
    assert ours.to_dict()["pre_tokenizer"] == data["pre_tokenizer"]
    for text in CORPUS + ["unseen ✓ text ☃ ǅ", "می\u200cخواهم", "x\u200dy ²³ 12345"]:
        want = hf.encode(text)
        got = ours.encode_full(text)
        assert got.ids == want.ids, (name, text)
        assert got.offsets == want.offsets, (name, text)


# ---------------------------------------------------------------------------
# HF's constructor argument names


def _hf_params(cls) -> list[str]:
    sig = cls.__text_signature__ or "(self)"
    return [m.group(1) for m in re.finditer(r"(\w+)\s*(?:=[^,]*)?(?:,|\))", sig[1:]) if m.group(1) != "self"]


def _classes(module):
    return [n for n in dir(module) if isinstance(getattr(module, n), type) and getattr(module, n).__text_signature__]


@pytest.mark.parametrize(
    "hf_module,ours_module",
    [(HP, tp), (HN, tn), (HD, td)],
    ids=["pre_tokenizers", "normalizers", "decoders"],
)
def test_every_hf_component_exists_and_takes_hf_argument_names(hf_module, ours_module):
    for name in _classes(hf_module):
        if name in ("DecodeStream",):  # a streaming helper, not a pipeline component
            continue
        ours = getattr(ours_module, name, None)
        assert ours is not None, f"tokenforge has no {hf_module.__name__}.{name}"
        params = inspect.signature(ours).parameters
        for p in _hf_params(getattr(hf_module, name)):
            assert p in params, f"{name}: HF's argument {p!r} is not accepted (tokenforge: {list(params)})"


def test_hf_keyword_arguments_build_the_same_component():
    R = tokenizers.Regex
    blob = tn.Charsmap.named("nmt_nfkc").blob
    cases = [
        (tp.Split(pattern=tp.Regex(r"\s+"), behavior="merged_with_next", invert=True),
         HP.Split(pattern=R(r"\s+"), behavior="merged_with_next", invert=True)),
        (tp.Split(tp.Regex("a"), "removed", True), HP.Split(R("a"), "removed", True)),
        (tp.Split("ab", "isolated", regex_pattern=False), HP.Split("ab", "isolated")),
        (tp.Punctuation(behavior="contiguous"), HP.Punctuation(behavior="contiguous")),
        (tp.Digits(individual_digits=True), HP.Digits(individual_digits=True)),
        (tp.CharDelimiterSplit(delimiter="-"), HP.CharDelimiterSplit(delimiter="-")),
        (tp.Metaspace(replacement="_", prepend_scheme="first", split=False), HP.Metaspace(replacement="_", prepend_scheme="first", split=False)),
        (tp.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False), HP.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False)),
        (tp.FixedLength(length=3), HP.FixedLength(length=3)),
        (tp.Sequence(pretokenizers=[tp.Whitespace()]), HP.Sequence([HP.Whitespace()])),  # HF: positional only
        (tn.BertNormalizer(clean_text=False, handle_chinese_chars=False, strip_accents=True, lowercase=False),
         HN.BertNormalizer(clean_text=False, handle_chinese_chars=False, strip_accents=True, lowercase=False)),
        (tn.Replace(pattern=tn.Regex(r"\d"), content="#"), HN.Replace(pattern=R(r"\d"), content="#")),
        (tn.Replace(pattern="a", content="b"), HN.Replace(pattern="a", content="b")),
        (tn.Strip(left=False, right=True), HN.Strip(left=False, right=True)),
        (tn.Prepend(prepend="▁"), HN.Prepend(prepend="▁")),
        (tn.Precompiled(precompiled_charsmap=blob), HN.Precompiled(precompiled_charsmap=blob)),
        (tn.Sequence(normalizers=[tn.NFC()]), HN.Sequence(normalizers=[HN.NFC()])),
        (td.Strip(content="▁", left=1, right=2), HD.Strip(content="▁", left=1, right=2)),
        (td.Replace(pattern=tp.Regex("▁+"), content=" "), HD.Replace(pattern=R("▁+"), content=" ")),
        (td.Replace(pattern="▁", content=" "), HD.Replace(pattern="▁", content=" ")),
        (td.WordPiece(prefix="##", cleanup=True), HD.WordPiece(prefix="##", cleanup=True)),
        (td.BPEDecoder(suffix="</w>"), HD.BPEDecoder(suffix="</w>")),
        (td.CTC(pad_token="<pad>", word_delimiter_token="|", cleanup=False), HD.CTC(pad_token="<pad>", word_delimiter_token="|", cleanup=False)),
        (td.Metaspace(replacement="▁", prepend_scheme="never", split=True), HD.Metaspace(replacement="▁", prepend_scheme="never", split=True)),
        (td.Sequence(decoders=[td.Fuse()]), HD.Sequence([HD.Fuse()])),  # HF: positional only
    ]  # fmt: skip
    for ours, theirs in cases:
        assert ours.to_dict() == json.loads(theirs.__getstate__()), type(ours).__name__


def test_strip_decoder_left_right_and_the_old_names():
    # (HF panics when left and right overlap, as on "▁" with left=1, right=1: not compared)
    tokens = ["▁▁a▁", "▁b▁▁", "c", "▁▁▁x▁▁▁"]
    for left, right in [(0, 0), (1, 0), (0, 1), (2, 2), (3, 3)]:
        want = HD.Strip(content="▁", left=left, right=right).decode(tokens)
        assert td.Strip(content="▁", left=left, right=right).decode(tokens) == want
        assert td.Strip("▁", left, right).decode(tokens) == want
        assert td.Strip("▁", start=left, stop=right).decode(tokens) == want
    s = td.Strip("▁", 1, 2)
    assert (s.left, s.right, s.start, s.stop) == (1, 2, 1, 2)
    assert td.decoder_from_dict(s.to_dict()) == s
    assert td.Strip("▁", 1, 1).decode(["▁"]) == ""
    with pytest.raises(InvalidArgumentError):
        td.Strip(content="ab")


def test_replace_decoder_and_normalizer_take_hf_regex_semantics():
    tokens = ["a\u200cb", "x²y", "", "▁▁z"]
    for pattern in [r"\w+", r"\b", r"▁+", r"[[:punct:]]", r"x*"]:
        want = HD.Replace(tokenizers.Regex(pattern), "|").decode(tokens)
        assert td.Replace(tp.Regex(pattern), "|").decode(tokens) == want, pattern
        assert td.Replace(pattern, "|", regex_pattern=True).decode(tokens) == want, pattern
        d = td.Replace(tp.Regex(pattern), "|").to_dict()
        assert td.decoder_from_dict(d).decode(tokens) == want
        assert tn.Replace(tn.Regex(pattern), "|").normalize_str("".join(tokens)) == HN.Replace(
            tokenizers.Regex(pattern), "|"
        ).normalize_str("".join(tokens))


def test_new_components_write_back_as_hf_json(tmp_path):
    tokenizers = pytest.importorskip("tokenizers")
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

    hf = Tokenizer(models.WordLevel({"[UNK]": 0, "a": 1, "ab": 2, "日本": 3}, unk_token="[UNK]"))
    hf.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.UnicodeScripts(), pre_tokenizers.FixedLength(length=2)])
    hf.normalizer = normalizers.Sequence([normalizers.Nmt(), normalizers.Lowercase(), normalizers.ByteLevel()])
    hf.save(str(tmp_path / "tokenizer.json"))
    tok = tokenforge.load(tmp_path / "tokenizer.json")
    tok.save(str(tmp_path / "again.json"), format="hf")
    again = tokenizers.Tokenizer.from_file(str(tmp_path / "again.json"))
    for text in ["abAB日本語 x", "aaab", ""]:
        assert tok.encode(text) == hf.encode(text).ids == again.encode(text).ids


def test_template_processing_reads_templates_and_special_tokens_as_hf():
    """``$<n>`` is sequence A with type id n, ``$a``/``$b`` the sequences, the default pair
    template is ``$A:0 $B:1``, and a special token may be ``(id, token)`` or a named group
    of ids; the serialized form is HF's, and the ids are HF's."""
    HPP = tokenizers.processors
    cases = [
        (dict(single="[CLS] $1 [SEP]"), [("[CLS]", 1), ("[SEP]", 2)]),
        (dict(single="$a [SEP]:3", pair="$a $b:1 [SEP]:2"), [(2, "[SEP]")]),
        (dict(single="$ [SEP]", pair="[SEP] $B:5 $0:2"), [("[SEP]", 2)]),
        (dict(single=["Q", "$A"], pair=["Q", "$A", "C", "$B"]),
         [{"id": "Q", "ids": [7, 8], "tokens": ["q", ":"]}, {"id": "C", "ids": [9], "tokens": ["c"]}]),
        (dict(single="<s> $A </s>"), [("<s>", 0), ("</s>", 1)]),
    ]  # fmt: skip
    for kwargs, specials in cases:
        ours = tpp.TemplateProcessing(**kwargs, special_tokens=specials)
        theirs = HPP.TemplateProcessing(**kwargs, special_tokens=specials)
        assert ours.to_dict() == json.loads(theirs.__getstate__()), kwargs
        hf = tokenizers.Tokenizer(tokenizers.models.WordLevel({"x": 20, "y": 21, "[UNK]": 22}, unk_token="[UNK]"))
        hf.pre_tokenizer = HP.WhitespaceSplit()
        hf.post_processor = theirs
        tok = tokenforge.Tokenizer.from_dict(json.loads(hf.to_str()))
        for a, b in [("x y", None), ("x", "y x")]:
            want = hf.encode(a, b)
            got = tok.encode_full(a, b)
            assert (got.ids, got.type_ids) == (want.ids, want.type_ids), (kwargs, a, b)
    for bad in ["$A:x", "$A:1:2", "$c", "$-1"]:
        with pytest.raises(FileFormatError, match="Cannot build Piece"):
            tpp.TemplateProcessing(single=bad)

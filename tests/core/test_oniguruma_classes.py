"""HF's regexes (Oniguruma) and character tests against tokenforge's, on every code point.

HF tokenizers compiles the regex of ``Split`` and ``Replace`` with Oniguruma (Unicode
16.0, Ruby syntax); tokenforge rewrites such a pattern for ``regex`` (Unicode 17.0,
Python syntax) with :func:`tokenforge.pretokenizers.oniguruma_to_regex`. Each class
below is checked on all 1,112,064 code points (U+0000..U+10FFFF without surrogates):
HF's ``Replace(Regex(cls), "")`` removes exactly the code points that tokenforge's
removes. The built-in pre-tokenizers that classify characters are checked on every
code point too, each character between two ``x``.
"""

from __future__ import annotations

import pytest
import regex

from tokenforge import normalizers as tn
from tokenforge import pretokenizers as pt
from tokenforge.pretokenizers import compile_oniguruma, oniguruma_matches, oniguruma_to_regex

tokenizers = pytest.importorskip("tokenizers")
H = tokenizers.normalizers
P = tokenizers.pre_tokenizers

CODE_POINTS = [cp for cp in range(0x110000) if not 0xD800 <= cp < 0xE000]
ALL = "".join(map(chr, CODE_POINTS))


def _ranges(cps: set[int]) -> str:
    from tokenforge.pretokenizers import _to_ranges

    out = _to_ranges(cps)
    return ", ".join(f"U+{a:04X}" if a == b else f"U+{a:04X}..U+{b:04X}" for a, b in out[:20]) + (
        " ..." if len(out) > 20 else ""
    )


def _removed(out: str) -> set[int]:
    return set(CODE_POINTS) - set(map(ord, out))


CLASSES = [
    r"\w", r"\W", r"\s", r"\S", r"\d", r"\D", r"\h", r"\H", ".", r"\N", r"\O",
    r"\p{L}", r"\p{Lu}", r"\p{Ll}", r"\p{Lt}", r"\p{Lm}", r"\p{Lo}", r"\p{M}", r"\p{Mn}", r"\p{Mc}", r"\p{Me}",
    r"\p{N}", r"\p{Nd}", r"\p{Nl}", r"\p{No}", r"\p{P}", r"\p{Pc}", r"\p{Pd}", r"\p{Ps}", r"\p{Pe}", r"\p{Pi}",
    r"\p{Pf}", r"\p{Po}", r"\p{S}", r"\p{Sm}", r"\p{Sc}", r"\p{Sk}", r"\p{So}", r"\p{Z}", r"\p{Zs}", r"\p{C}",
    r"\p{Cc}", r"\p{Cf}", r"\p{Co}", r"\p{Cn}", r"\P{L}", r"\p{^L}", r"\P{^N}", r"\P{Ll}", r"\p{Letter}",
    r"\p{Han}", r"\p{Hiragana}", r"\p{Katakana}", r"\p{Latin}", r"\p{Greek}", r"\p{Cyrillic}", r"\p{Arabic}",
    r"\p{Hebrew}", r"\p{Hangul}", r"\p{Thai}", r"\p{Devanagari}", r"\p{Common}", r"\p{Inherited}",
    r"\p{Alpha}", r"\p{Word}", r"\p{Alnum}", r"\p{Punct}", r"\p{Space}", r"\p{Digit}", r"\p{XDigit}",
    r"\p{Upper}", r"\p{Lower}", r"\p{Cased}", r"\p{LC}", r"\p{Cntrl}", r"\p{Graph}", r"\p{Print}", r"\p{Blank}",
    r"\p{ASCII}", r"\p{Any}", r"\p{Assigned}", r"\p{Emoji}", r"\p{Emoji_Presentation}",
    r"\p{Extended_Pictographic}", r"\p{Diacritic}", r"\p{PosixPunct}", r"\p{Ideographic}",
    r"[[:alpha:]]", r"[[:digit:]]", r"[[:alnum:]]", r"[[:punct:]]", r"[[:space:]]", r"[[:upper:]]",
    r"[[:lower:]]", r"[[:word:]]", r"[[:cntrl:]]", r"[[:graph:]]", r"[[:print:]]", r"[[:xdigit:]]",
    r"[[:blank:]]", r"[[:ascii:]]", r"[[:^alpha:]]", r"[[:^punct:]]", r"[^[:punct:]]", r"[[:^alnum:]]",
    r"[\w]", r"[\W]", r"[^\w]", r"[\p{Word}]", r"[^\p{Word}]", r"[\h]", r"[\H]", r"[\d]", r"[\D]",
    r"[^\w\s]", r"[\w\s]", r"[^\p{L}\p{N}]", r"[\W\d]", r"[^\W\d]", r"[\p{L}\p{M}\p{N}]", r"[^\s\p{L}\p{N}]",
    r"[^\r\n\p{L}\p{N}]", r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]", r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]", r"[a-z&&[^aeiou]]",
    r"[\w&&[^\d]]", r"[^\w&&\p{L}]", r"[\p{L}&&\p{Lu}]", r"[a[xy]]", r"[^a[xy]]", r"[\x{4E00}-\x{9FFF}]",
    r"\w\b", r"\b\w", r"\B\w", r"\w\B",
]  # fmt: skip


@pytest.mark.parametrize("pattern", CLASSES)
def test_class_matches_hf_on_every_code_point(pattern):
    ours, theirs = _class_sets(pattern)
    assert ours == theirs, (
        f"{pattern!r}: HF only {_ranges(theirs - ours)}; tokenforge only {_ranges(ours - theirs)}"
    )


def _class_sets(pattern: str) -> tuple[set[int], set[int]]:
    """The code points tokenforge's and HF's engines remove with ``pattern``."""
    theirs = _removed(H.Replace(tokenizers.Regex(pattern), "").normalize_str(ALL))
    return _removed(compile_oniguruma(pattern).sub("", ALL)), theirs


FOLDED = [
    r"(?i)\w", r"(?i)\W", r"(?i)[^\W]", r"(?i)[^\w\s]", r"(?i)[\W\d]", r"(?i)\p{L}", r"(?i)\p{Lu}", r"(?i)\P{L}",
    r"(?i)[\p{L}\p{N}]", r"(?i)[^\p{L}\p{N}]", r"(?i)\b\w", r"(?i:\w)", r"(?i)[\w&&\d]", r"(?i)[[:punct:]]",
    r"(?i)[^[:punct:]]", r"(?i)\h", r"(?i)k", r"(?i)s", r"(?i)st", r"(?i)ff", r"(?i)[k-m]", r"(?i)\x{212A}", r"(?i)ǅ",
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)",
]  # fmt: skip


@pytest.mark.parametrize("pattern", FOLDED)
def test_case_insensitive_class_matches_hf_on_every_code_point(pattern):
    ours, theirs = _class_sets(pattern)
    assert ours == theirs, (
        f"{pattern!r}: HF only {_ranges(theirs - ours)}; tokenforge only {_ranges(ours - theirs)}"
    )


#: Case-insensitive matches where regex and Oniguruma still differ (documented in
#: tokenforge.pretokenizers): pattern -> (code points only HF matches, only tokenforge matches).
FOLD_RESIDUE = {
    r"(?i)i": (set(), {0x0130}),
    r"(?i)[a-z]": (set(), {0x0130}),
    r"(?i)ss": (set(), {0x1DF95}),
    r"(?i:ss)": ({0x00DF, 0x1E9E}, set()),
}


@pytest.mark.parametrize("pattern", list(FOLD_RESIDUE))
def test_case_insensitive_residue_is_exactly_the_documented_one(pattern):
    theirs = _removed(H.Replace(tokenizers.Regex(pattern), "").normalize_str(ALL))
    ours = _removed(compile_oniguruma(pattern).sub("", ALL))
    assert (theirs - ours, ours - theirs) == FOLD_RESIDUE[pattern]


def test_the_join_controls_are_not_word_characters():
    """The example of ``Split(Regex(r"\\w+|[^\\w\\s]+"))``: HF cuts Persian at U+200C."""
    text = "می\u200cخواهم"
    hf = P.Split(tokenizers.Regex(r"\w+|[^\w\s]+"), "isolated").pre_tokenize_str(text)
    assert [p for p, _ in hf] == ["می", "\u200c", "خواهم"]
    assert pt.Split(pt.Regex(r"\w+|[^\w\s]+"), "isolated").pre_tokenize_str(text) == hf
    assert pt.Split(r"\w+|[^\w\s]+", "isolated").pre_tokenize_str(text) == hf
    assert regex.findall(r"\w+", text) == [text]  # what the regex module alone does


def test_the_unicode_17_table_is_what_hf_leaves_unassigned():
    from tokenforge._unicode_tables import UNICODE_17_ADDITIONS

    hf_unassigned = _removed(H.Replace(tokenizers.Regex(r"\p{Cn}"), "").normalize_str(ALL))
    rx_assigned = {ord(c) for c in regex.findall(r"\P{Cn}", ALL)}
    table = {c for a, b in UNICODE_17_ADDITIONS for c in range(a, b + 1)}
    assert table == hf_unassigned & rx_assigned, _ranges(table ^ (hf_unassigned & rx_assigned))
    assert regex.match(r"\p{Cn}", "\u0378") and "\u0378" in H.Replace(tokenizers.Regex(r"\p{Cn}"), "x").normalize_str(
        "\u0378"
    ) + "\u0378"


# ---------------------------------------------------------------------------
# syntax: anchors, options, intervals, escapes, nested classes, empty matches

SYNTAX = [
    (r"\s+$", "a  \nb  \n"), (r"^\w", "ab\ncd\n"), (r"$", "ab\ncd"), (r"\w+$", "ab\ncd\n"), (r"\Z", "ab\n"),
    (r"x\Z", "x\nx\n"), (r"x\z", "x\nx\n"), (r"x$", "x\nx\n"), (r"^", "a\nb"), (r"^$", "a\n\nb"), (r"\A\s", " a "),
    (r"(?m)a.b", "xa\nbx"), (r"a.b", "xa\nbx"), (r"(?-m:.)", "\n"), (r"(?i)k", "K\u212ak"), (r"(?i)ss", "ß ss SS ẞ"),
    (r"(?i)\w+", "ǅ"), (r"(?i)\p{Lu}+", "abCD"), (r"a(?i)b|c", "aB C c"), (r"(a(?i)b|c)", "aB C c"),
    (r"(?i:a)b", "Ab AB"), (r"(?x) a # c\n b", "ab"), (r"(?x) a b ", "ab"),
    (r"\d{1,3}+", "12345678"), (r"\d{2}+", "12345"), (r"\d{,2}", "1234"), (r"\d{2,}+", "12345"),
    (r"(ab){1,2}+", "abababab"), (r"[ab]{2}+c", "ababac"), (r"\p{N}{1,3}+", "1234567"), (r"a{2}?", "aaa"),
    (r"a{1,2}?b", "aaab"), (r"a{2,}?", "aaaaab"), (r"a{,2}?", "aaab"), (r"a{2}?b", "aaaaab"), (r"a{2}??", "aaab"),
    (r"a{2}*", "aaaaab"), (r"a{1,2}*", "aaaaab"),
    (r"\bx", "a\u200cx ²x x"), (r"\Bx", "a\u200cx ²x x"), (r"(?<!\w)x", "\u200cx"), (r"\w+", "a\u200cb ½x"),
    (r"\x{41}", "A"), (r"\u0041", "A"), (r"[\x{41}-\x{43}]+", "ABCD"), (r"\x41", "A"), (r"\ca", "\x01"),
    (r"\e", "\x1b"), (r"\a", "\x07"), (r"\01", "\x01"), (r"[\b]", "a\x08b"), (r"\O", "a\nb"), (r"\N", "a\nb"),
    (r"\h+", "ab12 \tgz"), (r"\H+", "ab12 \tgz"), (r"\R", "a\r\nb"), (r"\X", "e\u0301x"), (r"\K", "ab"),
    (r"a\Kb", "ab"), (r"[a-c&&b-d]", "abcd"), (r"[a[xy]]", "axyz["), (r"[\w&&[^\d]]+", "ab12cd"),
    (r"[[:alpha:][:digit:]]+", "a1٣ ?"), (r"\p{^L}+", "ab12"), (r"[\p{L}&&\p{Lu}]+", "abCD"), (r"[\]]", "]"),
    (r"[]a]", "]a"), (r"[^]a]", "]ab"), (r"[-a]", "-a"), (r"[a-]", "-a"), (r"[\-]", "-"), (r"[a\-z]", "-az"),
    (r"\\w", "\\w"), (r"[\\]", "\\"), (r"\.", ".a"), (r"(?<name>a)\k<name>", "aab"), (r"(a)\k<1>", "aab"),
    (r"x*", "axxb"), (r"", "ab"), (r"\s*", "a b"), (r"a|\b", "ab cd a"), (r"x*|b", "axxbb"), (r"(?=b)", "abab"),
    (r"a|(?=c)", "abcabxc"), (r"ab|(?=c)", "abc"), (r"aa|(?=x)", "aabx"), (r"a|$", "aab\naa"),
    (r"[\p{L}\p{M}]+", "e\u0301x"), (r"(?#note)a", "ba"), (r"(?<a>[xy])\g<a>", "xyxx"), (r"([xy])\g<1>", "xyxx"),
    (r"(a|b\g<0>c)", "bbacc"),
]  # fmt: skip
BEHAVIORS = ("removed", "isolated", "merged_with_previous", "merged_with_next", "contiguous")


@pytest.mark.parametrize("pattern,text", SYNTAX, ids=[repr(p) for p, _ in SYNTAX])
def test_split_pattern_matches_hf(pattern, text):
    for behavior in BEHAVIORS:
        for invert in (False, True):
            hf = P.Split(tokenizers.Regex(pattern), behavior, invert=invert)
            ours = pt.Split(pt.Regex(pattern), behavior, invert)
            for t in (text, text * 3, " " + text + "\n"):
                assert ours.pre_tokenize_str(t) == hf.pre_tokenize_str(t), (pattern, behavior, invert, t)
                assert ours.split(t) == [p for p, _ in hf.pre_tokenize_str(t)]
    theirs = H.Replace(tokenizers.Regex(pattern), "<>")
    ours_n = tn.Replace(tn.Regex(pattern), "<>")
    for t in (text, text * 3, ""):
        assert ours_n.normalize_str(t) == theirs.normalize_str(t), (pattern, t)
        assert ours_n.normalize(tn.NormalizedText(t)).normalized == theirs.normalize_str(t)
    dec_theirs = tokenizers.decoders.Replace(tokenizers.Regex(pattern), "<>")
    from tokenforge import decoders as td

    dec_ours = td.Replace(pt.Regex(pattern), "<>")
    tokens = [text, "", text[:1], text * 2]
    assert dec_ours.decode(tokens) == dec_theirs.decode(tokens), pattern


def test_the_iteration_skips_empty_matches_as_oniguruma_does():
    assert oniguruma_matches(regex.compile("x*"), "axxb") == [(0, 0), (1, 3), (4, 4)]
    assert oniguruma_matches(regex.compile(r"a|\b"), "ab cd") == [(0, 1), (2, 2), (3, 3), (5, 5)]
    assert oniguruma_matches(regex.compile("x*|b"), "axxbb") == [(0, 0), (1, 3), (4, 4), (5, 5)]
    assert oniguruma_matches(regex.compile("ab|(?=c)"), "abc") == [(0, 2)]
    assert oniguruma_matches(regex.compile("a|(?=c)"), "abc") == [(0, 1), (2, 2)]
    assert oniguruma_matches(regex.compile("a"), "") == []


def test_translation_examples():
    assert oniguruma_to_regex(r"\d{1,3}+").startswith("(?:") and oniguruma_to_regex(r"\d{1,3}+").endswith("{1,3})+")
    assert oniguruma_to_regex(r"(?i)ss") == "(?fi)ss"
    assert oniguruma_to_regex(r"a(?i)b|c") == "a(?i:b|c)"
    assert oniguruma_to_regex(r"(?m)a.b") == "(?s)a.b"
    assert oniguruma_to_regex(r"[a-z&&[^aeiou]]") == "(?:(?=[a-z])[^aeiou])"
    assert oniguruma_to_regex(r"x\Z") == r"x(?=\n?\Z)"
    assert oniguruma_to_regex(r"\s+") == r"[\s]+"


@pytest.mark.parametrize("pattern", [r"(ab", r"ab)", r"[ab", r"\p{NoSuchProperty}", "a\\", r"\x{zz}", r"[z-a]"])
def test_bad_patterns_are_file_format_errors(pattern):
    from tokenforge.errors import FileFormatError

    with pytest.raises(FileFormatError):
        pt.Split(pt.Regex(pattern), "isolated")
    with pytest.raises(FileFormatError, match="pattern.Regex"):
        tn.normalizer_from_dict({"type": "Replace", "pattern": {"Regex": pattern}, "content": ""})


# ---------------------------------------------------------------------------
# the published split patterns, on every code point in context

PUBLISHED = {
    "gpt2": r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""",
    "cl100k/llama3": r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+""",
    "o200k": "|".join([
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""", r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""", r"""\s*[\r\n]+""", r"""\s+(?!\S)""", r"""\s+""",
    ]),
    "qwen": r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+""",
    "whitespace": r"\w+|[^\w\s]+",
}  # fmt: skip


@pytest.mark.parametrize("name", list(PUBLISHED))
def test_published_patterns_match_hf_on_every_code_point(name):
    pattern = PUBLISHED[name]
    hf = P.Split(tokenizers.Regex(pattern), "isolated")
    ours = pt.Split(pt.Regex(pattern), "isolated")
    # each code point after an apostrophe, a letter, a space and a digit: planes 0 and 1
    # whole, the others sampled (speed; the classes themselves are checked on every code
    # point above)
    cps = [chr(c) for c in CODE_POINTS if c < 0x20000 or c % 13 == 0]
    for start in range(0, len(cps), 100_000):
        text = "".join(f"'{c}a{c} {c}1" for c in cps[start : start + 100_000])
        assert ours.split(text) == [p for p, _ in hf.pre_tokenize_str(text)], name


# ---------------------------------------------------------------------------
# built-in pre-tokenizers that classify characters, on every code point

BUILTIN = [
    ("Whitespace", pt.Whitespace(), lambda: P.Whitespace()),
    ("WhitespaceSplit", pt.WhitespaceSplit(), lambda: P.WhitespaceSplit()),
    ("Punctuation", pt.Punctuation(), lambda: P.Punctuation()),
    ("BertPreTokenizer", pt.BertPreTokenizer(), lambda: P.BertPreTokenizer()),
    ("Digits", pt.Digits(), lambda: P.Digits()),
    ("Digits-individual", pt.Digits(individual_digits=True), lambda: P.Digits(individual_digits=True)),
    ("Metaspace", pt.Metaspace(), lambda: P.Metaspace()),
    ("Metaspace-nosplit", pt.Metaspace(split=False), lambda: P.Metaspace(split=False)),
]


PARTS = 5


@pytest.mark.parametrize("part", range(PARTS))
@pytest.mark.parametrize("name,ours,ref", BUILTIN, ids=[b[0] for b in BUILTIN])
def test_builtin_pre_tokenizer_matches_hf_on_every_code_point(name, ours, ref, part):
    hf = ref()
    size = -(-len(CODE_POINTS) // PARTS)
    for start in range(part * size, min((part + 1) * size, len(CODE_POINTS)), 200_000):
        end = min(start + 200_000, (part + 1) * size)
        text = "\x01".join(f"x{c}x" for c in ALL[start:end])
        got, want = ours.pre_tokenize_str(text), hf.pre_tokenize_str(text)
        if got != want:
            chunk = ALL[start:end]
            bad = {ord(c) for c in chunk if ours.pre_tokenize_str(f"x{c}x") != hf.pre_tokenize_str(f"x{c}x")}
            pytest.fail(f"{name} differs from HF at {_ranges(bad)}")
        if part == 0 and start == 0:
            assert ours.split(text) == [p for p, _ in want]


def test_is_punctuation_is_hf_bert_punctuation():
    assert pt.is_punctuation("!") and pt.is_punctuation("\u166d") and pt.is_punctuation("\U000111c9")
    assert not pt.is_punctuation("\u2e43")  # Po since Unicode 9.0; not in HF's tables
    assert regex.match(r"\p{P}", "\u2e43") and not regex.match(r"\p{P}", "\u166d")

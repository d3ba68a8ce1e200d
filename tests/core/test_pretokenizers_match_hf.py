"""The pipeline pre-tokenizers cut text exactly where HF tokenizers' do, with the same offsets."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokenforge import pretokenizers as pt

hf_pre = pytest.importorskip("tokenizers.pre_tokenizers")

CASES = [
    ("Whitespace", pt.Whitespace(), lambda: hf_pre.Whitespace()),
    ("WhitespaceSplit", pt.WhitespaceSplit(), lambda: hf_pre.WhitespaceSplit()),
    ("Bert", pt.BertPreTokenizer(), lambda: hf_pre.BertPreTokenizer()),
    ("Punctuation", pt.Punctuation(), lambda: hf_pre.Punctuation()),
    ("Punctuation-next", pt.Punctuation("merged_with_next"), lambda: hf_pre.Punctuation("merged_with_next")),
    ("Digits", pt.Digits(), lambda: hf_pre.Digits()),
    ("Digits-individual", pt.Digits(True), lambda: hf_pre.Digits(individual_digits=True)),
    ("Metaspace", pt.Metaspace(), lambda: hf_pre.Metaspace()),
    ("Metaspace-first", pt.Metaspace(prepend_scheme="first"), lambda: hf_pre.Metaspace(prepend_scheme="first")),
    ("Metaspace-never-nosplit", pt.Metaspace(prepend_scheme="never", split=False),
     lambda: hf_pre.Metaspace(prepend_scheme="never", split=False)),
    ("ByteLevel", pt.ByteLevel(), lambda: hf_pre.ByteLevel()),
    ("ByteLevel-noprefix", pt.ByteLevel(add_prefix_space=False), lambda: hf_pre.ByteLevel(add_prefix_space=False)),
    ("ByteLevel-noregex", pt.ByteLevel(add_prefix_space=False, use_regex=False),
     lambda: hf_pre.ByteLevel(add_prefix_space=False, use_regex=False)),
    ("CharDelimiter", pt.CharDelimiterSplit("-"), lambda: hf_pre.CharDelimiterSplit("-")),
    ("FixedLength", pt.FixedLength(), lambda: hf_pre.FixedLength()),
    ("FixedLength-1", pt.FixedLength(length=1), lambda: hf_pre.FixedLength(length=1)),
    ("UnicodeScripts", pt.UnicodeScripts(), lambda: hf_pre.UnicodeScripts()),
    ("Sequence-scripts", pt.Sequence([pt.WhitespaceSplit(), pt.UnicodeScripts(), pt.FixedLength(length=2)]),
     lambda: hf_pre.Sequence([hf_pre.WhitespaceSplit(), hf_pre.UnicodeScripts(), hf_pre.FixedLength(length=2)])),
] + [
    (f"Split-{b}-{inv}", pt.Split(r"\s+|\d", b, invert=inv),
     (lambda b=b, inv=inv: hf_pre.Split(__import__("tokenizers").Regex(r"\s+|\d"), b, invert=inv)))
    for b in ("removed", "isolated", "merged_with_previous", "merged_with_next", "contiguous")
    for inv in (False, True)
] + [
    ("Split-string", pt.Split("ab", "merged_with_previous", regex_pattern=False),
     lambda: hf_pre.Split("ab", "merged_with_previous")),
    ("Sequence", pt.Sequence([pt.WhitespaceSplit(), pt.Digits(True), pt.Punctuation()]),
     lambda: hf_pre.Sequence([hf_pre.WhitespaceSplit(), hf_pre.Digits(True), hf_pre.Punctuation()])),
    ("Sequence-split-metaspace", pt.Sequence([pt.Split(r"\d+", "isolated"), pt.Metaspace(prepend_scheme="first")]),
     lambda: hf_pre.Sequence([hf_pre.Split(__import__("tokenizers").Regex(r"\d+"), "isolated"),
                              hf_pre.Metaspace(prepend_scheme="first")])),
]

TRICKY = [
    "", " ", "  ", "a", "Hello, world!  How are you?!?", " leading and trailing ", "x\t\ty\r\nz\u3000w",
    "12345 abc123def 4.56", "don't stop-me now—ok…", "東京タワー、高さ333m。", "👩‍👩‍👧 🇯🇵 e\u0301",
    "مرحبا بالعالم 123", "नमस्ते दुनिया", "\x00\x1c\x1f\x85\xa0", "ab ab abab", "--a--b-", "▁already▁meta",
    "def f(x):\n    return x**2  # sq\n", '{"k":[1,2,{"z":null}]}', "a²bⅫc٣d½ ¹²³",
]


@pytest.mark.parametrize("name,ours,ref", CASES, ids=[c[0] for c in CASES])
def test_fast_split_equals_piece_split(name, ours, ref):
    for text in TRICKY:
        for first in (True, False):
            assert ours.split(text, first) == [p.text for p in ours.pre_tokenize(text, first)], (name, text)


@pytest.mark.parametrize("name,ours,ref", CASES, ids=[c[0] for c in CASES])
def test_pieces_and_offsets_match_hf_on_tricky_text(name, ours, ref):
    hf = ref()
    for text in TRICKY:
        assert ours.pre_tokenize_str(text) == hf.pre_tokenize_str(text), (name, text)


@pytest.mark.parametrize("name,ours,ref", CASES, ids=[c[0] for c in CASES])
def test_pieces_match_hf_on_real_text(name, ours, ref, shared_data):
    hf = ref()
    text = (shared_data / "text" / "parallel").glob("*")
    for path in sorted(text)[:12]:
        for line in path.read_text(encoding="utf-8").splitlines()[:40]:
            assert ours.pre_tokenize_str(line) == hf.pre_tokenize_str(line), (name, path.name, line)


_alphabet = st.sampled_from(list("ab1 2\t\n\u3000!,.-▁é\u0301漢🙂'"))


@settings(max_examples=150, deadline=None)
@given(st.lists(_alphabet, max_size=30).map("".join))
def test_every_pretokenizer_matches_hf_on_random_text(text):
    for name, ours, ref in CASES:
        assert ours.pre_tokenize_str(text) == ref().pre_tokenize_str(text), (name, text)


@pytest.mark.parametrize("name,ours,ref", CASES, ids=[c[0] for c in CASES])
def test_serialized_form_round_trips_and_hf_reads_it(name, ours, ref):
    import json

    d = ours.to_dict()
    assert pt.pre_tokenizer_from_dict(json.loads(json.dumps(d))) == ours
    assert pt.pre_tokenizer_from_dict(json.loads(ref().__getstate__())).to_dict() == d


def test_split_behaviors_by_hand():
    # "a1b" with delimiter "1"
    assert pt.split_spans(3, [(1, 2)], "removed") == [(0, 1), (2, 3)]
    assert pt.split_spans(3, [(1, 2)], "isolated") == [(0, 1), (1, 2), (2, 3)]
    assert pt.split_spans(3, [(1, 2)], "merged_with_previous") == [(0, 2), (2, 3)]
    assert pt.split_spans(3, [(1, 2)], "merged_with_next") == [(0, 1), (1, 3)]
    assert pt.split_spans(4, [(1, 2), (2, 3)], "contiguous") == [(0, 1), (1, 3), (3, 4)]


def test_unknown_pre_tokenizer_type_names_it():
    from tokenforge.errors import FileFormatError

    with pytest.raises(FileFormatError, match="NoSuchSplit"):
        pt.pre_tokenizer_from_dict({"type": "NoSuchSplit"})
    with pytest.raises(FileFormatError, match="delimiter"):
        pt.pre_tokenizer_from_dict({"type": "CharDelimiterSplit"})

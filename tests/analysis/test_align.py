"""Aligning two tokenizations on bytes: every byte and every token in exactly one group,
groups consecutive and minimal, for every pair of shipped encodings and for
normalizing (BERT, SentencePiece) tokenizers against byte-level ones."""

from __future__ import annotations

import itertools
from functools import lru_cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tokenforge
from tokenforge.analysis import AlignedGroup, align, align_text
from tokenforge.analysis.align import align_spans
from tokenforge.corpus import embedded_corpus

ENCODINGS = tokenforge.list_encodings()
PAIRS = list(itertools.combinations(ENCODINGS, 2))


@lru_cache(maxsize=None)
def _corpus_lines() -> tuple[str, ...]:
    lines = []
    for lang in embedded_corpus():
        lines += [line for line in lang.heldout.read_text(encoding="utf-8").splitlines() if line.strip()][:8]
    return tuple(lines)


def _spans(tok, text):
    return [(s.byte_start, s.byte_end) for s in tok.encode_with_offsets(text, disallowed_special=())]


def check_alignment(groups: list[AlignedGroup], spans_a, spans_b, n_bytes: int, *, exact: bool = True) -> None:
    """The invariants: a partition of the bytes and of both token lists into minimal groups.

    ``exact``: both sides of every group with text cover exactly its bytes (true when each
    tokenizer's tokens cover every byte, as byte-level BPE's do)."""
    # 1. groups with text are consecutive and cover every byte exactly once
    wide = [g for g in groups if g.byte_end > g.byte_start]
    pos = 0
    for g in wide:
        assert g.byte_start == pos, (g, pos)
        pos = g.byte_end
    assert pos == n_bytes
    # groups are in text order
    assert [g.byte_start for g in groups] == sorted(g.byte_start for g in groups)
    # 2. every token in exactly one group, in order
    for side, spans in (("a", spans_a), ("b", spans_b)):
        owned = [k for g in groups for k in getattr(g, side)]
        assert owned == list(range(len(spans))), side
    for g in groups:
        a = [spans_a[k] for k in g.a]
        b = [spans_b[k] for k in g.b]
        if g.byte_start == g.byte_end:  # 3. a token that covers no text: a group of its own
            assert len(a) + len(b) == 1 and all(s == e for s, e in a + b), g
            continue
        for s, e in a + b:
            assert g.byte_start <= s < e <= g.byte_end or g.byte_start < s == e < g.byte_end, (g, s, e)
        if exact:
            for side in (a, b):
                assert side, g
                assert min(s for s, _ in side) == g.byte_start and max(e for _, e in side) == g.byte_end, g
        # 4. minimal: every token boundary inside the group lies strictly inside some token
        inner = {p for s, e in a + b for p in (s, e) if g.byte_start < p < g.byte_end}
        for p in inner:
            assert any(s < p < e for s, e in a + b), (g, p)


def _check_text(tok_a, tok_b, text, exact=True):
    groups = align_text(tok_a, tok_b, text, disallowed_special=())
    check_alignment(groups, _spans(tok_a, text), _spans(tok_b, text), len(text.encode("utf-8")), exact=exact)
    return groups


multilingual = st.text(
    alphabet=st.one_of(
        st.characters(codec="utf-8"),
        st.sampled_from(list(" \n\t  αβγ日本語中文한국어русскийعربيةहिन्दी😀👍🏽ﬃ١٢３'sll123")),
    ),
    max_size=60,
)
with_corpus = st.one_of(
    multilingual,
    st.builds(lambda line, i, j, extra: line[i % (len(line) + 1): j % (len(line) + 1) + i % (len(line) + 1)] + extra,
              st.sampled_from(_corpus_lines()), st.integers(0, 400), st.integers(0, 400), multilingual),
)


@pytest.mark.parametrize("a,b", PAIRS)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=with_corpus)
def test_every_pair_of_encodings_partitions_bytes_and_tokens(a, b, text):
    tok_a, tok_b = tokenforge.get_encoding(a), tokenforge.get_encoding(b)
    groups = _check_text(tok_a, tok_b, text)
    # the id form gives the same groups (byte-level tokens spell the text)
    ids_a = tok_a.encode(text, disallowed_special=())
    ids_b = tok_b.encode(text, disallowed_special=())
    assert [(g.byte_span, g.a, g.b) for g in align(tok_a, ids_a, tok_b, ids_b)] == [
        (g.byte_span, g.a, g.b) for g in groups]


@pytest.mark.parametrize("a,b", PAIRS)
def test_every_pair_on_the_embedded_corpus(a, b):
    tok_a, tok_b = tokenforge.get_encoding(a), tokenforge.get_encoding(b)
    for lang in embedded_corpus():
        text = lang.heldout.read_text(encoding="utf-8")[:3000]
        groups = _check_text(tok_a, tok_b, text)
        # code-point spans agree with the byte spans
        for g in groups:
            assert text[g.start:g.end].encode("utf-8") == text.encode("utf-8")[g.byte_start:g.byte_end] or any(
                (text.encode("utf-8")[p] & 0xC0) == 0x80 for p in (g.byte_start, g.byte_end) if p < len(text.encode("utf-8")))


def test_a_tokenizer_with_itself_is_one_to_one():
    enc = tokenforge.get_encoding("cl100k_base")
    text = "Hello, 世界! 👍🏽 tokenization"
    groups = align_text(enc, enc, text)
    assert all(g.one_to_one for g in groups)
    assert len(groups) == len(enc.encode(text))


def test_many_to_many_group():
    a, b = tokenforge.get_encoding("gpt2"), tokenforge.get_encoding("cl100k_base")
    groups = align_text(a, b, "    return x")
    assert [(g.byte_span, len(g.a), len(g.b)) for g in groups] == [((0, 3), 3, 1), ((3, 10), 1, 1), ((10, 12), 1, 1)]
    assert groups[0].span == (0, 3) and groups[0].to_dict()["a"] == [0, 3]


def test_partial_characters_align_on_bytes():
    # gpt2 cuts 世 into byte tokens; o200k has it whole
    a, b = tokenforge.get_encoding("gpt2"), tokenforge.get_encoding("o200k_base")
    text = "世界"
    groups = _check_text(a, b, text)
    assert groups[-1].byte_end == 6 and groups[-1].end == 2


def test_lone_surrogates_align():
    a, b = tokenforge.get_encoding("gpt2"), tokenforge.get_encoding("o200k_base")
    text = "a\ud800b\ud83d\ude00c"
    groups = align_text(a, b, text)
    assert groups[0].start == 0 and groups[-1].end == len(text)
    assert sum(g.byte_end - g.byte_start for g in groups) == len("a\ufffdb😀c".encode("utf-8"))


def test_align_ids_needs_the_same_bytes():
    a, b = tokenforge.get_encoding("gpt2"), tokenforge.get_encoding("cl100k_base")
    with pytest.raises(tokenforge.InvalidArgumentError, match=r"first difference at byte 5 \(A has b' ', B has b'_'"):
        align(a, a.encode("hello world"), b, b.encode("hello_world"))
    with pytest.raises(tokenforge.InvalidArgumentError, match="byte 5 .one ends there"):
        align(a, a.encode("hello world"), b, b.encode("hello"))


def test_empty_text():
    enc = tokenforge.get_encoding("gpt2")
    assert align_text(enc, enc, "") == []
    assert align(enc, [], enc, []) == []


def test_zero_width_tokens_get_groups_of_their_own():
    # [CLS] at 0 and [SEP] at the end: their own groups, the other side empty
    spans_a = [(0, 0), (0, 2), (2, 5), (5, 5)]
    spans_b = [(0, 1), (1, 5)]
    groups = align_spans(spans_a, spans_b, 5)
    check_alignment(groups, spans_a, spans_b, 5)
    assert [(g.byte_span, tuple(g.a), tuple(g.b)) for g in groups] == [
        ((0, 0), (0,), ()), ((0, 5), (1, 2), (0, 1)), ((5, 5), (3,), ())]


def test_a_zero_width_token_inside_a_group_belongs_to_it():
    spans_a = [(0, 3), (3, 3), (3, 5)]
    spans_b = [(0, 5)]
    groups = align_spans(spans_a, spans_b, 5)
    check_alignment(groups, spans_a, spans_b, 5)
    assert [(g.byte_span, tuple(g.a), tuple(g.b)) for g in groups] == [((0, 5), (0, 1, 2), (0,))]


def test_tokens_out_of_order_are_refused():
    with pytest.raises(tokenforge.InvalidArgumentError, match="not in text order"):
        align_spans([(2, 3), (0, 2)], [(0, 3)], 3)


def test_top_level_names():
    assert tokenforge.align is align and tokenforge.align_text is align_text
    assert "align" in tokenforge.__all__ and "AlignedGroup" in tokenforge.__all__


# ---------------------------------------------------------------- normalizing tokenizers

def _shared(shared_data, *parts):
    path = shared_data.joinpath("vocab", *parts)
    if not path.exists():
        pytest.skip(f"{path} not available")
    return tokenforge.load(path)


@pytest.fixture(scope="module")
def normalizing(shared_data):
    return {
        "bert": _shared(shared_data, "hf", "bert-base-uncased_wordpiece_tokenizer.json"),
        "albert": _shared(shared_data, "hf", "albert-base-v2_spiece_unigram_tokenizer.json"),
        "mistral": _shared(shared_data, "sentencepiece", "mistral_v1_tokenizer.model"),
    }


NORMALIZING_PAIRS = [("bert", "cl100k_base"), ("mistral", "bert"), ("albert", "cl100k_base"),
                     ("mistral", "o200k_base"), ("albert", "bert")]


@pytest.mark.parametrize("a,b", NORMALIZING_PAIRS)
def test_normalizing_tokenizers_align_on_original_bytes(normalizing, a, b):
    tok_a = normalizing.get(a) or tokenforge.get_encoding(a)
    tok_b = normalizing.get(b) or tokenforge.get_encoding(b)
    texts = ["Héllo WORLD, naïve ﬃ café 世界!  Tabs\tand\nnewlines  ", *_corpus_lines()[:40]]
    for text in texts:
        groups = _check_text(tok_a, tok_b, text, exact=False)
        # [CLS]/[SEP] and </s>-like tokens that cover no text are groups with the other side empty
        for g in groups:
            if g.byte_start == g.byte_end:
                assert len(g.a) + len(g.b) == 1


@pytest.mark.parametrize("a,b", NORMALIZING_PAIRS[:2])
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(text=multilingual)
def test_normalizing_tokenizers_on_random_text(normalizing, a, b, text):
    tok_a = normalizing.get(a) or tokenforge.get_encoding(a)
    tok_b = normalizing.get(b) or tokenforge.get_encoding(b)
    _check_text(tok_a, tok_b, text, exact=False)


def test_bert_lowercasing_against_cl100k(normalizing):
    bert, cl = normalizing["bert"], tokenforge.get_encoding("cl100k_base")
    groups = align_text(bert, cl, "Hello WORLD")
    spans = [(g.span, len(g.a), len(g.b)) for g in groups]
    # [CLS], "hello" | "Hello", "world" | " WORLD" (BERT's token starts after the space), [SEP]
    assert spans == [((0, 0), 1, 0), ((0, 5), 1, 1), ((5, 11), 1, 1), ((11, 11), 1, 0)]

"""The rank-merge algorithm itself (Sennrich et al., 2016; tiktoken)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tokenforge.models.bpe import (
    BPE,
    SHORT_PIECE_BYTES,
    _merge_long,
    _merge_short,
    bpe_merge_bytes,
)


def _ranks(merges):
    ranks = {bytes([b]): b for b in range(256)}
    for a, b in merges:
        ranks[a + b] = len(ranks)
    return ranks


def test_encoding_follows_frozen_rank_not_frequency():
    # with (a,b) ranked before (b,c), "abc" is ab|c; reversing the ranks gives a|bc.
    assert bpe_merge_bytes(_ranks([(b"a", b"b"), (b"b", b"c")]), b"abc") == [b"ab", b"c"]
    assert bpe_merge_bytes(_ranks([(b"b", b"c"), (b"a", b"b")]), b"abc") == [b"a", b"bc"]


def test_equal_pairs_merge_left_to_right_without_overlap():
    # "aaa" with a+a gives aa|a
    assert bpe_merge_bytes(_ranks([(b"a", b"a")]), b"aaa") == [b"aa", b"a"]


def test_prefix_instability_example():
    ranks = _ranks([(b"a", b"b"), (b"ab", b"c")])
    assert bpe_merge_bytes(ranks, b"ab") == [b"ab"]
    assert bpe_merge_bytes(ranks, b"abc") == [b"abc"]


def test_whole_piece_lookup_wins_before_merging():
    # A token that no merge sequence reaches is still produced when the piece equals it (tiktoken rule).
    vocab = {b: bytes([b]) for b in range(256)}
    vocab[256] = b"xyz"
    model = BPE(vocab)
    assert model.encode_bytes(b"xyz") == [256]
    assert model.encode_bytes(b"xyzx") == [ord("x"), ord("y"), ord("z"), ord("x")]




@st.composite
def _random_ranks(draw):
    merges = []
    tokens = [bytes([c]) for c in b"abc"]
    for _ in range(draw(st.integers(0, 12))):
        a = draw(st.sampled_from(tokens))
        b = draw(st.sampled_from(tokens))
        if a + b not in tokens:
            merges.append((a, b))
            tokens.append(a + b)
    return _ranks(merges)


@settings(max_examples=300, deadline=None)
@given(_random_ranks(), st.binary(min_size=0, max_size=400).map(lambda b: bytes(97 + x % 3 for x in b)))
def test_heap_merge_equals_array_merge_on_small_alphabets(ranks, piece):
    assert _merge_long(ranks, piece) == _merge_short(ranks, piece)
    assert b"".join(_merge_long(ranks, piece)) == piece


def test_long_piece_uses_heap_path_and_stays_exact():
    ranks = _ranks([(b"a", b"a"), (b"aa", b"aa"), (b"aaaa", b"aaaa")])
    piece = b"a" * (SHORT_PIECE_BYTES * 10 + 3)
    assert bpe_merge_bytes(ranks, piece) == _merge_short(ranks, piece)

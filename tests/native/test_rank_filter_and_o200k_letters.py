"""Rank lookups behind a Bloom filter (a clear bit proves the bytes are no token) and the
o200k scanner's letter alternatives found from the back: ids equal tiktoken's, pieces
equal the published pattern's, and merging every multi-byte token's bytes equals a plain
merge over the rank dictionary."""

from __future__ import annotations

import random

import pytest

from _tiktoken_ref import reference

import tokenforge

regex = pytest.importorskip("regex")

NAMES = ["cl100k_base", "o200k_base"]


def _reference_merge(ranks: dict[bytes, int], piece: bytes) -> list[int]:
    """tiktoken's merge, written out: join the adjacent pair of lowest rank, leftmost first."""
    parts = [piece[i:i + 1] for i in range(len(piece))]
    while len(parts) > 1:
        best, at = None, -1
        for k in range(len(parts) - 1):
            r = ranks.get(parts[k] + parts[k + 1])
            if r is not None and (best is None or r < best):
                best, at = r, k
        if best is None:
            break
        parts[at:at + 2] = [parts[at] + parts[at + 1]]
    return [ranks[p] for p in parts]


def _cjk_tokens(ranks: dict[bytes, int]) -> list[str]:
    out = []
    for b in ranks:
        try:
            s = b.decode("utf-8")
        except UnicodeDecodeError:
            continue
        if s and all(0x3040 <= ord(c) <= 0x9FFF for c in s):
            out.append(s)
    return sorted(out)


@pytest.mark.parametrize("name", NAMES)
def test_text_made_of_cjk_tokens_equals_tiktoken(name):
    # runs of the vocabulary's own CJK tokens: most joins hit (the filter passes them on),
    # the joins across two tokens mostly miss (the filter answers)
    tok = tokenforge.get_encoding(name)
    ref = reference(name)
    words = _cjk_tokens(dict(tok.mergeable_ranks))
    assert len(words) > 100
    rng = random.Random(5)
    for _ in range(20):
        text = "".join(rng.choice(words) for _ in range(rng.randrange(1, 400)))
        text += "、" + "".join(chr(rng.randrange(0x4E00, 0x9FA5)) for _ in range(rng.randrange(1, 300)))
        assert tok.encode_ordinary(text) == ref.encode_ordinary(text)


@pytest.mark.parametrize("name", NAMES)
def test_every_multibyte_token_merges_as_the_rank_dict_says(name):
    tok = tokenforge.get_encoding(name)
    ranks = dict(tok.mergeable_ranks)
    core = tok._plan.core
    checked = 0
    for b in ranks:
        if len(b) >= 4 and max(b) >= 0x80:
            # twice: each half on its own is a piece the merge sees, and the whole
            assert core.merge_with(b + b, 0) == _reference_merge(ranks, b + b), b
            checked += 1
    assert checked > 1000


# o200k's letters: [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+ and
# [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*, each with optional contractions
POOL = [
    "A", "Z", "a", "z", "É", "é", "ǅ", "ᾈ",  # Lu, Ll, Lt
    "ʰ", "ー", "々",  # Lm
    "中", "文", "あ", "ア", "ا", "ℵ",  # Lo
    "\u0301", "\u0308", "\u093f",  # M
    "1", "٣", " ", "  ", "\n", "'s", "'T", "’re", ".", "-", "🙂", "\u200d",
]


def test_o200k_letter_runs_split_as_the_pattern():
    tok = tokenforge.get_encoding("o200k_base")
    pat = regex.compile(tok.pattern)
    core = tok._plan.core
    ref = reference("o200k_base")
    rng = random.Random(11)
    fixed = ["ABC", "ǅǅ", "中ABC", "AB中", "ABCǅ", "A\u0301", "ʰʰA", "ǅa", "ABCdEF", "中文ǅ", "Aǅ'S", " ABC中ǅ"]
    texts = fixed + ["".join(rng.choice(POOL) for _ in range(rng.randrange(1, 40))) for _ in range(3000)]
    for text in texts:
        assert core.split(text) == pat.findall(text), text
        assert tok.encode_ordinary(text) == ref.encode_ordinary(text), text


@pytest.mark.parametrize("name", NAMES)
def test_threaded_batch_of_cjk_documents_equals_tiktoken(name):
    # the filter is read by every thread at once (built once, never written after)
    tok = tokenforge.get_encoding(name)
    ref = reference(name)
    words = _cjk_tokens(dict(tok.mergeable_ranks))
    rng = random.Random(9)
    docs = ["".join(rng.choice(words) for _ in range(rng.randrange(1, 200))) for _ in range(200)]
    assert tok.encode_ordinary_batch(docs, num_threads=2) == [ref.encode_ordinary(d) for d in docs]

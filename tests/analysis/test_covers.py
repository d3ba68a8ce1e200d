"""Byte-prefix covers (Phan et al., 2024) against brute-force enumeration."""

from __future__ import annotations

import itertools
import random

import pytest

import tokenforge
from _small_bpe import random_bpe
from tokenforge.analysis.canonical import is_canonical
from tokenforge.analysis.covers import count_covers, covers
from tokenforge.analysis.healing import TokenIndex
from tokenforge.errors import InvalidArgumentError


def _random_bpe(seed: int, pre_tokenizer=None) -> tokenforge.Tokenizer:
    return random_bpe(seed, (b"a", b"b", b" "), 14, pre_tokenizer)


def _brute_force(tok, prefix: bytes, canonical: bool) -> set[tuple[int, ...]]:
    """Every sequence t1..tk with bytes(t1..t_{k-1}) a proper prefix of ``prefix`` and
    bytes(t1..tk) starting with it. The tokens before the last lie inside the prefix,
    so they are drawn from the tokens spelled with its bytes; the last from all tokens."""
    everything = range(tok.max_token_value + 1)
    tb = {i: tok.decode_single_token_bytes(i) for i in everything}
    inner = [i for i in everything if set(tb[i]) <= set(prefix)]
    out = set()
    for n in range(len(prefix)):
        for head in itertools.product(inner, repeat=n):
            hb = b"".join(tb[i] for i in head)
            if not (len(hb) < len(prefix) and prefix.startswith(hb)):
                continue
            for t in everything:
                if (hb + tb[t]).startswith(prefix):
                    seq = (*head, t)
                    if not canonical or is_canonical(tok, seq):
                        out.add(seq)
    return out


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("pattern", [None, "gpt2"])
@pytest.mark.parametrize("canonical", [False, True])
def test_covers_equal_brute_force_on_small_vocabularies(seed, pattern, canonical):
    tok = _random_bpe(seed, pattern)
    rng = random.Random(seed)
    index = TokenIndex(tok)
    for _ in range(4):
        prefix = "".join(rng.choice("ab ") for _ in range(rng.randrange(1, 5))).encode()
        got = list(covers(tok, prefix, canonical=canonical, index=index))
        assert len(got) == len(set(got))
        assert set(got) == _brute_force(tok, prefix, canonical), prefix
        if not canonical:
            assert count_covers(tok, prefix, index=index) == len(got)


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base"])
@pytest.mark.parametrize("prefix", [b" hel", b"ab", "é".encode()[:1], " 王".encode()])
def test_covers_on_real_vocabularies(name, prefix):
    enc = tokenforge.get_encoding(name)
    index = TokenIndex(enc)
    got = list(covers(enc, prefix, index=index))
    assert len(got) == len(set(got)) == count_covers(enc, prefix, index=index)
    for seq in got:
        b = enc.decode_bytes(list(seq))
        assert b.startswith(prefix)
        assert len(enc.decode_bytes(list(seq[:-1]))) < len(prefix)
    # the one-token covers are exactly the tokens that start with the prefix
    singles = {s[0] for s in got if len(s) == 1}
    assert singles == {i for i in range(enc.n_vocab) if i not in enc.special_tokens.values()
                       and _bytes_or_none(enc, i) is not None and _bytes_or_none(enc, i).startswith(prefix)}
    canon = set(covers(enc, prefix, canonical=True, index=index))
    assert canon == {s for s in got if is_canonical(enc, s)}
    # the canonical encoding of any text that starts with the prefix ends in exactly one cover
    for text in (prefix + b"lo world", prefix + b"p", prefix):
        ids = enc.encode_bytes(text)
        k = next(k for k in range(1, len(ids) + 1) if len(enc.decode_bytes(ids[:k])) >= len(prefix))
        assert tuple(ids[:k]) in canon


def _bytes_or_none(enc, i):
    try:
        return enc.decode_single_token_bytes(i)
    except Exception:
        return None


def test_empty_prefix_is_refused():
    with pytest.raises(InvalidArgumentError):
        list(covers(tokenforge.get_encoding("gpt2"), b""))
    with pytest.raises(InvalidArgumentError):
        list(covers(tokenforge.get_encoding("gpt2"), "text"))  # type: ignore[arg-type]

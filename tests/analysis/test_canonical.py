"""Canonical tokenization (Geh et al., 2024; Vieira et al., 2024, 2025): re-encoding
checks, the bigram test on BPE without a pre-tokenizer, and the next-token mask
against brute force."""

from __future__ import annotations

import itertools
import random
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tokenforge
from _small_bpe import random_bpe
from tokenforge.analysis.canonical import CanonicalMask, is_canonical, is_canonical_pair
from tokenforge.errors import InvalidArgumentError

CORPUS = Path(tokenforge.__file__).parent / "data" / "corpus"
ENCODINGS = ["cl100k_base", "o200k_base", "gpt2"]


def _random_bpe(seed: int, n_merges: int = 12, pre_tokenizer=None) -> tokenforge.Tokenizer:
    """A BPE over the bytes with random merges of tokens spelled with a, b, c."""
    return random_bpe(seed, (b"a", b"b", b"c"), n_merges, pre_tokenizer)


def _alphabet_ids(tok) -> list[int]:
    return [i for i in range(tok.max_token_value + 1) if set(tok.decode_single_token_bytes(i)) <= set(b"abc")]


@pytest.fixture(scope="module", params=ENCODINGS)
def enc(request):
    return tokenforge.get_encoding(request.param)


def _corpus_texts(limit: int = 600) -> list[str]:
    return [p.read_text(encoding="utf-8")[:limit] for p in sorted(CORPUS.glob("*.heldout.txt"))]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(max_size=60))
def test_encoding_is_canonical_and_a_split_is_not(enc, text):
    ids = enc.encode_ordinary(text)
    assert is_canonical(enc, ids)
    # replace the first multi-byte token by its single bytes: same bytes, other ids
    for k, i in enumerate(ids):
        b = enc.decode_single_token_bytes(i)
        if len(b) > 1:
            split = ids[:k] + [enc.encode_single_token(bytes([c])) for c in b] + ids[k + 1 :]
            assert enc.decode_bytes(split) == enc.decode_bytes(ids)
            assert not is_canonical(enc, split)
            break


def test_corpus_encodings_are_canonical(enc):
    for text in _corpus_texts(2000):
        ids = enc.encode_ordinary(text)
        assert is_canonical(enc, ids)
        assert not is_canonical(enc, [enc.encode_single_token(bytes([c])) for c in text.encode("utf-8")]) or all(
            len(enc.decode_single_token_bytes(i)) == 1 for i in ids
        )


def test_special_tokens_are_boundaries():
    enc = tokenforge.get_encoding("cl100k_base")
    ids = enc.encode("hello<|endoftext|> world", allowed_special="all")
    assert is_canonical(enc, ids)
    # the special string read as text is canonical too, but a special id inside a word splits it
    assert is_canonical(enc, enc.encode_ordinary("<|endoftext|>"))
    eot = enc.special_tokens["<|endoftext|>"]
    assert is_canonical(enc, [eot, eot])
    assert not is_canonical(enc, enc.encode(" hel") + [eot] + [enc.encode_single_token(b"lo")] + enc.encode(" hel") + enc.encode("lo"))


def test_invalid_utf8_goes_through_the_bytes_path():
    enc = tokenforge.get_encoding("cl100k_base")
    data = "héllo wörld 王".encode("utf-8")[:-1]
    ids = enc.encode_bytes(data)
    assert is_canonical(enc, ids)
    assert not is_canonical(enc, [enc.encode_single_token(bytes([c])) for c in data])


def test_non_byte_level_tokenizer_is_refused():
    tok = tokenforge.Tokenizer(tokenforge.WordPiece({"a": 0, "[UNK]": 1}, unk_token="[UNK]"))
    assert not tok.is_byte_level
    with pytest.raises(InvalidArgumentError):
        is_canonical(tok, [0])
    with pytest.raises(InvalidArgumentError):
        CanonicalMask(tok)


@pytest.mark.parametrize("seed", range(8))
def test_bigram_characterisation_without_pre_tokenizer(seed):
    """Vieira et al. (2025): for BPE without a pre-tokenizer, a sequence is canonical
    iff each adjacent pair is. Checked on every sequence of up to 4 tokens over a, b, c."""
    tok = _random_bpe(seed)
    ids = _alphabet_ids(tok)
    pair = {(a, b): is_canonical_pair(tok, a, b) for a in ids for b in ids}
    checked = 0
    for n in (3, 4):
        seqs = list(itertools.product(ids, repeat=n))
        for seq in random.Random(seed).sample(seqs, min(len(seqs), 4000)):
            assert is_canonical(tok, seq) == all(pair[p] for p in zip(seq, seq[1:])), seq
            checked += 1
    assert checked > 1000


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("pattern", [None, "gpt2"])
def test_mask_equals_brute_force_on_small_vocabularies(seed, pattern):
    tok = _random_bpe(seed, pre_tokenizer=pattern)
    mask = CanonicalMask(tok)
    rng = random.Random(seed)
    for _ in range(10):
        text = "".join(rng.choice("abc  ") for _ in range(rng.randrange(0, 12)))
        prefix = tok.encode_ordinary(text)
        got = mask.mask(prefix)
        want = np.array([is_canonical(tok, prefix + [t]) for t in range(tok.max_token_value + 1)])
        assert got.shape == want.shape
        assert (got == want).all(), (text, np.nonzero(got != want))
        assert all(mask.allows(prefix, t) == want[t] for t in range(0, len(want), 7))


def test_mask_equals_re_encoding_on_cl100k_corpus_prefixes():
    enc = tokenforge.get_encoding("cl100k_base")
    mask = CanonicalMask(enc)
    rng = random.Random(0)
    for text in _corpus_texts(300)[::3]:
        data = text.encode("utf-8")
        cut = rng.randrange(1, len(data))
        prefix = enc.encode_bytes(data[:cut])
        m = mask.mask(prefix)
        allowed = np.nonzero(m)[0].tolist()
        refused = [t for t in np.nonzero(~m)[0].tolist() if t < 100256]  # past 100256: specials and holes
        sample = rng.sample(allowed, min(40, len(allowed))) + rng.sample(refused, min(40, len(refused)))
        for t in sample:
            assert m[t] == is_canonical(enc, prefix + [t]), (text[:40], cut, t)
        # the true next token of the text is allowed whenever the cut is a token boundary
        full = enc.encode_ordinary(text)
        if full[: len(prefix)] == prefix and len(full) > len(prefix):
            assert m[full[len(prefix)]]


def test_mask_generation_stays_canonical():
    enc = tokenforge.get_encoding("gpt2")
    mask = CanonicalMask(enc)
    rng = np.random.default_rng(0)
    ids: list[int] = enc.encode_ordinary("The quick")
    for _ in range(12):
        allowed = np.nonzero(mask.mask(ids))[0]
        ids.append(int(rng.choice(allowed)))
        assert is_canonical(enc, ids)


def test_mask_refuses_a_non_canonical_prefix():
    enc = tokenforge.get_encoding("cl100k_base")
    bad = enc.encode(" hel") + enc.encode("lo")
    with pytest.raises(InvalidArgumentError):
        CanonicalMask(enc).mask(bad)


def test_canonical_sequences_are_not_prefix_closed_under_the_whitespace_lookahead():
    """The documented limit of the mask: with ``\\s+(?!\\S)`` a whitespace run at the end is one
    piece, before a word it gives up its last character, so a canonical sequence can have a
    non-canonical prefix, and the mask (sound) refuses the step into it."""
    enc = tokenforge.get_encoding("gpt2")
    nl = enc.encode_single_token(b"\n")
    ids = enc.encode_ordinary("\n\nSmall")
    assert ids[:2] == [nl, nl]
    assert is_canonical(enc, ids)
    assert not is_canonical(enc, ids[:2])
    assert not CanonicalMask(enc).allows(ids[:1], nl)


def test_llama3_ranks(shared_data):
    tok = tokenforge.load(shared_data / "vocab" / "meta" / "llama3_tokenizer.model")
    rng = random.Random(3)
    mask = CanonicalMask(tok)
    for text in _corpus_texts(400)[::2]:
        ids = tok.encode_ordinary(text)
        assert is_canonical(tok, ids)
        k = next((k for k, i in enumerate(ids) if len(tok.decode_single_token_bytes(i)) > 1), None)
        if k is not None:
            split = ids[:k] + [tok.encode_single_token(bytes([c])) for c in tok.decode_single_token_bytes(ids[k])]
            assert not is_canonical(tok, split + ids[k + 1 :])
        prefix = ids[: rng.randrange(1, len(ids))]
        m = mask.mask(prefix)
        assert m[ids[len(prefix)]]
        for t in rng.sample(range(128000), 30):
            assert m[t] == is_canonical(tok, prefix + [t])


def test_hf_byte_level_bpe_file_agrees_with_the_rank_file(tmp_path):
    from tokenforge.analysis.covers import covers

    ranks = tokenforge.get_encoding("gpt2")
    path = tmp_path / "tokenizer.json"
    ranks.save(path, format="hf")
    hf = tokenforge.load(path)
    assert type(hf.model).__name__ == "PieceBPE" and hf.is_byte_level
    for text in _corpus_texts(300)[::4]:
        ids = hf.encode_ordinary(text)
        assert ids == ranks.encode_ordinary(text)
        assert is_canonical(hf, ids)
        cut = ids[: len(ids) // 2]
        assert (CanonicalMask(hf).mask(cut)[:50257] == CanonicalMask(ranks).mask(cut)[:50257]).all()
    assert set(covers(hf, b" hel", canonical=True)) == set(covers(ranks, b" hel", canonical=True))

"""Small byte-level BPE tokenizers with random merges, for brute-force checks."""

from __future__ import annotations

import random

import tokenforge


def random_bpe(seed: int, alphabet: tuple[bytes, ...], n_merges: int, pre_tokenizer=None) -> tokenforge.Tokenizer:
    """A BPE over all bytes whose merges join random tokens spelled with ``alphabet`` (up to
    5 bytes each), in the order drawn."""
    rng = random.Random(seed)
    vocab = {b: bytes([b]) for b in range(256)}
    pool = list(alphabet)
    merges = []
    while len(merges) < n_merges:
        x, y = rng.choice(pool), rng.choice(pool)
        if x + y in pool or len(x + y) > 5:
            continue
        merges.append((x, y))
        pool.append(x + y)
        vocab[len(vocab)] = x + y
    return tokenforge.Tokenizer(tokenforge.BPE(vocab, merges=merges), pre_tokenizer=pre_tokenizer)

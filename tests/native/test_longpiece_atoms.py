"""Rank BPE on long pieces (block-minimum merge, atomic characters and byte pairs):
ids equal tiktoken's on CJK runs, text without spaces, random bytes and repeats."""

from __future__ import annotations

import random

import pytest

from _tiktoken_ref import reference

import tokenforge

NAMES = ["cl100k_base", "o200k_base"]


def _texts(seed: int) -> list[str]:
    rng = random.Random(seed)
    cjk = "".join(chr(rng.randrange(0x4E00, 0x9FA5)) for _ in range(3000))
    kana = "".join(chr(rng.randrange(0x3041, 0x30FF)) for _ in range(2000))
    words = "thequickbrownfoxjumpsoverthelazydogOnceuponatimetherewasalittlegirl"
    nospace = "".join(rng.choice(words) for _ in range(5000))
    mixed = "".join(rng.choice(["中文", "テスト", "abc", "é", "ß", "Ж", "🙂", "\u200d", "\u0301", "עברית", "\x01"])
                    for _ in range(2000))
    two_byte = "".join(chr(rng.randrange(0x80, 0x800)) for _ in range(2000))
    return [cjk, kana, nospace, mixed, two_byte, "的" * 3000, "ab" * 2000, cjk[:40] + nospace[:40]]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_long_pieces_equal_tiktoken(name, seed):
    tok = tokenforge.get_encoding(name)
    ref = reference(name)
    for text in _texts(seed):
        assert tok.encode_ordinary(text) == ref.encode_ordinary(text)


@pytest.mark.parametrize("name", NAMES)
def test_merge_equals_backtracker_on_random_bytes(name):
    core = tokenforge.get_encoding(name)._plan.core
    rng = random.Random(7)
    for _ in range(300):
        piece = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 600)))
        assert core.merge_with(piece, 0) == core.merge_with(piece, 1)


@pytest.mark.parametrize("name", NAMES)
def test_rank_files_get_the_native_plan(name):
    assert tokenforge.get_encoding(name).plan == "rank-bpe"


def test_a_token_ranked_below_its_parts_turns_the_atoms_off():
    """Atoms assume every token is made from two lower-ranked tokens; a hand-made rank list
    where "aba" ranks below "ab" and "ba" must still give tiktoken's ids."""
    tiktoken = pytest.importorskip("tiktoken")
    ranks = {bytes([b]): b for b in range(256)}
    ranks.update({b"aba": 256, b"ba": 257, b"ab": 258})
    ref = tiktoken.Encoding("hand-made", pat_str=r"[\s\S]+", mergeable_ranks=ranks, special_tokens={})
    bpe = tokenforge.models.BPE.from_ranks(ranks)
    enc = bpe.native_encoder()
    rng = random.Random(3)
    pieces = [b"aaaabbaababbabbabaaababba"] + [bytes(rng.choice(b"ab") for _ in range(rng.randrange(1, 80)))
                                                for _ in range(300)]
    for piece in pieces:
        assert list(enc.encode_piece(piece)) == ref.encode_ordinary(piece.decode()), piece

"""Glitch-token candidates and unreachable tokens (Rumbelow & Watkins, 2023; Land & Bartolo, 2024)."""

from __future__ import annotations

import itertools
import json
import math

import pytest

import tokenforge
from tokenforge.analysis.glitch import (
    _poisson_log_cdf,
    find_glitch_tokens,
    reachability,
    unreachable_tokens,
)


def _tokenizer(extra: dict[int, bytes], merges=None, pattern="gpt2") -> tokenforge.Tokenizer:
    vocab = {b: bytes([b]) for b in range(256)}
    vocab.update(extra)
    return tokenforge.Tokenizer(tokenforge.BPE(vocab, merges=merges), pre_tokenizer=pattern)


def _brute_force_ids(tok, alphabet: str, max_len: int) -> set[int]:
    """Every id that any text over ``alphabet`` of up to ``max_len`` characters produces."""
    texts = ["".join(p) for n in range(1, max_len + 1) for p in itertools.product(alphabet, repeat=n)]
    seen: set[int] = set()
    for ids in tok.encode_ordinary_batch(texts):
        seen.update(ids)
    return seen


def test_ab_abc_tokens_are_reachable_alone():
    # merges [a+b, ab+c]: "ab" is reachable through the text "ab" alone, "abc" through "abc"
    tok = _tokenizer({256: b"ab", 257: b"abc"}, merges=[(b"a", b"b"), (b"ab", b"c")])
    rep = reachability(tok, ids=[256, 257])
    assert {i: (t.status, t.reason, t.witness) for i, t in rep.tokens.items()} == {
        256: ("reachable", "whole_piece", "ab"),
        257: ("reachable", "whole_piece", "abc"),
    }


def test_token_spanning_a_space_inside_a_word_is_unreachable_under_gpt2():
    # merges x+" " and "x "+y: "x y" is formed by the merges of its own bytes, but GPT-2's
    # pattern never keeps "x y" (or "x ") inside one pre-token.
    tok = _tokenizer({256: b"x ", 257: b"x y"}, merges=[(b"x", b" "), (b"x ", b"y")])
    rep = reachability(tok, ids=[256, 257])
    assert rep.tokens[257].status == "unreachable" and rep.tokens[257].reason == "split_by_pattern"
    assert rep.tokens[256].status == "unreachable"
    seen = _brute_force_ids(tok, "xy \n.", 5)
    assert 256 not in seen and 257 not in seen
    # without a split pattern the whole text is one piece, and both are produced
    free = _tokenizer({256: b"x ", 257: b"x y"}, merges=[(b"x", b" "), (b"x ", b"y")], pattern=None)
    assert reachability(free, ids=[256, 257]).counts()["reachable"] == 2
    assert free.encode("x y") == [257] and free.encode("x ") == [256]


def test_not_formable_fragment_is_proved_unreachable():
    # 4 bytes "一" + lead byte 0xE4 with no intermediate tokens: the merges never build it,
    # and no pre-token (always whole UTF-8) equals it.
    frag = "一".encode() + b"\xe4"
    tok = _tokenizer({256: frag})
    [t] = unreachable_tokens(tok, proved_only=True)[-1:]
    assert (t.id, t.reason, t.proved) == (256, "not_formable", True)
    assert 256 not in _brute_force_ids(tok, "一丁 ", 3)


def test_not_formable_complete_token_is_reachable_only_as_a_whole_piece():
    # "xyz" has no intermediate merges: only the whole-piece lookup produces it
    tok = _tokenizer({256: b"xyz"})
    assert reachability(tok, ids=[256]).tokens[256].reason == "whole_piece"
    # under GPT-2 "x,z" is never one pre-token, so the same construction is unreachable
    tok2 = _tokenizer({256: b"x,z"})
    t = reachability(tok2, ids=[256]).tokens[256]
    assert (t.status, t.reason) == ("unreachable", "not_formable_not_a_piece")
    assert 256 not in _brute_force_ids(tok2, "x,z ", 5)


def test_token_always_absorbed_by_a_later_merge_is_not_reported_reachable():
    # "\xe4\xb8" is formed by one merge, but every character starting with it is a token:
    # a later merge always absorbs it.
    extra = {256: b"\xe4\xb8"}
    merges = [(b"\xe4", b"\xb8")]
    for k, c in enumerate(range(0x80, 0xC0)):
        extra[257 + k] = b"\xe4\xb8" + bytes([c])
        merges.append((b"\xe4\xb8", bytes([c])))
    tok = _tokenizer(extra, merges=merges)
    t = reachability(tok, ids=[256]).tokens[256]
    assert t.status == "undetermined" and t.reason == "absorbed" and t.witness is None
    # dropping one of the absorbing tokens makes it reachable, with a witness
    del extra[257 + 1]
    merges = [m for m in merges if m != (b"\xe4\xb8", b"\x81")]
    tok2 = _tokenizer({i: b for i, b in extra.items() if i < 258}, merges=merges[:2])
    t2 = reachability(tok2, ids=[256]).tokens[256]
    assert t2.status == "reachable" and 256 in tok2.encode_ordinary(t2.witness)


def test_impossible_bytes_and_shadowed_duplicates():
    tok = _tokenizer({256: b"ab", 257: b"ab"})
    rep = reachability(tok)
    assert rep.tokens[257].reason == "shadowed"
    impossible = sorted(t.bytes[0] for t in rep.by_status("unreachable") if t.reason == "impossible_bytes")
    assert impossible == [0xC0, 0xC1] + list(range(0xF5, 0x100))


def test_every_witness_produces_its_token(small_tokenizer):
    rep = reachability(small_tokenizer)
    for t in rep.tokens.values():
        if t.status == "reachable":
            assert t.id in small_tokenizer.encode_ordinary(t.witness), t
        else:
            assert t.witness is None
    # the brute-force view agrees on what it can see: no proved-unreachable token is ever produced
    seen = _brute_force_ids(small_tokenizer, "ab \n.", 4)
    assert not {t.id for t in rep.tokens.values() if t.status == "unreachable"} & seen


@pytest.mark.parametrize(
    "name, impossible, probed",
    [("gpt2", 13, 0), ("cl100k_base", 13, 0)],
)
def test_real_encodings_unreachable_counts(name, impossible, probed):
    # figures: every single-byte token that no UTF-8 text contains (0xC0, 0xC1, 0xF5..0xFF) is
    # unreachable; every other gpt2/cl100k token has a witness or is undetermined.
    tok = tokenforge.get_encoding(name)
    bad = unreachable_tokens(tok)
    assert sum(t.reason == "impossible_bytes" for t in bad) == impossible
    assert sum(not t.proved for t in bad) == probed
    assert {len(t.bytes) for t in bad} == {1}


def test_glitch_counts_and_candidates(small_tokenizer, varied_text):
    texts = varied_text.split("\n")
    rep = find_glitch_tokens(small_tokenizer, texts, rare_max=1)
    counts = {}
    for line in texts:
        for i in small_tokenizer.encode_ordinary(line):
            counts[i] = counts.get(i, 0) + 1
    ordinary = sorted(small_tokenizer.model.vocab)
    assert rep.total_tokens == sum(counts.values())
    assert rep.never == sum(1 for i in ordinary if counts.get(i, 0) == 0)
    assert rep.rare == sum(1 for i in ordinary if counts.get(i, 0) == 1)
    cand_ids = [c.id for c in rep.candidates]
    assert sorted(cand_ids) == [i for i in ordinary if counts.get(i, 0) <= 1]
    # ordered by surprise, each with its reachability
    log_ps = [c.log_p for c in rep.candidates]
    assert log_ps == sorted(log_ps)
    assert all(c.reach is not None for c in rep.candidates)
    json.dumps(rep.to_dict())
    assert "never produced" in rep.render(5)


def test_glitch_uniform_expectation():
    tok = tokenforge.get_encoding("gpt2")
    rep = find_glitch_tokens(tok, ["the cat sat on the mat"] * 50, expected="uniform", check_reach=False)
    lam = rep.total_tokens / 50256  # ordinary tokens: <|endoftext|> is not counted
    assert rep.vocab_size == 50256
    assert all(math.isclose(c.expected, lam) for c in rep.candidates)
    assert all(math.isclose(c.log_p, -lam) for c in rep.candidates if c.count == 0)


def test_poisson_log_cdf():
    lam = 3.0
    exact = math.exp(-lam) * (1 + lam + lam**2 / 2)
    assert math.isclose(_poisson_log_cdf(2, lam), math.log(exact))
    assert _poisson_log_cdf(0, 0.0) == 0.0


def test_glitch_cli(tmp_path, capsys):
    import argparse

    from tokenforge.cli.analysis import register_glitch

    corpus = tmp_path / "c.txt"
    corpus.write_text("hello world\n" * 20, encoding="utf-8")
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="command", required=True)
    register_glitch(sub)
    args = p.parse_args(["glitch", "-t", "gpt2", "--text", str(corpus), "--top", "3", "--json", "--no-reach"])
    assert args.func(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["corpus"]["total_tokens"] == 60  # "hello", " world", "\n" x 20
    assert len(out["corpus"]["candidates"]) == 3


def test_glitch_on_a_wordpiece_pipeline():
    vocab = {"[UNK]": 0, "[CLS]": 1, "[SEP]": 2, "[PAD]": 3, "[MASK]": 4, "hello": 5, "world": 6, "##s": 7, "zz": 8}
    bert = tokenforge.bert_wordpiece(vocab)
    rep = find_glitch_tokens(bert, ["hello worlds", "hello"], rare_max=0)
    # the five specials (present in the vocab, so added as special tokens) are not ordinary tokens
    assert rep.vocab_size == 4
    assert rep.total_tokens == 4
    assert [(c.id, c.vocab, c.count) for c in rep.candidates] == [(8, "zz", 0)]
    assert all(c.reach is None for c in rep.candidates)


def test_glitch_cli_reachability_scan(capsys):
    import argparse

    from tokenforge.cli.analysis import register_glitch

    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="command", required=True)
    register_glitch(sub)
    args = p.parse_args(["glitch", "-t", "gpt2", "--json", "--top", "20"])
    assert args.func(args) == 0
    out = json.loads(capsys.readouterr().out)
    counts = out["reachability"]["counts"]
    assert counts["unreachable/impossible_bytes"] == 13
    assert counts["reachable"] + counts["unreachable"] + counts.get("undetermined", 0) == 50256
    assert {t["hex"] for t in out["reachability"]["unreachable"]} == {f"{b:02x}" for b in [0xC0, 0xC1, *range(0xF5, 0x100)]}


def test_solidgoldmagikarp_is_reachable_yet_absent_from_ordinary_text():
    # Rumbelow & Watkins (2023): ' SolidGoldMagikarp' is one GPT-2 token, id 43453. It is reachable (its text
    # is one pre-token), so a corpus that never produces it lists it as an under-trained candidate.
    gpt2 = tokenforge.get_encoding("gpt2")
    assert gpt2.encode(" SolidGoldMagikarp") == [43453]
    t = reachability(gpt2, ids=[43453]).tokens[43453]
    assert (t.status, t.reason, t.witness) == ("reachable", "whole_piece", " SolidGoldMagikarp")
    rep = find_glitch_tokens(gpt2, ["The cat sat on the mat. The dog ran."] * 30, rare_max=0, check_reach=False)
    assert 43453 in {c.id for c in rep.candidates}
    assert rep.counts[43453] == 0

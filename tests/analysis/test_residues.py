"""Vocabulary residues: emitted vs intermediate counts, checked by brute force, and pruning."""

from __future__ import annotations

from collections import Counter

import pytest

import tokenforge
from tokenforge.analysis.residues import count_pieces, prune_residues, residues, residues_from_counts
from tokenforge.corpus import embedded_corpus
from tokenforge.errors import InvalidArgumentError
from tokenforge.models.bpe import BPE
from tokenforge.tokenizer import Tokenizer


@pytest.fixture(scope="module")
def texts() -> list[str]:
    return [lang.train_text() for lang in embedded_corpus()]


def _brute(ranks: dict[bytes, int], piece: bytes, emitted: Counter, inter: Counter) -> None:
    """The rank rule by its definition, one occurrence at a time: scan all adjacent pairs,
    merge the lowest-ranked (leftmost on ties) until none is a token."""
    if piece in ranks:
        emitted[piece] += 1
        return
    parts = [bytes([b]) for b in piece]
    while True:
        best = None
        for k in range(len(parts) - 1):
            r = ranks.get(parts[k] + parts[k + 1])
            if r is not None and (best is None or r < best[0]):
                best = (r, k)
        if best is None:
            break
        k = best[1]
        inter[parts[k]] += 1
        inter[parts[k + 1]] += 1
        parts[k : k + 2] = [parts[k] + parts[k + 1]]
    emitted.update(parts)


def _small(gpt2: Tokenizer, size: int) -> Tokenizer:
    vocab = {i: b for i, b in gpt2.model.vocab.items() if i < size}
    return Tokenizer(BPE(vocab), pre_tokenizer=gpt2.pre_tokenizer, name=f"gpt2-{size}")


def test_counts_equal_brute_force_replay_on_small_vocabulary(texts):
    tok = _small(tokenforge.get_encoding("gpt2"), 1500)
    ranks = dict(tok.model.ranks)
    sample = [t[:20000] for t in texts]
    emitted: Counter = Counter()
    inter: Counter = Counter()
    for text in sample:
        for piece in tok.pre_tokenizer.split(text):
            _brute(ranks, piece.encode("utf-8"), emitted, inter)
    report = residues(tok, sample)
    for u in report.uses.values():
        assert (u.emitted, u.intermediate) == (emitted[u.bytes], inter[u.bytes]), u
    assert sum(u.emitted for u in report.uses.values()) == sum(len(tok.encode_ordinary(t)) for t in sample)
    assert any(u.emitted == 0 and u.intermediate > 0 for u in report.uses.values())


def test_emitted_counts_equal_encoding_on_shipped_corpus(texts):
    tok = tokenforge.get_encoding("cl100k_base")
    report = residues(tok, texts)  # residues() itself raises if the replay is not the encoder
    got = Counter(i for t in texts for i in tok.encode_ordinary(t))
    assert {u.id: u.emitted for u in report.uses.values() if u.emitted} == got
    assert report.tokens == sum(got.values())
    assert report.distinct_pieces < report.pieces


def test_whole_pretoken_is_emitted_without_intermediates():
    gpt2 = tokenforge.get_encoding("gpt2")
    r = residues(gpt2, ["Copyrights", "Copyrights", "Copyright"])
    op, cop = gpt2.encode_single_token(b"op"), gpt2.encode_single_token(b"Cop")
    assert (r.uses[op].emitted, r.uses[op].intermediate) == (0, 2)  # "Copyright" is a token: no merges
    assert (r.uses[cop].emitted, r.uses[cop].intermediate) == (2, 0)
    assert r.uses[gpt2.encode_single_token(b"Copyright")].emitted == 1


def test_residue_selection_and_totals(texts):
    r = residues(tokenforge.get_encoding("gpt2"), texts)
    zero = r.residues(0.0)
    assert zero and all(u.emitted == 0 and u.intermediate > 0 and len(u.bytes) > 1 for u in zero)
    assert [u.intermediate for u in zero] == sorted((u.intermediate for u in zero), reverse=True)
    loose = r.residues(0.05)
    assert {u.id for u in zero} <= {u.id for u in loose}
    assert all(u.emitted_share <= 0.05 for u in loose)
    t = r.totals()
    assert t["emitted"] + t["only_intermediate"] + t["unseen"] == t["multi_byte_tokens"] == 50000
    assert t["residues"] == len(zero) == t["only_intermediate"]
    assert "residues" in r.format() and r.to_dict(top=3)["residues"][0]["id"] == zero[0].id
    with pytest.raises(InvalidArgumentError):
        r.residues(1.5)


def test_counts_of_duplicate_pieces_are_weighted():
    gpt2 = tokenforge.get_encoding("gpt2")
    counts = count_pieces(gpt2, "Copyrights Copyrights Copyrights")
    assert counts[b" Copyrights"] == 2 and counts[b"Copyrights"] == 1
    r = residues_from_counts(gpt2, counts)
    assert r.pieces == 3 and r.distinct_pieces == 2


def test_not_rank_bpe_is_refused():
    from tokenforge.models.wordlevel import WordLevel

    tok = Tokenizer(WordLevel({"a": 0, "[UNK]": 1}, unk_token="[UNK]"))
    with pytest.raises(InvalidArgumentError, match="byte-level BPE by rank"):
        residues(tok, "a")


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base"])
def test_prune_keeping_paths_keeps_every_emitted_token_buildable(texts, name):
    from tokenforge.analysis.explain import merge_trace

    tok = tokenforge.get_encoding(name)
    report = residues(tok, texts)
    pruned = prune_residues(tok, texts, 0.0)  # keep_paths=True
    dropped = set(tok.model.vocab) - set(pruned.model.vocab)
    assert dropped and dropped <= {u.id for u in report.residues(0.0)}
    ranks = pruned.model.ranks
    for u in report.uses.values():
        if u.emitted:
            assert merge_trace(ranks, u.bytes)[1] == [u.bytes]
    for text in texts:
        ids = pruned.encode_ordinary(text)
        assert pruned.decode(ids) == text and not dropped & set(ids)
    # every residue removed was never emitted; the corpus costs at most 0.1% more tokens
    after = residues(pruned, texts)
    assert after.tokens <= report.tokens * 1.001


def test_prune_keeps_ids_and_round_trips(texts):
    gpt2 = tokenforge.get_encoding("gpt2")
    report = residues(gpt2, texts)
    dropped = {u.id for u in report.residues(0.0)}
    pruned = prune_residues(gpt2, texts, 0.0, keep_paths=False)
    assert len(pruned) == len(gpt2) - len(dropped)
    assert dict(pruned.special_tokens) == dict(gpt2.special_tokens)
    for i, b in gpt2.model.vocab.items():
        if i not in dropped:
            assert pruned.decode_single_token_bytes(i) == b
    for text in texts + ["Copyrights\u200d👩‍👩‍👧 \x00 日本語", " " * 1000]:
        ids = pruned.encode_ordinary(text)
        assert pruned.decode(ids) == text
        assert not dropped & set(ids)
    # predicted: a pre-token whose merges never touch a removed token encodes as before
    ranks = gpt2.model.ranks
    counts = count_pieces(gpt2, texts)
    dropped_bytes = {gpt2.decode_single_token_bytes(i) for i in dropped}
    from tokenforge.analysis.explain import merge_trace

    changed = 0
    for piece in counts:
        merges, _ = merge_trace(ranks, piece)
        touched = piece not in ranks and any(m.left in dropped_bytes or m.right in dropped_bytes for m in merges)
        before = gpt2.encode_ordinary(piece.decode("utf-8"))
        after = pruned.encode_ordinary(piece.decode("utf-8"))
        if not touched:
            assert before == after, piece
        else:
            changed += before != after
    assert changed > 0
    # the new emitted counts are those of the replay on the pruned vocabulary
    after = residues(pruned, texts)
    assert after.tokens == sum(len(pruned.encode_ordinary(t)) for t in texts) > report.tokens

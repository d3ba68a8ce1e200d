"""Byte-level BPE training through the native pre-token table (``PieceCounter``): the
counts equal the Counter path's, the merges equal the pure-Python trainer's, and they do
not depend on the number of workers or the chunk size."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tokenforge
from tokenforge import _native
from tokenforge.pretokenizers import RegexSplit
from tokenforge.specials import special_regex
from tokenforge.trainers.bpe import learn_merges
from tokenforge.trainers.counting import count_files, count_text

core = _native.core("auto")
pytestmark = pytest.mark.skipif(core is None, reason="native core not built")

SPECIAL = "<|endoftext|>"


def _corpus(shared_data) -> str:
    text = (shared_data / "text" / "tinystories_valid_sample.txt").read_text(encoding="utf-8")[:150_000]
    text += "\n  indented  \n\n\nx  y\u00a0\nz \U0001f469\u200d\U0001f4bb e\u0301 <|endoftext|> \u05e9\u05dc\u05d5\u05dd\n"
    return text + (shared_data / "text" / "hongloumeng.txt").read_text(encoding="utf-8")[:40_000]


@pytest.mark.parametrize("pattern", ["gpt2", "cl100k", "o200k", "llama3", "qwen"])
def test_native_table_counts_equal_the_counter(tmp_path, shared_data, pattern):
    text = _corpus(shared_data)
    path = tmp_path / "t.txt"
    path.write_text(text, encoding="utf-8")
    pre = RegexSplit(pattern)
    whole = count_text(text, pre, special_regex([SPECIAL]))
    for workers in (1, 2):
        table = count_files([path], pre, [SPECIAL], workers=workers, chunk_bytes=4099, native_table=True)
        assert isinstance(table, core.PieceCounter)
        assert len(table) == len(whole)
        assert table.to_dict() == dict(whole), (pattern, workers)


def test_piece_counter_pack_and_merge_add_counts():
    a, b = core.PieceCounter(), core.PieceCounter()
    a.add(["the cat the hat", "x"], _native.SCANNERS["gpt2"])
    b.add(["the end \U0001f642"], _native.SCANNERS["gpt2"])
    a.merge(b.pack())
    assert a.to_dict() == {b"the": 2, b" cat": 1, b" the": 1, b" hat": 1, b"x": 1, b" end": 1, b" \xf0\x9f\x99\x82": 1}
    empty = core.PieceCounter()
    empty.merge(b"")
    assert len(empty) == 0 and not empty
    with pytest.raises(ValueError, match="pack"):
        empty.merge(b"\x05\x00\x00\x00")  # a length and no count
    with pytest.raises(ValueError, match="pack"):
        empty.merge(b"\x09\x00\x00\x00" + b"\x01" + b"\x00" * 7 + b"abc")  # fewer bytes than its length
    with pytest.raises(UnicodeEncodeError):
        empty.add(["a\ud800"], _native.SCANNERS["gpt2"])
    with pytest.raises(ValueError):
        empty.add(["a"], 99)


def test_learn_merges_from_the_native_table_equals_the_python_trainer(shared_data):
    text = _corpus(shared_data)
    counter = core.PieceCounter()
    counter.add([s for s in special_regex([SPECIAL]).split(text) if s], _native.SCANNERS["gpt2"])
    counts = counter.to_dict()
    for tie_break in ("bytes", "gpt2_unicode"):
        native = learn_merges(counter, 700, tie_break=tie_break, backend="native")
        assert native == learn_merges(counts, 700, tie_break=tie_break, backend="native")
        assert native == learn_merges(counts, 700, tie_break=tie_break, backend="python")
        assert learn_merges(counter, 50, tie_break=tie_break, backend="python") == native[:50]


@settings(max_examples=150, deadline=None)
@given(
    st.dictionaries(st.text(st.sampled_from("ab"), min_size=1, max_size=16).map(str.encode),
                    st.integers(1, 2**40), max_size=20),
    st.integers(0, 40),
)
def test_native_merge_loop_equals_python_on_runs_and_alternations(counts, n):
    # "aaaa", "abab": a merge whose new token is next to itself or to the merged pair's halves
    assert learn_merges(counts, n, backend="native") == learn_merges(counts, n, backend="python")


def test_one_and_two_workers_give_the_same_merges(tmp_path, shared_data):
    files = [shared_data / "text" / "tinystories_sample.txt", shared_data / "text" / "hongloumeng.txt"]
    merges = []
    for workers in (1, 2):
        trainer = tokenforge.BPETrainer(3000, special_tokens=[SPECIAL], workers=workers, show_progress=False)
        merges.append(trainer.train(files).model.merges)
        assert trainer.last_report is not None and trainer.last_report.merges_learned == 3000 - 257
    assert merges[0] == merges[1]
    counts = count_files(files, RegexSplit("gpt2"), [SPECIAL], workers=2)
    assert merges[0][:300] == learn_merges(counts, 300, backend="python")

"""The Ray engine on a local Ray cluster started here: the same bytes as the local
engine, and BPE training whose counting runs on Ray learns the same merges."""

from __future__ import annotations

from pathlib import Path

import pytest

import tokenforge

from _corpus import DOCS, write_delimited, write_jsonl
from _families import FAMILIES

ray = pytest.importorskip("ray")


@pytest.fixture(scope="module")
def cluster():
    # address="local": a new cluster, even where another test file runs one on this machine
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False, ignore_reinit_error=True)
    ray.data.DataContext.get_current().enable_progress_bars = False
    yield
    ray.shutdown()


def _files(d: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(d.iterdir()) if p.is_file()}


@pytest.mark.parametrize("name", ["cl100k_base", "SentencePiece BPE .model", "BERT WordPiece vocab.txt"])
def test_ray_writes_the_same_bytes_as_the_local_engine(cluster, name, tmp_path, monkeypatch):
    from tokenforge.prepare import ray_engine

    monkeypatch.setattr(ray_engine, "UNIT_BYTES", 2000)  # many byte ranges per file
    tok = tokenforge.get_encoding(name) if name in tokenforge.list_encodings() else FAMILIES[name][0](tmp_path)
    inputs = [write_jsonl(tmp_path / "a.jsonl", DOCS * 5), write_delimited(tmp_path / "b.txt", DOCS * 5)]
    (tmp_path / "c.txt").write_text(DOCS[2] * 50, encoding="utf-8")
    inputs.append(tmp_path / "c.txt")
    opts = dict(show_progress=False, shard_size="1KB", val_fraction=0.2, workers=2)
    tokenforge.prepare(inputs[:1], tok, tmp_path / "l1", **opts)
    theirs = ray.data.DataContext.get_current()
    settings = (theirs.execution_options.preserve_order, theirs.target_max_block_size)
    import logging

    data_log = logging.getLogger("ray.data")
    log_level = data_log.level
    tokenforge.prepare(inputs[:1], tok, tmp_path / "r1", engine="ray", **opts)
    assert data_log.level == log_level  # Ray Data's notices were quiet during the run only
    assert _files(tmp_path / "l1") == _files(tmp_path / "r1")
    # the run used its own copy of Ray Data's settings: the caller's are as they were
    assert ray.data.DataContext.get_current() is theirs
    assert (theirs.execution_options.preserve_order, theirs.target_max_block_size) == settings
    for split_on in ("<|endoftext|>",):
        tokenforge.prepare(inputs[1:], tok, tmp_path / "l2", split_on=split_on, **opts)
        tokenforge.prepare(inputs[1:], tok, tmp_path / "r2", split_on=split_on, engine="ray", **opts)
        assert _files(tmp_path / "l2") == _files(tmp_path / "r2")
    local = tokenforge.count(inputs[:1], tok, show_progress=False)
    on_ray = tokenforge.count(inputs[:1], tok, engine="ray", show_progress=False)
    assert local.rows == on_ray.rows


def test_ray_engine_takes_files_only(cluster, tmp_path):
    with pytest.raises(tokenforge.InvalidArgumentError, match="ray engine reads files"):
        tokenforge.prepare(iter(["a"]), "gpt2", tmp_path / "o", engine="ray", show_progress=False)


def test_bpe_training_with_ray_counting_learns_the_same_merges(cluster, tmp_path, shared_data):
    files = [shared_data / "text" / "tinystories_sample.txt", shared_data / "text" / "botchan.txt"]
    kw = dict(special_tokens=["<|endoftext|>"], show_progress=False)
    from tokenforge.trainers import counting

    local = tokenforge.train_bpe(files, 1000, **kw)
    old = counting.CHUNK_BYTES
    try:
        counting.CHUNK_BYTES = 64 << 10
        on_ray = tokenforge.train_bpe(files, 1000, engine="ray", **kw)
    finally:
        counting.CHUNK_BYTES = old
    assert on_ray.rank_model().merges == local.rank_model().merges


def test_an_input_error_inside_an_actor_is_the_same_error_as_locally(cluster, tmp_path, monkeypatch):
    from tokenforge.prepare import ray_engine

    monkeypatch.setattr(ray_engine, "UNIT_BYTES", 200)  # the bad line is in a later byte range
    p = tmp_path / "bad.jsonl"
    p.write_text("".join('{"text": "line %d of the corpus"}\n' % k for k in range(40)) + '{"body": "x"}\n',
                 encoding="utf-8")
    with pytest.raises(tokenforge.FileFormatError, match=r"bad.jsonl, line 41: no field 'text'") as info:
        tokenforge.prepare(p, "gpt2", tmp_path / "o", engine="ray", show_progress=False)
    # the message is about the input only: not Ray Data's note on its retry settings
    assert "retr" not in str(info.value) and "Failed to" not in str(info.value)
    assert not (tmp_path / "o").exists()

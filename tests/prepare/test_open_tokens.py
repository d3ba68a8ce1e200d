"""``open_tokens`` reads what ``prepare`` wrote: the stream, documents, training windows;
a changed or truncated shard is an error, never a silent wrong read."""

from __future__ import annotations

import json

import numpy as np
import pytest

import tokenforge
from tokenforge.prepare import ShardedIds

from _corpus import DOCS, nonempty, write_jsonl


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    d = tmp_path_factory.mktemp("prep")
    src = write_jsonl(d / "c.jsonl", DOCS * 4)
    tokenforge.prepare(src, "gpt2", d / "one", show_progress=False)
    tokenforge.prepare(src, "gpt2", d / "many", shard_size="500B", show_progress=False)
    return d


def test_many_shards_read_as_one_stream(prepared):
    one = tokenforge.open_tokens(prepared / "one")
    many = tokenforge.open_tokens(prepared / "many")
    assert isinstance(one.ids, np.memmap) and isinstance(many.ids, ShardedIds)
    full = np.asarray(one.ids)
    assert len(many.ids) == len(full) and np.array_equal(np.asarray(many.ids), full)
    for a, b in [(0, 10), (240, 260), (249, 251), (0, len(full)), (len(full) - 3, len(full) + 5), (5, 5)]:
        assert np.array_equal(many.ids[a:b], full[a:b])
    assert np.array_equal(many.ids[10:600:7], full[10:600:7])
    assert many.ids[-1] == full[-1] and many.ids[250] == full[250]
    idx = np.array([[0, 249, 250], [251, 999, len(full) - 1]])
    assert np.array_equal(many.ids[idx], full[idx])
    with pytest.raises(IndexError):
        many.ids[len(full)]


def test_documents_and_offsets(prepared):
    toks = tokenforge.open_tokens(prepared / "many")
    enc = tokenforge.get_encoding("gpt2")
    assert len(toks) == 4 * len(nonempty())
    for k, d in enumerate(nonempty()):
        assert toks.doc(k).tolist() == enc.encode(d, disallowed_special=()) + [enc.eot_token]
    assert toks.doc(-1).tolist() == toks.doc(len(toks) - 1).tolist()
    assert toks.doc_offsets[0] == 0 and toks.doc_offsets[-1] == toks.n_tokens
    with pytest.raises(IndexError):
        toks.doc(len(toks))


def test_batch_samples_windows_and_next_token_targets(prepared):
    for d in ("one", "many"):
        toks = tokenforge.open_tokens(prepared / d)
        x, y = toks.batch(8, 32, rng=1)
        assert x.shape == y.shape == (8, 32) and x.dtype == np.int64
        assert np.array_equal(x[:, 1:], y[:, :-1])
        full = np.asarray(toks.ids)
        starts = np.random.default_rng(1).integers(0, len(full) - 32, size=8)
        assert np.array_equal(x, np.stack([full[s : s + 32] for s in starts]))
        x2, _ = toks.batch(8, 32, rng=np.random.default_rng(1))
        assert np.array_equal(x, x2)
    with pytest.raises(tokenforge.InvalidArgumentError, match="fewer than"):
        toks.batch(1, 10**9)
    with pytest.raises(tokenforge.InvalidArgumentError):
        toks.batch(0, 4)


def test_changed_or_truncated_shards_are_reported(prepared, tmp_path):
    import shutil

    d = tmp_path / "copy"
    shutil.copytree(prepared / "many", d)
    shard = d / "train-00001.bin"
    data = bytearray(shard.read_bytes())
    data[0] ^= 1
    shard.write_bytes(bytes(data))
    tokenforge.open_tokens(d)  # sizes still match: only verify reads the bytes
    with pytest.raises(tokenforge.FileFormatError, match="train-00001.bin.*sha256 differs"):
        tokenforge.open_tokens(d, verify=True)
    shard.write_bytes(bytes(data[:-2]))
    with pytest.raises(tokenforge.FileFormatError, match="train-00001.bin.*truncated"):
        tokenforge.open_tokens(d)
    shard.unlink()
    with pytest.raises(tokenforge.TokenizerFileNotFoundError, match="train-00001.bin: shard listed"):
        tokenforge.open_tokens(d)
    with pytest.raises(tokenforge.InvalidArgumentError, match="no split 'val'"):
        tokenforge.open_tokens(prepared / "one", "val")
    with pytest.raises(tokenforge.TokenizerFileNotFoundError, match="index.json: no such file"):
        tokenforge.open_tokens(tmp_path)
    (tmp_path / "index.json").write_text(json.dumps({"format": "other"}))
    with pytest.raises(tokenforge.FileFormatError, match="not an index written by tokenforge"):
        tokenforge.open_tokens(tmp_path)


def _copy(prepared, tmp_path, name="many"):
    import shutil

    d = tmp_path / "copy"
    shutil.copytree(prepared / name, d)
    return d, json.loads((d / "index.json").read_text())


@pytest.mark.parametrize("bad", ["../outside/train-00000.bin", "ABSOLUTE", "sub/../../outside/train-00000.bin",
                                 "..\\outside\\train-00000.bin", "C:/outside/train-00000.bin"])
def test_a_shard_name_that_leaves_the_folder_is_refused(prepared, tmp_path, bad):
    d, index = _copy(prepared, tmp_path, "one")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "train-00000.bin").write_bytes((d / "train-00000.bin").read_bytes())  # a readable file is there
    name = str(outside / "train-00000.bin") if bad == "ABSOLUTE" else bad
    index["splits"]["train"]["shards"][0]["file"] = name
    (d / "index.json").write_text(json.dumps(index))
    with pytest.raises(tokenforge.FileFormatError, match=r"index.json: file name .* does not stay inside"):
        tokenforge.open_tokens(d)


def test_document_offsets_outside_the_folder_are_refused(prepared, tmp_path):
    d, index = _copy(prepared, tmp_path, "one")
    (tmp_path / "train.docs.npy").write_bytes((d / "train.docs.npy").read_bytes())
    index["splits"]["train"]["doc_offsets"] = "../train.docs.npy"
    (d / "index.json").write_text(json.dumps(index))
    with pytest.raises(tokenforge.FileFormatError, match=r"'\.\./train.docs.npy' does not stay inside"):
        tokenforge.open_tokens(d)


def test_verify_checks_the_document_offsets(prepared, tmp_path):
    d, index = _copy(prepared, tmp_path)
    assert index["format_version"] == 2 and len(index["splits"]["train"]["doc_offsets_sha256"]) == 64
    offsets = np.load(d / "train.docs.npy")
    moved = offsets.copy()
    moved[3] += 1  # same length, same total: only a hash (or verify) sees it
    np.save(d / "train.docs.npy", moved)
    assert tokenforge.open_tokens(d).doc(2).tolist() != tokenforge.open_tokens(prepared / "many").doc(2).tolist()
    with pytest.raises(tokenforge.FileFormatError, match=r"train.docs.npy: sha256 differs"):
        tokenforge.open_tokens(d, verify=True)
    # an index of format 1 has no hash of the offsets: verify still checks that they rise
    del index["splits"]["train"]["doc_offsets_sha256"]
    index["format_version"] = 1
    (d / "index.json").write_text(json.dumps(index))
    tokenforge.open_tokens(d, verify=True)
    moved[3], moved[4] = offsets[4], offsets[3]
    np.save(d / "train.docs.npy", moved)
    with pytest.raises(tokenforge.FileFormatError, match=r"train.docs.npy: the document offsets do not rise"):
        tokenforge.open_tokens(d, verify=True)


def test_an_index_of_format_1_is_still_read(prepared, tmp_path):
    d, index = _copy(prepared, tmp_path)
    for info in index["splits"].values():
        del info["doc_offsets_sha256"]
    index["format_version"] = 1
    (d / "index.json").write_text(json.dumps(index))
    toks = tokenforge.open_tokens(d, verify=True)
    assert toks.doc(1).tolist() == tokenforge.open_tokens(prepared / "many").doc(1).tolist()
    index["format_version"] = 3
    (d / "index.json").write_text(json.dumps(index))
    with pytest.raises(tokenforge.FileFormatError, match="format_version 3 is newer"):
        tokenforge.open_tokens(d)


def test_memmap_reads_a_shard_as_nanogpt_does(prepared):
    index = json.loads((prepared / "one" / "index.json").read_text())
    shard = prepared / "one" / index["splits"]["train"]["shards"][0]["file"]
    arr = np.memmap(shard, dtype=np.uint16, mode="r")
    assert np.array_equal(arr, np.asarray(tokenforge.open_tokens(prepared / "one").ids))

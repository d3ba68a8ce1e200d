"""``prepare(..., formats=[...])`` writes the arrays training stacks read: every format is
read back, with the real library where it installs (megatron-core's ``IndexedDataset``,
datatrove's ``DatatroveFileDataset``) and always with a reader written from the format's
documented layout, and holds ``encode(doc)`` + the separators for every document of each
split, for a ``uint16`` (gpt2) and a ``uint32`` (cl100k_base) vocabulary."""

from __future__ import annotations

import gzip
import pickle
import struct
from pathlib import Path

import numpy as np
import pytest

import tokenforge
from tokenforge.prepare import formats as _formats
from tokenforge.prepare import resolve_separators
from tokenforge.prepare.sources import is_val, val_threshold

from _corpus import DOCS, write_jsonl

ALL = ["tokenforge", "megatron", "llmc", "nanogpt", "datatrove"]
CORPUS = DOCS + [f"document {k}: {'words and more words ' * (k % 7)}🙂 {k * 7919}" for k in range(40)]
VAL = 0.3
SHARD_TOKENS = 64


def expected_splits(tok, docs, seps, fraction=VAL):
    """Per split, the ids of each non-empty document: encode(doc) with the separators around it."""
    out: dict[str, list[list[int]]] = {"train": [], "val": []}
    threshold = val_threshold(fraction)
    for d in docs:
        if d:
            ids = list(seps.bos) + tok.encode(d, disallowed_special=(), add_special_tokens=False) + list(seps.eot)
            out["val" if is_val(d, threshold) else "train"].append(ids)
    return out


def flat(docs: list[list[int]]) -> list[int]:
    return [t for d in docs for t in d]


# --- readers written from each project's documented layout ------------------------------------


def read_megatron(prefix: Path) -> tuple[np.dtype, list[list[int]], list[int]]:
    """Megatron-Core ``megatron/core/datasets/indexed_dataset.py`` (``_IndexReader``): header,
    version, dtype code, sequence and document counts, lengths, pointers, document indices."""
    idx = (prefix.parent / (prefix.name + ".idx")).read_bytes()
    assert idx[:9] == b"MMIDIDX\x00\x00"
    version, code, n_seq, n_doc = struct.unpack_from("<QBQQ", idx, 9)
    assert version == 1
    dtype = np.dtype({8: "<u2", 4: "<i4"}[code])
    pos = 9 + 8 + 1 + 8 + 8
    lengths = np.frombuffer(idx, "<i4", n_seq, pos)
    pointers = np.frombuffer(idx, "<i8", n_seq, pos + 4 * n_seq)
    doc_idx = np.frombuffer(idx, "<i8", n_doc, pos + 12 * n_seq)
    assert pos + 12 * n_seq + 8 * n_doc == len(idx)
    data = np.fromfile(prefix.parent / (prefix.name + ".bin"), dtype=dtype)
    seqs = [data[p // dtype.itemsize : p // dtype.itemsize + n].tolist() for p, n in zip(pointers, lengths)]
    return dtype, seqs, doc_idx.tolist()


def llmc_load_data_shard(path: Path) -> np.ndarray:
    """The reader of llm.c (``train_gpt2.py``, ``_load_data_shard``) and modded-nanoGPT: a
    256-int32 header (magic 20240520 + version 1 for uint16 tokens; llm.c's Llama 3 branch:
    magic 20240801 + version 7 for uint32), the token count, then the tokens."""
    with open(path, "rb") as f:
        header = np.frombuffer(f.read(256 * 4), dtype=np.int32)
        magic, version, ntok = int(header[0]), int(header[1]), int(header[2])
        assert (magic, version) in ((20240520, 1), (20240801, 7)), "magic number mismatch in the data .bin file"
        tokens = np.frombuffer(f.read(), dtype=np.uint16 if magic == 20240520 else np.uint32)
    assert len(tokens) == ntok, "number of tokens read does not match header"
    return tokens


def read_datatrove(folder: Path, dtype) -> list[list[int]]:
    """datatrove's ``TokenizedFile`` layout: ``.ds`` tokens, ``.ds.index`` uint64 document ends."""
    docs: list[list[int]] = []
    for ds in sorted(folder.glob("*.ds")):
        tokens = np.fromfile(ds, dtype=dtype)
        ends = np.fromfile(ds.parent / (ds.name + ".index"), dtype="<u8").astype(np.int64)
        assert len(ends) and ends[-1] == len(tokens)
        starts = np.concatenate([[0], ends[:-1]])
        docs += [tokens[a:b].tolist() for a, b in zip(starts, ends)]
    return docs


# --- the tests ---------------------------------------------------------------------------------


@pytest.fixture(params=["gpt2", "cl100k_base"])
def prepared(request, tmp_path_factory, monkeypatch):
    monkeypatch.setattr(_formats, "CHUNK_TOKENS", 37)  # many chunks per file: the streaming paths run
    tok = tokenforge.get_encoding(request.param)
    seps = resolve_separators(tok)
    d = tmp_path_factory.mktemp("formats")
    src = write_jsonl(d / "c.jsonl", CORPUS)
    itemsize = 2 if tok.max_token_value <= 0xFFFF else 4
    index = tokenforge.prepare(src, tok, d / "out", workers=2, val_fraction=VAL, formats=ALL,
                               shard_size=SHARD_TOKENS * itemsize, show_progress=False)
    want = expected_splits(tok, CORPUS, seps)
    assert want["train"] and want["val"]
    return tok, seps, d / "out", index, want


def test_tokenforge_format_is_unchanged(prepared):
    tok, seps, out, index, want = prepared
    assert index["formats"] == ALL
    for split in ("train", "val"):
        toks = tokenforge.open_tokens(out, split)
        assert [toks.doc(k).tolist() for k in range(len(toks))] == want[split]


def test_megatron_documented_layout(prepared):
    tok, seps, out, index, want = prepared
    for split in ("train", "val"):
        dtype, seqs, doc_idx = read_megatron(out / "megatron" / f"{split}_text_document")
        assert dtype == (np.dtype("<u2") if tok.max_token_value <= 0xFFFF else np.dtype("<i4"))
        assert seqs == want[split]
        assert doc_idx == list(range(len(want[split]) + 1))


def test_megatron_core_indexed_dataset_reads_it(prepared):
    pytest.importorskip("torch")
    indexed = pytest.importorskip("megatron.core.datasets.indexed_dataset")
    tok, seps, out, index, want = prepared
    for split in ("train", "val"):
        ds = indexed.IndexedDataset(str(out / "megatron" / f"{split}_text_document"))
        assert len(ds) == len(want[split])
        assert [ds[k].tolist() for k in range(len(ds))] == want[split]
        assert ds.document_indices.tolist() == list(range(len(want[split]) + 1))
        assert ds.sequence_lengths.tolist() == [len(d) for d in want[split]]


def test_llmc_shards_hold_eot_before_each_document(prepared):
    tok, seps, out, index, want = prepared
    assert seps.bos == () and len(seps.eot) == 1
    for split in ("train", "val"):
        files = sorted((out / "llmc").glob(f"{split}_*.bin"))
        shards = [llmc_load_data_shard(f) for f in files]
        assert all(len(s) == SHARD_TOKENS for s in shards[:-1]) and 0 < len(shards[-1]) <= SHARD_TOKENS
        stream = np.concatenate(shards).tolist()
        # as llm.c's fineweb.py writes: the end-of-text token, then the document, for each one
        assert stream == [t for d in want[split] for t in list(seps.eot) + d[: -len(seps.eot)]]
        magic = 20240520 if tok.max_token_value <= 0xFFFF else 20240801
        assert all(int(np.fromfile(f, dtype="<i4", count=1)[0]) == magic for f in files)


def test_nanogpt_bins_are_flat_memmaps(prepared):
    tok, seps, out, index, want = prepared
    dtype = np.uint16 if tok.max_token_value <= 0xFFFF else np.uint32
    for split in ("train", "val"):
        # nanoGPT's train.py get_batch: np.memmap(os.path.join(data_dir, 'train.bin'), dtype=np.uint16, mode='r')
        data = np.memmap(out / "nanogpt" / f"{split}.bin", dtype=dtype, mode="r")
        assert data.tolist() == flat(want[split])
    with open(out / "nanogpt" / "meta.pkl", "rb") as f:
        assert pickle.load(f)["vocab_size"] == tok.n_vocab


def test_datatrove_documented_layout(prepared):
    tok, seps, out, index, want = prepared
    dtype = "<u2" if tok.max_token_value <= 0xFFFF else "<u4"
    for split in ("train", "val"):
        folder = out / "datatrove" / split
        assert read_datatrove(folder, dtype) == want[split]
        files = sorted(folder.glob("*.ds"))
        # each file ends at the first document end at or past the shard size
        sizes = [f.stat().st_size // np.dtype(dtype).itemsize for f in files]
        lasts = [np.fromfile(f.parent / (f.name + ".index"), dtype="<u8") for f in files]
        for n, ends in zip(sizes[:-1], lasts[:-1]):
            assert n >= SHARD_TOKENS and (len(ends) < 2 or int(ends[-2]) < SHARD_TOKENS)
        meta = (files[0].parent / (files[0].name + ".metadata")).read_text().splitlines()
        assert meta[0].endswith(f"|{np.dtype(dtype).itemsize}") and int(meta[1]) == sizes[0]


def test_datatrove_files_equal_what_datatrove_writes(prepared, tmp_path):
    """datatrove's own writer (``TokenizedFile``, no torch needed), given the same documents,
    writes the same .ds, .ds.index and .ds.metadata bytes."""
    tokenizer_mod = pytest.importorskip("datatrove.pipeline.tokens.tokenizer")
    tok, seps, out, index, want = prepared
    token_size = 2 if tok.max_token_value <= 0xFFFF else 4
    for split in ("train", "val"):
        ours = sorted((out / "datatrove" / split).glob("*.ds"))
        docs = iter(want[split])
        for ds in ours:
            n_docs = len(np.fromfile(ds.parent / (ds.name + ".index"), dtype="<u8"))
            theirs = tokenizer_mod.TokenizedFile(str(tmp_path / split), ds.name, tokenizer_name_or_path=tok.name,
                                                 save_final_metadata=True, token_size=token_size)
            for _ in range(n_docs):
                theirs.write(next(docs), None)
            theirs.close()
            for suffix in ("", ".index", ".metadata"):
                assert (ds.parent / (ds.name + suffix)).read_bytes() == (tmp_path / split / (ds.name + suffix)).read_bytes()
        assert next(docs, None) is None


def test_datatrove_file_dataset_reads_it(prepared):
    pytest.importorskip("torch")
    dataset = pytest.importorskip("datatrove.utils.dataset")
    tok, seps, out, index, want = prepared
    token_size = 2 if tok.max_token_value <= 0xFFFF else 4
    for split in ("train", "val"):
        docs: list[list[int]] = []
        for ds_file in sorted((out / "datatrove" / split).glob("*.ds")):
            n = ds_file.stat().st_size // token_size
            # one window of the whole file; positions restart at each document end read from .ds.index
            ds = dataset.DatatroveFileDataset(str(ds_file), seq_len=n - 1, token_size=token_size, return_positions=True)
            assert len(ds) == 1
            item = ds[0]
            ids, pos = item["input_ids"].tolist(), item["positions"].tolist()
            starts = [k for k, p in enumerate(pos) if p == 0] + [len(ids)]
            docs += [ids[a:b] for a, b in zip(starts, starts[1:])]
        assert docs == want[split]
    folder = dataset.DatatroveFolderDataset(str(out / "datatrove" / "train"), seq_len=15, token_size=token_size)
    assert len(folder) > 0 and folder[0]["input_ids"].tolist() == flat(want["train"])[:16]


def test_other_formats_alone_leave_no_tokenforge_shards(tmp_path):
    enc = tokenforge.get_encoding("gpt2")
    index = tokenforge.prepare(iter(["a b", "c"]), enc, tmp_path / "o", formats="nanogpt", show_progress=False)
    assert index["formats"] == ["nanogpt"] and sorted(index["exports"]) == ["nanogpt"]
    assert not list((tmp_path / "o").glob("*.bin")) and not list((tmp_path / "o").glob("*.npy"))
    assert not (tmp_path / "o" / ".partial").exists()
    assert np.fromfile(tmp_path / "o" / "nanogpt" / "train.bin", dtype="<u2").tolist() == [64, 275, 50256, 66, 50256]
    with pytest.raises(tokenforge.FileFormatError, match="nanogpt format"):
        tokenforge.open_tokens(tmp_path / "o")
    with pytest.raises(tokenforge.PrepareError, match="without the tokenforge shards"):
        tokenforge.prepare(iter(["a b", "c"]), enc, tmp_path / "o", formats="megatron", resume=True, show_progress=False)
    tokenforge.prepare(iter(["x"]), enc, tmp_path / "o", overwrite=True, show_progress=False)
    assert not (tmp_path / "o" / "nanogpt").exists()


def test_llmc_keeps_a_stream_that_starts_with_its_bos(tmp_path):
    enc = tokenforge.get_encoding("gpt2")
    tokenforge.prepare(iter(["a b", "c"]), enc, tmp_path / "o", bos="<|endoftext|>", eot="none", formats="llmc",
                       show_progress=False)
    assert llmc_load_data_shard(tmp_path / "o" / "llmc" / "train_000000.bin").tolist() == [50256, 64, 275, 50256, 66]


def _tree(d: Path) -> dict[str, bytes]:
    return {p.relative_to(d).as_posix(): p.read_bytes() for p in sorted(d.rglob("*"))
            if p.is_file() and p.name != "index.json"}


def test_resume_of_a_complete_run_adds_the_formats_it_lacks(tmp_path):
    src = write_jsonl(tmp_path / "c.jsonl", CORPUS)
    kw = dict(val_fraction=VAL, shard_size=128, show_progress=False)
    tokenforge.prepare(src, "gpt2", tmp_path / "all", formats=ALL, **kw)
    tokenforge.prepare(src, "gpt2", tmp_path / "o", **kw)
    index = tokenforge.prepare(src, "gpt2", tmp_path / "o", formats=["megatron", "llmc,nanogpt", "datatrove"],
                               resume=True, **kw)
    assert index["formats"] == ALL and sorted(index["exports"]) == sorted(ALL[1:])
    assert _tree(tmp_path / "o") == _tree(tmp_path / "all")


def test_a_run_interrupted_while_writing_a_format_resumes_to_the_same_bytes(tmp_path, monkeypatch):
    src = write_jsonl(tmp_path / "c.jsonl", CORPUS)
    kw = dict(val_fraction=VAL, shard_size=128, show_progress=False, formats=ALL)
    tokenforge.prepare(src, "gpt2", tmp_path / "ref", **kw)

    def interrupted(folder, s, ctx):
        (folder / "half-written").write_bytes(b"x")
        raise KeyboardInterrupt

    monkeypatch.setitem(_formats._WRITERS, "datatrove", interrupted)
    with pytest.raises(KeyboardInterrupt):
        tokenforge.prepare(src, "gpt2", tmp_path / "o", **kw)
    out = tmp_path / "o"
    assert not (out / "index.json").exists() and (out / ".partial").exists()
    assert not (out / "datatrove").exists() and not (out / ".datatrove.tmp").exists()
    monkeypatch.undo()
    tokenforge.prepare(src, "gpt2", out, resume=True, **kw)
    assert _tree(out) == _tree(tmp_path / "ref")


def test_unknown_formats_are_refused():
    with pytest.raises(tokenforge.InvalidArgumentError, match="unknown format.*'parquet'.*choose from tokenforge"):
        tokenforge.prepare(iter(["a"]), "gpt2", "unused", formats="megatron,parquet")
    assert _formats.parse_formats(["nanogpt", "megatron, llmc"]) == ("megatron", "llmc", "nanogpt")
    assert _formats.parse_formats(None) == ("tokenforge",)


def test_gzipped_text_files_are_read(tmp_path):
    docs = ["first document\nwith two lines", "second — ünïcode 🙂", "third"]
    path = tmp_path / "c.txt.gz"
    with gzip.open(path, "wt", encoding="utf-8", newline="") as f:
        f.write("\n\n".join(docs))
    enc = tokenforge.get_encoding("gpt2")
    tokenforge.prepare(path, enc, tmp_path / "o", split_on="\n\n", formats="nanogpt", show_progress=False)
    got = np.fromfile(tmp_path / "o" / "nanogpt" / "train.bin", dtype="<u2").tolist()
    assert got == [t for d in docs for t in enc.encode(d) + [enc.eot_token]]

"""The arrays ``prepare`` writes hold exactly ``encode`` of each document plus the
tokenizer's separators, for every family and every input format, the same bytes
for any number of workers."""

from __future__ import annotations

import filecmp
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tokenforge
from tokenforge.prepare import resolve_separators
from tokenforge.prepare import sources as _sources

from _corpus import DOCS, expected, nonempty, write_delimited, write_gz, write_jsonl
from _families import FAMILIES


def _files(d: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(d.iterdir()) if p.is_file()}


@pytest.fixture(scope="module", params=list(FAMILIES))
def family(request, tmp_path_factory):
    build, _plan = FAMILIES[request.param]
    return build(tmp_path_factory.mktemp("family"))


def test_arrays_equal_encode_of_each_document_plus_separators_for_every_family(family, tmp_path):
    tok = family
    src = write_jsonl(tmp_path / "c.jsonl")
    index = tokenforge.prepare(src, tok, tmp_path / "out", workers=1, show_progress=False)
    seps = resolve_separators(tok)
    toks = tokenforge.open_tokens(tmp_path / "out")
    assert toks.ids.tolist() == expected(tok, DOCS, seps)
    assert len(toks) == len(nonempty()) == index["splits"]["train"]["documents"]
    for k, d in enumerate(nonempty()):
        assert toks.doc(k).tolist() == list(seps.bos) + tok.encode(d, disallowed_special=(), add_special_tokens=False) + list(seps.eot)
    if tok.post_processor is not None:  # the separators are the tokenizer's own template
        assert toks.doc(0).tolist() == tok.encode(DOCS[0], disallowed_special=())
    dtype = np.uint16 if tok.max_token_value <= 0xFFFF else np.uint32
    assert toks.ids.dtype == dtype and index["dtype"] == np.dtype(dtype).name
    assert index["inputs"][0]["empty_documents_skipped"] == 1


def test_one_and_two_workers_write_the_same_bytes_for_every_family(family, tmp_path):
    src = write_jsonl(tmp_path / "c.jsonl", DOCS * 3)
    tokenforge.prepare(src, family, tmp_path / "w1", workers=1, show_progress=False, shard_size=256, val_fraction=0.3)
    tokenforge.prepare(src, family, tmp_path / "w2", workers=2, show_progress=False, shard_size=256, val_fraction=0.3)
    assert _files(tmp_path / "w1") == _files(tmp_path / "w2")


def test_separators_follow_each_tokenizers_convention(tmp_path):
    gpt = tokenforge.get_encoding("cl100k_base")
    s = resolve_separators(gpt)
    assert s.bos == () and s.eot == (gpt.eot_token,)
    spm = FAMILIES["SentencePiece Unigram .model"][0](tmp_path)
    s = resolve_separators(spm)
    assert s.bos_tokens == ("<s>",) and s.eot_tokens == ("</s>",)
    bert = FAMILIES["BERT WordPiece vocab.txt"][0](tmp_path)
    s = resolve_separators(bert)
    assert s.bos_tokens == ("[CLS]",) and s.eot_tokens == ("[SEP]",)
    llama_like = tokenforge.Tokenizer(
        spm.model, normalizer=spm.normalizer, pre_tokenizer=spm.pre_tokenizer, decoder=spm.decoder,
        added_tokens=spm.added_tokens,
        post_processor=tokenforge.postprocessors.TemplateProcessing("<s> $A", "<s> $A <s> $B:1", [("<s>", spm.special_tokens["<s>"])]),
    )
    s = resolve_separators(llama_like)  # the template's <s> first, then the end-of-text token it does not add
    assert s.bos_tokens == ("<s>",) and s.eot_tokens == ("</s>",)
    assert resolve_separators(gpt, bos="none", eot="none") == resolve_separators(gpt, bos=None, eot=None)
    assert resolve_separators(gpt, eot="<|fim_prefix|>").eot == (gpt.special_tokens["<|fim_prefix|>"],)
    with pytest.raises(tokenforge.SpecialTokenError, match="not a token"):
        resolve_separators(gpt, eot="<|nope|>")


def test_explicit_separators_and_none(tmp_path):
    enc = tokenforge.get_encoding("gpt2")
    tokenforge.prepare(iter(["a b", "c"]), enc, tmp_path / "o", bos="<|endoftext|>", eot="none", show_progress=False)
    assert tokenforge.open_tokens(tmp_path / "o").ids.tolist() == [50256, 64, 275, 50256, 66]


@pytest.mark.parametrize("fmt", ["jsonl", "gz", "zst", "parquet", "txt-delimited", "dir", "glob", "dataset", "iterable"])
def test_every_input_format_gives_the_same_tokens(fmt, tmp_path):
    enc = tokenforge.get_encoding("cl100k_base")
    docs = [d for d in DOCS if "<|endoftext|>" not in d and "\ud800" not in d]
    if fmt == "jsonl":
        inputs = write_jsonl(tmp_path / "c.jsonl", docs)
    elif fmt == "gz":
        inputs = write_gz(tmp_path / "c.jsonl.gz", docs)
    elif fmt == "zst":
        zstandard = pytest.importorskip("zstandard")
        raw = "".join(json.dumps({"text": d}) + "\n" for d in docs).encode()
        (tmp_path / "c.jsonl.zst").write_bytes(zstandard.ZstdCompressor().compress(raw))
        inputs = tmp_path / "c.jsonl.zst"
    elif fmt == "parquet":
        pa = pytest.importorskip("pyarrow")
        import pyarrow.parquet as pq

        pq.write_table(pa.table({"text": docs}), tmp_path / "c.parquet", row_group_size=4)
        inputs = tmp_path / "c.parquet"
    elif fmt == "txt-delimited":
        inputs = write_delimited(tmp_path / "c.txt", docs)
    elif fmt in ("dir", "glob"):
        d = tmp_path / "docs"
        d.mkdir()
        for k, doc in enumerate(docs):
            (d / f"{k:03d}.txt").write_text(doc, encoding="utf-8", newline="")
        (d / ".hidden").write_text("not read")
        inputs = d if fmt == "dir" else str(d / "*.txt")
    elif fmt == "dataset":
        datasets = pytest.importorskip("datasets")
        inputs = datasets.Dataset.from_dict({"text": docs})
    else:
        inputs = iter(docs)
    kwargs = {"split_on": "<|endoftext|>"} if fmt == "txt-delimited" else {}
    tokenforge.prepare(inputs, enc, tmp_path / "out", show_progress=False, **kwargs)
    assert tokenforge.open_tokens(tmp_path / "out").ids.tolist() == expected(enc, docs, resolve_separators(enc))


def test_stdin_is_read_as_one_document(tmp_path):
    code = ("import tokenforge; tokenforge.prepare(['-'], 'gpt2', r'%s', show_progress=False)" % (tmp_path / "o"))
    subprocess.run([sys.executable, "-c", code], input="hello world\n".encode(), check=True)
    assert tokenforge.open_tokens(tmp_path / "o").ids.tolist() == [31373, 995, 198, 50256]


@pytest.mark.parametrize("name", ["cl100k_base", "SentencePiece Unigram .model", "BERT WordPiece vocab.txt"])
def test_long_documents_are_read_in_segments_with_the_same_ids(name, tmp_path, monkeypatch, varied_text):
    monkeypatch.setattr(_sources, "SEGMENT_CHARS", 1000)
    monkeypatch.setattr(_sources, "BLOCK_BYTES", 777)
    monkeypatch.setattr(_sources, "CHUNK_CHARS", 1500)
    tok = tokenforge.get_encoding(name) if name in tokenforge.list_encodings() else FAMILIES[name][0](tmp_path)
    text = varied_text[:20000]
    (tmp_path / "whole.txt").write_text(text, encoding="utf-8", newline="")
    (tmp_path / "delim.txt").write_text(text + "\n@@@\n" + text[:3000] + "\n@@@\n", encoding="utf-8", newline="")
    seps = resolve_separators(tok)
    tokenforge.prepare(tmp_path / "whole.txt", tok, tmp_path / "a", show_progress=False)
    assert tokenforge.open_tokens(tmp_path / "a").ids.tolist() == expected(tok, [text], seps)
    tokenforge.prepare(tmp_path / "delim.txt", tok, tmp_path / "b", split_on="\n@@@\n", show_progress=False)
    assert tokenforge.open_tokens(tmp_path / "b").ids.tolist() == expected(tok, [text, text[:3000]], seps)


def test_validation_split_is_chosen_by_document_hash(tmp_path):
    enc = tokenforge.get_encoding("gpt2")
    docs = [f"document number {k} " * (k % 7 + 1) for k in range(400)]
    index = tokenforge.prepare(iter(docs), enc, tmp_path / "a", val_fraction=0.25, show_progress=False)
    tokenforge.prepare(iter(reversed(docs)), enc, tmp_path / "b", val_fraction=0.25, show_progress=False)
    val = tokenforge.open_tokens(tmp_path / "a", "val")
    val_b = tokenforge.open_tokens(tmp_path / "b", "val")
    decoded = {enc.decode(val.doc(k).tolist()[:-1]) for k in range(len(val))}
    assert decoded == {enc.decode(val_b.doc(k).tolist()[:-1]) for k in range(len(val_b))}
    assert 60 < len(val) < 140 and index["splits"]["train"]["documents"] + len(val) == 400


def test_output_does_not_depend_on_the_hash_seed(tmp_path):
    src = write_jsonl(tmp_path / "c.jsonl", DOCS * 2)
    for seed in ("0", "12345"):
        code = ("import tokenforge; tokenforge.prepare([r'%s'], 'cl100k_base', r'%s', val_fraction=0.5, "
                "show_progress=False)" % (src, tmp_path / seed))
        subprocess.run([sys.executable, "-c", code], check=True, env={**__import__("os").environ, "PYTHONHASHSEED": seed})
    assert _files(tmp_path / "0") == _files(tmp_path / "12345")
    assert filecmp.cmp(tmp_path / "0" / "index.json", tmp_path / "12345" / "index.json", shallow=False)


def test_index_describes_the_output(tmp_path):
    src = write_jsonl(tmp_path / "c.jsonl")
    index = tokenforge.prepare(src, "gpt2", tmp_path / "o", shard_size="200B", show_progress=False)
    assert json.loads((tmp_path / "o" / "index.json").read_text()) == index
    import hashlib

    assert index["inputs"][0]["sha256"] == hashlib.sha256(src.read_bytes()).hexdigest()
    assert index["inputs"][0]["size"] == src.stat().st_size
    assert index["tokenizer"]["name"] == "gpt2" and len(index["tokenizer"]["sha256"]) == 64
    shards = index["splits"]["train"]["shards"]
    assert len(shards) > 1 and all(s["tokens"] == 100 for s in shards[:-1])
    for s in shards:
        data = (tmp_path / "o" / s["file"]).read_bytes()
        assert hashlib.sha256(data).hexdigest() == s["sha256"] and len(data) == 2 * s["tokens"]
    stream = np.concatenate([np.fromfile(tmp_path / "o" / s["file"], dtype="<u2") for s in shards])
    offsets = np.load(tmp_path / "o" / "train.docs.npy")
    assert offsets[-1] == len(stream) == index["splits"]["train"]["tokens"] == index["inputs"][0]["tokens"]
    assert np.all(stream[offsets[1:] - 1] == 50256)


def test_count_equals_encode_lengths(tmp_path):
    enc = tokenforge.get_encoding("o200k_base")
    a = write_jsonl(tmp_path / "a.jsonl")
    b = tmp_path / "b.txt"
    b.write_text(DOCS[2] * 10, encoding="utf-8")
    report = tokenforge.count([a, b], enc, show_progress=False)
    assert report.rows[0].tokens == sum(len(enc.encode(d, disallowed_special=())) for d in DOCS)
    assert report.rows[1].tokens == len(enc.encode(DOCS[2] * 10)) and report.rows[1].documents == 1
    assert report.rows[0].bytes == sum(len(d.encode("utf-8", "surrogatepass")) for d in DOCS)
    assert report.total.tokens == report.rows[0].tokens + report.rows[1].tokens
    assert report.to_dict()["total"]["documents"] == len(nonempty()) + 1


from hypothesis import given, strategies as st  # noqa: E402


@given(
    items=st.lists(st.tuples(st.integers(0, 5), st.integers(0, 3)), max_size=30),
    bos=st.lists(st.integers(0, 9), max_size=2),
    eot=st.lists(st.integers(0, 9), max_size=3),
)
def test_assemble_puts_separators_exactly_where_documents_start_and_end(items, bos, eot):
    from tokenforge.prepare.encoder import Encoded
    from tokenforge.prepare.job import Separators, assemble

    lengths = np.array([n for n, _ in items], dtype=np.int64)
    flags = np.array([f for _, f in items], dtype=np.uint8)
    ids = np.arange(100, 100 + int(lengths.sum()), dtype=np.uint32)
    enc = Encoded(0, np.zeros(len(items), np.int32), flags, np.zeros(len(items), bool), lengths, ids, None, 0, {})
    out, out_len = assemble(enc, Separators(tuple(bos), tuple(eot)))
    want: list[int] = []
    pos = 0
    for n, f in items:
        want += (bos if f & 1 else []) + ids[pos : pos + n].tolist() + (eot if f & 2 else [])
        pos += n
    assert out.tolist() == want
    assert out_len.tolist() == [(len(bos) if f & 1 else 0) + n + (len(eot) if f & 2 else 0) for n, f in items]

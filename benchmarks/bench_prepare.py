"""Corpus → training token arrays, end to end: ``tokenforge prepare`` against the
ways people do it today, side by side in one run.

The job measured is the one before LM training: read a corpus of documents,
encode every document, put the separator tokens in, and leave one flat array of
token ids (uint16 when the vocabulary fits, else uint32) on disk. Each run is a
separate process tree, timed wall-clock from start to exit (interpreter start,
imports, reading, encoding, writing), with the RSS of the whole tree (workers
included) summed every 0.2 s with psutil.

Corpus (built once in ``--data-dir``/<size>MB/, then reused): every file
of ``/work/shared/data/bench`` and ``/work/shared/data/text`` (not ``parallel/``),
CRLF turned into LF, cut into paragraphs at blank lines (a paragraph over 4 KB
is cut at line ends), paragraphs grouped into documents of ~1–4 KB (target size
drawn per document), the documents shuffled with a fixed seed so that any prefix
mixes English, Chinese, Japanese, dictionary and RST text, then the whole set
repeated until ``--size-mb`` (10^6 bytes) is reached. Strings that are special
tokens of one of the tokenizers (``<|endoftext|>``, ``<s>``, ``[MASK]``, ...) are
taken out of the text, so that no tool can read them as control tokens. The
same documents, in the same order, are written as

* ``corpus.txt``: documents joined with ``"\\n<|endoftext|>\\n"`` (TinyStories style);
* ``corpus.jsonl``: one ``{"text": ...}`` per line;
* ``jsonl_shards_N/``: ``corpus.jsonl`` cut into N contiguous files (only for
  datatrove, which parallelises over files: one file would use one worker).

Runs (``--workers N``, default 2, the number of cores):

* **nanoGPT way** (``nanogpt``): as nanoGPT's ``data/openwebtext/prepare.py``,
  with a ``multiprocessing.Pool`` of N workers in place of ``datasets.map``: the
  parent reads the jsonl lines and hands them out in chunks, workers
  ``json.loads`` and encode every document (tiktoken ``encode_ordinary`` for
  cl100k_base, ``SentencePieceProcessor.encode`` for a ``.model``), append the
  separator, and the ids are spilled to a temporary file on disk (nanoGPT keeps
  them in the datasets Arrow cache); the total length is then known, and the ids
  are copied into an ``np.memmap`` of that length in 1024 batches, as nanoGPT
  does. Not run for BERT (no tiktoken/sentencepiece form).
* **HF** (``hf``): ``datasets.load_dataset("json", data_files=corpus.jsonl)``
  (offline; its cache in ``DATA_DIR/hf_cache``, emptied before every run, so the
  Arrow build is timed, and after it), ``.map(batched=True, num_proc=N)`` with a
  ``tokenizers`` fast tokenizer (``encode_batch``), then nanoGPT's memmap loop.
* **datatrove** (``datatrove``): ``LocalPipelineExecutor`` with tasks = workers
  = N over ``JsonlReader(jsonl_shards_N)`` → ``DocumentTokenizer`` (no shuffling,
  the separator template put in the ``tokenizer.json`` it is given). Its
  per-task ``.ds`` files, concatenated in rank order, are the token array.
* **tokenforge**: the CLI ``tokenforge prepare corpus.jsonl --text-field text``
  with 1 and N workers, the same on ``corpus.txt --split-on '\\n<|endoftext|>\\n'``
  (the CLI reads the escapes; splitting on ``<|endoftext|>`` alone would leave a
  newline at both ends of every document, see ``--txt-split-on``), and
  ``--engine ray`` with 1 and N workers (Ray actors).

HF tokenizers runs (``hf``, ``datatrove``) get ``RAYON_NUM_THREADS=1``, so that
N workers use N cores, as the other tools do.

Tokenizer families (``--family``):

* ``cl100k``: tokenforge ``cl100k_base``; tiktoken built from the rank file in
  ``vocab/tiktoken`` with tokenforge's pattern; an HF ``tokenizer.json`` converted
  from the same rank file by ``transformers``' ``TikTokenConverter`` (with the
  pattern as tiktoken first published it: HF's regex engine reads the possessive
  quantifiers and ``$`` of the current form differently). Separator:
  ``ids <|endoftext|>`` per document (nanoGPT's).
* ``spm``: ``sentencepiece/mistral_v1_tokenizer.model`` (SentencePiece BPE,
  Llama-2 style). The HF ``tokenizer.json`` is built here from the ``.model``
  (vocab, merges ordered by piece score, ``▁`` prefix, and sentencepiece's
  whitespace word split): ``transformers``' own conversion gives other ids than
  sentencepiece on runs of spaces. Separators: ``<s> ids </s>`` per document.
* ``bert``: ``hf/bert-base-uncased_wordpiece_tokenizer.json``. Separator:
  ``[CLS] ids [SEP]`` per document (its own template).

tokenforge runs with its default separators (``--bos auto --eot auto``), which
for these three files are the ones above, so the comparison also checks the
defaults; ``--explicit-separators`` passes them as ``--bos``/``--eot`` instead.

Correctness: the token array of every run is compared, value by value, with
the first peer run of the family; a difference prints ``!!! TOKEN MISMATCH`` with
the first differing position, the document it falls in and the tokens around it.
A tokenforge mismatch makes the exit status 1 and leaves its output in
``DATA_DIR/runs/`` for inspection; a peer's is a note.

Output: per family, a table (tool, input, workers, wall s, MB/s of document text,
tokens/s, peak RSS of the tree and the same less file-backed pages, throughput ÷
the fastest peer's), then the ratios
tokenforge N workers ÷ 1 worker and ray ÷ local, and a plot (``--plot``) of
throughput and RSS over time for each run. Throughput over time comes from each
peer's own progress (bytes it has encoded) and, for tokenforge and datatrove,
from the growth of the token files they write (converted to input bytes at the
run's overall bytes/token).

    python benchmarks/bench_prepare.py                      # 1 GB corpus, cl100k (~17 min)
    python benchmarks/bench_prepare.py --quick              # 64 MB corpus, cl100k (~2 min)
    python benchmarks/bench_prepare.py --quick --family all # (~6 min)
    python benchmarks/bench_prepare.py --size-mb 256 --tools nanogpt,tokenforge --plot /tmp/prepare.png

Needs: numpy, psutil, tiktoken, sentencepiece, tokenizers, datasets,
transformers (cl100k conversion), matplotlib (plot); datatrove and orjson are
optional. Everything runs offline. The corpus (a 1 GB corpus takes ~3 GB with its
.txt, .jsonl and shards) and the runs' outputs go to ``--data-dir``; outputs are
deleted once checked.
"""

from __future__ import annotations

import argparse
import base64
import glob
import json
import os
import random
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import (  # noqa: E402
    DATA_DIR,
    _dist_version,
    add_backend_arg,
    apply_backend,
    machine_info,
    print_machine,
    print_table,
)

EOT = "<|endoftext|>"
TXT_SEPARATOR = "\n" + EOT + "\n"
CORPUS_VERSION = 1
SAMPLE_EVERY = 0.2  # seconds between RSS / progress samples
WRITE_BATCHES = 1024  # nanoGPT's memmap write loop
POOL_CHUNK_BYTES = 1 << 20  # jsonl bytes per Pool task
# Special-token strings of the three families: taken out of the corpus text.
SPECIAL_STRINGS = (EOT, "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>", "<|endofprompt|>",
                   "<s>", "</s>", "<unk>", "[CLS]", "[SEP]", "[PAD]", "[MASK]", "[UNK]")

VOCAB = os.path.join(DATA_DIR, "vocab")
FAMILIES = {
    "cl100k": {
        "title": "cl100k_base",
        "tokenforge": "cl100k_base",
        "tiktoken_file": os.path.join(VOCAB, "tiktoken", "cl100k_base.tiktoken"),
        "bos": None, "eot": EOT,
        "pool": "tiktoken",
    },
    "spm": {
        "title": "SentencePiece BPE (mistral_v1_tokenizer.model)",
        "tokenforge": os.path.join(VOCAB, "sentencepiece", "mistral_v1_tokenizer.model"),
        "model_file": os.path.join(VOCAB, "sentencepiece", "mistral_v1_tokenizer.model"),
        "bos": "<s>", "eot": "</s>",
        "pool": "sentencepiece",
    },
    "bert": {
        "title": "WordPiece (bert-base-uncased tokenizer.json)",
        "tokenforge": os.path.join(VOCAB, "hf", "bert-base-uncased_wordpiece_tokenizer.json"),
        "hf_json": os.path.join(VOCAB, "hf", "bert-base-uncased_wordpiece_tokenizer.json"),
        "bos": "[CLS]", "eot": "[SEP]",
        "pool": None,
    },
}
ALL_TOOLS = ("nanogpt", "hf", "datatrove", "tokenforge", "tokenforge-txt", "tokenforge-ray")
PEERS = ("nanogpt", "hf", "datatrove")


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# =========================================================================== corpus
def _source_files() -> list[str]:
    files = sorted(glob.glob(os.path.join(DATA_DIR, "bench", "*")))
    files += sorted(p for p in glob.glob(os.path.join(DATA_DIR, "text", "*")) if os.path.isfile(p))
    return [p for p in files if os.path.isfile(p)]


def _clean(text: str) -> str:
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = text.replace(EOT, "\n\n")  # TinyStories samples carry their own separators: a document break
    for s in SPECIAL_STRINGS[1:]:
        text = text.replace(s, "")
    return text


def _paragraphs(text: str, max_bytes: int = 4096):
    for para in re.split(r"\n[ \t]*\n+", text):
        para = para.strip("\n")
        if not para.strip():
            continue
        if len(para.encode("utf-8")) <= max_bytes:
            yield para
            continue
        piece, size = [], 0  # cut a long paragraph at line ends
        for line in para.split("\n"):
            n = len(line.encode("utf-8")) + 1
            if piece and size + n > max_bytes:
                yield "\n".join(piece)
                piece, size = [], 0
            piece.append(line)
            size += n
        if piece and "".join(piece).strip():
            yield "\n".join(piece)


def unique_documents(seed: int = 0) -> list[str]:
    """The source files as shuffled documents of ~1-4 KB (paragraphs kept whole)."""
    rng = random.Random(seed)
    docs: list[str] = []
    for path in _source_files():
        with open(path, encoding="utf-8", errors="replace", newline="") as f:
            text = _clean(f.read())
        cur: list[str] = []
        size = 0
        target = rng.randint(1024, 4096)
        for para in _paragraphs(text):
            n = len(para.encode("utf-8")) + 2
            if cur and size + n > 4096:
                docs.append("\n\n".join(cur))
                cur, size, target = [], 0, rng.randint(1024, 4096)
            cur.append(para)
            size += n
            if size >= target:
                docs.append("\n\n".join(cur))
                cur, size, target = [], 0, rng.randint(1024, 4096)
        if cur:
            docs.append("\n\n".join(cur))
    rng.shuffle(docs)
    return docs


def build_corpus(data_dir: str, size_mb: float) -> dict:
    """Write corpus.txt and corpus.jsonl (reused when present with the right size)."""
    os.makedirs(data_dir, exist_ok=True)
    meta_path = os.path.join(data_dir, "corpus.meta.json")
    txt = os.path.join(data_dir, "corpus.txt")
    jsonl = os.path.join(data_dir, "corpus.jsonl")
    target = int(size_mb * 1e6)
    if os.path.exists(meta_path):
        with open(meta_path, encoding="utf-8") as f:
            meta = json.load(f)
        if (meta.get("version") == CORPUS_VERSION and meta.get("target_bytes") == target
                and os.path.exists(txt) and os.path.getsize(txt) == meta["txt_bytes"]
                and os.path.exists(jsonl) and os.path.getsize(jsonl) == meta["jsonl_bytes"]):
            meta["reused"] = True
            return meta
    log(f"building the corpus ({size_mb:g} MB) in {data_dir} ...")
    t0 = time.perf_counter()
    docs = unique_documents()
    sizes = [len(d.encode("utf-8")) for d in docs]
    unique_bytes = sum(sizes)
    sep = len(TXT_SEPARATOR.encode("utf-8"))
    n_docs = text_bytes = txt_bytes = 0
    for name in (txt, jsonl):
        if os.path.exists(name):
            os.remove(name)
    with open(txt + ".tmp", "w", encoding="utf-8", newline="") as ft, \
            open(jsonl + ".tmp", "w", encoding="utf-8", newline="") as fj:
        while txt_bytes < target:
            for doc, size in zip(docs, sizes):
                if n_docs:
                    ft.write(TXT_SEPARATOR)
                    txt_bytes += sep
                ft.write(doc)
                fj.write(json.dumps({"text": doc}, ensure_ascii=False) + "\n")
                n_docs += 1
                text_bytes += size
                txt_bytes += size
                if txt_bytes >= target:
                    break
    os.replace(txt + ".tmp", txt)
    os.replace(jsonl + ".tmp", jsonl)
    meta = {
        "version": CORPUS_VERSION,
        "target_bytes": target,
        "sources": _source_files(),
        "unique_docs": len(docs),
        "unique_bytes": unique_bytes,
        "docs": n_docs,
        "text_bytes": text_bytes,
        "txt_bytes": os.path.getsize(txt),
        "jsonl_bytes": os.path.getsize(jsonl),
        "repeats": text_bytes / unique_bytes,
        "build_seconds": time.perf_counter() - t0,
    }
    with open(meta_path, "w", encoding="utf-8") as f:
        json.dump(meta, f, indent=1)
    meta["reused"] = False
    return meta


def jsonl_shards(data_dir: str, jsonl: str, n: int, n_docs: int) -> str:
    """corpus.jsonl cut into n contiguous files (datatrove gives one file to one task)."""
    folder = os.path.join(data_dir, f"jsonl_shards_{n}")
    stamp = os.path.join(folder, "source.json")
    want = {"size": os.path.getsize(jsonl), "mtime": os.path.getmtime(jsonl)}
    if os.path.exists(stamp):
        with open(stamp, encoding="utf-8") as f:
            if json.load(f) == want:
                return folder
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    per = -(-n_docs // n)
    with open(jsonl, "rb") as src:
        for i in range(n):
            with open(os.path.join(folder, f"part-{i:05d}.jsonl"), "wb") as dst:
                for _ in range(per):
                    line = src.readline()
                    if not line:
                        break
                    dst.write(line)
    with open(stamp, "w", encoding="utf-8") as f:
        json.dump(want, f)
    return folder


# =========================================================================== tokenizers
# cl100k_base's split pattern as tiktoken first published it (and as HF tokenizer.json files of
# cl100k models carry it): the same splits as tokenforge's form, without possessive quantifiers
# and ``$``, which HF's regex engine reads differently.
CL100K_HF_PATTERN = (r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|"""
                     r""" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+""")


def build_hf_json(family: str, fam: dict, tok_dir: str) -> str:
    """Path of a tokenizer.json for the HF peers."""
    if fam.get("hf_json"):
        return fam["hf_json"]
    os.makedirs(tok_dir, exist_ok=True)
    path = os.path.join(tok_dir, f"{family}.tokenizer.json")  # rebuilt every run: a few seconds
    from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers

    if family == "cl100k":
        import tokenforge
        from transformers.convert_slow_tokenizer import TikTokenConverter

        enc = tokenforge.get_encoding("cl100k_base")
        tok = TikTokenConverter(vocab_file=fam["tiktoken_file"], pattern=CL100K_HF_PATTERN).converted()
        d = json.loads(tok.to_str())
        # cl100k has no token 100256: a placeholder keeps <|endoftext|> at 100257.
        for i in range(len(d["model"]["vocab"]), min(enc.special_tokens.values())):
            d["model"]["vocab"][f"<|reserved_{i}|>"] = i
        d["added_tokens"] = [{"id": i, "content": s, "single_word": False, "lstrip": False, "rstrip": False,
                              "normalized": False, "special": True} for s, i in sorted(enc.special_tokens.items(),
                                                                                       key=lambda kv: kv[1])]
        tok = Tokenizer.from_str(json.dumps(d))
        assert tok.token_to_id(EOT) == enc.special_tokens[EOT]
    elif family == "spm":
        import sentencepiece as spm

        sp = spm.SentencePieceProcessor(model_file=fam["model_file"])
        vocab = {sp.id_to_piece(i): i for i in range(sp.get_piece_size())}
        merges = []
        for piece, pid in vocab.items():
            if sp.is_control(pid) or sp.is_unknown(pid) or sp.is_byte(pid) or len(piece) < 2:
                continue
            for k in range(1, len(piece)):
                left, right = piece[:k], piece[k:]
                if left in vocab and right in vocab:
                    merges.append((-sp.get_score(pid), pid, vocab[left], vocab[right], left, right))
        merges.sort()
        tok = Tokenizer(models.BPE(vocab=vocab, merges=[(m[4], m[5]) for m in merges], unk_token="<unk>",
                                   fuse_unk=True, byte_fallback=True))
        tok.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
        # sentencepiece's word split (allow_whitespace_only_pieces): a word starts at a space after a non-space
        tok.pre_tokenizer = pre_tokenizers.Split(Regex("▁+[^▁]*|[^▁]+"), behavior="isolated")
        tok.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(),
                                         decoders.Strip(" ", 1, 0)])
        tok.add_special_tokens([AddedToken(s, special=True, normalized=False) for s in ("<unk>", "<s>", "</s>")])
    else:  # pragma: no cover
        raise ValueError(family)
    tok.save(path + ".tmp")
    os.replace(path + ".tmp", path)
    return path


def datatrove_json(family: str, hf_json: str, bos_eot: tuple, tok_dir: str) -> str:
    """The HF tokenizer.json with the family's separators as its post-processor."""
    from tokenizers import Tokenizer
    from tokenizers.processors import TemplateProcessing

    os.makedirs(tok_dir, exist_ok=True)
    path = os.path.join(tok_dir, f"{family}.datatrove.tokenizer.json")
    tok = Tokenizer.from_file(hf_json)
    (bos, bos_id), (eot, eot_id) = bos_eot
    single = ([bos] if bos else []) + ["$A"] + ([eot] if eot else [])
    specials = [(s, i) for s, i in ((bos, bos_id), (eot, eot_id)) if s]
    tok.post_processor = TemplateProcessing(single=single, special_tokens=specials)
    tok.save(path)
    return path


def resolve_family(family: str, data_dir: str) -> dict:
    """Everything the runs of one family need: ids of the separators, dtype, tokenizer files."""
    import tokenforge

    fam = dict(FAMILIES[family], name=family)
    tf_tok = tokenforge.load(fam["tokenforge"]) if os.path.exists(fam["tokenforge"]) \
        else tokenforge.get_encoding(fam["tokenforge"])
    tok_dir = os.path.join(data_dir, "tokenizers")
    fam["hf_json"] = build_hf_json(family, fam, tok_dir)
    from tokenizers import Tokenizer

    hf = Tokenizer.from_file(fam["hf_json"])
    ids = {}
    for key in ("bos", "eot"):
        s = fam[key]
        if s is None:
            ids[key] = None
            continue
        a = tf_tok.special_tokens.get(s) if hasattr(tf_tok, "special_tokens") else None
        b = hf.token_to_id(s)
        if a is not None and b is not None and a != b:
            raise SystemExit(f"{family}: {s} is {a} in tokenforge and {b} in the HF tokenizer")
        ids[key] = a if a is not None else b
    fam["bos_id"], fam["eot_id"] = ids["bos"], ids["eot"]
    n_vocab = max(len(tf_tok), hf.get_vocab_size(with_added_tokens=True))
    fam["dtype"] = "uint16" if n_vocab <= 1 << 16 else "uint32"
    fam["datatrove_json"] = datatrove_json(family, fam["hf_json"], ((fam["bos"], fam["bos_id"]),
                                                                    (fam["eot"], fam["eot_id"])), tok_dir)
    if family == "cl100k":
        fam["pattern"] = tf_tok.pattern
        fam["specials"] = dict(tf_tok.special_tokens)
    fam["_tokenforge"] = tf_tok
    return fam


# =========================================================================== child side
class Progress:
    """Bytes and tokens done by this process, in DIR/<pid> (read by the parent's sampler)."""

    def __init__(self, folder: str | None) -> None:
        self.folder = folder
        self.pid = None
        self.nbytes = self.ntokens = 0
        self.last = 0.0

    def add(self, nbytes: int, ntokens: int) -> None:
        if self.folder is None:
            return
        if self.pid != os.getpid():  # a forked worker starts from zero
            self.pid, self.nbytes, self.ntokens, self.last = os.getpid(), 0, 0, 0.0
        self.nbytes += nbytes
        self.ntokens += ntokens
        now = time.monotonic()
        if now - self.last >= 0.1:
            self.flush()
            self.last = now

    def flush(self) -> None:
        if self.folder is None or self.pid is None:
            return
        tmp = os.path.join(self.folder, f".{self.pid}")
        with open(tmp, "w") as f:
            f.write(f"{self.nbytes} {self.ntokens}")
        os.replace(tmp, os.path.join(self.folder, str(self.pid)))


_PROGRESS = Progress(None)
_ENC = None  # the pool encoder, built before the fork so every worker inherits it
_SEP = (None, None)
_DTYPE = "uint32"


def _encode_lines(lines: list[bytes]):
    """Pool worker: nanoGPT's process() over a chunk of jsonl lines."""
    import numpy as np

    bos, eot = _SEP
    out: list[int] = []
    nbytes = 0
    tiktoken_like = hasattr(_ENC, "encode_ordinary")
    for line in lines:
        text = json.loads(line)["text"]
        nbytes += len(line)
        ids = _ENC.encode_ordinary(text) if tiktoken_like else _ENC.encode(text)
        if bos is not None:
            out.append(bos)
        out.extend(ids)
        if eot is not None:
            out.append(eot)
    _PROGRESS.add(nbytes, len(out))
    return np.array(out, dtype=_DTYPE), nbytes


def _jsonl_chunks(path: str):
    chunk: list[bytes] = []
    size = 0
    with open(path, "rb") as f:
        for line in f:
            chunk.append(line)
            size += len(line)
            if size >= POOL_CHUNK_BYTES:
                yield chunk
                chunk, size = [], 0
    if chunk:
        yield chunk


def _memmap_write(path: str, dtype: str, length: int, get_batch, n_batches: int) -> None:
    """nanoGPT's write loop: one memmap of the final length, filled batch by batch."""
    import numpy as np

    arr = np.memmap(path, dtype=dtype, mode="w+", shape=(max(length, 1),))
    idx = 0
    for i in range(n_batches):
        batch = get_batch(i)
        arr[idx: idx + len(batch)] = batch
        idx += len(batch)
    arr.flush()
    assert idx == length, (idx, length)


def child_nanogpt(spec: dict) -> dict:
    import multiprocessing as mp

    import numpy as np

    global _ENC, _SEP, _DTYPE, _PROGRESS
    _SEP = (spec["bos_id"], spec["eot_id"])
    _DTYPE = spec["dtype"]
    _PROGRESS = Progress(spec["progress_dir"])
    if spec["pool"] == "tiktoken":
        import tiktoken

        ranks = {}
        with open(spec["tiktoken_file"], "rb") as f:
            for line in f:
                if line.strip():
                    tok, rank = line.split()
                    ranks[base64.b64decode(tok)] = int(rank)
        _ENC = tiktoken.Encoding(name="cl100k_base-local", pat_str=spec["pattern"], mergeable_ranks=ranks,
                                 special_tokens=spec["specials"])
    else:
        import sentencepiece as spm

        _ENC = spm.SentencePieceProcessor(model_file=spec["model_file"])
    t0 = time.perf_counter()
    spill = os.path.join(spec["out_dir"], "ids.spill")
    total = 0
    with mp.get_context("fork").Pool(spec["workers"]) as pool, open(spill, "wb") as f:
        for arr, nbytes in pool.imap(_encode_lines, _jsonl_chunks(spec["jsonl"])):
            f.write(arr.tobytes())
            total += len(arr)
    t1 = time.perf_counter()
    src = np.memmap(spill, dtype=spec["dtype"], mode="r") if total else np.zeros(0, spec["dtype"])
    n_batches = min(WRITE_BATCHES, max(total, 1))
    bounds = np.linspace(0, total, n_batches + 1).astype(np.int64)
    out = os.path.join(spec["out_dir"], "train.bin")
    _memmap_write(out, spec["dtype"], total, lambda i: src[bounds[i]:bounds[i + 1]], n_batches)
    os.remove(spill)
    return {"files": [out], "dtype": spec["dtype"], "tokens": total,
            "phases": {"encode": t1 - t0, "write": time.perf_counter() - t1}}


def child_hf(spec: dict) -> dict:
    import numpy as np
    from datasets import disable_progress_bars, load_dataset
    from tokenizers import Tokenizer

    disable_progress_bars()
    t0 = time.perf_counter()
    ds = load_dataset("json", data_files=spec["jsonl"], split="train", cache_dir=spec["cache_dir"])
    t1 = time.perf_counter()
    tok = Tokenizer.from_file(spec["hf_json"])
    bos, eot = spec["bos_id"], spec["eot_id"]
    head = [bos] if bos is not None else []
    tail = [eot] if eot is not None else []
    progress = Progress(spec["progress_dir"])

    def process(batch):
        encs = tok.encode_batch(batch["text"], add_special_tokens=False)
        ids = [head + e.ids + tail for e in encs]
        lens = [len(x) for x in ids]
        progress.add(sum(len(t.encode("utf-8")) for t in batch["text"]), sum(lens))
        return {"ids": ids, "len": lens}

    tokenized = ds.map(process, batched=True, num_proc=spec["workers"] if spec["workers"] > 1 else None,
                       remove_columns=["text"])
    t2 = time.perf_counter()
    total = int(np.sum(tokenized["len"], dtype=np.uint64))
    n_batches = min(WRITE_BATCHES, len(tokenized))
    out = os.path.join(spec["out_dir"], "train.bin")

    def get_batch(i):
        batch = tokenized.shard(num_shards=n_batches, index=i, contiguous=True).with_format("numpy")
        return np.concatenate(batch["ids"])

    _memmap_write(out, spec["dtype"], total, get_batch, n_batches)
    return {"files": [out], "dtype": spec["dtype"], "tokens": total,
            "phases": {"load": t1 - t0, "map": t2 - t1, "write": time.perf_counter() - t2}}


def child_datatrove(spec: dict) -> dict:
    from datatrove.executor import LocalPipelineExecutor
    from datatrove.pipeline.readers import JsonlReader
    from datatrove.pipeline.tokens import DocumentTokenizer

    n = spec["workers"]
    out = spec["out_dir"]
    executor = LocalPipelineExecutor(
        pipeline=[
            JsonlReader(spec["shards"], glob_pattern="*.jsonl", text_key="text"),
            DocumentTokenizer(output_folder=os.path.join(out, "tokens"), tokenizer_name_or_path=spec["hf_json"],
                              eos_token=None, shuffle_documents=False, save_final_metadata=False),
        ],
        tasks=n, workers=n, logging_dir=os.path.join(out, "logs"), skip_completed=False,
    )
    executor.run()
    files = sorted(glob.glob(os.path.join(out, "tokens", "*.ds")))
    import numpy as np

    total = sum(os.path.getsize(p) for p in files) // np.dtype(spec["dtype"]).itemsize
    return {"files": files, "dtype": spec["dtype"], "tokens": int(total)}


CHILDREN = {"nanogpt": child_nanogpt, "hf": child_hf, "datatrove": child_datatrove}


def run_child(spec_json: str) -> None:
    spec = json.loads(spec_json)
    result = CHILDREN[spec["tool"]](spec)
    with open(spec["result"], "w", encoding="utf-8") as f:
        json.dump(result, f)


# =========================================================================== parent side
def tree_rss(root) -> tuple[int, int]:
    """(RSS, RSS less its file-backed and shared pages) summed over root and all its descendants."""
    import psutil

    try:
        procs = [root] + root.children(recursive=True)
    except psutil.Error:
        return 0, 0
    rss = anon = 0
    for p in procs:
        try:
            m = p.memory_info()
        except psutil.Error:
            continue
        rss += m.rss
        anon += m.rss - getattr(m, "shared", 0)
    return rss, anon


def progress_sum(folder: str) -> tuple[int, int]:
    b = t = 0
    for p in glob.glob(os.path.join(folder, "[0-9]*")):
        try:
            with open(p) as f:
                x, y = f.read().split()
            b, t = b + int(x), t + int(y)
        except (OSError, ValueError):
            pass
    return b, t


def allocated_bytes(folder: str, suffixes: tuple[str, ...] | None) -> int:
    """Bytes actually allocated to the token files under folder (sparse/preallocated files count what is written)."""
    total = 0
    for dirpath, _, files in os.walk(folder):
        for fn in files:
            if suffixes and not fn.endswith(suffixes):
                continue
            try:
                st = os.stat(os.path.join(dirpath, fn))
            except OSError:
                continue
            total += min(st.st_size, st.st_blocks * 512)
    return total


def run_monitored(cmd: list[str], env: dict, run_dir: str, progress_dir: str | None = None,
                  growth: tuple[str, tuple | None, int] | None = None) -> dict:
    """Run cmd, sampling the RSS of its process tree and its progress every SAMPLE_EVERY seconds."""
    import psutil

    out_f = open(os.path.join(run_dir, "stdout.txt"), "wb")
    err_f = open(os.path.join(run_dir, "stderr.txt"), "wb")
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=out_f, stderr=err_f, stdin=subprocess.DEVNULL)
    try:
        root = psutil.Process(proc.pid)
    except psutil.Error:
        root = None
    samples = []  # (seconds, tokens done or None, rss bytes, anonymous rss bytes)
    peak = peak_anon = 0
    while proc.poll() is None:
        rss, anon = tree_rss(root) if root is not None else (0, 0)
        tokens = None
        if progress_dir:
            tokens = progress_sum(progress_dir)[1]
        elif growth:
            folder, suffixes, itemsize = growth
            tokens = allocated_bytes(folder, suffixes) // itemsize
        now = time.perf_counter() - t0
        samples.append((now, tokens, rss, anon))
        peak, peak_anon = max(peak, rss), max(peak_anon, anon)
        time.sleep(max(0.0, SAMPLE_EVERY - (time.perf_counter() - t0 - now)))
    rc = proc.wait()
    wall = time.perf_counter() - t0
    out_f.close()
    err_f.close()
    return {"rc": rc, "wall": wall, "peak_rss": peak, "peak_anon": peak_anon, "samples": samples, "cmd": cmd}


def tail(path: str, n: int = 15) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return "".join(f.readlines()[-n:])
    except OSError:
        return ""


def tokenforge_cli() -> list[str]:
    exe = os.path.join(os.path.dirname(sys.executable), "tokenforge")
    return [exe] if os.path.exists(exe) else [sys.executable, "-m", "tokenforge.cli"]


def tokenforge_ready() -> str | None:
    """None when ``tokenforge prepare --help`` works, else why not."""
    try:
        r = subprocess.run(tokenforge_cli() + ["prepare", "--help"], capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.SubprocessError) as exc:
        return str(exc)
    if r.returncode != 0:
        return (r.stderr.strip().splitlines() or ["exit status %d" % r.returncode])[-1]
    return None


def tokenforge_outputs(out_dir: str) -> tuple[list[str], str | None, dict | None]:
    """The train shards ``tokenforge prepare`` wrote (from its ``index.json``), their dtype, and the index."""
    path = os.path.join(out_dir, "index.json")
    if not os.path.exists(path):
        return [], None, None
    with open(path, encoding="utf-8") as f:
        index = json.load(f)
    train = index.get("splits", {}).get("train", {})
    files = [os.path.join(out_dir, s["file"]) for s in train.get("shards", [])]
    return files, index.get("dtype"), index


def load_array(path: str, dtype: str):
    import numpy as np

    if path.endswith(".npy"):
        return np.load(path, mmap_mode="r")
    return np.memmap(path, dtype=dtype, mode="r") if os.path.getsize(path) else np.zeros(0, dtype)


class TokenStream:
    """Several token files read as one array (for comparison without loading them)."""

    def __init__(self, files: list[str], dtype: str) -> None:
        self.arrays = [load_array(p, dtype) for p in files]
        self.length = sum(len(a) for a in self.arrays)

    def chunks(self, size: int = 1 << 24):
        for a in self.arrays:
            for i in range(0, len(a), size):
                yield a[i: i + size]

    def window(self, start: int, stop: int) -> list[int]:
        out: list[int] = []
        off = 0
        for a in self.arrays:
            lo, hi = max(start - off, 0), min(stop - off, len(a))
            if lo < hi:
                out.extend(int(x) for x in a[lo:hi])
            off += len(a)
        return out

    def count_before(self, token_id: int, index: int) -> int:
        n = off = 0
        for a in self.arrays:
            hi = min(index - off, len(a))
            if hi > 0:
                n += int((a[:hi] == token_id).sum())
            off += len(a)
        return n


def first_difference(ref: TokenStream, other: TokenStream) -> int | None:
    import numpy as np

    def rechunk(stream, size=1 << 22):
        buf = np.zeros(0, np.int64)
        for c in stream.chunks():
            buf = np.concatenate([buf, c.astype(np.int64)])
            while len(buf) >= size:
                yield buf[:size]
                buf = buf[size:]
        if len(buf):
            yield buf

    pos = 0
    for a, b in zip(rechunk(ref), rechunk(other)):
        n = min(len(a), len(b))
        diff = np.flatnonzero(a[:n] != b[:n])
        if len(diff):
            return pos + int(diff[0])
        pos += n
    return None if ref.length == other.length else min(ref.length, other.length)


def mismatch_text(label: str, ref_label: str, ref: TokenStream, other: TokenStream, i: int, fam: dict) -> str:
    tok = fam["_tokenforge"]
    marker = fam["eot_id"] if fam["eot_id"] is not None else fam["bos_id"]
    doc = ref.count_before(marker, i) if marker is not None else None
    lo, hi = max(0, i - 6), i + 6
    a, b = ref.window(lo, hi), other.window(lo, hi)

    def show(ids):
        try:
            return repr(tok.decode(ids))
        except Exception as exc:  # diagnostic only
            return f"<decode failed: {exc}>"

    return (f"!!! TOKEN MISMATCH [{label} vs {ref_label}]: {other.length:,} vs {ref.length:,} tokens; first difference at "
            f"index {i:,}" + (f" (document #{doc:,} of the corpus order)" if doc is not None else "") + "\n"
            f"    {ref_label:>12} ids[{lo}:{hi}] = {a}  {show(a)}\n"
            f"    {label:>12} ids[{lo}:{hi}] = {b}  {show(b)}")


def plan_runs(family: str, fam: dict, tools: list[str], workers: int, tf_ok: bool) -> list[dict]:
    runs = []
    if "nanogpt" in tools and fam["pool"]:
        runs.append({"tool": "nanogpt", "label": f"nanoGPT ({fam['pool']} + Pool)", "input": "jsonl",
                     "workers": workers, "peer": True})
    if "hf" in tools:
        runs.append({"tool": "hf", "label": "HF datasets + tokenizers", "input": "jsonl", "workers": workers,
                     "peer": True})
    if "datatrove" in tools:
        runs.append({"tool": "datatrove", "label": "datatrove", "input": f"jsonl x{workers}", "workers": workers,
                     "peer": True})
    if tf_ok:
        ws = sorted({1, workers})
        if "tokenforge" in tools:
            runs += [{"tool": "tokenforge", "label": "tokenforge", "input": "jsonl", "workers": w, "engine": "local"}
                     for w in ws]
        if "tokenforge-txt" in tools:
            runs += [{"tool": "tokenforge", "label": "tokenforge", "input": "txt", "workers": w, "engine": "local"}
                     for w in ws]
        if "tokenforge-ray" in tools:
            runs += [{"tool": "tokenforge", "label": "tokenforge ray", "input": "jsonl", "workers": w, "engine": "ray"}
                     for w in ws]
    for r in runs:
        r.setdefault("peer", False)
        r["key"] = f"{r['label']}|{r['input']}|{r['workers']}"
    return runs


def tokenforge_cmd(run: dict, fam: dict, corpus: dict, out_dir: str, args) -> list[str]:
    cmd = tokenforge_cli() + ["prepare"]
    if run["input"] == "txt":
        cmd += [corpus["txt"], "--split-on", args.txt_split_on]
    else:
        cmd += [corpus["jsonl"], "--text-field", "text"]
    cmd += ["-t", fam["tokenforge"], "-o", out_dir, "--workers", str(run["workers"]), "--engine", run["engine"]]
    if args.explicit_separators:
        cmd += ["--bos", fam["bos"] or "none", "--eot", fam["eot"] or "none"]
    return cmd + ["--val-fraction", "0", "--quiet"]


def execute(run: dict, fam: dict, corpus: dict, args, work_root: str) -> dict:
    """One run in its own process tree; returns timing, memory, samples and its token files."""
    import numpy as np

    run_dir = tempfile.mkdtemp(prefix=f"{fam['name']}-{run['tool']}-", dir=work_root)
    out_dir = os.path.join(run_dir, "out")  # tokenforge creates its own
    env = dict(os.environ)
    env.update(HF_DATASETS_OFFLINE="1", HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    itemsize = np.dtype(fam["dtype"]).itemsize
    progress_dir = growth = None
    if run["tool"] == "tokenforge":
        cmd = tokenforge_cmd(run, fam, corpus, out_dir, args)
        growth = (out_dir, None, itemsize)
    else:
        os.makedirs(out_dir)
        progress_dir = os.path.join(run_dir, "progress")
        os.makedirs(progress_dir)
        spec = {
            "tool": run["tool"], "workers": run["workers"], "out_dir": out_dir,
            "result": os.path.join(run_dir, "result.json"), "progress_dir": progress_dir,
            "jsonl": corpus["jsonl"], "dtype": fam["dtype"], "bos_id": fam["bos_id"], "eot_id": fam["eot_id"],
            "pool": fam["pool"], "tiktoken_file": fam.get("tiktoken_file"), "model_file": fam.get("model_file"),
            "pattern": fam.get("pattern"), "specials": fam.get("specials"),
            "hf_json": fam["datatrove_json"] if run["tool"] == "datatrove" else fam["hf_json"],
        }
        if run["tool"] in ("hf", "datatrove"):
            env.update(RAYON_NUM_THREADS="1", TOKENIZERS_PARALLELISM="false")
        if run["tool"] == "hf":
            spec["cache_dir"] = os.path.join(args.data_dir, "hf_cache")
            shutil.rmtree(spec["cache_dir"], ignore_errors=True)
            env["HF_DATASETS_CACHE"] = spec["cache_dir"]
        if run["tool"] == "datatrove":
            spec["shards"] = jsonl_shards(corpus["dir"], corpus["jsonl"], run["workers"], corpus["docs"])
            progress_dir = None
            growth = (os.path.join(out_dir, "tokens"), (".ds",), itemsize)
        cmd = [sys.executable, os.path.abspath(__file__), "--child", json.dumps(spec)]
    log(f"  [{fam['name']}] {run['label']} ({run['input']}, {run['workers']} worker(s)) ...")
    res = run_monitored(cmd, env, run_dir, progress_dir=progress_dir, growth=growth)
    if run["tool"] == "hf":  # its Arrow files: a few GB for a 1 GB corpus
        shutil.rmtree(spec["cache_dir"], ignore_errors=True)
    res["run_dir"] = run_dir
    res["files"], res["dtype"] = [], fam["dtype"]
    if res["rc"] != 0:
        res["error"] = (tail(os.path.join(run_dir, "stderr.txt")) or tail(os.path.join(run_dir, "stdout.txt"))).strip()
        return res
    if run["tool"] == "tokenforge":
        files, dtype, index = tokenforge_outputs(out_dir)
        res["files"], res["dtype"] = files, dtype or fam["dtype"]
        if not files:
            res["error"] = f"no index.json / train shards in {out_dir}: {sorted(os.listdir(out_dir))}"
        else:
            splits = index.get("splits", {})
            res["documents"] = splits.get("train", {}).get("documents")
            res["index_notes"] = []
            if res["documents"] != corpus["docs"]:
                res["index_notes"].append(f"index.json counts {res['documents']} train documents, the corpus has "
                                          f"{corpus['docs']}")
            extra = {k: v.get("tokens") for k, v in splits.items() if k != "train" and v and v.get("tokens")}
            if extra:
                res["index_notes"].append(f"other splits with --val-fraction 0: {extra}")
            if dtype != fam["dtype"]:
                res["index_notes"].append(f"dtype {dtype}, expected {fam['dtype']}")
    else:
        with open(os.path.join(run_dir, "result.json"), encoding="utf-8") as f:
            child = json.load(f)
        res["files"], res["dtype"], res["phases"] = child["files"], child["dtype"], child.get("phases")
    if res["files"]:
        res["tokens"] = TokenStream(res["files"], res["dtype"]).length
    return res


def throughput_series(res: dict, text_bytes: int):
    """(t, MB/s) from the token counts sampled during the run, at the run's bytes/token."""
    pts = [(0.0, 0)] + [(s[0], s[1]) for s in res["samples"] if s[1] is not None]
    if not pts or not res.get("tokens"):
        return [], []
    bpt = text_bytes / res["tokens"]
    ts, rates = [], []
    win = max(1, int(round(2.0 / SAMPLE_EVERY)))  # ~2 s window
    for i in range(win, len(pts)):
        (t0, k0), (t1, k1) = pts[i - win], pts[i]
        if t1 > t0:
            ts.append(t1)
            rates.append(max(0.0, (k1 - k0) * bpt / (t1 - t0) / 1e6))
    return ts, rates


def draw_plot(path: str, families: list[dict]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cols = len(families)
    keys = sorted({r["key"] for f in families for r in f["results"]})
    palette = plt.get_cmap("tab10")
    colors = {k: palette(i % 10) for i, k in enumerate(keys)}
    fig, axes = plt.subplots(2, cols, figsize=(7 * cols, 8), squeeze=False)
    for c, f in enumerate(families):
        ax_t, ax_m = axes[0][c], axes[1][c]
        for r in f["results"]:
            if r.get("samples") is None:
                continue
            name = f"{r['label']} {r['input']} w{r['workers']}"
            if r["tool"] in ("tokenforge", "datatrove"):
                name += " (from output growth)"
            ts, rates = throughput_series(r, f["text_bytes"])
            color = colors[r["key"]]
            ax_t.plot(ts, rates, label=name, lw=1.2, color=color)
            ax_m.plot([s[0] for s in r["samples"]], [s[2] / 2**20 for s in r["samples"]], label=name, lw=1.2,
                      color=color)
        ax_t.set_title(f"{f['title']}: {f['text_bytes'] / 1e6:,.0f} MB of text")
        ax_t.set_ylabel("MB/s of input (2 s window)")
        ax_m.set_ylabel("RSS of the process tree (MiB)")
        ax_m.set_xlabel("seconds since start")
        ax_t.grid(alpha=0.3)
        ax_m.grid(alpha=0.3)
        ax_t.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def fmt_s(x: float) -> str:
    return f"{x:.2f}" if x < 100 else f"{x:.1f}"


def measure_family(fam: dict, runs: list[dict], args, corpus: dict, work_root: str):
    """Every run of one family (``--repeat`` rounds, in alternating order), each checked against
    the first peer's tokens; returns the best result per run, the notes, the tokenforge failures
    and the name of the reference run."""
    best: dict[str, dict] = {}
    notes: list[str] = []
    ref = None  # (name, TokenStream, result) of the first peer run
    failures = 0
    for k in range(args.repeat):
        for run in (runs if k % 2 == 0 else runs[::-1]):
            res = execute(run, fam, corpus, args, work_root)
            res.update({kk: run[kk] for kk in ("label", "input", "workers", "peer", "tool", "key")})
            name = f"{run['label']} {run['input']} w{run['workers']}"
            keep = False
            if res.get("error"):
                msg = f"{name} failed (exit {res['rc']}):\n" + "\n".join("      " + x for x in res["error"].splitlines())
                print(f"!!! {msg}" if not run["peer"] else f"note: {msg}")
                notes.append(msg)
                failures += not run["peer"]
                res["ids"] = "error"
            elif ref is None:
                res["ids"] = "ref" if run["peer"] else "-"
                if run["peer"]:
                    ref = (name, TokenStream(res["files"], res["dtype"]), res)
                    keep = True
            else:
                i = first_difference(ref[1], TokenStream(res["files"], res["dtype"]))
                res["ids"] = "same" if i is None else f"DIFF@{i:,}"
                if i is not None:
                    text = mismatch_text(name, ref[0], ref[1], TokenStream(res["files"], res["dtype"]), i, fam)
                    if not run["peer"]:
                        failures += 1
                        keep = True  # left for inspection
                        text += f"\n    its output is kept in {res['run_dir']}"
                    print(text)
                    notes.append(text)
            if not keep:
                shutil.rmtree(res["run_dir"], ignore_errors=True)
            prev = best.get(run["key"])
            better = prev is None or (not res.get("error") and (prev.get("error") or res["wall"] < prev["wall"]))
            winner, loser = (res, prev) if better else (prev, res)
            if loser is not None:
                for m in ("peak_rss", "peak_anon"):
                    winner[m] = max(winner[m], loser[m])
            best[run["key"]] = winner
    if ref is not None:
        shutil.rmtree(ref[2]["run_dir"], ignore_errors=True)
    return [best[r["key"]] for r in runs], notes, failures, ref[0] if ref else None


def print_family(results: list[dict], corpus: dict, notes: list[str], ref_name: str | None) -> dict | None:
    """The table of one family; returns the fastest peer run with the peers' tokens."""
    text_bytes = corpus["text_bytes"]
    ok_peers = [r for r in results if r["peer"] and not r.get("error") and not r["ids"].startswith("DIFF")]
    fastest = min(ok_peers, key=lambda r: r["wall"]) if ok_peers else None
    rows = []
    for r in results:
        if r.get("error"):
            rows.append([r["label"], r["input"], r["workers"], "failed", "-", "-", "-", "-", "-", "error"])
            continue
        flag = " (!)" if r["ids"].startswith("DIFF") else ""
        rows.append([
            r["label"] + flag, r["input"], r["workers"], fmt_s(r["wall"]), f"{text_bytes / r['wall'] / 1e6:.2f}",
            f"{r['tokens'] / r['wall'] / 1e6:.2f}M", f"{r['peak_rss'] / 2**20:,.0f}", f"{r['peak_anon'] / 2**20:,.0f}",
            "-" if fastest is None else f"{fastest['wall'] / r['wall']:.3f}", r["ids"],
        ])
    print_table(["tool", "input", "workers", "wall s", "MB/s", "tokens/s", "peak RSS MiB",
                 "peak anon MiB", "x fastest peer", "ids"], rows)
    print()
    if fastest is not None:
        print(f"(x fastest peer: throughput ÷ that of {fastest['label']} ({fastest['input']}, {fastest['workers']} w); "
              f"> 1 is faster. MB/s: document text bytes ÷ wall seconds, process start to exit. peak RSS: "
              f"the largest sum over the process tree; anon: the same less file-backed and shared pages "
              f"(memory-mapped inputs, outputs and Arrow files count in RSS, not in anon).)")
    if ref_name:
        print(f"(ids: each run's token array compared, value by value, with that of the first {ref_name} run)")
    tokens = {r["tokens"] for r in results if r.get("tokens")}
    if tokens:
        print(f"(tokens per run: {', '.join(f'{t:,}' for t in sorted(tokens))}; "
              f"{text_bytes / max(tokens):.2f} bytes/token)")
    for r in results:
        for note in r.get("index_notes") or []:
            print(f"!!! {r['label']} {r['input']} w{r['workers']}: {note}")
            notes.append(note)
    for r in results:
        if r["tool"] == "tokenforge" and r.get("cmd"):
            print(f"(`{shlex.join(r['cmd'])}`)")
    for r in results:
        if r.get("phases"):
            print(f"(phases of {r['label']}: " + ", ".join(f"{k} {v:.1f}s" for k, v in r["phases"].items()) + ")")
    print()
    return fastest


def print_ratios(results: list[dict], workers: int) -> dict:
    """tokenforge N workers ÷ 1 worker, ray ÷ local, txt ÷ jsonl."""
    def pick(label, inp, w):
        for r in results:
            if r["label"] == label and r["input"] == inp and r["workers"] == w and not r.get("error"):
                return r
        return None

    rows, ratios = [], {}
    for inp in ("jsonl", "txt"):
        one, many = pick("tokenforge", inp, 1), pick("tokenforge", inp, workers)
        if one and many and workers > 1:
            ratios[f"{inp} {workers}w/1w"] = x = one["wall"] / many["wall"]
            rows.append([f"tokenforge {inp}: {workers} workers ÷ 1 worker (speed-up)", f"{x:.3f}"])
            rows.append([f"  peak RSS {workers} workers ÷ 1 worker", f"{many['peak_rss'] / one['peak_rss']:.3f}"])
    one, many = pick("tokenforge ray", "jsonl", 1), pick("tokenforge ray", "jsonl", workers)
    if one and many and workers > 1:
        ratios[f"ray {workers}w/1w"] = x = one["wall"] / many["wall"]
        rows.append([f"tokenforge ray jsonl: {workers} actors ÷ 1 actor (speed-up)", f"{x:.3f}"])
    for w in sorted({1, workers}):
        local, ray = pick("tokenforge", "jsonl", w), pick("tokenforge ray", "jsonl", w)
        if local and ray:
            key = "ray/local" if w == workers else f"ray/local {w}w"
            ratios[key] = x = local["wall"] / ray["wall"]
            rows.append([f"tokenforge jsonl {w} worker(s): ray ÷ local (throughput)", f"{x:.3f}"])
            rows.append(["  peak RSS ray ÷ local", f"{ray['peak_rss'] / local['peak_rss']:.3f}"])
    jl, tx = pick("tokenforge", "jsonl", workers), pick("tokenforge", "txt", workers)
    if jl and tx:
        ratios["txt/jsonl"] = x = jl["wall"] / tx["wall"]
        rows.append([f"tokenforge {workers} workers: txt ÷ jsonl (throughput)", f"{x:.3f}"])
    if rows:
        print_table(["ratio", "value"], rows)
        print()
    return ratios


def run_family(family: str, args, corpus: dict, tf_ok: bool, work_root: str) -> dict:
    fam = resolve_family(family, args.data_dir)
    runs = plan_runs(family, fam, args.tools, args.workers, tf_ok)
    sep = " ".join(x for x in (fam["bos"], "ids", fam["eot"]) if x)
    print(f"## {fam['title']} (`--family {family}`): {corpus['docs']:,} documents, "
          f"{corpus['text_bytes'] / 1e6:,.1f} MB of text, per document `{sep}`, {fam['dtype']}, "
          f"best of {args.repeat}\n")
    print(f"#   HF tokenizer.json: {fam['hf_json']}")
    if "datatrove" in args.tools:
        print(f"#   datatrove tokenizer.json (with the separator template): {fam['datatrove_json']}")
    print()
    results, notes, failures, ref_name = measure_family(fam, runs, args, corpus, work_root)
    fastest = print_family(results, corpus, notes, ref_name)
    ratios = print_ratios(results, args.workers)
    return {"family": family, "title": fam["title"], "text_bytes": corpus["text_bytes"], "dtype": fam["dtype"],
            "results": results, "notes": notes, "ratios": ratios, "failures": failures,
            "fastest_peer": fastest["key"] if fastest else None}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--size-mb", type=float, default=None, help="corpus size in MB of 10^6 bytes (default: 1024)")
    ap.add_argument("--quick", action="store_true", help="a 64 MB corpus (unless --size-mb says otherwise)")
    ap.add_argument("--data-dir", default="/work/benchdata/prepare",
                    help="corpus cache, HF cache and the runs' outputs (default: %(default)s)")
    ap.add_argument("--family", default="cl100k", choices=("cl100k", "spm", "bert", "all"),
                    help="tokenizer family (default: %(default)s)")
    ap.add_argument("--tools", default=",".join(ALL_TOOLS),
                    help="comma-separated subset of %s (default: all)" % ",".join(ALL_TOOLS))
    ap.add_argument("--workers", type=int, default=2, help="workers of the peers and of the multi-worker "
                    "tokenforge runs (default: %(default)s)")
    ap.add_argument("--repeat", type=int, default=1, help="runs per cell, best wall time kept (default: %(default)s)")
    ap.add_argument("--wait-for-tokenforge", type=float, default=0, metavar="MINUTES",
                    help="poll `tokenforge prepare --help` this long before giving up on the tokenforge runs")
    ap.add_argument("--explicit-separators", action="store_true",
                    help="give tokenforge the separators as --bos/--eot instead of relying on 'auto'")
    ap.add_argument("--txt-split-on", default=r"\n<|endoftext|>\n", metavar="DELIM",
                    help="tokenforge's --split-on for corpus.txt (default: %(default)s, the separator the file has; "
                    "'<|endoftext|>' alone leaves a newline at both ends of the documents)")
    ap.add_argument("--plot", default=None, metavar="PATH.png",
                    help="throughput and RSS over time (default: DATA_DIR/bench_prepare.png)")
    ap.add_argument("--no-plot", action="store_true")
    ap.add_argument("--json", metavar="PATH", help="also write all figures to this JSON file")
    add_backend_arg(ap)
    args = ap.parse_args()
    if args.child:
        run_child(args.child)
        return
    apply_backend(args.backend)
    args.tools = [t.strip() for t in args.tools.split(",") if t.strip()]
    bad = set(args.tools) - set(ALL_TOOLS)
    if bad:
        ap.error(f"unknown tools: {sorted(bad)}")
    size_mb = args.size_mb if args.size_mb is not None else (64 if args.quick else 1024)
    families = list(FAMILIES) if args.family == "all" else [args.family]
    plot = None if args.no_plot else (args.plot or os.path.join(args.data_dir, "bench_prepare.png"))

    print(f"# command: {shlex.join([sys.executable] + sys.argv)}")
    info = machine_info()
    print_machine(info)
    versions = {n: _dist_version(n) for n in ("tiktoken", "sentencepiece", "tokenizers", "datasets", "transformers",
                                              "datatrove", "ray", "numpy")}
    print("# " + " | ".join(f"{k} {v}" for k, v in versions.items()))

    tf_why = None
    if any(t.startswith("tokenforge") for t in args.tools):
        deadline = time.monotonic() + 60 * args.wait_for_tokenforge
        while True:
            tf_why = tokenforge_ready()
            if tf_why is None or time.monotonic() >= deadline:
                break
            log(f"tokenforge prepare not ready ({tf_why}); polling again in 3 min")
            time.sleep(180)
        if tf_why:
            print(f"# tokenforge prepare is not available, its runs are skipped: {tf_why}")
    if "datatrove" in args.tools:
        import importlib.util

        missing = [m for m in ("datatrove", "orjson") if importlib.util.find_spec(m) is None]
        if missing:  # orjson: datatrove's JsonlReader needs it
            print(f"# datatrove skipped: {', '.join(missing)} not installed (pip install datatrove orjson)")
            args.tools.remove("datatrove")

    corpus_dir = os.path.join(args.data_dir, f"{size_mb:g}MB")
    corpus = build_corpus(corpus_dir, size_mb)
    corpus["dir"] = corpus_dir
    corpus["txt"] = os.path.join(corpus_dir, "corpus.txt")
    corpus["jsonl"] = os.path.join(corpus_dir, "corpus.jsonl")
    how = "reused" if corpus["reused"] else f"built in {corpus['build_seconds']:.0f}s"
    print(f"# corpus ({how}): {corpus['docs']:,} documents, {corpus['text_bytes'] / 1e6:,.1f} MB of text; "
          f"corpus.txt {corpus['txt_bytes'] / 1e6:,.1f} MB, corpus.jsonl {corpus['jsonl_bytes'] / 1e6:,.1f} MB, "
          f"in {corpus_dir}")
    if corpus["repeats"] > 1:
        print(f"# the {corpus['unique_docs']:,} unique documents ({corpus['unique_bytes'] / 1e6:,.1f} MB, from "
              f"{len(corpus['sources'])} files) are REPEATED {corpus['repeats']:.2f} times to reach the size")
    else:
        print(f"# a prefix ({corpus['repeats']:.1%}) of the {corpus['unique_docs']:,} unique documents "
              f"({corpus['unique_bytes'] / 1e6:,.1f} MB): no repetition")
    for p in (corpus["txt"], corpus["jsonl"]):  # the page cache is warm for every run alike
        with open(p, "rb") as f:
            while f.read(1 << 24):
                pass
    print()

    work_root = os.path.join(args.data_dir, "runs")
    shutil.rmtree(work_root, ignore_errors=True)
    os.makedirs(work_root)
    out = {"machine": info, "versions": versions, "corpus": corpus, "families": []}
    for family in families:
        out["families"].append(run_family(family, args, corpus, tf_why is None, work_root))
    if not os.listdir(work_root):
        os.rmdir(work_root)

    if plot:
        try:
            draw_plot(plot, out["families"])
            print(f"# plot: {plot}")
        except ImportError as exc:
            print(f"# no plot: {exc}")
    if args.json:
        for f in out["families"]:
            for r in f["results"]:
                r.pop("run_dir", None)
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(out, fh, indent=1, default=str)
    failures = sum(f["failures"] for f in out["families"])
    if failures:
        print(f"!!! {failures} tokenforge run(s) failed or gave other tokens than the peers")
        sys.exit(1)


if __name__ == "__main__":
    main()

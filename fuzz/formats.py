"""Seeded fuzzing of the file readers behind ``tokenforge.load``.

Each of the seven formats ``tokenforge.load`` reads gets a seed corpus of real
files (small slices of them, so that one load takes milliseconds) and a
deterministic mutator: case ``i`` of format ``f`` under ``--seed s`` is always
the same bytes (``random.Random(f"{s}/{f}/{i}")``), so any finding replays with
``--case i``. Mutations are byte-level (bit flips, truncation, inserted and
deleted bytes), line-level (deleted, duplicated, swapped lines and fields) and
structure-aware: JSON values of the wrong type, negative, huge, float and string
ids, NaN, deep nesting, missing and extra keys; protobuf fields of a
SentencePiece ``.model`` (varints, lengths, wire types, piece types, NaN and
infinite scores, the charsmap); GGUF header and metadata (magic, version,
counts, value types, token ids, arrays).

Every mutated file is loaded in a forked child with a time limit and a memory
limit (``RLIMIT_DATA``, on top of what the child already holds). The outcome is one of

* a clean error: a ``TokenforgeError`` whose message names the file;
* a load: the tokenizer then encodes and decodes a few fixed strings, and when
  the reference library loads the same bytes (tiktoken for rank files, HF
  tokenizers for ``tokenizer.json``, ``vocab.json`` + ``merges.txt`` and
  ``vocab.txt``, sentencepiece for ``.model``) the ids must be equal;
* a failure: any other exception, an error that does not name the file, a
  crash (signal), a hang, running out of memory, an exception other than a
  ``TokenforgeError`` while encoding or decoding, or ids that differ from the
  reference's.

Failing inputs are written to ``--out`` (one folder each, with ``case.json``
saying how to reproduce it).

    python fuzz/formats.py --seconds 60 --seed 0
    python fuzz/formats.py --runs 2000 --seed 0 --jobs 2 --out /tmp/format-fuzz
    python fuzz/formats.py --format hf --seed 0 --case 123      # replay one case, verbosely

Importable: :func:`build_seeds`, :func:`make_case`, :func:`run_case` and
:func:`fuzz` are what ``tests/formats/test_format_fuzz.py`` uses.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import hashlib
import json
import lzma
import math
import multiprocessing
import multiprocessing.connection
import os
import random
import resource
import shutil
import struct
import sys
import tempfile
import time
import traceback
import zlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")  # children are forked

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures"

#: The formats, as ``tokenforge.LOAD_FORMATS`` names them.
FORMATS = ("tiktoken", "gpt2", "hf", "sentencepiece", "bert_vocab", "gguf", "tokenforge")
TIMEOUT = 10.0
MEMORY_MB = 2048

#: Encoded (and decoded) with every tokenizer that loads. No lone surrogates:
#: HF tokenizers and sentencepiece refuse them before tokenizing.
TEXTS = (
    "Hello world",
    "  The quick brown fox, isn't it?\n\nYes!  ",
    "naïve café Ünïcödé — 東京タワー 🙂👩‍👩‍👧 ﬁ ①",
    "def f(x):\n\treturn x**2  # 12345 3.14159",
    "<|endoftext|> <s></s> [CLS] [SEP] <unk> <pad> [MASK] <0x41>",
    "▁▁ ##ing ĠĠ Ċ \u3000 \u00a0 \r\n",
    "",
    "\x00\x01 \x7f",
)

#: Failure kinds, in the order the summary shows them.
FAILURE_KINDS = ("exception", "unnamed", "crash", "hang", "oom", "encode", "mismatch")


def shared_data() -> Path | None:
    """``shared/data`` beside the repository or ``$TOKENFORGE_SHARED_DATA`` (as ``tests/conftest.py``)."""
    env = os.environ.get("TOKENFORGE_SHARED_DATA")
    path = Path(env) if env else REPO.parent / "shared" / "data"
    return path if path.is_dir() else None


# =====================================================================================
# Seeds
# =====================================================================================


@dataclass
class Seed:
    """One small, real tokenizer file (or pair of files) of one format."""

    fmt: str
    name: str
    files: dict[str, bytes]
    target: str = ""  # the file ``load`` is given; "" = the folder
    kwargs: dict[str, Any] = field(default_factory=dict)  # extra load() keywords
    reference: str | None = None  # "tiktoken", "hf", "hf_bpe", "bert", "sentencepiece"
    ref_args: dict[str, Any] = field(default_factory=dict)


def _xz(path: Path) -> bytes:
    return lzma.decompress(path.read_bytes())


def _head_lines(data: bytes, n: int) -> bytes:
    return b"".join(data.splitlines(keepends=True)[:n])


_TIKTOKEN_PATTERNS: dict[str, str] = {}


def tiktoken_pattern(name: str) -> str:
    """The split regex tiktoken ships for ``name`` (``gpt2``, ``cl100k``, ``o200k``); tokenforge's
    pattern of that name for the others (``qwen``, ``llama3``: tiktoken has none)."""
    if not _TIKTOKEN_PATTERNS:
        from tokenforge.pretokenizers import PATTERNS

        _TIKTOKEN_PATTERNS.update(PATTERNS)
        with contextlib.suppress(ImportError):
            import tiktoken_ext.openai_public as public

            real = public.load_tiktoken_bpe
            public.load_tiktoken_bpe = lambda *a, **k: {}  # the pattern only: no download
            try:
                _TIKTOKEN_PATTERNS["gpt2"] = public.r50k_base()["pat_str"]
                _TIKTOKEN_PATTERNS["cl100k"] = public.cl100k_base()["pat_str"]
                _TIKTOKEN_PATTERNS["o200k"] = public.o200k_base()["pat_str"]
            finally:
                public.load_tiktoken_bpe = real
    return _TIKTOKEN_PATTERNS[name]


def _seeds_tiktoken(shared: Path | None) -> list[Seed]:
    data_dir = REPO / "src" / "tokenforge" / "encodings" / "data"
    out = []
    for name, pattern in (("r50k_base", "gpt2"), ("p50k_base", "gpt2"), ("cl100k_base", "cl100k"),
                          ("o200k_base", "o200k")):
        full = zlib.decompress((data_dir / f"{name}.tiktoken.zz").read_bytes())
        lines = full.splitlines(keepends=True)
        out.append(Seed("tiktoken", f"{name}-head", {f"{name}.tiktoken": b"".join(lines[:400])},
                        f"{name}.tiktoken", {"pattern": pattern}, "tiktoken", {"pattern": pattern}))
        if name == "cl100k_base":  # longer tokens, and ranks with gaps
            sparse = lines[:256] + lines[256::400]
            out.append(Seed("tiktoken", f"{name}-sparse", {f"{name}.tiktoken": b"".join(sparse)},
                            f"{name}.tiktoken", {"pattern": pattern}, "tiktoken", {"pattern": pattern}))
    if shared is not None:
        qwen = shared / "vocab" / "tiktoken" / "qwen.tiktoken"
        if qwen.is_file():
            out.append(Seed("tiktoken", "qwen-head", {"qwen.tiktoken": _head_lines(qwen.read_bytes(), 400)},
                            "qwen.tiktoken", {"pattern": "qwen"}, "tiktoken", {"pattern": "qwen"}))
        llama3 = shared / "vocab" / "meta" / "llama3_tokenizer.model"
        if llama3.is_file():  # Meta's rank file, named like a SentencePiece model: detected by content
            out.append(Seed("tiktoken", "llama3-head", {"tokenizer.model": _head_lines(llama3.read_bytes(), 400)},
                            "tokenizer.model", {"pattern": "llama3"}, "tiktoken", {"pattern": "llama3"}))
    return out


def _gpt2_subset(vocab_json: bytes, merges_txt: bytes, n_merges: int) -> dict[str, bytes]:
    """The byte tokens, the first ``n_merges`` merges and the tokens they make (ids kept)."""
    vocab = json.loads(vocab_json)
    lines = merges_txt.decode("utf-8").split("\n")
    header = [lines[0]] if lines and lines[0].startswith("#version") else []
    body = [ln for ln in lines[len(header):] if ln.strip()]
    from tokenforge import bytelevel

    alphabet = set(bytelevel.unicode_to_bytes())
    keep = {t for t in vocab if len(t) == 1 and t in alphabet}
    merges = []
    for ln in body:
        a, b = ln.split(" ")
        if a in keep and b in keep and a + b in vocab:
            merges.append(ln)
            keep.add(a + b)
            if len(merges) == n_merges:
                break
    keep.update(t for t in ("<|endoftext|>",) if t in vocab)
    sub = {t: i for t, i in sorted(vocab.items(), key=lambda kv: kv[1]) if t in keep}
    return {"vocab.json": json.dumps(sub, ensure_ascii=False).encode("utf-8"),
            "merges.txt": ("\n".join(header + merges) + "\n").encode("utf-8")}


def _rank_tokenizer(name: str = "r50k_base", n: int = 400):
    import tokenforge
    from tokenforge.formats.tiktoken import parse_ranks
    from tokenforge.models.bpe import BPE

    data = zlib.decompress((REPO / "src" / "tokenforge" / "encodings" / "data" / f"{name}.tiktoken.zz").read_bytes())
    ranks = parse_ranks(_head_lines(data, n))
    return tokenforge.Tokenizer(BPE._from_parsed_ranks(ranks), pre_tokenizer="gpt2", name=f"{name}-{n}")


def _saved(tok, fmt: str, filename: str | None) -> dict[str, bytes]:
    """Files ``tok.save(..., format=fmt)`` writes."""
    with tempfile.TemporaryDirectory() as d:
        tok.save(os.path.join(d, filename) if filename else d + os.sep, format=fmt)
        return {p.name: p.read_bytes() for p in Path(d).iterdir() if p.is_file() and not p.name.startswith(".")}


def _seeds_gpt2(shared: Path | None) -> list[Seed]:
    out = [Seed("gpt2", "r50k-derived", _saved(_rank_tokenizer(), "gpt2", None), "", {}, "hf_bpe")]
    if shared is not None:
        for name, d in (("gpt2", shared / "vocab" / "gpt2"), ("qwen2", shared / "vocab" / "hf" / "qwen2")):
            if (d / "vocab.json").is_file() and (d / "merges.txt").is_file():
                files = _gpt2_subset((d / "vocab.json").read_bytes(), (d / "merges.txt").read_bytes(), 300)
                out.append(Seed("gpt2", name, files, "", {}, "hf_bpe"))
    return out


def _bert_vocab_repo() -> bytes:
    return _head_lines(_xz(FIXTURES / "differential" / "bert-base-chinese_vocab.txt.xz"), 1200)


def _spm_repo(name: str) -> bytes:
    return _xz(FIXTURES / "differential" / f"{name}.model.xz")


def _spm_identity(data: bytes, n: int | None = None) -> bytes:
    """The model without its charsmap (identity normalization), optionally cut to ``n`` pieces."""
    from tokenforge.sentencepiece.proto import decode_model, encode_model

    proto = decode_model(data)
    proto.normalizer_spec.precompiled_charsmap = b""
    proto.normalizer_spec.name = "identity"
    if n is not None:
        proto.pieces = proto.pieces[:n]
        proto.trainer_spec.vocab_size = n
    return encode_model(proto)


def _spm_cut(data: bytes, n: int) -> bytes:
    from tokenforge.sentencepiece.proto import decode_model, encode_model

    proto = decode_model(data)
    proto.pieces = proto.pieces[:n]
    proto.trainer_spec.vocab_size = n
    return encode_model(proto)


def _hf_subset(doc: dict, n_vocab: int, n_merges: int = 300) -> dict:
    """A ``tokenizer.json`` cut to its first ids (and the merges among them)."""
    doc = json.loads(json.dumps(doc))
    model = doc["model"]
    specials = {t["content"] for t in doc.get("added_tokens") or []}
    kind = model.get("type") or ("BPE" if "merges" in model else "Unigram" if isinstance(model.get("vocab"), list) else "WordPiece")
    if kind in ("BPE", "WordPiece", "WordLevel"):
        keep = {t: i for t, i in model["vocab"].items() if i < n_vocab or t in specials}
        model["vocab"] = dict(sorted(keep.items(), key=lambda kv: kv[1]))
        if kind == "BPE":
            merges = []
            for m in model["merges"]:
                a, b = m.split(" ") if isinstance(m, str) else m
                if a in keep and b in keep and a + b in keep:
                    merges.append(m)
                    if len(merges) == n_merges:
                        break
            model["merges"] = merges
    elif kind == "Unigram":
        model["vocab"] = model["vocab"][:n_vocab]
    return doc


def _seeds_hf(shared: Path | None) -> list[Seed]:
    from tokenforge import presets
    from tokenforge.formats.bert_vocab import load_bert_vocab
    from tokenforge.sentencepiece.convert import hf_approximation

    out = [Seed("hf", "r50k-derived", _saved(_rank_tokenizer(), "hf", "tokenizer.json"), "tokenizer.json", {}, "hf")]
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "vocab.txt"
        p.write_bytes(_bert_vocab_repo())
        bert = presets.bert_wordpiece(load_bert_vocab(p), lowercase=True)
        out.append(Seed("hf", "bert-chinese-derived", _saved(bert, "hf", "tokenizer.json"), "tokenizer.json", {}, "hf"))
        p = Path(d) / "m.model"
        p.write_bytes(_spm_identity(_spm_repo("spm_test_unigram")))
        doc = hf_approximation(presets.sentencepiece(p))
        out.append(Seed("hf", "spm-unigram-derived", {"tokenizer.json": json.dumps(doc, ensure_ascii=False).encode()},
                        "tokenizer.json", {}, "hf"))
    if shared is not None:
        for name, n in (("gpt2_tokenizer.json", 556), ("claude_tokenizer.json", 600),
                        ("bert-base-uncased_wordpiece_tokenizer.json", 2100),
                        ("albert-base-v2_spiece_unigram_tokenizer.json", 800)):
            f = shared / "vocab" / "hf" / name
            if f.is_file():
                doc = _hf_subset(json.loads(f.read_bytes()), n)
                out.append(Seed("hf", name.removesuffix(".json"),
                                {"tokenizer.json": json.dumps(doc, ensure_ascii=False, indent=1).encode()},
                                "tokenizer.json", {}, "hf"))
    return out


def _seeds_sentencepiece(shared: Path | None) -> list[Seed]:
    out = []
    for name in ("spm_test_unigram", "hf_test_bpe"):
        data = _spm_repo(name)
        out.append(Seed("sentencepiece", name, {f"{name}.model": data}, f"{name}.model", {}, "sentencepiece"))
        out.append(Seed("sentencepiece", f"{name}-identity", {f"{name}.model": _spm_identity(data, 400)},
                        f"{name}.model", {}, "sentencepiece"))
    if shared is not None:
        base = shared / "vocab" / "sentencepiece"
        for name, n in (("mistral_v1_tokenizer", 700), ("albert_spiece", 800), ("spm_test_ja_unigram", 800),
                        ("hf_test_unigram", 1000)):
            f = base / f"{name}.model"
            if f.is_file():
                out.append(Seed("sentencepiece", name, {f"{name}.model": _spm_cut(f.read_bytes(), n)},
                                f"{name}.model", {}, "sentencepiece"))
    return out


def _seeds_bert(shared: Path | None) -> list[Seed]:
    out = [Seed("bert_vocab", "bert-base-chinese", {"vocab.txt": _bert_vocab_repo()}, "vocab.txt", {}, "bert")]
    if shared is not None:
        f = shared / "vocab" / "wordpiece" / "bert-base-uncased_vocab.txt"
        if f.is_file():
            out.append(Seed("bert_vocab", "bert-base-uncased", {"vocab.txt": _head_lines(f.read_bytes(), 2300)},
                            "vocab.txt", {}, "bert"))
    return out


def _gguf_subset(data: bytes, n: int) -> bytes:
    """The vocabulary cut to its first ``n`` tokens (tokens named by an id key are appended
    and the key follows them), the merges among them, every other key as it was."""
    g = parse_gguf(data)
    kv = {k: (t, v, et) for k, t, v, et in g.kvs}
    tokens = kv["tokenizer.ggml.tokens"][1]
    keep = list(range(min(n, len(tokens))))
    # every byte token too: a vocabulary with byte fallback needs all 256
    keep += [i for i in range(n, len(tokens)) if len(tokens[i]) == 6 and tokens[i].startswith("<0x")]
    id_keys = [k for k in kv if k.startswith("tokenizer.ggml.") and k.endswith("_token_id")]
    for k in id_keys:
        i = kv[k][1]
        if isinstance(i, int) and n <= i < len(tokens) and i not in keep:
            keep.append(i)
    new_id = {old: new for new, old in enumerate(keep)}
    kept_tokens = [tokens[i] for i in keep]
    out = []
    for k, t, v, et in g.kvs:
        if k in ("tokenizer.ggml.tokens", "tokenizer.ggml.scores", "tokenizer.ggml.token_type"):
            v = [v[i] for i in keep]
        elif k == "tokenizer.ggml.merges":
            vocab = set(kept_tokens)
            v = [m for m in v if len(m.split(" ")) == 2 and all(p in vocab for p in (*m.split(" "), m.replace(" ", "")))]
        elif k in id_keys and isinstance(v, int) and v in new_id:
            v = new_id[v]
        elif k.endswith(".vocab_size") and isinstance(v, int):
            v = len(keep)
        out.append((k, t, v, et))
    return write_gguf(GGUF(g.version, g.tensor_count, out))


def _seeds_gguf(shared: Path | None) -> list[Seed]:
    out = []
    for f in sorted((FIXTURES / "gguf").glob("*.gguf.xz")):
        name = f.name.removesuffix(".gguf.xz")
        out.append(Seed("gguf", name, {f"{name}.gguf": _gguf_subset(_xz(f), 600)}, f"{name}.gguf"))
    # a t5 (Unigram) vocabulary, from sentencepiece's own test model: no GGUF fixture has one
    from tokenforge.sentencepiece.proto import decode_model

    proto = decode_model(_spm_repo("spm_test_unigram"))
    pieces = proto.pieces[:600]
    t5 = GGUF(3, 0, [
        ("general.architecture", 8, "t5", None), ("general.name", 8, "spm-test-t5", None),
        ("tokenizer.ggml.model", 8, "t5", None),
        ("tokenizer.ggml.tokens", 9, [p.piece for p in pieces], 8),
        ("tokenizer.ggml.scores", 9, [p.score for p in pieces], 6),
        ("tokenizer.ggml.token_type", 9, [p.type for p in pieces], 5),
        ("tokenizer.ggml.unknown_token_id", 4, 0, None), ("tokenizer.ggml.eos_token_id", 4, 2, None),
    ])
    out.append(Seed("gguf", "spm-test-t5", {"spm-test-t5.gguf": write_gguf(t5)}, "spm-test-t5.gguf"))
    if shared is not None:
        for f in sorted((shared / "vocab" / "gguf").glob("*.gguf")):
            name = f.name.removesuffix(".gguf")
            out.append(Seed("gguf", name, {f"{name}.gguf": _gguf_subset(f.read_bytes(), 600)}, f"{name}.gguf"))
    return out


def _seeds_native(shared: Path | None) -> list[Seed]:
    from tokenforge import presets
    from tokenforge.formats.bert_vocab import load_bert_vocab
    from tokenforge.gguf import load_gguf

    out = [Seed("tokenforge", "golden_v1", {"golden_v1.json": (FIXTURES / "formats" / "golden_v1.json").read_bytes()},
                "golden_v1.json")]
    toks = [("r50k-derived", _rank_tokenizer())]
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "vocab.txt"
        p.write_bytes(_bert_vocab_repo())
        toks.append(("bert-chinese-derived", presets.bert_wordpiece(load_bert_vocab(p), lowercase=True)))
        p = Path(d) / "u.model"
        p.write_bytes(_spm_identity(_spm_repo("spm_test_unigram"), 400))
        toks.append(("spm-unigram-derived", presets.sentencepiece(p)))
        p = Path(d) / "b.model"
        p.write_bytes(_spm_identity(_spm_repo("hf_test_bpe"), 400))
        toks.append(("spm-bpe-derived", presets.sentencepiece(p)))
    phi3 = FIXTURES / "gguf" / "ggml-vocab-phi-3.gguf.xz"
    toks.append(("phi-3-derived", load_gguf(_gguf_subset(_xz(phi3), 600))))
    for name, tok in toks:
        out.append(Seed("tokenforge", name, _saved(tok, "tokenforge", f"{name}.json"), f"{name}.json"))
    return out


_SEED_BUILDERS: dict[str, Callable[[Path | None], list[Seed]]] = {
    "tiktoken": _seeds_tiktoken, "gpt2": _seeds_gpt2, "hf": _seeds_hf, "sentencepiece": _seeds_sentencepiece,
    "bert_vocab": _seeds_bert, "gguf": _seeds_gguf, "tokenforge": _seeds_native,
}


def build_seeds(formats: Iterable[str] = FORMATS, *, use_shared: bool = True) -> dict[str, list[Seed]]:
    """The seed corpus of each format: repository files, and the shared data when present
    and ``use_shared`` (then the case numbers differ from a run without it)."""
    shared = shared_data() if use_shared else None
    return {fmt: _SEED_BUILDERS[fmt](shared) for fmt in formats}


# =====================================================================================
# Byte- and line-level mutations
# =====================================================================================

INTERESTING_BYTES = (0x00, 0x01, 0x7F, 0x80, 0xFF, 0xFE, 0x0A, 0x0D, 0x20, 0x09, 0x22, 0x7B, 0x7D, 0x5B,
                     0x5D, 0x2C, 0x3A, 0x5C, 0x3D, 0x2B, 0x2D, 0x30, 0x39, 0xC0, 0xC3, 0xE2, 0xED, 0xF0, 0xF4)
INTERESTING_CHUNKS = (b"\x00", b"\r\n", b"\xef\xbb\xbf", b"\xff\xfe", b"\xed\xa0\x80", b"\xc3", b"\xe2\x96\x81",
                      b" ", b"\t", b"\n\n", b"NaN", b"-1", b"4294967296", b"1e999", b"\\u0000", b"\\ud800",
                      b'"', b"{", b"}", b"[", b"]", b",", b":", b"null", b"==", b"GGUF", b"\x0a\x03\x0a\x01a")


def _pos(rng: random.Random, data: bytes, end: bool = True) -> int:
    return rng.randint(0, len(data)) if end else rng.randrange(max(1, len(data)))


def op_flip_bit(rng, data):
    if not data:
        return b"\x00"
    i = rng.randrange(len(data))
    return data[:i] + bytes([data[i] ^ (1 << rng.randrange(8))]) + data[i + 1:]


def op_set_byte(rng, data):
    if not data:
        return bytes([rng.choice(INTERESTING_BYTES)])
    i = rng.randrange(len(data))
    b = rng.choice(INTERESTING_BYTES) if rng.random() < 0.7 else rng.randrange(256)
    return data[:i] + bytes([b]) + data[i + 1:]


def op_insert_bytes(rng, data):
    i = _pos(rng, data)
    chunk = rng.choice(INTERESTING_CHUNKS) if rng.random() < 0.6 else bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
    return data[:i] + chunk * rng.choice((1, 1, 1, 2, 16)) + data[i:]


def op_delete_bytes(rng, data):
    if not data:
        return data
    i = rng.randrange(len(data))
    n = rng.choice((1, 1, 2, 4, 16, 256, 4096))
    return data[:i] + data[i + n:]


def op_truncate(rng, data):
    r = rng.random()
    if r < 0.05:
        return b""
    if r < 0.2:
        return data[:-rng.randint(1, 8)]
    return data[:rng.randrange(max(1, len(data)))]


def op_duplicate_bytes(rng, data):
    if not data:
        return data
    i = rng.randrange(len(data))
    chunk = data[i:i + rng.choice((1, 4, 16, 128, 1024))]
    j = _pos(rng, data)
    return data[:j] + chunk + data[j:]


def op_overwrite_random(rng, data):
    if not data:
        return data
    i = rng.randrange(len(data))
    n = min(len(data) - i, rng.randint(1, 16))
    return data[:i] + bytes(rng.randrange(256) for _ in range(n)) + data[i + n:]


BYTE_OPS = (op_flip_bit, op_set_byte, op_insert_bytes, op_delete_bytes, op_truncate, op_duplicate_bytes,
            op_overwrite_random)


def _lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")


def op_delete_line(rng, data):
    ls = _lines(data)
    del ls[rng.randrange(len(ls))]
    return b"\n".join(ls)


def op_duplicate_line(rng, data):
    ls = _lines(data)
    i = rng.randrange(len(ls))
    ls.insert(rng.randrange(len(ls) + 1), ls[i])
    return b"\n".join(ls)


def op_swap_lines(rng, data):
    ls = _lines(data)
    i, j = rng.randrange(len(ls)), rng.randrange(len(ls))
    if rng.random() < 0.5:
        j = min(len(ls) - 1, i + 1)
    ls[i], ls[j] = ls[j], ls[i]
    return b"\n".join(ls)


def op_blank_line(rng, data):
    ls = _lines(data)
    ls.insert(rng.randrange(len(ls) + 1), rng.choice((b"", b" ", b"\t", b"\r", b"   \t ")))
    return b"\n".join(ls)


def op_swap_fields(rng, data):
    ls = _lines(data)
    i = rng.randrange(len(ls))
    parts = ls[i].split(b" ")
    if len(parts) >= 2:
        parts[0], parts[-1] = parts[-1], parts[0]
    ls[i] = b" ".join(parts)
    return b"\n".join(ls)


def op_line_separator(rng, data):
    """Change a field separator or line end: tabs, two spaces, no-break spaces, CRLF, no final newline."""
    ls = _lines(data)
    i = rng.randrange(len(ls))
    choice = rng.randrange(6)
    if choice == 0:
        ls[i] = ls[i].replace(b" ", b"\t", 1)
    elif choice == 1:
        ls[i] = ls[i].replace(b" ", b"  ", 1)
    elif choice == 2:
        ls[i] = ls[i].replace(b" ", "\u00a0".encode(), 1)
    elif choice == 3:
        ls[i] = ls[i] + b"\r"
    elif choice == 4:
        ls[i] = rng.choice((b" ", b"\t", "\u3000".encode(), "\u0085".encode(), b"\x0b", b"\x1c")) + ls[i]
    else:
        ls[i] = ls[i] + rng.choice((b" ", b"\t", "\u3000".encode(), "\u0085".encode(), b"\x0b", b"\x1c", b"\x00"))
    return b"\n".join(ls)


def op_all_crlf(rng, data):
    return data.replace(b"\n", b"\r\n") if rng.random() < 0.7 else data.replace(b"\n", b"\r")


def op_strip_final_newline(rng, data):
    return data.rstrip(b"\n") if rng.random() < 0.7 else data + b"\n\n"


def op_bom(rng, data):
    return rng.choice((b"\xef\xbb\xbf", b"\xff\xfe", b"\n", b" ", b"\x00")) + data


def op_splice_line(rng, data):
    """A line copied from elsewhere in the file, or a whole block of lines shuffled."""
    ls = _lines(data)
    if rng.random() < 0.5 and len(ls) > 4:
        i = rng.randrange(len(ls) - 3)
        block = ls[i:i + rng.randint(2, 8)]
        rng.shuffle(block)
        ls[i:i + len(block)] = block
    else:
        ls.insert(rng.randrange(len(ls) + 1), ls[rng.randrange(len(ls))] + rng.choice((b"", b"x", b" 1", b"\xff")))
    return b"\n".join(ls)


def op_huge_line(rng, data):
    ls = _lines(data)
    ls.insert(rng.randrange(len(ls) + 1), rng.choice((b"a", b"\xe2\x96\x81", b"#", b"0", b" ")) * rng.choice((1000, 100_000)))
    return b"\n".join(ls)


LINE_OPS = (op_delete_line, op_duplicate_line, op_swap_lines, op_blank_line, op_swap_fields, op_line_separator,
            op_all_crlf, op_strip_final_newline, op_bom, op_splice_line, op_huge_line)


# -- tiktoken rank lines -------------------------------------------------------------

_RANK_VALUES = (b"-1", b"0", b"+7", b"007", b"1e3", b"0x10", b"4294967295", b"4294967296", b"2147483648",
                b"18446744073709551616", b"9" * 40, b"\xd9\xa3", b"1_000", b"", b"1.0", b"-0", b" 1")


def op_rank_edit(rng, data):
    ls = _lines(data)
    i = rng.randrange(len(ls))
    parts = ls[i].split(b" ")
    if len(parts) == 2:
        if rng.random() < 0.4:  # another line's rank: a duplicate
            other = _lines(data)[rng.randrange(len(ls))].split(b" ")
            parts[1] = other[-1]
        elif rng.random() < 0.3:
            parts[1] = str(int(parts[1]) + rng.choice((-1, 1, 1000, 10**6)) if parts[1].isdigit() else 3).encode()
        else:
            parts[1] = rng.choice(_RANK_VALUES)
    ls[i] = b" ".join(parts)
    return b"\n".join(ls)


def op_token_edit(rng, data):
    ls = _lines(data)
    i = rng.randrange(len(ls))
    parts = ls[i].split(b" ")
    if len(parts) == 2:
        tok = parts[0]
        choice = rng.randrange(9)
        if choice == 0:  # another line's token: a duplicate
            parts[0] = ls[rng.randrange(len(ls))].split(b" ")[0]
        elif choice == 1:
            parts[0] = tok.rstrip(b"=")  # padding removed
        elif choice == 2:
            parts[0] = b""
        elif choice == 3:
            parts[0] = rng.choice((b"=", b"====", b"A", b"AA=", b"A===", b"*", b"-_-_", b"AA==AA=="))
        elif choice == 4:
            k = _pos(rng, tok)
            parts[0] = tok[:k] + rng.choice((b"*", b"-", b"_", b"\xff", b"=", b"\r")) + tok[k:]
        elif choice == 5:
            parts[0] = tok.swapcase()
        elif choice == 6:
            parts[0] = base64.b64encode(rng.choice((b"", b"\x00", b"\xff" * 3, "▁".encode(), b"a" * 300)))
        elif choice == 7:
            parts.append(rng.choice((b"1", b"x", b"")))  # a third field
        else:
            with contextlib.suppress(ValueError):
                parts[0] = base64.urlsafe_b64encode(base64.b64decode(tok + b"=" * (-len(tok) % 4)))
    ls[i] = b" ".join(parts)
    return b"\n".join(ls)


# -- merges.txt ----------------------------------------------------------------------


def op_merge_edit(rng, data):
    ls = _lines(data)
    i = rng.randrange(len(ls))
    parts = ls[i].split(b" ")
    choice = rng.randrange(8)
    if choice == 0:
        ls[i] = b" ".join(parts + [parts[0]])  # three tokens
    elif choice == 1:
        ls[i] = parts[0]
    elif choice == 2:
        ls[i] = ls[i].replace(b" ", rng.choice((b"  ", b"\t", b"\xe2\x96\x81", b"")), 1)
    elif choice == 3:
        c = rng.choice(("中", " ", "\u2581", "\x00", "é", "Ġ", "\ufffd")).encode()
        k = _pos(rng, ls[i])
        ls[i] = ls[i][:k] + c + ls[i][k:]
    elif choice == 4:
        ls[i] = rng.choice((b"#version: 0.2", b"#version: 1.0", b"#", b"# comment", b"#version"))
    elif choice == 5 and len(parts) == 2:
        ls[i] = parts[1] + b" " + parts[0]
    elif choice == 6:
        ls.insert(i, ls[i])
    else:
        j = rng.randrange(len(ls))
        ls[i], ls[j] = ls[j], ls[i]
    return b"\n".join(ls)


# -- vocab.txt -------------------------------------------------------------------------


def op_vocab_line(rng, data):
    ls = _lines(data)
    i = rng.randrange(len(ls))
    choice = rng.randrange(9)
    if choice == 0:  # the special tokens BERT's template needs
        name = rng.choice((b"[UNK]", b"[CLS]", b"[SEP]", b"[PAD]", b"[MASK]"))
        ls = [ln for ln in ls if ln.rstrip(b"\r") != name] if rng.random() < 0.7 else ls + [name]
    elif choice == 1:
        ls[i] = ls[i] + rng.choice((b" ", b"\t", "\u3000".encode(), "\u0085".encode(), "\u2028".encode(), b"\x1c", b"\x0c"))
    elif choice == 2:
        ls[i] = rng.choice((b" ", b"\t", "\u3000".encode(), b"\x1f")) + ls[i]
    elif choice == 3:
        ls[i] = ls[i] + b"\r" + ls[i]
    elif choice == 4:
        ls[0:0] = [rng.choice((b"foo 12", b"{", b"GGUF", b"\x0a", b"IQ== 0", b"[PAD] 0", b"#version: 0.2"))]
    elif choice == 5:
        ls[i] = b"##" + ls[i] if not ls[i].startswith(b"##") else ls[i][2:]
    elif choice == 6:
        ls[i] = ls[i] * rng.choice((2, 50, 1000))
    elif choice == 7:
        ls[i] = ls[i].upper()
    else:
        ls[i] = rng.choice((b"##", b"#", b"", "\u0301".encode(), b"\x7f", "\U0001F600".encode()))
    return b"\n".join(ls)


# =====================================================================================
# JSON (tokenizer.json, vocab.json, tokenforge files)
# =====================================================================================


class Deep:
    """A value written as ``depth`` nested arrays (or objects)."""

    def __init__(self, depth: int, obj: bool = False):
        self.depth, self.obj = depth, obj


#: A dict key starting with this is written without it: an object with a key twice
#: (JSON allows it; readers differ on which one wins).
DUP = "\x00dup:"


class Raw:
    """A JSON token written as is (``NaN``, ``1e999``, ``-0``, ``1.0``)."""

    def __init__(self, text: str):
        self.text = text


def dump_json(value: Any, ascii_only: bool = True) -> str:
    out: list[str] = []

    def emit(v):
        if isinstance(v, Raw):
            out.append(v.text)
        elif isinstance(v, Deep):
            o, c = ('{"a":', "}") if v.obj else ("[", "]")
            out.append(o * v.depth + "0" + c * v.depth)
        elif isinstance(v, dict):
            out.append("{")
            for n, (k, x) in enumerate(v.items()):
                k = str(k).removeprefix(DUP)
                out.append(("," if n else "") + json.dumps(k, ensure_ascii=ascii_only) + ":")
                emit(x)
            out.append("}")
        elif isinstance(v, list):
            out.append("[")
            for n, x in enumerate(v):
                if n:
                    out.append(",")
                emit(x)
            out.append("]")
        else:
            out.append(json.dumps(v, ensure_ascii=ascii_only))

    emit(value)
    return "".join(out)


def _json_bytes(value: Any, rng: random.Random) -> bytes:
    return dump_json(value, ascii_only=rng.random() < 0.5).encode("utf-8", "surrogatepass")


_WEIRD_VALUES: tuple[Any, ...] = (
    None, True, False, 0, -1, 1, 2**31 - 1, 2**31, 2**32 - 1, 2**32, 2**53 + 1, 2**63, 2**64, -2**63, 10**30,
    1.5, -0.0, 1e308, 0.1, float("nan"), float("inf"), float("-inf"), "", "x", "0", "-1", "NaN", "null",
    [], {}, [0], [None], {"type": "x"}, "\u0000", "\ud800", "a" * 10_000, Raw("1.0"), Raw("1e999"), Raw("-0"),
    Raw("1E2"), Raw("Infinity"),
)


def _perturb(rng: random.Random, v: Any) -> Any:
    """A value near ``v``: same type mostly, the boundary cases of that type."""
    if isinstance(v, bool):
        return rng.choice((not v, 0, 1, "true", None))
    if isinstance(v, int):
        return rng.choice((v + 1, v - 1, -v - 1, v * 1000, 2**32 + v, float(v), str(v), -1, 2**32, 2**64, Raw(f"{v}.0"),
                           Raw(f"{v}e0"), float("nan")))
    if isinstance(v, float):
        return rng.choice((float("nan"), float("inf"), float("-inf"), -v, v * 1e300, 0.0, -0.0, int(v) if math.isfinite(v) else 0,
                           str(v), 3.4e38, 1e-45, -1e39))
    if isinstance(v, str):
        if not v:
            return rng.choice(("x", " ", "\u2581", "##", None))
        k = rng.randrange(len(v) + 1)
        return rng.choice((
            "", v + v, v[:k] + rng.choice((" ", "\u2581", "Ġ", "\x00", "é", "\ud800", "##", "<", "\\")) + v[k:],
            v[:k] + v[k + 1:], v.upper(), v.lower(), v[::-1], v + " ", " " + v, v * 1000,
        ))
    return rng.choice(_WEIRD_VALUES)


def _walk(rng: random.Random, root: Any) -> tuple[Any, Any] | None:
    """A (container, key) pair: down from the root, stopping early often (structure fields
    get as much attention as the thousands of vocabulary entries)."""
    node, parent, key = root, None, None
    depth = 0
    while isinstance(node, (dict, list)) and node:
        if parent is not None and rng.random() < (0.25 if depth < 2 else 0.45):
            break
        keys = list(node) if isinstance(node, dict) else range(len(node))
        k = rng.choice(list(keys))
        parent, key, node = node, k, node[k]
        depth += 1
    return None if parent is None else (parent, key)


def json_mutate(rng: random.Random, doc: Any) -> Any:
    """One structure-aware change to a parsed JSON document (in place where possible)."""
    at = _walk(rng, doc)
    if at is None:
        return rng.choice(_WEIRD_VALUES)
    parent, key = at
    value = parent[key]
    r = rng.random()
    if r < 0.30:
        parent[key] = _perturb(rng, value)
    elif r < 0.50:
        parent[key] = rng.choice(_WEIRD_VALUES)
    elif r < 0.55:
        parent[key] = Deep(rng.choice((50, 200, 1000, 5000, 100_000)), rng.random() < 0.5)
    elif r < 0.70 and isinstance(parent, dict):  # missing key, extra key, duplicated key, renamed key
        c = rng.randrange(4)
        if c == 0:
            del parent[key]
        elif c == 1:
            parent[rng.choice(("extra", "type", "id", "vocab", "merges", "model", "", str(key) + "_"))] = rng.choice(_WEIRD_VALUES)
        elif c == 2:
            parent[DUP + str(key)] = _perturb(rng, value)
        else:
            parent[str(key).upper() if str(key) != str(key).upper() else str(key) + "x"] = parent.pop(key)
    elif r < 0.85 and isinstance(value, list):
        c = rng.randrange(6)
        if c == 0 and value:
            del value[rng.randrange(len(value))]
        elif c == 1 and value:
            value.insert(rng.randrange(len(value) + 1), value[rng.randrange(len(value))])
        elif c == 2 and len(value) > 1:
            i, j = rng.randrange(len(value)), rng.randrange(len(value))
            value[i], value[j] = value[j], value[i]
        elif c == 3:
            del value[rng.randrange(len(value) + 1):]
        elif c == 4:
            value.reverse()
        else:
            value.append(rng.choice(_WEIRD_VALUES))
    elif r < 0.95 and isinstance(value, dict) and value:
        keys = list(value)
        c = rng.randrange(4)
        if c == 0:
            a, b = rng.choice(keys), rng.choice(keys)
            value[a], value[b] = value[b], value[a]
        elif c == 1:
            k = rng.choice(keys)
            value[_perturb(rng, k) if isinstance(k, str) else "x"] = value.pop(k)
        elif c == 2:
            value.clear()
        else:
            k = rng.choice(keys)
            value[k + "\u0301" if isinstance(k, str) else "y"] = value[k]
    else:
        if isinstance(parent, list):
            parent.insert(key, _perturb(rng, value))
        else:
            parent[key] = [value] if rng.random() < 0.5 else {"value": value}
    return doc


def op_json(rng, data):
    """One to three structure-aware changes to the document (a byte change when it no longer parses)."""
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError):
        return rng.choice(BYTE_OPS)(rng, data)
    for _ in range(rng.choice((1, 1, 1, 2, 3))):
        doc = json_mutate(rng, doc)
    return _json_bytes(doc, rng)


#: Valid HF components, to put in place of a file's own (the document still loads; the ids change).
HF_COMPONENTS: dict[str, tuple] = {
    "normalizer": (
        None, {"type": "NFC"}, {"type": "NFD"}, {"type": "NFKC"}, {"type": "NFKD"}, {"type": "Lowercase"},
        {"type": "StripAccents"}, {"type": "Strip", "strip_left": True, "strip_right": False},
        {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"},
        {"type": "Replace", "pattern": {"Regex": "\\s+"}, "content": " "}, {"type": "Prepend", "prepend": "\u2581"},
        {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True, "strip_accents": None,
         "lowercase": False},
        {"type": "Sequence", "normalizers": [{"type": "NFKC"}, {"type": "Lowercase"}]},
    ),
    "pre_tokenizer": (
        None, {"type": "Whitespace"}, {"type": "WhitespaceSplit"}, {"type": "BertPreTokenizer"},
        {"type": "Punctuation", "behavior": "Isolated"}, {"type": "Digits", "individual_digits": True},
        {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first", "split": True},
        {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        {"type": "Split", "pattern": {"Regex": "\\s+"}, "behavior": "Removed", "invert": False},
        {"type": "Split", "pattern": {"String": "o"}, "behavior": "MergedWithPrevious", "invert": False},
        {"type": "CharDelimiterSplit", "delimiter": "e"}, {"type": "UnicodeScripts"},
        {"type": "Sequence", "pretokenizers": [{"type": "WhitespaceSplit"}, {"type": "Digits", "individual_digits": False}]},
    ),
    "post_processor": (
        None, {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False, "use_regex": True},
        {"type": "TemplateProcessing", "single": [{"Sequence": {"id": "A", "type_id": 0}}],
         "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}], "special_tokens": {}},
    ),
    "decoder": (
        None, {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        {"type": "WordPiece", "prefix": "##", "cleanup": True}, {"type": "BPEDecoder", "suffix": "</w>"},
        {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True},
        {"type": "Sequence", "decoders": [{"type": "ByteFallback"}, {"type": "Fuse"}]},
        {"type": "CTC", "pad_token": "<pad>", "word_delimiter_token": "|", "cleanup": True},
    ),
}


def op_hf_component(rng, data):
    """A component (normalizer, pre-tokenizer, post-processor, decoder) swapped for another valid one,
    or a model setting changed to another valid value."""
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError):
        return data
    if not isinstance(doc, dict):
        return data
    if rng.random() < 0.7:
        key = rng.choice(list(HF_COMPONENTS))
        doc[key] = json.loads(json.dumps(rng.choice(HF_COMPONENTS[key])))
    elif isinstance(doc.get("model"), dict):
        model = doc["model"]
        key, values = rng.choice((("ignore_merges", (True, False)), ("byte_fallback", (True, False)),
                                  ("fuse_unk", (True, False)), ("unk_token", (None, "[UNK]", "<unk>", "a")),
                                  ("continuing_subword_prefix", (None, "##", "")), ("end_of_word_suffix", (None, "</w>")),
                                  ("max_input_chars_per_word", (1, 5, 100)), ("unk_id", (None, 0, 1, 2))))
        model[key] = rng.choice(values)
    return _json_bytes(doc, rng)


def op_json_text(rng, data):
    """A change of JSON syntax: trailing comma, comment, single quotes, number forms, a second document."""
    choice = rng.randrange(7)
    if choice == 0:
        i = data.rfind(b"}")
        return data[:i] + b",}" + data[i + 1:] if i > 0 else data
    if choice == 1:
        return b"// comment\n" + data
    if choice == 2:
        return data + rng.choice((b"{}", b"\n{}", b"\x00", b" garbage"))
    if choice == 3:
        k = data.find(b": ", _pos(rng, data))
        return data[:k] + b": NaN, \"x\"" + data[k + 1:] if k > 0 else data
    if choice == 4:
        return data.replace(b'"', b"'", rng.randint(1, 5))
    if choice == 5:
        return b"[" + data + b"]"
    return data.replace(b"0,", b"0.0,", rng.randint(1, 20))


def _native_rehash(rng: random.Random, data: bytes) -> bytes:
    """Recompute a tokenforge file's sha256 entries, so the change reaches the parts' readers."""
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError):
        return data
    if not isinstance(doc, dict) or not isinstance(doc.get("sha256"), dict):
        return data
    try:
        for part in list(doc["sha256"]):
            if part in doc:
                canonical = json.dumps(doc[part], sort_keys=True, separators=(",", ":"), ensure_ascii=False)
                doc["sha256"][part] = hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()
        return dump_json(doc, ascii_only=rng.random() < 0.5).encode("utf-8", "surrogatepass")
    except (ValueError, TypeError, RecursionError):
        return data


# =====================================================================================
# Protobuf (SentencePiece .model)
# =====================================================================================

# field number -> known sub-message, per message (ModelProto; SelfTestData.samples)
_PB_MESSAGES = {(): {1: "piece", 2: "trainer", 3: "normalizer", 4: "selftest", 5: "normalizer"}, ("selftest",): {1: "sample"}}


def _varint(value: int, extra: int = 0) -> bytes:
    if value < 0:
        value += 1 << 64
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    if extra:  # an overlong (still valid up to 10 bytes) encoding of the same value
        out.append(value | 0x80)
        out += b"\x80" * (extra - 1)
        out.append(0)
    else:
        out.append(value)
    return bytes(out)


def _read_varint(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(data) or shift > 63:
            raise ValueError("bad varint")
        b = data[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7


def parse_pb(data: bytes, kind: str = "model") -> list[list]:
    """A message as ``[[number, wire, value], ...]``; sub-messages this fuzzer knows are parsed
    too (``value`` a list), other length-delimited values stay bytes. Raises ValueError."""
    subs = {"model": _PB_MESSAGES[()], "selftest": _PB_MESSAGES[("selftest",)]}.get(kind, {})
    out, pos = [], 0
    while pos < len(data):
        key, pos = _read_varint(data, pos)
        num, wire = key >> 3, key & 7
        if wire == 0:
            v, pos = _read_varint(data, pos)
        elif wire == 1:
            v, pos = data[pos:pos + 8], pos + 8
        elif wire == 5:
            v, pos = data[pos:pos + 4], pos + 4
        elif wire == 2:
            n, pos = _read_varint(data, pos)
            v, pos = data[pos:pos + n], pos + n
            if num in subs:
                with contextlib.suppress(ValueError):
                    v = parse_pb(v, subs[num])
        else:
            raise ValueError("group")
        if pos > len(data):
            raise ValueError("truncated")
        out.append([num, wire, v])
    return out


@dataclass
class _Wire:
    """Where a serialized record's tag, varint value or length prefix sits."""

    kind: str  # "tag", "varint", "len"
    offset: int
    size: int
    value: int


def write_pb(msg: list[list], base: int = 0, marks: list[_Wire] | None = None) -> bytes:
    out = bytearray()
    for num, wire, v in msg:
        tag = _varint(num << 3 | wire)
        if marks is not None:
            marks.append(_Wire("tag", base + len(out), len(tag), num << 3 | wire))
        out += tag
        if wire == 0:
            v = v if isinstance(v, int) else 0
            enc = _varint(v)
            if marks is not None:
                marks.append(_Wire("varint", base + len(out), len(enc), v))
            out += enc
        elif wire == 2:
            if isinstance(v, list):
                probe = write_pb(v)
                pre = _varint(len(probe))
                inner_marks: list[_Wire] | None = [] if marks is not None else None
                body = write_pb(v, base + len(out) + len(pre), inner_marks)
                if marks is not None:
                    marks.append(_Wire("len", base + len(out), len(pre), len(body)))
                    marks.extend(inner_marks or [])
                out += pre + body
            else:
                v = v if isinstance(v, bytes) else str(v).encode()
                pre = _varint(len(v))
                if marks is not None:
                    marks.append(_Wire("len", base + len(out), len(pre), len(v)))
                out += pre + v
        elif wire in (1, 5):
            size = 8 if wire == 1 else 4
            out += v if isinstance(v, bytes) and len(v) == size else b"\x00" * size
        else:  # groups and invalid wire types: whatever bytes follow
            out += v if isinstance(v, bytes) else b""
    return bytes(out)


def _pb_get(msg: list[list], num: int) -> list[list]:
    return [r for r in msg if r[0] == num]


def _pb_set(msg: list[list], num: int, wire: int, value: Any) -> None:
    for r in msg:
        if r[0] == num:
            r[1], r[2] = wire, value
            return
    msg.append([num, wire, value])


def _f32(x: float) -> bytes:
    if math.isnan(x) or abs(x) <= 3.4028234663852886e38:
        return struct.pack("<f", x)
    return struct.pack("<f", math.copysign(math.inf, x))


_SCORES = (float("nan"), float("inf"), float("-inf"), 0.0, -0.0, -1e30, 1e30, 3.4e38, -3.4e38, 1e-45, 100.0, -100.0)
_PIECES = ("", "▁", "<unk>", "<s>", "</s>", "<0x41>", "<0x00>", "<0xZZ>", "<0x4>", "<0xff>", " ", "a b", "\x00",
           "▁▁▁▁", "a" * 300, "\u0301", "\U0001F600", "[CLS]", "##a")


def op_pb_piece(rng, msg):
    pieces = [r for r in msg if r[0] == 1 and isinstance(r[2], list)]
    if not pieces:
        return
    rec = rng.choice(pieces)[2]
    c = rng.randrange(9)
    if c == 0:
        _pb_set(rec, 3, 0, rng.choice((0, 1, 2, 3, 4, 5, 6, 7, 100, 2**31, 2**32 - 1, 2**64 - 1)))
    elif c == 1:
        _pb_set(rec, 2, 5, _f32(rng.choice(_SCORES)))
    elif c == 2:
        _pb_set(rec, 1, 2, rng.choice(_PIECES).encode("utf-8"))
    elif c == 3:
        other = rng.choice(pieces)[2]
        text = _pb_get(other, 1)
        if text:
            _pb_set(rec, 1, 2, text[0][2])  # a duplicate piece
    elif c == 4:
        _pb_set(rec, 1, 2, rng.choice((b"\xff", b"a\xc3", b"\xed\xa0\x80", b"\xc0\x80")))
    elif c == 5:
        num = rng.choice((1, 2, 3))
        rec[:] = [r for r in rec if r[0] != num]  # a missing field
    elif c == 6:
        rec.append(rng.choice(([1, 2, b"dup"], [2, 5, _f32(-1.0)], [3, 0, 3], [9, 0, 1], [15, 2, b"x"])))
    elif c == 7:  # a field with the wrong wire type
        r = rng.choice(rec) if rec else [1, 2, b"x"]
        if r[1] == 2:
            r[1], r[2] = 0, 1
        elif r[1] == 5:
            r[1], r[2] = 0, 7
        else:
            r[1], r[2] = 5, b"\x00\x00\x80\x7f"
    else:
        rec.append([rng.choice((1, 2, 3)), rng.choice((1, 3, 4, 6, 7)), b"\x00" * 8])


def op_pb_pieces(rng, msg):
    idx = [n for n, r in enumerate(msg) if r[0] == 1]
    if not idx:
        return
    c = rng.randrange(6)
    i = rng.choice(idx)
    if c == 0:
        del msg[i]
    elif c == 1:
        msg.insert(rng.choice(idx), _pb_copy(msg[i]))
    elif c == 2:
        j = rng.choice(idx)
        msg[i], msg[j] = msg[j], msg[i]
    elif c == 3:
        keep = set(rng.sample(idx, min(len(idx), rng.choice((1, 2, 3, 10)))))
        msg[:] = [r for n, r in enumerate(msg) if r[0] != 1 or n in keep]
    elif c == 4:  # every piece removed
        msg[:] = [r for r in msg if r[0] != 1]
    else:  # pieces after the specs (protobuf allows any order)
        moved = [msg[k] for k in idx[-rng.randint(1, min(20, len(idx))):]]
        msg[:] = [r for r in msg if not any(r is m for m in moved)] + moved


def _pb_copy(rec: list) -> list:
    return [rec[0], rec[1], [_pb_copy(r) for r in rec[2]] if isinstance(rec[2], list) else rec[2]]


def _spec(msg: list[list], num: int) -> list[list]:
    for r in msg:
        if r[0] == num and isinstance(r[2], list):
            return r[2]
    rec = [num, 2, []]
    msg.append(rec)
    return rec[2]


def op_pb_trainer(rng, msg):
    spec = _spec(msg, 2)
    c = rng.randrange(8)
    if c == 0:
        _pb_set(spec, 3, 0, rng.choice((0, 1, 2, 3, 4, 5, 99, 2**32 - 1)))  # model_type
    elif c == 1:
        _pb_set(spec, 35, 0, rng.choice((0, 1, 2)))  # byte_fallback
    elif c == 2:
        _pb_set(spec, rng.choice((40, 41, 42, 43)), 0, rng.choice((0, 1, 2, 3, 999, 10**6, 2**31 - 1, 2**64 - 1)))
    elif c == 3:
        _pb_set(spec, 4, 0, rng.choice((0, 1, 2**31 - 1, 2**64 - 1)))  # vocab_size
    elif c == 4:
        _pb_set(spec, 24, 0, 1)  # treat_whitespace_as_suffix
    elif c == 5:
        _pb_set(spec, rng.choice((44, 45, 46, 47, 48)), 2, rng.choice(("", "<unk>", "<s>", "x" * 100, "\u2047")).encode())
    elif c == 6:
        msg[:] = [r for r in msg if r[0] != 2]  # no trainer spec
    else:
        _pb_set(spec, rng.choice((10, 15, 51)), 5, _f32(rng.choice(_SCORES)))


def op_pb_normalizer(rng, msg):
    spec = _spec(msg, rng.choice((3, 3, 3, 5)))
    c = rng.randrange(8)
    blob_rec = _pb_get(spec, 2)
    blob = blob_rec[0][2] if blob_rec and isinstance(blob_rec[0][2], bytes) else b""
    if c == 0 and blob:
        _pb_set(spec, 2, 2, blob[:rng.randrange(len(blob))])
    elif c == 1 and blob:
        size = rng.choice((0, 1, 1023, 1024, len(blob), len(blob) - 4, 2**31, 2**32 - 1))
        _pb_set(spec, 2, 2, struct.pack("<I", size % 2**32) + blob[4:])
    elif c == 2 and blob:
        i = rng.randrange(len(blob))
        _pb_set(spec, 2, 2, blob[:i] + bytes([rng.randrange(256)]) + blob[i + 1:])
    elif c == 3:
        _pb_set(spec, 2, 2, rng.choice((b"", b"\x00", b"\x00\x04\x00\x00" + b"\x00" * 1024, os.urandom(0) + b"\xff" * 16)))
    elif c == 4:
        _pb_set(spec, rng.choice((3, 4, 5)), 0, rng.choice((0, 1, 2)))
    elif c == 5:
        _pb_set(spec, 1, 2, rng.choice((b"", b"identity", b"nfkc", b"nmt_nfkc", b"nmt_nfkc_cf", b"nfkc_cf", b"bogus")))
    elif c == 6:
        _pb_set(spec, 6, 2, rng.choice((b"41\t42\n", b"x", b"\t\t\n", b"zz\n")))  # normalization_rule_tsv
    else:
        msg[:] = [r for r in msg if r[0] != 3]


def op_pb_unknown(rng, msg):
    """Unknown fields, self-test data, a denormalizer, a second trainer spec."""
    c = rng.randrange(4)
    if c == 0:
        wire = rng.choice((0, 1, 2, 5))
        value = {0: 5, 1: b"\x00" * 8, 2: b"junk", 5: b"\x00" * 4}[wire]
        msg.insert(rng.randint(0, len(msg)), [rng.choice((6, 7, 100, 2**29 - 1)), wire, value])
    elif c == 1:
        msg.append([4, 2, [[1, 2, [[1, 2, b"hello"], [2, 2, b"\xe2\x96\x81he llo"]]]]])
    elif c == 2:
        msg.append([2, 2, [[3, 0, rng.choice((1, 2))]]])  # a second trainer spec: protobuf merges them
    else:
        msg.append([5, 2, [[1, 2, b"identity"]]])


PB_OPS = (op_pb_piece, op_pb_piece, op_pb_piece, op_pb_pieces, op_pb_trainer, op_pb_trainer, op_pb_normalizer,
          op_pb_unknown)


def _wire_edit(rng: random.Random, data: bytes, marks: list[_Wire], kinds: dict[str, Callable]) -> bytes:
    """Rewrite one recorded integer field of the serialized bytes."""
    marks = [m for m in marks if m.kind in kinds]
    if not marks:
        return data
    m = rng.choice(marks)
    new = kinds[m.kind](rng, m)
    return data[:m.offset] + new + data[m.offset + m.size:]


def _pb_varint_choice(rng: random.Random, m: _Wire) -> bytes:
    if m.kind == "len":
        v = rng.choice((m.value + 1, m.value - 1, m.value + 1000, 0, 2**31, 2**32 + m.value, 2**63, 2**64 - 1))
    elif m.kind == "tag":
        num, wire = m.value >> 3, m.value & 7
        v = rng.choice((num << 3 | rng.randrange(8), (num + rng.choice((1, 8, 1000))) << 3 | wire, wire, 2**32 + m.value))
    else:
        v = rng.choice((m.value + 1, 0, 1, 2**31, 2**32 - 1, 2**63, 2**64 - 1, rng.randrange(2**20)))
    v = max(0, min(v, 2**64 - 1))
    r = rng.random()
    if r < 0.15:
        return _varint(v, extra=rng.randint(1, 3))  # overlong
    if r < 0.2:
        return b"\xff" * 10 + b"\x01"  # longer than 10 bytes
    return _varint(v)


def mutate_model(rng: random.Random, data: bytes, log: list[str]) -> bytes:
    try:
        msg = parse_pb(data)
    except ValueError:
        log.append("byte")
        return rng.choice(BYTE_OPS)(rng, data)
    for _ in range(rng.choice((0, 1, 1, 2, 3))):
        snapshot = [_pb_copy(r) for r in msg]
        if _apply(rng.choice(PB_OPS), rng, msg, log) is msg and log[-1].endswith("!"):
            msg[:] = snapshot
    marks: list[_Wire] = []
    out = write_pb(msg, 0, marks)
    r = rng.random()
    if r < 0.35 or not log:
        out = _wire_edit(rng, out, marks, {"tag": _pb_varint_choice, "varint": _pb_varint_choice, "len": _pb_varint_choice})
        log.append("pb_wire")
    elif r < 0.5:
        out = _apply(rng.choice(BYTE_OPS), rng, out, log)
    return out


# =====================================================================================
# GGUF
# =====================================================================================

_GG_CODES = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "B", 10: "Q", 11: "q", 12: "d"}


@dataclass
class GGUF:
    version: int
    tensor_count: int
    kvs: list  # [(key, type, value, element type or None)], arrays of arrays as [(etype, list), ...]
    magic: bytes = b"GGUF"
    kv_count: int | None = None  # None: len(kvs)


def parse_gguf(data: bytes) -> GGUF:
    """A well-formed GGUF header (the fuzzer's own reader, for seeds and structured mutations)."""
    pos = 4
    version, tensor_count, n = struct.unpack_from("<IQQ", data, pos)
    pos += 20

    def string():
        nonlocal pos
        (k,) = struct.unpack_from("<Q", data, pos)
        s = data[pos + 8:pos + 8 + k].decode("utf-8")
        pos += 8 + k
        return s

    def value(t):
        nonlocal pos
        if t == 8:
            return string()
        if t == 9:
            et, count = struct.unpack_from("<IQ", data, pos)
            pos += 12
            if et in _GG_CODES:
                vals = list(struct.unpack_from(f"<{count}{_GG_CODES[et]}", data, pos))
                pos += struct.calcsize(f"<{count}{_GG_CODES[et]}")
                return (et, vals)
            return (et, [value(et) for _ in range(count)])
        (v,) = struct.unpack_from("<" + _GG_CODES[t], data, pos)
        pos += struct.calcsize(_GG_CODES[t])
        return bool(v) if t == 7 else v

    kvs = []
    for _ in range(n):
        key = string()
        (t,) = struct.unpack_from("<I", data, pos)
        pos += 4
        v = value(t)
        if t == 9:
            kvs.append((key, 9, v[1], v[0]))
        else:
            kvs.append((key, t, v, None))
    return GGUF(version, tensor_count, kvs)


def write_gguf(g: GGUF, marks: list[_Wire] | None = None) -> bytes:
    out = bytearray(g.magic)

    def mark(kind, size, value):
        if marks is not None:
            marks.append(_Wire(kind, len(out), size, value))

    mark("version", 4, g.version)
    out += struct.pack("<I", g.version % 2**32)
    mark("u64", 8, g.tensor_count)
    out += struct.pack("<Q", g.tensor_count % 2**64)
    n = len(g.kvs) if g.kv_count is None else g.kv_count
    mark("u64", 8, n)
    out += struct.pack("<Q", n % 2**64)

    def string(s):
        raw = s if isinstance(s, bytes) else str(s).encode("utf-8", "surrogatepass")
        mark("u64", 8, len(raw))
        out.extend(struct.pack("<Q", len(raw)) + raw)

    def value(t, v, et):
        if t == 8:
            string(v)
        elif t == 9:
            mark("type", 4, et)
            out.extend(struct.pack("<I", et % 2**32))
            mark("u64", 8, len(v))
            out.extend(struct.pack("<Q", len(v)))
            for x in v:
                if et == 9:
                    if isinstance(x, (tuple, list)) and len(x) == 2 and isinstance(x[1], (tuple, list)):
                        value(9, x[1], x[0])
                    else:  # a plain element of an array a mutation retyped to nested: an empty array
                        value(9, [], 0)
                else:
                    value(et, x, None)
        elif t in _GG_CODES:
            code = _GG_CODES[t]
            try:
                out.extend(struct.pack("<" + code, v))
            except (struct.error, TypeError):
                out.extend(b"\x00" * struct.calcsize(code))
        # an unknown type: no payload

    for key, t, v, et in g.kvs:
        string(key)
        mark("type", 4, t)
        out += struct.pack("<I", t % 2**32)
        value(t, v, et)
    return bytes(out)


_GG_MODELS = ("llama", "t5", "gpt2", "bert", "rwkv", "", "LLAMA", "none", "plamo2", "bpe")
_GG_PRE = ("default", "llama3", "gpt-2", "qwen2", "falcon", "deepseek-llm", "tekken", "chameleon", "kimi-k2",
           "superbpe", "", "bogus", "jina-v2-de", "starcoder", "o200k")


def op_gg_token_ids(rng, g):
    ids = [k for k, *_ in g.kvs if isinstance(k, str) and k.endswith("_token_id")]
    names = ("tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id", "tokenizer.ggml.unknown_token_id",
             "tokenizer.ggml.padding_token_id", "tokenizer.ggml.seperator_token_id", "tokenizer.ggml.cls_token_id",
             "tokenizer.ggml.mask_token_id", "tokenizer.ggml.fim_pre_token_id")
    key = rng.choice(ids + list(names))
    tokens = _gg_value(g, "tokenizer.ggml.tokens")
    n = len(tokens) if isinstance(tokens, list) else 0
    value = rng.choice((-1, 0, 1, n - 1, n, n + 1, 2**31 - 1, 2**32 - 1, 2**63 - 1, 3))
    t = rng.choice((4, 4, 5, 10, 11, 8, 6, 7))
    if t == 8:
        value = str(value)
    elif t in (4, 10):
        value %= 2 ** (32 if t == 4 else 64)
    elif t == 5:
        value = max(-2**31, min(value, 2**31 - 1))
    elif t == 6:
        value = float(value)
    elif t == 7:
        value = bool(value % 2)
    _gg_put(g, key, t, value, None)


def _gg_value(g: GGUF, key: str) -> Any:
    for k, _, v, _ in g.kvs:
        if k == key:
            return v
    return None


def _gg_put(g: GGUF, key: str, t: int, v: Any, et: int | None) -> None:
    for n, (k, *_rest) in enumerate(g.kvs):
        if k == key:
            g.kvs[n] = (key, t, v, et)
            return
    g.kvs.append((key, t, v, et))


def op_gg_arrays(rng, g):
    """tokens, scores, types and merges: lengths that disagree, bad entries, wrong element types."""
    key = rng.choice(("tokenizer.ggml.tokens", "tokenizer.ggml.scores", "tokenizer.ggml.token_type",
                      "tokenizer.ggml.merges", "tokenizer.ggml.precompiled_charsmap"))
    for n, (k, t, v, et) in enumerate(g.kvs):
        if k != key or t != 9:
            continue
        v = list(v)
        c = rng.randrange(9)
        if c == 0 and v:
            del v[rng.randrange(len(v)):]
        elif c == 1 and v:
            v.append(v[rng.randrange(len(v))])
        elif c == 2 and v:
            i = rng.randrange(len(v))
            if et == 8:
                v[i] = rng.choice(("", v[rng.randrange(len(v))], "a b c", "a", " ", "<0x41>", "<0xZZ>", "\u2581", "[CLS]",
                                   "x" * 5000, "Ġ Ġ", "a  b"))
            elif et == 6:
                v[i] = rng.choice(_SCORES)
            else:
                v[i] = rng.choice((-1, 0, 1, 2, 3, 4, 5, 6, 7, 100, 2**31 - 1, -2**31, 255, 256))
        elif c == 3:
            v = []
        elif c == 4 and v:  # strings as numbers, numbers as strings
            et = rng.choice((4, 5, 8, 6, 7, 10))
            v = [str(x) for x in v] if et == 8 else [0] * len(v)
        elif c == 5 and v:
            i, j = rng.randrange(len(v)), rng.randrange(len(v))
            v[i], v[j] = v[j], v[i]
        elif c == 6 and v:  # nested arrays
            g.kvs[n] = (k, 9, [(et, v[:3]), (et, v[3:6])], 9)
            return
        elif c == 7 and v and et == 8:
            i = rng.randrange(len(v))
            v[i] = v[i].encode("utf-8")[:-1] + b"\xff" if isinstance(v[i], str) and v[i] else b"\xc3"
        else:  # a scalar where an array belongs
            t = rng.choice((8, 4, 7))
            g.kvs[n] = (k, t, {8: "x", 4: 7, 7: True}[t], None)
            return
        g.kvs[n] = (k, t, v, et)
        return


def op_gg_strings(rng, g):
    c = rng.randrange(6)
    if c == 0:
        _gg_put(g, "tokenizer.ggml.model", 8, rng.choice(_GG_MODELS), None)
    elif c == 1:
        _gg_put(g, "tokenizer.ggml.pre", 8, rng.choice(_GG_PRE), None)
    elif c == 2:
        key = rng.choice(("tokenizer.ggml.add_bos_token", "tokenizer.ggml.add_eos_token",
                          "tokenizer.ggml.add_space_prefix", "tokenizer.ggml.remove_extra_whitespaces"))
        t = rng.choice((7, 7, 0, 8, 4))
        _gg_put(g, key, t, {7: rng.choice((True, False)), 0: rng.choice((0, 1, 2, 255)), 8: "true", 4: 1}[t], None)
    elif c == 3:
        key = rng.choice(("tokenizer.ggml.model", "tokenizer.ggml.pre", "general.name", "general.architecture"))
        t = rng.choice((4, 7, 9, 6))
        _gg_put(g, key, t, {4: 1, 7: True, 9: ["x"], 6: 1.0}[t], 8 if t == 9 else None)
    elif c == 4:
        _gg_put(g, "general.name", 8, rng.choice(("phi-3", "Phi3", "modern-bert", "", "x" * 1000, "\u0000")), None)
    else:
        _gg_put(g, "general.architecture", 8, rng.choice(("llama", "nomic-bert-moe", "bert", "")), None)


def op_gg_keys(rng, g):
    if not g.kvs:
        return
    c = rng.randrange(5)
    i = rng.randrange(len(g.kvs))
    if c == 0:
        del g.kvs[i]
    elif c == 1:
        g.kvs.insert(rng.randrange(len(g.kvs) + 1), g.kvs[i])  # a duplicate key
    elif c == 2:
        k, t, v, et = g.kvs[i]
        g.kvs[i] = (k + rng.choice(("x", ".", "\u00e9", "")), t, v, et) if isinstance(k, str) else (k, t, v, et)
    elif c == 3:
        key = rng.choice(("", "x", "tokenizer.ggml.extra", b"\xff", "tokenizer.ggml.tokens"))
        t, v, et = rng.choice(((4, 1, None), (8, "v", None), (9, [1, 2], 4), (9, ["a"], 8)))
        g.kvs.insert(rng.randrange(len(g.kvs) + 1), (key, t, v, et))
    else:
        j = rng.randrange(len(g.kvs))
        g.kvs[i], g.kvs[j] = g.kvs[j], g.kvs[i]


def op_gg_header(rng, g):
    c = rng.randrange(4)
    if c == 0:
        g.magic = rng.choice((b"GGUG", b"FUGG", b"ggml", b"GGU", b"\x00GGU"))
    elif c == 1:
        g.version = rng.choice((0, 1, 2, 3, 4, 3 << 24, 2**32 - 1))
    elif c == 2:
        g.tensor_count = rng.choice((0, 1, 2**32, 2**63, 2**64 - 1))
    else:
        g.kv_count = rng.choice((0, len(g.kvs) - 1, len(g.kvs) + 1, 2**32, 2**63, 2**64 - 1))


GG_OPS = (op_gg_token_ids, op_gg_token_ids, op_gg_arrays, op_gg_arrays, op_gg_arrays, op_gg_strings, op_gg_strings,
          op_gg_keys, op_gg_header)


def _gg_wire_choice(rng: random.Random, m: _Wire) -> bytes:
    if m.kind == "type":
        return struct.pack("<I", rng.choice((0, 1, 4, 6, 7, 8, 9, 10, 12, 13, 255, 2**32 - 1)))
    if m.kind == "version":
        return struct.pack("<I", rng.choice((1, 2, 4, 3 << 24)))
    v = rng.choice((m.value + 1, m.value - 1, m.value * 2, 0, 2**31, 2**32, 2**63, 2**64 - 1, 2**64 - 8))
    return struct.pack("<Q", v % 2**64)


def mutate_gguf(rng: random.Random, data: bytes, log: list[str]) -> bytes:
    try:
        g = parse_gguf(data)
    except (struct.error, UnicodeDecodeError, KeyError, ValueError):
        log.append("byte")
        return rng.choice(BYTE_OPS)(rng, data)
    for _ in range(rng.choice((0, 1, 1, 2, 3))):
        snapshot = (g.version, g.tensor_count, list(g.kvs), g.magic, g.kv_count)
        _apply(rng.choice(GG_OPS), rng, g, log)
        if log[-1].endswith("!"):
            g.version, g.tensor_count, g.kvs, g.magic, g.kv_count = snapshot
    marks: list[_Wire] = []
    out = write_gguf(g, marks)
    r = rng.random()
    if r < 0.3 or not log:
        out = _wire_edit(rng, out, marks, {"type": _gg_wire_choice, "u64": _gg_wire_choice, "version": _gg_wire_choice})
        log.append("gg_wire")
    elif r < 0.45:
        out = _apply(rng.choice(BYTE_OPS), rng, out, log)
    return out


# =====================================================================================
# Cases
# =====================================================================================

_TEXT_OPS: dict[str, tuple] = {
    "tiktoken": (op_rank_edit,) * 3 + (op_token_edit,) * 3 + LINE_OPS + BYTE_OPS,
    "bert_vocab": (op_vocab_line,) * 6 + LINE_OPS + BYTE_OPS,
    "merges": (op_merge_edit,) * 5 + LINE_OPS + BYTE_OPS,
    "json": (op_json,) * 10 + (op_json_text,) + BYTE_OPS + (op_truncate, op_delete_line, op_duplicate_line),
    "hf": (op_json,) * 10 + (op_hf_component,) * 4 + (op_json_text,) + BYTE_OPS + (op_truncate, op_delete_line),
}


@dataclass
class Case:
    fmt: str
    index: int
    seed: Seed
    files: dict[str, bytes]
    ops: list[str]


def _apply(op: Callable, rng: random.Random, target: Any, log: list[str]) -> Any:
    """``op(rng, target)``, logged; an op that raises (a fuzzer bug, not a finding) is logged
    as ``name!`` and leaves ``target`` as it was, so a long run goes on."""
    try:
        result = op(rng, target)
    except Exception:  # noqa: BLE001
        log.append(op.__name__ + "!")
        return target
    log.append(op.__name__)
    return result


def _text_mutate(rng: random.Random, data: bytes, ops: tuple, log: list[str]) -> bytes:
    for _ in range(rng.choice((1, 1, 1, 2, 2, 3))):
        data = _apply(rng.choice(ops), rng, data, log)
    return data


def make_case(fmt: str, index: int, seeds: dict[str, list[Seed]], seed: int = 0) -> Case:
    """Case ``index`` of ``fmt``: a seed and its mutation, the same for the same arguments."""
    rng = random.Random(f"{seed}/{fmt}/{index}")
    s = rng.choice(seeds[fmt])
    files = dict(s.files)
    log: list[str] = []
    if fmt == "tiktoken":
        (name,) = files
        files[name] = _text_mutate(rng, files[name], _TEXT_OPS["tiktoken"], log)
    elif fmt == "bert_vocab":
        files["vocab.txt"] = _text_mutate(rng, files["vocab.txt"], _TEXT_OPS["bert_vocab"], log)
    elif fmt == "gpt2":
        which = rng.choice(("vocab.json", "merges.txt", "both"))
        if which in ("vocab.json", "both"):
            files["vocab.json"] = _text_mutate(rng, files["vocab.json"], _TEXT_OPS["json"], log)
        if which in ("merges.txt", "both"):
            files["merges.txt"] = _text_mutate(rng, files["merges.txt"], _TEXT_OPS["merges"], log)
    elif fmt in ("hf", "tokenforge"):
        (name,) = files
        data = _text_mutate(rng, files[name], _TEXT_OPS["hf"], log)
        if fmt == "tokenforge" and rng.random() < 0.75:
            data = _native_rehash(rng, data)
            log.append("rehash")
        files[name] = data
    elif fmt == "sentencepiece":
        (name,) = files
        files[name] = mutate_model(rng, files[name], log)
    elif fmt == "gguf":
        (name,) = files
        files[name] = mutate_gguf(rng, files[name], log)
    else:
        raise ValueError(f"unknown format {fmt!r}")
    return Case(fmt, index, s, files, log)


# =====================================================================================
# Running one case (in a forked child)
# =====================================================================================


def _policy(reference: str | None) -> dict[str, Any]:
    """The special-token policy under which tokenforge's ids are the reference's (tests/_differential.py)."""
    if reference in ("hf", "bert"):
        return {"allowed_special": "all"}
    return {"disallowed_special": ()}


def _encode_all(encode: Callable[[str], Any]) -> list:
    """Per text: ``["ids", [...]]``, ``["error", "Type: message"]`` (a TokenforgeError for tokenforge,
    anything for a reference) or ``["fail", traceback]`` (tokenforge, any other exception)."""
    from tokenforge.errors import TokenforgeError

    out = []
    for text in TEXTS:
        try:
            ids = encode(text)
            out.append(["ids", [int(i) for i in ids]])
        except TokenforgeError as exc:
            out.append(["error", f"{type(exc).__name__}: {str(exc)[:300]}"])
        except MemoryError:
            out.append(["fail", "MemoryError"])
        except BaseException as exc:  # noqa: BLE001 (a Rust panic is a BaseException)
            out.append(["fail", "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))[-3000:]])
    return out


def _run_tokenforge(case_dir: Path, seed: Seed) -> dict[str, Any]:
    import tokenforge
    from tokenforge.errors import TokenforgeError

    target = case_dir / seed.target if seed.target else case_dir
    try:
        tok = tokenforge.load(target, **seed.kwargs)
    except TokenforgeError as exc:
        msg = str(exc)
        names = [str(target)] + [str(case_dir / f) for f in seed.files]
        return {"outcome": "error", "type": type(exc).__name__, "message": msg[:2000],
                "named": any(n in msg for n in names)}
    except MemoryError:
        return {"outcome": "oom", "type": "MemoryError", "message": ""}
    except BaseException as exc:  # noqa: BLE001
        return {"outcome": "exception", "type": type(exc).__name__, "message": str(exc)[:2000],
                "traceback": "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))[-6000:]}
    policy = _policy(seed.reference)
    encoded = _encode_all(lambda t: tok.encode(t, **policy))
    decoded = []
    for kind, ids in encoded:
        if kind != "ids":
            continue
        try:
            tok.decode(ids)
        except TokenforgeError:
            pass
        except BaseException as exc:  # noqa: BLE001
            decoded.append("".join(traceback.format_exception(type(exc), exc, exc.__traceback__))[-3000:])
    return {"outcome": "loaded", "encoded": encoded, "decode_failures": decoded}


def _reference(case_dir: Path, seed: Seed) -> Callable[[str], list[int]]:
    """Load the case's files with the reference library; raises whatever it raises."""
    ref = seed.reference
    if ref == "tiktoken":
        os.environ["TIKTOKEN_CACHE_DIR"] = ""  # read the file itself, never a cached copy
        import tiktoken
        from tiktoken.load import load_tiktoken_bpe

        ranks = load_tiktoken_bpe(str(case_dir / seed.target))
        enc = tiktoken.Encoding("fuzz", pat_str=tiktoken_pattern(seed.ref_args["pattern"]), mergeable_ranks=ranks,
                                special_tokens={})
        return enc.encode_ordinary
    if ref == "hf":
        from tokenizers import Tokenizer

        hf = Tokenizer.from_str((case_dir / seed.target).read_bytes().decode("utf-8"))
        return lambda t: hf.encode(t).ids
    if ref == "hf_bpe":
        from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers

        from tokenforge.pretokenizers import PATTERNS

        hf = Tokenizer(models.BPE.from_file(str(case_dir / "vocab.json"), str(case_dir / "merges.txt")))
        hf.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(PATTERNS["gpt2"]), "isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ])
        hf.decoder = decoders.ByteLevel()
        return lambda t: hf.encode(t).ids
    if ref == "bert":
        from tokenizers import BertWordPieceTokenizer

        hf = BertWordPieceTokenizer(str(case_dir / seed.target), lowercase=True)
        return lambda t: hf.encode(t).ids
    if ref == "sentencepiece":
        import sentencepiece as spm

        sp = spm.SentencePieceProcessor()
        sp.LoadFromSerializedProto((case_dir / seed.target).read_bytes())
        return sp.encode
    raise ValueError(ref)


def _run_reference(case_dir: Path, seed: Seed) -> dict[str, Any]:
    try:
        encode = _reference(case_dir, seed)
    except BaseException as exc:  # noqa: BLE001 (pyo3 panics are BaseExceptions)
        return {"loaded": False, "message": f"{type(exc).__name__}: {str(exc)[:500]}"}
    return {"loaded": True, "encoded": _encode_all(encode)}


def _data_in_use() -> int:
    """Bytes of this process's data segment and private mappings (``VmData``), 0 if unknown."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmData:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _child(conn, case_dir: str, seed: Seed, memory_mb: int) -> None:
    log = os.open(os.path.join(case_dir, ".child.log"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o644)
    os.dup2(log, 1)
    os.dup2(log, 2)
    import faulthandler

    # a crash's Python traceback goes to the log, hence into the report (not to a handler
    # the parent set up, such as pytest's)
    faulthandler.enable(file=os.fdopen(log, "w", closefd=False))
    # Bound the memory a load may take on top of what the forked child already holds: the data
    # limit (heap and private mappings), not the address space, so a parent that reserved a lot
    # of address space (Ray, Arrow) cannot leave the child's stack unable to grow.
    limit = _data_in_use() + memory_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))
    d = Path(case_dir)
    conn.send(("tf", _run_tokenforge(d, seed)))
    if seed.reference is not None:
        conn.send(("ref", _run_reference(d, seed)))
    conn.close()


@dataclass
class Result:
    case: Case
    outcome: str  # "error", "loaded" or a failure kind
    tf: dict[str, Any] | None = None
    ref: dict[str, Any] | None = None
    detail: str = ""
    seconds: float = 0.0

    @property
    def failed(self) -> bool:
        return self.outcome in FAILURE_KINDS

    @property
    def ref_loaded(self) -> bool:
        return bool(self.ref and self.ref.get("loaded"))


def _judge(case: Case, tf: dict | None, ref: dict | None, exitcode: int | None, timed_out: bool, log: str,
           timeout: float = TIMEOUT) -> Result:
    if tf is None:
        if timed_out:
            return Result(case, "hang", detail=f"no result within {timeout:g} s")
        shown = log if len(log) <= 4500 else log[:1500] + "\n[...]\n" + log[-3000:]
        if exitcode is not None and exitcode < 0:
            import signal

            name = signal.Signals(-exitcode).name if -exitcode in signal.valid_signals() else str(-exitcode)
            return Result(case, "crash", detail=f"killed by {name}\n{shown}")
        return Result(case, "crash", detail=f"exit code {exitcode} without a result\n{shown}")
    kind = tf["outcome"]
    if kind == "oom":
        return Result(case, "oom", tf, ref, "MemoryError")
    if kind == "exception":
        return Result(case, "exception", tf, ref, tf["traceback"])
    if kind == "error":
        if not tf["named"]:
            return Result(case, "unnamed", tf, ref, f"{tf['type']}: {tf['message']}")
        return Result(case, "error", tf, ref)
    problems = [f"encode: {v}" for k, v in tf["encoded"] if k == "fail"] + [f"decode: {t}" for t in tf["decode_failures"]]
    if problems:
        return Result(case, "encode", tf, ref, "\n".join(problems)[:6000])
    if ref and ref.get("loaded"):
        diffs = []
        for text, (k1, v1), (k2, v2) in zip(TEXTS, tf["encoded"], ref["encoded"]):
            if k2 != "ids":
                continue  # the reference cannot encode it: nothing to compare
            if k1 != "ids" or v1 != v2:
                diffs.append(f"{text!r}: tokenforge {v1 if k1 == 'ids' else k1 + ' ' + str(v1)} != reference {v2}")
        if diffs:
            return Result(case, "mismatch", tf, ref, "\n".join(diffs)[:6000])
    return Result(case, "loaded", tf, ref)


class _Running:
    def __init__(self, case: Case, workdir: Path, memory_mb: int, timeout: float):
        self.case = case
        self.dir = Path(tempfile.mkdtemp(prefix=f"{case.fmt}-{case.index}-", dir=workdir))
        for name, data in case.files.items():
            (self.dir / name).write_bytes(data)
        ctx = multiprocessing.get_context("fork")
        self.conn, child_conn = ctx.Pipe(duplex=False)
        self.proc = ctx.Process(target=_child, args=(child_conn, str(self.dir), case.seed, memory_mb), daemon=True)
        self.start = time.monotonic()
        self.proc.start()
        child_conn.close()
        self.deadline = self.start + timeout
        self.timeout = timeout
        self.tf: dict | None = None
        self.ref: dict | None = None
        self.done = False
        self.timed_out = False

    def pump(self) -> None:
        """Read what the child sent; note its end."""
        while not self.done and self.conn.poll():
            try:
                kind, payload = self.conn.recv()
            except (EOFError, OSError):
                self.done = True
                break
            if kind == "tf":
                self.tf = payload
                self.deadline = time.monotonic() + self.timeout  # the reference's own time
            else:
                self.ref = payload
                self.done = True
        if not self.done and time.monotonic() > self.deadline:
            self.timed_out = self.tf is None
            self.done = True

    def finish(self) -> Result:
        if self.proc.is_alive():
            if self.tf is not None and (self.ref is not None or self.case.seed.reference is None):
                self.proc.join(2)
            if self.proc.is_alive():
                self.proc.kill()
        self.proc.join()
        self.conn.close()
        log = ""
        with contextlib.suppress(OSError):
            log = (self.dir / ".child.log").read_text(errors="replace")
        r = _judge(self.case, self.tf, self.ref, self.proc.exitcode, self.timed_out, log, self.timeout)
        r.seconds = time.monotonic() - self.start
        return r


def run_cases(cases: Iterable[Case], *, jobs: int = 1, memory_mb: int = MEMORY_MB, timeout: float = TIMEOUT,
              workdir: Path | None = None, keep: Callable[[Result, Path], None] | None = None,
              stop: Callable[[], bool] | None = None) -> Iterable[Result]:
    """Run each case in its own forked child, ``jobs`` at a time; yield the results as they end."""
    own = workdir is None
    workdir = Path(tempfile.mkdtemp(prefix="tokenforge-format-fuzz-")) if own else workdir
    running: list[_Running] = []
    it = iter(cases)
    exhausted = False
    try:
        while running or not exhausted:
            while not exhausted and len(running) < jobs and not (stop and stop()):
                try:
                    running.append(_Running(next(it), workdir, memory_mb, timeout))
                except StopIteration:
                    exhausted = True
            if stop and stop():
                exhausted = True
            if not running:
                break
            wait = max(0.0, min(r.deadline for r in running) - time.monotonic())
            multiprocessing.connection.wait([r.conn for r in running] + [r.proc.sentinel for r in running],
                                            timeout=min(wait, 1.0) + 0.01)
            for r in list(running):
                r.pump()
                if not r.done and not r.proc.is_alive():
                    r.pump()  # the last message may have come with the exit
                    r.done = True
                if r.done:
                    running.remove(r)
                    result = r.finish()
                    if keep is not None and result.failed:
                        keep(result, r.dir)
                    shutil.rmtree(r.dir, ignore_errors=True)
                    yield result
    finally:
        for r in running:
            with contextlib.suppress(Exception):
                r.proc.kill()
                r.proc.join()
            shutil.rmtree(r.dir, ignore_errors=True)
        if own:
            shutil.rmtree(workdir, ignore_errors=True)


def run_case(case: Case, **kwargs) -> Result:
    """One case, in a forked child (see :func:`run_cases`)."""
    return next(iter(run_cases([case], **kwargs)))


# =====================================================================================
# Campaigns, summary, CLI
# =====================================================================================


@dataclass
class Stats:
    runs: int = 0
    errors: int = 0
    loads: int = 0
    ref_agree: int = 0
    ref_refused: int = 0  # tokenforge loaded, the reference did not
    ref_loads_we_refuse: int = 0  # tokenforge refused, the reference loaded
    failures: Counter = field(default_factory=Counter)
    seconds: float = 0.0
    #: a few cases where tokenforge and the reference disagree on loading (not failures)
    disagreements: dict = field(default_factory=lambda: {"ref refuses": [], "we refuse, ref loads": []})

    def add(self, r: Result) -> None:
        self.runs += 1
        self.seconds += r.seconds
        if r.failed:
            self.failures[r.outcome] += 1
        if r.outcome == "error":
            self.errors += 1
            if r.ref_loaded:
                self.ref_loads_we_refuse += 1
                self._example("we refuse, ref loads", r, r.tf["message"])
        if r.outcome in ("loaded", "mismatch", "encode"):
            self.loads += 1
            if r.case.seed.reference is not None and r.ref is not None:
                if r.ref_loaded and r.outcome == "loaded":
                    self.ref_agree += 1
                elif not r.ref_loaded:
                    self.ref_refused += 1
                    self._example("ref refuses", r, r.ref.get("message", ""))

    def _example(self, kind: str, r: Result, message: str) -> None:
        if len(self.disagreements[kind]) < 25:
            c = r.case
            self.disagreements[kind].append(f"#{c.index} {c.seed.name} [{', '.join(c.ops)}]: {message[:300]}")


def summary_table(stats: dict[str, Stats]) -> str:
    head = ["format", "runs", "clean errors", "loads", "ref agree", "ref refuses", "we refuse, ref loads",
            *FAILURE_KINDS, "s/run"]
    rows = [head]
    for fmt, s in stats.items():
        rows.append([fmt, str(s.runs), str(s.errors), str(s.loads), str(s.ref_agree), str(s.ref_refused),
                     str(s.ref_loads_we_refuse), *(str(s.failures[k]) for k in FAILURE_KINDS),
                     f"{s.seconds / max(1, s.runs):.3f}"])
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    lines = [" | ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths))) for r in rows]
    lines.insert(1, "-+-".join("-" * w for w in widths))
    return "\n".join(lines)


def save_failure(result: Result, case_dir: Path, out: Path, seed: int) -> Path:
    """Copy a failing case's files to ``out/<format>/<kind>-<index>/`` with ``case.json``."""
    c = result.case
    dest = out / c.fmt / f"{result.outcome}-{c.index:06d}"
    dest.mkdir(parents=True, exist_ok=True)
    for name in c.files:
        shutil.copyfile(case_dir / name, dest / name)
    target = dest / c.seed.target if c.seed.target else dest
    info = {
        "format": c.fmt, "case": c.index, "fuzz_seed": seed, "corpus_seed": c.seed.name, "mutations": c.ops,
        "outcome": result.outcome, "detail": result.detail,
        "replay": f"python fuzz/formats.py --format {c.fmt} --seed {seed} --case {c.index}",
        "load": f"tokenforge.load({str(target)!r}{''.join(f', {k}={v!r}' for k, v in c.seed.kwargs.items())})",
        "tokenforge": result.tf, "reference": result.ref,
    }
    (dest / "case.json").write_text(json.dumps(info, indent=1, ensure_ascii=False, default=str) + "\n")
    return dest


def fuzz(formats: Iterable[str] = FORMATS, *, seed: int = 0, runs: int | None = None, seconds: float | None = None,
         jobs: int = 1, out: Path | None = None, use_shared: bool = True, seeds: dict[str, list[Seed]] | None = None,
         memory_mb: int = MEMORY_MB, timeout: float = TIMEOUT, start: int = 0,
         report: Callable[[Result], None] | None = None) -> tuple[dict[str, Stats], list[Result]]:
    """Run mutations round-robin over ``formats`` until each has had ``runs`` (cases
    ``start .. start + runs - 1``) or ``seconds`` have passed. Returns the statistics per
    format and the failing results (their inputs saved under ``out`` when given)."""
    formats = list(formats)
    if runs is None and seconds is None:
        raise ValueError("give runs=, seconds= or both")
    # The mutators parse deeply nested JSON themselves: with a recursion limit a host program
    # raised, json's C decoder could overflow the C stack. Children inherit the default too.
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(min(limit, 1000))
    try:
        return _fuzz(formats, seed=seed, runs=runs, seconds=seconds, jobs=jobs, out=out, use_shared=use_shared,
                     seeds=seeds, memory_mb=memory_mb, timeout=timeout, start=start, report=report)
    finally:
        sys.setrecursionlimit(limit)


def _fuzz(formats, *, seed, runs, seconds, jobs, out, use_shared, seeds, memory_mb, timeout, start, report):
    seeds = seeds or build_seeds(formats, use_shared=use_shared)
    t_end = None if seconds is None else time.monotonic() + seconds

    def cases():
        i = start
        while runs is None or i < start + runs:
            for fmt in formats:
                yield make_case(fmt, i, seeds, seed)
            i += 1

    stats = {fmt: Stats() for fmt in formats}
    failures = []

    def keep(result: Result, case_dir: Path) -> None:
        if out is not None:
            save_failure(result, case_dir, out, seed)

    stop = (lambda: time.monotonic() > t_end) if t_end is not None else None
    for r in run_cases(cases(), jobs=jobs, memory_mb=memory_mb, timeout=timeout, keep=keep, stop=stop):
        stats[r.case.fmt].add(r)
        if r.failed:
            failures.append(r)
        if report is not None:
            report(r)
    return stats, failures


def check_seeds(seeds: dict[str, list[Seed]], **kwargs) -> list[Result]:
    """Every seed, unmutated: each must load and, where a reference exists, the reference
    must load it too and give the same ids (else the oracle itself is wrong)."""
    cases = [Case(fmt, -1 - n, s, dict(s.files), ["seed"]) for fmt, ss in seeds.items() for n, s in enumerate(ss)]
    bad = []
    for r in run_cases(cases, **kwargs):
        if r.outcome != "loaded" or (r.case.seed.reference is not None and not r.ref_loaded):
            if not r.detail:
                r.detail = json.dumps({"tokenforge": r.tf, "reference": r.ref}, default=str)[:3000]
            bad.append(r)
    return bad


def _describe(r: Result) -> str:
    c = r.case
    return f"[{c.fmt} #{c.index} {r.outcome}] seed file {c.seed.name}, mutations {', '.join(c.ops)}"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Seeded fuzzing of tokenforge.load, format by format.")
    p.add_argument("--seconds", type=float, help="time budget for the whole run (round-robin over the formats)")
    p.add_argument("--runs", type=int, help="mutations per format")
    p.add_argument("--seed", type=int, default=0, help="fuzz seed (default 0): the same seed gives the same cases")
    p.add_argument("--format", action="append", choices=FORMATS, help="only this format (repeatable)")
    p.add_argument("--out", type=Path, help="write failing inputs here (one folder each, with case.json)")
    p.add_argument("--jobs", type=int, default=1, help="children at a time (default 1)")
    p.add_argument("--start", type=int, default=0, help="first case number (default 0)")
    p.add_argument("--case", type=int, help="run only this case number (with --format) and show it in full")
    p.add_argument("--no-shared", action="store_true", help="seed only from the repository's files, not shared/data")
    p.add_argument("--memory-mb", type=int, default=MEMORY_MB, help=f"address-space limit per child (default {MEMORY_MB})")
    p.add_argument("--timeout", type=float, default=TIMEOUT, help=f"seconds per load (default {TIMEOUT:g})")
    p.add_argument("--list-seeds", action="store_true", help="print the seed corpus and exit")
    p.add_argument("--check-seeds", action="store_true",
                   help="load every unmutated seed (and its reference) and exit: all must load and agree")
    p.add_argument("-v", "--verbose", action="store_true", help="print every case")
    p.add_argument("--show-disagreements", action="store_true",
                   help="list cases one side loads and the other refuses (not failures: tokenforge may be stricter)")
    args = p.parse_args(argv)
    formats = args.format or list(FORMATS)
    t0 = time.monotonic()
    seeds = build_seeds(formats, use_shared=not args.no_shared)
    print(f"seed corpus built in {time.monotonic() - t0:.1f} s: "
          + ", ".join(f"{f} {len(s)}" for f, s in seeds.items()), flush=True)
    if args.list_seeds:
        for fmt, ss in seeds.items():
            for s in ss:
                sizes = ", ".join(f"{n} {len(b):,} B" for n, b in s.files.items())
                print(f"{fmt:14} {s.name:44} {sizes}  reference={s.reference}")
        return 0
    if args.check_seeds:
        bad = check_seeds(seeds, jobs=args.jobs, memory_mb=args.memory_mb, timeout=args.timeout)
        for r in bad:
            print(f"seed {r.case.fmt}/{r.case.seed.name}: {r.outcome}\n    {r.detail[:2000]}")
        print(f"{sum(map(len, seeds.values())) - len(bad)} of {sum(map(len, seeds.values()))} seeds load and agree")
        return 1 if bad else 0
    if args.case is not None:
        if len(formats) != 1:
            p.error("--case needs one --format")
        case = make_case(formats[0], args.case, seeds, args.seed)
        out = args.out or Path(tempfile.mkdtemp(prefix="tokenforge-format-case-"))
        r = run_case(case, memory_mb=args.memory_mb, timeout=args.timeout)
        print(_describe(r))
        print(json.dumps({"tokenforge": r.tf, "reference": r.ref}, indent=1, ensure_ascii=False, default=str)[:20000])
        if r.detail:
            print(r.detail)
        dest = out / case.fmt / f"case-{case.index:06d}"
        dest.mkdir(parents=True, exist_ok=True)
        for name, data in case.files.items():
            (dest / name).write_bytes(data)
        print(f"files: {dest}")
        return 1 if r.failed else 0
    if args.runs is None and args.seconds is None:
        p.error("give --seconds, --runs or both")

    def report(r: Result) -> None:
        if r.failed:
            print(_describe(r), flush=True)
            print("    " + r.detail.strip().replace("\n", "\n    ")[-1500:], flush=True)
        elif args.verbose:
            print(_describe(r), flush=True)

    stats, failures = fuzz(formats, seed=args.seed, runs=args.runs, seconds=args.seconds, jobs=args.jobs, out=args.out,
                           seeds=seeds, memory_mb=args.memory_mb, timeout=args.timeout, start=args.start,
                           report=report)
    if args.show_disagreements:
        for fmt, st in stats.items():
            for kind, examples in st.disagreements.items():
                if examples:
                    print(f"\n{fmt}: {kind} (first {len(examples)})")
                    for e in examples:
                        print("   ", e.replace("\n", " "))
    print()
    print(summary_table(stats))
    print(f"\n{sum(s.runs for s in stats.values())} runs in {time.monotonic() - t0:.0f} s, {len(failures)} failures"
          + (f" (inputs in {args.out})" if failures and args.out else ""))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

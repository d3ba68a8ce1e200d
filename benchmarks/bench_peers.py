"""tokenforge beside every fast tokenizer library, for every tokenizer family, on the
same texts, with ids checked before anything is timed.

Libraries (each loads the tokenizer offline; how, per library: ``_peers.py``,
section "Adapters by tokenizer file"): tokenforge, the references tiktoken, HF
tokenizers and sentencepiece, and the peers gigatoken, quicktok, fastokens,
splintr (splintr-rs), riptoken, bpe-openai, rs-bpe, wordchipper, kitoken, tokie
and nanotoken. They are benchmark-only (``pip install '.[bench]'`` brings the
references; the peers are not tokenforge dependencies)::

    pip install gigatoken quicktok-v1 fastokens splintr-rs riptoken bpe-openai rs-bpe \\
        wordchipper kitoken tokie nanotoken

A peer that is not installed or cannot load a tokenizer is listed with the reason.

**Tokenizers** (rows; each is one file tokenforge loads, checked against the
library that defines its ids):

==================  ============================================  =============
family              file                                          reference
==================  ============================================  =============
byte-level BPE      cl100k_base.tiktoken, o200k_base.tiktoken,    tiktoken
                    Llama 3 ``tokenizer.model`` (a rank file),
                    qwen.tiktoken
byte-level BPE      Llama 3 ``tokenizer.json``, Qwen2             tokenizers
                    ``tokenizer.json``
WordPiece           bert-base-uncased ``vocab.txt``               tokenizers (BertWordPieceTokenizer)
WordPiece           bert-base-uncased ``tokenizer.json``          tokenizers
Unigram             ALBERT ``spiece.model``                       sentencepiece
Unigram             ALBERT ``tokenizer.json``                     tokenizers
SentencePiece BPE   Llama 2 / Mistral v0.1 ``tokenizer.model``    sentencepiece
SentencePiece BPE   the same as ``tokenizer.json``                tokenizers
==================  ============================================  =============

The ``tokenizer.json`` files that ``shared/data`` does not hold are made once
(cached in ``--cache-dir``) from files it does, the way their publishers made
them: Llama 3, cl100k_base and o200k_base by transformers' ``TikTokenConverter``
(as Meta's Llama 3 ``tokenizer.json`` was; ``ignore_merges``); Qwen2 from its
``vocab.json`` + ``merges.txt`` with Qwen2's NFC normalizer, split pattern and
byte-level steps; Llama 2 from the ``.model`` as transformers' ``LlamaConverter``
builds it (legacy Llama: ``Prepend('▁')`` + ``Replace(' ', '▁')``, byte-fallback
BPE with the merges of ``generate_merges``). The cl100k/o200k files exist only
so that HF tokenizers, tokie and kitoken can join those rows. Whether each file
gives the reference's ids is checked like any peer.

**Texts** (held out from every tokenizer's training: public-domain books, the
Debian reference, manual pages and the Python standard library). Per language a
pool of whole files (English: ``tinystories_valid_sample.txt``, ``botchan.txt``,
``tinyshakespeare.txt``, ``corpus.en``, ``debian-reference-en.txt``; Chinese:
``hongloumeng.txt``, ``xiyouji.txt``; Japanese: ``wagahaiwa_nekodearu.txt``,
``debian-reference-ja.txt``, ``manpages-ja_rendered.txt``; code: top-level stdlib
``*.py`` files in name order) is cut at line ends into 8 KB blocks, which are dealt
in turn to each mode's ``--repeats`` parts (``--size``, 1 MB, per mode in all) and
warm-up text (a third of a part): deterministic, and no two parts share a line.
Worst cases (parts of ``--worst-size``, 1 MB, ``--worst-parts`` of them): one letter
repeated (another letter per part), spaces (another length per part), minified
JSON records (another seed per part), and English text with all whitespace
removed (other blocks per part); their warm-up holds a 100 KB+ piece, so one-time
set-up for huge pieces is not in the parts.

**Modes** (MB/s of UTF-8 input, 1 MB = 10**6 bytes, single thread unless said):

* ``doc``: a part in one call.
* ``line``: every non-empty line of a part (line end removed) in its own call, in a Python loop.
* ``batch``: a part cut at line ends into documents of ~``--doc-bytes`` (1 KB), in the
  library's batch call on all cores (2 here). tokenforge runs it on 2 threads and, as
  a second instance (``tokenforge 1t``), on 1; ``b2/b1`` is its speed-up.
* worst cases: ``doc`` only.

Single-thread means one core: the ``doc``, ``line`` and worst-case cells run in a process
pinned to one core (``os.sched_setaffinity``), because some libraries spread one long
text over threads of their own (gigatoken, fastokens, tokie: CPU time up to 2x wall time
on 2 cores, whatever ``RAYON_NUM_THREADS`` says); the ``batch`` cells run in another
process with every core.

Each library is timed in its fastest form of usable ids (list, or uint32 array /
flat buffer where it has one); tokenforge is run both ways (``tokenforge``: lists,
``tokenforge[np]``: arrays) and its figure is the better of the two.

**No library is timed on text it has seen**: a library that remembers pieces across
calls (gigatoken, splintr, tokenforge's per-thread piece cache, ...) would otherwise
time its memo. Every library runs the warm-up text first (lazy set-up, caches of
common pieces, as in a running process), then each part exactly once, the libraries
taking turns in an order rotated per part. The figure is a library's best part.

**Checks before timing**: the warm-up ids of every library are compared with the
reference library's; then each part's ids. A library whose ids differ anywhere is
shown as ``differs`` (first difference printed) and gets no figure; if tokenforge
differs the script says so loudly and exits 1. A library whose warm-up time,
scaled to a part, exceeds ``--max-seconds`` is timed on the warm-up text only
(figure marked ``~``).

**Crashes**: each tokenizer row runs in a process of its own; a library that aborts
the process (a Rust panic that does not become a Python exception) is reported and
the row runs again without it.

**Targets** (the verdict column): every cell >= 1.0x the fastest exact peer;
batches: b2/b1 >= 1.8 on 2 cores; worst cases: >= 1/3 of the same tokenizer's
English ``doc`` speed.

    python benchmarks/bench_peers.py                      # full run (~13 min)
    python benchmarks/bench_peers.py --quick              # ~2 min smoke run: 5 rows, 100 KB texts, English, Chinese, code
    python benchmarks/bench_peers.py --rows cl100k,bert.txt --texts english --libs tokenforge,tiktoken,quicktok
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import DATA_DIR, machine_info, print_machine, print_table  # noqa: E402
from _peers import ADAPTERS, Adapter, Source, Unsupported  # noqa: E402
from bench_encode import split_docs, stdlib_code  # noqa: E402

VOCAB = Path(DATA_DIR) / "vocab"
TEXT = Path(DATA_DIR) / "text"
LANGS = ("english", "chinese", "japanese", "code")
WORST = ("letter", "spaces", "json", "nospace")
TF = ("tokenforge", "tokenforge[np]")
REFERENCES = ("tiktoken", "tokenizers", "sentencepiece")
FAMILIES = ("byte-level BPE", "WordPiece", "Unigram", "SentencePiece BPE")
TARGET_SCALING = 1.8
#: --quick: one row per family and kind of file
QUICK_ROWS = ("cl100k", "llama3.json", "bert.txt", "albert.model", "llama2.model")
TARGET_WORST = 1 / 3

QWEN_SPECIALS = {"<|endoftext|>": 151643, "<|im_start|>": 151644, "<|im_end|>": 151645}
CL100K_SPECIALS = {"<|endoftext|>": 100257, "<|fim_prefix|>": 100258, "<|fim_middle|>": 100259,
                   "<|fim_suffix|>": 100260, "<|endofprompt|>": 100276}
O200K_SPECIALS = {"<|endoftext|>": 199999, "<|endofprompt|>": 200018}


# ---------------------------------------------------------------- tokenizers
def _patterns() -> dict[str, str]:
    from tokenforge.pretokenizers import PATTERNS

    return dict(PATTERNS)


def _llama3_specials() -> dict[str, int]:
    import tokenforge

    return dict(tokenforge.load(VOCAB / "meta" / "llama3_tokenizer.model").special_tokens)


def _make_json(kind: str, out: Path, pattern: str, specials: dict[str, int]) -> None:
    """Write one of the derived ``tokenizer.json`` files (see the module docstring)."""
    from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers

    tmp = out.with_suffix(".tmp")
    if kind in ("cl100k_base", "o200k_base", "llama3"):
        import importlib

        conv = importlib.import_module("transformers.convert_slow_tokenizer")  # the module, not the function
        rank_file = {"cl100k_base": VOCAB / "tiktoken" / "cl100k_base.tiktoken",
                     "o200k_base": VOCAB / "tiktoken" / "o200k_base.tiktoken",
                     "llama3": VOCAB / "meta" / "llama3_tokenizer.model"}[kind]
        tok = conv.TikTokenConverter(vocab_file=str(rank_file), pattern=pattern,
                                     extra_special_tokens=specials).converted()
    elif kind == "qwen":
        d = VOCAB / "hf" / "qwen2"
        tok = Tokenizer(models.BPE.from_file(str(d / "vocab.json"), str(d / "merges.txt")))
        tok.normalizer = normalizers.NFC()
        tok.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(pattern), "isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ])
        tok.decoder = decoders.ByteLevel()
        tok.add_special_tokens([AddedToken(s, normalized=False, special=True) for s in specials])
    elif kind == "llama2":
        import importlib

        from sentencepiece import sentencepiece_model_pb2 as pb

        conv = importlib.import_module("transformers.convert_slow_tokenizer")
        m = pb.ModelProto()
        m.ParseFromString((VOCAB / "sentencepiece" / "mistral_v1_tokenizer.model").read_bytes())
        vocab = {p.piece: i for i, p in enumerate(m.pieces)}
        merges = conv.generate_merges(vocab, [(p.piece, p.score) for p in m.pieces])
        tok = Tokenizer(models.BPE(vocab, merges, unk_token=m.trainer_spec.unk_piece, fuse_unk=True, byte_fallback=True))
        tok.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
        tok.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(),
                                         decoders.Strip(" ", 1, 0)])
        tok.add_special_tokens([AddedToken(p.piece, normalized=False, special=True) for p in m.pieces if p.type == 3])
    else:
        raise ValueError(kind)
    tok.save(str(tmp))
    os.replace(tmp, out)


def build_sources(cache: Path) -> list[Source]:
    pats = _patterns()
    cache.mkdir(parents=True, exist_ok=True)
    o200k_pattern = pats["o200k"]
    llama3_specials = _llama3_specials()
    derived = {
        "cl100k_base": (pats["llama3"], CL100K_SPECIALS),  # the non-possessive form HF's engine reads
        "o200k_base": (o200k_pattern, O200K_SPECIALS),
        "llama3": (pats["llama3"], llama3_specials),
        "qwen": (pats["qwen"], QWEN_SPECIALS),
        "llama2": ("", {}),
    }
    made: dict[str, str] = {}
    for kind, (pattern, specials) in derived.items():
        out = cache / f"{kind}_tokenizer.json"
        if not out.exists():
            t0 = time.perf_counter()
            try:
                _make_json(kind, out, pattern, specials)
            except Exception as exc:  # transformers missing or changed: the rows lose that file, said aloud
                print(f"# could not make {out.name}: {type(exc).__name__}: {exc}", flush=True)
                continue
            print(f"# made {out} in {time.perf_counter() - t0:.1f}s", flush=True)
        made[kind] = str(out)
    tk = VOCAB / "tiktoken"

    def files(**kw) -> dict[str, str]:
        return {k: str(v) for k, v in kw.items() if v}

    bpe = "byte-level BPE"
    rows = [
        Source("cl100k", bpe, "cl100k_base.tiktoken", "tiktoken", "cl100k_base",
               files(tiktoken=tk / "cl100k_base.tiktoken", hf=made.get("cl100k_base")), "tiktoken",
               pats["cl100k"], CL100K_SPECIALS, plain_pattern=pats["llama3"]),
        Source("o200k", bpe, "o200k_base.tiktoken", "tiktoken", "o200k_base",
               files(tiktoken=tk / "o200k_base.tiktoken", hf=made.get("o200k_base")), "tiktoken",
               o200k_pattern, O200K_SPECIALS),
        Source("llama3", bpe, "Llama 3 tokenizer.model (ranks)", "tiktoken", "llama3",
               files(tiktoken=VOCAB / "meta" / "llama3_tokenizer.model", hf=made.get("llama3")), "tiktoken",
               pats["llama3"], llama3_specials, giga_pretokenizer="gpt4"),
        Source("llama3.json", bpe, "Llama 3 tokenizer.json", "hf", "llama3",
               files(tiktoken=VOCAB / "meta" / "llama3_tokenizer.model", hf=made.get("llama3")), "tokenizers",
               pats["llama3"], llama3_specials, giga_pretokenizer="gpt4"),
        Source("qwen", bpe, "qwen.tiktoken", "tiktoken", "qwen",
               files(tiktoken=tk / "qwen.tiktoken", hf=made.get("qwen")), "tiktoken",
               pats["qwen"], QWEN_SPECIALS, giga_pretokenizer="qwen2"),
        Source("qwen.json", bpe, "Qwen2 tokenizer.json", "hf", "qwen",
               files(tiktoken=tk / "qwen.tiktoken", hf=made.get("qwen")), "tokenizers",
               pats["qwen"], QWEN_SPECIALS, giga_pretokenizer="qwen2"),
        Source("bert.txt", "WordPiece", "bert-base-uncased vocab.txt", "bert-vocab", "bert-base-uncased",
               files(**{"bert-vocab": VOCAB / "wordpiece" / "bert-base-uncased_vocab.txt",
                        "hf": VOCAB / "hf" / "bert-base-uncased_wordpiece_tokenizer.json"}), "tokenizers"),
        Source("bert.json", "WordPiece", "bert-base-uncased tokenizer.json", "hf", "bert-base-uncased",
               files(**{"bert-vocab": VOCAB / "wordpiece" / "bert-base-uncased_vocab.txt",
                        "hf": VOCAB / "hf" / "bert-base-uncased_wordpiece_tokenizer.json"}), "tokenizers"),
        Source("albert.model", "Unigram", "ALBERT spiece.model", "spm", "albert",
               files(spm=VOCAB / "sentencepiece" / "albert_spiece.model",
                     hf=VOCAB / "hf" / "albert-base-v2_spiece_unigram_tokenizer.json"), "sentencepiece"),
        Source("albert.json", "Unigram", "ALBERT tokenizer.json", "hf", "albert",
               files(spm=VOCAB / "sentencepiece" / "albert_spiece.model",
                     hf=VOCAB / "hf" / "albert-base-v2_spiece_unigram_tokenizer.json"), "tokenizers"),
        Source("llama2.model", "SentencePiece BPE", "Llama 2 / Mistral tokenizer.model", "spm", "llama2",
               files(spm=VOCAB / "sentencepiece" / "mistral_v1_tokenizer.model", hf=made.get("llama2")),
               "sentencepiece"),
        Source("llama2.json", "SentencePiece BPE", "Llama 2 / Mistral tokenizer.json", "hf", "llama2",
               files(spm=VOCAB / "sentencepiece" / "mistral_v1_tokenizer.model", hf=made.get("llama2")),
               "tokenizers"),
    ]
    return [r for r in rows if r.fmt in r.files]


# --------------------------------------------------------------------- texts
POOLS = {
    "english": [TEXT / "tinystories_valid_sample.txt", TEXT / "botchan.txt", TEXT / "tinyshakespeare.txt",
                TEXT / "corpus.en", TEXT / "parallel" / "debian-reference-en.txt"],
    "chinese": [TEXT / "hongloumeng.txt", TEXT / "xiyouji.txt"],
    "japanese": [TEXT / "wagahaiwa_nekodearu.txt", TEXT / "parallel" / "debian-reference-ja.txt",
                 Path(DATA_DIR) / "bench" / "manpages-ja_rendered.txt"],
}
BLOCK = 8_000


def pool_text(name: str, need: int) -> str:
    """At least ``need`` bytes of one language (whole files in the order above;
    code: top-level stdlib ``*.py`` files in name order)."""
    if name == "code":
        return stdlib_code(need + BLOCK)[0]
    if name not in POOLS:
        raise SystemExit(f"unknown text {name!r}; known: {', '.join(LANGS)}")
    parts, total = [], 0
    for path in POOLS[name]:
        t = path.read_text(encoding="utf-8")
        parts.append(t if t.endswith("\n") else t + "\n")
        total += len(t.encode("utf-8"))
        if total >= need:
            break
    return "".join(parts)


def blocks_of(text: str, size: int = BLOCK) -> list[str]:
    """``text`` cut at line ends into blocks of about ``size`` bytes."""
    out, cur, n = [], [], 0
    for line in text.splitlines(keepends=True):
        cur.append(line)
        n += len(line.encode("utf-8"))
        if n >= size:
            out.append("".join(cur))
            cur, n = [], 0
    if cur:
        out.append("".join(cur))
    return out


def deal(text: str, targets: dict[str, int]) -> dict[str, str]:
    """Deal the 8 KB blocks of ``text`` to named slots in proportion to their target
    sizes (each next block to the slot furthest from its target), so that every slot
    samples the whole pool and no two slots share a line."""
    got = {k: [] for k in targets}
    size = dict.fromkeys(targets, 0)
    for blk in blocks_of(text):
        open_ = [k for k in targets if size[k] < targets[k]]
        if not open_:
            break
        k = min(open_, key=lambda k: size[k] / targets[k])
        got[k].append(blk)
        size[k] += len(blk.encode("utf-8"))
    short = [k for k in targets if size[k] < 0.9 * targets[k]]
    if short:
        raise SystemExit(f"not enough text for {short}: {size}")
    return {k: "".join(v) for k, v in got.items()}


def language_texts(name: str, modes: list[str], size: int, parts: int) -> dict[str, tuple[str, list[str]]]:
    """{mode: (warm-up text, [part texts])}: per mode ``size`` bytes in ``parts`` parts,
    plus a warm-up of a third of a part; no text is shared between modes or parts."""
    part = size // parts
    targets = {}
    for m in ("doc", "line", "batch"):  # always all three, so a mode's text does not depend on the others run
        targets[f"{m}/warm"] = max(BLOCK, part // 3)
        for k in range(parts):
            targets[f"{m}/{k}"] = part
    need = int(sum(targets.values()) * 1.05)
    slots = deal(pool_text(name, need), targets)
    return {m: (slots[f"{m}/warm"], [slots[f"{m}/{k}"] for k in range(parts)]) for m in modes}


def worst_text(kind: str, size: int, variant: int, english: str) -> str:
    """A worst case of ``size`` bytes; variants differ (another letter, another length,
    other records, other text), so that no library is timed on a text it has seen."""
    if kind == "letter":
        return "etaoinshrdlucmfwyp"[variant % 18] * size
    if kind == "spaces":
        return " " * (size - variant)
    if kind == "json":
        import random
        import string

        rng = random.Random(1000 + variant)
        recs, n, i = [], 0, 0
        while n < size:
            rec = {"id": i + variant * 10**6, "name": "".join(rng.choices(string.ascii_lowercase, k=rng.randint(3, 12))),
                   "value": round(rng.uniform(-1e4, 1e4), rng.randint(0, 6)), "enabled": rng.random() < 0.5,
                   "tags": rng.sample(["alpha", "beta", "gamma", "delta", "x", "y"], rng.randint(0, 3)),
                   "meta": {"x": rng.randint(0, 10**9), "y": None}}
            s = json.dumps(rec, separators=(",", ":"))
            recs.append(s)
            n += len(s) + 1
            i += 1
        return ("[" + ",".join(recs) + "]")[:size]
    if kind == "nospace":
        blocks = blocks_of(english)
        squeezed = "".join("".join(b.split()) for b in blocks[variant::7])
        while len(squeezed.encode("utf-8")) < size:
            squeezed += "".join(english.split())[variant * 1000:]
        return squeezed.encode("utf-8")[:size].decode("utf-8", "ignore")
    raise SystemExit(f"unknown worst case {kind!r}; known: {', '.join(WORST)}")


def lines_of(text: str) -> list[str]:
    return [ln for ln in text.splitlines() if ln.strip()]


def mode_data(mode: str, text: str, doc_bytes: int):
    """What a mode feeds the libraries: the text, its non-empty lines, or ~1 KB documents."""
    if mode == "doc":
        return text
    if mode == "line":
        return lines_of(text)
    return split_docs(text, doc_bytes)


def nbytes(data) -> int:
    if isinstance(data, str):
        return len(data.encode("utf-8"))
    return sum(len(t.encode("utf-8")) for t in data)


# ------------------------------------------------------------------ checking
def first_diff(got: list, want: list) -> str:
    n = min(len(got), len(want))
    i = next((j for j in range(n) if got[j] != want[j]), n)
    return f"at id {i} of {len(want)} (got {list(got[max(0, i - 2):i + 3])}, want {list(want[max(0, i - 2):i + 3])})"


def compare(kind: str, got, want) -> str | None:
    """None when equal, else where they first differ."""
    if kind == "doc":
        return None if got == want else first_diff(got, want)
    if len(got) != len(want):
        return f"{len(got)} results for {len(want)} inputs"
    for k, (g, w) in enumerate(zip(got, want)):
        if g != w:
            return f"{'line' if kind == 'line' else 'document'} {k}: " + first_diff(g, w)
    return None


class Lib:
    """A library loaded for one tokenizer (``threads``: what its batch call is asked for)."""

    def __init__(self, name: str, adapter: Adapter, obj, via: str, load_s: float, threads: int = 2):
        self.name, self.adapter, self.obj, self.via, self.load_s = name, adapter, obj, via, load_s
        self.threads = threads

    def skip(self, mode: str, status: dict) -> bool:
        why = self.adapter.skip(self.obj, mode)
        if not why and mode != "batch" and self.threads == 1:
            why = "(batch only)"
        if why:
            status[self.name] = why
        return bool(why)

    def run(self, mode: str, data):
        """The timed call(s): one text, a loop over lines, or the batch call."""
        a, o = self.adapter, self.obj
        if mode == "doc":
            return a.encode(o, data)
        if mode == "line":
            enc = a.encode
            return [enc(o, ln) for ln in data]
        raw = a.batch(o, data, self.threads)
        if raw is None:
            raise Unsupported("no batch call")
        return raw

    def ids(self, mode: str, out):
        """``run``'s output as lists of ints (untimed, for the checks)."""
        a = self.adapter
        if mode == "doc":
            return a.to_list(out)
        if mode == "line":
            return [a.to_list(x) for x in out]
        return [list(x) for x in a.batch_lists(out)]


#: set by the supervisor in each row's process: say which library runs, for crash reports
TRACE = os.environ.get("BENCH_PEERS_TRACE") == "1"


def trace(msg: str) -> None:
    if TRACE:
        print(msg, file=sys.stderr, flush=True)


def timed(fn) -> tuple[float, object]:
    gc.collect()
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def _guard(lib: Lib, fn, status: dict, notes: list):
    """Run ``fn``; on an exception (pyo3 panics included) record it and return None."""
    try:
        return fn()
    except Unsupported:
        status[lib.name] = "-"
    except BaseException as exc:  # pyo3 panics derive from BaseException
        if isinstance(exc, KeyboardInterrupt):
            raise
        status[lib.name] = f"error: {type(exc).__name__}"
        notes.append(f"{lib.name}: {type(exc).__name__}: {str(exc)[:160]}")
    return None


# ------------------------------------------------------------------- a cell
def run_cell(libs: list[Lib], ref: Lib, mode: str, warm, parts: list, max_s: float) -> dict:
    """Check every library against the reference and time it, on texts it has not seen.

    ``warm`` and ``parts`` are the mode's data (a text, lines, or documents). Every
    library first runs ``warm`` (untimed for the figures: it loads whatever a library
    sets up lazily, and its ids are compared with the reference's); a library whose time
    there, scaled to a part, would exceed ``max_s`` runs it once more (set-up paid once
    is not its speed), and if still too slow keeps the better warm-up figure (marked
    ``~``) and skips the parts. Then each part is run once by every library, in an order
    rotated per part, and the ids are compared with the reference's on that part; a
    library that differs anywhere is 'differs' and has no figure. A library's figure is
    its best MB/s over the parts.
    """
    status: dict[str, str] = {}
    notes: list[str] = []
    mbps: dict[str, float] = {}
    approx: list[str] = []
    alive = [lib for lib in libs if not lib.skip(mode, status)]
    warm_mb = nbytes(warm) / 1e6
    part_mb = [nbytes(p) / 1e6 for p in parts]

    def drop(lib: Lib, why: str, note: str | None = None) -> None:
        status[lib.name] = why
        if note:
            notes.append(note)
        if lib in alive:
            alive.remove(lib)

    # 1. warm-up: ids, and a projection of each library's time on a part
    wt: dict[str, float] = {}
    w_ids: dict[str, object] = {}
    for lib in [x for x in alive if x is ref] + [x for x in alive if x is not ref]:
        trace(f"lib {lib.name}")
        res = _guard(lib, lambda: timed(lambda: lib.run(mode, warm)), status, notes)
        if res is None:
            alive.remove(lib)
            continue
        wt[lib.name] = res[0]
        w_ids[lib.name] = lib.ids(mode, res[1])
    if ref.name not in w_ids:
        for lib in list(alive):
            drop(lib, "no reference")
        return {"mbps": mbps, "approx": approx, "status": status, "notes": notes}
    scale = max(part_mb) / warm_mb
    for lib in list(alive):
        if lib is not ref:
            d = compare(mode, w_ids[lib.name], w_ids[ref.name])
            if d:
                drop(lib, "differs", f"{lib.name} differs from {ref.name}: {d}")
                continue
        if wt[lib.name] * scale > max_s:
            # the first call may have paid a one-time set-up (an index built on the first
            # long piece, say): the projection takes the warm-up's second run
            again = _guard(lib, lambda: timed(lambda: lib.run(mode, warm)), status, notes)
            if again is None:
                alive.remove(lib)
                continue
            wt[lib.name] = min(wt[lib.name], again[0])
        if wt[lib.name] * scale > max_s:
            mbps[lib.name] = warm_mb / wt[lib.name]
            status[lib.name] = "ok"
            approx.append(lib.name)
            alive.remove(lib)
    if ref not in alive:
        notes.append(f"{ref.name} would take {wt[ref.name] * scale:.0f}s a part: ids checked on the warm-up text only")
    # 2. the parts: each library once per part, order rotated, ids checked after each part
    best: dict[str, float] = {}
    for k, part in enumerate(parts):
        order = alive[k % max(1, len(alive)):] + alive[:k % max(1, len(alive))]
        outs: dict[str, object] = {}
        for lib in order:
            trace(f"lib {lib.name}")
            res = _guard(lib, lambda: timed(lambda: lib.run(mode, part)), status, notes)
            if res is None:
                alive.remove(lib)
                continue
            best[lib.name] = max(best.get(lib.name, 0.0), part_mb[k] / res[0])
            outs[lib.name] = res[1]
        if ref.name in outs:
            want = ref.ids(mode, outs[ref.name])
            for lib in list(alive):
                if lib is not ref and lib.name in outs:
                    d = compare(mode, lib.ids(mode, outs[lib.name]), want)
                    if d:
                        drop(lib, "differs", f"{lib.name} differs from {ref.name} (part {k}): {d}")
        outs.clear()
    for lib in alive:
        if lib.name in best:
            mbps[lib.name] = best[lib.name]
            status.setdefault(lib.name, "ok")
    return {"mbps": mbps, "approx": approx, "status": status, "notes": notes}


# ------------------------------------------------------------------ summary
def summarize(src: Source, cell: dict) -> dict:
    """tokenforge's best form against the fastest exact peer."""
    m = cell["mbps"]
    tf_name = max((n for n in TF if n in m), key=lambda n: m[n], default=None)
    peers = {n: v for n, v in m.items() if not n.startswith("tokenforge")}
    peer = max(peers, key=peers.get, default=None)
    out = {"tf": m.get(tf_name) if tf_name else None, "tf_form": tf_name, "peer": peer,
           "peer_mbps": peers.get(peer) if peer else None}
    out["ratio"] = out["tf"] / out["peer_mbps"] if out["tf"] and out["peer_mbps"] else None
    one = (tf_name or "") + " 1t"
    if one in m:
        out["b2_b1"] = m[tf_name] / m[one]
    return out


def fmt(x: float | None, nd: int = 2) -> str:
    if x is None:
        return "-"
    return f"{x:.0f}" if x >= 100 else f"{x:.1f}" if x >= 10 else f"{x:.{nd}f}"


def verdict(s: dict, mode: str, worst_frac: float | None) -> str:
    parts = []
    if s["tf"] is None:
        return "tokenforge failed"
    if s["ratio"] is None:
        parts.append("no exact peer")
    elif s["ratio"] >= 1.0:
        parts.append("ok")
    else:
        parts.append(f"SHORT {s['ratio']:.2f}x")
    if mode == "batch" and s.get("b2_b1") is not None:
        parts.append("scales" if s["b2_b1"] >= TARGET_SCALING else f"b2/b1 {s['b2_b1']:.2f} < {TARGET_SCALING}")
    if worst_frac is not None:
        parts.append(">= 1/3 Eng" if worst_frac >= TARGET_WORST else f"{worst_frac:.2f} of Eng < 1/3")
    return ", ".join(parts)


# --------------------------------------------------------------------- main
def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true",
                    help=f"a smoke run (~3 min): rows {','.join(QUICK_ROWS)} (one per family and format kind), "
                         "100 KB per text and mode in 2 parts, English, Chinese and code, worst cases of 100 KB")
    ap.add_argument("--repeats", "-n", type=int, default=None,
                    help="parts each text is cut into; the figure is the best part (default 3; --quick 2)")
    ap.add_argument("--size", type=int, default=None, help="bytes per text and mode (default 1,000,000; --quick 100,000)")
    ap.add_argument("--worst-size", type=int, default=None, help="bytes per worst case (default = --size)")
    ap.add_argument("--worst-parts", type=int, default=2, help="worst cases: variants timed (at most --repeats)")
    ap.add_argument("--doc-bytes", type=int, default=1000, help="batch documents: lines gathered to about this many bytes")
    ap.add_argument("--rows", default=None, help="comma-separated tokenizer keys (default: all); see --list")
    ap.add_argument("--texts", default=None, help=f"comma-separated texts (default: {','.join(LANGS)})")
    ap.add_argument("--modes", default="doc,line,batch", help="comma-separated modes (doc, line, batch)")
    ap.add_argument("--worst", default=",".join(WORST), help="comma-separated worst cases ('' for none)")
    ap.add_argument("--libs", default=None, help="comma-separated libraries (default: all installed)")
    ap.add_argument("--max-seconds", type=float, default=2.5,
                    help="per call: a library projected to take longer is timed on the first tenth only (~)")
    ap.add_argument("--cache-dir", default=os.path.join(os.path.expanduser("~"), ".cache", "tokenforge-bench-peers"),
                    help="where the derived tokenizer.json files are kept")
    ap.add_argument("--json", default=None, help="write every figure to this file")
    ap.add_argument("--list", action="store_true", help="list tokenizers and libraries, then exit")
    ap.add_argument("--row-child", default=None, help=argparse.SUPPRESS)  # one row, results to --json
    ap.add_argument("--exclude", default="", help=argparse.SUPPRESS)  # libraries that aborted this row before
    ap.add_argument("--pin", action="store_true", help=argparse.SUPPRESS)  # child: run on one core
    args = ap.parse_args()
    if args.pin:  # before any library starts a thread pool: every thread of this process shares one core
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    repeats = args.repeats or (2 if args.quick else 3)
    size = args.size or (100_000 if args.quick else 1_000_000)
    wsize = args.worst_size or size
    texts_names = args.texts.split(",") if args.texts else (["english", "chinese", "code"] if args.quick else list(LANGS))
    modes = [m for m in args.modes.split(",") if m and m != "none"]
    worst_names = [w for w in args.worst.split(",") if w]

    child = args.row_child is not None
    say = (lambda *a, **k: None) if child else print
    info = machine_info()
    if not child:
        print_machine(info)
    say("# command: python " + " ".join([os.path.relpath(sys.argv[0])] + sys.argv[1:]), flush=True)
    sources = build_sources(Path(args.cache_dir))
    if args.rows or (args.quick and not child):
        keep = args.rows.split(",") if args.rows else list(QUICK_ROWS)
        unknown = set(keep) - {s.key for s in sources}
        if unknown:
            raise SystemExit(f"unknown rows {sorted(unknown)}; known: {', '.join(s.key for s in sources)}")
        sources = [s for s in sources if s.key in keep]
    lib_names = args.libs.split(",") if args.libs else list(ADAPTERS)
    for must in TF[:1]:
        if must not in lib_names:
            lib_names.insert(0, must)
    if child:
        sources = [s for s in sources if s.key == args.row_child]
    adapters = {n: ADAPTERS[n]() for n in lib_names}
    say("# libraries: " + ", ".join(
        f"{n} {a.version or '?'}" if not a.import_error else f"{n} (NOT LOADABLE: {a.import_error})"
        for n, a in adapters.items()), flush=True)
    if args.list:
        for s in sources:
            print(f"{s.key:14s} {s.family:18s} {s.label:36s} ref={s.reference:13s} files={s.files}")
        return 0
    if not child:
        return supervise(args, info, sources, list(adapters))

    # cells: (text, mode, warm-up data, [part data]); no library sees a text twice
    cells: list[tuple[str, str, object, list]] = []
    for name in texts_names:
        for mode, (warm, parts) in language_texts(name, modes, size, repeats).items():
            cells.append((name, mode, mode_data(mode, warm, args.doc_bytes),
                          [mode_data(mode, p, args.doc_bytes) for p in parts]))
    english = pool_text("english", 2 * wsize)
    n_worst = max(1, min(repeats, args.worst_parts))
    for w in worst_names:
        # the warm-up holds a piece of 64 KB+, so one-time set-up for huge pieces is not in the parts
        cells.append((w, "doc", worst_text(w, max(100_000, wsize // 10), n_worst, english),
                      [worst_text(w, wsize, v, english) for v in range(n_worst)]))
    print("#   texts (MB per part x parts, warm-up MB): " + ", ".join(
        f"{t} {m} {nbytes(parts[0]) / 1e6:.2f}x{len(parts)} ({nbytes(warm) / 1e6:.2f})" for t, m, warm, parts in cells),
        flush=True)
    say(f"# figure: best part; max {args.max_seconds:.1f}s per call; batch documents ~{args.doc_bytes} B\n", flush=True)

    results: list[dict] = []
    load_notes: dict[str, dict[str, str]] = {}
    problems: list[str] = []
    t_start = time.perf_counter()
    for src in sources:
        t_row = time.perf_counter()
        libs: list[Lib] = []
        reasons: dict[str, str] = {}
        for name, ad in adapters.items():
            t0 = time.perf_counter()
            try:
                obj, via = ad.load(src)
            except Unsupported as exc:
                reasons[name] = str(exc)
                continue
            except BaseException as exc:  # pyo3 panics are BaseExceptions
                if isinstance(exc, KeyboardInterrupt):
                    raise
                reasons[name] = f"load error: {type(exc).__name__}: {str(exc)[:200]}"
                continue
            libs.append(Lib(name, ad, obj, via, time.perf_counter() - t0))
            if name in TF and "batch" in modes and getattr(obj, "plan", "") != "python":
                # a second instance for the 1-thread batch (b2/b1); the python plan has no threads
                libs.append(Lib(name + " 1t", ad, ad.load(src)[0], via, 0.0, threads=1))
        ref = next((lib for lib in libs if lib.name == src.reference), None)
        load_notes[src.key] = {**reasons, **{lib.name: (lib.via or "same file") for lib in libs}}
        print(f"## {src.family}: {src.label} (reference {src.reference})", flush=True)
        print("#   loaded: " + ", ".join(f"{lib.name}" + (f" [{lib.via}]" if lib.via else "") for lib in libs), flush=True)
        for name, why in reasons.items():
            print(f"#   not run: {name}: {why}", flush=True)
        if ref is None:
            problems.append(f"{src.key}: the reference {src.reference} did not load")
            continue
        for tname, mode, warm, parts in cells:
            trace(f"cell {tname}/{mode}")
            skip = {x.split("@")[0] for x in args.exclude.split(",") if x.endswith(f"@{tname}/{mode}")}
            cell = run_cell([lib for lib in libs if lib.name not in skip], ref, mode, warm, parts, args.max_seconds)
            for n in skip:
                cell["status"][n] = "aborts"
            s = summarize(src, cell)
            if any(st == "differs" or st.startswith("error") for n, st in cell["status"].items() if n.startswith("tokenforge")):
                problems.extend(f"{src.key} {tname} {mode}: {n}" for n in cell["notes"] if n.startswith("tokenforge"))
            rec = {"row": src.key, "family": src.family, "label": src.label, "text": tname, "mode": mode,
                   "mb_per_part": nbytes(parts[0]) / 1e6, "parts": len(parts), **cell, "summary": s}
            results.append(rec)
            for n in cell["notes"]:
                print(f"#   [{tname} {mode}] {n}", flush=True)
        # the worst-case fraction needs English doc of the same row
        eng = next((r["summary"]["tf"] for r in results if r["row"] == src.key and r["text"] == "english"
                    and r["mode"] == "doc"), None)
        for r in results:
            if r["row"] == src.key and r["text"] in WORST and eng and r["summary"]["tf"]:
                r["summary"]["x_english"] = r["summary"]["tf"] / eng
        order = [x for n in adapters for x in ((n, n + " 1t") if n in TF else (n,))]
        print_row_table(src, [r for r in results if r["row"] == src.key], order)
        print(f"#   row time {time.perf_counter() - t_row:.0f}s (total {time.perf_counter() - t_start:.0f}s)\n", flush=True)
        libs = []
        gc.collect()

    with open(args.json, "w", encoding="utf-8") as f:
        json.dump({"loads": load_notes, "results": results, "problems": problems}, f, default=str)
    return 0


def supervise(args, info: dict, sources: list[Source], lib_names: list[str]) -> int:
    """Run each tokenizer row in a process of its own (same arguments, ``--row-child``).
    A library can abort a process (a Rust panic that does not become a Python exception,
    e.g. kitoken's regex stack overflow): the row is then run again without it, and the
    abort is reported. Prints the per-family summary of all rows."""
    import subprocess
    import tempfile

    t_start = time.perf_counter()
    results: list[dict] = []
    loads: dict[str, dict] = {}
    problems: list[str] = []
    aborted: dict[str, list[str]] = {}
    excluded: list[str] = []  # "lib@text/mode": aborted the process there (in this row or an earlier one)
    print(f"# every text part is encoded once per library; figure: best part; max {args.max_seconds:.1f}s per call "
          f"(slower: timed on the warm-up text, '~'); batch documents ~{args.doc_bytes} B\n", flush=True)
    modes = [m for m in args.modes.split(",") if m]
    single = [m for m in modes if m != "batch"]
    # single-thread cells in a process pinned to one core (some libraries spread one text over
    # threads: gigatoken, fastokens, tokie); batches in a process with every core
    runs = [(",".join(single) or "none", args.worst, True)] if single or args.worst else []
    if "batch" in modes:
        runs.append(("batch", "", False))
    for src in sources:
        for run_modes, run_worst, pin in runs:
            while True:
                with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as tmp:
                    out = tmp.name
                cmd = [sys.executable, os.path.abspath(__file__)] + [a for a in sys.argv[1:]] + [
                    "--row-child", src.key, "--json", out, "--exclude", ",".join(excluded),
                    "--modes", run_modes, f"--worst={run_worst}"] + (["--pin"] if pin else [])
                proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True,
                                        env={**os.environ, "BENCH_PEERS_TRACE": "1"})
                _, err = proc.communicate()
                if proc.returncode == 0:
                    with open(out, encoding="utf-8") as f:
                        got = json.load(f)
                    os.unlink(out)
                    results += got["results"]
                    loads.update(got["loads"])
                    problems += got["problems"]
                    break
                lines = err.splitlines()
                last = next((x[4:] for x in reversed(lines) if x.startswith("lib ")), None)
                where = next((x[5:] for x in reversed(lines) if x.startswith("cell ")), None)
                k = max((i for i, x in enumerate(lines) if "panicked at" in x), default=None)
                why = (" ".join(x.strip() for x in lines[k:k + 2]) if k is not None else f"exit {proc.returncode}")[:200]
                key = f"{last}@{where}"
                if last is None or where is None or last.startswith("tokenforge") or key in excluded:
                    problems.append(f"{src.key}: the row's process died ({why})")
                    print(err[-2000:], file=sys.stderr)
                    break
                print(f"#   {last} aborted the process on {where} ({why}); the row runs again without it there "
                      f"(and later rows do not run it there)\n", flush=True)
                aborted.setdefault(last, []).append(f"{src.key} {where}: {why}")
                excluded.append(key)
    print_summary(results, sources)
    if aborted:
        print("\n# libraries that aborted the process (left out of those rows):")
        for lib, where in aborted.items():
            print(f"#   {lib}: " + "; ".join(where))
    if problems:
        print("\n!!! tokenforge problems:")
        for p in problems:
            print("!!!   " + p)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"machine": info, "argv": sys.argv, "loads": loads, "aborted": aborted, "results": results,
                       "problems": problems}, f, indent=1, default=str)
    print(f"# total {time.perf_counter() - t_start:.0f}s")
    return 1 if problems else 0


def print_row_table(src: Source, rows: list[dict], lib_order: list[str]) -> None:
    """Every library's MB/s (or why not) for one tokenizer."""
    shown = [n for n in lib_order if any(n in r["status"] for r in rows)]
    headers = ["text", "mode"] + shown + ["tf/peer", "verdict"]
    table = []
    for r in rows:
        cells = []
        for n in shown:
            st = r["status"].get(n)
            if st is None:
                cells.append("")
            elif st == "ok":
                cells.append(("~" if n in r["approx"] else "") + fmt(r["mbps"][n]))
            else:
                cells.append(st)
        s = r["summary"]
        table.append([r["text"], r["mode"]] + cells + [fmt(s["ratio"]), verdict(s, r["mode"], s.get("x_english"))])
    print(f"#### {src.family}: {src.label}: MB/s")
    print_table(headers, table)


def print_summary(results: list[dict], sources: list[Source]) -> None:
    print("\n### Summary: tokenforge (best form) against the fastest exact peer, per family\n")
    for fam in FAMILIES:
        rows = [r for r in results if r["family"] == fam]
        if not rows:
            continue
        table = []
        for r in rows:
            s = r["summary"]
            differs = sorted(n for n, st in r["status"].items() if st == "differs")
            extra = ""
            if r["mode"] == "batch" and s.get("b2_b1") is not None:
                extra = f"{s['b2_b1']:.2f}"
            xe = s.get("x_english")
            table.append([r["label"], r["text"], r["mode"], fmt(s["tf"]), f"{s['peer'] or '-'} {fmt(s['peer_mbps'])}",
                          fmt(s["ratio"]), extra, "-" if xe is None else f"{xe:.2f}",
                          verdict(s, r["mode"], xe), ", ".join(differs)])
        print(f"#### {fam}")
        print_table(["tokenizer", "text", "mode", "tokenforge MB/s", "fastest exact peer MB/s", "tf/peer",
                     "b2/b1", "x English", "verdict", "differs"], table)
        print()


if __name__ == "__main__":
    sys.exit(main())

"""tokenforge against an earlier commit of itself, in one run, on the same data.

    python benchmarks/bench_vs_baseline.py --baseline 78ff0a8 [--quick] [--json out.json]

The *baseline* is the given revision, extracted with ``git archive`` into a cache
directory (``/tmp/tokenforge-baseline-<sha>``) and built there in place with the
running interpreter (``setup.py build_ext --inplace``); the cache is reused on
later runs. The *current* side is the checkout this script lives in (its
``src/``, built in place first if it has no compiled core).

Every cell runs in fresh subprocesses with ``PYTHONPATH=<side>/src``, baseline and
current taking turns (A B A B ...) for ``--repeats`` rounds. Inside a process the
timed call follows an untimed warm-up on a short string (so one-time set-up is
left out) and runs ``--inner`` times; a cell's time is the best over all of its
processes on that side. Load cells time the one load call of a fresh process.
The table gives both times and the ratio current / baseline (below 1: current is
faster) and counts the cells outside +/-10 %. Only ratios are worth comparing on
a small shared machine.

Cells:

* encode: ``get_encoding("cl100k_base" / "o200k_base")`` on English, Chinese and
  Python code (whole document ``encode``, per-line ``encode_batch``), gpt2 from
  ``vocab/gpt2``; WordPiece, Unigram and SentencePiece BPE ``.txt`` / ``.model`` /
  ``tokenizer.json`` files through ``tokenforge.load`` (whole document, and one
  ``encode`` call per line);
* decode: ``decode(ids)`` of the encoded document, for cl100k_base and each file;
* load: ``get_encoding`` and ``load`` of each file;
* train: ``train_bpe``, ``train_unigram``, ``train_wordpiece``,
  ``train_sentencepiece_bpe`` with small vocabularies;
* new path: for WordPiece / Unigram / SentencePiece files, what a user had to do
  before (``encode`` per line, then ``np.array`` of the concatenation, or a list
  of lists) against ``encode_batch_to_numpy(lines, num_threads=2)`` and
  ``encode_batch(lines, num_threads=2)`` where the current side has them (found
  by feature detection; otherwise the current side runs the old form too). A
  large ratio is expected there; those cells are not counted as regressions.

Each cell also checks that both sides give the same ids (a digest of the ids, of
the decoded text, or of the ids a loaded or trained tokenizer gives a probe
text); a difference is flagged ``DIFF`` and makes the exit status 1. Input lines
holding special-token strings (``<|``, ``[CLS]``, ``<s>`` ...) are left out of
every corpus, so the default special-token policy never raises.
"""

from __future__ import annotations

import argparse
import gc
import glob
import hashlib
import json
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from _common import DATA_DIR, core_so_info, fmt_ratio, fmt_seconds, git_head, print_table  # noqa: E402

DATA = Path(DATA_DIR)
VOCAB = DATA / "vocab"
TEXT = DATA / "text"
TOLERANCE = 0.10
NEW_PATH_THREADS = 2
WARMUP = "Hello, world! " + "a" * 64
PROBE = "Hello world, this is a load check: 12345 naive cafe, 中文, def f(x): return x"
SPECIAL_MARKERS = ("<|", "[CLS]", "[SEP]", "[MASK]", "[UNK]", "[PAD]", "<s>", "</s>", "<unk>", "<pad>", "<mask>")

# label -> (family, path); opened with tokenforge.load
FILES = {
    "gpt2 vocab.json+merges.txt": ("byte-level BPE", VOCAB / "gpt2"),
    "bert vocab.txt": ("WordPiece", VOCAB / "wordpiece" / "bert-base-uncased_vocab.txt"),
    "albert .model": ("Unigram", VOCAB / "sentencepiece" / "albert_spiece.model"),
    "mistral .model": ("SentencePiece BPE", VOCAB / "sentencepiece" / "mistral_v1_tokenizer.model"),
    "albert tokenizer.json": ("Unigram", VOCAB / "hf" / "albert-base-v2_spiece_unigram_tokenizer.json"),
    "bert tokenizer.json": ("WordPiece", VOCAB / "hf" / "bert-base-uncased_wordpiece_tokenizer.json"),
    "gpt2 tokenizer.json": ("byte-level BPE", VOCAB / "hf" / "gpt2_tokenizer.json"),
}
FAMILY_FILES = [k for k in FILES if k != "gpt2 vocab.json+merges.txt"]
NEW_PATH_FILES = [k for k, (fam, _) in FILES.items() if fam != "byte-level BPE"]
ENCODINGS = ("cl100k_base", "o200k_base")
TRAINERS = ("train_bpe", "train_unigram", "train_wordpiece", "train_sentencepiece_bpe")

FULL = dict(repeats=5, inner=3, enc_bytes=2_000_000, fam_bytes=1_000_000, train_bytes=2_000_000, vocab=4000)
QUICK = dict(repeats=2, inner=5, enc_bytes=100_000, fam_bytes=100_000, train_bytes=300_000, vocab=1000)


# ------------------------------------------------------------------ worker (runs inside one side)
def _digest_ids(ids) -> str:
    import numpy as np

    return hashlib.sha256(np.asarray(ids, dtype=np.uint32).tobytes()).hexdigest()[:16]


def _digest_flat(flat, offsets) -> str:
    import numpy as np

    h = hashlib.sha256(np.diff(np.asarray(offsets, dtype=np.int64)).tobytes())
    h.update(np.asarray(flat, dtype=np.uint32).tobytes())
    return h.hexdigest()[:16]


def _digest_batch(seqs) -> str:
    import numpy as np

    offsets = np.zeros(len(seqs) + 1, dtype=np.int64)
    np.cumsum([len(s) for s in seqs], out=offsets[1:])
    flat = np.fromiter((i for s in seqs for i in s), dtype=np.uint32, count=int(offsets[-1]))
    return _digest_flat(flat, offsets)


def _digest_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _has_kwarg(fn, name: str) -> bool:
    import inspect

    try:
        return name in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def _open(tok_spec):
    import tokenforge

    how, what = tok_spec
    return tokenforge.get_encoding(what) if how == "encoding" else tokenforge.load(what)


def _read(path: str) -> tuple[str, list[str]]:
    with open(path, encoding="utf-8", newline="") as f:
        text = f.read()
    return text, [line for line in text.splitlines() if line.strip()]


def _old_numpy_form(tok, lines):
    """What a user of a tokenizer without encode_batch_to_numpy writes."""
    import itertools

    import numpy as np

    seqs = [tok.encode(t) for t in lines]
    offsets = np.zeros(len(seqs) + 1, dtype=np.int64)
    np.cumsum([len(s) for s in seqs], out=offsets[1:])
    return np.array(list(itertools.chain.from_iterable(seqs)), dtype=np.uint32), offsets


def _operation(spec, tok, text, lines):
    """(callable to time, digest of its result, which API ran) for one encode/decode cell."""
    kind, current = spec["kind"], spec["side"] == "current"
    if kind == "encode_doc":
        return (lambda: tok.encode(text)), _digest_ids, "encode(doc)"
    if kind == "encode_batch":
        return (lambda: tok.encode_batch(lines)), _digest_batch, "encode_batch(lines)"
    if kind == "encode_lines":
        return (lambda: [tok.encode(t) for t in lines]), _digest_batch, "encode per line"
    if kind == "decode":
        ids = tok.encode(text)
        # The earlier Pipeline.decode dropped special tokens by default; the one Tokenizer keeps
        # them unless asked (as tiktoken and transformers do): ask (on either side, the baseline
        # may be a one-Tokenizer commit too), so both give the same text.
        if _has_kwarg(tok.decode, "skip_special_tokens") and type(tok.decode.__self__).__name__ == "Tokenizer" \
                and not getattr(tok, "is_byte_level", True):
            return (lambda: tok.decode(ids, skip_special_tokens=True)), _digest_text, "decode(ids, skip_special_tokens=True)"
        return (lambda: tok.decode(ids)), _digest_text, "decode(ids)"
    if kind == "new_numpy":
        fn = getattr(tok, "encode_batch_to_numpy", None)
        if current and fn is not None and _has_kwarg(fn, "num_threads"):
            return (lambda: fn(lines, num_threads=NEW_PATH_THREADS)), lambda r: _digest_flat(*r), \
                f"encode_batch_to_numpy(num_threads={NEW_PATH_THREADS})"
        return (lambda: _old_numpy_form(tok, lines)), lambda r: _digest_flat(*r), "encode per line + np.array"
    if kind == "new_batch":
        fn = tok.encode_batch
        if current and _has_kwarg(fn, "num_threads"):
            return (lambda: fn(lines, num_threads=NEW_PATH_THREADS)), _digest_batch, \
                f"encode_batch(num_threads={NEW_PATH_THREADS})"
        return (lambda: [tok.encode(t) for t in lines]), _digest_batch, "encode per line"
    raise ValueError(f"unknown cell kind {kind!r}")


def _best_of(fn, n: int):
    best, result = float("inf"), None
    for _ in range(n):
        result = None
        gc.collect()
        t0 = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t0)
    return best, result


def worker(spec: dict) -> dict:
    import tokenforge

    out = {"file": tokenforge.__file__}
    kind = spec["kind"]
    if kind == "probe":
        try:
            from tokenforge import _native

            out["native"] = bool(_native.available())
        except ImportError:
            out["native"] = None
        out["version"] = getattr(tokenforge, "__version__", "?")
        return out
    if kind == "load":
        seconds, tok = _best_of(lambda: _open(spec["tok"]), 1)
        out.update(seconds=seconds, digest=_digest_ids(tok.encode(PROBE)), api=spec["tok"][0])
        return out
    if kind == "train":
        train = getattr(tokenforge, spec["trainer"])
        path, vocab = spec["data"], spec["vocab"]
        if spec["trainer"] == "train_bpe":
            call = lambda: train(path, vocab, show_progress=False)  # noqa: E731
        else:
            call = lambda: train(path, vocab_size=vocab, show_progress=False)  # noqa: E731
        seconds, tok = _best_of(call, spec["inner"])
        probe, _ = _read(path)
        out.update(seconds=seconds, digest=_digest_ids(tok.encode(probe[:20_000])), api=spec["trainer"])
        return out
    tok = _open(spec["tok"])
    text, lines = _read(spec["data"])
    tok.encode(WARMUP)
    fn, digest, api = _operation(spec, tok, text, lines)
    fn()  # untimed: a batch path's pools, caches and lazy imports are set up outside the timing
    seconds, result = _best_of(fn, spec["inner"])
    out.update(seconds=seconds, digest=digest(result), api=api)
    return out


# ------------------------------------------------------------------ sides
def git(*args: str, cwd: Path = ROOT) -> str:
    return subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True, text=True).stdout.strip()


def build_in_place(root: Path) -> None:
    log = root / "build_ext.log"
    with open(log, "w") as f:
        rc = subprocess.run([sys.executable, "setup.py", "build_ext", "--inplace"], cwd=root, stdout=f,
                            stderr=subprocess.STDOUT).returncode
    if rc != 0:
        raise SystemExit(f"building the core in {root} failed; see {log}:\n" + log.read_text()[-3000:])


def has_core(root: Path) -> bool:
    return bool(glob.glob(str(root / "src" / "tokenforge" / "_core*.so")))


def prepare_baseline(rev: str, cache_dir: Path) -> tuple[Path, str]:
    """Extract ``rev`` into the cache (git archive) and build its core in place, once."""
    sha = git("rev-parse", "--verify", f"{rev}^{{commit}}")
    dest = cache_dir / f"tokenforge-baseline-{sha[:12]}"
    marker = dest / ".bench-built"
    if marker.exists() and has_core(dest):
        return dest, sha
    if not (dest / "setup.py").exists():
        print(f"# extracting {sha[:12]} into {dest} ...", file=sys.stderr, flush=True)
        tmp = Path(tempfile.mkdtemp(prefix=dest.name + ".", dir=cache_dir))
        archive = tmp / "src.tar"
        subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", "-o", str(archive), sha], check=True)
        with tarfile.open(archive) as tar:
            if hasattr(tarfile, "data_filter"):
                tar.extractall(tmp, filter="data")
            else:  # pragma: no cover - Python without extraction filters
                tar.extractall(tmp)
        archive.unlink()
        try:
            tmp.rename(dest)
        except OSError:  # another run got there first
            shutil.rmtree(tmp, ignore_errors=True)
    print(f"# building the baseline core in {dest} ...", file=sys.stderr, flush=True)
    build_in_place(dest)
    marker.write_text(sha + "\n")
    return dest, sha


def prepare_current() -> list[str]:
    """Build this checkout's core if it has none; return warnings (a core older than its sources)."""
    if not has_core(ROOT):
        print(f"# building the current core in {ROOT} ...", file=sys.stderr, flush=True)
        build_in_place(ROOT)
    so = max(glob.glob(str(ROOT / "src" / "tokenforge" / "_core*.so")), key=os.path.getmtime)
    sources = [p for p in glob.glob(str(ROOT / "src" / "tokenforge" / "_core" / "*")) if p.endswith((".cpp", ".h"))]
    newer = [os.path.basename(p) for p in sources if os.path.getmtime(p) > os.path.getmtime(so)]
    if newer:
        return [f"current core is older than {', '.join(sorted(newer))}: rebuild with "
                f"'python setup.py build_ext --inplace'"]
    return []


def run_side(root: Path, spec: dict, workdir: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(root / "src"), PYTHONHASHSEED="0")
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", json.dumps(spec)]
    try:
        p = subprocess.run(cmd, env=env, cwd=workdir, capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        return {"error": "timeout"}
    if p.returncode != 0:
        lines = p.stderr.strip().splitlines()
        return {"error": lines[-1] if lines else f"exit status {p.returncode}"}
    res = json.loads(p.stdout.strip().splitlines()[-1])
    src = (root / "src").resolve()
    if not Path(res["file"]).resolve().is_relative_to(src):
        raise SystemExit(f"a worker meant for {src} imported tokenforge from {res['file']}")
    return res


# ------------------------------------------------------------------ data and cells
def _keep_lines(text: str) -> str:
    return "".join(line for line in text.splitlines(keepends=True) if not any(m in line for m in SPECIAL_MARKERS))


def _cut(text: str, limit: int) -> str:
    """The first ``limit`` UTF-8 bytes of ``text``, ended at a line end."""
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    head = data[:limit].decode("utf-8", "ignore")
    end = head.rfind("\n")
    return head[: end + 1] if end > 0 else head


def _stdlib_code(limit: int) -> str:
    parts, total = [], 0
    for path in sorted(Path(sysconfig.get_paths()["stdlib"]).glob("*.py"), key=lambda p: p.name):
        try:
            part = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        parts.append(part)
        total += len(part.encode("utf-8"))
        if total >= limit:
            break
    return "".join(parts)


def write_corpora(workdir: Path, cfg: dict) -> dict[str, tuple[str, str]]:
    """{name: (path, description)} of the input files both sides read."""
    english = "".join((TEXT / f).read_text(encoding="utf-8")
                      for f in ("tinystories_valid_sample.txt", "botchan.txt", "tinyshakespeare.txt"))
    chinese = (TEXT / "hongloumeng.txt").open(encoding="utf-8", newline="").read()
    sources = {
        "en": (english, cfg["enc_bytes"], "tinystories_valid_sample + botchan + tinyshakespeare"),
        "zh": (chinese, cfg["enc_bytes"], "hongloumeng"),
        "code": (_stdlib_code(cfg["enc_bytes"] + 100_000), cfg["enc_bytes"], "Python stdlib *.py"),
        "fam": (english, cfg["fam_bytes"], "English, as en"),
        "train": (english, cfg["train_bytes"], "English, as en"),
    }
    out = {}
    for name, (text, limit, desc) in sources.items():
        text = _cut(_keep_lines(text), limit)
        path = workdir / f"{name}.txt"
        with open(path, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        n_lines = sum(1 for line in text.splitlines() if line.strip())
        out[name] = (str(path), f"{desc}: {len(text.encode('utf-8')) / 1e6:.2f} MB, {n_lines} lines")
    return out


def build_cells(corpora: dict, cfg: dict) -> list[dict]:
    cells = []

    def add(name, group, **spec):
        cells.append({"name": name, "group": group, "spec": spec})

    for enc in ENCODINGS:
        for corpus in ("en", "zh", "code"):
            data = corpora[corpus][0]
            add(f"encode {enc} {corpus}: encode(doc)", "encode", kind="encode_doc", tok=["encoding", enc], data=data)
            add(f"encode {enc} {corpus}: encode_batch(lines)", "encode", kind="encode_batch", tok=["encoding", enc],
                data=data)
    gpt2 = ["file", str(FILES["gpt2 vocab.json+merges.txt"][1])]
    add("encode gpt2 (load) en: encode(doc)", "encode", kind="encode_doc", tok=gpt2, data=corpora["en"][0])
    add("encode gpt2 (load) en: encode_batch(lines)", "encode", kind="encode_batch", tok=gpt2, data=corpora["en"][0])
    for label in FAMILY_FILES:
        fam, path = FILES[label]
        tok = ["file", str(path)]
        add(f"encode {fam} {label}: encode(doc)", "encode", kind="encode_doc", tok=tok, data=corpora["fam"][0])
        add(f"encode {fam} {label}: encode per line", "encode", kind="encode_lines", tok=tok, data=corpora["fam"][0])
    add("decode cl100k_base en", "decode", kind="decode", tok=["encoding", "cl100k_base"], data=corpora["en"][0])
    for label in FAMILY_FILES:
        fam, path = FILES[label]
        add(f"decode {fam} {label}", "decode", kind="decode", tok=["file", str(path)], data=corpora["fam"][0])
    for enc in ENCODINGS:
        add(f"load get_encoding({enc})", "load", kind="load", tok=["encoding", enc])
    for label, (fam, path) in FILES.items():
        add(f"load {fam} {label}", "load", kind="load", tok=["file", str(path)])
    for trainer in TRAINERS:
        add(f"train {trainer} (vocab {cfg['vocab']})", "train", kind="train", trainer=trainer,
            data=corpora["train"][0], vocab=cfg["vocab"])
    for label in NEW_PATH_FILES:
        fam, path = FILES[label]
        tok = ["file", str(path)]
        add(f"new path: {fam} {label}: numpy batch", "new path", kind="new_numpy", tok=tok, data=corpora["fam"][0])
        add(f"new path: {fam} {label}: batch {NEW_PATH_THREADS} threads", "new path", kind="new_batch", tok=tok,
            data=corpora["fam"][0])
    for c in cells:
        c["spec"]["inner"] = 1 if c["group"] == "load" else cfg["inner"]
    return cells


# ------------------------------------------------------------------ main
def machine_line() -> str:
    cpu = "unknown cpu"
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            cpu = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), cpu)
    except OSError:
        pass
    try:
        import numpy

        np_version = numpy.__version__
    except ImportError:
        np_version = None
    return (f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} | nproc={len(os.sched_getaffinity(0))} | {cpu} | "
            f"{platform.python_implementation()} {platform.python_version()} ({sys.executable}) | numpy {np_version} | "
            f"{platform.platform()}")


def side_line(label: str, root: Path, commit: str, probe: dict) -> str:
    subject = git("log", "-1", "--format=%s", commit)
    return (f"# {label}: {commit} \"{subject}\" | tokenforge from {probe['file']} | "
            f"native core {'loaded' if probe.get('native') else 'NOT loaded'} | {core_so_info(str(root / 'src' / 'tokenforge'))}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--baseline", help="git revision to compare with (e.g. a commit hash); required")
    ap.add_argument("--quick", action="store_true", help="smoke run: ~100 KB inputs, 2 rounds of 5 calls")
    ap.add_argument("--repeats", type=int, help="rounds (processes per side and cell); default 5, --quick 2")
    ap.add_argument("--inner", type=int, help="timed calls per process; default 3, --quick 5")
    ap.add_argument("--only", help="comma-separated substrings: run only the cells whose name holds one")
    ap.add_argument("--cache-dir", default=tempfile.gettempdir(), help="where the baseline is built (default: %(default)s)")
    ap.add_argument("--json", metavar="PATH", help="also write every figure to PATH")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(worker(json.loads(args.worker))))
        return 0
    if not args.baseline:
        ap.error("--baseline is required")

    cfg = dict(QUICK if args.quick else FULL)
    cfg["repeats"] = args.repeats or cfg["repeats"]
    cfg["inner"] = args.inner or cfg["inner"]
    base_root, base_sha = prepare_baseline(args.baseline, Path(args.cache_dir))
    warnings = prepare_current()
    cur_commit = git_head(str(ROOT / "src")) or "?"
    sides = {"baseline": base_root, "current": ROOT}
    for root in sides.values():  # so that no timed call pays for compiling a lazily imported module
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(root / "src" / "tokenforge")], check=False,
                       stdout=subprocess.DEVNULL)

    workdir = Path(tempfile.mkdtemp(prefix="tokenforge-vs-baseline-"))
    started = time.perf_counter()
    load_start = os.getloadavg()
    try:
        probes = {s: run_side(r, {"kind": "probe", "side": s}, workdir) for s, r in sides.items()}
        for s, p in probes.items():
            if "error" in p:
                raise SystemExit(f"{s}: tokenforge does not import: {p['error']}")
        corpora = write_corpora(workdir, cfg)
        cells = build_cells(corpora, cfg)
        if args.only:
            keys = [k.strip() for k in args.only.split(",") if k.strip()]
            cells = [c for c in cells if any(k in c["name"] for k in keys)]
        for c in cells:
            c["runs"] = {"baseline": [], "current": []}
        for r in range(cfg["repeats"]):
            print(f"# round {r + 1}/{cfg['repeats']}: {len(cells)} cells x 2 sides", file=sys.stderr, flush=True)
            for c in cells:
                for side, root in sides.items():  # A B A B ...
                    c["runs"][side].append(run_side(root, dict(c["spec"], side=side), workdir))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)

    rows, table, outside, mismatches, ratios = [], [], [], [], []
    for c in cells:
        best, digests, apis, errors = {}, {}, {}, {}
        for side, runs in c["runs"].items():
            ok = [x for x in runs if "error" not in x]
            errors[side] = sorted({x["error"] for x in runs if "error" in x})
            best[side] = min((x["seconds"] for x in ok), default=None)
            digests[side] = sorted({x["digest"] for x in ok})
            apis[side] = sorted({x["api"] for x in ok})
        ratio = best["current"] / best["baseline"] if best["current"] and best["baseline"] else None
        same = bool(digests["baseline"]) and digests["baseline"] == digests["current"] and len(digests["current"]) == 1
        new_path = c["group"] == "new path"
        if not same:
            mismatches.append(c["name"])
        if ratio is not None and not new_path:
            ratios.append(ratio)
            if abs(ratio - 1) > TOLERANCE:
                outside.append(f"{c['name']} ({ratio:.2f})")
        note = []
        if new_path:
            note.append(f"current: {', '.join(apis['current']) or '-'}")
        for side in sides:
            if errors[side]:
                note.append(f"{side} error: {'; '.join(errors[side])}")
        table.append([c["name"], fmt_seconds(best["baseline"]), fmt_seconds(best["current"]), fmt_ratio(ratio),
                      "same" if same else "DIFF", "; ".join(note)])
        rows.append({"cell": c["name"], "group": c["group"], "spec": c["spec"], "best_s": best, "ratio": ratio,
                     "ids_equal": same, "digests": digests, "apis": apis, "errors": errors,
                     "times_s": {s: [x.get("seconds") for x in runs] for s, runs in c["runs"].items()}})

    print(f"# machine: {machine_line()}")
    print(f"# loadavg at start {[round(x, 2) for x in load_start]}, at end {[round(x, 2) for x in os.getloadavg()]}")
    print(side_line(f"baseline {args.baseline}", base_root, base_sha[:12], probes["baseline"]))
    print(side_line("current", ROOT, cur_commit, probes["current"]))
    print(f"# command: {shlex.join(['python', *sys.argv])}")
    print(f"# {cfg['repeats']} rounds x {cfg['inner']} timed calls per process (load: 1), best per side; "
          f"new-path threads: {NEW_PATH_THREADS}")
    for name, (_, desc) in corpora.items():
        print(f"# input {name}: {desc}")
    for w in warnings:
        print(f"# warning: {w}")
    print()
    print_table(["cell", "baseline", "current", "current/baseline", "ids", "note"], table)
    print()
    n_reg = sum(1 for c in cells if c["group"] != "new path")
    spread = f"; ratios {min(ratios):.3f}..{max(ratios):.3f}, median {statistics.median(ratios):.3f}" if ratios else ""
    print(f"{len(outside)} of {n_reg} cells outside +/-{TOLERANCE:.0%} (new-path cells not counted){spread}"
          + (": " + ", ".join(outside) if outside else ""))
    print(f"ids differ in {len(mismatches)} cells" + (": " + ", ".join(mismatches) if mismatches else ""))
    print(f"# wall time {time.perf_counter() - started:.0f} s", file=sys.stderr)

    if args.json:
        meta = {"machine": machine_line(), "baseline": {"rev": args.baseline, "commit": base_sha, "root": str(base_root),
                                                         **probes["baseline"]},
                "current": {"commit": cur_commit, "root": str(ROOT), **probes["current"]},
                "command": ["python", *sys.argv], "config": cfg, "inputs": {k: v[1] for k, v in corpora.items()},
                "tolerance": TOLERANCE, "outside": outside, "mismatches": mismatches}
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"meta": meta, "cells": rows}, f, indent=2)
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())

"""Helpers shared by the benchmark scripts (not a benchmark itself).

Everything here is measurement plumbing: building a tokenforge tokenizer and
a tiktoken ``Encoding`` from the *same* ranks, pattern and special tokens
(offline, no download), timing with ``perf_counter``, and describing the
machine a run happened on so that figures can be read later.
"""

from __future__ import annotations

import datetime as _dt
import gc
import os
import platform
import sys
import time
from typing import Any, Callable, Sequence

DATA_DIR = "/work/shared/data"
BACKENDS = ("auto", "native", "python")


def add_backend_arg(ap) -> None:
    ap.add_argument(
        "--backend",
        choices=BACKENDS,
        default=None,
        help="tokenforge backend, passed on as TOKENFORGE_BACKEND (default: leave the environment as it is, "
        "i.e. 'auto': the compiled core when it is built, else pure Python)",
    )


def apply_backend(backend: str | None) -> None:
    """Select tokenforge's backend for this process and every process it starts."""
    if backend is not None:
        os.environ["TOKENFORGE_BACKEND"] = backend


def backend_info() -> dict[str, Any]:
    """Which tokenforge backend is asked for and whether the compiled core can be loaded."""
    requested = os.environ.get("TOKENFORGE_BACKEND", "auto")
    try:
        from tokenforge import _native
    except ImportError:  # a tokenforge without a compiled core at all
        return {"requested": requested, "native_available": False, "active": "python", "detail": "no tokenforge._native"}
    available = _native.available()
    active = "native" if available and requested != "python" else "python"
    if requested == "native" and not available:
        raise SystemExit(f"--backend native asked for, but the core does not load: {_native._IMPORT_ERROR}")
    return {
        "requested": requested,
        "native_available": available,
        "active": active,
        "detail": None if available else getattr(_native, "_IMPORT_ERROR", None),
    }


def tokenizer_backend(tok) -> str:
    """What one tokenforge Tokenizer runs on: its plan ('rank-bpe', 'sentencepiece',
    'wordpiece' or 'python'; see ``tokenforge._plans``)."""
    return tok.plan


def machine_info() -> dict[str, Any]:
    """Date, core count, Python and library versions, CPU model, load average, backend."""
    import tokenforge

    cpu = "unknown"
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        affinity = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        affinity = os.cpu_count()
    try:
        import tiktoken

        tiktoken_version = getattr(tiktoken, "__version__", None) or _dist_version("tiktoken")
    except ImportError:
        tiktoken_version = None
    try:
        load = os.getloadavg()
    except OSError:  # pragma: no cover
        load = None
    return {
        "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "nproc": affinity,
        "cpu": cpu,
        "python": platform.python_version(),
        "python_impl": platform.python_implementation(),
        "platform": platform.platform(),
        "tokenforge": getattr(tokenforge, "__version__", "?"),
        "tiktoken": tiktoken_version,
        "loadavg": None if load is None else [round(x, 2) for x in load],
        "backend": backend_info(),
        "tokenforge_path": os.path.dirname(tokenforge.__file__),
        "tokenforge_tree": tree_digest(os.path.dirname(tokenforge.__file__)),
        "tokenforge_commit": git_head(os.path.dirname(tokenforge.__file__)),
        "core_so": core_so_info(os.path.dirname(tokenforge.__file__)),
    }


def git_head(path: str) -> str | None:
    """Short commit of the checkout the package is imported from, with '+dirty' when
    tracked files under src/ differ from it (the compiled core may predate those edits)."""
    import subprocess

    try:
        head = subprocess.run(["git", "-C", path, "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", path, "status", "--porcelain", "--", "."], capture_output=True, text=True,
                               timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return (head + ("+dirty" if dirty else "")) if head else None


def core_so_info(root: str) -> str | None:
    """sha256 prefix and build time (mtime, UTC) of the compiled core, if any."""
    import glob
    import hashlib

    sos = sorted(glob.glob(os.path.join(root, "_core*.so")) + glob.glob(os.path.join(root, "_core*.pyd")))
    if not sos:
        return None
    path = sos[0]
    with open(path, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()[:12]
    built = _dt.datetime.fromtimestamp(os.path.getmtime(path), _dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    return f"{os.path.basename(path)} sha256 {digest}, built {built}"


def tree_digest(root: str) -> str:
    """Short sha256 over the package's source and extension files, to tell apart
    the states of a tree that is being edited while benchmarks run."""
    import hashlib

    h = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for fn in sorted(filenames):
            if fn.endswith((".py", ".so", ".pyd", ".cpp", ".h")):
                path = os.path.join(dirpath, fn)
                h.update(os.path.relpath(path, root).encode())
                with open(path, "rb") as f:
                    h.update(hashlib.sha256(f.read()).digest())
    return h.hexdigest()[:12]


def _dist_version(name: str) -> str | None:
    try:
        from importlib.metadata import version

        return version(name)
    except Exception:  # pragma: no cover
        return None


def print_machine(info: dict[str, Any], file=sys.stdout) -> None:
    print(
        f"# {info['date']} | nproc={info['nproc']} | {info['cpu']} | "
        f"{info['python_impl']} {info['python']} | tokenforge {info['tokenforge']} | "
        f"tiktoken {info['tiktoken']} | loadavg {info['loadavg']}",
        file=file,
    )
    b = info["backend"]
    print(
        f"# tokenforge backend: {b['active']} (TOKENFORGE_BACKEND={b['requested']}, "
        f"compiled core {'available' if b['native_available'] else 'not available'}) | "
        f"from {info['tokenforge_path']} (tree {info['tokenforge_tree']})",
        file=file,
    )
    print(f"# tokenforge commit {info.get('tokenforge_commit')} | core: {info.get('core_so')}", file=file)


class Reference:
    """One encoding's tables, copied out of tokenforge once, ready to build
    fresh tokenforge tokenizers and tiktoken encodings from."""

    def __init__(self, name: str) -> None:
        import tokenforge

        tok = tokenforge.get_encoding(name)
        self.name = name
        self.ranks: dict[bytes, int] = dict(tok.mergeable_ranks)
        self.pattern: str = tok.pattern
        self.specials: dict[str, int] = dict(tok.special_tokens)
        self.model = tok.model
        self.pre_tokenizer = tok.pre_tokenizer  # the named RegexSplit: the core has a scanner for it

    def fresh_tokenforge(self):
        """A new tokenizer on the shared model: its piece cache is empty and, with the
        native core, its CoreBPE is new, so the one-time trie index of the linear
        backtracking encoder is built again on its first piece of 16+ bytes
        (``get_encoding`` caches instances, so it is not used for timing)."""
        import tokenforge

        return tokenforge.Tokenizer(self.model, pre_tokenizer=self.pre_tokenizer, special_tokens=self.specials)

    def fresh_tiktoken(self):
        """A tiktoken Encoding with the same ranks, pattern and specials (offline)."""
        import tiktoken

        return tiktoken.Encoding(
            name=f"bench-{self.name}",
            pat_str=self.pattern,
            mergeable_ranks=self.ranks,
            special_tokens=self.specials,
        )


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    """Run ``fn`` once after a full collection; return (seconds, result).

    The collector stays enabled during the call, as it is in real use.
    """
    gc.collect()
    t0 = time.perf_counter()
    result = fn()
    return time.perf_counter() - t0, result


def first_mismatch(a: Sequence[int], b: Sequence[int]) -> int | None:
    """Index of the first position where two id lists differ (None if equal)."""
    if a == b:
        return None
    n = min(len(a), len(b))
    for i in range(n):
        if a[i] != b[i]:
            return i
    return n


def mismatch_report(label: str, tf_ids: Sequence[int], tt_ids: Sequence[int], decode_bytes) -> str:
    """A loud, readable description of where two id lists diverge."""
    i = first_mismatch(tf_ids, tt_ids)
    lo = max(0, (i or 0) - 5)
    hi = (i or 0) + 6
    ctx_tf = list(tf_ids[lo:hi])
    ctx_tt = list(tt_ids[lo:hi])
    try:
        text = decode_bytes(list(tt_ids[lo:hi]))
    except Exception as exc:  # pragma: no cover - diagnostic only
        text = f"<decode failed: {exc}>"
    return (
        f"!!! ID MISMATCH [{label}]: tokenforge {len(tf_ids)} ids, tiktoken {len(tt_ids)} ids; "
        f"first difference at index {i}\n"
        f"    tokenforge ids[{lo}:{hi}] = {ctx_tf}\n"
        f"    tiktoken   ids[{lo}:{hi}] = {ctx_tt}\n"
        f"    tiktoken bytes there     = {text!r}"
    )


def fmt_ratio(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def fmt_seconds(s: float | None) -> str:
    if s is None:
        return "-"
    if s < 1e-3:
        return f"{s * 1e6:.0f}us"
    if s < 1:
        return f"{s * 1e3:.1f}ms"
    return f"{s:.2f}s"


def print_table(headers: Sequence[str], rows: Sequence[Sequence[Any]], file=sys.stdout) -> None:
    """A GitHub-flavoured Markdown table (so output can be pasted into RESULTS.md)."""
    cells = [[str(h) for h in headers]] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    def line(r):
        return "| " + " | ".join(c.rjust(w) if j else c.ljust(w) for j, (c, w) in enumerate(zip(r, widths))) + " |"
    print(line(cells[0]), file=file)
    print("|" + "|".join("-" * (w + 1) + ":" if j else "-" * (w + 2) for j, w in enumerate(widths)) + "|", file=file)
    for r in cells[1:]:
        print(line(r), file=file)
    file.flush()

"""tokenforge ships ``py.typed``: its annotations are what users' type checkers read.

``mypy --strict`` must pass on code a user writes against the public API
(``user_code.py``) and on the public modules themselves. A deliberate type error
must be reported, which proves both that this test can fail and that mypy reads
tokenforge's annotations (an untyped package would give ``Any`` and no error).

mypy keeps its cache in pytest's cache directory (``.pytest_cache``), so a second
run re-checks only what changed.
"""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mypy")

import tokenforge  # noqa: E402

HERE = Path(__file__).resolve().parent

#: The public modules, checked with ``--strict``; the modules they import are checked
#: too, but their errors are not reported (``--follow-imports=silent``).
PUBLIC_MODULES = (
    "tokenforge.tokenizer",
    "tokenforge.io",
    "tokenforge.encoding",
    "tokenforge.errors",
    "tokenforge.limits",
    "tokenforge.encodings",
    "tokenforge.presets",
    "tokenforge.padding",
    "tokenforge.specials",
    "tokenforge.trainers",
    "tokenforge.trainers.bpe",
    "tokenforge.prepare",
    "tokenforge.prepare.reader",
    "tokenforge.web",
    "tokenforge.web.app",
    "tokenforge.web.views",
    "tokenforge.web.static_page",
    "tokenforge.trainers.wordpiece",
    "tokenforge.trainers.unigram",
    "tokenforge.trainers.spm_bpe",
    "tokenforge.compat.sentencepiece",
    "tokenforge.compat.cs336",
    "tokenforge.chat",
    "tokenforge.decoders",
    "tokenforge.normalizers",
    "tokenforge.pretokenizers",
    "tokenforge.postprocessors",
    "tokenforge.progress",
)
PUBLIC_PACKAGES = ("tokenforge.compat.tiktoken",)


def _mypy(request: pytest.FixtureRequest, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    cache = getattr(request.config, "cache", None)  # None with -p no:cacheprovider
    cache_dir = cache.mkdir("mypy") if cache is not None else tmp_path / "mypy_cache"
    cmd = [sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent", "--no-color-output",
           "--cache-dir", str(cache_dir), *args]
    env = {k: v for k, v in os.environ.items() if k not in ("MYPYPATH", "MYPY_CACHE_DIR")}
    return subprocess.run(cmd, capture_output=True, text=True, cwd=HERE.parents[1], env=env, timeout=600)


def _report(proc: subprocess.CompletedProcess[str]) -> str:
    return f"mypy exited with {proc.returncode}:\n{proc.stdout}{proc.stderr}"


def test_user_code_passes_mypy_strict(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    proc = _mypy(request, tmp_path, str(HERE / "user_code.py"))
    assert proc.returncode == 0, _report(proc)


def test_public_modules_pass_mypy_strict(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    try:  # the modules import regex, whose types come from typeshed's stub package
        importlib.metadata.version("types-regex")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("types-regex is not installed (pip install types-regex)")
    modules = [arg for m in PUBLIC_MODULES for arg in ("-m", m)]
    packages = [arg for p in PUBLIC_PACKAGES for arg in ("-p", p)]
    proc = _mypy(request, tmp_path, *modules, *packages)
    assert proc.returncode == 0, _report(proc)


def test_lazily_bound_top_level_names_are_typed(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    proc = _mypy(request, tmp_path, str(HERE / "lazy_names.py"))
    assert proc.returncode == 0, _report(proc)


def test_a_type_error_against_the_api_is_reported(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    snippet = tmp_path / "wrong.py"
    snippet.write_text(
        "import tokenforge\n"
        "\n"
        'x: str = tokenforge.get_encoding("gpt2").encode("a")\n',
        encoding="utf-8",
    )
    proc = _mypy(request, tmp_path, str(snippet))
    assert proc.returncode == 1, _report(proc)
    assert "wrong.py:3: error: Incompatible types in assignment" in proc.stdout, _report(proc)
    assert '"list[int]"' in proc.stdout, _report(proc)
    assert str(Path(tokenforge.__file__).parent) not in proc.stdout, _report(proc)  # no error of the package's own

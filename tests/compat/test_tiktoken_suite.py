"""tiktoken's own test files pass with ``import tiktoken`` giving tokenforge's module.

The files (``tests/fixtures/tiktoken_tests``, unchanged from tiktoken's repository)
run in a separate pytest process whose ``tiktoken`` is a one-line package that
puts ``tokenforge.compat.tiktoken`` in its place, so even the subprocesses those
tests start import tokenforge, not tiktoken.

The run uses a fixed hypothesis seed. Hypothesis also draws string constants from
the code under test, and tokenforge's source holds ``"<|endoftext|>"``: a text
that is exactly that string makes ``test_hyp_roundtrip`` raise, as it does with
tiktoken itself (a special-token string in text is disallowed by default), so
with some seeds the upstream test fails on both libraries alike.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

SUITE = Path(__file__).resolve().parents[1] / "fixtures" / "tiktoken_tests"

SHIM = """\
import sys

import tokenforge.compat.tiktoken as _tf

sys.modules[__name__] = _tf
"""


def test_tiktoken_test_files_pass_against_the_compat_module(tmp_path):
    shim = tmp_path / "shim" / "tiktoken"
    shim.mkdir(parents=True)
    (shim / "__init__.py").write_text(SHIM)
    (tmp_path / "shim" / "tiktoken_ext").mkdir()  # tiktoken's plugin namespace, empty here
    shutil.copytree(SUITE, tmp_path / "tests", ignore=shutil.ignore_patterns("*.md", "LICENSE"))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path / "shim"), *filter(None, [env.get("PYTHONPATH")])])
    env.setdefault("TIKTOKEN_MAX_EXAMPLES", "50")
    proof = (
        "import tiktoken, tokenforge.compat.tiktoken as t; "
        "assert tiktoken is t, tiktoken.__file__"
    )
    subprocess.run([sys.executable, "-c", proof], env=env, check=True, cwd=tmp_path)
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", "--hypothesis-seed=0", "tests"],
        env=env, cwd=tmp_path, capture_output=True, text=True, timeout=1200,
    )
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-3000:]
    assert " passed" in run.stdout and "skipped" not in run.stdout, run.stdout[-2000:]

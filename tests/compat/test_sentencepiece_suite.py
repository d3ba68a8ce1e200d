"""sentencepiece's own Python tests pass with ``import sentencepiece`` giving tokenforge's module.

``tests/fixtures/sentencepiece_suite`` holds ``sentencepiece_test.py`` unchanged
from sentencepiece 0.2.3 with its models and ``botchan.txt``. It runs in a
separate pytest process whose ``sentencepiece`` is a one-line package that puts
``tokenforge.compat.sentencepiece`` in its place. Every test of the file that
passes on the real library (run the same way when it is installed) must pass
on the drop-in; without the library, every test must pass -- except the
:data:`KNOWN_GAPS` below, which must still fail (so that fixing one shows here).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

SUITE = Path(__file__).resolve().parents[1] / "fixtures" / "sentencepiece_suite"

SHIM = """\
import sys

import tokenforge.compat.sentencepiece as _tf

sys.modules[__name__] = _tf
"""


#: Tests of the file the drop-in does not pass yet, and why.
KNOWN_GAPS = {
    # It trains a Unigram model on botchan.txt, then wants 10 segmentations of "the" * 20000.
    # On the model tokenforge's trainer learns (a few percent of its pieces differ from
    # sentencepiece's) that search passes sentencepiece's 500,000-hypothesis limit, and
    # sentencepiece itself answers with the best path alone on that model, as tokenforge does.
    "test_nbest_timeout": "on tokenforge's trained model, sentencepiece too gives 1 result, not 10",
}


def _run(tmp: Path, name: str, shim: bool) -> dict[str, str]:
    """``{test name: outcome}`` of one pytest run of the suite."""
    work = tmp / name
    shutil.copytree(SUITE, work / "test", ignore=shutil.ignore_patterns("*.md", "LICENSE"))
    env = dict(os.environ)
    if shim:
        (work / "shim" / "sentencepiece").mkdir(parents=True)
        (work / "shim" / "sentencepiece" / "__init__.py").write_text(SHIM)
        env["PYTHONPATH"] = os.pathsep.join([str(work / "shim"), *filter(None, [env.get("PYTHONPATH")])])
        proof = "import sentencepiece, tokenforge.compat.sentencepiece as t; assert sentencepiece is t"
        subprocess.run([sys.executable, "-c", proof], env=env, check=True, cwd=work)
    report = work / "report.xml"
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", "-n", "0",
         "-o", "addopts=", f"--junitxml={report}", "test/sentencepiece_test.py"],
        env=env, cwd=work, capture_output=True, text=True, timeout=1800,
    )
    outcomes = {}
    for case in ET.parse(report).iter("testcase"):
        kinds = [child.tag for child in case if child.tag in ("failure", "error", "skipped")]
        outcomes[case.get("name", "")] = kinds[0] if kinds else "passed"
    return outcomes


def test_sentencepiece_test_file_passes_against_the_compat_module(tmp_path):
    ours = _run(tmp_path, "tokenforge", shim=True)
    assert len(ours) > 40, ours
    if importlib.util.find_spec("sentencepiece") is not None:
        reference = _run(tmp_path, "sentencepiece", shim=False)
        expected = sorted(name for name, outcome in reference.items() if outcome == "passed")
    else:
        expected = sorted(ours)
    failing = {name: ours.get(name, "missing") for name in expected
               if ours.get(name) != "passed" and name not in KNOWN_GAPS}
    assert not failing, failing
    fixed = sorted(name for name in KNOWN_GAPS if ours.get(name) == "passed")
    assert not fixed, f"{fixed} pass now: remove them from KNOWN_GAPS"

"""The documentation site builds with ``mkdocs build --strict`` (broken links, missing API
references and docstring warnings fail), and its generated pages hold what they must.

Needs the ``docs`` extra (``pip install -e '.[docs]'``); skipped without it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mkdocs")
pytest.importorskip("mkdocstrings")
pytest.importorskip("material")

ROOT = Path(__file__).resolve().parents[2]


def test_docs_build_strict(tmp_path: Path) -> None:
    if not (ROOT / "mkdocs.yml").is_file():
        pytest.skip("no mkdocs.yml (not a source checkout)")
    site = tmp_path / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, f"mkdocs build --strict failed:\n{proc.stdout}\n{proc.stderr}"

    cli = (site / "reference" / "cli" / "index.html").read_text(encoding="utf-8")
    assert "usage: tokenforge encode" in cli
    for command in ("train", "prepare", "convert", "heal"):
        assert f"usage: tokenforge {command}" in cli

    api = (site / "api" / "tokenizer" / "index.html").read_text(encoding="utf-8")
    assert "Tokenizer" in api
    assert "encode" in api
    assert "encode_batch_to_numpy" in api

    for page in ("index.html", "differential/index.html", "compare/index.html", "compare.png",
                 "benchmarks/index.html", "api/io/index.html", "reference/formats/index.html"):
        assert (site / page).is_file(), page

"""Shared fixtures. Keep this file small: only what several test files need."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

import tokenforge

# CI runs every property test on the same examples (no flaky landings); local runs explore.
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

FIXTURES = Path(__file__).resolve().parent / "fixtures"

# Other projects' test files, run against tokenforge by their own runner (tests/compat/).
collect_ignore = ["fixtures/tiktoken_tests", "fixtures/sentencepiece_suite"]


@pytest.fixture
def unwritable_folder(tmp_path: Path) -> Path:
    """A folder this process cannot create files in (root ignores permissions: /sys, /proc/self)."""
    import tempfile

    if os.geteuid() != 0:
        folder = tmp_path / "ro"
        folder.mkdir()
        folder.chmod(0o500)
        return folder
    for folder in (Path("/sys/kernel"), Path("/sys"), Path("/proc/self")):
        try:
            with tempfile.TemporaryFile(dir=folder):
                pass
        except OSError:
            return folder
    pytest.skip("no unwritable folder on this machine")


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """``shared/data`` beside the repository (CI) or ``$TOKENFORGE_SHARED_DATA``.

    A user's clone has neither: tests that use this fixture are skipped.
    """
    env = os.environ.get("TOKENFORGE_SHARED_DATA")
    if env:
        path = Path(env)
        if not path.is_dir():
            pytest.skip(f"TOKENFORGE_SHARED_DATA={env!r} is not a directory")
        return path
    path = Path(__file__).resolve().parents[2] / "shared" / "data"
    if not path.is_dir():
        pytest.skip(f"shared test data not found at {path} (set TOKENFORGE_SHARED_DATA to use it)")
    return path


@pytest.fixture(scope="session")
def varied_text() -> str:
    """About 2 kB of mixed scripts, code, numbers, emoji, odd whitespace and control characters."""
    # read_bytes: keep the CR and CRLF in the file as they are
    return (FIXTURES / "formats" / "varied.txt").read_bytes().decode("utf-8")


@pytest.fixture(scope="session")
def small_tokenizer(varied_text: str) -> tokenforge.Tokenizer:
    """A 300-token byte-level BPE trained in-process, with ``<|endoftext|>`` as id 256."""
    return tokenforge.BPETrainer(vocab_size=300, special_tokens=["<|endoftext|>"]).train_from_iterator(
        varied_text.split("\n")
    )

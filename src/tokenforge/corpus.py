"""The small multilingual corpus embedded in the package.

English, Chinese and Japanese prose, Python code, and a little of eight more
scripts from the Universal Declaration of Human Rights; each language is split
into a training part and a held-out part. Sources and licences are listed in
``data/corpus/SOURCES.md``; ``tools/build_corpus.py`` rebuilds the files.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class CorpusLanguage:
    code: str
    name: str
    script: str
    train: Path
    heldout: Path

    def train_text(self) -> str:
        return self.train.read_text(encoding="utf-8")

    def heldout_text(self) -> str:
        return self.heldout.read_text(encoding="utf-8")


def corpus_dir() -> Path:
    """Directory of the embedded corpus (a real directory in every normal install)."""
    from importlib import resources  # here, not at import: it costs ~13 ms

    return Path(str(resources.files("tokenforge").joinpath("data", "corpus")))


def embedded_corpus() -> list[CorpusLanguage]:
    """The languages of the embedded corpus, in manifest order."""
    root = corpus_dir()
    manifest = json.loads((root / "manifest.json").read_text(encoding="utf-8"))
    return [
        CorpusLanguage(
            code=entry["code"],
            name=entry["name"],
            script=entry["script"],
            train=root / entry["train"],
            heldout=root / entry["heldout"],
        )
        for entry in manifest["languages"]
    ]

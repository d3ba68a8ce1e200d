"""``import tokenforge`` and ``get_encoding(...).encode`` stay light: they load no file
format, trainer, numpy or multiprocessing (no timing asserts: ``sys.modules`` is checked
in a fresh interpreter)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"

HEAVY = (
    "numpy",
    "multiprocessing",
    "concurrent.futures.process",
    "tokenforge.io",
    "tokenforge.gguf",
    "tokenforge.formats.hf_json",
    "tokenforge.formats.gguf",
    "tokenforge.formats.sentencepiece",
    "tokenforge.formats.gpt2",
    "tokenforge.formats.bert_vocab",
    "tokenforge.formats.native",
    "tokenforge.sentencepiece.proto",
    "tokenforge.sentencepiece.convert",
    "tokenforge.trainers",
    "tokenforge.analysis",
    "tokenforge.cli",
)

_SCRIPT = """
import json, sys
import tokenforge
after_import = sorted(sys.modules)
enc = tokenforge.get_encoding("cl100k_base")
ids = enc.encode("hello world " * 90)
assert enc.decode(ids) == "hello world " * 90
print(json.dumps({"import": after_import, "encode": sorted(sys.modules),
                  "sentencepiece": callable(tokenforge.sentencepiece),
                  "prepare": callable(tokenforge.prepare)}))
"""


def _run() -> dict:
    env = dict(os.environ, PYTHONPATH=str(SRC) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, "-c", _SCRIPT], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def _heavy(modules: list[str]) -> list[str]:
    return [m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY)]


def test_import_and_first_encode_load_no_heavy_module():
    got = _run()
    assert _heavy(got["import"]) == []
    assert _heavy(got["encode"]) == []
    # the names that are both a function and a subpackage stay bound to the function
    assert got["sentencepiece"] and got["prepare"]


def test_every_public_name_resolves_lazily():
    script = (
        "import tokenforge\n"
        "names = tokenforge.__all__\n"
        "assert set(names) <= set(dir(tokenforge))\n"
        "for n in names:\n"
        "    getattr(tokenforge, n)\n"
        "    exec(f'from tokenforge import {n}')\n"
        "from tokenforge import BPE, load, train_bpe\n"
        "from tokenforge.models.bpe import BPE as B\n"
        "assert BPE is B and callable(tokenforge.load) and callable(tokenforge.prepare)\n"
        "assert callable(tokenforge.sentencepiece)\n"
        "assert tokenforge.io.load is tokenforge.load\n"
        "assert not hasattr(tokenforge, 'Pipeline')\n"
    )
    env = dict(os.environ, PYTHONPATH=str(SRC) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    subprocess.run([sys.executable, "-c", script], env=env, check=True)

"""A short, deterministic run of ``fuzz/formats.py``: a fixed number of mutations of every
format's seed files, each loaded in a forked child; none may fail (crash, hang, run out of
memory, raise anything but a ``TokenforgeError`` naming the file, or give other ids than
the reference library). Seeds come from the repository only, so every machine runs the
same cases. The long run (thousands of mutations per format) is in ``fuzz/README.md``.
"""

from __future__ import annotations

import importlib.util
import os
import signal
import sys
import time
from pathlib import Path

import pytest

import tokenforge
from tokenforge import FileFormatError

#: mutations per format: about 15 s for all seven on two cores
RUNS = 30
SEED = 0

_PATH = Path(__file__).resolve().parents[2] / "fuzz" / "formats.py"


def _load_fuzzer():
    name = "tokenforge_fuzz_formats"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, _PATH)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


fuzz = _load_fuzzer()

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the fuzzer forks a child per case")


@pytest.fixture(scope="module")
def seeds():
    return fuzz.build_seeds(use_shared=False)


def _explain(results) -> str:
    return "\n".join(
        f"{r.case.fmt} case {r.case.index} ({r.case.seed.name}; {', '.join(r.case.ops)}): {r.outcome}\n{r.detail[:1500]}\n"
        f"replay: python fuzz/formats.py --no-shared --format {r.case.fmt} --seed {SEED} --case {r.case.index}"
        for r in results
    )


def test_every_seed_loads_and_agrees_with_its_reference(seeds):
    from tokenforge.io import LOAD_FORMATS

    assert set(seeds) == set(fuzz.FORMATS) == set(LOAD_FORMATS)
    assert all(seeds[fmt] for fmt in fuzz.FORMATS)
    bad = fuzz.check_seeds(seeds)
    assert not bad, _explain(bad)


@pytest.mark.parametrize("fmt", fuzz.FORMATS)
def test_mutated_files_load_or_fail_cleanly(seeds, fmt):
    stats, failures = fuzz.fuzz([fmt], seed=SEED, runs=RUNS, seeds=seeds)
    s = stats[fmt]
    assert s.runs == RUNS
    assert not failures, _explain(failures)
    assert s.errors + s.loads == RUNS
    assert s.errors > 0  # the mutations do damage the files


def test_cases_are_the_same_for_the_same_seed_and_differ_across_seeds(seeds):
    for fmt in fuzz.FORMATS:
        a = [fuzz.make_case(fmt, i, seeds, 7) for i in range(20)]
        b = [fuzz.make_case(fmt, i, seeds, 7) for i in range(20)]
        assert [(c.seed.name, c.files, c.ops) for c in a] == [(c.seed.name, c.files, c.ops) for c in b]
        c = [fuzz.make_case(fmt, i, seeds, 8) for i in range(20)]
        assert [x.files for x in a] != [x.files for x in c]
        assert any(x.files != x.seed.files for x in a)


def test_structured_mutators_cover_what_they_promise(seeds):
    """Across a few hundred cases the mutators produce JSON NaN, infinities, ids past u32 and deep
    nesting, and field-aware SentencePiece and GGUF changes."""
    text = b"".join(b for i in range(300) for b in fuzz.make_case("hf", i, seeds).files.values())
    for token in (b"NaN", b"Infinity", b"[[[[[[[[", b'{"a":{"a":', b"4294967296"):
        assert token in text, token
    ops = {op for i in range(60) for op in fuzz.make_case("sentencepiece", i, seeds).ops}
    assert {"op_pb_piece", "op_pb_trainer", "op_pb_normalizer", "pb_wire"} <= ops
    ops = {op for i in range(60) for op in fuzz.make_case("gguf", i, seeds).ops}
    assert {"op_gg_header", "op_gg_arrays", "op_gg_token_ids", "gg_wire"} <= ops
    assert not any(op.endswith("!") for i in range(60) for fmt in fuzz.FORMATS
                   for op in fuzz.make_case(fmt, i, seeds).ops)  # no mutator raised


# -- the harness: every kind of failure is caught and named -----------------------------------


def _one(seeds, fmt: str = "bert_vocab", **kwargs):
    case = fuzz.Case(fmt, 0, seeds[fmt][0], dict(seeds[fmt][0].files), ["none"])
    return fuzz.run_case(case, **kwargs)


def _crash(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGSEGV)


def _hang(*args, **kwargs):
    time.sleep(60)


def _allocate(*args, **kwargs):
    return bytearray(8 << 30)


def _key_error(*args, **kwargs):
    raise KeyError("model")


def _unnamed(*args, **kwargs):
    raise FileFormatError("bad file")


def _named(path, **kwargs):
    raise FileFormatError("bad file", path=path)


def _wrong_ids(*args, **kwargs):
    return tokenforge.get_encoding("gpt2")


class _Broken:
    def encode(self, text, **kwargs):
        raise ZeroDivisionError("in encode")


@pytest.mark.parametrize("fake, expected, kwargs", [
    (_crash, "crash", {}),
    (_hang, "hang", {"timeout": 1.0}),
    (_allocate, "oom", {"memory_mb": 1024}),
    (_key_error, "exception", {}),
    (_unnamed, "unnamed", {}),
    (_named, "error", {}),
    (_wrong_ids, "mismatch", {}),
    (lambda *a, **k: _Broken(), "encode", {}),
])
def test_the_harness_names_every_outcome(seeds, monkeypatch, fake, expected, kwargs):
    monkeypatch.setattr(tokenforge, "load", fake)  # the forked child inherits the patch
    r = _one(seeds, **kwargs)
    assert r.outcome == expected, r.detail
    assert r.failed == (expected != "error")
    if expected == "crash":
        assert "SIGSEGV" in r.detail and "Segmentation fault" in r.detail  # the child's traceback


def test_failing_inputs_are_saved_with_a_replay_command(seeds, monkeypatch, tmp_path):
    monkeypatch.setattr(tokenforge, "load", _key_error)
    stats, failures = fuzz.fuzz(["bert_vocab"], seed=3, runs=2, seeds=seeds, out=tmp_path)
    assert stats["bert_vocab"].failures["exception"] == 2 and len(failures) == 2
    saved = sorted((tmp_path / "bert_vocab").iterdir())
    assert [p.name for p in saved] == ["exception-000000", "exception-000001"]
    info = (saved[1] / "case.json").read_text()
    assert "python fuzz/formats.py --format bert_vocab --seed 3 --case 1" in info
    assert (saved[1] / "vocab.txt").read_bytes() == fuzz.make_case("bert_vocab", 1, seeds, 3).files["vocab.txt"]

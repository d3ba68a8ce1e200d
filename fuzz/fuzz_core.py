"""Coverage-guided fuzzing of the native core with atheris.

Each input drives one of the core's entry points with arbitrary data and
checks it against the pure-Python reference:

* the five scanners against the ``regex`` module (pieces must be equal);
* encode with a real vocabulary (cl100k_base) against the Python backend,
  and decode(encode(x)) == x;
* decode_bytes on arbitrary ids (must raise LookupError, never crash);
* the training merge loop against the Python merge loop on tiny corpora.

A crash, an abort, a sanitizer report or a failed check is a finding.

    pip install atheris
    python fuzz/fuzz_core.py -max_total_time=300 -rss_limit_mb=4096
"""

from __future__ import annotations

import sys

import atheris

with atheris.instrument_imports():
    import regex

    import tokenforge
    from tokenforge import _core, _native
    from tokenforge.pretokenizers import PATTERNS
    from tokenforge.trainers.bpe import learn_merges

SCANNERS = [_core.CoreBPE({bytes([i]): i for i in range(256)}, {}, k) for k in range(5)]
NAMES = list(_native.SCANNERS)
BASE = tokenforge.get_encoding("cl100k_base")
NATIVE = tokenforge.Tokenizer(BASE.model, pre_tokenizer=BASE.pre_tokenizer, special_tokens=BASE.special_tokens, backend="native")
PYTHON = tokenforge.Tokenizer(BASE.model, pre_tokenizer=BASE.pre_tokenizer, special_tokens=BASE.special_tokens, backend="python")


def one_input(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    mode = fdp.ConsumeIntInRange(0, 3)
    if mode == 0:
        text = fdp.ConsumeUnicodeNoSurrogates(fdp.ConsumeIntInRange(0, 200))
        for name, sc in zip(NAMES, SCANNERS):
            got = sc.split(text)
            want = regex.findall(PATTERNS[name], text)
            if got != want:
                raise AssertionError(f"{name}: {text!r}: {got} != {want}")
    elif mode == 1:
        text = fdp.ConsumeUnicodeNoSurrogates(fdp.ConsumeIntInRange(0, 300))
        ids = NATIVE.encode_ordinary(text)
        if ids != PYTHON.encode_ordinary(text):
            raise AssertionError(f"encode differs on {text!r}")
        if NATIVE.decode(ids, errors="strict") != text:
            raise AssertionError(f"round trip fails on {text!r}")
    elif mode == 2:
        ids = [fdp.ConsumeIntInRange(-5, 200_300) for _ in range(fdp.ConsumeIntInRange(0, 50))]
        try:
            NATIVE._core.decode_bytes(ids)
        except LookupError:
            pass
    else:
        words = {}
        for _ in range(fdp.ConsumeIntInRange(0, 12)):
            w = fdp.ConsumeBytes(fdp.ConsumeIntInRange(1, 8))
            if w:
                words[w] = fdp.ConsumeIntInRange(1, 6)
        n = fdp.ConsumeIntInRange(0, 40)
        if learn_merges(words, n, backend="native") != learn_merges(words, n, backend="python"):
            raise AssertionError(f"merges differ on {words!r}")


def main() -> None:
    atheris.Setup(sys.argv, one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()

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
            NATIVE._plan.core.decode_bytes(ids)
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


# ==================================================================================================
# Unigram (_core/unigram.h) and WordPiece training (_core/wordpiece_train.h) targets.
# Run one with TF_FUZZ_TARGET=<function name> (see fuzz/README.md). Each drives the module
# functions of tokenforge._core straight through the binding. Valid inputs: the native result
# must equal the pure-Python reference (models/unigram.py, trainers/unigram.py,
# trainers/wordpiece.py). Hostile inputs: a result or a Python exception of an expected class,
# never a crash, a hang or a SystemError.
# ==================================================================================================

import math as _math  # noqa: E402
import os  # noqa: E402

import numpy as _np  # noqa: E402

with atheris.instrument_imports():
    from tokenforge.models.unigram import Unigram as _Unigram
    from tokenforge.trainers import unigram as _tu
    from tokenforge.trainers import wordpiece as _tw

_C = _core
#: characters of fuzzed pieces and words: ASCII, the SentencePiece space, a CJK char, astral,
#: a lone surrogate, the unknown mark and NUL (each one a special case somewhere)
_UNI_CHARS = "ab-▁中😀\ud800\u2585\x00"
_WP_CHARS = "abcé#中😀"  # no lone surrogate: see KNOWN below
_SCORES = [-1.0, -2.0, -0.5, -1.5, -3000.0, -3000.5, 0.0, -1e-8, -20.0, -1e5, 1e5, 5e4, -1e30, 1e39,
           -_math.inf, _math.inf]
_THREADS = [0, 1, 2, 3, 7, 64, -1, -(2**31), 2**31 - 1]
#: exceptions a hostile call may raise (SystemError or anything else is a finding)
_OK_ERRORS = (TypeError, ValueError, OverflowError, MemoryError, RuntimeError)


def _text(fdp, chars: str, lo: int, hi: int) -> str:
    n = fdp.ConsumeIntInRange(lo, hi)
    return "".join(chars[fdp.ConsumeIntInRange(0, len(chars) - 1)] for _ in range(n))


def _pieces(fdp, chars: str = _UNI_CHARS, most: int = 14) -> list[tuple[str, float]]:
    out: dict[str, float] = {}
    for _ in range(fdp.ConsumeIntInRange(1, most)):
        p = _text(fdp, chars, 1, 4)
        out[p] = _SCORES[fdp.ConsumeIntInRange(0, len(_SCORES) - 1)] if fdp.ConsumeBool() else -fdp.ConsumeIntInRange(0, 40) / 4
    return list(out.items())


def _same_failure(want: BaseException | None, got: BaseException | None, what: str) -> bool:
    """True when one side failed: both must have failed, with arithmetic/value errors."""
    if want is None and got is None:
        return False
    if want is None or got is None or not isinstance(got, (ValueError, OverflowError)):
        raise AssertionError(f"{what}: python raised {want!r}, native raised {got!r}")
    return True


def fuzz_unigram_viterbi(data: bytes) -> None:
    """unigram_model + unigram_viterbi == Unigram._viterbi_py (ids and starts), incl. float rebasing,
    ties, +-inf scores, user-defined/control types, lone surrogates, unknown characters."""
    fdp = atheris.FuzzedDataProvider(data)
    pieces = _pieces(fdp)
    # with piece types: the float32 (sentencepiece) lattice, the one the core runs; a model
    # without types sums in doubles in Python only (HF arithmetic) and never calls the core
    types = [1] * len(pieces)
    if fdp.ConsumeBool():
        types = [[1, 2, 3, 4, 5, 6][fdp.ConsumeIntInRange(0, 5)] for _ in pieces]
    unk_id = 0 if fdp.ConsumeBool() else None
    try:
        nat = _Unigram(pieces, unk_id=unk_id, types=types, backend="native")
    except UnicodeEncodeError:  # KNOWN_UNIGRAM: a user-defined piece with a lone surrogate
        return
    ref = _Unigram(pieces, unk_id=unk_id, types=types, backend="python")
    for _ in range(fdp.ConsumeIntInRange(1, 3)):
        text = _text(fdp, _UNI_CHARS, 0, 400 if fdp.ConsumeBool() else 12)
        got = nat.viterbi_path(text)
        want = ref._viterbi_py(text) or []
        if got != want:
            raise AssertionError(f"viterbi {pieces!r} types={types} {text!r}: {got} != {want}")
        e1 = e2 = None
        try:
            a = nat.encode_piece(text)
        except Exception as e:  # noqa: BLE001
            e1, a = type(e), None
        try:
            b = ref.encode_piece(text)
        except Exception as e:  # noqa: BLE001
            e2, b = type(e), None
        if (a, e1) != (b, e2):
            raise AssertionError(f"encode_piece {pieces!r} {text!r}: {a}/{e1} != {b}/{e2}")


def _corpus(fdp, big: bool) -> list[tuple[str, int]]:
    words = []
    for _ in range(fdp.ConsumeIntInRange(0, 12)):
        w = _text(fdp, _UNI_CHARS, 0, 10)
        if big and fdp.ConsumeBool():
            f = [0, -1, -(2**63), 2**63 - 1, 2**62, 2**40, 2**31][fdp.ConsumeIntInRange(0, 6)]
        else:
            f = fdp.ConsumeIntInRange(1, 1 << 20)
        words.append((w, f))
    return words


def _exact_counts(model, words) -> tuple[list[int], int]:
    counts = [0] * model.vocab_size
    ntok = 0
    for w, c in words:
        path = model._viterbi_py(w) or []
        for pid, _ in path:
            if pid >= 0:
                counts[pid] += c
        ntok += len(path) * c
    return counts, ntok


def fuzz_unigram_estep(data: bytes) -> None:
    """unigram_corpus + unigram_estep / unigram_viterbi_counts == estep_py / the Python Viterbi, for
    every thread count; huge, zero and negative frequencies give equal results or an
    OverflowError/ValueError (never a wrapped int64 or a garbage llround)."""
    fdp = atheris.FuzzedDataProvider(data)
    pieces = _pieces(fdp)
    big = fdp.ConsumeBool()
    words = _corpus(fdp, big)
    ref = _Unigram(pieces, unk_id=None, types=[1] * len(pieces), backend="python")  # float32 scores
    lattice = [p if i in ref._in_lattice else None for i, p in enumerate(ref.pieces)]
    model = _C.unigram_model(lattice, list(ref._node_score), ref._unk_score)
    corpus = _C.unigram_corpus([w for w, _ in words], [c for _, c in words])
    threads = _THREADS[fdp.ConsumeIntInRange(0, len(_THREADS) - 1)]
    want_err = got_err = None
    try:
        want, want_obj = _tu.estep_py(ref, words)
        want = [int(x) for x in want]
        if any(not -(2**63) <= x < 2**63 for x in (*want, want_obj)):
            raise OverflowError("int64")
    except (ValueError, OverflowError) as e:
        want_err = e
    try:
        raw, obj = _C.unigram_estep(model, corpus, threads)
        got = _np.frombuffer(raw, dtype=_np.int64).tolist()
    except (ValueError, OverflowError) as e:
        got_err = e
    # the reference sums expected counts in numpy int64, which may wrap silently once
    # sum(|freq| * len) * 2^24 reaches 2^63; below that it is exact and so must the core be
    # (and raises OverflowError on a single term past int64, where the core's 128-bit sums stay
    # exact); then the reference proves nothing and the core must just not crash
    may_wrap = sum(abs(c) * len(w) for w, c in words) * 2**24 >= 2**63
    if may_wrap:
        return
    if not _same_failure(want_err, got_err, f"estep {pieces!r} {words!r}"):
        if (got, obj) != (want, want_obj):
            raise AssertionError(f"estep {pieces!r} {words!r} t={threads}: {got},{obj} != {want},{want_obj}")
    counts, ntok = _exact_counts(ref, words)
    fits = all(-(2**63) <= x < 2**63 for x in (*counts, ntok))
    try:
        raw, got_ntok = _C.unigram_viterbi_counts(model, corpus, threads)
        got = _np.frombuffer(raw, dtype=_np.int64).tolist()
    except OverflowError:
        if fits:  # the core sums exactly: OverflowError iff the exact result does not fit
            raise
        return
    if (got, got_ntok) != (counts, ntok):
        raise AssertionError(f"viterbi_counts {pieces!r} {words!r} t={threads}: {got},{got_ntok} != {counts},{ntok}")


def fuzz_unigram_engines(data: bytes) -> None:
    """The training engines (trainers/unigram.py _Native vs _Python): seed pieces (suffix array),
    E-step, Viterbi counts and second-best segmentations, over several shrinking vocabularies
    (unigram_rescore marks dropped pieces with NaN)."""
    fdp = atheris.FuzzedDataProvider(data)
    words = [(w, f) for w, f in _corpus(fdp, False) if w]
    if not words:
        return
    threads = max(_THREADS[fdp.ConsumeIntInRange(0, len(_THREADS) - 1)], 1)
    nat = _tu._Native(_C, words, threads)
    ref = _tu._Python(words)
    chars = sorted({ch for w, _ in words for ch in w})
    keys = [ord(ch) for ch in chars]
    scripts = [_tu._script_of(ch) for ch in chars]
    flags = bytes(fdp.ConsumeIntInRange(0, 7) if fdp.ConsumeBool() else 0 for _ in chars)
    max_len = [1, 2, 3, 5, 16, 2**62][fdp.ConsumeIntInRange(0, 5)]
    limit = fdp.ConsumeIntInRange(0, 40)
    args = (max_len, keys, scripts, flags, fdp.ConsumeBool(), fdp.ConsumeBool(), limit)
    seed_n, seed_p = nat.seed(*args), ref.seed(*args)
    if seed_n != seed_p:
        raise AssertionError(f"seed {words!r} {args!r}: {seed_n} != {seed_p}")
    strs = list(dict.fromkeys(chars + [s for s, _ in seed_p] + [_text(fdp, _UNI_CHARS, 1, 3) for _ in range(3)]))
    nat.set_pieces(strs)
    ref.set_pieces(strs)
    active = _np.arange(len(strs), dtype=_np.int64)
    for _ in range(fdp.ConsumeIntInRange(1, 3)):
        # (x / 8 is exact in float32; x / 7.3 is not, as the digamma scores of real training)
        den = 8 if fdp.ConsumeBool() else 7.3
        scores = _np.array([-fdp.ConsumeIntInRange(1, 60) / den for _ in active], dtype=_np.float64)
        e_n, o_n = nat.estep(active, scores)
        e_p, o_p = ref.estep(active, scores)
        if e_n.tolist() != e_p.tolist() or o_n != o_p:
            raise AssertionError(f"engine estep {words!r} {strs!r} {active} {scores}")
        v_n, v_p = nat.viterbi_counts(active, scores), ref.viterbi_counts(active, scores)
        if v_n[0].tolist() != v_p[0].tolist() or v_n[1] != v_p[1]:
            raise AssertionError(f"engine viterbi_counts {words!r} {strs!r} {active}")
        a_n, a_p = nat.alternatives(active, scores), ref.alternatives(active, scores)
        if any(x.tolist() != y.tolist() for x, y in zip(a_n, a_p)):
            raise AssertionError(f"engine alternatives {words!r} {strs!r} {active}: {a_n} != {a_p}")
        keep = [k for k in range(len(active)) if fdp.ConsumeBool()] or [0]
        active = active[keep]


def fuzz_unigram_train(data: bytes) -> None:
    """UnigramTrainer end to end, native vs python backend: same pieces and scores, or the same error."""
    fdp = atheris.FuzzedDataProvider(data)
    counts = {}
    for _ in range(fdp.ConsumeIntInRange(0, 10)):
        counts["▁" * fdp.ConsumeIntInRange(0, 1) + _text(fdp, "abc-中\ud800", 0, 7)] = fdp.ConsumeIntInRange(0, 50)
    kw = dict(vocab_size=fdp.ConsumeIntInRange(1, 40), max_piece_length=fdp.ConsumeIntInRange(1, 6),
              num_sub_iterations=fdp.ConsumeIntInRange(1, 2), split_digits=fdp.ConsumeBool(),
              character_coverage=[1.0, 0.9995, 0.9, 0.5][fdp.ConsumeIntInRange(0, 3)],
              byte_fallback=fdp.ConsumeBool(), num_threads=fdp.ConsumeIntInRange(1, 4), show_progress=False)
    out = []
    for backend in ("native", "python"):
        try:
            m = _tu.UnigramTrainer(backend=backend, **kw).train_from_counts(counts)
            out.append((m.pieces, m.scores))
        except tokenforge.errors.TrainingError as e:
            out.append(type(e))
    if out[0] != out[1]:
        raise AssertionError(f"unigram train {counts!r} {kw}: {out[0]} != {out[1]}")


class _Evil:
    """An int/float look-alike whose conversion mutates the list being parsed (a use-after-free
    or overflow for a binding that caches sizes or borrowed items across the conversion)."""

    def __init__(self, victim: list) -> None:
        self.victim = victim

    def __index__(self) -> int:
        self.victim.clear()
        self.victim.extend([1] * 1000)
        return 0

    def __float__(self) -> float:
        self.victim.clear()
        return 0.0


def _junk(fdp, model, corpus):
    pool = [None, 0, 1, -1, 2**31, 2**63, -(2**63) - 1, 1.5, _math.nan, _math.inf, "", "ab", "\ud800", b"",
            b"\x00" * 8, [], ["a"], [None], [1], [1.0], ["a", "a"], model, corpus, object(), (1,), {"a": 1}]
    return pool[fdp.ConsumeIntInRange(0, len(pool) - 1)]


def fuzz_unigram_hostile(data: bytes) -> None:
    """Every unigram_* function with junk arguments (types, arity, sizes, NaN, huge ids and lengths,
    capsules swapped, lists mutated during parsing): a result or an expected exception."""
    fdp = atheris.FuzzedDataProvider(data)
    pieces = [_text(fdp, _UNI_CHARS, 0, 3) if fdp.ConsumeBool() else None for _ in range(fdp.ConsumeIntInRange(0, 8))]
    scores = [_SCORES[fdp.ConsumeIntInRange(0, len(_SCORES) - 1)] for _ in pieces]
    words = [_text(fdp, _UNI_CHARS, 0, 6) for _ in range(fdp.ConsumeIntInRange(0, 6))]
    freqs = [[1, 0, -5, 2**63 - 1, -(2**63)][fdp.ConsumeIntInRange(0, 4)] for _ in words]
    try:
        model = _C.unigram_model(pieces, scores, _SCORES[fdp.ConsumeIntInRange(0, len(_SCORES) - 1)])
    except _OK_ERRORS:
        model = _C.unigram_model(["a"], [-1.0], -11.0)
    corpus = _C.unigram_corpus(words, freqs)
    t = _THREADS[fdp.ConsumeIntInRange(0, len(_THREADS) - 1)]
    nscore = len(pieces) if fdp.ConsumeBool() else fdp.ConsumeIntInRange(0, 9)
    buf = _np.array([_SCORES[fdp.ConsumeIntInRange(0, len(_SCORES) - 1)] if fdp.ConsumeBool() else _math.nan
                     for _ in range(nscore)], dtype=_np.float64).tobytes()
    if fdp.ConsumeBool():  # an unaligned buffer
        buf = memoryview(b"\x00" + buf)[1:]
    evil_f: list = [1.0, 2.0, 3.0]  # lists whose own items mutate them when converted
    evil_f[0] = _Evil(evil_f)
    evil_i: list = [1, 1, 1]
    evil_i[0] = _Evil(evil_i)
    evil_k: list = [1, 2, 3]
    evil_k[1] = _Evil(evil_k)
    calls = [
        lambda: _C.unigram_model(pieces, scores, -10.0),
        lambda: _C.unigram_model(pieces, scores[:-1], -10.0),
        lambda: _C.unigram_model(pieces, [_junk(fdp, model, corpus) for _ in pieces], _junk(fdp, model, corpus)),
        lambda: _C.unigram_model([_junk(fdp, model, corpus) for _ in range(3)], [0.0] * 3, 0.0),
        lambda: _C.unigram_model(["a", "b", "c"], evil_f, 0.0),
        lambda: _C.unigram_rescore(model, buf, _SCORES[fdp.ConsumeIntInRange(0, len(_SCORES) - 1)]),
        lambda: _C.unigram_rescore(_junk(fdp, model, corpus), buf, 0.0),
        lambda: _C.unigram_corpus(words, freqs),
        lambda: _C.unigram_corpus(words, freqs[:-1]),
        lambda: _C.unigram_corpus([_junk(fdp, model, corpus)], [_junk(fdp, model, corpus)]),
        lambda: _C.unigram_corpus(["a", "b", "c"], evil_i),
        lambda: _C.unigram_viterbi(model, _text(fdp, _UNI_CHARS, 0, 50)),
        lambda: _C.unigram_viterbi(_junk(fdp, model, corpus), _junk(fdp, model, corpus)),
        lambda: _C.unigram_estep(model, corpus, t),
        lambda: _C.unigram_estep(corpus, model, t),
        lambda: _C.unigram_viterbi_counts(model, corpus, t),
        lambda: _C.unigram_viterbi_counts(model, _junk(fdp, model, corpus), _junk(fdp, model, corpus)),
        lambda: _C.unigram_alternatives(model, words),
        lambda: _C.unigram_alternatives(model, [_junk(fdp, model, corpus) for _ in range(3)]),
        lambda: _C.unigram_seed(corpus, [1, 2, 2**62, 2**63 - 1, 0, -1][fdp.ConsumeIntInRange(0, 5)],
                                sorted({ord(c) for w in words for c in w}),
                                [fdp.ConsumeIntInRange(-3, 3) for _ in {c for w in words for c in w}],
                                bytes(fdp.ConsumeIntInRange(0, 255) for _ in {c for w in words for c in w}),
                                fdp.ConsumeBool(), fdp.ConsumeBool(), [0, 5, 2**62, -1][fdp.ConsumeIntInRange(0, 3)], t),
        lambda: _C.unigram_seed(corpus, 3, [_junk(fdp, model, corpus)], [0], b"\x00", False, False, 5, t),
        lambda: _C.unigram_seed(corpus, 3, [5, 3], [0, 0], b"\x00\x00", False, False, 5),
        lambda: _C.unigram_seed(corpus, 3, evil_k, [0, 0, 0], b"\x00\x00\x00", True, True, 5),
        lambda: _C.unigram_seed(model, 3, [], [], b"", False, False, 5),
    ]
    for _ in range(fdp.ConsumeIntInRange(1, 6)):
        fn = calls[fdp.ConsumeIntInRange(0, len(calls) - 1)]
        nargs = fdp.ConsumeIntInRange(0, 9)
        try:
            if nargs == 9:  # a wrong arity
                names = ["unigram_model", "unigram_rescore", "unigram_corpus", "unigram_viterbi", "unigram_estep",
                         "unigram_viterbi_counts", "unigram_alternatives", "unigram_seed"]
                getattr(_C, names[fdp.ConsumeIntInRange(0, len(names) - 1)])(
                    *[_junk(fdp, model, corpus) for _ in range(fdp.ConsumeIntInRange(0, 10))])
            else:
                fn()
        except _OK_ERRORS:
            pass


# WordPiece training --------------------------------------------------------------------------------

def _llround_exact(x: float) -> int:
    """C's llround (halves away from zero), exactly: floor(|x| + 0.5) in floats is not (it
    rounds up odd integers in [2^52, 2^53) and 0.49999999999999994)."""
    r = _math.floor(x)
    d = x - r  # exact
    return int(r + 1 if d > 0.5 or (d == 0.5 and x > 0) else r)


KNOWN_LLROUND = """trainers/unigram.py _llround (the Python E-step's rounding) computes
floor(|x| + 0.5) in floats, which is off by one for odd integers in [2^52, 2^53) units (expected
counts past 2^28) and for 0.49999999999999994; the core's llround is right. Reported; the
targets here check the core against the exact rounding (_llround_exact)."""
_tu._llround = _llround_exact


KNOWN_UNIGRAM = """models/unigram.py scores a user-defined piece by its UTF-8 length with 'strict':
a user-defined piece holding a lone surrogate raises UnicodeEncodeError in Unigram() (both
backends alike; reported, not in this file's scope)."""

KNOWN = """trainers/wordpiece.py encodes tokens with UTF-8 'strict' before calling the core: a word or
prefix with a lone surrogate raises UnicodeEncodeError on the native path only (reported; not in
this file's scope), so _WP_CHARS has no surrogate."""


def fuzz_wordpiece_train(data: bytes) -> None:
    """WordPieceTrainer native vs python backend: identical merges, vocabulary and errors. Prefixes
    that collide with the alphabet ("a", "#", ""), specials equal to merge results, min_frequency."""
    fdp = atheris.FuzzedDataProvider(data)
    counts = {}
    for _ in range(fdp.ConsumeIntInRange(0, 14)):
        counts[_text(fdp, _WP_CHARS, 0, 9)] = fdp.ConsumeIntInRange(0, 30) if fdp.ConsumeBool() else fdp.ConsumeIntInRange(0, 2**40)
    prefix = ["##", "", "#", "a", "é", "##a"][fdp.ConsumeIntInRange(0, 5)]
    specials = ["[UNK]"] + [s for s in ("ab", prefix + "bc", "[CLS]", "a") if fdp.ConsumeBool()]
    kw = dict(vocab_size=fdp.ConsumeIntInRange(1, 80), min_frequency=fdp.ConsumeIntInRange(0, 4),
              special_tokens=specials, continuing_subword_prefix=prefix, show_progress=False,
              limit_alphabet=None if fdp.ConsumeBool() else fdp.ConsumeIntInRange(0, 8))
    out = []
    for backend in ("native", "python"):
        t = _tw.WordPieceTrainer(backend=backend, **kw)
        try:
            wp = t.train_from_counts(counts)
            out.append((t.merges, wp.get_vocab()))
        except tokenforge.errors.TokenforgeError as e:
            out.append(type(e))
    if out[0] != out[1]:
        raise AssertionError(f"wordpiece {counts!r} {kw}: {out[0]} != {out[1]}")


def fuzz_wordpiece_hostile(data: bytes) -> None:
    """wordpiece_learn straight: junk types, ids out of range, negative/huge counts, unit counts
    inconsistent with the words, duplicate tokens, lists mutated while parsed."""
    fdp = atheris.FuzzedDataProvider(data)
    n_tok = fdp.ConsumeIntInRange(0, 8)
    tokens = [_text(fdp, "ab#é", 0, 3).encode() for _ in range(n_tok)]
    big = [0, 1, -1, 2**62, 2**63 - 1, -(2**63), 7]
    words = [[fdp.ConsumeIntInRange(-1, n_tok) for _ in range(fdp.ConsumeIntInRange(0, 6))]
             for _ in range(fdp.ConsumeIntInRange(0, 6))]
    freqs = [big[fdp.ConsumeIntInRange(0, 6)] for _ in words]
    unit = [big[fdp.ConsumeIntInRange(0, 6)] for _ in tokens]
    specials = [fdp.ConsumeIntInRange(-1, n_tok) for _ in range(fdp.ConsumeIntInRange(0, 2))]
    args = [tokens, words, freqs, unit, fdp.ConsumeIntInRange(-1, 4), big[fdp.ConsumeIntInRange(0, 6)],
            big[fdp.ConsumeIntInRange(0, 6)], specials]
    evil: list = [[0, 1], [1, 0]]
    mode = fdp.ConsumeIntInRange(0, 5)
    if mode == 1:
        args[fdp.ConsumeIntInRange(0, 7)] = _junk(fdp, None, None)
    elif mode == 2 and n_tok >= 2:
        args = [tokens, evil, [_Evil(evil), 1], [5] * n_tok, 2, 100, 0, []]
    elif mode == 3 and n_tok >= 2:
        w = [0, 1, 0]
        args = [tokens, [w], [1], [3] * n_tok, 2, 100, 0, []]
        w[1] = _Evil(w)
    elif mode == 4:
        args = args[: fdp.ConsumeIntInRange(0, 7)]
    try:
        merges = _C.wordpiece_learn(*args)
    except _OK_ERRORS:
        return
    for a, b in merges:
        if not (0 <= a and 0 <= b):
            raise AssertionError(f"wordpiece_learn {args!r}: bad merge {(a, b)}")


TARGETS = {f.__name__: f for f in (fuzz_unigram_viterbi, fuzz_unigram_estep, fuzz_unigram_engines,
                                   fuzz_unigram_train, fuzz_unigram_hostile, fuzz_wordpiece_train,
                                   fuzz_wordpiece_hostile)}
# ==================================================================================================
# end of the Unigram / WordPiece targets
# ==================================================================================================


# ==================================================================================================
# SentencePiece targets (_core/spm.h): SpmNormalizer and SpmBPE against their Python references
# (SentencePieceNormalizer._run in normalizers.py, PieceBPE._sp_merge in models/bpe.py).
# TF_FUZZ_TARGET=fuzz_spm_normalizer or fuzz_spm_bpe.
# ==================================================================================================

with atheris.instrument_imports():
    from tokenforge.errors import FileFormatError as _FileFormatError
    from tokenforge.models.bpe import PieceBPE as _PieceBPE
    from tokenforge.models.bpe import byte_piece as _byte_piece
    from tokenforge.normalizers import Charsmap as _Charsmap
    from tokenforge.sentencepiece.normalizer import SentencePieceNormalizer as _SPNormalizer

#: characters with rules (single and multi-character), white space, marks, kana, CJK, emoji,
#: NUL and lone surrogates
_SPM_CHARS = " \u3000\t\n\u2581\x00\x01abAé\u0301ﬃＸ①ｶﾞｰ\u3099か日龘😀\u200d\ud800\udc00¼ℌ"
_SPM_RULES = [_Charsmap.named(n) for n in ("nmt_nfkc", "nmt_nfkc_cf", "identity")]


def fuzz_spm_normalizer(data: bytes) -> None:
    """SpmNormalizer.normalize == SentencePieceNormalizer._run for every flag combination and
    user-defined symbols; on a corrupted charsmap both give the same text or FileFormatError."""
    fdp = atheris.FuzzedDataProvider(data)
    rules = _SPM_RULES[fdp.ConsumeIntInRange(0, 2)].blob
    if rules and fdp.ConsumeBool():  # corrupt a few bytes after the size header
        b = bytearray(rules)
        for _ in range(fdp.ConsumeIntInRange(1, 64)):
            b[fdp.ConsumeIntInRange(4, len(b) - 1)] = fdp.ConsumeIntInRange(0, 255)
        rules = bytes(b)
    flags = [fdp.ConsumeBool() for _ in range(3)]
    udf = [_text(fdp, _SPM_CHARS, 1, 3) for _ in range(fdp.ConsumeIntInRange(0, 3))]
    py = _SPNormalizer(rules, add_dummy_prefix=flags[0], remove_extra_whitespaces=flags[1],
                       escape_whitespaces=flags[2], user_defined_symbols=udf)
    nat = _C.SpmNormalizer(rules, *flags, list(py.user_defined_symbols))
    text = _text(fdp, _SPM_CHARS, 0, 300 if fdp.ConsumeBool() else 16)
    try:
        want = py._run(text, False)[0]
    except _FileFormatError as e:
        try:
            got = nat.normalize(text)
        except _FileFormatError as g:
            if str(g) != str(e):
                raise AssertionError(f"normalize {text!r}: errors differ: {g} != {e}") from None
            return
        raise AssertionError(f"normalize {text!r}: python raised {e!r}, native gave {got!r}") from None
    got = nat.normalize(text)
    if got != want:
        raise AssertionError(f"normalize {flags} {udf!r} {text!r}: {got!r} != {want!r}")


def fuzz_spm_bpe(data: bytes) -> None:
    """SpmBPE.tokenize == PieceBPE._sp_merge and ._sp_tokenize (ids and offsets) on small random
    models: tied and non-finite scores, every piece type, byte fallback; hostile constructor
    arguments raise TypeError/ValueError/OverflowError, never crash."""
    fdp = atheris.FuzzedDataProvider(data)
    chars = "ab▁cé\ud800"
    if fdp.ConsumeIntInRange(0, 9) == 0:  # hostile arguments straight into the binding
        junk = [None, 1, "x", b"x", [None], ["a", 1], [1.5], [-1], [2**40]]
        args = [junk[fdp.ConsumeIntInRange(0, len(junk) - 1)] for _ in range(4)]
        try:
            _C.SpmBPE(args[0], args[1], args[2], fdp.ConsumeIntInRange(-3, 3), args[3])
        except (TypeError, ValueError, OverflowError):
            pass
        return
    pieces = ["<unk>"]
    types = [2]
    for _ in range(fdp.ConsumeIntInRange(0, 24)):
        p = _text(fdp, chars, 1, 4)
        t = [1, 1, 1, 3, 4, 5, 6][fdp.ConsumeIntInRange(0, 6)]
        if p not in pieces:
            pieces.append(p)
            types.append(t)
    byte_fallback = fdp.ConsumeBool()
    if byte_fallback:
        for b in range(256):
            if fdp.ConsumeIntInRange(0, 15):
                pieces.append(_byte_piece(b))
                types.append(6)
    scores = [0.0] + [_SCORES[fdp.ConsumeIntInRange(0, len(_SCORES) - 1)] if fdp.ConsumeBool()
                      else -float(fdp.ConsumeIntInRange(0, 5)) for _ in pieces[1:]]
    try:
        model = _PieceBPE.from_sentencepiece(pieces, scores, types, byte_fallback=byte_fallback)
    except _FileFormatError:  # duplicate reserved/mergeable piece etc.: nothing to compare
        return
    nat = model.native_encoder()
    for _ in range(fdp.ConsumeIntInRange(1, 3)):
        text = _text(fdp, chars + "xy", 0, 200 if fdp.ConsumeBool() else 12)
        got = nat.tokenize(text)
        want = model._sp_merge(text, 0.0, None) if text else []
        if got != want or got != (model._sp_tokenize(text, 0.0, None) if text else []):
            raise AssertionError(f"SpmBPE {list(zip(pieces, scores, types))!r} {text!r}: {got} != {want}")
        if nat.encode(text) != [t[0] for t in want]:
            raise AssertionError(f"SpmBPE.encode {text!r}")


def fuzz_spm_unigram(data: bytes) -> None:
    """SpmUnigram.viterbi (double-array trie) == unigram_viterbi (hash trie) == Unigram._viterbi_py,
    incl. float rebasing, ties, +-inf scores, piece types, lone surrogates and unknown characters."""
    fdp = atheris.FuzzedDataProvider(data)
    pieces = _pieces(fdp)
    types = [[1, 2, 3, 4, 5, 6][fdp.ConsumeIntInRange(0, 5)] for _ in pieces] if fdp.ConsumeBool() else None
    try:
        ref = _Unigram(pieces, unk_id=None, types=types, backend="python")
    except UnicodeEncodeError:
        return
    lattice = _C.SpmUnigram([p if i in ref._in_lattice else None for i, p in enumerate(ref.pieces)],
                            list(ref._node_score), ref._unk_score, float32=ref._float32)
    # the training lattice (unigram.h) is float32 only; HF-mode (double) models are checked
    # against the Python reference alone
    model = (_C.unigram_model([p if i in ref._in_lattice else None for i, p in enumerate(ref.pieces)],
                              list(ref._node_score), ref._unk_score) if ref._float32 else None)
    for _ in range(fdp.ConsumeIntInRange(1, 3)):
        text = _text(fdp, _UNI_CHARS, 0, 400 if fdp.ConsumeBool() else 12)
        got = lattice.viterbi(text)
        if model is not None and got != tuple(_C.unigram_viterbi(model, text)):
            raise AssertionError(f"SpmUnigram {pieces!r} types={types} {text!r}: differs from unigram_viterbi")
        if list(zip(*got)) != (ref._viterbi_py(text) or []):
            raise AssertionError(f"SpmUnigram {pieces!r} types={types} {text!r}: differs from _viterbi_py")

# ==================================================================================================
# end of the SentencePiece targets
# ==================================================================================================


def main() -> None:
    # TF_FUZZ_TARGET=<function name> runs another target of this file (default: one_input)
    atheris.Setup(sys.argv, globals()[os.environ.get("TF_FUZZ_TARGET", "one_input")])
    atheris.Fuzz()


if __name__ == "__main__":
    main()

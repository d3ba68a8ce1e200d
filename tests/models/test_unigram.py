"""Unigram: Viterbi/forward goldens (hand-computed), exactness against sentencepiece and HF
tokenizers, sampling, the native core against the Python reference, and training."""

from __future__ import annotations

import math
import pickle
import random
import struct
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokenforge import _native
from tokenforge.errors import FileFormatError, TrainingError, UnknownTokenError
from tokenforge.models.unigram import Unigram
from tokenforge.sentencepiece import f32
from tokenforge.trainers import unigram as tr
from tokenforge.trainers.unigram import UnigramTrainer

BACKENDS = ["python"] + (["native"] if _native.available() else [])
needs_native = pytest.mark.skipif(not _native.available(), reason="the native core is not built")

TOY = [("<unk>", 0.0), ("a", math.log(0.15)), ("b", math.log(0.15)), ("ab", math.log(0.40)),
       ("aba", math.log(0.20)), ("bab", math.log(0.10))]


def pieces_of(m: Unigram, ids: list[int]) -> list[str]:
    return [m.id_to_token(i) for i in ids]


# -- the toy vocabulary and the lattice rules ----------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_toy_viterbi_and_forward_marginal(backend):
    m = Unigram(TOY, backend=backend)
    assert pieces_of(m, m.encode_piece("abab")) == ["ab", "ab"]
    assert math.exp(m.viterbi_score("abab")) == pytest.approx(0.16, rel=1e-12)
    assert math.exp(m.log_marginal("abab")) == pytest.approx(0.22350625, rel=1e-12)
    assert m.log_marginal("abab") >= m.viterbi_score("abab")
    # the forward table, prefix by prefix
    for prefix, f in [("a", 0.15), ("ab", 0.4225), ("aba", 0.263375)]:
        assert math.exp(m.log_marginal(prefix)) == pytest.approx(f, rel=1e-12)


def test_toy_nbest_lists_every_segmentation_best_first():
    m = Unigram(TOY)
    got = [(pieces_of(m, ids), round(math.exp(s), 6)) for ids, s in m.nbest("abab", 10)]
    assert got[0] == (["ab", "ab"], 0.16)
    assert got[1] == (["aba", "b"], 0.03)
    assert sorted(p for p, _ in got) == sorted(
        [["ab", "ab"], ["aba", "b"], ["a", "bab"], ["a", "b", "ab"], ["ab", "a", "b"], ["a", "b", "a", "b"]]
    )
    probs = [p for _, p in got]
    assert probs == sorted(probs, reverse=True)
    assert math.fsum(probs) == pytest.approx(0.22350625, rel=1e-5)  # all paths: the marginal


@pytest.mark.parametrize("backend", BACKENDS)
def test_equal_scores_prefer_the_longer_last_piece(backend):
    # a+ab and aa+b both score -3: sentencepiece keeps the candidate that starts earliest
    m = Unigram([("<unk>", 0.0), ("a", -1.0), ("b", -1.0), ("aa", -2.0), ("ab", -2.0)], backend=backend)
    assert pieces_of(m, m.encode_piece("aab")) == ["a", "ab"]
    assert pieces_of(m, m.encode_piece("ab")) == ["ab"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_unknown_characters_merge_into_one_unk(backend):
    m = Unigram(TOY, backend=backend)
    assert pieces_of(m, m.encode_piece("xyab")) == ["<unk>", "ab"]
    assert pieces_of(m, m.encode_piece("axyzb")) == ["a", "<unk>", "b"]
    assert m.tokenize("axyzb") == [(1, 0, 1), (0, 1, 4), (2, 4, 5)]
    # an unknown node scores min_score - 10
    assert m.viterbi_score("x") == pytest.approx(math.log(0.10) - 10.0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_byte_fallback_spells_unknown_characters_as_bytes(backend):
    pieces = [("<unk>", 0.0)] + [(f"<0x{b:02X}>", 0.0) for b in range(256)] + [("a", -1.0), ("b", -2.0)]
    types = ["unknown"] + ["byte"] * 256 + ["normal", "normal"]
    m = Unigram(pieces, byte_fallback=True, types=types, backend=backend)
    got = m.tokenize("a龘b")
    assert pieces_of(m, [t[0] for t in got]) == ["a", "<0xE9>", "<0xBE>", "<0x98>", "b"]
    assert [t[1:] for t in got] == [(0, 1), (1, 2), (1, 2), (1, 2), (2, 3)]
    # byte pieces never match text: "<0x41>" is spelled with its own characters (unknown here)
    assert m.encode_piece("<") == [m.token_to_id("<0x3C>")]


def test_no_unk_id_raises_on_unknown_characters():
    m = Unigram([("a", -1.0)], unk_id=None)
    assert m.encode_piece("aa") == [0, 0]
    with pytest.raises(UnknownTokenError, match="'x'"):
        m.encode_piece("axa")


def test_user_defined_pieces_win_and_control_pieces_never_match():
    pieces = [("<unk>", 0.0), ("<s>", 0.0), ("a", -1.0), ("b", -1.0), ("ab", -1.5), ("abab", -100.0)]
    m = Unigram(pieces, types=["unknown", "control", "normal", "normal", "normal", "user_defined"])
    assert pieces_of(m, m.encode_piece("abab")) == ["abab"]
    assert pieces_of(m, m.encode_piece("<s>")) == ["<unk>"]


# -- the native core against the Python reference ----------------------------------------------------

ALPHABET = "ab▁c"
piece_st = st.text(alphabet=ALPHABET, min_size=1, max_size=4)
vocab_st = st.dictionaries(piece_st, st.integers(-40, -1).map(lambda k: k / 4.0), min_size=1, max_size=14)
text_st = st.text(alphabet=ALPHABET + "x", max_size=30)


def _model(vocab: dict[str, float], backend: str) -> Unigram:
    return Unigram([("<unk>", 0.0)] + sorted(vocab.items()), backend=backend)


@needs_native
@settings(max_examples=300, deadline=None)
@given(vocab_st, text_st)
def test_native_viterbi_equals_python(vocab, text):
    # quarter-integer scores make exact ties common: the tie rule is exercised too
    py, nat = _model(vocab, "python"), _model(vocab, "native")
    assert nat.viterbi_path(text) == py.viterbi_path(text)
    assert nat.tokenize(text) == py.tokenize(text)


@needs_native
@settings(max_examples=150, deadline=None)
@given(vocab_st, st.lists(st.tuples(st.text(alphabet=ALPHABET + "x", min_size=1, max_size=12),
                                    st.integers(1, 50)), min_size=1, max_size=8))
def test_native_training_loops_equal_python(vocab, words):
    import tokenforge._core as core

    strs = sorted(vocab)
    active = np.arange(len(strs))
    scores = np.array([vocab[s] for s in strs])
    py, nat = tr._Python(words), tr._Native(core, words, 3)
    py.set_pieces(strs)
    nat.set_pieces(strs)
    e_py, obj_py = py.estep(active, scores)
    e_nat, obj_nat = nat.estep(active, scores)
    # same node order, same formulas, same libm: the fixed-point integer sums are equal
    assert e_nat.tolist() == e_py.tolist()
    assert obj_nat == obj_py
    f_py, v_py = py.viterbi_counts(active, scores)
    f_nat, v_nat = nat.viterbi_counts(active, scores)
    assert f_py.tolist() == f_nat.tolist() and v_py == v_nat
    for a, b in zip(py.alternatives(active, scores), nat.alternatives(active, scores)):
        assert a.tolist() == b.tolist()


@needs_native
@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.text(alphabet="ab1▁c", min_size=1, max_size=14), st.integers(1, 5)),
                min_size=1, max_size=10, unique_by=lambda wc: wc[0]),
       st.integers(2, 5), st.booleans())
def test_native_seed_pieces_equal_python(words, max_len, split_digits):
    import tokenforge._core as core

    chars = sorted({ch for w, _ in words for ch in w})
    args = (max_len, [ord(c) for c in chars], [tr._script_of(c) for c in chars],
            bytes((1 if c == "1" else 0) | (4 if c == "▁" else 0) for c in chars), split_digits, True, 10**6)
    assert tr._Native(core, words, 2).seed(*args) == tr._Python(words).seed(*args)


def test_estep_expected_counts_sum_over_all_segmentations():
    # the toy lattice of "abab": the posterior of each piece, by enumeration of the 6 paths
    m = Unigram(TOY[1:], unk_id=None)
    words = [("abab", 3)]
    expected, obj = tr.estep_py(m, words)
    paths = {("ab", "ab"): .16, ("aba", "b"): .03, ("a", "bab"): .015, ("a", "b", "ab"): .009,
             ("ab", "a", "b"): .009, ("a", "b", "a", "b"): .000506250}
    z = sum(paths.values())
    want = Counter()
    for path, p in paths.items():
        for piece in path:
            want[piece] += 3 * p / z
    got = {m.id_to_token(i): v / tr.FIXED_SCALE for i, v in enumerate(expected.tolist())}
    for piece, v in want.items():
        assert got[piece] == pytest.approx(v, abs=1e-6)
    assert obj / tr.FIXED_SCALE == pytest.approx(3 * math.log(0.22350625), abs=1e-6)


# -- sampling -------------------------------------------------------------------------------------


def test_sampling_is_deterministic_given_a_seed():
    m = Unigram(TOY)
    a = [m.encode_piece("ababab", sample=True, alpha=0.3, seed=7) for _ in range(5)]
    assert all(x == a[0] for x in a)
    rng1, rng2 = random.Random(3), random.Random(3)
    s1 = [m.encode_piece("abab", sample=True, alpha=0.5, seed=rng1) for _ in range(50)]
    s2 = [m.encode_piece("abab", sample=True, alpha=0.5, seed=rng2) for _ in range(50)]
    assert s1 == s2 and len({tuple(x) for x in s1}) > 1
    assert m.encode_piece("abab", sample=True, nbest_size=1, seed=1) == m.encode_piece("abab")


def _chi_square(observed: Counter, expected: dict, n: int) -> float:
    return sum((observed.get(k, 0) - n * p) ** 2 / (n * p) for k, p in expected.items())


@pytest.mark.parametrize("alpha", [0.3, 1.0])
def test_forward_filtering_backward_sampling_follows_p_to_the_alpha(alpha):
    m = Unigram(TOY)
    exact = {tuple(ids): math.exp(alpha * s) for ids, s in m.nbest("abab", 100)}
    z = sum(exact.values())
    exact = {k: v / z for k, v in exact.items()}
    n = 6000
    rng = random.Random(12345)
    seen = Counter(tuple(m.encode_piece("abab", sample=True, alpha=alpha, seed=rng)) for _ in range(n))
    assert set(seen) <= set(exact)
    # 6 outcomes, 5 degrees of freedom: 20.5 is the 0.1% critical value
    assert _chi_square(seen, exact, n) < 20.5


def test_nbest_sampling_draws_from_the_n_best_only():
    m = Unigram(TOY)
    best3 = [(tuple(ids), s) for ids, s in m.nbest("abab", 3)]
    alpha = 0.8
    z = sum(math.exp(alpha * s) for _, s in best3)
    exact = {ids: math.exp(alpha * s) / z for ids, s in best3}
    n = 4000
    rng = random.Random(99)
    seen = Counter(tuple(m.encode_piece("abab", sample=True, alpha=alpha, nbest_size=3, seed=rng)) for _ in range(n))
    assert set(seen) == set(exact)
    assert _chi_square(seen, exact, n) < 13.8  # 2 degrees of freedom, 0.1%


# -- serialization --------------------------------------------------------------------------------


def test_to_dict_is_the_hf_shape_and_round_trips():
    m = Unigram(TOY, byte_fallback=False)
    d = m.to_dict()
    assert d == {"type": "Unigram", "unk_id": 0, "vocab": [[p, s] for p, s in TOY], "byte_fallback": False}
    assert Unigram.from_dict(d) == m
    m2 = pickle.loads(pickle.dumps(m))
    assert m2 == m and m2.encode_piece("abab") == m.encode_piece("abab")
    assert m.get_vocab()["ab"] == 3 and m.vocab_size == 6 and m.unk_token == "<unk>"
    assert m.token_to_id("zz") is None and m.id_to_token(99) is None


@pytest.mark.parametrize(
    "bad, field",
    [({"type": "Unigram"}, "vocab"), ({"type": "BPE", "vocab": []}, "type"),
     ({"type": "Unigram", "vocab": [["a", "x"]]}, "score"), ({"type": "Unigram", "vocab": [["a", 0.0]], "unk_id": 5}, "unk_id"),
     ({"type": "Unigram", "vocab": [["a", 0.0], ["a", -1.0]], "piece_types": [1, 1]}, "twice")],
)
def test_from_dict_names_the_bad_field(bad, field):
    with pytest.raises(FileFormatError, match=field):
        Unigram.from_dict(bad)


# -- exactness against sentencepiece and HF tokenizers --------------------------------------------


def _varint(b: bytes, i: int) -> tuple[int, int]:
    r = shift = 0
    while True:
        c = b[i]
        i += 1
        r |= (c & 0x7F) << shift
        shift += 7
        if c < 0x80:
            return r, i


def _fields(b: bytes):
    i = 0
    while i < len(b):
        key, i = _varint(b, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = _varint(b, i)
        elif wt == 1:
            v, i = b[i : i + 8], i + 8
        elif wt == 2:
            n, i = _varint(b, i)
            v, i = b[i : i + n], i + n
        elif wt == 5:
            v, i = b[i : i + 4], i + 4
        else:
            raise ValueError(f"wire type {wt}")
        yield num, wt, v


def read_sp_pieces(path: Path) -> list[tuple[str, float, int]]:
    """(piece, score, type) of a sentencepiece ModelProto: field 1, SentencePiece fields 1, 2, 3."""
    out = []
    for num, wt, v in _fields(path.read_bytes()):
        if num == 1 and wt == 2:
            piece, score, typ = "", 0.0, 1
            for n2, _, w in _fields(v):
                if n2 == 1:
                    piece = w.decode("utf-8")
                elif n2 == 2:
                    score = struct.unpack("<f", w)[0]
                elif n2 == 3:
                    typ = w
            out.append((piece, score, typ))
    return out


SP_MODELS = ["albert_spiece", "hf_test_unigram", "spm_test_unigram", "spm_test_ja_unigram"]


@pytest.fixture(scope="module")
def text_lines(shared_data) -> list[str]:
    lines = []
    text_dir = shared_data / "text"
    for f in sorted(text_dir.iterdir()):
        if f.is_file() and f.suffix == ".txt" or f.name == "corpus.en":
            with open(f, encoding="utf-8", errors="replace") as fh:
                lines += [next(fh, "") for _ in range(120)]
    par = text_dir / "parallel" / "udhr_articles_aligned.tsv"
    if par.is_file():
        lines += par.read_text(encoding="utf-8").splitlines()[:150]
    return [line.rstrip("\n") for line in lines if line.strip()]


@pytest.mark.parametrize("name", SP_MODELS)
def test_viterbi_ids_equal_sentencepiece_and_hf(name, shared_data, text_lines):
    spm = pytest.importorskip("sentencepiece")
    hf_models = pytest.importorskip("tokenizers.models")
    path = shared_data / "vocab" / "sentencepiece" / f"{name}.model"
    if not path.is_file():
        pytest.skip(f"{path} is missing")
    sp = spm.SentencePieceProcessor(model_file=str(path))
    rows = read_sp_pieces(path)
    assert len(rows) == sp.get_piece_size()
    ours = Unigram([(p, s) for p, s, _ in rows], unk_id=sp.unk_id(), types=[t for *_, t in rows])
    plain = Unigram([(p, s) for p, s, _ in rows], unk_id=sp.unk_id())  # HF's rules: no piece types
    hf = hf_models.Unigram([(p, s) for p, s, _ in rows], sp.unk_id(), False)
    checked = 0
    for line in text_lines:
        normalized = "".join(sp.encode(line, out_type=str))
        if not normalized:
            continue
        want = sp.encode(line)
        assert ours.encode_piece(normalized) == want, line
        assert plain.encode_piece(normalized) == [t.id for t in hf.tokenize(normalized)], line
        checked += 1
    assert checked > 500


@pytest.mark.parametrize("name", SP_MODELS)
@pytest.mark.parametrize("backend", BACKENDS)
def test_whole_documents_equal_sentencepiece(name, backend, shared_data):
    """One lattice over a whole document: path scores pass -1e5, where float rounding decides
    near-ties and sentencepiece rebases its float scores; both must be followed exactly."""
    spm = pytest.importorskip("sentencepiece")
    path = shared_data / "vocab" / "sentencepiece" / f"{name}.model"
    if not path.is_file():
        pytest.skip(f"{path} is missing")
    sp = spm.SentencePieceProcessor(model_file=str(path))
    rows = read_sp_pieces(path)
    ours = Unigram([(p, s) for p, s, _ in rows], unk_id=sp.unk_id(), types=[t for *_, t in rows], backend=backend)
    docs = [f for f in sorted((shared_data / "text").iterdir()) if f.is_file() and f.stat().st_size < 150_000]
    if backend == "python":
        docs = docs[:2]
    elif (shared_data / "text" / "parallel" / "languages.json").is_file():
        docs.append(shared_data / "text" / "parallel" / "languages.json")  # JSON: user-defined '"' everywhere
    assert docs
    for f in docs:
        text = f.read_text(encoding="utf-8")
        assert ours.encode_piece("".join(sp.encode(text, out_type=str))) == sp.encode(text), f.name


@pytest.mark.parametrize("name", SP_MODELS)
def test_nbest_equals_sentencepiece(name, shared_data, text_lines):
    """Same paths with the same scores in the same order; paths of equal score may come in
    another order (sentencepiece's float A* agenda), which must stay rare."""
    spm = pytest.importorskip("sentencepiece")
    path = shared_data / "vocab" / "sentencepiece" / f"{name}.model"
    if not path.is_file():
        pytest.skip(f"{path} is missing")
    sp = spm.SentencePieceProcessor(model_file=str(path))
    rows = read_sp_pieces(path)
    ours = Unigram([(p, s) for p, s, _ in rows], unk_id=sp.unk_id(), types=[t for *_, t in rows])
    same_order = total = 0
    for line in text_lines[::6]:
        line = line[:40]
        normalized = "".join(sp.encode(line, out_type=str))
        if not normalized:
            continue
        want = sp.nbest_encode(line, nbest_size=5)
        got = ours.nbest(normalized, 5)
        score_of = {tuple(ids): s for ids, s in ours.nbest(normalized, 12)}
        assert len(got) == len(want), line
        for (ids, s), w in zip(got, want):
            assert score_of[tuple(w)] == pytest.approx(s, abs=1e-4), line
        total += 1
        same_order += [ids for ids, _ in got] == want
    assert same_order >= 0.95 * total


def test_byte_fallback_equals_hf():
    hf_models = pytest.importorskip("tokenizers.models")
    pieces = [("<unk>", 0.0), ("a", -1.0), ("b", -2.0), ("ab", -2.5)] + [(f"<0x{b:02X}>", -5.0) for b in range(256)]
    ours = Unigram(pieces, byte_fallback=True)
    hf = hf_models.Unigram(pieces, 0, True)
    for text in ["abé", "a龘ab", "éé", "ab", "x"]:
        assert ours.encode_piece(text) == [t.id for t in hf.tokenize(text)], text


# -- training -------------------------------------------------------------------------------------

TINY = {"▁low": 5, "▁lower": 2, "▁newest": 6, "▁widest": 3, "▁new": 4}


def _corpus_counts(lines: int = 400) -> Counter:
    path = Path(tr.__file__).resolve().parents[1] / "data" / "corpus" / "en.train.txt"
    counts: Counter = Counter()
    with open(path, encoding="utf-8") as f:
        for k, line in enumerate(f):
            if k >= lines:
                break
            text = "▁" + " ".join(line.split()).replace(" ", "▁")
            counts.update("▁" + w for w in text.split("▁") if w)
    return counts


@pytest.mark.parametrize("backend", BACKENDS)
def test_trainer_golden_on_a_tiny_corpus(backend):
    m = UnigramTrainer(vocab_size=30, show_progress=False, backend=backend).train_from_counts(TINY)
    # "▁newest" is no seed: like a word before a space in sentencepiece's sentences, a word end is
    # one context, so it is not right-maximal; "▁new" and "▁low" are ("▁newest", "▁lower")
    assert m.pieces == ("<unk>", "e", "▁new", "s", "t", "▁low", "▁", "d", "i", "w", "o", "l", "n", "r")
    assert m.types[0] == 2 and set(m.types[1:]) == {1}
    assert pieces_of(m, m.encode_piece("▁lowest")) == ["▁low", "e", "s", "t"]
    assert pieces_of(m, m.encode_piece("▁newer")) == ["▁new", "e", "r"]
    scores = m.scores[1:]
    assert list(scores) == sorted(scores, reverse=True)
    assert all(s == f32(s) for s in scores)  # float32 like sentencepiece's


def test_trainer_keeps_required_characters_and_orders_ids():
    counts = _corpus_counts(200)
    trainer = UnigramTrainer(vocab_size=300, special_tokens=("<s>", "</s>"), character_coverage=1.0,
                             show_progress=False)
    m = trainer.train_from_counts(counts)
    assert m.vocab_size == 300
    assert m.pieces[:3] == ("<unk>", "<s>", "</s>")
    chars = {ch for w in counts for ch in w}
    assert chars <= set(m.pieces)
    rare = UnigramTrainer(vocab_size=300, character_coverage=0.99, show_progress=False).train_from_counts(counts)
    missing = chars - set(rare.pieces)
    assert missing and rare.encode_piece("▁" + min(missing)) == [rare.token_to_id("▁"), 0]
    assert all(len(p) <= 16 for p in m.pieces[3:])
    assert all("▁" not in p[1:] for p in m.pieces[3:])
    report = trainer.last_report
    assert report.seed_pieces > 300 and report.em_rounds >= 2


def test_training_is_deterministic_across_threads_and_backends():
    counts = _corpus_counts(300)
    models = [UnigramTrainer(vocab_size=400, num_threads=t, show_progress=False).train_from_counts(counts)
              for t in (1, 2, 3)]
    assert models[0].to_dict() == models[1].to_dict() == models[2].to_dict()
    if _native.available():
        small = _corpus_counts(60)
        a = UnigramTrainer(vocab_size=150, backend="native", show_progress=False).train_from_counts(small)
        b = UnigramTrainer(vocab_size=150, backend="python", show_progress=False).train_from_counts(small)
        assert a.pieces == b.pieces
        np.testing.assert_allclose(a.scores, b.scores, rtol=0, atol=1e-5)


def test_split_digits_and_max_piece_length():
    counts = {"▁abc123": 10, "▁abc456": 10, "▁1234": 5, "▁abcabcabc": 8}
    m = UnigramTrainer(vocab_size=40, split_digits=True, max_piece_length=3, show_progress=False).train_from_counts(counts)
    for p in m.pieces[1:]:
        assert len(p) <= 3
        assert not (len(p) > 1 and any(ch.isdigit() for ch in p)), p


def test_byte_fallback_training_adds_byte_pieces():
    counts = {"▁ab": 10, "▁ba": 10, "▁aé": 1}
    trainer = UnigramTrainer(vocab_size=280, byte_fallback=True, character_coverage=0.9, show_progress=False)
    m = trainer.train_from_counts(counts)
    assert m.pieces[1:257] == tuple(f"<0x{b:02X}>" for b in range(256))
    assert "é" not in m.get_vocab()  # below the coverage: spelled as bytes
    assert pieces_of(m, m.encode_piece("▁é"))[-2:] == ["<0xC3>", "<0xA9>"]


def test_training_errors():
    with pytest.raises(TrainingError, match="empty"):
        UnigramTrainer(show_progress=False).train_from_counts({})
    with pytest.raises(TrainingError, match="empty"):
        UnigramTrainer(show_progress=False).train_from_counts({"▁a": 0, "": 3})
    with pytest.raises(TrainingError, match="minimum is 9"):
        UnigramTrainer(vocab_size=5, special_tokens=("<s>",), show_progress=False).train_from_counts(
            {"▁abc": 3, "▁def": 2})
    with pytest.raises(TrainingError, match="shrinking_factor"):
        UnigramTrainer(shrinking_factor=1.5)
    with pytest.raises(TrainingError, match="count"):
        UnigramTrainer(show_progress=False).train_from_counts({"▁a": -1})


@pytest.mark.parametrize("name", ["tokenforge.models.unigram", "tokenforge.trainers.unigram"])
def test_docstring_examples(name):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0


def test_hf_albert_tokenizer_json_model_equals_hf(shared_data, text_lines):
    tokenizers = pytest.importorskip("tokenizers")
    import json

    path = shared_data / "vocab" / "hf" / "albert-base-v2_spiece_unigram_tokenizer.json"
    if not path.is_file():
        pytest.skip(f"{path} is missing")
    ours = Unigram.from_dict(json.loads(path.read_text(encoding="utf-8"))["model"])
    hf = tokenizers.Tokenizer.from_file(str(path))
    for line in text_lines[::3]:
        normalized = hf.normalizer.normalize_str(line) if hf.normalizer else line
        pieces = [p for p, _ in hf.pre_tokenizer.pre_tokenize_str(normalized)] if hf.pre_tokenizer else [normalized]
        for piece in pieces:
            assert ours.encode_piece(piece) == [t.id for t in hf.model.tokenize(piece)], piece


def test_hf_unigram_with_a_piece_listed_twice_uses_the_later_id_as_hf():
    """HF's UnigramTrainer lists a special token twice when the corpus holds it; HF loads
    such a file and the later id is the piece (lookup and score)."""
    tokenizers = pytest.importorskip("tokenizers")
    vocab = [["<unk>", 0.0], ["ab", -1.0], ["a", -2.0], ["b", -2.0], ["ab", -9.0], ["c", -3.0]]
    hf = tokenizers.Tokenizer(tokenizers.models.Unigram([tuple(v) for v in vocab], 0))
    m = Unigram.from_dict({"type": "Unigram", "unk_id": 0, "vocab": vocab})
    assert m.token_to_id("ab") == hf.token_to_id("ab") == 4
    assert m.id_to_token(1) == hf.id_to_token(1) == "ab"
    for text in ["ab", "abab", "abc", "cab", "xab"]:
        assert m.encode_piece(text) == [t.id for t in hf.model.tokenize(text)], text

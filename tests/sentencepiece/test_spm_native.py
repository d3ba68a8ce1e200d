"""The native SentencePiece code (``_core/spm.h``) equals its pure-Python reference.

* ``SpmNormalizer`` == ``SentencePieceNormalizer``'s Python path (both its general
  loop ``_run`` and its per-character fast path) on generated text: tiny alphabets
  with spaces, ``▁``, combining marks, half-width kana (two-character rules), CJK,
  emoji, NUL and lone surrogates; every ``.model`` file of the shared data and the
  shipped rule sets; all flag combinations; user-defined symbols. Broken charsmaps
  raise ``FileFormatError`` on both sides.
* ``SpmBPE`` == ``sentencepiece.bpe.sp_merge`` (the whole text as one merge) and
  ``PieceBPE._sp_tokenize`` (the Python word-split path) on the two BPE ``.model``
  files and on small random models (ties, UNUSED, USER_DEFINED, CONTROL and BYTE
  pieces, byte fallback), ids and offsets; random models also round-trip through
  ``write_model`` and, when installed, are checked against ``sentencepiece``.
* The pipeline's fused native path gives the ids of its general path.
"""

from __future__ import annotations

import random
from functools import lru_cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tokenforge
from tokenforge import _native
from tokenforge.errors import FileFormatError
from tokenforge.sentencepiece.proto import ModelType, PieceType, build_model_proto, write_model
from tokenforge.models.bpe import PieceBPE
from tokenforge.sentencepiece import byte_piece
from tokenforge.sentencepiece.bpe import sp_merge
from tokenforge.sentencepiece.charsmap import NAMED_CHARSMAPS, Charsmap
from tokenforge.sentencepiece.normalizer import SentencePieceNormalizer

pytestmark = pytest.mark.skipif(not _native.available(), reason="the native core is not built")
core = _native.core("native")

MODEL_FILES = [
    "albert_spiece.model",
    "hf_test_bpe.model",
    "hf_test_unigram.model",
    "mistral_v1_tokenizer.model",
    "spm_test_ja_unigram.model",
    "spm_test_unigram.model",
]

# Characters that exercise the rules and the white-space handling.
ALPHABET = [
    " ", "  ", "\u3000", "\t", "\n", "\u2581", "\x00", "\x01", "a", "b", "A", "Z", "x", "é", "e\u0301", "\u0301",
    "\u0308", "ﬃ", "Ｘ", "①", "ｶ", "ﾞ", "ｰ", "\u3099", "か", "日", "本", "龘", "😀", "👍🏽", "\u200d",
    "\ud800", "\udc00", "\U00020000", "¼", "ℌ", "Å",
]
TEXT = st.lists(st.sampled_from(ALPHABET) | st.characters(), max_size=24).map("".join)
USER_SYMBOLS = st.lists(st.sampled_from(["ab", "a", "▁a", "日本", " x", "ｶﾞ", "é", "😀b", "\u2581\u2581"]), max_size=3)
FLAGS = st.tuples(st.booleans(), st.booleans(), st.booleans())


@lru_cache(maxsize=None)
def _rules(name: str) -> Charsmap:
    if name in NAMED_CHARSMAPS:
        return Charsmap.named(name)
    return tokenforge.load(str(_shared / "vocab" / "sentencepiece" / name)).normalizer.charsmap


_shared = None


@pytest.fixture(scope="module", autouse=True)
def _data(request):
    global _shared
    try:
        _shared = request.getfixturevalue("shared_data")
    except pytest.skip.Exception:
        _shared = None


@lru_cache(maxsize=256)
def _normalizers(rules: str, flags: tuple[bool, bool, bool], udf: tuple[str, ...]):
    adp, rew, esc = flags
    py = SentencePieceNormalizer(
        _rules(rules), add_dummy_prefix=adp, remove_extra_whitespaces=rew, escape_whitespaces=esc,
        user_defined_symbols=udf,
    )
    nat = core.SpmNormalizer(py.charsmap.blob, adp, rew, esc, list(py.user_defined_symbols))
    return py, nat


def _check_normalizer(rules: str, flags, udf, text: str) -> None:
    py, nat = _normalizers(rules, tuple(flags), tuple(udf))
    got = nat.normalize(text)
    assert got == py._run(text, False)[0], (rules, flags, udf, text)
    assert got == (py._normalize_str_py(text) if text else ""), (rules, flags, udf, text)
    # with offsets: the native spans, mapped through the alignment, are _run's
    from tokenforge.normalizers import NFKC, NormalizedText

    for nt in (NormalizedText(text), NFKC().normalize(NormalizedText(text))):
        want, spans = py._run(nt.normalized, True, nt.alignment)
        got_nt = py.normalize(nt)
        assert (got_nt.normalized, tuple(got_nt.alignment)) == (want, tuple(spans)), (rules, flags, udf, text)


@pytest.mark.parametrize("rules", NAMED_CHARSMAPS)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=TEXT, flags=FLAGS, udf=USER_SYMBOLS)
def test_normalizer_equals_python_on_shipped_rule_sets(rules, text, flags, udf):
    _check_normalizer(rules, flags, udf, text)


@pytest.mark.parametrize("model", MODEL_FILES)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=TEXT, flags=FLAGS, udf=USER_SYMBOLS)
def test_normalizer_equals_python_on_model_files(model, text, flags, udf):
    if _shared is None or not (_shared / "vocab" / "sentencepiece" / model).is_file():
        pytest.skip(f"{model} not found")
    _check_normalizer(model, flags, udf, text)


def test_normalizer_equals_python_on_real_text(shared_data):
    for model in MODEL_FILES:
        path = shared_data / "vocab" / "sentencepiece" / model
        if not path.is_file():
            continue
        py = tokenforge.load(str(path)).normalizer
        nat = py.native_normalizer()
        for corpus in ("tinyshakespeare.txt", "wagahaiwa_nekodearu.txt", "hongloumeng.txt"):
            f = shared_data / "text" / corpus
            if not f.is_file():
                continue
            text = f.read_text(encoding="utf-8")[:8000]
            for chunk in [text, *filter(None, text.splitlines()[:100])]:
                assert nat.normalize(chunk) == py._normalize_str_py(chunk), (model, chunk[:60])


def test_normalize_str_uses_native_and_python_backend_is_the_reference(monkeypatch):
    norm = SentencePieceNormalizer("nmt_nfkc", user_defined_symbols=["ab"])
    text = "  ﬃ ab\u3000ｶﾞ\ud800 "
    native = norm.normalize_str(text)
    assert norm._native is not None
    monkeypatch.setenv("TOKENFORGE_BACKEND", "python")
    assert norm.native_normalizer() is None
    assert norm.normalize_str(text) == native == "▁ffi▁ab▁ガ\ufffd"


def _corrupt(blob: bytes, rng: random.Random, flips: int) -> bytes:
    b = bytearray(blob)
    for _ in range(flips):
        b[rng.randrange(4, len(b))] = rng.randrange(256)
    return bytes(b)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), flips=st.integers(1, 400), text=TEXT)
def test_corrupted_charsmap_gives_same_text_or_same_error(seed, flips, text):
    blob = _corrupt(Charsmap.named("nmt_nfkc").blob, random.Random(seed), flips)
    py = SentencePieceNormalizer(blob)
    nat = core.SpmNormalizer(blob, True, True, True, [])
    text = text + "ﬃＸ①ｶﾞ¼ℌ"
    try:
        want = py._run(text, False)[0]
    except FileFormatError as exc:
        with pytest.raises(FileFormatError) as got:
            nat.normalize(text)
        assert str(got.value) == str(exc)
    else:
        assert nat.normalize(text) == want


def test_bad_replacement_raises_file_format_error():
    blob = bytearray(Charsmap.named("nmt_nfkc").blob)
    size = int.from_bytes(blob[:4], "little")
    py = SentencePieceNormalizer(bytes(blob))
    _, value = py.charsmap.longest_prefix("ﬃ".encode())
    blob[4 + size + value] = 0xFF  # the replacement of "ﬃ" is no longer UTF-8
    nat = core.SpmNormalizer(bytes(blob), True, True, True, [])
    assert nat.normalize("abc") == "▁abc"  # unaffected rules still work
    with pytest.raises(FileFormatError, match="not UTF-8"):
        nat.normalize("aﬃ")
    with pytest.raises(FileFormatError, match="not UTF-8"):
        SentencePieceNormalizer(bytes(blob))._run("aﬃ", False)


def test_constructor_rejects_bad_arguments():
    with pytest.raises(FileFormatError, match="too short"):
        core.SpmNormalizer(b"\x01", True, True, True, [])
    with pytest.raises(ValueError):
        core.SpmNormalizer(b"", True, True, True, [""])
    with pytest.raises(TypeError):
        core.SpmNormalizer(b"", True, True, True, [1])
    with pytest.raises(ValueError):
        core.SpmBPE(["<unk>", "a"], [0.0], [2, 1], 0, None)
    with pytest.raises(ValueError):
        core.SpmBPE(["<unk>", "a"], [0.0, 0.0], [2, 1], 5, None)
    with pytest.raises(ValueError):
        core.SpmBPE(["<unk>", "a", "a"], [0.0, 0.0, 0.0], [2, 1, 1], 0, None)
    with pytest.raises(TypeError):
        core.SpmNormalizer(b"", True, True, True, []).normalize(b"x")


# -- BPE ---------------------------------------------------------------------------------


def _check_bpe(model: PieceBPE, text: str) -> None:
    nat = model.native_encoder()
    got = nat.tokenize(text)
    want = sp_merge(model._sp, text, 0.0, None) if text else []
    assert got == want, text
    assert got == (model._sp_tokenize(text, 0.0, None) if text else []), text
    assert nat.encode(text) == [t[0] for t in want]


@lru_cache(maxsize=None)
def _file_model(name: str) -> PieceBPE:
    return tokenforge.load(str(_shared / "vocab" / "sentencepiece" / name)).model


@lru_cache(maxsize=None)
def _piece_chars(name: str) -> list[str]:
    chars = sorted({c for p in _file_model(name).get_vocab() for c in p})
    return chars[:400]


@pytest.mark.parametrize("name", ["mistral_v1_tokenizer.model", "hf_test_bpe.model"])
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_bpe_equals_python_on_model_files(name, data):
    if _shared is None or not (_shared / "vocab" / "sentencepiece" / name).is_file():
        pytest.skip(f"{name} not found")
    alphabet = st.sampled_from(_piece_chars(name)) | st.sampled_from(ALPHABET + ["▁", "▁▁", "龘𠀋"])
    text = data.draw(st.lists(alphabet, max_size=40).map("".join))
    _check_bpe(_file_model(name), text)


def test_bpe_equals_python_on_real_text(shared_data):
    for name in ("mistral_v1_tokenizer.model", "hf_test_bpe.model"):
        path = shared_data / "vocab" / "sentencepiece" / name
        if not path.is_file():
            continue
        tok = tokenforge.load(str(path))
        for corpus in ("tinyshakespeare.txt", "wagahaiwa_nekodearu.txt", "hongloumeng.txt"):
            f = shared_data / "text" / corpus
            if f.is_file():
                text = tok.normalizer.normalize_str(f.read_text(encoding="utf-8")[:6000])
                _check_bpe(tok.model, text)


SP_ALPHABET = "ab▁cé"


@st.composite
def sp_models(draw):
    """Small SentencePiece BPE tables: tied scores, every piece type, optional byte fallback."""
    strings = draw(st.lists(st.text(SP_ALPHABET, min_size=1, max_size=4), min_size=1, max_size=25, unique=True))
    singles = [c for c in SP_ALPHABET if draw(st.booleans()) or draw(st.booleans())]
    pieces = ["<unk>"]
    for p in singles + strings:
        if p not in pieces:
            pieces.append(p)
    kinds = [PieceType.NORMAL] * 6 + [PieceType.UNUSED, PieceType.USER_DEFINED, PieceType.CONTROL]
    types = [PieceType.UNKNOWN] + [
        draw(st.sampled_from(kinds)) if len(p) > 1 else draw(st.sampled_from(kinds[:7])) for p in pieces[1:]
    ]
    byte_fallback = draw(st.booleans())
    if byte_fallback:
        for b in range(256):
            pieces.append(byte_piece(b))
            types.append(PieceType.BYTE)
    scores = [0.0] + [float(draw(st.integers(-4, 0))) for _ in pieces[1:]]
    return pieces, scores, [int(t) for t in types], byte_fallback


@settings(max_examples=150, deadline=None)
@given(spec=sp_models(), text=st.text(SP_ALPHABET + "xy", max_size=30))
def test_bpe_equals_python_on_random_models(spec, text):
    pieces, scores, types, byte_fallback = spec
    model = PieceBPE.from_sentencepiece(pieces, scores, types, byte_fallback=byte_fallback)
    _check_bpe(model, text)
    _check_bpe(model, "▁" + text.replace("b", "▁b"))


def test_random_models_round_trip_through_model_files(tmp_path):
    """Random models written with write_model load into a pipeline whose fused native
    path equals the Python backend and, when installed, sentencepiece."""
    spm = None
    try:
        import sentencepiece as spm
    except ImportError:
        pass
    rng = random.Random(11)
    for k in range(12):
        words = {"".join(rng.choice("abcé") for _ in range(rng.randint(1, 4))) for _ in range(30)}
        pieces = ["<unk>", "<s>", "</s>", "▁"] + sorted(set("abcé")) + sorted(
            {"▁" + w for w in words if rng.random() < 0.5} | {w for w in words if len(w) > 1}
        )
        pieces = list(dict.fromkeys(pieces))
        types = [PieceType.UNKNOWN, PieceType.CONTROL, PieceType.CONTROL] + [PieceType.NORMAL] * (len(pieces) - 3)
        for i in range(8, len(pieces)):
            r = rng.random()
            if r < 0.1:
                types[i] = PieceType.UNUSED
            elif r < 0.15 and k % 2:
                types[i] = PieceType.USER_DEFINED
        scores = [0.0, 0.0, 0.0] + [-float(rng.randint(0, 6)) for _ in pieces[3:]]
        proto = build_model_proto(pieces, scores, [int(t) for t in types], model_type=ModelType.BPE)
        path = tmp_path / f"m{k}.model"
        write_model(proto, path)
        tok = tokenforge.load(str(path))
        sp = spm.SentencePieceProcessor(model_file=str(path)) if spm else None
        model = tok.model
        for _ in range(60):
            text = "".join(rng.choice("abcé xyz  ") for _ in range(rng.randint(0, 30)))
            ids = tok.encode(text, disallowed_special=())
            norm = tok.normalizer._normalize_str_py(text) if text else ""
            assert ids == [t[0] for t in model._sp_tokenize(norm, 0.0, None)] if norm else ids == []
            if sp is not None:
                assert ids == sp.encode(text), (k, text)


def test_bpe_encode_piece_uses_native_and_python_backend_is_the_reference(monkeypatch):
    model = PieceBPE.from_sentencepiece(["<unk>", "▁", "a", "b", "▁a", "ab"], [0, -1, -2, -3, -4, -5], [2, 1, 1, 1, 1, 1])
    assert model.encode_piece("▁abx▁ab") == [4, 3, 0, 4, 3]
    assert model._native is not None
    monkeypatch.setenv("TOKENFORGE_BACKEND", "python")
    assert model.native_encoder() is None
    assert model.encode_piece("▁abx▁ab") == [4, 3, 0, 4, 3]


# -- Unigram -----------------------------------------------------------------------------

UNI_CHARS = "ab▁中😀é"


@st.composite
def unigram_models(draw):
    """Small Unigram tables with tied, huge (rebasing) and tiny scores and every piece type."""
    pieces = draw(st.lists(st.text(UNI_CHARS, min_size=1, max_size=4), min_size=1, max_size=20, unique=True))
    scores = [draw(st.sampled_from([-1.0, -2.0, -0.5, -3000.0, -3000.5, 0.0, -1e5, -5e4, -20.0]))
              if draw(st.booleans()) else -draw(st.integers(0, 40)) / 4 for _ in pieces]
    types = [draw(st.sampled_from([1, 1, 1, 2, 3, 4, 5])) for _ in pieces] if draw(st.booleans()) else None
    return pieces, scores, types


def _lattice(model):
    return core.SpmUnigram(
        [p if i in model._in_lattice else None for i, p in enumerate(model.pieces)],
        list(model._node_score), model._unk_score,
    )


@settings(max_examples=200, deadline=None)
@given(spec=unigram_models(), text=st.text(UNI_CHARS + "x", max_size=60))
def test_unigram_viterbi_equals_python_and_hash_trie(spec, text):
    from tokenforge.models.unigram import Unigram

    pieces, scores, types = spec
    model = Unigram(list(zip(pieces, scores)), unk_id=None, types=types)
    ids, starts = _lattice(model).viterbi(text)
    assert list(zip(ids, starts)) == (model._viterbi_py(text) or [])
    if model._core() is not None:
        assert (ids, starts) == tuple(core.unigram_viterbi(model._native, text))


def test_unigram_viterbi_equals_hash_trie_on_real_text(shared_data):
    for name in ("albert_spiece.model", "spm_test_ja_unigram.model", "hf_test_unigram.model"):
        path = shared_data / "vocab" / "sentencepiece" / name
        if not path.is_file():
            continue
        tok = tokenforge.load(str(path))
        model = tok.model
        model._core()
        lattice = _lattice(model)
        for corpus in ("tinyshakespeare.txt", "wagahaiwa_nekodearu.txt"):
            f = shared_data / "text" / corpus
            if f.is_file():
                text = tok.normalizer.normalize_str(f.read_text(encoding="utf-8")[:30000])
                assert lattice.viterbi(text) == tuple(core.unigram_viterbi(model._native, text))


def test_spm_unigram_rejects_bad_arguments():
    with pytest.raises(ValueError):
        core.SpmUnigram(["a"], [float("nan")], -10.0)
    with pytest.raises(ValueError):
        core.SpmUnigram(["a"], [0.0], float("nan"))
    with pytest.raises(ValueError):
        core.SpmUnigram(["a", "b"], [0.0], -10.0)
    with pytest.raises(TypeError):
        core.SpmUnigram(["a"], ["x"], -10.0)
    with pytest.raises(TypeError):
        core.SpmUnigram([1], [0.0], -10.0)
    assert core.SpmUnigram([], [], -10.0).viterbi("ab") == ([-1, -1], [0, 1])


# -- the fused pipeline path -----------------------------------------------------------


@pytest.mark.parametrize("model", MODEL_FILES)
def test_fused_pipeline_path_equals_general_path(shared_data, model):
    path = shared_data / "vocab" / "sentencepiece" / model
    if not path.is_file():
        pytest.skip(f"{model} not found")
    tok = tokenforge.load(str(path))
    assert tok.plan == "sentencepiece"
    texts = ["", " ", "Hello  world", "  ﬃ\u3000x ", "吾輩は猫である。名前はまだ無い。", "龘😀 x", "<s> a </s>"]
    f = shared_data / "text" / "tinyshakespeare.txt"
    if f.is_file():
        texts += f.read_text(encoding="utf-8")[:3000].splitlines()
    for text in texts:
        fused = tok.encode(text, disallowed_special=())
        pieces = [p for seg, first in tok._ordinary_segments(text) for p in tok._plan.pieces(seg, first)]
        general = [i for p in pieces for i in tok.model.encode_piece(p)]
        assert fused == general, text
        assert tok.encode(text, allowed_special="all") == tok.encode_full(text, allowed_special="all").ids, text


def test_threads_share_a_pipeline_and_get_the_sequential_ids(shared_data):
    """Long texts run with the GIL released; SpmBPE's memo is shared by the threads."""
    from concurrent.futures import ThreadPoolExecutor

    f = shared_data / "text" / "tinyshakespeare.txt"
    if not f.is_file():
        pytest.skip("tinyshakespeare.txt not found")
    text = f.read_text(encoding="utf-8")[:60000]
    chunks = [text[k : k + 5000] for k in range(0, len(text), 5000)] * 3
    for model in ("mistral_v1_tokenizer.model", "albert_spiece.model"):
        path = shared_data / "vocab" / "sentencepiece" / model
        if not path.is_file():
            continue
        ref = tokenforge.load(str(path))
        want = [ref.encode(c, disallowed_special=()) for c in chunks]
        tok = tokenforge.load(str(path))
        with ThreadPoolExecutor(4) as pool:
            got = list(pool.map(lambda c: tok.encode(c, disallowed_special=()), chunks))
        assert got == want


@pytest.mark.parametrize("model", MODEL_FILES)
def test_native_batch_on_threads_equals_one_by_one(shared_data, model):
    """spm_encode_batch: every text on a pool of threads, the GIL released, same ids."""
    path = shared_data / "vocab" / "sentencepiece" / model
    if not path.is_file():
        pytest.skip(f"{model} not found")
    tok = tokenforge.load(str(path))
    text = (shared_data / "text" / "tinyshakespeare.txt").read_text(encoding="utf-8")[:20000]
    texts = text.splitlines() + ["", " ", "龘😀 x\ud800", text, "吾輩は猫である。" * 50]
    one = [tok.encode(t, disallowed_special=()) for t in texts]
    for n in (1, 2, 4):
        assert tok.encode_batch(texts, num_threads=n, disallowed_special=()) == one
    ids, offsets = tok.encode_batch_to_numpy(texts, num_threads=2, disallowed_special=())
    assert [ids[offsets[k]:offsets[k + 1]].tolist() for k in range(len(texts))] == one


@pytest.mark.parametrize("model", MODEL_FILES)
def test_native_batch_flat_form_equals_the_list_form(shared_data, model):
    """spm_encode_batch(..., flat=True): the same ids as the lists, as bytes and offsets."""
    import numpy as np

    path = shared_data / "vocab" / "sentencepiece" / model
    if not path.is_file() or not _native.available():
        pytest.skip(f"{model} not found or no native core")
    tok = tokenforge.load(str(path))
    handles = tok._plan._handles()
    assert handles
    texts = ["", " ", "hello world", "龘😀 x", "吾輩は猫である。" * 20, "a\tb\nc  d"] * 3
    core = _native.core("auto")
    lists = core.spm_encode_batch(handles[0], handles[1], texts, 2)
    ids, offsets, uncovered = core.spm_encode_batch(handles[0], handles[1], texts, 2, True)
    ids, offsets = np.frombuffer(ids, dtype=np.uint32), np.frombuffer(offsets, dtype=np.uint64)
    assert len(offsets) == len(texts) + 1 and offsets[-1] == len(ids)
    assert uncovered == [k for k, x in enumerate(lists) if x is None]
    assert [ids[offsets[k]:offsets[k + 1]].tolist() for k in range(len(texts))] == [x or [] for x in lists]

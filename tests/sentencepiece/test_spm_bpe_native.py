"""The native SentencePiece BPE merge loop (``_core/spm_bpe_train.h``) learns
exactly what the pure-Python reference (``backend="python"``) learns: the same
pieces in the same order, the same scores and types, on random tiny-alphabet
corpora (``▁``, digits, scripts, combining marks, count ties, meta-piece
collisions) and on real text; bad input to the core is a Python exception."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokenforge import _native
from tokenforge.errors import TrainingError
from tokenforge.trainers.coverage import count_chars, required_chars
from tokenforge.trainers.spm_bpe import SentencePieceBPETrainer, _blank_meta_pieces

pytestmark = pytest.mark.skipif(not _native.available(), reason="the native core is not built")

# Latin, Cyrillic, Han, Hiragana (counts as Han), a combining acute (Inherited), ASCII and
# full-width and Arabic-Indic digits, ▁, U+2585 and NUL (never inside a longer piece), an astral Han
# character and an emoji (code points past the BMP)
ALPHABET = "ab▁1２٣中のя\u0301é\u2585\0<>𠀋\U0001f600"


def _train(counts, backend, **kwargs):
    options = {"show_progress": False, "special_tokens": []}
    options.update(kwargs)
    model = SentencePieceBPETrainer(backend=backend, **options).train_from_counts(counts)
    pieces = [model.id_to_token(i) for i in range(model.vocab_size)]
    return pieces, model.scores, model.types


def _check_same(counts, **kwargs):
    native = _train(counts, "native", **kwargs)
    python = _train(counts, "python", **kwargs)
    assert native[0] == python[0]
    assert native[1] == python[1]
    assert native[2] == python[2]
    return native


@settings(max_examples=300, deadline=None)
@given(
    counts=st.dictionaries(st.text(alphabet=ALPHABET, min_size=1, max_size=12), st.integers(1, 4), min_size=1, max_size=15),
    vocab_extra=st.integers(0, 40),
    coverage=st.sampled_from([1.0, 0.9, 0.7]),
    max_piece_length=st.integers(1, 6),
    split_digits=st.booleans(),
    split_by_number=st.booleans(),
    split_by_unicode_script=st.booleans(),
    specials=st.lists(st.sampled_from(["<s>", "ab", "aa", "▁a", "<ab>", "中の"]), unique=True, max_size=3),
)
def test_native_loop_learns_the_reference_pieces(
    counts, vocab_extra, coverage, max_piece_length, split_digits, split_by_number, split_by_unicode_script, specials
):
    kwargs = {
        "character_coverage": coverage, "max_piece_length": max_piece_length, "split_digits": split_digits,
        "split_by_number": split_by_number, "split_by_unicode_script": split_by_unicode_script, "special_tokens": specials,
    }
    # the alphabet after the meta pieces spelled in the text are blanked (U+001F: counted, never a piece)
    blanked = _blank_meta_pieces(counts, ["<unk>", *specials])
    alphabet = [ch for ch, _ in required_chars(count_chars(blanked), coverage) if ch != "\x1f"]
    vocab_size = 1 + len(specials) + len(alphabet) + vocab_extra
    if any(ch in specials for ch in alphabet):
        for backend in ("native", "python"):
            with pytest.raises(TrainingError, match="meta piece"):
                _train(counts, backend, vocab_size=vocab_size, **kwargs)
        return
    _check_same(counts, vocab_size=vocab_size, **kwargs)


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.text(alphabet="ab▁", min_size=2, max_size=10), st.just(1), min_size=1, max_size=20))
def test_count_ties_break_the_same_way(counts):
    """Every word counted once: most pairs tie, the (left, right) string order decides."""
    _check_same(counts, vocab_size=60, character_coverage=1.0)


def test_huge_counts_stay_exact():
    """64-bit pair counts: near 2^62 the native loop runs, past it the Python loop does; same pieces."""
    base = {"▁aab": 3, "▁abab": 2, "▁ba": 5, "▁bb": 1}
    for scale in (2**57, 2**60):
        counts = {w: c * scale + k for k, (w, c) in enumerate(base.items())}
        _check_same(counts, vocab_size=14, character_coverage=1.0)


def test_a_special_token_spelled_in_the_text_is_blanked():
    counts = {"▁ab": 50, "ab": 40, "▁cd": 10, "▁xaby": 5}
    pieces, _, types = _check_same(counts, vocab_size=10, character_coverage=1.0, special_tokens=["ab"])
    # as in sentencepiece, "ab" in the text becomes U+001F before counting: neither "a" nor "b" is
    # counted, no piece spans the blank; ("c", "d") beats ("▁", "c") at 10 as the smaller string,
    # then "▁cd" (10) beats "▁x" (5)
    assert pieces == ["<unk>", "ab", "cd", "▁cd", "▁x", "▁", "c", "d", "x", "y"] and types[1] == 3


def _lines(shared_data, name, n):
    path = shared_data / "text" / name
    if not path.is_file():
        pytest.skip(f"{path} not found")
    return [l for l in path.read_text(encoding="utf-8").split("\n") if l][:n]


def _counts(lines):
    counts: dict[str, int] = {}
    for line in lines:
        for w in ("▁" + line.replace(" ", "▁")).split("▁")[1:]:
            counts["▁" + w] = counts.get("▁" + w, 0) + 1
    return counts


@pytest.mark.parametrize(
    "name, n_lines, options",
    [
        ("botchan.txt", 4000, {"vocab_size": 2000}),
        ("botchan.txt", 1500, {"vocab_size": 1200, "split_digits": True, "byte_fallback": True, "max_piece_length": 6}),
        ("wagahaiwa_nekodearu.txt", 300, {"vocab_size": 3000}),
        ("wagahaiwa_nekodearu.txt", 200, {"vocab_size": 2000, "split_by_unicode_script": False, "character_coverage": 0.98}),
    ],
)
def test_native_loop_matches_the_reference_on_real_text(shared_data, name, n_lines, options):
    pieces, _, _ = _check_same(_counts(_lines(shared_data, name, n_lines)), special_tokens=["<s>", "</s>"], **options)
    assert len(pieces) == options["vocab_size"]


def test_backend_selects_the_loop(monkeypatch):
    core = _native.core("native")
    calls = []
    real = core.spm_bpe_learn

    def spy(*args):
        calls.append(1)
        return real(*args)

    monkeypatch.setattr(core, "spm_bpe_learn", spy)
    counts = {"▁aab": 4, "▁abab": 4, "▁ba": 4}
    _train(counts, "auto", vocab_size=12)
    assert calls == [1]
    _train(counts, "python", vocab_size=12)
    monkeypatch.setenv("TOKENFORGE_BACKEND", "python")
    _train(counts, "auto", vocab_size=12)
    assert calls == [1]
    with pytest.raises(TrainingError, match="backend"):
        SentencePieceBPETrainer(backend="fast")


def test_core_rejects_bad_input_with_exceptions():
    learn = _native.core("native").spm_bpe_learn
    ok = {"words": ["▁ab"], "freqs": [1], "alphabet": [ord("a"), ord("b"), 0x2581], "scripts": [0, 0, 1], "flags": [0, 0, 2]}

    def call(**over):
        a = {**ok, **over}
        return learn(a["words"], a["freqs"], a["alphabet"], a["scripts"], a["flags"], [], 5, 16, False, True, True)

    # "ab", "▁ab", then "▁a", whose count fell to 0 (sentencepiece takes such pairs last)
    assert call() == [(0, 1), (2, 3), (2, 0)]
    with pytest.raises(ValueError, match="ascending"):
        call(alphabet=[ord("b"), ord("a"), 0x2581])
    with pytest.raises(ValueError, match="inconsistent"):
        call(freqs=[1, 2])
    with pytest.raises(TypeError):
        call(words=[b"ab"])
    with pytest.raises(TypeError):
        call(freqs=[1.0])
    with pytest.raises(ValueError, match="negative"):
        call(freqs=[-1])
    with pytest.raises(OverflowError):
        call(words=["ab" * 8], freqs=[2**62])

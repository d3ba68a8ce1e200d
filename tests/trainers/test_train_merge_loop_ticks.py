"""The native training loops (byte-level BPE, WordPiece, SentencePiece BPE) report progress while
they run and stop on Ctrl-C (KeyboardInterrupt) within a fraction of a second; neither changes
what they learn."""

from __future__ import annotations

import _thread
import random
import threading
import time

import pytest

from tokenforge import _native
from tokenforge.trainers.bpe import BPETrainer, _byte_order, learn_merges

native = pytest.mark.skipif(_native.core("auto") is None, reason="native core not built")


def _words(n: int, seed: int = 0) -> dict[bytes, int]:
    rng = random.Random(seed)
    letters = b"abcdefghijklmnopqrstuvwxyz"
    return {bytes(rng.choices(letters, k=rng.randint(3, 14))): rng.randint(1, 50) for _ in range(n)}


@native
def test_the_progress_callback_runs_during_the_native_loop():
    counts = _words(3000)
    calls: list[int] = []
    merges = learn_merges(counts, 400, calls.append, backend="native")
    assert len(merges) == 400
    assert len(calls) > 10  # during the loop, not one call at the end
    assert all(n > 0 for n in calls) and sum(calls) == 400  # increments that add up
    # the core's own callback sees the merges learned so far, in steps
    seen: list[int] = []
    core = _native.core("native")
    words = list(counts)
    core.learn_merges(words, [counts[w] for w in words], 400, _byte_order("bytes"), seen.append)
    assert len(seen) > 10 and seen == sorted(seen) and seen[-1] == 400


@native
def test_progress_does_not_change_the_merges():
    counts = _words(3000, seed=1)
    assert learn_merges(counts, 500, lambda n: None, backend="native") == learn_merges(counts, 500, backend="native")
    assert learn_merges(counts, 500, backend="native") == learn_merges(counts, 500, backend="python")


@native
def test_the_trainer_bar_advances_during_the_merges(monkeypatch):
    """BPETrainer's merge bar gets many updates (it used to jump from 0 to 100 %)."""
    import tokenforge.trainers.bpe as bpe

    updates: list[tuple[str, int]] = []

    class Recorder(bpe.Progress):
        def update(self, n: int = 1) -> None:
            updates.append((self.desc, n))
            super().update(n)

        def __init__(self, total, desc, *args, **kwargs):
            self.desc = desc
            super().__init__(total, desc, *args, **kwargs)

    monkeypatch.setattr(bpe, "Progress", Recorder)
    text = " ".join("".join(random.Random(k).choices("abcdefghij", k=8)) for k in range(3000))
    BPETrainer(256 + 300, pattern="gpt2", show_progress=True).train_from_iterator([text])
    merge_updates = [n for desc, n in updates if desc == "merge"]
    assert len(merge_updates) > 10 and sum(merge_updates) == 300


@native
def test_an_exception_in_the_callback_stops_the_loop():
    def fail(n: int) -> None:
        raise RuntimeError("stop here")

    with pytest.raises(RuntimeError, match="stop here"):
        learn_merges(_words(2000), 300, fail, backend="native")


@native
def test_the_loop_runs_on_a_worker_thread_with_progress():
    counts = _words(3000, seed=2)
    out: dict[str, object] = {}
    calls: list[int] = []

    def work() -> None:
        out["merges"] = learn_merges(counts, 400, calls.append, backend="native")

    t = threading.Thread(target=work)
    t.start()
    t.join(60)
    assert not t.is_alive()
    assert out["merges"] == learn_merges(counts, 400, backend="native")
    assert len(calls) > 10


@native
def test_ctrl_c_stops_the_native_merge_loop_quickly():
    # About 1.5 M possible merges: many seconds of merging without the interrupt.
    counts = _words(150_000, seed=3)
    started = threading.Event()
    fired: list[float] = []

    def first_progress(n: int) -> None:
        if not started.is_set():
            started.set()

            def interrupt() -> None:
                fired.append(time.perf_counter())
                _thread.interrupt_main()  # what Ctrl-C does: the SIGINT handler's flag

            threading.Timer(0.3, interrupt).start()

    with pytest.raises(KeyboardInterrupt):
        learn_merges(counts, 10**7, first_progress, backend="native")
    stopped = time.perf_counter()
    assert fired, "the loop ended before the interrupt"
    assert stopped - fired[0] < 1.0


# -- the WordPiece and SentencePiece-BPE native loops: the same watch ---------------------------------------


def _text_counts(n: int, seed: int) -> dict[str, int]:
    return {w.decode(): c for w, c in _words(n, seed).items()}


def _wordpiece(vocab_size: int, show: bool = True):
    from tokenforge.trainers.wordpiece import WordPieceTrainer

    return WordPieceTrainer(vocab_size, special_tokens=["[UNK]"], show_progress=show, backend="native")


def _spm_bpe(vocab_size: int, show: bool = True):
    from tokenforge.trainers.spm_bpe import SentencePieceBPETrainer

    return SentencePieceBPETrainer(vocab_size, special_tokens=[], show_progress=show, backend="native")


FAMILIES = {
    "wordpiece": ("tokenforge.trainers.wordpiece", _wordpiece),
    "spm_bpe": ("tokenforge.trainers.spm_bpe", _spm_bpe),
}


def _record_bars(monkeypatch, module_name: str, on_first=None) -> list[int]:
    """Replace the module's Progress with one that records every total-so-far it is given."""
    import importlib

    module = importlib.import_module(module_name)
    seen: list[int] = []

    class Recorder(module.Progress):
        def __init__(self, total, desc, *args, **kwargs):
            kwargs["show"] = True
            super().__init__(total, desc, *args, **kwargs)

        def update(self, n: int = 1) -> None:
            super().update(n)
            seen.append(self.n)
            if on_first is not None and len(seen) == 1:
                on_first()

    monkeypatch.setattr(module, "Progress", Recorder)
    return seen


@native
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_the_bar_advances_during_the_native_loop(family, monkeypatch):
    module_name, make = FAMILIES[family]
    counts = _text_counts(4000, seed=4)
    seen = _record_bars(monkeypatch, module_name)
    model = make(2000).train_from_counts(counts)
    # many updates, during the loop, never moving back, ending where the loop ended
    assert len(seen) > 10, seen
    assert seen == sorted(seen) and seen[-1] > seen[len(seen) // 2] > 0
    monkeypatch.undo()
    assert model.to_dict() == make(2000, show=False).train_from_counts(counts).to_dict()


@native
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_the_watched_native_loop_learns_what_the_python_loop_learns(family):
    from tokenforge.trainers.spm_bpe import SentencePieceBPETrainer
    from tokenforge.trainers.wordpiece import WordPieceTrainer

    counts = _text_counts(1500, seed=5)
    if family == "wordpiece":
        native_model = WordPieceTrainer(600, special_tokens=["[UNK]"], show_progress=True, backend="native")
        python_model = WordPieceTrainer(600, special_tokens=["[UNK]"], show_progress=False, backend="python")
    else:
        native_model = SentencePieceBPETrainer(600, special_tokens=[], show_progress=True, backend="native")
        python_model = SentencePieceBPETrainer(600, special_tokens=[], show_progress=False, backend="python")
    assert native_model.train_from_counts(counts).to_dict() == python_model.train_from_counts(counts).to_dict()


@native
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_ctrl_c_stops_every_native_training_loop_quickly(family, monkeypatch):
    module_name, make = FAMILIES[family]
    counts = _text_counts(150_000, seed=3)  # many seconds of merging without the interrupt
    fired: list[float] = []

    def interrupt_soon() -> None:
        def interrupt() -> None:
            fired.append(time.perf_counter())
            _thread.interrupt_main()  # what Ctrl-C does: the SIGINT handler's flag

        threading.Timer(0.3, interrupt).start()

    _record_bars(monkeypatch, module_name, on_first=interrupt_soon)
    with pytest.raises(KeyboardInterrupt):
        make(10**6).train_from_counts(counts)
    stopped = time.perf_counter()
    assert fired, "the loop ended before the interrupt"
    assert stopped - fired[0] < 1.0


@native
@pytest.mark.parametrize("fn", ["wordpiece_learn", "spm_bpe_learn"])
def test_the_core_refuses_a_progress_that_is_not_callable(fn):
    core = _native.core("native")
    args = {
        "wordpiece_learn": ([b"a", b"##a"], [], [], [1, 1], 2, 10, 0, [], 5),
        "spm_bpe_learn": ([], [], [97], [0], [0], [], 10, 16, False, True, True, 5),
    }[fn]
    with pytest.raises(TypeError, match="progress must be a callable"):
        getattr(core, fn)(*args)

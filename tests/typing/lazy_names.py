"""The names ``tokenforge`` binds on first use (``tokenforge.load``, ``tokenforge.Tokenizer``,
...), used as a user writes them; type-checked with ``mypy --strict`` by test_mypy.py.

A type checker sees these names only if ``tokenforge/__init__.py`` imports them under
``if TYPE_CHECKING:``; without that, each one is the ``object`` that the module's
``__getattr__`` returns.
"""

from __future__ import annotations

from pathlib import Path

import tokenforge


def lazy_names(directory: Path, corpus: Path) -> None:
    tok: tokenforge.Tokenizer = tokenforge.get_encoding("gpt2")
    tok.save(str(directory / "gpt2.tokenforge.json"))
    loaded: tokenforge.Tokenizer = tokenforge.load(directory / "gpt2.tokenforge.json")
    ids: list[int] = loaded.encode("hello")
    trainer = tokenforge.BPETrainer(vocab_size=300, show_progress=False)
    trained: tokenforge.Tokenizer = trainer.train_from_iterator(["the cat in the hat"])
    report: tokenforge.TrainReport | None = trainer.last_report
    bpe: tokenforge.Tokenizer = tokenforge.train_bpe(corpus, 300, show_progress=False)
    tokens: int = tokenforge.count([corpus], "gpt2", show_progress=False).total.tokens
    added = tokenforge.AddedToken("<|mine|>", 50257, special=True)
    special: bool = added.special
    decoder: tokenforge.StreamDecoder = tok.stream_decoder()
    text: str = decoder.step(ids[0]) + decoder.finish()
    splitter = tokenforge.RegexSplit(tokenforge.PATTERNS["gpt2"])
    pieces: list[str] = splitter.split("hello world")
    model_names: list[str] = [tokenforge.BPE.__name__, tokenforge.PieceBPE.__name__,
                              tokenforge.Unigram.__name__, tokenforge.WordPiece.__name__]
    engine: str = tokenforge.backend()
    if engine == "never":  # type-checked, not run
        tokenforge.serve({"gpt2": tok}, port=0, open_browser=False)
    print(ids, trained, report, bpe, tokens, special, text, pieces, model_names, engine)

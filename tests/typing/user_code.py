"""Code a user of tokenforge writes, type-checked with ``mypy --strict`` by test_mypy.py.

It is not collected by pytest (its name does not start with ``test_``); it only has to
type-check (it also runs: ``python tests/typing/user_code.py``). Assignments are annotated
with the type a user expects, so a wrong annotation in the library shows up here; the
small functions that return a library result show up one typed ``Any`` (``--strict``
has ``--warn-return-any``), which an annotated assignment would accept silently.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

import tokenforge
import tokenforge.compat.tiktoken as tiktoken
from tokenforge.encoding import Encoding
from tokenforge.errors import SpecialTokenError, TokenforgeError
from tokenforge.io import load
from tokenforge.prepare import CountReport, Tokens, count, open_tokens, prepare
from tokenforge.tokenizer import Tokenizer
from tokenforge.trainers.bpe import BPETrainer, TrainReport, train_bpe


# -- each returns a library result as is: an ``Any`` there is an error here ------------
def token_ids(enc: Tokenizer, text: str) -> list[int]:
    return enc.encode(text)


def token_id_batches(enc: Tokenizer, texts: list[str]) -> list[list[int]]:
    return enc.encode_batch(texts)


def text_of(enc: Tokenizer, ids: list[int]) -> str:
    return enc.decode(ids)


def texts_of(enc: Tokenizer, batch: list[list[int]]) -> list[str]:
    return enc.decode_batch(batch)


def id_of(enc: Tokenizer, token: str) -> int:
    return enc.token_to_id(token)


def token_of(enc: Tokenizer, token_id: int) -> str:
    return enc.id_to_token(token_id)


def as_array(enc: Tokenizer, text: str) -> npt.NDArray[np.uint32]:
    return enc.encode_to_numpy(text)


def as_small_array(enc: Tokenizer, text: str) -> npt.NDArray[np.uint16]:
    return enc.encode_to_numpy(text, dtype="uint16")


def as_flat_arrays(enc: Tokenizer, texts: list[str]) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.int64]]:
    return enc.encode_batch_to_numpy(texts)


def full_encoding(enc: Tokenizer, text: str) -> Encoding:
    return enc.encode_full(text)


def full_encodings_of(enc: Tokenizer, texts: list[str]) -> list[Encoding]:
    return enc.encode_batch_full(texts)


def named(name: str) -> Tokenizer:
    return tokenforge.get_encoding(name)


def from_file(path: Path) -> Tokenizer:
    return load(path)


def round_trip(enc: Tokenizer) -> Tokenizer:
    return Tokenizer.from_dict(enc.to_dict())


def tiktoken_named(name: str) -> tiktoken.Encoding:
    return tiktoken.get_encoding(name)


def tiktoken_for_model(model: str) -> tiktoken.Encoding:
    return tiktoken.encoding_for_model(model)


def trained(texts: list[str]) -> Tokenizer:
    return BPETrainer(vocab_size=300, show_progress=False).train_from_iterator(texts)


def trained_bpe(corpus: Path) -> Tokenizer:
    return train_bpe(corpus, 300, show_progress=False)


def trained_wordpiece(texts: list[str]) -> Tokenizer:
    return tokenforge.train_wordpiece(iterator=texts, vocab_size=100, show_progress=False)


def trained_unigram(texts: list[str]) -> Tokenizer:
    return tokenforge.train_unigram(iterator=texts, vocab_size=300, show_progress=False)


def counted(corpus: Path) -> CountReport:
    return count([corpus], "gpt2", show_progress=False)


def opened(directory: Path) -> Tokens:
    return open_tokens(directory)


def document(toks: Tokens, i: int) -> npt.NDArray[np.unsignedinteger[Any]]:
    return toks.doc(i)


def windows(toks: Tokens) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    return toks.batch(4, 8, rng=0)


# -- code as a user writes it ---------------------------------------------------------
def encode_and_decode() -> None:
    enc: Tokenizer = tokenforge.get_encoding("gpt2")
    ids: list[int] = enc.encode("hello world")
    ids = enc.encode("hi <|endoftext|>", allowed_special="all")
    ids = enc.encode("hi <|endoftext|>", allowed_special={"<|endoftext|>"}, disallowed_special=())
    ids = enc.encode_ordinary("<|endoftext|>")
    batch: list[list[int]] = enc.encode_batch(["a", "b"], num_threads=2)
    batch = enc.encode_ordinary_batch(["a", "b"])
    text: str = enc.decode(ids)
    text = enc.decode(ids, errors="strict", skip_special_tokens=True)
    texts: list[str] = enc.decode_batch(batch)
    raw: bytes = enc.decode_bytes(ids)
    piece: bytes = enc.decode_single_token_bytes(ids[0])
    n: int = enc.n_vocab
    top: int = enc.max_token_value
    eot: int | None = enc.eot_token
    specials: Mapping[str, int] = enc.special_tokens
    special_set: frozenset[str] = enc.special_tokens_set
    tid: int = enc.token_to_id("hello")
    tok: str = enc.id_to_token(tid)
    single: int = enc.encode_single_token(b"hello")
    vocab: dict[str, int] = enc.get_vocab()
    name: str | None = enc.name
    stream: Iterator[int] = enc.encode_iterable(["hello ", "world"])
    stable, completions = enc.encode_with_unstable("hello fanta")
    first_completion: list[int] = completions[0] if completions else stable
    decoded_parts: Iterator[str] = enc.decode_stream(ids)
    decoded, offsets = enc.decode_with_offsets(ids)
    offset0: int = offsets[0]
    print(text, texts, raw, piece, n, top, eot, specials, special_set, tok, single, vocab, name,
          list(stream), first_completion, list(decoded_parts), decoded, offset0)


def numpy_output() -> None:
    enc = tokenforge.get_encoding("cl100k_base")
    arr: npt.NDArray[np.uint32] = enc.encode_to_numpy("hello world")
    small: npt.NDArray[np.uint32] | npt.NDArray[np.uint16] = tokenforge.get_encoding("gpt2").encode_to_numpy("hello", dtype="uint16")
    flat, offsets = enc.encode_batch_to_numpy(["hello", "hello world"])
    ids32: npt.NDArray[np.uint32] = flat
    starts: npt.NDArray[np.int64] = offsets
    second: list[int] = ids32[starts[1]:starts[2]].tolist()
    total: int = int(arr.sum()) + int(small.sum())
    # numpy arrays are accepted back where ids are
    text: str = enc.decode(arr.tolist())
    print(second, total, text)


def full_encodings() -> None:
    enc = tokenforge.get_encoding("gpt2")
    full: Encoding = enc.encode_full("Hello world")
    tokens: list[str] = full.tokens
    spans: list[tuple[int, int]] = full.offsets
    many: list[Encoding] = enc.encode_batch_full(["a b", ("question", "answer")])
    masks: list[list[int]] = [e.attention_mask for e in many]
    padded: Tokenizer = enc.with_padding(length=8).with_truncation(8)
    print(tokens, spans, masks, padded.encode("x"))


def save_and_load(directory: Path) -> Tokenizer:
    enc = tokenforge.get_encoding("gpt2")
    enc.save(str(directory / "gpt2.tokenforge.json"))
    loaded: Tokenizer = load(directory / "gpt2.tokenforge.json")
    loaded = load(str(directory / "gpt2.tokenforge.json"), name="mine")
    data: dict[str, object] = loaded.to_dict()
    again: Tokenizer = Tokenizer.from_dict(loaded.to_dict())
    same: bool = again == loaded
    names: list[str] = tokenforge.list_encodings()
    model_enc: Tokenizer = tokenforge.encoding_for_model("gpt-4o")
    model_name: str = tokenforge.encoding_name_for_model("gpt-4o")
    print(data.keys(), same, names, model_enc, model_name)
    return again


def tiktoken_drop_in() -> None:
    enc: tiktoken.Encoding = tiktoken.get_encoding("cl100k_base")
    ids: list[int] = enc.encode("hello <|endoftext|>", allowed_special="all")
    other: tiktoken.Encoding = tiktoken.encoding_for_model("gpt-4o")
    name: str = tiktoken.encoding_name_for_model("gpt-4")
    custom = tiktoken.Encoding(
        "cl100k_im",
        pat_str=enc._pat_str or "",
        mergeable_ranks=enc._mergeable_ranks,
        special_tokens={**enc._special_tokens, "<|im_start|>": 100264},
    )
    as_tokenizer: Tokenizer = custom
    names: list[str] = tiktoken.list_encoding_names()
    print(ids, other.name, name, as_tokenizer, names)


def training(corpus: Path) -> None:
    texts = ["the cat in the hat", "the cat sat"]
    trainer = BPETrainer(vocab_size=300, special_tokens=["<|endoftext|>"], pattern="gpt2", show_progress=False)
    tok: Tokenizer = trainer.train_from_iterator(texts)
    tok = trainer.train([corpus])
    report: TrainReport | None = trainer.last_report
    if report is not None:
        merges: int = report.merges_learned
        seconds: float = report.seconds
        print(merges, seconds)
    bpe: Tokenizer = train_bpe(corpus, 300, show_progress=False)
    wp: Tokenizer = tokenforge.train_wordpiece(iterator=iter(texts), vocab_size=100, show_progress=False)
    uni: Tokenizer = tokenforge.train_unigram(iterator=iter(texts), vocab_size=300, show_progress=False)
    spm: Tokenizer = tokenforge.train_sentencepiece_bpe(iterator=iter(texts), vocab_size=300, show_progress=False)
    print(tok, bpe, wp, uni, spm)


def corpus_tools(corpus: Path, out_dir: Path) -> None:
    report: CountReport = count([corpus], "gpt2", show_progress=False)
    n_tokens: int = report.total.tokens
    index: dict[str, object] = prepare([corpus], "gpt2", out_dir, show_progress=False)
    toks: Tokens = open_tokens(out_dir)
    docs: int = len(toks)
    first: list[int] = toks.doc(0).tolist()
    print(n_tokens, index, docs, first)


def errors() -> None:
    enc = tokenforge.get_encoding("gpt2")
    try:
        enc.encode("<|endoftext|>")
    except SpecialTokenError as exc:
        message: str = str(exc)
        print(message)
    except TokenforgeError:
        raise


def main() -> None:
    with tempfile.TemporaryDirectory() as d:
        directory = Path(d)
        corpus = directory / "corpus.txt"
        corpus.write_text("the cat in the hat\n" * 50, encoding="utf-8")
        encode_and_decode()
        numpy_output()
        full_encodings()
        save_and_load(directory)
        tiktoken_drop_in()
        training(corpus)
        corpus_tools(corpus, directory / "prepared")
        errors()
        helpers(directory, corpus)


def helpers(directory: Path, corpus: Path) -> None:
    enc = named("gpt2")
    ids = token_ids(enc, "hello world")
    print(token_id_batches(enc, ["a"]), text_of(enc, ids), texts_of(enc, [ids]), token_of(enc, id_of(enc, "hello")))
    print(as_array(enc, "a"), as_small_array(enc, "a"), as_flat_arrays(enc, ["a", "b"]))
    print(full_encoding(enc, "a"), full_encodings_of(enc, ["a"]), round_trip(enc))
    print(from_file(directory / "gpt2.tokenforge.json"), tiktoken_named("gpt2"), tiktoken_for_model("gpt-4o"))
    texts = ["the cat in the hat", "the cat sat"]
    print(trained(texts), trained_bpe(corpus), trained_wordpiece(texts), trained_unigram(texts))
    toks = opened(directory / "prepared")
    print(counted(corpus).total.tokens, document(toks, 0), windows(toks)[0].shape)


if __name__ == "__main__":
    main()

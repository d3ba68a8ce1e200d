"""The documented limits (``tokenforge.limits``): each is checked where the input enters,
before the work it would cost, with an error naming the file or token id and the limit."""

from __future__ import annotations

import base64
import os
import threading

import pytest

import tokenforge
from tokenforge import FileFormatError, limits
from tokenforge.models import BPE, PieceBPE, Unigram, WordLevel, WordPiece

_FORMATS = ["tokenforge", "hf", "tiktoken", "gpt2", "bert_vocab", "sentencepiece"]


def _saved(tmp_path, tok, fmt):
    path = tmp_path / {"tokenforge": "t.json", "hf": "tokenizer.json", "tiktoken": "t.tiktoken",
                       "gpt2": "gpt2", "bert_vocab": "vocab.txt", "sentencepiece": "t.model"}[fmt]
    tok.save(str(path), format=fmt)
    return path


@pytest.fixture(scope="module")
def family_tokenizers():
    text = ["hello world, the quick brown fox", "jumps over the lazy dog 123"] * 20
    return {
        "tokenforge": tokenforge.BPETrainer(vocab_size=300).train_from_iterator(text),
        "hf": tokenforge.BPETrainer(vocab_size=300).train_from_iterator(text),
        "tiktoken": tokenforge.BPETrainer(vocab_size=300).train_from_iterator(text),
        "gpt2": tokenforge.BPETrainer(vocab_size=300).train_from_iterator(text),
        "bert_vocab": tokenforge.train_wordpiece(iterator=text, vocab_size=120, show_progress=False),
        "sentencepiece": tokenforge.train_unigram(iterator=text, vocab_size=60, show_progress=False),
    }


@pytest.mark.parametrize("fmt", _FORMATS)
def test_a_file_over_the_size_limit_is_refused_before_reading(tmp_path, monkeypatch, family_tokenizers, fmt):
    path = _saved(tmp_path, family_tokenizers[fmt], fmt)
    kw = {"pattern": "gpt2"} if fmt == "tiktoken" else {}
    assert tokenforge.load(path, **kw).encode("hello world") == family_tokenizers[fmt].encode("hello world")
    biggest = path / "vocab.json" if path.is_dir() else path
    monkeypatch.setattr(limits, "MAX_FILE_BYTES", biggest.stat().st_size - 1)
    with pytest.raises(FileFormatError) as info:
        tokenforge.load(path, **kw)
    message = str(info.value)
    assert str(path) in message and "tokenforge.limits.MAX_FILE_BYTES" in message
    assert f"{biggest.stat().st_size:,} bytes" in message


def test_a_pipe_is_read_up_to_the_limit_then_refused(tmp_path, monkeypatch):
    from tokenforge._io import read_bytes

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    monkeypatch.setattr(limits, "MAX_FILE_BYTES", 3 << 20)
    written = []

    def writer():
        try:
            with open(fifo, "wb") as f:
                for _ in range(64):  # 64 MiB if nobody stopped reading
                    f.write(b"x" * (1 << 20))
                    written.append(1)
        except BrokenPipeError:
            pass

    t = threading.Thread(target=writer)
    t.start()
    with pytest.raises(FileFormatError, match="largest tokenizer file tokenforge reads is 3,145,728 bytes"):
        read_bytes(fifo)
    t.join(timeout=30)
    assert not t.is_alive() and len(written) < 64


def test_a_pipe_under_the_limit_reads_whole(tmp_path):
    from tokenforge._io import read_bytes

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    data = os.urandom(3 << 20)

    def writer():
        with open(fifo, "wb") as f:
            f.write(data)

    t = threading.Thread(target=writer)
    t.start()
    assert read_bytes(fifo) == data
    t.join(timeout=30)


_BYTES = {i: bytes([i]) for i in range(256)}


@pytest.mark.parametrize("build", [
    lambda big: BPE({**_BYTES, 256: big}),
    lambda big: BPE.from_ranks({v: k for k, v in {**_BYTES, 256: big}.items()}),
    lambda big: PieceBPE({"a": 0, big.decode(): 1}),
    lambda big: WordPiece({"[UNK]": 0, big.decode(): 1}),
    lambda big: WordLevel({"[UNK]": 0, big.decode(): 1}),
    lambda big: Unigram([("<unk>", 0.0), (big.decode(), -1.0)]),
], ids=["bpe", "bpe-ranks", "piece-bpe", "wordpiece", "wordlevel", "unigram"])
def test_a_token_over_the_limit_is_refused_naming_its_id(build):
    at_limit = b"ab" * (limits.MAX_TOKEN_BYTES // 2)
    assert build(at_limit) is not None
    with pytest.raises(FileFormatError) as info:
        build(at_limit + b"c")
    assert str(info.value) == (
        f"token id {256 if isinstance(build(b'x'), BPE) else 1} is {limits.MAX_TOKEN_BYTES + 1:,} bytes long; "
        f"the longest token tokenforge accepts is {limits.MAX_TOKEN_BYTES:,} bytes (tokenforge.limits.MAX_TOKEN_BYTES)"
    )


def test_text_tokens_are_measured_in_utf8_bytes():
    four = "\U0001F600" * (limits.MAX_TOKEN_BYTES // 4)  # exactly the limit in UTF-8
    assert WordLevel({"[UNK]": 0, four: 1}).vocab_size == 2
    with pytest.raises(FileFormatError, match="token id 1 is 1,048,578 bytes long"):
        WordLevel({"[UNK]": 0, four + "é": 1})


def test_a_rank_file_with_a_token_over_the_limit_names_the_file(tmp_path):
    lines = [base64.b64encode(bytes([i])) + b" %d" % i for i in range(256)]
    lines.append(base64.b64encode(b"x" * (limits.MAX_TOKEN_BYTES + 1)) + b" 256")
    path = tmp_path / "big.tiktoken"
    path.write_bytes(b"\n".join(lines) + b"\n")
    with pytest.raises(FileFormatError) as info:
        tokenforge.load(path, pattern="cl100k")
    assert str(info.value).startswith(f"{path}") and "token id 256 is 1,048,577 bytes long" in str(info.value)


def test_a_vocab_txt_line_over_the_limit_names_the_file(tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\na\n" + "b" * (limits.MAX_TOKEN_BYTES + 1) + "\n")
    with pytest.raises(FileFormatError) as info:
        tokenforge.load(path)
    assert str(info.value).startswith(f"{path}") and "token id 6 is 1,048,577 bytes long" in str(info.value)


def test_the_json_depth_limit_is_the_documented_one(tmp_path):
    path = tmp_path / "tokenizer.json"
    path.write_text('{"model": ' + "[" * (limits.MAX_JSON_DEPTH + 10) + "]" * (limits.MAX_JSON_DEPTH + 10) + "}")
    with pytest.raises(FileFormatError, match="nested too deeply"):
        tokenforge.load(path)


def test_vocab_size_limit_is_shared_by_trainers_and_models():
    from tokenforge import trainers
    from tokenforge.models import bpe, wordpiece

    assert trainers.MAX_VOCAB_SIZE == bpe.MAX_ID == wordpiece.MAX_ID == limits.MAX_VOCAB_SIZE == 2**32 - 1
    with pytest.raises(FileFormatError, match="0..4294967294"):
        BPE({**_BYTES, 2**32 - 1: b"ab"})

"""tokenforge.compat.cs336: the CS336 assignment-1 interface."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from _tiktoken_ref import reference

from tokenforge.compat import cs336


@pytest.fixture(scope="module")
def gpt2_files(shared_data):
    root = shared_data / "vocab" / "gpt2"
    return root / "vocab.json", root / "merges.txt"


def test_train_bpe_returns_vocab_and_merges_in_assignment_order(shared_data):
    vocab, merges = cs336.train_bpe(shared_data / "text" / "corpus.en", 500, ["<|endoftext|>"])
    assert [vocab[i] for i in range(256)] == [bytes([i]) for i in range(256)]
    assert vocab[256] == b"<|endoftext|>"
    assert [vocab[257 + k] for k in range(len(merges))] == [a + b for a, b in merges]
    assert len(vocab) == 500


def test_from_files_matches_tiktoken_gpt2(gpt2_files, shared_data):
    tok = cs336.Tokenizer.from_files(*gpt2_files, special_tokens=["<|endoftext|>"])
    ref = reference("gpt2")
    for name in ["corpus.en", "german.txt", "address.txt", "tinystories_sample.txt"]:
        text = (shared_data / "text" / name).read_text(encoding="utf-8")
        ids = tok.encode(text)
        assert ids == ref.encode(text, allowed_special={"<|endoftext|>"})
        assert tok.decode(ids) == text


def test_overlapping_specials_longest_first(gpt2_files):
    tok = cs336.Tokenizer.from_files(*gpt2_files, special_tokens=["<|endoftext|>", "<|endoftext|><|endoftext|>"])
    ids = tok.encode("Hello, how <|endoftext|><|endoftext|> are you?<|endoftext|>")
    tokens = [tok.decode([i]) for i in ids]
    assert tokens.count("<|endoftext|><|endoftext|>") == 1
    assert tokens.count("<|endoftext|>") == 1
    assert "".join(tokens) == "Hello, how <|endoftext|><|endoftext|> are you?<|endoftext|>"


def test_no_special_tokens_means_special_strings_are_text(gpt2_files):
    tok = cs336.Tokenizer.from_files(*gpt2_files)
    assert tok.encode("<|endoftext|>") == reference("gpt2").encode_ordinary("<|endoftext|>")


def test_encode_iterable_matches_encode(gpt2_files, shared_data):
    tok = cs336.Tokenizer.from_files(*gpt2_files, special_tokens=["<|endoftext|>"])
    path = shared_data / "text" / "tinystories_sample.txt"
    with open(path, encoding="utf-8") as f:
        streamed = list(tok.encode_iterable(f))
    assert streamed == tok.encode(path.read_text(encoding="utf-8"))


def test_round_trip_of_trained_vocab(shared_data):
    vocab, merges = cs336.train_bpe(shared_data / "text" / "tinystories_sample.txt", 300, ["<|endoftext|>"])
    tok = cs336.Tokenizer(vocab, merges, ["<|endoftext|>"])
    text = "Once upon a time<|endoftext|> there was 🙂 a 中文 cat."
    assert tok.decode(tok.encode(text)) == text
    assert tok.encode("<|endoftext|>") == [256]


@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_AS is enforced on Linux")
def test_encode_iterable_runs_under_rss_plus_1mb_address_space_limit(gpt2_files, tmp_path, shared_data):
    # The assignment's memory test: limit the address space to current RSS + 1 MB, then stream 5 MB.
    src = (shared_data / "text" / "tinystories_valid_sample.txt").read_text(encoding="utf-8")
    big = tmp_path / "five_mb.txt"
    with open(big, "w", encoding="utf-8") as f:
        written = 0
        while written < 5_000_000:
            f.write(src)
            written += len(src)
    script = textwrap.dedent(
        f"""
        import resource, sys
        from tokenforge.compat import cs336
        tok = cs336.Tokenizer.from_files({str(gpt2_files[0])!r}, {str(gpt2_files[1])!r}, ["<|endoftext|>"])
        # warm up: compile regexes, and let the native core build its one-time vocabulary
        # index (a trie used for long pieces) before the limit is set
        list(tok.encode_iterable(open({str(big)!r}, encoding="utf-8").readlines()[:50]))
        tok.encode("x" * 70_000)  # one huge piece builds the index at once
        def rss():
            with open("/proc/self/statm") as f:
                return int(f.read().split()[1]) * resource.getpagesize()
        def vsz():
            with open("/proc/self/statm") as f:
                return int(f.read().split()[0]) * resource.getpagesize()
        limit = rss() + 1_000_000
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        try:
            bytearray(50_000_000)
        except MemoryError:
            pass
        else:
            sys.exit("the address-space limit is not enforced")
        n = 0
        with open({str(big)!r}, encoding="utf-8") as f:
            for _ in tok.encode_iterable(f):
                n += 1
        print(n)
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    assert int(out.stdout.strip()) > 1_000_000

"""GGUF files: the hand-written header reader, the tokenizer each
``tokenizer.ggml.model`` gives, and ids against the reference libraries.

What each differential test proves (shared data, ``shared/data/vocab/gguf``):

* gpt-2: ids equal HF tokenizers on the real GPT-2 ``tokenizer.json``
  (an independent file: the test checks the GGUF vocab and merges are the
  same), tiktoken on ``r50k_base.tiktoken`` with the published GPT-2 pattern,
  and ``tokenforge.get_encoding("gpt2")``.
* bert-bge: the GGUF vocabulary, with llama.cpp's phantom-space spelling
  undone, is exactly bert-base-uncased's ``vocab.txt``; ids equal HF
  tokenizers on the real bert-base-uncased ``tokenizer.json``.
* llama-spm (the Llama 1/2 vocabulary; ``mistral_v1_tokenizer.model`` in the
  shared data is a different vocabulary, which the test checks): there is no
  original ``tokenizer.model`` here, so the reference is the ``sentencepiece``
  library on a ``.model`` holding the GGUF's tokens, scores and types with
  Llama 2's normalizer settings (identity, dummy prefix, no whitespace
  clean-up, byte fallback) — this proves the GGUF → pipeline mapping equals
  SentencePiece's algorithm on that vocabulary, not that the GGUF matches the
  original file. A second reference is HF tokenizers' BPE built the way HF's
  LlamaConverter builds it (merges from scores, byte fallback, Prepend +
  Replace normalizer).
* starcoder and falcon: no HF ``tokenizer.json`` here either; the reference is
  HF tokenizers' BPE over the GGUF's own tokens and merges, with the
  pre-tokenizer of the original model's ``tokenizer.json``: StarCoder's
  ``Digits(individual_digits=True)`` + ``ByteLevel``, and Falcon's
  ``Punctuation`` + ``ByteLevel`` + ``Digits`` + ``Split("[0-9][0-9][0-9]")``.
  This proves the split rules, merge semantics and special tokens, given
  the GGUF's vocabulary.

Texts: every file of ``shared/data/text`` line by line (the first lines of
each, for speed), and adversarial strings.
"""

from __future__ import annotations

import math
import random
import struct
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tokenforge
from tokenforge import bytelevel
from tokenforge.errors import FileFormatError, TokenizerFileNotFoundError
from tokenforge.formats.gguf import PRE_TOKENIZERS, GGUFHeader, ValueType, read_gguf_header, write_gguf_bytes
from tokenforge.gguf import load_gguf, tokenizer_from_gguf
from tokenforge import Tokenizer

V = ValueType

# -- small GGUF files made here ----------------------------------------------------


def _types_of(h: GGUFHeader) -> dict:
    return dict(h.types)


def _rewrite(h: GGUFHeader, **changes) -> bytes:
    """The file of ``h`` with keys changed (``None`` deletes), types preserved."""
    meta = dict(h.metadata)
    types = _types_of(h)
    for key, value in changes.items():
        key = key.replace("__", ".")
        if value is None:
            meta.pop(key, None)
            types.pop(key, None)
        else:
            if isinstance(value, tuple):
                value, types[key] = value
            meta[key] = value
    return write_gguf_bytes(meta, types, version=h.version, tensor_count=h.tensor_count)


def _gguf(meta: dict) -> bytes:
    """write_gguf_bytes, with ``(value, type)`` pairs giving a value its GGUF type."""
    values, types = {}, {}
    for k, v in meta.items():
        if isinstance(v, tuple):
            v, types[k] = v
        values[k] = v
    return write_gguf_bytes(values, types)


def _byte_vocab() -> list[str]:
    table = bytelevel.bytes_to_unicode()
    return [table[b] for b in range(256)]


def tiny_bpe(pre: str = "gpt-2", **extra) -> bytes:
    """A byte-level vocab: 256 bytes, a few merges, <|endoftext|> as CONTROL."""
    tokens = _byte_vocab() + ["Ġt", "he", "Ġthe", "in", "Ġa", "12", "<|endoftext|>"]
    merges = ["Ġ t", "h e", "Ġt he", "i n", "Ġ a", "1 2"]
    meta = {
        "general.architecture": "gpt2",
        "tokenizer.ggml.model": "gpt2",
        "tokenizer.ggml.pre": pre,
        "tokenizer.ggml.tokens": tokens,
        "tokenizer.ggml.token_type": [1] * (len(tokens) - 1) + [3],
        "tokenizer.ggml.merges": merges,
        "tokenizer.ggml.bos_token_id": len(tokens) - 1,
        "tokenizer.ggml.eos_token_id": len(tokens) - 1,
    }
    types = {
        "tokenizer.ggml.token_type": (V.ARRAY, V.INT32),
        "tokenizer.ggml.bos_token_id": V.UINT32,
        "tokenizer.ggml.eos_token_id": V.UINT32,
    }
    for k, v in extra.items():
        k = k.replace("__", ".")
        if isinstance(v, tuple):
            v, types[k] = v
        meta[k] = v
    return write_gguf_bytes(meta, types)


ALL_TYPES_META = {
    "u8": (200, V.UINT8), "i8": (-100, V.INT8), "u16": (60000, V.UINT16), "i16": (-30000, V.INT16),
    "u32": (4_000_000_000, V.UINT32), "i32": (-2_000_000_000, V.INT32), "f32": (0.1, V.FLOAT32),
    "b": (True, V.BOOL), "s": ("héllo ▁ 你好", V.STRING), "u64": (2**64 - 1, V.UINT64), "i64": (-(2**63), V.INT64),
    "f64": (math.pi, V.FLOAT64),
    "strs": (["a", "", "ĠΩ"], (V.ARRAY, V.STRING)),
    "f32s": ([0.5, -1.25, 3.0], (V.ARRAY, V.FLOAT32)),
    "bools": ([True, False, True], (V.ARRAY, V.BOOL)),
    "nested": ([[1, 2], [3]], (V.ARRAY, V.ARRAY, V.INT16)),
    "empty": ([], (V.ARRAY, V.UINT8)),
}


def _all_types_file() -> bytes:
    return write_gguf_bytes({k: v for k, (v, _) in ALL_TYPES_META.items()},
                            {k: t for k, (_, t) in ALL_TYPES_META.items()})


# -- the reader --------------------------------------------------------------------


def test_every_value_type_round_trips():
    h = read_gguf_header(_all_types_file())
    assert h.version == 3 and h.tensor_count == 0 and len(h) == len(ALL_TYPES_META)
    assert list(h) == list(ALL_TYPES_META)
    for key, (value, t) in ALL_TYPES_META.items():
        if key == "f32":
            assert h[key] == struct.unpack("<f", struct.pack("<f", 0.1))[0]
        else:
            assert h[key] == value, key
        if isinstance(t, tuple):
            assert h.types[key] == (V.ARRAY, t[1])
        else:
            assert h.types[key] == t
    assert h["b"] is True and h["bools"] == [True, False, True]
    assert h.metadata_end == len(_all_types_file())


def test_version_2_is_read_and_path_is_kept(tmp_path):
    p = tmp_path / "v2.gguf"
    p.write_bytes(write_gguf_bytes({"a": "x"}, version=2, tensor_count=7))
    h = read_gguf_header(p)
    assert (h.version, h.tensor_count, h["a"], h.path) == (2, 7, "x", str(p))


def test_reading_stops_after_the_metadata(tmp_path):
    # tensor infos and data follow the metadata in a model file; they are not read
    p = tmp_path / "model.gguf"
    body = write_gguf_bytes({"general.name": "m"}, tensor_count=1)
    p.write_bytes(body + b"\xff" * 4096)
    h = read_gguf_header(p)
    assert h.metadata_end == len(body) and h["general.name"] == "m"


GGUF_FILES = {
    # file: (metadata count, tokenizer.ggml.model, pre, token count, merge count)
    "ggml-vocab-bert-bge.gguf": (20, "bert", "bert-bge", 30522, None),
    "ggml-vocab-falcon.gguf": (18, "gpt2", "falcon", 65024, 64784),
    "ggml-vocab-gpt-2.gguf": (16, "gpt2", "gpt-2", 50257, 50000),
    "ggml-vocab-llama-spm.gguf": (22, "llama", "default", 32000, None),
    "ggml-vocab-starcoder.gguf": (19, "gpt2", "starcoder", 49152, 48872),
}


@pytest.fixture(scope="module")
def gguf_dir(shared_data: Path) -> Path:
    d = shared_data / "vocab" / "gguf"
    if not d.is_dir():
        pytest.skip(f"{d} not found")
    return d


@pytest.mark.parametrize("fname", sorted(GGUF_FILES))
def test_reader_on_llama_cpp_vocab_files(gguf_dir, fname):
    kv, model, pre, n_tokens, n_merges = GGUF_FILES[fname]
    path = gguf_dir / fname
    h = read_gguf_header(path)
    assert h.version == 3 and h.tensor_count == 0 and len(h) == kv
    assert h.metadata_end == path.stat().st_size  # vocab-only: the file ends with the metadata
    assert h["tokenizer.ggml.model"] == model and h["tokenizer.ggml.pre"] == pre
    assert h.types["general.architecture"] == V.STRING
    assert h.types["tokenizer.ggml.tokens"] == (V.ARRAY, V.STRING)
    assert h.types["tokenizer.ggml.token_type"] == (V.ARRAY, V.INT32)
    assert len(h["tokenizer.ggml.tokens"]) == len(h["tokenizer.ggml.token_type"]) == n_tokens
    if n_merges is None:
        assert "tokenizer.ggml.merges" not in h
    else:
        assert h.types["tokenizer.ggml.merges"] == (V.ARRAY, V.STRING)
        assert len(h["tokenizer.ggml.merges"]) == n_merges
    if model == "llama":
        assert h.types["tokenizer.ggml.scores"] == (V.ARRAY, V.FLOAT32)
        assert h.types["tokenizer.ggml.add_bos_token"] == V.BOOL
        assert h["tokenizer.ggml.add_bos_token"] is True and h["tokenizer.ggml.add_eos_token"] is False
        assert h["tokenizer.ggml.tokens"][:3] == ["<unk>", "<s>", "</s>"]
    if model == "bert":
        assert h.types["bert.attention.layer_norm_epsilon"] == V.FLOAT32
        assert h.types["bert.attention.causal"] == V.BOOL and h["bert.attention.causal"] is False
        assert h["tokenizer.ggml.seperator_token_id"] == 102
    assert h.types["tokenizer.ggml.bos_token_id" if model != "bert" else "tokenizer.ggml.cls_token_id"] == V.UINT32


# -- damaged files ---------------------------------------------------------------------


def _err(data: bytes) -> str:
    with pytest.raises(FileFormatError) as info:
        read_gguf_header(data)
    return str(info.value)


def test_not_gguf_names_the_magic():
    assert "expected magic b'GGUF' at byte 0" in _err(b"GGML" + bytes(20))
    assert "expected magic" in _err(b"")
    assert "expected magic" in _err(b"GG")


def test_versions():
    good = write_gguf_bytes({"a": 1})
    assert "unsupported GGUF version 1" in _err(good[:4] + struct.pack("<I", 1) + good[8:])
    assert "unsupported GGUF version 4" in _err(good[:4] + struct.pack("<I", 4) + good[8:])
    assert "big-endian" in _err(good[:4] + struct.pack(">I", 3) + good[8:])


def _tokens_offsets(data: bytes) -> tuple[int, list[int]]:
    """(offset of the tokens array, offset of each token string) in a file from tiny_bpe()."""
    key = b"tokenizer.ggml.tokens"
    start = data.index(key) + len(key) + 4  # after the key and its value type
    at = start + 4 + 8  # element type, count
    (count,) = struct.unpack_from("<Q", data, start + 4)
    offsets = []
    for _ in range(count):
        offsets.append(at)
        (n,) = struct.unpack_from("<Q", data, at)
        at += 8 + n
    return start, offsets


def test_truncated_string_names_key_index_and_offset():
    data = tiny_bpe()
    assert len(read_gguf_header(data)["tokenizer.ggml.tokens"]) == 263
    start, offs = _tokens_offsets(data)
    # a string length larger than what is left
    at = offs[5]
    bad = data[:at] + struct.pack("<Q", 10**6) + data[at + 8 :]
    msg = _err(bad)
    assert f"truncated string at byte {at} in key tokenizer.ggml.tokens[5]: length 1000000" in msg
    assert msg.startswith("<bytes>: ")
    # cut inside the last string: the count still fits, the string does not
    last = offs[-1]
    assert f"truncated string at byte {last} in key tokenizer.ggml.tokens[262]" in _err(data[: last + 10])
    # cut early: the array cannot hold its announced count even at 8 bytes a string
    msg = _err(data[: offs[5] + 3])
    assert f"truncated array at byte {start} in key tokenizer.ggml.tokens: 263 string elements" in msg


def test_errors_name_the_file(tmp_path):
    p = tmp_path / "cut.gguf"
    data = tiny_bpe()
    p.write_bytes(data[: _tokens_offsets(data)[1][-1] + 10])
    with pytest.raises(FileFormatError, match=r"cut\.gguf: truncated string at byte \d+ in key tokenizer\.ggml\.tokens\[262\]"):
        read_gguf_header(p)
    with pytest.raises(FileFormatError, match="cut.gguf"):
        load_gguf(p)
    with pytest.raises(TokenizerFileNotFoundError):
        load_gguf(tmp_path / "missing.gguf")
    (tmp_path / "empty.gguf").write_bytes(b"")
    with pytest.raises(FileFormatError, match="empty.gguf: not a GGUF file"):
        load_gguf(tmp_path / "empty.gguf")


def test_bad_values():
    base = write_gguf_bytes({"k": 1}, {"k": V.UINT8})
    # header 24 bytes, key length 8, "k", value type at 33, value at 37
    assert "unknown value type 13 at byte 33 in key k" in _err(base[:33] + struct.pack("<I", 13) + base[37:])
    assert "bool at byte 37 in key k is 2, expected 0 or 1" in _err(
        write_gguf_bytes({"k": 2}, {"k": V.UINT8})[:33] + struct.pack("<I", V.BOOL) + bytes([2])
    )
    bad_utf8 = write_gguf_bytes({"k": "ab"})
    assert "is not valid UTF-8" in _err(bad_utf8.replace(b"ab", b"a\xff"))
    dup = write_gguf_bytes({"k": 1, "j": 2}).replace(b"\x01\x00\x00\x00\x00\x00\x00\x00j", b"\x01\x00\x00\x00\x00\x00\x00\x00k")
    assert "duplicate metadata key 'k'" in _err(dup)


def test_huge_counts_fail_at_once():
    # an array count of 2**60 must not allocate or loop: it is checked against the bytes left
    data = write_gguf_bytes({"xs": [1, 2, 3]}, {"xs": (V.ARRAY, V.UINT32)})
    count_at = len(data) - 12 - 8
    huge = data[:count_at] + struct.pack("<Q", 2**60) + data[count_at + 8 :]
    assert "truncated array at byte" in _err(huge) and "1152921504606846976 uint32 elements" in _err(huge)
    kv = data[:16] + struct.pack("<Q", 2**62) + data[24:]
    assert "key/value pairs announced" in _err(kv)
    strlen = data[:24] + struct.pack("<Q", 2**63) + data[32:]
    assert "truncated string at byte 24 in metadata key #0" in _err(strlen)


def test_nesting_is_bounded():
    # array of array of ... (each level: type ARRAY, count 1)
    levels = 100
    body = b"".join(struct.pack("<IQ", V.ARRAY, 1) for _ in range(levels)) + struct.pack("<IQ", V.UINT8, 0)
    data = b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + struct.pack("<Q", 1) + b"k" + struct.pack("<I", V.ARRAY) + body
    assert "nested more than 16 deep" in _err(data)


@settings(max_examples=300, deadline=2000, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_fuzz_truncations_and_bit_flips_raise_only_file_format_errors(data):
    base = bytearray(data.draw(st.sampled_from([_FUZZ_ALL, _FUZZ_BPE, _FUZZ_BERT, _FUZZ_SPM])))
    kind = data.draw(st.sampled_from(["cut", "flip", "both"]))
    if kind in ("flip", "both"):
        for _ in range(data.draw(st.integers(1, 4))):
            pos = data.draw(st.integers(0, len(base) - 1))
            base[pos] ^= 1 << data.draw(st.integers(0, 7))
    if kind in ("cut", "both"):
        base = base[: data.draw(st.integers(0, len(base)))]
    try:
        h = read_gguf_header(bytes(base))
    except FileFormatError:
        return
    try:
        tokenizer_from_gguf(h)
    except FileFormatError:
        pass


_FUZZ_ALL = _all_types_file()
_FUZZ_BPE = tiny_bpe()
_FUZZ_BERT = _gguf({
    "tokenizer.ggml.model": "bert",
    "tokenizer.ggml.tokens": ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "▁hello", "▁world", "s"],
    "tokenizer.ggml.token_type": ([3, 3, 3, 3, 3, 1, 1, 1], (V.ARRAY, V.INT32)),
    "tokenizer.ggml.unknown_token_id": (1, V.UINT32),
})
_SPM_TOKENS = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)] + ["▁", "a", "b", "▁a", "ab", "▁ab"]
_FUZZ_SPM = _gguf({
    "tokenizer.ggml.model": "llama",
    "tokenizer.ggml.tokens": _SPM_TOKENS,
    "tokenizer.ggml.scores": ([0.0] * 259 + [-1.0, -2.0, -3.0, -4.0, -5.0, -6.0], (V.ARRAY, V.FLOAT32)),
    "tokenizer.ggml.token_type": ([2, 3, 3] + [6] * 256 + [1] * 6, (V.ARRAY, V.INT32)),
    "tokenizer.ggml.bos_token_id": (1, V.UINT32),
    "tokenizer.ggml.eos_token_id": (2, V.UINT32),
})


# -- mapping metadata to a tokenizer --------------------------------------------------------


def test_tiny_byte_level_vocab_is_a_fast_tokenizer():
    tok = load_gguf(tiny_bpe())
    assert isinstance(tok, tokenforge.Tokenizer)
    ids = tok.encode("the 12 in", allowed_special="all")
    assert tok.decode(ids) == "the 12 in"
    assert tok.encode(" the") == [258]  # Ġthe (256 bytes, then Ġt=256, he=257, Ġthe=258)
    assert tok.special_tokens == {"<|endoftext|>": 262}
    assert tok.encode("<|endoftext|>", allowed_special="all") == [262]


def test_add_bos_makes_a_pipeline_with_the_same_ids():
    fast = load_gguf(tiny_bpe())
    slow = load_gguf(tiny_bpe(tokenizer__ggml__add_bos_token=True))
    assert isinstance(slow, Tokenizer)
    for text in ["the 12 in", "  a the\n\nthe", "ünïcödé 1234", ""]:
        assert slow.encode(text) == [262] + fast.encode(text)
        assert slow.encode(text, add_special_tokens=False) == fast.encode(text)
        assert slow.decode(slow.encode(text), skip_special_tokens=True) == text


def test_user_defined_tokens_are_always_matched():
    tokens = _byte_vocab() + ["<tool>"]
    data = _gguf({
        "tokenizer.ggml.model": "gpt2", "tokenizer.ggml.pre": "gpt-2", "tokenizer.ggml.tokens": tokens,
        "tokenizer.ggml.token_type": ([1] * 256 + [4], (V.ARRAY, V.INT32)), "tokenizer.ggml.merges": [],
    })
    tok = load_gguf(data)
    assert isinstance(tok, Tokenizer)
    assert tok.encode("a<tool>b") == [ord("a"), 256, ord("b")]


@pytest.mark.parametrize("pre", sorted(PRE_TOKENIZERS))
def test_every_known_pre_tokenizer_name_builds(pre):
    tok = load_gguf(tiny_bpe(pre))
    text = "Hello, World! It's 2024-05-01 — ünïcödé 你好 ١٢٣ \t\n  the end  "
    ids = tok.encode(text, allowed_special="all") if isinstance(tok, tokenforge.Tokenizer) else tok.encode(
        text, add_special_tokens=False
    )
    assert tok.decode(ids, skip_special_tokens=True) == text


def test_multi_regex_rules_split_like_hf(varied_text):
    """A sequence of llama.cpp regexes is HF's Sequence of Split(..., Isolated) + ByteLevel."""
    tokenizers = pytest.importorskip("tokenizers")
    from tokenizers import pre_tokenizers as hp

    from tokenforge import pretokenizers

    texts = [varied_text] + varied_text.split("\n") + ["Hello   world\r\n\r\n 12345 ٣٤٥ ½ 你好世界 한국어 ÀÉÎ"]
    seen = set()
    for name, rule in sorted(PRE_TOKENIZERS.items()):
        if not rule.regexes or rule.regexes in seen:
            continue
        seen.add(rule.regexes)
        sources = [pretokenizers.resolve_pattern(r)[1] for r in rule.regexes]
        ours = load_gguf(tiny_bpe(name, tokenizer__ggml__add_bos_token=True)).pre_tokenizer
        ref = hp.Sequence([hp.Split(tokenizers.Regex(s), "isolated") for s in sources]
                          + [hp.ByteLevel(add_prefix_space=False, use_regex=False)])
        for t in texts:
            assert ours.split(t) == [p for p, _ in ref.pre_tokenize_str(t)], (name, t)


def test_unknown_names_are_errors_that_list_the_known_ones():
    with pytest.raises(FileFormatError, match=r"unknown pre-tokenizer tokenizer\.ggml\.pre = 'no-such'; known: .*deepseek-llm"):
        load_gguf(tiny_bpe("no-such"))
    with pytest.raises(FileFormatError, match=r"tokenizer\.ggml\.model 'rwkv' is not supported; supported models: llama"):
        load_gguf(tiny_bpe(tokenizer__ggml__model="rwkv"))
    with pytest.raises(FileFormatError, match="carries no tokenizer"):
        load_gguf(write_gguf_bytes({"general.name": "weights only"}))


def test_inconsistent_tokenizer_metadata():
    h = read_gguf_header(tiny_bpe())
    cases = {
        "merges[1]": {"tokenizer__ggml__merges": ["Ġ t", "h x"]},
        "expected two tokens separated by one space": {"tokenizer__ggml__merges": ["Ġt"]},
        "token_type has 3 entries": {"tokenizer__ggml__token_type": ([1, 1, 1], (V.ARRAY, V.INT32))},
        "bos_token_id is 999, outside": {"tokenizer__ggml__bos_token_id": (999, V.UINT32),
                                             "tokenizer__ggml__add_bos_token": True},
        "add_bos_token is true, but": {"tokenizer__ggml__bos_token_id": None, "tokenizer__ggml__add_bos_token": True},
        "must be an array of strings": {"tokenizer__ggml__tokens": ("abc", V.STRING)},
        "tokens is missing or empty": {"tokenizer__ggml__tokens": ([], (V.ARRAY, V.STRING))},
    }
    for expected, change in cases.items():
        with pytest.raises(FileFormatError, match=expected.replace("[", r"\[").replace("]", r"\]")):
            load_gguf(_rewrite(h, **change))


def test_sentencepiece_style_vocab(tmp_path):
    spm = pytest.importorskip("sentencepiece")
    from tokenforge.sentencepiece.proto import (
        ModelType,
        build_model_proto,
        write_model,
    )

    tok = load_gguf(_FUZZ_SPM)
    h = read_gguf_header(_FUZZ_SPM)
    proto = build_model_proto(h["tokenizer.ggml.tokens"], h["tokenizer.ggml.scores"], h["tokenizer.ggml.token_type"],
                              model_type=ModelType.BPE, normalization="identity", remove_extra_whitespaces=False,
                              trainer_settings={"byte_fallback": True})
    write_model(proto, tmp_path / "t.model")
    sp = spm.SentencePieceProcessor(model_file=str(tmp_path / "t.model"))
    for text in ["ab a b", "abab  ba", " a", "xyz é", ""]:
        assert tok.encode(text) == [1] + sp.encode(text), text
        assert tok.decode(tok.encode(text)) == sp.decode(sp.encode(text))
    no_prefix = load_gguf(_rewrite(h, tokenizer__ggml__add_space_prefix=(False, V.BOOL)))
    assert no_prefix.encode("ab", add_special_tokens=False) == [sp.piece_to_id("ab")]


def test_unigram_t5_style_vocab(shared_data, tmp_path):
    """``t5``: a Unigram vocabulary with the file's precompiled charsmap, as
    llama.cpp's converter writes it from a SentencePiece Unigram model."""
    spm = pytest.importorskip("sentencepiece")
    from tokenforge.sentencepiece.proto import read_model

    src = shared_data / "vocab" / "sentencepiece" / "spm_test_unigram.model"
    proto = read_model(src)
    data = _gguf({
        "tokenizer.ggml.model": "t5",
        "tokenizer.ggml.tokens": [p.piece for p in proto.pieces],
        "tokenizer.ggml.scores": ([p.score for p in proto.pieces], (V.ARRAY, V.FLOAT32)),
        "tokenizer.ggml.token_type": ([int(p.type) for p in proto.pieces], (V.ARRAY, V.INT32)),
        "tokenizer.ggml.add_space_prefix": proto.normalizer_spec.add_dummy_prefix,
        "tokenizer.ggml.remove_extra_whitespaces": proto.normalizer_spec.remove_extra_whitespaces,
        "tokenizer.ggml.precompiled_charsmap": (list(proto.normalizer_spec.precompiled_charsmap), (V.ARRAY, V.UINT8)),
        "tokenizer.ggml.add_eos_token": False,
        "tokenizer.ggml.add_bos_token": False,
    })
    tok = load_gguf(data)
    sp = spm.SentencePieceProcessor(model_file=str(src))
    for text in _lines(shared_data, 40) + ADVERSARIAL:
        assert tok.encode(text) == sp.encode(text), text


# -- differential tests on llama.cpp's vocab files ------------------------------------------

ADVERSARIAL = [
    "",
    " ",
    "  \r\n\t\u3000 \n\n  x  ",
    "a" * 2000,
    " " * 1000,
    '{"a":[1,2,{"b":null}],"c":"d\\n"}',
    "0 1 12 123 1234 12345 123456 1234567 12345678 123456789 3.14159 1,000,000",
    "👨‍👩‍👧‍👦 🇯🇵🇺🇸 👍🏽",
    "e\u0301 a\u0308\u0323 \u0915\u094d\u0937",
    "ภาษาไทย हिन्दी العَرَبِيَّة",
    "NUL\x00in\x00text",
    "It's don't WE'LL they'VE ſ K",
    "²³¹¼½¾ м мир ٣٤٥",
    "<|endoftext|>hello<|endoftext|>",
]


def _lines(shared_data: Path, per_file: int) -> list[str]:
    out: list[str] = []
    for f in sorted((shared_data / "text").rglob("*")):
        if f.is_file():
            out += f.read_bytes().decode("utf-8", "replace").split("\n")[:per_file]
    return out


@pytest.fixture(scope="module")
def texts(shared_data) -> list[str]:
    return _lines(shared_data, 60) + ADVERSARIAL


def _compare(ours, ref, texts) -> tuple[int, list]:
    bad = [t for t in texts if ours(t) != ref(t)]
    return len(texts), bad


@pytest.fixture(scope="module")
def gpt2_gguf(gguf_dir):
    return load_gguf(gguf_dir / "ggml-vocab-gpt-2.gguf")


def test_gpt2_matches_hf_tiktoken_and_tokenforge(gguf_dir, gpt2_gguf, shared_data, texts):
    tokenizers = pytest.importorskip("tokenizers")
    import json

    tok = gpt2_gguf
    assert isinstance(tok, tokenforge.Tokenizer) and tok.pattern == tokenforge.get_encoding("gpt2").pattern
    # the real HF file holds the same vocabulary and merges as the GGUF
    hf_json = shared_data / "vocab" / "hf" / "gpt2_tokenizer.json"
    data = json.loads(hf_json.read_text(encoding="utf-8"))
    h = read_gguf_header(gguf_dir / "ggml-vocab-gpt-2.gguf")
    assert h["tokenizer.ggml.tokens"] == sorted(data["model"]["vocab"], key=data["model"]["vocab"].get)
    assert h["tokenizer.ggml.merges"] == [m if isinstance(m, str) else " ".join(m) for m in data["model"]["merges"]]
    hf = tokenizers.Tokenizer.from_file(str(hf_json))
    n, bad = _compare(lambda t: tok.encode(t, allowed_special="all"),
                      lambda t: hf.encode(t, add_special_tokens=False).ids, texts)
    assert not bad, f"{len(bad)} of {n} texts differ from HF, first {bad[0]!r}"
    ref = tokenforge.get_encoding("gpt2")
    n, bad = _compare(tok.encode_ordinary, ref.encode_ordinary, texts)
    assert not bad, f"{len(bad)} of {n} texts differ from get_encoding('gpt2')"
    tiktoken = pytest.importorskip("tiktoken")
    from tiktoken.load import load_tiktoken_bpe

    ranks = load_tiktoken_bpe(str(shared_data / "vocab" / "tiktoken" / "r50k_base.tiktoken"))
    pattern = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
    tk = tiktoken.Encoding("gpt2-ref", pat_str=pattern, mergeable_ranks=ranks, special_tokens={"<|endoftext|>": 50256})
    n, bad = _compare(lambda t: tok.encode(t, allowed_special="all"), lambda t: tk.encode(t, allowed_special="all"),
                      texts)
    assert not bad, f"{len(bad)} of {n} texts differ from tiktoken"


def test_bert_bge_matches_hf_bert_base_uncased(gguf_dir, shared_data, texts):
    tokenizers = pytest.importorskip("tokenizers")
    tok = load_gguf(gguf_dir / "ggml-vocab-bert-bge.gguf")
    vocab_txt = (shared_data / "vocab" / "wordpiece" / "bert-base-uncased_vocab.txt").read_text(encoding="utf-8")
    assert sorted(tok.get_vocab(), key=tok.get_vocab().get) == vocab_txt.split("\n")[:30522]
    hf = tokenizers.Tokenizer.from_file(str(shared_data / "vocab" / "hf" / "bert-base-uncased_wordpiece_tokenizer.json"))
    n, bad = _compare(lambda t: tok.encode(t, allowed_special="all"), lambda t: hf.encode(t).ids, texts)
    assert not bad, f"{len(bad)} of {n} texts differ from HF, first {bad[0]!r}"
    wp = tokenizers.BertWordPieceTokenizer(tok.get_vocab(), lowercase=True)
    n, bad = _compare(lambda t: tok.encode(t, allowed_special="all"), lambda t: wp.encode(t).ids, texts)
    assert not bad, f"{len(bad)} of {n} texts differ from BertWordPieceTokenizer"


def test_llama_spm_matches_sentencepiece_and_hf_llama_conversion(gguf_dir, shared_data, texts, tmp_path):
    spm = pytest.importorskip("sentencepiece")
    tokenizers = pytest.importorskip("tokenizers")
    from tokenizers import models as hm
    from tokenizers import normalizers as hn

    from tokenforge.sentencepiece.proto import (
        ModelType,
        build_model_proto,
        read_model,
        write_model,
    )

    path = gguf_dir / "ggml-vocab-llama-spm.gguf"
    tok = load_gguf(path)
    h = read_gguf_header(path)
    pieces, scores, types = h["tokenizer.ggml.tokens"], h["tokenizer.ggml.scores"], h["tokenizer.ggml.token_type"]
    # the shared Mistral v1 model is another vocabulary, so it cannot serve as the reference
    mistral = read_model(shared_data / "vocab" / "sentencepiece" / "mistral_v1_tokenizer.model")
    assert [p.piece for p in mistral.pieces] != pieces
    proto = build_model_proto(pieces, scores, types, model_type=ModelType.BPE, normalization="identity",
                              remove_extra_whitespaces=False, trainer_settings={"byte_fallback": True})
    write_model(proto, tmp_path / "llama.model")
    sp = spm.SentencePieceProcessor(model_file=str(tmp_path / "llama.model"))
    n, bad = _compare(tok.encode, lambda t: [1] + sp.encode(t), texts)  # add_bos_token is true in the file
    assert not bad, f"{len(bad)} of {n} texts differ from sentencepiece, first {bad[0]!r}"
    sample = texts[:: max(1, len(texts) // 200)]
    assert [tok.decode(tok.encode(t)) for t in sample] == [sp.decode(sp.encode(t)) for t in sample]

    # HF: BPE with merges ranked by the merged piece's score, as LlamaConverter does
    vocab = {p: i for i, p in enumerate(pieces)}
    merges = []
    for piece, i in vocab.items():
        if types[i] != 1:
            continue
        for k in range(1, len(piece)):
            a, b = piece[:k], piece[k:]
            if types[vocab.get(a, 0)] == 1 and types[vocab.get(b, 0)] == 1 and a in vocab and b in vocab:
                merges.append((-scores[i], vocab[a], vocab[b], a, b))
    merges.sort()
    hf = tokenizers.Tokenizer(hm.BPE(vocab, [(a, b) for *_, a, b in merges], unk_token="<unk>", fuse_unk=True,
                                     byte_fallback=True))
    hf.normalizer = hn.Sequence([hn.Prepend("▁"), hn.Replace(" ", "▁")])
    nonempty = [t for t in texts if t]  # HF's Prepend also runs on an empty text
    n, bad = _compare(lambda t: tok.encode(t, add_special_tokens=False), lambda t: hf.encode(t).ids, nonempty)
    assert not bad, f"{len(bad)} of {n} texts differ from HF's Llama conversion, first {bad[0]!r}"


def _hf_byte_level(h: GGUFHeader, pre):
    tokenizers = pytest.importorskip("tokenizers")
    from tokenizers import models as hm

    tokens = h["tokenizer.ggml.tokens"]
    hf = tokenizers.Tokenizer(hm.BPE({t: i for i, t in enumerate(tokens)},
                                     [tuple(m.split(" ")) for m in h["tokenizer.ggml.merges"]]))
    hf.pre_tokenizer = pre
    hf.add_special_tokens([tokenizers.AddedToken(tokens[i], special=True, normalized=False)
                           for i, t in enumerate(h["tokenizer.ggml.token_type"]) if t == 3])
    return hf


@pytest.mark.parametrize("fname", ["ggml-vocab-starcoder.gguf", "ggml-vocab-falcon.gguf"])
def test_starcoder_and_falcon_match_hf_bpe_with_their_pre_tokenizers(gguf_dir, texts, fname):
    tokenizers = pytest.importorskip("tokenizers")
    from tokenizers import pre_tokenizers as hp

    h = read_gguf_header(gguf_dir / fname)
    tok = load_gguf(gguf_dir / fname)
    if "starcoder" in fname:
        pre = hp.Sequence([hp.Digits(individual_digits=True), hp.ByteLevel(add_prefix_space=False, use_regex=True)])
    else:
        pre = hp.Sequence([
            hp.Punctuation("contiguous"), hp.ByteLevel(add_prefix_space=False, use_regex=True),
            hp.Digits(individual_digits=False), hp.Split(tokenizers.Regex("[0-9][0-9][0-9]"), "isolated"),
        ])
    hf = _hf_byte_level(h, pre)
    n, bad = _compare(lambda t: tok.encode(t, add_special_tokens=False, allowed_special="all"),
                      lambda t: hf.encode(t, add_special_tokens=False).ids, texts)
    assert not bad, f"{len(bad)} of {n} texts differ from HF, first {bad[0]!r}"
    sample = random.Random(0).sample(texts, 50)
    for t in sample:
        assert tok.decode(tok.encode(t, allowed_special="all"), skip_special_tokens=False) == t

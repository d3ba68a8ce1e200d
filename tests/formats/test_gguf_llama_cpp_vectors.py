"""llama.cpp's vocabulary files and its own tokenizer test vectors, run through
tokenforge's GGUF loader, and the llama.cpp loading rules they rely on.

llama.cpp ships vocabulary-only GGUF files (``models/ggml-vocab-<name>.gguf``)
and, beside most of them, ``.inp``/``.out`` test vectors: the inputs separated
by the line ``__ggml_vocab_test__``, then one line of expected ids per input
(the model's Hugging Face tokenizer, ``add_special_tokens=False``). llama.cpp's
``tests/test-tokenizer-0.cpp`` tokenizes each input with ``add_special=false,
parse_special=false``; tokenforge's equivalent is
``encode(text, add_special_tokens=False, disallowed_special=())``.

Files: ``tests/fixtures/gguf`` (see its SOURCES.md); five vocabularies come
from the shared test data (``shared_data``, skipped without it). The expected
ids of the rule tests below follow llama.cpp's ``src/llama-vocab.cpp``: which
tokens it matches in the text, the space prefix it gives each stretch of text
in its SPM tokenizer, its defaults and its per-model whitespace stripping.
"""

from __future__ import annotations

import lzma
from pathlib import Path

import pytest

import tokenforge
from tokenforge import bytelevel
from tokenforge.errors import FileFormatError
from tokenforge.formats.gguf import (
    LLAMA_CPP_UNSUPPORTED_PRE_TOKENIZERS,
    PRE_TOKENIZERS,
    read_gguf_header,
    write_gguf_bytes,
)
from tokenforge.formats.gguf import ValueType as V
from tokenforge.gguf import load_gguf

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "gguf"
SEP = "\n__ggml_vocab_test__\n"

#: every ggml-vocab-*.gguf of llama.cpp's models/ that is available, and where
IN_REPO = ("baichuan", "deepseek-coder", "deepseek-llm", "gpt-neox", "mpt", "phi-3", "refact")
IN_SHARED = ("bert-bge", "falcon", "gpt-2", "llama-spm", "starcoder")
#: vectors whose vocabulary is built here from the shared vocabularies (see the test)
BUILT_HERE = {"llama-bpe": "llama-bpe", "qwen2": "qwen2", "deepseek-r1-qwen": "deepseek-r1-qwen"}
N_INPUTS = 46


def read_vectors(name: str) -> dict[str, list[int]]:
    """``read_tests`` of test-tokenizer-0.cpp: split the input file on the separator
    (a trailing separator ends the list), one ``.out`` line per input, ids separated
    by spaces; the result is a map, so a repeated input keeps its last ids."""
    raw = (FIXTURES / f"ggml-vocab-{name}.gguf.inp").read_bytes().decode("utf-8")
    lines = (FIXTURES / f"ggml-vocab-{name}.gguf.out").read_bytes().decode("utf-8").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    inputs: list[str] = []
    pos = 0
    while pos < len(raw):
        nxt = raw.find(SEP, pos)
        if nxt < 0:
            inputs.append(raw[pos:])
            break
        inputs.append(raw[pos:nxt])
        pos = nxt + len(SEP)
    assert len(inputs) == len(lines), f"{name}: {len(inputs)} inputs, {len(lines)} output lines"
    return {text: [int(x) for x in line.strip().split(" ") if x] for text, line in zip(inputs, lines)}


def llama_cpp_ids(tok: tokenforge.Tokenizer, text: str) -> list[int]:
    """llama_tokenize(text, add_special=false, parse_special=false)."""
    return tok.encode(text, add_special_tokens=False, disallowed_special=())


@pytest.fixture(scope="module")
def vocab_path(request, tmp_path_factory):
    """``vocab_path(name)``: the llama.cpp vocabulary file (fixture or shared data)."""
    out = tmp_path_factory.mktemp("gguf")

    def get(name: str) -> Path:
        if name in IN_REPO:
            path = out / f"ggml-vocab-{name}.gguf"
            if not path.exists():
                path.write_bytes(lzma.decompress((FIXTURES / f"ggml-vocab-{name}.gguf.xz").read_bytes()))
            return path
        shared = request.getfixturevalue("shared_data") / "vocab" / "gguf"
        path = shared / f"ggml-vocab-{name}.gguf"
        if not path.is_file():
            pytest.skip(f"{path} not found")
        return path

    return get


@pytest.fixture(scope="module")
def vocab(vocab_path):
    """``vocab(name)``: ``tokenforge.load`` of that file, loaded once."""
    loaded: dict[str, tokenforge.Tokenizer] = {}

    def get(name: str) -> tokenforge.Tokenizer:
        if name not in loaded:
            loaded[name] = tokenforge.load(vocab_path(name))
        return loaded[name]

    return get


def _mismatches(tok: tokenforge.Tokenizer, vectors: dict[str, list[int]]) -> list[tuple[str, list[int], list[int]]]:
    return [(t, ids, got) for t, ids in vectors.items() if (got := llama_cpp_ids(tok, t)) != ids]


# -- the fixtures themselves --------------------------------------------------------------


def test_vector_files_read_as_test_tokenizer_0_reads_them():
    names = sorted(p.name[len("ggml-vocab-"):-len(".gguf.out")] for p in FIXTURES.glob("ggml-vocab-*.gguf.out"))
    assert names == sorted({*IN_REPO, *IN_SHARED, *BUILT_HERE, "chameleon", "command-r", "roberta-bpe"}
                           - {"baichuan", "gpt-neox"})
    for name in names:
        vectors = read_vectors(name)
        assert len(vectors) == N_INPUTS, name
        assert vectors[""] == [] and "\n\n\n" in vectors and "Hello world" in vectors
    assert read_vectors("phi-3") == read_vectors("llama-spm")  # Phi-3 keeps the Llama 2 vocabulary
    assert read_vectors("deepseek-r1-qwen") == read_vectors("qwen2")


# -- every vocabulary file loads, and gives llama.cpp's ids -----------------------------------


@pytest.mark.parametrize("name", sorted(IN_REPO + IN_SHARED))
def test_every_llama_cpp_vocab_file_loads(vocab_path, vocab, name):
    h = read_gguf_header(vocab_path(name))
    assert h.tensor_count == 0 and h.metadata_end == vocab_path(name).stat().st_size  # vocab-only
    tok = vocab(name)
    assert isinstance(tok, tokenforge.Tokenizer)
    tokens = h["tokenizer.ggml.tokens"]
    assert len(tok.get_vocab()) == len(set(tokens))
    # (DeepSeek's USER_DEFINED tokens include single Latin-1 letters such as "ü", which
    # tokenforge's byte-level decoder reads as bytes: the text here has none of them)
    text = "Hello, world! It's 2025 — Ἀθῆναι 你好 🦙"
    ids = llama_cpp_ids(tok, text)
    assert ids and all(0 <= i < len(tokens) for i in ids)
    if name != "bert-bge":  # WordPiece lowercases and drops the accents
        assert tok.decode(ids) == text


@pytest.mark.parametrize("name", sorted(n for n in IN_REPO + IN_SHARED if n not in ("baichuan", "gpt-neox")))
def test_llama_cpp_test_vectors(vocab, name):
    vectors = read_vectors(name)
    tok = vocab(name)
    bad = _mismatches(tok, vectors)
    assert not bad, f"{name}: {len(bad)} of {len(vectors)} vectors differ, first {bad[0]}"


def _built_gguf(shared: Path, name: str) -> bytes:
    """A GGUF file laid out as llama.cpp's convert_hf_to_gguf.py lays out Llama 3's
    (``llama-bpe``) or Qwen2's (``qwen2``, ``deepseek-r1-qwen``), built from the shared
    vocabularies (llama.cpp's own files for them are 4 MiB or more, or absent): tokens
    in GPT-2's printable form, merges, CONTROL special tokens. Llama 3's merges are
    derived from its ranks as HF's tiktoken converter derives them: for each token,
    every split into two tokens, ordered by the merged token's rank."""
    table = bytelevel.bytes_to_unicode()

    def printable(b: bytes) -> str:
        return "".join(table[x] for x in b)

    if name == "llama-bpe":
        enc = tokenforge.load(shared / "vocab" / "meta" / "llama3_tokenizer.model")
        n = 128000
        ranks = {enc.model.token_bytes(i): i for i in range(n)}
        assert len(ranks) == n
        merges = []
        for tb, r in ranks.items():
            local = [(tb[:k], tb[k:]) for k in range(1, len(tb)) if tb[:k] in ranks and tb[k:] in ranks]
            local.sort(key=lambda p: (ranks[p[0]], ranks[p[1]]))
            merges += [(r, printable(a) + " " + printable(b)) for a, b in local]
        merges.sort(key=lambda x: x[0])
        tokens = [printable(enc.model.token_bytes(i)) for i in range(n)]
        specials = [t for t, _ in sorted(enc.special_tokens.items(), key=lambda kv: kv[1])]
        meta = {"tokenizer.ggml.bos_token_id": n, "tokenizer.ggml.eos_token_id": n + 1}
        merge_lines = [m for _, m in merges]
    else:
        import json

        vocab = json.loads((shared / "vocab" / "hf" / "qwen2" / "vocab.json").read_text(encoding="utf-8"))
        tokens = sorted(vocab, key=vocab.get)
        assert [vocab[t] for t in tokens] == list(range(len(tokens)))
        text = (shared / "vocab" / "hf" / "qwen2" / "merges.txt").read_text(encoding="utf-8")
        merge_lines = [ln for ln in text.split("\n") if ln and not ln.startswith("#version")]
        specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
        meta = {"tokenizer.ggml.eos_token_id": len(tokens), "tokenizer.ggml.add_bos_token": False}
    all_tokens = tokens + specials
    return write_gguf_bytes(
        {"tokenizer.ggml.model": "gpt2", "tokenizer.ggml.pre": name, "tokenizer.ggml.tokens": all_tokens,
         "tokenizer.ggml.token_type": [1] * len(tokens) + [3] * len(specials),
         "tokenizer.ggml.merges": merge_lines, **meta},
        {"tokenizer.ggml.token_type": (V.ARRAY, V.INT32), "tokenizer.ggml.bos_token_id": V.UINT32,
         "tokenizer.ggml.eos_token_id": V.UINT32},
    )


@pytest.mark.parametrize("name", sorted(BUILT_HERE))
def test_llama_cpp_vectors_of_vocabularies_built_from_shared_data(shared_data, name):
    tok = load_gguf(_built_gguf(shared_data, name))
    vectors = read_vectors(name)
    bad = _mismatches(tok, vectors)
    assert not bad, f"{name}: {len(bad)} of {len(vectors)} vectors differ, first {bad[0]}"


# -- what the real files exercise ---------------------------------------------------------


def test_phi3_loads_although_its_unknown_token_is_a_control_token(vocab_path, vocab):
    h = read_gguf_header(vocab_path("phi-3"))
    tokens, types = h["tokenizer.ggml.tokens"], h["tokenizer.ggml.token_type"]
    # what made the file fail before: <unk> (the unknown id) is CONTROL, 53 padding tokens are UNKNOWN
    assert h["tokenizer.ggml.unknown_token_id"] == 0 and tokens[0] == "<unk>" and types[0] == 3
    assert types.count(2) == 53 and types[tokens.index("</s>")] == 4
    tok = vocab("phi-3")
    assert tok.encode("Hello") == [1, 15043]  # add_bos_token
    # <unk>, the UNKNOWN padding tokens, the CONTROL tokens and </s> (an end-of-generation
    # text for llama.cpp) are special: read from the text only when allowed
    specials = tok.special_tokens
    assert {"<unk>", "<s>", "</s>", "<|end|>", "<|assistant|>", "[PAD32011]"} <= set(specials)
    assert all(t.special for t in tok.added_tokens)
    for text in ["a</s>b", "<|end|>", "<unk>", "[PAD32011]"]:
        ids = llama_cpp_ids(tok, text)
        assert not set(ids) & set(specials.values()) and tok.decode(ids) == text
    # parse_special: llama.cpp gives Phi-3's special tokens (but <unk>, <s>, <|endoftext|>)
    # the whitespace after them, and every stretch of text its own space prefix
    allow = {"add_special_tokens": False, "allowed_special": "all"}
    hello, user, end, assistant = 15043, 32010, 32007, 32001
    assert tok.encode("<|user|>\nHello<|end|>\n<|assistant|>", **allow) == [user, hello, end, assistant]
    assert tok.encode("a</s> \n b", **allow) == tok.encode("a</s>b", **allow) == [263, 2, 289]  # ▁a </s> ▁b
    assert tok.encode("<s> b", **allow) == [1] + llama_cpp_ids(tok, " b")  # <s> keeps the space: ▁▁b
    assert tok.encode("[PAD32011]  y", **allow) == [32011, 343]  # ▁y


def test_phi3_and_llama2_give_the_same_ids(vocab, shared_data):
    """Phi-3's vocabulary is Llama 2's plus special tokens: ordinary text gives the same ids."""
    phi3, llama = vocab("phi-3"), vocab("llama-spm")
    for text in [*read_vectors("phi-3"), "a </s> b <s>", "<0x41> ⁇ \x00\x7f"]:
        assert llama_cpp_ids(phi3, text) == llama_cpp_ids(llama, text), text


def test_gpt_neox_without_pre_tokenizer_name_uses_llama_cpps_default(vocab_path, vocab):
    neox, mpt = read_gguf_header(vocab_path("gpt-neox")), read_gguf_header(vocab_path("mpt"))
    assert "tokenizer.ggml.pre" not in neox and mpt["tokenizer.ggml.pre"] == "mpt"
    assert neox["tokenizer.ggml.tokens"] == mpt["tokenizer.ggml.tokens"]
    assert neox["tokenizer.ggml.merges"] == mpt["tokenizer.ggml.merges"]
    text = '12345 a+b=c, "x"!!'
    # llama.cpp's "default": punctuation runs, the GPT-2 rules, digit runs, digit triples
    assert vocab("gpt-neox").pre_tokenizer.split(text) == ["123", "45", "Ġa", "+", "b", "=", "c", ",", "Ġ", '"',
                                                           "x", '"!!']
    assert vocab("mpt").pre_tokenizer.split(text) == ["12345", "Ġa", "+", "b", "=", "c", ",", 'Ġ"', "x", '"!!']
    assert llama_cpp_ids(vocab("gpt-neox"), text) != llama_cpp_ids(vocab("mpt"), text)


def test_whitespace_tokens_of_mpt_are_always_matched(vocab_path, vocab):
    tokens = read_gguf_header(vocab_path("mpt"))["tokenizer.ggml.tokens"]
    ids = {t: i for i, t in enumerate(tokens)}
    # USER_DEFINED runs of spaces: llama.cpp splits the text on them, longest first
    assert llama_cpp_ids(vocab("mpt"), "a" + " " * 30 + "b") == [ids["a"], ids[" " * 24], ids[" " * 6], ids["b"]]


def test_deepseek_coder_fim_tokens_are_special_and_its_byte_tokens_always_matched(vocab_path, vocab):
    h = read_gguf_header(vocab_path("deepseek-coder"))
    tokens, types = h["tokenizer.ggml.tokens"], h["tokenizer.ggml.token_type"]
    fim = tokens.index("<\uff5cfim\u2581begin\uff5c>")
    o_tilde = tokens.index("õ")
    assert types[fim] == types[o_tilde] == 4  # both USER_DEFINED in the file
    tok = vocab("deepseek-coder")
    text = "x<\uff5cfim\u2581begin\uff5c>yõ"
    # llama.cpp marks <｜fim▁begin｜> CONTROL by its text: plain text unless special tokens are allowed
    plain = llama_cpp_ids(tok, text)
    assert fim not in plain and plain[-1] == o_tilde
    assert tok.encode(text, add_special_tokens=False, allowed_special="all")[1:] == [fim, tokens.index("y"), o_tilde]


def test_baichuan_without_unknown_token_id(vocab_path, vocab):
    h = read_gguf_header(vocab_path("baichuan"))
    assert "tokenizer.ggml.unknown_token_id" not in h and h["tokenizer.ggml.token_type"][0] == 2
    tokens = h["tokenizer.ggml.tokens"]
    tok = vocab("baichuan")
    rare = next(c for c in "\ue000\U000f0000\U0010fffd" if c not in tokens)  # private use: no token
    text = f"{rare} llama"
    ids = llama_cpp_ids(tok, text)
    byte = {i for i, t in enumerate(tokens) if len(t) == 6 and t.startswith("<0x")}
    assert len(set(ids) & byte) == len(rare.encode("utf-8")) and 0 not in ids  # byte fallback, no <unk>
    assert tok.decode(ids) == text


# -- llama.cpp's rules, on small files made here -------------------------------------------------

_BYTES = [f"<0x{b:02X}>" for b in range(256)]


def _spm(tokens: list[str], types: list[int], scores: list[float] | None = None, **meta) -> bytes:
    """A ``llama`` (SPM) vocabulary: <unk> <s> </s>, the 256 byte tokens, then ``tokens``."""
    all_tokens = ["<unk>", "<s>", "</s>", *_BYTES, *tokens]
    all_types = [2, 3, 3] + [6] * 256 + types
    if scores is None:
        scores = [-float(k) for k in range(len(tokens))]
    values = {
        "tokenizer.ggml.model": "llama", "tokenizer.ggml.tokens": all_tokens,
        "tokenizer.ggml.scores": [0.0] * 259 + scores, "tokenizer.ggml.token_type": all_types,
        "tokenizer.ggml.bos_token_id": 1, "tokenizer.ggml.eos_token_id": 2,
    }
    types_ = {"tokenizer.ggml.scores": (V.ARRAY, V.FLOAT32), "tokenizer.ggml.token_type": (V.ARRAY, V.INT32),
              "tokenizer.ggml.bos_token_id": V.UINT32, "tokenizer.ggml.eos_token_id": V.UINT32}
    for k, v in meta.items():
        k = k.replace("__", ".")
        if v is None:
            values.pop(k, None)
            types_.pop(k, None)
        elif isinstance(v, tuple):
            values[k], types_[k] = v
        else:
            values[k] = v
    return write_gguf_bytes(values, types_)


_T0 = 259  # id of the first token after the byte tokens


def test_spm_unknown_id_need_not_be_an_unknown_token():
    # the unknown id names a CONTROL token; another token has type UNKNOWN (as in Phi-3)
    data = _spm(["▁", "a", "▁a", "[PAD]"], [1, 1, 1, 2], tokenizer__ggml__unknown_token_id=(0, V.UINT32),
                tokenizer__ggml__token_type=([3, 3, 3] + [6] * 256 + [1, 1, 1, 2], (V.ARRAY, V.INT32)))
    tok = load_gguf(data)
    assert llama_cpp_ids(tok, "a") == [_T0 + 2]
    assert tok.special_tokens["[PAD]"] == _T0 + 3 and tok.special_tokens["<unk>"] == 0
    assert llama_cpp_ids(tok, "[PAD]")[0] != _T0 + 3
    assert tok.encode("[PAD]", add_special_tokens=False, allowed_special="all") == [_T0 + 3]
    # no key and no UNKNOWN token: llama.cpp's default, id 0
    tok = load_gguf(_spm(["▁", "a", "▁a"], [1, 1, 1],
                         tokenizer__ggml__token_type=([3, 3, 3] + [6] * 256 + [1, 1, 1], (V.ARRAY, V.INT32))))
    assert llama_cpp_ids(tok, "a a") == [_T0 + 2, _T0 + 2]


def test_spm_unknown_token_that_merges_produce_is_refused():
    data = _spm(["▁", "a", "▁a"], [1, 1, 1], tokenizer__ggml__unknown_token_id=(_T0 + 2, V.UINT32))
    with pytest.raises(FileFormatError, match=r"the unknown token 261 \('▁a'\) is a token llama\.cpp's merges can"):
        load_gguf(data)


def test_spm_merges_into_control_tokens_as_llama_cpp_does():
    # llama.cpp merges into any token of the vocabulary: "<x>" is CONTROL and still comes
    # out of "<" "x" ">" (sentencepiece would not produce it)
    data = _spm(["▁", "<", "x", ">", "<x", "<x>", "y"], [1, 1, 1, 1, 1, 3, 1])
    tok = load_gguf(data)
    ctrl = _T0 + 5
    assert tok.special_tokens["<x>"] == ctrl
    assert llama_cpp_ids(tok, "<x>") == [_T0, ctrl]  # ▁ <x>
    assert tok.encode("y<x>", add_special_tokens=False, allowed_special="all") == [_T0, _T0 + 6, ctrl]
    # the halves of a merge may be characters that are no token: "<" "x" -> "<x", "<x" ">" -> "<x>"
    tok = load_gguf(_spm(["▁", "x", "<x", "<x>"], [1, 1, 1, 3]))
    assert llama_cpp_ids(tok, "<x>") == [_T0, _T0 + 3]
    # a CONTROL token no merge reaches stays out of the text ("<y" is no token)
    tok = load_gguf(_spm(["▁", "y", "<y>"], [1, 1, 3]))
    assert llama_cpp_ids(tok, "<y>") == [_T0, 3 + ord("<"), _T0 + 1, 3 + ord(">")]


def test_spm_user_defined_tokens_split_the_text_and_each_stretch_gets_the_space_prefix():
    data = _spm(["▁", "a", "b", "▁a", "▁b", "<tool>"], [1, 1, 1, 1, 1, 4])
    tok = load_gguf(data)
    a, b, tool = _T0 + 3, _T0 + 4, _T0 + 5
    assert llama_cpp_ids(tok, "a<tool>b") == [a, tool, b]
    assert llama_cpp_ids(tok, "<tool>") == [tool]
    assert llama_cpp_ids(tok, "a<tool> b") == [a, tool, _T0, b]  # " b" gets a second space: ▁ ▁b
    assert "<tool>" not in tok.special_tokens


def test_spm_ignores_remove_extra_whitespaces_and_finds_byte_tokens_by_their_text():
    base = _spm(["▁", "a", "▁a"], [1, 1, 1])
    squeezed = _spm(["▁", "a", "▁a"], [1, 1, 1], tokenizer__ggml__remove_extra_whitespaces=True)
    for text in ["a  a", "  a ", "a\n\n a"]:
        assert llama_cpp_ids(load_gguf(squeezed), text) == llama_cpp_ids(load_gguf(base), text)
    assert llama_cpp_ids(load_gguf(base), "a  a") == [_T0 + 2, _T0, _T0 + 2]
    # without token types every token is NORMAL; llama.cpp still falls back to <0xXX> by text
    untyped = load_gguf(_spm(["▁", "a", "▁a"], [1, 1, 1], tokenizer__ggml__token_type=None))
    assert llama_cpp_ids(untyped, "é") == [_T0, 3 + 0xC3, 3 + 0xA9]


def test_spm_phi3_strips_whitespace_after_special_tokens_by_model_name():
    def tok(name):
        return load_gguf(_spm(["▁", "a", "▁a", "<|end|>"], [1, 1, 1, 3], general__name=name))

    allow = {"add_special_tokens": False, "allowed_special": "all"}
    end = _T0 + 3
    assert tok("Phi3 mini").encode("<|end|> \na", **allow) == [end, _T0 + 2]
    assert tok("Phi-3").encode("</s>\ta", **allow) == [2, _T0 + 2]
    assert tok("Phi-3").encode("<s> a", **allow) == [1, _T0, _T0 + 2]  # <s> keeps its space
    assert tok("Llama").encode("<|end|> \na", **allow) == [end, _T0, _T0, 3 + 10, _T0 + 1]  # ▁ ▁ <0x0A> a


def _bpe(extra: list[str], extra_types: list[int], **meta) -> bytes:
    table = bytelevel.bytes_to_unicode()
    tokens = [table[b] for b in range(256)] + extra
    values = {"tokenizer.ggml.model": "gpt2", "tokenizer.ggml.pre": "gpt-2", "tokenizer.ggml.tokens": tokens,
              "tokenizer.ggml.token_type": [1] * 256 + extra_types, "tokenizer.ggml.merges": []}
    types_ = {"tokenizer.ggml.token_type": (V.ARRAY, V.INT32)}
    for k, v in meta.items():
        k = k.replace("__", ".")
        if v is None:
            values.pop(k, None)
        elif isinstance(v, tuple):
            values[k], types_[k] = v
        else:
            values[k] = v
    return write_gguf_bytes(values, types_)


def test_bpe_tokens_llama_cpp_recognises_by_their_text():
    extra = ["<tool>", "<|im_end|>", "<|fim_prefix|>", "<|channel|>", "<unk>"]
    tok = load_gguf(_bpe(extra, [4, 4, 4, 3, 2]))
    tool, im_end, fim, channel, unk = range(256, 261)
    # USER_DEFINED: always read from the text, unless llama.cpp makes it CONTROL by its
    # text (end of generation, fill-in-the-middle); gpt-oss's <|channel|> is always read
    assert llama_cpp_ids(tok, "a<tool>b") == [97, tool, 98]
    assert llama_cpp_ids(tok, "<|channel|>") == [channel]
    for text, tid in [("<|im_end|>", im_end), ("<|fim_prefix|>", fim), ("<unk>", unk)]:
        assert tid not in llama_cpp_ids(tok, text)
        assert tok.encode(text, add_special_tokens=False, allowed_special="all") == [tid]
    assert set(tok.special_tokens) == {"<|im_end|>", "<|fim_prefix|>", "<unk>"}
    # a metadata key names the fill-in-the-middle token: no guessing by text
    keyed = load_gguf(_bpe(extra, [4, 4, 4, 3, 2], tokenizer__ggml__fim_pre_token_id=(256, V.UINT32)))
    assert llama_cpp_ids(keyed, "<|fim_prefix|>") == [fim]


def test_bpe_harmony_end_and_gemma4_eos_exceptions():
    harmony = load_gguf(_bpe(["<|end|>", "<|return|>", "<|call|>"], [3, 3, 3]))
    assert llama_cpp_ids(harmony, "<|end|>") == [256]  # not an end there: always read from text
    assert "<|end|>" not in harmony.special_tokens and "<|return|>" in harmony.special_tokens
    gemma = load_gguf(_bpe(["</s>", "<|tool_response>"], [3, 3]))
    assert "</s>" not in gemma.special_tokens  # an ordinary token
    assert gemma.encode("</s>", add_special_tokens=False, allowed_special="all") == llama_cpp_ids(gemma, "</s>")
    assert llama_cpp_ids(gemma, "</s>") == [ord(c) for c in "</s>"]


def test_strip_rules_by_pre_tokenizer_and_model_name():
    allow = {"add_special_tokens": False, "allowed_special": "all"}
    jina = load_gguf(_bpe(["<mask>"], [3], tokenizer__ggml__pre="jina-v2-code"))
    assert jina.encode("a <mask>", **allow) == [97, 256]  # <mask> takes the space before it
    modern = load_gguf(_bpe(["[MASK]"], [3], general__name="modern-bert-base"))
    assert modern.encode("a [MASK]", **allow) == [97, 256]
    plain = load_gguf(_bpe(["<mask>"], [3]))
    assert plain.encode("a <mask>", **allow) == [97, 32, 256]


def test_llama_cpp_accepts_empty_tokens_and_unknown_token_types():
    tok = load_gguf(_bpe(["", "xy"], [1, 9], tokenizer__ggml__merges=["x y"]))
    assert tok.get_vocab()["[EMPTY_256]"] == 256  # llama.cpp's name for an empty token
    assert llama_cpp_ids(tok, "xy") == [257]  # type 9 is UNDEFINED: an ordinary token
    spm = load_gguf(_spm(["▁", "", "a"], [1, 1, 7]))
    assert spm.get_vocab()[f"[EMPTY_{_T0 + 1}]"] == _T0 + 1 and llama_cpp_ids(spm, "a") == [_T0, _T0 + 2]


def test_missing_or_empty_pre_tokenizer_is_llama_cpps_default():
    text = "Hello, World!! 12345"
    default = load_gguf(_bpe([], [], tokenizer__ggml__pre="default")).pre_tokenizer.split(text)
    assert default == ["Hello", ",", "ĠWorld", "!!", "Ġ", "123", "45"]
    for pre in (None, ""):
        assert load_gguf(_bpe([], [], tokenizer__ggml__pre=pre)).pre_tokenizer.split(text) == default


@pytest.mark.parametrize("pre", sorted(LLAMA_CPP_UNSUPPORTED_PRE_TOKENIZERS))
def test_llama_cpp_pre_tokenizers_tokenforge_cannot_reproduce_are_refused(tmp_path, pre):
    assert pre not in PRE_TOKENIZERS
    path = tmp_path / f"ggml-vocab-{pre}.gguf"
    path.write_bytes(_bpe([], [], tokenizer__ggml__pre=pre))
    with pytest.raises(FileFormatError) as info:
        tokenforge.load(path)
    msg = str(info.value)
    assert str(path) in msg and f"tokenizer.ggml.pre = {pre!r} is one llama.cpp knows" in msg
    assert LLAMA_CPP_UNSUPPORTED_PRE_TOKENIZERS[pre] in msg

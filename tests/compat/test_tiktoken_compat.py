"""The tiktoken module of tokenforge gives what tiktoken gives, method by method.

The reference objects are real ``tiktoken.Encoding`` objects built offline from
the same rank files (``tests/_tiktoken_ref.py``).
"""

from __future__ import annotations

import pickle

import hypothesis.strategies as st
import pytest
from hypothesis import given, settings

import tokenforge
import tokenforge.compat.tiktoken as tt
from tokenforge.errors import InvalidArgumentError, UnknownModelError, UnknownTokenError

tiktoken = pytest.importorskip("tiktoken")
from _tiktoken_ref import reference  # noqa: E402

NAMES = ["gpt2", "cl100k_base", "o200k_base"]
TEXTS = [
    "", "hello fanta", "hello world\n\n", "  !", "abc  ", "x<|endoftext|>", "<|endoftext|>", "def f(x):\n    ",
    "日本語のテ", "hello 👍", "a\u00a0", "1234", "\n\n\n", "ok\u200d", "مرحبا بالعالم", "x" * 300,
]


@pytest.fixture(params=NAMES)
def pair(request):
    return tt.get_encoding(request.param), reference(request.param)


def _unstable(enc, text):
    stable, completions = enc.encode_with_unstable(text, allowed_special="all")
    return stable, sorted(map(tuple, completions))


def test_module_api_is_tiktokens():
    assert tt.list_encoding_names() == ["gpt2", "r50k_base", "p50k_base", "p50k_edit", "cl100k_base",
                                        "o200k_base", "o200k_harmony"]
    enc = tt.get_encoding("cl100k_base")
    assert isinstance(enc, tt.Encoding) and isinstance(enc, tokenforge.Tokenizer)
    assert enc is tt.get_encoding("cl100k_base") and repr(enc) == "<Encoding 'cl100k_base'>"
    assert tt.encoding_for_model("gpt-oss-20b").name == "o200k_harmony"
    assert tt.encoding_name_for_model("gpt-4o-mini") == "o200k_base"
    with pytest.raises(KeyError):
        tt.encoding_for_model("no-such-model")
    with pytest.raises(UnknownModelError, match="no-such-model"):
        tt.encoding_name_for_model("no-such-model")
    from tokenforge.compat.tiktoken.core import Encoding
    from tokenforge.compat.tiktoken.load import load_tiktoken_bpe  # noqa: F401
    from tokenforge.compat.tiktoken.model import MODEL_TO_ENCODING

    assert Encoding is tt.Encoding and MODEL_TO_ENCODING["gpt-4"] == "cl100k_base"


@pytest.mark.parametrize("text", TEXTS)
def test_encode_with_unstable_matches(pair, text):
    enc, ref = pair
    assert _unstable(enc, text) == _unstable(ref, text)


@settings(max_examples=60, deadline=None)
@given(text=st.text(alphabet=st.sampled_from(list("ab \n\t!0é日👍<|>")), max_size=12))
def test_encode_with_unstable_matches_on_random_text(text):
    for name in ("gpt2", "cl100k_base"):
        assert _unstable(tt.get_encoding(name), text) == _unstable(reference(name), text), name


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=24) | st.lists(st.sampled_from([b"\x80", b" ", b"a", b"\xe6\x97", b"\xa5", b"\n",
                                                                 b"\xff", b"\xc3", b"0"])).map(b"".join))
def test_encode_bytes_matches_on_invalid_utf8(data):
    for name in NAMES:
        enc, ref = tt.get_encoding(name), reference(name)
        ids = enc.encode_bytes(data)
        assert ids == ref._encode_bytes(data), name
        assert enc._encode_bytes(data) == ids and enc.decode_bytes(ids) == data


def test_encode_bytes_refuses_what_is_not_bytes():
    with pytest.raises(TypeError):
        tt.get_encoding("gpt2").encode_bytes("text")


@pytest.mark.parametrize("text", [t for t in TEXTS if "<|" not in t] + ["நடிகர் சூர்யா", " Ġ除", "a<|endoftext|>b"])
def test_decode_with_offsets_matches(pair, text):
    enc, ref = pair
    ids = ref.encode(text, allowed_special="all")
    assert enc.decode_with_offsets(ids) == ref.decode_with_offsets(ids)


def test_token_values_and_single_tokens(pair):
    enc, ref = pair
    assert enc.token_byte_values() == ref.token_byte_values()
    for s in ["<|endoftext|>", b"<|endoftext|>", "hello", b" hello", b"\xe6"]:
        try:
            want = ref.encode_single_token(s)
        except KeyError:
            with pytest.raises(UnknownTokenError):
                enc.encode_single_token(s)
        else:
            assert enc.encode_single_token(s) == want
    for i in (0, 255, ref.eot_token, ref.max_token_value):
        assert enc.is_special_token(i) == ref.is_special_token(i)
        assert enc.decode_single_token_bytes(i) == ref.decode_single_token_bytes(i)
    assert (enc.n_vocab, enc.max_token_value, enc.eot_token) == (ref.n_vocab, ref.max_token_value, ref.eot_token)
    assert enc.special_tokens_set == ref.special_tokens_set
    assert dict(enc._special_tokens) == ref._special_tokens and enc._pat_str == ref._pat_str
    assert dict(enc._mergeable_ranks) == ref._mergeable_ranks


def test_batches_take_tiktokens_arguments(pair):
    enc, ref = pair
    texts = ["hello world", "<|endoftext|> x", "日本"]
    assert enc.encode_batch(texts, num_threads=2, allowed_special="all") == ref.encode_batch(
        texts, num_threads=2, allowed_special="all")
    assert enc.encode_ordinary_batch(texts, num_threads=1) == ref.encode_ordinary_batch(texts, num_threads=1)
    batch = ref.encode_batch(texts, allowed_special="all")
    assert enc.decode_batch(batch, num_threads=2) == ref.decode_batch(batch, num_threads=2)
    assert enc.decode_bytes_batch(batch, num_threads=2) == ref.decode_bytes_batch(batch, num_threads=2)
    assert enc.encode_to_numpy("hello world").tolist() == ref.encode_to_numpy("hello world").tolist()


def test_special_policies_follow_tiktoken():
    enc, ref = tt.get_encoding("cl100k_base"), reference("cl100k_base")
    # A name that is no special token: allowing it allows nothing ...
    assert enc.encode("x<|nope|>", allowed_special={"<|nope|>"}) == ref.encode("x<|nope|>", allowed_special={"<|nope|>"})
    # ... and disallowing a string makes text holding it raise, special token or not.
    for lib in (enc, ref):
        with pytest.raises(ValueError):
            lib.encode("a foo b", disallowed_special={"foo"})
    text = "<|endoftext|> hello <|fim_prefix|> there <|fim_middle|>"
    for allowed in ("all", {"<|fim_prefix|>"}, {"<|endoftext|>", "<|nope|>"}, set()):
        assert enc.encode(text, allowed_special=allowed, disallowed_special=()) == ref.encode(
            text, allowed_special=allowed, disallowed_special=())


def test_o200k_harmony_matches_tiktoken():
    enc = tt.get_encoding("o200k_harmony")
    base = reference("o200k_base")
    specials = {**base._special_tokens, "<|startoftext|>": 199998, "<|return|>": 200002, "<|constrain|>": 200003,
                "<|channel|>": 200005, "<|start|>": 200006, "<|end|>": 200007, "<|message|>": 200008,
                "<|call|>": 200012}
    specials |= {f"<|reserved_{i}|>": i for i in (200000, 200001, 200004, 200009, 200010, 200011)}
    specials |= {f"<|reserved_{i}|>": i for i in range(200013, 201088)}
    ref = tiktoken.Encoding("o200k_harmony", pat_str=base._pat_str, mergeable_ranks=base._mergeable_ranks,
                            special_tokens=specials)
    assert dict(enc.special_tokens) == specials
    assert (enc.n_vocab, enc.max_token_value) == (ref.n_vocab, ref.max_token_value) == (201088, 201087)
    chat = "<|start|>user<|message|>What is 2+2?<|end|><|start|>assistant<|channel|>final<|message|>4<|return|>"
    assert enc.encode(chat, allowed_special="all") == ref.encode(chat, allowed_special="all")
    # Two strings share 200018; the first one registered decodes (tiktoken picks either).
    assert enc.encode("<|endofprompt|><|reserved_200018|>", allowed_special="all") == [200018, 200018]
    assert enc.decode([200018]) == "<|endofprompt|>"
    assert enc.decode_single_token_bytes(200018) in (b"<|endofprompt|>", b"<|reserved_200018|>")


def test_custom_encoding_pickles_and_checks_its_size():
    base = tt.get_encoding("r50k_base")
    enc = tt.Encoding("custom_enc", pat_str=base._pat_str, mergeable_ranks=base._mergeable_ranks,
                      special_tokens={"<|pickle|>": 100_000})
    back = pickle.loads(pickle.dumps(enc))
    assert type(back) is tt.Encoding and back.name == "custom_enc"
    assert back.encode("<|pickle|>", allowed_special="all") == [100_000]
    assert pickle.loads(pickle.dumps(base)) is base  # a registered encoding pickles by name
    with pytest.raises(InvalidArgumentError, match="explicit_n_vocab"):
        tt.Encoding("x", pat_str=base._pat_str, mergeable_ranks=base._mergeable_ranks,
                    special_tokens={"<|endoftext|>": 50256}, explicit_n_vocab=50000)
    ok = tt.Encoding("x", pat_str=base._pat_str, mergeable_ranks=base._mergeable_ranks,
                     special_tokens={"<|endoftext|>": 50256}, explicit_n_vocab=50257)
    assert ok.plan == base.plan  # the published pattern keeps its native scanner


def test_rank_files_load_and_dump(tmp_path):
    from tokenforge.compat.tiktoken import load

    ranks = dict(tt.get_encoding("r50k_base")._mergeable_ranks)
    path = str(tmp_path / "r.tiktoken")
    load.dump_tiktoken_bpe(ranks, path)
    assert load.load_tiktoken_bpe(path) == ranks
    sha = load.hashlib.sha256(open(path, "rb").read()).hexdigest()
    assert load.load_tiktoken_bpe(path, expected_hash=sha) == ranks
    with pytest.raises(ValueError, match="sha256"):
        load.load_tiktoken_bpe(path, expected_hash="0" * 64)
    # tiktoken's own address of a shipped file is served from the package, offline.
    url = "https://openaipublic.blob.core.windows.net/encodings/r50k_base.tiktoken"
    assert load.load_tiktoken_bpe(url) == ranks
    (tmp_path / "bad.tiktoken").write_bytes(b"aGk= 0\nnot-a-line\n")
    with pytest.raises(ValueError, match="line 2"):
        load.load_tiktoken_bpe(str(tmp_path / "bad.tiktoken"))


def test_data_gym_files_give_gpt2_ranks(shared_data):
    from tokenforge.compat.tiktoken import load

    gpt2 = shared_data / "vocab" / "gpt2"
    ranks = load.data_gym_to_mergeable_bpe_ranks(str(gpt2 / "merges.txt"), str(gpt2 / "vocab.json"))
    assert ranks == dict(tt.get_encoding("gpt2")._mergeable_ranks)

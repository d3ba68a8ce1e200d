"""Model names map to the encodings tiktoken gives them, offline."""

from __future__ import annotations

import pytest

import tokenforge
from tokenforge.encodings import MODEL_PREFIX_TO_ENCODING, MODEL_TO_ENCODING
from tokenforge.errors import UnknownEncodingError

NAMES = list(MODEL_TO_ENCODING) + [
    "gpt-4o-mini-2024-07-18", "gpt-4-0613", "gpt-3.5-turbo-0125", "ft:gpt-4o:org::id", "o1-preview",
    "gpt-5-mini", "chatgpt-4o-latest", "gpt-4.1-nano", "ft:davinci-002:x", "gpt-35-turbo-16k",
]


def test_table_agrees_with_tiktoken():
    model = pytest.importorskip("tiktoken.model")
    assert MODEL_TO_ENCODING == model.MODEL_TO_ENCODING
    assert MODEL_PREFIX_TO_ENCODING == model.MODEL_PREFIX_TO_ENCODING
    for name in NAMES:
        assert tokenforge.encoding_name_for_model(name) == model.encoding_name_for_model(name), name


def test_encoding_for_model_returns_the_shipped_encoding():
    assert tokenforge.encoding_for_model("gpt-4o") is tokenforge.get_encoding("o200k_base")
    assert tokenforge.encoding_for_model("text-davinci-003").name == "p50k_base"


def test_unknown_models_raise_with_a_hint():
    with pytest.raises(UnknownEncodingError, match="llama"):
        tokenforge.encoding_for_model("llama-7b")
    with pytest.raises(KeyError, match="llama"):  # as tiktoken raises
        tokenforge.encoding_for_model("llama-7b")


def test_every_model_tiktoken_knows_has_its_encoding():
    for name in NAMES + ["gpt-oss-20b", "gpt-oss-120b"]:
        assert tokenforge.encoding_for_model(name).name == tokenforge.encoding_name_for_model(name)
    assert tokenforge.encoding_for_model("gpt-oss-20b").special_tokens["<|call|>"] == 200012


@pytest.mark.parametrize("spec, name", [("cl100k", "cl100k_base"), ("O200K", "o200k_base"), ("gpt-4o", "o200k_base"),
                                         ("gpt-4", "cl100k_base"), ("text-embedding-3-small", "cl100k_base"),
                                         ("cl100k-base", "cl100k_base")])
def test_open_tokenizer_takes_what_people_type(spec, name):
    from tokenforge.io import open_tokenizer

    assert open_tokenizer(spec).name == name


def test_open_tokenizer_unknown_name_lists_the_known_ones():
    from tokenforge.errors import UnknownEncodingError
    from tokenforge.io import open_tokenizer

    with pytest.raises(UnknownEncodingError, match=r"unknown tokenizer 'cl100kk' \(did you mean cl100k\?\).*o200k_base"):
        open_tokenizer("cl100kk")


@pytest.mark.parametrize("name,hint", [
    ("cl100k_bse", "did you mean 'cl100k_base'?"),
    ("CL100K-BASE", "did you mean 'cl100k_base'?"),
    ("o200k", "did you mean 'o200k_base'?"),
    ("gpt-4o", "'gpt-4o' is a model name: encoding_for_model('gpt-4o') gives o200k_base"),
])
def test_get_encoding_with_an_unknown_name_suggests_the_known_one(name, hint):
    with pytest.raises(UnknownEncodingError) as info:
        tokenforge.get_encoding(name)
    assert f"unknown encoding {name!r} ({hint}); known: gpt2, r50k_base" in str(info.value)


def test_the_tiktoken_drop_in_suggests_too():
    from tokenforge.compat import tiktoken

    with pytest.raises(UnknownEncodingError, match=r"'cl100k_bse' \(did you mean 'cl100k_base'\?\)"):
        tiktoken.get_encoding("cl100k_bse")


def test_encoding_for_model_with_a_typo_suggests_the_model():
    from tokenforge.errors import UnknownModelError

    with pytest.raises(UnknownModelError, match=r"'gpt-4oo' \(did you mean 'gpt-4o'\?\)"):
        tokenforge.encoding_for_model("gpt-4oo")

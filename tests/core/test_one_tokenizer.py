"""One Tokenizer type: every method, with one signature, on every model family.

Each family is built from the files a user has (shipped encodings, the small
fixture models, tokenizers written and read back in each format), and every
method of the public API is checked against plain ``encode``/``decode``: batch
equals one by one (on threads too), numpy equals lists, streaming equals whole,
offsets slice the text, and the plan chosen at construction never changes ids.
"""

from __future__ import annotations

import io
import pickle
from pathlib import Path

import numpy as np
import pytest

import tokenforge
from tokenforge import Tokenizer

from _families import FAMILIES, TEXTS



@pytest.fixture(scope="module", params=list(FAMILIES))
def family(request, tmp_path_factory):
    build, plan = FAMILIES[request.param]
    return build(tmp_path_factory.mktemp("family")), plan


def test_every_family_is_a_tokenizer_with_the_expected_plan(family):
    tok, plan = family
    assert type(tok) is Tokenizer
    if tokenforge._native.available():
        assert tok.plan == plan
    assert repr(tok).startswith("<Tokenizer")


def test_the_plan_never_changes_ids(family):
    tok, _ = family
    reference = Tokenizer.from_dict(tok.to_dict(), backend="python")
    assert reference.plan == "python"
    for t in TEXTS:
        assert tok.encode(t) == reference.encode(t), t
        assert tok.encode_ordinary(t) == reference.encode_ordinary(t), t


def test_batch_numpy_and_threads_equal_one_by_one(family):
    tok, _ = family
    texts = TEXTS * 3
    single = [tok.encode(t) for t in texts]
    assert tok.encode_batch(texts) == single
    assert tok.encode_batch(texts, num_threads=2) == single
    assert tok.encode_batch(texts, num_threads=1) == single
    ids, offsets = tok.encode_batch_to_numpy(texts, num_threads=2)
    assert ids.dtype == np.uint32 and offsets.dtype == np.int64
    assert [ids[offsets[k]:offsets[k + 1]].tolist() for k in range(len(texts))] == single
    for t in TEXTS:
        assert tok.encode_to_numpy(t).tolist() == tok.encode(t)
    assert tok.encode_ordinary_batch(texts, num_threads=2) == [tok.encode_ordinary(t) for t in texts]


def test_encode_iterable_equals_encode_of_the_whole(family):
    tok, _ = family
    text = "\n".join(TEXTS) * 20
    chunks = io.StringIO(text)
    assert list(tok.encode_iterable(chunks)) == tok.encode(text, add_special_tokens=False)


def test_decode_round_trips_and_batch_and_bytes_agree(family):
    tok, _ = family
    for t in TEXTS:
        ids = tok.encode(t)
        text = tok.decode(ids, skip_special_tokens=True)
        assert tok.decode_bytes(ids, skip_special_tokens=True).decode("utf-8", "replace") == text
        assert tok.decode_batch([ids, ids], skip_special_tokens=True) == [text, text]
    if tok.is_byte_level:
        for t in TEXTS:
            assert tok.decode(tok.encode(t), skip_special_tokens=True) == t


def test_stream_decoder_equals_whole_decode(family):
    tok, _ = family
    for t in TEXTS:
        ids = tok.encode(t)
        for skip in (False, True):
            dec = tok.stream_decoder(skip_special_tokens=skip)
            streamed = "".join(dec.step(i) for i in ids) + dec.finish()
            assert streamed == tok.decode(ids, skip_special_tokens=skip), t
            assert type(dec) is tokenforge.StreamDecoder


def test_encode_full_offsets_slice_the_text(family):
    tok, _ = family
    for t in TEXTS:
        full = tok.encode_full(t)
        assert full.ids == tok.encode(t)
        assert len(full.tokens) == len(full.ids) == len(full.offsets) == len(full.type_ids)
        unk = getattr(tok.model, "unk_id", None)
        for tid, tokstr, (s, e) in zip(full.ids, full.tokens, full.offsets):
            assert 0 <= s <= e <= len(t)
            assert tok.id_to_token(tid) == tokstr or tid == unk  # an unknown piece shows its text
        spans = tok.encode_with_offsets(t)
        assert [s.id for s in spans] == full.ids
        data = t.encode("utf-8")
        for s in spans:
            assert 0 <= s.byte_start <= s.byte_end <= len(data)


def test_token_and_id_lookups_agree(family):
    tok, _ = family
    vocab = tok.get_vocab()
    assert len(tok) == len(vocab) and tok.n_vocab == tok.max_token_value + 1
    for token, i in list(vocab.items())[:200]:
        assert tok.id_to_token(i) == token or tok.token_to_id(tok.id_to_token(i)) == i
        assert tok.token_to_id(token) == i or vocab[tok.id_to_token(tok.token_to_id(token))] == tok.token_to_id(token)
    with pytest.raises(tokenforge.UnknownIdError):
        tok.id_to_token(tok.n_vocab + 5)
    with pytest.raises(tokenforge.UnknownIdError):
        tok.decode([tok.n_vocab + 5])
    with pytest.raises(tokenforge.UnknownTokenError):
        tok.token_to_id("no such token \u2603\u2603\u2603")


def test_special_token_policy_is_the_same_everywhere(family):
    tok, _ = family
    if not tok.special_tokens:
        pytest.skip("no special tokens")
    special = max((s for s in tok.special_tokens if "unk" not in s.lower()), key=len)
    text = f"a {special} b"
    guarded = {"raise": "all", "text": {special}}[tok.specials_in_text]  # what the default guards
    with pytest.raises(tokenforge.SpecialTokenError):
        tok.encode(text, disallowed_special=guarded)
    with pytest.raises(tokenforge.SpecialTokenError):
        tok.encode_batch([text], disallowed_special=guarded)
    if tok.specials_in_text == "text":  # SentencePiece files: never read from text by default
        assert tok.encode(text, add_special_tokens=False) == tok.encode_ordinary(text)
    assert tok.special_tokens[special] in tok.encode(text, allowed_special="all")
    assert tok.special_tokens[special] not in tok.encode(text, disallowed_special=(), add_special_tokens=False)
    assert tok.encode_ordinary(text) == tok.encode(text, disallowed_special=(), add_special_tokens=False)


def test_save_load_and_pickle_keep_ids(family, tmp_path):
    tok, plan = family
    path = tmp_path / "tok.json"
    tok.save(str(path))
    again = tokenforge.load(path)
    clone = pickle.loads(pickle.dumps(tok))
    for other in (again, clone):
        assert other == tok and other.plan == tok.plan
        for t in TEXTS:
            assert other.encode(t) == tok.encode(t)


def test_bad_arguments_raise_tokenforge_errors(family):
    tok, _ = family
    with pytest.raises(tokenforge.EncodeInputError):
        tok.encode(b"bytes")
    with pytest.raises(tokenforge.EncodeInputError):
        tok.encode_batch("one string")
    with pytest.raises(tokenforge.InvalidArgumentError):
        tok.encode_batch(["ok"], num_threads=0)
    with pytest.raises(tokenforge.InvalidArgumentError):
        tok.encode_to_numpy("x", dtype="int8")


def test_lone_surrogates_become_u_fffd_on_every_path(family):
    tok, _ = family
    bad, good = "a\ud800b \udfff", "a\ufffdb \ufffd"
    assert tok.encode(bad) == tok.encode(good)
    assert tok.encode_ordinary(bad) == tok.encode_ordinary(good)
    assert tok.encode_batch([bad, "x"], num_threads=2) == [tok.encode(good), tok.encode("x")]
    assert tok.encode_to_numpy(bad).tolist() == tok.encode(good)
    ids, offsets = tok.encode_batch_to_numpy([bad])
    assert ids.tolist() == tok.encode(good)
    assert tok.encode_full(bad).ids == tok.encode(good)

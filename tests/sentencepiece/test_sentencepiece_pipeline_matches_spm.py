"""A SentencePiece ``.model`` loaded by tokenforge gives the ``sentencepiece`` library's ids,
pieces and decoded text, on real text in many scripts and on adversarial strings."""

from __future__ import annotations

import json

import pytest

import tokenforge
from tokenforge import Tokenizer
from tokenforge.presets import sentencepiece as load_sentencepiece

spm = pytest.importorskip("sentencepiece")

MODELS = [
    "albert_spiece.model", "hf_test_bpe.model", "hf_test_unigram.model", "mistral_v1_tokenizer.model",
    "spm_test_ja_unigram.model", "spm_test_unigram.model",
]

ADVERSARIAL = [
    "", " ", "   ", "\t\n\r\n", "Hello  world ", "  leading", "trailing   ", "a\u3000b\u00a0c", "ﬃ ① ｶﾀｶﾅ Ａ",
    "e\u0301 n\u0303", "👩‍👩‍👧‍👦 🇯🇵🇫🇷 ☃︎", "龘 𠀋 𪚥", "\x00\x01\x1f\x7f", "مرحبا بالعالم ١٢٣", "नमस्ते दुनिया",
    "สวัสดีครับ", "<s> </s> <unk> <pad>", "▁already▁escaped", "1234567890 3.14159 1e-9", '{"a":[1,2,{"b":null}]}',
    "x" * 3000, " " * 500 + "y", "def f(x):\n    return x  # c\n\tpass", "\ud800 lone surrogate", "UPPER lower",
]


@pytest.fixture(scope="module", params=MODELS)
def pair(request, shared_data):
    path = shared_data / "vocab" / "sentencepiece" / request.param
    return request.param, load_sentencepiece(path), spm.SentencePieceProcessor(model_file=str(path))


def _text_files(shared_data):
    base = shared_data / "text"
    return sorted(p for p in base.rglob("*") if p.is_file())


def test_every_line_of_every_text_gives_spm_ids(pair, shared_data):
    name, ours, ref = pair
    compared = 0
    for path in _text_files(shared_data):
        lines = path.read_text(encoding="utf-8").splitlines()[:250]
        got = [ours.encode(line, disallowed_special=()) for line in lines]
        assert got == ref.encode(lines), (name, path.name)
        compared += len(lines)
    assert compared > 1500


def test_whole_documents_give_spm_ids(pair, shared_data):
    name, ours, ref = pair
    for path in _text_files(shared_data):
        if path.stat().st_size > 150_000:
            continue
        text = path.read_text(encoding="utf-8")
        assert ours.encode(text, disallowed_special=()) == ref.encode(text), (name, path.name)


def test_adversarial_strings_give_spm_ids_and_text(pair):
    name, ours, ref = pair
    for text in ADVERSARIAL:
        safe = text.replace("\ud800", "\ufffd")  # sentencepiece's Python binding refuses lone surrogates
        ids = ours.encode(text, disallowed_special=())
        assert ids == ref.encode(safe), (name, text)
        assert ours.decode(ids) == ref.decode(ids), (name, text)


def test_pieces_and_decoding_match_spm(pair, shared_data):
    name, ours, ref = pair
    assert len(ours) == ref.get_piece_size()
    assert [ours.id_to_token(i) for i in range(ref.get_piece_size())] == [ref.id_to_piece(i) for i in range(ref.get_piece_size())]
    text = (shared_data / "text" / "botchan.txt").read_text(encoding="utf-8")[:20000]
    for line in text.splitlines()[:200] + ["龘 𠀋 🙂 ok"]:
        ids = ref.encode(line)
        assert ours.decode(ids) == ref.decode(ids), (name, line)
        assert [ours.id_to_token(i) for i in ids] == [ref.id_to_piece(i) for i in ids]


def test_control_pieces_are_special_and_bos_is_added_by_code(shared_data):
    from tokenforge.errors import SpecialTokenError

    path = shared_data / "vocab" / "sentencepiece" / "mistral_v1_tokenizer.model"
    ref = spm.SentencePieceProcessor(model_file=str(path))
    plain = load_sentencepiece(path)
    # sentencepiece never reads a control piece from text: "</s>" there is ordinary text.
    assert plain.specials_in_text == "text" and plain.special_tokens == {"<s>": 1, "</s>": 2}
    for text in ("a </s> b", "<s>", "<s><s></s>x"):
        assert plain.encode(text) == plain.encode(text, disallowed_special=()) == ref.encode(text)
        assert plain.encode_batch([text]) == [ref.encode(text)]
    assert plain.encode("a </s>", allowed_special={"</s>"}) == ref.encode("a ") + [2]  # asked for by name
    with pytest.raises(SpecialTokenError, match="</s>"):
        plain.encode("a </s> b", disallowed_special={"</s>"})  # guarded when asked
    back = tokenforge.Tokenizer.from_dict(plain.to_dict())
    assert back.specials_in_text == "text" and back.encode("a </s> b") == ref.encode("a </s> b")
    with_bos = load_sentencepiece(path, add_bos=True, add_eos=True)
    assert with_bos.encode("Hello") == ref.encode("Hello", add_bos=True, add_eos=True)
    assert with_bos.encode("Hello", add_special_tokens=False) == ref.encode("Hello")
    ids = ref.encode("Hello", add_bos=True, add_eos=True)
    assert with_bos.decode(ids) == ref.decode(ids) == "Hello"


def test_byte_fallback_pieces_decode_to_the_character(shared_data):
    path = shared_data / "vocab" / "sentencepiece" / "mistral_v1_tokenizer.model"
    ours = load_sentencepiece(path)
    ids = ours.encode("龘")
    assert [ours.id_to_token(i) for i in ids][-3:] == ["<0xE9>", "<0xBE>", "<0x98>"]
    assert ours.decode(ids) == "龘"
    assert "".join(ours.decode_stream(ids)) == "龘"


def test_streamed_decode_equals_whole_decode(pair):
    name, ours, ref = pair
    text = "Streaming: naïve café, 東京タワー 🙂 and 龘."
    ids = ours.encode(text, disallowed_special=())
    assert "".join(ours.decode_stream(ids)) == ours.decode(ids) == ref.decode(ids)


def test_load_detects_model_files_and_round_trips_native_file(shared_data, tmp_path):
    path = shared_data / "vocab" / "sentencepiece" / "spm_test_unigram.model"
    tok = tokenforge.load(path)
    assert isinstance(tok, Tokenizer)
    out = tmp_path / "t.json"
    tok.save(str(out))
    again = tokenforge.load(out)
    text = "The quick brown fox, 東京 and 🙂."
    assert again.encode(text) == tok.encode(text)


def test_albert_tokenizer_json_gives_hf_ids(shared_data):
    tokenizers = pytest.importorskip("tokenizers")
    path = shared_data / "vocab" / "hf" / "albert-base-v2_spiece_unigram_tokenizer.json"
    ours = Tokenizer.from_dict(json.loads(path.read_text(encoding="utf-8")))
    ref = tokenizers.Tokenizer.from_file(str(path))
    for p in _text_files(shared_data):
        lines = p.read_text(encoding="utf-8").splitlines()[:150]
        for line in lines:
            r = ref.encode(line)
            e = ours.encode_full(line, allowed_special="all")
            assert e.ids == r.ids, (p.name, line)
            assert e.offsets == r.offsets, (p.name, line)
    for text in ADVERSARIAL:
        text = text.replace("\ud800", "\ufffd")
        assert ours.encode(text, allowed_special="all") == ref.encode(text).ids, text
        ids = ref.encode(text).ids
        assert ours.decode(ids) == ref.decode(ids), text


def test_truncated_or_garbage_model_names_the_file(shared_data, tmp_path):
    from tokenforge.errors import FileFormatError

    data = (shared_data / "vocab" / "sentencepiece" / "spm_test_unigram.model").read_bytes()
    bad = tmp_path / "cut.model"
    bad.write_bytes(data[: len(data) // 2])
    with pytest.raises(FileFormatError, match="cut.model"):
        tokenforge.load(bad)
    junk = tmp_path / "junk.model"
    junk.write_bytes(b"\x0a\xff\xff\xff\xff\x0f garbage")
    with pytest.raises(FileFormatError, match="junk.model"):
        tokenforge.load(junk)


def test_decoder_matches_spm_on_random_piece_sequences(shared_data):
    """Leading-space stripping, unknown surface and byte runs, as sentencepiece decodes them."""
    import random

    for name in ("mistral_v1_tokenizer.model", "spm_test_unigram.model", "albert_spiece.model"):
        path = shared_data / "vocab" / "sentencepiece" / name
        ours = load_sentencepiece(path)
        ref = spm.SentencePieceProcessor(model_file=str(path))
        alphabet = [p for p in ["▁", "▁▁", "▁a", "a", "<unk>", "<s>", "</s>", "<0xE9>", "<0xBE>", "<0x98>", "<0x20>", "<0xFF>", "▁the", "ing"]
                    if ref.piece_to_id(p) != ref.unk_id() or p == "<unk>"]
        ids_of = [ref.piece_to_id(p) for p in alphabet]
        rng = random.Random(0)
        for _ in range(400):
            ids = [rng.choice(ids_of) for _ in range(rng.randint(0, 7))]
            assert ours.decode(ids) == ref.decode(ids), (name, [ref.id_to_piece(i) for i in ids])


def test_nbest_matches_spm_and_sampling_is_seeded(shared_data):
    path = shared_data / "vocab" / "sentencepiece" / "spm_test_unigram.model"
    ours = load_sentencepiece(path)
    ref = spm.SentencePieceProcessor(model_file=str(path))
    for text in ["Hello world tokenization", "unbelievable", "New York is big."]:
        got = [ids for ids, _score in ours.nbest(text, 5)]
        assert got == ref.nbest_encode(text, nbest_size=5), text
    text = "Subword regularization samples segmentations."
    a = ours.encode(text, sample=True, alpha=0.1, seed=11)
    assert a == ours.encode(text, sample=True, alpha=0.1, seed=11)
    variants = {tuple(ours.encode(text, sample=True, alpha=0.1, seed=s)) for s in range(40)}
    assert len(variants) > 5
    for v in variants:  # every sample is a segmentation of the same normalized text
        assert ours.decode(list(v)) == ref.decode(ref.encode(text))
    assert ours.encode(text, sample=True, alpha=0.1, nbest_size=1, seed=3) == ours.encode(text)

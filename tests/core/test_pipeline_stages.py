"""Decoders, post-processors, streaming decode and persistence of the general Pipeline.

Decoders and post-processors are checked against HF tokenizers' components on
the same inputs; streaming is checked against whole decoding for every decoder.
"""

from __future__ import annotations

import json
import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tokenforge
from tokenforge import decoders, postprocessors, pretokenizers
from tokenforge.errors import FileFormatError, SpecialTokenError, UnknownIdError
from tokenforge.models.wordlevel import WordLevel
from tokenforge import AddedToken, Tokenizer

hf = pytest.importorskip("tokenizers")
from tokenizers import decoders as hf_dec  # noqa: E402

DECODERS = [
    ("ByteLevel", decoders.ByteLevel(), lambda: hf_dec.ByteLevel()),
    ("Metaspace", decoders.Metaspace(), lambda: hf_dec.Metaspace()),
    ("Metaspace-never", decoders.Metaspace(prepend_scheme="never"), lambda: hf_dec.Metaspace(prepend_scheme="never")),
    ("WordPiece", decoders.WordPiece(), lambda: hf_dec.WordPiece()),
    ("WordPiece-no-cleanup", decoders.WordPiece(cleanup=False), lambda: hf_dec.WordPiece(cleanup=False)),
    ("ByteFallback", decoders.ByteFallback(), lambda: hf_dec.ByteFallback()),
    ("Fuse", decoders.Fuse(), lambda: hf_dec.Fuse()),
    ("Strip", decoders.Strip(" ", 1, 1), lambda: hf_dec.Strip(" ", 1, 1)),
    ("Replace", decoders.Replace("▁", " "), lambda: hf_dec.Replace("▁", " ")),
    ("BPEDecoder", decoders.BPEDecoder(), lambda: hf_dec.BPEDecoder()),
    ("CTC", decoders.CTC(), lambda: hf_dec.CTC()),
    ("Llama", decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(), decoders.Strip(" ", 1, 0)]),
     lambda: hf_dec.Sequence([hf_dec.Replace("▁", " "), hf_dec.ByteFallback(), hf_dec.Fuse(), hf_dec.Strip(" ", 1, 0)])),
]

TOKEN_LISTS = [
    [], ["▁Hey", "▁", "▁friend"], ["un", "##aff", "##able", "!", "don", "'", "t", ".", "##s"], ["<0xE9>", "<0xBE>", "<0x98>", "x"],
    ["<0xE9>", "<0xBE>", "a", "<0xFF>"], ["Hello", "Ġw", "Ã¶", "rld", "Ċ"], ["  a  ", " b"], ["a</w>", "b", "c</w>"],
    ["<pad>", "h", "h", "<pad>", "|", "i", "|"], ["▁a", "<0x20>", "▁", "▁▁b"], ["▁", "▁", "x"], [" ,", "n't", " 's"],
]




@pytest.mark.parametrize("name,ours,ref", DECODERS, ids=[d[0] for d in DECODERS])
def test_decoder_matches_hf(name, ours, ref):
    r = ref()
    for tokens in TOKEN_LISTS:
        assert ours.decode(tokens) == r.decode(tokens), (name, tokens)
    assert decoders.decoder_from_dict(json.loads(json.dumps(ours.to_dict()))) == ours


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(["▁a", "##b", "<0xE4>", "<0xB8>", "<0xAD>", "c", "▁", "Ġ", "Ã", "¶", "x</w>", "<pad>", "|"]), max_size=12))
def test_decoders_match_hf_on_random_token_lists(tokens):
    for name, ours, ref in DECODERS:
        assert ours.decode(tokens) == ref().decode(tokens), (name, tokens)


def test_metaspace_decoder_drops_every_replacement_of_the_first_token_as_hf():
    assert decoders.Metaspace().decode(["▁▁b", "▁c"]) == "b c"
    assert decoders.Metaspace().decode(["a▁b", "▁▁c"]) == "ab  c"
    assert decoders.Metaspace(prepend_scheme="first").decode(["▁▁b"]) == "b"
    assert decoders.Metaspace(prepend_scheme="never").decode(["▁▁b"]) == "  b"


def _wordlevel_pipeline(decoder, post=None):
    specials = {"[CLS]": 1, "[SEP]": 2, "<s>": 3, "</s>": 4}  # added tokens, outside the model's vocab
    vocab = {"[UNK]": 0}
    for t in ["▁a", "##b", "<0xE4>", "<0xB8>", "<0xAD>", "c", "▁", "Ġ", "Ã", "¶", "x", "hello", "world"]:
        vocab[t] = len(vocab) + len(specials)
    return Tokenizer(
        WordLevel(vocab), pre_tokenizer=pretokenizers.WhitespaceSplit(), decoder=decoder, post_processor=post,
        added_tokens=[AddedToken(t, i) for t, i in specials.items()],
    )


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(5, 17), max_size=14))
def test_streamed_decode_equals_whole_decode_for_every_decoder(ids):
    for name, dec, _ in DECODERS:
        p = _wordlevel_pipeline(dec)
        whole = p.decode(ids)
        streamed = "".join(p.decode_stream(ids))
        if "\ufffd" not in whole:
            assert streamed == whole, (name, ids)
        else:
            # Invalid bytes: HF's ByteFallback replaces a whole invalid run, which a
            # stream cannot know in advance; the stream still never emits a cut character.
            assert streamed.count("\ufffd") <= len(ids), (name, ids)


def test_stream_of_an_invalid_byte_run_keeps_the_characters_that_were_whole():
    p = _wordlevel_pipeline(decoders.Sequence([decoders.ByteFallback(), decoders.Fuse()]))
    ids = [p.token_to_id(t) for t in ("<0xE4>", "<0xB8>", "<0xB8>", "<0xE4>")]
    assert p.decode(ids) == "\ufffd" * 4  # HF: an invalid run becomes one U+FFFD per byte
    assert "".join(p.decode_stream(ids)) == "丸\ufffd"


def test_stream_decoder_holds_a_cut_character_back():
    p = _wordlevel_pipeline(decoders.Sequence([decoders.ByteFallback(), decoders.Fuse()]))
    ids = [p.token_to_id(t) for t in ("<0xE4>", "<0xB8>", "<0xAD>")]
    s = p.stream_decoder()
    assert [s.step(i) for i in ids] == ["", "", "中"]


POST = [
    ("Bert", postprocessors.BertProcessing(("[SEP]", 2), ("[CLS]", 1)),
     lambda: hf.processors.BertProcessing(("[SEP]", 2), ("[CLS]", 1))),
    ("Roberta", postprocessors.RobertaProcessing(("</s>", 4), ("<s>", 3)),
     lambda: hf.processors.RobertaProcessing(("</s>", 4), ("<s>", 3))),
    ("Template", postprocessors.TemplateProcessing("[CLS] $A [SEP]", "[CLS] $A [SEP] $B:1 [SEP]:1", [("[CLS]", 1), ("[SEP]", 2)]),
     lambda: hf.processors.TemplateProcessing(single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
                                              special_tokens=[("[CLS]", 1), ("[SEP]", 2)])),
    ("Llama", postprocessors.TemplateProcessing("<s> $A", "<s> $A <s>:1 $B:1", [("<s>", 3)]),
     lambda: hf.processors.TemplateProcessing(single="<s> $A", pair="<s> $A <s>:1 $B:1", special_tokens=[("<s>", 3)])),
]


@pytest.mark.parametrize("name,ours,ref", POST, ids=[p[0] for p in POST])
def test_post_processor_matches_hf(name, ours, ref):
    from tokenizers import Tokenizer as HFTokenizer
    from tokenizers.models import WordLevel as HFWordLevel
    from tokenizers.pre_tokenizers import WhitespaceSplit

    ours_p = _wordlevel_pipeline(decoders.Fuse(), ours)
    vocab = ours_p.get_vocab()
    r = HFTokenizer(HFWordLevel(vocab, unk_token="[UNK]"))
    r.pre_tokenizer = WhitespaceSplit()
    r.post_processor = ref()
    for a, b in [("hello world", None), ("hello", "world c"), ("", ""), ("zzz", None)]:
        for add in (True, False):
            e = ours_p.encode_full(a, b, add_special_tokens=add)
            h = r.encode(a, b, add_special_tokens=add)
            assert (e.ids, e.type_ids, e.special_tokens_mask, e.offsets) == (h.ids, h.type_ids, h.special_tokens_mask, h.offsets), (name, a, b, add)
            assert ours_p.encode(a, b, add_special_tokens=add) == h.ids
    assert postprocessors.post_processor_from_dict(json.loads(json.dumps(ours.to_dict()))) == ours
    assert postprocessors.post_processor_from_dict(json.loads(r.post_processor.__getstate__())).process_ids([9], [10]) == ours.process_ids([9], [10])


def test_bos_string_in_user_text_is_not_a_second_bos():
    p = _wordlevel_pipeline(decoders.Fuse(), postprocessors.TemplateProcessing("<s> $A", special_tokens=[("<s>", 3)]))
    with pytest.raises(SpecialTokenError, match="<s>"):
        p.encode("<s> hello")
    ids = p.encode("<s> hello", disallowed_special=())
    assert ids.count(3) == 1 and ids[0] == 3
    assert p.encode("hello", add_special_tokens=False) == [p.token_to_id("hello")]


def test_template_errors_name_the_problem():
    with pytest.raises(FileFormatError, match=r"\[SEP\]"):
        postprocessors.TemplateProcessing("[CLS] $A [SEP]", special_tokens=[("[CLS]", 1)])
    with pytest.raises(FileFormatError, match=r"\$A and \$B"):
        postprocessors.TemplateProcessing("[CLS] $A", "[CLS] $A $A:1", special_tokens=[("[CLS]", 1)])
    with pytest.raises(FileFormatError, match=r"\$B"):
        postprocessors.TemplateProcessing("[CLS] $B", special_tokens=[("[CLS]", 1)])
    with pytest.raises(FileFormatError, match="Frob"):
        postprocessors.post_processor_from_dict({"type": "Frob"})
    with pytest.raises(FileFormatError, match="Frob"):
        decoders.decoder_from_dict({"type": "Frob"})


def test_pipeline_round_trips_through_pickle_and_native_file(tmp_path):
    p = _wordlevel_pipeline(decoders.WordPiece(), postprocessors.BertProcessing(("[SEP]", 2), ("[CLS]", 1)))
    q = pickle.loads(pickle.dumps(p))
    assert q == p and q.encode("hello zz world") == p.encode("hello zz world")
    path = tmp_path / "tok.json"
    p.save(str(path))
    r = tokenforge.load(path)
    assert isinstance(r, Tokenizer) and r == p
    first = path.read_bytes()
    r.save(str(path), overwrite=True)
    assert path.read_bytes() == first
    doc = json.loads(first)
    doc["model"]["vocab"]["hello"] = 99
    path.write_text(json.dumps(doc))
    with pytest.raises(FileFormatError, match="model"):
        tokenforge.load(path)


def test_unknown_id_names_the_id_and_position():
    p = _wordlevel_pipeline(decoders.Fuse())
    with pytest.raises(UnknownIdError, match=r"12345.*position 1"):
        p.decode([5, 12345])


def test_added_token_flags_lstrip_rstrip_single_word():
    vocab = {"[UNK]": 0, "a": 1, "b": 2, "<m>": 3, "ab": 4}
    p = Tokenizer(WordLevel(vocab), pre_tokenizer=pretokenizers.WhitespaceSplit(), decoder=decoders.Fuse(),
                 added_tokens=[AddedToken("<m>", 3, special=False, lstrip=True, rstrip=True)])
    e = p.encode_full("a   <m>  b")
    assert e.ids == [1, 3, 2] and e.offsets[1] == (1, 10 - 1)
    q = Tokenizer(WordLevel(vocab), pre_tokenizer=pretokenizers.WhitespaceSplit(), decoder=decoders.Fuse(),
                 added_tokens=[AddedToken("ab", 4, special=False, single_word=True)])
    assert q.encode("ab xaby ab") == [4, 0, 4]


def test_normalized_added_tokens_match_in_normalized_text_like_hf():
    from tokenizers import AddedToken as HFAdded
    from tokenizers import Tokenizer as HFTokenizer
    from tokenizers.models import WordPiece as HFWordPiece
    from tokenizers.normalizers import Lowercase
    from tokenizers.pre_tokenizers import WhitespaceSplit

    ref = HFTokenizer(HFWordPiece({"[UNK]": 0, "hello": 1, "world": 2, "x": 3}, unk_token="[UNK]"))
    ref.normalizer = Lowercase()
    ref.pre_tokenizer = WhitespaceSplit()
    ref.add_tokens([HFAdded("MyTok", normalized=True), HFAdded("RawTok", normalized=False)])
    ours = Tokenizer.from_dict(json.loads(ref.to_str()))
    for text in ["hello MYTOK world", "hello mytok world", "RawTok rawtok RAWTOK", "xMyTokx", "hello"]:
        e, o = ref.encode(text), ours.encode_full(text)
        assert (o.ids, o.offsets) == (e.ids, e.offsets), text
        assert ours.encode(text) == e.ids

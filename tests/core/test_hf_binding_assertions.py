"""HF tokenizers' own Python binding tests, transcribed onto tokenforge's components.

Source: huggingface/tokenizers, ``bindings/python/tests/bindings/`` (``test_normalizers.py``,
``test_pre_tokenizers.py``, ``test_processors.py``, ``test_decoders.py``, ``test_models.py``;
commit 3ba8ad0061a885baf052bbb7bbd22857e73e0c4e). Each test below is named after the HF test
it transcribes and keeps its inputs and expected values; HF's classes become tokenforge's
classes of the same name (HF's ``models.BPE`` is :class:`tokenforge.models.PieceBPE`), and
HF's ``__getstate__`` JSON string is tokenforge's ``to_dict()``.

Not transcribed, because tokenforge's stages are immutable values (equal when their
serialized forms are, safe to share across threads): the ``test_can_modify`` setters and
``Sequence.__setitem__`` (tokenforge builds a new stage instead), HF's ``Normalizer.custom`` /
``PreTokenizer.custom`` wrappers around Python objects (tokenforge's stages are subclassed
directly), the Unigram model's in-model ``alpha``/``nbest_size`` (tokenforge takes them per
call: ``encode(text, sample=True, alpha=...)``), and the tests marked ``network``. The
pre-tokenizer ``Metaspace``'s ``split`` setting is read as ``split_on_replacement``, since
``split(text)`` is every tokenforge pre-tokenizer's method.

These need no HF package: the expected values are HF's, written here.
"""

from __future__ import annotations

import json
import pickle

import pytest

from tokenforge import AddedToken, Tokenizer
from tokenforge import decoders as D
from tokenforge import normalizers as N
from tokenforge import postprocessors as PP
from tokenforge import pretokenizers as P
from tokenforge.models import PieceBPE, WordLevel, WordPiece


def _reloads(component):
    return pickle.loads(pickle.dumps(component))


# ---------------------------------------------------------------------------
# test_normalizers.py


class TestBertNormalizer:
    def test_instantiate(self):
        assert isinstance(N.BertNormalizer(), N.Normalizer)
        assert isinstance(N.BertNormalizer(), N.BertNormalizer)
        assert isinstance(_reloads(N.BertNormalizer()), N.BertNormalizer)

    def test_strip_accents(self):
        normalizer = N.BertNormalizer(strip_accents=True, lowercase=False, handle_chinese_chars=False, clean_text=False)
        assert normalizer.normalize_str("Héllò") == "Hello"

    def test_handle_chinese_chars(self):
        normalizer = N.BertNormalizer(strip_accents=False, lowercase=False, handle_chinese_chars=True, clean_text=False)
        assert normalizer.normalize_str("你好") == " 你  好 "

    def test_clean_text(self):
        normalizer = N.BertNormalizer(strip_accents=False, lowercase=False, handle_chinese_chars=False, clean_text=True)
        assert normalizer.normalize_str("\ufeffHello") == "Hello"

    def test_lowercase(self):
        normalizer = N.BertNormalizer(strip_accents=False, lowercase=True, handle_chinese_chars=False, clean_text=False)
        assert normalizer.normalize_str("Héllò") == "héllò"

    def test_can_read_settings(self):
        normalizer = N.BertNormalizer(clean_text=True, handle_chinese_chars=True, strip_accents=True, lowercase=True)
        assert normalizer.clean_text is True
        assert normalizer.handle_chinese_chars is True
        assert normalizer.strip_accents is True
        assert normalizer.lowercase is True


class TestNormalizerSequence:
    def test_instantiate(self):
        assert isinstance(N.Sequence([]), N.Normalizer)
        assert isinstance(N.Sequence([]), N.Sequence)
        assert isinstance(_reloads(N.Sequence([])), N.Sequence)

    def test_can_make_sequences(self):
        assert N.Sequence([N.Lowercase(), N.Strip()]).normalize_str("  HELLO  ") == "hello"

    def test_get_item(self):
        normalizers = N.Sequence([N.BertNormalizer(True, True), N.Prepend(prepend="test")])
        assert normalizers[0].__class__ == N.BertNormalizer
        assert normalizers[1].__class__ == N.Prepend
        with pytest.raises(IndexError):
            normalizers[2]

    def test_item_getters(self):
        normalizers = N.Sequence([
            N.BertNormalizer(clean_text=True, handle_chinese_chars=True, strip_accents=True, lowercase=True),
            N.Strip(left=True, right=True),
            N.Prepend(prepend="_"),
            N.Replace(pattern="something", content="else"),
        ])
        assert normalizers[0].__class__ == N.BertNormalizer and normalizers[0].lowercase
        assert normalizers[1].__class__ == N.Strip and normalizers[1].left and normalizers[1].right
        assert normalizers[2].__class__ == N.Prepend and normalizers[2].prepend == "_"
        assert normalizers[3].__class__ == N.Replace and normalizers[3].content == "else"


class TestLowercase:
    def test_instantiate(self):
        assert isinstance(N.Lowercase(), N.Normalizer)
        assert isinstance(_reloads(N.Lowercase()), N.Lowercase)

    def test_lowercase(self):
        assert N.Lowercase().normalize_str("HELLO") == "hello"


class TestStrip:
    def test_instantiate(self):
        assert isinstance(N.Strip(), N.Normalizer)
        assert isinstance(_reloads(N.Strip()), N.Strip)

    def test_left_strip(self):
        assert N.Strip(left=True, right=False).normalize_str("  hello  ") == "hello  "

    def test_right_strip(self):
        assert N.Strip(left=False, right=True).normalize_str("  hello  ") == "  hello"

    def test_full_strip(self):
        assert N.Strip(left=True, right=True).normalize_str("  hello  ") == "hello"

    def test_can_read_settings(self):
        normalizer = N.Strip(left=True, right=True)
        assert normalizer.left is True
        assert normalizer.right is True


class TestPrepend:
    def test_instantiate(self):
        assert isinstance(N.Prepend("▁"), N.Normalizer)
        assert isinstance(_reloads(N.Prepend("▁")), N.Prepend)

    def test_prepend(self):
        assert N.Prepend(prepend="▁").normalize_str("hello") == "▁hello"

    def test_can_read_settings(self):
        assert N.Prepend("▁").prepend == "▁"


# ---------------------------------------------------------------------------
# test_pre_tokenizers.py


class TestByteLevelPreTokenizer:
    def test_instantiate(self):
        assert P.ByteLevel(add_prefix_space=True) is not None
        assert isinstance(P.ByteLevel(add_prefix_space=False), P.PreTokenizer)
        assert isinstance(_reloads(P.ByteLevel()), P.ByteLevel)

    def test_has_alphabet(self):
        alphabet = P.ByteLevel.alphabet()
        assert isinstance(alphabet, list)
        assert len(alphabet) == 256
        assert len(set(alphabet)) == 256 and alphabet[ord(" ")] == "Ġ"

    def test_can_read_settings(self):
        assert P.ByteLevel(add_prefix_space=False).add_prefix_space is False

    def test_manual_reload(self):
        byte_level = P.ByteLevel(add_prefix_space=False)
        state = json.loads(json.dumps(byte_level.to_dict()))
        reloaded = P.ByteLevel(**state)
        assert isinstance(reloaded, P.ByteLevel)
        assert reloaded == byte_level


class TestSplit:
    def test_instantiate(self):
        pre_tokenizer = P.Split(pattern=" ", behavior="removed")
        assert isinstance(pre_tokenizer, P.PreTokenizer)
        assert isinstance(_reloads(P.Split(" ", "removed")), P.Split)
        with_invert = P.Split(pattern=" ", behavior="isolated", invert=True)
        assert isinstance(with_invert, P.Split)
        assert isinstance(_reloads(P.Split(" ", "removed", True)), P.Split)


@pytest.mark.parametrize("cls", [P.Whitespace, P.WhitespaceSplit, P.BertPreTokenizer, P.UnicodeScripts])
def test_simple_pre_tokenizers_instantiate(cls):
    assert isinstance(cls(), P.PreTokenizer)
    assert isinstance(_reloads(cls()), cls)


class TestMetaspacePreTokenizer:
    def test_instantiate(self):
        assert P.Metaspace(replacement="-") is not None
        with pytest.raises(ValueError, match="expected a string of length 1"):
            P.Metaspace(replacement="")
        assert P.Metaspace(prepend_scheme="always") is not None
        assert isinstance(_reloads(P.Metaspace()), P.Metaspace)

    def test_can_read_settings(self):
        pretok = P.Metaspace(replacement="$", prepend_scheme="never")
        assert pretok.replacement == "$"
        assert pretok.prepend_scheme == "never"
        assert pretok.split_on_replacement is True


class TestCharDelimiterSplit:
    def test_instantiate(self):
        assert P.CharDelimiterSplit("-") is not None
        with pytest.raises(ValueError, match="expected a string of length 1"):
            P.CharDelimiterSplit("")
        assert isinstance(_reloads(P.CharDelimiterSplit("-")), P.CharDelimiterSplit)

    def test_can_read_settings(self):
        assert P.CharDelimiterSplit("@").delimiter == "@"


class TestPunctuation:
    def test_instantiate(self):
        assert P.Punctuation("removed") is not None
        assert isinstance(_reloads(P.Punctuation()), P.Punctuation)


class TestPreTokenizerSequence:
    def test_instantiate(self):
        assert isinstance(P.Sequence([]), P.PreTokenizer)
        assert isinstance(_reloads(P.Sequence([])), P.Sequence)

    def test_bert_like(self):
        pre_tokenizer = P.Sequence([P.WhitespaceSplit(), P.Punctuation()])
        assert isinstance(_reloads(pre_tokenizer), P.Sequence)
        assert pre_tokenizer.pre_tokenize_str("Hey friend!     How are you?!?") == [
            ("Hey", (0, 3)), ("friend", (4, 10)), ("!", (10, 11)), ("How", (16, 19)), ("are", (20, 23)),
            ("you", (24, 27)), ("?", (27, 28)), ("!", (28, 29)), ("?", (29, 30)),
        ]  # fmt: skip

    def test_get_item(self):
        pre_tokenizers = P.Sequence([P.ByteLevel(), P.Split(pattern="/test/", behavior="removed")])
        assert pre_tokenizers[0].__class__ == P.ByteLevel
        assert pre_tokenizers[1].__class__ == P.Split
        with pytest.raises(IndexError):
            pre_tokenizers[2]

    def test_item_getters(self):
        pre_tokenizers = P.Sequence([
            P.ByteLevel(add_prefix_space=True, trim_offsets=True, use_regex=True),
            P.Split(pattern="/test/", behavior="isolated", invert=True),
            P.Metaspace("a", "never", split=False),
            P.CharDelimiterSplit(delimiter=" "),
            P.Punctuation(behavior="removed"),
            P.Digits(individual_digits=True),
        ])
        assert pre_tokenizers[0].__class__ == P.ByteLevel
        assert pre_tokenizers[0].add_prefix_space and pre_tokenizers[0].trim_offsets and pre_tokenizers[0].use_regex
        assert pre_tokenizers[1].__class__ == P.Split
        assert pre_tokenizers[1].behavior == "isolated" and pre_tokenizers[1].invert
        assert pre_tokenizers[2].__class__ == P.Metaspace
        assert (pre_tokenizers[2].replacement, pre_tokenizers[2].prepend_scheme) == ("a", "never")
        assert pre_tokenizers[3].__class__ == P.CharDelimiterSplit and pre_tokenizers[3].delimiter == " "
        assert pre_tokenizers[4].__class__ == P.Punctuation and pre_tokenizers[4].behavior == "removed"
        assert pre_tokenizers[5].__class__ == P.Digits and pre_tokenizers[5].individual_digits


class TestDigits:
    def test_instantiate(self):
        assert isinstance(P.Digits(True), P.Digits)
        assert isinstance(P.Digits(False), P.Digits)
        assert isinstance(_reloads(P.Digits()), P.Digits)

    def test_can_read_settings(self):
        assert P.Digits(individual_digits=False).individual_digits is False
        assert P.Digits(individual_digits=True).individual_digits is True


class TestFixedLength:
    def test_instantiate(self):
        assert isinstance(_reloads(P.FixedLength()), P.FixedLength)

    def test_pre_tokenize_str(self):
        pretok = P.FixedLength(length=5)
        assert pretok.length == 5
        assert pretok.pre_tokenize_str("ATCCTGGTACTG") == [("ATCCT", (0, 5)), ("GGTAC", (5, 10)), ("TG", (10, 12))]
        pretok = P.FixedLength(length=10)
        assert pretok.length == 10
        assert pretok.pre_tokenize_str("ATCCTGGTACTG") == [("ATCCTGGTAC", (0, 10)), ("TG", (10, 12))]


# ---------------------------------------------------------------------------
# test_processors.py


def _tokenizer(specials: list[str], words: list[str], post) -> Tokenizer:
    """HF's ``Tokenizer(BPE())`` with ``add_special_tokens(specials)`` then ``add_tokens(words)``."""
    added = [AddedToken(t, i, special=True) for i, t in enumerate(specials)]
    added += [AddedToken(t, len(specials) + i, special=False, normalized=True) for i, t in enumerate(words)]
    return Tokenizer(PieceBPE({}), added_tokens=added, post_processor=post)


class TestBertProcessing:
    def test_instantiate(self):
        processor = PP.BertProcessing(("[SEP]", 0), ("[CLS]", 1))
        assert isinstance(processor, PP.PostProcessor)
        assert isinstance(_reloads(processor), PP.BertProcessing)

    def test_processing(self):
        tok = _tokenizer(["[SEP]", "[CLS]"], ["my", "name", "is", "john", "pair"], PP.BertProcessing(("[SEP]", 0), ("[CLS]", 1)))
        output = tok.encode_full("my name", "pair")
        assert output.tokens == ["[CLS]", "my", "name", "[SEP]", "pair", "[SEP]"]
        assert output.ids == [1, 2, 3, 0, 6, 0]


class TestRobertaProcessing:
    def test_instantiate(self):
        processor = PP.RobertaProcessing(("</s>", 1), ("<s>", 0))
        assert isinstance(processor, PP.PostProcessor)
        assert isinstance(_reloads(processor), PP.RobertaProcessing)

    def test_processing(self):
        tok = _tokenizer(["<s>", "</s>"], ["my", "name", "is", "john", "pair"], PP.RobertaProcessing(("</s>", 1), ("<s>", 0)))
        output = tok.encode_full("my name", "pair")
        assert output.tokens == ["<s>", "my", "name", "</s>", "</s>", "pair", "</s>"]
        assert output.ids == [0, 2, 3, 1, 1, 6, 1]


class TestByteLevelProcessing:
    def test_instantiate(self):
        assert PP.ByteLevel(trim_offsets=True) is not None
        assert PP.ByteLevel(add_prefix_space=True) is not None
        assert isinstance(_reloads(PP.ByteLevel()), PP.ByteLevel)

    def test_manual_reload(self):
        byte_level = PP.ByteLevel(trim_offsets=False)
        reloaded = PP.ByteLevel(**json.loads(json.dumps(byte_level.to_dict())))
        assert isinstance(reloaded, PP.ByteLevel)
        assert reloaded == byte_level


def _bert_template():
    return PP.TemplateProcessing(
        single=["[CLS]", "$0", "[SEP]"],
        pair=["[CLS]", "$A", "[SEP]", "$B:1", "[SEP]:1"],
        special_tokens=[("[CLS]", 1), ("[SEP]", 0)],
    )


def _roberta_template():
    return PP.TemplateProcessing(
        single="<s> $0 </s>",
        pair="<s> $A </s> </s> $B </s>",
        special_tokens=[("<s>", 0), ("</s>", 1)],
    )


def _t5_squad_template():
    return PP.TemplateProcessing(
        single=["$0"],
        pair=["Q", "$A", "C", "$B"],
        special_tokens=[
            {"id": "Q", "ids": [2625, 10], "tokens": ["_question", ":"]},
            {"id": "C", "ids": [822, 10], "tokens": ["_context", ":"]},
        ],
    )


class TestTemplateProcessing:
    def test_instantiate(self):
        bert = _bert_template()
        assert isinstance(bert, PP.PostProcessor)
        assert isinstance(_reloads(bert), PP.TemplateProcessing)
        assert _roberta_template() is not None
        assert _t5_squad_template() is not None
        # It is absolutely legal to have tokens with spaces in the name:
        PP.TemplateProcessing(
            single=["[ C L S ]", "Token with space"],
            special_tokens=[("[ C L S ]", 0), ("Token with space", 1)],
        )
        # Sequence identifiers must be well formed:
        with pytest.raises(Exception, match="Cannot build Piece"):
            PP.TemplateProcessing(single="[CLS] $$ [SEP]")
        with pytest.raises(Exception, match="Cannot build Piece"):
            PP.TemplateProcessing(single="[CLS] $A: [SEP]")
        # Special tokens must be provided when used in template:
        with pytest.raises(Exception, match="Missing SpecialToken\\(s\\) with id\\(s\\)"):
            PP.TemplateProcessing(single=["[CLS]"])

    def test_t5_squad_template_puts_in_every_id_of_a_named_token(self):
        t5 = _t5_squad_template()
        assert t5.process_ids([7], [8]) == [2625, 10, 7, 822, 10, 8]
        assert t5.process_ids([7]) == [7]

    def test_bert_parity(self):
        words = ["my", "name", "is", "john", "pair"]
        original = _tokenizer(["[SEP]", "[CLS]"], words, PP.BertProcessing(("[SEP]", 0), ("[CLS]", 1)))
        template = _tokenizer(["[SEP]", "[CLS]"], words, _bert_template())
        assert original.encode("my name", "pair") == template.encode("my name", "pair")

    def test_roberta_parity(self):
        words = ["my", "name", "is", "john", "pair"]
        original = _tokenizer(["<s>", "</s>"], words, PP.RobertaProcessing(("</s>", 1), ("<s>", 0)))
        template = _tokenizer(["<s>", "</s>"], words, _roberta_template())
        assert original.encode("my name is john", "pair") == template.encode("my name is john", "pair")


class TestSequenceProcessing:
    def test_sequence_processing(self):
        assert PP.Sequence([]) is not None
        assert PP.Sequence([PP.ByteLevel()]) is not None
        assert isinstance(PP.Sequence([]), PP.PostProcessor)
        assert isinstance(_reloads(PP.Sequence([])), PP.Sequence)

    def test_post_process(self):
        template = PP.TemplateProcessing(
            single=["[CLS]", "$0", "[SEP]"],
            pair=["[CLS]:0", "$A", "[SEP]:0", "$B:1", "[SEP]:1"],
            special_tokens=[("[CLS]", 1), ("[SEP]", 0)],
        )
        words = ["my", "name", "is", "Ġjohn", "pair"]
        tok = _tokenizer(["[SEP]", "[CLS]"], words, template)
        original = tok.encode_full("my name is Ġjohn")
        assert original.ids == [1, 2, 3, 4, 5, 0]
        assert original.type_ids == [0, 0, 0, 0, 0, 0]
        assert original.offsets == [(0, 0), (0, 2), (3, 7), (8, 10), (11, 16), (0, 0)]
        pair = tok.encode_full("my name is Ġjohn", "pair")
        assert pair.type_ids == [0, 0, 0, 0, 0, 0, 1, 1]
        assert pair.offsets == [(0, 0), (0, 2), (3, 7), (8, 10), (11, 16), (0, 0), (0, 4), (0, 0)]

        tok = _tokenizer(["[SEP]", "[CLS]"], words, PP.Sequence([PP.ByteLevel(trim_offsets=True), template]))
        original = tok.encode_full("my name is Ġjohn")
        assert original.ids == [1, 2, 3, 4, 5, 0]
        assert original.type_ids == [0, 0, 0, 0, 0, 0]
        # Offsets ARE trimmed
        assert original.offsets == [(0, 0), (0, 2), (3, 7), (8, 10), (12, 16), (0, 0)]
        pair = tok.encode_full("my name is Ġjohn", "pair")
        assert pair.type_ids == [0, 0, 0, 0, 0, 0, 1, 1]
        assert pair.offsets == [(0, 0), (0, 2), (3, 7), (8, 10), (12, 16), (0, 0), (0, 4), (0, 0)]

    def test_items(self):
        processors = PP.Sequence([PP.RobertaProcessing(("</s>", 1), ("<s>", 0)), PP.ByteLevel()])
        assert processors[0].__class__ == PP.RobertaProcessing
        assert processors[1].__class__ == PP.ByteLevel
        byte_level = PP.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False)
        assert (byte_level.add_prefix_space, byte_level.trim_offsets, byte_level.use_regex) == (False, False, False)


# ---------------------------------------------------------------------------
# test_decoders.py


class TestByteLevelDecoder:
    def test_instantiate(self):
        assert isinstance(D.ByteLevel(), D.Decoder)
        assert isinstance(_reloads(D.ByteLevel()), D.ByteLevel)

    def test_decoding(self):
        assert D.ByteLevel().decode(["My", "Ġname", "Ġis", "ĠJohn"]) == "My name is John"

    def test_manual_reload(self):
        state = json.loads(json.dumps(D.ByteLevel().to_dict()))
        reloaded = D.ByteLevel(**state)
        assert isinstance(reloaded, D.ByteLevel)
        assert reloaded == D.ByteLevel()


class TestReplaceDecoder:
    def test_instantiate(self):
        assert isinstance(D.Replace("_", " "), D.Decoder)

    def test_decoding(self):
        assert D.Replace("_", " ").decode(["My", "_name", "_is", "_John"]) == "My name is John"


class TestWordPieceDecoder:
    def test_instantiate(self):
        assert D.WordPiece(prefix="__") is not None
        assert D.WordPiece(cleanup=True) is not None
        assert isinstance(_reloads(D.WordPiece()), D.WordPiece)

    def test_decoding(self):
        decoder = D.WordPiece()
        assert decoder.decode(["My", "na", "##me", "is", "Jo", "##hn"]) == "My name is John"
        assert decoder.decode(["I", "'m", "Jo", "##hn"]) == "I'm John"
        decoder = D.WordPiece(prefix="__", cleanup=False)
        assert decoder.decode(["My", "na", "__me", "is", "Jo", "__hn"]) == "My name is John"
        assert decoder.decode(["I", "'m", "Jo", "__hn"]) == "I 'm John"

    def test_can_read_settings(self):
        decoder = D.WordPiece(prefix="$$", cleanup=False)
        assert decoder.prefix == "$$"
        assert decoder.cleanup is False


class TestByteFallbackDecoder:
    def test_instantiate(self):
        assert isinstance(_reloads(D.ByteFallback()), D.ByteFallback)

    def test_decoding(self):
        decoder = D.ByteFallback()
        assert decoder.decode(["My", " na", "me"]) == "My name"
        assert decoder.decode(["<0x61>"]) == "a"
        assert decoder.decode(["<0xE5>"]) == "�"
        assert decoder.decode(["<0xE5>", "<0x8f>"]) == "��"
        assert decoder.decode(["<0xE5>", "<0x8f>", "<0xab>"]) == "叫"
        assert decoder.decode(["<0xE5>", "<0x8f>", "a"]) == "��a"
        assert decoder.decode(["<0xE5>", "<0x8f>", "<0xab>", "a"]) == "叫a"


class TestFuseDecoder:
    def test_instantiate(self):
        assert isinstance(_reloads(D.Fuse()), D.Fuse)

    def test_decoding(self):
        assert D.Fuse().decode(["My", " na", "me"]) == "My name"


class TestStripDecoder:
    def test_instantiate(self):
        assert D.Strip(left=0, right=0) is not None
        assert isinstance(D.Strip(content="_", left=0, right=0), D.Decoder)
        assert isinstance(_reloads(D.Strip(content="_", left=0, right=0)), D.Strip)

    def test_decoding(self):
        assert D.Strip(content="_", left=1, right=0).decode(["_My", " na", "me", " _-", "__-"]) == "My name _-_-"


class TestMetaspaceDecoder:
    def test_instantiate(self):
        assert D.Metaspace(replacement="-") is not None
        with pytest.raises(ValueError, match="expected a string of length 1"):
            D.Metaspace(replacement="")
        assert D.Metaspace(prepend_scheme="always") is not None
        assert isinstance(_reloads(D.Metaspace()), D.Metaspace)

    def test_decoding(self):
        assert D.Metaspace().decode(["▁My", "▁name", "▁is", "▁John"]) == "My name is John"
        decoder = D.Metaspace(replacement="-", prepend_scheme="never")
        assert decoder.decode(["-My", "-name", "-is", "-John"]) == " My name is John"

    def test_can_read_settings(self):
        decoder = D.Metaspace(replacement="*", prepend_scheme="never")
        assert decoder.replacement == "*"
        assert decoder.prepend_scheme == "never"


class TestBPEDecoder:
    def test_instantiate(self):
        assert D.BPEDecoder(suffix="_") is not None
        assert isinstance(_reloads(D.BPEDecoder()), D.BPEDecoder)

    def test_decoding(self):
        assert D.BPEDecoder().decode(["My</w>", "na", "me</w>", "is</w>", "Jo", "hn</w>"]) == "My name is John"
        assert D.BPEDecoder(suffix="_").decode(["My_", "na", "me_", "is_", "Jo", "hn_"]) == "My name is John"

    def test_can_read_settings(self):
        assert D.BPEDecoder(suffix="123").suffix == "123"


class TestCTCDecoder:
    def test_instantiate(self):
        assert D.CTC(pad_token="[PAD]") is not None
        assert isinstance(_reloads(D.CTC()), D.CTC)

    def test_decoding(self):
        tokens = ["<pad>", "<pad>", "h", "e", "e", "l", "l", "<pad>", "l", "o", "o", "o", "<pad>"]
        assert D.CTC().decode(tokens) == "hello"
        tokens = ["[PAD]", "[PAD]", "h", "e", "e", "l", "l", "[PAD]", "l", "o", "o", "o", "[PAD]"]
        assert D.CTC(pad_token="[PAD]").decode(tokens) == "hello"

    def test_can_read_settings(self):
        decoder = D.CTC(pad_token="[PAD]")
        assert decoder.pad_token == "[PAD]"
        assert decoder.word_delimiter_token == "|"
        assert decoder.cleanup is True


class TestSequenceDecoder:
    def test_instantiate(self):
        assert D.Sequence([D.CTC()]) is not None
        assert isinstance(D.Sequence([]), D.Decoder)
        assert isinstance(_reloads(D.Sequence([])), D.Sequence)

    def test_decoding(self):
        decoder = D.Sequence([D.CTC(), D.Metaspace()])
        assert decoder.decode(["▁", "▁", "H", "H", "i", "i", "▁", "y", "o", "u"]) == "Hi you"

    def test_get_item(self):
        decoder = D.Sequence([D.CTC(), D.Metaspace()])
        assert decoder[0].__class__ == D.CTC and decoder[1].__class__ == D.Metaspace
        with pytest.raises(IndexError):
            decoder[2]


# ---------------------------------------------------------------------------
# test_models.py


class TestBPEModel:
    def test_can_read_settings(self):
        model = PieceBPE(
            {},
            dropout=0.5,
            unk_token="[UNK]",
            continuing_subword_prefix="__prefix__",
            end_of_word_suffix="__suffix__",
            fuse_unk=False,
        )
        assert model.dropout == 0.5
        assert model.unk_token == "[UNK]"
        assert model.continuing_subword_prefix == "__prefix__"
        assert model.end_of_word_suffix == "__suffix__"
        assert model.fuse_unk is False
        assert model.byte_fallback is False

    def test_dropout_zero(self):
        assert PieceBPE({}, dropout=0.0).dropout == 0.0


class TestWordPieceModel:
    def test_instantiate(self):
        vocab = {"a": 0, "b": 1, "ab": 2, "[UNK]": 3}
        assert isinstance(WordPiece(vocab), WordPiece)
        assert isinstance(pickle.loads(pickle.dumps(WordPiece(vocab))), WordPiece)

    def test_can_read_settings(self):
        model = WordPiece({"<oov>": 0}, unk_token="<oov>", continuing_subword_prefix="__prefix__", max_input_chars_per_word=200)
        assert model.unk_token == "<oov>"
        assert model.continuing_subword_prefix == "__prefix__"
        assert model.max_input_chars_per_word == 200


class TestWordLevelModel:
    def test_instantiate(self):
        vocab = {"a": 0, "b": 1, "ab": 2}
        assert isinstance(WordLevel(vocab), WordLevel)

    def test_can_read_settings(self):
        assert WordLevel({"<oov>": 0}, unk_token="<oov>").unk_token == "<oov>"

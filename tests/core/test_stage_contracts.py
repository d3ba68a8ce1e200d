"""The stages' contracts: one abstract base per stage, one registry of ``"type"`` tags.

Every registered class round-trips ``to_dict`` -> registry ``from_dict``; every
concrete stage subclasses its stage's base; an unknown ``"type"`` is a
:class:`~tokenforge.errors.FileFormatError` that names it and lists the known ones.
"""

from __future__ import annotations

import inspect
import math

import pytest

from tokenforge.sentencepiece.normalizer import SentencePieceNormalizer
from tokenforge import decoders, normalizers, postprocessors, pretokenizers
from tokenforge._component import Component, Registry
from tokenforge.errors import FileFormatError
from tokenforge.models import MODELS, BPE, Model, PieceBPE, Unigram, WordLevel, WordPiece, model_from_dict
from tokenforge.models.wordlevel import PieceLookup
from tokenforge.tokenizer import Tokenizer

#: One example per registered tag (every tag must have one).
EXAMPLES = {
    "normalizer": {
        "Identity": lambda: normalizers.Identity(),
        "NFC": lambda: normalizers.NFC(),
        "NFD": lambda: normalizers.NFD(),
        "NFKC": lambda: normalizers.NFKC(),
        "NFKD": lambda: normalizers.NFKD(),
        "Lowercase": lambda: normalizers.Lowercase(),
        "StripAccents": lambda: normalizers.StripAccents(),
        "BertNormalizer": lambda: normalizers.BertNormalizer(lowercase=False),
        "Replace": lambda: normalizers.Replace(" ", "\u2581"),
        "Prepend": lambda: normalizers.Prepend("\u2581"),
        "Strip": lambda: normalizers.Strip(left=False),
        "Sequence": lambda: normalizers.Sequence([normalizers.NFC(), normalizers.Lowercase()]),
        "Precompiled": lambda: normalizers.Precompiled("nmt_nfkc"),
        "SentencePiece": lambda: SentencePieceNormalizer("nmt_nfkc", add_dummy_prefix=False),
        "ByteLevel": lambda: normalizers.ByteLevel(),
        "Nmt": lambda: normalizers.Nmt(),
    },
    "pre_tokenizer": {
        "regex": lambda: pretokenizers.RegexSplit("cl100k_base"),
        "Split": lambda: pretokenizers.Split(" ", "merged_with_next", regex_pattern=False),
        "Whitespace": lambda: pretokenizers.Whitespace(),
        "WhitespaceSplit": lambda: pretokenizers.WhitespaceSplit(),
        "BertPreTokenizer": lambda: pretokenizers.BertPreTokenizer(),
        "Punctuation": lambda: pretokenizers.Punctuation("contiguous"),
        "Digits": lambda: pretokenizers.Digits(individual_digits=True),
        "CharDelimiterSplit": lambda: pretokenizers.CharDelimiterSplit("|"),
        "FixedLength": lambda: pretokenizers.FixedLength(3),
        "UnicodeScripts": lambda: pretokenizers.UnicodeScripts(),
        "Metaspace": lambda: pretokenizers.Metaspace(prepend_scheme="first"),
        "ByteLevel": lambda: pretokenizers.ByteLevel(add_prefix_space=False),
        "Sequence": lambda: pretokenizers.Sequence([pretokenizers.WhitespaceSplit(), pretokenizers.Digits(True)]),
    },
    "model": {
        "bpe": lambda: BPE.from_ranks({bytes([i]): i for i in range(256)} | {b"ab": 256}),
        "BPE": lambda: PieceBPE({"a": 0, "b": 1, "ab": 2, "<unk>": 3}, [("a", "b")], unk_token="<unk>"),
        "SentencePieceBPE": lambda: PieceBPE.from_sentencepiece(["<unk>", "a", "b", "ab"], [0.0, -1.0, -2.0, -0.5]),
        "WordPiece": lambda: WordPiece({"[UNK]": 0, "a": 1, "##b": 2}),
        "Unigram": lambda: Unigram([("<unk>", 0.0), ("a", math.log(0.5)), ("b", math.log(0.25))]),
        "WordLevel": lambda: WordLevel({"[UNK]": 0, "a": 1}),
        "PieceLookup": lambda: PieceLookup(["<unk>", "\u2581a", "b"], [2, 1, 4], unit="char"),
    },
    "post_processor": {
        "TemplateProcessing": lambda: postprocessors.TemplateProcessing(
            "[CLS] $A [SEP]", special_tokens=[("[CLS]", 1), ("[SEP]", 2)]
        ),
        "BertProcessing": lambda: postprocessors.BertProcessing(),
        "RobertaProcessing": lambda: postprocessors.RobertaProcessing(trim_offsets=False),
        "ByteLevel": lambda: postprocessors.ByteLevel(),
        "EosProcessing": lambda: postprocessors.EosProcessing(("</s>", 1)),
        "Sequence": lambda: postprocessors.Sequence([postprocessors.ByteLevel(), postprocessors.BertProcessing()]),
    },
    "decoder": {
        "ByteLevel": lambda: decoders.ByteLevel(),
        "Metaspace": lambda: decoders.Metaspace(prepend_scheme="never"),
        "WordPiece": lambda: decoders.WordPiece(cleanup=True),
        "ByteFallback": lambda: decoders.ByteFallback(),
        "Fuse": lambda: decoders.Fuse(),
        "Strip": lambda: decoders.Strip(" ", 1, 0),
        "Replace": lambda: decoders.Replace("\u2581", " "),
        "BPEDecoder": lambda: decoders.BPEDecoder(),
        "CTC": lambda: decoders.CTC(cleanup=False),
        "SentencePiece": lambda: decoders.SentencePiece(control=["<s>"]),
        "Sequence": lambda: decoders.Sequence([decoders.ByteFallback(), decoders.Fuse()]),
    },
}

REGISTRIES: dict[str, tuple[Registry, type]] = {
    "normalizer": (normalizers.NORMALIZERS, normalizers.Normalizer),
    "pre_tokenizer": (pretokenizers.PRE_TOKENIZERS, pretokenizers.PreTokenizer),
    "model": (MODELS, Model),
    "post_processor": (postprocessors.POST_PROCESSORS, postprocessors.PostProcessor),
    "decoder": (decoders.DECODERS, decoders.Decoder),
}
FROM_DICT = {
    "normalizer": normalizers.normalizer_from_dict,
    "pre_tokenizer": pretokenizers.pre_tokenizer_from_dict,
    "model": model_from_dict,
    "post_processor": postprocessors.post_processor_from_dict,
    "decoder": decoders.decoder_from_dict,
}
CASES = [(stage, tag) for stage, (registry, _base) in REGISTRIES.items() for tag in registry.known()]


def test_every_registered_tag_has_an_example():
    for stage, (registry, _base) in REGISTRIES.items():
        assert sorted(EXAMPLES[stage]) == registry.known(), stage


@pytest.mark.parametrize("stage,tag", CASES)
def test_a_registered_stage_round_trips(stage, tag):
    registry, base = REGISTRIES[stage]
    obj = EXAMPLES[stage][tag]()
    assert isinstance(obj, base)
    d = obj.to_dict()
    assert d["type"] == tag
    assert isinstance(obj, registry.lookup(tag))
    for back in (registry.from_dict(d), FROM_DICT[stage](d)):
        assert type(back) is type(obj)
        assert back.to_dict() == d
        if isinstance(obj, Component):
            assert back == obj and hash(back) == hash(obj)


@pytest.mark.parametrize("stage", sorted(REGISTRIES))
def test_an_unknown_type_is_named(stage):
    registry, _base = REGISTRIES[stage]
    with pytest.raises(FileFormatError, match=r"unknown \S+ type 'NoSuchThing'; known: .*") as info:
        FROM_DICT[stage]({"type": "NoSuchThing"})
    for tag in registry.known():
        assert tag in str(info.value)


@pytest.mark.parametrize("stage", sorted(REGISTRIES))
def test_a_non_object_is_a_file_format_error(stage):
    with pytest.raises(FileFormatError):
        FROM_DICT[stage]([1, 2])


def test_none_stays_none_for_the_optional_stages():
    for stage in ("normalizer", "pre_tokenizer", "post_processor", "decoder"):
        assert FROM_DICT[stage](None) is None


def _concrete_subclasses(base: type) -> list[type]:
    out, todo = [], [base]
    while todo:
        for sub in todo.pop().__subclasses__():
            todo.append(sub)
            # private intermediate bases (``_UnicodeForm``) are not stages of their own
            if not inspect.isabstract(sub) and sub.__module__.startswith("tokenforge.") and not sub.__name__.startswith("_"):
                out.append(sub)
    return out


@pytest.mark.parametrize("stage", sorted(REGISTRIES))
def test_every_concrete_stage_subclasses_its_base_and_is_registered(stage):
    registry, base = REGISTRIES[stage]
    assert inspect.isabstract(base)
    concrete = _concrete_subclasses(base)
    assert concrete
    registered = {registry.lookup(tag) for tag in registry.known()}
    assert set(concrete) <= registered, sorted(c.__name__ for c in set(concrete) - registered)


def test_the_stage_classes_of_each_module_subclass_their_base():
    for module, base in (
        (normalizers, normalizers.Normalizer), (pretokenizers, pretokenizers.PreTokenizer),
        (postprocessors, postprocessors.PostProcessor), (decoders, decoders.Decoder),
    ):
        for name, obj in vars(module).items():
            if isinstance(obj, type) and obj.__module__ == module.__name__ and hasattr(obj, "to_dict"):
                assert issubclass(obj, base), f"{module.__name__}.{name}"
    for cls in (BPE, PieceBPE, WordPiece, Unigram, WordLevel):
        assert issubclass(cls, Model)


def test_the_pre_tokenizer_entry_points():
    """``pre_tokenize`` is the contract; ``split`` is its strings; ``pre_tokenize_str`` is HF's view."""
    for tag, make in EXAMPLES["pre_tokenizer"].items():
        pre = make()
        for text in ("Hello  world 2024!", " a|b ", ""):
            for first in (True, False):
                pieces = pre.pre_tokenize(text, first)
                assert pre.split(text, first) == [p.text for p in pieces], (tag, text, first)
            assert pre.pre_tokenize_str(text) == [(p.text, p.offsets) for p in pre.pre_tokenize(text)]
        for gone in ("split_text", "split_pieces"):
            assert not hasattr(pre, gone), (tag, gone)


def test_the_old_hf_model_without_type_still_loads():
    assert isinstance(model_from_dict({"vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]}), PieceBPE)
    assert isinstance(
        model_from_dict({"vocab": {"[UNK]": 0}, "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                         "max_input_chars_per_word": 100}),
        WordPiece,
    )


def test_the_tokenizer_checks_its_model_is_a_model():
    class Duck:
        def encode_piece(self, piece): return []
        def tokenize(self, piece): return []
        def id_to_token(self, i): return None
        def token_to_id(self, t): return None
        def get_vocab(self): return {}
        def to_dict(self): return {}

    with pytest.raises(TypeError, match="got Duck"):
        Tokenizer(Duck())

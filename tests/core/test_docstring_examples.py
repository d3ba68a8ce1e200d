"""The ``>>>`` examples in the docstrings run and give what they show."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "tokenforge",
    "tokenforge.bytelevel",
    "tokenforge.pretokenizers",
    "tokenforge.models.bpe",
    "tokenforge.tokenizer",
    "tokenforge.decoders",
    "tokenforge.encodings",
    "tokenforge.trainers.bpe",
    "tokenforge.sentencepiece.constants",
    "tokenforge.sentencepiece.proto",
    "tokenforge.sentencepiece.charsmap",
    "tokenforge.sentencepiece.normalizer",
    "tokenforge.trainers.coverage",
    "tokenforge.trainers.spm_bpe",
    "tokenforge.postprocessors",
    "tokenforge.encoding",
    "tokenforge._plans",
    "tokenforge.io",
    "tokenforge.models.wordlevel",
    "tokenforge.normalizers",
    "tokenforge.models.wordpiece",
    "tokenforge.models.unigram",
    "tokenforge.trainers.unigram",
    "tokenforge.trainers.wordpiece",
    "tokenforge.formats.bert_vocab",
    "tokenforge.formats.gguf",
    "tokenforge.gguf",
    "tokenforge.analysis.metrics",
    "tokenforge.analysis.accounting",
    "tokenforge.analysis.compare",
    "tokenforge.analysis.offsets",
    "tokenforge.analysis.extend",
    "tokenforge.chat",
    "tokenforge.analysis.explain",
    "tokenforge.analysis.glitch",
    "tokenforge.analysis.healing",
    "tokenforge.prepare.job",
    "tokenforge.prepare.reader",
    "tokenforge.fingerprint",
    "tokenforge.analysis.align",
    "tokenforge.analysis.residues",
    "tokenforge.analysis.transplant",
    "tokenforge.analysis.diff",
    "tokenforge.analysis.canonical",
    "tokenforge.analysis.covers",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
    assert result.attempted > 0, f"{name} has no examples"

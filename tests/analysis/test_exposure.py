"""Which control tokens plain text can produce (``tokenforge info --specials``)."""

from __future__ import annotations

import json

import pytest

import tokenforge
from tokenforge.analysis import special_exposure
from tokenforge.cli import main


def test_albert_tokenizer_json_exposes_its_control_pieces_as_hf_does(shared_data):
    tokenizers = pytest.importorskip("tokenizers")
    path = shared_data / "vocab" / "hf" / "albert-base-v2_spiece_unigram_tokenizer.json"
    tok = tokenforge.load(path)
    rows = {r.token: r for r in special_exposure(tok)}
    assert rows["[CLS]"].in_text == rows["[SEP]"].in_text == "REACHABLE"
    hf = tokenizers.Tokenizer.from_file(str(path))
    ids = hf.encode("[CLS] hi [SEP]", add_special_tokens=False).ids
    assert tok.encode("[CLS] hi [SEP]", add_special_tokens=False) == ids and 2 in ids and 3 in ids


def test_guarded_and_textual_control_tokens(shared_data):
    rows = special_exposure(tokenforge.get_encoding("cl100k_base"))
    assert rows and all(r.in_text == "guarded" for r in rows)
    spm = special_exposure(tokenforge.load(shared_data / "vocab" / "sentencepiece" / "mistral_v1_tokenizer.model"))
    assert {r.token: r.in_text for r in spm}["<s>"] == "text"


def test_cli_info_specials(shared_data, capsys):
    path = str(shared_data / "vocab" / "hf" / "albert-base-v2_spiece_unigram_tokenizer.json")
    assert main(["info", "--specials", "-t", path]) == 0
    out = capsys.readouterr().out
    assert "[CLS]" in out and "REACHABLE" in out and "can be produced by plain text" in out
    assert main(["info", "--specials", "--json", "-t", "gpt2"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["in_text"] == "guarded"

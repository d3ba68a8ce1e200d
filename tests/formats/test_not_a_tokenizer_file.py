"""A file that is none of the formats ``load`` reads is named as such, with the list of
formats; a ``.txt`` is a BERT ``vocab.txt`` only when it looks like one; ``format=`` (and
``-t FORMAT:PATH``) reads a file as a named format whatever its name."""

from __future__ import annotations

import pytest

import tokenforge
from tokenforge.io import detect_format, open_tokenizer

PROSE = "Meeting notes, Tuesday.\nWe agreed to ship the tokenizer next week.\n"
BERT_VOCAB = "\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "##s", "hat", "in"]) + "\n"


@pytest.mark.parametrize("name", ["notes.txt", "notes", "README", "data.csv"])
def test_a_plain_text_file_is_not_a_tokenizer_file_and_the_error_lists_the_formats(tmp_path, name):
    path = tmp_path / name
    path.write_text(PROSE, encoding="utf-8")
    with pytest.raises(tokenforge.FileFormatError) as info:
        tokenforge.load(path)
    message = str(info.value)
    assert message.startswith(f"{path}: not a tokenizer file; tokenforge reads:")
    for kind in ("tokenizer.json", "*.tiktoken", "vocab.json + merges.txt", "*.model", "vocab.txt", "*.gguf"):
        assert kind in message
    assert "format=" in message and "cls_token" not in message


def test_a_text_file_whose_first_line_has_two_fields_is_not_taken_for_a_rank_file(tmp_path):
    path = tmp_path / "scores"
    path.write_text("alice 12\nbob 7\n", encoding="utf-8")
    with pytest.raises(tokenforge.FileFormatError, match="not a tokenizer file"):
        detect_format(path)


@pytest.mark.parametrize("name", ["vocab.txt", "bert_words.txt", "my-vocab.txt"])
def test_a_bert_vocabulary_is_still_recognised_by_its_tokens(tmp_path, name):
    path = tmp_path / name
    path.write_text(BERT_VOCAB, encoding="utf-8")
    assert detect_format(path) == "bert_vocab"
    tok = tokenforge.load(path)
    assert tok.encode("the cats", add_special_tokens=False) == [5, 6, 7]


def test_format_reads_a_file_as_the_named_format_whatever_its_name(tmp_path, small_tokenizer):
    path = tmp_path / "saved.txt"  # a .txt name: detection would not call it tokenforge JSON
    small_tokenizer.save(path, format="tokenforge")
    with pytest.raises(tokenforge.FileFormatError, match="not a tokenizer file"):
        tokenforge.load(path)
    back = tokenforge.load(path, format="tokenforge")
    assert back.encode("hello world") == small_tokenizer.encode("hello world")
    assert open_tokenizer(f"tokenforge:{path}").encode("hello world") == small_tokenizer.encode("hello world")


def test_an_unknown_format_name_is_refused(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text(PROSE, encoding="utf-8")
    with pytest.raises(tokenforge.InvalidArgumentError, match="unknown format 'bert'.*bert_vocab"):
        tokenforge.load(path, format="bert")


def test_a_format_with_a_missing_file_says_no_such_file(tmp_path):
    with pytest.raises(tokenforge.TokenizerFileNotFoundError, match="no such file"):
        tokenforge.load(tmp_path / "missing.txt", format="bert_vocab")

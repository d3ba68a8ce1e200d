"""save_pretrained / tokenizer.json of a SentencePiece ``.model``: the exact form where one
exists (BPE without a charsmap: Llama 2, Mistral), checked against sentencepiece with HF
tokenizers on whole documents and their lines; every other form refused unless
``allow_lossy=True``, which writes it and returns the differences."""

from __future__ import annotations

import json

import pytest

import tokenforge
from tokenforge.errors import FileFormatError
from tokenforge.corpus import embedded_corpus

spm = pytest.importorskip("sentencepiece")
tokenizers = pytest.importorskip("tokenizers")

# whole documents whose line ends, runs of spaces and tabs are tokens of their own
DOCUMENTS = [
    "end.\n", "The end.\n\nA new paragraph.\n", "  leading, trailing   \n\tand tabs\t\n", "a    b     c\n\n\n",
    "emoji 😀👍🏽 👨\u200d👩\u200d👧 and CJK 中文 日本語 한국어\n", "\r\nCR LF\r\n", " ", "",
]


def _inputs(shared_data):
    docs = [*DOCUMENTS, *(lang.heldout_text() for lang in embedded_corpus()), (shared_data / "text" / "botchan.txt").read_text(encoding="utf-8")[:60000]]
    return docs + [line for d in docs for line in d.splitlines()]


@pytest.fixture(scope="module")
def trained(tmp_path_factory, shared_data):
    """sentencepiece models trained with the identity normalizer (as Llama 2's), BPE and Unigram."""
    out = tmp_path_factory.mktemp("spm")
    models = {}
    for kind, extra in [("bpe", {"byte_fallback": True, "remove_extra_whitespaces": False}),
                        ("bpe_ws", {"remove_extra_whitespaces": True}),
                        ("unigram", {"remove_extra_whitespaces": False})]:
        spm.SentencePieceTrainer.train(
            input=str(shared_data / "text" / "botchan.txt"), model_prefix=str(out / kind), vocab_size=1500,
            model_type=kind.split("_")[0], normalization_rule_name="identity", minloglevel=2, **extra)
        models[kind] = out / f"{kind}.model"
    return models


def _same_ids_as_sentencepiece(model_path, tokenizer_json, inputs):
    sp = spm.SentencePieceProcessor(model_file=str(model_path))
    hf = tokenizers.Tokenizer.from_file(str(tokenizer_json))
    return [t for t in inputs if sp.encode(t) != hf.encode(t, add_special_tokens=False).ids]


def test_mistral_model_saves_exactly_and_hf_gives_sentencepiece_ids_on_whole_documents(shared_data, tmp_path):
    src = shared_data / "vocab" / "sentencepiece" / "mistral_v1_tokenizer.model"
    report = tokenforge.load(src).save_pretrained(tmp_path / "out")
    assert report["exact"] and report["reason"] is None and report["differences"] == []
    assert report["documents"] > 10 and report["lines"] > 100
    doc = json.loads((tmp_path / "out" / "tokenizer.json").read_text(encoding="utf-8"))
    assert [n["type"] for n in doc["normalizer"]["normalizers"]] == ["Prepend", "Replace"]
    assert doc["pre_tokenizer"] is None and doc["model"]["byte_fallback"] and doc["model"]["fuse_unk"]
    assert [d["type"] for d in doc["decoder"]["decoders"]] == ["Replace", "ByteFallback", "Fuse", "Strip"]
    assert _same_ids_as_sentencepiece(src, tmp_path / "out" / "tokenizer.json", _inputs(shared_data)) == []
    hf = tokenizers.Tokenizer.from_file(str(tmp_path / "out" / "tokenizer.json"))
    assert hf.encode("end.\n", add_special_tokens=False).ids[-1] == hf.token_to_id("<0x0A>")


def test_mistral_folder_loads_in_transformers_with_sentencepiece_ids(shared_data, tmp_path):
    transformers = pytest.importorskip("transformers")
    src = shared_data / "vocab" / "sentencepiece" / "mistral_v1_tokenizer.model"
    tokenforge.load(src).save_pretrained(tmp_path / "out")
    auto = transformers.AutoTokenizer.from_pretrained(str(tmp_path / "out"))
    sp = spm.SentencePieceProcessor(model_file=str(src))
    for text in DOCUMENTS:
        assert auto(text, add_special_tokens=False)["input_ids"] == sp.encode(text)


@pytest.mark.parametrize("kind", ["bpe", "bpe_ws"])
def test_identity_bpe_models_save_exactly(trained, shared_data, tmp_path, kind):
    """With and without remove_extra_whitespaces (two Replace rules), with and without byte fallback."""
    report = tokenforge.load(trained[kind]).save_pretrained(tmp_path / kind)
    assert report["exact"]
    assert _same_ids_as_sentencepiece(trained[kind], tmp_path / kind / "tokenizer.json", _inputs(shared_data)) == []


def test_unigram_model_is_refused_naming_allow_lossy(trained, tmp_path):
    tok = tokenforge.load(trained["unigram"])
    with pytest.raises(FileFormatError, match=r"Unigram.*allow_lossy=True"):
        tok.save_pretrained(tmp_path / "refused")
    assert not (tmp_path / "refused" / "tokenizer.json").exists()
    report = tok.save_pretrained(tmp_path / "lossy", allow_lossy=True)
    assert report["exact"] is False and "32-bit floats" in report["reason"]
    assert (tmp_path / "lossy" / "tokenizer.json").is_file()


def test_charsmap_model_is_refused_naming_the_first_whole_document_that_differs(shared_data, tmp_path):
    src = shared_data / "vocab" / "sentencepiece" / "spm_test_unigram.model"
    tok = tokenforge.load(src)
    with pytest.raises(FileFormatError, match=r"first the whole document 'end\.\\n'.*allow_lossy=True"):
        tok.save_pretrained(tmp_path / "refused")
    report = tok.save_pretrained(tmp_path / "lossy", allow_lossy=True)
    assert report["exact"] is False
    first = report["differences"][0]
    assert first["text"] == "end.\n" and first["whole_document"]
    # the report is what HF itself does with the written file, and what sentencepiece does
    hf = tokenizers.Tokenizer.from_file(str(tmp_path / "lossy" / "tokenizer.json"))
    sp = spm.SentencePieceProcessor(model_file=str(src))
    assert hf.encode("end.\n", add_special_tokens=False).ids == first["written_ids"] != first["ids"] == sp.encode("end.\n")
    assert sp.encode("end.") == hf.encode("end.", add_special_tokens=False).ids  # the line alone agrees


def test_lossy_convert_compares_whole_documents_not_only_lines(shared_data, tmp_path):
    src = shared_data / "vocab" / "sentencepiece" / "spm_test_unigram.model"
    report = tokenforge.convert(src, tmp_path / "tokenizer.json", allow_lossy=True, sample="end.\n")
    assert (report["lines"], report["lines_differing"]) == (1, 0)
    assert (report["documents"], report["documents_differing"]) == (1, 1)
    assert report["exact"] is False and report["example"]["text"] == "end.\n" and report["example"]["whole_document"]


def test_llama_style_model_converts_to_tokenizer_json_without_allow_lossy(shared_data, tmp_path):
    src = shared_data / "vocab" / "sentencepiece" / "mistral_v1_tokenizer.model"
    report = tokenforge.convert(src, tmp_path / "tokenizer.json")
    assert report["exact"] and report["documents_differing"] == 0 and report["documents"] > 10
    assert report["notes"] == []

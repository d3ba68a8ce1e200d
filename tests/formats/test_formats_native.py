"""The native tokenforge file: round trip, determinism, per-part sha256, rejection of
edited/truncated/unsupported files, a checked-in v1 file, and pickling."""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

import tokenforge
from tokenforge import FileFormatError, Tokenizer

GOLDEN_V1 = Path(__file__).resolve().parents[1] / "fixtures" / "formats" / "golden_v1.json"
PARTS = ("normalizer", "pre_tokenizer", "model", "post_processor", "decoder", "added_tokens")
SPECIAL_TEXT = "first document<|endoftext|>second document <|endoftext|><|endoftext|> third"


def _encode_all(tok: Tokenizer, texts: list[str]) -> list[list[int]]:
    return [tok.encode(t, allowed_special="all") for t in texts]


def _texts(varied_text: str) -> list[str]:
    return [varied_text, *varied_text.split("\n"), SPECIAL_TEXT, "", " ", "\n\n", "x" * 300]


@pytest.fixture(params=["trained", "gpt2", "cl100k_base"])
def any_tokenizer(request, small_tokenizer) -> Tokenizer:
    """A trained tokenizer (has merges) and two shipped encodings (ranks only)."""
    if request.param == "trained":
        return small_tokenizer
    return tokenforge.get_encoding(request.param)


def _saved(tok: Tokenizer, path: Path) -> Path:
    tok.save(str(path))
    return path


def _doc(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _write_doc(path: Path, doc: dict) -> None:
    # Re-dump with different whitespace than the writer uses; key order is kept.
    path.write_text(json.dumps(doc, indent=2, ensure_ascii=False), encoding="utf-8")


# --------------------------------------------------------------- round trip


def test_save_then_load_gives_equal_tokenizer_with_identical_ids(tmp_path, any_tokenizer, varied_text):
    path = _saved(any_tokenizer, tmp_path / "tok.json")
    loaded = tokenforge.load(path)
    assert isinstance(loaded, Tokenizer)
    assert loaded == any_tokenizer
    assert loaded.name == any_tokenizer.name
    assert loaded.pattern == any_tokenizer.pattern
    assert dict(loaded.special_tokens) == dict(any_tokenizer.special_tokens)
    assert loaded.n_vocab == any_tokenizer.n_vocab
    assert loaded.model.merges == any_tokenizer.model.merges
    texts = _texts(varied_text)
    ids = _encode_all(any_tokenizer, texts)
    assert _encode_all(loaded, texts) == ids
    assert [loaded.decode(i) for i in ids] == [any_tokenizer.decode(i) for i in ids]


def test_load_accepts_str_and_pathlike(tmp_path, small_tokenizer):
    path = _saved(small_tokenizer, tmp_path / "tok.json")
    assert tokenforge.load(str(path)) == small_tokenizer
    assert tokenforge.load(path) == small_tokenizer


def test_round_trip_keeps_custom_split_regex(tmp_path, varied_text):
    tok = tokenforge.BPETrainer(vocab_size=280, pattern=r"\s+|\S+").train_from_iterator([varied_text])
    loaded = tokenforge.load(_saved(tok, tmp_path / "custom.json"))
    assert loaded.pattern == r"\s+|\S+"
    assert loaded.pre_tokenizer.name is None
    assert loaded.encode(varied_text) == tok.encode(varied_text)


def test_round_trip_keeps_tokenizer_without_pre_tokenizer(tmp_path, varied_text):
    tok = tokenforge.BPETrainer(vocab_size=280, pattern=None).train_from_iterator([varied_text])
    loaded = tokenforge.load(_saved(tok, tmp_path / "nopre.json"))
    assert loaded.pre_tokenizer is None
    assert loaded == tok
    assert loaded.encode(varied_text) == tok.encode(varied_text)


# ------------------------------------------------------------- determinism


def test_saving_same_tokenizer_twice_gives_byte_identical_files(tmp_path, any_tokenizer):
    a = _saved(any_tokenizer, tmp_path / "a.json").read_bytes()
    b = _saved(any_tokenizer, tmp_path / "b.json").read_bytes()
    assert a == b


def test_saved_loaded_saved_is_byte_identical(tmp_path, any_tokenizer):
    first = _saved(any_tokenizer, tmp_path / "a.json")
    second = _saved(tokenforge.load(first), tmp_path / "b.json")
    assert first.read_bytes() == second.read_bytes()


def test_training_twice_on_same_data_gives_byte_identical_files(tmp_path, varied_text):
    def train_and_save(name: str) -> bytes:
        trainer = tokenforge.BPETrainer(vocab_size=300, special_tokens=["<|endoftext|>"])
        return _saved(trainer.train_from_iterator(varied_text.split("\n")), tmp_path / name).read_bytes()

    assert train_and_save("a.json") == train_and_save("b.json")


_TRAIN_SCRIPT = """
import sys, tokenforge
text = open(sys.argv[1], "rb").read().decode("utf-8")
tok = tokenforge.BPETrainer(vocab_size=300, special_tokens=["<|endoftext|>"]).train_from_iterator(text.split("\\n"))
tok.save(sys.argv[2])
"""


def test_training_output_does_not_depend_on_hash_seed(tmp_path, small_tokenizer):
    """Same data, different PYTHONHASHSEED, fresh interpreters: same bytes as in-process."""
    expected = _saved(small_tokenizer, tmp_path / "here.json").read_bytes()
    src = Path(__file__).resolve().parents[1] / "fixtures" / "formats" / "varied.txt"
    for seed in ("0", "4242"):
        out = tmp_path / f"seed{seed}.json"
        env = dict(os.environ, PYTHONHASHSEED=seed)
        subprocess.run([sys.executable, "-c", _TRAIN_SCRIPT, str(src), str(out)], check=True, env=env, timeout=60)
        assert out.read_bytes() == expected, f"PYTHONHASHSEED={seed} changed the trained file"


# ------------------------------------------------------------ file layout


def test_file_has_format_version_and_a_sha256_for_each_part(tmp_path, small_tokenizer):
    doc = _doc(_saved(small_tokenizer, tmp_path / "tok.json"))
    assert doc["format_version"] == 2
    assert set(doc["sha256"]) == set(PARTS)
    for part in PARTS:
        # the documented definition: sha256 of the part's canonical JSON
        canonical = json.dumps(doc[part], sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        assert doc["sha256"][part] == hashlib.sha256(canonical.encode("utf-8")).hexdigest(), part


def test_file_is_utf8_json_with_one_vocab_entry_and_one_merge_per_line(tmp_path, small_tokenizer):
    text = _saved(small_tokenizer, tmp_path / "tok.json").read_bytes().decode("utf-8")
    assert text.endswith("}\n")
    lines = text.split("\n")
    n_vocab_lines = sum(1 for ln in lines if ln.strip().startswith("[") and '"' in ln)
    n_merge_lines = sum(1 for ln in lines if ln.strip().startswith("[") and '"' not in ln and "," in ln)
    assert n_vocab_lines == len(small_tokenizer.model.vocab)
    assert n_merge_lines == len(small_tokenizer.model.merges)


# ----------------------------------------------------------- edited files


def _edit_vocab_entry(doc):
    entry = doc["model"]["vocab"][300 - 1 - 1]  # a learned token
    entry[1] = "eHl6"  # b"xyz"


def _swap_a_merge(doc):
    merges = doc["model"]["merges"]
    n = next(n for n, (a, b) in enumerate(merges) if a != b)
    merges[n] = merges[n][::-1]


def _drop_last_merge(doc):
    doc["model"]["merges"].pop()


def _edit_pattern(doc):
    doc["pre_tokenizer"]["pattern"] = doc["pre_tokenizer"]["pattern"].replace("\\s+(?!\\S)|", "")


def _edit_special_id(doc):
    next(t for t in doc["added_tokens"] if t["content"] == "<|endoftext|>")["id"] = 299


def _edit_decoder(doc):
    doc["decoder"]["type"] = "identity"


@pytest.mark.parametrize(
    "part, edit",
    [
        ("model", _edit_vocab_entry),
        ("model", _swap_a_merge),
        ("model", _drop_last_merge),
        ("pre_tokenizer", _edit_pattern),
        ("added_tokens", _edit_special_id),
        ("decoder", _edit_decoder),
    ],
    ids=["vocab-entry", "merge-swapped", "merge-dropped", "pattern", "special-id", "decoder"],
)
def test_editing_one_part_is_rejected_naming_the_part_and_file(tmp_path, small_tokenizer, part, edit):
    path = _saved(small_tokenizer, tmp_path / "tok.json")
    doc = _doc(path)
    before = json.dumps(doc[part], sort_keys=True)
    edit(doc)
    assert json.dumps(doc[part], sort_keys=True) != before  # the edit did change the part
    _write_doc(path, doc)
    with pytest.raises(FileFormatError) as info:
        tokenforge.load(path)
    msg = str(info.value)
    assert repr(part) in msg
    assert str(path) in msg
    for other in set(PARTS) - {part}:
        assert f"sha256 of {other!r}" not in msg


def test_redumped_but_unchanged_file_still_loads(tmp_path, small_tokenizer):
    """The hashes cover the parsed content, not the whitespace the writer chose."""
    path = _saved(small_tokenizer, tmp_path / "tok.json")
    _write_doc(path, _doc(path))
    assert tokenforge.load(path) == small_tokenizer
    path.write_text(json.dumps(_doc(path)), encoding="utf-8")  # one line
    assert tokenforge.load(path) == small_tokenizer


def test_edited_part_with_recomputed_hash_but_invalid_model_is_rejected_naming_file(tmp_path, small_tokenizer):
    path = _saved(small_tokenizer, tmp_path / "tok.json")
    doc = _doc(path)
    doc["model"]["merges"][0] = [99999, 1]
    canonical = json.dumps(doc["model"], sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    doc["sha256"]["model"] = hashlib.sha256(canonical.encode("utf-8")).hexdigest()
    _write_doc(path, doc)
    with pytest.raises(FileFormatError) as info:
        tokenforge.load(path)
    assert str(path) in str(info.value)
    assert "99999" in str(info.value)


@pytest.mark.parametrize("keep", [0.02, 0.1, 0.5, 0.9, 0.999, -2])
def test_truncated_file_is_rejected_naming_the_file(tmp_path, small_tokenizer, keep):
    path = _saved(small_tokenizer, tmp_path / "tok.json")
    data = path.read_bytes()
    cut = int(len(data) * keep) if keep > 0 else len(data) + keep
    path.write_bytes(data[:cut])
    with pytest.raises(FileFormatError) as info:
        tokenforge.load(path)
    assert str(path) in str(info.value)


@pytest.mark.parametrize("version", [0, 3, 99, "1", None, [1]])
def test_unsupported_format_version_is_rejected(tmp_path, small_tokenizer, version):
    path = _saved(small_tokenizer, tmp_path / "tok.json")
    doc = _doc(path)
    doc["format_version"] = version
    _write_doc(path, doc)
    with pytest.raises(FileFormatError) as info:
        tokenforge.load(path)
    msg = str(info.value)
    assert "format_version" in msg
    assert repr(version) in msg
    assert str(path) in msg


@pytest.mark.parametrize("field", ["sha256", *PARTS])
def test_file_missing_a_required_field_is_rejected(tmp_path, small_tokenizer, field):
    path = _saved(small_tokenizer, tmp_path / "tok.json")
    doc = _doc(path)
    del doc[field]
    _write_doc(path, doc)
    with pytest.raises(FileFormatError) as info:
        tokenforge.load(path)
    assert field in str(info.value)
    assert str(path) in str(info.value)


# ----------------------------------------------------- checked-in v1 file

# ids recorded when golden_v1.json was written; the file must keep meaning this
GOLDEN_TEXT = "the cat sat on the log, déjà vu 你好<|endoftext|><|pad|> def the_thing(x): return 1234"
GOLDEN_IDS = [
    259, 272, 261, 270, 269, 260, 32, 108, 268, 44, 271, 289, 32, 293, 32, 283, 277, 256, 257,
    271, 101, 102, 260, 95, 266, 40, 120, 41, 58, 32, 299, 32, 49, 50, 51, 52,
]


def test_checked_in_v1_file_still_loads_and_encodes_as_recorded():
    tok = tokenforge.load(GOLDEN_V1)
    assert tok.name == "golden-v1"
    assert tok.pre_tokenizer.name == "cl100k"
    assert dict(tok.special_tokens) == {"<|endoftext|>": 256, "<|pad|>": 257}
    assert tok.n_vocab == 300
    assert tok.encode(GOLDEN_TEXT, allowed_special="all") == GOLDEN_IDS
    assert tok.decode(GOLDEN_IDS) == GOLDEN_TEXT


def test_checked_in_v1_file_is_rewritten_as_v2_with_the_same_ids(tmp_path):
    """An old file saved again becomes the current schema; it means the same ids, and
    saving that again gives the same bytes."""
    out = _saved(tokenforge.load(GOLDEN_V1), tmp_path / "again.json")
    assert _doc(out)["format_version"] == 2
    again = tokenforge.load(out)
    assert again.encode(GOLDEN_TEXT, allowed_special="all") == GOLDEN_IDS
    assert _saved(again, tmp_path / "third.json").read_bytes() == out.read_bytes()


def test_checked_in_v1_pipeline_file_still_loads(tmp_path):
    """A version 1 ``"kind": "pipeline"`` file (WordPiece, Unigram, SentencePiece BPE) loads."""
    from tokenforge.formats.native import FORMAT_VERSION, dumps

    doc = {k: v for k, v in tokenforge.load(GOLDEN_V1).to_dict().items()}
    import hashlib as _h

    v1 = {"format_version": 1, "name": "p", "kind": "pipeline", **{k: doc[k] for k in PARTS}}
    v1["sha256"] = {k: _h.sha256(json.dumps(doc[k], sort_keys=True, separators=(",", ":"),
                                              ensure_ascii=False).encode()).hexdigest() for k in PARTS}
    path = tmp_path / "v1pipe.json"
    path.write_text(json.dumps(v1), encoding="utf-8")
    tok = tokenforge.load(path)
    assert FORMAT_VERSION == 2 and tok.name == "p"
    assert tok.encode(GOLDEN_TEXT, allowed_special="all") == GOLDEN_IDS
    assert dumps(tok.to_dict())


# ------------------------------------------------------------------ pickle


@pytest.mark.parametrize("protocol", [0, 2, pickle.DEFAULT_PROTOCOL, pickle.HIGHEST_PROTOCOL])
def test_pickle_round_trip_gives_equal_tokenizer_with_identical_ids(any_tokenizer, varied_text, protocol):
    clone = pickle.loads(pickle.dumps(any_tokenizer, protocol=protocol))
    assert clone is not any_tokenizer
    assert clone == any_tokenizer
    assert clone.name == any_tokenizer.name
    assert clone.pattern == any_tokenizer.pattern
    assert clone.pre_tokenizer.name == any_tokenizer.pre_tokenizer.name
    assert dict(clone.special_tokens) == dict(any_tokenizer.special_tokens)
    assert clone.model.merges == any_tokenizer.model.merges
    texts = _texts(varied_text)
    assert _encode_all(clone, texts) == _encode_all(any_tokenizer, texts)


def test_pickle_keeps_custom_regex_and_missing_pre_tokenizer(varied_text):
    for pattern in (r"\s+|\S+", None):
        tok = tokenforge.BPETrainer(vocab_size=270, pattern=pattern).train_from_iterator([varied_text])
        clone = pickle.loads(pickle.dumps(tok))
        assert clone == tok
        assert clone.pattern == tok.pattern
        assert clone.encode(varied_text) == tok.encode(varied_text)


def test_specials_in_text_survives_the_native_file_and_is_hashed(tmp_path):
    from tokenforge.models.wordlevel import WordLevel

    tok = tokenforge.Tokenizer(WordLevel({"<s>": 0, "a": 1, "<unk>": 2}, "<unk>"),
                               special_tokens={"<s>": 0}, specials_in_text="text")
    path = tmp_path / "t.json"
    tok.save(str(path))
    back = tokenforge.load(path)
    assert back.specials_in_text == "text" and back.encode("<s>") == tok.encode("<s>")
    assert tokenforge.load(_saved_default(tmp_path)).specials_in_text == "raise"
    text = path.read_text().replace('"specials_in_text": "text"', '"specials_in_text": "raise"')
    path.write_text(text)
    with pytest.raises(FileFormatError, match="specials_in_text"):
        tokenforge.load(path)


def _saved_default(tmp_path):
    from tokenforge.models.wordlevel import WordLevel

    p = tmp_path / "d.json"
    tokenforge.Tokenizer(WordLevel({"<s>": 0, "a": 1}, None), special_tokens={"<s>": 0}).save(str(p))
    assert "specials_in_text" not in p.read_text()
    return p

"""WordPiece: greedy longest-match encoding exactly as HF tokenizers, BERT
vocab.txt reading/writing with HF's ids, and likelihood-score training (hand-computed
goldens, determinism, Python reference == native loop, bad input)."""

from __future__ import annotations

import doctest
import functools
import importlib
import json
import os
import pickle
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tokenforge import _native
from tokenforge.errors import (
    FileFormatError,
    SpecialTokenError,
    TokenforgeError,
    TokenizerFileNotFoundError,
    TrainingError,
    UnknownTokenError,
)
from tokenforge.formats.bert_vocab import load_bert_vocab, save_bert_vocab
from tokenforge.models.wordpiece import WordPiece
from tokenforge.trainers.wordpiece import WordPieceTrainer

VOCAB_FILES = {"bert-base-uncased": True, "bert-base-chinese": False}  # name -> lowercase


def _toks(model: WordPiece, word: str) -> list[str]:
    return [model.id_to_token(i) for i in model.encode_piece(word)]


# -- greedy longest match -----------------------------------------------------------------------


def test_longest_continuation_wins():
    wp = WordPiece({"[UNK]": 0, "a": 1, "##b": 2, "##bc": 3})
    assert _toks(wp, "abc") == ["a", "##bc"]


def test_one_failing_position_makes_the_whole_word_unk():
    wp = WordPiece({"[UNK]": 0, "a": 1, "##b": 2})
    assert _toks(wp, "abc") == ["[UNK]"]
    assert wp.tokenize("abc") == [(0, 0, 3)]


def test_greedy_does_not_backtrack_out_of_a_dead_end():
    # "ab" is the longest match at 0, then "c" has no ##c: [UNK], although a + ##bc would work
    wp = WordPiece({"[UNK]": 0, "a": 1, "ab": 2, "##bc": 3})
    assert _toks(wp, "abc") == ["[UNK]"]


# -- the model --------------------------------------------------------------------------


def test_empty_piece_gives_no_ids_even_when_the_empty_token_exists():
    for vocab in ({"[UNK]": 0, "a": 1}, {"[UNK]": 0, "": 1}):
        wp = WordPiece(vocab)
        assert wp.encode_piece("") == [] and wp.tokenize("") == []


def test_max_input_chars_per_word_counts_code_points_and_beats_a_vocab_hit():
    wp = WordPiece({"[UNK]": 0, "ééé": 1, "éééé": 2}, max_input_chars_per_word=3)
    assert wp.encode_piece("ééé") == [1]  # 3 code points (6 bytes): allowed
    assert wp.encode_piece("éééé") == [0]  # a token, but longer than the limit
    assert wp.tokenize("éééé") == [(0, 0, 4)]


def test_missing_unk_token_raises_naming_it():
    with pytest.raises(UnknownTokenError, match=r"\[UNK\]"):
        WordPiece({"a": 0, "##b": 1})
    with pytest.raises(UnknownTokenError, match="<unk>"):
        WordPiece({"[UNK]": 0, "a": 1}, unk_token="<unk>")
    assert WordPiece({"<unk>": 0, "a": 1}, unk_token="<unk>").encode_piece("b") == [0]


def test_vocab_giving_one_id_to_two_tokens_is_refused():
    with pytest.raises(FileFormatError, match="id 1 is given to both"):
        WordPiece({"[UNK]": 0, "a": 1, "b": 1})


def test_lookups_offsets_and_vocab_views():
    wp = WordPiece({"[UNK]": 0, "un": 1, "##aff": 2, "##able": 3, "##ä": 5})
    assert wp.tokenize("unaffable") == [(1, 0, 2), (2, 2, 5), (3, 5, 9)]
    assert wp.tokenize("unä") == [(1, 0, 2), (5, 2, 3)]
    assert wp.token_to_id("##aff") == 2 and wp.token_to_id("nope") is None
    assert wp.id_to_token(3) == "##able" and wp.id_to_token(4) is None
    assert wp.vocab_size == 5 and wp.unk_id == 0 and wp.unk_token == "[UNK]"
    v = wp.get_vocab()
    v["x"] = 9  # a copy
    assert wp.token_to_id("x") is None


def test_custom_prefix_and_a_word_that_starts_with_the_prefix():
    wp = WordPiece({"[UNK]": 0, "#": 1, "##": 2, "###": 3, "@@b": 4, "a": 5}, continuing_subword_prefix="@@")
    assert wp.encode_piece("ab") == [5, 4]
    assert wp.encode_piece("###") == [3]
    wp2 = WordPiece({"[UNK]": 0, "#": 1, "###": 2, "##a": 3})
    assert _toks(wp2, "##a") == ["##a"]  # the whole word, looked up as is
    assert _toks(wp2, "#a") == ["#", "##a"]


def test_model_is_picklable_and_to_dict_round_trips():
    wp = WordPiece({"[UNK]": 0, "a": 1, "##b": 2}, max_input_chars_per_word=7)
    assert pickle.loads(pickle.dumps(wp)) == wp
    d = wp.to_dict()
    assert d == {
        "type": "WordPiece",
        "unk_token": "[UNK]",
        "continuing_subword_prefix": "##",
        "max_input_chars_per_word": 7,
        "vocab": {"[UNK]": 0, "a": 1, "##b": 2},
    }
    assert WordPiece.from_dict(json.loads(json.dumps(d))) == wp


@pytest.mark.parametrize(
    "data, field",
    [
        ({"type": "BPE", "vocab": {"[UNK]": 0}}, "type"),
        ({"type": "WordPiece"}, "vocab"),
        ({"type": "WordPiece", "vocab": [["[UNK]", 0]]}, "vocab"),
        ({"type": "WordPiece", "vocab": {"[UNK]": "0"}}, "vocab"),
        ({"type": "WordPiece", "vocab": {"a": 0}}, "unk_token"),
        ({"type": "WordPiece", "vocab": {"[UNK]": 0}, "max_input_chars_per_word": "100"}, "max_input_chars_per_word"),
        ({"type": "WordPiece", "vocab": {"[UNK]": 0}, "continuing_subword_prefix": None}, "continuing_subword_prefix"),
    ],
)
def test_from_dict_names_the_bad_field(data, field):
    with pytest.raises(FileFormatError, match=f"'{field}'"):
        WordPiece.from_dict(data)


def test_hf_tokenizer_json_model_loads_and_serializes_back(shared_data):
    d = json.loads((shared_data / "vocab" / "hf" / "bert-base-uncased_wordpiece_tokenizer.json").read_text("utf-8"))
    wp = WordPiece.from_dict(d["model"])
    assert wp.to_dict() == d["model"]
    assert list(wp.to_dict()["vocab"]) == list(d["model"]["vocab"])
    tokenizers = pytest.importorskip("tokenizers")
    hf = tokenizers.Tokenizer.from_file(str(shared_data / "vocab" / "hf" / "bert-base-uncased_wordpiece_tokenizer.json"))
    for w in ["unaffable", "tokenization", "the", "xyzzyq", "naïve", "##s", "a" * 101]:
        assert wp.tokenize(w) == _hf_ids_and_offsets(hf.model, w), w


# -- differential against HF tokenizers' WordPiece model -----------------------------------


@functools.cache
def _hf_words(shared_data: Path, lowercase: bool) -> tuple[str, ...]:
    """Distinct words of the first 150k characters of every text file (all the scripts
    and the code), split the way BERT splits them (HF's BertNormalizer + BertPreTokenizer:
    the reference pipeline, used only to produce test words)."""
    tokenizers = pytest.importorskip("tokenizers")
    norm = tokenizers.normalizers.BertNormalizer(lowercase=lowercase)
    pre = tokenizers.pre_tokenizers.BertPreTokenizer()
    words: set[str] = set()
    for path in sorted((shared_data / "text").rglob("*")):
        if not path.is_file():
            continue
        text = path.read_bytes().decode("utf-8", "replace")[:150_000]
        for line in text.splitlines():
            words.update(w for w, _ in pre.pre_tokenize_str(norm.normalize_str(line)))
    return tuple(sorted(words))


def _hf_ids_and_offsets(hf_model, word: str) -> list[tuple[int, int, int]]:
    b = word.encode("utf-8")
    out = []
    for t in hf_model.tokenize(word):
        s, e = t.offsets  # bytes
        out.append((t.id, len(b[:s].decode("utf-8")), len(b[:e].decode("utf-8"))))
    return out


@pytest.mark.parametrize("name", sorted(VOCAB_FILES))
def test_bert_vocab_txt_encodes_every_corpus_word_like_hf(shared_data, name):
    tokenizers = pytest.importorskip("tokenizers")
    path = shared_data / "vocab" / "wordpiece" / f"{name}_vocab.txt"
    hf = tokenizers.models.WordPiece.from_file(str(path), unk_token="[UNK]")
    ours = WordPiece.from_file(path)
    words = _hf_words(shared_data, VOCAB_FILES[name])
    assert len(words) > 30_000
    bad = [w for w in words if ours.tokenize(w) != _hf_ids_and_offsets(hf, w)]
    assert bad == [], f"{len(bad)} words differ, first {bad[:5]!r}"
    # encode_piece is tokenize without offsets
    assert all(ours.encode_piece(w) == [t[0] for t in ours.tokenize(w)] for w in words[::50])


@pytest.mark.parametrize("name", sorted(VOCAB_FILES))
def test_load_bert_vocab_gives_hf_ids(shared_data, name):
    tokenizers = pytest.importorskip("tokenizers")
    path = shared_data / "vocab" / "wordpiece" / f"{name}_vocab.txt"
    hf = tokenizers.Tokenizer(tokenizers.models.WordPiece.from_file(str(path), unk_token="[UNK]"))
    ours = load_bert_vocab(path)
    assert ours == hf.get_vocab()
    assert WordPiece(ours).vocab_size == hf.get_vocab_size()


def test_bert_base_chinese_duplicates_keep_the_last_line(shared_data):
    vocab = load_bert_vocab(shared_data / "vocab" / "wordpiece" / "bert-base-chinese_vocab.txt")
    assert vocab["##s"] == 20925  # also on line 8118 (0-based); HF keeps the last
    assert len(vocab) == 21075 and max(vocab.values()) == 21127


_tiny_vocab = st.dictionaries(st.text("ab#", min_size=1, max_size=4), st.just(0), min_size=1, max_size=12)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    _tiny_vocab,
    st.lists(st.text("abc#", max_size=9), min_size=1, max_size=10),
    st.sampled_from(["##", "#", ""]),
    st.integers(0, 8),
)
def test_random_tiny_vocabs_encode_like_hf(tokens, words, prefix, max_chars):
    tokenizers = pytest.importorskip("tokenizers")
    vocab = {"[UNK]": 0}
    for t in sorted(tokens):
        vocab.setdefault(t, len(vocab))
    hf = tokenizers.models.WordPiece(
        vocab, unk_token="[UNK]", continuing_subword_prefix=prefix, max_input_chars_per_word=max_chars
    )
    ours = WordPiece(vocab, continuing_subword_prefix=prefix, max_input_chars_per_word=max_chars)
    for w in words:
        assert ours.tokenize(w) == _hf_ids_and_offsets(hf, w), w


# -- vocab.txt reading and writing ----------------------------------------------------------


def test_vocab_txt_whitespace_crlf_duplicates_and_blank_lines_read_like_hf(tmp_path):
    tokenizers = pytest.importorskip("tokenizers")
    lines = ["[UNK]", "a", "##b \t", " x", "ab", "a", "\u00a0", "", "##c\r", "q\u3000", "r\x1c", "\ufeffs", "t\u200b"]
    p = tmp_path / "vocab.txt"
    p.write_bytes("\n".join(lines).encode("utf-8"))  # no final newline: the last line still counts
    hf = tokenizers.Tokenizer(tokenizers.models.WordPiece.from_file(str(p), unk_token="[UNK]"))
    ours = load_bert_vocab(p)
    assert ours == hf.get_vocab()
    assert ours["a"] == 5 and ours[" x"] == 3 and ours[""] == 7 and ours["r\x1c"] == 10


def test_save_then_load_round_trips(tmp_path):
    vocab = {"[PAD]": 0, "[UNK]": 1, "the": 2, "##s": 3, " lead": 4, "日本": 5, "a\rb": 6}
    p = tmp_path / "vocab.txt"
    save_bert_vocab(vocab, p)
    assert load_bert_vocab(p) == vocab
    assert p.read_bytes().endswith(b"a\rb\n")
    wp = WordPiece(vocab)
    save_bert_vocab(wp, tmp_path / "v2.txt")  # a model with get_vocab() also works
    assert WordPiece.from_file(tmp_path / "v2.txt") == wp


@pytest.mark.parametrize(
    "vocab, message",
    [
        ({"[UNK]": 0, "a": 2}, "id 1 has no token"),
        ({"[UNK]": 0, "a\nb": 1}, "line break"),
        ({"[UNK]": 0, "a ": 1}, "ends with whitespace"),
        ({"[UNK]": 0, "": 1}, "empty"),
        ({"[UNK]": 0, "a": 0}, "given to both"),
        ({"[UNK]": -1}, "non-negative"),
    ],
)
def test_save_refuses_vocabs_that_would_not_read_back(tmp_path, vocab, message):
    p = tmp_path / "vocab.txt"
    p.write_text("old\n")
    with pytest.raises(FileFormatError, match=message):
        save_bert_vocab(vocab, p)
    assert p.read_text() == "old\n"
    assert sorted(x.name for x in tmp_path.iterdir()) == ["vocab.txt"]  # no temporary file left


def test_bad_vocab_files_raise_naming_file_and_line(tmp_path):
    p = tmp_path / "latin1.txt"
    p.write_bytes(b"[UNK]\nok\ncaf\xe9\n")
    with pytest.raises(FileFormatError, match=r"latin1\.txt, line 3: not valid UTF-8"):
        load_bert_vocab(p)
    p = tmp_path / "model.bin"
    p.write_bytes(b"[UNK]\n\x00\x01\x02binary")
    with pytest.raises(FileFormatError, match=r"model\.bin, line 2: NUL byte"):
        load_bert_vocab(p)
    p = tmp_path / "empty.txt"
    p.write_bytes(b"")
    with pytest.raises(FileFormatError, match=r"empty\.txt: empty file"):
        load_bert_vocab(p)
    with pytest.raises(TokenizerFileNotFoundError, match="missing.txt"):
        load_bert_vocab(tmp_path / "missing.txt")
    with pytest.raises(TokenizerFileNotFoundError, match="directory"):
        load_bert_vocab(tmp_path)


def test_vocab_file_without_the_unk_token_raises_naming_file_and_token(tmp_path):
    p = tmp_path / "vocab.txt"
    p.write_text("<unk>\na\n##b\n")
    with pytest.raises(FileFormatError, match=r"vocab\.txt: .*\[UNK\]") as info:
        WordPiece.from_file(p)
    assert isinstance(info.value, TokenforgeError)
    assert WordPiece.from_file(p, unk_token="<unk>").encode_piece("ab") == [1, 2]


# -- training ------------------------------------------------------------------------------

# HF course's WordPiece corpus. Hand computation with score = f(xy) / (f(x) f(y)):
#   units: h 15, p 17, b 4, ##u 36, ##g 20, ##n 16, ##s 5
#   1. (##g,##s) 5/(20*5) = 1/20; every other pair is 1/36.            -> ##gs
#   2. now all six pairs score 1/36: the larger f(xy) wins, (p,##u) = 17 -> pu
#   3. (h,##u) 15/(15*19), (b,##u) 4/(4*19), (##u,##gs) 5/(19*5): all 1/19;
#      f(xy) 15 wins                                                    -> hu
#   4. (b,##u) 4/(4*4) = 1/4                                            -> bu
#   5. (hu,##gs) 5/(15*5) = 1/15 beats (bu,##n) 4/(4*16) = 1/16         -> hugs
#   6. (hu,##g) 10/(10*15) = 1/15                                       -> hug
#   7. (bu,##n) 1/16 beats (pu,##g) 5/(17*5) = 1/17                      -> bun
#   8. (pu,##n) 12/(17*12) = 1/17 ties (pu,##g); f(xy) 12 wins            -> pun
#   9. (pu,##g) 5/(5*5)                                                 -> pug
HUG = {"hug": 10, "pug": 5, "pun": 12, "bun": 4, "hugs": 5}
HUG_MERGES = [
    ("##g", "##s"),
    ("p", "##u"),
    ("h", "##u"),
    ("b", "##u"),
    ("hu", "##gs"),
    ("hu", "##g"),
    ("bu", "##n"),
    ("pu", "##n"),
    ("pu", "##g"),
]
BACKENDS = ["python"] + (["native"] if _native.available() else [])


@pytest.mark.parametrize("backend", BACKENDS)
def test_hand_computed_merges_and_ids(backend):
    t = WordPieceTrainer(vocab_size=100, special_tokens=["[UNK]"], show_progress=False, backend=backend, merge="score")
    wp = t.train_from_counts(HUG)
    assert t.merges == HUG_MERGES
    alphabet = ["b", "g", "h", "n", "p", "s", "u"]
    expected = ["[UNK]", *alphabet, *("##" + c for c in alphabet)]
    expected += ["##gs", "pu", "hu", "bu", "hugs", "hug", "bun", "pun", "pug"]
    assert wp.get_vocab() == {tok: i for i, tok in enumerate(expected)}
    assert _toks(wp, "hugs") == ["hugs"] and _toks(wp, "bugs") == ["bu", "##gs"]


def test_likelihood_not_frequency_picks_the_first_merge():
    # Schuster & Nakajima (2012): BPE would merge the frequent (a, b); WordPiece merges (q, u)
    counts = {"qu": 2, "ab": 8, "a": 2, "b": 2}
    t = WordPieceTrainer(vocab_size=10, special_tokens=["[UNK]"], show_progress=False, merge="score")
    t.train_from_counts(counts)
    assert t.merges == [("q", "##u")]


@pytest.mark.parametrize("backend", BACKENDS)
def test_min_frequency_applies_to_pair_counts(backend):
    # as above, but pairs seen fewer than 5 times are never merged: (b,##u) = 4 and
    # (##u,##n) = 4 stay apart, and then (bu, ...) never exists
    t = WordPieceTrainer(
        vocab_size=100, min_frequency=5, special_tokens=["[UNK]"], show_progress=False, backend=backend, merge="score"
    )
    wp = t.train_from_counts(HUG)
    assert t.merges == [("##g", "##s"), ("p", "##u"), ("h", "##u"), ("hu", "##gs"), ("hu", "##g"), ("pu", "##g"), ("pu", "##n")]
    assert _toks(wp, "bun") == ["b", "##u", "##n"]


def test_vocab_size_stops_training_and_specials_come_first():
    t = WordPieceTrainer(vocab_size=5 + 14 + 3, show_progress=False, merge="score")
    wp = t.train_from_counts(HUG)
    assert len(t.merges) == 3 and wp.vocab_size == 22
    assert [wp.id_to_token(i) for i in range(5)] == ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    assert wp.unk_id == 1


def test_limit_alphabet_keeps_the_most_frequent_characters_ties_by_code_point():
    counts = {"ab": 3, "c": 3, "dd": 1, "ba": 1}  # a 4, b 4, c 3, d 2
    t = WordPieceTrainer(vocab_size=50, limit_alphabet=2, special_tokens=["[UNK]"], show_progress=False)
    assert t.alphabet(counts) == ["a", "b"]
    wp = t.train_from_counts(counts)
    assert "c" not in wp.get_vocab() and "##d" not in wp.get_vocab()
    assert wp.encode_piece("c") == [0]
    t2 = WordPieceTrainer(vocab_size=50, limit_alphabet=2, initial_alphabet=["z"], special_tokens=["[UNK]"])
    assert t2.alphabet(counts) == ["a", "z"]  # z is always kept; then a beats b on the 4-4 tie
    t3 = WordPieceTrainer(vocab_size=50, limit_alphabet=3, special_tokens=["[UNK]"])
    assert t3.alphabet({"ab": 1, "cd": 1, "e": 1}) == ["a", "b", "c"]


def test_every_word_over_the_alphabet_encodes_without_unk():
    counts = Counter(["the", "quick", "brown", "fox", "jumps", "over", "the", "lazy", "dog", "again", "and", "again"])
    wp = WordPieceTrainer(vocab_size=60, special_tokens=["[UNK]"], show_progress=False, all_forms=True).train_from_counts(counts)
    for w in ["zebra", "quiz", "yoke", "jumped", "the"]:
        assert wp.unk_id not in wp.encode_piece(w)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_merge_that_would_spell_a_special_token_is_never_made(backend):
    t = WordPieceTrainer(vocab_size=100, special_tokens=["[UNK]", "hu"], show_progress=False, backend=backend, merge="score")
    wp = t.train_from_counts(HUG)
    assert ("h", "##u") not in t.merges and len(t.merges) >= 5
    assert wp.token_to_id("hu") == 1
    assert t.merges[:3] == [("##g", "##s"), ("p", "##u"), ("##u", "##gs")]  # (h,##u) skipped


def test_result_does_not_depend_on_the_order_of_the_counts():
    items = list(HUG.items())
    a = WordPieceTrainer(vocab_size=30, show_progress=False).train_from_counts(dict(items))
    b = WordPieceTrainer(vocab_size=30, show_progress=False).train_from_counts(dict(reversed(items)))
    assert a == b


_DETERMINISM = """
import json, sys
from collections import Counter
from tokenforge.trainers.wordpiece import WordPieceTrainer
words = Counter(open(sys.argv[1], encoding="utf-8").read().lower().split())
t = WordPieceTrainer(vocab_size=900, min_frequency=2, show_progress=False, backend=sys.argv[2])
print(json.dumps([t.train_from_counts(words).to_dict(), t.merges]))
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_same_vocab_under_any_hash_seed(backend, varied_text, tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(varied_text * 3, encoding="utf-8")
    outs = set()
    for seed in ("0", "1", "12345"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        r = subprocess.run(
            [sys.executable, "-c", _DETERMINISM, str(corpus), backend], env=env, capture_output=True, text=True, check=True
        )
        outs.add(r.stdout)
    assert len(outs) == 1


@pytest.mark.skipif(not _native.available(), reason="native core not built")
@settings(max_examples=120, deadline=None)
@given(
    st.dictionaries(st.text("abc", min_size=1, max_size=8), st.integers(1, 6), min_size=1, max_size=25),
    st.integers(0, 40),
    st.integers(0, 3),
    st.sampled_from(["##", ""]),
)
def test_native_loop_equals_python_reference_on_tiny_alphabets(counts, extra, min_frequency, prefix):
    results = []
    for backend in ("python", "native"):
        t = WordPieceTrainer(
            vocab_size=7 + extra,
            min_frequency=min_frequency,
            special_tokens=["[UNK]"],
            continuing_subword_prefix=prefix,
            show_progress=False,
            backend=backend,
        )
        try:
            results.append((t.train_from_counts(counts), t.merges))
        except TrainingError as exc:  # vocab_size below the alphabet: both must say so
            results.append(str(exc))
    assert results[0] == results[1]


@pytest.mark.skipif(not _native.available(), reason="native core not built")
def test_native_loop_equals_python_reference_on_real_text(shared_data):
    text = (shared_data / "text" / "tinystories_valid_sample.txt").read_text("utf-8")[:150_000]
    counts = Counter(w for w in text.lower().replace(".", " . ").replace(",", " , ").split())
    out = []
    for backend in ("python", "native"):
        t = WordPieceTrainer(vocab_size=1500, show_progress=False, backend=backend)
        out.append((t.train_from_counts(counts).get_vocab(), t.merges))
    assert out[0] == out[1]
    assert len(out[0][1]) > 1000


def test_vocab_size_below_specials_plus_alphabet_raises_with_the_minimum():
    t = WordPieceTrainer(vocab_size=10, show_progress=False, merge="score")  # 5 specials + 2 * 7 characters = 19
    with pytest.raises(TrainingError, match="at least 19"):
        t.train_from_counts(HUG)
    assert t.min_vocab_size(HUG) == 19


@pytest.mark.parametrize(
    "counts, message",
    [
        ({}, "no words"),
        ({"": 3, "a": 0}, "no words"),
        ({"a": -1}, "count of 'a'"),
        ({"a": 1.5}, "count of 'a'"),
        ({b"a": 1}, "must be str"),
    ],
)
def test_bad_counts_raise_training_errors(counts, message):
    with pytest.raises(TrainingError, match=message):
        WordPieceTrainer(show_progress=False).train_from_counts(counts)


def test_bad_settings_raise():
    with pytest.raises(TrainingError, match="unk_token"):
        WordPieceTrainer(special_tokens=["[PAD]"])
    with pytest.raises(SpecialTokenError, match="twice"):
        WordPieceTrainer(special_tokens=["[UNK]", "[UNK]"])
    with pytest.raises(TrainingError, match="more than limit_alphabet"):
        WordPieceTrainer(initial_alphabet="abc", limit_alphabet=2)
    with pytest.raises(TrainingError, match="single characters"):
        WordPieceTrainer(initial_alphabet=["ab"])
    with pytest.raises(TrainingError, match="min_frequency"):
        WordPieceTrainer(min_frequency=-1)
    with pytest.raises(TrainingError, match="backend"):
        WordPieceTrainer(backend="gpu")


@pytest.mark.parametrize(
    "name", ["tokenforge.models.wordpiece", "tokenforge.formats.bert_vocab", "tokenforge.trainers.wordpiece"]
)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0

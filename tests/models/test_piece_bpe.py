"""PieceBPE: BPE over Unicode symbols gives the ids of sentencepiece's BPE
(Mistral / Llama-2 style, byte fallback) and of HF tokenizers' BPE model;
BPE-dropout is deterministic given the seed, exact at p=0 and leaves single
characters at p=1."""

from __future__ import annotations

import json
import pickle
import random
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokenforge.errors import FileFormatError
from tokenforge.sentencepiece.proto import PieceType, read_model, write_model
from tokenforge.models import bpe as bpe_module
from tokenforge.models.bpe import BPE, PieceBPE

TEXT_FILES = [
    "address.txt",
    "german.txt",
    "tinystories_sample.txt",
    "corpus.en",
    "botchan.txt",
    "wagahaiwa_nekodearu.txt",
    "hongloumeng.txt",
    "xiyouji.txt",
    "parallel/debian-reference-ja.txt",
    "parallel/debian-reference-zh-tw.txt",
    "parallel/udhr_articles_aligned.tsv",
]
SECONDS_PER_FILE = 0.1
EXTRA_LINES = ["龘𠀋𪚥 rare CJK", "emoji 😀🎉👩‍👩‍👧", "tabs\tand\u3000ideographic space", "", " ", "  lead", "x" * 300]


def _sp_model(path) -> PieceBPE:
    proto = read_model(path)
    return PieceBPE.from_sentencepiece(
        [p.piece for p in proto.pieces], proto.scores, proto.types, byte_fallback=proto.trainer_spec.byte_fallback
    )


def _lines(shared_data):
    for name in TEXT_FILES:
        path = shared_data / "text" / name
        if not path.is_file():
            continue
        yield name, path.read_text(encoding="utf-8", errors="replace").split("\n")
    yield "extra", EXTRA_LINES


def _compare_with_sentencepiece(shared_data, model_name, normalize):
    spm = pytest.importorskip("sentencepiece")
    path = shared_data / "vocab" / "sentencepiece" / model_name
    if not path.is_file():
        pytest.skip(f"{path} not found")
    sp = spm.SentencePieceProcessor(model_file=str(path))
    model = _sp_model(path)
    checked = 0
    for name, lines in _lines(shared_data):
        deadline = time.perf_counter() + SECONDS_PER_FILE
        for line in lines:
            text = normalize(sp, line)
            assert model.encode_piece(text) == sp.encode(line), (name, line)
            checked += 1
            if time.perf_counter() > deadline:
                break
    assert checked > 500


def _mistral_normalize(sp, line: str) -> str:
    # identity charsmap, add_dummy_prefix, no whitespace removal: only ▁ escaping
    text = ("▁" + line.replace(" ", "▁")) if line else ""
    assert text == sp.normalize(line)
    return text


def test_mistral_ids_equal_sentencepiece(shared_data):
    _compare_with_sentencepiece(shared_data, "mistral_v1_tokenizer.model", _mistral_normalize)


def test_hf_test_bpe_ids_equal_sentencepiece(shared_data):
    # nmt_nfkc charsmap: the normalization itself is the normalizer's job, so take sentencepiece's
    _compare_with_sentencepiece(shared_data, "hf_test_bpe.model", lambda sp, line: sp.normalize(line))


def test_byte_fallback_gives_utf8_byte_pieces(shared_data):
    path = shared_data / "vocab" / "sentencepiece" / "mistral_v1_tokenizer.model"
    if not path.is_file():
        pytest.skip("mistral model not found")
    model = _sp_model(path)
    ids = model.encode_piece("▁龘")
    pieces = [model.id_to_token(i) for i in ids]
    assert pieces[-3:] == ["<0xE9>", "<0xBE>", "<0x98>"]
    assert [t[1:] for t in model.tokenize("▁龘")][-3:] == [(1, 2)] * 3


def test_unused_and_user_defined_pieces_match_sentencepiece(shared_data, tmp_path):
    """A copy of hf_test_bpe.model with some pieces made UNUSED (resegmented)
    and some USER_DEFINED (matched whole, never merged), written by our writer
    and loaded by sentencepiece."""
    spm = pytest.importorskip("sentencepiece")
    src = shared_data / "vocab" / "sentencepiece" / "hf_test_bpe.model"
    if not src.is_file():
        pytest.skip("hf_test_bpe.model not found")
    proto = read_model(src)
    rng = random.Random(7)
    changed = {"unused": 0, "user": 0}
    for p in proto.pieces:
        if p.type != PieceType.NORMAL or len(p.piece) < 2:
            continue
        r = rng.random()
        if r < 0.15:
            p.type = PieceType.UNUSED
            changed["unused"] += 1
        elif r < 0.2:
            p.type = PieceType.USER_DEFINED
            changed["user"] += 1
    path = tmp_path / "variant.model"
    write_model(proto, path)
    sp = spm.SentencePieceProcessor(model_file=str(path))
    model = _sp_model(path)
    checked = 0
    for name, lines in _lines(shared_data):
        deadline = time.perf_counter() + SECONDS_PER_FILE / 2
        for line in lines:
            assert model.encode_piece(sp.normalize(line)) == sp.encode(line), (name, line)
            checked += 1
            if time.perf_counter() > deadline:
                break
    assert checked > 300 and changed["unused"] > 50 and changed["user"] > 10


def test_unknown_characters_fuse_into_one_unk_without_byte_fallback():
    model = PieceBPE.from_sentencepiece(["<unk>", "▁", "a"], [0, -1, -2], [2, 1, 1])
    assert model.tokenize("▁xyza") == [(1, 0, 1), (0, 1, 4), (2, 4, 5)]


def test_equal_scores_merge_leftmost_first():
    # "ab" and "bc" both score -1: the leftmost candidate wins
    model = PieceBPE.from_sentencepiece(["<unk>", "a", "b", "c", "ab", "bc"], [0, -5, -5, -5, -1, -1], [2, 1, 1, 1, 1, 1])
    assert model.encode_piece("abc") == [4, 3]
    assert model.encode_piece("bcab") == [5, 4]


# -- HF tokenizers' BPE model ---------------------------------------------------------


def _hf_pieces(tok, text):
    normalized = tok.normalizer.normalize_str(text) if tok.normalizer else text
    return [p for p, _ in tok.pre_tokenizer.pre_tokenize_str(normalized)]


def _hf_tokens(hf_model, piece):
    """HF model tokens as (id, start, end) with its UTF-8 byte offsets turned into code points."""
    char_at = {}
    pos = 0
    for k, ch in enumerate(piece):
        char_at[pos] = k
        pos += len(ch.encode("utf-8"))
    char_at[pos] = len(piece)
    out = []
    for t in hf_model.tokenize(piece):
        start, end = t.offsets
        # a byte-fallback token covers a byte inside a character: give it the character
        s = max(k for b, k in char_at.items() if b <= start)
        e = min(k for b, k in char_at.items() if b >= end)
        out.append((t.id, s, e))
    return out


def _compare_with_hf(shared_data, hf_model, ours, tok):
    checked = 0
    for name, lines in _lines(shared_data):
        deadline = time.perf_counter() + SECONDS_PER_FILE / 2
        for line in lines:
            for piece in _hf_pieces(tok, line):
                assert ours.tokenize(piece) == _hf_tokens(hf_model, piece), (name, piece)
                checked += 1
            if time.perf_counter() > deadline:
                break
    assert checked > 1000


def test_gpt2_tokenizer_json_model_equals_hf(shared_data):
    tokenizers = pytest.importorskip("tokenizers")
    path = shared_data / "vocab" / "hf" / "gpt2_tokenizer.json"
    if not path.is_file():
        pytest.skip("gpt2_tokenizer.json not found")
    tok = tokenizers.Tokenizer.from_file(str(path))
    ours = PieceBPE.from_dict(json.loads(path.read_text(encoding="utf-8"))["model"])
    _compare_with_hf(shared_data, tok.model, ours, tok)


def test_qwen2_vocab_and_merges_equal_hf(shared_data):
    tokenizers = pytest.importorskip("tokenizers")
    d = shared_data / "vocab" / "hf" / "qwen2"
    if not (d / "merges.txt").is_file():
        pytest.skip("qwen2 files not found")
    hf_model = tokenizers.models.BPE.from_file(str(d / "vocab.json"), str(d / "merges.txt"))
    tok = tokenizers.Tokenizer(hf_model)
    tok.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    vocab = json.loads((d / "vocab.json").read_text(encoding="utf-8"))
    merges = [
        line
        for n, line in enumerate((d / "merges.txt").read_text(encoding="utf-8").split("\n"))
        if line and not (n == 0 and line.startswith("#version"))
    ]
    ours = PieceBPE(vocab, merges)
    _compare_with_hf(shared_data, hf_model, ours, tok)


TRAIN_TEXT = ["low lower lowest newer wider wide", "the cat in the hat", "aaabdaaabac ab ba cab"] * 3

OPTION_SETS = [
    dict(),
    dict(continuing_subword_prefix="##"),
    dict(end_of_word_suffix="</w>"),
    dict(continuing_subword_prefix="##", end_of_word_suffix="</w>"),
]


def _hf_trained(options):
    tokenizers = pytest.importorskip("tokenizers")
    trainer = tokenizers.trainers.BpeTrainer(
        vocab_size=60, special_tokens=["<unk>"], show_progress=False, **options
    )
    tok = tokenizers.Tokenizer(tokenizers.models.BPE(unk_token="<unk>", **options))
    tok.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    tok.train_from_iterator(TRAIN_TEXT, trainer)
    return json.loads(tok.to_str())["model"]


@pytest.mark.parametrize("options", OPTION_SETS)
@pytest.mark.parametrize("fuse_unk", [False, True])
@pytest.mark.parametrize("byte_fallback", [False, True])
@pytest.mark.parametrize("ignore_merges", [False, True])
def test_hf_options_give_hf_ids_and_offsets(options, fuse_unk, byte_fallback, ignore_merges):
    tokenizers = pytest.importorskip("tokenizers")
    data = _hf_trained(options)
    data.update(fuse_unk=fuse_unk, byte_fallback=byte_fallback, ignore_merges=ignore_merges)
    if byte_fallback:
        for b in "é".encode():
            data["vocab"][f"<0x{b:02X}>"] = len(data["vocab"])
    hf = tokenizers.Tokenizer.from_str(json.dumps({"version": "1.0", "model": data})).model
    ours = PieceBPE.from_dict(data)

    @settings(max_examples=60, deadline=None, derandomize=True)
    @given(st.text(alphabet="abcdehilnortwé龘", max_size=14))
    def check(piece):
        assert ours.tokenize(piece) == _hf_tokens(hf, piece)

    check()
    for word in ("lowest", "newer", "aaabdaaabac", "é", "龘龘a"):
        assert ours.tokenize(word) == _hf_tokens(hf, word)


def test_merges_may_be_strings_or_lists():
    vocab = {"a": 0, "b": 1, "ab": 2}
    assert PieceBPE(vocab, ["a b"]).encode_piece("ab") == PieceBPE(vocab, [["a", "b"]]).encode_piece("ab") == [2]


def test_lowest_rank_then_leftmost_wins():
    vocab = {"a": 0, "b": 1, "c": 2, "ab": 3, "bc": 4}
    assert PieceBPE(vocab, ["b c", "a b"]).encode_piece("abc") == [0, 4]
    assert PieceBPE(vocab, ["a b", "b c"]).encode_piece("abcbc") == [3, 2, 4]


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="ab", min_size=0, max_size=150))
def test_heap_and_array_merge_agree(piece):
    vocab = {"a": 0, "b": 1, "ab": 2, "ba": 3, "aa": 4, "abab": 5, "aab": 6, "bb": 7}
    model = PieceBPE(vocab, ["a b", "b a", "a a", "ab ab", "aa b", "b b"])
    syms = [[vocab[c], i, i + 1] for i, c in enumerate(piece)]
    if len(syms) >= 2:
        short = model._hf_merge_short([list(s) for s in syms])
        heap = model._hf_merge_heap([list(s) for s in syms], 0.0, None)
        assert short == heap


def test_long_piece_is_fast():
    model = PieceBPE({"a": 0, "aa": 1, "aaaa": 2}, ["a a", "aa aa"])
    t = time.perf_counter()
    assert model.encode_piece("a" * 40_000) == [2] * 10_000
    sp = PieceBPE.from_sentencepiece(["<unk>", "a", "aa", "aaaa"], [0, -1, -2, -3], [2, 1, 1, 1])
    assert sp.encode_piece("a" * 40_000) == [3] * 10_000
    assert time.perf_counter() - t < 5


# -- serialization ----------------------------------------------------------------


def test_to_dict_from_dict_and_pickle_round_trip():
    hf = PieceBPE({"<unk>": 0, "a": 1, "b": 2, "ab": 3}, ["a b"], unk_token="<unk>", fuse_unk=True)
    assert PieceBPE.from_dict(hf.to_dict()).to_dict() == hf.to_dict()
    assert hf.to_dict()["type"] == "BPE" and hf.to_dict()["merges"] == [["a", "b"]]
    sp = PieceBPE.from_sentencepiece(["<unk>", "a", "b", "ab", "<0x61>"], [0, -1, -2, -0.5, 0], [2, 1, 1, 1, 6])
    again = PieceBPE.from_dict(json.loads(json.dumps(sp.to_dict())))
    assert again.to_dict() == sp.to_dict() and again.encode_piece("abx") == sp.encode_piece("abx") == [3, 0]
    for m in (hf, sp):
        assert pickle.loads(pickle.dumps(m)).encode_piece("abab") == m.encode_piece("abab")


@pytest.mark.parametrize(
    "data, message",
    [
        ({"type": "BPE", "merges": []}, "model.vocab"),
        ({"type": "BPE", "vocab": {"a": 0}, "merges": ["a b"]}, r"model.merges\[0\]"),
        ({"type": "BPE", "vocab": {"a": 0}, "merges": ["ab"]}, r"model.merges\[0\]"),
        ({"type": "BPE", "vocab": {"a": "0"}}, "id must be an int"),
        ({"type": "BPE", "vocab": {}, "fuse_unk": "yes"}, "fuse_unk"),
        ({"type": "BPE", "vocab": {}, "dropout": 2.0}, "dropout"),
        ({"type": "WordPiece", "vocab": {}}, "model.type"),
        ({"type": "SentencePieceBPE", "vocab": [["a", 0.0, "NORMAL"]]}, "UNKNOWN"),
        ({"type": "SentencePieceBPE", "vocab": [["a", "x", "NORMAL"]]}, r"model.vocab\[0\]"),
    ],
)
def test_bad_dicts_raise_file_format_error_naming_the_field(data, message):
    with pytest.raises(FileFormatError, match=message):
        PieceBPE.from_dict(data)


# -- BPE-dropout ---------------------------------------------------------------------

WORDS = ["lowest", "aaabdaaabac", "the cat in the hat", "x" * 200]


def _models():
    vocab = {c: i for i, c in enumerate("abcdehilnorstwx ")}
    merges = []
    for w in ("lowest", "aaabdaaabac", "the", "cat", "hat", "xx", "xxxx", "xxxxxxxx"):
        parts = list(w)
        # merge left to right: l o -> lo, lo w -> low ...
        cur = parts[0]
        for c in parts[1:]:
            if cur + c not in vocab:
                vocab[cur + c] = len(vocab)
                merges.append(f"{cur} {c}")
            cur = cur + c
    hf = PieceBPE(vocab, merges)
    pieces = sorted(vocab, key=vocab.get)
    sp = PieceBPE.from_sentencepiece(["<unk>"] + pieces, [0.0] + [-float(i) for i in range(len(pieces))], [2] + [1] * len(pieces))
    return hf, sp


@pytest.mark.parametrize("kind", [0, 1])
def test_dropout_zero_is_exact_and_one_gives_characters(kind):
    model = _models()[kind]
    for w in WORDS:
        assert model.encode_piece(w, dropout=0.0, rng=random.Random(1)) == model.encode_piece(w)
        ones = model.encode_piece(w, dropout=1.0, rng=random.Random(1))
        assert [model.id_to_token(i) for i in ones] == list(w)


@pytest.mark.parametrize("kind", [0, 1])
def test_dropout_is_deterministic_given_the_seed(kind):
    model = _models()[kind]
    a = [model.encode_piece(w, dropout=0.3, rng=random.Random(42)) for w in WORDS * 5]
    b = [model.encode_piece(w, dropout=0.3, rng=random.Random(42)) for w in WORDS * 5]
    assert a == b
    seen = {tuple(model.encode_piece("aaabdaaabac", dropout=0.3, rng=random.Random(s))) for s in range(50)}
    assert len(seen) > 3  # it does vary with the seed
    for s in seen:  # and always spells the word
        assert "".join(model.id_to_token(i) for i in s) == "aaabdaaabac"


def test_dropout_given_at_construction_uses_the_seed():
    vocab = {"a": 0, "b": 1, "ab": 2, "abab": 3}
    one = PieceBPE(vocab, ["a b", "ab ab"], dropout=0.5, seed=3)
    two = PieceBPE(vocab, ["a b", "ab ab"], dropout=0.5, seed=3)
    assert [one.encode_piece("abababab") for _ in range(20)] == [two.encode_piece("abababab") for _ in range(20)]
    assert one.to_dict()["dropout"] == 0.5


def test_more_dropout_gives_more_tokens():
    model = _models()[0]
    rng = random.Random(0)
    # "lowest" is one chain of merges, so a skipped merge can only leave more pieces
    counts = [sum(len(model.encode_piece("lowest", dropout=p, rng=rng)) for _ in range(200)) for p in (0.0, 0.1, 0.5)]
    assert 200 == counts[0] < counts[1] < counts[2]


def _byte_bpe() -> BPE:
    vocab = {b: bytes([b]) for b in range(256)}
    for tok in (b"ab", b"abab", b"aa", b"aaaa", b"ba"):
        vocab[len(vocab)] = tok
    return BPE(vocab)


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=60).map(lambda b: bytes(c % 3 + 97 for c in b)), st.integers(0, 2**32))
def test_byte_level_dropout_zero_exact_one_bytes_deterministic(piece, seed):
    model = _byte_bpe()
    assert model.encode_bytes(piece, dropout=0.0, rng=random.Random(seed)) == model.encode_bytes(piece)
    assert model.encode_bytes(piece, dropout=1.0, rng=random.Random(seed)) == list(piece)
    a = model.encode_bytes(piece, dropout=0.4, rng=random.Random(seed))
    assert a == model.encode_bytes(piece, dropout=0.4, rng=random.Random(seed))
    assert b"".join(model.token_bytes(i) for i in a) == piece


def test_byte_level_dropout_uses_the_heap_path_for_long_pieces():
    model = _byte_bpe()
    piece = b"ab" * 1000
    assert len(model.encode_bytes(piece, dropout=0.1, rng=random.Random(0))) > len(model.encode_bytes(piece))
    assert bpe_module._merge_dropout_bytes(model.ranks, piece, 0.0, random.Random(0)) == bpe_module.bpe_merge_bytes(
        model.ranks, piece
    )


# -- SentencePiece BPE training -------------------------------------------------------
# (trainers/spm_bpe.py: its model is a PieceBPE, so its tests live beside the model's)

from tokenforge.errors import TrainingError
from tokenforge.trainers.coverage import count_chars, required_chars
from tokenforge.trainers.spm_bpe import SentencePieceBPETrainer


def _sp_words(line: str) -> list[str]:
    """sentencepiece's whitespace split of an identity-normalized line: each ▁ starts a word."""
    out: list[str] = []
    for ch in "▁" + line.replace(" ", "▁"):
        if ch == "▁" or not out:
            out.append(ch)
        else:
            out[-1] += ch
    return out


def _counts(lines):
    counts: dict[str, int] = {}
    for line in lines:
        for w in _sp_words(line):
            counts[w] = counts.get(w, 0) + 1
    return counts


def _corpus(shared_data, name, n):
    path = shared_data / "text" / name
    if not path.is_file():
        pytest.skip(f"{path} not found")
    # sentencepiece's trainer skips lines over max_sentence_length (4192 bytes): leave them out
    lines = [l for l in path.read_text(encoding="utf-8").split("\n") if l.strip() and len(l.encode()) <= 4192]
    return lines[:n], lines[n : n + 300]


@pytest.mark.parametrize(
    "name, lines, vocab_size, byte_fallback",
    [("botchan.txt", 1200, 800, True), ("wagahaiwa_nekodearu.txt", 500, 3000, False)],
)
def test_training_gives_sentencepiece_pieces(shared_data, name, lines, vocab_size, byte_fallback, tmp_path):
    """Same pieces in the same order, same scores and types as spm_train (the
    exhaustive comparison is tests/trainers/test_spm_bpe_vs_sentencepiece.py)."""
    spm = pytest.importorskip("sentencepiece")
    import io

    train, heldout = _corpus(shared_data, name, lines)
    options = dict(vocab_size=vocab_size, byte_fallback=byte_fallback, split_digits=True, character_coverage=0.9995)
    buf = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(train), model_writer=buf, model_type="bpe", normalization_rule_name="identity",
        remove_extra_whitespaces=False, num_threads=1, minloglevel=2, max_sentencepiece_length=16, **options,
    )
    ref = read_model(buf.getvalue())
    trainer = SentencePieceBPETrainer(show_progress=False, **options)
    model = trainer.train_from_counts(_counts(train))
    ours = [model.id_to_token(i) for i in range(model.vocab_size)]
    theirs = [p.piece for p in ref.pieces]
    assert len(ours) == len(theirs) == vocab_size
    assert model.scores == [p.score for p in ref.pieces]
    assert model.types == [p.type for p in ref.pieces]
    n_meta = 3 + (256 if byte_fallback else 0)
    assert ours[:n_meta] == theirs[:n_meta]
    alphabet = [c for c, _ in required_chars(count_chars(_counts(train)), 0.9995)]
    assert ours[-len(alphabet) :] == theirs[-len(alphabet) :] == alphabet  # coverage-ordered characters
    assert ours == theirs
    # written as a .model file, sentencepiece encodes with our pieces exactly as we do
    path = tmp_path / "ours.model"
    write_model(trainer.model_proto(model), path)
    sp = spm.SentencePieceProcessor(model_file=str(path))
    for line in heldout:
        assert model.encode_piece(sp.normalize(line)) == sp.encode(line), line


def test_trained_pieces_obey_the_valid_piece_rule(shared_data):
    train, _ = _corpus(shared_data, "botchan.txt", 800)
    train = train + ["年号は2024年です ok123 x1y"] * 50
    model = SentencePieceBPETrainer(vocab_size=900, split_digits=True, max_piece_length=5, show_progress=False).train_from_counts(
        _counts(train)
    )
    for i in range(model.vocab_size):
        p = model.id_to_token(i)
        if model.types[i] != 1:
            continue
        assert len(p) <= 5
        assert "▁" not in p[1:]
        assert len(p) == 1 or not any(c.isdigit() for c in p)
        letters = [c for c in p if c.isalpha()]
        assert not (any(c.isascii() for c in letters) and any(not c.isascii() for c in letters)), p


def test_training_is_deterministic_and_ignores_count_order():
    counts = {"▁aab": 4, "▁abab": 4, "▁ba": 4, "▁bb": 2, "▁a": 7}
    t = SentencePieceBPETrainer(vocab_size=14, special_tokens=[], show_progress=False)
    a = t.train_from_counts(counts).to_dict()
    b = t.train_from_counts(dict(reversed(list(counts.items())))).to_dict()
    assert a == b


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.text(alphabet="abc▁", min_size=1, max_size=8).map(lambda w: "▁" + w.replace("▁", "")), st.integers(1, 9), min_size=1, max_size=12))
def test_trained_model_spells_every_training_word(counts):
    model = SentencePieceBPETrainer(vocab_size=30, special_tokens=[], character_coverage=1.0, show_progress=False).train_from_counts(counts)
    for w in counts:
        toks = [model.id_to_token(i) for i in model.encode_piece(w)]
        assert "".join(toks) == w


def test_rare_characters_become_unk_or_bytes():
    counts = {"▁ab": 10_000, "▁龘": 1}
    plain = SentencePieceBPETrainer(vocab_size=6, special_tokens=[], show_progress=False).train_from_counts(counts)
    assert plain.token_to_id("龘") is None and plain.encode_piece("▁龘") == [plain.token_to_id("▁"), 0]
    fb = SentencePieceBPETrainer(vocab_size=262, special_tokens=[], byte_fallback=True, show_progress=False)
    ids = fb.train_from_counts(counts).encode_piece("龘")
    assert ids == [1 + 0xE9, 1 + 0xBE, 1 + 0x98]


@pytest.mark.parametrize(
    "kwargs, counts, message",
    [
        (dict(vocab_size=5), {"▁abcdef": 1}, r"at least 10"),
        (dict(vocab_size=100), {}, "no text to train on"),
        (dict(vocab_size=100), {"▁a b": 1}, "space"),
        (dict(vocab_size=0), {"▁a": 1}, "vocab_size"),
    ],
)
def test_training_errors_say_what_is_wrong(kwargs, counts, message):
    with pytest.raises(TrainingError, match=message):
        SentencePieceBPETrainer(show_progress=False, **kwargs).train_from_counts(counts)


# -- random sentencepiece BPE models, written by our writer, against the library ---------


@st.composite
def _random_sp_models(draw, normal_only=False):
    alphabet = "ab▁c"
    strings = draw(st.lists(st.text(alphabet=alphabet, min_size=2, max_size=4), min_size=1, max_size=14, unique=True))
    pieces = ["<unk>", "<s>", "</s>"] + list(alphabet) + strings
    types = [2, 3, 3] + [1] * len(alphabet)
    for _ in strings:
        types.append(1 if normal_only else draw(st.sampled_from([1, 1, 1, 5, 4])))
    # few distinct score values: ties are common
    scores = [0.0, 0.0, 0.0] + [draw(st.sampled_from([-1.0, -2.0, -3.0, -4.5])) for _ in pieces[3:]]
    if draw(st.booleans()):
        pieces += [f"<0x{b:02X}>" for b in range(256)]
        types += [6] * 256
        scores += [0.0] * 256
        byte_fallback = True
    else:
        byte_fallback = False
    return pieces, scores, types, byte_fallback


@settings(max_examples=150, deadline=None)
@given(
    st.one_of(_random_sp_models(), _random_sp_models(normal_only=True)),
    st.lists(st.text(alphabet="ab▁cd", max_size=24), min_size=1, max_size=4),
)
def test_random_models_encode_as_sentencepiece(model_spec, texts):
    """Random small models (ties, UNUSED, USER_DEFINED, byte pieces) written by our
    writer: sentencepiece and PieceBPE agree. NORMAL-only models also take the
    cached part-by-part path."""
    spm = pytest.importorskip("sentencepiece")
    from tokenforge.sentencepiece.proto import (
        ModelProto,
        NormalizerSpec,
        SentencePiece,
        TrainerSpec,
        encode_model,
    )

    pieces, scores, types, byte_fallback = model_spec
    proto = ModelProto(
        pieces=[SentencePiece(p, s, t) for p, s, t in zip(pieces, scores, types)],
        trainer_spec=TrainerSpec(model_type=2, vocab_size=len(pieces), byte_fallback=byte_fallback),
        normalizer_spec=NormalizerSpec(name="identity", add_dummy_prefix=False, remove_extra_whitespaces=False),
    )
    sp = spm.SentencePieceProcessor(model_proto=encode_model(proto))
    model = PieceBPE.from_sentencepiece(pieces, scores, types, byte_fallback=byte_fallback)
    for text in texts + texts:  # twice: the second time from the part cache
        assert model.encode_piece(text) == sp.encode(text), text

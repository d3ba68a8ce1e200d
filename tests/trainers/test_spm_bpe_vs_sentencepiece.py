"""SentencePieceBPETrainer learns what ``spm_train --model_type=bpe`` learns: the
same pieces in the same order, with the same scores and types, on the same lines
(identity normalization, no extra-whitespace removal); and the native merge loop
learns what the pure-Python reference learns.

sentencepiece's BPE trainer (``bpe_model_trainer.cc``, 0.2.x) takes, each step,
the pair with the largest count, then the shortest piece, then the smallest
piece string; where no pair with a positive count is left it goes on with the
pairs whose count fell to 0. These tests hold tokenforge to that on real text,
on random little corpora and on the corner cases one at a time (ties, meta
pieces spelled in the text, digits, scripts sentencepiece's table does not
know). Nothing here is a "close enough": each comparison is exact.
"""

from __future__ import annotations

import io
import random

import pytest

from tokenforge import _native
from tokenforge.sentencepiece.proto import read_model
from tokenforge.trainers.spm_bpe import SentencePieceBPETrainer

spm = pytest.importorskip("sentencepiece")

SPACE = "\u2581"


def _counts(lines):
    """sentencepiece's whitespace split of identity-normalized lines: a word starts at each ▁."""
    counts: dict[str, int] = {}
    for line in lines:
        if not line:
            continue  # sentencepiece skips empty lines
        for w in (SPACE + line.replace(" ", SPACE)).split(SPACE)[1:]:
            counts[SPACE + w] = counts.get(SPACE + w, 0) + 1
    return counts


def _spm(lines, vocab_size, **options):
    buf = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(lines), model_writer=buf, model_type="bpe", vocab_size=vocab_size,
        normalization_rule_name="identity", remove_extra_whitespaces=False, max_sentence_length=1 << 20,
        num_threads=1, minloglevel=3, hard_vocab_limit=False, **options,
    )
    model = read_model(buf.getvalue())
    return [p.piece for p in model.pieces], [p.score for p in model.pieces], [int(p.type) for p in model.pieces]


def _ours(lines, vocab_size, backend, **options):
    if "max_sentencepiece_length" in options:
        options["max_piece_length"] = options.pop("max_sentencepiece_length")
    model = SentencePieceBPETrainer(vocab_size=vocab_size, show_progress=False, backend=backend, **options).train_from_counts(
        _counts(lines)
    )
    return [model.id_to_token(i) for i in range(model.vocab_size)], list(model.scores), [int(t) for t in model.types]


def _check(lines, vocab_size, **options):
    """sentencepiece's vocabulary, tokenforge's with each backend: all three the same."""
    theirs = _spm(lines, vocab_size, **options)
    backends = ["python"] + (["native"] if _native.available() else [])
    for backend in backends:
        ours = _ours(lines, vocab_size, backend, **dict(options))
        if ours[0] != theirs[0]:
            k = next((i for i, (x, y) in enumerate(zip(ours[0], theirs[0])) if x != y), min(len(ours[0]), len(theirs[0])))
            pytest.fail(f"{backend}: first different piece at id {k}: ours {ours[0][k : k + 4]}, "
                        f"sentencepiece's {theirs[0][k : k + 4]} ({len(ours[0])} vs {len(theirs[0])} pieces)")
        assert ours[1] == theirs[1] and ours[2] == theirs[2], backend
    return theirs[0]


def _lines(shared_data, name, n, start=0):
    path = shared_data / "text" / name
    if not path.is_file():
        pytest.skip(f"{path} not found")
    return [l for l in path.read_text(encoding="utf-8").split("\n") if l][start : start + n]


# -- real text ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, n_lines, vocab_size, options",
    [
        ("botchan.txt", 2000, 1500, {}),
        ("botchan.txt", 1200, 700, {"split_digits": True, "byte_fallback": True, "max_sentencepiece_length": 6}),
        ("wagahaiwa_nekodearu.txt", 400, 2500, {}),
        ("wagahaiwa_nekodearu.txt", 300, 2000, {"split_by_unicode_script": False, "character_coverage": 0.98}),
        ("hongloumeng.txt", 120, 3000, {"split_by_number": False}),
    ],
)
def test_same_pieces_as_spm_train_on_real_text(shared_data, name, n_lines, vocab_size, options):
    pieces = _check(_lines(shared_data, name, n_lines), vocab_size, character_coverage=options.pop("character_coverage", 0.9995),
                    **options)
    assert len(pieces) == vocab_size


def test_same_pieces_on_many_scripts(shared_data):
    """The Universal Declaration of Human Rights, article 1 in every language: hundreds of scripts,
    combining marks and scripts the two script tables disagree on."""
    path = shared_data / "text" / "parallel" / "udhr_articles_aligned.tsv"
    if not path.is_file():
        pytest.skip(f"{path} not found")
    rows = [r.split("\t") for r in path.read_text(encoding="utf-8").split("\n")[1:] if r]
    lines = [r[4] for r in rows if r[3] in ("1", "2")]
    _check(lines, 3000, character_coverage=0.9995)


# -- random little corpora -------------------------------------------------------------------------

PARTS = ["a", "b", "c", "aa", "ab", " ", " ", "1", "２", "٣", "\u0967", "中", "の", "カ", "ー", "é", "\u0301",
         "<s>", "<unk>", "\x1f", "ㄱ", "\u4db6", "\u1abf", "\u0953", "𠀋", SPACE]


def _random_case(rng):
    parts = rng.sample(PARTS, rng.randint(2, 8))
    lines = ["".join(rng.choice(parts) for _ in range(rng.randint(1, 14))) for _ in range(rng.randint(1, 40))]
    options = dict(
        character_coverage=rng.choice([1.0, 0.9995, 0.98]), max_sentencepiece_length=rng.randint(2, 8),
        split_digits=rng.random() < 0.3, split_by_number=rng.random() < 0.7,
        split_by_unicode_script=rng.random() < 0.8, byte_fallback=rng.random() < 0.2,
    )
    vocab_size = rng.randint(20, 150) + (256 if options["byte_fallback"] else 0)
    return lines, vocab_size, options


@pytest.mark.parametrize("seed", range(4))
def test_same_pieces_on_random_corpora(seed):
    """50 random corpora per seed over a few letters, digits of several kinds, CJK, combining marks,
    meta-piece spellings and U+001F, with random settings and vocabularies large enough that the
    pairs run out (sentencepiece then takes pairs at count 0)."""
    rng = random.Random(seed)
    checked = 0
    for _ in range(50):
        lines, vocab_size, options = _random_case(rng)
        if not _counts(lines):
            continue
        try:
            _spm(lines, vocab_size, **options)
        except RuntimeError:  # vocab_size below the meta pieces + characters: both refuse
            with pytest.raises(Exception, match="vocab_size"):
                _ours(lines, vocab_size, "python", **dict(options))
            continue
        _check(lines, vocab_size, **options)
        checked += 1
    assert checked >= 40


# -- the corner cases, one at a time -------------------------------------------------------------------


def test_count_ties_go_to_the_shorter_then_smaller_piece():
    """Every word once: nearly every step is a count tie. A shorter piece beats a longer one with
    the same count even when the longer one's left part is smaller (the former rule's choice)."""
    lines = ["ab abc abd bcd bce", "xa xab xabc", "cd cdb ab"]
    pieces = _check(lines, 40, character_coverage=1.0)
    assert pieces.index("ab") < pieces.index("▁ab")


def test_pairs_at_count_zero_fill_the_vocabulary_in_order():
    """"aaaa" merges to "aa aa": sentencepiece passes through ("aa", "a") on the way, and once no pair
    with a positive count is left it takes such pairs (count 0) too, shortest first."""
    pieces = _check(["aaaa abab", "aaa"], 30, character_coverage=1.0)
    assert "aaa" in pieces and "aba" in pieces


def test_meta_pieces_in_the_text_split_it():
    """sentencepiece replaces <unk>, <s>, </s> (and <0xNN> with byte fallback) in the text by U+001F
    before counting: no piece spans them and their characters count less."""
    lines = ["a<s>b a<s>b <unk>x", "q</s> <0x41>z <0x41>z"] * 3
    pieces = _check(lines, 30, character_coverage=1.0)
    assert "s" not in pieces and "u" not in pieces and "4" in pieces  # <0x41> is text here
    pieces = _check(lines, 300, character_coverage=1.0, byte_fallback=True)
    assert "4" not in pieces  # a byte piece's name: blanked as well


def test_digits_are_ascii_and_full_width_only():
    """split_digits and split_by_number apply to 0-9 and ０-９, not to other decimal digits."""
    lines = ["१२३ १२ ١٢٣ 123 １２３ x12 ab१"] * 3
    for options in ({"split_digits": True}, {"split_by_number": False}, {}):
        _check(lines, 40, character_coverage=1.0, **options)


def test_scripts_as_sentencepiece_sees_them():
    """Characters sentencepiece's table does not list (U+4DB6, U+1ABF, unassigned U+0378) are
    Common there; U+0953 is Devanagari there."""
    lines = ["中\u4db6 中\u4db6 a\u1abf a\u1abf ,\u4db6 ,\u4db6 \u0915\u0953 \u0915\u0953 x\u0378 x\u0378"] * 2
    _check(lines, 40, character_coverage=1.0)

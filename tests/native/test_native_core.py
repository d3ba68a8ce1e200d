"""The compiled core against its references: the regex module (reading the split
patterns with the pinned Unicode classes, see _pinned_unicode.py), the pure-Python
twin of every algorithm, and tiktoken."""

from __future__ import annotations

import sys
from array import array
from functools import lru_cache

import pytest
from _pinned_unicode import CLASSES, CODE_POINTS, generator, pinned_bits, reference_findall
from _tiktoken_ref import reference
from hypothesis import given, settings
from hypothesis import strategies as st

import tokenforge
from tokenforge import _native
from tokenforge.trainers.bpe import _byte_order, learn_merges
from tokenforge.trainers.counting import count_text

core = pytest.importorskip("tokenforge._core")
NAMES = list(_native.SCANNERS)


def scanner(name: str):
    return core.CoreBPE({bytes([i]): i for i in range(256)}, {}, _native.SCANNERS[name])


def test_unicode_tables_are_the_pinned_unicode_data_for_every_code_point():
    """The built tables are tools/ucd/ as tools/gen_unicode_tables.py reads it (a build from
    stale generated tables fails here); tests/native/test_unicode_versions.py checks that
    data against tiktoken and HF."""
    table = array("H")
    table.frombytes(core.class_table())
    assert len(table) == 0x110000
    bits = pinned_bits()
    for n, cls in enumerate(CLASSES):
        got = {c for c in CODE_POINTS if table[c] >> n & 1}
        expected = {c for c in CODE_POINTS if bits[c] >> n & 1}
        assert got == expected, (cls, sorted(got ^ expected)[:10])
    assert core.UNICODE_SOURCE == generator().source()


# Every class the patterns distinguish, and the characters their rules single out.
_ATOMS = list(
    "aZxsStTdDmMlLvVeErRſǅʰ"  # Ll Lu, contraction letters in both cases, long s, Lt, Lm
    "中文あア한ـא"  # Lo (CJK, kana, Hangul, tatweel (Lm), Hebrew)
    "\u0301\u0308\u0903\u20dd"  # Mn Mc Me
    "0129٣Ⅻ½"  # Nd, Arabic-Indic digit, Nl, No
    " \t\n\r\x0b\x0c\x85\xa0\u1680\u2000\u2028\u3000"  # whitespace classes
    "\x1c\x1f\x00\x7f"  # not \s in regex, though str.isspace says so for \x1c-\x1f
    "'\"!?.,/-_()[]{}#@$%&*+=<>|\\~`^;:"  # punctuation and symbols, '/' (o200k), apostrophe
    "🙂\u200d🏽🇯"  # emoji, ZWJ, modifier, regional indicator
) + ["'s", "'S", "'ll", "'LL", "'Ve", "'re", "'ſ", "  ", "\r\n", " \n", "123456", "CamelCase", "HTTPServer"]


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.sampled_from(_ATOMS), max_size=30).map("".join))
def test_native_scanners_give_the_regex_module_pieces(text):
    for name in NAMES:
        assert scanner(name).split(text) == reference_findall(name, text), name


# The scanners classify ASCII 16 bytes at a time: letter runs across and along those
# blocks, broken by the bytes next to the letter ranges (@ [ ` {), by non-ASCII letters
# and non-letters, and by the end of the text at every offset.
@settings(max_examples=1500, deadline=None)
@given(st.lists(st.sampled_from(["a", "Z", "z", "A", "q", "abcdefghijklmnopq", "XYZxyzABCabcQRSqrs", "@", "`", "[",
                                 "{", "\x7f", "é", "ǅ", "中", "\u0301", " ", "\n", "1", "'s", "\x80"]), max_size=60)
       .map("".join))
def test_native_scanners_on_long_letter_runs(text):
    for name in NAMES:
        assert scanner(name).split(text) == reference_findall(name, text), name


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=40))
def test_native_scanners_on_arbitrary_unicode(text):
    text = text.encode("utf-8", "replace").decode("utf-8")  # lone surrogates cannot be encoded
    for name in NAMES:
        assert scanner(name).split(text) == reference_findall(name, text), name


def test_native_scanners_on_real_text(shared_data):
    import sysconfig
    from pathlib import Path

    texts = [(shared_data / "text" / f).read_text(encoding="utf-8") for f in
             ["corpus.en", "german.txt", "botchan.txt", "hongloumeng.txt", "wagahaiwa_nekodearu.txt"]]
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    texts.append("".join((stdlib / f).read_text(encoding="utf-8") for f in ["textwrap.py", "json/decoder.py"]))
    texts.append((shared_data / "text" / "parallel" / "udhr_articles_aligned.tsv").read_text(encoding="utf-8")[:400_000])
    for text in texts:
        for name in NAMES:
            assert scanner(name).split(text) == reference_findall(name, text), name


@lru_cache(maxsize=None)
def _pair(name: str):
    base = tokenforge.get_encoding(name)
    native = tokenforge.Tokenizer(base.model, pre_tokenizer=base.pre_tokenizer, special_tokens=base.special_tokens, backend="native")
    python = tokenforge.Tokenizer(base.model, pre_tokenizer=base.pre_tokenizer, special_tokens=base.special_tokens, backend="python")
    return native, python


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_ATOMS), max_size=40).map("".join), st.sampled_from(["gpt2", "cl100k_base", "o200k_base"]))
def test_native_encode_equals_python_reference_and_tiktoken(text, name):
    native, python = _pair(name)
    ids = native.encode_ordinary(text)
    assert ids == python.encode_ordinary(text) == reference(name).encode_ordinary(text)
    assert native.decode_bytes(ids) == python.decode_bytes(ids) == text.encode("utf-8")


WORST_CASES = {
    "one letter": "x" * 200_000,
    "spaces": " " * 200_000,
    "digits": "1234567890" * 20_000,
    "no spaces": "".join("abcdefghij"[(i * 7919) % 10] for i in range(200_000)),
    "one CJK char": "龘" * 60_000,
    "minified json": '{"a":[1,2,{"b":"c"}],"d":null}' * 6_000,
    "newlines and spaces": "\n \n  \t" * 30_000,
    "one punctuation character": "-" * 100_000,
    "punctuation without spaces": "".join("!#$%&()*+,-./:;<=>?@[]^_{|}~"[(i * 7919) % 28] for i in range(100_000)),
    "base64": "".join("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"[(i * 7919 + i // 7) % 64]
                      for i in range(100_000)),
}


@pytest.mark.parametrize("case", list(WORST_CASES))
def test_worst_cases_equal_tiktoken(case):
    text = WORST_CASES[case]
    for name in ["gpt2", "cl100k_base", "o200k_base"]:
        assert tokenforge.get_encoding(name).encode_ordinary(text) == reference(name).encode_ordinary(text)


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base", "o200k_base"])
def test_runs_of_one_byte_of_every_length_equal_tiktoken(name):
    """The backtracking encoder reuses its trie walk inside runs of one repeated byte:
    runs shorter than, equal to and longer than the longest token, alone and between other
    characters, and one long enough to build the index first."""
    base = tokenforge.get_encoding(name)
    tok = tokenforge.Tokenizer(base.model, pre_tokenizer=base.pre_tokenizer, special_tokens=base.special_tokens)
    ref = reference(name)
    assert tok.encode_ordinary("-" * 70_000) == ref.encode_ordinary("-" * 70_000)  # builds the index
    for ch in "-= a.0\n":
        for n in (*range(1, 40), 63, 64, 65, 95, 96, 97, 111, 112, 113, 127, 128, 129, 200, 257, 1000, 4099):
            for text in (ch * n, "x" + ch * n + "y", ch * n + "!" + ch * (n // 2)):
                assert tok.encode_ordinary(text) == ref.encode_ordinary(text), (ch, n)
    for n in (100, 113, 200, 1000):  # two runs of different bytes in one piece
        for text in ("-" * n + "=" * n, "=" * n + "-" * n + "=" * n, "-" * n + "." * (n + 7)):
            assert tok.encode_ordinary(text) == ref.encode_ordinary(text), n


def test_the_piece_cache_kept_across_calls_cannot_change_ids():
    """Each thread keeps a memo of merged pieces per vocabulary across calls (the last two
    vocabularies it used). Interleaving vocabularies, a third one evicting, fresh
    tokenizers on the same model and threads all give the ids of a first encoding."""
    texts = ["identifier_name = other_identifier_name(argument_value)", "東京タワーの近くに住んでいます",
             "naïve  café\n\tdef __init__(self):", "x" * 40, ""]
    names = ["gpt2", "cl100k_base", "o200k_base"]
    want = {n: [reference(n).encode_ordinary(t) for t in texts] for n in names}
    for _ in range(3):
        for n in names:  # three vocabularies in turn: every switch evicts one cache
            enc = tokenforge.get_encoding(n)
            assert [enc.encode_ordinary(t) for t in texts] == want[n]
            assert enc.encode_batch(texts * 3, num_threads=2) == want[n] * 3
    base = tokenforge.get_encoding("cl100k_base")
    for _ in range(3):  # a new tokenizer on the same model has its own vocabulary identity
        fresh = tokenforge.Tokenizer(base.model, pre_tokenizer=base.pre_tokenizer, special_tokens=base.special_tokens)
        assert [fresh.encode_ordinary(t) for t in texts] == want["cl100k_base"]


def test_custom_pattern_uses_native_merges_with_regex_split():
    base = tokenforge.get_encoding("cl100k_base")
    pat = r"\w+|\s+|[^\w\s]+"
    native = tokenforge.Tokenizer(base.model, pre_tokenizer=pat, backend="native")
    python = tokenforge.Tokenizer(base.model, pre_tokenizer=pat, backend="python")
    text = "Custom patterns fall back to regex: x=1; y = [2, 3] 中文 🙂"
    assert native.encode(text) == python.encode(text)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.sampled_from(_ATOMS), max_size=20).map("".join), max_size=12), st.integers(1, 4))
def test_batch_on_threads_equals_one_by_one(texts, threads):
    enc = tokenforge.get_encoding("o200k_base")
    assert enc.encode_batch(texts, num_threads=threads, disallowed_special=()) == [
        enc.encode_ordinary(t) for t in texts
    ]


def test_encode_to_numpy_matches_list():
    np = pytest.importorskip("numpy")
    enc = tokenforge.get_encoding("cl100k_base")
    text = "numpy output 🙂 " * 100
    arr = enc.encode_to_numpy(text)
    assert arr.dtype == np.uint32 and arr.tolist() == enc.encode(text)
    assert tokenforge.get_encoding("gpt2").encode_to_numpy(text, dtype="uint16").dtype == np.uint16
    with pytest.raises(ValueError, match="uint16"):
        enc.encode_to_numpy(text, dtype="uint16")
    assert enc.encode_to_numpy("a\ud800b").tolist() == enc.encode("a\ud800b")


# ---- training: native merge loop and counting equal the Python reference ----


@settings(max_examples=150, deadline=None)
@given(
    st.dictionaries(st.text(st.sampled_from("abc"), min_size=1, max_size=8).map(str.encode), st.integers(1, 5), max_size=25),
    st.integers(0, 30),
    st.sampled_from(["bytes", "gpt2_unicode"]),
)
def test_native_merge_loop_equals_python_on_tie_heavy_corpora(counts, n, tie_break):
    assert learn_merges(counts, n, tie_break=tie_break, backend="native") == learn_merges(
        counts, n, tie_break=tie_break, backend="python"
    )


def test_native_training_equals_python_on_real_text(shared_data):
    text = (shared_data / "text" / "tinystories_valid_sample.txt").read_text(encoding="utf-8")[:300_000]
    text += (shared_data / "text" / "hongloumeng.txt").read_text(encoding="utf-8")[:60_000]
    pre = tokenforge.RegexSplit("gpt2")
    c_native = count_text(text, pre, None, "native")
    c_python = count_text(text, pre, None, "python")
    assert c_native == c_python
    assert learn_merges(c_native, 1500, backend="native") == learn_merges(c_python, 1500, backend="python")


def test_counts_beyond_32_bits_are_exact():
    merges = learn_merges({b"ab": 2**40, b"bc": 2**40 - 1, b"cd": 3}, 2, backend="native")
    assert merges == [(b"a", b"b"), (b"b", b"c")]


# ---- the binding never crashes on bad calls ----


def test_binding_rejects_bad_arguments_with_python_errors():
    with pytest.raises(TypeError):
        core.CoreBPE({"not bytes": 1}, {}, 0)
    with pytest.raises(ValueError):
        core.CoreBPE({}, {}, 99)
    c = core.CoreBPE.__new__(core.CoreBPE)
    with pytest.raises(ValueError, match="not initialised"):
        c.encode_ordinary("x")
    s = scanner("gpt2")
    with pytest.raises(TypeError):
        s.encode_ordinary(b"bytes")
    with pytest.raises(UnicodeEncodeError):
        s.encode_ordinary("\ud800")
    with pytest.raises(LookupError):
        s.decode_bytes([1, 2, 10**30])
    with pytest.raises(LookupError):
        s.decode_bytes([-1])
    with pytest.raises(TypeError):
        s.encode_piece("str")
    assert s.encode_piece(b"") == []
    with pytest.raises(ValueError):
        core.learn_merges([b"ab"], [1, 2], 3, _byte_order("bytes"))
    with pytest.raises(OverflowError):
        core.learn_merges([b"ab"], [2**70], 3, _byte_order("bytes"))


def test_native_core_is_the_default_backend():
    assert tokenforge.get_encoding("gpt2").plan == "rank-bpe" or _native.core() is None
    assert sys.modules.get("tokenforge._core") is core


# ---- the linear backtracking encoder equals the rank merge (heap/array) ----


@st.composite
def _trained_like_ranks(draw):
    """A rank table built like a trained one: each new token joins two earlier ones."""
    tokens = [bytes([c]) for c in range(256)]
    ranks = {t: i for i, t in enumerate(tokens)}
    small = [bytes([c]) for c in b"abc "]
    for _ in range(draw(st.integers(0, 40))):
        a = draw(st.sampled_from(small))
        b = draw(st.sampled_from(small))
        if a + b not in ranks:
            ranks[a + b] = len(ranks)
            small.append(a + b)
    return ranks


@settings(max_examples=300, deadline=None)
@given(_trained_like_ranks(), st.lists(st.sampled_from([b"a", b"b", b"c", b" ", b"ab", b"ca"]), max_size=120).map(b"".join))
def test_backtracking_encoder_equals_rank_merge_on_random_vocabularies(ranks, piece):
    c = core.CoreBPE(ranks, {}, -1)
    assert c.merge_with(piece, 1) == c.merge_with(piece, 0)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([b"x", b" ", b"\n", b"ab", b"the", b"\xe4\xb8\xad", b"\xe6\x96\x87", b"1", b"."]), min_size=1, max_size=200).map(b"".join),
       st.sampled_from(["gpt2", "cl100k_base", "o200k_base"]))
def test_backtracking_encoder_equals_rank_merge_on_real_vocabularies(piece, name):
    c = _pair(name)[0]._plan.core
    assert c.merge_with(piece, 1) == c.merge_with(piece, 0)


def test_backtracking_encoder_on_real_text_windows(shared_data):
    c = _pair("o200k_base")[0]._plan.core
    for fname in ["hongloumeng.txt", "botchan.txt", "wagahaiwa_nekodearu.txt"]:
        data = (shared_data / "text" / fname).read_bytes()[:120_000]
        for k in range(0, len(data) - 700, 1531):
            window = data[k : k + 700]
            assert c.merge_with(window, 1) == c.merge_with(window, 0), (fname, k)


def test_unreachable_tokens_do_not_confuse_the_backtracker():
    # "abc" is a token that no merge produces (its halves are not merged first); a whole-piece
    # lookup returns it, merging never does.
    ranks = {bytes([i]): i for i in range(256)}
    ranks[b"bc"] = 256
    ranks[b"abc"] = 257  # a + bc would give it, but "ab" is not a token and a+bc... is a token
    ranks[b"xyz"] = 258  # unreachable: neither xy nor yz is a token
    c = core.CoreBPE(ranks, {}, -1)
    for piece in [b"abc", b"abcabc", b"xyz", b"xyzxyz" * 50, b"aabcc" * 40]:
        assert c.merge_with(piece, 1) == c.merge_with(piece, 0), piece
    assert c.encode_piece(b"xyz") == [258]  # whole-piece lookup still wins


def test_fast_pair_check_equals_the_definition_on_real_token_pairs():
    import random

    for name in ["gpt2", "cl100k_base", "o200k_base"]:
        native = _pair(name)[0]
        c = native._plan.core
        assert c._check_pair(0xFFFFFFFF, 0xFFFFFFFF, False), "trained vocabularies take the fast path"
        rng = random.Random(7)
        ranks = list(native.mergeable_ranks.values())
        short = [r for t, r in native.mergeable_ranks.items() if len(t) <= 3]
        pairs = [(rng.choice(ranks), rng.choice(ranks)) for _ in range(20_000)]
        pairs += [(rng.choice(short), rng.choice(short)) for _ in range(20_000)]
        ids = native.encode_ordinary("Hello world, 中文的文本 and emoji 🙂 with   spaces\n\n" * 3)
        pairs += list(zip(ids, ids[1:]))
        for a, b in pairs:
            assert c._check_pair(a, b, False) == c._check_pair(a, b, True), (name, a, b)


def test_non_monotone_vocabulary_uses_the_definition_and_stays_exact():
    # "abc" (rank 256) is made from "ab" (rank 257): a part outranks its token.
    ranks = {bytes([i]): i for i in range(256)}
    ranks[b"abc"] = 256
    ranks[b"ab"] = 257
    ranks[b"ca"] = 258
    c = core.CoreBPE(ranks, {}, -1)
    assert not c._check_pair(0xFFFFFFFF, 0xFFFFFFFF, False)
    for piece in [b"abc" * 30, b"abcab" * 20, b"cabca" * 25, b"aabbcc" * 20]:
        assert c.merge_with(piece, 1) == c.merge_with(piece, 0), piece


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.sampled_from(_ATOMS), max_size=20).map("".join), max_size=12), st.integers(1, 3))
def test_flat_batch_to_numpy_equals_lists(texts, threads):
    pytest.importorskip("numpy")
    for backend in ("native", "python"):
        enc = _pair("cl100k_base")[0 if backend == "native" else 1]
        ids, offsets = enc.encode_batch_to_numpy(texts, num_threads=threads, disallowed_special=())
        assert len(offsets) == len(texts) + 1 and offsets[0] == 0
        assert [ids[offsets[k] : offsets[k + 1]].tolist() for k in range(len(texts))] == [
            enc.encode_ordinary(t) for t in texts
        ]


def test_sparse_ids_stay_correct_without_a_huge_native_table():
    ranks = {bytes([i]): i for i in range(256)}
    ranks[b"ab"] = 3_000_000_000  # far beyond the vocabulary size
    tok = tokenforge.Tokenizer(tokenforge.BPE.from_ranks(ranks), pre_tokenizer="gpt2")
    assert tok.plan == "python"  # the Python path serves it
    assert tok.encode("ab") == [3_000_000_000] and tok.decode([3_000_000_000]) == "ab"
    with pytest.raises(tokenforge.FileFormatError, match="token id must be an int"):
        tokenforge.BPE.from_ranks({**ranks, b"cd": 2**32})


def test_very_long_tokens_are_merged_exactly():
    # a token chain 600 bytes deep: the backtracker's spine check must not truncate it
    ranks = {bytes([i]): i for i in range(256)}
    tok = b"a"
    for _ in range(600):
        tok += b"a"
        ranks[tok] = len(ranks)
    c = core.CoreBPE(ranks, {}, -1)
    for piece in [b"a" * 601, b"a" * 1500, b"ab" * 300 + b"a" * 700]:
        assert c.merge_with(piece, 1) == c.merge_with(piece, 0)


def test_one_huge_token_keeps_long_runs_linear():
    """A vocabulary holding one 1 MB token once made every position of a long run of one
    byte cost that token's length (6 MB of 'x': minutes). Run in a child with a deadline far
    above the linear time (~0.1 s), so a return of the quadratic walk fails here."""
    import subprocess
    import sys

    code = (
        "import tokenforge\n"
        "from tokenforge.models.bpe import BPE\n"
        "ranks = {bytes([i]): i for i in range(256)}\n"
        "ranks[b'ab' * 500_000] = 256\n"
        "tok = tokenforge.Tokenizer(BPE.from_ranks(ranks), pre_tokenizer='gpt2')\n"
        "assert tok.encode('x' * 6_000_000) == [120] * 6_000_000\n"
        "assert tok.encode('ab' * 500_000) == [256] and tok.encode('ab' * 600_000) == [97, 98] * 600_000\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from([b"a", b"b", b"x", b"xx", b"ab"]), max_size=200).map(b"".join))
def test_backtracking_with_a_long_token_equals_rank_merge(piece):
    ranks = {bytes([i]): i for i in range(256)}
    ranks[b"xx"] = 256
    ranks[b"xxxx"] = 257
    ranks[b"ab" * 40] = 258
    c = core.CoreBPE(ranks, {}, -1)
    assert c.merge_with(piece, 1) == c.merge_with(piece, 0)


def _doubling_ranks(unit: bytes, depth: int) -> dict[bytes, int]:
    """Byte ranks, then unit, unit*2, unit*4, ... each the merge of two copies of the last."""
    ranks = {bytes([i]): i for i in range(256)}
    tok = unit[:1]
    for b in unit[1:]:
        tok += bytes([b])
        ranks.setdefault(tok, len(ranks))
    tok = unit
    for _ in range(depth):
        tok += tok
        ranks[tok] = len(ranks)
    return ranks


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from([b"ab" * 64, b"ab" * 200, b"ab", b"a", b"b", b"x" * 150, b"xy"]), max_size=12).map(b"".join))
def test_backtracking_with_long_derived_tokens_equals_rank_merge(piece):
    """Tokens of 256-1024 bytes that merging derives: the index takes their splits from
    the heap merge (the scan merge is quadratic there); both encoders agree."""
    ranks = _doubling_ranks(b"ab", 9)
    ranks.update({k: len(ranks) + i for i, k in enumerate(t for t in _doubling_ranks(b"x", 9) if t not in ranks)})
    c = core.CoreBPE(ranks, {}, -1)
    assert c.merge_with(piece, 1) == c.merge_with(piece, 0)
    python = tokenforge.Tokenizer(tokenforge.BPE.from_ranks(ranks), pre_tokenizer=None, backend="python")
    assert c.merge_with(piece, 0) == python.encode_ordinary(piece.decode())


def test_long_merges_are_checked_by_the_heap():
    """HF merge lists are checked against the ranks by merging each merge's bytes with the
    lower ranks; merges of 256-1024 bytes take the heap (same answer as the scan)."""
    ranks = _doubling_ranks(b"ab", 9)
    c = tokenforge.BPE.from_ranks(ranks).native_encoder()
    inverse = {r: t for t, r in ranks.items()}
    merges = [(ranks[t[: len(t) // 2]], ranks[t[len(t) // 2 :]]) for t, r in sorted(ranks.items(), key=lambda kv: kv[1]) if r >= 256]
    assert c.first_underived_merge(merges) == -1
    assert max(len(inverse[a]) + len(inverse[b]) for a, b in merges) == 1024
    broken = list(merges)
    broken[-1] = (broken[-1][1], broken[-2][0])  # not the two halves of its token
    assert c.first_underived_merge(broken) == len(broken) - 1


def test_one_long_mergeable_token_keeps_the_index_build_linear():
    """GPT-2's ranks plus one 800 KB token: the first encode of a long piece indexes every
    token, and deriving that token's split once took minutes (a quadratic merge; a 400 KB
    token: 66 s). In a child with a deadline far above the linear time (< 1 s)."""
    import subprocess

    code = (
        "import tokenforge\n"
        "from tokenforge.models.bpe import BPE\n"
        "ranks = dict(tokenforge.get_encoding('gpt2').mergeable_ranks)\n"
        "ranks[b'a' * 800_000] = len(ranks)\n"
        "tok = tokenforge.Tokenizer(BPE.from_ranks(ranks), pre_tokenizer='gpt2')\n"
        "ids = tok.encode_ordinary('a' * 800_000 + 'b')\n"
        "assert tok.decode(ids) == 'a' * 800_000 + 'b'\n"
        "assert tok.encode_ordinary('a' * 800_000) == [len(ranks) - 1]\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)

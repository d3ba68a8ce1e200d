"""The native Unicode tables against the engines they must agree with, on every code point.

The split patterns of gpt2, cl100k and o200k are tiktoken's (Rust ``regex-syntax``
tables, Unicode 16.0.0); Llama 3's and Qwen's are HF tokenizers' ``Split`` (Oniguruma,
Unicode 16.0.0); BERT's punctuation is HF's ``BertPreTokenizer`` (the
``unicode_categories`` crate, Unicode 8.0.0). ``tools/gen_unicode_tables.py`` builds the
tables from that data, checked in under ``tools/ucd/``. Every code point U+0000..U+10FFFF
except the surrogates (1,112,064) is checked here, alone and in a few contexts, through
the whole encoder, each batch as one long text.
"""

from __future__ import annotations

import shutil
from array import array
from functools import lru_cache

import pytest
from _pinned_unicode import CLASSES, CODE_POINTS, generator, ranges
from _tiktoken_ref import reference

import tokenforge
from tokenforge import _native
from tokenforge.pretokenizers import PATTERNS

core = pytest.importorskip("tokenforge._core")
tiktoken = pytest.importorskip("tiktoken")
tokenizers = pytest.importorskip("tokenizers")

ALL = "".join(map(chr, CODE_POINTS))
BYTE_RANKS = {bytes([i]): i for i in range(256)}
#: Each code point c is written in these contexts (x stands for c), joined by line breaks:
#: alone, between two lower-case letters (a letter run goes on or stops; c before letters),
#: after a space and before a digit, after an apostrophe (contractions fold case), and
#: between an upper-case letter and a contraction (o200k's case runs).
CONTEXTS = ("x", "axa", " x1", "'x", "Ax's")
#: For HF's Split, which is slower: the classes themselves are checked against Oniguruma
#: on their own (test_scanner_classes_are_the_engines_classes), so one context per code point.
HF_CONTEXTS = ("axa x1'x",)
BATCH = 16384


@lru_cache(maxsize=1)
def table() -> array:
    t = array("H")
    t.frombytes(core.class_table())
    return t


def _members(bit: int) -> set[int]:
    t = table()
    return {c for c in CODE_POINTS if t[c] >> bit & 1}


def _show(cps) -> str:
    rs = ranges(cps)
    return ", ".join(f"U+{a:04X}" if a == b else f"U+{a:04X}..U+{b:04X}" for a, b in rs[:12]) + (
        f" ... ({len(cps)} code points)" if len(rs) > 12 else ""
    )


def test_the_pinned_versions_and_their_data():
    gen = generator()
    assert (gen.SCANNER_UNICODE, gen.BERT_PUNCTUATION_UNICODE) == ("16.0.0", "8.0.0")
    assert core.UNICODE_SOURCE == gen.source()
    for version in ("16.0.0", "8.0.0"):
        for name in ("DerivedGeneralCategory.txt", "PropList.txt"):
            head = (gen.UCD_DIR / version / name).read_text(encoding="utf-8").splitlines()[0]
            assert head.startswith(f"# Unicode {version}:"), (version, name, head)
    cats = gen.general_category("16.0.0")
    # A few values that changed between the versions involved.
    assert cats[0x0295] == "Ll"  # Lo from Unicode 17.0
    assert cats[0x0558] == cats[0x0C5C] == cats[0x328C5] == cats[0x3D7EE] == "Cn"  # assigned later
    assert cats[0x1E5D0] == "Lo"  # Ol Onal, new in 16.0
    old = gen.general_category("8.0.0")
    assert old[0x166D] == "Po" and cats[0x166D] == "So"
    assert old[0x1144B] == "Cn" and cats[0x1144B] == "Po"  # Newa, new in 9.0
    assert gen.binary_property("16.0.0", "White_Space") == {
        *range(9, 14), 0x20, 0x85, 0xA0, 0x1680, *range(0x2000, 0x200B), 0x2028, 0x2029, 0x202F, 0x205F, 0x3000
    }


def test_importing_ucd_files_reproduces_the_pinned_data(tmp_path):
    """--from-ucd reads files in the UCD's own format; fed the pinned files (laid out as a
    UCD directory), it writes the same data back."""
    gen = generator()
    for version in ("16.0.0", "8.0.0"):
        src = tmp_path / "ucd" / version
        (src / "extracted").mkdir(parents=True)
        shutil.copy(gen.UCD_DIR / version / "DerivedGeneralCategory.txt", src / "extracted")
        shutil.copy(gen.UCD_DIR / version / "PropList.txt", src)
        gen.from_ucd(version, src, tmp_path / "out")
        for name in ("DerivedGeneralCategory.txt", "PropList.txt"):
            data = [
                line
                for line in (tmp_path / "out" / version / name).read_text(encoding="utf-8").splitlines()
                if not line.startswith("#")
            ]
            pinned = [
                line for line in (gen.UCD_DIR / version / name).read_text(encoding="utf-8").splitlines()
                if not line.startswith("#")
            ]
            assert data == pinned, (version, name)
        assert gen.general_category(version, tmp_path / "out") == gen.general_category(version)
    with pytest.raises(ValueError, match="not Unicode"):
        gen.from_ucd("15.0.0", tmp_path / "ucd" / "16.0.0", tmp_path / "out")


def _tiktoken_members(pattern: str) -> set[int]:
    # tiktoken drops the text its pattern does not match; with byte tokens only, the ids
    # are the UTF-8 of exactly the matched characters.
    enc = tiktoken.Encoding(name="probe", pat_str=pattern, mergeable_ranks=BYTE_RANKS, special_tokens={})
    return set(map(ord, bytes(enc.encode_ordinary(ALL)).decode("utf-8")))


def _oniguruma_members(pattern: str) -> set[int]:
    out = tokenizers.normalizers.Replace(tokenizers.Regex(pattern), "").normalize_str(ALL)
    return set(CODE_POINTS) - set(map(ord, out))


@pytest.mark.parametrize("engine", ["tiktoken", "oniguruma"])
def test_scanner_classes_are_the_engines_classes(engine):
    members = _tiktoken_members if engine == "tiktoken" else _oniguruma_members
    for bit, cls in enumerate(CLASSES[:9]):
        pattern = r"\s" if cls == "WS" else r"\p{%s}" % cls
        got, expected = _members(bit), members(pattern)
        assert got == expected, (engine, cls, "extra:", _show(got - expected), "missing:", _show(expected - got))


def _hf_bert_punctuation() -> set[int]:
    # Each character between two x: BertPreTokenizer cuts a punctuation character out
    # (x, c, x), keeps any other character inside the word, and drops whitespace.
    pre = tokenizers.pre_tokenizers.BertPreTokenizer()
    out: set[int] = set()
    ws = {c for c in CODE_POINTS if table()[c] >> CLASSES.index("WS") & 1}
    for i in range(0, len(CODE_POINTS), BATCH):
        chunk = [c for c in CODE_POINTS[i : i + BATCH] if c not in ws]
        pieces = iter(p for p, _ in pre.pre_tokenize_str(" ".join(f"x{chr(c)}x" for c in chunk)))
        for c in chunk:
            if next(pieces) == "x":
                assert next(pieces) == chr(c) and next(pieces) == "x", hex(c)
                out.add(c)
    return out


def test_bert_punctuation_is_hf_bert_pre_tokenizers():
    t = table()
    p = CLASSES.index("P")
    ascii_punct = {c for c in range(0x80) if chr(c) in "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"}
    hf = _hf_bert_punctuation()
    assert {c for c in hf if c < 0x80} == ascii_punct
    got = {c for c in CODE_POINTS if c >= 0x80 and t[c] >> p & 1}
    expected = {c for c in hf if c >= 0x80}
    assert got == expected, ("extra:", _show(got - expected), "missing:", _show(expected - got))


def test_native_wordpiece_splits_every_code_point_as_hf():
    """The native BERT split (whitespace, punctuation) and WordPiece against HF's
    BertPreTokenizer + WordPiece, every code point between two letters."""
    vocab = {"[UNK]": 0, "x": 1, "##x": 2, "y": 3}
    hf = tokenizers.Tokenizer(tokenizers.models.WordPiece(vocab, unk_token="[UNK]"))
    hf.pre_tokenizer = tokenizers.pre_tokenizers.BertPreTokenizer()
    toks = list(vocab)
    enc = core.WordPieceEncoder([t.encode() for t in toks], list(vocab.values()),
                                [t[2:].encode() for t in toks if t.startswith("##")], [2], 0, 100)
    texts = [" ".join(f"x{chr(c)}x" for c in CODE_POINTS[i : i + BATCH]) for i in range(0, len(CODE_POINTS), BATCH)]
    got = enc.encode_batch(texts, 2)
    for text, ids, want in zip(texts, got, hf.encode_batch(texts, add_special_tokens=False)):
        assert ids == want.ids, "native WordPiece differs from HF on " + _show(
            {ord(w[1]) for w in text.split(" ")
             if len(w) == 3 and enc.encode(w) != hf.encode(w, add_special_tokens=False).ids})


@lru_cache(maxsize=2)
def _texts(contexts: tuple[str, ...]) -> list[tuple[list[str], str]]:
    out = []
    for i in range(0, len(CODE_POINTS), BATCH):
        chunk = [chr(c) for c in CODE_POINTS[i : i + BATCH]]
        out.append((chunk, "\n".join(ctx.replace("x", c) for c in chunk for ctx in contexts)))
    return out


def _culprits(chunk: list[str], contexts: tuple[str, ...], same) -> str:
    bad = {ord(c) for c in chunk if not all(same(ctx.replace("x", c)) for ctx in contexts)}
    return _show(bad) if bad else "(only in the joined text)"


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base", "o200k_base"])
def test_every_code_point_encodes_as_tiktoken(name):
    base = tokenforge.get_encoding(name)
    ours = tokenforge.Tokenizer(base.model, pre_tokenizer=base.pre_tokenizer, special_tokens=base.special_tokens,
                                backend="native")
    ref = reference(name)
    for chunk, text in _texts(CONTEXTS):
        assert ours.encode_ordinary(text) == ref.encode_ordinary(text), f"{name} differs from tiktoken on " + _culprits(
            chunk, CONTEXTS, lambda s: ours.encode_ordinary(s) == ref.encode_ordinary(s))


@pytest.mark.parametrize("name", ["llama3", "qwen"])
def test_every_code_point_splits_as_hf(name):
    """Llama 3's and Qwen's patterns (as in their tokenizer.json) through HF's Split
    (Oniguruma) and through the native scanner."""
    scanner = core.CoreBPE(BYTE_RANKS, {}, _native.SCANNERS[name])
    split = tokenizers.pre_tokenizers.Split(tokenizers.Regex(PATTERNS[name]), "isolated")

    def hf(s: str) -> list[str]:
        return [p for p, _ in split.pre_tokenize_str(s)]

    for chunk, text in _texts(HF_CONTEXTS):
        assert scanner.split(text) == hf(text), f"{name} differs from HF on " + _culprits(
            chunk, HF_CONTEXTS, lambda s: scanner.split(s) == hf(s))


@pytest.mark.parametrize("name", ["gpt2", "cl100k", "o200k", "llama3", "qwen"])
def test_python_split_of_every_code_point_is_the_pinned_scanners(name):
    """The Python backend's split (``regex``, which follows a newer Unicode than tiktoken)
    reads each named pattern with the pinned Unicode 16.0 classes: its pieces are the
    native scanner's, which the tests above hold to tiktoken and HF."""
    scanner = core.CoreBPE(BYTE_RANKS, {}, _native.SCANNERS[name])
    split = tokenforge.pretokenizers.RegexSplit(name)
    for chunk, text in _texts(HF_CONTEXTS):
        assert split.split(text) == scanner.split(text), f"{name} differs from the scanner on " + _culprits(
            chunk, HF_CONTEXTS, lambda s: split.split(s) == scanner.split(s))


def test_python_byte_level_split_is_hfs_where_unicode_versions_differ():
    """HF's ByteLevel pre-tokenizer splits with GPT-2's pattern in Oniguruma (Unicode 16.0):
    every code point whose classes changed since, and every 97th code point."""
    from tokenforge.pretokenizers import GPT2_ORIGINAL_PATTERN, compile_oniguruma

    differ = {ord(c) for c in compile_oniguruma(GPT2_ORIGINAL_PATTERN)._differ}
    assert len(differ) > 17000
    cps = sorted(differ | set(CODE_POINTS[::97]))
    ours = tokenforge.pretokenizers.ByteLevel(add_prefix_space=False)
    hf = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    for i in range(0, len(cps), 4096):
        text = "\n".join(f"a{chr(c)}a x1'{chr(c)}" for c in cps[i : i + 4096])
        assert ours.split(text) == [p for p, _ in hf.pre_tokenize_str(text)]

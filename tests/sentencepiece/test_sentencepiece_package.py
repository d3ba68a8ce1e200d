"""SentencePiece support lives in one package, ``tokenforge.sentencepiece``.

Each SentencePiece constant (``▁``, the piece types, byte pieces, float32
rounding) and each trainer rule (character coverage, the script classifier)
is defined once; a second definition anywhere else in ``src/tokenforge`` fails
here. And a ``.model`` survives ``.model`` -> Tokenizer -> ``.model`` ->
Tokenizer with every id.
"""

from __future__ import annotations

import ast
import lzma
import re
from pathlib import Path

import pytest

import tokenforge
from tokenforge.sentencepiece import SPACE, PieceType, byte_piece, f32, piece_byte
from tokenforge.sentencepiece.convert import proto_from_tokenizer, tokenizer_from_proto
from tokenforge.sentencepiece.proto import decode_model, encode_model

PKG = Path(tokenforge.__file__).resolve().parent
SP_PKG = PKG / "sentencepiece"
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "differential"
MODELS = sorted(FIXTURES.glob("*.model.xz"))

TEXTS = [
    "Hello world",
    "  leading and   repeated  spaces ",
    "ﬃ ligatures, Ｆｕｌｌｗｉｄｔｈ and 日本語のテキスト",
    "emoji 🙂 and bytes é\u0301 \x01 tab\tnew\nline",
    "",
    "<s> </s> <unk> look like control pieces",
]


def _sources_outside_the_package():
    for path in sorted(PKG.rglob("*.py")):
        if SP_PKG not in path.parents:
            yield path, path.read_text(encoding="utf-8")


def _definitions(source: str):
    """``(name, value node)`` of every assignment and ``def`` in ``source``."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                yield (target.id if isinstance(target, ast.Name) else ast.dump(target)), node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            yield ast.dump(node.target), node.value
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            yield node.name, node


def test_the_space_symbol_is_defined_only_in_the_package():
    offenders = [
        f"{path.relative_to(PKG)}: {name}"
        for path, src in _sources_outside_the_package()
        for name, value in _definitions(src)
        if isinstance(value, ast.Constant) and value.value == SPACE
    ]
    assert offenders == [], "define ▁ only as tokenforge.sentencepiece.SPACE"


_TYPE_TABLE = re.compile(
    r"""USER_DEFINED\s*=\s*4|["']user_defined["']\s*:\s*4|4\s*:\s*["']USER_DEFINED["']|=\s*1,\s*2,\s*3,\s*4,\s*5,\s*6\b""",
    re.IGNORECASE,
)


def test_no_second_piece_type_table():
    offenders = [str(path.relative_to(PKG)) for path, src in _sources_outside_the_package() if _TYPE_TABLE.search(src)]
    assert offenders == [], "use tokenforge.sentencepiece.PieceType"


@pytest.mark.parametrize("name", ["byte_piece", "f32", "_f32", "required_chars", "_script", "_script_of", "PieceType"])
def test_helpers_are_defined_once(name):
    where = [
        str(path.relative_to(PKG))
        for path in sorted(PKG.rglob("*.py"))
        for defined, node in _definitions(path.read_text(encoding="utf-8"))
        if defined == name and isinstance(node, (ast.FunctionDef, ast.ClassDef))
    ]
    expected = {
        "byte_piece": ["sentencepiece/constants.py"],
        "f32": ["sentencepiece/constants.py"],
        "required_chars": ["trainers/coverage.py"],
        "PieceType": ["sentencepiece/constants.py"],
    }.get(name, [])
    if name == "_script_of":  # the Unigram engines' integer view of coverage.script_of
        expected = ["trainers/unigram.py"]
    assert where == expected


def test_the_constants():
    assert SPACE == "\u2581"
    assert [(t.name, int(t)) for t in PieceType] == [
        ("NORMAL", 1), ("UNKNOWN", 2), ("CONTROL", 3), ("USER_DEFINED", 4), ("UNUSED", 5), ("BYTE", 6)
    ]
    assert all(piece_byte(byte_piece(b)) == b for b in range(256))
    assert piece_byte("<0xe9>") is None and piece_byte("a") is None
    assert f32(0.1) != 0.1 and f32(f32(0.1)) == f32(0.1) and f32(1e39) == float("inf")


def test_the_normalizer_loads_from_its_serialized_form():
    from tokenforge.normalizers import normalizer_from_dict
    from tokenforge.sentencepiece.normalizer import SentencePieceNormalizer

    norm = SentencePieceNormalizer("nmt_nfkc", user_defined_symbols=["<sep>"])
    again = normalizer_from_dict(norm.to_dict())
    assert again == norm and again.to_dict()["type"] == "SentencePiece"


@pytest.mark.parametrize("path", MODELS, ids=lambda p: p.name)
def test_model_to_tokenizer_to_model_keeps_ids(path):
    proto = decode_model(lzma.decompress(path.read_bytes()))
    first = tokenizer_from_proto(proto)
    written = proto_from_tokenizer(first)
    second = tokenizer_from_proto(decode_model(encode_model(written)))
    assert second.get_vocab() == first.get_vocab()
    for text in TEXTS:
        assert second.encode(text, disallowed_special=()) == first.encode(text, disallowed_special=()), text
        assert second.decode(first.encode(text, disallowed_special=())) == first.decode(first.encode(text, disallowed_special=()))
    # and the round trip is stable: writing the second tokenizer gives the same message
    assert encode_model(proto_from_tokenizer(second)) == encode_model(written)


def test_presets_sentencepiece_is_the_converter(tmp_path):
    path = MODELS[0]
    raw = lzma.decompress(path.read_bytes())
    (tmp_path / "m.model").write_bytes(raw)
    via_preset = tokenforge.sentencepiece(str(tmp_path / "m.model"), add_bos=True)
    direct = tokenizer_from_proto(decode_model(raw), add_bos=True, name="m.model")
    assert via_preset.name == "m.model"
    for text in TEXTS:
        assert via_preset.encode(text, disallowed_special=()) == direct.encode(text, disallowed_special=())

"""Every error tokenforge raises to a user is a :class:`~tokenforge.errors.TokenforgeError`.

The source is scanned with ``ast`` for ``raise <builtin exception>``; the few
that stay are listed below with the reason. Then the same mistake is made
with every model family, and must raise the same class.
"""

from __future__ import annotations

import ast
import builtins
from pathlib import Path

import pytest

import tokenforge
from tokenforge import Tokenizer, errors
from tokenforge.models import BPE, PieceBPE, Unigram, WordLevel, WordPiece

PKG = Path(__file__).resolve().parents[2] / "src" / "tokenforge"

BUILTIN_EXCEPTIONS = frozenset(
    name for name in dir(builtins)
    if isinstance(getattr(builtins, name), type) and issubclass(getattr(builtins, name), BaseException)
)

#: (qualified name of the enclosing function, builtin) -> why it stays a builtin.
ALLOWED = {
    ("NormalizedText.__setattr__", "AttributeError"): "immutability: Python's protocol for a read-only attribute",
    ("explain", "AssertionError"): "internal invariant (the re-run pipeline is the tokenizer); a bug, not a user error",
    ("CompareReport.row", "KeyError"): "mapping-style lookup of a report row",
    ("decode_string", "KeyError"): "internal: a character outside GPT-2's byte alphabet; every caller catches it",
    ("ShardedIds.__getitem__", "IndexError"): "sequence protocol: an array index out of range, as numpy raises it",
    ("__getattr__", "AttributeError"): "module attribute protocol (PEP 562): a name the module does not have",
    ("Tokens.doc", "IndexError"): "sequence protocol: a document index out of range, like indexing doc_offsets",
    ("_lock_fd", "BlockingIOError"): "internal (Windows' lock failure as fcntl's); its one caller turns it into a PrepareError",
}


def builtin_raises() -> list[tuple[str, int, str, str]]:
    """``(file, line, enclosing qualname, builtin)`` for every ``raise Builtin(...)`` in the package."""
    found = []
    for path in sorted(PKG.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))

        def visit(node: ast.AST, scope: list[str]) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    visit(child, [*scope, child.name])
                    continue
                if isinstance(child, ast.ClassDef):
                    visit(child, [*scope, child.name])
                    continue
                if isinstance(child, ast.Raise) and child.exc is not None:
                    exc = child.exc.func if isinstance(child.exc, ast.Call) else child.exc
                    if isinstance(exc, ast.Name) and exc.id in BUILTIN_EXCEPTIONS:
                        found.append((str(path.relative_to(PKG)), child.lineno, ".".join(scope), exc.id))
                visit(child, scope)

        visit(tree, [])
    return found


def test_no_builtin_exception_is_raised_outside_the_allowlist():
    offenders = [
        f"{file}:{line}: raise {name} (in {scope or '<module>'})"
        for file, line, scope, name in builtin_raises()
        if (scope, name) not in ALLOWED
    ]
    assert not offenders, "raise a TokenforgeError subclass instead:\n" + "\n".join(offenders)


def test_the_allowlist_has_no_stale_entries():
    present = {(scope, name) for _f, _l, scope, name in builtin_raises()}
    stale = [k for k in ALLOWED if k not in present]
    assert not stale


def test_the_scanner_sees_raises_in_methods_and_nested_functions():
    found = {(scope, name) for _f, _l, scope, name in builtin_raises()}
    assert ("NormalizedText.__setattr__", "AttributeError") in found


def test_every_error_class_is_in_the_family_and_a_builtin():
    for name in dir(errors):
        cls = getattr(errors, name)
        if isinstance(cls, type) and issubclass(cls, BaseException) and cls is not errors.TokenforgeError:
            if cls.__module__ != errors.__name__:
                continue
            assert issubclass(cls, errors.TokenforgeError), name
            builtin_bases = [b for b in cls.__mro__ if b.__module__ == "builtins" and b not in (Exception, BaseException, object)]
            assert builtin_bases, f"{name} should also be the builtin a user would catch"
            assert getattr(tokenforge, name) is cls, f"{name} is not exported from tokenforge"


# ----------------------------------------------------------------------- the same mistake, the same class
MODELS = {
    "bpe": lambda: BPE.from_ranks({bytes([i]): i for i in range(256)}),
    "piece_bpe": lambda: PieceBPE({"a": 0, "b": 1, "ab": 2, "<unk>": 3}, [("a", "b")], unk_token="<unk>"),
    "wordpiece": lambda: WordPiece({"[UNK]": 0, "a": 1, "##b": 2}),
    "unigram": lambda: Unigram([("<unk>", 0.0), ("a", -1.0), ("b", -1.0)]),
    "wordlevel": lambda: WordLevel({"[UNK]": 0, "a": 1}),
}


@pytest.mark.parametrize("family", sorted(MODELS))
def test_an_unknown_id_raises_unknown_id_error(family):
    tok = Tokenizer(MODELS[family]())
    with pytest.raises(errors.UnknownIdError, match="unknown token id 1000000"):
        tok.decode([10**6])
    with pytest.raises(KeyError):
        tok.id_to_token(10**6)


@pytest.mark.parametrize("family", sorted(MODELS))
def test_a_bad_backend_raises_invalid_argument_error(family):
    with pytest.raises(errors.InvalidArgumentError, match="backend must be one of"):
        Tokenizer(MODELS[family](), backend="bogus")


def test_a_bad_backend_raises_the_same_class_in_the_native_module_and_the_unigram_model():
    from tokenforge import _native

    with pytest.raises(errors.InvalidArgumentError, match="backend must be one of"):
        _native.core("bogus")
    with pytest.raises(errors.InvalidArgumentError, match="backend must be one of"):
        Unigram([("<unk>", 0.0), ("a", -1.0)], backend="bogus")


@pytest.mark.parametrize("bad", [1.5, -0.1, "0.5", True])
def test_a_bad_dropout_raises_invalid_argument_error_everywhere(bad):
    bpe = MODELS["bpe"]()
    piece_bpe = MODELS["piece_bpe"]()
    calls = [
        lambda: Tokenizer(bpe).encode("ab", dropout=bad),
        lambda: Tokenizer(piece_bpe).encode("ab", dropout=bad),
        lambda: bpe.encode_bytes(b"ab", dropout=bad),
        lambda: piece_bpe.encode_piece("ab", dropout=bad),
        lambda: PieceBPE({"a": 0}, dropout=bad),
    ]
    for call in calls:
        with pytest.raises(errors.InvalidArgumentError, match="dropout must be a probability"):
            call()


@pytest.mark.parametrize("family", sorted(MODELS))
def test_a_model_that_is_not_a_model_is_named(family):
    with pytest.raises(errors.EncodeInputError, match="model must be a tokenforge model .* got dict"):
        Tokenizer({"type": family})


def test_a_stage_of_the_wrong_kind_is_named():
    from tokenforge.decoders import Fuse
    from tokenforge.normalizers import NFC

    with pytest.raises(errors.ArgumentTypeError, match="pre_tokenizer must be a tokenforge PreTokenizer .* got NFC"):
        Tokenizer(MODELS["wordlevel"](), pre_tokenizer=NFC())
    with pytest.raises(TypeError, match="normalizer must be a tokenforge Normalizer .* got Fuse"):
        Tokenizer(MODELS["wordlevel"](), normalizer=Fuse())


def test_bad_constructor_values_of_components_raise_invalid_argument_error():
    from tokenforge import decoders, normalizers, pretokenizers

    calls = [
        lambda: pretokenizers.Metaspace(prepend_scheme="sometimes"),
        lambda: decoders.Metaspace(prepend_scheme="sometimes"),
        lambda: pretokenizers.Punctuation("glued"),
        lambda: pretokenizers.CharDelimiterSplit("ab"),
        lambda: normalizers.Replace("", "x"),
        lambda: WordPiece({"[UNK]": 0}, max_input_chars_per_word=-1),
    ]
    for call in calls:
        with pytest.raises(errors.InvalidArgumentError):
            call()
    for call in [lambda: normalizers.Prepend(1), lambda: normalizers.Sequence([1]), lambda: pretokenizers.Sequence([1])]:
        with pytest.raises(errors.ArgumentTypeError):
            call()

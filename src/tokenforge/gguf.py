"""Tokenizers from GGUF vocabularies (llama.cpp): the ``tokenizer.ggml.*`` metadata of a
header read by :mod:`tokenforge.formats.gguf`, as a :class:`~tokenforge.Tokenizer`.

The tokenizer (:func:`load_gguf`) follows ``tokenizer.ggml.model``:

* ``llama`` — SentencePiece BPE (Llama 1/2, Mistral v1): tokens, scores and
  token types become a :class:`~tokenforge.formats.sentencepiece.ModelProto`
  (identity normalization, dummy prefix per ``tokenizer.ggml.add_space_prefix``,
  byte fallback when ``<0xXX>`` byte tokens exist), loaded with
  :func:`tokenforge.presets.sentencepiece`. ``t5`` is the same with a Unigram
  model and the file's ``tokenizer.ggml.precompiled_charsmap``.
* ``gpt2`` — byte-level BPE: tokens (GPT-2 printable form), merges, token
  types (CONTROL → special tokens, USER_DEFINED → added tokens) and
  ``tokenizer.ggml.pre``, the name of the split rules (:data:`PRE_TOKENIZERS`).
  The result is a
  :class:`~tokenforge.Tokenizer` with
  :class:`~tokenforge.models.bpe.PieceBPE` over the printable strings, as HF
  tokenizers' ``tokenizer.json`` for those models does (several regexes in turn,
  as llama.cpp applies them for some models, become HF's ``Split(...,
  "isolated")`` in sequence). One split regex with merges that ranks imply runs on
  the native rank merge (the plan decides, :mod:`tokenforge._plans`).
* ``bert`` — WordPiece with the BERT pipeline (:func:`tokenforge.presets.bert_wordpiece`;
  llama.cpp's WPM lowercases and strips accents, as uncased BERT does). The
  converter stores word-start tokens as ``▁hello`` and continuations without
  ``##``; the ``vocab.txt`` spelling is restored.

Special ids (``tokenizer.ggml.bos_token_id``, ``eos``, ``unknown``, ``padding``,
BERT's ``cls``/``seperator``/``mask``) name the control tokens;
``tokenizer.ggml.add_bos_token``/``add_eos_token`` (defaults: llama.cpp's per
model) become the post-processor that adds them when ``add_special_tokens``.

The split rules per pre-tokenizer name are llama.cpp's (``src/llama-vocab.cpp``,
MIT licence), written in the original form of the model's ``tokenizer.json``
where llama.cpp keeps a rewritten equivalent (``(?i:'s|...)`` rather than
``'[sS]|...``), because the ids must be the original model's. ``falcon``
uses Falcon's own ``tokenizer.json`` pre-tokenizer (Punctuation, ByteLevel,
Digits, Split on digit triples), which llama.cpp only approximates.

>>> from tokenforge.formats.gguf import write_gguf_bytes
>>> tok = load_gguf(write_gguf_bytes({
...     "tokenizer.ggml.model": "bert",
...     "tokenizer.ggml.tokens": ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hello", "world", "##s"],
... }))
>>> tok.encode("Hello worlds")
[2, 5, 6, 7, 3]
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .errors import FileFormatError, TokenforgeError
from .formats.gguf import (
    _BYTE,
    _CONTROL,
    _NORMAL,
    _UNKNOWN,
    _USER_DEFINED,
    PRE_TOKENIZERS,
    TOKENIZER_MODELS,
    GGUFHeader,
    PreTokenizerRule,
    _Meta,
    read_gguf_header,
)
from .sentencepiece.constants import SPACE
from .tokenizer import Tokenizer

__all__ = ["load_gguf", "tokenizer_from_gguf"]


def tokenizer_from_gguf(header: GGUFHeader, *, name: str | None = None) -> Tokenizer:
    """The tokenizer described by the ``tokenizer.ggml.*`` metadata of ``header``
    (see the module docstring for what each ``tokenizer.ggml.model`` gives)."""
    m = _Meta(header)
    model = m.str("tokenizer.ggml.model")
    if model is None:
        raise m.fail("no tokenizer.ggml.model key: this GGUF file carries no tokenizer")
    tokens = m.array("tokenizer.ggml.tokens", (str,), "strings")
    if not tokens:
        raise m.fail("tokenizer.ggml.tokens is missing or empty")
    n = len(tokens)
    types = m.array("tokenizer.ggml.token_type", (int,), "integers", n)
    if types is None:
        types = [_NORMAL] * n
    else:
        bad = next((k for k, t in enumerate(types) if not 0 <= t <= 6), None)
        if bad is not None:
            raise m.fail(f"tokenizer.ggml.token_type[{bad}] is {types[bad]}, expected 0..6")
        types = [t or _NORMAL for t in types]  # 0 = undefined: an ordinary token
    if name is None:
        name = m.str("general.name") or (Path(header.path).stem if header.path else None)
    build = {"llama": _sentencepiece, "t5": _sentencepiece, "gpt2": _byte_level, "bert": _wordpiece}.get(model)
    if build is not None:
        try:
            return build(m, model, tokens, types, name)
        except FileFormatError:
            raise
        except TokenforgeError as exc:  # e.g. two special tokens with one id: the file is at fault
            raise m.fail(f"{type(exc).__name__}: {exc}") from None
    raise m.fail(
        f"tokenizer.ggml.model {model!r} is not supported; supported models: {', '.join(TOKENIZER_MODELS)}"
    )


def _sentencepiece(m: _Meta, model: str, tokens: list[str], types: list[int], name: str | None) -> Tokenizer:
    from . import presets
    from .sentencepiece.proto import ModelType, NormalizerSpec, build_model_proto

    n = len(tokens)
    scores = m.array("tokenizer.ggml.scores", (float, int), "numbers", n)
    if scores is None:
        scores = [0.0] * n
    types = list(types)
    unk = m.token_id("tokenizer.ggml.unknown_token_id", n)
    if _UNKNOWN not in types:
        if unk is None:
            raise m.fail("no unknown token: no token has type UNKNOWN and tokenizer.ggml.unknown_token_id is not set")
        types[unk] = _UNKNOWN
    elif unk is not None and types[unk] != _UNKNOWN:
        raise m.fail(f"tokenizer.ggml.unknown_token_id is {unk} ({tokens[unk]!r}), but that token's type is not UNKNOWN")
    for k, t in enumerate(types):
        if t == _BYTE and not (len(tokens[k]) == 6 and tokens[k].startswith("<0x") and tokens[k].endswith(">")):
            raise m.fail(f"tokenizer.ggml.tokens[{k}] is {tokens[k]!r}, but its type is BYTE (expected <0xXX>)")
        if not tokens[k]:
            raise m.fail(f"tokenizer.ggml.tokens[{k}] is empty")
    add_space_prefix = m.bool("tokenizer.ggml.add_space_prefix", True)
    remove_extra_ws = m.bool("tokenizer.ggml.remove_extra_whitespaces", False)
    settings = {"byte_fallback": _BYTE in types}
    if model == "llama":
        proto = build_model_proto(
            tokens, scores, types, model_type=ModelType.BPE, normalization="identity",
            add_dummy_prefix=add_space_prefix, remove_extra_whitespaces=remove_extra_ws, trainer_settings=settings,
        )
    else:  # t5: Unigram over text normalized by the file's own charsmap
        charsmap = m.array("tokenizer.ggml.precompiled_charsmap", (int,), "bytes")
        proto = build_model_proto(
            tokens, scores, types, model_type=ModelType.UNIGRAM, normalization="identity",
            add_dummy_prefix=add_space_prefix, remove_extra_whitespaces=remove_extra_ws, trainer_settings=settings,
        )
        blob = b""
        if charsmap:
            try:
                blob = bytes(x & 0xFF if x < 0 else x for x in charsmap)
            except ValueError:
                raise m.fail("tokenizer.ggml.precompiled_charsmap must hold bytes (0..255)") from None
        proto.normalizer_spec = NormalizerSpec(
            name="" if blob else "identity", precompiled_charsmap=blob, add_dummy_prefix=add_space_prefix,
            remove_extra_whitespaces=remove_extra_ws, escape_whitespaces=True,
        )
    ts = proto.trainer_spec
    for attr, key in (("bos", "tokenizer.ggml.bos_token_id"), ("eos", "tokenizer.ggml.eos_token_id"),
                      ("pad", "tokenizer.ggml.padding_token_id")):
        i = m.token_id(key, n)
        if i is not None:
            setattr(ts, f"{attr}_id", i)
            setattr(ts, f"{attr}_piece", tokens[i])
    add_bos = bool(m.bool("tokenizer.ggml.add_bos_token", model == "llama"))
    add_eos = bool(m.bool("tokenizer.ggml.add_eos_token", model == "t5"))
    _check_add(m, add_bos, ts.bos_id if ts.bos_id >= 0 else None, "bos")
    _check_add(m, add_eos, ts.eos_id if ts.eos_id >= 0 else None, "eos")
    try:
        return presets.sentencepiece(proto, add_bos=add_bos, add_eos=add_eos, name=name)
    except FileFormatError as exc:
        raise m.fail(str(exc)) from None


def _check_add(m: _Meta, add: bool, token_id: int | None, which: str) -> None:
    if add and token_id is None:
        raise m.fail(f"tokenizer.ggml.add_{which}_token is true, but tokenizer.ggml.{which}_token_id is not set")


def _pre_rule(m: _Meta) -> tuple[str, PreTokenizerRule]:
    pre = m.str("tokenizer.ggml.pre", "default")
    rule = PRE_TOKENIZERS.get(pre)
    if rule is None:
        raise m.fail(
            f"unknown pre-tokenizer tokenizer.ggml.pre = {pre!r}; known: {', '.join(sorted(PRE_TOKENIZERS))}"
        )
    return pre, rule


def _byte_level(m: _Meta, model: str, tokens: list[str], types: list[int], name: str | None) -> Tokenizer:
    from . import decoders, pretokenizers
    from .models.bpe import PieceBPE
    from .tokenizer import AddedToken

    n = len(tokens)
    _, rule = _pre_rule(m)
    merges = m.array("tokenizer.ggml.merges", (str,), "strings") or []
    pairs: list[tuple[str, str]] = []
    for k, mg in enumerate(merges):
        parts = mg.split(" ")
        if len(parts) != 2 or not parts[0] or not parts[1]:
            raise m.fail(f"tokenizer.ggml.merges[{k}] is {mg!r}, expected two tokens separated by one space")
        pairs.append((parts[0], parts[1]))
    vocab: dict[str, int] = {}
    for i, t in enumerate(tokens):
        if not t:
            raise m.fail(f"tokenizer.ggml.tokens[{i}] is empty")
        vocab.setdefault(t, i)
    for k, (a, b) in enumerate(pairs):
        for part in (a, b, a + b):
            if part not in vocab:
                raise m.fail(f"tokenizer.ggml.merges[{k}] ({a!r} {b!r}): {part!r} is not a token")
    bos = m.token_id("tokenizer.ggml.bos_token_id", n)
    eos = m.token_id("tokenizer.ggml.eos_token_id", n)
    add_bos = bool(m.bool("tokenizer.ggml.add_bos_token", rule.add_bos and bos is not None))
    add_eos = bool(m.bool("tokenizer.ggml.add_eos_token", False))
    _check_add(m, add_bos, bos, "bos")
    _check_add(m, add_eos, eos, "eos")
    specials = {tokens[i]: i for i, t in enumerate(types) if t in (_CONTROL, _UNKNOWN) and vocab[tokens[i]] == i}
    user = {tokens[i]: i for i, t in enumerate(types) if t == _USER_DEFINED and vocab[tokens[i]] == i}

    if rule.hf == "falcon":
        pre_tok: Any = pretokenizers.Sequence([
            pretokenizers.Punctuation("contiguous"),
            pretokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
            pretokenizers.Digits(individual_digits=False),
            pretokenizers.Split("[0-9][0-9][0-9]", "isolated"),
        ])
    else:
        splits = [pretokenizers.Split(pretokenizers.resolve_pattern(r)[1], "isolated") for r in rule.regexes]
        pre_tok = pretokenizers.Sequence([*splits, pretokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    try:
        model = PieceBPE(vocab, pairs, ignore_merges=rule.ignore_merges)
    except FileFormatError as exc:
        raise m.fail(str(exc)) from None
    added = [AddedToken(t, i, special=True) for t, i in specials.items()]
    added += [AddedToken(t, i, special=False) for t, i in user.items()]
    post = None
    if add_bos or add_eos:
        post = _template(tokens, bos if add_bos else None, eos if add_eos else None)
    return Tokenizer(model, pre_tokenizer=pre_tok, post_processor=post, decoder=decoders.ByteLevel(),
                    added_tokens=added, name=name)


def _template(tokens: Sequence[str], bos: int | None, eos: int | None):
    from .postprocessors import TemplateProcessing

    single: list[str] = []
    special: list[tuple[str, int]] = []
    if bos is not None:
        single.append(tokens[bos])
        special.append((tokens[bos], bos))
    single.append("$A")
    if eos is not None:
        single.append(tokens[eos])
        if eos != bos:
            special.append((tokens[eos], eos))
    pair = single + [x + ":1" if x != "$A" else "$B:1" for x in single]
    return TemplateProcessing(single, pair, special)


#: llama.cpp's converter stores a BERT vocabulary with a "phantom space": a word-start
#: token ``hello`` is written ``▁hello`` and a continuation ``##lo`` is written ``lo``
#: (``[CLS]``-style tokens stay as they are). Its WPM tokenizer puts ``▁`` before each word.
_PHANTOM = SPACE


def _unphantom(token: str) -> str:
    """A GGUF BERT token back in ``vocab.txt`` form (``▁hello`` → ``hello``, ``lo`` → ``##lo``)."""
    if token.startswith(_PHANTOM):
        return token[1:]
    if token.startswith("[") and token.endswith("]"):
        return token
    return "##" + token


def _wordpiece(m: _Meta, model: str, tokens: list[str], types: list[int], name: str | None) -> Tokenizer:
    from . import presets

    n = len(tokens)
    if any(t.startswith(_PHANTOM) for t in tokens):
        tokens = [_unphantom(t) for t in tokens]
    vocab: dict[str, int] = {}
    for i, t in enumerate(tokens):
        if not t:
            raise m.fail(f"tokenizer.ggml.tokens[{i}] is empty")
        if t in vocab:
            raise m.fail(f"tokenizer.ggml.tokens[{i}] {t!r} repeats tokens[{vocab[t]}]")
        vocab[t] = i

    def named(key: str, default: str) -> str:
        i = m.token_id(key, n)
        return tokens[i] if i is not None else default

    try:
        return presets.bert_wordpiece(
            vocab,
            lowercase=True,
            unk_token=named("tokenizer.ggml.unknown_token_id", "[UNK]"),
            cls_token=named("tokenizer.ggml.cls_token_id", named("tokenizer.ggml.bos_token_id", "[CLS]")),
            # "seperator" is how llama.cpp's key is spelled
            sep_token=named("tokenizer.ggml.seperator_token_id", named("tokenizer.ggml.eos_token_id", "[SEP]")),
            pad_token=named("tokenizer.ggml.padding_token_id", "[PAD]"),
            mask_token=named("tokenizer.ggml.mask_token_id", "[MASK]"),
            name=name,
        )
    except FileFormatError as exc:
        raise m.fail(str(exc)) from None


def load_gguf(path: str | os.PathLike | bytes, *, name: str | None = None) -> Tokenizer:
    """Open the tokenizer of a GGUF file (a path, or the file's bytes).

    Every ``tokenizer.ggml.model`` the module docstring lists gives a
    :class:`~tokenforge.Tokenizer`; anything else raises :class:`FileFormatError`.

    >>> from tokenforge.formats.gguf import write_gguf_bytes
    >>> tok = load_gguf(write_gguf_bytes({
    ...     "tokenizer.ggml.model": "bert",
    ...     "tokenizer.ggml.tokens": ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hello", "world", "##s"],
    ... }))
    >>> tok.encode("Hello worlds")
    [2, 5, 6, 7, 3]
    """
    return tokenizer_from_gguf(read_gguf_header(path), name=name)

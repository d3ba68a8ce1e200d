"""Tokenizers from GGUF vocabularies (llama.cpp): the ``tokenizer.ggml.*`` metadata of a
header read by :mod:`tokenforge.formats.gguf`, as a :class:`~tokenforge.Tokenizer`.

The tokenizer (:func:`load_gguf`) follows ``tokenizer.ggml.model``:

* ``llama`` — llama.cpp's SPM tokenizer (Llama 1/2, Mistral v1, Phi-3):
  tokens and scores become a SentencePiece BPE
  :class:`~tokenforge.formats.sentencepiece.ModelProto` (identity
  normalization, dummy prefix per ``tokenizer.ggml.add_space_prefix``, byte
  fallback when ``<0xXX>`` byte tokens exist) that merges into the tokens
  llama.cpp merges into. Matched tokens (below) split the text first and
  every other stretch gets its own space prefix, as in llama.cpp.
  ``t5`` is SentencePiece's Unigram with the file's
  ``tokenizer.ggml.precompiled_charsmap``.
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
The unknown token is ``tokenizer.ggml.unknown_token_id`` or llama.cpp's
default id, whatever its token type (Phi-3's ``<unk>`` is a CONTROL token).

Which tokens are matched in the text follows llama.cpp's ``llama_vocab``
loader: CONTROL and UNKNOWN tokens, and the end-of-generation and
fill-in-the-middle tokens it recognises by their text (``<|endoftext|>``,
``</s>``, ``<|fim_prefix|>``, ...), are special tokens, read from the text
only when the call allows them (``allowed_special``); USER_DEFINED tokens are
always read from the text, as llama.cpp does with ``parse_special=false``.
``encode(text, add_special_tokens=False, disallowed_special=())`` gives
llama.cpp's ``llama_tokenize(..., add_special=false, parse_special=false)``
(the setting of its ``tests/test-tokenizer-0.cpp``). llama.cpp's per-model
whitespace stripping beside matched tokens (Phi-3's special tokens take the
whitespace after them) is the added tokens' ``rstrip``/``lstrip``; tokenforge
strips Unicode whitespace there, where llama.cpp's ``isspace`` strips ASCII
whitespace only.

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
    LLAMA_CPP_UNSUPPORTED_PRE_TOKENIZERS,
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
    # llama.cpp loads an empty token as the text "[EMPTY_<id>]" (with a warning)
    tokens = [t or f"[EMPTY_{i}]" for i, t in enumerate(tokens)]
    n = len(tokens)
    types = m.array("tokenizer.ggml.token_type", (int,), "integers", n)
    if types is None:
        types = [_NORMAL] * n
    else:
        # 0 is UNDEFINED, and llama.cpp gives any value it does not know the same
        # UNDEFINED attribute: an ordinary token, as far as encoding goes
        types = [t if _NORMAL <= t <= _BYTE else _NORMAL for t in types]
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
    if model in _LLAMA_CPP_ONLY_MODELS:
        raise m.fail(
            f"tokenizer.ggml.model {model!r} is not supported; supported models: {', '.join(TOKENIZER_MODELS)} "
            f"(llama.cpp has a {model!r} tokenizer, tokenforge does not)"
        )
    raise m.fail(
        f"tokenizer.ggml.model {model!r} is not supported; supported models: {', '.join(TOKENIZER_MODELS)}"
    )


# -- llama.cpp's token attributes ------------------------------------------------------
#
# llama.cpp (src/llama-vocab.cpp, llama_vocab::impl::load) starts from
# tokenizer.ggml.token_type and then changes some tokens by their text. Its
# tokenizer then matches, in the raw text and before the model runs, the
# tokens whose attributes include CONTROL, USER_DEFINED or UNKNOWN, longest
# first; with parse_special=false (the default of llama_tokenize callers, and
# of llama.cpp's tests/test-tokenizer-0.cpp) it skips those with CONTROL or
# UNKNOWN, so only USER_DEFINED tokens split the text. Here CONTROL/UNKNOWN
# tokens become special tokens (matched when the call allows them) and
# USER_DEFINED ones ordinary added tokens (always matched).

#: tokenizer.ggml.model values llama.cpp knows and tokenforge does not build.
_LLAMA_CPP_ONLY_MODELS = frozenset({"rwkv", "plamo2", "gemma4", "hybriddna", "whitespace", "no_vocab", "none"})

#: Texts llama.cpp marks as end-of-generation and forces to CONTROL.
_LLAMA_CPP_EOG_TEXTS = frozenset({
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>",
    "<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]",
    "<|end_of_text|>", "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>",
    "<\uff5cend\u2581of\u2581sentence\uff5c>", "[e~[",
})

#: Fill-in-the-middle roles: llama.cpp looks a role's token up by these texts when
#: no metadata key names it, and forces the token it finds to CONTROL.
_LLAMA_CPP_FIM = (
    (("tokenizer.ggml.fim_pre_token_id", "tokenizer.ggml.prefix_token_id"),
     ("<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<\uff5cfim\u2581begin\uff5c>", "<PRE>", "\u2581<PRE>",
      "<|code_prefix|>", "<|prefix|>")),
    (("tokenizer.ggml.fim_suf_token_id", "tokenizer.ggml.suffix_token_id"),
     ("<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<\uff5cfim\u2581hole\uff5c>", "<SUF>", "\u2581<SUF>",
      "<|code_suffix|>", "<|suffix|>")),
    (("tokenizer.ggml.fim_mid_token_id", "tokenizer.ggml.middle_token_id"),
     ("<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<\uff5cfim\u2581end\uff5c>", "<MID>", "\u2581<MID>",
      "<|code_middle|>", "<|middle|>")),
    (("tokenizer.ggml.fim_pad_token_id",), ("<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]")),
    (("tokenizer.ggml.fim_rep_token_id",), ("<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>")),
    (("tokenizer.ggml.fim_sep_token_id",), ("<|file_sep|>",)),
)

#: gpt-oss (o200k_harmony) tokens llama.cpp always reads from text (USER_DEFINED only).
_LLAMA_CPP_ALWAYS_TEXT = ("<|channel|>", "<|message|>", "<|start|>", "<|constrain|>")

# attribute bits (llama.cpp's llama_token_attr, the ones that matter here)
_A_UNKNOWN, _A_UNUSED, _A_NORMAL, _A_CONTROL, _A_USER, _A_BYTE = 1, 2, 4, 8, 16, 32
_ATTR_OF_TYPE = {_UNKNOWN: _A_UNKNOWN, 5: _A_UNUSED, _NORMAL: _A_NORMAL, _CONTROL: _A_CONTROL,
                 _USER_DEFINED: _A_USER, _BYTE: _A_BYTE}
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


class _TokenAttrs:
    """Which tokens llama.cpp matches in the text, and how.

    ``special``: CONTROL or UNKNOWN (matched only when special tokens are
    allowed); ``user``: USER_DEFINED without either (always matched);
    ``lstrip``/``rstrip``: the match also takes the whitespace beside it.
    """

    __slots__ = ("lstrip", "rstrip", "special", "user")

    def __init__(self, m: _Meta, tokens: Sequence[str], types: Sequence[int]) -> None:
        attr = [_ATTR_OF_TYPE.get(t, 0) for t in types]
        by_text = {t: i for i, t in enumerate(tokens)}

        def valid_key(key: str) -> bool:
            v = m.h.get(key)
            return isinstance(v, int) and not isinstance(v, bool) and 0 <= v < len(tokens)

        for keys, texts in _LLAMA_CPP_FIM:
            if not any(valid_key(k) for k in keys):
                # llama.cpp takes the first of these it meets in a hash map; a vocabulary
                # holds at most one of them in practice, and all of them are marked here
                for t in texts:
                    if t in by_text:
                        attr[by_text[t]] |= _A_CONTROL
        for t in _LLAMA_CPP_EOG_TEXTS:
            if t in by_text:
                attr[by_text[t]] |= _A_CONTROL
        for t in _LLAMA_CPP_ALWAYS_TEXT:
            if t in by_text:
                attr[by_text[t]] = _A_USER
        has = by_text.__contains__
        call = has("<|call|>") or has("<|calls|>")
        if has("<|end|>") and ((has("<|return|>") and call) or (call and has("<|flush|>"))):
            attr[by_text["<|end|>"]] = _A_USER  # o200k_harmony, solar-open: <|end|> is not an end
        if has("<|tool_response>") and has("</s>"):
            attr[by_text["</s>"]] = _A_NORMAL  # gemma4, paddleocr
        matched = _A_CONTROL | _A_USER | _A_UNKNOWN
        self.special = frozenset(i for i, a in enumerate(attr) if a & (_A_CONTROL | _A_UNKNOWN))
        self.user = frozenset(i for i, a in enumerate(attr) if a & matched == _A_USER)
        lstrip: set[int] = set()
        rstrip: set[int] = set()
        pre = m.h.get("tokenizer.ggml.pre")
        pre = pre if isinstance(pre, str) else ""
        arch = m.h.get("general.architecture")
        arch = arch if isinstance(arch, str) else ""
        model_name = m.h.get("general.name")
        model_name = model_name.translate(_ASCII_LOWER) if isinstance(model_name, str) else ""
        if any(s in pre for s in ("jina-v2-de", "jina-v2-es", "jina-v2-code")) or any(
            s in arch for s in ("nomic-bert-moe", "jina-bert-v3")
        ):
            if "<mask>" in by_text:
                lstrip.add(by_text["<mask>"])
        elif "phi-3" in model_name or "phi3" in model_name:
            rstrip.update(i for i, a in enumerate(attr) if a & matched)
            if "</s>" in by_text:
                rstrip.add(by_text["</s>"])
            rstrip.difference_update(by_text[t] for t in ("<unk>", "<s>", "<|endoftext|>") if t in by_text)
        elif "modern-bert" in model_name and "[MASK]" in by_text:
            lstrip.add(by_text["[MASK]"])
        self.lstrip = frozenset(lstrip)
        self.rstrip = frozenset(rstrip)

    def added(self, tokens: Sequence[str], ids: Any, *, special: bool) -> list:
        """``AddedToken`` objects for ``ids``, with llama.cpp's stripping."""
        from .tokenizer import AddedToken

        return [AddedToken(tokens[i], i, special=special, lstrip=i in self.lstrip, rstrip=i in self.rstrip)
                for i in sorted(ids)]


def _formable(text: str, vocab: Any, memo: dict[str, bool]) -> bool:
    """Whether llama.cpp's SentencePiece-style merging can produce the token ``text``:
    one character of the ``▁``-escaped text, or two such tokens joined (llama.cpp
    merges into any token of the vocabulary, whatever its type). Iterative, so a
    long chain of tokens in a damaged file cannot exhaust the stack."""
    stack = [text]
    while stack:
        t = stack[-1]
        if t in memo:
            stack.pop()
            continue
        if " " in t or len(t) == 1:
            memo[t] = " " not in t
            stack.pop()
            continue
        # each half is a symbol of the text: a single character, or a token merged before
        splits = [(t[:k], t[k:]) for k in range(1, len(t))
                  if (k == 1 or t[:k] in vocab) and (k == len(t) - 1 or t[k:] in vocab)]
        todo = [part for pair in splits for part in pair if part not in memo]
        if todo:
            stack.extend(todo)
            continue
        memo[t] = any(memo[a] and memo[b] for a, b in splits)
        stack.pop()
    return memo[text]


def _is_byte_piece(token: str) -> bool:
    """``<0xXX>`` with upper-case hex digits: the byte tokens llama.cpp looks up."""
    return (len(token) == 6 and token.startswith("<0x") and token.endswith(">")
            and all(c in "0123456789ABCDEF" for c in token[3:5]))


def _sentencepiece(m: _Meta, model: str, tokens: list[str], types: list[int], name: str | None) -> Tokenizer:
    from . import decoders
    from .sentencepiece.convert import tokenizer_from_proto
    from .sentencepiece.proto import ModelType, NormalizerSpec, build_model_proto

    n = len(tokens)
    scores = m.array("tokenizer.ggml.scores", (float, int), "numbers", n)
    if scores is None:
        scores = [0.0] * n
    attrs = _TokenAttrs(m, tokens, types)
    # The unknown token: the key whatever the token's type (llama.cpp reads no type
    # here); without the key, the UNKNOWN token, else llama.cpp's default id, 0
    # (llama) or 2 (t5). llama.cpp's SPM tokenizer never outputs it (a character
    # that is no token becomes byte tokens), so for llama files the choice changes
    # no id llama.cpp gives.
    unk = m.token_id("tokenizer.ggml.unknown_token_id", n)
    if unk is None:
        unk = next((i for i, t in enumerate(types) if t == _UNKNOWN), 0 if model == "llama" else 2)
        if unk >= n:
            raise m.fail("no unknown token: tokenizer.ggml.unknown_token_id is not set, no token has type "
                         f"UNKNOWN and the vocabulary has no token {unk}, llama.cpp's default")
    add_space_prefix = m.bool("tokenizer.ggml.add_space_prefix", True)
    remove_extra_ws = m.bool("tokenizer.ggml.remove_extra_whitespaces", False)
    if model == "llama":
        # llama.cpp's SPM tokenizer: the text is split on the matched tokens (see
        # _TokenAttrs); every other stretch gets the space prefix, spaces become ▁,
        # and the highest-scoring adjacent pair whose join is a token merges, into
        # any token of the vocabulary; a character that is no token becomes its
        # <0xXX> byte tokens. SentencePiece's BPE is that algorithm over the tokens it
        # may merge into, so each token goes in as NORMAL unless llama.cpp could never
        # produce it from text (then CONTROL, for a matched one). The unknown token
        # and the byte tokens keep their roles. It does not read remove_extra_whitespaces.
        vocab = set(tokens)
        memo: dict[str, bool] = {}
        sp_types = [_NORMAL] * n
        has_bytes = False
        for i, (tok, t) in enumerate(zip(tokens, types)):
            if i == unk:
                if _formable(tok, vocab, memo):
                    raise m.fail(
                        f"the unknown token {unk} ({tok!r}) is a token llama.cpp's merges can produce; "
                        "tokenforge's SentencePiece model keeps its unknown token out of the merges"
                    )
                sp_types[i] = _UNKNOWN
            elif _is_byte_piece(tok) and i not in attrs.special and i not in attrs.user:
                # llama.cpp's byte fallback finds <0xXX> by its text, whatever its type
                if _formable(tok, vocab, memo):
                    raise m.fail(
                        f"the byte token {i} ({tok!r}) is a token llama.cpp's merges can produce; "
                        "tokenforge's SentencePiece model keeps byte tokens out of the merges"
                    )
                sp_types[i] = _BYTE
                has_bytes = True
            elif i in attrs.special and not _formable(tok, vocab, memo):
                sp_types[i] = _CONTROL
        proto = build_model_proto(
            tokens, scores, sp_types, model_type=ModelType.BPE, normalization="identity",
            add_dummy_prefix=add_space_prefix, remove_extra_whitespaces=False,
            trainer_settings={"byte_fallback": has_bytes},
        )
    else:  # t5: Unigram over text normalized by the file's own charsmap
        sp_types = [_CONTROL if t == _UNKNOWN else t for t in types]
        sp_types[unk] = _UNKNOWN
        for k, t in enumerate(sp_types):
            if t == _BYTE and not (len(tokens[k]) == 6 and tokens[k].startswith("<0x") and tokens[k].endswith(">")):
                raise m.fail(f"tokenizer.ggml.tokens[{k}] is {tokens[k]!r}, but its type is BYTE (expected <0xXX>)")
        charsmap = m.array("tokenizer.ggml.precompiled_charsmap", (int,), "bytes")
        proto = build_model_proto(
            tokens, scores, sp_types, model_type=ModelType.UNIGRAM, normalization="identity",
            add_dummy_prefix=add_space_prefix, remove_extra_whitespaces=remove_extra_ws,
            trainer_settings={"byte_fallback": _BYTE in sp_types},
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
    # llama.cpp's defaults when the keys are absent: BOS 1 and EOS 2 (llama), EOS 1 and PAD 0 (t5)
    defaults = {"bos": 1, "eos": 2, "pad": None} if model == "llama" else {"bos": None, "eos": 1, "pad": 0}
    for attr, key in (("bos", "tokenizer.ggml.bos_token_id"), ("eos", "tokenizer.ggml.eos_token_id"),
                      ("pad", "tokenizer.ggml.padding_token_id")):
        i = m.token_id(key, n)
        if i is None and key not in m.h:
            i = defaults[attr] if defaults[attr] is not None and defaults[attr] < n else None
        if i is not None:
            setattr(ts, f"{attr}_id", i)
            setattr(ts, f"{attr}_piece", tokens[i])
    add_bos = bool(m.bool("tokenizer.ggml.add_bos_token", model == "llama"))
    add_eos = bool(m.bool("tokenizer.ggml.add_eos_token", model == "t5"))
    _check_add(m, add_bos, ts.bos_id if ts.bos_id >= 0 else None, "bos")
    _check_add(m, add_eos, ts.eos_id if ts.eos_id >= 0 else None, "eos")
    try:
        tok = tokenizer_from_proto(proto, add_bos=add_bos, add_eos=add_eos, name=name)
    except FileFormatError as exc:
        raise m.fail(str(exc)) from None
    if model != "llama":
        return tok
    special = attrs.added(tokens, attrs.special, special=True)
    added = special + attrs.added(tokens, attrs.user, special=False)
    decoder = decoders.SentencePiece(
        add_space_prefix, False, tokens[unk], ts.unk_surface, [t.content for t in special if t.id != unk],
    )
    return Tokenizer(tok.model, normalizer=tok.normalizer, pre_tokenizer=tok.pre_tokenizer,
                     post_processor=tok.post_processor, decoder=decoder, added_tokens=added, name=name,
                     specials_in_text="text")


def _check_add(m: _Meta, add: bool, token_id: int | None, which: str) -> None:
    if add and token_id is None:
        raise m.fail(f"tokenizer.ggml.add_{which}_token is true, but tokenizer.ggml.{which}_token_id is not set")


def _pre_rule(m: _Meta) -> tuple[str, PreTokenizerRule]:
    # llama.cpp: a missing or empty name is "default" (it warns that quality degrades)
    pre = m.str("tokenizer.ggml.pre", "default") or "default"
    rule = PRE_TOKENIZERS.get(pre)
    if rule is None:
        if pre in LLAMA_CPP_UNSUPPORTED_PRE_TOKENIZERS:
            raise m.fail(
                f"pre-tokenizer tokenizer.ggml.pre = {pre!r} is one llama.cpp knows, but tokenforge does not "
                f"reproduce its split rules exactly ({LLAMA_CPP_UNSUPPORTED_PRE_TOKENIZERS[pre]}), so it refuses "
                "the file rather than give other ids"
            )
        raise m.fail(
            f"unknown pre-tokenizer tokenizer.ggml.pre = {pre!r}; known: {', '.join(sorted(PRE_TOKENIZERS))}"
        )
    return pre, rule


def _byte_level(m: _Meta, model: str, tokens: list[str], types: list[int], name: str | None) -> Tokenizer:
    from . import decoders, pretokenizers
    from .models.bpe import PieceBPE

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
    attrs = _TokenAttrs(m, tokens, types)
    first = {i for i in range(n) if vocab[tokens[i]] == i}

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
    added = attrs.added(tokens, attrs.special & first, special=True)
    added += attrs.added(tokens, attrs.user & first, special=False)
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

"""``SentencePieceTrainer.train(...)`` on tokenforge's trainers.

The flags are sentencepiece's (``spm_train --help``, ``sentencepiece_model.proto``),
given as keyword arguments or as one ``"--flag=value --flag2=value"`` string.
``model_type`` picks the trainer: ``unigram`` (Kudo, 2018) and ``bpe`` run
tokenforge's :class:`~tokenforge.trainers.unigram.UnigramTrainer` and
:class:`~tokenforge.trainers.spm_bpe.SentencePieceBPETrainer`; ``char`` and
``word`` keep the most frequent characters (those that cover
``character_coverage``) or whitespace-delimited words, scored by log frequency,
as sentencepiece's ``char_model_trainer.cc`` and ``word_model_trainer.cc`` do.

The text of each sentence is prepared as sentencepiece's ``TrainerInterface``
prepares it: sentences longer than ``max_sentence_length`` bytes are skipped;
the rest are normalized; every meta piece (``<unk>``, ``<s>``, ``</s>``,
control and user-defined symbols) found in them becomes a boundary no piece
crosses; a ``pretokenizer`` callable (or ``pretokenization_delimiter``) adds
boundaries of its own; then each part is cut into ``▁``-words, which are what
the trainers count. The model gets the meta pieces at their ids (``unk_id``,
``bos_id``, ``eos_id``, ``pad_id``; ``-1`` leaves one out; control and
user-defined symbols fill the free ids from 0 up), then the trained pieces.

Flags that change what tokenforge's trainers learn and that they do not
implement (``split_by_whitespace=false``, ``treat_whitespace_as_suffix``,
``allow_whitespace_only_pieces``, ``required_chars``, differential privacy) are
refused with an error naming the flag, rather than ignored.
"""

from __future__ import annotations

import csv
import io
import math
import os
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np

from ..._io import atomic_write
from ...errors import InvalidArgumentError, TokenforgeError, TrainingError
from ...sentencepiece.charsmap import NAMED_CHARSMAPS, Charsmap
from ...sentencepiece.constants import SPACE, PieceType, byte_piece
from ...sentencepiece.normalizer import SentencePieceNormalizer as _Engine
from ...sentencepiece.proto import ModelProto, ModelType, NormalizerSpec, SentencePiece, TrainerSpec, encode_model

_BOOL = {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False}
_LISTS = ("input", "accept_language", "control_symbols", "user_defined_symbols")
#: Flags with no effect on what is learned here (threads, logging, sentencepiece's memory
#: and sampling knobs for its in-memory sentence store).
_IGNORED = ("num_threads", "minloglevel", "random_seed", "logstream", "shuffle_input_sentence", "input_format",
            "mining_sentence_size", "training_sentence_size", "self_test_sample_size",
            "train_extremely_large_corpus", "vocabulary_output_piece_score", "num_sub_iterations",
            "seed_sentencepieces_file", "auto_character_coverage", "differential_privacy_noise_level",
            "differential_privacy_clipping_threshold", "unk_surface", "model_prefix", "input_sentence_size")
#: Flags tokenforge's trainers do not implement, with the value that is the only one accepted.
_ONLY = {"split_by_whitespace": True, "treat_whitespace_as_suffix": False, "allow_whitespace_only_pieces": False,
         "required_chars": "", "enable_differential_privacy": False, "escape_whitespaces": True}
_NORMALIZER_FLAGS = ("add_dummy_prefix", "remove_extra_whitespaces", "escape_whitespaces")
_SPEC_NAMES = {f[1] for f in TrainerSpec._FIELDS} | set(_NORMALIZER_FLAGS) | {
    "normalization_rule_name", "normalization_rule_tsv", "minloglevel", "random_seed", "logstream",
    "hard_vocab_limit", "use_all_vocab",
}


def _parse_flag_string(arg: str) -> dict[str, str]:
    flags: dict[str, str] = {}
    for token in arg.split():
        if not token.startswith("-"):
            raise InvalidArgumentError(f"expected --flag=value, got {token!r}")
        name, sep, value = token.lstrip("-").partition("=")
        flags[name] = value if sep else "true"
    return flags


class PretokenizerError(TokenforgeError, RuntimeError):
    """The ``pretokenizer`` callable given to ``train`` raised (sentencepiece raises ``RuntimeError``)."""


def _list(value: Any) -> list[str]:
    if isinstance(value, str):
        return [v for row in csv.reader(io.StringIO(value)) for v in row if v != ""] if value else []
    return [str(v) for v in value]


def _convert(name: str, value: Any) -> Any:
    """A flag's value in the type of its ``TrainerSpec`` field."""
    if name in _LISTS:
        return _list(value)
    kinds = {f[1]: f[2] for f in TrainerSpec._FIELDS}
    kind = kinds.get(name, "bool" if name in _NORMALIZER_FLAGS + ("hard_vocab_limit", "use_all_vocab") else "string")
    if name == "model_type":
        if isinstance(value, int):
            return ModelType(value)
        try:
            return ModelType[str(value).upper()]
        except KeyError:
            raise InvalidArgumentError(f"model_type must be unigram, bpe, char or word, got {value!r}") from None
    try:
        if kind == "bool":
            if isinstance(value, str):
                return _BOOL[value.lower()]
            return bool(value)
        if kind in ("int32", "uint64"):
            return int(value)
        if kind == "float":
            return float(value)
    except (KeyError, ValueError):
        raise InvalidArgumentError(f"--{name}: cannot read {value!r} as {kind}") from None
    return value if isinstance(value, str) else str(value)


def _sentences(inputs: list[str], iterator: Iterable[Any] | None) -> Iterator[str]:
    if iterator is not None:
        for item in iterator:
            s = item.decode("utf-8", "replace") if isinstance(item, bytes) else str(item)
            yield s.rstrip("\r\n")
    for path in inputs:
        with open(path, encoding="utf-8", errors="replace", newline="") as f:
            for line in f:
                yield line.rstrip("\r\n")


def _words(part: str) -> list[str]:
    return [w for w in re.split(f"(?={SPACE})", part) if w]


class _Corpus:
    """Word counts (and line-end counts, for the Unigram seeds) of the prepared sentences."""

    def __init__(self) -> None:
        self.words: Counter[str] = Counter()
        self.line_ends: Counter[str] = Counter()
        self.chars: Counter[str] = Counter()


def _prepare(sentences: Iterable[str], engine: _Engine, meta: list[str], max_bytes: int,
             pretokenizer: Callable[[str], Any] | None, allow_inconsistent: bool, delimiter: str) -> _Corpus:
    corpus = _Corpus()
    meta_re = re.compile("|".join(re.escape(m) for m in sorted(meta, key=len, reverse=True))) if meta else None
    for n, line in enumerate(sentences):
        if len(line.encode("utf-8", "surrogateescape")) > max_bytes:
            continue
        norm = engine.normalize_str(line)
        parts = meta_re.split(norm) if meta_re is not None else [norm]
        chunks: list[str] = []
        for part in parts:
            if not part:
                continue
            if pretokenizer is not None:
                try:
                    got = [str(c) for c in pretokenizer(part)]
                except Exception as exc:
                    raise PretokenizerError(f"pretokenizer failed on sentence {n}: {exc}") from exc
                if not allow_inconsistent and "".join(got) != part:
                    raise TrainingError(
                        f"pretokenizer output of sentence {n} does not join back to its text: "
                        f"{''.join(got)!r} != {part!r}; pass allow_inconsistent_pretokenization=True to accept it")
                chunks.extend(got)
            elif delimiter:
                chunks.extend(part.split(delimiter))
            else:
                chunks.append(part)
        words = [w for c in chunks for w in _words(c.replace(" ", SPACE))]
        for w in words:
            corpus.words[w] += 1
            corpus.chars.update(w)
        if words:
            corpus.line_ends[words[-1]] += 1
    if not corpus.words:
        raise TrainingError("no text to train on: the input is empty, or every sentence was skipped")
    return corpus


def _required_chars(chars: Counter[str], coverage: float) -> list[tuple[str, int]]:
    """The most frequent characters that together cover ``coverage`` of all characters."""
    total = sum(chars.values())
    out: list[tuple[str, int]] = []
    acc = 0
    for c, k in sorted(chars.items(), key=lambda kv: (-kv[1], kv[0])):
        if total and acc / total >= coverage:
            break
        out.append((c, k))
        acc += k
    return out


def _log_freq(items: list[tuple[str, int]], total: int | None = None) -> list[tuple[str, float]]:
    """``log(count) - log(total)`` in float32 arithmetic, as sentencepiece scores char and word pieces."""
    logsum = np.float32(math.log(np.float32(sum(k for _, k in items) if total is None else total)))
    return [(s, float(np.float32(math.log(np.float32(k))) - logsum)) for s, k in items]


class SentencePieceTrainer:
    """sentencepiece's trainer: ``SentencePieceTrainer.train(input=..., model_prefix=..., vocab_size=...)``."""

    @staticmethod
    def Train(arg: str | None = None, logstream: Any = None, **kwargs: Any) -> None:
        """Train a model and write ``<model_prefix>.model`` and ``<model_prefix>.vocab`` (or give
        the ``.model`` bytes to ``model_writer``). ``arg`` is the flag string form; keyword
        arguments are the same flags, plus ``sentence_iterator`` (an iterable of lines, instead
        of ``input``), ``model_writer`` (a binary file object), ``pretokenizer`` (a callable that
        cuts a normalized sentence into parts no piece crosses), ``allow_inconsistent_pretokenization``
        and ``normalizer`` (a :class:`SentencePieceNormalizer` whose rules the model keeps)."""
        iterator = kwargs.pop("sentence_iterator", kwargs.pop("sentence_reader", None))
        writer = kwargs.pop("model_writer", None)
        pretokenizer = kwargs.pop("pretokenizer", None)
        allow_inconsistent = bool(kwargs.pop("allow_inconsistent_pretokenization", False))
        normalizer = kwargs.pop("normalizer", None)
        flags: dict[str, Any] = dict(_parse_flag_string(arg)) if isinstance(arg, str) else {}
        if arg is not None and not isinstance(arg, str):
            raise InvalidArgumentError(f"train takes a flag string or keyword arguments, got {type(arg).__name__}")
        flags.update(kwargs)
        proto = _train(flags, iterator, pretokenizer, allow_inconsistent, normalizer)
        data = encode_model(proto)
        if writer is not None:
            writer.write(data)
            return
        prefix = flags.get("model_prefix")
        if not prefix:
            raise InvalidArgumentError("give model_prefix= (the .model and .vocab file names) or model_writer=")
        with atomic_write(f"{prefix}.model", "wb") as f:
            f.write(data)
        with atomic_write(f"{prefix}.vocab", "w") as f:
            for p in proto.pieces:
                f.write(f"{p.piece}\t{_score_text(p.score)}\n")


    train = Train


def _score_text(score: float) -> str:
    """A score as sentencepiece writes it in ``.vocab`` files (C++ ``operator<<`` of a float)."""
    if score == int(score):
        return str(int(score))
    return f"{score:.6g}"


def _train(flags: dict[str, Any], iterator: Iterable[Any] | None, pretokenizer: Callable[[str], Any] | None,
           allow_inconsistent: bool, normalizer: Any) -> ModelProto:
    for name in flags:
        if name not in _SPEC_NAMES:
            raise InvalidArgumentError(f"unknown flag --{name} (sentencepiece's TrainerSpec has no such field)")
    v = {name: _convert(name, value) for name, value in flags.items() if name != "logstream"}
    for name, only in _ONLY.items():
        if name in v and v[name] != only:
            raise InvalidArgumentError(f"--{name}={flags[name]!r} is not supported by tokenforge's trainers "
                                       f"(only {only!r})")
    spec = TrainerSpec()
    for name, value in v.items():
        if hasattr(spec, name):
            setattr(spec, name, value)
            spec._present.add(name)
    model_type = ModelType(spec.model_type)
    if iterator is None and not spec.input:
        raise InvalidArgumentError("give input= (files) or sentence_iterator=")
    if pretokenizer is not None and spec.pretokenization_delimiter:
        raise InvalidArgumentError("pretokenizer= and pretokenization_delimiter= cannot be used together")
    if (pretokenizer is not None or spec.pretokenization_delimiter) and model_type not in (ModelType.UNIGRAM,
                                                                                             ModelType.BPE):
        raise InvalidArgumentError("pretokenizer= and pretokenization_delimiter= need model_type unigram or bpe")
    ns = _normalizer_spec(v, normalizer)
    if spec.unk_id < 0:
        raise InvalidArgumentError("unk_id must be >= 0: sentencepiece models always have an unknown piece")
    meta = _meta_pieces(spec, ModelType(spec.model_type), ns.escape_whitespaces)
    engine = _Engine(Charsmap(ns.precompiled_charsmap), add_dummy_prefix=ns.add_dummy_prefix,
                     remove_extra_whitespaces=ns.remove_extra_whitespaces, escape_whitespaces=True,
                     user_defined_symbols=[p for p, t in meta.values() if t == PieceType.USER_DEFINED])
    corpus = _prepare(_sentences(spec.input, iterator), engine, [p for p, _ in meta.values()],
                      spec.max_sentence_length, pretokenizer, allow_inconsistent, spec.pretokenization_delimiter)
    hard = bool(v.get("hard_vocab_limit", True))
    use_all = bool(v.get("use_all_vocab", False))
    room = spec.vocab_size - len(meta)
    if room <= 0:
        raise InvalidArgumentError(f"vocab_size {spec.vocab_size} leaves no room beside the {len(meta)} meta pieces")
    trained = _learn(model_type, spec, corpus, room, use_all)
    names = {p for p, _ in meta.values()}
    trained = [t for t in trained if t[0] not in names]
    # sentencepiece's char and word trainers keep what the input gives, whatever hard_vocab_limit says
    if hard and not use_all and len(trained) < room and model_type in (ModelType.UNIGRAM, ModelType.BPE):
        raise TrainingError(
            f"vocabulary size too high: vocab_size={spec.vocab_size} but the input gives only "
            f"{len(trained) + len(meta)} pieces; lower vocab_size or pass hard_vocab_limit=False")
    if not hard or use_all:
        spec.vocab_size = len(trained) + len(meta)
    pieces: list[SentencePiece] = []
    rest = iter(trained)
    for i in range(len(trained) + len(meta)):
        if i in meta:
            piece, kind = meta[i]
            pieces.append(SentencePiece(piece, 0.0, int(kind)))
        else:
            p, score, kind = next(rest)
            pieces.append(SentencePiece(p, score, int(kind)))
    spec.model_type = int(model_type)
    spec._present.update(("model_type", "vocab_size"))
    return ModelProto(pieces=pieces, trainer_spec=spec, normalizer_spec=ns,
                      _present={"pieces", "trainer_spec", "normalizer_spec"})


def _normalizer_spec(v: dict[str, Any], normalizer: Any) -> NormalizerSpec:
    if normalizer is not None:
        given = [f for f in _NORMALIZER_FLAGS + ("normalization_rule_name", "normalization_rule_tsv") if f in v]
        if given:
            raise InvalidArgumentError(f"normalizer= already sets the normalization; do not pass "
                                       f"{', '.join(given)} with it")
        spec: NormalizerSpec = normalizer.spec
        return NormalizerSpec(spec.name, spec.precompiled_charsmap, spec.add_dummy_prefix,
                              spec.remove_extra_whitespaces, spec.escape_whitespaces, spec.normalization_rule_tsv,
                              _present=set(spec._present))
    tsv = v.get("normalization_rule_tsv")
    if tsv:
        from ._normalizer import rules_from_tsv

        ns = NormalizerSpec(name="user_defined", precompiled_charsmap=Charsmap.from_rules(rules_from_tsv(tsv)).blob,
                            normalization_rule_tsv=tsv)
    else:
        name = v.get("normalization_rule_name", "nmt_nfkc")
        if name not in NAMED_CHARSMAPS:
            raise InvalidArgumentError(f"unknown normalization_rule_name {name!r}; known: {', '.join(NAMED_CHARSMAPS)}")
        ns = NormalizerSpec(name=name, precompiled_charsmap=Charsmap.named(name).blob)
    for flag in _NORMALIZER_FLAGS:
        if flag in v:
            setattr(ns, flag, v[flag])
    ns._present.update(f for f in ("name", "precompiled_charsmap", *_NORMALIZER_FLAGS, "normalization_rule_tsv")
                       if f in v or f in ("name", "add_dummy_prefix", "remove_extra_whitespaces", "escape_whitespaces")
                       or (f == "precompiled_charsmap" and ns.precompiled_charsmap))
    return ns


def _meta_pieces(spec: TrainerSpec, model_type: ModelType, escape: bool) -> dict[int, tuple[str, PieceType]]:
    """``{id: (piece, type)}`` of the meta pieces, as sentencepiece's ``InitMetaPieces`` lays them out."""
    meta: dict[int, tuple[str, PieceType]] = {}
    for what, i, piece, kind in (("unk", spec.unk_id, spec.unk_piece, PieceType.UNKNOWN),
                                 ("bos", spec.bos_id, spec.bos_piece, PieceType.CONTROL),
                                 ("eos", spec.eos_id, spec.eos_piece, PieceType.CONTROL),
                                 ("pad", spec.pad_id, spec.pad_piece, PieceType.CONTROL)):
        if i < 0:
            continue
        if i >= spec.vocab_size:
            raise InvalidArgumentError(f"{what}_id {i} is not below vocab_size {spec.vocab_size}")
        if i in meta:
            raise InvalidArgumentError(f"{what}_id {i} is also the id of {meta[i][0]!r}")
        if piece in (p for p, _ in meta.values()):
            raise InvalidArgumentError(f"{what}_piece {piece!r} is given twice")
        meta[i] = (piece, kind)
    by_piece = {p: i for i, (p, _) in meta.items()}
    user_defined: list[str] = []
    for s in spec.user_defined_symbols:
        user_defined.append(s)
        if model_type == ModelType.WORD and escape and not s.startswith(SPACE):
            user_defined.append(SPACE + s)  # a word model's pieces start with ▁, so "▁foo" as well
    byte_pieces = [byte_piece(b) for b in range(256)] if spec.byte_fallback else []
    for symbols, kind in ((spec.control_symbols, PieceType.CONTROL), (user_defined, PieceType.USER_DEFINED),
                          (byte_pieces, PieceType.BYTE)):
        for s in symbols:
            if not s:
                raise InvalidArgumentError("control and user-defined symbols must be non-empty")
            if s in by_piece:
                i = by_piece[s]
                if meta[i][1] == PieceType.UNKNOWN:
                    raise InvalidArgumentError(f"{s!r} is the unknown piece; it cannot be a symbol as well")
                meta[i] = (s, kind)  # e.g. <s> as a user-defined symbol: text may hold it, bos_id() is -1
                continue
            i = 0
            while i in meta:
                i += 1
            meta[i] = (s, kind)
            by_piece[s] = i
    return meta


def _learn(model_type: ModelType, spec: TrainerSpec, corpus: _Corpus, room: int,
           use_all: bool) -> list[tuple[str, float, PieceType]]:
    """``room`` pieces (fewer when the input has fewer) with scores, meta pieces left out."""
    if model_type == ModelType.CHAR:
        chars = _required_chars(corpus.chars, spec.character_coverage)
        chosen = chars if use_all else chars[:room]
        return [(c, s, PieceType.NORMAL) for c, s in _log_freq(chosen, sum(k for _, k in chars))]
    if model_type == ModelType.WORD:
        words = sorted(corpus.words.items(), key=lambda kv: (-kv[1], kv[0]))
        chosen = words if use_all else words[:room]
        return [(w, s, PieceType.NORMAL) for w, s in _log_freq(chosen, sum(k for _, k in words))]
    settings: dict[str, Any] = dict(character_coverage=spec.character_coverage, byte_fallback=spec.byte_fallback,
                    split_digits=spec.split_digits, max_piece_length=spec.max_sentencepiece_length,
                    split_by_unicode_script=spec.split_by_unicode_script)
    model: Any
    size = room + 1 + (256 if spec.byte_fallback else 0)  # the trainers count <unk> and the byte pieces
    if model_type == ModelType.UNIGRAM:
        from ...trainers.unigram import UnigramTrainer

        trainer: Any = UnigramTrainer(vocab_size=size, special_tokens=(), unk_token=spec.unk_piece,
                                      shrinking_factor=spec.shrinking_factor,
                                      num_sub_iterations=max(1, spec.num_sub_iterations),
                                      seed_sentencepiece_size=spec.seed_sentencepiece_size, show_progress=False,
                                      **settings)
        model = trainer.train_from_counts(corpus.words, line_ends=corpus.line_ends)
        rows = list(zip(model.pieces, model.scores, model.types))
    else:
        from ...trainers.spm_bpe import SentencePieceBPETrainer

        trainer = SentencePieceBPETrainer(vocab_size=size, special_tokens=(), unk_token=spec.unk_piece,
                                          split_by_number=spec.split_by_number, show_progress=False, **settings)
        model = trainer.train_from_counts(corpus.words)
        rows = [(model.id_to_token(i), s, t) for i, (s, t) in enumerate(zip(model.scores, model.types))]
    return [(p, float(s), PieceType(t)) for p, s, t in rows
            if t not in (PieceType.UNKNOWN, PieceType.CONTROL, PieceType.USER_DEFINED, PieceType.BYTE)
            and not math.isnan(s)]


__all__ = ["SentencePieceTrainer", "os"]

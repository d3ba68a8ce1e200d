"""Ready-made pipelines for the model families people use, and their trainers.

* :func:`bert_wordpiece` — BERT: BertNormalizer, BertPreTokenizer, WordPiece,
  ``[CLS] A [SEP] B [SEP]``, WordPiece decoder (HF's ``BertWordPieceTokenizer``).
* :func:`sentencepiece` — a SentencePiece ``.model`` (Unigram, or BPE with byte
  fallback): SentencePiece's own normalization, the model on the whole
  ``▁``-escaped text, ``<s>``/``</s>`` by code, and its decoder.
* ``train_wordpiece``, ``train_unigram``, ``train_sentencepiece_bpe`` — train
  those from files or strings, counting in parallel and streaming the input.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, cast

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .progress import Progress
    from .tokenizer import Tokenizer
    from .trainers.counting import LineCounts, LineSplitter

    _Files = str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | None

BERT_SPECIALS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")


def bert_wordpiece(
    vocab: Mapping[str, int] | str | os.PathLike[str],
    *,
    lowercase: bool = True,
    strip_accents: bool | None = None,
    handle_chinese_chars: bool = True,
    clean_text: bool = True,
    unk_token: str = "[UNK]",
    cls_token: str = "[CLS]",
    sep_token: str = "[SEP]",
    pad_token: str = "[PAD]",
    mask_token: str = "[MASK]",
    wordpieces_prefix: str = "##",
    max_input_chars_per_word: int = 100,
    name: str | None = None,
) -> Tokenizer:
    """A BERT tokenizer over ``vocab`` (a ``{token: id}`` map or a ``vocab.txt`` path).

    The special tokens present in the vocabulary become special added tokens.
    """
    from . import decoders, postprocessors, pretokenizers
    from .models.wordpiece import WordPiece
    from .normalizers import BertNormalizer
    from .tokenizer import AddedToken, Tokenizer

    if not isinstance(vocab, Mapping):
        from .errors import FileFormatError
        from .formats.bert_vocab import load_bert_vocab

        path = vocab
        vocab = load_bert_vocab(path)
        name = name or os.path.basename(os.fspath(path))
        for role, token in (("cls_token", cls_token), ("sep_token", sep_token)):
            if token not in vocab:  # HF's BertWordPieceTokenizer refuses it: no [CLS] ... [SEP] template
                raise FileFormatError(f"{role} {token!r} is not in the vocabulary; BERT's template needs it "
                                      f"(pass {role}= if this vocabulary names it differently)", path=path)
        try:
            model = WordPiece(vocab, unk_token, wordpieces_prefix, max_input_chars_per_word)
        except Exception as exc:  # name the file in the message
            raise FileFormatError(str(exc), path=path) from None
    else:
        model = WordPiece(vocab, unk_token, wordpieces_prefix, max_input_chars_per_word)
    specials = [AddedToken(t, vocab[t]) for t in (pad_token, unk_token, cls_token, sep_token, mask_token) if t in vocab]
    post = None
    if cls_token in vocab and sep_token in vocab:
        post = postprocessors.BertProcessing((sep_token, vocab[sep_token]), (cls_token, vocab[cls_token]))
    return Tokenizer(
        model,
        normalizer=BertNormalizer(clean_text, handle_chinese_chars, strip_accents, lowercase),
        pre_tokenizer=pretokenizers.BertPreTokenizer(),
        post_processor=post,
        decoder=decoders.WordPiece(wordpieces_prefix),
        added_tokens=specials,
        name=name,
    )


def _progress_bar(total: int | None, desc: str, show: bool | None) -> Progress:
    from .progress import Progress

    return Progress(total, desc, "B", show=show, unit_scale=True)


def _count(
    files: _Files,
    iterator: Iterable[str] | None,
    splitter: LineSplitter,
    workers: int | None,
    errors: str,
    show_progress: bool | None,
    sample_lines: int = 0,
    sample_seed: int = 0,
) -> LineCounts:
    from pathlib import Path

    from .trainers.counting import count_lines

    files = [files] if isinstance(files, (str, os.PathLike)) else list(files or ())
    total = sum(Path(f).stat().st_size for f in files if Path(f).is_file()) or None
    with _progress_bar(total, "counting", show_progress) as bar:
        return count_lines(files, splitter, iterator=iterator, workers=workers, errors=errors,
                           progress=(bar.update if bar else None), sample_lines=sample_lines, sample_seed=sample_seed)


def _check_length(name: str, value: object, optional: bool) -> None:
    """A length limit must be a positive int (an int32, as sentencepiece stores it), or None when optional."""
    from .errors import TrainingError

    if value is None and optional:
        return
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value < 2**31:
        allowed = "a positive int below 2**31" + (" or None" if optional else "")
        raise TrainingError(f"{name} must be {allowed}, got {value!r}")


def _report_skipped(
    counts: LineCounts, what: str, setting: str, limit: int | None, followed: str, stacklevel: int
) -> None:
    """Say how many lines (or words) were left out for their length; with nothing else left
    to train on, that is the error. ``followed`` names whose rule this is."""
    import warnings

    from .errors import TrainingError
    from .trainers import LongInputWarning

    n = counts.skipped
    if not n:
        return
    if not counts:
        raise TrainingError(
            f"no training data: {n} {what}(s) longer than {setting}={limit} bytes were skipped ({followed}) "
            f"and nothing else was left; raise {setting} to train on them"
        )
    warnings.warn(
        f"skipped {n} {what}(s) longer than {setting}={limit} bytes ({followed}); raise {setting} to train on them",
        LongInputWarning,
        stacklevel=stacklevel,  # the user's call of train_*
    )


def train_wordpiece(
    files: str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | None = None,
    *,
    iterator: Iterable[str] | None = None,
    vocab_size: int = 30000,
    min_frequency: int = 0,
    limit_alphabet: int | None = None,
    special_tokens: Sequence[str] = BERT_SPECIALS,
    unk_token: str = "[UNK]",
    lowercase: bool = True,
    strip_accents: bool | None = None,
    max_word_length: int | None = 4192,
    workers: int | None = None,
    errors: str = "strict",
    show_progress: bool | None = None,
    merge: str = "frequency",
) -> Tokenizer:
    """Train a BERT-style WordPiece tokenizer on files and/or an iterator of strings.

    ``merge`` picks the merge rule: ``"frequency"`` (the most frequent pair, as HF
    tokenizers' ``WordPieceTrainer``), ``"likelihood"`` (the likelihood gain of
    Schuster & Nakajima, 2012) or ``"score"`` (f(xy)/(f(x)f(y)), which favours rare
    pairs); see :mod:`tokenforge.trainers.wordpiece`.

    ``max_word_length``: a word (a run of characters with no white space,
    punctuation or CJK ideograph, which BERT's pre-tokenizer keeps whole) of
    more than this many UTF-8 bytes, as read, is skipped and reported with a
    :class:`~tokenforge.trainers.LongInputWarning`. WordPiece encodes every
    word longer than ``max_input_chars_per_word`` (100 characters) as
    ``[UNK]``, as HF tokenizers does, so such a word never uses the pieces it
    would teach; skipping it keeps training memory bounded by the chunk size
    even for a file that is one huge word. ``None`` trains on every word
    (memory then grows with the longest one).

    ``show_progress``: ``None`` (the default) draws progress bars where someone can see
    them (a terminal, a notebook), ``True`` always, ``False`` never.
    """
    from . import pretokenizers
    from .normalizers import BertNormalizer
    from .trainers.counting import LineSplitter
    from .trainers.wordpiece import WordPieceTrainer

    norm = BertNormalizer(lowercase=lowercase, strip_accents=strip_accents)
    pre = pretokenizers.BertPreTokenizer()
    # BERT normalization is character by character and the split drops all
    # whitespace, so blocks of lines can be processed whole.
    _check_length("max_word_length", max_word_length, optional=True)
    splitter = LineSplitter(norm.to_dict(), pre.to_dict(), line_independent=True, max_word_bytes=max_word_length)
    counts = _count(files, iterator, splitter, workers, errors, show_progress)
    _report_skipped(counts, "word", "max_word_length", max_word_length, "WordPiece encodes any word over 100 characters as [UNK]",
                    stacklevel=3)
    trainer = WordPieceTrainer(
        vocab_size=vocab_size, min_frequency=min_frequency, limit_alphabet=limit_alphabet,
        special_tokens=tuple(special_tokens), unk_token=unk_token, show_progress=show_progress, merge=merge,
    )
    model = trainer.train_from_counts(counts)
    return bert_wordpiece(model.get_vocab(), lowercase=lowercase, strip_accents=strip_accents, unk_token=unk_token)


def sentencepiece(
    source: Any,
    *,
    add_bos: bool = False,
    add_eos: bool = False,
    name: str | None = None,
) -> Tokenizer:
    """A pipeline equal to the ``sentencepiece`` library on a ``.model`` file (a
    path, its bytes, or a parsed :class:`~tokenforge.sentencepiece.proto.ModelProto`);
    see :func:`tokenforge.sentencepiece.convert.tokenizer_from_proto`. A path
    names the tokenizer unless ``name`` is given.
    """
    from .sentencepiece.convert import tokenizer_from_proto
    from .sentencepiece.proto import ModelProto, read_model

    proto = source if isinstance(source, ModelProto) else read_model(source)
    path = source if isinstance(source, (str, os.PathLike)) else None
    if name is None and path is not None:
        name = os.path.basename(os.fspath(path))
    return tokenizer_from_proto(proto, add_bos=add_bos, add_eos=add_eos, name=name, path=path)


def _sentencepiece_counts(
    files: _Files,
    iterator: Iterable[str] | None,
    rules: str,
    workers: int | None,
    errors: str,
    show_progress: bool | None,
    max_sentence_length: int,
    line_ends: bool = False,
    input_sentence_size: int = 0,
    sample_seed: int = 0,
) -> LineCounts:
    """Count SentencePiece "words": each line normalized by ``rules`` (dummy prefix,
    whitespace clean-up, ``▁`` escaping), then cut before every ``▁``. Lines of more than
    ``max_sentence_length`` bytes are skipped, as sentencepiece's trainer skips them.
    ``line_ends``: also count how often each word ends a line (``counts.line_ends``).
    ``input_sentence_size``: count about that many lines of the files, sampled uniformly
    (sentencepiece's flag of that name; 0: every line)."""
    from . import pretokenizers
    from .sentencepiece.constants import SPACE
    from .sentencepiece.normalizer import SentencePieceNormalizer
    from .trainers.counting import LineSplitter

    norm = SentencePieceNormalizer(rules)
    pre = pretokenizers.Split(SPACE, "merged_with_next", regex_pattern=False)
    _check_length("max_sentence_length", max_sentence_length, optional=False)
    splitter = LineSplitter(norm.to_dict(), pre.to_dict(), max_line_bytes=max_sentence_length, line_ends=line_ends)
    counts = _count(files, iterator, splitter, workers, errors, show_progress, input_sentence_size, sample_seed)
    _report_skipped(counts, "line", "max_sentence_length", max_sentence_length, "as sentencepiece's trainer skips them",
                    stacklevel=4)
    return counts


def train_unigram(
    files: str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | None = None,
    *,
    iterator: Iterable[str] | None = None,
    vocab_size: int = 8000,
    special_tokens: Sequence[str] = ("<s>", "</s>"),
    unk_token: str = "<unk>",
    normalization: str = "nmt_nfkc",
    character_coverage: float = 0.9995,
    byte_fallback: bool = False,
    split_digits: bool = False,
    max_piece_length: int = 16,
    shrinking_factor: float = 0.75,
    max_sentence_length: int = 4192,
    input_sentence_size: int = 0,
    sample_seed: int = 0,
    num_threads: int | None = None,
    workers: int | None = None,
    errors: str = "strict",
    show_progress: bool | None = None,
    out: str | os.PathLike[str] | None = None,
    overwrite: bool = False,
) -> Tokenizer:
    """Train a SentencePiece-style Unigram tokenizer (seed pieces from frequent
    substrings, EM with forward–backward counts, likelihood pruning).

    Lines are sentences: each is normalized with ``normalization`` (``nmt_nfkc``,
    ``nmt_nfkc_cf``, ``nfkc``, ``nfkc_cf`` or ``identity``: sentencepiece's named rules), given a dummy-prefix ``▁``, and cut into
    ``▁``-words. A line of more than ``max_sentence_length`` UTF-8 bytes is
    skipped, with sentencepiece's rule and default (its ``--max_sentence_length``,
    4192), and the number skipped is reported with a
    :class:`~tokenforge.trainers.LongInputWarning`; memory stays bounded by the
    chunk size whatever the length of the lines. ``out`` also writes a ``.model``
    file that the ``sentencepiece`` library loads with the same ids; an existing file
    there is replaced only with ``overwrite=True`` (checked before training, so a
    refused run costs nothing).

    ``input_sentence_size`` (sentencepiece's flag of that name; 0, the default, trains on
    every line): when the files hold more lines than this, train on about this many,
    sampled uniformly and reproducibly (``sample_seed``; the same lines for any worker
    count). sentencepiece's trainer holds every sentence it trains on in memory, so its
    users set it on large corpora; tokenforge streams its counts, so it is only a way to
    train faster on a sample.

    ``show_progress``: ``None`` (the default) draws progress bars where someone can see
    them (a terminal, a notebook; :mod:`tokenforge.progress`), ``True`` always (a log file
    gets them too), ``False`` never.
    """
    from .sentencepiece.proto import ModelType, build_model_proto
    from .formats import check_overwrite
    from .trainers import check_output_path
    from .trainers.unigram import UnigramTrainer

    if out is not None:
        check_output_path(out, "sentencepiece")
        check_overwrite(out, "sentencepiece", overwrite)
    counts = _sentencepiece_counts(files, iterator, normalization, workers, errors, show_progress, max_sentence_length,
                                   line_ends=True, input_sentence_size=input_sentence_size, sample_seed=sample_seed)
    settings: dict[str, Any] = dict(character_coverage=character_coverage, byte_fallback=byte_fallback, split_digits=split_digits,
                    max_piece_length=max_piece_length)
    trainer = UnigramTrainer(
        vocab_size=vocab_size, special_tokens=tuple(special_tokens), unk_token=unk_token,
        shrinking_factor=shrinking_factor, num_threads=num_threads, show_progress=show_progress, **settings,
    )
    model = trainer.train_from_counts(counts, line_ends=counts.line_ends)  # seeds as sentencepiece sees sentences
    proto = build_model_proto(
        model.pieces, model.scores, cast("Sequence[int]", model.types), model_type=ModelType.UNIGRAM, normalization=normalization,
        trainer_settings={**settings, "max_sentence_length": max_sentence_length,
                          "input_sentence_size": input_sentence_size},
    )
    return _finish_sentencepiece(proto, out, "unigram")


def _finish_sentencepiece(proto: Any, out: str | os.PathLike[str] | None, default_name: str) -> Tokenizer:
    """Write the trained model's ``.model`` file (when asked) and load it as a pipeline."""
    from .sentencepiece.proto import write_model

    if out is not None:
        write_model(proto, out)
    return sentencepiece(proto, name=os.path.basename(os.fspath(out)) if out is not None else default_name)


def train_sentencepiece_bpe(
    files: str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | None = None,
    *,
    iterator: Iterable[str] | None = None,
    vocab_size: int = 8000,
    special_tokens: Sequence[str] = ("<s>", "</s>"),
    unk_token: str = "<unk>",
    normalization: str = "nmt_nfkc",
    character_coverage: float = 0.9995,
    byte_fallback: bool = True,
    split_digits: bool = False,
    max_piece_length: int = 16,
    max_sentence_length: int = 4192,
    input_sentence_size: int = 0,
    sample_seed: int = 0,
    workers: int | None = None,
    errors: str = "strict",
    show_progress: bool | None = None,
    out: str | os.PathLike[str] | None = None,
    overwrite: bool = False,
) -> Tokenizer:
    """Train a Llama-2/Mistral-style SentencePiece BPE tokenizer: ``▁`` words,
    merges by frequency (scored by order), byte fallback for rare characters.
    Lines of more than ``max_sentence_length`` UTF-8 bytes are skipped and
    reported, ``input_sentence_size`` samples the lines and ``show_progress`` draws bars,
    as in :func:`train_unigram` (sentencepiece's rules and defaults).
    ``out`` also writes a ``.model`` file that the ``sentencepiece`` library loads; an
    existing file is replaced only with ``overwrite=True``."""
    from .formats import check_overwrite
    from .trainers import check_output_path
    from .trainers.spm_bpe import SentencePieceBPETrainer

    if out is not None:
        check_output_path(out, "sentencepiece")
        check_overwrite(out, "sentencepiece", overwrite)
    counts = _sentencepiece_counts(files, iterator, normalization, workers, errors, show_progress, max_sentence_length,
                                   input_sentence_size=input_sentence_size, sample_seed=sample_seed)
    settings: dict[str, Any] = dict(character_coverage=character_coverage, byte_fallback=byte_fallback, split_digits=split_digits,
                    max_piece_length=max_piece_length)
    trainer = SentencePieceBPETrainer(
        vocab_size=vocab_size, special_tokens=tuple(special_tokens), unk_token=unk_token,
        show_progress=show_progress, **settings,
    )
    model = trainer.train_from_counts(counts)
    proto = trainer.model_proto(model, normalization=normalization, remove_extra_whitespaces=True,
                                trainer_settings={"max_sentence_length": max_sentence_length,
                                                  "input_sentence_size": input_sentence_size})
    return _finish_sentencepiece(proto, out, "sentencepiece-bpe")

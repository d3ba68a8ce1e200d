"""Opening and saving tokenizer files: format detection by content, ``load`` and ``save``.

``load(path)`` recognises:

* a native tokenforge JSON file (``format_version``; files of every earlier
  version load too);
* a tiktoken rank file (``*.tiktoken``, or any file of ``base64 rank`` lines);
  a file whose sha256 is that of a known encoding gets that encoding's pattern
  and specials, any other needs ``pattern=`` (and ``special_tokens=``);
* GPT-2 files: a directory with ``vocab.json`` and ``merges.txt``, or either
  of the two files;
* an HF ``tokenizer.json`` (a directory holding one, or the file);
* a SentencePiece ``.model`` (protobuf), with the ``sentencepiece`` library's ids;
* a BERT ``vocab.txt`` (one token per line; ``lowercase=`` hint, default True);
* a GGUF file (llama.cpp; vocab-only files too).

Every one gives a :class:`~tokenforge.Tokenizer`. The readers and writers of
each format live in :mod:`tokenforge.formats`; every writer is atomic
(temporary file, then rename).

>>> import os, tempfile, tokenforge
>>> enc = tokenforge.get_encoding("gpt2")
>>> path = os.path.join(tempfile.mkdtemp(), "gpt2.tiktoken")
>>> save(enc, path, format="tiktoken")
>>> detect_format(path)
'tiktoken'
>>> load(path).encode("hello world") == enc.encode("hello world")
True
"""

from __future__ import annotations

import errno
import hashlib
import os
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

from ._io import check_interrupted_save, read_bytes, read_text
from .errors import ArgumentTypeError, FileFormatError, SaveError, TokenforgeError, TokenizerFileNotFoundError
from .formats import LOAD_FORMATS, to_hf_live
from .tokenizer import Tokenizer

__all__ = ["LOAD_FORMATS", "LOAD_PROGRESS_BYTES", "convert", "detect_format", "load", "save", "to_hf_live"]


def detect_format(path: str | os.PathLike[str]) -> str:
    """Return one of :data:`LOAD_FORMATS` for ``path``."""
    p = Path(path)
    if p.is_dir():
        # A transformers folder may hold several forms; tokenizer.json is the complete one
        # (transformers' fast tokenizers read it first).
        if (p / "tokenizer.json").is_file():
            return "hf"
        if (p / "vocab.json").is_file() and (p / "merges.txt").is_file():
            return "gpt2"
        if (p / "tokenizer.model").is_file():
            return "tiktoken" if _is_rank_file(p / "tokenizer.model") else "sentencepiece"
        if (p / "vocab.txt").is_file():
            return "bert_vocab"
        raise TokenizerFileNotFoundError(
            f"{p}: directory has no vocab.json + merges.txt, tokenizer.json, tokenizer.model or vocab.txt"
        )
    if not p.exists():
        raise TokenizerFileNotFoundError(f"{p}: no such file")
    if p.name.endswith("vocab.json") or p.name.endswith("merges.txt"):
        return "gpt2"
    if p.suffix == ".tiktoken":
        return "tiktoken"
    if p.suffix == ".model":
        # Meta ships Llama 3's tiktoken rank file as tokenizer.model: look at the content.
        return "tiktoken" if _is_rank_file(p) else "sentencepiece"
    if p.suffix == ".txt":
        # A vocab.txt holds any token on any line (HF reads it whatever the first line
        # looks like), but so does any text file: it is one only when it looks like one.
        if _is_rank_file(p):
            return "tiktoken"
        if _looks_like_bert_vocab(p):
            return "bert_vocab"
        raise _not_a_tokenizer(p)
    with open(p, "rb") as f:
        raw = f.read(4096)
    if p.suffix == ".gguf" or raw.startswith(b"GGUF"):
        return "gguf"
    head = raw.lstrip()
    if head.startswith(b"{"):
        with open(p, "rb") as f:
            whole_head = f.read(1 << 16)
        if b'"format_version"' in whole_head:
            return "tokenforge"
        if b'"sha256"' in whole_head:
            return "tokenforge"  # ours, with format_version damaged: load() says so
        if b'"model"' in whole_head or p.name.endswith("tokenizer.json"):
            return "hf"
        return "tokenforge"  # a JSON file: load() says what it lacks
    if _is_rank_file(p):
        return "tiktoken"
    if p.name.endswith("vocab.txt") and _looks_like_bert_vocab(p):
        return "bert_vocab"
    if head[:1] == b"\x0a":  # protobuf field 1 (pieces), length-delimited: a SentencePiece model
        return "sentencepiece"
    raise _not_a_tokenizer(p)


def _not_a_tokenizer(p: Path) -> FileFormatError:
    """The error for a file that is none of the formats :func:`load` reads."""
    from .formats import FORMAT_DESCRIPTIONS

    kinds = "; ".join(FORMAT_DESCRIPTIONS[f] for f in LOAD_FORMATS)
    return FileFormatError(
        f"not a tokenizer file; tokenforge reads: {kinds}; or a folder holding one of them. "
        f"To read it as one of them anyway, name the format: load(path, format=NAME), or -t NAME:{p} "
        f"on the command line, NAME one of {', '.join(LOAD_FORMATS)}",
        path=p,
    )


#: How much of a ``.txt`` file :func:`_looks_like_bert_vocab` reads.
_VOCAB_SNIFF_BYTES = 4 << 20
#: The tokens every BERT WordPiece vocabulary holds, one of which marks a file as one.
_BERT_MARKERS = frozenset((b"[UNK]", b"[CLS]", b"[SEP]"))


def _looks_like_bert_vocab(path: Path) -> bool:
    """Is ``path`` a WordPiece ``vocab.txt``: a line of its own holding ``[UNK]``, ``[CLS]``
    or ``[SEP]`` (as every BERT vocabulary has) in its first few MB?"""
    with open(path, "rb") as f:
        data = f.read(_VOCAB_SNIFF_BYTES)
    return any(line.strip() in _BERT_MARKERS for line in data.split(b"\n"))


def _is_rank_file(path: Path) -> bool:
    """Does the file start with a tiktoken ``base64 rank`` line?"""
    with open(path, "rb") as f:
        first = f.read(256).split(b"\n", 1)[0].split()
    return (
        len(first) == 2 and first[1].isdigit()
        and all(c in _BASE64 for c in first[0]) and len(first[0]) % 4 == 0
    )


_BASE64 = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=")


def _gpt2_paths(path: Path) -> tuple[Path, Path]:
    if path.is_dir():
        return path / "vocab.json", path / "merges.txt"
    if path.name.endswith("vocab.json"):
        return path, path.with_name(path.name[: -len("vocab.json")] + "merges.txt")
    return path.with_name(path.name[: -len("merges.txt")] + "vocab.json"), path


def load(
    path: str | os.PathLike[str],
    *,
    pattern: str | None = None,
    special_tokens: Collection[str] | Mapping[str, int] | None = None,
    name: str | None = None,
    lowercase: bool | None = None,
    show_progress: bool | None = None,
    format: str | None = None,
) -> Tokenizer:
    """Open a tokenizer file of any supported format (see module docstring).

    ``format`` (one of :data:`LOAD_FORMATS`) reads the file as that format instead of
    detecting it: ``load("words.txt", format="bert_vocab")``.

    ``pattern`` (a name like ``"gpt2"``, ``"cl100k"``, ``"qwen"`` or a regex)
    and ``special_tokens`` override what a rank file implies. Every format gives a
    :class:`~tokenforge.Tokenizer`. ``lowercase`` is the BERT
    ``vocab.txt`` hint (default True, as ``bert-base-uncased``).

    A file of :data:`LOAD_PROGRESS_BYTES` or more shows a progress bar while it
    loads (about a second per 10 MB of JSON), by the rule of
    :mod:`tokenforge.progress`: ``show_progress=None`` shows it on a terminal or in
    a notebook, ``True`` always, ``False`` never.
    """
    from .progress import Progress

    _check_path_is_a_name(path)
    if format is not None and format not in LOAD_FORMATS:
        from .errors import InvalidArgumentError

        raise InvalidArgumentError(f"unknown format {format!r}; load reads {', '.join(LOAD_FORMATS)}")
    size = _bytes_to_read(Path(path))
    with Progress(size, f"load {Path(path).name}", "B", unit_scale=True, unit_divisor=1024,
                  show=show_progress if size >= LOAD_PROGRESS_BYTES else False) as bar:
        try:
            tokenizer = _load(path, pattern, special_tokens, name, lowercase, format)
        except FileFormatError as exc:
            if exc.path is None:  # every load error names the file
                raise FileFormatError(str(exc), path=path) from None
            raise
        bar.update(size)
    return tokenizer


#: Files at least this big show a progress bar while :func:`load` reads and indexes them.
LOAD_PROGRESS_BYTES = 16 << 20

# what load reads from a folder (a GGUF file is mapped, and only its vocabulary is read)
_FOLDER_FILES = ("tokenizer.json", "tokenizer.model", "vocab.json", "merges.txt", "vocab.txt")


def _check_path_is_a_name(path: str | os.PathLike[str]) -> None:
    """A clear error for text passed where a file name belongs (a tokenizer.json's content,
    say), before the file system answers with ENAMETOOLONG or a file that is not there."""
    if not isinstance(path, (str, os.PathLike)):
        raise ArgumentTypeError(f"a tokenizer file is a path (str or os.PathLike), not {type(path).__name__}")
    text = os.fspath(path)
    too_long = False
    if "\n" not in text and "\x00" not in text:
        try:
            os.stat(text)
            return
        except OSError as exc:
            too_long = exc.errno == errno.ENAMETOOLONG
        except ValueError:
            pass
        if not too_long:
            return  # a plain missing file: detect_format names it
    shown = f"{text[:60]!r}...{text[-30:]!r}" if len(text) > 100 else repr(text)
    hint = "to build a tokenizer from a tokenizer.json's text, use Tokenizer.from_dict(json.loads(text))"
    raise TokenizerFileNotFoundError(f"{shown}: not a file name ({hint})")


def _bytes_to_read(p: Path) -> int:
    """About how many bytes :func:`load` reads for ``p`` (0 when unknown, or a GGUF file)."""
    try:
        if p.is_dir():
            return sum((p / n).stat().st_size for n in _FOLDER_FILES if (p / n).is_file())
        if p.suffix.lower() == ".gguf" or not p.is_file():
            return 0
        return p.stat().st_size
    except OSError:
        return 0


def _load(
    path: str | os.PathLike[str],
    pattern: str | None,
    special_tokens: Collection[str] | Mapping[str, int] | None,
    name: str | None,
    lowercase: bool | None,
    format: str | None = None,
) -> Tokenizer:
    from .encodings import encoding_for_hash
    from .formats.gpt2 import tokenizer_args
    from .formats.native import load_native_dict
    from .formats.tiktoken import parse_ranks
    from .models.bpe import BPE

    p = Path(path)
    if format is not None and not p.exists():
        raise TokenizerFileNotFoundError(f"{p}: no such file")
    fmt = format or detect_format(p)
    if fmt in ("hf", "sentencepiece", "bert_vocab", "gguf"):
        if pattern is not None or special_tokens is not None:
            raise FileFormatError(f"pattern= and special_tokens= apply to BPE rank files, not to {fmt} files", path=p)
        return _load_pipeline(p, fmt, name, lowercase)
    if lowercase is not None:
        raise FileFormatError("lowercase= applies to BERT vocab.txt files", path=p)
    if fmt == "tokenforge":
        data = load_native_dict(p)
        if pattern is not None or special_tokens is not None:
            raise FileFormatError(
                "a tokenforge file carries its own pattern and special tokens; do not pass pattern= or special_tokens=",
                path=p,
            )
        try:
            tok = Tokenizer.from_dict(data, name=name or data.get("name"))
        except FileFormatError as exc:
            raise FileFormatError(str(exc), path=p) from None
        except TokenforgeError as exc:  # a value a stage refuses (a setting, a special token twice)
            raise FileFormatError(f"{type(exc).__name__}: {exc}", path=p) from None
        from .formats.native import check_fingerprint

        check_fingerprint(data, tok.fingerprint_parts(), p)
        return tok
    if fmt == "gpt2":
        vocab_path, merges_path = _gpt2_paths(p)
        check_interrupted_save(vocab_path.parent)
        for q in (vocab_path, merges_path):
            if not q.is_file():
                raise TokenizerFileNotFoundError(f"{q}: no such file (GPT-2 format needs vocab.json and merges.txt)")
        args = tokenizer_args(vocab_path, merges_path, special_tokens, pattern or "gpt2")
        return Tokenizer(**args, name=name or vocab_path.parent.name)
    # tiktoken rank file
    if p.is_dir():
        p = p / "tokenizer.model"
    raw = read_bytes(p)
    known = encoding_for_hash(hashlib.sha256(raw).hexdigest())
    ranks = parse_ranks(raw, p)
    if known is not None:
        pattern = pattern or known.pattern
        if special_tokens is None:
            special_tokens = known.special_tokens
        name = name or known.name
    if pattern is None:
        raise FileFormatError(
            "a tiktoken rank file has no split pattern; pass pattern= (e.g. 'cl100k', 'o200k', 'qwen', 'llama3', or a regex)",
            path=p,
        )
    specials = _specials_for_ranks(special_tokens, ranks)
    return Tokenizer(BPE._from_parsed_ranks(ranks), pre_tokenizer=pattern, special_tokens=specials, name=name or p.stem)


def _load_pipeline(p: Path, fmt: str, name: str | None, lowercase: bool | None) -> Tokenizer:
    import json

    from . import presets

    if fmt == "hf":
        f = p / "tokenizer.json" if p.is_dir() else p
        from ._io import parse_json

        data = parse_json(read_text(f), f, standard=True)  # what HF's reader accepts, no more
        if not isinstance(data, dict):
            raise FileFormatError(f"a tokenizer.json holds a JSON object, not {type(data).__name__}", path=f)
        from .formats.hf_json import check_hf_document

        check_hf_document(data, f)
        if p.is_dir():
            check_interrupted_save(p)
        if p.is_dir():  # a transformers folder: its settings (special-token names, chat template) too
            from .formats.hf_json import read_transformers_config

            config = read_transformers_config(p)
            if config:
                data = {**data, "config": {**(data.get("config") or {}), **config}}
        try:
            return Tokenizer.from_dict(data, name=name or f.parent.name)
        except FileFormatError as exc:
            raise FileFormatError(str(exc), path=f) from None
        except TokenforgeError as exc:  # a value a stage refuses (a setting, a special token twice)
            raise FileFormatError(f"{type(exc).__name__}: {exc}", path=f) from None
    if fmt == "sentencepiece":
        f = p / "tokenizer.model" if p.is_dir() else p
        return presets.sentencepiece(f, name=name)
    if fmt == "gguf":
        from .gguf import load_gguf

        if lowercase is not None:
            raise FileFormatError("lowercase= applies to BERT vocab.txt files; a GGUF file states its own", path=p)
        return load_gguf(p, name=name)
    f = p / "vocab.txt" if p.is_dir() else p
    return presets.bert_wordpiece(f, lowercase=True if lowercase is None else lowercase, name=name)


def _specials_for_ranks(
    special_tokens: Collection[str] | Mapping[str, int] | None, ranks: Mapping[bytes, int]
) -> dict[str, int]:
    from .errors import SpecialTokenError

    if special_tokens is None:
        return {}
    if isinstance(special_tokens, Mapping):
        return dict(special_tokens)
    # A list of strings: give them the ids after the largest rank, in order.
    out: dict[str, int] = {}
    nxt = max(ranks.values()) + 1
    for t in special_tokens:
        if t in out:
            raise SpecialTokenError(f"special token {t!r} is listed twice")
        out[t] = nxt
        nxt += 1
    return out


_PATH_SUFFIXES = (".json", ".model", ".tiktoken", ".txt", ".gguf", ".bpe", ".vocab", ".bin", ".gz")


def _short_forms() -> dict[str, str]:
    """``{"cl100k": "cl100k_base", ...}``: each ``*_base`` encoding without its suffix."""
    from .encodings import ENCODINGS

    return {n[: -len("_base")]: n for n in ENCODINGS if n.endswith("_base")}


def _looks_like_path(spec: str) -> bool:
    seps = tuple(s for s in (os.sep, os.altsep, "/") if s)
    return (any(s in spec for s in seps) or spec.startswith((".", "~"))
            or spec.lower().endswith(_PATH_SUFFIXES))


def known_tokenizer_names() -> str:
    """The names ``-t`` accepts, in short, for error messages: the encodings and their short
    forms (``tokenforge list`` shows the model names too)."""
    from .encodings import ENCODINGS

    return (f"encodings {', '.join(ENCODINGS)} (short forms {', '.join(_short_forms())}), or an OpenAI "
            "model name such as gpt-4o; `tokenforge list` shows every name")


def split_format_prefix(spec: str) -> tuple[str | None, str]:
    """``"bert_vocab:words.txt"`` gives ``("bert_vocab", "words.txt")``: a tokenizer spec
    that names the format to read its file as (one of :data:`LOAD_FORMATS`); any other
    spec, or an existing path that happens to hold a colon, gives ``(None, spec)``."""
    head, colon, rest = spec.partition(":")
    if colon and head in LOAD_FORMATS and rest and not os.path.exists(spec):
        return head, rest
    return None, spec


def resolve_tokenizer(spec: str) -> str:
    """What a tokenizer name or path given by a user names: an encoding name or a path
    (what :func:`open_tokenizer` and every ``-t`` option of the command line take).

    In order: an encoding name (``cl100k_base``); an existing file or folder; an encoding
    name in another case or with ``-`` for ``_``; a short form (``cl100k``); an OpenAI model
    name (``gpt-4o`` gives ``o200k_base``, tiktoken's ``encoding_for_model`` table);
    something that looks like a path (kept, so that loading it says what is missing);
    ``FORMAT:PATH`` (``bert_vocab:words.txt``), a path to read as that format.
    Anything else raises :class:`~tokenforge.UnknownEncodingError` listing the known names.
    """
    from .encodings import ENCODINGS, MODEL_TO_ENCODING, encoding_name_for_model
    from .errors import UnknownEncodingError

    if spec in ENCODINGS:
        return spec
    if spec and os.path.exists(spec):
        return spec
    if split_format_prefix(spec)[0] is not None:
        return spec
    key = spec.strip().lower()
    short = _short_forms()
    for k in (key, key.replace("-", "_")):
        if k in ENCODINGS:
            return k
        if k in short:
            return short[k]
    try:
        name = encoding_name_for_model(key)
    except UnknownEncodingError:
        pass
    else:
        if name in ENCODINGS:
            return name
    if spec and _looks_like_path(spec):
        return spec
    import difflib

    names = [*ENCODINGS, *short, *MODEL_TO_ENCODING]
    close = difflib.get_close_matches(key, names, n=1)
    hint = f" (did you mean {close[0]}?)" if close else ""
    raise UnknownEncodingError(
        f"unknown tokenizer {spec!r}{hint}: no such file or folder, and not a known name; "
        f"a tokenizer is a file, a folder, one of the {known_tokenizer_names()}"
    )


def open_tokenizer(spec: "str | os.PathLike[str] | Tokenizer") -> Tokenizer:
    """A tokenizer from a named encoding (``cl100k_base``, ``gpt2``, ...), a short form
    (``cl100k``) or an OpenAI model name (``gpt-4o``; see :func:`resolve_tokenizer`), any file
    or folder :func:`load` reads (``FORMAT:PATH`` reads it as that format), or a :class:`~tokenforge.Tokenizer` (returned as is)."""
    from .encodings import ENCODINGS, get_encoding

    if isinstance(spec, Tokenizer):
        return spec
    if isinstance(spec, str):
        spec = resolve_tokenizer(spec)
        if spec in ENCODINGS:
            return get_encoding(spec)
        fmt, path = split_format_prefix(spec)
        if fmt is not None:
            return load(path, format=fmt)
    if not isinstance(spec, (str, os.PathLike)):
        raise ArgumentTypeError(f"a tokenizer is a name, a path or a Tokenizer, not {type(spec).__name__}")
    return load(spec)


def save(tokenizer: Tokenizer, path: str | os.PathLike[str], format: str | None = None, *,
         overwrite: bool = False) -> None:
    """Write ``tokenizer`` to ``path`` (the same as ``tokenizer.save(path, format)``): the
    name picks the format unless ``format`` is given, every write is atomic, a format
    that would read back as a different tokenizer is refused with nothing written, and an
    existing file is replaced only with ``overwrite=True``."""
    tokenizer.save(path, format, overwrite=overwrite)


def convert(
    source: "str | os.PathLike[str] | Tokenizer",
    dest: str | os.PathLike[str],
    *,
    to: str | None = None,
    allow_lossy: bool = False,
    sample: str | None = None,
    overwrite: bool = False,
) -> dict[str, Any]:
    """Write a tokenizer in another format and prove the ids survive.

    ``source`` is anything :func:`open_tokenizer` takes; ``to`` is one of
    ``tokenforge``, ``hf``, ``tiktoken``, ``gpt2``, ``sentencepiece``, ``bert_vocab``,
    ``transformers`` (default: what ``dest``'s name asks for, see
    :func:`tokenforge.formats.format_for_path`: a name ending in ``tokenizer.json`` is HF's).
    The file is written to a temporary folder beside ``dest`` and loaded back, and both
    tokenizers encode ``sample`` (default: the held-out text of the embedded corpus, a
    dozen languages and code); only if the ids agree is it renamed to ``dest``. If any
    differ, :class:`FileFormatError` says where and ``dest`` is left as it was. An
    existing ``dest`` is replaced only with ``overwrite=True``
    (:class:`~tokenforge.errors.OutputExistsError` otherwise, before any work).

    A conversion that cannot be exact raises, unless ``allow_lossy=True``: then a
    SentencePiece ``.model`` becomes the ``tokenizer.json`` that ``transformers``'
    converters would write (HF's ``Precompiled`` normalizer, ``Metaspace``, merges by
    score), and the returned report says on how many documents and lines the ids
    differ. (A BPE ``.model`` without a charsmap, as Llama 2's and Mistral's, has an
    exact form and needs no ``allow_lossy``.)

    The ids are compared on each whole document (``sample``, or each language of the
    default text plus short documents with line ends, runs of spaces, tabs, emoji
    and CJK) and on each of its lines: a form can agree on every line and still
    drop a line end (``"end.\\n"``).

    Returns ``{"source", "dest", "format", "exact", "documents", "documents_differing",
    "lines", "lines_differing", "tokens", "tokens_differing", "example", "notes"}``.
    """
    import shutil
    import tempfile

    from .formats import FORMATS, check_overwrite, format_for_path, output_files
    from .trainers import FOLDER_FORMATS

    tok = open_tokenizer(source)
    fmt = to or format_for_path(dest)
    if fmt not in FORMATS:
        raise FileFormatError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}", path=dest)
    check_overwrite(dest, fmt, overwrite)
    final = output_files(dest, fmt)
    folder = final[0].parent
    created = None  # a folder format creates its folder, with its parents, as save does
    if fmt in FOLDER_FORMATS and not folder.exists():
        created = next(d for d in (*reversed(folder.parents), folder) if not d.exists())
        try:
            folder.mkdir(parents=True)
        except OSError as exc:
            raise SaveError(f"{dest}: cannot create the folder ({exc.strerror or exc})") from None
    elif not folder.is_dir():
        raise SaveError(f"{dest}: the folder {folder} does not exist")
    try:
        from ._io import remove_stale_temporaries

        remove_stale_temporaries(folder, [final[0].name])  # a killed convert's folder
        try:
            tmp = Path(tempfile.mkdtemp(prefix=f".{final[0].name}.{os.getpid()}.", suffix=".tmp", dir=folder))
        except OSError as exc:
            raise SaveError(f"{dest}: cannot write in {folder} ({exc.strerror or exc})") from None
        try:
            target = tmp if fmt in FOLDER_FORMATS else tmp / final[0].name
            report = _write_and_check(tok, source, dest, fmt, target, allow_lossy, sample)
            written = [tmp / f.name for f in final]
            if len(final) == 1:
                os.replace(written[0], final[0])
            else:  # vocab.json + merges.txt: replaced together, never half old and half new
                from ._io import atomic_write_files

                atomic_write_files({f: w.read_text(encoding="utf-8") for f, w in zip(final, written)})
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    except BaseException:
        if created is not None:  # remove the folders this call created (they are empty)
            for d in (folder, *folder.parents):
                try:
                    d.rmdir()
                except OSError:
                    break
                if d == created:
                    break
        raise
    return report


def _write_and_check(tok: Tokenizer, source: Any, dest: str | os.PathLike[str], fmt: str, target: Path,
                     allow_lossy: bool, sample: str | None) -> dict[str, Any]:
    """:func:`convert`'s work: write ``tok`` as ``fmt`` to the temporary ``target``, load it
    back and compare the ids on whole documents and on their lines. Errors name ``dest``,
    not the temporary path."""

    def named(error: FileFormatError) -> str:
        text = str(error).removeprefix(f"{error.path}: ") if error.path is not None else str(error)
        return text.replace(str(target), os.fspath(dest))

    notes: list[str] = []
    try:
        if fmt in ("hf", "transformers"):
            from .formats.hf_json import save_hf, save_transformers

            written = (save_hf if fmt == "hf" else save_transformers)(tok, target, allow_lossy=allow_lossy)
            if not written["exact"]:
                first = written["differences"][0]["text"] if written["differences"] else None
                notes.append("lossy: " + (written["reason"] or f"ids differ, first on {first!r}"))
        else:
            tok.save(target, format=fmt, overwrite=True)
    except FileFormatError as error:
        exc = named(error)
        hint = (" (pass allow_lossy=True, or --allow-lossy, to write the closest HF file)"
                if fmt in ("hf", "transformers") and "allow_lossy" not in exc else "")
        raise FileFormatError(f"cannot convert exactly: {exc}{hint}", path=dest) from None
    lossy = bool(notes)
    try:
        if fmt == "tiktoken":
            back = load(target, pattern=tok.pattern, special_tokens=dict(tok.special_tokens))
            if tok.special_tokens:
                notes.append("a rank file holds no special tokens: pass special_tokens= when loading it")
        elif fmt in ("hf", "transformers"):  # read as tokenizer.json whatever its name
            back = _load_pipeline(target / "tokenizer.json" if target.is_dir() else target, "hf", None, None)
        else:
            back = load(target, format=fmt)
    except FileFormatError as error:
        raise FileFormatError(f"the written {fmt} file does not load back: {named(error)}", path=dest) from None
    if sample is not None:
        documents = [sample]
    else:
        from .sentencepiece.hf import HF_CHECK_DOCUMENTS

        documents = [*_sample_documents(), *HF_CHECK_DOCUMENTS]
    report: dict[str, Any] = {"source": str(getattr(tok, "name", None) or source), "dest": os.fspath(dest), "format": fmt,
              "exact": True, "documents": len(documents), "documents_differing": 0, "lines": 0, "lines_differing": 0,
              "tokens": 0, "tokens_differing": 0, "example": None, "notes": notes}

    def compare(text: str, kind: str) -> None:
        a = tok.encode(text, disallowed_special=(), add_special_tokens=False)
        b = back.encode(text, disallowed_special=(), add_special_tokens=False)
        report["tokens"] += len(a)
        if a != b:
            report[f"{kind}_differing"] += 1
            report["tokens_differing"] += sum(1 for x, y in zip(a, b) if x != y) + abs(len(a) - len(b))
            if report["example"] is None:  # a line if one differs (easier to read), else a document
                k = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
                k = max(0, k - 4)
                report["example"] = {"text": text[:200], "whole_document": kind == "documents", "from_token": k,
                                     "ids": a[k:k + 40], "written_ids": b[k:k + 40]}

    for doc in documents:
        for line in doc.splitlines():
            report["lines"] += 1
            compare(line, "lines")
    for doc in documents:
        compare(doc, "documents")
    if report["lines_differing"] or report["documents_differing"]:
        report["exact"] = False
        if not lossy:
            raise FileFormatError(
                f"the {fmt} file gives other ids on {report['documents_differing']} of {len(documents)} "
                f"documents and {report['lines_differing']} of {report['lines']} lines "
                f"(first: {report['example']['text']!r}); nothing was written", path=dest,
            )
    elif lossy:
        report["exact"] = False  # lossy by construction, though no sample input shows it
    return report


def _sample_documents() -> list[str]:
    from .corpus import embedded_corpus

    return [lang.heldout_text() for lang in embedded_corpus()]


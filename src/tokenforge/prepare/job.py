"""``prepare`` and ``count``: the whole job, from inputs to the index.

The engine (local threads/processes, or Ray) yields encoded batches in input
order; this module adds the document separators, routes each document to
the train or validation split, appends the tokens to the shards, keeps the
per-input counts, checkpoints after every shard, and writes the index.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Iterator

from .._io import sha256_file
from .._lazy import np
from ..errors import InvalidArgumentError, PrepareError, SpecialTokenError, TokenforgeError, UnknownTokenError
from . import shards as _shards
from . import sources as _sources
from .formats import EXPORTS, FORMATS, SplitStream, parse_formats, write_format
from .shards import INDEX, JOURNAL, PARTIAL, SplitWriter, write_json_atomic
from .sources import FIRST, INPUT_ERRORS, LAST, ReadOptions, Source, hash_source, plan_units, resolve_inputs

if TYPE_CHECKING:
    from .encoder import Encoded

#: Names of the usual begin/end-of-document special tokens, most specific first.
BOS_NAMES = ("<|begin_of_text|>", "<s>", "<bos>", "<|startoftext|>", "[CLS]")
EOT_NAMES = ("<|endoftext|>", "<|end_of_text|>", "</s>", "<eos>", "<|eos|>", "[SEP]")
SPLITS = ("train", "val")


# ---------------------------------------------------------------------------
# Separators
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Separators:
    """Ids put before (``bos``) and after (``eot``) every document, with their tokens."""

    bos: tuple[int, ...] = ()
    eot: tuple[int, ...] = ()
    bos_tokens: tuple[str, ...] = ()
    eot_tokens: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"bos": {"tokens": list(self.bos_tokens), "ids": list(self.bos)},
                "eot": {"tokens": list(self.eot_tokens), "ids": list(self.eot)}}


def _template_sides(tok: Any) -> tuple[list[tuple[int, str]], list[tuple[int, str]]] | None:
    """What the post-processor puts around a single sequence, or None if nothing."""
    post = tok.post_processor
    if post is None:
        return None
    before, after = post.single_sides()
    return (before, after) if before or after else None


def resolve_separators(tok: Any, bos: str | None = "auto", eot: str | None = "auto") -> Separators:
    """The separators of ``tok`` by its own convention, or as asked.

    ``auto``: the tokens its post-processor puts around a sequence ([CLS] … [SEP]
    for BERT, ``<s>`` … ``</s>`` for RoBERTa); where the template puts nothing
    after the text (Llama's ``<s> $A``), the end-of-text special token if there is
    one. Without a template: ``<|endoftext|>`` after each document for GPT-style
    vocabularies, ``<s>`` … ``</s>`` for SentencePiece models (their usual
    begin/end-of-text special tokens).
    ``none`` (or None): nothing. Any other value is a token of the vocabulary.
    """
    sides = _template_sides(tok)
    specials = tok.special_tokens

    def pick(value: str | None, which: str) -> tuple[tuple[int, ...], tuple[str, ...]]:
        if value is None or value == "none":
            return (), ()
        if value == "auto":
            pairs = (sides[0] if which == "bos" else sides[1]) if sides is not None else []
            if pairs:
                return tuple(i for i, _ in pairs), tuple(t for _, t in pairs)
            if sides is not None and which == "bos":
                return (), ()  # the template puts nothing first: no BOS
            names = BOS_NAMES if which == "bos" else EOT_NAMES
            if which == "bos" and "<|endoftext|>" in specials:
                return (), ()  # GPT-style: one end-of-text token between documents
            for name in names:
                if name in specials:
                    return (specials[name],), (name,)
            return (), ()
        if not isinstance(value, str) or not value:
            raise InvalidArgumentError(f"{which} must be 'auto', 'none' or a token, not {value!r}")
        if value in specials:
            return (specials[value],), (value,)
        try:
            return (tok.token_to_id(value),), (value,)
        except (UnknownTokenError, KeyError):
            raise SpecialTokenError(
                f"cannot use {which}={value!r}: it is not a token of this tokenizer (special tokens: "
                f"{', '.join(sorted(specials)) or 'none'}); pass {which}='none' for no separator"
            ) from None

    b_ids, b_toks = pick(bos, "bos")
    e_ids, e_toks = pick(eot, "eot")
    return Separators(b_ids, e_ids, b_toks, e_toks)


# ---------------------------------------------------------------------------
# Assembly
# ---------------------------------------------------------------------------


def assemble(enc: Encoded, seps: Separators) -> tuple[np.ndarray, np.ndarray]:
    """The token stream of a batch with separators, and each item's length in it."""
    L = enc.lengths
    nb, ne = len(seps.bos), len(seps.eot)
    if not nb and not ne:
        return enc.ids, L
    first = (enc.flags & FIRST).astype(bool)
    last = (enc.flags & LAST).astype(bool)
    ends = np.cumsum(L)
    starts = ends - L
    # per item: its bos ids at its start, its eot ids at its end, in stream order
    # (np.insert keeps the order of equal positions: one item's eot, then the next one's bos)
    pos = np.stack([np.where(first, starts, -1), np.where(last, ends, -1)], axis=1)
    pos = np.repeat(pos, [nb, ne], axis=1) if nb != ne or nb != 1 else pos
    vals = np.broadcast_to(np.asarray(list(seps.bos) + list(seps.eot), dtype=np.uint32), pos.shape)
    keep = pos >= 0
    out = np.insert(enc.ids, pos[keep], vals[keep])
    return out, first * nb + L + last * ne


# ---------------------------------------------------------------------------
# Options
# ---------------------------------------------------------------------------

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?i?b?)?\s*$", re.IGNORECASE)
_UNITS = {"": 1, "b": 1, "k": 10**3, "kb": 10**3, "kib": 2**10, "m": 10**6, "mb": 10**6, "mib": 2**20,
          "g": 10**9, "gb": 10**9, "gib": 2**30, "t": 10**12, "tb": 10**12, "tib": 2**40}


def parse_size(value: int | str) -> int:
    """Bytes of ``1GB``, ``512MiB``, ``100000`` ..."""
    if isinstance(value, int) and not isinstance(value, bool):
        n = value
    else:
        m = _SIZE.match(str(value))
        unit = (m.group(2) or "").lower() if m else None
        if not m or unit not in _UNITS:
            raise InvalidArgumentError(f"shard size {value!r} is not a size such as 1GB, 512MiB or 100000")
        n = int(float(m.group(1)) * _UNITS[unit])
    if n < 1:
        raise InvalidArgumentError(f"shard size must be at least 1 byte, got {value!r}")
    return n


def unescape(delim: str) -> str:
    """``\\n``, ``\\t`` and ``\\\\`` in a delimiter given on the command line."""
    return delim.encode("latin-1", "backslashreplace").decode("unicode_escape") if "\\" in delim else delim


def _read_options(text_field: str, split_on: str | None, val_fraction: float, input_errors: str) -> ReadOptions:
    if not isinstance(text_field, str) or not text_field:
        raise InvalidArgumentError(f"text_field must be a non-empty str, got {text_field!r}")
    if split_on is not None and (not isinstance(split_on, str) or not split_on):
        raise InvalidArgumentError("split_on must be a non-empty delimiter (or None: one document per file)")
    if input_errors not in INPUT_ERRORS:
        raise InvalidArgumentError(f"input_errors must be one of {', '.join(INPUT_ERRORS)}, not {input_errors!r}")
    return ReadOptions(text_field=text_field, split_on=split_on, val_fraction=val_fraction, input_errors=input_errors,
                       chunk_chars=_sources.CHUNK_CHARS, segment_chars=_sources.SEGMENT_CHARS)


def _options(settings: dict | None) -> dict:
    """The options of an index or journal; those written before ``input_errors`` existed read strictly."""
    return {"input_errors": "strict", **((settings or {}).get("options") or {})}


def _workers(workers: int | None) -> int:
    from .._plans import default_threads

    return default_threads(workers, "workers")


def tokenizer_sha256(tok: Any) -> str:
    """sha256 of the tokenizer's canonical serialization (what defines its ids)."""
    data = json.dumps(tok.to_dict(), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(data.encode("utf-8", "surrogatepass")).hexdigest()


def _tokenizer_name(spec: Any, tok: Any) -> str:
    if isinstance(spec, (str, os.PathLike)):
        return os.fspath(spec)
    return tok.name or type(tok.model).__name__


# ---------------------------------------------------------------------------
# Engines
# ---------------------------------------------------------------------------


def _engine_batches(engine: str, tok: Any, workers: int | None, sources: list[Source], opts: ReadOptions,
                    skip_before: int, want_bytes: bool, ray_address: str | None) -> Iterator[Encoded]:
    """``workers`` as the caller gave it: None is every core here, or every CPU of the Ray cluster."""
    if engine == "local":
        units = plan_units(sources, opts)
        from .encoder import LocalEngine

        return LocalEngine(tok, _workers(workers), want_bytes=want_bytes).run(sources, units, opts, skip_before)
    if engine == "ray":
        from .ray_engine import ray_batches

        return ray_batches(tok, None if workers is None else _workers(workers), sources, opts, skip_before,
                           want_bytes, ray_address)
    raise InvalidArgumentError(f"engine must be 'local' or 'ray', not {engine!r}")


class _Progress:
    """Input bytes done, with tokens/s (a :mod:`tokenforge.progress` bar, also in notebooks);
    a no-op when off."""

    def __init__(self, show: bool | None, total: int | None, desc: str) -> None:
        from ..progress import Progress

        self.tokens = 0
        self.t0 = time.perf_counter()
        self.bar = Progress(total, desc, "B", show=show, unit_scale=True, unit_divisor=1000, leave=True)

    def update(self, nbytes: int, tokens: int) -> None:
        self.tokens += tokens
        if self.bar:
            dt = max(time.perf_counter() - self.t0, 1e-9)
            self.bar.postfix(f"{self.tokens / dt / 1e6:.2f}M tok/s, {self.tokens:,} tokens")
        self.bar.update(nbytes)

    def close(self) -> None:
        self.bar.close()


# ---------------------------------------------------------------------------
# Counting per input
# ---------------------------------------------------------------------------


@dataclass
class _Stats:
    """Per-input documents, tokens, empty documents skipped and UTF-8 bytes of text."""

    n: int
    documents: np.ndarray = field(init=False)
    tokens: np.ndarray = field(init=False)
    empty: np.ndarray = field(init=False)
    text_bytes: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        for name in ("documents", "tokens", "empty", "text_bytes"):
            setattr(self, name, np.zeros(self.n, dtype=np.int64))

    def add(self, enc: Encoded, out_len: np.ndarray) -> None:
        first = (enc.flags & FIRST).astype(bool) & (out_len > 0)
        np.add.at(self.documents, enc.source[first], 1)
        np.add.at(self.tokens, enc.source, out_len)
        if enc.text_bytes is not None:
            np.add.at(self.text_bytes, enc.source, enc.text_bytes)
        for src, k in enc.empty.items():
            self.empty[src] += k

    def to_json(self) -> dict[str, list[int]]:
        return {"documents": self.documents.tolist(), "tokens": self.tokens.tolist(), "empty": self.empty.tolist()}

    @classmethod
    def from_json(cls, n: int, d: dict[str, list[int]]) -> "_Stats":
        s = cls(n)
        for name in ("documents", "tokens", "empty"):
            setattr(s, name, np.asarray(d[name], dtype=np.int64))
        return s


# ---------------------------------------------------------------------------
# prepare
# ---------------------------------------------------------------------------


def prepare(
    inputs: Any,
    tokenizer: Any,
    out_dir: str | os.PathLike[str],
    *,
    workers: int | None = None,
    engine: str = "local",
    ray_address: str | None = None,
    text_field: str = "text",
    split_on: str | None = None,
    input_errors: str = "strict",
    eot: str | None = "auto",
    bos: str | None = "auto",
    val_fraction: float = 0.0,
    shard_size: int | str = "1GB",
    resume: bool = False,
    overwrite: bool = False,
    show_progress: bool | None = None,
    formats: str | Iterable[str] | None = None,
) -> dict[str, Any]:
    """Turn a corpus into the token arrays a language model trains on; return the index.

    ``inputs``: paths (text, ``.jsonl``/``.jsonl.gz``/``.jsonl.zst``, Parquet),
    folders, globs or ``"-"``; a ``datasets.Dataset``; or any iterable of str.
    ``tokenizer``: a named encoding, any file :func:`tokenforge.load` reads, or a
    :class:`~tokenforge.Tokenizer`. Special-token strings in the text are read as
    text; ``bos``/``eot`` separators are put around each document by the
    tokenizer's convention (see :func:`resolve_separators`). Output: shards of
    raw little-endian ``uint16`` (``uint32`` for larger vocabularies) of
    ``shard_size`` bytes, ``{split}.docs.npy`` and ``index.json`` in ``out_dir``;
    the same bytes whatever ``workers`` and ``engine``. See :func:`open_tokens`.
    ``input_errors``: bytes that are not UTF-8 stop the job (``"strict"``, the error
    names the file, line and byte) or are read as ``bytes.decode`` reads them with
    ``"replace"`` (U+FFFD), ``"ignore"`` or ``"backslashreplace"``.
    ``formats``: any of ``tokenforge`` (the shards above, the default), ``megatron``,
    ``llmc``, ``nanogpt`` and ``datatrove``, as a list or a comma list; each other format
    is written into the folder of its name in ``out_dir`` (see :mod:`tokenforge.prepare.formats`).
    Resuming a complete run that kept the tokenforge shards adds the formats it lacks.

    >>> import tokenforge, tempfile
    >>> out = tempfile.mkdtemp()
    >>> index = tokenforge.prepare(iter(["hello world", "bye"]), "gpt2", out, show_progress=False)
    >>> tokenforge.open_tokens(out).ids.tolist()
    [31373, 995, 50256, 16390, 50256]
    """
    from .._version import __version__
    from ..io import open_tokenizer

    wanted = parse_formats(formats)
    tok = open_tokenizer(tokenizer)
    _workers(workers)  # a bad value is refused before anything is read
    if not isinstance(val_fraction, (int, float)) or not 0 <= val_fraction < 1:
        raise InvalidArgumentError(f"val_fraction must be in [0, 1), got {val_fraction!r}")
    seps = resolve_separators(tok, bos, eot)
    sources = resolve_inputs(inputs)
    opts = _read_options(text_field, split_on, float(val_fraction), input_errors)
    dtype = np.dtype("<u2") if tok.max_token_value <= 0xFFFF else np.dtype("<u4")
    shard_tokens = max(parse_size(shard_size) // dtype.itemsize, 1)
    out = Path(out_dir)
    settings = {
        "tokenizer": {"name": _tokenizer_name(tokenizer, tok), "sha256": tokenizer_sha256(tok),
                      "fingerprint": tok.fingerprint(),
                      "n_vocab": tok.n_vocab, "max_token_value": tok.max_token_value},
        "dtype": dtype.name,
        "shard_tokens": shard_tokens,
        "separators": seps.to_dict(),
        "options": {"text_field": text_field, "split_on": split_on, "input_errors": input_errors,
                    "val_fraction": float(val_fraction), "bos": bos, "eot": eot,
                    "shard_size": shard_tokens * dtype.itemsize},
        "inputs": [{"name": s.name, "size": s.size, "mtime_ns": s.mtime_ns} for s in sources],
    }
    journal_settings = {**settings, "engine": engine}
    splits = ("train", "val") if val_fraction > 0 else ("train",)
    created = not out.exists()
    _make_folder(out)
    try:
        with _shards.locked(out):  # one run at a time in a folder
            state = _start(out, journal_settings, resume, overwrite, sources)
            if isinstance(state, dict) and state.get("complete"):
                return _add_formats(out, state["index"], wanted)

            hashes: dict[int, str | None] = {}
            hasher = threading.Thread(target=lambda: hashes.update({k: hash_source(s) for k, s in enumerate(sources)}),
                                      name="tokenforge-hash", daemon=True)
            hasher.start()

            writers = {s: SplitWriter(out, s, dtype, shard_tokens, (state or {}).get("splits", {}).get(s)) for s in splits}
            stats = _Stats(len(sources))
            skip_before = 0
            if state:
                skip_before, snap = _resume_point(state, splits)
                if snap is not None:
                    stats = _Stats.from_json(len(sources), snap)
            snapshots: dict[str, dict] = dict((state or {}).get("snapshots", {}))
            batch_start = [skip_before]

            def checkpoint(writer: SplitWriter) -> None:
                # `stats` does not count the batch being written yet: it is the snapshot at its start
                snapshots[writer.split] = {"item": batch_start[0], "stats": stats.to_json()}
                write_json_atomic(out / PARTIAL / JOURNAL, {
                    "settings": journal_settings,
                    "splits": {s: w.state() for s, w in writers.items()},
                    "snapshots": snapshots,
                })

            total_bytes = sum(s.size for s in sources) if all(s.size is not None for s in sources) else None
            progress = _Progress(show_progress, total_bytes, f"prepare {settings['tokenizer']['name']}")
            try:
                for enc in _engine_batches(engine, tok, workers, sources, opts, skip_before, False, ray_address):
                    batch_start[0] = enc.first_item
                    tokens, out_len = assemble(enc, seps)
                    items = enc.first_item + np.arange(enc.n_items, dtype=np.int64)
                    first = (enc.flags & FIRST).astype(bool)
                    if len(splits) == 1:
                        writers["train"].write(tokens, items, out_len, first, checkpoint)
                    else:
                        for s, want in (("train", False), ("val", True)):
                            sel = enc.val == want
                            if sel.all():
                                writers[s].write(tokens, items, out_len, first, checkpoint)
                            elif sel.any():
                                writers[s].write(tokens[np.repeat(sel, out_len)], items[sel], out_len[sel], first[sel], checkpoint)
                    stats.add(enc, out_len)
                    progress.update(enc.nbytes, int(out_len.sum()))
                for w in writers.values():
                    w.finish()
                if not any(w.documents for w in writers.values()):
                    raise PrepareError(_nothing_to_prepare(sources, stats, out))
            except BaseException as exc:
                for w in writers.values():
                    w.abort()
                _shards.clean_temporaries(out)  # e.g. a checkpoint interrupted while it was written
                progress.close()
                kept = sum(len(w.shards) for w in writers.values())
                if not kept:  # nothing to resume from: leave no trace
                    _shards.remove_partial(out)
                failure = _as_prepare_error(exc, out)
                if kept and isinstance(failure, TokenforgeError):
                    _say_what_is_kept(failure, out, kept)
                if failure is exc:
                    raise
                raise failure from exc
            progress.close()
            hasher.join()

            index: dict[str, Any] = {
                "format": _shards.FORMAT,
                "format_version": _shards.FORMAT_VERSION,
                "tokenforge_version": __version__,
                "dtype": dtype.name,
                "byte_order": "little",
                "tokenizer": settings["tokenizer"],
                "separators": settings["separators"],
                "options": {k: v for k, v in settings["options"].items()},
                "inputs": [
                    {**src.describe(), "sha256": hashes.get(k), "documents": int(stats.documents[k]),
                     "tokens": int(stats.tokens[k]), "empty_documents_skipped": int(stats.empty[k])}
                    for k, src in enumerate(sources)
                ],
                "splits": {},
            }
            for s, w in writers.items():
                offsets = w.write_doc_offsets()  # a PrepareError naming the file if it cannot be written
                index["splits"][s] = {"tokens": w.tokens, "documents": w.documents, "doc_offsets": offsets,
                                      "doc_offsets_sha256": sha256_file(out / offsets), "shards": w.shards}
            index["formats"] = list(wanted)
            index["exports"] = _export(out, index, [f for f in wanted if f in EXPORTS])
            write_json_atomic(out / INDEX, index)
            if "tokenforge" not in wanted:  # the shards served the other formats only
                _drop_tokenforge_shards(out, index)
            _shards.remove_partial(out)
            return index
    except BaseException as exc:
        if created:  # nothing was kept: the folder this call made goes too
            with contextlib.suppress(OSError):
                out.rmdir()
        failure = _as_prepare_error(exc, out)
        if failure is exc:
            raise
        raise failure from exc


def _export(out: Path, index: dict[str, Any], formats: list[str]) -> dict[str, list[str]]:
    """Write ``formats`` from the tokenforge shards and offsets ``index`` lists; the files of each."""
    if not formats:
        return {}
    dtype = np.dtype(index["dtype"]).newbyteorder("<")
    streams = [
        SplitStream(name, [_shards.member_path(out, sh["file"], out / INDEX) for sh in sp["shards"]], dtype,
                    np.load(_shards.member_path(out, sp["doc_offsets"], out / INDEX), mmap_mode="r"))
        for name, sp in index["splits"].items()
    ]
    seps, tok = index["separators"], index["tokenizer"]
    ctx = {"shard_tokens": index["options"]["shard_size"] // dtype.itemsize,
           "bos": list(seps["bos"]["ids"]), "eot": list(seps["eot"]["ids"]),
           "n_vocab": tok["n_vocab"], "max_token_value": tok["max_token_value"], "tokenizer": tok["name"]}
    return {fmt: write_format(out, fmt, streams, ctx) for fmt in formats}


def _drop_tokenforge_shards(out: Path, index: dict[str, Any]) -> None:
    """Remove the tokenforge shards and offsets (the other formats were written from them)."""
    for sp in index["splits"].values():
        for name in [sh["file"] for sh in sp["shards"]] + [sp["doc_offsets"]]:
            with contextlib.suppress(OSError):
                os.unlink(out / name)


def _add_formats(out: Path, index: dict[str, Any], wanted: tuple[str, ...]) -> dict[str, Any]:
    """A complete run resumed: write the formats it lacks from its tokenforge shards."""
    have = index.get("formats") or ["tokenforge"]
    missing = [f for f in wanted if f not in have]
    if not missing:
        return index
    if "tokenforge" not in have:
        raise PrepareError(f"{out}: holds a complete prepare in the {', '.join(have)} format(s) only, without the "
                           f"tokenforge shards the {', '.join(missing)} format(s) would be written from; "
                           "pass overwrite=True to prepare again")
    index = {**index, "formats": [f for f in FORMATS if f in have or f in wanted]}
    index["exports"] = {**index.get("exports", {}), **_export(out, index, missing)}
    write_json_atomic(out / INDEX, index)
    return index


def _make_folder(out: Path) -> None:
    """``out``, created if need be; a file there, or a folder that cannot be made, is an error naming it."""
    if out.exists() and not out.is_dir():
        raise PrepareError(f"{out}: exists and is not a folder; choose another output folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise PrepareError(f"{out}: cannot create the output folder ({exc.strerror or exc})") from None


def _as_prepare_error(exc: BaseException, out: Path) -> BaseException:
    """An ``OSError`` that is not a tokenforge error (a read-only or vanished file) as a
    :class:`PrepareError` naming the file; any other exception as it is."""
    if not isinstance(exc, OSError) or isinstance(exc, TokenforgeError):
        return exc
    where = exc.filename if exc.filename is not None else out
    return PrepareError(f"{where}: {exc.strerror or exc} (while preparing into {out})")


def _say_what_is_kept(exc: TokenforgeError, out: Path, kept: int) -> None:
    """Add to a failure's message that ``out/.partial`` holds what was done, and the ways on."""
    note = (f" [{out} keeps the {kept} complete shard(s) written before this error, with their checkpoints in "
            f"{out / PARTIAL}: pass resume=True to continue once the cause is fixed (with the same inputs and "
            "options), or overwrite=True to start again]")
    if exc.args and isinstance(exc.args[0], str):
        exc.args = (exc.args[0] + note, *exc.args[1:])


def _nothing_to_prepare(sources: list[Source], stats: _Stats, out: Path) -> str:
    """The error for a corpus without one non-empty document (nothing is written for it)."""
    names = [s.name for s in sources]
    shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    skipped = int(stats.empty.sum())
    what = f"{skipped:,} empty document(s) skipped" if skipped else "no document found"
    return f"no text to prepare in {shown} ({what}); nothing was written to {out}"


def _start(out: Path, settings: dict, resume: bool, overwrite: bool, sources: list[Source]) -> dict | None:
    """Prepare ``out`` (an existing folder, locked by this run): a fresh start, or the
    journal to resume from. OS errors are :class:`PrepareError` s naming the file."""
    index_path = out / INDEX
    journal_path = out / PARTIAL / JOURNAL
    try:
        if overwrite:
            for p in _shards.prepared_files(out):
                if p.is_dir():
                    shutil.rmtree(p)
                else:
                    p.unlink(missing_ok=True)
        elif resume:
            if index_path.exists():
                index = _read_json(index_path)
                if _same_settings(index, settings):
                    return {"complete": True, "index": index}
                raise PrepareError(f"{out}: holds a complete prepare with other settings; "
                                   "pass overwrite=True to replace it")
            if journal_path.exists():
                if any(s.kind in ("stdin",) for s in sources):
                    raise PrepareError("cannot resume from standard input: its text cannot be read again; "
                                       "pass overwrite=True to start again")
                journal = _read_json(journal_path)
                _check_resumable(out, journal["settings"], settings)
                _shards.clean_temporaries(out)
                return journal
        elif _shards.prepared_files(out):
            raise PrepareError(
                f"{out}: already holds prepared tokens (or an interrupted run); "
                "pass resume=True to continue it, or overwrite=True to start again"
            )
        _shards.clean_temporaries(out)
        (out / PARTIAL).mkdir(exist_ok=True)
    except OSError as exc:
        if isinstance(exc, TokenforgeError):
            raise
        raise PrepareError(f"{exc.filename or out}: {exc.strerror or exc} (while preparing into {out})") from None
    write_json_atomic(journal_path, {"settings": settings, "splits": {}, "snapshots": {}})
    return None


def _read_json(path: Path) -> dict:
    """An index or journal this module wrote; unreadable or not JSON is an error naming it."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise PrepareError(f"{path}: not valid JSON ({exc}); pass overwrite=True to start again") from None
    if not isinstance(doc, dict) or ("settings" not in doc and "splits" not in doc):
        raise PrepareError(f"{path}: not written by tokenforge prepare; pass overwrite=True to start again")
    return doc


def _same_tokenizer(old: dict | None, new: dict) -> bool:
    """Whether a recorded tokenizer gives the ids ``new`` gives: by fingerprint (which
    ignores the name and the file format), or by sha256 for an index written before
    tokenforge recorded fingerprints."""
    old = old or {}
    if old.get("fingerprint") is not None:
        return bool(old["fingerprint"] == new["fingerprint"])
    return bool(old.get("sha256") == new["sha256"])


def _same_settings(index: dict, settings: dict) -> bool:
    return (_same_tokenizer(index.get("tokenizer"), settings["tokenizer"])
            and index.get("dtype") == settings["dtype"]
            and _options(index) == settings["options"]
            and [i["name"] for i in index.get("inputs", [])] == [i["name"] for i in settings["inputs"]]
            and [i.get("size") for i in index.get("inputs", [])] == [i["size"] for i in settings["inputs"]])


_START_AGAIN = "pass overwrite=True to start again, or give what the interrupted run was given"


def _check_resumable(out: Path, old: dict, new: dict) -> None:
    for key, what in (("engine", "the engine"), ("tokenizer", "the tokenizer"), ("dtype", "the dtype"),
                      ("shard_tokens", "the shard size"),
                      ("separators", "the separators"), ("options", "the options"), ("inputs", "the inputs")):
        if key == "tokenizer" and _same_tokenizer(old.get(key), new[key]):
            continue
        if key == "options" and _options(old) == new[key]:
            continue
        if old.get(key) != new.get(key):
            if key == "inputs":
                for a, b in zip(old["inputs"], new["inputs"]):
                    if a != b:
                        raise PrepareError(f"cannot resume in {out}: input {b['name']} changed since the interrupted "
                                           f"run (its size or modification time); {_START_AGAIN}")
            then, now = old.get(key), new.get(key)
            if key == "options":  # only the options that differ
                then = _options(old)
                changed = [k for k in sorted(set(then) | set(now)) if then.get(k) != now.get(k)]
                then, now = {k: then.get(k) for k in changed}, {k: now.get(k) for k in changed}
            raise PrepareError(f"cannot resume in {out}: {what} differ from the interrupted run's "
                               f"({then!r} then, {now!r} now); {_START_AGAIN}")
    for split, st in old.get("splits", {}).items():
        for shard in st.get("shards", []):
            p = _shards.member_path(out, shard.get("file"), out / PARTIAL / JOURNAL)
            expect = shard["tokens"] * np.dtype(new["dtype"]).itemsize
            if not p.is_file() or p.stat().st_size != expect:
                raise PrepareError(f"cannot resume: shard {p} is missing or not {expect} bytes; {_START_AGAIN}")


def _resume_point(journal: dict, splits: tuple[str, ...]) -> tuple[int, dict | None]:
    """Where to start reading again: the latest snapshot at or before every split's mark."""
    marks = [journal.get("splits", {}).get(s, {}).get("next_item", 0) for s in splits]
    need = min(marks) if marks else 0
    best: tuple[int, dict | None] = (0, None)
    for snap in journal.get("snapshots", {}).values():
        if best[0] <= snap["item"] <= need:
            best = (snap["item"], snap["stats"])
    return best


# ---------------------------------------------------------------------------
# count
# ---------------------------------------------------------------------------


@dataclass
class CountRow:
    name: str
    documents: int
    bytes: int
    tokens: int

    @property
    def bytes_per_token(self) -> float:
        return self.bytes / self.tokens if self.tokens else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "documents": self.documents, "bytes": self.bytes, "tokens": self.tokens,
                "bytes_per_token": round(self.bytes_per_token, 4)}


@dataclass
class CountReport:
    """Tokens per input and in total (no separators): ``rows``, ``total``, ``seconds``."""

    tokenizer: str
    rows: list[CountRow]
    total: CountRow
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        return {"tokenizer": self.tokenizer, "inputs": [r.to_dict() for r in self.rows],
                "total": self.total.to_dict(), "seconds": round(self.seconds, 3)}


def count(
    inputs: Any,
    tokenizer: Any,
    *,
    workers: int | None = None,
    engine: str = "local",
    ray_address: str | None = None,
    text_field: str = "text",
    split_on: str | None = None,
    input_errors: str = "strict",
    show_progress: bool | None = None,
) -> CountReport:
    """Count the tokens of a corpus (per input and in total), read and encoded as
    :func:`prepare` does (``input_errors`` too), without separators and without writing anything.

    >>> import tokenforge
    >>> tokenforge.count(iter(["hello world", "bye"]), "gpt2", show_progress=False).total.tokens
    3
    """
    from ..io import open_tokenizer

    t0 = time.perf_counter()
    tok = open_tokenizer(tokenizer)
    sources = resolve_inputs(inputs)
    opts = _read_options(text_field, split_on, 0.0, input_errors)
    stats = _Stats(len(sources))
    total_bytes = sum(s.size for s in sources) if all(s.size is not None for s in sources) else None
    progress = _Progress(show_progress, total_bytes, "count")
    try:
        for enc in _engine_batches(engine, tok, workers, sources, opts, 0, True, ray_address):
            stats.add(enc, enc.lengths)
            progress.update(enc.nbytes, int(enc.lengths.sum()))
    finally:
        progress.close()
    rows = [CountRow(s.name, int(stats.documents[k]), int(stats.text_bytes[k]), int(stats.tokens[k]))
            for k, s in enumerate(sources)]
    total = CountRow("total", sum(r.documents for r in rows), sum(r.bytes for r in rows), sum(r.tokens for r in rows))
    return CountReport(_tokenizer_name(tokenizer, tok), rows, total, time.perf_counter() - t0)

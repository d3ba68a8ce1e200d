"""Adapters for the third-party encoders that ``bench_encode.py`` runs beside
tiktoken (not a benchmark itself).

Every peer is loaded OFFLINE with the same ranks as tiktoken's encodings:

============  ==================  ==============================================
peer          PyPI package        how it gets its ranks (no network)
============  ==================  ==============================================
quicktok      ``quicktok-v1``     ranks bundled in the wheel (cl100k, o200k)
gigatoken     ``gigatoken``       ``Tokenizer.from_tiktoken(<file>.tiktoken)`` on
                                  ``/work/shared/data/vocab/tiktoken`` (gpt2 via
                                  ``r50k_base.tiktoken``: same ranks and pattern)
rs-bpe        ``rs-bpe``          ranks compiled into the extension (cl100k, o200k)
bpe-openai    ``bpe-openai``      ranks compiled into the extension (cl100k, o200k);
                                  the Rust binding is called directly, because
                                  the package's Python wrapper refuses texts of
                                  1,000,000+ characters
============  ==================  ==============================================

None of them is asked to fetch anything. A peer that is not installed, or
that has no table for an encoding, is skipped (and the reason printed).
Peers' ids are compared with tiktoken's by the caller; a peer whose ids
differ is reported and its speed is shown flagged, never silently.

Every adapter exposes the same small interface::

    p = PEERS[name]
    p.supports(enc)        -> None if usable, else a reason string
    obj = p.fresh(enc)     -> a new encoder object (or the shared instance, see .shared)
    p.encode(obj, text)    -> list[int]   (encode_ordinary semantics)
    p.decode(obj, ids)     -> str
    p.batch(obj, docs, n)  -> the peer's batch result on n threads, or None
    p.batch_lists(raw)     -> that result as list[list[int]] (untimed)
    p.numpy(obj, text)     -> numpy array, or None when the peer has no such call
"""

from __future__ import annotations

import os
from typing import Any, Callable

TIKTOKEN_DIR = "/work/shared/data/vocab/tiktoken"


def _version(dist: str) -> str | None:
    try:
        from importlib.metadata import version

        return version(dist)
    except Exception:
        return None


class Peer:
    name = "?"
    dist = "?"
    encodings: tuple[str, ...] = ()
    #: True when the library hands out one process-wide instance per encoding,
    #: so a "fresh" object is not really fresh (no cold figure of its own).
    shared = False
    #: What the batch call is, for the table notes.
    batch_note = ""

    def __init__(self) -> None:
        self.import_error: str | None = None
        try:
            self._import()
        except Exception as exc:  # not installed, or does not load
            self.import_error = f"{type(exc).__name__}: {exc}"

    def _import(self) -> None:  # pragma: no cover - overridden
        raise NotImplementedError

    @property
    def version(self) -> str | None:
        return _version(self.dist)

    def supports(self, enc: str) -> str | None:
        if self.import_error:
            return f"not loadable ({self.import_error})"
        if enc not in self.encodings:
            return f"no offline table for {enc}"
        return None

    def fresh(self, enc: str) -> Any:  # pragma: no cover - overridden
        raise NotImplementedError

    def encode(self, obj, text: str) -> list[int]:
        return obj.encode_ordinary(text)

    def decode(self, obj, ids: list[int]) -> str:
        return obj.decode(ids)

    def batch(self, obj, docs: list[str], threads: int) -> Any:
        """The timed batch call on ``threads`` threads (None: the peer has none)."""
        return None

    def batch_lists(self, raw) -> list[list[int]]:
        """``batch``'s result as one id list per document (untimed, for the check)."""
        return raw

    def numpy(self, obj, text: str):
        return None


class QuickTok(Peer):
    name = "quicktok"
    dist = "quicktok-v1"
    encodings = ("cl100k_base", "o200k_base")
    batch_note = "encode_batch(docs, threads) -> one flat uint32 array + offsets (no Python lists)"

    def _import(self) -> None:
        import quicktok

        self._mod = quicktok

    def fresh(self, enc: str):
        return self._mod.Tokenizer(enc, "")

    def batch(self, obj, docs, threads):
        return obj.encode_batch(docs, threads)  # timed in the library's own output form

    def batch_lists(self, raw):
        flat, offsets = raw
        return [flat[offsets[i]:offsets[i + 1]].tolist() for i in range(len(offsets) - 1)]


class GigaToken(Peer):
    name = "gigatoken"
    dist = "gigatoken"
    encodings = ("gpt2", "cl100k_base", "o200k_base")
    batch_note = "TiktokenCompat.encode_ordinary_batch; num_threads=1 runs on the calling thread, any other value on rayon's global pool (all cores = 2)"

    def _import(self) -> None:
        import gigatoken

        self._mod = gigatoken

    def _file(self, enc: str) -> str:
        return os.path.join(TIKTOKEN_DIR, ("r50k_base" if enc == "gpt2" else enc) + ".tiktoken")

    def supports(self, enc: str) -> str | None:
        why = super().supports(enc)
        if why is None and not os.path.exists(self._file(enc)):
            why = f"no local rank file {self._file(enc)}"
        return why

    def fresh(self, enc: str):
        tok = self._mod.Tokenizer.from_tiktoken(self._file(enc))
        return (tok, tok.as_tiktoken())

    def encode(self, obj, text):
        return obj[1].encode_ordinary(text)

    def decode(self, obj, ids):
        return obj[1].decode(ids)

    def batch(self, obj, docs, threads):
        return obj[1].encode_ordinary_batch(docs, num_threads=threads)

    def numpy(self, obj, text):
        return obj[0].encode(text)


class RsBpe(Peer):
    name = "rs-bpe"
    dist = "rs-bpe"
    encodings = ("cl100k_base", "o200k_base")
    shared = True
    batch_note = ("1 thread: encode_batch(docs); 2 threads: encode_batch_parallel(docs, ParallelOptions(1, 64, 2)). "
                  "rs-bpe 0.1.0's encode_batch_parallel encodes with the FIRST encoding loaded in the process, whatever "
                  "instance it is called on (so its o200k ids are cl100k ids when cl100k was loaded first), and it ran "
                  "on one core here (CPU time = wall time)")

    def _import(self) -> None:
        from rs_bpe.bpe import openai

        self._mod = openai

    def fresh(self, enc: str):
        return getattr(self._mod, enc)()

    def encode(self, obj, text):
        return obj.encode(text)

    def batch(self, obj, docs, threads):
        if threads == 1:
            return obj.encode_batch(docs)[0]
        return obj.encode_batch_parallel(docs, self._mod.ParallelOptions(1, 64, threads))[0]


class BpeOpenAI(Peer):
    name = "bpe-openai"
    dist = "bpe-openai"
    encodings = ("cl100k_base", "o200k_base")
    shared = True
    batch_note = "the package's encode_ordinary_batch: a Python ThreadPoolExecutor over the binding"

    def _import(self) -> None:
        import bpe_openai
        from bpe_openai import _bindings

        self._pkg = bpe_openai
        self._mod = _bindings

    def fresh(self, enc: str):
        # (raw binding for single texts, package wrapper for batches)
        return (self._mod.tokenizer_for_encoding(enc), self._pkg.get_encoding(enc))

    def encode(self, obj, text):
        return obj[0].encode(text)

    def decode(self, obj, ids):
        return obj[0].decode(ids)

    def batch(self, obj, docs, threads):
        return obj[1].encode_ordinary_batch(docs, num_threads=threads)


ALL_PEERS: dict[str, Callable[[], Peer]] = {
    "quicktok": QuickTok,
    "gigatoken": GigaToken,
    "rs-bpe": RsBpe,
    "bpe-openai": BpeOpenAI,
}


def load_peers(names: list[str]) -> dict[str, Peer]:
    return {n: ALL_PEERS[n]() for n in names}


# =============================================================================
# Adapters by tokenizer file, for ``bench_peers.py`` (every family)
# =============================================================================
#
# ``bench_encode.py`` above compares byte-level BPE encodings by name. The
# adapters below take one *tokenizer under test* (a :class:`Source`: the file
# tokenforge loads, the library whose ids are the truth for that file, and the
# other files of the same vocabulary) and load it in each library by the route
# that library offers, offline:
#
# ==============  ===========  ===================================================
# library         PyPI         what it loads (first choice first)
# ==============  ===========  ===================================================
# tokenforge      (this repo)  the row's own file (``tokenforge.load``)
# tiktoken        tiktoken     a rank file (``Encoding`` from its ranks, pattern, specials)
# tokenizers      tokenizers   a ``tokenizer.json``; BERT ``vocab.txt`` by
#                              ``BertWordPieceTokenizer(lowercase=True)``
# sentencepiece   sentencepiece  a ``.model``
# gigatoken       gigatoken    rank file (``Tokenizer.from_tiktoken`` + pretokenizer
#                              name), byte-level or SentencePiece-BPE ``tokenizer.json``,
#                              SentencePiece BPE ``.model`` (``from_sentencepiece``)
# quicktok        quicktok-v1  its bundled tables: cl100k_base, o200k_base, llama3, qwen3
# fastokens       fastokens    ``tokenizer.json`` (``from_file``); rank file
#                              (``from_tiktoken(path, pattern, special_tokens)``)
# splintr         splintr-rs   rank file (``Tokenizer(path, pattern, specials)``),
#                              ``tokenizer.json`` (``from_json``), BERT ``vocab.txt``
#                              (``WordPieceTokenizer``)
# riptoken        riptoken     rank file (``CoreBPE(ranks, specials, pattern)``)
# bpe-openai      bpe-openai   its compiled tables: cl100k_base, o200k_base
# rs-bpe          rs-bpe       its compiled tables: cl100k_base, o200k_base
# wordchipper     wordchipper  ``from_pretrained('cl100k_base'|'o200k_base')`` reading the
#                              local rank file through its download cache (see below)
# kitoken         kitoken      ``from_tiktoken_file``, ``from_tokenizers_file``,
#                              ``from_sentencepiece_file``
# tokie           tokie        ``tokenizer.json`` (``Tokenizer.from_json``)
# nanotoken       nanotoken    WordPiece ``tokenizer.json`` or ``vocab.txt``
# ==============  ===========  ===================================================
#
# A library that cannot load the row's own format loads another file of the same
# vocabulary (the ``via`` note says which); its ids are still compared with the
# row's reference library, text by text.
#
# Output forms. Each library is timed in its fastest form of *ids you can use*:
# a list of ints, or a uint32 array / flat buffer where the library has one (no
# Python int per token). Calls that return objects (HF ``Encoding``) are timed
# up to the ``.ids`` list. tokenforge is run twice, ``tokenforge`` (lists:
# ``encode_ordinary`` / ``encode_ordinary_batch``) and ``tokenforge[np]``
# (``encode_to_numpy`` / ``encode_batch_to_numpy``); its figure is the better.

import dataclasses
import tempfile


class Unsupported(Exception):
    """This library has no route to this tokenizer (the message says why)."""


@dataclasses.dataclass
class Source:
    """One tokenizer under test."""

    key: str                  # short id: 'cl100k', 'llama3.json', 'bert.txt', ...
    family: str               # 'byte-level BPE', 'WordPiece', 'Unigram', 'SentencePiece BPE'
    label: str                # what the table shows
    fmt: str                  # 'tiktoken', 'hf', 'spm' or 'bert-vocab': the format tokenforge loads
    vocab: str                # the vocabulary: 'cl100k_base', 'o200k_base', 'llama3', 'qwen', 'bert-base-uncased', 'albert', 'llama2'
    files: dict[str, str]     # format -> path, for every file of this vocabulary (the row's own included)
    reference: str            # 'tiktoken', 'tokenizers' or 'sentencepiece'
    pattern: str | None = None
    specials: dict[str, int] = dataclasses.field(default_factory=dict)
    #: pretokenizer name gigatoken needs for a rank file whose name it does not know
    giga_pretokenizer: str | None = None
    #: the same split without possessive quantifiers, for regex engines that lack them
    #: (cl100k_base: the form HF ``tokenizer.json`` files and Llama 3 use)
    plain_pattern: str | None = None

    @property
    def path(self) -> str:
        return self.files[self.fmt]


def _np_lists(ids, offsets) -> list[list[int]]:
    return [ids[offsets[i]:offsets[i + 1]].tolist() for i in range(len(offsets) - 1)]


def _flat_bytes(raw) -> list[list[int]]:
    import numpy as np

    ids, offsets = raw
    return _np_lists(np.frombuffer(ids, np.uint32), np.frombuffer(offsets, np.uint64).astype(np.int64))


class Adapter:
    """One library, for every tokenizer it can load."""

    name = "?"
    dist = "?"
    #: True: ``batch`` takes a thread count (tokenforge, tiktoken, sentencepiece, ...);
    #: False: the library's batch always runs on its own pool of all cores.
    batch_threads = False
    single_form = "list"
    batch_form = "lists"

    def __init__(self) -> None:
        self.import_error: str | None = None
        try:
            self._import()
        except Exception as exc:  # not installed, or does not load
            self.import_error = f"{type(exc).__name__}: {exc}"

    def _import(self) -> None:  # pragma: no cover - overridden
        raise NotImplementedError

    @property
    def version(self) -> str | None:
        return _version(self.dist)

    def load(self, src: Source) -> tuple[Any, str]:
        """``(object, via)``: the loaded tokenizer and which file or table it came from.

        Tries the formats of :meth:`formats` in order and keeps the first that loads
        (a library that fails on one file of the vocabulary may read another)."""
        if self.import_error:
            raise Unsupported(f"not loadable ({self.import_error})")
        order = [f for f in self.formats(src) if f in src.files or f == "bundled"]
        if not order:
            raise Unsupported(f"{self.name} reads {'/'.join(self.formats(src)) or 'none of'} here; "
                              f"{src.vocab} has {'/'.join(src.files)}")
        errors = []
        for fmt in order:
            try:
                obj = self._load(src, fmt, src.files.get(fmt, ""))
            except Unsupported as exc:
                errors.append(f"{fmt}: {exc}")
                continue
            except BaseException as exc:  # pyo3 panics derive from BaseException
                if isinstance(exc, KeyboardInterrupt):
                    raise
                errors.append(f"{fmt}: {type(exc).__name__}: {str(exc)[:160]}")
                continue
            via = obj[1] if isinstance(obj, tuple) and len(obj) == 2 and isinstance(obj[1], str) else _via(src, fmt)
            if isinstance(obj, tuple) and len(obj) == 2 and isinstance(obj[1], str):
                obj = obj[0]
            if errors:
                via = (via + "; " if via else "") + "after " + "; ".join(errors)
            return obj, via
        raise Unsupported("; ".join(errors))

    def formats(self, src: Source) -> tuple[str, ...]:
        """The file formats this library can read for ``src``, best first ('bundled': its own table)."""
        return ()

    def _load(self, src: Source, fmt: str, path: str):  # pragma: no cover - overridden
        """The object, or ``(object, via)`` when the default note would be wrong."""
        raise NotImplementedError

    def skip(self, obj, mode: str) -> str | None:
        """A reason not to run this object in ``mode`` (shown instead of a figure)."""
        return None

    def encode(self, obj, text: str):
        raise NotImplementedError

    def batch(self, obj, texts: list[str], threads: int):
        """The library's batch call (``threads`` is honoured only when ``batch_threads``)."""
        return None

    def to_list(self, out) -> list[int]:
        return out if type(out) is list else out.tolist()

    def batch_lists(self, raw) -> list[list[int]]:
        return raw


def _via(src: Source, fmt: str) -> str:
    return "" if fmt == src.fmt else f"its {fmt} file"


class TokenforgeLists(Adapter):
    name = "tokenforge"
    dist = "tokenforge"
    batch_threads = True

    def _import(self) -> None:
        import tokenforge

        self._mod = tokenforge

    def formats(self, src):
        return (src.fmt,)  # the row's own file, always

    def _load(self, src, fmt, path):
        kw: dict[str, Any] = {}
        if fmt == "tiktoken" and src.vocab == "qwen":
            kw = {"pattern": "qwen", "special_tokens": src.specials}
        if fmt == "bert-vocab":
            kw = {"lowercase": True}
        return self._mod.load(path, **kw)

    def encode(self, obj, text):
        return obj.encode_ordinary(text)

    def batch(self, obj, texts, threads):
        return obj.encode_ordinary_batch(texts, num_threads=threads)


class TokenforgeNumpy(TokenforgeLists):
    name = "tokenforge[np]"
    single_form = "uint32 array"
    batch_form = "flat uint32 + offsets"

    def skip(self, obj, mode):
        # off the native plans the arrays are made from the lists: the same run, slower
        return "(python plan)" if obj.plan == "python" else None

    def encode(self, obj, text):
        return obj.encode_to_numpy(text, disallowed_special=(), add_special_tokens=False)

    def batch(self, obj, texts, threads):
        return obj.encode_batch_to_numpy(texts, num_threads=threads, disallowed_special=(), add_special_tokens=False)

    def batch_lists(self, raw):
        return _np_lists(*raw)


class Tiktoken(Adapter):
    name = "tiktoken"
    dist = "tiktoken"
    batch_threads = True

    def _import(self) -> None:
        import tiktoken
        from tiktoken.load import load_tiktoken_bpe

        self._mod = tiktoken
        self._load_ranks = load_tiktoken_bpe

    def formats(self, src):
        return ("tiktoken",)

    def _load(self, src, fmt, path):
        ranks = self._load_ranks(path)
        return self._mod.Encoding(f"bench-{src.vocab}", pat_str=src.pattern, mergeable_ranks=ranks,
                                  special_tokens=src.specials)

    def encode(self, obj, text):
        return obj.encode_ordinary(text)

    def batch(self, obj, texts, threads):
        return obj.encode_ordinary_batch(texts, num_threads=threads)


class HFTokenizers(Adapter):
    name = "tokenizers"
    dist = "tokenizers"

    def _import(self) -> None:
        import tokenizers

        self._mod = tokenizers

    def formats(self, src):
        return ("bert-vocab", "hf") if src.fmt == "bert-vocab" else ("hf",)

    def _load(self, src, fmt, path):
        if fmt == "bert-vocab":
            return self._mod.BertWordPieceTokenizer(path, lowercase=True)
        return self._mod.Tokenizer.from_file(path)

    def encode(self, obj, text):
        return obj.encode(text, add_special_tokens=False).ids

    def batch(self, obj, texts, threads):
        return [e.ids for e in obj.encode_batch(texts, add_special_tokens=False)]


class SentencePiece(Adapter):
    name = "sentencepiece"
    dist = "sentencepiece"
    batch_threads = True

    def _import(self) -> None:
        import sentencepiece

        self._mod = sentencepiece

    def formats(self, src):
        return ("spm",)

    def _load(self, src, fmt, path):
        return self._mod.SentencePieceProcessor(model_file=path)

    def encode(self, obj, text):
        return obj.encode(text)

    def batch(self, obj, texts, threads):
        return obj.encode(texts, num_threads=threads)


class GigaTokenAny(Adapter):
    name = "gigatoken"
    dist = "gigatoken"
    single_form = "uint32 array"
    batch_form = "awkward array (flat + offsets)"

    def _import(self) -> None:
        import gigatoken

        self._mod = gigatoken

    def formats(self, src):
        if src.family not in ("byte-level BPE", "SentencePiece BPE"):
            return ()
        return {"tiktoken": ("tiktoken", "hf"), "hf": ("hf", "tiktoken", "spm"), "spm": ("spm", "hf")}[src.fmt]

    def _load(self, src, fmt, path):
        if fmt == "tiktoken":
            base = os.path.basename(path)
            if src.giga_pretokenizer:
                tok = self._mod.Tokenizer.from_tiktoken(path, pretokenizer=src.giga_pretokenizer,
                                                        special_tokens=src.specials)
            elif base in ("cl100k_base.tiktoken", "o200k_base.tiktoken", "r50k_base.tiktoken"):
                tok = self._mod.Tokenizer.from_tiktoken(path)
            else:
                raise Unsupported(f"gigatoken needs a pretokenizer name for {base}")
        elif fmt == "spm":
            tok = self._mod.Tokenizer.from_sentencepiece(path)
        else:
            tok = self._mod.Tokenizer(path)
        return tok

    def encode(self, obj, text):
        return obj.encode(text)

    def batch(self, obj, texts, threads):
        return obj.encode_batch(texts)

    def batch_lists(self, raw):
        import awkward as ak

        return ak.to_list(raw)


class QuickTokAny(Adapter):
    name = "quicktok"
    dist = "quicktok-v1"
    batch_threads = True
    batch_form = "flat uint32 + offsets"
    TABLES = {"cl100k_base": "cl100k_base", "o200k_base": "o200k_base", "llama3": "llama3", "qwen": "qwen3"}

    def _import(self) -> None:
        import quicktok

        self._mod = quicktok

    def formats(self, src):
        return ("bundled",) if src.vocab in self.TABLES else ()

    def _load(self, src, fmt, path):
        table = self.TABLES[src.vocab]
        return self._mod.Tokenizer(table, ""), f"bundled {table}"

    def encode(self, obj, text):
        return obj.encode_ordinary(text)

    def batch(self, obj, texts, threads):
        return obj.encode_batch(texts, threads)

    def batch_lists(self, raw):
        return _np_lists(*raw)


class FasTokens(Adapter):
    name = "fastokens"
    dist = "fastokens"
    batch_form = "flat uint32 bytes + offsets"

    def _import(self) -> None:
        import fastokens

        self._mod = fastokens

    def formats(self, src):
        return ("tiktoken", "hf") if src.fmt == "tiktoken" else ("hf", "tiktoken")

    def _load(self, src, fmt, path):
        if fmt == "tiktoken":
            return self._mod.Tokenizer.from_tiktoken(path, pattern=src.pattern, special_tokens=src.specials)
        return self._mod.Tokenizer.from_file(path)

    def encode(self, obj, text):
        return obj.encode(text).ids

    def batch(self, obj, texts, threads):
        return obj.encode_batch_flat(texts)

    def batch_lists(self, raw):
        return _flat_bytes(raw)


class Splintr(Adapter):
    name = "splintr"
    dist = "splintr-rs"
    batch_form = "flat uint32 bytes + offsets"

    def _import(self) -> None:
        import splintr

        self._mod = splintr

    def formats(self, src):
        return {"tiktoken": ("tiktoken", "hf"), "bert-vocab": ("bert-vocab", "hf")}.get(src.fmt, ("hf", "tiktoken"))

    def _load(self, src, fmt, path):
        if fmt == "bert-vocab":
            with open(path, encoding="utf-8") as f:
                vocab = [line.rstrip("\n") for line in f]
            return self._mod.WordPieceTokenizer(vocab, vocab.index("[UNK]"), do_lower_case=True)
        if fmt == "tiktoken":
            pattern = src.plain_pattern or src.pattern  # its regex engine has no possessive quantifiers
            return self._mod.Tokenizer(path, pattern, src.specials)
        return self._mod.from_json(path)

    def encode(self, obj, text):
        return obj.encode_raw(text)  # no [CLS]/[SEP] template (encode_ordinary adds it)

    def batch(self, obj, texts, threads):
        if hasattr(obj, "encode_batch_flat"):
            return ("flat", obj.encode_batch_flat(texts))
        return ("lists", obj.encode_batch(texts))

    def batch_lists(self, raw):
        kind, val = raw
        return _flat_bytes(val) if kind == "flat" else val


class RipToken(Adapter):
    name = "riptoken"
    dist = "riptoken"

    def _import(self) -> None:
        import riptoken

        self._mod = riptoken

    def formats(self, src):
        return ("tiktoken",)

    def _load(self, src, fmt, path):
        return self._mod.CoreBPE(self._mod.load_tiktoken_bpe(path), src.specials, src.pattern)

    def encode(self, obj, text):
        return obj.encode_ordinary(text)

    def batch(self, obj, texts, threads):
        return obj.encode_ordinary_batch(texts)


class _Bundled(Adapter):
    """A peer whose tables are compiled into it (cl100k_base and o200k_base)."""

    TABLES = ("cl100k_base", "o200k_base")

    def formats(self, src):
        return ("bundled",) if src.vocab in self.TABLES else ()


class BpeOpenAIAny(_Bundled):
    name = "bpe-openai"
    dist = "bpe-openai"
    batch_threads = True

    def _import(self) -> None:
        import bpe_openai
        from bpe_openai import _bindings

        self._pkg = bpe_openai
        self._mod = _bindings

    def _load(self, src, fmt, path):
        # raw binding for single texts (the wrapper refuses texts of 1,000,000+ characters)
        return (self._mod.tokenizer_for_encoding(src.vocab), self._pkg.get_encoding(src.vocab)), f"bundled {src.vocab}"

    def encode(self, obj, text):
        return obj[0].encode(text)

    def batch(self, obj, texts, threads):
        return obj[1].encode_ordinary_batch(texts, num_threads=threads)


class RsBpeAny(_Bundled):
    name = "rs-bpe"
    dist = "rs-bpe"

    def _import(self) -> None:
        from rs_bpe.bpe import openai

        self._mod = openai

    def _load(self, src, fmt, path):
        return getattr(self._mod, src.vocab)(), f"bundled {src.vocab}"

    def encode(self, obj, text):
        return obj.encode(text)

    def batch(self, obj, texts, threads):
        # rs-bpe 0.1.0's encode_batch_parallel encodes with the first encoding loaded in the process,
        # whatever instance it is called on; its ids are checked like everyone's
        return obj.encode_batch_parallel(texts, self._mod.ParallelOptions(1, 64, os.cpu_count() or 2))[0]


class WordChipper(_Bundled):
    """wordchipper's ``from_pretrained`` reads ``<cache>/io.crates.wordchipper/openai/<name>/<name>.tiktoken``
    and downloads it when absent; the adapter points ``XDG_CACHE_HOME`` at a temporary folder where
    that path is a link to the local rank file, so nothing is fetched."""

    name = "wordchipper"
    dist = "wordchipper"

    def _import(self) -> None:
        import wordchipper

        self._mod = wordchipper

    def formats(self, src):
        return ("tiktoken",) if src.vocab in self.TABLES else ()

    def _load(self, src, fmt, path):
        cache = tempfile.mkdtemp(prefix="wordchipper-cache-")
        d = os.path.join(cache, "io.crates.wordchipper", "openai", src.vocab)
        os.makedirs(d)
        os.symlink(path, os.path.join(d, src.vocab + ".tiktoken"))
        old = os.environ.get("XDG_CACHE_HOME")
        os.environ["XDG_CACHE_HOME"] = cache
        try:
            single = self._mod.Tokenizer.from_pretrained(src.vocab)
            opts = self._mod.TokenizerOptions.default()
            opts.set_parallel(True)
            par = self._mod.Tokenizer.from_pretrained(src.vocab, opts)
        finally:
            if old is None:
                del os.environ["XDG_CACHE_HOME"]
            else:
                os.environ["XDG_CACHE_HOME"] = old
        if single.vocab_size < 1000:  # a failed fetch leaves a byte-only vocabulary
            raise Unsupported(f"wordchipper loaded {single.vocab_size} tokens, not the rank file")
        return (single, par)

    def encode(self, obj, text):
        return obj[0].encode(text)

    def batch(self, obj, texts, threads):
        return obj[1].encode_batch(texts)


class KiToken(Adapter):
    name = "kitoken"
    dist = "kitoken"

    def _import(self) -> None:
        import kitoken

        self._mod = kitoken.Kitoken

    def formats(self, src):
        return {"tiktoken": ("tiktoken", "hf"), "hf": ("hf", "spm", "tiktoken"), "spm": ("spm", "hf"),
                "bert-vocab": ("hf",)}[src.fmt]

    def _load(self, src, fmt, path):
        loader = {"tiktoken": self._mod.from_tiktoken_file, "hf": self._mod.from_tokenizers_file,
                  "spm": self._mod.from_sentencepiece_file}[fmt]
        return loader(path)

    def encode(self, obj, text):
        return obj.encode(text)

    def batch(self, obj, texts, threads):
        return obj.encode_all(texts)


class Tokie(Adapter):
    name = "tokie"
    dist = "tokie"

    def _import(self) -> None:
        import tokie

        self._mod = tokie

    def formats(self, src):
        return ("hf",)

    def _load(self, src, fmt, path):
        return self._mod.Tokenizer.from_json(path)

    def encode(self, obj, text):
        return obj.encode(text, add_special_tokens=False).ids

    def batch(self, obj, texts, threads):
        return [e.ids for e in obj.encode_batch(texts, add_special_tokens=False)]


class NanoToken(Adapter):
    name = "nanotoken"
    dist = "nanotoken"
    single_form = "uint32 array"
    batch_form = "flat uint32 + offsets"

    def _import(self) -> None:
        import nanotoken

        self._mod = nanotoken

    def formats(self, src):
        if src.family != "WordPiece":
            return ()
        return ("bert-vocab", "hf") if src.fmt == "bert-vocab" else ("hf", "bert-vocab")

    def _load(self, src, fmt, path):
        if fmt == "bert-vocab":
            return self._mod.Tokenizer.from_vocab(path, lowercase=True)
        return self._mod.Tokenizer(path)

    def encode(self, obj, text):
        return obj.encode(text, add_special_tokens=False)

    def batch(self, obj, texts, threads):
        return obj.encode_batch(texts, add_special_tokens=False)

    def batch_lists(self, raw):
        return raw.to_list()


ADAPTERS: dict[str, Callable[[], Adapter]] = {
    "tokenforge": TokenforgeLists,
    "tokenforge[np]": TokenforgeNumpy,
    "tiktoken": Tiktoken,
    "tokenizers": HFTokenizers,
    "sentencepiece": SentencePiece,
    "gigatoken": GigaTokenAny,
    "quicktok": QuickTokAny,
    "fastokens": FasTokens,
    "splintr": Splintr,
    "riptoken": RipToken,
    "bpe-openai": BpeOpenAIAny,
    "rs-bpe": RsBpeAny,
    "wordchipper": WordChipper,
    "kitoken": KiToken,
    "tokie": Tokie,
    "nanotoken": NanoToken,
}

"""The one place a tokenizer's stages are compiled into their fastest exact plan.

A :class:`~tokenforge.Tokenizer` is a composition of stages (normalizer,
pre-tokenizer, model, post-processor, decoder). Running them one by one in
Python is always correct; for the common configurations the native core can
run several stages in one call with the same ids. :func:`compile_plan` looks
at the stages once, when the tokenizer is built, through their public
methods only, and picks:

``rank-bpe``
    Byte-level BPE by merge rank (GPT-2, tiktoken files, byte-level HF
    files): the native scanner of a named split pattern (or the ``regex``
    module for any other pattern) + the native rank merge, batch encoding on
    threads, numpy output and native decoding. HF's byte-level ``BPE`` model
    (string tokens in GPT-2's printable alphabet, merges by priority) compiles
    to it when that is exact (:meth:`~tokenforge.models.bpe.BPE.from_byte_level_pieces`):
    merge ``k`` makes a token whose id grows with ``k``, every multi-byte token is
    made by a merge unless the model sets ``ignore_merges``, all 256 bytes are
    tokens, and the merge list is the one the ranks imply (checked natively).
    An ``NFC`` normalizer (Qwen2) is applied first, to the texts not in NFC already.
``pair-bpe``
    HF's byte-level ``BPE`` model whose merge list the ranks do not imply (Llama 3's
    ``tokenizer.json``, made by transformers' ``TikTokenConverter``, lists every split
    of every token as a merge): the same scanner, whole-piece lookup (with
    ``ignore_merges``), piece cache and threaded batches, but the native merge picks
    the adjacent pair of lowest merge index (leftmost on ties), as HF does. When the
    list orders merges by their token's id (``TikTokenConverter`` does), each piece
    first runs on the rank merge, and its ids are kept when every two adjacent ones
    merge back into themselves by priority: then they are the ids merging by priority
    gives (the backtracking encoder's argument, ``_core/backtrack.h``); the other
    pieces (two splits of one token meeting, as in some runs) merge by priority.
``sentencepiece``
    sentencepiece's normalizer fused with its Unigram lattice or its
    score-driven BPE: normalization, pre-tokenization and the model in one
    native call per stretch of text.
``wordpiece``
    BERT (a ``WordPiece`` model after ``BertPreTokenizer``): BERT's normalizer
    (``BertNormalizer``, or none), BERT's split and greedy longest-match-first in
    one native call per text, batches on threads without the GIL. Any other
    normalizer runs in Python before the native split.
``python``
    The stages in order, with a memo of encoded pieces. Used for WordLevel,
    WordPiece after other pre-tokenizers, custom components, and whenever ``TOKENFORGE_BACKEND=python``
    (or ``backend="python"``) asks for the reference path.

Every plan encodes one *ordinary* stretch of text: added and special tokens
are split off by the tokenizer before, and post-processing happens after. A
plan never changes ids; the tests check which plan each shipped vocabulary
gets and that every plan equals the ``python`` plan.

>>> import tokenforge
>>> tokenforge.get_encoding("cl100k_base").plan
'rank-bpe'
>>> tokenforge.Tokenizer(tokenforge.get_encoding("gpt2").model, pre_tokenizer="gpt2", backend="python").plan
'python'
"""

from __future__ import annotations

import os
import functools
import unicodedata
import itertools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from . import _native, decoders, normalizers, pretokenizers
from .pretokenizers import RegexSplit
from .models.bpe import BPE, PieceBPE, byte_level_tables
from .models.unigram import Unigram
from .models.wordpiece import WordPiece
from .normalizers import BertNormalizer
from .sentencepiece.constants import SPACE, PieceType
from .sentencepiece.normalizer import SentencePieceNormalizer

#: Pieces up to this many characters are memoised by the Python plans.
CACHE_PIECE_CHARS = 64
#: A memo is cleared when it holds this many pieces.
CACHE_LIMIT = 1 << 17
#: ``Split`` that cuts SentencePiece's escaped text before each ``▁`` word.
SP_WORD_SPLIT = f"(?<=[^{SPACE}]){SPACE}"


def default_threads(num_threads: int | None, name: str = "num_threads") -> int:
    """``num_threads``, or every core for None; anything but a positive int is refused."""
    if num_threads is None:
        return os.cpu_count() or 1
    if not isinstance(num_threads, int) or isinstance(num_threads, bool) or num_threads < 1:
        from .errors import InvalidArgumentError

        raise InvalidArgumentError(f"{name} must be a positive int, got {num_threads!r}")
    return min(num_threads, MAX_THREADS)


#: More threads than this never help a batch; larger requests use this many.
MAX_THREADS = 1024


def fix_surrogates(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD (a high+low pair becomes the
    character it spells), as tiktoken does; text without surrogates is returned as is."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def flat_arrays(ids: bytes, offsets: bytes) -> tuple[Any, Any]:
    """The native flat batch form (native-endian uint32 ids, uint64 offsets, as bytes) as the
    ``(uint32 ids, int64 offsets)`` arrays of ``encode_batch_to_numpy``."""
    import numpy as np

    return np.frombuffer(ids, dtype=np.uint32), np.frombuffer(offsets, dtype=np.uint64).astype(np.int64)


class Plan:
    """How ordinary text becomes ids. Subclasses override what they do natively."""

    name = "python"
    #: ``encode_batch`` runs on native threads without the GIL.
    threaded = False

    def __init__(self, normalizer: Any, pre_tokenizer: Any, model: Any) -> None:
        self.normalizer = normalizer
        self.pre_tokenizer = pre_tokenizer
        self.model = model
        self._cache: dict[str, tuple[int, ...]] = {}

    # -- the Python path: the stages in order --------------------------------
    def pieces(self, text: str, first: bool = True, normalize: bool = True) -> list[str]:
        """Normalized pre-tokens of ``text`` (``first``: the text starts the input)."""
        if normalize and self.normalizer is not None:
            text = self.normalizer.normalize_str(text)
        if not text:
            return []
        pre = self.pre_tokenizer
        if pre is None:
            return [text]
        return pre.split(text, first)

    def encode_pieces(self, pieces: Sequence[str], out: list[int]) -> None:
        cache = self._cache
        encode_piece = self.model.encode_piece
        for piece in pieces:
            ids = cache.get(piece)
            if ids is None:
                ids = tuple(encode_piece(piece))
                if len(piece) <= CACHE_PIECE_CHARS:
                    if len(cache) >= CACHE_LIMIT:
                        cache.clear()
                    cache[piece] = ids
            out.extend(ids)

    def encode(self, text: str, first: bool = True) -> list[int]:
        """Ids of one ordinary stretch of text (no added tokens in it). Lone surrogates
        are replaced by U+FFFD first (the native plans raise ``UnicodeEncodeError`` on
        them instead, and the tokenizer replaces them then)."""
        out: list[int] = []
        self.encode_pieces(self.pieces(fix_surrogates(text), first), out)
        return out

    # -- batches -----------------------------------------------------------------
    def encode_batch(self, texts: list[str], num_threads: int) -> list[list[int]]:
        """Ids of each text. The native plans run the batch on ``num_threads`` threads with
        the GIL released; the Python stages hold the GIL, so they run one text at a time."""
        return [self.encode(t) for t in texts]

    def encode_flat(self, texts: list[str], num_threads: int) -> tuple[Any, Any]:
        """``(uint32 ids, int64 offsets)`` of a batch: text ``k`` is ``ids[offsets[k]:offsets[k+1]]``."""
        import numpy as np

        lists = self.encode_batch(texts, num_threads)
        offsets = np.zeros(len(lists) + 1, dtype=np.int64)
        if lists:
            np.cumsum([len(x) for x in lists], out=offsets[1:])
        ids = np.fromiter(itertools.chain.from_iterable(lists), dtype=np.uint32, count=int(offsets[-1]))
        return ids, offsets

    def encode_u32(self, text: str) -> Any:
        import numpy as np

        return np.asarray(self.encode(text), dtype=np.uint32)

    #: ``ids -> bytes`` in native code, for tokenizers whose tokens are bytes.
    decode_bytes: Callable[[list[int]], bytes] | None = None

    def describe(self) -> str:
        return self.name


class ByteBPEPlan(Plan):
    """Byte-level BPE in the native core: the native scanner (named patterns) or the
    ``regex`` module, whole-piece lookup, the native merge, and an optional NFC normalizer
    (applied in Python, only to the texts that are not in NFC already)."""

    def __init__(
        self, normalizer, pre_tokenizer, model, ranks_model: BPE, pattern: RegexSplit | None, backend: str,
        token_bytes, pair_merges: Sequence[tuple[int, int, int]] | None = None, whole: bool = True,
    ):
        """``token_bytes``: ``{id: bytes}`` of the added tokens, which decode to their text.
        ``pair_merges``/``whole``: merge by priority (see :meth:`BPE.native_encoder`)."""
        super().__init__(normalizer, pre_tokenizer, model)
        self.ranks_model = ranks_model
        self.pattern = pattern
        scanner = -1
        if pattern is not None and pattern.name in _native.SCANNERS:
            scanner = _native.SCANNERS[pattern.name]
        self.native_split = scanner >= 0
        self.threaded = self.native_split
        self.core = ranks_model.native_encoder(token_bytes, scanner, backend, pair_merges, whole)
        self.decode_bytes = self.core.decode_bytes
        self._whole = whole
        self._nfc = normalizer is not None  # only NFC compiles to this plan

    def _normalized(self, text: str) -> str:
        if self._nfc and not unicodedata.is_normalized("NFC", text):
            return self.normalizer.normalize_str(text)
        return text

    def _normalized_batch(self, texts: list[str]) -> list[str]:
        if not self._nfc:
            return texts
        out: list[str] | None = None
        is_normalized = unicodedata.is_normalized
        for k, t in enumerate(texts):
            if not is_normalized("NFC", t):
                if out is None:
                    out = list(texts)
                out[k] = self.normalizer.normalize_str(t)
        return texts if out is None else out

    def encode(self, text: str, first: bool = True) -> list[int]:
        if not text:
            return []
        if self._nfc:
            text = self._normalized(text)
        core = self.core
        if self.native_split:
            return core.encode_ordinary(text)
        data_ids: list[int] = []
        if self.pattern is None:
            return core.encode_piece(text.encode("utf-8"))
        cache = self._cache
        ranks_get = self.ranks_model.ranks.get if self._whole else {}.get
        encode_piece = core.encode_piece
        append = data_ids.append
        extend = data_ids.extend
        for piece in self.pattern.split(text):
            ids = cache.get(piece)
            if ids is None:
                data = piece.encode("utf-8")
                r = ranks_get(data)
                if r is not None:
                    append(r)
                    ids = (r,)
                else:
                    ids = tuple(encode_piece(data))
                    extend(ids)
                if len(piece) <= CACHE_PIECE_CHARS:
                    if len(self._cache) >= CACHE_LIMIT:
                        cache.clear()
                    cache[piece] = ids
            elif len(ids) == 1:
                append(ids[0])
            else:
                extend(ids)
        return data_ids

    def encode_batch(self, texts: list[str], num_threads: int) -> list[list[int]]:
        if self.native_split:
            return self.core.encode_ordinary_batch(self._normalized_batch(texts), num_threads)
        return super().encode_batch(texts, num_threads)

    def encode_flat(self, texts: list[str], num_threads: int):
        if not self.native_split:
            return super().encode_flat(texts, num_threads)
        ids, offsets = self.core.encode_ordinary_batch_flat(self._normalized_batch(texts), num_threads)
        return flat_arrays(ids, offsets)

    def encode_u32(self, text: str):
        if not self.native_split:
            return super().encode_u32(text)
        import numpy as np

        return np.frombuffer(self.core.encode_ordinary_u32(self._normalized(text)), dtype=np.uint32)

    #: What the native merge does, for describe().
    merge_kind = ""

    def describe(self) -> str:
        how = "native scanner" if self.native_split else ("regex split" if self.pattern is not None else "no split")
        nfc = "NFC + " if self._nfc else ""
        return f"{self.name} ({nfc}{how} + native {self.merge_kind})"


class RankBPEPlan(ByteBPEPlan):
    """Byte-level BPE by rank (tiktoken's algorithm): ``ranks_model`` is a rank model
    giving the tokenizer's ids."""

    name = "rank-bpe"
    merge_kind = "rank merge"


class PairBPEPlan(ByteBPEPlan):
    """Byte-level BPE by merge priority (HF tokenizers' ``BPE`` model), for merge lists
    that ranks do not imply (Llama 3's ``tokenizer.json`` lists every split of every
    token). ``ranks_model`` maps token bytes to ids; the core tries the rank merge with
    these ids first and keeps it where it is proven equal (``_core/pair_bpe.h``)."""

    name = "pair-bpe"
    merge_kind = "merge by priority"


class SentencePiecePlan(Plan):
    """sentencepiece's normalizer + Unigram lattice or score-driven BPE, in one native call.

    The native objects are built on first use (loading a ``.model`` stays as cheap as
    reading it). If the core cannot take this model after all, or a Unigram text is left
    with an uncovered run of unknown characters, the Python stages serve that call: they
    give the same ids, or raise the error the Python path raises.
    """

    name = "sentencepiece"
    threaded = True

    def __init__(self, normalizer, pre_tokenizer, model, core) -> None:
        super().__init__(normalizer, pre_tokenizer, model)
        self._core = core
        self._native: Any = None  # (normalizer, model) handles; False: the core declined
        self._fused: Any = None  # text -> ids (None: uncovered), once the handles exist

    def _handles(self) -> Any:
        h = self._native
        if h is None:
            try:
                norm, enc = self._native_parts()
                h = (norm, enc) if norm is not None and enc is not None else False
            except (UnicodeError, ValueError, TypeError, OverflowError):
                h = False
            if h:
                one = self._core.spm_bpe_encode if isinstance(self.model, PieceBPE) else self._core.spm_unigram_encode
                self._fused = functools.partial(one, h[0], h[1])
            self._native = h
        return h

    def _native_parts(self) -> tuple[Any, Any]:
        """The native normalizer and model (None where the core cannot take one)."""
        return self.normalizer.native_normalizer(), self.model.native_encoder()

    def encode(self, text: str, first: bool = True) -> list[int]:
        if not text:
            return []
        fused = self._fused
        if fused is not None or self._handles():
            ids = (fused or self._fused)(fix_surrogates(text))
            if ids is not None:
                return ids
        return super().encode(text, first)

    def encode_batch(self, texts: list[str], num_threads: int) -> list[list[int]]:
        h = self._handles()
        if not h:
            return [self.encode(t) for t in texts]
        fixed = [fix_surrogates(t) for t in texts]
        out = self._core.spm_encode_batch(h[0], h[1], fixed, num_threads)
        for k, ids in enumerate(out):
            if ids is None:
                out[k] = super().encode(fixed[k])
        return out

    def encode_flat(self, texts: list[str], num_threads: int):
        h = self._handles()
        if not h:
            return super().encode_flat(texts, num_threads)
        ids, offsets, uncovered = self._core.spm_encode_batch(
            h[0], h[1], [fix_surrogates(t) for t in texts], num_threads, True
        )
        if uncovered:  # a Unigram text with an uncovered run: the Python stages serve the batch
            return super().encode_flat(texts, num_threads)
        return flat_arrays(ids, offsets)

    def describe(self) -> str:
        return f"sentencepiece (native normalizer + {type(self.model).__name__})"


class ConvertedSentencePiecePlan(SentencePiecePlan):
    """A ``tokenizer.json`` converted from a SentencePiece model (transformers' converters),
    exact to HF tokenizers, on the native sentencepiece machinery.

    - Llama 2 / Mistral (legacy ``LlamaConverter``): ``Prepend("▁")`` + ``Replace(" ", "▁")``
      and HF's ``BPE`` (merges by rank, byte fallback). The normalizer is sentencepiece's
      with an empty rule set, a dummy prefix on every non-empty text, no whitespace
      removal and ``▁`` escaping: the same text. The merges run natively by rank
      (``SpmBPE`` built with merges, HF's ``Word::merge_all``).
    - Newer Mistral files (``LlamaConverter`` with ``legacy=False``): no normalizer and
      ``Metaspace`` (``▁`` for spaces, one prepended by its scheme), then the same BPE. The
      native normalizer escapes the spaces; the prepend (``first``: only at the start of
      the text, and not before a text that starts with a space or ``▁``) is added first.
      With ``split`` the cut before every ``▁`` changes nothing under the condition below.
    - ALBERT-style Unigram: ``Precompiled`` (HF's grapheme-cluster rule, natively:
      ``_core/grapheme.h``), then ``Metaspace`` (``▁`` for spaces, prepended by its
      scheme, cut before every ``▁``) and HF's Unigram lattice natively per word (with a
      per-thread word -> ids cache; over the whole text when Metaspace does not split), in
      one call per text (``first=False`` under the ``"first"`` scheme, and Python-only
      builds, normalize in Python). The cut changes nothing when
      ``▁`` is a piece and no piece holds ``▁`` after its first character: every lattice
      path cuts there anyway. HF fuses a run of unknown characters *and* literal matches
      of the unknown piece into one string, which is a piece's id if it spells one
      (``Unigram._finish_hf``); the native lattice fuses runs of unknown characters into
      the unknown id. The two agree when the text holds no literal unknown piece and no
      run of two or more unknown characters can spell a piece: that holds when every
      score is at most 0, because the piece would beat the run by at least 10 (HF's unknown
      penalty) and the Viterbi path would have taken it. Other texts (or, for models with a
      positive score, any text whose ids hold the unknown id) take the Python stages.
    """

    name = "sentencepiece"

    def __init__(self, normalizer, pre_tokenizer, model, core, native_normalizer, encoder, prepend: str | None = None,
                 check_unk: int | None = None, unk_text: str | None = None, native_hf: bool = False) -> None:
        super().__init__(normalizer, pre_tokenizer, model, core)
        self._spm_normalizer = native_normalizer
        self._encoder = encoder  # () -> the native model, or None
        self._prepend = prepend  # Metaspace's prepend_scheme (then normalize in Python), or None
        self._check_unk = check_unk  # ids holding this id go to the Python stages
        self._unk_text = unk_text  # normalized texts holding this go to the Python stages
        #: the native normalizer runs Precompiled and Metaspace's prepend, and leaves texts
        #: holding unk_text uncovered (None) itself
        self._native_hf = native_hf

    def _native_parts(self) -> tuple[Any, Any]:
        return self._spm_normalizer.native_normalizer(), self._encoder()

    def _prepared(self, text: str, first: bool = True) -> str:
        """``text`` (surrogates fixed) as the native normalizer takes it."""
        text = fix_surrogates(text)
        if self._prepend is None:
            return text
        if self.normalizer is not None:
            text = self.normalizer.normalize_str(text)
        if text and text[0] not in " " + SPACE and (self._prepend == "always" or (self._prepend == "first" and first)):
            text = " " + text  # Metaspace's prepended replacement (escaped natively)
        return text

    def _usable(self, ids: Any) -> bool:
        return ids is not None and (self._check_unk is None or self._check_unk not in ids)

    def encode(self, text: str, first: bool = True) -> list[int]:
        if not text:
            return []
        if self._fused is not None or self._handles():
            if self._native_hf:
                if first or self._prepend != "first":
                    ids = self._fused(text if text.isascii() else fix_surrogates(text))
                    if ids is not None and (self._check_unk is None or self._check_unk not in ids):
                        return ids
                return Plan.encode(self, text, first)
            if self._prepend is None and self._unk_text is None and self._check_unk is None:
                return self._fused(fix_surrogates(text))  # BPE: every text is covered
            prepared = self._prepared(text, first)
            if self._unk_text is None or self._unk_text not in prepared:
                ids = self._fused(prepared)
                if self._usable(ids):
                    return ids
        return Plan.encode(self, text, first)

    def _batch(self, texts: list[str], num_threads: int, flat: bool) -> Any:
        """(indices of the texts left to the Python stages, spm_encode_batch of the rest)."""
        h = self._handles()
        if self._native_hf:
            return [], self._core.spm_encode_batch(h[0], h[1], [fix_surrogates(t) for t in texts], num_threads, flat)
        prepared = [self._prepared(t) for t in texts]
        unk_text = self._unk_text
        python = [k for k, t in enumerate(prepared) if unk_text in t] if unk_text is not None else []
        for k in python:
            prepared[k] = ""
        return python, self._core.spm_encode_batch(h[0], h[1], prepared, num_threads, flat)

    def encode_batch(self, texts: list[str], num_threads: int) -> list[list[int]]:
        if not self._handles():
            return [Plan.encode(self, t) for t in texts]
        python, out = self._batch(texts, num_threads, False)
        for k in python:
            out[k] = None
        for k, ids in enumerate(out):
            if not self._usable(ids):
                out[k] = Plan.encode(self, texts[k])
        return out

    def encode_flat(self, texts: list[str], num_threads: int):
        if not self._handles():
            return Plan.encode_flat(self, texts, num_threads)
        python, (ids, offsets, uncovered) = self._batch(texts, num_threads, True)
        ids, offsets = flat_arrays(ids, offsets)
        if python or uncovered or (self._check_unk is not None and (ids == self._check_unk).any()):
            return Plan.encode_flat(self, texts, num_threads)  # encode_batch: per text as above
        return ids, offsets

    def describe(self) -> str:
        return f"sentencepiece (converted tokenizer.json: native normalizer + HF {type(self.model).__name__})"


class WordPiecePlan(Plan):
    """BERT: BERT's normalizer, split and WordPiece in one native call per text (batches
    on threads with the GIL released). A ``BertNormalizer`` (any flags) runs natively
    (``_core/wordpiece.h``, with HF tokenizers' Unicode tables); any other normalizer runs
    in Python (``normalize_str``) before the native split.

    The native tables are built on first use. A vocabulary the core cannot hold (a token
    that is not valid UTF-8, an id past its range) keeps the Python stages."""

    name = "wordpiece"
    threaded = True

    def __init__(self, normalizer, pre_tokenizer, model, core) -> None:
        super().__init__(normalizer, pre_tokenizer, model)
        self._core = core
        self._native: Any = None  # the WordPieceEncoder; False: the core declined
        #: (clean_text, handle_chinese_chars, strip_accents, lowercase) when the core normalizes
        self._flags: tuple[bool, bool, bool, bool] | None = None
        #: the normalizer Python runs first (None: none, or the core runs it)
        self._py_normalizer = normalizer
        if type(normalizer) is BertNormalizer:
            n = normalizer
            strip = n.lowercase if n.strip_accents is None else n.strip_accents
            self._flags = (n.clean_text, n.handle_chinese_chars, strip, n.lowercase)
            self._py_normalizer = None

    def _encoder(self) -> Any:
        enc = self._native
        if enc is None:
            model = self.model
            prefix = model.continuing_subword_prefix
            try:
                toks: list[bytes] = []
                ids: list[int] = []
                ctoks: list[bytes] = []
                cids: list[int] = []
                cut = len(prefix.encode("utf-8"))
                for t, i in model.vocab.items():
                    b = t.encode("utf-8")
                    toks.append(b)
                    ids.append(i)
                    if prefix and t.startswith(prefix):
                        ctoks.append(b[cut:])
                        cids.append(i)
                if not prefix:
                    ctoks, cids = toks, ids
                enc = self._core.WordPieceEncoder(
                    toks, ids, ctoks, cids, model.unk_id, model.max_input_chars_per_word, self._flags
                )
            except (UnicodeError, OverflowError, ValueError, TypeError):
                enc = False
            self._native = enc
        return enc

    def _normalized(self, text: str) -> str:
        """``text`` as the encoder takes it: lone surrogates replaced, normalized by Python."""
        text = fix_surrogates(text)
        return self._py_normalizer.normalize_str(text) if self._py_normalizer is not None else text

    def _inputs(self, texts: list[str]) -> list[str]:
        if self._py_normalizer is None:
            return texts  # the core reads each str as it is (UTF-8 of a lone surrogate: UnicodeEncodeError)
        return [self._normalized(t) for t in texts]

    def encode(self, text: str, first: bool = True) -> list[int]:
        if not text:
            return []
        enc = self._native or self._encoder()
        if not enc:
            return super().encode(text, first)
        if self._py_normalizer is None:
            try:
                return enc.encode(text)
            except UnicodeEncodeError:
                return enc.encode(fix_surrogates(text))
        return enc.encode(self._normalized(text))

    def encode_batch(self, texts: list[str], num_threads: int) -> list[list[int]]:
        enc = self._native or self._encoder()
        if not enc:
            return super().encode_batch(texts, num_threads)
        try:
            return enc.encode_batch(self._inputs(texts), num_threads)
        except UnicodeEncodeError:
            return enc.encode_batch([self._normalized(t) for t in texts], num_threads)

    def encode_flat(self, texts: list[str], num_threads: int):
        enc = self._native or self._encoder()
        if not enc:
            return super().encode_flat(texts, num_threads)
        try:
            ids, offsets = enc.encode_batch(self._inputs(texts), num_threads, True)
        except UnicodeEncodeError:
            ids, offsets = enc.encode_batch([self._normalized(t) for t in texts], num_threads, True)
        return flat_arrays(ids, offsets)

    def encode_batch_framed(self, texts: list[str], num_threads: int, before: list[int], after: list[int],
                            flat: bool = False) -> Any:
        """``encode_batch`` (``flat``: ``encode_flat``) with ``before`` and ``after`` around each
        text's ids, put there on the native threads: a post-processor's fixed tokens
        (BERT's ``[CLS]`` ... ``[SEP]``) without a Python step per text. ``None`` when the
        core declined the vocabulary (the caller takes the ordinary way)."""
        enc = self._native or self._encoder()
        if not enc:
            return None
        try:
            got = enc.encode_batch(self._inputs(texts), num_threads, flat, before, after)
        except UnicodeEncodeError:
            got = enc.encode_batch([self._normalized(t) for t in texts], num_threads, flat, before, after)
        return flat_arrays(*got) if flat else got

    def describe(self) -> str:
        if self._flags is not None or self.normalizer is None:
            return "wordpiece (native BERT normalizer + split + WordPiece)"
        return "wordpiece (Python normalizer + native split + WordPiece)"


# ---------------------------------------------------------------------------
# Choosing a plan
# ---------------------------------------------------------------------------


def compile_plan(
    normalizer: Any, pre_tokenizer: Any, model: Any, decoder: Any, added: Mapping[int, str] | None = None,
    backend: str = "auto",
) -> Plan:
    """The fastest exact plan for these stages (see the module docstring). ``added``:
    ``{id: content}`` of the tokenizer's added tokens, which are matched before the model
    runs (the model never produces them from text) and decode to their content."""
    added = added or {}
    core = _native.core(backend)
    if core is not None:
        plan = _rank_bpe_plan(normalizer, pre_tokenizer, model, decoder, added, backend)
        if plan is not None:
            return plan
        plan = _sentencepiece_plan(normalizer, pre_tokenizer, model, core)
        if plan is not None:
            return plan
        if type(model) is WordPiece and type(pre_tokenizer) is pretokenizers.BertPreTokenizer:
            return WordPiecePlan(normalizer, pre_tokenizer, model, core)
    return Plan(normalizer, pre_tokenizer, model)


def _rank_bpe_plan(normalizer, pre, model, decoder, added, backend) -> Plan | None:
    if normalizer is not None and type(normalizer) is not normalizers.NFC:
        return None
    pair_merges = None
    if isinstance(model, BPE):
        if pre is not None and not isinstance(pre, RegexSplit):
            return None
        ranks_model = model
        pattern = pre
    elif isinstance(model, PieceBPE):
        pattern_str = byte_level_pattern(pre)
        if pattern_str is None or not isinstance(decoder, decoders.ByteLevel):
            return None
        tables = byte_level_tables(model, frozenset(added))
        if tables is None:
            return None
        ranks_model = BPE.from_byte_level_pieces(model, frozenset(added), check_merges=False, tables=tables)
        if ranks_model is None:
            pair = BPE.byte_level_pair_model(model, frozenset(added), tables=tables)
            if pair is None:
                return None
            ranks_model, pair_merges = pair
        pattern = RegexSplit(pattern_str, oniguruma=True)  # the pattern of an HF Split
    else:
        return None
    token_bytes = {i: content.encode("utf-8") for i, content in added.items()}
    # The core keeps an id -> bytes array; ids spread far beyond the vocabulary size
    # (a hand-made rank file) would make it huge, so such tokenizers stay in Python.
    if max([ranks_model.max_id(), *token_bytes]) >= 2 * (len(ranks_model) + len(token_bytes)) + 65536:
        return None
    if pair_merges is None:
        plan = RankBPEPlan(normalizer, pre, model, ranks_model, pattern, backend, token_bytes)
        if not isinstance(model, PieceBPE):
            return plan
        ranks = ranks_model.ranks
        pairs = [(ranks[a], ranks[b]) for a, b in ranks_model.merges or ()]
        if plan.core.first_underived_merge(pairs) < 0:  # BPE.first_underived_merge, natively
            return plan
        pair = BPE.byte_level_pair_model(model, frozenset(added), tables=tables)  # merges the ranks do not imply
        if pair is None:
            return None
        ranks_model, pair_merges = pair
    return PairBPEPlan(normalizer, pre, model, ranks_model, pattern, backend, token_bytes, pair_merges, model.ignore_merges)


def byte_level_pattern(pre: Any) -> str | None:
    """The split regex of a pure GPT-2 byte-level pre-tokenizer (``ByteLevel`` with its own
    regex and no prefix space, or one ``Split`` regex then ``ByteLevel`` without regex), else
    ``None``."""
    if pre is None:
        return None
    d = pre.to_dict()
    kind = d.get("type")
    if kind == "ByteLevel" and d.get("use_regex", True) and not d.get("add_prefix_space", True):
        return pretokenizers.GPT2_ORIGINAL_PATTERN
    if kind == "Sequence":
        items = d.get("pretokenizers") or []
        if (
            len(items) == 2
            and items[0].get("type") == "Split"
            and "Regex" in (items[0].get("pattern") or {})
            and items[0].get("behavior") == "Isolated"
            and not items[0].get("invert", False)
            and items[1].get("type") == "ByteLevel"
            and not items[1].get("add_prefix_space", True)
            and not items[1].get("use_regex", True)
        ):
            return items[0]["pattern"]["Regex"]
    return None


def sentencepiece_split_is_exact(pieces: Sequence[str], user_defined: Sequence[str]) -> bool:
    """Can the ``▁``-escaped text be cut before every ``▁`` that follows another
    character without changing any segmentation? Yes when no piece has a ``▁``
    right after a non-``▁`` character (``"o▁"``), ``"▁"`` itself is a piece (so
    unknown runs cannot join across the cut) and no user symbol holds ``▁``."""
    space = SPACE
    if space not in pieces:
        return False
    for p in pieces:
        k = p.find(space, 1)
        while k > 0:
            if p[k - 1] != space:
                return False
            k = p.find(space, k + 1)
    return not any(space in u for u in user_defined)


#: transformers' LlamaConverter normalizer (legacy Llama 2 / Mistral ``tokenizer.json``).
_LLAMA_NORMALIZER = [{"type": "Prepend", "prepend": SPACE}, {"type": "Replace", "pattern": {"String": " "}, "content": SPACE}]


def _cut_before_space_is_exact(model) -> bool:
    """Metaspace's split before every ``▁`` changes no ids: ``▁`` is a token and no token
    holds it after its first character (so no merge or lattice path crosses the cut)."""
    pieces = [model.id_to_token(i) for i in range(model.vocab_size)]
    return SPACE in pieces and not any(SPACE in p[1:] for p in pieces if p)


class _PrecompiledNative:
    """HF tokenizers' ``Precompiled`` normalizer and ``Metaspace``'s replacement (and
    prepended ``▁``) as one native ``SpmNormalizer``, built on first use. A normalized
    text holding ``reject`` (HF's unknown piece spelled out) is left uncovered."""

    def __init__(self, core: Any, blob: bytes, prepend: bool, reject: str, split: bool) -> None:
        self._core = core
        self._blob = blob
        self._prepend = prepend
        self._reject = reject
        self._split = split  # the Unigram runs per Metaspace word (with a per-thread word cache)
        self._nat: Any = None

    def native_normalizer(self) -> Any:
        if self._nat is None and self._core is not None:
            self._nat = self._core.SpmNormalizer(self._blob, False, False, True, [], hf_precompiled=True,
                                                 hf_prepend=self._prepend, reject=self._reject,
                                                 hf_split=self._split)
        return self._nat


def _converted_plan(normalizer, pre, model, core) -> Plan | None:
    """A SentencePiece model converted to HF stages (see :class:`ConvertedSentencePiecePlan`)."""
    if type(model) is PieceBPE and not model.is_sentencepiece:
        if type(pre) is pretokenizers.Metaspace and normalizer is None:
            # transformers' LlamaConverter with legacy=False (newer Mistral files): spaces to
            # "▁" and one prepended by Metaspace's scheme, no normalizer.
            if pre.replacement != SPACE or (pre.split_on_replacement and not _cut_before_space_is_exact(model)):
                return None
            native = SentencePieceNormalizer("identity", add_dummy_prefix=False, remove_extra_whitespaces=False,
                                             escape_whitespaces=True)
            return ConvertedSentencePiecePlan(normalizer, pre, model, core, native, model.native_hf_encoder,
                                              pre.prepend_scheme)
        if pre is not None or normalizer is None:
            return None
        d = normalizer.to_dict()
        if d.get("type") != "Sequence" or d.get("normalizers") != _LLAMA_NORMALIZER:
            return None
        native = SentencePieceNormalizer("identity", add_dummy_prefix=True, remove_extra_whitespaces=False,
                                         escape_whitespaces=True)
        return ConvertedSentencePiecePlan(normalizer, pre, model, core, native, model.native_hf_encoder)
    if type(model) is Unigram and type(pre) is pretokenizers.Metaspace:
        if normalizer is not None and not isinstance(normalizer, normalizers.Precompiled):
            return None
        if pre.replacement != SPACE:
            return None
        unk = model.unk_id
        encoder = model.native_hf_lattice
        unk_text = None
        if unk is not None and model.types is None and model.min_score <= 0:  # see ConvertedSentencePiecePlan
            unk_text, unk = model.id_to_token(unk), None
        if pre.split_on_replacement and not _cut_before_space_is_exact(model):
            return None
        if pre.prepend_scheme in ("always", "first", "never") and (
            unk_text is None or (" " not in unk_text and SPACE not in unk_text)
        ):
            blob = normalizer.charsmap.blob if normalizer is not None else b""
            hf = _PrecompiledNative(core, blob, pre.prepend_scheme != "never", unk_text or "",
                                    pre.split_on_replacement)
            return ConvertedSentencePiecePlan(normalizer, pre, model, core, hf, encoder, pre.prepend_scheme, unk,
                                              unk_text, native_hf=True)
        native = SentencePieceNormalizer("identity", add_dummy_prefix=False, remove_extra_whitespaces=False,
                                         escape_whitespaces=True)
        return ConvertedSentencePiecePlan(normalizer, pre, model, core, native, encoder, pre.prepend_scheme, unk,
                                          unk_text)
    return None


def _sentencepiece_plan(normalizer, pre, model, core) -> Plan | None:
    if type(normalizer) is not SentencePieceNormalizer:
        return _converted_plan(normalizer, pre, model, core)
    if type(model) is PieceBPE and model.is_sentencepiece and not model.dropout:
        if pre is not None:
            if pre != pretokenizers.Split(SP_WORD_SPLIT, "merged_with_next"):
                return None
            types = model.types or []
            pieces = [model.id_to_token(i) for i in range(len(types))]
            user = [p for p, t in zip(pieces, types) if t == PieceType.USER_DEFINED]
            if not sentencepiece_split_is_exact(pieces, user):
                return None
        return SentencePiecePlan(normalizer, pre, model, core)
    if type(model) is Unigram and pre is None:
        return SentencePiecePlan(normalizer, pre, model, core)
    return None


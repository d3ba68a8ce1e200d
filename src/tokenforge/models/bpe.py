"""Byte-level BPE encoding by frozen merge rank (Sennrich et al., 2016; tiktoken).

Training records merges in order; encoding never counts anything. A piece of
UTF-8 bytes is first looked up whole (a hit is one token), and otherwise
split into single bytes whose adjacent pair with the lowest rank is merged,
leftmost first, until no adjacent pair forms a token. This is tiktoken's
rule: a pair merges when the concatenation of its bytes is a token, and its
rank is that token's rank.

Short pieces use the simple array scan (quadratic, but a piece of a few dozen
bytes fits in cache and this beats any bookkeeping). Long pieces (a run of a
million spaces is one piece under every GPT pattern) use a doubly linked list
and a heap of candidate pairs with lazy deletion, so a piece of n bytes costs
O(n log n) and worst-case inputs stay near-linear.

Here a token's rank is its id. That holds for GPT-2, for every tiktoken rank
file and for tokenizers trained by tokenforge, where ids are assigned in
merge order.

:class:`PieceBPE` is BPE over Unicode characters with string tokens: HF
tokenizers' ``BPE`` model (merge ranks, ``continuing_subword_prefix``,
``end_of_word_suffix``, ``<unk>`` fusing, ``<0xXX>`` byte fallback), and,
built with :meth:`PieceBPE.from_sentencepiece`, SentencePiece's BPE, which
merges by piece score instead of merge rank (Llama 2, Mistral).

BPE-dropout (Provilkov et al., 2020) is available on both
classes: ``encode_piece(piece, dropout=p, rng=random.Random(seed))``.
"""

from __future__ import annotations

import heapq
import math
import random
from types import MappingProxyType
from typing import Any, Collection, Mapping, Sequence

from .. import _native
from .. import bytelevel as _bytelevel
from ..encoding import utf8_char_starts
from ..errors import EncodeInputError, FileFormatError, InvalidArgumentError, UnknownTokenError
from ..limits import MAX_VOCAB_SIZE, check_token_sizes
from ..sentencepiece.bpe import SentencePieceTables, sp_merge, sp_tokenize
from ..sentencepiece.constants import PieceType, byte_piece
from .base import Model

#: Ids are stored as 32-bit values (one value is reserved as "no token").
MAX_ID = MAX_VOCAB_SIZE


def dense_ids(ids: Collection[int]) -> bool:
    """Are ``ids`` dense enough for tables indexed by id (the largest id at most twice the
    number of ids, plus 2**20)? Native tables are; a file may give sparse ids."""
    return not ids or max(ids) < 2 * len(ids) + (1 << 20)
#: Pieces longer than this many bytes use the heap merge.
SHORT_PIECE_BYTES = 128

_SINGLE_BYTES = [bytes([b]) for b in range(256)]


def bpe_merge_bytes(ranks: Mapping[bytes, int], piece: bytes) -> list[bytes]:
    """Split ``piece`` into token byte strings by rank-ordered merging.

    This is the reference algorithm; :meth:`BPE.encode_piece` gives its ids.

    >>> bpe_merge_bytes({b"a": 0, b"b": 1, b"c": 2, b"ab": 3, b"bc": 4}, b"abc")
    [b'ab', b'c']
    >>> bpe_merge_bytes({b"a": 0, b"b": 1, b"c": 2, b"bc": 3, b"ab": 4}, b"abc")
    [b'a', b'bc']
    """
    if len(piece) > SHORT_PIECE_BYTES:
        return _merge_long(ranks, piece)
    return _merge_short(ranks, piece)


def _merge_short(ranks: Mapping[bytes, int], piece: bytes) -> list[bytes]:
    parts = [_SINGLE_BYTES[b] for b in piece]
    get = ranks.get
    # rank of each adjacent pair; None when the pair is not a token
    pair_ranks = [get(parts[i] + parts[i + 1]) for i in range(len(parts) - 1)]
    while True:
        best = None
        best_i = -1
        for i, r in enumerate(pair_ranks):
            if r is not None and (best is None or r < best):
                best = r
                best_i = i
        if best is None:
            return parts
        parts[best_i : best_i + 2] = [parts[best_i] + parts[best_i + 1]]
        del pair_ranks[best_i]
        if best_i > 0:
            pair_ranks[best_i - 1] = get(parts[best_i - 1] + parts[best_i])
        if best_i < len(pair_ranks):
            pair_ranks[best_i] = get(parts[best_i] + parts[best_i + 1])


def _merge_long(ranks: Mapping[bytes, int], piece: bytes, p: float = 0.0, rng=None) -> list[bytes]:
    """Heap merge: lowest rank first, leftmost on ties, stale entries skipped lazily.

    With ``p > 0`` it is BPE-dropout (Provilkov et al., 2020): each candidate
    popped from the heap is skipped with probability ``p``, drawing from
    ``rng``; skipped candidates go back on the heap after the next merge that
    does happen (HF tokenizers' rule), so a candidate is dropped afresh at
    every merge step. ``p=1`` gives single bytes.
    """
    n = len(piece)
    get = ranks.get
    # Node i covers piece[i:nxt[i]]; dead nodes have nxt[i] == -1.
    nxt = list(range(1, n + 1))
    prv = list(range(-1, n - 1))
    heap: list[tuple[int, int, int]] = []
    for i in range(n - 1):
        r = get(piece[i : i + 2])
        if r is not None:
            heap.append((r, i, i + 2))
    heapq.heapify(heap)
    skipped: list[tuple[int, int, int]] = []
    rand = rng.random if p else None
    while heap:
        top = heapq.heappop(heap)
        r, i, end = top
        j = nxt[i]
        # stale if node i died or its right neighbour changed extent
        if j == -1 or j >= n or nxt[j] != end:
            continue
        if rand is not None:
            if rand() < p:
                skipped.append(top)
                continue
            for s in skipped:
                heapq.heappush(heap, s)
            skipped.clear()
        # merge node j into node i
        nxt[i] = end
        nxt[j] = -1
        if end < n:
            prv[end] = i
        q = prv[i]
        if q >= 0:
            rp = get(piece[q:end])
            if rp is not None:
                heapq.heappush(heap, (rp, q, end))
        if end < n:
            e2 = nxt[end]
            rn = get(piece[i:e2])
            if rn is not None:
                heapq.heappush(heap, (rn, i, e2))
    out = []
    i = 0
    while i < n:
        out.append(piece[i : nxt[i]])
        i = nxt[i]
    return out


class BPE(Model):
    """A byte-level BPE model: token bytes with their ids (= merge ranks), and
    optionally the merges that produced them.

    The vocabulary maps every id to its bytes. Two ids may carry the same bytes
    (a trainer can learn the same string through two different merges, as the
    CS336 reference does); encoding then always produces the lower id, and
    decoding accepts both.
    """

    __slots__ = ("_vocab", "_ranks", "_merges")
    type_name = "bpe"

    def __init__(
        self,
        vocab: Mapping[int, bytes],
        merges: Sequence[tuple[bytes, bytes]] | None = None,
    ) -> None:
        ranks: dict[bytes, int] = {}
        clean: dict[int, bytes] = {}
        for i, tok in sorted(vocab.items()):
            if not isinstance(i, int) or isinstance(i, bool) or not 0 <= i < MAX_ID:
                raise FileFormatError(f"token id must be an int in 0..{MAX_ID - 1}, got {i!r}")
            if not isinstance(tok, (bytes, bytearray)) or len(tok) == 0:
                raise FileFormatError(f"token {i} must be non-empty bytes, got {tok!r}")
            tok = bytes(tok)
            clean[i] = tok
            ranks.setdefault(tok, i)
        check_token_sizes(clean.values(), clean.keys())
        missing = [b for b in range(256) if _SINGLE_BYTES[b] not in ranks]
        if missing:
            raise FileFormatError(
                f"byte-level BPE needs all 256 single bytes in the vocabulary; "
                f"{len(missing)} missing, first is byte 0x{missing[0]:02X}"
            )
        merge_list: list[tuple[bytes, bytes]] | None = None
        if merges is not None:
            merge_list = []
            for n, pair in enumerate(merges):
                if len(pair) != 2:
                    raise FileFormatError(f"merge {n} must be a pair, got {pair!r}")
                a, b = bytes(pair[0]), bytes(pair[1])
                for part in (a, b, a + b):
                    if part not in ranks:
                        raise FileFormatError(
                            f"merge {n} ({a!r}, {b!r}): {part!r} is not in the vocabulary"
                        )
                merge_list.append((a, b))
        self._vocab = clean
        self._ranks = ranks
        self._merges = merge_list

    @classmethod
    def from_ranks(cls, ranks: Mapping[bytes, int]) -> "BPE":
        """Build from tiktoken-style ``{token_bytes: rank}``."""
        vocab = {r: tok for tok, r in ranks.items()}
        if len(vocab) != len(ranks):
            seen: dict[int, bytes] = {}
            for tok, r in ranks.items():
                if r in seen:
                    raise FileFormatError(f"rank {r} is given to both {seen[r]!r} and {tok!r}")
                seen[r] = tok
        return cls(vocab)

    @classmethod
    def _from_parsed_ranks(cls, ranks: dict[bytes, int]) -> "BPE":
        """``from_ranks`` for a dict that :func:`~tokenforge.formats.tiktoken.parse_ranks`
        just made (non-empty bytes, distinct non-negative int ranks) and that nobody
        else holds: the load path of every rank file, so the per-entry checks and
        copies of ``__init__`` are skipped."""
        if max(ranks.values()) >= MAX_ID or any(_SINGLE_BYTES[b] not in ranks for b in range(256)):
            return cls.from_ranks(ranks)  # let __init__ say what is wrong
        check_token_sizes(ranks.keys(), ranks.values())
        vocab = {r: tok for tok, r in ranks.items()}
        obj = cls.__new__(cls)
        obj._vocab = vocab if list(vocab) == sorted(vocab) else dict(sorted(vocab.items()))
        obj._ranks = ranks
        obj._merges = None
        return obj

    @classmethod
    def from_byte_level_pieces(
        cls, model: "PieceBPE", skip_ids: frozenset[int] = frozenset(), check_merges: bool = True,
        tables: "tuple[dict[int, bytes], dict[bytes, int]] | None" = None,
    ) -> "BPE | None":
        """The rank model giving the same ids as HF's byte-level ``BPE`` model ``model``
        (tokens in GPT-2's printable alphabet, merges by priority), or ``None`` when rank
        merging could differ. Ids in ``skip_ids`` (added tokens, matched before the model
        runs) are left out.

        HF merges pairs by merge priority, tiktoken-style BPE by the rank of the merged
        token; they agree when merge ``k`` makes a token whose id grows with ``k``, every
        multi-byte token is made by a merge (with ``ignore_merges``, which looks a piece up
        whole first as rank BPE does: or is no two tokens joined), all 256 bytes are
        tokens, and the merge list is
        the one the ranks imply (:meth:`first_underived_merge`; ``check_merges=False``
        leaves that check to a caller that runs it natively). ``tables``: what
        :func:`byte_level_tables` gave for the same arguments, when the caller has it.
        """
        if tables is None:
            tables = byte_level_tables(model, skip_ids)
        if tables is None:
            return None
        vocab, ranks = tables
        decode_string = _bytelevel.decode_string
        merges: list[tuple[bytes, bytes]] = []
        last = -1
        made: set[bytes] = set()
        for a, b in model.merges:
            try:
                left, right = decode_string(a), decode_string(b)
            except KeyError:
                return None
            r = ranks.get(left + right)
            if r is None or r <= last or left not in ranks or right not in ranks:
                return None
            last = r
            made.add(left + right)
            merges.append((left, right))
        if sum(1 for t in ranks if len(t) == 1) != 256:
            return None
        for t in ranks:
            if len(t) > 1 and t not in made:
                # rank BPE would reach t by merging two of its parts; HF only by a merge.
                # With ignore_merges HF still matches t as a whole piece, as rank BPE does,
                # so t is harmless there when no two tokens make it.
                if not model.ignore_merges or any(t[:k] in ranks and t[k:] in ranks for k in range(1, len(t))):
                    return None
        obj = cls.__new__(cls)
        obj._vocab = vocab if list(vocab) == sorted(vocab) else dict(sorted(vocab.items()))
        obj._ranks = ranks
        obj._merges = merges
        if check_merges and obj.first_underived_merge() >= 0:
            return None
        return obj

    @classmethod
    def byte_level_pair_model(
        cls, model: "PieceBPE", skip_ids: frozenset[int] = frozenset(),
        tables: "tuple[dict[int, bytes], dict[bytes, int]] | None" = None,
    ) -> "tuple[BPE, list[tuple[int, int, int]]] | None":
        """HF's byte-level ``BPE`` model ``model`` as tables for merging by merge priority
        (the native core's pair mode): ``(vocabulary model, merges)``, where the vocabulary
        model maps each token's bytes to its id (for whole-piece lookup and decoding, not
        for rank merging) and ``merges`` lists ``(left id, right id, result id)`` by merge
        index (a repeated pair keeps its last index, as HF does). ``None`` when the model
        is not plain byte-level BPE: dropout, an unknown token, prefixes or suffixes, byte
        fallback, a token that is not in GPT-2's byte alphabet, two tokens with the same
        bytes, a single byte that is not a token, or a merge that names an id in
        ``skip_ids`` (added tokens). ``tables``: as for :meth:`from_byte_level_pieces`."""
        if tables is None:
            tables = byte_level_tables(model, skip_ids)
        if tables is None:
            return None
        vocab, ranks = tables
        if sum(1 for t in ranks if len(t) == 1) != 256:
            return None
        merges = []
        for (a, b), (n, r) in model._merge_map.items():
            if a not in vocab or b not in vocab or r not in vocab:
                return None
            merges.append((n, a, b, r))
        merges.sort()
        obj = cls.__new__(cls)
        obj._vocab = vocab if list(vocab) == sorted(vocab) else dict(sorted(vocab.items()))
        obj._ranks = ranks
        obj._merges = None
        return obj, [(a, b, r) for _, a, b, r in merges]

    def first_underived_merge(self) -> int:
        """Index of the first merge ``(a, b)`` such that merging the bytes of ``a + b`` with
        the tokens of lower rank does not give exactly ``[a, b]``, or -1 (also for a model
        without merges).

        When every merge passes, the merge list is the one the ranks imply (the merges a
        tiktoken rank file is converted to), so merging by merge priority and merging by
        rank give the same ids. A list that fails (``b c``, ``a b``, ``ab c``: merging by
        the list turns ``abc`` into ``a bc`` and stops, merging by rank reaches ``abc``)
        cannot be run by rank.

        >>> base = {i: bytes([i]) for i in range(256)}
        >>> BPE({**base, 256: b"bc", 257: b"ab", 258: b"abc"}, [(b"b", b"c"), (b"a", b"b"), (b"ab", b"c")]).first_underived_merge()
        2
        >>> BPE({**base, 256: b"ab", 257: b"abc"}, [(b"a", b"b"), (b"ab", b"c")]).first_underived_merge()
        -1
        """
        ranks = self._ranks
        for k, (a, b) in enumerate(self._merges or ()):
            if bpe_merge_bytes(_RanksBelow(ranks, ranks[a + b]), a + b) != [a, b]:
                return k
        return -1

    def native_encoder(
        self, extra_token_bytes: Mapping[int, bytes] | None = None, scanner: int = -1, backend: str = "auto",
        pair_merges: Sequence[tuple[int, int, int]] | None = None, ignore_merges: bool = True,
    ) -> Any:
        """The native encoder of this model (``_core.CoreBPE``: rank merge, the scanner of a
        named split pattern when ``scanner >= 0``, batches on threads, decoding), or ``None``
        on the Python backend. ``extra_token_bytes`` adds ids that decode to given bytes
        (a tokenizer's special tokens). The core keeps its tables by id, so a vocabulary
        whose ids are sparse (an id far past the number of tokens, as a file may give) has
        no native encoder: its tables would cost memory in the largest id, not in the
        number of tokens.

        ``pair_merges`` (``(left id, right id, result id)`` by merge index, see
        :meth:`byte_level_pair_model`) makes the core merge by merge priority, as HF's
        ``BPE`` model does, instead of by rank; ``ignore_merges=False`` then merges a piece
        that is a token too, instead of taking it whole."""
        core = _native.core(backend)
        if core is None:
            return None
        decoder = dict(self._vocab)
        if extra_token_bytes:
            decoder.update(extra_token_bytes)
        if not dense_ids(decoder):
            return None
        if pair_merges is not None:
            return core.CoreBPE(self._ranks, decoder, scanner, pair_merges, ignore_merges)
        return core.CoreBPE(self._ranks, decoder, scanner)

    # -- read-only views -------------------------------------------------
    @property
    def vocab(self) -> Mapping[int, bytes]:
        """``{id: token_bytes}`` (read-only view)."""
        return MappingProxyType(self._vocab)

    @property
    def ranks(self) -> Mapping[bytes, int]:
        """``{token_bytes: rank}``, tiktoken's ``mergeable_ranks`` (read-only view)."""
        return MappingProxyType(self._ranks)

    @property
    def merges(self) -> list[tuple[bytes, bytes]] | None:
        """The merges in rank order, or ``None`` when the model came from ranks only."""
        return None if self._merges is None else list(self._merges)

    def __len__(self) -> int:
        return len(self._vocab)

    def max_id(self) -> int:
        return max(self._vocab)

    # -- the model contract: str pieces, string tokens ---------------------
    def encode_piece(self, piece: str, dropout: float | None = None, rng: random.Random | None = None) -> list[int]:
        """Ids of one pre-token given as text: its UTF-8 bytes merged by rank
        (see :meth:`encode_bytes`).

        >>> bpe = BPE({**{b: bytes([b]) for b in range(256)}, 256: b"ab"})
        >>> bpe.encode_piece("abc")
        [256, 99]
        """
        if not isinstance(piece, str):
            raise EncodeInputError(
                f"encode_piece takes a str piece, got {type(piece).__name__}; use encode_bytes for bytes"
            )
        return self.encode_bytes(piece.encode("utf-8", "surrogatepass"), dropout, rng)

    def tokenize(self, piece: str) -> list[tuple[int, int, int]]:
        """``(id, start, end)`` for each token of ``piece``, in code points of ``piece``.
        A token holding only part of a character's bytes gets the span of that
        whole character (its neighbours share it).

        >>> bpe = BPE({**{b: bytes([b]) for b in range(256)}, 256: b"ab"})
        >>> bpe.tokenize("ab\u00e9")
        [(256, 0, 2), (195, 2, 3), (169, 2, 3)]
        """
        data = piece.encode("utf-8", "surrogatepass")
        ids = self.encode_bytes(data)
        starts = utf8_char_starts(piece)
        out = []
        pos = 0
        ci = 0
        for i in ids:
            end = pos + len(self._vocab[i])
            while starts[ci + 1] <= pos:
                ci += 1
            cj = ci
            while starts[cj + 1] < end:
                cj += 1
            out.append((i, ci, cj + 1))
            pos = end
        return out

    def id_to_token(self, token_id: int) -> str | None:
        """The token in GPT-2's printable form (``vocab.json``'s ``"Ġthe"``), or ``None``."""
        b = self._vocab.get(token_id) if type(token_id) is int else None
        return None if b is None else _bytelevel.encode_bytes(b)

    def token_to_id(self, token: str | bytes) -> int | None:
        """Id of a token given as raw ``bytes`` or in GPT-2's printable form."""
        if isinstance(token, (bytes, bytearray)):
            return self._ranks.get(bytes(token))
        try:
            return self._ranks.get(_bytelevel.decode_string(token))
        except KeyError:
            return None

    def get_vocab(self) -> dict[str, int]:
        """``{printable token: id}`` as in ``vocab.json``."""
        enc = _bytelevel.encode_bytes
        return {enc(t): i for i, t in self._vocab.items()}

    @property
    def vocab_size(self) -> int:
        return len(self._vocab)

    # -- encoding bytes --------------------------------------------------------
    def encode_bytes(self, piece: bytes, dropout: float | None = None, rng: random.Random | None = None) -> list[int]:
        """Ids of one pre-token's bytes. A piece that is a token is that one id.

        ``dropout=p`` turns on BPE-dropout: every merge candidate is skipped
        with probability ``p`` at each merge step, drawing from ``rng`` (a
        :class:`random.Random`; a fresh unseeded one when omitted), and the
        whole-piece shortcut is not taken. ``p=0`` (or ``None``) is the
        ordinary encoding; ``p=1`` gives one id per byte.

        >>> import random
        >>> bpe = BPE({**{b: bytes([b]) for b in range(256)}, 256: b"ab"})
        >>> bpe.encode_bytes(b"ab"), bpe.encode_bytes(b"ab", dropout=1.0, rng=random.Random(0))
        ([256], [97, 98])
        """
        ranks = self._ranks
        if dropout is None or _check_dropout(dropout) == 0.0:
            r = ranks.get(piece)
            if r is not None:
                return [r]
            return [ranks[p] for p in bpe_merge_bytes(ranks, piece)]
        if rng is None:
            rng = random.Random()
        return [ranks[t] for t in _merge_dropout_bytes(ranks, piece, float(dropout), rng)]

    def token_bytes(self, token_id: int) -> bytes | None:
        return self._vocab.get(token_id)

    def derive_merges(self) -> list[tuple[bytes, bytes]]:
        """The merges, derived from the ranks when the model has none.

        Each multi-byte token of rank r must split into exactly two tokens when
        encoded with the ranks below r; otherwise the rank table cannot be
        written as merges and :class:`FileFormatError` says which token.
        """
        if self._merges is not None:
            return list(self._merges)
        merges: list[tuple[bytes, bytes]] = []
        ranks = self._ranks
        # Fast path: merging a token's bytes with every rank except its own stops at
        # the two parts of its last merge, along the same path as with the lower
        # ranks only, whenever the table is consistent; the result is checked, and
        # anything else goes through the exact rank-bounded merge below.
        without = dict(ranks)
        for r in sorted(self._vocab):
            tok = self._vocab[r]
            if len(tok) == 1 or ranks.get(tok) != r:
                continue
            del without[tok]
            parts = bpe_merge_bytes(without, tok)
            without[tok] = r
            if len(parts) == 2 and ranks[parts[0]] < r and ranks[parts[1]] < r:
                merges.append((parts[0], parts[1]))
                continue
            below = _RanksBelow(ranks, r)
            parts = bpe_merge_bytes(below, tok)
            if len(parts) != 2:
                raise FileFormatError(
                    f"token {r} ({tok!r}) is not the merge of two lower-ranked tokens "
                    f"(lower ranks give {len(parts)} parts), so it has no merges.txt form"
                )
            merges.append((parts[0], parts[1]))
        return merges

    def to_dict(self) -> dict:
        from binascii import b2a_base64

        out: dict = {
            "type": "bpe",  # base64 as b64encode gives it, without its per-call overhead
            "vocab": [[i, b2a_base64(t, newline=False).decode("ascii")] for i, t in sorted(self._vocab.items())],
        }
        if self._merges is not None:
            out["merges"] = [[self._ranks[a], self._ranks[b]] for a, b in self._merges]
        return out

    @classmethod
    def from_dict(cls, data: dict) -> "BPE":
        import binascii
        from base64 import b64decode

        if data.get("type") != "bpe":
            raise FileFormatError(f"model type {data.get('type')!r} is not supported (known: 'bpe')")
        raw_vocab = data.get("vocab")
        if not isinstance(raw_vocab, list):
            raise FileFormatError("model.vocab must be a list of [id, base64] pairs")
        vocab: dict[int, bytes] = {}
        for n, entry in enumerate(raw_vocab):
            try:
                i, b64 = entry
                tok = b64decode(b64, validate=True)
            except (TypeError, ValueError, binascii.Error):
                raise FileFormatError(f"model.vocab[{n}] is not an [id, base64] pair: {entry!r}") from None
            if i in vocab:
                raise FileFormatError(f"model.vocab[{n}]: id {i} appears twice")
            vocab[i] = tok
        merges = None
        if "merges" in data:
            merges = []
            for n, entry in enumerate(data["merges"]):
                try:
                    a, b = entry
                    merges.append((vocab[a], vocab[b]))
                except (TypeError, ValueError, KeyError):
                    raise FileFormatError(f"model.merges[{n}] is not a pair of known ids: {entry!r}") from None
        return cls(vocab, merges)


def byte_level_tables(model: "PieceBPE", skip_ids: frozenset[int]) -> tuple[dict[int, bytes], dict[bytes, int]] | None:
    """``({id: bytes}, {bytes: id})`` of a plain byte-level HF ``BPE`` model's tokens (ids
    in ``skip_ids`` left out), or ``None`` when the model is not one (see
    :meth:`BPE.from_byte_level_pieces`)."""
    if model.dropout or model.unk_token or model.continuing_subword_prefix or model.end_of_word_suffix:
        return None
    if model.byte_fallback or model.is_sentencepiece:
        return None
    vocab: dict[int, bytes] = {}
    decode_string = _bytelevel.decode_string
    for tok, i in model.get_vocab().items():
        if i in skip_ids:
            continue
        try:
            vocab[i] = decode_string(tok)
        except KeyError:
            return None
    ranks: dict[bytes, int] = {}
    for i, b in vocab.items():
        if b in ranks or not 0 <= i < MAX_ID:
            return None
        ranks[b] = i
    return vocab, ranks


class _RanksBelow:
    """A view of ``ranks`` restricted to ranks below a bound (for derive_merges)."""

    __slots__ = ("_ranks", "_bound")

    def __init__(self, ranks: Mapping[bytes, int], bound: int) -> None:
        self._ranks = ranks
        self._bound = bound

    def get(self, key: bytes, default=None):
        r = self._ranks.get(key)
        return r if r is not None and r < self._bound else default

    def __getitem__(self, key: bytes) -> int:
        r = self.get(key)
        if r is None:
            raise UnknownTokenError(key)
        return r


# ---------------------------------------------------------------------------
# BPE-dropout for byte-level BPE
# ---------------------------------------------------------------------------


def _merge_dropout_bytes(ranks: Mapping[bytes, int], piece: bytes, p: float, rng) -> list[bytes]:
    """:func:`bpe_merge_bytes` with BPE-dropout: the heap merge with ``p`` (see :func:`_merge_long`);
    ``p=0`` gives exactly :func:`bpe_merge_bytes`."""
    return _merge_long(ranks, piece, p, rng)


def _check_dropout(dropout, error: type = InvalidArgumentError) -> float:
    """``dropout`` as a float in [0, 1] (``None`` is 0); :class:`InvalidArgumentError` otherwise."""
    if dropout is None:
        return 0.0
    if isinstance(dropout, bool) or not isinstance(dropout, (int, float)) or not 0.0 <= dropout <= 1.0:
        raise error(f"dropout must be a probability in [0, 1], got {dropout!r}")
    return float(dropout)



# ---------------------------------------------------------------------------
# BPE over Unicode symbols: HF tokenizers' BPE model and SentencePiece BPE
# ---------------------------------------------------------------------------

#: Pieces with at most this many symbols use the array scan instead of the heap.
SHORT_PIECE_SYMBOLS = 48

#: The native HF merge holds ids and merge indices below 2**21 (its pair table's slots).
_NATIVE_MAX_ID = 1 << 21


def _parse_merge(n: int, entry) -> tuple[str, str]:
    if isinstance(entry, str):
        parts = entry.split(" ", 1)
        if len(parts) == 2:
            return parts[0], parts[1]
    elif isinstance(entry, (list, tuple)) and len(entry) == 2 and all(isinstance(x, str) for x in entry):
        return entry[0], entry[1]
    raise FileFormatError(f"model.merges[{n}] must be \"a b\" or [a, b], got {entry!r}")


class PieceBPE(Model):
    """BPE over Unicode symbols with string pieces: HF tokenizers' ``BPE``
    model, and (through :meth:`from_sentencepiece`) SentencePiece's BPE.

    **HF semantics** (the constructor). A piece is split into characters; every
    character but the first gets ``continuing_subword_prefix``, the last gets
    ``end_of_word_suffix``. A character not in the vocabulary becomes its
    ``<0xXX>`` byte tokens when ``byte_fallback`` is on and they all exist,
    else ``unk_token`` (runs fused into one when ``fuse_unk``), else it is
    dropped (as HF does without an unknown token). Then the adjacent pair with
    the lowest merge rank is merged, leftmost first among equal ranks, until
    no adjacent pair is a merge. With ``ignore_merges`` a piece that is a
    vocabulary entry is that one token.

    **SentencePiece semantics** (:meth:`from_sentencepiece`, as
    ``bpe_model.cc``). There are no merges: the adjacent pair whose
    concatenation is a piece with the highest score is merged, leftmost first
    on equal scores. USER_DEFINED pieces are matched whole (longest first)
    before merging and never merged further; CONTROL, UNKNOWN and BYTE pieces
    never come out of merging; an UNUSED piece that comes out is split back
    into the two symbols it was last formed from. A symbol that is not a
    piece is ``<unk>`` (consecutive ones fused into one, as
    ``SentencePieceProcessor`` does) or, with byte fallback, its UTF-8 bytes
    as ``<0xXX>`` pieces. Scores are compared as the float32 values in the
    file. (Deriving merge ranks from scores, as HF's converter does, is not
    equivalent when two candidates carry the same score, so the scores are
    used directly.)

    Both use a heap of candidate pairs with lazy deletion, so a piece of n
    symbols costs O(n log n); short pieces use a plain array scan. A
    SentencePiece text (often a whole line) is cut before each ``▁`` whose
    preceding character never precedes ``▁`` inside a piece: no merge spans
    such a cut, so each part (about a word) is encoded once and cached. This
    is skipped for models with UNUSED or USER_DEFINED pieces, and under dropout.
    Without dropout the SentencePiece semantics run in the native core
    (``_core.SpmBPE``, ``_core/spm_bpe.h``, which also memoises parts across calls)
    when it is built; ``TOKENFORGE_BACKEND=python`` selects the Python code
    here, which is its reference.

    **BPE-dropout.** ``dropout=p`` (here, or per call in :meth:`encode_piece`)
    skips each merge candidate with probability ``p`` when it comes up;
    skipped candidates return to the heap after the next merge that happens
    (HF's rule, also used for the SentencePiece semantics). Draws come from
    ``random.Random(seed)``; ``p=0`` is the ordinary result, ``p=1`` leaves
    single characters.

    >>> m = PieceBPE({"<unk>": 0, "a": 1, "b": 2, "c": 3, "ab": 4, "abc": 5},
    ...              ["a b", ["ab", "c"]], unk_token="<unk>")
    >>> m.encode_piece("abcab"), m.encode_piece("xab")
    ([5, 4], [0, 4])
    >>> sp = PieceBPE.from_sentencepiece(["<unk>", "▁", "a", "b", "▁a", "ab"], [0, -1, -2, -3, -4, -5],
    ...                                  [2, 1, 1, 1, 1, 1])
    >>> sp.tokenize("▁ab")
    [(4, 0, 2), (3, 2, 3)]
    """

    __slots__ = (
        "_vocab",
        "_id_to_token",
        "_merges",
        "_merge_map",
        "_sp",
        "unk_token",
        "continuing_subword_prefix",
        "end_of_word_suffix",
        "fuse_unk",
        "byte_fallback",
        "ignore_merges",
        "dropout",
        "seed",
        "_rng",
        "_cache",
        "_native",
    )
    type_name = "BPE"
    type_aliases = ("SentencePieceBPE",)

    def __init__(
        self,
        vocab: Mapping[str, int],
        merges: Sequence[str | Sequence[str]] = (),
        *,
        unk_token: str | None = None,
        continuing_subword_prefix: str | None = None,
        end_of_word_suffix: str | None = None,
        fuse_unk: bool = False,
        byte_fallback: bool = False,
        ignore_merges: bool = False,
        dropout: float | None = None,
        seed: int | None = None,
    ) -> None:
        clean: dict[str, int] = {}
        id_to_token: dict[int, str] = {}
        for tok, i in vocab.items():
            if not isinstance(tok, str):
                raise FileFormatError(f"model.vocab: token {tok!r} must be a str")
            if not isinstance(i, int) or isinstance(i, bool) or not 0 <= i < MAX_ID:
                raise FileFormatError(f"model.vocab[{tok!r}]: id must be an int in 0..{MAX_ID - 1}, got {i!r}")
            clean[tok] = i
            id_to_token.setdefault(i, tok)
        check_token_sizes(clean.keys(), clean.values())
        prefix_len = len(continuing_subword_prefix) if continuing_subword_prefix else 0
        merge_list: list[tuple[str, str]] = []
        merge_map: dict[tuple[int, int], tuple[int, int]] = {}
        for n, entry in enumerate(merges):
            a, b = _parse_merge(n, entry)
            new = a + b[prefix_len:]
            for part in (a, b, new):
                if part not in clean:
                    raise FileFormatError(f"model.merges[{n}] ({a!r}, {b!r}): {part!r} is not in the vocabulary")
            merge_list.append((a, b))
            merge_map[(clean[a], clean[b])] = (n, clean[new])  # a repeated merge: the later rank wins, as in HF
        if unk_token is not None and not isinstance(unk_token, str):
            raise FileFormatError(f"model.unk_token must be a str or null, got {unk_token!r}")
        self._vocab = clean
        self._id_to_token = id_to_token
        self._merges = merge_list
        self._merge_map = merge_map
        self._sp: SentencePieceTables | None = None
        self.unk_token = unk_token
        self.continuing_subword_prefix = continuing_subword_prefix
        self.end_of_word_suffix = end_of_word_suffix
        self.fuse_unk = bool(fuse_unk)
        self.byte_fallback = bool(byte_fallback)
        self.ignore_merges = bool(ignore_merges)
        self.dropout = None if dropout is None else _check_dropout(dropout)
        self.seed = seed
        self._rng = random.Random(seed)
        self._cache: dict[str, list[tuple[int, int, int]]] = {}
        self._native: Any = None

    @classmethod
    def from_sentencepiece(
        cls,
        pieces: Sequence[str],
        scores: Sequence[float],
        types: Sequence[int] | None = None,
        *,
        byte_fallback: bool = False,
        dropout: float | None = None,
        seed: int | None = None,
    ) -> "PieceBPE":
        """A model that encodes as sentencepiece's BPE (``bpe_model.cc``).

        ``pieces[i]`` has id ``i``; ``types`` are
        ``ModelProto.SentencePiece.Type`` values (default all NORMAL except
        that ``"<unk>"`` is UNKNOWN). The unknown token is the UNKNOWN piece.
        """
        pieces = list(pieces)
        scores = list(scores)
        for n, sc in enumerate(scores):
            # A NaN score compares false with everything: sentencepiece's merge order becomes
            # undefined, so such a model is refused, as the Unigram loader refuses it.
            if isinstance(sc, bool) or not isinstance(sc, (int, float)) or math.isnan(sc):
                name = pieces[n] if n < len(pieces) else "?"
                raise FileFormatError(f"score of piece {n} ({name!r}) must be a number, got {sc!r}")
        if types is None:
            types = [PieceType.UNKNOWN if p == "<unk>" else PieceType.NORMAL for p in pieces]
        sp = SentencePieceTables(pieces, scores, list(types), bool(byte_fallback))
        self = cls.__new__(cls)
        self._vocab = {}
        for i, p in enumerate(pieces):
            self._vocab.setdefault(p, i)
        # token_to_id looks up reserved pieces first, as PieceToId does
        self._vocab.update(sp.reserved)
        self._id_to_token = dict(enumerate(pieces))
        self._merges = []
        self._merge_map = {}
        self._sp = sp
        self.unk_token = pieces[sp.unk_id]
        self.continuing_subword_prefix = None
        self.end_of_word_suffix = None
        self.fuse_unk = True
        self.byte_fallback = bool(byte_fallback)
        self.ignore_merges = False
        self.dropout = None if dropout is None else _check_dropout(dropout, FileFormatError)
        self.seed = seed
        self._rng = random.Random(seed)
        self._cache = {}
        self._native = None
        return self

    def __getstate__(self) -> dict:
        return {k: getattr(self, k) for k in self.__slots__ if k not in ("_cache", "_native")}

    def __setstate__(self, state: dict) -> None:
        for k, v in state.items():
            setattr(self, k, v)
        self._cache = {}
        self._native = None

    # -- views ---------------------------------------------------------------
    @property
    def is_sentencepiece(self) -> bool:
        """True for a model built by :meth:`from_sentencepiece` (score-driven)."""
        return self._sp is not None

    @property
    def merges(self) -> list[tuple[str, str]]:
        """The merges in rank order (empty for a SentencePiece model)."""
        return list(self._merges)

    @property
    def scores(self) -> list[float] | None:
        """Piece scores by id (SentencePiece models), else ``None``."""
        return None if self._sp is None else list(self._sp.scores)

    @property
    def types(self) -> list[int] | None:
        """Piece types by id (SentencePiece models), else ``None``."""
        return None if self._sp is None else list(self._sp.types)

    @property
    def unk_id(self) -> int | None:
        if self._sp is not None:
            return self._sp.unk_id
        return None if self.unk_token is None else self._vocab.get(self.unk_token)

    @property
    def vocab_size(self) -> int:
        return len(self._id_to_token)

    def get_vocab(self) -> dict[str, int]:
        return dict(self._vocab)

    def token_to_id(self, token: str) -> int | None:
        return self._vocab.get(token)

    def id_to_token(self, id: int) -> str | None:
        return self._id_to_token.get(id)

    def __len__(self) -> int:
        return self.vocab_size

    # -- encoding ------------------------------------------------------------
    def encode_piece(self, piece: str, dropout: float | None = None, rng: random.Random | None = None) -> list[int]:
        """Ids of one pre-token (already normalized and pre-tokenized).

        ``dropout`` overrides the model's dropout for this call; ``rng`` is the
        :class:`random.Random` to draw from (default: the model's own,
        seeded with ``seed``).
        """
        if self._sp is not None and dropout is None and not self.dropout and isinstance(piece, str):
            nat = self.native_encoder()
            if nat is not None:
                return nat.encode(piece)
        return [t[0] for t in self.tokenize(piece, dropout=dropout, rng=rng)]

    def native_encoder(self) -> Any:
        """The native SentencePiece merge (``_core.SpmBPE``), or ``None`` on the Python backend."""
        core = _native.core()
        if core is None:
            return None
        nat = self._native
        if nat is None:
            sp = self._sp
            assert sp is not None
            pieces = [self._id_to_token[i] for i in range(len(sp.types))]
            nat = self._native = core.SpmBPE(pieces, sp.scores, sp.types, sp.unk_id, sp.byte_ids)
        return nat

    def native_hf_encoder(self) -> Any:
        """The native HF merge of this model (``_core.SpmBPE`` built with the merges: HF's
        ``Word::merge_all``, the algorithm of :meth:`_hf_tokenize`), or ``None`` on the
        Python backend and for what it does not cover: a SentencePiece model, dropout,
        ``ignore_merges``, a subword prefix or suffix, an unknown token missing from the
        vocabulary, ids that are not ``0..n-1`` with one token each, 2**21 tokens or merges
        or more."""
        core = _native.core()
        if core is None or self._sp is not None or self.dropout or self.ignore_merges:
            return None
        if self.continuing_subword_prefix or self.end_of_word_suffix:
            return None
        nat = self._native
        if nat is None:
            vocab = self._vocab
            n = len(vocab)
            if len(self._id_to_token) != n or any(i not in self._id_to_token for i in range(n)):
                return None
            unk_id = -1
            if self.unk_token is not None:
                if self.unk_token not in vocab:
                    return None
                unk_id = vocab[self.unk_token]
            byte_ids = [vocab.get(byte_piece(b), -1) for b in range(256)] if self.byte_fallback else None
            if n >= _NATIVE_MAX_ID or len(self._merge_map) >= _NATIVE_MAX_ID:
                return None
            flat: list[int] = []
            for (a, b), (rank, new) in sorted(self._merge_map.items(), key=lambda kv: kv[1][0]):
                flat += (a, b, rank, new)
            pieces = [self._id_to_token[i] for i in range(n)]
            nat = self._native = core.SpmBPE(pieces, (), (), unk_id, byte_ids, merges=flat, fuse_unk=self.fuse_unk)
        return nat

    def tokenize(
        self, piece: str, dropout: float | None = None, rng: random.Random | None = None
    ) -> list[tuple[int, int, int]]:
        """``(id, start, end)`` per token, code-point offsets inside ``piece``.

        Byte-fallback tokens of one character all carry that character's span
        (as HF does); a fused run of unknown characters carries the run's span.
        """
        if not isinstance(piece, str):
            raise EncodeInputError(f"piece must be str, got {type(piece).__name__}")
        p = self.dropout or 0.0 if dropout is None else _check_dropout(dropout)
        if p > 0.0 and rng is None:
            rng = self._rng
        if not piece:
            return []
        if self._sp is not None:
            if p == 0.0:
                nat = self.native_encoder()
                if nat is not None:
                    return nat.tokenize(piece)
            return self._sp_tokenize(piece, p, rng)
        return self._hf_tokenize(piece, p, rng)

    def merge_trace(
        self, piece: str, lookup: bool = True
    ) -> tuple[list[tuple[int, int, int]], list[tuple[int, str, str, int, float]]]:
        """:meth:`tokenize` of ``piece`` (no dropout) with every merge logged in the order it happens.

        Returns ``(tokens, merges)``; each merge is ``(start, left, right, id, priority)``:
        the code-point offset in ``piece`` where the pair starts, the two vocabulary
        strings merged, the id they became, and what chose the pair: the merge rank
        (HF: its index in ``merges``, lowest first) or, for a SentencePiece model, the
        score of the new piece (highest first). ``lookup=False`` skips the whole-piece
        lookup of ``ignore_merges``, to show where the merges alone stop. Runs the Python
        loops, which the native core is tested against.

        >>> m = PieceBPE({"a": 0, "b": 1, "c": 2, "ab": 3, "abc": 4}, ["a b", "ab c"])
        >>> m.merge_trace("abc")
        ([(4, 0, 3)], [(0, 'a', 'b', 3, 0), (0, 'ab', 'c', 4, 1)])
        """
        if not isinstance(piece, str):
            raise EncodeInputError(f"piece must be str, got {type(piece).__name__}")
        log: list[tuple[int, str, str, int, float]] = []
        if not piece:
            return [], log
        if self._sp is not None:
            return sp_merge(self._sp, piece, 0.0, None, log), log
        return self._hf_tokenize(piece, 0.0, None, log, lookup), log

    # HF semantics ---------------------------------------------------------
    def _hf_tokenize(
        self, piece: str, p: float, rng, log: list | None = None, lookup: bool = True
    ) -> list[tuple[int, int, int]]:
        vocab = self._vocab
        if self.ignore_merges and lookup:
            i = vocab.get(piece)
            if i is not None:
                return [(i, 0, len(piece))]
        prefix = self.continuing_subword_prefix
        suffix = self.end_of_word_suffix
        unk_id = None if self.unk_token is None else vocab.get(self.unk_token)
        last = len(piece) - 1
        syms: list[list[int]] = []  # [id, start, end]
        unk: list[int] | None = None
        for k, ch in enumerate(piece):
            s = ch
            if prefix and k > 0:
                s = prefix + s
            if suffix and k == last:
                s = s + suffix
            i = vocab.get(s)
            if i is not None:
                if unk is not None:
                    syms.append(unk)
                    unk = None
                syms.append([i, k, k + 1])
                continue
            if self.byte_fallback:
                ids = [vocab.get(byte_piece(b)) for b in s.encode("utf-8", "surrogatepass")]
                if None not in ids:
                    # A pending unknown run stays open (HF's BPE::merge_word continues without
                    # adding it): it lands after these byte tokens and may still fuse.
                    syms.extend([b, k, k + 1] for b in ids)
                    continue
            if self.unk_token is not None:
                if unk_id is None:
                    raise UnknownTokenError(f"unk_token {self.unk_token!r} is not in the vocabulary")
                if unk is not None and self.fuse_unk:
                    unk[2] = k + 1
                else:
                    if unk is not None:
                        syms.append(unk)
                    unk = [unk_id, k, k + 1]
        if unk is not None:
            syms.append(unk)
        if len(syms) < 2 or not self._merge_map:
            return [tuple(s) for s in syms]  # type: ignore[misc]
        if p == 0.0 and len(syms) <= SHORT_PIECE_SYMBOLS and log is None:
            return self._hf_merge_short(syms)
        return self._hf_merge_heap(syms, p, rng, log)

    def _hf_merge_short(self, syms: list[list[int]]) -> list[tuple[int, int, int]]:
        get = self._merge_map.get
        cand = [get((syms[k][0], syms[k + 1][0])) for k in range(len(syms) - 1)]
        while True:
            best = None
            best_k = -1
            for k, c in enumerate(cand):
                if c is not None and (best is None or c[0] < best):
                    best = c[0]
                    best_k = k
            if best is None:
                return [(s[0], s[1], s[2]) for s in syms]
            new_id = cand[best_k][1]  # type: ignore[index]
            syms[best_k : best_k + 2] = [[new_id, syms[best_k][1], syms[best_k + 1][2]]]
            del cand[best_k]
            if best_k > 0:
                cand[best_k - 1] = get((syms[best_k - 1][0], new_id))
            if best_k < len(cand):
                cand[best_k] = get((new_id, syms[best_k + 1][0]))

    def _hf_merge_heap(self, syms: list[list[int]], p: float, rng, log: list | None = None) -> list[tuple[int, int, int]]:
        get = self._merge_map.get
        n = len(syms)
        ids = [s[0] for s in syms]
        ends = [s[2] for s in syms]
        alive = [True] * n
        nxt = list(range(1, n + 1))
        nxt[-1] = -1
        prv = list(range(-1, n - 1))
        heap = []
        for k in range(n - 1):
            m = get((ids[k], ids[k + 1]))
            if m is not None:
                heap.append((m[0], k, m[1]))
        heapq.heapify(heap)
        skipped: list[tuple[int, int, int]] = []
        rand = rng.random if p > 0.0 else None
        while heap:
            top = heapq.heappop(heap)
            _, k, new_id = top
            j = nxt[k]
            if not alive[k] or j == -1:
                continue
            m = get((ids[k], ids[j]))
            if m is None or m[1] != new_id:
                continue  # stale
            if rand is not None and rand() < p:
                skipped.append(top)
                continue
            for s in skipped:
                heapq.heappush(heap, s)
            skipped.clear()
            if log is not None:
                log.append((syms[k][1], self._id_to_token[ids[k]], self._id_to_token[ids[j]], new_id, top[0]))
            ids[k] = new_id
            ends[k] = ends[j]
            alive[j] = False
            nxt[k] = nxt[j]
            if nxt[j] != -1:
                prv[nxt[j]] = k
            q = prv[k]
            if q >= 0:
                m = get((ids[q], new_id))
                if m is not None:
                    heapq.heappush(heap, (m[0], q, m[1]))
            r = nxt[k]
            if r != -1:
                m = get((new_id, ids[r]))
                if m is not None:
                    heapq.heappush(heap, (m[0], k, m[1]))
        return [(ids[k], syms[k][1], ends[k]) for k in range(n) if alive[k]]

    # SentencePiece semantics (tokenforge.sentencepiece.bpe) ----------------
    def _sp_tokenize(self, text: str, p: float, rng) -> list[tuple[int, int, int]]:
        assert self._sp is not None
        return sp_tokenize(self._sp, text, p, rng, self._cache)

    # -- serialization ---------------------------------------------------------
    def to_dict(self) -> dict:
        """HF's ``BPE`` model JSON; a SentencePiece model is
        ``{"type": "SentencePieceBPE", "vocab": [[piece, score, type], ...], ...}``."""
        if self._sp is not None:
            sp = self._sp
            return {
                "type": "SentencePieceBPE",
                "dropout": self.dropout,
                "byte_fallback": self.byte_fallback,
                "vocab": [
                    [self._id_to_token[i], sp.scores[i], PieceType(sp.types[i]).name] for i in range(len(sp.scores))
                ],
            }
        return {
            "type": "BPE",
            "dropout": self.dropout,
            "unk_token": self.unk_token,
            "continuing_subword_prefix": self.continuing_subword_prefix,
            "end_of_word_suffix": self.end_of_word_suffix,
            "fuse_unk": self.fuse_unk,
            "byte_fallback": self.byte_fallback,
            "ignore_merges": self.ignore_merges,
            "vocab": dict(self._vocab),
            "merges": [[a, b] for a, b in self._merges],
        }

    @classmethod
    def from_dict(cls, data: Mapping) -> "PieceBPE":
        """Build from HF's ``BPE`` JSON (merges as ``"a b"`` or ``[a, b]``) or
        from :meth:`to_dict` of a SentencePiece model."""
        if not isinstance(data, Mapping):
            raise FileFormatError(f"model must be a JSON object, got {type(data).__name__}")
        kind = data.get("type", "BPE")
        if kind == "SentencePieceBPE":
            vocab = data.get("vocab")
            if not isinstance(vocab, list):
                raise FileFormatError("model.vocab must be a list of [piece, score, type]")
            pieces, scores, types = [], [], []
            for n, entry in enumerate(vocab):
                if (
                    not isinstance(entry, (list, tuple))
                    or len(entry) != 3
                    or not isinstance(entry[0], str)
                    or isinstance(entry[1], bool)
                    or not isinstance(entry[1], (int, float))
                    or entry[2] not in PieceType.__members__
                ):
                    raise FileFormatError(f"model.vocab[{n}] must be [piece, score, type name], got {entry!r}")
                pieces.append(entry[0])
                scores.append(float(entry[1]))
                types.append(int(PieceType[entry[2]]))
            return cls.from_sentencepiece(
                pieces,
                scores,
                types,
                byte_fallback=_opt_bool(data, "byte_fallback"),
                dropout=data.get("dropout"),
            )
        if kind != "BPE":
            raise FileFormatError(f"model.type must be 'BPE' or 'SentencePieceBPE', got {kind!r}")
        vocab = data.get("vocab")
        if not isinstance(vocab, Mapping):
            raise FileFormatError("model.vocab must be an object of token -> id")
        merges = data.get("merges", [])
        if not isinstance(merges, list):
            raise FileFormatError("model.merges must be a list")
        for key in ("unk_token", "continuing_subword_prefix", "end_of_word_suffix"):
            v = data.get(key)
            if v is not None and not isinstance(v, str):
                raise FileFormatError(f"model.{key} must be a string or null, got {v!r}")
        _check_dropout(data.get("dropout"), FileFormatError)  # a bad file, not a bad argument
        return cls(
            vocab,
            merges,
            unk_token=data.get("unk_token"),
            continuing_subword_prefix=data.get("continuing_subword_prefix"),
            end_of_word_suffix=data.get("end_of_word_suffix"),
            fuse_unk=_opt_bool(data, "fuse_unk"),
            byte_fallback=_opt_bool(data, "byte_fallback"),
            ignore_merges=_opt_bool(data, "ignore_merges"),
            dropout=data.get("dropout"),
        )

    def __repr__(self) -> str:
        kind = "sentencepiece" if self._sp is not None else "hf"
        return f"PieceBPE({kind}, vocab_size={self.vocab_size}, merges={len(self._merges)})"


def _opt_bool(data: Mapping, key: str) -> bool:
    v = data.get(key, False)
    if v is None:
        return False
    if not isinstance(v, bool):
        raise FileFormatError(f"model.{key} must be true or false, got {v!r}")
    return v

"""Byte-level BPE encoding by frozen merge rank (seed 000 §2.1, D02).

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
"""

from __future__ import annotations

import heapq
from types import MappingProxyType
from typing import Mapping, Sequence

from ..errors import FileFormatError

#: Ids are stored as 32-bit values (one value is reserved as "no token").
MAX_ID = 2**32 - 1
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


def _merge_long(ranks: Mapping[bytes, int], piece: bytes) -> list[bytes]:
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
    while heap:
        r, i, end = heapq.heappop(heap)
        j = nxt[i]
        # stale if node i died or its right neighbour changed extent
        if j == -1 or j >= n or nxt[j] != end:
            continue
        # merge node j into node i
        nxt[i] = end
        nxt[j] = -1
        if end < n:
            prv[end] = i
        p = prv[i]
        if p >= 0:
            rp = get(piece[p:end])
            if rp is not None:
                heapq.heappush(heap, (rp, p, end))
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


class BPE:
    """A byte-level BPE model: token bytes with their ids (= merge ranks), and
    optionally the merges that produced them.

    The vocabulary maps every id to its bytes. Two ids may carry the same bytes
    (a trainer can learn the same string through two different merges, as the
    CS336 reference does); encoding then always produces the lower id, and
    decoding accepts both.
    """

    __slots__ = ("_vocab", "_ranks", "_merges")

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
        vocab: dict[int, bytes] = {}
        for tok, r in ranks.items():
            if r in vocab:
                raise FileFormatError(f"rank {r} is given to both {vocab[r]!r} and {tok!r}")
            vocab[r] = tok
        return cls(vocab)

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

    # -- encoding ----------------------------------------------------------
    def encode_piece(self, piece: bytes) -> list[int]:
        """Ids of one pre-token. A piece that is a token is that one id."""
        r = self._ranks.get(piece)
        if r is not None:
            return [r]
        ranks = self._ranks
        return [ranks[p] for p in bpe_merge_bytes(ranks, piece)]

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
        for r in sorted(self._vocab):
            tok = self._vocab[r]
            if len(tok) == 1 or ranks.get(tok) != r:
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
        from base64 import b64encode

        out: dict = {
            "type": "bpe",
            "vocab": [[i, b64encode(t).decode("ascii")] for i, t in sorted(self._vocab.items())],
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
            raise KeyError(key)
        return r


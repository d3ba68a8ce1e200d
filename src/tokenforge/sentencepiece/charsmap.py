"""SentencePiece's precompiled normalization rules (``precompiled_charsmap``).

A ``.model`` file's ``NormalizerSpec`` carries its normalization as one blob
(sentencepiece's ``normalizer.cc``, built by ``builder.cc``): a darts-clone
double-array trie over UTF-8 byte keys (one or more characters) whose values
point into a pool of NUL-terminated replacement strings, laid out as
``u32 little-endian trie size in bytes`` + trie units + pool. :class:`Charsmap`
reads it; two normalizers use it (sentencepiece's own,
:class:`~tokenforge.sentencepiece.normalizer.SentencePieceNormalizer`, and HF's
:class:`~tokenforge.normalizers.Precompiled`), so it lives in a module that
depends on neither. The named rule sets (``nmt_nfkc``, ``nmt_nfkc_cf``, ``nfkc``, ``nfkc_cf``) are
sentencepiece 0.2.3's built-in blobs, shipped in ``tokenforge/data/normalizers/``
(Kudo & Richardson, 2018, describe the NFKC-based default).
"""

from __future__ import annotations

import base64
import binascii
import lzma
import sys
from array import array
from functools import cache
from importlib import resources
from collections.abc import Mapping
from typing import Any

from ..errors import ArgumentTypeError, FileFormatError, InvalidArgumentError, UnknownEncodingError

__all__ = ["NAMED_CHARSMAPS", "Charsmap", "decode_charsmap_field"]


#: Rule sets shipped with tokenforge (sentencepiece 0.2.3's built-in charsmaps).
NAMED_CHARSMAPS = ("nmt_nfkc", "nmt_nfkc_cf", "nfkc", "nfkc_cf", "identity")


class Charsmap:
    """A SentencePiece ``precompiled_charsmap``: darts-clone trie + replacement pool.

    ``Charsmap(b"")`` has no rules (sentencepiece's ``identity``).

    >>> cm = Charsmap.named("nmt_nfkc")
    >>> length, value = cm.longest_prefix("ﬃx".encode())
    >>> length, cm.replacement(value)
    (3, 'ffi')
    """

    __slots__ = ("_char", "_leads_cache", "_pool", "_repl", "_units", "blob")

    def __init__(self, blob: bytes) -> None:
        if not isinstance(blob, (bytes, bytearray, memoryview)):
            raise ArgumentTypeError(f"charsmap must be bytes, got {type(blob).__name__}")
        blob = bytes(blob)
        self.blob = blob
        units = array("I")
        pool = b""
        if blob:
            if len(blob) < 4:
                raise FileFormatError(f"precompiled_charsmap: {len(blob)} bytes is too short for the trie size")
            size = int.from_bytes(blob[:4], "little")
            if size % 4 or size + 4 > len(blob) or size == 0:
                raise FileFormatError(
                    f"precompiled_charsmap: trie size {size} does not fit a blob of {len(blob)} bytes"
                    " (expected a multiple of 4, at most the blob length - 4)"
                )
            units.frombytes(blob[4 : 4 + size])
            if sys.byteorder == "big":
                units.byteswap()
            pool = blob[4 + size :]
        self._units = units.tolist()
        self._pool = pool
        self._repl: dict[int, str] = {}
        self._char: dict[str, tuple[int, int]] = {}
        self._leads_cache: dict[int, frozenset[int]] = {}

    @classmethod
    def named(cls, name: str) -> Charsmap:
        """A shipped rule set: ``nmt_nfkc``, ``nmt_nfkc_cf``, ``nfkc``, ``nfkc_cf`` or ``identity``."""
        return _named_charsmap(name)

    # darts-clone unit layout: label in bits 0-7 (+ bit 31), has_leaf bit 8,
    # offset in bits 10-31 scaled by bit 9; a leaf unit's value is bits 0-30.
    def _root(self) -> int:
        u = self._units[0]
        return (u >> 10) << ((u & 0x200) >> 6)

    def _step(self, node: int, byte: int) -> tuple[int, int]:
        """Follow ``byte`` from ``node``: ``(next node or -1, value or -1)``."""
        units = self._units
        node ^= byte
        if node >= len(units):
            return -1, -1
        u = units[node]
        if (u & 0x800000FF) != byte:
            return -1, -1
        node ^= (u >> 10) << ((u & 0x200) >> 6)
        if (u >> 8) & 1:
            if node >= len(units):
                raise FileFormatError("precompiled_charsmap: trie leaf points outside the trie")
            return node, units[node] & 0x7FFFFFFF
        return node, -1

    def prefixes(self, key: bytes) -> list[tuple[int, int]]:
        """All rules matching a prefix of ``key``: ``(length in bytes, value)``, shortest first."""
        if not self._units:
            return []
        out = []
        node = self._root()
        for i, byte in enumerate(key):
            node, value = self._step(node, byte)
            if node < 0:
                break
            if value >= 0:
                out.append((i + 1, value))
        return out

    def longest_prefix(self, key: bytes) -> tuple[int, int] | None:
        """The longest rule matching a prefix of ``key`` as ``(length, value)``, or ``None``."""
        p = self.prefixes(key)
        return p[-1] if p else None

    def replacement(self, value: int) -> str:
        """The replacement string stored at pool offset ``value``."""
        r = self._repl.get(value)
        if r is None:
            if not 0 <= value < len(self._pool):
                raise FileFormatError(f"precompiled_charsmap: replacement offset {value} is outside the pool")
            end = self._pool.find(b"\x00", value)
            raw = self._pool[value : end if end >= 0 else len(self._pool)]
            try:
                r = raw.decode("utf-8")
            except UnicodeDecodeError:
                raise FileFormatError(
                    f"precompiled_charsmap: replacement at offset {value} is not UTF-8"
                ) from None
            self._repl[value] = r
        return r

    def _char_info(self, c: str) -> tuple[int, int]:
        """``(node after c or -1, value of the rule for exactly c or -1)``, cached."""
        info = self._char.get(c)
        if info is None:
            node, value = (self._root(), -1) if self._units else (-1, -1)
            try:
                key = c.encode("utf-8")
            except UnicodeEncodeError:
                key = b""
                node = -1
            for byte in key:
                if node < 0:
                    break
                node, value = self._step(node, byte)
            if node < 0:
                value = -1
            info = (node, value)
            self._char[c] = info
        return info

    def _leads(self, node: int) -> frozenset[int]:
        """The labels of ``node``'s children (a key going on past ``node`` starts with one), cached.

        The children of a node are in the 256-unit block its index lies in: label
        ``b`` sits at ``node ^ b``.
        """
        leads = self._leads_cache.get(node)
        if leads is None:
            lo = node & 0xFF
            start = node - lo
            block = self._units[start : start + 256]
            leads = frozenset(
                k ^ lo for k, u in enumerate(block) if (k ^ lo) and (u & 0x800000FF) == (k ^ lo)
            )
            self._leads_cache[node] = leads
        return leads

    def _extend(self, node: int, c: str) -> tuple[int, int]:
        """Follow all bytes of ``c`` from ``node``: ``(node or -1, value or -1)``."""
        value = -1
        for byte in c.encode("utf-8", "surrogatepass"):
            node, value = self._step(node, byte)
            if node < 0:
                return -1, -1
        return node, value

    @classmethod
    def from_rules(cls, rules: Mapping[str, str]) -> Charsmap:
        """Compile ``{source: replacement}`` into a blob, as sentencepiece's ``Builder`` does for
        ``--normalization_rule_tsv`` and ``SentencePieceNormalizer(norm_map=...)``: a darts-clone
        double-array trie over the UTF-8 sources, its values offsets into a pool of
        NUL-terminated replacements. At each position the longest source wins.

        >>> cm = Charsmap.from_rules({"foo": "bar", "apple": "orange"})
        >>> cm.replacement(cm.longest_prefix(b"foo!")[1]), cm.rules()
        ('bar', [('apple', 'orange'), ('foo', 'bar')])
        """
        if not rules:
            return cls(b"")
        pool = bytearray()
        offsets: dict[str, int] = {}
        trie: dict[int, Any] = {}
        for src, dst in sorted(rules.items()):
            if not isinstance(src, str) or not isinstance(dst, str) or not src:
                raise ArgumentTypeError(f"rules map non-empty str to str, got {src!r}: {dst!r}")
            if dst not in offsets:
                offsets[dst] = len(pool)
                pool += dst.encode("utf-8") + b"\x00"
            node = trie
            for byte in src.encode("utf-8"):
                node = node.setdefault(byte, {})
            node[-1] = offsets[dst]
        units = [0]
        used = {0}
        bases: set[int] = set()
        start = 1

        def place(node: dict[int, Any], pos: int) -> None:
            nonlocal start
            labels = sorted(k for k in node if k >= 0)
            slots = labels + ([0] if -1 in node else [])
            while start in used:
                start += 1
            base = start
            while base in bases or any((base ^ lab) in used for lab in slots):
                base += 1
            offset = pos ^ base
            if offset < 1 << 21:
                code = offset << 10
            elif not offset & 0xFF and offset < 1 << 29:
                code = (offset >> 8) << 10 | 0x200
            else:
                raise InvalidArgumentError(f"normalization rules too large for a charsmap ({len(rules)} rules)")
            bases.add(base)
            top = max(base ^ lab for lab in slots)
            if top >= len(units):
                units.extend([0] * (top + 1 - len(units)))
            for lab in slots:
                used.add(base ^ lab)
            units[pos] |= code | (0x100 if -1 in node else 0)
            if -1 in node:
                units[base] = node[-1] | 0x80000000
            for lab in labels:
                units[base ^ lab] = lab
            for lab in labels:
                place(node[lab], base ^ lab)

        place(trie, 0)
        units.extend([0] * (-len(units) % 256))  # darts-clone arrays are whole blocks of 256 units
        # As darts-clone does, a free unit gets a label no lookup can meet: ``id ^ u`` for a
        # ``u`` of its block that is no node's base (a lookup from base b at id reads label
        # ``id ^ b``). A zero unit would answer label 0 and let a walk over all labels
        # (sentencepiece's Decompile) loop for ever.
        for begin in range(0, len(units), 256):
            u = next(x for x in range(begin, begin + 256) if x not in bases)
            for i in range(begin, begin + 256):
                if i not in used:
                    units[i] = (i ^ u) & 0xFF
        trie_bytes = array("I", units)
        if sys.byteorder == "big":
            trie_bytes.byteswap()
        raw = trie_bytes.tobytes()
        return cls(len(raw).to_bytes(4, "little") + raw + bytes(pool))

    def rules(self) -> list[tuple[str, str]]:
        """Every ``(source, replacement)`` rule, in UTF-8 order of the sources (sentencepiece's
        ``Decompile``)."""
        out: list[tuple[str, str]] = []
        if not self._units:
            return out
        units = self._units

        def walk(base: int, key: bytes) -> None:
            for lab in range(1, 256):
                pos = base ^ lab
                if pos >= len(units) or (units[pos] & 0x800000FF) != lab:
                    continue
                u = units[pos]
                child = pos ^ ((u >> 10) << ((u & 0x200) >> 6))
                if (u >> 8) & 1:
                    src = (key + bytes([lab])).decode("utf-8", "replace")
                    out.append((src, self.replacement(units[child] & 0x7FFFFFFF)))
                walk(child, key + bytes([lab]))

        walk(self._root(), b"")
        return out

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Charsmap) and other.blob == self.blob

    def __hash__(self) -> int:
        return hash(self.blob)

    def __reduce__(self):
        return (Charsmap, (self.blob,))


@cache
def _named_charsmap(name: str) -> Charsmap:
    if name == "identity":
        return Charsmap(b"")
    if name not in NAMED_CHARSMAPS:
        raise UnknownEncodingError(
            f"unknown SentencePiece rule set {name!r}; known: {', '.join(NAMED_CHARSMAPS)}"
        )
    data = resources.files("tokenforge").joinpath("data", "normalizers", f"{name}.charsmap.xz").read_bytes()
    return Charsmap(lzma.decompress(data))


def decode_charsmap_field(value: Any, where: str) -> bytes:
    if value is None:
        return b""
    if not isinstance(value, str):
        raise FileFormatError(f"{where}: field 'precompiled_charsmap' must be a base64 string, got {type(value).__name__}")
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise FileFormatError(f"{where}: field 'precompiled_charsmap' is not valid base64") from None

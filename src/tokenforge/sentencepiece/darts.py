"""darts-clone double-array tries, laid out unit for unit as darts-clone 0.32 builds them.

sentencepiece stores its tries in darts-clone's format (Yata et al., "A Compact Static
Double-Array Keeping Character Codes", 2007; darts-clone by Susumu Yata): an array of
little-endian 32-bit units, each a node's label (bits 0-7, bit 31 set on a leaf), a
has-leaf flag (bit 8) and the offset of its children (bits 10-30, or ``<< 8`` of them
when bit 9 is set); a leaf unit holds the value in bits 0-30. Reading one is
:class:`~tokenforge.sentencepiece.charsmap.Charsmap`'s job; this module writes them.

Where two arrays are compared byte for byte (sentencepiece's ``.spm.fb`` export, see
:mod:`tokenforge.sentencepiece.flatbuffer`), the builder has to place every node where
darts-clone places it: children go at the first offset, walking darts-clone's ring of
free units from its head, where none of their slots is taken and the offset itself is
no other node's; the array grows in blocks of 256 units and only the last 16 blocks
stay open (older ones are closed, their free units given labels no lookup can meet).
Nodes are placed depth first, children in byte order. darts-clone builds a minimized
automaton (DAWG) first when values are given; with distinct values (token ids) no two
subtrees are equal, so the layout is the one below either way.
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Sequence

from ..errors import InvalidArgumentError

__all__ = ["build_double_array", "unit_offset", "unit_label"]

_BLOCK = 256
_EXTRA_BLOCKS = 16
_EXTRAS = _BLOCK * _EXTRA_BLOCKS
_UPPER = 0xFF << 21
_LOWER = 0xFF


def unit_offset(unit: int) -> int:
    """The children offset stored in a unit."""
    return (unit >> 10) << ((unit & (1 << 9)) >> 6)


def unit_label(unit: int) -> int:
    """A unit's label with its leaf bit (what a lookup compares)."""
    return unit & ((1 << 31) | 0xFF)


class _Builder:
    def __init__(self) -> None:
        self.units: list[int] = []
        self.prev = [0] * _EXTRAS
        self.next = [0] * _EXTRAS
        self.fixed = [False] * _EXTRAS
        self.used = [False] * _EXTRAS
        self.head = 0

    # -- unit setters (darts-clone's DoubleArrayBuilderUnit)
    def set_offset(self, i: int, offset: int) -> None:
        if offset >= 1 << 29:
            raise InvalidArgumentError(f"double-array trie too large: child offset {offset} needs more than 29 bits")
        u = self.units[i] & ((1 << 31) | (1 << 8) | 0xFF)
        u |= offset << 10 if offset < 1 << 21 else (offset << 2) | (1 << 9)
        self.units[i] = u

    def set_label(self, i: int, label: int) -> None:
        self.units[i] = (self.units[i] & ~0xFF) | label

    # -- the ring of free units
    def reserve(self, i: int) -> None:
        if i >= len(self.units):
            self.expand()
        prev, nxt = self.prev, self.next
        k = i % _EXTRAS
        if i == self.head:
            self.head = nxt[k]
            if self.head == i:
                self.head = len(self.units)
        nxt[prev[k] % _EXTRAS] = nxt[k]
        prev[nxt[k] % _EXTRAS] = prev[k]
        self.fixed[k] = True

    def expand(self) -> None:
        src = len(self.units)
        blocks = src // _BLOCK + 1
        dest = src + _BLOCK
        if blocks > _EXTRA_BLOCKS:
            self.fix_block(src // _BLOCK - _EXTRA_BLOCKS)
        self.units.extend([0] * _BLOCK)
        prev, nxt = self.prev, self.next
        if blocks > _EXTRA_BLOCKS:
            for i in range(src, dest):
                self.used[i % _EXTRAS] = False
                self.fixed[i % _EXTRAS] = False
        for i in range(src + 1, dest):
            nxt[(i - 1) % _EXTRAS] = i
            prev[i % _EXTRAS] = i - 1
        s, d, h = src % _EXTRAS, (dest - 1) % _EXTRAS, self.head % _EXTRAS
        prev[s] = dest - 1
        nxt[d] = src
        prev[s] = prev[h]
        nxt[d] = self.head
        nxt[prev[h] % _EXTRAS] = src
        prev[h] = dest - 1

    def fix_block(self, block: int) -> None:
        begin = block * _BLOCK
        free = next((o for o in range(begin, begin + _BLOCK) if not self.used[o % _EXTRAS]), 0)
        for i in range(begin, begin + _BLOCK):
            if not self.fixed[i % _EXTRAS]:
                self.reserve(i)
                self.set_label(i, (i ^ free) & 0xFF)

    def find_offset(self, node: int, labels: Sequence[int]) -> int:
        n = len(self.units)
        if self.head >= n:
            return n | (node & _LOWER)
        used, fixed, nxt = self.used, self.fixed, self.next
        first, rest = labels[0], labels[1:]
        free = self.head
        while True:
            offset = free ^ first
            rel = node ^ offset
            if (not used[offset % _EXTRAS] and not ((rel & _LOWER) and (rel & _UPPER))
                    and not any(fixed[(offset ^ lab) % _EXTRAS] for lab in rest)):
                return offset
            free = nxt[free % _EXTRAS]
            if free == self.head:
                return n | (node & _LOWER)

    def arrange(self, node: int, labels: list[int], leaf_value: int | None) -> int:
        offset = self.find_offset(node, labels)
        self.set_offset(node, node ^ offset)
        for lab in labels:
            child = offset ^ lab
            self.reserve(child)
            if lab == 0:
                self.units[node] |= 1 << 8
                self.units[child] = leaf_value | (1 << 31)  # type: ignore[operator]
            else:
                self.set_label(child, lab)
        self.used[offset % _EXTRAS] = True
        return offset


def build_double_array(keys: Sequence[bytes], values: Sequence[int] | None = None) -> list[int]:
    """The darts-clone units of a trie mapping ``keys[i]`` to ``values[i]`` (``i`` without values).

    ``keys`` must be sorted bytewise, distinct, non-empty and free of NUL bytes, ``values``
    non-negative (below 2**31). An empty key list gives an empty array.
    """
    if not keys:
        return []
    if values is None:
        values = range(len(keys))
    for i, key in enumerate(keys):
        if not key or b"\x00" in key:
            raise InvalidArgumentError(f"trie key {i} {key!r} is empty or holds a NUL byte")
        if i and keys[i - 1] >= key:
            raise InvalidArgumentError(f"trie keys must be sorted and distinct: {keys[i - 1]!r} then {key!r}")
        if not 0 <= values[i] < 1 << 31:
            raise InvalidArgumentError(f"trie value {values[i]} of key {key!r} is not in [0, 2**31)")
    b = _Builder()
    b.reserve(0)
    b.used[0] = True
    b.set_offset(0, 1)
    b.set_label(0, 0)
    # Depth-first, children in byte order: (first key, end key, depth, unit) of each node.
    stack = [(0, len(keys), 0, 0)]
    while stack:
        begin, end, depth, node = stack.pop()
        labels: list[int] = []
        starts: list[int] = []
        leaf = None
        for i in range(begin, end):
            key = keys[i]
            lab = key[depth] if depth < len(key) else 0
            if lab == 0 and leaf is None:
                leaf = values[i]
            if not labels or labels[-1] != lab:
                labels.append(lab)
                starts.append(i)
        offset = b.arrange(node, labels, leaf)
        starts.append(end)
        children = [(starts[j], starts[j + 1], depth + 1, offset ^ labels[j])
                    for j in range(len(labels)) if labels[j]]
        stack.extend(reversed(children))
    n_blocks = len(b.units) // _BLOCK
    for block in range(max(0, n_blocks - _EXTRA_BLOCKS), n_blocks):
        b.fix_block(block)
    return b.units


def units_to_bytes(units: Sequence[int]) -> bytes:
    """Units as the little-endian bytes darts-clone writes."""
    arr = array("I", units)
    if sys.byteorder == "big":
        arr.byteswap()
    return arr.tobytes()

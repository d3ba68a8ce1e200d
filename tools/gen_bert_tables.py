"""Generate ``src/tokenforge/_core/bert_tables.h``: the per-character data of BERT's
normalizer (HF tokenizers' ``BertNormalizer``) for the native WordPiece plan.

What HF tokenizers (0.23) does per character, and where each table comes from:

* ``clean_text`` drops NUL, U+FFFD and every character that the Rust
  ``unicode_categories`` crate calls "other" (Cc, Cf, Co, Cs), tab/LF/CR excepted,
  then turns each White_Space character (Rust's ``char::is_whitespace``) and tab/LF/CR
  into a space. That crate's tables are Unicode **8.0.0** and Rust's White_Space is
  Unicode **16.0.0**: both come from the pinned data in ``tools/ucd/`` (see
  ``gen_unicode_tables.py``).
* ``strip_accents``: NFD (the ``unicode-normalization`` crate), then drop the
  nonspacing marks (``unicode_categories``' Mn, Unicode **8.0.0**, pinned).
* ``lowercase``: Rust's ``char::to_lowercase`` per character (full mappings, so
  U+0130 becomes ``i`` + U+0307; no final-sigma rule).

The decompositions, canonical combining classes and lowercase mappings are read from
Python's ``unicodedata`` **14.0.0** (Python 3.11), with the code points where HF's
crates answer differently written out below (``NFD_OVERRIDES``, ``CCC_ZERO_OVERRIDES``,
``LOWER_OVERRIDES``),
found by running HF tokenizers on every code point from U+0000 to U+10FFFF;
``tests/models/test_bert_normalizer_native.py`` runs that comparison again.
The header is checked in; regenerate it with Python 3.11 (Unicode 14.0.0):

    python tools/gen_bert_tables.py [OUT.h]

Hangul syllables are decomposed arithmetically by the C++ code, not listed here.
"""

from __future__ import annotations

import sys
import unicodedata
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gen_unicode_tables as ucd  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
MAX_CP = 0x110000
UNICODEDATA_VERSION = "14.0.0"

#: HF's NFD leaves these as they are (its unicode-normalization tables lack them).
NFD_OVERRIDES: dict[int, tuple[int, ...]] = {0x11938: (0x11938,)}

#: HF's lowercase (Rust std, Unicode 17.0) where Python 3.11's (Unicode 14.0) has none.
LOWER_OVERRIDES: dict[int, tuple[int, ...]] = {
    0x1C89: (0x1C8A,), 0xA7CB: (0x0264,), 0xA7CC: (0xA7CD,), 0xA7CE: (0xA7CF,), 0xA7D2: (0xA7D3,),
    0xA7D4: (0xA7D5,), 0xA7DA: (0xA7DB,), 0xA7DC: (0x019B,),
    **{c: (c + 0x20,) for c in range(0x10D50, 0x10D66)},
    **{c: (c + 0x1B,) for c in range(0x16EA0, 0x16EB9)},
}

#: Combining class 0 in HF's NFD (its tables predate these marks; unicodedata 14.0 gives
#: them a class, so HF does not reorder them).
CCC_ZERO_OVERRIDES: tuple[tuple[int, int], ...] = (
    (0x07FD, 0x07FD), (0x0898, 0x089F), (0x08CA, 0x08D3), (0x09FE, 0x09FE), (0x0C3C, 0x0C3C), (0x0D3B, 0x0D3C),
    (0x0EBA, 0x0EBA), (0x1715, 0x1715), (0x1ABF, 0x1ACE), (0x1DF6, 0x1DFA), (0xA82C, 0xA82C), (0x10D24, 0x10D27),
    (0x10EAB, 0x10EAC), (0x10F46, 0x10F50), (0x10F82, 0x10F85), (0x11070, 0x11070), (0x1133B, 0x1133B),
    (0x1145E, 0x1145E), (0x11839, 0x1183A), (0x1193D, 0x1193E), (0x11943, 0x11943), (0x119E0, 0x119E0),
    (0x11A34, 0x11A34), (0x11A47, 0x11A47), (0x11A99, 0x11A99), (0x11D42, 0x11D42), (0x11D44, 0x11D45),
    (0x11D97, 0x11D97), (0x16FF0, 0x16FF1), (0x1E130, 0x1E136), (0x1E2AE, 0x1E2AE), (0x1E2EC, 0x1E2EF),
)

CJK_RANGES = (
    (0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F), (0x2B740, 0x2B81F),
    (0x2B920, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F),
)

DROP, SPACE, CJK, MN, DECOMP, LOWER, NONSTARTER = 1, 2, 4, 8, 16, 32, 64
HANGUL = (0xAC00, 0xD7A3)


def records() -> tuple[list[tuple[int, ...]], list[int]]:
    """``(per code point (flags, ccc, dec, low), pool)``: dec/low are (offset, length) into pool."""
    if unicodedata.unidata_version != UNICODEDATA_VERSION:
        raise SystemExit(f"run with Unicode {UNICODEDATA_VERSION} (Python 3.11), not {unicodedata.unidata_version}")
    cat8 = ucd.general_category("8.0.0")
    ws16 = ucd.binary_property("16.0.0", "White_Space")
    cjk = bytearray(MAX_CP)
    for a, b in CJK_RANGES:
        cjk[a : b + 1] = b"\x01" * (b - a + 1)
    ccc_zero = bytearray(MAX_CP)
    for a, b in CCC_ZERO_OVERRIDES:
        ccc_zero[a : b + 1] = b"\x01" * (b - a + 1)
    pool: list[int] = []
    where: dict[tuple[int, ...], int] = {}

    def put(seq: tuple[int, ...]) -> tuple[int, int]:
        if seq not in where:
            where[seq] = len(pool)
            pool.extend(seq)
        return where[seq], len(seq)

    out = []
    for c in range(MAX_CP):
        if 0xD800 <= c < 0xE000:
            out.append((DROP, 0, 0, 0, 0, 0))  # never reached: the text is valid UTF-8
            continue
        ch = chr(c)
        flags = 0
        if c in (9, 10, 13):
            flags |= SPACE
        elif c == 0 or c == 0xFFFD or cat8[c] in ("Cc", "Cf", "Co", "Cs"):
            flags |= DROP
        elif c in ws16:
            flags |= SPACE
        if cjk[c]:
            flags |= CJK
        if cat8[c] == "Mn":
            flags |= MN
        ccc = 0 if ccc_zero[c] else unicodedata.combining(ch)
        if ccc:
            flags |= NONSTARTER
        dec = NFD_OVERRIDES.get(c) or tuple(map(ord, unicodedata.normalize("NFD", ch)))
        d_off = d_len = 0
        if dec != (c,) and not HANGUL[0] <= c <= HANGUL[1]:
            flags |= DECOMP
            d_off, d_len = put(dec)
        low = LOWER_OVERRIDES.get(c) or tuple(map(ord, ch.lower()))
        l_off = l_len = 0
        if low != (c,):
            flags |= LOWER
            l_off, l_len = put(low)
        out.append((flags, ccc, d_off, d_len, l_off, l_len))
    return out, pool


def render(recs: list[tuple[int, ...]], pool: list[int]) -> str:
    index: dict[tuple[int, ...], int] = {}
    ids = []
    for r in recs:
        ids.append(index.setdefault(r, len(index)))
    blocks: dict[tuple[int, ...], int] = {}
    stage1: list[int] = []
    stage2: list[int] = []
    for hi in range(MAX_CP >> 7):
        block = tuple(ids[hi << 7 : (hi + 1) << 7])
        if block not in blocks:
            blocks[block] = len(blocks)
            stage2.extend(block)
        stage1.append(blocks[block])
    assert len(index) < 65536 and len(blocks) < 65536 and len(pool) < 65536

    def rows(values: list[int]) -> list[str]:
        return ["  " + ",".join(map(str, values[i : i + 32])) + "," for i in range(0, len(values), 32)]

    out = [
        "// Generated by tools/gen_bert_tables.py (BERT normalizer data: Unicode 8.0.0 categories and",
        "// 16.0.0 White_Space from tools/ucd/, unicodedata 14.0.0 NFD/ccc/lowercase with HF's",
        "// differences). Do not edit; see that script.",
        "#pragma once",
        "#include <cstdint>",
        "namespace tf_bert {",
        f"constexpr uint8_t DROP = {DROP}, SPACE = {SPACE}, CJK = {CJK}, MN = {MN}, DECOMP = {DECOMP}, "
        f"LOWER = {LOWER}, NONSTARTER = {NONSTARTER};",
        "struct Rec { uint8_t flags, ccc, dec_len, low_len; uint16_t dec_off, low_off; };",
        f"static const Rec records[{len(index)}] = {{",
    ]
    for (flags, ccc, d_off, d_len, l_off, l_len) in index:
        out.append(f"  {{{flags},{ccc},{d_len},{l_len},{d_off},{l_off}}},")
    out.append("};")
    out.append(f"static const uint16_t stage1[{len(stage1)}] = {{")
    out += rows(stage1)
    out.append("};")
    out.append(f"static const uint16_t stage2[{len(stage2)}] = {{")
    out += rows(stage2)
    out.append("};")
    out.append(f"static const uint32_t pool[{max(len(pool), 1)}] = {{")
    out += rows(pool or [0])
    out.append("};")
    out.append("inline const Rec& lookup(uint32_t cp) {")
    out.append(f"  return records[cp < {MAX_CP} ? stage2[(uint32_t)stage1[cp >> 7] * 128u + (cp & 127u)] : 0];")
    out.append("}")
    out.append("}  // namespace tf_bert")
    return "\n".join(out) + "\n"


def main(argv: list[str]) -> int:
    if len(argv) > 2 or (len(argv) == 2 and argv[1].startswith("-")):
        print(__doc__, file=sys.stderr)
        return 2
    out = Path(argv[1]) if len(argv) > 1 else ROOT / "src" / "tokenforge" / "_core" / "bert_tables.h"
    text = render(*records())
    if not out.exists() or out.read_text() != text:
        out.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

"""Generate the Unicode class tables of the native scanners from pinned Unicode data.

The native code classifies characters with one bit per class:

* ``L``, ``N``, ``Lu``, ``Ll``, ``Lt``, ``Lm``, ``Lo``, ``M`` (General_Category) and
  ``WS`` (the White_Space property, which is ``\\s``): the classes of the split patterns
  of gpt2, cl100k, o200k, llama3 and qwen (``_core/scan.h``). They come from **Unicode
  16.0.0**, the version of both engines these patterns must agree with:

  - tiktoken (0.14) runs the patterns with the Rust ``fancy-regex`` and ``regex``
    crates, whose classes are the tables of ``regex-syntax`` 0.8, generated from
    UCD 16.0.0 (``regex-syntax/src/unicode_tables/general_category.rs`` and
    ``perl_space.rs``, "ucd-generate ... ucd-16.0.0");
  - HF tokenizers (0.23) runs the ``Split`` regexes of Llama 3 and Qwen with
    Oniguruma, whose Unicode tables are also 16.0.0.

* ``P`` (General_Category P*): BERT's punctuation split (``_core/wordpiece.cpp``). HF's
  ``BertPreTokenizer`` takes it from the Rust ``unicode_categories`` crate (0.1.1), whose
  tables were generated from ``UnicodeData.txt`` of **Unicode 8.0.0**, so this bit is
  pinned to 8.0.0 (ASCII punctuation is handled separately, as Rust's
  ``is_ascii_punctuation``).

The data is checked in under ``tools/ucd/VERSION/`` in the line format of the Unicode
Character Database (``extracted/DerivedGeneralCategory.txt`` and ``PropList.txt``), so a
build never depends on the Unicode version of whatever library happens to be installed.
``tests/native/test_unicode_versions.py`` checks every code point against tiktoken and HF.

Both engines' versions were confirmed by running them on every code point: their
``\\p{L}``, ``\\p{N}``, ``\\p{Lu}``, ``\\p{Ll}``, ``\\p{Lt}``, ``\\p{Lm}``, ``\\p{Lo}``,
``\\p{M}`` and ``\\s`` are exactly these tables, and HF's BERT punctuation is exactly P of
8.0.0 outside ASCII.

The ``regex`` module (tokenforge's pure-Python path splits the named patterns with it)
follows its own, newer Unicode version, whatever release is installed: on code points
assigned after 16.0.0, and on the few whose category changed since (U+0295 is Ll in
16.0.0, Lo from 17.0.0), the Python path can split differently from the native scanners
and tiktoken.

Usage:

``python tools/gen_unicode_tables.py [OUT.h]``
    write the C++ header (default ``src/tokenforge/_core/unicode_tables.h``) from the
    pinned data; setup.py runs this at build time. The file is rewritten only if it changes.
``python tools/gen_unicode_tables.py --from-ucd VERSION DIR``
    (re)write ``tools/ucd/VERSION/`` from the official UCD files of that version, as
    published at https://www.unicode.org/Public/VERSION/ucd/ (``DIR`` holds
    ``extracted/DerivedGeneralCategory.txt`` and ``PropList.txt``).
``python tools/gen_unicode_tables.py --from-unicodedata-db VERSION FILE``
    the same from ``unicodedata_db.h``, the table CPython's ``Tools/unicode/makeunicodedata.py``
    compiles from ``UnicodeData.txt`` (in CPython's ``Modules/`` and in the source
    distribution of the ``unicodedata2`` package of that version). White_Space is then
    derived as U+0009..U+000D, U+0085 and every Zs, Zl and Zp character, which is what
    ``PropList.txt`` lists from Unicode 6.3 on.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

CLASSES = ["L", "N", "Lu", "Ll", "Lt", "Lm", "Lo", "M", "WS", "P"]
MAX_CP = 0x110000
ROOT = Path(__file__).resolve().parent.parent
UCD_DIR = Path(__file__).resolve().parent / "ucd"

#: The Unicode version of the split-pattern classes (tiktoken's regex-syntax, HF's Oniguruma).
SCANNER_UNICODE = "16.0.0"
#: The Unicode version of BERT's punctuation (HF's unicode_categories crate).
BERT_PUNCTUATION_UNICODE = "8.0.0"

GENERAL_CATEGORIES = (
    "Lu Ll Lt Lm Lo Mn Mc Me Nd Nl No Pc Pd Ps Pe Pi Pf Po Sm Sc Sk So Zs Zl Zp Cc Cf Cs Co Cn".split()
)

_LINE = re.compile(r"^([0-9A-Fa-f]{4,6})(?:\.\.([0-9A-Fa-f]{4,6}))?\s*;\s*([A-Za-z_]+)\s*$")


# ---------------------------------------------------------------------------
# Reading the pinned data (UCD line format)


def read_ranges(path: Path) -> list[tuple[int, int, str]]:
    """``(first, last, value)`` of every data line of a UCD-format file (``# comments`` dropped)."""
    out = []
    for n, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        m = _LINE.match(line)
        if m is None:
            raise ValueError(f"{path}:{n}: not a UCD data line: {raw!r}")
        first = int(m.group(1), 16)
        last = int(m.group(2), 16) if m.group(2) else first
        if not first <= last < MAX_CP:
            raise ValueError(f"{path}:{n}: bad range {raw!r}")
        out.append((first, last, m.group(3)))
    return out


def general_category(version: str, ucd_dir: Path = UCD_DIR) -> list[str]:
    """General_Category of every code point in Unicode ``version`` (unlisted ones are Cn)."""
    cats = ["Cn"] * MAX_CP
    seen = bytearray(MAX_CP)
    for first, last, value in read_ranges(ucd_dir / version / "DerivedGeneralCategory.txt"):
        if value not in GENERAL_CATEGORIES:
            raise ValueError(f"unknown General_Category {value!r} in Unicode {version}")
        for c in range(first, last + 1):
            if seen[c]:
                raise ValueError(f"U+{c:04X} listed twice in Unicode {version}")
            seen[c] = 1
            cats[c] = value
    return cats


def binary_property(version: str, name: str, ucd_dir: Path = UCD_DIR) -> set[int]:
    """The code points with the binary property ``name`` in Unicode ``version`` (PropList.txt)."""
    return {
        c
        for first, last, value in read_ranges(ucd_dir / version / "PropList.txt")
        if value == name
        for c in range(first, last + 1)
    }


def class_bits(ucd_dir: Path = UCD_DIR) -> list[int]:
    """The class bits (bit ``n`` for ``CLASSES[n]``) of every code point, from the pinned data."""
    bits = [0] * MAX_CP
    scan = general_category(SCANNER_UNICODE, ucd_dir)
    for c, cat in enumerate(scan):
        b = 0
        for n, name in enumerate(CLASSES[:8]):  # L N Lu Ll Lt Lm Lo M: a category or its major class
            if cat == name or (len(name) == 1 and cat[0] == name):
                b |= 1 << n
        bits[c] = b
    for c in binary_property(SCANNER_UNICODE, "White_Space", ucd_dir):
        bits[c] |= 1 << CLASSES.index("WS")
    p = 1 << CLASSES.index("P")
    for c, cat in enumerate(general_category(BERT_PUNCTUATION_UNICODE, ucd_dir)):
        if cat[0] == "P":
            bits[c] |= p
    return bits


def source() -> str:
    return (
        f"Unicode {SCANNER_UNICODE} (L N Lu Ll Lt Lm Lo M White_Space), "
        f"Unicode {BERT_PUNCTUATION_UNICODE} (P, BERT punctuation)"
    )


# ---------------------------------------------------------------------------
# The C++ header


def render(bits: list[int], source: str) -> str:
    blocks: dict[tuple[int, ...], int] = {}
    stage1: list[int] = []
    stage2: list[int] = []
    for hi in range(MAX_CP >> 8):
        block = tuple(bits[hi << 8 : (hi + 1) << 8])
        if block not in blocks:
            blocks[block] = len(blocks)
            stage2.extend(block)
        stage1.append(blocks[block])
    out = [
        "// Generated by tools/gen_unicode_tables.py from the pinned data in tools/ucd/: %s." % source,
        "// Do not edit; see that script for where the data comes from and how to regenerate it.",
        "#pragma once",
        "#include <cstdint>",
        "namespace tf_ucd {",
    ]
    for n, name in enumerate(CLASSES):
        out.append(f"constexpr uint16_t {name} = {1 << n};")
    out.append(f'constexpr const char* SOURCE = "{source}";')
    out.append(f"static const uint16_t stage1[{len(stage1)}] = {{")
    for i in range(0, len(stage1), 32):
        out.append("  " + ",".join(map(str, stage1[i : i + 32])) + ",")
    out.append("};")
    out.append(f"static const uint16_t stage2[{len(stage2)}] = {{")
    for i in range(0, len(stage2), 32):
        out.append("  " + ",".join(map(str, stage2[i : i + 32])) + ",")
    out.append("};")
    out.append("inline uint16_t lookup(uint32_t cp) {")
    out.append(f"  return cp < {MAX_CP} ? stage2[(uint32_t)stage1[cp >> 8] * 256u + (cp & 255u)] : 0;")
    out.append("}")
    out.append("}  // namespace tf_ucd")
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------------
# Writing the pinned data from a published source


def _runs(values: list[str]) -> list[tuple[int, int, str]]:
    out: list[tuple[int, int, str]] = []
    start = 0
    for c in range(1, MAX_CP + 1):
        if c == MAX_CP or values[c] != values[start]:
            out.append((start, c - 1, values[start]))
            start = c
    return out


def _fmt(first: int, last: int, value: str) -> str:
    return (f"{first:04X}" if first == last else f"{first:04X}..{last:04X}") + f" ; {value}"


def write_pinned(version: str, cats: list[str], white_space: set[int], origin: str, ucd_dir: Path = UCD_DIR) -> None:
    """Write ``ucd_dir/version/``: DerivedGeneralCategory.txt and PropList.txt (White_Space)."""
    if len(cats) != MAX_CP or any(c not in GENERAL_CATEGORIES for c in set(cats)):
        raise ValueError("need a General_Category for each of the 0x110000 code points")
    folder = ucd_dir / version
    folder.mkdir(parents=True, exist_ok=True)
    where = f"https://www.unicode.org/Public/{version}/ucd/"
    gc_lines = [
        f"# Unicode {version}: General_Category of every code point.",
        f"# The data of extracted/DerivedGeneralCategory.txt of the Unicode Character Database {version}",
        f"# ({where}), one line per run of code points with one value, in code point order.",
        "# Code points not listed are Cn (unassigned). Unicode license: https://www.unicode.org/license.txt",
        f"# Written by tools/gen_unicode_tables.py from {origin}.",
        "",
    ] + [_fmt(*r) for r in _runs(cats) if r[2] != "Cn"]
    ws = ["Yes" if c in white_space else "" for c in range(MAX_CP)]
    ws_lines = [
        f"# Unicode {version}: the White_Space property.",
        f"# The White_Space lines of PropList.txt of the Unicode Character Database {version}",
        f"# ({where}), one line per run of code points. Unicode license: https://www.unicode.org/license.txt",
        f"# Written by tools/gen_unicode_tables.py from {origin}.",
        "",
    ] + [_fmt(first, last, "White_Space") for first, last, v in _runs(ws) if v]
    (folder / "DerivedGeneralCategory.txt").write_text("\n".join(gc_lines) + "\n", encoding="utf-8")
    (folder / "PropList.txt").write_text("\n".join(ws_lines) + "\n", encoding="utf-8")


def from_ucd(version: str, src: Path, ucd_dir: Path = UCD_DIR) -> None:
    """Pin ``version`` from the official UCD files in ``src`` (a copy of Public/VERSION/ucd/)."""
    gc_file = src / "extracted" / "DerivedGeneralCategory.txt"
    if not gc_file.exists():
        gc_file = src / "DerivedGeneralCategory.txt"
    for path in (gc_file, src / "PropList.txt"):
        head = path.read_text(encoding="utf-8").splitlines()[0]
        if not re.search(r"(?<![\d.])%s(?!\.?\d)" % re.escape(version), head):
            raise ValueError(f"{path} is not Unicode {version}: {head!r}")
    cats = ["Cn"] * MAX_CP
    for first, last, value in read_ranges(gc_file):
        if value not in GENERAL_CATEGORIES:
            raise ValueError(f"unknown General_Category {value!r} in {gc_file}")
        cats[first : last + 1] = [value] * (last - first + 1)
    ws = {c for first, last, v in read_ranges(src / "PropList.txt") if v == "White_Space" for c in range(first, last + 1)}
    write_pinned(version, cats, ws, f"the official UCD {version} files", ucd_dir)


def from_unicodedata_db(version: str, header: Path, ucd_dir: Path = UCD_DIR) -> None:
    """Pin ``version`` from CPython's compiled ``unicodedata_db.h`` (makeunicodedata.py output)."""
    text = header.read_text(encoding="utf-8")
    found = re.search(r'#define UNIDATA_VERSION "([^"]+)"', text)
    if found is None or found.group(1) != version:
        raise ValueError(f"{header} is not Unicode {version}")

    def array(name: str) -> str:
        m = re.search(r"\b%s\[\] = \{(.*?)\};" % re.escape(name), text, re.S)
        if m is None:
            raise ValueError(f"{header} has no {name}")
        return m.group(1)

    records = [int(r.split(",")[0]) for r in re.findall(r"\{([^{}]*)\}", array("_PyUnicode_Database_Records"))]
    names = re.findall(r'"(\w*)"', array("_PyUnicode_CategoryNames"))
    index1 = [int(x) for x in re.findall(r"\d+", array("index1"))]
    index2 = [int(x) for x in re.findall(r"\d+", array("index2"))]
    shift = int(re.search(r"#define SHIFT (\d+)", text).group(1))
    mask = (1 << shift) - 1
    cats = [names[records[index2[(index1[c >> shift] << shift) + (c & mask)]]] for c in range(MAX_CP)]
    ws = {c for c in range(MAX_CP) if cats[c] in ("Zs", "Zl", "Zp")} | {*range(0x09, 0x0E), 0x85}
    origin = f"UnicodeData.txt {version} as compiled by CPython's makeunicodedata.py (unicodedata_db.h of {header.parent.parent.name})"
    write_pinned(version, cats, ws, origin, ucd_dir)


def main(argv: list[str]) -> int:
    if len(argv) == 4 and argv[1] == "--from-ucd":
        from_ucd(argv[2], Path(argv[3]))
        return 0
    if len(argv) == 4 and argv[1] == "--from-unicodedata-db":
        from_unicodedata_db(argv[2], Path(argv[3]))
        return 0
    if len(argv) > 2 or (len(argv) == 2 and argv[1].startswith("-")):
        print(__doc__, file=sys.stderr)
        return 2
    out = Path(argv[1]) if len(argv) > 1 else ROOT / "src" / "tokenforge" / "_core" / "unicode_tables.h"
    text = render(class_bits(), source())
    if not out.exists() or out.read_text() != text:
        out.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

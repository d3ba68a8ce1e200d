#!/usr/bin/env python3
"""Build the small multilingual training corpus shipped in tokenforge.

Output: src/tokenforge/data/corpus/ (relative to the repository root)

    <code>.train.txt / <code>.heldout.txt   one pair per language / kind
    manifest.json                          list of languages and file names
    SOURCES.md                             provenance and licences

Inputs:
    --data-dir    directory with the raw texts (default /work/shared/data/text)
    --stdlib-dir  CPython standard library (default: this interpreter's stdlib)

Every input file is checked against a pinned SHA-256 so that a rerun produces
byte-identical output; the build refuses to run if an input differs (override
with --no-verify, at the cost of reproducibility).  ``--check`` rebuilds in
memory and compares with the files on disk without writing anything.

Only the standard library is used.  Run from anywhere:

    python tools/build_corpus.py            # (re)write the corpus
    python tools/build_corpus.py --check    # verify the committed corpus
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import sysconfig
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = REPO_ROOT / "src" / "tokenforge" / "data" / "corpus"
DEFAULT_DATA = Path("/work/shared/data/text")
DEFAULT_STDLIB = Path(sysconfig.get_paths()["stdlib"])

# Pinned inputs (path relative to data dir / stdlib dir -> sha256).
DATA_SHA256 = {
    "tinystories_valid_sample.txt": "5fc1fb0113df62b567fb271806cd645ce8d75f59c58ca0b764c03d3b6ff34ca6",
    "botchan.txt": "464bd5300c24fce16fcc4555d4231a57632caae4d0090ad6aa92854a3b227ba7",
    "tinyshakespeare.txt": "86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed",
    "hongloumeng.txt": "5eca888fb54188d644df70fa555dd3c9cbdd3a8d7b3034fb59f7a81e16f05dc7",
    "wagahaiwa_nekodearu.txt": "c2f778906046fd19ee7be2525fc32d1e1bff806d013ee80798894054f3be2c26",
    "parallel/udhr_articles_aligned.tsv": "40ec99060a91a270db2d9882a8768c13644dfd89c200ca1ecc48e46a4097e269",
    "parallel/languages.json": "f3fbd45eb9aaba9348a180373162a5e92f4a92dc272ee3a18deceb27850ba1d6",
}
STDLIB_SHA256 = {  # CPython 3.11.7
    "textwrap.py": "62867e40cdea6669b361f72af4d7daf0359f207c92cbeddfc7c7506397c1f31c",
    "bisect.py": "e5b2ff166f48a06e70ae831d8c9b47283fcd0c254306eee12d3dae9c55e11526",
    "fnmatch.py": "6683da36e47af523f3f41e18ad244d837783e19e98911cc0b7415dea81494ebc",
    "graphlib.py": "7bd338c5a475d1101064603d3baa5507446d3c5e73f741f6d6e77c6204c1eb65",
    "reprlib.py": "264433cc232332db871666b3bb6e4c2cb97b092cb8d5056a45ec2e53daea2b1c",
    "copy.py": "27dcfc53a4b9d4fbc3d90c74e549eb6eca9301524d6d2fbff9a6589cf51b6fd5",
    "sched.py": "edfb309483d7cb05e06ad86d1fdeb819629f71402dc6710a1bec36c7afcaac50",
    "glob.py": "fa579f8a50a66313d34d339f10be0821c9b4fed6207e8ba8e29ed1c5e119f740",
    "LICENSE.txt": "3b2f81fe21d181c499c59a256c8e1968455d6689d269aa85373bfb6af41da3bf",
}
CPYTHON_VERSION = "3.11.7"

# Python modules: whole files, in this order.  None of them contains a URL.
CODE_TRAIN_MODULES = ["textwrap.py", "bisect.py", "fnmatch.py", "graphlib.py",
                      "reprlib.py", "copy.py", "sched.py"]
CODE_HELDOUT_MODULES = ["glob.py"]

# UDHR languages: (output code, lang_key in the TSV, English name).
UDHR_LANGS = [
    ("de", "deu_1996", "German"),
    ("ru", "rus", "Russian"),
    ("el", "ell_monotonic", "Greek"),
    ("ar", "arb", "Arabic"),
    ("he", "heb", "Hebrew"),
    ("hi", "hin", "Hindi"),
    ("th", "tha2", "Thai"),
    ("ko", "kor", "Korean"),
]
UDHR_TRAIN_ARTICLES = range(1, 26)
UDHR_HELDOUT_ARTICLES = range(26, 31)

# Byte budgets (a region stops at the first allowed cut at or after the budget).
EN_STORIES_TRAIN = 42_000
EN_STORIES_HELDOUT = 5_500
EN_SHAKESPEARE_TRAIN = 22_000
EN_SHAKESPEARE_HELDOUT = 4_500
EN_BOTCHAN_HELDOUT = 5_000
ZH_TRAIN = 90_000          # whole chapters from chapter 1 until >= budget
ZH_HELDOUT_CHAPTER = 20    # one whole chapter
JA_TRAIN = 25_000
JA_HELDOUT = 3_500
JA_HELDOUT_CHAPTER = "五"


class BuildError(Exception):
    pass


# --------------------------------------------------------------------------
# helpers


def nbytes(s: str) -> int:
    return len(s.encode("utf-8"))


def read_source(path: Path, expected: str | None, verify: bool) -> str:
    raw = path.read_bytes()
    digest = hashlib.sha256(raw).hexdigest()
    if verify and expected is not None and digest != expected:
        raise BuildError(
            f"{path}: sha256 {digest} does not match pinned {expected}; "
            "output would not be reproducible (use --no-verify to override)")
    text = raw.decode("utf-8")  # strict
    if text.startswith("\ufeff"):
        text = text[1:]
    return text.replace("\r\n", "\n").replace("\r", "\n")


def source_lines(text: str) -> list[str]:
    """Lines of a text; index i is source line i + 1."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


class Region:
    """Selected text plus a human-readable description of where it came from."""

    def __init__(self, text: str, where: str):
        self.text = text
        self.where = where


def paragraphs(lines: list[str], start: int = 0, stop: int | None = None):
    """Blank-line separated blocks as (first_idx, last_idx, [lines])."""
    stop = len(lines) if stop is None else stop
    block: list[str] = []
    first = None
    for i in range(start, stop):
        if lines[i].strip():
            if first is None:
                first = i
            block.append(lines[i])
        elif block:
            yield first, i - 1, block
            block, first = [], None
    if block:
        yield first, stop - 1, block


def line_range(a: int, b: int) -> str:
    return f"lines {a + 1}\u2013{b + 1}"


# --------------------------------------------------------------------------
# English


def tinystories(text: str) -> tuple[Region, Region]:
    lines = source_lines(text)
    paras = list(paragraphs(lines))

    def story_start(p):
        return p[2][0].startswith("Once upon a time")

    def take(first_para: int, budget: int):
        out, size, j = [], 0, first_para
        while j < len(paras):
            if size >= budget and story_start(paras[j]):
                break
            out.append(paras[j])
            size += nbytes("\n".join(paras[j][2])) + 2
            j += 1
        return out, j

    starts = [j for j, p in enumerate(paras) if story_start(p)]
    train, _ = take(starts[0], EN_STORIES_TRAIN)
    half = next(j for j in starts if paras[j][0] >= len(lines) // 2)
    held, _ = take(half, EN_STORIES_HELDOUT)

    def region(ps, what):
        body = "\n\n".join("\n".join(p[2]) for p in ps)
        return Region(body, f"{line_range(ps[0][0], ps[-1][1])} ({what})")

    return (region(train, "whole stories from the first \u201cOnce upon a time\u201d"),
            region(held, "whole stories from the second half of the file"))


TRANSCRIBER_MARK = re.compile(r"\[[A-Z]\]")
SENTENCE_END = re.compile(r"[.!?][\"')\]]*$")


def botchan(text: str) -> tuple[Region, Region]:
    lines = source_lines(text)
    start = next(i for i, l in enumerate(lines) if l.startswith("*** START OF"))
    end = next(i for i, l in enumerate(lines) if l.startswith("*** END OF"))
    chapters = [i for i in range(start, end) if re.match(r"CHAPTER [IVX]+\.?$", lines[i])]
    if len(chapters) != 11:
        raise BuildError(f"botchan: expected 11 chapters, found {len(chapters)}")

    def clean(i):
        return TRANSCRIBER_MARK.sub("", lines[i]).rstrip()

    # train: chapters I and II in full
    a, b = chapters[0], chapters[2] - 1
    while not lines[b].strip():
        b -= 1
    train = [clean(i) for i in range(a, b + 1)]
    if any(not l for l in train):
        raise BuildError("botchan: unexpected blank line")
    # held-out: beginning of chapter X, cut after a sentence-final line
    a2 = chapters[9]
    out, size, i = [], 0, a2
    while True:
        out.append(clean(i))
        size += nbytes(out[-1]) + 1
        if size >= EN_BOTCHAN_HELDOUT and SENTENCE_END.search(out[-1]):
            break
        i += 1
    return (Region("\n".join(train), f"{line_range(a, b)} (chapters I\u2013II)"),
            Region("\n".join(out), f"{line_range(a2, i)} (opening of chapter X)"))


def shakespeare(text: str) -> tuple[Region, Region]:
    lines = source_lines(text)
    paras = list(paragraphs(lines))
    train, size = [], 0
    for p in paras:
        if size >= EN_SHAKESPEARE_TRAIN:
            break
        train.append(p)
        size += nbytes("\n".join(p[2])) + 2
    held, size = [], 0
    for p in reversed(paras):
        if size >= EN_SHAKESPEARE_HELDOUT:
            break
        held.insert(0, p)
        size += nbytes("\n".join(p[2])) + 2
    if held[0][0] <= train[-1][1]:
        raise BuildError("shakespeare: regions overlap")

    def region(ps, what):
        body = "\n\n".join("\n".join(p[2]) for p in ps)
        return Region(body, f"{line_range(ps[0][0], ps[-1][1])} ({what})")

    return (region(train, "opening speeches of the file"),
            region(held, "closing speeches of the file"))


# --------------------------------------------------------------------------
# Chinese

ZH_CHAPTER = re.compile(r"^第[一二三四五六七八九十百零]+回")
# A paragraph is kept only if every character is in this set; paragraphs with
# encoding damage (Cyrillic/kana/Latin placeholders, '?', '*', '_', '~') are
# dropped whole.
ZH_OK = re.compile(
    r"^[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef"
    r"\u201c\u201d\u2018\u2019\u2026\u2014\u00b7 \"`\-()]*$")

CN_DIGITS = "零一二三四五六七八九"


def cn_number(n: int) -> str:
    if n < 10:
        return CN_DIGITS[n]
    tens, ones = divmod(n, 10)
    s = ("" if tens == 1 else CN_DIGITS[tens]) + "十"
    return s + (CN_DIGITS[ones] if ones else "")


def hongloumeng(text: str) -> tuple[Region, Region, dict]:
    lines = source_lines(text)
    heads = [i for i, l in enumerate(lines) if ZH_CHAPTER.match(l)]
    if len(heads) != 120:
        raise BuildError(f"hongloumeng: expected 120 chapters, found {len(heads)}")
    bounds = list(zip(heads, heads[1:] + [len(lines)]))
    stats = {"dropped": 0, "dropped_bytes": 0}

    def chapter(k):  # k is 1-based
        a, b = bounds[k - 1]
        if not lines[a].strip().startswith(f"第{cn_number(k)}回"):
            raise BuildError(f"hongloumeng: chapter {k} heading mismatch")
        out = []
        for i in range(a, b):
            p = lines[i].strip()
            if not p:
                continue
            if ZH_OK.match(p):
                out.append(p)
            else:
                stats["dropped"] += 1
                stats["dropped_bytes"] += nbytes(p) + 1
        last = b - 1
        while not lines[last].strip():
            last -= 1
        return out, a, last

    train_ch, size, k = [], 0, 1
    while size < ZH_TRAIN:
        train_ch.append(chapter(k))
        size += nbytes("\n".join(train_ch[-1][0])) + 2
        k += 1
    n_train = k - 1
    if ZH_HELDOUT_CHAPTER <= n_train:
        raise BuildError("hongloumeng: held-out chapter overlaps training part")
    held = chapter(ZH_HELDOUT_CHAPTER)
    train = Region("\n\n".join("\n".join(c[0]) for c in train_ch),
                   f"chapters 1\u2013{n_train} ({line_range(train_ch[0][1], train_ch[-1][2])})")
    heldout = Region("\n".join(held[0]),
                     f"chapter {ZH_HELDOUT_CHAPTER} ({line_range(held[1], held[2])})")
    return train, heldout, stats


# --------------------------------------------------------------------------
# Japanese (Aozora Bunko markup)

RUBY = re.compile(r"《[^》]*》")
GAIJI = re.compile(r"※［＃[^］]*?(?:第[34]水準)?(\d)-(\d+)-(\d+)］")
GAIJI_UCS = re.compile(r"※［＃[^］]*?U\+([0-9A-Fa-f]{4,6})[^］]*］")
NOTE = re.compile(r"［＃[^］]*］")


def jis_x_0213(plane: int, row: int, cell: int) -> str:
    if plane == 1:
        raw = bytes([0xA0 + row, 0xA0 + cell])
    else:
        raw = bytes([0x8F, 0xA0 + row, 0xA0 + cell])
    ch = raw.decode("euc_jis_2004")
    if len(ch) != 1:
        raise BuildError(f"gaiji {plane}-{row}-{cell} decodes to {ch!r}")
    return ch


def aozora_clean(line: str) -> str:
    line = GAIJI_UCS.sub(lambda m: chr(int(m.group(1), 16)), line)
    line = GAIJI.sub(lambda m: jis_x_0213(*map(int, m.groups())), line)
    line = RUBY.sub("", line).replace("｜", "")
    line = NOTE.sub("", line)
    if "※" in line or "［＃" in line or "〔" in line:
        raise BuildError(f"wagahaiwa: unhandled markup in {line[:40]!r}")
    return line.rstrip()


def wagahaiwa(text: str) -> tuple[Region, Region]:
    lines = source_lines(text)
    heads = {}
    for i, l in enumerate(lines):
        m = re.search(r"［＃「([一二三四五六七八九十]+)」は中見出し］", l)
        if m:
            heads[m.group(1)] = i
    footer = next(i for i, l in enumerate(lines) if l.startswith("底本："))

    def take(start: int, budget: int):
        out, size, i = [], 0, start
        while size < budget:
            if i >= footer:
                raise BuildError("wagahaiwa: ran into the colophon")
            c = aozora_clean(lines[i])
            if c.strip():
                out.append(c)
                size += nbytes(c) + 1
            i += 1
        return out, start, i - 1

    tr = take(heads["一"], JA_TRAIN)
    ho = take(heads[JA_HELDOUT_CHAPTER], JA_HELDOUT)
    if ho[1] <= tr[2]:
        raise BuildError("wagahaiwa: regions overlap")
    return (Region("\n".join(tr[0]), f"{line_range(tr[1], tr[2])} (opening of chapter 一)"),
            Region("\n".join(ho[0]), f"{line_range(ho[1], ho[2])} (opening of chapter {JA_HELDOUT_CHAPTER})"))


# --------------------------------------------------------------------------
# Python code


def code_part(stdlib: Path, modules: list[str], verify: bool) -> str:
    parts = []
    for name in modules:
        src = read_source(stdlib / name, STDLIB_SHA256[name], verify)
        parts.append(f"# ---- file: {name} ----\n" + src.rstrip("\n"))
    return "\n\n\n".join(parts)


def psf_license(stdlib: Path, verify: bool) -> str:
    text = read_source(stdlib / "LICENSE.txt", STDLIB_SHA256["LICENSE.txt"], verify)
    a = text.index("PYTHON SOFTWARE FOUNDATION LICENSE VERSION 2")
    b = text.index("\nBEOPEN", a)
    return text[a:b].strip()


# --------------------------------------------------------------------------
# UDHR


def udhr(data: Path, verify: bool) -> dict:
    tsv = read_source(data / "parallel/udhr_articles_aligned.tsv",
                      DATA_SHA256["parallel/udhr_articles_aligned.tsv"], verify)
    meta = json.loads(read_source(data / "parallel/languages.json",
                                  DATA_SHA256["parallel/languages.json"], verify))
    wanted = {key for _, key, _ in UDHR_LANGS}
    rows: dict[str, dict[int, tuple[str, str, str]]] = {k: {} for k in wanted}
    lines = source_lines(tsv)
    if lines[0].split("\t") != ["lang_key", "bcp47", "script", "article", "text"]:
        raise BuildError("udhr: unexpected header")
    for line in lines[1:]:
        key, bcp47, script, article, body = line.split("\t")
        if key in wanted:
            n = int(article)
            if n in rows[key]:
                raise BuildError(f"udhr: duplicate article {key} {n}")
            rows[key][n] = (bcp47, script, body.strip())
    out = {}
    for code, key, name in UDHR_LANGS:
        arts = rows[key]
        if sorted(arts) != list(range(1, 31)):
            raise BuildError(f"udhr: {key} does not have articles 1-30")
        bcp47, script, _ = arts[1]
        out[code] = {
            "key": key, "bcp47": bcp47, "script": script, "name": name,
            "udhr_name": meta[key]["name"],
            "train": "\n".join(arts[n][2] for n in UDHR_TRAIN_ARTICLES),
            "heldout": "\n".join(arts[n][2] for n in UDHR_HELDOUT_ARTICLES),
        }
    return out


# --------------------------------------------------------------------------
# assembly


def finish(text: str) -> bytes:
    text = "\n".join(l.rstrip() for l in text.split("\n")).strip("\n") + "\n"
    data = text.encode("utf-8")
    if b"\r" in data or data.startswith(b"\xef\xbb\xbf") or "\ufeff" in text:
        raise BuildError("CR or BOM in output")
    return data


def build(data: Path, stdlib: Path, verify: bool) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    rows = []  # (file, content, source, licence)

    def rd(name):
        return read_source(data / name, DATA_SHA256[name], verify)

    # en
    st_tr, st_ho = tinystories(rd("tinystories_valid_sample.txt"))
    bo_tr, bo_ho = botchan(rd("botchan.txt"))
    sh_tr, sh_ho = shakespeare(rd("tinyshakespeare.txt"))
    files["en.train.txt"] = finish("\n\n".join([st_tr.text, bo_tr.text, sh_tr.text]))
    files["en.heldout.txt"] = finish("\n\n".join([st_ho.text, bo_ho.text, sh_ho.text]))
    en_src = ("(1) TinyStories, `tinystories_valid_sample.txt` {st}; "
              "(2) *Botchan* by Natsume S\u014dseki, English translation by Yasotaro Morri "
              "(1919, rev. J. R. Kennedy), `botchan.txt` {bo}; "
              "(3) Tiny Shakespeare (Shakespeare plays), `tinyshakespeare.txt` {sh}")
    lic_en = ("TinyStories part: CDLA-Sharing-1.0; Botchan and Shakespeare parts: "
              "public domain")
    rows.append(("en.train.txt", "English prose, three blocks in this order",
                 en_src.format(st=st_tr.where, bo=bo_tr.where, sh=sh_tr.where), lic_en))
    rows.append(("en.heldout.txt", "English prose, three blocks in this order",
                 en_src.format(st=st_ho.where, bo=bo_ho.where, sh=sh_ho.where), lic_en))

    # zh
    zh_tr, zh_ho, zh_stats = hongloumeng(rd("hongloumeng.txt"))
    files["zh.train.txt"] = finish(zh_tr.text)
    files["zh.heldout.txt"] = finish(zh_ho.text)
    for f, r in (("zh.train.txt", zh_tr), ("zh.heldout.txt", zh_ho)):
        rows.append((f, "Chinese prose (simplified characters), one paragraph per line",
                     f"\u300a\u7ea2\u697c\u68a6\u300b (*Dream of the Red Chamber*) by "
                     f"\u66f9\u96ea\u82b9 Cao Xueqin, `hongloumeng.txt` {r.where}",
                     "public domain"))

    # code
    files["code.train.txt"] = finish(code_part(stdlib, CODE_TRAIN_MODULES, verify))
    files["code.heldout.txt"] = finish(code_part(stdlib, CODE_HELDOUT_MODULES, verify))
    for f, mods in (("code.train.txt", CODE_TRAIN_MODULES),
                    ("code.heldout.txt", CODE_HELDOUT_MODULES)):
        rows.append((f, "Python source code: whole, unmodified modules, each preceded "
                        "by a `# ---- file: NAME ----` line",
                     f"CPython {CPYTHON_VERSION} standard library `Lib/`: "
                     + ", ".join(f"`{m}`" for m in mods),
                     "PSF License Agreement v2 (see below)"))

    # ja
    ja_tr, ja_ho = wagahaiwa(rd("wagahaiwa_nekodearu.txt"))
    files["ja.train.txt"] = finish(ja_tr.text)
    files["ja.heldout.txt"] = finish(ja_ho.text)
    for f, r in (("ja.train.txt", ja_tr), ("ja.heldout.txt", ja_ho)):
        rows.append((f, "Japanese prose, one paragraph per line, Aozora markup removed",
                     f"\u300e\u543e\u8f29\u306f\u732b\u3067\u3042\u308b\u300f by "
                     f"\u590f\u76ee\u6f31\u77f3 Natsume S\u014dseki (Aozora Bunko e-text; "
                     f"\u5e95\u672c: \u300c\u590f\u76ee\u6f31\u77f3\u5168\u96c6\uff11\u300d"
                     f"\u3061\u304f\u307e\u6587\u5eab), `wagahaiwa_nekodearu.txt` {r.where}",
                     "public domain"))

    # UDHR
    udhr_langs = udhr(data, verify)
    for code, _, _ in UDHR_LANGS:
        u = udhr_langs[code]
        files[f"{code}.train.txt"] = finish(u["train"])
        files[f"{code}.heldout.txt"] = finish(u["heldout"])
        for part, arts in (("train", "1\u201325"), ("heldout", "26\u201330")):
            rows.append((f"{code}.{part}.txt",
                         f"{u['name']} ({u['script']}), one article per line",
                         f"Universal Declaration of Human Rights, \u201cUDHR in Unicode\u201d "
                         f"text `{u['key']}` ({u['udhr_name']}, BCP 47 `{u['bcp47']}`), "
                         f"articles {arts}, from `parallel/udhr_articles_aligned.tsv`",
                         "UDHR text: freely reproducible"))

    # manifest
    langs = [
        {"code": "en", "name": "English", "script": "Latn"},
        {"code": "zh", "name": "Chinese", "script": "Hans"},
        {"code": "code", "name": "Python code", "script": "Zyyy"},
        {"code": "ja", "name": "Japanese", "script": "Jpan"},
    ] + [{"code": c, "name": udhr_langs[c]["name"], "script": udhr_langs[c]["script"]}
         for c, _, _ in UDHR_LANGS]
    for entry in langs:
        entry["train"] = f"{entry['code']}.train.txt"
        entry["heldout"] = f"{entry['code']}.heldout.txt"
    files["manifest.json"] = (json.dumps({"languages": langs}, ensure_ascii=False, indent=2)
                              + "\n").encode("utf-8")

    files["SOURCES.md"] = finish(sources_md(files, rows, zh_stats, psf_license(stdlib, verify)))

    # final validation
    for name, blob in files.items():
        blob.decode("utf-8")
        if not blob.endswith(b"\n") or b"\r" in blob or blob.startswith(b"\xef\xbb\xbf"):
            raise BuildError(f"{name}: bad encoding / line endings")
    return files


def sources_md(files, rows, zh_stats, psf_text) -> str:
    total = sum(len(files[r[0]]) for r in rows)
    out = [
        "# tokenforge bundled corpus \u2014 sources and licences",
        "",
        "Small multilingual corpus for training and evaluating tokenizers. Each "
        "language / kind has a training part (`<code>.train.txt`) and a held-out part "
        "(`<code>.heldout.txt`) taken from a different region of the same source, so "
        "the two never overlap. All files are UTF-8 without BOM, LF line endings, and "
        "end with a newline; text was cut at line boundaries only. `manifest.json` "
        "lists the languages.",
        "",
        "Generated by `tools/build_corpus.py` (run `python tools/build_corpus.py` from "
        "the repository root; `--check` verifies that the files here are byte-identical "
        "to a fresh build). Line numbers below are 1-based line numbers of the named "
        "source file.",
        "",
        "| File | Bytes | Content | Source | Licence |",
        "|---|---:|---|---|---|",
    ]
    for f, what, src, lic in rows:
        out.append(f"| `{f}` | {len(files[f])} | {what} | {src} | {lic} |")
    out += [
        "",
        f"Text files total: {total} bytes.",
        "",
        "## Processing notes",
        "",
        "- All sources: CRLF converted to LF, byte-order marks removed, trailing "
        "whitespace on each line removed.",
        "- English: blocks from the three sources are separated by one blank line. "
        "TinyStories regions start and stop at story boundaries. Botchan: only text "
        "between the e-text's start/end markers is used (no e-text header, footer or "
        "licence boilerplate); the transcriber's one-letter typo markers such as `[A]` "
        "were removed, the translator's numbered footnotes were kept.",
        "- Chinese: whole chapters; paragraph indentation removed; blank lines between "
        "paragraphs removed, one blank line between chapters. The source e-text has "
        f"scattered encoding damage (placeholder Cyrillic/kana/Latin letters, `?`, "
        f"`*`, `_`); {zh_stats['dropped']} damaged paragraphs ({zh_stats['dropped_bytes']} "
        "bytes) were dropped whole rather than edited. The e-text's own quote "
        "conventions (ASCII `\"`, and `` ` `` \u2026 `-` for inner quotes) were left as "
        "they are.",
        "- Japanese: Aozora Bunko markup removed: ruby readings `\u300a\u2026\u300b`, "
        "ruby-start marks `\uff5c` and editor notes `\uff3b\uff03\u2026\uff3d`; "
        "characters given as JIS X 0213 references (`\u203b\uff3b\uff03\u2026\uff3d`) "
        "were replaced by the actual characters. Header (title block and markup "
        "legend) and colophon are not included. Full-width paragraph indentation kept.",
        "- Python code: files are copied whole and unmodified; the only additions are "
        "the `# ---- file: NAME ----` separator lines and blank lines between files.",
        "- UDHR: article texts joined with newlines, one article per line, "
        "no article headings. German uses the 1996 orthography text, Greek the "
        "monotonic text, Thai the second (`tha2`) text, which has no editorial "
        "brackets.",
        "",
        "## Licences",
        "",
        "- **TinyStories** (part of `en.*.txt`): Community Data License Agreement \u2013 "
        "Sharing, Version 1.0 (SPDX: `CDLA-Sharing-1.0`). This excerpt is redistributed "
        "under the same agreement.",
        "- **Public domain**: Tiny Shakespeare (Shakespeare), *Botchan* (Natsume "
        "S\u014dseki; 1919 English translation by Yasotaro Morri), \u300a\u7ea2\u697c\u68a6"
        "\u300b (Cao Xueqin), \u300e\u543e\u8f29\u306f\u732b\u3067\u3042\u308b\u300f "
        "(Natsume S\u014dseki). \u300a\u897f\u6e38\u8bb0\u300b (also public domain) was "
        "considered but not used.",
        "- **UDHR**: texts from the \u201cUDHR in Unicode\u201d collection. The text of "
        "the Universal Declaration of Human Rights is freely reproducible.",
        f"- **CPython standard library** (`code.*.txt`): Copyright \u00a9 2001\u20132023 "
        f"Python Software Foundation; All Rights Reserved. Distributed under the PSF "
        f"License Agreement version 2, reproduced below as required by its clause 2. "
        f"Summary of changes (clause 3): the modules are included unmodified from "
        f"CPython {CPYTHON_VERSION}; they were concatenated into two text files with "
        f"separator lines.",
        "",
        "### PSF License Agreement (from CPython " + CPYTHON_VERSION + " `LICENSE`)",
        "",
        "```text",
        psf_text,
        "```",
    ]
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--stdlib-dir", type=Path, default=DEFAULT_STDLIB)
    ap.add_argument("--out-dir", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--no-verify", action="store_true",
                    help="do not check input checksums (output may differ)")
    ap.add_argument("--check", action="store_true",
                    help="compare a fresh build with the files on disk; write nothing")
    args = ap.parse_args(argv)
    try:
        files = build(args.data_dir, args.stdlib_dir, not args.no_verify)
    except BuildError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.check:
        bad = [n for n, b in files.items()
               if not (args.out_dir / n).is_file() or (args.out_dir / n).read_bytes() != b]
        for n in bad:
            print(f"differs: {n}", file=sys.stderr)
        print("corpus up to date" if not bad else f"{len(bad)} file(s) differ")
        return 1 if bad else 0
    args.out_dir.mkdir(parents=True, exist_ok=True)
    total = 0
    for name in sorted(files):
        (args.out_dir / name).write_bytes(files[name])
        total += len(files[name])
        print(f"{len(files[name]):>8}  {name}")
    print(f"{total:>8}  total")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Character coverage and Unicode scripts: the rules both SentencePiece trainers share.

sentencepiece's ``trainer_interface.cc`` (Kudo & Richardson, 2018) decides the
alphabet before any training: it counts every character of the (normalized)
sentences, sorts them by count, and keeps the most frequent until
``character_coverage`` of all character occurrences is covered; the rest
become ``kUNKChar``. Both the Unigram trainer (:mod:`.unigram`) and the BPE
trainer (:mod:`.spm_bpe`) use :func:`required_chars` for that, and the same
``IsValidSentencePiece`` script rule (a piece never mixes Unicode scripts;
Hiragana, Katakana and U+30FC count as Han), so :func:`script_of` is the one
classifier for both.

Float semantics: sentencepiece computes the covered share as
``const float coverage = 1.0 * accumulated / all`` and compares it with the
``float`` field ``TrainerSpec.character_coverage``, so both sides are rounded
to float32 (:func:`~tokenforge.sentencepiece.constants.f32`) before the
comparison. Rounding only one side, or neither, keeps one character more or
fewer at some coverages (e.g. 0.9995, which float32 stores as 0.99949997...).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Mapping
from functools import lru_cache

import numpy as np

from ..sentencepiece.constants import f32

__all__ = ["SCRIPTS", "count_chars", "required_chars", "script_of"]

#: Unicode scripts known to the ``regex`` module; one alternation with a named
#: group per script gives a character's script as ``match.lastgroup``.
SCRIPTS = (
    "Latin Han Hiragana Katakana Hangul Cyrillic Greek Arabic Hebrew Devanagari Thai Common Inherited "
    "Adlam Ahom Anatolian_Hieroglyphs Armenian Avestan Balinese Bamum Bassa_Vah Batak Bengali Bhaiksuki "
    "Bopomofo Brahmi Braille Buginese Buhid Canadian_Aboriginal Carian Caucasian_Albanian Chakma Cham "
    "Cherokee Chorasmian Coptic Cuneiform Cypriot Cypro_Minoan Deseret Dives_Akuru Dogra Duployan "
    "Egyptian_Hieroglyphs Elbasan Elymaic Ethiopic Georgian Glagolitic Gothic Grantha Gujarati "
    "Gunjala_Gondi Gurmukhi Hanifi_Rohingya Hanunoo Hatran Imperial_Aramaic Inscriptional_Pahlavi "
    "Inscriptional_Parthian Javanese Kaithi Kannada Kawi Kayah_Li Kharoshthi Khitan_Small_Script Khmer "
    "Khojki Khudawadi Lao Lepcha Limbu Linear_A Linear_B Lisu Lycian Lydian Mahajani Makasar Malayalam "
    "Mandaic Manichaean Marchen Masaram_Gondi Medefaidrin Meetei_Mayek Mende_Kikakui Meroitic_Cursive "
    "Meroitic_Hieroglyphs Miao Modi Mongolian Mro Multani Myanmar Nabataean Nag_Mundari Nandinagari "
    "New_Tai_Lue Newa Nko Nushu Nyiakeng_Puachue_Hmong Ogham Ol_Chiki Old_Hungarian Old_Italic "
    "Old_North_Arabian Old_Permic Old_Persian Old_Sogdian Old_South_Arabian Old_Turkic Old_Uyghur Oriya "
    "Osage Osmanya Pahawh_Hmong Palmyrene Pau_Cin_Hau Phags_Pa Phoenician Psalter_Pahlavi Rejang Runic "
    "Samaritan Saurashtra Sharada Shavian Siddham SignWriting Sinhala Sogdian Sora_Sompeng Soyombo "
    "Sundanese Syloti_Nagri Syriac Tagalog Tagbanwa Tai_Le Tai_Tham Tai_Viet Takri Tamil Tangsa Tangut "
    "Telugu Thaana Tibetan Tifinagh Tirhuta Toto Ugaritic Vai Vithkuqi Wancho Warang_Citi Yezidi Yi "
    "Zanabazar_Square"
).split()


@lru_cache(maxsize=1)
def _script_regex():
    import regex

    return regex.compile("|".join(rf"(?P<{s}>\p{{sc={s}}})" for s in SCRIPTS))


@lru_cache(maxsize=None)
def script_of(c: str) -> str:
    """Script of ``c`` as sentencepiece's trainer sees it: Hiragana, Katakana
    and U+30FC count as Han; an unassigned character is ``"Unknown"``.

    >>> script_of("a"), script_of("カ"), script_of("\u0301"), script_of("1")
    ('Latin', 'Han', 'Inherited', 'Common')
    """
    if c == "\u30fc":
        return "Han"
    m = _script_regex().match(c)
    s = m.lastgroup if m else "Unknown"
    return "Han" if s in ("Hiragana", "Katakana") else s


def count_chars(words: Mapping[str, int] | Iterable[tuple[str, int]]) -> dict[str, int]:
    """Occurrences of every character of ``{word: count}`` (or ``(word, count)`` pairs),
    weighted by the word counts.

    >>> count_chars({"▁aab": 3, "▁c": 1})
    {'a': 6, 'b': 3, '▁': 4, 'c': 1}
    """
    items = words.items() if isinstance(words, Mapping) else words
    by_count: dict[int, list[str]] = {}
    for word, c in items:
        by_count.setdefault(c, []).append(word)
    chars: dict[str, int] = {}
    for c, group in by_count.items():  # one vectorized count of the code points per distinct count
        cps = np.frombuffer("".join(group).encode("utf-32-le", "surrogatepass"), dtype="<u4")
        found, n = np.unique(cps, return_counts=True)
        for cp, k in zip(found.tolist(), n.tolist()):
            ch = chr(cp)
            chars[ch] = chars.get(ch, 0) + k * c
    return chars


def required_chars(char_counts: Mapping[str, int], character_coverage: float) -> list[tuple[str, int]]:
    """The alphabet: ``[(char, count), ...]`` most frequent first (ties by code
    point), cut where ``character_coverage`` of all counted characters is
    covered (the share and the coverage both rounded to float32, see above).

    >>> required_chars(count_chars({"▁aab": 3, "▁c": 1}), 0.9)
    [('a', 6), ('▁', 4), ('b', 3)]
    """
    total = sum(char_counts.values())
    target = f32(character_coverage)
    out: list[tuple[str, int]] = []
    acc = 0
    for ch, c in sorted(char_counts.items(), key=lambda kv: (-kv[1], kv[0])):
        if total and f32(acc / total) >= target:
            break
        acc += c
        out.append((ch, c))
    return out


#: Code points that sentencepiece's own script table (``unicode_script_map.h``, made from an older
#: Unicode version) leaves out, so its trainer puts them in ``Common``, while the ``regex`` module
#: gives them a script (letters added since, the CJK extensions past U+4DB5 and U+9FD5, scripts
#: such as Tangsa or Kawi): hex ranges, found by comparing the two tables code point by code
#: point. Unassigned code points are ``Common`` there too; U+0953..U+0954 are Devanagari there,
#: not Inherited.
_SPM_COMMON_RANGES = (
    "0558 0560 0588-0589 058B-058C 05C8-05C9 05EF 061C-061D 07FD-07FF 0860-086A 0870-0891 0897-089F "
    "08B5 08BE-08D3 09FC-09FE 0A76 0AFA-0AFF 0B53-0B55 0C04 0C3C 0C5C-0C5D 0C77 0C84 0CDC-0CDD 0CF3 "
    "0D00 0D04 0D3B-0D3C 0D81 0E86 0E89 0E8C 0E8E-0E93 0E98 0EA0 0EA8-0EA9 0EAC 0EBA 0ECE 170D 1715 "
    "171F 180F 1878 1ABF-1AF0 1B4C 1B4E-1B4F 1B7D-1B7F 1C89-1C8A 1C90-1CBA 1CBD-1CBF 1DF6-1DFA "
    "209D-209F 2C2F 2C5F 312E-312F 31BB-31BF 4DB6-4DBF 9FD6-9FFF A7AF A7B8-A7DD A7E2 A7F1-A7F6 A82C "
    "A8FE-A8FF AB66-AB69 AB6C-AB6D FBC2-FBD2 FD40-FD4F FD90-FD91 FDC8-FDCF FDFE-FDFF 1032D-1032F "
    "10570-1057A 1057C-1058A 1058C-10592 10594-10595 10597-105A1 105A3-105B1 105B3-105B9 105BB-105BC "
    "10780-10785 10787-107B0 107B2-107BF 10A34-10A35 10A48 10D00-10D27 10D30-10D39 10E80-10EA9 "
    "10EAB-10EAD 10EB0-10EB1 10EC2-10EC7 10EC9-10EEE 10EF0-10F27 10F30-10F59 10F70-10F89 10FB0-10FCB "
    "10FE0-10FF6 11070-11075 110C2 110CD 11144-11147 111CE-111CF 1123F-11241 1133B 1145A 1145E-11461 "
    "116B8-116B9 116D0-116E3 1171A 11740-11746 11800-1183B 11900-11906 11909 1190C-11913 11915-11916 "
    "11918-11935 11937-11938 1193B-11946 11950-11959 119A0-119A7 119AA-119D7 119DA-119E4 11A00-11A47 "
    "11A50-11AA2 11AB0-11ABF 11B00-11B0A 11B60-11B67 11D00-11D06 11D08-11D09 11D0B-11D36 11D3A "
    "11D3C-11D3D 11D3F-11D47 11D50-11D59 11D60-11D65 11D67-11D68 11D6A-11D8E 11D90-11D91 11D93-11D98 "
    "11DA0-11DA9 11DF0-11DF1 11EE0-11EF8 11F00-11F10 11F12-11F3A 11F3E-11F5A 11FB0 11FC0-11FF1 11FFF "
    "1246F 12475-1247F 12550-125A7 1264C-12686 12F90-12FF2 1342F-13455 13460-143FA 16A70-16ABE "
    "16AC0-16AC9 16E40-16E9A 16F45-16F4A 16F4F 16F7F-16F87 16FE1-16FE4 16FF0-16FF6 187ED-187FF "
    "18AF3-18CDA 18CFF-18D20 18D80-18DF2 1AFF0-1AFF3 1AFF5-1AFFB 1AFFD-1AFFE 1B002-1B128 1B132 "
    "1B150-1B152 1B155 1B164-1B168 1B170-1B2FB 1CF00-1CF2D 1CF30-1CF46 1D127-1D128 1D25B-1D25C "
    "1DF00-1DF81 1DF90-1DF96 1DFCD-1DFFF 1E030-1E06D 1E08F 1E100-1E12C 1E130-1E13D 1E140-1E149 "
    "1E14E-1E14F 1E290-1E2AE 1E2C0-1E2F9 1E2FF 1E4D0-1E4F9 1E7E0-1E7E6 1E7E8-1E7EB 1E7ED-1E7EE "
    "1E7F0-1E7FE 1E94B 2A6D7-2A6DF 2B735-2B73F 2B81E 2CEA2-2CEAD 2CEB0-2EBE0 2EBF0-2EE5D 30000-3134A "
    "31350-33479"
)


@lru_cache(maxsize=1)
def _spm_common_ranges() -> tuple[list[int], list[int]]:
    starts: list[int] = []
    ends: list[int] = []
    for tok in _SPM_COMMON_RANGES.split():
        a, _, b = tok.partition("-")
        starts.append(int(a, 16))
        ends.append(int(b or a, 16))
    return starts, ends


@lru_cache(maxsize=None)
def spm_script(c: str) -> str:
    """The script sentencepiece's trainer gives ``c`` (``IsValidSentencePiece``):
    :func:`~tokenforge.trainers.coverage.script_of`, except ``Common`` for the code
    points its older table does not list.

    >>> spm_script("a"), spm_script("カ"), spm_script("\u4db6"), spm_script("\u0378"), spm_script("\u0953")
    ('Latin', 'Han', 'Common', 'Common', 'Devanagari')
    """
    cp = ord(c)
    if 0x953 <= cp <= 0x954:
        return "Devanagari"
    starts, ends = _spm_common_ranges()
    k = bisect.bisect_right(starts, cp) - 1
    if k >= 0 and cp <= ends[k]:
        return "Common"
    s = script_of(c)
    return "Common" if s == "Unknown" else s


def spm_digit(c: str) -> bool:
    """sentencepiece's ``is_unicode_decimal_number``: ASCII and full-width digits only
    (``split_digits`` and ``split_by_number`` leave other decimal digits, ``"٣"``, to their script)."""
    return "0" <= c <= "9" or "\uff10" <= c <= "\uff19"

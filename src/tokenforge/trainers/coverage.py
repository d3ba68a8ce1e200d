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

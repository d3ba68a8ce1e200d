"""The HF ``tokenizer.json`` form of a SentencePiece tokenizer, and its check.

:func:`hf_form` builds the document ``transformers``' converters write for a
``.model`` (``LlamaConverter`` for BPE, ``SpmConverter`` for Unigram) and says why
it cannot give sentencepiece's ids when it cannot; :func:`hf_document` reads it
back with tokenforge's own HF reader and compares the ids on whole documents and
on each of their lines (:func:`id_differences`), so that a form that agrees on
every line but drops a line end (``"end.\\n"``) is caught. The formats
(:mod:`tokenforge.formats.hf_json`) write what this module returns; it imports
nothing above the models and normalizers (the tokenizer's own class reads the
document back).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import FileFormatError
from ..models.bpe import PieceBPE
from ..models.unigram import Unigram
from .constants import SPACE, PieceType
from .normalizer import SentencePieceNormalizer

if TYPE_CHECKING:
    from ..tokenizer import Tokenizer

__all__ = ["HF_CHECK_DOCUMENTS", "hf_check_documents", "hf_document", "hf_form", "id_differences",
           "tie_check_documents"]


def hf_form(tokenizer: "Tokenizer") -> tuple[dict[str, Any], str | None]:
    """An HF ``tokenizer.json`` document for a SentencePiece tokenizer, and why it
    cannot give sentencepiece's ids (``None`` when it can).

    A BPE model becomes what ``transformers``' ``LlamaConverter`` writes: the
    normalizer ``Prepend("▁")`` + ``Replace(" ", "▁")``, no pre-tokenizer, a BPE
    model with ``byte_fallback`` and ``fuse_unk`` whose merges come from the piece
    scores, and the decoder ``Replace("▁", " ")``, ``ByteFallback``, ``Fuse``,
    ``Strip``. Without a charsmap (the ``identity`` normalizer of Llama 2 and
    Mistral) that form is exact when no piece is UNUSED and there are no
    user-defined symbols (merge results that share a score, as Llama's runs of
    ``▁`` do, are checked pair by pair: HF merges by rank, sentencepiece the
    leftmost pair among equal scores); sentencepiece's
    ``remove_extra_whitespaces`` becomes two ``Replace`` rules. A Unigram model
    becomes what ``SpmConverter`` writes (``Metaspace``; without a charsmap the same
    rules as BPE and no pre-tokenizer, one Viterbi pass as in sentencepiece), which
    is never exact:
    sentencepiece sums Viterbi path scores in 32-bit floats and HF in doubles, so
    near-ties end differently. With a charsmap (``nmt_nfkc``...) neither is exact:
    HF's ``Precompiled`` walks the charsmap by grapheme cluster where
    sentencepiece walks it by longest byte match, and HF strips and collapses
    white space after the rules. :func:`hf_differences` measures the differences.
    """
    import base64

    norm = tokenizer.normalizer
    model = tokenizer.model
    if not isinstance(norm, SentencePieceNormalizer):
        raise FileFormatError(f"not a SentencePiece tokenizer: its normalizer is {type(norm).__name__}")
    reasons: list[str] = []
    added = [
        {"id": t.id, "content": t.content, "single_word": False, "lstrip": False, "rstrip": False,
         "normalized": False, "special": t.special}
        for t in sorted(tokenizer.added_tokens, key=lambda t: t.id)
    ] + [
        {"id": model.token_to_id(s), "content": s, "single_word": False, "lstrip": False, "rstrip": False,
         "normalized": False, "special": False}
        for s in norm.user_defined_symbols if model.token_to_id(s) is not None
    ]
    if norm.user_defined_symbols:
        reasons.append(
            f"user-defined symbols ({', '.join(map(repr, norm.user_defined_symbols[:5]))}): HF matches them before "
            "normalizing and normalizes each part of the text between them on its own, sentencepiece matches "
            "them inside the normalized text"
        )
    blob = norm.charsmap.blob
    rules: list[dict[str, Any]] = (
        [{"type": "Precompiled", "precompiled_charsmap": base64.b64encode(blob).decode("ascii")}] if blob else []
    )
    if blob:
        reasons.append(
            f"its {norm.name or 'custom'!r} normalizer: HF's Precompiled walks the charsmap by grapheme cluster "
            "where sentencepiece walks it by longest byte match"
        )
    prefix = "always" if norm.add_dummy_prefix else "never"
    space = SPACE if norm.escape_whitespaces else " "
    common = {"version": "1.0",
              "truncation": None if tokenizer.truncation is None else tokenizer.truncation.to_dict(),
              "padding": None if tokenizer.padding is None else tokenizer.padding.to_dict(),
              "added_tokens": added,
              "post_processor": None if tokenizer.post_processor is None else tokenizer.post_processor.to_dict()}
    if not blob:  # sentencepiece's white-space handling, as HF rules that give the same text
        if norm.remove_extra_whitespaces:
            # drop the spaces before the first and after the last character and collapse
            # runs of spaces (only U+0020: tabs and newlines are kept)
            rules += [{"type": "Replace", "pattern": {"Regex": r"\A +| +\z"}, "content": ""},
                      {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "}]
        if norm.add_dummy_prefix:
            rules.append({"type": "Prepend", "prepend": space})
        if norm.escape_whitespaces:
            rules.append({"type": "Replace", "pattern": {"String": " "}, "content": SPACE})
    decoder_steps = [{"type": "Replace", "pattern": {"String": SPACE}, "content": " "},
                     {"type": "ByteFallback"}, {"type": "Fuse"}]
    if norm.add_dummy_prefix:
        decoder_steps.append({"type": "Strip", "content": " ", "start": 1, "stop": 0})
    if isinstance(model, Unigram):
        reasons.append(
            "a Unigram model: sentencepiece sums the Viterbi path scores in 32-bit floats, HF in doubles, "
            "so near-ties between segmentations end differently"
        )
        d = model.to_dict()
        d.pop("piece_types", None)
        if blob:  # SpmConverter's form
            if norm.remove_extra_whitespaces:
                rules += [{"type": "Strip", "strip_left": False, "strip_right": True},
                          {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": SPACE}]
            meta = {"type": "Metaspace", "replacement": SPACE, "prepend_scheme": prefix, "split": True}
            pre, decoder = meta, meta
        else:  # the whole text in one Viterbi pass, as sentencepiece runs it
            pre, decoder = None, {"type": "Sequence", "decoders": decoder_steps}
        doc = {**common, "normalizer": {"type": "Sequence", "normalizers": rules}, "pre_tokenizer": pre,
               "decoder": decoder, "model": d}
        return _ordered(doc), "; ".join(reasons)
    if not (isinstance(model, PieceBPE) and model.is_sentencepiece):
        raise FileFormatError(f"not a SentencePiece tokenizer: its model is {type(model).__name__}")
    if blob and norm.add_dummy_prefix:  # LlamaConverter's form
        rules.append({"type": "Prepend", "prepend": space})
    if blob and norm.escape_whitespaces:
        rules.append({"type": "Replace", "pattern": {"String": " "}, "content": SPACE})
    types = model.types or []
    unused = [model.id_to_token(i) for i, t in enumerate(types) if t == PieceType.UNUSED]
    if unused:
        reasons.append(f"UNUSED pieces ({', '.join(map(repr, unused[:5]))}): sentencepiece splits them back, "
                       "HF's merges keep them")
    merges, ties = _merges_by_score(model)
    large = next((g for g in ties if len(g) > _MAX_TIED), None)
    if large is not None:
        reasons.append(f"{len(large)} pieces share a score ({', '.join(map(repr, large[:3]))}...): sentencepiece "
                       "merges the leftmost pair among equal scores, HF the pair of the earlier merge")
    unk = model.unk_id
    doc = {**common,
           "normalizer": {"type": "Sequence", "normalizers": rules},
           "pre_tokenizer": None,
           "decoder": {"type": "Sequence", "decoders": decoder_steps},
           "model": {
               "type": "BPE", "dropout": None, "unk_token": None if unk is None else model.id_to_token(unk),
               "continuing_subword_prefix": None, "end_of_word_suffix": None, "fuse_unk": True,
               "byte_fallback": bool(model.byte_fallback), "ignore_merges": False,
               "vocab": {model.id_to_token(i): i for i in range(model.vocab_size)},
               "merges": [[a, b] for a, b in merges],
           }}
    return _ordered(doc), "; ".join(reasons) or None


def _ordered(doc: dict[str, Any]) -> dict[str, Any]:
    keys = ("version", "truncation", "padding", "added_tokens", "normalizer", "pre_tokenizer", "post_processor",
            "decoder", "model")
    return {k: doc[k] for k in keys}


#: Short documents that catch what sample lines miss: a line end kept as a token
#: (``"end.\n"``), white space at both ends and in runs, tabs, CR LF, emoji, CJK,
#: characters only byte fallback spells, and the text of a byte piece.
HF_CHECK_DOCUMENTS = (
    "end.\n", "end.\n\n", "\n", "\n\nstart after blank lines", "  two leading spaces", "trailing spaces   ",
    "multiple   spaces    inside  a line", "tabs\tand\t\ttabs\t", "one\ntwo\r\nthree\r\n\r\nfour\n",
    " \n \n", "emoji 😀👍🏽 and a family 👨\u200d👩\u200d👧 here.", "中文的句子。日本語の文章です。한국어 문장.",
    "no\u00a0break\u3000ideographic space", "combining e\u0301 and é", "rare 𓀀 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 ꙮ",
    "<0x41> spelled as text", "ﬁ ligature, ① circled, Ｆｕｌｌ width",
    "def f(x):\n    return x  # indented\n\n\tif x:\n\t\tpass\n",
)


def hf_check_documents() -> list[str]:
    """The whole documents a SentencePiece-to-HF conversion is checked on: the short
    :data:`HF_CHECK_DOCUMENTS` first (so that an error names a short input), then the
    held-out text of the embedded corpus (a dozen languages and code), one document
    per language."""
    from ..corpus import embedded_corpus

    return list(HF_CHECK_DOCUMENTS) + [lang.heldout_text() for lang in embedded_corpus()]


def id_differences(
    tokenizer: "Tokenizer", other: "Tokenizer", documents: list[str] | None = None
) -> tuple[dict[str, int], list[dict[str, Any]]]:
    """Where ``other`` gives other ids than ``tokenizer``: on each whole document
    (default :func:`hf_check_documents`) and on each of its lines. Special-token
    strings are ordinary text on both sides. Returns the counts ``{"documents",
    "lines", "tokens"}`` and the differing inputs, documents first, each
    ``{"text", "whole_document", "ids", "written_ids"}``."""
    docs = hf_check_documents() if documents is None else list(documents)
    counts = {"documents": 0, "lines": 0, "tokens": 0}
    out: list[dict[str, Any]] = []
    seen: set[str] = set()

    def compare(text: str, whole: bool) -> None:
        a = tokenizer.encode(text, disallowed_special=(), add_special_tokens=False)
        b = other.encode(text, disallowed_special=(), add_special_tokens=False)
        counts["tokens"] += len(a)
        if a != b:
            out.append({"text": text, "whole_document": whole, "ids": a, "written_ids": b})

    for doc in docs:
        counts["documents"] += 1
        compare(doc, True)
    for doc in docs:
        for line in doc.splitlines():
            if line not in seen:
                seen.add(line)
                counts["lines"] += 1
                compare(line, False)
    return counts, out


def hf_document(tokenizer: "Tokenizer", *, allow_lossy: bool = False, path: Any = None) -> tuple[dict[str, Any], dict[str, Any]]:
    """The ``tokenizer.json`` document of a SentencePiece tokenizer, checked: it is read
    back with tokenforge's own HF reader and both encode :func:`hf_check_documents`
    whole and line by line, and on :func:`tie_check_documents`. Unless the form is exact (see :func:`hf_form`) and no
    input differs, :class:`FileFormatError` names the reason or the first differing
    input; ``allow_lossy=True`` returns the document anyway. Returns the document
    and ``{"exact", "reason", "documents", "lines", "tokens", "differences"}``."""
    doc, reason = hf_form(tokenizer)
    back = type(tokenizer).from_dict(doc)  # read back by the tokenizer's own class: HF's reader
    counts, diffs = id_differences(tokenizer, back, hf_check_documents() + tie_check_documents(tokenizer))
    report = {"exact": reason is None and not diffs, "reason": reason, **counts, "differences": diffs}
    if not report["exact"] and not allow_lossy:
        if diffs:
            first = diffs[0]
            where = "the whole document" if first["whole_document"] else "the line"
            a, b = first["ids"], first["written_ids"]
            k = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
            found = (f"gives other ids on {len(diffs)} of {counts['documents'] + counts['lines']} check inputs; "
                     f"first {where} {_clip(first['text'])!r}, from token {k}: sentencepiece {a[k:k + 8]}, "
                     f"tokenizer.json {b[k:k + 8]}")
            if reason:
                found += f" (because of {reason})"
        else:
            found = f"cannot give sentencepiece's ids in general: {reason}"
        raise FileFormatError(
            f"the tokenizer.json form of this SentencePiece model {found}; pass allow_lossy=True, or --allow-lossy, "
            "to write it anyway and get the differences",
            path=path,
        )
    return doc, report


def _clip(text: str, n: int = 60) -> str:
    return text if len(text) <= n else text[:n] + "…"


#: Merge results sharing a score are checked pair by pair (see :func:`tie_check_documents`)
#: up to this many in one score; a larger group is a reason the HF form may differ.
_MAX_TIED = 64


def _merges_by_score(model: PieceBPE) -> tuple[list[tuple[str, str]], list[list[str]]]:
    """Merges for a score-ranked BPE vocabulary, as ``transformers`` derives them: every
    split of a piece into two pieces is a merge, highest-scoring result first (ties
    by the parts' ids). Only NORMAL pieces are merge results (sentencepiece never
    merges into a control, byte, unknown or unused piece). Also returns the groups
    of merge results that share a score (Llama's and Mistral's runs of ``▁``)."""
    vocab: dict[str, int] = {str(model.id_to_token(i)): i for i in range(model.vocab_size)}
    scores = model.scores or [0.0] * model.vocab_size
    types = model.types or [PieceType.NORMAL] * model.vocab_size
    merges: list[tuple[float, int, int, str, str]] = []
    by_score: dict[float, list[str]] = {}
    for piece, i in vocab.items():
        if types[i] != PieceType.NORMAL:
            continue
        local = [
            (-scores[i], vocab[piece[:k]], vocab[piece[k:]], piece[:k], piece[k:])
            for k in range(1, len(piece)) if piece[:k] in vocab and piece[k:] in vocab
        ]
        if local:
            by_score.setdefault(scores[i], []).append(piece)
        merges += sorted(local, key=lambda m: (m[1], m[2]))
    merges.sort(key=lambda m: m[0])  # stable: ties keep piece order, then the parts' ids
    return [(m[3], m[4]) for m in merges], [g for g in by_score.values() if len(g) > 1]


def tie_check_documents(tokenizer: "Tokenizer") -> list[str]:
    """Texts where merge results that share a score meet: every pair of them, alone
    and between two letters. sentencepiece merges the leftmost of tied pairs, HF the
    pair of the earlier merge; these texts show whether that changes any id."""
    model = tokenizer.model
    if not (isinstance(model, PieceBPE) and model.is_sentencepiece):
        return []
    out: list[str] = []
    for group in _merges_by_score(model)[1]:
        if len(group) > _MAX_TIED:
            continue
        for p in group:
            for q in group:
                text = (p + q).replace(SPACE, " ")
                out += [text, "a" + text + "b"]
    return out

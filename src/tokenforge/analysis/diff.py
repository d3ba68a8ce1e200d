"""What changed between two tokenizers, and whether the ids did.

A tokenizer update can leave every id as it was (a new name, another file
format, a decoder fix) or silently change some of them (a merge removed, a
special token renumbered, an added token that now captures text). Whatever
depends on the ids — a KV or prefix cache, a draft model for speculative
decoding, a distilled student, a prepared corpus — stays valid only in the
first case. :func:`diff` answers it from three sides:

* the fingerprint parts that differ (:mod:`tokenforge.fingerprint`): which
  stage changed;
* the vocabularies: tokens with the same bytes in both, and of those the ones
  with the same id; tokens only in A or only in B; special tokens and their ids;
* real text (by default the held-out texts of the embedded corpus, line by
  line): the share of texts and lines encoded to the same ids, and for lines
  that differ, the first differing position and the text around it.

Equal fingerprints mean equal ids; different fingerprints with equal ids on
every line tested mean the change is probably harmless, but only the
vocabulary and special-token sections can say that no id moved.

>>> import tokenforge
>>> report = diff(tokenforge.get_encoding("gpt2"), tokenforge.get_encoding("r50k_base"))
>>> report.same_fingerprint, report.lines_same == report.lines
(True, True)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from ..errors import ArgumentTypeError

__all__ = ["DiffReport", "LineDiff", "default_texts", "diff"]


@dataclass(frozen=True)
class LineDiff:
    """A line whose ids differ: the first differing token position, the code-point
    offset in the line where it starts, the text around it and the tokens there."""

    text_index: int
    line_index: int
    position: int
    offset: int
    context: str
    tokens_a: list[str]
    tokens_b: list[str]
    ids_a: list[int]
    ids_b: list[int]


@dataclass
class DiffReport:
    """The result of :func:`diff` (``to_dict()`` for JSON, ``format()`` for people)."""

    name_a: str
    name_b: str
    fingerprint_a: str
    fingerprint_b: str
    parts_differ: list[str]
    vocab_a: int
    vocab_b: int
    same_bytes: int
    same_bytes_same_id: int
    only_a: int
    only_b: int
    only_a_sample: list[str]
    only_b_sample: list[str]
    moved_sample: list[tuple[str, int, int]]
    specials_a: dict[str, int]
    specials_b: dict[str, int]
    specials_only_a: dict[str, int]
    specials_only_b: dict[str, int]
    specials_changed: dict[str, tuple[int, int]]
    texts: int
    texts_same: int
    lines: int
    lines_same: int
    differing: list[LineDiff] = field(default_factory=list)

    @property
    def same_fingerprint(self) -> bool:
        return self.fingerprint_a == self.fingerprint_b

    @property
    def ids_agree(self) -> bool:
        """Equal ids on every text tested, every shared token at the same id, the same specials."""
        return (self.texts_same == self.texts and self.lines_same == self.lines and self.only_a == 0
                and self.only_b == 0 and self.same_bytes == self.same_bytes_same_id
                and self.specials_a == self.specials_b)

    @property
    def a_ids_kept(self) -> bool:
        """Every id of A (model tokens and specials) stands for the same token in B: what A
        produced, B's side reads the same (B may have more tokens)."""
        return (self.only_a == 0 and self.same_bytes == self.same_bytes_same_id
                and not self.specials_only_a and not self.specials_changed)

    def _vocab_changes(self) -> list[str]:
        out = []
        if self.only_a:
            out.append(f"{self.only_a} tokens only in A")
        if self.only_b:
            out.append(f"{self.only_b} tokens only in B")
        if self.same_bytes != self.same_bytes_same_id:
            out.append(f"{self.same_bytes - self.same_bytes_same_id} shared tokens at other ids")
        if self.specials_only_a:
            out.append(f"{len(self.specials_only_a)} special tokens only in A")
        if self.specials_only_b:
            out.append(f"{len(self.specials_only_b)} special tokens only in B")
        if self.specials_changed:
            out.append(f"{len(self.specials_changed)} special tokens at other ids")
        return out

    @property
    def verdict(self) -> str:
        if self.same_fingerprint:
            return "same fingerprint: the same ids"
        parts = ", ".join(self.parts_differ)
        changes = self._vocab_changes()
        if self.lines_same == self.lines and self.texts_same == self.texts:
            if not changes:
                return (f"{parts} differ, but the vocabularies, the specials and the ids on all {self.lines} "
                        "lines tested are the same")
            kept = (" Every id of A keeps its meaning in B, so ids made with A stay valid for B."
                    if self.a_ids_kept else "")
            return (f"{parts} differ ({'; '.join(changes)}); the ids agree on all {self.lines} lines tested, "
                    f"but text that uses the changed tokens gets other ids.{kept}")
        return (f"{parts} differ; the ids differ on {self.lines - self.lines_same} of {self.lines} lines: "
                "KV/prefix caches, draft models and prepared data made with one are not valid for the other")

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["same_fingerprint"] = self.same_fingerprint
        d["ids_agree"] = self.ids_agree
        d["a_ids_kept"] = self.a_ids_kept
        d["verdict"] = self.verdict
        d["moved_sample"] = [list(m) for m in self.moved_sample]
        d["specials_changed"] = {k: list(v) for k, v in self.specials_changed.items()}
        return d

    def format(self, top: int = 5) -> str:
        def pct(n: int, d: int) -> str:
            return f"{100 * n / d:.1f}%" if d else "-"

        lines = [
            f"A: {self.name_a}  {self.fingerprint_a}",
            f"B: {self.name_b}  {self.fingerprint_b}",
            f"parts that differ: {', '.join(self.parts_differ) or 'none'}",
            "",
            f"vocabulary: A {self.vocab_a}, B {self.vocab_b}; same bytes {self.same_bytes} "
            f"({self.same_bytes_same_id} of them at the same id)",
            f"  only in A: {self.only_a}" + (f"  e.g. {', '.join(self.only_a_sample[:top])}" if self.only_a_sample else ""),
            f"  only in B: {self.only_b}" + (f"  e.g. {', '.join(self.only_b_sample[:top])}" if self.only_b_sample else ""),
        ]
        if self.moved_sample:
            lines.append("  same bytes, other id: " + ", ".join(f"{t} {a}->{b}" for t, a, b in self.moved_sample[:top]))
        lines.append(f"special tokens: A {len(self.specials_a)}, B {len(self.specials_b)}")
        for label, items in (("only in A", self.specials_only_a), ("only in B", self.specials_only_b)):
            if items:
                shown = ", ".join(f"{t}={i}" for t, i in list(items.items())[:top])
                more = f" (+{len(items) - top} more)" if len(items) > top else ""
                lines.append(f"  {label}: {shown}{more}")
        for t, (a, b) in list(self.specials_changed.items())[:top]:
            lines.append(f"  {t}: id {a} in A, {b} in B")
        lines += [
            "",
            f"texts with the same ids: {self.texts_same}/{self.texts} ({pct(self.texts_same, self.texts)})",
            f"lines with the same ids: {self.lines_same}/{self.lines} ({pct(self.lines_same, self.lines)})",
        ]
        for d in self.differing[:top]:
            lines.append(f"  text {d.text_index} line {d.line_index}, token {d.position}: {d.context!r}")
            shown_a = " ".join(f"{t!r}={i}" for t, i in zip(d.tokens_a, d.ids_a))
            shown_b = " ".join(f"{t!r}={i}" for t, i in zip(d.tokens_b, d.ids_b))
            lines.append(f"    A: {shown_a}   B: {shown_b}")
        lines += ["", f"verdict: {self.verdict}"]
        return "\n".join(lines)


def default_texts() -> list[str]:
    """The held-out text of each language of the embedded corpus."""
    from ..corpus import embedded_corpus

    return [lang.heldout.read_text(encoding="utf-8") for lang in embedded_corpus()]


def _vocab_keys(tok: Any, as_bytes: bool) -> dict[bytes, int]:
    """``{key: lowest id}`` of the model's tokens: their bytes, or their UTF-8 string."""
    added = {t.id for t in tok.added_tokens}
    out: dict[bytes, int] = {}
    for token, i in sorted(tok.get_vocab().items(), key=lambda kv: kv[1]):
        if i in added:
            continue
        key = tok.decode_single_token_bytes(i) if as_bytes else token.encode("utf-8", "surrogatepass")
        out.setdefault(key, i)
    return out


def _show(key: bytes) -> str:
    try:
        return repr(key.decode("utf-8"))
    except UnicodeDecodeError:
        return repr(key)


def _encode(tok: Any, text: str) -> list[int]:
    ids: list[int] = tok.encode(text, disallowed_special=())  # special-token text is text here
    return ids


def diff(tok_a: Any, tok_b: Any, texts: Iterable[str] | None = None, *, sample: int = 20,
         names: Sequence[str] | None = None) -> DiffReport:
    """Compare two tokenizers (see the module docstring). ``texts``: the texts to encode
    (default: :func:`default_texts`); each is also compared line by line. ``sample``: how
    many examples each list keeps. ``names``: labels for A and B (default: their names)."""
    from ..fingerprint import differing_parts

    text_list = default_texts() if texts is None else list(texts)
    for t in text_list:
        if not isinstance(t, str):
            raise ArgumentTypeError(f"diff takes texts as str, got {type(t).__name__}")
    pa, pb = tok_a.fingerprint_parts(), tok_b.fingerprint_parts()
    as_bytes = bool(tok_a.is_byte_level or tok_b.is_byte_level)
    va, vb = _vocab_keys(tok_a, as_bytes), _vocab_keys(tok_b, as_bytes)
    shared = va.keys() & vb.keys()
    moved = sorted((va[k], vb[k], k) for k in shared if va[k] != vb[k])
    only_a = sorted((i, k) for k, i in va.items() if k not in vb)
    only_b = sorted((i, k) for k, i in vb.items() if k not in va)
    sa, sb = dict(tok_a.special_tokens), dict(tok_b.special_tokens)
    # Lines: the unit a cache or a draft model sees.
    texts_same = lines_total = lines_same = 0
    differing: list[LineDiff] = []
    for ti, text in enumerate(text_list):
        if _encode(tok_a, text) == _encode(tok_b, text):
            texts_same += 1
        for li, line in enumerate(text.splitlines()):
            if not line.strip():
                continue
            lines_total += 1
            ia, ib = _encode(tok_a, line), _encode(tok_b, line)
            if ia == ib:
                lines_same += 1
                continue
            if len(differing) >= sample:
                continue
            k = next((n for n, (x, y) in enumerate(zip(ia, ib)) if x != y), min(len(ia), len(ib)))
            offset = min(_char_offset(tok_a, line, k), _char_offset(tok_b, line, k))
            differing.append(LineDiff(
                text_index=ti, line_index=li, position=k, offset=offset,
                context=line[max(0, offset - 24): offset + 24],
                tokens_a=[tok_a.decode([i]) for i in ia[k:k + 3]], tokens_b=[tok_b.decode([i]) for i in ib[k:k + 3]],
                ids_a=ia[k:k + 3], ids_b=ib[k:k + 3],
            ))
    return DiffReport(
        name_a=(names[0] if names else None) or tok_a.name or "A",
        name_b=(names[1] if names else None) or tok_b.name or "B",
        fingerprint_a=tok_a.fingerprint(), fingerprint_b=tok_b.fingerprint(),
        parts_differ=differing_parts(pa, pb),
        vocab_a=len(va), vocab_b=len(vb),
        same_bytes=len(shared), same_bytes_same_id=len(shared) - len(moved),
        only_a=len(only_a), only_b=len(only_b),
        only_a_sample=[_show(k) for _, k in only_a[:sample]],
        only_b_sample=[_show(k) for _, k in only_b[:sample]],
        moved_sample=[(_show(k), a, b) for a, b, k in moved[:sample]],
        specials_a=sa, specials_b=sb,
        specials_only_a={t: i for t, i in sa.items() if t not in sb},
        specials_only_b={t: i for t, i in sb.items() if t not in sa},
        specials_changed={t: (sa[t], sb[t]) for t in sa if t in sb and sa[t] != sb[t]},
        texts=len(text_list), texts_same=texts_same, lines=lines_total, lines_same=lines_same,
        differing=differing,
    )


def _char_offset(tok: Any, line: str, k: int) -> int:
    """Where token ``k`` of ``tok``'s encoding of ``line`` starts, in code points."""
    spans = tok.encode_with_offsets(line, disallowed_special=())
    if k < len(spans):
        return int(spans[k].start)
    return len(line)

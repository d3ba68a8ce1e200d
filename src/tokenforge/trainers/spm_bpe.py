"""SentencePiece-style BPE training (``bpe_model_trainer.cc``), for Llama-2 /
Mistral style tokenizers: ``▁`` whitespace, merges by frequency, pieces
scored by merge order, optional byte fallback.

The input is ``{pre_token: count}`` where a pre-token is already normalized
and split the sentencepiece way (``"▁hello"``: ``▁`` only at the start).
Training follows sentencepiece's ``bpe_model_trainer.cc`` (0.2.x; Kudo &
Richardson, 2018) step for step, so the pieces, their ids and their scores are
those of ``spm_train --model_type=bpe`` on the same text:

0. **Meta pieces in the text.** Wherever a pre-token spells a meta piece
   (``<unk>``, the special tokens, ``<0x41>``-style byte pieces with
   ``byte_fallback``; left to right, the longest at each position),
   sentencepiece's trainer puts U+001F instead before counting anything: that
   character counts toward the coverage below but is never a piece, so no
   piece spans the place.
1. **Alphabet by character coverage.** Characters are counted (weighted by
   the pre-token counts) and sorted by count, most frequent first (ties by
   code point). They are taken in that order until the share of all
   characters already covered reaches ``character_coverage`` (compared in
   float32, as sentencepiece does). The rest are *rare*: no piece contains
   them; at encoding time they become ``<unk>`` or, with ``byte_fallback``,
   ``<0xXX>`` byte pieces.
2. **Merges by frequency.** Every word is a sequence of characters; the
   adjacent pair with the highest total count is merged everywhere
   (left-to-right, non-overlapping), the counts of the neighbouring pairs are
   updated incrementally, and a heap with lazy deletion gives the next best
   pair. A pair is only a candidate when its concatenation is a *valid
   piece* (sentencepiece's ``IsValidSentencePiece``): at most
   ``max_piece_length`` characters, ``▁`` only as the first character, no
   rare character, U+2585, NUL or U+001F, one Unicode script *as
   sentencepiece's own table has them* (:func:`spm_script`: Hiragana and
   Katakana count as Han, characters its older table does not list are
   Common; combining marks take the script of the character before), the
   digits 0-9 and ０-９ (:func:`spm_digit`, not other decimal digits) a script
   of their own unless ``split_by_number=False``, and with ``split_digits``
   no such digit inside a longer piece. When a pair's concatenation is
   already a piece (reached through a different split, ``"aa"+"a"`` vs
   ``"a"+"aa"``), it is dropped, not merged.
3. **Ties.** Among pairs with the same count, the shorter piece wins, then
   the smaller piece string (by code point, which is sentencepiece's UTF-8
   byte order): the order of sentencepiece's priority queue
   (``QueueEntryComparator``). That queue compares nothing else, so two
   splits of one string with the same count (``"aa"+"a"`` and ``"a"+"aa"``)
   are the one choice it leaves to the heap's internal order; here the
   shorter left part wins. On the corpora measured
   (``benchmarks/bench_train_spm_bpe.py --diff``) that case never came up.
4. **When the pairs run out.** If no pair with a positive count is left
   before ``vocab_size`` is reached, sentencepiece goes on taking pairs that
   occurred once and whose count fell to 0, in the same order (shorter, then
   smaller string); that includes the pair ``(new, left)`` it holds for a
   moment between two adjacent occurrences of a merged pair (``"abab"``
   gives ``("ab", "a")``). Such pieces change no word; they are taken here
   too. Only when those run out does the vocabulary come out smaller
   (``last_report.stopped_early``; ``spm_train`` then fails unless
   ``hard_vocab_limit=false``).
5. **Pieces and scores.** ``<unk>`` (id 0), the special tokens (CONTROL),
   the 256 byte pieces when ``byte_fallback``, then the merged pieces in the
   order learned and the alphabet characters in coverage order. A piece's
   score is minus its position among the merged + character pieces, so
   encoding (:meth:`PieceBPE.from_sentencepiece`) replays the merges in order.

What counts cannot tell: sentencepiece skips a whole line that holds U+2585
(here such a character is only kept out of longer pieces), and it blanks a
meta piece that spans two pre-tokens (one with ``▁`` inside it).

**Backends.** The merge loop runs natively (``_core/spm_bpe_train.h``) when
the core is built and the weighted corpus length fits 63 bits: characters
become ids in code-point order (so id strings compare as the pieces do), the
valid-piece rule is evaluated there from per-character attributes computed
here (script, digit, ``▁``), and the loop is the one below, merge for merge.
``backend="python"`` (or ``TOKENFORGE_BACKEND=python``) runs the pure-Python
loop, which stays the reference the native one is tested against.

Why not :func:`tokenforge.trainers.bpe.learn_merges`: that loop works on a
256-symbol byte alphabet and has no notion of an invalid pair; here symbols
are Unicode characters (thousands for CJK) and every candidate pair must be
a valid piece. The structure (pair counts, pair → word index, lazy heap) is
the same.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from .. import _native
from ..errors import SpecialTokenError, TrainingError
from ..models.bpe import PieceBPE
from ..sentencepiece.constants import SPACE, PieceType, byte_piece, f32
from ..progress import Progress
from ..specials import check_special_list
from . import NoTrainingDataError, VocabReport, check_vocab_size
from .coverage import count_chars, required_chars, script_of, spm_digit, spm_script

if TYPE_CHECKING:
    from types import ModuleType

    from ..sentencepiece.proto import ModelProto

__all__ = ["SentencePieceBPETrainer"]

#: Never inside a piece (``IsValidSentencePiece``): sentencepiece's unknown-character mark U+2585,
#: NUL, space, and U+001F, the mark its trainer puts where a meta piece was spelled in the text.
_NEVER_IN_PIECE = frozenset("\u2585\0 \x1f")
_BOUNDARY = "\x1f"


def _blank_meta_pieces(counts: dict[str, int], meta: Sequence[str]) -> dict[str, int]:
    """sentencepiece's trainer replaces every meta piece spelled in the text (``<unk>``, the
    special tokens, ``<0x41>`` with byte fallback) by U+001F before it counts anything: left to
    right, the longest meta piece at each position. Pre-tokens that become equal add up."""
    if not meta:
        return counts
    pattern = re.compile("|".join(re.escape(m) for m in sorted(meta, key=len, reverse=True)))
    out: dict[str, int] = {}
    for w, c in counts.items():
        if pattern.search(w):
            w = pattern.sub(_BOUNDARY, w)
        out[w] = out.get(w, 0) + c
    return out


class SentencePieceBPETrainer:
    """Settings for SentencePiece-style BPE; :meth:`train_from_counts` returns
    a :class:`~tokenforge.models.bpe.PieceBPE` that encodes as sentencepiece
    does with the trained pieces.

    >>> trainer = SentencePieceBPETrainer(vocab_size=16, special_tokens=[], show_progress=False)
    >>> model = trainer.train_from_counts({"▁low": 5, "▁lower": 2, "▁newest": 6, "▁widest": 3})
    >>> [model.id_to_token(i) for i in range(1, 6)]  # merges; "lo" and "▁l" tie at 7: "lo" < "▁l"
    ['es', 'est', 'lo', 'low', 'e']
    >>> [model.id_to_token(i) for i in model.encode_piece("▁lowest")]
    ['▁', 'low', 'est']
    """

    def __init__(
        self,
        vocab_size: int = 8000,
        *,
        special_tokens: Sequence[str] = ("<s>", "</s>"),
        unk_token: str = "<unk>",
        character_coverage: float = 0.9995,
        byte_fallback: bool = False,
        split_digits: bool = False,
        max_piece_length: int = 16,
        split_by_unicode_script: bool = True,
        split_by_number: bool = True,
        show_progress: bool | None = None,
        backend: str = "auto",
    ) -> None:
        try:
            _native.core(backend)
        except ValueError as exc:
            raise TrainingError(str(exc)) from None
        check_vocab_size(vocab_size)
        if not isinstance(unk_token, str) or not unk_token:
            raise SpecialTokenError(f"unk_token must be a non-empty str, got {unk_token!r}")
        specials = check_special_list(special_tokens, reserved=(unk_token,))
        if not (isinstance(character_coverage, (int, float)) and 0.0 < character_coverage <= 1.0):
            raise TrainingError(f"character_coverage must be in (0, 1], got {character_coverage!r}")
        if not isinstance(max_piece_length, int) or max_piece_length < 1:
            raise TrainingError(f"max_piece_length must be a positive int, got {max_piece_length!r}")
        self.vocab_size = vocab_size
        self.special_tokens = tuple(specials)
        self.unk_token = unk_token
        self.character_coverage = float(character_coverage)
        self.byte_fallback = bool(byte_fallback)
        self.split_digits = bool(split_digits)
        self.max_piece_length = max_piece_length
        self.split_by_unicode_script = bool(split_by_unicode_script)
        self.split_by_number = bool(split_by_number)
        self.show_progress = show_progress
        self.backend = backend
        #: The size reached by the last training run (``stopped_early`` when no pair was left to merge).
        self.last_report: VocabReport | None = None

    # -- the valid-piece rule --------------------------------------------------
    def is_valid_piece(self, piece: str) -> bool:
        """sentencepiece's ``IsValidSentencePiece`` for the settings here
        (``split_by_whitespace``, whitespace as prefix)."""
        if not piece or len(piece) > self.max_piece_length:
            return False
        prev = None  # None: any script
        for pos, c in enumerate(piece):
            if c in _NEVER_IN_PIECE or "\ud800" <= c <= "\udfff":
                return False
            if c == SPACE:
                if pos > 0:
                    return False
                continue
            s: str | None = spm_script(c)
            if s == "Inherited":
                s = prev
            digit = spm_digit(c)
            if digit and not self.split_by_number:
                s = None
            if digit and self.split_digits and len(piece) > 1:
                return False
            if self.split_by_unicode_script and s is not None and prev is not None and prev != s:
                return False
            prev = s
        return True

    # -- training -------------------------------------------------------------------
    def _meta_pieces(self) -> list[tuple[str, PieceType]]:
        meta = [(self.unk_token, PieceType.UNKNOWN)] + [(t, PieceType.CONTROL) for t in self.special_tokens]
        if self.byte_fallback:
            meta += [(byte_piece(b), PieceType.BYTE) for b in range(256)]
        return meta

    def train_from_counts(self, counts: Mapping[str, int]) -> PieceBPE:
        """Train on ``{pre_token: count}`` (pre-tokens normalized, ``▁``-escaped)."""
        clean: dict[str, int] = {}
        for w, c in counts.items():
            if not isinstance(w, str):
                raise TrainingError(f"pre-token {w!r} must be a str")
            if not isinstance(c, int) or isinstance(c, bool) or c < 0:
                raise TrainingError(f"count of {w!r} must be a non-negative int, got {c!r}")
            if w and c:
                clean[w] = clean.get(w, 0) + c
        if not clean:
            raise NoTrainingDataError("no text to train on: every pre-token is empty or has count 0")
        for word in clean:
            if " " in word:
                raise TrainingError(f"pre-token {word!r} contains a space; escape spaces as '▁' first")
        meta = self._meta_pieces()
        clean = _blank_meta_pieces(clean, [p for p, _ in meta])
        # U+001F (where a meta piece was) counts toward the coverage but is never a piece
        alphabet = [(ch, n) for ch, n in required_chars(count_chars(clean), self.character_coverage) if ch != _BOUNDARY]
        n_merges = self.vocab_size - len(meta) - len(alphabet)
        if n_merges < 0:
            raise TrainingError(
                f"vocab_size {self.vocab_size} is too small: {len(meta)} meta pieces "
                f"(unk, specials{', 256 bytes' if self.byte_fallback else ''}) plus {len(alphabet)} characters "
                f"for character_coverage={self.character_coverage} need at least {len(meta) + len(alphabet)}"
            )
        taken = {p for p, _ in meta}
        for ch, _ in alphabet:
            if ch in taken:
                raise TrainingError(f"character {ch!r} of the training data is also a meta piece")
        merged = self._learn(clean, {ch for ch, _ in alphabet}, n_merges, taken)
        pieces = [p for p, _ in meta]
        types = [t for _, t in meta]
        scores = [0.0] * len(meta)
        final = merged + [ch for ch, _ in alphabet]
        for k, p in enumerate(final):
            pieces.append(p)
            types.append(PieceType.NORMAL)
            scores.append(f32(-float(k)))
        self.last_report = VocabReport(self.vocab_size, len(pieces), len(merged))
        return PieceBPE.from_sentencepiece(pieces, scores, types, byte_fallback=self.byte_fallback)

    def _learn(self, counts: dict[str, int], alphabet: set[str], n_merges: int, taken: set[str]) -> list[str]:
        native = _native.core(self.backend)
        # 64-bit counts: no pair count exceeds the weighted corpus length
        if native is not None and n_merges and sum(c * len(w) for w, c in counts.items()) < 2**62:
            return self._learn_native(native, counts, alphabet, n_merges, taken)
        return self._learn_python(counts, alphabet, n_merges, taken)

    def _learn_native(self, native: ModuleType, counts: dict[str, int], alphabet: set[str], n_merges: int, taken: set[str]) -> list[str]:
        chars = sorted(alphabet)  # ids in code-point order: id strings compare as the pieces do
        script_ids: dict[str, int] = {}
        scripts: list[int] = []
        flags: list[int] = []
        for ch in chars:
            s = spm_script(ch)
            scripts.append(-1 if s == "Inherited" else script_ids.setdefault(s, len(script_ids)))
            flags.append((ch in _NEVER_IN_PIECE or "\ud800" <= ch <= "\udfff") | (ch == SPACE) << 1 | spm_digit(ch) << 2)
        # the bar follows the native loop (which also stops on Ctrl-C): it reports the merges so far
        with Progress(n_merges, "merge", " pieces", show=self.show_progress) as bar:
            ids = native.spm_bpe_learn(
                list(counts), list(counts.values()), [ord(ch) for ch in chars], scripts, flags, sorted(taken),
                n_merges, self.max_piece_length, self.split_digits, self.split_by_number,
                self.split_by_unicode_script, bar.set if bar else None,
            )
            bar.set(len(ids))
        symbols = list(chars)
        for a, b in ids:
            symbols.append(symbols[a] + symbols[b])
        return symbols[len(chars) :]

    def _learn_python(self, counts: dict[str, int], alphabet: set[str], n_merges: int, taken: set[str]) -> list[str]:
        # words: runs of alphabet characters (a rare character ends a run: no piece holds it)
        words: list[list[str]] = []
        freqs: list[int] = []
        for text, c in counts.items():
            run: list[str] = []
            for ch in text:
                if ch in alphabet:
                    run.append(ch)
                else:
                    if len(run) > 1:
                        words.append(run)
                        freqs.append(c)
                    run = []
            if len(run) > 1:
                words.append(run)
                freqs.append(c)

        valid_cache: dict[tuple[str, str], bool] = {}

        def valid(p: tuple[str, str]) -> bool:
            v = valid_cache.get(p)
            if v is None:
                v = valid_cache[p] = self.is_valid_piece(p[0] + p[1])
            return v

        pair_counts: dict[tuple[str, str], int] = {}
        where: dict[tuple[str, str], set[int]] = {}
        for idx, w in enumerate(words):
            f = freqs[idx]
            for p in zip(w, w[1:]):
                if not valid(p):
                    continue
                pair_counts[p] = pair_counts.get(p, 0) + f
                where.setdefault(p, set()).add(idx)
        def key(c: int, p: tuple[str, str]) -> tuple[int, int, str, str, str]:
            # sentencepiece's order: the larger count, the shorter piece, the smaller piece string;
            # two splits of one string: the shorter left part
            return (-c, len(p[0]) + len(p[1]), p[0] + p[1], p[0], p[1])

        heap = [key(c, p) for p, c in pair_counts.items()]
        heapq.heapify(heap)
        seen = set(pair_counts)  # every valid pair that ever had a positive count

        merged: list[str] = []
        pieces = set(taken) | alphabet
        dead: set[tuple[str, str]] = set()
        with Progress(n_merges, "merge", " pieces", show=self.show_progress) as bar:
            while len(merged) < n_merges and heap:
                negc, _, _, a, b = heapq.heappop(heap)
                pair = (a, b)
                if pair in dead or pair_counts.get(pair) != -negc:
                    continue  # stale entry
                new = a + b
                if new in pieces:
                    dead.add(pair)  # the same string through another split: dropped, as sentencepiece does
                    continue
                pieces.add(new)
                merged.append(new)
                if bar:
                    bar(1)
                delta: dict[tuple[str, str], int] = {}
                for idx in sorted(where.pop(pair, ())):
                    w = words[idx]
                    n = len(w)
                    # occurrences, left to right and non-overlapping (list.index scans in C)
                    hits: list[int] = []
                    i = 0
                    while True:
                        try:
                            i = w.index(a, i)
                        except ValueError:
                            break
                        if i + 1 < n and w[i + 1] == b:
                            hits.append(i)
                            i += 2
                        else:
                            i += 1
                    if not hits:
                        continue  # stale index entry: the word no longer holds the pair
                    for i, j in zip(hits, hits[1:]):
                        # sentencepiece merges one occurrence at a time: between two adjacent ones it
                        # has the pair (new, a) for a moment, which then counts as seen (at count 0)
                        if j == i + 2 and valid((new, a)):
                            seen.add((new, a))
                    f = freqs[idx]
                    # pairs that disappear: those touching an occurrence
                    old: set[int] = set()
                    for i in hits:
                        if i > 0:
                            old.add(i - 1)
                        old.add(i)
                        if i + 2 < n:
                            old.add(i + 1)
                    for k in old:
                        p = (w[k], w[k + 1])
                        if valid(p):
                            delta[p] = delta.get(p, 0) - f
                    out = w[: hits[0]]
                    new_at: list[int] = []
                    prev_end = hits[0]
                    for i in hits:
                        out.extend(w[prev_end:i])
                        new_at.append(len(out))
                        out.append(new)
                        prev_end = i + 2
                    out.extend(w[prev_end:])
                    m = len(out)
                    added: set[int] = set()
                    for j in new_at:
                        if j > 0:
                            added.add(j - 1)
                        if j + 1 < m:
                            added.add(j)
                    for k in added:
                        p = (out[k], out[k + 1])
                        if valid(p):
                            delta[p] = delta.get(p, 0) + f
                            where.setdefault(p, set()).add(idx)
                    words[idx] = out
                for p, d in delta.items():
                    if d == 0 or p == pair:
                        continue
                    c = pair_counts.get(p, 0) + d
                    if c > 0:
                        pair_counts[p] = c
                        heapq.heappush(heap, key(c, p))
                        seen.add(p)
                    else:
                        pair_counts.pop(p, None)
                pair_counts.pop(pair, None)
                dead.add(pair)
            if len(merged) < n_merges:
                # no pair with a positive count is left: sentencepiece goes on taking the pairs it saw
                # whose count fell to 0, in the same order (they change no word); so do we
                for _, _, new, a, b in sorted(key(0, p) for p in seen - dead if p not in pair_counts):
                    if len(merged) >= n_merges:
                        break
                    if new not in pieces:
                        pieces.add(new)
                        merged.append(new)
                        if bar:
                            bar(1)
        return merged

    # -- export -------------------------------------------------------------------------
    def model_proto(
        self, model: PieceBPE, *, normalization: str = "identity", add_dummy_prefix: bool = True,
        remove_extra_whitespaces: bool = False, trainer_settings: Mapping[str, Any] | None = None,
    ) -> ModelProto:
        """A sentencepiece ``ModelProto`` for a model this trainer made, for
        :func:`tokenforge.sentencepiece.proto.write_model` (by default identity
        normalization: the text is expected normalized already). ``trainer_settings``
        records further ``TrainerSpec`` fields, such as the ``max_sentence_length``
        the counts were read with."""
        from ..sentencepiece.proto import ModelType, build_model_proto

        if not model.is_sentencepiece:
            raise TrainingError("model_proto needs a SentencePiece-style PieceBPE")
        return build_model_proto(
            cast("list[str]", [model.id_to_token(i) for i in range(model.vocab_size)]), model.scores or [], model.types or [],
            model_type=ModelType.BPE, normalization=normalization, add_dummy_prefix=add_dummy_prefix,
            remove_extra_whitespaces=remove_extra_whitespaces,
            trainer_settings={**self.settings(), **(trainer_settings or {})},
        )

    def settings(self) -> dict[str, Any]:
        """The ``TrainerSpec`` fields this trainer's options map to."""
        return {
            "character_coverage": self.character_coverage,
            "byte_fallback": self.byte_fallback,
            "split_digits": self.split_digits,
            "max_sentencepiece_length": self.max_piece_length,
            "split_by_unicode_script": self.split_by_unicode_script,
            "split_by_number": self.split_by_number,
        }

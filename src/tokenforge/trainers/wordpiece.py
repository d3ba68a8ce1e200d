"""WordPiece training: bottom-up merges of adjacent units, by one of three rules.

Training starts from characters and merges an adjacent pair of units at a
time until ``vocab_size`` is reached or no pair with at least
``min_frequency`` occurrences is left. With f(xy) the number of times ``y``
follows ``x`` inside a word, f(x) the number of times unit ``x`` occurs, and
N the total number of units, all in the current segmentation of the corpus
(each word weighted by its count), ``merge=`` picks the pair with the highest

* ``"frequency"`` (the default): f(xy). This is BPE with the ``##`` prefix,
  the rule of HF tokenizers' ``WordPieceTrainer`` (its BPE trainer with a
  continuing-subword prefix).
* ``"likelihood"``: f(xy) · log(f(xy) · N / (f(x) · f(y))), the gain in
  log-likelihood of the corpus under a unigram model of the units when ``x``
  and ``y`` become one unit (to first order), which is how Schuster &
  Nakajima (2012, "Japanese and Korean voice search", ICASSP) describe the
  choice of the next word unit.
* ``"score"``: f(xy) / (f(x) · f(y)), the rule this trainer used before
  ``merge`` existed, kept unchanged.

Why ``"score"`` loses. The score is the *ratio* by which each occurrence of
``xy`` becomes more likely (up to the factor N), i.e. exp of the pointwise
mutual information; it ignores how many occurrences gain. A pair seen twice
whose units occur nowhere else scores 1/2 and beats a pair of frequent units
seen 10^5 times, so the vocabulary fills with rare, whole-word pieces that
text outside the training data seldom contains: on held-out text it needs
about twice HF's tokens per word at ``min_frequency=0``; a ``min_frequency``
of 10 only removes the rarest of those pieces and leaves it 5-9 % behind.
Multiplying by f(xy) gives the actual likelihood gain: c·log(c·N/(f(x)f(y)))
is the first-order change of sum_u f(u)·log(f(u)/N) when c occurrences of
``x y`` become one unit. That rule no longer favours rare pairs; held out, it
comes within 0.2-0.4 % of ``"frequency"`` overall (up to 9 % better on some
non-Latin scripts, up to 13 % worse on Vietnamese). ``"frequency"`` removes exactly f(xy) units
from the training data at each merge, so it is greedy compression, which is
what tokens/word and bytes/token measure; ``benchmarks/bench_train_quality.py``
and ``benchmarks/RESULTS.md`` give the per-language figures against HF. (Google
did not publish the tool that built BERT's vocabularies; the open builders it
pointed to, tensor2tensor's ``SubwordTextEncoder`` and later TensorFlow Text's
``bert_vocab_from_dataset``, also select subwords by count.)

Units. The first character of a word is its own form (``"h"``), every later
character carries the continuing-subword prefix (``"##e"``). Merging ``x``
and ``y`` gives ``x`` followed by ``y`` without its prefix (``"h" + "##e" ->
"he"``, ``"##e" + "##l" -> "##el"``). Two different pairs can produce the
same string; it is one token with one id.

Vocabulary and ids, in this order: the special tokens as given; the
word-initial forms of the alphabet, then its ``##`` forms, each sorted by
code point; then one id per new string in the order it was learned. Which
forms: with ``all_forms=True`` (the default for ``merge="score"``, as that
rule always had it) both forms of every kept character, so any word over the
alphabet can be encoded; with ``all_forms=False`` (the default otherwise) the
word-initial form of each character that starts a training word and the
``##`` form of each character found inside one (both forms of every
``initial_alphabet`` character). On Chinese text that matters: BERT's
pre-tokenizer makes every CJK ideograph a word of its own, so their thousands
of ``##`` forms would never be used, and with them the benchmark's 7,359
characters need 14,723 entries, more than a vocabulary of 8,000. (HF keeps the ``##`` forms seen and the word-initial
form of every character.)

``limit_alphabet`` keeps the most frequent characters (ties: smaller code
point first); ``initial_alphabet`` characters are always kept. A word that
holds a character outside the kept alphabet can only ever be encoded as
``[UNK]``. ``"score"`` leaves such a word out of training; the other rules cut
it at those characters and train on each run of kept characters, with the
forms it has in the word (the runs are real text; no pair spans a cut). With
``limit_alphabet=1000`` on multilingual text, where the cut falls inside a
script, that is most of the text of that script. (HF drops the characters
and trains on what is left, which makes pairs that never occur.)

Ties, always deterministic: the result depends only on the counts, never on
hash seeds, thread counts or the order of the input mapping.

* ``"frequency"``: the larger f(xy), then the pair of older units: the
  smaller id of the left unit, then of the right one (ids as above: the
  special tokens, the characters in code point order, then the new tokens in
  the order learned). HF also prefers the smaller ids. Breaking ties by the
  tokens' strings instead favours low code points, i.e. Latin text, at the
  vocabulary's cutoff, where many pairs tie; on the quality benchmark (30k,
  0.3 MB per source file) that left Japanese and Traditional Chinese 0.2-0.5 %
  behind HF.
* ``"likelihood"``: the key is evaluated in IEEE doubles as
  ``c * (((log c + log N) - log f(x)) - log f(y))`` (:func:`likelihood_key`,
  the same operations in the native loop, so both give the same double);
  equal keys: the larger f(xy), then the older units as above.
* ``"score"``: scores are compared exactly (integer cross-multiplication,
  never float rounding); among equal scores the larger f(xy), then the
  strings.

The loops. Nothing is recounted per merge. The trainer keeps the count of each
pair, an index from each pair to the words that hold it and the count of each
unit. A merge of ``x y`` visits only the words holding it and applies the
pair-count changes it causes.

* ``"frequency"``: one max-heap of pairs with lazy deletion; a pair whose
  count changed is pushed again, an entry whose count is stale is dropped
  when popped. ``"likelihood"`` uses the same heap, but a merge also changes
  f(x), f(y) and f(xy), so every pair holding one of those three units is
  pushed again, and N falls at every merge, which only lowers keys: an entry
  popped with current counts is re-keyed with the current N and taken only if
  its key did not change (every other entry bounds its pair's key from
  above). Python reference and native loop alike.
* ``"score"``: a merge lowers f(x) and f(y), which *raises* the score of
  every other pair holding ``x`` or ``y``, and late in training those are
  frequent units (``##e``) with thousands of pairs. The Python reference
  (``backend="python"``) keeps one max-heap of pairs with lazy deletion:
  entries carry the (f(xy), f(x), f(y)) they were scored with and are
  skipped when popped if any has changed. Instead of re-scoring the pairs of
  ``x`` and ``y`` at once, it pushes one *bound* entry per changed unit u with
  key 1/f(u) (no pair of u can score more, since f(ux) <= f(x)); when a bound
  reaches the top, u's pairs are re-scored. The native loop
  (``_core/wordpiece_train.h``) gives every pair to one *owner* unit, the more
  frequent one, and keeps per unit a heap of its pairs keyed by f(ux)/f(x), a
  key that does not change when f(u) does. A global heap holds each unit's
  best pair. A change of f(u) then costs one refresh of u's heap plus a
  re-key of the few pairs whose owner is the partner.

The native loop is the default when the core is built; the tests compare it
with the reference for every rule. Counts are 64-bit there; larger totals run
the Python loop.
"""

from __future__ import annotations

import heapq
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from itertools import pairwise

from .. import _native
from ..errors import TrainingError
from ..models.wordpiece import WordPiece
from ..progress import Progress
from ..specials import check_special_list
from . import NoTrainingDataError, VocabReport, check_vocab_size
from .bpe import index_pairs

BERT_SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
#: The merge rules, in the order of the native loop's method numbers.
MERGE_METHODS = ("score", "frequency", "likelihood")
#: The rule ``WordPieceTrainer`` uses unless told otherwise (see the module docstring).
DEFAULT_MERGE = "frequency"
#: Third field of a unit-bound heap entry: sorts before the ``-f(xy)`` of any pair.
_DIRTY = float("-inf")


class _Score:
    """The exact score ``num / den`` in a heap key; ordered so that the *higher*
    score sorts first. Only compared when the float scores in front of it tie."""

    __slots__ = ("den", "num")

    def __init__(self, num: int, den: int) -> None:
        self.num = num
        self.den = den

    def __lt__(self, other: _Score) -> bool:
        return self.num * other.den > other.num * self.den

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Score) and self.num * other.den == other.num * self.den

    __hash__ = None  # type: ignore[assignment]


class WordPieceTrainer:
    """Settings for WordPiece training; :meth:`train_from_counts` returns a
    :class:`~tokenforge.models.wordpiece.WordPiece` and leaves the merges it
    learned, in order, in ``merges``.

    ``merge`` is ``"frequency"`` (default, as HF tokenizers), ``"likelihood"``
    or ``"score"``; ``all_forms`` chooses the character forms (``None``: only
    for ``"score"``); see the module docstring.

    >>> counts = {"qu": 2, "ab": 8, "a": 2, "b": 2}
    >>> t = WordPieceTrainer(vocab_size=13, special_tokens=["[UNK]"], show_progress=False)
    >>> wp = t.train_from_counts(counts)
    >>> t.merges[0]  # f(ab) = 8 beats f(qu) = 2
    ('a', '##b')
    >>> [wp.id_to_token(i) for i in wp.encode_piece("ab")]
    ['ab']
    >>> s = WordPieceTrainer(vocab_size=13, special_tokens=["[UNK]"], show_progress=False, merge="score")
    >>> _ = s.train_from_counts(counts)
    >>> s.merges[0]  # f(qu)/(f(q)f(##u)) = 2/4 beats f(ab)/(f(a)f(##b)) = 8/80
    ('q', '##u')
    """

    def __init__(
        self,
        vocab_size: int = 30000,
        min_frequency: int = 0,
        limit_alphabet: int | None = None,
        initial_alphabet: Iterable[str] = (),
        special_tokens: Sequence[str] = BERT_SPECIAL_TOKENS,
        continuing_subword_prefix: str = "##",
        show_progress: bool | None = None,
        *,
        unk_token: str = "[UNK]",
        max_input_chars_per_word: int = 100,
        backend: str = "auto",
        merge: str = DEFAULT_MERGE,
        all_forms: bool | None = None,
    ) -> None:
        try:
            _native.core(backend)
        except ValueError as exc:
            raise TrainingError(str(exc)) from None
        if merge not in MERGE_METHODS:
            raise TrainingError(f"merge must be one of {', '.join(map(repr, MERGE_METHODS))}, got {merge!r}")
        if all_forms is not None and not isinstance(all_forms, bool):
            raise TrainingError(f"all_forms must be None or a bool, got {all_forms!r}")
        check_vocab_size(vocab_size)
        if not isinstance(min_frequency, int) or isinstance(min_frequency, bool) or min_frequency < 0:
            raise TrainingError(f"min_frequency must be an int >= 0, got {min_frequency!r}")
        if limit_alphabet is not None and (
            not isinstance(limit_alphabet, int) or isinstance(limit_alphabet, bool) or limit_alphabet < 0
        ):
            raise TrainingError(f"limit_alphabet must be None or an int >= 0, got {limit_alphabet!r}")
        if isinstance(initial_alphabet, str):
            initial = sorted(set(initial_alphabet))
        else:
            initial_list = list(initial_alphabet)
            for c in initial_list:
                if not isinstance(c, str) or len(c) != 1:
                    raise TrainingError(f"initial_alphabet must hold single characters, got {c!r}")
            initial = sorted(set(initial_list))
        if limit_alphabet is not None and len(initial) > limit_alphabet:
            raise TrainingError(
                f"initial_alphabet has {len(initial)} characters, more than limit_alphabet={limit_alphabet}"
            )
        specials = check_special_list(special_tokens)
        seen = set(specials)
        if unk_token not in seen:
            raise TrainingError(
                f"unk_token {unk_token!r} must be one of the special_tokens {specials!r} "
                "(a WordPiece model needs its unknown token)"
            )
        if not isinstance(continuing_subword_prefix, str):
            raise TrainingError(f"continuing_subword_prefix must be a str, got {continuing_subword_prefix!r}")
        self.vocab_size = vocab_size
        self.min_frequency = min_frequency
        self.limit_alphabet = limit_alphabet
        self.initial_alphabet = tuple(initial)
        self.special_tokens = tuple(specials)
        self.continuing_subword_prefix = continuing_subword_prefix
        self.show_progress = show_progress
        self.unk_token = unk_token
        self.max_input_chars_per_word = max_input_chars_per_word
        self.backend = backend
        self.merge = merge
        #: Both forms of every kept character (``True``) or only the forms the training words use.
        self.all_forms = (merge == "score") if all_forms is None else all_forms
        #: The merges of the last training run, ``(left, right)`` token strings in order.
        self.merges: list[tuple[str, str]] = []
        #: The size reached by the last training run (``stopped_early`` when no pair was left to merge).
        self.last_report: VocabReport | None = None

    # -- alphabet ------------------------------------------------------------
    def alphabet(self, counts: Mapping[str, int]) -> list[str]:
        """The characters kept, sorted by code point (see the module docstring)."""
        freq = _char_counts((w, c) for w, c in counts.items() if c > 0)
        keep = set(self.initial_alphabet)
        rest = sorted((ch for ch in freq if ch not in keep), key=lambda ch: (-freq[ch], ch))
        if self.limit_alphabet is not None:
            rest = rest[: max(self.limit_alphabet - len(keep), 0)]
        keep.update(rest)
        return sorted(keep)

    def min_vocab_size(self, counts: Mapping[str, int]) -> int:
        """Special tokens plus the character forms (see the module docstring)."""
        clean = {w: c for w, c in counts.items() if w and c > 0}
        alphabet = self.alphabet(clean)
        return len(self._base_tokens(alphabet, *self._forms(clean, alphabet)))

    def _forms(self, counts: Mapping[str, int], alphabet: list[str]) -> tuple[list[str], list[str]]:
        """The characters whose word-initial form, and those whose ``##`` form,
        enter the vocabulary: all of ``alphabet`` for both with ``all_forms``;
        else the forms the words over the alphabet use, plus both forms of each
        ``initial_alphabet`` character."""
        if self.all_forms:
            return alphabet, alphabet
        allowed = set(alphabet)
        if self.merge == "score":  # a word with a character outside the alphabet takes no part
            words = [w for w in counts if allowed.issuperset(w)]
        else:  # it is cut there (see _learn)
            words = list(counts)
        first = set(self.initial_alphabet)
        first.update(w[0] for w in words)
        later = set(self.initial_alphabet)
        later.update("".join(w[1:] for w in words))
        return sorted(first & allowed), sorted(later & allowed)

    def _base_tokens(self, alphabet: list[str], first: list[str] | None = None, later: list[str] | None = None) -> list[str]:
        prefix = self.continuing_subword_prefix
        out: list[str] = []
        seen: set[str] = set()
        first = alphabet if first is None else first
        later = alphabet if later is None else later
        for tok in (*self.special_tokens, *first, *(prefix + ch for ch in later)):
            if tok not in seen:
                seen.add(tok)
                out.append(tok)
        return out

    # -- training ------------------------------------------------------------
    def train_from_counts(self, counts: Mapping[str, int]) -> WordPiece:
        """Train on ``{word: count}`` (words already normalized and pre-tokenized).

        Raises :class:`TrainingError` for empty counts, a count that is not a
        positive int, or a ``vocab_size`` below the specials plus the alphabet
        (the message gives that minimum).
        """
        clean: dict[str, int] = {}
        for w, c in counts.items():
            if not isinstance(w, str):
                raise TrainingError(f"words must be str, got {w!r}")
            if not isinstance(c, int) or isinstance(c, bool) or c < 0:
                raise TrainingError(f"count of {w!r} must be an int >= 0, got {c!r}")
            if w and c:
                clean[w] = c
        if not clean:
            raise NoTrainingDataError("no words to train on: the counts are empty (or all words are empty / count 0)")
        alphabet = self.alphabet(clean)
        first, later = self._forms(clean, alphabet)
        base = self._base_tokens(alphabet, first, later)
        if self.vocab_size < len(base):
            raise TrainingError(
                f"vocab_size {self.vocab_size} is too small: the {len(self.special_tokens)} special token(s) "
                f"and the {len(alphabet)}-character alphabet ({len(first)} word-initial and {len(later)} "
                f"{self.continuing_subword_prefix!r} forms) need at least {len(base)}"
            )
        tokens, merges = _learn(
            clean,
            base,
            alphabet,
            self.special_tokens,
            self.continuing_subword_prefix,
            self.vocab_size,
            self.min_frequency,
            self.show_progress,
            self.backend,
            self.merge,
            first,
            later,
        )
        self.merges = merges
        self.last_report = VocabReport(self.vocab_size, len(tokens), len(merges))
        return WordPiece(
            {t: i for i, t in enumerate(tokens)},
            unk_token=self.unk_token,
            continuing_subword_prefix=self.continuing_subword_prefix,
            max_input_chars_per_word=self.max_input_chars_per_word,
        )


def _char_counts(items: Iterable[tuple[str, int]]) -> dict[str, int]:
    """``{char: sum of counts}`` over ``(word, count)`` items; words with the
    same count are joined and counted by ``Counter`` in one C-level pass."""
    by_count: dict[int, list[str]] = {}
    for w, c in items:
        ws = by_count.get(c)
        if ws is None:
            by_count[c] = [w]
        else:
            ws.append(w)
    freq: dict[str, int] = {}
    for c, ws in by_count.items():
        for ch, k in Counter("".join(ws)).items():
            freq[ch] = freq.get(ch, 0) + k * c
    return freq


def _learn(
    counts: Mapping[str, int],
    base: list[str],
    alphabet: list[str],
    specials: Sequence[str],
    prefix: str,
    vocab_size: int,
    min_frequency: int,
    show_progress: bool | None,
    backend: str = "auto",
    merge: str = "score",
    first_forms: Sequence[str] | None = None,
    later_forms: Sequence[str] | None = None,
) -> tuple[list[str], list[tuple[str, str]]]:
    """Prepare the words as unit ids and run the merge loop (native when the
    core is built and the counts fit 64 bits, else the Python reference).
    Returns the tokens in id order and the merges as pairs of token strings.

    A word with a character outside the alphabet is skipped for ``"score"``;
    for the other rules it is cut at those characters and each run of kept
    characters trains with the forms it has in the word (word-initial only for
    the run that starts the word)."""
    tokens: list[str] = list(base)
    token_id: dict[str, int] = {t: i for i, t in enumerate(tokens)}
    special_ids = {token_id[t] for t in specials}
    initial = {ch: token_id[ch] for ch in (alphabet if first_forms is None else first_forms)}
    later = {ch: token_id[prefix + ch] for ch in (alphabet if later_forms is None else later_forms)}

    words: list[list[int]] = []
    freqs: list[int] = []
    # words in sorted order: the word indices (and so every iteration over
    # them) do not depend on the order of the input mapping
    kept = sorted(counts)
    allowed = set(alphabet)
    partial: list[str] = []
    if any(not allowed.issuperset(w) for w in kept):
        # a word with a character outside the alphabet can only be [UNK]
        if merge != "score":
            partial = [w for w in kept if not allowed.issuperset(w)]
        kept = [w for w in kept if allowed.issuperset(w)]
    first: dict[str, int] = {}
    later_get = later.__getitem__
    for w in kept:
        c = counts[w]
        first[w[0]] = first.get(w[0], 0) + c
        if len(w) >= 2:
            words.append([initial[w[0]], *map(later_get, w[1:])])
            freqs.append(c)
    unit_freq: list[int] = [0] * len(tokens)
    for ch, n in _char_counts((w, counts[w]) for w in kept).items():
        k = first.get(ch, 0)
        if k:
            unit_freq[initial[ch]] += k
        if n - k:
            unit_freq[later[ch]] += n - k
    # ... but its runs of kept characters are real text: they train, with the
    # forms they have in the word (no pair spans a cut)
    for w in partial:
        c = counts[w]
        run: list[int] = []
        for i, ch in enumerate(w + "\0"):
            if i < len(w) and ch in allowed:
                u = initial[ch] if i == 0 else later[ch]
                run.append(u)
                unit_freq[u] += c
                continue
            if len(run) >= 2:
                words.append(run)
                freqs.append(c)
            run = []

    progress = Progress(vocab_size - len(tokens), "wordpiece", " tokens", show=show_progress)
    bar = progress if progress else None
    try:
        native = _native.core(backend)
        # 64-bit counts: every unit count is at most the total below
        if native is not None and sum(f * len(w) for w, f in zip(words, freqs)) + sum(unit_freq) < 2**62:
            # surrogatepass: a lone surrogate is a character too, and its bytes keep code-point order
            plen = len(prefix.encode("utf-8", "surrogatepass"))
            ids = native.wordpiece_learn(
                [t.encode("utf-8", "surrogatepass") for t in tokens],
                words,
                freqs,
                unit_freq,
                plen,
                min(vocab_size, 2**62),
                min(min_frequency, 2**62),  # any larger value merges nothing either
                sorted(special_ids),
                bar.set if bar is not None else None,  # tokens added so far; the loop also stops on Ctrl-C
                MERGE_METHODS.index(merge),
            )
            merges: list[tuple[str, str]] = []
            cut = len(prefix)
            for a, b in ids:
                merges.append((tokens[a], tokens[b]))
                new_str = tokens[a] + tokens[b][cut:]
                if new_str not in token_id:
                    token_id[new_str] = len(tokens)
                    tokens.append(new_str)
            if bar is not None:
                bar.set(len(tokens) - len(base))
            return tokens, merges
        if merge != "score":
            return tokens, _merge_python_keyed(
                tokens, token_id, special_ids, words, freqs, unit_freq, prefix, vocab_size, min_frequency, bar,
                merge == "likelihood",
            )
        return tokens, _merge_python(
            tokens, token_id, special_ids, words, freqs, unit_freq, prefix, vocab_size, min_frequency, bar
        )
    finally:
        progress.close()


def _merge_python(
    tokens: list[str],
    token_id: dict[str, int],
    special_ids: set[int],
    words: list[list[int]],
    freqs: list[int],
    unit_freq: list[int],
    prefix: str,
    vocab_size: int,
    min_frequency: int,
    bar: Progress | None,
) -> list[tuple[str, str]]:
    """The merge loop, pure Python reference. Extends ``tokens``,
    ``token_id`` and ``unit_freq`` in place and returns the merges."""
    plen = len(prefix)
    pair_count, where = index_pairs(words, freqs)
    # pairs each unit takes part in (as left or right), for re-scoring
    pairs_of: dict[int, set[tuple[int, int]]] = {}
    for p in pair_count:
        pairs_of.setdefault(p[0], set()).add(p)
        pairs_of.setdefault(p[1], set()).add(p)

    banned_units = special_ids
    banned_pairs: set[tuple[int, int]] = set()
    heap: list[tuple[float, _Score, float, str, str, int, int, int, int]] = []
    push = heapq.heappush

    def push_pair(p: tuple[int, int]) -> None:
        """Push ``p`` with its current score if it may be merged."""
        c = pair_count.get(p)
        if c is None or c < min_frequency or p in banned_pairs:
            return
        a, b = p
        if a in banned_units or b in banned_units:
            return
        fa = unit_freq[a]
        fb = unit_freq[b]
        den = fa * fb
        push(heap, (-(c / den), _Score(c, den), -c, tokens[a], tokens[b], a, b, fa, fb))

    def mark_dirty(u: int) -> None:
        """f(u) fell, so every pair with ``u`` scores higher than its heap entry.
        Rather than re-pushing them all now, push one entry for ``u`` whose key
        bounds them all: f(ux) <= f(x) and f(xu) <= f(x), so no pair with ``u``
        scores above 1/f(u). Its pairs are re-scored when that bound reaches
        the top of the heap, usually much later and after many more changes
        to f(u) (the units that change most often are the frequent ones, with
        a low bound). It sorts before any pair of equal score."""
        f = unit_freq[u]
        if f > 0 and u not in banned_units:
            dirty[u] = f
            push(heap, (-(1 / f), _Score(1, f), _DIRTY, "", "", -1, u, f, 0))

    dirty: dict[int, int] = {}
    for p in pair_count:
        push_pair(p)
    heapq.heapify(heap)

    merges: list[tuple[str, str]] = []
    pop = heapq.heappop
    while len(tokens) < vocab_size and heap:
        item = pop(heap)
        a, b, fa, fb = item[5], item[6], item[7], item[8]
        if a == -1:  # the bound of a unit whose pairs need re-scoring
            if dirty.get(b) == fa:
                del dirty[b]
                for p in pairs_of.get(b, ()):
                    push_pair(p)
            continue
        pair = (a, b)
        c = -item[2]
        if pair_count.get(pair) != c or unit_freq[a] != fa or unit_freq[b] != fb:
            push_pair(pair)  # stale: make sure the current score is in the heap
            continue
        # A current entry at the top beats every pair of every dirty unit: the
        # unit's bound is still in the heap below it, and bounds sort before
        # pairs of equal score.
        new = _unit_of(tokens, token_id, unit_freq, a, b, plen, bar)
        if new in special_ids:  # the merge would spell a special token, never merged into words
            banned_pairs.add(pair)
            continue
        merges.append((tokens[a], tokens[b]))
        delta, merged = _apply_merge(words, freqs, where, unit_freq, pair, new)

        for p, d in delta.items():
            if d == 0:
                continue
            cnt = pair_count.get(p, 0) + d
            if cnt > 0:
                if p not in pair_count:
                    pairs_of.setdefault(p[0], set()).add(p)
                    pairs_of.setdefault(p[1], set()).add(p)
                pair_count[p] = cnt
                push_pair(p)
            else:
                pair_count.pop(p, None)
                pairs_of[p[0]].discard(p)
                pairs_of[p[1]].discard(p)
        # f(a) and f(b) fell: their other pairs now score higher than their
        # heap entries. (f(new) rose: its pairs' entries are too high, which
        # the stale check above handles when they are popped.)
        mark_dirty(a)
        if b != a:
            mark_dirty(b)
    return merges


def _unit_of(tokens: list[str], token_id: dict[str, int], unit_freq: list[int], a: int, b: int, plen: int,
             bar: Progress | None) -> int:
    """The id of the string that merging units ``a`` and ``b`` spells, a new unit when the
    string is new (counted on the progress bar)."""
    new_str = tokens[a] + tokens[b][plen:]
    new = token_id.get(new_str)
    if new is None:
        new = len(tokens)
        tokens.append(new_str)
        token_id[new_str] = new
        unit_freq.append(0)
        if bar is not None:
            bar.update(1)
    return new


def _apply_merge(
    words: list[list[int]], freqs: Sequence[int], where: dict[tuple[int, int], set[int]], unit_freq: list[int],
    pair: tuple[int, int], new: int,
) -> tuple[dict[tuple[int, int], int], int]:
    """Merge ``pair`` into unit ``new`` in every word that holds it (``where`` indexes the
    words of each pair and gains the new pairs' words; ``unit_freq`` follows). Returns the
    change of every pair's count, and how many times (count-weighted) the pair was merged."""
    a, b = pair
    delta: dict[tuple[int, int], int] = {}
    merged = 0
    for idx in where.pop(pair, ()):
        w = words[idx]
        n = len(w)
        i = 0
        out: list[int] = []
        k = 0
        while i < n:
            if w[i] == a and i + 1 < n and w[i + 1] == b:
                out.append(new)
                i += 2
                k += 1
            else:
                out.append(w[i])
                i += 1
        if not k:
            continue  # stale index entry: the word no longer holds the pair
        f = freqs[idx]
        merged += k * f
        for p in pairwise(w):
            delta[p] = delta.get(p, 0) - f
        for p in pairwise(out):
            delta[p] = delta.get(p, 0) + f
            s = where.get(p)
            if s is None:
                where[p] = {idx}
            else:
                s.add(idx)
        words[idx] = out
    unit_freq[a] -= merged
    unit_freq[b] -= merged
    unit_freq[new] += merged
    return delta, merged


def likelihood_key(c: int, fa: int, fb: int, n: int) -> float:
    """The ``merge="likelihood"`` key of a pair seen ``c`` times whose units
    are seen ``fa`` and ``fb`` times among ``n`` units: c·log(c·n / (fa·fb)),
    evaluated as ``c * (((log c + log n) - log fa) - log fb)`` in doubles, in
    this order (the native loop computes the same double)."""
    return c * (((math.log(c) + math.log(n)) - math.log(fa)) - math.log(fb))


def _merge_python_keyed(
    tokens: list[str],
    token_id: dict[str, int],
    special_ids: set[int],
    words: list[list[int]],
    freqs: list[int],
    unit_freq: list[int],
    prefix: str,
    vocab_size: int,
    min_frequency: int,
    bar: Progress | None,
    likelihood: bool,
) -> list[tuple[str, str]]:
    """The merge loop for ``merge="frequency"`` and ``"likelihood"``, pure
    Python reference: one heap of pairs with lazy deletion. After each merge
    every pair whose key may have changed is pushed again (the pairs whose
    count changed and, for the likelihood, every pair of the two merged units
    and of the new one); an entry is skipped when popped if the counts it was
    keyed with are no longer current. The likelihood key also falls as the
    total ``n`` falls: an entry popped with current counts is re-keyed with the
    current ``n`` and taken only if its key did not change."""
    plen = len(prefix)
    pair_count, where = index_pairs(words, freqs)
    pairs_of: dict[int, set[tuple[int, int]]] = {}
    if likelihood:
        for p in pair_count:
            pairs_of.setdefault(p[0], set()).add(p)
            pairs_of.setdefault(p[1], set()).add(p)
    total = sum(unit_freq)
    banned_pairs: set[tuple[int, int]] = set()
    # (-key, -count, a, b, f(a), f(b)): ties go to the larger count, then the smaller ids
    # (the older units); the unit counts are 0 for "frequency"
    heap: list[tuple[float, int, int, int, int, int]] = []

    def entry(p: tuple[int, int], c: int) -> tuple[float, int, int, int, int, int]:
        a, b = p
        if likelihood:
            fa, fb = unit_freq[a], unit_freq[b]
            return (-likelihood_key(c, fa, fb, total), -c, a, b, fa, fb)
        return (-float(c), -c, a, b, 0, 0)

    def eligible(p: tuple[int, int]) -> int:
        """The pair's count if it may be merged, else 0."""
        c = pair_count.get(p, 0)
        if c <= 0 or c < min_frequency or p in banned_pairs or p[0] in special_ids or p[1] in special_ids:
            return 0
        return c

    for p, c in pair_count.items():
        if eligible(p):
            heap.append(entry(p, c))
    heapq.heapify(heap)

    merges: list[tuple[str, str]] = []
    push, pop = heapq.heappush, heapq.heappop
    while len(tokens) < vocab_size and heap:
        item = pop(heap)
        a, b, fa, fb = item[2], item[3], item[4], item[5]
        pair = (a, b)
        c = -item[1]
        if eligible(pair) != c:
            continue  # stale: a current entry was pushed when the count changed
        if likelihood:
            if unit_freq[a] != fa or unit_freq[b] != fb:
                continue  # stale
            key = likelihood_key(c, fa, fb, total)
            if -key != item[0]:  # the total fell since: the key is lower now
                push(heap, (-key, *item[1:]))
                continue
        new = _unit_of(tokens, token_id, unit_freq, a, b, plen, bar)
        if new in special_ids:  # the merge would spell a special token, never merged into words
            banned_pairs.add(pair)
            continue
        merges.append((tokens[a], tokens[b]))
        delta, merged = _apply_merge(words, freqs, where, unit_freq, pair, new)
        total -= merged

        changed: set[tuple[int, int]] = set()
        for p, d in delta.items():
            if d == 0:
                continue
            cnt = pair_count.get(p, 0) + d
            if cnt > 0:
                if likelihood and p not in pair_count:
                    pairs_of.setdefault(p[0], set()).add(p)
                    pairs_of.setdefault(p[1], set()).add(p)
                pair_count[p] = cnt
                changed.add(p)
            else:
                pair_count.pop(p, None)
                if likelihood:
                    pairs_of[p[0]].discard(p)
                    pairs_of[p[1]].discard(p)
        if likelihood:
            for u in {a, b, new}:
                changed.update(pairs_of.get(u, ()))
        for p in changed:
            c = eligible(p)
            if c:
                push(heap, entry(p, c))
    return merges

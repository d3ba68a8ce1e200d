"""Byte patches: the units of tokenizer-free models, fixed (MegaByte) or by entropy (BLT).

Byte-level models group the UTF-8 bytes of a text into *patches* instead of
looking tokens up in a vocabulary:

* **Fixed-size patches** (Yu et al., 2023, "MEGABYTE: Predicting Million-byte
  Sequences with Multiscale Transformers"): the bytes are cut every ``P`` bytes,
  whatever they hold (:func:`fixed_patches`).
* **Entropy patches** (Pagnoni et al., 2024, "Byte Latent Transformer: Patches
  Scale Better Than Tokens", section 2.3): a small next-byte model gives, at each
  byte position ``t``, the entropy of its prediction of ``x_t`` from the bytes
  before it, ``H(x_t) = -Σ_v p(x_t = v | x_<t) log2 p(x_t = v | x_<t)``; a patch
  starts where the next byte is hard to predict (:func:`patches`). The paper's two
  rules are implemented as stated there:

  - *global constraint* (``rule="global"``): a new patch starts at byte ``t`` when
    ``H(x_t) > θ_g``;
  - *approximate monotonic constraint* (``rule="relative"``): a new patch starts at
    ``t`` when ``H(x_t) - H(x_{t-1}) > θ_r``, i.e. where entropy stops (roughly)
    decreasing along the patch.

  The first byte always starts a patch. Entropies are in bits here (the paper's
  figures use the same quantity; only the threshold's unit depends on the base).

The entropy model. BLT trains a small byte transformer; tokenforge trains a
**byte n-gram model with interpolated Kneser–Ney smoothing** (Kneser & Ney, 1995;
Chen & Goodman, 1999, "An Empirical Study of Smoothing Techniques for Language
Modeling"), with one absolute discount per order estimated as
``D = n1 / (n1 + 2 n2)`` from the counts of counts (Ney, Essen & Kneser, 1994), and
the lower orders built from continuation counts (the number of distinct bytes
seen before an n-gram) down to a uniform distribution over the 256 bytes. Why this
model: it is the best-performing classical smoothing of n-gram models (Chen &
Goodman's comparison), it needs no dependencies and no GPU, it trains in well
under a second on the embedded corpus (:func:`tokenforge.corpus.embedded_corpus`,
each language's training part), and it is deterministic (the counts fix every
number). Its limitation is its short context (``order - 1`` bytes, 4 by default),
which is also what makes it fast.

Why it is fast. In interpolated Kneser–Ney, a context never seen in training gives
exactly the distribution of its longest suffix that was seen. So the entropy of
every position is the entropy of the longest seen suffix of its context, and the
model only stores, for every context seen in training, the entropy of its
next-byte distribution (computed once at training time, from point probabilities
and the parent's entropy, never from 256-wide vectors). Measuring a text is then
one vectorised table lookup per order: time linear in the input (about
``order`` binary searches per byte), about 0.1 s per megabyte.

Model file: JSON, written atomically (:func:`tokenforge._io.atomic_write`),
with the contexts of each order as one hex string and their entropies rounded to
1e-4 bit (the rounding happens at training, so a loaded model equals the trained
one and two trainings on the same texts give byte-identical files). Contexts seen
fewer than ``min_count`` times are dropped (count cut-off pruning), which keeps
the default model small; their positions use their longest kept suffix.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import FileFormatError, InvalidArgumentError

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "DEFAULT_ORDER",
    "DEFAULT_RELATIVE_THRESHOLD",
    "DEFAULT_THRESHOLD",
    "RULES",
    "ByteNgramModel",
    "Patcher",
    "default_model",
    "entropy_boundaries",
    "fixed_patches",
    "patch_texts",
    "patches",
    "train_byte_model",
]

#: n-gram order of the default model: each byte is predicted from the 4 bytes before it.
DEFAULT_ORDER = 5
#: Contexts seen fewer times than this in training are dropped from the default model.
DEFAULT_MIN_COUNT = 3
#: ``θ_g`` (bits) of the global rule. With the default model, about 4.3 bytes per patch on
#: the English UDHR sample (BLT's runs use average patch sizes of 4.5 to 8 bytes).
DEFAULT_THRESHOLD = 3.5
#: ``θ_r`` (bits) of the approximate monotonic rule (about 5 bytes per patch on that sample).
DEFAULT_RELATIVE_THRESHOLD = 1.5
RULES = ("global", "relative")
FORMAT = "tokenforge-byte-ngram"
MAX_ORDER = 8  # contexts are packed in 64-bit integers, 8 bits per byte


def _as_bytes(data: bytes | bytearray | memoryview | str) -> bytes:
    if isinstance(data, str):
        return data.encode("utf-8", "surrogatepass")
    if isinstance(data, (bytes, bytearray, memoryview)):
        return bytes(data)
    raise InvalidArgumentError(f"patches are cut in bytes or str, got {type(data).__name__}")


def _codes(arr: np.ndarray, n: int) -> np.ndarray:
    """Big-endian ``uint64`` of every run of ``n`` bytes of ``arr`` (``len(arr) - n + 1`` of them)."""
    import numpy as np

    m = len(arr) - n + 1
    out = np.zeros(max(m, 0), dtype=np.uint64)
    for i in range(n):
        out <<= np.uint64(8)
        out |= arr[i : i + m].astype(np.uint64)
    return out


def _discount(counts: np.ndarray) -> float:
    """Ney's absolute discount ``n1 / (n1 + 2 n2)`` from the counts of one order."""
    import numpy as np

    n1 = int(np.count_nonzero(counts == 1))
    n2 = int(np.count_nonzero(counts == 2))
    if n1 + 2 * n2 == 0:
        return 0.5
    return min(max(n1 / (n1 + 2 * n2), 0.05), 0.95)


@dataclass(frozen=True)
class _Level:
    """The contexts of one length (sorted big-endian codes) and their entropies (bits)."""

    contexts: Any  # np.ndarray[uint64]
    entropies: Any  # np.ndarray[float64]


class ByteNgramModel:
    """A next-byte model: for each byte position, the entropy (bits) of its prediction.

    Built by :func:`train_byte_model` or :meth:`load`; immutable. ``order`` is the
    n-gram order (a byte is predicted from the ``order - 1`` bytes before it).
    """

    __slots__ = ("order", "min_count", "discounts", "_levels", "_trained_bytes")

    def __init__(self, order: int, levels: Sequence[_Level], discounts: Sequence[float] = (),
                 min_count: int = 1, trained_bytes: int = 0) -> None:
        if len(levels) != order:
            raise FileFormatError(f"a byte model of order {order} needs {order} context levels, got {len(levels)}")
        self.order = order
        self.min_count = min_count
        self.discounts = tuple(float(d) for d in discounts)
        self._levels = tuple(levels)
        self._trained_bytes = trained_bytes

    # ---------------------------------------------------------------- queries
    @property
    def n_contexts(self) -> int:
        """How many contexts (of every length) the model has an entropy for."""
        return sum(len(lv.contexts) for lv in self._levels)

    def context_entropy(self, context: bytes) -> float:
        """The entropy (bits) of the next byte after ``context`` (only its last ``order - 1``
        bytes count; an unseen context gives its longest seen suffix's entropy)."""
        import numpy as np

        context = bytes(context)[-(self.order - 1):] if self.order > 1 else b""
        for k in range(len(context), -1, -1):
            lv = self._levels[k]
            code = np.uint64(int.from_bytes(context[len(context) - k:], "big"))
            i = int(np.searchsorted(lv.contexts, code))
            if i < len(lv.contexts) and lv.contexts[i] == code:
                return float(lv.entropies[i])
        return 8.0

    def entropies(self, data: bytes | str) -> np.ndarray:
        """``H(x_t)`` in bits for every byte ``t`` of ``data`` (a ``float64`` array as long as
        the UTF-8 bytes): the entropy of the model's next-byte distribution given the
        bytes before ``t``. Linear time, vectorised."""
        import numpy as np

        raw = _as_bytes(data)
        n = len(raw)
        out = np.full(n, 8.0)  # uniform over 256 bytes: an empty model
        if n == 0:
            return out
        arr = np.frombuffer(raw, dtype=np.uint8)
        todo = np.ones(n, dtype=bool)
        for k in range(min(self.order - 1, n), -1, -1):
            lv = self._levels[k]
            if len(lv.contexts) == 0:
                continue
            # context of position t (t >= k) is arr[t-k:t]; for k == 0 it is empty (code 0)
            codes = _codes(arr[: n - 1], k) if k else np.zeros(n, dtype=np.uint64)
            pos = np.arange(k, n)
            want = todo[k:]
            if not want.any():
                continue
            sel = pos[want]
            c = codes[sel - k]
            i = np.searchsorted(lv.contexts, c)
            i_clip = np.minimum(i, len(lv.contexts) - 1)
            hit = lv.contexts[i_clip] == c
            found = sel[hit]
            out[found] = lv.entropies[i_clip[hit]]
            todo[found] = False
        return out

    # ------------------------------------------------------------ persistence
    def to_dict(self) -> dict[str, Any]:
        levels = []
        for k, lv in enumerate(self._levels):
            hexes = "".join(int(c).to_bytes(k, "big").hex() for c in lv.contexts.tolist()) if k else ""
            levels.append({"length": k, "contexts": hexes, "count": len(lv.contexts),
                           "entropies": [float(h) for h in lv.entropies.tolist()]})
        return {
            "format": FORMAT, "version": 1, "order": self.order, "min_count": self.min_count,
            "smoothing": "interpolated Kneser-Ney", "units": "bits", "trained_bytes": self._trained_bytes,
            "discounts": list(self.discounts), "levels": levels,
        }

    @classmethod
    def from_dict(cls, d: Any) -> "ByteNgramModel":
        import numpy as np

        if not isinstance(d, dict) or d.get("format") != FORMAT:
            raise FileFormatError(f"not a tokenforge byte model (expected \"format\": {FORMAT!r})")
        order = d.get("order")
        if not isinstance(order, int) or not 1 <= order <= MAX_ORDER:
            raise FileFormatError(f"byte model: 'order' must be an integer in 1..{MAX_ORDER}, got {order!r}")
        raw_levels = d.get("levels")
        if not isinstance(raw_levels, list) or len(raw_levels) != order:
            raise FileFormatError(f"byte model: 'levels' must be a list of {order} levels")
        levels = []
        for k, lv in enumerate(raw_levels):
            try:
                hexes, ents = lv["contexts"], lv["entropies"]
                blob = bytes.fromhex(hexes)
                if k and len(blob) % k:
                    raise FileFormatError(f"byte model: level {k} holds {len(blob)} bytes of {k}-byte contexts")
                if k:
                    ctx = _codes(np.frombuffer(blob, dtype=np.uint8), k)[::k].copy()
                else:
                    ctx = np.zeros(len(ents), dtype=np.uint64)
                h = np.asarray(ents, dtype=np.float64)
            except (KeyError, TypeError, ValueError) as exc:
                raise FileFormatError(f"byte model: level {k} is malformed ({exc})") from None
            if len(ctx) != len(h) or (k == 0 and len(h) > 1) or (len(ctx) > 1 and not np.all(ctx[1:] > ctx[:-1])):
                raise FileFormatError(f"byte model: level {k} needs sorted distinct contexts, one entropy each")
            levels.append(_Level(ctx, h))
        return cls(order, levels, d.get("discounts") or (), int(d.get("min_count", 1)), int(d.get("trained_bytes", 0)))

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=True, separators=(",", ":"), sort_keys=True) + "\n"

    def save(self, path: str | os.PathLike) -> None:
        """Write the model as JSON, atomically (the old file stays whole if this fails)."""
        from .._io import atomic_write

        with atomic_write(path) as f:
            f.write(self.to_json())

    @classmethod
    def load(cls, path: str | os.PathLike) -> "ByteNgramModel":
        try:
            with open(path, encoding="utf-8") as f:
                d = json.load(f)
        except json.JSONDecodeError as exc:
            raise FileFormatError(f"{os.fspath(path)}: not JSON ({exc})") from None
        try:
            return cls.from_dict(d)
        except FileFormatError as exc:
            raise FileFormatError(f"{os.fspath(path)}: {exc}") from None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ByteNgramModel):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (f"<ByteNgramModel order={self.order}, {self.n_contexts:,} contexts, "
                f"trained on {self._trained_bytes:,} bytes>")


def train_byte_model(
    texts: Iterable[str | bytes], *, order: int = DEFAULT_ORDER, min_count: int = DEFAULT_MIN_COUNT
) -> ByteNgramModel:
    """Train the interpolated Kneser–Ney byte n-gram model (see the module docstring) on ``texts``.

    ``order``: n-gram order, 1..8 (a byte is predicted from the ``order - 1`` bytes
    before it). ``min_count``: contexts seen fewer times are dropped after training.
    Deterministic: the same texts give the same model. n-grams do not cross texts.

    >>> m = train_byte_model(["abababab"], order=2, min_count=1)
    >>> round(float(m.context_entropy(b"a")), 3) < round(float(m.context_entropy(b"")), 3)
    True
    """
    import numpy as np

    if not isinstance(order, int) or isinstance(order, bool) or not 1 <= order <= MAX_ORDER:
        raise InvalidArgumentError(f"order must be an integer in 1..{MAX_ORDER}, got {order!r}")
    if not isinstance(min_count, int) or min_count < 1:
        raise InvalidArgumentError(f"min_count must be a positive integer, got {min_count!r}")
    arrays = [np.frombuffer(_as_bytes(t), dtype=np.uint8) for t in texts]
    total = int(sum(len(a) for a in arrays))

    # Seen n-grams of each length n = 1..order, with raw counts.
    grams: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    for n in range(1, order + 1):
        parts = [_codes(a, n) for a in arrays if len(a) >= n]
        codes = np.concatenate(parts) if parts else np.zeros(0, dtype=np.uint64)
        grams[n] = np.unique(codes, return_counts=True)

    discounts: list[float] = [0.0] * order
    # Per level k (context length k, n-grams of length k + 1): codes of the seen n-grams,
    # their full interpolated probabilities, and the contexts' entropies.
    prob_codes: dict[int, np.ndarray] = {}
    probs: dict[int, np.ndarray] = {}
    ctx_codes: dict[int, np.ndarray] = {}
    ctx_entropy: dict[int, np.ndarray] = {}
    ctx_total: dict[int, np.ndarray] = {}
    ln2 = math.log(2.0)
    for k in range(order):
        n = k + 1
        if k == order - 1:
            codes, counts = grams[n]  # the highest order: raw counts
        else:  # lower orders: continuation counts, distinct bytes seen before the n-gram
            longer = grams[n + 1][0]
            suffix = longer & np.uint64((1 << (8 * n)) - 1)
            codes, counts = np.unique(suffix, return_counts=True)
        counts = counts.astype(np.float64)
        d = _discount(counts) if len(counts) else 0.5
        discounts[k] = d
        shift = np.uint64(8)
        ctx = codes >> shift
        w = (codes & np.uint64(255)).astype(np.int64)
        starts = np.flatnonzero(np.r_[True, ctx[1:] != ctx[:-1]]) if len(ctx) else np.zeros(0, dtype=np.int64)
        uctx = ctx[starts]
        tot = np.add.reduceat(counts, starts) if len(ctx) else np.zeros(0)
        types = np.diff(np.r_[starts, len(ctx)]).astype(np.float64)
        group = np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, len(ctx)]))
        gamma = d * types / np.maximum(tot, 1e-300)
        a = np.maximum(counts - d, 0.0) / tot[group] if len(ctx) else np.zeros(0)
        g = gamma[group]
        if k == 0:
            parent_p = np.full(len(codes), 1.0 / 256)
            parent_h = np.full(len(uctx), 8.0)
        else:
            # parent context = the context's last k - 1 bytes; parent n-gram = that + w
            mask_n = np.uint64((1 << (8 * (n - 1))) - 1)
            pcodes = codes & mask_n
            j = np.searchsorted(prob_codes[k - 1], pcodes)
            parent_p = probs[k - 1][j]  # present: a seen n-gram's suffix is seen one order down
            mask_c = np.uint64((1 << (8 * (k - 1))) - 1) if k > 1 else np.uint64(0)
            pc = uctx & mask_c
            jc = np.searchsorted(ctx_codes[k - 1], pc)
            parent_h = ctx_entropy[k - 1][jc]
        p = a + g * parent_p
        # H(c) = -[Σ_seen p log p + Σ_unseen γ p' log(γ p')], with
        # Σ_unseen p' log p' = -H(c') - Σ_seen p' log p'  and  Σ_unseen p' = 1 - Σ_seen p'.
        lp = np.log(p) / ln2
        lpp = np.log(parent_p) / ln2
        s_plogp = np.add.reduceat(p * lp, starts) if len(ctx) else np.zeros(0)
        s_pp = np.add.reduceat(parent_p, starts) if len(ctx) else np.zeros(0)
        s_pplogpp = np.add.reduceat(parent_p * lpp, starts) if len(ctx) else np.zeros(0)
        unseen_plogp = -parent_h - s_pplogpp
        unseen_mass = np.maximum(1.0 - s_pp, 0.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            log_g = np.where(gamma > 0, np.log(np.maximum(gamma, 1e-300)) / ln2, 0.0)
        h = -(s_plogp + gamma * unseen_plogp + gamma * log_g * unseen_mass)
        prob_codes[k], probs[k] = codes, p
        ctx_codes[k], ctx_entropy[k], ctx_total[k] = uctx, np.maximum(h, 0.0), tot
        del w

    levels = []
    for k in range(order):
        keep = np.ones(len(ctx_codes[k]), dtype=bool)
        if k and min_count > 1:
            # the raw count of the context: how often it is followed by a byte in training
            ctx_raw, ctx_raw_counts = grams[k + 1][0] >> np.uint64(8), grams[k + 1][1]
            starts = np.flatnonzero(np.r_[True, ctx_raw[1:] != ctx_raw[:-1]]) if len(ctx_raw) else np.zeros(0, int)
            uc = ctx_raw[starts]
            occ = np.add.reduceat(ctx_raw_counts, starts) if len(ctx_raw) else np.zeros(0)
            j = np.minimum(np.searchsorted(uc, ctx_codes[k]), max(len(uc) - 1, 0))
            seen = (uc[j] == ctx_codes[k]) if len(uc) else np.zeros(len(ctx_codes[k]), dtype=bool)
            keep = seen & (occ[j] >= min_count) if len(uc) else seen
        levels.append(_Level(ctx_codes[k][keep].copy(), np.round(ctx_entropy[k][keep], 4)))
    return ByteNgramModel(order, levels, [round(x, 6) for x in discounts], min_count, total)


_DEFAULT: list[ByteNgramModel] = []


def default_model() -> ByteNgramModel:
    """The model trained on the embedded corpus (each language's training part), order
    :data:`DEFAULT_ORDER`; trained on first use (well under a second) and kept."""
    if not _DEFAULT:
        from ..corpus import embedded_corpus

        _DEFAULT.append(train_byte_model([lang.train_text() for lang in embedded_corpus()]))
    return _DEFAULT[0]


# ------------------------------------------------------------------ patches
def fixed_patches(data: bytes | str, size: int) -> list[tuple[int, int]]:
    """MegaByte's patches: ``(start, end)`` byte spans of ``size`` bytes (the last may be shorter).

    >>> fixed_patches(b"abcdefg", 3)
    [(0, 3), (3, 6), (6, 7)]
    """
    if not isinstance(size, int) or isinstance(size, bool) or size < 1:
        raise InvalidArgumentError(f"the patch size must be a positive integer, got {size!r}")
    n = len(_as_bytes(data))
    return [(s, min(s + size, n)) for s in range(0, n, size)]


def entropy_boundaries(entropies: Sequence[float] | np.ndarray, threshold: float, rule: str = "global") -> np.ndarray:
    """Boolean array: ``True`` at each byte that starts a patch (BLT's rules, module docstring).

    >>> entropy_boundaries([3.0, 1.0, 2.5, 0.5], 2.0, "global").tolist()
    [True, False, True, False]
    >>> entropy_boundaries([3.0, 1.0, 2.5, 0.5], 1.0, "relative").tolist()
    [True, False, True, False]
    """
    import numpy as np

    if rule not in RULES:
        raise InvalidArgumentError(f"rule must be one of {', '.join(RULES)}, got {rule!r}")
    h = np.asarray(entropies, dtype=np.float64)
    start = np.zeros(len(h), dtype=bool)
    if len(h) == 0:
        return start
    if rule == "global":
        start = h > threshold
    else:
        start[1:] = (h[1:] - h[:-1]) > threshold
    start[0] = True
    return start


def _spans(starts: np.ndarray, n: int) -> list[tuple[int, int]]:
    import numpy as np

    s = np.flatnonzero(starts).tolist()
    return list(zip(s, s[1:] + [n]))


def patches(
    data: bytes | str,
    model: ByteNgramModel | None = None,
    *,
    threshold: float | None = None,
    rule: str = "global",
) -> list[tuple[int, int]]:
    """BLT's entropy patches of ``data``: ``(start, end)`` byte spans covering every byte once.

    ``model``: a :class:`ByteNgramModel` (default :func:`default_model`). ``rule``:
    ``"global"`` (a patch starts where ``H(x_t) > threshold``) or ``"relative"``
    (where ``H(x_t) - H(x_{t-1}) > threshold``). ``threshold`` defaults to
    :data:`DEFAULT_THRESHOLD` or :data:`DEFAULT_RELATIVE_THRESHOLD` (bits).
    """
    raw = _as_bytes(data)
    model = model if model is not None else default_model()
    if threshold is None:
        threshold = DEFAULT_THRESHOLD if rule == "global" else DEFAULT_RELATIVE_THRESHOLD
    return _spans(entropy_boundaries(model.entropies(raw), float(threshold), rule), len(raw))


def patch_texts(data: bytes | str, spans: Sequence[tuple[int, int]]) -> list[bytes]:
    """The bytes of each span."""
    raw = _as_bytes(data)
    return [raw[s:e] for s, e in spans]


def _float_or_none(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


class Patcher:
    """A patching scheme measured like a tokenizer (``compare``'s ``patches:...`` rows).

    ``encode(text)`` gives one entry per patch (its length in bytes: patches have no
    vocabulary ids), so bytes per token in a comparison is bytes per patch.

    >>> Patcher.from_spec("patches:fixed4").encode("abcdefghij")
    [4, 4, 2]
    """

    def __init__(self, name: str, kind: str, value: float | None = None, model: ByteNgramModel | None = None) -> None:
        if kind not in ("fixed", "global", "relative"):
            raise InvalidArgumentError(f"patch kind must be fixed, global or relative, got {kind!r}")
        self.name = name
        self.kind = kind
        self.value = value
        self._model = model

    #: The spec forms accepted by :meth:`from_spec`.
    SPECS = ("patches:fixedP", "patches:entropy[:θ]", "patches:relative[:θ]")

    @classmethod
    def from_spec(cls, spec: str) -> "Patcher":
        """``patches:fixedP`` (MegaByte, ``P`` bytes), ``patches:entropy[:θ]`` (BLT's global rule)
        or ``patches:relative[:θ]`` (BLT's approximate monotonic rule), with the default model."""
        body = spec.split(":", 1)[1] if ":" in spec else ""
        kind, _, value = body.partition(":")
        if kind.startswith("fixed"):
            digits = kind[len("fixed"):] or value
            if digits.isascii() and digits.isdigit() and int(digits) >= 1:
                return cls(spec, "fixed", int(digits))
        elif kind in ("entropy", "global", "relative"):
            theta = _float_or_none(value) if value else None
            if not value or (theta is not None and math.isfinite(theta)):
                return cls(spec, "global" if kind != "relative" else "relative", theta)
        raise InvalidArgumentError(f"bad patch spec {spec!r}: use one of {', '.join(cls.SPECS)} (P a positive integer, "
                                   "θ a threshold in bits)")

    @property
    def model(self) -> ByteNgramModel | None:
        """The entropy model (``None`` for fixed patches, which need none)."""
        if self.kind == "fixed":
            return None
        if self._model is None:
            self._model = default_model()
        return self._model

    def spans(self, text: bytes | str) -> list[tuple[int, int]]:
        if self.kind == "fixed":
            return fixed_patches(text, int(self.value or 1))
        return patches(text, self.model, threshold=self.value, rule=self.kind)  # the default model if None

    def encode(self, text: bytes | str) -> list[int]:
        return [e - s for s, e in self.spans(text)]

    def __repr__(self) -> str:
        return f"<Patcher {self.name!r}>"

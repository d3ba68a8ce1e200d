"""See inside a tokenizer: fertility, bits per byte, comparisons and vocab accounting.

* :mod:`.metrics`: bytes/token, chars/token, tokens/word, UNK rate (Rust et al.,
  2021) and bits per byte (Gao et al., 2020).
* :mod:`.compare`: tokenizers × texts, with each language's token count as a
  ratio to English on parallel text (Petrov et al., 2023); table, markdown, CSV, JSON and a
  bar chart.
* :mod:`.accounting`: the five "vocab sizes" that are not equal
  and the embedding parameters they cost.
* :mod:`.glitch`: under-trained and unreachable tokens (Rumbelow & Watkins, 2023;
  Land & Bartolo, 2024).
* :mod:`.healing`: prefix stability and token healing (Microsoft Guidance).
* :mod:`.explain`: a tokenization, stage by stage; number splitting and
  indentation costs (Singh & Strouse, 2024).
* :mod:`.offsets`: each token's span in the original text, in code points and
  UTF-8 bytes, through normalization (as HF tokenizers' ``NormalizedString``).
* :mod:`.extend`: extending a vocabulary safely, with a regression report and
  embedding initialisation (Hewitt, 2021).
* :mod:`.exposure`: which control tokens plain text can produce.
* :mod:`.align`: the groups of tokens of two tokenizers that cover the same bytes
  (cross-tokenizer distillation, speculative decoding across vocabularies).
* :mod:`.diff`: what changed between two tokenizers, and whether the ids did.
* :mod:`.residues`: tokens the merges build but encoding rarely emits (LiteToken,
  arXiv 2602.04706), and pruning them with stable ids.
* :mod:`.transplant`: each token of one tokenizer as ids of another (the overlap and
  decompositions that ZeTT and mergekit's tokensurgeon start from).
* :mod:`.canonical`: is a token sequence how its bytes encode, and the next-token
  mask that keeps generation canonical (Geh et al., 2024; Vieira et al., 2024).
* :mod:`.covers`: the token sequences whose bytes cover a byte prefix (Phan et
  al., 2024).
"""

from __future__ import annotations

from .accounting import Accounting, vocab_accounting
from .canonical import CanonicalMask, is_canonical, is_canonical_pair
from .covers import count_covers  # the function is tokenforge.analysis.covers.covers
from .align import AlignedGroup, align, align_spans, align_text
from .diff import DiffReport, LineDiff  # the function is tokenforge.analysis.diff.diff
from .compare import CompareReport, compare, plot, resolve_tokenizer, udhr_sample
from .exposure import Exposure, special_exposure
from .explain import (
    Explanation,
    explain,
    indent_costs,
    merge_trace,
    number_splits,
    render_bytes,
    token_bytes,
)
from .extend import (
    ExtensionError,
    ExtensionReport,
    TextChange,
    extend,
    init_embeddings,
    regression_report,
)
from .glitch import (
    GlitchReport,
    ReachabilityReport,
    TokenReach,
    find_glitch_tokens,
    reachability,
    unreachable_tokens,
)
from .healing import HealResult, TokenIndex, heal, is_prefix_stable, unstable_boundaries
from .metrics import (
    WHITESPACE,
    TextMetrics,
    WordSplitter,
    bits_per_byte,
    bits_per_byte_from_token_nll,
    loss_per_token,
    measure,
    metrics_from_counts,
)
from .offsets import TokenSpan, encode_with_offsets, surrogate_alignment
from .residues import ResidueReport, TokenUse, prune_residues, residues
from .transplant import TransplantEntry, TransplantMap, transplant_map

__all__ = [
    "AlignedGroup",
    "CanonicalMask",
    "count_covers",
    "is_canonical",
    "is_canonical_pair",
    "align",
    "align_spans",
    "align_text",
    "DiffReport",
    "LineDiff",
    "Exposure",
    "special_exposure",
    "Accounting",
    "CompareReport",
    "Explanation",
    "ExtensionError",
    "ExtensionReport",
    "GlitchReport",
    "HealResult",
    "ReachabilityReport",
    "ResidueReport",
    "TokenUse",
    "TransplantEntry",
    "TransplantMap",
    "transplant_map",
    "prune_residues",
    "residues",
    "TextChange",
    "TextMetrics",
    "TokenIndex",
    "TokenReach",
    "TokenSpan",
    "WHITESPACE",
    "WordSplitter",
    "bits_per_byte",
    "bits_per_byte_from_token_nll",
    "compare",
    "encode_with_offsets",
    "explain",
    "extend",
    "find_glitch_tokens",
    "heal",
    "indent_costs",
    "init_embeddings",
    "is_prefix_stable",
    "loss_per_token",
    "measure",
    "merge_trace",
    "metrics_from_counts",
    "number_splits",
    "plot",
    "reachability",
    "regression_report",
    "render_bytes",
    "resolve_tokenizer",
    "surrogate_alignment",
    "token_bytes",
    "udhr_sample",
    "unreachable_tokens",
    "unstable_boundaries",
    "vocab_accounting",
]

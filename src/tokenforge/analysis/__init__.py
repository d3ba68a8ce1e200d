"""See inside a tokenizer: fertility, bits per byte, comparisons and vocab accounting (issue 6).

* :mod:`.metrics`: bytes/token, chars/token, tokens/word, UNK rate (seed 000
  §1.2) and bits per byte (§1.3, D07).
* :mod:`.compare`: tokenizers × texts, with each language's token count as a
  ratio to English on parallel text (seed 003); table, markdown, CSV, JSON and a
  bar chart.
* :mod:`.accounting`: the five "vocab sizes" that are not equal (seed 000 §4.3)
  and the embedding parameters they cost.
* :mod:`.glitch`: under-trained and unreachable tokens (seed 000 §5.3).
* :mod:`.healing`: prefix stability and token healing (seed 000 §5.4, D06).
* :mod:`.explain`: a tokenization, stage by stage; number splitting and
  indentation costs (seed 000 §5.1).
* :mod:`.offsets`: each token's span in the original text, in code points and
  UTF-8 bytes, through normalization (seed 000 §5.6).
* :mod:`.extend`: extending a vocabulary safely, with a regression report and
  embedding initialisation (seed 000 §4.5, D08).
"""

from __future__ import annotations

from .accounting import Accounting, vocab_accounting
from .compare import CompareReport, compare, plot, resolve_tokenizer, udhr_sample
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

__all__ = [
    "Accounting",
    "CompareReport",
    "Explanation",
    "ExtensionError",
    "ExtensionReport",
    "GlitchReport",
    "HealResult",
    "ReachabilityReport",
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

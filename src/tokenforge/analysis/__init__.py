"""See inside a tokenizer: fertility, bits per byte, comparisons and vocab accounting (issue 6).

* :mod:`.metrics`: bytes/token, chars/token, tokens/word, UNK rate (seed 000
  §1.2) and bits per byte (§1.3, D07).
* :mod:`.compare`: tokenizers × texts, with each language's token count as a
  ratio to English on parallel text (seed 003); table, markdown, CSV, JSON and a
  bar chart.
* :mod:`.accounting`: the five "vocab sizes" that are not equal (seed 000 §4.3)
  and the embedding parameters they cost.
* :mod:`.offsets`: each token's span in the original text, in code points and
  UTF-8 bytes, through normalization (seed 000 §5.6).
* :mod:`.extend`: extending a vocabulary safely, with a regression report and
  embedding initialisation (seed 000 §4.5, D08).
"""

from __future__ import annotations

from .accounting import Accounting, vocab_accounting
from .compare import CompareReport, compare, plot, resolve_tokenizer, udhr_sample
from .extend import ExtensionError, ExtensionReport, TextChange, extend, init_embeddings, regression_report
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
    "WHITESPACE",
    "Accounting",
    "CompareReport",
    "ExtensionError",
    "ExtensionReport",
    "TextChange",
    "TokenSpan",
    "TextMetrics",
    "WordSplitter",
    "bits_per_byte",
    "bits_per_byte_from_token_nll",
    "compare",
    "encode_with_offsets",
    "extend",
    "init_embeddings",
    "loss_per_token",
    "measure",
    "metrics_from_counts",
    "plot",
    "regression_report",
    "resolve_tokenizer",
    "surrogate_alignment",
    "udhr_sample",
    "vocab_accounting",
]

"""Build tiktoken.Encoding objects offline from tokenforge's shipped ranks.

tiktoken is a test dependency only: these are the reference objects the
differential tests compare against. They are built from the same rank files
and published patterns, never downloaded.
"""

from __future__ import annotations

from functools import lru_cache

import pytest

tiktoken = pytest.importorskip("tiktoken")

import tokenforge  # noqa: E402


@lru_cache(maxsize=None)
def reference(name: str):
    tok = tokenforge.get_encoding(name)
    return tiktoken.Encoding(
        name=f"ref-{name}",
        pat_str=tok.pattern,
        mergeable_ranks=dict(tok.mergeable_ranks),
        special_tokens=dict(tok.special_tokens),
    )

"""Every tokenizer file in shared/data/vocab × every text in shared/data/text, against
the reference library: whole documents, each line alone, and adversarial strings.

The full run (every line of every file, every document whole) is
``tools/differential_report.py``; here lines are capped per file and documents
over 200 kB are left to the report, so the suite stays quick.
"""

from __future__ import annotations

import pytest

from _differential import ADVERSARIAL, CASES, corpora, read_text, safe, vocab_dir

LINES_PER_FILE = 200
WHOLE_DOC_LIMIT = 200_000


@pytest.fixture(scope="module", params=CASES, ids=[c.name for c in CASES])
def pair(request, shared_data):
    case = request.param
    pytest.importorskip(case.library)
    ours, ref = case.build(vocab_dir(shared_data))
    return case, ours, ref


def test_every_line_matches(pair, shared_data):
    case, ours, ref = pair
    compared = 0
    for path in corpora(shared_data):
        lines = [safe(x, case) for x in read_text(path).splitlines()[:LINES_PER_FILE]]
        got, want = ours(lines), ref(lines)
        for line, a, b in zip(lines, got, want):
            assert a == b, (case.name, path.name, line[:80])
        compared += len(lines)
    assert compared > 2000


def test_whole_documents_match(pair, shared_data):
    case, ours, ref = pair
    docs = [p for p in corpora(shared_data) if p.stat().st_size <= WHOLE_DOC_LIMIT]
    texts = [safe(read_text(p), case) for p in docs]
    for path, a, b in zip(docs, ours(texts), ref(texts)):
        assert a == b, (case.name, path.name)


def test_adversarial_strings_match(pair):
    case, ours, ref = pair
    texts = [safe(t, case) for t in ADVERSARIAL]
    for text, a, b in zip(texts, ours(texts), ref(texts)):
        assert a == b, (case.name, text[:60])

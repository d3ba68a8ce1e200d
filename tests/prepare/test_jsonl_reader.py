"""The native JSON Lines reader agrees with ``json.loads`` on every line it accepts.

``prepare`` and ``count`` read a ``.jsonl`` corpus with the core's one-pass field
reader; lines it cannot prove it reads as ``json.loads`` would go to ``json.loads``.
These tests hold the native side to that contract: on any line, it either gives the
exact string ``json.loads(line)[field]`` gives, or leaves the line to Python; and
it never accepts a line Python would reject.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tokenforge
from tokenforge import _native

core = _native.core()
pytestmark = pytest.mark.skipif(core is None, reason="native core not built")


def python_value(line: bytes, field: str):
    """What json.loads says of the line: the field's string, or None (error / no string)."""
    try:
        obj = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(obj, dict) or not isinstance(obj.get(field), str):
        return None
    return obj[field]


def check_block(block: bytes, field: str = "text") -> list:
    got = core.jsonl_field(block, field.encode())
    lines = [(pos, line) for pos, line in _lines(block) if line.strip()]
    assert len(got) == len(lines)
    for item, (pos, line) in zip(got, lines):
        want = python_value(line, field)
        if type(item) is int:
            assert item == pos  # left to Python, with the line's offset
        else:
            assert want is not None, f"native accepted a line json.loads rejects: {line!r}"
            assert item == want, line
    return got


def _lines(block: bytes):
    pos = 0
    for line in block.split(b"\n"):
        yield pos, line
        pos += len(line) + 1


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=5), kids, max_size=4),
    max_leaves=12,
)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.dictionaries(st.text(max_size=6), json_values, max_size=5), st.text(), st.booleans(), st.booleans())
def test_valid_objects_give_the_field_exactly(obj, text, ascii_only, indent):
    obj = dict(obj)
    obj["text"] = text
    line = json.dumps(obj, ensure_ascii=ascii_only, separators=(", ", ": ") if indent else (",", ":"))
    got = check_block(line.encode("utf-8", "surrogatepass"))
    has_lone_surrogate = any(0xD800 <= ord(c) <= 0xDFFF for c in text)
    if not has_lone_surrogate:
        assert got == [text]  # the common case is the native path, not a fallback


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.binary(max_size=60), st.integers(min_value=0, max_value=40))
def test_mangled_lines_are_never_accepted_wrongly(junk, at):
    base = b'{"id": 3, "text": "caf\\u00e9 \xe2\x82\xac \\ud83d\\ude00", "x": [1, 2.5e-3, null]}'
    at = min(at, len(base))
    for line in (base[:at] + junk + base[at:], base[:at] + base[at + 1 :], junk):
        check_block(line.replace(b"\n", b" "))


@pytest.mark.parametrize(
    "line, native",
    [
        (b'{"text": "a", "text": "b"}', "b"),  # the last key wins, as in a dict
        (b'{"te\\u0078t": "escaped key"}', "escaped key"),
        (b'{"text": "\\ud83d\\ude00\\n\\t\\"\\\\\\/"}', "\U0001F600\n\t\"\\/"),
        (b'  {"text": "x"}  \r', "x"),  # JSON white space around, CR of CRLF files
        (b'{"text": "\\ud83d"}', None),  # lone surrogate: json.loads decides
        (b'\xef\xbb\xbf{"text": "bom"}', None),  # byte-order mark: json.loads decides
        (b'{"text": NaN}', None),
        (b'{"n": -Infinity, "text": "x"}', None),
        (b'{"n": ' + b"1" * 5000 + b', "text": "x"}', None),  # over Python's int-string limit
        (b'{"n": ' + b"[" * 300 + b"]" * 300 + b', "text": "x"}', None),  # deep nesting
        (b'{"text": "\xed\xa0\x80"}', None),  # UTF-8 of a surrogate
        (b'{"text": "\xc0\xaf"}', None),  # overlong UTF-8
        (b'{"text": "tab\there"}', None),  # raw control character
        (b'{"text": "x",}', None),
        (b'{"text": 01}', None),
        (b'["text"]', None),
        (b'{"text": "x"} {}', None),
        (b'{"text": "x"\x0b}', None),  # vertical tab is not JSON white space
    ],
)
def test_edge_lines(line, native):
    got = check_block(line)
    assert got == [native if native is not None else 0]


def test_blank_lines_are_skipped_and_offsets_point_at_lines():
    block = b'\n  \t\n{"text": "a"}\n\x0c\n{"text": 1}\n{"text": "b"}'
    got = core.jsonl_field(block, b"text")
    assert got == ["a", block.index(b'{"text": 1}'), "b"]


def test_prepare_reads_tricky_lines_as_json_does(tmp_path):
    lines = [
        {"text": "plain"},
        {"text": "escaped \n \u00e9 \U0001F600", "meta": {"a": [1, None, True]}},
        {"text": "lone \ud800 surrogate"},
        {"meta": 1, "text": "x", "text2": "y"},
    ]
    p = tmp_path / "c.jsonl"
    with open(p, "w", encoding="utf-8", errors="surrogatepass") as f:
        for obj in lines:
            f.write(json.dumps(obj) + "\n")
        f.write('\ufeff{"text": "after a BOM"}\n'.encode().decode("utf-8"))
    tok = tokenforge.get_encoding("gpt2")
    out = tokenforge.prepare([p], tok, tmp_path / "out", eot="none", show_progress=False)
    ids = tokenforge.open_tokens(tmp_path / "out").ids
    texts = [obj["text"] for obj in lines] + ["after a BOM"]
    want = [i for t in texts for i in tok.encode(t, disallowed_special=())]
    assert list(map(int, ids)) == want
    assert out["splits"]["train"]["documents"] == len(texts)

"""The native rank-file parser returns exactly what the careful Python parser returns,
or hands the file to it (which then names the line and the problem)."""

from __future__ import annotations

import base64

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokenforge import _native
from tokenforge.errors import FileFormatError
from tokenforge.formats.tiktoken import _parse_ranks_checked, parse_ranks

core = _native.core()
needs_core = pytest.mark.skipif(core is None or not hasattr(core, "parse_ranks"), reason="native core not built")


def _python(data: bytes):
    try:
        return _parse_ranks_checked(data, "<test>")
    except FileFormatError:
        return None


def _native_or_none(data: bytes):
    try:
        return core.parse_ranks(data)
    except ValueError:
        return None


@needs_core
def test_native_parse_equals_python_on_shipped_files(shared_data):
    for path in sorted((shared_data / "vocab" / "tiktoken").glob("*.tiktoken")):
        data = path.read_bytes()
        got = core.parse_ranks(data)
        assert got == _parse_ranks_checked(data, path) and list(got) == list(_parse_ranks_checked(data, path))


_line = st.one_of(
    st.tuples(st.binary(min_size=0, max_size=6), st.integers(-3, 40)).map(
        lambda t: base64.b64encode(t[0]) + b" " + str(t[1]).encode()
    ),
    st.binary(max_size=12),
    st.sampled_from([b"", b" ", b"YQ== 1 2", b"YQ==  3", b"YQ=\n", b"YR== 4", b"YQ== +5", b"Y Q== 6", b"YQ==\t7"]),
)


@needs_core
@settings(max_examples=400, deadline=None)
@given(st.lists(_line, max_size=8), st.sampled_from([b"\n", b"\r\n"]), st.booleans())
def test_native_parse_is_never_more_lenient_than_python(lines, sep, trailing):
    data = sep.join(lines) + (sep if trailing else b"")
    native = _native_or_none(data)
    python = _python(data)
    if native is not None:
        assert native == python
    # and the public entry point always agrees with the careful parser
    try:
        public = parse_ranks(data, "<test>")
    except FileFormatError:
        public = None
    assert public == python

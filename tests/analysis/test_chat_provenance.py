"""The string that carries which characters a chat template wrote (``TemplateStr``): every
operation gives the text ``str`` gives, and never marks a character of user text as the
template's own (the one property the injection rule rests on)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("jinja2")

from tokenforge._chat_jinja import TemplateStr, plain, runs, trusted  # noqa: E402

# The template's characters and the user's are drawn from disjoint alphabets, so a character
# marked as the template's must be one of the template's characters.
OWN = "ab<|> \n%s"
USER = "XY«»\t\u2028"
own = st.text(OWN, max_size=6).map(trusted)
user = st.text(USER, max_size=6)
mixed = st.lists(st.one_of(own, user), max_size=4).map(lambda parts: trusted("").join(parts))
any_arg = st.one_of(own, user)


def _check(result, expected) -> None:
    if isinstance(expected, (list, tuple)):
        assert type(result) is type(expected) and len(result) == len(expected)
        for r, e in zip(result, expected):
            _check(r, e)
        return
    assert str.__str__(result) == expected  # the same text as str gives
    for text, is_own in runs(result):
        if is_own:
            assert set(text) <= set(OWN), text


@settings(max_examples=300, deadline=None)
@given(s=mixed, other=any_arg, sep=st.one_of(st.none(), st.text(OWN + USER, min_size=1, max_size=2)),
       n=st.integers(-1, 3), width=st.integers(0, 14), i=st.integers(-8, 8), j=st.integers(-8, 8),
       step=st.sampled_from([None, 1, 2, -1]))
def test_every_operation_keeps_text_and_never_claims_user_characters(s, other, sep, n, width, i, j, step):
    p = str.__str__(s)
    o = str.__str__(other)
    _check(s + other, p + o)
    _check(other + s, o + p)
    _check(s * n, p * n)
    _check(s[i:j:step], p[i:j:step])
    if p:
        _check(s[i % len(p)], p[i % len(p)])
    _check(list(s), list(p))
    _check(s.join([other, s, other]), p.join([o, p, o]))
    _check(other.join([s, s]) if isinstance(other, TemplateStr) else s, o.join([p, p]) if isinstance(other, TemplateStr) else p)
    for chars in (None, o):
        _check(s.strip(chars), p.strip(chars))
        _check(s.lstrip(chars), p.lstrip(chars))
        _check(s.rstrip(chars), p.rstrip(chars))
    _check(s.removeprefix(o), p.removeprefix(o))
    _check(s.removesuffix(o), p.removesuffix(o))
    _check(s.split(sep, n), p.split(sep, n))
    _check(s.rsplit(sep, n), p.rsplit(sep, n))
    _check(s.splitlines(), p.splitlines())
    _check(s.splitlines(True), p.splitlines(True))
    if sep:
        _check(s.partition(sep), p.partition(sep))
        _check(s.rpartition(sep), p.rpartition(sep))
        _check(s.replace(sep, other, n), p.replace(sep, o, n))
    _check(s.replace("", other, n), p.replace("", o, n))
    for method in ("upper", "lower", "casefold", "swapcase", "title", "capitalize"):
        got = getattr(s, method)()
        assert str.__str__(got) == getattr(p, method)()
    for fill in (" ", "a", "X"):
        f = trusted(fill) if fill in OWN else fill
        _check(s.center(width, f), p.center(width, fill))
        _check(s.ljust(width, f), p.ljust(width, fill))
        _check(s.rjust(width, f), p.rjust(width, fill))
    _check(trusted("<|%s|>") % other, "<|%s|>" % o)
    _check(trusted("a%%b%sa%5s%-3sb") % (other, other, s), "a%%b%sa%5s%-3sb" % (o, o, p))
    _check(trusted("<%(k)s>") % {"k": other}, "<%(k)s>" % {"k": o})
    _check(f"{s}", p)


@settings(max_examples=100, deadline=None)
@given(s=own, other=own, sep=st.text(OWN, min_size=1, max_size=2), n=st.integers(-1, 3), width=st.integers(0, 14))
def test_the_template_text_stays_the_template_text(s, other, sep, n, width):
    # what the template builds from its own text only is all its own (control tokens stay controls)
    results = [s + other, s * 2, s[1:], s.join([other, other]), s.strip(), s.split(sep, n), s.replace(sep, other),
               s.partition(sep), s.splitlines(True), s.center(width, trusted("a")), trusted("<%s>") % other,
               s.upper(), other[::-1]]
    for r in results:
        for piece in (r if isinstance(r, (list, tuple)) else [r]):
            assert all(is_own for _, is_own in runs(piece)), (piece, list(runs(piece)))


def test_plain_turns_every_string_of_user_data_into_user_text():
    data = {trusted("k"): [trusted("<|im_start|>"), (trusted("x"), 1)], "n": None}
    out = plain(data)
    assert out == {"k": ["<|im_start|>", ("x", 1)], "n": None}
    assert all(type(k) is str for k in out) and type(out["k"][0]) is str and type(out["k"][1][0]) is str
    assert list(runs(plain(trusted("<|x|>")))) == [("<|x|>", False)]


def test_runs_cut_at_every_change_of_provenance():
    s = trusted("<|im_start|>") + "user<|im_end|>" + trusted("<|im_end|>\n")
    assert list(runs(s)) == [("<|im_start|>", True), ("user<|im_end|>", False), ("<|im_end|>\n", True)]

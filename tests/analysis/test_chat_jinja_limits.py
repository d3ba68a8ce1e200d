"""Hostile Jinja chat templates are bounded (loop iterations and macro calls, the size of what
they build, numbers, wall time: ``tokenforge.limits``), and every way a template can fail is a
``ChatTemplateError`` naming the template line."""

from __future__ import annotations

import pytest

import tokenforge
import tokenforge.limits
from tokenforge.errors import ChatTemplateError, ChatTemplateLimitError, EncodeInputError, TokenforgeError

pytest.importorskip("jinja2")

MSGS = [{"role": "user", "content": "hi"}]


@pytest.fixture(scope="module")
def tok() -> tokenforge.Tokenizer:
    return tokenforge.get_encoding("gpt2")


def _render(tok, template: str, **kw):
    return tok.apply_chat_template(MSGS, chat_template=template, **kw)


@pytest.mark.parametrize("template, limit", [
    # nested loops: 10**10 iterations
    ("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}", "ITERATIONS"),
    # a recursive loop that never ends
    ("{% for x in [1] recursive %}{% if loop.depth < 60 %}{{ loop([1, 2]) }}{% endif %}{% endfor %}", "ITERATIONS"),
    # 2**60 macro calls
    ("{% macro f(n) %}{% if n %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(60) }}", "ITERATIONS"),
    # one allocation of 10**12 characters, or of a list of 10**12 items
    ("{{ 'a' * 10**12 }}", "OUTPUT"),
    ("{{ ([1] * 10**12) | length }}", "OUTPUT"),
    ("{{ 'a'.center(10**12) }}", "OUTPUT"),
    ("{{ 'a' | center(10**12) }}", "OUTPUT"),
    ("{{ 'ab'.ljust(10**12, 'x') }}", "OUTPUT"),
    ("{{ '%1000000000000s' % 'a' }}", "OUTPUT"),
    ("{{ '%*s' | format(10**12, 'a') }}", "OUTPUT"),
    ("{{ '{:>1000000000000}'.format('a') }}", "OUTPUT"),
    ("{{ ('a' * 10**6).replace('', 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb') }}", "OUTPUT"),
    ("{{ ('a' * 10**6) | replace('a', 'b' * 10**3) }}", "OUTPUT"),
    ("{{ ('a\\n' * 10**6) | indent(10**3) }}", "OUTPUT"),
    ("{{ [1] | batch(10**12, 'x') | list }}", "OUTPUT"),
    ("{{ [1] | slice(10**12) | list }}", "OUTPUT"),
    ("{{ messages | tojson(indent=10**12) }}", "OUTPUT"),
    ("{{ ('x' * 10**7).join(['a'] * 10**2) }}", "OUTPUT"),
    ("{{ (['a' * 10**6] * 10**3) | join }}", "OUTPUT"),
    # doubling a string in a loop
    ("{% set ns = namespace(s='ab') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}", "OUTPUT"),
    ("{% set ns = namespace(s='ab') %}{% for i in range(64) %}{% set ns.s = ns.s + ns.s %}{% endfor %}", "OUTPUT"),
    # output
    ("{% for i in range(100) %}{{ 'x' * 10**6 }}{% endfor %}", "OUTPUT"),
    # numbers
    ("{{ 9 ** 999999 }}", "INT_BITS"),
    ("{% set ns = namespace(n=3) %}{% for i in range(40) %}{% set ns.n = ns.n * ns.n %}{% endfor %}", "INT_BITS"),
])
def test_hostile_templates_hit_a_limit(tok, template, limit, monkeypatch):
    monkeypatch.setattr(tokenforge.limits, "MAX_CHAT_TEMPLATE_ITERATIONS", 20_000)  # quicker to reach
    with pytest.raises(ChatTemplateLimitError, match=rf"\(tokenforge\.limits\.MAX_CHAT_TEMPLATE_{limit}\)"):
        _render(tok, template)


def test_the_default_limits_stop_nested_loops(tok):
    with pytest.raises(ChatTemplateLimitError, match=r"1,000,000 loop iterations.*\(line 2 of the chat template\)"):
        _render(tok, "{% for i in range(100000) %}\n{% for j in range(100000) %}{% endfor %}{% endfor %}")


def test_limits_are_read_at_each_render(tok, monkeypatch):
    loop = "{% for i in range(1000) %}{{ i }}{% endfor %}"
    assert _render(tok, loop, tokenize=False).endswith("999")
    monkeypatch.setattr(tokenforge.limits, "MAX_CHAT_TEMPLATE_ITERATIONS", 999)
    with pytest.raises(ChatTemplateLimitError, match="999 loop iterations"):
        _render(tok, loop)
    monkeypatch.setattr(tokenforge.limits, "MAX_CHAT_TEMPLATE_ITERATIONS", 1000)
    monkeypatch.setattr(tokenforge.limits, "MAX_CHAT_TEMPLATE_OUTPUT", 100)
    with pytest.raises(ChatTemplateLimitError, match="MAX_CHAT_TEMPLATE_OUTPUT"):
        _render(tok, loop)
    monkeypatch.setattr(tokenforge.limits, "MAX_CHAT_TEMPLATE_OUTPUT", 1 << 26)
    monkeypatch.setattr(tokenforge.limits, "MAX_CHAT_TEMPLATE_SECONDS", 0.0)  # the first check is past the deadline
    with pytest.raises(ChatTemplateLimitError, match="longer than 0 s.*MAX_CHAT_TEMPLATE_SECONDS"):
        _render(tok, loop)


def test_endless_macro_recursion_is_a_limit_error(tok):
    with pytest.raises(ChatTemplateLimitError, match="deeper than Python allows"):
        _render(tok, "{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}")


@pytest.mark.parametrize("template, message", [
    ("{{ 1 / 0 }}", r"ZeroDivisionError.*line 1"),
    ("\n\n{{ 'a' + 1 }}", r"TypeError.*line 3"),
    ("{{ nothing.here }}", r"'nothing' is undefined.*line 1"),
    ("{{ raise_exception('only user and assistant roles') }}", "only user and assistant roles"),
    ("{{ messages.__class__.__mro__ }}", "failed"),  # the sandbox blocks attribute escapes
    ("{{ 10 ** 5000 }}", "ValueError"),  # Python's limit on printing a number
    ("{{ 10 ** 70000 }}", "MAX_CHAT_TEMPLATE_INT_BITS"),
    ("{% for %}", "not valid Jinja.*line 1"),
    ("{% include 'other.jinja' %}", "failed"),
])
def test_every_failure_is_a_chat_template_error(tok, template, message):
    with pytest.raises(ChatTemplateError, match=message) as info:
        _render(tok, template)
    assert isinstance(info.value, (TokenforgeError, EncodeInputError))


def test_a_template_that_returns_early_is_not_limited(tok):
    # the limits count what runs, not what is written: a loop that breaks at once is one iteration
    template = "{% for i in range(100000) %}{% for j in range(100000) %}{{ i }}{% break %}{% endfor %}{% break %}{% endfor %}"
    assert _render(tok, template, tokenize=False) == "0"

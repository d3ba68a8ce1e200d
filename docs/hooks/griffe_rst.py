"""Griffe extension: show tokenforge's reStructuredText-style docstrings as Markdown.

The docstrings are written for ``help()`` and Sphinx conventions, not Markdown:

* doctest examples (``>>> ...`` and their output) become fenced ``pycon`` blocks, so
  that output such as ``[('Hello', 0, 5)]`` is not read as a Markdown link reference;
* reST simple tables become preformatted text (not Markdown headings);
* Sphinx roles (``:class:`~tokenforge.encoding.Encoding```, ``:func:`load```) become
  inline code with the name as written (the last component after ``~``).

Only the text given to the renderer changes; the source is left alone.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_ROLE = re.compile(r":(?:py:)?(?:class|func|meth|mod|attr|data|exc|obj|const):`(~?)([^`]+)`")


def _role(match: re.Match[str]) -> str:
    tilde, target = match.groups()
    if tilde:
        target = target.rsplit(".", 1)[-1]
    return f"`{target}`"


def _fence_doctests(text: str) -> str:
    lines = text.splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.lstrip()
        if stripped.startswith(">>>"):
            indent = line[: len(line) - len(stripped)]
            block = []
            while i < len(lines) and lines[i].strip() and lines[i].startswith(indent):
                block.append(lines[i][len(indent):])
                i += 1
            if out and out[-1].strip():
                out.append("")
            out.append(f"{indent}```pycon")
            out.extend(f"{indent}{b}" for b in block)
            out.append(f"{indent}```")
            continue
        out.append(line)
        i += 1
    return "\n".join(out)


_TABLE_RULE = re.compile(r"^\s*={2,}(\s+={2,})+\s*$")


def _fence_tables(text: str) -> str:
    """reST simple tables (rows between ``=====  =====`` rules) as preformatted text."""
    lines = text.splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        if _TABLE_RULE.match(lines[i]):
            rules = [j for j in range(i, len(lines)) if _TABLE_RULE.match(lines[j])]
            # a table is: rule, header, rule, rows, rule (or rule, rows, rule)
            end = rules[2] if len(rules) >= 3 and rules[1] - i <= 3 else (rules[1] if len(rules) >= 2 else None)
            if end is not None:
                indent = lines[i][: len(lines[i]) - len(lines[i].lstrip())]
                if out and out[-1].strip():
                    out.append("")
                out.append(f"{indent}```text")
                out.extend(lines[i : end + 1])
                out.append(f"{indent}```")
                i = end + 1
                continue
        out.append(lines[i])
        i += 1
    return "\n".join(out)


def convert(text: str) -> str:
    return _ROLE.sub(_role, _fence_tables(_fence_doctests(text)))


class RstDocstrings(griffe.Extension):
    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = convert(obj.docstring.value)

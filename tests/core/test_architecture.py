"""The package's layering: no import cycles, one native binding, a library without CLI code.

The import graph is built from the source (every ``import`` statement, at module
level or inside a function, except those under ``if TYPE_CHECKING:``), so a cycle
hidden behind a function-level import is caught too.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[2] / "src" / "tokenforge"
CORE = PKG / "_core"


def _module_name(path: Path) -> str:
    rel = path.relative_to(PKG.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    mods = {_module_name(p): p for p in PKG.rglob("*.py")}
    mods["tokenforge._core"] = CORE  # the compiled extension: a leaf
    return mods


def _is_type_checking(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (
        isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST):
    """Import nodes, skipping ``if TYPE_CHECKING:`` bodies."""
    stack = [tree]
    while stack:
        node = stack.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                stack.extend(child.orelse)
                continue
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                yield child
            stack.append(child)


def import_graph() -> dict[str, set[str]]:
    modules = _modules()
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for name, path in modules.items():
        if path.is_dir():
            continue
        is_pkg = path.name == "__init__.py"
        package = name if is_pkg else name.rpartition(".")[0]
        for node in _imports(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                if node.level:
                    base_parts = package.split(".")
                    if node.level > 1:
                        base_parts = base_parts[: len(base_parts) - (node.level - 1)]
                    base = ".".join(base_parts + ([node.module] if node.module else []))
                else:
                    base = node.module or ""
                # ``from pkg import name``: the submodule pkg.name when there is one, else pkg
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
            for t in targets:
                while t and t not in modules:
                    t = t.rpartition(".")[0]
                if t and t != name and t.startswith("tokenforge"):
                    graph[name].add(t)
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(n: str) -> list[str] | None:
        state[n] = 1
        path.append(n)
        for m in sorted(graph[n]):
            if state.get(m) == 1:
                return path[path.index(m):] + [m]
            if m not in state:
                found = visit(m)
                if found:
                    return found
        path.pop()
        state[n] = 2
        return None

    for n in sorted(graph):
        if n not in state:
            found = visit(n)
            if found:
                return found
    return None


def test_the_import_graph_has_no_cycle():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_the_cycle_finder_finds_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_stages_formats_and_models_never_import_the_layers_above_them():
    above = {"tokenforge.cli", "tokenforge.analysis", "tokenforge.io", "tokenforge.presets", "tokenforge.encodings"}
    graph = import_graph()
    for name, deps in graph.items():
        if name.startswith(("tokenforge.models", "tokenforge.normalizers", "tokenforge.pretokenizers",
                            "tokenforge.decoders", "tokenforge.postprocessors", "tokenforge.specials",
                            "tokenforge.tokenizer", "tokenforge._plans")):
            bad = {d for d in deps if d.startswith(tuple(above))}
            assert not bad, f"{name} imports {sorted(bad)}, which sit above it"


def test_one_public_tokenizer_type():
    import tokenforge

    assert not hasattr(tokenforge, "Pipeline")
    types = [n for n in tokenforge.__all__ if isinstance(getattr(tokenforge, n), type)
             and hasattr(getattr(tokenforge, n), "encode_batch_to_numpy")]
    assert types == ["Tokenizer"]


@pytest.mark.skipif(not (CORE / "binding.cpp").exists(), reason="the core has no binding.cpp")
def test_only_the_binding_includes_python_h():
    offenders = [
        p.name for p in sorted(CORE.iterdir())
        if p.suffix in (".h", ".cpp", ".cc") and p.name != "binding.cpp"
        and ("Python.h" in p.read_text(encoding="utf-8") or "PyObject" in p.read_text(encoding="utf-8"))
    ]
    assert offenders == []


def _analysis_offences(path: Path) -> list[str]:
    """What makes an ``analysis`` module CLI code: argparse, the CLI, print(), sys.stdout/stderr, SystemExit."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = []
    for node in ast.walk(tree):
        where = f"{path.name}:{getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == "argparse" or a.name.startswith("argparse."):
                    out.append(f"{where} imports argparse")
                if a.name == "tokenforge.cli" or a.name.startswith("tokenforge.cli."):
                    out.append(f"{where} imports {a.name}")
        elif isinstance(node, ast.ImportFrom):
            mod = node.module or ""
            if node.level == 0 and (mod == "argparse" or mod.startswith("argparse.")):
                out.append(f"{where} imports argparse")
            # absolute tokenforge.cli, or relative ..cli from tokenforge/analysis/
            absolute = mod if node.level == 0 else ("tokenforge." + mod if node.level == 2 else "")
            if absolute == "tokenforge.cli" or absolute.startswith("tokenforge.cli."):
                out.append(f"{where} imports {absolute}")
            if (node.level == 0 and mod == "tokenforge") or (node.level == 2 and not mod):
                if any(a.name == "cli" for a in node.names):
                    out.append(f"{where} imports tokenforge.cli")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print":
            out.append(f"{where} calls print()")
        elif isinstance(node, ast.Name) and node.id == "SystemExit":
            out.append(f"{where} uses SystemExit")
        elif isinstance(node, ast.Attribute) and node.attr == "SystemExit":
            out.append(f"{where} uses SystemExit")
        elif (isinstance(node, ast.Attribute) and node.attr in ("stdout", "stderr")
              and isinstance(node.value, ast.Name) and node.value.id == "sys"):
            out.append(f"{where} writes to sys.{node.attr}")
    return out


def test_analysis_is_a_library():
    files = sorted((PKG / "analysis").glob("*.py"))
    assert files
    offences = [o for f in files for o in _analysis_offences(f)]
    assert offences == [], "analysis/ holds CLI code: " + "; ".join(offences)


def test_the_analysis_check_catches_cli_code(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import argparse\nfrom ..cli import x\nfrom tokenforge import cli\n"
                   "def f():\n    print(1)\n    sys.stdout.write('x')\n    raise SystemExit(2)\n", encoding="utf-8")
    assert len(_analysis_offences(bad)) == 6


def test_formats_are_leaves_that_never_build_a_tokenizer():
    """A format turns bytes into components and back; building the Tokenizer, detecting the
    format and choosing a plan happen above it (tokenforge.io, tokenforge.gguf, presets)."""
    above = ("tokenforge.tokenizer", "tokenforge.io", "tokenforge.presets", "tokenforge.gguf",
             "tokenforge.encodings", "tokenforge.analysis", "tokenforge.cli", "tokenforge._plans",
             "tokenforge.sentencepiece.convert")
    graph = import_graph()
    for name, deps in graph.items():
        if name.startswith("tokenforge.formats"):
            bad = sorted(d for d in deps if d.startswith(above))
            assert not bad, f"{name} imports {bad}"

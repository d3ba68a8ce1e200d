"""The layout of src/tokenforge/_core/: one binding file, plain C++ algorithm units.

Only binding.cpp includes Python.h or touches the CPython API; every other unit is plain
C++17 (bytes and integer ids in), so fuzz/fuzz_native.cc can link it without Python.
"""

import re
from pathlib import Path

CORE = Path(__file__).resolve().parents[2] / "src" / "tokenforge" / "_core"
SOURCES = sorted(p for p in CORE.iterdir() if p.suffix in (".h", ".cpp", ".cc"))
PYTHON_API = re.compile(r"\b(Py[A-Z_]\w*|_Py\w+|PyObject)\b|Python\.h")


def _code(path: Path) -> str:
    """The text of a C++ file without its comments and string literals."""
    text = path.read_text(encoding="utf-8")
    text = re.sub(r"//[^\n]*|/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r'"(?:\\.|[^"\\\n])*"', '""', text)


def test_only_binding_includes_python_h():
    including = [p.name for p in SOURCES if re.search(r"#\s*include\s*[<\"]Python\.h[>\"]", p.read_text(encoding="utf-8"))]
    assert including == ["binding.cpp"]


def test_algorithm_units_do_not_use_the_python_api():
    offenders = {}
    for p in SOURCES:
        if p.name == "binding.cpp":
            continue
        hits = sorted(set(m.group(0) for m in PYTHON_API.finditer(_code(p))))
        if hits:
            offenders[p.name] = hits
    assert offenders == {}


def test_every_unit_is_built():
    setup = (CORE.parents[2] / "setup.py").read_text(encoding="utf-8")
    units = {p.stem for p in SOURCES if p.suffix == ".cpp"}
    listed = set(re.findall(r'^\s*"(\w+)",\s*$', setup[setup.index("UNITS = [") : setup.index("]", setup.index("UNITS = ["))], re.M))
    assert units == listed
    for p in SOURCES:
        if p.suffix == ".cpp" and p.name != "binding.cpp":
            assert (CORE / (p.stem + ".h")).exists(), f"{p.name} has no header"

#!/usr/bin/env bash
# Packaging checks, run by .ci/run and by hand (tools/check_packaging.sh, from anywhere):
#
# 1. sdist -> wheel -> install: build an sdist of this checkout, build a wheel from that
#    sdist (python -m build does both, the wheel from the unpacked sdist, so a file the
#    build needs and MANIFEST.in forgets fails here), check that the wheel ships the
#    compiled core but no C++ sources, install it into a fresh venv and smoke-test it
#    there: native backend, known ids, the command line.
# 2. No compiler: install this checkout into another fresh venv with CC and CXX set to
#    /bin/false, check that the compile really failed and the build fell back with its
#    warning, and smoke-test the pure-Python backend the same way.
#
# Only the runtime dependencies are installed (with --no-deps and the pip cache), never
# the test extras. PYTHON selects the interpreter (default: python3); KEEP=1 keeps the
# work directory (its path is printed) for a look at the logs.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PYTHON="${PYTHON:-python3}"
unset TOKENFORGE_BACKEND  # the smoke tests check the default backend
WORK="$(mktemp -d "${TMPDIR:-/tmp}/tokenforge-packaging.XXXXXX")"
cleanup() {
    local pids
    pids="$(jobs -p)"
    if [ -n "$pids" ]; then kill $pids 2>/dev/null || true; wait 2>/dev/null || true; fi
    if [ "${KEEP:-0}" = 1 ]; then echo "check_packaging: work directory $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

# [project].dependencies of pyproject.toml; `pip check` below fails if this list falls behind.
RUNTIME_DEPS=(regex numpy tqdm)
TEXT='hello world, tokenforge!'
IDS='[15339, 1917, 11, 4037, 25081, 0]'  # cl100k_base, as tiktoken encodes TEXT

START=$SECONDS
step() { echo "check_packaging: [$((SECONDS - START))s] $*"; }
fail() { echo "check_packaging: FAILED: $*" >&2; exit 1; }

# A clean copy of the checkout: no build/, no compiled module, no objects of an earlier
# build that could stand in for a compile that fails.
step "copying the source tree"
mkdir "$WORK/src"
tar -C "$ROOT" --exclude=./.git --exclude='./.venv*' --exclude=./build --exclude=./dist \
    --exclude='*.egg-info' --exclude=__pycache__ --exclude='*.so' --exclude=.hypothesis \
    --exclude=.pytest_cache -cf - . | tar -C "$WORK/src" -xf -

new_venv() {  # new_venv DIR: a fresh venv with tokenforge's runtime dependencies only
    "$PYTHON" -m venv "$1"
    "$1/bin/python" -m pip install --quiet --disable-pip-version-check "${RUNTIME_DEPS[@]}"
}

# The two fresh venvs are made in the background while the wheel compiles.
step "creating two fresh venvs (in the background)"
new_venv "$WORK/venv-wheel" >"$WORK/venv-wheel.log" 2>&1 &
VENV_WHEEL=$!
new_venv "$WORK/venv-nocc" >"$WORK/venv-nocc.log" 2>&1 &
VENV_NOCC=$!

smoke() {  # smoke VENV BACKEND: the installed package works, with that default backend
    local venv="$1" backend="$2"
    # from $WORK, so that nothing of the checkout can be imported instead
    (cd "$WORK" && "$venv/bin/python" - "$backend" "$TEXT" "$IDS" <<'EOF'
import ast
import importlib.util
import sys
from pathlib import Path

import tokenforge
from tokenforge import _native

backend, text, ids = sys.argv[1], sys.argv[2], ast.literal_eval(sys.argv[3])
where = Path(tokenforge.__file__).resolve()
assert where.is_relative_to(Path(sys.prefix).resolve()), f"imported from {where}, not the venv"
assert not (where.parent / "_core").exists(), "the C++ sources were installed"
assert tokenforge.backend() == backend, f"backend() is {tokenforge.backend()!r}, expected {backend!r}"
assert _native.available() == (backend == "native"), _native._IMPORT_ERROR
assert (importlib.util.find_spec("tokenforge._core") is not None) == (backend == "native")
got = tokenforge.get_encoding("cl100k_base").encode(text)
assert got == ids, f"cl100k_base ids {got}, expected {ids}"
EOF
    ) || fail "smoke test in $venv (backend $backend)"
    "$venv/bin/tokenforge" --help >/dev/null || fail "tokenforge --help in $venv"
    (cd "$WORK" && "$venv/bin/python" -m tokenforge --help >/dev/null) || fail "python -m tokenforge --help in $venv"
    "$venv/bin/python" -m pip check --disable-pip-version-check >/dev/null || fail "pip check in $venv (RUNTIME_DEPS out of date?)"
}

# 1. sdist -> wheel -> install
# (from $WORK: in a checkout, a build/ folder of an earlier build would pass for the package)
if (cd "$WORK" && "$PYTHON" -c "import build.__main__") 2>/dev/null; then
    BUILD_PY="$PYTHON"
else
    step "installing build into a tool venv"
    "$PYTHON" -m venv "$WORK/venv-tools"
    "$WORK/venv-tools/bin/python" -m pip install --quiet --disable-pip-version-check build
    BUILD_PY="$WORK/venv-tools/bin/python"
fi
step "building the sdist, then a wheel from it"
# TOKENFORGE_REQUIRE_NATIVE: here a compile error must fail, not fall back
(cd "$WORK" && TOKENFORGE_REQUIRE_NATIVE=1 "$BUILD_PY" -m build --outdir "$WORK/dist" "$WORK/src") >"$WORK/build.log" 2>&1 ||
    { tail -n 40 "$WORK/build.log"; fail "python -m build (log above)"; }
SDIST=("$WORK"/dist/tokenforge-*.tar.gz)
WHEEL=("$WORK"/dist/tokenforge-*.whl)
[ -f "${SDIST[0]}" ] && [ -f "${WHEEL[0]}" ] || fail "python -m build made no sdist or no wheel"
"$PYTHON" - "${SDIST[0]}" "${WHEEL[0]}" <<'EOF' || fail "contents of the sdist or the wheel"
import sys
import tarfile
import zipfile

sdist, wheel = sys.argv[1:]
with tarfile.open(sdist) as tar:
    names = {name.split("/", 1)[1] for name in tar.getnames() if "/" in name}
for needed in ("tools/gen_unicode_tables.py", "tools/ucd/16.0.0/DerivedGeneralCategory.txt",
               "tools/ucd/8.0.0/DerivedGeneralCategory.txt", "src/tokenforge/_core/binding.cpp",
               "src/tokenforge/_core/scan.h"):
    assert needed in names, f"the sdist lacks {needed}"
files = zipfile.ZipFile(wheel).namelist()
sources = [name for name in files if name.endswith((".cpp", ".h", ".cc"))]
assert not sources, f"the wheel ships C++ sources: {sources}"
assert any(name.startswith("tokenforge/_core.") and name.endswith((".so", ".pyd")) for name in files), "no compiled core in the wheel"
for page in ("index.html", "app.js", "app.css"):  # the token page works offline: its files ship
    assert f"tokenforge/web/static/{page}" in files, f"the wheel lacks tokenforge/web/static/{page}"
EOF

step "installing the wheel into a fresh venv"
wait "$VENV_WHEEL" || { cat "$WORK/venv-wheel.log"; fail "creating $WORK/venv-wheel"; }
"$WORK/venv-wheel/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps "${WHEEL[0]}"
step "smoke test of the wheel (native backend)"
smoke "$WORK/venv-wheel" native

# 2. no compiler
step "installing the source tree into a fresh venv with CC=CXX=/bin/false"
wait "$VENV_NOCC" || { cat "$WORK/venv-nocc.log"; fail "creating $WORK/venv-nocc"; }
CC=/bin/false CXX=/bin/false TOKENFORGE_REQUIRE_NATIVE=0 "$WORK/venv-nocc/bin/python" -m pip install -v \
    --disable-pip-version-check --no-deps "$WORK/src" >"$WORK/nocc.log" 2>&1 ||
    { tail -n 40 "$WORK/nocc.log"; fail "the install without a compiler failed (log above)"; }
# the compile was attempted with /bin/false, and the build fell back with one warning naming it
grep -Eq "^ *(/bin/false|\['/bin/false') .*src/tokenforge/_core/[a-z_]+\.cpp" "$WORK/nocc.log" ||
    fail "no compile was attempted with CC=/bin/false (log: $WORK/nocc.log)"
[ "$(grep -c "the native core (tokenforge._core) could not be compiled" "$WORK/nocc.log")" = 1 ] ||
    fail "not exactly one fallback warning in the build output (log: $WORK/nocc.log)"
grep -A1 "the native core (tokenforge._core) could not be compiled" "$WORK/nocc.log" | grep -q "/bin/false" ||
    fail "the fallback warning does not name the failed compiler (log: $WORK/nocc.log)"
step "smoke test without the compiled core (python backend)"
smoke "$WORK/venv-nocc" python

step "all packaging checks passed"

"""Build the native core, tokenforge._core (see src/tokenforge/_core/).

All metadata is in pyproject.toml; this file only declares the C++ extension
and regenerates its Unicode tables first, from the Unicode data pinned in
tools/ucd/ (the versions tiktoken's and HF's regex engines use), so every build
classifies characters the same way. Needs a C++17 compiler and nothing else.

The extension is optional when installing: if it cannot be compiled (no C++
compiler, no Python headers), the build prints a warning and the package is
installed with its pure-Python backend only (same results, slower).
TOKENFORGE_REQUIRE_NATIVE=1 makes such a failure an error instead (CI does that), and
so is a failure of ``python setup.py build_ext --inplace`` (a developer's build).
"""

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.errors import CCompilerError, ExecError, PlatformError

ROOT = Path(__file__).parent
CORE = ROOT / "src" / "tokenforge" / "_core"


# What a missing or broken compiler raises (distutils wraps a compiler that cannot be run,
# or that exits non-zero, in CompileError / LinkError, both CCompilerErrors).
BUILD_ERRORS = (CCompilerError, ExecError, PlatformError)

FALLBACK_WARNING = """
********************************************************************************
WARNING: tokenforge: the native core (tokenforge._core) could not be compiled:
  {error}
tokenforge is installed with its pure-Python backend only: it gives the same
results but is much slower. To get the native backend, install a C++17 compiler
(and the Python development headers) and reinstall tokenforge.
********************************************************************************
"""


class BuildExt(build_ext):
    def run(self):
        # The generator is plain Python shipped in the sdist: its failure is a packaging
        # bug, never a reason to fall back, so it stays an error.
        subprocess.check_call([sys.executable, str(ROOT / "tools" / "gen_unicode_tables.py"), str(CORE / "unicode_tables.h")])
        # Strict: asked for (TOKENFORGE_REQUIRE_NATIVE=1), or ``build_ext --inplace`` run by
        # hand, where a C++ error must not leave an older in-place module in use silently.
        # An editable install (``pip install -e``) also builds in place but may fall back.
        self.require_native = os.environ.get("TOKENFORGE_REQUIRE_NATIVE", "") not in ("", "0") or bool(
            self.inplace and not getattr(self, "editable_mode", False)
        )
        for ext in self.extensions:
            # optional: distutils does not fail on it, nor an editable install copy it back
            ext.optional = not self.require_native
        super().run()

    def build_extension(self, ext):
        try:
            super().build_extension(ext)
        except BUILD_ERRORS as exc:
            if self.require_native:
                raise
            # No stale module from an earlier build in build/ may end up in the wheel.
            if not self.inplace and os.path.exists(self.get_ext_fullpath(ext.name)):
                os.remove(self.get_ext_fullpath(ext.name))
            error = str(exc).strip() or type(exc).__name__
            error = error if len(error) <= 400 else error[:400] + " ..."
            print(FALLBACK_WARNING.format(error=error), file=sys.stderr, flush=True)

    def build_extensions(self):
        # The units are independent translation units: compile them on up to TF_BUILD_JOBS
        # (default: the number of CPUs) threads; distutils would compile them one by one.
        jobs = int(os.environ.get("TF_BUILD_JOBS", "0")) or os.cpu_count() or 1
        compile_one = self.compiler.compile

        def compile_all(sources, output_dir=None, *args, **kwargs):
            # Incremental: a unit whose object is newer than the unit and every header is kept.
            objects = self.compiler.object_filenames(sources, output_dir=output_dir)
            headers = max((os.path.getmtime(h) for h in kwargs.get("depends") or ()), default=0)

            def stale(src, obj):
                return self.force or not os.path.exists(obj) or os.path.getmtime(obj) < max(os.path.getmtime(src), headers)

            todo = [src for src, obj in zip(sources, objects) if stale(src, obj)]
            with ThreadPoolExecutor(max(1, min(jobs, len(todo)))) as pool:
                list(pool.map(lambda src: compile_one([src], output_dir, *args, **kwargs), todo))
            return objects

        self.compiler.compile = compile_all
        super().build_extensions()


# The translation units of the extension: binding.cpp is the one that includes Python.h;
# the others are plain C++ algorithm units (bytes and integer ids in), which
# fuzz/fuzz_native.cc links without Python.
UNITS = [
    "binding",
    "common",
    "scan",
    "bpe",
    "backtrack",
    "core_bpe",
    "pair_bpe",
    "ranks",
    "jsonl",
    "bpe_train",
    "spm_normalizer",
    "spm_bpe",
    "unigram",
    "unigram_train",
    "spm_bpe_train",
    "wordpiece",
    "wordpiece_train",
]

PROFILE = os.environ.get("TOKENFORGE_PROFILE", "") not in ("", "0")

core = Extension(
    "tokenforge._core",
    sources=[f"src/tokenforge/_core/{unit}.cpp" for unit in UNITS],
    depends=[str(p.relative_to(ROOT)) for p in CORE.glob("*.h")],
    include_dirs=["src/tokenforge/_core"],
    language="c++",
    # a release build: optimised, no debug information (Python's own CFLAGS carry -g), symbols
    # stripped at link time on Linux; the fuzz targets build the units with their own flags
    # TOKENFORGE_PROFILE=1 keeps symbols and frame pointers for perf / flame graphs
    extra_compile_args=["-std=c++17", "-O3", "-fvisibility=hidden", "-Wall"]
    + (["-g", "-fno-omit-frame-pointer"] if PROFILE else ["-g0"]),
    extra_link_args=["-Wl,--strip-all"] if sys.platform.startswith("linux") and not PROFILE else [],
)

setup(ext_modules=[core], cmdclass={"build_ext": BuildExt})

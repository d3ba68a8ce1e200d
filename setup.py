"""Build the native core, tokenforge._core (see src/tokenforge/_core/).

All metadata is in pyproject.toml; this file only declares the C++ extension
and regenerates its Unicode tables first, from the Unicode data pinned in
tools/ucd/ (the versions tiktoken's and HF's regex engines use), so every build
classifies characters the same way. Needs a C++17 compiler and nothing else.
"""

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).parent
CORE = ROOT / "src" / "tokenforge" / "_core"


class BuildExt(build_ext):
    def run(self):
        subprocess.check_call([sys.executable, str(ROOT / "tools" / "gen_unicode_tables.py"), str(CORE / "unicode_tables.h")])
        super().run()

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
    "ranks",
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

"""Build the native core, tokenforge._core (see src/tokenforge/_core/).

All metadata is in pyproject.toml; this file only declares the C++ extension
and regenerates its Unicode tables from the ``regex`` module first (a build
requirement), so the scanners classify characters exactly as the regex
fallback does. Needs a C++17 compiler and nothing else.
"""

import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).parent
CORE = ROOT / "src" / "tokenforge" / "_core"


class BuildExt(build_ext):
    def run(self):
        subprocess.check_call([sys.executable, str(ROOT / "tools" / "gen_unicode_tables.py"), str(CORE / "unicode_tables.h")])
        super().run()


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
    "wordpiece_train",
]

core = Extension(
    "tokenforge._core",
    sources=[f"src/tokenforge/_core/{unit}.cpp" for unit in UNITS],
    depends=[str(p.relative_to(ROOT)) for p in CORE.glob("*.h")],
    include_dirs=["src/tokenforge/_core"],
    language="c++",
    extra_compile_args=["-std=c++17", "-O3", "-fvisibility=hidden", "-Wall"],
)

setup(ext_modules=[core], cmdclass={"build_ext": BuildExt})

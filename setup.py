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


core = Extension(
    "tokenforge._core",
    sources=["src/tokenforge/_core/core.cpp", "src/tokenforge/_core/bpe.cpp", "src/tokenforge/_core/backtrack.cpp"],
    depends=[str(p.relative_to(ROOT)) for p in CORE.glob("*.h")],
    include_dirs=["src/tokenforge/_core"],
    language="c++",
    extra_compile_args=["-std=c++17", "-O3", "-fvisibility=hidden", "-Wall"],
)

setup(ext_modules=[core], cmdclass={"build_ext": BuildExt})

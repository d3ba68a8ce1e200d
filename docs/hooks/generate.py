"""MkDocs hook: pages generated at build time from the code and the repository.

* ``reference/cli.md``: the ``--help`` of every ``tokenforge`` subcommand, rendered from
  the argparse parser that the command itself uses (``tokenforge.cli.build_parser``), so the
  page cannot drift from the CLI.
* ``benchmarks.md``: the latest benchmark tables of ``benchmarks/RESULTS.md`` (MkDocs only
  serves files under ``docs/``), with the plots they show.
* ``fuzzing.md``: ``fuzz/README.md``.

Nothing is written into ``docs/``: the pages are virtual files of the build.
"""

from __future__ import annotations

import argparse
import os
import re
from pathlib import Path

from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[2]

# The part of benchmarks/RESULTS.md the site shows: from the top down to (not including)
# the first heading that starts with this text (older runs, kept in the repository).
RESULTS_END = "## Start-up: `import tokenforge`"


def _cli_page() -> str:
    from tokenforge.cli import build_parser

    parser = build_parser()
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    # A fixed width (argparse reads $COLUMNS when it formats), so that the page does not
    # depend on the terminal of the build.
    saved = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "100"
    try:
        return _render(parser, subparsers)
    finally:
        if saved is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = saved


def _render(parser: argparse.ArgumentParser, subparsers: argparse._SubParsersAction) -> str:
    out = [
        "# Command line",
        "",
        "Generated at build time from the argument parser of the `tokenforge` command "
        "(`tokenforge.cli.build_parser()`), so it is exactly what `tokenforge COMMAND --help` prints. "
        "Commands that open a tokenizer take `-t/--tokenizer`: an encoding name (`cl100k_base`), its short form "
        "(`cl100k`), an OpenAI model name (`gpt-4o`), or a tokenizer file or folder. "
        "Errors print one line (`tokenforge: error: ...`) and exit with status 1.",
        "",
        "```text",
        parser.format_help().rstrip(),
        "```",
        "",
    ]
    seen: set[int] = set()
    for name, sub in subparsers.choices.items():
        if id(sub) in seen:  # aliases share a parser
            continue
        seen.add(id(sub))
        out += [f"## tokenforge {name}", "", "```text", sub.format_help().rstrip(), "```", ""]
    return "\n".join(out)


def _benchmarks_page() -> str:
    text = (ROOT / "benchmarks" / "RESULTS.md").read_text(encoding="utf-8")
    end = text.find("\n" + RESULTS_END)
    if end != -1:
        text = text[:end]
    text = text.replace("# Benchmark results", "# Benchmark tables", 1)
    intro = (
        "The most recent runs from `benchmarks/RESULTS.md` in the repository, copied at build time; "
        "the file itself also keeps the older runs. The scripts are in `benchmarks/`; "
        "see [Performance](performance.md) for the summary.\n\n"
    )
    head, _, rest = text.partition("\n")
    # Plots live next to RESULTS.md; they are copied under benchmarks/ in the site.
    rest = re.sub(r"\]\(([\w.-]+\.png)\)", r"](benchmarks/\1)", rest)
    return f"{head}\n\n{intro}{rest}\n"


def _fuzzing_page() -> str:
    return (ROOT / "fuzz" / "README.md").read_text(encoding="utf-8")


def on_files(files: Files, config) -> Files:
    generated = {
        "reference/cli.md": _cli_page(),
        "benchmarks.md": _benchmarks_page(),
        "fuzzing.md": _fuzzing_page(),
    }
    for uri, content in generated.items():
        files.append(File.generated(config, uri, content=content))
    for png in sorted((ROOT / "benchmarks").glob("*.png")):
        files.append(File.generated(config, f"benchmarks/{png.name}", abs_src_path=str(png)))
    return files

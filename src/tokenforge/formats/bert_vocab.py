"""BERT ``vocab.txt``: one WordPiece token per line, its id is the line number
(from 0).

Reading follows HF tokenizers' ``WordPiece::read_file`` exactly, because the
ids must be the ones HF gives for the same file:

- lines end at ``"\\n"``; a final line without a newline counts, an empty
  file end after the last newline does not;
- trailing whitespace is removed from every line (Unicode ``White_Space``,
  as Rust's ``str::trim_end``; this also drops the ``"\\r"`` of CRLF files),
  leading whitespace is kept;
- a token listed twice keeps the id of its *last* line, and the id of the
  earlier line is left unused (``bert-base-chinese`` has 53 duplicated
  lines, so its 21128 lines give 21075 tokens and 53 unused ids);
- a line that is empty after trimming is the token ``""`` (that file has
  one; no word ever encodes to it).

What HF accepts silently but tokenforge refuses, because it only happens in
broken files: bytes that are not UTF-8, NUL bytes, and an empty file. Each
raises :class:`~tokenforge.errors.FileFormatError` naming the file and line.

Writing refuses a vocabulary that could not be read back to the same ids:
holes in the id space, tokens with a line break or trailing whitespace, the
empty token, and one id given twice.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

from .._io import atomic_write, read_bytes
from ..errors import FileFormatError

if TYPE_CHECKING:  # pragma: no cover
    from ..models.wordpiece import WordPiece

#: Characters with the Unicode ``White_Space`` property: what Rust's
#: ``trim_end`` removes. (Python's ``str.isspace`` differs: it also counts
#: U+001C..U+001F, which HF keeps.)
WHITE_SPACE = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)


def load_bert_vocab(path: str | os.PathLike) -> dict[str, int]:
    """``{token: id}`` from a BERT ``vocab.txt``, with HF tokenizers' ids.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "vocab.txt"
    >>> _ = p.write_text("[PAD]\\n[UNK]\\nthe\\n##s\\n")
    >>> load_bert_vocab(p)
    {'[PAD]': 0, '[UNK]': 1, 'the': 2, '##s': 3}
    """
    data = read_bytes(path)
    if not data:
        raise FileFormatError("empty file, expected one token per line", path=path)
    nul = data.find(b"\x00")
    if nul >= 0:
        line = data.count(b"\n", 0, nul) + 1
        raise FileFormatError(
            f"NUL byte at byte {nul}: this looks like a binary file, expected a text vocab.txt "
            "with one token per line",
            path=path,
            line=line,
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise FileFormatError(
            f"not valid UTF-8 at byte {exc.start} ({exc.reason}); expected a text vocab.txt",
            path=path,
            line=line,
        ) from None
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()  # the newline that ends the last line
    vocab: dict[str, int] = {}
    for i, line in enumerate(lines):
        tok = line.rstrip(WHITE_SPACE)
        # a duplicate keeps its last id: delete first so the dict's order
        # stays the id order
        vocab.pop(tok, None)
        vocab[tok] = i
    return vocab


def save_bert_vocab(vocab: Mapping[str, int] | WordPiece, path: str | os.PathLike) -> None:
    """Write ``{token: id}`` as ``vocab.txt`` (one token per line in id order),
    atomically: the old file stays as it was if anything fails.

    ``vocab`` may also be a model with ``get_vocab()`` (a
    :class:`~tokenforge.models.wordpiece.WordPiece`). The ids must be exactly
    ``0 .. len(vocab) - 1`` and every token must read back as itself, else
    :class:`FileFormatError` says which token or id.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "vocab.txt"
    >>> save_bert_vocab({"[UNK]": 0, "a": 1, "##b": 2}, p)
    >>> p.read_text()
    '[UNK]\\na\\n##b\\n'
    """
    if hasattr(vocab, "get_vocab") and not isinstance(vocab, Mapping):
        vocab = vocab.get_vocab()
    by_id: dict[int, str] = {}
    for tok, i in vocab.items():
        if not isinstance(tok, str):
            raise FileFormatError(f"tokens must be str, got {tok!r}", path=path)
        if not isinstance(i, int) or isinstance(i, bool) or i < 0:
            raise FileFormatError(f"token {tok!r} has id {i!r}; ids must be non-negative ints", path=path)
        if i in by_id:
            raise FileFormatError(f"id {i} is given to both {by_id[i]!r} and {tok!r}", path=path)
        if tok == "":
            raise FileFormatError(f"token {i} is empty; vocab.txt cannot hold an empty token", path=path)
        if "\n" in tok:
            raise FileFormatError(
                f"token {i} ({tok!r}) contains a line break; vocab.txt has one token per line", path=path
            )
        if tok != tok.rstrip(WHITE_SPACE):
            raise FileFormatError(
                f"token {i} ({tok!r}) ends with whitespace, which readers of vocab.txt strip", path=path
            )
        by_id[i] = tok
    n = len(by_id)
    if n and max(by_id) != n - 1:
        hole = next(i for i in range(n) if i not in by_id)
        raise FileFormatError(
            f"ids must be 0..{n - 1} without holes to be line numbers; id {hole} has no token "
            f"(largest id is {max(by_id)})",
            path=path,
        )
    with atomic_write(path) as f:
        f.write("".join(by_id[i] + "\n" for i in range(n)))

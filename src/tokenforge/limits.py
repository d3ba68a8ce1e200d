"""The largest inputs tokenforge accepts, checked before anything is allocated for them.

Each limit is far beyond any real tokenizer (the largest public vocabularies have
about 260,000 tokens of at most a few hundred bytes, in files of tens of megabytes),
and each is checked where the input enters, with a :class:`~tokenforge.errors.FileFormatError`
(files) or :class:`~tokenforge.errors.TrainingError` (training settings) that names the
file, the token id and the limit. They are module attributes read at each check, so a
program that really needs more can raise one (``tokenforge.limits.MAX_FILE_BYTES = ...``).

========================  =========================  ==============================================
limit                     value                      where it is checked
========================  =========================  ==============================================
``MAX_FILE_BYTES``        1 GiB                      every tokenizer file a loader reads (its size
                                                     before reading; GGUF files are mapped, not read,
                                                     and only their metadata is parsed)
``MAX_TOKEN_BYTES``       1 MiB (UTF-8 bytes)        every token of every vocabulary, when a model
                                                     is built (from a file or in code), before its
                                                     indexes are
``MAX_VOCAB_SIZE``        2**32 - 1 ids              ids are 32-bit: every loader, every trainer's
                                                     ``vocab_size``
``MAX_JSON_DEPTH``        4000 levels                JSON tokenizer files (deeper nesting would
                                                     overflow the C stack of the JSON parser)
========================  =========================  ==============================================

A Jinja chat template (``Tokenizer.apply_chat_template``) is a program; it runs in
Jinja's sandbox with these limits per render, each raising
:class:`~tokenforge.errors.ChatTemplateLimitError` (naming the limit and the template line):

=================================  =================  ==============================================
limit                              value              what it bounds
=================================  =================  ==============================================
``MAX_CHAT_TEMPLATE_ITERATIONS``   1,000,000          loop iterations (every ``for``, recursive
                                                      loops too) plus macro calls
``MAX_CHAT_TEMPLATE_OUTPUT``       2**26 (67,108,864) characters of the rendered text, and of every
                                                      string or list the template builds (checked
                                                      before ``*``, ``+``, ``%``, ``center``,
                                                      ``replace``, ``join``... allocate)
``MAX_CHAT_TEMPLATE_INT_BITS``     65,536 bits        numbers computed with ``*`` and ``**``
``MAX_CHAT_TEMPLATE_SECONDS``      10.0 s             wall time (checked at every loop iteration,
                                                      call, attribute, operator and output piece)
=================================  =================  ==============================================

Training input has no size limit: trainers stream their files and cut lines longer than
``max_sentence_length`` (sentencepiece's rule), so memory is bounded by the chunk size,
whatever the file. Encoding input has no size limit either, and costs time linear in
its length.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

from .errors import FileFormatError

#: The largest tokenizer file a loader reads, in bytes.
MAX_FILE_BYTES = 1 << 30
#: The longest token a vocabulary may hold, in bytes (UTF-8 for text tokens).
MAX_TOKEN_BYTES = 1 << 20
#: Ids are 32-bit: the most ids a vocabulary can have.
MAX_VOCAB_SIZE = 2**32 - 1
#: The deepest nesting of a JSON tokenizer file.
MAX_JSON_DEPTH = 4000
#: Loop iterations plus macro calls in one render of a chat template.
MAX_CHAT_TEMPLATE_ITERATIONS = 1_000_000
#: Characters (or list items) of a chat template's output and of anything it builds.
MAX_CHAT_TEMPLATE_OUTPUT = 1 << 26
#: Bits of a number a chat template computes with ``*`` or ``**``.
MAX_CHAT_TEMPLATE_INT_BITS = 1 << 16
#: Wall time of one render of a chat template, in seconds.
MAX_CHAT_TEMPLATE_SECONDS = 10.0


def _size(n: int) -> str:
    return f"{n:,} bytes"


def check_file_size(size: int, path: object) -> None:
    """Refuse a tokenizer file larger than :data:`MAX_FILE_BYTES` (before reading it)."""
    if size > MAX_FILE_BYTES:
        raise FileFormatError(
            f"the file is {_size(size)}; the largest tokenizer file tokenforge reads is "
            f"{_size(MAX_FILE_BYTES)} (tokenforge.limits.MAX_FILE_BYTES)",
            path=path,
        )


def check_token_sizes(tokens: Collection[bytes | str], ids: Iterable[int] | None = None) -> None:
    """Refuse a vocabulary with a token longer than :data:`MAX_TOKEN_BYTES`, naming its id.

    ``ids`` runs parallel to ``tokens`` (default: positions). A text token is measured in
    UTF-8 bytes; as a character is at most 4 of them, the check costs one ``len`` per
    token unless some token has more than ``MAX_TOKEN_BYTES // 4`` characters."""
    limit = MAX_TOKEN_BYTES
    if not tokens or max(map(len, tokens)) <= limit // 4:
        return
    for i, tok in zip(range(len(tokens)) if ids is None else ids, tokens):
        n = len(tok.encode("utf-8", "surrogatepass")) if isinstance(tok, str) and len(tok) > limit // 4 else len(tok)
        if n > limit:
            raise FileFormatError(
                f"token id {i} is {_size(n)} long; the longest token tokenforge accepts is "
                f"{_size(limit)} (tokenforge.limits.MAX_TOKEN_BYTES)"
            )

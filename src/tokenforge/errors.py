"""The one exception family of tokenforge.

Every error tokenforge raises is a :class:`TokenforgeError`. The subclasses
also derive from the built-in exception a Python user would expect
(``ValueError``, ``TypeError``, ``KeyError``, ``OSError``), so code written
against tiktoken's ``ValueError`` on disallowed special tokens keeps working.
Messages say what was expected, what was found, and where: the file and line,
the token, or the id.
"""

from __future__ import annotations


class TokenforgeError(Exception):
    """Base class of every tokenforge error."""


class FileFormatError(TokenforgeError, ValueError):
    """A tokenizer file is malformed. The message names the file and, where it
    applies, the line or JSON field."""

    def __init__(self, message: str, *, path: object = None, line: int | None = None):
        where = ""
        if path is not None:
            where = f"{path}"
            if line is not None:
                where += f", line {line}"
            where += ": "
        super().__init__(where + message)
        self.path = path
        self.line = line


class TokenizerFileNotFoundError(TokenforgeError, FileNotFoundError):
    """A file that was asked for does not exist or cannot be read."""


class SpecialTokenError(TokenforgeError, ValueError):
    """Special-token policy violated: a disallowed special-token string was found
    in text, a special token is duplicated, or an unknown special was named."""


class UnknownIdError(TokenforgeError, KeyError):
    """An id that is not in the vocabulary was passed to a decoder."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0]) if self.args else ""


class UnknownTokenError(TokenforgeError, KeyError):
    """A token string or byte string that is not in the vocabulary."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class ArgumentTypeError(TokenforgeError, TypeError):
    """An argument has the wrong type (a stage that is not a tokenforge stage, a
    string where a list of strings is expected)."""


class EncodeInputError(ArgumentTypeError):
    """Something other than ``str`` was passed where text was expected."""


class InvalidArgumentError(TokenforgeError, ValueError):
    """An argument has the right type but a value outside what the call accepts
    (a thread count of 0, an unknown dtype or format name, a probability above 1)."""


class InvalidSpanError(InvalidArgumentError, IndexError):
    """A ``(start, end)`` span that lies outside the text it indexes."""


class MissingDependencyError(TokenforgeError, ImportError):
    """An optional dependency (``tiktoken``, ``tokenizers``, ``numpy``) or the native
    core is needed for the call but is not installed."""


class DecodeError(TokenforgeError, UnicodeError):
    """Token bytes are not valid UTF-8 and ``errors="strict"`` was asked for."""


class TrainingError(TokenforgeError, ValueError):
    """Training settings or training input are invalid."""


class UnknownEncodingError(TokenforgeError, ValueError):
    """A named encoding or pattern is not known."""


class UnknownModelError(UnknownEncodingError, KeyError):
    """A model name maps to no known encoding (a ``KeyError``, as in tiktoken)."""

    def __str__(self) -> str:  # KeyError would show the message's repr
        return str(self.args[0]) if self.args else ""


class SaveError(TokenforgeError, OSError):
    """A tokenizer file cannot be written (the message names the file and the reason;
    the file that was there before is left as it was)."""


class OutputExistsError(SaveError, FileExistsError):
    """Writing would replace an existing tokenizer file and overwriting was not asked for
    (``overwrite=True``, ``--overwrite``). The message names the file; nothing is written."""


class PrepareError(TokenforgeError, OSError):
    """Preparing a corpus failed: a shard or checkpoint cannot be written, or an
    interrupted run cannot be resumed as asked. The message names the file."""


class ChatTemplateError(EncodeInputError, ValueError):
    """A Jinja chat template cannot be rendered: it is not valid Jinja, it called
    ``raise_exception``, or it failed on these messages. The message names the
    template line where one is known. (Also an :class:`EncodeInputError`, as before.)"""


class ChatTemplateLimitError(ChatTemplateError):
    """A chat template went past a limit of :mod:`tokenforge.limits`: loop iterations
    and macro calls, the size of what it builds, or wall time."""

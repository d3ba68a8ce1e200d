"""``sentencepiece.convert_to_flatbuffer``: a ``.model`` as the lite runtime's ``.spm.fb``."""

from __future__ import annotations

import os
from typing import Any

from ..._io import atomic_write, read_bytes
from ...errors import ArgumentTypeError, FileFormatError, InvalidArgumentError, TokenforgeError
from ...sentencepiece.flatbuffer import to_flatbuffer
from ...sentencepiece.proto import ModelProto, _Reader


class ModelFileError(TokenforgeError, RuntimeError):
    """A model file that cannot be read or parsed, or an output file that cannot be
    written (sentencepiece raises ``RuntimeError``)."""


def _parse(data: bytes, path: object) -> ModelProto:
    return ModelProto._decode(_Reader(data, path), 0, len(data), "")


def ConvertToFlatbuffer(
    model_file: Any = None,
    model_proto: Any = None,
    serialized_model_proto: Any = None,
    output_file: Any = None,
    skip_char_bigrams: bool = False,
    treat_null_byte_as_unused: bool = False,
    allow_unsupported_model_type: bool = False,
) -> bytes | None:
    """Convert a model (exactly one of ``model_file``, ``model_proto`` -- a ``ModelProto``
    or its bytes -- and ``serialized_model_proto``) to sentencepiece's FlatBuffers model
    (``.spm.fb``, the format of its lite runtime), byte for byte as sentencepiece 0.2.3 does.

    Returns the bytes, or writes them to ``output_file`` and returns ``None``.
    ``skip_char_bigrams`` leaves the character-bigram trie out of a Unigram model (smaller,
    without the runtime's pre-tokenization at safe boundaries; BPE keeps it).
    ``treat_null_byte_as_unused`` turns a ``"\\0"`` piece of a byte-fallback model into an
    UNUSED ``<unused_ID>`` instead of refusing it. WORD and CHAR models raise ``ValueError``
    unless ``allow_unsupported_model_type`` (the lite runtime runs them as Unigram).
    """
    if sum(x is not None for x in (model_file, model_proto, serialized_model_proto)) != 1:
        raise InvalidArgumentError(
            "Exactly one of model_file, model_proto, or serialized_model_proto must be specified.")
    out_path = ""
    if output_file is not None:
        out_path = os.fsdecode(os.fspath(output_file))
        if not out_path:
            raise InvalidArgumentError("output_file must not be empty.")
    if model_file is not None:
        path = os.fsdecode(os.fspath(model_file))
        if not path:
            raise InvalidArgumentError("model_file must not be empty.")
        try:
            proto = _parse(read_bytes(path), path)
        except FileFormatError as e:
            raise ModelFileError(f"could not parse ModelProto from {path}: {e}") from None
        except OSError as e:
            raise ModelFileError(f"{path}: {e}") from None
    elif model_proto is not None and isinstance(model_proto, ModelProto):
        proto = model_proto
    else:
        if model_proto is not None:
            if hasattr(model_proto, "SerializeToString"):
                serialized = model_proto.SerializeToString()
            elif isinstance(model_proto, bytes):
                serialized = model_proto
            else:
                raise ArgumentTypeError("model_proto must be a ModelProto object or bytes.")
        else:
            if not isinstance(serialized_model_proto, bytes):
                raise ArgumentTypeError("serialized_model_proto must be bytes.")
            serialized = serialized_model_proto
        try:
            proto = _parse(serialized, None)
        except FileFormatError as e:
            raise InvalidArgumentError(f"Failed to parse ModelProto from serialized bytes: {e}") from None
    fb = to_flatbuffer(proto, skip_char_bigrams=bool(skip_char_bigrams),
                       treat_null_byte_as_unused=bool(treat_null_byte_as_unused),
                       allow_unsupported_model_type=bool(allow_unsupported_model_type))
    if not out_path:
        return fb
    try:
        with atomic_write(out_path, "wb") as f:
            f.write(fb)
    except OSError as e:
        raise ModelFileError(f"Failed to write FlatBuffer model to {out_path}: {e}") from None
    return None


convert_to_flatbuffer = ConvertToFlatbuffer

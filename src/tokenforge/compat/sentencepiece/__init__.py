"""sentencepiece's Python API on tokenforge: ``import tokenforge.compat.sentencepiece as spm``.

>>> import tokenforge.compat.sentencepiece as spm                          # doctest: +SKIP
>>> sp = spm.SentencePieceProcessor(model_file="tokenizer.model")          # doctest: +SKIP
>>> sp.encode("Hello world", add_bos=True)                                 # doctest: +SKIP
[1, 15043, 3186]
>>> spm.SentencePieceTrainer.train(input="corpus.txt", model_prefix="m",  # doctest: +SKIP
...                                vocab_size=8000, model_type="unigram")

Code written for ``import sentencepiece as spm`` (version 0.2.x) keeps working:

* :class:`SentencePieceProcessor` gives the same ids, pieces, offsets, protos
  and decoded text as the ``sentencepiece`` library on the same ``.model`` file:
  ``encode`` with ``return_type`` (or ``out_type``) ``int``, ``str``, ``bytes``,
  ``'serialized_proto'``, ``'proto'`` and ``'offset_mapping'``; ``add_bos``,
  ``add_eos``, ``reverse``, ``emit_unk_piece``; sampling (``enable_sampling``,
  ``nbest_size``, ``alpha``: Unigram sampling, BPE-dropout); ``nbest_encode``,
  ``parallel_encode``, ``decode`` of ids or pieces (or batches of them), the
  lookups (``piece_to_id``, ``id_to_piece``, ``get_score``, ``is_control``, ...),
  ``normalize``, pickling; CamelCase and snake_case spellings alike.
* :class:`SentencePieceTrainer` maps ``train(...)`` (keyword arguments or the
  ``"--flag=value"`` string) onto tokenforge's Unigram and SentencePiece-BPE
  trainers, and builds CHAR and WORD models; it writes ``<model_prefix>.model``
  and ``.vocab``, or hands the model to ``model_writer``.
* :class:`SentencePieceNormalizer` runs a model's normalizer (or a named rule)
  alone, with offsets.
* ``convert_to_flatbuffer`` (``ConvertToFlatbuffer``) writes a model as the
  FlatBuffers ``.spm.fb`` of sentencepiece's lite runtime, the same bytes as
  sentencepiece.
* ``sentencepiece_pb2`` / ``sentencepiece_model_pb2``: the protobuf classes,
  when ``protobuf`` is installed (as in sentencepiece).

Errors are :class:`~tokenforge.errors.TokenforgeError` subclasses that are
also the builtin sentencepiece raises (``ValueError``, ``IndexError``,
``TypeError``, ``RuntimeError``), so ``except`` clauses keep working.
"""

from __future__ import annotations

import importlib
import os
import re
from typing import Any

from ...errors import ArgumentTypeError, InvalidArgumentError
from ...sentencepiece.proto import ModelProto
from ._flatbuffer import ConvertToFlatbuffer, convert_to_flatbuffer
from ._normalizer import SentencePieceNormalizer
from ._processor import RNG, SETTINGS, Processor, ThreadPool
from ._train import SentencePieceTrainer

#: The sentencepiece release whose Python API this module follows.
__version__ = "0.2.3"

__all__ = [
    "SentencePieceNormalizer", "SentencePieceProcessor", "SentencePieceTrainer", "ThreadPool",
    "ConvertToFlatbuffer", "SetDataDir", "SetMinLogLevel", "SetNBestTimeout", "SetRandomGeneratorSeed",
    "convert_to_flatbuffer",
    "set_data_dir", "set_min_log_level", "set_nbest_timeout", "set_random_generator_seed",
]

_RETURN_TYPES = (int, str, bytes, "proto", "serialized_proto", "offset_mapping")


def __getattr__(name: str) -> Any:
    # ``from sentencepiece import sentencepiece_pb2``: imported on first use (it needs protobuf).
    if name in ("sentencepiece_pb2", "sentencepiece_model_pb2"):
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def SetRandomGeneratorSeed(seed: int) -> None:
    """Seed the generator that sampling (``enable_sampling=True``) draws from."""
    RNG.seed(int(seed))


def SetMinLogLevel(level: int) -> None:
    """sentencepiece's log threshold; tokenforge logs nothing, so it is only recorded."""
    SETTINGS["min_log_level"] = int(level)


def SetNBestTimeout(timeout_ms: int) -> None:
    """Stop an n-best search after ``timeout_ms`` milliseconds and answer with the best
    segmentation alone (0: no limit; sentencepiece's default is 30000)."""
    SETTINGS["nbest_timeout_ms"] = int(timeout_ms)


def SetDataDir(data_dir: str) -> None:
    """sentencepiece's data folder (for its named rules); tokenforge ships its rules, so it is only recorded."""
    SETTINGS["data_dir"] = os.fspath(data_dir)


set_random_generator_seed = SetRandomGeneratorSeed
set_min_log_level = SetMinLogLevel
set_nbest_timeout = SetNBestTimeout
set_data_dir = SetDataDir


def _is_sequence(x: Any) -> bool:
    return hasattr(x, "__len__") and not isinstance(x, (str, bytes))


def _resolve_return_type(return_type: Any, out_type: Any, default: Any) -> Any:
    if out_type is not None:
        if return_type is not None:
            raise InvalidArgumentError("give return_type or its older name out_type, not both")
        return_type = out_type
    if return_type is None:
        return_type = default
    if return_type == "immutable_proto":
        raise InvalidArgumentError("return_type='immutable_proto' is gone from sentencepiece 0.2.3; use 'proto'")
    if not any(return_type is t or (isinstance(t, str) and return_type == t) for t in _RETURN_TYPES):
        raise InvalidArgumentError(f"return_type must be one of int, str, bytes, 'proto', 'serialized_proto', "
                                   f"'offset_mapping'; got {return_type!r}")
    return return_type


def _text_message(serialized: bytes, nbest: bool = False) -> Any:
    from . import sentencepiece_pb2 as pb

    msg = pb.NBestSentencePieceText() if nbest else pb.SentencePieceText()
    msg.ParseFromString(serialized)
    return msg


class SentencePieceProcessor:
    """A loaded ``.model`` with sentencepiece's Python API (see the module docstring).

    The constructor's options are the defaults of every later call.
    """

    def __init__(
        self,
        model_file: str | os.PathLike[str] | None = None,
        model_proto: bytes | None = None,
        out_type: Any = None,
        add_bos: bool = False,
        add_eos: bool = False,
        reverse: bool = False,
        emit_unk_piece: bool = False,
        enable_sampling: bool = False,
        nbest_size: int = -1,
        alpha: float = 0.1,
        num_threads: int = -1,
        return_type: Any = None,
    ) -> None:
        self._processor = Processor()
        self._return_type = _resolve_return_type(return_type, out_type, int)
        self._add_bos = add_bos
        self._add_eos = add_eos
        self._reverse = reverse
        self._emit_unk_piece = emit_unk_piece
        self._enable_sampling = enable_sampling
        self._nbest_size = nbest_size
        self._alpha = alpha
        self._num_threads = num_threads
        if model_file or model_proto:
            self.Load(model_file=model_file, model_proto=model_proto)

    @classmethod
    def from_file(cls, model_file: str | os.PathLike[str], **kwargs: Any) -> SentencePieceProcessor:
        """A processor of the ``.model`` file at ``model_file``; ``kwargs`` are the constructor's options."""
        if "model_file" in kwargs or "model_proto" in kwargs:
            raise InvalidArgumentError("from_file takes the model as its first argument, not model_file=/model_proto=")
        sp = cls(**kwargs)
        sp.LoadFromFile(model_file)
        return sp

    @classmethod
    def from_proto(cls, model_proto: bytes, **kwargs: Any) -> SentencePieceProcessor:
        """A processor of a serialized ``.model``; ``kwargs`` are the constructor's options."""
        if "model_file" in kwargs or "model_proto" in kwargs:
            raise InvalidArgumentError("from_proto takes the model as its first argument, not model_file=/model_proto=")
        sp = cls(**kwargs)
        sp.LoadFromSerializedProto(model_proto)
        return sp

    # ------------------------------------------------------------------ loading
    def Load(self, model_file: str | os.PathLike[str] | None = None, model_proto: bytes | None = None) -> bool:
        """Load a ``.model`` file, or its serialized bytes (exactly one of the two)."""
        if model_file and model_proto:
            raise InvalidArgumentError("give model_file= or model_proto=, not both")
        if model_proto:
            return self.LoadFromSerializedProto(model_proto)
        if model_file:
            return self.LoadFromFile(model_file)
        raise InvalidArgumentError("give model_file= or model_proto=")

    def LoadFromFile(self, filename: str | os.PathLike[str]) -> bool:
        return self._processor.LoadFromFile(filename)

    def LoadFromSerializedProto(self, serialized: Any) -> bool:
        if hasattr(serialized, "SerializeToString"):
            serialized = serialized.SerializeToString()
        return self._processor.LoadFromSerializedProto(serialized)

    @property
    def tokenizer(self) -> Any:
        """The :class:`tokenforge.Tokenizer` behind this processor."""
        return self._processor.tokenizer

    @property
    def model_proto(self) -> ModelProto:
        """The loaded model as tokenforge's parsed ``ModelProto``."""
        self._processor.tokenizer
        return self._processor._proto

    # ----------------------------------------------------------------- encoding
    def _opt(self, value: Any, name: str) -> Any:
        return getattr(self, "_" + name) if value is None else value

    def Encode(
        self,
        input: Any,
        add_bos: bool | None = None,
        add_eos: bool | None = None,
        reverse: bool | None = None,
        emit_unk_piece: bool | None = None,
        enable_sampling: bool | None = None,
        nbest_size: int | None = None,
        alpha: float | None = None,
        num_threads: int | None = None,
        thread_pool: ThreadPool | None = None,
        return_type: Any = None,
        out_type: Any = None,
        return_bytes: bool | None = None,
    ) -> Any:
        """Ids (``return_type=int``, the default), pieces (``str``/``bytes``), a ``SentencePieceText``
        (``'proto'``, ``'serialized_proto'``) or ``{"ids", "pieces", "offsets"}`` (``'offset_mapping'``)
        of a text, or a list of them for a list of texts."""
        rt = _resolve_return_type(return_type, out_type, self._return_type)
        if return_bytes is not None and rt != "offset_mapping":
            raise InvalidArgumentError("return_bytes= goes with return_type='offset_mapping' only")
        add_bos = self._opt(add_bos, "add_bos")
        add_eos = self._opt(add_eos, "add_eos")
        reverse = self._opt(reverse, "reverse")
        emit_unk_piece = self._opt(emit_unk_piece, "emit_unk_piece")
        enable_sampling = self._opt(enable_sampling, "enable_sampling")
        nbest_size = self._opt(nbest_size, "nbest_size")
        alpha = self._opt(alpha, "alpha")
        num_threads = self._opt(num_threads, "num_threads")
        if enable_sampling is True and (nbest_size in (None, 0, 1) or alpha is None):
            raise InvalidArgumentError("enable_sampling=True needs nbest_size > 1 or nbest_size=-1 (all "
                                       "segmentations), and alpha")
        if not isinstance(num_threads, int):
            raise ArgumentTypeError("num_threads must be int")
        p = self._processor
        batch = isinstance(input, list)
        head: list[Any] = [input, num_threads, thread_pool] if batch else [input]
        args = head + [enable_sampling, nbest_size, alpha, add_bos, add_eos, reverse]
        suffix = "Batch" if batch else ""
        if rt is int:
            return getattr(p, "_EncodeAsIds" + suffix)(*args)
        if rt is str or rt is bytes:
            return getattr(p, "_EncodeAsPieces" + suffix)(*args, emit_unk_piece, rt is bytes)
        if rt == "offset_mapping":
            if return_bytes is None:
                return_bytes = isinstance(input, bytes) or bool(batch and input and isinstance(input[0], bytes))
            return getattr(p, "_EncodeAsOffsetMapping" + suffix)(*args, emit_unk_piece, bool(return_bytes))
        raw = getattr(p, "_EncodeAsSerializedProto" + suffix)(*args, emit_unk_piece)
        if rt == "proto":
            return [_text_message(r) for r in raw] if batch else _text_message(raw)
        return raw

    def EncodeAsPieces(self, input: Any, **kwargs: Any) -> Any:
        return self.Encode(input=input, return_type=str, **kwargs)

    def EncodeAsIds(self, input: Any, **kwargs: Any) -> Any:
        return self.Encode(input=input, return_type=int, **kwargs)

    def EncodeAsProto(self, input: Any, **kwargs: Any) -> Any:
        return self.Encode(input=input, return_type="proto", **kwargs)

    def EncodeAsSerializedProto(self, input: Any, **kwargs: Any) -> Any:
        return self.Encode(input=input, return_type="serialized_proto", **kwargs)

    def EncodeAsOffsetMapping(self, input: Any, **kwargs: Any) -> Any:
        return self.Encode(input=input, return_type="offset_mapping", **kwargs)

    def _sample(self, input: Any, nbest_size: int | None, alpha: float | None, rt: Any, kwargs: Any) -> Any:
        return self.Encode(input=input, nbest_size=nbest_size, alpha=alpha, return_type=rt, enable_sampling=True,
                           **kwargs)

    def SampleEncodeAsPieces(self, input: Any, nbest_size: int | None = None, alpha: float | None = None,
                             **kwargs: Any) -> Any:
        return self._sample(input, nbest_size, alpha, str, kwargs)

    def SampleEncodeAsIds(self, input: Any, nbest_size: int | None = None, alpha: float | None = None,
                          **kwargs: Any) -> Any:
        return self._sample(input, nbest_size, alpha, int, kwargs)

    def SampleEncodeAsProto(self, input: Any, nbest_size: int | None = None, alpha: float | None = None,
                            **kwargs: Any) -> Any:
        return self._sample(input, nbest_size, alpha, "proto", kwargs)

    def SampleEncodeAsSerializedProto(self, input: Any, nbest_size: int | None = None, alpha: float | None = None,
                                      **kwargs: Any) -> Any:
        return self._sample(input, nbest_size, alpha, "serialized_proto", kwargs)

    def NBestEncode(
        self,
        input: Any,
        add_bos: bool | None = None,
        add_eos: bool | None = None,
        reverse: bool | None = None,
        emit_unk_piece: bool | None = None,
        nbest_size: int | None = None,
        return_type: Any = None,
        out_type: Any = None,
    ) -> Any:
        """The ``nbest_size`` best segmentations (Unigram models), best first."""
        rt = _resolve_return_type(return_type, out_type, self._return_type)
        add_bos = self._opt(add_bos, "add_bos")
        add_eos = self._opt(add_eos, "add_eos")
        reverse = self._opt(reverse, "reverse")
        emit_unk_piece = self._opt(emit_unk_piece, "emit_unk_piece")
        n = self._opt(nbest_size, "nbest_size")
        n = max(1, n)
        p = self._processor

        def one(text: Any) -> Any:
            if rt is int:
                return p._NBestEncodeAsIds(text, n, add_bos, add_eos, reverse)
            if rt is str or rt is bytes:
                return p._NBestEncodeAsPieces(text, n, add_bos, add_eos, reverse, emit_unk_piece, rt is bytes)
            if rt == "offset_mapping":
                raise InvalidArgumentError("nbest_encode has no return_type='offset_mapping'")
            raw = p._NBestEncodeAsSerializedProto(text, n, add_bos, add_eos, reverse, emit_unk_piece)
            return _text_message(raw, nbest=True) if rt == "proto" else raw

        return [one(t) for t in input] if isinstance(input, list) else one(input)

    def NBestEncodeAsPieces(self, input: Any, nbest_size: int | None = None, **kwargs: Any) -> Any:
        return self.NBestEncode(input=input, nbest_size=nbest_size, return_type=str, **kwargs)

    def NBestEncodeAsIds(self, input: Any, nbest_size: int | None = None, **kwargs: Any) -> Any:
        return self.NBestEncode(input=input, nbest_size=nbest_size, return_type=int, **kwargs)

    def NBestEncodeAsProto(self, input: Any, nbest_size: int | None = None, **kwargs: Any) -> Any:
        return self.NBestEncode(input=input, nbest_size=nbest_size, return_type="proto", **kwargs)

    def NBestEncodeAsSerializedProto(self, input: Any, nbest_size: int | None = None, **kwargs: Any) -> Any:
        return self.NBestEncode(input=input, nbest_size=nbest_size, return_type="serialized_proto", **kwargs)

    def ParallelEncode(
        self,
        input: Any,
        add_bos: bool | None = None,
        add_eos: bool | None = None,
        reverse: bool | None = None,
        emit_unk_piece: bool | None = None,
        chunk_len: int | None = None,
        num_threads: int | None = None,
        thread_pool: ThreadPool | None = None,
        return_type: Any = None,
        out_type: Any = None,
    ) -> Any:
        """``encode`` of a long text, the same result as one call (sentencepiece cuts it into
        ``chunk_len`` pieces for threads; tokenforge's result does not depend on it)."""
        rt = _resolve_return_type(return_type, out_type, self._return_type)
        add_bos = self._opt(add_bos, "add_bos")
        add_eos = self._opt(add_eos, "add_eos")
        reverse = self._opt(reverse, "reverse")
        emit_unk_piece = self._opt(emit_unk_piece, "emit_unk_piece")
        num_threads = self._opt(num_threads, "num_threads")
        if not isinstance(num_threads, int):
            raise ArgumentTypeError("num_threads must be int")
        if not isinstance(chunk_len, int) or isinstance(chunk_len, bool) or chunk_len <= 0:
            raise InvalidArgumentError(f"chunk_len must be a positive int, got {chunk_len!r}")
        if rt == "offset_mapping":
            raise InvalidArgumentError("parallel_encode has no return_type='offset_mapping'")

        def one(text: Any) -> Any:
            return self.Encode(text, add_bos=add_bos, add_eos=add_eos, reverse=reverse, emit_unk_piece=emit_unk_piece,
                               enable_sampling=False, return_type=rt)

        return [one(t) for t in input] if isinstance(input, list) else one(input)

    def ParallelEncodeAsPieces(self, input: Any, **kwargs: Any) -> Any:
        return self.ParallelEncode(input=input, return_type=str, **kwargs)

    def ParallelEncodeAsIds(self, input: Any, **kwargs: Any) -> Any:
        return self.ParallelEncode(input=input, return_type=int, **kwargs)

    def ParallelEncodeAsProto(self, input: Any, **kwargs: Any) -> Any:
        return self.ParallelEncode(input=input, return_type="proto", **kwargs)

    # ----------------------------------------------------------------- decoding
    def Decode(self, input: Any, return_type: Any = None, out_type: Any = None, num_threads: int | None = None,
               thread_pool: ThreadPool | None = None, return_bytes: bool | None = None) -> Any:
        """Text (``str``, the default, or ``bytes``), a ``SentencePieceText`` (``'proto'``,
        ``'serialized_proto'``) or ``{"text", "ids", "pieces", "offsets"}`` (``'offset_mapping'``)
        of ids or pieces, or a list of them for a batch."""
        rt = _resolve_return_type(return_type, out_type, str)
        if return_bytes is not None and rt != "offset_mapping":
            raise InvalidArgumentError("return_bytes= goes with return_type='offset_mapping' only")
        if rt is int:
            raise InvalidArgumentError("decode gives text: return_type=int is not one of its types")
        num_threads = self._opt(num_threads, "num_threads")
        if not isinstance(num_threads, int):
            raise ArgumentTypeError("num_threads must be int")
        if input is None or (isinstance(input, (str, bytes)) and not input):
            input = []
        if not _is_sequence(input):
            input = [input]
        batch = bool(len(input)) and _is_sequence(input[0])
        pieces = False
        for item in input if batch else [input]:
            if _is_sequence(item) and len(item):
                pieces = isinstance(item[0], (str, bytes))
                break
        p = self._processor
        kind = "Pieces" if pieces else "Ids"
        suffix = "Batch" if batch else ""
        extra: list[Any] = [num_threads, thread_pool] if batch else []
        if rt == "offset_mapping":
            return getattr(p, "_DecodeAsOffsetMapping" + suffix)(input, *extra, bool(return_bytes))
        if rt is str:
            return getattr(p, f"_Decode{kind}{suffix}")(input, *extra)
        if rt is bytes:
            return getattr(p, f"_Decode{kind}AsBytes{suffix}")(input, *extra)
        raw = getattr(p, f"_Decode{kind}AsSerializedProto{suffix}")(input, *extra)
        if rt == "proto":
            return [_text_message(r) for r in raw] if batch else _text_message(raw)
        return raw

    def DecodePieces(self, input: Any, return_type: Any = None, **kwargs: Any) -> Any:
        return self.Decode(input=input, return_type=return_type, **kwargs)

    def DecodeIds(self, input: Any, return_type: Any = None, **kwargs: Any) -> Any:
        return self.Decode(input=input, return_type=return_type, **kwargs)

    def DecodePiecesAsProto(self, input: Any, **kwargs: Any) -> Any:
        return self.Decode(input=input, return_type="proto", **kwargs)

    def DecodeIdsAsProto(self, input: Any, **kwargs: Any) -> Any:
        return self.Decode(input=input, return_type="proto", **kwargs)

    def DecodePiecesAsSerializedProto(self, input: Any, **kwargs: Any) -> Any:
        return self.Decode(input=input, return_type="serialized_proto", **kwargs)

    def DecodeIdsAsSerializedProto(self, input: Any, **kwargs: Any) -> Any:
        return self.Decode(input=input, return_type="serialized_proto", **kwargs)

    # -------------------------------------------------------------- normalizing
    def Normalize(self, input: Any, with_offsets: bool | None = None) -> Any:
        """The text the model segments (``▁`` for spaces); ``with_offsets=True`` adds, per
        normalized character (byte, for bytes input) and the end, its position in the input."""
        p = self._processor
        f = p._NormalizeWithOffsets if with_offsets else p._Normalize
        return [f(x) for x in input] if isinstance(input, list) else f(input)

    # ------------------------------------------------------------------ lookups
    def GetPieceSize(self) -> int:
        return self._processor.GetPieceSize()

    def PieceToId(self, piece: Any) -> Any:
        return self._processor.PieceToId(piece)

    def IdToPiece(self, id: Any) -> Any:
        return self._processor.IdToPiece(id)

    def GetScore(self, id: Any) -> Any:
        return self._processor.GetScore(id)

    def IsUnknown(self, id: Any) -> Any:
        return self._processor.IsUnknown(id)

    def IsControl(self, id: Any) -> Any:
        return self._processor.IsControl(id)

    def IsUnused(self, id: Any) -> Any:
        return self._processor.IsUnused(id)

    def IsByte(self, id: Any) -> Any:
        return self._processor.IsByte(id)

    def unk_id(self) -> int:
        return self._processor.unk_id()

    def bos_id(self) -> int:
        return self._processor.bos_id()

    def eos_id(self) -> int:
        return self._processor.eos_id()

    def pad_id(self) -> int:
        return self._processor.pad_id()

    def serialized_model_proto(self) -> bytes:
        """The ``.model`` file's bytes."""
        return self._processor.serialized_model_proto()

    piece_size = vocab_size = get_piece_size = GetPieceSize
    # The snake_case spellings (``_add_snake_case`` below sets them all; these are for type checkers).
    load = Load
    load_from_file = LoadFromFile
    load_from_serialized_proto = LoadFromSerializedProto
    encode = tokenize = Tokenize = Encode
    encode_as_pieces = EncodeAsPieces
    encode_as_ids = EncodeAsIds
    encode_as_proto = EncodeAsProto
    encode_as_serialized_proto = EncodeAsSerializedProto
    encode_as_offset_mapping = EncodeAsOffsetMapping
    sample_encode_as_pieces = SampleEncodeAsPieces
    sample_encode_as_ids = SampleEncodeAsIds
    sample_encode_as_proto = SampleEncodeAsProto
    sample_encode_as_serialized_proto = SampleEncodeAsSerializedProto
    nbest_encode = NBestEncode
    nbest_encode_as_pieces = NBestEncodeAsPieces
    nbest_encode_as_ids = NBestEncodeAsIds
    nbest_encode_as_proto = NBestEncodeAsProto
    nbest_encode_as_serialized_proto = NBestEncodeAsSerializedProto
    parallel_encode = ParallelEncode
    parallel_encode_as_pieces = ParallelEncodeAsPieces
    parallel_encode_as_ids = ParallelEncodeAsIds
    parallel_encode_as_proto = ParallelEncodeAsProto
    decode = detokenize = Detokenize = Decode
    decode_pieces = DecodePieces
    decode_ids = DecodeIds
    decode_pieces_as_proto = DecodePiecesAsProto
    decode_ids_as_proto = DecodeIdsAsProto
    decode_pieces_as_serialized_proto = DecodePiecesAsSerializedProto
    decode_ids_as_serialized_proto = DecodeIdsAsSerializedProto
    normalize = Normalize
    piece_to_id = PieceToId
    id_to_piece = IdToPiece
    get_score = GetScore
    is_unknown = IsUnknown
    is_control = IsControl
    is_unused = IsUnused
    is_byte = IsByte

    def __len__(self) -> int:
        return self.GetPieceSize()

    def __getitem__(self, piece: Any) -> Any:
        return self.PieceToId(piece)

    # ------------------------------------------------------------------ pickling
    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state.pop("_processor", None)
        state["model_proto"] = self.serialized_model_proto()
        return state

    def __setstate__(self, state: Any) -> None:
        state = {"model_proto": state} if not isinstance(state, dict) else dict(state)
        SentencePieceProcessor.__init__(self)
        self.LoadFromSerializedProto(state.pop("model_proto"))
        self.__dict__.update(state)


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower().replace("n_best", "nbest")


def _add_snake_case(cls: type) -> None:
    for name, value in list(vars(cls).items()):
        if re.match(r"^[A-Z]", name):
            setattr(cls, _snake(name), value)


_add_snake_case(SentencePieceProcessor)
_add_snake_case(SentencePieceTrainer)
_add_snake_case(SentencePieceNormalizer)

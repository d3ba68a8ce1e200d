"""protobuf message classes for sentencepiece's two ``.proto`` files, when ``protobuf`` is installed.

sentencepiece ships generated ``sentencepiece_pb2`` and ``sentencepiece_model_pb2``
modules; code written for it reads ``return_type='proto'`` results and edits
``ModelProto`` objects with them. Here the file descriptors are built from the
field tables tokenforge's own reader uses (:mod:`tokenforge.sentencepiece.proto`)
in a private descriptor pool, so they never clash with the real package's
classes when both are imported.
"""

from __future__ import annotations

from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from ...sentencepiece import proto as _p

_F = descriptor_pb2.FieldDescriptorProto
_KINDS = {
    "string": _F.TYPE_STRING, "bytes": _F.TYPE_BYTES, "bool": _F.TYPE_BOOL, "int32": _F.TYPE_INT32,
    "uint64": _F.TYPE_UINT64, "uint32": _F.TYPE_UINT32, "float": _F.TYPE_FLOAT, "enum": _F.TYPE_ENUM,
    "message": _F.TYPE_MESSAGE,
}


def _default_text(value: Any, kind: str) -> str | None:
    if kind == "bool":
        return "true" if value else "false"
    if kind == "float":
        return repr(float(value))
    if kind in ("int32", "uint64", "uint32"):
        return str(int(value))
    if kind == "string":
        return str(value)
    return None


def _add_fields(msg: Any, fields: Any, defaults: Any, types: dict[str, str]) -> None:
    for number, name, kind, repeated, _sub in fields:
        f = msg.field.add(name=name, number=number, type=_KINDS[kind])
        f.label = _F.LABEL_REPEATED if repeated else _F.LABEL_OPTIONAL
        if kind in ("enum", "message"):
            f.type_name = types[name]
        if not repeated and defaults is not None and kind not in ("message", "bytes"):
            value = getattr(defaults, name)
            if kind == "enum":
                f.default_value = types[name + ".default"]
            elif value not in ("", 0, False) or kind == "bool":
                text = _default_text(value, kind)
                if text is not None:
                    f.default_value = text


def _enum(parent: Any, name: str, values: list[tuple[str, int]]) -> None:
    e = parent.enum_type.add(name=name)
    for n, v in values:
        e.value.add(name=n, number=v)


def _text_file() -> descriptor_pb2.FileDescriptorProto:
    fd = descriptor_pb2.FileDescriptorProto(name="sentencepiece.proto", package="sentencepiece", syntax="proto2")
    spt = fd.message_type.add(name="SentencePieceText")
    piece = spt.nested_type.add(name="SentencePiece")
    for number, name, kind in ((1, "piece", "string"), (2, "id", "uint32"), (3, "surface", "string"),
                               (4, "begin", "uint32"), (5, "end", "uint32")):
        piece.field.add(name=name, number=number, type=_KINDS[kind], label=_F.LABEL_OPTIONAL)
    piece.extension_range.add(start=200, end=536870912)
    spt.field.add(name="text", number=1, type=_F.TYPE_STRING, label=_F.LABEL_OPTIONAL)
    spt.field.add(name="pieces", number=2, type=_F.TYPE_MESSAGE, label=_F.LABEL_REPEATED,
                  type_name=".sentencepiece.SentencePieceText.SentencePiece")
    spt.field.add(name="score", number=3, type=_F.TYPE_FLOAT, label=_F.LABEL_OPTIONAL)
    spt.extension_range.add(start=200, end=536870912)
    nbest = fd.message_type.add(name="NBestSentencePieceText")
    nbest.field.add(name="nbests", number=1, type=_F.TYPE_MESSAGE, label=_F.LABEL_REPEATED,
                    type_name=".sentencepiece.SentencePieceText")
    return fd


def _model_file() -> descriptor_pb2.FileDescriptorProto:
    fd = descriptor_pb2.FileDescriptorProto(name="sentencepiece_model.proto", package="sentencepiece", syntax="proto2")
    ts = fd.message_type.add(name="TrainerSpec")
    _enum(ts, "ModelType", [(t.name, int(t)) for t in _p.ModelType])
    _add_fields(ts, _p.TrainerSpec._FIELDS, _p.TrainerSpec(),
                {"model_type": ".sentencepiece.TrainerSpec.ModelType", "model_type.default": "UNIGRAM"})
    ts.extension_range.add(start=200, end=536870912)
    ns = fd.message_type.add(name="NormalizerSpec")
    _add_fields(ns, _p.NormalizerSpec._FIELDS, _p.NormalizerSpec(), {})
    ns.extension_range.add(start=200, end=536870912)
    st = fd.message_type.add(name="SelfTestData")
    sample = st.nested_type.add(name="Sample")
    _add_fields(sample, _p.SelfTestSample._FIELDS, None, {})
    _add_fields(st, _p.SelfTestData._FIELDS, None, {"samples": ".sentencepiece.SelfTestData.Sample"})
    st.extension_range.add(start=200, end=536870912)
    mp = fd.message_type.add(name="ModelProto")
    sp = mp.nested_type.add(name="SentencePiece")
    _enum(sp, "Type", [(t.name, int(t)) for t in _p.PieceType])
    _add_fields(sp, _p.SentencePiece._FIELDS, _p.SentencePiece(),
                {"type": ".sentencepiece.ModelProto.SentencePiece.Type", "type.default": "NORMAL"})
    sp.extension_range.add(start=200, end=536870912)
    _add_fields(mp, _p.ModelProto._FIELDS, None, {
        "pieces": ".sentencepiece.ModelProto.SentencePiece", "trainer_spec": ".sentencepiece.TrainerSpec",
        "normalizer_spec": ".sentencepiece.NormalizerSpec", "self_test_data": ".sentencepiece.SelfTestData",
        "denormalizer_spec": ".sentencepiece.NormalizerSpec",
    })
    mp.extension_range.add(start=200, end=536870912)
    return fd


POOL = descriptor_pool.DescriptorPool()
TEXT_FILE = POOL.Add(_text_file())
MODEL_FILE = POOL.Add(_model_file())


def message_class(full_name: str) -> Any:
    """The generated class of a message of either file (``"sentencepiece.ModelProto"``)."""
    return message_factory.GetMessageClass(POOL.FindMessageTypeByName(full_name))

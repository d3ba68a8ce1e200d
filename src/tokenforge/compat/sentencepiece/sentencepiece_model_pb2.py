"""``ModelProto`` and its parts as protobuf classes (needs ``protobuf``), like sentencepiece's
generated module of the same name: ``ModelProto().ParseFromString(open(path, "rb").read())``."""

from ._protos import MODEL_FILE as DESCRIPTOR
from ._protos import message_class

TrainerSpec = message_class("sentencepiece.TrainerSpec")
NormalizerSpec = message_class("sentencepiece.NormalizerSpec")
SelfTestData = message_class("sentencepiece.SelfTestData")
ModelProto = message_class("sentencepiece.ModelProto")

__all__ = ["DESCRIPTOR", "ModelProto", "NormalizerSpec", "SelfTestData", "TrainerSpec"]

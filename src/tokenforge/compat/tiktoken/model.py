"""``tiktoken.model``: which encoding each OpenAI model uses."""

from ...encodings import MODEL_PREFIX_TO_ENCODING, MODEL_TO_ENCODING
from . import encoding_for_model, encoding_name_for_model

__all__ = ["MODEL_PREFIX_TO_ENCODING", "MODEL_TO_ENCODING", "encoding_for_model", "encoding_name_for_model"]

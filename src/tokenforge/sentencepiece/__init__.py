"""SentencePiece support in one package (Kudo & Richardson, 2018).

- :mod:`.constants`: ``▁``, the piece types, byte pieces, float32 rounding;
- :mod:`.proto`: the ``.model`` protobuf reader and writer;
- :mod:`.charsmap`: the precompiled normalization rules (darts-clone trie);
- :mod:`.normalizer`: sentencepiece's ``Normalizer`` as a pipeline stage;
- :mod:`.bpe`: the score-driven BPE segmentation of ``bpe_model.cc``;
- :mod:`.export`: a tokenizer back to a ``ModelProto``;
- :mod:`.hf`: the HF ``tokenizer.json`` form of a SentencePiece tokenizer, checked;
- :mod:`.convert`: both directions ``.model`` <-> :class:`~tokenforge.Tokenizer`.

Only the constants are imported here, so that the models and normalizers
below can import this package without pulling in the converters above them.
"""

from __future__ import annotations

from .constants import SPACE, UNK_CHAR, PieceType, byte_piece, f32, piece_byte

__all__ = ["SPACE", "UNK_CHAR", "PieceType", "byte_piece", "f32", "piece_byte"]

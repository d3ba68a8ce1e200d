"""ByT5's byte tokenizer ("tokenizer-free"): every UTF-8 byte is a token.

ByT5 (Xue et al., 2022, "ByT5: Towards a Token-Free Future with Pre-trained
Byte-to-Byte Models", TACL) feeds a T5 model the raw UTF-8 bytes of the text.
The ids are those of transformers' ``ByT5Tokenizer``: ``<pad>`` = 0, ``</s>`` = 1,
``<unk>`` = 2, byte ``b`` = ``3 + b`` (ids 3..258) and the 125 sentinels
``<extra_id_0>`` ... ``<extra_id_124>`` at ids 259..383 (the ids transformers gives
them: ``<extra_id_i>`` = 259 + i), so ``n_vocab`` is 384.

Built from existing stages, with no model class of its own: a byte-level
:class:`~tokenforge.models.bpe.BPE` whose vocabulary is the 256 single bytes (at
ids 3..258) and which has no merges is exactly "one token per byte", and it runs on
the native rank plan with no split pattern; the post-processor is
:class:`~tokenforge.postprocessors.EosProcessing` (append ``</s>``, unless the
sequence already ends with it, as transformers' ``_add_eos_if_not_present`` does).
The control tokens are special added tokens; ``<pad>``, ``</s>`` and ``<unk>`` take
the whitespace on both sides when matched in text (transformers declares them with
``lstrip=True, rstrip=True``), the sentinels do not.

How tokenforge's calls map to transformers' (``t = ByT5Tokenizer()``):

* ``encode(text, allowed_special="all")`` == ``t.encode(text)`` == ``t(text)["input_ids"]``:
  the bytes, then ``</s>``. ``add_special_tokens=False`` drops the ``</s>`` as in
  transformers. tokenforge's default special-token policy is tiktoken's: a control
  token's string in the text (``"</s>"``, ``"<extra_id_0>"``) raises
  :class:`~tokenforge.errors.SpecialTokenError` unless ``allowed_special`` names it
  (transformers always reads them); ``disallowed_special=()`` encodes them as bytes.
* ``decode(ids, errors="ignore")`` == ``t.decode(ids)``: the tokens' bytes joined (a
  control token as its UTF-8 string) and decoded with ``errors="ignore"``, as
  transformers does (bytes that are not valid UTF-8 are dropped). tokenforge's
  default, ``errors="replace"``, shows them as U+FFFD instead.
  ``skip_special_tokens=True`` drops all 128 control ids, as transformers does.

Known differences, both outside what transformers can do consistently: a lone
surrogate in the text is encoded as U+FFFD (transformers raises
``UnicodeEncodeError``), and the whitespace that ``<pad>``/``</s>``/``<unk>`` swallow
is Unicode White_Space (transformers uses Python's ``str.strip``, which also strips
the separators U+001C..U+001F).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..tokenizer import Tokenizer

PAD, EOS, UNK = "<pad>", "</s>", "<unk>"
#: The id of byte 0; byte ``b`` is ``OFFSET + b``.
OFFSET = 3
EXTRA_IDS = 125
#: The id of ``<extra_id_0>``; ``<extra_id_i>`` is ``FIRST_EXTRA_ID + i``.
FIRST_EXTRA_ID = OFFSET + 256


def byt5(name: str = "bytes") -> "Tokenizer":
    """A new ByT5 byte tokenizer (use ``tokenforge.get_encoding("bytes")`` for the shared one).

    >>> tok = byt5()
    >>> tok.encode("hé")
    [107, 198, 172, 1]
    >>> tok.decode([107, 198, 172, 1], skip_special_tokens=True)
    'hé'
    """
    from ..models.bpe import BPE
    from ..postprocessors import EosProcessing
    from ..tokenizer import AddedToken, Tokenizer

    model = BPE({OFFSET + b: bytes([b]) for b in range(256)})
    added = [AddedToken(t, i, special=True, lstrip=True, rstrip=True) for i, t in enumerate((PAD, EOS, UNK))]
    added += [AddedToken(f"<extra_id_{i}>", FIRST_EXTRA_ID + i, special=True) for i in range(EXTRA_IDS)]
    return Tokenizer(
        model,
        post_processor=EosProcessing((EOS, 1)),
        added_tokens=added,
        name=name,
        config={"eos_token": EOS, "pad_token": PAD, "unk_token": UNK,
                "additional_special_tokens": [f"<extra_id_{i}>" for i in range(EXTRA_IDS)]},
    )

"""``tokenforge.compat.sentencepiece.SentencePieceProcessor`` against the sentencepiece library."""

from __future__ import annotations

import pytest

from tokenforge.compat.sentencepiece import SentencePieceProcessor
from tokenforge.errors import InvalidArgumentError, UnknownIdError

spm = pytest.importorskip("sentencepiece")

MODELS = ["albert_spiece.model", "hf_test_bpe.model", "mistral_v1_tokenizer.model", "spm_test_unigram.model",
          "spm_test_ja_unigram.model"]
TEXTS = ["Hello world", "  Hello   world  ", "ﬃ x", "𠀋 unknown 龘", "<s> not a control </s>", "", "é 東京 ①",
         "x\n\ny", "👩‍👩‍👧 ok"]
OPTIONS = [{}, {"add_bos": True}, {"add_eos": True}, {"add_bos": True, "add_eos": True, "reverse": True},
           {"reverse": True}, {"emit_unk_piece": True}]


@pytest.fixture(scope="module", params=MODELS)
def pair(request, shared_data):
    path = str(shared_data / "vocab" / "sentencepiece" / request.param)
    return SentencePieceProcessor(model_file=path), spm.SentencePieceProcessor(model_file=path), path


def _same(ours_call, ref_call) -> bool:
    """Equal results, or both raise ValueError (e.g. add_bos on a model without <s>)."""
    try:
        want = ref_call()
    except ValueError:
        try:
            ours_call()
        except ValueError:
            return True
        return False
    return ours_call() == want


@pytest.mark.parametrize("opts", OPTIONS)
def test_encode_options_match(pair, opts):
    ours, ref, _ = pair
    for out_type in (int, str):
        assert _same(lambda: ours.encode(TEXTS, out_type=out_type, **opts),
                     lambda: ref.encode(TEXTS, out_type=out_type, **opts))
        for t in TEXTS:
            assert _same(lambda: ours.encode(t, out_type=out_type, **opts),
                         lambda: ref.encode(t, out_type=out_type, **opts)), t


def test_constructor_defaults_match(pair):
    _, _, path = pair
    kw = dict(add_bos=True, add_eos=True, out_type=str, emit_unk_piece=True)
    ours, ref = SentencePieceProcessor(model_file=path, **kw), spm.SentencePieceProcessor(model_file=path, **kw)
    assert _same(lambda: ours.encode(TEXTS), lambda: ref.encode(TEXTS))
    assert ours.encode("a b", add_bos=False, add_eos=False, out_type=int) == ref.encode(
        "a b", add_bos=False, add_eos=False, out_type=int)


def test_decode_and_lookups_match(pair):
    ours, ref, _ = pair
    for t in TEXTS:
        ids, pieces = ref.encode(t), ref.encode(t, out_type=str)
        assert ours.decode(ids) == ref.decode(ids)
        assert ours.decode(pieces) == ref.decode(pieces)
        assert ours.decode_ids(ids) == ref.decode_ids(ids)
    batch = ref.encode(TEXTS)
    assert ours.decode(batch) == ref.decode(batch)
    n = ref.get_piece_size()
    assert (len(ours), ours.vocab_size(), ours.get_piece_size()) == (n, n, n)
    for f in ("unk_id", "bos_id", "eos_id", "pad_id"):
        assert getattr(ours, f)() == getattr(ref, f)(), f
    some = list(range(0, n, max(1, n // 500))) + [n - 1]
    assert ours.id_to_piece(some) == ref.id_to_piece(some)
    assert ours.get_score(some) == pytest.approx(ref.get_score(some))
    for i in some:
        for f in ("is_unknown", "is_control", "is_unused", "is_byte"):
            assert getattr(ours, f)(i) == getattr(ref, f)(i), (f, i)
    pieces = ours.id_to_piece(some) + ["no such piece ☃"]
    assert ours.piece_to_id(pieces) == ref.piece_to_id(pieces)
    assert ours.normalize("  Ｈｅｌｌｏ  world ") == ref.normalize("  Ｈｅｌｌｏ  world ")
    assert ours.serialized_model_proto() == ref.serialized_model_proto()


def test_nbest_and_sampling(pair):
    ours, ref, _ = pair
    text = "Hello world, 日本語のテキストです"
    if ref.serialized_model_proto() and ours.model_proto.trainer_spec.model_type == 1:  # Unigram
        assert ours.nbest_encode_as_ids(text, 3) == ref.nbest_encode_as_ids(text, 3)
    seen = set()
    for _ in range(60):  # alpha 0.1 flattens the distribution: 60 draws all equal is vanishingly rare
        ids = ours.encode(text, enable_sampling=True, alpha=0.1, nbest_size=-1)
        assert ours.decode(ids) == ref.decode(ref.encode(text))
        seen.add(tuple(ids))
    assert len(seen) > 1


def test_loading_and_errors(pair):
    ours, ref, path = pair
    again = SentencePieceProcessor()
    again.load(model_proto=ref.serialized_model_proto())
    assert again.encode("Hello world") == ref.encode("Hello world")
    with pytest.raises(InvalidArgumentError, match="load"):
        SentencePieceProcessor().encode("x")
    with pytest.raises(UnknownIdError):
        ours.id_to_piece(ours.get_piece_size())
    if ours.bos_id() < 0:
        with pytest.raises(InvalidArgumentError, match="bos"):
            ours.encode("x", add_bos=True)

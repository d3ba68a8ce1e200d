"""explain() on pipelines shows what their model does, as it does for tiktoken files.

* HF byte-level BPE (``tokenizer.json``): pre-tokens as the text they stand for, not in
  GPT-2's byte alphabet (``ĠschÃ¶n``), and every merge with its rank (its index in
  ``merges``). GPT-2's HF merges are its tiktoken ranks minus the 256 byte tokens, so
  both explanations log the same merges in the same order.
* SentencePiece BPE: every merge with the score of the piece it makes.
* Unigram: the Viterbi path, each piece with its log-probability, and their sum.
"""

from __future__ import annotations

import json
import math

import pytest
from _families import _xz

import tokenforge
from tokenforge.analysis.explain import explain, render_bytes
from tokenforge.bytelevel import decode_string
from tokenforge.models.unigram import Unigram

TEXT = "Hello schön wörld, 東京 tokenization!"


def _replay(parts: list[bytes], merges) -> list[bytes]:
    """Apply a merge log to ``parts`` (the starting symbols), checking each step's operands."""
    parts = list(parts)
    for m in merges:
        pos = 0
        for k, p in enumerate(parts):
            if pos == m.start:
                break
            pos += len(p)
        else:
            raise AssertionError(f"no symbol starts at byte {m.start}: {parts}")
        assert parts[k] == m.left and parts[k + 1] == m.right, (parts, m)
        parts[k : k + 2] = [m.left + m.right]
    return parts


@pytest.fixture(scope="module")
def hf_gpt2(shared_data):
    return tokenforge.load(str(shared_data / "vocab/hf/gpt2_tokenizer.json"))


def test_hf_byte_level_shows_text_not_the_byte_alphabet(hf_gpt2):
    ex = explain(hf_gpt2, TEXT)
    assert ex.family == "byte-level BPE"
    assert [p.text for p in ex.pieces] == ["Hello", " schön", " wörld", ",", " 東京", " tokenization", "!"]
    assert ex.pieces[1].vocab_text == "ĠschÃ¶n" and ex.pieces[0].vocab_text is None
    pre_line = next(line for line in ex.render().splitlines() if line.startswith("pre-tokens"))
    assert "Ġ" not in pre_line and "Ã" not in pre_line and "' schön'" in pre_line
    d = json.loads(json.dumps(ex.to_dict(), ensure_ascii=False))
    assert d["pieces"][1]["text"] == " schön" and d["pieces"][1]["vocab_text"] == "ĠschÃ¶n"


def test_hf_byte_level_merges_have_ranks_and_match_tiktoken(hf_gpt2):
    ex = explain(hf_gpt2, TEXT)
    tk = explain(tokenforge.get_encoding("gpt2"), TEXT)
    assert ex.ids == tk.ids
    merges = hf_gpt2.model.merges
    for p, q in zip(ex.pieces, tk.pieces):
        assert p.merges or len(p.text.encode()) == 1, f"no merges logged for {p.text!r}"
        for m in p.merges:
            a, b = merges[m.rank]  # the rank is the merge's line in merges.txt
            assert (decode_string(a), decode_string(b)) == (m.left, m.right)
            assert m.id == hf_gpt2.token_to_id(a + b)
        # GPT-2: HF merge rank + 256 = tiktoken rank; same merges in the same order
        assert [(m.left, m.right, m.rank + 256, m.start) for m in p.merges] == [
            (m.left, m.right, m.rank, m.start) for m in q.merges]
        assert _replay([bytes([b]) for b in p.text.encode()], p.merges) == p.tokens
    text = ex.render()
    assert "merge rank    8845: <0xC3> + <0xB6> -> ö" in text  # 'Ã' + '¶' in the vocabulary's alphabet
    assert "merge rank       8: ␣ + s -> ␣s" in text


def test_hf_byte_level_written_by_tokenforge():
    """gpt2 saved as tokenizer.json needs no shared data: its pieces are readable and merges logged."""
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "tokenizer.json"
        tokenforge.get_encoding("gpt2").save(str(path), format="hf")
        tok = tokenforge.load(str(path))
    ex = explain(tok, TEXT)
    assert [p.text for p in ex.pieces][:3] == ["Hello", " schön", " wörld"]
    schoen = ex.pieces[1]
    assert [render_bytes(t) for t in schoen.tokens] == ["␣sch", "ön"]
    assert _replay([bytes([b]) for b in schoen.text.encode()], schoen.merges) == schoen.tokens
    assert all(m.rank is not None and m.score is None for m in schoen.merges)


@pytest.fixture(scope="module")
def spm_bpe(tmp_path_factory):
    return tokenforge.load(_xz(tmp_path_factory.mktemp("spm"), "hf_test_bpe.model"))


def test_sentencepiece_bpe_logs_merges_with_scores(spm_bpe):
    text = "This is a test of the sentencepiece merges."
    ex = explain(spm_bpe, text)
    assert ex.family == "SentencePiece BPE"
    model = spm_bpe.model
    scores = model.scores
    logged = [m for p in ex.pieces for m in p.merges]
    assert len(logged) > 10
    for p in ex.pieces:
        for m in p.merges:
            assert m.rank is None and m.score == scores[m.id]
            assert model.id_to_token(m.id).replace("▁", " ").encode() == m.left + m.right
        # starting from the characters, the merges rebuild the tokens
        chars = [c.replace("▁", " ").encode() for c in p.text]
        assert _replay(chars, p.merges) == p.tokens
    assert "merge score" in ex.render()
    d = ex.to_dict()
    first = d["pieces"][0]["merges"][0]
    assert first["rank"] is None and isinstance(first["score"], float) and isinstance(first["id"], int)


def test_sentencepiece_bpe_mistral(shared_data):
    tok = tokenforge.load(str(shared_data / "vocab/sentencepiece/mistral_v1_tokenizer.model"))
    ex = explain(tok, "Hello schön 東京\U0001F600")
    hello = ex.pieces[0]
    assert [(render_bytes(m.left), render_bytes(m.right)) for m in hello.merges][-1] == ("␣H", "ello")
    assert hello.ids == [tok.token_to_id("▁Hello")]


@pytest.fixture(scope="module")
def spm_unigram(tmp_path_factory):
    return tokenforge.load(_xz(tmp_path_factory.mktemp("spm"), "spm_test_unigram.model"))


def test_unigram_shows_the_viterbi_path_with_scores(spm_unigram):
    text = "I saw a girl with a telescope."
    ex = explain(spm_unigram, text)
    model = spm_unigram.model
    assert isinstance(model, Unigram)
    for p in ex.pieces:
        assert p.viterbi, "no Viterbi path"
        assert [n.id for n in p.viterbi] == p.ids  # no unknown characters here
        for n in p.viterbi:
            assert n.score == model.scores[n.id]
            assert model.id_to_token(n.id).replace("▁", " ").encode() == n.text
        assert p.score == pytest.approx(model.viterbi_score(p.text.replace(" ", "▁")), abs=1e-9)
        assert math.isclose(p.score, math.fsum(n.score for n in p.viterbi))
    text_out = ex.render()
    assert "viterbi log-prob" in text_out and "best path log-prob" in text_out
    d = json.loads(json.dumps(ex.to_dict()))
    assert d["pieces"][0]["viterbi"][0]["score"] == ex.pieces[0].viterbi[0].score


def test_unigram_unknown_characters_on_the_path(spm_unigram):
    ex = explain(spm_unigram, "ab\u0d9e\u0d9ecd")  # Sinhala letters: not in the model
    (piece,) = ex.pieces
    unknown = [n for n in piece.viterbi if n.id is None]
    assert [n.text for n in unknown] == ["\u0d9e".encode()] * 2
    assert all(n.score == pytest.approx(spm_unigram.model.min_score - 10.0, abs=1e-4) for n in unknown)
    assert piece.ids.count(spm_unigram.model.unk_id) == 1  # the run became one unknown token
    assert "(unknown)" in ex.render()


_TOKENIZERS: dict[str, object] = {}


def _family(name: str, tmp_path_factory):
    if name not in _TOKENIZERS:
        d = tmp_path_factory.mktemp(name.replace(" ", "_"))
        if name == "HF byte-level":
            tokenforge.get_encoding("gpt2").save(str(d / "tokenizer.json"), format="hf")
            _TOKENIZERS[name] = tokenforge.load(str(d / "tokenizer.json"))
        else:
            _TOKENIZERS[name] = tokenforge.load(_xz(d, name))
    return _TOKENIZERS[name]


@pytest.mark.parametrize("name", ["HF byte-level", "hf_test_bpe.model", "spm_test_unigram.model"])
def test_explanations_agree_with_encode_on_random_text(name, tmp_path_factory):
    """explain() checks its ids against encode_ordinary (native or Python backend) and raises if
    they differ; the merge logs must also rebuild each piece's tokens."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    tok = _family(name, tmp_path_factory)
    alphabet = st.sampled_from(list("abcdeéz ABC  \n\t.,'!?0123年中文😀ß-▁")) | st.characters(exclude_categories=())

    @settings(max_examples=60, deadline=None)
    @given(text=st.text(alphabet=alphabet, max_size=40))
    def check(text):
        ex = explain(tok, text)
        for p in ex.pieces:
            if p.added or not p.merges:
                continue
            if name == "HF byte-level":
                start = [bytes([b]) for b in p.text.encode("utf-8", "replace")]
                assert _replay(start, p.merges) == p.tokens
            else:
                # every merge joins two adjacent symbols into the piece it names
                for m in p.merges:
                    assert tok.model.id_to_token(m.id).replace("▁", " ").encode() == m.left + m.right

    check()


def test_hf_ignore_merges_whole_piece_is_explained_like_tiktoken():
    """A tokenizer.json with ignore_merges takes a piece that is a token whole (tiktoken's rule);
    the explanation still logs the merges and says where they alone stop."""
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "tokenizer.json"
        tokenforge.get_encoding("gpt2").save(str(path), format="hf")
        tok = tokenforge.load(str(path))
    assert tok.model.ignore_merges
    enc = tokenforge.get_encoding("gpt2")
    for text in ["Hello", " tokenization", " schön"]:
        (p,) = explain(tok, text).pieces
        (q,) = explain(enc, text).pieces
        assert p.whole == q.whole and p.tokens == q.tokens
        if q.whole:
            assert p.merged == q.merged
        assert [(m.left, m.right, m.rank + 256) for m in p.merges] == [(m.left, m.right, m.rank) for m in q.merges]


def test_token_merges_for_byte_level_families(hf_gpt2, spm_bpe):
    from tokenforge.analysis.explain import token_merges

    tid = hf_gpt2.token_to_id("Ġworld")
    merges, parts = token_merges(hf_gpt2, tid)
    assert parts == [b" world"] and merges[-1].id == tid
    tk_merges, _ = token_merges(tokenforge.get_encoding("gpt2"), tid)
    assert [m.rank + 256 for m in merges] == [m.rank for m in tk_merges]
    assert token_merges(spm_bpe, spm_bpe.token_to_id("▁the")) is None  # merges start from characters

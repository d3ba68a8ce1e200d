"""encode_with_offsets: every token maps back to its span of the ORIGINAL text, in
code points and in UTF-8 bytes, for every tokenizer family."""

from __future__ import annotations

import doctest
import itertools
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tokenforge
import tokenforge.analysis.offsets
from tokenforge.analysis.offsets import (
    TokenSpan,
    encode_with_offsets,
    surrogate_alignment,
)

MIXED = (
    "Hello, world! naïve café — ﬃ ligature, ＡＢＣ fullwidth.\n"
    "中文分词很贵。龘 𠀀 emoji: 👩‍👩‍👧 🙂 flags 🇫🇷; e\u0301 combining.\x00NUL\t tab  spaces\r\n"
    "def f(x):\n    return x ** 2  # 12345\n"
)

BYTE_LEVEL = ["gpt2", "cl100k_base", "o200k_base"]


@pytest.fixture(scope="module", params=BYTE_LEVEL)
def byte_level(request) -> tokenforge.Tokenizer:
    return tokenforge.get_encoding(request.param)


def _char_byte_starts(text: str) -> list[int]:
    fixed, align = surrogate_alignment(text)
    # byte offset of each ORIGINAL code point boundary that the repaired text also has
    starts = {0: 0}
    pos = 0
    for c, (s, e) in zip(fixed, align):
        pos += len(c.encode("utf-8"))
        starts[e] = pos
    return starts


def _check_common(spans: list[TokenSpan], text: str) -> None:
    """Spans within bounds, monotone, and byte spans inside the character spans' UTF-8."""
    fixed, _ = surrogate_alignment(text)
    total = len(fixed.encode("utf-8"))
    starts = _char_byte_starts(text)
    prev = (0, 0)
    for s in spans:
        assert 0 <= s.start <= s.end <= len(text), s
        assert 0 <= s.byte_start <= s.byte_end <= total, s
        assert (s.start, s.end) >= prev and s.end >= prev[1], (prev, s)
        prev = (s.start, s.end)
        if s.start in starts and s.end in starts:
            assert starts[s.start] <= s.byte_start and s.byte_end <= starts[s.end], s


def check_byte_level(enc: tokenforge.Tokenizer, text: str, **kwargs) -> list[TokenSpan]:
    spans = encode_with_offsets(enc, text, **kwargs)
    assert [s.id for s in spans] == enc.encode(text, **kwargs)
    _check_common(spans, text)
    fixed, _ = surrogate_alignment(text)
    data = fixed.encode("utf-8")
    # byte spans tile the UTF-8 of the text exactly, in order
    pos = 0
    for s in spans:
        assert s.byte_start == pos
        pos = s.byte_end
        assert data[s.byte_start : s.byte_end] == enc.decode_single_token_bytes(s.id)
    assert pos == len(data)
    for s in spans:
        piece = text[s.start : s.end]
        assert piece, s  # a partial token points at the whole character(s) it is part of
        if not s.partial:
            # a whole-character token is exactly its slice of the original text
            clean = surrogate_alignment(piece)[0]
            assert enc.decode_single_token_bytes(s.id) == clean.encode("utf-8")
            if clean == piece:
                assert enc.decode([s.id]) == piece
    return spans


def test_byte_level_on_real_text(byte_level, varied_text):
    for text in (MIXED, varied_text):
        spans = check_byte_level(byte_level, text)
        assert any(s.partial for s in spans)  # CJK / emoji bytes are split somewhere


def test_cjk_bytes_are_partial_with_exact_byte_spans():
    enc = tokenforge.get_encoding("gpt2")
    text = "a龘"
    spans = check_byte_level(enc, text)
    parts = [s for s in spans if s.partial]
    assert parts and all((s.start, s.end) == (1, 2) for s in parts)
    assert b"".join(enc.decode_single_token_bytes(s.id) for s in parts) == "龘".encode()
    assert parts[0].byte_start == 1 and parts[-1].byte_end == 4


def test_special_tokens_have_their_span():
    enc = tokenforge.get_encoding("cl100k_base")
    text = "a<|endoftext|>b"
    spans = check_byte_level(enc, text, allowed_special="all")
    sp = [s for s in spans if s.special]
    assert [(s.id, text[s.start : s.end]) for s in sp] == [(100257, "<|endoftext|>")]
    assert not any(s.special for s in check_byte_level(enc, text, disallowed_special=()))


def test_lone_surrogates_keep_offsets_in_the_original_str():
    enc = tokenforge.get_encoding("cl100k_base")
    text = "x\ud800y \ud83d\ude00z \udc00"
    spans = check_byte_level(enc, text)
    # every original code point is covered, in order
    covered = sorted({k for s in spans for k in range(s.start, s.end)})
    assert covered == list(range(len(text)))
    # the surrogate pair (2 code points) is covered by tokens whose spans are exactly both halves
    pair = [s for s in spans if s.start <= 4 < s.end]
    assert pair and all(s.end >= 6 for s in pair)
    fixed, align = surrogate_alignment(text)
    assert fixed == "x\ufffdy 😀z \ufffd" and align[4] == (4, 6)
    assert fixed == text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            ["a", " ", "  ", "\n", "中", "龘", "𠀀", "🙂", "👩\u200d👩\u200d👧", "e\u0301", "ﬃ", "\x00", "1234",
             "<|endoftext|>", "\ud800", "\udfff", "Ａ", "é", "\t"]
        ),
        max_size=12,
    ).map("".join)
)
def test_byte_level_offsets_property(text):
    for name in BYTE_LEVEL:
        check_byte_level(tokenforge.get_encoding(name), text, disallowed_special=())


# ------------------------------------------------------------------ pipelines
@pytest.fixture(scope="module")
def bert(shared_data):
    return tokenforge.load(str(shared_data / "vocab" / "wordpiece" / "bert-base-uncased_vocab.txt"))


@pytest.fixture(scope="module")
def mistral(shared_data):
    return tokenforge.load(str(shared_data / "vocab" / "sentencepiece" / "mistral_v1_tokenizer.model"))


@pytest.fixture(scope="module")
def albert(shared_data):
    return tokenforge.load(str(shared_data / "vocab" / "sentencepiece" / "albert_spiece.model"))


@pytest.fixture(scope="module")
def claude(shared_data):
    return tokenforge.load(str(shared_data / "vocab" / "hf" / "claude_tokenizer.json"))


def check_pipeline(pipe, text: str, **kwargs) -> list[TokenSpan]:
    spans = encode_with_offsets(pipe, text, **kwargs)
    assert [s.id for s in spans] == pipe.encode(text, **kwargs)
    _check_common(spans, text)
    return spans


def test_bert_post_processor_tokens_and_slices(bert):
    text = "Hello, World! The ﬃ ligature."
    spans = check_pipeline(bert, text)
    assert spans[0].token == "[CLS]" and spans[0].special and spans[0].span == (0, 0)
    assert spans[-1].token == "[SEP]" and spans[-1].special and spans[-1].span == (len(text), len(text))
    for s in spans[1:-1]:
        piece = text[s.start : s.end]
        assert not s.special
        assert s.byte_span == (len(text[: s.start].encode()), len(text[: s.end].encode()))
        if "ﬃ" in piece:
            assert piece == "ﬃ" and s.partial == (sum(1 for t in spans if t.span == s.span) > 1)
        else:
            assert s.token.removeprefix("##") == piece.lower()
    masked = check_pipeline(bert, "a [MASK] b", allowed_special="all")
    assert [(s.token, s.span, s.special) for s in masked] == [
        ("[CLS]", (0, 0), True), ("a", (0, 1), False), ("[MASK]", (2, 8), True), ("b", (9, 10), False),
        ("[SEP]", (10, 10), True),
    ]
    assert [s.token for s in check_pipeline(bert, "a b", add_special_tokens=False)] == ["a", "b"]


def test_mistral_byte_fallback_is_partial_with_exact_bytes(mistral):
    text = "Say ﬃ 龘 🙂 and e\u0301 now"
    spans = check_pipeline(mistral, text)
    for s in spans:
        piece = text[s.start : s.end]
        if s.token.startswith("<0x"):
            assert s.partial
            assert text.encode()[s.byte_start : s.byte_end] == bytes([int(s.token[3:5], 16)])
        else:
            assert not s.partial
            surface = s.token.replace("\u2581", " ")
            # identity normalization: the token is its slice (the first one carries the dummy prefix)
            assert surface == piece or (s.start == 0 and surface == " " + piece), (s, piece)
    fallback = [s for s in spans if s.token.startswith("<0x")]
    assert {text[s.start : s.end] for s in fallback} >= {"龘"}


def test_nfkc_pipelines_map_back_through_the_alignment(albert, claude):
    text = "the ﬃ office ＡＢＣ"
    for pipe in (albert, claude):
        spans = check_pipeline(pipe, text)
        lig = text.index("ﬃ")
        touching = [s for s in spans if s.start <= lig < s.end]
        assert touching and all(s.end == lig + 1 for s in touching)
        full = text.index("Ａ")
        assert any(s.start <= full < s.end for s in spans)


def test_byte_level_pipeline_splits_characters_exactly(claude):
    text = "x 龘🙂"
    spans = check_pipeline(claude, text)
    emoji = [s for s in spans if s.span == (3, 4)]
    assert len(emoji) > 1 and all(s.partial for s in emoji)
    assert b"".join(text.encode()[s.byte_start : s.byte_end] for s in emoji) == "🙂".encode()
    assert [s.byte_start for s in emoji] == sorted({s.byte_start for s in emoji})


def test_pipeline_lone_surrogate(mistral, bert):
    text = "a \ud800 b \ud83d\ude00"
    for pipe in (mistral, bert):
        spans = check_pipeline(pipe, text)
        assert max(s.end for s in spans) <= len(text)
    smile = [s for s in encode_with_offsets(mistral, text) if s.token == "😀"]
    assert [text[s.start : s.end] for s in smile] == ["\ud83d\ude00"]


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.sampled_from(["a", "Hello", " ", "\n", "中", "龘", "🙂", "👩\u200d👧", "e\u0301", "ﬃ", "\x00", "Ａ", "\ud800", "[SEP]"]),
        max_size=10,
    ).map("".join)
)
def test_pipeline_offsets_property(bert, mistral, albert, text):
    for pipe in (bert, mistral, albert):
        check_pipeline(pipe, text, disallowed_special=())


def test_rejects_other_objects():
    with pytest.raises(TypeError):
        encode_with_offsets(object(), "x")
    with pytest.raises(tokenforge.EncodeInputError):
        encode_with_offsets(tokenforge.get_encoding("gpt2"), b"x")


def test_surrogate_repair_matches_the_encoders():
    """surrogate_alignment gives exactly the text the encoders see (a UTF-16 round trip)."""
    alphabet = ["\ud800", "\udbff", "\udc00", "\udfff", "a", "😀", "\ud83d", "\ude00"]
    for n in range(1, 4):
        for combo in itertools.product(alphabet, repeat=n):
            text = "".join(combo)
            fixed, align = surrogate_alignment(text)
            assert fixed == text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
            assert len(align) == len(fixed) and [a for a, _ in align] == sorted(a for a, _ in align)
            assert align[-1][1] == len(text)


def test_spans_serialize_and_docstrings_hold():
    spans = encode_with_offsets(tokenforge.get_encoding("o200k_base"), "héllo 🙂")
    data = json.loads(json.dumps([s.to_dict() for s in spans]))
    assert [d["id"] for d in data] == [s.id for s in spans]
    result = doctest.testmod(tokenforge.analysis.offsets)
    assert result.failed == 0 and result.attempted > 0


@pytest.mark.parametrize("trim", [True, False])
@pytest.mark.parametrize("prefix", [True, False])
@pytest.mark.parametrize("kind", ["ByteLevel", "RobertaProcessing", "Sequence"])
def test_trim_offsets_of_byte_level_post_processors_match_hf(shared_data, trim, prefix, kind):
    import json

    tokenizers = pytest.importorskip("tokenizers")
    base = json.loads((shared_data / "vocab" / "hf" / "gpt2_tokenizer.json").read_text())
    byte_level = {"type": "ByteLevel", "add_prefix_space": prefix, "trim_offsets": trim, "use_regex": True}
    roberta = {"type": "RobertaProcessing", "sep": ["<|endoftext|>", 50256], "cls": ["<|endoftext|>", 50256],
               "add_prefix_space": prefix, "trim_offsets": trim}
    post = {"ByteLevel": byte_level, "RobertaProcessing": roberta,
            "Sequence": {"type": "Sequence", "processors": [byte_level, {"type": "TemplateProcessing",
                         "single": [{"Sequence": {"id": "A", "type_id": 0}}],
                         "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}],
                         "special_tokens": {}}]}}[kind]
    doc = {**base, "post_processor": post}
    hf = tokenizers.Tokenizer.from_str(json.dumps(doc))
    tok = tokenforge.Tokenizer.from_dict(doc)
    for text in ["Hello world", "  two  spaces  ", " lead", "a\n\nb  c", "日本 語", "<|endoftext|> x"]:
        for pair in (None, " pair b "):
            want = hf.encode(text, pair)
            got = tok.encode_full(text, pair, allowed_special="all")
            assert (got.ids, got.offsets) == (want.ids, want.offsets), (text, pair)


# -- the byte-level fast path (running sums of token lengths) equals the general path -----------------------

_FAST_TEXT = st.lists(
    st.sampled_from(list("ab ç\n\t\x00é中👩\u200d\u0301") + ["<|endoftext|>", "<|fim_prefix|>", "  ", "🇫🇷"]),
    max_size=40,
).map("".join)


@settings(max_examples=300, deadline=None)
@given(text=st.lists(_FAST_TEXT, max_size=3).map("".join), policy=st.sampled_from(["none", "all", "ordinary"]))
def test_the_byte_level_fast_path_equals_the_general_path(text: str, policy: str) -> None:
    from tokenforge.encoding import token_spans

    kwargs = {"none": {}, "all": {"allowed_special": "all"}, "ordinary": {"disallowed_special": ()}}[policy]
    for name in BYTE_LEVEL:
        tok = tokenforge.get_encoding(name)
        try:
            general = token_spans(tok._encode_full(text, **kwargs, specials_in_mask=True), text, tok._token_bytes_of)
        except tokenforge.SpecialTokenError:
            with pytest.raises(tokenforge.SpecialTokenError):
                tok.encode_with_offsets(text, **kwargs)
            continue
        fast = tok._byte_level_spans(text, **kwargs)
        assert fast is not None  # these tokens spell the text: the fast path answers
        assert fast == general == tok.encode_with_offsets(text, **kwargs)


def test_the_fast_path_steps_aside_when_the_tokens_do_not_spell_the_text() -> None:
    tok = tokenforge.get_encoding("cl100k_base")
    assert tok._byte_level_spans("a\ud800b") is None  # a lone surrogate: the general path repairs it
    spans = tok.encode_with_offsets("a\ud800b")
    assert [(s.start, s.end) for s in spans][-1][1] == 3

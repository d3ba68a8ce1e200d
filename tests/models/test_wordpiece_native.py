"""The native WordPiece plan (BERT's split + greedy longest match in the compiled core)
gives the ids of the pure-Python stages on every input, vocabulary and setting, one
text at a time and in batches on any number of threads."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tokenforge import Tokenizer, _native, normalizers, pretokenizers
from tokenforge.models.wordpiece import WordPiece
from tokenforge.presets import bert_wordpiece

pytestmark = pytest.mark.skipif(not _native.available(), reason="the native core is not built")

# Every class the split distinguishes: each White_Space character, the characters
# str.isspace() accepts but White_Space does not, ASCII punctuation and symbols, Unicode
# punctuation (P*) and symbols that are not punctuation, letters of several scripts,
# combining marks, digits, emoji with ZWJ and modifiers, control characters, a lone
# surrogate (replaced by U+FFFD), and words long enough to pass max_input_chars_per_word.
_ATOMS = list(
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2005\u200a\u2028\u2029\u202f\u205f\u3000"
    "\x1c\x1d\x1e\x1f\u200b\ufeff"
    "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"
    "«»—–…、。「」¡¿‘’“”·"
    "€£¥©®°±×÷√∞"
    "abcxyzABCXYZéñüßçøÅ"
    "中文字東京タワーあいう한국어مرحباשלוםनमस्ते"
    "\u0301\u0308\u0903"
    "0123456789٣½"
    "\x00\x01\x7f"
) + ["👩\u200d👩\u200d👧", "🇯🇵", "👍🏽", "\ud800", "un", "aff", "able", "##", "[UNK]", "a" * 101, "b" * 100,
     "Hello", "world", "don't", "naïve", "café", "e\u0301"]

_text = st.lists(st.sampled_from(_ATOMS), max_size=40).map("".join)


def _pair(tok: Tokenizer) -> tuple[Tokenizer, Tokenizer]:
    assert tok.plan == "wordpiece", tok.plan
    ref = Tokenizer.from_dict(tok.to_dict(), backend="python")
    assert ref.plan == "python"
    return tok, ref


@pytest.fixture(scope="module")
def bert_pair(shared_data):
    return _pair(bert_wordpiece(shared_data / "vocab" / "wordpiece" / "bert-base-uncased_vocab.txt"))


@pytest.fixture(scope="module")
def bert_cased_pair(shared_data):
    return _pair(bert_wordpiece(shared_data / "vocab" / "wordpiece" / "bert-base-chinese_vocab.txt", lowercase=False))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=_text)
def test_bert_uncased_native_equals_python(bert_pair, text):
    tok, ref = bert_pair
    assert tok.encode(text, disallowed_special=()) == ref.encode(text, disallowed_special=())


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=_text)
def test_bert_cased_chinese_native_equals_python(bert_cased_pair, text):
    tok, ref = bert_cased_pair
    assert tok.encode(text, disallowed_special=()) == ref.encode(text, disallowed_special=())


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts=st.lists(_text, max_size=12), threads=st.integers(1, 4))
def test_batches_on_any_thread_count_equal_one_text_at_a_time(bert_pair, texts, threads):
    tok, ref = bert_pair
    want = [ref.encode(t, disallowed_special=()) for t in texts]
    assert tok.encode_batch(texts, num_threads=threads, disallowed_special=()) == want
    # without [CLS]/[SEP] the numpy batch comes straight from the native buffers
    bare, bare_ref = _pair(Tokenizer(tok.model, normalizer=tok.normalizer, pre_tokenizer=tok.pre_tokenizer))
    ids, offsets = bare.encode_batch_to_numpy(texts, num_threads=threads, disallowed_special=())
    assert [ids[offsets[k]:offsets[k + 1]].tolist() for k in range(len(texts))] == [
        bare_ref.encode(t, disallowed_special=()) for t in texts]


_tiny_tokens = st.lists(st.text("abé中#", min_size=1, max_size=5), max_size=25)


@settings(max_examples=300, deadline=None)
@given(_tiny_tokens, st.lists(st.sampled_from(["ab", "é", "中", "#", " ", ",", "a" * 9, "ba", "\u3000"]), max_size=15)
       .map("".join), st.sampled_from(["##", "#", "", "é"]), st.integers(0, 8))
def test_random_tiny_vocabularies_and_settings(tokens, text, prefix, max_chars):
    vocab = {"[UNK]": 0}
    for t in sorted(tokens):
        vocab.setdefault(t, len(vocab))
    model = WordPiece(vocab, continuing_subword_prefix=prefix, max_input_chars_per_word=max_chars)
    tok, ref = _pair(Tokenizer(model, pre_tokenizer=pretokenizers.BertPreTokenizer()))
    assert tok.encode(text) == ref.encode(text)
    tok2, ref2 = _pair(Tokenizer(model, normalizer=normalizers.BertNormalizer(), pre_tokenizer=pretokenizers.BertPreTokenizer()))
    assert tok2.encode(text) == ref2.encode(text)


def test_long_text_and_worst_cases_equal_python(bert_pair, shared_data):
    tok, ref = bert_pair
    text = (shared_data / "text" / "botchan.txt").read_text(encoding="utf-8")[:200_000]
    for t in (text, "x" * 100_000, "中" * 30_000, "!" * 50_000, " " * 50_000, "a," * 30_000, "abc" * 40_000):
        assert tok.encode(t, disallowed_special=()) == ref.encode(t, disallowed_special=())


def test_a_vocabulary_the_core_cannot_hold_keeps_the_python_stages():
    # a token with a lone surrogate is not UTF-8: the plan declines natively and still answers
    model = WordPiece({"[UNK]": 0, "a": 1, "\ud800": 2, "##b": 3})
    tok = Tokenizer(model, pre_tokenizer=pretokenizers.BertPreTokenizer())
    assert tok.plan == "wordpiece"
    assert tok.encode("ab a") == [1, 3, 1]
    assert tok.encode_batch(["ab", "a b"], num_threads=2) == [[1, 3], [1, 0]]


def test_a_very_long_vocabulary_line_costs_its_length_not_its_square(tmp_path):
    """Every prefix of every token was kept: one 200,000-character line in a vocab.txt needed
    ~20 GB. Only prefixes a word can reach (max_input_chars_per_word) are kept now; the child
    runs under a 2 GB address-space limit."""
    import subprocess
    import sys

    vocab = tmp_path / "vocab.txt"
    vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hello", "##s", "x" * 200_000]) + "\n")
    code = (
        "import resource\n"
        "resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))\n"
        "import tokenforge\n"
        f"tok = tokenforge.load({str(vocab)!r})\n"
        "assert tok.encode('hello hellos xx', add_special_tokens=False) == [5, 5, 6, 1]\n"
        "from tokenforge.models.wordpiece import WordPiece\n"
        "m = WordPiece(tok.model.get_vocab(), '[UNK]')\n"
        "assert m.encode_piece('hellos') == [5, 6]\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=300)

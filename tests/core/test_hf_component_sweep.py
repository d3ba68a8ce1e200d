"""Every HF component configuration, written as a ``tokenizer.json`` by HF tokenizers and
loaded by tokenforge, gives HF's ids, tokens, offsets, type ids and decoded text.

Each configuration is one normalizer, pre-tokenizer, model, post-processor or decoder
with one set of its options, inside an otherwise plain pipeline. HF builds it, trains
a small model for it on the inputs (so that the vocabulary has pieces that cross what
the component changes), and writes it; tokenforge loads that file. Both then encode
the same ~2,000 inputs: emoji and ZWJ sequences, combining marks, CJK, right-to-left
text, control characters, whitespace runs, digits, special-token strings (which HF
always matches as added tokens), and lines of ``tests/fixtures/formats/varied.txt``.
Configurations with a post-processor also encode pairs.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

import tokenforge

tokenizers = pytest.importorskip("tokenizers")
from tokenizers import Regex, decoders, models, normalizers, pre_tokenizers, processors, trainers  # noqa: E402

N, P, D, PP = normalizers, pre_tokenizers, decoders, processors

SPECIALS = ["[UNK]", "[CLS]", "[SEP]", "<s>", "</s>", "<pad>", "<|endoftext|>"]

FRAGMENTS = [
    # emoji, ZWJ sequences, flags, skin tones, variation selectors, keycaps
    "👩\u200d👩\u200d👧", "👨🏽\u200d💻", "🇯🇵🇫🇷", "❤\ufe0f", "1\ufe0f\u20e3", "🥰", "😀😀", "🫠", "☃", "✓",
    # combining marks and decomposable letters
    "e\u0301", "a\u0301b", "\u0301x", "ǅ", "Ω", "ώ", "Å", "ﬁ", "ẞ", "İ", "ﬀ", "Ⅻ", "½", "²³", "①",
    "Héllò", "naïve", "café", "Ａｂｃ", "ｶﾀｶﾅ",
    # CJK, Japanese, Korean, Thai, Devanagari
    "東京タワー", "、高さ333m。", "你好世界", "林檎", "한국어 텍스트", "ภาษาไทย", "नमस्ते", "𠀀𪚥",
    # right-to-left and bidi controls
    "مرحبا بالعالم", "עברית", "\u200f\u200e", "\u202ehello\u202c", "می\u200cخواهم", "١٢٣",
    # control characters, BOM, zero-width, replacement char, private use
    "\x00", "\x01\x1f", "\x7f", "\x85", "\xa0", "\ufeff", "\u200b", "\ufffd", "\ue000", "\x0b\x0c",
    # whitespace runs and line breaks
    " ", "  ", "   ", "\t", "\t\t", "\n", "\r\n", "\n\n", "\u3000", "\u2009", " \t \n ",
    # digits and numbers
    "0", "12345", "3.14159", "1,000,000", "007", "2024-01-01", "0x1F",
    # ASCII words and punctuation
    "Hello", "world", "don't", "I'm", "we've", "stop-me", "now—ok…", "?!?", "...", "(a)", "[x]", "{\"k\": 1}",
    "def f(x):", "return x**2", "a_b", "--a--b-", "#tag", "@user", "e-mail@ex.com", "C++", "$10",
    # the characters pipelines use themselves
    "▁", "▁▁x", "Ġ", "Ċ", "##ing", "</w>", "<0x41>", "|",
    # special-token strings, whole and broken
    "[CLS]", "[SEP]", "<s>", "</s>", "<pad>", "<|endoftext|>", "[UNK]", "<|endoftext", "[CLS", "<s",
]  # fmt: skip

SEPARATORS = ["", " ", " ", " ", "  ", "\t", "\n", "-", ""]


def _inputs() -> list[str]:
    rng = random.Random(27)
    varied = (Path(__file__).resolve().parents[1] / "fixtures" / "formats" / "varied.txt").read_bytes().decode("utf-8")
    lines = [line for line in varied.splitlines() if line.strip()][:150]
    out = ["", " ", "a", "  leading and trailing  ", *FRAGMENTS, *lines]
    while len(out) < 2000:
        parts = [rng.choice(FRAGMENTS) for _ in range(rng.randint(1, 7))]
        text = parts[0]
        for p in parts[1:]:
            text += rng.choice(SEPARATORS) + p
        out.append(text)
    return out


INPUTS = _inputs()
TRAIN = INPUTS[::2]


# ---------------------------------------------------------------------------
# configurations: (normalizer, pre_tokenizer, model kind, post_processor, decoder)

BPE_KINDS = ("bpe", "bpe-bytes", "bpe-suffix", "bpe-prefix", "bpe-fallback")


def _configs() -> dict[str, tuple]:
    R = Regex
    ws = P.WhitespaceSplit()
    configs: dict[str, tuple] = {}

    def add(name, normalizer=None, pre=ws, model="bpe", post=None, decoder=None):
        configs[name] = (normalizer, pre, model, post, decoder)

    # normalizers, each in front of a whitespace split
    add("norm-NFC", N.NFC())
    add("norm-NFD", N.NFD())
    add("norm-NFKC", N.NFKC())
    add("norm-NFKD", N.NFKD())
    add("norm-Lowercase", N.Lowercase())
    add("norm-StripAccents", N.Sequence([N.NFD(), N.StripAccents()]))
    add("norm-Bert", N.BertNormalizer())
    add("norm-Bert-no-clean", N.BertNormalizer(clean_text=False))
    add("norm-Bert-no-chinese", N.BertNormalizer(handle_chinese_chars=False))
    add("norm-Bert-accents-case", N.BertNormalizer(strip_accents=True, lowercase=False))
    add("norm-Bert-keep-accents", N.BertNormalizer(strip_accents=False, lowercase=True))
    add("norm-Strip", N.Strip(), pre=None)
    add("norm-Strip-left", N.Strip(left=True, right=False), pre=None)
    add("norm-Strip-right", N.Strip(left=False, right=True), pre=None)
    add("norm-Replace-string", N.Replace(" ", "▁"), pre=None)
    add("norm-Replace-regex", N.Replace(R(r"\s+"), " "))
    add("norm-Replace-digits", N.Replace(R(r"\d"), "<d>"))
    add("norm-Replace-delete", N.Replace(R(r"[aeiou]"), ""))
    add("norm-Prepend", N.Prepend("▁"), pre=None)
    add("norm-Nmt", N.Nmt())
    add("norm-ByteLevel", N.ByteLevel(), pre=None)
    add("norm-Precompiled", N.Precompiled(tokenforge.normalizers.Charsmap.named("nmt_nfkc").blob))
    add("norm-llama", N.Sequence([N.Prepend("▁"), N.Replace(" ", "▁")]), pre=None)
    add("norm-sequence", N.Sequence([N.NFKD(), N.StripAccents(), N.Lowercase(), N.Strip()]))

    # pre-tokenizers
    add("pre-Whitespace", pre=P.Whitespace())
    add("pre-WhitespaceSplit", pre=P.WhitespaceSplit())
    add("pre-Bert", pre=P.BertPreTokenizer())
    for behavior in ("removed", "isolated", "merged_with_previous", "merged_with_next", "contiguous"):
        add(f"pre-Punctuation-{behavior}", pre=P.Punctuation(behavior))
    add("pre-Digits", pre=P.Digits())
    add("pre-Digits-individual", pre=P.Digits(individual_digits=True))
    for scheme in ("always", "first", "never"):
        for split in (True, False):
            add(f"pre-Metaspace-{scheme}-{'split' if split else 'whole'}",
                pre=P.Metaspace(prepend_scheme=scheme, split=split),
                decoder=D.Metaspace(prepend_scheme=scheme, split=split))
    for prefix in (True, False):
        for use_regex in (True, False):
            add(f"pre-ByteLevel-{'prefix' if prefix else 'noprefix'}-{'regex' if use_regex else 'noregex'}",
                pre=P.ByteLevel(add_prefix_space=prefix, use_regex=use_regex), model="bpe-bytes",
                decoder=D.ByteLevel())
    add("pre-CharDelimiterSplit", pre=P.CharDelimiterSplit("-"))
    add("pre-FixedLength", pre=P.FixedLength(length=3))
    add("pre-UnicodeScripts", pre=P.UnicodeScripts())
    add("pre-Split-gpt4", pre=P.Split(R(r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""), "isolated"))
    add("pre-Split-string-removed", pre=P.Split(" ", "removed"))
    add("pre-Split-invert", pre=P.Split(R(r"\p{L}+"), "merged_with_next", invert=True))
    add("pre-Split-contiguous", pre=P.Split(R(r"\s"), "contiguous"))
    add("pre-sequence", pre=P.Sequence([P.WhitespaceSplit(), P.Digits(individual_digits=True), P.Punctuation()]))

    # models
    add("model-BPE-unk", model="bpe")
    add("model-BPE-byte-fallback", model="bpe-fallback", decoder=D.Sequence([D.ByteFallback(), D.Fuse()]))
    add("model-BPE-suffix", model="bpe-suffix", decoder=D.BPEDecoder(suffix="</w>"))
    add("model-BPE-prefix", model="bpe-prefix", decoder=D.WordPiece(prefix="##", cleanup=False))
    add("model-WordPiece", N.BertNormalizer(), P.BertPreTokenizer(), "wordpiece", decoder=D.WordPiece())
    add("model-WordLevel", pre=P.Whitespace(), model="wordlevel")
    add("model-Unigram", pre=P.Metaspace(), model="unigram", decoder=D.Metaspace())

    # post-processors (also encoded as pairs)
    bert_ids = [("[CLS]", 1), ("[SEP]", 2)]
    add("post-Bert", post=PP.BertProcessing(("[SEP]", 2), ("[CLS]", 1)))
    add("post-Roberta", pre=P.ByteLevel(add_prefix_space=True), model="bpe-bytes",
        post=PP.RobertaProcessing(("</s>", 4), ("<s>", 3)), decoder=D.ByteLevel())
    add("post-Roberta-no-trim", pre=P.ByteLevel(add_prefix_space=False), model="bpe-bytes",
        post=PP.RobertaProcessing(("</s>", 4), ("<s>", 3), trim_offsets=False), decoder=D.ByteLevel())
    add("post-Template-bert", post=PP.TemplateProcessing("[CLS] $A [SEP]", "[CLS] $A [SEP] $B:1 [SEP]:1", bert_ids))
    add("post-Template-llama", N.Sequence([N.Prepend("▁"), N.Replace(" ", "▁")]), None, "bpe-fallback",
        PP.TemplateProcessing("<s> $A", "<s> $A <s>:1 $B:1", [("<s>", 3)]),
        D.Sequence([D.Replace("▁", " "), D.ByteFallback(), D.Fuse(), D.Strip(" ", 1, 0)]))
    add("post-Template-multi-id", post=PP.TemplateProcessing(
        ["Q", "$A"], ["Q", "$A", "C", "$B:1"],
        [{"id": "Q", "ids": [3, 1], "tokens": ["<s>", "[CLS]"]}, {"id": "C", "ids": [2], "tokens": ["[SEP]"]}]))
    for trim in (True, False):
        for prefix in (True, False):
            add(f"post-ByteLevel-{'trim' if trim else 'keep'}-{'prefix' if prefix else 'noprefix'}",
                pre=P.ByteLevel(add_prefix_space=prefix), model="bpe-bytes",
                post=PP.ByteLevel(trim_offsets=trim, add_prefix_space=prefix), decoder=D.ByteLevel())
    add("post-Sequence", pre=P.ByteLevel(add_prefix_space=False), model="bpe-bytes",
        post=PP.Sequence([PP.ByteLevel(trim_offsets=True), PP.TemplateProcessing("[CLS] $A [SEP]", "[CLS] $A [SEP] $B:1 [SEP]:1", bert_ids)]),
        decoder=D.ByteLevel())

    # decoders
    add("dec-CTC", pre=P.FixedLength(length=1), decoder=D.CTC(pad_token="<pad>", word_delimiter_token="|"))
    add("dec-CTC-no-cleanup", pre=P.FixedLength(length=1), decoder=D.CTC(cleanup=False))
    add("dec-Replace", N.Replace(" ", "▁"), None, decoder=D.Replace("▁", " "))
    add("dec-Strip-left", decoder=D.Strip(content="H", left=1, right=0))
    add("dec-Strip-right", decoder=D.Strip(content="d", left=0, right=1))
    add("dec-WordPiece-cleanup", decoder=D.WordPiece(cleanup=True))
    add("dec-Metaspace-on-bpe", N.Replace(" ", "▁"), None, decoder=D.Metaspace())
    return configs


CONFIGS = _configs()


def _model_and_trainer(kind: str):
    vocab = 600
    common = dict(vocab_size=vocab, special_tokens=SPECIALS, show_progress=False)
    if kind == "wordpiece":
        return models.WordPiece(unk_token="[UNK]"), trainers.WordPieceTrainer(**common)
    if kind == "wordlevel":
        return models.WordLevel(unk_token="[UNK]"), trainers.WordLevelTrainer(**common)
    if kind == "unigram":
        return models.Unigram(), trainers.UnigramTrainer(unk_token="[UNK]", **common)
    if kind == "bpe-bytes":
        return models.BPE(), trainers.BpeTrainer(initial_alphabet=P.ByteLevel.alphabet(), **common)
    if kind == "bpe-suffix":
        return models.BPE(unk_token="[UNK]", end_of_word_suffix="</w>"), trainers.BpeTrainer(end_of_word_suffix="</w>", **common)
    if kind == "bpe-prefix":
        return (models.BPE(unk_token="[UNK]", continuing_subword_prefix="##"),
                trainers.BpeTrainer(continuing_subword_prefix="##", **common))
    if kind == "bpe-fallback":
        byte_tokens = [f"<0x{b:02X}>" for b in range(256)]
        trainer = trainers.BpeTrainer(vocab_size=vocab + 256, special_tokens=SPECIALS + byte_tokens, show_progress=False,
                                      limit_alphabet=60)
        return models.BPE(unk_token="[UNK]", byte_fallback=True, fuse_unk=True), trainer
    return models.BPE(unk_token="[UNK]", fuse_unk=False), trainers.BpeTrainer(limit_alphabet=200, **common)


def _hf_tokenizer(name: str):
    normalizer, pre, kind, post, decoder = CONFIGS[name]
    model, trainer = _model_and_trainer(kind)
    hf = tokenizers.Tokenizer(model)
    if normalizer is not None:
        hf.normalizer = normalizer
    if pre is not None:
        hf.pre_tokenizer = pre
    hf.train_from_iterator(TRAIN, trainer)
    if post is not None:
        hf.post_processor = post
    if decoder is not None:
        hf.decoder = decoder
    return hf


def _differences(hf, ours, pairs: bool) -> list[str]:
    out: list[str] = []
    want = hf.encode_batch(INPUTS)
    for text, w in zip(INPUTS, want):
        got = ours.encode_full(text, allowed_special="all")
        if got.ids != w.ids or got.offsets != [tuple(o) for o in w.offsets]:
            out.append(f"encode {text!r}: ids {got.ids} != {w.ids} or offsets {got.offsets} != {w.offsets}")
        elif got.tokens != w.tokens:
            out.append(f"tokens {text!r}: {got.tokens} != {w.tokens}")
        elif ours.decode(w.ids) != hf.decode(w.ids, skip_special_tokens=False):
            out.append(f"decode {w.ids}: {ours.decode(w.ids)!r} != {hf.decode(w.ids, skip_special_tokens=False)!r}")
        elif ours.decode(w.ids, skip_special_tokens=True) != hf.decode(w.ids):
            out.append(f"decode(skip_special_tokens) {w.ids}: {ours.decode(w.ids, skip_special_tokens=True)!r} != {hf.decode(w.ids)!r}")
        if len(out) >= 5:
            break
    if pairs:
        for a, b in zip(INPUTS[:300], INPUTS[300:600]):
            w = hf.encode(a, b)
            got = ours.encode_full(a, b, allowed_special="all")
            if (got.ids, got.type_ids, got.offsets, got.special_tokens_mask) != (
                w.ids, w.type_ids, [tuple(o) for o in w.offsets], w.special_tokens_mask
            ):
                out.append(f"pair {a!r} + {b!r}: {(got.ids, got.type_ids, got.offsets)} != {(w.ids, w.type_ids, w.offsets)}")
            if len(out) >= 10:
                break
    return out


@pytest.mark.parametrize("name", list(CONFIGS))
def test_component_configuration_gives_hf_ids_offsets_and_text(name):
    hf = _hf_tokenizer(name)
    data = json.loads(hf.to_str())
    ours = tokenforge.Tokenizer.from_dict(data)
    for stage in ("normalizer", "pre_tokenizer", "post_processor", "decoder"):
        assert ours.to_dict()[stage] == data[stage], stage
    problems = _differences(hf, ours, pairs=CONFIGS[name][3] is not None)
    assert not problems, f"{name}: tokenforge differs from HF tokenizers:\n" + "\n".join(problems)


def test_sweep_covers_every_hf_component_type():
    """Each normalizer, pre-tokenizer, post-processor and decoder type HF has is in a configuration."""
    seen: dict[str, set[str]] = {"normalizer": set(), "pre_tokenizer": set(), "post_processor": set(), "decoder": set()}

    def walk(stage, d):
        if d is None:
            return
        seen[stage].add(d["type"])
        for key in ("normalizers", "pretokenizers", "processors", "decoders"):
            for sub in d.get(key, ()):
                walk(stage, sub)

    for normalizer, pre, _kind, post, decoder in CONFIGS.values():
        for stage, comp in (("normalizer", normalizer), ("pre_tokenizer", pre), ("post_processor", post), ("decoder", decoder)):
            walk(stage, None if comp is None else json.loads(comp.__getstate__()))
    modules = {"normalizer": N, "pre_tokenizer": P, "post_processor": PP, "decoder": D}
    bases = {"Normalizer", "PreTokenizer", "PostProcessor", "Decoder", "DecodeStream"}
    for stage, module in modules.items():
        names = {n for n in dir(module) if isinstance(getattr(module, n), type) and n not in bases}
        missing = names - seen[stage]
        assert not missing, f"{stage}: no configuration uses {sorted(missing)}"

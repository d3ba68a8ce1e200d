"""Byte patches (MegaByte's fixed, BLT's entropy patches), the byte n-gram model, the
``patch`` command and ``compare``'s ``patches:`` rows."""

from __future__ import annotations

import argparse
import json
import math
import os
import time
from collections import defaultdict

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokenforge.analysis import patching as P
from tokenforge.analysis.compare import compare, udhr_sample
from tokenforge.errors import FileFormatError, InvalidArgumentError


def covers_once(spans, n):
    """The spans are non-empty, in order, and cover 0..n exactly once."""
    pos = 0
    for s, e in spans:
        assert s == pos and e > s
        pos = e
    assert pos == n


# ------------------------------------------------------------------ fixed patches
@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=200), st.integers(1, 17))
def test_fixed_patches_cover_every_byte_once(data, size):
    spans = P.fixed_patches(data, size)
    covers_once(spans, len(data))
    assert all(e - s == size for s, e in spans[:-1])
    assert len(spans) == math.ceil(len(data) / size)


def test_fixed_patches_of_text_are_in_bytes():
    assert P.fixed_patches("héllo", 2) == [(0, 2), (2, 4), (4, 6)]
    assert P.patch_texts("héllo", [(0, 2), (2, 4)]) == [b"h\xc3", b"\xa9l"]
    with pytest.raises(InvalidArgumentError):
        P.fixed_patches("x", 0)


# ------------------------------------------------------------------ the model, by hand
def test_unigram_model_entropy_by_hand():
    # order 1: P(w) = max(c(w) - D, 0)/N + D * types/N * 1/256, D = n1/(n1 + 2 n2)
    m = P.train_byte_model([b"aab"], order=1, min_count=1)
    d = 1 / (1 + 2 * 1)
    assert m.discounts == (round(d, 6),)
    gamma = d * 2 / 3
    p = np.full(256, gamma / 256)
    p[ord("a")] += (2 - d) / 3
    p[ord("b")] += (1 - d) / 3
    assert p.sum() == pytest.approx(1.0)
    h = float(-(p * np.log2(p)).sum())
    assert m.context_entropy(b"") == pytest.approx(h, abs=1e-4)
    assert m.entropies(b"xyz").tolist() == pytest.approx([h] * 3, abs=1e-4)


def _brute_kn(texts, order):
    """Interpolated Kneser-Ney written out with dense 256-vectors (the reference)."""
    raw = defaultdict(lambda: defaultdict(int))  # highest order: context -> next -> count
    grams = set()
    for t in texts:
        for n in range(1, order + 1):
            for i in range(len(t) - n + 1):
                grams.add(t[i:i + n])
        for i in range(order - 1, len(t)):
            raw[t[i - order + 1:i]][t[i]] += 1
    cont = defaultdict(lambda: defaultdict(int))  # lower orders: distinct left neighbours
    for g in grams:
        if len(g) >= 2 and len(g) - 1 < order:
            suf = g[1:]
            cont[suf[:-1]][suf[-1]] += 1

    def discount(table, k):
        counts = [c for ctx, nxt in table.items() if len(ctx) == k for c in nxt.values()]
        n1, n2 = counts.count(1), counts.count(2)
        return 0.5 if n1 + 2 * n2 == 0 else min(max(n1 / (n1 + 2 * n2), 0.05), 0.95)

    memo = {}

    def dist(ctx):
        if ctx in memo:
            return memo[ctx]
        k = len(ctx)
        table = raw if k == order - 1 else cont
        parent = np.full(256, 1 / 256) if k == 0 else dist(ctx[1:])
        nxt = table.get(ctx)
        if not nxt:
            out = parent
        else:
            d = discount(table, k)
            tot = sum(nxt.values())
            out = d * len(nxt) / tot * parent
            for w, c in nxt.items():
                out[w] += max(c - d, 0) / tot
        memo[ctx] = out
        return out

    def entropy(ctx):
        p = dist(ctx)
        return float(-(p * np.log2(p)).sum())

    return entropy


@pytest.mark.parametrize("order", [2, 3, 4])
def test_model_entropies_match_a_dense_reference(order):
    texts = [b"abracadabra cadabra", b"abba baba \xe4\xb8\xad\xe6\x96\x87 abab", b"ab"]
    m = P.train_byte_model(texts, order=order, min_count=1)
    ref = _brute_kn(texts, order)
    probe = b"abracadabra xyz \xe4\xb8\xad ba"
    got = m.entropies(probe)
    want = [ref(probe[max(0, t - order + 1):t]) for t in range(len(probe))]
    assert got.tolist() == pytest.approx(want, abs=2e-4)
    assert sum(1 for x in probe if x) == len(got)


# ------------------------------------------------------------------ boundary rules
def test_rules_on_given_entropies():
    h = [5.0, 1.0, 2.0, 4.5, 0.5, 0.7, 3.0]
    assert P.entropy_boundaries(h, 2.5, "global").tolist() == [True, False, False, True, False, False, True]
    # relative: H(x_t) - H(x_{t-1}) > 1.0 at t = 3 (2.5) and t = 6 (2.3); not at t = 2 (1.0, not >)
    assert P.entropy_boundaries(h, 1.0, "relative").tolist() == [True, False, False, True, False, False, True]
    assert P.entropy_boundaries(h, 0.9, "relative").tolist() == [True, False, True, True, False, False, True]
    assert P.entropy_boundaries([], 1.0).tolist() == []
    with pytest.raises(InvalidArgumentError):
        P.entropy_boundaries(h, 1.0, "monotone")


@pytest.fixture(scope="module")
def tiny():
    return P.train_byte_model([b"the cat sat on the mat. the cat ate.", b"a 12 b 93 c 40"], order=3, min_count=1)


@pytest.mark.parametrize("rule,theta", [("global", 3.0), ("global", 5.0), ("relative", 0.5), ("relative", 2.0)])
def test_entropy_patches_follow_the_rule(tiny, rule, theta):
    data = b"the cat sat on 12 mats"
    h = tiny.entropies(data)
    spans = P.patches(data, tiny, threshold=theta, rule=rule)
    covers_once(spans, len(data))
    starts = {s for s, _ in spans}
    for t in range(len(data)):
        if t == 0:
            expected = True
        elif rule == "global":
            expected = h[t] > theta
        else:
            expected = h[t] - h[t - 1] > theta
        assert (t in starts) == bool(expected), t


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=80), st.sampled_from(P.RULES), st.floats(-1, 9))
def test_entropy_patches_cover_every_byte_once(text, rule, theta):
    model = P.default_model()
    data = text.encode("utf-8", "surrogatepass")
    covers_once(P.patches(text, model, threshold=theta, rule=rule), len(data))
    assert len(model.entropies(text)) == len(data)


def test_unseen_context_takes_its_longest_seen_suffix(tiny):
    assert tiny.context_entropy(b"\x00\x01 t") == tiny.context_entropy(b" t")
    assert tiny.context_entropy(b"\xff\xfe") == tiny.context_entropy(b"")


# ------------------------------------------------------------------ determinism, files
def test_training_is_deterministic_and_saves_byte_identical(tmp_path):
    from tokenforge.corpus import embedded_corpus

    texts = [lang.train_text() for lang in embedded_corpus()][:3]
    a, b = P.train_byte_model(texts, order=4), P.train_byte_model(texts, order=4)
    assert a == b and a.to_json() == b.to_json()
    a.save(tmp_path / "a.json")
    b.save(tmp_path / "b.json")
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]


def test_save_load_round_trip(tmp_path):
    model = P.default_model()
    path = tmp_path / "bytes.json"
    model.save(path)
    back = P.ByteNgramModel.load(path)
    assert back == model
    text = udhr_sample()["de"]
    assert np.array_equal(back.entropies(text), model.entropies(text))
    assert P.patches(text, back) == P.patches(text, model)
    assert path.stat().st_size < 2_000_000


def test_bad_model_files(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    with pytest.raises(FileFormatError):
        P.ByteNgramModel.load(bad)
    bad.write_text(json.dumps({"format": "something else"}))
    with pytest.raises(FileFormatError, match="not a tokenforge byte model"):
        P.ByteNgramModel.load(bad)
    d = P.train_byte_model([b"abcabc"], order=2, min_count=1).to_dict()
    d["levels"][1]["contexts"] = "abc"
    with pytest.raises(FileFormatError):
        P.ByteNgramModel.from_dict(d)


def test_one_megabyte_is_fast():
    model = P.default_model()
    data = (udhr_sample()["en"].encode() + bytes(range(256))) * (1_048_576 // 2261 + 1)
    t0 = time.perf_counter()
    spans = P.patches(data[:1_048_576], model)
    elapsed = time.perf_counter() - t0
    covers_once(spans, 1_048_576)
    assert elapsed < 10  # about 0.3 s


# ------------------------------------------------------------------ compare rows
#: Numbers, as in tables and dates (the UDHR sample has no digits).
DIGITS = "1948 2023-12-10 75 193 3.14159 271828 58 8 48 1024 65536 42 +44 20 7946 0958 17:30 99.5%"


def test_compare_patch_rows_on_the_udhr_sample():
    texts = {**udhr_sample(), "digits": DIGITS}
    r = compare(["cl100k_base", "patches:entropy", "patches:fixed4"], texts)
    assert r.tokenizers == ("cl100k_base", "patches:entropy", "patches:fixed4")
    bpp = {name: r.row("patches:entropy", name).metrics.bytes_per_token for name in texts}
    for name in texts:
        m = r.row("patches:fixed4", name).metrics
        assert m.tokens == math.ceil(m.bytes / 4)
        assert r.row("patches:entropy", name).metrics.unk is None
    # dense (short patches) on digits and on a script the model never saw (Amharic),
    # sparse (long patches) on common English words
    assert bpp["digits"] < 1.5 and bpp["am"] < 1.5
    assert bpp["en"] > 3.5
    assert bpp["en"] > max(bpp["sw"], bpp["fr"], bpp["es"], bpp["zh"])
    table = r.format("table")
    assert "patches:entropy" in table and "bytes per patch" in table


def test_patch_specs():
    assert P.Patcher.from_spec("patches:fixed3").encode("abcdefg") == [3, 3, 1]
    assert P.Patcher.from_spec("patches:fixed:2").encode("abc") == [2, 1]
    rel = P.Patcher.from_spec("patches:relative:0.5")
    assert (rel.kind, rel.value) == ("relative", 0.5)
    assert P.Patcher.from_spec("patches:entropy").kind == "global"
    for bad in ("patches:", "patches:fixed0", "patches:fixedx", "patches:entropy:nan", "patches:gzip"):
        with pytest.raises(InvalidArgumentError):
            P.Patcher.from_spec(bad)


# ------------------------------------------------------------------ the command
def run_patch(argv, capsys):
    from tokenforge.cli import patch

    parser = argparse.ArgumentParser(prog="tokenforge")
    sub = parser.add_subparsers(dest="command", required=True)
    patch.register(sub)
    args = parser.parse_args(["patch", *argv])
    assert not hasattr(args, "tokenizer")  # main() would resolve it as a tokenizer
    code = args.func(args)
    return code, capsys.readouterr().out


def test_cli_patch_text(capsys):
    code, out = run_patch(["the cat 1948", "--entropies"], capsys)
    assert code == 0
    bar = out.splitlines()[3]
    assert bar.replace("|", "") == "the␣cat␣1948"
    assert "1|9|4|8" in bar
    assert "bytes/patch" in out and "H(x_t) per byte" in out


def test_cli_patch_json_and_fixed(capsys):
    code, out = run_patch(["hello world", "--fixed", "4", "--json"], capsys)
    d = json.loads(out)
    assert code == 0 and d["patches"] == 3 and [s["text"] for s in d["spans"]] == ["hell", "o wo", "rld"]
    code, out = run_patch(["hello world", "--rule", "relative", "--threshold", "0.5", "--json"], capsys)
    d = json.loads(out)
    h = [x for s in d["spans"] for x in s["entropies"]]
    starts = [s["start"] for s in d["spans"]]
    assert starts == [0] + [t for t in range(1, len(h)) if h[t] - h[t - 1] > 0.5]


def test_cli_train_and_use_a_model(tmp_path, capsys):
    corpus = tmp_path / "c.txt"
    corpus.write_text("the cat sat on the mat\n" * 20)
    out_path = tmp_path / "m.json"
    code, out = run_patch(["--train", str(corpus), "--out", str(out_path), "--order", "3", "--min-count", "1"], capsys)
    assert code == 0 and "wrote" in out
    model = P.ByteNgramModel.load(out_path)
    assert model.order == 3
    code, out = run_patch(["the cat", "--model", str(out_path), "--json"], capsys)
    d = json.loads(out)
    assert d["model"] == str(out_path)
    assert [s["start"] for s in d["spans"]] == [s for s, _ in P.patches("the cat", model)]
    with pytest.raises(InvalidArgumentError, match="--out"):
        run_patch(["--train", str(corpus)], capsys)


def test_docstring_examples():
    import doctest

    assert doctest.testmod(P).failed == 0

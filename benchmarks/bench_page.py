"""The token page on 100 KB of text: the server's answer and the browser's drawing.

Two figures, on the same ~100 KB multilingual text (the embedded corpus: prose in
twelve languages and Python code):

* **API**: ``POST /api/encode`` in-process (Starlette's test client: JSON in, ids,
  token strings, hex bytes and code-point offsets out) for three tokenizers, against
  the reference library encoding the same text with the same tokenizer in the same
  run: tiktoken (cl100k_base, ids only), sentencepiece (a Unigram ``.model``,
  ``encode`` ids; and ``encode_as_proto`` with offsets) and HF tokenizers (a
  BERT WordPiece ``tokenizer.json``, ``encode`` with offsets). The ratio is the page's
  whole answer over the library's bare encode, so it is the price of the extra
  fields plus JSON.
* **Browser**: Chromium (headless, via Playwright) with the page open on those three
  tokenizers side by side; the text is pasted into the box and the clock stops when
  all three columns have drawn their tokens (after the page's 150 ms typing delay,
  which is included). The figure to meet is under a second.

Run::

    source /work/venv/bin/activate
    python benchmarks/bench_page.py [--runs 5] [--kb 100]
"""

from __future__ import annotations

import argparse
import socket
import statistics
import sys
import threading
import time
from pathlib import Path

SHARED = Path("/work/shared/data/vocab")
MODEL = SHARED / "sentencepiece" / "albert_spiece.model"
BERT = SHARED / "hf" / "bert-base-uncased_wordpiece_tokenizer.json"
TIKTOKEN_CL100K = SHARED / "tiktoken" / "cl100k_base.tiktoken"


def corpus_text(kb: int) -> str:
    from tokenforge.corpus import embedded_corpus

    parts = []
    for lang in embedded_corpus():
        parts.append(lang.heldout_text())
    text = "\n".join(parts)
    while len(text.encode()) < kb * 1000:
        text += "\n" + text
    data = text.encode()[: kb * 1000]
    return data.decode("utf-8", "ignore")


def best(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def bench_api(text: str, runs: int) -> list[tuple[str, str, float, float]]:
    import sentencepiece as spm
    import tiktoken
    import tokenizers
    from tiktoken.load import load_tiktoken_bpe
    from starlette.testclient import TestClient

    from tokenforge.encodings import ENCODINGS
    from tokenforge.web.app import create_app, default_registry

    reg = default_registry(paths=("cl100k", str(MODEL), str(BERT)))
    client = TestClient(create_app(reg))
    names = client.get("/api/tokenizers").json()["default"]
    spec = ENCODINGS["cl100k_base"]
    tt = tiktoken.Encoding("cl100k_base", pat_str=_cl100k_pattern(),
                           mergeable_ranks=load_tiktoken_bpe(str(TIKTOKEN_CL100K)),
                           special_tokens=dict(spec.special_tokens))
    sp = spm.SentencePieceProcessor(model_file=str(MODEL))
    hf = tokenizers.Tokenizer.from_file(str(BERT))
    refs = {
        names[0]: ("tiktoken encode", lambda: tt.encode(text, allowed_special="all")),
        names[1]: ("sentencepiece encode", lambda: sp.encode(text)),
        names[2]: ("tokenizers encode (offsets)", lambda: hf.encode(text)),
    }
    # same ids: the page shows what the reference gives
    for name in names:
        got = client.post("/api/encode", json={"tokenizer": name, "text": text}).json()["ids"]
        want = {names[0]: lambda: tt.encode(text, allowed_special="all"), names[1]: lambda: sp.encode(text),
                names[2]: lambda: hf.encode(text).ids}[name]()
        if got != want:
            print(f"WARNING: {name}: the page's ids differ from the reference library's", file=sys.stderr)
    rows = []
    for name in names:
        page = best(lambda: client.post("/api/encode", json={"tokenizer": name, "text": text}).json(), runs)
        label, ref = refs[name]
        lib = best(ref, runs)
        rows.append((name, label, page, lib))
    sp_offsets = best(lambda: sp.encode_as_proto(text), runs)
    rows.append((names[1], "sentencepiece encode_as_proto (offsets)", rows[1][2], sp_offsets))
    return rows


def _cl100k_pattern() -> str:
    from tokenforge.pretokenizers import PATTERNS

    return PATTERNS["cl100k"]


def bench_browser(text: str, runs: int) -> list[float] | str:
    import shutil

    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return "playwright is not installed"
    chromium = shutil.which("chromium")
    if chromium is None:
        return "no chromium executable"
    import uvicorn

    from tokenforge.web.app import create_app, default_registry

    app = create_app(default_registry(paths=("cl100k", str(MODEL), str(BERT))))
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    server = uvicorn.Server(uvicorn.Config(app, log_level="error", lifespan="off"))
    threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True).start()
    while not server.started:
        time.sleep(0.02)
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/"
    times = []
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1600, "height": 1000})
            page.goto(url)
            poll_ready(page, "document.body.dataset.ready === '1'")
            for k in range(runs):
                variant = text if k % 2 == 0 else text[:-1]  # a change every time
                page.evaluate("() => { const t = document.getElementById('text'); t.value = ''; "
                              "t.dispatchEvent(new Event('input', {bubbles: true})); }")
                poll_ready(page, "document.body.dataset.busy !== '1'")
                start = time.perf_counter()
                page.evaluate("(s) => { const t = document.getElementById('text'); t.value = s; "
                              "t.dispatchEvent(new Event('input', {bubbles: true})); }", variant)
                poll_ready(page, "document.body.dataset.busy !== '1' && "
                                 "document.querySelectorAll('.column').length === 3 && "
                                 "[...document.querySelectorAll('.column')].every(c => c.querySelector('.tok'))")
                times.append(time.perf_counter() - start)
            browser.close()
    finally:
        server.should_exit = True
    return times


def poll_ready(page, condition: str, timeout: float = 60.0) -> None:
    """Poll ``condition`` (the page's CSP forbids Playwright's wait_for_function)."""
    deadline = time.monotonic() + timeout
    while not page.evaluate(f"() => Boolean({condition})"):
        if time.monotonic() > deadline:
            raise TimeoutError(condition)
        time.sleep(0.005)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--kb", type=int, default=100)
    args = ap.parse_args()
    text = corpus_text(args.kb)
    print(f"text: {len(text.encode()):,} UTF-8 bytes, {len(text):,} characters; best of {args.runs} runs")
    print()
    print(f"{'tokenizer':<42} {'reference call':<52} {'page API':>9} {'reference':>9} {'ratio':>7}")
    for name, label, page, lib in bench_api(text, args.runs):
        print(f"{name:<42} {label:<52} {page * 1000:>7.1f}ms {lib * 1000:>7.1f}ms {page / lib:>6.2f}x")
    print()
    result = bench_browser(text, args.runs)
    if isinstance(result, str):
        print(f"browser: skipped ({result})")
    else:
        print(f"browser: paste {args.kb} KB -> three columns drawn: best {min(result) * 1000:.0f} ms, "
              f"median {statistics.median(result) * 1000:.0f} ms (includes the 150 ms typing delay)")


if __name__ == "__main__":
    main()

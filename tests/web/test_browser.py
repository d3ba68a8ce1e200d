"""The token page in a real browser (Playwright + Chromium) against the real server.

Needs playwright (``pip install playwright``) and a Chromium executable: ``chromium``
on PATH or ``$TOKENFORGE_CHROMIUM``; skipped otherwise. Screenshots go to
``$TOKENFORGE_TEST_ARTIFACTS`` (else the test's tmp_path).

The page's Content-Security-Policy forbids eval, so waits poll with ``page.evaluate``
(which CSP does not block) rather than ``page.wait_for_function``.
"""

from __future__ import annotations

import html
import json
import lzma
import os
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("playwright")
pytest.importorskip("starlette")
uvicorn = pytest.importorskip("uvicorn")

from playwright.sync_api import Page, sync_playwright  # noqa: E402

import tokenforge  # noqa: E402
from tokenforge.web import views  # noqa: E402
from tokenforge.web.app import create_app, default_registry  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "differential"
STATIC = ROOT / "src" / "tokenforge" / "web" / "static"

CL = "cl100k_base"
SPM = "spm_test_unigram.model"
BERT = "bert-base-chinese/vocab.txt"

# emoji (with a skin-tone modifier), CJK, markup, a bidi override, a quote mix, digits; no NUL
HOSTILE = ('Héllo "wörld" \'single\' «guillemets» “curly” 日本語の文 🎉👍🏽\n'
           '<script>alert(1)</script> <img src=x onerror=alert(2)> \u202eevil\u202c & done 42')


def _chromium() -> str | None:
    env = os.environ.get("TOKENFORGE_CHROMIUM")
    if env:
        return env if Path(env).exists() else None
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The real app on 127.0.0.1 (a free port) in a background thread: cl100k_base, a
    SentencePiece Unigram model and a BERT WordPiece vocabulary from tests/fixtures."""
    d = tmp_path_factory.mktemp("web_tokenizers")
    spm = d / SPM
    spm.write_bytes(lzma.decompress((FIXTURES / f"{SPM}.xz").read_bytes()))
    (d / "bert-base-chinese").mkdir()
    vocab = d / "bert-base-chinese" / "vocab.txt"
    vocab.write_bytes(lzma.decompress((FIXTURES / "bert-base-chinese_vocab.txt.xz").read_bytes()))
    registry = default_registry(paths=("cl100k", str(spm), str(vocab)))
    assert registry.requested == [CL, SPM, BERT]

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    port = sock.getsockname()[1]
    srv = uvicorn.Server(uvicorn.Config(create_app(registry), log_level="warning", lifespan="off"))
    thread = threading.Thread(target=srv.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not srv.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the test server did not start")
        time.sleep(0.02)
    try:
        yield {"url": f"http://127.0.0.1:{port}/", "tok": {n: registry.get(n) for n in registry.requested}}
    finally:
        srv.should_exit = True
        thread.join(timeout=5)
        sock.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    exe = _chromium()
    if exe is None:
        pytest.skip("no Chromium executable: install chromium or set TOKENFORGE_CHROMIUM")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=exe, args=["--no-sandbox"])
        try:
            yield b
        finally:
            b.close()


class Watch:
    """What a page did that it must not: dialogs (alert), CSP violations, script errors."""

    def __init__(self, page: Page) -> None:
        self.dialogs: list[str] = []
        self.problems: list[str] = []
        page.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))
        page.on("pageerror", lambda e: self.problems.append(f"page error: {e}"))
        page.on("console", lambda m: self.problems.append(m.text) if m.type == "error" else None)


@pytest.fixture
def page(browser: Any) -> Iterator[Page]:
    ctx = browser.new_context(viewport={"width": 1400, "height": 900})
    pg = ctx.new_page()
    pg.set_default_timeout(15000)
    try:
        yield pg
    finally:
        ctx.close()


@pytest.fixture
def watch(page: Page) -> Watch:
    return Watch(page)


@pytest.fixture
def artifacts(tmp_path: Path) -> Path:
    env = os.environ.get("TOKENFORGE_TEST_ARTIFACTS")
    out = Path(env) if env else tmp_path
    out.mkdir(parents=True, exist_ok=True)
    return out


# ---------------------------------------------------------------------------- helpers


def wait_until(page: Page, script: str, arg: Any = None, timeout: float = 15.0) -> Any:
    """Poll ``script`` (a JS function of one argument) until it returns something truthy."""
    deadline = time.monotonic() + timeout
    while True:
        value = page.evaluate(script, arg)
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {script} ({arg!r})")
        time.sleep(0.03)


def settle(page: Page) -> None:
    """Wait until the page has no debounce pending and no request in flight."""
    wait_until(page, "() => document.body.dataset.ready === '1' && document.body.dataset.busy === '0'")


def open_page(page: Page, url: str) -> None:
    page.goto(url)
    settle(page)


def set_text(page: Page, text: str) -> None:
    """Fill most of the text at once, then type the end key by key (newer requests supersede)."""
    head, tail = text[:-4], text[-4:]
    page.fill("#text", head)
    page.focus("#text")
    page.evaluate("() => { const t = document.getElementById('text'); t.selectionStart = t.selectionEnd = t.value.length; }")
    page.keyboard.type(tail, delay=15)
    assert page.input_value("#text") == text
    settle(page)


def column_names(page: Page) -> list[str]:
    return page.eval_on_selector_all(".column", "cols => cols.map(c => c.dataset.tokenizer)")


def column_ids(page: Page, i: int) -> list[int]:
    return page.evaluate(
        "i => [...document.querySelectorAll('.column')[i].querySelectorAll('.tokens .tok')].map(s => Number(s.dataset.id))", i
    )


def marked_indices(page: Page, i: int, cls: str) -> list[int]:
    """Indices (in the encode answer) of column i's token spans with class ``cls``."""
    return page.evaluate(
        "([i, cls]) => [...document.querySelectorAll('.column')[i].querySelectorAll('.tokens .tok')]"
        ".flatMap((s, k) => s.classList.contains(cls) ? [k] : [])", [i, cls]
    )


def token(i: int, k: int) -> str:
    """A selector for token k (its index in the encode answer) of column i."""
    return f".column >> nth={i} >> .tokens .tok >> nth={k}"


def column_stats(page: Page, i: int) -> dict[str, str]:
    return page.evaluate(
        "i => Object.fromEntries([...document.querySelectorAll('.column')[i].querySelectorAll('[data-stat]')]"
        ".map(d => [d.dataset.stat, d.textContent]))", i
    )


# the text the mirror behind the input marks: a CSS highlight, or a <mark> where there is no Highlight API
BACKDROP_MARK = """() => {
    const h = window.CSS && CSS.highlights && CSS.highlights.get('tf-cover');
    if (h) return [...h].map(r => r.toString()).join('');
    const m = document.querySelector('#backdrop mark');
    return m ? m.textContent : null;
}"""


def expected_ids(server: dict[str, Any], name: str, text: str) -> list[int]:
    return list(server["tok"][name].encode(text, allowed_special="all"))


# ---------------------------------------------------------------------------- tests


def test_typed_text_gives_the_library_ids_and_counts_and_no_injection(page: Page, watch: Watch, server: dict[str, Any], artifacts: Path) -> None:
    open_page(page, server["url"])
    assert column_names(page) == [CL, SPM, BERT]
    scripts_before = page.evaluate("() => document.querySelectorAll('script').length")
    set_text(page, HOSTILE)
    n_bytes = len(HOSTILE.encode("utf-8"))
    for i, name in enumerate([CL, SPM, BERT]):
        ids = expected_ids(server, name, HOSTILE)
        assert column_ids(page, i) == ids, name
        stats = column_stats(page, i)
        assert stats["tokens"] == str(len(ids))
        assert stats["chars"] == str(len(HOSTILE))  # code points, not UTF-16 units
        assert stats["bytes"] == str(n_bytes)
        assert stats["bpt"] == f"{n_bytes / len(ids):.2f}"
    # every token string arrived as text: nothing was parsed as markup
    assert page.evaluate("() => document.querySelectorAll('script').length") == scripts_before
    assert page.evaluate("() => document.querySelectorAll('img, .tokens *:not(span):not(br)').length") == 0
    shown = page.evaluate("() => [...document.querySelectorAll('.column')[0].querySelectorAll('.tok')].map(s => s.textContent).join('')")
    assert "<script>alert(1)</script>" in shown  # as text
    assert "\u202e" not in shown and "<0xE2><0x80><0xAE>" in shown  # the bidi override made visible
    page.hover(".column >> nth=0 >> .tok >> nth=5")  # hovering must not run anything either
    page.wait_for_timeout(100)
    assert watch.dialogs == []
    assert watch.problems == []
    page.screenshot(path=str(artifacts / "browser-typed.png"), full_page=True)


def test_hover_shows_id_hex_and_merge_tree_with_ranks(page: Page, server: dict[str, Any]) -> None:
    text = "Tokenization of internationalization"
    open_page(page, server["url"] + "#t=" + text.replace(" ", "+") + "&c=" + CL)
    tok = server["tok"][CL]
    ids = tok.encode(text)
    assert column_ids(page, 0) == ids
    k = max(range(len(ids)), key=lambda i: len(tok.decode_bytes([ids[i]])))  # the longest token: a deep tree
    page.hover(token(0, k))
    wait_until(page, "id => document.getElementById('d-id').textContent === id", str(ids[k]))
    assert page.text_content("#d-index") == f"{k} of {len(ids)}"
    info = views.token_view(tok, ids[k])
    assert page.text_content("#d-hex") == " ".join(info["hex"][j:j + 2] for j in range(0, len(info["hex"]), 2))
    wait_until(page, "() => !document.getElementById('d-tree-wrap').hidden")
    ranks = page.eval_on_selector_all("#d-tree .rank", "r => r.map(x => x.textContent)")

    def walk(nodes: list[dict[str, Any]]) -> list[str]:
        out = []
        for n in nodes:
            out.append(f"rank {n['rank']}" if n["rank"] is not None else f"byte {n['hex']}")
            out += walk(n["children"])
        return out

    assert ranks == walk(info["tree"])
    assert any(r.startswith("rank ") for r in ranks)
    assert page.text_content("#d-rank") == str(info["rank"])
    # the covered range is marked in the mirror of the input
    start, end = tok.encode_with_offsets(text)[k].start, tok.encode_with_offsets(text)[k].end
    assert page.evaluate(BACKDROP_MARK) == text[start:end]
    assert page.text_content("#d-text") == text[start:end]
    # keyboard: one token per column is in the tab order; Tab reaches it, focus shows its details,
    # the arrow keys move the focus (and the details) token by token, Enter shows them again
    assert page.locator(".column >> nth=0 >> .tokens .tok[tabindex='0']").count() == 1
    assert page.locator(".tokens .tok[tabindex]").count() == 1
    page.focus(".column >> nth=0 >> select")  # then the remove button (disabled: one column)
    page.keyboard.press("Tab")
    assert page.evaluate("() => document.activeElement.matches('.column:first-child .tokens .tok')")
    wait_until(page, "() => document.getElementById('d-index').textContent.startsWith('0 of ')")
    assert page.text_content("#d-id") == str(ids[0])
    j = min(k + 1, len(ids) - 1)
    for _ in range(j):
        page.keyboard.press("ArrowRight")
    wait_until(page, "id => document.getElementById('d-id').textContent === id", str(ids[j]))
    assert page.text_content("#d-index") == f"{j} of {len(ids)}"
    assert page.evaluate("() => document.activeElement.getAttribute('tabindex')") == "0"
    assert page.locator(".column >> nth=0 >> .tokens .tok[tabindex='0']").count() == 1
    page.keyboard.press("ArrowLeft")
    wait_until(page, "id => document.getElementById('d-id').textContent === id", str(ids[j - 1]))
    page.keyboard.press("Enter")
    assert page.text_content("#d-index") == f"{j - 1} of {len(ids)}"
    # a click focuses the token clicked
    page.click(token(0, 0))
    wait_until(page, "() => document.getElementById('d-index').textContent.startsWith('0 of ')")
    assert page.evaluate("() => document.activeElement.matches('.column:first-child .tokens .tok')")


def test_pasting_100_kb_draws_every_token(page: Page, watch: Watch, server: dict[str, Any]) -> None:
    """About 30,000 tokens per column: drawn in blocks, in slices after the first screen; once
    the page is settled every token is drawn, in order, with its id (no timing asserted here:
    benchmarks/bench_page.py measures it)."""
    from tokenforge.corpus import embedded_corpus

    text = "\n".join(lang.heldout_text() for lang in embedded_corpus())
    while len(text.encode()) < 100_000:
        text += "\n" + text
    text = text.encode()[:100_000].decode("utf-8", "ignore")
    open_page(page, server["url"])
    page.evaluate("s => { const t = document.getElementById('text'); t.value = s;"
                  " t.dispatchEvent(new Event('input', {bubbles: true})); }", text)
    settle(page)
    for i, name in enumerate([CL, SPM, BERT]):
        ids = expected_ids(server, name, text)
        assert len(ids) > 15_000, name
        assert column_stats(page, i)["tokens"] == str(len(ids))
        assert column_ids(page, i) == ids, name
    assert page.locator(".tokens .hint").count() == 0  # nothing left undrawn
    # hovering a token far down shows its details and marks it in the mirror of the input
    k = len(expected_ids(server, CL, text)) - 5
    page.hover(token(0, k))
    wait_until(page, "k => document.getElementById('d-index').textContent.startsWith(k + ' of ')", k)
    assert page.evaluate(BACKDROP_MARK)
    assert watch.problems == [] and watch.dialogs == []


def test_switching_a_column_tokenizer_changes_its_ids(page: Page, server: dict[str, Any]) -> None:
    text = "Switching tokenizers: 中文分词 and English words."
    open_page(page, server["url"] + "#" + _params(text, [CL, SPM]))
    assert column_ids(page, 0) == expected_ids(server, CL, text)
    page.select_option(".column >> nth=0 >> select", BERT)
    settle(page)
    assert column_names(page) == [BERT, SPM]
    assert column_ids(page, 0) == expected_ids(server, BERT, text)
    assert column_ids(page, 1) == expected_ids(server, SPM, text)
    assert "c=bert-base-chinese%2Fvocab.txt" in page.url


def test_two_tokenizers_side_by_side(page: Page, server: dict[str, Any]) -> None:
    text = "Side by side: the same text, two tokenizers. 12345"
    open_page(page, server["url"] + "#" + _params(text, [CL, SPM, BERT]))
    page.click(".column >> nth=2 >> button.remove")
    settle(page)
    assert column_names(page) == [CL, SPM]
    boxes = [page.locator(".column").nth(i).bounding_box() for i in range(2)]
    assert boxes[0] and boxes[1] and boxes[0]["x"] + boxes[0]["width"] <= boxes[1]["x"]
    assert abs(boxes[0]["y"] - boxes[1]["y"]) < 2
    assert column_ids(page, 0) == expected_ids(server, CL, text)
    assert column_ids(page, 1) == expected_ids(server, SPM, text)
    assert column_ids(page, 0) != column_ids(page, 1)
    # hovering a token underlines the tokens of the other column covering the same text
    page.hover(".column >> nth=0 >> .tok >> nth=1")
    assert page.locator(".column >> nth=1 >> .tok.overlap").count() >= 1


def test_compare_files_table_and_chart(page: Page, watch: Watch, server: dict[str, Any], artifacts: Path) -> None:
    files = {
        "english.txt": "The quick brown fox jumps over the lazy dog. " * 7,
        "code.py": "def add(a, b):\n    return a + b\n\nprint(add(2, 3))\n",
    }
    open_page(page, server["url"] + "#" + _params("compare", [CL, BERT]) + "&v=compare")
    assert page.is_visible("#view-compare")
    page.set_input_files("#files", [
        {"name": n, "mimeType": "text/plain", "buffer": t.encode()} for n, t in files.items()
    ])
    wait_until(page, "() => document.querySelectorAll('#compare-out tbody tr').length === 4")
    settle(page)
    rows = page.eval_on_selector_all(
        "#compare-out tbody tr", "rs => rs.map(r => [...r.cells].map(c => c.textContent))")
    got = {(r[0], r[1]): r for r in rows}
    assert set(got) == {(f, t) for f in files for t in (CL, BERT)}
    for (fname, name), row in got.items():
        raw = files[fname].encode()
        ids = server["tok"][name].encode_ordinary(files[fname])
        assert row[2] == str(len(ids))
        assert row[3] == str(len(raw))
        assert row[5] == f"{len(raw) / len(ids):.2f}"
    assert page.locator("#compare-out svg rect.bar").count() == 4
    assert watch.problems == []
    page.screenshot(path=str(artifacts / "browser-compare.png"), full_page=True)


def test_shared_link_reproduces_the_view(page: Page, server: dict[str, Any], browser: Any) -> None:
    open_page(page, server["url"])
    set_text(page, HOSTILE)
    page.select_option(".column >> nth=1 >> select", BERT)
    page.click(".column >> nth=2 >> button.remove")
    page.check("#show-ids")
    settle(page)
    shared = page.url
    assert "#" in shared
    other = browser.new_context(viewport={"width": 1200, "height": 800}).new_page()
    try:
        open_page(other, shared)
        assert other.input_value("#text") == HOSTILE
        assert column_names(other) == [CL, BERT]
        assert column_ids(other, 0) == expected_ids(server, CL, HOSTILE)
        assert column_ids(other, 1) == expected_ids(server, BERT, HOSTILE)
        assert other.is_checked("#show-ids")
        first = other.locator(".column >> nth=0 >> .tok >> nth=0")
        assert first.text_content() == first.get_attribute("data-id")  # ids shown instead of text
    finally:
        other.context.close()


def _params(text: str, columns: list[str]) -> str:
    from urllib.parse import urlencode

    return urlencode([("t", text)] + [("c", c) for c in columns])


def _static_html(text: str, names: list[str], toks: dict[str, Any]) -> str:
    """A static page as ``explain --html`` writes one: style, script and data inlined."""
    data = {
        "static": True,
        "text": text,
        "tokenizers": [views.tokenizer_info(n, toks[n], "file") for n in names],
        "columns": names,
        "encode": {n: views.encode_view(toks[n], text, allowed_special="all", disallowed_special=()) for n in names},
        "token": {n: {str(i): views.token_view(toks[n], i) for i in set(toks[n].encode(text, allowed_special="all"))}
                  for n in names},
        "stability": {n: views.stability_view(toks[n], text, allowed_special="all", disallowed_special=()) for n in names},
    }
    blob = json.dumps(data).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    page = (STATIC / "index.html").read_text("utf-8")
    css = (STATIC / "app.css").read_text("utf-8")
    js = (STATIC / "app.js").read_text("utf-8")
    link = '<link rel="stylesheet" href="/static/app.css">'
    script = '<script src="/static/app.js" defer></script>'
    assert link in page and script in page
    page = page.replace(link, _inline_safe(f"<style>{css}</style>"))
    page = page.replace(script, _inline_safe(f"<script>{js}</script>"))  # runs in <head>, before the body exists
    return page.replace("</body>", f'<script type="application/json" id="tf-static">{blob}</script>\n</body>')


def _inline_safe(s: str) -> str:
    assert "</script" not in s.lower()[: -len("</script>")] and "</style" not in s.lower()[: -len("</style>")]
    return s


def test_static_page_works_without_a_server(page: Page, watch: Watch, server: dict[str, Any], tmp_path: Path, artifacts: Path) -> None:
    text = "Static <b>page</b> 日本 🎉\nhello wor"
    names = [CL, SPM]
    toks = server["tok"]
    out = tmp_path / "static.html"
    out.write_text(_static_html(text, names, toks), "utf-8")
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto(out.as_uri())
    wait_until(page, "() => document.body.dataset.ready === '1'")
    assert page.input_value("#text") == text
    assert page.get_attribute("#text", "readonly") is not None
    assert page.is_hidden("#tab-compare") and page.is_hidden("#add-column")
    assert column_names(page) == names
    for i, n in enumerate(names):
        assert column_ids(page, i) == toks[n].encode(text, allowed_special="all")
    # stability marks from the embedded data: the trailing " wor" could still grow
    stab = views.stability_view(toks[CL], text)
    assert stab["unstable"]
    marked = marked_indices(page, 0, "unstable")
    assert marked == stab["unstable"]
    # the detail panel reads the embedded token data, merge tree included
    ids = toks[CL].encode(text)
    k = len(ids) - 1
    page.hover(token(0, k))
    wait_until(page, "id => document.getElementById('d-id').textContent === id", str(ids[k]))
    wait_until(page, "() => document.querySelectorAll('#d-tree .rank').length > 0")
    assert page.text_content("#d-rank") == str(views.token_view(toks[CL], ids[k])["rank"])
    assert all(u.startswith("file:") or u.startswith("data:") for u in requests), requests
    assert page.evaluate("() => document.querySelectorAll('b').length") == 0
    assert watch.problems == [] and watch.dialogs == []
    page.screenshot(path=str(artifacts / "browser-static.png"), full_page=True)


def test_special_token_strings_are_refused_by_default_as_encode_does(page: Page, server: dict[str, Any]) -> None:
    text = "end of document<|endoftext|>next one"
    open_page(page, server["url"] + "#" + _params(text, [CL]))
    assert page.input_value("#specials") == "refuse"
    assert page.is_visible("#errors")
    shown = page.text_content("#errors")
    assert "'<|endoftext|>'" in shown and "allowed_special" in shown and "Special tokens" in shown
    page.select_option("#specials", "text")  # read as ordinary text: no special span
    settle(page)
    assert column_ids(page, 0) == server["tok"][CL].encode(text, disallowed_special=())
    assert page.locator(".column >> nth=0 >> .tok.special").count() == 0
    assert "sp=text" in page.url


def test_special_token_is_one_marked_span(page: Page, server: dict[str, Any]) -> None:
    text = "end of document<|endoftext|>next one"
    open_page(page, server["url"] + "#" + _params(text, [CL, SPM]) + "&sp=match")
    ids = expected_ids(server, CL, text)
    eot = server["tok"][CL].encode_single_token("<|endoftext|>")
    assert eot in ids and column_ids(page, 0) == ids
    specials = page.locator(".column >> nth=0 >> .tok.special")
    assert specials.count() == 1
    assert specials.first.get_attribute("data-id") == str(eot)
    assert specials.first.text_content() == "<|endoftext|>"
    assert html.escape("<|endoftext|>") not in page.text_content(".column >> nth=0 >> .tokens")


def test_views_numbers_indent_stability_glitch(page: Page, server: dict[str, Any]) -> None:
    text = "Pay 1234567 now, hello wor"
    open_page(page, server["url"] + "#" + _params(text, [CL, SPM]) + "&v=numbers")
    rows = page.eval_on_selector_all("#numbers-out tbody tr", "rs => rs.map(r => r.cells[0].textContent)")
    assert rows == [CL, SPM]
    page.click("#tab-indent")
    settle(page)
    assert page.locator("#indent-out tbody tr").count() == 17  # 0..16 spaces
    page.click("#tab-stability")
    settle(page)
    stab = views.stability_view(server["tok"][CL], text)
    marked = marked_indices(page, 0, "unstable")
    assert marked == stab["unstable"] and marked
    assert page.text_content("#stability-out tbody tr:first-child td:nth-child(5)") == stab["prefix"]
    assert "v=stability" in page.url
    page.click("#tab-glitch")
    settle(page)
    assert page.locator("#glitch-out .glitch-col").count() == 2
    assert page.locator("#glitch-out .glitch-col >> nth=0 >> tbody tr").count() == 30
    page.click("#tab-tokens")
    assert page.locator(".tokens .tok.unstable").count() == 0  # the marks belong to the stability view


def test_api_errors_are_shown(page: Page, server: dict[str, Any]) -> None:
    open_page(page, server["url"] + "#" + _params("some text", [CL, SPM]))
    assert page.is_hidden("#errors")
    # a column asking for a tokenizer the server does not offer: the 404 message is shown
    page.evaluate("""() => {
        const sel = document.querySelector('.column select');
        const opt = document.createElement('option');
        opt.value = opt.textContent = 'no-such-tokenizer';
        sel.appendChild(opt);
        sel.value = 'no-such-tokenizer';
        sel.dispatchEvent(new Event('change'));
    }""")
    settle(page)
    assert page.is_visible("#errors")
    assert "unknown tokenizer 'no-such-tokenizer'" in page.text_content("#errors")
    page.click("#errors .dismiss")
    assert page.is_hidden("#errors")

"""The token page's JSON API, through Starlette's test client and a real server: the ids
equal ``encode``, offsets point into the text, only offered tokenizers can be named,
limits answer 413, and the static HTML export embeds its data safely. What the server
refuses (hosts, content types, nesting, slow clients, abandoned work) is in test_guards.py."""

from __future__ import annotations

import base64
import json
import re
import socket
import threading
import time
import warnings
from pathlib import Path

import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx")

from starlette.testclient import TestClient  # noqa: E402

import tokenforge  # noqa: E402
from tokenforge.errors import InvalidArgumentError  # noqa: E402
from tokenforge.web import app as web_app  # noqa: E402
from tokenforge.web import views  # noqa: E402
from tokenforge.web.app import Limits, create_app, default_registry  # noqa: E402

TEXTS = [
    "",
    "hello world",
    "naïve café — 東京タワー 🎉👩‍👩‍👧 e\u0301 مرحبا",
    "<script>alert('x')</script> \"quotes\" \u202eevil\u202c \x00 tab\tnew\nline\r\n",
    "def f(x):\n        return x  # <|endoftext|> inside\n",
    "1234567 3.14159 2024年",
]


@pytest.fixture(scope="module")
def files(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A SentencePiece .model and a BERT vocab.txt, as a user would pass them."""
    folder = tmp_path_factory.mktemp("bert")
    bert = tokenforge.load(shared_data / "vocab" / "hf" / "bert-base-uncased_wordpiece_tokenizer.json")
    bert.save(str(folder / "vocab.txt"), format="bert_vocab")
    return {"model": shared_data / "vocab" / "sentencepiece" / "albert_spiece.model", "vocab": folder / "vocab.txt"}


@pytest.fixture(scope="module")
def client(files: dict[str, Path]) -> TestClient:
    reg = default_registry(paths=("cl100k", str(files["model"]), str(files["vocab"])))
    return local(create_app(reg))


def local(app) -> TestClient:
    """A test client whose requests name the server as a browser on this machine does."""
    return TestClient(app, base_url="http://127.0.0.1:8765")


def test_the_offered_tokenizers_are_the_encodings_and_those_given(client: TestClient) -> None:
    r = client.get("/api/tokenizers")
    assert r.status_code == 200
    data = r.json()
    names = [t["name"] for t in data["tokenizers"]]
    assert set(tokenforge.list_encodings()) <= set(names)
    assert "albert_spiece.model" in names and any(n.endswith("vocab.txt") for n in names)
    # the page opens with what the command line named, in its order
    assert data["default"][0] == "cl100k_base" and data["default"][1] == "albert_spiece.model"
    assert len(data["default"]) == 3
    assert data["limits"]["max_text_chars"] > 0
    families = {t["name"]: t["family"] for t in data["tokenizers"]}
    assert families["albert_spiece.model"] == "unigram" and families[data["default"][2]] == "wordpiece"


@pytest.mark.parametrize("text", TEXTS)
def test_encode_gives_the_ids_of_encode_and_offsets_into_the_text(client: TestClient, text: str) -> None:
    names = client.get("/api/tokenizers").json()["default"]
    for name in names:
        tok = client.app.state.registry.get(name)
        r = client.post("/api/encode", json={"tokenizer": name, "text": text, "allowed_special": "all"})
        assert r.status_code == 200, r.text
        d = r.json()
        assert d["ids"] == tok.encode(text, allowed_special="all"), name
        assert d["count"] == len(d["ids"]) == len(d["tokens"]) == len(d["offsets"]) == len(d["hex"])
        assert d["chars"] == len(text) and d["bytes"] == len(text.encode("utf-8"))
        for (start, end), partial in zip(d["offsets"], d["partial"]):
            assert 0 <= start <= end <= len(text)
        # whole tokens of a byte-level BPE cover exactly their bytes
        if name == "cl100k_base":
            for (start, end), h, partial, special in zip(d["offsets"], d["hex"], d["partial"], d["special"]):
                if not partial:
                    assert text[start:end].encode() == bytes.fromhex(h)


def test_special_tokens_are_marked_or_read_as_text_when_asked(client: TestClient) -> None:
    text = "a<|endoftext|>b"
    d = client.post("/api/encode", json={"tokenizer": "cl100k_base", "text": text, "allowed_special": "all"}).json()
    k = d["ids"].index(100257)
    assert d["special"][k] and d["tokens"][k] == "<|endoftext|>" and d["offsets"][k] == [1, 14]
    named = client.post("/api/encode", json={"tokenizer": "cl100k_base", "text": text,
                                             "allowed_special": ["<|endoftext|>"]}).json()
    assert named["ids"] == d["ids"]
    plain = client.post("/api/encode", json={"tokenizer": "cl100k_base", "text": text, "disallowed_special": []}).json()
    assert 100257 not in plain["ids"] and not any(plain["special"])
    assert plain["ids"] == tokenforge.get_encoding("cl100k_base").encode_ordinary(text)


def test_a_split_character_is_shown_as_its_bytes(client: TestClient) -> None:
    d = client.post("/api/encode", json={"tokenizer": "gpt2", "text": "🎉"}).json()
    assert len(d["ids"]) > 1 and all(d["partial"])
    assert b"".join(bytes.fromhex(h) for h in d["hex"]) == "🎉".encode()
    assert all("<0x" in t for t in d["tokens"])


@pytest.mark.parametrize("name", ["/etc/passwd", "../tokenizer.json", "cl100k", "x" * 10_000])
def test_only_offered_tokenizers_can_be_named(client: TestClient, name: object) -> None:
    r = client.post("/api/encode", json={"tokenizer": name, "text": "hi"})
    assert r.status_code == 404
    assert "unknown tokenizer" in r.json()["error"] and len(r.json()["error"]) < 400


@pytest.mark.parametrize("body, status", [
    (b"not json", 400),
    (b"[1, 2]", 400),
    (json.dumps({"tokenizer": "gpt2", "text": 5}).encode(), 400),
    (json.dumps({"tokenizer": "gpt2", "text": "x", "specials": "yes"}).encode(), 400),
    (json.dumps({"tokenizer": "gpt2", "text": "x", "allowed_special": "yes"}).encode(), 400),
    (json.dumps({"tokenizer": "gpt2", "text": "x", "disallowed_special": [1]}).encode(), 400),
])
def test_malformed_requests_get_400_with_a_message(client: TestClient, body: bytes, status: int) -> None:
    r = client.post("/api/encode", content=body, headers={"content-type": "application/json"})
    assert r.status_code == status and r.json()["error"]


def test_a_lone_surrogate_in_the_text_is_encoded_as_tiktoken_does(client: TestClient) -> None:
    # JSON can carry a lone surrogate; tiktoken and tokenforge read it as U+FFFD
    body = b'{"tokenizer": "cl100k_base", "text": "a\\ud800b"}'
    r = client.post("/api/encode", content=body, headers={"content-type": "application/json"})
    assert r.status_code == 200, r.text
    assert r.json()["ids"] == tokenforge.get_encoding("cl100k_base").encode("a\ud800b")


def test_size_limits_answer_413(files: dict[str, Path]) -> None:
    c = local(create_app(default_registry(), Limits(max_body_bytes=2000, max_text_chars=100)))
    r = c.post("/api/encode", json={"tokenizer": "gpt2", "text": "x" * 101})
    assert r.status_code == 413 and "101" in r.json()["error"] and "100" in r.json()["error"]
    r = c.post("/api/encode", json={"tokenizer": "gpt2", "text": "x" * 5000})
    assert r.status_code == 413 and "limit" in r.json()["error"]
    # a body without a length header is counted as it streams
    chunks = (b'{"tokenizer": "gpt2", "text": "' + b"x" * 1000 + b'"}' if i == 0 else b" " * 1000 for i in range(3))
    r = c.post("/api/encode", content=chunks, headers={"content-type": "application/json"})
    assert r.status_code == 413
    assert c.post("/api/encode", json={"tokenizer": "gpt2", "text": "x" * 100}).status_code == 200


def test_the_token_view_has_the_merge_tree_with_ranks(client: TestClient) -> None:
    enc = tokenforge.get_encoding("cl100k_base")
    tid = enc.encode(" tokenization")[0]
    d = client.post("/api/token", json={"tokenizer": "cl100k_base", "id": tid}).json()
    assert d["id"] == tid and bytes.fromhex(d["hex"]) == enc.decode_single_token_bytes(tid)
    assert d["rank"] == tid and d["reached_by_merges"] is True
    (root,) = d["tree"]

    def check(node: dict) -> bytes:
        if not node["children"]:
            assert node["rank"] is None and len(bytes.fromhex(node["hex"])) == 1
            return bytes.fromhex(node["hex"])
        left, right = node["children"]
        joined = check(left) + check(right)
        assert joined.hex() == node["hex"]
        # a merge happens after the merges that built its parts: its rank is larger
        for child in (left, right):
            assert child["rank"] is None or child["rank"] < node["rank"]
        return joined

    assert check(root) == enc.decode_single_token_bytes(tid)
    for bad in (-1, enc.n_vocab, "5", True, 1.5):
        assert client.post("/api/token", json={"tokenizer": "cl100k_base", "id": bad}).status_code == 400


def test_the_token_view_of_other_families_has_no_tree(client: TestClient) -> None:
    d = client.post("/api/token", json={"tokenizer": "albert_spiece.model", "id": 100}).json()
    assert d["tree"] is None and d["family"] == "unigram" and d["vocab"]


def test_prefix_stability_marks_the_trailing_tokens_a_continuation_can_change(client: TestClient) -> None:
    d = client.post("/api/stability", json={"tokenizer": "cl100k_base", "text": "The word is hel"}).json()
    assert d["unstable"] == [d["count"] - 1] and d["prefix"] == "␣hel" and d["satisfiable"]
    d = client.post("/api/stability", json={"tokenizer": "cl100k_base", "text": ""}).json()
    assert d == {**d, "count": 0, "unstable": []}
    # a special token at the end: nothing after it can change
    d = client.post("/api/stability", json={"tokenizer": "cl100k_base", "text": "hel<|endoftext|>",
                                            "allowed_special": "all"}).json()
    assert d["unstable"] == []


def test_stability_indices_point_into_the_encode_tokens(client: TestClient) -> None:
    """With a post-processor (BERT's [CLS] ... [SEP]) the unstable tokens are the last text
    tokens, by their index in what /api/encode gives, never the appended [SEP]."""
    bert = client.get("/api/tokenizers").json()["default"][2]
    text = "the word is hel"
    enc = client.post("/api/encode", json={"tokenizer": bert, "text": text}).json()
    d = client.post("/api/stability", json={"tokenizer": bert, "text": text}).json()
    assert enc["tokens"][0] == "[CLS]" and enc["tokens"][-1] == "[SEP]" and d["count"] == enc["count"]
    assert d["unstable"] and d["unstable"][-1] == enc["count"] - 2
    assert "".join(enc["tokens"][i] for i in d["unstable"]).endswith("hel")


def test_numbers_and_indent_views(client: TestClient) -> None:
    d = client.post("/api/numbers", json={"tokenizers": ["cl100k_base", "gpt2"], "text": "12345"}).json()
    rows = {r["encoding"]: r for r in d["rows"]}
    assert rows["cl100k_base"]["pieces"] == ["123", "45"]
    assert rows["gpt2"]["ids"] == tokenforge.get_encoding("gpt2").encode("12345")
    d = client.post("/api/indent", json={"tokenizers": ["cl100k_base"], "max_spaces": 4}).json()
    assert d["rows"][0]["cost"][0] == 0 and len(d["rows"][0]["cost"]) == 5
    assert client.post("/api/indent", json={"tokenizers": ["cl100k_base"], "max_spaces": 999}).status_code == 400
    assert client.post("/api/numbers", json={"tokenizers": []}).status_code == 400
    assert client.post("/api/numbers", json={"tokenizers": ["/etc/passwd"]}).status_code == 404


def test_glitch_candidates_on_the_embedded_corpus(client: TestClient) -> None:
    d = client.post("/api/glitch", json={"tokenizer": "gpt2", "top": 5}).json()
    assert len(d["candidates"]) == 5 and d["total_tokens"] > 10_000
    assert all(c["count"] <= d["rare_max"] for c in d["candidates"])
    again = client.post("/api/glitch", json={"tokenizer": "gpt2", "top": 7}).json()  # cached, cut anew
    assert again["candidates"][:5] == d["candidates"]


def upload(names: list[str], files: dict[str, bytes]) -> dict:
    """A compare request as the page sends it: each file's bytes in base64."""
    return {"tokenizers": names, "files": [{"name": n, "base64": base64.b64encode(b).decode()} for n, b in files.items()]}


def test_compare_counts_the_bytes_of_the_files_as_uploaded(client: TestClient) -> None:
    crlf = "one line\r\nanother line\r\n".encode()
    cjk = "東京タワーは高い。".encode()
    r = client.post("/api/compare", json=upload(["cl100k_base", "gpt2"], {"crlf.txt": crlf, "ja.txt": cjk}))
    assert r.status_code == 200, r.text
    d = r.json()
    assert d["texts"] == ["crlf.txt", "ja.txt"]
    for row in d["rows"]:
        raw = crlf if row["text"] == "crlf.txt" else cjk
        n = len(tokenforge.get_encoding(row["tokenizer"]).encode_ordinary(raw.decode()))
        assert row["bytes"] == len(raw) and row["tokens"] == n
        assert row["bytes_per_token"] == pytest.approx(len(raw) / n)


def test_compare_refuses_bad_uploads_with_the_reason(client: TestClient) -> None:
    r = client.post("/api/compare", json=upload(["gpt2"], {"latin1.txt": b"caf\xe9"}))
    assert r.status_code == 400 and "latin1.txt" in r.json()["error"] and "byte 3" in r.json()["error"]
    r = client.post("/api/compare", json=upload(["gpt2"], {}))
    assert r.status_code == 400 and "'files'" in r.json()["error"]
    r = client.post("/api/compare", json={"tokenizers": ["gpt2"], "files": [{"name": "a.txt", "base64": "not base64!"}]})
    assert r.status_code == 400 and "a.txt" in r.json()["error"] and "base64" in r.json()["error"]
    r = client.post("/api/compare", json=upload(["/etc/passwd"], {"a.txt": b"a"}))
    assert r.status_code == 404
    small = local(create_app(default_registry(), Limits(max_upload_bytes=1000, max_files=2)))
    r = small.post("/api/compare", json=upload(["gpt2"], {"big.txt": b"x" * 5000}))
    assert r.status_code == 413
    r = small.post("/api/compare", json=upload(["gpt2"], {f"{k}.txt": b"x" for k in range(3)}))
    assert r.status_code == 400 and "at most 2" in r.json()["error"]


def test_the_page_and_its_assets_are_served_from_the_package(client: TestClient) -> None:
    r = client.get("/")
    assert r.status_code == 200 and "text/html" in r.headers["content-type"]
    assert "script-src 'self'" in r.headers["content-security-policy"]
    for asset in ("/static/app.js", "/static/app.css"):
        assert client.get(asset).status_code == 200
    assert client.get("/static/../app.py").status_code == 404


def test_the_assets_load_nothing_from_the_network() -> None:
    static = Path(web_app.__file__).with_name("static")
    for f in static.iterdir():
        text = f.read_text(encoding="utf-8")
        for ref in re.findall(r"""(?:src|href)\s*=\s*["']([^"']+)|url\(\s*["']?([^"')]+)|import\s+[^;]*?from\s+["']([^"']+)""", text):
            url = next(x for x in ref if x)
            assert not re.match(r"(?i)(https?:)?//", url), f"{f.name} loads {url}"
        assert "fetch('http" not in text and 'fetch("http' not in text


# -- serve(): binding, warnings, the command line -------------------------------------------------------------


def test_serve_refuses_a_port_in_use_with_a_message() -> None:
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen(1)
    try:
        with pytest.raises(InvalidArgumentError, match=f"127.0.0.1:{busy.getsockname()[1]}"):
            tokenforge.serve(port=busy.getsockname()[1])
    finally:
        busy.close()


def test_serve_warns_when_it_binds_beyond_this_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    import uvicorn

    ran: list[object] = []
    monkeypatch.setattr(uvicorn.Server, "run", lambda self, sockets=None: ran.append(sockets))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tokenforge.serve(host="0.0.0.0", port=0)
        tokenforge.serve(host="127.0.0.1", port=0)
    messages = [str(w.message) for w in caught]
    assert len(messages) == 1 and "0.0.0.0" in messages[0] and "other machines" in messages[0]
    assert len(ran) == 2


def test_serve_offers_tokenizers_given_from_the_api(monkeypatch: pytest.MonkeyPatch, small_tokenizer) -> None:
    reg = default_registry({"mine": small_tokenizer})
    c = local(create_app(reg))
    assert c.get("/api/tokenizers").json()["default"] == ["mine"]
    d = c.post("/api/encode", json={"tokenizer": "mine", "text": "hello <|endoftext|>", "allowed_special": "all"}).json()
    assert d["ids"] == small_tokenizer.encode("hello <|endoftext|>", allowed_special="all")
    with pytest.raises(tokenforge.TokenforgeError, match="not a tokenforge Tokenizer"):
        default_registry({"bad": object()})  # type: ignore[dict-item]


# -- the static export ---------------------------------------------------------------------------------------


def test_the_static_page_embeds_its_data_so_no_token_can_end_the_script(tmp_path: Path) -> None:
    from tokenforge.web.static_page import static_data, write_static_html

    text = "</script><script>alert(1)</script> <!-- \u2028\u2029 & \"q\" 'q' \u202e 🎉 <|endoftext|>"
    toks = {"cl100k_base": tokenforge.get_encoding("cl100k_base"), "gpt2": tokenforge.get_encoding("gpt2")}
    path = write_static_html(toks, text, tmp_path / "page.html")
    page = path.read_text(encoding="utf-8")
    m = re.search(r'<script type="application/json" id="tf-static">(.*?)</script>', page, re.S)
    assert m is not None
    assert json.loads(m.group(1)) == static_data(toks, text)
    # the text's own tags stay inside the JSON as escapes: one data script, one code script
    assert page.count("<script") == 2 and "alert(1)</script>" not in page
    assert "/static/" not in page  # everything is inline: the file opens offline
    assert not list(tmp_path.glob("*.tmp"))


def test_explain_html_on_the_command_line(tmp_path: Path) -> None:
    import subprocess
    import sys

    exe = str(Path(sys.executable).with_name("tokenforge"))
    out = tmp_path / "tokens.html"
    r = subprocess.run([exe, "explain", "naïve 東京 🎉", "-t", "cl100k", "--encodings", "gpt2", "--html", str(out)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "cl100k_base" in r.stdout and "gpt2" in r.stdout and out.is_file()
    data = json.loads(re.search(r'id="tf-static">(.*?)</script>', out.read_text(encoding="utf-8"), re.S).group(1))
    assert data["columns"] == ["cl100k_base", "gpt2"]
    assert data["encode"]["gpt2"]["ids"] == tokenforge.get_encoding("gpt2").encode("naïve 東京 🎉")
    too_many = subprocess.run([exe, "explain", "x", "-t", "gpt2", "--encodings", "cl100k", "o200k", "p50k_base",
                               "r50k_base", "--html", str(tmp_path / "x.html")], capture_output=True, text=True, timeout=120)
    assert too_many.returncode == 1 and "1 to 4" in too_many.stderr and "Traceback" not in too_many.stderr


def test_serve_on_the_command_line_prints_its_url_and_serves(tmp_path: Path) -> None:
    import subprocess
    import sys

    import httpx

    exe = str(Path(sys.executable).with_name("tokenforge"))
    proc = subprocess.Popen([exe, "serve", "gpt2", "--port", "0"], stderr=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True)
    try:
        line = proc.stderr.readline()
        m = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        assert m, line
        url = m.group(0)
        deadline = time.monotonic() + 30
        while True:
            try:
                r = httpx.get(url + "api/tokenizers", timeout=5)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "the server did not answer"
                time.sleep(0.1)
        assert r.status_code == 200 and r.json()["default"] == ["gpt2"]
    finally:
        proc.terminate()
        proc.wait(10)
    bad = subprocess.run([exe, "serve", str(tmp_path / "missing.json")], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 1 and "missing.json" in bad.stderr and "Traceback" not in bad.stderr

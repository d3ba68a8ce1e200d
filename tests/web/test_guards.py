"""What the token page's server refuses, and that refusing costs the other requests nothing:
foreign ``Host`` headers (DNS rebinding), API posts that are not JSON (cross-origin
"simple" requests), deep JSON, requests without a tokenizer, special-token strings in
text (the library's policy), work that runs over its time limit, and slow or idle
connections."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx")
uvicorn = pytest.importorskip("uvicorn")

from starlette.testclient import TestClient  # noqa: E402

import tokenforge  # noqa: E402
from tokenforge.errors import InvalidArgumentError, SpecialTokenError  # noqa: E402
from tokenforge.web import views  # noqa: E402
from tokenforge.web.app import Limits, create_app, default_registry  # noqa: E402

LOCAL = "http://127.0.0.1:8765"


@pytest.fixture(scope="module")
def app() -> Any:
    return create_app(default_registry())


def client(app: Any, base: str = LOCAL) -> TestClient:
    return TestClient(app, base_url=base)


# -- Host: DNS rebinding ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("host", ["localhost:8765", "LOCALHOST", "localhost.", "127.0.0.1", "127.0.0.1:9000",
                                  "127.1.2.3:8765", "[::1]:8765", "[::1]"])
def test_this_machine_by_any_loopback_name_is_answered(app: Any, host: str) -> None:
    c = client(app)
    assert c.get("/api/tokenizers", headers={"host": host}).status_code == 200
    r = c.post("/api/encode", json={"tokenizer": "gpt2", "text": "hi"}, headers={"host": host})
    assert r.status_code == 200, r.text


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8765", "localhost.evil.example", "127.0.0.1.nip.io",
                                  "192.168.1.7:8765", "[::1", "localhost:80:80", "user@localhost", ""])
def test_a_request_for_another_host_is_refused(app: Any, host: str) -> None:
    """A page at http://evil.example:8765/ whose name now resolves to 127.0.0.1 sends Host:
    evil.example:8765; the server refuses it, page and API alike, and says how to allow a name."""
    c = client(app)
    for r in (c.get("/", headers={"host": host}),
              c.post("/api/encode", json={"tokenizer": "gpt2", "text": "hi"}, headers={"host": host})):
        assert r.status_code == 400
        message = r.json()["error"]
        assert "Host" in message and "--allow-host" in message and "DNS rebinding" in message
        if host:
            assert repr(host) in message


def test_allowed_hosts_and_the_bound_address_are_answered() -> None:
    reg = default_registry()
    behind_proxy = client(create_app(reg, allow_hosts=["tokens.example.org", "other.example:8443"]))
    assert behind_proxy.get("/api/tokenizers", headers={"host": "tokens.example.org"}).status_code == 200
    assert behind_proxy.get("/api/tokenizers", headers={"host": "Tokens.Example.org:443"}).status_code == 200
    assert behind_proxy.get("/api/tokenizers", headers={"host": "other.example:8443"}).status_code == 200
    assert behind_proxy.get("/api/tokenizers", headers={"host": "other.example:9999"}).status_code == 400
    assert behind_proxy.get("/api/tokenizers", headers={"host": "evil.example"}).status_code == 400
    on_lan = client(create_app(reg, host="192.168.1.7"))
    assert on_lan.get("/api/tokenizers", headers={"host": "192.168.1.7:8765"}).status_code == 200
    assert on_lan.get("/api/tokenizers", headers={"host": "10.0.0.1:8765"}).status_code == 400
    # bound to every address: any address (a browser sends one only when asked for it), never a name
    everywhere = client(create_app(reg, host="0.0.0.0"))
    assert everywhere.get("/api/tokenizers", headers={"host": "10.0.0.1:8765"}).status_code == 200
    assert everywhere.get("/api/tokenizers", headers={"host": "evil.example:8765"}).status_code == 400


def test_a_request_without_a_host_is_refused() -> None:
    from tokenforge.web.app import HostRules

    assert not HostRules().allows(None) and not HostRules().allows("")


@pytest.mark.parametrize("bad", ["tokens example", "http://tokens.example.org", "a/b", "host:port", ""])
def test_a_malformed_allowed_host_fails_before_serving(bad: str, monkeypatch: pytest.MonkeyPatch) -> None:
    ran: list[object] = []
    monkeypatch.setattr(uvicorn.Server, "run", lambda self, sockets=None: ran.append(sockets))
    with pytest.raises(InvalidArgumentError, match="allow-host"):
        tokenforge.serve(port=0, allow_hosts=[bad])
    assert not ran


def test_allow_host_on_the_command_line(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    from tokenforge.cli import main

    apps: list[Any] = []
    monkeypatch.setattr(uvicorn.Server, "run", lambda self, sockets=None: apps.append(self.config.app))
    assert main(["serve", "--port", "0", "--allow-host", "tokens.example.org", "--allow-host", "b.example:81"]) == 0
    c = client(apps[0])
    assert c.get("/api/tokenizers", headers={"host": "tokens.example.org"}).status_code == 200
    assert c.get("/api/tokenizers", headers={"host": "b.example:81"}).status_code == 200
    assert c.get("/api/tokenizers", headers={"host": "c.example"}).status_code == 400
    assert main(["serve", "--port", "0", "--allow-host", "not a host"]) == 1
    err = capsys.readouterr().err
    assert "'not a host'" in err and "Traceback" not in err


# -- Content-Type: no cross-origin simple requests ---------------------------------------------------------------


@pytest.mark.parametrize("ctype", ["text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded",
                                   "multipart/form-data; boundary=x", None, "application/json; charset=latin-1",
                                   "application/jsonx"])
@pytest.mark.parametrize("path", ["/api/encode", "/api/compare", "/api/glitch"])
def test_api_posts_must_be_declared_json(app: Any, ctype: str | None, path: str) -> None:
    """A form or fetch() from another site may send text/plain, urlencoded or multipart
    without asking; only those types are refused, before the body is read."""
    body = json.dumps({"tokenizer": "gpt2", "text": "hi"}).encode()
    headers = {"content-type": ctype} if ctype is not None else {}
    r = client(app).post(path, content=body, headers=headers)
    assert r.status_code == 415
    message = r.json()["error"]
    assert "application/json" in message and path in message
    if ctype:
        assert repr(ctype) in message


def test_json_with_a_utf8_charset_is_accepted(app: Any) -> None:
    body = json.dumps({"tokenizer": "gpt2", "text": "héllo"}).encode()
    for ctype in ("application/json; charset=utf-8", "Application/JSON;charset=\"UTF-8\""):
        r = client(app).post("/api/encode", content=body, headers={"content-type": ctype})
        assert r.status_code == 200 and r.json()["ids"] == tokenforge.get_encoding("gpt2").encode("héllo")


def test_the_page_does_not_need_multipart() -> None:
    """Compare uploads travel as JSON (base64): nothing imports a multipart parser."""
    from pathlib import Path

    import tokenforge.web as web

    for f in Path(web.__file__).parent.rglob("*.py"):
        assert "multipart" not in f.read_text(encoding="utf-8").replace("no multipart", ""), f
    js = (Path(web.__file__).parent / "static" / "app.js").read_text(encoding="utf-8")
    assert "FormData" not in js and '"Content-Type": "application/json"' in js


# -- JSON nesting ------------------------------------------------------------------------------------------------


def nested(depth: int) -> bytes:
    """An encode request whose body nests ``depth`` deep (the object itself is 1)."""
    return (b'{"tokenizer": "gpt2", "text": "hi", "extra": ' + b"[" * (depth - 1) + b"]" * (depth - 1) + b"}")


@pytest.mark.parametrize("depth", [33, 1000, 100_000])
def test_deeply_nested_json_is_a_400(app: Any, depth: int) -> None:
    r = client(app).post("/api/encode", content=nested(depth), headers={"content-type": "application/json"})
    assert r.status_code == 400 and "more than 32 deep" in r.json()["error"]


def test_json_nested_up_to_the_limit_is_read(app: Any) -> None:
    r = client(app).post("/api/encode", content=nested(32), headers={"content-type": "application/json"})
    assert r.status_code == 200 and r.json()["ids"] == tokenforge.get_encoding("gpt2").encode("hi")


# -- naming a tokenizer; its size -----------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/api/encode", "/api/stability", "/api/token", "/api/glitch"])
def test_a_request_without_a_tokenizer_says_it_is_required(app: Any, path: str) -> None:
    r = client(app).post(path, json={"text": "hi", "id": 1})
    assert r.status_code == 400 and r.json()["error"].startswith("'tokenizer' is required")
    assert "NoneType" not in r.json()["error"]


@pytest.mark.parametrize("name, shown", [(3, "number"), (["gpt2"], "array"), (True, "boolean")])
def test_a_tokenizer_that_is_not_a_name_is_a_400(app: Any, name: object, shown: str) -> None:
    r = client(app).post("/api/encode", json={"tokenizer": name, "text": "hi"})
    assert r.status_code == 400 and "must be a tokenizer's name" in r.json()["error"] and shown in r.json()["error"]
    r = client(app).post("/api/numbers", json={"tokenizers": ["gpt2", None]})
    assert r.status_code == 400 and "'tokenizers' is required" in r.json()["error"]


def test_every_listed_tokenizer_has_its_real_vocab_size() -> None:
    reg = default_registry()
    listed = client(create_app(reg)).get("/api/tokenizers").json()["tokenizers"]
    built = set(reg._loaded)
    assert built <= {"bytes"}, f"listing built {built}"  # rank files are read, not built into tokenizers
    for t in listed:
        assert t["vocab_size"] == tokenforge.get_encoding(t["name"]).n_vocab, t["name"]


# -- special-token strings: the library's policy ---------------------------------------------------------------


@pytest.mark.parametrize("text", ["a<|endoftext|>b", "x <|fim_prefix|> y", "[CLS] hi </s>"])
@pytest.mark.parametrize("name", ["gpt2", "cl100k_base", "o200k_harmony", "mine", "albert_spiece.model"])
def test_special_token_strings_follow_tokenizer_encode(text: str, name: str, small_tokenizer: Any,
                                                       shared_data: Any) -> None:
    """What /api/encode and /api/stability do by default is what Tokenizer.encode does:
    refuse a guarded special-token string (400 naming it and the fields that allow it),
    or read it as the tokenizer's default reads it (a SentencePiece model: as text)."""
    albert = shared_data / "vocab" / "sentencepiece" / "albert_spiece.model"
    reg = default_registry({"mine": small_tokenizer}, (str(albert),))
    c = client(create_app(reg))
    tok = reg.get(name)
    try:
        expected: list[int] | None = tok.encode(text)
    except SpecialTokenError:
        expected = None
    for path in ("/api/encode", "/api/stability"):
        r = c.post(path, json={"tokenizer": name, "text": text})
        if expected is None:
            assert r.status_code == 400, (path, r.text)
            d = r.json()
            assert d["special_token"] in text and repr(d["special_token"]) in d["error"]
            assert f'"allowed_special": [{json.dumps(d["special_token"])}]' in d["error"]
            assert '"disallowed_special": []' in d["error"] and "allowed_special={" not in d["error"]
        else:
            assert r.status_code == 200, (path, r.text)
            if path == "/api/encode":
                assert r.json()["ids"] == expected


def test_the_refused_token_is_the_first_in_the_text(app: Any) -> None:
    r = client(app).post("/api/encode", json={"tokenizer": "cl100k_base", "text": "<|fim_suffix|> then <|endoftext|>"})
    assert r.status_code == 400 and r.json()["special_token"] == "<|fim_suffix|>"


def test_the_old_specials_flag_says_what_replaced_it(app: Any) -> None:
    r = client(app).post("/api/encode", json={"tokenizer": "gpt2", "text": "a<|endoftext|>", "specials": True})
    assert r.status_code == 400 and "allowed_special" in r.json()["error"] and "disallowed_special" in r.json()["error"]


# -- workers: work that runs over keeps its worker until it ends --------------------------------------------------


class Blocking:
    """views.encode_view that blocks on texts starting with "slow" until released, counting
    how many such calls run at once."""

    def __init__(self, real: Any) -> None:
        self.real = real
        self.release = threading.Event()
        self.lock = threading.Lock()
        self.running = 0
        self.most = 0
        self.started = 0

    def __call__(self, tok: Any, text: str, **kw: Any) -> Any:
        if text.startswith("slow"):
            with self.lock:
                self.running += 1
                self.started += 1
                self.most = max(self.most, self.running)
            try:
                self.release.wait(60)
            finally:
                with self.lock:
                    self.running -= 1
        return self.real(tok, text, **kw)


@pytest.fixture
def blocking(monkeypatch: pytest.MonkeyPatch) -> Iterator[Blocking]:
    b = Blocking(views.encode_view)
    monkeypatch.setattr(views, "encode_view", b)
    try:
        yield b
    finally:
        b.release.set()


def wait_for(check: Any, what: str, limit: float = 30.0) -> None:
    deadline = time.monotonic() + limit
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.01)


def test_work_that_runs_over_keeps_its_worker_until_it_ends(blocking: Blocking) -> None:
    """Two workers: two requests that run over their time limit get 503 and keep both
    workers busy; a third waits its whole time limit for a worker, gets 503 saying the
    server is busy, and its work never starts. No more work ever runs than there are workers."""
    app = create_app(default_registry(), Limits(timeout=0.3, workers=2))
    c = client(app)
    answers = [c.post("/api/encode", json={"tokenizer": "gpt2", "text": f"slow {k}"}) for k in range(3)]
    assert [r.status_code for r in answers] == [503, 503, 503]
    assert blocking.most == 2 and blocking.started == 2
    assert "longer than 0.3 s" in answers[0].json()["error"]
    assert "busy" in answers[2].json()["error"] and "2 workers" in answers[2].json()["error"]
    assert app.state.workers.busy == 2
    blocking.release.set()
    wait_for(lambda: app.state.workers.busy == 0, "the released work did not end")
    assert blocking.started == 2  # the request given up on before it started never ran
    r = c.post("/api/encode", json={"tokenizer": "gpt2", "text": "hi"})
    assert r.status_code == 200 and r.json()["ids"] == tokenforge.get_encoding("gpt2").encode("hi")


def test_a_tiny_request_is_served_while_abandoned_work_runs(blocking: Blocking) -> None:
    app = create_app(default_registry(), Limits(timeout=0.5, workers=2))
    c = client(app)
    assert c.post("/api/encode", json={"tokenizer": "gpt2", "text": "slow"}).status_code == 503
    assert blocking.running == 1
    r = c.post("/api/encode", json={"tokenizer": "gpt2", "text": "hi"})
    assert r.status_code == 200 and r.json()["ids"] == tokenforge.get_encoding("gpt2").encode("hi")
    assert blocking.running == 1  # served while the abandoned work still held its worker


# -- connections: slow and idle clients are closed ----------------------------------------------------------------


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[str, int]]:
    from tokenforge.web.server import server_config

    app = create_app(default_registry(), Limits(read_timeout=0.5, keep_alive=0.5))
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    srv = uvicorn.Server(server_config(app, log_level="error"))
    thread = threading.Thread(target=srv.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    wait_for(lambda: srv.started, "the server did not start", 20)
    try:
        yield sock.getsockname()
    finally:
        srv.should_exit = True
        thread.join(10)
        sock.close()


def closed_by_server(conn: socket.socket, dribble: bytes = b"", limit: float = 15.0) -> bytes:
    """What the server sends until it closes ``conn`` (sending ``dribble`` every 0.1 s
    meanwhile); fails if it is still open after ``limit`` seconds."""
    got = b""
    deadline = time.monotonic() + limit
    conn.settimeout(0.1)
    while time.monotonic() < deadline:
        try:
            chunk = conn.recv(65536)
        except socket.timeout:
            chunk = None
        except ConnectionError:
            return got
        if chunk == b"":
            return got
        got += chunk or b""
        if dribble:
            try:
                conn.sendall(dribble)
            except OSError:
                return got
    raise AssertionError(f"the connection is still open after {limit} s")


def request(addr: tuple[str, int], raw: bytes) -> bytes:
    with socket.create_connection(addr, timeout=15) as conn:
        conn.sendall(raw)
        return closed_by_server(conn)


def test_a_connection_that_sends_nothing_is_closed(server: tuple[str, int]) -> None:
    with socket.create_connection(server, timeout=15) as conn:
        assert closed_by_server(conn) == b""


def test_headers_sent_a_byte_at_a_time_do_not_hold_the_connection(server: tuple[str, int]) -> None:
    with socket.create_connection(server, timeout=15) as conn:
        conn.sendall(b"GET /api/tokenizers HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        assert closed_by_server(conn, dribble=b"X") == b""


def test_a_body_that_does_not_arrive_is_a_408(server: tuple[str, int]) -> None:
    with socket.create_connection(server, timeout=15) as conn:
        conn.sendall(b"POST /api/encode HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                     b"Content-Length: 100\r\n\r\n{\"tokenizer\":")
        answer = closed_by_server(conn)
    assert answer.startswith(b"HTTP/1.1 408") and b"did not arrive within 0.5 s" in answer


def test_an_idle_connection_is_closed_after_its_answer(server: tuple[str, int]) -> None:
    body = json.dumps({"tokenizer": "gpt2", "text": "hi"}).encode()
    answer = request(server, b"POST /api/encode HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                             b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
    assert answer.startswith(b"HTTP/1.1 200") and json.loads(answer.split(b"\r\n\r\n", 1)[1])["ids"] == [5303]

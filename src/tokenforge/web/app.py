"""The local token page: a Starlette application serving the page and its JSON API.

Routes (every request and answer body is JSON unless said otherwise):

* ``GET /``: the page (``static/index.html``); ``GET /static/...``: its script and style,
  all shipped in the package (the page works offline).
* ``GET /api/tokenizers``: ``{"tokenizers": [{"name", "family", "vocab_size", "source"}],
  "default": [...], "limits": {...}}``.
* ``POST /api/encode`` ``{"tokenizer", "text", "allowed_special"?, "disallowed_special"?}``:
  ``{"ids", "tokens", "offsets", "count", ...}`` (:func:`~tokenforge.web.views.encode_view`).
  Special-token strings in the text follow :meth:`Tokenizer.encode <tokenforge.Tokenizer.encode>`
  (tiktoken's rule): by default one is refused (400, naming it);
  ``"allowed_special": ["<|endoftext|>"]`` (or ``"all"``) encodes it as a special token,
  ``"disallowed_special": []`` as ordinary text.
* ``POST /api/token`` ``{"tokenizer", "id"}``: one token, with its BPE merge tree.
* ``POST /api/stability`` ``{"tokenizer", "text", "allowed_special"?, "disallowed_special"?}``:
  the trailing tokens a continuation could change, as indices into the tokens ``/api/encode`` gives.
* ``POST /api/numbers`` ``{"tokenizers", "text"?}`` and ``POST /api/indent`` ``{"tokenizers",
  "max_spaces"?}``: what ``tokenforge explain --numbers`` / ``--indent`` show.
* ``POST /api/glitch`` ``{"tokenizer", "top"?}``: glitch-token candidates on the embedded corpus.
* ``POST /api/compare`` ``{"tokenizers", "files": [{"name", "base64"}]}``: the ``compare``
  table of the files (their bytes, base64-encoded: RFC 4648).

Safety:

* a request whose ``Host`` header is not this machine's loopback name or address, the
  address the server is bound to, or a name allowed with ``allow_hosts`` (``--allow-host``)
  is refused (400): a web page whose name was rebound to 127.0.0.1 (DNS rebinding) cannot
  use the API;
* every ``POST /api/...`` must be ``Content-Type: application/json`` (415 otherwise): a
  cross-origin page can only send that type after a CORS preflight, which this server
  never grants, so other sites cannot make it work;
* a request can only name a tokenizer the server offers (never a path); bodies, texts and
  uploads have size limits (413 with a message) and JSON nesting a depth limit (400);
* work runs on a fixed number of worker threads, each request within a time limit (503
  when it runs over, or when it waited that long for a worker). Work that ran over keeps
  its worker until it ends (a running encode cannot be interrupted), so the workers busy
  are always the work running, and the other workers keep serving;
* connections that are slow to send a request, or idle between requests, are closed
  (``serve`` runs uvicorn with these timeouts: :func:`tokenforge.web.server.server_config`).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import functools
import ipaddress
import json
import queue
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InvalidArgumentError, SpecialTokenError, TokenforgeError
from ..tokenizer import Tokenizer
from . import views
from .static_page import static_dir

__all__ = ["DEFAULT_TOKENIZERS", "Limits", "Registry", "create_app", "default_registry"]

#: Shown side by side when the page opens without a shared link.
DEFAULT_TOKENIZERS = ("cl100k_base", "o200k_base")


@dataclass(frozen=True)
class Limits:
    """Size and time limits of the server (413 / 400 / 503 beyond them)."""

    max_body_bytes: int = 8 << 20  #: a JSON request body
    max_text_chars: int = 1_000_000  #: the text of one request
    max_upload_bytes: int = 8 << 20  #: all files of one compare upload together (before base64)
    max_files: int = 8  #: files of one compare upload
    max_json_depth: int = 32  #: nesting of a JSON request body (the page sends 3)
    timeout: float = 30.0  #: seconds for one request: waiting for a worker, then its work
    workers: int = 4  #: requests worked on at once (the others wait)
    read_timeout: float = 10.0  #: seconds a client has to send a request's headers, and its body
    keep_alive: float = 5.0  #: seconds an idle connection stays open between requests

    def to_dict(self) -> dict[str, Any]:
        return {
            "max_body_bytes": self.max_body_bytes,
            "max_text_chars": self.max_text_chars,
            "max_upload_bytes": self.max_upload_bytes,
            "max_files": self.max_files,
            "max_json_depth": self.max_json_depth,
            "timeout": self.timeout,
        }


class HTTPProblem(Exception):
    """An answer other than 200, with a message for the page."""

    def __init__(self, status: int, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.extra = extra


@dataclass
class Registry:
    """The tokenizers a server offers, by name. A named encoding is loaded on first use;
    only names listed here can be asked for."""

    loaders: dict[str, Callable[[], Tokenizer]] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)
    #: the names asked for (command line, API), in order: the page opens with them side by side
    requested: list[str] = field(default_factory=list)
    _loaded: dict[str, Tokenizer] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, name: str, loader: Callable[[], Tokenizer] | Tokenizer, source: str) -> str:
        """Offer ``loader`` (a tokenizer, or a function returning one) as ``name`` (made
        unique with ``#2``, ``#3``...). Returns the name used."""
        base, n = name, 2
        while name in self.loaders:
            name, n = f"{base}#{n}", n + 1
        if isinstance(loader, Tokenizer):
            self._loaded[name] = loader
            tok = loader
            self.loaders[name] = lambda: tok
        else:
            self.loaders[name] = loader
        self.sources[name] = source
        return name

    def get(self, name: Any, key: str = "tokenizer") -> Tokenizer:
        """The tokenizer offered as ``name`` (the value of the request's field ``key``)."""
        if name is None:
            raise HTTPProblem(400, f"{key!r} is required: the name of a tokenizer GET /api/tokenizers lists")
        if not isinstance(name, str):
            raise HTTPProblem(400, f"{key!r} must be a tokenizer's name (a string), got a JSON "
                                   f"{_json_type(name)}; GET /api/tokenizers lists those offered")
        if name not in self.loaders:
            shown = name if len(name) < 200 else name[:60] + f"... ({len(name):,} characters)"
            raise HTTPProblem(404, f"unknown tokenizer {shown!r}; GET /api/tokenizers lists those offered")
        with self._lock:
            tok = self._loaded.get(name)
            if tok is None:
                tok = self._loaded[name] = self.loaders[name]()
        return tok

    def names(self) -> list[str]:
        return list(self.loaders)


def _json_type(value: Any) -> str:
    return {bool: "boolean", int: "number", float: "number", list: "array", dict: "object",
            str: "string"}.get(type(value), type(value).__name__)


def default_registry(specs: Mapping[str, Any] | None = None, paths: tuple[str, ...] = ()) -> Registry:
    """The named encodings, then ``specs`` (``{name: Tokenizer}`` from the API) and ``paths``
    (files, folders or names as the command line's ``-t`` takes them)."""
    from ..encodings import ENCODINGS, get_encoding
    from ..io import load, resolve_tokenizer

    reg = Registry()
    for name in ENCODINGS:
        reg.add(name, functools.partial(get_encoding, name), "encoding")
    for name, tok in (specs or {}).items():
        if not isinstance(tok, Tokenizer):
            raise TokenforgeError(f"serve(tokenizers=...): {name!r} is a {type(tok).__name__}, not a tokenforge Tokenizer")
        reg.requested.append(reg.add(name, tok, "api"))
    for spec in paths:
        resolved = resolve_tokenizer(spec)
        if resolved in ENCODINGS:  # already offered
            reg.requested.append(resolved)
            continue
        tok = load(resolved)  # fail now, on the command line, not in the browser
        p = Path(resolved)
        label = p.name if p.name not in ("tokenizer.json", "tokenizer.model", "vocab.txt") else f"{p.parent.name}/{p.name}"
        reg.requested.append(reg.add(label or resolved, tok, "file"))
    reg.requested = list(dict.fromkeys(reg.requested))
    return reg


def encoding_has_ranks(name: str) -> bool:
    """Whether the named encoding is a rank file (a byte-level BPE), not built by code."""
    from ..encodings import ENCODINGS

    return bool(ENCODINGS[name].rank_file)


def encoding_vocab_size(name: str) -> int:
    """The ``n_vocab`` of the named rank-file encoding, read from its rank file and special
    tokens without building the tokenizer, so that listing every encoding stays cheap."""
    from ..encodings import ENCODINGS, rank_file_bytes

    spec = ENCODINGS[name]
    if spec.explicit_n_vocab is not None:
        return spec.explicit_n_vocab
    top = max((int(line.rpartition(b" ")[2]) for line in rank_file_bytes(spec).splitlines() if line), default=-1)
    return max([top, *spec.special_tokens.values()]) + 1


# ---------------------------------------------------------------------------------------------
# the request guard: Host (DNS rebinding) and Content-Type (cross-origin requests)

#: The names a browser on this machine uses for it; any loopback address is accepted too.
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")


def split_host(value: str) -> tuple[str, int | None] | None:
    """``(name, port)`` of a ``Host`` header (RFC 9110 §7.2: ``uri-host [":" port]``, an
    IPv6 address in brackets), the name lower-cased without a final dot; ``None`` if malformed."""
    v = value.strip().lower()
    if v.startswith("["):
        end = v.find("]")
        if end < 0:
            return None
        name, rest = v[1:end], v[end + 1 :]
        try:
            ipaddress.IPv6Address(name)
        except ValueError:
            return None
    else:
        name, colon, port = v.partition(":")
        rest = colon + port
    if rest and not re.fullmatch(r":\d{1,5}", rest):
        return None
    name = name[:-1] if name.endswith(".") else name
    if not name or not re.fullmatch(r"[a-z0-9._:%-]+", name):
        return None
    return name, int(rest[1:]) if rest else None


class HostRules:
    """Which ``Host`` headers the server answers: loopback names and addresses, the address
    it is bound to, and the names given (``name`` or ``name:port``, for a proxy). Bound to
    every address (``0.0.0.0``, ``::``), it also answers to any IP address: a browser sends
    an address only when it was asked for that address, never after a DNS lookup, so an
    address cannot be a rebound name."""

    def __init__(self, bound: str | None = None, allow: Sequence[str] = ()) -> None:
        self.names: set[str] = set(LOOPBACK_NAMES)
        self.any_address = False
        if bound:
            b = bound.strip("[]").lower()
            self.any_address = b in ("0.0.0.0", "::", "")
            self.names.add(b)
        self.allowed: list[tuple[str, int | None]] = []
        for spec in allow:
            parsed = split_host(spec) if isinstance(spec, str) else None
            if parsed is None:
                raise InvalidArgumentError(
                    f"allow-host {spec!r} is not a host name or address, with an optional :port "
                    "(e.g. tokens.example.org or tokens.example.org:443)")
            self.allowed.append(parsed)

    def allows(self, header: str | None) -> bool:
        parsed = split_host(header) if header else None
        if parsed is None:
            return False
        name, port = parsed
        if name in self.names or any(n == name and (p is None or p == port) for n, p in self.allowed):
            return True
        try:
            address = ipaddress.ip_address(name)
        except ValueError:
            return False
        return address.is_loopback or self.any_address

    def shown(self) -> str:
        names = [n if ":" not in n else f"[{n}]" for n in (*LOOPBACK_NAMES, *sorted(self.names - set(LOOPBACK_NAMES)))]
        names += [n + (f":{p}" if p is not None else "") for n, p in self.allowed]
        return ", ".join(names)


class RequestGuard:
    """ASGI middleware: refuses a request with a ``Host`` the server does not answer to
    (400) and a ``POST /api/...`` whose body is not declared ``application/json`` (415),
    before the application reads anything."""

    def __init__(self, app: Any, hosts: HostRules) -> None:
        self.app = app
        self.hosts = hosts

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            problem = self.check(scope)
            if problem is not None:
                from starlette.responses import JSONResponse

                await JSONResponse({"error": problem.message}, status_code=problem.status)(scope, receive, send)
                return
        await self.app(scope, receive, send)

    def check(self, scope: Any) -> HTTPProblem | None:
        headers: dict[bytes, bytes] = {}
        for k, v in scope["headers"]:
            headers.setdefault(k, v)
        host = headers.get(b"host", b"").decode("latin-1")
        if not self.hosts.allows(host):
            shown = host if len(host) <= 100 else host[:100] + "..."
            return HTTPProblem(
                400,
                (f"refused: the Host header {shown!r} is not a name of this server" if host else
                 "refused: the request has no Host header") +
                f". It answers to {self.hosts.shown()}, so that a web page whose name is rebound to this "
                "machine (DNS rebinding) cannot use it; behind a proxy or under another name, start it with "
                "--allow-host NAME (serve(allow_hosts=[...]))",
            )
        if scope["method"] == "POST" and scope["path"].startswith("/api/"):
            ctype = headers.get(b"content-type", b"").decode("latin-1")
            media, _, params = ctype.partition(";")
            charset = re.search(r"(?i)charset\s*=\s*\"?([\w-]+)", params)
            if media.strip().lower() != "application/json" or (charset and charset.group(1).lower() not in ("utf-8", "utf8")):
                got = f"Content-Type {ctype[:100]!r}" if ctype else "no Content-Type"
                return HTTPProblem(
                    415,
                    f"POST {scope['path']} takes a JSON body sent as Content-Type: application/json (UTF-8), "
                    f"not {got}; e.g. curl -H 'Content-Type: application/json' -d '{{...}}'",
                )
        return None


# ---------------------------------------------------------------------------------------------
# the workers


class Workers:
    """A fixed number of daemon threads doing the requests' work, in order of arrival.

    A request that runs over its time limit is answered (503) at once, but its work keeps
    its thread until it ends: a running encode (C++ without the GIL, or a Python loop)
    cannot be interrupted, and a thread that is given up on but keeps running would make
    room for more work than the machine was told to run at once. So at most ``n`` pieces
    of work ever run, ``busy`` counts them, and work that waited past its time limit
    without starting is dropped, never run.
    """

    def __init__(self, n: int) -> None:
        if not isinstance(n, int) or n < 1:
            raise InvalidArgumentError(f"Limits.workers must be a positive integer, got {n!r}")
        self.n = n
        self.busy = 0
        self._queue: queue.SimpleQueue[tuple[Callable[[], Any], Future[Any]]] = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()

    def submit(self, fn: Callable[[], Any]) -> Future[Any]:
        fut: Future[Any] = Future()
        self._queue.put((fn, fut))
        with self._lock:
            if len(self._threads) < self.n:
                t = threading.Thread(target=self._loop, name=f"tokenforge-web-{len(self._threads)}", daemon=True)
                self._threads.append(t)
                t.start()
        return fut

    def _loop(self) -> None:
        while True:
            fn, fut = self._queue.get()
            if not fut.set_running_or_notify_cancel():  # given up on while it waited
                continue
            with self._lock:
                self.busy += 1
            try:
                result = fn()
            except BaseException as exc:  # handed to the request (if it still waits)
                fut.set_exception(exc)
            else:
                fut.set_result(result)
            finally:
                with self._lock:
                    self.busy -= 1


# ---------------------------------------------------------------------------------------------
# special tokens: the library's rule, its hint given in the API's terms

_SPECIAL_HINT = re.compile(
    r"Pass allowed_special=\{(?P<tok>.+?)\} \(or 'all'\) to encode it as a special token, "
    r"or disallowed_special=\(\) to encode it as ordinary text\."
)


def special_problem(exc: SpecialTokenError) -> HTTPProblem:
    """A 400 for a special-token string refused in a request's text, saying which fields to send."""
    import ast

    message = str(exc)
    token = None
    m = _SPECIAL_HINT.search(message)
    if m is not None:
        try:
            token = sorted(ast.literal_eval("{" + m.group("tok") + "}"))[0]
        except (ValueError, SyntaxError, IndexError):
            token = None
    if token is not None:
        message = _SPECIAL_HINT.sub(
            lambda _: f'Send "allowed_special": [{json.dumps(token)}] (or "all") to encode it as a special token, '
                      'or "disallowed_special": [] to encode it as ordinary text.',
            message,
        )
        return HTTPProblem(400, message, special_token=token)
    return HTTPProblem(400, message)


def special_policy(data: Mapping[str, Any]) -> dict[str, Any]:
    """``allowed_special`` and ``disallowed_special`` of a request, as :meth:`Tokenizer.encode`
    takes them (``"all"`` or a list of strings each; absent: the tokenizer's default)."""
    if "specials" in data:
        raise HTTPProblem(400, "'specials' is not a field any more: send \"allowed_special\": \"all\" to encode "
                               "special-token strings as special tokens, or \"disallowed_special\": [] to encode "
                               "them as ordinary text (tiktoken's names)")
    out: dict[str, Any] = {}
    for key in ("allowed_special", "disallowed_special"):
        if key not in data:
            continue
        value = data[key]
        if value == "all":
            out[key] = "all"
        elif isinstance(value, list) and len(value) <= 10_000 and all(isinstance(t, str) for t in value):
            out[key] = frozenset(value)
        else:
            raise HTTPProblem(400, f"{key!r} must be \"all\" or a list of special-token strings, got a JSON "
                                   f"{_json_type(value)}")
    return out


def json_depth(value: Any, limit: int) -> bool:
    """Whether ``value`` nests arrays and objects more than ``limit`` deep."""
    if not isinstance(value, (list, dict)):
        return False
    level = [value]
    for _ in range(limit):
        level = [c for v in level for c in (v.values() if isinstance(v, dict) else v)
                 if isinstance(c, (list, dict))]
        if not level:
            return False
    return True


# ---------------------------------------------------------------------------------------------
# the application


def create_app(registry: Registry, limits: Limits | None = None, *, host: str | None = None,
               allow_hosts: Sequence[str] = ()) -> Any:
    """The Starlette application for ``registry`` (needs ``pip install 'tokenforge[serve]'``).

    It answers requests whose ``Host`` is a loopback name or address, ``host`` (the address
    it is bound to) or one of ``allow_hosts`` (names, or ``name:port``, that a proxy in front
    of it passes on)."""
    try:
        import anyio
        from starlette.applications import Starlette
        from starlette.middleware import Middleware
        from starlette.requests import Request
        from starlette.responses import FileResponse, JSONResponse, Response
        from starlette.routing import Mount, Route
        from starlette.staticfiles import StaticFiles
    except ImportError as exc:  # pragma: no cover - the extra is missing
        from ..errors import MissingDependencyError

        raise MissingDependencyError(f"the token page needs its extra: pip install 'tokenforge[serve]' ({exc})") from None

    lim = limits or Limits()
    hosts = HostRules(host, allow_hosts)
    workers = Workers(lim.workers)
    static = static_dir()
    glitch_cache: dict[str, dict[str, Any]] = {}
    vocab_sizes: dict[str, int] = {}

    async def run(fn: Callable[[], Any]) -> Any:
        """fn() on a worker, within the time limit (counted from now: the wait for a worker included)."""
        fut = workers.submit(fn)
        try:
            with anyio.fail_after(lim.timeout):
                return await asyncio.wrap_future(fut)
        except TimeoutError:
            if fut.cancel():  # never started: dropped
                raise HTTPProblem(503, f"the server is busy: its {lim.timeout:g} s for this request went by while "
                                       f"all {lim.workers} workers were on earlier requests; try again") from None
            raise HTTPProblem(503, f"the request took longer than {lim.timeout:g} s; try a shorter text") from None

    async def body_json(request: Request, limit: int | None = None) -> dict[str, Any]:
        limit = lim.max_body_bytes if limit is None else limit
        size = request.headers.get("content-length")
        if size is not None and size.isdigit() and int(size) > limit:
            raise HTTPProblem(413, f"request body of {int(size):,} bytes; the limit is {limit:,}")
        chunks = []
        total = 0
        try:
            with anyio.fail_after(lim.read_timeout):
                async for chunk in request.stream():
                    total += len(chunk)
                    if total > limit:
                        raise HTTPProblem(413, f"request body over the limit of {limit:,} bytes")
                    chunks.append(chunk)
        except TimeoutError:
            raise HTTPProblem(408, f"the request body did not arrive within {lim.read_timeout:g} s") from None
        too_deep = HTTPProblem(400, f"the request body nests arrays and objects more than {lim.max_json_depth} "
                                    "deep; no request of this API needs more than 3")
        try:
            data = json.loads(b"".join(chunks))
        except RecursionError:  # deeper than Python's recursion limit
            raise too_deep from None
        except (ValueError, UnicodeDecodeError) as exc:
            raise HTTPProblem(400, f"the request body is not JSON: {exc}") from None
        if json_depth(data, lim.max_json_depth):
            raise too_deep
        if not isinstance(data, dict):
            raise HTTPProblem(400, "the request body must be a JSON object")
        return data

    def text_of(data: Mapping[str, Any], key: str = "text", required: bool = True) -> str | None:
        text = data.get(key)
        if text is None and not required:
            return None
        if not isinstance(text, str):
            raise HTTPProblem(400, f"{key!r} must be a string")
        if len(text) > lim.max_text_chars:
            raise HTTPProblem(413, f"text of {len(text):,} characters; the limit is {lim.max_text_chars:,}")
        return text

    def names_of(data: Mapping[str, Any]) -> dict[str, Tokenizer]:
        names = data.get("tokenizers")
        if not isinstance(names, list) or not names or len(names) > 8:
            raise HTTPProblem(400, "'tokenizers' must be a list of 1 to 8 names")
        toks: dict[str, Tokenizer] = {}
        for n in names:
            tok = registry.get(n, "tokenizers")  # a name, checked: a str
            toks[n] = tok
        return toks

    def endpoint(handler: Callable[[Request], Any]) -> Callable[[Request], Any]:
        async def wrapped(request: Request) -> Response:
            try:
                return JSONResponse(await handler(request))
            except SpecialTokenError as exc:  # a special-token string in the text: the fields to send
                problem = special_problem(exc)
                return JSONResponse({"error": problem.message, **problem.extra}, status_code=problem.status)
            except HTTPProblem as exc:
                return JSONResponse({"error": exc.message, **exc.extra}, status_code=exc.status)
            except TokenforgeError as exc:  # a refused input: the message names it
                return JSONResponse({"error": f"{type(exc).__name__}: {exc}"}, status_code=422)

        return wrapped

    async def index(request: Request) -> Response:
        return FileResponse(static / "index.html", headers=_SECURITY_HEADERS)

    async def tokenizers(request: Request) -> dict[str, Any]:
        def info() -> list[dict[str, Any]]:
            out = []
            for name in registry.names():
                if registry.sources[name] == "encoding" and name not in registry._loaded and encoding_has_ranks(name):
                    # not loaded yet: its size read without building it
                    if name not in vocab_sizes:
                        vocab_sizes[name] = encoding_vocab_size(name)
                    out.append({"name": name, "family": "bpe", "vocab_size": vocab_sizes[name], "source": "encoding"})
                else:
                    out.append(views.tokenizer_info(name, registry.get(name), registry.sources[name]))
            return out

        offered = await run(info)
        default = registry.requested[:4] or list(DEFAULT_TOKENIZERS)
        return {"tokenizers": offered, "default": default, "limits": lim.to_dict()}

    def text_request(data: Mapping[str, Any]) -> tuple[str, Tokenizer, dict[str, Any]]:
        """``text``, ``tokenizer`` and the special-token policy of an encode-like request, checked."""
        text = text_of(data)
        assert text is not None  # required: text_of raised otherwise
        tok = registry.get(data.get("tokenizer"))
        return text, tok, special_policy(data)

    async def encode(request: Request) -> dict[str, Any]:
        data = await body_json(request)
        text, tok, policy = text_request(data)
        out = await run(lambda: views.encode_view(tok, text, **policy))
        out["tokenizer"] = data["tokenizer"]
        return out  # type: ignore[no-any-return]

    async def token(request: Request) -> dict[str, Any]:
        data = await body_json(request)
        tok = registry.get(data.get("tokenizer"))
        tid = data.get("id")
        if not isinstance(tid, int) or isinstance(tid, bool) or not 0 <= tid < tok.n_vocab:
            raise HTTPProblem(400, f"'id' must be a token id in [0, {tok.n_vocab}), got {tid!r}"[:300])
        return await run(lambda: views.token_view(tok, tid))  # type: ignore[no-any-return]

    async def stability(request: Request) -> dict[str, Any]:
        text, tok, policy = text_request(await body_json(request))
        return await run(lambda: views.stability_view(tok, text, **policy))  # type: ignore[no-any-return]

    async def numbers(request: Request) -> dict[str, Any]:
        data = await body_json(request)
        toks = names_of(data)
        text = text_of(data, required=False)
        return await run(lambda: views.numbers_view(toks, text))  # type: ignore[no-any-return]

    async def indent(request: Request) -> dict[str, Any]:
        data = await body_json(request)
        toks = names_of(data)
        max_spaces = data.get("max_spaces", 16)
        if not isinstance(max_spaces, int) or isinstance(max_spaces, bool) or not 0 <= max_spaces <= 64:
            raise HTTPProblem(400, "'max_spaces' must be an integer in [0, 64]")
        return await run(lambda: views.indent_view(toks, max_spaces))  # type: ignore[no-any-return]

    async def glitch(request: Request) -> dict[str, Any]:
        data = await body_json(request)
        tok = registry.get(data.get("tokenizer"))
        name: str = data["tokenizer"]
        top = data.get("top", 50)
        if not isinstance(top, int) or isinstance(top, bool) or not 1 <= top <= 1000:
            raise HTTPProblem(400, "'top' must be an integer in [1, 1000]")

        def work() -> dict[str, Any]:
            full = glitch_cache.get(name)
            if full is None:
                from ..corpus import embedded_corpus

                corpus = [lang.train_text() for lang in embedded_corpus()]
                full = glitch_cache[name] = views.glitch_view(tok, corpus, top=1000)
            return {**full, "candidates": full["candidates"][:top]}

        return await run(work)  # type: ignore[no-any-return]

    async def compare(request: Request) -> dict[str, Any]:
        # base64 takes 4 bytes for 3, plus the names and the JSON around them
        data = await body_json(request, max(lim.max_body_bytes, lim.max_upload_bytes * 4 // 3 + (64 << 10)))
        files = data.get("files")
        if not isinstance(files, list) or not files:
            raise HTTPProblem(400, "'files' must be a list of 1 or more {\"name\", \"base64\"} objects")
        if len(files) > lim.max_files:
            raise HTTPProblem(400, f"{len(files)} files; at most {lim.max_files} at once")
        texts: dict[str, str] = {}
        total = 0
        for k, f in enumerate(files):
            fname = f.get("name") if isinstance(f, dict) else None
            fname = fname[:200] if isinstance(fname, str) and fname else f"file {k + 1}"
            content = f.get("base64") if isinstance(f, dict) else None
            if not isinstance(content, str):
                raise HTTPProblem(400, f"files[{k}] ({fname}): 'base64' must be the file's bytes as a base64 string")
            try:
                raw = base64.b64decode(content, validate=True)
            except (binascii.Error, ValueError) as exc:
                raise HTTPProblem(400, f"{fname}: 'base64' is not base64 ({exc})") from None
            total += len(raw)
            if total > lim.max_upload_bytes:
                raise HTTPProblem(413, f"files over the limit of {lim.max_upload_bytes:,} bytes")
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise HTTPProblem(400, f"{fname}: not UTF-8 at byte {exc.start}") from None
            label, n = fname, 2
            while label in texts:
                label, n = f"{fname}#{n}", n + 1
            texts[label] = text
        toks = names_of(data)
        return await run(lambda: views.compare_view(toks, texts))  # type: ignore[no-any-return]

    routes = [
        Route("/", index),
        Route("/api/tokenizers", endpoint(tokenizers), methods=["GET"]),
        Route("/api/encode", endpoint(encode), methods=["POST"]),
        Route("/api/token", endpoint(token), methods=["POST"]),
        Route("/api/stability", endpoint(stability), methods=["POST"]),
        Route("/api/numbers", endpoint(numbers), methods=["POST"]),
        Route("/api/indent", endpoint(indent), methods=["POST"]),
        Route("/api/glitch", endpoint(glitch), methods=["POST"]),
        Route("/api/compare", endpoint(compare), methods=["POST"]),
        Mount("/static", app=StaticFiles(directory=str(static)), name="static"),
    ]
    app = Starlette(routes=routes, middleware=[Middleware(RequestGuard, hosts=hosts)])
    app.state.registry = registry
    app.state.limits = lim
    app.state.workers = workers
    return app


# The page loads only its own files; no inline script; no framing by other sites.
_SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
                               "object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}

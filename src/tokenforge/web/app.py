"""The local token page: a Starlette application serving the page and its JSON API.

Routes (every request and answer body is JSON unless said otherwise):

* ``GET /``: the page (``static/index.html``); ``GET /static/...``: its script and style,
  all shipped in the package (the page works offline).
* ``GET /api/tokenizers``: ``{"tokenizers": [{"name", "family", "vocab_size", "source"}],
  "default": [...], "limits": {...}}``.
* ``POST /api/encode`` ``{"tokenizer", "text", "specials"?: true}``: ``{"ids", "tokens",
  "offsets", "count", ...}`` (:func:`~tokenforge.web.views.encode_view`).
* ``POST /api/token`` ``{"tokenizer", "id"}``: one token, with its BPE merge tree.
* ``POST /api/stability`` ``{"tokenizer", "text", "specials"?: true}``: the trailing tokens a
  continuation could change, as indices into the tokens ``/api/encode`` gives.
* ``POST /api/numbers`` ``{"tokenizers", "text"?}`` and ``POST /api/indent`` ``{"tokenizers",
  "max_spaces"?}``: what ``tokenforge explain --numbers`` / ``--indent`` show.
* ``POST /api/glitch`` ``{"tokenizer", "top"?}``: glitch-token candidates on the embedded corpus.
* ``POST /api/compare``: a multipart form with ``tokenizers`` (one field per name) and
  ``files`` (one or more UTF-8 text files): the ``compare`` table.

Safety: a request can only name a tokenizer the server offers (never a path);
bodies, texts and uploads have size limits (413 with a message); all work runs
in worker threads, at most a few at once, each with a time limit (503 when it
runs over), so one huge or slow request cannot stall the others.
"""

from __future__ import annotations

import functools
import json
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import TokenforgeError
from ..tokenizer import Tokenizer
from . import views
from .static_page import static_dir

__all__ = ["DEFAULT_TOKENIZERS", "Limits", "Registry", "create_app", "default_registry"]

#: Shown side by side when the page opens without a shared link.
DEFAULT_TOKENIZERS = ("cl100k_base", "o200k_base")


@dataclass(frozen=True)
class Limits:
    """Size and time limits of the server (413 / 503 beyond them)."""

    max_body_bytes: int = 8 << 20  #: a JSON request body
    max_text_chars: int = 1_000_000  #: the text of one request
    max_upload_bytes: int = 8 << 20  #: all files of one compare upload together
    max_files: int = 8  #: files of one compare upload
    timeout: float = 30.0  #: seconds of work for one request
    workers: int = 4  #: requests worked on at once (the others wait)

    def to_dict(self) -> dict[str, Any]:
        return {
            "max_body_bytes": self.max_body_bytes,
            "max_text_chars": self.max_text_chars,
            "max_upload_bytes": self.max_upload_bytes,
            "max_files": self.max_files,
            "timeout": self.timeout,
        }


class HTTPProblem(Exception):
    """An answer other than 200, with a message for the page."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


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

    def get(self, name: Any) -> Tokenizer:
        if not isinstance(name, str) or name not in self.loaders:
            shown = name if isinstance(name, str) and len(name) < 200 else type(name).__name__
            raise HTTPProblem(404, f"unknown tokenizer {shown!r}; GET /api/tokenizers lists those offered")
        with self._lock:
            tok = self._loaded.get(name)
            if tok is None:
                tok = self._loaded[name] = self.loaders[name]()
        return tok

    def names(self) -> list[str]:
        return list(self.loaders)


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


# ---------------------------------------------------------------------------------------------
# the application


def create_app(registry: Registry, limits: Limits | None = None) -> Any:
    """The Starlette application for ``registry`` (needs ``pip install 'tokenforge[serve]'``)."""
    try:
        import anyio
        from starlette.applications import Starlette
        from starlette.requests import Request
        from starlette.responses import FileResponse, JSONResponse, Response
        from starlette.routing import Mount, Route
        from starlette.staticfiles import StaticFiles
    except ImportError as exc:  # pragma: no cover - the extra is missing
        from ..errors import MissingDependencyError

        raise MissingDependencyError(f"the token page needs its extra: pip install 'tokenforge[serve]' ({exc})") from None

    lim = limits or Limits()
    limiter = anyio.CapacityLimiter(lim.workers)
    static = static_dir()
    glitch_cache: dict[str, dict[str, Any]] = {}

    async def run(fn: Callable[[], Any]) -> Any:
        """fn() in a worker thread, within the time limit."""
        try:
            with anyio.fail_after(lim.timeout):
                return await anyio.to_thread.run_sync(fn, limiter=limiter, abandon_on_cancel=True)
        except TimeoutError:
            raise HTTPProblem(503, f"the request took longer than {lim.timeout:g} s; try a shorter text") from None

    async def body_json(request: Request) -> dict[str, Any]:
        size = request.headers.get("content-length")
        if size is not None and size.isdigit() and int(size) > lim.max_body_bytes:
            raise HTTPProblem(413, f"request body of {int(size):,} bytes; the limit is {lim.max_body_bytes:,}")
        chunks = []
        total = 0
        async for chunk in request.stream():
            total += len(chunk)
            if total > lim.max_body_bytes:
                raise HTTPProblem(413, f"request body over the limit of {lim.max_body_bytes:,} bytes")
            chunks.append(chunk)
        try:
            data = json.loads(b"".join(chunks))
        except (ValueError, UnicodeDecodeError) as exc:
            raise HTTPProblem(400, f"the request body is not JSON: {exc}") from None
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
        return {n: registry.get(n) for n in dict.fromkeys(names)}

    def endpoint(handler: Callable[[Request], Any]) -> Callable[[Request], Any]:
        async def wrapped(request: Request) -> Response:
            try:
                return JSONResponse(await handler(request))
            except HTTPProblem as exc:
                return JSONResponse({"error": exc.message}, status_code=exc.status)
            except TokenforgeError as exc:  # a refused input: the message names it
                return JSONResponse({"error": f"{type(exc).__name__}: {exc}"}, status_code=422)

        return wrapped

    async def index(request: Request) -> Response:
        return FileResponse(static / "index.html", headers=_SECURITY_HEADERS)

    async def tokenizers(request: Request) -> dict[str, Any]:
        def info() -> list[dict[str, Any]]:
            out = []
            for name in registry.names():
                if name in registry._loaded or registry.sources[name] != "encoding":
                    out.append(views.tokenizer_info(name, registry.get(name), registry.sources[name]))
                else:  # not loaded yet: no need to load every encoding to list it
                    out.append({"name": name, "family": "bpe", "vocab_size": None, "source": "encoding"})
            return out

        offered = await run(info)
        default = registry.requested[:4] or list(DEFAULT_TOKENIZERS)
        return {"tokenizers": offered, "default": default, "limits": lim.to_dict()}

    def text_request(data: Mapping[str, Any]) -> tuple[str, Tokenizer, bool]:
        """``text``, ``tokenizer`` and ``specials`` of an encode-like request, checked."""
        text = text_of(data)
        assert text is not None  # required: text_of raised otherwise
        tok = registry.get(data.get("tokenizer"))
        specials = data.get("specials", True)
        if not isinstance(specials, bool):
            raise HTTPProblem(400, "'specials' must be true or false")
        return text, tok, specials

    async def encode(request: Request) -> dict[str, Any]:
        data = await body_json(request)
        text, tok, specials = text_request(data)
        out = await run(lambda: views.encode_view(tok, text, specials=specials))
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
        text, tok, specials = text_request(await body_json(request))
        return await run(lambda: views.stability_view(tok, text, specials=specials))  # type: ignore[no-any-return]

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
        size = request.headers.get("content-length")
        if size is not None and size.isdigit() and int(size) > lim.max_upload_bytes + (64 << 10):
            raise HTTPProblem(413, f"upload of {int(size):,} bytes; the limit is {lim.max_upload_bytes:,}")
        try:
            async with request.form(max_files=lim.max_files, max_fields=32,
                                    max_part_size=lim.max_upload_bytes) as form:
                names = [v for v in form.getlist("tokenizers") if isinstance(v, str)]
                texts: dict[str, str] = {}
                total = 0
                for upload in form.getlist("files"):
                    if isinstance(upload, str):
                        raise HTTPProblem(400, "'files' must be file uploads")
                    raw = await upload.read(lim.max_upload_bytes + 1 - total)
                    total += len(raw)
                    if total > lim.max_upload_bytes:
                        raise HTTPProblem(413, f"files over the limit of {lim.max_upload_bytes:,} bytes")
                    fname = upload.filename or f"file {len(texts) + 1}"
                    try:
                        text = raw.decode("utf-8")
                    except UnicodeDecodeError as exc:
                        raise HTTPProblem(400, f"{fname}: not UTF-8 at byte {exc.start}") from None
                    label, n = fname, 2
                    while label in texts:
                        label, n = f"{fname}#{n}", n + 1
                    texts[label] = text
        except HTTPProblem:
            raise
        except Exception as exc:  # the multipart parser's own refusals (too many files, bad form)
            raise HTTPProblem(400, f"could not read the upload: {exc}") from None
        if not texts:
            raise HTTPProblem(400, "upload at least one file as 'files'")
        toks = names_of({"tokenizers": names})
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
    app = Starlette(routes=routes)
    app.state.registry = registry
    app.state.limits = lim
    return app


# The page loads only its own files; no inline script; no framing by other sites.
_SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
                               "object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}

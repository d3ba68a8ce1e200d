"""A local web page to see tokens: ``tokenforge serve`` and :func:`serve`.

The page tokenizes as you type, side by side for up to four tokenizers, and
shows for each token its id, bytes, the text it covers and (byte-level BPE) the
merge tree with ranks; views for numbers, indentation, prefix stability and
glitch-token candidates; and the ``compare`` table for uploaded files. It runs
offline on the user's own tokenizers: every asset ships in the package.

Needs the ``serve`` extra: ``pip install 'tokenforge[serve]'`` (Starlette and uvicorn).
The JSON API the page uses is described in :mod:`tokenforge.web.app`.
"""

from __future__ import annotations

import ipaddress
import socket
import sys
import threading
import warnings
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..tokenizer import Tokenizer
    from .app import Limits

__all__ = ["DEFAULT_PORT", "serve"]

DEFAULT_PORT = 8765


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def serve(
    tokenizers: Mapping[str, Tokenizer] | None = None,
    *,
    paths: Sequence[str] = (),
    host: str = "127.0.0.1",
    port: int = DEFAULT_PORT,
    open_browser: bool = False,
    limits: Limits | None = None,
    log_level: str = "warning",
    allow_hosts: Sequence[str] = (),
) -> None:
    """Serve the token page until interrupted (Ctrl-C).

    ``tokenizers``: ``{name: Tokenizer}`` to offer (trained ones, say) besides the named
    encodings; ``paths``: files, folders or names as ``tokenforge -t`` takes them. The
    server binds ``host`` (loopback unless told otherwise: a warning says when it is
    not) and ``port`` (0: any free port), prints the page's URL and, with
    ``open_browser``, opens it.

    It answers only requests addressed to this machine by a loopback name or address
    (``localhost``, ``127.0.0.1``, ``[::1]``) or to ``host``, so that a web page whose
    name is rebound to this machine (DNS rebinding) cannot use it; ``allow_hosts`` adds
    names (``name`` or ``name:port``) that a proxy in front of it passes on. The other
    checks (JSON bodies only, sizes, time limits, slow connections) are listed in
    :mod:`tokenforge.web.app`.

    >>> import tokenforge
    >>> tokenforge.serve({"mine": tokenforge.get_encoding("gpt2")}, port=0)  # doctest: +SKIP
    tokenforge: serving the token page at http://127.0.0.1:41235/
    """
    from ..errors import InvalidArgumentError, MissingDependencyError
    from .app import HostRules, create_app, default_registry
    from .server import server_config

    try:
        import uvicorn
    except ImportError:
        raise MissingDependencyError("the token page needs its extra: pip install 'tokenforge[serve]'") from None
    if not isinstance(port, int) or not 0 <= port <= 65535:
        raise InvalidArgumentError(f"port must be an integer in [0, 65535], got {port!r}")
    if not _is_loopback(host):
        warnings.warn(
            f"serving on {host}: other machines can reach the page and make it encode text; "
            "bind 127.0.0.1 unless you mean it",
            stacklevel=2,
        )
    HostRules(host, allow_hosts)  # a malformed allow_hosts fails before anything is loaded
    app = create_app(default_registry(tokenizers, tuple(paths)), limits, host=host, allow_hosts=allow_hosts)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise InvalidArgumentError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    sock.listen(128)
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{bound}/"
    print(f"tokenforge: serving the token page at {url} (Ctrl-C stops)", file=sys.stderr, flush=True)
    server = uvicorn.Server(server_config(app, log_level))
    if open_browser:
        import webbrowser

        threading.Timer(0.5, webbrowser.open, args=(url,)).start()
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()


def __getattr__(name: str) -> Any:
    if name in ("create_app", "Limits", "Registry", "default_registry"):
        from . import app

        return getattr(app, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

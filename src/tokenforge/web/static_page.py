"""The token page as one self-contained HTML file (``tokenforge explain TEXT --html out.html``).

The file is the page the server serves, with its style and script inlined and
the data the server would have answered embedded as JSON in a
``<script type="application/json" id="tf-static">`` element: the tokens of
the text under each tokenizer, every token's details (bytes, and the BPE merge
tree with ranks) and the prefix-stability marks. It opens from disk, offline,
with nothing to fetch; the text cannot be edited there.

The embedded JSON escapes ``<``, ``>``, ``&`` and the line separators, so no
token (``</script>``, say) can end the element early.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..tokenizer import Tokenizer
from . import views

__all__ = ["static_data", "static_dir", "static_html", "write_static_html"]


def static_data(tokenizers: Mapping[str, Tokenizer], text: str) -> dict[str, Any]:
    """What the page needs to show ``text`` under each tokenizer without a server."""
    encode: dict[str, Any] = {}
    tokens: dict[str, Any] = {}
    stability: dict[str, Any] = {}
    # the text is the author's own, shown, not sent to a model: its special-token strings
    # are shown as the special tokens they name
    for name, tok in tokenizers.items():
        enc = views.encode_view(tok, text, allowed_special="all", disallowed_special=())
        enc["tokenizer"] = name
        encode[name] = enc
        tokens[name] = {str(i): views.token_view(tok, i) for i in dict.fromkeys(enc["ids"])}
        stability[name] = views.stability_view(tok, text, allowed_special="all", disallowed_special=())
    return {
        "static": True,
        "text": text,
        "tokenizers": [views.tokenizer_info(name, tok, "file") for name, tok in tokenizers.items()],
        "columns": list(tokenizers),
        "encode": encode,
        "token": tokens,
        "stability": stability,
    }


def _script_json(data: Any) -> str:
    s = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    for ch, esc in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        s = s.replace(ch, esc)
    return s


def static_dir() -> Path:
    """The page's files (``index.html``, ``app.js``, ``app.css``), shipped in the package."""
    from importlib import resources

    return Path(str(resources.files("tokenforge").joinpath("web", "static")))


def _asset(name: str) -> str:
    return (static_dir() / name).read_text(encoding="utf-8")


def static_html(tokenizers: Mapping[str, Tokenizer], text: str) -> str:
    """The page for ``text`` under ``tokenizers`` (``{name: Tokenizer}``, 1 to 4), as one HTML document."""
    from ..errors import FileFormatError, InvalidArgumentError

    if not 1 <= len(tokenizers) <= 4:
        raise InvalidArgumentError(f"the page shows 1 to 4 tokenizers side by side, not {len(tokenizers)}")
    page = _asset("index.html")
    css, js = _asset("app.css"), _asset("app.js")
    if re.search(r"</(script|style)", js + css, re.IGNORECASE):  # would end the inlined element
        raise FileFormatError("the page's app.js or app.css contains a closing script/style tag; reinstall tokenforge",
                              path=static_dir())
    data = f'<script type="application/json" id="tf-static">{_script_json(static_data(tokenizers, text))}</script>\n'
    page, n_css = re.subn(r'<link[^>]*href="/static/app\.css"[^>]*>', lambda m: f"<style>\n{css}\n</style>", page)
    page, n_js = re.subn(r'<script[^>]*src="/static/app\.js"[^>]*>\s*</script>', lambda m: f"{data}<script>\n{js}\n</script>",
                         page)
    if n_css != 1 or n_js != 1:
        raise FileFormatError("index.html must link /static/app.css and /static/app.js once each; reinstall tokenforge",
                              path=static_dir())
    return page


def write_static_html(tokenizers: Mapping[str, Tokenizer], text: str, path: str | Path) -> Path:
    """Write :func:`static_html` to ``path`` atomically; returns the path."""
    from .._io import atomic_write

    page = static_html(tokenizers, text)
    with atomic_write(path) as f:
        f.write(page)
    return Path(path)

"""How ``serve`` runs uvicorn: the connection timeouts the application cannot set itself.

uvicorn closes a connection that stays idle after a response (``timeout_keep_alive``),
but not one that is opened and sends nothing, or sends its request line and headers a
byte at a time (the "slowloris" pattern): each would hold a connection and its buffers
for as long as the client likes. :func:`protocol_class` adds that timer: from the
moment a connection opens, or the first byte of its next request arrives, the headers
must be complete within ``read_timeout`` seconds, or the connection is closed. (The
application bounds the time to read a body with the same limit.)
"""

from __future__ import annotations

from typing import Any

__all__ = ["protocol_class", "server_config"]


def protocol_class(read_timeout: float) -> type:
    """uvicorn's h11 protocol, closing a connection whose request headers take longer
    than ``read_timeout`` seconds to arrive."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class HeaderTimeoutH11Protocol(H11Protocol):  # type: ignore[misc]
        _header_timer: Any = None

        def _waiting_for_headers(self) -> bool:
            return self.cycle is None or self.cycle.response_complete

        def _arm(self) -> None:
            if self._header_timer is None:
                self._header_timer = self.loop.call_later(read_timeout, self._headers_too_slow)

        def _disarm(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def _headers_too_slow(self) -> None:
            self._header_timer = None
            if self._waiting_for_headers() and not self.transport.is_closing():
                self.transport.close()

        def connection_made(self, transport: Any) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._arm()  # a connection that never sends a request is closed too

        def data_received(self, data: bytes) -> None:
            if self._waiting_for_headers():
                self._arm()  # the next request has begun: its headers have read_timeout to arrive
            super().data_received(data)
            if not self._waiting_for_headers():
                self._disarm()

        def on_response_complete(self) -> None:
            self._disarm()  # idle now: the keep-alive timer takes over
            super().on_response_complete()
            if not self._waiting_for_headers():  # a pipelined request started at once
                self._disarm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

    return HeaderTimeoutH11Protocol


def server_config(app: Any, log_level: str = "warning") -> Any:
    """The ``uvicorn.Config`` ``serve`` runs ``app`` with: its limits' ``read_timeout``
    for request headers and ``keep_alive`` for idle connections."""
    import uvicorn

    lim = app.state.limits
    return uvicorn.Config(app, log_level=log_level, lifespan="off", http=protocol_class(lim.read_timeout),
                          timeout_keep_alive=lim.keep_alive)

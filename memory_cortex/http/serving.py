"""Serving the app on its socket, with the connection rules aiohttp has no setting for.

- **Slow headers.** A connection must send a request's headers within ``server.header_timeout_s``
  of opening (or of its last answer), else it is closed: aiohttp's keep-alive timer, which starts
  when a connection opens and closes it while no complete request has arrived, is set to that time
  (its default, 75 s, let ~1,000 half-sent headers take every file descriptor).
- **Connections per client.** Beyond ``server.max_connections_per_client`` open connections from
  one address, a new one is closed at once, before aiohttp sees it (see :func:`per_client_cap`).
- **Accept errors.** When the process is out of file descriptors asyncio logs a traceback per
  failed ``accept()`` (164,000 lines in 50 s were measured); they are logged once per
  :data:`ACCEPT_ERROR_EVERY_S` instead, with how many there were.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import socket
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

from aiohttp import web

from ..config import ServerConfig

log = logging.getLogger(__name__)

# On a bind beyond loopback, when server.max_connections_per_client is unset.
LAN_CONNECTIONS_PER_CLIENT = 32
ACCEPT_ERROR_EVERY_S = 60.0
_ACCEPT_ERROR = "socket.accept() out of system resource"


def per_client_cap(server: ServerConfig) -> int:
    """Open connections one address may hold (0: no cap). Unset: :data:`LAN_CONNECTIONS_PER_CLIENT`
    on a bind beyond loopback; no cap on loopback, where every local client is 127.0.0.1."""
    if server.max_connections_per_client is not None:
        return server.max_connections_per_client
    return 0 if server.is_loopback else LAN_CONNECTIONS_PER_CLIENT


class ConnectionGate:
    """A protocol factory in front of aiohttp's: a connection from an address that already holds
    ``cap`` open ones is closed at once (``cap`` 0: none is). ``refused``: how many were."""

    def __init__(self, factory: Callable[[], asyncio.Protocol], cap: int) -> None:
        self._factory = factory
        self._cap = cap
        self._open: Counter[str] = Counter()
        self.refused = 0

    def __call__(self) -> asyncio.Protocol:
        return _GatedProtocol(self, self._factory())

    def admit(self, address: str) -> bool:
        if self._cap and self._open[address] >= self._cap:
            self.refused += 1
            return False
        self._open[address] += 1
        return True

    def release(self, address: str) -> None:
        self._open[address] -= 1
        if self._open[address] <= 0:
            del self._open[address]


class _GatedProtocol(asyncio.Protocol):
    """aiohttp's protocol for one connection, reached only when the gate admits the connection."""

    def __init__(self, gate: ConnectionGate, inner: asyncio.Protocol) -> None:
        self._gate = gate
        self._inner = inner
        self._address: str | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        peer = transport.get_extra_info("peername")
        address = str(peer[0]) if isinstance(peer, tuple) and peer else ""
        if not self._gate.admit(address):
            transport.abort()  # type: ignore[attr-defined]  # a stream transport: closed unread
            return
        self._address = address
        self._inner.connection_made(transport)

    def connection_lost(self, exc: Exception | None) -> None:
        if self._address is None:
            return
        self._gate.release(self._address)
        self._address = None
        self._inner.connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._address is not None:
            self._inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self._inner.eof_received() if self._address is not None else None

    def pause_writing(self) -> None:
        self._inner.pause_writing()

    def resume_writing(self) -> None:
        self._inner.resume_writing()


class AcceptErrorLog:
    """The event loop's exception handler: asyncio's "accept() out of system resource" is logged
    once per ``every_s`` with a count; anything else goes to the default handler."""

    def __init__(
        self, every_s: float = ACCEPT_ERROR_EVERY_S, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._every_s = every_s
        self._clock = clock
        self._last: float | None = None
        self.suppressed = 0

    def __call__(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        if context.get("message") != _ACCEPT_ERROR:
            loop.default_exception_handler(context)
            return
        now = self._clock()
        if self._last is not None and now - self._last < self._every_s:
            self.suppressed += 1
            return
        error = context.get("exception")
        log.error(
            "cannot accept connections: out of file descriptors or memory",
            extra={"error": str(error)[:200], "since_last_logged": self.suppressed},
        )
        self._last = now
        self.suppressed = 0


async def serve(
    app: web.Application,
    sock: socket.socket,
    server: ServerConfig,
    *,
    stop: asyncio.Event | None = None,
    **runner_options: Any,
) -> None:
    """Serve ``app`` on the listening ``sock`` until SIGINT or SIGTERM (or ``stop`` is set), then
    shut down as aiohttp's ``run_app`` does (in-flight requests get ``server.shutdown_timeout_s``).
    ``runner_options``: passed to aiohttp's ``AppRunner`` (the access log)."""
    loop = asyncio.get_running_loop()
    loop.set_exception_handler(AcceptErrorLog())
    runner = web.AppRunner(
        app,
        shutdown_timeout=server.shutdown_timeout_s,
        keepalive_timeout=server.header_timeout_s,
        **runner_options,
    )
    await runner.setup()
    try:
        assert runner.server is not None  # set by setup()
        gate = ConnectionGate(runner.server, per_client_cap(server))
        listener = await loop.create_server(gate, sock=sock, backlog=128)
        stop = stop or asyncio.Event()
        for number in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(number, stop.set)
        try:
            await stop.wait()
        finally:
            for number in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(number)
            listener.close()
    finally:
        await runner.cleanup()

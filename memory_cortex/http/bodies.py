"""Reading request bodies: after the token, within a time, within a budget shared by every connection.

The guard (``guard.py``) and the token check (``errors.auth_middleware``) decide from the headers
alone, so a client that may not call the API is answered before one byte of its body is read. Only
then does :class:`BodyReader` read a write's body, whole, into memory, for the handler:

- within ``server.body_timeout_s`` (408 and the connection closed), so a client sending one byte
  every few seconds holds nothing for long;
- a ``Content-Length`` over ``server.max_body_bytes`` is 413 at once, unread;
- within ``server.max_body_bytes_in_flight`` across all connections (a body counts from its first
  byte read until its handler is done): a body that does not fit beside the others is 503 ``server_busy`` (``Retry-After: 1``), unread, so many large
  bodies at once cannot take the daemon's memory;
- a client that closes the connection mid-body is counted under status 499 (client closed
  request), and nothing is logged above DEBUG;
- after a burst the freed memory is handed back to the system (:func:`release_freed_memory`;
  210 connections of 8 MiB had left the process 1.2 GiB larger for good).
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import gc
import logging
from collections.abc import Awaitable, Callable

from aiohttp import web

from ..config import ServerConfig
from ..keys import METRICS
from .errors import Handler, error_response
from .guard import WRITE_METHODS, answer_and_close
from .request_metrics import route_pattern

log = logging.getLogger(__name__)

# Freed body memory worth handing back (a trim walks the heap, ~ms: at most once per this much).
TRIM_AFTER_BYTES = 16 * 1024 * 1024
TRIM_DELAY_S = 1.0
# The status a request is counted under when its client closed the connection mid-body (nginx's).
CLIENT_CLOSED = 499


class BodyBudget:
    """The body bytes held at once (being read, or read and in a handler), across connections, kept
    at or under ``capacity``."""

    def __init__(self, capacity: int, release_memory: Callable[[], None]) -> None:
        self.capacity = capacity
        self.in_flight = 0
        self._freed = 0
        self._release_memory = release_memory

    def take(self, size: int) -> bool:
        """Reserve ``size`` bytes; False (nothing reserved) when they do not fit."""
        if self.in_flight + size > self.capacity:
            return False
        self.in_flight += size
        return True

    def give_back(self, size: int) -> None:
        """Return a reservation; once no body is held after :data:`TRIM_AFTER_BYTES` were freed, hand
        the memory back to the system."""
        self.in_flight -= size
        self._freed += size
        if self.in_flight == 0 and self._freed >= TRIM_AFTER_BYTES:
            self._freed = 0
            self._release_memory()


def release_freed_memory() -> Callable[[], None]:
    """What hands freed body memory back: a young-generation collection (a request that ended in an
    error is kept alive by a reference cycle through its traceback; a full collection would block
    the loop ~300 ms, this one ~15 ms), then glibc's ``malloc_trim(0)`` (freed heap pages go back
    to the system; glibc keeps them otherwise). Without glibc (musl frees by itself) only the
    collection."""
    name = ctypes.util.find_library("c")
    try:
        trim = ctypes.CDLL(name).malloc_trim if name else None
    except (OSError, AttributeError):
        trim = None
    if trim is not None:
        trim.argtypes = [ctypes.c_size_t]
        trim.restype = ctypes.c_int

    def release() -> None:
        gc.collect(1)
        if trim is not None:
            trim(0)

    return release


class BodyReader:
    """The middleware that reads a write's body (see the module docstring). ``budget``: shared by
    every request of this app."""

    def __init__(self, server: ServerConfig, budget: BodyBudget | None = None) -> None:
        self._timeout_s = server.body_timeout_s
        self._max_body = server.max_body_bytes
        release = release_freed_memory()

        def release_soon() -> None:
            # Once the requests that held the bodies are gone too (they outlive the reservation).
            asyncio.get_running_loop().call_later(TRIM_DELAY_S, release)

        self.budget = budget or BodyBudget(server.max_body_bytes_in_flight, release_soon)

    def middleware(self) -> Callable[[web.Request, Handler], Awaitable[web.StreamResponse]]:
        @web.middleware
        async def read_body(request: web.Request, handler: Handler) -> web.StreamResponse:
            if request.method not in WRITE_METHODS or not request.body_exists:
                return await handler(request)
            if request.match_info.http_exception is not None:
                return await handler(request)  # no such route or method: its 404/405, unread
            declared = request.content_length
            if declared is not None and declared > self._max_body:
                return await answer_and_close(
                    request,
                    error_response(
                        413,
                        "payload_too_large",
                        f"the body of {declared} bytes is over server.max_body_bytes ({self._max_body})",
                    ),
                )
            size = self._max_body if declared is None else declared  # chunked: at most the limit
            if not self.budget.take(size):
                response = error_response(
                    503, "server_busy", "too many request bodies are being read at once; retry shortly"
                )
                response.headers["Retry-After"] = "1"
                return await answer_and_close(request, response)
            try:
                try:
                    async with asyncio.timeout(self._timeout_s):
                        await request.read()  # kept by aiohttp: the handler's read() returns it
                except (ConnectionError, asyncio.CancelledError) as exc:
                    # The client went away mid-body: nobody to answer, nothing to log but a count.
                    log.debug("client closed the connection during its body", extra={"path": request.path})
                    if isinstance(exc, asyncio.CancelledError):  # aiohttp cancelled the handler
                        request.app[METRICS].count_http_request(
                            request.method, route_pattern(request), CLIENT_CLOSED
                        )
                        raise
                    return web.Response(status=CLIENT_CLOSED)
                except TimeoutError:
                    return await answer_and_close(
                        request,
                        error_response(
                            408,
                            "request_timeout",
                            f"the request body did not arrive within {self._timeout_s:g} s",
                        ),
                    )
                return await handler(request)
            finally:  # the body is held until its handler is done with it
                self.budget.give_back(size)

        return read_body

"""Who may address the daemon: the Host, Origin and Content-Type rules, one middleware for every route.

The trust model (README, *Security model*): on loopback without a token, any process of this machine
may call the API as any user — but a web page the user happens to visit must not. A page reaches a
loopback daemon in two ways, and each rule here closes one:

- **DNS rebinding.** A page on ``evil.example`` re-points that name at 127.0.0.1 and then reads the
  answers as same-origin. Its requests carry ``Host: evil.example:8300``, so a request is only
  answered when its ``Host`` names this machine's loopback (``localhost``, ``*.localhost``,
  127.0.0.0/8, ``[::1]``), the address the daemon is bound to, or an entry of
  ``server.allowed_hosts`` (a reverse proxy's name): otherwise 421 Misdirected Request.
- **Cross-site requests.** A page may *send* a "simple" request to any origin without asking (a
  form post, ``fetch`` with ``mode: "no-cors"`` and no or a text content type) and never read the
  answer — enough to plant a memory or start a lifecycle run. Browsers put an ``Origin`` header on
  every such request, so one whose ``Origin`` is neither the daemon's own (the same ``host:port`` as
  its ``Host``) nor in ``server.cors_origins`` is refused with 403, and every POST, PUT, PATCH and
  DELETE must declare ``Content-Type: application/json`` (415), which a browser only sends across
  origins after a CORS preflight — itself refused for such an origin.

The rules hold with an API token too (defence in depth: a token pasted into the dashboard of a
rebound origin would otherwise be sent along). Clients that are not browsers (the OpenClaw plugin,
curl, MCP clients) send a loopback ``Host`` and no ``Origin`` and are not affected, except that a
body-less POST or DELETE must now say ``Content-Type: application/json`` too.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Awaitable, Callable
from urllib.parse import urlsplit

from aiohttp import web

from ..config import ServerConfig
from .errors import Handler, error_response

# Methods that change something: each must declare a JSON body, so no browser sends one cross-site
# without a preflight.
WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def is_loopback_name(hostname: str) -> bool:
    """True for a name or address only this machine answers: localhost (and ``*.localhost``, which
    RFC 6761 reserves for loopback and browsers resolve without DNS), 127.0.0.0/8 and ::1."""
    if hostname == "localhost" or hostname.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(hostname).is_loopback
    except ValueError:
        return False


class RequestGuard:
    """The three rules for one server configuration (see the module docstring).

    Every rule is decided from the headers, before any of the body is read (``bodies.py`` reads it
    after the token check); a refused request's connection is closed rather than drained.

    Args:
        server: ``host`` (its address is accepted as a Host when it is a specific one),
            ``allowed_hosts`` and ``cors_origins``.
    """

    def __init__(self, server: ServerConfig) -> None:
        self._allowed_hosts = set(server.allowed_hosts)
        bound = server.host.strip("[]").lower()
        try:
            if not ipaddress.ip_address(bound).is_unspecified:  # 0.0.0.0 and :: name no host
                self._allowed_hosts.add(bound)
        except ValueError:
            self._allowed_hosts.add(bound)  # a host name to bind to is a name clients may use
        self._cors_origins = {origin.lower() for origin in server.cors_origins}

    def host_allowed(self, host_header: str) -> bool:
        """True when ``Host`` (``name[:port]``) addresses this daemon under a name it accepts."""
        try:
            parts = urlsplit("//" + host_header)
            hostname = parts.hostname or ""
            parts.port  # noqa: B018  # raises ValueError for a port that is not a number in range
        except ValueError:
            return False
        if not hostname:
            return False
        return (
            is_loopback_name(hostname)
            or hostname in self._allowed_hosts
            or host_header.lower() in self._allowed_hosts
        )

    def origin_allowed(self, origin: str, host_header: str) -> bool:
        """True for the daemon's own origin (its pages, the dashboard) and the configured CORS ones.

        Own means the same ``host:port`` as the request's ``Host``, whatever the scheme (behind a TLS
        proxy the page is https while the daemon sees http). ``null`` (a sandboxed frame, a file) is
        never allowed.
        """
        origin = origin.strip().lower()
        if origin in self._cors_origins:
            return True
        try:
            netloc = urlsplit(origin).netloc
        except ValueError:
            return False
        return bool(netloc) and netloc == host_header.lower()

    def middleware(self) -> Callable[[web.Request, Handler], Awaitable[web.StreamResponse]]:
        @web.middleware
        async def guard(request: web.Request, handler: Handler) -> web.StreamResponse:
            response = await self._answer(request, handler)
            unread = request.body_exists and not request.content.is_eof()
            if unread and isinstance(response, web.Response) and not response.prepared:
                # Refused before its body was read (here, or by the token check): close rather than
                # let aiohttp drain what the client still sends for another 10 s.
                return await answer_and_close(request, response)
            return response

        return guard

    async def _answer(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        host = request.headers.get("Host")
        # HTTP/1.0 without Host is no browser (every browser sends one): nothing to rebind.
        if host is not None and not self.host_allowed(host):
            return error_response(
                421,
                "misdirected_request",
                f"this daemon does not answer to the host {host[:100]!r}; add it to"
                " server.allowed_hosts if it is a name of this machine",
            )
        origin = request.headers.get("Origin")
        if origin is not None and not self.origin_allowed(origin, host or ""):
            return error_response(
                403,
                "origin_not_allowed",
                f"requests from the web origin {origin[:100]!r} are refused; list it in"
                " server.cors_origins to let that page call the API",
            )
        if request.match_info.http_exception is not None:
            return await handler(request)  # no such route or method: its 404/405 says more
        if request.method in WRITE_METHODS and not _declares_json(request):
            return error_response(
                415,
                "unsupported_media_type",
                f"{request.method} needs Content-Type: application/json (also without a body)",
            )
        return await handler(request)


async def answer_and_close(request: web.Request, response: web.Response) -> web.Response:
    """Send ``response`` and close the connection at once: aiohttp would otherwise keep reading
    the rest of the slow body for another ``lingering_time`` (10 s) before closing. A client that
    already went away gets nothing (and nothing is raised)."""
    response.force_close()
    transport = request.transport
    if transport is None or transport.is_closing():
        return response
    try:
        await response.prepare(request)
        await response.write_eof()
    except ConnectionError:  # it went away while the answer was being written
        pass
    request.protocol.force_close()  # flushes what was written, then closes
    return response


def _declares_json(request: web.Request) -> bool:
    if "Content-Type" not in request.headers:
        return False  # aiohttp reports a missing header as application/octet-stream
    media_type = request.content_type
    return media_type == "application/json" or (
        media_type.startswith("application/") and media_type.endswith("+json")
    )

"""One place where every failure becomes ``{"error": {"code", "message"}}`` with the right status."""

from __future__ import annotations

import hmac
import json
import logging
import re
from collections.abc import Awaitable, Callable

from aiohttp import web
from pydantic import ValidationError

from ..errors import CortexError

log = logging.getLogger(__name__)

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

_HTTP_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    408: "request_timeout",
    413: "payload_too_large",
    415: "unsupported_media_type",
    421: "misdirected_request",
    422: "unprocessable",
    503: "unavailable",
}


def error_response(
    status: int, code: str, message: str, details: dict[str, object] | None = None
) -> web.Response:
    return web.json_response({"error": {"code": code, "message": message, **(details or {})}}, status=status)


def describe_validation_error(exc: ValidationError) -> str:
    """A short readable summary: ``limit: Input should be a valid integer; …``."""
    parts = []
    for error in exc.errors(include_url=False)[:5]:
        # A union's member ("function-after[…]", "constrained-str") names no field: left out.
        where = ".".join(str(p) for p in error["loc"] if not _SCHEMA_STEP.fullmatch(str(p))) or "body"
        message = error["msg"].removeprefix("Value error, ")
        if (part := f"{where}: {message}") not in parts:
            parts.append(part)
    return "; ".join(parts)


_SCHEMA_STEP = re.compile(r"(?:function-(?:after|before|wrap|plain)\[.*\]|constrained-\w+|str|int)")


@web.middleware
async def error_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    try:
        return await handler(request)
    except CortexError as exc:
        return error_response(exc.status, exc.code, exc.message, exc.details())
    except ValidationError as exc:
        return error_response(400, "invalid_request", describe_validation_error(exc))
    except json.JSONDecodeError as exc:
        return error_response(400, "invalid_json", f"body is not valid JSON: {exc.msg}")
    except UnicodeDecodeError:
        return error_response(400, "invalid_json", "body is not valid UTF-8")
    except UnicodeEncodeError:
        # JSON can carry lone surrogates (\ud800) that no UTF-8 store can hold.
        return error_response(400, "invalid_request", "text contains unpaired UTF-16 surrogates")
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        code = _HTTP_CODES.get(exc.status, "http_error")
        response = error_response(exc.status, code, exc.reason if exc.text is None else _plain(exc))
        # Keep what the exception says beyond its text: a 405 must name the allowed methods (Allow).
        for name, value in exc.headers.items():
            if name.lower() not in ("content-type", "content-length"):
                response.headers[name] = value
        return response
    except Exception:
        log.exception("unhandled error", extra={"path": request.path, "method": request.method})
        return error_response(500, "internal_error", "internal error; see the daemon log")


def _plain(exc: web.HTTPException) -> str:
    text = exc.text or exc.reason
    return text.removeprefix(f"{exc.status}: ").strip() or exc.reason


def auth_middleware(
    token: str, *, cors: bool = False, public: Callable[[str], bool] = lambda path: False
) -> Callable[[web.Request, Handler], Awaitable[web.StreamResponse]]:
    """Require ``Authorization: Bearer <token>`` on every endpoint but /health (a liveness probe
    must work without secrets) and the ``public`` paths. Compared in constant time.

    Args:
        token: the expected token.
        public: paths that hold no data and need no token (the dashboard's page and assets, GET
            only: the page asks for the token, then sends it with every API call).
        cors: True when CORS is on: a preflight (OPTIONS with Origin and
            Access-Control-Request-Method) passes without the token, as browsers never send one
            there; the CORS handler then answers it (403 for an origin not allowed).
    """
    expected = token.encode()

    @web.middleware
    async def check_token(request: web.Request, handler: Handler) -> web.StreamResponse:
        open_path = request.path == "/health" or (request.method in ("GET", "HEAD") and public(request.path))
        if not open_path and not (cors and _is_preflight(request)):
            header = request.headers.get("Authorization", "")
            scheme, _, given = header.partition(" ")
            if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip().encode(), expected):
                return error_response(
                    401, "unauthorized", "missing or wrong API token (Authorization: Bearer …)"
                )
        return await handler(request)

    return check_token


def _is_preflight(request: web.Request) -> bool:
    headers = request.headers
    return request.method == "OPTIONS" and "Origin" in headers and "Access-Control-Request-Method" in headers

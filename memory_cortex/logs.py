"""Structured logging set-up (JSON lines for journald, or plain text for a terminal).

Log records carry their details in ``extra`` fields; memory text is never put in a log at INFO.
"""

from __future__ import annotations

import logging
import sys

from aiohttp.abc import AbstractAccessLogger
from aiohttp.web import BaseRequest, StreamResponse
from pythonjsonlogger.json import JsonFormatter

from .config import LoggingConfig


def configure_logging(config: LoggingConfig) -> None:
    handler = logging.StreamHandler(sys.stderr)
    if config.format == "json":
        handler.setFormatter(
            JsonFormatter(
                "%(asctime)s %(levelname)s %(name)s %(message)s",
                rename_fields={"asctime": "ts", "levelname": "level", "name": "logger"},
            )
        )
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)-7s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(config.level)
    # Third-party chatter (model loading, HTTP clients, a line per stateless MCP request) only when
    # something is wrong.
    for noisy in (
        "httpx",
        "httpcore",
        "sentence_transformers",
        "transformers",
        "urllib3",
        "mcp.server.streamable_http",
    ):
        logging.getLogger(noisy).setLevel(logging.WARNING)


class PathOnlyAccessLogger(AbstractAccessLogger):
    """One structured line per request: method, path, status, size, duration; never the query string.

    aiohttp's default format logs the whole request line, and the dashboard filters memories with
    query parameters (``?q=espresso&topic=…``): text typed there must not reach the log.
    """

    def log(self, request: BaseRequest, response: StreamResponse, time: float) -> None:
        self.logger.info(
            "%s %s %s",
            request.method,
            request.path,
            response.status,
            extra={
                "method": request.method,
                "path": request.path,
                "status": response.status,
                "bytes": response.body_length,
                "duration_ms": round(time * 1000, 2),
                "remote": request.remote,
            },
        )

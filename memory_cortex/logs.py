"""Structured logging set-up (JSON lines for journald, or plain text for a terminal).

Log records carry their details in ``extra`` fields; memory text is never put in a log at INFO.

- Timestamps are ISO 8601 with the zone's offset (``2026-05-01T14:03:07.412+02:00``): a line read
  on another machine, or next to a UTC-stamped one, says when it happened.
- Under journald (systemd sets ``JOURNAL_STREAM`` to the device and inode of the stream it connected
  to stderr) every line starts with the sd-daemon priority prefix for its level (``<3>`` error,
  ``<4>`` warning, ``<6>`` info, ``<7>`` debug), so ``journalctl -p warning`` finds the warnings;
  otherwise journald files every line at the unit's default, info.
- The access log puts ``/health`` and ``/metrics`` (probes and scrapes every few seconds) at DEBUG.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Mapping
from datetime import datetime
from typing import IO, Any

from aiohttp.abc import AbstractAccessLogger
from aiohttp.web import BaseRequest, StreamResponse
from pythonjsonlogger.json import JsonFormatter

from .config import LoggingConfig

JSON_FORMAT = "%(asctime)s %(levelname)s %(name)s %(message)s"
TEXT_FORMAT = "%(asctime)s %(levelname)-7s %(name)s: %(message)s"
# Paths polled by machines (liveness probes, Prometheus): their access lines only at DEBUG.
QUIET_PATHS = frozenset({"/health", "/metrics"})


def zoned_timestamp(created: float) -> str:
    """``created`` (Unix seconds) as ISO 8601 in the local zone with its offset, to the millisecond."""
    return datetime.fromtimestamp(created).astimezone().isoformat(timespec="milliseconds")


def sd_priority(levelno: int) -> int:
    """The syslog priority journald records for a Python log level (sd-daemon(3))."""
    if levelno >= logging.CRITICAL:
        return 2
    if levelno >= logging.ERROR:
        return 3
    if levelno >= logging.WARNING:
        return 4
    if levelno >= logging.INFO:
        return 6
    return 7


class ZonedJsonFormatter(JsonFormatter):
    """One JSON object per line: ``ts`` (zoned), ``level``, ``logger``, ``message`` and the extras."""

    def __init__(self) -> None:
        super().__init__(JSON_FORMAT, rename_fields={"asctime": "ts", "levelname": "level", "name": "logger"})

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        return zoned_timestamp(record.created)


class ZonedTextFormatter(logging.Formatter):
    """``<zoned time> LEVEL logger: message`` for a terminal."""

    def __init__(self) -> None:
        super().__init__(TEXT_FORMAT)

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        return zoned_timestamp(record.created)


class JournaldFormatter(logging.Formatter):
    """Another formatter's output with the sd-daemon ``<N>`` priority prefix on every line.

    journald reads each line of the stream on its own, so a multi-line record (a traceback in the
    text format) carries the prefix on each of its lines.
    """

    def __init__(self, inner: logging.Formatter) -> None:
        super().__init__()
        self.inner = inner

    def format(self, record: logging.LogRecord) -> str:
        prefix = f"<{sd_priority(record.levelno)}>"
        return "\n".join(prefix + line for line in self.inner.format(record).split("\n"))


def stream_is_journal(stream: IO[Any], environ: Mapping[str, str]) -> bool:
    """Whether ``stream`` is the journal: ``JOURNAL_STREAM`` (``<device>:<inode>``, set by systemd)
    names the file ``stream`` writes to. Compared, not just present: a child process inherits the
    variable with a stderr redirected elsewhere (systemd.exec(5))."""
    value = environ.get("JOURNAL_STREAM", "")
    device, _, inode = value.partition(":")
    if not (device.isdigit() and inode.isdigit()):
        return False
    try:
        status = os.fstat(stream.fileno())
    except (OSError, AttributeError, ValueError):  # no file behind the stream (a test's StringIO)
        return False
    return (status.st_dev, status.st_ino) == (int(device), int(inode))


def log_formatter(config: LoggingConfig, *, journald: bool) -> logging.Formatter:
    """The formatter of ``config.format``, with the journald priority prefix when ``journald``."""
    formatter: logging.Formatter = ZonedJsonFormatter() if config.format == "json" else ZonedTextFormatter()
    return JournaldFormatter(formatter) if journald else formatter


def configure_logging(
    config: LoggingConfig, *, stream: IO[Any] | None = None, environ: Mapping[str, str] | None = None
) -> None:
    """Send every log record to ``stream`` in the configured format.

    Args:
        config: level and format.
        stream: where the lines go; the process's stderr by default.
        environ: the process environment, read for ``JOURNAL_STREAM`` only (``os.environ`` by
            default): systemd's statement about stderr, not a setting of the daemon.
    """
    stream = sys.stderr if stream is None else stream
    journald = stream_is_journal(stream, os.environ if environ is None else environ)
    handler = logging.StreamHandler(stream)
    handler.setFormatter(log_formatter(config, journald=journald))
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
    query parameters (``?q=espresso&topic=…``): text typed there must not reach the log. Probes and
    scrapes (:data:`QUIET_PATHS`) are logged at DEBUG, everything else at INFO.
    """

    def log(self, request: BaseRequest, response: StreamResponse, time: float) -> None:
        level = logging.DEBUG if request.path in QUIET_PATHS else logging.INFO
        if not self.logger.isEnabledFor(level):
            return
        self.logger.log(
            level,
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

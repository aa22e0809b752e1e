"""The log format: zoned ISO 8601 timestamps, the sd-daemon priority prefix under journald, and the
access log's probes and scrapes at DEBUG — through the formatter and through a real daemon."""

from __future__ import annotations

import json
import logging
import os
import re
import sys
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from memory_cortex.app import create_app
from memory_cortex.config import LoggingConfig
from memory_cortex.logs import PathOnlyAccessLogger, configure_logging, log_formatter
from tests.helpers import eventually

OFFSET = re.compile(r"T\d\d:\d\d:\d\d\.\d{3}[+-]\d\d:\d\d$")


def record(level: int, message: str = "listening", **extra: Any) -> logging.LogRecord:
    made = logging.LogRecord("memory_cortex.test", level, __file__, 1, message, None, None)
    made.__dict__.update(extra)
    return made


@pytest.fixture
def root_logger() -> Iterator[logging.Logger]:
    """The root logger, its handlers and level put back after the test (configure_logging replaces them)."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield root
    root.handlers[:] = handlers
    root.setLevel(level)


def test_json_lines_carry_an_iso_8601_timestamp_with_its_zone_offset() -> None:
    line = log_formatter(LoggingConfig(format="json"), journald=False).format(record(logging.INFO, port=8420))
    body = json.loads(line)
    assert OFFSET.search(body["ts"]), body["ts"]
    stamp = datetime.fromisoformat(body["ts"])
    assert stamp.tzinfo is not None and abs(stamp.timestamp() - datetime.now().timestamp()) < 60
    assert body["level"] == "INFO" and body["logger"] == "memory_cortex.test" and body["port"] == 8420


def test_text_lines_carry_the_zoned_timestamp_too() -> None:
    line = log_formatter(LoggingConfig(format="text"), journald=False).format(record(logging.INFO))
    stamp = line.split(" ", 1)[0]
    assert OFFSET.search(stamp) and datetime.fromisoformat(stamp).tzinfo is not None


@pytest.mark.parametrize(
    ("level", "prefix"),
    [
        (logging.CRITICAL, "<2>"),
        (logging.ERROR, "<3>"),
        (logging.WARNING, "<4>"),
        (logging.INFO, "<6>"),
        (logging.DEBUG, "<7>"),
    ],
)
def test_under_journald_each_json_line_starts_with_the_priority_of_its_level(level: int, prefix: str) -> None:
    line = log_formatter(LoggingConfig(format="json"), journald=True).format(record(level))
    assert line.startswith(prefix + "{")
    assert json.loads(line.removeprefix(prefix))["message"] == "listening"


def test_under_journald_every_line_of_a_text_traceback_carries_the_prefix() -> None:
    try:
        raise ValueError("boom")
    except ValueError:
        failed = record(logging.ERROR, "unhandled error")
        failed.exc_info = sys.exc_info()
    lines = log_formatter(LoggingConfig(format="text"), journald=True).format(failed).split("\n")
    assert len(lines) > 3 and all(line.startswith("<3>") for line in lines)


def test_the_journal_is_recognised_by_the_device_and_inode_systemd_names(
    tmp_path: Path, root_logger: logging.Logger
) -> None:
    path = tmp_path / "stderr"
    with path.open("w", encoding="utf-8") as stream:
        status = os.fstat(stream.fileno())
        configure_logging(
            LoggingConfig(), stream=stream, environ={"JOURNAL_STREAM": f"{status.st_dev}:{status.st_ino}"}
        )
        logging.getLogger("memory_cortex.test").warning("disk almost full")
        # Another file's inode: stderr was redirected away from the journal; no prefix.
        configure_logging(
            LoggingConfig(), stream=stream, environ={"JOURNAL_STREAM": f"{status.st_dev}:{status.st_ino + 1}"}
        )
        logging.getLogger("memory_cortex.test").warning("disk almost full")
    journal, plain = path.read_text(encoding="utf-8").splitlines()
    assert journal.startswith("<4>{") and json.loads(journal[3:])["level"] == "WARNING"
    assert plain.startswith("{")


@pytest.mark.parametrize("level", [logging.DEBUG, logging.INFO])
async def test_health_and_metrics_access_is_logged_at_debug_other_paths_at_info(
    aiohttp_server: Any,
    aiohttp_client: Any,
    config: Any,
    minilm: Any,
    caplog: pytest.LogCaptureFixture,
    level: int,
) -> None:
    caplog.set_level(level, logger="aiohttp.access")
    server = await aiohttp_server(create_app(config, embedder=minilm), access_log_class=PathOnlyAccessLogger)
    client = await aiohttp_client(server)
    for path in ("/health", "/metrics", "/stats"):
        assert (await client.get(path)).status == 200

    def lines() -> list[tuple[str, int]]:
        return [(r.path, r.levelno) for r in caplog.records if r.name == "aiohttp.access"]  # type: ignore[attr-defined]

    # One more /stats: a connection's access lines come in the order of its requests, so once this
    # one is written, no line of the requests before it is still to come.
    assert (await client.get("/stats")).status == 200
    await eventually(lambda: [path for path, _ in lines()].count("/stats") == 2, what="the last access line")
    expected = {"/health": logging.DEBUG, "/metrics": logging.DEBUG, "/stats": logging.INFO}
    expected = {path: at for path, at in expected.items() if at >= level}  # at INFO: only /stats
    assert dict(lines()) == expected and len(lines()) == len(expected) + 1

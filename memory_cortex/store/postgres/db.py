"""PostgreSQL connections with the same shape as the SQLite store: ``read``, ``write``, migrations.

Why the same shape: services hand the store a function of a connection (``db.read(lambda conn:
…)``) and never learn which backend runs it. Here that function gets a :class:`PgConnection` from
a psycopg pool, in a thread (psycopg's blocking API keeps the store's functions synchronous, as on
SQLite); the event loop only waits.

Writes of this daemon still go through one writer thread, so the after-commit hooks run in commit
order exactly as on SQLite. Other daemons on the same database write concurrently: every write is
one transaction, and what must happen once (a journal claim, a lifecycle run) is arbitrated by the
database (``FOR UPDATE SKIP LOCKED``, advisory locks), never by this process.

Durability: a 2xx is sent after COMMIT has returned, and PostgreSQL's default
``synchronous_commit = on`` has flushed the WAL by then.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import zlib
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

import psycopg
from psycopg_pool import ConnectionPool, PoolTimeout

from ...errors import StoreUnavailable
from ..db import list_migrations as list_sql_files
from ..dialect import INSTANCE_LOCKS
from .connection import PgConnection, configure

log = logging.getLogger(__name__)

T = TypeVar("T")

MIGRATIONS_PACKAGE = "memory_cortex.store.postgres.migrations"

# Session-level advisory lock keys (one 64-bit space per database): a readable name, hashed.
MIGRATION_LOCK = zlib.crc32(b"memory-cortex:migrations")
# (EXCLUSIVE_LOCKS, crc of a name): work only one daemon may do at a time (a lifecycle run).
EXCLUSIVE_LOCKS = zlib.crc32(b"memory-cortex:exclusive") & 0x7FFFFFFF


# Connections the read pool keeps beyond the reader threads (see open()).
INDEX_READERS = 8


def exclusive_key(name: str) -> int:
    return zlib.crc32(name.encode()) & 0x7FFFFFFF


def redacted_url(url: str) -> str:
    """``url`` without its password, for logs and error messages."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.rsplit("@", 1)
    return urlunsplit(parts._replace(netloc=f"{netloc[0].split(':', 1)[0]}:***@{netloc[1]}"))


def first_line(exc: Exception, url: str, shown: str) -> str:
    """A driver error as one line, the URL (should it appear) without its password."""
    text = str(exc).strip()
    line = text.splitlines()[0] if text else type(exc).__name__
    return line.replace(url, shown)


def list_migrations() -> list[tuple[int, str, str]]:
    """The numbered ``NNN_name.sql`` files shipped for PostgreSQL, in order."""
    return list_sql_files(MIGRATIONS_PACKAGE)


def apply_migrations(raw: psycopg.Connection[Any]) -> list[str]:
    """Apply every migration not yet recorded, each in its own transaction. Idempotent, and safe
    when several daemons start at once: they take turns on an advisory lock.

    ``raw`` must be idle (no transaction open); it is left in autocommit as it was found.
    """
    autocommit = raw.autocommit
    raw.autocommit = True
    raw.execute("SELECT pg_advisory_lock(%s)", (MIGRATION_LOCK,))
    try:
        with raw.transaction():
            raw.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations ("
                " version INTEGER PRIMARY KEY, name TEXT NOT NULL,"
                " applied_at TIMESTAMPTZ NOT NULL DEFAULT now())"
            )
        done = {row[0] for row in raw.execute("SELECT version FROM schema_migrations").fetchall()}
        applied = []
        for version, name, sql in list_migrations():
            if version in done:
                continue
            with raw.transaction():
                raw.execute(sql.encode())  # a whole script, no parameters
                raw.execute("INSERT INTO schema_migrations (version, name) VALUES (%s, %s)", (version, name))
            log.info("migration applied", extra={"migration": name})
            applied.append(name)
        return applied
    finally:
        raw.execute("SELECT pg_advisory_unlock(%s)", (MIGRATION_LOCK,))
        raw.autocommit = autocommit


class PostgresDatabase:
    """Owns the connection pools to one PostgreSQL database.

    Args:
        url: a libpq URL (``postgresql://user:password@host:5432/dbname``).
        read_connections: reader threads, each with a pooled read-only connection.
        connect_timeout_s: how long start-up and each request wait for a connection.
    """

    def __init__(self, url: str, *, read_connections: int = 4, connect_timeout_s: float = 10.0) -> None:
        self.url = url
        self.location = redacted_url(url)
        self._read_connections = read_connections
        self._connect_timeout_s = connect_timeout_s
        self._write_pool: ConnectionPool | None = None
        self._read_pool: ConnectionPool | None = None
        self._writer: ThreadPoolExecutor | None = None
        self._readers: ThreadPoolExecutor | None = None
        self._instance_connection: psycopg.Connection[Any] | None = None
        self.instance_id = 0  # set by open(): this daemon's id among those on the database
        self.shared = True  # other daemons may use the same database

    # -- lifecycle -------------------------------------------------------------------------
    def open(self) -> None:
        """Connect, apply migrations and start the threads. Blocking: call at start-up."""
        try:
            with psycopg.connect(self.url, connect_timeout=int(self._connect_timeout_s)) as raw:
                apply_migrations(raw)
        except psycopg.OperationalError as exc:
            raise StoreUnavailable(
                f"cannot connect to PostgreSQL at {self.location}: {first_line(exc, self.url, self.location)}:"
                " check database.url and that the server runs (memory-cortex doctor tells more)"
            ) from exc
        self._claim_instance_id()
        self._write_pool = self._pool("memory-cortex-write", 2, read_only=False)
        # Beside the reader threads, the vector index reads from threads of its own (asyncio's
        # default executor: services/index_calls.py), so the pool has room for those too.
        self._read_pool = self._pool(
            "memory-cortex-read", self._read_connections + INDEX_READERS, read_only=True
        )
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="pg-writer")
        self._readers = ThreadPoolExecutor(max_workers=self._read_connections, thread_name_prefix="pg-reader")

    def _claim_instance_id(self) -> None:
        """Pick an id no live daemon holds and hold its lock on a connection of its own until
        close(): when this process dies, the server drops the connection and the lock with it."""
        raw = psycopg.connect(self.url, autocommit=True, connect_timeout=int(self._connect_timeout_s))
        for _ in range(100):
            candidate = secrets.randbelow(2**31 - 1) + 1
            if raw.execute("SELECT pg_try_advisory_lock(%s, %s)", (INSTANCE_LOCKS, candidate)).fetchone()[0]:
                self.instance_id = candidate
                self._instance_connection = raw
                return
        raw.close()
        raise StoreUnavailable("could not pick a daemon id on PostgreSQL")  # 100 collisions: never

    def _pool(self, name: str, size: int, *, read_only: bool) -> ConnectionPool:
        def setup(raw: psycopg.Connection[Any]) -> None:
            configure(raw)
            raw.read_only = read_only

        pool = ConnectionPool(
            self.url,
            min_size=1,
            max_size=size,
            name=name,
            configure=setup,
            timeout=self._connect_timeout_s,
            open=False,
        )
        try:
            pool.open(wait=True, timeout=self._connect_timeout_s)
        except PoolTimeout as exc:
            pool.close()
            raise StoreUnavailable(f"cannot connect to PostgreSQL at {self.location}") from exc
        return pool

    def close(self) -> None:
        """Finish queued work, then close the pools."""
        for executor in (self._writer, self._readers):
            if executor is not None:
                executor.shutdown(wait=True, cancel_futures=False)
        self._writer = self._readers = None
        for pool in (self._write_pool, self._read_pool):
            if pool is not None:
                pool.close()
        self._write_pool = self._read_pool = None
        if self._instance_connection is not None:
            self._instance_connection.close()  # releases this daemon's id
            self._instance_connection = None

    # -- running work ----------------------------------------------------------------------
    async def write(
        self,
        work: Callable[[PgConnection], T],
        *,
        after_commit: Callable[[T], None] | None = None,
    ) -> T:
        """Run ``work(conn)`` in one transaction on this daemon's writer thread (see
        ``Database.write``: ``after_commit`` runs right after COMMIT, in commit order)."""
        if self._writer is None or self._write_pool is None:
            raise StoreUnavailable("database is not open")
        pool = self._write_pool

        def run() -> T:
            with _connection(pool, self.location) as raw, raw.transaction():
                result = work(PgConnection(raw))
            if after_commit is not None:
                try:
                    after_commit(result)
                except Exception:
                    log.exception("after-commit hook failed")
            return result

        return await asyncio.get_running_loop().run_in_executor(self._writer, run)

    async def on_writer(self, work: Callable[[PgConnection], T]) -> T:
        """Run ``work(conn)`` on the writer thread, ordered with this daemon's writes."""
        if self._writer is None or self._write_pool is None:
            raise StoreUnavailable("database is not open")
        pool = self._write_pool

        def run() -> T:
            with _connection(pool, self.location) as raw:
                return work(PgConnection(raw))

        return await asyncio.get_running_loop().run_in_executor(self._writer, run)

    async def read(self, work: Callable[[PgConnection], T]) -> T:
        """Run ``work(conn)`` on a read-only connection in a reader thread."""
        if self._readers is None or self._read_pool is None:
            raise StoreUnavailable("database is not open")
        pool = self._read_pool

        def run() -> T:
            with _connection(pool, self.location) as raw:
                return work(PgConnection(raw))

        return await asyncio.get_running_loop().run_in_executor(self._readers, run)

    def read_blocking(self, work: Callable[[PgConnection], T]) -> T:
        """Synchronous read for start-up code and scripts."""
        if self._read_pool is not None:
            with _connection(self._read_pool, self.location) as raw:
                return work(PgConnection(raw))
        with psycopg.connect(self.url, connect_timeout=int(self._connect_timeout_s)) as raw:
            configure(raw)
            return work(PgConnection(raw))

    @contextlib.asynccontextmanager
    async def exclusive(self, name: str) -> AsyncIterator[bool]:
        """Hold the database-wide lock ``name`` for the block if no other daemon holds it: yields
        True then, else False at once (the caller says "busy"). Released at the end of the block,
        or by the server when this process dies."""
        raw = await asyncio.to_thread(
            psycopg.connect, self.url, autocommit=True, connect_timeout=int(self._connect_timeout_s)
        )
        try:
            key = (EXCLUSIVE_LOCKS, exclusive_key(name))
            held = await asyncio.to_thread(
                lambda: bool(raw.execute("SELECT pg_try_advisory_lock(%s, %s)", key).fetchone()[0])
            )
            yield held
        finally:
            await asyncio.to_thread(raw.close)  # the lock goes with the session

    @contextlib.contextmanager
    def admin_connection(self) -> Iterator[psycopg.Connection[Any]]:
        """A connection of its own in autocommit, for DDL that cannot run in a transaction block
        or must not hold a pooled connection for minutes (building an HNSW index)."""
        with psycopg.connect(self.url, autocommit=True, connect_timeout=int(self._connect_timeout_s)) as raw:
            yield raw

    async def size_bytes(self) -> int:
        """The database's size on the server (tables, indexes, TOAST)."""
        return int(
            await self.read(
                lambda conn: conn.execute("SELECT pg_database_size(current_database())").fetchone()[0]
            )
        )

    async def checkpoint(self) -> tuple[int, int, int]:
        """Nothing to do: PostgreSQL checkpoints its own WAL."""
        return (0, 0, 0)


class _connection:
    """A pooled connection, with pool and server failures mapped to ``StoreUnavailable``."""

    def __init__(self, pool: ConnectionPool, location: str) -> None:
        self._context = pool.connection()
        self._location = location

    def __enter__(self) -> psycopg.Connection[Any]:
        try:
            return self._context.__enter__()
        except PoolTimeout as exc:
            raise StoreUnavailable(f"no PostgreSQL connection free at {self._location}") from exc

    def __exit__(self, *exc_info: Any) -> None:
        try:
            self._context.__exit__(*exc_info)
        except psycopg.OperationalError as exc:
            raise StoreUnavailable(f"PostgreSQL at {self._location}: {exc}") from exc
        failure = exc_info[1]
        if isinstance(failure, psycopg.OperationalError):  # the server went away mid-request
            raise StoreUnavailable(f"PostgreSQL at {self._location}: {failure}") from failure

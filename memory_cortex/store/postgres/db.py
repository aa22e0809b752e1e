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

import psycopg
from psycopg_pool import ConnectionPool, PoolTimeout

from ...errors import StoreUnavailable
from ...urls import redacted_url
from ..db import list_migrations as list_sql_files
from ..db import run_after_commit
from ..dialect import INSTANCE_LOCKS
from ..space import SpaceWatch, is_disk_full
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
# A transaction left open this long by a stuck client is ended by the server (its locks with it).
IDLE_IN_TRANSACTION_MS = 60_000
# TCP keepalives on every connection: a dead peer is noticed in about a minute, not hours.
KEEPALIVES = {"keepalives": 1, "keepalives_idle": 30, "keepalives_interval": 10, "keepalives_count": 3}
# What a client is told when the database fails; the details go to the daemon's log only.
UNAVAILABLE = "the database is unavailable; see the daemon log"


def exclusive_key(name: str) -> int:
    return zlib.crc32(name.encode()) & 0x7FFFFFFF


# Taken by every write transaction (see PostgresDatabase.write).
WRITE_LOCK = (EXCLUSIVE_LOCKS, exclusive_key("writes"))


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
        busy_timeout_ms: how long a statement waits for a lock (another daemon's write, an import)
            before failing, as SQLite's busy timeout.
    """

    def __init__(
        self,
        url: str,
        *,
        read_connections: int = 4,
        connect_timeout_s: float = 10.0,
        busy_timeout_ms: int = 5000,
    ) -> None:
        self.url = url
        self._busy_timeout_ms = busy_timeout_ms
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
        self.space = SpaceWatch(self.location, None)  # the disk is the server's: no free space known

    # -- lifecycle -------------------------------------------------------------------------
    def open(self) -> None:
        """Connect, apply migrations and start the threads. Blocking: call at start-up."""
        try:
            with psycopg.connect(self.url, connect_timeout=int(self._connect_timeout_s)) as raw:
                apply_migrations(raw)
            self._claim_instance_id()
        except psycopg.OperationalError as exc:
            raise StoreUnavailable(
                f"cannot connect to PostgreSQL at {self.location}: {first_line(exc, self.url, self.location)}:"
                " check database.url and that the server runs (memory-cortex doctor tells more)"
            ) from exc
        except psycopg.errors.InsufficientPrivilege as exc:
            raise StoreUnavailable(
                f"PostgreSQL at {self.location}: {first_line(exc, self.url, self.location)}: have an administrator"
                " run CREATE EXTENSION vector (and pg_trgm) in this database once, or give the user the right"
            ) from exc
        except psycopg.Error as exc:
            raise StoreUnavailable(
                f"PostgreSQL at {self.location} could not be set up: {first_line(exc, self.url, self.location)}"
                " (memory-cortex doctor tells more)"
            ) from exc
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
        raw = self._session()
        for _ in range(100):
            candidate = secrets.randbelow(2**31 - 1) + 1
            if raw.execute("SELECT pg_try_advisory_lock(%s, %s)", (INSTANCE_LOCKS, candidate)).fetchone()[0]:
                self.instance_id = candidate
                self._instance_connection = raw
                return
        raw.close()
        raise StoreUnavailable("could not pick a daemon id on PostgreSQL")  # 100 collisions: never

    def _session(self) -> psycopg.Connection[Any]:
        """A connection of its own, in autocommit, with keepalives (held for minutes or for life)."""
        return psycopg.connect(
            self.url, autocommit=True, connect_timeout=int(self._connect_timeout_s), **KEEPALIVES
        )

    def _keep_instance_lock(self) -> None:
        """Blocking part of :meth:`keep_alive`."""
        raw = self._instance_connection
        try:
            if raw is not None and not raw.closed:
                raw.execute("SELECT 1")
                return
        except psycopg.Error:
            pass
        log.warning("the daemon's instance lock was lost with its connection; taking it again")
        if raw is not None:
            raw.close()
        self._instance_connection = None
        fresh = self._session()
        held = fresh.execute(
            "SELECT pg_try_advisory_lock(%s, %s)", (INSTANCE_LOCKS, self.instance_id)
        ).fetchone()
        if held is None or not held[0]:
            fresh.close()
            raise StoreUnavailable(f"daemon id {self.instance_id} is held by another session")
        self._instance_connection = fresh

    async def keep_alive(self) -> None:
        """Check that this daemon still holds its instance lock, and take it again when its
        connection was dropped (a server restart, a network cut): other daemons judge by that lock
        whether this one's running jobs are still worked on. A job they took over meanwhile is not
        finished here twice: ``ingest.finish`` checks the claim."""
        try:
            await asyncio.to_thread(self._keep_instance_lock)
        except (psycopg.Error, StoreUnavailable) as exc:
            log.warning(
                "could not take the instance lock again; will retry", extra={"reason": str(exc)[:200]}
            )

    def _pool(self, name: str, size: int, *, read_only: bool) -> ConnectionPool:
        def setup(raw: psycopg.Connection[Any]) -> None:
            configure(raw)
            # Lock waits end as SQLite's busy timeout does; an abandoned transaction ends too.
            raw.execute(f"SET lock_timeout = {int(self._busy_timeout_ms)}")
            raw.execute(f"SET idle_in_transaction_session_timeout = {IDLE_IN_TRANSACTION_MS}")
            raw.commit()
            raw.read_only = read_only

        pool = ConnectionPool(
            self.url,
            min_size=1,
            max_size=size,
            name=name,
            kwargs=dict(KEEPALIVES),
            configure=setup,
            check=ConnectionPool.check_connection,  # a connection the server dropped is replaced
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

        def transaction() -> T:
            with _connection(pool, self.location) as raw, raw.transaction():
                # One writer at a time across every daemon on the database, as SQLite's BEGIN
                # IMMEDIATE gives one per file: what a write reads inside its transaction (a job
                # still running, a row it updates) cannot change before it commits. A merge into a
                # near-duplicate is planned before the transaction (write_plan), so two writers
                # storing the same new fact at once may both store it.
                raw.execute("SELECT pg_advisory_xact_lock(%s, %s)", WRITE_LOCK)
                return work(PgConnection(raw))

        def run() -> T:
            result = self.space.guarded(transaction)
            run_after_commit(after_commit, result)
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

        return await asyncio.get_running_loop().run_in_executor(self._writer, lambda: self.space.mapped(run))

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
        try:
            raw = await asyncio.to_thread(self._session)
        except psycopg.Error as exc:
            log.warning("PostgreSQL unavailable", extra={"reason": first_line(exc, self.url, self.location)})
            raise StoreUnavailable(UNAVAILABLE) from exc
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
            log.warning("no PostgreSQL connection free", extra={"database": self._location})
            raise StoreUnavailable(UNAVAILABLE) from exc

    def __exit__(self, *exc_info: Any) -> None:
        try:
            self._context.__exit__(*exc_info)
        except psycopg.OperationalError as exc:
            self._unavailable(exc)
        failure = exc_info[1]
        # The server went away, a lock wait ended (a full disk is told as such: store/space.py).
        if isinstance(failure, psycopg.OperationalError) and not is_disk_full(failure):
            self._unavailable(failure)

    def _unavailable(self, exc: psycopg.Error) -> None:
        """Log what went wrong; tell the client only that the database is unavailable (the details
        name the server and its user)."""
        text = str(exc).strip()
        reason = text.splitlines()[0] if text else type(exc).__name__
        log.warning("PostgreSQL unavailable", extra={"database": self._location, "reason": reason[:300]})
        raise StoreUnavailable(UNAVAILABLE) from exc

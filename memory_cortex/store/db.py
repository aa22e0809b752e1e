"""SQLite connections: one writer thread, a small pool of read-only readers, migrations.

Why this shape (after datasette's write thread): SQLite allows one writer at a time, so every write
goes through a single thread fed by a queue (a one-worker executor) and runs inside
``BEGIN IMMEDIATE``; the caller awaits a future and a 2xx is only sent once COMMIT has returned.
Reads run on ``mode=ro`` connections in other threads, so neither blocks the event loop and WAL lets
them proceed while the writer commits.

Durability: WAL with ``synchronous=NORMAL`` by default. A commit survives a crash of this process
(kill -9) because the WAL is written before COMMIT returns; only an OS crash or power loss can lose
the last transactions (never corrupt the file). ``synchronous=FULL`` (``database.synchronous``)
also fsyncs the WAL at every commit, so those survive too. See README "Durability".
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
import threading
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from importlib import resources
from pathlib import Path
from typing import TypeVar

from ..errors import StoreUnavailable
from .connection import SqliteConnection
from .files import make_private_file
from .space import SpaceWatch

log = logging.getLogger(__name__)

T = TypeVar("T")

MIGRATIONS_PACKAGE = "memory_cortex.store.migrations"


SYNCHRONOUS_LEVELS = ("NORMAL", "FULL")


def connect(
    path: Path, *, read_only: bool, busy_timeout_ms: int, synchronous: str = "NORMAL"
) -> sqlite3.Connection:
    """A connection with this project's pragmas (WAL, ``synchronous``, busy timeout, rows by name).

    ``synchronous``: NORMAL (commits survive a crash of the process) or FULL (they also survive
    an OS crash or a power cut: the WAL is fsynced at every commit).
    """
    if synchronous not in SYNCHRONOUS_LEVELS:
        raise ValueError(f"synchronous must be one of {SYNCHRONOUS_LEVELS}, got {synchronous!r}")
    if read_only:
        conn = sqlite3.connect(
            f"file:{path}?mode=ro",
            uri=True,
            isolation_level=None,
            check_same_thread=False,
            factory=SqliteConnection,
        )
    else:
        conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, factory=SqliteConnection)
    conn.row_factory = sqlite3.Row
    # SQLite's lower() folds ASCII only; a filter for "ü" must find "Ü" (store/memories.py).
    conn.create_function("casefold", 1, _casefold, deterministic=True)
    conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
    conn.execute("PRAGMA foreign_keys = ON")
    if not read_only:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute(f"PRAGMA synchronous = {synchronous}")  # one of SYNCHRONOUS_LEVELS
        # A forgotten memory, a superseded fact, a finished ingest job's transcript: what is
        # deleted is overwritten with zeros, not left readable in free pages of the file.
        conn.execute("PRAGMA secure_delete = ON")
    return conn


def _casefold(text: object) -> object:
    return text.casefold() if isinstance(text, str) else text


# The first line of a migration that must run with foreign keys off (a table rebuild).
FOREIGN_KEYS_OFF = "-- foreign-keys: off"


def list_migrations(package: str = MIGRATIONS_PACKAGE) -> list[tuple[int, str, str]]:
    """The numbered ``NNN_name.sql`` files shipped in ``package`` (SQLite's by default), in order."""
    found = []
    for entry in resources.files(package).iterdir():
        name = entry.name
        if name.endswith(".sql") and name[:3].isdigit():
            found.append((int(name[:3]), name[:-4], entry.read_text(encoding="utf-8")))
    return sorted(found)


def apply_migrations(conn: sqlite3.Connection) -> list[str]:
    """Apply every migration not yet recorded, each in its own transaction. Idempotent."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations ("
        " version INTEGER PRIMARY KEY, name TEXT NOT NULL,"
        " applied_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')))"
    )
    done = {row[0] for row in conn.execute("SELECT version FROM schema_migrations")}
    applied = []
    for version, name, sql in list_migrations():
        if version in done:
            continue
        # A table rebuild drops the old table: with foreign keys on, that would cascade into the
        # rows referring to it. Such a migration says so on its first line; the keys are switched
        # off around its transaction (a PRAGMA that does nothing inside one) and checked before COMMIT.
        keys_off = sql.startswith(FOREIGN_KEYS_OFF)
        if keys_off:
            conn.execute("PRAGMA foreign_keys = OFF")
        try:
            conn.execute("BEGIN IMMEDIATE")
            # executescript would COMMIT first; run statement by statement inside our transaction.
            for statement in _split_sql(sql):
                conn.execute(statement)
            if keys_off and conn.execute("PRAGMA foreign_key_check").fetchone() is not None:
                raise sqlite3.IntegrityError(f"migration {name} leaves rows whose foreign keys point nowhere")
            conn.execute("INSERT INTO schema_migrations (version, name) VALUES (?, ?)", (version, name))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        finally:
            if keys_off:
                conn.execute("PRAGMA foreign_keys = ON")
        log.info("migration applied", extra={"migration": name})
        applied.append(name)
    return applied


def _split_sql(script: str) -> list[str]:
    """Split a migration into complete statements (triggers contain ``;`` inside BEGIN…END)."""
    statements, current = [], ""
    for line in script.splitlines(keepends=True):
        current += line
        if sqlite3.complete_statement(current):
            if current.strip():
                statements.append(current.strip())
            current = ""
    if current.strip() and not current.strip().startswith("--"):
        statements.append(current.strip())
    return statements


def run_after_commit(hook: Callable[[T], None] | None, result: T) -> None:
    """Run a write's after-commit hook. The data is committed: a failed in-memory mirror update
    must not turn that into an error reply (the mirror is rebuilt from the store at the next start)."""
    if hook is None:
        return
    try:
        hook(result)
    except Exception:
        log.exception("after-commit hook failed")


class Database:
    """Owns the SQLite file: the writer thread, the reader threads and their connections.

    Args:
        path: the database file (created with its folder if missing).
        busy_timeout_ms: lock wait for every connection.
        read_connections: number of reader threads, each with its own read-only connection.
        synchronous: SQLite's ``synchronous`` for the writing connections, NORMAL or FULL.
    """

    def __init__(
        self,
        path: Path,
        *,
        busy_timeout_ms: int = 5000,
        read_connections: int = 4,
        synchronous: str = "NORMAL",
    ) -> None:
        self.path = Path(path)
        self._busy_timeout_ms = busy_timeout_ms
        self._synchronous = synchronous
        self._read_connections = read_connections
        self._local = threading.local()
        self._writer: ThreadPoolExecutor | None = None
        self._readers: ThreadPoolExecutor | None = None
        self._checkpointer: ThreadPoolExecutor | None = None
        self._all_connections: list[sqlite3.Connection] = []
        self._connections_lock = threading.Lock()
        self.space = SpaceWatch(str(self.path), self.path.parent)

    # One daemon per SQLite file: it is the only instance, and exclusive work is decided in-process.
    instance_id = 0
    shared = False

    @contextlib.asynccontextmanager
    async def exclusive(self, name: str) -> AsyncIterator[bool]:
        """Always held: no other daemon shares this file (PostgreSQL's version asks the server)."""
        yield True

    async def keep_alive(self) -> None:
        """Nothing to keep: no other daemon judges this one by a lock (see PostgresDatabase)."""

    @property
    def location(self) -> str:
        """Where the data is, for logs."""
        return str(self.path)

    async def size_bytes(self) -> int:
        """The file and its WAL."""
        total = 0
        for suffix in ("", "-wal"):
            path = self.path.with_name(self.path.name + suffix)
            if path.exists():
                total += path.stat().st_size
        return total

    # -- lifecycle -------------------------------------------------------------------------
    def open(self) -> None:
        """Create the file (0600, in a 0700 folder when the folder is new), apply migrations and
        start the threads. Blocking: call at start-up."""
        make_private_file(self.path, "-wal", "-shm", "-journal")
        conn = connect(
            self.path, read_only=False, busy_timeout_ms=self._busy_timeout_ms, synchronous=self._synchronous
        )
        try:
            apply_migrations(conn)
        finally:
            conn.close()
        self._writer = ThreadPoolExecutor(
            max_workers=1,
            thread_name_prefix="sqlite-writer",
            initializer=self._init_thread,
            initargs=(False,),
        )
        self._readers = ThreadPoolExecutor(
            max_workers=self._read_connections,
            thread_name_prefix="sqlite-reader",
            initializer=self._init_thread,
            initargs=(True,),
        )
        # WAL checkpoints (copying the WAL back into the file, with an fsync) run on their own
        # thread and connection: left to the writer, every ~1000th page written would make one
        # request wait for the disk.
        self._checkpointer = ThreadPoolExecutor(
            max_workers=1,
            thread_name_prefix="sqlite-checkpoint",
            initializer=self._init_thread,
            initargs=(False,),
        )

    def close(self) -> None:
        """Finish queued writes, then close every connection (a timed join via shutdown)."""
        for pool in (self._writer, self._readers, self._checkpointer):
            if pool is not None:
                pool.shutdown(wait=True, cancel_futures=False)
        self._writer = self._readers = self._checkpointer = None
        with self._connections_lock:
            for conn in self._all_connections:
                try:
                    if not conn.in_transaction:
                        conn.execute("PRAGMA optimize")
                except sqlite3.Error:
                    pass
                conn.close()
            self._all_connections.clear()

    def _init_thread(self, read_only: bool) -> None:
        conn = connect(
            self.path,
            read_only=read_only,
            busy_timeout_ms=self._busy_timeout_ms,
            synchronous=self._synchronous,
        )
        if not read_only:
            conn.execute("PRAGMA wal_autocheckpoint = 0")  # see open(): the checkpointer does it
        self._local.conn = conn
        with self._connections_lock:
            self._all_connections.append(conn)

    # -- running work ----------------------------------------------------------------------
    async def write(
        self,
        work: Callable[[sqlite3.Connection], T],
        *,
        after_commit: Callable[[T], None] | None = None,
    ) -> T:
        """Run ``work(conn)`` in one ``BEGIN IMMEDIATE`` transaction on the writer thread.

        ``after_commit(result)`` runs on the same thread right after COMMIT, before the next write:
        in-memory mirrors (the vector matrix) are updated in commit order. The awaiting caller
        resumes only after both, so a response sent afterwards describes committed state.
        """
        if self._writer is None:
            raise StoreUnavailable("database is not open")

        def transaction() -> T:
            conn: sqlite3.Connection = self._local.conn
            conn.execute("BEGIN IMMEDIATE")
            try:
                result = work(conn)
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            return result

        def run() -> T:
            result = self.space.guarded(transaction)
            run_after_commit(after_commit, result)
            return result

        return await asyncio.get_running_loop().run_in_executor(self._writer, run)

    async def on_writer(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``work(conn)`` on the writer thread *without* opening a transaction: for pragmas and
        for reads that must be ordered with the writes (the vector index refresh)."""
        if self._writer is None:
            raise StoreUnavailable("database is not open")
        return await asyncio.get_running_loop().run_in_executor(
            self._writer, lambda: self.space.mapped(lambda: work(self._local.conn))
        )

    async def checkpoint(self) -> tuple[int, int, int]:
        """A PASSIVE WAL checkpoint on the checkpoint thread: never blocks readers or the writer.
        Returns SQLite's (busy, wal_frames, checkpointed_frames)."""
        if self._checkpointer is None:
            raise StoreUnavailable("database is not open")

        def run() -> tuple[int, int, int]:
            conn = self._local.conn
            row = self.space.mapped(lambda: conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone())
            return int(row[0]), int(row[1]), int(row[2])

        return await asyncio.get_running_loop().run_in_executor(self._checkpointer, run)

    async def read(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``work(conn)`` on a read-only connection in a reader thread."""
        if self._readers is None:
            raise StoreUnavailable("database is not open")

        def run() -> T:
            return work(self._local.conn)

        return await asyncio.get_running_loop().run_in_executor(self._readers, run)

    def read_blocking(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """Synchronous read for start-up code and scripts (opens a short-lived connection)."""
        conn = connect(self.path, read_only=True, busy_timeout_ms=self._busy_timeout_ms)
        try:
            return work(conn)
        finally:
            conn.close()

"""SQL for moving data out of and into the store: the online backup, the export stream, exact inserts.

Why its own module: everything here sees *every* column of ``memories`` (ids, counters, timestamps,
the BLOB), which the daemon's own writes never set by hand; keeping that power in one place keeps
:mod:`~memory_cortex.store.memories` about the daemon's normal life.

The tools using these functions run beside a live daemon, in another process:

- :func:`backup_database` reads through SQLite's online backup API on a read-only connection. In WAL
  mode a reader never blocks the daemon's writer, and one backup step copies one read snapshot, so
  the copy is consistent however busy the daemon is.
- :func:`export_snapshot` holds one read transaction: the row count and every row come from the
  same snapshot, while the daemon keeps writing.
- Imports write in one ``BEGIN IMMEDIATE`` transaction (:func:`write_transaction`): all or nothing.
  The FTS tables stay in step through the ``memories_ai`` trigger, as for any insert.

Backends: the functions of a connection (export count and rows, the import's inserts, links and
duplicate lookup, the write transaction) run on SQLite and PostgreSQL alike. Those of a file (the
backup, :func:`export_snapshot`, :func:`open_for_import`) are SQLite's: a PostgreSQL server has its
own backup tools (``pg_dump``). A store is named by its address (:func:`store_address`:
``sqlite:PATH`` or a ``postgresql://`` URL); :func:`read_snapshot` and :func:`writable` open either.
"""

from __future__ import annotations

import json
import os
import sqlite3
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config import DatabaseConfig
from ..errors import CortexError
from ..records import SubjectRef
from . import transfer
from .connection import Connection, dialect_of
from .db import apply_migrations, connect
from .entities import ensure_entity
from .files import make_private_dir, make_private_file
from .memories import quote_identifier

# Every column of ``memories``, in table order: what an export line holds (the list is the
# store's, beside the whole-store copy; a test compares it with the migrated schema).
# Every column of a memory, except that the entity a fact is about is named rather than numbered
# (an id means nothing in another store): ``subject`` and ``subject_kind`` stand for ``subject_id``.
SUBJECT_COLUMNS = ("subject", "subject_kind")
EXPORT_COLUMNS = (
    tuple(column for column in transfer.TABLE_COLUMNS if column != "subject_id") + SUBJECT_COLUMNS
)
_STORED_COLUMNS = tuple(column for column in EXPORT_COLUMNS if column not in SUBJECT_COLUMNS)
_EMBEDDING_COLUMNS = ("embedding", "embedding_model", "embedding_dim")
_SUBJECT_SQL = {
    "subject": "(SELECT e.name FROM entities AS e WHERE e.id = memories.subject_id) AS subject",
    "subject_kind": "(SELECT e.kind FROM entities AS e WHERE e.id = memories.subject_id) AS subject_kind",
}
_SIDECAR_SUFFIXES = ("-wal", "-shm", "-journal")
# Per-connection TEMP table: the (user_id, fact) pairs that existed before a merge began.
_DUPLICATE_LOOKUP = "import_existing_facts"
# PostgreSQL streams an export in pages of this many rows, by id (see iter_export_rows).
_EXPORT_PAGE_ROWS = 1000


class PortabilityError(CortexError):
    """A backup, export or import that cannot be done as asked (nothing was changed)."""

    code = "portability_error"
    status = 400


class TargetExists(PortabilityError):
    """The backup or export target already exists and overwriting was not allowed."""

    def __init__(self, path: Path) -> None:
        super().__init__(f"{path} already exists")
        self.path = path


@dataclass(frozen=True)
class BackupResult:
    """What :func:`backup_database` made: where, how many memories, how many bytes, how long."""

    path: Path
    memories: int
    bytes: int
    seconds: float


# -- addresses ------------------------------------------------------------------------------
_SQLITE_PREFIX = "sqlite:"


def store_address(database: DatabaseConfig) -> str:
    """The configured store as an address: ``sqlite:<database.path>`` or the PostgreSQL URL (with
    its password: never print it, print :func:`location`)."""
    if database.backend == "postgres" and database.url is not None:
        return database.url.get_secret_value()
    return f"{_SQLITE_PREFIX}{database.path}"


def is_postgres(address: str) -> bool:
    return address.startswith(("postgresql://", "postgres://"))


def location(address: str) -> str:
    """The store for a message: the SQLite file's path, or the URL without its password."""
    if address.startswith(_SQLITE_PREFIX):
        return address.removeprefix(_SQLITE_PREFIX)
    return transfer.describe(address)


def _sqlite_path(address: str) -> Path:
    if not address.startswith(_SQLITE_PREFIX):
        raise transfer.StoreAddressError(
            f"not a store address: {transfer.describe(address)!r} (sqlite:PATH or postgresql://…)"
        )
    return Path(address.removeprefix(_SQLITE_PREFIX))


@contextmanager
def read_snapshot(address: str, *, busy_timeout_ms: int) -> Iterator[Connection]:
    """A connection inside one read-only snapshot of the store at ``address``: counts and rows agree.

    SQLite: :func:`export_snapshot`. PostgreSQL: a REPEATABLE READ, read-only transaction (ended
    when the block ends); the schema is migrated first, as the daemon would.
    """
    if is_postgres(address):
        with transfer.opened(address, create=False) as conn:
            yield conn
        return
    with export_snapshot(_sqlite_path(address), busy_timeout_ms=busy_timeout_ms) as conn:
        yield conn


@contextmanager
def writable(address: str, *, busy_timeout_ms: int) -> Iterator[Connection]:
    """A writable connection (in autocommit: :func:`write_transaction` makes the transactions) to
    the store at ``address``, migrated to the current schema; closed when the block ends.

    SQLite: :func:`open_for_import` (the file is created if missing). PostgreSQL: the database must
    exist; a lock is waited for at most ``busy_timeout_ms``, as SQLite's busy timeout does.
    """
    if is_postgres(address):
        with transfer.opened(address, create=True) as conn:
            # lock_timeout 0 would mean "wait forever" where SQLite's busy timeout 0 fails at once.
            conn.execute(f"SET lock_timeout = {max(int(busy_timeout_ms), 1)}")
            yield conn
        return
    conn = open_for_import(_sqlite_path(address), busy_timeout_ms=busy_timeout_ms)
    try:
        yield conn
    finally:
        conn.close()


# -- backup ---------------------------------------------------------------------------------
def backup_database(source: Path, target: Path, *, overwrite: bool, busy_timeout_ms: int) -> BackupResult:
    """Copy ``source`` to ``target`` online, as a standalone file that passed ``integrity_check``
    (SQLite only: a file copy).

    The copy is written to a temporary file beside ``target``, switched to ``journal_mode=DELETE``
    (one self-contained file: no ``-wal`` needed to open it), checked, fsynced and only then renamed
    into place, so ``target`` is either absent, the old file, or a complete good copy.

    Args:
        source: the live database (it may be open in a running daemon).
        target: the file to create.
        overwrite: replace ``target`` if it exists (else :class:`TargetExists`).
        busy_timeout_ms: lock wait of the reading connection.
    """
    started = time.monotonic()
    _check_backup_paths(source, target, overwrite=overwrite)
    make_private_dir(target.parent)
    handle, partial_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".partial")
    os.close(handle)
    partial = Path(partial_name)
    try:
        memories = _copy_and_check(source, partial, busy_timeout_ms)
        _fsync_file(partial)
        if not overwrite and target.exists():  # created by someone else meanwhile
            raise TargetExists(target)
        os.replace(partial, target)
        _fsync_dir(target.parent)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    return BackupResult(target, memories, target.stat().st_size, time.monotonic() - started)


def _check_backup_paths(source: Path, target: Path, *, overwrite: bool) -> None:
    if not source.is_file():
        raise PortabilityError(f"no database at {source}")
    if target.resolve() == source.resolve():
        raise PortabilityError("the backup target is the database itself")
    if target.exists() and not overwrite:
        raise TargetExists(target)
    for suffix in _SIDECAR_SUFFIXES:
        sidecar = Path(f"{target}{suffix}")
        if sidecar.exists():
            # A journal beside the target belongs to some other database that is (or was) open; SQLite
            # would replay it into our copy. Never overwrite a database in use.
            raise PortabilityError(f"{sidecar} exists: {target} looks like a database in use")


def _copy_and_check(source: Path, partial: Path, busy_timeout_ms: int) -> int:
    """Backup API copy into ``partial``; returns the copy's memory count."""
    reader = connect(source, read_only=True, busy_timeout_ms=busy_timeout_ms)
    try:
        copy = sqlite3.connect(partial, isolation_level=None)
        try:
            # pages=-1: the whole file in one step, i.e. one read snapshot. Stepping in chunks would
            # restart the copy each time the daemon commits, possibly forever on a busy daemon.
            reader.backup(copy, pages=-1)
            copy.execute("PRAGMA journal_mode = DELETE")
            problems = [row[0] for row in copy.execute("PRAGMA integrity_check")]
            if problems != ["ok"]:
                raise PortabilityError(f"the copy failed integrity_check: {'; '.join(problems[:5])}")
            return int(copy.execute("SELECT count(*) FROM memories").fetchone()[0])
        finally:
            copy.close()
    finally:
        reader.close()


def _fsync_file(path: Path) -> None:
    with path.open("rb") as handle:
        os.fsync(handle.fileno())


def _fsync_dir(path: Path) -> None:
    """Make a rename durable (no-op where directories cannot be opened, e.g. Windows)."""
    try:
        handle = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(handle)
    finally:
        os.close(handle)


# -- export ---------------------------------------------------------------------------------
@contextmanager
def export_snapshot(path: Path, *, busy_timeout_ms: int) -> Iterator[sqlite3.Connection]:
    """A read-only connection inside one read transaction: counts and rows agree with each other
    (SQLite only: it opens a database file)."""
    if not path.is_file():
        raise PortabilityError(f"no database at {path}")
    conn = connect(path, read_only=True, busy_timeout_ms=busy_timeout_ms)
    try:
        conn.execute("BEGIN")
        yield conn
    finally:
        if conn.in_transaction:
            conn.execute("COMMIT")
        conn.close()


def export_count(conn: Connection, user_id: str | None) -> int:
    """How many rows :func:`iter_export_rows` will yield with the same arguments."""
    if user_id is None:
        return int(conn.execute("SELECT count(*) FROM memories").fetchone()[0])
    return int(conn.execute("SELECT count(*) FROM memories WHERE user_id = ?", (user_id,)).fetchone()[0])


def iter_export_rows(
    conn: Connection, user_id: str | None, *, with_embeddings: bool
) -> Iterator[dict[str, Any]]:
    """Every column of every row (of one user), by id, streamed (never all rows in memory at once).

    Without embeddings the three embedding columns are NULL together: a model name without its
    vector would claim an embedding the row does not carry.
    """
    selected = [
        _SUBJECT_SQL[column]
        if column in _SUBJECT_SQL
        else quote_identifier(column)
        if with_embeddings or column not in _EMBEDDING_COLUMNS
        else f"NULL AS {quote_identifier(column)}"
        for column in EXPORT_COLUMNS
    ]
    sql = f"SELECT {', '.join(selected)} FROM memories"
    params: tuple[Any, ...] = ()
    if user_id is not None:
        sql += " WHERE user_id = ?"
        params = (user_id,)
    if dialect_of(conn).name == "postgres":
        yield from _export_pages(conn, sql, params)
        return
    cursor = conn.execute(f"{sql} ORDER BY id", params)
    for row in cursor:
        yield dict(row)


def _export_pages(conn: Connection, sql: str, params: tuple[Any, ...]) -> Iterator[dict[str, Any]]:
    """The export query in pages by id (PostgreSQL): its client-side cursor would hold every row,
    vectors included, in memory at once. In a REPEATABLE READ transaction the pages are one
    snapshot, as SQLite's single cursor is in :func:`export_snapshot`."""
    after_id: int | None = None  # the first page has no lower bound
    while True:
        page_sql, page_params = sql, params
        if after_id is not None:
            page_sql += f"{' AND' if params else ' WHERE'} id > ?"
            page_params = (*params, after_id)
        rows = conn.execute(f"{page_sql} ORDER BY id LIMIT ?", (*page_params, _EXPORT_PAGE_ROWS)).fetchall()
        for row in rows:
            yield dict(row)
        if len(rows) < _EXPORT_PAGE_ROWS:
            return
        after_id = rows[-1]["id"]


# -- import ---------------------------------------------------------------------------------
def open_for_import(path: Path, *, busy_timeout_ms: int) -> sqlite3.Connection:
    """A writable connection opened as the daemon opens it: folder created, migrations applied
    (SQLite only: it opens a database file)."""
    make_private_file(path, "-wal", "-shm", "-journal")
    conn = connect(path, read_only=False, busy_timeout_ms=busy_timeout_ms)
    try:
        apply_migrations(conn)
    except BaseException:
        conn.close()
        raise
    return conn


@contextmanager
def write_transaction(conn: Connection) -> Iterator[Connection]:
    """One transaction holding the write lock of ``memories`` from its start; any exception (Ctrl-C
    included) rolls everything back.

    SQLite's ``BEGIN IMMEDIATE`` takes the database's write lock. On PostgreSQL a table lock in
    SHARE ROW EXCLUSIVE mode does the same for ``memories``: readers go on, other writers of it wait,
    so an import's "is it empty" check still holds when its rows (and their ids) arrive.
    """
    _begin_writing(conn)
    try:
        yield conn
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:  # type: ignore[attr-defined]
            conn.execute("ROLLBACK")
        raise


def _begin_writing(conn: Connection) -> None:
    """BEGIN with the write lock of ``memories`` taken (see :func:`write_transaction`)."""
    if dialect_of(conn).name == "sqlite":
        conn.execute("BEGIN IMMEDIATE")
        return
    conn.execute("BEGIN")
    try:
        conn.execute("LOCK TABLE memories IN SHARE ROW EXCLUSIVE MODE")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def memory_count(conn: Connection) -> int:
    return int(conn.execute("SELECT count(*) FROM memories").fetchone()[0])


def insert_exact(conn: Connection, row: dict[str, Any], *, keep_id: bool) -> int:
    """Insert one exported row with all its values (timestamps, counters, vector) as they were.

    ``superseded_by`` is always inserted NULL: the memory it names may come later in the file (and
    may get a new id), so links are set afterwards with :func:`set_superseded_by`. ``keep_id=False``
    lets the database assign the next free id. ``row["metadata"]`` is a dict; ``row["embedding"]``
    bytes. On PostgreSQL a kept id moves the id sequence past it (:func:`_move_id_sequence`).
    """
    values = dict(row)
    values["superseded_by"] = None
    values["compressed_into"] = None  # a link too: set afterwards, like superseded_by
    values["metadata"] = json.dumps(row["metadata"], ensure_ascii=False)
    subject = row.get("subject")
    values["subject_id"] = (
        None
        if not subject
        else ensure_entity(conn, row["user_id"], SubjectRef(subject, row.get("subject_kind") or "person"))
    )
    columns = (*_STORED_COLUMNS, "subject_id") if keep_id else _COLUMNS_BUT_ID
    memory_id = int(
        conn.execute(_insert_sql(columns), tuple(values[column] for column in columns)).fetchone()[0]
    )
    if keep_id and dialect_of(conn).name == "postgres":
        _move_id_sequence(conn)
    if row.get("layer_since") is None:  # a row that never said when it entered its layer: now
        conn.execute(f"UPDATE memories SET layer_since = {dialect_of(conn).now} WHERE id = ?", (memory_id,))
    return memory_id


def _insert_sql(columns: tuple[str, ...]) -> str:
    """The INSERT of ``columns``; without ``id`` the database picks it (PostgreSQL refuses a NULL id
    where SQLite would pick one, so the column is left out rather than sent NULL)."""
    return (
        f"INSERT INTO memories ({', '.join(quote_identifier(column) for column in columns)})"
        f" VALUES ({', '.join('?' for _ in columns)}) RETURNING id"
    )


_COLUMNS_BUT_ID = (*tuple(column for column in _STORED_COLUMNS if column != "id"), "subject_id")


def _move_id_sequence(conn: Connection) -> None:
    """Move PostgreSQL's id sequence past the largest id stored: rows inserted with their own ids
    never advance it, and the next memory the daemon writes would get one of theirs. Never back:
    an id handed out once (a memory since deleted) is not handed out again (SQLite needs nothing:
    its AUTOINCREMENT counter only grows)."""
    transfer.set_id_high_water(conn, "memories", transfer.max_memory_id(conn))


def set_superseded_by(conn: Connection, memory_id: int, newer_id: int) -> None:
    """Restore a ``superseded_by`` link without touching ``updated_at`` (the row is as exported)."""
    conn.execute("UPDATE memories SET superseded_by = ? WHERE id = ?", (newer_id, memory_id))


def set_compressed_into(conn: Connection, memory_id: int, summary_id: int) -> None:
    """Restore a ``compressed_into`` link (the history summary), as :func:`set_superseded_by`."""
    conn.execute("UPDATE memories SET compressed_into = ? WHERE id = ?", (summary_id, memory_id))


def start_duplicate_lookup(conn: Connection) -> None:
    """Remember the ``(user_id, fact)`` pairs stored now, indexed, for :func:`existing_memory_id`.

    A TEMP table rather than a Python set: it scales with the store without holding every fact in
    memory, and it is a snapshot, so rows added by the same import never count as duplicates (two
    rows of the export with the same fact are two memories of the source and both arrive). Where
    one pair is stored twice, the lookup gives the older memory. On PostgreSQL call it inside
    :func:`write_transaction`: the table is dropped at COMMIT (a pooled session keeps nothing).
    """
    table = _lookup_table(conn)
    conn.execute(f"DROP TABLE IF EXISTS {table}")
    if dialect_of(conn).name == "postgres":
        _fill_lookup_postgres(conn, table)
        return
    conn.execute(
        f"CREATE TEMP TABLE {quote_identifier(_DUPLICATE_LOOKUP)} (user_id TEXT NOT NULL, fact TEXT NOT NULL,"
        " id INTEGER NOT NULL, PRIMARY KEY (user_id, fact)) WITHOUT ROWID"
    )
    conn.execute(
        f"INSERT INTO {table} SELECT user_id, fact, id FROM memories WHERE true ORDER BY id ON CONFLICT DO NOTHING"
    )


def _fill_lookup_postgres(conn: Connection, table: str) -> None:
    """PostgreSQL's lookup: keyed by a hash index on ``fact``, since a B-tree key (SQLite's primary
    key) cannot hold a fact longer than about 2.7 kB; the oldest id of each pair, as SQLite's."""
    conn.execute(
        f"CREATE TEMP TABLE {quote_identifier(_DUPLICATE_LOOKUP)} (user_id TEXT NOT NULL, fact TEXT NOT NULL,"
        " id BIGINT NOT NULL) ON COMMIT DROP"
    )
    conn.execute(f"INSERT INTO {table} SELECT user_id, fact, min(id) FROM memories GROUP BY user_id, fact")
    conn.execute(f"CREATE INDEX ON {table} USING hash (fact)")
    conn.execute(f"ANALYZE {table}")  # temporary tables get no statistics otherwise


def _lookup_table(conn: Connection) -> str:
    """The lookup's qualified name: in the connection's temporary schema, whatever else is named so."""
    schema = "temp" if dialect_of(conn).name == "sqlite" else "pg_temp"
    return f"{schema}.{quote_identifier(_DUPLICATE_LOOKUP)}"


def existing_memory_id(conn: Connection, user_id: str, fact: str) -> int | None:
    """The id of a memory with exactly this user and fact that existed when the lookup started."""
    row = conn.execute(
        f"SELECT id FROM {_lookup_table(conn)} WHERE user_id = ? AND fact = ?", (user_id, fact)
    ).fetchone()
    return int(row[0]) if row else None


def stop_duplicate_lookup(conn: Connection) -> None:
    conn.execute(f"DROP TABLE IF EXISTS {_lookup_table(conn)}")

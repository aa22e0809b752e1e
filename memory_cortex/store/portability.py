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

from ..errors import CortexError
from .db import apply_migrations, connect
from .files import make_private_dir, make_private_file
from .memories import NOW_SQL, quote_identifier

# Every column of ``memories``, in table order: what an export line holds. A test compares this
# with the migrated schema, so a new column cannot be silently left out of exports.
EXPORT_COLUMNS = (
    "id",
    "user_id",
    "topic",
    "fact",
    "importance",
    "category",
    "source_session",
    "source_channel",
    "ref",
    "metadata",
    "created_at",
    "updated_at",
    "access_count",
    "last_accessed",
    "superseded_by",
    "embedding",
    "embedding_model",
    "embedding_dim",
    "embedding_context",
    "layer",
    "layer_since",
    "compressed_into",
    "occurred_at",
    "kind",
    "agent_id",
    "visibility",
)
_EMBEDDING_COLUMNS = ("embedding", "embedding_model", "embedding_dim")
_SIDECAR_SUFFIXES = ("-wal", "-shm", "-journal")
# Per-connection TEMP table: the (user_id, fact) pairs that existed before a merge began.
_DUPLICATE_LOOKUP = "import_existing_facts"


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


# -- backup ---------------------------------------------------------------------------------
def backup_database(source: Path, target: Path, *, overwrite: bool, busy_timeout_ms: int) -> BackupResult:
    """Copy ``source`` to ``target`` online, as a standalone file that passed ``integrity_check``.

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
    """A read-only connection inside one read transaction: counts and rows agree with each other."""
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


def export_count(conn: sqlite3.Connection, user_id: str | None) -> int:
    """How many rows :func:`iter_export_rows` will yield with the same arguments."""
    if user_id is None:
        return int(conn.execute("SELECT count(*) FROM memories").fetchone()[0])
    return int(conn.execute("SELECT count(*) FROM memories WHERE user_id = ?", (user_id,)).fetchone()[0])


def iter_export_rows(
    conn: sqlite3.Connection, user_id: str | None, *, with_embeddings: bool
) -> Iterator[dict[str, Any]]:
    """Every column of every row (of one user), by id, streamed from the cursor (never all at once).

    Without embeddings the three embedding columns are NULL together: a model name without its
    vector would claim an embedding the row does not carry.
    """
    selected = [
        quote_identifier(column)
        if with_embeddings or column not in _EMBEDDING_COLUMNS
        else f"NULL AS {quote_identifier(column)}"
        for column in EXPORT_COLUMNS
    ]
    sql = f"SELECT {', '.join(selected)} FROM memories"
    params: tuple[Any, ...] = ()
    if user_id is not None:
        sql += " WHERE user_id = ?"
        params = (user_id,)
    cursor = conn.execute(f"{sql} ORDER BY id", params)
    for row in cursor:
        yield dict(row)


# -- import ---------------------------------------------------------------------------------
def open_for_import(path: Path, *, busy_timeout_ms: int) -> sqlite3.Connection:
    """A writable connection opened as the daemon opens it: folder created, migrations applied."""
    make_private_file(path, "-wal", "-shm", "-journal")
    conn = connect(path, read_only=False, busy_timeout_ms=busy_timeout_ms)
    try:
        apply_migrations(conn)
    except BaseException:
        conn.close()
        raise
    return conn


@contextmanager
def write_transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """``BEGIN IMMEDIATE`` … ``COMMIT``; any exception (Ctrl-C included) rolls everything back."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def memory_count(conn: sqlite3.Connection) -> int:
    return int(conn.execute("SELECT count(*) FROM memories").fetchone()[0])


def insert_exact(conn: sqlite3.Connection, row: dict[str, Any], *, keep_id: bool) -> int:
    """Insert one exported row with all its values (timestamps, counters, vector) as they were.

    ``superseded_by`` is always inserted NULL: the memory it names may come later in the file (and
    may get a new id), so links are set afterwards with :func:`set_superseded_by`. ``keep_id=False``
    lets SQLite assign the next free id. ``row["metadata"]`` is a dict; ``row["embedding"]`` bytes.
    """
    values = dict(row)
    values["id"] = row["id"] if keep_id else None
    values["superseded_by"] = None
    values["compressed_into"] = None  # a link too: set afterwards, like superseded_by
    values["metadata"] = json.dumps(row["metadata"], ensure_ascii=False)
    cursor = conn.execute(_INSERT_EXACT, tuple(values[column] for column in EXPORT_COLUMNS))
    memory_id = int(cursor.lastrowid or 0)
    if row.get("layer_since") is None:  # a row that never said when it entered its layer: now
        conn.execute(f"UPDATE memories SET layer_since = {NOW_SQL} WHERE id = ?", (memory_id,))
    return memory_id


_INSERT_EXACT = (
    f"INSERT INTO memories ({', '.join(quote_identifier(column) for column in EXPORT_COLUMNS)})"
    f" VALUES ({', '.join('?' for _ in EXPORT_COLUMNS)})"
)


def set_superseded_by(conn: sqlite3.Connection, memory_id: int, newer_id: int) -> None:
    """Restore a ``superseded_by`` link without touching ``updated_at`` (the row is as exported)."""
    conn.execute("UPDATE memories SET superseded_by = ? WHERE id = ?", (newer_id, memory_id))


def set_compressed_into(conn: sqlite3.Connection, memory_id: int, summary_id: int) -> None:
    """Restore a ``compressed_into`` link (the history summary), as :func:`set_superseded_by`."""
    conn.execute("UPDATE memories SET compressed_into = ? WHERE id = ?", (summary_id, memory_id))


def start_duplicate_lookup(conn: sqlite3.Connection) -> None:
    """Remember the ``(user_id, fact)`` pairs stored now, indexed, for :func:`existing_memory_id`.

    A TEMP table rather than a Python set: it scales with the store without holding every fact in
    memory, and it is a snapshot, so rows added by the same import never count as duplicates (two
    rows of the export with the same fact are two memories of the source and both arrive).
    """
    name = quote_identifier(_DUPLICATE_LOOKUP)
    conn.execute(f"DROP TABLE IF EXISTS temp.{name}")
    conn.execute(
        f"CREATE TEMP TABLE {name} (user_id TEXT NOT NULL, fact TEXT NOT NULL, id INTEGER NOT NULL,"
        " PRIMARY KEY (user_id, fact)) WITHOUT ROWID"
    )
    conn.execute(f"INSERT OR IGNORE INTO temp.{name} SELECT user_id, fact, id FROM memories ORDER BY id")


def existing_memory_id(conn: sqlite3.Connection, user_id: str, fact: str) -> int | None:
    """The id of a memory with exactly this user and fact that existed when the lookup started."""
    row = conn.execute(
        f"SELECT id FROM temp.{quote_identifier(_DUPLICATE_LOOKUP)} WHERE user_id = ? AND fact = ?",
        (user_id, fact),
    ).fetchone()
    return int(row[0]) if row else None


def stop_duplicate_lookup(conn: sqlite3.Connection) -> None:
    conn.execute(f"DROP TABLE IF EXISTS temp.{quote_identifier(_DUPLICATE_LOOKUP)}")

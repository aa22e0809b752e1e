"""All SQL of the memory lifecycle: the rows each stage plans from, the guarded moves that apply a
plan, the links it leaves, and the log of runs.

Every write here re-checks, in its ``WHERE`` clause or by a read in the same transaction, that the row
is still what the plan saw (same layer, still live, not read or edited since): a plan is made from a
read snapshot while other writes go on, and applying it to a row that changed meanwhile would undo
that change. Nothing here deletes a memory.

The SQL runs on SQLite and PostgreSQL alike; the fragments that differ come from the connection's
dialect (``store/dialect.py``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ..records import PRIVATE_TO_ALL_AGENTS, Scope
from .connection import Connection, dialect_of
from .dialect import Dialect
from .memories import quote_identifier

# The FTS tables stage 5 optimises (names from this module only, never user text).
FTS_TABLES = ("memories_fts", "memories_trigram")


def _row_columns(d: Dialect) -> str:
    """The columns :meth:`LifecycleRow.from_row` reads, in its order."""
    return (
        "id, user_id, layer, category, importance, access_count, last_accessed, layer_since, created_at,"
        f" updated_at, {d.json_text('metadata', 'extractor')}, compressed_into, kind, agent_id, visibility,"
        " source_channel, topic, subject_id"
    )


@dataclass(frozen=True)
class LifecycleRow:
    """What the stages judge a memory by (no text, no vector)."""

    id: int
    user_id: str
    layer: str
    category: str
    importance: int
    access_count: int
    last_accessed: str | None
    layer_since: str | None
    created_at: str
    updated_at: str
    extractor: str | None
    compressed_into: int | None
    kind: str = "fact"  # fact | turn (migration 009)
    scope: Scope = PRIVATE_TO_ALL_AGENTS  # migration 010: merged and summarised only with its like
    topic: str = ""  # the extractor's label: decay protects health and safety topics
    subject_id: int | None = None  # migration 015: whom it is about (None: its user)

    @classmethod
    def from_row(cls, row: Sequence[Any]) -> LifecycleRow:
        extractor = row[10]
        scope = Scope(row[13], row[14], row[15])
        extracted_by = str(extractor) if extractor is not None else None
        return cls(*row[:10], extracted_by, row[11], row[12], scope, row[16] or "", row[17])


# -- reading what to plan from ----------------------------------------------------------------
def users_with_live_rows(conn: Connection) -> list[str]:
    """Every user with at least one live memory, sorted by code point on both backends."""
    # GROUP BY, not DISTINCT: PostgreSQL orders a DISTINCT only by a selected expression.
    order = dialect_of(conn).bytewise("user_id")
    return [
        row[0]
        for row in conn.execute(
            f"SELECT user_id FROM memories WHERE superseded_by IS NULL GROUP BY user_id ORDER BY {order}"
        )
    ]


def rows_in_layer(conn: Connection, user_id: str, layer: str) -> list[LifecycleRow]:
    """The user's live rows in ``layer``, by id (the (user, layer) index range)."""
    rows = conn.execute(
        f"SELECT {_row_columns(dialect_of(conn))} FROM memories"
        " WHERE user_id = ? AND layer = ? AND superseded_by IS NULL"
        " ORDER BY id",
        (user_id, layer),
    )
    return [LifecycleRow.from_row(row) for row in rows]


def live_rows_by_id(conn: Connection, memory_ids: Sequence[int]) -> dict[int, LifecycleRow]:
    """These rows, those still live (hidden and missing ids are absent)."""
    if not memory_ids:
        return {}
    d = dialect_of(conn)
    rows = conn.execute(
        f"SELECT {_row_columns(d)} FROM memories WHERE {d.in_list('id')} AND superseded_by IS NULL",
        (d.list_param(memory_ids),),
    )
    return {row[0]: LifecycleRow.from_row(row) for row in rows}


def vectors_by_id(
    conn: Connection, memory_ids: Sequence[int], model: str, dim: int | None
) -> dict[int, bytes]:
    """The BLOBs of these rows that hold a vector of ``model`` (and ``dim``, when known)."""
    if not memory_ids:
        return {}
    d = dialect_of(conn)
    rows = conn.execute(
        f"SELECT id, embedding FROM memories WHERE {d.in_list('id')}"
        " AND embedding IS NOT NULL AND embedding_model = ? AND (? IS NULL OR embedding_dim = ?)",
        (d.list_param(memory_ids), model, dim, dim),
    )
    return {row[0]: bytes(row[1]) for row in rows}


def core_vector_chunk(
    conn: Connection, user_id: str, model: str, dim: int | None, after_id: int, limit: int
) -> list[tuple[int, bytes]]:
    """The next ``limit`` live core rows of the user with a ``model`` vector, by id after ``after_id``.

    Keyset pages, each its own short read: the merge stage walks a large user's vectors without
    holding one read transaction (and the WAL) open for the whole walk.
    """
    rows = conn.execute(
        "SELECT id, embedding FROM memories WHERE user_id = ? AND layer = 'core' AND superseded_by IS NULL"
        " AND id > ? AND embedding IS NOT NULL AND embedding_model = ? AND (? IS NULL OR embedding_dim = ?)"
        " ORDER BY id LIMIT ?",
        (user_id, after_id, model, dim, dim, limit),
    )
    return [(row[0], bytes(row[1])) for row in rows]


def changed_core_ids(conn: Connection, user_id: str, max_id: int, since: str) -> list[int]:
    """Live core rows of the user created after ``max_id``, or edited or moved into core at or after
    ``since``: the rows the incremental merge compares against all the others."""
    return [
        row[0]
        for row in conn.execute(
            "SELECT id FROM memories WHERE user_id = ? AND layer = 'core' AND superseded_by IS NULL"
            " AND (id > ? OR updated_at >= ? OR layer_since >= ?) ORDER BY id",
            (user_id, max_id, since, since),
        )
    ]


def max_memory_id(conn: Connection) -> int:
    return int(conn.execute("SELECT coalesce(max(id), 0) FROM memories").fetchone()[0])


def database_now(conn: Connection) -> str:
    """The database's clock in the format of every stored timestamp (the clock the store's writes
    stamp rows with, which the merge watermark must not run ahead of)."""
    return str(conn.execute(f"SELECT {dialect_of(conn).now}").fetchone()[0])


def total_rows(conn: Connection) -> int:
    return int(conn.execute("SELECT count(*) FROM memories").fetchone()[0])


def summarised_through(conn: Connection, user_id: str) -> dict[str, tuple[int, int]]:
    """Per session: (the live session summary's id, the newest turn id it covers)."""
    last_turn = dialect_of(conn).json_text("metadata", "last_turn_id")  # text on both backends
    rows = conn.execute(
        f"SELECT source_session, id, {last_turn} FROM memories"
        " WHERE user_id = ? AND category = 'session_summary' AND kind = 'fact'"
        " AND superseded_by IS NULL AND source_session IS NOT NULL",
        (user_id,),
    )
    return {row[0]: (int(row[1]), _json_int(row[2])) for row in rows}


def _json_int(text: str | None) -> int:
    """A JSON number read as text (``"12"``, or ``"12.0"`` as SQLite once gave ``12.0``) as an int; 0
    when absent."""
    if not text:
        return 0
    try:
        return int(text)
    except ValueError:
        return int(float(text))


def session_transcript(
    conn: Connection, user_id: str, session: str, through_id: int
) -> list[tuple[int, str, str]]:
    """The session's turns up to ``through_id`` in the order said: (id, when said, text)."""
    rows = conn.execute(
        "SELECT id, coalesce(occurred_at, created_at), fact FROM memories"
        " WHERE user_id = ? AND source_session = ? AND kind = 'turn' AND id <= ?"
        " ORDER BY coalesce(occurred_at, created_at), id",
        (user_id, session, through_id),
    )
    return [(int(row[0]), str(row[1]), str(row[2])) for row in rows]


def supersede(conn: Connection, memory_id: int, newer_id: int) -> bool:
    """Hide a live row behind its newer version; False when it is no longer live."""
    cursor = conn.execute(
        "UPDATE memories SET superseded_by = ? WHERE id = ? AND superseded_by IS NULL",
        (newer_id, memory_id),
    )
    return cursor.rowcount > 0


# -- applying a plan --------------------------------------------------------------------------
def move_layer(
    conn: Connection,
    memory_id: int,
    *,
    from_layer: str,
    to_layer: str,
    since: str,
    unread: tuple[int, str | None] | None = None,
) -> bool:
    """Move a live row from ``from_layer`` to ``to_layer`` (its layer clock starts at ``since``).

    ``unread``: the ``(access_count, last_accessed)`` the plan saw; a row read since then is left
    alone (a read can change the verdict). False when the row is no longer as planned.
    """
    check, params = "", []  # type: tuple[str, list[Any]]
    if unread is not None:
        # "not differs": NULL matches NULL (PostgreSQL's IS takes only NULL and booleans).
        check = f" AND access_count = ? AND NOT ({dialect_of(conn).differs('last_accessed', '?')})"
        params = [unread[0], unread[1]]
    cursor = conn.execute(
        "UPDATE memories SET layer = ?, layer_since = ?"
        f" WHERE id = ? AND layer = ? AND superseded_by IS NULL{check}",
        (to_layer, since, memory_id, from_layer, *params),
    )
    return cursor.rowcount > 0


def hide_merged(conn: Connection, memory_id: int, kept_id: int, run_id: int | None) -> None:
    """Hide a near-duplicate behind the row it was merged into, and record the link."""
    conn.execute("UPDATE memories SET superseded_by = ? WHERE id = ?", (kept_id, memory_id))
    add_link(conn, "merged", memory_id, kept_id, run_id)


def absorb_merged(
    conn: Connection, kept_id: int, *, importance: int, access_count: int, last_accessed: str | None
) -> None:
    """The row a group was merged into takes the group's highest importance and all its reads."""
    conn.execute(
        "UPDATE memories SET importance = ?, access_count = ?, last_accessed = ?,"
        f" updated_at = {dialect_of(conn).now}"
        " WHERE id = ?",
        (importance, access_count, last_accessed, kept_id),
    )


def mark_compressed(conn: Connection, memory_id: int, summary_id: int, run_id: int | None) -> None:
    """An archived row is now told by a history summary; it stays, pointing at that summary."""
    conn.execute("UPDATE memories SET compressed_into = ? WHERE id = ?", (summary_id, memory_id))
    add_link(conn, "summarised", memory_id, summary_id, run_id)


def add_link(conn: Connection, kind: str, from_id: int, to_id: int, run_id: int | None) -> None:
    conn.execute(
        "INSERT INTO memory_links (kind, from_id, to_id, run_id) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
        (kind, from_id, to_id, run_id),
    )


def links(conn: Connection, kind: str | None = None) -> list[tuple[str, int, int, int | None]]:
    """``(kind, from_id, to_id, run_id)`` of every link (of one kind), in a stable order."""
    rows = conn.execute(
        "SELECT kind, from_id, to_id, run_id FROM memory_links WHERE ? IS NULL OR kind = ?"
        " ORDER BY kind, from_id, to_id",
        (kind, kind),
    )
    return [(str(r[0]), int(r[1]), int(r[2]), r[3]) for r in rows]


def optimize_fts(conn: Connection) -> None:
    """Merge every FTS5 index's segments into one (faster queries; nothing is removed)."""
    if dialect_of(conn).name != "sqlite":
        return  # PostgreSQL's GIN indexes need no optimize: nothing to do there.
    for table in FTS_TABLES:
        name = quote_identifier(table)
        conn.execute(f"INSERT INTO {name} ({name}) VALUES ('optimize')")


def live_index_entries(
    conn: Connection, model: str
) -> Iterator[tuple[int, str, str, str, int | None, Scope]]:
    """``(id, user_id, layer, kind, dim, scope)`` of every live row with a ``model`` vector: what
    the index must hold (the channel of a shared row only: all the index keeps)."""
    for *row, agent_id, visibility, channel in conn.execute(
        "SELECT id, user_id, layer, kind, embedding_dim, agent_id, visibility,"
        " CASE WHEN visibility = 'shared' THEN source_channel END FROM memories"
        " WHERE embedding IS NOT NULL AND embedding_model = ? AND superseded_by IS NULL",
        (model,),
    ):
        yield (*row, Scope(agent_id, visibility, channel))  # type: ignore[misc]


# -- the log of runs --------------------------------------------------------------------------
@dataclass(frozen=True)
class RunRecord:
    id: int
    trigger: str
    dry_run: bool
    status: str
    started_at: str
    finished_at: str | None
    report: dict[str, Any]


def start_run(conn: Connection, *, trigger: str, dry_run: bool, started_at: str) -> int:
    row = conn.execute(
        "INSERT INTO lifecycle_runs (trigger, dry_run, status, started_at) VALUES (?, ?, 'running', ?)"
        " RETURNING id",
        (trigger, int(dry_run), started_at),
    ).fetchone()
    return int(row[0])


def save_report(conn: Connection, run_id: int, report: dict[str, Any]) -> None:
    """Record the report so far; a stage saves it in its own transaction, so the log never claims
    a stage that did not commit."""
    conn.execute(
        "UPDATE lifecycle_runs SET report = ? WHERE id = ?", (json.dumps(report, ensure_ascii=False), run_id)
    )


def finish_run(
    conn: Connection, run_id: int, *, status: str, report: dict[str, Any], finished_at: str
) -> None:
    conn.execute(
        "UPDATE lifecycle_runs SET status = ?, finished_at = ?, report = ? WHERE id = ?",
        (status, finished_at, json.dumps(report, ensure_ascii=False), run_id),
    )


def interrupt_running(conn: Connection, *, dry_runs: bool = True) -> list[int]:
    """Runs left 'running' by a process that died: marked 'interrupted' (the next run completes them).
    ``dry_runs`` False: runs only (a dry run takes no database-wide lock, so another daemon's may be
    under way)."""
    which = "status = 'running'" + ("" if dry_runs else " AND dry_run = 0")
    ids = [row[0] for row in conn.execute(f"SELECT id FROM lifecycle_runs WHERE {which}")]
    conn.execute(
        f"UPDATE lifecycle_runs SET status = 'interrupted', finished_at = {dialect_of(conn).now} WHERE {which}"
    )
    return ids


_RUN_COLUMNS = "id, trigger, dry_run, status, started_at, finished_at, report"


def _run_record(row: Sequence[Any]) -> RunRecord:
    return RunRecord(row[0], row[1], bool(row[2]), row[3], row[4], row[5], json.loads(row[6] or "{}"))


def recent_runs(conn: Connection, limit: int) -> list[RunRecord]:
    """The latest runs, newest first."""
    rows = conn.execute(f"SELECT {_RUN_COLUMNS} FROM lifecycle_runs ORDER BY id DESC LIMIT ?", (limit,))
    return [_run_record(row) for row in rows.fetchall()]


def run_by_id(conn: Connection, run_id: int) -> RunRecord | None:
    row = conn.execute(f"SELECT {_RUN_COLUMNS} FROM lifecycle_runs WHERE id = ?", (run_id,)).fetchone()
    return None if row is None else _run_record(row)


def running_run_id(conn: Connection) -> int | None:
    """The newest run (not a dry run) still marked running: with several daemons on one database,
    the one another daemon is doing."""
    row = conn.execute(
        "SELECT id FROM lifecycle_runs WHERE status = 'running' AND dry_run = 0 ORDER BY id DESC LIMIT 1"
    ).fetchone()
    return None if row is None else int(row[0])


def latest_merge_watermark(conn: Connection) -> dict[str, Any] | None:
    """The watermark the last committed merge stage of a whole-store run left, if any."""
    watermark = dialect_of(conn).json_text("report", "merge_watermark")  # the object's JSON text
    row = conn.execute(
        f"SELECT {watermark} FROM lifecycle_runs WHERE dry_run = 0 AND {watermark} IS NOT NULL"
        " ORDER BY id DESC LIMIT 1"
    ).fetchone()
    return json.loads(row[0]) if row and row[0] else None

"""The SQL that differs between the two backends, in one place.

Why: the store's SQL is shared by SQLite and PostgreSQL wherever the two agree (most of it: plain
SELECT/INSERT/UPDATE with ``RETURNING`` and ``ON CONFLICT``). Where they differ — the current
timestamp, a list parameter, a value inside a JSON column — a store function asks the connection's
dialect (``conn.dialect``) for the fragment instead of branching on the backend itself. Full-text
search and the vector index differ too much for fragments; each backend has its own module.

Every fragment here is a constant or built from column names the store passes (never user text);
values always travel as bound ``?`` parameters.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

# Every timestamp is stored as this text (records.stored_timestamp): it sorts as it reads.
SQLITE_NOW = "strftime('%Y-%m-%dT%H:%M:%fZ','now')"
POSTGRES_NOW = "cortex_now()"  # defined by the PostgreSQL migrations, same format

# PostgreSQL's two-key advisory locks (namespace, id): each running daemon holds (INSTANCE_LOCKS,
# its id) for its whole life (store/postgres/db.py), so a claim whose daemon died is seen by its
# lock being free.
INSTANCE_LOCKS = zlib.crc32(b"memory-cortex:instance") & 0x7FFFFFFF


@dataclass(frozen=True)
class Dialect:
    """SQL fragments for one backend. Use the module constants ``SQLITE`` and ``POSTGRES``."""

    name: Literal["sqlite", "postgres"]

    @property
    def now(self) -> str:
        """The current UTC time as a stored timestamp (``2023-05-08T13:56:00.000Z``)."""
        return SQLITE_NOW if self.name == "sqlite" else POSTGRES_NOW

    def in_list(self, column: str) -> str:
        """``column`` is one of a list passed as one parameter (see :meth:`list_param`)."""
        if self.name == "sqlite":
            return f"{column} IN (SELECT value FROM json_each(?))"
        return f"{column} = ANY(?)"

    def list_param(self, values: Iterable[Any]) -> Any:
        """The parameter for :meth:`in_list`: a JSON array for SQLite, an array for PostgreSQL."""
        items = list(values)
        return json.dumps(items, ensure_ascii=False) if self.name == "sqlite" else items

    def json_text(self, column: str, key: str) -> str:
        """The value under ``key`` of the JSON object in ``column``, as text (NULL when absent).

        ``key`` is a constant of the store, never user text.
        """
        if self.name == "sqlite":
            # json_extract gives numbers as numbers; cast so both backends compare text.
            return f"CAST(json_extract({column}, '$.{key}') AS TEXT)"
        # A document holding a NUL escape (\u0000, valid JSON that SQLite reads) cannot give any
        # value as text on PostgreSQL (json ->> fails on the whole document): NULL for that row.
        return f"(CASE WHEN strpos({column}, '\\u0000') > 0 THEN NULL ELSE ({column})::json ->> '{key}' END)"

    def greatest(self, first: str, second: str) -> str:
        """The larger of two values (SQLite's two-argument ``max``)."""
        return f"max({first}, {second})" if self.name == "sqlite" else f"greatest({first}, {second})"

    def fold(self, expression: str) -> str:
        """``expression`` case-folded for a case-insensitive comparison (Unicode, not ASCII only)."""
        # SQLite's lower() folds ASCII only, so the store registers Python's casefold (store/db.py).
        return f"casefold({expression})" if self.name == "sqlite" else f"lower({expression})"

    def contains(self, haystack: str) -> str:
        """``haystack`` contains the text of the next parameter (no pattern characters)."""
        return f"instr({haystack}, ?) > 0" if self.name == "sqlite" else f"strpos({haystack}, ?) > 0"

    @property
    def unlimited(self) -> int | None:
        """The ``LIMIT ?`` parameter that means no limit."""
        return -1 if self.name == "sqlite" else None

    def char(self, code: int) -> str:
        """The one-character string of Unicode ``code`` (a separator no text contains)."""
        return f"char({int(code)})" if self.name == "sqlite" else f"chr({int(code)})"

    def differs(self, first: str, second: str) -> str:
        """``first`` and ``second`` differ, NULL counting as a value (SQLite's ``IS NOT``)."""
        return f"{first} IS NOT {second}" if self.name == "sqlite" else f"{first} IS DISTINCT FROM {second}"

    def as_int(self, condition: str) -> str:
        """``condition`` as 1 or 0 (NULL stays NULL), to be summed: PostgreSQL cannot sum a boolean."""
        return f"({condition})" if self.name == "sqlite" else f"({condition})::integer"

    def no_index(self, column: str) -> str:
        """``column`` where SQLite's planner must not pick an index for it (the unary ``+``); PostgreSQL
        has no unary ``+`` on text, and plans a GROUP BY without the hint."""
        return f"+{column}" if self.name == "sqlite" else column

    def bytewise(self, expression: str) -> str:
        """``expression`` ordered by code point, as SQLite's default BINARY collation orders text
        (PostgreSQL would otherwise use the database's locale): ties sort alike on both."""
        return expression if self.name == "sqlite" else f'{expression} COLLATE "C"'

    def least(self, first: str, second: str) -> str:
        """The smaller of two values (SQLite's two-argument ``min``)."""
        return f"min({first}, {second})" if self.name == "sqlite" else f"least({first}, {second})"

    @property
    def skip_locked(self) -> str:
        """The end of a ``SELECT`` that picks a row to claim: on PostgreSQL it locks the row and skips
        rows other transactions hold, so two daemons never claim one row; SQLite has one writer."""
        return "" if self.name == "sqlite" else " FOR UPDATE SKIP LOCKED"

    def claim_abandoned(self, column: str, me: int) -> str:
        """True for a job claimed (``column``: a daemon id) by a daemon that is no longer working on
        it; asked by daemon ``me`` between two jobs, so none of its own claims is under way.

        SQLite: always (one daemon per file). PostgreSQL: claimed by no daemon (0: a copied store,
        a script), by ``me`` (a claim whose end could not be written, say while the server was
        away), or by a daemon whose instance lock can be taken now: it is gone (the lock is held
        until the transaction ends, so the answer stays true while it runs).
        """
        if self.name == "sqlite":
            return "1 = 1"
        return (
            f"({column} = 0 OR {column} = {int(me)} OR pg_try_advisory_xact_lock({INSTANCE_LOCKS}, {column}))"
        )

    def session_free(self, table: str) -> str:
        """For a job row of ``table`` about to be claimed: no job of its session is running. Two
        jobs of one conversation never run at once: they would read the same watermark."""
        return (
            f"NOT EXISTS (SELECT 1 FROM ingest_jobs AS r WHERE r.session_key = {table}.session_key"
            " AND r.status = 'running')"
        )


SQLITE = Dialect("sqlite")
POSTGRES = Dialect("postgres")

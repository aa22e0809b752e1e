"""What a store function gets: a connection of either backend, with its SQL dialect attached.

Store functions are written once against this shape (``execute`` with ``?`` parameters, rows read by
position or by column name, ``conn.dialect`` for the fragments that differ). SQLite's own connection
class is used as it is, with the dialect added; PostgreSQL's is wrapped in
``store/postgres/connection.py``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Protocol

from .dialect import SQLITE, Dialect


class Cursor(Protocol):
    """The part of a DB-API cursor the store uses."""

    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def __iter__(self) -> Iterator[Any]: ...


class Connection(Protocol):
    """A connection as store functions use it (SQL with ``?`` placeholders on both backends)."""

    dialect: Dialect

    def execute(self, sql: str, parameters: Sequence[Any] = ..., /) -> Any: ...

    def executemany(self, sql: str, parameters: Iterable[Sequence[Any]], /) -> Any: ...


class SqliteConnection(sqlite3.Connection):
    """``sqlite3.Connection`` that says which dialect it speaks (``sqlite3.connect(factory=…)``)."""

    dialect: Dialect = SQLITE


def dialect_of(conn: Any) -> Dialect:
    """The dialect ``conn`` speaks; a plain ``sqlite3.Connection`` (a script's own) speaks SQLite."""
    return getattr(conn, "dialect", SQLITE)

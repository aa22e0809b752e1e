"""A psycopg connection that speaks to the store the way ``sqlite3`` does.

Why a wrapper and not two copies of the SQL: the store's queries are written once with ``?``
placeholders and rows read by position or by column name. This wrapper turns ``?`` into psycopg's
``%s`` (outside quoted text), returns rows that behave like ``sqlite3.Row``, and carries the
PostgreSQL dialect for the fragments that differ (``store/dialect.py``).

Values are bound client-side (``ClientCursor``): psycopg quotes each one into the statement, which
lets PostgreSQL infer the type of a ``NULL`` or an empty list the way SQLite never needs to.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import psycopg
from psycopg.rows import RowMaker
from psycopg.types.numeric import NumericLoader

from ..dialect import POSTGRES, Dialect


class Row:
    """One result row: ``row[0]``, ``row["name"]``, ``dict(row)``, unpacking (as ``sqlite3.Row``)."""

    __slots__ = ("_names", "_values")

    def __init__(self, names: dict[str, int], values: Sequence[Any]) -> None:
        self._names = names
        self._values = tuple(values)

    def __getitem__(self, key: int | str | slice) -> Any:
        if isinstance(key, str):
            return self._values[self._names[key]]
        return self._values[key]

    def __iter__(self) -> Iterator[Any]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Row):
            return self._values == other._values
        return self._values == other

    __hash__ = None  # type: ignore[assignment]

    def keys(self) -> list[str]:
        return list(self._names)

    def __repr__(self) -> str:
        if len(self._names) != len(self._values):  # two columns of one name: positions only
            return f"Row({self._values!r})"
        return f"Row({dict(zip(self._names, self._values, strict=True))!r})"


def _row_factory(cursor: Any) -> RowMaker[Row]:
    description = cursor.description or []
    names = {column.name: position for position, column in enumerate(description)}
    return lambda values: Row(names, values)


@lru_cache(maxsize=1024)
def to_psycopg(sql: str) -> str:
    """``?`` placeholders → ``%s``, and every literal ``%`` doubled (psycopg reads ``%`` as a
    placeholder everywhere). A ``?`` inside quotes, a dollar-quoted body or a comment stays."""
    out: list[str] = []
    i, n = 0, len(sql)
    while i < n:
        char = sql[i]
        if char in ("'", '"'):
            end = i + 1
            while end < n:
                if sql[end] == char:
                    if end + 1 < n and sql[end + 1] == char:  # a doubled quote inside
                        end += 2
                        continue
                    break
                end += 1
            out.append(sql[i : end + 1].replace("%", "%%"))
            i = end + 1
        elif char == "$" and (tag_end := sql.find("$", i + 1)) != -1 and _is_dollar_tag(sql[i : tag_end + 1]):
            tag = sql[i : tag_end + 1]
            close = sql.find(tag, tag_end + 1)
            end = n if close == -1 else close + len(tag)
            out.append(sql[i:end].replace("%", "%%"))
            i = end
        elif char == "-" and sql.startswith("--", i):
            end = sql.find("\n", i)
            end = n if end == -1 else end
            out.append(sql[i:end].replace("%", "%%"))
            i = end
        elif char == "?":
            out.append("%s")
            i += 1
        elif char == "%":
            out.append("%%")
            i += 1
        else:
            out.append(char)
            i += 1
    return "".join(out)


def _is_dollar_tag(tag: str) -> bool:
    inner = tag[1:-1]
    return inner == "" or (inner.replace("_", "a").isalnum() and not inner[0].isdigit())


@dataclass(frozen=True)
class ManyResult:
    """What :meth:`PgConnection.executemany` returns: the rows changed over all its statements."""

    rowcount: int


class PgConnection:
    """The store's view of one psycopg connection (see the module docstring).

    Args:
        raw: an open psycopg connection; the caller owns its transactions and its life.
    """

    dialect: Dialect = POSTGRES

    def __init__(self, raw: psycopg.Connection[Any]) -> None:
        self.raw = raw

    def execute(self, sql: str, parameters: Sequence[Any] = (), /) -> psycopg.ClientCursor[Row]:
        cursor = psycopg.ClientCursor(self.raw, row_factory=_row_factory)
        if parameters:
            cursor.execute(to_psycopg(sql), tuple(parameters))
        else:
            cursor.execute(sql)  # no parameters: psycopg parses nothing, '%' stays as it is
        return cursor

    def executemany(self, sql: str, parameters: Iterable[Sequence[Any]], /) -> ManyResult:
        """Run ``sql`` once per parameter row; ``rowcount`` is the sum over them, as in sqlite3."""
        statement = to_psycopg(sql)
        total = 0
        with psycopg.ClientCursor(self.raw) as cursor:
            for values in parameters:
                cursor.execute(statement, tuple(values))
                total += max(cursor.rowcount, 0)
        return ManyResult(total)

    @property
    def in_transaction(self) -> bool:
        return self.raw.info.transaction_status != psycopg.pq.TransactionStatus.IDLE


class _NumberLoader(NumericLoader):
    """numeric (a sum over bigint, an avg) as SQLite gives it: an int when whole, else a float."""

    def load(self, data: Any) -> Any:
        value = super().load(data)
        return int(value) if value.is_finite() and value == value.to_integral_value() else float(value)


def configure(raw: psycopg.Connection[Any]) -> None:
    """Session settings every connection of the store gets (a pool's ``configure`` hook)."""
    raw.adapters.register_loader("numeric", _NumberLoader)
    raw.execute("SET TIME ZONE 'UTC'")
    raw.commit()

"""Store tests run on both backends: a real SQLite file and a real PostgreSQL database."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memory_cortex.store.db import apply_migrations, connect


@pytest.fixture(params=["sqlite", "postgres"])
def any_conn(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    """A connection with every migration applied, in autocommit (each statement commits), on the
    SQLite file of ``tmp_path`` or a fresh PostgreSQL database: the same store functions run on it."""
    if request.param == "sqlite":
        conn = connect(tmp_path / "memories.db", read_only=False, busy_timeout_ms=1000)
        apply_migrations(conn)
        yield conn
        conn.close()
        return
    import psycopg

    from memory_cortex.store.postgres.connection import PgConnection, configure
    from memory_cortex.store.postgres.db import apply_migrations as apply_postgres_migrations

    raw = psycopg.connect(request.getfixturevalue("postgres_url"), autocommit=True)
    configure(raw)
    apply_postgres_migrations(raw)
    yield PgConnection(raw)
    raw.close()

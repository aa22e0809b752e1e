"""Keeps the in-memory vector index in step with writes made by *other* processes.

``scripts/backfill-embeddings.py`` writes vectors straight into the SQLite file while the daemon
runs. SQLite tells a connection when another connection committed (``PRAGMA data_version`` changes),
so this worker polls that number on the writer's connection every few seconds and, when it moved,
re-reads every vector of the live model and makes the index hold exactly those (rows gone are
removed; every row read is upserted again, changed or not). It runs on the writer thread, so it
is ordered with the daemon's own writes and can never apply an older snapshot over a newer vector.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3

from ..store import embeddings as embedding_sql
from ..store.db import Database
from ..store.vectors import VectorIndex
from ..vectormath import from_blob

log = logging.getLogger(__name__)


class IndexSync:
    """Background worker: wake every ``interval_s``, compare data_version, reload on change.

    Args:
        db: the store (its writer connection is the one asked).
        index: the index to keep in step.
        interval_s: polling period; the check itself is one PRAGMA.
    """

    def __init__(self, db: Database, index: VectorIndex, interval_s: float = 5.0) -> None:
        self._db = db
        self._index = index
        self._interval_s = interval_s
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._last_version: int | None = None
        self.reloads = 0

    async def start(self) -> None:
        self._last_version = await self._db.on_writer(_data_version)
        self._task = asyncio.create_task(self._run(), name="index-sync")

    async def stop(self) -> None:
        self._stop.set()
        if self._task is not None:
            await asyncio.wait_for(self._task, timeout=10)

    async def check_now(self) -> bool:
        """Reload if another process committed since the last check; True when it did."""
        version = await self._db.on_writer(_data_version)
        if version == self._last_version:
            return False
        self._last_version = version
        changed = await self._db.on_writer(self._reload)
        self.reloads += 1
        log.info("vector index refreshed after an external write", extra={"changed_rows": changed})
        return True

    async def _run(self) -> None:
        while not self._stop.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop.wait(), timeout=self._interval_s)
            if self._stop.is_set():
                break
            try:
                await self.check_now()
            except Exception:  # the worker never dies; the next tick tries again
                log.exception("vector index refresh failed")

    def _reload(self, conn: sqlite3.Connection) -> int:
        wanted = {
            memory_id: (user_id, from_blob(blob), layer, kind, scope)
            for memory_id, user_id, blob, dim, layer, kind, scope in embedding_sql.iter_embeddings(
                conn, self._index.model
            )
            if self._index.dim is None or dim == self._index.dim
        }
        return self._index.sync(wanted)


def _data_version(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA data_version").fetchone()[0])

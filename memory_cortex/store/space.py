"""Whether the store has room to write: a full disk noticed on the writes, told once, not per write.

A write the database refuses for lack of space (SQLite's ``SQLITE_FULL``, PostgreSQL's SQLSTATE
53100 ``disk_full``) begins a *full* episode: it is logged once as a warning and every such write
is answered with :class:`~memory_cortex.errors.StorageFull` (507 ``disk_full``). The next write
that commits ends the episode (logged once), on SQLite only once :data:`ROOM_TO_RECOVER_BYTES` are
free again. Reads never need space and keep working throughout. Nothing is lost: a refused write
was never acknowledged.
"""

from __future__ import annotations

import logging
import shutil
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from ..errors import StorageFull

log = logging.getLogger(__name__)

T = TypeVar("T")

# PostgreSQL's SQLSTATE for "could not extend file: No space left on device" and its kin.
PG_DISK_FULL = "53100"
# A full episode of a SQLite store ends with a commit only once this much is free beside the file:
# on a full disk SQLite still commits what fits in pages it reuses (a WAL restarted after a
# checkpoint, a row rewritten in place), while anything that grows the files is refused.
ROOM_TO_RECOVER_BYTES = 1 << 20


@dataclass(frozen=True)
class SpaceState:
    """What the store knows about its room to write.

    Attributes:
        full: a write was refused for lack of space and none has committed since.
        full_since: unix time of the first refused write of the current episode (None: not full).
        refused_writes: writes refused for lack of space since the daemon started.
        free_bytes: free space on the filesystem that holds the SQLite file; None on PostgreSQL
            (its disk is the server's) or when it cannot be read.
    """

    full: bool
    full_since: float | None
    refused_writes: int
    free_bytes: int | None


def is_disk_full(exc: BaseException) -> bool:
    """Whether ``exc`` is a database refusing a write for lack of space (either backend)."""
    if isinstance(exc, sqlite3.OperationalError):
        return getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL
    return getattr(exc, "sqlstate", None) == PG_DISK_FULL  # psycopg's errors carry it


class SpaceWatch:
    """Tracks full episodes of one store (thread-safe: writes end on the writer thread).

    Args:
        location: where the data is, for the log (a path, or a URL with its password masked).
        folder: the folder of a SQLite file, whose free space is reported; None on PostgreSQL.
        clock: unix time (tests pass their own).
    """

    def __init__(self, location: str, folder: Path | None, *, clock: Callable[[], float] = time.time) -> None:
        self._location = location
        self._folder = folder
        self._clock = clock
        self._lock = threading.Lock()
        self._full_since: float | None = None
        self._refused = 0

    def guarded(self, write: Callable[[], T]) -> T:
        """Run ``write`` (a whole transaction, committed when it returns): a refusal for lack of
        space is raised as :class:`StorageFull`; a success ends a full episode."""
        result = self.mapped(write)
        self.committed()
        return result

    def mapped(self, work: Callable[[], T]) -> T:
        """Run ``work`` (which may or may not write: a pragma, a checkpoint): a refusal for lack of
        space is raised as :class:`StorageFull`; a success proves nothing about space."""
        try:
            return work()
        except Exception as exc:
            if is_disk_full(exc):
                raise self.refused(exc) from exc
            raise

    def refused(self, cause: BaseException) -> StorageFull:
        """Record a write refused for lack of space; returns the error to raise in its place."""
        with self._lock:
            self._refused += 1
            starts = self._full_since is None
            if starts:
                self._full_since = self._clock()
        if starts:
            log.warning(
                "database full: writes are refused until space is freed; reads go on",
                extra={"database": self._location, "reason": str(cause).strip()[:200]},
            )
        return StorageFull()

    def committed(self) -> None:
        """A write committed: a full episode, if one was under way, is over (on SQLite: when there
        is room again, not merely a write that fit in reused pages)."""
        if self._full_since is None:  # the common case, without the lock
            return
        free = self.free_bytes()
        if free is not None and free < ROOM_TO_RECOVER_BYTES:
            return
        with self._lock:
            since, self._full_since = self._full_since, None
        if since is not None:
            log.warning(
                "database writable again",
                extra={"database": self._location, "full_for_s": round(self._clock() - since, 1)},
            )

    def state(self) -> SpaceState:
        since = self._full_since
        return SpaceState(
            full=since is not None,
            full_since=since,
            refused_writes=self._refused,
            free_bytes=self.free_bytes(),
        )

    def free_bytes(self) -> int | None:
        """Free space beside the SQLite file (one ``statvfs``); None on PostgreSQL or on error."""
        if self._folder is None:
            return None
        try:
            return shutil.disk_usage(self._folder).free
        except OSError:
            return None

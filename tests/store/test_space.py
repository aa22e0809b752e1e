"""store/space.py: a full episode begins at the first write refused for lack of space, is told once,
and ends with a commit only when there is room again. Real SQLite errors (``max_page_count`` makes
SQLite answer SQLITE_FULL); the free space is faked, as a full disk cannot be made here."""

from __future__ import annotations

import logging
import sqlite3
from collections import namedtuple
from pathlib import Path

import pytest

from memory_cortex.errors import StorageFull
from memory_cortex.store import space as space_module
from memory_cortex.store.space import ROOM_TO_RECOVER_BYTES, SpaceWatch, is_disk_full

Usage = namedtuple("Usage", "total used free")


def sqlite_full_error(tmp_path: Path) -> sqlite3.OperationalError:
    conn = sqlite3.connect(tmp_path / "full.db", isolation_level=None)
    conn.execute("CREATE TABLE t (x)")
    conn.execute(f"PRAGMA max_page_count = {conn.execute('PRAGMA page_count').fetchone()[0]}")
    with pytest.raises(sqlite3.OperationalError) as caught:
        conn.execute("INSERT INTO t VALUES (?)", ("x" * 20_000,))
    conn.close()
    return caught.value


def test_only_a_refusal_for_space_counts_as_full(tmp_path: Path) -> None:
    assert is_disk_full(sqlite_full_error(tmp_path))
    assert not is_disk_full(sqlite3.OperationalError("database is locked"))
    assert not is_disk_full(ValueError("database or disk is full"))  # the words alone are not it


def test_an_episode_is_told_once_and_ends_only_with_room(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    free = [0]
    monkeypatch.setattr(space_module.shutil, "disk_usage", lambda folder: Usage(1, 1, free[0]))
    watch = SpaceWatch("test.db", tmp_path, clock=lambda: 1000.0)
    error = sqlite_full_error(tmp_path)
    caplog.set_level(logging.WARNING)

    def refused() -> None:
        raise error

    for _ in range(3):
        with pytest.raises(StorageFull):
            watch.guarded(refused)
    state = watch.state()
    assert (state.full, state.full_since, state.refused_writes, state.free_bytes) == (True, 1000.0, 3, 0)
    assert [r.getMessage() for r in caplog.records].count(
        "database full: writes are refused until space is freed; reads go on"
    ) == 1

    assert watch.guarded(lambda: "fit in a reused page") == "fit in a reused page"
    assert watch.state().full  # a write that fit proves no room
    free[0] = ROOM_TO_RECOVER_BYTES
    watch.guarded(lambda: None)
    assert not watch.state().full and watch.state().refused_writes == 3
    assert [r.getMessage() for r in caplog.records][-1] == "database writable again"


def test_work_that_may_not_write_never_ends_an_episode(tmp_path: Path) -> None:
    watch = SpaceWatch("postgresql://db", None)  # PostgreSQL: no free space known
    with pytest.raises(StorageFull):
        watch.mapped(lambda: (_ for _ in ()).throw(sqlite_full_error(tmp_path)))
    watch.mapped(lambda: None)  # a read on the writer, a checkpoint that did nothing
    assert watch.state().full and watch.state().free_bytes is None
    watch.guarded(lambda: None)  # a committed transaction
    assert not watch.state().full
    with pytest.raises(ZeroDivisionError):  # anything else passes through untouched
        watch.guarded(lambda: 1 / 0)
    assert not watch.state().full

"""store/postgres/db.py against a real PostgreSQL: several daemons' databases on one server, each
with its own id, sharing the database-wide locks that keep exclusive work to one of them."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from memory_cortex.errors import LifecycleBusy
from memory_cortex.store.postgres.db import PostgresDatabase, redacted_url


@pytest.fixture
def two_databases(postgres_url: str) -> Iterator[tuple[PostgresDatabase, PostgresDatabase]]:
    first, second = (
        PostgresDatabase(postgres_url, read_connections=1),
        PostgresDatabase(postgres_url, read_connections=1),
    )
    first.open()
    second.open()  # the migrations run once: the second finds them applied
    yield first, second
    first.close()
    second.close()


def test_each_daemon_gets_an_id_of_its_own(two_databases: tuple[PostgresDatabase, PostgresDatabase]) -> None:
    first, second = two_databases
    assert first.instance_id > 0 and second.instance_id > 0 and first.instance_id != second.instance_id


async def test_exclusive_work_is_held_by_one_daemon_at_a_time(
    two_databases: tuple[PostgresDatabase, PostgresDatabase],
) -> None:
    first, second = two_databases
    async with first.exclusive("lifecycle") as held:
        assert held
        async with second.exclusive("lifecycle") as also:
            assert not also  # asked while the first holds it: no wait, just "busy"
        async with second.exclusive("another job") as other:
            assert other  # names are separate locks
    async with second.exclusive("lifecycle") as now:
        assert now  # released at the end of the first block


async def test_a_lifecycle_run_elsewhere_makes_this_daemons_run_busy(
    two_databases: tuple[PostgresDatabase, PostgresDatabase],
) -> None:
    from memory_cortex.config import LifecycleConfig
    from memory_cortex.services.lifecycle.service import LifecycleService

    first, second = two_databases
    lifecycle = LifecycleService(second, None, None, None, LifecycleConfig())  # type: ignore[arg-type]
    async with first.exclusive("lifecycle"):
        with pytest.raises(LifecycleBusy, match="another daemon"):
            await lifecycle.run()


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql://cortex:s3cret@db:5432/cortex", "postgresql://cortex:***@db:5432/cortex"),
        (
            "postgresql://cortex@db/cortex?password=s3cret&sslmode=require",
            "postgresql://cortex@db/cortex?password=***&sslmode=require",
        ),
        (
            "postgresql:///cortex?host=/run/pg&sslpassword=s3cret",
            "postgresql:///cortex?host=/run/pg&sslpassword=***",
        ),
        ("postgresql://cortex@db/cortex", "postgresql://cortex@db/cortex"),
    ],
)
def test_a_url_is_shown_without_any_password(url: str, shown: str) -> None:
    assert redacted_url(url) == shown

"""scripts/backfill-embeddings.py against a real database, while a real daemon app is running."""

from __future__ import annotations

import logging
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from memory_cortex.app import create_app
from memory_cortex.config import Config
from memory_cortex.keys import INDEX_SYNC, VECTOR_INDEX
from tests.conftest import make_config
from tests.fakes import DeadEmbedder
from tests.helpers import search, store
from tests.processes import FLOAT_MODEL

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "backfill-embeddings.py"


@pytest.fixture
def config(tmp_path: Path) -> Config:
    """The daemon's own re-embedding off: the script is what these tests watch."""
    return make_config(tmp_path, embeddings={"reembed": False})


def run_backfill(
    db: Path, *args: str, settings: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_CORTEX_")}
    env |= FLOAT_MODEL | (settings or {})
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--db", str(db), *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


async def test_backfill_embeds_missing_and_foreign_vectors_and_the_daemon_notices(
    aiohttp_client: Any, config: Any, minilm: Any
) -> None:
    down = await aiohttp_client(create_app(config, embedder=DeadEmbedder(minilm.model, 384)))
    await store(
        down,
        {"user_id": "a", "fact": "Ana rides a unicycle to the office."},
        {"user_id": "a", "fact": "Ana grows tomatoes."},
        {"user_id": "b", "fact": "Ben knits scarves."},
    )
    await down.close()
    db = config.database.path
    conn = sqlite3.connect(db)
    # One row carries a vector of some other model: it must be re-embedded too, never compared.
    conn.execute(
        "UPDATE memories SET embedding = x'0000803f', embedding_model = 'old-model', embedding_dim = 1"
        " WHERE id = 2"
    )
    conn.commit()

    live = await aiohttp_client(create_app(config, embedder=minilm))
    assert len(live.app[VECTOR_INDEX]) == 0
    stats = await (await live.get("/stats")).json()
    assert (stats["unembedded"], stats["stale_embeddings"]) == (2, 1)

    dry = run_backfill(db, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "3 memories need" in dry.stdout
    assert (
        conn.execute("SELECT count(*) FROM memories WHERE embedding_model = 'all-MiniLM-L6-v2'").fetchone()[0]
        == 0
    )

    result = run_backfill(db, "--user", "a", "--batch-size", "1")
    assert result.returncode == 0, result.stderr
    assert "embedded 2 memories" in result.stdout
    models = dict(conn.execute("SELECT id, embedding_model FROM memories").fetchall())
    assert models == {1: "all-MiniLM-L6-v2", 2: "all-MiniLM-L6-v2", 3: None}

    # The running daemon picks the new vectors up without a restart.
    assert await live.app[INDEX_SYNC].check_now() is True
    assert len(live.app[VECTOR_INDEX]) == 2
    body = await search(live, "how does she commute?", "a", mode="vector", limit=1)
    assert body["results"][0]["id"] == 1
    assert await live.app[INDEX_SYNC].check_now() is False  # nothing new since

    again = run_backfill(db)
    assert "1 memories need" in again.stdout and "embedded 1 memories" in again.stdout
    conn.close()


async def test_switching_to_int8_warns_at_start_until_the_backfill_re_embeds_every_row(
    aiohttp_client: Any, config: Any, minilm: Any, int8_cache: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """embeddings.quantize: int8 records its vectors as another model's: a store embedded by the float
    model says so at start, and the backfill run with the same setting moves every row over."""
    client = await aiohttp_client(create_app(config, embedder=minilm))
    await store(
        client, {"user_id": "a", "fact": "Ana grows tomatoes."}, {"user_id": "a", "fact": "Ana knits."}
    )
    await client.close()
    warning = "memories embedded by another model are left out of vector search"
    caplog.set_level(logging.WARNING, logger="memory_cortex")
    int8 = await aiohttp_client(create_app(config, embedder=DeadEmbedder("all-MiniLM-L6-v2+int8", 384)))
    [said] = [record for record in caplog.records if record.getMessage().startswith(warning)]
    assert said.other_models == {"all-MiniLM-L6-v2": 2}  # type: ignore[attr-defined]
    await int8.close()

    settings = {
        "MEMORY_CORTEX_EMBEDDINGS__QUANTIZE": "int8",
        "MEMORY_CORTEX_EMBEDDINGS__CACHE_DIR": str(int8_cache),
    }
    result = run_backfill(config.database.path, settings=settings)
    assert result.returncode == 0, result.stderr
    assert "2 memories need a all-MiniLM-L6-v2+int8 embedding" in result.stdout
    with sqlite3.connect(config.database.path) as conn:
        assert conn.execute("SELECT DISTINCT embedding_model FROM memories").fetchall() == [
            ("all-MiniLM-L6-v2+int8",)
        ]
    caplog.clear()
    again = await aiohttp_client(create_app(config, embedder=DeadEmbedder("all-MiniLM-L6-v2+int8", 384)))
    assert not [record for record in caplog.records if record.getMessage().startswith(warning)]
    await again.close()


def test_backfill_fills_a_postgresql_store_and_its_vector_index(postgres_url: str) -> None:
    """With database.backend postgres the script embeds there, and the rows' pgvector column (the
    index every daemon searches) follows the stored BLOBs at once."""
    import psycopg

    from memory_cortex.records import NewMemory
    from memory_cortex.store import memories as memory_sql
    from memory_cortex.store.postgres.connection import PgConnection, configure
    from memory_cortex.store.postgres.db import apply_migrations

    with psycopg.connect(postgres_url, autocommit=True) as raw:
        configure(raw)
        apply_migrations(raw)
        for fact in ("Sam keeps bees.", "Sam's hives are on the roof."):
            memory_sql.insert(PgConnection(raw), NewMemory(user_id="sam", fact=fact))
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_CORTEX_")}
    env.update({"MEMORY_CORTEX_DATABASE__BACKEND": "postgres", "MEMORY_CORTEX_DATABASE__URL": postgres_url})
    result = subprocess.run(
        [sys.executable, str(SCRIPT)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    # The default model: the packaged one's int8 copy.
    assert "2 memories need a all-MiniLM-L6-v2+int8 embedding" in result.stdout
    assert (
        postgres_url.split("?")[0] not in result.stdout or ":***@" in result.stdout or "@" not in postgres_url
    )
    with psycopg.connect(postgres_url) as raw:
        rows = raw.execute("SELECT embedding_dim, embedding_vector IS NOT NULL FROM memories").fetchall()
    assert rows == [(384, True), (384, True)]

"""A busy GPU defers extraction, never the record of what was said (the turns come first)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from memory_cortex.config import IngestConfig, LLMConfig
from memory_cortex.models.embedders import SentenceTransformerEmbedder
from memory_cortex.records import MemoryFilter
from memory_cortex.services.extraction import ExtractionService
from memory_cortex.services.ingest import IngestRequest, IngestService
from memory_cortex.services.memories import MemoryService
from memory_cortex.store import memories as memory_sql
from memory_cortex.store.db import Database
from memory_cortex.store.ingest import IngestJob
from memory_cortex.store.vectors import VectorIndex


async def test_turns_are_stored_while_the_gate_holds_the_job(
    tmp_path: Path, minilm: SentenceTransformerEmbedder
) -> None:
    db = Database(tmp_path / "memories.db")
    await asyncio.to_thread(db.open)
    released = asyncio.Event()
    held: list[int] = []

    async def busy_gpu(job: IngestJob) -> None:
        held.append(job.id)
        await released.wait()

    memories = MemoryService(db, VectorIndex(minilm.model, minilm.dim), minilm)
    service = IngestService(
        db, memories, ExtractionService(None, LLMConfig(backend="rules")), IngestConfig(), gate=busy_gpu
    )
    messages = [{"role": "user", "content": "Remember that my bike is a green Bianchi."}]
    await service.submit(IngestRequest("sam", "s", None, {"messages": messages}, 1, debounce=False))
    try:
        await service.start()
        for _ in range(200):
            if held:
                break
            await asyncio.sleep(0.02)
        stored = await db.read(
            lambda conn: memory_sql.list_memories(conn, MemoryFilter(user_id="sam"), limit=10, before_id=None)
        )
        assert held and [(m.kind, m.fact) for m in stored] == [
            ("turn", "User: Remember that my bike is a green Bianchi.")
        ]
        released.set()
        for _ in range(200):
            if (await service.queue())["done"]:
                break
            await asyncio.sleep(0.02)
        kinds = sorted(
            m.kind
            for m in await db.read(
                lambda conn: memory_sql.list_memories(
                    conn, MemoryFilter(user_id="sam"), limit=10, before_id=None
                )
            )
        )
        assert kinds == ["fact", "turn"]
    finally:
        released.set()
        await service.stop()
        await asyncio.to_thread(db.close)

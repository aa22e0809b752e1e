#!/usr/bin/env python3
"""Embed memories that have no vector, or one from another model, straight in the store (the SQLite
file, or the PostgreSQL database when ``database.backend`` is postgres).

The daemon does the same by itself in the background (``embeddings.reembed``, on by default); this
is for a daemon with it off, or a store no daemon runs on. Use it after switching
``embeddings.model`` or ``embeddings.quantize`` (rows of the old model are
skipped by search until re-embedded) or after the embedder was down while memories were written.

Safe while the daemon runs: each batch is one short transaction holding the write lock (the
daemon's writes wait at most that long, within its busy timeout), and the daemon notices the new
vectors by itself (SQLite: within ``database.external_write_check_s``; PostgreSQL: at once, its
index is the database's). Resumable: work goes in id order and every batch is committed, so after
Ctrl-C a new run simply continues with what is left.

    python scripts/backfill-embeddings.py [--config PATH] [--db PATH] [--user ID]
                                          [--batch-size N] [--dry-run]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tqdm import tqdm  # noqa: E402

from memory_cortex.config import Config, load_config  # noqa: E402
from memory_cortex.models.embedders import create_embedder  # noqa: E402
from memory_cortex.services.memory_text import embedding_text, stored_embedding_text  # noqa: E402
from memory_cortex.store import embeddings as embedding_sql  # noqa: E402
from memory_cortex.store import memories as memory_sql  # noqa: E402
from memory_cortex.store import portability as portability_sql  # noqa: E402
from memory_cortex.vectormath import to_blob  # noqa: E402


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--config", type=Path, help="YAML config (default: ~/.config/memory-cortex/config.yaml)"
    )
    parser.add_argument("--db", type=Path, help="database file (default: database.path from config)")
    parser.add_argument("--user", help="only this user's memories")
    parser.add_argument("--batch-size", type=int, default=64, help="memories per transaction (default 64)")
    parser.add_argument("--dry-run", action="store_true", help="count what would be embedded, change nothing")
    args = parser.parse_args(argv)
    if args.batch_size < 1:
        parser.error("--batch-size must be at least 1")
    return args


async def backfill(args: argparse.Namespace) -> int:
    overrides = {"database": {"path": args.db}} if args.db else {}
    config = load_config(args.config, overrides)
    if config.database.backend == "sqlite" and not config.database.path.exists():
        print(f"no database at {config.database.path}", file=sys.stderr)
        return 2
    address = portability_sql.store_address(config.database)  # the SQLite file or PostgreSQL
    with portability_sql.writable(address, busy_timeout_ms=config.database.busy_timeout_ms) as conn:
        return await backfill_store(conn, config, args, portability_sql.location(address))


async def backfill_store(conn: Any, config: Config, args: argparse.Namespace, where: str) -> int:
    model = config.embeddings.recorded_model
    total = embedding_sql.count_needing_embedding(conn, model, args.user)
    scope = f" of user {args.user!r}" if args.user else ""
    print(f"{total} memories{scope} need a {model} embedding ({where})")
    if args.dry_run or total == 0:
        return 0

    embedder = create_embedder(config.embeddings)
    await embedder.start()
    done, after_id, started = 0, 0, time.monotonic()
    try:
        with tqdm(total=total, unit="memory", desc="embedding") as progress:
            while True:
                batch = embedding_sql.needing_embedding(
                    conn, model, user_id=args.user, after_id=after_id, limit=args.batch_size
                )
                if not batch:
                    break
                records = memory_sql.get_many(conn, [memory_id for memory_id, _, _ in batch])
                vectors = await embedder.embed_documents(
                    [
                        stored_embedding_text(conn, records[memory_id])
                        if memory_id in records
                        else embedding_text(topic, fact)
                        for memory_id, topic, fact in batch
                    ]
                )
                with portability_sql.write_transaction(conn):
                    for (memory_id, topic, fact), vector in zip(batch, vectors, strict=True):
                        # Only if the text is still what was embedded (the daemon may have edited it).
                        current = memory_sql.get(conn, memory_id)
                        if current is not None and (current.topic, current.fact) == (topic, fact):
                            embedding_sql.set_embedding(
                                conn, memory_id, to_blob(vector), model, int(vector.shape[0])
                            )
                after_id = batch[-1][0]
                done += len(batch)
                progress.update(len(batch))
    except KeyboardInterrupt:
        print(f"\ninterrupted after {done} memories; run again to continue where it stopped")
        return 130
    finally:
        await embedder.close()
    print(f"embedded {done} memories in {time.monotonic() - started:.1f} s")
    return 0


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    return asyncio.run(backfill(parse_args(argv)))


if __name__ == "__main__":
    sys.exit(main())

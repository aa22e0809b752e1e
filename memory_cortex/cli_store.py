"""The maintenance verb ``migrate-store``: copy the whole store between SQLite and PostgreSQL.

A thin layer over :mod:`memory_cortex.services.store_migration`: it opens the two stores, shows a
progress bar, prints what it did and whether the check passed. Errors are one
``memory-cortex migrate-store: …`` line on stderr (exit status 1; 130 after Ctrl-C, with what to do).
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .config import Config

MIGRATE_HELP = """\
Copy every memory, the ingest journal, session watermarks and lifecycle history from one store to
another, keeping every id:

  memory-cortex migrate-store --from sqlite:data/memory-cortex.db --to postgresql://cortex@db/cortex
  memory-cortex migrate-store --from postgresql://cortex@db/cortex --to sqlite:/tmp/copy.db

Stop the daemon first (the copy reads one snapshot; writes made during it are not copied). The
target is created and migrated when missing; a target that holds other memories is refused. The
copy commits in batches: after an interruption, run the same command again and it resumes. At the
end it compares rows per table and a sample of memories (text and vector byte for byte); exit status
0 only when they match. Then point database.backend/url (or path) at the target and start the daemon.
A password in a postgresql:// URL is never printed; PGPASSWORD or ~/.pgpass work too."""


def add_store_commands(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    add_database_flags: Callable[[argparse.ArgumentParser], None],
) -> None:
    """Register ``migrate-store`` (it names both stores itself: no ``--db``)."""
    migrate = commands.add_parser(
        "migrate-store",
        help="copy the whole store between SQLite and PostgreSQL (resumable, verified)",
        description=MIGRATE_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    migrate.add_argument("--from", dest="source", required=True, help="sqlite:PATH or postgresql://…")
    migrate.add_argument("--to", dest="target", required=True, help="sqlite:PATH or postgresql://…")
    migrate.add_argument(
        "--batch-size", type=int, default=1000, help="memories per transaction (default 1000)"
    )
    migrate.add_argument("--sample", type=int, default=200, help="memories compared at the end (default 200)")
    migrate.set_defaults(run=run_migrate_store)


def run_migrate_store(config: Config, args: argparse.Namespace) -> int:
    prefix = "memory-cortex migrate-store:"
    try:
        return _migrate(args)
    except KeyboardInterrupt:
        print(
            f"\n{prefix} interrupted; what was copied is kept: run the same command again to resume",
            file=sys.stderr,
        )
        return 130
    except Exception as exc:
        print(f"{prefix} {_message(exc)}", file=sys.stderr)
        return 1


def _migrate(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from .services.store_migration import migrate_store
    from .store import transfer

    if args.batch_size < 1 or args.sample < 0:
        raise ValueError("--batch-size must be at least 1 and --sample at least 0")
    if args.source == args.target:
        raise ValueError("--from and --to name the same store")
    with (
        transfer.opened(args.source, create=False) as source,
        transfer.opened(args.target, create=True) as target,
        tqdm(unit="memory", desc="copying", file=sys.stderr) as bar,
    ):
        report = migrate_store(source, target, batch=args.batch_size, sample=args.sample, progress=bar)
    where = f"{transfer.describe(args.source)} -> {transfer.describe(args.target)}"
    resumed = f" (resumed after id {report.resumed_after})" if report.resumed_after else ""
    print(f"migrate-store: {report.memories_copied} memories copied{resumed}, {where}")
    counts = ", ".join(f"{table} {count}" for table, count in report.target_counts.items())
    if report.verified:
        print(f"migrate-store: verified: {counts}; {report.sampled} sampled memories identical")
        return 0
    problems = []
    if report.source_counts != report.target_counts:
        differing = [
            t for t in report.source_counts if report.source_counts[t] != report.target_counts.get(t)
        ]
        problems.append(
            "row counts differ: "
            + ", ".join(f"{t} {report.source_counts[t]} vs {report.target_counts.get(t)}" for t in differing)
        )
    if report.sample_mismatches:
        problems.append(f"memories differ: ids {report.sample_mismatches[:10]}")
    if report.vectors_missing:
        problems.append(f"{report.vectors_missing} vectors did not reach pgvector")
    print(f"memory-cortex migrate-store: check failed: {'; '.join(problems)}", file=sys.stderr)
    return 1


def _message(exc: Exception) -> str:
    """One line for a failure; a database's own message is kept (it never holds a password)."""
    from .errors import CortexError

    if isinstance(exc, CortexError):
        return f"error: {exc.message}"
    if isinstance(exc, sqlite3.Error):
        return f"database error: {exc}"
    if type(exc).__module__.startswith("psycopg"):
        return f"PostgreSQL error: {str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__}"
    return f"error: {exc}"

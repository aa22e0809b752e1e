"""Moving a whole store between SQLite and PostgreSQL, resumable and verified.

The copy (``store/transfer.py``) keeps every id. It runs in short transactions, so an interruption
(Ctrl-C, a lost connection) leaves the target with a prefix of the memories; running the same
command again resumes after the target's highest id. At the end the two stores are compared: rows
per table, and a sample of memories byte for byte (text and vector). A target that already holds
other data is refused before anything is written.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..errors import CortexError
from ..store import transfer
from .portability import Progress


class StoreMigrationRefused(CortexError):
    """The target holds memories that are not a partial copy of the source; nothing was written."""

    code = "store_migration_refused"
    status = 409


@dataclass
class StoreMigrationReport:
    """What one run did and what the check found."""

    resumed_after: int = 0  # the target's highest memory id when the run began (0: a fresh copy)
    memories_copied: int = 0
    references_copied: int = 0
    rows_copied: dict[str, int] = field(default_factory=dict)  # the other tables
    source_counts: dict[str, int] = field(default_factory=dict)
    target_counts: dict[str, int] = field(default_factory=dict)
    sampled: int = 0
    sample_mismatches: list[int] = field(default_factory=list)  # ids whose text or vector differ
    vectors_missing: int = 0  # PostgreSQL target: BLOBs that did not become a pgvector value

    @property
    def verified(self) -> bool:
        return (
            self.source_counts == self.target_counts
            and not self.sample_mismatches
            and self.vectors_missing == 0
        )


def migrate_store(
    source: Any,
    target: Any,
    *,
    batch: int = 1000,
    sample: int = 200,
    progress: Progress | None = None,
) -> StoreMigrationReport:
    """Copy every row of ``source`` into ``target`` (both store connections, see
    ``transfer.opened``), then verify. ``progress`` counts memories; its total is set here."""
    report = StoreMigrationReport()
    report.resumed_after = after = transfer.max_memory_id(target)
    if after and not transfer.same_memory(source, target, after):
        raise StoreMigrationRefused(
            f"the target already holds memories (up to id {after}) that are not a copy of this source;"
            " migrate into an empty database"
        )
    remaining = int(source.execute("SELECT count(*) FROM memories WHERE id > ?", (after,)).fetchone()[0])
    if progress is not None:
        progress.total = remaining
    while rows := transfer.memory_batch(source, after, batch):
        with transfer.transaction(target):
            transfer.insert_memories(target, rows)
        after = int(rows[-1][0])
        report.memories_copied += len(rows)
        if progress is not None:
            progress.update(len(rows))
    with transfer.transaction(target):
        for table in transfer.OTHER_TABLES:
            report.rows_copied[table] = transfer.copy_table(source, target, table)
        for table in transfer.ID_TABLES:
            transfer.set_id_high_water(target, table, transfer.id_high_water(source, table))
    after = 0
    while True:  # every reference again (the entities exist now): cheap, and right after a resumed run too
        with transfer.transaction(target):
            updated, after = transfer.copy_references(source, target, after, batch)
        report.references_copied += updated
        if not updated:
            break
    with transfer.transaction(target):
        transfer.refresh_statistics(target)
    _verify(source, target, report, sample)
    return report


def _verify(source: Any, target: Any, report: StoreMigrationReport, sample: int) -> None:
    report.source_counts = transfer.counts(source)
    report.target_counts = transfer.counts(target)
    ids = transfer.sample_ids(source, sample)
    report.sampled = len(ids)
    mine, theirs = transfer.sample_rows(source, ids), transfer.sample_rows(target, ids)
    report.sample_mismatches = [
        memory_id for memory_id in ids if mine.get(memory_id) != theirs.get(memory_id)
    ]
    report.vectors_missing = transfer.vectors_missing(target)

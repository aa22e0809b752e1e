"""Markdown workspaces: the mirror on disk (export) and workspaces brought in (import).

The format is :mod:`memory_cortex.services.markdown`; this module moves it between the store and the
file system (or an HTTP body); :mod:`.mirror_files` does the disk, :mod:`.mirror_sync` keeps a
configured folder in step in the background.

Export writes each file atomically (a temporary file beside it, fsynced, then ``os.replace``), and
only when its bytes change, so an unchanged file keeps its mtime and a reader never sees half a
file. It only ever overwrites or deletes files that carry the mirror's header comment: a
hand-written ``MEMORY.md`` in the way is reported as a conflict (``--force`` overwrites it).

Import goes through :class:`~memory_cortex.services.memories.MemoryService`, in batches: each memory
is embedded and deduplicated like any other write. A text this user already has (as any memory's
text, or as an imported wording merged into one) is skipped; so importing the same folder twice
adds and changes nothing, and an interrupted import resumes where it stopped.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ..errors import InvalidRequest
from ..records import MemoryRecord, NewMemory
from ..redaction import is_only_secrets, redact
from ..store import memories as memory_sql
from ..store.db import Database
from .markdown import MIRRORED_LAYERS, render_workspace, user_folder
from .markdown_parse import ParsedMemory, parse_workspace
from .memories import MemoryService
from .mirror_files import WorkspaceWrite, remove_stale_workspaces, write_workspace
from .turns import TURN_CATEGORY

log = logging.getLogger(__name__)

# The longest fact the API accepts (MemoryIn.fact); a longer paragraph is not one memory.
MAX_FACT_CHARS = 20000
SOURCE_CHANNEL = "markdown"


class Progress(Protocol):
    """What progress is reported to (a ``tqdm`` bar fits)."""

    total: Any

    def update(self, n: float = 1) -> bool | None:
        """``n`` more items done."""


@dataclass
class ExportSummary:
    """What an export did; paths are relative to the folder exported to."""

    users: int = 0
    written: list[str] = field(default_factory=list)
    unchanged: int = 0
    removed: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)  # not ours: left alone, that user not written


@dataclass(frozen=True)
class ImportSummary:
    """What an import did. ``memories`` = added + merged + skipped + too_long + secrets."""

    user_id: str
    files: list[str]
    ignored_files: list[str]
    memories: int
    added: int
    merged: int
    skipped: int
    too_long: int
    secrets: int = 0  # nothing but a secret (a password, a key): never imported


@dataclass(frozen=True)
class ImportPlan:
    """A workspace read and checked, ready to import (:meth:`MarkdownWorkspaces.plan_import`)."""

    user_id: str
    agent_id: str | None
    files: list[str]
    ignored_files: list[str]
    memories: int  # every memory the files hold
    distinct: dict[str, ParsedMemory]  # each text once, secrets masked, none too long
    repeated: int
    too_long: int
    secrets: int


class MarkdownWorkspaces:
    """Export memories as OpenClaw workspaces; import workspaces as memories.

    Args:
        db: the store.
        memories: writes imported memories (embedding, dedup); None for an export-only use.
        batch_size: memories per write transaction (and per embedding call) on import.
    """

    def __init__(self, db: Database, memories: MemoryService | None, *, batch_size: int = 64) -> None:
        self._db = db
        self._memories = memories
        self._batch_size = batch_size

    # -- export ----------------------------------------------------------------------------
    async def export(
        self,
        directory: Path,
        *,
        user_id: str | None = None,
        force: bool = False,
        progress: Progress | None = None,
    ) -> ExportSummary:
        """Write the mirror of every user (``directory/<user folder>/``), or of ``user_id`` alone
        (then ``directory`` is that user's workspace).

        Every user with live core or working memories gets a folder; folders of users who no
        longer have any lose the files the mirror wrote there. ``force``: overwrite files that the
        mirror did not write (else they are reported in ``conflicts`` and that user is skipped).
        """
        directory = Path(directory)
        if user_id is not None:
            users = [user_id]
        else:
            users = await self._db.read(lambda conn: memory_sql.users_in_layers(conn, MIRRORED_LAYERS))
        if progress is not None:
            progress.total = len(users)
        summary = ExportSummary(users=len(users))
        for user in users:
            records = await self._db.read(
                lambda conn, user=user: memory_sql.live_in_layers(conn, user, MIRRORED_LAYERS)
            )
            folder = "" if user_id is not None else user_folder(user) + "/"
            written = await asyncio.to_thread(_render_and_write, directory / folder, user, records, force)
            summary.written += [folder + path for path in written.written]
            summary.unchanged += written.unchanged
            summary.removed += [folder + path for path in written.removed]
            summary.conflicts += [folder + path for path in written.conflicts]
            if progress is not None:
                progress.update(1)
        if user_id is None:
            keep = {user_folder(user) for user in users}
            summary.removed += await asyncio.to_thread(remove_stale_workspaces, directory, keep)
        log.info(
            "markdown mirror written",
            extra={
                "users": summary.users,
                "written": len(summary.written),
                "unchanged": summary.unchanged,
                "removed": len(summary.removed),
                "conflicts": len(summary.conflicts),
            },
        )
        return summary

    # -- import ----------------------------------------------------------------------------
    async def import_files(
        self,
        user_id: str,
        files: Mapping[str, str],
        *,
        max_memories: int | None = None,
        progress: Progress | None = None,
        agent_id: str | None = None,
    ) -> ImportSummary:
        """Bring a workspace given as ``{relative path: content}`` into ``user_id``'s memories.

        Each bullet or paragraph of ``MEMORY.md`` (core) and of the dated daily logs (working)
        becomes a memory. Texts the user already has are skipped; the rest are written through
        MemoryService with dedup: a near-duplicate of a stored memory (or of another memory of the
        import) is merged into it, and the imported wording is recorded on it so the next import
        skips it. A correction imported never supersedes anything (the file already reflects it).

        Args:
            user_id: whose memories.
            files: the workspace; paths that are not memory files are listed as ignored.
            max_memories: refuse (InvalidRequest) a workspace with more distinct memories.
            progress: told the number of memories found, then each one handled.
            agent_id: the agent whose workspace it is (OpenClaw keeps one per agent): its memories
                are that agent's; None: every agent's. Imported memories are private.
        """
        plan = self.plan_import(user_id, files, max_memories=max_memories, agent_id=agent_id)
        return await self.run_import(plan, progress=progress)

    def plan_import(
        self,
        user_id: str,
        files: Mapping[str, str],
        *,
        max_memories: int | None = None,
        agent_id: str | None = None,
    ) -> ImportPlan:
        """Read and check a workspace without touching the store (CPU only: a caller may run it in
        a thread). Raises InvalidRequest for more than ``max_memories`` distinct memories, so a
        request is refused before anything is started."""
        workspace = parse_workspace(files)
        # Secrets are masked before anything else reads the texts, so that neither the store nor the
        # imported wordings recorded for the next import (below) ever hold one.
        masked = [dataclasses.replace(m, fact=redact(m.fact).text) for m in workspace.memories]
        kept = [memory for memory in masked if not is_only_secrets(memory.fact)]
        distinct, repeated, too_long = _distinct_facts(kept)
        if max_memories is not None and len(distinct) > max_memories:
            raise InvalidRequest(
                f"the workspace holds {len(distinct)} memories; at most {max_memories} per request"
                " (split it, or use python -m memory_cortex import-md)"
            )
        return ImportPlan(
            user_id=user_id,
            agent_id=agent_id,
            files=workspace.files,
            ignored_files=workspace.ignored,
            memories=len(workspace.memories),
            distinct=distinct,
            repeated=repeated,
            too_long=too_long,
            secrets=len(masked) - len(kept),
        )

    async def run_import(self, plan: ImportPlan, *, progress: Progress | None = None) -> ImportSummary:
        """Write what ``plan`` holds that the user does not have yet (see :meth:`import_files`)."""
        if self._memories is None:
            raise RuntimeError("this MarkdownWorkspaces was built without a MemoryService")
        user_id, agent_id, distinct = plan.user_id, plan.agent_id, plan.distinct
        stored = await self._db.read(lambda conn: memory_sql.imported_facts(conn, user_id, list(distinct)))
        pending = [memory for fact, memory in distinct.items() if fact not in stored]
        if progress is not None:  # everything found; what needs no write is done already
            progress.total = plan.memories
            progress.update(plan.memories - len(pending))
        added = merged = 0
        for start in range(0, len(pending), self._batch_size):
            batch = pending[start : start + self._batch_size]
            outcomes = await self._memories.create(
                [_new_memory(user_id, memory, agent_id) for memory in batch], dedup=True, supersede=False
            )
            wordings: dict[int, list[str]] = {}
            for memory, outcome in zip(batch, outcomes, strict=True):
                if outcome.action == "merged":
                    merged += 1
                else:
                    added += 1
                if outcome.record.fact != memory.fact:
                    wordings.setdefault(outcome.record.id, []).append(memory.fact)
            if wordings:
                await self._db.write(lambda conn, w=wordings: memory_sql.record_imported_wordings(conn, w))
            if progress is not None:
                progress.update(len(batch))
        summary = ImportSummary(
            user_id=user_id,
            files=plan.files,
            ignored_files=plan.ignored_files,
            memories=plan.memories,
            added=added,
            merged=merged,
            skipped=plan.repeated + len(distinct) - len(pending),
            too_long=plan.too_long,
            secrets=plan.secrets,
        )
        log.info(
            "markdown workspace imported",
            extra={
                "files": len(summary.files),
                "memories": summary.memories,
                "added": added,
                "merged": merged,
                "skipped": summary.skipped,
                "too_long": plan.too_long,
                "secrets": plan.secrets,
            },
        )
        return summary


def _distinct_facts(memories: Sequence[ParsedMemory]) -> tuple[dict[str, ParsedMemory], int, int]:
    """``({fact: memory}, repeated, too_long)``: a text said twice in the workspace is one memory
    (its first place, dated by its earliest date)."""
    distinct: dict[str, ParsedMemory] = {}
    repeated = too_long = 0
    for memory in memories:
        if len(memory.fact) > MAX_FACT_CHARS:
            too_long += 1
            continue
        earlier = distinct.get(memory.fact)
        if earlier is None:
            distinct[memory.fact] = memory
            continue
        repeated += 1
        if memory.created_at is not None and (
            earlier.created_at is None or memory.created_at < earlier.created_at
        ):
            distinct[memory.fact] = dataclasses.replace(earlier, created_at=memory.created_at)
    return distinct, repeated, too_long


def _new_memory(user_id: str, memory: ParsedMemory, agent_id: str | None = None) -> NewMemory:
    """A parsed memory as a row; the lines under a "Conversation" heading (the mirror's turns) come
    back as turns, said on their day, so they are searched, aged and never merged as turns are."""
    turn = memory.category == TURN_CATEGORY
    return NewMemory(
        user_id=user_id,
        fact=memory.fact,
        topic=memory.topic,
        importance=memory.importance,
        category=memory.category,
        source_channel=SOURCE_CHANNEL,
        agent_id=agent_id,
        ref=memory.ref,
        metadata={"markdown": {"file": memory.file, "line": memory.line, "heading": memory.heading}},
        created_at=memory.created_at,
        layer="working" if turn else memory.layer,
        occurred_at=memory.created_at if turn else None,
        kind="turn" if turn else "fact",
    )


def _render_and_write(target: Path, user_id: str, records: list[MemoryRecord], force: bool) -> WorkspaceWrite:
    """Both off the event loop: rendering a large user takes a while too."""
    return write_workspace(target, render_workspace(user_id, records), force=force)

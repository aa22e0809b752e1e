"""Markdown workspaces: the mirror on disk (export), workspaces brought in (import), the auto-sync.

The format is :mod:`middleware.services.markdown`; this module moves it between the store and the
file system (or an HTTP body), and keeps a configured folder in step in the background.

Export writes each file atomically (a temporary file beside it, fsynced, then ``os.replace``), and
only when its bytes change, so an unchanged file keeps its mtime and a reader never sees half a
file. It only ever overwrites or deletes files that carry the mirror's header comment: a
hand-written ``MEMORY.md`` in the way is reported as a conflict (``--force`` overwrites it).

Import goes through :class:`~middleware.services.memories.MemoryService`, in batches: each memory
is embedded and deduplicated like any other write. A text this user already has (as any memory's
text, or as an imported wording merged into one) is skipped; so importing the same folder twice
adds and changes nothing, and an interrupted import resumes where it stopped.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import os
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ..config import MarkdownConfig
from ..errors import InvalidRequest
from ..records import MemoryRecord, NewMemory
from ..redaction import is_only_secrets, redact
from ..store import memories as memory_sql
from ..store.db import Database
from ..store.files import make_private_dir
from .markdown import (
    DAILY_DIR,
    MEMORY_FILE,
    MIRRORED_LAYERS,
    ParsedMemory,
    is_mirror_file,
    mirror_user,
    parse_workspace,
    render_workspace,
    user_folder,
    user_from_folder,
)
from .memories import MemoryService
from .turns import TURN_CATEGORY
from .workers import join_or_cancel

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
        """
        if self._memories is None:
            raise RuntimeError("this MarkdownWorkspaces was built without a MemoryService")
        workspace = parse_workspace(files)
        # Secrets are masked before anything else reads the texts, so that neither the store nor the
        # imported wordings recorded for the next import (below) ever hold one.
        masked = [dataclasses.replace(m, fact=redact(m.fact).text) for m in workspace.memories]
        kept = [memory for memory in masked if not is_only_secrets(memory.fact)]
        secrets = len(masked) - len(kept)
        distinct, repeated, too_long = _distinct_facts(kept)
        if max_memories is not None and len(distinct) > max_memories:
            raise InvalidRequest(
                f"the workspace holds {len(distinct)} memories; at most {max_memories} per request"
                " (split it, or use python -m middleware import-md)"
            )
        stored = await self._db.read(lambda conn: memory_sql.imported_facts(conn, user_id, list(distinct)))
        pending = [memory for fact, memory in distinct.items() if fact not in stored]
        if progress is not None:  # everything found; what needs no write is done already
            progress.total = len(workspace.memories)
            progress.update(len(workspace.memories) - len(pending))
        added = merged = 0
        for start in range(0, len(pending), self._batch_size):
            batch = pending[start : start + self._batch_size]
            outcomes = await self._memories.create(
                [_new_memory(user_id, memory) for memory in batch], dedup=True, supersede=False
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
            files=workspace.files,
            ignored_files=workspace.ignored,
            memories=len(workspace.memories),
            added=added,
            merged=merged,
            skipped=repeated + len(distinct) - len(pending),
            too_long=too_long,
            secrets=secrets,
        )
        log.info(
            "markdown workspace imported",
            extra={
                "files": len(summary.files),
                "memories": summary.memories,
                "added": added,
                "merged": merged,
                "skipped": summary.skipped,
                "too_long": too_long,
                "secrets": secrets,
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


def _new_memory(user_id: str, memory: ParsedMemory) -> NewMemory:
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
        ref=memory.ref,
        metadata={"markdown": {"file": memory.file, "line": memory.line, "heading": memory.heading}},
        created_at=memory.created_at,
        layer="working" if turn else memory.layer,
        occurred_at=memory.created_at if turn else None,
        kind="turn" if turn else "fact",
    )


# -- files ----------------------------------------------------------------------------------
def _render_and_write(target: Path, user_id: str, records: list[MemoryRecord], force: bool) -> WorkspaceWrite:
    """Both off the event loop: rendering a large user takes a while too."""
    return write_workspace(target, render_workspace(user_id, records), force=force)


@dataclass
class WorkspaceWrite:
    """What :func:`write_workspace` did, paths relative to the workspace."""

    written: list[str] = field(default_factory=list)
    unchanged: int = 0
    removed: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)


def write_workspace(target: Path, files: Mapping[str, str], *, force: bool = False) -> WorkspaceWrite:
    """Make ``target`` hold ``files`` (``{relative path: content}``).

    A file whose bytes are already right is not touched. Daily logs the mirror wrote earlier that
    are not in ``files`` any more are removed. A file in the way that the mirror did not write
    is a conflict: unless ``force``, nothing is written for this workspace then.
    """
    result = WorkspaceWrite()
    changes: list[tuple[Path, bytes]] = []
    for relative, content in files.items():
        path = target / relative
        data = content.encode("utf-8")
        current = _read_bytes(path)
        if current == data:
            result.unchanged += 1
            continue
        if current is not None and not force and not is_mirror_file(current.decode("utf-8", "replace")):
            result.conflicts.append(relative)
            continue
        changes.append((path, data))
    if result.conflicts:
        return result
    stale = [
        path
        for path in _daily_files(target / DAILY_DIR)
        if f"{DAILY_DIR}/{path.name}" not in files and _is_mirror_path(path)
    ]
    for path, data in changes:
        write_atomically(path, data)
        result.written.append(path.relative_to(target).as_posix())
    for path in stale:
        path.unlink(missing_ok=True)
        result.removed.append(path.relative_to(target).as_posix())
    for folder in {path.parent for path, _ in changes} | {path.parent for path in stale}:
        _fsync_directory(folder)
    return result


def remove_stale_workspaces(directory: Path, keep: set[str]) -> list[str]:
    """In a mirror of every user, empty the folders of users who are gone (no live core or
    working memory): the files the mirror wrote there are removed, then the folder if empty."""
    removed: list[str] = []
    if not directory.is_dir():
        return removed
    for child in sorted(directory.iterdir()):
        if child.name in keep or not child.is_dir() or not _is_mirror_path(child / MEMORY_FILE):
            continue
        for path in [child / MEMORY_FILE, *_daily_files(child / DAILY_DIR)]:
            if _is_mirror_path(path):
                path.unlink(missing_ok=True)
                removed.append(path.relative_to(directory).as_posix())
        for folder in (child / DAILY_DIR, child):
            with contextlib.suppress(OSError):  # not empty (someone else's files): it stays
                folder.rmdir()
    return removed


def write_atomically(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so that a reader sees the old file or the new one, never a part:
    a temporary file in the same folder (mode 0600, like every export), fsynced, renamed over it."""
    make_private_dir(path.parent)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _fsync_directory(folder: Path) -> None:
    """Make the renames in ``folder`` durable (a no-op where directories cannot be opened)."""
    with contextlib.suppress(OSError):
        descriptor = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)


def _read_bytes(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def _is_mirror_path(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            return is_mirror_file(handle.read(4096).decode("utf-8", "replace"))
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return False


def _daily_files(folder: Path) -> list[Path]:
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.suffix == ".md" and p.is_file())


def is_workspace(folder: Path) -> bool:
    """True when ``folder`` looks like an OpenClaw workspace (a MEMORY.md or a memory/ folder)."""
    return (
        any((folder / name).is_file() for name in (MEMORY_FILE, "memory.md")) or (folder / DAILY_DIR).is_dir()
    )


def read_workspace(folder: Path) -> dict[str, str]:
    """The candidate memory files of a workspace folder as ``{relative path: text}``: ``MEMORY.md``
    (or ``memory.md``) and the ``.md`` files directly inside ``memory/``. UTF-8 (a BOM is fine)."""
    names = [entry.name for entry in folder.iterdir() if entry.name in (MEMORY_FILE, "memory.md")]
    paths = [folder / name for name in sorted(names)] + _daily_files(folder / DAILY_DIR)
    root = folder.resolve()
    files: dict[str, str] = {}
    for path in paths:
        relative = path.relative_to(folder).as_posix()
        if not path.resolve().is_relative_to(root):
            # A link out of the workspace (to ~/.ssh, /etc…) is not the workspace's to import.
            log.warning("skipped a link leaving the workspace", extra={"path": str(path)})
            continue
        try:
            files[relative] = path.read_text(encoding="utf-8-sig")
        except UnicodeDecodeError as exc:
            raise InvalidRequest(f"{path}: not UTF-8 text ({exc.reason})") from exc
    return files


def find_workspaces(directory: Path, user_id: str | None, default_user_id: str) -> list[tuple[str, Path]]:
    """``(user, folder)`` of each workspace to import from ``directory``.

    With ``user_id``, ``directory`` is that user's workspace. Without it: when ``directory`` is a
    workspace itself, it belongs to the user named in its mirror header (a folder export-md wrote),
    else to ``default_user_id``; otherwise each sub-folder that is a workspace is one user's, named
    by its header, else by its folder name (decoded as export-md encodes it).
    """
    if not directory.is_dir():
        raise InvalidRequest(f"{directory} is not a folder")
    if user_id is not None:
        return [(user_id, directory)]
    if is_workspace(directory):
        return [(_header_user(directory) or default_user_id, directory)]
    found = [
        (_header_user(child) or user_from_folder(child.name), child)
        for child in sorted(directory.iterdir())
        if child.is_dir() and is_workspace(child)
    ]
    if not found:
        raise InvalidRequest(f"{directory} holds no MEMORY.md or memory/ folder, nor sub-folders with them")
    return found


def _header_user(folder: Path) -> str | None:
    for path in [folder / MEMORY_FILE, *_daily_files(folder / DAILY_DIR)[:1]]:
        with contextlib.suppress(OSError):
            with path.open("rb") as handle:
                user = mirror_user(handle.read(4096).decode("utf-8", "replace"))
            if user is not None:
                return user
    return None


# -- the auto-sync worker -------------------------------------------------------------------
class MarkdownSync:
    """Keeps ``markdown.sync_dir`` in step with the store, in the background.

    The worker writes the mirror when it starts. Then ``request_sync()`` (after an ingest batch is
    stored, after a lifecycle run, after an import) only sets a flag; the worker rewrites the
    mirror once no request has come for
    ``sync_debounce_s`` (at most ``10 × sync_debounce_s`` after the first one), so a burst of
    writes costs one export. Worker recipe: a wake event, a stop flag, catch-and-log per sync
    (it never dies), a last sync of pending requests on stop, a timed join. With no
    ``sync_dir`` it does nothing at all.

    Args:
        workspaces: does the export.
        config: ``sync_dir`` and ``sync_debounce_s``.
    """

    MAX_DELAY_FACTOR = 10

    def __init__(
        self,
        workspaces: MarkdownWorkspaces,
        config: MarkdownConfig,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._workspaces = workspaces
        self._directory = config.sync_dir
        self._debounce_s = config.sync_debounce_s
        self._clock = clock
        self._pending = False
        self._wake = asyncio.Event()
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.syncs = 0
        self.last_error: str | None = None
        self.last_summary: ExportSummary | None = None

    @property
    def enabled(self) -> bool:
        return self._directory is not None

    @property
    def pending(self) -> bool:
        """A rewrite was asked for and waits for its debounce (or is under way)."""
        return self._pending

    def request_sync(self) -> None:
        """Ask for the mirror to be rewritten soon. Cheap; call it from the event loop."""
        if not self.enabled:
            return
        self._pending = True
        self._wake.set()

    async def start(self) -> None:
        """Start the worker; its first act is to bring the mirror up to date (no debounce: what
        changed while the daemon was down, or an API edit since, shows up at once)."""
        if not self.enabled:
            return
        self._task = asyncio.create_task(self._run(), name="markdown-sync")

    async def stop(self, timeout: float = 10.0) -> None:
        """Write what is pending (without waiting out the debounce), then stop; after ``timeout``
        the worker is cancelled (the next start writes the mirror again anyway)."""
        self._stop.set()
        self._wake.set()
        if self._task is None:
            return
        if not await join_or_cancel(self._task, timeout):
            log.warning("markdown sync stopped before it finished; the next start rewrites the mirror")

    async def _run(self) -> None:
        await self._sync()
        while True:
            await self._wake.wait()
            self._wake.clear()
            if self._pending and not self._stop.is_set():
                await self._quiet_period()
            if self._pending:
                self._pending = False
                await self._sync()
            if self._stop.is_set() and not self._pending:
                return

    async def _quiet_period(self) -> None:
        """Wait until no request came for ``sync_debounce_s`` (bounded; a stop ends it at once)."""
        deadline = self._clock() + self._debounce_s * self.MAX_DELAY_FACTOR
        while not self._stop.is_set():
            timeout = min(self._debounce_s, deadline - self._clock())
            if timeout <= 0:
                return
            try:
                await asyncio.wait_for(self._wake.wait(), timeout)
            except TimeoutError:
                return
            self._wake.clear()

    async def _sync(self) -> None:
        assert self._directory is not None
        try:
            summary = await self._workspaces.export(self._directory)
        except Exception as exc:  # never let the worker die: log, and try again at the next request
            self.last_error = f"{type(exc).__name__}: {exc}"[:500]
            log.exception("markdown sync failed", extra={"dir": str(self._directory)})
            return
        self.syncs += 1
        self.last_error = None
        self.last_summary = summary
        if summary.conflicts:
            log.warning(
                "markdown sync left files it did not write alone (and their users' mirrors)",
                extra={"dir": str(self._directory), "files": summary.conflicts[:20]},
            )

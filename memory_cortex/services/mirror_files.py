"""The mirror's files on disk: written atomically and only when changed, only over files the mirror
itself wrote, stale user folders removed, workspaces found and read back."""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InvalidRequest
from ..store.files import write_atomically
from .markdown import (
    DAILY_DIR,
    MEMORY_FILE,
    is_mirror_file,
    mirror_user,
    user_from_folder,
)

log = logging.getLogger(__name__)


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

"""The files ``openclaw connect`` touches: the plugin's copy, OpenClaw's config file and the copy of
it kept for the undo. Every write replaces a file whole (a temporary file renamed over it), so an
interrupted run leaves the old file or the new one, never half of each.
"""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

from ..store.files import write_atomically
from .installation import OpenClawProblem

# Written into the plugin's copy: a folder without it is not ours to replace.
COPY_MARKER = ".memory-cortex-plugin-copy"


def deploy_plugin(source: Path, target: Path) -> Path:
    """Make ``target`` a copy of the plugin in ``source``: the files its package.json publishes
    (``files``) and package.json itself, replacing an older copy whole.

    Raises:
        OpenClawProblem: ``target`` holds something else (never deleted), or the copy failed.
    """
    if target.exists() and any(target.iterdir()) and not (target / COPY_MARKER).is_file():
        raise OpenClawProblem(
            f"{target} is not empty and not a plugin copy this command made: nothing was changed;"
            " name an empty or new folder with --install-dir"
        )
    try:
        package = json.loads((source / "package.json").read_text(encoding="utf-8"))
        staging = target.with_name(target.name + ".new")
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir(parents=True)
        for name in [*package.get("files", []), "package.json"]:
            path = source / name.rstrip("/")
            if path.is_dir():
                shutil.copytree(path, staging / name.rstrip("/"))
            elif path.is_file():
                (staging / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(path, staging / name)
        (staging / COPY_MARKER).write_text(f"a copy of {source}, made by memory-cortex openclaw connect\n")
        shutil.rmtree(target, ignore_errors=True)
        staging.rename(target)
    except (OSError, ValueError) as exc:
        raise OpenClawProblem(f"copying the plugin from {source} to {target} failed: {exc}") from exc
    return target


def read_text(path: Path) -> str:
    """The file's text exactly, line endings included ("" when it does not exist)."""
    return path.read_bytes().decode("utf-8") if path.exists() else ""


def keep_copy(path: Path) -> Path:
    """A copy of ``path`` beside it, named by the time to the microsecond, never over another."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    copy = path.with_name(f"{path.name}.before-memory-cortex-{stamp}")
    with path.open("rb") as source, copy.open("xb") as out:
        shutil.copyfileobj(source, out)
    shutil.copystat(path, copy)
    return copy


def write_text(path: Path, text: str, *, private: bool) -> None:
    """Replace ``path`` with ``text`` at once, line endings as given, keeping its permissions (0600
    for a new file); ``private`` makes it readable by its owner only."""
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o600
    write_atomically(path, text.encode("utf-8"), mode & 0o600 if private else mode)


def put_back(path: Path, text: str, *, existed: bool) -> None:
    """``path`` as it was before: ``text`` again, or no file when there was none."""
    if existed:
        write_text(path, text, private=False)
    else:
        path.unlink(missing_ok=True)

"""Files and folders that hold memories are the user's alone: 0600 and 0700 whatever the umask.

The daemon is often started from a shell (``scripts/start.sh``) whose umask is 022, which would leave
the database, its WAL and the Markdown mirror readable by every account on the machine. SQLite gives
its ``-wal`` and ``-shm`` files the mode of the database file, so making that one private first is
enough for all three.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

PRIVATE_FILE = 0o600
PRIVATE_DIR = 0o700


def make_private_dir(folder: Path) -> None:
    """Create ``folder`` and any missing parents as 0700; an existing folder is left as it is (it
    may be the user's home or a folder they share on purpose)."""
    missing: list[Path] = []
    candidate = folder
    while not candidate.exists() and candidate != candidate.parent:
        missing.append(candidate)
        candidate = candidate.parent
    folder.mkdir(parents=True, exist_ok=True)
    for created in missing:
        with contextlib.suppress(OSError):
            os.chmod(created, PRIVATE_DIR)


def make_private_file(path: Path, *companions: str) -> None:
    """Create ``path`` empty if missing, and make it and its existing ``companions`` (suffixes such
    as ``-wal``) 0600, so files an older version left readable are tightened too."""
    make_private_dir(path.parent)
    if not path.exists():
        # Only a file that does not exist yet is opened here: closing any descriptor of a database
        # file drops the POSIX locks SQLite holds on it through other connections of this process.
        with contextlib.suppress(FileExistsError):
            os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, PRIVATE_FILE))
    for file in (path, *(path.with_name(path.name + suffix) for suffix in companions)):
        with contextlib.suppress(FileNotFoundError):
            os.chmod(file, PRIVATE_FILE)


@contextmanager
def atomic_file(
    path: Path, open_mode: str = "wb", *, mode: int = PRIVATE_FILE, **text: Any
) -> Iterator[IO[Any]]:
    """A file to write ``path``'s new content into; a reader sees the old file or the whole new one,
    never a part. It is a temporary file in the same folder (``mode``, 0600 unless told: like every
    export), fsynced and renamed over ``path`` when the block ends, removed when it raises. A
    missing folder is made private (:func:`make_private_dir`). ``text`` goes to :func:`os.fdopen`
    (``encoding``, ``newline``) for ``open_mode`` ``"w"``."""
    make_private_dir(path.parent)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".partial")
    try:
        os.fchmod(handle, mode)
        with os.fdopen(handle, open_mode, **text) as out:
            yield out
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def write_atomically(path: Path, data: bytes, mode: int = PRIVATE_FILE) -> None:
    """Replace ``path`` with ``data`` at once (:func:`atomic_file`)."""
    with atomic_file(path, mode=mode) as out:
        out.write(data)

"""The Markdown verbs ``export-md`` and ``import-md`` of ``python -m memory_cortex``.

Thin over :mod:`memory_cortex.services.mirror`: parse the flags, open the store (and, to import, the
embedder and the vector index, as the daemon does), call the service, print one summary line per
user. Errors become one ``memory-cortex VERB: error: …`` line and exit status 1 (see
:func:`memory_cortex.cli_portability.guarded`); progress bars go to stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from .cli_portability import guarded

if TYPE_CHECKING:
    from .config import Config
    from .services.mirror import ExportSummary, MarkdownWorkspaces

EXPORT_MD_HELP = """\
Write memories as OpenClaw workspaces, the layout OpenClaw agents read:

  DIR/<user>/MEMORY.md              core memories, one bullet each, under a heading per category
                                    (Profile, Preferences, Decisions, Relationships, Corrections,
                                    Facts, ..., History summaries), each ending with its date
  DIR/<user>/memory/YYYY-MM-DD.md   working memories of that (UTC) day, by category

With --user, DIR itself is that user's workspace. <user> is the user id when it is lower-case
letters, digits, '.', '_', '-'; any other id is percent-encoded plus '~' and a short hash (so two
ids never share a folder, even on a case-insensitive disk). Archived and superseded memories are
not in the mirror.

Files are written atomically (a temporary file, then a rename), in a stable order, and only when
their content changed. Only files the mirror wrote (they carry its header comment) are overwritten
or removed: a hand-written MEMORY.md in the way is reported and that user skipped, unless --force.
Safe while the daemon runs (markdown.sync_dir makes the daemon keep a folder in step by itself)."""

IMPORT_MD_HELP = """\
Read OpenClaw workspaces into memories: MEMORY.md (or memory.md) gives core memories, the daily
logs memory/YYYY-MM-DD.md and memory/YYYY-MM-DD-<slug>.md give working memories. Each bullet (-,
*, +, 1.) with its indented lines, and each paragraph, is one memory. Headings give the category
(Profile, Preferences, Decisions, People, Corrections, ...; any other heading becomes the topic);
dates come from the file name, from dated headings (## 2026-01-05), '## HH:MM' headings and a
trailing (YYYY-MM-DD). Times are taken as UTC.

Which user: with --user, DIR is that user's workspace. Without it, DIR is one workspace (of the
user named in its header when export-md wrote it, else users.default_user_id), or, when DIR holds
no MEMORY.md or memory/, each sub-folder that does is one user's (named as export-md names them).

Every memory is embedded and deduplicated like any write: a text the user already has is skipped,
a near-duplicate of a stored memory is merged into it; so importing the same folder twice adds
nothing, and an interrupted import goes on where it stopped when run again. Corrections are
stored as such but hide nothing (the files already reflect them). Safe while the daemon runs
(it picks up the new vectors within database.external_write_check_s)."""


def add_markdown_commands(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    add_database_flags: Callable[[argparse.ArgumentParser], None],
) -> None:
    """Register ``export-md`` and ``import-md`` (each with ``--config``/``--db``)."""
    formatter = argparse.RawDescriptionHelpFormatter

    export = commands.add_parser(
        "export-md",
        help="write memories as OpenClaw Markdown (MEMORY.md + memory/YYYY-MM-DD.md)",
        description=EXPORT_MD_HELP,
        formatter_class=formatter,
    )
    export.add_argument("dir", type=Path, help="folder to write (one sub-folder per user)")
    export.add_argument("--user", help="only this user; DIR is then that user's workspace")
    export.add_argument("--force", action="store_true", help="overwrite files the mirror did not write")
    add_database_flags(export)
    export.set_defaults(run=guarded("export-md", run_export_md))

    import_ = commands.add_parser(
        "import-md",
        help="read OpenClaw Markdown workspaces into memories",
        description=IMPORT_MD_HELP,
        formatter_class=formatter,
    )
    import_.add_argument("dir", type=Path, help="a workspace, or a folder of per-user workspaces")
    import_.add_argument("--user", help="DIR is this user's workspace")
    import_.add_argument("--agent", help="the OpenClaw agent whose workspace it is (default: every agent's)")
    import_.add_argument(
        "--batch-size", type=int, default=64, help="memories per embedding and transaction (default 64)"
    )
    add_database_flags(import_)
    import_.set_defaults(run=guarded("import-md", run_import_md))


def run_export_md(config: Config, args: argparse.Namespace) -> int:
    from tqdm import tqdm

    _require_database(config)

    async def run() -> ExportSummary:
        async with _workspaces(config, importing=False) as markdown:
            with tqdm(unit="user", desc="exporting", file=sys.stderr) as bar:
                return await markdown.export(args.dir, user_id=args.user, force=args.force, progress=bar)

    summary = asyncio.run(run())
    print(
        f"export-md: {summary.users} users, {len(summary.written)} files written,"
        f" {summary.unchanged} unchanged, {len(summary.removed)} removed -> {args.dir}"
    )
    if not summary.conflicts:
        return 0
    shown = ", ".join(summary.conflicts[:5]) + (" ..." if len(summary.conflicts) > 5 else "")
    print(
        f"memory-cortex export-md: error: {len(summary.conflicts)} files in the way were not written"
        f" by memory-cortex; they and the rest of their user's mirror were left alone: {shown}"
        " (use --force to overwrite them)",
        file=sys.stderr,
    )
    return 1


def run_import_md(config: Config, args: argparse.Namespace) -> int:
    if args.batch_size < 1:
        print("memory-cortex import-md: error: --batch-size must be at least 1", file=sys.stderr)
        return 2
    from tqdm import tqdm

    from .services.mirror_files import find_workspaces, read_workspace

    workspaces = [
        (user, folder, read_workspace(folder))
        for user, folder in find_workspaces(args.dir, args.user, config.users.default_user_id)
    ]

    async def run() -> None:
        async with _workspaces(config, importing=True, batch_size=args.batch_size) as markdown:
            for user, folder, files in workspaces:
                with tqdm(unit="memory", desc=f"importing {user}", file=sys.stderr) as bar:
                    summary = await markdown.import_files(user, files, progress=bar, agent_id=args.agent)
                ignored = f"; ignored: {', '.join(summary.ignored_files)}" if summary.ignored_files else ""
                too_long = f", {summary.too_long} too long" if summary.too_long else ""
                secrets = f", {summary.secrets} only a secret (not imported)" if summary.secrets else ""
                print(
                    f"import-md: {user}: {summary.added} added, {summary.merged} merged,"
                    f" {summary.skipped} skipped{too_long}{secrets} ({len(summary.files)} files{ignored})"
                    f" <- {folder}"
                )

    asyncio.run(run())
    return 0


def _require_database(config: Config) -> None:
    from .errors import CortexError

    if not Path(config.database.path).exists():
        raise CortexError(f"no database at {config.database.path} (see --db / database.path)")


@asynccontextmanager
async def _workspaces(
    config: Config, *, importing: bool, batch_size: int = 64
) -> AsyncIterator[MarkdownWorkspaces]:
    """The service over the database, opened as the daemon opens it; to import, with a memory
    service too (the embedder and the vector index: dedup needs the live vectors). Closed in reverse."""
    from .runtime import memory_service_over, opened_database
    from .services.mirror import MarkdownWorkspaces

    async with opened_database(config) as db:
        if not importing:
            yield MarkdownWorkspaces(db, None)
            return
        async with memory_service_over(config, db) as memories:
            yield MarkdownWorkspaces(db, memories, batch_size=batch_size)

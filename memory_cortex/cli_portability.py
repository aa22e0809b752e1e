"""The maintenance verbs ``backup``, ``export`` and ``import`` of ``python -m memory_cortex``.

Each verb parses its flags, calls one function of :mod:`memory_cortex.services.portability`, and prints
one summary line; errors of the services (and of SQLite, PostgreSQL and the file system, mapped here,
at the edge, by :func:`guarded`) become one ``memory-cortex VERB: error: …`` line on stderr and exit
status 1 (130 after Ctrl-C). Progress bars go to stderr, so ``export -`` can write the data to stdout. Heavy imports happen inside the verbs:
``python -m memory_cortex --help`` and ``serve`` do not pay for them.

``export`` and ``import`` work on the configured store, SQLite or PostgreSQL (``database.backend``);
``backup`` copies a SQLite file and refuses PostgreSQL (pg_dump, or ``migrate-store`` to a file).
"""

from __future__ import annotations

import argparse
import asyncio
import io
import sqlite3
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from .config import Config

BACKUP_HELP = """\
Copy the database with SQLite's online backup API. Safe while the daemon runs: the copy is one
consistent snapshot, written beside PATH, switched to a standalone file (no -wal needed), checked
with PRAGMA integrity_check and only then renamed to PATH. Restore: stop the daemon and put the copy
in place of database.path (or point --db at it). SQLite only: with database.backend postgres, use
pg_dump, or copy the store into a SQLite file with migrate-store."""

EXPORT_HELP = """\
Write memories as JSON Lines: a header line {"format": "memory-cortex-export", "version": 1,
"count": N, ...}, then one memory per line with every column (metadata as a JSON object, the
embedding as base64 of little-endian float32, or null). One read snapshot, streamed; safe while the
daemon runs. Only memories: the ingest journal and session watermarks stay behind (use backup for
everything). Works on either database.backend (PostgreSQL: one REPEATABLE READ transaction)."""

IMPORT_HELP = """\
Read an export into the database (created and migrated if missing; a PostgreSQL database must exist
and is migrated), in ONE transaction: a bad line (reported with its line number and field) or a
truncated file imports nothing.

Into an empty database every memory keeps its id and every value (exact round trip). A non-empty
database is refused unless --merge: then memories get new ids, superseded_by links are remapped to
them, and a memory whose (user_id, fact) is already stored is skipped, so importing a file twice
adds nothing the second time.

Embeddings are kept as they are in the file. Memories without one, or with one of another model
than the configured embeddings.model (with embeddings.quantize), are unused by vector search until embedded: --reembed does it
right after the import (in short transactions, like scripts/backfill-embeddings.py, which can also
do it later, or finish it after an interruption).

The import holds the database's write lock while it runs; a running daemon's writes wait up to
database.busy_timeout_ms meanwhile, so stop the daemon for large files."""


def add_portability_commands(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    add_database_flags: Callable[[argparse.ArgumentParser], None],
) -> None:
    """Register ``backup``, ``export`` and ``import`` (each with ``--config``/``--db``)."""
    formatter = argparse.RawDescriptionHelpFormatter

    backup = commands.add_parser(
        "backup",
        help="consistent online copy of the database",
        description=BACKUP_HELP,
        formatter_class=formatter,
    )
    backup.add_argument("path", type=Path, help="the copy to create")
    backup.add_argument("--force", action="store_true", help="overwrite PATH if it exists")
    add_database_flags(backup)
    backup.set_defaults(run=guarded("backup", run_backup))

    export = commands.add_parser(
        "export", help="write memories as JSON Lines", description=EXPORT_HELP, formatter_class=formatter
    )
    export.add_argument("path", help="file to write, or - for stdout")
    export.add_argument("--user", help="only this user's memories")
    export.add_argument(
        "--no-embeddings", action="store_true", help="leave vectors out (smaller; re-embed on import)"
    )
    export.add_argument("--force", action="store_true", help="overwrite PATH if it exists")
    add_database_flags(export)
    export.set_defaults(run=guarded("export", run_export))

    import_ = commands.add_parser(
        "import",
        help="read a JSON Lines export into the database",
        description=IMPORT_HELP,
        formatter_class=formatter,
    )
    import_.add_argument("path", help="export file to read, or - for stdin")
    import_.add_argument(
        "--merge",
        action="store_true",
        help="allow a non-empty database: new ids, rows with a stored (user_id, fact) skipped",
    )
    import_.add_argument(
        "--reembed",
        action="store_true",
        help="after importing, embed rows without a vector of the configured model (else kept as is)",
    )
    import_.add_argument(
        "--batch-size", type=int, default=64, help="memories per embedding transaction (default 64)"
    )
    add_database_flags(import_)
    import_.set_defaults(run=guarded("import", run_import))


# -- the verbs ------------------------------------------------------------------------------
def run_backup(config: Config, args: argparse.Namespace) -> int:
    from .services import portability
    from .store.portability import location, store_address

    if config.database.backend == "postgres":
        # A file copy of a server makes no sense; say what does, before touching any file.
        raise portability.PortabilityError(
            "database.backend is postgres: back it up with pg_dump, or copy it into a SQLite file with"
            f" memory-cortex migrate-store --from {location(store_address(config.database))} --to sqlite:PATH"
        )
    result = portability.backup_database(
        config.database.path, args.path, force=args.force, busy_timeout_ms=config.database.busy_timeout_ms
    )
    print(
        f"backup: {result.memories} memories, {result.bytes} bytes in {result.seconds:.2f} s"
        f" -> {result.path} (integrity_check ok)"
    )
    return 0


def run_export(config: Config, args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from .services import portability
    from .store.portability import store_address

    to_stdout = args.path == "-"
    with _output(args.path, force=args.force) as out, tqdm(unit="memory", desc="exporting") as bar:
        result = portability.export_memories(
            store_address(config.database),
            out,
            user_id=args.user,
            embeddings=not args.no_embeddings,
            busy_timeout_ms=config.database.busy_timeout_ms,
            progress=bar,
        )
    scope = f" of user {args.user!r}" if args.user else ""
    vectors = "without" if args.no_embeddings else "with"
    # With the data on stdout, the summary goes to stderr.
    print(
        f"export: {result.memories} memories{scope} {vectors} embeddings -> {'stdout' if to_stdout else args.path}",
        file=sys.stderr if to_stdout else sys.stdout,
    )
    return 0


def run_import(config: Config, args: argparse.Namespace) -> int:
    if args.batch_size < 1:
        print("memory-cortex import: error: --batch-size must be at least 1", file=sys.stderr)
        return 2
    from tqdm import tqdm

    from .services import portability
    from .store.portability import location, store_address

    model = config.embeddings.recorded_model
    with _input(args.path) as lines, tqdm(unit="memory", desc="importing") as bar:
        result = portability.import_memories(
            store_address(config.database),
            lines,
            model=model,
            merge=args.merge,
            busy_timeout_ms=config.database.busy_timeout_ms,
            progress=bar,
        )
    reembedded = 0
    if args.reembed and result.needing_embedding:
        try:
            reembedded = _reembed(config, result.needing_embedding, args.batch_size)
        except KeyboardInterrupt:
            print(
                "\nmemory-cortex import: the memories are imported; embedding was interrupted."
                " The daemon finishes it in the background (embeddings.reembed), or run"
                " scripts/backfill-embeddings.py.",
                file=sys.stderr,
            )
            return 130
    ids = "same ids" if result.kept_ids else "new ids"
    print(
        f"import: {result.added} added ({ids}), {result.skipped} skipped as already stored,"
        f" {reembedded} re-embedded -> {location(store_address(config.database))}"
    )
    left = len(result.needing_embedding) - reembedded
    if left:
        print(
            f"import: {left} memories have no {model} embedding yet (search finds them by text);"
            " the daemon embeds them in the background (embeddings.reembed), or run"
            " scripts/backfill-embeddings.py, or import with --reembed"
        )
    return 0


def _reembed(config: Config, memory_ids: list[int], batch_size: int) -> int:
    """Embed the imported rows with the configured embedder; returns how many were stored."""
    from tqdm import tqdm

    from .runtime import started_embedder
    from .services import portability
    from .store.portability import store_address

    async def run() -> int:
        async with started_embedder(config) as embedder:
            with tqdm(unit="memory", desc="embedding") as bar:
                return await portability.reembed_memories(
                    store_address(config.database),
                    memory_ids,
                    embedder,
                    batch_size=batch_size,
                    busy_timeout_ms=config.database.busy_timeout_ms,
                    progress=bar,
                )

    return asyncio.run(run())


# -- edges ----------------------------------------------------------------------------------
Verb = Callable[["Config", argparse.Namespace], int]

INTERRUPTED = {
    "backup": "no copy was made",
    "export": "no file was written",
    "import": "nothing was imported",
    "export-md": "the files already written are complete, the others untouched",
    "import-md": "what was imported so far is stored; run it again to import the rest",
}


def guarded(verb: str, run: Verb) -> Verb:
    """``run`` with our errors, SQLite's, PostgreSQL's and the file system's mapped to one stderr line
    and status 1 (a password of the configured URL never shows)."""
    from .errors import CortexError
    from .store.portability import TargetExists

    def guarded_run(config: Config, args: argparse.Namespace) -> int:
        prefix = f"memory-cortex {verb}:"
        try:
            return run(config, args)
        except TargetExists as exc:
            print(f"{prefix} error: {exc.message} (use --force to overwrite it)", file=sys.stderr)
        except CortexError as exc:
            print(f"{prefix} error: {exc.message}", file=sys.stderr)
        except sqlite3.Error as exc:
            print(f"{prefix} database error: {exc}", file=sys.stderr)
        except UnicodeDecodeError as exc:
            print(f"{prefix} error: the input is not UTF-8 text ({exc.reason})", file=sys.stderr)
        except OSError as exc:
            print(f"{prefix} error: {exc}", file=sys.stderr)
        except Exception as exc:
            if not type(exc).__module__.startswith("psycopg"):  # psycopg is optional: never imported here
                raise
            print(f"{prefix} database error: {_postgres_message(exc, config)}", file=sys.stderr)
        except KeyboardInterrupt:
            print(f"\n{prefix} interrupted; {INTERRUPTED[verb]}", file=sys.stderr)
            return 130
        return 1

    return guarded_run


def _postgres_message(exc: Exception, config: Config) -> str:
    """The first line of a psycopg error (its DETAIL/HINT lines follow), the URL's password masked."""
    text = str(exc).strip()
    line = text.splitlines()[0] if text else type(exc).__name__
    if config.database.url is not None:
        from urllib.parse import unquote, urlsplit

        try:
            password = urlsplit(config.database.url.get_secret_value()).password or ""
        except ValueError:
            password = ""
        for secret in (password, unquote(password)):
            if secret:
                line = line.replace(secret, "***")
    return line


@contextmanager
def _output(path: str, *, force: bool) -> Iterator[TextIO]:
    """stdout for ``-``; else a temporary file beside ``path``, renamed over it only when complete."""
    if path == "-":
        out = io.TextIOWrapper(sys.stdout.buffer, encoding="utf-8", newline="\n", write_through=False)
        try:
            yield out
        finally:
            out.flush()
            out.detach()  # stdout itself stays open
        return
    from .store.files import atomic_file
    from .store.portability import TargetExists

    target = Path(path)
    if target.exists() and not force:
        raise TargetExists(target)
    with atomic_file(target, "w", encoding="utf-8", newline="\n") as out:
        yield out


@contextmanager
def _input(path: str) -> Iterator[TextIO]:
    """stdin for ``-``, else the file; UTF-8 either way (a BOM is tolerated)."""
    if path == "-":
        stream = io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8-sig")
        try:
            yield stream
        finally:
            stream.detach()
        return
    with open(path, encoding="utf-8-sig") as stream:
        yield stream

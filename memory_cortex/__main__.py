"""Command line: ``python -m memory_cortex [serve] [--config PATH] [--host H] [--port N] [--db PATH]``.

Maintenance verbs, on the same database (same ``--config``/``--db``): ``backup PATH``,
``export PATH``, ``import PATH``; each is a few lines over :mod:`memory_cortex.services.portability`.
``export-md DIR`` and ``import-md DIR`` (the Markdown mirror) are over :mod:`memory_cortex.services.mirror`.
``mcp [--user U]`` serves MCP over stdio (:mod:`memory_cortex.mcp`).

Flags beat ``MEMORY_CORTEX_*`` environment variables, which beat the YAML file.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from . import __version__
from .cli_config import add_config_commands
from .cli_markdown import add_markdown_commands
from .cli_openclaw import add_openclaw_commands
from .cli_portability import add_portability_commands
from .cli_status import add_status_commands
from .cli_store import add_store_commands
from .config import Config, config_file, config_file_note, load_config
from .mcp.cli import add_mcp_command

log = logging.getLogger("memory_cortex")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="memory-cortex",
        description="Memory Cortex: long-term memory daemon for LLM agents.",
    )
    parser.add_argument("--version", action="version", version=f"memory-cortex {__version__}")
    add_server_flags(parser, default=None)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    serve = commands.add_parser("serve", help="run the HTTP daemon (the default command)")
    # SUPPRESS: a flag given before the verb (--port 9000 serve) is not reset by the verb's parser.
    add_server_flags(serve, default=argparse.SUPPRESS)
    add_portability_commands(commands, add_database_flags)
    add_markdown_commands(commands, add_database_flags)
    add_mcp_command(commands, add_database_flags)
    add_status_commands(commands, add_database_flags)
    add_store_commands(commands, add_database_flags)
    add_config_commands(commands, add_database_flags)
    add_openclaw_commands(commands)
    return parser


def add_server_flags(parser: argparse.ArgumentParser, *, default: object) -> None:
    parser.add_argument(
        "--config",
        type=Path,
        default=default,
        help="YAML config (default: ~/.config/memory-cortex/config.yaml)",
    )
    parser.add_argument("--host", default=default, help="address to bind (server.host)")
    parser.add_argument("--port", type=int, default=default, help="TCP port (server.port)")
    parser.add_argument("--db", type=Path, default=default, help="SQLite database file (database.path)")


def add_database_flags(parser: argparse.ArgumentParser) -> None:
    """``--config``/``--db`` for the maintenance verbs: they find the database as ``serve`` does."""
    parser.add_argument(
        "--config",
        type=Path,
        default=argparse.SUPPRESS,
        help="YAML config (default: ~/.config/memory-cortex/config.yaml)",
    )
    parser.add_argument(
        "--db", type=Path, default=argparse.SUPPRESS, help="SQLite database file (database.path)"
    )


def overrides_from(args: argparse.Namespace) -> dict[str, Any]:
    """Only the flags that were given, as a nested config dict."""
    overrides: dict[str, dict[str, Any]] = {}
    if args.host is not None:
        overrides.setdefault("server", {})["host"] = args.host
    if args.port is not None:
        overrides.setdefault("server", {})["port"] = args.port
    if args.db is not None:
        overrides.setdefault("database", {})["path"] = args.db
    return overrides


def serve(config: Config) -> int:
    """Check what can be checked at once (paths, the port: bound here, before any model loads),
    then run the daemon. A problem is one line on stderr and exit status 2."""
    import asyncio

    from .app import create_app
    from .errors import EmbedderUnavailable, StoreUnavailable
    from .http.serving import serve as serve_app
    from .logs import PathOnlyAccessLogger
    from .startup import StartupError, bind, check_paths, create_database_folder, missing_database_folder

    problems = check_paths(config)
    try:
        sock = None if problems else bind(config.server.host, config.server.port)
    except StartupError as exc:
        problems.append(str(exc))
    if problems or sock is None:
        for problem in problems:
            print(f"memory-cortex: {problem}", file=sys.stderr)
        return 2
    created = missing_database_folder(config)
    problem = create_database_folder(config)
    if problem is not None:
        sock.close()
        print(f"memory-cortex: {problem}", file=sys.stderr)
        return 2
    if created is not None:
        log.info("creating the database folder", extra={"folder": str(created)})
    log.info(
        "starting",
        extra={
            "version": __version__,
            "host": config.server.host,
            "port": config.server.port,
            "db": database_location(config),
            "embedder": config.embeddings.backend,
        },
    )
    app = create_app(config)
    app.on_startup.append(_announce(config))  # after the services' start-up: the first request is served
    try:
        asyncio.run(
            serve_app(
                app,
                sock,
                config.server,
                access_log=logging.getLogger("memory_cortex.access"),
                access_log_class=PathOnlyAccessLogger,
            )
        )
    except (StoreUnavailable, EmbedderUnavailable) as exc:
        # PostgreSQL unreachable, the in-process model not loadable (its ONNX export cannot be
        # written): one line at start, as a bad path is.
        print(f"memory-cortex: {exc.message}", file=sys.stderr)
        return 2
    log.info("stopped")
    return 0


def database_location(config: Config) -> str:
    """Where the store is, for the log: the SQLite file, or the PostgreSQL URL without its password."""
    if config.database.backend == "postgres" and config.database.url is not None:
        from .store.postgres.db import redacted_url

        return redacted_url(config.database.url.get_secret_value())
    return str(config.database.path)


def _announce(config: Config) -> Callable[[Any], Awaitable[None]]:
    from .doctor import daemon_url

    base = daemon_url(config)

    async def announce(_app: Any) -> None:
        log.info(
            f"listening on {base}, dashboard at {base}/ui/; extraction: {config.llm.describe()}",
            extra={"url": base, "dashboard": f"{base}/ui/", "extractor": config.llm.backend},
        )

    return announce


def loaded_config(args: argparse.Namespace) -> Config | None:
    """The configuration ``args`` name (file, then environment, then flags), or None after saying on
    stderr, one line each, what is wrong with it (scripts/start.sh asks this before any port check)."""
    try:
        return load_config(args.config, overrides_from(args))
    except ValidationError as exc:
        # Field and reason only: the input (which may hold API keys) is never echoed.
        for error in exc.errors(include_url=False, include_input=False):
            where = ".".join(str(part) for part in error["loc"]) or "config"
            source = setting_source(error["loc"], config_file(args.config))
            print(f"memory-cortex: configuration error: {where}: {error['msg']}{source}", file=sys.stderr)
    except yaml.YAMLError as exc:
        from .startup import yaml_problem

        print(
            f"memory-cortex: configuration error: {config_file(args.config)}: {yaml_problem(exc)}",
            file=sys.stderr,
        )
    except (FileNotFoundError, ValueError) as exc:
        print(f"memory-cortex: configuration error: {exc}", file=sys.stderr)
    return None


def setting_source(location: tuple[int | str, ...], path: Path | None) -> str:
    """`` (from MEMORY_CORTEX_…)`` or `` (in <file>)`` for the setting at ``location``, when one of
    them set it; the configuration now lives outside the checkout, so an error names where to look."""
    from .cli_config import file_settings, setting_origin

    if len(location) == 1:  # a whole section
        return f" (in {path})" if path is not None else ""
    if len(location) < 2:
        return ""
    origin = setting_origin(str(location[0]), str(location[1]), {}, os.environ, file_settings(path), path)
    if origin.startswith("environment: "):
        return f" (from {origin.removeprefix('environment: ')})"
    if origin.startswith("file: "):
        return f" (in {path})"
    return ""


def run_verb(args: argparse.Namespace, config: Config | None) -> int:
    """A maintenance verb's exit status; output cut short by its reader (``config show | head``) is
    not an error."""
    try:
        status = int(args.run(config, args))
        sys.stdout.flush()
        return status
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
        return 0


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    # Models load from files inside packages; the hub must never be asked (no network here).
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    if not getattr(args, "needs_config", True):
        return run_verb(args, None)
    config = loaded_config(args)
    if config is None:
        return 2
    from .startup import without_missing_llama

    config, llm_note = without_missing_llama(config)
    if args.command not in (None, "serve"):
        # Maintenance verbs print their own lines (and progress) and leave the logging defaults.
        return run_verb(args, config)
    from .logs import configure_logging

    configure_logging(config.logging)
    for note in (llm_note, config_file_note(config_file(args.config))):
        if note is not None:
            log.warning(note)
    return serve(config)


if __name__ == "__main__":
    sys.exit(main())

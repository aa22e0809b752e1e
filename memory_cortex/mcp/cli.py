"""The ``mcp`` verb of ``python -m memory_cortex``: serve MCP over stdio (heavy imports inside the verb)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..config import Config

MCP_HELP = """\
Serve the memory over MCP (Model Context Protocol) on stdin/stdout, for clients that start the
server themselves: Claude Desktop, Claude Code, Cursor. Tools: search_memory, remember, forget,
recall, search_debug, list_entities, get_entity, list_relations; resource memory://profile (the
user's core memories as Markdown).

The memories are those of one user, chosen here and never by the model: --user, else mcp.user_id,
else users.default_user_id. The database is the configured one (--config/--db), opened in this
process; the daemon need not run (when it does, both use the file safely). stdout carries only the
protocol; logs go to stderr. The daemon serves the same tools over HTTP at /mcp."""


def add_mcp_command(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    add_database_flags: Callable[[argparse.ArgumentParser], None],
) -> None:
    """Register ``mcp`` (with ``--config``/``--db`` and ``--user``)."""
    mcp = commands.add_parser(
        "mcp",
        help="serve MCP over stdio (Claude Desktop, Claude Code, Cursor)",
        description=MCP_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_database_flags(mcp)
    mcp.add_argument(
        "--user",
        type=_user_id,
        default=None,
        help="whose memories the client reads and writes (default: mcp.user_id, else users.default_user_id)",
    )
    mcp.set_defaults(run=run_mcp)


def run_mcp(config: Config, args: argparse.Namespace) -> int:
    import asyncio

    from ..logs import configure_logging
    from .server import acting_user
    from .stdio import serve_stdio

    configure_logging(config.logging)  # to stderr: stdout is the protocol's
    try:
        asyncio.run(serve_stdio(config, acting_user(config, args.user)))
    except KeyboardInterrupt:
        return 130
    return 0


def _user_id(text: str) -> str:
    if not text.strip():
        raise argparse.ArgumentTypeError("must not be blank")
    return text

"""``POST /import``: an OpenClaw workspace (MEMORY.md and daily logs) sent as content."""

from __future__ import annotations

from aiohttp import web

from ..keys import MARKDOWN_SYNC, MARKDOWN_WORKSPACES
from .common import parse_body, resolve_user
from .schemas import MAX_IMPORT_MEMORIES, MarkdownImportRequest, MarkdownImportResponse


async def import_workspace(request: web.Request) -> web.Response:
    """The files come in the body, never as a path: the daemon reads no file an HTTP client names."""
    body = await parse_body(request, MarkdownImportRequest)
    summary = await request.app[MARKDOWN_WORKSPACES].import_files(
        resolve_user(request, body.user_id),
        body.files,
        max_memories=MAX_IMPORT_MEMORIES,
        agent_id=body.agent_id or None,
    )
    if summary.added or summary.merged:
        request.app[MARKDOWN_SYNC].request_sync()
    response = MarkdownImportResponse(
        user_id=summary.user_id,
        files=summary.files,
        ignored_files=summary.ignored_files,
        memories=summary.memories,
        added=summary.added,
        merged=summary.merged,
        skipped=summary.skipped,
        too_long=summary.too_long,
        secrets=summary.secrets,
    )
    return web.json_response(response.model_dump())

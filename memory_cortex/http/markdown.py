"""``POST /import`` and ``GET /import/runs/{import_id}``: an OpenClaw workspace (MEMORY.md and
daily logs) sent as content, imported in the background and followed by its id."""

from __future__ import annotations

from aiohttp import web

from ..errors import ImportNotFound
from ..keys import IMPORT_RUNS
from ..services.import_runs import ImportRun
from .common import accepted, int_from_path, parse_body, resolve_user
from .schemas import MAX_IMPORT_MEMORIES, ImportRunOut, MarkdownImportRequest, MarkdownImportResponse


def import_path(import_id: int) -> str:
    return f"/import/runs/{import_id}"


async def import_workspace(request: web.Request) -> web.Response:
    """The files come in the body, never as a path: the daemon reads no file an HTTP client names.
    A workspace it refuses (too many memories) is a 400 at once; one it takes answers 202."""
    body = await parse_body(request, MarkdownImportRequest)
    imports = request.app[IMPORT_RUNS]
    import_id = await imports.begin(
        resolve_user(request, body.user_id),
        body.files,
        agent_id=body.agent_id or None,
        max_memories=MAX_IMPORT_MEMORIES,
    )
    run = await imports.get(import_id)
    assert run is not None  # logged before begin returns; runs are never deleted
    return accepted(import_out(run), import_path(import_id))


async def import_run(request: web.Request) -> web.Response:
    import_id = int_from_path(request, "import_id")
    run = await request.app[IMPORT_RUNS].get(import_id)
    if run is None:
        raise ImportNotFound(f"no import {import_id}")
    return web.json_response(import_out(run).model_dump())


def import_out(run: ImportRun) -> ImportRunOut:
    return ImportRunOut(
        id=run.id,
        user_id=run.user_id,
        agent_id=run.agent_id,
        status=run.status,  # type: ignore[arg-type]  # the CHECK constraint holds it
        started_at=run.started_at,
        finished_at=run.finished_at,
        done=run.done,
        total=run.total,
        result=None if run.result is None else MarkdownImportResponse.model_validate(run.result),
        error=run.error,
    )

"""Small helpers every handler uses: read a JSON body into a model, resolve the user."""

from __future__ import annotations

import json
import re
from typing import Any, TypeVar

from aiohttp import web
from pydantic import BaseModel

from ..errors import CortexError, InvalidRequest
from ..keys import CONFIG
from .schemas import MAX_ID

M = TypeVar("M", bound=BaseModel)

_DIGITS = re.compile(r"[0-9]+")


class UnsupportedMediaType(CortexError):
    code = "unsupported_media_type"
    status = 415


async def raw_json_body(request: web.Request) -> bytes:
    """The body bytes of a JSON request. A missing content type is accepted (curl users forget
    it); a non-JSON one is a 415. aiohttp enforces the size limit while reading (413)."""
    content_type = request.headers.get("Content-Type", "")
    if (
        content_type
        and request.content_type != "application/json"
        and not request.content_type.endswith("+json")
    ):
        raise UnsupportedMediaType(f"expected application/json, got {request.content_type}")
    raw = await request.read()
    if not raw.strip():
        raise InvalidRequest("request body is empty; send a JSON object")
    return raw


async def json_body(request: web.Request) -> Any:
    """The parsed JSON body (see :func:`raw_json_body`)."""
    return json.loads((await raw_json_body(request)).decode("utf-8"))


async def parse_body(request: web.Request, model: type[M]) -> M:
    """Validate the JSON body against ``model`` (400 with field errors when it does not fit)."""
    data = await json_body(request)
    if not isinstance(data, dict):
        raise InvalidRequest("request body must be a JSON object")
    return model.model_validate(data)


def parse_query(request: web.Request, model: type[M]) -> M:
    return model.model_validate(dict(request.query))


def resolve_user(request: web.Request, user_id: str | None) -> str:
    """The request's user, or the configured default one when absent or blank."""
    if user_id is None or not user_id.strip():
        return request.app[CONFIG].users.default_user_id
    return user_id


def int_from_path(request: web.Request, name: str) -> int:
    """A path id (``/memories/{memory_id}``): an integer from 1 to 2^63 - 1 (SQLite's largest
    rowid), else a 400. Any id in range is answered (404 when there is none)."""
    raw = request.match_info[name]
    if not _DIGITS.fullmatch(raw) or len(raw) > 30 or not 1 <= int(raw) <= MAX_ID:
        raise InvalidRequest(f"{name} must be an integer from 1 to {MAX_ID}, got {raw[:40]!r}")
    return int(raw)

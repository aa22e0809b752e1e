"""Small helpers every handler uses: read a JSON body into a model, resolve the user."""

from __future__ import annotations

import json
import math
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


# Deeper JSON than any body of this API needs (the free-form metadata included): a bound on the
# work and the recursion every later step (validation, storage, export) spends on one body.
MAX_JSON_DEPTH = 64


async def raw_json_body(request: web.Request) -> bytes:
    """The body bytes of a JSON request (the request guard already refused writes that do not say
    ``application/json``; a non-JSON content type is a 415 here too). aiohttp enforces the size
    limit while reading (413)."""
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
    """The parsed JSON body (see :func:`raw_json_body` and :func:`parse_json`)."""
    return parse_json(await raw_json_body(request))


def parse_json(raw: bytes) -> Any:
    """``raw`` as JSON, or an :class:`InvalidRequest` for what parses but cannot be used: nesting
    deeper than :data:`MAX_JSON_DEPTH`, an integer of thousands of digits, a number too large for a
    float, NaN or Infinity. (A NUL in a text field is the request models' to refuse: see
    ``schemas._Request``.) Malformed JSON raises ``json.JSONDecodeError``."""
    try:
        data = json.loads(raw.decode("utf-8"), parse_float=_finite_float, parse_constant=_no_constant)
    except json.JSONDecodeError:
        raise
    except RecursionError as exc:
        raise InvalidRequest(f"JSON nested deeper than {MAX_JSON_DEPTH} levels") from exc
    except ValueError as exc:  # Python's bound on integer digits, or the hooks below
        raise InvalidRequest(f"body holds a number that cannot be used: {exc}") from exc
    _check_depth(data)
    return data


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text[:40]} is out of range")
    return value


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _check_depth(data: Any) -> None:
    """The depth check, without recursion (a hostile body must not exhaust the stack here)."""
    pending: list[tuple[Any, int]] = [(data, 1)]
    while pending:
        value, depth = pending.pop()
        if not isinstance(value, dict | list):
            continue
        if depth > MAX_JSON_DEPTH:
            raise InvalidRequest(f"JSON nested deeper than {MAX_JSON_DEPTH} levels")
        if isinstance(value, dict):
            pending.extend((key, depth) for key in value)
            pending.extend((item, depth + 1) for item in value.values())
        else:
            pending.extend((item, depth + 1) for item in value)


async def parse_body(request: web.Request, model: type[M]) -> M:
    """Validate the JSON body against ``model`` (400 with field errors when it does not fit)."""
    data = await json_body(request)
    if not isinstance(data, dict):
        raise InvalidRequest("request body must be a JSON object")
    return model.model_validate(data)


def parse_query(request: web.Request, model: type[M]) -> M:
    """Validate the query string against ``model``; a NUL in any value is a 400."""
    values = dict(request.query)
    if any("\x00" in value for value in values.values()):
        raise InvalidRequest("query parameters must not contain NUL characters (%00)")
    return model.model_validate(values)


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


def accepted(body: BaseModel, location: str) -> web.Response:
    """202: work started in the background, followed at ``location`` (what ``body`` describes)."""
    return web.json_response(body.model_dump(), status=202, headers={"Location": location})

"""Counts every answered request by method, route pattern and status (``memory_cortex_http_requests_total``).

The route label is the pattern the router matched (``/memories/{memory_id}``), never the path: a
label per memory id, per scanner probe or per typo would grow the series without bound. A request
no route matched is counted under :data:`~memory_cortex.services.metrics.UNMATCHED_ROUTE`. This is
the outermost middleware, so it sees the status the client gets: the error middleware's JSON errors,
the token check's 401, the guard's refusals. A request whose client went away (cancelled) is not
counted: it was never answered.
"""

from __future__ import annotations

from aiohttp import web

from ..keys import METRICS
from ..services.metrics import UNMATCHED_ROUTE
from .errors import Handler


def route_pattern(request: web.Request) -> str:
    """The matched route's pattern (``/memories/{memory_id}``), or ``unmatched``."""
    resource = request.match_info.route.resource
    return UNMATCHED_ROUTE if resource is None else resource.canonical


@web.middleware
async def count_requests(request: web.Request, handler: Handler) -> web.StreamResponse:
    metrics = request.app[METRICS]
    route = route_pattern(request)
    try:
        response = await handler(request)
    except web.HTTPException as exc:  # a redirect raised by a handler, or an error nothing mapped
        metrics.count_http_request(request.method, route, exc.status)
        raise
    except Exception:
        metrics.count_http_request(request.method, route, 500)  # aiohttp answers it with a 500
        raise
    metrics.count_http_request(request.method, route, response.status)
    return response

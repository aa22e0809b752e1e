"""How long each endpoint may work on one request, and the middleware that holds it to that.

Why: a request is the caller's only handle on its answer, and callers give up (the OpenClaw plugin
after 200 ms for ``/context``, proxies and scripts after tens of seconds). Work that takes longer
is started and followed instead (``POST /lifecycle/run`` answers 202 at once), and every endpoint
answers within a bound stated in the API reference:

- ``/recall`` and ``/context`` bound themselves (``recall.timeout_s``; ``recall.context_timeout_ms``
  or the request's ``budget_ms``) and answer degraded when time runs out; the middleware's cut is
  only a backstop ``BACKSTOP_S`` later;
- every other endpoint gets ``server.request_timeout_s``, counted once its body has arrived (the
  body has its own ``server.body_timeout_s``). Past it the answer is 503 ``timeout``; a write cut
  off so was applied whole or not at all (each is one transaction), as after any 5xx.

``/mcp`` has no bound of its own: the MCP SDK answers it, and each tool is one of the calls above.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass

from aiohttp import web
from aiohttp.web_urldispatcher import AbstractRoute

from ..config import Config
from ..errors import RequestTimedOut

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

# How much later than its own bound the middleware cuts an endpoint that bounds itself.
BACKSTOP_S = 1.0


@dataclass(frozen=True)
class TimeBound:
    """An endpoint's bound: the setting it comes from and, for the docs, what happens at the end."""

    setting: str
    seconds: Callable[[Config], float]
    self_bounded: bool = False  # the endpoint answers (degraded) within the bound by itself
    note: str = ""

    def cut_after(self, config: Config) -> float:
        """When the middleware answers 503 for the endpoint."""
        return self.seconds(config) + (BACKSTOP_S if self.self_bounded else 0.0)

    def describe(self, config: Config) -> str:
        text = f"Answers within {self.seconds(config):g} s ({self.setting})"
        return f"{text}; {self.note}." if self.note else f"{text}."


REQUEST = TimeBound("server.request_timeout_s", lambda config: config.server.request_timeout_s)
RECALL = TimeBound(
    "recall.timeout_s",
    lambda config: config.recall.timeout_s,
    self_bounded=True,
    note="when the search and the LLM have not finished by then, the answer is degraded",
)
CONTEXT = TimeBound(
    "recall.context_timeout_ms",
    lambda config: config.recall.context_timeout_ms / 1000,
    self_bounded=True,
    note="or within the request's budget_ms, if smaller; when the search has not finished by then,"
    " the block is empty and degraded is true",
)


def time_bound_middleware(
    bounds: Mapping[AbstractRoute, float],
) -> Callable[..., Awaitable[web.StreamResponse]]:
    """Cut each request of a bounded route after its bound (``bounds``: seconds by route)."""

    @web.middleware
    async def bound(request: web.Request, handler: Handler) -> web.StreamResponse:
        seconds = bounds.get(request.match_info.route)
        if seconds is None:
            return await handler(request)
        try:
            async with asyncio.timeout(seconds):
                return await handler(request)
        except TimeoutError:
            raise RequestTimedOut(
                f"the request took longer than its bound of {seconds:g} s; see the daemon log"
            ) from None

    return bound

"""How long each endpoint may work on one request, and the middleware that holds it to that.

Why: a request is the caller's only handle on its answer, and callers give up (the OpenClaw plugin
after 200 ms for ``/context``, proxies and scripts after tens of seconds). Work that takes longer
is started and followed instead (``POST /lifecycle/run`` answers 202 at once), and every endpoint
answers within a bound stated in the API reference:

- ``/recall`` and ``/context`` bound themselves (``recall.timeout_s``; ``recall.context_timeout_ms``
  or the request's ``budget_ms``) and answer degraded when time runs out; the middleware's cut is
  only a backstop ``BACKSTOP_S`` later;
- every other endpoint gets ``server.request_timeout_s``, counted once its body has arrived (the
  body has its own ``server.body_timeout_s``). Past it the answer is 503 ``timeout``: a read is
  stopped; a write goes on and may still be applied (each write is one transaction, so it is
  applied whole or not at all).

``/mcp`` has no bound here: the MCP SDK answers it; its ``recall`` tool is bounded as ``/recall``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass

from aiohttp import web
from aiohttp.web_urldispatcher import AbstractRoute

from ..config import Config
from ..errors import RequestTimedOut

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
log = logging.getLogger(__name__)

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
PREVIEW = TimeBound(
    "server.request_timeout_s",
    lambda config: config.server.request_timeout_s,
    note="a store too large to plan in that time answers 503; POST /lifecycle/run?dry_run=true plans"
    " in the background and is followed by its id",
)
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
    """Answer each request of a bounded route within its bound (``bounds``: seconds by route).

    A read past its bound is cancelled. A write is not: cancelling it between its commit and what
    follows (waking the ingest worker, starting a run) would lose that step, so it goes on in the
    background and its client is told so (503 ``timeout``: it may still be applied)."""

    @web.middleware
    async def bound(request: web.Request, handler: Handler) -> web.StreamResponse:
        seconds = bounds.get(request.match_info.route)
        if seconds is None:
            return await handler(request)
        if request.method in READ_METHODS:
            try:
                async with asyncio.timeout(seconds) as deadline:
                    return await handler(request)
            except TimeoutError:
                if not deadline.expired():
                    raise  # a timeout of the handler's own, not the bound
                _log_cut(request, seconds)
                raise RequestTimedOut(
                    f"the request took longer than its bound of {seconds:g} s and was stopped"
                ) from None
        work = asyncio.ensure_future(handler(request))
        try:
            return await asyncio.wait_for(asyncio.shield(work), seconds)
        except TimeoutError:
            if not work.done():
                work.add_done_callback(_log_late_failure)
                _log_cut(request, seconds)
                raise RequestTimedOut(
                    f"the request took longer than its bound of {seconds:g} s; it goes on and may still be applied"
                ) from None
            raise

    return bound


READ_METHODS = frozenset({"GET", "HEAD"})


def _log_cut(request: web.Request, seconds: float) -> None:
    log.warning(
        "request past its time bound",
        extra={"method": request.method, "path": request.path, "bound_s": seconds},
    )


def _log_late_failure(work: asyncio.Future[web.StreamResponse]) -> None:
    """A write answered 503 finished later: its error, if any, is logged (nobody else sees it)."""
    if not work.cancelled() and (error := work.exception()) is not None:
        log.error("a request answered 503 timeout failed afterwards", exc_info=error)

"""Prometheus metrics of one app, in a registry of its own.

Not the process-global default registry: several apps in one process (the tests) must not clash.
Two kinds of numbers:

- observed as they happen, by the service where the event happens: search, ``/context`` and
  ``/recall`` latency (HTTP and MCP alike: the services time themselves), extraction latency and
  the facts each job stored (the ingest worker), LLM errors by kind, degraded recalls, FTS-only
  searches; and, at the HTTP edge, requests by route pattern and status;
- read at scrape time from :class:`~.stats.Stats` (memories, ingest queue, database size, hardware,
  the GPU gate): :mod:`.metrics_scrape` turns the one ``Stats`` of a scrape into metric families,
  handed to :meth:`Metrics.render`, so a scrape costs one stats pass and nothing is kept in step in
  between. This module imports no other service: every service may feed it.

No ``_created`` series: prometheus_client's documented switch (:func:`disable_created_metrics`) is
a module flag of the library, read at each scrape; :class:`Metrics` sets it. Every series name is
listed in ``docs/reference/metrics.md``; the Grafana dashboard and the alert rules in ``deploy/``
use only these names (a test checks them against a live ``/metrics``).
"""

from __future__ import annotations

import platform
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import numpy as np
from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    Info,
    ProcessCollector,
    disable_created_metrics,
    generate_latest,
)
from prometheus_client.core import Metric
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4

from .. import __version__
from ..models.llm import LLM_ERROR_KINDS
from .search_timeline import SearchTimeline

CONTENT_TYPE = CONTENT_TYPE_PLAIN_0_0_4
SEARCH_MODES = ("hybrid", "fts", "vector")
# Search has a 200 ms budget; extraction takes seconds to minutes.
SEARCH_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.5, 1.0, 2.5, 5.0)
EXTRACTION_BUCKETS = (0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0)
# The event loop should never be held for long: 1 ms to 2.5 s, fine below the 20 ms target.
LOOP_LAG_BUCKETS = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.5)
# /recall waits for the LLM's answer (recall.timeout_s) unless cached or degraded.
RECALL_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.2, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 30.0, 60.0)
# How a /recall was answered: by the LLM, from the cache, as the plain list of facts (degraded),
# or with nothing found (no LLM asked).
RECALL_OUTCOMES = ("synthesised", "listed", "cached", "degraded", "nothing_found")
# Why a recall was degraded: no LLM asked (rules backend or recall.synthesis off), or the LLM failed.
DEGRADED_REASONS = ("llm_failed", "search_timeout")
# The extraction methods the ingest pipeline records (ingest_jobs.method); combinations appear as
# the pipeline writes them ("llm+rules"), a small fixed set.
EXTRACTION_METHODS = ("llm", "rules", "llm+rules")
# The HTTP methods the request counter names; anything else counts as "other" (a bounded label).
HTTP_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
# The route label of a request no route matched (404, or 405 on an unknown method).
UNMATCHED_ROUTE = "unmatched"


# Searches the dashboard's latency percentiles are taken over (histogram buckets are too coarse).
RECENT_SEARCHES = 1000


@dataclass(frozen=True)
class LatencyPercentiles:
    samples: int
    p50_ms: float | None
    p95_ms: float | None
    p99_ms: float | None


class Metrics:
    """The registry and the instruments the app feeds.

    Attributes:
        search_timeline: every timed search's latency per minute (the dashboard overview's chart),
            fed by :meth:`observe_search`: HTTP and MCP searches alike.
    """

    def __init__(self) -> None:
        disable_created_metrics()  # the library's own switch (a flag it reads at each scrape)
        self._recent_search_ms: deque[float] = deque(maxlen=RECENT_SEARCHES)
        self.search_timeline = SearchTimeline()
        self.registry = CollectorRegistry()
        self._loop_lag_largest = 0.0
        self._search_seconds = Histogram(
            "memory_cortex_search_seconds",
            "POST /hybrid-search latency in the handler; its _count is the number of searches.",
            ["mode"],
            buckets=SEARCH_BUCKETS,
            registry=self.registry,
        )
        for mode in SEARCH_MODES:  # every series exists from the start, at zero
            self._search_seconds.labels(mode=mode)
        self._loop_lag_seconds = Histogram(
            "memory_cortex_event_loop_lag_seconds",
            "How late the event loop ran the probe's wake-ups (server.loop_probe_interval_s): time the loop"
            " was held by something else.",
            buckets=LOOP_LAG_BUCKETS,
            registry=self.registry,
        )
        self._loop_lag_max = Gauge(
            "memory_cortex_event_loop_lag_max_seconds",
            "The largest event loop lag the probe has seen since the daemon started.",
            registry=self.registry,
        )
        self._extraction_seconds = Histogram(
            "memory_cortex_extraction_seconds",
            "Extraction job latency (LLM + storing the facts), after any GPU deferral.",
            buckets=EXTRACTION_BUCKETS,
            registry=self.registry,
        )
        self._searches_without_vector = Counter(
            "memory_cortex_searches_without_vector",
            "Hybrid/vector searches (/hybrid-search, /context, /recall, MCP) answered FTS-only: the query"
            " embedding failed or was too slow.",
            registry=self.registry,
        )
        self._context_seconds = Histogram(
            "memory_cortex_context_seconds",
            "POST /context latency in the recall service (search and block), the OpenClaw hot path.",
            buckets=SEARCH_BUCKETS,
            registry=self.registry,
        )
        self._contexts_degraded = Counter(
            "memory_cortex_contexts_degraded",
            "/context answers given empty because the search outlasted the budget (the caller's"
            " budget_ms or recall.context_timeout_ms): a prompt went out without its memories.",
            registry=self.registry,
        )
        self._recall_seconds = Histogram(
            "memory_cortex_recall_seconds",
            "/recall latency in the recall service (HTTP and MCP), LLM synthesis included, by outcome.",
            ["outcome"],
            buckets=RECALL_BUCKETS,
            registry=self.registry,
        )
        for outcome in RECALL_OUTCOMES:
            self._recall_seconds.labels(outcome=outcome)
        self._recalls_degraded = Counter(
            "memory_cortex_recalls_degraded",
            "/recall answers worse than set up to give, by reason: the LLM failed (the facts as a list),"
            " or the search ran out of time.",
            ["reason"],
            registry=self.registry,
        )
        for reason in DEGRADED_REASONS:
            self._recalls_degraded.labels(reason=reason)
        self._llm_errors = Counter(
            "memory_cortex_llm_errors",
            "Failed LLM calls (extraction, recall, rerank, lifecycle) by kind.",
            ["kind"],
            registry=self.registry,
        )
        for kind in LLM_ERROR_KINDS:
            self._llm_errors.labels(kind=kind)
        self._facts_stored = Counter(
            "memory_cortex_facts_stored",
            "Facts the ingest pipeline extracted and stored, by extraction method.",
            ["method"],
            registry=self.registry,
        )
        for method in EXTRACTION_METHODS:
            self._facts_stored.labels(method=method)
        self._http_requests = Counter(
            "memory_cortex_http_requests",
            "HTTP requests answered, by method, route pattern (never the raw path) and status.",
            ["method", "route", "status"],
            registry=self.registry,
        )
        # memory_cortex_build_info{version, python} 1: which release a dashboard or alert is looking at.
        Info("memory_cortex_build", "The running release.", registry=self.registry).info(
            {"version": __version__, "python": platform.python_version()}
        )
        self._scrape = _ScrapeTime()
        self.registry.register(self._scrape)
        ProcessCollector(registry=self.registry)  # process_cpu_seconds_total, resident memory…

    def observe_search(self, mode: str, seconds: float, *, vector_used: bool) -> None:
        """One search: its latency and whether the vector side took part (hybrid/vector modes)."""
        self._search_seconds.labels(mode=mode).observe(seconds)
        self.search_timeline.record(seconds * 1000)
        if mode == "hybrid":
            self._recent_search_ms.append(seconds * 1000)
        self.count_search_sides(mode, vector_used=vector_used)

    def count_search_sides(self, mode: str, *, vector_used: bool) -> None:
        """A search that should have used the vector side (hybrid/vector) but was answered FTS-only."""
        if mode != "fts" and not vector_used:
            self._searches_without_vector.inc()

    def observe_context(self, seconds: float, *, degraded: bool) -> None:
        """One /context answer: its latency, and whether its search was given up at the budget."""
        self._context_seconds.observe(seconds)
        if degraded:
            self._contexts_degraded.inc()

    def observe_recall(self, outcome: str, seconds: float) -> None:
        """One recall: how it was answered (:data:`RECALL_OUTCOMES`) and how long it took."""
        self._recall_seconds.labels(outcome=outcome).observe(seconds)

    def count_degraded_recall(self, reason: str) -> None:
        self._recalls_degraded.labels(reason=reason).inc()

    def count_llm_error(self, kind: str) -> None:
        self._llm_errors.labels(kind=kind).inc()

    def count_http_request(self, method: str, route: str, status: int) -> None:
        """One answered request; ``route``: the pattern (``/memories/{memory_id}``), never the path."""
        method = method if method in HTTP_METHODS else "other"
        self._http_requests.labels(method=method, route=route, status=str(status)).inc()

    def recent_search_latency(self) -> LatencyPercentiles:
        """Exact percentiles of the last :data:`RECENT_SEARCHES` hybrid searches (the handler's time)."""
        if not self._recent_search_ms:
            return LatencyPercentiles(0, None, None, None)
        p50, p95, p99 = (round(float(v), 2) for v in np.percentile(self._recent_search_ms, [50, 95, 99]))
        return LatencyPercentiles(len(self._recent_search_ms), p50, p95, p99)

    def observe_loop_lag(self, seconds: float) -> None:
        """One wake-up of the loop-lag probe, ``seconds`` after it was due."""
        self._loop_lag_seconds.observe(seconds)
        if seconds > self._loop_lag_largest:
            self._loop_lag_largest = seconds
            self._loop_lag_max.set(seconds)

    def observe_extraction(self, seconds: float, method: str, facts_stored: int) -> None:
        """One finished extraction job: its time and the facts it stored, by extraction method."""
        self._extraction_seconds.observe(seconds)
        if facts_stored:
            self._facts_stored.labels(method=method).inc(facts_stored)

    def render(self, scraped: Iterable[Metric] = ()) -> bytes:
        """The exposition text (format 0.0.4), with ``scraped`` (the families read at scrape time:
        :func:`.metrics_scrape.stats_families`) beside the instruments'."""
        # No await between handing the families over and rendering: concurrent scrapes cannot mix.
        self._scrape.families = list(scraped)
        try:
            return generate_latest(self.registry)
        finally:
            self._scrape.families = []


class _ScrapeTime:
    """A collector that yields the families handed to :meth:`Metrics.render` for one scrape."""

    def __init__(self) -> None:
        self.families: list[Metric] = []

    def collect(self) -> Iterator[Metric]:
        yield from self.families

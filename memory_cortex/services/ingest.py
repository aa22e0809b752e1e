"""The ingest journal, the per-session debounce, and the one extraction worker.

Every accepted ``/ingest`` is committed to the ``ingest_jobs`` table before the 202 goes out, so
nothing acknowledged is lost, even on kill -9. A re-post of the same session replaces its pending
job and restarts the debounce timer (``due_at``). One worker (one GPU) takes due jobs one at a
time: it computes the delta against the session watermark, extracts, and commits the facts, the new
watermark and the job's completion in ONE transaction, so a crash either leaves the job pending (and
it runs again) or fully done; a turn is never extracted twice. Failures go back to pending with an
exponential back-off; after ``max_attempts`` the job is failed (kept, retryable from the API).

Worker recipe (as everywhere here): a wake event, a stop flag, catch-and-log per job so the worker
never dies, and a timed stop.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from ..config import IngestConfig
from ..errors import JobNotFound, StorageFull
from ..models.llm import LLMUnavailable
from ..records import EVERYONE, Audience, MemoryRecord, NewMemory
from ..redaction import CleanTextMemo
from ..store import ingest as ingest_sql
from ..store import job_memories as job_sql
from ..store import memories as memory_sql
from ..store.db import Database
from ..store.ingest import IngestJob, Watermark
from .beliefs import structure_of
from .extraction import ExtractionService
from .job_context import known_facts, same_reach_context
from .memories import MemoryService
from .messages import JournalMemo, Message, clean_messages, compute_delta, journal_body, step_end
from .speakers import Speaker, other_speaker, speakers_of
from .turns import message_time, turn_memories
from .workers import join_or_cancel

log = logging.getLogger(__name__)

# Most message hashes a session watermark (extraction's or the turns') keeps, newest last.
MAX_WATERMARK_HASHES = 10_000

# Most turn ids a fact records as its source.
MAX_DERIVED_FROM = 50

# Something that may hold a job back (the GPU-aware gate of the hardware issue plugs in here).
Gate = Callable[[IngestJob], Awaitable[None]]


@dataclass(frozen=True)
class IngestRequest:
    user_id: str
    session_id: str | None
    channel: str | None
    body: dict[str, Any]  # the request body, validated (a JSON object with "messages")
    message_count: int
    debounce: bool


# On a database several daemons share: how often a worker looks for jobs a stopped daemon left, and
# for jobs another daemon journaled (its submit cannot wake this worker).
ORPHAN_CHECK_S = 10.0
# While the disk is full, how long the worker waits before it tries to write again (an /ingest
# that is accepted again wakes it sooner).
STORAGE_FULL_PAUSE_S = 30.0


def session_key(user_id: str, session_id: str | None) -> str:
    """Sessions are per user: two users may reuse the same session id."""
    return f"{user_id}\x1f{session_id or ''}"


@dataclass
class WorkerState:
    running_job: int | None = None
    last_latency_ms: int | None = None
    last_error: str | None = None
    jobs_done: int = 0
    jobs_failed: int = 0


class IngestService:
    """Accepts transcripts and runs the extraction worker.

    Args:
        db: the store (journal, watermarks, memories).
        memories: writes facts with dedup/supersession.
        extraction: turns messages into facts.
        config: debounce, retries, skipping rules.
        gate: awaited before each job runs (may wait, never raises); None = run at once.
        on_extracted: told, for each successful job, the seconds it took (gate wait excluded), its
            extraction method and the facts it stored (metrics).
        on_stored: called after a job's facts are committed (the Markdown mirror's request_sync).
        clock: wall clock in unix seconds (tests inject one).
        turn_context: earlier turns of a session each stored turn is embedded after
            (``embeddings.session_context``).
    """

    def __init__(
        self,
        db: Database,
        memories: MemoryService,
        extraction: ExtractionService,
        config: IngestConfig,
        *,
        gate: Gate | None = None,
        on_extracted: Callable[[float, str, int], None] | None = None,
        on_stored: Callable[[], None] | None = None,
        clock: Callable[[], float] = time.time,
        turn_context: int = 2,
    ) -> None:
        self._db = db
        self._memories = memories
        self._extraction = extraction
        self._config = config
        self._gate = gate
        self._on_extracted = on_extracted
        self._on_stored = on_stored
        self._held_by_gate = False
        self._clock = clock
        self._turn_context = turn_context
        self._clean_texts = CleanTextMemo()
        self._journal = JournalMemo(self._clean_texts.redact)
        self._wake = asyncio.Event()
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        # A job claimed when the disk filled up, not yet put back in the queue (that is a write too).
        self._unreleased: IngestJob | None = None
        self.state = WorkerState()

    # -- the HTTP side ---------------------------------------------------------------------
    def journal_payload(self, body: dict[str, Any]) -> str:
        """What the journal keeps of a request (:func:`~memory_cortex.services.messages.journal_body`;
        a message journaled on an earlier post costs a lookup). Blocking: :meth:`submit` runs it in a
        thread."""
        return journal_body(body, self._journal, self._clean_texts.redact)

    async def submit(self, request: IngestRequest) -> int:
        """Journal the request (only what the worker reads, secrets masked; committed on return)
        and return how many jobs are pending."""
        payload = await asyncio.to_thread(self.journal_payload, request.body)  # tens of ms for long ones
        delay = self._config.debounce_s if request.debounce else 0.0
        due_at = self._clock() + delay
        key = session_key(request.user_id, request.session_id)

        def work(conn: sqlite3.Connection) -> int:
            ingest_sql.enqueue(
                conn,
                session_key=key,
                user_id=request.user_id,
                session_id=request.session_id,
                channel=request.channel,
                payload=payload,
                message_count=request.message_count,
                due_at=due_at,
            )
            return ingest_sql.pending_count(conn)

        pending = await self._db.write(work)
        self._wake.set()
        return pending

    async def queue(self) -> dict[str, Any]:
        counts = await self._db.read(ingest_sql.queue_counts)
        return {
            **counts,
            "running_job": self.state.running_job,
            "last_latency_ms": self.state.last_latency_ms,
            "last_error": self.state.last_error,
        }

    async def jobs(self, *, status: str | None, limit: int) -> list[IngestJob]:
        return await self._db.read(lambda conn: ingest_sql.recent_jobs(conn, status=status, limit=limit))

    async def job(
        self, job_id: int, *, user_id: str | None = None, audience: Audience = EVERYONE
    ) -> tuple[IngestJob, list[MemoryRecord]]:
        """One job and the memories it stored that ``audience`` may see (raises :class:`JobNotFound`
        for a job of another user than ``user_id``, when given, or of a reach the requester may not
        see: as a memory it may not see, it is a job that never was; a finished job that stored
        nothing only the owner's own tools see)."""

        def read(conn: sqlite3.Connection) -> tuple[IngestJob, list[MemoryRecord]]:
            job = ingest_sql.get_job(conn, job_id)
            if job is None or (user_id is not None and job.user_id != user_id):
                raise JobNotFound(job_id)
            if not audience.unrestricted:
                # Its reach: from its body while it waits, from what it stored once the body is gone.
                reach = (
                    {job.scope}
                    if job.messages
                    else job_sql.job_scopes(conn, job.user_id, job.session_id, job.id)
                )
                if not reach or not all(audience.admits(scope) for scope in reach):
                    raise JobNotFound(job_id)
            stored = job_sql.stored_by_job(conn, job.user_id, job.session_id, job.id)
            seen = [record for record in stored if audience.admits(record.scope)]
            return job, memory_sql.hide_unseen_replacements(conn, seen, audience)

        return await self._db.read(read)

    async def retry(self, job_id: int) -> bool:
        done = await self._db.write(lambda conn: ingest_sql.retry_failed(conn, job_id, self._clock()))
        self._wake.set()
        return done

    # -- the worker ------------------------------------------------------------------------
    async def start(self) -> None:
        """Resume after a restart: jobs left running run again; then start the worker."""
        resumed = await self._requeue_abandoned()
        if resumed:
            log.info("resumed interrupted ingest jobs", extra={"jobs": resumed})
        self._task = asyncio.create_task(self._run(), name="extraction-worker")

    async def stop(self, timeout: float = 10.0) -> None:
        """Let the running job finish (up to ``timeout``); an unfinished one simply runs next start.

        A job the gate is still holding has not started: the worker is stopped at once.
        """
        self._stop.set()
        self._wake.set()
        if self._task is None:
            return
        if not await join_or_cancel(self._task, 0 if self._held_by_gate else timeout):
            log.warning("extraction worker stopped mid-job; it will run again at next start")

    async def run_due_jobs(self) -> int:
        """Run every job that is due now; returns how many ran (tests and the worker use it).

        Raises :class:`StorageFull` when the disk is full: the job in hand goes back to the queue
        untried, and nothing more runs until there is room."""
        ran = 0
        me = self._db.instance_id
        if self._unreleased is not None:
            await self._release(self._unreleased)
        while not self._stop.is_set():
            job = await self._db.write(lambda conn: ingest_sql.claim_due(conn, self._clock(), me))
            if job is None:
                return ran
            await self._process(job)
            ran += 1
        return ran

    async def _requeue_abandoned(self) -> int:
        """Jobs left 'running' by a daemon that is gone (this one, before a restart; on PostgreSQL
        also another daemon on the same database) run again."""
        me = self._db.instance_id
        return await self._db.write(lambda conn: ingest_sql.requeue_running(conn, self._clock(), me))

    async def _run(self) -> None:
        last_orphan_check = time.monotonic()
        while not self._stop.is_set():
            # Cleared before the work, not after it: a stop() or submit() that lands while the
            # jobs run or the next due time is read must still wake the wait below.
            self._wake.clear()
            try:
                if self._db.shared and time.monotonic() - last_orphan_check >= ORPHAN_CHECK_S:
                    # This daemon's own "alive" lock first (a dropped session loses it), then:
                    # another daemon on the database may have died mid-job; its jobs come here.
                    last_orphan_check = time.monotonic()
                    await self._db.keep_alive()
                    if adopted := await self._requeue_abandoned():
                        log.info("took over jobs of a daemon that stopped", extra={"jobs": adopted})
                await self.run_due_jobs()
                next_due = await self._db.read(ingest_sql.next_due_at)
            except StorageFull as exc:  # told once by the store; the jobs wait in the journal
                self.state.last_error = exc.message
                next_due = self._clock() + STORAGE_FULL_PAUSE_S
            except Exception:  # never let the worker die: log, pause, go on
                log.exception("extraction worker error")
                next_due = self._clock() + 5
            wait = 3600.0 if next_due is None else max(0.0, next_due - self._clock())
            if self._db.shared:  # wake for the next orphan check (and others' jobs) too
                wait = min(wait, ORPHAN_CHECK_S)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), timeout=wait + 0.01)

    async def _process(self, job: IngestJob) -> None:
        self.state.running_job = job.id
        try:
            # The memo the journal was masked with: a message checked then costs a hash here.
            # On a worker thread, as the HTTP side masks: a long history is CPU work the event loop
            # must not wait on.
            messages = await asyncio.to_thread(
                clean_messages, job.messages, self._config, self._clean_texts.redact
            )
            # A long job is done in steps (ingest.max_messages_per_step new messages each), each
            # queued behind the jobs due before it: one huge post never holds everyone's extraction.
            watermark = await self._db.read(lambda conn: ingest_sql.get_watermark(conn, job.session_key))
            end = step_end(
                messages, watermark.message_hashes if watermark else [], self._config.max_messages_per_step
            )
            more = end is not None
            messages = messages[:end]
            # The turns first, before the GPU gate: a busy GPU defers extraction, never the record
            # of what was said.
            if self._config.store_turns and await self._store_turns(job, messages) and self._on_stored:
                self._on_stored()
            if self._gate is not None:
                self._held_by_gate = True
                try:
                    await self._gate(job)
                finally:
                    self._held_by_gate = False
            started = time.perf_counter()  # after the gate: a GPU deferral is not extraction time
            facts_stored, new_count, method = await self._extract_and_store(
                job, messages, watermark, more=more
            )
        except ingest_sql.JobNoLongerClaimed:
            # Another daemon on the database took the job over (this one was thought gone): its
            # facts were rolled back with the finish, and the job is done once, there.
            log.warning(
                "ingest job taken over by another daemon; this run's facts are dropped", extra={"job": job.id}
            )
        except StorageFull:
            await self._release(job)
            raise
        except Exception as exc:
            try:
                await self._record_failure(job, exc)
            except StorageFull:  # the disk filled up meanwhile: not the job's failure
                await self._release(job)
                raise
        else:
            seconds = time.perf_counter() - started
            self.state.last_latency_ms = int(seconds * 1000)
            if self._on_extracted is not None:
                self._on_extracted(seconds, method, facts_stored)
            self.state.jobs_done += 1
            self.state.last_error = None
            log.info(
                "ingest job done",
                extra={
                    "job": job.id,
                    "new_messages": new_count,
                    "facts": facts_stored,
                    "method": method,
                    "ms": self.state.last_latency_ms,
                },
            )
        finally:
            self.state.running_job = None

    async def _store_turns(self, job: IngestJob, messages: list[Message]) -> int:
        """Store the messages never stored as turns before (its own watermark, committed with them),
        before any extraction: a model that is slow, failing or absent never holds them back, and a
        retried job stores none twice. Returns how many memories were written."""
        stored = await self._db.read(lambda conn: ingest_sql.stored_turn_hashes(conn, job.session_key))
        delta = await asyncio.to_thread(compute_delta, messages, stored, 0)
        if not delta.new:
            # Nothing new: what is stored covers it. A shorter resend (the session from its start again)
            # must not shrink the watermark, or its next full post would store the middle turns twice.
            return 0
        said_by = self._speakers(job, messages)
        items = turn_memories(
            delta.new,
            owners=[said_by[id(message)].owner for message in delta.new],
            user_id=job.user_id,
            session_id=job.session_id,
            scope=job.scope,
            received_at=job.received_at,
            occurred_at=job.occurred_at,
            job_id=job.id,
            context=self._turn_context,
            config=self._config,
        )

        def remember(conn: sqlite3.Connection) -> None:
            ingest_sql.save_turn_hashes(
                conn,
                session_key=job.session_key,
                user_id=job.user_id,
                hashes=delta.history_hashes[-MAX_WATERMARK_HASHES:],
            )

        if items:
            # Never merged with each other or with facts: two people may say the same words.
            await self._memories.create(items, dedup=False, extra_work=remember)
        else:
            await self._db.write(remember)
        return len(items)

    async def _extract_and_store(
        self, job: IngestJob, messages: list[Message], watermark: Watermark | None, *, more: bool = False
    ) -> tuple[int, int, str]:
        """Store the facts of ``messages`` new since ``watermark`` (read as the job began: the session
        runs one job at a time); close the job, or (``more``) queue its next step."""
        started = time.perf_counter()
        delta = await asyncio.to_thread(
            compute_delta, messages, watermark.message_hashes if watermark else [], self._config.context_messages
        )
        last_attempt = job.attempts >= self._config.max_attempts
        delta = await same_reach_context(self._db, job, delta)
        said_by = self._speakers(job, messages)
        known = await known_facts(self._db, job, delta.new, said_by) if self._extraction.uses_llm else []
        result = await self._extraction.extract(
            delta,
            speakers=[said_by[id(message)] for message in delta.new],
            context_speakers=[said_by[id(message)] for message in delta.context],
            known=known,
            allow_rules_only=last_attempt,
            read_back=job.scope.visibility == "private",
        )
        turns: dict[str, list[int]] = {}
        if result.facts and self._config.store_turns:
            digests = list(dict.fromkeys(message.digest for message in delta.new))
            turns = await self._db.read(
                lambda conn: job_sql.turns_by_digest(conn, job.user_id, job.session_id, digests)
            )
        scope = job.scope
        items = []
        for fact, extractor in zip(result.facts, result.extractors, strict=True):
            sources = [delta.new[n - 1] for n in fact.source if 1 <= n <= len(delta.new)] or delta.new
            # The turns it was read from: its own messages' (every part of a long one).
            derived_from = [turn for message in sources for turn in turns.get(message.digest, [])]
            structure = structure_of(fact, said_by=other_speaker(sources, said_by, extractor))
            items.append(
                NewMemory(
                    user_id=job.user_id,
                    topic=fact.topic,
                    fact=fact.fact,
                    importance=fact.importance,
                    category=fact.category,
                    source_session=job.session_id,
                    source_channel=scope.channel,
                    agent_id=scope.agent_id,
                    visibility=scope.visibility,
                    metadata={
                        "ingest_job": job.id,
                        "extractor": extractor,  # which one found this fact
                        **({"derived_from": derived_from[-MAX_DERIVED_FROM:]} if derived_from else {}),
                    },
                    occurred_at=job.occurred_at,
                    layer=initial_layer(fact.category, extractor),
                    subject=structure.subject,
                    attribute=structure.attribute,
                    value=structure.value,
                    valid_from=max(self._said_at(job, message) for message in sources),
                    links=structure.links,
                    replaces=fact.replaces,
                    ends=fact.ends and structure.value is not None,
                )
            )

        def finish(conn: sqlite3.Connection) -> None:
            if delta.new or watermark is None:  # nothing new never shrinks the watermark (see _store_turns)
                ingest_sql.save_watermark(
                    conn,
                    session_key=job.session_key,
                    user_id=job.user_id,
                    session_id=job.session_id,
                    hashes=delta.history_hashes[-MAX_WATERMARK_HASHES:],
                    history_hash=delta.history_hash,
                )
            if more:
                ingest_sql.finish_step(conn, job.id, due_at=self._clock(), claimed_by=job.claimed_by)
                return
            ingest_sql.finish(
                conn,
                job.id,
                duration_ms=int((time.perf_counter() - started) * 1000),
                new_messages=len(delta.new),
                facts_stored=len(items),
                method=result.method,
                claimed_by=job.claimed_by,
            )

        if items:
            await self._memories.create(items, extra_work=finish)
            if self._on_stored is not None:
                self._on_stored()
        else:
            await self._db.write(finish)
        return len(items), len(delta.new), result.method

    @staticmethod
    def _speakers(job: IngestJob, messages: list[Message]) -> dict[int, Speaker]:
        """Who wrote each message of the job (by object: the delta holds the same messages)."""
        found = speakers_of(messages, group=job.session_kind == "group", user_names=job.user_names)
        return {id(message): speaker for message, speaker in zip(messages, found, strict=True)}

    @staticmethod
    def _said_at(job: IngestJob, message: Message) -> str:
        """When a message was said: its own time, else the conversation's, else its arrival."""
        return message_time(message.timestamp) or job.occurred_at or job.received_at

    async def _release(self, job: IngestJob) -> None:
        """Put ``job`` back in the queue untried (the disk was full), due after a pause. Raises
        :class:`StorageFull` when even that cannot be written: the job stays claimed by this worker
        until the next round tries again (or a restart requeues it)."""
        self._unreleased = job
        reason = StorageFull().message
        due_at = self._clock() + STORAGE_FULL_PAUSE_S
        with contextlib.suppress(ingest_sql.JobNoLongerClaimed):  # another daemon took it over
            await self._db.write(
                lambda conn: ingest_sql.release(
                    conn, job.id, due_at=due_at, reason=reason, claimed_by=job.claimed_by
                )
            )
        self._unreleased = None

    async def _record_failure(self, job: IngestJob, exc: Exception) -> None:
        reason = f"{type(exc).__name__}: {exc}"
        if not isinstance(exc, LLMUnavailable):
            log.exception("ingest job failed", extra={"job": job.id, "attempt": job.attempts})
        retry_at = None
        if job.attempts < self._config.max_attempts:
            retry_at = self._clock() + self._config.retry_backoff_s * 2 ** (job.attempts - 1)
        await self._db.write(
            lambda conn: ingest_sql.fail(conn, job.id, reason, retry_at=retry_at, claimed_by=job.claimed_by)
        )
        self.state.last_error = reason[:500]
        if retry_at is None:
            self.state.jobs_failed += 1
        log.warning(
            "ingest job will be retried" if retry_at else "ingest job failed for good",
            extra={"job": job.id, "attempt": job.attempts, "reason": reason[:300]},
        )


# Extracted facts of these categories go straight to core: who the user is and what they want
# or corrected is worth keeping without waiting to be read (issue 8).
CORE_CATEGORIES = frozenset({"identity", "preference", "correction"})


def initial_layer(category: str, extractor: str) -> str:
    """The layer an extracted fact starts in: ``core`` for identity, preferences and corrections and
    for everything the rules extractor found (it only takes explicit statements: "remember that…",
    "my X is…", "from now on…"); otherwise ``working``, until the lifecycle promotes or expires it."""
    return "core" if category in CORE_CATEGORIES or extractor == "rules" else "working"

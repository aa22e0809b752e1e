"""Writing, reading and editing memories, with their vectors kept in step.

Embedding happens before the write transaction (it is slow and may fail); the write itself is one
short transaction on the writer thread whose after-commit hook updates the in-memory index. If the
embedder is down, the memory is still stored (nothing accepted is lost) without a vector, counted
in /stats as ``unembedded`` until the daemon's re-embedding worker (:mod:`.reembed`), the backfill
script or a later edit embeds it.

The steps of a write each have a module: write_texts (what each memory is embedded as), write_plan
(merge or supersede, decided before the transaction), write_row (one memory, applied inside it) and
write_index (what the vector index holds after COMMIT).
"""

from __future__ import annotations

import dataclasses
import logging
import sqlite3
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, TypeVar

import numpy as np

from ..errors import EmbedderUnavailable, InvalidRequest, MemoryNotFound, OnlyASecret
from ..models.embedders import Embedder
from ..records import (
    Audience,
    ConversationSession,
    MemoryFilter,
    MemoryHistory,
    MemoryRecord,
    NewMemory,
    Scope,
    speaker_label,
    stored_timestamp,
)
from ..redaction import is_only_secrets, redact
from ..store import embeddings as embedding_sql
from ..store import entities as entity_sql
from ..store import memories as memory_sql
from ..store.db import Database
from ..store.vectors import VectorIndex
from ..vectormath import to_blob
from .corrections import narrow_supersessions
from .index_calls import call_index
from .memory_text import redacted_json, stored_embedding_text, without_secrets
from .timeparse import TimeParser
from .write_index import IndexEntry, apply_index_entries, index_entries
from .write_plan import WritePlan, plan_writes
from .write_row import WriteOutcome, write_one
from .write_texts import embedding_texts

log = logging.getLogger(__name__)

T = TypeVar("T")


class MemoryService:
    """CRUD over memories for the HTTP layer and the CLI.

    Args:
        db: the store.
        index: the vector index of the live model (None when no embedder is configured).
        embedder: embeds on write; failures leave the row unembedded.
        dedup_threshold: cosine at which a new memory updates an existing one.
        supersede_threshold: cosine at which a correction supersedes an older memory.
        time_parser: reads a written-out ``metadata.session_date`` (:meth:`written`).
        session_context: earlier turns a transcript turn written with its session is embedded after.
    """

    def __init__(
        self,
        db: Database,
        index: VectorIndex | None,
        embedder: Embedder | None,
        *,
        dedup_threshold: float = 0.92,
        supersede_threshold: float = 0.6,
        time_parser: TimeParser | None = None,
        session_context: int = 0,
    ) -> None:
        self._time_parser = time_parser
        self._session_context = session_context
        self._db = db
        self._index = index
        self._embedder = embedder
        self._dedup_threshold = dedup_threshold
        self._supersede_threshold = supersede_threshold
        # Bumped after every committed write: caches keyed on it (recall) never serve stale facts.
        self.version = 0

    @property
    def model(self) -> str | None:
        return self._index.model if self._index is not None else None

    # -- writes ----------------------------------------------------------------------------
    def written(
        self,
        user_id: str,
        fact: str,
        *,
        topic: str = "",
        importance: int = 5,
        category: str = "fact",
        source_session: str | None = None,
        source_channel: str | None = None,
        ref: str | None = None,
        metadata: dict[str, Any] | None = None,
        layer: str = "core",
        created_at: datetime | None = None,
        occurred_at: datetime | None = None,
        agent_id: str | None = None,
        visibility: str = "private",
    ) -> NewMemory:
        """A memory someone writes on purpose (``POST /memories``, MCP ``remember``), with the rules
        every such write follows whatever the transport:

        - times are stored as UTC with a ``Z`` (a time without a zone is taken as UTC);
        - the time it is about: ``occurred_at``, else a date in ``metadata.session_date`` (ISO 8601
          or written out, "1:56 pm on 8 May, 2023"), else none (``created_at`` stands in);
        - a transcript turn written with its session ("Melanie: …") is embedded after the turns
          before it; a fact without a speaker label stands alone even with a session (an agent's
          memory_store sends its session key), as extracted facts do.
        """
        metadata = metadata or {}
        fact = fact.strip()
        return NewMemory(
            user_id=user_id,
            fact=fact,
            topic=topic.strip(),
            importance=importance,
            category=category,
            source_session=source_session,
            source_channel=source_channel,
            agent_id=agent_id or None,
            visibility=visibility,
            ref=ref,
            metadata=metadata,
            layer=layer,
            created_at=None if created_at is None else stored_timestamp(created_at),
            occurred_at=self._about_time(occurred_at, metadata),
            embedding_context=self._session_context if source_session and speaker_label(fact) else 0,
        )

    def _about_time(self, occurred_at: datetime | None, metadata: dict[str, Any]) -> str | None:
        if occurred_at is not None:
            return stored_timestamp(occurred_at)
        session_date = metadata.get("session_date")
        if self._time_parser is not None and isinstance(session_date, str) and session_date.strip():
            moment = self._time_parser.moment(session_date[:200])
            if moment is not None:
                return stored_timestamp(moment)
        return None

    async def create(
        self,
        items: Sequence[NewMemory],
        *,
        dedup: bool = True,
        supersede: bool = True,
        extra_work: Callable[[sqlite3.Connection], None] | None = None,
    ) -> list[WriteOutcome]:
        """Store memories in one transaction, merging near-duplicates and applying corrections.

        With ``dedup`` (the default, for extraction and the API alike) a new memory whose cosine to
        a live memory of the same user is at least ``dedup_threshold`` updates that memory instead
        (newer wording and vector, the higher importance, one more access); a ``correction`` that is
        at least ``supersede_threshold`` close to an older memory is stored and the older one is
        marked ``superseded_by`` it (kept, hidden from search); with ``supersede`` False a correction
        is planned like any memory (an import: the file it comes from already reflects the
        correction, and must not hide a fact it also holds). ``extra_work(conn)`` runs inside
        the same transaction (the ingest worker records its watermark there, so facts and
        watermark commit together or not at all).
        """
        items = [without_secrets(item) for item in items]
        texts = await embedding_texts(self._db, items)
        vectors = await self._embed(texts)
        rows = [
            self._with_vector(item, None if vectors is None else vectors[i]) for i, item in enumerate(items)
        ]
        plans = (
            await call_index(
                self._index,
                plan_writes,
                self._index,
                rows,
                vectors,
                dedup_threshold=self._dedup_threshold,
                supersede_threshold=self._supersede_threshold,
                supersede=supersede,
            )
            if dedup and vectors is not None and self._index is not None
            else [WritePlan() for _ in rows]
        )
        # An update an LLM named (the fact it was shown and said this one replaces): a supersession,
        # checked on write like a correction's (same user, reach and subject), never a merge: a
        # merge planned by wording would leave the fact it replaces current.
        plans = [
            WritePlan(supersede=row.replaces) if row.replaces is not None else plan
            for row, plan in zip(rows, plans, strict=True)
        ]
        rows, plans = await narrow_supersessions(self._db, rows, plans)  # only a one-fact memory hides
        if vectors is not None:
            rows = await self._embed_merged(rows, plans, texts)

        def work(conn: sqlite3.Connection) -> tuple[list[WriteOutcome], list[IndexEntry]]:
            outcomes: list[WriteOutcome] = []
            touched: list[int] = []
            for row, plan in zip(rows, plans, strict=True):
                target = plan.merge_into
                if plan.merge_with_batch is not None:
                    target = outcomes[plan.merge_with_batch].record.id
                outcome = write_one(conn, row, target, plan.supersede)
                outcomes.append(outcome)
                touched.append(outcome.record.id)
                if outcome.superseded_id is not None:
                    touched.append(outcome.superseded_id)
                touched.extend(outcome.changed)
            if extra_work is not None:
                extra_work(conn)
            final = memory_sql.get_many(conn, [o.record.id for o in outcomes])
            outcomes = [dataclasses.replace(o, record=final[o.record.id]) for o in outcomes]
            return outcomes, index_entries(conn, self._index, list(dict.fromkeys(touched)))

        outcomes, _ = await self._db.write(work, after_commit=self._apply_index)
        return outcomes

    async def _embed_merged(
        self, rows: list[NewMemory], plans: list[WritePlan], texts: list[str]
    ) -> list[NewMemory]:
        """Give each row that merges into a stored memory the vector of what will be stored.

        A merge keeps the stored row's topic when the newcomer has none, and the stored row's
        session context, so the vector of the newcomer's own text would describe a different
        memory than the one kept. Those rows are embedded again as merged (rare: a repeat fact).
        """
        merges = {i: plan.merge_into for i, plan in enumerate(plans) if plan.merge_into is not None}
        if not merges:
            return rows

        def merged_texts(conn: sqlite3.Connection) -> dict[int, str]:
            stored = memory_sql.get_many(conn, list(set(merges.values())))
            result: dict[int, str] = {}
            for i, memory_id in merges.items():
                existing = stored.get(memory_id)
                if existing is not None:
                    merged = dataclasses.replace(
                        existing, fact=rows[i].fact, topic=rows[i].topic or existing.topic
                    )
                    result[i] = stored_embedding_text(conn, merged)
            return result

        redo = {i: text for i, text in (await self._db.read(merged_texts)).items() if text != texts[i]}
        vectors = await self._embed(list(redo.values())) if redo else None
        if vectors is None:
            return rows
        rows = list(rows)
        for (i, _), vector in zip(redo.items(), vectors, strict=True):
            rows[i] = self._with_vector(rows[i], vector)
        return rows

    async def update(
        self,
        memory_id: int,
        changes: dict[str, Any],
        *,
        user_id: str | None = None,
        audience: Audience,
    ) -> MemoryRecord:
        """Change some fields; a new topic or fact is re-embedded. Only a memory ``audience`` may see
        (else: not found). Only the owner's own tools (an unrestricted audience) change a memory's
        scope: an agent or a group widening it (to every agent, to every group) would reach
        requesters the memory was never said to, and narrowing it would hide it from them.
        ``superseded_by`` must name a memory the same requester may see, of the same reach; setting
        it to None (undoing a supersession) needs a requester that sees the replacing memory."""
        current = await self.get(memory_id, user_id=user_id, audience=audience)
        after = Scope(
            changes.get("agent_id", current.agent_id),
            changes.get("visibility", current.visibility),
            current.source_channel,
        )
        if after != current.scope and not audience.unrestricted:
            raise InvalidRequest(
                "only the owner's tools (no agent_id, a private session) may change a memory's agent or visibility"
            )
        changes = dict(changes)
        if isinstance(changes.get("fact"), str):
            changes["fact"] = redact(changes["fact"]).text
            if is_only_secrets(changes["fact"]):
                raise OnlyASecret()
        if isinstance(changes.get("topic"), str):
            changes["topic"] = redact(changes["topic"]).text
        if isinstance(changes.get("ref"), str):
            changes["ref"] = redact(changes["ref"]).text
        if "metadata" in changes:
            changes["metadata"] = redacted_json(changes["metadata"])
        if changes.get("superseded_by") == memory_id:
            raise InvalidRequest("a memory cannot supersede itself")
        new_topic = changes.get("topic", current.topic)
        new_fact = changes.get("fact", current.fact)
        text_changed = (new_topic, new_fact) != (current.topic, current.fact)
        if text_changed:
            edited = dataclasses.replace(current, topic=new_topic, fact=new_fact)
            text = await self._db.read(lambda conn: stored_embedding_text(conn, edited))
            vectors = await self._embed([text])
            if vectors is not None and self.model is not None:
                changes.update(
                    embedding=to_blob(vectors[0]),
                    embedding_model=self.model,
                    embedding_dim=int(vectors.shape[1]),
                )
            else:
                changes.update(embedding=None, embedding_model=None, embedding_dim=None)

        def work(conn: sqlite3.Connection) -> tuple[MemoryRecord, list[IndexEntry]]:
            undone = current.superseded_by
            if "superseded_by" in changes and changes["superseded_by"] is None and undone is not None:
                # Undoing a supersession brings the memory back where its replacement was read:
                # only for a requester that sees that replacement.
                replacement = memory_sql.get(conn, undone)
                if not audience.unrestricted and (
                    replacement is None or not audience.admits(replacement.scope)
                ):
                    raise InvalidRequest(
                        "only a requester that sees the memory replacing it may undo a supersession"
                    )
            if "superseded_by" in changes and changes["superseded_by"] is not None:
                target = memory_sql.get(conn, int(changes["superseded_by"]))
                if (
                    target is None
                    or target.user_id != (changes.get("user_id") or current.user_id)
                    or not audience.admits(target.scope)
                    or not (audience.unrestricted or target.scope.recalled_alike(after))
                ):
                    raise InvalidRequest(
                        "superseded_by must name another memory of the same user, visible alike"
                    )
            if not memory_sql.update(conn, memory_id, changes):
                raise MemoryNotFound(memory_id)
            record = memory_sql.get(conn, memory_id)
            assert record is not None
            return record, index_entries(conn, self._index, [memory_id])

        record, _ = await self._db.write(work, after_commit=self._apply_index)
        return record

    async def delete(self, memory_id: int, *, user_id: str | None = None, audience: Audience) -> None:
        """Remove a memory for good (its FTS rows go with it through the triggers).

        The memories it superseded are live again (the foreign key sets their ``superseded_by``
        to NULL), so their vectors go back into the index in the same step.
        """
        await self.get(memory_id, user_id=user_id, audience=audience)

        def work(conn: sqlite3.Connection) -> tuple[None, list[IndexEntry]]:
            restored = memory_sql.superseded_by(conn, memory_id)
            if not memory_sql.delete(conn, memory_id):
                raise MemoryNotFound(memory_id)
            return None, [IndexEntry(memory_id), *index_entries(conn, self._index, restored)]

        await self._db.write(work, after_commit=self._apply_index)

    async def with_vectors(self, items: Sequence[NewMemory]) -> list[NewMemory]:
        """``items`` with their vectors attached, for a caller that inserts them in its own transaction
        (through :meth:`write_with_index`); without a vector when the embedder is down, as on create."""
        items = [without_secrets(item) for item in items]
        vectors = await self._embed(await embedding_texts(self._db, items))
        return [
            self._with_vector(item, None if vectors is None else vectors[i]) for i, item in enumerate(items)
        ]

    async def write_with_index(self, work: Callable[[sqlite3.Connection], tuple[T, Sequence[int]]]) -> T:
        """Run ``work(conn)`` in one write transaction; it returns ``(result, touched ids)``.

        For writers beside this service (the lifecycle) that move rows between layers, hide them or
        add new ones: after COMMIT the touched rows are mirrored into the vector index exactly as
        the service's own writes are (vector, layer, or gone when hidden), and ``version`` moves on,
        so caches keyed on it drop what they held.
        """

        def run(conn: sqlite3.Connection) -> tuple[T, list[IndexEntry]]:
            result, touched = work(conn)
            return result, index_entries(conn, self._index, list(dict.fromkeys(touched)))

        result, _ = await self._db.write(run, after_commit=self._apply_index)
        return result

    # -- reads -----------------------------------------------------------------------------
    async def get(self, memory_id: int, *, user_id: str | None = None, audience: Audience) -> MemoryRecord:
        """One memory; with ``user_id`` it must belong to that user, and ``audience`` must be
        allowed to see it (else: not found, the same answer as for a memory that never was)."""

        def read(conn: sqlite3.Connection) -> MemoryRecord | None:
            record = memory_sql.get(conn, memory_id)
            if (
                record is None
                or (user_id is not None and record.user_id != user_id)
                or not audience.admits(record.scope)
            ):
                return None
            return memory_sql.hide_unseen_replacements(conn, [record], audience)[0]

        record = await self._db.read(read)
        if record is None:
            raise MemoryNotFound(memory_id)
        return record

    async def visible(self, memory_ids: Sequence[int], user_id: str, audience: Audience) -> list[int]:
        """Which of these live memories of ``user_id`` ``audience`` may see, in the order given (a
        host that got them from a search asks before it shows them: OpenClaw's authorizeSearchHits)."""
        records = await self._db.read(lambda conn: memory_sql.get_many(conn, list(dict.fromkeys(memory_ids))))
        return [
            mid
            for mid in dict.fromkeys(memory_ids)
            if (record := records.get(mid)) is not None
            and record.user_id == user_id
            and record.superseded_by is None
            and audience.admits(record.scope)
        ]

    async def list_memories(
        self, where: MemoryFilter, *, limit: int, before_id: int | None
    ) -> list[MemoryRecord]:
        def read(conn: sqlite3.Connection) -> list[MemoryRecord]:
            records = memory_sql.list_memories(conn, where, limit=limit, before_id=before_id)
            if where.audience is None:
                return records
            return memory_sql.hide_unseen_replacements(conn, records, where.audience)

        return await self._db.read(read)

    async def sessions(
        self, user_id: str, *, limit: int, offset: int, audience: Audience
    ) -> list[ConversationSession]:
        """The user's conversations (sessions with turns ``audience`` may see), most recently
        active first."""
        return await self._db.read(
            lambda conn: memory_sql.conversation_sessions(
                conn, user_id, limit=limit, offset=offset, audience=audience
            )
        )

    async def history(
        self, memory_id: int, *, user_id: str | None = None, audience: Audience
    ) -> MemoryHistory:
        """What ``memory_id`` replaced, what replaced it, and its merge and summary links (only the
        linked memories ``audience`` may see)."""
        record = await self.get(memory_id, user_id=user_id, audience=audience)
        history = await self._db.read(lambda conn: memory_sql.history(conn, record))
        if audience.unrestricted:
            return history
        seen = history.visible_to(audience)
        return await self._db.read(
            lambda conn: seen.mapped(lambda rows: memory_sql.hide_unseen_replacements(conn, rows, audience))
        )

    async def profile_facts(
        self, user_id: str, *, audience: Audience, limit: int, vital_importance: int = 9
    ) -> list[MemoryRecord]:
        """The user's own current facts a profile is chosen from, that ``audience`` may see."""
        return await self._db.read(
            lambda conn: entity_sql.owner_profile(
                conn, user_id, audience, limit, vital_importance=vital_importance
            )
        )

    async def live_in_layer(self, user_id: str, layer: str, limit: int) -> list[MemoryRecord]:
        """Up to ``limit`` live memories of ``user_id`` in ``layer``, most important first."""
        return await self._db.read(lambda conn: memory_sql.live_in_layer(conn, user_id, layer, limit))

    async def live_count(self, user_id: str, *, audience: Audience) -> int:
        return await self._db.read(lambda conn: memory_sql.live_count(conn, user_id, audience))

    async def counts(self) -> embedding_sql.StoreCounts:
        return await self._db.read(lambda conn: embedding_sql.counts(conn, self.model or ""))

    # -- helpers ---------------------------------------------------------------------------
    async def _embed(self, texts: list[str]) -> np.ndarray | None:
        if self._embedder is None or self._index is None or not texts:
            return None
        try:
            return await self._embedder.embed_documents(texts)
        except EmbedderUnavailable as exc:
            log.warning("storing without embedding", extra={"count": len(texts), "reason": str(exc)})
            return None

    def _with_vector(self, item: NewMemory, vector: np.ndarray | None) -> NewMemory:
        if vector is None or self.model is None:
            return dataclasses.replace(item, embedding=None, embedding_model=None, embedding_dim=None)
        return dataclasses.replace(
            item, embedding=to_blob(vector), embedding_model=self.model, embedding_dim=int(vector.shape[0])
        )

    def _apply_index(self, result: tuple[Any, list[IndexEntry]]) -> None:
        self.version += 1
        if self._index is not None:
            apply_index_entries(self._index, result[1])

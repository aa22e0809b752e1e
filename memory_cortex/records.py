"""The records every layer shares: a stored memory, a memory to store, a list filter, a
conversation, a memory's history, and the rules about their text and timestamps.

The lowest module of the package (no SQL, no I/O, nothing above it imported): the store fills these
from rows, the services pass them around, and the transports turn them into their own shapes. So
neither HTTP nor MCP has to reach into the store to name what they are given.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

Layer = Literal["working", "core", "archive"]
Kind = Literal["fact", "turn"]
Visibility = Literal["private", "shared"]
SessionKind = Literal["private", "group"]
VISIBILITIES: tuple[Visibility, ...] = ("private", "shared")
SESSION_KINDS: tuple[SessionKind, ...] = ("private", "group")


@dataclass(frozen=True)
class Scope:
    """Where one memory may be recalled, beside its user (migration 010).

    ``agent_id``: the agent it belongs to (None: every agent of the user). ``visibility``:
    ``private`` (said in a one-to-one session, or written as private) or ``shared`` (said in a
    group conversation, or written as shared). ``channel``: the conversation it came from; a
    shared memory with a channel is recalled in that channel's group sessions only, a shared one
    without a channel in every group session of the user.
    """

    agent_id: str | None = None
    visibility: Visibility = "private"
    channel: str | None = None

    @property
    def reach(self) -> Scope:
        """This scope as recall sees it: the channel of a private memory plays no part."""
        return self if self.visibility == "shared" else Scope(self.agent_id, "private", None)

    def recalled_alike(self, other: Scope) -> bool:
        """Whether every requester who may see one may see the other: only such memories are
        merged, summarised together, or one supersedes the other."""
        return self.reach == other.reach


@dataclass(frozen=True)
class Audience:
    """Whom a read answers, beside its user: the requester's context. The one rule of who may see
    what lives here and in :meth:`sql`, which say the same thing in Python and in SQL.

    ``agent_id``: the agent asking; it sees memories of every agent (``agent_id`` None) and its
    own, never another agent's. None: the owner's own tools (dashboard, CLI, an MCP client that
    names no agent), which see every agent's memories. ``session_kind``: ``private`` (a one-to-one
    session: every memory of the user) or ``group`` (only ``shared`` memories of ``channel`` and
    the user's shared memories without a channel).
    """

    agent_id: str | None = None
    session_kind: SessionKind = "private"
    channel: str | None = None

    @classmethod
    def of(
        cls, agent_id: str | None, session_kind: SessionKind = "private", channel: str | None = None
    ) -> Audience:
        """From a request's fields, where a blank name means none (clients send "" for unset)."""
        return cls(agent_id or None, session_kind, channel or None)

    @property
    def unrestricted(self) -> bool:
        """Whether it sees every memory of the user (no agent named, a private session)."""
        return self.agent_id is None and self.session_kind == "private"

    def admits(self, scope: Scope) -> bool:
        if self.agent_id is not None and scope.agent_id not in (None, self.agent_id):
            return False
        if self.session_kind == "private":
            return True
        return scope.visibility == "shared" and scope.channel in (None, self.channel)

    def sql(self, alias: str = "") -> tuple[str, tuple[Any, ...]]:
        """`` AND …`` keeping the rows :meth:`admits` (columns ``agent_id``, ``visibility``,
        ``source_channel`` of the table aliased ``alias``), and its parameters."""
        sql, params = "", []  # type: tuple[str, list[Any]]
        if self.agent_id is not None:
            sql += f" AND ({alias}agent_id IS NULL OR {alias}agent_id = ?)"
            params.append(self.agent_id)
        if self.session_kind != "private":
            sql += (
                f" AND {alias}visibility = 'shared'"
                f" AND ({alias}source_channel IS NULL OR {alias}source_channel = ?)"
            )
            params.append(self.channel)
        return sql, tuple(params)


EVERYONE = Audience()  # no agent named, a private session: every memory of the user
PRIVATE_TO_ALL_AGENTS = Scope()  # what every memory was before scopes (migration 010)


def stored_timestamp(moment: datetime) -> str:
    """A moment as every timestamp is stored: UTC, ``2023-05-08T13:56:00.000Z`` (naive = UTC).

    One format everywhere, so that timestamps compare as strings (SQL ranges, the time index).
    """
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC).replace(tzinfo=None)
    return moment.isoformat(timespec="milliseconds") + "Z"


@dataclass(frozen=True)
class MemoryRecord:
    """One row of ``memories`` as the rest of the code sees it (without the BLOB)."""

    id: int
    user_id: str
    topic: str
    fact: str
    importance: int
    category: str
    source_session: str | None
    source_channel: str | None
    ref: str | None
    metadata: dict[str, Any]
    created_at: str
    updated_at: str
    access_count: int
    last_accessed: str | None
    superseded_by: int | None
    embedding_model: str | None
    embedding_dim: int | None
    embedding_context: int
    layer: str
    layer_since: str | None
    compressed_into: int | None
    has_embedding: bool
    occurred_at: str | None = None  # the time it is about, when not created_at (migration 006)
    kind: str = "fact"  # fact | turn (migration 009)
    agent_id: str | None = None  # migration 010: see Scope
    visibility: str = "private"
    # Migration 015: whom it is about (None: the owner), what of them it states, since and until when.
    subject_id: int | None = None
    attribute: str | None = None
    value: str | None = None
    valid_from: str | None = None
    valid_to: str | None = None
    # Set for a requester that may not see the memory ``superseded_by`` names: shown as replaced,
    # without that memory's id (store/memories.hide_unseen_replacements).
    replacement_hidden: bool = False

    @property
    def scope(self) -> Scope:
        return Scope(self.agent_id, self.visibility, self.source_channel)  # type: ignore[arg-type]

    @property
    def about_owner(self) -> bool:
        """Whether it is about the user it belongs to (no other subject named)."""
        return self.subject_id is None

    @property
    def said_at(self) -> str:
        """When it was said: ``valid_from`` when known, else the time it is about."""
        return self.valid_from or self.about_time

    @property
    def about_time(self) -> str:
        """The time this memory is about: ``occurred_at`` when set, else ``created_at``."""
        return self.occurred_at or self.created_at

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> MemoryRecord:
        """From a row of the store's SELECT (a ``sqlite3.Row``: metadata as JSON text)."""
        data = dict(row)
        data["metadata"] = json.loads(data["metadata"] or "{}")
        data["has_embedding"] = bool(data["has_embedding"])
        return cls(**data)


@dataclass(frozen=True)
class NewMemory:
    """What it takes to insert a memory; ``embedding`` is already little-endian float32 bytes."""

    user_id: str
    fact: str
    topic: str = ""
    importance: int = 5
    category: str = "fact"
    source_session: str | None = None
    source_channel: str | None = None
    ref: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    created_at: str | None = None
    embedding: bytes | None = None
    embedding_model: str | None = None
    embedding_dim: int | None = None
    embedding_context: int = 0  # earlier memories of the same session embedded with this one
    layer: str = "core"  # working | core | archive (see migration 004)
    occurred_at: str | None = None  # the time it is about, when not created_at (migration 006)
    kind: str = "fact"  # fact | turn: a message of a conversation, kept verbatim (migration 009)
    agent_id: str | None = None  # migration 010: see Scope (the channel is source_channel)
    visibility: str = "private"
    # Migration 015: whom it is about (None: the owner), the attribute it states with its value, and
    # when it was said (a later statement of the same subject and attribute replaces it).
    subject: SubjectRef | None = None
    attribute: str | None = None
    value: str | None = None
    valid_from: str | None = None
    links: tuple[LinkRef, ...] = ()  # relations read from it, stored with it
    replaces: int | None = None  # a memory an LLM said it updates (checked on write like a correction)
    ends: bool = (
        False  # it says `value` stopped holding: the live fact of that value ends, this one states none
    )

    @property
    def scope(self) -> Scope:
        return Scope(self.agent_id, self.visibility, self.source_channel)  # type: ignore[arg-type]


EntityKind = Literal["self", "person", "pet", "place", "plan", "organisation", "thing"]
ENTITY_KINDS: tuple[EntityKind, ...] = ("self", "person", "pet", "place", "plan", "organisation", "thing")


def entity_key(name: str) -> str:
    """What makes two names one entity of a user: case, spacing and a leading "the" do not count."""
    key = " ".join(name.split()).casefold()
    return key[4:] if key.startswith("the ") else key


@dataclass(frozen=True)
class SubjectRef:
    """An entity named by a fact before it has an id: its name, kind and, for someone known by their
    relation to the owner ("the user's father", "Ana, the user's sister"), that relation."""

    name: str
    kind: EntityKind = "person"
    relation: str | None = None

    @property
    def key(self) -> str:
        return entity_key(self.name)


@dataclass(frozen=True)
class LinkRef:
    """A relation read from a fact: ``subject`` (None: the owner) -``predicate``-> ``object``."""

    predicate: str
    object: SubjectRef
    subject: SubjectRef | None = None


@dataclass(frozen=True)
class Entity:
    """Someone or something a user's memories are about (migration 015); ``kind`` ``self`` is the
    user themself."""

    id: int
    user_id: str
    name: str
    kind: str
    created_at: str


@dataclass(frozen=True)
class EntitySummary:
    """An entity as a list shows it: how many live facts about it and relations naming it the
    requester may see."""

    entity: Entity
    facts: int
    relations: int


@dataclass(frozen=True)
class Relation:
    """``subject`` -``predicate``-> ``object`` between two entities of one user, with the memory it was
    read from (None: written by hand) and the scope of where it was said."""

    id: int
    user_id: str
    subject_id: int
    predicate: str
    object_id: int
    confidence: float
    source_memory_id: int | None
    agent_id: str | None
    visibility: str
    source_channel: str | None
    created_at: str
    subject_name: str = ""
    object_name: str = ""
    ended: str | None = (
        None  # when it ended: said to have ended, or the source memory replaced (its valid_to)
    )

    @property
    def scope(self) -> Scope:
        return Scope(self.agent_id, self.visibility, self.source_channel)  # type: ignore[arg-type]


@dataclass(frozen=True)
class MemoryFilter:
    """What ``GET /memories`` (and the dashboard's table) narrows the rows to; None = any."""

    user_id: str | None = None
    topic: str | None = None
    layer: str | None = None
    category: str | None = None
    min_importance: int | None = None
    max_importance: int | None = None
    created_from: str | None = None  # stored-format timestamps (ISO 8601, Z): created_at >= this
    created_before: str | None = None  # created_at < this
    text: str | None = None  # the topic or the fact contains it, case-insensitively
    include_superseded: bool = False
    kinds: tuple[str, ...] | None = None  # fact and/or turn
    source_session: str | None = None  # one conversation (the dashboard's session view)
    agent_id: str | None = None  # memories of exactly this agent (a filter, not an Audience)
    visibility: str | None = None
    channel: str | None = None
    audience: Audience | None = None  # only what this requester may see (None: no such rule)
    order: str = "id"  # newest first by "id", or by "created" (created_at, then id)
    # With order "created": the created_at of the page cursor's row (before_id), so the cursor is the
    # pair itself and holds when that row is deleted (None: the row is looked up).
    before_created_at: str | None = None


# "Melanie: I ran a charity race…": a turn of a transcript, a group chat or a replayed conversation
# names who said it. One to three capitalised words (any script: "Élodie") before the colon.
_SUBJECT_LABEL = re.compile(r"([^\W\d_][\w'’.-]*(?: [^\W\d_][\w'’.-]*){0,2}):\s")


def speaker_label(head: str) -> str | None:
    """The speaker label a text starts with ("Melanie Ann: …" → "Melanie Ann"), if any."""
    match = _SUBJECT_LABEL.match(head)
    if match and all(word[0].isupper() for word in match.group(1).split()):
        return match.group(1)
    return None


@dataclass(frozen=True)
class RankTraits:
    """What search's boosts and priors read of a candidate: the speaker label its text starts with
    (casefolded; None without one), its length in characters and, for a transcript turn, its
    session."""

    speaker: str | None
    chars: int
    session: str | None


@dataclass(frozen=True)
class ConversationSession:
    """One conversation of a user, from its stored turns (the dashboard's list, the lifecycle's
    session summaries)."""

    session: str
    channel: str | None
    turns: int
    first_said: str
    last_said: str
    last_received: str  # when its newest turn was stored: the session is quiet since then
    last_turn_id: int
    summary_id: int | None  # its live session summary, if one was written
    agent_id: str | None = None  # its turns' agent, and private unless every turn is shared
    visibility: str = "private"
    mixed_scope: bool = False  # its turns do not all reach the same requesters (never summarised)

    @property
    def scope(self) -> Scope:
        return Scope(self.agent_id, self.visibility, self.channel)  # type: ignore[arg-type]


@dataclass(frozen=True)
class MemoryHistory:
    """Where a memory came from and what became of it (the dashboard's detail view)."""

    memory: MemoryRecord
    replaces: list[MemoryRecord]  # rows whose superseded_by is this memory
    replaced_by: list[MemoryRecord]  # the superseded_by chain forward, nearest first
    merged_from: list[MemoryRecord]  # rows a lifecycle merge folded into this one
    merged_into: list[MemoryRecord]
    summarises: list[MemoryRecord]  # archived rows this history summary covers
    summary: MemoryRecord | None  # the summary this archived row was folded into

    def mapped(self, change: Callable[[list[MemoryRecord]], list[MemoryRecord]]) -> MemoryHistory:
        """The same history with every list of records (the memory itself as a list of one)
        passed through ``change``, which keeps their number and order."""
        summary = [] if self.summary is None else [self.summary]
        return MemoryHistory(
            memory=change([self.memory])[0],
            replaces=change(self.replaces),
            replaced_by=change(self.replaced_by),
            merged_from=change(self.merged_from),
            merged_into=change(self.merged_into),
            summarises=change(self.summarises),
            summary=change(summary)[0] if summary else None,
        )

    def visible_to(self, audience: Audience) -> MemoryHistory:
        """The links ``audience`` may see (a history never shows what a search would not)."""

        def seen(rows: list[MemoryRecord]) -> list[MemoryRecord]:
            return [row for row in rows if audience.admits(row.scope)]

        summary = self.summary if self.summary is not None and audience.admits(self.summary.scope) else None
        return MemoryHistory(
            memory=self.memory,
            replaces=seen(self.replaces),
            replaced_by=seen(self.replaced_by),
            merged_from=seen(self.merged_from),
            merged_into=seen(self.merged_into),
            summarises=seen(self.summarises),
            summary=summary,
        )

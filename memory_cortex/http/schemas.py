"""Request and response models of the HTTP API; the OpenAPI document is generated from these.

Requests tolerate what the OpenClaw client sends (``JSON.stringify`` drops undefined fields, messages
carry extra keys): unknown keys are ignored on the seed's endpoints, optional fields may be absent
or null. Types are strict: ``"limit": "10"`` is a 400, not silently coerced (but ``10.0`` is 10:
JSON has one number type, and JSON Schema counts a whole float as an integer).
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal, Self

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    GetJsonSchemaHandler,
    RootModel,
    Strict,
    StrictStr,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic.json_schema import JsonSchemaValue, SkipJsonSchema

from ..records import Audience, Kind, Layer, SessionKind, Visibility
from ..redaction import no_secret_in_name
from ..services.hit_view import DebugHit

# Most memories one POST /memories may carry.
MAX_BATCH = 1000
# Ids are SQLite rowids; a larger integer cannot even be bound to a query.
MAX_ID = 2**63 - 1
# The characters str.strip() removes (str.isspace()), spelled so that ECMA-262 (the document's
# readers), Python and Rust regexes agree: a text matching NOT_BLANK is not blank once stripped.
NOT_BLANK = r"[^\t\n\v\f\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"


def _whole_float_to_int(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def iso_timestamp(value: Any, field_name: str | None) -> Any:
    """An ISO 8601 string as a datetime (strict mode refuses strings for datetime, and JSON has no
    other way to send one); anything else goes on to the type check."""
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError as exc:
            raise ValueError(f"{field_name} must be an ISO 8601 timestamp") from exc
    return value


# A strict integer that also takes 10.0 (never "10", true or 2.5). Bounds go inside the Annotated,
# before the validator: a Field(ge=…) on ``Integer | None`` would reach the JSON schema as "ge".
Integer = Annotated[int, Strict(), BeforeValidator(_whole_float_to_int)]
PositiveInteger = Annotated[int, Field(ge=1), Strict(), BeforeValidator(_whole_float_to_int)]
RowId = Annotated[int, Field(ge=1, le=MAX_ID), Strict(), BeforeValidator(_whole_float_to_int)]
# What a memory says of its subject (issue 33), in every response that shows a memory.
SubjectIdOut = Annotated[
    int | None,
    Field(description="The entity it is about (GET /entities/{id}); null: the user themself, or a turn."),
]
AttributeOut = Annotated[
    str | None,
    Field(description="The attribute of its subject it states (home, employer, job, age, diet, …), if any."),
]
ValueOut = Annotated[str | None, Field(description="That attribute's value, as said.")]
ValidFromOut = Annotated[str | None, Field(description="When it was said (the message's time), if known.")]
ValidToOut = Annotated[
    str | None,
    Field(
        description="When a later statement of the same subject and attribute replaced it (null: current)."
    ),
]
Importance = Annotated[int, Field(ge=1, le=10), Strict(), BeforeValidator(_whole_float_to_int)]


# Names that identify (users, sessions, channels): bounded, and no control characters, which no
# client means and which would break logs, file names of the Markdown mirror and terminal output.
MAX_USER_ID_CHARS = 200
NO_CONTROL_CHARS = r"^[^\x00-\x1f\x7f]*$"
UserId = Annotated[
    str,
    Field(
        max_length=MAX_USER_ID_CHARS,
        pattern=NO_CONTROL_CHARS,
        description="Whose memories (at most 200 characters, no control characters); absent/empty → the"
        " default user.",
    ),
    AfterValidator(no_secret_in_name),
]
SessionName = Annotated[
    str, Field(max_length=500, pattern=NO_CONTROL_CHARS), AfterValidator(no_secret_in_name)
]
AgentId = Annotated[
    str,
    Field(
        max_length=200,
        pattern=NO_CONTROL_CHARS,
        description="The agent (OpenClaw's agent id); absent/null/empty → none named.",
    ),
    AfterValidator(no_secret_in_name),
]
ChannelName = Annotated[
    str, Field(max_length=200, pattern=NO_CONTROL_CHARS), AfterValidator(no_secret_in_name)
]


# No NUL in a request's text: SQLite's text functions and FTS would cut the text there. Free-form
# objects (a memory's metadata) are JSON in the store, where a NUL stays an escape, and may hold one.
NO_NUL = r"^[^\x00]*$"


# A date or a date-time as text (the handler parses it; empty = no bound): documented as the
# formats it accepts.
IsoMoment = Annotated[
    str, Field(json_schema_extra={"anyOf": [{"format": "date"}, {"format": "date-time"}, {"maxLength": 0}]})
]


class _Request(BaseModel):
    """A request body or query: strict types, unknown keys ignored, and no NUL in any text field
    (400; the document says so with a ``pattern`` on each string, so clients and fuzzers know)."""

    model_config = ConfigDict(strict=True, extra="ignore")

    @model_validator(mode="after")
    def _no_nul(self) -> Self:
        for name, value in self:
            if _holds_nul(value):
                raise ValueError(f"{name} must not contain NUL characters (\\u0000)")
        return self

    @classmethod
    def __get_pydantic_json_schema__(cls, core_schema: Any, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        schema = handler.resolve_ref_schema(handler(core_schema))
        for prop in schema.get("properties", {}).values():
            _forbid_nul(prop)
        return schema


def _holds_nul(value: Any) -> bool:
    """A NUL in a text field, or in a list of texts (nested request models check themselves)."""
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, list | tuple):
        return any(_holds_nul(item) for item in value)
    return False


def _forbid_nul(prop: dict[str, Any]) -> None:
    """Add :data:`NO_NUL` to a property's string schemas (its ``anyOf`` branches and array items)."""
    for branch in prop.get("anyOf", []):
        _forbid_nul(branch)
    if prop.get("type") == "array" and isinstance(prop.get("items"), dict):
        _forbid_nul(prop["items"])
    if prop.get("type") != "string" or prop.get("pattern") in (NO_NUL, NO_CONTROL_CHARS):
        return
    if any(key in prop for key in ("enum", "const", "format", "anyOf")):  # no NUL fits those anyway
        return
    if "pattern" in prop:
        prop.setdefault("allOf", []).append({"pattern": NO_NUL})
    else:
        prop["pattern"] = NO_NUL


class ErrorBody(BaseModel):
    code: str = Field(description="Stable machine-readable code, e.g. invalid_request.")
    message: str = Field(description="What went wrong, for a human.")
    run_id: int | None = Field(
        None,
        description="lifecycle_busy: the run under way (GET /lifecycle/runs/{run_id}); import_busy: the"
        " import under way (GET /import/runs/{run_id}).",
    )


class ErrorResponse(BaseModel):
    """Every error the API returns has this shape."""

    error: ErrorBody


# -- scopes ---------------------------------------------------------------------------------
class _AudienceFields(_Request):
    """Who asks, beside the user: every read that returns memories takes these and answers only
    with what that requester may see (the rule of ``memory_cortex.records.Audience``)."""

    agent_id: AgentId | None = Field(
        None,
        description="The agent asking: it sees memories of every agent and its own, never another"
        " agent's. Absent: the owner's own tools, which see every agent's memories.",
    )
    session_kind: SessionKind = Field(
        "private",
        description="private (a one-to-one session: every memory of the user) or group (a group"
        " conversation: only shared memories of this channel and the user's shared memories without"
        " a channel).",
    )
    channel: ChannelName | None = Field(
        None, description="The conversation asking from (in a group session: which group it is)."
    )

    def audience(self) -> Audience:
        return Audience.of(self.agent_id, self.session_kind, self.channel)


# -- search ---------------------------------------------------------------------------------
LayerFilter = Annotated[
    list[Layer] | None,
    Field(
        description="Memory layers to search; absent/null → working and core (the archive only when named)."
    ),
]
KindFilter = Annotated[
    list[Kind] | None,
    Field(
        min_length=1,
        description="Kinds of memory to search: fact (extracted, imported, written) and/or turn (a message"
        " as said); absent/null → both.",
    ),
]


# A request's own similarity floor (absent: search.min_similarity; 0: every hit, however unrelated).
MIN_SIMILARITY_DOC = (
    "Leave out hits that share no keyword with the query and whose cosine to it is below this (a vital"
    " memory, lifecycle.protect_importance or protected_topics, never); absent → search.min_similarity"
    " (0.15 by default), 0 → every hit however unrelated."
)


class HybridSearchRequest(_AudienceFields):
    """``POST /hybrid-search``: the seed's exact shape."""

    query: str = Field(description="Free text; any characters are safe (never raw FTS syntax).")
    user_id: UserId | None = None
    limit: PositiveInteger | None = Field(
        None, description="How many results (1…search.max_limit); absent → default."
    )
    mode: Literal["hybrid", "fts", "vector"] = Field(
        "hybrid", description="hybrid (default), or one retriever alone for debugging and benchmarks."
    )
    layers: LayerFilter = None
    kinds: KindFilter = None
    min_similarity: float | None = Field(None, ge=0, le=1, description=MIN_SIMILARITY_DOC)


class SearchResultItem(BaseModel):
    id: int
    user_id: str
    topic: str
    fact: str
    importance: int
    score: float = Field(
        description="What results are ordered by: relevance, × the importance/recency/reads multiplier with"
        " ranking.enabled, or the LLM reranker's rank score."
    )
    relevance: float = Field(
        description="(w_fts·fts_norm + w_vec·cosine) × the factors the search stages set (time, subject,"
        " length) + session support; just w_fts·fts_norm + w_vec·cosine when no stage touched the hit"
        " (see /search/debug for each hit's factors)."
    )
    source: str = Field(description='"fts5+vector", "fts5" or "vector": which retriever proposed it.')
    category: str
    ref: str | None
    created_at: str
    occurred_at: str | None = Field(description="The time it is about when not created_at.")
    fts_score: float = Field(description="bm25 normalised to the best hit of this query, 0…1.")
    vector_score: float = Field(description="Cosine similarity to the query (0 when unknown).")
    layer: Layer = Field(description="working, core or archive.")
    kind: Kind = Field(description="fact (extracted, imported or written) or turn (a message as said).")
    agent_id: str | None = Field(None, description="The agent it belongs to (null: every agent).")
    visibility: Visibility = Field("private", description="private or shared.")
    channel: str | None = Field(None, description="The conversation it came from (source_channel).")
    subject_id: SubjectIdOut = None
    attribute: AttributeOut = None
    value: ValueOut = None
    valid_from: ValidFromOut = None
    valid_to: ValidToOut = None


class HybridSearchResponse(BaseModel):
    results: list[SearchResultItem]
    count: int


# -- memories -------------------------------------------------------------------------------
class SearchDebugRequest(_AudienceFields):
    """``POST /search/debug``: the same inputs as a hybrid search."""

    query: str = Field(max_length=20000, description="Free text, as for /hybrid-search.")
    user_id: UserId | None = None
    limit: PositiveInteger | None = Field(None, description="How many results per list; absent → default.")
    layers: LayerFilter = None
    kinds: KindFilter = None


class SearchDebugResponse(BaseModel):
    query: str
    user_id: str
    fts_match: str = Field(description="The MATCH expression sent to the word (porter) index.")
    fts_trigram_match: str = Field(description="The MATCH expression sent to the trigram index.")
    fts_substrings: list[str] = Field(description="Short CJK runs looked up with LIKE.")
    vector_used: bool = Field(description="False when the query embedding failed or was too slow.")
    fts_weight: float
    vector_weight: float
    ranking_enabled: bool
    rerank: str = Field(
        description='The LLM reranker on the fused list: "off", "reranked", "timeout", "unavailable", "invalid",'
        ' "cooling_down" or "too_few" (see rerank.*).'
    )
    min_similarity: float = Field(
        0.0, description="search.min_similarity: the floor the hits marked below_floor fall under."
    )
    fused: list[DebugHit] = Field(
        description="What /hybrid-search returns for the same request, with no similarity floor: the hits"
        " it leaves out are here too, marked below_floor."
    )
    fts_only: list[DebugHit]
    vector_only: list[DebugHit]
    timings_ms: dict[str, dict[str, float]] = Field(
        description="Per list (hybrid, fts, vector), ms per stage in the order run: fts_and_embed and vector"
        " (gather), then those the config turns on: time, speakers, speaker_query, feedback, priors, then"
        " hydrate, ranking, rerank, and total."
    )


class MemoryIn(_Request):
    """One memory to store. Only ``fact`` is required."""

    model_config = ConfigDict(strict=True, extra="forbid")

    fact: str = Field(
        min_length=1,
        max_length=20000,
        description="The memory itself (not blank).",
        json_schema_extra={"pattern": NOT_BLANK},
    )
    user_id: UserId | None = None
    topic: str = Field("", max_length=500, description="Short label, searchable.")
    importance: Importance = Field(5, description="1 (trivia) … 10 (identity).")
    category: str = Field("fact", min_length=1, max_length=64, description="identity, preference, fact…")
    source_session: SessionName | None = None
    source_channel: SessionName | None = Field(
        None,
        description="The conversation it is from; a shared memory with one is recalled in that group only.",
    )
    agent_id: AgentId | None = Field(
        None, description="The agent it belongs to; absent → every agent of the user."
    )
    visibility: Visibility = Field(
        "private",
        description="private (recalled in the user's one-to-one sessions only) or shared (also in group"
        " sessions: of source_channel when given, else of every group).",
    )
    ref: str | None = Field(None, max_length=500, description="Caller's reference (e.g. a dialogue id).")
    metadata: dict[str, Any] = Field(default_factory=dict, description="Free-form JSON object.")
    layer: Layer = Field("core", description="working, core (default: written on purpose) or archive.")
    created_at: datetime | None = Field(
        None,
        description="When the memory is from (ISO 8601); absent → now.",
        json_schema_extra={"format": "date-time"},
    )
    occurred_at: datetime | None = Field(
        None,
        description="The time the memory is about, when not created_at (ISO 8601; no zone = UTC);"
        " absent → metadata.session_date when that names a date, else created_at.",
        json_schema_extra={"format": "date-time"},
    )

    @field_validator("created_at", "occurred_at", mode="before")
    @classmethod
    def _parse_timestamp(cls, value: Any, info: ValidationInfo) -> Any:
        return iso_timestamp(value, info.field_name)

    @field_validator("fact")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("fact must not be blank")
        return value


class MemoryBatchIn(_Request):
    """Several memories in one transaction."""

    model_config = ConfigDict(strict=True, extra="forbid")

    memories: list[MemoryIn] = Field(min_length=1, max_length=MAX_BATCH, description="1…1000 memories.")


class MemoryCreateBody(
    RootModel[MemoryIn | MemoryBatchIn | Annotated[list[MemoryIn], Field(min_length=1, max_length=MAX_BATCH)]]
):
    """``POST /memories``: one memory, ``{"memories": [...]}``, or a bare array of memories."""


def _no_null_defaults(schema: dict[str, Any]) -> None:
    """Absent-but-not-null fields have no default in the document (null would contradict their type)."""
    for prop in schema.get("properties", {}).values():
        if "default" in prop and prop["default"] is None and "anyOf" not in prop:
            del prop["default"]


class MemoryPatch(_Request):
    """Fields to change; absent fields stay as they are. ``superseded_by: null`` restores."""

    model_config = ConfigDict(strict=True, extra="forbid", json_schema_extra=_no_null_defaults)

    # May be absent but not null: SkipJsonSchema keeps null out of the document, the handler answers
    # 400. Bounds sit inside the Annotated so that they never meet the None.
    fact: (
        Annotated[str, Field(min_length=1, max_length=20000, json_schema_extra={"pattern": NOT_BLANK})]
        | SkipJsonSchema[None]
    ) = None
    topic: Annotated[str, Field(max_length=500)] | SkipJsonSchema[None] = None
    importance: Importance | SkipJsonSchema[None] = None
    category: Annotated[str, Field(min_length=1, max_length=64)] | SkipJsonSchema[None] = None
    ref: str | None = Field(None, max_length=500)
    metadata: dict[str, Any] | SkipJsonSchema[None] = None
    superseded_by: RowId | None = Field(None, description="Id of the memory that replaces this one.")
    layer: Layer | SkipJsonSchema[None] = Field(None, description="Move it: archive, restore to core…")
    visibility: Visibility | SkipJsonSchema[None] = Field(None, description="private or shared.")
    agent_id: AgentId | None = Field(None, description="The agent it belongs to; null → every agent.")
    occurred_at: datetime | None = Field(
        None,
        description="The time it is about (ISO 8601); null → created_at.",
        json_schema_extra={"format": "date-time"},
    )

    @field_validator("occurred_at", mode="before")
    @classmethod
    def _parse_timestamp(cls, value: Any) -> Any:
        return iso_timestamp(value, "occurred_at")


class MemoryOut(BaseModel):
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
    occurred_at: str | None = Field(description="The time it is about when not created_at.")
    updated_at: str
    access_count: int
    last_accessed: str | None
    superseded_by: int | None = Field(
        description="The memory that replaced this one; null when it is current, or when the requester"
        " may not see the replacing memory (then `replaced` is still true)."
    )
    replaced: bool = Field(
        False, description="Another memory replaced this one (superseded: hidden from search, kept)."
    )
    layer: Layer
    kind: Kind = Field(description="fact (extracted, imported or written) or turn (a message as said).")
    agent_id: str | None = Field(None, description="The agent it belongs to (null: every agent of the user).")
    visibility: Visibility = Field(
        "private", description="private (one-to-one sessions only) or shared (group sessions too)."
    )
    derived_from: list[int] = Field(
        default_factory=list, description="An extracted fact: the ids of the turns it was extracted from."
    )
    layer_since: str | None = Field(description="When it entered its layer (null: at created_at).")
    compressed_into: int | None = Field(
        description="The history summary this archived memory is folded into."
    )
    embedded: bool = Field(description="True when a vector of the live model is stored.")
    embedding_model: str | None
    subject_id: SubjectIdOut = None
    attribute: AttributeOut = None
    value: ValueOut = None
    valid_from: ValidFromOut = None
    valid_to: ValidToOut = None
    action: str | None = Field(
        None, description='Writes only: "created", or "merged" into this existing near-duplicate.'
    )
    superseded: int | None = Field(
        None, description="Writes only: id of the older memory this correction hid."
    )


class MemoryListResponse(BaseModel):
    memories: list[MemoryOut]
    count: int
    next_before_id: int | None = Field(description="Pass as before_id for the next page; null at the end.")
    next_before_created_at: str | None = Field(
        description="The created_at of that row: pass as before_created_at beside before_id (order=created),"
        " so the next page comes even when that row is deleted in between; null at the end."
    )


class SessionListQuery(_AudienceFields):
    """Query string of ``GET /sessions``."""

    model_config = ConfigDict(strict=False, extra="ignore")

    user_id: UserId | None = None
    limit: int = Field(50, ge=1, le=1000)
    offset: int = Field(0, ge=0, le=1_000_000, description="Sessions to skip (the next page: next_offset).")


class SessionOut(BaseModel):
    """One conversation posted to ``/ingest``, from its stored turns."""

    session: str
    channel: str | None
    turns: int = Field(description="Turns stored (a long message split in parts counts each part).")
    first_said: str = Field(description="When its first turn was said (or stored, without a timestamp).")
    last_said: str
    last_received: str = Field(description="When its newest turn was stored.")
    summary_id: int | None = Field(description="Its live session summary (the lifecycle's sessions stage).")
    agent_id: str | None = None
    visibility: Visibility = Field("private", description="shared when every turn was said in a group.")


class SessionListResponse(BaseModel):
    sessions: list[SessionOut] = Field(description="Most recently active first.")
    count: int
    next_offset: int | None = Field(description="Pass as offset for the next page; null at the end.")


class MemoryHistoryOut(BaseModel):
    """``GET /memories/{id}/history``: the memory and the rows linked to it."""

    memory: MemoryOut
    replaces: list[MemoryOut] = Field(description="Memories this one superseded, newest first.")
    replaced_by: list[MemoryOut] = Field(
        description="The chain of memories that superseded this one, nearest first (empty while live)."
    )
    merged_from: list[MemoryOut] = Field(description="Near-duplicates a lifecycle merge folded into it.")
    merged_into: list[MemoryOut] = Field(description="The memory a lifecycle merge folded it into.")
    summarises: list[MemoryOut] = Field(description="Archived memories this history summary covers.")
    summary: MemoryOut | None = Field(description="The history summary this archived memory is part of.")
    ingest_job: int | None = Field(description="The extraction job that stored it (null: written directly).")


class MemoryBatchResponse(BaseModel):
    memories: list[MemoryOut]
    count: int


class MemoryCreated(RootModel[MemoryOut | MemoryBatchResponse]):
    """The stored memory when one was sent, else the batch, in the order sent."""


class MemoryListQuery(_AudienceFields):
    """Query string of ``GET /memories`` (strings, so types are coerced here)."""

    model_config = ConfigDict(strict=False, extra="ignore")

    user_id: UserId | None = None
    topic: str | None = None
    limit: int = Field(50, ge=1, le=1000)
    before_id: int | None = Field(
        None,
        ge=1,
        le=MAX_ID,
        description="Keyset cursor (next_before_id): the rows after this one in the chosen order.",
    )
    before_created_at: str | None = Field(
        None,
        max_length=40,
        description="With before_id and order=created: the created_at of the before_id row"
        " (next_before_created_at); the cursor is then the pair itself, and a page comes even when that row"
        " was deleted (with before_id alone the row is looked up among the user's rows, and a deleted one"
        " ends the list). Without before_id: only the rows created before this instant.",
    )
    order: Literal["id", "created"] = Field(
        "id",
        description="Newest first by id (the order rows were stored), or by created_at (then id): the"
        " dashboard's list, where an imported or back-dated memory sits at its own date.",
    )
    include_superseded: bool = False
    layer: Layer | None = None
    kinds: str | None = Field(
        None,
        pattern=r"^(fact|turn)(,(fact|turn))*$",
        description="fact, turn, or both comma-separated (absent: both).",
    )
    session: SessionName | None = Field(
        None,
        description="Only this conversation's memories (source_session): its turns, and the facts and"
        " summary made from it.",
    )
    category: str | None = Field(None, max_length=64)
    min_importance: int | None = Field(None, ge=1, le=10)
    max_importance: int | None = Field(None, ge=1, le=10)
    since: IsoMoment | None = Field(
        None, description="created_at on or after: an ISO 8601 date or date-time (UTC unless it has a zone)."
    )
    until: IsoMoment | None = Field(
        None,
        description="created_at on or before: a date (that whole day) or a date-time (UTC unless zoned).",
    )
    q: str | None = Field(
        None, max_length=500, description="Text the topic or fact contains (case-insensitive)."
    )
    visibility: Visibility | None = Field(None, description="Only private or only shared memories.")
    source_channel: ChannelName | None = Field(None, description="Only memories from this conversation.")


class MemoryCreateQuery(_Request):
    """Query string of ``POST /memories``."""

    model_config = ConfigDict(strict=False, extra="ignore")

    dedup: bool = Field(
        True, description="Merge near-duplicates and apply corrections (default); false stores as given."
    )


class ScopeQuery(_AudienceFields):
    """Optional owner check on ``/memories/{id}``: another user's memory, or one the requester
    (agent, session kind, channel) may not see, answers 404 (blank user: the default user)."""

    model_config = ConfigDict(strict=False, extra="ignore")

    user_id: UserId | None = None


class VisibleRequest(_AudienceFields):
    """``POST /visible-memories``: which of these memories a requester may see (a host asks before it
    shows hits it got elsewhere: OpenClaw's ``authorizeSearchHits``)."""

    model_config = ConfigDict(strict=True, extra="ignore")

    ids: list[RowId] = Field(max_length=MAX_BATCH, description="Memory ids, at most 1000.")
    user_id: UserId | None = None


class VisibleResponse(BaseModel):
    ids: list[int] = Field(
        description="The live ones of the user that the requester may see, in the order asked."
    )


class DeletedResponse(BaseModel):
    deleted: bool
    id: int


# -- ingest, recall, context ---------------------------------------------------------------
class IngestMessage(BaseModel):
    """One message as OpenClaw sends it. Keys other than these are ignored, and so is a ``name``,
    ``owner``, ``timestamp`` or ``id`` of a type it cannot be: a conversation is never refused for a
    message's metadata, so their schemas accept any JSON value."""

    model_config = ConfigDict(extra="ignore")

    role: str = Field(max_length=64, strict=True)
    content: str | list[Any] | None = Field(
        None, description="Text, or a list of blocks ({type: 'text', text}); other blocks are ignored."
    )
    name: Any = Field(
        None,
        description="Who wrote it (a group member's display name): the turn is stored as theirs, and what"
        " they say about themselves is about them. A string (a number is read as its text); anything else"
        " is ignored. Any JSON value is accepted: a message is never refused for its metadata.",
    )
    owner: Any = Field(
        None,
        description="true: the user (the memory's owner) wrote it; false: someone else did (OpenClaw's"
        " senderIsOwner). Absent: decided by user_names and the session kind (see docs/concepts/"
        "ingestion.md). Anything but a boolean is ignored (any JSON value is accepted).",
    )
    timestamp: Any = Field(
        None,
        description="When it was said: epoch milliseconds or seconds, or ISO 8601 (a later statement"
        " replaces an earlier one by this time, not by arrival). Anything else is ignored (any JSON"
        " value is accepted).",
    )
    id: Any = Field(
        None,
        description="The client's message id, kept as the turn's ref: a string, or an integer read as its"
        " text. Anything else is ignored (any JSON value is accepted).",
    )


class IngestRequestBody(BaseModel):
    """``POST /ingest``: the whole session history every time; only the new part is extracted."""

    model_config = ConfigDict(extra="ignore")

    messages: list[IngestMessage] = Field(description="The full session history, oldest first.")
    session_id: (
        Annotated[
            StrictStr, Field(max_length=500, pattern=NO_CONTROL_CHARS), AfterValidator(no_secret_in_name)
        ]
        | Integer
        | None
    ) = Field(None, union_mode="left_to_right", description="Session; absent → one default session per user.")
    channel: (
        Annotated[
            StrictStr, Field(max_length=200, pattern=NO_CONTROL_CHARS), AfterValidator(no_secret_in_name)
        ]
        | None
    ) = None
    user_id: Annotated[UserId, Strict()] | None = None
    agent_id: Annotated[AgentId, Strict()] | None = Field(
        None, description="The agent of the conversation: its memories are that agent's."
    )
    session_kind: SessionKind = Field(
        "private",
        description="private (one-to-one: its memories are private) or group (its memories are shared in"
        " this channel; without a channel, in this session_id's).",
    )
    user_names: list[Annotated[str, Field(max_length=200)]] | None = Field(
        None,
        max_length=50,
        description="The speaker names (messages' name) that are the user, the memory's owner; a message's"
        " own owner flag wins. Absent, and no message flagged: in a private session every human message is"
        " the user's, in a group session nobody is the user.",
    )
    debounce: bool = Field(
        True, strict=True, description="false: extract now (before a compaction, at session end)."
    )
    occurred_at: datetime | None = Field(
        None,
        strict=True,  # the body model is lax elsewhere; a number is not a timestamp here
        description="The time the conversation is about, when not now (a replayed history): the facts"
        " extracted from it carry it (ISO 8601; no zone = UTC).",
        json_schema_extra={"format": "date-time"},
    )

    @field_validator("occurred_at", mode="before")
    @classmethod
    def _parse_timestamp(cls, value: Any) -> Any:
        return iso_timestamp(value, "occurred_at")


class IngestAccepted(BaseModel):
    status: Literal["queued"]
    session_id: str | None
    pending: int = Field(description="Jobs waiting in the queue, this one included.")


class IngestJobOut(BaseModel):
    id: int
    user_id: str
    session_id: str | None
    channel: str | None
    status: str
    attempts: int
    last_error: str | None
    received_at: str
    message_count: int
    started_at: str | None
    finished_at: str | None
    duration_ms: int | None
    new_messages: int | None
    facts_stored: int | None
    method: str | None


class IngestJobsQuery(BaseModel):
    model_config = ConfigDict(extra="ignore")

    status: Literal["pending", "running", "done", "failed"] | None = None
    limit: int = Field(50, ge=1, le=500)


class IngestJobsResponse(BaseModel):
    jobs: list[IngestJobOut]
    count: int


class IngestJobDetail(BaseModel):
    job: IngestJobOut
    facts: list[MemoryOut] = Field(description="The memories this job stored, in the order stored.")


class RetryResponse(BaseModel):
    retried: bool
    id: int


class RecallRequest(_AudienceFields):
    """``POST /recall``: the seed's shape."""

    query: str = Field(max_length=20000)
    user_id: UserId | None = None
    layers: LayerFilter = None
    kinds: KindFilter = None


class RecallResponse(BaseModel):
    response: str
    memories_searched: int = Field(description="Live memories of the user that the search covered.")
    memories_used: int = Field(description="Facts given to the synthesis, or listed.")
    degraded: bool = Field(
        description="True when the answer is worse than the daemon is set up to give: the LLM was down or"
        " out of time (recall.timeout_s in all) and response lists the facts, or the search itself ran out"
        " of time and nothing was recalled. A list from a daemon without an LLM for answers is not degraded."
    )
    cached: bool
    answer_kind: Literal["synthesis", "list", "none"] = Field(
        "synthesis",
        description="synthesis: written by the LLM from the facts; list: the facts themselves, one per line"
        " (no LLM is set for answers, or it failed: see degraded); none: nothing was recalled.",
    )


class ContextRequest(_AudienceFields):
    """``POST /context``: the prompt block every client would otherwise rebuild."""

    query: str = Field(max_length=20000)
    user_id: UserId | None = None
    max_tokens: Integer = Field(500, ge=1, le=20000, description="Cap, at ~4 characters per token.")
    max_facts: Integer = Field(15, ge=1, le=200)
    layers: LayerFilter = None
    kinds: KindFilter = None
    min_similarity: float | None = Field(None, ge=0, le=1, description=MIN_SIMILARITY_DOC)
    budget_ms: int | None = Field(
        None,
        ge=1,
        le=60_000,
        description="How long the caller waits (the OpenClaw plugin: recallTimeoutMs): the search stops"
        " then and the answer is an empty block, degraded. At most recall.context_timeout_ms applies.",
    )


class ContextResponse(BaseModel):
    context: str = Field(
        description='"## Long-Term Memories", the recalled-as-data label and one line per memory: the user\'s'
        " profile (their own current facts), then the facts that answer the question, then conversation"
        ' turns, newest first; "" when none.'
    )
    facts: int
    profile: int = Field(
        0, description="How many of the lines, right after the label, are the user's profile."
    )
    degraded: bool = Field(
        False, description="true: the search did not finish within the budget; the block is empty this time."
    )


# -- Markdown import ------------------------------------------------------------------------
# Bounds of one POST /import (the body is also bounded by server.max_body_bytes).
MAX_IMPORT_FILES = 1000
MAX_IMPORT_FILE_CHARS = 2_000_000
MAX_IMPORT_MEMORIES = 5000


class MarkdownImportRequest(_Request):
    """``POST /import``: an OpenClaw workspace sent as its files' content (never a server path)."""

    model_config = ConfigDict(strict=True, extra="forbid")

    user_id: UserId | None = None
    agent_id: AgentId | None = Field(
        None,
        description="The agent whose workspace it is: its memories are that agent's; absent → every agent's.",
    )
    files: dict[
        Annotated[str, Field(min_length=1, max_length=500)],
        Annotated[str, Field(max_length=MAX_IMPORT_FILE_CHARS)],
    ] = Field(
        min_length=1,
        max_length=MAX_IMPORT_FILES,
        description='Relative path → Markdown text: "MEMORY.md" (core memories) and'
        ' "memory/YYYY-MM-DD.md" or "memory/YYYY-MM-DD-<slug>.md" daily logs (working memories);'
        " other paths are listed in ignored_files.",
    )

    @field_validator("files")
    @classmethod
    def _storable(cls, files: dict[str, str]) -> dict[str, str]:
        # Checked before anything is written: a lone surrogate in the last file must not leave
        # the first ones imported.
        for path, text in files.items():
            try:
                path.encode("utf-8")
                text.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise ValueError(f"{path[:80]!r}: text contains unpaired UTF-16 surrogates") from exc
        return files


class MarkdownImportResponse(BaseModel):
    user_id: str
    files: list[str] = Field(description="The memory files read: MEMORY.md first, then the daily logs.")
    ignored_files: list[str] = Field(description="Paths that are not memory files (left alone).")
    memories: int = Field(
        description="Bullets and paragraphs found: added + merged + skipped + too_long + secrets."
    )
    added: int = Field(description="New memories.")
    merged: int = Field(description="Folded into a near-duplicate (stored, or earlier in this import).")
    skipped: int = Field(description="Already stored with this exact text, or repeated in the workspace.")
    too_long: int = Field(description="Longer than 20,000 characters: not a memory, left out.")
    secrets: int = Field(
        description="Nothing but a secret (a password, key or card number): never stored. Secrets inside"
        " a longer memory are masked as [secret removed]."
    )


class ImportRunOut(BaseModel):
    """One import as it stands: what ``POST /import`` answers (202) and ``GET /import/runs/{import_id}``
    gives, during the import and after it."""

    id: int
    user_id: str
    agent_id: str | None
    status: Literal["running", "done", "failed", "interrupted"] = Field(
        description="failed: see error. interrupted: the daemon stopped while it ran; send the workspace"
        " again (what is stored is skipped)."
    )
    started_at: str
    finished_at: str | None
    done: int = Field(description="Memories of the workspace handled so far (skipped ones count at once).")
    total: int = Field(
        description="Memories the workspace holds (0 until the import has read what is stored)."
    )
    result: MarkdownImportResponse | None = Field(description="What the import did, once status is done.")
    error: str | None = Field(description="Why it failed or was interrupted.")


# -- stats and health -----------------------------------------------------------------------
class EmbedderState(BaseModel):
    backend: str
    model: str
    ok: bool
    dim: int | None
    last_error: str | None


class LLMState(BaseModel):
    backend: str
    model: str
    ok: bool = Field(description="Up as far as the daemon knows (a start-up probe counts).")
    last_error: str | None = Field(description="The last failure's message (kept after a later success).")
    last_latency_s: float | None = Field(description="The latency of the last call that answered.")
    last_call: Literal["ok", "failed"] | None = Field(
        None, description="How the last real call ended (null: none since start, or rules only)."
    )
    last_ok_at: str | None = Field(None, description="When a call last answered (ISO 8601, UTC).")
    last_error_at: str | None = Field(None, description="When a call last failed (ISO 8601, UTC).")


class IngestState(BaseModel):
    pending: int
    running: int
    done: int
    failed: int
    running_job: int | None
    last_latency_ms: int | None
    last_error: str | None


class GpuState(BaseModel):
    """One GPU; null where its source does not report the value."""

    name: str
    vendor: str = Field(description='"amd", "nvidia", "intel" or "unknown".')
    hardware_id: str = Field(description='The source\'s id, e.g. "/gpu-amd/0" (LHM) or "amdgpu/0".')
    load_percent: float | None = Field(description="Core load, 0…100.")
    vram_used_mb: float | None
    vram_free_mb: float | None
    vram_total_mb: float | None
    core_temp_c: float | None
    hotspot_temp_c: float | None
    power_w: float | None = Field(description="Package power.")


class HostState(BaseModel):
    """The machine the daemon runs on (inside WSL2: the VM), from psutil."""

    cpu_percent: float
    ram_used_mb: float
    ram_total_mb: float
    process_rss_mb: float = Field(description="Resident memory of the daemon itself.")


class HardwareState(BaseModel):
    """The latest hardware snapshot, its age and its source."""

    enabled: bool
    source: str = Field(description='"pyamdgpuinfo", "lhm" (LibreHardwareMonitor) or "none".')
    endpoint: str | None = Field(description="The data.json URL polled when the source is lhm.")
    taken_at: str = Field(description="When the sensors were last polled (ISO 8601, UTC).")
    gpu_read_at: str | None = Field(description="When the GPU numbers below were read; null if never.")
    age_s: float | None = Field(description="Seconds since gpu_read_at.")
    stale: bool = Field(
        description="True when the GPU numbers are not current; they never hold extraction back."
    )
    stale_reason: str | None = Field(description='Why: "timeout after 2s", "HTTP 500 from data.json"…')
    consecutive_failures: int
    poll_interval_s: float = Field(description="Pause before the next poll: interval_s, or the back-off.")
    gpu: GpuState | None = Field(description="The watched GPU (hardware.gpu_name; AMD first by default).")
    gpus: list[GpuState]
    host: HostState | None


class DeferralState(BaseModel):
    job_id: int
    reason: str = Field(description="Why the job was held: load over the window, or too little free VRAM.")
    waited_s: float
    ran_anyway: bool = Field(description="True when max_deferral_s ran out while the GPU was still busy.")
    finished_at: str


class SchedulerStats(BaseModel):
    """The GPU gate in front of the extraction worker."""

    busy_reason: str | None = Field(description="Why the GPU counts as busy now; null when it does not.")
    holding_job: int | None = Field(description="The job held back right now, if any.")
    holding_since: str | None
    deferred_jobs: int = Field(description="Jobs held back since start.")
    ran_anyway: int = Field(description="Of those, jobs run at the maximum deferral, GPU still busy.")
    deferred_seconds: float
    recent: list[DeferralState] = Field(description="The last deferrals, oldest first.")


class SearchLatency(BaseModel):
    """Percentiles of the last 1,000 /hybrid-search calls, timed in the handler (null before any)."""

    samples: int
    p50_ms: float | None
    p95_ms: float | None
    p99_ms: float | None


class MirrorState(BaseModel):
    """Where the Markdown mirror is, for a host that lists it (OpenClaw's memory publicArtifacts)."""

    dir: str = Field(description="markdown.sync_dir, absolute, on the daemon's host.")
    folders: dict[str, str] = Field(
        description="user_id → that user's sub-folder (MEMORY.md, memory/YYYY-MM-DD.md), for users with memories."
    )
    default_user_id: str = Field(description="The user a request without user_id speaks for.")


class ReembedState(BaseModel):
    """The worker that gives stale and unembedded rows the live model's vector (embeddings.reembed)."""

    enabled: bool = Field(
        description="Whether the worker runs (embeddings.reembed; off: only scripts/backfill-embeddings.py does it)."
    )
    running: bool = Field(description="A pass is under way.")
    done: int = Field(description="Rows given a vector of the live model since the daemon started.")
    remaining: int = Field(description="Rows the running pass has still to do (0 between passes).")


class StorageState(BaseModel):
    full: bool = Field(
        description="A write was refused for lack of disk space and none has committed since: writes"
        " answer 507 disk_full until space is freed; reads work."
    )
    full_since: str | None = Field(description="When the first write of this episode was refused (UTC).")
    refused_writes: int = Field(description="Writes refused for lack of space since the daemon started.")
    free_bytes: int | None = Field(
        description="Free space on the filesystem of the SQLite file; null on PostgreSQL (the disk is"
        " the server's)."
    )


class StatsResponse(BaseModel):
    total_memories: int = Field(description="Every row, superseded ones included.")
    live_memories: int = Field(description="Rows that search can return.")
    superseded: int
    per_user: dict[str, int] = Field(description="Live memories per user.")
    per_layer: dict[str, int] = Field(
        description="Live memories per layer (working, core, archive), all users."
    )
    embedded: int = Field(description="Rows with a vector of the live model.")
    stale_embeddings: int = Field(
        description="Rows embedded by another model: left out of vector search until re-embedded."
    )
    unembedded: int = Field(
        description="Rows without a vector (the embedder was down): left out until embedded."
    )
    reembedding: ReembedState
    vector_index_rows: int
    db_bytes: int = Field(
        description="Size of the store: the SQLite file plus its WAL, or the PostgreSQL database."
    )
    uptime_s: float
    embedder: EmbedderState
    llm: LLMState
    ingest: IngestState
    hardware: HardwareState
    scheduler: SchedulerStats
    search_latency: SearchLatency
    markdown_mirror: MirrorState | None = Field(
        None, description="The Markdown mirror the daemon keeps (markdown.sync_dir); null when off."
    )
    storage: StorageState


class SystemHistoryQuery(_Request):
    model_config = ConfigDict(strict=False, extra="ignore")

    minutes: int = Field(
        360, ge=1, le=10080, description="How far back (the buffer keeps hardware.chart_hours)."
    )


class ChartPointOut(BaseModel):
    t: str = Field(description="When the sensors were polled (ISO 8601, UTC).")
    gpu_load_percent: float | None = Field(description="Null while the GPU numbers are stale or unknown.")
    vram_used_mb: float | None
    vram_total_mb: float | None
    gpu_temp_c: float | None
    cpu_percent: float | None
    ram_used_mb: float | None
    process_rss_mb: float | None


class SystemHistoryResponse(BaseModel):
    interval_s: float = Field(description="The poll interval (points are further apart while sensors fail).")
    points: list[ChartPointOut] = Field(description="Oldest first.")


class OverviewQuery(_AudienceFields):
    """Query string of ``GET /stats/overview``: the memories counted are those the requester
    (``agent_id``, ``session_kind``, ``channel``) may see; the daemon's own work is counted whole."""

    model_config = ConfigDict(strict=False, extra="ignore")

    user_id: UserId | None = None
    days: int = Field(30, ge=1, le=366, description="How many UTC days, today included.")


class OverviewDayOut(BaseModel):
    day: str = Field(description="A UTC day, YYYY-MM-DD.")
    live_by_layer: dict[str, int] = Field(
        description="Live memories of the user at the day's end, by the layer each is in now."
    )
    live_by_kind: dict[str, int] = Field(description="The same totals by kind: fact, turn, summary.")
    facts_by_method: dict[str, int] = Field(
        description="Facts created that day by how they were made: llm, rules, llm+rules, summary, direct."
    )
    jobs_received: int = Field(description="Extraction jobs received that day (all users).")
    jobs_done: int
    jobs_failed: int
    backlog: int = Field(description="Jobs waiting at the day's end (today: now).")
    extraction_p50_ms: float | None = Field(description="Median duration of the jobs finished that day.")
    extraction_p95_ms: float | None


class OverviewCountOut(BaseModel):
    name: str
    count: int


class OverviewRunOut(BaseModel):
    run_id: int
    started_at: str
    trigger: str
    status: str
    moves: dict[str, int] = Field(description="Rows moved per kind (promoted, expired, merged, archived…).")


class OverviewSearchPointOut(BaseModel):
    t: str = Field(description="The minute's start (ISO 8601, UTC).")
    count: int = Field(description="Searches in that minute (/hybrid-search and MCP search_memory).")
    p50_ms: float
    p95_ms: float


class OverviewResponse(BaseModel):
    user_id: str
    days: list[OverviewDayOut] = Field(description="Oldest first, every day of the window.")
    methods: list[str] = Field(description="The extraction methods seen in the window, in chart order.")
    categories: list[OverviewCountOut] = Field(description="Live facts per category, largest first.")
    topics: list[OverviewCountOut] = Field(description="Live facts per topic, the largest few.")
    lifecycle_runs: list[OverviewRunOut] = Field(description="The recent real (not dry) runs, oldest first.")
    backlog_now: int = Field(description="Extraction jobs pending or running now (all users).")
    search: list[OverviewSearchPointOut] = Field(
        description="Search latency per minute, kept in memory since the daemon started (minutes without"
        " searches left out)."
    )
    search_kept_minutes: int = Field(description="How many minutes the in-memory search series holds.")
    daemon_wide: list[str] = Field(
        description="The fields counted over the whole daemon (every user and agent), whoever asks: the"
        " extraction jobs of each day, backlog_now, lifecycle_runs and search. Everything else counts the"
        " memories of user_id that the requester (agent_id, session_kind, channel) may see."
    )


class HealthResponse(BaseModel):
    status: str = Field(
        description='"ok", or "degraded" when the embedder is down (search is FTS-only) or the disk is'
        " full (writes refused)."
    )
    embedder_ok: bool
    disk_full: bool = Field(
        False,
        description="The database refuses writes for lack of disk space (507 disk_full); reads work."
        " Cleared by the next write that commits.",
    )
    uptime_s: float
    version: str = Field(description="The running release (also in /metrics as memory_cortex_build_info).")


# -- lifecycle ------------------------------------------------------------------------------
class LifecycleRunQuery(_Request):
    """Query string of ``POST /lifecycle/run`` (no body needed)."""

    model_config = ConfigDict(strict=False, extra="ignore")

    user_id: UserId | None = Field(
        None,
        description="Only this user's memories; absent/empty → every user (FTS optimize and the index"
        " check always cover the whole store).",
    )
    dry_run: bool = Field(False, description="true: plan every stage, change nothing; logged as a dry run.")


class LifecyclePreviewQuery(_Request):
    """Query string of ``GET /lifecycle/preview``."""

    model_config = ConfigDict(strict=False, extra="ignore")

    user_id: UserId | None = Field(None, description="Only this user's memories; absent/empty → every user.")


class LifecycleLogQuery(_Request):
    """Query string of ``GET /lifecycle/log``."""

    model_config = ConfigDict(strict=False, extra="ignore")

    limit: int = Field(20, ge=1, le=200, description="How many runs, newest first.")


class LifecycleGroupOut(BaseModel):
    """A merge group (the rows hidden behind the kept one) or a history summary (its sources)."""

    user_id: str
    into: int | None = Field(description="The kept memory, or the summary (null in a dry run: not written).")
    ids: list[int] = Field(description="The memories merged into it, or summarised by it.")
    period: str | None = Field(description="A summary's month (YYYY-MM); null for a merge.")
    session: str | None = Field(
        None, description="A session summary's session (ids then empty: the summary names its turns)."
    )


class LifecycleStageOut(BaseModel):
    name: Literal["promote", "merge", "decay", "sessions", "compress", "maintain"]
    status: Literal["done", "planned", "skipped", "failed"] = Field(
        description="planned: a dry run's plan; skipped: see reason (retried next run)."
    )
    reason: str | None
    duration_ms: float
    counts: dict[str, int] = Field(description="Complete counts per kind (promoted, merged, archived…).")
    ids: dict[str, list[int]] = Field(description="Memory ids per kind (at most lifecycle.report_max_ids).")
    groups: list[LifecycleGroupOut]
    reasons: dict[str, str] = Field(
        default_factory=dict,
        description="Why, by memory id: decay gives the formula's numbers for each memory it archives,"
        ' and "protected: …" for each one below the threshold it keeps (ids.protected); promote gives'
        ' "protected: …" for each expired working memory it moves to core instead of the archive.',
    )


class LifecycleReportOut(BaseModel):
    """What one lifecycle run did (or a dry run would do), stage by stage."""

    run_id: int | None = Field(description="Its row in GET /lifecycle/log; null for a preview.")
    trigger: str = Field(description='"api", "schedule" or "preview".')
    dry_run: bool
    user_id: str | None
    status: Literal["running", "done", "interrupted", "failed"]
    now: str = Field(description="The moment the run judged ages and decay by (UTC).")
    started_at: str
    finished_at: str | None
    rows_before: int = Field(description="Memories in the store before the run (every row).")
    rows_after: int | None = Field(description="…and after it: the lifecycle never deletes.")
    error: str | None
    stages: list[LifecycleStageOut]


class LifecycleRunOut(BaseModel):
    id: int
    trigger: str
    dry_run: bool
    status: Literal["running", "done", "interrupted", "failed"] = Field(
        description="interrupted: the daemon stopped mid-run; the next run completes the work."
    )
    started_at: str
    finished_at: str | None
    report: LifecycleReportOut | None = Field(
        description="The stages that committed (null before the first)."
    )


class LifecycleLogResponse(BaseModel):
    runs: list[LifecycleRunOut]
    count: int


class LifecycleRunStatusOut(LifecycleRunOut):
    """One run as it stands: what ``POST /lifecycle/run`` answers (202) and
    ``GET /lifecycle/runs/{run_id}`` gives until the run is done."""

    stage: str | None = Field(
        description="The stage under way while status is running (promote, merge, decay, sessions,"
        " compress, maintain); null once the run ended."
    )
    stages_done: int = Field(
        description="Stages ended so far: done, planned (a dry run) or skipped; a failed stage is not counted."
    )
    stages_total: int = Field(description="Stages in a run.")


# -- MCP ------------------------------------------------------------------------------------
# Documentation only: POST /mcp hands its body to the MCP SDK, which parses and answers it.
class McpMessage(BaseModel):
    """One MCP message (JSON-RPC 2.0): a request (with ``id``) or a notification (without)."""

    model_config = ConfigDict(extra="allow")

    jsonrpc: Literal["2.0"]
    method: str = Field(description="initialize, tools/list, tools/call, resources/read, server/discover, …")
    id: int | str | None = Field(None, description="Present on requests; absent on notifications (202).")
    params: dict[str, Any] | None = None


class McpError(BaseModel):
    code: int = Field(description="JSON-RPC error code, e.g. -32602 (invalid params).")
    message: str
    data: Any = None


class McpReply(BaseModel):
    """A JSON-RPC response: ``result`` on success, ``error`` otherwise."""

    jsonrpc: Literal["2.0"]
    id: int | str | None
    result: dict[str, Any] | None = None
    error: McpError | None = None

"""The MCP server over the daemon's services: eight tools and the profile resource.

One builder serves both transports (stdio for ``python -m memory_cortex mcp``, streamable HTTP at
``/mcp``). The tools are thin, like the HTTP handlers: validate the arguments (the SDK does it from
the signatures below, which also become the tools' JSON schemas), call one service, shape the
answer. So a memory written through MCP is deduplicated, embedded and indexed exactly like one
POSTed to ``/memories``.

The acting user is fixed when the server is built (``mcp.user_id`` or ``--user``): no tool takes a
user id, so nothing a model writes into a call can read or change another user's memories.

No ``from __future__ import annotations`` here: the SDK reads each tool's signature to build its
schema, and the limits in those signatures come from the config, i.e. from local variables that a
string annotation could not be resolved against.
"""

import logging
from dataclasses import dataclass
from typing import Annotated, Literal

from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import AfterValidator, BaseModel, Field

from .. import __version__
from ..config import Config, RankingConfig, SearchConfig
from ..models.facts import Category
from ..records import EVERYONE, Audience, Layer
from ..redaction import no_secret_in_name
from ..services.entities import EntityService
from ..services.hit_view import DebugHit, debug_hits
from ..services.memories import MemoryService
from ..services.profile import ProfileService
from ..services.recall import RecallService
from ..services.search import DEFAULT_LAYERS, SearchService
from .entity_tools import register_entity_tools
from .tool_errors import tool_errors

# No NUL in a stored text (as the HTTP API refuses one): neither SQLite's text functions nor
# PostgreSQL's text type keep it.
NO_NUL = r"^[^\x00]*$"

log = logging.getLogger(__name__)

SERVER_NAME = "memory-cortex"
PROFILE_URI = "memory://profile"
# Memories written through MCP say so (source_channel), for /memories listings and exports.
SOURCE_CHANNEL = "mcp"

INSTRUCTIONS = """\
Memory Cortex is the user's long-term memory, shared by every agent they use. It holds facts about
the user from earlier conversations: who they are, what they prefer, the people and projects in
their life, what they decided.
- At the start of a conversation, read the resource memory://profile (the facts known for certain).
- Before answering anything that may depend on the user's past (their preferences, plans, people,
  earlier decisions), call search_memory, or recall for a one-sentence answer.
- When the user tells you something lasting about themselves, or asks you to remember something,
  call remember with one self-contained sentence.
- When a remembered fact is wrong or no longer true, store the right one with remember
  (category "correction") or call forget with the outdated memory's id.
Memories are about the user; never store secrets such as passwords or keys."""

SEARCH_DESCRIPTION = """\
Search the user's long-term memory for facts relevant to a question or topic.

Use it before answering anything that may depend on what the user said in earlier conversations:
their name, preferences, plans, projects, people they know, decisions they made. Write the query in
natural language; both the words and the meaning count ("where does the user live" also finds
"Moved to Porto last spring").

Returns the best matches, most relevant first, each with its id (for forget), the fact, its topic,
category, importance (1-10), layer, when it was stored and its score. An empty list means nothing
relevant is remembered. For one short answer instead of the raw facts, use recall."""

REMEMBER_DESCRIPTION = """\
Store a fact about the user in long-term memory, so that later conversations (with any agent) know it.

Use it when the user states something lasting about themselves (identity, preferences,
relationships, projects, decisions) or asks you to remember something. Write ONE self-contained
sentence that makes sense without this conversation, e.g. "The user's daughter Mia was born in
2019." Do not store small talk, secrets (passwords, keys) or what is already remembered.

Near-duplicates are merged: if a memory says almost the same thing, it is updated instead of
copied (action "merged", with that memory's id). A fact with category "correction" replaces the
older memory it contradicts; that memory's id comes back as "superseded". Returns the stored
memory's id."""

FORGET_DESCRIPTION = """\
Forget one memory by its id (ids come from search_memory or search_debug).

By default the memory is archived: it no longer appears in searches, recall or the profile, but it
is kept and can still be found with search_memory(layers=["archive"]). When a newer memory replaces
it, pass superseded_by with that memory's id instead: the old one is hidden as outdated. Only when
the user explicitly asks for a memory to be erased for good, pass hard_delete=true: that cannot be
undone.

Returns the id and what was done: "archived", "superseded" or "deleted"."""

RECALL_DESCRIPTION = """\
Answer a question about the user from their long-term memory, in one to three sentences.

The answer is written by the memory's own model from the best matching memories only, so it is
short and grounded. Use it for a direct question ("what is my sister's name?", "which editor do I
use?"). When answer_kind is "list", no model wrote it (none is set up for answers, or it failed:
then degraded is true) and the answer is the matching facts, one per line. When you need the
individual memories or their ids, use search_memory instead."""

SEARCH_DEBUG_DESCRIPTION = """\
Explain how a search ranks memories: for debugging retrieval, not for answering the user.

Runs the same search as search_memory and shows, for each result, its keyword part (fts_score: the
full-text bm25 score normalised to this query's best hit, 0-1), its meaning part (vector_score: the
cosine similarity of the embeddings), relevance = fts_weight*fts_score + vector_weight*vector_score,
the final score (the relevance, times the importance/recency/reads multiplier when ranking is on)
and which retriever proposed it (source). Also returns the FTS5 MATCH expression built from the
query, whether the vector side ran, and the time each stage took in milliseconds. It searches with
no similarity floor: a result search_memory leaves out as unrelated is shown, with below_floor true.
Results shown here do not count as read."""

PROFILE_DESCRIPTION = """\
What is known about the user for certain: their core memories (identity, preferences,
relationships, projects, decisions, facts) as Markdown, grouped by category, most important first.
Read it at the start of a conversation to personalise it. Owner-only: it holds the memories of
every agent and every conversation, private and shared; in a group conversation or as one agent
among several, use search_memory or recall with agent_id, session_kind and channel instead."""


# -- results (the tools' output schemas) ------------------------------------------------------
class FoundMemory(BaseModel):
    id: int = Field(description="The memory's id (for forget).")
    fact: str
    topic: str
    category: str
    importance: int = Field(description="1 (trivia) to 10 (identity-defining).")
    layer: str = Field(description="core (lasting), working (recent) or archive (forgotten).")
    kind: str = Field("fact", description="fact (what is known) or turn (a message as it was said).")
    created_at: str = Field(description="When it was stored (UTC, ISO 8601).")
    about_time: str = Field(
        description="The time it is about (UTC, ISO 8601): when it happened if known, else when stored."
    )
    score: float = Field(description="How well it matches the query; higher is better.")
    agent_id: str | None = Field(None, description="The agent it belongs to (null: every agent).")
    visibility: str = Field("private", description="private (one-to-one sessions) or shared (groups too).")
    channel: str | None = Field(None, description="The conversation it came from.")


class SearchMemoryResult(BaseModel):
    results: list[FoundMemory]
    count: int


class RememberResult(BaseModel):
    id: int = Field(description="The memory that now holds the fact.")
    action: Literal["created", "merged"] = Field(
        description="created: a new memory; merged: a near-identical memory was updated instead."
    )
    superseded: int | None = Field(description="Id of the older memory this correction replaced, if any.")
    fact: str = Field(description="The fact as stored.")
    layer: str


class ForgetResult(BaseModel):
    id: int
    action: Literal["archived", "superseded", "deleted"]


class RecallResult(BaseModel):
    answer: str
    memories_used: int = Field(description="How many memories the answer was built from.")
    degraded: bool = Field(
        description="True: the model failed or was too slow (the answer is the facts as a list), or the"
        " search ran out of time."
    )
    cached: bool
    answer_kind: Literal["synthesis", "list", "none"] = Field(
        "synthesis",
        description="synthesis: written by the model; list: the facts, one per line; none: nothing recalled.",
    )


class SearchDebugResult(BaseModel):
    results: list[DebugHit]
    fts_match: str = Field(description="FTS5 MATCH expression on the word index ('' = none).")
    fts_trigram_match: str = Field(description="FTS5 MATCH expression on the trigram index (CJK text).")
    fts_substrings: list[str] = Field(description="Short CJK runs matched with LIKE.")
    vector_used: bool = Field(description="False: the embedder was unavailable and the search was FTS-only.")
    fts_weight: float
    vector_weight: float
    ranking_enabled: bool
    min_similarity: float = Field(
        0.0, description="search.min_similarity: the floor the results marked below_floor fall under."
    )
    timings_ms: dict[str, float]


# -- the server -------------------------------------------------------------------------------
@dataclass(frozen=True)
class McpServices:
    """What the tools call: the same service objects the HTTP handlers use (which count reads and
    time searches themselves, so a tool call counts exactly as an HTTP request does)."""

    memories: MemoryService
    search: SearchService
    recall: RecallService
    entities: EntityService


def acting_user(config: Config, override: str | None = None) -> str:
    """The user every MCP client of this server acts as: ``--user``, else ``mcp.user_id``, else
    ``users.default_user_id``."""
    return override or config.mcp.user_id or config.users.default_user_id


def build_mcp_server(services: McpServices, config: Config, user_id: str) -> MCPServer:
    """The MCP server acting as ``user_id`` over ``services``.

    Args:
        services: the services the tools call.
        config: limits (search), scoring weights (for search_debug) and the profile size.
        user_id: whose memories every tool reads and writes.
    """
    limits: SearchConfig = config.search
    ranking: RankingConfig = config.ranking
    profile = ProfileService(services.memories, config.mcp.profile_max_facts)
    server = MCPServer(SERVER_NAME, title="Memory Cortex", version=__version__, instructions=INSTRUCTIONS)

    # Like the HTTP API, a longer query is cut (to search.max_query_chars) rather than refused.
    Query = Annotated[
        str,
        Field(
            min_length=1,
            description="What to look for, in natural language (e.g. 'where does the user live').",
        ),
    ]
    Limit = Annotated[
        int,
        Field(ge=1, le=limits.max_limit, description=f"How many memories to return (1-{limits.max_limit})."),
    ]
    Layers = Annotated[
        list[Layer] | None,
        Field(
            description="Layers to search: core (lasting facts), working (recent, not yet consolidated),"
            " archive (forgotten; only when asked for). Default: core and working."
        ),
    ]
    Kinds = Annotated[
        list[Literal["fact", "turn"]] | None,
        Field(
            min_length=1,
            description="Kinds to search: fact (what is known about the user) and/or turn (messages of"
            " past conversations, as said). Default: both.",
        ),
    ]
    MemoryId = Annotated[int, Field(ge=1, le=2**63 - 1, description="The memory's id, from search_memory.")]
    # Whose context a read answers, as on HTTP (memory_cortex.records.Audience): absent, every memory.
    AgentId = Annotated[
        str | None,
        Field(
            max_length=200,
            description="Only what this agent may see: memories of every agent and its own. Absent: all.",
        ),
    ]
    SessionKindArg = Annotated[
        Literal["private", "group"],
        Field(
            description="private: every memory; group: only shared ones (of channel, or shared everywhere)."
        ),
    ]
    Channel = Annotated[
        str | None, Field(max_length=200, description="The group asking from (with session_kind group).")
    ]
    read_only = ToolAnnotations(read_only_hint=True, open_world_hint=False)

    @server.tool(
        name="search_memory",
        title="Search memory",
        description=SEARCH_DESCRIPTION,
        annotations=read_only,
    )
    async def search_memory(
        query: Query,
        limit: Limit = limits.default_limit,
        layers: Layers = None,
        kinds: Kinds = None,
        agent_id: AgentId = None,
        session_kind: SessionKindArg = "private",
        channel: Channel = None,
    ) -> SearchMemoryResult:
        audience = Audience.of(agent_id, session_kind, channel)
        with tool_errors():
            result = await services.search.find(
                query, user_id, limit, layers=layers or DEFAULT_LAYERS, kinds=kinds, audience=audience
            )
        found = [
            FoundMemory(
                id=hit.memory.id,
                fact=hit.memory.fact,
                topic=hit.memory.topic,
                category=hit.memory.category,
                importance=hit.memory.importance,
                layer=hit.memory.layer,
                kind=hit.memory.kind,
                created_at=hit.memory.created_at,
                about_time=hit.memory.about_time,
                score=round(hit.score, 6),
                agent_id=hit.memory.agent_id,
                visibility=hit.memory.visibility,
                channel=hit.memory.source_channel,
            )
            for hit in result.hits
        ]
        return SearchMemoryResult(results=found, count=len(found))

    @server.tool(
        name="remember",
        title="Remember a fact",
        description=REMEMBER_DESCRIPTION,
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False),
    )
    async def remember(
        fact: Annotated[
            str,
            Field(
                min_length=1,
                max_length=20000,
                pattern=NO_NUL,
                description="One self-contained sentence about the user, e.g. 'The user is vegetarian.'",
            ),
        ],
        topic: Annotated[
            str,
            Field(
                max_length=500, pattern=NO_NUL, description="A 2-4 word label, e.g. 'diet' or 'sister Anna'."
            ),
        ] = "",
        importance: Annotated[
            int, Field(ge=1, le=10, description="1 (trivia) to 10 (identity-defining); 5 when unsure.")
        ] = 5,
        category: Annotated[
            Category,
            Field(description="What kind of fact; 'correction' replaces the older fact it contradicts."),
        ] = "fact",
        agent_id: Annotated[
            str | None,
            AfterValidator(lambda name: name and no_secret_in_name(name)),
            Field(max_length=200, description="The agent it belongs to; absent: every agent."),
        ] = None,
        visibility: Annotated[
            Literal["private", "shared"],
            Field(description="private (recalled one-to-one only) or shared (in every group session too)."),
        ] = "private",
    ) -> RememberResult:
        if not fact.strip():
            raise ToolError("fact must not be blank")
        memory = services.memories.written(
            user_id,
            fact,
            topic=topic,
            importance=importance,
            category=category,
            # A shared fact written here is shared in every group; the channel would name one group.
            source_channel=SOURCE_CHANNEL if visibility == "private" else None,
            layer="core",  # said on purpose, like POST /memories
            agent_id=agent_id,
            visibility=visibility,
        )
        with tool_errors():
            (outcome,) = await services.memories.create([memory], dedup=True)
        record = outcome.record
        log.info(
            "mcp remember",
            extra={"memory_id": record.id, "action": outcome.action, "superseded": outcome.superseded_id},
        )
        return RememberResult(
            id=record.id,
            action="merged" if outcome.action == "merged" else "created",
            superseded=outcome.superseded_id,
            fact=record.fact,
            layer=record.layer,
        )

    @server.tool(
        name="forget",
        title="Forget a memory",
        description=FORGET_DESCRIPTION,
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=False),
    )
    async def forget(
        memory_id: MemoryId,
        superseded_by: Annotated[
            int | None,
            Field(ge=1, le=2**63 - 1, description="Id of the newer memory that replaces this one, if any."),
        ] = None,
        hard_delete: Annotated[
            bool,
            Field(description="Erase the memory for good. Only when the user explicitly asks for it."),
        ] = False,
    ) -> ForgetResult:
        if hard_delete and superseded_by is not None:
            raise ToolError("pass either superseded_by or hard_delete, not both")
        with tool_errors():
            if hard_delete:
                await services.memories.delete(memory_id, user_id=user_id, audience=EVERYONE)
                action: Literal["archived", "superseded", "deleted"] = "deleted"
            elif superseded_by is not None:
                await services.memories.update(
                    memory_id, {"superseded_by": superseded_by}, user_id=user_id, audience=EVERYONE
                )
                action = "superseded"
            else:
                await services.memories.update(
                    memory_id, {"layer": "archive"}, user_id=user_id, audience=EVERYONE
                )
                action = "archived"
        log.info("mcp forget", extra={"memory_id": memory_id, "action": action})
        return ForgetResult(id=memory_id, action=action)

    @server.tool(name="recall", title="Recall", description=RECALL_DESCRIPTION, annotations=read_only)
    async def recall(
        query: Annotated[
            str,
            Field(
                min_length=1,
                description="A question about the user, e.g. 'what does the user do for a living?'",
            ),
        ],
        kinds: Kinds = None,
        agent_id: AgentId = None,
        session_kind: SessionKindArg = "private",
        channel: Channel = None,
    ) -> RecallResult:
        audience = Audience.of(agent_id, session_kind, channel)
        with tool_errors():
            answer = await services.recall.recall(query, user_id, kinds=kinds, audience=audience)
        return RecallResult(
            answer=answer.response,
            memories_used=answer.memories_used,
            degraded=answer.degraded,
            cached=answer.cached,
            answer_kind=answer.kind,
        )

    @server.tool(
        name="search_debug",
        title="Debug a memory search",
        description=SEARCH_DEBUG_DESCRIPTION,
        annotations=read_only,
    )
    async def search_debug(
        query: Query,
        limit: Limit = limits.default_limit,
        layers: Layers = None,
        kinds: Kinds = None,
        mode: Annotated[
            Literal["hybrid", "fts", "vector"],
            Field(description="hybrid (as search_memory), or one retriever alone: fts or vector."),
        ] = "hybrid",
        agent_id: AgentId = None,
        session_kind: SessionKindArg = "private",
        channel: Channel = None,
    ) -> SearchDebugResult:
        audience = Audience.of(agent_id, session_kind, channel)
        with tool_errors():
            result = await services.search.search(
                query,
                user_id,
                limit,
                mode,
                layers or DEFAULT_LAYERS,
                kinds,
                audience=audience,
                min_similarity=0,
            )
        # Not counted as read: inspecting the ranking must not change it (reads feed the ranking).
        return SearchDebugResult(
            results=debug_hits(result.hits, services.search.below_floor),
            fts_match=result.fts_query.words,
            fts_trigram_match=result.fts_query.trigrams,
            fts_substrings=list(result.fts_query.substrings),
            vector_used=result.vector_used,
            fts_weight=limits.fts_weight,
            vector_weight=limits.vector_weight,
            ranking_enabled=ranking.enabled,
            min_similarity=limits.min_similarity,
            timings_ms=result.timings_ms,
        )

    register_entity_tools(
        server,
        services.entities,
        user_id,
        agent_type=AgentId,
        session_kind_type=SessionKindArg,
        channel_type=Channel,
    )

    @server.resource(
        PROFILE_URI,
        name="profile",
        title=f"Profile of {user_id}",
        description=PROFILE_DESCRIPTION,
        mime_type="text/markdown",
    )
    async def user_profile() -> str:
        return await profile.markdown(user_id)

    return server

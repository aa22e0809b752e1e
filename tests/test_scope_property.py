"""No answer ever carries a memory its requester may not see, whatever mix of users, agents,
channels and visibilities the store holds (issue 22).

A hypothesis state machine drives the real app (real SQLite file, real MiniLM, rules-only LLM):
memories are written through ``POST /memories`` and said through ``/ingest`` in private and group
sessions, for several agents and channels, and read back by random requesters (user, agent,
private or group session, channel) through every endpoint that returns memories: search, the
debug view, ``/context``, ``/recall``, the list, a memory by id, and ``/visible-memories``. Every
text carries a mark of the scope it was stored in, so even the text answers can be attributed.

The oracle below is written from the issue's rule, independently of ``memory_cortex.records.Audience``:
a requester sees the memories of its user that belong to every agent or to its own agent; in a
group session only the shared ones of its channel and the shared ones without a channel.
"""

from __future__ import annotations

import asyncio
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aiohttp.test_utils import TestClient, TestServer
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, rule, run_state_machine_as_test

from memory_cortex.app import create_app
from memory_cortex.models.embedders import SentenceTransformerEmbedder
from tests.conftest import make_config
from tests.helpers import wait_idle

USERS = ("alex", "sam")
AGENTS = (None, "main", "work")
CHANNELS = (None, "g1", "g2")
SENTENCES = (
    "is allergic to peanuts",
    "rides a red Bianchi bike to work",
    "plays the cello on Sundays",
    "keeps the spare key under the blue pot",
)
QUERIES = (*SENTENCES, "peanuts bike cello key", "What does the user do on Sundays?")


@dataclass(frozen=True)
class Stored:
    user: str
    agent: str | None
    shared: bool
    channel: str | None  # meaningful for shared memories only


@dataclass(frozen=True)
class Requester:
    user: str
    agent: str | None
    group: bool
    channel: str | None

    def params(self) -> dict[str, str]:
        found = {"user_id": self.user, "session_kind": "group" if self.group else "private"}
        if self.agent is not None:
            found["agent_id"] = self.agent
        if self.channel is not None:
            found["channel"] = self.channel
        return found


def may_see(who: Requester, memory: Stored) -> bool:
    """The issue's rule, written out on its own."""
    if memory.user != who.user:
        return False
    if who.agent is not None and memory.agent not in (None, who.agent):
        return False
    if not who.group:
        return True
    return memory.shared and memory.channel in (None, who.channel)


def mark(memory: Stored) -> str:
    """The scope mark a stored text carries: ``[alex|work|shared|g1]``."""
    kind = "shared" if memory.shared else "private"
    return f"[{memory.user}|{memory.agent or '-'}|{kind}|{memory.channel or '-'}]"


MARK = re.compile(r"\[(\w+)\|([\w-]+)\|(shared|private)\|([\w-]+)\]")


def marks_in(text: str) -> list[Stored]:
    return [
        Stored(user, None if agent == "-" else agent, kind == "shared", None if channel == "-" else channel)
        for user, agent, kind, channel in MARK.findall(text)
    ]


requesters = st.builds(
    Requester,
    st.sampled_from(USERS),
    st.sampled_from(AGENTS),
    st.booleans(),
    st.sampled_from(CHANNELS),
)


class Scoping(RuleBasedStateMachine):
    memories = Bundle("memories")

    def __init__(self, embedder: SentenceTransformerEmbedder, base: Path) -> None:
        super().__init__()
        self.workdir = Path(tempfile.mkdtemp(dir=base))
        self.loop = asyncio.new_event_loop()
        self.stored: dict[int, Stored] = {}
        self.sessions = 0

        async def start() -> TestClient:
            config = make_config(self.workdir, ingest={"debounce_s": 0})
            client = TestClient(TestServer(create_app(config, embedder=embedder)))
            await client.start_server()
            return client

        try:
            self.client = self.loop.run_until_complete(start())
        except BaseException:
            self.loop.close()
            raise

    def teardown(self) -> None:
        self.loop.run_until_complete(self.client.close())
        self.loop.close()
        shutil.rmtree(self.workdir, ignore_errors=True)

    def call(self, method: str, path: str, **kwargs: Any) -> tuple[int, Any]:
        async def go() -> tuple[int, Any]:
            if method != "GET":
                kwargs.setdefault("headers", {"Content-Type": "application/json"})
            async with self.client.request(method, path, **kwargs) as response:
                return response.status, await response.json()

        return self.loop.run_until_complete(go())

    def check(self, who: Requester, texts: list[str], where: str) -> None:
        for text in texts:
            for memory in marks_in(text):
                assert may_see(who, memory), f"{where}: {who} was shown {memory}: {text!r}"

    # -- writes ------------------------------------------------------------------------------
    @rule(
        target=memories,
        user=st.sampled_from(USERS),
        agent=st.sampled_from(AGENTS),
        shared=st.booleans(),
        channel=st.sampled_from(CHANNELS),
        sentence=st.sampled_from(SENTENCES),
        dedup=st.booleans(),
    )
    def write(
        self, user: str, agent: str | None, shared: bool, channel: str | None, sentence: str, dedup: bool
    ) -> int:
        memory = Stored(user, agent, shared, channel if shared else None)
        body: dict[str, Any] = {
            "user_id": user,
            "fact": f"The user {sentence} {mark(memory)}.",
            "visibility": "shared" if shared else "private",
        }
        if agent is not None:
            body["agent_id"] = agent
        if channel is not None:
            body["source_channel"] = channel
        status, answer = self.call("POST", f"/memories?dedup={str(dedup).lower()}", json=body)
        assert status == 201, answer
        if answer["action"] == "merged":
            # Only ever into a memory every requester sees alike.
            assert self.stored[answer["id"]] == memory, (self.stored[answer["id"]], memory)
        else:
            self.stored[answer["id"]] = memory
        return int(answer["id"])

    @rule(
        user=st.sampled_from(USERS),
        agent=st.sampled_from(AGENTS),
        group=st.booleans(),
        channel=st.sampled_from(CHANNELS),
        sentence=st.sampled_from(SENTENCES),
    )
    def say(self, user: str, agent: str | None, group: bool, channel: str | None, sentence: str) -> None:
        """A conversation posted to /ingest: its turns (and any fact) take the session's scope; a
        group without a channel is its own session's group."""
        self.sessions += 1
        session = f"s{self.sessions}"
        memory = Stored(user, agent, group, (channel or session) if group else None)
        body: dict[str, Any] = {
            "messages": [{"role": "user", "content": f"Remember that I {sentence} {mark(memory)}."}],
            "session_id": session,
            "user_id": user,
            "session_kind": "group" if group else "private",
            "debounce": False,
        }
        if agent is not None:
            body["agent_id"] = agent
        if channel is not None:
            body["channel"] = channel
        status, answer = self.call("POST", "/ingest", json=body)
        assert status == 202, answer
        self.loop.run_until_complete(wait_idle(self.client))
        status, listed = self.call("GET", "/memories", params={"user_id": user, "limit": 1000})
        assert status == 200, listed
        for item in listed["memories"]:
            if item["id"] not in self.stored:
                self.stored[item["id"]] = memory
                assert item["visibility"] == ("shared" if group else "private"), item
                assert item["agent_id"] == agent, item

    # -- reads -------------------------------------------------------------------------------
    @rule(who=requesters, query=st.sampled_from(QUERIES), mode=st.sampled_from(["hybrid", "fts", "vector"]))
    def search(self, who: Requester, query: str, mode: str) -> None:
        status, answer = self.call(
            "POST", "/hybrid-search", json={"query": query, "mode": mode, "limit": 50, **who.params()}
        )
        assert status == 200, answer
        for hit in answer["results"]:
            assert may_see(who, self.stored[hit["id"]]), (who, hit)
        self.check(who, [hit["fact"] for hit in answer["results"]], "/hybrid-search")

    @rule(who=requesters, query=st.sampled_from(QUERIES))
    def search_debug(self, who: Requester, query: str) -> None:
        status, answer = self.call(
            "POST", "/search/debug", json={"query": query, "limit": 50, **who.params()}
        )
        assert status == 200, answer
        hits = [hit for name in ("fused", "fts_only", "vector_only") for hit in answer[name]]
        for hit in hits:
            assert may_see(who, self.stored[hit["id"]]), (who, hit)

    @rule(who=requesters, query=st.sampled_from(QUERIES))
    def context(self, who: Requester, query: str) -> None:
        status, answer = self.call("POST", "/context", json={"query": query, "max_facts": 50, **who.params()})
        assert status == 200, answer
        self.check(who, answer["context"].splitlines(), "/context")

    @rule(who=requesters, query=st.sampled_from(QUERIES))
    def recall(self, who: Requester, query: str) -> None:
        status, answer = self.call("POST", "/recall", json={"query": query, **who.params()})
        assert status == 200, answer
        self.check(who, answer["response"].splitlines(), "/recall")
        assert answer["memories_searched"] == sum(may_see(who, m) for m in self.stored.values())

    @rule(who=requesters)
    def list_memories(self, who: Requester) -> None:
        status, answer = self.call("GET", "/memories", params={"limit": "1000", **who.params()})
        assert status == 200, answer
        expected = {mid for mid, memory in self.stored.items() if may_see(who, memory)}
        assert {m["id"] for m in answer["memories"]} == expected, who

    @rule(memory=memories, who=requesters)
    def get(self, memory: int, who: Requester) -> None:
        status, answer = self.call("GET", f"/memories/{memory}", params=who.params())
        assert status == (200 if may_see(who, self.stored[memory]) else 404), (who, answer)

    @rule(who=requesters, data=st.data())
    def visible(self, who: Requester, data: st.DataObject) -> None:
        ids = data.draw(st.lists(st.sampled_from(sorted(self.stored) or [1]), max_size=8))
        status, answer = self.call("POST", "/visible-memories", json={"ids": ids, **who.params()})
        assert status == 200, answer
        expected = [
            mid for mid in dict.fromkeys(ids) if mid in self.stored and may_see(who, self.stored[mid])
        ]
        assert answer["ids"] == expected, who


def test_no_answer_carries_a_memory_its_requester_may_not_see(
    minilm: SentenceTransformerEmbedder, tmp_path: Path
) -> None:
    run_state_machine_as_test(
        lambda: Scoping(minilm, tmp_path),
        settings=settings(max_examples=25, stateful_step_count=30, deadline=None, database=None),
    )

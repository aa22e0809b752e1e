"""No answer for one user ever holds another user's memory, whatever the sequence of requests.

A hypothesis state machine drives the real app (real SQLite file, real MiniLM, rules-only LLM)
with random creates (single and batched, with and without dedup), patches, supersessions,
restores, deletes, reads, lists, searches in all three modes, ``/context`` and ``/recall``, each
as one of several users, and keeps a model of which memory belongs to whom. Every fact carries
its owner's name, so even the text answers (``/context``, ``/recall``) can be attributed.

Some memories are transcript turns ("Bravo: I ride a red bike…" in session "s1"): session names
and speaker names are shared across users, and queries name speakers ("What does Bravo say about
…?"), so the methods that read turns — session context, session followers, the subject boost, the
speaker-perspective query, the length prior and session support — all run under the same check.

The texts come from a small shared pool, so users keep storing near-identical facts: a dedup or a
search that ignored the user would show up at once. Hypothesis shrinks a failure to the shortest
sequence of requests that still leaks.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from pathlib import Path
from typing import Any

from aiohttp.test_utils import TestClient, TestServer
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    invariant,
    multiple,
    precondition,
    rule,
    run_state_machine_as_test,
)

from memory_cortex.app import create_app
from memory_cortex.models.embedders import SentenceTransformerEmbedder
from tests.conftest import make_config
from tests.helpers import wait_idle

# "default" is who a request without user_id speaks for (users.default_user_id).
USERS = ("alpha", "bravo", "charlie", "delta", "echo", "default")
SENTENCES = (
    "drinks green tea every morning",
    "rides a red Bianchi bike to work",
    "has a sister called Ana",
    "is allergic to peanuts",
    "plays the cello on Sundays",
    "works as a nurse in Porto",
    "prefers answers in French",
    "keeps the spare key under the blue pot",
)
TOPICS = ("", "habits", "family", "health", "work")

speakers = st.sampled_from((*USERS, None))  # None: user_id left out, which means "default"
owners = st.sampled_from(USERS)
SESSIONS = ("s1", "s2")
# Who speaks in the turns and whom the queries name: few, so that a query often names a speaker
# of the asking user's turns (and of other users' turns too).
voices = st.sampled_from(("alpha", "bravo"))
queries = st.one_of(
    st.sampled_from(SENTENCES),
    st.sampled_from(USERS),  # another user's name: FTS finds their rows, which must stay theirs
    st.builds(lambda s, u: f"{u} {s}", st.sampled_from(SENTENCES), st.sampled_from(USERS)),
)


def fact_of(user: str, sentence: str) -> str:
    return f"The user {sentence} (owner {user})."


def turn_of(user: str, speaker: str, sentence: str) -> str:
    """A transcript turn of ``user``'s memories, said by ``speaker`` (any user's name)."""
    words = sentence.split(" ", 1)
    return f"{speaker.capitalize()}: I {' '.join(words)} (owner {user})."


def owner_of_text(text: str) -> str | None:
    """Whose fact a line of text is, by the owner mark every fact carries."""
    marks = [user for user in USERS if f"(owner {user})." in text]
    return marks[0] if len(marks) == 1 else None


class UserScoping(RuleBasedStateMachine):
    """The app and a model of ownership; every rule checks its answer against the model."""

    memories = Bundle("memories")

    def __init__(self, embedder: SentenceTransformerEmbedder, base: Path) -> None:
        super().__init__()
        self.workdir = Path(tempfile.mkdtemp(dir=base))
        self.loop = asyncio.new_event_loop()

        async def start() -> TestClient:
            client = TestClient(TestServer(create_app(make_config(self.workdir), embedder=embedder)))
            await client.start_server()
            return client

        try:
            self.client = self.run(start())
        except BaseException:
            self.loop.close()
            raise
        self.owner: dict[int, str] = {}  # every id ever created → its user
        self.deleted: set[int] = set()
        self.superseded_by: dict[int, int | None] = {}
        self.voices_of: dict[str, set[str]] = {}  # user → who speaks in their turns

    def teardown(self) -> None:
        self.run(self.client.close())
        self.loop.close()
        shutil.rmtree(self.workdir, ignore_errors=True)

    def run(self, coroutine: Any) -> Any:
        return self.loop.run_until_complete(coroutine)

    def call(self, method: str, path: str, **kwargs: Any) -> tuple[int, Any]:
        async def go() -> tuple[int, Any]:
            if method != "GET":  # every write declares JSON, body or not (http/guard.py)
                kwargs.setdefault("headers", {"Content-Type": "application/json"})
            async with self.client.request(method, path, **kwargs) as response:
                return response.status, await response.json()

        return self.run(go())

    # -- the model ---------------------------------------------------------------------------
    def exists(self, memory_id: int) -> bool:
        return memory_id in self.owner and memory_id not in self.deleted

    def rows_of(self, user: str) -> set[int]:
        return {mid for mid, owner in self.owner.items() if owner == user and mid not in self.deleted}

    def live_of(self, user: str) -> set[int]:
        return {mid for mid in self.rows_of(user) if self.superseded_by.get(mid) is None}

    def visible(self, memory_id: int, as_user: str | None) -> bool:
        """Whether /memories/{id}?user_id=as_user may see the row (no user_id: no scope)."""
        return self.exists(memory_id) and (as_user is None or self.owner[memory_id] == as_user)

    def stored(self, sent_as: str | None, body: dict[str, Any]) -> int:
        """Check one memory of a create answer and record it."""
        user = sent_as or "default"
        assert body["user_id"] == user, f"stored for {user}, answered as {body['user_id']}"
        memory_id = body["id"]
        if body["action"] == "merged":
            # Dedup may only ever merge into a live memory of the same user.
            assert self.owner.get(memory_id) == user, f"{user}'s fact merged into memory {memory_id}"
            assert memory_id in self.live_of(user)
        else:
            # Ids are never reused (AUTOINCREMENT, migration 008): not even a deleted row's.
            assert memory_id not in self.owner, f"id {memory_id} handed out twice"
            self.owner[memory_id] = user
        return memory_id

    @staticmethod
    def scope(as_user: str | None) -> dict[str, str]:
        return {} if as_user is None else {"user_id": as_user}

    # -- writes ------------------------------------------------------------------------------
    @rule(
        target=memories,
        user=speakers,
        sentence=st.sampled_from(SENTENCES),
        topic=st.sampled_from(TOPICS),
        dedup=st.booleans(),
    )
    def create(self, user: str | None, sentence: str, topic: str, dedup: bool) -> int:
        body: dict[str, Any] = {"fact": fact_of(user or "default", sentence), "topic": topic}
        if user is not None:
            body["user_id"] = user
        status, answer = self.call("POST", f"/memories?dedup={str(dedup).lower()}", json=body)
        assert status == 201, answer
        return self.stored(user, answer)

    @rule(
        target=memories,
        user=speakers,
        speaker=voices,
        sentence=st.sampled_from(SENTENCES),
        session=st.sampled_from(SESSIONS),
    )
    def create_turn(self, user: str | None, speaker: str, sentence: str, session: str) -> int:
        body: dict[str, Any] = {
            "fact": turn_of(user or "default", speaker, sentence),
            "source_session": session,
        }
        if user is not None:
            body["user_id"] = user
        status, answer = self.call("POST", "/memories?dedup=false", json=body)
        assert status == 201, answer
        self.voices_of.setdefault(user or "default", set()).add(speaker)
        return self.stored(user, answer)

    @rule(
        user=speakers, speaker=voices, sentence=st.sampled_from(SENTENCES), session=st.sampled_from(SESSIONS)
    )
    def ingest(self, user: str | None, speaker: str, sentence: str, session: str) -> None:
        """A message posted to /ingest becomes a turn of the poster (sessions of the same name are
        per user); whatever the worker stores is registered as the poster's once the queue drains."""
        said = {
            "role": "user",
            "name": speaker.capitalize(),
            "content": f"I {sentence} (owner {user or 'default'}).",
        }
        body: dict[str, Any] = {"messages": [said], "session_id": session, "debounce": False}
        if user is not None:
            body["user_id"] = user
        status, answer = self.call("POST", "/ingest", json=body)
        assert status == 202, answer
        self.run(wait_idle(self.client))
        me = user or "default"
        status, listed = self.call("GET", "/memories", params={"user_id": me, "limit": 1000})
        assert status == 200, listed
        for memory in listed["memories"]:
            if memory["id"] not in self.owner:  # new: what this post stored
                assert owner_of_text(memory["fact"]) == me and memory["user_id"] == me, (me, memory)
                self.owner[memory["id"]] = me
                self.superseded_by[memory["id"]] = None
        self.voices_of.setdefault(me, set()).add(speaker)

    @rule(
        target=memories,
        items=st.lists(st.tuples(speakers, st.sampled_from(SENTENCES)), min_size=1, max_size=4),
        dedup=st.booleans(),
    )
    def create_batch(self, items: list[tuple[str | None, str]], dedup: bool) -> Any:
        batch = [
            {"fact": fact_of(user or "default", sentence), **({"user_id": user} if user else {})}
            for user, sentence in items
        ]
        status, answer = self.call("POST", f"/memories?dedup={str(dedup).lower()}", json={"memories": batch})
        assert status == 201, answer
        created = [self.stored(user, body) for (user, _), body in zip(items, answer["memories"], strict=True)]
        return multiple(*created)

    @rule(memory=memories, as_user=speakers, sentence=st.sampled_from(SENTENCES))
    def patch_text(self, memory: int, as_user: str | None, sentence: str) -> None:
        owner = self.owner[memory]
        body = {"fact": fact_of(owner, sentence), "importance": 7}
        status, answer = self.call("PATCH", f"/memories/{memory}", params=self.scope(as_user), json=body)
        if not self.visible(memory, as_user):
            assert status == 404, answer
            return
        assert status == 200 and answer["user_id"] == owner, answer

    @rule(memory=memories, newer=memories, as_user=speakers)
    def supersede(self, memory: int, newer: int, as_user: str | None) -> None:
        status, answer = self.call(
            "PATCH", f"/memories/{memory}", params=self.scope(as_user), json={"superseded_by": newer}
        )
        if not self.visible(memory, as_user):
            assert status == 404, answer
        elif newer == memory or not self.exists(newer) or self.owner[newer] != self.owner[memory]:
            assert status == 400, answer  # never hidden behind another user's memory
        else:
            assert status == 200 and answer["superseded_by"] == newer, answer
            self.superseded_by[memory] = newer

    @rule(memory=memories, as_user=speakers)
    def restore(self, memory: int, as_user: str | None) -> None:
        status, answer = self.call(
            "PATCH", f"/memories/{memory}", params=self.scope(as_user), json={"superseded_by": None}
        )
        if not self.visible(memory, as_user):
            assert status == 404, answer
            return
        assert status == 200 and answer["user_id"] == self.owner[memory], answer
        self.superseded_by[memory] = None

    @rule(memory=memories, as_user=speakers)
    def delete(self, memory: int, as_user: str | None) -> None:
        status, answer = self.call("DELETE", f"/memories/{memory}", params=self.scope(as_user))
        if not self.visible(memory, as_user):
            assert status == 404, answer
            return
        assert status == 200, answer
        self.deleted.add(memory)
        for other, newer in self.superseded_by.items():  # ON DELETE SET NULL
            if newer == memory:
                self.superseded_by[other] = None

    # -- reads -------------------------------------------------------------------------------
    @rule(memory=memories, as_user=speakers)
    def get(self, memory: int, as_user: str | None) -> None:
        status, answer = self.call("GET", f"/memories/{memory}", params=self.scope(as_user))
        if not self.visible(memory, as_user):
            assert status == 404, answer
            return
        assert status == 200 and answer["user_id"] == self.owner[memory], answer

    @rule(user=owners, include_superseded=st.booleans())
    def list_memories(self, user: str, include_superseded: bool) -> None:
        params = {"user_id": user, "limit": "1000", "include_superseded": str(include_superseded).lower()}
        status, answer = self.call("GET", "/memories", params=params)
        assert status == 200, answer
        assert {m["user_id"] for m in answer["memories"]} <= {user}
        expected = self.rows_of(user) if include_superseded else self.live_of(user)
        assert {m["id"] for m in answer["memories"]} == expected

    @rule(user=speakers, query=queries, mode=st.sampled_from(["hybrid", "fts", "vector"]))
    def search(self, user: str | None, query: str, mode: str) -> None:
        body: dict[str, Any] = {"query": query, "mode": mode, "limit": 50}
        if user is not None:
            body["user_id"] = user
        status, answer = self.call("POST", "/hybrid-search", json=body)
        assert status == 200, answer
        me = user or "default"
        for result in answer["results"]:
            assert result["user_id"] == me and result["id"] in self.live_of(me), (me, result)
            assert owner_of_text(result["fact"]) == me, (me, result)

    @precondition(lambda self: bool(self.voices_of))
    @rule(data=st.data(), sentence=st.sampled_from(SENTENCES), mode=st.sampled_from(["hybrid", "vector"]))
    def search_about_a_speaker(self, data: st.DataObject, sentence: str, mode: str) -> None:
        """A query naming a speaker of the asking user's turns (others have turns by the same
        voice in sessions of the same name): the subject boost, the speaker-perspective query,
        session followers and support all run."""
        user = data.draw(st.sampled_from(sorted(self.voices_of)))
        voice = data.draw(st.sampled_from(sorted(self.voices_of[user])))
        query = f"What does {voice.capitalize()} say about how she {sentence}?"
        self.search(None if user == "default" else user, query, mode)

    @rule(user=speakers, query=queries)
    def context(self, user: str | None, query: str) -> None:
        status, answer = self.call(
            "POST", "/context", json={"query": query, "max_facts": 50, **self.scope(user)}
        )
        assert status == 200, answer
        me = user or "default"
        lines = answer["context"].splitlines()[2:]  # after the "## Long-Term Memories" header and label
        assert len(lines) == answer["facts"] <= len(self.live_of(me))
        for line in lines:
            assert owner_of_text(line) == me, (me, line)

    @rule(user=speakers, query=queries)
    def recall(self, user: str | None, query: str) -> None:
        status, answer = self.call("POST", "/recall", json={"query": query, **self.scope(user)})
        assert status == 200, answer
        me = user or "default"
        assert answer["memories_searched"] == len(self.live_of(me)), answer
        if answer["memories_used"]:
            # Rules only: no LLM, so the answer is the facts themselves, one a line.
            assert answer["answer_kind"] == "list" and not answer["degraded"], answer
            for line in answer["response"].splitlines():
                assert owner_of_text(line) == me, (me, line)

    @invariant()
    def stats_count_each_users_live_memories(self) -> None:
        status, answer = self.call("GET", "/stats")
        assert status == 200
        counts = {user: len(self.live_of(user)) for user in USERS}
        assert answer["per_user"] == {user: n for user, n in counts.items() if n}


def test_no_response_for_one_user_carries_another_users_memory(
    minilm: SentenceTransformerEmbedder, tmp_path: Path
) -> None:
    # A state machine run by hand, not @given: each example builds its own app and database, and
    # only the session-wide model is shared (no function-scoped fixture inside the examples).
    run_state_machine_as_test(
        lambda: UserScoping(minilm, tmp_path),
        settings=settings(max_examples=25, stateful_step_count=30, deadline=None, database=None),
    )

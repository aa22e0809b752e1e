"""Scopes beside the user (issue 22): what is said in a private session stays out of group sessions,
what an agent keeps stays with that agent, and every endpoint that returns memories says the same.

Everything goes in through ``/ingest`` as OpenClaw posts it (the rules extractor keeps the explicit
"remember that…" statements, and every message is kept as a turn), and comes back through the real
endpoints of a real daemon.
"""

from __future__ import annotations

import asyncio
from typing import Any

from aiohttp.test_utils import TestClient

from memory_cortex.app import create_app
from tests.conftest import make_config
from tests.helpers import import_workspace, wait_idle

PRIVATE_FACT = "Remember that I am allergic to peanuts and carry an EpiPen."
GROUP_FACT = "Remember that I am a member of the climbing club at the quarry."
QUERY = "peanuts allergy EpiPen climbing club member quarry"

GROUP = {"session_kind": "group", "channel": "telegram:group:-100"}
OTHER_GROUP = {"session_kind": "group", "channel": "telegram:group:-200"}


async def start(aiohttp_client: Any, tmp_path: Any, minilm: Any) -> TestClient:
    config = make_config(tmp_path, ingest={"debounce_s": 0})
    return await aiohttp_client(create_app(config, embedder=minilm))


async def say(client: TestClient, text: str, session: str, **scope: Any) -> None:
    body = {
        # Flagged as the owner's, as the plugin flags them: in a group, unflagged words are nobody's.
        "messages": [{"role": "user", "content": text, "name": "Alex", "owner": True}],
        "session_id": session,
        "user_id": "alex",
        "channel": "telegram",
        "debounce": False,
        **scope,
    }
    response = await client.post("/ingest", json=body)
    assert response.status == 202, await response.text()


async def post(client: TestClient, path: str, body: dict[str, Any]) -> dict[str, Any]:
    response = await client.post(path, json={"user_id": "alex", **body})
    assert response.status == 200, await response.text()
    return await response.json()


async def recalled(client: TestClient, **requester: Any) -> dict[str, str]:
    """What each reading endpoint gives this requester, as text: search, context, recall."""
    found = await post(client, "/hybrid-search", {"query": QUERY, "limit": 20, **requester})
    debug = await post(client, "/search/debug", {"query": QUERY, "limit": 20, **requester})
    context = await post(client, "/context", {"query": QUERY, **requester})
    recall = await post(client, "/recall", {"query": QUERY, **requester})
    listed = await client.get("/memories", params={"user_id": "alex", "limit": 1000, **requester})
    assert listed.status == 200
    debug_hits = [hit for mode in ("fused", "fts_only", "vector_only") for hit in debug[mode]]
    return {
        "search": " | ".join(hit["fact"] for hit in found["results"]),
        "debug": " | ".join(hit["fact"] for hit in debug_hits),
        "context": context["context"],
        "recall": recall["response"],
        "list": " | ".join(m["fact"] for m in (await listed.json())["memories"]),
    }


def holds(answers: dict[str, str], words: str) -> dict[str, bool]:
    return {endpoint: words in text for endpoint, text in answers.items()}


async def test_private_words_stay_out_of_group_sessions_and_come_back_in_private_ones(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    client = await start(aiohttp_client, tmp_path, minilm)
    await say(client, PRIVATE_FACT, "dm-1")
    await say(client, GROUP_FACT, "group-1", **GROUP)
    await wait_idle(client)

    stored = (await (await client.get("/memories", params={"user_id": "alex", "limit": 100})).json())[
        "memories"
    ]
    assert {(m["kind"], m["visibility"]) for m in stored if "peanuts" in m["fact"]} == {
        ("fact", "private"),
        ("turn", "private"),
    }
    assert {(m["kind"], m["visibility"], m["source_channel"]) for m in stored if "quarry" in m["fact"]} == {
        ("fact", "shared", "telegram:group:-100"),
        ("turn", "shared", "telegram:group:-100"),
    }

    everywhere = dict.fromkeys(("search", "debug", "context", "recall", "list"), True)
    nowhere = dict.fromkeys(everywhere, False)
    # Another private session of the same user: everything of theirs, from DMs and groups alike.
    assert holds(await recalled(client, session_kind="private", channel="cli"), "peanuts") == everywhere
    assert holds(await recalled(client, session_kind="private"), "quarry") == everywhere
    # The group the words were said in: its own words, never the private ones.
    in_group = await recalled(client, **GROUP)
    assert holds(in_group, "peanuts") == nowhere
    assert holds(in_group, "quarry") == everywhere
    # Another group: neither.
    elsewhere = await recalled(client, **OTHER_GROUP)
    assert holds(elsewhere, "peanuts") == nowhere
    assert holds(elsewhere, "quarry") == nowhere
    # A group that names no channel sees only what was shared everywhere: nothing yet.
    assert holds(await recalled(client, session_kind="group"), "quarry") == nowhere

    # By id too: a private memory is "not found" for a group requester, found in private.
    peanut_id = next(m["id"] for m in stored if "peanuts" in m["fact"] and m["kind"] == "fact")
    scoped = {"user_id": "alex", **GROUP}
    assert (await client.get(f"/memories/{peanut_id}", params=scoped)).status == 404
    assert (await client.get(f"/memories/{peanut_id}/history", params=scoped)).status == 404
    assert (await client.delete(f"/memories/{peanut_id}", params=scoped, headers=_json())).status == 404
    assert (await client.get(f"/memories/{peanut_id}", params={"user_id": "alex"})).status == 200
    visible = await post(client, "/visible-memories", {"ids": [m["id"] for m in stored], **GROUP})
    assert visible["ids"] == [m["id"] for m in stored if "quarry" in m["fact"]]
    # The conversations list too: a group requester sees its group's conversation only.
    sessions = await client.get("/sessions", params={"user_id": "alex", **GROUP})
    assert [x["session"] for x in (await sessions.json())["sessions"]] == ["group-1"]
    sessions = await client.get("/sessions", params={"user_id": "alex"})
    assert {x["session"] for x in (await sessions.json())["sessions"]} == {"group-1", "dm-1"}


async def test_a_fact_written_as_shared_without_a_channel_reaches_every_group(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    client = await start(aiohttp_client, tmp_path, minilm)
    created = await client.post(
        "/memories",
        json={"user_id": "alex", "fact": "Alex's pronouns are they/them.", "visibility": "shared"},
    )
    assert created.status == 201, await created.text()
    private = await client.post(
        "/memories", json={"user_id": "alex", "fact": "Alex's pronouns are private notes."}
    )
    assert private.status == 201

    for group in (GROUP, OTHER_GROUP, {"session_kind": "group"}):
        found = await post(client, "/hybrid-search", {"query": "Alex pronouns", **group})
        assert [hit["fact"] for hit in found["results"]] == ["Alex's pronouns are they/them."]
        assert found["results"][0]["visibility"] == "shared"


async def test_agent_memories_stay_with_their_agent(aiohttp_client: Any, tmp_path: Any, minilm: Any) -> None:
    client = await start(aiohttp_client, tmp_path, minilm)
    await say(client, PRIVATE_FACT, "work-1", agent_id="work")
    await say(client, GROUP_FACT, "home-1", agent_id="home")
    await wait_idle(client)

    as_work = await recalled(client, agent_id="work")
    assert holds(as_work, "peanuts") == dict.fromkeys(as_work, True)
    assert holds(as_work, "quarry") == dict.fromkeys(as_work, False)
    as_home = await recalled(client, agent_id="home")
    assert holds(as_home, "peanuts") == dict.fromkeys(as_home, False)
    as_other = await recalled(client, agent_id="stranger")
    assert holds(as_other, "peanuts") == holds(as_other, "quarry") == dict.fromkeys(as_other, False)
    # The owner's own tools name no agent and see every agent's memories.
    owner = await recalled(client)
    assert holds(owner, "peanuts") == holds(owner, "quarry") == dict.fromkeys(owner, True)

    # A memory for every agent (agent_id null) reaches each of them.
    shared = await client.post(
        "/memories", json={"user_id": "alex", "fact": "Alex lives in Porto by the quarry."}
    )
    assert shared.status == 201
    for agent in ("work", "home", "stranger"):
        found = await post(client, "/hybrid-search", {"query": "Porto", "agent_id": agent})
        assert "Alex lives in Porto by the quarry." in [hit["fact"] for hit in found["results"]]

    # An agent cannot hand its memory to another agent (it would leave its reach).
    work_fact = next(
        m["id"]
        for m in (
            await (await client.get("/memories", params={"user_id": "alex", "agent_id": "work"})).json()
        )["memories"]
        if "peanuts" in m["fact"]
    )
    moved = await client.patch(
        f"/memories/{work_fact}", params={"user_id": "alex", "agent_id": "work"}, json={"agent_id": "home"}
    )
    assert moved.status == 400
    assert (await moved.json())["error"]["code"]
    # Nor widen it to every agent, nor may a group requester change a visibility.
    widened = await client.patch(
        f"/memories/{work_fact}", params={"user_id": "alex", "agent_id": "work"}, json={"agent_id": None}
    )
    assert widened.status == 400
    # Nor hide it behind a memory of another reach it cannot see.
    home_only = await client.post(
        "/memories", json={"user_id": "alex", "fact": "Home note.", "agent_id": "home"}
    )
    hidden = await client.patch(
        f"/memories/{work_fact}",
        params={"user_id": "alex", "agent_id": "work"},
        json={"superseded_by": (await home_only.json())["id"]},
    )
    assert hidden.status == 400
    # The owner can: then the home agent sees it and work does not.
    moved = await client.patch(
        f"/memories/{work_fact}", params={"user_id": "alex"}, json={"agent_id": "home"}
    )
    assert moved.status == 200
    found = await post(client, "/hybrid-search", {"query": "peanuts EpiPen", "agent_id": "home"})
    assert work_fact in [hit["id"] for hit in found["results"]]
    found = await post(client, "/hybrid-search", {"query": "peanuts EpiPen", "agent_id": "work"})
    assert work_fact not in [hit["id"] for hit in found["results"]]


async def test_an_agent_cannot_undo_a_supersession_by_a_memory_it_does_not_see(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    """Issue 34: the owner hid a memory of every agent behind the home agent's; the work agent,
    which does not see the replacement, could bring the old one back (superseded_by: null)."""
    client = await start(aiohttp_client, tmp_path, minilm)
    old = await (
        await client.post("/memories", json={"user_id": "alex", "fact": "Alex's gym is Pure."})
    ).json()
    new = await (
        await client.post(
            "/memories", json={"user_id": "alex", "fact": "Alex's gym is Anytime.", "agent_id": "home"}
        )
    ).json()
    hide = await client.patch(
        f"/memories/{old['id']}", params={"user_id": "alex"}, json={"superseded_by": new["id"]}
    )
    assert hide.status == 200
    undo = await client.patch(
        f"/memories/{old['id']}", params={"user_id": "alex", "agent_id": "work"}, json={"superseded_by": None}
    )
    assert undo.status == 400, await undo.text()
    kept = await (await client.get(f"/memories/{old['id']}", params={"user_id": "alex"})).json()
    assert kept["superseded_by"] == new["id"] and kept["replaced"] is True
    # The work agent reads it as replaced, without the id of a memory it may not see: not by id,
    # not in a list, not in its history, not on an entity's page.
    work = {"user_id": "alex", "agent_id": "work"}
    seen = await (await client.get(f"/memories/{old['id']}", params=work)).json()
    assert (seen["superseded_by"], seen["replaced"]) == (None, True)
    listed = await (await client.get("/memories", params={**work, "include_superseded": "true"})).json()
    [row] = [m for m in listed["memories"] if m["id"] == old["id"]]
    assert (row["superseded_by"], row["replaced"]) == (None, True)
    history = await (await client.get(f"/memories/{old['id']}/history", params=work)).json()
    assert (history["memory"]["superseded_by"], history["replaced_by"]) == (None, [])
    home = await (await client.get(f"/memories/{old['id']}", params={"user_id": "alex", "agent_id": "home"})).json()
    assert home["superseded_by"] == new["id"]
    undo = await client.patch(
        f"/memories/{old['id']}", params={"user_id": "alex", "agent_id": "home"}, json={"superseded_by": None}
    )
    assert undo.status == 200  # the home agent sees the replacement: it may


async def test_near_duplicates_in_different_scopes_are_never_merged(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    client = await start(aiohttp_client, tmp_path, minilm)
    fact = {"user_id": "alex", "fact": "Alex keeps the spare key under the blue pot."}
    first = await (await client.post("/memories", json=fact)).json()
    shared = await (await client.post("/memories", json={**fact, "visibility": "shared"})).json()
    other_agent = await (await client.post("/memories", json={**fact, "agent_id": "work"})).json()
    again = await (await client.post("/memories", json=fact)).json()
    assert shared["action"] == other_agent["action"] == "created"
    assert len({first["id"], shared["id"], other_agent["id"]}) == 3
    assert (again["action"], again["id"]) == ("merged", first["id"])  # same scope: still one memory


def _json() -> dict[str, str]:
    return {"Content-Type": "application/json"}


async def test_an_agents_workspace_imports_as_that_agents_memories(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    client = await start(aiohttp_client, tmp_path, minilm)
    files = {"MEMORY.md": "# Memory\n\n- Alex's dentist is Dr. Lopes in Braga.\n"}
    imported_summary = await import_workspace(client, {"user_id": "alex", "agent_id": "work", "files": files})
    assert imported_summary["added"] == 1
    [imported] = (await (await client.get("/memories", params={"user_id": "alex"})).json())["memories"]
    assert (imported["agent_id"], imported["visibility"]) == ("work", "private")
    as_work = await post(client, "/hybrid-search", {"query": "dentist Lopes", "agent_id": "work"})
    as_home = await post(client, "/hybrid-search", {"query": "dentist Lopes", "agent_id": "home"})
    assert [hit["id"] for hit in as_work["results"]] == [imported["id"]]
    assert as_home["results"] == []


async def test_the_session_list_and_the_date_cursor_tell_nothing_of_hidden_memories(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    """Issue 34: a group requester saw the id of a private summary of a session id the group
    reused; and a date cursor naming a hidden memory paged on where a missing one ends the list."""
    client = await start(aiohttp_client, tmp_path, minilm)
    group = {"session_kind": "group", "channel": "telegram:group:-1"}
    await say(client, "Who is bringing the salad?", "reused", **group)
    for _ in range(200):  # until the turn is stored
        stored = await (await client.get("/sessions", params={"user_id": "alex"})).json()
        if any(s["session"] == "reused" for s in stored["sessions"]):
            break
        await asyncio.sleep(0.05)
    summary = await client.post(
        "/memories",
        json={
            "user_id": "alex",
            "fact": "Private talk about the divorce.",
            "category": "session_summary",
            "source_session": "reused",
        },
    )
    assert summary.status == 201
    listed = await (await client.get("/sessions", params={"user_id": "alex", **group})).json()
    (session,) = [s for s in listed["sessions"] if s["session"] == "reused"]
    assert session["summary_id"] is None, session
    owner = await (await client.get("/sessions", params={"user_id": "alex"})).json()
    assert [s["summary_id"] for s in owner["sessions"] if s["session"] == "reused"] == [
        (await summary.json())["id"]
    ]

    older = await (
        await client.post("/memories", json={"user_id": "alex", "fact": "Alex likes figs."})
    ).json()
    hidden = await (
        await client.post("/memories", json={"user_id": "alex", "fact": "Home note.", "agent_id": "home"})
    ).json()

    async def page(before_id: int) -> list[int]:
        params = {"user_id": "alex", "agent_id": "work", "order": "created", "before_id": str(before_id)}
        return [m["id"] for m in (await (await client.get("/memories", params=params)).json())["memories"]]

    assert await page(hidden["id"]) == await page(10**9) == []  # hidden as if it never was
    visible_after = await (
        await client.post("/memories", json={"user_id": "alex", "fact": "Figs again."})
    ).json()
    assert older["id"] in await page(visible_after["id"])  # a row it sees pages on

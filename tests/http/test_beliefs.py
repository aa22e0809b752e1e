"""What the memory believes after conversations posted through ``/ingest`` as the OpenClaw plugin
posts them (issue 33), with the rules extractor and the real embedding model, through the server:
who said a thing, what is current, what ``/context`` hands the agent, and the entities and
relations behind it."""

from __future__ import annotations

import asyncio
from typing import Any

from aiohttp.test_utils import TestClient

from memory_cortex.app import create_app
from tests.conftest import make_config

JSON = {"Content-Type": "application/json"}


async def start(aiohttp_client: Any, tmp_path: Any, minilm: Any) -> TestClient:
    return await aiohttp_client(create_app(make_config(tmp_path), embedder=minilm))


async def ingest(client: TestClient, messages: list[dict[str, Any]], **body: Any) -> None:
    """Post a session with ``debounce: false`` and wait until every job has run."""
    payload = {"user_id": "priya", "session_id": "s1", "debounce": False, "messages": messages, **body}
    response = await client.post("/ingest", json=payload)
    assert response.status == 202, await response.text()
    for _ in range(600):
        queue = (await (await client.get("/stats")).json())["ingest"]
        if queue["pending"] == 0 and queue["running"] == 0:
            assert queue["failed"] == 0, queue
            return
        await asyncio.sleep(0.05)
    raise AssertionError("the ingest jobs did not finish")


def said(text: str, when: str, **extra: Any) -> dict[str, Any]:
    return {"role": "user", "content": text, "timestamp": when, **extra}


async def context(client: TestClient, query: str, **body: Any) -> dict[str, Any]:
    payload = {"query": query, "user_id": "priya", **body}
    response = await client.post("/context", json=payload, headers=JSON)
    assert response.status == 200, await response.text()
    return await response.json()


async def facts_of(client: TestClient, user: str = "priya") -> list[dict[str, Any]]:
    params = {"user_id": user, "kinds": "fact", "limit": "500", "include_superseded": "true"}
    return (await (await client.get("/memories", params=params)).json())["memories"]


async def entity_named(client: TestClient, name: str, user: str = "priya", **scope: str) -> dict[str, Any]:
    listed = (await (await client.get("/entities", params={"user_id": user, **scope})).json())["entities"]
    (entity,) = [e for e in listed if e["name"].casefold() == name.casefold()]
    response = await client.get(f"/entities/{entity['id']}", params={"user_id": user, **scope})
    assert response.status == 200
    return await response.json()


GROUP = {"session_kind": "group", "channel": "telegram:group:-100", "session_id": "g1"}


# -- who said it --------------------------------------------------------------------------------
async def test_another_persons_words_in_a_group_are_about_them_never_the_user(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    client = await start(aiohttp_client, tmp_path, minilm)
    await ingest(
        client,
        [
            said("I'm allergic to shellfish, so no paella for me", "2026-03-02T10:00:00Z", name="Bob"),
            said("I'm a dentist btw", "2026-03-02T10:01:00Z", name="Tom"),
            said("The Lisbon trip is on March 28", "2026-03-02T10:02:00Z", name="Priya", owner=True),
            {"role": "assistant", "content": "Noted!"},
        ],
        **GROUP,
    )
    facts = await facts_of(client)
    mine = [f["fact"] for f in facts if f["subject_id"] is None]
    assert not any("shellfish" in fact or "dentist" in fact for fact in mine), mine
    bob = await entity_named(client, "Bob")
    assert [(f["attribute"], f["value"]) for f in bob["current"]] == [("allergy", "shellfish")]
    assert bob["current"][0]["fact"].startswith("Bob is allergic to shellfish")
    # Never protected as the owner's allergy: a question about a trip does not get it.
    block = await context(client, "When is the trip to Lisbon?")
    assert "shellfish" not in block["context"] and "March 28" in block["context"]
    # Asked about Bob, from the group, it is found.
    asked = await context(client, "What is Bob allergic to?", session_kind="group", channel=GROUP["channel"])
    assert "shellfish" in asked["context"]


async def test_in_a_group_with_no_mark_nobody_is_the_user(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    client = await start(aiohttp_client, tmp_path, minilm)
    await ingest(
        client,
        [
            said("I live in Leeds", "2026-03-02T10:00:00Z", name="Ana"),
            said("I live in York", "2026-03-02T10:01:00Z"),
        ],
        **GROUP,
    )
    facts = await facts_of(client)
    assert [f["fact"] for f in facts if f["subject_id"] is None] == []  # the unnamed speaker is unknown
    ana = await entity_named(client, "Ana")
    assert ana["current"][0]["value"] == "Leeds"


async def test_user_names_mark_the_users_messages_and_a_private_session_stays_the_users(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    client = await start(aiohttp_client, tmp_path, minilm)
    await ingest(
        client,
        [
            said("I work as a nurse", "2026-03-02T10:00:00Z", name="Priya"),
            said("I'm a pilot", "2026-03-02T10:01:00Z", name="Sam"),
        ],
        user_names=["priya"],
        **GROUP,
    )
    await ingest(client, [said("I'm vegan", "2026-03-03T10:00:00Z")], session_id="p1")  # an old client
    values = {(f["subject_id"] is None, f["attribute"], f["value"]) for f in await facts_of(client)}
    assert {(True, "job", "nurse"), (False, "job", "pilot"), (True, "diet", "vegan")} <= values


async def test_a_fact_names_the_turn_it_was_read_from(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    client = await start(aiohttp_client, tmp_path, minilm)
    await ingest(
        client,
        [
            said("Hi there!", "2026-03-01T10:00:00Z"),
            said("I live in Manchester.", "2026-03-01T10:01:00Z"),
            said("And I'm a nurse.", "2026-03-01T10:02:00Z"),
        ],
    )
    turns = (await (await client.get("/memories", params={"user_id": "priya", "kinds": "turn"})).json())[
        "memories"
    ]
    turn_of = {turn["fact"].split(": ", 1)[1]: turn["id"] for turn in turns}
    for fact in await facts_of(client):
        source = "I live in Manchester." if fact["attribute"] == "home" else "And I'm a nurse."
        assert fact["derived_from"] == [turn_of[source]], fact


# -- what is current ------------------------------------------------------------------------------
async def test_a_later_statement_replaces_the_earlier_one_by_when_it_was_said(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    client = await start(aiohttp_client, tmp_path, minilm)
    await ingest(client, [said("I live in Manchester", "2026-03-01T10:00:00Z")], session_id="s1")
    await ingest(
        client, [said("We finally moved to Edinburgh last weekend!", "2026-03-09T08:30:00Z")], session_id="s2"
    )
    # An old history replayed late: said before both, posted after them.
    await ingest(client, [said("I live in Leeds", "2026-02-01T09:00:00Z")], session_id="s0")
    me = await entity_named(client, "User")
    assert [(f["attribute"], f["value"]) for f in me["current"]] == [("home", "Edinburgh")]
    ended = {f["value"]: f["valid_to"] for f in me["history"]}
    assert ended == {"Manchester": "2026-03-09T08:30:00.000Z", "Leeds": "2026-03-09T08:30:00.000Z"}
    block = await context(client, "Which city does Priya live in?")
    text = block["context"]
    assert "Edinburgh" in text and "Manchester" not in text.split("Edinburgh")[0], text
    # The history says until when each was true.
    edinburgh = next(f for f in me["current"] if f["value"] == "Edinburgh")
    history = await (
        await client.get(f"/memories/{edinburgh['id']}/history", params={"user_id": "priya"})
    ).json()
    assert {m["value"]: m["valid_to"] for m in history["replaces"]}[
        "Manchester"
    ] == "2026-03-09T08:30:00.000Z"


async def test_the_same_value_said_again_is_one_fact_true_since_first_said(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    client = await start(aiohttp_client, tmp_path, minilm)
    await ingest(client, [said("I live in Porto", "2026-03-01T10:00:00Z")], session_id="s1")
    await ingest(client, [said("I live in Porto.", "2026-04-01T10:00:00Z")], session_id="s2")
    me = await entity_named(client, "User")
    assert [(f["value"], f["valid_from"]) for f in me["current"]] == [("Porto", "2026-03-01T10:00:00.000Z")]
    assert me["history"] == []


async def test_a_group_never_rewrites_what_the_user_said_in_private(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    client = await start(aiohttp_client, tmp_path, minilm)
    await ingest(client, [said("the Lisbon trip is on March 28", "2026-03-01T10:00:00Z")], session_id="p1")
    await ingest(
        client,
        [said("the Lisbon trip is now on April 2", "2026-03-05T10:00:00Z", name="Priya", owner=True)],
        **GROUP,
    )
    plan = await entity_named(client, "lisbon trip")
    assert sorted(f["value"] for f in plan["current"]) == ["April 2", "March 28"]  # each in its own reach
    block = await context(client, "When is the Lisbon trip?")
    lines = block["context"].splitlines()
    newer = next(i for i, line in enumerate(lines) if "April 2" in line)
    older = next(i for i, line in enumerate(lines) if "March 28" in line and line.startswith("- ["))
    assert newer < older and lines[older].endswith("(said earlier than the line above)"), lines


async def test_a_correction_replaces_the_value_it_corrects(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    client = await start(aiohttp_client, tmp_path, minilm)
    await ingest(client, [said("my manager is Paul Hunt", "2026-03-01T10:00:00Z")], session_id="s1")
    await ingest(
        client,
        [said("Sorry, I mixed that up: my manager is Paul Hart", "2026-03-02T10:00:00Z")],
        session_id="s2",
    )
    me = await entity_named(client, "User")
    assert [(f["attribute"], f["value"]) for f in me["current"]] == [("manager", "Paul Hart")]
    assert [f["value"] for f in me["history"]] == ["Paul Hunt"]
    relations = (await (await client.get("/relations", params={"user_id": "priya"})).json())["relations"]
    assert {(r["predicate"], r["object"], r["ended"] is None) for r in relations} == {
        ("manager", "Paul Hart", True),
        ("manager", "Paul Hunt", False),
    }


async def test_a_value_said_against_another_corrects_it_unannounced(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    """Of an attribute with several values (allergies), "X, not Y" replaces Y, with no "sorry"."""
    client = await start(aiohttp_client, tmp_path, minilm)
    await ingest(
        client,
        [said("I'm allergic to penicillin. I'm allergic to cats too.", "2026-03-01T10:00:00Z")],
        session_id="s1",
    )
    await ingest(
        client,
        [said("It's sulfa drugs I'm allergic to, not penicillin.", "2026-03-05T10:00:00Z")],
        session_id="s2",
    )
    me = await entity_named(client, "User")
    assert sorted(f["value"] for f in me["current"] if f["attribute"] == "allergy") == ["cats", "sulfa drugs"]
    assert [f["value"] for f in me["history"]] == ["penicillin"]


async def test_scratch_that_with_only_the_right_name_corrects_what_was_just_said(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    """ "Scratch that, it's Klarna." names no attribute: it is the one name said last in the session
    (the employer, not the job said with it). In another session it corrects nothing."""
    client = await start(aiohttp_client, tmp_path, minilm)
    first = [said("Just started as a product designer at Spotify!", "2026-03-01T10:00:00Z")]
    await ingest(client, first, session_id="s1")
    await ingest(client, [said("Scratch that, it's Monzo.", "2026-03-01T11:00:00Z")], session_id="s2")
    me = await entity_named(client, "User")
    assert sorted((f["attribute"], f["value"]) for f in me["current"]) == [
        ("employer", "Spotify"),
        ("job", "product designer"),
    ]
    await ingest(
        client, [*first, said("Scratch that, it's Klarna.", "2026-03-01T10:05:00Z")], session_id="s1"
    )
    me = await entity_named(client, "User")
    assert sorted((f["attribute"], f["value"]) for f in me["current"]) == [
        ("employer", "Klarna"),
        ("job", "product designer"),
    ]
    assert [(f["attribute"], f["value"]) for f in me["history"]] == [("employer", "Spotify")]


async def test_a_value_said_to_have_ended_ends_and_nothing_takes_its_place(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    """A pet gone, a job left: of several pets only that one ends; no employer is current after
    the last one was left; the statement itself is kept, as a fact that states no value."""
    client = await start(aiohttp_client, tmp_path, minilm)
    await ingest(
        client,
        [
            said("I have a cat called Biscuit", "2026-03-01T10:00:00Z"),
            said("I have a dog called Rolo", "2026-03-01T10:01:00Z"),
            said("I work at Deloitte", "2026-03-01T10:02:00Z"),
        ],
        session_id="s1",
    )
    await ingest(
        client,
        [
            said("Sad news, Biscuit passed away last week.", "2026-04-02T09:00:00Z"),
            said("Also I resigned from Deloitte, taking a few months off", "2026-04-02T09:01:00Z"),
        ],
        session_id="s2",
    )
    me = await entity_named(client, "User")
    assert sorted((f["attribute"], f["value"]) for f in me["current"]) == [("pet", "Rolo")]
    ended = {(f["attribute"], f["value"]): f["valid_to"] for f in me["history"]}
    assert ended == {
        ("pet", "Biscuit"): "2026-04-02T09:00:00.000Z",
        ("employer", "Deloitte"): "2026-04-02T09:01:00.000Z",
    }
    statements = [f for f in await facts_of(client) if f["superseded_by"] is None and f["attribute"] is None]
    assert any(f["fact"] == "Biscuit passed away last week." for f in statements), statements
    relations = (await (await client.get("/relations", params={"user_id": "priya"})).json())["relations"]
    assert {(r["object"], r["ended"] is None) for r in relations if r["predicate"] == "pet"} == {
        ("Biscuit", False),
        ("Rolo", True),
    }
    # A value that was never held ends nothing: the statement is kept as it was said.
    await ingest(client, [said("We had to put Pip down yesterday", "2026-04-03T09:00:00Z")], session_id="s3")
    me = await entity_named(client, "User")
    assert sorted((f["attribute"], f["value"]) for f in me["current"]) == [("pet", "Rolo")]


async def test_an_end_said_of_a_relation_known_only_from_facts_about_them_ends_the_relation(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    """Paolo is the partner only through a fact about him; the split ends the relation, and his own
    fact stays true. An end in a group ends nothing of the owner's private relation."""
    client = await start(aiohttp_client, tmp_path, minilm)
    await ingest(client, [said("My boyfriend Paolo loves food trips.", "2026-03-01T10:00:00Z")])

    async def partners() -> set[tuple[str, bool]]:
        listed = (await (await client.get("/relations", params={"user_id": "priya"})).json())["relations"]
        return {(r["object"], r["ended"] is None) for r in listed if r["predicate"] == "partner"}

    assert await partners() == {("Paolo", True)}
    await ingest(
        client,
        [said("Me and Paolo split up last month.", "2026-04-01T10:00:00Z", name="Priya", owner=True)],
        **GROUP,
    )
    assert await partners() == {("Paolo", True)}
    await ingest(client, [said("Me and Paolo split up last month.", "2026-04-02T10:00:00Z")], session_id="s2")
    assert await partners() == {("Paolo", False)}
    paolo = await entity_named(client, "Paolo")
    assert [(f["attribute"], f["value"]) for f in paolo["current"]] == [("likes", "food trips")]
    # His fact stays, and says he is no longer what it calls him.
    block = await context(client, "What does Paolo love?")
    assert "loves food trips. (the user's boyfriend: no longer current)" in block["context"], block
    # Back together: said again after the end, the relation holds again.
    await ingest(client, [said("My boyfriend Paolo is a chef.", "2026-05-02T10:00:00Z")], session_id="s3")
    assert await partners() == {("Paolo", True)}


# -- third persons, entities and relations ---------------------------------------------------------
async def test_a_relatives_fact_is_about_them_and_linked_to_the_user(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    client = await start(aiohttp_client, tmp_path, minilm)
    await ingest(
        client,
        [
            said("my dad has type 2 diabetes", "2026-03-01T10:00:00Z"),
            said("my daughter Mia turned 5", "2026-03-01T10:01:00Z"),
        ],
    )
    dad = await entity_named(client, "user's father")
    assert [(f["attribute"], f["value"]) for f in dad["current"]] == [("health", "type 2 diabetes")]
    assert {(r["subject"], r["predicate"]) for r in dad["relations"]} == {("User", "father")}
    mia = await entity_named(client, "Mia")
    assert [(f["attribute"], f["value"]) for f in mia["current"]] == [("age", "5")]
    # Not the user's diabetes: a question about the user's health does not get it as theirs.
    mine = [f["fact"] for f in await facts_of(client) if f["subject_id"] is None]
    assert not any("diabetes" in fact for fact in mine)
    block = await context(client, "How old is Mia?")
    assert "turned 5" in block["context"]


async def test_a_he_or_she_is_the_relative_just_named_even_in_the_next_turn(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    """The plugin posts each turn as it comes: "He is a dentist" in the next turn is the brother named
    in the turn before, read from what the session already holds; after a reply naming someone else
    ("Has the vet seen her?"), "she" is no longer the pet."""
    client = await start(aiohttp_client, tmp_path, minilm)
    first = [
        said("My brother Kerem is coming from Izmir next week.", "2026-03-01T10:00:00Z"),
        {"role": "assistant", "content": "How lovely! What does he do?"},
    ]
    await ingest(client, first)
    await ingest(client, [*first, said("He is a dentist, and he's vegetarian.", "2026-03-01T10:02:00Z")])
    kerem = await entity_named(client, "Kerem")
    assert sorted((f["attribute"], f["value"]) for f in kerem["current"]) == [
        ("diet", "vegetarian"),
        ("job", "dentist"),
    ]
    second = [
        said("My spaniel Bramble is fourteen now.", "2026-03-02T10:00:00Z"),
        {"role": "assistant", "content": "Has the vet suggested anything for her joints?"},
    ]
    await ingest(client, second, session_id="s2")
    await ingest(
        client,
        [*second, said("She's a vegetarian herself, funnily enough.", "2026-03-02T10:02:00Z")],
        session_id="s2",
    )
    bramble = await entity_named(client, "Bramble")
    assert [(f["attribute"], f["value"]) for f in bramble["current"]] == [("age", "fourteen")]


async def test_relations_are_written_listed_and_deleted_within_their_scope(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    client = await start(aiohttp_client, tmp_path, minilm)
    body = {"user_id": "rosa", "subject": "Rosa", "predicate": "husband", "object": "Marco"}
    created = await client.post("/relations", json=body, headers=JSON)
    assert created.status == 201, await created.text()
    relation = await created.json()
    assert (relation["subject"], relation["predicate"], relation["object"]) == ("Rosa", "husband", "Marco")
    again = await (await client.post("/relations", json=body, headers=JSON)).json()
    assert again["id"] == relation["id"]  # the same relation in the same reach is kept once
    shared = {**body, "object": "Luca", "predicate": "friend", "visibility": "shared", "channel": "g1"}
    assert (await client.post("/relations", json=shared, headers=JSON)).status == 201
    group = {"user_id": "rosa", "session_kind": "group", "channel": "g2"}
    seen = (await (await client.get("/relations", params=group)).json())["relations"]
    assert seen == []  # another group sees neither
    entities = (await (await client.get("/entities", params=group)).json())["entities"]
    assert entities == []
    assert (await client.delete(f"/relations/{relation['id']}", params=group, headers=JSON)).status == 404
    assert (
        await client.delete(f"/relations/{relation['id']}", params={"user_id": "rosa"}, headers=JSON)
    ).status == 200
    left = (await (await client.get("/relations", params={"user_id": "rosa"})).json())["relations"]
    assert [r["object"] for r in left] == ["Luca"]
    luca = left[0]["object_id"]
    naming = await client.get("/relations", params={"user_id": "rosa", "entity": str(luca)})
    assert naming.status == 200, await naming.text()  # a query string's id is text
    assert [r["object"] for r in (await naming.json())["relations"]] == ["Luca"]
    assert (await (await client.get("/relations", params={"user_id": "rosa", "entity": "999"})).json())[
        "relations"
    ] == []
    # Nothing is left of Marco: he is neither listed nor shown.
    listed = (await (await client.get("/entities", params={"user_id": "rosa"})).json())["entities"]
    assert "Marco" not in {e["name"] for e in listed}
    assert (await client.get(f"/entities/{relation['object_id']}", params={"user_id": "rosa"})).status == 404
    bad = await client.post("/relations", json={**body, "object": "Rosa"}, headers=JSON)
    assert bad.status == 400 and (await bad.json())["error"]["code"] == "invalid_request"
    missing = await client.post("/relations", json={**body, "object": 10**9}, headers=JSON)
    assert missing.status == 404 and (await missing.json())["error"]["code"] == "entity_not_found"


async def test_another_users_entities_are_not_found(aiohttp_client: Any, tmp_path: Any, minilm: Any) -> None:
    client = await start(aiohttp_client, tmp_path, minilm)
    await ingest(client, [said("my sister is called Ana", "2026-03-01T10:00:00Z")])
    ana = next(
        e
        for e in (await (await client.get("/entities", params={"user_id": "priya"})).json())["entities"]
        if e["name"] == "Ana"
    )
    response = await client.get(f"/entities/{ana['id']}", params={"user_id": "mallory"})
    assert response.status == 404 and (await response.json())["error"]["code"] == "entity_not_found"
    assert (await (await client.get("/entities", params={"user_id": "mallory"})).json())["entities"] == []


# -- what /context hands the agent -----------------------------------------------------------------
async def test_context_starts_with_the_profile_and_leaves_out_what_says_nothing(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    client = await start(aiohttp_client, tmp_path, minilm)
    await ingest(
        client,
        [
            said("I started at Medisim this week as a clinical trainer.", "2026-03-01T10:00:00Z"),
            {"role": "assistant", "content": "Nice change."},
            said("Also my daughter is allergic to peanuts.", "2026-03-01T10:01:00Z"),
            {"role": "assistant", "content": "Got it."},
            said("And I'm vegan now.", "2026-03-01T10:02:00Z"),
            {"role": "assistant", "content": "Noted!"},
        ],
    )
    block = await context(client, "Where does Dana work?")
    lines = block["context"].splitlines()[2:]
    profile, _rest = lines[: block["profile"]], lines[block["profile"] :]
    assert any("Medisim" in line for line in profile) and any("vegan" in line for line in profile), profile
    assert not any("peanuts" in line for line in profile)  # the daughter's allergy is not the user's
    assert not any("Assistant:" in line for line in lines), lines  # content-free lines are left out
    dessert = await context(client, "Any dessert idea for tonight?")
    assert "vegan" in dessert["context"]
    unrelated = await context(client, "What's a good way to learn Rust?")
    assert unrelated["profile"] == len(unrelated["context"].splitlines()) - 2  # the profile and nothing else


async def test_a_keyword_only_of_the_turn_before_brings_no_turn_into_an_unrelated_block(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    """A turn is indexed with the turn before it: "good" in the assistant's "Good that you're going."
    is no reason to hand the user's next line to "What's a good way to remove a red wine stain?"."""
    client = await start(aiohttp_client, tmp_path, minilm)
    await ingest(
        client,
        [
            said(
                "Ugh, dentist appointment on Thursday, I've been putting it off for months.",
                "2026-02-02T19:30:00Z",
            ),
            {"role": "assistant", "content": "Good that you're going."},
            said("And we're planning a trip to Lisbon in May.", "2026-02-02T19:31:00Z"),
            {"role": "assistant", "content": "Lisbon in May is great."},
        ],
    )
    block = await context(client, "What's a good way to remove a red wine stain?")
    assert "Lisbon" not in block["context"], block


async def test_when_something_happened_is_asked_of_both_speakers_words(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    """ "When did Priya go to the beach?" asks when something happened, not an attribute of hers:
    the other speaker's line that holds the answer is not set aside as someone else's."""
    client = await start(aiohttp_client, tmp_path, minilm)
    await ingest(
        client,
        [
            said("I'm Priya and I live in Leeds.", "2026-03-01T10:00:00Z", name="Priya"),
            {
                "role": "assistant",
                "name": "John",
                "content": "Saw your beach photos from last Sunday, Priya!",
            },
            said("Thanks John, it was lovely.", "2026-03-01T10:02:00Z", name="Priya"),
        ],
    )
    block = await context(client, "When did Priya go to the beach?")
    assert "last Sunday" in block["context"], block


async def test_a_question_about_the_user_gets_no_one_elses_facts(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    client = await start(aiohttp_client, tmp_path, minilm)
    await ingest(
        client,
        [
            said("I work as a pharmacist at Boots", "2026-03-02T10:00:00Z", name="Dan", owner=False),
            said("I'm a software engineer at Monzo", "2026-03-02T10:01:00Z", name="Priya", owner=True),
        ],
        **GROUP,
    )
    block = await context(client, "Where do I work?")
    assert "Monzo" in block["context"] and "pharmacist" not in block["context"], block


async def test_asking_whom_the_users_relation_is_gets_no_one_elses_relation(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    """ "Who is my manager?" asks for one person, not "who among several": another speaker's manager
    is not an answer."""
    client = await start(aiohttp_client, tmp_path, minilm)
    await ingest(
        client,
        [
            said("My manager is Petra, she's brilliant", "2026-03-02T10:00:00Z", name="Dan", owner=False),
            said(
                "Mine is a new guy, I keep forgetting his name",
                "2026-03-02T10:01:00Z",
                name="Priya",
                owner=True,
            ),
        ],
        **GROUP,
    )
    block = await context(client, "Who is my manager?")
    assert "Petra" not in block["context"], block


async def test_a_question_naming_someone_known_only_by_their_words_gets_their_words(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    # Amaka has no entity (no fact was read from her words): the question still names her.
    client = await start(aiohttp_client, tmp_path, minilm)
    await ingest(
        client,
        [
            said("I'm a data analyst at Spotify", "2026-01-14T10:00:00Z", name="Priya", owner=True),
            said(
                "nothing exciting here, still doing nights on the ward at Karolinska lol",
                "2026-01-21T17:31:00Z",
                name="Amaka",
            ),
        ],
        **GROUP,
    )
    scope = {k: GROUP[k] for k in ("session_kind", "channel")}
    assert "Karolinska" in (await context(client, "Where does Amaka work?", **scope))["context"]
    assert "Karolinska" not in (await context(client, "Where do I work?", **scope))["context"]


async def test_the_users_later_words_on_what_is_asked_come_before_the_older_fact(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    # Whether or not a fact is read from the later words, the block must not answer with the old job.
    client = await start(aiohttp_client, tmp_path, minilm)
    await ingest(client, [said("I work as a nurse at St Mary's hospital.", "2026-01-10T09:00:00Z")])
    await ingest(
        client,
        [
            said(
                "first week in the new job done!! the Octopus Energy office has free lunch",
                "2026-05-02T18:00:00Z",
            )
        ],
        session_id="s2",
    )
    block = await context(client, "Where do I work these days?")
    lines = block["context"].splitlines()
    newer = next(i for i, line in enumerate(lines) if "Octopus" in line)
    older = [i for i, line in enumerate(lines) if "St Mary" in line and line.startswith("- [")]
    assert all(
        newer < i and "(said before the user's words of 2026-05-02 on it)" in lines[i] for i in older
    ), lines
    assert newer >= 2 + block["profile"]  # the profile holds no fact the later words may have changed


async def test_later_words_saying_a_change_without_the_questions_word_come_before_the_older_fact(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    """ "Relocated up north" says no word of "Where does Priya live?", yet it says the home changed."""
    client = await start(aiohttp_client, tmp_path, minilm)
    await ingest(client, [said("I live in Accra.", "2026-01-10T09:00:00Z")])
    await ingest(
        client,
        [
            said(
                "Big news: we relocated up north over Easter, the boys love the new school.",
                "2026-04-20T18:00:00Z",
            )
        ],
        session_id="s2",
    )
    lines = (await context(client, "Where does Priya live?"))["context"].splitlines()
    newer = next(i for i, line in enumerate(lines) if "relocated" in line)
    assert all(newer < i for i, line in enumerate(lines) if "Accra" in line), lines


async def test_two_peoples_words_kept_as_the_users_are_told_apart_by_who_said_them(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    # A conversation between two people posted as a private session, names and no owner mark.
    client = await start(aiohttp_client, tmp_path, minilm)
    await ingest(
        client,
        [
            said("I love horror films, the scarier the better.", "2026-03-01T10:00:00Z", name="Joanna"),
            said("I love fantasy films, Lord of the Rings above all.", "2026-03-01T10:01:00Z", name="Nate"),
        ],
    )
    body = {"query": "What films does Nate like?", "user_id": "priya"}
    debug = await (await client.post("/search/debug", json=body, headers=JSON)).json()
    asked = {hit["fact"]: hit["factors"] for hit in debug["fused"] if hit["fact"].startswith("The user")}
    assert any("fantasy" in fact and "lookup" in factors for fact, factors in asked.items()), asked
    assert not any("horror" in fact and "lookup" in factors for fact, factors in asked.items()), asked


async def test_of_an_attribute_with_many_values_only_the_closest_few_are_lifted(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    client = await start(aiohttp_client, tmp_path, minilm)
    likes = ["hiking", "jazz", "sushi", "board games", "sci-fi novels", "gardening"]
    await ingest(
        client, [said(f"I love {thing}.", f"2026-03-01T10:0{i}:00Z") for i, thing in enumerate(likes)]
    )
    body = {"query": "What music do I love?", "user_id": "priya"}
    response = await client.post("/search/debug", json=body, headers=JSON)
    assert response.status == 200, await response.text()
    lifted = [hit["fact"] for hit in (await response.json())["fused"] if "lookup" in hit["factors"]]
    assert 1 <= len(lifted) <= 3 and any("jazz" in fact for fact in lifted), lifted
    found = await client.post("/hybrid-search", json={**body, "limit": 5}, headers=JSON)
    assert found.status == 200


async def test_the_profile_holds_the_preferences_the_user_asked_to_keep_not_every_passing_like(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    client = await start(aiohttp_client, tmp_path, minilm)
    await ingest(
        client,
        [
            said("Remember that I love Thai food.", "2026-03-01T10:00:00Z"),
            said("I love jazz.", "2026-03-01T10:01:00Z"),
            said("I love all the yellow leaves in the park, so cozy.", "2026-03-01T10:02:00Z"),
        ],
    )
    block = await context(client, "How do I renew a passport?")
    profile = block["context"].splitlines()[2 : 2 + block["profile"]]
    assert any("Thai food" in line for line in profile), profile
    assert not any("jazz" in line or "leaves" in line for line in profile), profile
    # A passing like is still found when asked about.
    assert "jazz" in (await context(client, "What music do I like?"))["context"]


async def test_a_short_answer_is_kept_and_only_the_assistants_own_echoes_left_out(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    # A conversation between two people, the second posted with the assistant's role under her name
    # (as a bridge posts a DM): her words are hers, however short; the assistant's own echo is not.
    client = await start(aiohttp_client, tmp_path, minilm)
    await ingest(
        client,
        [
            said("Are you going to the dance festival in May?", "2026-03-01T10:00:00Z", name="Gina"),
            {
                "role": "assistant",
                "name": "Jon",
                "content": "Yes! Glad to be part of it.",
                "timestamp": "2026-03-01T10:01",
            },
            said("And what genre is your screenplay?", "2026-03-01T10:02:00Z", name="Gina"),
            {
                "role": "assistant",
                "name": "Jon",
                "content": "A mix of drama and romance!",
                "timestamp": "2026-03-01T10:03",
            },
            {
                "role": "assistant",
                "content": "That sounds like a wonderful plan, enjoy every minute!",
                "timestamp": "2026-03-01T10:04:00Z",
            },
        ],
    )
    festival = (await context(client, "What is Jon's attitude to being part of the dance festival?"))[
        "context"
    ]
    assert "Glad to be part of it" in festival, festival
    assert "wonderful plan" not in festival, festival  # the assistant's reply shares no word of it
    genre = (await context(client, "What genre is Jon's screenplay?"))["context"]
    assert "drama and romance" in genre, genre


async def test_a_relation_said_by_someone_else_is_theirs_never_the_users(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    client = await start(aiohttp_client, tmp_path, minilm)
    await ingest(
        client,
        [
            said(
                "My husband Raj and I are off to Goa next week",
                "2026-01-14T10:00:00Z",
                name="Priya",
                owner=True,
            ),
            said("Ha, my husband Tom hates flying", "2026-01-14T10:01:00Z", name="Melanie", owner=False),
        ],
        **GROUP,
    )
    scope = {k: GROUP[k] for k in ("session_kind", "channel")}
    relations = (await (await client.get("/relations", params={"user_id": "priya", **scope})).json())[
        "relations"
    ]
    links = {(r["subject"], r["predicate"], r["object"]) for r in relations}
    assert any(o == "Tom" and s == "Melanie" for s, _, o in links), links
    assert not any(o == "Tom" and s != "Melanie" for s, _, o in links), links  # not the user's husband


async def test_the_owners_words_under_two_labels_are_still_all_theirs(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    # In a DM the owner's turns say "User"; in a group they say her name. Both are hers: a question
    # naming her gets her employer from either.
    client = await start(aiohttp_client, tmp_path, minilm)
    await ingest(client, [said("I work at Monzo as a data analyst", "2026-01-10T10:00:00Z")])
    await ingest(
        client,
        [said("I work at Stripe on Fridays too", "2026-01-12T10:00:00Z", name="Priya", owner=True)],
        **GROUP,
    )
    body = {"query": "Where does Priya work?", "user_id": "priya", "limit": 10}
    debug = await (await client.post("/search/debug", json=body, headers=JSON)).json()
    looked_up = [hit["fact"] for hit in debug["fused"] if "lookup" in hit["factors"]]
    assert any("Monzo" in fact for fact in looked_up), looked_up

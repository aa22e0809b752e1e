"""What the dashboard's memory table and detail view read: GET /memories filters and
GET /memories/{id}/history, through the real server and a real SQLite file."""

from __future__ import annotations

from typing import Any

from aiohttp.test_utils import TestClient

from memory_cortex.keys import CONFIG
from tests.helpers import store, store_connection


async def _ids(client: TestClient, **params: Any) -> list[int]:
    response = await client.get("/memories", params={k: str(v) for k, v in params.items()})
    assert response.status == 200, await response.text()
    return [m["id"] for m in (await response.json())["memories"]]


async def test_filters_narrow_the_list_and_combine(client: TestClient) -> None:
    rows = await store(
        client,
        {
            "user_id": "ann",
            "fact": "Ann adopted a grey cat called Miso.",
            "topic": "pets",
            "category": "relationship",
            "importance": 8,
            "created_at": "2023-05-08T10:00:00Z",
        },
        {
            "user_id": "ann",
            "fact": "Ann runs every Tuesday morning.",
            "topic": "habits",
            "importance": 4,
            "created_at": "2023-06-01T09:00:00Z",
            "layer": "working",
        },
        {
            "user_id": "ann",
            "fact": "Ann lived in Lisbon until 2019.",
            "topic": "places",
            "importance": 6,
            "created_at": "2023-06-30T23:59:59.500Z",
            "layer": "archive",
        },
        {
            "user_id": "bob",
            "fact": "Bob's CAT is called Pixel.",
            "topic": "pets",
            "importance": 8,
            "created_at": "2023-05-08T11:00:00Z",
        },
        dedup=False,
    )
    miso, runs, lisbon, pixel = (row["id"] for row in rows)

    assert await _ids(client, user_id="ann") == [lisbon, runs, miso]
    assert await _ids(client, user_id="ann", layer="working") == [runs]
    assert await _ids(client, user_id="ann", category="relationship") == [miso]
    assert await _ids(client, user_id="ann", min_importance=5) == [lisbon, miso]
    assert await _ids(client, user_id="ann", max_importance=5) == [runs]
    assert await _ids(client, topic="pets") == [pixel, miso]
    # Dates: since is inclusive; a bare until date covers its whole day.
    assert await _ids(client, user_id="ann", since="2023-06-01") == [lisbon, runs]
    assert await _ids(client, user_id="ann", until="2023-06-30") == [lisbon, runs, miso]
    assert await _ids(client, user_id="ann", until="2023-06-30T23:59:59.499Z") == [runs, miso]
    assert await _ids(client, user_id="ann", since="2023-05-09", until="2023-06-29") == [runs]
    # Text: a case-insensitive substring of the fact or the topic, short ones too.
    assert await _ids(client, q="cat") == [pixel, miso]
    assert await _ids(client, q="CAT", user_id="bob") == [pixel]
    assert await _ids(client, q="habit") == [runs]
    assert await _ids(client, q="RU") == [runs]
    assert await _ids(client, q="nothing like this") == []
    assert await _ids(client, q="cat", layer="archive") == []


async def test_filtered_pages_follow_the_keyset_cursor(client: TestClient) -> None:
    facts = [
        {"user_id": "ann", "fact": f"Ann noted entry number {i} about tea.", "importance": 3 + i % 2}
        for i in range(7)
    ]
    stored = await store(client, *facts, dedup=False)
    wanted = [row["id"] for row in reversed(stored) if row["importance"] == 4]
    seen: list[int] = []
    before: int | None = None
    while True:
        params = {"user_id": "ann", "min_importance": "4", "q": "tea", "limit": "2"}
        if before is not None:
            params["before_id"] = str(before)
        page = await (await client.get("/memories", params=params)).json()
        seen += [m["id"] for m in page["memories"]]
        before = page["next_before_id"]
        if before is None:
            break
    assert seen == wanted


async def _page_by_date(client: TestClient, **params: Any) -> dict[str, Any]:
    query = {"user_id": "ann", "order": "created", "limit": "2", **{k: str(v) for k, v in params.items()}}
    response = await client.get("/memories", params=query)
    assert response.status == 200, await response.text()
    return await response.json()


async def test_paging_by_date_goes_on_when_the_last_row_of_a_page_is_deleted(client: TestClient) -> None:
    rows = await store(
        client,
        *({"user_id": "ann", "fact": f"Ann's note from day {day}.", "created_at": f"2024-01-0{day}T10:00:00Z"}
          for day in range(1, 6)),
        dedup=False,
    )  # fmt: skip
    newest_first = [row["id"] for row in reversed(rows)]
    first = await _page_by_date(client)
    assert [m["id"] for m in first["memories"]] == newest_first[:2]
    assert first["next_before_id"] == newest_first[1]
    assert first["next_before_created_at"] == "2024-01-04T10:00:00.000Z"

    # The dashboard can delete the row the cursor names: the next page still comes.
    response = await client.delete(f"/memories/{first['next_before_id']}", json={})
    assert response.status == 200, await response.text()
    second = await _page_by_date(
        client, before_id=first["next_before_id"], before_created_at=first["next_before_created_at"]
    )
    assert [m["id"] for m in second["memories"]] == newest_first[2:4]
    third = await _page_by_date(
        client, before_id=second["next_before_id"], before_created_at=second["next_before_created_at"]
    )
    assert [m["id"] for m in third["memories"]] == newest_first[4:]
    assert third["next_before_id"] is None and third["next_before_created_at"] is None
    # The date alone: the rows created before it (a schema-valid request is answered, never refused).
    response = await client.get("/memories", params={"order": "created", "before_created_at": "2024-01-03"})
    assert response.status == 200, await response.text()
    assert [m["id"] for m in (await response.json())["memories"]] == newest_first[3:]
    # A client that sends only before_id still pages (while its row is there).
    assert [m["id"] for m in (await _page_by_date(client, before_id=newest_first[2]))["memories"]] == (
        newest_first[3:5]
    )


async def test_a_date_cursor_reads_only_its_users_rows(client: TestClient) -> None:
    ann = await store(
        client,
        {"user_id": "ann", "fact": "Ann's older note.", "created_at": "2024-01-01T10:00:00Z"},
        {"user_id": "ann", "fact": "Ann's newer note.", "created_at": "2024-01-03T10:00:00Z"},
        dedup=False,
    )
    (bob,) = await store(
        client, {"user_id": "bob", "fact": "Bob's note.", "created_at": "2024-01-02T10:00:00Z"}
    )
    # Another user's row does not place Ann's cursor (its created_at would skip her newer note).
    page = await _page_by_date(client, before_id=bob["id"])
    assert [m["id"] for m in page["memories"]] == []
    page = await _page_by_date(client, before_id=ann[1]["id"])
    assert [m["id"] for m in page["memories"]] == [ann[0]["id"]]


async def test_bad_filters_are_400(client: TestClient) -> None:
    for params in (
        {"layer": "attic"},
        {"min_importance": "11"},
        {"since": "last tuesday"},
        {"until": "2023-13-01"},
    ):
        response = await client.get("/memories", params=params)
        assert response.status == 400, params
        assert (await response.json())["error"]["code"] == "invalid_request"


async def test_history_shows_the_supersession_chain_both_ways(client: TestClient) -> None:
    first, second, third = await store(
        client,
        {"user_id": "ann", "fact": "Ann works at a bakery."},
        {"user_id": "ann", "fact": "Ann works at a bookshop."},
        {"user_id": "ann", "fact": "Ann works at a library."},
        dedup=False,
    )
    for old, new in ((first, second), (second, third)):
        patched = await client.patch(f"/memories/{old['id']}", json={"superseded_by": new["id"]})
        assert patched.status == 200

    history = await (await client.get(f"/memories/{first['id']}/history")).json()
    assert history["memory"]["id"] == first["id"]
    assert [m["id"] for m in history["replaced_by"]] == [second["id"], third["id"]]
    assert history["replaces"] == []
    middle = await (await client.get(f"/memories/{second['id']}/history")).json()
    assert [m["id"] for m in middle["replaces"]] == [first["id"]]
    assert [m["id"] for m in middle["replaced_by"]] == [third["id"]]
    latest = await (await client.get(f"/memories/{third['id']}/history")).json()
    assert [m["id"] for m in latest["replaces"]] == [second["id"]]
    assert latest["replaced_by"] == [] and latest["summary"] is None and latest["ingest_job"] is None


async def test_history_reads_lifecycle_links_and_stays_in_its_user(client: TestClient) -> None:
    kept, folded, summary, archived, other = await store(
        client,
        {"user_id": "ann", "fact": "Ann's sister is called Ines."},
        {"user_id": "ann", "fact": "Ann has a sister, Ines."},
        {"user_id": "ann", "fact": "History: Ann moved twice before 2020."},
        {"user_id": "ann", "fact": "Ann moved to Porto in 2015.", "layer": "archive"},
        {"user_id": "bob", "fact": "Bob has a brother."},
        dedup=False,
    )
    with store_connection(client.app[CONFIG]) as conn:  # what a lifecycle run writes (services/lifecycle.py)
        conn.executemany(
            "INSERT INTO memory_links (kind, from_id, to_id) VALUES (?, ?, ?)",
            [
                ("merged", folded["id"], kept["id"]),
                ("summarised", archived["id"], summary["id"]),
                ("merged", other["id"], kept["id"]),
            ],
        )
        conn.execute("UPDATE memories SET compressed_into = ? WHERE id = ?", (summary["id"], archived["id"]))

    history = await (await client.get(f"/memories/{kept['id']}/history")).json()
    assert [m["id"] for m in history["merged_from"]] == [folded["id"]]  # not bob's row
    folded_view = await (await client.get(f"/memories/{folded['id']}/history")).json()
    assert [m["id"] for m in folded_view["merged_into"]] == [kept["id"]]
    summary_view = await (await client.get(f"/memories/{summary['id']}/history")).json()
    assert [m["id"] for m in summary_view["summarises"]] == [archived["id"]]
    archived_view = await (await client.get(f"/memories/{archived['id']}/history")).json()
    assert archived_view["summary"]["id"] == summary["id"]


async def test_history_is_scoped_to_the_owner(client: TestClient) -> None:
    (row,) = await store(client, {"user_id": "ann", "fact": "Ann keeps bees."})
    assert (await client.get(f"/memories/{row['id']}/history", params={"user_id": "bob"})).status == 404
    assert (await client.get(f"/memories/{row['id']}/history", params={"user_id": "ann"})).status == 200
    assert (await client.get("/memories/999999/history")).status == 404


async def test_short_text_filters_fold_case_beyond_ascii(client: TestClient) -> None:
    (row,) = await store(client, {"user_id": "ann", "fact": "Ann's café is called Über Ünïcode."})
    for text in ("ü", "ÜN", "É", "ünï", "CAFÉ"):
        assert await _ids(client, user_id="ann", q=text) == [row["id"]], text
    assert await _ids(client, user_id="ann", q="ö") == []


async def test_an_exactly_full_last_page_has_no_cursor(client: TestClient) -> None:
    stored = await store(
        client, *({"user_id": "ann", "fact": f"Ann fact number {i}."} for i in range(4)), dedup=False
    )
    first = await (await client.get("/memories", params={"user_id": "ann", "limit": "2"})).json()
    assert first["count"] == 2 and first["next_before_id"] == stored[2]["id"]
    last = await (
        await client.get(
            "/memories", params={"user_id": "ann", "limit": "2", "before_id": str(first["next_before_id"])}
        )
    ).json()
    assert [m["id"] for m in last["memories"]] == [stored[1]["id"], stored[0]["id"]]
    assert last["next_before_id"] is None


async def test_get_endpoints_answer_head(client: TestClient) -> None:
    for path in ("/ui/", "/ui/static/app.js", "/stats", "/health"):
        response = await client.head(path)
        assert response.status == 200, path
        assert await response.read() == b""

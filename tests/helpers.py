"""Small helpers the HTTP tests share."""

from __future__ import annotations

from typing import Any

from aiohttp.test_utils import TestClient


async def store(client: TestClient, *memories: dict[str, Any], dedup: bool = True) -> list[dict[str, Any]]:
    """POST a batch of memories and return them as stored."""
    query = "" if dedup else "?dedup=false"
    response = await client.post(f"/memories{query}", json={"memories": list(memories)})
    assert response.status == 201, await response.text()
    return (await response.json())["memories"]


async def search(client: TestClient, query: str, user_id: str | None = None, **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"query": query, **extra}
    if user_id is not None:
        body["user_id"] = user_id
    response = await client.post("/hybrid-search", json=body)
    assert response.status == 200, await response.text()
    return await response.json()

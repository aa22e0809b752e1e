"""Small helpers the HTTP tests share."""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from aiohttp import web
from aiohttp.test_utils import TestClient

from memory_cortex.config import Config
from memory_cortex.keys import CONFIG, DATABASE
from memory_cortex.records import MemoryRecord


def memory_record(**fields: Any) -> MemoryRecord:
    """A ``MemoryRecord`` as the store returns one: a plain core fact of user "u", with ``fields`` set."""
    blank: dict[str, Any] = {
        "id": 1, "user_id": "u", "topic": "", "fact": "f", "importance": 5, "category": "fact",
        "source_session": None, "source_channel": None, "ref": None, "metadata": {},
        "created_at": "2026-01-01T00:00:00.000Z", "updated_at": "2026-01-01T00:00:00.000Z",
        "access_count": 0, "last_accessed": None, "superseded_by": None, "embedding_model": None,
        "embedding_dim": None, "embedding_context": 0, "layer": "core", "layer_since": None,
        "compressed_into": None, "has_embedding": False,
    }  # fmt: skip
    return MemoryRecord(**{**blank, **fields})


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


# Copied from ../shared/fixtures/lhm (provenance and licences in its SOURCE.md, copied alongside):
# the tests must not depend on a folder outside the checkout.
LHM_FIXTURES = Path(__file__).resolve().parent / "fixtures" / "lhm"


def lhm_fixture(name: str) -> dict[str, Any]:
    """A LibreHardwareMonitor data.json from tests/fixtures/lhm (see its SOURCE.md)."""
    return json.loads((LHM_FIXTURES / name).read_text(encoding="utf-8"))


def with_sensor_value(document: dict[str, Any], sensor_id: str, value: str) -> dict[str, Any]:
    """A copy of ``document`` where the sensor ``sensor_id`` reads ``value`` (e.g. an idle GPU)."""
    document = copy.deepcopy(document)
    stack = [document]
    while stack:
        node = stack.pop()
        if node.get("SensorId") == sensor_id:
            node["Value"] = value
            node.pop("RawValue", None)
            return document
        stack.extend(node.get("Children", []))
    raise KeyError(sensor_id)


class LhmServer:
    """LibreHardwareMonitor's web server as a real loopback aiohttp server with scripted answers.

    ``mode``: "ok" (serve ``document``), "500", "garbage" (not JSON), "truncated" (the first half
    of the JSON, with a correct length), "slow" (answers after ``delay_s``, or when released).
    """

    def __init__(self, document: dict[str, Any]) -> None:
        self.document = document
        self.mode = "ok"
        self.delay_s = 5.0
        self.requests = 0
        self.released = asyncio.Event()
        self.app = web.Application()
        self.app.router.add_get("/data.json", self._data)
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/data.json"

    def hardware_config(self, **overrides: Any) -> dict[str, Any]:
        """The ``hardware`` config section pointing at this server (and never at pyamdgpuinfo)."""
        return {
            "enabled": True,
            "lhm_host": "127.0.0.1",
            "lhm_port": self.port,
            "use_pyamdgpuinfo": False,
            **overrides,
        }

    async def _data(self, request: web.Request) -> web.Response:
        self.requests += 1
        body = json.dumps(self.document).encode()
        if self.mode == "500":
            return web.Response(status=500, text="Internal Server Error")
        if self.mode == "garbage":
            return web.Response(body=b"<html>LibreHardwareMonitor</html>", content_type="application/json")
        if self.mode == "truncated":
            return web.Response(body=body[: len(body) // 2], content_type="application/json")
        if self.mode == "slow":
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.released.wait(), self.delay_s)
        return web.Response(body=body, content_type="application/json")


class ChatServer:
    """An OpenAI-compatible ``/v1/chat/completions`` on loopback that answers every call with
    ``answer`` and records what it was asked (a stand-in for llama-server with a model that extracts
    whatever it is told, as Qwen3 does)."""

    def __init__(self, answer: str, reply: Callable[[str], str] | None = None) -> None:
        self.answer = answer
        self.reply = reply  # when set, the answer to each call: of the prompt's text (an echoing model)
        self.requests: list[dict[str, Any]] = []
        self.app = web.Application()
        self.app.router.add_post("/v1/chat/completions", self._chat)
        self.app.router.add_get("/v1/models", self._models)
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def llm_config(self) -> dict[str, Any]:
        """The ``llm`` config section pointing at this server."""
        return {"backend": "openai", "model": "qwen3-8b", "url": self.url, "retry_backoff_s": 0.01}

    def prompts(self) -> str:
        """Every message content sent so far, joined."""
        return "\n".join(str(m.get("content", "")) for r in self.requests for m in r.get("messages", []))

    async def _models(self, request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": "qwen3-8b", "object": "model"}]})

    async def _chat(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.requests.append(body)
        prompt = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
        message = {"role": "assistant", "content": self.answer if self.reply is None else self.reply(prompt)}
        return web.json_response(
            {
                "object": "chat.completion",
                "choices": [{"index": 0, "finish_reason": "stop", "message": message}],
            }
        )


def slowed(target: Any, name: str, delay_s: float) -> None:
    """``target.name`` (an async method) waits ``delay_s`` before doing its work: a store, search or
    embedder that is slow today."""
    original = getattr(target, name)

    async def slow(*args: Any, **kwargs: Any) -> Any:
        await asyncio.sleep(delay_s)
        return await original(*args, **kwargs)

    setattr(target, name, slow)


async def run_lifecycle(client: TestClient, timeout: float = 60.0, **params: str) -> dict[str, Any]:
    """Start a lifecycle run through ``POST /lifecycle/run`` (202, a ``Location``), follow it to its
    end and return its report (``status`` done, or failed with the reason)."""
    response = await client.post(
        "/lifecycle/run", params=params, headers={"Content-Type": "application/json"}
    )
    assert response.status == 202, await response.text()
    started = await response.json()
    location = response.headers["Location"]
    assert location == f"/lifecycle/runs/{started['id']}" and started["stages_total"] == 6
    run = await follow_to_end(client, location, timeout)
    assert run["stage"] is None and run["report"] is not None
    return dict(run["report"])


async def follow_to_end(client: TestClient, location: str, timeout: float) -> dict[str, Any]:
    """GET ``location`` (a run started with 202) until its status is no longer running; its body."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        run: dict[str, Any] = await (await client.get(location)).json()
        if run["status"] != "running":
            return run
        assert asyncio.get_running_loop().time() < deadline, f"{location} still running: {run}"
        await asyncio.sleep(0.05)


async def import_workspace(
    client: TestClient, body: dict[str, Any], status: int = 202, timeout: float = 60.0
) -> dict[str, Any]:
    """``POST /import``: with a 202, follow the import to its end and return what it did (the
    import's ``result``); with another ``status``, the error body."""
    response = await client.post("/import", json=body)
    assert response.status == status, await response.text()
    if status != 202:
        return dict(await response.json())
    started = await response.json()
    location = response.headers["Location"]
    # A workspace whose memories are all stored already may be done by the time the 202 is written.
    assert location == f"/import/runs/{started['id']}" and started["status"] in ("running", "done")
    run = await follow_to_end(client, location, timeout)
    assert run["status"] == "done", run
    assert run["done"] == run["total"] == run["result"]["memories"], run
    return dict(run["result"])


async def eventually(check: Callable[[], Any], *, timeout: float = 20.0, what: str = "the condition") -> Any:
    """Poll ``check`` (a function, or one returning an awaitable) until it returns something true;
    that value. Raises AssertionError naming ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if asyncio.iscoroutine(value) or isinstance(value, asyncio.Future):
            value = await value
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not happen within {timeout}s (last: {value!r})")
        await asyncio.sleep(0.05)


async def wait_idle(client: TestClient, timeout: float = 20.0) -> dict[str, Any]:
    """Wait until the ingest queue has nothing pending or running; the /stats it last read."""
    last: dict[str, Any] = {}

    async def idle() -> dict[str, Any] | None:
        last.update(await (await client.get("/stats")).json())
        return dict(last) if last["ingest"]["pending"] == 0 and last["ingest"]["running"] == 0 else None

    try:
        return await eventually(idle, timeout=timeout, what="an empty ingest queue")
    except AssertionError as exc:
        raise AssertionError(f"{exc}; the queue: {last.get('ingest')}") from None


@contextlib.contextmanager
def serve_in_thread(app: web.Application) -> Iterator[str]:
    """Run ``app`` on 127.0.0.1, port 0, in a thread with its own event loop; yield its base URL.

    Schemathesis calls the API synchronously (requests), so the server cannot share the test's loop.
    """
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="fuzzed-daemon", daemon=True)
    thread.start()
    runner = web.AppRunner(app)

    async def start() -> int:
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        return runner.addresses[0][1]

    try:
        port = asyncio.run_coroutine_threadsafe(start(), loop).result(timeout=120)
        yield f"http://127.0.0.1:{port}"
    finally:
        asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(timeout=60)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
        loop.close()


@contextlib.contextmanager
def store_connection(config: Config) -> Iterator[Any]:
    """A direct connection to the store a test app uses (its SQLite file, or its PostgreSQL
    database under ``--backend postgres``), to read or plant rows; what it wrote is committed at
    the end of the block."""
    if config.database.backend == "postgres":
        import psycopg

        from memory_cortex.store.postgres.connection import PgConnection, configure

        assert config.database.url is not None
        with psycopg.connect(config.database.url.get_secret_value(), autocommit=True) as raw:
            configure(raw)
            yield PgConnection(raw)
        return
    conn = sqlite3.connect(config.database.path)
    try:
        with conn:
            yield conn
    finally:
        conn.close()


PG_FULL = """
CREATE OR REPLACE FUNCTION test_disk_full() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'could not extend file "base/1/2": No space left on device' USING ERRCODE = 'disk_full';
END $$
"""


class Disk:
    """Fills and frees the disk of a test app's store, for real as far as the store can tell: on
    SQLite the writer's ``max_page_count`` makes SQLite answer SQLITE_FULL to what needs a new page;
    on PostgreSQL a trigger makes the server answer SQLSTATE 53100 (``disk_full``) to inserts."""

    def __init__(self, app: web.Application) -> None:
        self._db = app[DATABASE]
        self._config = app[CONFIG]

    async def fill(self) -> None:
        if self._config.database.backend == "postgres":
            with store_connection(self._config) as conn:
                conn.execute(PG_FULL)
                for table in ("memories", "ingest_jobs"):
                    conn.execute(
                        f"CREATE TRIGGER test_disk_full BEFORE INSERT ON {table}"
                        " FOR EACH ROW EXECUTE FUNCTION test_disk_full()"
                    )
            return
        # Not one page more than the file has now: what needs a new page is refused.
        await self._db.on_writer(
            lambda conn: conn.execute(
                f"PRAGMA max_page_count = {conn.execute('PRAGMA page_count').fetchone()[0]}"
            )
        )

    async def free(self) -> None:
        if self._config.database.backend == "postgres":
            with store_connection(self._config) as conn:
                for table in ("memories", "ingest_jobs"):
                    conn.execute(f"DROP TRIGGER test_disk_full ON {table}")
            return
        await self._db.on_writer(lambda conn: conn.execute("PRAGMA max_page_count = 1073741823"))

"""``memory-cortex status`` and ``memory-cortex doctor`` as a user runs them: real processes, a real
daemon, real files, exit codes and the lines printed."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from memory_cortex.cli_status import readable_duration, status_lines
from memory_cortex.config import LLMConfig
from memory_cortex.models.llm import ChatMessage, LLMUnavailable, create_llm
from tests.helpers import ChatServer, serve_in_thread
from tests.processes import ROOT, call, free_port, start_daemon


def cortex(*args: str, cwd: Path, settings: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("MEMORY_CORTEX_")}
    env["MEMORY_CORTEX_HARDWARE__ENABLED"] = "false"
    env.update(settings or {})
    return subprocess.run(
        [sys.executable, "-m", "memory_cortex", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, Path]]:
    folder = tmp_path_factory.mktemp("daemon")
    port = free_port()
    process = start_daemon(folder / "memories.db", port, folder / "daemon.log")
    try:
        yield port, folder / "memories.db"
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_status_of_a_running_daemon(daemon: tuple[int, Path], tmp_path: Path) -> None:
    port, _ = daemon
    call(port, "POST", "/memories", {"user_id": "sam", "fact": "Sam's bike is a blue Brompton"})
    result = cortex("status", "--port", str(port), cwd=ROOT)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("memory-cortex ") and f"at http://127.0.0.1:{port}" in lines[0]
    assert any(line.split()[:2] == ["memories", "1"] for line in lines), lines
    as_json = json.loads(cortex("status", "--json", "--port", str(port), cwd=ROOT).stdout)
    assert as_json["stats"]["total_memories"] == 1
    assert as_json["health"]["status"] in ("ok", "degraded")


def test_status_when_nothing_runs_exits_3_with_how_to_start(tmp_path: Path) -> None:
    result = cortex("status", "--port", str(free_port()), cwd=tmp_path)
    assert result.returncode == 3
    assert result.stdout == ""
    assert "is not running" in result.stderr and "memory-cortex serve" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_doctor_on_a_fresh_folder_finds_nothing_to_fix(tmp_path: Path) -> None:
    result = cortex("doctor", "--db", str(tmp_path / "new.db"), "--port", str(free_port()), cwd=tmp_path)
    assert result.returncode == 0, result.stdout
    checks = {line[2:].split()[0] for line in result.stdout.splitlines() if line[:1] in ("✓", "!", "✗")}
    assert {"python", "config", "database", "disk", "embeddings", "llm", "port", "network"} <= checks
    assert "does not exist yet" in result.stdout
    assert "✗" not in result.stdout


def test_doctor_names_each_problem_with_its_fix(tmp_path: Path) -> None:
    not_ours = tmp_path / "other.db"
    with sqlite3.connect(not_ours) as conn:
        conn.execute("CREATE TABLE notes (body TEXT)")
    conn.close()
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        result = cortex("doctor", "--json", "--db", str(not_ours), "--port", str(port), cwd=tmp_path)
    assert result.returncode == 1
    findings = {finding["check"]: finding for finding in json.loads(result.stdout)}
    assert findings["database"]["outcome"] == "fail"
    assert "not a Memory Cortex database" in findings["database"]["detail"]
    assert findings["port"]["outcome"] == "fail"
    assert "in use by another program" in findings["port"]["detail"]
    assert findings["port"]["fix"]
    folder = cortex("doctor", "--db", str(tmp_path), "--port", str(free_port()), cwd=tmp_path)
    assert folder.returncode == 1
    assert "is a folder" in folder.stdout and "→" in folder.stdout


def test_doctor_recognises_the_daemon_on_its_port(daemon: tuple[int, Path], tmp_path: Path) -> None:
    port, db = daemon
    result = cortex("doctor", "--json", "--db", str(db), "--port", str(port), cwd=tmp_path)
    findings = {finding["check"]: finding for finding in json.loads(result.stdout)}
    assert findings["port"]["outcome"] == "ok"
    assert "held by a running memory-cortex" in findings["port"]["detail"]
    assert findings["database"]["outcome"] == "ok"
    assert "schema" in findings["database"]["detail"]


def test_status_lines_say_when_the_llm_or_embedder_is_down() -> None:
    stats = {
        "total_memories": 3,
        "live_memories": 2,
        "db_bytes": 2_000_000,
        "ingest": {"pending": 1, "running": 0, "failed": 0},
        "llm": {
            "backend": "openai",
            "model": "qwen3-8b",
            "ok": False,
            "last_error": "no reply within 10.0 s",
        },
        "embedder": {
            "backend": "sentence_transformers",
            "model": "all-MiniLM-L6-v2",
            "ok": False,
            "last_error": "x",
        },
    }
    lines = status_lines(
        "http://127.0.0.1:8300", {"version": "0.2.0", "status": "degraded", "uptime_s": 200}, stats
    )
    assert "not answering (no reply within 10.0 s)" in lines[5]
    assert "FTS-only" in lines[6]
    assert lines[2].split()[1:] == ["3", "min", "20", "s"]


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [
        (0, "0 s"),
        (9.7, "9 s"),
        (137.445, "2 min 17 s"),
        (7500, "2 h 5 min"),
        (3 * 86400 + 4 * 3600 + 5, "3 d 4 h"),
    ],
)
def test_readable_duration(seconds: float, shown: str) -> None:
    assert readable_duration(seconds) == shown


def test_status_of_another_program_on_the_port_is_one_line_and_never_gets_the_token(tmp_path: Path) -> None:
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    seen: list[str | None] = []

    class NotCortex(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.append(self.headers.get("Authorization"))
            body = b"<html>a web app</html>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), NotCortex)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        env = {key: value for key, value in os.environ.items() if not key.startswith("MEMORY_CORTEX_")}
        env["MEMORY_CORTEX_SERVER__API_TOKEN"] = "not-for-strangers"
        result = subprocess.run(
            [sys.executable, "-m", "memory_cortex", "status", "--port", str(server.server_address[1])],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        server.shutdown()
        server.server_close()
    assert result.returncode == 1
    assert "not memory-cortex" in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert seen and all(header is None for header in seen)


def test_doctor_checks_a_postgres_store_and_never_shows_its_password(
    tmp_path: Path, postgres_url: str
) -> None:
    env = {"MEMORY_CORTEX_DATABASE__BACKEND": "postgres"}
    fresh = cortex(
        "doctor", "--json", cwd=tmp_path, settings=env | {"MEMORY_CORTEX_DATABASE__URL": postgres_url}
    )
    findings = {finding["check"]: finding for finding in json.loads(fresh.stdout)}
    assert findings["database"]["outcome"] in ("ok", "warn"), findings["database"]
    assert "migration(s) apply on next start" in findings["database"]["detail"]  # an empty database
    assert "PostgreSQL server" in findings["disk"]["detail"]
    secret = "postgresql://cortex:hunter2-secret@127.0.0.1:1/cortex"
    down = cortex("doctor", "--json", cwd=tmp_path, settings=env | {"MEMORY_CORTEX_DATABASE__URL": secret})
    assert down.returncode == 1 and "hunter2-secret" not in down.stdout + down.stderr
    findings = {finding["check"]: finding for finding in json.loads(down.stdout)}
    assert findings["database"]["outcome"] == "fail"
    assert (
        "cannot reach PostgreSQL at postgresql://cortex:***@127.0.0.1:1/cortex"
        in findings["database"]["detail"]
    )


def test_doctor_calls_the_llm_as_the_daemon_does_and_names_a_doubled_v1(tmp_path: Path) -> None:
    """Issue 35: doctor said ✓ for an llm.url ending in /v1 (it only saw that something answered);
    the daemon then got 404s whose message hid the doubled /v1."""
    chat = ChatServer(answer="OK")
    with serve_in_thread(chat.app) as url:
        settings = {
            "MEMORY_CORTEX_LLM__BACKEND": "openai",
            "MEMORY_CORTEX_LLM__URL": url,
            "MEMORY_CORTEX_LLM__MODEL": "qwen3-8b",
        }

        def llm_finding(**changed: str) -> dict[str, str]:
            result = cortex(
                "doctor", "--json", "--db", str(tmp_path / "m.db"), "--port", str(free_port()),
                cwd=tmp_path, settings=settings | changed,
            )  # fmt: skip
            return {finding["check"]: finding for finding in json.loads(result.stdout)}["llm"]

        good = llm_finding()
        assert good["outcome"] == "ok" and "answered a one-token chat completion" in good["detail"], good
        assert chat.requests[-1]["max_tokens"] == 1 and chat.requests[-1]["model"] == "qwen3-8b"
        asked = len(chat.requests)
        doubled = llm_finding(MEMORY_CORTEX_LLM__URL=url + "/v1")
        assert doubled["outcome"] == "fail", doubled
        assert f"it would call {url}/v1/v1/chat/completions" in doubled["detail"]
        assert doubled["fix"] == f"set llm.url to {url}"
        assert len(chat.requests) == asked  # said before any call
        dead = llm_finding(MEMORY_CORTEX_LLM__URL=f"http://127.0.0.1:{free_port()}")
        assert dead["outcome"] == "fail" and dead["fix"], dead

        # The daemon's own error names the whole address it called.
        async def call_with_v1() -> str:
            model = create_llm(LLMConfig(backend="openai", url=url + "/v1", retries=0))
            assert model is not None
            await model.start()
            try:
                await model.chat([ChatMessage("user", "hi")], max_tokens=1)
            except LLMUnavailable as exc:
                return exc.message
            finally:
                await model.close()
            return "no error"

        assert f"HTTP 404 from {url}/v1/v1/chat/completions" in asyncio.run(call_with_v1())

"""Helpers for tests that run the real daemon or CLI as a process: a free loopback port, requests
classified by what they say about a write, a daemon to spawn, kill and stop, and the seed's
embedding service over the real MiniLM (so a daemon restarts in a second)."""

from __future__ import annotations

import asyncio
import contextlib
import enum
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from memory_cortex.models.embedders import SentenceTransformerEmbedder

ROOT = Path(__file__).resolve().parent.parent
# The float model, as conftest's ``minilm`` embeds in-process: what a child process stores and what
# a test stores in-process are then one model's vectors. A test of the default (the int8 copy) sets
# MEMORY_CORTEX_EMBEDDINGS__QUANTIZE itself.
FLOAT_MODEL = {"MEMORY_CORTEX_EMBEDDINGS__QUANTIZE": "none"}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def call(port: int, method: str, path: str, body: Any = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}",
        data=data,
        method=method,
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


def start_daemon(
    db: Path, port: int, log: Path, extra_env: dict[str, str] | None = None
) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_CORTEX_")}
    env["MEMORY_CORTEX_LOGGING__FORMAT"] = "json"
    # Rules-only extraction: these tests are about the daemon, not the model.
    env["MEMORY_CORTEX_LLM__BACKEND"] = "rules"
    env.update(FLOAT_MODEL)
    env.update(extra_env or {})
    with log.open("ab") as log_file:  # the child keeps its own copy of the descriptor
        process = subprocess.Popen(
            [sys.executable, "-m", "memory_cortex", "serve", "--db", str(db), "--port", str(port)],
            cwd=ROOT,
            env=env,
            stdout=log_file,
            stderr=subprocess.STDOUT,
        )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"daemon exited with {process.returncode}: {log.read_text()[-2000:]}")
        try:
            call(port, "GET", "/health")
            return process
        except OSError:
            time.sleep(0.3)
    process.kill()
    raise AssertionError("daemon did not answer /health in 120 s")


class Outcome(enum.Enum):
    ACKED = "acked"  # a 2xx: committed before the answer
    REJECTED = "rejected"  # a 4xx: refused, nothing written
    NOT_SENT = "not_sent"  # connection refused: the daemon was down, nothing written
    MAYBE = "maybe"  # cut off (or a 5xx): wholly applied or not at all


@dataclass(frozen=True)
class Reply:
    outcome: Outcome
    status: int | None = None
    body: Any = None


def send(port: int, method: str, path: str, body: Any = None, timeout: float = 20.0) -> Reply:
    """One request on a fresh connection, classified by what it tells about the write."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        try:
            connection.connect()
        except ConnectionRefusedError:
            return Reply(Outcome.NOT_SENT)
        payload = None if body is None else json.dumps(body)
        connection.request(method, path, body=payload, headers={"Content-Type": "application/json"})
        response = connection.getresponse()
        data = response.read()
    except (OSError, http.client.HTTPException):
        return Reply(Outcome.MAYBE)
    finally:
        connection.close()
    parsed = json.loads(data) if data else None
    if 200 <= response.status < 300:
        return Reply(Outcome.ACKED, response.status, parsed)
    if 400 <= response.status < 500:
        return Reply(Outcome.REJECTED, response.status, parsed)
    return Reply(Outcome.MAYBE, response.status, parsed)


class Daemon:
    """``python -m memory_cortex serve`` on a fresh loopback port per start; its log appends to ``log``."""

    def __init__(self, db: Path, log: Path) -> None:
        self.db, self.log = db, log
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None

    def spawn(self, settings: dict[str, str]) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_CORTEX_")}
        env.update(FLOAT_MODEL)
        env.update(settings)
        self.port = free_port()
        with self.log.open("ab") as log_file:  # the child keeps its own copy of the descriptor
            self.process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "memory_cortex",
                    "serve",
                    "--db",
                    str(self.db),
                    "--port",
                    str(self.port),
                ],
                cwd=ROOT,
                env=env,
                stdout=log_file,
                stderr=subprocess.STDOUT,
            )

    def wait_ready(self, timeout: float = 120.0) -> None:
        assert self.process is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"daemon exited with {self.process.returncode}: {self.log_tail()}")
            if send(self.port, "GET", "/health", timeout=2).outcome is Outcome.ACKED:
                return
            time.sleep(0.05)
        raise AssertionError(f"daemon did not answer /health in {timeout} s: {self.log_tail()}")

    def kill(self) -> None:
        """SIGKILL: no shutdown hook, no flush; only what was committed survives."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
        if self.process is not None:
            self.process.wait(timeout=30)

    def stop(self) -> int:
        """SIGTERM and the exit status (0 when the shutdown was clean)."""
        assert self.process is not None
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=60)

    def log_tail(self) -> str:
        return self.log.read_text(errors="replace")[-3000:]


@contextlib.contextmanager
def embedding_server(embedder: SentenceTransformerEmbedder) -> Iterator[str]:
    """The seed's embedding service (``POST /embed {"text"}`` → ``{"embedding"}``) over the real MiniLM."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            try:
                text = json.loads(self.rfile.read(int(self.headers["Content-Length"])))["text"]
            except (OSError, ValueError):  # the daemon was killed while it sent the request
                return
            vector = asyncio.run(embedder.embed_documents([text]))[0]
            body = json.dumps({"embedding": vector.tolist()}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            with contextlib.suppress(ConnectionError):  # the daemon was killed while it waited
                self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, name="embedding-server", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def cli(
    *args: str,
    stdin: str | None = None,
    timeout: float = 120,
    cwd: Path = ROOT,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """``python -m memory_cortex ARGS`` in ``cwd``, with this environment less every
    MEMORY_CORTEX_* variable, plus ``env``."""
    variables = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_CORTEX_")}
    variables["PYTHONPATH"] = str(ROOT)
    env = {**variables, **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "memory_cortex", *args],
        cwd=cwd,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=timeout,
        check=False,
    )

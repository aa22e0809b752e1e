"""What a newcomer meets first (issue 23): each way a start can fail is one line with its fix and exit
status 2, found before any model loads; a good start says where it listens and where the dashboard is,
and the daemon's bare address leads to the dashboard."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.processes import ROOT, call, free_port, start_daemon

# Far below a model load (MiniLM alone takes seconds here): the checks come first.
FAST_S = 10.0


def serve(*args: str, env: dict[str, str] | None = None) -> tuple[subprocess.CompletedProcess[str], float]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_CORTEX_")}
    started = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-m", "memory_cortex", "serve", *args],
        cwd=ROOT,
        env={**clean, **(env or {})},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return result, time.monotonic() - started


def one_line(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 2, (result.returncode, result.stderr[-2000:])
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("memory-cortex: ")
    assert "Traceback" not in result.stderr
    return lines[0]


def test_a_port_in_use_is_one_line_before_any_model_loads(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result, took = serve("--port", str(port), "--db", str(tmp_path / "m.db"))
    line = one_line(result)
    assert f"port {port} on 127.0.0.1 is already in use" in line and "--port" in line
    assert took < FAST_S
    assert not (tmp_path / "m.db").exists()  # nothing was opened


def test_broken_yaml_is_one_line_with_where(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text("server:\n  port: 8300\n  host: [oops\n")
    result, _ = serve("--config", str(config))
    line = one_line(result)
    assert "not valid YAML (line 4, column 1)" in line and str(config) in line


def test_a_database_path_that_is_a_folder_is_one_line(tmp_path: Path) -> None:
    result, took = serve("--db", str(tmp_path), "--port", str(free_port()))
    line = one_line(result)
    assert f"database.path {tmp_path} is a folder" in line and "memories.db" in line
    assert took < FAST_S


def test_a_database_folder_that_cannot_be_created_is_one_line() -> None:
    # /proc looks writable to access(2) as root, but no folder can be made in it.
    result, took = serve("--db", "/proc/memory-cortex-test/m.db", "--port", str(free_port()))
    line = one_line(result)
    assert "cannot create its folder /proc/memory-cortex-test" in line and "--db" in line
    assert took < FAST_S


def test_a_missing_gguf_is_one_line(tmp_path: Path) -> None:
    missing = tmp_path / "models" / "qwen3-8b.gguf"
    result, took = serve(
        "--db",
        str(tmp_path / "m.db"),
        "--port",
        str(free_port()),
        env={"MEMORY_CORTEX_LLM__BACKEND": "llama_cpp", "MEMORY_CORTEX_LLM__MODEL_PATH": str(missing)},
    )
    line = one_line(result)
    assert f"llm.model_path {missing} is not a file" in line
    assert took < FAST_S


def test_every_problem_found_is_said_at_once(tmp_path: Path) -> None:
    result, _ = serve(
        "--db",
        str(tmp_path),
        env={
            "MEMORY_CORTEX_LLM__BACKEND": "llama_cpp",
            "MEMORY_CORTEX_LLM__MODEL_PATH": str(tmp_path / "x.gguf"),
        },
    )
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 2, result.stderr


def test_a_good_start_says_where_it_listens_and_the_address_leads_to_the_dashboard(tmp_path: Path) -> None:
    port = free_port()
    log = tmp_path / "daemon.log"
    process = start_daemon(tmp_path / "data" / "m.db", port, log)
    try:
        messages = [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]
        listening = [m for m in messages if m["message"].startswith("listening on")]
        base = f"http://127.0.0.1:{port}"
        # Where, and what extracts facts (the rules extractor here: no LLM).
        assert [m["message"] for m in listening] == [
            f"listening on {base}, dashboard at {base}/ui/; extraction: the rules extractor, no LLM"
            " (explicit statements only; docs/guides/llm-servers.md adds one)"
        ]
        assert listening[0]["extractor"] == "rules"
        assert any(m["message"] == "creating the database folder" for m in messages)
        request = f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n".encode()
        with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
            conn.sendall(request)
            head = conn.recv(4096).decode("latin-1")
        assert head.startswith("HTTP/1.1 308") and "Location: /ui/" in head, head
        assert call(port, "GET", "/health")["status"] in ("ok", "degraded")
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_without_llama_cpp_the_packaged_gemma_runs_on_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    """llama-cpp-python is optional (`--with-llama`, the extra): asking for the packaged Gemma without
    it still starts, on the rules extractor."""
    from memory_cortex import startup
    from memory_cortex.config import Config

    real_find_spec = startup.importlib.util.find_spec
    monkeypatch.setattr(
        startup.importlib.util,
        "find_spec",
        lambda name, *a: None if name == "llama_cpp" else real_find_spec(name, *a),
    )
    assert Config().llm.backend == "rules"  # the default needs no llama.cpp at all
    gemma = Config.model_validate({"llm": {"backend": "llama_cpp"}})
    config, note = startup.without_missing_llama(gemma)
    assert config.llm.backend == "rules"
    assert note is not None and "scripts/start.sh --with-llama" in note
    # A GGUF the user named is never dropped silently: it is a start-up problem instead.
    named = Config.model_validate({"llm": {"backend": "llama_cpp", "model_path": "/models/qwen3-8b.gguf"}})
    assert startup.without_missing_llama(named) == (named, None)
    assert any("llama-cpp-python is not installed" in line for line in startup.check_paths(named))
    # With llama.cpp there, nothing changes.
    monkeypatch.setattr(startup.importlib.util, "find_spec", real_find_spec)
    assert startup.without_missing_llama(gemma) == (gemma, None)


def test_an_unreachable_postgresql_is_one_line_without_its_password() -> None:
    env = {
        "MEMORY_CORTEX_DATABASE__BACKEND": "postgres",
        "MEMORY_CORTEX_DATABASE__URL": "postgresql://cortex:hunter2-secret@127.0.0.1:1/cortex?connect_timeout=3",
        "MEMORY_CORTEX_LLM__BACKEND": "rules",
        "MEMORY_CORTEX_HARDWARE__ENABLED": "false",
    }
    result, _ = serve("--port", str(free_port()), env=env)
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr[-2000:]
    line = result.stderr.strip().splitlines()[-1]  # after the "starting" log line: the port was bound
    assert line.startswith("memory-cortex: ")
    assert "cannot connect to PostgreSQL at postgresql://cortex:***@127.0.0.1:1/cortex" in line
    assert "hunter2-secret" not in result.stderr + result.stdout

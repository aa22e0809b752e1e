"""scripts/start.sh and scripts/stop.sh, run as a person would: a real daemon on a free loopback port."""

from __future__ import annotations

import http.server
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
START = REPO / "scripts" / "start.sh"
STOP = REPO / "scripts" / "stop.sh"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def is_alive(pid: int) -> bool:
    """True for a running process; a zombie (exited, not yet reaped) counts as gone."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    try:
        return stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def run_script(
    script: Path, *args: str, env: dict[str, str], cwd: Path, timeout: float
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(script), *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def get_health(port: int) -> dict[str, object]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5) as response:
        return dict(json.loads(response.read()))


@pytest.fixture
def pid_file(tmp_path: Path) -> Path:
    return tmp_path / "run" / "memory-cortex.pid"


@pytest.fixture
def log_file(tmp_path: Path) -> Path:
    return tmp_path / "logs" / "memory-cortex.log"


@pytest.fixture
def script_env(pid_file: Path, log_file: Path) -> Iterator[dict[str, str]]:
    """The scripts run on this interpreter's environment, with their files in tmp_path; whatever they
    leave running is stopped afterwards, even when the test failed."""
    env = {name: value for name, value in os.environ.items() if not name.startswith("MEMORY_CORTEX_")}
    env.update(
        MEMORY_CORTEX_VENV=str(Path(sys.executable).parents[1]),
        MEMORY_CORTEX_PID_FILE=str(pid_file),
        MEMORY_CORTEX_LOG_FILE=str(log_file),
        MEMORY_CORTEX_START_TIMEOUT="120",
        MEMORY_CORTEX_STOP_TIMEOUT="30",
    )
    yield env
    if pid_file.exists():
        run_script(STOP, "--force", env=env, cwd=REPO, timeout=60)
    if pid_file.exists():
        pid = int(pid_file.read_text())
        if is_alive(pid):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.slow
def test_start_waits_for_health_and_stop_shuts_the_daemon_down(
    tmp_path: Path, pid_file: Path, log_file: Path, script_env: dict[str, str]
) -> None:
    port = free_port()
    daemon_args = ["--no-install", "--port", str(port), "--db", str(tmp_path / "x.db")]

    # Run from an unrelated folder: the scripts find the repository themselves.
    started = run_script(START, *daemon_args, env=script_env, cwd=tmp_path, timeout=180)
    assert started.returncode == 0, started.stdout + started.stderr
    assert f"http://127.0.0.1:{port}" in started.stdout
    assert "stop.sh" in started.stdout
    pid = int(pid_file.read_text())
    assert is_alive(pid)
    assert get_health(port)["status"] in {"ok", "degraded"}
    assert log_file.stat().st_size > 0

    again = run_script(START, *daemon_args, env=script_env, cwd=tmp_path, timeout=60)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "already running" in again.stdout
    assert int(pid_file.read_text()) == pid

    stopped = run_script(STOP, env=script_env, cwd=tmp_path, timeout=60)
    assert stopped.returncode == 0, stopped.stdout + stopped.stderr
    assert f"stopped (pid {pid}) in " in stopped.stdout
    assert not is_alive(pid)
    assert not pid_file.exists()
    with pytest.raises(urllib.error.URLError):
        get_health(port)


def test_a_daemon_that_dies_at_start_up_is_told_by_its_own_line_first(
    tmp_path: Path, pid_file: Path, log_file: Path, script_env: dict[str, str]
) -> None:
    """Issue 35: start.sh printed the log's last 30 lines, earlier runs' access logs included, with
    the useful line last, and exited 1."""
    log_file.parent.mkdir(parents=True)
    log_file.write_text("".join(f"an earlier run's access log line {i}\n" for i in range(40)))
    failed = run_script(
        START, "--no-install", "--port", str(free_port()), "--db", str(tmp_path),
        env=script_env, cwd=tmp_path, timeout=120,
    )  # fmt: skip
    assert failed.returncode == 2, failed.stdout + failed.stderr
    lines = failed.stderr.strip().splitlines()
    assert lines[0].startswith("memory-cortex: ") and "is a folder" in lines[0], lines
    assert "exited during start-up (exit code 2)" in failed.stderr
    assert "earlier run" not in failed.stderr and len(lines) <= 8, lines
    assert not pid_file.exists()


def test_a_configuration_error_is_said_before_anything_starts(
    tmp_path: Path, pid_file: Path, log_file: Path, script_env: dict[str, str]
) -> None:
    config = tmp_path / "config.yaml"
    config.write_text("server:\n  prot: 8400\n")  # a typo
    failed = run_script(
        START, "--no-install", "--config", str(config), env=script_env, cwd=tmp_path, timeout=60
    )
    assert failed.returncode == 2
    assert failed.stderr.startswith("memory-cortex: configuration error: server.prot"), failed.stderr
    assert "in use" not in failed.stderr and not pid_file.exists() and not log_file.exists()
    # The same typo in the user's own file (no --config): the line names that file.
    user_file = Path(script_env["XDG_CONFIG_HOME"]) / "memory-cortex" / "config.yaml"
    user_file.parent.mkdir(parents=True, exist_ok=True)
    user_file.write_text("server:\n  prot: 8400\n")
    try:
        failed = run_script(START, "--no-install", env=script_env, cwd=tmp_path, timeout=60)
    finally:
        user_file.unlink()
    assert failed.returncode == 2
    assert failed.stderr.startswith(
        f"memory-cortex: configuration error: server.prot: Extra inputs are not permitted (in {user_file})"
    ), failed.stderr
    bad_flag = run_script(
        START, "--no-install", "--port", "not-a-port", env=script_env, cwd=tmp_path, timeout=60
    )
    assert bad_flag.returncode == 2 and "invalid int value: 'not-a-port'" in bad_flag.stderr
    assert not pid_file.exists()


def test_a_port_held_by_a_plain_listener_names_it_and_how_to_choose_another(
    tmp_path: Path, pid_file: Path, script_env: dict[str, str]
) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        refused = run_script(
            START, "--no-install", "--port", str(port), env=script_env, cwd=tmp_path, timeout=60
        )
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert f"port {port} on 127.0.0.1 is in use by " in refused.stderr
    assert f"(pid {os.getpid()})" in refused.stderr  # ss names this test's process
    assert f"--port {port + 1}" in refused.stderr
    user_file = Path(script_env["XDG_CONFIG_HOME"]) / "memory-cortex" / "config.yaml"
    assert f"set server.port in {user_file}" in refused.stderr  # where the user's file is
    assert not pid_file.exists()


class _HealthyHandler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b'{"status": "ok"}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:  # quiet test output
        pass


def test_start_refuses_a_port_where_another_server_answers(
    tmp_path: Path, pid_file: Path, script_env: dict[str, str]
) -> None:
    # Otherwise the other server's /health would be taken for the new daemon's.
    server = http.server.HTTPServer(("127.0.0.1", 0), _HealthyHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        port = str(server.server_address[1])
        refused = run_script(START, "--no-install", "--port", port, env=script_env, cwd=tmp_path, timeout=60)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
    assert refused.returncode == 2
    assert f"port {port} on 127.0.0.1 is in use" in refused.stderr
    assert "answers /health (status: ok)" in refused.stderr and "--port" in refused.stderr
    assert not pid_file.exists()


def test_start_refuses_a_venv_without_python(tmp_path: Path, script_env: dict[str, str]) -> None:
    env = {**script_env, "MEMORY_CORTEX_VENV": str(tmp_path / "no-venv")}
    failed = run_script(START, "--no-install", env=env, cwd=tmp_path, timeout=60)
    assert failed.returncode == 1
    assert "no Python in" in failed.stderr


def test_stop_without_pid_file_says_not_running(tmp_path: Path, script_env: dict[str, str]) -> None:
    stopped = run_script(STOP, env=script_env, cwd=tmp_path, timeout=60)
    assert stopped.returncode == 0
    assert "not running" in stopped.stdout


def test_stop_removes_a_stale_pid_file_without_killing_its_pid(
    tmp_path: Path, pid_file: Path, script_env: dict[str, str]
) -> None:
    # The PID was recycled by a process that is not the daemon: it must survive.
    bystander = subprocess.Popen(["sleep", "60"])
    try:
        pid_file.parent.mkdir(parents=True)
        pid_file.write_text(f"{bystander.pid}\n")
        stopped = run_script(STOP, env=script_env, cwd=tmp_path, timeout=60)
        assert stopped.returncode == 0
        assert "not running" in stopped.stdout
        assert not pid_file.exists()
        assert bystander.poll() is None
    finally:
        bystander.kill()
        bystander.wait(timeout=10)


def test_stop_force_kills_a_daemon_that_ignores_sigterm(
    tmp_path: Path, pid_file: Path, script_env: dict[str, str]
) -> None:
    # A stand-in whose command line looks like the daemon's, and that ignores SIGTERM.
    ignores_sigterm = (
        "import signal, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
        "print('ready', flush=True); time.sleep(60)"
    )
    stubborn = subprocess.Popen(
        [sys.executable, "-c", ignores_sigterm, "-m", "memory_cortex"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert stubborn.stdout is not None
        assert stubborn.stdout.readline() == "ready\n"
        pid_file.parent.mkdir(parents=True)
        pid_file.write_text(f"{stubborn.pid}\n")
        env = {**script_env, "MEMORY_CORTEX_STOP_TIMEOUT": "1"}

        refused = run_script(STOP, env=env, cwd=tmp_path, timeout=60)
        assert refused.returncode == 1
        assert "still running" in refused.stderr
        assert "--force" in refused.stderr
        assert pid_file.exists()
        assert stubborn.poll() is None

        forced = run_script(STOP, "--force", env=env, cwd=tmp_path, timeout=60)
        assert forced.returncode == 0, forced.stdout + forced.stderr
        assert f"killed (pid {stubborn.pid})" in forced.stdout
        assert stubborn.wait(timeout=10) == -signal.SIGKILL
        assert not pid_file.exists()
    finally:
        if stubborn.poll() is None:
            stubborn.kill()
        stubborn.wait(timeout=10)
        if stubborn.stdout is not None:
            stubborn.stdout.close()


@pytest.mark.slow
def test_status_asks_the_daemon_start_sh_started_on_its_own_port(
    tmp_path: Path, pid_file: Path, script_env: dict[str, str]
) -> None:
    """Issue 35: after `start.sh --port 8431`, `memory-cortex status` reported the daemon on 8300."""
    port = free_port()
    started = run_script(
        START, "--no-install", "--port", str(port), "--db", str(tmp_path / "x.db"),
        env=script_env, cwd=tmp_path, timeout=180,
    )  # fmt: skip
    assert started.returncode == 0, started.stdout + started.stderr
    status = subprocess.run(
        [sys.executable, "-m", "memory_cortex", "status"],
        env=script_env, cwd=tmp_path, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert status.returncode == 0, status.stdout + status.stderr
    assert f"at http://127.0.0.1:{port}" in status.stdout.splitlines()[0]
    assert f"the daemon scripts/start.sh started (pid {pid_file.read_text().strip()}" in status.stdout
    # doctor checks the configured port, and says where the started daemon is.
    other = free_port()
    doctor = subprocess.run(
        [sys.executable, "-m", "memory_cortex", "doctor", "--json", "--port", str(other)],
        env=script_env | {"MEMORY_CORTEX_HARDWARE__ENABLED": "false"}, cwd=tmp_path,
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    [port_check] = [f for f in json.loads(doctor.stdout) if f["check"] == "port"]
    assert f"runs at http://127.0.0.1:{port}" in port_check["detail"], port_check
    assert run_script(STOP, env=script_env, cwd=tmp_path, timeout=60).returncode == 0
    assert not pid_file.with_name("memory-cortex.url").exists()
    # Nothing started here any more: the configured address, and it says so.
    gone = subprocess.run(
        [sys.executable, "-m", "memory_cortex", "status", "--port", str(port)],
        env=script_env, cwd=tmp_path, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert gone.returncode == 3 and "the address given" in gone.stderr

"""Finding and asking the user's OpenClaw: its command, the node that runs it, their versions, its
config file, and what ``openclaw plugins inspect`` says about the plugin.

Every call runs the real ``openclaw`` command (with the user's environment, so ``OPENCLAW_CONFIG_PATH``
and ``OPENCLAW_STATE_DIR`` are honoured as OpenClaw honours them) and never edits anything itself.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

OPENCLAW_MINIMUM = (2026, 9, 6)
PLUGIN_ID = "memory-cortex"
# The plugin's package.json engines: node >=24.16.0 <25 || >=26.1.0 (what OpenClaw 2026.9.6 runs on).
NODE_HINT = "OpenClaw needs node >= 24.16 (24.x) or >= 26.1"
COMMAND_TIMEOUT_S = 300


class OpenClawProblem(Exception):
    """Something the user must fix before OpenClaw can be connected; the message says what."""


@dataclass(frozen=True)
class OpenClaw:
    """The ``openclaw`` command to run, the environment to run it in, and what it reported."""

    command: Path
    env: dict[str, str]
    version: str
    node: Path
    node_version: str

    def run(self, *args: str, timeout: float = COMMAND_TIMEOUT_S) -> subprocess.CompletedProcess[str]:
        """``openclaw ARGS``: its exit status and output (never raises for a non-zero status)."""
        return _run([str(self.command), *args], self.env, timeout)

    def config_path(self) -> Path:
        """The config file OpenClaw reads (``openclaw config file --json``)."""
        answer = self.run("config", "file", "--json", timeout=60)
        try:
            return Path(json.loads(answer.stdout)["path"])
        except (ValueError, KeyError, TypeError) as exc:
            raise OpenClawProblem(
                f"`openclaw config file --json` did not name a file: {_tail(answer)}"
            ) from exc

    def inspect_plugin(self) -> dict[str, Any]:
        """``openclaw plugins inspect memory-cortex --runtime --json``, parsed."""
        answer = self.run("plugins", "inspect", PLUGIN_ID, "--runtime", "--json")
        try:
            report = json.loads(answer.stdout)
        except ValueError as exc:
            raise OpenClawProblem(f"`openclaw plugins inspect {PLUGIN_ID}` failed: {_tail(answer)}") from exc
        if not isinstance(report, dict):
            raise OpenClawProblem(f"`openclaw plugins inspect {PLUGIN_ID}` answered {answer.stdout[:200]!r}")
        return report


def find_openclaw(explicit: Path | None, node: Path | None) -> OpenClaw:
    """The user's OpenClaw: ``explicit``, else ``openclaw`` on PATH; run by ``node`` (else the node on
    PATH). Raises :class:`OpenClawProblem` naming what is missing or too old."""
    env = dict(os.environ)
    if node is not None:
        env["PATH"] = f"{Path(node).resolve().parent}{os.pathsep}{env.get('PATH', '')}"
    command = Path(explicit) if explicit is not None else _which("openclaw", env)
    if command is None or not command.exists():
        raise OpenClawProblem(
            f"OpenClaw not found{f' at {explicit}' if explicit else ' on PATH'}: install it"
            " (npm install -g openclaw@2026.9.6, with node >= 24.16), or name it: --openclaw PATH"
        )
    node_path = Path(node) if node is not None else _which("node", env)
    if node_path is None:
        raise OpenClawProblem(
            f"no node on PATH: {NODE_HINT}; --node PATH names one (scripts/node.sh installs one)"
        )
    node_answer = _run([str(node_path), "--version"], env, 30)
    node_version = node_answer.stdout.strip()
    if not node_is_supported(node_version):
        raise OpenClawProblem(
            f"{node_path} is node {node_version or '(no version)'}: {NODE_HINT}; --node PATH names"
            " another (scripts/node.sh prints the path of one it installs)"
        )
    answer = _run([str(command), "--version"], env, 60)
    match = re.search(r"(\d{4})\.(\d+)\.(\d+)", answer.stdout)
    if answer.returncode != 0 or match is None:
        raise OpenClawProblem(f"`{command} --version` failed: {_tail(answer)}")
    version = ".".join(match.groups())
    if tuple(int(part) for part in match.groups()) < OPENCLAW_MINIMUM:
        minimum = ".".join(str(part) for part in OPENCLAW_MINIMUM)
        raise OpenClawProblem(
            f"OpenClaw {version} is older than {minimum}, the first with the memory slot the plugin takes: update it"
        )
    return OpenClaw(command=command, env=env, version=version, node=node_path, node_version=node_version)


def node_is_supported(version: str) -> bool:
    match = re.fullmatch(r"v?(\d+)\.(\d+)\.(\d+)", version)
    if match is None:
        return False
    major, minor = int(match[1]), int(match[2])
    return (major == 24 and minor >= 16) or (major == 26 and minor >= 1) or major > 26


def _which(name: str, env: dict[str, str]) -> Path | None:
    found = shutil.which(name, path=env.get("PATH"))
    return Path(found) if found else None


def _run(argv: list[str], env: dict[str, str], timeout: float) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired as exc:
        raise OpenClawProblem(f"`{' '.join(argv)}` did not finish in {timeout:.0f} s") from exc
    except OSError as exc:
        raise OpenClawProblem(f"cannot run {argv[0]}: {exc}") from exc


def _tail(answer: subprocess.CompletedProcess[str], lines: int = 5) -> str:
    text = (answer.stderr or "") + (answer.stdout or "")
    return (
        " / ".join(line.strip() for line in text.strip().splitlines()[-lines:])
        or f"exit status {answer.returncode}"
    )

"""The verb ``openclaw connect``: install the OpenClaw plugin and point it at this daemon.

It prints each step, every setting it changed in ``openclaw.json``, what OpenClaw says about the
plugin afterwards, and the command that undoes it. Exit status 0 when OpenClaw loaded the plugin
with everything it needs, 1 when something is wrong (the lines say what), 2 for a bad configuration.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from .openclaw.installation import PLUGIN_ID

if TYPE_CHECKING:
    from .config import Config

PLUGIN_DIR = Path(__file__).resolve().parent.parent / "integrations" / "openclaw"


def add_openclaw_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``openclaw connect``."""
    openclaw = commands.add_parser("openclaw", help="connect OpenClaw to this daemon")
    verbs = openclaw.add_subparsers(dest="openclaw_command", metavar="VERB", required=True)
    connect = verbs.add_parser(
        "connect",
        help="install the plugin into OpenClaw and point it at this daemon",
        description="Find OpenClaw (and check the node and OpenClaw versions), install the plugin from"
        " this checkout with `openclaw plugins install --link`, merge its entry into openclaw.json"
        " (conversation access for its hooks, userId, this daemon's port and token, the memory slot)"
        " without a duplicate key and keeping the file's comments, then check it with"
        " `openclaw plugins inspect`. Prints every change and how to undo it.",
    )
    connect.add_argument(
        "--config",
        type=Path,
        default=argparse.SUPPRESS,
        help="the daemon's YAML config, for its host, port and token (default: ~/.config/memory-cortex/config.yaml)",
    )
    connect.add_argument("--openclaw", type=Path, help="the openclaw command (default: openclaw on PATH)")
    connect.add_argument("--node", type=Path, help="the node that runs OpenClaw (default: node on PATH)")
    connect.add_argument(
        "--user-id",
        help="whose memories OpenClaw's turns are (the plugin's userId; default: the entry's, else your"
        " login name)",
    )
    connect.add_argument(
        "--plugin-dir",
        type=Path,
        help="the plugin to install (default: this checkout's integrations/openclaw)",
    )
    connect.add_argument(
        "--install-dir",
        type=Path,
        help="where the plugin's files are copied for OpenClaw to load"
        " (default: ~/.local/share/memory-cortex/openclaw-plugin)",
    )
    connect.set_defaults(run=run_openclaw_connect)


def run_openclaw_connect(config: Config, args: argparse.Namespace) -> int:
    """Connect, print the report (the token never shown), return the exit status (see the module)."""
    from .config import user_data_path
    from .doctor import daemon_url
    from .openclaw.connect import DaemonAddress, connect
    from .openclaw.installation import OpenClawProblem, find_openclaw

    plugin_dir: Path = args.plugin_dir or PLUGIN_DIR
    if not (plugin_dir / "openclaw.plugin.json").is_file():
        print(
            f"memory-cortex: no OpenClaw plugin in {plugin_dir}: it ships in a checkout's"
            " integrations/openclaw; --plugin-dir names it",
            file=sys.stderr,
        )
        return 2
    token = config.server.api_token.get_secret_value() if config.server.api_token else None
    daemon = DaemonAddress(host=_dialled_host(config.server.host), port=config.server.port, token=token)
    install_dir = args.install_dir or user_data_path() / "openclaw-plugin"

    def say(line: str, *, file: TextIO = sys.stdout) -> None:
        print(line.replace(token, "********") if token else line, file=file, flush=True)

    try:
        openclaw = find_openclaw(args.openclaw, args.node)
        say(
            f"OpenClaw {openclaw.version}: {openclaw.command} (node {openclaw.node_version}: {openclaw.node})"
        )
        say(f"installing the plugin: {plugin_dir} copied to {install_dir} …")
        report = connect(openclaw, plugin_dir, install_dir, daemon, args.user_id)
    except OpenClawProblem as exc:
        say(f"memory-cortex: {exc}", file=sys.stderr)
        return 1
    say(f"changed in {report.config_path}:")
    for line in report.changes or ["nothing: it was already connected"]:
        say(f"  {line}")
    for note in report.notes:
        say(f"  ({note})")
    if report.user_id_from != "--user-id":
        say(
            f"userId is {report.user_id!r}, from {report.user_id_from}: the user whose memories these are (--user-id to choose)"
        )
    for check in report.checks:
        say(f"✓ {check}")
    for problem in report.problems:
        say(f"✗ {problem}")
    say(_daemon_line(daemon_url(config), config))
    undo = report.undo
    if undo is None:
        say(
            f"undo: nothing to undo from this run (to disconnect: openclaw plugins uninstall {PLUGIN_ID} --force)"
        )
    else:
        say(f"undo: {undo}")
    say("OpenClaw reads the change when it next starts (a running gateway: openclaw gateway restart);")
    say("after upgrading Memory Cortex, run this again: OpenClaw loads the copy, not the checkout")
    return 1 if report.problems else 0


def _dialled_host(bound: str) -> str:
    """The address the plugin dials for a daemon bound to ``bound`` (a wildcard: this machine)."""
    return "127.0.0.1" if bound in ("0.0.0.0", "::", "") else bound


def _daemon_line(base: str, config: Config) -> str:
    import httpx

    from .doctor import auth_headers

    try:
        answer = httpx.get(f"{base}/health", headers=auth_headers(config), timeout=3)
        status = (
            answer.json().get("status", "?") if answer.status_code == 200 else f"HTTP {answer.status_code}"
        )
        return f"✓ the daemon answers at {base} (status: {status})"
    except (httpx.HTTPError, ValueError):
        return f"! nothing answers at {base} yet: start the daemon (./scripts/start.sh) before OpenClaw's next turn"

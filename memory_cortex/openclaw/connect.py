"""``memory-cortex openclaw connect``: install the plugin into the user's OpenClaw and point it at
this daemon, in one step that can be read back and undone.

The steps: find OpenClaw and check node and OpenClaw versions (:mod:`.installation`); read its config
file (JSON5) and keep a copy; copy the plugin's files (those its package.json publishes) to a folder
of their own and run ``openclaw plugins install --link`` on it (a checkout's plugin folder may hold
node_modules from the tests, with OpenClaw's own bundled plugins that its discovery would count as
children of this one and refuse); merge the plugin's entry
(conversation access for its hooks, ``userId``, the daemon's host, port and token, the memory slot)
into the entry the install wrote, by editing the user's original text so comments survive
(:mod:`.json5_merge`; OpenClaw's own writer drops them); then ask ``openclaw config validate`` and
``openclaw plugins inspect`` whether it took. Nothing the user wrote is lost: the copy is named in
the report with the command that puts it back. The daemon's token is never in what the report says.
"""

from __future__ import annotations

import getpass
import json
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .files import deploy_plugin, keep_copy, put_back, read_text, write_text
from .installation import PLUGIN_ID, OpenClaw, OpenClawProblem
from .json5_merge import Json5MergeError, load_json5, merge_json5, merged

# Hooks the plugin registers that read the conversation (OpenClaw drops them without the setting).
CONVERSATION_HOOKS = ("before_prompt_build", "agent_end")
_UNSET = object()


@dataclass(frozen=True)
class DaemonAddress:
    """Where the plugin finds the daemon: host and port as the plugin dials them, and its token."""

    host: str
    port: int
    token: str | None


@dataclass
class ConnectReport:
    """What ``connect`` did: the config file, each change (``path: old -> new``), notes, checks."""

    config_path: Path
    existed: bool
    user_id: str
    user_id_from: str  # "--user-id", "the entry" (kept from an earlier run) or "your login name"
    backup: Path | None = None
    changes: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    checks: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def undo(self) -> str | None:
        """The commands that put ``openclaw.json`` back as it was before this run; None when this
        run changed nothing in it."""
        if not self.changes:
            return None
        uninstall = f"openclaw plugins uninstall {PLUGIN_ID} --force"
        if not self.existed or self.backup is None:
            return f"{uninstall} && rm {shlex.quote(str(self.config_path))}"
        return f"{uninstall} && cp {shlex.quote(str(self.backup))} {shlex.quote(str(self.config_path))}"


def plugin_entry(daemon: DaemonAddress, user_id: str) -> dict[str, Any]:
    """The ``plugins.entries.memory-cortex`` settings ``connect`` writes (merged into what is there;
    the host always, so an address from an earlier run never lingers)."""
    settings: dict[str, Any] = {
        "middlewareHost": daemon.host,
        "middlewarePort": daemon.port,
        "userId": user_id,
    }
    if daemon.token:
        settings["token"] = daemon.token
    return {"enabled": True, "hooks": {"allowConversationAccess": True}, "config": settings}


def connect(
    openclaw: OpenClaw, plugin_source: Path, install_dir: Path, daemon: DaemonAddress, user_id: str | None
) -> ConnectReport:
    """Copy the plugin from ``plugin_source`` to ``install_dir``, install it and point it at
    ``daemon`` for ``user_id`` (None: the entry's ``userId``, else the login name); the report says
    what changed and whether OpenClaw took it.

    Raises:
        OpenClawProblem: the config file is a symbolic link or not JSON5, the copy or the install
            failed (``openclaw.json`` is then as it was).
    """
    config_path = openclaw.config_path()
    if config_path.is_symlink():
        raise OpenClawProblem(
            f"{config_path} is a symbolic link; OpenClaw wants the file itself there: point"
            " OPENCLAW_CONFIG_PATH at it (nothing was changed)"
        )
    existed = config_path.exists()
    original_mode = config_path.stat().st_mode & 0o777 if existed else 0o600
    original_text = read_text(config_path)
    try:
        original = load_json5(original_text)
    except Json5MergeError as exc:
        raise OpenClawProblem(f"{config_path} is {exc}: fix it first (nothing was changed)") from exc
    current = ((original.get("plugins") or {}).get("entries") or {}).get(PLUGIN_ID) or {}
    earlier_user = (current.get("config") or {}).get("userId") if isinstance(current, dict) else None
    if user_id:
        chosen, source = user_id, "--user-id"
    elif isinstance(earlier_user, str) and earlier_user:
        chosen, source = earlier_user, "the entry"
    else:
        chosen, source = getpass.getuser(), "your login name"
    report = ConnectReport(config_path=config_path, existed=existed, user_id=chosen, user_id_from=source)
    installed_copy = deploy_plugin(plugin_source, install_dir)
    if existed:
        report.backup = keep_copy(config_path)

    installed = openclaw.run(
        "plugins", "install", "--link", str(installed_copy), "--force", "--accept-capabilities"
    )
    if installed.returncode != 0:
        put_back(config_path, original_text, existed=existed)
        lines = (installed.stderr + installed.stdout).strip().splitlines()[-8:]
        raise OpenClawProblem(
            f"`openclaw plugins install` failed (exit {installed.returncode}); {config_path} is as it was:\n  "
            + "\n  ".join(lines)
        )
    written_text = read_text(config_path)
    ours = {"plugins": {"entries": {PLUGIN_ID: plugin_entry(daemon, chosen)}, "slots": {"memory": PLUGIN_ID}}}
    try:
        text = _merged_text(original_text, original, written_text, ours, report)
    except Json5MergeError as exc:
        put_back(config_path, original_text, existed=existed)
        raise OpenClawProblem(f"{config_path} could not be updated ({exc}); it is as it was") from exc
    write_text(config_path, text, private=daemon.token is not None)
    if daemon.token is not None and original_mode & 0o077:
        report.notes.append("made private (0600): it now holds the daemon's token")
    report.changes = describe_changes(original, load_json5(text))
    if not report.changes and report.backup is not None:
        report.backup.unlink()  # nothing to undo from this run
        report.backup = None
    if not daemon.token and isinstance(current, dict) and (current.get("config") or {}).get("token"):
        report.notes.append(
            "config.token is set but this daemon has no server.api_token: remove it from the entry"
        )
    _check(openclaw, report)
    return report


def _merged_text(
    original_text: str,
    original: dict[str, Any],
    written_text: str,
    ours: dict[str, Any],
    report: ConnectReport,
) -> str:
    """What the install wrote plus ``ours``, applied to the user's own text when that can be done
    (comments and all), else to the install's plain JSON (then said in the report)."""
    written = load_json5(written_text)
    wanted = merged(written, ours)
    try:
        merge = merge_json5(original_text, merged(settings_added(original, written), ours))
        if load_json5(merge.text) != wanted:  # the install also removed something: keep its file
            raise Json5MergeError("the install removed settings")
    except Json5MergeError as exc:
        report.notes.append(f"comments could not be kept ({exc}); your original file is {report.backup}")
        return merge_json5(written_text, ours).text
    report.notes += [
        f"removed an earlier duplicate of {place}: OpenClaw reads only the last one"
        for place in merge.removed_duplicates
    ]
    if merge.had_comments and merge.text != original_text:
        report.notes.append("comments kept")
    return merge.text


def _check(openclaw: OpenClaw, report: ConnectReport) -> None:
    """``openclaw config validate`` and ``plugins inspect``: loaded, in the memory slot, hooks allowed."""
    try:
        validated = openclaw.run("config", "validate", "--json", timeout=120)
        inspected = openclaw.inspect_plugin()
    except OpenClawProblem as exc:  # the file is written by now: say so, with the undo
        report.problems.append(str(exc))
        return
    if validated.returncode == 0:
        report.checks.append("openclaw config validate: ok")
    else:
        report.problems.append(
            f"openclaw config validate: {(validated.stdout or validated.stderr).strip()[:400]}"
        )
    plugin = inspected.get("plugin") or {}
    hooks = sorted(hook.get("name", "") for hook in inspected.get("typedHooks") or [])
    diagnostics = [item.get("message", "") for item in inspected.get("diagnostics") or []]
    if plugin.get("status") != "loaded":
        report.problems.append(f"the plugin is {plugin.get('status')!r}, not loaded")
    if not plugin.get("memorySlotSelected"):
        report.problems.append("the plugin does not hold OpenClaw's memory slot")
    missing = [hook for hook in CONVERSATION_HOOKS if hook not in hooks]
    if missing:
        report.problems.append(f"hooks not registered: {', '.join(missing)}")
    report.problems += [f"OpenClaw says: {message}" for message in diagnostics]
    if not report.problems:
        report.checks.append(
            f"openclaw plugins inspect {PLUGIN_ID}: loaded, in the memory slot, hooks {', '.join(hooks)}"
        )


def settings_added(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """The settings ``after`` has that ``before`` lacks or holds otherwise (nested like the config)."""
    updates: dict[str, Any] = {}
    for key, value in after.items():
        old = before.get(key, _UNSET)
        if isinstance(value, dict) and isinstance(old, dict):
            nested = settings_added(old, value)
            if nested:
                updates[key] = nested
        elif value != old:
            updates[key] = value
    return updates


def describe_changes(before: dict[str, Any], after: dict[str, Any], prefix: str = "") -> list[str]:
    """One line per setting that differs: ``path: old -> new`` (secrets shown as ********)."""
    lines = []
    for key in list(after) + [key for key in before if key not in after]:
        old, new = before.get(key, _UNSET), after.get(key, _UNSET)
        path = f"{prefix}{key}"
        if isinstance(old, dict) and isinstance(new, dict):
            lines += describe_changes(old, new, path + ".")
        elif isinstance(new, dict) and new:  # an object where there was none: each of its settings
            if old is not _UNSET:
                lines.append(f"{path}: {_shown(path, old)} -> (an object)")
            lines += describe_changes({}, new, path + ".")
        elif isinstance(old, dict) and old:
            lines += describe_changes(old, {}, path + ".")
            if new is not _UNSET:
                lines.append(f"{path}: (an object) -> {_shown(path, new)}")
        elif old != new:
            lines.append(f"{path}: {_shown(path, old)} -> {_shown(path, new)}")
    return lines


def _shown(path: str, value: Any) -> str:
    if value is _UNSET:
        return "(unset)"
    if path.endswith(".token") and value:
        return "********"
    return json.dumps(value, ensure_ascii=False)

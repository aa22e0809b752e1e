"""``memory-cortex openclaw connect``: install the plugin into the user's OpenClaw and point it at
this daemon, in one step that can be read back and undone.

The steps: find OpenClaw and check node and OpenClaw versions (:mod:`.installation`); read its config
file (JSON5) and keep a copy; copy the plugin's files (those its package.json publishes) to a folder
of their own and run ``openclaw plugins install --link`` on it (a checkout's plugin folder may hold
node_modules from the tests, with OpenClaw's 63 bundled plugins that its discovery would count as
children of this one and refuse); merge the plugin's entry
(conversation access for its hooks, ``userId``, the daemon's host, port and token, the memory slot)
into the entry the install wrote, by editing the user's original text so comments survive
(:mod:`.json5_merge`; OpenClaw's own writer drops them); then ask ``openclaw config validate`` and
``openclaw plugins inspect`` whether it took. Nothing the user wrote is lost: the copy is named in
the report with the command that puts it back.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

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
    backup: Path | None = None
    changes: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    checks: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def undo(self) -> str:
        """The commands that put the user's OpenClaw back as it was before ``connect`` changed it."""
        restore = (
            f"cp {self.backup} {self.config_path}" if self.backup is not None else f"rm {self.config_path}"
        )
        return f"openclaw plugins uninstall {PLUGIN_ID} --force && {restore}"


def plugin_entry(daemon: DaemonAddress, user_id: str) -> dict[str, Any]:
    """The ``plugins.entries.memory-cortex`` settings ``connect`` writes (merged into what is there)."""
    settings: dict[str, Any] = {"middlewarePort": daemon.port, "userId": user_id}
    if daemon.host != "127.0.0.1":
        settings["middlewareHost"] = daemon.host
    if daemon.token:
        settings["token"] = daemon.token
    return {"enabled": True, "hooks": {"allowConversationAccess": True}, "config": settings}


def deploy_plugin(source: Path, target: Path) -> Path:
    """``target`` made a copy of the plugin in ``source``: the files its package.json publishes
    (``files``) and package.json itself, replacing an older copy whole."""
    package = json.loads((source / "package.json").read_text(encoding="utf-8"))
    staging = target.with_name(target.name + ".new")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    for name in [*package.get("files", []), "package.json"]:
        path = source / name.rstrip("/")
        if path.is_dir():
            shutil.copytree(path, staging / path.name)
        elif path.is_file():
            shutil.copy2(path, staging / path.name)
    shutil.rmtree(target, ignore_errors=True)
    staging.rename(target)
    return target


def connect(openclaw: OpenClaw, plugin_dir: Path, daemon: DaemonAddress, user_id: str) -> ConnectReport:
    """Install and configure the plugin in ``plugin_dir`` (a copy :func:`deploy_plugin` made); the
    report says what changed and whether OpenClaw took it.

    Raises:
        OpenClawProblem: the config file cannot be read as JSON5, or the install failed (the file
            is then as it was).
    """
    config_path = openclaw.config_path()
    report = ConnectReport(config_path=config_path)
    original_text = config_path.read_text(encoding="utf-8") if config_path.exists() else ""
    try:
        original = load_json5(original_text)
    except Json5MergeError as exc:
        raise OpenClawProblem(f"{config_path} is {exc}: fix it first (nothing was changed)") from exc
    if config_path.exists():
        report.backup = _keep_copy(config_path)

    installed = openclaw.run(
        "plugins", "install", "--link", str(plugin_dir), "--force", "--accept-capabilities"
    )
    if installed.returncode != 0:
        _write_back(config_path, original_text)
        lines = (installed.stderr + installed.stdout).strip().splitlines()[-8:]
        raise OpenClawProblem(
            f"`openclaw plugins install` failed (exit {installed.returncode}); {config_path} is as it was:\n  "
            + "\n  ".join(lines)
        )
    written_text = config_path.read_text(encoding="utf-8") if config_path.exists() else ""
    ours = {
        "plugins": {"entries": {PLUGIN_ID: plugin_entry(daemon, user_id)}, "slots": {"memory": PLUGIN_ID}}
    }
    # What the install wrote, plus our entry, applied to the user's own text (comments and all).
    updates = merged(_additions(original, load_json5(written_text)), ours)
    wanted = merged(load_json5(written_text), ours)
    try:
        merge = merge_json5(original_text, updates)
        if load_json5(merge.text) != wanted:  # the install also removed something: keep its file
            raise Json5MergeError("the install removed settings")
        text = merge.text
        report.notes += [
            f"removed an earlier duplicate of {place}: OpenClaw reads only the last one"
            for place in merge.removed_duplicates
        ]
        if original_text and ("//" in original_text or "/*" in original_text):
            report.notes.append("comments kept")
    except Json5MergeError as exc:
        text = merge_json5(written_text, ours).text
        report.notes.append(f"comments could not be kept ({exc}); your original file is {report.backup}")
    _write_back(config_path, text)
    report.changes = _changes(original, load_json5(text))
    if text == original_text and report.backup is not None:  # nothing to undo from this run
        report.backup.unlink()
        report.backup = _earliest_copy(config_path)
    _check(openclaw, report)
    return report


def _check(openclaw: OpenClaw, report: ConnectReport) -> None:
    """``openclaw config validate`` and ``plugins inspect``: loaded, in the memory slot, hooks allowed."""
    validated = openclaw.run("config", "validate", "--json", timeout=120)
    if validated.returncode == 0:
        report.checks.append("openclaw config validate: ok")
    else:
        report.problems.append(
            f"openclaw config validate: {(validated.stdout or validated.stderr).strip()[:400]}"
        )
    inspected = openclaw.inspect_plugin()
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


def _additions(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """The settings ``after`` has that ``before`` lacks or holds otherwise (nested like the config)."""
    updates: dict[str, Any] = {}
    for key, value in after.items():
        old = before.get(key, _UNSET)
        if isinstance(value, dict) and isinstance(old, dict):
            nested = _additions(old, value)
            if nested:
                updates[key] = nested
        elif value != old:
            updates[key] = value
    return updates


def _changes(before: dict[str, Any], after: dict[str, Any], prefix: str = "") -> list[str]:
    """One line per setting that differs: ``path: old -> new`` (secrets shown as ********)."""
    lines = []
    for key in list(after) + [key for key in before if key not in after]:
        old, new = before.get(key, _UNSET), after.get(key, _UNSET)
        path = f"{prefix}{key}"
        if isinstance(old, dict) and isinstance(new, dict):
            lines += _changes(old, new, path + ".")
        elif isinstance(new, dict) and new and old is _UNSET:  # a new section: each of its settings
            lines += _changes({}, new, path + ".")
        elif isinstance(old, dict) and old and new is _UNSET:
            lines += _changes(old, {}, path + ".")
        elif old != new:
            lines.append(f"{path}: {_shown(path, old)} -> {_shown(path, new)}")
    return lines


def _shown(path: str, value: Any) -> str:
    if value is _UNSET:
        return "(unset)"
    if path.endswith(".token") and value:
        return "********"
    return json.dumps(value, ensure_ascii=False)


def _earliest_copy(path: Path) -> Path | None:
    """The copy an earlier ``connect`` kept of ``path`` before it first changed it, if any."""
    copies = sorted(path.parent.glob(f"{path.name}.before-memory-cortex-*"))
    return copies[0] if copies else None


def _keep_copy(path: Path) -> Path:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    copy = path.with_name(f"{path.name}.before-memory-cortex-{stamp}")
    shutil.copy2(path, copy)
    return copy


def _write_back(path: Path, text: str) -> None:
    """Replace ``path`` at once (a temporary file renamed over it), keeping its permissions."""
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o600
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise

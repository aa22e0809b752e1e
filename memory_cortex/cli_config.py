"""The verbs ``config init`` (a commented starter file where the daemon reads it) and ``config show``
(every setting the daemon would run with, and where each came from).

A setting comes from the first of: a command-line flag, a ``MEMORY_CORTEX_<SECTION>__<KEY>``
variable, the configuration file, the default in the code (the order :func:`load_config` resolves
them in). Secrets are shown masked, as ``GET /config`` shows them.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

if TYPE_CHECKING:
    from .config import Config


@dataclass(frozen=True)
class Setting:
    """One setting: ``name`` (``section.key``), its effective ``value`` (JSON) and its ``source``."""

    name: str
    value: Any
    source: str


def add_config_commands(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    add_database_flags: Callable[[argparse.ArgumentParser], None],
) -> None:
    """Register ``config init`` and ``config show``."""
    config = commands.add_parser("config", help="write a starter configuration, or show the settings")
    verbs = config.add_subparsers(dest="config_command", metavar="VERB", required=True)
    init = verbs.add_parser(
        "init",
        help="write a commented starter configuration (~/.config/memory-cortex/config.yaml)",
        description="Write the configuration file the daemon reads (--config names another): every"
        " setting at its default, commented out, to uncomment and change. --from copies an existing"
        " file there instead (an older release's config/config.yaml), after checking it alone (the"
        " environment plays no part). An existing file is never replaced without --force, which keeps"
        " it beside as <file>.<time>.bak.",
    )
    init.add_argument(
        "--config", type=Path, default=argparse.SUPPRESS, help="the file to write (default: the user's)"
    )
    init.add_argument("--from", dest="source", type=Path, help="copy this configuration file instead")
    init.add_argument(
        "--force", action="store_true", help="replace an existing file (kept beside it as <name>.<time>.bak)"
    )
    init.set_defaults(run=run_config_init, needs_config=False)
    show = verbs.add_parser(
        "show",
        help="every setting, its value and where it came from (flag, environment, file, default)",
        description="Print every setting the daemon would run with, secrets masked, and where each came"
        " from: a flag, a MEMORY_CORTEX_* variable, the configuration file, or the default.",
    )
    add_database_flags(show)
    show.add_argument("--json", action="store_true", help="print a JSON list of {name, value, source}")
    show.set_defaults(run=run_config_show)


def run_config_init(_config: Config | None, args: argparse.Namespace) -> int:
    """Write the starter (or ``--from``'s copy) to ``--config`` or the user's file; 1 when it exists
    (without ``--force``) or ``--from`` is not a valid configuration, with one line saying why."""
    from .config import user_config_path

    target = Path(getattr(args, "config", None) or user_config_path())
    if args.source is not None:
        problem = _not_a_configuration(args.source)
        if problem is not None:
            print(f"memory-cortex: not copied: {args.source}: {problem}", file=sys.stderr)
            return 1
    if target.exists() and not args.force:
        print(
            f"memory-cortex: {target} already exists; edit it, or add --force to replace it"
            " (the old one is kept beside it)",
            file=sys.stderr,
        )
        return 1
    target.parent.mkdir(parents=True, exist_ok=True)
    kept = None
    if target.exists():
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
        kept = target.with_name(f"{target.name}.{stamp}.bak")
        shutil.copy2(target, kept)
    text = args.source.read_text(encoding="utf-8") if args.source is not None else starter_text()
    # It may come to hold an API token or a database password: the user's alone, before any byte.
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(text)
    print(f"wrote {target}" + (f" (a copy of {args.source})" if args.source is not None else ""))
    if kept is not None:
        print(f"the file it replaced is kept as {kept}")
    print("the daemon reads it when it next starts; `memory-cortex config show` prints the result")
    return 0


def starter_text() -> str:
    """The example configuration with every setting commented out: a file that changes nothing until
    a line is uncommented (with its section's line), so later releases' defaults still reach it."""
    from .config import EXAMPLE_CONFIG_PATH

    lines = [
        "# Uncomment a setting (and the line of its section) to change it; the rest keep their defaults."
    ]
    for line in EXAMPLE_CONFIG_PATH.read_text(encoding="utf-8").splitlines():
        stripped = line.lstrip()
        lines.append(line if not stripped or stripped.startswith("#") else f"# {line}")
    return "\n".join(lines) + "\n"


def _not_a_configuration(path: Path) -> str | None:
    """Why ``path`` is not a valid configuration file on its own, or None."""
    from pydantic import ValidationError

    from .config import check_config_file

    try:
        check_config_file(path)
    except ValidationError as exc:
        error = exc.errors(include_url=False, include_input=False)[0]
        return f"{'.'.join(str(part) for part in error['loc']) or 'config'}: {error['msg']}"
    except (OSError, yaml.YAMLError, ValueError) as exc:
        return str(exc).splitlines()[0]
    return None


def run_config_show(config: Config, args: argparse.Namespace) -> int:
    from .__main__ import overrides_from
    from .config import config_file, config_file_note

    path = config_file(getattr(args, "config", None))
    settings = setting_sources(config, path, overrides_from(args), dict(os.environ))
    if args.json:
        print(json.dumps([asdict(setting) for setting in settings], indent=2))
        return 0
    print(f"configuration file: {path if path is not None else 'none (defaults and environment only)'}")
    note = config_file_note(path)
    if note is not None:
        print(f"warning: {note}")
    width = max(len(setting.name) for setting in settings)
    for setting in settings:
        print(f"{setting.name.ljust(width)}  {json.dumps(setting.value)}  ({setting.source})")
    return 0


def setting_sources(
    config: Config, path: Path | None, overrides: dict[str, Any], environ: dict[str, str]
) -> list[Setting]:
    """Each setting of ``config`` (resolved from ``path``, ``environ`` and the flags' ``overrides``)
    with the source it came from."""
    written = file_settings(path)
    return [
        Setting(f"{section}.{key}", value, setting_origin(section, key, overrides, environ, written, path))
        for section, values in config.model_dump(mode="json").items()
        for key, value in values.items()
    ]


def file_settings(path: Path | None) -> dict[str, Any]:
    """The sections ``path`` writes, as YAML reads them ({} without a file or a readable mapping)."""
    if path is None:
        return {}
    try:
        written = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return {}
    return written if isinstance(written, dict) else {}


def setting_origin(
    section: str,
    key: str,
    overrides: dict[str, Any],
    environ: Mapping[str, str],
    written: dict[str, Any],
    path: Path | None,
) -> str:
    """Where ``section.key`` came from, in :func:`load_config`'s order: ``flag``,
    ``environment: MEMORY_CORTEX_…``, ``file: <path>`` (``written`` is :func:`file_settings`) or
    ``default``."""
    from .config import ENV_PREFIX

    variable = f"{ENV_PREFIX}{section}__{key}".upper()
    if key in (overrides.get(section) or {}):
        return "flag"
    if variable in environ:
        return f"environment: {variable}"
    if isinstance(written.get(section), dict) and key in written[section]:
        return f"file: {path}"
    return "default"

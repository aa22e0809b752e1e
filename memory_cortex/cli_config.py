"""The verb ``config show``: every setting the daemon would run with, and where each came from.

A setting comes from the first of: a command-line flag, a ``MEMORY_CORTEX_<SECTION>__<KEY>``
variable, the configuration file, the default in the code (the order :func:`load_config` resolves
them in). Secrets are shown masked, as ``GET /config`` shows them.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Callable
from dataclasses import asdict, dataclass
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
    """Register ``config show``."""
    config = commands.add_parser("config", help="show the settings the daemon runs with")
    verbs = config.add_subparsers(dest="config_command", metavar="VERB", required=True)
    show = verbs.add_parser(
        "show",
        help="every setting, its value and where it came from (flag, environment, file, default)",
        description="Print every setting the daemon would run with, secrets masked, and where each came"
        " from: a flag, a MEMORY_CORTEX_* variable, the configuration file, or the default.",
    )
    add_database_flags(show)
    show.add_argument("--json", action="store_true", help="print a JSON list of {name, value, source}")
    show.set_defaults(run=run_config_show)


def run_config_show(config: Config, args: argparse.Namespace) -> int:
    from .__main__ import overrides_from
    from .config import config_file

    path = config_file(getattr(args, "config", None))
    settings = setting_sources(config, path, overrides_from(args), dict(os.environ))
    if args.json:
        print(json.dumps([asdict(setting) for setting in settings], indent=2))
        return 0
    print(f"configuration file: {path if path is not None else 'none (defaults and environment only)'}")
    width = max(len(setting.name) for setting in settings)
    for setting in settings:
        print(f"{setting.name.ljust(width)}  {json.dumps(setting.value)}  ({setting.source})")
    return 0


def setting_sources(
    config: Config, path: Path | None, overrides: dict[str, Any], environ: dict[str, str]
) -> list[Setting]:
    """Each setting of ``config`` (resolved from ``path``, ``environ`` and the flags' ``overrides``)
    with the source it came from."""
    from .config import ENV_PREFIX

    from_file = yaml.safe_load(path.read_text(encoding="utf-8")) if path is not None else None
    from_file = from_file if isinstance(from_file, dict) else {}
    settings = []
    for section, values in config.model_dump(mode="json").items():
        for key, value in values.items():
            variable = f"{ENV_PREFIX}{section}__{key}".upper()
            if key in (overrides.get(section) or {}):
                source = "flag"
            elif variable in environ:
                source = f"environment: {variable}"
            elif isinstance(from_file.get(section), dict) and key in from_file[section]:
                source = f"file: {path}"
            else:
                source = "default"
            settings.append(Setting(f"{section}.{key}", value, source))
    return settings

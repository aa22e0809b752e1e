"""The Dockerfile and compose files agree with the code. No Docker engine runs on the machines this is
built on (the client alone is there), so the image is not built here; these checks catch what would
silently misconfigure it: a renamed setting in an environment variable, a flag the CLI no longer
takes, a COPY of a path that moved."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest
import yaml

from memory_cortex.__main__ import build_parser
from memory_cortex.config import EXAMPLE_CONFIG_PATH, load_config

ROOT = Path(__file__).resolve().parent.parent
COMPOSE_FILES = [ROOT / "compose.yaml", *sorted((ROOT / "deploy" / "compose").glob("*.yaml"))]


def dockerfile_instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, continuation lines joined."""
    text = re.sub(r"\\\n", " ", (ROOT / "Dockerfile").read_text())
    pairs = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            instruction, _, rest = line.partition(" ")
            pairs.append((instruction.upper(), rest.strip()))
    return pairs


def dockerfile_environment() -> dict[str, str]:
    environment: dict[str, str] = {}
    for instruction, rest in dockerfile_instructions():
        if instruction == "ENV":
            for word in shlex.split(rest):
                name, _, value = word.partition("=")
                environment[name] = value
    return environment


def compose_environment() -> dict[str, str]:
    environment: dict[str, str] = {}
    for path in COMPOSE_FILES:
        for service in yaml.safe_load(path.read_text())["services"].values():
            environment.update({k: str(v) for k, v in (service.get("environment") or {}).items()})
    return environment


SECRET_SETTINGS = {("server", "api_token"), ("database", "url")}  # pydantic SecretStr: dumped masked


def test_every_setting_variable_is_a_real_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each MEMORY_CORTEX_* variable changes the setting it names (a misspelt one would be ignored)."""
    variables = {**dockerfile_environment(), **compose_environment()}
    variables["MEMORY_CORTEX_SERVER__API_TOKEN"] = "a-token-for-this-test"
    settings = {name: value for name, value in variables.items() if name.startswith("MEMORY_CORTEX_")}
    assert len(settings) >= 8
    for name, value in settings.items():
        monkeypatch.setenv(name, value)
    config = load_config(EXAMPLE_CONFIG_PATH).model_dump(mode="json")
    for name, value in settings.items():
        section, key = name.removeprefix("MEMORY_CORTEX_").lower().split("__")
        found = config[section][key]
        shown = "**********" if (section, key) in SECRET_SETTINGS else value
        assert str(found).lower() == shown.lower() or json.dumps(found) == value, (name, found, value)


def test_the_image_command_is_one_the_cli_takes() -> None:
    (command,) = [rest for instruction, rest in dockerfile_instructions() if instruction == "CMD"]
    argv = json.loads(command)
    assert argv[0] == "memory-cortex"
    args = build_parser().parse_args(argv[1:])
    assert args.command == "serve"
    # The configuration it names is the repository's, copied into the image.
    copies = [rest.split() for instruction, rest in dockerfile_instructions() if instruction == "COPY"]
    assert ["memory_cortex/config_example.yaml", str(args.config)] in copies


def test_the_image_copies_what_the_wheel_packages() -> None:
    sources = set()
    for instruction, rest in dockerfile_instructions():
        if instruction == "COPY" and not rest.startswith("--from"):
            sources.update(rest.split()[:-1])
    for source in sources:
        assert (ROOT / source).exists(), source
    assert {"memory_cortex", "middleware", "pyproject.toml", "requirements.txt"} <= sources


def test_data_lives_in_the_volume() -> None:
    environment = dockerfile_environment()
    volumes = [rest for instruction, rest in dockerfile_instructions() if instruction == "VOLUME"]
    assert volumes == ['["/data"]']
    (workdir,) = {rest for instruction, rest in dockerfile_instructions() if instruction == "WORKDIR"} - {
        "/src"
    }
    assert workdir == "/data"
    for name in ("MEMORY_CORTEX_DATABASE__PATH", "MEMORY_CORTEX_LLM__MODELS_DIR", "XDG_CACHE_HOME"):
        assert Path(environment[name]).is_relative_to("/data"), name


def test_compose_publishes_on_loopback_and_demands_a_token() -> None:
    service = yaml.safe_load((ROOT / "compose.yaml").read_text())["services"]["memory-cortex"]
    assert all(port.startswith("127.0.0.1:") for port in service["ports"])
    assert service["environment"]["MEMORY_CORTEX_SERVER__API_TOKEN"].startswith("${MEMORY_CORTEX_API_TOKEN:?")

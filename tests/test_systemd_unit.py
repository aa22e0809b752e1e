"""systemd/memory-cortex.service runs the daemon as documented, hardened, and systemd accepts it."""

from __future__ import annotations

import configparser
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from memory_cortex.__main__ import build_parser
from memory_cortex.config import EXAMPLE_CONFIG_PATH, load_config

UNIT_PATH = Path(__file__).resolve().parents[1] / "systemd" / "memory-cortex.service"
UNIT_NAME = UNIT_PATH.name
INSTALL_DIR = "/opt/memory-cortex"
STATE_DIR = "/var/lib/memory-cortex"


def parse_unit(text: str) -> configparser.ConfigParser:
    """The unit as sections of settings (for a key given twice, the last value)."""
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    # systemd keys are case-sensitive.
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read_string(text)
    return parser


def environment_of(text: str) -> dict[str, str]:
    """Every ``Environment=`` assignment; configparser keeps only the last line of a repeated key."""
    assignments: dict[str, str] = {}
    for line in text.splitlines():
        if line.startswith("Environment="):
            for word in shlex.split(line.removeprefix("Environment=")):
                name, _, value = word.partition("=")
                assignments[name] = value
    return assignments


@pytest.fixture(scope="module")
def unit_text() -> str:
    return UNIT_PATH.read_text()


@pytest.fixture(scope="module")
def unit(unit_text: str) -> configparser.ConfigParser:
    return parse_unit(unit_text)


def test_unit_runs_the_daemon_from_the_venv_with_the_etc_config(unit: configparser.ConfigParser) -> None:
    service = unit["Service"]
    assert shlex.split(service["ExecStart"]) == [
        f"{INSTALL_DIR}/.venv/bin/memory-cortex",
        "serve",
        "--config",
        "/etc/memory-cortex/config.yaml",
    ]
    # The working directory is the state directory: relative paths of the configuration land there.
    assert service["WorkingDirectory"] == STATE_DIR
    assert service["Type"] == "simple"


def test_exec_start_flags_are_ones_the_daemon_accepts(unit: configparser.ConfigParser) -> None:
    args = build_parser().parse_args(shlex.split(unit["Service"]["ExecStart"])[1:])
    assert args.command == "serve"
    assert args.config == Path("/etc/memory-cortex/config.yaml")


# Every Path setting of the configuration, by whether the daemon writes there. A new Path setting
# fails test_every_path_the_daemon_writes_is_inside_the_sandbox until it is named here.
WRITTEN_PATHS = {"database.path", "llm.models_dir", "markdown.sync_dir"}
# Empty by default, for a folder under XDG_CACHE_HOME (checked below).
CACHE_PATHS = {"embeddings.cache_dir"}
READ_ONLY_PATHS = {"embeddings.model_path", "llm.model_path"}


def path_settings(config: object, prefix: str = "") -> dict[str, Path | None]:
    """Every setting whose type is a Path (or an optional one), by its dotted name."""
    from pydantic import BaseModel

    found: dict[str, Path | None] = {}
    assert isinstance(config, BaseModel)
    for name, field in type(config).model_fields.items():
        value = getattr(config, name)
        if isinstance(value, BaseModel):
            found.update(path_settings(value, f"{prefix}{name}."))
        elif isinstance(value, Path) or "Path" in str(field.annotation):
            found[f"{prefix}{name}"] = value
    return found


def test_every_path_the_daemon_writes_is_inside_the_sandbox(
    unit: configparser.ConfigParser, unit_text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The shipped config, read as the unit runs it (its environment, its working directory): every
    path the daemon writes resolves under a path ProtectSystem=strict leaves writable."""
    for name, value in environment_of(unit_text).items():
        monkeypatch.setenv(name, value)
    service = unit["Service"]
    config = load_config(EXAMPLE_CONFIG_PATH)
    # A sync_dir set the way config.yaml's comment suggests must land in the sandbox too.
    config.markdown.sync_dir = config.markdown.sync_dir or Path("data/mirror")
    settings = path_settings(config)
    assert set(settings) == WRITTEN_PATHS | READ_ONLY_PATHS | CACHE_PATHS
    assert all(settings[name] is None for name in CACHE_PATHS)
    writable = [Path(path) for path in service["ReadWritePaths"].split()]
    writable.append(Path("/var/lib") / service["StateDirectory"])
    working_directory = Path(service["WorkingDirectory"])
    for name in sorted(WRITTEN_PATHS):
        value = settings[name]
        assert value is not None
        resolved = working_directory / value  # an absolute value stays as it is
        assert any(resolved.is_relative_to(folder) for folder in writable), (name, resolved, writable)
    cache = Path(environment_of(unit_text)["XDG_CACHE_HOME"])
    assert any(cache.is_relative_to(folder) for folder in writable)


def checkout_copy(folder: Path) -> Path:
    """The files install-service.sh reads, copied to ``folder`` (the real checkout may live anywhere,
    /home included, which the script refuses)."""
    for part in (
        "scripts/install-service.sh",
        "systemd/memory-cortex.service",
        "memory_cortex/config_example.yaml",
    ):
        (folder / part).parent.mkdir(parents=True, exist_ok=True)
        (folder / part).write_bytes((UNIT_PATH.parents[1] / part).read_bytes())
    return folder


def test_install_service_script_renders_the_unit_for_this_checkout(tmp_path: Path) -> None:
    repository = checkout_copy(tmp_path / "srv" / "memory-cortex")
    script = repository / "scripts" / "install-service.sh"
    system = tmp_path / "root"
    environment = {"PATH": "/usr/bin:/bin", "MEMORY_CORTEX_SYSTEM_ROOT": str(system)}
    result = subprocess.run(
        ["bash", str(script), "--user", "cortex"], env=environment, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    rendered = (system / "etc/systemd/system/memory-cortex.service").read_text()
    service = parse_unit(rendered)["Service"]
    assert shlex.split(service["ExecStart"])[0] == f"{repository.resolve()}/.venv/bin/memory-cortex"
    assert service["User"] == service["Group"] == "cortex"
    assert service["WorkingDirectory"] == STATE_DIR
    assert INSTALL_DIR not in rendered
    config = system / "etc/memory-cortex/config.yaml"
    assert config.read_text() == (repository / "memory_cortex/config_example.yaml").read_text()
    # A second run never overwrites the administrator's configuration.
    config.write_text("server:\n  port: 8400\n")
    again = subprocess.run(["bash", str(script)], env=environment, capture_output=True, text=True, timeout=60)
    assert again.returncode == 0, again.stderr
    assert "kept: it exists" in again.stdout
    assert config.read_text() == "server:\n  port: 8400\n"
    # The unit it replaced (another user) is kept beside the new one.
    assert "User=cortex" in (system / "etc/systemd/system/memory-cortex.service.bak").read_text()


def test_unit_runs_as_the_service_user(unit: configparser.ConfigParser) -> None:
    assert unit["Service"]["User"] == "memory-cortex"
    assert unit["Service"]["Group"] == "memory-cortex"


def test_unit_keeps_the_database_in_the_state_directory(
    unit: configparser.ConfigParser, unit_text: str
) -> None:
    service = unit["Service"]
    assert service["StateDirectory"] == "memory-cortex"
    assert service["ReadWritePaths"] == STATE_DIR
    assert environment_of(unit_text)["MEMORY_CORTEX_DATABASE__PATH"] == f"{STATE_DIR}/memory-cortex.db"


def test_database_environment_variable_is_a_real_setting(
    unit_text: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # Guards against a renamed setting: the variable would then be silently ignored.
    database_path = environment_of(unit_text)["MEMORY_CORTEX_DATABASE__PATH"]
    monkeypatch.setenv("MEMORY_CORTEX_DATABASE__PATH", database_path)
    config_file = tmp_path / "config.yaml"
    config_file.write_text("database:\n  path: data/elsewhere.db\n")
    assert load_config(config_file).database.path == Path(f"{STATE_DIR}/memory-cortex.db")


def test_unit_never_asks_the_model_hub(unit_text: str) -> None:
    assert environment_of(unit_text)["HF_HUB_OFFLINE"] == "1"


def test_unit_restarts_on_failure_and_stops_with_sigterm(unit: configparser.ConfigParser) -> None:
    service = unit["Service"]
    assert service["Restart"] == "on-failure"
    assert float(service["RestartSec"]) > 0
    assert service["KillSignal"] == "SIGTERM"
    assert service["TimeoutStopSec"] == "30"


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("NoNewPrivileges", "yes"),
        ("ProtectSystem", "strict"),
        ("ProtectHome", "yes"),
        ("PrivateTmp", "yes"),
        ("ProtectKernelTunables", "yes"),
        ("ProtectControlGroups", "yes"),
        ("RestrictSUIDSGID", "yes"),
        ("LockPersonality", "yes"),
        ("RestrictRealtime", "yes"),
        ("SystemCallArchitectures", "native"),
        ("UMask", "0077"),
        ("LimitNOFILE", "65536"),  # issue 34: ~1,000 slow connections exhausted the default 1,024
    ],
)
def test_unit_is_hardened(unit: configparser.ConfigParser, key: str, expected: str) -> None:
    assert unit["Service"].get(key) == expected


def test_unit_keeps_gpu_devices_reachable(unit: configparser.ConfigParser) -> None:
    # /dev/dri and /dev/kfd are needed by pyamdgpuinfo and ROCm.
    assert unit["Service"]["PrivateDevices"] == "no"
    assert "DevicePolicy" not in unit["Service"]


def test_unit_starts_at_boot_after_the_network(unit: configparser.ConfigParser) -> None:
    assert unit["Unit"]["After"] == "network-online.target"
    assert unit["Unit"]["Wants"] == "network-online.target"
    assert unit["Install"]["WantedBy"] == "multi-user.target"


def verifiable_copy(unit_text: str, directory: Path) -> Path:
    """The unit as ``systemd-analyze verify`` can check it on this machine: it insists that ExecStart's
    binary exists, and the service user need not exist here."""
    executable = sys.executable if " " not in sys.executable else f'"{sys.executable}"'
    text = re.sub(r"^ExecStart=\S+", lambda _: f"ExecStart={executable}", unit_text, flags=re.MULTILINE)
    text = re.sub(r"^(User|Group)=.*\n", "", text, flags=re.MULTILINE)
    copy = directory / UNIT_NAME
    copy.write_text(text)
    return copy


def complaints_about_unit(unit_file: Path) -> list[str]:
    """``systemd-analyze verify`` lines about this unit; the host's other units may warn too, and their
    lines are not ours to judge."""
    systemd_analyze = shutil.which("systemd-analyze")
    if systemd_analyze is None:
        pytest.skip("systemd-analyze is not installed (Debian/Ubuntu: apt-get install systemd)")
    result = subprocess.run(
        [systemd_analyze, "verify", "--man=no", str(unit_file)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    output = result.stdout + result.stderr
    complaints = [line for line in output.splitlines() if UNIT_NAME in line]
    if result.returncode != 0 and not complaints:
        complaints = [f"systemd-analyze verify exited {result.returncode}:", *output.splitlines()]
    return complaints


def test_systemd_analyze_accepts_the_unit(unit_text: str, tmp_path: Path) -> None:
    assert complaints_about_unit(verifiable_copy(unit_text, tmp_path)) == []


def test_systemd_analyze_check_catches_an_invalid_setting(unit_text: str, tmp_path: Path) -> None:
    # Without this the test above could pass by not recognising systemd's complaints.
    broken = unit_text.replace("ProtectSystem=strict", "ProtectSystem=sometimes")
    complaints = complaints_about_unit(verifiable_copy(broken, tmp_path))
    assert any("sometimes" in line for line in complaints), complaints


@pytest.mark.parametrize("folder", ["R&D", "a|b", "100%h", "with space"])
def test_install_service_refuses_a_checkout_path_a_unit_would_misread(tmp_path: Path, folder: str) -> None:
    """sed would expand & and break on |, systemd would expand %h: such a path is refused, nothing written."""
    checkout = checkout_copy(tmp_path / folder / "memory-cortex")
    system = tmp_path / "root"
    result = subprocess.run(
        ["bash", str(checkout / "scripts/install-service.sh")],
        env={"PATH": "/usr/bin:/bin", "MEMORY_CORTEX_SYSTEM_ROOT": str(system)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1, result.stdout
    assert "move it" in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert not system.exists()


@pytest.mark.parametrize("user", ["root", "a|b", "Name With Caps"])
def test_install_service_refuses_a_bad_service_user(tmp_path: Path, user: str) -> None:
    script = checkout_copy(tmp_path / "srv" / "memory-cortex") / "scripts" / "install-service.sh"
    result = subprocess.run(
        ["bash", str(script), "--user", user],
        env={"PATH": "/usr/bin:/bin", "MEMORY_CORTEX_SYSTEM_ROOT": str(tmp_path / "root")},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert "--user must be a plain system user name" in result.stderr
    assert not (tmp_path / "root").exists()

"""Where the configuration lives (issue 35): the user's file outside the checkout, `config init`,
and an older release's `config/config.yaml` in the checkout, all through the real command."""

from __future__ import annotations

import stat
import subprocess
from pathlib import Path

import pytest

import memory_cortex.config as config_module
from memory_cortex.config import Config, config_file, config_file_note, load_config, user_config_path
from tests.processes import cli


def cortex(*args: str, xdg: Path, cwd: Path, **variables: str) -> subprocess.CompletedProcess[str]:
    """``python -m memory_cortex ARGS`` with ``xdg`` as XDG_CONFIG_HOME and, of MEMORY_CORTEX_*,
    only ``variables``."""
    return cli(*args, cwd=cwd, env={"XDG_CONFIG_HOME": str(xdg), **variables})


def test_the_user_file_follows_xdg_config_home(tmp_path: Path) -> None:
    assert user_config_path({"XDG_CONFIG_HOME": str(tmp_path)}) == tmp_path / "memory-cortex/config.yaml"
    home_default = Path.home() / ".config/memory-cortex/config.yaml"
    assert user_config_path({}) == home_default
    # The XDG specification: a relative value is invalid and ignored.
    assert user_config_path({"XDG_CONFIG_HOME": "relative/dir"}) == home_default


def test_config_init_writes_a_starter_that_changes_nothing_until_a_line_is_uncommented(
    tmp_path: Path,
) -> None:
    xdg = tmp_path / "xdg"
    written = cortex("config", "init", xdg=xdg, cwd=tmp_path)
    assert written.returncode == 0, written.stderr
    target = xdg / "memory-cortex/config.yaml"
    assert f"wrote {target}" in written.stdout
    assert stat.S_IMODE(target.stat().st_mode) == 0o600  # it may come to hold a token
    text = target.read_text()
    assert "# server:\n#   host: 127.0.0.1" in text and "\nserver:" not in text
    shown = cortex("config", "show", xdg=xdg, cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert f"configuration file: {target}" in shown.stdout
    assert all(line.endswith("(default)") for line in shown.stdout.splitlines()[1:])

    # Uncomment a setting and its section: the daemon's resolution reads it, from this file.
    target.write_text(text.replace("# server:\n", "server:\n").replace("#   port: 8300", "  port: 8431"))
    shown = cortex("config", "show", xdg=xdg, cwd=tmp_path)
    (port_line,) = [line for line in shown.stdout.splitlines() if line.startswith("server.port ")]
    assert "8431" in port_line and f"(file: {target})" in port_line

    # Never replaced without --force; with it, the old file is kept beside.
    again = cortex("config", "init", xdg=xdg, cwd=tmp_path)
    assert again.returncode == 1 and "already exists" in again.stderr and "--force" in again.stderr
    assert "8431" in target.read_text()
    forced = cortex("config", "init", "--force", xdg=xdg, cwd=tmp_path)
    assert forced.returncode == 0, forced.stderr
    (kept,) = target.parent.glob("config.yaml.*.bak")
    assert f"kept as {kept}" in forced.stdout and "8431" in kept.read_text()
    assert "8431" not in target.read_text()
    # A second --force keeps the first file too: nothing the user wrote is lost.
    assert cortex("config", "init", "--force", xdg=xdg, cwd=tmp_path).returncode == 0
    kept_files = sorted(target.parent.glob("config.yaml.*.bak"))
    assert len(kept_files) == 2 and "8431" in kept_files[0].read_text()
    # An existing file readable by others is private before the first byte is written.
    target.chmod(0o644)
    assert cortex("config", "init", "--force", xdg=xdg, cwd=tmp_path).returncode == 0
    assert stat.S_IMODE(target.stat().st_mode) == 0o600


def test_config_init_from_copies_a_valid_file_and_refuses_a_broken_one(tmp_path: Path) -> None:
    xdg = tmp_path / "xdg"
    old = tmp_path / "old.yaml"
    old.write_text("server:\n  prot: 8400\n")
    refused = cortex("config", "init", "--from", str(old), xdg=xdg, cwd=tmp_path)
    assert refused.returncode == 1
    assert f"not copied: {old}: server.prot: Extra inputs are not permitted" in refused.stderr
    assert not (xdg / "memory-cortex/config.yaml").exists()
    old.write_text("server:\n  port: 8400\n")
    # The file is checked alone: a bad variable in this shell is not the file's fault.
    env_bad = cortex(
        "config", "init", "--from", str(old), xdg=xdg, cwd=tmp_path, MEMORY_CORTEX_SERVER__PORT="abc"
    )
    assert env_bad.returncode == 0, env_bad.stderr
    (xdg / "memory-cortex/config.yaml").unlink()
    copied = cortex("config", "init", "--from", str(old), xdg=xdg, cwd=tmp_path)
    assert copied.returncode == 0, copied.stderr
    assert (xdg / "memory-cortex/config.yaml").read_text() == old.read_text()
    named = tmp_path / "etc/cortex.yaml"  # --config names where to write
    assert cortex("config", "init", "--config", str(named), xdg=xdg, cwd=tmp_path).returncode == 0
    assert load_config(named).model_dump() == Config().model_dump()  # the starter changes nothing


def test_an_error_in_the_user_file_names_the_file(tmp_path: Path) -> None:
    xdg = tmp_path / "xdg"
    (xdg / "memory-cortex").mkdir(parents=True)
    (xdg / "memory-cortex/config.yaml").write_text("server:\n  prot: 8400\n")
    failed = cortex("serve", xdg=xdg, cwd=tmp_path)
    assert failed.returncode == 2
    assert failed.stderr.strip() == (
        "memory-cortex: configuration error: server.prot: Extra inputs are not permitted"
        f" (in {xdg / 'memory-cortex/config.yaml'})"
    )


def test_a_config_yaml_left_in_the_checkout_is_read_with_a_warning_until_moved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An install from before the move keeps working, and is told how to move its file."""
    legacy = tmp_path / "checkout/config/config.yaml"
    legacy.parent.mkdir(parents=True)
    legacy.write_text("server:\n  port: 8412\n")
    monkeypatch.setattr(config_module, "CHECKOUT_CONFIG_PATH", legacy)
    assert config_file(None) == legacy
    assert load_config(None).server.port == 8412
    note = config_file_note(legacy)
    assert note is not None and "git pull" in note and f"config init --from {legacy}" in note

    # Moved: the user's file wins, and the leftover is named as not read.
    user = user_config_path()
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text(legacy.read_text())
    try:
        assert config_file(None) == user
        note = config_file_note(user)
        assert note is not None and note.startswith(f"{legacy} is not read (the configuration is {user})")
        assert "delete it" in note
        # Named by --config (relative or not) beside the user's file: read, said, no move advice.
        note = config_file_note(legacy.parent / ".." / "config" / "config.yaml")
        assert note is not None and note.startswith(f"reading {legacy}") and "config init" not in note
    finally:
        user.unlink()
    legacy.unlink()
    assert config_file_note(None) is None


def test_config_show_and_doctor_say_so_when_the_checkout_file_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from memory_cortex.__main__ import main
    from memory_cortex.doctor import _config_source

    legacy = tmp_path / "checkout/config/config.yaml"
    legacy.parent.mkdir(parents=True)
    legacy.write_text(f"database:\n  path: {tmp_path / 'legacy.db'}\n")
    monkeypatch.setattr(config_module, "CHECKOUT_CONFIG_PATH", legacy)
    assert main(["config", "show"]) == 0
    shown = capsys.readouterr().out
    assert f"configuration file: {legacy}\nwarning: reading {legacy}, inside the checkout" in shown
    assert str(tmp_path / "legacy.db") in shown
    finding = _config_source(config_file(None))
    assert finding.outcome == "warn" and f"config init --from {legacy}" in finding.detail

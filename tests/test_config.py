"""Config precedence: CLI flags beat MEMORY_CORTEX_* env, which beats the YAML file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from memory_cortex.__main__ import build_parser, overrides_from
from memory_cortex.config import load_config


def write_yaml(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(text)
    return path


def test_defaults_without_a_file(tmp_path: Path) -> None:
    config = load_config(write_yaml(tmp_path, "{}"))
    assert (config.server.host, config.server.port) == ("127.0.0.1", 8300)
    assert (config.search.fts_weight, config.search.vector_weight) == (0.4, 0.6)
    assert config.embeddings.backend == "onnx"
    assert config.users.default_user_id == "default"


def test_flags_beat_env_beat_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_yaml(
        tmp_path, "server:\n  port: 1111\n  host: 10.0.0.1\n  api_token: t\ndatabase:\n  path: file.db\n"
    )
    assert load_config(path).server.port == 1111
    monkeypatch.setenv("MEMORY_CORTEX_SERVER__PORT", "2222")
    monkeypatch.setenv("MEMORY_CORTEX_SEARCH__FTS_WEIGHT", "0.5")
    config = load_config(path)
    assert (config.server.port, config.server.host, config.search.fts_weight) == (2222, "10.0.0.1", 0.5)
    args = build_parser().parse_args(["serve", "--port", "3333", "--db", "flag.db"])
    config = load_config(path, overrides_from(args))
    assert config.server.port == 3333
    assert config.database.path == Path("flag.db")
    assert config.server.host == "10.0.0.1"  # untouched by flags or env: from the file


def test_a_blank_folder_setting_is_unset_never_the_current_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``MEMORY_CORTEX_MARKDOWN__SYNC_DIR=`` once mirrored every user's memories into the folder the
    daemon was started from (``Path("")`` is "."); blank means unset."""
    path = write_yaml(tmp_path, "markdown:\n  sync_dir: mirror\nllm:\n  model_path: ''\n")
    assert load_config(path).markdown.sync_dir == Path("mirror")
    assert load_config(path).llm.model_path is None
    monkeypatch.setenv("MEMORY_CORTEX_MARKDOWN__SYNC_DIR", "")
    monkeypatch.setenv("MEMORY_CORTEX_EMBEDDINGS__MODEL_PATH", " ")
    config = load_config(path)
    assert (config.markdown.sync_dir, config.embeddings.model_path) == (None, None)


def test_flags_work_before_after_or_without_the_serve_verb() -> None:
    parser = build_parser()
    assert overrides_from(parser.parse_args(["--host", "0.0.0.0"])) == {"server": {"host": "0.0.0.0"}}
    assert overrides_from(parser.parse_args(["--port", "9000", "serve"])) == {"server": {"port": 9000}}
    args = parser.parse_args(["serve", "--config", "x.yaml", "--port", "9001"])
    assert args.config == Path("x.yaml") and overrides_from(args) == {"server": {"port": 9001}}


@pytest.mark.parametrize(
    "text",
    [
        "server:\n  port: 99999\n",
        "search:\n  fts_weight: -1\n",
        "search:\n  default_limit: 500\n  max_limit: 10\n",
        "unknown_section: 1\n",
        "search:\n  fts_wieght: 0.5\n",  # a typo inside a section is an error too
        "embeddings:\n  backend: magic\n",
    ],
)
def test_invalid_config_is_refused(tmp_path: Path, text: str) -> None:
    with pytest.raises(ValidationError):
        load_config(write_yaml(tmp_path, text))


def test_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="config file not found"):
        load_config(tmp_path / "nope.yaml")


def test_shipped_config_matches_the_defaults() -> None:
    """The example configuration documents the defaults: it must not silently differ from the code."""
    from memory_cortex.config import EXAMPLE_CONFIG_PATH, Config

    assert load_config(EXAMPLE_CONFIG_PATH).model_dump() == Config().model_dump()


def test_cli_reports_config_errors_without_echoing_values(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from memory_cortex.__main__ import main

    monkeypatch.setenv("MEMORY_CORTEX_EMBEDDINGS__API_KEY", "do-not-print-me")
    assert main(["--config", str(write_yaml(tmp_path, "{}")), "--host", "0.0.0.0"]) == 2
    err = capsys.readouterr().err
    assert "set server.api_token" in err and "do-not-print-me" not in err


def test_config_show_says_where_each_setting_came_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 35: `memory-cortex config show` prints the effective settings and their sources."""
    from memory_cortex.__main__ import main

    path = write_yaml(
        tmp_path, "server:\n  port: 1111\n  api_token: a-secret-token\nsearch:\n  fts_weight: 0.3\n"
    )
    monkeypatch.setenv("MEMORY_CORTEX_SEARCH__FTS_WEIGHT", "0.5")
    assert main(["--config", str(path), "--db", str(tmp_path / "flag.db"), "config", "show", "--json"]) == 0
    shown = {item["name"]: item for item in json.loads(capsys.readouterr().out)}
    assert shown["server.port"] == {"name": "server.port", "value": 1111, "source": f"file: {path}"}
    assert shown["search.fts_weight"]["value"] == 0.5
    assert shown["search.fts_weight"]["source"] == "environment: MEMORY_CORTEX_SEARCH__FTS_WEIGHT"
    assert shown["database.path"] == {
        "name": "database.path",
        "value": str(tmp_path / "flag.db"),
        "source": "flag",
    }
    assert shown["server.header_timeout_s"]["source"] == "default"
    assert shown["server.api_token"]["value"] == "**********"  # masked, as GET /config shows it
    assert main(["--config", str(path), "config", "show"]) == 0
    text = capsys.readouterr().out
    assert text.startswith(f"configuration file: {path}\n") and "a-secret-token" not in text

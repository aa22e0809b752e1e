"""The docs stay true to the code: the reference pages are generated from it and current, every
endpoint, setting, verb and plugin option is documented, and the README stays a short way in."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path
from types import ModuleType

import pytest

from memory_cortex.http.routes import ENDPOINTS

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
README = (ROOT / "README.md").read_text(encoding="utf-8")


def load_script(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name.replace("-", "_"), ROOT / "scripts" / name)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def page(relative: str) -> str:
    return (DOCS / relative).read_text(encoding="utf-8")


# -- generated reference pages: current, or the test says which command rewrites them ----------
def test_the_http_api_page_is_generated_from_the_openapi_document() -> None:
    module = load_script("api-reference.py")
    assert page("reference/http-api.md") == module.render(), "run: python scripts/api-reference.py --write"


def test_every_endpoint_has_its_section_in_the_http_api_page() -> None:
    text = page("reference/http-api.md")
    for endpoint in ENDPOINTS:
        heading = f"## {endpoint.method} {endpoint.path}\n"
        assert heading in text, f"{endpoint.method} {endpoint.path} is not in docs/reference/http-api.md"


def test_the_configuration_page_is_generated_from_the_model() -> None:
    module = load_script("config-reference.py")
    text = page("reference/configuration.md")
    assert text == module.page(), "run: python scripts/config-reference.py --write"
    for row in module.render().splitlines()[2:]:
        assert row in text


def test_the_cli_page_is_generated_from_the_parser_with_every_verb() -> None:
    module = load_script("cli-reference.py")
    text = page("reference/cli.md")
    assert text == module.render(), "run: python scripts/cli-reference.py --write"
    from memory_cortex.__main__ import build_parser

    verbs = [name for name, _, _ in module._verbs(build_parser())]
    assert {"serve", "backup", "export", "import", "mcp"} <= set(verbs)
    for verb in verbs:
        assert f"\n## {verb}\n" in text, f"the verb {verb} has no section in docs/reference/cli.md"


def test_a_stale_reference_page_fails_the_check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--check really compares: a page one line short of what --write writes is reported."""
    for script, written in (
        ("api-reference.py", "render"),
        ("config-reference.py", "page"),
        ("cli-reference.py", "render"),
    ):
        module = load_script(script)
        stale = tmp_path / script.replace(".py", ".md")
        current = getattr(module, written)()
        stale.write_text(current.rsplit("\n", 2)[0] + "\n", encoding="utf-8")
        monkeypatch.setattr(module, "PAGE", stale)
        monkeypatch.setattr(module, "ROOT", tmp_path)
        assert module.main(["--check"]) == 1, script
        stale.write_text(current, encoding="utf-8")
        assert module.main(["--check"]) == 0, script


def test_every_plugin_setting_is_in_the_plugin_settings_page() -> None:
    manifest = json.loads((ROOT / "integrations" / "openclaw" / "openclaw.plugin.json").read_text())
    text = page("reference/openclaw-plugin.md")
    for key in manifest["configSchema"]["properties"]:
        assert f"| `{key}` |" in text, f"plugin setting {key} is not in docs/reference/openclaw-plugin.md"


# -- the README: short, the two set-up commands, links that lead somewhere ----------------------
def test_the_readme_is_short() -> None:
    lines = README.count("\n")
    assert lines <= 400, f"README.md has {lines} lines; move the detail into docs/"


def test_the_readme_has_exactly_the_two_setup_commands_and_ci_runs_the_test_one() -> None:
    section = README.split("\n## Quick start\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```(\w*)\n(.*?)\n```", section, re.DOTALL)
    assert blocks == [("bash", "./scripts/start.sh"), ("bash", "./scripts/test.sh")], blocks
    assert "scripts/test.sh" in (ROOT / ".ci" / "run").read_text()


def test_every_relative_link_of_the_readme_leads_to_a_file() -> None:
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", README):
        if "://" in target:
            continue
        assert (ROOT / target).exists(), f"README.md links to {target}, which does not exist"


def test_no_page_names_a_private_address() -> None:
    """Examples use loopback or names: no one person's LAN or WSL address in the docs."""
    private = re.compile(r"\b(10\.\d{1,3}|192\.168|172\.(1[6-9]|2\d|3[01]))\.\d{1,3}\.\d{1,3}\b")
    for path in [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]:
        found = private.search(path.read_text(encoding="utf-8"))
        assert found is None, f"{path.relative_to(ROOT)} names the private address {found.group(0)}"

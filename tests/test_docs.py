"""The README stays true to the code: config reference generated from the model, every endpoint shown."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

from memory_cortex.http.routes import ENDPOINTS

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_config_reference_in_the_readme_is_generated_from_the_model() -> None:
    spec = importlib.util.spec_from_file_location(
        "config_reference", ROOT / "scripts" / "config-reference.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    block = re.search(
        r"<!-- config-reference:start -->\n(.*?)\n<!-- config-reference:end -->", README, re.DOTALL
    )
    assert block is not None, "README lost its config-reference markers"
    assert block.group(1).strip() == module.render().strip(), "run: python scripts/config-reference.py"


def test_every_endpoint_is_in_the_readme() -> None:
    for endpoint in ENDPOINTS:
        pattern = re.escape(endpoint.path)
        pattern = re.sub(r"\\\{[^}]+\\\}", r"[^/\\s'\"]+", pattern)
        assert re.search(pattern + r"(?![\w-])", README), (
            f"{endpoint.method} {endpoint.path} is not in the README"
        )


def test_the_two_setup_commands_exist_and_ci_runs_the_test_one() -> None:
    assert "./scripts/start.sh" in README and "./scripts/test.sh" in README
    assert "scripts/test.sh" in (ROOT / ".ci" / "run").read_text()

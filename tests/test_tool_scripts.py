"""Every benchmark and helper script still starts: ``--help`` imports all it needs, so a moved or
renamed module breaks this test, not a user's first benchmark run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = sorted(
    path.relative_to(ROOT).as_posix()
    for path in [*ROOT.glob("bench/*.py"), *ROOT.glob("scripts/*.py")]
    # config-reference.py takes no --help (tests/test_docs.py runs it); _harness.py is a library.
    if not path.name.startswith("_") and path.name != "config-reference.py"
)


@pytest.mark.parametrize("script", SCRIPTS)
def test_the_script_starts(script: str) -> None:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, script, "--help"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "usage" in done.stdout.lower()

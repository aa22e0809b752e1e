"""The house rules that a reviewer would otherwise have to remember: small modules with one job.

(The layers are checked by ``lint-imports`` in scripts/test.sh, with the contracts in pyproject.toml.)
"""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "memory_cortex"
# Declarative modules, long by nature: every setting, every request and response shape.
DECLARATIVE = {"config.py", "http/schemas.py"}
MAX_LINES = 550  # "about 500": a module past it has grown a second job


def test_no_module_grows_past_about_500_lines() -> None:
    too_long = {
        path.relative_to(PACKAGE).as_posix(): count
        for path in PACKAGE.rglob("*.py")
        if path.relative_to(PACKAGE).as_posix() not in DECLARATIVE
        and (count := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert too_long == {}, f"split these by job: {too_long}"

"""The command line every generated reference page shares: ``--write`` rewrites the page,
``--check`` exits 1 when it is out of date (tests/test_docs.py and CI), neither prints it.

Used by api-reference.py, cli-reference.py and config-reference.py; not a command itself.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path


def run_page_command(
    argv: list[str] | None,
    *,
    description: str,
    page: Path,
    root: Path,
    written: Callable[[], str],
    printed: Callable[[], str],
    script: str,
) -> int:
    """Parse ``argv`` and write, check or print the page ``written()`` renders."""
    relative = page.relative_to(root) if page.is_relative_to(root) else page
    parser = argparse.ArgumentParser(description=description)
    action = parser.add_mutually_exclusive_group()
    action.add_argument("--write", action="store_true", help=f"rewrite {relative}")
    action.add_argument("--check", action="store_true", help=f"exit 1 when {relative} is out of date")
    args = parser.parse_args(argv)
    if args.write:
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text(written(), encoding="utf-8")
    elif args.check:
        current = page.read_text(encoding="utf-8") if page.exists() else ""
        if current != written():
            print(f"{relative} is out of date: run python scripts/{script} --write")
            return 1
    else:
        sys.stdout.write(printed())
    return 0

#!/usr/bin/env python3
"""Print the configuration reference (Markdown) from the typed config model.

The README's "Configuration reference" section is this output; a test fails when they differ, so
the docs cannot drift from the code. Print it, or rewrite the README's section in place:

    python scripts/config-reference.py            # print
    python scripts/config-reference.py --write    # replace the block between the README's markers
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pydantic import BaseModel

from memory_cortex.config import Config


def render() -> str:
    lines = [
        "| setting | env variable | default | what it does |",
        "|---|---|---|---|",
    ]
    defaults = Config().model_dump(mode="json")
    for section_name, section_field in Config.model_fields.items():
        section_type = section_field.annotation
        assert isinstance(section_type, type) and issubclass(section_type, BaseModel)
        for name, field in section_type.model_fields.items():
            default = json.dumps(defaults[section_name][name], ensure_ascii=False)
            env = f"MEMORY_CORTEX_{section_name.upper()}__{name.upper()}"
            description = (field.description or "").replace("|", "\\|")
            lines.append(f"| `{section_name}.{name}` | `{env}` | `{default}` | {description} |")
    return "\n".join(lines)


README = Path(__file__).resolve().parent.parent / "README.md"
START, END = "<!-- config-reference:start -->\n", "\n<!-- config-reference:end -->"


def write_readme() -> None:
    text = README.read_text(encoding="utf-8")
    head, found, rest = text.partition(START)
    _, found_end, tail = rest.partition(END)
    if not (found and found_end):
        raise SystemExit(f"{README}: the config-reference markers are missing")
    README.write_text(head + START + render() + END + tail, encoding="utf-8")


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        write_readme()
    else:
        print(render())

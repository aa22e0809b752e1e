"""The shape of an extracted fact, shared by every extractor (LLM backends and the rules one).

The JSON schema given to the LLM (llama.cpp grammar / ``response_format``) is generated from the
same pydantic model that validates the answer, so the two cannot disagree.
"""

from __future__ import annotations

import re
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, field_validator

Category = Literal[
    "identity",
    "preference",
    "decision",
    "fact",
    "insight",
    "todo",
    "correction",
    "skill",
    "relationship",
    "project_state",
]

CATEGORIES: tuple[str, ...] = get_args(Category)

_LETTER = re.compile(r"[^\W\d_]", re.UNICODE)


class ExtractedFact(BaseModel):
    """One durable fact worth remembering."""

    model_config = ConfigDict(extra="ignore", str_strip_whitespace=True)

    topic: str = Field(min_length=1, max_length=80, description="2-4 word label, e.g. 'coffee habit'.")
    fact: str = Field(min_length=3, max_length=400, description="One self-contained sentence.")
    importance: int = Field(ge=1, le=10, description="1 trivia … 10 identity-defining.")
    category: Category

    @field_validator("fact", "topic")
    @classmethod
    def _has_letters(cls, value: str) -> str:
        if not _LETTER.search(value):
            raise ValueError("must contain words")
        return value


FACT_LIST = TypeAdapter(list[ExtractedFact])


def fact_list_schema() -> dict[str, Any]:
    """JSON schema of the extractor's answer: a top-level array of facts (may be empty)."""
    schema = FACT_LIST.json_schema()
    # Inline the item definition: grammar converters handle a flat schema best.
    item = schema.get("$defs", {}).get("ExtractedFact")
    if item is not None:
        return {"type": "array", "items": item}
    return schema

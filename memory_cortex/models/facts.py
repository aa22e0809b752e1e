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


SubjectKind = Literal["person", "pet", "place", "plan", "organisation", "thing"]
Action = Literal["add", "update", "none"]

OWNER = "user"
"""The ``subject`` of a fact about the user the memory belongs to."""


class ExtractedFact(BaseModel):
    """One durable fact worth remembering, and, where it states one, the attribute of its subject.

    ``subject`` is ``"user"`` (the owner), a name ("Bob", "Rex"), or someone known by their relation
    to the owner ("user's father"). ``attribute``/``value``: the structured reading ("home" =
    "Edinburgh"; :mod:`.attributes`). ``source``: the 1-based numbers of the NEW messages it was
    read from. ``action``/``replaces``: an LLM's judgement against the current facts it was shown
    ("update" of the fact numbered ``replaces``; "none": nothing new). ``ends``: the fact says that
    ``value`` stopped holding ("Biscuit passed away"): it ends the current fact of that value and
    states no value itself.
    """

    model_config = ConfigDict(extra="ignore", str_strip_whitespace=True)

    topic: str = Field(min_length=1, max_length=80, description="2-4 word label, e.g. 'coffee habit'.")
    fact: str = Field(min_length=3, max_length=400, description="One self-contained sentence.")
    importance: int = Field(ge=1, le=10, description="1 trivia … 10 identity-defining.")
    category: Category
    subject: str = Field(
        OWNER,
        max_length=120,
        description="Whom it is about: 'user' (the owner), a person's or pet's name, or 'user's <relation>'.",
    )
    subject_kind: SubjectKind | None = Field(None, description="What the subject is, when not the user.")
    relation: str | None = Field(
        None,
        max_length=40,
        description="How the subject relates to the user (father, sister, friend…), if known.",
    )
    attribute: str | None = Field(
        None,
        max_length=60,
        description="The attribute it states (home, employer, job, age, diet, …), if any.",
    )
    value: str | None = Field(None, max_length=200, description="The attribute's value as said, if any.")
    source: list[int] = Field(
        default_factory=list, max_length=50, description="Numbers of the NEW messages it comes from."
    )
    action: Action = Field(
        "add", description="add: new; update: replaces the listed fact `replaces`; none: skip."
    )
    replaces: int | None = Field(
        None, ge=1, description="With update: the number of the listed fact it replaces."
    )
    ends: bool = Field(
        False,
        description="true: it says this value no longer holds (a pet died or was given away, a job was"
        " left, a couple split up): the current fact of that value ends.",
    )

    @property
    def about_owner(self) -> bool:
        return is_owner(self.subject)

    @field_validator("fact", "topic")
    @classmethod
    def _has_letters(cls, value: str) -> str:
        if not _LETTER.search(value):
            raise ValueError("must contain words")
        return value


def is_owner(subject: str | None) -> bool:
    """Whether a fact's ``subject`` names the owner ("user", "the user", empty)."""
    return not subject or subject.strip().casefold() in ("user", "the user", "owner", "用户", "ユーザー")


FACT_LIST = TypeAdapter(list[ExtractedFact])


def fact_list_schema() -> dict[str, Any]:
    """JSON schema of the extractor's answer: a top-level array of facts (may be empty)."""
    schema = FACT_LIST.json_schema()
    # Inline the item definition: grammar converters handle a flat schema best.
    item = schema.get("$defs", {}).get("ExtractedFact")
    if item is not None:
        return {"type": "array", "items": item}
    return schema

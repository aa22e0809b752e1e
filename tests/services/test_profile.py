"""The profile page (MCP resource memory://profile): the user's core memories as Markdown."""

from __future__ import annotations

import dataclasses

from memory_cortex.records import MemoryRecord
from memory_cortex.services.profile import render_profile
from tests.helpers import memory_record

BLANK = memory_record(id=0, user_id="alice", fact="")


def memory(memory_id: int, fact: str, category: str, importance: int = 5, topic: str = "") -> MemoryRecord:
    return dataclasses.replace(
        BLANK, id=memory_id, fact=fact, category=category, importance=importance, topic=topic
    )


def test_who_the_user_is_comes_first_then_the_other_categories() -> None:
    page = render_profile(
        "alice",
        [
            memory(1, "Alice is a nurse.", "identity", 9, topic="job"),
            memory(2, "Alice prefers tea to coffee.", "preference", 7),
            memory(3, "Buy a new bow.", "todo", 6),
            memory(4, "Alice's brother is Tom.", "relationship", 6),
            memory(5, "Alice met Bo at a concert.", "anecdote", 4),  # a category a client made up
            memory(6, "Alice's flat has a balcony.", "fact", 3),
        ],
    )
    headings = [line for line in page.splitlines() if line.startswith("## ")]
    assert headings == [
        "## Identity",
        "## Preferences",
        "## Relationships",
        "## Facts",
        "## To do",
        "## Anecdote",
    ]
    assert page.startswith("# Profile of alice\n")
    assert "- **job**: Alice is a nurse. (importance 9, #1)" in page


def test_inside_a_category_the_given_order_is_kept() -> None:
    # The store hands them over most important first; the page must not reshuffle them.
    page = render_profile(
        "alice",
        [memory(7, "Alice is vegetarian.", "preference", 8), memory(3, "Alice likes jazz.", "preference", 4)],
    )
    assert page.index("vegetarian") < page.index("jazz")


def test_a_multi_line_fact_stays_one_list_item() -> None:
    page = render_profile("alice", [memory(1, "Alice's address:\n12 Rua Nova\n\nPorto", "fact")])
    assert "- Alice's address: 12 Rua Nova Porto (importance 5, #1)" in page.splitlines()


def test_an_empty_profile_says_so() -> None:
    page = render_profile("bob", [])
    assert page == "# Profile of bob\n\nNothing is known for certain yet (no core memories).\n"

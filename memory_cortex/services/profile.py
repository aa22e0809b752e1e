"""The user's profile: their core memories as one Markdown page (the MCP ``memory://profile`` resource).

Core is the layer of what is known for certain (identity, preferences, corrections, facts written
on purpose, and what the lifecycle promoted), so it is what an agent should read before the first
turn. The page groups memories by category, in the order an agent needs them (who the user is
first), and keeps the most important first inside each group. A small renderer of its own: the
Markdown mirror (``services/markdown.py``, issue 8) may take its place.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..models.facts import CATEGORIES
from ..records import MemoryRecord
from .memories import MemoryService
from .recalled import RECALLED_LABEL, note_line

# Who the user is and what they want first; the categories of models.facts follow in their order,
# then any other category a client stored (POST /memories takes free text), alphabetically.
_LEADING = ("identity", "preference", "relationship", "skill", "project_state", "decision")
CATEGORY_ORDER = (*_LEADING, *(c for c in CATEGORIES if c not in _LEADING))

_HEADINGS = {
    "identity": "Identity",
    "preference": "Preferences",
    "relationship": "Relationships",
    "skill": "Skills",
    "project_state": "Projects",
    "decision": "Decisions",
    "fact": "Facts",
    "insight": "Insights",
    "todo": "To do",
    "correction": "Corrections",
}


class ProfileService:
    """Reads a user's core memories and renders them.

    Args:
        memories: the memory service (reads only).
        max_facts: most memories on the page (the most important are kept).
    """

    def __init__(self, memories: MemoryService, max_facts: int) -> None:
        self._memories = memories
        self._max_facts = max_facts

    async def markdown(self, user_id: str) -> str:
        """The profile page of ``user_id``."""
        records = await self._memories.live_in_layer(user_id, "core", self._max_facts)
        return render_profile(user_id, records)


def render_profile(user_id: str, records: Sequence[MemoryRecord]) -> str:
    """``records`` (core memories, most important first) as Markdown, one section per category."""
    lines = [f"# Profile of {note_line(user_id)}", ""]
    if not records:
        lines.append("Nothing is known for certain yet (no core memories).")
        return "\n".join(lines) + "\n"
    lines.append(f"{RECALLED_LABEL} {len(records)} core memories, most important first in each section.")
    by_category: dict[str, list[MemoryRecord]] = {}
    for record in records:
        by_category.setdefault(record.category, []).append(record)
    rank = {category: i for i, category in enumerate(CATEGORY_ORDER)}
    for category in sorted(by_category, key=lambda c: (rank.get(c, len(rank)), c)):
        heading = _HEADINGS.get(category, note_line(category.replace("_", " ").capitalize()))
        lines += ["", f"## {heading}", ""]
        for record in by_category[category]:
            topic = f"**{note_line(record.topic)}**: " if record.topic.strip() else ""
            lines.append(f"- {topic}{note_line(record.fact)} (importance {record.importance}, #{record.id})")
    return "\n".join(lines) + "\n"

"""The /context block's packing alone (``services/context_block.build_block``)."""

from __future__ import annotations

from memory_cortex.services.context_block import build_block
from memory_cortex.services.search import SearchHit
from tests.helpers import memory_record


def turn(memory_id: int, text: str, day: int) -> SearchHit:
    record = memory_record(
        id=memory_id, fact=text, kind="turn", occurred_at=f"2026-03-{day:02d}T10:00:00.000Z"
    )
    return SearchHit(record, 1 - memory_id / 100, 0.5, 0.5, "fts5+vector", 1 - memory_id / 100)


def test_a_line_too_long_for_what_is_left_leaves_room_for_shorter_ones_after_it() -> None:
    """Found on LoCoMo: the block ended at the first turn that did not fit, though the answering
    turn, shorter and ranked after it, did."""
    hits = [
        turn(1, "Ana: I moved the pottery class to Thursdays now.", 3),
        turn(2, "Ana: " + "a very long story about the weekend and the weather " * 12, 2),
        turn(3, "Ana: The kiln is in Leeds.", 1),
    ]
    block = build_block("Where is the kiln?", hits, [], max_tokens=120)
    assert "The kiln is in Leeds" in block.text and "very long story" not in block.text
    assert block.memory_ids == (1, 3)

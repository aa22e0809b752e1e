"""The Markdown mirror format (pure functions): rendering, parsing, and the round trip between them."""

from __future__ import annotations

import string
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_cortex.records import MemoryRecord
from memory_cortex.services.markdown import (
    MIRROR_MARKER,
    is_mirror_file,
    mirror_user,
    render_workspace,
    section_heading,
    user_folder,
    user_from_folder,
)
from memory_cortex.services.markdown_parse import (
    heading_category,
    parse_markdown,
    parse_workspace,
    workspace_file_kind,
)
from memory_cortex.services.recalled import note_line


def record(memory_id: int, fact: str, **fields: Any) -> MemoryRecord:
    values: dict[str, Any] = {
        "id": memory_id,
        "user_id": "sam",
        "topic": "",
        "fact": fact,
        "importance": 5,
        "category": "fact",
        "source_session": None,
        "source_channel": None,
        "ref": None,
        "metadata": {},
        "created_at": "2026-01-05T10:00:00.000Z",
        "updated_at": "2026-01-05T10:00:00.000Z",
        "access_count": 0,
        "last_accessed": None,
        "superseded_by": None,
        "embedding_model": None,
        "embedding_dim": None,
        "embedding_context": 0,
        "layer": "core",
        "layer_since": None,
        "compressed_into": None,
        "has_embedding": False,
        **fields,
    }
    return MemoryRecord(**values)


def parse(text: str, layer: str = "core", day: str | None = None) -> list[tuple[str, str, str, str | None]]:
    """``(fact, category, topic, created_at)`` of each memory of one file."""
    return [
        (m.fact, m.category, m.topic, m.created_at)
        for m in parse_markdown(text, file="MEMORY.md", layer=layer, day=day)
    ]


# -- rendering ------------------------------------------------------------------------------
def test_memory_md_groups_core_memories_under_category_headings_in_a_fixed_order() -> None:
    records = [
        record(7, "Sam decided to take trains only.", category="decision"),
        record(3, "Sam is a nurse.", category="identity", created_at="2025-03-01T08:00:00.000Z"),
        record(5, "Sam likes green tea.", category="preference"),
        record(9, "Ana is Sam's sister.", category="relationship"),
        record(4, "Sam's cat is Miso.", category="pet"),
        record(8, "In 2025 Sam moved to Lisbon and changed jobs.", category="history_summary"),
        record(6, "Sam lives in Lisbon, not Porto.", category="correction"),
        record(2, "Sam plays chess.", category="fact"),
        record(1, "Sam's old flat was in Porto.", layer="archive"),
        record(10, "Sam lives in Porto.", superseded_by=6),
    ]

    text = render_workspace("sam", records)["MEMORY.md"]

    headings = [line for line in text.splitlines() if line.startswith("## ")]
    assert headings == [
        "## Profile",
        "## Preferences",
        "## Decisions",
        "## Relationships",
        "## Corrections",
        "## Facts",
        "## Notes (pet)",
        "## History summaries",
    ]
    assert "- Sam is a nurse. (2025-03-01)" in text.splitlines()
    assert "Porto" not in text.replace("not Porto", "")  # archived and superseded are left out
    assert text.startswith("# Long-term memory\n\n" + MIRROR_MARKER + ' for user "sam"')
    assert text.endswith("(2026-01-05)\n")


def test_working_memories_go_to_one_file_per_utc_day_in_id_order() -> None:
    records = [
        record(12, "Booked the ryokan.", layer="working", created_at="2026-01-07T23:59:59.999Z"),
        record(11, "Sam wants sunrise at Fushimi Inari.", layer="working", created_at="2026-01-05T18:40:00Z"),
        record(10, "Compared rail passes.", layer="working", created_at="2026-01-05T09:12:00.000Z"),
        record(13, "Renew the ID card.", layer="working", category="todo", created_at="2026-01-05T09:13:00Z"),
    ]

    files = render_workspace("sam", records)

    assert sorted(files) == ["MEMORY.md", "memory/2026-01-05.md", "memory/2026-01-07.md"]
    day = files["memory/2026-01-05.md"]
    assert day.startswith("# 2026-01-05\n")
    body = [line for line in day.splitlines() if line.startswith(("- ", "## "))]
    assert body == [
        "## Facts",
        "- Compared rail passes.",
        "- Sam wants sunrise at Fushimi Inari.",
        "## To-dos",
        "- Renew the ID card.",
    ]
    assert "## " not in files["MEMORY.md"]  # no core memory: an empty MEMORY.md, header only


def test_rendering_is_byte_identical_whatever_the_input_order() -> None:
    records = [record(i, f"Fact number {i}.", category=c) for i, c in enumerate(["fact", "identity"] * 5, 1)]

    first = render_workspace("sam", records)
    second = render_workspace("sam", list(reversed(records)))

    assert first == second


def test_a_multi_line_fact_is_one_line_that_starts_nothing_and_parses_back() -> None:
    """An agent reads MEMORY.md into its prompt: a fact's lines must not become its own lines there."""
    fact = "## Trip plan:\n- day 1 Kyoto\n\n  indented <b>detail</b>\n## not a heading"
    text = render_workspace("sam", [record(1, fact)])["MEMORY.md"]

    line = "- Trip plan: - day 1 Kyoto indented &lt;b&gt;detail&lt;/b&gt; ## not a heading (2026-01-05)\n"
    assert line in text
    assert parse(text) == [
        (
            "Trip plan: - day 1 Kyoto indented <b>detail</b> ## not a heading",
            "fact",
            "",
            "2026-01-05T00:00:00.000Z",
        )
    ]


# -- parsing --------------------------------------------------------------------------------
def test_headings_map_to_categories_and_unknown_headings_become_topics() -> None:
    text = """# MEMORY.md

## 🧑 About me
- Sam is a nurse.
## Likes & dislikes:
* Green tea.
## People
### Ana
1. Sister, lives in Porto.
2) Birthday 12 May.
## Health
+ Allergic to penicillin.
## Notes (pet)
- Miso is a cat.
"""
    assert parse(text) == [
        ("Sam is a nurse.", "identity", "", None),
        ("Green tea.", "preference", "", None),
        ("Sister, lives in Porto.", "relationship", "Ana", None),
        ("Birthday 12 May.", "relationship", "Ana", None),
        ("Allergic to penicillin.", "fact", "Health", None),
        ("Miso is a cat.", "pet", "", None),
    ]


def test_every_rendered_heading_parses_back_to_its_category() -> None:
    for category in [
        "identity",
        "preference",
        "decision",
        "relationship",
        "correction",
        "fact",
        "insight",
        "skill",
        "project_state",
        "todo",
        "history_summary",
        "pet",
        "Profile",
    ]:
        assert heading_category(section_heading(category)) == category


def test_paragraphs_are_one_memory_each_and_lazy_lines_continue_a_bullet() -> None:
    text = """Sam asked me to keep a list of phrases
and to quiz them on Sundays.

- Bullet that wraps
onto a lazy line
- Next bullet
Paragraph right after a bullet continues it.

Last paragraph.
"""
    assert [fact for fact, *_ in parse(text)] == [
        "Sam asked me to keep a list of phrases\nand to quiz them on Sundays.",
        "Bullet that wraps\nonto a lazy line",
        "Next bullet\nParagraph right after a bullet continues it.",
        "Last paragraph.",
    ]


def test_dates_come_from_the_file_dated_and_timed_headings_and_a_trailing_marker() -> None:
    daily = """# 2026-01-05

- Morning note.

## 09:12
- At nine.

## 18:40 — Kyoto planning
- Evening, with a topic.
- Dated by its own marker (2025-12-24)
"""
    assert parse(daily, layer="working", day="2026-01-05") == [
        ("Morning note.", "fact", "", "2026-01-05T00:00:00.000Z"),
        ("At nine.", "fact", "", "2026-01-05T09:12:00.000Z"),
        ("Evening, with a topic.", "fact", "Kyoto planning", "2026-01-05T18:40:00.000Z"),
        ("Dated by its own marker", "fact", "Kyoto planning", "2025-12-24T00:00:00.000Z"),
    ]
    curated = """## Decisions
### 2025-11-02 — Tools
- Obsidian instead of Notion.
### 2025-13-45 not a date
- Undated.
- (2026-01-01)
"""
    assert parse(curated) == [
        ("Obsidian instead of Notion.", "decision", "Tools", "2025-11-02T00:00:00.000Z"),
        ("Undated.", "decision", "2025-13-45 not a date", None),
        ("(2026-01-01)", "decision", "2025-13-45 not a date", None),  # only a date: kept as text
    ]


def test_comments_front_matter_rules_and_code_blocks() -> None:
    text = """---
title: memory
---
<!-- a comment
over two lines -->
- Kept.

---
```
- not a bullet
```
***
"""
    assert [fact for fact, *_ in parse(text)] == ["Kept.", "```\n- not a bullet\n```"]


def test_workspace_files_are_recognised_by_name_and_the_rest_is_ignored() -> None:
    assert workspace_file_kind("MEMORY.md") == ("core", None)
    assert workspace_file_kind("./memory.md") == ("core", None)
    assert workspace_file_kind("memory/2026-01-05.md") == ("working", "2026-01-05")
    assert workspace_file_kind("memory\\2026-01-07-ryokan-booking.md") == ("working", "2026-01-07")
    assert workspace_file_kind("memory/2026-02-31.md") == ("working", None)  # no such day: undated
    for other in ["memory/README.md", "memory/projects/2026-01-05.md", "notes.md", "USER.md", "x/MEMORY.md"]:
        assert workspace_file_kind(other) is None

    workspace = parse_workspace(
        {"memory/2026-01-06.md": "- later log", "memory/README.md": "x", "MEMORY.md": "- curated"}
    )
    assert [m.fact for m in workspace.memories] == ["curated", "later log"]
    assert [m.layer for m in workspace.memories] == ["core", "working"]
    assert workspace.files == ["MEMORY.md", "memory/2026-01-06.md"]
    assert workspace.ignored == ["memory/README.md"]


# -- user folders and the header ------------------------------------------------------------
@pytest.mark.parametrize(
    "user_id",
    [
        "sam",
        "telegram:12345",
        "Sam",
        "SAM",
        "..",
        ".hidden",
        "a/b\\c",
        "con",
        "x~1",
        "李明",
        "ends.",
        "u" * 300,
    ],
)
def test_every_user_gets_a_safe_folder_that_decodes_back(user_id: str) -> None:
    folder = user_folder(user_id)

    assert folder not in (".", "..") and "/" not in folder and "\\" not in folder and ":" not in folder
    assert len(folder.encode()) <= 130 and not folder.startswith(".") and not folder.endswith(".")
    if len(user_id) < 100:
        assert user_from_folder(folder) == user_id


def test_ids_differing_only_in_case_never_share_a_folder_on_a_case_insensitive_disk() -> None:
    folders = {user_folder(u).lower() for u in ["sam", "Sam", "SAM", "sAm"]}
    assert len(folders) == 4
    assert user_folder("sam") == "sam"


def test_the_header_names_the_user_and_marks_the_file_as_the_mirror() -> None:
    tricky = 'a "quoted" --> user'
    text = render_workspace(tricky, [])["MEMORY.md"]

    assert is_mirror_file(text) and mirror_user(text) == tricky
    assert text.count("-->") == 1  # the user id cannot end the comment early
    assert not is_mirror_file("# MEMORY.md\n\n- hand written\n") and mirror_user("# x") is None


# -- the round trip -------------------------------------------------------------------------
_LINE = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n"), max_size=40
).map(str.strip)
_FACT = st.lists(_LINE, min_size=1, max_size=4).map(lambda lines: "\n".join(lines).strip()).filter(bool)
# Texts that end like the date marker itself must not lose that ending (nor take it as their date).
_FACT = _FACT | _FACT.map(lambda fact: f"{fact} (2024-02-29)") | st.just("- (2024-02-29)\n(2023-01-01)")
_CATEGORY = st.sampled_from(
    ["identity", "preference", "decision", "relationship", "correction", "fact", "todo", "history_summary"]
) | st.text(alphabet=string.ascii_lowercase + "_", min_size=1, max_size=12)
_MEMORY = st.tuples(
    _FACT,
    _CATEGORY,
    st.sampled_from(["core", "working"]),
    st.dates().map(lambda d: f"{d.isoformat()}T12:34:56.789Z").filter(lambda s: len(s) == 24),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_MEMORY, min_size=1, max_size=8))
def test_render_then_parse_gives_back_every_fact_category_layer_and_date(
    memories: list[tuple[str, str, str, str]],
) -> None:
    records = [
        record(i, fact, category=category, layer=layer, created_at=created_at)
        for i, (fact, category, layer, created_at) in enumerate(memories, 1)
    ]

    parsed = parse_workspace(render_workspace("sam", records)).memories

    # Each fact comes back as the one line the mirror writes (note_line), its entities read back.
    def normal(fact: str) -> str:
        return note_line(fact).replace("&lt;", "<").replace("&gt;", ">")

    expected = sorted((normal(r.fact), r.category, r.layer, r.created_at[:10]) for r in records)
    got = sorted((m.fact, m.category, m.layer, (m.created_at or "")[:10]) for m in parsed)
    assert got == expected


def test_turns_go_to_the_daily_log_of_the_day_they_were_said_facts_stay_by_storage_day() -> None:
    said = record(1, "Tim: I booked the flight to Lisbon.", kind="turn", category="conversation",
                  layer="working", occurred_at="2025-05-21T10:20:00.000Z")  # fmt: skip
    fact = record(2, "Tim's sister is getting married.", layer="working")
    files = render_workspace("tim", [said, fact])
    assert "Lisbon" not in files["MEMORY.md"]
    assert "## Conversation\n\n- Tim: I booked the flight to Lisbon." in files["memory/2025-05-21.md"]
    assert "Tim's sister" in files["memory/2026-01-05.md"]
    summary = record(3, "Tim and the assistant planned his trip to Lisbon.", category="session_summary")
    assert (
        "## Conversation summaries\n\n- Tim and the assistant planned"
        in render_workspace("tim", [summary])["MEMORY.md"]
    )
    assert parse(files["memory/2025-05-21.md"], layer="working", day="2025-05-21")[0][:2] == (
        "Tim: I booked the flight to Lisbon.",
        "conversation",
    )

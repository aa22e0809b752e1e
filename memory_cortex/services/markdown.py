"""The Markdown mirror format: OpenClaw's workspace layout, rendered from memories and parsed back.

An OpenClaw agent keeps its memory in plain Markdown in its workspace: ``MEMORY.md`` (curated,
long-term) and ``memory/YYYY-MM-DD.md`` daily logs (``memory/YYYY-MM-DD-<slug>.md`` too). This module
turns one user's memories into those files and such files into memories. Pure functions: no I/O,
no database; :mod:`memory_cortex.services.mirror` reads and writes the files and the store.

Rendering (what ``export-md`` and the auto-sync write):

- ``MEMORY.md``: the user's **core** memories, one bullet each, under one ``##`` heading per
  category (:data:`SECTIONS`, then ``Notes (<category>)`` for any other category), each bullet
  ending with its UTC date, ``(YYYY-MM-DD)``.
- ``memory/YYYY-MM-DD.md``: the **working** memories created that UTC day, under the same headings.
- Archived memories are not mirrored (they are out of the agent's everyday view by design).
- Within a section, memories are in id order; the header comment carries no timestamp: the same
  memories always give the same bytes, so a mirror kept in git has small diffs.
- Each fact is one line (newlines become spaces, ``<``/``>`` entities, no leading heading marker),
  and the header comment says these are recalled notes, not instructions: an agent reads the file
  into its prompt, and a memory must not be able to pass for the agent's own instructions there.

Parsing (``import-md`` and ``POST /import``, :mod:`.markdown_parse`) reads the same layout written by
hand or by an agent:
headings map to categories (:data:`HEADING_CATEGORIES`; an unknown heading becomes the topic of the
memories under it), each bullet (``-``, ``*``, ``+``, ``1.``) with its indented continuation lines is
one memory, and so is each paragraph. ``MEMORY.md`` gives core memories, daily logs working ones.
Dates come from the daily log's file name, from dated headings (``## 2026-01-05``, ``### 2026-01-05 —
Trip``), from ``## HH:MM`` headings (the time of day) and from a trailing ``(YYYY-MM-DD)``; all are UTC.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from urllib.parse import quote, unquote

from ..records import MemoryRecord
from .recalled import RECALLED_LABEL, note_line

MEMORY_FILE = "MEMORY.md"
DAILY_DIR = "memory"
# Every file the daemon writes carries this comment: only such files are ever overwritten or
# removed without --force (a hand-written MEMORY.md is never clobbered by accident).
MIRROR_MARKER = "<!-- memory-cortex mirror"
MIRRORED_LAYERS = ("core", "working")

# category -> heading, in the order the sections appear; other categories come as
# "Notes (<category>)" between the last of these and the history summaries.
SECTIONS: tuple[tuple[str, str], ...] = (
    ("identity", "Profile"),
    ("preference", "Preferences"),
    ("decision", "Decisions"),
    ("relationship", "Relationships"),
    ("correction", "Corrections"),
    ("fact", "Facts"),
    ("insight", "Insights"),
    ("skill", "Skills"),
    ("project_state", "Projects"),
    ("todo", "To-dos"),
    ("session_summary", "Conversation summaries"),  # the lifecycle's, in MEMORY.md
    ("conversation", "Conversation"),  # verbatim turns (/ingest), in the daily logs
)
HISTORY_SUMMARY = ("history_summary", "History summaries")
_HEADING_OF = dict([*SECTIONS, HISTORY_SUMMARY])

# Headings found in hand-written workspaces (normalised: lower case, no emoji or punctuation at the
# ends, "&" read as "and") -> category. The rendered headings are among them.
HEADING_CATEGORIES: dict[str, str] = {
    **{heading.lower(): category for category, heading in [*SECTIONS, HISTORY_SUMMARY]},
    **dict.fromkeys(
        (
            "identity",
            "about",
            "about me",
            "about the user",
            "user",
            "user profile",
            "who i am",
            "personal info",
            "personal information",
            "personal details",
            "bio",
            "basics",
        ),
        "identity",
    ),
    **dict.fromkeys(
        ("preference", "likes", "likes and dislikes", "tastes", "user preferences"), "preference"
    ),
    **dict.fromkeys(("decision", "key decisions", "decisions made", "standing decisions"), "decision"),
    **dict.fromkeys(
        ("relationship", "people", "family", "friends", "contacts", "family and friends"), "relationship"
    ),
    **dict.fromkeys(("correction",), "correction"),
    **dict.fromkeys(
        ("fact", "notes", "note", "misc", "miscellaneous", "other", "general", "durable facts", "key facts"),
        "fact",
    ),
    **dict.fromkeys(("insight", "lessons", "lessons learned", "learnings", "learned"), "insight"),
    **dict.fromkeys(("skill", "abilities"), "skill"),
    **dict.fromkeys(("project", "project state", "active projects", "current projects"), "project_state"),
    **dict.fromkeys(
        ("todo", "todos", "to-do", "to do", "tasks", "open tasks", "open loops", "next steps"), "todo"
    ),
    **dict.fromkeys(("history summary", "history", "summaries", "summary", "timeline"), "history_summary"),
}

# Importance of an imported memory: a file says nothing about it, its section does a little
# (the same levels the rules extractor gives these categories).

DATE_PATTERN = r"([0-9]{4}-[0-9]{2}-[0-9]{2})"
TIME_PATTERN = r"([0-9]{1,2}):([0-9]{2})(?::[0-9]{2})?"
DATE_MARKER = re.compile(rf"[ \t]\({DATE_PATTERN}\)[ \t]*$")
_SAFE_FOLDER = re.compile(r"[a-z0-9](?:[a-z0-9._-]{0,62}[a-z0-9])?")
# Names Windows refuses for a file or folder (a mirror may live on /mnt/c under WSL2).
_RESERVED_FOLDERS = frozenset(
    ["con", "prn", "aux", "nul", *(f"com{n}" for n in range(10)), *(f"lpt{n}" for n in range(10))]
)
_HASHED_FOLDER = re.compile(r"(.*)~([0-9a-f]{8,16})")
_MIRROR_USER = re.compile(re.escape(MIRROR_MARKER) + r' for user ("(?:[^"\\]|\\.)*")')


# -- rendering ------------------------------------------------------------------------------
def section_heading(category: str) -> str:
    """The ``##`` heading a category is rendered under (parsed back to the same category)."""
    known = _HEADING_OF.get(category)
    if known is not None:
        return known
    return f"Notes ({note_line(category)})"


def _section_order(category: str) -> tuple[int, str]:
    for position, (known, _) in enumerate(SECTIONS):
        if category == known:
            return (position, "")
    if category == HISTORY_SUMMARY[0]:
        return (len(SECTIONS) + 1, "")
    return (len(SECTIONS), category)


def render_workspace(user_id: str, records: Iterable[MemoryRecord]) -> dict[str, str]:
    """One user's mirror: ``{relative path: file content}``.

    ``MEMORY.md`` is always there (an agent expects it, even empty); one ``memory/YYYY-MM-DD.md``
    per UTC day that has working memories. Archived and superseded memories are left out.
    """
    core: list[MemoryRecord] = []
    days: dict[str, list[MemoryRecord]] = {}
    for record in records:
        if record.superseded_by is not None:
            continue
        if record.layer == "core":
            core.append(record)
        elif record.layer == "working":
            # A turn is filed under the day it was said; a fact under the day it was stored.
            day = record.about_time if record.kind == "turn" else record.created_at
            days.setdefault(day[:10], []).append(record)
    files = {
        MEMORY_FILE: _render_file(
            "# Long-term memory",
            _header(user_id, "core memories by category, each with its date (UTC)"),
            core,
            dated=True,
        )
    }
    for day in sorted(days):
        files[f"{DAILY_DIR}/{day}.md"] = _render_file(
            f"# {day}",
            _header(user_id, f"working memories of {day} (UTC) by category"),
            days[day],
            dated=False,
        )
    return files


def _header(user_id: str, what: str) -> str:
    return (
        f"{MIRROR_MARKER} for user {_comment_safe(json.dumps(user_id, ensure_ascii=False))}: {what}."
        f" {RECALLED_LABEL} Archived memories are not mirrored. Written by the daemon: edits here are"
        " overwritten; change memories through its API, or bring notes in with import-md. -->"
    )


def _comment_safe(text: str) -> str:
    """JSON text that cannot end an HTML comment ("--" is escaped inside the JSON string)."""
    return text.replace("--", "-\\u002d")


def _render_file(title: str, header: str, records: list[MemoryRecord], *, dated: bool) -> str:
    sections: dict[str, list[MemoryRecord]] = {}
    for record in sorted(records, key=lambda r: r.id):
        sections.setdefault(record.category, []).append(record)
    lines = [title, "", header]
    for category in sorted(sections, key=_section_order):
        lines += ["", f"## {section_heading(category)}", ""]
        for record in sections[category]:
            lines += _bullet(record.fact, record.created_at[:10], always_dated=dated)
    return "\n".join(lines) + "\n"


def _bullet(fact: str, day: str, *, always_dated: bool) -> list[str]:
    """A fact as a one-line bullet (:func:`~memory_cortex.services.recalled.note_line`: an agent reads
    this file into its prompt, so no fact may start a section or close a tag there).

    The date goes at the end in MEMORY.md; in a daily log (whose name has the date) only when the
    fact itself ends like a date marker, which would otherwise be read as one.
    """
    line = note_line(fact)
    if always_dated or DATE_MARKER.search(line):
        line = f"{line} ({day})"
    return [f"- {line}"]


# -- user folders ---------------------------------------------------------------------------
def user_folder(user_id: str) -> str:
    """A folder name for ``user_id`` that is safe on every file system and decodes back.

    Lower-case ids of letters, digits, ``.``, ``_`` and ``-`` (at most 64, starting and ending with
    a letter or digit, not a name Windows reserves) are used as they are. Any other id is percent-encoded and gets ``~`` and 8 hex digits of its
    SHA-256, so ids that differ only in case never share a folder on a case-insensitive disk
    (Windows, macOS). An id too long for a file name becomes ``~`` and 16 hex digits (the user id
    is also in each file's header comment, which import reads first).
    """
    if _SAFE_FOLDER.fullmatch(user_id) and user_id.split(".")[0] not in _RESERVED_FOLDERS:
        return user_id
    digest = hashlib.sha256(user_id.encode("utf-8", "surrogatepass")).hexdigest()
    encoded = quote(user_id, safe="", errors="surrogatepass").replace("~", "%7E")
    if encoded.startswith("."):
        encoded = "%2E" + encoded[1:]
    if len(encoded) > 120:
        return f"~{digest[:16]}"
    return f"{encoded}~{digest[:8]}"


def user_from_folder(name: str) -> str:
    """The user id a folder made by :func:`user_folder` stands for; any other name is the id itself."""
    hashed = _HASHED_FOLDER.fullmatch(name)
    if hashed is not None and hashed.group(1):
        candidate = unquote(hashed.group(1))
        if user_folder(candidate) == name:
            return candidate
    return name


def mirror_user(text: str) -> str | None:
    """The user id in the header comment of a file the daemon wrote, else None."""
    found = _MIRROR_USER.search(text[:4096])
    if found is None:
        return None
    try:
        user = json.loads(found.group(1))
    except json.JSONDecodeError:
        return None
    return user if isinstance(user, str) and user else None


def is_mirror_file(text: str) -> bool:
    """True when the daemon wrote this file (its header comment is in the first lines)."""
    return MIRROR_MARKER in text[:4096]

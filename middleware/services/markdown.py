"""The Markdown mirror format: OpenClaw's workspace layout, rendered from memories and parsed back.

An OpenClaw agent keeps its memory in plain Markdown in its workspace: ``MEMORY.md`` (curated,
long-term) and ``memory/YYYY-MM-DD.md`` daily logs (``memory/YYYY-MM-DD-<slug>.md`` too). This module
turns one user's memories into those files and such files into memories. Pure functions: no I/O,
no database; :mod:`middleware.services.mirror` reads and writes the files and the store.

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

Parsing (``import-md`` and ``POST /import``) reads the same layout written by hand or by an agent:
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
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date
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
IMPORTED_IMPORTANCE = {"identity": 8, "correction": 7, "preference": 6, "relationship": 6, "decision": 6}
DEFAULT_IMPORTANCE = 5

_NOTES = re.compile(r"notes \((.{1,64})\)", re.IGNORECASE)
_HEADING = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*")
_RULE = re.compile(r" {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*")
_BULLET = re.compile(r"( {0,3})([-*+]|[0-9]{1,9}[.)])(?:([ \t]+)(.*))?")
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
_DATE = r"([0-9]{4}-[0-9]{2}-[0-9]{2})"
_TIME = r"([0-9]{1,2}):([0-9]{2})(?::[0-9]{2})?"
_DATED_HEADING = re.compile(rf"{_DATE}(?:[ T]{_TIME})?(?![0-9])(.*)", re.DOTALL)
_TIMED_HEADING = re.compile(rf"{_TIME}(?![0-9])(.*)", re.DOTALL)
_DATE_MARKER = re.compile(rf"[ \t]\({_DATE}\)[ \t]*$")
_DAILY_NAME = re.compile(rf"{_DATE}(?:[-_ ].*)?\.md", re.IGNORECASE | re.DOTALL)
_SAFE_FOLDER = re.compile(r"[a-z0-9](?:[a-z0-9._-]{0,62}[a-z0-9])?")
# Names Windows refuses for a file or folder (a mirror may live on /mnt/c under WSL2).
_RESERVED_FOLDERS = frozenset(
    ["con", "prn", "aux", "nul", *(f"com{n}" for n in range(10)), *(f"lpt{n}" for n in range(10))]
)
_HASHED_FOLDER = re.compile(r"(.*)~([0-9a-f]{8,16})")
_MIRROR_USER = re.compile(re.escape(MIRROR_MARKER) + r' for user ("(?:[^"\\]|\\.)*")')
_SEPARATORS = " \t-–—:·|,."


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
    """A fact as a one-line bullet (:func:`~middleware.services.recalled.note_line`: an agent reads
    this file into its prompt, so no fact may start a section or close a tag there).

    The date goes at the end in MEMORY.md; in a daily log (whose name has the date) only when the
    fact itself ends like a date marker, which would otherwise be read as one.
    """
    line = note_line(fact)
    if always_dated or _DATE_MARKER.search(line):
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


# -- parsing --------------------------------------------------------------------------------
@dataclass(frozen=True)
class ParsedMemory:
    """One memory read from a workspace file."""

    fact: str
    category: str
    layer: str  # core (MEMORY.md) or working (daily logs)
    created_at: str | None  # ISO 8601 UTC; None: the file gives no date (stored as "now")
    topic: str
    file: str
    line: int  # 1-based line of its first line
    heading: str | None  # the nearest heading above it, for provenance

    @property
    def importance(self) -> int:
        return IMPORTED_IMPORTANCE.get(self.category, DEFAULT_IMPORTANCE)

    @property
    def ref(self) -> str:
        return f"{self.file}:{self.line}"[-500:]


@dataclass
class ParsedWorkspace:
    """What a workspace holds: its memories in file order, the files read and those left alone."""

    memories: list[ParsedMemory] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)


def workspace_file_kind(path: str) -> tuple[str, str | None] | None:
    """``(layer, date)`` for a memory file of a workspace, None for any other file.

    ``MEMORY.md`` (or ``memory.md``) is core and undated; ``memory/YYYY-MM-DD.md`` and
    ``memory/YYYY-MM-DD-<slug>.md`` are working, dated by their name. Other files, also inside
    ``memory/``, are not memory files (OpenClaw keeps its own notes and indexes around them).
    """
    normal = normalise_path(path)
    if normal in (MEMORY_FILE, "memory.md"):
        return ("core", None)
    folder, _, name = normal.rpartition("/")
    if folder != DAILY_DIR:
        return None
    named = _DAILY_NAME.fullmatch(name)
    if named is None:
        return None
    return ("working", named.group(1) if _valid_date(named.group(1)) else None)


def normalise_path(path: str) -> str:
    """``./memory\\2026-01-05.md`` -> ``memory/2026-01-05.md``."""
    normal = path.replace("\\", "/")
    while normal.startswith("./"):
        normal = normal[2:]
    return normal


def parse_workspace(files: Mapping[str, str]) -> ParsedWorkspace:
    """Every memory of a workspace given as ``{relative path: content}``.

    ``MEMORY.md`` first, then the daily logs by name (oldest first), so that the curated file comes
    before the logs it was distilled from.
    """
    workspace = ParsedWorkspace()
    kinds: list[tuple[str, str, str, str | None]] = []
    for path, content in files.items():
        kind = workspace_file_kind(path)
        if kind is None:
            workspace.ignored.append(path)
        else:
            kinds.append((path, content, *kind))
    kinds.sort(key=lambda k: (k[2] != "core", normalise_path(k[0])))
    for path, content, layer, day in kinds:
        workspace.files.append(path)
        workspace.memories += parse_markdown(content, file=normalise_path(path), layer=layer, day=day)
    workspace.ignored.sort()
    return workspace


@dataclass(frozen=True)
class _Heading:
    text: str
    category: str | None
    day: str | None
    time: str | None
    title: str  # the heading without its date or time


def _read_heading(text: str) -> _Heading:
    day = time = None
    title = text.strip()
    dated = _DATED_HEADING.match(title)
    if dated is not None and _valid_date(dated.group(1)):
        day = dated.group(1)
        if dated.group(2) is not None and _valid_time(dated.group(2), dated.group(3)):
            time = f"{int(dated.group(2)):02d}:{dated.group(3)}"
        title = dated.group(4).strip(_SEPARATORS)
    else:
        timed = _TIMED_HEADING.match(title)
        if timed is not None and _valid_time(timed.group(1), timed.group(2)):
            time = f"{int(timed.group(1)):02d}:{timed.group(2)}"
            title = timed.group(3).strip(_SEPARATORS)
    return _Heading(text.strip(), heading_category(title), day, time, title)


def heading_category(title: str) -> str | None:
    """The category a heading stands for, or None for a heading that is only a topic."""
    notes = _NOTES.fullmatch(title.strip())
    if notes is not None:
        return notes.group(1)
    words = re.sub(r"^[\W_]+|[\W_]+$", "", title.lower().replace("&", " and "))
    return HEADING_CATEGORIES.get(" ".join(words.split()))


def _valid_date(text: str) -> bool:
    try:
        date.fromisoformat(text)
    except ValueError:
        return False
    return True


def _valid_time(hours: str, minutes: str) -> bool:
    return int(hours) < 24 and int(minutes) < 60


class _Block:
    """Lines of one bullet or paragraph being collected."""

    def __init__(self, line_number: int, first: str, indent: int) -> None:
        self.line = line_number
        self.lines = [first]
        self.indent = indent  # continuation lines lose up to this many leading spaces
        self.blank_lines = 0  # blank lines seen after it, kept if the item goes on


def parse_markdown(text: str, *, file: str, layer: str, day: str | None) -> list[ParsedMemory]:
    """The memories of one file (see the module docstring for the rules)."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    memories: list[ParsedMemory] = []
    headings: dict[int, _Heading] = {}
    block: _Block | None = None
    in_bullet = False
    fence: str | None = None  # the opening fence of a code block being collected
    in_comment = False
    start = _front_matter_end(lines)

    def flush() -> None:
        nonlocal block, in_bullet
        if block is not None:
            memory = _memory(block, headings, file=file, layer=layer, day=day)
            if memory is not None:
                memories.append(memory)
        block, in_bullet = None, False

    for number, line in enumerate(lines[start:], start=start + 1):
        if fence is not None:
            assert block is not None
            block.lines.append(line)
            if line.strip().startswith(fence):
                fence = None
                flush()
            continue
        if in_comment:
            in_comment = "-->" not in line
            continue
        blank = not line.strip()
        if in_bullet and block is not None:
            if blank:
                block.blank_lines += 1
                continue
            indented = line.startswith("\t") or len(line) - len(line.lstrip(" ")) >= min(block.indent, 4)
            if indented or (block.blank_lines == 0 and _is_lazy_continuation(line)):
                block.lines += [""] * block.blank_lines + [_dedent(line, block.indent)]
                block.blank_lines = 0
                continue
            flush()
        if blank:
            flush()
            continue
        heading = _HEADING.fullmatch(line)
        if heading is not None:
            flush()
            level = len(heading.group(1))
            for deeper in [lvl for lvl in headings if lvl >= level]:
                del headings[deeper]
            headings[level] = _read_heading(heading.group(2) or "")
            continue
        if _RULE.fullmatch(line):
            flush()
            continue
        if line.lstrip().startswith("<!--"):
            flush()
            in_comment = "-->" not in line
            continue
        bullet = _BULLET.fullmatch(line)
        if bullet is not None:
            flush()
            spaces = bullet.group(3) or " "
            indent = len(bullet.group(1)) + len(bullet.group(2)) + (len(spaces) if len(spaces) <= 4 else 1)
            block, in_bullet = _Block(number, bullet.group(4) or "", indent), True
            continue
        opening = _FENCE.match(line)
        if opening is not None:
            flush()
            block, fence = _Block(number, line, 0), opening.group(1)[0] * len(opening.group(1))
            continue
        if block is None:
            block = _Block(number, line, 0)
        else:
            block.lines.append(line)
    flush()  # the last item, or an unclosed code block (its text is still worth keeping)
    return memories


def _front_matter_end(lines: list[str]) -> int:
    """Index of the first line after a YAML front matter block (``---`` … ``---``), else 0."""
    if lines and lines[0].strip() == "---":
        for index in range(1, len(lines)):
            if lines[index].strip() in ("---", "..."):
                return index + 1
    return 0


def _is_lazy_continuation(line: str) -> bool:
    """A plain line right after a bullet's text continues it (as in CommonMark), unless it starts
    a block of its own."""
    return not (
        _HEADING.fullmatch(line)
        or _RULE.fullmatch(line)
        or _BULLET.fullmatch(line)
        or _FENCE.match(line)
        or line.lstrip().startswith("<!--")
    )


def _dedent(line: str, indent: int) -> str:
    if line.startswith("\t"):
        return line[1:]
    spaces = len(line) - len(line.lstrip(" "))
    return line[min(spaces, indent) :]


def _memory(
    block: _Block, headings: Mapping[int, _Heading], *, file: str, layer: str, day: str | None
) -> ParsedMemory | None:
    lines = list(block.lines)
    while lines and not lines[-1].strip():
        lines.pop()
    if not lines:
        return None
    day_of_fact, time_of_fact = _heading_date(headings, day)
    marked = _DATE_MARKER.search(lines[-1])
    if marked is not None and _valid_date(marked.group(1)):
        unmarked = [*lines[:-1], lines[-1][: marked.start()]]
        if "\n".join(unmarked).strip():  # a bullet that is only a date stays a bullet
            lines, day_of_fact, time_of_fact = unmarked, marked.group(1), None
    # The mirror writes < and > as entities (note_line); in Markdown they mean the characters.
    fact = "\n".join(lines).strip().replace("&lt;", "<").replace("&gt;", ">")
    if not fact:
        return None
    ordered = [headings[level] for level in sorted(headings)]
    category = next((h.category for h in reversed(ordered) if h.category is not None), "fact")
    # The deepest heading that names no category is the topic; a level-1 heading is the
    # document's title ("# MEMORY.md", "# Long-term memory"), never a topic.
    topic = next(
        (h.title for level, h in sorted(headings.items(), reverse=True) if level > 1 and h.category is None),
        "",
    )
    created_at = None
    if day_of_fact is not None:
        created_at = f"{day_of_fact}T{time_of_fact or '00:00'}:00.000Z"
    return ParsedMemory(
        fact=fact,
        category=category,
        layer=layer,
        created_at=created_at,
        topic=topic[:200],
        file=file,
        line=block.line,
        heading=ordered[-1].text if ordered else None,
    )


def _heading_date(headings: Mapping[int, _Heading], day: str | None) -> tuple[str | None, str | None]:
    """The date of the deepest dated heading (else the file's), and the time of the deepest timed
    heading below it."""
    time = None
    for level in sorted(headings, reverse=True):
        heading = headings[level]
        if time is None and heading.time is not None:
            time = heading.time
        if heading.day is not None:
            return heading.day, time
    return day, time if day is not None else None

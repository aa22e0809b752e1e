"""Reading a workspace: which files are memory files, and each bullet or paragraph of one as a
memory with its category (from the heading above), topic, layer and date (see
:mod:`.markdown` for the format and the rules)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date

from .markdown import DAILY_DIR, DATE_MARKER, DATE_PATTERN, HEADING_CATEGORIES, MEMORY_FILE, TIME_PATTERN

IMPORTED_IMPORTANCE = {"identity": 8, "correction": 7, "preference": 6, "relationship": 6, "decision": 6}
DEFAULT_IMPORTANCE = 5
_NOTES = re.compile(r"notes \((.{1,64})\)", re.IGNORECASE)
_HEADING = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*")
_RULE = re.compile(r" {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*")
_BULLET = re.compile(r"( {0,3})([-*+]|[0-9]{1,9}[.)])(?:([ \t]+)(.*))?")
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
_DATED_HEADING = re.compile(rf"{DATE_PATTERN}(?:[ T]{TIME_PATTERN})?(?![0-9])(.*)", re.DOTALL)
_TIMED_HEADING = re.compile(rf"{TIME_PATTERN}(?![0-9])(.*)", re.DOTALL)
_DAILY_NAME = re.compile(rf"{DATE_PATTERN}(?:[-_ ].*)?\.md", re.IGNORECASE | re.DOTALL)
_SEPARATORS = " \t-–—:·|,."


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
    marked = DATE_MARKER.search(lines[-1])
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

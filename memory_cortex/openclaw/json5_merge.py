"""Merge settings into a JSON5 document (OpenClaw's ``openclaw.json``) by editing its text.

OpenClaw's own config writers re-serialise the file as plain JSON and drop its comments; this module
changes only the values it is given, so every comment and every other line stays as the user wrote
it. It parses with json-five's round-trip model (which knows where each key and value is in the
text) and splices: a changed value is replaced in place, a missing key is added at the top of its
object, and a key written twice in an object on a changed path (JSON5 readers use the last one, so
the first is dead text) is left once.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import json5
from json5.loader import ModelLoader
from json5.model import Comment, Identifier, JSONObject, Node, String, walk

# Whitespace and comments, then the comma that ends a member.
_COMMA_AFTER = re.compile(r"(?:\s|//[^\n]*|/\*.*?\*/)*,", re.DOTALL)


class Json5MergeError(ValueError):
    """The document is not JSON5 whose root is an object, or the merge could not be done in place."""


@dataclass(frozen=True)
class Json5Merge:
    """The merged ``text``; each duplicate removed, as ``"<dotted key> (line N)"``; whether the
    document holds comments."""

    text: str
    removed_duplicates: tuple[str, ...]
    had_comments: bool


@dataclass(frozen=True)
class _Edit:
    start: int
    end: int
    text: str


def load_json5(text: str) -> dict[str, Any]:
    """The document as plain data (a key written twice: the last one); {} for an empty file."""
    if not text.strip():
        return {}
    try:
        data = json5.loads(text)
    except Exception as exc:  # json-five raises its own JSON5DecodeError and friends
        raise Json5MergeError(f"not valid JSON5: {exc}") from exc
    if not isinstance(data, dict):
        raise Json5MergeError("the top level is not an object")
    return data


def merged(base: dict[str, Any], updates: dict[str, Any]) -> dict[str, Any]:
    """``base`` with ``updates`` merged recursively (objects merge, anything else replaces)."""
    result = dict(base)
    for key, value in updates.items():
        if isinstance(value, dict) and isinstance(result.get(key), dict):
            result[key] = merged(result[key], value)
        else:
            result[key] = value
    return result


def merge_json5(text: str, updates: dict[str, Any]) -> Json5Merge:
    """``text`` with ``updates`` merged in (see :func:`merged`), every untouched byte kept.

    Raises:
        Json5MergeError: ``text`` is not a JSON5 object, or the edited text would not read back as
            the merged data (nothing is returned half-done).
    """
    expected = merged(load_json5(text), updates)
    if not text.strip():
        return Json5Merge(json.dumps(expected, indent=2, ensure_ascii=False) + "\n", (), False)
    model = json5.loads(text, loader=ModelLoader())
    root = model.value
    if not isinstance(root, JSONObject):
        raise Json5MergeError("the top level is not an object")
    edits: list[_Edit] = []
    removed: list[str] = []
    _merge_object(text, root, updates, edits, removed, "")
    result = text
    for edit in sorted(edits, key=lambda edit: edit.start, reverse=True):
        result = result[: edit.start] + edit.text + result[edit.end :]
    if load_json5(result) != expected:
        raise Json5MergeError("the edited file would not read back as intended")
    newline = "\r\n" if "\r\n" in text else "\n"
    if newline != "\n":  # new lines written as the file writes its own
        result = re.sub(
            r"(?<!\r)\n", newline, result
        )  # the lines this merge wrote, as the file writes its own
    had_comments = any(isinstance(node, Comment) for node in walk(model))
    return Json5Merge(result, tuple(removed), had_comments)


def _merge_object(
    text: str, node: JSONObject, updates: dict[str, Any], edits: list[_Edit], removed: list[str], path: str
) -> None:
    missing: dict[str, Any] = {}
    for key, value in updates.items():
        places = [index for index, name in enumerate(node.keys) if _key_name(name) == key]
        for index in places[:-1]:
            edits.append(_removal(text, node, index))
            removed.append(f"{path}{key} (line {text.count(chr(10), 0, _span(node.keys[index])[0]) + 1})")
        if not places:
            missing[key] = value
            continue
        current = node.values[places[-1]]
        if isinstance(value, dict) and isinstance(current, JSONObject):
            _merge_object(text, current, value, edits, removed, f"{path}{key}.")
        else:
            start, end = _span(current)
            one_line = "\n" not in text[_span(node)[0] : _span(node)[1]]
            edits.append(_Edit(start, end, _render(value, None if one_line else _line_indent(text, start))))
    if missing:
        edits.append(_insertion(text, node, missing))


def _insertion(text: str, node: JSONObject, members: dict[str, Any]) -> _Edit:
    """New members at the top of ``node``: one per line, indented like its other keys, in an object
    written over several lines; inline in an object written on one line."""
    start, end = _span(node)
    if "\n" not in text[start:end]:
        inline = " ".join(
            f"{json.dumps(key, ensure_ascii=False)}: {_render(value, None)},"
            for key, value in members.items()
        )
        if not node.keys and not text[start + 1 : end - 1].strip():
            return _Edit(start, end, "{ " + inline.rstrip(",") + " }")
        return _Edit(start + 1, start + 1, " " + inline + ("" if text[start + 1].isspace() else " "))
    outer = _line_indent(text, start)
    inner = _line_indent(text, _span(node.keys[0])[0]) if node.keys else outer + "  "
    body = "".join(
        f"\n{inner}{json.dumps(key, ensure_ascii=False)}: {_render(value, inner)},"
        for key, value in members.items()
    )
    if not node.keys and not text[start + 1 : end - 1].strip():  # {} or { } over lines: write it whole
        return _Edit(start, end, "{" + body.rstrip(",") + f"\n{outer}}}")
    return _Edit(start + 1, start + 1, body)


def _removal(text: str, node: JSONObject, index: int) -> _Edit:
    """The member at ``index`` and the comma after it; its whole line when nothing else is on it."""
    start = _span(node.keys[index])[0]
    end = _span(node.values[index])[1]
    comma = _COMMA_AFTER.match(text, end)
    end = comma.end() if comma else end
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    if not text[line_start:start].strip() and line_end != -1 and not text[end:line_end].strip():
        return _Edit(line_start, line_end + 1, "")
    return _Edit(start, end, "")


def _render(value: Any, indent: str | None) -> str:
    """``value`` as JSON: over lines, continuing at ``indent``; on one line when ``indent`` is None."""
    if indent is None:
        return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    return json.dumps(value, indent=2, ensure_ascii=False).replace("\n", "\n" + indent)


def _key_name(key: Node) -> str:
    if isinstance(key, Identifier):
        return str(key.name)
    if isinstance(key, String):
        return str(key.characters)
    raise Json5MergeError(f"unexpected key {key!r}")


def _span(node: Node) -> tuple[int, int]:
    first = node._tok  # json-five keeps each node's first and last token, with their offsets
    last = node._end_tok or first
    if first is None or last is None:
        raise Json5MergeError("no position for a value")
    return first.index, last.end


def _line_indent(text: str, offset: int) -> str:
    """The whitespace that starts the line ``offset`` is on."""
    line_start = text.rfind("\n", 0, offset) + 1
    return re.match(r"[ \t]*", text[line_start:offset]).group(0)  # type: ignore[union-attr]

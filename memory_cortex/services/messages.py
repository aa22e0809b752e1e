"""The messages of an ``/ingest`` request as the daemon keeps them: text only (OpenClaw's blocks
joined), secrets masked, skipped roles and heartbeats left out; and the delta — which of them are
new since the session was last extracted.

Why a delta by multiset of message hashes: OpenClaw posts the whole session after every turn. A
plain resend is the old history plus a tail; after a compaction the history is a summary plus the
latest messages. Counting how many times each (role, text) hash was already extracted and walking
the new history, a message is "new" only when its hash has no unused earlier occurrence left. A
resend then yields exactly the tail, a compacted history only what was never seen, and a message
genuinely repeated ("yes") is still extracted the second time.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..config import IngestConfig
from ..redaction import Redacted, redact


@dataclass(frozen=True)
class Message:
    """One cleaned message. Only ``role`` and ``text`` say what it is (its digest); the rest is
    what the client told about it, kept for the verbatim turn it becomes."""

    role: str
    text: str
    name: str | None = field(default=None, compare=False)  # the speaker's name, when the client sent one
    timestamp: Any = field(default=None, compare=False)  # the message's own time, as sent
    ref: str | None = field(default=None, compare=False)  # the client's message id
    # Whether the owner (the user the memory belongs to) wrote it, when the client said (None: not said).
    owner: bool | None = field(default=None, compare=False)

    @property
    def digest(self) -> str:
        return hashlib.sha256(f"{self.role}\x1f{self.text}".encode()).hexdigest()[:24]


@dataclass(frozen=True)
class Delta:
    """What a job has to extract, and what to remember afterwards."""

    new: list[Message]
    context: list[Message]
    history_hashes: list[str]

    @property
    def history_hash(self) -> str:
        return hashlib.sha256("".join(self.history_hashes).encode()).hexdigest()


def message_text(content: Any) -> str:
    """Text of a message ``content``: a string, or OpenClaw's list of blocks ({type: "text", text})."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            block.get("text", "")
            for block in content
            if isinstance(block, dict)
            and block.get("type") in (None, "text")
            and isinstance(block.get("text"), str)
        ]
        return "\n".join(part for part in parts if part)
    return ""


def clean_messages(
    raw: Sequence[dict[str, Any]], config: IngestConfig, mask: Callable[[str], Redacted] = redact
) -> list[Message]:
    """User/assistant text only: skipped roles, heartbeats and empty messages removed, and every
    secret masked (:func:`memory_cortex.redaction.redact`): no model ever sees one, nothing keeps one."""
    skip_roles = {role.lower() for role in config.skip_roles}
    cleaned = []
    for item in raw:
        role = str(item.get("role", "")).strip()
        # JSON may carry lone surrogates (\ud800): no UTF-8 store can hold them, so they become U+FFFD;
        # a NUL would cut the text short in SQLite's text functions and FTS.
        text = message_text(item.get("content")).encode("utf-8", "replace").decode("utf-8")
        text = text.replace("\x00", "").strip()
        if not text or role.lower() in skip_roles:
            continue
        if config.skip_heartbeat and any(marker in text for marker in config.heartbeat_markers):
            continue
        cleaned.append(
            Message(
                role=role,
                text=mask(text).text,
                name=_short_text(item.get("name")),
                timestamp=item.get("timestamp"),
                ref=_short_text(item.get("id")),
                owner=item.get("owner") if isinstance(item.get("owner"), bool) else None,
            )
        )
    return cleaned


def _short_text(value: Any, limit: int = 200) -> str | None:
    """A name or id as sent (a number becomes its text), without control characters; None if empty."""
    if isinstance(value, bool) or not isinstance(value, str | int):
        return None
    text = str(value)
    if not text.isprintable():
        text = "".join(c for c in text if c.isprintable())
    return text.strip()[:limit] or None


def journal_message(message: Any, mask: Callable[[str], Redacted] = redact) -> dict[str, Any]:
    """What the ingest journal keeps of one raw ``/ingest`` message: only what the worker reads
    (:func:`clean_messages`), every text in it masked with ``mask``. The content becomes its text
    (the worker reads no more of it: tool calls, other blocks and extra keys are dropped); name and
    id stay names, masked (a secret-shaped id would otherwise be kept)."""
    if not isinstance(message, dict):
        return {}
    entry: dict[str, Any] = {
        "role": message.get("role", ""),
        "content": mask(message_text(message.get("content"))).text,
    }
    for key in ("name", "id"):
        if (value := _short_text(message.get(key))) is not None:
            entry[key] = mask(value).text
    timestamp = message.get("timestamp")
    if isinstance(timestamp, str | int | float) and not isinstance(timestamp, bool):
        entry["timestamp"] = timestamp
    if isinstance(message.get("owner"), bool):
        entry["owner"] = message["owner"]
    return entry


class JournalMemo:
    """:func:`journal_message` that remembers the messages it has seen: OpenClaw posts a session's
    whole history after every turn, and all but the newest messages were journaled on the previous
    post (1,000 messages cost ~5 ms to reduce and mask, ~0.5 ms to look up). Only a message of the
    keys the journal keeps, with a text content, is remembered (an extra key or a tool call makes
    it new), by those keys' values and their types (an owner of 1 is not one of True); at most
    ``max_entries``, least recently seen dropped (``functools.lru_cache``: thread-safe)."""

    def __init__(self, mask: Callable[[str], Redacted] = redact, max_entries: int = 200_000) -> None:
        self._mask = mask
        self._plain = functools.lru_cache(maxsize=max_entries, typed=True)(self._plain_message)

    def messages(self, messages: Sequence[Any]) -> list[dict[str, Any]]:
        """Each of ``messages`` as the journal keeps it, in order."""
        return [self.message(message) for message in messages]

    def message(self, message: Any) -> dict[str, Any]:
        if not _is_plain(message):
            return journal_message(message, self._mask)
        return self._plain(*(message.get(key) for key in _PLAIN_KEYS))

    def _plain_message(self, *values: Any) -> dict[str, Any]:
        present = {key: value for key, value in zip(_PLAIN_KEYS, values, strict=True) if value is not None}
        return journal_message(present, self._mask)


# The request's fields besides its messages that the worker reads (store.ingest.IngestJob.from_row).
JOURNALED_FIELDS = ("occurred_at", "agent_id", "session_kind", "user_names")


def journal_body(body: dict[str, Any], journal: JournalMemo, mask: Callable[[str], Redacted] = redact) -> str:
    """What the ingest journal keeps of an ``/ingest`` request, as JSON: the fields the worker
    reads, the user's names and every message masked (``journal``: messages as the journal keeps
    them). A secret never reaches the disk, nor what the worker never reads."""
    kept = {key: body[key] for key in JOURNALED_FIELDS if key in body}
    if isinstance(kept.get("user_names"), list):
        kept["user_names"] = [
            mask(name).text if isinstance(name, str) else name for name in kept["user_names"]
        ]
    kept["messages"] = journal.messages(body.get("messages", []))
    return json.dumps(kept)  # ASCII: a lone surrogate stays an escape


# The keys the journal keeps of a message, in the order JournalMemo remembers them by.
_PLAIN_KEYS = ("role", "content", "name", "id", "timestamp", "owner")
_PLAIN_KEY_SET = frozenset(_PLAIN_KEYS)


def _is_plain(message: Any) -> bool:
    """A message of only the keys the journal keeps, a text content and no nested value."""
    return (
        isinstance(message, dict)
        and message.keys() <= _PLAIN_KEY_SET
        and isinstance(message.get("content"), str)
        and not any(isinstance(value, dict | list) for value in message.values())
    )


def step_end(messages: Sequence[Message], extracted_hashes: Sequence[str], limit: int) -> int | None:
    """Where a step of at most ``limit`` new messages ends: the index of the first new message
    beyond them (``messages[:end]`` holds ``limit``), or None when every new one fits in one step.
    New as in :func:`compute_delta`."""
    for count, index in enumerate(_new_indexes(messages, extracted_hashes), 1):
        if count > limit:
            return index
    return None


def _new_indexes(messages: Sequence[Message], extracted_hashes: Sequence[str]) -> Iterator[int]:
    """The index of each message not among ``extracted_hashes`` (a hash counts once per message
    it stands for: a message genuinely repeated is new the second time)."""
    remaining = Counter(extracted_hashes)
    for index, message in enumerate(messages):
        if remaining[message.digest] > 0:
            remaining[message.digest] -= 1
        else:
            yield index


def compute_delta(messages: list[Message], extracted_hashes: Sequence[str], context_size: int) -> Delta:
    """New messages (see module doc) plus up to ``context_size`` already-extracted ones before them."""
    indexes = list(_new_indexes(messages, extracted_hashes))
    new = [messages[index] for index in indexes]
    context: list[Message] = []
    if indexes and context_size > 0:
        context = messages[max(0, indexes[0] - context_size) : indexes[0]]
    return Delta(new=new, context=context, history_hashes=[m.digest for m in messages])

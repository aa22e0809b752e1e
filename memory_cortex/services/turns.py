"""From the new messages of an ``/ingest`` job to verbatim turn memories.

Why keep turns at all: extraction keeps what a model judged durable, and a small, slow, absent or
wrong model keeps little (the packaged Gemma 270M keeps almost nothing of a real conversation).
Every message a user and assistant exchanged is stored as said, beside the facts, so that every
search method — FTS, vectors with session context, the speaker query, session followers, the time
index — meets the conversation itself (issue 20).

A turn is stored as ``"Speaker: text"``, the form of the transcript turns these methods were built
on, with its session, channel, the time it was said and the client's message id as ``ref``. A long
message is split at paragraph, then sentence bounds into parts of at most ``turn_max_chars`` (one
embedding sees ~256 tokens); its parts keep the same speaker, time and ``ref`` and say which part
of how many they are in their metadata.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from ..config import IngestConfig
from ..models.rules import USER_ROLES
from ..records import NewMemory, Scope, stored_timestamp
from ..redaction import is_only_secrets
from .messages import Message

# The category of every turn; the Markdown mirror files turns under its "Conversation" heading and
# an import of that heading brings them back as turns.
TURN_CATEGORY = "conversation"

# Epoch numbers above this are milliseconds (OpenClaw sends Date.now()); below, seconds.
_EPOCH_MS_FROM = 100_000_000_000
_SENTENCE_END = re.compile(r"(?<=[.!?…。！？])\s+")


def turn_memories(
    messages: Sequence[Message],
    *,
    owners: Sequence[bool] | None = None,
    user_id: str,
    session_id: str | None,
    scope: Scope,
    received_at: str,
    occurred_at: str | None,
    job_id: int,
    context: int,
    config: IngestConfig,
) -> list[NewMemory]:
    """One memory per message (per part of a long one), in the order they were said.

    ``occurred_at``: the request's own time for the conversation (None: not given); a message's own
    ``timestamp`` wins over it, ``received_at`` (when the daemon got it) is the last resort.
    ``owners``: whether the owner wrote each message (``services.speakers``), kept on a human's turn
    as ``metadata.owner`` (a question about the user leaves other people's words out).
    ``context``: how many earlier turns of the session each turn is embedded after. ``scope``:
    the conversation's agent, visibility and channel, which every turn carries.
    """
    turns: list[NewMemory] = []
    for position, message in enumerate(messages):
        if is_only_secrets(message.text):
            continue  # nothing but "[secret removed]": nothing to keep
        speaker = message.name or config.turn_speakers.get(message.role) or message.role.title()
        when = message_time(message.timestamp) or occurred_at or received_at
        parts = split_turn(message.text, config.turn_max_chars)
        for index, part in enumerate(parts, start=1):
            # The message's digest: what the facts extracted from it find it by (derived_from).
            metadata: dict[str, Any] = {"ingest_job": job_id, "role": message.role, "digest": message.digest}
            if owners is not None and message.role.strip().lower() in USER_ROLES:
                metadata["owner"] = owners[position]
            if len(parts) > 1:
                metadata.update(part=index, parts=len(parts))
            turns.append(
                NewMemory(
                    user_id=user_id,
                    fact=f"{speaker}: {part}",
                    topic="",
                    importance=3,
                    category=TURN_CATEGORY,
                    source_session=session_id,
                    source_channel=scope.channel,
                    agent_id=scope.agent_id,
                    visibility=scope.visibility,
                    ref=message.ref,
                    metadata=metadata,
                    occurred_at=when,
                    embedding_context=context if session_id else 0,
                    layer="working",
                    kind="turn",
                )
            )
    return turns


def message_time(value: Any) -> str | None:
    """A message's ``timestamp`` (epoch milliseconds or seconds, or ISO 8601) as a stored timestamp;
    None when absent or not a time."""
    try:
        if isinstance(value, bool):
            return None
        if isinstance(value, int | float):
            seconds = value / 1000 if abs(value) >= _EPOCH_MS_FROM else value
            return stored_timestamp(datetime.fromtimestamp(seconds, tz=UTC))
        if isinstance(value, str) and value.strip():
            moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
            return stored_timestamp(moment if moment.tzinfo else moment.replace(tzinfo=UTC))
    except (ValueError, OverflowError, OSError):
        return None
    return None


def split_turn(text: str, max_chars: int) -> list[str]:
    """``text`` in parts of at most ``max_chars``: whole paragraphs where they fit, else sentences,
    else hard cuts at a space (a part never ends mid-word unless one word is longer than a part)."""
    if len(text) <= max_chars:
        return [text]
    pieces: list[str] = []
    for paragraph in (p.strip() for p in re.split(r"\n\s*\n", text)):
        if not paragraph:
            continue
        if len(paragraph) <= max_chars:
            pieces.append(paragraph)
            continue
        for sentence in _SENTENCE_END.split(paragraph):
            pieces.extend(_hard_cut(sentence, max_chars))
    parts: list[str] = []
    for piece in pieces:
        joiner = "\n\n" if "\n" in piece or (parts and "\n" in parts[-1]) else " "
        if parts and len(parts[-1]) + len(joiner) + len(piece) <= max_chars:
            parts[-1] = f"{parts[-1]}{joiner}{piece}"
        else:
            parts.append(piece)
    return parts


def _hard_cut(text: str, max_chars: int) -> list[str]:
    cuts: list[str] = []
    while len(text) > max_chars:
        at = text.rfind(" ", 0, max_chars + 1)
        at = at if at > max_chars // 2 else max_chars
        cuts.append(text[:at].rstrip())
        text = text[at:].lstrip()
    if text:
        cuts.append(text)
    return cuts

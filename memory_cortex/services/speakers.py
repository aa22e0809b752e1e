"""Who wrote each message of a conversation, as extraction must know it: the owner (the user the
memory belongs to), another named person, or someone unknown.

The rule, in order (documented in docs/concepts/ingestion.md):

1. a message's own ``owner`` flag decides when the client sent one (``true``: the owner wrote it;
   ``false``: someone else did) — OpenClaw's ``senderIsOwner``;
2. a message whose ``name`` is one of the request's ``user_names`` is the owner's;
3. a request that marks anyone (a flag or ``user_names``) marks everyone: a human message it does
   not mark is its ``name``'s, or, without a name, the owner's in a private session and nobody's
   known in a group;
4. a request that marks no one (every client before issue 33): in a private session every human
   message is the owner's; in a group session nobody is the owner — each named speaker is
   themself, and an unnamed one is unknown.

An assistant's words are never anybody's facts. An unknown speaker's statements are not kept as
facts (their turns still are): a wrong subject is worse than no fact.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from ..models.rules import USER_ROLES
from .messages import Message


@dataclass(frozen=True)
class Speaker:
    """Who wrote one message: ``owner``, else ``name`` (None with ``owner`` False: unknown);
    ``person``: a human wrote it (an assistant's words are no one's facts)."""

    name: str | None
    owner: bool
    person: bool

    @property
    def states_facts(self) -> bool:
        """Whether what it says may become facts: the owner's, or a named person's."""
        return self.person and (self.owner or self.name is not None)

    @property
    def voice(self) -> str | None:
        """Whom its "I" is, as the extractors take it: None for the owner, else the name."""
        return None if self.owner else self.name

    def label(self) -> str:
        """How a transcript shown to an LLM names it."""
        if not self.person:
            return "assistant"
        if self.owner:
            return f"{self.name} (the user)" if self.name else "the user"
        return self.name or "someone (unknown)"


def speakers_of(
    messages: Sequence[Message], *, group: bool, user_names: Collection[str] = ()
) -> list[Speaker]:
    """Each message's speaker (see the module's rule); ``user_names`` are compared without case."""
    names = {" ".join(name.split()).casefold() for name in user_names if name and name.strip()}
    marked = bool(names) or any(message.owner is True for message in messages)
    return [_speaker(message, group=group, names=names, marked=marked) for message in messages]


def _speaker(message: Message, *, group: bool, names: set[str], marked: bool) -> Speaker:
    person = message.role.strip().lower() in USER_ROLES
    if not person:
        return Speaker(message.name, False, False)
    if message.owner is not None:
        return Speaker(message.name, message.owner, True)
    if message.name is not None and " ".join(message.name.split()).casefold() in names:
        return Speaker(message.name, True, True)
    if message.name is not None and (marked or group):
        return Speaker(message.name, False, True)
    return Speaker(message.name, not group, True)


def other_speaker(sources: list[Message], said_by: dict[int, Speaker], method: str) -> str | None:
    """The one person other than the owner who said every message a rules fact was read from (the
    rules read a relation from the speaker: Melanie's "my husband Tom" is hers); None otherwise,
    and for an LLM's facts, whose relations are to the user (its prompt says so)."""
    if method != "rules":
        return None
    names = {
        speaker.name if speaker is not None and not speaker.owner else None
        for speaker in (said_by.get(id(message)) for message in sources)
    }
    return names.pop() if len(names) == 1 and None not in names else None

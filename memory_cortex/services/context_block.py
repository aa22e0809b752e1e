"""The ``/context`` prompt block: what an agent reads about the user before it answers.

The contract (docs/concepts/beliefs.md, "What /context gives"):

1. **A short profile first**: the user's own current facts — name, home, work, family, diet and
   allergies, key preferences (those the user asked to keep) — a few lines (``recall.profile_facts``, at most
   ``PROFILE_SHARE`` of the block). Only the owner's: another person's allergy is never here.
2. **Then what answers the question**: the facts the search found (the structured lookup puts a
   named subject's current fact first), then the conversation turns, newest first.
3. **When memories disagree, the newest comes first**: a fact replaced by a later statement is not
   in the block at all (it is superseded); facts of one subject and attribute that are all current
   (a pet, and a new one) come in the order they were said, newest first; turns too. Where the
   user's own words about what is asked came later than the facts of it ("got a new job at
   Workday", from which no fact was read), they follow the profile, before those facts, each of
   which says it was said before them.
4. **Nothing content-free, nobody else's**: a turn that says nothing ("Got it.", "Assistant: Nice
   change.") is left out; the assistant's own turn only when it shares a word with the question; a
   question about the user ("Where do I work?") gets no other person's facts or words.
5. An unrelated question gets the profile and nothing else (the search's similarity floor).

Every memory is one inert line (``recalled.note_line``) under the recalled-as-data label.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..models.attributes import ATTRIBUTES, RELATIONS
from ..records import MemoryRecord, speaker_label
from ..store.fts import STOP_WORDS
from .recalled import RECALLED_LABEL, note_line
from .search import SearchHit

CONTEXT_HEADER = "## Long-Term Memories"
CHARS_PER_TOKEN = 4  # the seed's estimate for the context cap
PROFILE_SHARE = 0.4  # the most of the block the profile may take

# Who the user is first: the order of a profile's lines, by attribute.
PROFILE_ORDER = (
    "name",
    "home",
    "employer",
    "job",
    "partner",
    *sorted({"son", "daughter", "child"}),
    "allergy",
    "health",
    "diet",
    "language",
    "pet",
    "age",
    "origin",
    "drink",
    "likes",
    "dislikes",
)
# A like or dislike is a key preference, for the profile, when it matters more than the passing
# "I love X" (importance 6): the user asked to keep it ("Remember that I love Thai food").
KEY_PREFERENCE = 7
# How many values of an attribute with several a profile shows.
PROFILE_VALUES = {"allergy": 3, "health": 2, "likes": 2, "pet": 2, "child": 2, "son": 2, "daughter": 2}

_WORD = re.compile(r"[^\W\d_]{3,}", re.UNICODE)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
_HAN = re.compile(r"[\u3400-\u9fff]")
# Words a turn can say without saying anything: greetings, thanks, agreement, filler.
_FILLER = frozenset(
    """hi hello hey thanks thank okay yes yeah yep nope sure great nice cool awesome good lovely wow
    sounds noted got congrats congratulations welcome sorry hear glad happy bye night morning evening
    change news love ooh aww haha lol amazing perfect indeed totally absolutely definitely right""".split()
)
CORRECTED_MARK = "(partly corrected by the line above)"
CORRECTED_MARK_SEVERAL = "(partly corrected by the lines above)"
# After a fact said before another current one of the same subject and attribute (one said in a group,
# the other in private: both current where they were said), when the attribute has one value at a time.
EARLIER_MARK = "(said earlier than the line above)"
# After a fact of the user that the question asks for, said before the user's later words on it that
# follow the profile (``lookup`` turns: an update the extraction may have missed).
BEFORE_LATER_WORDS_MARK = "(said before the user's words of {date} on it)"


@dataclass(frozen=True)
class ContextBlock:
    """The ``/context`` prompt block, the memories in it, and how many of its lines are the profile."""

    text: str
    memory_ids: tuple[int, ...]
    degraded: bool = False  # the search did not finish within the budget: no memories this time
    profile: int = 0


def profile_of(
    records: Sequence[MemoryRecord],
    limit: int,
    *,
    vital_importance: int = 9,
    vital: Callable[[MemoryRecord], bool] = lambda record: False,
) -> list[MemoryRecord]:
    """The profile's facts from the user's own current facts (``owner_profile``): by attribute in
    :data:`PROFILE_ORDER`, one value of an attribute that has one at a time (the newest said), a few
    of one that has several (of likes and dislikes, only the key ones: :data:`KEY_PREFERENCE`); then the facts without an attribute (written before attributes existed,
    or through POST /memories) that are identities or ``vital`` (an allergy written as a plain
    memory: beside the allergies, when of ``vital_importance`` or more)."""
    by_attribute: dict[str, list[MemoryRecord]] = {}
    loose: list[MemoryRecord] = []
    for record in records:
        if record.attribute is None:
            loose.append(record)
        else:
            by_attribute.setdefault(record.attribute, []).append(record)
    ranked: list[tuple[int, MemoryRecord]] = []
    order = (
        *PROFILE_ORDER,
        *sorted(a for a in by_attribute if a not in PROFILE_ORDER and a in RELATIONS.values()),
    )
    for rank, attribute in enumerate(order):
        found = sorted(by_attribute.get(attribute, []), key=lambda r: r.said_at, reverse=True)
        if attribute in ("likes", "dislikes"):
            found = [record for record in found if record.importance >= KEY_PREFERENCE]
        single = attribute in ATTRIBUTES and ATTRIBUTES[attribute].single
        ranked += [(rank, record) for record in found[: 1 if single else PROFILE_VALUES.get(attribute, 1)]]
    vital_rank = PROFILE_ORDER.index("allergy")
    ranked += [
        (vital_rank if r.importance >= vital_importance else len(order), r)
        for r in loose
        if r.category == "identity" or vital(r)
    ]
    ranked.sort(key=lambda pair: pair[0])  # stable: within a rank, as chosen above
    return [record for _, record in ranked[:limit]]


def about_the_question(hit: SearchHit, query: str, floor: float, keyword_floor: float) -> bool:
    """Whether a hit may go into the block: one the structured lookup asked for always; one only the
    vector side proposed with a cosine to the question of at least ``floor``; a keyword hit with at
    least ``keyword_floor`` (a word in common is weak evidence alone: "works" in "how compound interest
    works" and "I work in insurance") when the word is its own, not only of the turns it was
    indexed with (held to ``floor`` then); a keyword hit of a Chinese or Japanese question always,
    whose cosines MiniLM cannot be trusted with."""
    if "lookup" in hit.factors or floor <= 0:  # a floor of 0: nothing is left out
        return True
    cosine = hit.query_cosine if hit.query_cosine is not None else 0.0
    if _CJK.search(query):
        return hit.source != "vector" or cosine >= floor
    if hit.source == "vector" or not _shares_a_word(hit.memory.fact, query):
        return cosine >= floor  # a keyword only of the turns it was read with is no keyword of its own
    return cosine >= min(keyword_floor, floor)


def _shares_a_word(text: str, query: str) -> bool:
    """Whether ``text`` itself holds a content word of ``query`` (:func:`stem` alike)."""
    asked = {stem(w) for w in _WORD.findall(query.casefold()) if w not in STOP_WORDS}
    return bool(asked & {stem(w) for w in _WORD.findall(text.casefold()) if w not in STOP_WORDS})


def stem(word: str) -> str:
    """A word without its commonest English endings, so "camped" and "camping" meet ("camp")."""
    word = word.removesuffix("'s")
    for ending in ("ing", "ed", "es", "s"):
        if word.endswith(ending) and len(word) - len(ending) >= 3:
            return word[: -len(ending)]
    return word


def says_something(hit: SearchHit, query_words: set[str], assistant_label: str = "Assistant") -> bool:
    """Whether a turn carries content: two words beyond greetings and filler (four CJK characters),
    or one that is the question's ("Glad to be part of it" for "… being part of the festival?");
    the assistant's turn (labelled ``assistant_label``: no name of its own) also shares a word with
    the question (:func:`stem` alike), so its echoes of the user ("Congrats on the new job!") stay
    out. A person's words posted with the assistant's role (a name of their own) are read as
    anyone's. A fact always carries content."""
    memory = hit.memory
    if memory.kind != "turn":
        return True
    text = memory.fact
    label = speaker_label(text[:80])
    if label is not None and text[len(label) : len(label) + 1] == ":":
        text = text[len(label) + 1 :]
    words = {w for w in _WORD.findall(text.casefold()) if w not in STOP_WORDS and w not in _FILLER}
    # Shares a word with the question; in Chinese or Japanese two Han characters (kana are grammar).
    shared = bool({stem(word) for word in words} & {stem(word) for word in query_words}) or (
        len(set(_HAN.findall(text)) & query_words) >= 2
    )
    if memory.metadata.get("role") == "assistant" and label in (assistant_label, None):
        return shared and (len(words) >= 2 or len(_CJK.findall(text)) >= 4)
    # One word beyond filler is enough where it is the question's ("Glad to be part of it").
    return len(words) >= 2 or len(_CJK.findall(text)) >= 4 or (len(words) == 1 and shared)


def build_block(
    query: str,
    hits: Sequence[SearchHit],
    profile: Sequence[MemoryRecord],
    max_tokens: int,
    *,
    assistant_label: str = "Assistant",
) -> ContextBlock:
    """The block for ``query``: ``profile`` first (within :data:`PROFILE_SHARE` of the budget; an
    asked fact older than the user's later words on it is not profile but follows them); then the
    user's later words about what it asks (turns the lookup found newer than the asked
    facts: rule 3 of the module), newest first; then the hits that say something, each that fits
    in what is left (a line too long is skipped, a shorter one after it may fit), taken in search
    order: facts shown in that order (corrections before what they correct), turns newest first. An asked fact of the
    user said before those later words says so (:data:`BEFORE_LATER_WORDS_MARK`, with their date).
    ``assistant_label``: the speaker label of the assistant's own turns (``ingest.turn_speakers``)."""
    budget = max_tokens * CHARS_PER_TOKEN
    lines = [CONTEXT_HEADER, RECALLED_LABEL]
    used = len(CONTEXT_HEADER) + 1 + len(RECALLED_LABEL)
    included: list[int] = []
    later = sorted(
        (hit for hit in hits if hit.memory.kind == "turn" and "lookup" in hit.factors),
        key=lambda hit: (hit.memory.said_at, hit.memory.id),
        reverse=True,
    )
    later_lines = [(hit, fact_line(hit.memory, "")) for hit in later]
    # Room for the first of them is kept, so the profile never hides the newest words on the question.
    reserve = len(later_lines[0][1]) + 1 if later_lines else 0
    latest = later[0].memory.said_at if later else ""
    asked = {hit.memory.id for hit in hits if hit.memory.kind == "fact" and "lookup" in hit.factors}

    def older_mark(memory: MemoryRecord) -> str:
        older = memory.id in asked and memory.about_owner and memory.said_at < latest
        return f" {BEFORE_LATER_WORDS_MARK.format(date=latest[:10])}" if older else ""

    profile_budget = used + int(budget * PROFILE_SHARE)
    for record in profile:
        if older_mark(record):
            continue  # an asked fact older than the user's later words on it: after them, marked
        line = fact_line(record, "")
        if used + len(line) + 1 > min(budget - reserve, profile_budget):
            break
        lines.append(line)
        used += len(line) + 1
        included.append(record.id)
    profile_lines = len(included)
    for hit, line in later_lines:
        if used + len(line) + 1 > budget:
            break
        lines.append(line)
        used += len(line) + 1
        included.append(hit.memory.id)
    query_words = {w for w in _WORD.findall(query.casefold()) if w not in STOP_WORDS} | set(
        _HAN.findall(query)
    )
    shown = set(included)
    relevant = [
        hit
        for hit in hits
        if hit.memory.id not in shown
        and says_something(hit, query_words, assistant_label)
        and "someone_else" not in hit.factors
    ]
    facts = [hit for hit in relevant if hit.memory.kind != "turn"]
    turns = [hit for hit in relevant if hit.memory.kind == "turn"]
    chosen_turns: list[SearchHit] = []
    shown_profile = [record for record in profile if record.id in shown]
    entries: list[tuple[SearchHit, str]] = _earlier_marked(corrections_first(facts), shown_profile)
    for hit, mark in [*entries, *((turn, "") for turn in turns)]:
        if not mark or EARLIER_MARK in mark:
            mark = older_mark(hit.memory) or mark  # the later words' date says more
        line = fact_line(hit.memory, mark)
        if used + len(line) + 1 > budget:
            continue  # a shorter one further down may still fit
        used += len(line) + 1
        if hit.memory.kind == "turn":
            chosen_turns.append(hit)
        else:
            lines.append(line)
        included.append(hit.memory.id)
    # The turns that fit, newest said first: where two disagree, the later one is read first.
    for hit in sorted(chosen_turns, key=lambda turn: (turn.memory.said_at, turn.memory.id), reverse=True):
        lines.append(fact_line(hit.memory, ""))
    if not included:
        return ContextBlock("", ())
    return ContextBlock("\n".join(lines), tuple(included), profile=profile_lines)


def _earlier_marked(
    entries: Sequence[tuple[SearchHit, str]], profile: Sequence[MemoryRecord]
) -> list[tuple[SearchHit, str]]:
    """The facts, each said before a fact above it (or in the profile) of the same subject and
    single attribute marked as such: the search orders them newest first."""
    seen = {(r.subject_id, r.attribute) for r in profile if r.attribute is not None}
    marked = []
    for hit, mark in entries:
        memory = hit.memory
        key = (memory.subject_id, memory.attribute)
        if memory.attribute is not None and ATTRIBUTES.get(memory.attribute, None) is not None:
            if ATTRIBUTES[memory.attribute].single and key in seen and not mark:
                mark = f" {EARLIER_MARK}"
            seen.add(key)
        marked.append((hit, mark))
    return marked


def fact_line(memory: MemoryRecord, mark: str) -> str:
    """One memory as a line: "- [topic] fact", or "- date, Speaker: text" for a turn. A fact that
    names a value a later statement replaced says so ("(Acme: no longer current)")."""
    if memory.kind == "turn":
        return f"- {memory.about_time[:10]}, {note_line(memory.fact)}"
    stale = [v for v in memory.metadata.get("no_longer_current", []) if isinstance(v, str)]
    if stale and not mark:
        mark = f" ({note_line(', '.join(dict.fromkeys(stale)))}: no longer current)"
    if memory.topic.strip():
        return f"- [{note_line(memory.topic)}] {note_line(memory.fact)}{mark}"
    return f"- {note_line(memory.fact)}{mark}"


def corrections_first(hits: Sequence[SearchHit]) -> list[tuple[SearchHit, str]]:
    """``hits`` in their order, except that a correction of another hit of the list
    (``metadata.corrects``: it was stored beside a memory that holds other facts too, which stays
    live) comes right before the memory it corrects, which is marked (" (partly corrected by the
    line above)"; the mark is ours, outside the recalled text). A group takes the place of its
    first member, so a correction ranked high lifts the memory it corrects, and one ranked low is
    lifted by it. Chains hold: C corrects B corrects A gives C, B (marked), A (marked).
    """
    listed = {hit.memory.id: hit for hit in hits}
    corrected_by: dict[int, list[SearchHit]] = {}
    for hit in hits:
        target = hit.memory.metadata.get("corrects")
        if isinstance(target, int) and target in listed and target != hit.memory.id:
            corrected_by.setdefault(target, []).append(hit)

    def root(hit: SearchHit) -> SearchHit:
        seen = {hit.memory.id}
        target = hit.memory.metadata.get("corrects")
        while isinstance(target, int) and target in listed and target not in seen:
            hit = listed[target]
            seen.add(target)
            target = hit.memory.metadata.get("corrects")
        return hit

    ordered: list[tuple[SearchHit, str]] = []
    placed: set[int] = set()

    def place(hit: SearchHit) -> None:
        if hit.memory.id in placed:
            return
        placed.add(hit.memory.id)
        corrections = [c for c in corrected_by.get(hit.memory.id, []) if c.memory.id not in placed]
        for correction in corrections:
            place(correction)
        mark = ""
        if corrections:
            mark = f" {CORRECTED_MARK if len(corrections) == 1 else CORRECTED_MARK_SEVERAL}"
        ordered.append((hit, mark))

    for hit in hits:
        place(root(hit))
        place(hit)  # in a cycle (never written, but metadata is data) the root may not reach it
    return ordered

"""The structured lookup stage: a question that names a subject and an attribute ("Where does Priya
live?", "When is Marco's birthday?", "我住在哪里？") gets that subject's current fact of it first; and
wherever facts of one subject and attribute meet in the results, the one said last comes first.

How a question is read (rules only, no model):

- the attributes it asks for: a word of theirs (``models.attributes``: "live" → ``home``, "work" →
  ``employer`` and ``job``, "allergic" → ``allergy``; CJK words as substrings);
- whom it is about: the user's entities it names (their names, whole words), the entities the user
  is related to by a relation word it says ("my sister" → Ana, and "user's sister"), and the user
  themself when it speaks in the first person or names no entity at all.

The facts found join the candidates, and every fact of an asked subject and attribute scores ``×
(1 + belief_boost)`` — provided the question is about it at all: its cosine to the question as asked
is at least ``search.min_similarity`` or a keyword of the question is in it (a question that uses
"work" in passing, "how do I make this work?", does not pull the user's employer in).

A question that asks an attribute and names none of the user's other entities, no one whose words
are among the results ("Where does Amaka work?", Amaka known only by her turns in a group) and no
group — "Where
do I work?", "What diet does Maya follow?" (Maya being the user, whom the memory knows by no entity
of her own), "张伟做什么工作？" — is about the user, and is not answered by another person's facts or
words: in a group, Bob's "I'm a pharmacist" is close to it, and is Bob's. Such candidates score
``× SOMEONE_ELSE`` (the factor ``someone_else``), and ``/context`` leaves them out. A question that
only asks when something happened ("When did Maria go to the beach?") asks no attribute of a person,
and sets no one's words aside. A question about
a group ("Is anyone vegan?", "Who is allergic to nuts?", "What are we all allergic to?") is not;
"Who is my manager?" asks for one person, and is.
"""

from __future__ import annotations

import re
import sqlite3
import time
from dataclasses import dataclass

from ...config import SearchConfig
from ...models.attributes import ATTRIBUTES, CJK_RELATIONS, RELATIONS, is_single
from ...records import MemoryRecord, speaker_label
from ...store import entities as entity_sql
from ...store import memories as memory_sql
from ...store.db import Database
from ...store.vectors import VectorIndex
from ..index_calls import call_index
from .model import Candidate, Pool, SearchRequest

# The speaker labels of turns whose message had no name (ingest.turn_speakers' defaults).
ROLE_LABELS = frozenset({"User", "Assistant"})
# Most facts of the asked subjects and attributes the lookup adds to the pool.
MAX_LOOKUP_FACTS = 20
# How many of the user's later turns on an asked attribute the lookup marks at most (``_newer_words``).
NEWER_WORDS_AT_MOST = 2
# Of a subject's attribute with many values (likes, pets), how many facts the lookup boosts at most.
MANY_VALUES_BOOSTED = 3
# What another person's fact or turn scores for a question about an attribute of the user.
SOMEONE_ELSE = 0.25
# Attributes of plans and events, not of a person: a question asking only these is about no one.
_OF_EVENTS = frozenset({"date"})
_WORD = re.compile(r"[^\W\d_][\w'-]*|\d+", re.UNICODE)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")
_FIRST_PERSON = frozenset("i me my mine myself i'm i've i'd i'll im".split())
# Words that ask about several people, not the user alone.
_GROUP_WORDS = frozenset(
    "we us our ours everyone everybody anyone anybody someone somebody people guys folks all group team "
    "friends family kids children both others who whose".split()
)
_CJK_GROUP = ("我们", "我們", "大家", "谁", "誰", "みんな", "皆", "私たち", "僕たち", "誰か")
_CJK_FIRST_PERSON = ("我", "私", "僕", "俺", "わたし")
# "like" as a verb of liking ("What does Nate like?", "Does she like sushi?", "like to do"), not as
# "such as" or "similar to" ("cool places like Whispering Falls", "feel like", "look like").
_LIKES_ASKED = re.compile(
    r"(?<!\bfeel\s)(?<!\bfeels\s)(?<!\blook\s)(?<!\blooks\s)(?<!\bsound\s)(?<!\bsounds\s)(?<!\bseem\s)"
    r"(?<!\bseems\s)(?<!\bplaces\s)(?<!\bthings\s)(?<!\bstuff\s)(?<!\bsomething\s)(?<!\bjust\s)\blike\b"
    r"(?!\s+(?:a|an|the|this|that|these|those)\b)"
)
# "Who is my manager?", "Who's Ana's husband?", "陈静的老公是谁", "夫は誰": whom a relation names.
_ASKS_WHO_IS = re.compile(
    r"^(?:who|who's|whos)(?:\s+is|\s+was)?\s+(?:my|[\w'-]+(?:'s|’s|s'))\s|的[^，,的]{1,4}(?:是谁|是誰)|(?:の)?[^のは]{1,4}は誰"
)


@dataclass(frozen=True)
class Asked:
    """What a question asks for: attribute keys, whether about the user, and its words."""

    attributes: frozenset[str]
    first_person: bool
    words: frozenset[str]
    relations: frozenset[str]
    text: str
    about_several: bool = False  # "Is anyone vegan?", "大家": a question about a group


def asked(query: str) -> Asked:
    """Read a question's attributes, first person and relation words (see the module's docstring)."""
    text = query.casefold()
    words = {word.removesuffix("'s").removesuffix("’s") for word in _WORD.findall(text)}
    if "like" in words and not _LIKES_ASKED.search(text):
        words.discard("like")  # "places like Whispering Falls", "what does it feel like": no liking asked
    cjk = bool(_CJK.search(text))
    attributes = {
        attribute.key
        for attribute in ATTRIBUTES.values()
        if any((cue in text) if _CJK.search(cue) else (cue in words) for cue in attribute.asked_by)
    }
    relations = {RELATIONS[word] for word in words if word in RELATIONS}
    relations |= {relation for word, relation in CJK_RELATIONS.items() if cjk and word in query}
    first = bool(words & _FIRST_PERSON) or (cjk and any(word in query for word in _CJK_FIRST_PERSON))
    several = bool(words & _GROUP_WORDS) or (cjk and any(word in query for word in _CJK_GROUP))
    if several and not words & (_GROUP_WORDS - {"who", "whose"}) and _ASKS_WHO_IS.search(text):
        several = False  # "Who is Lukas's girlfriend?", "我的经理是谁？": one person's relation, not a group
    return Asked(frozenset(attributes), first, frozenset(words), frozenset(relations), text, several)


def names_in(text: str, names: dict[int, str]) -> list[int]:
    """The entities whose name the question says (whole words; CJK names as substrings)."""
    found = []
    for entity_id, name in names.items():
        key = name.casefold()
        if len(key) < 2:
            continue
        if _CJK.search(key):
            if key in text:
                found.append(entity_id)
        elif re.search(rf"(?<![\w]){re.escape(key)}(?![\w])", text):
            found.append(entity_id)
    return found


_CALENDAR_WORDS = frozenset(
    "Jan Feb Mar Apr May Jun Jul Aug Sep Sept Oct Nov Dec Mon Tue Tues Wed Thu Thur Thurs Fri Sat Sun".split()
)


def short_names_in(query: str, names: dict[int, str]) -> list[int]:
    """The names the question says in short: a capitalised word of three letters or more, not the
    question's first, that begins the name's first word ("Mel" for Melanie, "Gab" for Gabriel),
    the name itself aside."""
    # Not the first word ("How" is no "Howard"), nor a month's or a day's ("Mar 2024" is no Maria).
    words = set(re.findall(r"(?<=\s)[A-Z][a-z]{2,}\b", query)) - _CALENDAR_WORDS
    found = []
    for entity_id, name in names.items():
        first = name.split()[0] if name.split() else ""
        if any(first != word and first.startswith(word) for word in words):
            found.append(entity_id)
    return found


class LookupStage:
    """See the module's docstring. ``belief_boost`` 0 turns the boost off (the newest-first order of
    facts of one subject and attribute still holds)."""

    name = "lookup"

    def __init__(self, db: Database, index: VectorIndex | None, config: SearchConfig) -> None:
        self._db, self._index, self._config = db, index, config

    async def apply(self, request: SearchRequest, pool: Pool) -> None:
        question = asked(request.query)
        about_user = False
        if question.attributes and request.kinds in (None, ("fact",)) and self._config.belief_boost > 0:
            someone = await self._names_someone_else(request, pool, question)
            about_user = await self._add_asked_facts(request, pool, question, someone_named=someone)
            # "When did Maria go to the beach?" asks when something happened, not an attribute of hers:
            # the other speaker's words may hold the answer ("you went to the beach last month").
            if about_user and not someone and question.attributes - _OF_EVENTS:
                await self._others_aside(request, pool)
        await self._newest_first(request, pool)

    async def _names_someone_else(self, request: SearchRequest, pool: Pool, question: Asked) -> bool:
        """Whether the question names someone whose words are among the best candidates and who is
        not the user: one the memory knows only by their words in a group ("Where does Amaka
        work?"), or the other speaker of a conversation posted with the assistant's role; by their
        name or its short form ("Mel and her husband", :func:`short_names_in`)."""
        best = pool.top(max(self._config.prior_pool, request.limit))
        others = await self._db.read(lambda conn: entity_sql.said_by_others(conn, pool.ids(best)))
        speakers = dict(enumerate({name for name in others.values() if name}))
        return bool(names_in(question.text, speakers) or short_names_in(request.query, speakers))

    async def _add_asked_facts(
        self, request: SearchRequest, pool: Pool, question: Asked, *, someone_named: bool = False
    ) -> bool:
        """Add and boost the asked facts; returns whether the question is about the user alone (an
        attribute of theirs, in the first person, naming nobody else). ``someone_named``: the
        question names another person the memory knows by their words: the user's own facts are
        asked only in the first person."""
        started = time.perf_counter()
        only_user = about_user = False

        def read(conn: sqlite3.Connection) -> list[MemoryRecord]:
            nonlocal only_user, about_user
            names = entity_sql.subject_names(conn, request.user_id)
            named = names_in(question.text, names)
            subjects: list[int | None] = list(named)
            if question.relations:
                me = entity_sql.self_entity(conn, request.user_id)
                if me is not None:
                    subjects += entity_sql.related(conn, request.user_id, me.id, sorted(question.relations))
                subjects += [
                    entity_id
                    for entity_id, name in names.items()
                    if name.casefold().removeprefix("user's ") in question.relations
                ]
            if question.first_person or not (named or someone_named):
                subjects.append(None)
            about_user = None in subjects
            only_user = subjects == [None] and not question.about_several
            # An asked relation of the user is itself an attribute of theirs ("my sister's name").
            attributes = sorted(question.attributes | question.relations)
            records = entity_sql.facts_of_subjects(
                conn,
                request.user_id,
                list(dict.fromkeys(subjects)),
                attributes,
                request.audience,
                MAX_LOOKUP_FACTS,
            )
            return [record for record in records if record.layer in request.layers]

        records = await self._by_the_named_speaker(question, await self._db.read(read))
        found = [record.id for record in records]
        if not found:
            request.timed("lookup_facts", started)
            return only_user
        by_id = pool.by_id()
        missing = [
            memory_id for memory_id in found if memory_id not in by_id or by_id[memory_id].cosine is None
        ]
        if missing and request.query_vector is not None and self._index is not None:
            cosines = await call_index(
                self._index, self._index.cosines, request.user_id, request.query_vector, missing
            )
        else:
            cosines = {}
        words = {w for w in question.words if len(w) > 3}
        floor = self._config.min_similarity
        boost = 1.0 + self._config.belief_boost
        texts = {record.id: record.fact.casefold() for record in records}
        # Of an attribute with many values at once (likes, pets), only the few closest to the question:
        # boosting all of someone's thirty likes would push everything else out.
        asked_words = {w for w in _WORD.findall(question.text.casefold()) if len(w) >= 4}

        def said_in(record: MemoryRecord) -> bool:  # a value the question says ("Do I like jazz?")
            return bool(asked_words & set(_WORD.findall(texts[record.id])))

        many: dict[tuple[int | None, str | None], list[MemoryRecord]] = {}
        for record in records:
            if not is_single(record.attribute):
                many.setdefault((record.subject_id, record.attribute), []).append(record)
        past_the_few = {
            record.id
            for group in many.values()
            for record in sorted(group, key=lambda r: (-said_in(r), -cosine_of(by_id, cosines, r.id)))[
                MANY_VALUES_BOOSTED:
            ]
        }
        for memory_id in found:
            if memory_id in past_the_few:
                continue
            candidate = by_id.get(memory_id)
            if candidate is None:
                candidate = Candidate(
                    memory_id, cosine=cosines.get(memory_id), query_cosine=cosines.get(memory_id)
                )
                by_id[memory_id] = candidate
                pool.candidates.append(candidate)
            elif candidate.cosine is None and memory_id in cosines:
                candidate.cosine = candidate.query_cosine = cosines[memory_id]
            candidate.in_vector = candidate.in_vector or candidate.cosine is not None
            about = (candidate.query_cosine or 0.0) >= floor or candidate.in_fts
            keyword = any(word in texts.get(memory_id, "") for word in words)
            if about or keyword:
                candidate.factors["lookup"] = boost
        pool.rank()
        users = [record for record in records if record.about_owner]
        if about_user and any(
            (candidate := by_id.get(record.id)) is not None and "lookup" in candidate.factors
            for record in users
        ):
            await self._newer_words(request, pool, question, users)
        request.timed("lookup_facts", started)
        return only_user

    async def _by_the_named_speaker(self, question: Asked, records: list[MemoryRecord]) -> list[MemoryRecord]:
        """When the question names the speaker of some of the user's facts' source turns, only that
        speaker's facts of the user: two people's words kept as the user's (a conversation between
        two people posted as a private session, with names and no owner mark) are told apart by who
        said them ("What is Nate's favourite film?" is not answered by Joanna's)."""
        sources = {r.id: list(r.metadata.get("derived_from") or []) for r in records if r.about_owner}
        turn_ids = sorted({int(t) for ids in sources.values() for t in ids if isinstance(t, int)})
        if not turn_ids:
            return records
        turns = await self._db.read(lambda conn: memory_sql.get_many(conn, turn_ids))
        label = {tid: speaker_label(turn.fact[:80]) for tid, turn in turns.items()}
        # A role's own label ("User": a message without a name) says nobody in particular.
        said_by = {rid: {label.get(t) for t in ids} - {None, *ROLE_LABELS} for rid, ids in sources.items()}
        speakers = {name for names in said_by.values() for name in names if name}
        if len(speakers) < 2:
            return records  # one person's words (or unknown): nothing to tell apart
        named = {name for name in speakers if names_in(question.text, {0: name})}
        if not named:
            return records
        # A fact of no known speaker (written directly, or before turns were kept) stays.
        return [r for r in records if not r.about_owner or not said_by.get(r.id) or said_by[r.id] & named]

    async def _newer_words(
        self, request: SearchRequest, pool: Pool, question: Asked, facts: list[MemoryRecord]
    ) -> None:
        """When the question is about an attribute of the user (one of their ``facts`` of it was
        found about the question), the user's own turns among the best candidates said after all of
        those facts, that say a word asking for an asked attribute or saying its change ("got a new
        job at Workday" for "Where do I work?", "finally settled in Kumasi" for "Which city does
        Kwame live in?": ``Attribute.changed_by``), the :data:`NEWER_WORDS_AT_MOST` closest to the
        question, count as found
        by the lookup (factor ``lookup`` ×1: marked, not lifted): an update the extraction missed comes
        with the fact it updates, however far its meaning is from the question's."""
        since = max(fact.said_at for fact in facts)
        read_from = {mid for fact in facts for mid in fact.metadata.get("derived_from") or []}
        best = [c for c in pool.top(max(self._config.prior_pool, request.limit)) if "lookup" not in c.factors]
        if not best:
            return
        records = await self._db.read(lambda conn: memory_sql.get_many(conn, pool.ids(best)))
        cues = [cue for key in question.attributes for cue in ATTRIBUTES[key].changed_by]
        newer: list[Candidate] = []
        for candidate in best:
            turn = records.get(candidate.id)
            if (
                turn is None
                or turn.kind != "turn"
                or not owners_words(turn)
                or turn.said_at <= since
                or turn.id in read_from
            ):
                continue
            text = turn.fact.casefold()
            words = set(_WORD.findall(text))
            if any((cue in text) if _CJK.search(cue) else (cue in words) for cue in cues):
                newer.append(candidate)
        # Marked, not lifted: the closest few keep their rank, and /context reads them first.
        for candidate in sorted(newer, key=lambda c: -(c.query_cosine or 0.0))[:NEWER_WORDS_AT_MOST]:
            candidate.factors["lookup"] = 1.0

    async def _others_aside(self, request: SearchRequest, pool: Pool) -> None:
        """Another person's facts and words among the best score ``× SOMEONE_ELSE``."""
        best = pool.top(max(self._config.prior_pool, request.limit))
        others = await self._db.read(lambda conn: entity_sql.said_by_others(conn, pool.ids(best)))
        for candidate in best:
            if candidate.id in others:
                candidate.factors["someone_else"] = SOMEONE_ELSE
        if others:
            pool.rank()

    async def _newest_first(self, request: SearchRequest, pool: Pool) -> None:
        """Among the best candidates, facts of one subject and attribute in the order they were said,
        newest first: each older one scores no higher than the newer one above it."""
        best = pool.top(max(self._config.prior_pool, request.limit))
        keys = await self._db.read(lambda conn: entity_sql.belief_keys(conn, pool.ids(best)))
        groups: dict[tuple[int | None, str], list[Candidate]] = {}
        for candidate in best:
            if candidate.id in keys:
                subject, attribute, _ = keys[candidate.id]
                groups.setdefault((subject, attribute), []).append(candidate)
        changed = False
        for members in groups.values():
            if len(members) < 2:
                continue
            members.sort(key=lambda c: keys[c.id][2], reverse=True)  # newest said first
            top = max(pool.relevance(c) for c in members)
            for rank, candidate in enumerate(members):
                wanted = top * (1.0 - 0.01 * rank)
                current = pool.relevance(candidate)
                if current > 0 and abs(current - wanted) > 1e-12:
                    candidate.factors["said_order"] = (
                        candidate.factors.get("said_order", 1.0) * wanted / current
                    )
                    changed = True
        if changed:
            pool.rank()


def cosine_of(by_id: dict[int, Candidate], cosines: dict[int, float], memory_id: int) -> float:
    """A fact's cosine to the question: the pool's, else the one just read from the index; 0 unknown."""
    candidate = by_id.get(memory_id)
    known = candidate.query_cosine if candidate is not None else None
    return known if known is not None else cosines.get(memory_id, 0.0)


def owners_words(turn: MemoryRecord) -> bool:
    """Whether a turn is the user's own words: not the assistant's, nor a person marked not the owner."""
    return turn.metadata.get("role") != "assistant" and turn.metadata.get("owner") not in (False, 0, "false")

"""The rules extractor's shapes: a draft fact, the voice it is told in, a rule, a wrapper
("remember that…", "actually…"), a language's rule set, and the small text helpers every language uses."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from ..facts import Category

USER_ROLES = frozenset({"user", "human"})
"""Roles whose messages are about the speaker; the assistant's words are never facts about the user."""

MAX_FACTS_PER_MESSAGE = 8
"""A long ramble yields its few most important statements, not one fact per sentence."""

MAX_CLAUSE_CHARS = 300  # longer "statements" are pasted text or rambling, not a fact to quote


@dataclass(frozen=True)
class Draft:
    """A fact before validation; cheap to adjust when a wrapper ("remember", "actually") applies.

    ``attribute``/``value``: the attribute of its subject it states (``models.attributes``), if any.
    ``about``: whom it is about when not the voice it was said in ("my dad has diabetes": the
    user's father); None: the speaker.
    """

    fact: str
    topic: str
    category: Category
    importance: int
    attribute: str | None = None
    value: str | None = None
    about: About | None = None
    also: tuple[Draft, ...] = ()  # facts the same clause states besides this one (a job's employer)
    ends: bool = False  # it says ``value`` stopped holding ("Biscuit passed away"): see ExtractedFact.ends

    def at_least(self, floor: int, step: int = 0) -> Draft:
        return replace(self, importance=min(10, max(self.importance + step, floor)))

    def as_correction(self) -> Draft:
        return replace(self, category="correction", importance=max(self.importance, 7))

    def ending(self, attribute: str | None, value: str) -> Draft:
        """The same fact read as the end of ``value`` (of ``attribute``; None: whichever attribute
        of the subject holds that value, a pet's or a partner's name)."""
        return replace(self, attribute=attribute, value=value.strip(), ends=True)

    def stating(self, attribute: str | None, value: str | None) -> Draft:
        """The same fact read as ``attribute`` = ``value`` (nothing when either is empty)."""
        if not attribute or not value or not value.strip():
            return self
        return replace(self, attribute=attribute, value=value.strip())


@dataclass(frozen=True)
class About:
    """Someone or something a statement is about that is not its speaker: a name (None: known
    only by the relation), their relation to the speaker ("father", canonical), what they are, and
    whose relation it is (``of``: the speaker's name; None: the owner)."""

    name: str | None
    relation: str | None
    kind: str = "person"
    of: str | None = None

    @property
    def subject(self) -> str:
        """The fact's ``subject``: the name, else ``user's <relation>`` (``Bob's <relation>``)."""
        return self.name or f"{self.of or 'user'}'s {self.relation}"


@dataclass(frozen=True)
class Focus:
    """The one person a "he" or "she" in the next sentence can mean: how to name them in a sentence
    ("my brother Kerem"), the pronoun that fits them (None: either), their name if said, and how
    many sentences in a row have not referred to them."""

    phrase: str
    gender: str | None = None
    name: str | None = None
    quiet: int = 0


@dataclass(frozen=True)
class Voice:
    """How the speaker is named in each output language."""

    subject: str  # mid-sentence form: "the user"
    possessive: str  # "the user's"
    zh: str  # 用户
    ja: str  # ユーザー
    person: str | None = None  # whom "I" is, as a fact's subject: None for the owner, else their name

    @classmethod
    def of(cls, speaker: str) -> Voice:
        name = " ".join(speaker.split()) or "The user"
        if name.casefold() == "the user":
            return cls("the user", "the user's", "用户", "ユーザー")
        mid = name[0].lower() + name[1:] if name.lower().startswith("the ") else name
        return cls(mid, f"{mid}'s", name, name, name)

    def relative(self, about: About, said: str, cjk: str | None = None) -> Voice:
        """The voice of someone this speaker named by relation: "the user's dad", or "Mia (the
        user's daughter)" with their name; ``said`` is the relation word as said, ``cjk`` its form in
        a Chinese or Japanese sentence."""
        relative = f"{self.possessive} {said}"
        zh, ja = f"{self.zh}的{cjk or said}", f"{self.ja}の{cjk or said}"
        if about.name is None:
            return Voice(relative, f"{relative}'s", zh, ja, about.subject)
        name = about.name
        return Voice(f"{name} ({relative})", f"{name}'s", f"{name}（{zh}）", f"{name}（{ja}）", about.subject)

    @property
    def title(self) -> str:
        """The subject at the start of a sentence."""
        return cap(self.subject)


Handler = Callable[[re.Match[str], Voice], Draft | None]


@dataclass(frozen=True)
class Rule:
    pattern: re.Pattern[str]
    handler: Handler
    # The words a match can begin with (None: any). Only a fast pre-filter: the regex still decides,
    # but a clause is no longer tried against ~60 patterns that cannot match its first word.
    first_words: frozenset[str] | None = None


def first_words_of(words: str | None) -> frozenset[str] | None:
    """Space-separated lowercase words; a capital ``I`` stands for every form of "I" (I'm, I've…)."""
    if words is None:
        return None
    return frozenset(words.replace("I", "i i'm im i've ive i'd i'll").split())


@dataclass(frozen=True)
class Wrapper:
    """A prefix that changes what the rest of the clause means ("remember that", "actually")."""

    kind: str  # "now_on" | "correction" | "weak_correction" | "remember"
    marker: str
    body: str


def cap(text: str) -> str:
    return text[:1].upper() + text[1:]


# Closing punctuation to drop; "?" is not here: it is evidence of a question. (str.rstrip, not a regex: a
# trailing "[…]+$" pattern is retried at every position of the text.)
_EN_TRAILING = " \t\n\r,;:.!…~-"
CJK_TRAILING = _EN_TRAILING + "，；：。！～、"
SPACES = re.compile(r"\s+")


def en_sentence(text: str) -> str:
    return cap(SPACES.sub(" ", text).strip().rstrip(_EN_TRAILING)) + "."


def cjk_sentence(text: str) -> str:
    return SPACES.sub(" ", text).strip().rstrip(CJK_TRAILING) + "。"


@dataclass(frozen=True)
class Language:
    name: str
    rules: tuple[Rule, ...]
    lead_in: re.Pattern[str]
    question: re.Pattern[str]
    hedge: re.Pattern[str]
    conditional: re.Pattern[str]  # a clause that makes the rest of its sentence hypothetical
    clause_split: re.Pattern[str]
    now_on: re.Pattern[str]
    strong_correction: tuple[re.Pattern[str], ...]
    weak_correction: re.Pattern[str]
    contrast: re.Pattern[str]
    remember: tuple[re.Pattern[str], ...]
    render_now_on: Callable[[str, str, Voice], Draft | None]
    render_correction: Callable[[str, Voice], Draft | None]
    render_remember: Callable[[str, Voice], Draft | None]
    # A clause said about someone the speaker names by relation ("my dad has diabetes"): who, the
    # relation word as said, and the clause in the first person ("I have diabetes").
    relative: Callable[[str], tuple[About, str, str] | None] | None = None
    normalise: Callable[[str], str] | None = None  # a clause rephrased before the rules read it
    # Facts a statement states in passing besides its own ("my husband Marco says hi": who Marco is).
    in_passing: Callable[[str, Voice], list[Draft]] | None = None
    # A lead-in that says the statement holds from now ("Starting Monday, …", "As of today …"): once
    # stripped, the clause says "now" instead, so a change is still read as one.
    from_now: re.Pattern[str] | None = None
    # A correction whose body is a bare word ("Actually I should say pescatarian") as a clause to read
    # instead ("I'm pescatarian"), or None.
    restate: Callable[[str], str | None] | None = None
    # A sentence that only names what the one before introduced ("Her name is Pepper."): group "name".
    names_previous: re.Pattern[str] | None = None
    polite: re.Pattern[str] | None = None  # a request phrased as a question that is not one
    trail_off: re.Pattern[str] | None = None  # a closing aside ("…, by the way") that is not the fact
    # A value said against another ("…, not penicillin"): the clause corrects that one, announced or not.
    sets_right: re.Pattern[str] | None = None
    # A sentence as the rules read it before it is split ("Husband Dan." → "My husband Dan.").
    prepare: Callable[[str], str] | None = None
    # A sentence opening with "he"/"she" said of the one relative just named, rewritten to name them,
    # and whom the next sentence may mean: (sentence, focus after it); the flag: a sentence heard
    # from the assistant, read only for whom it names.
    refer: Callable[[str, Focus | None, bool], tuple[str, Focus | None]] | None = None
    # A clause's first part, read alone when the whole is no statement only because of what follows it
    # (a wish: "我老公张伟是厨师，周末想给他做顿饭" → "我老公张伟是厨师"); None when it has no such part.
    head: Callable[[str], str | None] | None = None
    # The relations a clause that states nothing still names ("Any gift ideas for my wife Elena?": Elena
    # is the partner); never one said in jest or as a wish.
    named_anyway: Callable[[str, Voice], list[Draft]] | None = None
    hedge_words: frozenset[str] = frozenset()  # single-word hedges: a set lookup beats a regex alternation
    rule_index: dict[str, tuple[Rule, ...]] = field(init=False, repr=False)
    any_word_rules: tuple[Rule, ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        words = set().union(*(rule.first_words for rule in self.rules if rule.first_words))
        index = {
            w: tuple(r for r in self.rules if r.first_words is None or w in r.first_words) for w in words
        }
        object.__setattr__(self, "rule_index", index)
        object.__setattr__(self, "any_word_rules", tuple(r for r in self.rules if r.first_words is None))

    def rules_for(self, clause: str) -> tuple[Rule, ...]:
        """The rules, in order, that could match a clause starting with its first word."""
        first = _FIRST_WORD.match(clause)
        if first is None:
            return self.any_word_rules
        return self.rule_index.get(first.group().lower(), self.any_word_rules)


_FIRST_WORD = re.compile(r"[^\W\d_]+(?:['-][^\W\d_]+)?")

"""The ``rules`` extractor: explicit first-person statements become facts, with no LLM at all.

Why it exists: it is the whole extractor when no model is configured (``llm.backend: rules``) and a
cheap, high-precision pass next to an LLM. It fires only on phrasings whose meaning is plain ("my
name is…", "I live in…", "remember that…", "from now on…", "我叫…", "私の名前は…") and prefers
missing a fact to inventing one: questions, hypotheticals, hedges, jokes, role-play, quoted or
pasted text, code blocks and assistant turns yield nothing. Everything is regex, compiled once at
import; a message costs tens of microseconds.

How the text is rewritten (stored memories are read back later by people and by LLMs, so each
fact must stand alone):

- English is rewritten in the third person about ``speaker``: "my sister's name is Ana" →
  "The user's sister's name is Ana."; "I prefer tea" → "The user prefers tea."
- Chinese keeps the user's wording with 我 → 用户 ("我叫小明" → "用户叫小明。"); Japanese keeps it
  with 私/僕/俺 → ユーザー ("私の名前はアナです" → "ユーザーの名前はアナです。"). A sentence with no
  subject gets one ("東京に住んでいます" → "ユーザーは東京に住んでいます。").
- Instructions to the assistant are reported, not repeated: "From now on, the user wants answers
  in French.", "用户要求：以后用中文回答。", "ユーザーの希望：これからは日本語で答えてください。"
- A correction that is not itself a known statement keeps the corrected text: "The user
  corrected: it's Ana, not Anna.", "用户更正：…", "ユーザーの訂正：…". One that is ("actually, I
  live in Lisbon") becomes that statement with category ``correction``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from pydantic import ValidationError

from ..redaction import has_secret
from .facts import Category, ExtractedFact

__all__ = ["MAX_FACTS_PER_MESSAGE", "USER_ROLES", "extract_facts"]

USER_ROLES = frozenset({"user", "human"})
"""Roles whose messages are about the speaker; the assistant's words are never facts about the user."""

MAX_FACTS_PER_MESSAGE = 5
"""A long ramble yields its few most important statements, not one fact per sentence."""

_MAX_CLAUSE_CHARS = 300  # longer "statements" are pasted text or rambling, not a fact to quote


# ---------------------------------------------------------------------------------------------
# Shapes


@dataclass(frozen=True)
class _Draft:
    """A fact before validation; cheap to adjust when a wrapper ("remember", "actually") applies."""

    fact: str
    topic: str
    category: Category
    importance: int

    def at_least(self, floor: int, step: int = 0) -> _Draft:
        return replace(self, importance=min(10, max(self.importance + step, floor)))

    def as_correction(self) -> _Draft:
        return replace(self, category="correction", importance=max(self.importance, 7))


@dataclass(frozen=True)
class _Voice:
    """How the speaker is named in each output language."""

    subject: str  # mid-sentence form: "the user"
    possessive: str  # "the user's"
    zh: str  # 用户
    ja: str  # ユーザー

    @classmethod
    def of(cls, speaker: str) -> _Voice:
        name = " ".join(speaker.split()) or "The user"
        if name.casefold() == "the user":
            return cls("the user", "the user's", "用户", "ユーザー")
        mid = name[0].lower() + name[1:] if name.lower().startswith("the ") else name
        return cls(mid, f"{mid}'s", name, name)

    @property
    def title(self) -> str:
        """The subject at the start of a sentence."""
        return _cap(self.subject)


Handler = Callable[[re.Match[str], _Voice], _Draft | None]


@dataclass(frozen=True)
class _Rule:
    pattern: re.Pattern[str]
    handler: Handler
    # The words a match can begin with (None: any). Only a fast pre-filter: the regex still decides,
    # but a clause is no longer tried against ~60 patterns that cannot match its first word.
    first_words: frozenset[str] | None = None


def _first_words(words: str | None) -> frozenset[str] | None:
    """Space-separated lowercase words; a capital ``I`` stands for every form of "I" (I'm, I've…)."""
    if words is None:
        return None
    return frozenset(words.replace("I", "i i'm im i've ive i'd i'll").split())


@dataclass(frozen=True)
class _Wrapper:
    """A prefix that changes what the rest of the clause means ("remember that", "actually")."""

    kind: str  # "now_on" | "correction" | "weak_correction" | "remember"
    marker: str
    body: str


# ---------------------------------------------------------------------------------------------
# Small text helpers


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


# Closing punctuation to drop; "?" is not here: it is evidence of a question. (str.rstrip, not a regex: a
# trailing "[…]+$" pattern is retried at every position of the text.)
_EN_TRAILING = " \t\n\r,;:.!…~-"
_CJK_TRAILING = _EN_TRAILING + "，；：。！～、"
_SPACES = re.compile(r"\s+")


def _en_sentence(text: str) -> str:
    return _cap(_SPACES.sub(" ", text).strip().rstrip(_EN_TRAILING)) + "."


def _cjk_sentence(text: str) -> str:
    return _SPACES.sub(" ", text).strip().rstrip(_CJK_TRAILING) + "。"


# ---------------------------------------------------------------------------------------------
# English: first person → third person


_TOKEN = re.compile(r"[^\W_]+(?:'[^\W_]+)*|\s+|.", re.DOTALL)
_ADVERBS = frozenset(
    "always usually never also really just still often sometimes mostly only actually generally "
    "normally currently now already definitely absolutely truly primarily mainly even totally "
    "honestly personally strongly much typically rarely seldom occasionally genuinely".split()
)
_VERB_THIRD_PERSON = {
    "am": "is",
    "have": "has",
    "do": "does",
    "go": "goes",
    "be": "is",
    "don't": "doesn't",
    "dont": "doesn't",
    "haven't": "hasn't",
}
_VERB_UNCHANGED = frozenset(
    "can could will would shall should must might may did was were had used gotta got went made "
    "bought saw said told took knew thought came began grew wrote ran left found felt kept met paid "
    "sent spent built taught chose forgot gave lost won sold became broke brought caught drank drove "
    "ate fell fought flew froze hid held lay led lent lit meant quit rode rang rose shook shot shut "
    "sang sank sat slept spoke stood stole stuck swam threw understood woke wore not".split()
)
_FIRST_PERSON = frozenset({"i", "i'm", "im", "i've", "i'd", "i'll", "me", "my", "mine"})
_ASSISTANT_WORDS = {
    "you": "the assistant",
    "your": "the assistant's",
    "yours": "the assistant's",
    "yourself": "itself",
    "you're": "the assistant is",
    "you'll": "the assistant will",
    "you've": "the assistant has",
    "you'd": "the assistant would",
    "u": "the assistant",
}


def _third_person_verb(word: str) -> str:
    """'prefer' → 'prefers'; past tenses, modals and contractions stay as they are."""
    low = word.lower()
    if low in _VERB_THIRD_PERSON:
        return _VERB_THIRD_PERSON[low]
    if (
        low in _VERB_UNCHANGED
        or "'" in low
        or not low.isalpha()
        or (low.endswith("ed") and not low.endswith("eed"))
    ):
        return word
    if low.endswith(("s", "sh", "ch", "x", "z", "o")):
        return word + "es"
    if len(low) > 1 and low.endswith("y") and low[-2] not in "aeiou":
        return word[:-1] + "ies"
    return word + "s"


def _third_person(text: str, voice: _Voice, *, to_assistant: bool = False, named: bool = False) -> str:
    """Rewrite I/me/my/mine/myself (and the verb after "I") about the speaker.

    With ``to_assistant`` the user was addressing the assistant ("always answer me in French"), so
    you/your name the assistant too. "we/our" are left alone: they name more than the speaker. Once
    the speaker is named, later mentions become they/them/their ("…renew their passport"), as a
    person would write it; ``named`` says the caller's text already named them.
    """
    out: list[str] = []
    conjugate_next = False
    previous = ""
    for token in _TOKEN.findall(text):
        if token.isspace():
            out.append(token)
            continue
        low = token.lower()
        if not token[0].isalnum():
            conjugate_next = False
            previous = ""
            out.append(token)
            continue
        if conjugate_next:
            if low in _ADVERBS:
                out.append(token)
            else:
                out.append(_third_person_verb(token))
                conjugate_next = False
            previous = low
            continue
        replacement: str | None = None
        if low == "i":
            replacement = voice.subject if not named else "they"
            conjugate_next = previous not in ("and", "or", "nor") and not named  # "Ana and I live": plural
            if named:
                out.append(replacement)
                previous = low
                continue
        elif low in ("i'm", "im"):
            replacement = f"{voice.subject} is" if not named else "they are"
        elif low == "i've":
            replacement = f"{voice.subject} has" if not named else "they have"
        elif low == "i'd":
            replacement = f"{voice.subject} would" if not named else "they would"
        elif low == "i'll":
            replacement = f"{voice.subject} will" if not named else "they will"
        elif low == "me":
            replacement = voice.subject if not named else "them"
        elif low == "my":
            replacement = voice.possessive if not named else "their"
        elif low == "mine":
            replacement = voice.possessive if not named else "theirs"
        elif low == "myself":
            replacement = "themself"
        elif to_assistant and low in _ASSISTANT_WORDS:
            replacement = _ASSISTANT_WORDS[low]
        if replacement is not None and low in _FIRST_PERSON:
            named = True
        out.append(replacement if replacement is not None else token)
        previous = low
    return "".join(out)


def _en_fact(text: str, voice: _Voice, *, to_assistant: bool = False) -> str:
    return _en_sentence(_third_person(text, voice, to_assistant=to_assistant))


_WE_START = re.compile(
    r"^(?:(?P<have>we've|we\s+have)|(?P<are>we're|we\s+are)|(?P<will>we'll|we\s+will)|we)\b", re.IGNORECASE
)


def _team_fact(text: str, voice: _Voice) -> str:
    """'we decided to use Postgres' → 'The user and their team decided to use Postgres.'"""
    m = _WE_START.match(text)
    if m is None:
        return _en_fact(text, voice)
    aux = " have" if m["have"] else " are" if m["are"] else " will" if m["will"] else ""
    rest = re.sub(r"\bour\b", "their", text[m.end() :], flags=re.IGNORECASE)
    rest = re.sub(r"\bus\b", "them", rest, flags=re.IGNORECASE)
    return _en_sentence(f"{voice.subject} and their team{aux}{_third_person(rest, voice, named=True)}")


_TOPIC_WORD = re.compile(r"[^\W_][\w'+#.-]*")
_TOPIC_SKIP = (
    frozenset(
        "a an the to some my your our their his her its very really any all both more most much many "
        "lots lot of being it".split()
    )
    | _ADVERBS
)
_TOPIC_DROP = frozenset("my your our their his her its the a an".split())
_TOPIC_STOP = frozenset(
    "over than and or but when because in on at for with from by as instead rather so that which who "
    "if during after before since every each especially named called whose where while to not is are "
    "was were too also until unless better more less whenever of e.g eg i.e ie etc".split()
)


def _topic_from(phrase: str, fallback: str) -> str:
    """A 1-3 word label from the head of a phrase: 'tea over coffee' → 'tea'."""
    words: list[str] = []
    for word in _TOPIC_WORD.findall(phrase.lower()):
        word = word.strip(".'")
        if not words and word in _TOPIC_SKIP:
            continue
        if word in _TOPIC_STOP or len(words) == 3:
            break
        if word and word not in _TOPIC_DROP:
            words.append(word)
    topic = " ".join(words)
    return topic if re.search(r"[^\W\d_]", topic) else fallback


_DEICTIC = re.compile(
    r"^(?:it(?!\s+when\b)|it's|that|that's|this|these|those|them|they|you|your|yours|u|ur|so|too|what|how|which|"
    r"there|here|one|both|either|neither|none|nothing|everything|anything|something|not|"
    r"all\s+of\s+(?:it|them|these|those)|the\s+(?:idea|way|answer|suggestion|response|first|second|"
    r"third|last|other|former|latter|one|same|rest|new one|old one))\b",
    re.IGNORECASE,
)


def _is_content(phrase: str | None) -> bool:
    """False for objects that point back into the chat ("I like it", "I love that idea")."""
    if phrase is None:
        return True
    phrase = phrase.strip()
    return bool(phrase) and bool(re.search(r"[^\W\d_]|\d", phrase)) and not _DEICTIC.match(phrase)


# ---------------------------------------------------------------------------------------------
# English rules


def _en(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


_IM = r"(?:i'm|i\s+am|im)"
_IHAVE = r"(?:i\s+have|i've\s+got|i\s+have\s+got|ive\s+got)"
_ADV = (
    r"(?:(?:really|truly|absolutely|also|generally|usually|definitely|always|mostly|actually|"
    r"personally|strongly|much|still|just|honestly|totally|genuinely|do|currently|now|only)\s+)*"
)
_RELATION_WORDS = (
    "sister sisters brother brothers sibling siblings mother mom mum mommy mummy mama father dad daddy papa "
    "parent parents wife husband partner spouse fiance fiancé fiancee fiancée girlfriend boyfriend son sons "
    "daughter daughters kid kids child children baby twin friend friends bestie roommate flatmate housemate "
    "boss manager colleague colleagues coworker coworkers co-worker cofounder co-founder teammate mentor "
    "teacher doctor therapist dentist cat cats dog dogs pet pets puppy kitten parrot hamster rabbit horse "
    "cousin cousins aunt uncle niece nephew grandma grandmother grandpa grandfather grandparents "
    "granddaughter grandson stepmother stepfather stepson stepdaughter stepbrother stepsister neighbor "
    "neighbour landlord family in-laws mother-in-law father-in-law"
).split()
_RELATIONS = frozenset(_RELATION_WORDS)
_REL = "(?:" + "|".join(sorted(map(re.escape, _RELATION_WORDS), key=len, reverse=True)) + ")"
_REL_PHRASE = rf"(?:(?:best|older|younger|big|little|baby|twin|eldest|oldest|youngest|step)\s+)?{_REL}"

_NAME_WORD = r"[^\W\d_][\w'.-]*"
_NAME_TAIL = (
    r"(?:\s+(?:and|but|or|btw|by\s+the\s+way|though|so|from\s+now\s+on|please|instead|"
    r"for\s+short)\b.*|\s*\(.*\))?$"
)
_ANY_NAME = (
    rf"(?P<name>{_NAME_WORD}(?:\s+(?!(?:and|but|or|btw|by|though|so|from|please)\b){_NAME_WORD}){{0,3}})"
)
_CAP_NAME = r"(?P<name>(?-i:[A-Z][\w'.-]*)(?:\s+(?-i:[A-Z][\w'.-]*)){0,2})"
_NOT_NAMES = frozenset(
    "not irrelevant unimportant secret private a an the also too hard long short weird spelled spelt "
    "pronounced actually still now what unknown none nothing same different kind very so literally on "
    "in written sorry fine good great done back here there okay ok sure ready confused lost out just "
    "happy glad tired busy this that it he she they who which today tomorrow yesterday everything "
    "something mine always never new free home available afk brb".split()
)


def _name_ok(name: str) -> bool:
    return name.split()[0].lower() not in _NOT_NAMES


def _name_is(m: re.Match[str], voice: _Voice) -> _Draft | None:
    if not _name_ok(m["name"]):
        return None
    kind = m["kind"] or ""
    return _Draft(
        f"{_cap(voice.possessive)} {kind}name is {m['name']}.", f"{kind.strip()} name".strip(), "identity", 10
    )


def _called(m: re.Match[str], voice: _Voice) -> _Draft | None:
    if not _name_ok(m["name"]):
        return None
    return _Draft(f"{voice.title} wants to be called {m['name']}.", "preferred name", "identity", 9)


def _goes_by(m: re.Match[str], voice: _Voice) -> _Draft | None:
    if not _name_ok(m["name"]):
        return None
    return _Draft(f"{voice.title} goes by {m['name']}.", "preferred name", "identity", 9)


def _im_name(m: re.Match[str], voice: _Voice) -> _Draft | None:
    """'Hi, I'm Ana': a name or a nationality; either way an identity, kept verbatim."""
    if not _name_ok(m["name"]):
        return None
    return _Draft(f"{voice.title} is {m['name']}.", "identity", "identity", 8)


def _say(category: Category, importance: int, topic: str | None = None, *, obj: str = "obj") -> Handler:
    """The common case: the whole clause, in the third person; ``obj`` must be real content."""

    def handler(m: re.Match[str], voice: _Voice) -> _Draft | None:
        phrase = m.groupdict().get(obj)
        if not _is_content(phrase):
            return None
        label = topic or _topic_from(phrase or "", category)
        return _Draft(_en_fact(m.string, voice), label, category, importance)

    return handler


def _named_relation(m: re.Match[str], voice: _Voice) -> _Draft | None:
    """'Ana is my sister' → 'Ana is the user's sister.'"""
    if not _name_ok(m["name"]):
        return None
    return _Draft(_en_fact(m.string, voice), _topic_from(m["rel"], "family"), "relationship", 7)


def _named_favourite(m: re.Match[str], voice: _Voice) -> _Draft | None:
    if not _name_ok(m["name"]):
        return None
    return _Draft(_en_fact(m.string, voice), f"favourite {_topic_from(m['thing'], 'thing')}", "preference", 6)


_POSSESSIVE_FORBIDDEN = frozenset(
    "i you he she it they we me him her them us says said thinks thought told and or but that which who "
    "if when because also really is are was were has have had will would do does did not just".split()
)
_POSSESSIVE_DISCOURSE = frozenset(
    "question questions point guess concern concerns issue issues problem problems answer bad pleasure "
    "understanding assumption thought thoughts idea ideas suggestion request hope fear worry mistake "
    "fault turn apologies apology opinion take head brain mind heart day week life code output error "
    "errors result results log logs response message prompt test tests build screen internet connection "
    "wifi battery reply feeling feelings gut bet sense impression".split()
)
_IDENTITY_NOUNS = frozenset(
    "name birthday age email e-mail address job occupation profession pronouns nationality hometown "
    "gender timezone username handle phone number title role religion height weight diet citizenship "
    "language tongue website blog github".split()
)
_PROJECT_NOUNS = frozenset(
    "project projects repo repository stack deadline server database db app website site company startup "
    "team framework codebase branch api budget domain product client customer launch release backend "
    "frontend deployment pipeline service".split()
)
_GOAL_NOUNS = frozenset(
    "goal goals plan plans dream dreams aim priority priorities ambition resolution".split()
)
_TRANSIENT = re.compile(
    r"^(?:not|so|too|very|kind\s+of|sort\s+of|a\s+bit|a\s+little|still|already|broken|slow|down|failing|"
    r"fine|ok|okay|good|bad|great|done|ready|here|there|gone|missing|wrong|right|correct|different|same|"
    r"better|worse|empty|full|dead|crashing|stuck|loading|off|open|closed|weird|strange|messed|acting|"
    r"a\s+mess|killing|bugged|buggy|lagging|this|that|it|what|where|who|how|why|when|which)\b",
    re.IGNORECASE,
)


def _my_x_is_y(m: re.Match[str], voice: _Voice) -> _Draft | None:
    """'my sister's name is Ana', 'my favourite colour is green', 'my email is a@b.c'."""
    words = [w.removesuffix("'s") for w in m["x"].lower().split()]
    if any(w in _POSSESSIVE_FORBIDDEN for w in words) or words[-1] in _POSSESSIVE_DISCOURSE:
        return None
    if not _is_content(m["y"]) or _TRANSIENT.match(m["y"].strip()):
        return None
    x = m["x"].lower()
    relation = next((w for w in words if w in _RELATIONS), None)
    if relation is not None:
        category: Category = "relationship"
        importance, topic = 7, x.split("'s")[0].strip() if "'s" in x else relation
    elif any(w in ("favourite", "favorite", "fave", "preferred", "hobby", "hobbies") for w in words):
        category, importance, topic = "preference", 6, x
    elif words[-1] in _IDENTITY_NOUNS:
        category, importance, topic = "identity", 8, x
    elif words[-1] in _PROJECT_NOUNS:
        category, importance, topic = "project_state", 6, x
    elif words[-1] in _GOAL_NOUNS:
        category, importance, topic = "fact", 6, x
    else:
        category, importance, topic = "fact", 5, x
    if category in ("relationship", "fact", "project_state") and m["y"].split()[0].lower().endswith("ing"):
        return None  # "my cat is sleeping", "my project is going well": a moment, not a fact
    return _Draft(_en_fact(m.string, voice), topic, category, importance)


_INSTRUCTION_VERBS = (
    r"(?:answer|reply|respond|write|speak|talk|use|call|add|include|give|show|ask|format|put|keep|mention|"
    r"say|start|end|sign|run|test|check|explain|cite|provide|double-check|confirm|assume|suggest|"
    r"recommend|comment|document|type|spell|list|summari[sz]e|translate|refer|address|make|be|respect)"
)


def _always_never(m: re.Match[str], voice: _Voice) -> _Draft | None:
    body = _third_person(m["body"], voice, to_assistant=True, named=True)
    adverb = "never" if m["adv"].lower() in ("never", "ever") else "always"
    return _Draft(
        _en_sentence(f"{voice.title} wants the assistant to {adverb} {body}"),
        _topic_from(m["body"], "instructions"),
        "preference",
        8,
    )


def _age(m: re.Match[str], voice: _Voice) -> _Draft | None:
    return _Draft(f"{voice.title} is {m['age']} years old.", "age", "identity", 8)


_TRIVIAL_TASK = re.compile(
    r"^(?:go|leave|sleep|run|rest|eat|wait|pee|wake\s+up|head\s+out|log\s+off|sign\s+off|hurry|"
    r"get\s+going|think|focus|stop|relax|breathe|calm\s+down)\b(?:\s+\w+)?$|"
    r"^(?:know|understand|ask|say|tell\s+you|admit|confess|clarify|mention|be\s+honest|think|"
    r"apologi[sz]e|point\s+out|figure\s+out\s+what|see\s+(?:if|what|how))\b",
    re.IGNORECASE,
)


def _todo(m: re.Match[str], voice: _Voice) -> _Draft | None:
    task = m["task"].strip()
    if len(task.split()) < 2 or _TRIVIAL_TASK.match(task) or not _is_content(task):
        return None
    fact = _team_fact(m.string, voice) if m["who"].lower() == "we" else _en_fact(m.string, voice)
    return _Draft(fact, _topic_from(task, "todo"), "todo", 6)


def _remind_me(m: re.Match[str], voice: _Voice) -> _Draft | None:
    task = m["task"].strip()
    if re.match(r"(?:what|how|where|who|why|which|whether|when\s+we|of\s+what|about\s+what)\b", task, re.I):
        return None  # "remind me what we said": a request to recall, not a reminder
    body = _third_person(task, voice, named=True)
    topic = _topic_from(re.sub(r"^(?:to|that|about|of)\s+", "", task, flags=re.I), "reminder")
    return _Draft(_en_sentence(f"{voice.title} wants to be reminded {body}"), topic, "todo", 7)


def _todo_note(m: re.Match[str], voice: _Voice) -> _Draft | None:
    task = m["task"].strip()
    if not _is_content(task):
        return None
    return _Draft(
        _en_sentence(f"To-do for {voice.subject}: {_third_person(task, voice, named=True)}"),
        _topic_from(task, "todo"),
        "todo",
        6,
    )


def _dont_let_me_forget(m: re.Match[str], voice: _Voice) -> _Draft | None:
    task = m["task"].strip()
    if not _is_content(task):
        return None
    prep = (m["prep"] or "about").lower()
    return _Draft(
        _en_sentence(f"{voice.title} wants to be reminded {prep} {_third_person(task, voice, named=True)}"),
        _topic_from(task, "reminder"),
        "todo",
        7,
    )


def _decision(m: re.Match[str], voice: _Voice) -> _Draft | None:
    if not _is_content(m["obj"]):
        return None
    team = m.string.lower().startswith("we")
    fact = _team_fact(m.string, voice) if team else _en_fact(m.string, voice)
    obj = re.sub(r"^(?:to|on|that|for|against|not\s+to)\s+", "", m["obj"].strip(), flags=re.I)
    return _Draft(fact, _topic_from(obj, "decision"), "decision", 7)


def _lets(m: re.Match[str], voice: _Voice) -> _Draft | None:
    if not _is_content(m["obj"]):
        return None
    fact = _en_sentence(
        f"{voice.title} decided to {m['verb'].lower()} {_third_person(m['obj'], voice, named=True)}"
    )
    return _Draft(fact, _topic_from(m["obj"], "decision"), "decision", 6)


_EN_RULES: tuple[_Rule, ...] = tuple(
    _Rule(_en(pattern), handler, _first_words(starts))
    for starts, pattern, handler in (
        # --- names
        (
            "my",
            rf"^my\s+(?P<kind>(?:first|full|last|real|given|legal|middle|preferred)\s+|nick)?name(?:'s|\s+is)\s+"
            rf"{_ANY_NAME}{_NAME_TAIL}",
            _name_is,
        ),
        (
            "you please just pls call",
            rf"^(?:(?:you\s+can|you\s+may|please|just|pls)\s+)*call\s+me\s+{_CAP_NAME}{_NAME_TAIL}",
            _called,
        ),
        (
            "I people everyone my friends",
            rf"^(?:i\s+go\s+by|{_IM}\s+called|people\s+call\s+me|everyone\s+calls\s+me|(?:my\s+)?friends\s+"
            rf"call\s+me)\s+{_CAP_NAME}{_NAME_TAIL}",
            _goes_by,
        ),
        (
            "I",
            rf"^{_IM}\s+(?:happily\s+)?(?:married|engaged)\s+to\s+(?P<obj>.+)$",
            _say("relationship", 8, "partner"),
        ),
        ("I", rf"^{_IM}\s+(?:currently\s+)?dating\s+(?P<obj>.+)$", _say("relationship", 7, "partner")),
        # --- health, diet: high importance, checked before the generic "I'm a…"
        (
            "I",
            rf"^{_IM}\s+(?:very\s+|severely\s+|highly\s+|extremely\s+|deathly\s+|quite\s+|mildly\s+|also\s+)?"
            r"allergic\s+to\s+(?P<obj>.+)$",
            _say("identity", 9, "allergy"),
        ),
        (
            "I",
            rf"^{_IHAVE}\s+(?:a\s+|an\s+)?(?:severe\s+|serious\s+|mild\s+|bad\s+)?(?P<obj>[\w -]{{1,40}}?)\s+"
            r"allerg(?:y|ies)$",
            _say("identity", 9, "allergy"),
        ),
        ("I", rf"^{_IHAVE}\s+(?:an?\s+)?allerg(?:y|ies)\s+to\s+(?P<obj>.+)$", _say("identity", 9, "allergy")),
        (
            "I",
            r"^i\s+(?:can't|cannot|can\s+not)\s+(?:eat|drink|have|tolerate|digest)\s+(?P<obj>.+)$",
            _say("identity", 8, "diet"),
        ),
        (
            "I",
            r"^i\s+(?:don't|do\s+not|dont|never)\s+(?:eat|drink)\s+(?P<obj>.+)$",
            _say("preference", 7, "diet"),
        ),
        (
            "I",
            rf"^{_IM}\s+(?:a\s+|an\s+)?(?:strict\s+|also\s+)?(?P<obj>vegan|vegetarian|pescatarian|pescetarian|"
            r"teetotal(?:er|ler)?|lactose[- ]intolerant|gluten[- ]intolerant|celiac|coeliac|diabetic|halal|"
            r"kosher)\b.*$",
            _say("identity", 8, "diet"),
        ),
        (
            "I",
            rf"^{_IHAVE}\s+(?P<obj>(?:type\s+[12]\s+)?diabetes|asthma|adhd|epilepsy|dyslexia|autism|"
            r"c[oe]?eliac\s+disease|crohn's(?:\s+disease)?|migraines|a\s+heart\s+condition|high\s+blood\s+"
            r"pressure|hypertension|tinnitus|colou?r\s*blindness|arthritis)\b.*$",
            _say("identity", 8, "health"),
        ),
        (
            "I",
            rf"^{_IM}\s+(?P<obj>colou?r[- ]?blind|deaf|hard\s+of\s+hearing|blind|autistic|dyslexic|epileptic|"
            r"pregnant|left[- ]handed|right[- ]handed|disabled|neurodivergent|married|single|divorced|widowed|"
            r"retired|unemployed|self[- ]employed)\b.*$",
            _say("identity", 8),
        ),
        # --- relationships
        (None, rf"^{_CAP_NAME}\s+is\s+my\s+(?P<rel>{_REL_PHRASE})\b.*$", _named_relation),
        (
            None,
            rf"^{_CAP_NAME}\s+is\s+my\s+(?:absolute\s+|all-time\s+)?favou?rite\s+(?P<thing>.+)$",
            _named_favourite,
        ),
        (
            "I",
            rf"^{_IHAVE}\s+(?:a|an|one|two|three|four|five|six|seven|eight|nine|ten|\d+)\s+(?:[\w-]+\s+){{0,2}}?"
            rf"(?P<obj>{_REL})\b.*$",
            _say("relationship", 7),
        ),
        # --- "my X is Y"
        (
            "my",
            r"^my\s+(?P<x>[^\W\d_][\w-]*(?:'s)?(?:\s+[^\W\d_][\w-]*(?:'s)?){0,3}?)\s+(?:is|are)\s+(?P<y>.+)$",
            _my_x_is_y,
        ),
        # --- standing instructions to the assistant
        (
            "please always never",
            rf"^(?:please\s+)?(?P<adv>always|never)\s+(?P<body>{_INSTRUCTION_VERBS}\b.*)$",
            _always_never,
        ),
        (
            "please don't do",
            r"^(?:please\s+)?(?:don't|do\s+not)\s+(?P<adv>ever)\s+(?P<body>.+)$",
            _always_never,
        ),
        # --- identity: who, where, what work
        ("I", rf"^{_IM}\s+(?P<age>\d{{1,3}})(?:\s*(?:years?|yrs?|y/?o)(?:\s+old)?)?$", _age),
        (
            "I",
            rf"^{_IM}\s+(?:also\s+|currently\s+|now\s+|actually\s+)?(?:a|an)\s+(?!(?:bit|little|lot|tad|fan|big|"
            r"huge|massive|great|fool|idiot|moron|mess|genius|liar|real|total|complete|quick|few|sec|second|"
            r"minute|moment)\b)(?P<obj>[\w-].*)$",
            _say("identity", 8),
        ),
        (
            "I",
            rf"^{_IM}\s+(?:the\s+)?(?P<obj>(?:ceo|cto|cfo|coo|founder|co-?founder|owner|tech\s+lead|lead\s+"
            r"developer|maintainer|author|creator|director|president|vp)\b.*)$",
            _say("identity", 8),
        ),
        (
            "I",
            r"^i\s+(?:currently\s+|now\s+|also\s+|still\s+)?(?:live|reside)\s+(?:in|at|near|on|outside(?:\s+of)?)"
            r"\s+(?P<obj>.+)$",
            _say("identity", 8, "home"),
        ),
        (
            "I",
            rf"^{_IM}\s+(?:currently\s+|now\s+)?(?:living|based|located|residing)\s+(?:in|at|near|out\s+of|"
            r"outside)\s+(?P<obj>.+)$",
            _say("identity", 8, "home"),
        ),
        (
            "I",
            r"^i(?:'ve|\s+have)?\s+(?:just\s+|recently\s+|finally\s+)?(?:moved|relocated)\s+(?:back\s+)?to\s+"
            r"(?P<obj>.+)$",
            _say("identity", 8, "home"),
        ),
        (
            "I",
            rf"^(?:{_IM}|i\s+come)\s+(?:originally\s+)?from\s+(?!(?:here|there|work|home|the\s+future|the\s+past|"
            r"school|now|scratch)\b)(?P<obj>.+)$",
            _say("identity", 8, "origin"),
        ),
        ("I", r"^i\s+was\s+born\s+(?:and\s+raised\s+)?in\s+(?P<obj>.+)$", _say("identity", 8, "birthplace")),
        ("I", r"^i\s+was\s+born\s+on\s+(?P<obj>.+)$", _say("identity", 8, "birthday")),
        ("I", r"^i\s+grew\s+up\s+in\s+(?P<obj>.+)$", _say("identity", 7, "origin")),
        ("I", r"^i\s+(?:currently\s+|now\s+|also\s+)?work\s+as\s+(?P<obj>.+)$", _say("identity", 8, "job")),
        (
            "I",
            r"^i\s+(?:currently\s+|now\s+|also\s+)?work\s+(?:at|for)\s+(?P<obj>.+)$",
            _say("identity", 8, "employer"),
        ),
        (
            "I",
            rf"^{_IM}\s+(?:currently\s+|now\s+)?(?:employed|working)\s+(?:as|at|for)\s+(?P<obj>.+)$",
            _say("identity", 8, "job"),
        ),
        (
            "I",
            rf"^(?:i\s+(?:currently\s+)?study|{_IM}\s+(?:currently\s+)?studying|{_IM}\s+majoring\s+in|i\s+teach)"
            r"\s+(?P<obj>.+)$",
            _say("identity", 7, "studies"),
        ),
        (
            "I",
            rf"^(?:i\s+(?:currently\s+|mainly\s+|mostly\s+)?work|{_IM}\s+(?:currently\s+|now\s+)?working)\s+on\s+"
            r"(?P<obj>.+)$",
            _say("project_state", 6),
        ),
        (
            "I",
            r"^i\s+(?:run|own|founded|co-?founded|started)\s+(?:a|an|my\s+own)\s+(?P<obj>.+)$",
            _say("identity", 7),
        ),
        # --- preferences
        (
            "I",
            rf"^i\s+{_ADV}(?:prefer|like|love|adore|enjoy|hate|dislike|detest|loathe|despise)\s+(?P<obj>.+)$",
            _say("preference", 6),
        ),
        (
            "I",
            rf"^i\s+{_ADV}(?:don't|do\s+not|dont)\s+(?:really\s+)?(?:like|love|enjoy|care\s+for)\s+(?P<obj>.+)$",
            _say("preference", 6),
        ),
        (
            "I",
            rf"^i\s+{_ADV}(?:don't|do\s+not|dont)\s+(?:ever\s+)?(?:want|use)\s+(?P<obj>.+)$",
            _say("preference", 7),
        ),
        ("I", r"^i\s+(?:can't|cannot)\s+stand\s+(?P<obj>.+)$", _say("preference", 6)),
        (
            "I",
            r"^(?:i'd|i\s+would)\s+(?:much\s+)?(?:rather|prefer)\s+(?!not\s+(?:say|talk|discuss|answer|share|"
            r"go\s+into)\b)(?P<obj>.+)$",
            _say("preference", 6),
        ),
        (
            "I",
            rf"^{_IM}\s+(?:not\s+)?(?:a\s+)?(?:big\s+|huge\s+|massive\s+|great\s+|real\s+)?fan\s+of\s+(?P<obj>.+)$",
            _say("preference", 6),
        ),
        ("I", rf"^{_IM}\s+(?:really\s+)?into\s+(?P<obj>.+)$", _say("preference", 6)),
        (
            "I",
            rf"^i\s+{_ADV}(?:use|code\s+in|program\s+in|write\s+code\s+in|work\s+with|develop\s+(?:in|with))\s+"
            r"(?P<obj>.+)$",
            _say("preference", 5),
        ),
        # --- skills
        (
            "I",
            r"^i\s+(?:can|know\s+how\s+to)\s+(?P<obj>(?:speak|code|program|play|cook|drive|swim|sing|dance|draw|"
            r"paint|ski|snowboard|surf|knit|sew|juggle|fly|touch[- ]type|read\s+music)\b.*)$",
            _say("skill", 6),
        ),
        ("I", r"^i\s+know\s+how\s+to\s+(?P<obj>.+)$", _say("skill", 6)),
        ("I", r"^i\s+(?:also\s+|fluently\s+)?speak\s+(?P<obj>.+)$", _say("skill", 7, "languages")),
        (
            "I",
            rf"^{_IM}\s+(?:very\s+|pretty\s+|quite\s+|really\s+|fairly\s+|reasonably\s+)?(?:good|great|skilled|"
            r"proficient|fluent|experienced|an\s+expert|expert|competent|comfortable|decent|familiar)\s+"
            r"(?:at|in|with)\s+(?P<obj>.+)$",
            _say("skill", 6),
        ),
        (
            "I",
            rf"^{_IM}\s+(?:not\s+(?:very\s+)?good|bad|terrible|hopeless|new)\s+(?:at|with|to)\s+(?P<obj>.+)$",
            _say("skill", 5),
        ),
        (
            "I",
            r"^(?:i\s+have|i've\s+got|i've\s+had|i\s+have\s+had)\s+\S+(?:\s+\S+)?\s+years?\s+of\s+experience\s+"
            r"(?:in|with|as|doing)\s+(?P<obj>.+)$",
            _say("skill", 7),
        ),
        # --- decisions
        (
            "I we we've",
            r"^(?:i|we)(?:'ve|\s+have)?\s+(?:just\s+|finally\s+|already\s+|now\s+)?(?:decided|chosen|chose|settled"
            r"\s+on|opted|committed)\b\s*(?P<obj>.+)$",
            _decision,
        ),
        ("I we're we", rf"^(?:{_IM}|we're|we\s+are)\s+going\s+(?:to\s+go\s+)?with\s+(?P<obj>.+)$", _decision),
        (
            "let's",
            r"^let's\s+(?P<verb>go\s+with|use|stick\s+with|stay\s+with|switch\s+to|settle\s+on)\s+(?P<obj>.+)$",
            _lets,
        ),
        (
            "I",
            r"^i(?:'ll|\s+will)\s+(?:go\s+with|stick\s+with|switch\s+to)\s+(?P<obj>.+)$",
            _say("decision", 6),
        ),
        # --- to-dos
        (
            "I we we've",
            r"^(?P<who>i|we)(?:(?:'ve|\s+have)\s+got\s+to|\s+(?:still\s+|really\s+|also\s+|definitely\s+|urgently\s+)?"
            r"(?:need\s+to|have\s+to|must|gotta|got\s+to|should\s+remember\s+to))\s+(?P<task>.+)$",
            _todo,
        ),
        ("please remind", r"^(?:please\s+)?remind\s+me\s+(?P<task>.+)$", _remind_me),
        (
            "todo to-do to note reminder",
            r"^(?:todo|to-do|to\s+do|note\s+to\s+self|reminder)\s*[:\-–]\s*(?P<task>.+)$",
            _todo_note,
        ),
        (
            "please don't do",
            r"^(?:please\s+)?(?:don't|do\s+not)\s+let\s+me\s+forget\s+(?:(?P<prep>to|about|that)\s+)?(?P<task>.+)$",
            _dont_let_me_forget,
        ),
        # --- last: a bare "I'm Ana" / "I'm Brazilian" (capitalised, nothing after it)
        ("I", rf"^{_IM}\s+{_CAP_NAME}$", _im_name),
    )
)

# --- English wrappers


_EN_NOW_ON = _en(
    r"^(?P<marker>from\s+now\s+on|going\s+forward|moving\s+forward|from\s+here\s+on(?:\s+out)?|from\s+this\s+"
    r"point\s+(?:on|forward)|in\s+(?:the\s+)?future|henceforth|from\s+today\s+on|starting\s+(?:now|today)|"
    r"next\s+time|for\s+(?:all\s+)?future\s+(?:chats|conversations|sessions|answers|replies|responses))\b"
    r"[\s,:;\-]*(?P<body>.*)$"
)
_EN_STRONG_CORRECTION = (
    _en(
        r"^(?P<marker>correction|to\s+correct\s+(?:myself|that)|let\s+me\s+correct\s+(?:myself|that)|i\s+"
        r"misspoke|i\s+made\s+a\s+mistake|i\s+was\s+wrong|i\s+stand\s+corrected|(?:(?:no|nope|sorry|oops|wait|"
        r"actually)[\s,!.]+)?(?:that's|that\s+is|that\s+was|thats)\s+(?:wrong|not\s+right|incorrect|not\s+"
        r"correct|not\s+true|a\s+mistake)|(?:sorry|oops)[\s,!.]+(?:i\s+)?(?:typo|mistyped|misspelled|meant\s+"
        r"to\s+say))\b[\s,:;.!\-]*(?P<body>.*)$"
    ),
    _en(r"^(?P<marker>(?:(?:no|nope|sorry|oops|wait|actually)[\s,!.]+)*)(?P<body>i\s+meant\b.*)$"),
)
_EN_WEAK_CORRECTION = _en(
    r"^(?P<marker>actually|no|nope|wait|oops|sorry|not\s+quite|not\s+exactly)(?:\b[\s,:;.!\-]+|$)(?P<body>.*)$"
)
_EN_CONTRAST = _en(r",\s*not\s+\S|\binstead\s+of\b|\brather\s+than\b")
_EN_REMEMBER = _en(
    r"^(?:(?:please|pls|and|also|oh|hey|btw|can\s+you|could\s+you|would\s+you)[\s,]+)*"
    r"(?P<marker>remember|memori[sz]e|don't\s+forget|do\s+not\s+forget|never\s+forget|keep\s+in\s+mind|"
    r"bear\s+in\s+mind|note\s+that|please\s+note|make\s+a\s+note(?:\s+that)?|take\s+note(?:\s+that)?|"
    r"save\s+(?:this|that)(?:\s+to\s+memory)?|store\s+this)\b(?:\s+(?:this|that|the\s+following|it))?"
    r"(?:\s*[:,\-]\s*|\s+|$)(?:that\s+)?(?P<body>.*)$"
)
_EN_CLAUSEY = _en(
    r"\b(?:is|are|am|was|were|has|have|had|will|would|can|could|should|must|do|does|did|need|needs|likes?|"
    r"loves?|prefers?|wants?|uses?|lives?|works?|i'm|i've|i'll|i'd|it's|that's|he's|she's|they're|we're)\b"
)
_EN_WH_START = _en(r"^(?:what|when|where|who|why|how|which|whether)\b")


def _en_now_on(marker: str, body: str, voice: _Voice) -> _Draft | None:
    marker = _cap(_SPACES.sub(" ", marker.strip()).lower())
    body = re.sub(
        r"^(?:(?:please|pls|kindly)\s+|(?:i\s+want\s+you\s+to|i'd\s+like\s+you\s+to|i\s+would\s+like\s+"
        r"you\s+to|you\s+should|you\s+must|you\s+need\s+to|you\s+have\s+to|you\s+will|you'll|make\s+"
        r"sure\s+(?:to|you))\s+)+",
        "",
        body.strip(),
        flags=re.IGNORECASE,
    )
    if not _is_content(body) or len(body) < 2:
        return None
    topic = _topic_from(body, "instructions")
    if re.match(r"^(?:i|i'll|i'm|i've|i'd|we|we'll|we're)\b", body, re.IGNORECASE):
        fact = _team_fact(body, voice) if body.lower().startswith("we") else _third_person(body, voice)
        subject_stripped = re.sub(
            r"^\S+\s+(?:(?:will|am|is|are|going\s+to|want\s+to|plan\s+to)\s+)*", "", body
        )
        return _Draft(_en_sentence(f"{marker}, {fact}"), _topic_from(subject_stripped, "plan"), "decision", 8)
    language = re.match(
        r"^(?:answer|reply|respond|write|speak|talk|communicate|chat)(?:\s+to\s+me)?(?:\s+only)?\s+"
        r"in\s+(?P<lang>.+)$",
        body,
        re.IGNORECASE,
    )
    if language:
        return _Draft(
            _en_sentence(f"{marker}, {voice.subject} wants answers in {language['lang']}"),
            "answer language",
            "preference",
            8,
        )
    negative = re.match(r"^(?:don't|do\s+not|never|stop)\s+(?P<rest>.+)$", body, re.IGNORECASE)
    if negative:
        rest = _third_person(negative["rest"], voice, to_assistant=True, named=True)
        return _Draft(
            _en_sentence(f"{marker}, {voice.subject} wants the assistant not to {rest}"),
            _topic_from(negative["rest"], "instructions"),
            "preference",
            8,
        )
    if re.match(
        r"^(?:the|a|an|this|that|it|there|our|their|his|her|everything|all|any|he|she|they)\b",
        body,
        re.IGNORECASE,
    ):
        return _Draft(_en_fact(f"{marker}, {body}", voice), topic, "fact", 7)
    rest = _third_person(body, voice, to_assistant=True, named=True)
    return _Draft(
        _en_sentence(f"{marker}, {voice.subject} wants the assistant to {rest}"), topic, "preference", 8
    )


def _en_correction(body: str, voice: _Voice) -> _Draft | None:
    if not _is_content(body) and not body.lower().startswith("it's"):
        return None
    meant = re.match(r"^i\s+meant\s+(?:to\s+say\s+)?(?P<rest>.*)$", body, re.IGNORECASE)
    if meant and not _is_content(meant["rest"]):
        return None  # "I meant it": sincerity, not a correction
    if re.match(r"^(?:i|i'm|i've|i'd|i'll|my|me)\b", body, re.IGNORECASE):
        return _Draft(_en_fact(body, voice), "correction", "correction", 7)
    return _Draft(
        _en_sentence(f"{voice.title} corrected: {_third_person(body, voice, named=True)}"),
        "correction",
        "correction",
        7,
    )


def _en_remember(body: str, voice: _Voice) -> _Draft | None:
    task = re.match(r"^to\s+(?P<task>.+)$", body, re.IGNORECASE)
    if task:
        if len(task["task"].split()) < 2 and not _is_content(task["task"]):
            return None
        return _Draft(
            _en_sentence(
                f"{voice.title} asked to remember to {_third_person(task['task'], voice, named=True)}"
            ),
            _topic_from(task["task"], "todo"),
            "todo",
            6,
        )
    if _EN_WH_START.match(body) or len(body.split()) < 3 or not _EN_CLAUSEY.search(body):
        return None  # "remember when…", "remember that file": no statement to keep
    if not _is_content(body) and not body.lower().startswith(("it's", "that's")):
        return None
    to_assistant = bool(re.match(r"^(?:you|your)\b", body, re.IGNORECASE))
    return _Draft(_en_fact(body, voice, to_assistant=to_assistant), _topic_from(body, "note"), "fact", 7)


# ---------------------------------------------------------------------------------------------
# Chinese


_ZH_I = re.compile(r"我(?![们們])")
_ZH_YOU = re.compile(r"[你您](?![们們])")
_ZH_NAME = r"(?P<name>[^\s，。！？、,.!?；;：:（）()“”\"'「」]{1,20}?)"
_ZH_PARTICLE = r"(?:吧|啊|呀|哦|喔|哈|呢|就好了?|就行了?|就可以了?)?"
_ZH_RELATION = (
    "妹妹|姐姐|哥哥|弟弟|妈妈|媽媽|母亲|母親|爸爸|父亲|父親|老婆|妻子|太太|老公|丈夫|先生|儿子|兒子|女儿|女兒|"
    "男朋友|女朋友|男友|女友|朋友|老板|老闆|同事|奶奶|爷爷|爺爺|外婆|外公|孩子|猫|貓|狗|宠物|寵物|室友|上司"
)
_ZH_IDENTITY_NOUNS = re.compile(
    r"名字|生日|年龄|年齡|工作|职业|職業|邮箱|郵箱|电子邮件|電子郵件|电话|電話|手机号|手機號|地址|国籍|國籍|"
    r"母语|母語|专业|專業|星座|血型|家乡|家鄉|老家"
)
_ZH_PROJECT_NOUNS = re.compile(
    r"项目|項目|公司|网站|網站|服务器|伺服器|数据库|數據庫|仓库|倉庫|团队|團隊|产品|產品"
)
_ZH_DISCOURSE = re.compile(r"^(?:问题|問題|意思|错|錯|天|看法|想法|建议|建議|回答|感觉|感覺|猜测|猜測)$")
_ZH_DEICTIC = re.compile(r"^(?:你|您|这|這|那|它|他们|他們|吗|嗎|什么|什麼|啥|谁|誰|哪|死)")


def _zh_third(text: str, voice: _Voice, *, to_assistant: bool = False) -> str:
    text = _ZH_I.sub(voice.zh, text)
    return _ZH_YOU.sub("助手", text) if to_assistant else text


def _zh_say(category: Category, importance: int, topic: str | None = None, *, obj: str = "obj") -> Handler:
    def handler(m: re.Match[str], voice: _Voice) -> _Draft | None:
        phrase = (m.groupdict().get(obj) or "").strip()
        if obj in m.groupdict() and (not phrase or _ZH_DEICTIC.match(phrase)):
            return None
        return _Draft(_cjk_sentence(_zh_third(m.string, voice)), topic or phrase[:12], category, importance)

    return handler


def _zh_name(m: re.Match[str], voice: _Voice) -> _Draft | None:
    if _ZH_DEICTIC.match(m["name"]):
        return None
    return _Draft(f"{voice.zh}的名字是{m['name']}。", "名字", "identity", 10)


def _zh_called(m: re.Match[str], voice: _Voice) -> _Draft | None:
    if _ZH_DEICTIC.match(m["name"]):
        return None
    return _Draft(f"{voice.zh}叫{m['name']}。", "名字", "identity", 10)


def _zh_call_me(m: re.Match[str], voice: _Voice) -> _Draft | None:
    if _ZH_DEICTIC.match(m["name"]):
        return None
    return _Draft(f"{voice.zh}希望被称为{m['name']}。", "称呼", "identity", 9)


def _zh_relation(m: re.Match[str], voice: _Voice) -> _Draft | None:
    """'我妹妹叫安娜' → '用户的妹妹叫安娜。'"""
    if _ZH_DEICTIC.match(m["y"]):
        return None
    return _Draft(
        _cjk_sentence(f"{voice.zh}的" + _zh_third(m.string[1:], voice)), m["rel"], "relationship", 7
    )


def _zh_possessive(m: re.Match[str], voice: _Voice) -> _Draft | None:
    x, y = m["x"], m["y"].strip()
    if _ZH_DISCOURSE.match(x) or not y or _ZH_DEICTIC.match(y):
        return None
    relation = re.search(_ZH_RELATION, x)
    if relation:
        category: Category = "relationship"
        importance, topic = 7, relation.group()
    elif re.search(r"最喜欢|最喜歡|最爱|最愛|爱好|愛好", x):
        category, importance, topic = "preference", 6, x
    elif _ZH_IDENTITY_NOUNS.search(x):
        category, importance, topic = "identity", 8, x
    elif _ZH_PROJECT_NOUNS.search(x):
        category, importance, topic = "project_state", 6, x
    else:
        category, importance, topic = "fact", 5, x
    return _Draft(_cjk_sentence(_zh_third(m.string, voice)), topic, category, importance)


def _zh_decision(m: re.Match[str], voice: _Voice) -> _Draft | None:
    if _ZH_DEICTIC.match(m["obj"]):
        return None
    text = m.string
    if m["we"]:
        text = f"{voice.zh}及其团队" + text[2:]
    return _Draft(_cjk_sentence(_zh_third(text, voice)), m["obj"][:12], "decision", 7)


def _zh_todo(m: re.Match[str], voice: _Voice) -> _Draft | None:
    task = m["task"].strip()
    if len(task) < 2 or re.match(
        r"走|睡|休息|想|知道|问|問|下线|下線|说|說|承认|承認|先走|去睡|冷静|冷靜|帮助|幫助|帮忙|幫忙|"
        r"你的帮助|你的幫助",
        task,
    ):
        return None
    return _Draft(_cjk_sentence(_zh_third(m.string, voice)), task[:12], "todo", 5)


def _zh_remind(m: re.Match[str], voice: _Voice) -> _Draft | None:
    task = m["task"].strip()
    if len(task) < 2 or re.match(r"什么|什麼|一下我们|一下我們|我们说|我們說", task):
        return None
    return _Draft(_cjk_sentence(f"{voice.zh}希望被提醒：{_zh_third(task, voice)}"), task[:12], "todo", 7)


def _zh_todo_note(m: re.Match[str], voice: _Voice) -> _Draft | None:
    task = m["task"].strip()
    return _Draft(_cjk_sentence(f"{voice.zh}的待办：{_zh_third(task, voice)}"), task[:12], "todo", 6)


def _zh_identity(m: re.Match[str], voice: _Voice) -> _Draft | None:
    obj = m["obj"]
    if re.match(
        r"说|說|不是|在|的|想|觉得|覺得|要|因为|因為|这样|這樣|那样|那樣|问|問|开玩笑|開玩笑|认真|認真|指|"
        r"故意|来|來|真的|有点|有點|随便|隨便",
        obj,
    ) or _ZH_DEICTIC.match(obj):
        return None
    return _Draft(_cjk_sentence(_zh_third(m.string, voice)), "身份", "identity", 8)


_ZH_ADV = r"(?:很|非常|真的|特别|特別|超|最|也|还|還|比较|比較|更|一直|都|挺|蛮|蠻|其实|其實)*"
_ZH_RULES: tuple[_Rule, ...] = tuple(
    _Rule(re.compile(pattern), handler)
    for pattern, handler in (
        (rf"^我(?:的)?名字(?:是|叫){_ZH_NAME}{_ZH_PARTICLE}$", _zh_name),
        (rf"^我叫{_ZH_NAME}{_ZH_PARTICLE}$", _zh_called),
        (rf"^(?:你|您)?(?:可以|就|请|請)?(?:叫|称呼|稱呼)我{_ZH_NAME}{_ZH_PARTICLE}$", _zh_call_me),
        (
            r"^我(?:[对對])(?P<obj>.+?)(?:严重|嚴重|有点|有點|有些)?(?:过敏|過敏)$",
            _zh_say("identity", 9, "过敏"),
        ),
        (r"^我(?:不|从不|從不|不能|不可以)(?:吃|喝)(?P<obj>.+)$", _zh_say("preference", 7, "饮食")),
        (
            r"^我(?:是)?(?:素食者|素食主义者|素食主義者|吃素的?|纯素食者|純素食者)$",
            _zh_say("identity", 8, "饮食"),
        ),
        (rf"^我(?P<rel>{_ZH_RELATION})(?:的名字)?(?:是|叫)(?P<y>.+)$", _zh_relation),
        (r"^我的?(?P<x>最(?:喜欢|喜歡|爱|愛)的[^，,。是]{1,10}?)(?:是|就是)(?P<y>.+)$", _zh_possessive),
        (r"^我的(?P<x>[^，,。是叫]{1,12}?)(?:是|叫|就是)(?P<y>.+)$", _zh_possessive),
        (
            rf"^我(?:有)(?:一|两|兩|三|四|五|几|幾|\d+)?(?:个|個|只|隻|条|條|位)?(?P<obj>{_ZH_RELATION})(?:.*)$",
            _zh_say("relationship", 7),
        ),
        (
            r"^我(?:现在|現在|目前|一直|也)?(?:住在|住|生活在|居住在|定居在|搬到了?|搬去了?)(?P<obj>.+)$",
            _zh_say("identity", 8, "居住地"),
        ),
        (r"^我(?:来自|來自)(?P<obj>.+)$", _zh_say("identity", 8, "出身")),
        (
            r"^我(?:现在|現在|目前)?在(?P<obj>.+?)(?:工作|上班|任职|任職|实习|實習|上学|上學|读书|讀書)$",
            _zh_say("identity", 8, "工作"),
        ),
        (r"^我(?:是)?(?:做|搞)(?P<obj>.+?)的$", _zh_say("identity", 7, "职业")),
        (
            r"^我(?:现在|現在|目前)?(?:正在|在)(?:开发|開發|维护|維護)(?P<obj>.+)$",
            _zh_say("project_state", 6),
        ),
        (
            rf"^我{_ZH_ADV}(?:喜欢|喜歡|爱|愛|热爱|熱愛|偏好|偏爱|偏愛|讨厌|討厭|不喜欢|不喜歡|不爱|不愛|受不了|"
            r"反感)(?P<obj>.+)$",
            _zh_say("preference", 6),
        ),
        (
            r"^我(?P<we>们|們)?(?:已经|已經|最终|最終|终于|終於|刚|剛|刚刚|剛剛)?(?:决定|決定|选择了|選擇了|选了|選了|"
            r"打算)(?P<obj>.+)$",
            _zh_decision,
        ),
        (
            r"^我(?:会|會|能)(?:说|說|讲|講|弹|彈|拉|编程|編程|写代码|寫代碼|做饭|做飯|开车|開車|游泳|画画|畫畫|跳舞|"
            r"唱歌|滑雪)(?P<obj>.*)$",
            _zh_say("skill", 6, "技能"),
        ),
        (r"^我(?:精通|擅长|擅長|熟悉|熟练掌握|熟練掌握|会用|會用)(?P<obj>.+)$", _zh_say("skill", 6)),
        (r"^(?:请|請|麻烦|麻煩)?(?:你|您)?(?:记得)?提醒我(?P<task>.+)$", _zh_remind),
        (r"^我(?:还|還)?(?:需要|必须|必須|得|要记得|要記得)(?P<task>.+)$", _zh_todo),
        (r"^(?:待办|待辦|todo|TODO|备忘|備忘)[：:](?P<task>.+)$", _zh_todo_note),
        (r"^我(?:是|现在是|現在是)(?:一名|一个|一個|一位)?(?P<obj>[^，,]{1,20})$", _zh_identity),
    )
)

_ZH_NOW_ON = re.compile(
    r"^(?P<marker>以后|以後|今后|今後|从现在开始|從現在開始|从现在起|從現在起|从今以后|從今以後|从今天起|"
    r"從今天起|从今天开始|從今天開始|往后|往後)(?:请|請)?[，,：:\s]*(?P<body>.*)$"
)
_ZH_STRONG_CORRECTION = (
    re.compile(
        r"^(?P<marker>更正|纠正|糾正|我说错了|我說錯了|说错了|說錯了|我搞错了|我搞錯了|搞错了|搞錯了|"
        r"不对|不對|错了|錯了|我写错了|我寫錯了)(?:一下)?[，,：:。！!\s]*(?P<body>.*)$"
    ),
)
_ZH_WEAK_CORRECTION = re.compile(r"^(?P<marker>不是|不|其实|其實)[，,\s]+(?P<body>.*)$")
_ZH_CONTRAST = re.compile(r"不是|而不是|而非")
_ZH_REMEMBER = re.compile(
    r"^(?:请|請|你要|你|麻烦|麻煩|帮我|幫我)*(?P<marker>记住|記住|记得|記得|别忘了|別忘了|不要忘记|不要忘記|"
    r"别忘记|別忘記|记一下|記一下|记下|記下)(?!了)(?:一下)?(?:[：:，,]|这个|這個|这件事|這件事|这一点|這一點)*"
    r"(?P<body>.*)$"
)


def _zh_now_on(marker: str, body: str, voice: _Voice) -> _Draft | None:
    body = re.sub(r"^(?:请|請|麻烦|麻煩)", "", body.strip())
    if len(body) < 2:
        return None
    if _ZH_I.match(body):
        return _Draft(_cjk_sentence(f"{marker}，{_zh_third(body, voice)}"), body[1:13], "decision", 8)
    return _Draft(
        _cjk_sentence(f"{voice.zh}要求：{marker}{_zh_third(body, voice, to_assistant=True)}"),
        body[:12],
        "preference",
        8,
    )


def _zh_correction(body: str, voice: _Voice) -> _Draft | None:
    if len(body.strip()) < 2:
        return None
    return _Draft(_cjk_sentence(f"{voice.zh}更正：{_zh_third(body, voice)}"), "更正", "correction", 7)


def _zh_remember(body: str, voice: _Voice) -> _Draft | None:
    body = body.strip()
    if len(body) < 2 or re.match(r"[了吗嗎吧呀啊]", body):
        return None
    return _Draft(_cjk_sentence(f"{voice.zh}要求记住：{_zh_third(body, voice)}"), "备忘", "fact", 7)


# ---------------------------------------------------------------------------------------------
# Japanese


_JA_I = r"(?:私|わたし|僕|ぼく|俺|おれ|あたし)(?!たち|達|ども|ら)"
_JA_I_TOKEN = re.compile(rf"{_JA_I}(?=[のはがをにもでと、]|$)")
_JA_YOU = re.compile(r"(?:あなた|君|きみ)(?=[のはがをにもでと、]|$)")
_JA_TOP = rf"(?:{_JA_I}(?:は|が|も))?"
_JA_SUBJECT_START = re.compile(rf"^{_JA_I}(?:[のはがをにもでと])")
_JA_NAME = r"(?P<name>[^\s、,。！？!?「」『』（）()]{1,20}?)"
_JA_DEICTIC = re.compile(r"^(?:これ|それ|あれ|どれ|何|なに|なん|誰|だれ|あなた|君|きみ|そう|こう)")
_JA_RELATION = "姉|妹|兄|弟|母|父|妻|夫|息子|娘|友達|友人|親友|彼女|彼氏|猫|犬|上司|同僚|子供|子ども|家族|祖母|祖父|奥さん|旦那|ペット|ルームメイト"
_JA_IDENTITY_NOUNS = re.compile(r"名前|誕生日|年齢|仕事|職業|メール|電話|住所|国籍|母語|専攻|出身")
_JA_PROJECT_NOUNS = re.compile(r"プロジェクト|会社|サイト|サーバー|データベース|リポジトリ|チーム|製品")


def _ja_third(text: str, voice: _Voice, *, to_assistant: bool = False) -> str:
    text = _JA_I_TOKEN.sub(voice.ja, text)
    return _JA_YOU.sub("アシスタント", text) if to_assistant else text


def _ja_statement(text: str, voice: _Voice) -> str:
    """Third person, adding the subject the user left out ("東京に住んでいます")."""
    if _JA_SUBJECT_START.match(text):
        return _cjk_sentence(_ja_third(text, voice))
    return _cjk_sentence(f"{voice.ja}は{_ja_third(text, voice)}")


def _ja_say(category: Category, importance: int, topic: str | None = None, *, obj: str = "obj") -> Handler:
    def handler(m: re.Match[str], voice: _Voice) -> _Draft | None:
        phrase = (m.groupdict().get(obj) or "").strip()
        if obj in m.groupdict() and (not phrase or _JA_DEICTIC.match(phrase)):
            return None
        return _Draft(_ja_statement(m.string, voice), topic or phrase[:12], category, importance)

    return handler


def _ja_name(m: re.Match[str], voice: _Voice) -> _Draft | None:
    if _JA_DEICTIC.match(m["name"]):
        return None
    return _Draft(f"{voice.ja}の名前は{m['name']}です。", "名前", "identity", 10)


def _ja_call_me(m: re.Match[str], voice: _Voice) -> _Draft | None:
    if _JA_DEICTIC.match(m["name"]):
        return None
    return _Draft(f"{voice.ja}は「{m['name']}」と呼ばれたい。", "呼び方", "identity", 9)


def _ja_possessive(m: re.Match[str], voice: _Voice) -> _Draft | None:
    x, y = m["x"], m["y"].strip()
    if not y or _JA_DEICTIC.match(y):
        return None
    relation = re.search(_JA_RELATION, x)
    if relation:
        category: Category = "relationship"
        importance, topic = 7, relation.group()
    elif re.search(r"好き|お気に入り|趣味", x):
        category, importance, topic = "preference", 6, x
    elif _JA_IDENTITY_NOUNS.search(x):
        category, importance, topic = "identity", 8, x
    elif _JA_PROJECT_NOUNS.search(x):
        category, importance, topic = "project_state", 6, x
    else:
        category, importance, topic = "fact", 5, x
    return _Draft(_cjk_sentence(_ja_third(m.string, voice)), topic, category, importance)


def _ja_remind(m: re.Match[str], voice: _Voice) -> _Draft | None:
    task = m["obj"].strip()
    if len(task) < 2 or _JA_DEICTIC.match(task):
        return None
    return _Draft(_cjk_sentence(f"{voice.ja}へのリマインド：{_ja_third(task, voice)}"), task[:12], "todo", 7)


def _ja_identity(m: re.Match[str], voice: _Voice) -> _Draft | None:
    obj = m["obj"]
    if (
        re.match(
            r"大丈夫|元気|平気|了解|賛成|反対|いい|結構|無理|暇|忙しい|本気|冗談|まだ|ちょっと|分かり|わかり|"
            r"知り|そう|ここ|今",
            obj,
        )
        or _JA_DEICTIC.match(obj)
        or re.search(r"(?:ない|たい|好き|嫌い)$", obj)
    ):
        return None
    return _Draft(_cjk_sentence(_ja_third(m.string, voice)), "アイデンティティ", "identity", 8)


_JA_POLITE = r"(?:です|だ|でございます|なんです|なんだ)?(?:よ|ね|よね)?"
_JA_RULES: tuple[_Rule, ...] = tuple(
    _Rule(re.compile(pattern), handler)
    for pattern, handler in (
        (
            rf"^(?:{_JA_I}の)?名前は{_JA_NAME}(?:です|だ|といいます|と言います|と申します)?(?:よ|ね)?$",
            _ja_name,
        ),
        (rf"^(?:{_JA_I}は)?{_JA_NAME}(?:と申します|といいます|と言います)$", _ja_name),
        (
            rf"^(?:{_JA_I}のことを|{_JA_I}を)?{_JA_NAME}(?:と|って)呼んで(?:ください|下さい|ね|ほしい|欲しい)?(?:です)?$",
            _ja_call_me,
        ),
        (
            rf"^{_JA_TOP}(?P<obj>.+?)(?:に|の)?アレルギー(?:です|だ|があります|がある|持ちです)$",
            _ja_say("identity", 9, "アレルギー"),
        ),
        (
            rf"^{_JA_TOP}(?:ベジタリアン|ヴィーガン|ビーガン|菜食主義者)(?:です|だ)$",
            _ja_say("identity", 8, "食事"),
        ),
        (rf"^{_JA_I}の(?P<x>[^はが、。]{{1,12}})(?:は|が)(?P<y>.+)$", _ja_possessive),
        (
            rf"^{_JA_TOP}(?P<obj>.+?)(?:が|は)(?:大好き|好き|大嫌い|嫌い|苦手|好きじゃない|好きではない|好きではありません|"
            rf"好きじゃありません){_JA_POLITE}$",
            _ja_say("preference", 6),
        ),
        (
            rf"^{_JA_TOP}(?P<obj>.+?)に(?:住んでいます|住んでる|住んでいる|住んでます|暮らしています|暮らしてる|"
            r"引っ越しました|引っ越した)$",
            _ja_say("identity", 8, "居住地"),
        ),
        (rf"^{_JA_TOP}(?P<obj>.+?)(?:出身|生まれ|在住){_JA_POLITE}$", _ja_say("identity", 8, "出身")),
        (
            rf"^{_JA_TOP}(?P<obj>.+?)(?:で働いています|で働いてる|に勤めています|に勤務しています|で仕事をしています|"
            r"として働いています|をしています)$",
            _ja_say("identity", 8, "仕事"),
        ),
        (
            rf"^{_JA_TOP}(?P<obj>.+?)(?:が|を)(?:話せます|話せる|話します|できます|できる|得意です|得意)$",
            _ja_say("skill", 6),
        ),
        (
            rf"^{_JA_TOP}(?P<obj>.+?)(?:ことにしました|ことにした|ことに決めました|に決めました|に決めた|を選びました)$",
            _ja_say("decision", 7),
        ),
        (
            rf"^{_JA_TOP}(?P<obj>.+?)(?:しなければなりません|しなければならない|しなきゃいけない|しなきゃ|"
            r"しないといけません|しないといけない|する必要があります|する必要がある)$",
            _ja_say("todo", 6),
        ),
        (r"^(?P<obj>.+?)(?:を|って|と)?リマインドして(?:ください|下さい|ね)?$", _ja_remind),
        (rf"^{_JA_I}は(?P<obj>[^、,。]{{1,20}}?)(?:です|だ|でございます)(?:よ|ね)?$", _ja_identity),
    )
)

_JA_NOW_ON = re.compile(
    r"^(?P<marker>これからは|これから|今後は|今後|次回からは|次回から|次からは|次から|以後|以降は)[、,\s]*(?P<body>.*)$"
)
_JA_STRONG_CORRECTION = (
    re.compile(
        r"^(?P<marker>訂正(?:します|です|させてください)?|違います|違う|ちがいます|ちがう|間違えました|"
        r"間違えた|間違いです|間違ってました)[、,：:。！!\s]*(?P<body>.*)$"
    ),
)
_JA_WEAK_CORRECTION = re.compile(r"^(?P<marker>いいえ|いや|実は)[、,\s]+(?P<body>.*)$")
_JA_CONTRAST = re.compile(r"じゃなくて|ではなくて|ではなく")
_JA_REMEMBER = (
    re.compile(
        r"^(?:これを|次のことを|以下を)?(?P<marker>覚えて|覚えておいて|憶えて|忘れないで)(?:ください|下さい|ね|"
        r"ほしい|欲しい|おいてください)*[、,：:\s]*(?P<body>.*)$"
    ),
    re.compile(
        r"^(?P<body>.+?)(?:ということ|こと)?(?:を)?(?:って|と)?(?P<marker>覚えて|覚えておいて|憶えて|"
        r"忘れないで)(?:ください|下さい|ね|おいて|ほしい|欲しい)*$"
    ),
)


def _ja_now_on(marker: str, body: str, voice: _Voice) -> _Draft | None:
    body = body.strip()
    if len(body) < 2:
        return None
    if _JA_SUBJECT_START.match(body):
        return _Draft(_cjk_sentence(f"{marker}、{_ja_third(body, voice)}"), body[:12], "decision", 8)
    return _Draft(
        _cjk_sentence(f"{voice.ja}の希望：{marker}{_ja_third(body, voice, to_assistant=True)}"),
        body[:12],
        "preference",
        8,
    )


def _ja_correction(body: str, voice: _Voice) -> _Draft | None:
    if len(body.strip()) < 2:
        return None
    return _Draft(_cjk_sentence(f"{voice.ja}の訂正：{_ja_third(body, voice)}"), "訂正", "correction", 7)


def _ja_remember(body: str, voice: _Voice) -> _Draft | None:
    body = re.sub(r"(?:ということ|こと)?(?:を)?(?:って|と)?$", "", body.strip())
    if len(body) < 2:
        return None
    return _Draft(_cjk_sentence(f"{voice.ja}が覚えてほしいこと：{_ja_third(body, voice)}"), "メモ", "fact", 7)


# ---------------------------------------------------------------------------------------------
# Languages, filters and splitting


@dataclass(frozen=True)
class _Language:
    name: str
    rules: tuple[_Rule, ...]
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
    render_now_on: Callable[[str, str, _Voice], _Draft | None]
    render_correction: Callable[[str, _Voice], _Draft | None]
    render_remember: Callable[[str, _Voice], _Draft | None]
    polite: re.Pattern[str] | None = None  # a request phrased as a question that is not one
    hedge_words: frozenset[str] = frozenset()  # single-word hedges: a set lookup beats a regex alternation
    rule_index: dict[str, tuple[_Rule, ...]] = field(init=False, repr=False)
    any_word_rules: tuple[_Rule, ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        words = set().union(*(rule.first_words for rule in self.rules if rule.first_words))
        index = {
            w: tuple(r for r in self.rules if r.first_words is None or w in r.first_words) for w in words
        }
        object.__setattr__(self, "rule_index", index)
        object.__setattr__(self, "any_word_rules", tuple(r for r in self.rules if r.first_words is None))

    def rules_for(self, clause: str) -> tuple[_Rule, ...]:
        """The rules, in order, that could match a clause starting with its first word."""
        first = _FIRST_WORD.match(clause)
        if first is None:
            return self.any_word_rules
        return self.rule_index.get(first.group().lower(), self.any_word_rules)


_FIRST_WORD = re.compile(r"[^\W\d_]+(?:['-][^\W\d_]+)?")
_EN_AUX = (
    r"do|does|did|is|are|am|was|were|can|could|would|should|will|shall|have|has|had|may|might|isn't|"
    r"aren't|wasn't|weren't|doesn't|didn't|won't|wouldn't|can't|couldn't|shouldn't|haven't|hasn't|"
    r"don't"
)
_ENGLISH = _Language(
    name="en",
    rules=_EN_RULES,
    lead_in=_en(
        r"^(?:(?:oh|ah|um|uh|hmm|well|so|ok|okay|alright|also|and|btw|by\s+the\s+way|just\s+so\s+you\s+know|fyi|"
        r"for\s+context|for\s+the\s+record|for\s+your\s+information|hi|hello|hey|hi\s+there|hey\s+there|"
        r"hello\s+there|yeah|yes|yep|sure|anyway|anyways|plus|but|oh\s+and|great|thanks|thank\s+you|"
        r"quick\s+note|one\s+more\s+thing|side\s+note|fun\s+fact)(?:[\s,!.:;\-]+|$))+"
    ),
    question=_en(
        rf"[?]\s*[\"')\]]*$|^(?:what|what's|whats|who|who's|whom|whose|where|where's|when|why|how|"
        rf"how's|which)\b|^(?:{_EN_AUX})\s+(?:i|you|we|he|she|it|they|my|your|our|the|this|that|"
        rf"there|these|those|anyone|someone|u)\b"
    ),
    hedge=_en(
        r"\b(?:in\s+theory|let's\s+say|what\s+if|as\s+if|i\s+(?:think|guess|suppose|believe|wonder|feel\s+"
        r"like)|not\s+sure|used\s+to)\b|/s\b"
    ),
    hedge_words=frozenset(
        "if unless whether suppose supposing assuming assume imagine pretend hypothetically theoretically maybe "
        "perhaps probably possibly might wondering unsure wish kidding jk lol lmao rofl haha joking sarcasm".split()
    ),
    conditional=_en(
        r"^(?:if|unless|when|whenever|once|suppose|supposing|assuming|in\s+case|even\s+if|"
        r"as\s+long\s+as|let's\s+say|say)\b"
    ),
    clause_split=_en(
        r"(?:\s*[,;]\s*(?:(?:and|but|so|also|plus)\s+)?|\s+(?:and|but|so|plus)\s+)(?=(?:i|i'm|i've|i'd|i'll|im|my|"
        r"what|what's|who|who's|how|where|where's|when|why|which|if|unless|do\s+you|can\s+you|could\s+you|"
        r"would\s+you|are\s+you|is\s+it|please|remember|don't\s+forget|from\s+now\s+on|going\s+forward|"
        r"always|never|call\s+me|remind\s+me|let's)\b)"
    ),
    now_on=_EN_NOW_ON,
    strong_correction=_EN_STRONG_CORRECTION,
    weak_correction=_EN_WEAK_CORRECTION,
    contrast=_EN_CONTRAST,
    remember=(_EN_REMEMBER,),
    render_now_on=_en_now_on,
    render_correction=_en_correction,
    render_remember=_en_remember,
    polite=_en(
        r"^(?:can|could|would|will)\s+you\s+(?:please\s+)?(?=(?:remember|note|keep\s+in\s+mind|bear\s+in\s+"
        r"mind|call\s+me|remind\s+me|always|never|answer|reply|respond|write|speak|talk|stop|not)\b)"
    ),
)

_CHINESE = _Language(
    name="zh",
    rules=_ZH_RULES,
    lead_in=re.compile(
        r"^(?:(?:对了|對了|顺便说一下|順便說一下|顺便一提|順便一提|顺便说|順便說|另外|说实话|說實話|告诉你|告訴你|"
        r"跟你说|跟你說|你好|您好|大家好|补充一下|補充一下)[，,、！!：:\s]*|(?:哦|噢|嗯|好的|好|那个|那個|是的|对|對|"
        r"嗨|还有|還有|谢谢|謝謝|哈哈)[，,、！!：:\s]+)+"
    ),
    question=re.compile(
        r"[?？]\s*$|[吗嗎呢]$|什么|什麼|谁|誰|哪|几个|幾個|几岁|幾歲|怎么|怎麼|为什么|為什麼|多少|"
        r"是不是|有没有|有沒有|能不能|可不可以|要不要"
    ),
    hedge=re.compile(
        r"如果|假如|要是|假设|假設|万一|萬一|想象|想像|假装|假裝|也许|也許|可能|大概|好像|我觉得|我覺得|"
        r"我认为|我認為|我猜|开玩笑|開玩笑|哈哈|的话|的話|以前"
    ),
    conditional=re.compile(r"^(?:如果|假如|要是|万一|萬一|假设|假設|假使)"),
    clause_split=re.compile(r"[，,；;]\s*"),
    now_on=_ZH_NOW_ON,
    strong_correction=_ZH_STRONG_CORRECTION,
    weak_correction=_ZH_WEAK_CORRECTION,
    contrast=_ZH_CONTRAST,
    remember=(_ZH_REMEMBER,),
    render_now_on=_zh_now_on,
    render_correction=_zh_correction,
    render_remember=_zh_remember,
)

_JAPANESE = _Language(
    name="ja",
    rules=_JA_RULES,
    lead_in=re.compile(
        r"^(?:(?:ちなみに|ところで|そういえば|はじめまして|初めまして|こんにちは|こんばんは|実は|じつは)[、,！!：:\s]*|"
        r"(?:あと|それと|あの|えっと|えーと|はい|うん|ええ|あ|そうそう)[、,！!：:\s]+)+"
    ),
    question=re.compile(
        r"[?？]\s*$|(?:か|かな|かしら|の)$|何|なに|なん(?:で|の)|誰|だれ|どこ|いつ|どう|なぜ|どれ|"
        r"どの|どちら|いくつ|いくら"
    ),
    hedge=re.compile(
        r"もし|仮に|としたら|だったら|とすれば|たぶん|多分|かもしれ|と思う|と思います|気がする|冗談|"
        r"だろう|でしょう|みたい|以前|昔"
    ),
    conditional=re.compile(r"^(?:もし|仮に)"),
    clause_split=re.compile(rf"[、,；;]\s*(?=(?:{_JA_I}|でも|それと|あと|そして|また|もし))"),
    now_on=_JA_NOW_ON,
    strong_correction=_JA_STRONG_CORRECTION,
    weak_correction=_JA_WEAK_CORRECTION,
    contrast=_JA_CONTRAST,
    remember=_JA_REMEMBER,
    render_now_on=_ja_now_on,
    render_correction=_ja_correction,
    render_remember=_ja_remember,
)

_KANA = re.compile(r"[\u3040-\u30ff]")
_FIRST_LETTER = re.compile(r"[^\W\d_]")


def _language_of(text: str) -> _Language:
    """By the first letter: a Chinese sentence may hold an English name and vice versa."""
    first = _FIRST_LETTER.search(text)
    if first is None:
        return _ENGLISH
    char = first.group()
    if _KANA.match(char) or ("\u3400" <= char <= "\u9fff" and _KANA.search(text)):
        return _JAPANESE
    if "\u3400" <= char <= "\u9fff":
        return _CHINESE
    return _ENGLISH


_FENCED_CODE = re.compile(r"```.*?(?:```|$)|~~~.*?(?:~~~|$)", re.DOTALL)
_INLINE_CODE = re.compile(r"`([^`\n]{1,80})`")
_QUOTED_LINE = re.compile(r"^\s*>.*$", re.MULTILINE)
_QUOTED_SPAN = re.compile(r"\"([^\"\n]{1,600})\"|“([^”\n]{1,600})”|「([^」\n]{1,600})」|『([^』\n]{1,600})』")
_ROLE_PLAY = re.compile(
    r"\b(?:pretend|role-?play|roleplay|let's\s+play|in\s+this\s+story|in\s+the\s+story|my\s+character|act\s+as|"
    r"you\s+are\s+now|imagine\s+(?:that|you|i|we))\b|假装|假裝|扮演|角色|ロールプレイ|なりきって|演じて|ふりをして",
    re.IGNORECASE,
)
_ROLE_PLAY_HINTS = (
    "pretend",
    "play",
    "story",
    "character",
    "act as",
    "you are now",
    "imagine",
    "假",
    "扮演",
    "角色",
    "ロールプレイ",
    "なりきって",
    "演じて",
    "ふり",
)
_APOSTROPHES = str.maketrans({"’": "'", "‘": "'", "＇": "'"})


def _drop_long_quote(m: re.Match[str]) -> str:
    """Quoted text is someone else's words (a pasted email, a line of dialogue), unless it is short."""
    inner = next(g for g in m.groups() if g is not None)
    long = len(inner.split()) >= 4 or len(re.findall(r"[\u3040-\u30ff\u3400-\u9fff]", inner)) >= 10
    return " " if long else m.group()


def _clean(text: str) -> str:
    text = text.translate(_APOSTROPHES)
    text = _FENCED_CODE.sub("\n", text)
    text = _INLINE_CODE.sub(r"\1", text)
    text = _QUOTED_LINE.sub("", text)
    return _QUOTED_SPAN.sub(_drop_long_quote, text)


_BOUNDARY = re.compile(r"[.!?…]+[\"')\]]*(?=\s|$)|[。！？!?；;]+[」』）)]*|\n+")
_ABBREVIATIONS = frozenset(
    "mr mrs ms dr st prof sr jr vs etc e.g i.e eg ie approx mt ft inc ltd co no dept univ ave rd".split()
)


_LAST_WORD = re.compile(r"[\w.]+$")


def _sentences(text: str) -> list[str]:
    sentences: list[str] = []
    start = 0
    for m in _BOUNDARY.finditer(text):
        if m.group().startswith("."):
            previous = _LAST_WORD.search(text, max(start, m.start() - 12), m.start())
            if previous and previous.group().lower() in _ABBREVIATIONS:
                continue
        piece = text[start : m.end()].strip()
        if piece:
            sentences.append(piece)
        start = m.end()
    tail = text[start:].strip()
    if tail:
        sentences.append(tail)
    return sentences


def _strip_lead_in(clause: str, language: _Language) -> str:
    return language.lead_in.sub("", clause.strip()).strip()


# ---------------------------------------------------------------------------------------------
# Wrappers and clauses


def _match_wrapper(clause: str, language: _Language) -> _Wrapper | None:
    m = language.now_on.match(clause)
    if m:
        return _Wrapper("now_on", m["marker"], m["body"].strip())
    for pattern in language.strong_correction:
        m = pattern.match(clause)
        if m:
            return _Wrapper("correction", m["marker"], m["body"].strip())
    for pattern in language.remember:
        m = pattern.match(clause)
        if m:
            return _Wrapper("remember", m["marker"], m["body"].strip())
    m = language.weak_correction.match(clause)
    if m:
        return _Wrapper("weak_correction", m["marker"], m["body"].strip())
    return None


def _resolve(wrapper: _Wrapper, inner: _Draft | None, language: _Language, voice: _Voice) -> _Draft | None:
    """What a wrapper makes of its body: the body's own fact, adjusted, or the wrapper's own rendering."""
    if inner is not None:
        return _apply_mode(inner, wrapper.kind)
    if wrapper.kind == "now_on":
        return language.render_now_on(wrapper.marker, wrapper.body, voice)
    if wrapper.kind == "correction":
        return language.render_correction(wrapper.body, voice)
    if wrapper.kind == "weak_correction":
        # "Actually, …" alone is chit-chat; only a contrast ("it's Ana, not Anna") makes it a correction.
        return (
            language.render_correction(wrapper.body, voice)
            if language.contrast.search(wrapper.body)
            else None
        )
    return language.render_remember(wrapper.body, voice)


def _apply_mode(draft: _Draft, mode: str | None) -> _Draft:
    if mode in ("correction", "weak_correction"):
        return draft.as_correction()
    if mode == "remember":
        return draft.at_least(7, step=1)
    if mode == "now_on":
        return draft.at_least(8)
    return draft


def _trim(text: str, language: _Language) -> str:
    """Lead-ins and closing punctuation off; a question mark stays, it is evidence."""
    return _strip_lead_in(text, language).rstrip(_CJK_TRAILING)


_WORDS = re.compile(r"[^\W\d_]+")


def _is_statement(text: str, language: _Language) -> bool:
    """Not a question, a hypothetical, a hedge or a joke."""
    if language.question.search(text) or language.hedge.search(text):
        return False
    return not (language.hedge_words and not language.hedge_words.isdisjoint(_WORDS.findall(text.lower())))


def _from_clause(clause: str, language: _Language, voice: _Voice, depth: int = 0) -> _Draft | None:
    """One clause → at most one fact: the first wrapper or rule that recognises it wins."""
    clause = _trim(clause, language)
    if not clause or len(clause) > _MAX_CLAUSE_CHARS:
        return None
    wrapper = _match_wrapper(clause, language) if depth < 2 else None
    if wrapper is not None and wrapper.body:
        inner = _from_clause(wrapper.body, _language_of(wrapper.body), voice, depth + 1)
        return _resolve(wrapper, inner, language, voice)
    for rule in language.rules_for(clause):
        m = rule.pattern.match(clause)
        if m:
            draft = rule.handler(m, voice)
            if draft is not None:
                return draft
    return None


def _clauses(sentence: str, language: _Language) -> list[str]:
    """Split on commas and conjunctions that start a new statement ("…, and I live in Porto")."""
    return [p.strip() for p in language.clause_split.split(sentence) if p and p.strip()]


def _from_sentence(sentence: str, language: _Language, voice: _Voice) -> tuple[list[_Draft], _Wrapper | None]:
    """The facts in one sentence, and its wrapper when the sentence is nothing but one ("Remember this:")."""
    head = _trim(sentence, language)
    if language.polite is not None:
        head = language.polite.sub("", head).rstrip("?？ ")  # "Can you remember that I'm vegan?"
    wrapper = _match_wrapper(head, language) if head else None
    if wrapper is not None and not wrapper.body:
        return [], wrapper
    body = wrapper.body if wrapper is not None else head
    drafts: list[_Draft] = []
    hypothetical = asked = False
    for clause in _clauses(body, language):
        clause = _trim(clause, language)
        if language.conditional.match(clause):
            hypothetical = True
            break  # "If I were rich, I'd live in Paris": the rest of the sentence is hypothetical
        if not _is_statement(clause, language):
            asked = asked or bool(language.question.search(clause))
            continue
        draft = _from_clause(clause, language, voice)
        if draft is not None:
            drafts.append(_apply_mode(draft, wrapper.kind if wrapper else None))
    if asked:
        # "I need to parse a CSV, how do I do it?" is a request for help, not a to-do to remember.
        drafts = [draft for draft in drafts if draft.category != "todo"]
    if wrapper is not None and not drafts and not hypothetical and _is_statement(body, language):
        fallback = _resolve(wrapper, None, language, voice) if len(body) <= _MAX_CLAUSE_CHARS else None
        drafts = [fallback] if fallback is not None else []
    return drafts, None


def _from_message(text: str, voice: _Voice) -> list[_Draft]:
    text = _clean(text)
    lowered = text.lower()
    if any(hint in lowered for hint in _ROLE_PLAY_HINTS) and _ROLE_PLAY.search(text):
        return []  # a persona's "my name is…" is not the user's
    drafts: list[_Draft] = []
    carried_mode: str | None = None  # a bare "Remember this:" / "Correction:" applies to the next sentence
    previous_sentence: list[int] = []
    for sentence in _sentences(text):
        language = _language_of(sentence)
        mode, carried_mode = carried_mode, None
        found, bare = _from_sentence(sentence, language, voice)
        if bare is not None:
            if bare.kind == "remember" and previous_sentence:
                for i in previous_sentence:  # "My PIN is 1234. Remember that."
                    drafts[i] = drafts[i].at_least(7, step=1)
            elif bare.kind in ("remember", "correction"):
                carried_mode = bare.kind
            previous_sentence = []
            continue
        previous_sentence = list(range(len(drafts), len(drafts) + len(found)))
        drafts.extend(_apply_mode(draft, mode) for draft in found)
    if len(drafts) > MAX_FACTS_PER_MESSAGE:
        keep = sorted(range(len(drafts)), key=lambda i: -drafts[i].importance)[:MAX_FACTS_PER_MESSAGE]
        drafts = [drafts[i] for i in sorted(keep)]
    return drafts


def _dedup_key(fact: str) -> str:
    return _SPACES.sub(" ", fact).strip().rstrip(".。").casefold()


def extract_facts(messages: Sequence[tuple[str, str]], *, speaker: str = "The user") -> list[ExtractedFact]:
    """Facts stated explicitly by the user in ``messages``, rewritten about ``speaker``.

    ``messages`` are ``(role, text)`` pairs in conversation order; only roles in
    :data:`USER_ROLES` are read (what the assistant says is not a fact about the user).
    ``speaker`` names the user in English facts ("The user" → "The user lives in Porto."); a
    custom name is also used verbatim in Chinese and Japanese facts instead of 用户/ユーザー.

    Returns validated :class:`ExtractedFact` objects, at most :data:`MAX_FACTS_PER_MESSAGE` per
    message, without duplicates (the same fact stated twice keeps the higher importance).
    """
    voice = _Voice.of(speaker)
    facts: list[ExtractedFact] = []
    index_of: dict[str, int] = {}
    for role, text in messages:
        if role.strip().lower() not in USER_ROLES or not text:
            continue
        for draft in _from_message(text, voice):
            if has_secret(draft.fact) or has_secret(draft.topic):
                continue  # memories are stored in plain text and recalled into prompts: never keep secrets
            key = _dedup_key(draft.fact)
            if key in index_of:
                existing = facts[index_of[key]]
                if draft.importance > existing.importance:
                    facts[index_of[key]] = existing.model_copy(update={"importance": draft.importance})
                continue
            try:
                fact = ExtractedFact(
                    topic=draft.topic[:80],
                    fact=draft.fact,
                    importance=draft.importance,
                    category=draft.category,
                )
            except ValidationError:
                continue  # a rule produced something unusable (e.g. a topic of digits only): skip it
            index_of[key] = len(facts)
            facts.append(fact)
    return facts

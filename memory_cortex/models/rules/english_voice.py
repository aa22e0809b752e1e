"""English in the third person: "I prefer tea" → "The user prefers tea.", and the topic a phrase
is filed under."""

from __future__ import annotations

import re

from .shapes import Voice, en_sentence

_TOKEN = re.compile(r"[^\W_]+(?:'[^\W_]+)*|\s+|.", re.DOTALL)
_ADVERBS = frozenset(
    "always usually never also really just still often sometimes mostly only actually generally "
    "normally currently now already definitely absolutely truly primarily mainly even totally "
    "honestly personally strongly much typically rarely seldom occasionally genuinely finally recently "
    "officially literally basically very".split()
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
    "can cannot could will would shall should must might may did was were had used gotta got went made "
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


def third_person(text: str, voice: Voice, *, to_assistant: bool = False, named: bool = False) -> str:
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


def en_fact(text: str, voice: Voice, *, to_assistant: bool = False) -> str:
    return en_sentence(third_person(text, voice, to_assistant=to_assistant))


_WE_START = re.compile(
    r"^(?:(?P<have>we've|we\s+have)|(?P<are>we're|we\s+are)|(?P<will>we'll|we\s+will)|we)\b", re.IGNORECASE
)


def team_fact(text: str, voice: Voice) -> str:
    """'we decided to use Postgres' → 'The user and their team decided to use Postgres.'"""
    m = _WE_START.match(text)
    if m is None:
        return en_fact(text, voice)
    aux = " have" if m["have"] else " are" if m["are"] else " will" if m["will"] else ""
    rest = re.sub(r"\bour\b", "their", text[m.end() :], flags=re.IGNORECASE)
    rest = re.sub(r"\bus\b", "them", rest, flags=re.IGNORECASE)
    return en_sentence(f"{voice.subject} and their team{aux}{third_person(rest, voice, named=True)}")


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


def topic_from(phrase: str, fallback: str) -> str:
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
    r"him|her(?!\s+\w)|us|me|ya|"
    r"there|here|one|both|either|neither|none|nothing|everything|anything|something|not|"
    r"all\s+of\s+(?:it|them|these|those)|the\s+(?:idea|way|answer|suggestion|response|first|second|"
    r"third|last|other|former|latter|one|same|rest|new one|old one))\b",
    re.IGNORECASE,
)


def is_content(phrase: str | None) -> bool:
    """False for objects that point back into the chat ("I like it", "I love that idea")."""
    if phrase is None:
        return True
    phrase = phrase.strip()
    return bool(phrase) and bool(re.search(r"[^\W\d_]|\d", phrase)) and not _DEICTIC.match(phrase)

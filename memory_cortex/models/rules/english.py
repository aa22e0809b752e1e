"""English as a language of the rules extractor: its wrappers ("from now on…", corrections,
"remember that…") and the filters that keep questions, hedges and hypotheticals out."""

from __future__ import annotations

import re

from .english_rules import EN_RULES, en_pattern
from .english_voice import en_fact, is_content, team_fact, third_person, topic_from
from .shapes import SPACES, Draft, Language, Voice, cap, en_sentence

# --- English wrappers


_EN_NOW_ON = en_pattern(
    r"^(?P<marker>from\s+now\s+on|going\s+forward|moving\s+forward|from\s+here\s+on(?:\s+out)?|from\s+this\s+"
    r"point\s+(?:on|forward)|in\s+(?:the\s+)?future|henceforth|from\s+today\s+on|starting\s+(?:now|today)|"
    r"next\s+time|for\s+(?:all\s+)?future\s+(?:chats|conversations|sessions|answers|replies|responses))\b"
    r"[\s,:;\-]*(?P<body>.*)$"
)
_EN_STRONG_CORRECTION = (
    en_pattern(
        r"^(?P<marker>correction|to\s+correct\s+(?:myself|that)|let\s+me\s+correct\s+(?:myself|that)|i\s+"
        r"misspoke|i\s+made\s+a\s+mistake|i\s+was\s+wrong|i\s+stand\s+corrected|(?:(?:no|nope|sorry|oops|wait|"
        r"actually)[\s,!.]+)?(?:that's|that\s+is|that\s+was|thats)\s+(?:wrong|not\s+right|incorrect|not\s+"
        r"correct|not\s+true|a\s+mistake)|(?:sorry|oops)[\s,!.]+(?:i\s+)?(?:typo|mistyped|misspelled|meant\s+"
        r"to\s+say))\b[\s,:;.!\-]*(?P<body>.*)$"
    ),
    en_pattern(r"^(?P<marker>(?:(?:no|nope|sorry|oops|wait|actually)[\s,!.]+)*)(?P<body>i\s+meant\b.*)$"),
)
_EN_WEAK_CORRECTION = en_pattern(
    r"^(?P<marker>actually|no|nope|wait|oops|sorry|not\s+quite|not\s+exactly)(?:\b[\s,:;.!\-]+|$)(?P<body>.*)$"
)
_EN_CONTRAST = en_pattern(r",\s*not\s+\S|\binstead\s+of\b|\brather\s+than\b")
_EN_REMEMBER = en_pattern(
    r"^(?:(?:please|pls|and|also|oh|hey|btw|can\s+you|could\s+you|would\s+you)[\s,]+)*"
    r"(?P<marker>remember|memori[sz]e|don't\s+forget|do\s+not\s+forget|never\s+forget|keep\s+in\s+mind|"
    r"bear\s+in\s+mind|note\s+that|please\s+note|make\s+a\s+note(?:\s+that)?|take\s+note(?:\s+that)?|"
    r"save\s+(?:this|that)(?:\s+to\s+memory)?|store\s+this)\b(?:\s+(?:this|that|the\s+following|it))?"
    r"(?:\s*[:,\-]\s*|\s+|$)(?:that\s+)?(?P<body>.*)$"
)
_EN_CLAUSEY = en_pattern(
    r"\b(?:is|are|am|was|were|has|have|had|will|would|can|could|should|must|do|does|did|need|needs|likes?|"
    r"loves?|prefers?|wants?|uses?|lives?|works?|i'm|i've|i'll|i'd|it's|that's|he's|she's|they're|we're)\b"
)
_EN_WH_START = en_pattern(r"^(?:what|when|where|who|why|how|which|whether)\b")


def _en_now_on(marker: str, body: str, voice: Voice) -> Draft | None:
    marker = cap(SPACES.sub(" ", marker.strip()).lower())
    body = re.sub(
        r"^(?:(?:please|pls|kindly)\s+|(?:i\s+want\s+you\s+to|i'd\s+like\s+you\s+to|i\s+would\s+like\s+"
        r"you\s+to|you\s+should|you\s+must|you\s+need\s+to|you\s+have\s+to|you\s+will|you'll|make\s+"
        r"sure\s+(?:to|you))\s+)+",
        "",
        body.strip(),
        flags=re.IGNORECASE,
    )
    if not is_content(body) or len(body) < 2:
        return None
    topic = topic_from(body, "instructions")
    if re.match(r"^(?:i|i'll|i'm|i've|i'd|we|we'll|we're)\b", body, re.IGNORECASE):
        fact = team_fact(body, voice) if body.lower().startswith("we") else third_person(body, voice)
        subject_stripped = re.sub(
            r"^\S+\s+(?:(?:will|am|is|are|going\s+to|want\s+to|plan\s+to)\s+)*", "", body
        )
        return Draft(en_sentence(f"{marker}, {fact}"), topic_from(subject_stripped, "plan"), "decision", 8)
    language = re.match(
        r"^(?:answer|reply|respond|write|speak|talk|communicate|chat)(?:\s+to\s+me)?(?:\s+only)?\s+"
        r"in\s+(?P<lang>.+)$",
        body,
        re.IGNORECASE,
    )
    if language:
        return Draft(
            en_sentence(f"{marker}, {voice.subject} wants answers in {language['lang']}"),
            "answer language",
            "preference",
            8,
        )
    negative = re.match(r"^(?:don't|do\s+not|never|stop)\s+(?P<rest>.+)$", body, re.IGNORECASE)
    if negative:
        rest = third_person(negative["rest"], voice, to_assistant=True, named=True)
        return Draft(
            en_sentence(f"{marker}, {voice.subject} wants the assistant not to {rest}"),
            topic_from(negative["rest"], "instructions"),
            "preference",
            8,
        )
    if re.match(
        r"^(?:the|a|an|this|that|it|there|our|their|his|her|everything|all|any|he|she|they)\b",
        body,
        re.IGNORECASE,
    ):
        return Draft(en_fact(f"{marker}, {body}", voice), topic, "fact", 7)
    rest = third_person(body, voice, to_assistant=True, named=True)
    return Draft(
        en_sentence(f"{marker}, {voice.subject} wants the assistant to {rest}"), topic, "preference", 8
    )


def _en_correction(body: str, voice: Voice) -> Draft | None:
    if not is_content(body) and not body.lower().startswith("it's"):
        return None
    meant = re.match(r"^i\s+meant\s+(?:to\s+say\s+)?(?P<rest>.*)$", body, re.IGNORECASE)
    if meant and not is_content(meant["rest"]):
        return None  # "I meant it": sincerity, not a correction
    if re.match(r"^(?:i|i'm|i've|i'd|i'll|my|me)\b", body, re.IGNORECASE):
        return Draft(en_fact(body, voice), "correction", "correction", 7)
    return Draft(
        en_sentence(f"{voice.title} corrected: {third_person(body, voice, named=True)}"),
        "correction",
        "correction",
        7,
    )


def _en_remember(body: str, voice: Voice) -> Draft | None:
    task = re.match(r"^to\s+(?P<task>.+)$", body, re.IGNORECASE)
    if task:
        if len(task["task"].split()) < 2 and not is_content(task["task"]):
            return None
        return Draft(
            en_sentence(
                f"{voice.title} asked to remember to {third_person(task['task'], voice, named=True)}"
            ),
            topic_from(task["task"], "todo"),
            "todo",
            6,
        )
    if _EN_WH_START.match(body) or len(body.split()) < 3 or not _EN_CLAUSEY.search(body):
        return None  # "remember when…", "remember that file": no statement to keep
    if not is_content(body) and not body.lower().startswith(("it's", "that's")):
        return None
    to_assistant = bool(re.match(r"^(?:you|your)\b", body, re.IGNORECASE))
    return Draft(en_fact(body, voice, to_assistant=to_assistant), topic_from(body, "note"), "fact", 7)


_EN_AUX = (
    r"do|does|did|is|are|am|was|were|can|could|would|should|will|shall|have|has|had|may|might|isn't|"
    r"aren't|wasn't|weren't|doesn't|didn't|won't|wouldn't|can't|couldn't|shouldn't|haven't|hasn't|"
    r"don't"
)
ENGLISH = Language(
    name="en",
    rules=EN_RULES,
    lead_in=en_pattern(
        r"^(?:(?:oh|ah|um|uh|hmm|well|so|ok|okay|alright|also|and|btw|by\s+the\s+way|just\s+so\s+you\s+know|fyi|"
        r"for\s+context|for\s+the\s+record|for\s+your\s+information|hi|hello|hey|hi\s+there|hey\s+there|"
        r"hello\s+there|yeah|yes|yep|sure|anyway|anyways|plus|but|oh\s+and|great|thanks|thank\s+you|"
        r"quick\s+note|one\s+more\s+thing|side\s+note|fun\s+fact)(?:[\s,!.:;\-]+|$))+"
    ),
    question=en_pattern(
        rf"[?]\s*[\"')\]]*$|^(?:what|what's|whats|who|who's|whom|whose|where|where's|when|why|how|"
        rf"how's|which)\b|^(?:{_EN_AUX})\s+(?:i|you|we|he|she|it|they|my|your|our|the|this|that|"
        rf"there|these|those|anyone|someone|u)\b"
    ),
    hedge=en_pattern(
        r"\b(?:in\s+theory|let's\s+say|what\s+if|as\s+if|i\s+(?:think|guess|suppose|believe|wonder|feel\s+"
        r"like)|not\s+sure|used\s+to)\b|/s\b"
    ),
    hedge_words=frozenset(
        "if unless whether suppose supposing assuming assume imagine pretend hypothetically theoretically maybe "
        "perhaps probably possibly might wondering unsure wish kidding jk lol lmao rofl haha joking sarcasm".split()
    ),
    conditional=en_pattern(
        r"^(?:if|unless|when|whenever|once|suppose|supposing|assuming|in\s+case|even\s+if|"
        r"as\s+long\s+as|let's\s+say|say)\b"
    ),
    clause_split=en_pattern(
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
    # Asides that only close a statement: "I'm allergic to peanuts, by the way." Words that change
    # what is said ("too", "I guess", "lol") stay: they are evidence, and hedges drop the clause.
    trail_off=en_pattern(
        r"(?:(?:\s*[,;:\-–—]\s*|\s+)(?:by\s+the\s+way|btw|fyi|just\s+so\s+you\s+know|for\s+the\s+record|"
        r"for\s+what\s+it's\s+worth|for\s+your\s+information)"
        r"|\s*[,;:\-–—]\s*(?:anyway|anyways|actually|though|you\s+know))+[\s.!…~]*$"
    ),
    polite=en_pattern(
        r"^(?:can|could|would|will)\s+you\s+(?:please\s+)?(?=(?:remember|note|keep\s+in\s+mind|bear\s+in\s+"
        r"mind|call\s+me|remind\s+me|always|never|answer|reply|respond|write|speak|talk|stop|not)\b)"
    ),
)

"""English as a language of the rules extractor: its wrappers ("from now on…", corrections,
"remember that…") and the filters that keep questions, hedges and hypotheticals out."""

from __future__ import annotations

import re

from .english_changes import EN_CHANGE_RULES, en_normalise, en_relative
from .english_endings import EN_ENDING_RULES
from .english_more import EN_MORE_RULES
from .english_named_passing import in_passing
from .english_notes import EN_BARE_JOB_RULES, EN_NOTE_RULES, prepare
from .english_passing import continuations
from .english_people import en_named_relations
from .english_phrasing import EN_PHRASING_RULES
from .english_reference import en_refer
from .english_rule_parts import en_pattern
from .english_rules import EN_RULES
from .english_text import QUOTED
from .english_updates import EN_UPDATE_RULES
from .english_values import WORD_AGE
from .english_voice import en_fact, is_content, team_fact, third_person, topic_from
from .shapes import SPACES, Draft, Language, Voice, cap, en_sentence

# --- English wrappers


_EN_NOW_ON = en_pattern(
    r"^(?P<marker>from\s+now\s+on|going\s+forward|moving\s+forward|from\s+here\s+on(?:\s+out)?|from\s+this\s+"
    r"point\s+(?:on|forward)|in\s+(?:the\s+)?future|henceforth|from\s+today\s+on|starting\s+(?:now|today)|"
    r"next\s+time|for\s+(?:all\s+)?future\s+(?:chats|conversations|sessions|answers|replies|responses))\b"
    r"[\s,:;\-]*(?:(?:you|u)\s+(?:can|could)\s+(?=answer|reply|respond|write|speak|talk|call)|feel\s+free\s+to\s+)?(?P<body>.*)$"
)
_EN_STRONG_CORRECTION = (
    en_pattern(
        r"^(?P<marker>correction|to\s+correct\s+(?:myself|that)|let\s+me\s+correct\s+(?:myself|that)|i\s+"
        r"misspoke|i\s+made\s+a\s+mistake|i\s+was\s+wrong|i\s+stand\s+corrected|(?:(?:sorry|oops|wait|no)[\s,!.]+)?"
        r"(?:i\s+(?:mixed|got|mix)\s+(?:that|it|them|those|things)\s+up|i\s+got\s+(?:that|it)\s+(?:wrong|mixed\s+up)|"
        r"scratch\s+that|my\s+bad|i\s+misremembered|i\s+mis-?typed|ignore\s+(?:that|what\s+i\s+said))|(?:(?:no|nope|sorry|oops|wait|"
        r"actually)[\s,!.]+)?(?:that's|that\s+is|that\s+was|thats)\s+(?:wrong|not\s+right|incorrect|not\s+"
        r"correct|not\s+true|a\s+mistake)|(?:sorry|oops)[\s,!.]+(?:i\s+)?(?:typo|mistyped|misspelled|meant\s+"
        r"to\s+say))\b[\s,:;.!\-–—]*(?P<body>.*)$"
    ),
    en_pattern(r"^(?P<marker>(?:(?:no|nope|sorry|oops|wait|actually)[\s,!.]+)*)(?P<body>i\s+meant\b.*)$"),
    # "Actually I should say pescatarian": what they are, said again right.
    en_pattern(
        r"^(?P<marker>(?:(?:no|sorry|oops|wait|actually|well)[\s,!.]+)*i\s+(?:should\s+(?:say|have\s+said)|"
        r"meant\s+to\s+say))\s+(?P<body>.+)$"
    ),
)
_EN_WEAK_CORRECTION = en_pattern(
    r"^(?P<marker>actually|no(?!\s+(?:longer|more)\b)|nope|wait|oops|sorry|not\s+quite|not\s+exactly)(?:\b[\s,:;.!\-]+|$)"
    r"(?P<body>.*)$"
)
_EN_CONTRAST = en_pattern(r",\s*not\s+\S|\binstead\s+of\b|\brather\s+than\b")
# "It's sulfa drugs I'm allergic to, not penicillin": a value said against another ("not far", "not
# only" are no values).
_EN_SETS_RIGHT = en_pattern(
    r",\s*not\s+(?!(?:far|only|just|too|that|this|very|really|much|many|sure|bad|great|a|an|the|to|in|at|for|"
    r"with|because|since|yet|anymore|any|ever|always|everyone|everything|all|as|so|even|me|him|her|them|us|you)\b)"
    r"[^\W\d_]"
)
_EN_REMEMBER = en_pattern(
    r"^(?:(?:please|pls|kindly|and|also|oh|hey|btw|can\s+you|could\s+you|would\s+you)[\s,]+)*"
    r"(?P<marker>remember|memori[sz]e|don't\s+forget|do\s+not\s+forget|never\s+forget|keep\s+in\s+mind|"
    r"bear\s+in\s+mind|note\s+that|please\s+note|make\s+a\s+note(?:\s+that)?|take\s+note(?:\s+that)?|"
    # "Can you remind me: the dentist is on the 12th": a statement to keep (a colon, not "remind me to…").
    r"remind\s+me(?=\s*:)|"
    # "reminder I'm allergic to shellfish", "Note I just moved to Glasgow": a fact to keep in mind.
    r"(?:quick\s+|friendly\s+|just\s+a\s+)?reminder(?:\s+that)?(?=\s*:|\s+(?:that|i|i'm|im|my|we|we're)\b)|"
    r"note(?=\s+(?:i|i'm|im|i've|ive|my)\b)|"
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
        r"you\s+to|you\s+should|you\s+must|you\s+need\s+to|you\s+have\s+to|you\s+will|you'll|you\s+can|u\s+can|"
        r"make\s+"
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


def _en_restate(body: str) -> str | None:
    """A correction's bare words ("pescatarian", "29", "a nurse") as what the speaker is."""
    words = body.strip().rstrip(".!").split()
    if not 1 <= len(words) <= 3 or _EN_CLAUSEY.search(body) or _EN_WH_START.match(body):
        return None
    return f"I'm {' '.join(words)}"


def _en_correction(body: str, voice: Voice) -> Draft | None:
    if not is_content(body) and not body.lower().startswith("it's"):
        return None
    if re.match(r"^(?:about|regarding|re)\b", body, re.IGNORECASE):
        return None  # "Ignore what I said about Leeds": taken back, nothing said instead
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


def _en_read(clause: str, voice: Voice) -> Draft | None:
    """One clause read by the English rules alone (no wrappers), in ``voice``."""
    clause = en_normalise(clause)
    for rule in ENGLISH.rules_for(clause):
        m = rule.pattern.match(clause)
        if m:
            draft = rule.handler(m, voice)
            if draft is not None:
                return draft
    return None


_GONE = re.compile(
    r"\b(?:died|passed(?:\s+away)?|rip|put\s+down|funeral|late|ex|former|old)\b", re.IGNORECASE
)


# Words that make what a clause names untrue or unsure: a joke, a wish, make-believe.
_IN_JEST = re.compile(
    r"\b(?:lol|lmao|haha+|jk|kidding|joking|joke|pretend|imagine|hypothetically|wish|dream|would|wanna|want|if\s+i\s+had)\b",
    re.IGNORECASE,
)


def _en_named_anyway(clause: str, voice: Voice) -> list[Draft]:
    """The relations a question or a clause with "if" names ("Any gift ideas for my wife Elena?",
    "my neighbour Herr Brandt asked if you know a dog trainer"): none said in jest or as a wish."""
    if _IN_JEST.search(clause) or _GONE.search(clause):
        return []
    return en_named_relations(clause, voice)


def _en_in_passing(clause: str, voice: Voice) -> list[Draft]:
    """Relations named in passing and the statements that follow a clause's first one, each once;
    a relation is not restated for someone a fact is already about."""
    named = [] if _GONE.search(clause) else en_named_relations(clause, voice)  # "my dog Rex died last year"
    drafts = named + continuations(clause, voice, _en_read) + in_passing(clause, voice, _en_read)
    about = {d.about.name for d in drafts if d.about is not None and d.about.name}
    seen: set[tuple[str | None, str | None, str | None]] = set()
    kept = []
    for draft in drafts:
        key = (
            draft.about.subject if draft.about else None,
            draft.attribute,
            (draft.value or draft.fact).lower(),
        )
        if key in seen or (draft.about is None and draft.value in about):
            continue
        seen.add(key)
        kept.append(draft)
    return kept


_NAME_AND_I = "(?=\\s)" + "".join(rf"(?<!^(?-i:[A-Z])[a-z]{{{n}}})" for n in range(1, 12))
_EN_AUX = (
    r"do|does|did|is|are|am|was|were|can|could|would|should|will|shall|have|has|had|may|might|isn't|"
    r"aren't|wasn't|weren't|doesn't|didn't|won't|wouldn't|can't|couldn't|shouldn't|haven't|hasn't|"
    r"don't"
)
ENGLISH = Language(
    name="en",
    rules=EN_ENDING_RULES
    + EN_NOTE_RULES
    + EN_CHANGE_RULES
    + EN_UPDATE_RULES
    + EN_MORE_RULES
    + EN_RULES
    + EN_PHRASING_RULES
    + EN_BARE_JOB_RULES,
    relative=en_relative,
    named_anyway=_en_named_anyway,
    refer=en_refer,
    in_passing=_en_in_passing,
    normalise=en_normalise,
    prepare=prepare,
    lead_in=en_pattern(
        # Said to be disbelieved ("sure, and I'm the Queen of England"), or text to work on ("translate: I
        # live in Madrid"): the whole sentence goes.
        r"^(?:sure|yeah|yes|right|oh\s+yeah|ok|okay|and)[\s,]+and\s+(?:i'm|im|i\s+am|my\s+name\s+is)\b.*$|"
        r"^(?:(?:please|pls|can\s+you|could\s+you)\s+)?(?:write|translate|draft|proofread|rewrite|rephrase|summari[sz]e|"
        r"fix|edit|correct|check|improve|polish|shorten|reword)\b[^:\n]{0,60}:.*$|"
        r"^(?:(?:oh|ah|um|uh|hmm|well|so+|ok|okay|alright|also|and|btw|by\s+the\s+way|just\s+so\s+(?:you|u)\s+know|"
        r"so\s+(?:you|u)\s+know|fyi|fwiw|lol|lmao+|ha(?:ha)+|hehe|ugh|omg|nah|guys|cool(?:\s+cool)?|tbf|to\s+be\s+fair|"
        r"long\s+story\s+short|(?:small|quick|little|life|big)\s+update|sorry\s+to\s+ramble(?:\s+but)?|basically|"
        r"(?:hi|hey|hello)\s+(?:all|everyone|guys|folks|team)|in\s+case\s+(?:it\s+matters|it\s+helps|it's\s+relevant|"
        r"(?:you're|you\s+are|you\s+were|u\s+were|ur)\s+wondering|you\s+need\s+to\s+know)|"
        r"now(?=\s+(?:i|i'm|im|i've|ive|we|we're)\b)|(?:since|as|because|cos|bc|seeing\s+as)(?=\s+(?:i'm|im|i\s+am|"
        r"i\s+live|i\s+work|we're|we\s+live)\b)|(?:i\s+)?(?:just\s+)?found\s+out(?:\s+that)?|turns\s+out(?:\s+that)?|"
        r"the\s+(?:big|good|great)\s+news\s+is(?:\s+that)?|"
        r"for\s+context|for\s+the\s+record|for\s+your\s+information|hi|hello|hey|yo|hiya|hi\s+there|hey\s+there|"
        r"hello\s+there|yeah|yes|yep|sure|anyway|anyways|plus|but|oh\s+and|great|thanks|thank\s+you|"
        r"quick\s+note|one\s+more\s+thing|side\s+note|fun\s+fact|(?:(?:some\s+)?(?:good|big|sad|bad|awful|terrible)\s+news"
        r"(?:\s+though)?)|"
        r"update|news|guess\s+what|"
        r"so\s+yeah|morning|good\s+morning|evening|finally|heads\s+up|honestly|tbh|ngl|lowkey|seriously|ok\s+so|"
        r"okay\s+so|oh\s+and|my\s+mistake|psst|new\s+chapter|life\s+update|change\s+of\s+plans?|guess\s+who|"
        r"(?:big|small|huge)\s+changes?|plot\s+twist|some\s+news|lots?\s+of\s+changes|"
        # Confirming what was asked, or owning up to it: "Correct, London-based.", "I must confess I…"
        r"correct\b|exactly\b|that's\s+(?:right|correct)\b|that\s+is\s+(?:right|correct)|i\s+must\s+(?:confess|admit|say)(?=\s+(?:i|my)\b)|"
        r"i\s+have\s+to\s+(?:confess|admit)(?=\s+(?:i|my)\b)|(?:i'm|i\s+am)\s+afraid(?=\s+(?:i|i'm|my)\b)|"
        r"since\s+\d{4}(?=\s+(?:i|we)\s+(?:live|work|have|stay)\b)|"
        # When it holds from, said before the statement: "Starting Monday, I'm…", "As of today I work…"
        r"(?:starting|from|as\s+of|since|beginning)\s+(?:(?:next|this|last)\s+)?(?:monday|tuesday|wednesday|thursday|"
        r"friday|saturday|sunday|today|tomorrow|week|month|year|january|february|march|april|may|june|july|"
        r"august|september|october|november|december)|(?:last|this)\s+(?:week(?:end)?|month|year|monday|tuesday|"
        r"wednesday|thursday|friday|saturday|sunday)|yesterday|today|recently|lately|anyway)(?:[\s,!.:;\-–—]+|$))+"
    ),
    names_previous=en_pattern(
        r"^(?:(?:her|his|its|their)\s+name(?:'s|\s+is)|(?:she|he|it)(?:'s|\s+is)\s+(?:called|named))\s+"
        r"(?P<name>(?-i:[A-Z])[\w'-]+)(?:[\s,;:–—-].*)?$"
    ),
    from_now=en_pattern(
        r"^(?:\w+[\s,!.:;\-]+){0,3}?(?:starting|from|as\s+of|beginning)\s+(?:(?:next|this)\s+)?(?:monday|tuesday|"
        r"wednesday|thursday|friday|saturday|sunday|today|tomorrow|week|month|january|february|march|april|may|"
        r"june|july|august|september|october|november|december)\b"
    ),
    question=en_pattern(
        rf"[?]\s*[\"')\]]*$|^(?:what|what's|whats|who|who's|whom|whose|where|where's|when|why|how|"
        rf"how's|which)\b|^(?:{_EN_AUX})\s+(?:i|you|we|he|she|it|they|my|your|our|the|this|that|"
        rf"there|these|those|anyone|someone|u)\b"
    ),
    hedge=en_pattern(
        r"\b(?:in\s+theory|let's\s+say|what\s+if|as\s+if|i\s+(?:think|guess|suppose|believe|wonder|feel\s+"
        r"like)|not\s+sure|(?:i|we|he|she|they)\s+used\s+to|at\s+this\s+point|(?:basically|pretty\s+much)(?!\s+(?:live|lives|survive|run)\s+on\b))\b|/s\b"
    ),
    hedge_words=frozenset(
        # "whether" is not here: "she'll tell you about it whether you ask or not" is said as fact; a
        # clause that starts with it is conditional (below).
        "if unless suppose supposing assuming assume imagine pretend hypothetically theoretically maybe "
        "perhaps probably possibly might wondering unsure wish kidding jk lol lmao rofl haha joking sarcasm".split()
    ),
    conditional=en_pattern(
        r"^(?:if|unless|whether|when|whenever|once|suppose|supposing|assuming|in\s+case|even\s+if|"
        r"as\s+long\s+as|let's\s+say|say)\b"
    ),
    clause_split=en_pattern(
        # "Ahmed and I got engaged": a name and "I" at the start are one subject, not two clauses.
        # "since I graduated" is when (kept), "since I'm diabetic" is why (a statement of its own).
        r"\s+since\s+(?=(?:i'm|im|i\s+am|i've|ive|i\s+have|i\s+live|i\s+work|my)\b)|"
        # ", so the trip is now on June 3": a plan's new date after the reason for it.
        # ", so normal bread is basically my enemy": the reason's consequence, a clause of its own.
        r"\s*,\s*so\s+(?!(?:much|many|far|long|that|to|as|i\s+(?:guess|think))\b)(?=(?:[\w'-]+\s+){2})|"
        r"(?:\s*,\s*|\s+)so\s+(?=(?:the|our|my)\s+(?:[\w'-]+\s+){0,3}?(?:is|are|was|has\s+been|got)\s+(?:now\s+)?"
        r"(?:on|moved|pushed|set|changed|rescheduled|postponed)\b)|"
        rf"(?:\s*[,;:–—]\s*(?:(?:and|but|so|also|plus|as)\s+)?|\s+-\s+|{_NAME_AND_I}\s+(?:and(?!\s+(?:what|how|why|who)\b)|"
        r"n|but|so|plus|because|cause|cos|bc|though|although)\s+)(?=(?!(?:i'm|im|i\s+am)\s+(?:now\s+)?(?:at|with)\b)(?:i|i'm|"
        r"i've|i'd|i'll|im|ive|my|we(?!')|we've|starting|"
        r"as\s+of|live\s+in|work\s+(?:at|for|as)|"
        # asides that close a statement: the laugh or the complaint after it is not part of it
        r"honestly|tbh|ngl|lowkey|that's\s+where|now\s+(?:i|i'm|im|i've|ive|we|we're)|"
        r"(?:still|already)\s+(?:can't|cant|cannot|can\s+not|don't|dont|no|not|haven't|havent|hasn't)|"
        # (not "…called Dougal, who is now eleven": who is that old)
        rf"what|what's|who(?!(?:'s|\s+is)\s+(?:now\s+)?(?:\d|{WORD_AGE}))|who's(?!\s+(?:now\s+)?(?:\d|{WORD_AGE}))|"
        r"how|where|where's|when|why|which|if|unless|do\s+you|can\s+you|could\s+you|"
        r"would\s+you|are\s+you|is\s+it|please|remember|don't\s+forget|from\s+now\s+on|going\s+forward|"
        r"(?:always|never)(?=\s+\w+\s)|call\s+me|remind\s+me|let's)\b)"
        # "Mia is 6 and Leo is 4", "…, Leo is 4": a named person's own statement after a comma or "and"
        r"|(?:\s*,\s*(?:and\s+)?|\s+and\s+)(?=(?-i:[A-Z][a-z]+)\s+(?:is|lives|works|turned|has)\s+\w)"
        # a question run on without a comma: "since I'm based in Nairobi what time is 3pm GMT for me"
        r"|\s+(?=(?:what|how|where|which)\s+(?:time|is|are|do|does|did|should|can|would|will)\b)"
    ),
    now_on=_EN_NOW_ON,
    strong_correction=_EN_STRONG_CORRECTION,
    weak_correction=_EN_WEAK_CORRECTION,
    contrast=_EN_CONTRAST,
    sets_right=_EN_SETS_RIGHT,
    remember=(_EN_REMEMBER,),
    render_now_on=_en_now_on,
    render_correction=_en_correction,
    restate=_en_restate,
    render_remember=_en_remember,
    # Asides that only close a statement: "I'm allergic to peanuts, by the way." Words that change
    # what is said ("too", "I guess", "lol") stay: they are evidence, and hedges drop the clause.
    trail_off=en_pattern(
        r"(?:(?:\s*[,;:\-–—]\s*|\s+)(?:by\s+the\s+way|btw|fyi|just\s+so\s+you\s+know|for\s+the\s+record|"
        r"for\s+what\s+it's\s+worth|for\s+your\s+information|tbh|ngl|to\s+be\s+honest)"
        r"|\s*[,;:\-–—]\s*(?:anyway|anyways|actually|though|you\s+know)"
        # "…, 37 years old, two dogs and too many patients haha": the laugh is at the last part only,
        # which goes with it; never one that takes the statement back ("…, not really lol").
        r"|\s*,\s*(?![^,]*\b(?:not|no|n't|never|kidding|joke|joking|jk|dreams?|wish|right|sure|yeah|as\s+if|"
        r"sarcasm|lie|lying|obviously|only|just|but|except)\b)[^,]{3,60}?\s+(?:lol|haha+|hehe|lmao))+[\s.!…~]*$"
    ),
    # Read once a sentence, before it is split: a polite request's "can you"; quoted words, which are
    # someone else's (a title, a pasted bio); a one-clause sentence asking something ("you're the
    # vegan one right?"), which states nothing.
    polite=en_pattern(
        r"^(?:can|could|would|will)\s+you\s+(?:please\s+)?(?=(?:remember|note|keep\s+in\s+mind|bear\s+in\s+"
        r"mind|call\s+me|remind\s+me|always|never|answer|reply|respond|write|speak|talk|stop|not|switch)\b)"
        # "I should be most grateful if you would reply in French": a request, not a condition
        r"|^i(?:'d|\s+would|\s+should)\s+be\s+(?:most\s+|very\s+|so\s+|really\s+)?grateful\s+if\s+you\s+(?:would|could)\s+"
        r"(?:please\s+)?(?=(?:answer|reply|respond|write|speak|talk|call\s+me|always|never)\b)"
        rf"|{QUOTED}|^(?!(?:can|could|would|will)\s+(?:you|u)\b)(?:(?!\s[-–—]\s)[^,;:\n—–])*\?[\s?!]*$"
    ),
)

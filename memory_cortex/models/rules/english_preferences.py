"""What someone likes, dislikes and uses, and what they can do, said in the first person ("I
prefer tea", "I can't stand jazz", "I'm a big fan of Arsenal", "I code in Rust", "I can play the
piano", "I speak Hindi and a bit of Marathi", "I'm good at chess"). ``speaks`` is shared with the
indirect phrasings ("I'm fluent in Portuguese", english_more)."""

from __future__ import annotations

import dataclasses
import re

from .english_rule_parts import ADV, IM, NOT_A_CLAUSE, en_rules, say
from .english_values import LANGUAGES, clean_value
from .english_voice import en_fact, is_content
from .shapes import Draft, Handler, Rule, Voice, en_sentence


def speaks(m: re.Match[str], voice: Voice) -> Draft | None:
    """'I speak Hindi and English at home and a bit of Marathi': one fact a language."""
    phrase = m["obj"]
    if not is_content(phrase):
        return None
    found = [w for w in re.findall(r"[^\W\d_]+", phrase) if w.lower() in LANGUAGES]
    if not found:
        value = clean_value(phrase)
        if not value or not re.match(r"(?-i:[A-Z])", value):
            return None  # "I speak fluent sarcasm"
        found = [value]
    drafts = [
        Draft(
            en_sentence(f"{voice.title} speaks {lang[:1].upper() + lang[1:]}"), "languages", "skill", 7
        ).stating("speaks", lang[:1].upper() + lang[1:])
        for lang in dict.fromkeys(found)
    ]
    first = dataclasses.replace(drafts[0], fact=en_fact(m.string, voice))
    return dataclasses.replace(first, also=tuple(drafts[1:]))


# What points at something before the speaker's eyes: "I love seeing them soaking in the sun like
# this", "I love all the yellow leaves, it looks so cozy", "I love the book even more" are reactions
# to a moment (a photo, a gift), not what they like.
_REACTION = re.compile(
    r"\b(?:this|these|those|them|even\s+more|it\s+(?:brings|gives|has|makes|looks))\b", re.IGNORECASE
)
# Where the liked object ends: "I love bouldering, it's the only exercise I don't hate".
_OBJECT_END = re.compile(r"\s*(?:[,;]|\s(?:but|and\s+i|because|since)\s)", re.IGNORECASE)


def lasting(handler: Handler) -> Handler:
    """``handler``, except for a liked or hated object (up to its clause's end) that is a reaction
    (:data:`_REACTION`)."""

    def read(m: re.Match[str], voice: Voice) -> Draft | None:
        liked = _OBJECT_END.split(m["obj"], maxsplit=1)[0]
        return None if _REACTION.search(liked) else handler(m, voice)

    return read


EN_PREFERENCE_RULES: tuple[Rule, ...] = en_rules(
    (
        # --- preferences
        (
            "I",
            rf"^i\s+{ADV}(?:prefer|like|love|adore|enjoy)\s+{NOT_A_CLAUSE}(?P<obj>.+)$",
            lasting(say("preference", 6, attribute="likes")),
        ),
        (
            "I",
            rf"^i\s+{ADV}(?:hate|dislike|detest|loathe|despise)\s+{NOT_A_CLAUSE}(?P<obj>.+)$",
            lasting(say("preference", 6, attribute="dislikes")),
        ),
        (
            "I",
            rf"^i\s+{ADV}(?:don't|do\s+not|dont)\s+(?:really\s+)?(?:like|love|enjoy|care\s+for)\s+(?P<obj>.+)$",
            say("preference", 6, attribute="dislikes"),
        ),
        (
            "I",
            rf"^i\s+{ADV}(?:don't|do\s+not|dont)\s+(?:ever\s+)?(?:want|use)\s+(?P<obj>.+)$",
            say("preference", 7),
        ),
        ("I", r"^i\s+(?:can't|cannot)\s+stand\s+(?P<obj>.+)$", say("preference", 6, attribute="dislikes")),
        (
            "I",
            r"^(?:i'd|i\s+would)\s+(?:much\s+)?(?:rather|prefer)\s+(?!not\s+(?:say|talk|discuss|answer|share|"
            r"go\s+into)\b)(?P<obj>.+)$",
            say("preference", 6),
        ),
        (
            "I",
            rf"^{IM}\s+not\s+(?:a\s+)?(?:big\s+|huge\s+|massive\s+|great\s+|real\s+)?fan\s+of\s+(?P<obj>.+)$",
            say("preference", 6, attribute="dislikes"),
        ),
        (
            "I",
            rf"^{IM}\s+(?:a\s+)?(?:big\s+|huge\s+|massive\s+|great\s+|real\s+)?fan\s+of\s+(?P<obj>.+)$",
            say("preference", 6, attribute="likes"),
        ),
        ("I", rf"^{IM}\s+(?:really\s+)?into\s+(?P<obj>.+)$", say("preference", 6, attribute="likes")),
        (
            "I",
            rf"^i\s+{ADV}(?:use|code\s+in|program\s+in|write\s+code\s+in|work\s+with|develop\s+(?:in|with))\s+"
            r"(?P<obj>.+)$",
            say("preference", 5),
        ),
    )
)

EN_SKILL_RULES: tuple[Rule, ...] = en_rules(
    (
        # --- skills
        (
            "I",
            r"^i\s+(?:can|know\s+how\s+to)\s+(?P<obj>(?:speak|code|program|play|cook|drive|swim|sing|dance|draw|"
            r"paint|ski|snowboard|surf|knit|sew|juggle|fly|touch[- ]type|read\s+music)\b.*)$",
            say("skill", 6),
        ),
        ("I", r"^i\s+know\s+how\s+to\s+(?P<obj>.+)$", say("skill", 6)),
        (
            "I",
            r"^i\s+(?:also\s+|fluently\s+|only\s+|mainly\s+|mostly\s+|still\s+)*speak\s+(?P<obj>.+)$",
            speaks,
        ),
        (
            "I",
            rf"^{IM}\s+(?:very\s+|pretty\s+|quite\s+|really\s+|fairly\s+|reasonably\s+)?(?:good|great|skilled|"
            r"proficient|fluent|experienced|an\s+expert|expert|competent|comfortable|decent|familiar)\s+"
            r"(?:at|in|with)\s+(?P<obj>.+)$",
            say("skill", 6),
        ),
        (
            "I",
            rf"^{IM}\s+(?:not\s+(?:very\s+)?good|bad|terrible|hopeless|new)\s+(?:at|with|to)\s+(?P<obj>.+)$",
            say("skill", 5),
        ),
        (
            "I",
            r"^(?:i\s+have|i've\s+got|i've\s+had|i\s+have\s+had)\s+\S+(?:\s+\S+)?\s+years?\s+of\s+experience\s+"
            r"(?:in|with|as|doing)\s+(?P<obj>.+)$",
            say("skill", 7),
        ),
    )
)

"""English statements of health and diet, and the other states a person is ("I'm allergic to
shellfish", "I have type 2 diabetes", "I'm vegan", "I can't eat gluten", "I'm left-handed",
"I'm retired"): tried before the generic "I'm a…" (english_identity), for they matter most."""

from __future__ import annotations

import re

from .english_rule_parts import IHAVE, IM, en_rules, say
from .english_text import plausible_allergen
from .english_values import clean_value
from .english_voice import en_fact, is_content
from .shapes import Draft, Rule, Voice


def allergy(m: re.Match[str], voice: Voice) -> Draft | None:
    """'I'm allergic to shellfish'; not 'allergic to Mondays' (a joke, not a substance)."""
    value = clean_value(m["obj"])
    if not is_content(m["obj"]) or not plausible_allergen(value):
        return None
    return Draft(en_fact(m.string, voice), "allergy", "identity", 9).stating("allergy", value)


EN_HEALTH_RULES: tuple[Rule, ...] = en_rules(
    (
        # --- health, diet: high importance, checked before the generic "I'm a…"
        (
            "I",
            rf"^{IM}\s+(?:very\s+|severely\s+|highly\s+|extremely\s+|deathly\s+|quite\s+|mildly\s+|also\s+)?"
            r"allergic\s+to\s+(?P<obj>.+)$",
            allergy,
        ),
        (
            "I",
            rf"^{IHAVE}\s+(?:a\s+|an\s+)?(?:severe\s+|serious\s+|mild\s+|bad\s+)?(?P<obj>[\w -]{{1,40}}?)\s+"
            r"allerg(?:y|ies)(?:\s*,.*|\s+(?:so|and|but|which|because)\b.*)?$",
            allergy,
        ),
        (
            "I",
            rf"^{IHAVE}\s+(?:an?\s+)?allerg(?:y|ies)\s+to\s+(?P<obj>.+)$",
            allergy,
        ),
        (
            "I",
            r"^i\s+(?:can't|cannot|can\s+not)\s+(?:eat|drink|have|tolerate|digest)\s+(?P<obj>.+)$",
            say("identity", 8, "diet"),
        ),
        (
            "I",
            r"^i\s+(?:don't|do\s+not|dont|never)\s+(?:eat|drink)\s+(?P<obj>.+)$",
            say("preference", 7, "diet"),
        ),
        (
            "I",
            rf"^{IM}\s+(?:a\s+|an\s+)?(?:strict\s+|also\s+|fully\s+|mostly\s+|just\s+|now\s+|still\s+)?(?P<obj>vegan|vegetarian|veggie|"
            r"pescatarian|pescetarian|plant[- ]based|keto|paleo|flexitarian|carnivore|teetotal(?:er|ler)?|halal|pure\s+veg|"
            r"kosher|gluten[- ]free|dairy[- ]free|lactose[- ]free)\b(?!-).*$",
            say("identity", 8, "diet", attribute="diet"),
        ),
        (
            "I",
            rf"^{IM}\s+(?:also\s+|severely\s+|very\s+)?(?P<obj>(?:lactose|gluten|dairy|fructose|histamine)[- ]"
            r"intolerant|celiac|coeliac|(?:type\s+[12]\s+)?diabetic|pre-?diabetic|asthmatic|epileptic|anemic|anaemic)\b.*$",
            say("identity", 8, "health", attribute="health"),
        ),
        (
            "I",
            rf"^(?:{IHAVE}|i(?:'ve|\s+have)\s+had|i(?:'ve|\s+have)\s+also\s+got|i\s+also\s+have)\s+(?P<obj>(?:type\s+[12]\s+)?diabetes|asthma|adhd|epilepsy|dyslexia|autism|"
            r"c[oe]?eliac\s+disease|crohn'?s(?:\s+disease)?|migraines|a\s+heart\s+condition|high\s+blood\s+"
            r"pressure|hypertension|tinnitus|colou?r\s*blindness|arthritis|dementia|alzheimer'?s|parkinson'?s|"
            r"ms|multiple\s+sclerosis|cancer|depression|anxiety|ibs|lupus|eczema|psoriasis|hypothyroidism|"
            r"sleep\s+apnea|ptsd|ocd|bipolar(?:\s+disorder)?|long\s+covid|fibromyalgia|endometriosis|pcos|"
            r"glaucoma|a\s+pacemaker|hearing\s+loss|heart\s+disease|kidney\s+disease|celiac|coeliac|"
            r"(?:a\s+)?(?:gluten|lactose|dairy)\s+intolerance|anemia|anaemia|scoliosis|osteoporosis|gout|(?:high\s+)?cholesterol|"
            r"sickle\s+cell(?:\s+disease)?|cystic\s+fibrosis|hiv|chronic\s+fatigue(?:\s+syndrome)?|fibro|cerebral\s+palsy|"
            r"down\s+syndrome|a\s+bad\s+back|sciatica|a\s+stammer|a\s+stutter|narcolepsy|insomnia|vertigo|tourette'?s|"
            # a condition by its kind: "macular degeneration", "Lyme disease", "a rare blood disorder"
            r"(?:an?\s+)?(?:(?:rare|chronic|genetic|autoimmune|heart|lung|liver|kidney|blood|thyroid|eye|skin|bone|"
            r"macular|celiac|coeliac|(?-i:[A-Z])[\w']+)\s+){1,2}(?:disease|syndrome|disorder|degeneration)|"
            r"cataracts?|copd|[a-z]+(?:itis|osis))\b.*$",
            say("identity", 8, "health", attribute="health"),
        ),
        (
            "I",
            rf"^{IM}\s+(?:also\s+|profoundly\s+|partially\s+)?(?P<obj>colou?r[- ]?blind|deaf|hard\s+of\s+hearing|blind|"
            r"autistic|dyslexic|dyspraxic)\b.*$",
            say("identity", 8, "health", attribute="health"),
        ),
        (
            "I",
            rf"^{IM}\s+(?P<obj>left[- ]handed|right[- ]handed|disabled|neurodivergent|married|single|divorced|widowed|"
            r"retired|unemployed|self[- ]employed)\b.*$",
            say("identity", 8),
        ),
    )
)

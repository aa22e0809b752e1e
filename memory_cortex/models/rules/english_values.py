"""The value of an English statement's attribute: the words that carry it ("Edinburgh", not
"Edinburgh last weekend!"), and the small word lists that say which attribute a value belongs to
(an occupation, a drink, a diet)."""

from __future__ import annotations

import re

_TIME = (
    r"(?:last|this|next|past)\s+(?:week(?:end)?|month|year|summer|winter|spring|autumn|fall|monday|tuesday|"
    r"wednesday|thursday|friday|saturday|sunday|night)|yesterday|today|tonight|tomorrow|recently|lately|"
    r"(?:a\s+(?:few|couple\s+(?:of)?)\s+|\w+\s+)(?:days?|weeks?|months?|years?)\s+ago|"
    r"(?:in|since|from|as\s+of|on)\s+(?:january|february|march|april|may|june|july|august|september|"
    r"october|november|december|monday|tuesday|wednesday|thursday|friday|saturday|sunday|\d{4})(?:\s+\d{1,2}(?:st|nd|rd|th)?)?"
)
_TRAILING = re.compile(
    rf"(?:[\s,;:–—-]+(?:{_TIME}|now|rn|atm|right\s+now|at\s+the\s+moment|these\s+days|originally|anymore|any\s+more|these\s+days|nowadays|for\s+good|for\s+now|"
    r"full[- ]time|part[- ]time|as\s+well|there|here|too|either|again|already|at\s+last|finally|haha|lol|somehow|mostly|"
    r"by\s+trade|btw|tbh|by\s+the\s+way|on\s+(?:the\s+)?weekends?|on\s+(?:mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun)(?:day)?s?|"
    r"though|actually|instead|apparently|i\s+guess)\b)+\s*$",
    re.IGNORECASE,
)
_CLOSING = " \t\n\r,;:.!…~-–—)\"'"
_EMOJI = re.compile(r"[\U0001F000-\U0001FAFF\u2600-\u27BF\uFE0F]+")
# A clause that follows the value and is not part of it ("Edinburgh, which is great", "Porto because…").
_AFTER = re.compile(
    r"\s*(?:,\s*|\s+)(?:which|who|where|because|since|so|but|and\s+(?:i|we|it|she|he|they)|as|when|while|"
    r"after|before|if|though|although|until|not|rather\s+than|instead\s+of)\b.*$|\s*,\s+.*$",
    re.IGNORECASE,
)
_ARTICLE = re.compile(r"^(?:a|an|the)\s+", re.IGNORECASE)


def clean_value(phrase: str | None, *, keep_article: bool = False) -> str | None:
    """The words of ``phrase`` that carry a value: without what closes the clause (time words,
    "now", "anymore", an emoji, a following "which…/because…" clause, closing punctuation) and,
    unless ``keep_article``, a leading article. None when nothing is left."""
    if phrase is None:
        return None
    text = _EMOJI.sub(" ", phrase)
    text = _AFTER.sub("", text).strip().rstrip(_CLOSING)
    previous = None
    while previous != text:
        previous = text
        text = _TRAILING.sub("", text).strip().rstrip(_CLOSING)
    if not keep_article:
        text = _ARTICLE.sub("", text)
    text = " ".join(text.split())
    return text or None


_UNITS = "one two three four five six seven eight nine".split()
_TEENS = "ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen".split()
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
WORD_AGE = rf"(?:(?:{'|'.join(_TENS)})(?:[- ](?:{'|'.join(_UNITS)}))?|{'|'.join(_TEENS)}|{'|'.join(_UNITS)}|a\s+hundred(?:\s+and\s+\w+)?)"
"""An age said in words ("seventy-eight", "eleven")."""

OCCUPATIONS = frozenset(
    """
    accountant actor actress administrator analyst anaesthetist anesthetist architect artist assistant
    astronaut attorney auditor baker banker barber barista bartender biologist blogger bookkeeper builder
    butcher captain carpenter cashier caretaker ceo cfo chef chemist cleaner clerk coach consultant cook
    counsellor counselor courier cto curator dancer dentist designer detective developer dietitian
    director doctor driver economist editor electrician engineer entrepreneur farmer firefighter
    fisherman florist founder freelancer gardener geologist graphic hairdresser historian illustrator
    instructor intern investor janitor journalist judge lawyer lecturer librarian lifeguard linguist
    machinist manager marketer mathematician mechanic midwife miner musician nanny nurse nutritionist
    officer optician optometrist painter paralegal paramedic pharmacist photographer physician
    physicist physio physiotherapist pilot plumber poet policeman policewoman politician postman
    producer professor programmer psychiatrist psychologist publisher radiographer receptionist
    recruiter reporter researcher salesman saleswoman salesperson scientist secretary singer
    sociologist soldier solicitor statistician student surgeon surveyor tailor teacher technician
    therapist trainer translator tutor vet veterinarian waiter waitress welder writer youtuber
    streamer engineer coder podcaster copywriter carer caregiver housekeeper nursery controller
    coordinator specialist strategist planner advisor adviser inspector principal dean executive
    administrator registrar consultant technologist architect sommelier butler concierge
    dev sparky electrician cabbie potter picker lead medic gp hygienist sonographer osteopath chiropractor
    plasterer roofer joiner decorator labourer laborer porter influencer tester steward stewardess attendant
    actuary underwriter broker trader buyer strategist planner presenter animator headteacher principal archivist
    zookeeper ranger landscaper postie trucker bouncer sailor doula registrar housewife homemaker sysadmin
    apprentice trainee teller dispatcher cardiologist dermatologist paediatrician pediatrician midwife cook
    chef sous barista mechanic creative technologist administrator coordinator supervisor inspector warden
    agent headmistress headmaster associate solicitor barrister paralegal
    firefighter paramedic optometrist physio radiologist pharmacist childminder cleaner receptionist
    """.split()
)
"""Head nouns of occupations: "I'm a clinical trainer" is a job; "I'm a night owl" is not."""

DRINKS = frozenset(
    """
    coffee tea rooibos matcha espresso latte lattes cappuccino americano decaf chai water kombucha
    cocoa chocolate juice smoothies smoothie soda cola beer wine whisky whiskey gin oat flat white
    mocha macchiato cortado yerba mate kefir milk lemonade sparkling coke pepsi sprite fanta lucozade squash
    cordial cuppa cuppas brew tisane horlicks ovaltine chocolate earl grey assam darjeeling oolong sencha hojicha
    genmaicha peppermint chamomile camomile redbush lapsang rooibos monster redbull
    """.split()
)
"""Words a usual drink is made of ("green tea", "oat flat white")."""

DIETS = re.compile(
    r"^(?:(?:a|an|strict|fully|completely|mostly|strictly)\s+)*(?:vegan|vegetarian|veggie|pescatarian|pescetarian|"
    r"plant[- ]based|keto|paleo|carnivore|flexitarian|halal|kosher|gluten[- ]free|dairy[- ]free|lactose[- ]free|pure\s+veg|"
    r"low[- ]carb|teetotal(?:er|ler)?)\b(?!-)",
    re.IGNORECASE,
)
"""What a diet is called ("I'm vegan", "I went plant-based")."""


_OCCUPATION_STEMS = OCCUPATIONS | {w.rstrip("s") for w in OCCUPATIONS}
_JOB_SUFFIX = re.compile(r"(?:ologist|ician|ographer|iatrist|ographer)s?$")
_MULTIWORD_JOBS = re.compile(
    r"(?:stay[- ]at[- ]home\s+(?:mum|mom|dad|parent|mother|father)|full[- ]time\s+(?:mum|mom|dad|parent)|"
    r"(?:social|support|care|youth|case|key|aid|sex|charity)\s+worker|flight\s+attendant|cabin\s+crew|"
    r"teaching\s+assistant|personal\s+trainer|(?:estate|travel|letting)\s+agent|civil\s+servant|police\s+officer|"
    r"shop\s+assistant|lab\s+tech|junior\s+doctor|head\s+of\s+[\w&]+(?:\s+[\w&]+)?)s?\b"
)
_HEAD_END = re.compile(
    r"\s+(?:at|for|in|with|from|of|on|by|up|down|over|near|based)\s+.*$|\s+(?:too|now|again|somehow|mostly|"
    r"though|there|here|these\s+days|nowadays|as\s+well|by\s+trade|full[- ]time|part[- ]time)$",
    re.IGNORECASE,
)


ORG_WORD = re.compile(
    r"(?:\b(?-i:[A-Z]{2,6})\b|\b(?:hospital|bank|university|college|school|clinic|group|ltd|limited|inc|plc|gmbh|"
    r"corp|corporation|company|airways|airlines|telecom|foods|motors|labs|technologies|solutions|systems|"
    r"consulting|partners|insurance|pharma|council|ministry|agency)\s*$)",
    re.IGNORECASE,
)
"""What ends an organisation's name ("Apollo Hospital", "Access Bank", "Comarch Ltd"), or an acronym."""


def is_occupation(phrase: str) -> bool:
    """Whether ``phrase`` ("a clinical trainer at Medisim", "software engineer") names a job: its
    head noun, before an "at/for/in …", is an occupation."""
    head = phrase.strip()
    previous = None
    while previous != head:
        previous, head = head, _HEAD_END.sub("", head)
    head = head.lower()
    if _MULTIWORD_JOBS.search(head) or _MULTIWORD_JOBS.match(phrase.strip().lower()):
        return True
    words = re.findall(r"[a-z]+", head)
    return bool(words) and (words[-1].rstrip("s") in _OCCUPATION_STEMS or bool(_JOB_SUFFIX.search(words[-1])))


_NOT_IN_A_JOB = frozenset(
    """by on to from at in for with and or this that it is was are am be been will would can me you now the a an i i'm
    im my your his her our their he she we they""".split()
)


def plain_job(job: str) -> bool:
    """Whether ``job`` is a job's name and nothing more: "engineering manager", "Head of Data"; not
    "lead on this", "artist by weekend"."""
    words = job.split()
    return bool(words) and not any(
        w.lower() in _NOT_IN_A_JOB
        or (w.lower() == "of" and i + 1 < len(words) and words[i + 1][:1].islower())
        for i, w in enumerate(words)
    )


def job_and_employer(phrase: str) -> tuple[str, str | None]:
    """ "clinical trainer at Medisim" → ("clinical trainer", "Medisim"); without an employer, the job
    alone (articles dropped)."""
    parts = re.split(r"\s+(?:at|for|with)\s+(?=[A-Z0-9]|the\s+[A-Z])", phrase.strip(), maxsplit=1)
    # "a barista at a cafe", "an HR manager at a small charity": the job, not the unnamed place
    head = re.sub(r"\s+(?:at|for|with|in)\s+(?:a|an|the|my)\s+(?-i:[a-z]).*$", "", parts[0])
    job = clean_value(head) or parts[0]
    employer = clean_value(parts[1], keep_article=True) if len(parts) > 1 else None
    if employer and not re.match(r"[A-Z0-9]|the\s+[A-Z]", employer):
        employer = None  # "for a living", "at home": no organisation named
    return job, employer


_AMOUNT = re.compile(
    r"^(?:(?:loads|lots|tons|gallons|buckets)\s+of|a\s+lot\s+of|(?:way|far)\s+too\s+much|too\s+much|so\s+much|a\s+ton\s+of|"
    r"copious\s+amounts\s+of)\s+",
    re.IGNORECASE,
)


def drink_value(phrase: str | None) -> str | None:
    """'loads of tea, like 6 cups a day' → 'tea'."""
    value = clean_value(phrase)
    return clean_value(_AMOUNT.sub("", value)) if value else None


def is_drink(phrase: str) -> bool:
    words = re.findall(r"[a-z]+", phrase.lower())
    return bool(words) and len(words) <= 4 and any(word in DRINKS for word in words)


LANGUAGES = frozenset(
    """
    english spanish french german italian portuguese dutch swedish norwegian danish finnish polish czech
    slovak hungarian romanian bulgarian greek turkish russian ukrainian arabic hebrew persian farsi hindi
    urdu bengali punjabi tamil telugu marathi gujarati japanese chinese mandarin cantonese korean
    vietnamese thai indonesian malay tagalog filipino swahili amharic yoruba igbo zulu afrikaans welsh irish
    catalan basque galician croatian serbian bosnian slovenian lithuanian latvian estonian icelandic
    esperanto latin
    """.split()
)
"""Languages by name: "answer in Spanish", "I speak Welsh"."""

NATIONALITIES = frozenset(
    """
    american british english scottish welsh irish canadian australian mexican brazilian argentinian
    chilean colombian peruvian venezuelan cuban spanish portuguese french german italian dutch belgian
    swiss austrian danish swedish norwegian finnish icelandic polish czech slovak hungarian romanian
    bulgarian greek turkish russian ukrainian belarusian serbian croatian bosnian slovenian albanian
    lithuanian latvian estonian israeli lebanese syrian iraqi iranian persian saudi emirati egyptian
    moroccan algerian tunisian nigerian ghanaian kenyan ethiopian somali ugandan tanzanian south african
    zimbabwean indian pakistani bangladeshi nepali sri lankan afghan chinese japanese korean taiwanese
    vietnamese thai filipino indonesian malaysian singaporean cambodian mongolian kiwi jamaican
    """.split()
)
"""What "I'm Brazilian" says: where someone is from, not their name."""

NOT_A_NAME = (
    "(?!(?:" + "|".join(sorted((re.escape(n) for n in NATIONALITIES), key=len, reverse=True)) + r")\b)"
)
"""A lookahead: the capitalised word that follows is not a nationality ("my mum's Brazilian" names no one)."""

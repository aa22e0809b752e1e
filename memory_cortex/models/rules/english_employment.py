"""Where someone works and as what, said the indirect way: "been at Deloitte for three years",
"been with Infosys since I graduated", "I'm at Unilever, in marketing", "working at Tesco as a
shift lead", "I work in HR", "I'm the head chef at Nonna's", "a plumber by trade".
``employer_draft`` (the employer's fact, or None where no organisation is named: "home",
"myself") is shared with the updates (english_updates), ``works_as`` with the other indirect
phrasings (english_more)."""

from __future__ import annotations

import dataclasses
import re

from .english_rule_parts import IM, ORG, article, en_rules
from .english_text import NOT_ORGS, lowercase_org
from .english_values import clean_value, is_occupation
from .english_voice import en_fact, topic_from
from .shapes import Draft, Rule, Voice, en_sentence

_ADV = r"(?:(?:just|also|still|now|currently|finally|officially|actually|really|proudly|happily|technically)\s+)*"
_DURATION = (
    r"(?:(?:for\s+)?(?:about\s+|almost\s+|nearly\s+|over\s+|like\s+)?(?:\d+|a|an|one|two|three|four|five|six|seven|"
    r"eight|nine|ten|eleven|twelve|fifteen|twenty|a\s+few|a\s+couple(?:\s+of)?|several)\s+(?:years?|yrs?|months?)|"
    r"since\s+\S+)"
)
_DEPARTMENTS = frozenset(
    """marketing sales finance hr it legal compliance operations ops logistics engineering product design research
    admin accounts accounting audit tax consulting recruitment procurement communications comms pr security
    data analytics strategy insurance banking retail hospitality healthcare education publishing construction
    tech software media advertising pharma teaching nursing journalism fashion events transport manufacturing
    energy payroll quality qa testing support""".split()
)


def employer_draft(org: str | None, voice: Voice, fact: str | None = None) -> Draft | None:
    employer = clean_value(org, keep_article=True) if org else None
    if not employer or not re.match(r"[A-Z0-9]|the\s+[A-Z]|[a-z][\w&'.-]*$", employer):
        return None
    if employer.lower() in NOT_ORGS or employer.split()[0].lower() in NOT_ORGS:
        return None
    text = fact or en_sentence(f"{voice.title} works at {employer}")
    return Draft(text, "employer", "identity", 8).stating("employer", employer)


def _with_job(draft: Draft | None, job: str | None, voice: Voice) -> Draft | None:
    job = clean_value(job) if job else None
    if draft is None or not job or not (is_occupation(job) or job.lower() in _DEPARTMENTS):
        return draft
    extra = Draft(en_sentence(f"{voice.title} works as {article(job)}"), "job", "identity", 8).stating(
        "job", job
    )
    return dataclasses.replace(draft, also=(*draft.also, extra))


def _been_at(m: re.Match[str], voice: Voice) -> Draft | None:
    """'I've been at Deloitte for three years', 'been with Infosys since I graduated'."""
    draft = employer_draft(m["org"], voice, en_fact(m.string, voice))
    return _with_job(draft, m.groupdict().get("job"), voice)


def _works_for(m: re.Match[str], voice: Voice) -> Draft | None:
    """'I fly for Aer Lingus', "I'm driving for Uber evenings now, so…": the employer, said alone."""
    said = re.split(r"\s*[,;]|\s+(?:so|and|but|because)\b", m.string, maxsplit=1)[0]
    return employer_draft(m["org"], voice, en_fact(said, voice))


def _at_org(m: re.Match[str], voice: Voice) -> Draft | None:
    """'I'm at Unilever, in marketing', 'I'm at a tiny startup called Verdana now', 'working in TCS as a
    business analyst', 'I work for Shell as a process engineer'."""
    job = clean_value(m.groupdict().get("job") or "")
    if m.groupdict().get("at") and not (job and is_occupation(job)):
        return None  # "I'm at Costa as usual": where they are, not where they work
    low = m.groupdict().get("low")  # "i work at stripe as…": a name a chat writes in lower case
    org = m["org"] or (low if low and lowercase_org(low) else None)
    draft = employer_draft(org, voice, en_fact(m.string, voice))
    dept = (m.groupdict().get("dept") or "").strip()
    if draft is not None and dept.lower() in _DEPARTMENTS:
        job = Draft(en_sentence(f"{voice.title} works in {dept}"), "job", "identity", 7).stating("job", dept)
        draft = dataclasses.replace(draft, also=(*draft.also, job))
    return _with_job(draft, m.groupdict().get("job"), voice)


def _works_in(m: re.Match[str], voice: Voice) -> Draft | None:
    """'I work in HR': a line of work; 'I work in TCS': an employer (an acronym, not a department)."""
    what = clean_value(m["what"]) or ""
    if what.lower() in _DEPARTMENTS:
        return Draft(en_fact(m.string, voice), "job", "identity", 7).stating("job", what)
    if re.fullmatch(r"(?-i:[A-Z]{2,6})", what):
        return _with_job(
            employer_draft(what, voice, en_fact(m.string, voice)), m.groupdict().get("job"), voice
        )
    return None


def _the_job_at(m: re.Match[str], voice: Voice) -> Draft | None:
    """'I'm the head chef at Nonna's'."""
    job = clean_value(m["job"])
    if not job or not is_occupation(job):
        return None
    draft = Draft(en_fact(m.string, voice), topic_from(job, "job"), "identity", 8).stating("job", job)
    employer = employer_draft(m["org"], voice) if m["org"] else None
    return dataclasses.replace(draft, also=(employer,)) if employer else draft


def _by_trade(m: re.Match[str], voice: Voice) -> Draft | None:
    job = clean_value(m["job"])
    if not job or not is_occupation(job):
        return None
    return Draft(en_sentence(f"{voice.title} is {article(job)} by trade"), "job", "identity", 8).stating(
        "job", job
    )


def works_as(m: re.Match[str], voice: Voice) -> Draft | None:
    """ "my mum works at the hospital as a nurse": a job, at no organisation named."""
    job = clean_value(m["job"])
    if not job or not is_occupation(job):
        return None
    return Draft(en_fact(m.string, voice), topic_from(job, "job"), "identity", 8).stating("job", job)


EN_EMPLOYMENT_RULES: tuple[Rule, ...] = en_rules(
    (
        # --- where they work, said the indirect way
        (
            "I",
            rf"^i(?:'ve|\s+have)\s+(?:been\s+)?(?:at|(?:working|worked|employed)\s+(?:at|for|with))\s+"
            rf"(?P<org>(?!(?:home|work|uni|university|college|school|it|this|the\s+(?-i:[a-z]))\b)[\w&'.-]+"
            rf"(?:\s+(?-i:[A-Z&])[\w&'.-]*){{0,3}})\s+{_DURATION}\b.*$",
            _been_at,
        ),
        (
            "I",
            rf"^i(?:'ve|\s+have)\s+been\s+with\s+{ORG}\s+since\s+(?:\d{{4}}|i\s+graduated|graduating|uni|university|"
            r"college|school|i\s+left)\b(?:\s*[,;]\s*(?:doing|as|in)\s+(?:a\s+|an\s+)?(?P<job>[\w\s-]{2,30}?)"
            r"(?:\s+mostly|\s+mainly)?)?(?:\s*[,;].*)?$",
            _been_at,
        ),
        (
            "since",
            rf"^since\s+(?:\d{{4}}|uni|university|college|i\s+graduated)\s*,?\s+(?:at|with)\s+{ORG}(?:\s*[,;].*)?$",
            _been_at,
        ),
        (
            "I",
            rf"^{IM}\s+(?:now\s+)?(?:at|with)\s+{ORG}\s*,\s*in\s+(?P<dept>[a-z][\w&-]*(?:\s+[a-z][\w&-]*)?)"
            r"(?:\s*[,;].*)?$",
            _at_org,
        ),
        (
            "I",
            # "I'm at Deloitte, mostly audit work for the mining clients": the work done there
            rf"^{IM}\s+(?:now\s+)?(?:at|with)\s+{ORG}\s*,\s*(?:mostly|mainly|largely)\s+(?!some\b)(?:[\w&-]+\s+){{0,3}}?"
            r"(?:work|projects?|stuff|things)\b.*$",
            _at_org,
        ),
        (
            "I",
            rf"^{IM}\s+(?:now\s+)?(?:at|with)\s+(?:a|an)\s+(?:[\w-]+\s+){{0,4}}?(?:startup|start-up|company|firm|"
            rf"agency|charity|bank|studio|consultancy|school|hospital|business)\s+(?:called|named)\s+{ORG}.*$",
            _at_org,
        ),
        (
            "I",
            # "I'm at Stanbic Bank as head of internal audit", "i work at stripe as a software tester (QA)"
            rf"^(?:{IM}\s+(?:currently\s+)?working|i\s+(?:currently\s+)?work|(?P<at>{IM})(?:\s+now)?(?=\s+at\b))\s+(?:nights\s+|"
            rf"days\s+|shifts\s+|weekends\s+)?(?:at|for)\s+(?:the\s+)?(?:{ORG}|(?P<low>(?-i:[a-z])[\w&'.-]+))"
            r"(?:\s+(?:warehouse|store|shop|branch|office|factory|depot|site|plant))?(?:\s+(?:since|for)\s+[\w\s]+?)?"
            r"\s+as\s+(?:(?:a|an|the)\s+)?(?P<job>[\w\s-]{2,40}?)(?:\s*\([^()]{1,30}\))?"
            r"(?:\s*[,;.].*|\s+(?:since|for|and|but|so)\b.*)?$",
            _at_org,
        ),
        (
            "I",
            # "I fly for Aer Lingus", "I drive for Uber": the work said by what is done
            rf"^(?:i|{IM})\s+(?:(?:currently|now|still|actually)\s+)?(?:fly|drive|teach|play|code|consult|freelance|"
            rf"nurse|deliver|flying|driving|teaching|playing|coding|consulting|freelancing|nursing|delivering)\s+for\s+"
            rf"{ORG}(?:\s+(?:evenings|weekends|nights|mornings|part[- ]time|full[- ]time))?"
            r"(?:\s*[,;.].*|\s+(?:now|since|and|but|so)\b.*)?$",
            _works_for,
        ),
        (
            "I",
            rf"^(?:i\s+(?:currently\s+)?work|{IM}\s+(?:currently\s+)?working)\s+in\s+(?P<what>[\w&]+)(?:\s+(?:since|for)\s+\S+)?(?:\s+as\s+(?:a|an)\s+(?P<job>[\w\s-]{{2,40}}))?(?:\s*[,;].*)?$",
            _works_in,
        ),
        (
            "I",
            rf"^{IM}\s+{_ADV}the\s+(?P<job>[\w\s-]{{2,30}}?)\s+(?:at|for|of)\s+(?:{ORG}|(?:a|an)\s+[a-z][\w\s-]*?)"
            r"(?:\s*[,;].*|\s+(?:and|but|so|since)\b.*)?$",
            _the_job_at,
        ),
        (
            None,
            rf"^(?:{IM}\s+(?:a|an)\s+)?(?P<job>[\w-]+(?:\s+[\w-]+)?)\s+by\s+(?:trade|profession)\b.*$",
            _by_trade,
        ),
    )
)

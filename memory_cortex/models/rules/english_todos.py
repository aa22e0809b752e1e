"""What someone decided and what they must do, said in the first person: decisions ("we've
decided to go with Postgres", "let's use Rust") and to-dos and reminders ("I need to renew my
passport", "remind me to call Mum", "todo: file taxes", "don't let me forget the tickets")."""

from __future__ import annotations

import re

from .english_rule_parts import IM, en_rules, say
from .english_voice import en_fact, is_content, team_fact, third_person, topic_from
from .shapes import Draft, Rule, Voice, en_sentence

_TRIVIAL_TASK = re.compile(
    r"^(?:go|leave|sleep|run|rest|eat|wait|pee|wake\s+up|head\s+out|log\s+off|sign\s+off|hurry|"
    r"get\s+going|think|focus|stop|relax|breathe|calm\s+down)\b(?:\s+\w+)?$|"
    r"^(?:know|understand|ask|say|tell\s+you|admit|confess|clarify|mention|be\s+honest|think|"
    r"apologi[sz]e|point\s+out|figure\s+out\s+what|see\s+(?:if|what|how))\b",
    re.IGNORECASE,
)


def _todo(m: re.Match[str], voice: Voice) -> Draft | None:
    task = m["task"].strip()
    if len(task.split()) < 2 or _TRIVIAL_TASK.match(task) or not is_content(task):
        return None
    fact = team_fact(m.string, voice) if m["who"].lower() == "we" else en_fact(m.string, voice)
    return Draft(fact, topic_from(task, "todo"), "todo", 6)


def _remind_me(m: re.Match[str], voice: Voice) -> Draft | None:
    task = m["task"].strip()
    if re.match(r"(?:what|how|where|who|why|which|whether|when\s+we|of\s+what|about\s+what)\b", task, re.I):
        return None  # "remind me what we said": a request to recall, not a reminder
    body = third_person(task, voice, named=True)
    topic = topic_from(re.sub(r"^(?:to|that|about|of)\s+", "", task, flags=re.I), "reminder")
    return Draft(en_sentence(f"{voice.title} wants to be reminded {body}"), topic, "todo", 7)


def _todo_note(m: re.Match[str], voice: Voice) -> Draft | None:
    task = m["task"].strip()
    if not is_content(task):
        return None
    return Draft(
        en_sentence(f"To-do for {voice.subject}: {third_person(task, voice, named=True)}"),
        topic_from(task, "todo"),
        "todo",
        6,
    )


def _dont_let_me_forget(m: re.Match[str], voice: Voice) -> Draft | None:
    task = m["task"].strip()
    if not is_content(task):
        return None
    prep = (m["prep"] or "about").lower()
    return Draft(
        en_sentence(f"{voice.title} wants to be reminded {prep} {third_person(task, voice, named=True)}"),
        topic_from(task, "reminder"),
        "todo",
        7,
    )


def _decision(m: re.Match[str], voice: Voice) -> Draft | None:
    if not is_content(m["obj"]):
        return None
    team = m.string.lower().startswith("we")
    fact = team_fact(m.string, voice) if team else en_fact(m.string, voice)
    obj = re.sub(r"^(?:to|on|that|for|against|not\s+to)\s+", "", m["obj"].strip(), flags=re.I)
    return Draft(fact, topic_from(obj, "decision"), "decision", 7)


def _lets(m: re.Match[str], voice: Voice) -> Draft | None:
    if not is_content(m["obj"]):
        return None
    fact = en_sentence(
        f"{voice.title} decided to {m['verb'].lower()} {third_person(m['obj'], voice, named=True)}"
    )
    return Draft(fact, topic_from(m["obj"], "decision"), "decision", 6)


EN_DECISION_RULES: tuple[Rule, ...] = en_rules(
    (
        # --- decisions
        (
            "I we we've",
            r"^(?:i|we)(?:'ve|\s+have)?\s+(?:just\s+|finally\s+|already\s+|now\s+)?(?:decided|chosen|chose|settled"
            r"\s+on|opted|committed)\b\s*(?P<obj>.+)$",
            _decision,
        ),
        ("I we're we", rf"^(?:{IM}|we're|we\s+are)\s+going\s+(?:to\s+go\s+)?with\s+(?P<obj>.+)$", _decision),
        (
            "let's",
            r"^let's\s+(?P<verb>go\s+with|use|stick\s+with|stay\s+with|switch\s+to|settle\s+on)\s+(?P<obj>.+)$",
            _lets,
        ),
        (
            "I",
            r"^i(?:'ll|\s+will)\s+(?:go\s+with|stick\s+with|switch\s+to)\s+(?P<obj>.+)$",
            say("decision", 6),
        ),
    )
)

EN_TODO_RULES: tuple[Rule, ...] = en_rules(
    (
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
    )
)

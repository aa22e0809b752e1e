"""The reader of a Chinese clause: its comma-separated parts in turn, a part without a subject read as
said by whoever the clause began with ("我是上海人，会说上海话": origin and speaks; "我从腾讯离职了，现在在美团":
employer = 美团)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from .chinese_facts import (
    END,
    REL,
    T,
    is_relative,
    org_name,
    render,
    zh_clean,
    zh_fact,
)
from .chinese_rules import NAME_V, PARTICLE, ZH_FACT_RULES
from .cjk_values import (
    is_drink,
    is_name,
    relation_of,
    with_also,
)
from .shapes import Draft, Rule, Voice, cjk_sentence

# After a change of job ("我从腾讯离职了，", "我换工作了，"): "现在在美团" is where they work now.
_WORK_CHANGE = re.compile(
    r"离职|離職|辞职|辭職|换工作|換工作|跳槽|换了工作|換了工作|转行|轉行|不在|不是在|离开|離開"
)
_NOW_AT = re.compile(rf"^我{T}(?:是在|在|去了|到了|加入了?)(?P<org>[^，,]+?)(?:了)?{END}$")
_PET_NAMED = re.compile(
    rf"^(?:我)?(?:给它|給它|给牠|給牠)?(?:(?:取名|起名)(?:叫|为|為)?|名字(?:叫|是)|叫){NAME_V}{PARTICLE}$"
)
_HAS_RELATION = re.compile(
    rf"^我.{{0,8}}?(?:有|添了|生了|养了|養了|换了|換了|交了|来了|來了)(?:一|两|兩|\d)?(?:个|個|位|只|隻|条|條)?(?:新的?)?"
    rf"(?P<rel>{REL})$"
)
_DAILY = re.compile(
    r"^(?:我)?(?:每天|天天|每日|早上|每早|每天早上)(?:都)?(?:要|会|會)?(?:喝)?(?:一|两|兩|1|2)?(?:杯|瓶)?$"
)
# After an employer ("…在字节跳动，"): what they do there ("做推荐算法", "负责海外市场").
_DOES = re.compile(
    r"^(?:现在|現在|目前|主要)?(?:做|负责|負責|搞|当|當)"
    r"(?P<job>(?!饭|飯|菜|作业|作業|家务|家務|运动|運動|梦|夢)[^，,的了过過着著很太挺真不没沒好难難吗嗎呢]{2,8})$"
)
_REMEMBER_TAIL = re.compile(
    r"^(?:请|請|帮我|幫我|你)?(?:记一下|記一下|记住|記住|记着|記著|记下来?|記下來?|记得|記得)(?:哦|喔|啊|吧)?$"
)
_CONNECTIVE = re.compile(r"^(?:不过|不過|但是|但|可是|而且|并且|並且|所以|然后|然後|同时|同時|另外)")
_NO_CARRY = re.compile(r"认识|認識|遇到|见到|見到|有个|有個|有一个|有一個|有位|有些|来了个|來了個|他|她")
_SUBJECT = re.compile(r"^我(?![们們])")


def zh_read(clause: str, voice: Voice, fallback: Sequence[Rule] = ()) -> Draft | None:
    """A clause's facts: each comma-separated part read in turn, a part without a subject read as said
    by whoever the clause began with; the first fact carries the others. ``fallback``: rules for a
    first part no statement above recognised (a decision, a to-do)."""
    parts = [part.strip() for part in re.split(r"[，,]", clause) if part.strip()]
    if not parts:
        return None
    # "我室友叫阿May，是…" is read as the roommate's (the relative hook), not the speaker's.
    carry = bool(_SUBJECT.match(parts[0])) and not _NO_CARRY.search(parts[0])
    carry = carry and not re.match(rf"^我(?:的|家的?)?{REL}", parts[0])
    drafts: list[Draft] = []
    before: re.Match[str] | str = ""  # what the previous part leaves open: a relation, a change of job…
    important = recognised = False
    for i, part in enumerate(parts):
        if i and _REMEMBER_TAIL.match(part):
            important = True  # "我青霉素过敏，记一下"
            continue
        text = part
        if i:
            text = _CONNECTIVE.sub("", text) or text
            if carry and not _SUBJECT.match(text):
                text = "我" + text
        if i and _continues(part, text, before, drafts, voice):
            continue
        draft, matched = _read_part(text, voice)
        if (
            draft is None
            and i
            and before == "work"
            and (now := _NOW_AT.match(text))
            and (org := org_name(now["org"]))
        ):
            draft, matched = zh_fact(text, voice, "identity", 8, "工作单位", "employer", org), True
        if draft is not None and draft.attribute == "name" and i and carry and "名" not in parts[0]:
            draft = None  # "…，叫悠悠" after a part about someone else names them, not the speaker
        recognised = recognised or matched
        if draft is not None:
            drafts.append(draft)
        before = _left_open(part, draft)
    if not drafts and not recognised and fallback and not is_relative(voice):
        for rule in fallback:
            m = rule.pattern.match(parts[0]) if len(parts) > 1 else rule.pattern.match(clause)
            if m and (draft := rule.handler(m, voice)) is not None:
                drafts.append(draft)
                break
    if important:
        drafts = [draft.at_least(7, step=1) for draft in drafts]
    return with_also(drafts, render(voice))


def _left_open(part: str, draft: Draft | None) -> re.Match[str] | str:
    """What a part leaves for the next to complete: a relation just mentioned ("我有个女儿，"), a change
    of job ("我从腾讯离职了，"), a pet ("我养了一只金毛，"), something liked ("我是奶茶重度爱好者，")."""
    if draft is not None and draft.attribute in ("pet", "likes", "employer"):
        return draft.attribute
    if has := _HAS_RELATION.match(part):
        return has
    if _WORK_CHANGE.search(part):
        return "work"
    return ""


def _continues(part: str, text: str, before: re.Match[str] | str, drafts: list[Draft], voice: Voice) -> bool:
    """Whether ``part`` completes what the part before it left open (adding to ``drafts``):
    "…，叫朵朵" names a relation or a pet, "…，每天一杯" makes a liked drink the usual one."""
    named = _PET_NAMED.match(part)
    name = zh_clean(named["v"]) if named else ""
    if isinstance(before, re.Match):
        relation = relation_of(before["rel"])
        if not named or not is_name(name) or relation is None:
            return False
        drafts.append(
            zh_fact(f"{name}是我的{before['rel']}", voice, "relationship", 7, before["rel"], relation, name)
        )
        return True
    if before == "pet" and drafts and named and is_name(name):
        named_pet = drafts[-1].stating("pet", name)
        drafts[-1] = replace(named_pet, fact=cjk_sentence(f"{named_pet.fact.rstrip('。')}，{part}"))
        return True
    if before == "employer" and (does := _DOES.match(part)) is not None and (job := zh_clean(does["job"])):
        drafts.append(zh_fact(text, voice, "identity", 8, "职业", "job", job))  # "…在字节跳动，做推荐算法"
        return True
    if before == "likes" and drafts and _DAILY.match(part) and is_drink(drafts[-1].value or ""):
        drafts.append(zh_fact(text, voice, "preference", 6, "饮品", "drink", drafts[-1].value or ""))
        return True
    return False


def _read_part(text: str, voice: Voice) -> tuple[Draft | None, bool]:
    """The fact one part states, and whether some statement's shape matched it at all (a statement
    whose value is no value, "我住在被窝里", stops the part from being read as anything else)."""
    for rule in ZH_FACT_RULES:
        m = rule.pattern.match(text)
        if m is None:
            continue
        draft = rule.handler(m, voice)
        if draft is not None or rule.final:
            return draft, True
    return None, False

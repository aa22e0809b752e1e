"""The reader of a Japanese clause: its parts (between 、) in turn, a part that only names its topic joined
to the next ("誕生日、十一月二日なんだ"), and what a part says read in context ("教師を辞めて、今はカフェの店長です":
job = 店長)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from .cjk_values import (
    is_occupation,
    with_also,
)
from .japanese_facts import (
    END,
    JA_I,
    JA_PLACE,
    NAME_V,
    REL,
    WHEN_START,
    describes,
    is_name_ja,
    is_relative,
    ja_clean,
    ja_fact,
    org_name,
    render,
)
from .japanese_rules import JA_FACT_RULES, PLAN
from .shapes import Draft, Rule, Voice, cjk_sentence

# After a change of job ("会社辞めて、", "転職して、"): "今はメルカリにいます" is where they work now.
_WORK_CHANGE = re.compile(
    r"(?:会社|仕事|職場|バイト|[^、,]{1,8}(?:師|員|者|職|業))を?(?:辞めて|やめて|変えて|かえて)|転職して|退職して|"
    r"転職しました|独立して|異動して|移って"
)
_NOW_AT = re.compile(
    rf"^(?:今は|今|現在は?)?(?P<org>[^、,。]+?)(?:に|で)(?:います|いる|勤めています|働いています){END}"
)
_NOW_JOB = re.compile(rf"^(?:今は|今|現在は?)(?P<job>[^、,。]+?)(?:です|だ|をしています|やってます){END}")
_PET_NAMED = re.compile(
    rf"^(?:名前は)?{NAME_V}(?:です|だ|っていいます|っていうの|って言います|といいます)?{END}"
)
_CORRECTED = re.compile(
    r"^(?P<head>(?:[^、,。]*?(?:は|が))?)[^、,。]*?(?:じゃなくて|ではなくて|ではなく)(?P<new>.+)$"
)
# "乳糖不耐症なので…", "名古屋に住んでるから、…": the reason is a statement of its own ("から" after a
# verb or adjective only: "東京から来ました" is from where).
_CAUSE = re.compile(r"^(?P<cause>.+?)(?:なので|ので|だから|(?<=[るいたすだ])から)(?P<rest>.*)$")
_TOPIC = re.compile(rf"^{JA_I}(?:は|も|、|って)?\s*(?=[^のはがを])")


def ja_read(clause: str, voice: Voice, fallback: Sequence[Rule] = ()) -> Draft | None:
    """A clause's facts, each part (between 、) read in turn; the first fact carries the others.
    ``fallback``: rules for a clause no statement above recognised (a decision, a to-do)."""
    parts = _merged([part.strip() for part in re.split(r"[、,，]", clause) if part.strip()])
    drafts: list[Draft] = []
    before = ""  # what the previous part leaves open: a change of job, a pet
    recognised = False
    intro = any(
        part.startswith(("よろしく", "はじめまして", "初めまして")) for part in parts
    )  # "佐藤です、よろしく…"
    for i, part in enumerate(parts):
        if i and _continues(part, before, drafts, voice):
            continue
        draft, matched = _read_part(part, voice)
        if draft is None and not matched and intro:
            draft = _introduced(part, voice)
            matched = draft is not None
        recognised = recognised or matched
        if draft is not None:
            drafts.append(draft)
        before = (
            "work"
            if _WORK_CHANGE.search(part)
            else "pet"
            if draft is not None and draft.attribute == "pet"
            else ""
        )
    if not drafts and not recognised and fallback and not is_relative(voice):
        for rule in fallback:
            m = rule.pattern.match(clause)
            if m and (draft := rule.handler(m, voice)) is not None:
                drafts.append(draft)
                break
    return with_also(drafts, render(voice))


def _continues(part: str, before: str, drafts: list[Draft], voice: Voice) -> bool:
    """Whether ``part`` completes what the part before it left open (adding to ``drafts``): after a
    change of job, "今はメルカリにいます" is the employer and "今はカフェの店長です" the job; after a pet,
    "名前はミケ" is its name."""
    if before == "work":
        if (now := _NOW_AT.match(part)) and (org := org_name(now["org"])):
            drafts.append(ja_fact(part, voice, "identity", 8, "勤務先", "employer", org))
            return True
        if (now := _NOW_JOB.match(part)) and is_occupation(job := ja_clean(now["job"]), True):
            drafts.append(ja_fact(part, voice, "identity", 8, "仕事", "job", job))
            return True
    if (
        before == "pet"
        and drafts
        and (named := _PET_NAMED.match(part))
        and is_name_ja(name := ja_clean(named["v"]))
    ):
        named_pet = drafts[-1].stating("pet", name)
        drafts[-1] = replace(named_pet, fact=cjk_sentence(f"{named_pet.fact.rstrip('。')}、{part}"))
        return True
    return False


def _introduced(part: str, voice: Voice) -> Draft | None:
    """'佐藤です' said in an introduction ("…、よろしくお願いします"): the speaker's name."""
    own = _INTRO_NAME.match(part)
    if own is None or not is_name_ja(name := own["v"]) or describes(name) or JA_PLACE.match(name):
        return None
    return Draft(f"{voice.ja}の名前は{name}です。", "名前", "identity", 10).stating("name", name)


_INTRO_NAME = re.compile(
    rf"^(?:{JA_I}は|(?:{JA_I}の)?名前は)?(?P<v>[^\s、,。はがをにでの]{{1,8}})(?:です|だ|と申します)$"
)


_TOPIC_ONLY = re.compile(
    rf"^(?:(?:うちの|{JA_I}の)?(?:一番の)?{REL}|誕生日|出身|名前|趣味|仕事|職業|専攻|勤め先|{PLAN})$"
)


def _merged(parts: list[str]) -> list[str]:
    """ "誕生日、十一月二日なんだ" → "誕生日は十一月二日なんだ": a part that only names the topic."""
    out: list[str] = []
    for part in parts:
        if out and _TOPIC_ONLY.match(out[-1]):
            out[-1] = f"{out[-1]}は{part}"
        elif out and part.startswith("よろしく") and out[-1].startswith(("名前は", "フルネームは")):
            out[-1] = f"{out[-1]}、{part}"  # "名前は佐々木です、よろしく": an introduction
        else:
            out.append(part)
    return out


_SOMEONE_ELSE = re.compile(
    r"^(?:彼(?!氏)|彼女|あいつ|あの人|この人|その人|みんな|皆|(?!彼氏)[^、,。はが]{1,8}(?:さん|くん|ちゃん|君|様|先生|氏)|"
    r"(?:[^、,。はが]{0,8}の)?(?:主人公|キャラ|登場人物|人|子|男の子|女の子|男性|女性|先輩|後輩|先生|店長|社長|家族|"
    r"両親|親|兄弟|姉妹|夫婦|知り合い|知人|相手|元彼|元カノ|元カレ|元夫|元妻|芸能人|俳優|歌手|アイドル|選手|"
    r"誰か|友達|友人|同僚))(?:は|が|も|って)"
)


def _read_part(part: str, voice: Voice) -> tuple[Draft | None, bool]:
    """The fact one part states, and whether some statement's shape matched it at all."""
    if _SOMEONE_ELSE.match(part):
        return None, True  # "田中さんは大阪に住んでいます", "彼女は韓国人です": not the speaker
    corrected = _CORRECTED.match(part)
    if corrected:
        part = corrected["head"] + corrected["new"]
    said = part
    text = WHEN_START.sub("", _TOPIC.sub("", part)) or part
    cause = _CAUSE.match(text)
    if cause is None:
        return _match(text, voice, said, False)
    # "乳糖不耐症なので牛乳はダメです": the reason is the fact; what follows from it is read only as a
    # consequence (not a dislike).
    draft, matched = _match(cause["cause"], voice, said, False)
    if draft is not None:
        return draft, matched
    if not cause["rest"]:
        return None, matched
    draft, after = _match(cause["rest"], voice, said, True)
    return draft, matched or after


def _match(text: str, voice: Voice, said: str, consequence: bool) -> tuple[Draft | None, bool]:
    for rule in JA_FACT_RULES:
        if consequence and not rule.consequence:
            continue
        m = rule.pattern.match(text)
        if m is None:
            continue
        draft = rule.handler(m, voice, said)
        if draft is not None:
            return draft, True
        if rule.final:
            return None, True
    return None, False

"""The handlers of the Japanese statements: each writes the fact a matched part states, with its
attribute and value, or nothing when the value is not one ("布団に住んでます": no place). A handler
reads the match on what was said without its opening time words, and words the fact from the part as said."""

from __future__ import annotations

import re
from collections.abc import Callable

from ..facts import Category
from .cjk_values import (
    DIET_JA,
    is_age,
    is_date,
    is_drink,
    is_language,
    is_occupation,
    plan,
    relation_of,
    split_list,
    with_also,
)
from .japanese_facts import (
    JA_SUBJECT_START,
    describes,
    field_of,
    is_name_ja,
    ja_clean,
    ja_fact,
    ja_third,
    last_noun,
    liked_value,
    org_name,
    render,
    trim_ja,
)
from .shapes import Draft, Voice, cjk_sentence

# --- handlers: (match on the part without its opening time words, voice, the part as said)

Handler = Callable[[re.Match[str], Voice, str], Draft | None]


def attr_fact(
    attribute: str,
    category: Category,
    importance: int,
    topic: str,
    check: Callable[[str], bool] | None = None,
    clean: Callable[[str], str | None] = ja_clean,
) -> Handler:
    def handler(m: re.Match[str], voice: Voice, said: str) -> Draft | None:
        value = clean(m["v"])
        if not value or (check is not None and not check(value)):
            return None
        return ja_fact(said, voice, category, importance, topic, attribute, value)

    return handler


def each_fact(
    attribute: str, category: Category, importance: int, topic: str, check: Callable[[str], bool]
) -> Handler:
    def handler(m: re.Match[str], voice: Voice, said: str) -> Draft | None:
        parts = [ja_clean(part) for part in split_list(m["v"])]
        if not parts or not all(part and check(part) for part in parts):
            return None
        return with_also(
            [ja_fact(said, voice, category, importance, topic, attribute, p) for p in parts], render(voice)
        )

    return handler


def liked_list_fact(attribute: str, topic: str, clean: Callable[[str], str | None]) -> Handler:
    """'キャンプと釣りが好き': one fact each, when every part is one; else the whole as said."""

    def handler(m: re.Match[str], voice: Voice, said: str) -> Draft | None:
        parts = [clean(part) for part in re.split(r"と|や", m["v"])] if re.search(r"と|や", m["v"]) else []
        values = parts if len(parts) > 1 and all(parts) else [clean(m["v"])]
        if not all(values):
            return None
        drafts = [ja_fact(said, voice, "preference", 6, topic, attribute, value) for value in values if value]
        return with_also(drafts, render(voice))

    return handler


def age_fact(m: re.Match[str], voice: Voice, said: str) -> Draft | None:
    return ja_fact(said, voice, "identity", 8, "年齢", "age", m["v"]) if is_age(m["v"]) else None


def work_fact(m: re.Match[str], voice: Voice, said: str) -> Draft | None:
    groups = m.groupdict()
    org = org_name(groups["org"]) if groups.get("org") else None
    job = ja_clean(groups.get("job") or "")
    if groups.get("job") is not None and not is_occupation(job, japanese=True):
        return None  # "うつ病で通院して…": no role, and no workplace
    drafts = []
    if org:
        drafts.append(ja_fact(said, voice, "identity", 8, "勤務先", "employer", org))
    if job:
        drafts.append(ja_fact(said, voice, "identity", 8, "仕事", "job", job))
    return with_also(drafts, render(voice))


def study_fact(m: re.Match[str], voice: Voice, said: str) -> Draft | None:
    field = field_of(m["v"])
    return ja_fact(said, voice, "identity", 7, "専攻", "studies", field) if field else None


def names_fact(m: re.Match[str], voice: Voice, said: str) -> Draft | None:
    """'兄の名前は大介です', '彼氏は大輝っていいます', '上司は井上さんです': who the relation is."""
    relation = relation_of(m["rel"])
    name = ja_clean(m["v"])
    if relation is None or not is_name_ja(name) or describes(name):
        return None
    text = (
        said if said.startswith(("私の", "僕の", "俺の")) else f"{voice.ja}の{re.sub(r'^うちの', '', said)}"
    )
    importance = 8 if relation == "partner" else 7
    return Draft(cjk_sentence(ja_third(text, voice)), m["rel"], "relationship", importance).stating(
        relation, name
    )


def partner_fact(m: re.Match[str], voice: Voice, said: str) -> Draft | None:
    name = ja_clean(m["v"])
    if not is_name_ja(name) or describes(name):
        return None
    return ja_fact(said, voice, "relationship", 8, "パートナー", "partner", name)


def manager_fact(m: re.Match[str], voice: Voice, said: str) -> Draft | None:
    name = ja_clean(m["v"])
    if not is_name_ja(name) or describes(name):
        return None
    return ja_fact(said, voice, "relationship", 7, "上司", "manager", name)


def pet_fact(m: re.Match[str], voice: Voice, said: str) -> Draft | None:
    pet = last_noun(ja_clean(m["v"]))
    if not 0 < len(pet) <= 10 or re.search(r"^(?:子供|子ども|人|彼女|彼氏|これ|それ|何)$|[私僕俺]", pet):
        return None
    return ja_fact(said, voice, "relationship", 7, "ペット", "pet", pet)


def plan_date_fact(m: re.Match[str], voice: Voice, said: str) -> Draft | None:
    date = trim_ja(m["date"])
    if not is_date(date):
        return None
    draft = Draft(
        cjk_sentence(ja_third(said, voice)),
        m["plan"],
        "project_state",
        7,
        about=plan(m["plan"], voice.person),
    )
    return draft.stating("date", date)


def language_fact(m: re.Match[str], voice: Voice, said: str) -> Draft | None:
    language = last_noun(ja_clean(m["v"]))
    if not is_language(language):
        return None
    text = cjk_sentence(f"{voice.ja}の希望：{language}で答えてほしい")
    return Draft(text, "回答言語", "preference", 8).stating("language", language)


def name_fact(m: re.Match[str], voice: Voice, said: str) -> Draft | None:
    name = trim_ja(m["v"])
    if not is_name_ja(name) or is_occupation(name, japanese=True) or re.search(r"[をがにで]|歳$", name):
        return None
    return Draft(f"{voice.ja}の名前は{name}です。", "名前", "identity", 10).stating("name", name)


def own_name_fact(m: re.Match[str], voice: Voice, said: str) -> Draft | None:
    return name_fact(m, voice, said) if re.search(r"よろしく|申します|と言います|といいます", said) else None


def call_me_fact(m: re.Match[str], voice: Voice, said: str) -> Draft | None:
    name = trim_ja(m["v"])
    if not is_name_ja(name):
        return None
    return Draft(f"{voice.ja}は「{name}」と呼ばれたい。", "呼び方", "identity", 9).stating("name", name)


def fan_fact(m: re.Match[str], voice: Voice, said: str) -> Draft | None:
    """'緑茶派です': likes it, and a drink is their usual one."""
    value = liked_value(m["v"])
    if value is None:
        return None
    drafts = [ja_fact(said, voice, "preference", 6, value[:12], "likes", value)]
    if is_drink(value):
        drafts.append(ja_fact(said, voice, "preference", 6, "飲み物", "drink", value))
    return with_also(drafts, render(voice))


def favourite_fact(m: re.Match[str], voice: Voice, said: str) -> Draft | None:
    """'好きな色は青です', '一番好きな飲み物は緑茶'."""
    value = liked_value(m["v"])
    if value is None:
        return None
    attribute = "drink" if re.search(r"飲み物|ドリンク", m["what"]) and is_drink(value) else "likes"
    return Draft(cjk_sentence(ja_third(with_owner(said, voice), voice)), m["what"], "preference", 6).stating(
        attribute, value
    )


def with_owner(said: str, voice: Voice) -> str:
    return said if JA_SUBJECT_START.match(said) else f"{voice.ja}の{said}"


def habit_drink_fact(m: re.Match[str], voice: Voice, said: str) -> Draft | None:
    """'毎日コーヒーを3杯飲みます': a habit, said with how often."""
    drink = last_noun(ja_clean(m["v"]))
    if not re.match(
        r"^(?:いつも|毎朝|毎日|毎晩|普段|基本|よく|朝は|今は|最近は|ずっと)", said
    ) or not is_drink(drink):
        return None
    return ja_fact(said, voice, "preference", 6, "飲み物", "drink", drink)


def usual_drink_fact(m: re.Match[str], voice: Voice, said: str) -> Draft | None:
    """'いつも烏龍茶です': what they always have."""
    drink = ja_clean(m["v"])
    if not re.match(r"^(?:いつも|毎朝|毎日|普段|基本)", said) or not is_drink(drink):
        return None
    return ja_fact(said, voice, "preference", 6, "飲み物", "drink", drink)


def no_longer_fact(m: re.Match[str], voice: Voice, said: str) -> Draft | None:
    return ja_fact(said, voice, "identity", 8, "食事", "diet", trim_ja(m["v"]))


def study_x_fact(m: re.Match[str], voice: Voice, said: str) -> Draft | None:
    field = field_of(m["x"])
    return ja_fact(said, voice, "identity", 7, "専攻", "studies", field) if field else None


def no_longer_diet_fact(m: re.Match[str], voice: Voice, said: str) -> Draft | None:
    diet = trim_ja(m["v"])
    if not re.fullmatch(DIET_JA, diet):
        return None
    negative = re.search(r"じゃない|ではない|じゃありません|ではありません", m.string)
    return ja_fact(said, voice, "identity", 8, "食事", "diet", f"{diet}{'じゃない' if negative else ''}")

"""The handlers of the Chinese statements: each writes the fact a matched part states, with its
attribute and value, or nothing when the value is not one ("我住在被窝里": no place)."""

from __future__ import annotations

import re
from collections.abc import Callable

from ..facts import Category
from .chinese_facts import (
    PET_SPECIES,
    PLACE_START,
    field_of,
    liked_value,
    org_name,
    origin_place,
    render,
    zh_clean,
    zh_fact,
    zh_third,
)
from .cjk_values import (
    is_age,
    is_condition,
    is_date,
    is_drink,
    is_language,
    is_name,
    is_occupation,
    is_place,
    plan,
    relation_of,
    split_list,
    trim,
    with_also,
)
from .shapes import Draft, Voice, cjk_sentence

# --- handlers


Handler = Callable[[re.Match[str], Voice], Draft | None]


def attr_fact(
    attribute: str,
    category: Category,
    importance: int,
    topic: str,
    check: Callable[[str], bool] | None = None,
    clean: Callable[[str], str | None] = zh_clean,
) -> Handler:
    """The segment as the fact, stating ``attribute`` = its ``v`` (cleaned, and checked)."""

    def handler(m: re.Match[str], voice: Voice) -> Draft | None:
        value = clean(m["v"])
        if not value or (check is not None and not check(value)):
            return None
        return zh_fact(m.string, voice, category, importance, topic, attribute, value)

    return handler


def each_fact(
    attribute: str, category: Category, importance: int, topic: str, check: Callable[[str], bool]
) -> Handler:
    """A list of values ("俄语和中文"): one fact each; every part must pass ``check``."""

    def handler(m: re.Match[str], voice: Voice) -> Draft | None:
        parts = [zh_clean(part) for part in split_list(m["v"])]
        if not parts or not all(part and check(part) for part in parts):
            return None
        drafts = [zh_fact(m.string, voice, category, importance, topic, attribute, part) for part in parts]
        return with_also(drafts, render(voice))

    return handler


def age_fact(m: re.Match[str], voice: Voice) -> Draft | None:
    if not is_age(m["v"]) or not (m["unit"] or "今年" in m.string or "满" in m.string or "滿" in m.string):
        return None
    return zh_fact(m.string, voice, "identity", 8, "年龄", "age", m["v"])


def home_fact(m: re.Match[str], voice: Voice) -> Draft | None:
    if re.match(r"^(?:一个|一個|一家|一间|一間|一座|个|個)", m["v"].strip()):
        return None  # "我住在一个小镇": which is not said
    value = zh_clean(m["v"])
    if re.search(r"[里裡上下旁内內边邊]$", value) and not PLACE_START.match(value):
        return None  # "我住在小区里", "住在楼上": where in a place, not which place
    hometown = re.match(r"^(?:老家|家乡|家鄉)(?P<p>.+)$", value)
    if hometown:
        value = hometown["p"]
    if (
        not is_place(value)
        or len(value) < 2
        or re.match(r"^(?:老家|家乡|家鄉|故乡|故鄉|国外|國外|外地|乡下|鄉下)$", value)
    ):
        return None
    draft = zh_fact(m.string, voice, "identity", 8, "居住地", "home", value)
    if hometown:
        origin = zh_fact(m.string, voice, "identity", 8, "出身", "origin", value)
        return with_also([draft, origin], render(voice))
    return draft


_IN_CITY = re.compile(r"^(?P<city>[^的]{2,6})的(?P<org>.+)$")


def work_fact(m: re.Match[str], voice: Voice) -> Draft | None:
    """'我在华为做硬件工程师': the employer and, when named, the role; '我在北京做程序员',
    '我在深圳的腾讯做产品经理': where they are, as their home (as "a nurse in Leeds" is)."""
    groups = m.groupdict()
    where = groups.get("org") or ""
    city = where if origin_place(zh_clean(where)) and org_name(where) is None else None  # not "中国银行"
    if (in_city := _IN_CITY.match(where)) is not None and origin_place(in_city["city"]):
        city, where = in_city["city"], in_city["org"]
    org = org_name(where) if where else None
    job = zh_clean(groups.get("job") or "")
    drafts = []
    if job and (is_occupation(job) or groups.get("any_job")):
        drafts.append(zh_fact(m.string, voice, "identity", 8, "职业", "job", job))
    if org:
        drafts.insert(0, zh_fact(m.string, voice, "identity", 8, "工作单位", "employer", org))
    if city and drafts:
        drafts.append(
            zh_fact(f"我住在{zh_clean(city)}", voice, "identity", 8, "居住地", "home", zh_clean(city))
        )
    return with_also(drafts, render(voice))


def org_job_fact(m: re.Match[str], voice: Voice) -> Draft | None:
    """'我是腾讯的程序员': the employer and the role, both named."""
    org, job = org_name(m["org"]), zh_clean(m["job"])
    if not org or re.search(r"^(?:新|刚|剛|原|老|前|现|現|本|这|這|那)|来|來|去|过|過", org):
        return None  # "我是新来的实习生": not where
    if not is_occupation(job) or re.search(r"学生|學生|研究生|博士生|校友", job):
        return None
    employer = zh_fact(m.string, voice, "identity", 8, "工作单位", "employer", org)
    return with_also([employer, zh_fact(m.string, voice, "identity", 8, "职业", "job", job)], render(voice))


def study_fact(m: re.Match[str], voice: Voice) -> Draft | None:
    field = field_of(m["v"])
    if not field:
        return None
    return zh_fact(m.string, voice, "identity", 7, "专业", "studies", field)


def partner_by_fact(m: re.Match[str], voice: Voice) -> Draft | None:
    name = zh_clean(m["v"])
    if not is_name(name):
        return None
    return zh_fact(m.string, voice, "relationship", 8, "伴侣", "partner", name)


def relation_fact(m: re.Match[str], voice: Voice) -> Draft | None:
    """'我妹妹叫安娜' → 用户的妹妹叫安娜 (sister = 安娜); '李娜是我姐姐' the same."""
    said = m["rel"]
    relation = relation_of(said)
    name = zh_clean(m["v"])
    if relation is None or not is_name(name) or not names_someone(m["v"].strip(), m.groupdict().get("is")):
        return None
    text = m.string
    if text.startswith("我") and not text.startswith(("我的", "我家", "我们", "我們")):
        text = "我的" + text[1:]
    return zh_fact(text, voice, "relationship", 8 if relation == "partner" else 7, said, relation, name)


def names_someone(value: str, is_verb: str | None) -> bool:
    """After 是 a name, not what they are ("我姐姐是医生", "我爸是上海人")."""
    if not is_verb:
        return True
    if is_occupation(zh_clean(value)) or value.endswith(
        ("人", "的", "者", "岁", "歲", "了", "狂", "控", "迷")
    ):
        return False
    if is_condition(value):
        return False
    return len(value) <= 6 and not re.match(r"^(?:个|個|一|我|你|老师|老師|学生|學生)", value)


def pet_fact(m: re.Match[str], voice: Voice) -> Draft | None:
    species = zh_clean(m["v"])
    species = re.sub(r"^(?:小|可爱的|可愛的|新的?)", "", species) or species
    if not re.search(PET_SPECIES, species) or len(species) > 8:
        return None
    name = m.groupdict().get("name")
    value = zh_clean(name) if name else species
    if name and not is_name(value):
        return None
    return zh_fact(m.string, voice, "relationship", 7, "宠物", "pet", value)


def plan_date_fact(m: re.Match[str], voice: Voice) -> Draft | None:
    name = re.sub(r"^(?:我们的?|我們的?|我的|咱们的?|咱們的?)", "", m["plan"])
    date = trim(m["date"])
    if not name or not is_date(date):
        return None
    draft = Draft(
        cjk_sentence(zh_third(m.string, voice)), name, "project_state", 7, about=plan(name, voice.person)
    )
    return draft.stating("date", date)


def language_fact(m: re.Match[str], voice: Voice) -> Draft | None:
    language = zh_clean(m["v"])
    if not is_language(language):
        return None
    text = cjk_sentence(f"{voice.zh}要求：用{language}回答")
    return Draft(text, "回答语言", "preference", 8).stating("language", language)


def call_me_fact(m: re.Match[str], voice: Voice) -> Draft | None:
    name = zh_clean(m["v"])
    if not (m["soft"] or m["end"]) or not is_name(name):  # "叫我起床": wake me up
        return None
    return Draft(f"{voice.zh}希望被称为{name}。", "称呼", "identity", 9).stating("name", name)


def name_fact(m: re.Match[str], voice: Voice) -> Draft | None:
    name = zh_clean(m["v"])
    if not is_name(name):
        return None
    kind = m.groupdict().get("kind")
    called = kind is None and not re.match(r"^我的?(?:名字|全名|真名)", m.string)  # "我叫小明", "我现在叫…"
    text = f"{voice.zh}叫{name}。" if called else f"{voice.zh}的{kind or '名字'}是{name}。"
    return Draft(text, "名字", "identity", 10).stating("name", name)


def likes_fact(m: re.Match[str], voice: Voice) -> Draft | None:
    value = liked_value(m["v"])
    if value is None:
        return None
    hates = bool(m.groupdict().get("neg")) != bool(re.match(r"讨厌|討厭|受不了|反感|恨|厌恶|厭惡", m["verb"]))
    attribute = "dislikes" if hates else "likes"
    parts = (
        [liked_value(part) for part in re.split(r"和|、|还有|還有|以及", value)]
        if re.search(r"和|、", value)
        else []
    )
    if len(parts) > 1 and all(parts):
        drafts = [zh_fact(m.string, voice, "preference", 6, p[:12], attribute, p) for p in parts if p]
        return with_also(drafts, render(voice))
    return zh_fact(m.string, voice, "preference", 6, value[:12], attribute, value)


def favourite_fact(m: re.Match[str], voice: Voice) -> Draft | None:
    """'我最喜欢的歌手是陈奕迅'; a favourite drink is also the usual one."""
    value = liked_value(m["v"])
    if value is None:
        return None
    drafts = [zh_fact(m.string, voice, "preference", 6, value[:12], "likes", value)]
    if (m["what"] == "喝的" or re.search(r"饮料|飲料|饮品|飲品", m["kind"])) and is_drink(value):
        drafts.append(zh_fact(m.string, voice, "preference", 6, "饮品", "drink", value))
    return with_also(drafts, render(voice))


def fan_fact(m: re.Match[str], voice: Voice) -> Draft | None:
    value = liked_value(m["v"])
    if value is None:
        return None
    return zh_fact(m.string, voice, "preference", 6, value[:12], "likes", value)

"""The attributes a fact may state of its subject, and the words that name them.

One vocabulary for every extractor (the rules write these keys, an LLM's answer is mapped onto them)
and for search (a question naming an attribute, "Where does Priya live?", is a lookup of ``home``).
An attribute is *single* when a subject has one value at a time (a home city, an employer): a later
statement replaces the earlier one. A *multiple* one (allergies, likes, pets, sisters) adds a value.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

RELATIONS: dict[str, str] = {
    # said → canonical relation (the predicate of the relation and the attribute naming the person)
    **dict.fromkeys("sister sis".split(), "sister"),
    **dict.fromkeys("brother bro".split(), "brother"),
    **dict.fromkeys("mother mom mum mommy mummy mama ma".split(), "mother"),
    **dict.fromkeys("father dad daddy papa pa".split(), "father"),
    **dict.fromkeys("son".split(), "son"),
    **dict.fromkeys("daughter".split(), "daughter"),
    **dict.fromkeys("child kid baby".split(), "child"),
    **dict.fromkeys(
        "wife husband partner spouse girlfriend boyfriend fiance fiancé fiancee fiancée".split(), "partner"
    ),
    **dict.fromkeys("friend bestie buddy pal".split(), "friend"),
    **dict.fromkeys("colleague coworker co-worker workmate".split(), "colleague"),
    **dict.fromkeys("boss manager supervisor".split(), "manager"),
    **dict.fromkeys("grandmother grandma granny nan nana".split(), "grandmother"),
    **dict.fromkeys("grandfather grandpa granddad grandad".split(), "grandfather"),
    **dict.fromkeys("aunt auntie".split(), "aunt"),
    "uncle": "uncle",
    "cousin": "cousin",
    "niece": "niece",
    "nephew": "nephew",
    **dict.fromkeys("grandchild grandkid grandson granddaughter".split(), "grandchild"),
    **dict.fromkeys("roommate flatmate housemate".split(), "roommate"),
    **dict.fromkeys("neighbour neighbor".split(), "neighbour"),
    **dict.fromkeys("dog cat puppy kitten pet parrot hamster rabbit horse".split(), "pet"),
}
"""Relation words (singular, lower case) to the canonical relation."""

# Chinese and Japanese relation words to the canonical relation.
CJK_RELATIONS: dict[str, str] = {
    **dict.fromkeys("妹妹 姐姐 妹 姉 姐".split(), "sister"),
    **dict.fromkeys("哥哥 弟弟 兄 弟".split(), "brother"),
    **dict.fromkeys("妈妈 媽媽 母亲 母親 妈 媽 母 お母さん 母さん".split(), "mother"),
    **dict.fromkeys("爸爸 父亲 父親 爸 父 お父さん 父さん".split(), "father"),
    **dict.fromkeys("儿子 兒子 息子".split(), "son"),
    **dict.fromkeys("女儿 女兒 娘".split(), "daughter"),
    **dict.fromkeys("孩子 子供 子ども".split(), "child"),
    **dict.fromkeys(
        "老婆 妻子 太太 老公 丈夫 先生 男朋友 女朋友 男友 女友 妻 夫 彼女 彼氏 奥さん 旦那 嫁".split(),
        "partner",
    ),
    **dict.fromkeys("朋友 友達 友人 親友".split(), "friend"),
    **dict.fromkeys("同事 同僚".split(), "colleague"),
    **dict.fromkeys("老板 老闆 上司 经理 經理 领导 領導 部长 部長".split(), "manager"),
    **dict.fromkeys("奶奶 外婆 祖母 おばあちゃん".split(), "grandmother"),
    **dict.fromkeys("爷爷 爺爺 外公 祖父 おじいちゃん".split(), "grandfather"),
    **dict.fromkeys("猫 貓 狗 宠物 寵物 犬 ペット".split(), "pet"),
    **dict.fromkeys("室友 ルームメイト".split(), "roommate"),
}


@dataclass(frozen=True)
class Attribute:
    """One attribute: its key, whether a subject has one value at a time, the words of a question
    that ask for it, and (:data:`CHANGED_BY`) the words a later message may say its change with
    (lower case; CJK words match as substrings)."""

    key: str
    single: bool
    asked_by: tuple[str, ...] = ()

    @property
    def changed_by(self) -> tuple[str, ...]:
        return self.asked_by + CHANGED_BY.get(self.key, ())


# Words a message says a change of an attribute with, beyond the words that ask for it: "Finally
# settled in Kumasi" (home), "got promoted" (job), "I'm seeing someone" (partner).
CHANGED_BY: dict[str, tuple[str, ...]] = {
    "home": ("settled", "relocated", "relocating", "moving", "move", "flat", "house", "搬", "引っ越"),
    "employer": (
        "joined",
        "started",
        "starting",
        "hired",
        "resigned",
        "quit",
        "left",
        "notice",
        "offer",
        "跳槽",
        "入职",
        "転職",
    ),
    "job": ("promoted", "promotion", "started", "starting", "retired", "career", "转行", "昇進"),
    "manager": ("report", "reports", "team", "reorg"),
    "partner": ("dating", "seeing", "engaged", "split", "broke", "divorced", "together", "met"),
    "drink": ("switched", "quit", "caffeine", "cup", "cups", "drinking", "改喝", "やめ"),
    "diet": ("eating", "switched", "stopped", "meat", "fish", "plant", "不再吃", "やめ"),
    "pet": ("adopted", "rescue", "puppy", "kitten", "passed", "rehome", "领养", "飼"),
    "name": ("call", "nickname", "叫我", "呼んで"),
    "date": ("moved", "postponed", "rescheduled", "pushed", "changed", "改到", "変更"),
}


_ATTRIBUTES = (
    Attribute("name", True, ("name", "called", "名字", "叫什么", "名前")),
    Attribute("age", True, ("age", "old", "years", "岁", "歳", "年齢", "多大")),
    Attribute("birthday", True, ("birthday", "born", "生日", "誕生日")),
    Attribute(
        "home",
        True,
        ("live", "lives", "living", "home", "city", "based", "moved", "town", "住", "哪里", "どこ", "在哪"),
    ),
    Attribute("origin", True, ("from", "born", "grew", "hometown", "来自", "出身", "老家")),
    Attribute(
        "employer",
        True,
        (
            "work",
            "works",
            "working",
            "job",
            "company",
            "employer",
            "employed",
            "工作",
            "上班",
            "公司",
            "働",
            "会社",
            "勤",
        ),
    ),
    Attribute(
        "job",
        True,
        (
            "job",
            "work",
            "works",
            "role",
            "occupation",
            "profession",
            "do for a living",
            "工作",
            "职业",
            "職業",
            "仕事",
        ),
    ),
    Attribute("manager", True, ("manager", "boss", "supervisor", "经理", "老板", "上司")),
    Attribute(
        "partner",
        True,
        (
            "partner",
            "wife",
            "husband",
            "girlfriend",
            "boyfriend",
            "spouse",
            "married",
            "老婆",
            "老公",
            "妻",
            "夫",
        ),
    ),
    Attribute(
        "diet",
        True,
        (
            "diet",
            "eat",
            "vegan",
            "vegetarian",
            "food",
            "meal",
            "cook",
            "dinner",
            "lunch",
            "recipe",
            "dessert",
            "吃",
            "饮食",
            "食",
        ),
    ),
    Attribute("drink", True, ("drink", "coffee", "tea", "beverage", "morning", "喝", "饮料", "飲み物", "飲")),
    Attribute("language", True, ("language", "answer", "reply", "语言", "言語")),
    Attribute("studies", True, ("study", "studies", "studying", "major", "degree", "专业", "専攻")),
    Attribute(
        "allergy",
        False,
        ("allergy", "allergic", "allergies", "eat", "food", "snack", "meal", "safe", "过敏", "アレルギー"),
    ),
    Attribute("health", False, ("health", "condition", "medical", "illness", "病", "健康")),
    Attribute("likes", False, ("like", "likes", "love", "enjoy", "favourite", "favorite", "喜欢", "好き")),
    Attribute("dislikes", False, ("dislike", "hate", "hates", "讨厌", "嫌い")),
    Attribute("pet", False, ("pet", "pets", "dog", "cat", "宠物", "狗", "猫", "ペット", "犬")),
    Attribute("speaks", False, ("speak", "speaks", "language", "languages", "说", "話")),
    Attribute("date", True, ("when", "date", "day", "什么时候", "几号", "いつ", "何日")),
    *(
        Attribute(relation, relation in ("partner", "manager"), (relation,))
        for relation in sorted(set(RELATIONS.values()))
        if relation not in ("partner", "manager")
    ),
)
# The first definition of a key wins: "pet" is a relation word too, and keeps its own words.
ATTRIBUTES: dict[str, Attribute] = {}
for _attribute in _ATTRIBUTES:
    ATTRIBUTES.setdefault(_attribute.key, _attribute)


def is_single(attribute: str | None) -> bool:
    """Whether a subject has one value of ``attribute`` at a time (unknown attributes: no)."""
    known = ATTRIBUTES.get(attribute or "")
    return known is not None and known.single


# What an LLM (or a client) may call an attribute, mapped to the key.
_SYNONYMS = {
    "home city": "home",
    "city": "home",
    "location": "home",
    "residence": "home",
    "lives in": "home",
    "hometown": "origin",
    "birthplace": "origin",
    "employer": "employer",
    "company": "employer",
    "workplace": "employer",
    "job title": "job",
    "occupation": "job",
    "profession": "job",
    "role": "job",
    "boss": "manager",
    "spouse": "partner",
    "wife": "partner",
    "husband": "partner",
    "girlfriend": "partner",
    "boyfriend": "partner",
    "usual drink": "drink",
    "favourite drink": "drink",
    "favorite drink": "drink",
    "beverage": "drink",
    "dietary preference": "diet",
    "dietary restriction": "diet",
    "allergies": "allergy",
    "allergen": "allergy",
    "medical condition": "health",
    "condition": "health",
    "like": "likes",
    "preference": "likes",
    "dislike": "dislikes",
    "pets": "pet",
    "languages": "speaks",
    "language spoken": "speaks",
    "answer language": "language",
    "preferred language": "language",
    "preferred name": "name",
    "nickname": "name",
    "study": "studies",
    "major": "studies",
    "plan date": "date",
    "event date": "date",
    "when": "date",
}

_KEY_CHARS = re.compile(r"[^\w' -]+", re.UNICODE)


def canonical_attribute(name: str | None) -> str | None:
    """``name`` as an attribute key: a known key or synonym as that key, a relation word as its
    relation ("dad" → ``father``), anything else lower case and trimmed (at most 40 characters);
    None for nothing."""
    if not name:
        return None
    key = " ".join(_KEY_CHARS.sub(" ", name).split()).casefold()[:40]
    if not key:
        return None
    if key in ATTRIBUTES:
        return key
    if key in _SYNONYMS:
        return _SYNONYMS[key]
    singular = key[:-1] if key.endswith("s") and key[:-1] in RELATIONS else key
    return RELATIONS.get(singular) or CJK_RELATIONS.get(key) or key


def canonical_relation(word: str) -> str | None:
    """A relation word ("dad", "wife", "妈妈") as its canonical relation, or None."""
    low = word.strip().casefold()
    singular = low[:-1] if low.endswith("s") and low[:-1] in RELATIONS else low
    return RELATIONS.get(singular) or CJK_RELATIONS.get(word.strip())


# The attributes whose value names another entity (a person, a pet): a relation is read from them.
ENTITY_VALUED = frozenset(RELATIONS.values())

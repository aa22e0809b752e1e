"""Japanese said about someone the speaker names by relation ("父は糖尿病です": the same statements,
about the father; "妹はアンナっていって、上海に住んでます": about アンナ, the sister), the topic a
statement opens with ("私、喘息持ちなんです"), and relations named in passing ("上司の佐藤さん")."""

from __future__ import annotations

import re

from .cjk_values import relation_of
from .japanese_facts import JA_I, REL, describes, is_name_ja, is_relative, ja_third
from .shapes import About, Draft, Voice

_MINE = rf"(?:うちの|{JA_I}の)?"
_NAME = r"(?P<name>[^\s、,。！？!?「」『』（）()のはがもとにで]{1,10}?)(?:さん|ちゃん|くん|君|様)?"
_ATTRIBUTE_NOUNS = re.compile(
    r"^(?:誕生日|名前|仕事|職業|出身|会社|趣味|年齢|家|転勤|実家|こと|方|ため|せい|影響|おかげ)$"
)
# "彼女"/"彼氏" is also "she"/"he": a partner only when said as one's own ("私の彼女").
_ATTRIBUTE_START = re.compile(
    r"^(?:誕生日|名前|仕事|職業|出身|会社|趣味|年齢|世話|散歩|ご飯|ごはん|写真|動画)"
)
_RELATIVE = re.compile(
    rf"^(?P<mine>{_MINE})(?:一番の|大切な)?(?P<rel>{REL})(?:の{_NAME})?(?:は|が|も|、)(?P<rest>.+)$"
)
_ATTRIBUTE_OF = re.compile(
    rf"^(?P<mine>{_MINE})(?P<rel>{REL})の(?P<rest>(?:誕生日|仕事|職業|出身)(?:は|が|、).+)$"
)
_NAMING = re.compile(
    rf"^{_NAME}(?:です|だ|っていいます|って言います|といいます|と言います|っていう(?:の|んだ|んです)?(?:けど)?|だよ)"
    r"(?:よ|ね|！|!|〜)*$"
)
_NAMING_MORE = re.compile(
    rf"^(?:名前は)?{_NAME}(?:(?:っていって|って言って|っていいます|といいます|っていうんだけど|で|です)[、,]|っていう)"
    r"(?P<more>.+)$"
)
_NOT_ABOUT = re.compile(r"^(?:私|僕|俺)(?:に|を|の)|って言|と言|らしい|みたい")


def ja_relative(clause: str) -> tuple[About, str, str] | None:
    """ "父は糖尿病です" → (the user's father, "父", "糖尿病です"); "妻の美咲は看護師です" → (美咲, the
    user's wife, "看護師です"). None for what is not such a statement, and for one that only says
    who they are ("兄の名前は大介です": a relation, read by the statements)."""
    attribute_of = _ATTRIBUTE_OF.match(clause)
    m = attribute_of or _RELATIVE.match(clause)
    if m is None:
        return None
    said, rest = m["rel"], m["rest"].strip()
    name = None if attribute_of else m["name"]
    if said in ("彼女", "彼氏") and not m["mine"] and name is None and not rest.startswith(("名前", "は")):
        return None  # "彼女は医者です": she, not a girlfriend
    relation = relation_of(said)
    if relation is None:
        return None
    if relation == "pet" and not m["mine"] and name is None:
        return None  # "犬は好きじゃない": dogs, not the speaker's dog
    if name is None and (called := _CALLED_LATER.search(rest)) and is_name_ja(called["name"]):
        name, rest = (
            called["name"],
            rest[: called.start()] + rest[called.end() :],
        )  # "夫はアメリカ人で、名前はマイクです"
    if relation in _ONE_OF_MANY and name is None:
        return None  # "友達が大阪に引っ越した": which friend is not said
    if name == "名前":
        name = None
    if name is not None and (_ATTRIBUTE_NOUNS.match(name) or not is_name_ja(name)):
        return None
    if name is None and not attribute_of:
        if rest.startswith("名前は"):
            rest = rest[3:]
        naming = _NAMING_MORE.match(rest)
        only = _NAMING.match(rest)
        if only and not naming and is_name_ja(only["name"]) and not describes(only["name"]):
            return None  # only who they are
        if (
            naming
            and is_name_ja(naming["name"])
            and not _ATTRIBUTE_NOUNS.match(naming["name"])
            and not describes(naming["name"])
        ):
            name, rest = naming["name"], naming["more"].strip()
    if not rest or _NOT_ABOUT.search(rest):
        return None
    kind = "pet" if relation == "pet" else "person"
    return About(name, relation, kind), said, rest


_CALLED_LATER = re.compile(
    r"[、,]名前(?:は|が)(?P<name>[^、,。！？!?]{1,10}?)(?:さん|ちゃん|くん)?(?:です|だ|っていいます|といいます)?(?=[、,]|$)"
)
_ONE_OF_MANY = frozenset({"friend", "colleague", "neighbour", "cousin"})
_TOPIC = re.compile(rf"^{JA_I}(?:は|も|、|って)\s*(?=[^のはがを])|^{JA_I}(?=[\u30a0-\u30ff])")
_WE = re.compile(
    r"^(?:私たち|僕たち|俺たち|僕ら|うち)(?:は|も|、)\s*(?=.*(?:引っ越|住んで|住み|暮らし|飼って|飼い))"
)


def ja_normalise(clause: str) -> str:
    """ "私、喘息持ちなんです" → "喘息持ちなんです": the statements read what is said of the speaker
    without the topic; "私たちは去年大阪に引っ越しました" → a household's move is the speaker's."""
    if _WE.match(clause):
        return _WE.sub("", clause)
    # "ベジタリアンなので、…", "上司は鈴木さんで、…", "東京に住んでいるので、…": as a statement
    clause = _VERB_REASON_END.sub("", _REASON_END.sub("です", clause))
    return _TOPIC.sub("", clause) or clause


# A clause ending as a reason or running on ("…なので", "…さんで"), where it was split from what follows.
_REASON_END = re.compile(r"(?:なので|なんで|だから|(?<=さん)で)$")
_VERB_REASON_END = re.compile(r"(?<=[るたいすくぐむぶぬうつ])(?:ので|から)$")


_NAMED = re.compile(
    rf"(?:^|(?<=[、,\s]))(?:うちの|{JA_I}の)?(?P<rel>{REL}|お隣|隣)の"
    r"(?P<name>[^\s、,。！？!?「」『』（）()のはがもとにでを]{1,10}?)(?:さん|ちゃん|くん|君|様)?"
    r"(?=は|が|も|とは|と|に|、|って|を|$)(?!とは?(?:結婚|付き合|婚約))"
)


def ja_named_relations(clause: str, voice: Voice) -> list[Draft]:
    """ "上司の佐藤さんがめっちゃ厳しい" → 佐藤 is the user's manager; "お隣の佐藤さん" → the neighbour."""
    if is_relative(voice):
        return []
    drafts = []
    for m in _NAMED.finditer(clause):
        said = m["rel"]
        relation = "neighbour" if said in ("お隣", "隣") else relation_of(said)
        name = m["name"]
        if (
            relation is None
            or _ATTRIBUTE_NOUNS.match(name)
            or _ATTRIBUTE_START.match(name)
            or not is_name_ja(name)
        ):
            continue
        text = f"{name}は{ja_third('私', voice)}の{said}です。"
        drafts.append(Draft(text, said, "relationship", 7).stating(relation, name))
    return drafts

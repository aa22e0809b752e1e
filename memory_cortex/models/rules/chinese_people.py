"""Chinese said about someone the speaker names by relation ("我爸有二型糖尿病": the same statements,
about the father), the subject Chinese leaves out ("今年三十了", "已经入职字节跳动一个月了"), and
relations named in passing ("我老婆小敏超爱吃榴莲": the partner is 小敏)."""

from __future__ import annotations

import re

from .chinese_facts import REL, WHEN, is_relative, zh_third
from .cjk_values import CJK, DIET_ZH, NUMBER, ZH_NAME, is_name, is_occupation, relation_of
from .shapes import About, Draft, Voice

# What may follow a name said right after the relation ("我同事老赵是…", "我邻居张阿姨人特别好").
_AFTER_NAME = (
    r"(?=[，,。！!？?\s]|$|今年|去年|前年|是|叫|在|住|有|很|特别|特別|超|也|都|还|還|已经|已經|刚|剛|每天|最|喜欢|"
    r"喜歡|爱|愛|不|没|沒|会|會|对|對|和|跟|说|說|人|生日|比|从|從|上个|上個|下个|下個|这|這|要|就|又|才|当|當|做|"
    r"去|来|來|平时|平時|现在|現在|一直|真|挺|可|的生日|出生|养|養|得|患)"
)
_PET_NAME = rf"[{CJK}]{{2}}"
_RELATIVE = re.compile(
    rf"^我(?:的|家的?)?(?P<rel>{REL})(?:(?P<name>{ZH_NAME}|(?<=狗狗|猫咪|貓咪|兔子|仓鼠|倉鼠){_PET_NAME}|"
    rf"(?<=[猫貓狗]){_PET_NAME}){_AFTER_NAME})?(?P<rest>.+)$"
)
_NAMING = re.compile(
    r"^(?:的)?(?:名字|英文名|中文名)?(?:叫|(?P<is>是|就是))(?P<name>[^，,。！？!?]{1,12}?)(?:[，,](?P<more>.+))?$"
)
_CALLED_LATER = re.compile(r"[，,](?:名字|名)?叫(?P<name>[^，,。！？!?]{1,10}?)(?=[，,]|$)")
_NOT_ABOUT = re.compile(
    r"^(?:说|說|觉得|覺得|认为|認為|希望|想|让|讓|总说|總說|总是说|總是說|叫我|要我|逼我|不让|不讓|问|問|告诉|告訴)"
)
_NOT_A_NAME_START = re.compile(
    r"^(?:特|很|超|也|都|还|還|已|刚|剛|每|最|非|不|没|沒|今|去|明|现|現|一|在|是|叫|有|今年)"
)


def zh_relative(clause: str) -> tuple[About, str, str] | None:
    """ "我爸有二型糖尿病" → (the user's father, "爸", "我有二型糖尿病"); "我室友叫阿May，是台湾人" →
    (阿May, the user's roommate, "我是台湾人"). None for what is not such a statement, and for one
    that only says who they are ("我妹妹叫小静": a relation, read by the statements)."""
    m = _RELATIVE.match(clause)
    if m is None:
        return None
    said, name, rest = m["rel"], m["name"], m["rest"].strip()
    relation = relation_of(said)
    if relation is None:
        return None
    if name and (_NOT_A_NAME_START.match(name) or not is_name(name)):
        name, rest = None, name + rest
    if name is None:
        naming = _NAMING.match(rest)
        if naming and is_name(naming["name"]) and not (naming["is"] and _describes(naming["name"])):
            if not naming["more"]:
                return None  # only who they are
            name, rest = naming["name"], naming["more"]
    if name is None and (called := _CALLED_LATER.search(rest)) and is_name(called["name"]):
        name, rest = called["name"], rest[: called.start()] + rest[called.end() :]  # "我老公是美国人，叫Mike"
    if relation in ("friend", "colleague", "neighbour", "cousin") and name is None:
        return None  # "我朋友在阿里工作": which friend is not said
    if _NOT_ABOUT.match(rest) or not rest or re.match(rf"^的?{REL}", rest):
        return None  # "我老婆的同事…": someone else
    kind = "pet" if relation == "pet" else "person"
    return About(name, relation, kind), said, "我" + rest


def _describes(value: str) -> bool:
    """After 是 what someone is ("医生", "上海人"), not their name."""
    return (
        is_occupation(value)
        or value.endswith(("人", "的", "者", "岁", "歲", "了"))
        or bool(re.match(r"^(?:个|個|一)", value))
    )


# --- the subject Chinese leaves out

_TIME_FIRST = re.compile(rf"^(?P<when>(?:{WHEN}){{1,3}})我(?![们們])")
_WE = re.compile(
    rf"^(?:我们|我們)(?=(?:{WHEN})*(?:搬|住|在[^，,]{{1,12}}定居|养了|養了|领养|領養|有[一两兩几幾]?[只隻条條]))"
)
_WE_HOME = re.compile(r"^(?:我们|我們)(?:家的?|的家)")
_WE_PLAN = re.compile(r"^(?:我们|我們|咱们|咱們)的")
_KIN_FIRST = re.compile(
    r"^(?=(?:妹妹|姐姐|哥哥|弟弟|女儿|女兒|儿子|兒子|爸爸|妈妈|媽媽|老公|老婆|爷爷|爺爺|奶奶|外婆|外公|闺女|閨女)"
    r"(?!们|們|們|的朋友)(?:今年|叫|是|有|对|對|在|住|刚|剛|已经|已經|不|最|特别|特別|超|很|也|生日|的生日|只|会|會))"
)
_NO_SUBJECT = re.compile(
    rf"^(?=(?:{WHEN})*(?:住在|住(?![得着著了过過的惯慣院])|(?:从|從)[^，,]{{1,8}}搬|搬到|搬去|搬回|搬来|搬來|定居|入职|入職|查出|确诊|確診|领养|領養|养了|養了|"
    rf"{DIET_ZH}|在搞|今年(?:{NUMBER})(?:岁|歲|了)|转行|轉行|跳槽|换到|換到|在[^，,]{{1,12}}(?:上班|工作|任职|任職|定居)|"
    rf"来自|來自|会说|會說|会讲|會講|对[^，,]{{1,8}}过敏|對[^，,]{{1,8}}過敏|患有|是[^，,]{{1,6}}人(?:[，,]|$)))"
)


# "今天女儿过生日，7岁了": a birthday, and the age it brought
_BIRTHDAY_AGE = re.compile(
    rf"^(?:{WHEN})*(?P<who>(?:我(?:的|家的?)?)?(?:{REL})(?:{ZH_NAME})?)(?:{WHEN})*过(?:了)?生日[啦了]?[，,！!]\s*"
    rf"(?:(?:{WHEN})*满?)(?P<age>{NUMBER})(?:岁|歲)(?:了|啦)?$"
)
# "每天早上都要喝一杯咖啡": a daily habit, said without 我
_HABIT = re.compile(rf"^(?:每天|天天|每日|平时|平時|每早)(?:{WHEN})*(?:要)?喝(?!了|过|過|着|著)")


def zh_normalise(clause: str) -> str:
    """A clause as the statements read it: "我们年初搬去成都啦" → "我年初搬去成都啦" (a household's move
    is the speaker's), "去年我…" → "我去年…", "女儿今年五岁了" → "我女儿今年五岁了", and the 我 left out
    put back ("现在住在深圳南山" → "我现在住在深圳南山")."""
    if (birthday := _BIRTHDAY_AGE.match(clause)) is not None:  # "今天女儿过生日，7岁了" → "女儿7岁了"
        who = birthday["who"] if birthday["who"].startswith("我") else f"我{birthday['who']}"
        return f"{who}{birthday['age']}岁了"
    if (m := _TIME_FIRST.match(clause)) is not None:
        return "我" + m["when"] + clause[m.end() :]
    if _WE_HOME.match(clause):
        return "我家" + _WE_HOME.sub("", clause)
    if _WE.match(clause):
        return "我" + clause[2:]
    if _WE_PLAN.match(clause):
        return _WE_PLAN.sub("", clause)
    if _KIN_FIRST.match(clause) or _NO_SUBJECT.match(clause) or _HABIT.match(clause):
        return "我" + clause
    return clause


# --- relations named in passing

_NAMED = re.compile(
    rf"(?:^我|(?<=[^{CJK}])我|(?<=[和跟与與])(?:我的?)?)(?:的|家的?)?(?P<rel>{REL})(?P<name>{ZH_NAME}){_AFTER_NAME}"
    r"(?!结婚|結婚|订婚|訂婚|在一起)"
)


def zh_named_relations(clause: str, voice: Voice) -> list[Draft]:
    """ "我老婆小敏超爱吃榴莲" → 小敏 is the user's partner; "我和女朋友小雅在一起三年了" → 小雅."""
    if is_relative(voice):
        return []
    drafts = []
    for m in _NAMED.finditer(clause):
        relation, name = relation_of(m["rel"]), m["name"]
        if relation is None or not is_name(name) or _NOT_A_NAME_START.match(name):
            continue
        text = f"{name}是{zh_third('我', voice)}的{m['rel']}。"
        drafts.append(Draft(text, m["rel"], "relationship", 7).stating(relation, name))
    return drafts

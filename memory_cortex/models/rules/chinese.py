"""Chinese for the rules extractor: 我 → 用户, its wrappers and filters. What a clause states is read by
``chinese_reader`` (a fact with its attribute: "我上个月搬到杭州了" → home = 杭州); the few rules here
take what states no attribute (a decision, a to-do, a skill). ``chinese_people`` reads a clause about
a relative ("我爸有二型糖尿病"), puts back the 我 Chinese leaves out ("今年三十了") and keeps the
relations named in passing ("我老婆小敏…")."""

from __future__ import annotations

import re

from ..facts import Category
from .chinese_people import zh_named_relations, zh_normalise, zh_relative
from .chinese_reader import zh_read
from .shapes import Draft, Handler, Language, Rule, Voice, cjk_sentence

_ZH_I = re.compile(r"我(?![们們])")
_ZH_YOU = re.compile(r"[你您](?![们們])")
_ZH_RELATION = (
    "妹妹|姐姐|哥哥|弟弟|妈妈|媽媽|母亲|母親|爸爸|父亲|父親|老婆|妻子|太太|老公|丈夫|先生|儿子|兒子|女儿|女兒|"
    "男朋友|女朋友|男友|女友|朋友|老板|老闆|同事|奶奶|爷爷|爺爺|外婆|外公|孩子|猫|貓|狗|宠物|寵物|室友|上司"
)
_ZH_IDENTITY_NOUNS = re.compile(
    r"名字|生日|年龄|年齡|工作|职业|職業|邮箱|郵箱|电子邮件|電子郵件|电话|電話|手机号|手機號|地址|国籍|國籍|"
    r"母语|母語|专业|專業|星座|血型|家乡|家鄉|老家"
)
_ZH_PROJECT_NOUNS = re.compile(
    r"项目|項目|公司|网站|網站|服务器|伺服器|数据库|數據庫|仓库|倉庫|团队|團隊|产品|產品"
)
_ZH_DISCOURSE = re.compile(r"^(?:问题|問題|意思|错|錯|天|看法|想法|建议|建議|回答|感觉|感覺|猜测|猜測)$")
_ZH_DEICTIC = re.compile(r"^(?:你|您|这|這|那|它|他们|他們|吗|嗎|什么|什麼|啥|谁|誰|哪|死)")


def _zh_third(text: str, voice: Voice, *, to_assistant: bool = False) -> str:
    text = _ZH_I.sub(voice.zh, text)
    return _ZH_YOU.sub("助手", text) if to_assistant else text


def _zh_say(category: Category, importance: int, topic: str | None = None, *, obj: str = "obj") -> Handler:
    def handler(m: re.Match[str], voice: Voice) -> Draft | None:
        phrase = (m.groupdict().get(obj) or "").strip()
        if obj in m.groupdict() and (not phrase or _ZH_DEICTIC.match(phrase)):
            return None
        return Draft(cjk_sentence(_zh_third(m.string, voice)), topic or phrase[:12], category, importance)

    return handler


def _zh_possessive(m: re.Match[str], voice: Voice) -> Draft | None:
    x, y = m["x"], m["y"].strip()
    if _ZH_DISCOURSE.match(x) or not y or _ZH_DEICTIC.match(y):
        return None
    relation = re.search(_ZH_RELATION, x)
    if relation:
        category: Category = "relationship"
        importance, topic = 7, relation.group()
    elif re.search(r"最喜欢|最喜歡|最爱|最愛|爱好|愛好|偶像|男神|女神", x):
        category, importance, topic = "preference", 6, x
    elif _ZH_IDENTITY_NOUNS.search(x):
        category, importance, topic = "identity", 8, x
    elif _ZH_PROJECT_NOUNS.search(x):
        category, importance, topic = "project_state", 6, x
    else:
        return None  # "我的梦想是…", "我的老师是…": nothing this extractor files
    draft = Draft(cjk_sentence(_zh_third(m.string, voice)), topic, category, importance)
    return draft.stating("likes", y) if category == "preference" and len(y) <= 12 else draft


def _zh_decision(m: re.Match[str], voice: Voice) -> Draft | None:
    if _ZH_DEICTIC.match(m["obj"]):
        return None
    text = m.string
    if m["we"]:
        text = f"{voice.zh}及其团队" + text[2:]
    return Draft(cjk_sentence(_zh_third(text, voice)), m["obj"][:12], "decision", 7)


def _zh_todo(m: re.Match[str], voice: Voice) -> Draft | None:
    task = m["task"].strip()
    if len(task) < 2 or re.match(
        r"走|睡|休息|想|知道|问|問|下线|下線|说|說|承认|承認|先走|去睡|冷静|冷靜|帮助|幫助|帮忙|幫忙|"
        r"你的帮助|你的幫助",
        task,
    ):
        return None
    return Draft(cjk_sentence(_zh_third(m.string, voice)), task[:12], "todo", 5)


def _zh_remind(m: re.Match[str], voice: Voice) -> Draft | None:
    task = m["task"].strip()
    if len(task) < 2 or re.match(r"什么|什麼|一下我们|一下我們|我们说|我們說", task):
        return None
    return Draft(cjk_sentence(f"{voice.zh}希望被提醒：{_zh_third(task, voice)}"), task[:12], "todo", 7)


def _zh_todo_note(m: re.Match[str], voice: Voice) -> Draft | None:
    task = m["task"].strip()
    return Draft(cjk_sentence(f"{voice.zh}的待办：{_zh_third(task, voice)}"), task[:12], "todo", 6)


_ZH_FALLBACK: tuple[Rule, ...] = tuple(
    Rule(re.compile(pattern), handler)
    for pattern, handler in (
        (r"^我(?:不|从不|從不|不能|不可以)(?:吃|喝)(?P<obj>.+)$", _zh_say("preference", 7, "饮食")),
        (r"^我的?(?P<x>最(?:喜欢|喜歡|爱|愛)的[^，,。是]{1,10}?)(?:是|就是)(?P<y>.+)$", _zh_possessive),
        (r"^我的(?P<x>[^，,。是叫]{1,12}?)(?:是|叫|就是)(?P<y>.+)$", _zh_possessive),
        (
            r"^我(?:现在|現在|目前)?(?:正在|在)(?:开发|開發|维护|維護)(?P<obj>.+)$",
            _zh_say("project_state", 6),
        ),
        (
            r"^我(?P<we>们|們)?(?:已经|已經|最终|最終|终于|終於|刚|剛|刚刚|剛剛)?(?:决定|決定|选择了|選擇了|选了|選了)"
            r"(?P<obj>.+)$",
            _zh_decision,
        ),
        (
            r"^我(?:会|會|能)(?:弹|彈|拉|编程|編程|写代码|寫代碼|做饭|做飯|开车|開車|游泳|画画|畫畫|跳舞|"
            r"唱歌|滑雪)(?P<obj>.*)$",
            _zh_say("skill", 6, "技能"),
        ),
        (r"^我(?:精通|擅长|擅長|熟悉|熟练掌握|熟練掌握|会用|會用)(?P<obj>.+)$", _zh_say("skill", 6)),
        (r"^(?:请|請|麻烦|麻煩)?(?:你|您)?(?:记得)?提醒我(?P<task>.+)$", _zh_remind),
        (r"^我(?:还|還)?(?:需要|必须|必須|得|要记得|要記得)(?P<task>.+)$", _zh_todo),
        (r"^(?:待办|待辦|todo|TODO|备忘|備忘)[：:](?P<task>.+)$", _zh_todo_note),
    )
)


def _zh_read(m: re.Match[str], voice: Voice) -> Draft | None:
    return zh_read(m.string, voice, _ZH_FALLBACK)


_ZH_RULES: tuple[Rule, ...] = (Rule(re.compile(r"^.+$", re.DOTALL), _zh_read),)

_ZH_NOW_ON = re.compile(
    r"^(?P<marker>以后|以後|今后|今後|从现在开始|從現在開始|从现在起|從現在起|从今以后|從今以後|从今天起|"
    r"從今天起|从今天开始|從今天開始|往后|往後)(?:请|請)?[，,：:\s]*(?P<body>.*)$"
)
_ZH_STRONG_CORRECTION = (
    re.compile(
        r"^(?P<marker>(?:刚才|剛才|刚刚|剛剛|上面|前面)?(?:更正|纠正|糾正|改一下|我(?:之前|刚才|剛才|刚刚|剛剛|上次)?(?:说错了|說錯了)|"
        r"说错了|說錯了|我搞错了|"
        r"我搞錯了|搞错了|搞錯了|不对|不對|错了|錯了|我写错了|我寫錯了|打错了|打錯了|写错了|寫錯了))(?:一下)?[，,：:。！!\s]*"
        r"(?:我(?:是说|是說|的意思是|是指|想说的是|想說的是)[，,：:\s]*)?(?P<body>.*)$"
    ),
)
_ZH_WEAK_CORRECTION = re.compile(r"^(?P<marker>不是|不|其实|其實)[，,\s]+(?P<body>.*)$")
_ZH_CONTRAST = re.compile(r"不是|而不是|而非")
_ZH_REMEMBER = re.compile(
    r"^(?:请|請|你要|你|麻烦|麻煩|帮我|幫我)*(?P<marker>记住|記住|记得|記得|别忘了|別忘了|不要忘记|不要忘記|"
    r"别忘记|別忘記|记一下|記一下|记下|記下)(?!了)(?:一下)?(?:[：:，,]|这个|這個|这件事|這件事|这一点|這一點)*"
    r"(?P<body>.*)$"
)


def _zh_now_on(marker: str, body: str, voice: Voice) -> Draft | None:
    body = re.sub(r"^(?:请|請|麻烦|麻煩)", "", body.strip())
    if len(body) < 2:
        return None
    if _ZH_I.match(body):
        return Draft(cjk_sentence(f"{marker}，{_zh_third(body, voice)}"), body[1:13], "decision", 8)
    return Draft(
        cjk_sentence(f"{voice.zh}要求：{marker}{_zh_third(body, voice, to_assistant=True)}"),
        body[:12],
        "preference",
        8,
    )


def _zh_correction(body: str, voice: Voice) -> Draft | None:
    if len(body.strip()) < 2:
        return None
    return Draft(cjk_sentence(f"{voice.zh}更正：{_zh_third(body, voice)}"), "更正", "correction", 7)


def _zh_remember(body: str, voice: Voice) -> Draft | None:
    body = body.strip()
    if len(body) < 2 or re.match(r"[了吗嗎吧呀啊]", body):
        return None
    return Draft(cjk_sentence(f"{voice.zh}要求记住：{_zh_third(body, voice)}"), "备忘", "fact", 7)


_ZH_HEDGE = re.compile(
    r"如果|假如|要是|假设|假設|万一|萬一|想象|想像|假装|假裝|也许|也許|可能|大概|好像|觉得|覺得|认为|認為|"
    r"我猜|开玩笑|開玩笑|哈哈|笑死|的话|的話|以前|希望|羡慕|羨慕|估计|估計|说不定|說不定|不确定|不確定|还没定|"
    r"還沒定|犹豫|猶豫|考虑|考慮|纠结|糾結|听说|聽說|据说|據說|下辈子|下輩子|等我|的时候|的時候|小时候|"
    r"小時候|当年|當年|曾经|曾經|算是|(?:总说|總說)(?=[我你他她])|应该|應該|不知道|感觉|感覺|玩个游戏|玩個遊戲|"
    r"(?<![跟和对對给給])(?:说|說)(?:她|他|我|自己)|(?<![思理梦夢])想(?!法)|"
    r"(?:写|寫|翻译|翻譯|改|润色|潤色|检查|檢查|修改|模仿)[^：:，,]{0,10}[：:]"
)
_ZH_HEAD = re.compile(r"^(?P<head>[^，,]{3,40})[，,](?P<tail>.*)$")
_ZH_WANTS = re.compile(r"(?<![思理梦夢])想(?!法)")


def zh_head(clause: str) -> str | None:
    """The part of a clause before its first comma ("我老公张伟是厨师，周末想给他做顿饭"), or None;
    never when what follows takes it back or makes it uncertain ("…，开玩笑的", "…，可能吧"): only a
    wish of its own ("周末想…") leaves it as said."""
    m = _ZH_HEAD.match(clause)
    if m is None or _ZH_HEDGE.search(_ZH_WANTS.sub("", m["tail"])):
        return None
    return m["head"]


CHINESE = Language(
    name="zh",
    rules=_ZH_RULES,
    lead_in=re.compile(
        r"^(?:(?:对了|對了|顺便说一下|順便說一下|顺便一提|順便一提|顺便说|順便說|另外|说实话|說實話|告诉你|告訴你|"
        r"跟你说|跟你說|你好|您好|大家好|补充一下|補充一下|不好意思|抱歉|sorry|Sorry|(?:简单)?(?:自我)?介绍一下(?:自己|我自己)?|(?:簡單)?(?:自我)?介紹一下(?:自己|我自己)?|自我介绍|自我介紹)[，,、！!：:\s]*|(?:哦|噢|嗯|好的|好|那个|那個|是的|对|對|"
        r"嗨|还有|還有|谢谢|謝謝|哈哈)[，,、！!：:\s]+)+"
    ),
    question=re.compile(
        r"[?？]\s*$|[吗嗎呢]$|什么|什麼|谁|誰|哪|几个|幾個|几岁|幾歲|怎么|怎麼|为什么|為什麼|多少|"
        r"是不是|有没有|有沒有|能不能|可不可以|要不要"
    ),
    hedge=_ZH_HEDGE,
    conditional=re.compile(r"^(?:如果|假如|要是|万一|萬一|假设|假設|假使)"),
    # Commas join the parts of one statement ("我室友叫阿May，是台湾人"); a new subject, a condition or an
    # aside starts another.
    clause_split=re.compile(
        r"[；;]\s*|[，,]\s*(?=我(?![们們])|我们|我們|你|您|如果|假如|要是|万一|萬一|假设|假設|对了|對了|另外|顺便|順便|"
        # a question or a request after a statement is a clause of its own: "我老公是厨师，有什么推荐吗？"
        r"有什么|有什麼|有啥|有没有|有沒有|能不能|可不可以|可以帮|可以幫|帮我|幫我|请问|請問|请你|請你|怎么|怎麼|"
        r"什么|什麼|求推荐|求推薦)"
    ),
    now_on=_ZH_NOW_ON,
    strong_correction=_ZH_STRONG_CORRECTION,
    weak_correction=_ZH_WEAK_CORRECTION,
    contrast=_ZH_CONTRAST,
    remember=(_ZH_REMEMBER,),
    render_now_on=_zh_now_on,
    render_correction=_zh_correction,
    render_remember=_zh_remember,
    relative=zh_relative,
    normalise=zh_normalise,
    head=zh_head,
    in_passing=zh_named_relations,
)

"""What a Chinese or Japanese value may be: the words that name an occupation, a language, a drink, a
diet, a lasting condition, a place, a person; the relation words; and a value trimmed to the shortest
words as written ("上个月搬到杭州了" → 杭州)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace

from ..attributes import canonical_relation
from .shapes import About, Draft

CJK = r"\u3400-\u9fff"
KANA = r"\u3040-\u30ff"

# --- relation words: said → canonical relation (the CJK_RELATIONS of ``models.attributes`` and more)

_EXTRA_RELATIONS: dict[str, str] = {
    **dict.fromkeys("姐 妹 大姐 二姐 小妹 姉さん お姉さん お姉ちゃん 妹さん".split(), "sister"),
    **dict.fromkeys("哥 弟 大哥 二哥 小弟 兄さん お兄さん お兄ちゃん 弟さん".split(), "brother"),
    **dict.fromkeys("老妈 老媽 母上 ママ おかん".split(), "mother"),
    **dict.fromkeys("老爸 父上 パパ おとん 親父".split(), "father"),
    **dict.fromkeys(
        "对象 對象 爱人 愛人 媳妇 媳婦 未婚夫 未婚妻 老伴 主人 旦那さん 婚約者 嫁さん 恋人 パートナー".split(),
        "partner",
    ),
    **dict.fromkeys("闺蜜 閨蜜 好朋友 好友 最好的朋友 死党 死黨 兄弟".split(), "friend"),
    **dict.fromkeys("表哥 表姐 表弟 表妹 堂哥 堂姐 堂弟 堂妹 いとこ 従兄弟 従姉妹".split(), "cousin"),
    **dict.fromkeys("舅舅 叔叔 伯伯 姑父 姨父 叔父 伯父 おじさん".split(), "uncle"),
    **dict.fromkeys("阿姨 姑姑 舅妈 舅媽 婶婶 嬸嬸 小姨 姨妈 姨媽 叔母 伯母 おばさん".split(), "aunt"),
    **dict.fromkeys("邻居 鄰居 隣人 お隣さん".split(), "neighbour"),
    **dict.fromkeys("主管 直属上司 直屬上司 直属领导 直屬領導 上级 上級 ボス 部長 課長".split(), "manager"),
    **dict.fromkeys("同学 同學 同僚 同期".split(), "colleague"),
    **dict.fromkeys("姥姥 婆婆 おばあちゃん 祖母さん".split(), "grandmother"),
    **dict.fromkeys("姥爷 姥爺 公公 おじいちゃん 祖父さん".split(), "grandfather"),
    **dict.fromkeys(
        "狗狗 猫咪 貓咪 兔子 仓鼠 倉鼠 鹦鹉 鸚鵡 乌龟 烏龜 金鱼 金魚 ハムスター インコ うさぎ ウサギ 金魚".split(),
        "pet",
    ),
    **dict.fromkeys("闺女 閨女".split(), "daughter"),
    **dict.fromkeys("宠物狗 宠物猫 寵物狗 寵物貓".split(), "pet"),
    **dict.fromkeys("小孩 子ども 子供".split(), "child"),
}
_NOT_RELATIONS = frozenset({"兄弟", "同学", "同學", "同期"})  # "bro", a schoolmate: not a colleague


def relation_of(word: str) -> str | None:
    """A Chinese or Japanese relation word as its canonical relation ("妈妈" → mother)."""
    if word in _NOT_RELATIONS:
        return None
    return _EXTRA_RELATIONS.get(word) or canonical_relation(word)


# --- values

_OCCUPATION_ZH = re.compile(
    r"(?:师|師|员|員|家|工|匠|官|长|長|手|士|医|醫|经理|經理|主管|总监|總監|编辑|編輯|记者|記者|主播|博主|会计|會計|"
    r"司机|司機|模特|警察|销售|銷售|运营|運營|前端|后端|後端|产品|產品|设计|設計|开发|開發|测试|測試|翻译|翻譯|"
    r"导游|導遊|农民|農民|军人|軍人|码农|碼農|保安|保姆|店主|老板|老闆|创始人|創始人|合伙人|合夥人|实习生|實習生|"
    r"学生|學生|研究生|医生|醫生|空姐|教授|程序猿|主妇|主婦|宝妈|寶媽|HR|CEO|CTO|UI|PM|自由职业者|自由職業者|"
    r"主持人|制片人|经纪人|經紀人|网红|網紅|UP主|外卖员|外賣員|快递员|快遞員|策划|策劃|编导|編導|文案|客服|行政|人事|"
    r"财务|財務|法务|法務|采购|採購|研发|研發|架构|架構|咨询|諮詢|顾问|顧問|助理|秘书|秘書|厨师|廚師|店员|店員|"
    r"自由职业|自由職業|个体户|個體戶|上班族|白领|白領|全职妈妈|全職媽媽|全职爸爸|全職爸爸|家庭主妇|家庭主婦)$"
)
_NOT_OCCUPATION_ZH = re.compile(
    r"(?:老家|在家|回家|大家|人家|自家|娘家|婆家|管家|专业户|打工人|干饭人|工具人|拿手|高手|新手|老手|对手|對手|"
    r"帮手|幫手|上手|下手|分手|家长|家長|成长|成長|擅长|擅長)$|我|你|他|她|的人$|^[手长長家]$"
)
_OCCUPATION_JA = re.compile(
    r"(?:師|士|員|家|医|手|長|官|工|匠|職人|係|担当|者|エンジニア|デザイナー|プログラマー?|ライター|カメラマン|"
    r"マネージャー|コンサルタント|パティシエ|シェフ|先生|教師|営業|事務|主婦|主夫|学生|フリーター|アルバイト|バイト|"
    r"パート|店長|医者|アナリスト|ディレクター|プロデューサー|モデル|俳優|声優|通訳|トレーナー|セラピスト|"
    r"ドライバー|CEO|CTO|PM|SE|フリーランス|フリーター|自営業|個人事業主|経営者|会社員|公務員|OL|サラリーマン)$"
)
_NOT_OCCUPATION_JA = re.compile(
    r"(?:患者|若者|信者|読者|視聴者|初心者|人気者|怠け者|家族|実家|自宅|お家|苦手|上手|下手|相手|派手|得手|勝手"
    r")$|^(?:手|長|家|者|員)$|昼寝|私|僕|俺|あなた|[をがにはも]"
)


def is_occupation(value: str, japanese: bool = False) -> bool:
    value = value.strip()
    if not 1 < len(value) <= 16:
        return False
    if japanese:
        return bool(_OCCUPATION_JA.search(value)) and not _NOT_OCCUPATION_JA.search(value)
    return bool(_OCCUPATION_ZH.search(value)) and not _NOT_OCCUPATION_ZH.search(value)


_LANGUAGE = re.compile(
    rf"^(?:[{CJK}]{{1,5}}(?:语|語)|(?:简体|簡體|繁體|繁体|简体|簡体)?(?:中|英|日|法|德|韩|韓|俄|西班牙|葡萄牙|意大利|阿拉伯)文|"
    rf"[{CJK}]{{1,3}}(?:话|話|弁)|[\u30a0-\u30ff]{{2,10}}語|(?:English|French|Spanish|German|Japanese|Chinese|"
    rf"Korean|Cantonese|Mandarin|Italian|Portuguese|Russian|Arabic))$",
    re.IGNORECASE,
)
_NOT_LANGUAGE = re.compile(
    r"(?:电话|電話|笑话|笑話|废话|廢話|实话|實話|坏话|壞話|好话|好話|大话|大話|真话|真話|假话|假話|闲话|閒話|情话|情話|"
    r"脏话|髒話|悄悄话|心里话|心裡話|會話|会話|日常会話|論文|论文|作文|课文|課文|原文|正文|短文|物語|単語|敬語|用语|用語)$"
)


def is_language(value: str) -> bool:
    value = value.strip()
    return bool(_LANGUAGE.match(value)) and not _NOT_LANGUAGE.search(value)


_DRINK = re.compile(
    r"(?:茶|咖啡|珈琲|コーヒー|水|奶|牛乳|汁|浆|漿|可乐|可樂|拿铁|拿鐵|美式|摩卡|卡布奇诺|酒|啤|饮料|飲料|ミルク|ラテ|"
    r"ティー|ジュース|コーラ|ビール|ワイン|豆乳|ココア|抹茶|エスプレッソ|アメリカーノ|カプチーノ|スムージー|白湯|"
    r"お茶|ソーダ|炭酸|酸奶|椰汁|豆奶|乌龙|烏龍|普洱|龙井|龍井)$"
)
_NOT_DRINK = re.compile(r"眼泪|眼淚|口水|墨水|泪水|淚水|血|油|药|藥|薬|汗|酒店|酒吧")


def is_drink(value: str) -> bool:
    value = value.strip()
    return 0 < len(value) <= 12 and bool(_DRINK.search(value)) and not _NOT_DRINK.search(value)


DIET_ZH = (
    r"(?:吃素|全素|纯素|純素|素食|蛋奶素|清真|生酮(?:饮食|飲食)?|低碳(?:水)?(?:饮食|飲食)?|无麸质|無麩質|轻断食|輕斷食|"
    r"断食|斷食|地中海饮食|地中海飲食|戒糖|控糖)"
)
DIET_JA = (
    r"(?:ベジタリアン|ヴィーガン|ビーガン|ヴェジタリアン|ペスカタリアン|ペスコベジタリアン|菜食主義者?|ハラール|"
    r"グルテンフリー|糖質制限|ケトジェニック|ケト|低糖質|マクロビ|フレキシタリアン)"
)

_HEALTH = re.compile(
    r"(?:病|症|炎|癌|がん|瘤|不耐受|不耐症|障碍|障礙|障害|哮喘|喘息|气喘|氣喘|高血压|高血壓|低血压|低血壓|高血脂|高血糖|痛风|"
    r"痛風|甲减|甲減|甲亢|偏头痛|偏頭痛|片頭痛|抑郁|抑鬱|うつ|焦虑|焦慮|失眠|不眠|贫血|貧血|湿疹|濕疹|アトピー|"
    r"癫痫|癲癇|てんかん|リウマチ|ADHD|自闭|自閉|近视|近視|色盲|高血圧|低血圧|腰痛|头痛|頭痛|椎间盘突出|ヘルニア|痴呆|"
    r"阿尔茨海默|阿爾茨海默|帕金森|認知症|パーキンソン)$"
)
_NOT_HEALTH = re.compile(
    r"感冒|发烧|發燒|風邪|かぜ|拉肚子|宿醉|二日酔い|中二病|懒癌|懶癌|拖延症|公主病|相思病|恋爱|戀愛|仕事|月曜"
)


def is_condition(value: str) -> bool:
    value = value.strip()
    return 1 < len(value) <= 14 and bool(_HEALTH.search(value)) and not _NOT_HEALTH.search(value)


_NOT_ALLERGEN = re.compile(
    r"上班|工作|学习|學習|加班|早起|考试|考試|开会|開會|上学|上學|数学|數學|老板|老闆|领导|領導|人类|人類|社交|"
    r"周一|週一|星期一|运动|運動|跑步|读书|讀書|作业|作業|你|他|她|钱|錢|老公|老婆|男人|女人|学校|學校|公司|仕事|"
    r"勉強|月曜|会社|人間|上司|宿題|試験|早起き|運動|労働|残業|旦那|嫁|説教|^人$|生活|现实|現實|婚姻"
)


def is_allergen(value: str) -> bool:
    value = value.strip()
    return (
        0 < len(value) <= 12 and not _NOT_ALLERGEN.search(value) and not re.search(r"[我你他她的说說]", value)
    )


_NOT_PLACE = re.compile(
    r"^[^\s]{1,2}(?:里|裡|上|下|边|邊|旁|内|內)$|^(?:被窝|被窩|家|家里|家裡|公司|学校|學校|宿舍|这里|這裡|那里|那裡|这儿|"
    r"這兒|那儿|那兒|附近|床|心|梦|夢|地球|火星|月球|布団|ベッド|部屋|実家|会社|ここ|そこ|あそこ|家の中|自宅|寮|天堂|"
    r"地狱|地獄|网上|網上|ネット|ゲーム)$|火星|月球|宇宙|二次元|異世界|异世界|被窝|被窩|布団|附近|旁边|旁邊|对面|對面|"
    r"隔壁|楼上|樓上|楼下|樓下|心里|心裡|\d|[一二三四五六七八九十]+(?:年|月|号|號)"
)


def is_place(value: str) -> bool:
    value = value.strip()
    return (
        0 < len(value) <= 12
        and not _NOT_PLACE.search(value)
        and not re.search(r"[我你他她说說哪谁誰什]", value)
    )


_SURNAMES = (
    "王李张張刘劉陈陳杨楊黄黃赵趙吴吳周徐孙孫马馬朱胡郭何高林罗羅郑鄭梁谢謝宋唐许許韩韓冯馮邓鄧曹彭曾肖萧蕭田董"
    "袁潘于蒋蔣蔡余杜叶葉程苏蘇魏吕呂丁任沈姚卢盧姜崔钟鍾谭譚陆陸汪范範金石廖贾賈夏韦韋付方白邹鄒孟熊秦邱江尹"
    "薛闫閆段雷侯龙龍史陶黎贺賀顾顧毛郝龚龔邵万萬钱錢严嚴覃武戴莫孔向汤湯欧歐阳陽"
)
# A Chinese name where nothing marks where it ends ("我同事老赵是东北人", "我老婆小敏超爱吃榴莲").
ZH_NAME = rf"(?:[小老阿](?:[A-Za-z][A-Za-z'-]*|[{CJK}])|[A-Z][A-Za-z'-]+|[{_SURNAMES}][{CJK}]{{1,2}}(?:阿姨|叔叔|老师|老師|总|總|姐|哥)?)"
_NOT_NAME = re.compile(
    r"[我你他她它的个個们們吗嗎呢么麼谁誰哪这這那是在了很都也还還就说說]|^(?:一|两|兩|三|几|幾|每|有|没|沒|不|今年|去年|"
    r"现在|現在|最近|已经|已經|刚|剛|特别|特別|超|非常|老公|老婆|老板|老闆|老家|老师|老師|小孩|小时|小時|阿姨)$|"
    r"^(?:これ|それ|あれ|どれ|何|なに|誰|だれ|あなた|君|うち|家|猫|犬|ペット|人)$|[「」『』]|^[不没沒了过過着著的]"
)


_NOT_NAME_JA = re.compile(
    r"[私僕俺「」『』]|あなた|^(?:これ|それ|あれ|どれ|何|なに|誰|だれ|君|きみ|うち|家|人|自分|みんな|皆|彼|彼女|彼氏)$"
)


def is_name(value: str, japanese: bool = False) -> bool:
    """A person's or pet's name as said after 叫/是/は ("安娜", "阿May", "大輝", "ケンちゃん")."""
    value = value.strip()
    if not 0 < len(value) <= 12 or value.isdigit():
        return False
    return not (_NOT_NAME_JA if japanese else _NOT_NAME).search(value)


# --- numbers and dates

NUMBER = r"(?:\d{1,3}|[一二两兩三四五六七八九十]{1,4})"
_CN_DIGITS = {
    "一": 1,
    "二": 2,
    "两": 2,
    "兩": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
}


def number_value(text: str) -> int | None:
    """ "三十二" → 32, "25" → 25; None for what is not a number of years."""
    if text.isdigit():
        return int(text)
    total, digit = 0, 0
    for char in text:
        if char == "十":
            total += (digit or 1) * 10
            digit = 0
        elif char in _CN_DIGITS:
            digit = _CN_DIGITS[char]
        else:
            return None
    return total + digit


def is_age(text: str) -> bool:
    value = number_value(text)
    return value is not None and 0 < value < 125


_MONTH_DAY = r"(?:(?:\d{4}|[一二三四五六七八九〇零]{4})年)?(?:\d{1,2}|[一二三四五六七八九十]{1,3})月(?:(?:\d{1,2}|[一二三四五六七八九十]{1,3})(?:日|号|號)?)?"
_WEEKDAY = r"(?:(?:周|週|星期|礼拜|禮拜)[一二三四五六日天]|[月火水木金土日]曜日?)"
DATE = (
    rf"(?:(?:明年|今年|来年|再来年)の?{_MONTH_DAY}(?:上旬|中旬|下旬|末|初め|底|初)?|{_MONTH_DAY}(?:上旬|中旬|下旬|末)?|"
    rf"(?:下|这|這|本|下个|下個|来週の?|今週の?|次の)?{_WEEKDAY}|(?:下|这|這)(?:周|週|星期|礼拜|禮拜)[末]|"
    r"明天|后天|後天|明日|明後日|来週|来月|再来週|下周|下週|下个月|下個月|"
    r"(?:五一|十一|国庆|國慶|春节|春節|元旦|中秋|端午|圣诞|聖誕|清明|除夕)(?:节|節|假期|那天)?|月底|月初|年底|年初|"
    r"(?:来月|今月|下个月|下個月|这个月|這個月)?の?\d{1,2}(?:号|號|日)|"
    r"ゴールデンウィーク|GW|お盆|年末|年明け|週末|来年の?[春夏秋冬]|[春夏秋冬]休み|クリスマス)"
)
_DATE_ONLY = re.compile(rf"^{DATE}$")


def is_date(text: str) -> bool:
    return bool(_DATE_ONLY.match(text.strip()))


def is_birth_date(text: str) -> bool:
    text = re.sub(r"^(?:农历|農曆|阴历|陰曆|公历|公曆|旧历|舊曆)", "", text.strip())
    return (bool(re.fullmatch(_MONTH_DAY, text)) and "月" in text) or bool(
        re.fullmatch(r"(?:19|20)\d\d年", text)
    )


# --- trimming

_TRAIL = re.compile(r"(?:了|啦|啊|呀|哦|喔|噢|哈|呢|吧|耶|嘛|的|哟|喲|咯|滴|～|〜|~|♪|！|!|。|…|\s)+$")
_TRAIL_JA = re.compile(r"(?:～|〜|~|♪|！|!|。|…|\s)+$")


def trim(value: str, japanese: bool = False) -> str:
    """A value without the particles and punctuation that close a sentence ("杭州了" → 杭州); in
    Japanese only punctuation (the statements' patterns end before "です", and "な" ends "バナナ")."""
    value = value.strip()
    trimmed = (_TRAIL_JA if japanese else _TRAIL).sub("", value)
    return trimmed or value


def split_list(value: str) -> list[str]:
    """ "俄语和中文" → [俄语, 中文]; "エビとカニ" → [エビ, カニ]."""
    return [
        part.strip()
        for part in re.split(r"和|跟|与|與|及|、|,|，|/|と|や|以及|还有|還有", value)
        if part.strip()
    ]


def plan(name: str, of: str | None) -> About:
    """A named plan or event ("同学聚会"): the subject of its date."""
    return About(name, None, "plan", of=of)


def with_also(drafts: list[Draft], render: Callable[[Draft], str] | None = None) -> Draft | None:
    """The first draft, carrying the others (each a fact of its own). A fact worded like one before it
    is worded by ``render`` instead: facts are kept once per wording."""
    if not drafts:
        return None
    seen: set[str] = set()
    distinct = []
    for draft in drafts:
        if draft.fact in seen and render is not None:
            draft = replace(draft, fact=render(draft))
        seen.add(draft.fact)
        distinct.append(draft)
    first, rest = distinct[0], tuple(distinct[1:])
    return replace(first, also=first.also + rest)

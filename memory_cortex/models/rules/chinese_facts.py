"""Chinese statements that state an attribute of their subject ("我上个月搬到杭州了" → home = 杭州), and
the reader that goes through a clause's comma-separated parts with the subject carried over
("我是上海人，会说上海话": origin and speaks; "我从腾讯离职了，现在在美团": employer = 美团)."""

from __future__ import annotations

import re
from collections.abc import Callable

from ..facts import Category
from .cjk_values import (
    CJK,
    is_place,
    trim,
)
from .shapes import Draft, Voice, cjk_sentence

ZH_I = re.compile(r"我(?![们們])")

# Words of time and manner that may stand between 我 and what is said ("我上个月搬到…", "我平时只喝…").
WHEN = (
    r"(?:今年|去年|前年|上个月|上個月|这个月|這個月|本月|上周|上週|上星期|上礼拜|上禮拜|这周|這週|"
    r"本周|最近|近来|近來|这几年|這幾年|这两年|這兩年|现在|現在|目前|如今|已经|已經|早就|刚|剛|"
    r"才|终于|終於|总算|總算|也|还|還|都|一直|平时|平時|平常|平日|每天|天天|每日|早上|每早|上午|晚上|一般|"
    r"通常|年初|年底|年中|上半年|下半年|前几天|前幾天|前阵子|前陣子|昨天|前天|今天|(?:\d+|[一二两兩三四五六七八九十几幾半]+)"
    r"(?:个|個)?(?:年|月)前|从小|從小|本来|本來|就|只|又|仍然|依然|其实|其實|确实|確實|暂时|暫時|已|正式|基本上|"
    r"主要|偶尔|偶爾|经常|經常|常常|总是|總是|向来|向來)"
)
T = rf"(?:{WHEN})*"
END = r"(?:了|啦|啊|呀|哦|喔|噢|哈|呢|吧|耶|嘛|哟|喲|咯|滴|～|~|\s)*"
V = r"(?P<v>[^，,。！？!?；;]+?)"

_REL_WORDS = sorted(
    (
        "妹妹 姐姐 哥哥 弟弟 妈妈 媽媽 母亲 母親 爸爸 父亲 父親 老婆 妻子 太太 老公 丈夫 先生 儿子 兒子 女儿 女兒 "
        "男朋友 女朋友 男友 女友 朋友 好朋友 最好的朋友 闺蜜 閨蜜 老板 老闆 同事 奶奶 爷爷 爺爺 外婆 外公 姥姥 孩子 "
        "室友 上司 主管 直属上司 直屬上司 直属领导 直屬領導 经理 經理 领导 領導 对象 對象 爱人 愛人 媳妇 媳婦 未婚夫 "
        "未婚妻 表哥 表姐 表弟 表妹 堂哥 堂姐 堂弟 堂妹 舅舅 叔叔 伯伯 阿姨 姑姑 小姨 邻居 鄰居 狗狗 猫咪 貓咪 猫 貓 "
        "狗 兔子 仓鼠 倉鼠 宠物狗 宠物猫 寵物狗 寵物貓 宠物 寵物 鹦鹉 鸚鵡 乌龟 烏龜 金鱼 金魚 老妈 老媽 老爸 爸 妈 媽 哥 姐 弟 妹"
    ).split(),
    key=len,
    reverse=True,
)
REL = "(?:" + "|".join(_REL_WORDS) + ")"
PET_SPECIES = (
    r"(?:猫|貓|狗|犬|柯基|边牧|邊牧|金毛|哈士奇|二哈|泰迪|柴犬|布偶|英短|美短|橘猫|橘貓|兔|兔子|仓鼠|倉鼠|鹦鹉|鸚鵡|"
    r"乌龟|烏龜|金鱼|金魚|鱼|魚|蜥蜴|蛇|刺猬|龙猫|龍貓|豚鼠|荷兰猪|狗狗|猫咪|貓咪|雪纳瑞|萨摩耶|薩摩耶|拉布拉多|"
    r"比熊|博美|法斗|柯基犬|鸟|鳥|八哥|仔|喵)$"
)


def zh_third(text: str, voice: Voice) -> str:
    return ZH_I.sub(voice.zh, text)


def is_relative(voice: Voice) -> bool:
    """Whether ``voice`` is someone the speaker named by relation ("用户的爸爸")."""
    return voice.person is not None and voice.zh != voice.person


def zh_fact(
    text: str, voice: Voice, category: Category, importance: int, topic: str, attribute: str, value: str
) -> Draft:
    return Draft(cjk_sentence(zh_third(text, voice)), topic, category, importance).stating(attribute, value)


_TEMPLATES = {
    "name": "{s}叫{v}",
    "age": "{s}{v}岁",
    "birthday": "{s}的生日是{v}",
    "home": "{s}住在{v}",
    "origin": "{s}来自{v}",
    "employer": "{s}在{v}工作",
    "job": "{s}的职业是{v}",
    "studies": "{s}学{v}",
    "allergy": "{s}对{v}过敏",
    "health": "{s}有{v}",
    "likes": "{s}喜欢{v}",
    "dislikes": "{s}不喜欢{v}",
    "drink": "{s}常喝{v}",
    "diet": "{s}的饮食：{v}",
    "pet": "{s}的宠物是{v}",
    "speaks": "{s}会说{v}",
    "partner": "{s}的伴侣是{v}",
    "manager": "{s}的上司是{v}",
    "language": "{s}要求用{v}回答",
}


def render(voice: Voice) -> Callable[[Draft], str]:
    """A fact's own wording from its attribute ("用户会说法语。"), for a part that states several."""

    def words(draft: Draft) -> str:
        template = _TEMPLATES.get(draft.attribute or "", "{s}的{a}是{v}")
        return cjk_sentence(template.format(s=voice.zh, v=draft.value, a=draft.attribute))

    return words


# --- values as said


def zh_clean(value: str) -> str:
    value = trim(value)
    value = re.sub(r"^(?:一家|一间|一間|一个|一個|一所|一名|一位|个|個|名|位)", "", value)
    return trim(value)


_ORG_GENERIC = re.compile(
    r"^(?:医院|醫院|学校|學校|公司|小公司|大公司|外企|国企|國企|私企|央企|大厂|大廠|工厂|工廠|银行|銀行|家|家里|家裡|投行|券商|律所|事务所|事務所|互联网|互聯網|体制内|體制內|"
    r"单位|單位|政府|机关|機關|事业单位|事業單位|创业公司|創業公司|初创公司|互联网公司|互聯網公司|网络公司|一家公司|"
    r"餐厅|餐廳|超市|店里|店裡|门店|門店|这里|這裡|那里|那裡|这家公司|這家公司|本地|老家|国外|國外|外地|北上广|"
    r"办公室|辦公室|总部|總部|机场|機場|健身房|地铁|地鐵|路上|床上)$"
)


def org_name(value: str) -> str | None:
    """An organisation as named ("一家叫星辰科技的小公司" → 星辰科技); None for a kind of place ("一家外企",
    "医院") or a city ("上海")."""
    named = re.search(r"(?:叫|名叫|名为|名為)(?P<n>[^的]{1,12})的", value)
    if named:
        value = named["n"]
    elif re.match(r"^(?:一家|一间|一間|一个|一個|一所|某|家)", value.strip()):
        return None  # "一家游戏公司": what kind of place, not which
    value = zh_clean(value)
    if not 1 < len(value) <= 16 or _ORG_GENERIC.match(value) or re.search(r"[我你他她哪谁誰什]", value):
        return None
    if origin_place(value) and not re.search(
        r"(?:银行|銀行|大学|大學|集团|集團|公司|科技|医院|醫院)$", value
    ):
        return None  # "在上海工作": where, not for whom
    return value


_ZH_PLACES = (
    "北京 天津 上海 重庆 重慶 河北 山西 辽宁 遼寧 吉林 黑龙江 黑龍江 江苏 江蘇 浙江 安徽 福建 江西 山东 山東 河南 湖北 "
    "湖南 广东 廣東 海南 四川 贵州 貴州 云南 雲南 陕西 陝西 甘肃 甘肅 青海 台湾 臺灣 台灣 内蒙古 內蒙古 广西 廣西 "
    "西藏 宁夏 寧夏 新疆 香港 澳门 澳門 东北 東北 西北 华南 華南 华北 華北 江南 潮汕 闽南 閩南 温州 溫州 广州 廣州 "
    "深圳 杭州 南京 武汉 武漢 成都 西安 长沙 長沙 青岛 青島 大连 大連 厦门 廈門 苏州 蘇州 宁波 寧波 台北 臺北 台中 "
    "臺中 台南 臺南 高雄 新竹 桃园 桃園 哈尔滨 哈爾濱 沈阳 瀋陽 济南 濟南 郑州 鄭州 合肥 福州 昆明 贵阳 貴陽 南宁 "
    "南寧 兰州 蘭州 大理 丽江 麗江 无锡 無錫 珠海 东莞 東莞 佛山 汕头 汕頭 三亚 三亞 拉萨 拉薩 乌鲁木齐 烏魯木齊 "
    "绍兴 紹興 嘉兴 嘉興 湖州 金华 金華 台州 舟山 扬州 揚州 镇江 鎮江 常州 南通 徐州 连云港 連雲港 盐城 鹽城 泰州 "
    "芜湖 蕪湖 蚌埠 潮州 揭阳 揭陽 梅州 惠州 中山 江门 江門 湛江 茂名 肇庆 肇慶 韶关 韶關 泉州 漳州 莆田 龙岩 龍岩 "
    "赣州 贛州 九江 景德镇 景德鎮 洛阳 洛陽 开封 開封 宜昌 襄阳 襄陽 岳阳 岳陽 株洲 湘潭 衡阳 衡陽 常德 桂林 柳州 "
    "北海 海口 绵阳 綿陽 宜宾 宜賓 乐山 樂山 南充 遵义 遵義 曲靖 西双版纳 西雙版納 咸阳 咸陽 宝鸡 寶雞 延安 大同 "
    "太原 石家庄 石家莊 保定 唐山 秦皇岛 秦皇島 邯郸 邯鄲 烟台 煙台 威海 潍坊 濰坊 临沂 臨沂 淄博 泰安 长春 長春 "
    "吉林 延边 延邊 大庆 大慶 齐齐哈尔 齊齊哈爾 鞍山 丹东 丹東 锦州 錦州 呼和浩特 包头 包頭 银川 銀川 西宁 西寧 "
    "南昌 南方 北方 江浙 两广 兩廣 基隆 宜兰 宜蘭 花莲 花蓮 台东 臺東 屏东 屏東 嘉义 嘉義 彰化 苗栗 南投 澎湖 "
    "日本 韩国 韓國 中国 中國 美国 美國 英国 英國 法国 法國 德国 德國 加拿大 澳大利亚 澳大利亞 澳洲 新加坡 马来西亚 "
    "馬來西亞 泰国 泰國 越南 印度 俄罗斯 俄羅斯 意大利 西班牙 巴西 墨西哥 荷兰 荷蘭 瑞典 瑞士 新西兰 紐西蘭 菲律宾 "
    "菲律賓 印尼 爱尔兰 愛爾蘭 葡萄牙 希腊 希臘 土耳其 埃及 蒙古 朝鲜 朝鮮 以色列 挪威 芬兰 芬蘭 丹麦 丹麥 波兰 波蘭"
).split()
PLACE_START = re.compile("^(?:" + "|".join(sorted(_ZH_PLACES, key=len, reverse=True)) + ")")
_PLACE_SUFFIX = re.compile(rf"^[{CJK}]{{1,4}}(?:国|國|省|市|县|縣|州|岛|島|镇|鎮|村)$")
_NOT_ORIGIN = re.compile(r"^(?:外国|外國|本国|本國|异国|異國|外地|本地|乡下|鄉下|城里|城裡|农村|農村)")


def origin_clean(value: str) -> str:
    """Where one is from, without "本地" ("杭州本地人" → 杭州)."""
    return re.sub(r"(?:本地|当地|當地)$", "", zh_clean(value))


def origin_place(value: str) -> bool:
    value = re.sub(r"(?:本地|当地|當地)$", "", value.strip())  # "杭州本地人"
    if not 1 < len(value) <= 8 or _NOT_ORIGIN.match(value) or not is_place(value):
        return False
    return bool(PLACE_START.match(value) or _PLACE_SUFFIX.match(value))


def field_of(value: str) -> str | None:
    """What is studied ("心理学研究生" → 心理学); None for a degree or school alone ("读研", "读书")."""
    if value in ("医", "醫"):
        return value + "学"
    value = re.sub(
        r"(?:专业|專業|系|研究生|本科|硕士|碩士|博士|学位|學位|课程|課程|方向)$", "", zh_clean(value)
    )
    value = re.sub(r"^(?:了|的|学|學)", "", value)
    if not 1 < len(value) <= 12 or re.match(
        r"^(?:研|博|书|書|大学|大學|高中|初中|小学|小學|大一|大二|大三|大四|研一|研二|研三|东西|東西|习|習|好|坏|壞|会|會)$",
        value,
    ):
        return None
    if re.search(r"[我你他她呢吗嗎么麼这這那]|问题|問題", value):
        return None
    return value


def liked_value(value: str) -> str | None:
    value = trim(value).strip("《》〈〉")
    if re.fullmatch(r"[了啦啊呀哦喔吧的]+", value):
        return None
    value = re.sub(r"的(?:东西|東西)?$", "", value) if len(value) > 3 else value
    if len(value) > 2 and value[0] in "吃看打听聽玩":
        value = value[1:]
    if (
        not 0 < len(value) <= 16
        or re.match(
            r"^(?:你|您|这|這|那|它|人|上|死|自己|什么|什麼|的|吃|喝|玩|睡|看)$|^(?:上|的|这|這|那)", value
        )
        or re.search(r"[我你他她]|喜欢|喜歡|讨厌|討厭", value)
    ):
        return None
    return value

"""Japanese statements that state an attribute of their subject ("先月大阪に引っ越しました" → home = 大阪),
and the reader that goes through a clause's parts ("教師を辞めて、今はカフェの店長です": job = 店長)."""

from __future__ import annotations

import re
from collections.abc import Callable

from ..facts import Category
from .cjk_values import is_condition, is_language, is_name, is_occupation, is_place, trim
from .shapes import Draft, Voice, cjk_sentence


def is_name_ja(value: str) -> bool:
    return is_name(value, japanese=True)


def trim_ja(value: str) -> str:
    return trim(value, japanese=True)


JA_I = r"(?:私|わたし|僕|ぼく|俺|おれ|あたし)(?!たち|達|ども|ら)"
_JA_I_TOKEN = re.compile(rf"{JA_I}(?=[のはがをにもでと、]|$)")
JA_SUBJECT_START = re.compile(rf"^{JA_I}(?:[のはがをにもでと])")

# Words of time that may open what is said ("先月大阪に…", "今年から課長に…", "毎朝…").
WHEN = (
    r"(?:(?:(?:今年|去年)の[春夏秋冬]|今年|去年|昨年|一昨年|先月|先週|今月|今週|最近|今|いま|現在|この前|先日|ずっと|毎朝|毎日|毎晩|いつも|普段|"
    r"もう|やっと|ついに|とうとう|昔から|前から|(?:\d+|[一二三四五六七八九十数半]+)(?:年|ヶ月|か月|カ月|週間)前|半年前|"
    r"[春夏秋冬]|年明け|今日|昨日|結局|実は|基本|(?:\d{1,2}|[一二三四五六七八九十]{1,2})月(?=から|より))"
    r"(?:から|より|は|で|に|も)*[、,]?\s*)"
)
WHEN_START = re.compile(rf"^{WHEN}+")
# How a statement may close ("です", "なんだよね", "やで", "っす").
END = (
    r"(?:です|だ|や|なん|なの|なんです|なんだ|んです|んだ|っす|でございます|ですけど|だけど|けど)?"
    r"(?:(?:よ|ね|わ|さ|で|の|な)[ー〜～]*|[〜～！!♪wｗ])*$"
)
# A state that holds now: 住んで|働いて + います/ます/る (not the past: "住んでいました", "住んでた").
IRU = r"(?:(?:います|いる|ます|る)(?:んです|んだ|の|よ|ね|けど|わ)*|いて|て)"  # "住んでいて、…": still so
V = r"(?P<v>[^、,。！？!?「」『』]+?)"
NAME_V = r"(?P<v>[^\s、,。！？!?「」『』（）()]{1,16}?)(?:さん|ちゃん|くん|君|様)?"
OWN_NAME_V = r"(?P<v>[^\s、,。！？!?「」『』（）()]{1,16}?)"  # one's own name or nickname keeps "ちゃん"

_REL_WORDS = sorted(
    (
        "姉 妹 兄 弟 母 父 妻 夫 息子 娘 彼女 彼氏 嫁 旦那 主人 婚約者 奥さん 子供 子ども 祖母 祖父 おばあちゃん "
        "おじいちゃん 叔父 叔母 伯父 伯母 いとこ 従兄弟 従姉妹 親友 友達 友人 同僚 上司 部長 課長 ボス ルームメイト "
        "隣人 お隣さん 猫 犬 ハムスター インコ うさぎ ウサギ ペット 母親 父親 お母さん お父さん 姉さん 兄さん "
        "お姉ちゃん お兄ちゃん パートナー 旦那さん 嫁さん 恋人"
    ).split(),
    key=len,
    reverse=True,
)
REL = "(?:" + "|".join(_REL_WORDS) + ")"


def ja_third(text: str, voice: Voice) -> str:
    return _JA_I_TOKEN.sub(voice.ja, text)


_OWN_TOPIC = re.compile(
    r"^(?:誕生日|名前|出身|趣味|専攻|勤め先|勤務先|職業|仕事|好きな|あだ名|ニックネーム|母語|母国語|実家|新居|地元|故郷|"
    r"(?:新しい|直属の)(?:上司|部長|課長|ボス|マネージャー|リーダー))"
)


def ja_statement(text: str, voice: Voice) -> str:
    """Third person, adding the subject the speaker left out ("東京に住んでいます"; "誕生日は…" → the
    speaker's birthday)."""
    if JA_SUBJECT_START.match(text):
        return cjk_sentence(ja_third(text, voice))
    joint = "の" if _OWN_TOPIC.match(text) else "は"
    return cjk_sentence(f"{voice.ja}{joint}{ja_third(text, voice)}")


def is_relative(voice: Voice) -> bool:
    return voice.person is not None and voice.ja != voice.person


_TEMPLATES = {
    "name": "{s}の名前は{v}",
    "age": "{s}は{v}歳",
    "birthday": "{s}の誕生日は{v}",
    "home": "{s}は{v}に住んでいる",
    "origin": "{s}は{v}出身",
    "employer": "{s}は{v}で働いている",
    "job": "{s}の職業は{v}",
    "studies": "{s}は{v}を学んでいる",
    "allergy": "{s}は{v}アレルギー",
    "health": "{s}の持病：{v}",
    "likes": "{s}は{v}が好き",
    "dislikes": "{s}は{v}が苦手",
    "drink": "{s}はいつも{v}を飲む",
    "diet": "{s}の食事：{v}",
    "pet": "{s}のペットは{v}",
    "speaks": "{s}は{v}を話せる",
    "partner": "{s}のパートナーは{v}",
    "manager": "{s}の上司は{v}",
    "language": "{s}の希望：{v}で答えてほしい",
}


def render(voice: Voice) -> Callable[[Draft], str]:
    def words(draft: Draft) -> str:
        template = _TEMPLATES.get(draft.attribute or "", "{s}の{a}は{v}")
        return cjk_sentence(template.format(s=voice.ja, v=draft.value, a=draft.attribute))

    return words


# --- values as said

_CUT = re.compile(r"^.*(?:[でのはもを、てへに]|から)")


def last_noun(value: str) -> str:
    """The noun a particle phrase ends with ("夫の転勤で仙台" → 仙台, "アメリカのシアトル" → シアトル)."""
    tail = _CUT.sub("", value)
    return tail or value


def ja_clean(value: str) -> str:
    value = trim_ja(value)
    return re.sub(r"(?:さん|ちゃん|くん|様)$", "", value) if len(value) > 3 else value


def last_clean(value: str) -> str:
    """The noun a phrase ends with, without a closing honorific ("コーヒーをやめて紅茶" → 紅茶)."""
    return last_noun(ja_clean(value))


def place_of(value: str) -> str | None:
    value = last_noun(ja_clean(value))
    return value if is_place(value) and len(value) <= 10 and not re.search(r"[たてっ]$", value) else None


NATIONS = re.compile(
    r"^(?:日本|中国|韓国|台湾|香港|米国|英国|アメリカ|イギリス|カナダ|フランス|ドイツ|イタリア|スペイン|ポルトガル|"
    r"ブラジル|メキシコ|オーストラリア|ニュージーランド|インド|タイ|ベトナム|フィリピン|インドネシア|マレーシア|"
    r"シンガポール|ロシア|オランダ|スウェーデン|ノルウェー|フィンランド|デンマーク|スイス|ベルギー|アイルランド|"
    r"ポーランド|トルコ|エジプト|アルゼンチン|チリ|ペルー|コロンビア|ネパール|モンゴル|[^\s、。の]{1,6}(?:国|県|州|島))$"
)
_ORG_GENERIC = re.compile(
    r"^(?:会社|病院|学校|大学|お店|店|家|自宅|カフェ|工場|銀行|役所|オフィス|事務所|現場|職場|地元|東京|大阪|ここ|そこ|"
    r"コンビニ|スーパー|飲食店|居酒屋|IT企業|外資|ベンチャー|大手|中小企業|実家|保育園|幼稚園|クリニック|塾|レストラン|"
    r"ホテル|美容院|美容室|薬局|介護施設|老人ホーム|図書館|役場|区役所|商社|メーカー|IT|広告代理店|出版社|本屋|書店|"
    r"パン屋|花屋|デパート|百貨店|スタートアップ|外資系|小学校|中学校|高校|大学病院|研究所|ジム|空港)$|の会社$"
)


JA_PLACE = re.compile(
    r"^(?:北海道|青森|岩手|宮城|秋田|山形|福島|茨城|栃木|群馬|埼玉|千葉|東京|神奈川|新潟|富山|石川|福井|山梨|長野|岐阜|静岡|"
    r"愛知|三重|滋賀|京都|大阪|兵庫|奈良|和歌山|鳥取|島根|岡山|広島|山口|徳島|香川|愛媛|高知|福岡|佐賀|長崎|熊本|大分|宮崎|"
    r"鹿児島|沖縄|札幌|仙台|横浜|川崎|名古屋|神戸|博多|渋谷|新宿|品川|池袋|海外|地元|都内|都心|関西|関東|九州|東北|"
    r"[^\s]{1,4}(?:県|市|都|府|区|町|村))$"
)


def org_name(value: str) -> str | None:
    value = ja_clean(value)
    if JA_PLACE.match(value):
        return None  # "大阪で働いています": where, not for whom
    if (
        not 1 < len(value) <= 16
        or _ORG_GENERIC.match(value)
        or re.search(r"[私僕俺誰何をがは]|ところ|とこ", value)
    ):
        return None
    return value


def field_of(value: str) -> str | None:
    value = last_noun(ja_clean(value))
    value = re.sub(r"学部$", "学", value)
    value = re.sub(r"(?:専門学校|学校|学科|専攻|の勉強)$", "", value)
    if not 1 < len(value) <= 12 or re.match(r"^(?:大学|大学院|高校|勉強|こと|それ|これ|何)$", value):
        return None
    return value


def liked_value(value: str) -> str | None:
    value = ja_clean(value)
    value = re.sub(r"^.+は", "", value) or value
    value = re.sub(r"^.+より(?:も)?", "", value) or value  # "コーヒーより紅茶が好き"
    value = re.sub(
        r"(?<=[うくすつぬふむゆるぐずぶぷ])(?:の|こと)$", "", value
    )  # "ギターを弾くのが好き": playing the guitar
    if not 0 < len(value) <= 16 or re.search(
        r"[「」『』]|って|こと$|[たて]い$|あなた|君|^(?:これ|それ|あれ|この|その|あの|どの|こういう|そういう|ああいう|"
        r"こんな|そんな|あんな|という|と|って)|派|言えば|なら|セリフ|台詞",
        value,
    ):
        return None
    return value


def disliked_value(value: str) -> str | None:
    """What one dislikes; not a language ("英語は苦手です": not good at it, not a dislike)."""
    liked = liked_value(value)
    return None if liked is None or is_language(liked) else liked


def ja_fact(
    said: str, voice: Voice, category: Category, importance: int, topic: str, attribute: str, value: str
) -> Draft:
    return Draft(ja_statement(said, voice), topic, category, importance).stating(attribute, value)


def describes(value: str) -> bool:
    """What someone is ("看護師", "カナダ人", "糖尿病", "5歳"), not their name."""
    if re.search(
        r"(?:電話|仕事|料理|出張|勉強|休憩|会議|運転|移動|入院|通院|治療|妊娠|育休|産休|療養|留学|旅行|外出|散歩|食事|"
        r"練習|準備|帰省|就活|婚活|ダイエット|禁煙|禁酒|外回り|接客|作業|残業|在宅)中$",
        value,
    ):
        return True  # "父は電話中です": what they are doing
    return (
        is_occupation(value, japanese=True)
        or is_condition(value)
        or bool(
            re.search(
                r"(?:人|歳|才|生まれ|出身|好き|嫌い|派|制限中|な|だ|的|[たてん])$|^(?:うち|私|僕|俺)|\d",
                value,
            )
        )
        or bool(re.search(r"アレルギー|持ち|好き|嫌い|苦手|ファン|[をがにで]", value))
        or bool(re.search(r"[\u4e00-\u9fff][\u3040-\u309f]*い$|^[\u3040-\u309f]{3,}い$", value))
    )

"""The Japanese statements that state an attribute of their subject ("先月大阪に引っ越しました" → home =
大阪), each a pattern on what is said without its opening time words, and the handler that writes its fact."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .cjk_values import (
    DATE,
    DIET_JA,
    NUMBER,
    is_allergen,
    is_birth_date,
    is_condition,
    is_drink,
    is_language,
)
from .japanese_facts import (
    END,
    IRU,
    JA_I,
    NAME_V,
    NATIONS,
    OWN_NAME_V,
    REL,
    V,
    disliked_value,
    last_clean,
    last_noun,
    liked_value,
    place_of,
    trim_ja,
)
from .japanese_handlers import (
    Handler,
    age_fact,
    attr_fact,
    call_me_fact,
    each_fact,
    fan_fact,
    favourite_fact,
    habit_drink_fact,
    language_fact,
    liked_list_fact,
    manager_fact,
    name_fact,
    names_fact,
    no_longer_diet_fact,
    own_name_fact,
    partner_fact,
    pet_fact,
    plan_date_fact,
    study_fact,
    study_x_fact,
    usual_drink_fact,
    work_fact,
)

# --- the statements


@dataclass(frozen=True)
class FactRule:
    pattern: re.Pattern[str]
    handler: Handler
    final: bool = True
    consequence: bool = True  # may be read after "…ので" ("猫アレルギーだから猫カフェは無理": not a dislike)


def _rules(*rows: tuple) -> tuple[FactRule, ...]:
    return tuple(FactRule(re.compile(row[0]), *row[1:]) for row in rows)


_LIKE = r"(?:大好き|好き|大好物|好物)"
_HATE = r"(?:大嫌い|嫌い|苦手|ダメ|だめ|好きじゃない|好きではない|好きじゃありません|好きではありません)"
_SPEAK = r"(?:話せ(?:ます|る)|話します|しゃべれ(?:ます|る)|喋れ(?:ます|る)|できます|できる)"
PLAN = (
    r"(?P<plan>[^\s、,。はがも]{0,8}?(?:旅行|旅|同窓会|結婚式|披露宴|忘年会|新年会|歓迎会|送別会|飲み会|引っ越し|引越し|"
    r"会議|面接|試験|出張|誕生日会|パーティー|発表会|卒業式|入学式|ライブ|コンサート|手術|合宿|キャンプ|女子会|"
    r"打ち上げ|説明会|健康診断|デート|帰省|ピクニック|バーベキュー|BBQ|お?花見|ハイキング|"
    r"登山|マラソン|試合|大会|展示会|発表|講演|セミナー|研修|検診|健診|イベント|フェス|遠足|運動会|入籍|"
    # an appointment, named by whom it is with: "歯医者の予約は12日です", "歯医者は14日です"
    r"(?:歯医者|病院|美容院|美容室|眼科|皮膚科|内科|整体|カウンセリング)(?:の予約)?|予約))"
)

JA_FACT_RULES: tuple[FactRule, ...] = _rules(
    # who a relation is (before a name: "彼氏は大輝っていいます" is the boyfriend's)
    (
        rf"^(?:うちの|私の|僕の|俺の)?(?:一番の|大切な)?(?P<rel>{REL})(?:(?:の|は|、)?名前(?:は|が)|は|、){NAME_V}(?:です|だ|っていいます|って言います|といいます|"
        rf"と言います|っていう(?:の|んだ|んです)?(?:けど)?|って人(?:です)?|だよ|って名前(?:です)?){END}",
        names_fact,
        False,
    ),
    # name
    (
        rf"^{JA_I}の(?:名前|フルネーム)は{OWN_NAME_V}(?:です|だ|といいます|と言います|と申します|っていいます){END}",
        name_fact,
    ),
    # "名前はココです" said alone may name a pet just mentioned: the speaker's only in an introduction
    (
        rf"^(?:名前|フルネーム)は{OWN_NAME_V}(?:です|だ|といいます|と言います|と申します|っていいます)(?:、よろしく.*)?$",
        own_name_fact,
        False,
    ),
    (rf"^(?:{JA_I}の)?(?:あだ名|ニックネーム|呼び名|愛称)は{OWN_NAME_V}(?:です|だ){END}", name_fact),
    (rf"^{OWN_NAME_V}(?:と申します|といいます|と言います|っていいます)$", name_fact),
    (
        rf"^(?:{JA_I}のことを|{JA_I}を)?{OWN_NAME_V}(?:と|って)呼んで(?:ください|下さい|ね|ほしい|欲しい|くれ)?(?:です)?{END}",
        call_me_fact,
    ),
    (rf"^(?:[^、,。]{{0,8}}(?:して|で))?(?:苗字|名字|姓)が{NAME_V}に変わ(?:りました|った){END}", name_fact),
    # age, birthday
    (rf"^(?P<v>{NUMBER})(?:歳|才)(?:です|だ|になりました|になった|になります)?{END}", age_fact),
    (rf"^(?:今年で|今年)?(?P<v>{NUMBER})(?:歳|才)?に(?:なりました|なった){END}", age_fact),
    (
        rf"^(?:誕生日|生年月日)(?:は|、|が)?{V}(?:です|だ|なんだ|だよ)?(?:だから|なので)?{END}",
        attr_fact("birthday", "identity", 8, "誕生日", is_birth_date),
    ),
    (rf"^{V}生まれ(?:です|だ)?{END}", attr_fact("birthday", "identity", 8, "誕生日", is_birth_date), False),
    # home, origin
    (
        rf"^{V}に(?:住んで|暮らして)(?:{IRU}|(?:\d+|[一二三四五六七八九十数半]+)(?:年|ヶ月|か月|カ月)(?:目)?(?:です|になります|になる|だ)?){END}",
        attr_fact("home", "identity", 8, "居住地", clean=place_of),
    ),
    (
        rf"^{V}(?:に|へ)(?:引っ越し|引越し|移住し|移り住み)(?:ました|た|てきました|てきた){END}",
        attr_fact("home", "identity", 8, "居住地", clean=place_of),
    ),
    (rf"^{V}に住み始め(?:ました|た){END}", attr_fact("home", "identity", 8, "居住地", clean=place_of)),
    (
        rf"^{V}で(?:一人暮らし|ひとり暮らし|暮らし|生活)(?:を)?(?:して|し)(?:{IRU}|始めました|始めた){END}",
        attr_fact("home", "identity", 8, "居住地", clean=place_of),
    ),
    (rf"^{V}(?:住み|在住)(?:です|だ)?{END}", attr_fact("home", "identity", 8, "居住地", clean=place_of)),
    (
        rf"^(?:新居|今の家|住まい)は{V}(?:です|だ)?{END}",
        attr_fact("home", "identity", 8, "居住地", clean=place_of),
    ),
    (rf"^{V}(?:の)?出身(?:です|だ)?{END}", attr_fact("origin", "identity", 8, "出身", clean=place_of)),
    (rf"^出身(?:地)?は{V}(?:です|だ)?{END}", attr_fact("origin", "identity", 8, "出身", clean=place_of)),
    (
        rf"^{V}(?:生まれ|育ち)(?:[^、,]{{0,8}}(?:生まれ|育ち))?(?:です|だ)?{END}",
        attr_fact("origin", "identity", 8, "出身", clean=place_of),
    ),
    (rf"^生まれも育ちも{V}(?:です|だ)?{END}", attr_fact("origin", "identity", 8, "出身", clean=place_of)),
    (rf"^(?:生まれ|育ち)は{V}(?:です|だ)?{END}", attr_fact("origin", "identity", 8, "出身", clean=place_of)),
    (
        rf"^(?:今)?住んで(?:いる|る)(?:の|ところ|とこ)は{V}(?:です|だ)?{END}",
        attr_fact("home", "identity", 8, "居住地", clean=place_of),
    ),
    (
        rf"^{V}(?:の田舎|の郊外)?で(?:生まれ|育ち|生まれ育ち|育っ)(?:ました|た){END}",
        attr_fact("origin", "identity", 8, "出身", clean=place_of),
    ),
    (
        rf"^(?:地元|故郷|ふるさと)は{V}(?:です|だ)?{END}",
        attr_fact("origin", "identity", 8, "出身", clean=place_of),
    ),
    (rf"^{V}が(?:地元|故郷)(?:です|だ)?{END}", attr_fact("origin", "identity", 8, "出身", clean=place_of)),
    (
        rf"^実家は{V}(?:です|だ|にあります|にある|の[^、,]+)?{END}",
        attr_fact("origin", "identity", 7, "実家", clean=place_of),
    ),
    (
        rf"^{V}人(?:です|だ|なん|なの)?(?:なので|だから)?{END}",
        attr_fact("origin", "identity", 8, "出身", lambda v: bool(NATIONS.match(v))),
        False,
    ),
    # work, study
    (rf"^(?P<org>[^、,。]+?)で(?P<job>[^、,。をで]+?)(?:を)?(?:やって|して)(?:{IRU}){END}", work_fact, False),
    (
        rf"^(?P<org>[^、,。]+?)で(?P<job>バイト|アルバイト|パート)(?:を)?(?:して|やって)(?:{IRU}){END}",
        work_fact,
    ),
    (
        rf"^(?P<org>[^、,。]+?)で(?:働いて|勤めて|仕事して|仕事をして|働き始め)(?:{IRU}|ました|た){END}",
        work_fact,
    ),
    (rf"^(?P<org>[^、,。]+?)に(?:勤めて|勤務して|所属して)(?:{IRU}){END}", work_fact),
    (rf"^(?P<org>[^、,。]+?)に(?:入社|転職|就職)(?:しました|した){END}", work_fact),
    (rf"^(?:勤め先|勤務先|職場|会社)は(?P<org>[^、,。]+?)(?:です|だ)?{END}", work_fact),
    (rf"^(?P<org>[^、,。]+?)で(?P<job>[^、,。]+?)として(?:働いて|勤めて)(?:{IRU}){END}", work_fact, False),
    (rf"^(?P<job>[^、,。]+?)(?:として)(?:働いて|勤めて)(?:{IRU}){END}", work_fact),
    (
        rf"^(?P<org>[^、,。]+?)の(?:社員|正社員|職員|従業員|スタッフ|契約社員)(?:です|だ|をしています)?{END}",
        work_fact,
    ),
    (rf"^(?:{JA_I}の)?(?:仕事|職業|本業|職種)は(?P<job>[^、,。]+?)(?:です|だ)?{END}", work_fact),
    (rf"^(?P<job>[^、,。]+?)(?:を)?(?:やって|して)(?:{IRU}){END}", work_fact, False),
    (rf"^(?P<job>[^、,。]+?)に(?:なりました|なった|昇進しました){END}", work_fact, False),
    (rf"^(?P<job>[^、,。はがをに]+?)(?:です|だ|や|っす)?(?:なので|だから)?{END}", work_fact, False),
    (
        rf"^(?:{V}で)?(?P<x>[^、,。]+?)を(?:勉強|専攻|研究)(?:中|(?:して|し)(?:{IRU}|始めました|始めた))(?:です)?{END}",
        lambda m, v, s: study_x_fact(m, v, s),
    ),
    (rf"^{V}を(?:学んで|習って)(?:{IRU}){END}", study_fact),
    (rf"^{V}(?:の勉強)(?:を)?(?:して{IRU}|中(?:です)?){END}", study_fact),
    (rf"^{V}(?:専門学校|学校|学部|学科)に(?:通って|在籍して)(?:{IRU}){END}", study_fact),
    (rf"^(?P<v>[^、,。]+?(?:学部|学科))(?:の(?:\d|[一二三四])年(?:生)?)?(?:です|だ)?{END}", study_fact),
    (rf"^専攻は{V}(?:です|だ)?{END}", study_fact),
    # food and drink
    (
        rf"^(?:もう)?{V}(?:じゃない|ではない|じゃありません|ではありません)(?:です)?{END}",
        lambda m, v, s: no_longer_diet_fact(m, v, s),
        False,
    ),
    (
        rf"^(?P<v>{DIET_JA}(?:を|は)(?:やめました|やめた|辞めました|卒業しました))",
        attr_fact("diet", "identity", 8, "食事", clean=trim_ja),
    ),
    (
        rf"^(?:今は)?{V}に(?:しました|した|変えました|変えた|切り替えました|切り替えた)(?:よ|ね)?{END}",
        attr_fact("drink", "preference", 6, "飲み物", is_drink, last_clean),
        False,
    ),
    (
        rf"^(?P<v>{DIET_JA})に(?:なりました|なった|転向しました|しました|した){END}",
        attr_fact("diet", "identity", 8, "食事"),
    ),
    (
        rf"^(?P<v>{DIET_JA})の(?:食事|生活)(?:を)?(?:して|続けて){IRU}{END}",
        attr_fact("diet", "identity", 8, "食事"),
    ),
    (
        rf"^(?P<v>{DIET_JA})(?:中)?(?:です|だ|なん|を(?:して|やって){IRU}|(?:して|やって){IRU})?(?:なので|だから)?{END}",
        attr_fact("diet", "identity", 8, "食事"),
    ),
    (
        rf"^{V}しか食べ(?:ない|られない|ません|られません)(?:です|んです|んだ)?{END}",
        attr_fact("diet", "identity", 8, "食事"),
    ),
    (
        rf"^(?P<v>[^、,。]{{1,6}}(?:は|を)食べ(?:ない|ません))(?:ことにした|ことにしました|ようにしている|ようにしてます|です|んです)?(?:ん)?{END}",
        attr_fact("diet", "identity", 8, "食事"),
    ),
    (rf"^{V}(?:を)?(?:(?:\d|[一二三四五])杯)?飲んで(?:{IRU}){END}", habit_drink_fact, False),
    (
        rf"^{V}(?:を)?(?:(?:\d|[一二三])杯)?(?:飲みます|飲む|飲んでる|飲んでます)(?:よ|ね)?{END}",
        habit_drink_fact,
        False,
    ),
    (
        rf"^{V}しか飲(?:まない|まないんだ|まないです|まん|んでない|みません)(?:んだ)?{END}",
        attr_fact("drink", "preference", 6, "飲み物", is_drink),
    ),
    (rf"^{V}(?:です|だ){END}", usual_drink_fact, False),
    (rf"^{V}(?:一杯|1杯)?は欠かせない{END}", attr_fact("drink", "preference", 6, "飲み物", is_drink), False),
    (rf"^{V}派(?:です|だ|なん)?{END}", fan_fact),
    # allergies and conditions
    (
        rf"^{V}(?:に|の)?アレルギー(?:が)?(?:です|だ|あります|ある|持ち|なんです|なんだ|なの|でして|なので|だから|があるので|があるから)?{END}",
        each_fact("allergy", "identity", 9, "アレルギー", is_allergen),
    ),
    (
        rf"^{V}アレルギー(?:があって|で|なので|だから).*$",
        each_fact("allergy", "identity", 9, "アレルギー", is_allergen),
    ),
    (
        rf"^{V}持ち(?:です|だ|なん|でして)?{END}",
        attr_fact("health", "identity", 8, "持病", lambda v: not re.match(r"^(?:お?金|力|気|家|車)", v)),
    ),
    (
        rf"^{V}(?:です|でして|なんです|なん|だ|なの|があります|がある|を患って{IRU}|と診断されました)?(?:なので|だから)?{END}",
        attr_fact("health", "identity", 8, "持病", is_condition, last_noun),
        False,
    ),
    (
        rf"^{V}(?:で|のため|の治療で|の)(?:薬を飲んで|通院して|治療して|入院して)(?:{IRU})?{END}",
        attr_fact("health", "identity", 8, "持病", is_condition, last_noun),
        False,
    ),
    (
        rf"^{V}(?:で|のため)(?:治療中|通院中)(?:です)?{END}",
        attr_fact("health", "identity", 8, "持病", is_condition, last_noun),
        False,
    ),
    # likes
    (
        rf"^{V}(?:が|は|も)?{_HATE}(?:です|だ|なん|なんです|なんだ)?{END}",
        attr_fact("dislikes", "preference", 6, "苦手", clean=disliked_value),
        True,
        False,
    ),
    (
        rf"^{V}(?:だけ)?は(?:どうしても|絶対)?(?:無理|ダメ|だめ)(?:です)?{END}",
        attr_fact("dislikes", "preference", 6, "苦手", clean=disliked_value),
        True,
        False,
    ),
    (
        rf"^{V}(?:が|は|も)?{_LIKE}(?:です|だ|なん|なんです|なんだ)?{END}",
        liked_list_fact("likes", "好き", liked_value),
    ),
    (
        rf"^{V}には?目がない(?:です|んです|んだ)?{END}",
        attr_fact("likes", "preference", 6, "好き", clean=liked_value),
    ),
    (
        rf"^{V}に(?:ハマって|はまって|夢中)(?:{IRU}|です)?{END}",
        attr_fact("likes", "preference", 6, "好き", clean=liked_value),
    ),
    (
        rf"^{V}の(?:大)?ファン(?:です|だ)?{END}",
        attr_fact("likes", "preference", 6, "好き", clean=liked_value),
    ),
    (
        rf"^(?:{JA_I}の)?趣味は{V}(?:です|だ)?{END}",
        liked_list_fact("likes", "趣味", liked_value),
    ),
    (rf"^{V}(?:が)?趣味(?:です|だ)?{END}", liked_list_fact("likes", "趣味", liked_value)),
    (rf"^(?:{JA_I}の)?(?:一番)?好きな(?P<what>[^、,。はが]{{1,8}})は{V}(?:です|だ)?{END}", favourite_fact),
    # languages
    (
        rf"^{V}(?:(?:は|が|を|なら)[^、,。]{{0,10}}?)?(?:ペラペラ|ぺらぺら)(?:です|だ|に話せます)?{END}",
        each_fact("speaks", "skill", 7, "言語", is_language),
    ),
    (
        rf"^{V}(?:が|は|を|も)?(?:少し|ちょっと|少々|多少|日常会話(?:くらい|程度)?(?:なら)?|ネイティブ(?:並み)?に|流暢に|普通に)?{_SPEAK}{END}",
        each_fact("speaks", "skill", 7, "言語", is_language),
        False,
    ),
    (
        rf"^{V}(?:は|が)[^、,。]{{1,12}}(?:くらい|程度)(?:なら)?{_SPEAK}{END}",
        each_fact("speaks", "skill", 7, "言語", is_language),
        False,
    ),
    (
        rf"^{V}(?:は|が)(?:ネイティブ|母語|(?:日常会話|ビジネス|ネイティブ|上級|中級)(?:レベル|程度|くらい))(?:です|だ)?{END}",
        each_fact("speaks", "skill", 7, "言語", is_language),
    ),
    (
        rf"^{V}しか話せ(?:ません|ない)(?:です|んです)?{END}",
        each_fact("speaks", "skill", 7, "言語", is_language),
    ),
    (rf"^{V}(?:が|は)?得意(?:です|だ)?{END}", each_fact("speaks", "skill", 7, "言語", is_language), False),
    (rf"^{V}の?バイリンガル(?:です|だ)?{END}", each_fact("speaks", "skill", 7, "言語", is_language)),
    (rf"^(?:母語|母国語)は{V}(?:です|だ)?{END}", each_fact("speaks", "skill", 7, "母語", is_language)),
    (
        rf"^{V}で(?:答えて|返事して|返信して|話して|書いて|回答して|返して|やり取りして|お願い)(?:ください|下さい|ね|ほしい|欲しい|くれ|もらえる|します)?{END}",
        language_fact,
    ),
    (rf"^(?:返事|返信|回答|答え|会話)は{V}で(?:お願い(?:します)?|して(?:ください)?|ね)?{END}", language_fact),
    (rf"^{V}で(?:の)?(?:返信|返事|回答)(?:を)?(?:お願い(?:します)?|ください)?{END}", language_fact),
    # partner, relations, pets
    (
        rf"^(?:婚約者の|彼女の|彼氏の)?{NAME_V}とは?(?:結婚(?:します|しました|した|する|しています|してます)|婚約(?:しました|した)|付き合って(?:{IRU}|(?:\d+|[一二三四五六七八九十半]+)(?:年|ヶ月|か月)(?:目)?(?:になる|になります|です|だ)?)){END}",
        partner_fact,
    ),
    (
        rf"^(?:直属の|新しい)(?:上司|部長|課長|ボス|マネージャー|リーダー)(?:は|が){NAME_V}(?:って人|という人)?(?:に変わりました|に変わった|になりました|です|だ)?{END}",
        manager_fact,
    ),
    (
        rf"^{V}(?:を)?(?:(?:\d+|[一二三四五六七八九十何]+)(?:匹|羽|頭))?(?:飼って(?:{IRU}|て|いて)|飼い始め(?:ました|た)){END}",
        pet_fact,
    ),
    # a plan's date
    (
        rf"^{PLAN}(?:は|が|、|も)(?P<date>{DATE}(?:の?(?:午前|午後|朝|夜)?\d{{1,2}}時(?:半|\d{{1,2}}分)?)?)(?:に|で|から)?(?:変更になりました|変更になった|変わりました|変わった|変更しました|決まりました|"
        rf"決まった|なりました|なった|です|だ|にしました|にした|行くことになった|行くことになりました|やります|あります)?{END}",
        plan_date_fact,
    ),
)

"""The rules extractor in Chinese and Japanese: each fact carries its subject (the owner, another
speaker, a relative, a plan), its attribute and the shortest value as written; questions,
hypotheticals, hedges, jokes, reported speech and moments yield nothing.

The sentences are written for these tests (none is taken from the bench's labelled sets)."""

from __future__ import annotations

import pytest

from memory_cortex.models.rules import Said, extract_statements

Fact = tuple[str, str | None, str | None]


def facts(text: str, speaker: str | None = None) -> set[Fact]:
    return {(f.subject, f.attribute, f.value) for _, f in extract_statements([Said(text, speaker)])}


CHINESE: list[tuple[str, set[Fact]]] = [
    ("我住在成都", {("user", "home", "成都")}),
    ("我去年从上海搬到了苏州", {("user", "home", "苏州")}),
    ("我们前年搬去厦门了", {("user", "home", "厦门")}),
    ("现在住在杭州滨江，上班很方便", {("user", "home", "杭州滨江")}),
    ("我是湖北人", {("user", "origin", "湖北")}),
    ("我老家是河南的", {("user", "origin", "河南")}),
    ("我在深圳长大", {("user", "origin", "深圳")}),
    ("我在字节跳动做产品经理", {("user", "employer", "字节跳动"), ("user", "job", "产品经理")}),
    ("我在一家叫云帆网络的公司上班", {("user", "employer", "云帆网络")}),
    ("我从百度离职了，现在在京东", {("user", "employer", "京东")}),
    ("已经入职美团半年了", {("user", "employer", "美团")}),
    ("我是一名牙医", {("user", "job", "牙医")}),
    ("我转行做设计师了", {("user", "job", "设计师")}),
    ("我在浙大读化学", {("user", "studies", "化学")}),
    ("今年四十了", {("user", "age", "四十")}),
    ("我的生日是十二月二十五号", {("user", "birthday", "十二月二十五号")}),
    ("我对猫毛过敏", {("user", "allergy", "猫毛")}),
    ("我有高血压和痛风", {("user", "health", "高血压"), ("user", "health", "痛风")}),
    ("我吃素好几年了", {("user", "diet", "吃素")}),
    ("我平时只喝红茶", {("user", "drink", "红茶")}),
    ("我戒了咖啡，现在只喝豆浆", {("user", "drink", "豆浆")}),
    ("我超喜欢打网球", {("user", "likes", "网球")}),
    ("我一点也不喜欢榴莲", {("user", "dislikes", "榴莲")}),
    ("我会说法语和西班牙语", {("user", "speaks", "法语"), ("user", "speaks", "西班牙语")}),
    ("以后请用英文回答我", {("user", "language", "英文")}),
    ("我养了一只布偶猫，叫团子", {("user", "pet", "团子")}),
    ("我老公叫志强", {("user", "partner", "志强")}),
    ("我下个月要和阿伟结婚了", {("user", "partner", "阿伟")}),
    ("我表姐叫李梅", {("user", "cousin", "李梅")}),
    ("我领导叫赵刚", {("user", "manager", "赵刚")}),
    ("露营改到下周六了", {("露营", "date", "下周六")}),
    # where the job is done is where they live ("a nurse in Leeds"); a city before an employer too
    ("我在成都做护士", {("user", "job", "护士"), ("user", "home", "成都")}),
    (
        "我在广州的华为做工程师",
        {("user", "employer", "华为"), ("user", "job", "工程师"), ("user", "home", "广州")},
    ),
    # what they do there, said after the employer; a daily habit said without 我
    ("我在小米上班，负责手机设计", {("user", "employer", "小米"), ("user", "job", "手机设计")}),
    ("每天都要喝一杯奶茶", {("user", "drink", "奶茶")}),
]

CHINESE_PEOPLE: list[tuple[str, set[Fact]]] = [
    ("我妈有糖尿病", {("user's mother", "health", "糖尿病")}),
    ("我爸今年七十了", {("user's father", "age", "七十")}),
    ("儿子今年三岁了", {("user's son", "age", "三")}),
    ("我女儿对鸡蛋过敏", {("user's daughter", "allergy", "鸡蛋")}),
    # A relation named in passing is who they are; what follows is about them.
    ("我哥叫李强，住在广州", {("李强", "home", "广州")}),
    ("我老婆小丽特别喜欢爬山", {("小丽", "likes", "爬山")}),
    ("我同事老刘是东北人", {("老刘", "origin", "东北")}),
    ("弟弟叫小军，在北京工作", set()),  # "在北京工作": where, not for whom
    # a wish after the statement leaves it as said; a birthday brings an age
    ("我老公是医生，周末想请他吃饭", {("user's partner", "job", "医生")}),
    ("今天儿子过生日，五岁了", {("user's son", "age", "五")}),
]


@pytest.mark.parametrize(("text", "expected"), CHINESE + CHINESE_PEOPLE)
def test_a_chinese_statement_states_its_attribute(text: str, expected: set[Fact]) -> None:
    found = facts(text)
    assert expected <= found, found
    assert all(attribute for _, attribute, _ in found), found


def test_a_named_relative_is_also_the_speakers_relation() -> None:
    [(_, fact)] = extract_statements([Said("我姐姐叫王芳，是个护士")])
    assert (fact.subject, fact.relation, fact.attribute, fact.value) == ("王芳", "sister", "job", "护士")


def test_another_speakers_i_is_themselves() -> None:
    assert facts("我在腾讯上班，住在深圳", "小李") == {("小李", "employer", "腾讯"), ("小李", "home", "深圳")}
    assert facts("我爸是医生", "小李") == {("小李's father", "job", "医生")}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("说错了，我住在杭州，不是上海", {("user", "home", "杭州")}),
        ("更正一下：我女儿叫小雨", {("user", "daughter", "小雨")}),
        ("不好意思，我不是在百度，是在字节", {("user", "employer", "字节")}),
        ("我不再吃素了", {("user", "diet", "不再吃素")}),
    ],
)
def test_a_chinese_correction_or_change_states_the_new_value(text: str, expected: set[Fact]) -> None:
    assert facts(text) == expected


CHINESE_NOTHING = [
    "你住在哪里？",
    "我应该搬去北京吗",
    "如果我住在上海就好了",
    "我可能明年搬家",
    "我真想养只狗",
    "朋友说她对芒果过敏",
    "听说老王要搬去成都",
    "我爸觉得我应该当老师",
    "我住在被窝里，不接受反驳",
    "我对上班过敏",
    "我老公是空调哈哈哈",
    "我以前住在北京",
    "我小时候养过一只兔子",
    "我现在在机场",
    "今天喝了三杯咖啡",
    "我在上海出差",
    "叫我起床",
    "我们家添了个女儿",
    "帮我查一下北京的天气",
    "“我叫王小明，今年十岁”这句话怎么翻译",
    "我老公是医生，开玩笑的",
    "我老公是医生，可能吧",
    "我在上海的酒店",
]


@pytest.mark.parametrize("text", CHINESE_NOTHING)
def test_chinese_that_states_no_fact_yields_nothing(text: str) -> None:
    assert facts(text) == set()


JAPANESE: list[tuple[str, set[Fact]]] = [
    ("札幌に住んでいます", {("user", "home", "札幌")}),
    ("去年の春に京都へ引っ越しました", {("user", "home", "京都")}),
    ("福岡に住んで五年になります", {("user", "home", "福岡")}),
    ("埼玉出身です", {("user", "origin", "埼玉")}),
    ("生まれも育ちも神戸です", {("user", "origin", "神戸")}),
    ("ソニーでエンジニアとして働いています", {("user", "employer", "ソニー"), ("user", "job", "エンジニア")}),
    ("職種はデータアナリストです", {("user", "job", "データアナリスト")}),
    ("会社を辞めて、今はフリーランスです", {("user", "job", "フリーランス")}),
    ("転職して、今は任天堂で働いてます", {("user", "employer", "任天堂")}),
    ("保育士をしています", {("user", "job", "保育士")}),
    ("大学で経済学を勉強しています", {("user", "studies", "経済学")}),
    ("35歳です", {("user", "age", "35")}),
    ("誕生日は7月7日です", {("user", "birthday", "7月7日")}),
    ("エビアレルギーがあります", {("user", "allergy", "エビ")}),
    ("花粉症持ちです", {("user", "health", "花粉症")}),
    ("ヴィーガンになりました", {("user", "diet", "ヴィーガン")}),
    ("毎朝緑茶を飲んでいます", {("user", "drink", "緑茶")}),
    ("納豆が大好きです", {("user", "likes", "納豆")}),
    ("ピーマンは苦手です", {("user", "dislikes", "ピーマン")}),
    ("英語と韓国語が話せます", {("user", "speaks", "英語"), ("user", "speaks", "韓国語")}),
    ("これからは英語で答えてください", {("user", "language", "英語")}),
    ("ゆうって呼んでください", {("user", "name", "ゆう")}),
    ("猫を飼っていて、名前はタマです", {("user", "pet", "タマ")}),
    ("夫の名前は健二です", {("user", "partner", "健二")}),
    ("上司は山本さんです", {("user", "manager", "山本")}),
    ("上司は田中さんで、いつも優しいです", {("user", "manager", "田中")}),
    ("飲み会は金曜日になりました", {("飲み会", "date", "金曜日")}),
]

JAPANESE_PEOPLE: list[tuple[str, set[Fact]]] = [
    ("母は糖尿病です", {("user's mother", "health", "糖尿病")}),
    ("息子は五歳です", {("user's son", "age", "五")}),
    ("父は大阪に住んでいます", {("user's father", "home", "大阪")}),
    ("妻の由美は看護師です", {("由美", "job", "看護師")}),
    ("姉は美香っていって、名古屋に住んでます", {("美香", "home", "名古屋")}),
]


@pytest.mark.parametrize(("text", "expected"), JAPANESE + JAPANESE_PEOPLE)
def test_a_japanese_statement_states_its_attribute(text: str, expected: set[Fact]) -> None:
    found = facts(text)
    assert expected <= found, found
    assert all(attribute for _, attribute, _ in found), found


def test_a_japanese_relation_named_in_passing_is_kept() -> None:
    assert facts("上司の佐藤さんがめっちゃ厳しい") == {("user", "manager", "佐藤")}


def test_a_japanese_speakers_statements_are_theirs() -> None:
    assert facts("俺、ピーナッツアレルギーなんだよね", "ケン") == {("ケン", "allergy", "ピーナッツ")}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("間違えた、誕生日は3月3日じゃなくて3月4日", {("user", "birthday", "3月4日")}),
        ("違います、大阪じゃなくて神戸に住んでいます", {("user", "home", "神戸")}),
        ("もうベジタリアンじゃないです", {("user", "diet", "ベジタリアンじゃない")}),
    ],
)
def test_a_japanese_correction_or_change_states_the_new_value(text: str, expected: set[Fact]) -> None:
    assert facts(text) == expected


JAPANESE_NOTHING = [
    "東京に住むならどこがいい？",
    "いつか猫を飼いたい",
    "たぶん花粉症だと思う",
    "友達がエビアレルギーなんだって",
    "田中さんは大阪に住んでいます",
    "彼女は韓国人です",
    "昔は銀行員でした",
    "今東京にいます",
    "布団に住んでます",
    "仕事アレルギーです笑",
    "犬は好きじゃないけど猫は好き？",
    "コーヒー飲んでる",
    "もし医者だったら忙しいだろうな",
    "「私は看護師です」って台詞が好き",
]


@pytest.mark.parametrize("text", JAPANESE_NOTHING)
def test_japanese_that_states_no_fact_yields_nothing(text: str) -> None:
    assert facts(text) == set()


def test_a_fact_reads_in_the_third_person() -> None:
    [(_, zh)] = extract_statements([Said("我上个月搬到杭州了")])
    [(_, ja)] = extract_statements([Said("先月大阪に引っ越しました")])
    assert zh.fact == "用户上个月搬到杭州了。" and ja.fact == "ユーザーは先月大阪に引っ越しました。"

"""The rules extractor: explicit statements in English, Chinese and Japanese become facts; questions,
hypotheticals, chit-chat and the assistant's words do not.

The tables are the specification: each positive row names the category it must land in and words
the fact must keep; every row also checks the third-person rewrite.
"""

from __future__ import annotations

import re

import pytest

from memory_cortex.models.facts import FACT_LIST, ExtractedFact
from memory_cortex.models.rules import MAX_FACTS_PER_MESSAGE, extract_facts

# (user message, category, words the fact must contain)
ENGLISH_POSITIVES: list[tuple[str, str, tuple[str, ...]]] = [
    ("remember that my sister's name is Ana", "relationship", ("The user's sister's name is Ana",)),
    ("my favourite colour is green", "preference", ("The user's favourite colour is green",)),
    ("I prefer tea over coffee", "preference", ("The user prefers tea over coffee",)),
    ("from now on, answer in French", "preference", ("From now on, the user wants answers in French",)),
    ("I'm a nurse", "identity", ("The user is a nurse",)),
    ("I work as a nurse", "identity", ("The user works as a nurse",)),
    ("I live in Porto", "identity", ("The user lives in Porto",)),
    ("I moved to Porto last year", "identity", ("The user moved to Porto",)),
    ("actually, it's Ana, not Anna", "correction", ("Ana, not Anna",)),
    ("Correction: my name is Ana", "correction", ("The user's name is Ana",)),
    ("No, I meant the blue one", "correction", ("The user meant the blue one",)),
    ("That's wrong, the meeting is on Friday", "correction", ("the meeting is on Friday",)),
    ("Actually, I live in Lisbon now", "correction", ("The user lives in Lisbon",)),
    ("I decided to switch to Rust", "decision", ("The user decided to switch to Rust",)),
    (
        "We've decided to use Postgres for the backend",
        "decision",
        ("The user and their team have decided", "Postgres"),
    ),
    ("let's go with FastAPI", "decision", ("decided", "FastAPI")),
    ("I need to renew my passport", "todo", ("The user needs to renew their passport",)),
    ("remind me to call my mom on Sunday", "todo", ("reminded to call their mom on Sunday",)),
    ("todo: fix the login bug", "todo", ("fix the login bug",)),
    ("don't forget to book the dentist", "todo", ("book the dentist",)),
    ("I'm allergic to peanuts", "identity", ("The user is allergic to peanuts",)),
    ("I can speak Portuguese", "skill", ("The user can speak Portuguese",)),
    ("I know how to play the guitar", "skill", ("The user knows how to play the guitar",)),
    ("I'm fluent in Spanish", "skill", ("The user is fluent in Spanish",)),
    ("my name is Ana Silva", "identity", ("The user's name is Ana Silva",)),
    ("call me Bob", "identity", ("The user wants to be called Bob",)),
    ("Hi, I'm Ana.", "identity", ("The user is Ana",)),
    ("Ana is my sister.", "relationship", ("Ana is the user's sister",)),
    ("I have a dog named Rex.", "relationship", ("The user has a dog named Rex",)),
    ("I'm married to João.", "relationship", ("The user is married to João",)),
    ("I'm 34 years old.", "identity", ("The user is 34 years old",)),
    ("I don't like cilantro.", "preference", ("The user doesn't like cilantro",)),
    ("I really love hiking in the mountains.", "preference", ("The user really loves hiking",)),
    (
        "Always answer in bullet points.",
        "preference",
        ("wants the assistant to always answer in bullet points",),
    ),
    ("Please don't ever use emojis.", "preference", ("wants the assistant to never use emojis",)),
    ("From now on, I'll use uv instead of pip.", "decision", ("From now on, the user will use uv",)),
    (
        "I'm working on a memory daemon for LLM agents.",
        "project_state",
        ("The user is working on a memory daemon",),
    ),
    ("My project deadline is March 3.", "project_state", ("The user's project deadline is March 3",)),
    ("I'm from Brazil.", "identity", ("The user is from Brazil",)),
    ("I'm vegan", "identity", ("The user is vegan",)),
    ("I don't eat pork", "preference", ("The user doesn't eat pork",)),
    (
        "I have 10 years of experience with Python.",
        "skill",
        ("The user has 10 years of experience with Python",),
    ),
    ("don't forget that my birthday is on May 3", "identity", ("The user's birthday is on May 3",)),
    ("Please remember that I use Neovim.", "preference", ("The user uses Neovim",)),
]

CHINESE_POSITIVES: list[tuple[str, str, tuple[str, ...]]] = [
    ("记住我妹妹叫安娜", "relationship", ("用户的妹妹叫安娜",)),
    ("记住，我的生日是五月三号", "identity", ("用户的生日是五月三号",)),
    ("我叫小明", "identity", ("用户叫小明",)),
    ("我的名字是小明。", "identity", ("用户的名字是小明",)),
    ("你可以叫我小明吧", "identity", ("小明",)),
    ("我喜欢喝茶", "preference", ("用户喜欢喝茶",)),
    ("我不喜欢香菜", "preference", ("用户不喜欢香菜",)),
    ("我最喜欢的颜色是绿色", "preference", ("用户最喜欢的颜色是绿色",)),
    ("我住在上海", "identity", ("用户住在上海",)),
    ("我是一名护士", "identity", ("用户是一名护士",)),
    ("我的猫叫咪咪", "relationship", ("用户的猫叫咪咪",)),
    ("以后用中文回答", "preference", ("用户要求", "以后用中文回答")),
    ("我决定学日语", "decision", ("用户决定学日语",)),
    ("不对，是安娜，不是安那", "correction", ("是安娜，不是安那",)),
    ("更正一下：我住在北京", "correction", ("用户住在北京",)),
    ("提醒我明天买牛奶", "todo", ("明天买牛奶",)),
    ("我对花生过敏", "identity", ("用户对花生过敏",)),
    ("我会说日语", "skill", ("用户会说日语",)),
]

JAPANESE_POSITIVES: list[tuple[str, str, tuple[str, ...]]] = [
    ("覚えておいて、私の名前はアナです", "identity", ("ユーザーの名前はアナです",)),
    ("私の名前はアナだと覚えておいて", "identity", ("ユーザーの名前はアナです",)),
    ("私の名前はアナです。", "identity", ("ユーザーの名前はアナです",)),
    ("私は看護師です", "identity", ("ユーザーは看護師です",)),
    ("猫が好きです", "preference", ("ユーザーは猫が好きです",)),
    ("私は納豆が嫌いです", "preference", ("ユーザーは納豆が嫌いです",)),
    ("東京に住んでいます", "identity", ("ユーザーは東京に住んでいます",)),
    ("これからは日本語で答えてください", "preference", ("ユーザーの希望", "日本語で答えて")),
    ("訂正：私の名前はハナです", "correction", ("ユーザーの名前はハナです",)),
    ("違います、アナです", "correction", ("アナです",)),
    ("私の姉の名前はハナです", "relationship", ("ユーザーの姉の名前はハナです",)),
    ("私は卵アレルギーです", "identity", ("卵アレルギー",)),
    ("転職することにしました", "decision", ("ユーザーは転職することにしました",)),
]

NEGATIVES: list[str] = [
    # questions
    "what is my name?",
    "what is my name",
    "Do you know where I live?",
    "Is my name Ana?",
    "Tell me what my favourite colour is.",
    "Remember when we went to Paris?",
    "我的名字是什么？",
    "我叫什么",
    "私の名前は何ですか",
    "何が好きですか",
    # hypotheticals, hedges, jokes, the past
    "If I were a nurse, I'd be tired.",
    "If I lived in Paris I would be happy.",
    "I guess I prefer tea",
    "Maybe I'll move to Berlin.",
    "I might move to Berlin.",
    "I used to live in London.",
    "My name is Bob lol",
    "如果我是医生，我会很忙",
    "我觉得我喜欢猫",
    "もし私が医者だったら、忙しいでしょう",
    "猫が好きだと思います",
    # chit-chat
    "I think so",
    "I'm fine",
    "my bad",
    "I'm not sure",
    "I see",
    "I know",
    "I like it",
    "I love that idea",
    "I like your answer",
    "I love you",
    "I need to go",
    "I have to go now",
    "I'm a bit tired",
    "I'm sorry",
    "I'm done",
    "I'm confused",
    "No.",
    "Actually, I'm fine.",
    "I meant it",
    "call me later",
    "call me when you're done",
    "my question is how to parse JSON",
    "my code is broken",
    "My cat is sleeping on the keyboard",
    "I'd like a summary please",
    "Thanks, that's great!",
    "I have a question",
    "I'm trying to fix the build",
    "remember that file I sent you",
    "我是说这个不对",
    "我爱你",
    "我喜欢这个",
    "我得走了",
    "我很好",
    "记住了",
    "好的，谢谢",
    "私は大丈夫です",
    "私は元気です",
    "これが好きです",
    # role-play, quoted and pasted text
    "Let's pretend my name is Bob.",
    "Act as a pirate. My name is Captain Jack.",
    'He wrote "my name is Bob and I live in Paris" in the email.',
    "> my name is Bob\nwhat does this line mean?",
    "Here is my code:\n```python\n# my name is Bob\nprint('I live in Paris')\n```\nwhy does it fail?",
    # a need followed by a question is a request for help
    "I need to parse a CSV file in Python, how do I do it?",
    # secrets are never kept
    "My API key is sk-abcdefghijklmnop1234",
    "remember my wifi password is hunter2",
    "我的密码是123456",
    "私のパスワードはabc123です",
]

FIRST_PERSON_EN = re.compile(r"\b(?:I|I'm|I've|I'd|I'll)\b|\b(?:my|me|mine)\b", re.IGNORECASE)


def only_fact(message: str) -> ExtractedFact:
    facts = extract_facts([("user", message)])
    assert len(facts) == 1, f"{message!r} gave {facts}"
    return facts[0]


@pytest.mark.parametrize(("message", "category", "words"), ENGLISH_POSITIVES)
def test_english_statement_becomes_a_third_person_fact(
    message: str, category: str, words: tuple[str, ...]
) -> None:
    fact = only_fact(message)
    assert fact.category == category
    for word in words:
        assert word in fact.fact
    assert not FIRST_PERSON_EN.search(fact.fact.replace("the user", "")), fact.fact
    assert fact.fact.endswith(".") and fact.fact[0].isupper()


@pytest.mark.parametrize(("message", "category", "words"), CHINESE_POSITIVES)
def test_chinese_statement_becomes_a_fact_about_the_user(
    message: str, category: str, words: tuple[str, ...]
) -> None:
    fact = only_fact(message)
    assert fact.category == category
    for word in words:
        assert word in fact.fact
    assert "用户" in fact.fact and "我" not in fact.fact and fact.fact.endswith("。")


@pytest.mark.parametrize(("message", "category", "words"), JAPANESE_POSITIVES)
def test_japanese_statement_becomes_a_fact_about_the_user(
    message: str, category: str, words: tuple[str, ...]
) -> None:
    fact = only_fact(message)
    assert fact.category == category
    for word in words:
        assert word in fact.fact
    assert "ユーザー" in fact.fact and "私" not in fact.fact and fact.fact.endswith("。")


@pytest.mark.parametrize("message", NEGATIVES)
def test_questions_hypotheticals_and_chit_chat_yield_nothing(message: str) -> None:
    assert extract_facts([("user", message)]) == []


@pytest.mark.parametrize(
    ("message", "fact"),
    [
        ("I'm allergic to peanuts, by the way.", "The user is allergic to peanuts."),
        ("My favourite food is grilled sardines btw", "The user's favourite food is grilled sardines."),
        ("I live in Porto, actually.", "The user lives in Porto."),
        ("I'm vegan, you know, for the record!", "The user is vegan."),
        ("By the way, my sister is called Rita, FYI.", "The user's sister is called Rita."),
        # Words that belong to the statement stay.
        ("I work at Anyway Ltd.", "The user works at Anyway Ltd."),
        ("I'm allergic to cats too.", "The user is allergic to cats too."),
    ],
)
def test_a_closing_aside_is_not_part_of_the_fact(message: str, fact: str) -> None:
    assert only_fact(message).fact == fact


def test_a_closing_joke_marker_still_drops_the_statement() -> None:
    assert extract_facts([("user", "I'm allergic to peanuts lol")]) == []


def test_assistant_messages_are_not_facts_about_the_user() -> None:
    conversation = [
        ("assistant", "My name is Claude and I live in the cloud. I prefer concise answers."),
        ("system", "My name is Memory Cortex."),
        ("user", "I live in Porto."),
    ]
    assert [f.fact for f in extract_facts(conversation)] == ["The user lives in Porto."]


def test_every_output_validates_as_an_extracted_fact() -> None:
    messages = [("user", row[0]) for row in ENGLISH_POSITIVES + CHINESE_POSITIVES + JAPANESE_POSITIVES]
    facts = extract_facts(messages)
    assert len(facts) >= len(messages) - 5  # a few rows restate the same fact and are de-duplicated
    for fact in facts:
        assert isinstance(fact, ExtractedFact)
        assert ExtractedFact.model_validate(fact.model_dump()) == fact
    assert FACT_LIST.validate_python([f.model_dump() for f in facts]) == facts


def test_identical_facts_are_deduplicated_within_one_call() -> None:
    facts = extract_facts(
        [("user", "I live in Porto."), ("user", "i live in porto"), ("user", "I live in Porto!")]
    )
    assert len(facts) == 1


def test_a_restated_fact_keeps_the_higher_importance() -> None:
    facts = extract_facts([("user", "I live in Porto."), ("user", "Please remember that I live in Porto.")])
    assert len(facts) == 1 and facts[0].importance > 8


def test_remember_raises_importance_to_at_least_seven() -> None:
    plain = only_fact("my favourite colour is green")
    remembered = only_fact("remember that my favourite colour is green")
    assert remembered.fact == plain.fact
    assert remembered.importance >= 7 and remembered.importance > plain.importance


def test_remember_that_after_a_statement_raises_its_importance() -> None:
    fact = only_fact("My locker number is 42. Remember that.")
    assert fact.fact == "The user's locker number is 42." and fact.importance >= 7


def test_a_bare_wrapper_applies_to_the_next_sentence() -> None:
    assert only_fact("Correction:\nI live in Lisbon now.").category == "correction"
    assert only_fact("Remember this:\nmy locker number is 42").importance >= 7


def test_names_and_standing_instructions_are_most_important() -> None:
    assert only_fact("my name is Ana").importance >= 9
    assert only_fact("call me Bob").importance >= 9
    assert only_fact("from now on, answer in French").importance == 8
    assert only_fact("I'm allergic to peanuts").importance >= 8


def test_several_statements_in_one_sentence_are_split() -> None:
    facts = extract_facts(
        [
            (
                "user",
                "Remember that my sister's name is Ana, I prefer tea over coffee, "
                "and from now on answer in French.",
            )
        ]
    )
    assert [f.category for f in facts] == ["relationship", "preference", "preference"]
    assert facts[2].fact == "From now on, the user wants answers in French."


def test_a_trailing_condition_does_not_hide_the_statement_before_it() -> None:
    assert only_fact("My name is Ana, if that helps.").fact == "The user's name is Ana."


def test_a_question_in_the_same_sentence_does_not_hide_the_statement() -> None:
    assert only_fact("I live in Porto, where do you live?").fact == "The user lives in Porto."


def test_a_polite_request_to_remember_is_not_treated_as_a_question() -> None:
    assert only_fact("Can you remember that I'm vegan?").fact == "The user is vegan."


def test_a_long_ramble_yields_its_few_most_important_facts() -> None:
    ramble = (
        "So yesterday was wild. I went to the market and the weather was nice. My name is Ana. "
        "I live in Porto. I'm a nurse. I have a cat named Mia. I like tea. I hate traffic. "
        "I speak French. I'm allergic to shellfish. Anyway the bus was late and I think my boss is "
        "annoyed, maybe. Whatever."
    )
    facts = extract_facts([("user", ramble)])
    assert len(facts) == MAX_FACTS_PER_MESSAGE
    kept = " ".join(f.fact for f in facts)
    assert "name is Ana" in kept and "allergic to shellfish" in kept and "boss" not in kept


def test_later_mentions_of_the_user_become_they() -> None:
    fact = only_fact("I need to renew my passport before my trip.")
    assert fact.fact == "The user needs to renew their passport before their trip."


def test_speaker_names_the_user_in_every_language() -> None:
    facts = extract_facts(
        [("user", "My sister's name is Ana."), ("user", "我叫小明"), ("user", "東京に住んでいます")],
        speaker="Sam",
    )
    assert [f.fact for f in facts] == [
        "Sam's sister's name is Ana.",
        "Sam叫小明。",
        "Samは東京に住んでいます。",
    ]


def test_inline_code_is_read_as_text() -> None:
    assert only_fact("I use `uv` for packaging.").fact == "The user uses uv for packaging."


def test_curly_apostrophes_are_understood() -> None:
    assert only_fact("I’m a nurse").fact == "The user is a nurse."


def test_huge_input_is_handled_and_capped() -> None:
    # No timing assert: a catastrophic regex would hang here rather than fail.
    message = "my my my my " * 5000 + " my name is Ana. " + "I live in Porto. " * 200 + "x" * 20000
    facts = extract_facts([("user", message)])
    assert 1 <= len(facts) <= MAX_FACTS_PER_MESSAGE

"""Japanese for the rules extractor: 私/僕/俺 → ユーザー, its wrappers and filters. What a clause states
is read by ``japanese_reader`` (a fact with its attribute: "先月大阪に引っ越しました" → home = 大阪); the
few rules here take what states no attribute (a decision, a to-do). ``japanese_people`` reads a
clause about a relative ("父は糖尿病です") and the relations named in passing ("上司の佐藤さん")."""

from __future__ import annotations

import re

from ..facts import Category
from .japanese_people import ja_named_relations, ja_normalise, ja_relative
from .japanese_reader import ja_read
from .shapes import Draft, Handler, Language, Rule, Voice, cjk_sentence

_JA_I = r"(?:私|わたし|僕|ぼく|俺|おれ|あたし)(?!たち|達|ども|ら)"
_JA_I_TOKEN = re.compile(rf"{_JA_I}(?=[のはがをにもでと、]|$)")
_JA_YOU = re.compile(r"(?:あなた|君|きみ)(?=[のはがをにもでと、]|$)")
_JA_TOP = rf"(?:{_JA_I}(?:は|が|も))?"
_JA_SUBJECT_START = re.compile(rf"^{_JA_I}(?:[のはがをにもでと])")
_JA_NAME = r"(?P<name>[^\s、,。！？!?「」『』（）()]{1,20}?)"
_JA_DEICTIC = re.compile(r"^(?:これ|それ|あれ|どれ|何|なに|なん|誰|だれ|あなた|君|きみ|そう|こう)")
_JA_RELATION = "姉|妹|兄|弟|母|父|妻|夫|息子|娘|友達|友人|親友|彼女|彼氏|猫|犬|上司|同僚|子供|子ども|家族|祖母|祖父|奥さん|旦那|ペット|ルームメイト"
_JA_IDENTITY_NOUNS = re.compile(r"名前|誕生日|年齢|仕事|職業|メール|電話|住所|国籍|母語|専攻|出身")
_JA_PROJECT_NOUNS = re.compile(r"プロジェクト|会社|サイト|サーバー|データベース|リポジトリ|チーム|製品")


def _ja_third(text: str, voice: Voice, *, to_assistant: bool = False) -> str:
    text = _JA_I_TOKEN.sub(voice.ja, text)
    return _JA_YOU.sub("アシスタント", text) if to_assistant else text


def _ja_statement(text: str, voice: Voice) -> str:
    """Third person, adding the subject the user left out ("東京に住んでいます")."""
    if _JA_SUBJECT_START.match(text):
        return cjk_sentence(_ja_third(text, voice))
    return cjk_sentence(f"{voice.ja}は{_ja_third(text, voice)}")


def _ja_say(category: Category, importance: int, topic: str | None = None, *, obj: str = "obj") -> Handler:
    def handler(m: re.Match[str], voice: Voice) -> Draft | None:
        phrase = (m.groupdict().get(obj) or "").strip()
        if obj in m.groupdict() and (not phrase or _JA_DEICTIC.match(phrase)):
            return None
        return Draft(_ja_statement(m.string, voice), topic or phrase[:12], category, importance)

    return handler


def _ja_possessive(m: re.Match[str], voice: Voice) -> Draft | None:
    x, y = m["x"], m["y"].strip()
    if not y or _JA_DEICTIC.match(y):
        return None
    relation = re.search(_JA_RELATION, x)
    if relation:
        category: Category = "relationship"
        importance, topic = 7, relation.group()
    elif re.search(r"好き|お気に入り|趣味", x):
        category, importance, topic = "preference", 6, x
    elif _JA_IDENTITY_NOUNS.search(x):
        category, importance, topic = "identity", 8, x
    elif _JA_PROJECT_NOUNS.search(x):
        category, importance, topic = "project_state", 6, x
    else:
        return None  # "私の夢は…": nothing this extractor files
    return Draft(cjk_sentence(_ja_third(m.string, voice)), topic, category, importance)


_JA_FALLBACK: tuple[Rule, ...] = tuple(
    Rule(re.compile(pattern), handler)
    for pattern, handler in (
        (rf"^{_JA_I}の(?P<x>[^はが、。]{{1,12}})(?:は|が)(?P<y>.+)$", _ja_possessive),
        (
            rf"^{_JA_TOP}(?P<obj>.+?)(?:が|を)(?:できます|できる|得意です|得意)$",
            _ja_say("skill", 6),
        ),
        (
            rf"^{_JA_TOP}(?P<obj>.+?)(?:ことにしました|ことにした|ことに決めました|に決めました|に決めた|を選びました)$",
            _ja_say("decision", 7),
        ),
        (
            rf"^{_JA_TOP}(?P<obj>.+?)(?:しなければなりません|しなければならない|しなきゃいけない|しなきゃ|"
            r"しないといけません|しないといけない|する必要があります|する必要がある)$",
            _ja_say("todo", 6),
        ),
    )
)


def _ja_read(m: re.Match[str], voice: Voice) -> Draft | None:
    return ja_read(m.string, voice, _JA_FALLBACK)


_JA_RULES: tuple[Rule, ...] = (Rule(re.compile(r"^.+$", re.DOTALL), _ja_read),)

_JA_NOW_ON = re.compile(
    r"^(?P<marker>これからは|これから|今後は|今後|次回からは|次回から|次からは|次から|以後|以降は)[、,\s]*(?P<body>.*)$"
)
_JA_STRONG_CORRECTION = (
    re.compile(
        r"^(?P<marker>訂正(?:します|です|させてください)?|違います|違う|ちがいます|ちがう|間違えました|"
        r"間違えた|間違いです|間違ってました)[、,：:。！!\s]*(?P<body>.*)$"
    ),
)
_JA_WEAK_CORRECTION = re.compile(r"^(?P<marker>いいえ|いや|実は)[、,\s]+(?P<body>.*)$")
_JA_CONTRAST = re.compile(r"じゃなくて|ではなくて|ではなく")
_JA_REMEMBER = (
    re.compile(
        r"^(?:これを|次のことを|以下を)?(?P<marker>覚えておいて|覚えといて|覚えて|憶えて|忘れないで)(?:ください|下さい|ね|"
        r"ほしい|欲しい|おいてください)*[、,：:\s]*(?P<body>.*)$"
    ),
    re.compile(
        r"^(?P<body>.+?)(?:ということ|こと)?(?:を)?(?:って|と)?(?P<marker>覚えて|覚えておいて|覚えといて|憶えて|"
        r"忘れないで)(?:ください|下さい|ね|おいて|ほしい|欲しい)*$"
    ),
)


def _ja_now_on(marker: str, body: str, voice: Voice) -> Draft | None:
    body = body.strip()
    if len(body) < 2:
        return None
    if _JA_SUBJECT_START.match(body):
        return Draft(cjk_sentence(f"{marker}、{_ja_third(body, voice)}"), body[:12], "decision", 8)
    return Draft(
        cjk_sentence(f"{voice.ja}の希望：{marker}{_ja_third(body, voice, to_assistant=True)}"),
        body[:12],
        "preference",
        8,
    )


def _ja_correction(body: str, voice: Voice) -> Draft | None:
    if len(body.strip()) < 2:
        return None
    return Draft(cjk_sentence(f"{voice.ja}の訂正：{_ja_third(body, voice)}"), "訂正", "correction", 7)


def _ja_remember(body: str, voice: Voice) -> Draft | None:
    body = re.sub(r"(?:ということ|こと)?(?:を)?(?:って|と)?$", "", body.strip())
    if len(body) < 2:
        return None
    return Draft(cjk_sentence(f"{voice.ja}が覚えてほしいこと：{_ja_third(body, voice)}"), "メモ", "fact", 7)


JAPANESE = Language(
    name="ja",
    rules=_JA_RULES,
    lead_in=re.compile(
        r"^(?:(?:ちなみに|ところで|そういえば|こんにちは|こんばんは|実は|じつは|すみません|"
        r"すいません|ごめんなさい|ごめん|報告です|報告)[、,！!：:\s]*|"
        r"(?:あと|それと|あの|えっと|えーと|はい|うん|ええ|あ|そうそう)[、,！!：:\s]+)+"
    ),
    question=re.compile(
        r"[?？]\s*$|(?:か|かな|かしら)[ぁー〜～]*$|何|なに|なんで(?!す)|なんの|誰|だれ|どこ|いつ(?!も)|どう(?!しても|せ|ぞ)|"
        r"なぜ|どれ|どの|どちら|どっち|いくつ|いくら"
    ),
    hedge=re.compile(
        r"もし|仮に|としたら|だったら|とすれば|たぶん|多分|かもしれ|かも|と思う|と思います|気がする|冗談|だろう|"
        r"でしょう|みたい|以前|昔|(?<!名)前は|当時|かつて|頃|学生時代|たら|ば(?:いい|よかった)|のに$|たい(?:です|んです|んだ|な|"
        r"なぁ|ね|よ|[ー〜～])*$|(?<!て)(?:ほしい|欲しい)|しよう|ようかな|おうかな|考え中|迷って|迷い中|検討中|"
        r"かどうか|未定|まだ|わからない|わからん|分からない|次第|って言|と言|言われ|らしい|んだって|だって$|って$|"
        r"笑$|（笑）|\(笑\)|（キリッ）|（嘘）|嘘|草$|(?<=[\u3040-\u30ff\u4e00-\u9fff])[wｗ]+$|設定|ごっこ|"
        r"役(?:やって|して)|ふりして|なりきって|ゲームしよう|"
        r"(?:書いて|訳して|翻訳して|直して|添削して|作って|考えて|まとめて)(?:ください|下さい)?[：:]"
    ),
    conditional=re.compile(r"^(?:もし|仮に)"),
    # Parts of one statement are joined by 、; a new subject, a condition, or a reason given ("…なので、")
    # starts another.
    clause_split=re.compile(
        rf"[；;]\s*|[、,]\s*(?=(?:{_JA_I}|でも|それと|あと|そして|また|もし))|(?<=ので|から|けど)[、,]\s*|(?<=さんで)[、,]\s*"
    ),
    now_on=_JA_NOW_ON,
    strong_correction=_JA_STRONG_CORRECTION,
    weak_correction=_JA_WEAK_CORRECTION,
    contrast=_JA_CONTRAST,
    remember=_JA_REMEMBER,
    render_now_on=_ja_now_on,
    render_correction=_ja_correction,
    render_remember=_ja_remember,
    relative=ja_relative,
    normalise=ja_normalise,
    in_passing=ja_named_relations,
)

"""The rules extractor's engine: which language a message is in, what of it is never a statement
(code, quotes, role-play), sentences and clauses, wrappers applied, and the facts returned."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from pydantic import ValidationError

from ...redaction import has_secret
from ..facts import OWNER, ExtractedFact
from .chinese import CHINESE
from .english import ENGLISH
from .japanese import JAPANESE
from .shapes import (
    CJK_TRAILING,
    MAX_CLAUSE_CHARS,
    MAX_FACTS_PER_MESSAGE,
    SPACES,
    USER_ROLES,
    About,
    Draft,
    Focus,
    Language,
    Voice,
    Wrapper,
)

_KANA = re.compile(r"[\u3040-\u30ff]")
_FIRST_LETTER = re.compile(r"[^\W\d_]")


def _language_of(text: str) -> Language:
    """By the first letter: a Chinese sentence may hold an English name and vice versa."""
    first = _FIRST_LETTER.search(text)
    if first is None:
        return ENGLISH
    char = first.group()
    if _KANA.match(char) or ("\u3400" <= char <= "\u9fff" and _KANA.search(text)):
        return JAPANESE
    if "\u3400" <= char <= "\u9fff":
        return CHINESE
    return ENGLISH


_FENCED_CODE = re.compile(r"```.*?(?:```|$)|~~~.*?(?:~~~|$)", re.DOTALL)
_INLINE_CODE = re.compile(r"`([^`\n]{1,80})`")
_QUOTED_LINE = re.compile(r"^\s*>.*$", re.MULTILINE)
_QUOTED_SPAN = re.compile(r"\"([^\"\n]{1,600})\"|“([^”\n]{1,600})”|「([^」\n]{1,600})」|『([^』\n]{1,600})』")
_ROLE_PLAY = re.compile(
    r"\b(?:pretend|role-?play|roleplay|let's\s+play|in\s+this\s+story|in\s+the\s+story|my\s+character|act\s+as|"
    r"you\s+are\s+now|imagine\s+(?:that|you|i|we))\b|假装|假裝|扮演|角色|ロールプレイ|なりきって|演じて|ふりをして",
    re.IGNORECASE,
)
_ROLE_PLAY_HINTS = (
    "pretend",
    "play",
    "story",
    "character",
    "act as",
    "you are now",
    "imagine",
    "假",
    "扮演",
    "角色",
    "ロールプレイ",
    "なりきって",
    "演じて",
    "ふり",
)
_APOSTROPHES = str.maketrans({"’": "'", "‘": "'", "＇": "'"})


def _drop_long_quote(m: re.Match[str]) -> str:
    """Quoted text is someone else's words (a pasted email, a line of dialogue), unless it is short."""
    inner = next(g for g in m.groups() if g is not None)
    long = len(inner.split()) >= 4 or len(re.findall(r"[\u3040-\u30ff\u3400-\u9fff]", inner)) >= 10
    return " " if long else m.group()


_EMOJI = re.compile(r"[\U0001F000-\U0001FAFF\u2600-\u27BF\uFE0F\u200d]+")


# An emoji between two statements ends the first: "Plot twist 😂 Dami got a new job at Google".
# So does one before a lower-case "im"/"my" ("guess who got promoted 🎉🎉 im a product manager now").
_EMOJI_BOUNDARY = re.compile(
    r"(?<=\w)\s*[\U0001F000-\U0001FAFF\u2600-\u27BF\uFE0F\u200d]+\s+(?=[A-Z]|(?:i|im|i'm|ive|i've|my|we|we're)\b)"
)


# "I'm coeliac (diagnosed last year), so…": a lower-case aside in brackets before a comma, not part of
# the statement; never one that qualifies it ("(well, trying to be)", "(not really)").
_ASIDE = re.compile(
    r"\s*\((?-i:[a-z])(?![^()]*\b(?:i|i'm|my|not|never|no|trying|mostly|sort|kind|kinda|sorta|ish|maybe|"
    r"supposedly|apparently|allegedly|lol|haha|jk|kidding|joke|joking|well|almost|nearly|hopefully)\b)"
    r"[^()\s]*\s[^()\n]{0,60}\)(?=\s*,)",
    re.IGNORECASE,
)


# A laugh between two statements ends the first: "wait no ur cat lol im allergic to cats".
_LAUGH_BOUNDARY = re.compile(
    r"(?<=\w)\s+(?:lol|lmao|haha+|hehe)\s+(?=(?:i|im|i'm|ive|i've|my|we|we're)\b)", re.IGNORECASE
)


def _clean(text: str) -> str:
    text = _ASIDE.sub("", text.translate(_APOSTROPHES))
    text = _LAUGH_BOUNDARY.sub(" lol. ", text)
    text = _EMOJI_BOUNDARY.sub(". ", text)
    text = _EMOJI.sub(" ", text)
    text = _FENCED_CODE.sub("\n", text)
    text = _INLINE_CODE.sub(r"\1", text)
    text = _QUOTED_LINE.sub("", text)
    return _QUOTED_SPAN.sub(_drop_long_quote, text)


_BOUNDARY = re.compile(r"[.!?…]+[\"')\]]*(?=\s|$)|[。！？!?；;]+[」』）)]*|\n+")
_ABBREVIATIONS = frozenset(
    "mr mrs ms dr st prof sr jr vs etc e.g i.e eg ie approx mt ft inc ltd co no dept univ ave rd".split()
)


_LAST_WORD = re.compile(r"[\w.]+$")


def _sentences(text: str) -> list[str]:
    sentences: list[str] = []
    start = 0
    for m in _BOUNDARY.finditer(text):
        if m.group().startswith("."):
            previous = _LAST_WORD.search(text, max(start, m.start() - 12), m.start())
            if previous and previous.group().lower() in _ABBREVIATIONS:
                continue
        piece = text[start : m.end()].strip()
        if piece:
            sentences.append(piece)
        start = m.end()
    tail = text[start:].strip()
    if tail:
        sentences.append(tail)
    return sentences


def _strip_lead_in(clause: str, language: Language) -> str:
    return language.lead_in.sub("", clause.strip()).strip()


def _match_wrapper(clause: str, language: Language) -> Wrapper | None:
    m = language.now_on.match(clause)
    if m:
        return Wrapper("now_on", m["marker"], m["body"].strip())
    for pattern in language.strong_correction:
        m = pattern.match(clause)
        if m:
            return Wrapper("correction", m["marker"], m["body"].strip())
    for pattern in language.remember:
        m = pattern.match(clause)
        if m:
            return Wrapper("remember", m["marker"], m["body"].strip())
    m = language.weak_correction.match(clause)
    if m:
        return Wrapper("weak_correction", m["marker"], m["body"].strip())
    return None


def _resolve(wrapper: Wrapper, inner: Draft | None, language: Language, voice: Voice) -> Draft | None:
    """What a wrapper makes of its body: the body's own fact, adjusted, or the wrapper's own rendering.
    A standing instruction keeps its own wording ("From now on, the user wants answers in French.")
    with what the body's fact states."""
    if inner is not None:
        return _wrapped(inner, wrapper, language, voice)
    if wrapper.kind == "now_on":
        return language.render_now_on(wrapper.marker, wrapper.body, voice)
    if wrapper.kind == "correction":
        restated = language.restate(wrapper.body) if language.restate is not None else None
        if restated is not None and (found := _from_clause(restated, language, voice, 2)) is not None:
            return found.as_correction()
        return language.render_correction(wrapper.body, voice)
    if wrapper.kind == "weak_correction":
        # "Actually, …" alone is chit-chat; only a contrast ("it's Ana, not Anna") makes it a correction.
        return (
            language.render_correction(wrapper.body, voice)
            if language.contrast.search(wrapper.body)
            else None
        )
    return language.render_remember(wrapper.body, voice)


def _wrapped(draft: Draft, wrapper: Wrapper, language: Language, voice: Voice) -> Draft:
    """The body's fact under its wrapper; a standing instruction keeps the wrapper's own wording
    ("From now on, the user wants answers in French.") with what the body's fact states."""
    if wrapper.kind == "now_on" and draft.category == "preference":
        rendered = language.render_now_on(wrapper.marker, wrapper.body, voice)
        if rendered is not None and rendered.category == "preference":
            draft = dataclasses.replace(rendered, attribute=draft.attribute, value=draft.value)
    return _apply_mode(draft, wrapper.kind)


def _apply_mode(draft: Draft, mode: str | None) -> Draft:
    if mode in ("correction", "weak_correction"):
        return draft.as_correction()
    if mode == "remember":
        return draft.at_least(7, step=1)
    if mode == "now_on":
        return draft.at_least(8)
    return draft


def _trim(text: str, language: Language) -> str:
    """Lead-ins, closing asides and closing punctuation off; a question mark stays, it is evidence.
    A lead-in that dated the statement from now on leaves "now" at its end."""
    from_now = language.from_now is not None and language.from_now.match(text.strip()) is not None
    text = _strip_lead_in(text, language)
    if from_now and text and not re.search(r"\bnow\W*$", text, re.IGNORECASE):
        text = re.sub(r"([\s!.…~]*)$", r" now\1", text, count=1)
    if language.trail_off is not None:
        text = language.trail_off.sub("", text)
    return text.rstrip(CJK_TRAILING)


_WORDS = re.compile(r"[^\W\d_]+")


def _is_statement(text: str, language: Language) -> bool:
    """Not a question, a hypothetical, a hedge or a joke."""
    if language.question.search(text) or language.hedge.search(text):
        return False
    return not (language.hedge_words and not language.hedge_words.isdisjoint(_WORDS.findall(text.lower())))


def _from_clause(clause: str, language: Language, voice: Voice, depth: int = 0) -> Draft | None:
    """One clause → at most one fact (and those it carries in ``also``): the first wrapper or rule
    that recognises it wins. A clause about someone the speaker names by relation ("my dad has
    diabetes") is read by the same rules in that person's voice, and is about them."""
    clause = _trim(clause, language)
    if language.normalise is not None:
        clause = language.normalise(clause)
    if not clause or len(clause) > MAX_CLAUSE_CHARS:
        return None
    wrapper = _match_wrapper(clause, language) if depth < 2 else None
    if wrapper is not None and wrapper.body:
        inner = _from_clause(wrapper.body, _language_of(wrapper.body), voice, depth + 1)
        return _resolve(wrapper, inner, language, voice)
    if language.relative is not None and depth < 2 and (found := language.relative(clause)) is not None:
        about, said, first_person = found
        about = dataclasses.replace(about, of=voice.person)
        inner = _from_clause(first_person, language, voice.relative(about, said), depth + 1)
        if inner is not None:
            return _about(inner, about)
    for rule in language.rules_for(clause):
        m = rule.pattern.match(clause)
        if m:
            draft = rule.handler(m, voice)
            if draft is not None:
                return draft
    return None


def _about(draft: Draft, about: About) -> Draft:
    """``draft`` (and the facts it carries) about ``about`` unless it already names its subject."""
    also = tuple(_about(extra, about) for extra in draft.also)
    return dataclasses.replace(draft, about=draft.about or about, also=also)


def _clauses(sentence: str, language: Language) -> list[str]:
    """Split on commas and conjunctions that start a new statement ("…, and I live in Porto")."""
    return [p.strip() for p in language.clause_split.split(sentence) if p and p.strip()]


def _from_sentence(sentence: str, language: Language, voice: Voice) -> tuple[list[Draft], Wrapper | None]:
    """The facts in one sentence, and its wrapper when the sentence is nothing but one ("Remember this:")."""
    head = _trim(sentence, language)
    if language.polite is not None:
        said = head
        head = language.polite.sub("", head).rstrip("?？ ")  # "Can you remember that I'm vegan?"
        if not head and language.named_anyway is not None:  # "Any gift ideas for my wife Elena?"
            return language.named_anyway(said, voice), None
    wrapper = _match_wrapper(head, language) if head else None
    if wrapper is not None and not wrapper.body:
        return [], wrapper
    body = wrapper.body if wrapper is not None else head
    drafts: list[Draft] = []
    hypothetical = asked = False
    for clause in _clauses(body, language):
        clause = _trim(clause, language)
        if language.conditional.match(clause):
            hypothetical = True
            break  # "If I were rich, I'd live in Paris": the rest of the sentence is hypothetical
        if not _is_statement(clause, language):
            # "我老公张伟是厨师，周末想给他做顿饭": the wish after it is not what it states; a question
            # after it ("…，有意见吗") may be about it, and leaves it unsaid
            asking = bool(language.question.search(clause))
            head = language.head(clause) if language.head is not None and not asking else None
            if head is None or not _is_statement(head, language):
                asked = asked or asking
                if language.named_anyway is not None and not language.conditional.match(clause):
                    found = language.named_anyway(clause, voice)
                    drafts += [_wrapped(d, wrapper, language, voice) if wrapper else d for d in found]
                continue
            clause = head
        draft = _from_clause(clause, language, voice)
        if draft is not None and draft.value and language.sets_right and language.sets_right.search(clause):
            draft = draft.as_correction()  # "It's sulfa drugs I'm allergic to, not penicillin"
        if draft is not None:
            drafts.append(_wrapped(draft, wrapper, language, voice) if wrapper else draft)
        if language.in_passing is not None:
            named = {draft.about.name for draft in drafts if draft.about is not None and draft.about.name}
            passing = [d for d in language.in_passing(clause, voice) if d.value not in named]
            drafts += [_wrapped(d, wrapper, language, voice) if wrapper else d for d in passing]
    if asked:
        # "I need to parse a CSV, how do I do it?" is a request for help, not a to-do to remember.
        drafts = [draft for draft in drafts if draft.category != "todo"]
    if wrapper is not None and not drafts and not hypothetical and _is_statement(body, language):
        fallback = _resolve(wrapper, None, language, voice) if len(body) <= MAX_CLAUSE_CHARS else None
        drafts = [fallback] if fallback is not None else []
    return drafts, None


def _from_message(text: str, voice: Voice, focus: Focus | None = None) -> tuple[list[Draft], Focus | None]:
    """The facts a message states, and whom a "he"/"she" opening the speaker's next message may
    mean (``focus``: the same, from their message before)."""
    text = _clean(text)
    lowered = text.lower()
    if any(hint in lowered for hint in _ROLE_PLAY_HINTS) and _ROLE_PLAY.search(text):
        return [], None  # a persona's "my name is…" is not the user's
    drafts: list[Draft] = []
    carried_mode: str | None = None  # a bare "Remember this:" / "Correction:" applies to the next sentence
    previous_sentence: list[int] = []
    for sentence in _sentences(text):
        language = _language_of(sentence)
        if language.prepare is not None:
            sentence = language.prepare(sentence)
        if language.refer is not None:
            sentence, focus = language.refer(sentence, focus, False)
        else:
            focus = None
        mode, carried_mode = carried_mode, None
        found, bare = _from_sentence(sentence, language, voice)
        if not found and bare is None and previous_sentence and language.names_previous is not None:
            named = language.names_previous.match(_trim(sentence, language))
            if named is not None:  # "We adopted a dog! Her name is Pepper.": the dog's name
                for i in previous_sentence:
                    drafts[i] = _named_after(drafts[i], named["name"])
                previous_sentence = []
                continue
        if bare is not None:
            if bare.kind == "remember" and previous_sentence:
                for i in previous_sentence:  # "My PIN is 1234. Remember that."
                    drafts[i] = drafts[i].at_least(7, step=1)
            elif bare.kind in ("remember", "correction"):
                carried_mode = bare.kind
            previous_sentence = []
            continue
        previous_sentence = list(range(len(drafts), len(drafts) + len(found)))
        drafts.extend(_apply_mode(draft, mode) for draft in found)
    drafts = [_unnamed(each) for draft in drafts for each in _flattened(draft)]
    if len(drafts) > MAX_FACTS_PER_MESSAGE:
        keep = sorted(range(len(drafts)), key=lambda i: -drafts[i].importance)[:MAX_FACTS_PER_MESSAGE]
        drafts = [drafts[i] for i in sorted(keep)]
    return drafts, focus


def _named_after(draft: Draft, name: str) -> Draft:
    """A pet known so far by its kind ("a dog") or a partner as "someone", named by the sentence
    after it."""
    if draft.attribute not in ("pet", "partner") or not draft.value or not draft.value[:1].islower():
        return draft
    fact = f"{draft.fact.rstrip('.!。')}, called {name}."
    return dataclasses.replace(draft, fact=fact, value=name)


def _unnamed(draft: Draft) -> Draft:
    """A partner never named ("I'm seeing someone new") is no partner's value."""
    if draft.attribute == "partner" and draft.value and draft.value[:1].islower():
        return dataclasses.replace(draft, attribute=None, value=None)
    return draft


def _flattened(draft: Draft) -> Iterator[Draft]:
    """A draft, then the facts it carries (a job's employer), each a fact of its own."""
    yield dataclasses.replace(draft, also=())
    for extra in draft.also:
        yield from _flattened(
            dataclasses.replace(
                extra, category=draft.category if draft.category == "correction" else extra.category
            )
        )


def _dedup_key(fact: str) -> str:
    return SPACES.sub(" ", fact).strip().rstrip(".。").casefold()


@dataclass(frozen=True)
class Said:
    """One message a person wrote: its text and who wrote it (``speaker`` None: the owner, the
    person the memory belongs to; else that person's name). ``states`` False: words that state no
    one's facts (the assistant's reply), read only for whom a "he" or "she" after them means."""

    text: str
    speaker: str | None = None
    states: bool = True


def _focus_after(text: str, focus: Focus | None, *, heard: bool) -> Focus | None:
    """Whom a "he" or "she" may mean after a message whose facts are not read: a reply that states
    none (``heard``: "Has the vet seen her?" means no longer the relative named before), or the
    speaker's own message read before (its sentences as :func:`_from_message` reads them)."""
    text = _clean(text)
    if not heard and any(hint in text.lower() for hint in _ROLE_PLAY_HINTS) and _ROLE_PLAY.search(text):
        return None
    for sentence in _sentences(text):
        language = _language_of(sentence)
        if language.refer is None:
            if heard:
                return None
            focus = None
            continue
        if not heard and language.prepare is not None:
            sentence = language.prepare(sentence)
        _, focus = language.refer(sentence, focus, heard)
    return focus


def extract_facts(messages: Sequence[tuple[str, str]], *, speaker: str = "The user") -> list[ExtractedFact]:
    """Facts stated explicitly by the user in ``messages``, rewritten about ``speaker``.

    ``messages`` are ``(role, text)`` pairs in conversation order; only roles in
    :data:`USER_ROLES` are read (what the assistant says is not a fact about the user).
    ``speaker`` names the user in English facts ("The user" → "The user lives in Porto."); a
    custom name is also used verbatim in Chinese and Japanese facts instead of 用户/ユーザー.

    Returns validated :class:`ExtractedFact` objects, at most :data:`MAX_FACTS_PER_MESSAGE` per
    message, without duplicates (the same fact stated twice keeps the higher importance).
    """
    said = [Said(text) for role, text in messages if role.strip().lower() in USER_ROLES]
    return [fact for _, fact in extract_statements(said, owner=speaker)]


def extract_statements(
    messages: Sequence[Said], *, owner: str = "The user", before: Sequence[Said] = ()
) -> list[tuple[int, ExtractedFact]]:
    """Facts each message states, each with the index of the message it comes from.

    ``before``: the messages said just before these, already read: only whom a "he" or "she"
    opening the first of ``messages`` may mean is taken from them ("My brother Kerem is visiting."
    then "He is vegetarian."), never a fact.

    The owner's messages (``speaker`` None) are rewritten about ``owner`` ("The user lives in
    Porto.", subject ``user``); another person's ("Bob: I'm allergic to shellfish") about them
    ("Bob is allergic to shellfish.", subject ``Bob``), never about the owner. A statement about
    someone named by relation ("my dad has type 2 diabetes") is about that person (subject
    ``user's father``, relation ``father``). At most :data:`MAX_FACTS_PER_MESSAGE` per message; a
    fact stated twice is kept once, at its higher importance.
    """
    owner_voice = Voice.of(owner)
    facts: list[tuple[int, ExtractedFact]] = []
    index_of: dict[str, int] = {}
    focus: Focus | None = None  # whom the last speaker's "he"/"she" may mean, while they go on speaking
    speaking: str | None = None  # whose focus it is
    every = [*before, *messages]
    for position, message in enumerate(every):
        if not message.text:
            continue
        if not message.states:
            focus = _focus_after(message.text, focus, heard=True)
            continue
        if message.speaker != speaking:
            focus, speaking = None, message.speaker
        if position < len(before):  # read before: only whom it leaves a "he"/"she" to mean
            focus = _focus_after(message.text, focus, heard=False)
            continue
        voice = owner_voice if message.speaker is None else Voice.of(message.speaker)
        drafts, focus = _from_message(message.text, voice, focus)
        for draft in drafts:
            if has_secret(draft.fact) or has_secret(draft.topic):
                continue  # memories are stored in plain text and recalled into prompts: never keep secrets
            key = _dedup_key(draft.fact)
            if key in index_of:
                at, existing = facts[index_of[key]]
                if draft.importance > existing.importance:
                    facts[index_of[key]] = (at, existing.model_copy(update={"importance": draft.importance}))
                continue
            fact = _validated(draft, voice)
            if fact is not None:
                index_of[key] = len(facts)
                facts.append((position - len(before), fact))
    return facts


def _validated(draft: Draft, voice: Voice) -> ExtractedFact | None:
    about = draft.about
    try:
        return ExtractedFact(
            topic=draft.topic[:80],
            fact=draft.fact,
            importance=draft.importance,
            category=draft.category,
            subject=about.subject if about is not None else voice.person or OWNER,
            subject_kind=about.kind if about is not None else None if voice.person is None else "person",
            relation=about.relation if about is not None else None,
            attribute=draft.attribute,
            value=draft.value[:200] if draft.value else None,
            ends=draft.ends,
        )
    except ValidationError:
        return None  # a rule produced something unusable (e.g. a topic of digits only): skip it

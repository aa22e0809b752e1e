"""Secrets never reach the store: one filter for every text the daemon keeps, whatever its path.

Memories are plain text, recalled into prompts, mirrored into Markdown and exported; a password or key
that got in would travel everywhere with them. So every stored text (extracted facts, the rules
extractor's, ``POST /memories``, MCP ``remember``, imports, the ingest journal) passes through
:func:`redact`, which replaces each secret it finds with :data:`SECRET_MARK` and says how many it
removed. Callers decide what a text that was *only* a secret becomes (:func:`is_only_secrets`):
an extracted fact with a secret in it is dropped, an explicit write that is nothing but a secret is
refused.

What counts as a secret, found by three kinds of pattern:

- **Said in words**: a credential word (password, passphrase, PIN, passcode, API key, token, door or
  alarm code, card number, CVV, seed phrase…) followed by "is", ":", "=", "to", "was" (possibly after
  a short "for the bank", "of my router") and a value: the value is masked, the sentence kept ("the
  wifi password is [secret removed]"). A value that is an ordinary word ("is too short", "is in
  1Password") is left alone; "hunter2 is my password" is caught the other way round.
- **Shaped like a key**: provider tokens that carry a fixed prefix (AWS, GitHub, GitLab, Slack,
  Stripe, OpenAI, Anthropic, Google, Hugging Face, npm, PyPI, SendGrid, Telegram bots, JWTs), PEM
  private key blocks, ``Authorization: Bearer …`` values and the password of a ``scheme://user:pass@``
  URL.
- **Card numbers**: 13-19 digits (spaces or dashes between groups) that pass the Luhn check.

Why not a library: the scanners on PyPI (detect-secrets, gitleaks' ports) read source files —
``password = "…"`` assignments and key prefixes — while what people tell an assistant is prose. The
prefix table below follows gitleaks' public rules; detect-secrets' plugins report capture groups
rather than spans (``ghp`` for a whole GitHub token), which cannot be masked in place.
"""

from __future__ import annotations

import hashlib
import re
import threading
import unicodedata
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass

from . import secret_patterns as p

SECRET_MARK = "[secret removed]"


@dataclass(frozen=True)
class Redacted:
    """A text with its secrets replaced by :data:`SECRET_MARK`, and how many there were."""

    text: str
    removed: int


def redact(text: str) -> Redacted:
    """``text`` with every secret it holds replaced by :data:`SECRET_MARK` (see the module doc)."""
    if not text:
        return Redacted(text, 0)
    spans = _secret_spans(text)
    if not spans:
        return Redacted(text, 0)
    parts: list[str] = []
    position = 0
    for start, end in spans:
        parts += [text[position:start], SECRET_MARK]
        position = end
    parts.append(text[position:])
    return Redacted("".join(parts), len(spans))


SHORT_KEY_CHARS = 64


class CleanTextMemo:
    """:func:`redact` that remembers which texts held no secret, so a text seen again costs a hash.

    Why: OpenClaw posts a session's whole history after every turn, and the ingest journal masks
    every message of every post before it is written (a 1,000-message history is ~80 KB: ~20 ms of
    patterns, on each post). All but the newest messages were checked on the previous post. Only
    digests of clean texts are kept (16 bytes each, least recently seen dropped past
    ``max_entries``); a text with a secret is masked again each time. Thread-safe: posts are
    masked on worker threads.
    """

    def __init__(self, max_entries: int = 200_000) -> None:
        self._clean: OrderedDict[str | bytes, None] = OrderedDict()
        self._max_entries = max_entries
        self._lock = threading.Lock()

    def redact(self, text: str) -> Redacted:
        # A short text (a name, a message id) is its own key: cheaper than its digest.
        key: str | bytes = (
            text
            if len(text) <= SHORT_KEY_CHARS
            else hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
        )
        with self._lock:
            if key in self._clean:
                self._clean.move_to_end(key)
                return Redacted(text, 0)
        result = redact(text)
        if not result.removed:
            with self._lock:
                self._clean[key] = None
                if len(self._clean) > self._max_entries:
                    self._clean.popitem(last=False)
        return result


def has_secret(text: str) -> bool:
    """True when ``text`` holds a secret, or a mark where one was removed."""
    return SECRET_MARK in text or bool(_secret_spans(text))


def no_secret_in_name(value: str) -> str:
    """``value``, when it holds no secret; else ValueError. For the names that identify a user,
    session, channel or agent: one is looked up by what it was stored as, so it cannot be masked,
    and one that looks like a credential (a token pasted as a session id) is refused instead."""
    if value and has_secret(value):
        raise ValueError("looks like a credential (a password, key or token), which is never stored")
    return value


def is_only_secrets(text: str) -> bool:
    """True when nothing but marks and punctuation is left of a redacted ``text``."""
    return SECRET_MARK in text and not re.search(r"[^\W_]", text.replace(SECRET_MARK, ""))


def _secret_spans(text: str) -> list[tuple[int, int]]:
    """The ``(start, end)`` of each secret in ``text``, sorted, overlaps merged: found in its views
    (:func:`_views`), mapped back onto it."""
    shapes, prose, origin = _views(text)
    spans = _spans_in(shapes, prose)
    if origin is None:
        return spans
    # A view character stands for the original one it came from; an end, for the one after.
    return _merged([(origin[start], origin[end - 1] + 1) for start, end in spans])


def _spans_in(shapes: str, prose: str) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = [m.span() for m in p.KEY_SHAPES.finditer(shapes)]
    lowered = prose.lower()
    for match in _near_triggers(p.SAID, prose, lowered, p.SAID_TRIGGER, before=40, after=600):
        start, end = _trimmed(prose, *match.span("value"))
        value = prose[start:end]
        said = match.group("pword") or match.group("word") or ""
        if match.group("bare") is None and match.group("pword") and value[:1] not in "\"'`“(":
            # "my passphrase is correct horse battery staple", "the wifi password is orbit velvet
            # canyon moss": a phrase of plain words to the end of the clause.
            clause = _clause_end(prose, start)
            words = prose[start:clause].split()
            phrase = p.PHRASE_WORDS.fullmatch(said) is not None and len(words) >= 2
            plain = 3 <= len(words) <= 8 and all(word.isalpha() and word.islower() for word in words)
            if phrase or (plain and _is_value(value)):
                spans.append((start, clause))
                continue
        # "PIN 4821", "password Tr0ub4dor": without a verb only a value that looks like a code counts.
        any_word = match.group("bare") is None and (match.group("pword") or match.group("cjk")) is not None
        if not _is_value(value) or not (any_word or _looks_like_a_code(value)):
            continue
        if said.lower().endswith("codes") and (more := p.MORE_CODES.match(prose, end)):
            end = _trimmed(prose, start, more.end())[1]  # "backup codes are 1234-5678 2345-6789"
        spans.append((start, end))
    for pattern in (p.SAID_BEFORE, p.USED_AS):
        for match in _near_triggers(pattern, prose, lowered, p.SAID_BEFORE_TRIGGER, before=400, after=60):
            start, end = _trimmed(prose, *match.span("value"))
            if _is_value(prose[start:end]):
                spans.append((start, end))
    for match in _near_triggers(
        p.ASSIGNED, shapes, shapes.lower(), p.ASSIGNED_TRIGGER, before=120, after=520
    ):
        if not match.group("sep").strip() and not match.group("key").startswith("-"):
            continue  # "PIN pad": only an option (--password hunter2) takes its value after a space
        start, end = match.span("value")
        if match.group("value")[:1] in "\"'":
            start, end = start + 1, end - 1  # the quotes stay: {"password": "[secret removed]"}
        if _is_value(shapes[start:end]):
            spans.append((start, end))
    lowered_shapes = shapes.lower()
    for pattern, words in (
        (p.SEED_PHRASE, p.SEED_WORDS),
        (p.BEARER, p.BEARER_WORDS),
        (p.URL_PASSWORD, ("://",)),
    ):
        if any(word in lowered_shapes for word in words):
            spans += [match.span("value") for match in pattern.finditer(shapes)]
    spans += [match.span() for match in p.CARD.finditer(shapes) if _is_card_number(match.group())]
    spans += [match.span() for match in p.IBAN.finditer(shapes) if _is_iban(match.group())]
    return _merged(spans)


def _views(text: str) -> tuple[str, str, list[int] | None]:
    """The two views the patterns read (see ``secret_patterns``), and for each view character the
    index of the original one it came from (None: one view character per original one).

    NFKC is applied a character at a time, so that each view character has one origin (CJK
    punctuation is kept: it ends values); look-alike letters are read as Latin only inside a word
    that has Latin letters too."""
    if text.isascii():
        return text, text, None
    chars = {char for char in set(text) if ord(char) > 127 and char not in _KEPT_PUNCTUATION}
    table = {}
    for char in chars:
        folded = unicodedata.normalize("NFKC", char)
        if folded != char:
            table[ord(char)] = folded
    shapes = text.translate(table) if table else text
    origin = None
    longer = "".join(chr(code) for code, folded in table.items() if len(folded) != 1)
    if longer:  # "…" is "...": offsets move, so each view character keeps its origin
        origin = []
        position = 0
        for match in re.finditer(f"[{re.escape(longer)}]", text):
            origin.extend(range(position, match.start()))
            origin.extend([match.start()] * len(table[ord(match.group())]))
            position = match.end()
        origin.extend(range(position, len(text)))
    prose = shapes
    if any(chr(code) in _LOOK_ALIKE_CHARS for code in map(ord, chars)) or any(
        char in _LOOK_ALIKE_CHARS for char in "".join(table.values())
    ):
        prose = _look_alikes_as_latin(shapes)
    return shapes, prose, origin


# CJK punctuation (full-width commas, stops, colons) stays as written: it ends a value
# ("密码是abc123，记住它"), which its ASCII form would not.
_KEPT_PUNCTUATION = frozenset(
    chr(c)
    for r in ((0x3000, 0x303F), (0xFF01, 0xFF0F), (0xFF1A, 0xFF20), (0xFF3B, 0xFF40), (0xFF5B, 0xFF65))
    for c in range(r[0], r[1] + 1)
)
# Cyrillic and Greek letters drawn like Latin ones, as Latin.
_LOOK_ALIKE_FROM = "аеорсухіјѕԁӏАВЕКМНОРСТХІЈЅαοριτυνΑΒΕΖΗΙΚΜΝΟΡΤΥΧ"
_LOOK_ALIKES = str.maketrans(_LOOK_ALIKE_FROM, "aeopcyxijsdlABEKMHOPCTXIJSaopitvvABEZHIKMNOPTYX")
_LOOK_ALIKE_CHARS = frozenset(_LOOK_ALIKE_FROM)
# Where a Latin letter meets a Greek or Cyrillic one: inside a word a look-alike hides in.
_SCRIPT_MEETING = re.compile(r"[A-Za-z][\u0370-\u052f]|[\u0370-\u052f][A-Za-z]")
_LATIN_LIKE_WORD = re.compile(r"[A-Za-z\u0370-\u052f]+")


def _look_alikes_as_latin(text: str) -> str:
    """``text`` with each word that mixes Latin letters and look-alikes in Latin ("pаssword");
    a word of one script ("пароль") stays."""
    spans: list[tuple[int, int]] = []
    for meeting in _SCRIPT_MEETING.finditer(text):
        if spans and meeting.start() < spans[-1][1]:
            continue  # the same word
        start = meeting.start()
        while start > 0 and _LATIN_LIKE_WORD.match(text, start - 1, start):
            start -= 1
        word = _LATIN_LIKE_WORD.match(text, start)
        assert word is not None
        spans.append(word.span())
    if not spans:
        return text
    parts, position = [], 0
    for start, end in spans:
        parts += [text[position:start], text[start:end].translate(_LOOK_ALIKES)]
        position = end
    return "".join([*parts, text[position:]])


def _clause_end(text: str, start: int) -> int:
    """Where the clause that ``start`` is in ends (a full stop, a comma and space, "and" …), at
    most 200 characters on, without its closing punctuation."""
    limit = min(len(text), start + 200)
    found = p.CLAUSE_END.search(text, start, limit)
    return _trimmed(text, start, found.start() if found else limit)[1]


def _near_triggers(
    pattern: re.Pattern[str], text: str, lowered: str, trigger: re.Pattern[str], *, before: int, after: int
) -> Iterator[re.Match[str]]:
    """``pattern``'s matches in ``text``, looked for only around the literal words every match holds.

    Why: the prose patterns are long case-insensitive alternations, which Python's ``re`` tries at
    every position (0.25 s for a 400 KB session, the size a long OpenClaw history reaches, on the
    request path of ``/ingest``). A plain search of the lowered text for the words that any match
    must contain is ten times faster; the full pattern then runs only in the windows around them
    (``before``/``after`` bound how far a match reaches from its word; lookbehinds still see the
    text before a window). When lowering changes the length (a few non-ASCII letters), the offsets
    would not line up, so the whole text is searched.
    """
    if len(lowered) != len(text):
        yield from pattern.finditer(text)
        return
    windows: list[tuple[int, int]] = []
    for hit in trigger.finditer(lowered):
        start, end = max(0, hit.start() - before), min(len(text), hit.end() + after)
        if windows and start <= windows[-1][1]:
            windows[-1] = (windows[-1][0], end)
        else:
            windows.append((start, end))
    for start, end in windows:
        yield from pattern.finditer(text, start, end)


def _trimmed(text: str, start: int, end: int) -> tuple[int, int]:
    """The value without the sentence's closing punctuation ("my PIN is 4821." keeps its full stop)."""
    while end > start and text[end - 1] in ".,;!?)]}…。、，！？":
        end -= 1
    return start, end


def _is_value(value: str) -> bool:
    bare = value.strip("\"'`“”()")
    if not bare or bare.lower() in p.NOT_A_VALUE:
        return False
    return not bare.startswith("[")  # an earlier mark, or a placeholder like [redacted]


def _looks_like_a_code(value: str) -> bool:
    return (
        any(c.isdigit() for c in value)
        or (len(value) >= 12 and " " not in value)
        or p.TOKEN_PREFIX.match(value) is not None
    )


def _is_card_number(candidate: str) -> bool:
    """13-19 digits that pass the Luhn check and start as a card does (2-6: Mastercard's 2-series,
    Amex, Visa, Mastercard, Discover, UnionPay…), so that an epoch-milliseconds timestamp is none."""
    digits = [int(c) for c in candidate if c.isdigit()]
    if not 13 <= len(digits) <= 19 or len(set(digits)) == 1 or not 2 <= digits[0] <= 6:
        return False
    total = 0
    for i, digit in enumerate(reversed(digits)):
        if i % 2 == 1:
            digit = digit * 2 - 9 if digit > 4 else digit * 2
        total += digit
    return total % 10 == 0


def _is_iban(candidate: str) -> bool:
    """An IBAN: its country's length, and check digits that hold (ISO 13616: the rearranged number
    is 1 modulo 97)."""
    compact = candidate.replace(" ", "")
    if p.IBAN_LENGTHS.get(compact[:2]) != len(compact):
        return False
    digits = "".join(str(int(c, 36)) for c in compact[4:] + compact[:4])
    return int(digits) % 97 == 1


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged

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
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass

SECRET_MARK = "[secret removed]"

# -- said in words ----------------------------------------------------------------------------
# Words whose value may be any word ("swordfish"): what follows "my password is" is the password.
_PASSWORD_WORDS = r"pass(?:word|phrase|code|wd)s?|wi-?fi\s+key|密码|密碼|口令|パスワード|暗証番号"
# Words whose value must look like one (a digit in it, or a long unbroken run): "the bus token is
# cheap" and "the pin is loose" are no secrets, "the door code is 4821" is.
_CODE_WORDS = (
    r"pins?(?:\s+(?:code|number))?|"
    r"(?:api|access|secret|private|license|licence|product|encryption|recovery|ssh|gpg|pgp)[\s_-]?keys?|"
    r"(?:auth(?:entication)?|access|bearer|refresh|session|api|bot|github|slack|discord)?[\s_-]?tokens?|"
    r"client[\s_-]?secrets?|"
    r"(?:door|gate|alarm|garage|lock|safe|locker|access|security|verification|2fa|otp|one[\s-]time|backup|"
    r"recovery|unlock|entry|wi-?fi)\s+codes?|"
    r"(?:safe|lock|locker)\s+combination|combination|"
    r"(?:credit|debit)?\s*card\s+(?:number|no\.?)|cvv2?|cvc|security\s+number|"
    r"ssn|social\s+security\s+number"
)
# Compounds that name a thing about a credential, not the credential: "Bitwarden is my password manager".
_NOT_THE_CREDENTIAL = (
    r"(?!\s*(?:managers?|reset|resets|policy|policies|hints?|fields?|prompts?|strength|generators?|vaults?|"
    r"apps?|requirements?|rules?|changes?|expiry|pad|reader|protected|protection|less)\b)"
)
# What may stand between the word and the verb: "for the bank", "of my router", "on the laptop".
_QUALIFIER = r"(?:\s+(?:for|of|on|to|at|into)\s+(?:[\w'’.-]+\s+){0,3}?[\w'’.-]+)?"
_CONNECTOR = (
    r"(?:\s*(?:is|was|are|were|'s|’s)(?:\s+(?:now|still|currently|actually|just|set\s+to|changed\s+to))?\s*:?"
    r"|\s*[:=]|\s+(?:to|as)|\s*(?:は|是|为|為|：))"
)
# The value: a quoted run, a group of digits ("4111 1111 1111 1111"), or one unbroken token of at
# least 3 characters that stops at CJK punctuation.
_VALUE = (
    r"""(?:"[^"\n]{1,200}"|'[^'\n]{1,200}'|`[^`\n]{1,200}`|“[^”\n]{1,200}”"""
    r"""|\d(?:[\d -]{0,30}\d)?(?=$|[\s.,;!?)\]}。，！？、])"""
    r"""|[^\s"'`“”。，！？、；：]{3,200})"""
)
_SAID = re.compile(
    rf"(?:(?<![\w-])(?P<word>{_PASSWORD_WORDS}|{_CODE_WORDS})|(?P<cjk>密码|密碼|口令|パスワード|暗証番号))"
    rf"{_NOT_THE_CREDENTIAL}(?:{_QUALIFIER}{_CONNECTOR}|(?P<bare>\s+))\s*(?P<value>{_VALUE})",
    re.IGNORECASE,
)
_PASSWORD_WORD = re.compile(rf"(?:{_PASSWORD_WORDS})", re.IGNORECASE)
# "hunter2 is my wifi password", "uses hunter2 as the router password"
_SAID_BEFORE = re.compile(
    rf"(?<![\w-])(?P<value>[^\s\"'`“”]{{3,200}})\s+(?:is|was|as)\s+(?:my|the|our|their|his|her|your|a)\s+"
    rf"(?:[\w'’-]+\s+){{0,2}}(?:pass(?:word|phrase|code)|pin(?:\s+code)?)\b{_NOT_THE_CREDENTIAL}",
    re.IGNORECASE,
)
# Seed phrases are words: the 12 to 24 after "seed phrase is".
_SEED_PHRASE = re.compile(
    rf"(?:seed|recovery|mnemonic)\s+(?:phrase|words){_CONNECTOR}\s*(?P<value>(?:[a-z]+[\s,]+){{11,23}}[a-z]+)",
    re.IGNORECASE,
)
# Literal words, lowered, one of which every match of the pattern above it contains (see
# _near_triggers): the credential words' stems, and the connectors of the reverse form.
_SAID_TRIGGER = re.compile(
    r"(?<![\w-])(?:pass|pin)|key|token|code|secret|combination|card|cvv|cvc|ssn|social|security|wi-?fi"
    r"|密码|密碼|口令|パスワード|暗証番号"
)  # "pass" and "pin" start their word in every form; "key", "token" may end one ("apikey")
_SAID_BEFORE_TRIGGER = re.compile(r"(?<![\w-])(?:pass|pin)")
_SEED_WORDS = ("seed", "recovery", "mnemonic")
# Ordinary words that follow "password is" in sentences that hold no password.
_NOT_A_VALUE = frozenset(
    """a an the my your our his her their its this that these those not no too very so still now also
    just only never always usually stored saved kept written in on at under inside with without from
    secure safe strong weak long short simple easy hard complex correct wrong incorrect invalid expired
    changed different required needed missing empty blank set reset unknown forgotten lost known
    shared private secret new old default temporary one something nothing same being managed
    protected encrypted hashed rotated ready working broken locked there here what which where when
    how why who for and or but if then than because about like by""".split()
)

# -- shaped like a key -----------------------------------------------------------------------
_KEY_SHAPES = re.compile(
    r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|$)"
    r"|(?<![A-Za-z0-9])(?:"
    r"(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}"  # AWS access key id
    r"|gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255}"  # GitHub
    r"|glpat-[A-Za-z0-9_-]{20,}|gl(?:dt|ptt|rt|cbt|imt|oas|agent)-[A-Za-z0-9_-]{20,}"  # GitLab
    r"|xox[abposre]-[A-Za-z0-9-]{10,}|xapp-\d-[A-Za-z0-9-]{10,}"  # Slack
    r"|(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}"  # Stripe
    r"|sk-ant-[A-Za-z0-9_-]{20,}"  # Anthropic
    r"|sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"  # OpenAI and the many APIs that copied its form
    r"|AIza[0-9A-Za-z_-]{35}"  # Google API key
    r"|hf_[A-Za-z0-9]{30,}"  # Hugging Face
    r"|npm_[A-Za-z0-9]{36}"  # npm
    r"|pypi-[A-Za-z0-9_-]{50,}"  # PyPI
    r"|SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64}"  # SendGrid
    r"|\d{8,10}:AA[A-Za-z0-9_-]{33}"  # Telegram bot
    r"|eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"  # JWT
    r")(?![A-Za-z0-9])"
)
_BEARER = re.compile(r"(?<![\w-])(?:bearer|basic|token)\s+(?P<value>[A-Za-z0-9._~+/=-]{16,})", re.IGNORECASE)
_BEARER_WORDS = ("bearer", "basic", "token")
_URL_PASSWORD = re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s:/@]+:(?P<value>[^\s@/]+)@", re.IGNORECASE)

# -- card numbers ----------------------------------------------------------------------------
_CARD = re.compile(r"(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d-])")


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
        self._clean: OrderedDict[bytes, None] = OrderedDict()
        self._max_entries = max_entries
        self._lock = threading.Lock()

    def redact(self, text: str) -> Redacted:
        key = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
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


def is_only_secrets(text: str) -> bool:
    """True when nothing but marks and punctuation is left of a redacted ``text``."""
    return SECRET_MARK in text and not re.search(r"[^\W_]", text.replace(SECRET_MARK, ""))


def _secret_spans(text: str) -> list[tuple[int, int]]:
    """The ``(start, end)`` of each secret, sorted, overlaps merged."""
    spans: list[tuple[int, int]] = [m.span() for m in _KEY_SHAPES.finditer(text)]
    lowered = text.lower()
    for match in _near_triggers(_SAID, text, lowered, _SAID_TRIGGER, before=40, after=600):
        start, end = _trimmed(text, *match.span("value"))
        value = text[start:end]
        # "PIN 4821", "password Tr0ub4dor": without a verb only a value that looks like a code counts.
        any_word = match.group("bare") is None and (
            match.group("cjk") is not None or _PASSWORD_WORD.fullmatch(match.group("word") or "")
        )
        if _is_value(value) and (any_word or _looks_like_a_code(value)):
            spans.append((start, end))
    for match in _near_triggers(_SAID_BEFORE, text, lowered, _SAID_BEFORE_TRIGGER, before=400, after=40):
        start, end = _trimmed(text, *match.span("value"))
        if _is_value(text[start:end]):
            spans.append((start, end))
    for pattern, words in ((_SEED_PHRASE, _SEED_WORDS), (_BEARER, _BEARER_WORDS), (_URL_PASSWORD, ("://",))):
        if any(word in lowered for word in words):
            spans += [match.span("value") for match in pattern.finditer(text)]
    spans += [match.span() for match in _CARD.finditer(text) if _is_card_number(match.group())]
    return _merged(spans)


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
    bare = value.strip("\"'`“”")
    if not bare or bare.lower() in _NOT_A_VALUE:
        return False
    return not bare.startswith("[")  # an earlier mark, or a placeholder like [redacted]


def _looks_like_a_code(value: str) -> bool:
    return any(c.isdigit() for c in value) or (len(value) >= 12 and " " not in value)


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


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged

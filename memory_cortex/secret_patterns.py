"""The patterns of the secret filter (``redaction.py`` says what each kind is and how it is used).

Prose patterns run on a view of the text in which compatibility forms are folded (NFKC:
"ＰＡＳＳＷＯＲＤ" is "PASSWORD") and Cyrillic or Greek look-alike letters inside a Latin word are
read as Latin ("pаssword" with a Cyrillic "а"); machine shapes (keys, URLs, cards) run on the
NFKC view alone. Both views have one character per character of it, so a match's span is masked in
the original text.
"""

from __future__ import annotations

import re

# -- said in words ----------------------------------------------------------------------------
# Words whose value may be any word ("swordfish"): what follows "my password is" is the password.
# German, Spanish, French, Italian and Russian ones too; "p@ssword" and "pass word" as people type them.
PASSWORD_WORDS = (
    r"p[a@4]ss(?:word|phrase|code|wd)s?|pass\s+(?:word|phrase)|pwd|pw|wi-?fi\s+key"
    r"|passw(?:ort|örter|oerter)|kennw(?:ort|örter)|contraseñas?|contrasenas?|mots?\s+de\s+passe"
    r"|parola\s+d['’]ordine|паро(?:ль|ля|лем|ли)"
)
CJK_PASSWORD_WORDS = r"密码|密碼|口令|パスワード|暗証番号"
# Words whose value runs to the end of its clause: a passphrase is several words.
PHRASE_WORDS = re.compile(r"p[a@4]ss\s*phrases?", re.IGNORECASE)
# Words whose value must look like one (a digit in it, or a long unbroken run): "the bus token is
# cheap" and "the pin is loose" are no secrets, "the door code is 4821" is.
CODE_WORDS = (
    r"pins?(?:\s+(?:code|number))?|"
    r"(?:api|access|secret|private|license|licence|product|encryption|recovery|ssh|gpg|pgp)[\s_-]?keys?|"
    r"(?:auth(?:entication)?|access|bearer|refresh|session|api|bot|github|slack|discord)?[\s_-]?tokens?|"
    r"client[\s_-]?secrets?|"
    r"(?:door|gate|alarm|garage|lock|safe|locker|access|security|verification|2fa|otp|one[\s-]time|backup|"
    r"recovery|unlock|entry|wi-?fi)\s+codes?|"
    r"(?:(?<=the\s)|(?<=my\s)|(?<=our\s)|(?<=your\s))codes?|"  # "the code for the shed", not "flight code"
    r"(?:safe|lock|locker)\s+combination|combination|"
    r"(?:credit|debit)?\s*card\s+(?:number|no\.?)|cvv2?|cvc|security\s+number|"
    r"ssn|social\s+security\s+number|iban|(?:bank\s+)?account\s+number|routing\s+number|sort\s+code"
)
# Compounds that name a thing about a credential, not the credential: "Bitwarden is my password manager".
NOT_THE_CREDENTIAL = (
    r"(?!\s*(?:managers?|reset|resets|policy|policies|hints?|fields?|prompts?|strength|generators?|vaults?|"
    r"apps?|requirements?|rules?|changes?|expiry|pad|reader|protected|protection|less)\b)"
)
# What may stand between the word and the verb: "for the bank", "of my router", "for my bank
# account at the Chase branch downtown".
QUALIFIER = r"(?:\s+(?:for|of|on|to|at|into|del|de|du|des|di|della|von|vom|für|от|для)\s+(?:[\w'’.-]+\s+){0,7}?[\w'’.-]+)?"
CONNECTOR = (
    r"(?:\s*(?:is|was|are|were|'s|’s)(?:\s+(?:now|still|currently|actually|just|set\s+to|changed\s+to))?\s*:?"
    r"|\s+(?:ist|lautet|war|es|era|est|était|è|é|—)\s*:?"
    r"|\s*(?:[:=]|->|=>|→|–|—)|\s+-\s|\s+(?:to|as)|\s*(?:は|是|为|為|：))"
)
# The value: a quoted run, a group of digits ("4111 1111 1111 1111"), or one unbroken token of at
# least 3 characters that stops at CJK punctuation.
VALUE = (
    r"""(?:"[^"\n]{1,200}"|'[^'\n]{1,200}'|`[^`\n]{1,200}`|“[^”\n]{1,200}”|\([^()\n]{1,200}\)"""
    r"""|\d(?:[\d -]{0,30}\d)?(?=$|[\s.,;!?)\]}。，！？、])"""
    r"""|[^\s"'`“”()。，！？、；：]{3,200})"""
)
SAID = re.compile(
    rf"(?:(?<![^\W\d_])(?P<pword>{PASSWORD_WORDS})|(?<![\w-])(?P<word>{CODE_WORDS})|(?P<cjk>{CJK_PASSWORD_WORDS}))"
    rf"{NOT_THE_CREDENTIAL}(?:{QUALIFIER}{CONNECTOR}|(?P<bare>\s+))\s*(?P<value>{VALUE})",
    re.IGNORECASE,
)
# "hunter2 is my wifi password", "uses hunter2 as the router password"
SAID_BEFORE = re.compile(
    rf"(?<![\w-])(?P<value>[^\s\"'`“”]{{3,200}})\s+(?:is|was|as)\s+(?:my|the|our|their|his|her|your|a)\s+"
    rf"(?:[\w'’-]+\s+){{0,2}}(?:p[a@4]ss(?:word|phrase|code)|pin(?:\s+code)?)\b{NOT_THE_CREDENTIAL}",
    re.IGNORECASE,
)
# "I use hunter2 for everything as my password": the value after "use", the role later.
USED_AS = re.compile(
    r"\b(?:use|used|uses|using)\s+(?P<value>[^\s\"'`“”]{3,200})\s+for\s+(?:[\w'’-]+\s+){1,5}?as\s+"
    r"(?:my|the|our|a)\s+(?:[\w'’-]+\s+){0,2}(?:p[a@4]ss(?:word|phrase|code)|pin)\b",
    re.IGNORECASE,
)
# Seed phrases are words: the 12 to 24 after "seed phrase is".
SEED_PHRASE = re.compile(
    rf"(?:seed|recovery|mnemonic)\s+(?:phrase|words){CONNECTOR}\s*(?P<value>(?:[a-z]+[\s,]+){{11,23}}[a-z]+)",
    re.IGNORECASE,
)
# More codes after the first, in a list of codes ("backup codes are 1234-5678 2345-6789").
MORE_CODES = re.compile(
    r"(?:[\s,;]+(?:and\s+)?(?=[\w-]*\d|[A-Za-z0-9]+-[A-Za-z0-9])[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*)+"
)
# The end of the clause a passphrase runs to.
CLAUSE_END = re.compile(r"[.;!?\n]|,\s|\s+(?:and|but|so|because)\s")
# Literal words, lowered, one of which every match of the pattern above it contains (see
# redaction._near_triggers): the credential words' stems, and the connectors of the reverse form.
SAID_TRIGGER = re.compile(
    r"p[a@4]ss|(?<![\w-])(?:pin|pw)|key|token|code|secret|combination|card|cvv|cvc|ssn|social|security|wi-?fi"
    r"|iban|account|routing|kennw|contrase|parola|паро|密码|密碼|口令|パスワード|暗証番号"
)  # "pass" and "pin" start their word in every form; "key", "token" may end one ("apikey")
SAID_BEFORE_TRIGGER = re.compile(r"(?<![\w-])(?:p[a@4]ss|pin)")
SEED_WORDS = ("seed", "recovery", "mnemonic")
# Ordinary words that follow "password is" in sentences that hold no password.
NOT_A_VALUE = frozenset(
    """a an the my your our his her their its this that these those not no too very so still now also
    just only never always usually stored saved kept written in on at under inside with without from
    secure safe strong weak long short simple easy hard complex correct wrong incorrect invalid expired
    changed different required needed missing empty blank set reset unknown forgotten lost known
    shared private secret new old default temporary one something nothing same being managed
    protected encrypted hashed rotated ready working broken locked there here what which where when
    how why who for and or but if then than because about like by everything anything it them all
    again true false null none""".split()
)
# Prefixes of provider tokens: a value that starts so is a key, however short ("ghp_short").
TOKEN_PREFIX = re.compile(
    r"^(?:gh[pousr]_|github_pat_|glpat-|xox[abposre]-|sk-|sk_|rk_|pk_|hf_|npm_|pypi-|AKIA)"
)

# -- machine formats: env, JSON, YAML, command lines ------------------------------------------
# A setting's name whose last part names a credential: DB_PASSWORD, aws_secret_access_key, "api_key",
# --password, my_pin. A plain lower-case word ("token: …") is prose, read above.
_CREDENTIAL_END = (
    r"(?:password|passwd|passphrase|pwd|pw|secret|token|pin|credentials?|apikey|"
    r"(?:api|access|secret|private|encryption|signing|master|client|app|account)[_-]?key|"
    r"client[_-]?secret|auth[_-]?token)"
)
ASSIGNED = re.compile(
    r"(?<![\w.-])(?P<key>"
    rf"(?P<quote>[\"'])(?:[A-Za-z0-9]+[_.-])*{_CREDENTIAL_END}(?P=quote)"  # "password": …
    rf"|--?(?:[A-Za-z0-9]+[_.-])*{_CREDENTIAL_END}"  # --password=…, --db-password …
    rf"|(?:[A-Za-z0-9]+[_.-])+(?:{_CREDENTIAL_END}|pass)"  # DB_PASSWORD=, my_pin=, db.pass:
    r"|(?-i:[A-Z0-9_]*(?:PASSWORD|PASSWD|PWD|SECRET|TOKEN|PIN|PASSPHRASE|APIKEY|"
    r"(?:API|ACCESS|SECRET|PRIVATE|APP|ENCRYPTION|SIGNING|MASTER|CLIENT|ACCOUNT)_?KEY))"  # PASSWORD=, APP_KEY=
    rf"|(?<![^\n])[ \t]*(?:-[ \t]+)?{_CREDENTIAL_END}(?=[ \t]*:)"  # a YAML line: "  secret: …"
    rf"|{_CREDENTIAL_END}(?==)"  # token=…
    r")(?![\w-])"
    r"(?P<sep>\s*(?:=|:|=>)\s*|\s+(?=[^\s-]))"  # a space only after an option: --password hunter2
    r"""(?P<value>"[^"\n]{1,500}"|'[^'\n]{1,500}'|[^\s"',;&}\]]{1,500})""",
    re.IGNORECASE,
)
ASSIGNED_TRIGGER = re.compile(
    r"(?:pass|pw|secret|token|pin|key|credential)[\w-]*[\"']?\s*(?:=|:)|--[\w-]*(?:pass|pw|secret|token|pin|key)",
    re.IGNORECASE,
)

# -- shaped like a key -----------------------------------------------------------------------
KEY_SHAPES = re.compile(
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
BEARER = re.compile(r"(?<![\w-])(?:bearer|basic|token)\s+(?P<value>[A-Za-z0-9._~+/=-]{16,})", re.IGNORECASE)
BEARER_WORDS = ("bearer", "basic", "token")
# The password of scheme://user:password@host: up to the last "@" before the host ("p@ss", "pa/ss").
URL_PASSWORD = re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s:/@]+:(?P<value>[^\s]+)@[^\s@/]+", re.IGNORECASE)

# -- card numbers and IBANs ------------------------------------------------------------------
# Standing alone: 13-19 digits in one run, or groups of 4 (Amex 4-6-5) split by one kind of space,
# dash or dot; never a run inside a longer token (a hex id, a tracking number).
CARD = re.compile(
    r"(?<![\w.-])(?:\d{13,19}"
    r"|\d{4}(?P<sep>[ .-])\d{4}(?:(?P=sep)\d{4}){1,2}(?:(?P=sep)\d{1,3})?"
    r"|\d{4}(?P<amex>[ .-])\d{6}(?P=amex)\d{5})"
    r"(?![\w-]|[.,]\d)"
)
IBAN = re.compile(r"(?<![\w-])[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?(?![\w-])")
# The length of an IBAN in each country that issues them (ISO 13616 registry, the common ones).
IBAN_LENGTHS = {
    "AD": 24,
    "AE": 23,
    "AT": 20,
    "BA": 20,
    "BE": 16,
    "BG": 22,
    "BH": 22,
    "BR": 29,
    "CH": 21,
    "CY": 28,
    "CZ": 24,
    "DE": 22,
    "DK": 18,
    "EE": 20,
    "EG": 29,
    "ES": 24,
    "FI": 18,
    "FO": 18,
    "FR": 27,
    "GB": 22,
    "GE": 22,
    "GI": 23,
    "GL": 18,
    "GR": 27,
    "HR": 21,
    "HU": 28,
    "IE": 22,
    "IL": 23,
    "IS": 26,
    "IT": 27,
    "JO": 30,
    "KW": 30,
    "KZ": 20,
    "LB": 28,
    "LI": 21,
    "LT": 20,
    "LU": 20,
    "LV": 21,
    "MC": 27,
    "MD": 24,
    "ME": 22,
    "MK": 19,
    "MT": 31,
    "MU": 30,
    "NL": 18,
    "NO": 15,
    "PK": 24,
    "PL": 28,
    "PS": 29,
    "PT": 25,
    "QA": 29,
    "RO": 24,
    "RS": 22,
    "SA": 24,
    "SE": 24,
    "SI": 19,
    "SK": 24,
    "SM": 27,
    "TN": 24,
    "TR": 26,
    "UA": 29,
    "VG": 24,
    "XK": 20,
}

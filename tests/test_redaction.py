"""The secrets filter (memory_cortex/redaction.py): what it masks, what it leaves alone."""

from __future__ import annotations

import pytest

from memory_cortex import redaction
from memory_cortex.redaction import SECRET_MARK, CleanTextMemo, has_secret, is_only_secrets, redact

M = SECRET_MARK


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # said in words: the value goes, the sentence stays
        ("the wifi password is hunter2", f"the wifi password is {M}"),
        ("My PIN is 4821.", f"My PIN is {M}."),
        ("my bank pin is 0042, remember it", f"my bank pin is {M}, remember it"),
        ("The user's wifi password: Tr0ub4dor&3", f"The user's wifi password: {M}"),
        ("the password for the bank is 'correct horse battery staple'", f"the password for the bank is {M}"),
        ("set the router password to swordfish", f"set the router password to {M}"),
        ("hunter2 is my wifi password", f"{M} is my wifi password"),
        ("the door code is 4821#", f"the door code is {M}"),
        ("the alarm code was changed to 9911", f"the alarm code was changed to {M}"),
        ("my passphrase = purple-monkey-dishwasher", f"my passphrase = {M}"),
        ("bank pin 4821", f"bank pin {M}"),
        ("wifi password Tr0ub4dor&3 on the fridge", f"wifi password {M} on the fridge"),
        ("my card number is 4111 1111 1111 1111", f"my card number is {M}"),
        ("the CVV is 123", f"the CVV is {M}"),
        ("我的密码是abc123，记住它", f"我的密码是{M}，记住它"),
        ("パスワードはhunter2です", f"パスワードは{M}"),
        (
            "my seed phrase is abandon ability able about above absent absorb abstract absurd abuse access accident",
            f"my seed phrase is {M}",
        ),
        # shaped like a key, wherever it stands
        ("use sk-proj-abcdefghijklmnopqrstuvwxyz123456 for it", f"use {M} for it"),
        ("token ghp_abcdefghijklmnopqrstuvwxyz0123456789 works", f"token {M} works"),
        ("AKIAIOSFODNN7EXAMPLE is the access key id", f"{M} is the access key id"),
        ("xoxb-123456789012-abcdefghijkl for slack", f"{M} for slack"),
        ("sk_live_abcdefghijklmnop1234 on stripe", f"{M} on stripe"),
        ("AIzaSyA-abcdefghijklmnopqrstuvwxyz12345 maps", f"{M} maps"),
        ("hf_abcdefghijklmnopqrstuvwxyzABCDEF token", f"{M} token"),
        ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", M),
        ("curl -H 'Authorization: Bearer abcdefghijklmnopqrstu' x", f"curl -H 'Authorization: Bearer {M}' x"),
        ("postgres://sam:s3cretpw@db.lan/memories", f"postgres://sam:{M}@db.lan/memories"),
        ("key:\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEA\n-----END OPENSSH PRIVATE KEY-----\nend",
         f"key:\n{M}\nend"),
        ("pay with 4111-1111-1111-1111 please", f"pay with {M} please"),
    ],
)  # fmt: skip
def test_secrets_are_masked_in_place(text: str, expected: str) -> None:
    result = redact(text)
    assert result.text == expected
    assert result.removed >= 1
    assert has_secret(text)


@pytest.mark.parametrize(
    "text",
    [
        "The user lives in Porto.",
        "Bitwarden is my password manager",
        "my password manager is Bitwarden",
        "my password is too short",
        "I use 1Password; my password is in 1Password",
        "the secret to good bread is patience",
        "tokens are cheap here",
        "the PIN is loose on my jacket",
        "the gate code is written on the fridge",
        "my password is the same as my email",
        "order 1716234567890 arrived",  # an epoch-ms timestamp, Luhn-valid or not
        "call me at +44 20 7946 0958",
        "The user reset their password yesterday.",
        "the password changed twice this year",
        "my PIN code works again",
        "",
    ],
)
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert redact(text).text == text
    assert redact(text).removed == 0
    assert not has_secret(text)


def test_a_luhn_invalid_number_is_no_card() -> None:
    assert not has_secret("ticket 4111 1111 1111 1112")


def test_what_was_masked_counts_as_a_secret_again() -> None:
    masked = redact("the wifi password is hunter2").text
    assert has_secret(masked)  # an extracted "The password is [secret removed]" is still dropped
    assert redact(masked).text == masked  # and masking is idempotent


@pytest.mark.parametrize(
    ("text", "only"),
    [
        ("sk-proj-abcdefghijklmnopqrstuvwxyz123456", True),
        ("-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n-----END RSA PRIVATE KEY-----", True),
        ('"sk-proj-abcdefghijklmnopqrstuvwxyz123456".', True),
        ("The wifi password is hunter2.", False),
        ("The user lives in Porto.", False),
    ],
)
def test_only_secrets(text: str, only: bool) -> None:
    assert is_only_secrets(redact(text).text) is only


def test_the_memo_remembers_clean_texts_only_and_stays_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    memo = CleanTextMemo(max_entries=2)
    calls: list[str] = []
    real = redaction.redact
    monkeypatch.setattr(redaction, "redact", lambda text: calls.append(text) or real(text))
    for text in ("We went hiking.", "We went hiking.", "my PIN is 4821", "my PIN is 4821"):
        memo.redact(text)
    assert calls == ["We went hiking.", "my PIN is 4821", "my PIN is 4821"]  # a secret is masked every time
    assert memo.redact("my PIN is 4821").text == f"my PIN is {SECRET_MARK}"
    memo.redact("A second clean text.")
    memo.redact("A third clean text.")  # the first one is dropped: at most two are kept
    calls.clear()
    memo.redact("We went hiking.")
    assert calls == ["We went hiking."]

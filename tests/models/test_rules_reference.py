"""Whom an English "he" or "she" opening a sentence means, as the rules read it: the one relative
named just before, or no one."""

from __future__ import annotations

import pytest

from memory_cortex.models.rules import Said, extract_statements


def facts_of(*said: Said, before: tuple[Said, ...] = ()) -> set[tuple[str, str, str]]:
    return {
        (fact.subject, fact.attribute or "", (fact.value or "").lower())
        for _, fact in extract_statements(list(said), before=before)
    }


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("My nan is 91. She's also got glaucoma.", ("user's grandmother", "health", "glaucoma")),
        ("My brother Kerem is visiting. Thanks for asking! He is a dentist.", ("Kerem", "job", "dentist")),
        ("My wife Ana is from Porto. Now she's vegan.", ("Ana", "diet", "vegan")),
        ("My son Cian loves Lego. He's 8.", ("Cian", "age", "8")),
    ],
)
def test_a_pronoun_after_one_named_relative_is_them(text: str, expected: tuple[str, str, str]) -> None:
    assert expected in facts_of(Said(text))


@pytest.mark.parametrize(
    "text",
    [
        "My sister Ana visited. He is a dentist.",  # not her: another person
        "My dad called about my mum. She is a dentist.",  # two named: which one is not known
        "My brother Kerem came. The driver was late. He is a dentist.",  # someone else named since
        "My brother Kerem came. I cooked all day. We ate late. The house was a mess. He is a dentist.",
        "My brother's wife Ana came. She is a dentist.",  # someone's relative, not the speaker's
    ],
)
def test_a_pronoun_that_may_mean_someone_else_means_no_one(text: str) -> None:
    assert not any(attribute == "job" for _, attribute, _ in facts_of(Said(text)))


def test_the_messages_before_say_whom_a_pronoun_means_and_state_nothing_themselves() -> None:
    before = (Said("My daughter Mia is 6."), Said("What does she like?", states=False))
    assert facts_of(Said("She loves horses."), before=before) == {("Mia", "likes", "horses")}


def test_a_reply_naming_someone_else_or_another_speaker_ends_the_reference() -> None:
    named = Said("My cat Luna is 3.")
    assert ("Luna", "diet", "vegan") not in facts_of(
        named, Said("Has the vet seen her?", states=False), Said("She is vegan.")
    )
    assert ("Luna", "diet", "vegan") not in facts_of(named, Said("She is vegan.", speaker="Bob"))

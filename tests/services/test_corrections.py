"""Whether a correction may hide the memory it corrects (services/corrections.py): only a memory
that states the one fact it corrects. A clause is touched only by its item, the last token that is
its own (in no other clause); words and numbers that several clauses share name none of them."""

from __future__ import annotations

import pytest

from memory_cortex.services.corrections import clauses, states_one_fact

# (old memory, correction): the correction is about one fact, the old memory holds another one too.
KEEPS_THE_OTHER_FACT = [
    # "years old" is in both clauses: it does not touch Leo's.
    ("Mia is 6 years old and Leo is 4 years old.", "Mia is 7 years old, not 6."),
    # "likes" is in both clauses.
    ("The user likes hiking and likes jazz.", "The user no longer likes hiking."),
    # The 6 is in both clauses: it does not say which child.
    ("The user's kids are Mia (6) and Leo (6).", "Mia is 7, not 6."),
    ("Sister Anna lives in Rome and brother Tom lives in Oslo.", "Sister Anna lives in Milan now, not Rome."),
    # "&", "/" and "+" join items; the shared "allergic" stands once, in front of the first item.
    ("The user is allergic to peanuts & shellfish.", "The user is not allergic to shellfish any more."),
    ("The user is allergic to peanuts/shellfish.", "The user is not allergic to shellfish any more."),
    ("The user is allergic to peanuts + shellfish.", "The user is not allergic to shellfish any more."),
    ("The user has two kids, Mia (6) and Leo (4).", "The user's daughter Mia is 7, not 6."),
    ("Sam lives in Lisbon and works at Acme.", "Sam lives in Porto, not Lisbon."),
]


@pytest.mark.parametrize(("old", "correction"), KEEPS_THE_OTHER_FACT)
def test_a_correction_of_one_fact_does_not_state_the_others(old: str, correction: str) -> None:
    assert not states_one_fact(old, correction)


@pytest.mark.parametrize(
    ("old", "correction"),
    [
        ("The user lives in Porto.", "The user lives in Lisbon now."),
        # A correction that names every clause's item restates them all.
        ("Mia is 6 and Leo is 4.", "Mia is 7, not 6, and Leo is 5, not 4."),
        # A slash between digits is a date, not two items.
        ("The user's flight leaves on 2026/05/03.", "The user's flight leaves on 2026/05/04."),
    ],
)
def test_a_correction_of_the_same_one_fact_supersedes(old: str, correction: str) -> None:
    assert states_one_fact(old, correction)


def test_symbols_that_join_items_break_clauses() -> None:
    assert clauses("peanuts & shellfish / eggs + milk | soy") == [
        "peanuts",
        "shellfish",
        "eggs",
        "milk",
        "soy",
    ]
    assert clauses("born 1990/04/12") == ["born 1990/04/12"]

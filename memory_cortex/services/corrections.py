"""Whether a correction may hide the memory it corrects: only when that memory states one fact.

A correction ("Mia is 7, not 6") that lands close to a stored memory is planned to supersede it
(:func:`~.write_plan.plan_writes`). Superseding hides the whole row, so a row that also holds other
facts ("The user has two kids, Mia (6) and Leo (4).") would take those with it. Before the write,
each planned supersession is checked against the old memory's text:

1. the old text is cut into **clauses** at sentence ends, semicolons, commas, the coordinating
   words of enumerations ("and", "or", "but", "while", "as well as", "plus") and the symbols that
   join items ("&", "/" between words, "+", "|"; "和", "、", "，", "・" in CJK text);
2. a clause's **own tokens** are its content tokens (a number, or a word of three characters or
   more that is not a function word nor "user", the subject every extracted fact is written about)
   found in no other clause of the old memory: in "Mia is 6 years old and Leo is 4 years old",
   "years old" belongs to both clauses and names neither; in "Mia (6) and Leo (6)" the 6 does not
   say which child;
3. a clause is **touched** by the correction when the correction has the clause's **item**: its
   last own token. An enumeration's items line up at the end of its clauses, and the words it
   shares often stand once, in front of the first ("allergic to peanuts & shellfish": a correction
   about shellfish says "allergic" too, which names no item, so it does not touch "peanuts");
4. the old memory **states the same one fact** when it has one clause, or when the correction
   touches every clause. Then the correction supersedes it, as before.

Otherwise the old memory stays live and recallable, and the correction is stored beside it with a
link: ``metadata.corrects`` names the memory it corrects. When in doubt (a clause the tokens cannot
tell apart, a comma inside one fact) the method keeps both: a fact left visible beside its
correction can be read; a fact hidden by mistake is lost from recall.
"""

from __future__ import annotations

import dataclasses
import re
import sqlite3
from collections.abc import Sequence

from ..records import NewMemory
from ..store import memories as memory_sql
from ..store.db import Database
from .write_plan import WritePlan

# Where one clause ends and the next begins (an enumeration's items are clauses of their own). A
# slash between two digits is a date or a fraction ("6/12"), not two items.
_CLAUSE_BREAK = re.compile(
    r"[.;!?]\s+|[;:]|,\s*|\s+(?:and|or|nor|but|while|whereas|as well as|plus|along with|together with)\s+"
    r"|\s*[&+|＆＋｜・]\s*|(?<!\d)\s*[/／]\s*|\s*[/／]\s*(?!\d)|[，、；。！？]|和",
    re.IGNORECASE,
)
_TOKEN = re.compile(r"\w+", re.UNICODE)
# Words that carry no fact of their own; "user" is the subject the extractors write every fact about.
_FUNCTION_WORDS = frozenset(
    """the and but has have had was were are not with for from that this who whom which whose
    also now then than very just its his her hers him she they them their theirs our ours your
    yours one any all some each both into onto over under about been being does did done can
    could would should will shall may might must only still yet too there here when where what
    why how actually correction corrected user users nor along together""".split()
)


def clauses(text: str) -> list[str]:
    """``text`` cut into clauses (rule 1); empty pieces are dropped."""
    return [piece.strip() for piece in _CLAUSE_BREAK.split(text) if piece and piece.strip()]


def content_tokens(text: str) -> list[str]:
    """The tokens of ``text`` that can name a fact (rule 2), lower-cased, in order of appearance and
    each once: numbers and non-function words."""
    tokens = [token.lower() for token in _TOKEN.findall(text)]
    kept = [t for t in tokens if t.isdigit() or (len(t) >= 3 and t not in _FUNCTION_WORDS)]
    return list(dict.fromkeys(kept))


def items(text: str) -> list[str | None]:
    """Each clause's item (rules 2 and 3): its last token found in no other clause, None for a
    clause with no token of its own (nothing can touch it)."""
    tokens = [content_tokens(piece) for piece in clauses(text)]
    seen_in: dict[str, int] = {}
    for own in tokens:
        for token in own:
            seen_in[token] = seen_in.get(token, 0) + 1
    return [next((t for t in reversed(own) if seen_in[t] == 1), None) for own in tokens]


def states_one_fact(old_text: str, correction_text: str) -> bool:
    """Whether ``old_text`` states only what ``correction_text`` corrects (rule 4): one clause, or
    every clause's item named by the correction."""
    old_items = items(old_text)
    if len(old_items) <= 1:
        return True
    corrected = set(content_tokens(correction_text))
    return all(item is not None and item in corrected for item in old_items)


async def narrow_supersessions(
    db: Database, rows: Sequence[NewMemory], plans: Sequence[WritePlan]
) -> tuple[list[NewMemory], list[WritePlan]]:
    """The write plan with each supersession of a memory holding other facts turned into a link:
    the old memory stays live, the correction records it in ``metadata.corrects``."""
    targets = [plan.supersede for plan in plans if plan.supersede is not None]
    if not targets:
        return list(rows), list(plans)

    def read(conn: sqlite3.Connection) -> dict[int, str]:
        return {memory_id: record.fact for memory_id, record in memory_sql.get_many(conn, targets).items()}

    old_facts = await db.read(read)
    new_rows, new_plans = list(rows), list(plans)
    for i, plan in enumerate(plans):
        old = plan.supersede
        if old is None or old not in old_facts or states_one_fact(old_facts[old], rows[i].fact):
            continue
        new_plans[i] = WritePlan()
        new_rows[i] = dataclasses.replace(rows[i], metadata={**rows[i].metadata, "corrects": old})
    return new_rows, new_plans

"""Precision and recall of the rules extractor on the labelled sentence sets (``bench/extraction/``).

Each sentence is a chat message with the facts a person reading it would take from it (or none);
the extractor reads it as its speaker wrote it (the owner, or another person in a group chat), and
each fact it returns is compared with the labels: same subject, same attribute, one value inside
the other (case-insensitive). A fact without an attribute counts when its subject is right and its
text holds a label's value. A fact that says a value ended ("I left Meta in the summer", "Biscuit
passed away") is not scored: no label says what ended, and what it ends is checked by
``bench/beliefs.py`` (the old value's ``valid_to``). The rules extractor runs in-process: no daemon,
no model, a second.

Usage::

    python bench/extraction.py                    # every language, dev and held-out
    python bench/extraction.py --lang en --show   # list every miss and every wrong fact
    python bench/extraction.py --json out/extraction.json

See ``bench/extraction/README.md`` for the label format and the canonical attributes.
"""

from __future__ import annotations

import argparse
import json
import sys
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from _harness import REPO_ROOT, format_table, git_revision

sys.path.insert(0, str(REPO_ROOT))

from memory_cortex.models.attributes import canonical_attribute, canonical_relation
from memory_cortex.models.facts import ExtractedFact
from memory_cortex.models.rules import Said, extract_statements

DATA = Path(__file__).parent / "extraction"
LANGUAGES = ("en", "zh", "ja")
SPLITS = ("dev", "dev2", "dev3", "heldout")  # dev2, dev3: more tuning sets (English only)


@dataclass(frozen=True)
class Fact:
    """A labelled or produced fact, canonicalised for comparison."""

    subject: str
    attribute: str | None
    value: str | None
    text: str = ""


@dataclass
class Score:
    sentences: int = 0
    labels: int = 0
    found: int = 0  # labels some produced fact matches
    produced: int = 0
    right: int = 0  # produced facts that match a label
    misses: list[str] = field(default_factory=list)
    wrong: list[str] = field(default_factory=list)

    @property
    def precision(self) -> float:
        return self.right / self.produced if self.produced else float("nan")

    @property
    def recall(self) -> float:
        return self.found / self.labels if self.labels else float("nan")


def fold(text: str | None) -> str:
    return " ".join(unicodedata.normalize("NFKC", text or "").casefold().replace("’", "'").split())


def canonical_subject(subject: str) -> str:
    """ "user's dad" → "user's father"; "the user" → "user"; names folded."""
    text = fold(subject).removeprefix("the ")
    if text in ("user", "owner"):
        return "user"
    owner, sep, relation = text.partition("'s ")
    if sep:
        canon = canonical_relation(relation) or relation
        return f"{owner}'s {canon}"
    return text


def label_facts(entry: dict[str, Any]) -> list[Fact]:
    return [
        Fact(canonical_subject(item["subject"]), canonical_attribute(item["attribute"]), fold(item["value"]))
        for item in entry["expect"]
    ]


def produced_facts(fact: ExtractedFact, speaker: str | None) -> list[Fact]:
    """The fact, and the relation it names ("Mia (the user's daughter) is 5" also says the user's
    daughter is Mia)."""
    if fact.ends:  # "I left Meta in the summer": no label says what ended; bench/beliefs.py scores it
        return []
    found = [
        Fact(
            canonical_subject(fact.subject),
            canonical_attribute(fact.attribute),
            fold(fact.value),
            fold(fact.fact),
        )
    ]
    if (
        fact.relation
        and not fold(fact.subject).endswith(f"'s {fact.relation}")
        and fact.subject_kind != "plan"
    ):
        owner = canonical_subject(speaker) if speaker else "user"
        found.append(Fact(owner, canonical_relation(fact.relation), fold(fact.subject), fold(fact.fact)))
    return found


def matches(produced: Fact, label: Fact) -> bool:
    if produced.subject != label.subject and not _same_plan(produced.subject, label.subject):
        return False
    if produced.attribute is None:
        return bool(label.value) and label.value in produced.text
    if produced.attribute != label.attribute or not produced.value or not label.value:
        return False
    return label.value in produced.value or produced.value in label.value


def _same_plan(first: str, second: str) -> bool:
    """Plan names written two ways ("lisbon trip", "trip to lisbon"): the same words."""
    return sorted(first.replace(" to ", " ").split()) == sorted(second.replace(" to ", " ").split())


def score(entries: Sequence[dict[str, Any]]) -> Score:
    result = Score()
    for entry in entries:
        speaker = None if entry["speaker"] == "user" else entry["speaker"]
        labels = label_facts(entry)
        produced = [
            each
            for _, fact in extract_statements([Said(entry["text"], speaker)])
            for each in produced_facts(fact, speaker)
        ]
        result.sentences += 1
        result.labels += len(labels)
        result.produced += len(produced)
        for fact in produced:
            if any(matches(fact, label) for label in labels):
                result.right += 1
            else:
                result.wrong.append(
                    f"{entry['id']}: {entry['text']!r} → {fact.subject} / {fact.attribute} = {fact.value!r}"
                )
        for label in labels:
            if any(matches(fact, label) for fact in produced):
                result.found += 1
            else:
                result.misses.append(
                    f"{entry['id']}: {entry['text']!r} ✗ {label.subject} / {label.attribute} = {label.value!r}"
                )
    return result


def load(language: str, split: str) -> list[dict[str, Any]]:
    path = DATA / f"{language}-{split}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def by_attribute(entries: Sequence[dict[str, Any]]) -> Counter[str]:
    return Counter(
        canonical_attribute(item["attribute"]) or "" for entry in entries for item in entry["expect"]
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--lang", choices=LANGUAGES, action="append", help="only these languages (repeatable)"
    )
    parser.add_argument("--split", choices=SPLITS, action="append", help="only these splits (repeatable)")
    parser.add_argument("--show", action="store_true", help="list every missed label and every wrong fact")
    parser.add_argument("--json", type=Path, help="write the scores here")
    args = parser.parse_args(argv)
    rows, report = [], {"revision": git_revision(), "scores": {}}
    for language in args.lang or LANGUAGES:
        for split in args.split or SPLITS:
            if not (DATA / f"{language}-{split}.jsonl").exists():
                continue
            result = score(load(language, split))
            rows.append(
                [
                    f"{language} {split}",
                    result.sentences,
                    result.labels,
                    result.produced,
                    result.right,
                    result.precision,
                    result.recall,
                ]
            )
            report["scores"][f"{language}-{split}"] = {
                "sentences": result.sentences,
                "labels": result.labels,
                "produced": result.produced,
                "right": result.right,
                "found": result.found,
                "precision": result.precision,
                "recall": result.recall,
            }
            if args.show:
                print(f"\n## {language} {split}: wrong facts ({len(result.wrong)})")
                print("\n".join(result.wrong))
                print(f"\n## {language} {split}: missed labels ({len(result.misses)})")
                print("\n".join(result.misses))
    print()
    print(format_table(["set", "sentences", "labels", "facts", "right", "precision", "recall"], rows))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())

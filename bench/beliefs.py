"""What the memory believes after real conversations: the belief scenarios of ``bench/beliefs/``.

Each scenario is a few conversations, on different days, posted through ``POST /ingest`` the way
the OpenClaw plugin posts them: the growing session after each assistant turn (debounced), then the
whole session once more with ``debounce: false`` (its flush); in a group, each message carries its
sender's ``name`` and the owner's messages ``owner: true`` (OpenClaw's senderIsOwner). Every
message is stamped with when it was said. Then each question goes to ``POST /context`` with the
plugin's defaults (500 tokens, 15 facts), and the checks of ``bench/beliefs/README.md`` are scored:

- *answer in block*: every answer word is in the block;
- *current first*: no outdated value comes before the current one;
- *nothing forbidden*: no forbidden word (another person's allergy, anything at all outside the
  profile for an unrelated question);
- *entity current, old ended*: the entity holds the current value, each old one in its history with
  a ``valid_to``;
- *no one else's words as the user's*: no fact about the user holds another person's words.

A share of passed checks per category and per check; the target with the rules extractor is 0.95
in every category. The daemon runs on a temporary database with ``llm.backend: rules``.

Usage::

    python bench/beliefs.py                          # the dev scenarios
    python bench/beliefs.py --set scenarios-2        # the second tuning set
    python bench/beliefs.py --set scenarios-3        # the third (varied writers)
    python bench/beliefs.py --set scenarios-4        # the fourth (the first held-out set, read since)
    python bench/beliefs.py --set heldout            # the held-out scenarios (measured, never read)
    python bench/beliefs.py --show                   # every failed check, with its block
    python bench/beliefs.py --json out/beliefs.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import unicodedata
from collections import defaultdict
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
from _harness import (
    REPO_ROOT,
    SEARCH_TIMEOUT,
    WRITE_TIMEOUT,
    BenchError,
    Daemon,
    format_table,
    git_revision,
    run_main,
    wait_for_health,
    workdir_in,
)
from tqdm import tqdm

sys.path.insert(0, str(REPO_ROOT))

from memory_cortex.models.attributes import RELATIONS, canonical_attribute, canonical_relation

DATA = Path(__file__).parent / "beliefs"
CATEGORIES = ("update", "correction", "group", "family", "indirect", "unrelated", "cjk", "distractor")
# The plugin's defaults (integrations/openclaw/src/config.ts): recallMaxTokens 500, recallMaxFacts 15.
CONTEXT_TOKENS = 500
CONTEXT_FACTS = 15
TARGET = 0.95
RELATION_ATTRIBUTES = frozenset(RELATIONS.values())


@dataclass
class Check:
    scenario: str
    category: str
    kind: str
    passed: bool
    detail: str = ""


@dataclass
class Report:
    checks: list[Check] = field(default_factory=list)
    blocks: dict[str, str] = field(default_factory=dict)

    def add(self, scenario: dict[str, Any], kind: str, passed: bool, detail: str = "") -> None:
        self.checks.append(Check(scenario["id"], scenario["category"], kind, passed, detail))


def fold(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def user_of(scenario: dict[str, Any]) -> str:
    """One user per scenario, so scenarios never see each other's memories."""
    return f"{scenario['id']}:{scenario['user_id']}"[:200]


def session_bodies(scenario: dict[str, Any], session: dict[str, Any]) -> list[dict[str, Any]]:
    """The requests the plugin sends for one session: the growing transcript after each assistant
    turn (debounced), then the whole of it with ``debounce: false``."""
    start = datetime.fromisoformat(session["at"].replace("Z", "+00:00"))
    owner = session.get("owner_speaker")
    messages = []
    for i, message in enumerate(session["messages"]):
        item: dict[str, Any] = {
            "role": message["role"],
            "content": message["content"],
            "timestamp": (start + timedelta(minutes=i)).isoformat().replace("+00:00", "Z"),
            "id": f"{session['session_id']}-{i}",
        }
        if message.get("name"):
            item["name"] = message["name"]
            if owner is not None:
                item["owner"] = message["name"] == owner
        messages.append(item)
    common = {
        "session_id": session["session_id"],
        "user_id": user_of(scenario),
        "session_kind": session.get("session_kind", "private"),
        "channel": session.get("channel"),
    }
    bodies = [
        {**common, "messages": messages[: i + 1], "debounce": True}
        for i, message in enumerate(messages)
        if message["role"] == "assistant"
    ]
    bodies.append({**common, "messages": messages, "debounce": False})
    return bodies


def post_all(client: httpx.Client, scenarios: list[dict[str, Any]]) -> None:
    for scenario in tqdm(scenarios, desc="posting conversations", unit="scenario"):
        order = sorted(
            range(len(scenario["sessions"])), key=lambda i: scenario["sessions"][i].get("post_order", i)
        )
        for index in order:
            for body in session_bodies(scenario, scenario["sessions"][index]):
                response = client.post("/ingest", json=body, timeout=WRITE_TIMEOUT)
                if response.status_code != 202:
                    raise BenchError(f"POST /ingest answered {response.status_code}: {response.text[:300]}")
    with tqdm(desc="waiting for extraction", unit="job") as progress:
        while True:
            queue = client.get("/stats", timeout=SEARCH_TIMEOUT).json()["ingest"]
            progress.n = queue["done"]
            progress.refresh()
            if queue["pending"] == 0 and queue["running"] == 0:
                break
            time.sleep(0.5)
    if queue["failed"]:
        raise BenchError(f"{queue['failed']} ingest jobs failed: see GET /ingest/jobs?status=failed")


def ask(client: httpx.Client, scenario: dict[str, Any], question: dict[str, Any]) -> dict[str, Any]:
    first = scenario["sessions"][0]
    body = {
        "query": question["query"],
        "user_id": user_of(scenario),
        "session_kind": question.get("session_kind", "private"),
        "channel": question.get("channel", first.get("channel")),
        "max_tokens": CONTEXT_TOKENS,
        "max_facts": CONTEXT_FACTS,
    }
    response = client.post("/context", json=body, timeout=SEARCH_TIMEOUT)
    if response.status_code != 200:
        raise BenchError(f"POST /context answered {response.status_code}: {response.text[:300]}")
    return response.json()


def check_question(
    report: Report, scenario: dict[str, Any], question: dict[str, Any], answer: dict[str, Any]
) -> None:
    lines = answer["context"].splitlines()[2:]  # after the header and the recalled-as-data label
    body = fold("\n".join(lines))
    report.blocks[f"{scenario['id']}: {question['query']}"] = answer["context"]
    wanted = [fold(word) for word in question.get("answer", [])]
    if wanted:
        missing = [word for word in wanted if word not in body]
        report.add(scenario, "answer in block", not missing, f"{question['query']!r} lacks {missing}")
    if question.get("outdated"):
        first_answer = min((body.find(word) for word in wanted if word in body), default=-1)
        early = [
            word
            for word in map(fold, question["outdated"])
            if word in body and (first_answer < 0 or body.find(word) < first_answer)
        ]
        report.add(scenario, "current first", not early, f"{question['query']!r}: {early} before the answer")
    forbidden = [word for word in map(fold, question.get("forbidden", [])) if word in body]
    if question.get("only_profile"):
        beyond = lines[answer.get("profile", 0) :]
        report.add(
            scenario,
            "nothing forbidden",
            not beyond and not forbidden,
            f"{question['query']!r}: {beyond or forbidden}",
        )
    elif question.get("forbidden"):
        report.add(scenario, "nothing forbidden", not forbidden, f"{question['query']!r}: {forbidden}")


def canonical_subject(subject: str) -> str:
    text = fold(subject).removeprefix("the ")
    owner, sep, relation = text.partition("'s ")
    if sep:
        return f"{owner}'s {canonical_relation(relation) or relation}"
    return text


def check_facts(client: httpx.Client, report: Report, scenario: dict[str, Any]) -> None:
    user = user_of(scenario)
    if not scenario.get("facts") and not scenario.get("not_the_users"):
        return
    entities = client.get("/entities", params={"user_id": user}, timeout=SEARCH_TIMEOUT).json()["entities"]
    by_name = {("user" if e["kind"] == "self" else canonical_subject(e["name"])): e for e in entities}
    details: dict[int, dict[str, Any]] = {}

    def detail(entity_id: int) -> dict[str, Any]:
        if entity_id not in details:
            details[entity_id] = client.get(
                f"/entities/{entity_id}", params={"user_id": user}, timeout=SEARCH_TIMEOUT
            ).json()
        return details[entity_id]

    for expected in scenario.get("facts", []):
        subject = canonical_subject(expected["subject"])
        attribute = canonical_attribute(expected["attribute"])
        entity = by_name.get(subject) or next(
            (e for name, e in by_name.items() if sorted(name.split()) == sorted(subject.split())), None
        )
        if entity is None:
            report.add(
                scenario,
                "entity current, old ended",
                False,
                f"no entity {subject!r} (have {sorted(by_name)})",
            )
            continue
        view = detail(entity["id"])
        current = [m for m in view["current"] if m["attribute"] == attribute]
        ended = [m for m in view["history"] if m["attribute"] == attribute and m["valid_to"]]
        if attribute in RELATION_ATTRIBUTES:
            # "The user's daughter is Mia" is the relation User -daughter-> Mia: its object is the value.
            mine = [
                r
                for r in view["relations"]
                if r["subject_id"] == entity["id"] and r["predicate"] == attribute
            ]
            current += [{"value": r["object"], "fact": ""} for r in mine if not r["ended"]]
            ended += [{"value": r["object"], "fact": "", "valid_to": r["ended"]} for r in mine if r["ended"]]
        now_ok = any(fold(expected["current"]) in fold(f"{m['value']} {m['fact']}") for m in current)
        old_ok = all(
            any(fold(word) in fold(f"{m['value']} {m['fact']}") for m in ended)
            for word in expected.get("previous", [])
        )
        report.add(
            scenario,
            "entity current, old ended",
            now_ok and old_ok,
            f"{subject} {attribute}: current {[m['value'] for m in current]}, ended {[m['value'] for m in ended]};"
            f" wanted {expected['current']!r} after {expected.get('previous', [])}",
        )
    words = [fold(word) for word in scenario.get("not_the_users", [])]
    if words:
        listed = client.get(
            "/memories",
            params={"user_id": user, "kinds": "fact", "limit": 500, "include_superseded": "true"},
            timeout=SEARCH_TIMEOUT,
        ).json()["memories"]
        mine = [m for m in listed if m["subject_id"] is None and m["kind"] == "fact"]
        wrong = [m["fact"] for m in mine if any(word in fold(m["fact"]) for word in words)]
        report.add(scenario, "no one else's words as the user's", not wrong, f"stored as the user's: {wrong}")


def run(args: argparse.Namespace) -> dict[str, Any]:
    scenarios = json.loads((DATA / f"{args.set}.json").read_text(encoding="utf-8"))
    if args.only:
        scenarios = [s for s in scenarios if any(s["id"].startswith(prefix) for prefix in args.only)]
    report = Report()
    with ExitStack() as stack:
        workdir = workdir_in(stack, None, "beliefs-bench-")
        env = {"MEMORY_CORTEX_LLM__BACKEND": "rules", **dict(item.split("=", 1) for item in args.env)}
        daemon = Daemon(workdir / "beliefs.db", workdir / "daemon.log", env=env)
        stack.callback(daemon.stop)
        daemon.start()
        client = stack.enter_context(httpx.Client(base_url=daemon.url, timeout=SEARCH_TIMEOUT))
        wait_for_health(client, timeout_s=60)
        post_all(client, scenarios)
        for scenario in tqdm(scenarios, desc="asking", unit="scenario"):
            for question in scenario.get("questions", []):
                check_question(report, scenario, question, ask(client, scenario, question))
            check_facts(client, report, scenario)
    by_category: dict[str, list[Check]] = defaultdict(list)
    by_kind: dict[str, list[Check]] = defaultdict(list)
    for item in report.checks:
        by_category[item.category].append(item)
        by_kind[item.kind].append(item)

    def share(items: list[Check]) -> dict[str, Any]:
        passed = sum(item.passed for item in items)
        return {
            "checks": len(items),
            "passed": passed,
            "share": passed / len(items) if items else float("nan"),
        }

    failed = [item for item in report.checks if not item.passed]
    return {
        "revision": git_revision(),
        "set": args.set,
        "scenarios": len(scenarios),
        "categories": {
            category: share(by_category[category]) for category in CATEGORIES if by_category[category]
        },
        "checks": {kind: share(items) for kind, items in sorted(by_kind.items())},
        "overall": share(report.checks),
        "failed": [
            {"scenario": item.scenario, "category": item.category, "check": item.kind, "detail": item.detail}
            for item in failed
        ],
        "blocks": report.blocks if args.show else {},
        "show": args.show,
    }


def print_report(report: dict[str, Any]) -> None:
    if report["show"]:
        for item in report["failed"]:
            print(f"✗ [{item['category']}] {item['scenario']} — {item['check']}: {item['detail']}")
    rows = [[name, s["checks"], s["passed"], s["share"]] for name, s in report["categories"].items()]
    rows.append(["all", report["overall"]["checks"], report["overall"]["passed"], report["overall"]["share"]])
    print()
    print(
        format_table(
            ["category", "checks", "passed", "share"],
            rows,
            title=f"{report['set']}: {report['scenarios']} scenarios",
        )
    )
    print()
    print(
        format_table(
            ["check", "checks", "passed", "share"],
            [[k, s["checks"], s["passed"], s["share"]] for k, s in report["checks"].items()],
        )
    )
    below = [name for name, s in report["categories"].items() if s["share"] < TARGET]
    print(f"\ncategories below {TARGET}: {', '.join(below) or 'none'}  (revision {report['revision']})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--set",
        default="scenarios",
        choices=("scenarios", "scenarios-2", "scenarios-3", "scenarios-4", "heldout"),
        help="which scenarios",
    )
    parser.add_argument("--only", action="append", default=[], help="scenario id prefix (repeatable)")
    parser.add_argument("--env", action="append", default=[], help="MEMORY_CORTEX_…=value for the daemon")
    parser.add_argument("--show", action="store_true", help="print every failed check")
    parser.add_argument("--json", type=Path, help="write the report here")
    args = parser.parse_args(argv)
    return run_main("beliefs", args.json, lambda: run(args), print_report)


if __name__ == "__main__":
    sys.exit(main())

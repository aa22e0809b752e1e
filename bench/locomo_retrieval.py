"""Retrieval quality on LoCoMo: does ``/hybrid-search`` find the turns a question is about?

Every dialogue turn of the LoCoMo conversations is stored as one memory (``ref`` = its dia_id, one
user per conversation), then every question of categories 1-4 is asked through the real HTTP API in
each retrieval mode. A question scores recall@k = the share of its evidence turns found among the
``ref``s of the top k results. Category 5 (adversarial) has no evidence to find and is left out.

This measures retrieval only (no LLM, no answer grading), so it is cheap enough to run on every
change to search and comparable across modes: ``fts`` and ``vector`` run one retriever alone,
``hybrid`` is what clients get.

Usage::

    python bench/locomo_retrieval.py                       # own daemon on a temp database
    python bench/locomo_retrieval.py --limit-questions 60  # quick run
    python bench/locomo_retrieval.py --url http://127.0.0.1:8300 --json out/locomo.json
    python bench/locomo_retrieval.py --via ingest --context  # also what /context hands the agent

``--context`` asks every question once more through ``POST /context`` with the OpenClaw plugin's
defaults (500 tokens, 15 memories) and scores *context answer*: at least half of the gold answer's
words (stop words and the conversation's speaker names left out: every turn line names a speaker)
are in the block an agent would read, its dates read as people write them.

With ``--db PATH`` (own daemon) or ``--url`` the memories persist, and a rerun skips conversations
whose user already holds exactly their turns, so an interrupted ingest resumes where it stopped.

Data: LoCoMo (Maharana et al., ACL 2024), CC BY-NC 4.0 per the authors' dataset card; evaluation
only. See ``/work/shared/bench/locomo/README.md`` (or ``--data``) for the normalised format.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import numpy as np
from _harness import (
    REPO_ROOT,
    SEARCH_TIMEOUT,
    WRITE_TIMEOUT,
    BenchError,
    CpuWatch,
    Daemon,
    add_set_option,
    format_table,
    git_revision,
    percentile,
    run_main,
    settings_env,
    wait_for_health,
    wait_for_quiet,
)
from tqdm import tqdm

DEFAULT_DATA = REPO_ROOT / ".." / "shared" / "bench" / "locomo"
CATEGORY_NAMES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
MODES = ("hybrid", "fts", "vector")
SEARCH_LIMIT = 10
# The OpenClaw plugin's /context request (integrations/openclaw: maxTokens, maxFacts defaults).
CONTEXT_TOKENS = 500
CONTEXT_FACTS = 15
_ISO_DAY = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
RECALL_AT = (5, 10)
# LoCoMo writes session dates as "1:56 pm on 8 May, 2023"; the zone is unknown, so none is sent.
SESSION_DATE_FORMAT = "%I:%M %p on %d %B, %Y"
# The daemon logs this (INFO) when a search ran FTS-only because the query embedding failed or
# was slower than embeddings.query_timeout_s: such a query measures a different system.
FTS_ONLY_EVENT = "search without vectors"


@dataclass(frozen=True)
class Turn:
    """One dialogue turn, stored as one memory."""

    dia_id: str
    speaker: str
    text: str
    session: int
    session_date: str
    created_at: str | None  # ISO 8601, or None when the session date does not parse


@dataclass(frozen=True)
class Question:
    """One question with the evidence ids that match a turn of its conversation."""

    sample_id: str
    question: str
    category: int
    evidence: tuple[str, ...]
    answer: str = ""  # the gold answer, for answer@10 (words found in the results' text)


@dataclass
class Conversation:
    sample_id: str
    turns: list[Turn]
    questions: list[Question]


@dataclass
class LoadReport:
    """What loading dropped, so that the printed n can be checked against the data's README."""

    questions_in_categories: int = 0
    skipped_no_evidence: list[str] = field(default_factory=list)  # "conv-26: question…"
    ignored_evidence_ids: list[str] = field(default_factory=list)  # "conv-42: D"


def parse_session_date(text: str) -> str | None:
    """``"1:56 pm on 8 May, 2023"`` → ``"2023-05-08T13:56:00"``; None when it does not parse."""
    try:
        return datetime.strptime(text.strip(), SESSION_DATE_FORMAT).isoformat()
    except ValueError:
        return None


def split_evidence(entries: Sequence[str]) -> list[str]:
    """Evidence as a flat list of ids: upstream has ``"D8:6; D9:17"`` as one entry."""
    return [part.strip() for entry in entries for part in str(entry).split(";") if part.strip()]


def load_conversations(data_dir: Path) -> tuple[list[Conversation], LoadReport]:
    """Read every ``conv-*.json``; keep questions of categories 1-4 that have valid evidence."""
    files = sorted(data_dir.glob("conv-*.json"))
    if not files:
        raise BenchError(f"no conv-*.json in {data_dir}")
    report = LoadReport()
    conversations = []
    for path in tqdm(files, desc="loading conversations", unit="file"):
        data = json.loads(path.read_text(encoding="utf-8"))
        sample_id = data["sample_id"]
        turns = []
        for session in data["sessions"]:
            date = session.get("date_time") or ""
            created_at = parse_session_date(date)
            turns.extend(
                Turn(
                    dia_id=turn["dia_id"],
                    speaker=turn["speaker"],
                    text=turn["text"],
                    session=int(session["session"]),
                    session_date=date,
                    created_at=created_at,
                )
                for turn in session["turns"]
            )
        known = {turn.dia_id for turn in turns}
        questions = []
        for item in data["qa"]:
            if item["category"] not in CATEGORY_NAMES:
                continue
            report.questions_in_categories += 1
            evidence = []
            for dia_id in split_evidence(item.get("evidence") or []):
                if dia_id in known:
                    evidence.append(dia_id)
                else:
                    report.ignored_evidence_ids.append(f"{sample_id}: {dia_id!r}")
            if not evidence:
                report.skipped_no_evidence.append(f"{sample_id}: {item['question']}")
                continue
            questions.append(
                Question(
                    sample_id,
                    item["question"],
                    int(item["category"]),
                    tuple(dict.fromkeys(evidence)),
                    str(item.get("answer", "")),
                )
            )
        conversations.append(Conversation(sample_id, turns, questions))
    return conversations, report


def memory_payload(turn: Turn, user_id: str) -> dict[str, Any]:
    """The ``POST /memories`` item for one turn."""
    item: dict[str, Any] = {
        "fact": f"{turn.speaker}: {turn.text}",
        "ref": turn.dia_id,
        "user_id": user_id,
        "topic": "",
        # The session a turn was said in, as a client storing turns knows it: the daemon embeds
        # each turn after the ones before it in that session (embeddings.session_context).
        "source_session": f"session-{turn.session}",
        "metadata": {"session": turn.session, "session_date": turn.session_date},
    }
    if turn.created_at is not None:
        item["created_at"] = turn.created_at
    return item


def batches(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def existing_counts(client: httpx.Client) -> dict[str, int]:
    """Live memories per user already in the daemon (for resuming and for refusing mixed data)."""
    response = client.get("/stats", timeout=SEARCH_TIMEOUT)
    response.raise_for_status()
    return {str(k): int(v) for k, v in response.json().get("per_user", {}).items()}


@dataclass
class IngestResult:
    written: int = 0
    seconds: float = 0.0
    actions: Counter[str] = field(default_factory=Counter)  # "created", "merged", … per the daemon


def ingest(
    client: httpx.Client, conversations: list[Conversation], batch_size: int, *, dedup: bool
) -> IngestResult:
    """Store every turn, one memory each; returns what was written now and how long it took.

    ``dedup=False`` (``?dedup=false``) keeps one memory per turn: with the daemon's near-duplicate
    merging on, a short turn ("Thanks, Mel!") can be folded into an earlier one and its dia_id,
    which a question may cite as evidence, disappears. The per-action counts show how many.

    A conversation whose user already holds exactly its turn count was stored by an earlier run and
    is skipped; any other non-zero count means foreign or partial data, which would skew recall.
    """
    counts = existing_counts(client)
    pending = []
    for conv in conversations:
        have = counts.get(conv.sample_id, 0)
        if have == len(conv.turns):
            tqdm.write(f"{conv.sample_id}: {have} memories already stored, not ingesting again")
        elif have == 0:
            pending.append(conv)
        else:
            raise BenchError(
                f"user {conv.sample_id!r} already has {have} memories (expected 0 or {len(conv.turns)}):"
                " use a fresh database"
            )
    result = IngestResult()
    params = {"dedup": "true" if dedup else "false"}
    started = time.perf_counter()
    with tqdm(total=sum(len(conv.turns) for conv in pending), desc="storing turns", unit="mem") as progress:
        for conv in pending:
            for chunk in batches(conv.turns, batch_size):
                body = {"memories": [memory_payload(turn, conv.sample_id) for turn in chunk]}
                response = client.post("/memories", params=params, json=body, timeout=WRITE_TIMEOUT)
                if response.status_code != 201:
                    raise BenchError(f"POST /memories answered {response.status_code}: {response.text[:500]}")
                stored = response.json()["memories"]
                unembedded = sum(1 for memory in stored if not memory["embedded"])
                if unembedded:
                    raise BenchError(f"{unembedded} memories stored without a vector: is the embedder up?")
                result.actions.update(str(memory.get("action", "created")) for memory in stored)
                result.written += len(chunk)
                progress.update(len(chunk))
    result.seconds = time.perf_counter() - started
    return result


def first_sessions(conv: Conversation, last: int) -> Conversation:
    """The conversation up to session ``last``, with only the questions all of whose evidence is
    in those sessions (what a user who has talked that long may ask)."""

    def session_of(dia_id: str) -> int:
        return int(dia_id.split(":")[0].lstrip("D"))

    return Conversation(
        conv.sample_id,
        [turn for turn in conv.turns if turn.session <= last],
        [q for q in conv.questions if all(session_of(e) <= last for e in q.evidence)],
    )


def ingest_sessions(client: httpx.Client, conversations: list[Conversation]) -> IngestResult:
    """Post every session through ``POST /ingest`` as the OpenClaw plugin does, and wait until the
    daemon has stored and extracted them all.

    One request per session with the whole session (what the plugin's flush at a session's end
    sends; its earlier per-turn posts carry a prefix of it, which the watermark reduces to the
    same turns). The first speaker of a conversation posts as ``user``, the other as
    ``assistant``; each message carries the speaker as ``name`` and its dia_id as ``id``; the
    session date is the request's ``occurred_at``. Needs a fresh database (facts and turns of an
    earlier run would mix with these).
    """
    if any(existing_counts(client).get(conv.sample_id, 0) for conv in conversations):
        raise BenchError("--via ingest needs a fresh database: these users already hold memories")
    result = IngestResult()
    started = time.perf_counter()
    sessions = [(conv, n) for conv in conversations for n in sorted({turn.session for turn in conv.turns})]
    for conv, number in tqdm(sessions, desc="posting sessions", unit="session"):
        turns = [turn for turn in conv.turns if turn.session == number]
        first_speaker = conv.turns[0].speaker
        body: dict[str, Any] = {
            "messages": [
                {
                    "role": "user" if turn.speaker == first_speaker else "assistant",
                    "content": turn.text,
                    "name": turn.speaker,
                    "id": turn.dia_id,
                }
                for turn in turns
            ],
            "session_id": f"session-{number}",
            "user_id": conv.sample_id,
            "debounce": False,
        }
        if turns[0].created_at is not None:
            body["occurred_at"] = turns[0].created_at
        response = client.post("/ingest", json=body, timeout=WRITE_TIMEOUT)
        if response.status_code != 202:
            raise BenchError(f"POST /ingest answered {response.status_code}: {response.text[:500]}")
        result.written += len(turns)
    with tqdm(desc="waiting for the ingest queue", unit="job") as progress:
        while True:
            queue = client.get("/stats", timeout=SEARCH_TIMEOUT).json()["ingest"]
            progress.n = queue["done"]
            progress.refresh()
            if queue["pending"] == 0 and queue["running"] == 0:
                break
            time.sleep(0.5)
    if queue["failed"]:
        raise BenchError(f"{queue['failed']} ingest jobs failed: see GET /ingest/jobs?status=failed")
    result.seconds = time.perf_counter() - started
    for conv in conversations:
        listed = client.get(
            "/memories", params={"user_id": conv.sample_id, "limit": 1000}, timeout=SEARCH_TIMEOUT
        )
        result.actions.update(str(memory.get("kind", "fact")) for memory in listed.json()["memories"])
    return result


@dataclass(frozen=True)
class Answer:
    """What one search returned for one question, and how long the HTTP round trip took."""

    question: Question
    refs: tuple[str | None, ...]
    latency_ms: float
    texts: tuple[str, ...] = ()  # each result's fact, with the date it is about

    def recall(self, k: int) -> float:
        found = set(self.refs[:k])
        return sum(1 for dia_id in self.question.evidence if dia_id in found) / len(self.question.evidence)

    def answer_found(self, k: int) -> float:
        """1.0 when at least half of the gold answer's words are in the top ``k`` results' text
        (facts and turns alike: this counts what a client could read, not which id it came from);
        nan when the answer has no word to look for."""
        wanted = answer_words(self.question.answer)
        if not wanted:
            return float("nan")
        seen = set(answer_words(" ".join(self.texts[:k])))
        return 1.0 if sum(word in seen for word in wanted) * 2 >= len(wanted) else 0.0


_STOPWORDS = frozenset(
    "a an the of to in on at and or for with by is was are were be her his their its".split()
)


def answer_words(text: str) -> list[str]:
    """The words of a text that carry meaning, lower case (dates' month names and years included)."""
    return [w for w in re.findall(r"[^\W_]+", text.casefold()) if w not in _STOPWORDS]


def ask(client: httpx.Client, question: Question, mode: str) -> Answer:
    body = {"query": question.question, "user_id": question.sample_id, "limit": SEARCH_LIMIT, "mode": mode}
    started = time.perf_counter()
    response = client.post("/hybrid-search", json=body, timeout=SEARCH_TIMEOUT)
    latency_ms = (time.perf_counter() - started) * 1000
    if response.status_code != 200:
        raise BenchError(
            f"POST /hybrid-search ({mode}) answered {response.status_code}: {response.text[:300]}"
        )
    results = response.json()["results"]
    refs = tuple(item.get("ref") for item in results)
    texts = tuple(f"{item['fact']} ({_spoken_date(item)})" for item in results)
    return Answer(question, refs, latency_ms, texts)


def _spoken_date(item: dict[str, Any]) -> str:
    """The date a result is about, as people write it ("7 May 2023"): /context shows it with each turn."""
    moment = item.get("occurred_at") or item.get("created_at") or ""
    try:
        day = datetime.fromisoformat(moment.replace("Z", "+00:00"))
    except ValueError:
        return ""
    return f"{day.day} {day.strftime('%B')} {day.year}"


@dataclass(frozen=True)
class ContextAnswer:
    """What ``/context`` gave for one question: whether the answer is in it, its memory lines, time."""

    question: Question
    found: float  # 1.0, 0.0, or nan when the answer has no word to look for
    lines: int
    latency_ms: float
    block: str = ""


def context_found(block: str, answer: str, speakers: set[str]) -> float:
    """1.0 when at least half of ``answer``'s words (stop words and ``speakers`` left out) are in
    ``block``, each ISO date of it also read as "8 May 2023"; nan when no word is left to look for."""
    wanted = [w for w in answer_words(answer) if w not in speakers]
    if not wanted:
        return float("nan")

    def spoken(match: re.Match[str]) -> str:
        try:
            day = datetime(int(match[1]), int(match[2]), int(match[3]))
        except ValueError:
            return match[0]
        return f"{match[0]} {day.day} {day.strftime('%B')} {day.year}"

    seen = set(answer_words(_ISO_DAY.sub(spoken, block)))
    return 1.0 if sum(word in seen for word in wanted) * 2 >= len(wanted) else 0.0


def ask_context(client: httpx.Client, question: Question, speakers: set[str]) -> ContextAnswer:
    body = {
        "query": question.question,
        "user_id": question.sample_id,
        "max_tokens": CONTEXT_TOKENS,
        "max_facts": CONTEXT_FACTS,
    }
    started = time.perf_counter()
    response = client.post("/context", json=body, timeout=SEARCH_TIMEOUT)
    latency_ms = (time.perf_counter() - started) * 1000
    if response.status_code != 200:
        raise BenchError(f"POST /context answered {response.status_code}: {response.text[:300]}")
    block = response.json()["context"]
    lines = sum(1 for line in block.splitlines() if line.startswith("- "))
    return ContextAnswer(question, context_found(block, question.answer, speakers), lines, latency_ms, block)


def context_report(answers: list[ContextAnswer]) -> dict[str, dict[str, Any]]:
    """Per category and ``overall``: n, the share of answers in the block, mean lines, latency."""

    def summary(group: list[ContextAnswer]) -> dict[str, Any]:
        found = [a.found for a in group if not np.isnan(a.found)]
        return {
            "n": len(group),
            "context_answer": float(np.mean(found)) if found else float("nan"),
            "lines": float(np.mean([a.lines for a in group])) if group else float("nan"),
            "p50_ms": percentile([a.latency_ms for a in group], 50),
            "p95_ms": percentile([a.latency_ms for a in group], 95),
        }

    report = {
        f"{category} {name}": summary([a for a in answers if a.question.category == category])
        for category, name in CATEGORY_NAMES.items()
    }
    report["overall"] = summary(answers)
    return report


def select_questions(questions: list[Question], limit: int | None) -> list[Question]:
    """All questions, or ``limit`` of them spread evenly (every conversation and category appears)."""
    if limit is None or limit >= len(questions):
        return questions
    picks = np.unique(np.linspace(0, len(questions) - 1, num=max(limit, 1)).round().astype(int))
    return [questions[i] for i in picks]


def summarise(answers: list[Answer]) -> dict[str, Any]:
    """n, mean recall@k (over questions) and latency percentiles of a group of answers."""
    latencies = [a.latency_ms for a in answers]
    summary: dict[str, Any] = {"n": len(answers)}
    for k in RECALL_AT:
        summary[f"recall@{k}"] = float(np.mean([a.recall(k) for a in answers])) if answers else float("nan")
    found = [a.answer_found(10) for a in answers]
    found = [value for value in found if not np.isnan(value)]
    summary["answer@10"] = float(np.mean(found)) if found else float("nan")
    summary["p50_ms"] = percentile(latencies, 50)
    summary["p95_ms"] = percentile(latencies, 95)
    return summary


def mode_report(answers: list[Answer]) -> dict[str, dict[str, Any]]:
    """Per category (by name) and ``overall``."""
    report = {}
    for category, name in CATEGORY_NAMES.items():
        report[f"{category} {name}"] = summarise([a for a in answers if a.question.category == category])
    report["overall"] = summarise(answers)
    return report


# The retrieval methods over plain fusion, each as the settings that turn it off (``--methods``).
# Session context (``embeddings.session_context``) changes what is stored: compare it with a
# database built under ``--set embeddings.session_context=0`` instead.
METHODS_OFF: dict[str, tuple[str, ...]] = {
    "feedback": ("search.prf_docs=0",),
    "time-aware": ("search.time_boost=0",),
    "subject boost": ("search.subject_boost=0",),
    "session followers": ("search.follower_weight=0",),
    "speaker query": ("search.speaker_query=0",),
    "length prior": ("search.length_prior=0",),
    "session support": ("search.session_support=0",),
}


def method_variants() -> list[tuple[str, tuple[str, ...]]]:
    """``(label, settings)``: the default, plain fusion (every method off), each method alone on
    plain fusion, and the default without each method."""
    all_off = tuple(setting for off in METHODS_OFF.values() for setting in off)
    variants: list[tuple[str, tuple[str, ...]]] = [("default", ()), ("plain fusion", all_off)]
    for name, off in METHODS_OFF.items():
        variants.append((f"only {name}", tuple(setting for setting in all_off if setting not in off)))
    variants += [(f"all but {name}", off) for name, off in METHODS_OFF.items()]
    return variants


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="folder with conv-*.json")
    parser.add_argument("--url", help="use this running daemon instead of starting one")
    parser.add_argument("--db", type=Path, help="own daemon: keep the database here (default: temp dir)")
    parser.add_argument("--modes", default=",".join(MODES), help="comma-separated: hybrid,fts,vector")
    parser.add_argument("--limit-questions", type=int, help="ask only N questions (spread evenly)")
    parser.add_argument("--batch-size", type=int, default=64, help="memories per POST /memories")
    parser.add_argument(
        "--query-timeout-s",
        type=float,
        help="own daemon: embeddings.query_timeout_s (default: the daemon's config). On a busy machine"
        " the query embedding can miss the default and the search silently goes FTS-only; a larger"
        " value measures the retrievers instead of the timeout",
    )
    add_set_option(
        parser,
        "own daemon: a config setting (repeatable), passed as its MEMORY_CORTEX_SECTION__KEY variable,"
        " e.g. --set search.time_boost=0.2",
    )
    parser.add_argument(
        "--quiet-wait",
        type=float,
        default=60.0,
        help="before each mode, wait up to this many seconds for other processes to leave the CPUs"
        " alone (0: do not wait); what they used meanwhile is reported either way",
    )
    parser.add_argument(
        "--dedup",
        action="store_true",
        help="store with the daemon's near-duplicate merging on (default: ?dedup=false, one memory per turn)",
    )
    parser.add_argument(
        "--methods",
        action="store_true",
        help="own daemon: then ask every question in hybrid mode once per retrieval method variant (each"
        " method alone over plain fusion, the default without each), a daemon per variant on the same data",
    )
    parser.add_argument(
        "--max-session",
        type=int,
        help="store only each conversation's sessions up to this number and ask only the questions"
        " answerable from them (e.g. 16: what a user who has talked that long may ask)",
    )
    parser.add_argument(
        "--via",
        choices=("memories", "ingest"),
        default="memories",
        help="how the conversations reach the daemon: each turn as a memory through POST /memories"
        " (default), or each session through POST /ingest as the OpenClaw plugin sends it (the turns"
        " are then stored by the daemon, with the facts its extractor finds)",
    )
    parser.add_argument(
        "--context",
        action="store_true",
        help="also ask every question through POST /context with the plugin's defaults and score"
        " whether the answer is in the block (see the module's docstring)",
    )
    parser.add_argument("--json", type=Path, help="also write the numbers to this file")
    args = parser.parse_args(argv)
    modes = [mode.strip() for mode in args.modes.split(",") if mode.strip()]
    unknown = set(modes) - set(MODES)
    if unknown or not modes:
        parser.error(f"--modes: unknown {sorted(unknown)}; choose from {', '.join(MODES)}")
    args.modes = modes
    if args.url and (args.db or args.query_timeout_s is not None or args.set or args.methods):
        parser.error(
            "--db, --query-timeout-s, --set and --methods apply to the daemon this script starts; not with --url"
        )
    try:
        args.settings_env = settings_env(args.set)
    except ValueError as exc:
        parser.error(str(exc))
    if not 1 <= args.batch_size <= 1000:
        parser.error("--batch-size must be 1…1000 (the daemon's batch limit)")
    return args


def run(args: argparse.Namespace) -> dict[str, Any]:
    conversations, load_report = load_conversations(args.data.resolve())
    if args.max_session is not None:
        conversations = [first_sessions(conv, args.max_session) for conv in conversations]
    all_questions = [q for conv in conversations for q in conv.questions]
    questions = select_questions(all_questions, args.limit_questions)
    turns = sum(len(conv.turns) for conv in conversations)
    print(
        f"{len(conversations)} conversations, {turns} turns; {load_report.questions_in_categories} questions"
        f" in categories 1-4, {len(load_report.skipped_no_evidence)} skipped (no evidence id matches a"
        f" turn), {len(load_report.ignored_evidence_ids)} evidence ids ignored"
        f" ({', '.join(load_report.ignored_evidence_ids) or 'none'}); asking {len(questions)}"
    )

    with ExitStack() as stack:
        daemon: Daemon | None = None
        startup_s: float | None = None
        if args.url:
            url = args.url.rstrip("/")
        else:
            workdir = Path(tempfile.mkdtemp(prefix="locomo-bench-"))
            stack.callback(shutil.rmtree, workdir, ignore_errors=True)
            db_path = args.db.resolve() if args.db else workdir / "bench.db"
            env = dict(args.settings_env)
            if args.query_timeout_s is not None:
                env["MEMORY_CORTEX_EMBEDDINGS__QUERY_TIMEOUT_S"] = str(args.query_timeout_s)
            daemon = Daemon(db_path, workdir / "daemon.log", env=env)
            print(f"starting daemon on {daemon.url} (db {db_path}) …", flush=True)
            stack.callback(daemon.stop)  # registered before start: stopped even if start is interrupted
            startup_s = daemon.start()
            url = daemon.url
            print(f"daemon answered /health after {startup_s:.1f}s")
        client = stack.enter_context(httpx.Client(base_url=url, timeout=SEARCH_TIMEOUT))
        wait_for_health(client, timeout_s=60)

        if args.via == "ingest":
            stored = ingest_sessions(client, conversations)
            kinds = ", ".join(f"{name} {count}" for name, count in sorted(stored.actions.items()))
            print(
                f"posted {stored.written} turns through /ingest; stored after {stored.seconds:.1f}s: {kinds}"
            )
        else:
            stored = ingest(client, conversations, args.batch_size, dedup=args.dedup)
        if stored.written and args.via == "memories":
            rate = stored.written / stored.seconds
            actions = ", ".join(f"{name} {count}" for name, count in sorted(stored.actions.items()))
            print(
                f"stored {stored.written} turns in {stored.seconds:.1f}s ({rate:.0f}/s, embedding included;"
                f" dedup {'on' if args.dedup else 'off'}: {actions})"
            )

        results: dict[str, Any] = {}
        per_question: dict[str, list[dict[str, Any]]] = {}
        for mode in args.modes:
            results[mode], per_question[mode] = ask_all(client, daemon, questions, mode, args.quiet_wait)

        context: dict[str, Any] = {}
        if args.context:
            speakers = {
                conv.sample_id: {w for turn in conv.turns for w in answer_words(turn.speaker)}
                for conv in conversations
            }
            answered = [
                ask_context(client, q, speakers[q.sample_id])
                for q in tqdm(questions, desc="asking (/context)", unit="q")
            ]
            context = context_report(answered)
            per_question["context"] = [
                {
                    "question": a.question.question,
                    "answer": a.question.answer,
                    "found": a.found,
                    "block": a.block,
                }
                for a in answered
            ]

        methods: dict[str, Any] = {}
        if args.methods:
            assert daemon is not None
            daemon.stop()  # one daemon at a time: the variants are timed too
            for number, (label, settings) in enumerate(
                tqdm(method_variants(), desc="methods", unit="variant")
            ):
                variant = Daemon(
                    db_path, workdir / f"daemon-method-{number}.log", env={**env, **settings_env(settings)}
                )
                stack.callback(variant.stop)
                variant.start()
                with httpx.Client(base_url=variant.url, timeout=SEARCH_TIMEOUT) as variant_client:
                    methods[label], _ = ask_all(variant_client, variant, questions, "hybrid", args.quiet_wait)
                methods[label]["settings"] = list(settings)
                variant.stop()

    return {
        "revision": git_revision(),
        "data": str(args.data.resolve()),
        "url": args.url,
        "query_timeout_s": args.query_timeout_s,
        "settings": list(args.set),
        "conversations": len(conversations),
        "memories": turns,
        "questions_asked": len(questions),
        "questions_skipped_no_evidence": load_report.skipped_no_evidence,
        "evidence_ids_ignored": load_report.ignored_evidence_ids,
        "search_limit": SEARCH_LIMIT,
        "daemon_startup_s": startup_s,
        "dedup": args.dedup,
        "via": args.via,
        "ingested_now": stored.written,
        "ingest_s": round(stored.seconds, 1) if stored.written else None,
        "ingest_actions": dict(stored.actions),
        "modes": results,
        "context": context,
        "methods": methods,
        "per_question": per_question,
    }


def ask_all(
    client: httpx.Client, daemon: Daemon | None, questions: list[Question], mode: str, quiet_wait: float
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Every question in ``mode``: the recall and latency report, and each question's result list
    (kept for the JSON only: it lets a fusion or ranking idea be tried offline on real lists)."""
    ours = [os.getpid(), *([daemon.pid] if daemon else [])]
    wait_for_quiet(ours, max_wait_s=quiet_wait)
    log_mark = daemon.log_position() if daemon else 0
    with CpuWatch(ours) as cpu:
        answers = [ask(client, q, mode) for q in tqdm(questions, desc=f"asking ({mode})", unit="q")]
    report = mode_report(answers)
    report["other_processes_cores"] = round(cpu.other_cores, 2)
    # None: unknown (a daemon we did not start; its log is not ours to read).
    report["fts_only_fallbacks"] = len(daemon.log_events(FTS_ONLY_EVENT, since=log_mark)) if daemon else None
    listed = [
        {
            "sample_id": a.question.sample_id,
            "question": a.question.question,
            "category": a.question.category,
            "evidence": list(a.question.evidence),
            "refs": list(a.refs),
            "latency_ms": round(a.latency_ms, 2),
        }
        for a in answers
    ]
    return report, listed


def print_report(report: dict[str, Any]) -> None:
    headers = ["category", "n", "recall@5", "recall@10", "answer@10", "p50 ms", "p95 ms"]
    for mode, rows in report["modes"].items():
        table_rows = [
            [name, s["n"], s["recall@5"], s["recall@10"], s["answer@10"], s["p50_ms"], s["p95_ms"]]
            for name, s in rows.items()
            if isinstance(s, dict)
        ]
        print()
        print(format_table(headers, table_rows, title=f"mode = {mode}  (limit {report['search_limit']})"))
    summary = []
    for mode, rows in report["modes"].items():
        overall = rows["overall"]
        fallbacks = rows["fts_only_fallbacks"]
        summary.append(
            [
                mode,
                overall["n"],
                overall["recall@5"],
                overall["recall@10"],
                overall["answer@10"],
                overall["p50_ms"],
                overall["p95_ms"],
                "n/a" if fallbacks is None else str(fallbacks),
                rows["other_processes_cores"],
            ]
        )
    print()
    print(
        format_table(
            [
                "mode",
                "n",
                "r@5",
                "r@10",
                "answer@10",
                "p50 ms",
                "p95 ms",
                "FTS-only fallbacks",
                "other procs (cores)",
            ],
            summary,
            title="summary (recall = mean over questions of found evidence / evidence; latency = HTTP"
            " round trip, client side)",
        )
    )
    timeout = report["query_timeout_s"]
    if report.get("settings"):
        print(f"settings: {', '.join(report['settings'])}")
    print(
        f"revision {report['revision']}; query_timeout_s = {'daemon config' if timeout is None else timeout};"
        f" dedup on write {'on' if report['dedup'] else 'off'} ({report['ingest_actions'] or 'reused data'});"
        " FTS-only fallbacks = searches the daemon logged as run without the query vector (timeout or"
        " embedder error): in 'vector' mode those return nothing. 'other procs' = CPU cores that other"
        " processes on this machine used while the mode ran (2 cores here)."
    )
    if report.get("context"):
        rows = [
            [name, c["n"], c["context_answer"], c["lines"], c["p50_ms"], c["p95_ms"]]
            for name, c in report["context"].items()
        ]
        print()
        print(
            format_table(
                ["category", "n", "context answer", "lines", "p50 ms", "p95 ms"],
                rows,
                title=f"POST /context ({CONTEXT_TOKENS} tokens, {CONTEXT_FACTS} memories): the answer in the block",
            )
        )
    if report.get("methods"):
        print_methods(report["methods"])
    skipped = report["questions_skipped_no_evidence"]
    print(f"\nskipped questions (no valid evidence): {len(skipped)}")
    for line in skipped:
        print(f"  {line}")


def print_methods(methods: dict[str, Any]) -> None:
    """One row per method variant: overall and per-category recall, HTTP latency."""
    categories = [f"{c} {n}" for c, n in CATEGORY_NAMES.items()]
    headers = ["variant", "r@5", "r@10", *(f"{name.split()[1]} r@5/r@10" for name in categories)]
    headers += ["p50 ms", "p95 ms", "FTS-only", "other procs"]
    rows = []
    for label, variant in methods.items():
        overall = variant["overall"]
        rows.append(
            [
                label,
                overall["recall@5"],
                overall["recall@10"],
                *(f"{variant[c]['recall@5']:.3f}/{variant[c]['recall@10']:.3f}" for c in categories),
                overall["p50_ms"],
                overall["p95_ms"],
                str(variant["fts_only_fallbacks"]),
                variant["other_processes_cores"],
            ]
        )
    print()
    print(
        format_table(
            headers,
            rows,
            title="retrieval methods, hybrid over HTTP (a daemon per variant, same data): each alone over"
            " plain fusion, the default without each",
        )
    )


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    return run_main(
        "locomo_retrieval",
        args.json,
        lambda: run(args),
        print_report,
        interrupted="interrupted; daemon stopped",
    )


if __name__ == "__main__":
    sys.exit(main())

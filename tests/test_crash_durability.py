"""kill -9 at random moments under concurrent traffic: every 2xx survives, nothing is half-applied.

The harness (:class:`CrashHarness`) starts the real daemon as a subprocess, drives it from several
threads at once (``POST /memories`` single and batched, with and without dedup, ``PATCH``,
``DELETE``, ``POST /ingest`` with "remember that…" messages, searches), SIGKILLs it at a moment
drawn from a seeded RNG, restarts it, and checks:

- every request answered 2xx is in the file: a created row with the acknowledged content, a PATCH
  unless a later acknowledged write changed the row again, a DELETE gone, every /ingest in the
  journal and, in the end, extracted exactly once;
- a request cut off by the kill is "maybe": either wholly applied or not at all. Each row must be
  exactly one of the states its requests can produce, a batch is all there or all absent, and no
  row exists that no request created. After each restart the file settles every "maybe";
- the daemon shows what the file holds (``GET /memories``, ``/stats``), and its rebuilt vector
  index answers a ``mode: vector`` search with exactly the top cosines that numpy computes from
  the BLOBs with the same MiniLM query vector;
- ``PRAGMA integrity_check`` is ok on copies of crash images along the way and, read-only, on the
  file after the final stop; every stored vector is MiniLM's embedding of its row's text.

Why the daemon embeds over HTTP here: production runs ``embeddings.backend: http`` (README), and
with the real MiniLM served from this process a restart takes ~1 s instead of ~10 s of torch
start-up, so twenty-odd kills fit in about two minutes. The final start uses the in-process model,
the default, so the index is also rebuilt and queried the way a default install does it.
"""

from __future__ import annotations

import asyncio
import json
import random
import shutil
import sqlite3
import threading
import time
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from memory_cortex.models.embedders import SentenceTransformerEmbedder
from memory_cortex.services.ingest import session_key
from memory_cortex.store.db import apply_migrations
from memory_cortex.vectormath import from_blob, normalize
from tests.processes import Daemon, Outcome, Reply, embedding_server, send

MODEL = "all-MiniLM-L6-v2"
SEED = 20260611
TRAFFIC_KILLS = 20  # kills while requests are in flight
STARTUP_KILLS = 3  # extra kills before the daemon answers /health (migrations, index load, requeue)

WORDS = (
    "amber basalt cobalt dune ember fjord glacier harbor indigo juniper kestrel lagoon meadow nebula "
    "orchid prairie quartz raven saffron tundra umber violet willow yarrow zephyr anchor beacon canyon "
    "delta estuary falcon granite heron islet jasmine kelp lantern marble nutmeg oasis pebble quill reef "
    "sequoia thistle walnut zinnia acorn bramble cedar dahlia egret fennel gorse hazel iris jackal koala "
    "lichen mango nettle otter papaya quokka radish sorrel tapir urchin vole wombat yak zebra abacus "
    "bagpipe cello drum euphonium fiddle gong harp kazoo lute mandolin oboe piano sitar tuba viola "
    "bakery chapel depot forge garage hangar kiosk library mill observatory pantry quarry refinery "
    "stable tavern vault warehouse workshop arch bridge citadel dome gate hall keep lodge tower"
).split()
TOPICS = ("garden", "music", "travel", "work", "food", "family", "health", "books", "sport", "home")
CATEGORIES = ("fact", "preference", "project_state", "skill")  # never "correction": no supersession
NOUNS = ("locker", "bike", "boat", "guitar", "laptop", "garden shed", "camera", "telescope")


# -- talking to the daemon ------------------------------------------------------------------------
# -- what the file may hold -------------------------------------------------------------------------
@dataclass(frozen=True)
class RowState:
    """The columns a request can set, as the API and the file show them."""

    user_id: str
    topic: str
    fact: str
    importance: int
    category: str
    metadata: str  # canonical JSON
    superseded_by: int | None = None

    @classmethod
    def of_request(cls, item: dict[str, Any]) -> RowState:
        return cls(
            item["user_id"],
            item["topic"],
            item["fact"],
            item["importance"],
            item["category"],
            canonical(item["metadata"]),
        )

    @classmethod
    def of_api(cls, body: dict[str, Any]) -> RowState:
        return cls(
            body["user_id"],
            body["topic"],
            body["fact"],
            body["importance"],
            body["category"],
            canonical(body["metadata"]),
            body["superseded_by"],
        )

    @classmethod
    def of_db(cls, row: sqlite3.Row) -> RowState:
        return cls(
            row["user_id"],
            row["topic"],
            row["fact"],
            row["importance"],
            row["category"],
            canonical(json.loads(row["metadata"])),
            row["superseded_by"],
        )

    def patched(self, changes: dict[str, Any]) -> RowState:
        values = {k: canonical(v) if k == "metadata" else v for k, v in changes.items()}
        return replace(self, **values)

    def merged(self, newer: RowState) -> RowState:
        """What a dedup merge does (store.memories.merge_into): newer wording, higher importance."""
        return replace(
            self,
            fact=newer.fact,
            topic=newer.topic or self.topic,
            importance=max(self.importance, newer.importance),
        )


def canonical(metadata: dict[str, Any]) -> str:
    return json.dumps(metadata, sort_keys=True)


class UserLedger:
    """Every request sent for one user's memories and what it allows the file to hold.

    ``possible[id]`` is the set of states the row may be in (``None``: absent): an acknowledged
    write leaves exactly one, an unacknowledged one adds its effect as an alternative. Creates
    whose id is unknown (cut off by the kill) wait in ``unconfirmed`` as all-or-none groups.
    :meth:`reconcile` compares the file with all that and settles every "maybe".
    """

    def __init__(self, user_id: str) -> None:
        self.user_id = user_id
        self.possible: dict[int, set[RowState | None]] = {}
        self.unconfirmed: list[list[RowState]] = []
        self.history: dict[int, list[str]] = {}
        self.outcomes: Counter[str] = Counter()
        self.problems: list[str] = []

    # -- recording ---------------------------------------------------------------------------
    def _count(self, what: str, reply: Reply, allowed_4xx: tuple[int, ...] = ()) -> None:
        self.outcomes[f"{what} {reply.outcome.value}"] += 1
        unexpected_4xx = reply.outcome is Outcome.REJECTED and reply.status not in allowed_4xx
        if unexpected_4xx or (reply.status is not None and reply.status >= 500):
            self.problems.append(f"{self.user_id}: {what} answered {reply.status}: {reply.body}")

    def created(self, items: list[RowState], reply: Reply, *, merge_target: int | None = None) -> None:
        """A POST /memories of ``items``; ``merge_target``: a dedup re-post of that row's text."""
        self._count("create", reply)
        if reply.outcome is Outcome.ACKED:
            answered = reply.body.get("memories", [reply.body])
            for item, body in zip(items, answered, strict=True):
                state = RowState.of_api(body)
                if body["action"] == "created" and merge_target is not None:
                    self.problems.append(
                        f"{self.user_id}: dedup of live memory {merge_target}'s exact text created {body['id']}"
                    )
                if body["action"] == "created" and state != item:
                    self.problems.append(f"{self.user_id}: created {body['id']} as {state}, sent {item}")
                self._settle(body["id"], state, f"{body['action']} (acked)")
        elif reply.outcome is Outcome.MAYBE:
            if merge_target is not None:
                (item,) = items
                self._alternative(merge_target, lambda s: s.merged(item), "dedup merge (maybe)")
            else:
                self.unconfirmed.append(items)

    def patched(self, memory_id: int, changes: dict[str, Any], reply: Reply) -> None:
        self._count("patch", reply, allowed_4xx=(404,))
        if reply.outcome is Outcome.ACKED:
            state = RowState.of_api(reply.body)
            wanted = {k: canonical(v) if k == "metadata" else v for k, v in changes.items()}
            if any(getattr(state, k) != v for k, v in wanted.items()):
                self.problems.append(f"{self.user_id}: PATCH {memory_id} {changes} answered {state}")
            self._settle(memory_id, state, f"patch {sorted(changes)} (acked)")
        elif reply.outcome is Outcome.MAYBE:
            self._alternative(memory_id, lambda s: s.patched(changes), f"patch {sorted(changes)} (maybe)")
        elif reply.outcome is Outcome.REJECTED and reply.status == 404:
            self._absent_confirmed(memory_id, "PATCH")

    def deleted(self, memory_id: int, reply: Reply) -> None:
        self._count("delete", reply, allowed_4xx=(404,))
        if reply.outcome is Outcome.ACKED:
            self._settle(memory_id, None, "delete (acked)")
            # ON DELETE SET NULL: what this row superseded is live again.
            for other, states in self.possible.items():
                self.possible[other] = {self._restored(s, memory_id) for s in states}
        elif reply.outcome is Outcome.MAYBE:
            self._alternative(memory_id, lambda s: None, "delete (maybe)")
            for other, states in self.possible.items():
                if other != memory_id:
                    states |= {self._restored(s, memory_id) for s in states}
        elif reply.outcome is Outcome.REJECTED and reply.status == 404:
            self._absent_confirmed(memory_id, "DELETE")

    @staticmethod
    def _restored(state: RowState | None, deleted_id: int) -> RowState | None:
        if state is not None and state.superseded_by == deleted_id:
            return replace(state, superseded_by=None)
        return state

    def _settle(self, memory_id: int, state: RowState | None, what: str) -> None:
        self.possible[memory_id] = {state}
        self.history.setdefault(memory_id, []).append(what)

    def _alternative(self, memory_id: int, effect: Any, what: str) -> None:
        states = self.possible.setdefault(memory_id, set())
        states |= {effect(s) for s in states if s is not None}
        self.history.setdefault(memory_id, []).append(what)

    def _absent_confirmed(self, memory_id: int, method: str) -> None:
        if None not in self.possible.get(memory_id, {None}):
            self.problems.append(
                f"{self.user_id}: {method} {memory_id} answered 404 but the row must exist"
                f" (history: {self.history.get(memory_id)})"
            )
        self._settle(memory_id, None, f"{method} 404")

    # -- choosing targets (the worker's side) ------------------------------------------------
    def present(self) -> list[int]:
        """Ids that may exist (a PATCH or DELETE of them is meaningful)."""
        return [mid for mid, states in self.possible.items() if any(s is not None for s in states)]

    def certain_live(self) -> list[int]:
        """Ids surely present and not superseded (dedup and supersession targets)."""
        return [
            mid
            for mid, states in self.possible.items()
            if len(states) == 1 and (s := next(iter(states))) is not None and s.superseded_by is None
        ]

    def state_of(self, memory_id: int) -> RowState:
        (state,) = self.possible[memory_id]
        assert state is not None
        return state

    # -- checking against the file -----------------------------------------------------------
    def reconcile(self, actual: dict[int, RowState]) -> list[str]:
        """Problems of ``actual`` (this user's rows in the file) against the ledger; then the ledger
        takes the file as the truth, so each crash's "maybe"s are settled before the next."""
        problems = list(self.problems)
        self.problems.clear()
        for memory_id, states in self.possible.items():
            now = actual.get(memory_id)
            if now not in states:
                problems.append(
                    f"{self.user_id}: memory {memory_id} is {now}, allowed only {states}"
                    f" (history: {self.history.get(memory_id)})"
                )
        unexplained = {mid: state for mid, state in actual.items() if mid not in self.possible}
        for group in self.unconfirmed:
            found: list[int] = []
            for item in group:
                matches = [mid for mid, state in unexplained.items() if state == item]
                if len(matches) > 1:
                    problems.append(f"{self.user_id}: one unacknowledged create made rows {matches}")
                found.extend(matches[:1])
            if found and len(found) != len(group):
                problems.append(
                    f"{self.user_id}: an unacknowledged batch of {len(group)} is half there: rows {found}"
                )
            for mid in found:
                self.history.setdefault(mid, []).append("create (maybe, found)")
                self.possible[mid] = {unexplained.pop(mid)}
        self.unconfirmed.clear()
        for mid, state in unexplained.items():
            problems.append(f"{self.user_id}: memory {mid} ({state}) matches no request that was sent")
        # From here on the file is the truth: each row has the one state it was found in.
        self.possible = {mid: {actual[mid]} for mid in self.possible if mid in actual}
        return problems


@dataclass
class IngestSession:
    user_id: str
    session_id: str
    values: list[str] = field(default_factory=list)  # one "remember that" value per user message
    acked_count: int = 0  # messages in the longest acknowledged post
    acked_values: int = 0  # values in it
    sent_values: int = 0  # values in the longest post sent at all


class IngestLedger:
    """The /ingest posts of one worker: which facts the journal and, later, the memories must hold."""

    def __init__(self) -> None:
        self.sessions: list[IngestSession] = []
        self.outcomes: Counter[str] = Counter()
        self.problems: list[str] = []

    def posted(self, session: IngestSession, message_count: int, reply: Reply) -> None:
        self.outcomes[f"ingest {reply.outcome.value}"] += 1
        if reply.outcome is Outcome.REJECTED or (reply.status is not None and reply.status >= 500):
            self.problems.append(f"ingest answered {reply.status}: {reply.body}")
        if reply.outcome is not Outcome.NOT_SENT:
            session.sent_values = max(session.sent_values, len(session.values))
        if reply.outcome is Outcome.ACKED:
            session.acked_count = max(session.acked_count, message_count)
            session.acked_values = max(session.acked_values, len(session.values))

    def journal_problems(self, conn: sqlite3.Connection) -> list[str]:
        """Every acknowledged post has a job holding at least its messages (any status)."""
        problems = []
        for session in self.sessions:
            if not session.acked_count:
                continue
            key = session_key(session.user_id, session.session_id)
            (most,) = conn.execute(
                "SELECT max(message_count) FROM ingest_jobs WHERE session_key = ?", (key,)
            ).fetchone()
            if most is None or most < session.acked_count:
                problems.append(
                    f"ingest {key!r}: {session.acked_count} messages acknowledged, journal holds {most}"
                )
        return problems

    def extraction_problems(self, conn: sqlite3.Connection) -> list[str]:
        """After the queue drained: every job done, each acknowledged fact stored exactly once and
        every stored fact one that was sent; each acknowledged message kept as exactly one turn."""
        problems = []
        statuses = Counter(status for (status,) in conn.execute("SELECT status FROM ingest_jobs"))
        if set(statuses) - {"done"}:
            problems.append(f"ingest jobs not all done: {dict(statuses)}")
        for session in self.sessions:
            facts = [
                fact
                for (fact,) in conn.execute(
                    "SELECT fact FROM memories WHERE user_id = ? AND kind = 'fact'", (session.user_id,)
                )
            ]
            turns = [
                fact
                for (fact,) in conn.execute(
                    "SELECT fact FROM memories WHERE user_id = ? AND kind = 'turn'", (session.user_id,)
                )
            ]
            for value in session.values[: session.acked_values]:
                said = [turn for turn in turns if value in turn]
                if len(said) != 1:
                    problems.append(f"ingest {session.user_id}: acknowledged {value!r} kept as turns {said}")
            for value in session.values[: session.acked_values]:
                holding = [fact for fact in facts if value in fact]
                if len(holding) != 1:
                    problems.append(f"ingest {session.user_id}: acknowledged {value!r} stored as {holding}")
            sent = session.values[: session.sent_values]
            for fact in facts:
                if sum(value in fact for value in sent) != 1:
                    problems.append(f"ingest {session.user_id}: stored {fact!r} matches no single sent fact")
        return problems


# -- the traffic ----------------------------------------------------------------------------------
class MemoryWorker:
    """Owns one user (so its requests are ordered) and sends a random mix of writes until stopped."""

    def __init__(self, ledger: UserLedger, rng: random.Random) -> None:
        self.ledger, self.rng = ledger, rng
        self.sequence = 0

    def text(self) -> str:
        self.sequence += 1
        return f"{' '.join(self.rng.sample(WORDS, 7))} {self.ledger.user_id}-{self.sequence}"

    def item(self) -> dict[str, Any]:
        return {
            "user_id": self.ledger.user_id,
            "topic": self.rng.choice(TOPICS),
            "fact": self.text(),
            "importance": self.rng.randint(1, 10),
            "category": self.rng.choice(CATEGORIES),
            "metadata": {"n": self.sequence},
        }

    def run(self, port: int, stop: threading.Event) -> None:
        while not stop.is_set():
            if self.step(port).outcome in (Outcome.MAYBE, Outcome.NOT_SENT):
                return  # the daemon is gone: its outcome is settled at the next restart

    def step(self, port: int) -> Reply:
        ledger, rng = self.ledger, self.rng
        user = ledger.user_id
        present, live = ledger.present(), ledger.certain_live()
        choice = rng.choices(
            ["single", "batch", "dedup_new", "dedup_repeat", "patch", "delete", "supersede"],
            weights=[
                25,
                10,
                10,
                8 if live else 0,
                30 if present else 0,
                10 if present else 0,
                5 if len(live) > 1 else 0,
            ],
        )[0]
        if choice in ("single", "dedup_new"):
            item = self.item()
            dedup = "true" if choice == "dedup_new" else "false"
            reply = send(port, "POST", f"/memories?dedup={dedup}", item)
            ledger.created([RowState.of_request(item)], reply)
        elif choice == "batch":
            items = [self.item() for _ in range(rng.randint(2, 4))]
            reply = send(port, "POST", "/memories?dedup=false", {"memories": items})
            ledger.created([RowState.of_request(item) for item in items], reply)
        elif choice == "dedup_repeat":
            target = rng.choice(live)
            state = ledger.state_of(target)
            item = {**self.item(), "topic": state.topic, "fact": state.fact}
            reply = send(port, "POST", "/memories?dedup=true", item)
            ledger.created([RowState.of_request(item)], reply, merge_target=target)
        elif choice == "patch":
            target = rng.choice(present)
            changes: dict[str, Any] = {}
            if rng.random() < 0.5:
                changes.update(fact=self.text(), topic=rng.choice(TOPICS))
            if rng.random() < 0.5 or not changes:
                changes["importance"] = rng.randint(1, 10)
            if rng.random() < 0.3:
                changes["metadata"] = {"n": self.sequence, "patched": True}
            if rng.random() < 0.2:
                changes["superseded_by"] = None  # restore (a no-op on a live row)
            reply = send(port, "PATCH", f"/memories/{target}?user_id={user}", changes)
            ledger.patched(target, changes, reply)
        elif choice == "delete":
            target = rng.choice(present)
            reply = send(port, "DELETE", f"/memories/{target}?user_id={user}")
            ledger.deleted(target, reply)
        else:  # supersede one live memory by another
            older, newer = rng.sample(live, 2)
            changes = {"superseded_by": newer}
            reply = send(port, "PATCH", f"/memories/{older}?user_id={user}", changes)
            ledger.patched(older, changes, reply)
        return reply


class IngestWorker:
    """Posts growing conversations ("Remember that my … is called …") for users of its own."""

    def __init__(self, ledger: IngestLedger, rng: random.Random, name: str) -> None:
        self.ledger, self.rng, self.name = ledger, rng, name

    def run(self, port: int, stop: threading.Event) -> None:
        while not stop.is_set():
            open_sessions = [s for s in self.ledger.sessions if len(s.values) < len(NOUNS)]
            if not open_sessions or self.rng.random() < 0.25:
                number = len(self.ledger.sessions)
                session = IngestSession(f"{self.name}-{number}", f"chat-{number}")
                self.ledger.sessions.append(session)
            else:
                session = self.rng.choice(open_sessions)
            value = " ".join(w.title() for w in self.rng.sample(WORDS, 3)) + f" {len(session.values)}"
            session.values.append(value)
            messages: list[dict[str, str]] = []
            for noun, said in zip(NOUNS, session.values, strict=False):
                messages.append({"role": "user", "content": f"Remember that my {noun} is called {said}."})
                messages.append({"role": "assistant", "content": "Noted."})
            body = {
                "messages": messages,
                "session_id": session.session_id,
                "user_id": session.user_id,
                "debounce": self.rng.random() < 0.7,
            }
            reply = send(port, "POST", "/ingest", body)
            self.ledger.posted(session, len(messages), reply)
            if reply.outcome in (Outcome.MAYBE, Outcome.NOT_SENT):
                return
            time.sleep(self.rng.uniform(0.0, 0.1))


class SearchWorker:
    """Searches while the writers write: results never belong to another user, never a 5xx."""

    def __init__(self, users: list[str], rng: random.Random) -> None:
        self.users, self.rng = users, rng
        self.problems: list[str] = []

    def run(self, port: int, stop: threading.Event) -> None:
        while not stop.is_set():
            user = self.rng.choice(self.users)
            body = {
                "query": " ".join(self.rng.sample(WORDS, 3)),
                "user_id": user,
                "mode": self.rng.choice(["hybrid", "fts", "vector"]),
            }
            reply = send(port, "POST", "/hybrid-search", body)
            if reply.outcome is not Outcome.ACKED:
                if reply.status is not None:
                    self.problems.append(f"search answered {reply.status}: {reply.body}")
                return
            strangers = [r["id"] for r in reply.body["results"] if r["user_id"] != user]
            if strangers:
                self.problems.append(f"search for {user} returned other users' memories {strangers}")


# -- the harness ----------------------------------------------------------------------------------
class CrashHarness:
    """Start, load, kill -9, restart, check; then a clean final start and the full check.

    Args:
        workdir: where the database, its crash-image copies and the daemon log live.
        embed_url: the loopback embedding service the daemon uses during the kill cycles.
        embedder: the same MiniLM, for query vectors and re-embedding rows in the checks.
        seed: drives every choice (operations, kill moments); thread timing still varies.
    """

    MEMORY_USERS = ("ada", "bo", "cy")

    def __init__(
        self, workdir: Path, embed_url: str, embedder: SentenceTransformerEmbedder, seed: int
    ) -> None:
        self.workdir = workdir
        self.db = workdir / "crash.db"
        self.daemon = Daemon(self.db, workdir / "daemon.log")
        self.embedder = embedder
        self.rng = random.Random(seed)
        self.settings = {
            "MEMORY_CORTEX_LOGGING__FORMAT": "json",
            "MEMORY_CORTEX_LLM__BACKEND": "rules",
            "MEMORY_CORTEX_HARDWARE__ENABLED": "false",
            "MEMORY_CORTEX_INGEST__DEBOUNCE_S": "0.3",
            "MEMORY_CORTEX_INGEST__RETRY_BACKOFF_S": "0.5",
            "MEMORY_CORTEX_DATABASE__CHECKPOINT_INTERVAL_S": "0.2",  # kills land mid-checkpoint too
            "MEMORY_CORTEX_EMBEDDINGS__QUERY_TIMEOUT_S": "20",  # never FTS-only by chance
            "MEMORY_CORTEX_EMBEDDINGS__RETRY_AFTER_S": "0",
            "MEMORY_CORTEX_EMBEDDINGS__BACKEND": "http",
            # The matrix is checked against a plain cosine top-k of the BLOBs: one pass, no feedback.
            "MEMORY_CORTEX_SEARCH__PRF_DOCS": "0",
            "MEMORY_CORTEX_EMBEDDINGS__URL": embed_url,
        }
        self.user_ledgers = [UserLedger(user) for user in self.MEMORY_USERS]
        self.memory_workers = [
            MemoryWorker(ledger, random.Random(self.rng.random())) for ledger in self.user_ledgers
        ]
        self.ingest_ledger = IngestLedger()
        self.ingest_worker = IngestWorker(self.ingest_ledger, random.Random(self.rng.random()), "ing")
        self.search_worker = SearchWorker(list(self.MEMORY_USERS), random.Random(self.rng.random()))
        self.traffic_kills = 0
        self.startup_kills = 0
        self.starts = 0  # starts that reached "database open" (the log is shared by all of them)
        self.problems: list[str] = []

    # -- the run ------------------------------------------------------------------------------
    def run(self, traffic_kills: int, startup_kills: int) -> None:
        plan = ["traffic"] * traffic_kills + ["startup"] * startup_kills
        self.rng.shuffle(plan)
        try:
            for kind in plan:
                self.daemon.spawn(self.settings)
                if kind == "startup":
                    self.kill_during_startup()
                    continue
                self.daemon.wait_ready()
                self.check_after_restart()
                self.traffic_then_kill()
                if self.traffic_kills % 4 == 0:
                    self.check_crash_image()
            self.final_start_and_check()
        finally:
            self.daemon.kill()

    def kill_during_startup(self) -> None:
        """Kill once the file is open: while the index loads, jobs are requeued or already run."""
        deadline = time.monotonic() + 120
        while self.daemon.log.read_text(errors="replace").count('"database open"') <= self.starts:
            assert time.monotonic() < deadline, f"daemon never opened the database: {self.daemon.log_tail()}"
            time.sleep(0.01)
        time.sleep(self.rng.uniform(0.0, 0.3))
        self.daemon.kill()
        self.startup_kills += 1
        self.starts += 1

    def traffic_then_kill(self) -> None:
        stop = threading.Event()
        port = self.daemon.port
        workers = [*self.memory_workers, self.ingest_worker, self.search_worker]

        def run(worker: Any) -> None:
            try:
                worker.run(port, stop)
            except Exception as exc:  # a bug in the harness or an answer of the wrong shape
                self.problems.append(f"traffic thread died: {exc!r}")

        threads = [
            threading.Thread(target=run, args=(worker,), name=f"traffic-{i}")
            for i, worker in enumerate(workers)
        ]
        for thread in threads:
            thread.start()
        time.sleep(self.rng.uniform(0.2, 2.0))
        self.daemon.kill()
        self.traffic_kills += 1
        self.starts += 1
        stop.set()
        for thread in threads:
            thread.join(timeout=60)
            assert not thread.is_alive(), "a traffic thread hung"

    # -- checks -------------------------------------------------------------------------------
    def read_only(self) -> sqlite3.Connection:
        conn = sqlite3.connect(f"file:{self.db}?mode=ro", uri=True)
        conn.row_factory = sqlite3.Row
        return conn

    def rows_of(self, conn: sqlite3.Connection, user: str) -> dict[int, RowState]:
        rows = conn.execute("SELECT * FROM memories WHERE user_id = ?", (user,))
        return {row["id"]: RowState.of_db(row) for row in rows}

    def check_after_restart(self) -> None:
        """The file against the ledgers (settling the last crash's "maybe"s), the API against the
        file, /stats against the file, and one vector search against numpy."""
        port = self.daemon.port
        conn = self.read_only()
        try:
            for ledger in self.user_ledgers:
                actual = self.rows_of(conn, ledger.user_id)
                self.problems += ledger.reconcile(actual)
                listed = send(
                    port, "GET", f"/memories?user_id={ledger.user_id}&include_superseded=true&limit=1000"
                )
                assert listed.outcome is Outcome.ACKED, listed
                shown = {m["id"]: RowState.of_api(m) for m in listed.body["memories"]}
                if shown != actual:
                    self.problems.append(f"GET /memories for {ledger.user_id} differs from the file")
            self.problems += self.ingest_ledger.journal_problems(conn)
            per_user = send(port, "GET", "/stats").body["per_user"]
            for user in self.MEMORY_USERS:
                (live,) = conn.execute(
                    "SELECT count(*) FROM memories WHERE user_id = ? AND superseded_by IS NULL", (user,)
                ).fetchone()
                if per_user.get(user, 0) != live:
                    self.problems.append(f"/stats per_user[{user}] = {per_user.get(user)}, file: {live}")
            self.problems += self.vector_search_problems(conn, self.rng.choice(self.MEMORY_USERS))
        finally:
            conn.close()

    def vector_search_problems(self, conn: sqlite3.Connection, user: str, k: int = 5) -> list[str]:
        """``mode: vector`` must return the top-k cosines over the user's live BLOBs (facts: turns
        are re-scored by the session priors, so their order is not the cosines')."""
        rows = conn.execute(
            "SELECT id, embedding FROM memories WHERE user_id = ? AND superseded_by IS NULL"
            " AND embedding IS NOT NULL AND embedding_model = ? AND kind = 'fact'",
            (user, MODEL),
        ).fetchall()
        if len(rows) < 2:
            return []
        k = min(k, len(rows))
        query = " ".join(self.rng.sample(WORDS, 4))
        ids = np.array([row[0] for row in rows])
        cosines = normalize(np.stack([from_blob(row[1]) for row in rows])) @ self.query_vector(query)
        reply = send(
            self.daemon.port,
            "POST",
            "/hybrid-search",
            {"query": query, "user_id": user, "mode": "vector", "limit": k, "kinds": ["fact"]},
        )
        got = {r["id"]: r["vector_score"] for r in reply.body["results"]}
        expected = dict(zip(ids.tolist(), cosines.tolist(), strict=True))
        kth = float(np.sort(cosines)[::-1][k - 1])
        must = {mid for mid, cosine in expected.items() if cosine > kth + 1e-4}
        wrong = [
            mid
            for mid, score in got.items()
            if mid not in expected
            or expected[mid] < kth - 1e-4
            or abs(score - max(expected[mid], 0.0)) > 1e-4
        ]
        if len(got) != k or wrong or not must <= set(got):
            top = sorted(expected.items(), key=lambda item: -item[1])[:k]
            return [f"vector search for {user} {query!r}: got {got}, numpy top {top}"]
        return []

    def query_vector(self, query: str) -> np.ndarray:
        return normalize(asyncio.run(self.embedder.embed_query(query)))[0]

    def check_crash_image(self) -> None:
        """A copy of the files as the kill left them opens, recovers its WAL, and is intact."""
        image = self.workdir / f"image-{self.traffic_kills}"
        image.mkdir()
        for suffix in ("", "-wal"):
            source = self.db.with_name(self.db.name + suffix)
            if source.exists():
                shutil.copy(source, image / (self.db.name + suffix))
        conn = sqlite3.connect(image / self.db.name)
        try:
            result = conn.execute("PRAGMA integrity_check").fetchall()
            if result != [("ok",)]:
                self.problems.append(f"crash image {image.name}: integrity_check {result}")
            if conn.execute("PRAGMA foreign_key_check").fetchall():
                self.problems.append(f"crash image {image.name}: foreign key violations")
        finally:
            conn.close()
        shutil.rmtree(image)

    def final_start_and_check(self) -> None:
        """A start on the in-process model (the default), the queue drained, every check, a clean
        SIGTERM, then the file read-only: integrity, ledgers, vectors and extraction."""
        settings = {k: v for k, v in self.settings.items() if not k.startswith("MEMORY_CORTEX_EMBEDDINGS__")}
        settings["MEMORY_CORTEX_EMBEDDINGS__QUERY_TIMEOUT_S"] = "20"
        self.daemon.spawn(settings)
        self.daemon.wait_ready()
        port = self.daemon.port
        self.check_after_restart()
        deadline = time.monotonic() + 60
        while True:
            queue = send(port, "GET", "/stats").body["ingest"]
            if queue["pending"] == 0 and queue["running"] == 0:
                break
            assert time.monotonic() < deadline, f"ingest queue did not drain: {queue}"
            time.sleep(0.2)
        stats = send(port, "GET", "/stats").body
        conn = self.read_only()
        try:
            total, live, embedded, indexed = conn.execute(
                "SELECT count(*), sum(superseded_by IS NULL), sum(embedding_model IS ?),"
                " sum(embedding_model IS ? AND superseded_by IS NULL) FROM memories",
                (MODEL, MODEL),
            ).fetchone()
            shown = (stats["total_memories"], stats["live_memories"], stats["embedded"])
            if shown != (total, live, embedded) or stats["vector_index_rows"] != indexed:
                self.problems.append(
                    f"/stats {stats} differs from the file: {total, live, embedded, indexed}"
                )
            if stats["unembedded"]:
                self.problems.append(f"{stats['unembedded']} memories stored without a vector")
            users = [*self.MEMORY_USERS, *(s.user_id for s in self.ingest_ledger.sessions[:5])]
            for user in users:
                self.problems += self.vector_search_problems(conn, user, k=3)
        finally:
            conn.close()
        exit_status = self.daemon.stop()
        if exit_status != 0:
            self.problems.append(f"daemon exited with {exit_status} on SIGTERM")

        conn = self.read_only()
        try:
            integrity = [tuple(row) for row in conn.execute("PRAGMA integrity_check")]
            if integrity != [("ok",)]:
                self.problems.append(f"final integrity_check: {integrity[:10]}")
            for ledger in self.user_ledgers:
                self.problems += ledger.reconcile(self.rows_of(conn, ledger.user_id))
            self.problems += self.ingest_ledger.journal_problems(conn)
            self.problems += self.ingest_ledger.extraction_problems(conn)
            self.problems += self.ingest_ledger.problems
            self.problems += self.embedding_problems(conn)
        finally:
            conn.close()

    def embedding_problems(self, conn: sqlite3.Connection) -> list[str]:
        """Every vector of the users written through /memories is MiniLM's embedding of its row's
        text: no PATCH or merge ever changed the text without the vector. (Facts from /ingest are
        left out: a session's memories may be embedded with their predecessors as context.)"""
        rows = conn.execute(
            "SELECT id, topic, fact, embedding, embedding_model FROM memories"
            " WHERE user_id IN (SELECT value FROM json_each(?))",
            (json.dumps(self.MEMORY_USERS),),
        ).fetchall()
        texts = [f"{topic}: {fact}" if topic else fact for _, topic, fact, _, _ in rows]
        vectors = asyncio.run(self.embedder.embed_documents(texts))
        problems = []
        for (memory_id, _, _, blob, model), vector in zip(rows, vectors, strict=True):
            if blob is None or model != MODEL:
                problems.append(f"memory {memory_id} has no {MODEL} vector")
            elif float(normalize(from_blob(blob))[0] @ vector) < 0.999:
                problems.append(f"memory {memory_id}: stored vector is not its text's embedding")
        return problems

    def outcomes(self) -> Counter[str]:
        total: Counter[str] = Counter()
        for ledger in self.user_ledgers:
            total.update(ledger.outcomes)
        total.update(self.ingest_ledger.outcomes)
        return total


@pytest.mark.slow
def test_every_acknowledged_write_survives_kill_9_and_nothing_is_half_applied(
    tmp_path: Path, minilm: SentenceTransformerEmbedder
) -> None:
    started = time.monotonic()
    with embedding_server(minilm) as embed_url:
        harness = CrashHarness(tmp_path, embed_url, minilm, SEED)
        harness.run(traffic_kills=TRAFFIC_KILLS, startup_kills=STARTUP_KILLS)
    problems = harness.problems + harness.search_worker.problems
    assert not problems, "\n".join(problems[:30])
    assert harness.traffic_kills == TRAFFIC_KILLS and harness.startup_kills == STARTUP_KILLS
    outcomes = harness.outcomes()
    # The run did what it claims: many acknowledged writes of every kind, and kills that cut
    # requests off mid-flight (else the "maybe" branches were never exercised).
    acked = sum(n for name, n in outcomes.items() if name.endswith("acked"))
    maybe = sum(n for name, n in outcomes.items() if name.endswith("maybe"))
    assert acked >= 200 and maybe >= 10, outcomes
    for kind in ("create", "patch", "delete", "ingest"):
        assert outcomes[f"{kind} acked"] > 0, outcomes
    print(
        f"\n{harness.traffic_kills}+{harness.startup_kills} kills in {time.monotonic() - started:.0f} s: {dict(outcomes)}"
    )


# -- the checker can fail ---------------------------------------------------------------------------
def ledger_db(tmp_path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(tmp_path / "ledger.db", isolation_level=None)
    apply_migrations(conn)
    conn.row_factory = sqlite3.Row
    return conn


def insert_row(conn: sqlite3.Connection, state: RowState) -> int:
    cursor = conn.execute(
        "INSERT INTO memories (user_id, topic, fact, importance, category, metadata, superseded_by)"
        " VALUES (?, ?, ?, ?, ?, ?, ?)",
        (
            state.user_id,
            state.topic,
            state.fact,
            state.importance,
            state.category,
            state.metadata,
            state.superseded_by,
        ),
    )
    return int(cursor.lastrowid or 0)


def api_body(memory_id: int, state: RowState, action: str = "created") -> dict[str, Any]:
    return {
        "id": memory_id,
        "action": action,
        "user_id": state.user_id,
        "topic": state.topic,
        "fact": state.fact,
        "importance": state.importance,
        "category": state.category,
        "metadata": json.loads(state.metadata),
        "superseded_by": state.superseded_by,
    }


def rows(conn: sqlite3.Connection) -> dict[int, RowState]:
    return {row["id"]: RowState.of_db(row) for row in conn.execute("SELECT * FROM memories")}


FIRST = RowState("u", "home", "the kettle is blue", 5, "fact", canonical({}))
SECOND = RowState("u", "home", "the door is red", 3, "fact", canonical({}))


def test_the_checker_notices_a_lost_acknowledged_create(tmp_path: Path) -> None:
    conn = ledger_db(tmp_path)
    ledger = UserLedger("u")
    first = insert_row(conn, FIRST)
    ledger.created([FIRST], Reply(Outcome.ACKED, 201, api_body(first, FIRST)))
    ledger.created([SECOND], Reply(Outcome.ACKED, 201, api_body(first + 1, SECOND)))  # never written
    problems = ledger.reconcile(rows(conn))
    assert len(problems) == 1 and f"memory {first + 1}" in problems[0]


def test_the_checker_notices_a_half_applied_patch_and_an_undone_delete(tmp_path: Path) -> None:
    conn = ledger_db(tmp_path)
    ledger = UserLedger("u")
    first, second = insert_row(conn, FIRST), insert_row(conn, SECOND)
    ledger.created(
        [FIRST, SECOND],
        Reply(Outcome.ACKED, 201, {"memories": [api_body(first, FIRST), api_body(second, SECOND)]}),
    )
    changes = {"fact": "the kettle is green", "importance": 9}
    ledger.patched(first, changes, Reply(Outcome.MAYBE))
    ledger.deleted(second, Reply(Outcome.ACKED, 200, {"deleted": True, "id": second}))
    conn.execute("UPDATE memories SET fact = 'the kettle is green' WHERE id = ?", (first,))  # half of it
    problems = ledger.reconcile(rows(conn))
    assert len(problems) == 2, problems
    assert f"memory {first}" in problems[0] and f"memory {second}" in problems[1]


def test_the_checker_accepts_either_outcome_of_an_unacknowledged_write_but_no_partial_batch(
    tmp_path: Path,
) -> None:
    conn = ledger_db(tmp_path)
    ledger = UserLedger("u")
    first = insert_row(conn, FIRST)
    ledger.created([FIRST], Reply(Outcome.ACKED, 201, api_body(first, FIRST)))
    ledger.patched(first, {"importance": 9}, Reply(Outcome.MAYBE))
    conn.execute("UPDATE memories SET importance = 9 WHERE id = ?", (first,))  # applied: fine
    ledger.created([SECOND], Reply(Outcome.MAYBE))  # not applied: fine
    assert ledger.reconcile(rows(conn)) == []
    third = replace(SECOND, fact="the window is open")
    ledger.created([SECOND, third], Reply(Outcome.MAYBE))
    insert_row(conn, third)  # one row of a two-row batch
    problems = ledger.reconcile(rows(conn))
    assert len(problems) == 1 and "half there" in problems[0]


def test_the_checker_notices_an_acknowledged_ingest_missing_from_the_journal(tmp_path: Path) -> None:
    conn = ledger_db(tmp_path)
    ledger = IngestLedger()
    session = IngestSession("kim", "chat-0", values=["Green Bianchi 0"])
    ledger.sessions.append(session)
    ledger.posted(session, 2, Reply(Outcome.ACKED, 202, {"status": "queued"}))
    assert ledger.journal_problems(conn) != []
    assert ledger.extraction_problems(conn) != []

"""Stage 2, ``merge``: live core memories at cosine ≥ ``merge_cosine`` form groups (union-find); the
newest of a group keeps its wording and takes the group's highest importance and all its reads, the
others are hidden behind it (``superseded_by``) with a ``merged`` link. Incremental: only rows
created, edited or moved into core since the last merge are compared with all the others. Session
summaries are never merged (two alike are still two conversations)."""

from __future__ import annotations

import asyncio
import dataclasses
import sqlite3
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import numpy as np

from ...store import lifecycle as lifecycle_sql
from ...store import memories as memory_sql
from ...store.lifecycle import LifecycleRow
from .clock import parse_time
from .engine import RunContext, StageTools, as_planned
from .report import Pending, StageReport
from .session_summaries import CATEGORY as SESSION_SUMMARY
from .similarity import blocks, core_pages


@dataclass(frozen=True)
class MergeGroup:
    """Core rows of one user close enough to merge into ``kept``."""

    user_id: str
    kept: int
    members: tuple[int, ...]
    updated_at: dict[int, str]  # what each row's updated_at was when planned


async def run(tools: StageTools, context: RunContext, report: StageReport, began: float) -> None:
    if tools.index is None or tools.index.dim is None:
        report.status, report.reason = "skipped", "no vectors: no embedder, or nothing embedded yet"
        tools.fill(report, began, merged=[], groups=0)
        if not context.dry_run:
            await tools.db.write(lambda conn: tools.save_report(conn, context))
        return
    threshold = tools.config.merge_cosine
    plan_ids: tuple[int, str] = await tools.db.read(
        lambda conn: (lifecycle_sql.max_memory_id(conn), lifecycle_sql.database_now(conn))
    )
    # Everything written after this point is "changed" for the next run: the earlier of the two
    # clocks, so neither a store clock nor an injected one can hide a row from it.
    since = min(plan_ids[1], context.now_iso)
    watermark = await tools.db.read(lifecycle_sql.latest_merge_watermark)
    incremental = (
        watermark is not None
        and watermark.get("model") == tools.index.model
        and float(watermark.get("cosine", 2.0)) <= threshold
    )
    groups: list[MergeGroup] = []
    compared = 0
    for user_id in context.users:
        core = {
            row.id: row
            for row in await tools.rows(user_id, "core", context.pending)
            # Each tells its own conversation: two alike are still two sessions.
            if row.category != SESSION_SUMMARY
        }
        if len(core) < 2:
            continue
        if incremental:
            assert watermark is not None
            changed = set(
                await tools.db.read(
                    lambda conn, u=user_id: lifecycle_sql.changed_core_ids(
                        conn, u, int(watermark["max_id"]), str(watermark["since"])
                    )
                )
            )
            changed |= {
                mid for mid in core if mid in context.pending.moved or mid in context.pending.absorbed
            }
            changed &= set(core)
        else:
            changed = set(core)
        if not changed:
            continue
        # Comparing most rows with all is as costly as every pair once: then do that.
        full = len(changed) * 2 >= len(core)
        if full:
            changed = set(core)
        compared += len(changed)
        pairs = await _similar_pairs(tools, user_id, core, sorted(changed), full, context.pending, threshold)
        # Only memories every requester sees alike are one: a private fact never folds into a
        # shared one (or another agent's), whatever their words.
        pairs = [(a, b) for a, b in pairs if core[a].scope.recalled_alike(core[b].scope)]
        for members in _union_find_groups(pairs):
            rows = [core[mid] for mid in members]
            kept = max(rows, key=lambda r: (parse_time(r.created_at) or context.now, r.id))
            groups.append(
                MergeGroup(
                    user_id=user_id,
                    kept=kept.id,
                    members=tuple(sorted(r.id for r in rows if r.id != kept.id)),
                    updated_at={r.id: r.updated_at for r in rows},
                )
            )
    if context.whole_store:
        context.report.merge_watermark = {
            "max_id": plan_ids[0],
            "since": since,
            "model": tools.index.model,
            "cosine": threshold,
        }
    if context.dry_run:
        for group in groups:
            rows = await _group_rows(tools, group, context.pending)
            context.pending.hidden.update(group.members)
            context.pending.absorbed[group.kept] = (
                max(r.importance for r in rows),
                sum(r.access_count for r in rows),
                max((r.last_accessed for r in rows if r.last_accessed), default=None),
            )
        applied = groups
        context.report.merge_watermark = None  # a dry run never moves the watermark
    else:

        def work(conn: sqlite3.Connection) -> tuple[list[MergeGroup], list[int]]:
            done: list[MergeGroup] = []
            touched: list[int] = []
            for group in groups:
                current = memory_sql.get_many(conn, [group.kept, *group.members])
                if not as_planned(current.get(group.kept), group.user_id, "core", group.updated_at):
                    continue
                merged = [
                    mid
                    for mid in group.members
                    if as_planned(current.get(mid), group.user_id, "core", group.updated_at)
                ]
                if not merged:
                    continue
                rows = [current[group.kept], *(current[mid] for mid in merged)]
                for mid in merged:
                    lifecycle_sql.hide_merged(conn, mid, group.kept, context.run_id)
                lifecycle_sql.absorb_merged(
                    conn,
                    group.kept,
                    importance=max(r.importance for r in rows),
                    access_count=sum(r.access_count for r in rows),
                    last_accessed=max((r.last_accessed for r in rows if r.last_accessed), default=None),
                )
                done.append(dataclasses.replace(group, members=tuple(merged)))
                touched.extend([group.kept, *merged])
            _merge_report(tools, report, began, done, compared, skipped=len(groups) - len(done))
            tools.save_report(conn, context)
            return done, touched

        applied = await tools.memories.write_with_index(work)
    _merge_report(tools, report, began, applied, compared, skipped=len(groups) - len(applied))
    if context.dry_run:
        await tools.record_planned(context)


def _merge_report(
    tools: StageTools,
    report: StageReport,
    began: float,
    groups: list[MergeGroup],
    compared: int,
    skipped: int,
) -> None:
    merged = [mid for group in groups for mid in group.members]
    tools.fill(
        report, began, merged=merged, kept=[g.kept for g in groups], compared=compared, skipped=skipped
    )
    report.counts["groups"] = len(groups)
    report.groups = [
        {"user_id": g.user_id, "into": g.kept, "ids": list(g.members), "period": None}
        for g in groups[: tools.config.report_max_ids]
    ]


async def _group_rows(tools: StageTools, group: MergeGroup, pending: Pending) -> list[LifecycleRow]:
    ids = [group.kept, *group.members]
    rows = await tools.db.read(lambda conn: lifecycle_sql.live_rows_by_id(conn, ids))
    return [viewed for row in rows.values() if (viewed := pending.view(row)) is not None]


async def _similar_pairs(
    tools: StageTools,
    user_id: str,
    core: dict[int, LifecycleRow],
    changed: list[int],
    full: bool,
    pending: Pending,
    threshold: float,
) -> list[tuple[int, int]]:
    """Pairs of the user's core rows at cosine ≥ ``threshold``, where at least one is ``changed``.

    ``full``: every pair (``changed`` is then all of core, compared block by block with the
    rows after it, each pair once). Otherwise the changed rows' block is compared with all core
    rows, walked from the store in keyset pages so memory stays at two blocks.
    """
    pairs: list[tuple[int, int]] = []
    async for left_ids, left in blocks(tools, changed):
        after = int(left_ids.min()) - 1 if full else 0  # a numpy int would bind as a BLOB
        async for right_ids, right in core_pages(tools, user_id, set(core), pending, after):
            found = await asyncio.to_thread(
                _pairs_at_least, left_ids, left, right_ids, right, threshold, full
            )
            pairs.extend(found)
    return pairs


def _pairs_at_least(
    left_ids: np.ndarray,
    left: np.ndarray,
    right_ids: np.ndarray,
    right: np.ndarray,
    threshold: float,
    ordered: bool,
) -> list[tuple[int, int]]:
    """``(left id, right id)`` pairs with cosine ≥ ``threshold`` (``ordered``: left id < right id,
    each pair once; else any two different ids)."""
    scores = left @ right.T
    rows, cols = np.nonzero(scores >= threshold)
    a, b = left_ids[rows], right_ids[cols]
    keep = a < b if ordered else a != b
    return list(zip(a[keep].tolist(), b[keep].tolist(), strict=True))


def _union_find_groups(pairs: Iterable[tuple[int, int]]) -> Iterator[list[int]]:
    """Connected groups (two or more ids) of the pairs, each sorted, in order of their smallest id."""
    parent: dict[int, int] = {}

    def root(node: int) -> int:
        parent.setdefault(node, node)
        while parent[node] != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    for a, b in pairs:
        ra, rb = root(a), root(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    groups: dict[int, list[int]] = {}
    for node in parent:
        groups.setdefault(root(node), []).append(node)
    for key in sorted(groups):
        if len(groups[key]) > 1:
            yield sorted(groups[key])

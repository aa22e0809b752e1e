"""The scopes and audiences the scope tests of every store combine (issue 22's rule: agent,
private/shared, channel), one list for the in-memory index, pgvector and full-text search."""

from __future__ import annotations

from memory_cortex.records import Audience, Scope

SCOPES = [
    Scope(),
    Scope("work"),
    Scope("home"),
    Scope(None, "shared"),
    Scope(None, "shared", "g1"),
    Scope("work", "shared", "g2"),
    Scope(None, "private", "g1"),  # a private row's channel plays no part
]
AUDIENCES = [
    Audience(),
    Audience("work"),
    Audience("stranger"),
    Audience(None, "group", "g1"),
    Audience("work", "group", "g2"),
    Audience(None, "group", None),
    Audience(None, "group", "unknown"),
]

"""Calling the vector index from async code, whichever index it is.

The in-memory matrix (SQLite) answers in microseconds, so it is called inline: a thread hop per
call would cost more than the call. PostgreSQL's index (``in_database``) is a query, so the same
call runs in a thread and the event loop only waits.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


async def call_index(index: Any, method: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``method(*args, **kwargs)`` (a method of ``index``), off the event loop when it does I/O."""
    if getattr(index, "in_database", False):
        return await asyncio.to_thread(method, *args, **kwargs)
    return method(*args, **kwargs)

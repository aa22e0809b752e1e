"""The lifecycle's time: one stored format, parsing it back, and when the daily run falls."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta


def utc_now() -> datetime:
    return datetime.now(UTC)


def iso(moment: datetime) -> str:
    """The format of every stored timestamp: UTC, milliseconds, ``Z``."""
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def parse_time(text: str | None) -> datetime | None:
    """A stored timestamp as an aware UTC datetime (a zone-less one is UTC); None when unreadable."""
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def next_daily_run(now: datetime, daily_at: str, *, after: datetime | None = None) -> datetime:
    """The next local ``HH:MM`` at or after ``now`` (and strictly after ``after``), as aware UTC.

    Computed on the naive local wall clock and converted back, so a run stays at 03:00 local across
    a daylight-saving change.
    """
    hour, minute = (int(part) for part in daily_at.split(":"))
    local_now = now.astimezone().replace(tzinfo=None)
    candidate = local_now.replace(hour=hour, minute=minute, second=0, microsecond=0)
    if candidate < local_now:
        candidate += timedelta(days=1)
    while True:
        moment = candidate.astimezone().astimezone(UTC)  # naive = local time
        if after is None or moment > after:
            return moment
        candidate += timedelta(days=1)

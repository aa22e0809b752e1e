"""Time expressions in a search query ("last May", "in 2023", "yesterday") as date ranges.

The parsing is dateparser's (``search_dates`` finds the expressions, ``DateDataParser`` says how
precise each is: day, week, month or year); this module only turns its answer into a range:

- a day ("on 8 May, 2023", "yesterday", "on Monday") → that day;
- a week ("last week", "two weeks ago") → that Monday-to-Sunday week;
- a month ("in July", "last month", "May 2023") → that calendar month;
- a year ("in 2023", "last year", "4 years ago") → that calendar year.

Relative expressions are resolved against ``now`` (passed in, so tests fix the clock), dates
without a year prefer the past (a question is about what was said). Times are naive UTC, like the
stored timestamps. An expression dateparser cannot anchor ("the week before the trip") gives no
range; neither does a bare number ("18th birthday", "10"), which dateparser reads as a day of the
current month far more often than it is one.

Cost: importing dateparser takes ~0.3 s and its first parse loads its English data (~0.4 s), so
the module is imported only when time-aware search is switched on, and :meth:`TimeParser.warm_up`
does that first parse at start-up. After that a query costs 0.5-4 ms, and only a query with a
date-ish word (a month or weekday name, a digit, "yesterday", "ago", "week"…) is parsed at all;
the last answers are cached. Only the first ``MAX_PARSED_CHARS`` characters are searched.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from ..records import stored_timestamp as stored_format

# A query without any of these holds no time expression dateparser would find in English: it is
# not parsed at all. (A gate only: what is a date is dateparser's call.)
_DATEISH = re.compile(
    r"\d|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\b"
    r"|\b(?:mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun)(?:day)?\b"
    r"|\b(?:yesterday|today|tonight|tomorrow|ago|fortnight|weeks?|weekend|months?|years?|decade)\b",
    re.IGNORECASE,
)
# dateparser reads a lone number ("18th", "10") as a day of this month; in a question it is far
# more often an age, a count or part of a date it failed to see whole.
_BARE_NUMBER = re.compile(r"\W*\d{1,3}(?:st|nd|rd|th)?\W*", re.IGNORECASE)
# A lone short word is an abbreviation to dateparser ("we" = Wednesday, "may", "sat", "sun"); in a
# question it is a date only written as a name ("in May", or "May" capitalised mid-sentence).
_SHORT_WORD = re.compile(r"\W*([^\W\d_]{1,3})\W*")

_SETTINGS: dict[str, Any] = {
    "PREFER_DATES_FROM": "past",
    "RETURN_TIME_AS_PERIOD": True,
}
_LANGUAGES = ["en"]
# dateparser's search costs ~45 ms per 1,000 characters: only the start of a long query (a whole
# prompt sent as the query) is searched for dates, which keeps a parse under ~12 ms.
MAX_PARSED_CHARS = 256


def may_hold_date(query: str) -> bool:
    """False when the query has no date-ish word at all, so parsing it would find nothing."""
    return _DATEISH.search(query) is not None


@dataclass(frozen=True)
class TimeRange:
    """``[start, end)`` in naive UTC, from the expression ``text`` of precision ``period``."""

    start: datetime
    end: datetime
    text: str
    period: str

    def bounds(self) -> tuple[str, str]:
        """``start`` and ``end`` in the stored timestamp format (ISO 8601, milliseconds, ``Z``)."""
        return stored_format(self.start), stored_format(self.end)

    def contains(self, timestamp: str) -> bool:
        """Whether a stored timestamp lies in the range (string order is time order there)."""
        start, end = self.bounds()
        return start <= normalise_timestamp(timestamp) < end


def normalise_timestamp(text: str) -> str:
    """Any ISO 8601 timestamp in the stored format (a stored one comes back unchanged)."""
    return stored_format(datetime.fromisoformat(text.replace("Z", "+00:00")))


def period_range(moment: datetime, period: str, text: str = "") -> TimeRange:
    """The calendar day, week (Monday first), month or year holding ``moment``; any finer period
    (a time, a part of the day) is its day."""
    day = moment.replace(hour=0, minute=0, second=0, microsecond=0, tzinfo=None)
    if period == "year":
        start = day.replace(month=1, day=1)
        end = start.replace(year=start.year + 1)
    elif period == "month":
        start = day.replace(day=1)
        end = (
            start.replace(year=start.year + 1, month=1)
            if start.month == 12
            else start.replace(month=start.month + 1)
        )
    elif period == "week":
        start = day - timedelta(days=day.weekday())
        end = start + timedelta(days=7)
    else:
        period = "day"
        start, end = day, day + timedelta(days=1)
    return TimeRange(start, end, text, period)


def _plausible(text: str, query: str) -> bool:
    """Whether a match of dateparser's is likely a date in this query (see the module doc)."""
    if _BARE_NUMBER.fullmatch(text):
        return False
    short = _SHORT_WORD.fullmatch(text)
    if short is not None:
        word = short.group(1)
        return word[0].isupper() and not query.lstrip().startswith(word)
    return True


class TimeParser:
    """Finds the time expressions of a query with dateparser (thread-safe, with a small cache).

    Args:
        cache_size: answers kept, keyed by query and the minute of ``now``.
    """

    def __init__(self, cache_size: int = 1024) -> None:
        self._cache_size = cache_size
        self._cache: OrderedDict[tuple[str, str], tuple[TimeRange, ...]] = OrderedDict()
        self._lock = threading.Lock()  # dateparser keeps shared state; one parse at a time
        self._dateparser: Any = None

    def _load(self) -> Any:
        if self._dateparser is None:
            import dateparser
            import dateparser.date
            import dateparser.search

            self._dateparser = dateparser
        return self._dateparser

    def moment(self, text: str) -> datetime | None:
        """A written date ("1:56 pm on 8 May, 2023", "2023-05-08") as a datetime (naive = UTC), or
        None when it does not name a full date (day, month and year). ISO 8601 needs no dateparser."""
        try:
            return datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
        except ValueError:
            pass
        with self._lock:
            parsed = self._load().parse(
                text, languages=_LANGUAGES, settings={"REQUIRE_PARTS": ["day", "month", "year"]}
            )
        return parsed if isinstance(parsed, datetime) else None

    def warm_up(self) -> None:
        """Import dateparser and load its English data now, not in the first search that needs it."""
        self.ranges("what happened last week on 8 May 2023", datetime(2024, 1, 1))

    def ranges(self, query: str, now: datetime) -> tuple[TimeRange, ...]:
        """The date ranges the query mentions, in the order found (empty when none).

        ``now``: what relative expressions count from (aware, or naive UTC).
        """
        query = query[:MAX_PARSED_CHARS]
        if not may_hold_date(query):
            return ()
        if now.tzinfo is not None:
            now = now.astimezone(UTC).replace(tzinfo=None)
        key = (query, now.isoformat(timespec="minutes"))
        with self._lock:
            cached = self._cache.get(key)
            if cached is not None:
                self._cache.move_to_end(key)
                return cached
            found = self._parse(query, now)
            self._cache[key] = found
            if len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return found

    def _parse(self, query: str, now: datetime) -> tuple[TimeRange, ...]:
        dateparser = self._load()
        settings = {**_SETTINGS, "RELATIVE_BASE": now}
        matches = dateparser.search.search_dates(query, languages=_LANGUAGES, settings=settings) or []
        precision = dateparser.date.DateDataParser(languages=_LANGUAGES, settings=settings)
        ranges: list[TimeRange] = []
        for text, moment in matches:
            if not _plausible(text, query):
                continue
            # search_dates gives the moment; parsing the expression alone gives its precision.
            data = precision.get_date_data(text)
            period = data.period if data.date_obj is not None else "day"
            found = period_range(moment, period or "day", text.strip())
            if found not in ranges:
                ranges.append(found)
        return tuple(ranges)

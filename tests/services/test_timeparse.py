"""Time expressions in queries → date ranges, against a fixed clock (Friday 20 October 2023, noon)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memory_cortex.services.timeparse import TimeParser, may_hold_date, period_range, stored_format

NOW = datetime(2023, 10, 20, 12, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def parser() -> TimeParser:
    parser = TimeParser()
    parser.warm_up()
    return parser


def spans(parser: TimeParser, query: str) -> list[tuple[str, str, str]]:
    return [
        (r.start.date().isoformat(), r.end.date().isoformat(), r.period) for r in parser.ranges(query, NOW)
    ]


def test_last_may_is_that_month_in_the_past(parser: TimeParser) -> None:
    assert spans(parser, "What did Caroline do last May?") == [("2023-05-01", "2023-06-01", "month")]


def test_a_month_without_a_year_prefers_the_past(parser: TimeParser) -> None:
    # November has not come yet in October 2023: the one meant is November 2022.
    assert spans(parser, "where did we go in November?") == [("2022-11-01", "2022-12-01", "month")]


def test_in_2023_is_the_whole_year(parser: TimeParser) -> None:
    assert spans(parser, "How many times did Melanie go to the beach in 2023?") == [
        ("2023-01-01", "2024-01-01", "year")
    ]


def test_yesterday_is_the_day_before_now(parser: TimeParser) -> None:
    assert spans(parser, "what did I eat yesterday") == [("2023-10-19", "2023-10-20", "day")]


def test_last_week_is_the_monday_to_sunday_week_before(parser: TimeParser) -> None:
    assert spans(parser, "the book I mentioned last week") == [("2023-10-09", "2023-10-16", "week")]


def test_last_year_and_years_ago_are_calendar_years(parser: TimeParser) -> None:
    assert spans(parser, "the camping trip last year") == [("2022-01-01", "2023-01-01", "year")]
    assert spans(parser, "Where did Caroline move from 4 years ago?") == [
        ("2019-01-01", "2020-01-01", "year")
    ]


def test_a_full_date_is_its_day(parser: TimeParser) -> None:
    assert spans(parser, "What painting did Melanie show on October 13, 2023?") == [
        ("2023-10-13", "2023-10-14", "day")
    ]
    assert spans(parser, "What did Gina find for her store on 1 February, 2023?") == [
        ("2023-02-01", "2023-02-02", "day")
    ]


def test_the_week_before_with_nothing_to_anchor_it_gives_no_range(parser: TimeParser) -> None:
    assert parser.ranges("what did we do the week before the trip?", NOW) == ()


def test_a_query_without_a_date_gives_no_range(parser: TimeParser) -> None:
    assert parser.ranges("what does Sam drink before work?", NOW) == ()


def test_nonsense_gives_no_range(parser: TimeParser) -> None:
    assert parser.ranges("qwzx vlorp ++ ]]", NOW) == ()
    assert parser.ranges("", NOW) == ()


def test_a_bare_number_is_not_a_date(parser: TimeParser) -> None:
    # dateparser reads "18th" as the 18th of this month; in a question it is an age or a count.
    assert parser.ranges("How long ago was Caroline's 18th birthday?", NOW) == ()


def test_relative_dates_count_from_the_clock_passed_in(parser: TimeParser) -> None:
    earlier = datetime(2021, 3, 10, 9, 0)
    assert [(r.start, r.end) for r in parser.ranges("what did I eat yesterday", earlier)] == [
        (datetime(2021, 3, 9), datetime(2021, 3, 10))
    ]


def test_the_gate_lets_only_date_ish_queries_through() -> None:
    assert not may_hold_date("what does Sam drink before work?")
    assert not may_hold_date("who is Ana's sister")
    for query in ("last May", "in 2023", "yesterday", "two weeks ago", "on Monday", "last year"):
        assert may_hold_date(query), query


def test_ranges_are_cached_per_query_and_minute(parser: TimeParser) -> None:
    first = parser.ranges("what happened last month", NOW)
    assert parser.ranges("what happened last month", NOW) is first
    assert first == (period_range(datetime(2023, 9, 20), "month", "last month"),)


def test_range_bounds_use_the_stored_timestamp_format(parser: TimeParser) -> None:
    (may,) = parser.ranges("in May 2023", NOW)
    assert may.bounds() == ("2023-05-01T00:00:00.000Z", "2023-06-01T00:00:00.000Z")
    assert may.contains("2023-05-31T23:59:59.999Z") and not may.contains("2023-06-01T00:00:00.000Z")
    assert stored_format(datetime(2023, 5, 8, 15, 56, tzinfo=UTC)) == "2023-05-08T15:56:00.000Z"


def test_december_month_range_ends_in_the_next_year() -> None:
    december = period_range(datetime(2022, 12, 24, 18, 30), "month")
    assert (december.start, december.end) == (datetime(2022, 12, 1), datetime(2023, 1, 1))


def test_short_words_are_not_dates_unless_written_as_names(parser: TimeParser) -> None:
    # "we" is Wednesday and "may" the month to dateparser.
    for query in ("what did we eat on the trip each weekend", "what games may Nate play next year"):
        assert may_hold_date(query)  # it reaches dateparser
        assert all(r.text.lower() not in ("we", "may") for r in parser.ranges(query, NOW)), query
    assert spans(parser, "Which spot did Joanna visit in May?") == [("2023-05-01", "2023-06-01", "month")]

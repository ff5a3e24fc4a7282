"""BC-47: recurring alarms and reminders across daylight-saving changes, as exact UTC instants
(hub.act.schedule: rrule on naive wall times, the zone attached afterwards)."""

from datetime import UTC, date, datetime, time

import pytest

from hub.act.schedule import (
    Rule,
    ScheduleError,
    after_seconds,
    next_fire,
    require_aware,
    spoken,
    to_utc,
    zone,
)

Z = UTC


def utc(*args) -> datetime:
    return datetime(*args, tzinfo=Z)


def fires(rule: Rule, after: datetime, n: int) -> list[datetime]:
    out = []
    for _ in range(n):
        after = next_fire(rule, after)
        out.append(after)
    return out


LONDON_7AM = Rule(time(7, 0), "daily", "Europe/London")
LONDON_130 = Rule(time(1, 30), "daily", "Europe/London")
RECURRING = {
    "daily 7 AM, spring forward": (LONDON_7AM, (3, 28, 7, 0), [(3, 29, 6, 0), (3, 30, 6, 0)]),
    "daily 7 AM, fall back": (LONDON_7AM, (10, 24, 6, 0), [(10, 25, 7, 0), (10, 26, 7, 0)]),
    # 29 March: 01:30 does not exist -> once, at 02:00 BST (01:00Z), the first valid minute
    "daily 1:30, the gap": (LONDON_130, (3, 28, 2, 0), [(3, 29, 1, 0), (3, 30, 0, 30)]),
    # 25 October: 01:30 happens twice -> once, at the first (BST, 00:30Z); next day GMT
    "daily 1:30, the repeat": (LONDON_130, (10, 24, 2, 0), [(10, 25, 0, 30), (10, 26, 1, 30)]),
    "weekdays at 7 from a Friday": (
        Rule(time(7, 0), "weekdays", "Europe/London"),
        (3, 27, 8, 0),
        [(3, 30, 6, 0), (3, 31, 6, 0)],
    ),
}
"""Case -> (rule, after, the next two fires): (month, day, hour, minute), UTC in 2026."""


@pytest.mark.parametrize("rule, after, expected", RECURRING.values(), ids=RECURRING.keys())
def test_bc47_london_across_both_changes_skips_and_doubles_no_day(rule, after, expected):
    assert fires(rule, utc(2026, *after), 2) == [utc(2026, *fire) for fire in expected]


def test_bc47_new_york_230_tomorrow_on_gap_day():
    rule = Rule(time(2, 30), "", "America/New_York", first=date(2026, 3, 8))
    assert next_fire(rule, utc(2026, 3, 7, 20, 0)) == utc(2026, 3, 8, 7, 0)  # 03:00 EDT
    assert next_fire(rule, utc(2026, 3, 8, 7, 0)) is None  # a one-off fires once


def test_bc47_lord_howe_half_hour_changes():
    gap = Rule(time(2, 15), "", "Australia/Lord_Howe", first=date(2026, 10, 4))
    fire = next_fire(gap, utc(2026, 10, 3, 0, 0))
    assert fire == utc(2026, 10, 3, 15, 30)  # 02:30 local daylight time (+11)
    assert fire.astimezone(zone("Australia/Lord_Howe")).strftime("%H:%M %z") == "02:30 +1100"
    repeat = Rule(time(1, 45), "daily", "Australia/Lord_Howe")
    assert fires(repeat, utc(2026, 4, 4, 0, 0), 2) == [
        utc(2026, 4, 4, 14, 45),
        utc(2026, 4, 5, 15, 15),
    ]


def test_bc47_in_8_hours_is_8_real_hours():
    start = utc(2026, 3, 28, 22, 0)  # 22:00 GMT
    fire = after_seconds(start, 8 * 3600)
    assert fire == utc(2026, 3, 29, 6, 0)
    assert fire.astimezone(zone("Europe/London")).hour == 7  # 07:00 BST


def test_bc47_naive_datetimes_rejected():
    with pytest.raises(ScheduleError, match="naive"):
        require_aware(datetime(2026, 3, 29, 7, 0))
    with pytest.raises(ScheduleError, match="naive"):
        next_fire(Rule(time(7, 0), "daily", "Europe/London"), datetime(2026, 3, 29, 7, 0))


def test_bc47_spoken_local_time_and_day():
    assert spoken(utc(2026, 3, 29, 6, 0), zone("Europe/London")) == "7 AM on Sunday"
    assert spoken(utc(2026, 3, 30, 17, 30), zone("Europe/London")) == "6:30 PM on Monday"
    assert to_utc(datetime(2026, 3, 8, 2, 30), zone("America/New_York")) == utc(2026, 3, 8, 7, 0)


def test_unknown_zone_is_a_clear_error():
    with pytest.raises(ScheduleError, match="unknown time zone"):
        zone("Mars/Olympus")
